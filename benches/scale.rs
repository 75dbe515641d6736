//! Scale: LUBM(N) (`REASONCTL_SCALE_UNIVERSITIES`, default 100; 1000 is 133M triples), generated once straight
//! into a zstd-compressed N-Triples file (LUBM(1000) is about 22 GB uncompressed), materialized with LUBM_L and
//! LUBM_LE (`REASONCTL_SCALE_RULES` picks one): wall time, reasoning time, the rest's throughput (MB/s of
//! decompressed N-Triples over the time not spent reasoning: loading and writing), peak resident size, derived
//! facts and peak bytes per fact (asserted and derived). One run each (these are minutes).
//! `cargo bench --bench scale`.

#[allow(dead_code)] // `cached` is for the plain-file benches
mod lubm_gen;
mod measure;

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use reasonctl::codec::Codec;

/// A byte counter in front of a writer.
struct Counting<W> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// LUBM(`universities`) as `.nt.zst`, with its triple count and uncompressed size (made once).
fn packed(universities: u64) -> (PathBuf, u64, u64) {
    let path = lubm_gen::data_dir().join(format!("lubm-{universities}.gen.nt.zst"));
    let sizes = path.with_extension("sizes");
    if !path.exists() || !sizes.exists() {
        let tmp = path.with_extension("partial");
        let file = std::fs::File::create(&tmp).unwrap();
        let encoder = Codec::Zstd.encoder(BufWriter::new(file)).unwrap();
        let mut counting = Counting {
            inner: BufWriter::with_capacity(1 << 20, encoder),
            bytes: 0,
        };
        let triples = lubm_gen::generate(universities, 42, &mut counting).unwrap();
        let bytes = counting.bytes;
        let encoder = counting
            .inner
            .into_inner()
            .map_err(|e| e.into_error())
            .unwrap();
        encoder.finish().unwrap().flush().unwrap();
        std::fs::rename(&tmp, &path).unwrap();
        std::fs::write(&sizes, format!("{triples} {bytes}")).unwrap();
    }
    let text = std::fs::read_to_string(&sizes).unwrap();
    let mut it = text.split(' ').map(|n| n.trim().parse::<u64>().unwrap());
    (path, it.next().unwrap(), it.next().unwrap())
}

fn main() {
    if !measure::benching("scale") {
        return;
    }
    let universities: u64 = measure::env_number("REASONCTL_SCALE_UNIVERSITIES", 100);
    let only = std::env::var("REASONCTL_SCALE_RULES").ok();
    let (data, triples, bytes) = packed(universities);
    println!(
        "LUBM({universities}): {triples} triples, {:.0} MB of N-Triples, {:.0} MB as zstd",
        bytes as f64 / 1e6,
        std::fs::metadata(&data).unwrap().len() as f64 / 1e6
    );
    println!(
        "{:<8} {:>8} {:>9} {:>8} {:>9} {:>12} {:>11}",
        "rules", "wall s", "reason s", "MB/s", "peak MiB", "derived", "B/fact"
    );
    let work = lubm_gen::data_dir();
    let stats = work.join("scale-stats.json");
    let out = work.join("scale-out.nq.zst");
    for set in ["LUBM_L", "LUBM_LE"] {
        if only.as_deref().is_some_and(|o| o != set) {
            continue;
        }
        let rules =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("benches/lubm-rules/{set}.rq"));
        let args = [
            "materialize",
            "-q",
            data.to_str().unwrap(),
            "--rules",
            rules.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--stats",
            stats.to_str().unwrap(),
        ];
        let m = measure::measure(&args);
        assert_eq!(m.code, 0, "{args:?}: {}", m.stderr);
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
        let derived = json["derived"].as_u64().unwrap_or(0);
        let reason = json["elapsed_ms"].as_f64().unwrap_or(0.0) / 1e3;
        println!(
            "{:<8} {:>8.1} {:>9.1} {:>8.0} {:>9.0} {:>12} {:>11.1}",
            set,
            m.wall,
            reason,
            // The rest of the run (load and write) over the N-Triples it read.
            bytes as f64 / 1e6 / (m.wall - reason).max(1e-3),
            m.peak_mib,
            derived,
            m.peak_mib * 1048576.0 / (triples + derived) as f64
        );
    }
}
