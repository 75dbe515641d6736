//! This module defines `reasonctl generate`: man pages (clap_mangen) and shell completions (clap_complete),
//! built from the same clap definitions as `--help`.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use clap::CommandFactory;
use clap_complete::Shell;

use super::{Args, GenerateKind};

/// Writes the artefacts into `out_dir` (created if missing) and returns the files written, sorted.
pub fn generate(what: GenerateKind, out_dir: &Path) -> io::Result<Vec<PathBuf>> {
    fs::create_dir_all(out_dir)?;
    let mut written = match what {
        GenerateKind::Man => man_pages(out_dir)?,
        GenerateKind::Completions => completions(out_dir)?,
    };
    written.sort();
    Ok(written)
}

fn man_pages(out_dir: &Path) -> io::Result<Vec<PathBuf>> {
    let root = Args::command();
    let mut written = Vec::new();
    let mut render = |cmd: clap::Command, name: &str| -> io::Result<()> {
        let mut page = Vec::new();
        clap_mangen::Man::new(cmd).title(name).render(&mut page)?;
        let path = out_dir.join(format!("{name}.1"));
        fs::write(&path, page)?;
        written.push(path);
        Ok(())
    };
    for sub in root.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("reasonctl-{}", sub.get_name());
        render(sub.clone().name(name.clone()), &name)?;
    }
    render(root.clone(), "reasonctl")?;
    Ok(written)
}

fn completions(out_dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut cmd = Args::command();
    [Shell::Bash, Shell::Zsh, Shell::Fish, Shell::PowerShell]
        .into_iter()
        .map(|shell| clap_complete::generate_to(shell, &mut cmd, "reasonctl", out_dir))
        .collect()
}
