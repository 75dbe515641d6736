//! Saved states over LUBM(10) with the LUBM_L and LUBM_LE rule sets: what saving adds to `materialize`, the
//! state's size on disk, and `explain` of one derived fact from the state against `explain` from the data (target:
//! ≤ 150 ms end to end). Then maintenance: deleting and adding 0.1 %, 1 % and 10 % of the asserted triples (random
//! lines), one whole department, and 1,000 triples, each applied as a change set (`--remove` / `--add`) and as a
//! full new dump, against the from-scratch run (targets: a 1 % change set in ≤ 15 % of it, a 1 % different dump in
//! ≤ 50 %, 1,000 triples added in ≤ 0.5 s), with each run's peak resident size; the from-scratch run that also
//! writes a state is shown beside it (a maintained run saves its state too). Runs write their full output to a
//! file, but for the `--diff -` rows (change sets and dumps), whose output is the RDF Patch. The maintenance rows also run `--owl2rl` over
//! LUBM_L's axioms as an ontology (`OWL+TBox`, no rules: the closure alone is maintained). Median of `REASONCTL_STATE_RUNS` runs
//! (default 3). `cargo bench --bench state`.

mod lubm_gen;
mod measure;

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
        .unwrap_or(3);
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
    maintenance(runs, data, &work);
}

/// A deterministic pseudo-random sequence (xorshift64*).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as usize % n
    }
}

/// The change sets: (name, which lines of the data they hold).
fn change_sets(lines: &[&str]) -> Vec<(String, Vec<bool>)> {
    let n = lines.len();
    let random = |count: usize, seed: u64| {
        let mut rng = Rng(seed);
        let mut picked = vec![false; n];
        let mut left = count;
        while left > 0 {
            let i = rng.below(n);
            if !picked[i] {
                picked[i] = true;
                left -= 1;
            }
        }
        picked
    };
    vec![
        ("0.1% random".to_owned(), random(n / 1000, 1)),
        ("1% random".to_owned(), random(n / 100, 2)),
        ("10% random".to_owned(), random(n / 10, 3)),
        (
            "department".to_owned(),
            lines
                .iter()
                .map(|l| l.contains("Department0.University0."))
                .collect(),
        ),
        ("1000 triples".to_owned(), random(1000, 4)),
    ]
}

/// `materialize -q DATA PROGRAM… -o OUT MORE…`.
fn dump<'a>(data: &'a str, program: &[&'a str], out: &'a str, more: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["materialize", "-q", data];
    args.extend(program);
    args.extend(["-o", out]);
    args.extend(more);
    args
}

/// The arguments of a run over `data` that writes only the RDF Patch of the change (`--diff -`), as a nightly
/// pipeline that applies patches does.
fn diffed<'a>(data: &'a str, program: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["materialize", "-q", data];
    args.extend(program);
    args.extend(["--diff", "-"]);
    args
}

/// The median wall time of `runs` runs of the arguments `args` gives (each must succeed), with that run's peak.
fn median_run<'a>(runs: usize, args: &mut dyn FnMut() -> Vec<&'a str>) -> (f64, f64) {
    let mut all: Vec<(f64, f64)> = (0..runs.max(1))
        .map(|_| {
            let m = measure::measure(&args());
            assert_eq!(m.code, 0, "{}", m.stderr);
            (m.wall, m.peak_mib)
        })
        .collect();
    all.sort_by(|a, b| a.0.total_cmp(&b.0));
    all[all.len() / 2]
}

/// A copy of the state `from` at `to`, flushed to disk (untimed).
fn reset(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    let ok = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap()
        .success();
    assert!(ok, "cp -a {} {}", from.display(), to.display());
    // The copy's dirty pages are written back now, not during the timed run that follows.
    let _ = Command::new("sync").status();
}

/// The median wall time, the largest peak, and the mode `--stats` reported, of `runs` runs, each from a fresh
/// copy of `state`.
fn maintained(runs: usize, state: &Path, copy: &Path, args: &[&str]) -> (f64, f64, String) {
    let stats = copy.with_extension("json");
    let mut walls = Vec::new();
    let mut peak: f64 = 0.0;
    let mut mode = String::new();
    for _ in 0..runs.max(1) {
        reset(state, copy);
        let mut all: Vec<&str> = args.to_vec();
        all.extend([
            "--state",
            copy.to_str().unwrap(),
            "--stats",
            stats.to_str().unwrap(),
        ]);
        let m = measure::measure(&all);
        assert_eq!(m.code, 0, "{all:?}: {}", m.stderr);
        walls.push(m.wall);
        peak = peak.max(m.peak_mib);
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
        mode = json["mode"].as_str().unwrap_or("?").to_owned();
    }
    walls.sort_by(f64::total_cmp);
    (walls[walls.len() / 2], peak, mode)
}

fn maintenance(runs: usize, data: &str, work: &Path) {
    let text = std::fs::read_to_string(data).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let sets = change_sets(&lines);
    let mut files = Vec::new();
    for (name, picked) in &sets {
        let slug = name.replace(['%', ' ', '.'], "_");
        let change = work.join(format!("change-{slug}.nt"));
        let rest = work.join(format!("rest-{slug}.nt"));
        let mut c = String::new();
        let mut r = String::new();
        for (line, &p) in lines.iter().zip(picked) {
            let to = if p { &mut c } else { &mut r };
            to.push_str(line);
            to.push('\n');
        }
        std::fs::write(&change, c).unwrap();
        std::fs::write(&rest, r).unwrap();
        files.push((name.clone(), slug, change, rest));
    }
    drop(lines);
    drop(text);
    println!();
    println!(
        "{:<8} {:<13} {:<18} {:>8} {:>10} {:>9} {:>12}",
        "rules", "change", "applied as", "wall s", "of scratch", "peak MiB", "mode"
    );
    let lubm_rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/lubm-rules");
    let tbox = lubm_rules.join("LUBM_L.tbox.ttl");
    for set in ["LUBM_L", "LUBM_LE", "OWL+TBox"] {
        let rules = lubm_rules.join(format!("{set}.rq"));
        // The program: a rules file, or (OWL+TBox) LUBM_L's axioms as an ontology closed by --owl2rl.
        let program: Vec<&str> = if set == "OWL+TBox" {
            vec![tbox.to_str().unwrap(), "--owl2rl"]
        } else {
            vec!["--rules", rules.to_str().unwrap()]
        };
        let out = work.join(format!("{set}-m.nq"));
        let out = out.to_str().unwrap();
        let (scratch, scratch_peak) = median_run(runs, &mut || dump(data, &program, out, &[]));
        let full = work.join(format!("{set}-full.state"));
        // The same run writing a state (each time a new one): what a maintained run, which saves its state too,
        // replaces. Shown for reference; the percentages stay of the run without a state.
        let (saving, saving_peak) = median_run(runs, &mut || {
            let _ = std::fs::remove_dir_all(&full);
            dump(data, &program, out, &["--state", full.to_str().unwrap()])
        });
        for (how, wall, peak) in [
            ("from scratch", scratch, scratch_peak),
            ("scratch, saving", saving, saving_peak),
        ] {
            println!(
                "{:<8} {:<13} {:<18} {:>8.3} {:>9.0}% {:>9.0} {:>12}",
                set,
                "-",
                how,
                wall,
                100.0 * wall / scratch,
                peak,
                "-"
            );
        }
        let _ = std::fs::remove_dir_all(&full);
        let made = measure::measure(&dump(
            data,
            &program,
            out,
            &["--state", full.to_str().unwrap()],
        ));
        assert_eq!(made.code, 0, "{}", made.stderr);
        let copy = work.join(format!("{set}-copy.state"));
        for (name, slug, change, rest) in &files {
            let (change, rest) = (change.to_str().unwrap(), rest.to_str().unwrap());
            let without = work.join(format!("{set}-{slug}.state"));
            let _ = std::fs::remove_dir_all(&without);
            let made = measure::measure(&dump(
                rest,
                &program,
                out,
                &["--state", without.to_str().unwrap()],
            ));
            assert_eq!(made.code, 0, "{}", made.stderr);
            let cases: [(&str, &Path, Vec<&str>); 8] = [
                (
                    "--remove",
                    &full,
                    vec!["materialize", "-q", "--remove", change, "-o", out],
                ),
                (
                    "--remove --diff -",
                    &full,
                    vec!["materialize", "-q", "--remove", change, "--diff", "-"],
                ),
                ("dump without it", &full, dump(rest, &program, out, &[])),
                ("dump w/o --diff -", &full, diffed(rest, &program)),
                (
                    "--add",
                    &without,
                    vec!["materialize", "-q", "--add", change, "-o", out],
                ),
                (
                    "--add --diff -",
                    &without,
                    vec!["materialize", "-q", "--add", change, "--diff", "-"],
                ),
                ("dump with it", &without, dump(data, &program, out, &[])),
                ("dump with --diff -", &without, diffed(data, &program)),
            ];
            for (how, state, args) in cases {
                let (wall, peak, mode) = maintained(runs, state, &copy, &args);
                println!(
                    "{:<8} {:<13} {:<18} {:>8.3} {:>9.0}% {:>9.0} {:>12}",
                    set,
                    name,
                    how,
                    wall,
                    100.0 * wall / scratch,
                    peak,
                    mode
                );
            }
            let _ = std::fs::remove_dir_all(&without);
        }
        let _ = std::fs::remove_dir_all(&copy);
        let _ = std::fs::remove_dir_all(&full);
    }
}
