//! The dataflow engine against the in-memory one: every `fixtures/materialize/<case>/` runs again with
//! `--engine dataflow`, on 1 and on 2 workers (one test each). A case the engine accepts must give the in-memory
//! engine's output byte for byte and its exit code (`expected.out`, `expected.exit`); a case it refuses must be
//! refused with `reasonctl::rules::engine_unsupported`, naming the rule and `--engine memory`; a case that asks
//! for an option the engine does not take (`--state`, `--provenance`, `--owl2rl`, `--max-iterations`) must be
//! refused by the command line; a capped case (exit 3) must stop with exit 3 too.

use std::fs;
use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Failed, Trial};

#[path = "cases/case.rs"]
mod case;

/// Options `--engine dataflow` conflicts with.
const NOT_TAKEN: &[&str] = &["--state", "--provenance", "--owl2rl", "--max-iterations"];

fn cases() -> Vec<(String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/materialize");
    let mut cases: Vec<(String, PathBuf)> = fs::read_dir(root)
        .expect("fixtures/materialize")
        .flatten()
        .filter(|e| e.path().join("args").is_file())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .collect();
    cases.sort();
    cases
}

/// What a run of one case with the dataflow engine showed.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// Same output and exit code as the in-memory engine.
    Same,
    /// Refused up front, with the documented diagnostic.
    Refused,
    /// An option the engine does not take.
    NotTaken,
    /// Capped, as the in-memory run was.
    Capped,
}

fn run(dir: &Path, workers: u32) -> Result<Outcome, Failed> {
    let mut args = case::args(dir)?;
    if args.first().map(String::as_str) != Some("materialize") {
        return Err("not a materialize case".into());
    }
    if args.iter().any(|a| a == "--engine") {
        // Already a dataflow case (tests/fixtures.rs runs it).
        return Ok(Outcome::Same);
    }
    args.extend([
        "--engine".into(),
        "dataflow".into(),
        "--workers".into(),
        workers.to_string(),
    ]);
    let case::Ran {
        stdout,
        stderr,
        exit,
    } = case::run(dir, &args)?;
    let want_exit = case::want_exit(dir)?;
    if stderr.contains("cannot be used with") {
        return if args
            .iter()
            .any(|a| NOT_TAKEN.iter().any(|n| a.starts_with(n)))
            && exit == 2
        {
            Ok(Outcome::NotTaken)
        } else {
            Err(format!("refused by the command line, exit {exit}:\n{stderr}").into())
        };
    }
    if stderr.contains("reasonctl::rules::engine_unsupported") {
        let flat = stderr.split_whitespace().collect::<Vec<_>>().join(" ");
        return if exit == 1 && flat.contains("--engine memory") && flat.contains("rule ") {
            Ok(Outcome::Refused)
        } else {
            Err(format!("refused without the documented diagnostic, exit {exit}:\n{stderr}").into())
        };
    }
    if want_exit == 3 {
        return if exit == 3 {
            Ok(Outcome::Capped)
        } else {
            Err(
                format!("the in-memory run is capped (exit 3), this one exits {exit}:\n{stderr}")
                    .into(),
            )
        };
    }
    if exit != want_exit {
        return Err(format!(
            "exit code {exit}, the in-memory engine's is {want_exit}\nstderr:\n{stderr}"
        )
        .into());
    }
    let want_out = fs::read_to_string(dir.join("expected.out")).unwrap_or_default();
    if stdout != want_out {
        return Err(format!(
            "output differs from the in-memory engine's:\n--- expected\n{want_out}\n--- dataflow\n{stdout}\nstderr:\n{stderr}"
        )
        .into());
    }
    Ok(Outcome::Same)
}

fn main() {
    let args = Arguments::from_args();
    let mut trials: Vec<Trial> = Vec::new();
    for (name, dir) in cases() {
        for workers in [1, 2] {
            let dir = dir.clone();
            trials.push(Trial::test(
                format!("{name}/workers-{workers}"),
                move || run(&dir, workers).map(|_| ()),
            ));
        }
    }
    // The comparison must not pass by refusing everything: most cases the engine runs give identical output.
    trials.push(Trial::test("most_cases_run_with_identical_output", || {
        let outcomes: Vec<Outcome> = cases()
            .iter()
            .map(|(_, dir)| run(dir, 2))
            .collect::<Result<_, _>>()?;
        let same = outcomes.iter().filter(|o| **o == Outcome::Same).count();
        if same * 2 < outcomes.len() {
            return Err(format!(
                "only {same} of {} cases ran with identical output",
                outcomes.len()
            )
            .into());
        }
        Ok(())
    }));
    libtest_mimic::run(&args, trials).exit();
}
