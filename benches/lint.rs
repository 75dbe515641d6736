//! `cargo bench --bench lint`: `reasonctl lint` over a folder of 200 rule files (SPARQL and JSON-LD, recursion,
//! negation, aggregates, a few findings), the median of 11 runs of the release binary, with the time per rule.

use std::fs;
use std::process::Command;
use std::time::Instant;

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    for i in 0..200 {
        let (name, text) = if i % 4 == 3 {
            (
                format!("r{i:03}.json"),
                format!(
                    r#"{{"@context": {{"ex": "http://example.org/"}}, "@id": "r{i}",
 "where": [{{"@id": "?x", "ex:p{i}": "?y"}}, ["not-exists", {{"@id": "?y", "ex:q{i}": "?x"}}], ["filter", "(!= ?y ex:a)"]],
 "insert": {{"@id": "?x", "ex:p{}": "?y"}}}}"#,
                    i + 1
                ),
            )
        } else if i % 4 == 2 {
            (
                format!("r{i:03}.rq"),
                format!(
                    "PREFIX ex: <http://example.org/>\nCONSTRUCT {{ ?x ex:n{i} ?n }} WHERE {{ {{ SELECT ?x (COUNT(?y) AS ?n) WHERE {{ ?x ex:p{} ?y }} GROUP BY ?x }} }}\n",
                    i.max(1) - 1
                ),
            )
        } else if i % 50 == 0 {
            (
                format!("r{i:03}.rq"),
                format!(
                    "PREFIX ex: <http://example.org/>\nCONSTRUCT {{ ?x ex:p{} ?w }} WHERE {{ ?x ex:p{i} ?y OPTIONAL {{ ?y ex:r ?z }} }}\n",
                    i + 1
                ),
            )
        } else {
            (
                format!("r{i:03}.rq"),
                format!(
                    "PREFIX ex: <http://example.org/>\nCONSTRUCT {{ ?x ex:p{} ?z }} WHERE {{ ?x ex:p{i} ?y . ?y ex:p{} ?z FILTER(isIRI(?z)) }}\n",
                    i + 1,
                    i + 1
                ),
            )
        };
        fs::write(dir.path().join(name), text).expect("write rule");
    }
    let mut times = Vec::new();
    let mut summary = String::new();
    for _ in 0..11 {
        let start = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_reasonctl"))
            .arg("lint")
            .arg(dir.path())
            .output()
            .expect("run reasonctl");
        times.push(start.elapsed().as_secs_f64());
        summary = String::from_utf8_lossy(&out.stdout)
            .lines()
            .last()
            .unwrap_or_default()
            .to_owned();
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!("lint, 200 rule files: {summary}");
    println!(
        "median {:.1} ms over 11 runs (min {:.1} ms, max {:.1} ms), {:.0} µs per rule, process start included",
        median * 1e3,
        times[0] * 1e3,
        times[times.len() - 1] * 1e3,
        median * 1e6 / 200.0
    );
}
