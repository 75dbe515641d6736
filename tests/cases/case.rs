//! This module defines how a fixture case is read and where it runs: its `args` (one per line, `#` comments),
//! and its folder, or a copy of it when the case changes it (a file `in-copy`: it writes a state).

use std::fs;
use std::path::Path;

/// The arguments of the case in `dir`.
pub fn args(dir: &Path) -> std::io::Result<Vec<String>> {
    Ok(fs::read_to_string(dir.join("args"))?
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect())
}

/// A copy of `dir` when the case asks for one (`in-copy`); `None`: it runs in `dir` itself.
pub fn copy_if_asked(dir: &Path) -> std::io::Result<Option<tempfile::TempDir>> {
    if !dir.join("in-copy").is_file() {
        return Ok(None);
    }
    let tmp = tempfile::tempdir()?;
    copy_tree(dir, tmp.path())?;
    Ok(Some(tmp))
}

/// Copies a folder's files and folders into `to` (which exists).
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    for entry in fs::read_dir(from)?.flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            fs::create_dir(&target)?;
            copy_tree(&entry.path(), &target)?;
        } else {
            fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// What one run of the binary on a case gave: standard output, standard error, exit code (-1 for a signal).
pub struct Ran {
    pub stdout: String,
    pub stderr: String,
    pub exit: i32,
}

/// Runs the binary with `args` in the case's folder (or its copy, when the case asks for one); a panic is an
/// error.
pub fn run(dir: &Path, args: &[String]) -> Result<Ran, Box<dyn std::error::Error + Send + Sync>> {
    let copy = copy_if_asked(dir)?;
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_reasonctl"))
        .args(args)
        .current_dir(copy.as_ref().map_or(dir, |t| t.path()))
        .output()?;
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    if stderr.contains("panicked") {
        return Err(format!("reasonctl panicked:\n{stderr}").into());
    }
    Ok(Ran {
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr,
        exit: output.status.code().unwrap_or(-1),
    })
}

/// The exit code a case expects (`expected.exit`, else 0).
pub fn want_exit(dir: &Path) -> Result<i32, Box<dyn std::error::Error + Send + Sync>> {
    match fs::read_to_string(dir.join("expected.exit")) {
        Ok(text) => Ok(text.trim().parse()?),
        Err(_) => Ok(0),
    }
}
