//! This module defines one timed `reasonctl materialize` run for the benches: wall time, peak memory (GNU time,
//! when present) and the `--stats` object.

// Each bench compiles this module on its own and reads part of it.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// What one run measured.
pub struct Run {
    pub wall: f64,
    pub fixpoint_ms: f64,
    pub derived: u64,
    pub capped: Option<String>,
    pub peak_kb: Option<u64>,
    /// The whole `--stats` object.
    pub stats: serde_json::Value,
}

/// `reasonctl materialize ARGS… --stats STATS -q`, standard output discarded; a failed run (a capped one is not)
/// panics with its stderr.
pub fn materialize<S: AsRef<OsStr>>(args: &[S], stats: &Path) -> Run {
    let mut cmd = if Path::new("/usr/bin/time").exists() {
        let mut c = Command::new("/usr/bin/time");
        c.args(["-f", "PEAK_KB=%M"])
            .arg(env!("CARGO_BIN_EXE_reasonctl"));
        c
    } else {
        Command::new(env!("CARGO_BIN_EXE_reasonctl"))
    };
    cmd.arg("materialize")
        .args(args)
        .arg("--stats")
        .arg(stats)
        .arg("-q")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let output = cmd.output().unwrap();
    let wall = start.elapsed().as_secs_f64();
    let code = output.status.code().unwrap_or(-1);
    assert!(
        code == 0 || code == 3,
        "reasonctl failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let peak_kb = String::from_utf8_lossy(&output.stderr)
        .lines()
        .find_map(|l| {
            l.strip_prefix("PEAK_KB=")
                .and_then(|v| v.trim().parse().ok())
        });
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(stats).unwrap()).unwrap();
    Run {
        wall,
        fixpoint_ms: stats["elapsed_ms"].as_f64().unwrap_or(0.0),
        derived: stats["derived"].as_u64().unwrap_or(0),
        capped: stats["capped_reason"].as_str().map(str::to_owned),
        peak_kb,
        stats,
    }
}

/// The run with the median wall time of `runs` runs.
pub fn median(runs: usize, mut run: impl FnMut() -> Run) -> Run {
    let mut all: Vec<Run> = (0..runs.max(1)).map(|_| run()).collect();
    all.sort_by(|a, b| a.wall.total_cmp(&b.wall));
    all.swap_remove(all.len() / 2)
}
