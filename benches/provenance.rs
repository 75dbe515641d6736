//! `--provenance` against a plain run: LUBM_L and LUBM_LE over LUBM(10), the facts written to a file, wall time
//! (median and best of `REASONCTL_PROVENANCE_RUNS`, default 3: this VM's timings are noisy) and peak resident
//! size (median), and the ratios the issue sets as targets (≤ 1.6× the time, ≤ 2× the memory).
//!
//! Each pair runs twice: writing to a file on disk (beside the data), and, where `/dev/shm` is a folder (a
//! tmpfs on Linux), writing there. `--provenance` writes about 3.6× the bytes of a plain run, and on a slow disk
//! the kernel's copying of them into the page cache is most of the difference; the tmpfs rows show what
//! reasonctl itself costs. `cargo bench --bench provenance`.

mod lubm_gen;
mod measure;

use std::path::Path;

use measure::measure;

/// Median wall, best wall, median peak.
fn median(mut v: Vec<(f64, f64)>) -> (f64, f64, f64) {
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (wall, best) = (v[v.len() / 2].0, v[0].0);
    let mut peaks: Vec<f64> = v.iter().map(|x| x.1).collect();
    peaks.sort_by(f64::total_cmp);
    (wall, best, peaks[peaks.len() / 2])
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("provenance bench: skipped outside `cargo bench`");
        return;
    }
    let runs: usize = std::env::var("REASONCTL_PROVENANCE_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let data = lubm_gen::cached(10);
    let data = data.to_str().unwrap();
    let mut targets = vec![("disk", lubm_gen::data_dir().join("provenance-out.nq"))];
    let shm = Path::new("/dev/shm").join(format!("reasonctl-provenance-{}.nq", std::process::id()));
    // The tmpfs copy holds memory while it exists: removed however the bench ends.
    let _removed = Removed(shm.clone());
    if Path::new("/dev/shm").is_dir() {
        targets.push(("tmpfs", shm));
    }
    println!(
        "{:<8} {:<6} {:<22} {:>8} {:>8} {:>9} {:>10} {:>10} {:>10}",
        "rules", "to", "run", "wall s", "best s", "peak MiB", "time ×", "best ×", "memory ×"
    );
    for set in ["LUBM_L", "LUBM_LE"] {
        let rules =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("benches/lubm-rules/{set}.rq"));
        let rules = rules.to_str().unwrap();
        for (to, out) in &targets {
            let out = out.to_str().unwrap();
            let time = |extra: &[&str]| {
                median(
                    (0..runs.max(1))
                        .map(|_| {
                            let mut args =
                                vec!["materialize", "-q", data, "--rules", rules, "-o", out];
                            args.extend_from_slice(extra);
                            let m = measure(&args);
                            assert_eq!(m.code, 0, "{}", m.stderr);
                            (m.wall, m.peak_mib)
                        })
                        .collect(),
                )
            };
            let (plain, plain_best, plain_peak) = time(&[]);
            println!(
                "{:<8} {:<6} {:<22} {:>8.3} {:>8.3} {:>9.0} {:>10} {:>10} {:>10}",
                set, to, "plain", plain, plain_best, plain_peak, "-", "-", "-"
            );
            for (name, extra) in [
                ("--provenance", &["--provenance"][..]),
                ("--provenance premises", &["--provenance=premises"][..]),
            ] {
                if name.ends_with("premises") && set == "LUBM_LE" {
                    // One replay per derived fact, by its credited rule: over a minute on LUBM_LE's 1.8 M facts
                    // (74 s, 2.1 GB peak, on this 2-core machine: a connectedCourses fact has a derivation per
                    // member of its class); LUBM_L shows the cost.
                    continue;
                }
                let (wall, best, peak) = time(extra);
                println!(
                    "{:<8} {:<6} {:<22} {:>8.3} {:>8.3} {:>9.0} {:>9.2}× {:>9.2}× {:>9.2}×",
                    set,
                    to,
                    name,
                    wall,
                    best,
                    peak,
                    wall / plain,
                    best / plain_best,
                    peak / plain_peak
                );
            }
        }
    }
}

/// A file removed when this is dropped (a panic included).
struct Removed(std::path::PathBuf);

impl Drop for Removed {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
