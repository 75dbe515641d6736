//! `cargo bench --bench explain`: the cost of `reasonctl explain` beyond the materialization it runs first.
//!
//! Each case materializes about 1M derived facts, then explains one of them. The baseline is the same load and
//! materialization answering a trivial query (`reasonctl query … --query 'ASK {}'`); the difference between the
//! two medians is what the explanation itself costs (target lookup, replays, premise checks, output).
//!
//! - chain: the transitive closure of a 1,415-node chain (1,000,405 derived `reach` facts; the recursive rule
//!   compiles to a path); explaining the longest pair at depth 1 and depth 3;
//! - copy: 1,000,000 asserted facts copied by a one-pattern rule, with an aggregate rule over them; explaining
//!   one copied fact and one aggregate.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

const RUNS: usize = 5;

fn data_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/data");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(name: &str, lines: impl Iterator<Item = String>) -> PathBuf {
    let path = data_dir().join(name);
    if !path.exists() {
        let tmp = path.with_extension("partial");
        let mut w = BufWriter::new(std::fs::File::create(&tmp).unwrap());
        for l in lines {
            writeln!(w, "{l}").unwrap();
        }
        w.flush().unwrap();
        drop(w);
        std::fs::rename(&tmp, &path).unwrap();
    }
    path
}

fn chain() -> (PathBuf, PathBuf) {
    let n = 1415;
    let data = write(
        "explain-chain-1415.nt",
        (0..n - 1).map(|i| {
            format!(
                "<http://example.org/n{i}> <http://example.org/edge> <http://example.org/n{}> .",
                i + 1
            )
        }),
    );
    let rules = write(
        "explain-chain.rq",
        [
            "PREFIX ex: <http://example.org/>",
            "#@rule base",
            "CONSTRUCT { ?x ex:reach ?y } WHERE { ?x ex:edge ?y }",
            "#@rule step",
            "CONSTRUCT { ?x ex:reach ?z } WHERE { ?x ex:edge ?y . ?y ex:reach ?z }",
        ]
        .into_iter()
        .map(str::to_owned),
    );
    (data, rules)
}

fn copy() -> (PathBuf, PathBuf) {
    let data = write(
        "explain-copy-1m.nt",
        (0..1_000_000u64).map(|i| {
            format!(
                "<http://example.org/s{}> <http://example.org/p> \"{}\"^^<http://www.w3.org/2001/XMLSchema#integer> .",
                i / 10,
                i % 1000
            )
        }),
    );
    let rules = write(
        "explain-copy.rq",
        [
            "PREFIX ex: <http://example.org/>",
            "#@rule copy",
            "CONSTRUCT { ?s ex:q ?o } WHERE { ?s ex:p ?o }",
            "#@rule sum",
            "CONSTRUCT { ?s ex:sum ?t } WHERE { { SELECT ?s (SUM(?o) AS ?t) WHERE { ?s ex:p ?o } GROUP BY ?s } }",
        ]
        .into_iter()
        .map(str::to_owned),
    );
    (data, rules)
}

fn time(args: &[&str]) -> f64 {
    let mut all: Vec<f64> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            let out = Command::new(env!("CARGO_BIN_EXE_reasonctl"))
                .args(args)
                .arg("-q")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "reasonctl {args:?} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            start.elapsed().as_secs_f64()
        })
        .collect();
    all.sort_by(f64::total_cmp);
    all[all.len() / 2]
}

fn case(name: &str, data: &Path, rules: &Path, facts: &[(&str, &str)]) {
    let (d, r) = (data.to_str().unwrap(), rules.to_str().unwrap());
    let base = time(&["query", d, "--rules", r, "--query", "ASK {}"]);
    println!("{name:<8} materialize + trivial query      {base:>7.3} s (median of {RUNS})");
    for (label, fact) in facts {
        let mut args = vec!["explain", d, "--rules", r, "--fact", fact];
        let depth: Vec<&str> = label.split_whitespace().collect();
        if let Some(pos) = depth.iter().position(|w| *w == "depth") {
            args.extend(["--depth", depth[pos + 1]]);
        }
        let t = time(&args);
        println!(
            "{name:<8} explain {label:<24} {t:>7.3} s   beyond materialization: {:>6.0} ms",
            (t - base) * 1e3
        );
    }
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("explain bench: skipped outside `cargo bench`");
        return;
    }
    let (data, rules) = chain();
    case(
        "chain",
        &data,
        &rules,
        &[
            (
                "n0 reach n1414, depth 1",
                "<http://example.org/n0> <http://example.org/reach> <http://example.org/n1414>",
            ),
            (
                "n0 reach n1414, depth 3",
                "<http://example.org/n0> <http://example.org/reach> <http://example.org/n1414>",
            ),
        ],
    );
    let (data, rules) = copy();
    case(
        "copy",
        &data,
        &rules,
        &[
            (
                "s5 q 55, depth 1",
                "<http://example.org/s5> <http://example.org/q> 55",
            ),
            (
                "s5 sum ?t, depth 1",
                "<http://example.org/s5> <http://example.org/sum> ?t",
            ),
        ],
    );
}
