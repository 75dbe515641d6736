//! Compressed data over LUBM(N) (default 10; `REASONCTL_COMPRESSED_UNIVERSITIES=100` for LUBM(100)): loading
//! (no rules) and materializing with LUBM_L the plain N-Triples, `.gz` and `.zst` copies (written once by the
//! crate's own encoders), each run's wall time, load throughput in MB/s of decompressed N-Triples, and peak
//! resident size; the target is a compressed dump within 1.3× of the plain one. Median of
//! `REASONCTL_COMPRESSED_RUNS` runs (default 5). `cargo bench --bench compressed`.

mod lubm_gen;
mod measure;

use std::io::Write;
use std::path::{Path, PathBuf};

use reasonctl::codec::Codec;

/// A compressed copy of `plain` beside it (made once).
fn packed(plain: &Path, codec: Codec) -> PathBuf {
    let path = PathBuf::from(format!("{}.{}", plain.display(), codec.extension()));
    if !path.exists() {
        let bytes = std::fs::read(plain).unwrap();
        let file = std::fs::File::create(&path).unwrap();
        let mut e = codec.encoder(std::io::BufWriter::new(file)).unwrap();
        e.write_all(&bytes).unwrap();
        e.finish().unwrap().flush().unwrap();
    }
    path
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("compressed bench: skipped outside `cargo bench`");
        return;
    }
    let env = |name: &str, default: u64| -> u64 {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let runs = env("REASONCTL_COMPRESSED_RUNS", 5).max(1) as usize;
    let universities = env("REASONCTL_COMPRESSED_UNIVERSITIES", 10);
    let plain = lubm_gen::cached(universities);
    let mb = std::fs::metadata(&plain).unwrap().len() as f64 / 1e6;
    let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/lubm-rules/LUBM_L.rq");
    let out = lubm_gen::data_dir().join("compressed-out.nq");
    let files = [
        ("plain", plain.clone()),
        ("gz", packed(&plain, Codec::Gzip)),
        ("zst", packed(&plain, Codec::Zstd)),
    ];
    println!(
        "LUBM({universities}), {mb:.0} MB of N-Triples; median of {runs} runs\n{:<10} {:<6} {:>9} {:>8} {:>8} {:>9}",
        "run", "input", "file MB", "wall s", "MB/s", "peak MiB"
    );
    for (what, with_rules) in [("load", false), ("LUBM_L", true)] {
        let mut plain_wall = 0.0;
        for (name, file) in &files {
            let mut args = vec![
                "materialize",
                "-q",
                file.to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
            ];
            if with_rules {
                args.extend(["--rules", rules.to_str().unwrap()]);
            }
            let mut walls = Vec::new();
            let mut peak: f64 = 0.0;
            for _ in 0..runs {
                let m = measure::measure(&args);
                assert_eq!(m.code, 0, "{args:?}: {}", m.stderr);
                walls.push(m.wall);
                peak = peak.max(m.peak_mib);
            }
            walls.sort_by(f64::total_cmp);
            let wall = walls[walls.len() / 2];
            if *name == "plain" {
                plain_wall = wall;
            }
            println!(
                "{:<10} {:<6} {:>9.1} {:>8.3} {:>8.0} {:>9.0}   {:.2}x plain",
                what,
                name,
                std::fs::metadata(file).unwrap().len() as f64 / 1e6,
                wall,
                mb / wall,
                peak,
                wall / plain_wall
            );
        }
    }
}
