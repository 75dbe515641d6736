//! This module defines how the benches run the binary: wall time, exit code and peak resident size of one run.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The peak resident size (KiB) of a running process so far.
fn high_water(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// One run of the binary.
pub struct Measured {
    /// The exit code (-1: killed by a signal).
    pub code: i32,
    /// The peak resident size, sampled every 2 ms.
    #[allow(dead_code)] // not every bench reads it
    pub peak_mib: f64,
    /// Wall seconds.
    pub wall: f64,
    /// Its standard error.
    pub stderr: String,
}

impl Measured {
    /// The first diagnostic code it printed, if any.
    #[allow(dead_code)] // not every bench reads it
    pub fn said(&self) -> &str {
        self.stderr
            .lines()
            .find(|l| l.starts_with("reasonctl::"))
            .unwrap_or("")
    }
}

/// Runs `reasonctl ARGS` (standard output discarded), sampling its resident size.
pub fn measure(args: &[&str]) -> Measured {
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_reasonctl"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut peak = 0;
    let status = loop {
        if let Some(kb) = high_water(child.id()) {
            peak = peak.max(kb);
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let wall = started.elapsed().as_secs_f64();
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut stderr);
    }
    Measured {
        code: status.code().unwrap_or(-1),
        peak_mib: peak as f64 / 1024.0,
        wall,
        stderr,
    }
}

/// Whether `cargo bench` runs this bench (it passes `--bench`); outside it (`cargo test` builds benches too) says
/// that `name` is skipped.
#[allow(dead_code)] // not every bench uses it
pub fn benching(name: &str) -> bool {
    let on = std::env::args().any(|a| a == "--bench");
    if !on {
        println!("{name} bench: skipped outside `cargo bench`");
    }
    on
}

/// The number the environment variable `var` holds, or `default`.
#[allow(dead_code)] // not every bench uses it
pub fn env_number<T: std::str::FromStr>(var: &str, default: T) -> T {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
