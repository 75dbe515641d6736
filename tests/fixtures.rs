//! One test per fixture folder: `fixtures/<area>/<case>/` runs `reasonctl` with the arguments in `args` (one per
//! line, run inside the folder) and compares standard output with `expected.out`, the exit code with
//! `expected.exit` (default 0), and requires every line of `expected.err` (if present) to appear in stderr. A case
//! with a file `in-copy` changes its folder (a state it maintains): it runs in a copy of it.
//!
//! `fixtures/equivalence/<case>/` holds a data file `data.*`, a SPARQL rule file `rule.rq` and a JSON-LD rule file
//! `rule.json` (or `rule-*.json`, several writings of the same rule): each rule file alone must derive exactly
//! `expected.out` (N-Quads), so the JSON-LD and SPARQL forms are shown to derive the same facts.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use libtest_mimic::{Arguments, Failed, Trial};

#[path = "cases/case.rs"]
mod case;

/// The areas whose cases run the binary; `w3c` has its own harness.
const AREAS: &[&str] = &["deps", "explain", "lint", "materialize", "query"];

fn cases() -> Vec<(String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut cases = Vec::new();
    for area in AREAS {
        let Ok(entries) = fs::read_dir(root.join(area)) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.join("args").is_file() {
                let name = format!("{area}/{}", entry.file_name().to_string_lossy());
                cases.push((name, path));
            }
        }
    }
    cases.sort();
    cases
}

/// Text with miette's margins removed and every run of white space made one space.
fn fold(text: &str) -> String {
    text.replace(['│', '·'], " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Shows two texts line by line, marking where they part.
fn diff(expected: &str, actual: &str) -> String {
    let mut out = String::new();
    let (e, a): (Vec<_>, Vec<_>) = (expected.lines().collect(), actual.lines().collect());
    for i in 0..e.len().max(a.len()) {
        match (e.get(i), a.get(i)) {
            (Some(x), Some(y)) if x == y => out.push_str(&format!("  {x}\n")),
            (x, y) => {
                if let Some(x) = x {
                    out.push_str(&format!("- {x}\n"));
                }
                if let Some(y) = y {
                    out.push_str(&format!("+ {y}\n"));
                }
            }
        }
    }
    out
}

fn run(dir: &Path) -> Result<(), Failed> {
    let args = case::args(dir)?;
    let case::Ran {
        stdout,
        stderr,
        exit,
    } = case::run(dir, &args)?;
    let want_exit = case::want_exit(dir)?;
    if exit != want_exit {
        return Err(format!("exit code {exit}, expected {want_exit}\nstderr:\n{stderr}").into());
    }
    if let Ok(want_err) = fs::read_to_string(dir.join("expected.err")) {
        // Diagnostics wrap at 80 columns: compare with line breaks, margins and repeated spaces folded.
        let flat = fold(&stderr);
        for line in want_err.lines().filter(|l| !l.trim().is_empty()) {
            if !flat.contains(&fold(line)) {
                return Err(format!("stderr lacks {line:?}:\n{stderr}").into());
            }
        }
    }
    let want_out = fs::read_to_string(dir.join("expected.out")).unwrap_or_default();
    if stdout != want_out {
        return Err(format!(
            "stdout differs (- expected, + actual):\n{}\nstderr:\n{stderr}",
            diff(&want_out, &stdout)
        )
        .into());
    }
    Ok(())
}

/// The equivalence cases: (name, folder).
fn equivalence_cases() -> Vec<(String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/equivalence");
    let mut cases: Vec<(String, PathBuf)> = fs::read_dir(root)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.path().is_dir())
                .map(|e| {
                    (
                        format!("equivalence/{}", e.file_name().to_string_lossy()),
                        e.path(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    cases.sort();
    cases
}

fn run_equivalence(dir: &Path) -> Result<(), Failed> {
    let mut data: Vec<String> = Vec::new();
    let mut rules: Vec<String> = Vec::new();
    for entry in fs::read_dir(dir)?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("data.") {
            data.push(name);
        } else if name.starts_with("rule")
            && (name.ends_with(".rq") || name.ends_with(".json") || name.ends_with(".jsonld"))
        {
            rules.push(name);
        }
    }
    data.sort();
    rules.sort();
    if !rules.iter().any(|r| r.ends_with(".rq")) || !rules.iter().any(|r| !r.ends_with(".rq")) {
        return Err(format!(
            "an equivalence case needs a SPARQL rule and a JSON-LD rule, found {rules:?}"
        )
        .into());
    }
    let want = fs::read_to_string(dir.join("expected.out"))?;
    if want.trim().is_empty() {
        return Err(
            "expected.out is empty: an equivalence that derives nothing shows nothing".into(),
        );
    }
    for rule in &rules {
        let output = Command::new(env!("CARGO_BIN_EXE_reasonctl"))
            .arg("materialize")
            .args(&data)
            .args(["--rules", rule, "--format", "nquads"])
            .current_dir(dir)
            .output()?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() || stdout != want {
            return Err(format!(
                "{rule} derives something else (exit {:?}):\n{}\nstderr:\n{}",
                output.status.code(),
                diff(&want, &stdout),
                String::from_utf8_lossy(&output.stderr)
            )
            .into());
        }
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let mut trials: Vec<Trial> = cases()
        .into_iter()
        .map(|(name, dir)| Trial::test(name, move || run(&dir)))
        .collect();
    trials.extend(
        equivalence_cases()
            .into_iter()
            .map(|(name, dir)| Trial::test(name, move || run_equivalence(&dir))),
    );
    libtest_mimic::run(&args, trials).exit();
}
