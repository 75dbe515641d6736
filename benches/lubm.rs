//! Query benchmark: the 14 LUBM queries (without inference) plus two join-heavy queries on generated LUBM data,
//! run by reasonctl's executor and by pyoxigraph (Oxigraph's Python binding, in-memory store) on the same file
//! in the same run; reports each engine's median time per query and the ratio.
//!
//! Run: `cargo bench --bench lubm` (needs `pip install pyoxigraph` for the comparison column; without it only
//! reasonctl's times are printed). `REASONCTL_LUBM_UNIVERSITIES` (default 8, about 1.1M triples), `REASONCTL_LUBM_RUNS`
//! (default 5). Times are end to end per query: parse, plan, execute and collect every row, one thread.
//! "rows/s" is the rows all plan nodes produced (intermediate results included) per second.

mod lubm_gen;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use reasonctl::query::{self, Answer, RunOptions};
use reasonctl::store::load::{DataSource, LoadOptions, NoProgress, load};
use reasonctl::store::{Overlay, View};

fn data_file(universities: u64) -> PathBuf {
    lubm_gen::cached(universities)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("lubm bench: skipped outside `cargo bench`");
        return;
    }
    let universities: u64 = std::env::var("REASONCTL_LUBM_UNIVERSITIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8);
    let runs: usize = std::env::var("REASONCTL_LUBM_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let path = data_file(universities);
    let start = Instant::now();
    let mut store = load(
        &[DataSource::File(path.clone())],
        &LoadOptions::default(),
        &NoProgress,
    )
    .unwrap();
    let load_s = start.elapsed().as_secs_f64();
    let queries_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/lubm");
    let mut queries: Vec<PathBuf> = std::fs::read_dir(&queries_dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "rq"))
        .collect();
    queries.sort();

    let oxigraph: Option<serde_json::Value> = Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/lubm_oxigraph.py"))
        .arg(&path)
        .arg(&queries_dir)
        .arg(runs.to_string())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| serde_json::from_slice(&o.stdout).ok());
    if oxigraph.is_none() {
        eprintln!("pyoxigraph not available (pip install pyoxigraph): printing reasonctl only");
    }
    println!(
        "LUBM({universities}): {} triples; load reasonctl {load_s:.2}s{}",
        store.quads.len(),
        oxigraph
            .as_ref()
            .map(|o| format!(
                ", pyoxigraph {} {:.2}s",
                o["version"].as_str().unwrap_or("?"),
                o["load_s"].as_f64().unwrap_or(0.0)
            ))
            .unwrap_or_default()
    );
    println!(
        "{:<6} {:>9} {:>13} {:>14} {:>8} {:>14}",
        "query", "rows", "reasonctl ms", "oxigraph ms", "ratio", "rows/s"
    );
    let overlay = Overlay::new();
    for q in &queries {
        let name = q.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(q).unwrap();
        let mut times = Vec::new();
        let mut rows = 0;
        let mut intermediate = 0u64;
        for run in 0..=runs {
            let start = Instant::now();
            let parsed = query::parse(&text, &name, None).unwrap();
            let prepared =
                query::prepare(&parsed, &mut store.dict, View::new(&store.quads, &overlay))
                    .unwrap();
            let outcome = query::execute(
                &prepared,
                &store.dict,
                View::new(&store.quads, &overlay),
                &RunOptions::default(),
            )
            .unwrap();
            let elapsed = start.elapsed().as_secs_f64();
            if let Answer::Solutions { rows: r, .. } = &outcome.answer {
                rows = r.len();
            }
            intermediate = outcome.actual.iter().sum();
            if run > 0 {
                times.push(elapsed);
            }
        }
        let ours = median(times);
        let theirs = oxigraph
            .as_ref()
            .and_then(|o| o["queries"][&name]["median_s"].as_f64());
        let their_rows = oxigraph
            .as_ref()
            .and_then(|o| o["queries"][&name]["rows"].as_u64());
        let mismatch = match their_rows {
            Some(r) if r as usize != rows => format!("  ROW COUNT DIFFERS: oxigraph {r}"),
            _ => String::new(),
        };
        println!(
            "{name:<6} {rows:>9} {:>13.3} {:>14} {:>8} {:>14.0}{mismatch}",
            ours * 1e3,
            theirs
                .map(|t| format!("{:.3}", t * 1e3))
                .unwrap_or_else(|| "-".to_owned()),
            theirs
                .map(|t| format!("{:.1}x", t / ours))
                .unwrap_or_else(|| "-".to_owned()),
            intermediate as f64 / ours,
        );
    }
}
