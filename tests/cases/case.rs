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
