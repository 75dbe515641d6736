//! Load benchmark: synthetic N-Triples (see `synth.rs`) at 1M and 5M triples; reports triples/s and peak bytes per
//! triple for reasonctl's loader next to oxttl's bare parse of the same file (the physical limit for loading).
//!
//! Run: `cargo bench --bench load` (sizes: `REASONCTL_BENCH_SIZES=1000000,5000000`, the default; more files:
//! `REASONCTL_BENCH_FILES=a.nt,b.nt`). Each measurement
//! runs in a fresh child process, so its peak resident memory (VmHWM) is its own; bytes/triple is
//! (peak − resident memory before the load) / triples. Data files are cached in `benches/data/`.
//! Targets (issue 2): load ≤ 2× bare parse time; ≤ 64 peak bytes per triple at 5M.

mod synth;

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use reasonctl::store::load::{DataSource, LoadOptions, NoProgress, load};

const CHILD: &str = "REASONCTL_BENCH_CHILD";

/// Resident-set figures of this process in bytes: (current, peak).
fn rss() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn child(mode: &str, path: &Path) {
    let (before, _) = rss();
    let start = Instant::now();
    let triples = match mode {
        "parse" => {
            let file = BufReader::with_capacity(1 << 16, File::open(path).unwrap());
            let mut n = 0u64;
            for t in oxttl::NTriplesParser::new().for_reader(file) {
                t.unwrap();
                n += 1;
            }
            n
        }
        "load" => {
            let store = load(
                &[DataSource::File(path.to_owned())],
                &LoadOptions::default(),
                &NoProgress,
            )
            .unwrap();
            let n = store.quads.len() as u64;
            eprintln!(
                "    store after load: {} terms, {:.1} heap bytes/triple (dictionary {:.1}, indexes {:.1})",
                store.dict.len(),
                store.heap_bytes() as f64 / n as f64,
                store.dict.heap_bytes() as f64 / n as f64,
                store.quads.heap_bytes() as f64 / n as f64
            );
            n
        }
        other => panic!("unknown mode {other}"),
    };
    let secs = start.elapsed().as_secs_f64();
    let (_, peak) = rss();
    println!("{secs} {triples} {}", peak.saturating_sub(before));
}

fn measure(mode: &str, path: &Path) -> (f64, u64, u64) {
    let out = Command::new(std::env::current_exe().unwrap())
        .env(CHILD, format!("{mode}:{}", path.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let mut it = text.split_whitespace();
    let secs = it.next().unwrap().parse().unwrap();
    let triples = it.next().unwrap().parse().unwrap();
    let bytes = it.next().unwrap().parse().unwrap();
    (secs, triples, bytes)
}

fn data_file(size: u64) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/data");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("synth-{size}.nt"));
    if !path.exists() {
        let tmp = path.with_extension("nt.partial");
        let n = synth::generate(size, BufWriter::new(File::create(&tmp).unwrap())).unwrap();
        std::fs::rename(&tmp, &path).unwrap();
        eprintln!("generated {} ({n} triples)", path.display());
    }
    path
}

fn main() {
    if let Ok(spec) = std::env::var(CHILD) {
        let (mode, path) = spec.split_once(':').unwrap();
        child(mode, Path::new(path));
        return;
    }
    if !std::env::args().any(|a| a == "--bench") {
        // `cargo test --all-targets` runs benches once as tests: generating gigabytes there helps nobody.
        println!("load bench: skipped outside `cargo bench`");
        return;
    }
    let sizes: Vec<u64> = std::env::var("REASONCTL_BENCH_SIZES")
        .unwrap_or_else(|_| "1000000,5000000".to_owned())
        .split(',')
        .map(|s| s.trim().parse().expect("REASONCTL_BENCH_SIZES: numbers"))
        .collect();
    println!(
        "{:>9} {:>14} {:>10} {:>12} {:>14} {:>8}",
        "triples", "what", "seconds", "triples/s", "peak B/triple", "x parse"
    );
    // Files of one's own too (`REASONCTL_BENCH_FILES=benches/data/lubm-10.nt,…`): the store's bytes per triple
    // on real data, whose terms repeat more than the synthetic ones do.
    let files: Vec<PathBuf> = std::env::var("REASONCTL_BENCH_FILES")
        .map(|v| v.split(',').map(PathBuf::from).collect())
        .unwrap_or_default();
    for path in sizes.into_iter().map(data_file).chain(files) {
        let (parse_s, n, parse_b) = measure("parse", &path);
        let (load_s, loaded, load_b) = measure("load", &path);
        for (what, s, b, k) in [
            ("oxttl parse", parse_s, parse_b, n),
            ("reasonctl load", load_s, load_b, loaded),
        ] {
            println!(
                "{:>9} {:>14} {:>10.3} {:>12.0} {:>14.1} {:>8.2}",
                n,
                what,
                s,
                k as f64 / s,
                b as f64 / k as f64,
                s / parse_s
            );
        }
    }
}
