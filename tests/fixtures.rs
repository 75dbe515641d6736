//! One test per fixture folder: `fixtures/<area>/<case>/` runs `reasonctl` with the arguments in `args` (one per
//! line, run inside the folder) and compares standard output with `expected.out`, the exit code with
//! `expected.exit` (default 0), and requires every line of `expected.err` (if present) to appear in stderr.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use libtest_mimic::{Arguments, Failed, Trial};

/// The areas whose cases run the binary; `w3c` has its own harness.
const AREAS: &[&str] = &["materialize", "query"];

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
    let args: Vec<String> = fs::read_to_string(dir.join("args"))?
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect();
    let output = Command::new(env!("CARGO_BIN_EXE_reasonctl"))
        .args(&args)
        .current_dir(dir)
        .output()?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if stderr.contains("panicked") {
        return Err(format!("reasonctl panicked:\n{stderr}").into());
    }
    let want_exit: i32 = match fs::read_to_string(dir.join("expected.exit")) {
        Ok(text) => text.trim().parse()?,
        Err(_) => 0,
    };
    let exit = output.status.code().unwrap_or(-1);
    if exit != want_exit {
        return Err(format!("exit code {exit}, expected {want_exit}\nstderr:\n{stderr}").into());
    }
    if let Ok(want_err) = fs::read_to_string(dir.join("expected.err")) {
        for line in want_err.lines().filter(|l| !l.trim().is_empty()) {
            if !stderr.contains(line) {
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

fn main() {
    let args = Arguments::from_args();
    let trials = cases()
        .into_iter()
        .map(|(name, dir)| Trial::test(name, move || run(&dir)))
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
