//! Saved states over LUBM(10) with the LUBM_L and LUBM_LE rule sets: what saving adds to `materialize`, the
//! state's size on disk against the store in memory, and `explain` of one derived fact from the state against
//! `explain` from the data (the target: ≤ 150 ms end to end). Median of `REASONCTL_STATE_RUNS` runs
//! (default 5). `cargo bench --bench state`. Incremental maintenance is measured here once it exists.

mod lubm_gen;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

const BIN: &str = env!("CARGO_BIN_EXE_reasonctl");

/// Wall seconds of one run (which must succeed).
fn timed(args: &[&str]) -> f64 {
    let started = Instant::now();
    let out = Command::new(BIN)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    started.elapsed().as_secs_f64()
}

fn median(runs: usize, mut f: impl FnMut() -> f64) -> f64 {
    let mut v: Vec<f64> = (0..runs.max(1)).map(|_| f()).collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|e| {
            e.flatten()
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("state bench: skipped outside `cargo bench`");
        return;
    }
    let runs: usize = std::env::var("REASONCTL_STATE_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let data = lubm_gen::cached(10);
    let data = data.to_str().unwrap();
    let work = lubm_gen::data_dir().join("state-bench");
    let _ = std::fs::create_dir_all(&work);
    println!(
        "{:<10} {:>8} {:>10} {:>11} {:>9} {:>13} {:>13}",
        "rules", "mat. s", "+ save s", "same dump s", "state MB", "explain state", "explain data"
    );
    for set in ["LUBM_L", "LUBM_LE"] {
        let rules =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("benches/lubm-rules/{set}.rq"));
        let rules = rules.to_str().unwrap();
        let out = work.join(format!("{set}.nq"));
        let out = out.to_str().unwrap();
        let state = work.join(format!("{set}.state"));
        let state = state.to_str().unwrap();
        let plain = median(runs, || {
            timed(&["materialize", "-q", data, "--rules", rules, "-o", out])
        });
        let with_state = [
            "materialize",
            "-q",
            data,
            "--rules",
            rules,
            "-o",
            out,
            "--state",
            state,
        ];
        let saved = median(runs, || {
            let _ = std::fs::remove_dir_all(state);
            timed(&with_state)
        });
        // The same dump again: the state holds its result (inputs hashed, output written from the state).
        let unchanged = median(runs, || timed(&with_state));
        let fact = std::fs::read_to_string(out)
            .unwrap()
            .lines()
            .next()
            .expect("a derived fact")
            .trim_end_matches(" .")
            .to_owned();
        let from_state = median(runs, || {
            timed(&["explain", "-q", "--state", state, "--fact", &fact])
        });
        let from_data = median(runs, || {
            timed(&["explain", "-q", data, "--rules", rules, "--fact", &fact])
        });
        println!(
            "{:<10} {:>8.3} {:>10.3} {:>11.3} {:>9.1} {:>11.0}ms {:>11.0}ms",
            set,
            plain,
            saved - plain,
            unchanged,
            dir_bytes(Path::new(state)) as f64 / 1e6,
            from_state * 1e3,
            from_data * 1e3
        );
    }
}
