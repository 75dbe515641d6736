//! Closure benchmark: transitive closure as whole `reasonctl materialize` commands (load, fixpoint, N-Quads to a
//! discarded stdout), compiled to a property path vs iterated (`--no-closure`), with pyoxigraph's `p+` side by side
//! when it is installed (`pip install pyoxigraph`). Each case: median wall time, fixpoint time (`--stats`), facts,
//! facts per second of the fixpoint, peak memory (GNU time).
//!
//! - chains of 1,000 and 2,000 nodes (499,500 and 1,999,000 pairs);
//! - a random DAG, 10,000 nodes and 30,000 edges;
//! - a random graph of 100,000 nodes and 200,000 edges, whose giant strongly connected component makes a closure of
//!   billions of pairs, under `--max-facts 10000000`: the run is capped and reported, within memory.
//!
//! The rules: `reach(x,y) :- edge(x,y)` and `reach(x,z) :- edge(x,y), reach(y,z)`.
//!
//! Then `--owl2rl` over chains of 500, 1,000 and 2,000 `owl:sameAs` links (one class; n² pairs), with eq-trans and
//! eq-sym as union-find classes inside OWL's recursive group against iterated (`--no-closure`, 500 links only: it
//! is cubic).
//!
//! Run: `cargo bench --bench closure` (`REASONCTL_CLOSURE_RUNS`, default 3). Data goes to `benches/data/`.

mod materialize_run;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use materialize_run::Run;

const EDGE: &str = "http://example.org/edge";

fn data_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/data");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write_edges(name: &str, edges: impl Iterator<Item = (u64, u64)>) -> PathBuf {
    let path = data_dir().join(name);
    if !path.exists() {
        let tmp = path.with_extension("partial");
        let mut w = BufWriter::new(File::create(&tmp).unwrap());
        for (a, b) in edges {
            writeln!(
                w,
                "<http://example.org/n{a}> <{EDGE}> <http://example.org/n{b}> ."
            )
            .unwrap();
        }
        w.flush().unwrap();
        drop(w);
        std::fs::rename(&tmp, &path).unwrap();
    }
    path
}

/// xorshift64: a fixed pseudo-random sequence.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

fn chain(n: u64) -> PathBuf {
    write_edges(
        &format!("closure-chain-{n}.nt"),
        (0..n - 1).map(|i| (i, i + 1)),
    )
}

fn dag(n: u64, m: u64) -> PathBuf {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let edges: Vec<(u64, u64)> = (0..m)
        .map(|_| {
            let a = rng.below(n - 1);
            let b = a + 1 + rng.below(n - 1 - a);
            (a, b)
        })
        .collect();
    write_edges(&format!("closure-dag-{n}-{m}.nt"), edges.into_iter())
}

fn random_graph(n: u64, m: u64) -> PathBuf {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let edges: Vec<(u64, u64)> = (0..m).map(|_| (rng.below(n), rng.below(n))).collect();
    write_edges(&format!("closure-graph-{n}-{m}.nt"), edges.into_iter())
}

fn same_as_chain(n: u64) -> PathBuf {
    let path = data_dir().join(format!("closure-sameas-{n}.nt"));
    if !path.exists() {
        let same = "http://www.w3.org/2002/07/owl#sameAs";
        let mut text: String = (0..n)
            .map(|i| {
                format!(
                    "<http://example.org/n{i}> <{same}> <http://example.org/n{}> .\n",
                    i + 1
                )
            })
            .collect();
        text.push_str("<http://example.org/n0> <http://example.org/name> \"zero\" .\n");
        text.push_str(
            "<http://example.org/a> <http://example.org/knows> <http://example.org/n3> .\n",
        );
        std::fs::write(&path, text).unwrap();
    }
    path
}

fn rules() -> PathBuf {
    let path = data_dir().join("closure.rq");
    std::fs::write(
        &path,
        format!(
            "#@rule base\nCONSTRUCT {{ ?x <http://example.org/reach> ?y }} WHERE {{ ?x <{EDGE}> ?y }}\n\
             #@rule step\nCONSTRUCT {{ ?x <http://example.org/reach> ?z }} WHERE {{ ?x <{EDGE}> ?y . ?y <http://example.org/reach> ?z }}\n"
        ),
    )
    .unwrap();
    path
}

fn materialize(data: &Path, extra: &[&str]) -> Run {
    let rules = rules();
    let mut args: Vec<&std::ffi::OsStr> = vec![
        data.as_os_str(),
        "--rules".as_ref(),
        rules.as_os_str(),
        "--format".as_ref(),
        "nquads".as_ref(),
    ];
    args.extend(extra.iter().map(std::ffi::OsStr::new));
    materialize_run::materialize(&args, &data_dir().join("closure-stats.json"))
}

fn median(data: &Path, extra: &[&str], runs: usize) -> Run {
    materialize_run::median(runs, || materialize(data, extra))
}

/// How the closure rule ran (`compiled to a path`, `fell back to iteration`), from the run's stats.
fn closure(r: &Run) -> Option<&str> {
    r.stats["rules"]
        .as_array()?
        .iter()
        .find_map(|rule| rule["closure"].as_str())
}

/// pyoxigraph's `?x <edge>+ ?y` (at most `limit` rows): seconds and rows, or why it did not finish (`None`: not
/// installed).
fn oxigraph(data: &Path, limit: Option<u64>) -> Option<Result<(f64, u64), String>> {
    let mut cmd = Command::new("python3");
    cmd.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/closure_oxigraph.py"))
        .arg(data)
        .arg(EDGE);
    if let Some(l) = limit {
        cmd.arg(l.to_string());
    }
    let out = cmd.output().ok()?;
    if String::from_utf8_lossy(&out.stderr).contains("No module named 'pyoxigraph'") {
        return None;
    }
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    if String::from_utf8_lossy(&out.stderr).contains("memory allocation") {
        return Some(Err("out of memory (8 GiB address-space limit)".to_owned()));
    }
    Some(match (json["seconds"].as_f64(), json["rows"].as_u64()) {
        (Some(s), Some(r)) if out.status.success() => Ok((s, r)),
        _ => Err(json["error"]
            .as_str()
            .map_or_else(|| format!("failed ({})", out.status), str::to_owned)),
    })
}

fn row(case: &str, mode: &str, r: &Run) {
    println!(
        "{case:<22} {mode:<10} {:>8.3} {:>10.1} {:>10} {:>12.0} {:>8} {}{}",
        r.wall,
        r.fixpoint_ms,
        r.derived,
        r.derived as f64 / (r.fixpoint_ms / 1e3).max(1e-9),
        r.peak_kb
            .map(|k| format!("{}", k / 1024))
            .unwrap_or_else(|| "-".into()),
        closure(r).unwrap_or("iterated"),
        r.capped
            .as_ref()
            .map(|c| format!(", capped: {c}"))
            .unwrap_or_default(),
    );
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("closure bench: skipped outside `cargo bench`");
        return;
    }
    let runs: usize = std::env::var("REASONCTL_CLOSURE_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let cases: Vec<(&str, PathBuf, Vec<&str>, Option<u64>)> = vec![
        ("chain 1,000", chain(1_000), vec![], None),
        ("chain 2,000", chain(2_000), vec![], None),
        ("DAG 10k / 30k", dag(10_000, 30_000), vec![], None),
        (
            "giant SCC 100k / 200k",
            random_graph(100_000, 200_000),
            vec!["--max-facts", "10000000"],
            Some(10_000_000),
        ),
    ];
    println!(
        "{:<22} {:<10} {:>8} {:>10} {:>10} {:>12} {:>8} closure",
        "case", "mode", "wall s", "fixpt ms", "facts", "facts/s", "peak MiB"
    );
    for (name, data, extra, limit) in &cases {
        let compiled = median(data, extra, runs);
        row(name, "compiled", &compiled);
        let mut no = extra.clone();
        no.push("--no-closure");
        let iterated = median(data, &no, runs.min(2));
        row(name, "iterated", &iterated);
        if iterated.capped.is_none() && compiled.capped.is_none() {
            println!(
                "{:<22} compiled is {:.1}x faster end to end, {:.1}x in the fixpoint",
                "",
                iterated.wall / compiled.wall,
                iterated.fixpoint_ms / compiled.fixpoint_ms.max(1e-6)
            );
        }
        match oxigraph(data, *limit) {
            Some(Ok((s, rows))) => println!(
                "{:<22} pyoxigraph p+: {s:.3} s for {rows} rows ({:.0} rows/s; load excluded)",
                "",
                rows as f64 / s.max(1e-9)
            ),
            Some(Err(why)) => println!("{:<22} pyoxigraph p+: did not finish: {why}", ""),
            None => println!("{:<22} pyoxigraph: not installed", ""),
        }
    }
    let stats = data_dir().join("closure-stats.json");
    for n in [500, 1_000, 2_000] {
        let data = same_as_chain(n);
        let name = format!("sameAs chain {n}");
        let run = |extra: &[&str]| {
            let mut args = vec![data.as_os_str(), "--owl2rl".as_ref(), "--format".as_ref()];
            args.push("nquads".as_ref());
            args.extend(extra.iter().map(std::ffi::OsStr::new));
            materialize_run::materialize(&args, &stats)
        };
        row(
            &name,
            "classes",
            &materialize_run::median(runs, || run(&[])),
        );
        if n == 500 {
            let iterated = materialize_run::median(runs.min(2), || run(&["--no-closure"]));
            row(&name, "iterated", &iterated);
        }
    }
}
