//! The long fuzzing run: the generators and properties of `tests/fuzz.rs`, round after round with fresh seeds,
//! against the release binary, for `REASONCTL_FUZZ_SECS` seconds (default 600). Each failure is shrunk (for two
//! minutes at most), printed, and saved with its seed under `target/fuzz-failures/`; a crash found this way
//! becomes a fixture. `cargo bench --bench fuzz` (set `REASONCTL_FUZZ_SECS=3600` for an hour).

#[path = "../tests/fuzz/check.rs"]
mod check;
#[path = "../tests/fuzz/generators.rs"]
mod generators;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};

const BIN: &str = env!("CARGO_BIN_EXE_reasonctl");

/// Cases per target per round.
const ROUND: u32 = 20;

struct Tally {
    name: &'static str,
    cases: u64,
    failures: u64,
}

fn failures_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fuzz-failures");
    let _ = std::fs::create_dir_all(&dir);
    dir
}

/// Runs one round of `strategy` through `check`; a failure is saved and counted.
fn round<S: Strategy>(
    tally: &mut Tally,
    seed: u64,
    strategy: &S,
    check: impl Fn(&S::Value) -> Result<(), String>,
) where
    S::Value: std::fmt::Debug,
{
    let config = Config {
        cases: ROUND,
        failure_persistence: None,
        max_shrink_time: 120_000,
        ..Config::default()
    };
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed.to_le_bytes().repeat(4));
    let mut runner = TestRunner::new_with_rng(config, rng);
    let result = runner.run(strategy, |v| check(&v).map_err(TestCaseError::fail));
    tally.cases += u64::from(ROUND);
    if let Err(TestError::Fail(reason, value)) = result {
        tally.failures += 1;
        let path = failures_dir().join(format!("{}-{seed}.txt", tally.name));
        let text = format!(
            "target: {}\nseed: {seed}\nreason: {reason}\ninput: {value:#?}\n",
            tally.name
        );
        let _ = std::fs::write(&path, &text);
        println!(
            "FAILURE ({}) saved to {}:\n{text}",
            tally.name,
            path.display()
        );
    }
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("fuzz: skipped outside `cargo bench`");
        return;
    }
    let secs: u64 = std::env::var("REASONCTL_FUZZ_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(600);
    let started = Instant::now();
    let deadline = started + Duration::from_secs(secs);
    let mut seed = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    println!("fuzz: {secs} s against {BIN}, first seed {seed}");
    let mut tallies = [
        Tally {
            name: "sparql-rules",
            cases: 0,
            failures: 0,
        },
        Tally {
            name: "jsonld-rules",
            cases: 0,
            failures: 0,
        },
        Tally {
            name: "data",
            cases: 0,
            failures: 0,
        },
        Tally {
            name: "facts",
            cases: 0,
            failures: 0,
        },
        Tally {
            name: "programs",
            cases: 0,
            failures: 0,
        },
    ];
    let sparql = generators::sparql_rules_file();
    let jsonld = generators::jsonld_rules_file();
    let data = generators::data_file();
    let facts = generators::fact();
    let programs = (generators::program_data(), generators::positive_program());
    while Instant::now() < deadline {
        for (i, tally) in tallies.iter_mut().enumerate() {
            if Instant::now() >= deadline {
                break;
            }
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            match i {
                0 => round(tally, seed, &sparql, |t| check::rules(BIN, t, "rq")),
                1 => round(tally, seed, &jsonld, |t| check::rules(BIN, t, "json")),
                2 => round(tally, seed, &data, |(ext, bytes)| {
                    check::data(BIN, ext, bytes)
                }),
                3 => round(tally, seed, &facts, |f| check::fact(BIN, f)),
                _ => round(tally, seed, &programs, |(d, r)| check::program(BIN, d, r)),
            }
        }
    }
    println!("fuzz: ran {:.0} s", started.elapsed().as_secs_f64());
    println!("{:<14} {:>8} {:>9}", "target", "cases", "failures");
    for t in &tallies {
        println!("{:<14} {:>8} {:>9}", t.name, t.cases, t.failures);
    }
}
