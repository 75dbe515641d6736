//! Datalog benchmark: whole `reasonctl materialize` commands (load, fixpoint, write), median wall time of several
//! runs, with the fixpoint's own time from `--stats`, derived facts per second and peak memory (GNU time):
//!
//! - the specification's case: a 100k-edge graph and a one-pattern rule deriving 100k facts;
//! - LUBM_L and LUBM_LE (SPARQL translations in `benches/lubm-rules/`) over LUBM(1) and LUBM(10), with pyoxigraph's
//!   naive SPARQL INSERT-until-fixpoint side by side when it is installed (`pip install pyoxigraph`);
//! - `--owl2rl` over LUBM(1) and LUBM(10) with LUBM_L's axioms as an OWL TBox (`benches/lubm-rules/LUBM_L.tbox.ttl`);
//! - `--owl2rl` over LUBM(10) with that TBox and two `owl:hasKey` axioms (Person: emailAddress, telephone;
//!   GraduateStudent: emailAddress, telephone, name), where every telephone is the same literal: prp-key checks
//!   keys after the first one at a time, so a key shared by all does not multiply the rows;
//! - existence checks over LUBM(10): rules whose bodies have variables their heads do not read (`?s` of
//!   `?c a ub:Course . ?s ub:takesCourse ?c`) and `FILTER [NOT] EXISTS` patterns, which run as probes (one row
//!   per input row, not one per match);
//! - ancestor over a 2,000-node chain (about 2M facts): semi-naive staged vs `--schedule whole-program` (capped at
//!   `REASONCTL_NAIVE_TIMEOUT` seconds, default 60).
//!
//! The specification's case and the LUBM(10) cases are run a second time with `--lenient` (no IRI validation while
//! loading).
//!
//! Run: `cargo bench --bench datalog` (`REASONCTL_DATALOG_RUNS`, default 3). Data is generated into `benches/data/`.

mod lubm_gen;
mod materialize_run;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use materialize_run::Run;

use lubm_gen::data_dir;

fn lubm(universities: u64) -> PathBuf {
    lubm_gen::cached(universities)
}

/// A graph of `n` edges between `n` nodes, edge targets from a fixed pseudo-random sequence.
fn edges(n: u64) -> PathBuf {
    let path = data_dir().join(format!("edges-{n}.nt"));
    if !path.exists() {
        let mut w = BufWriter::new(File::create(&path).unwrap());
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for i in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            writeln!(
                w,
                "<http://example.org/n{i}> <http://example.org/edge> <http://example.org/n{}> .",
                x % n
            )
            .unwrap();
        }
    }
    path
}

fn chain(n: u64) -> PathBuf {
    let path = data_dir().join(format!("chain-{n}.nt"));
    if !path.exists() {
        let mut w = BufWriter::new(File::create(&path).unwrap());
        for i in 0..n {
            writeln!(
                w,
                "<http://example.org/n{i}> <http://example.org/parent> <http://example.org/n{}> .",
                i + 1
            )
            .unwrap();
        }
    }
    path
}

fn write_rules(name: &str, text: &str) -> PathBuf {
    let path = data_dir().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn materialize(data: &Path, rules: &Path, extra: &[&str]) -> Run {
    let out = data_dir().join("out.nt");
    let mut args: Vec<&std::ffi::OsStr> = vec![
        data.as_os_str(),
        "--rules".as_ref(),
        rules.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ];
    args.extend(extra.iter().map(std::ffi::OsStr::new));
    materialize_run::materialize(&args, &data_dir().join("stats.json"))
}

/// `materialize DATA TBOX --owl2rl`: the OWL 2 RL rules over the data and an ontology, no rules of its own.
fn owl2rl(data: &Path, tbox: &Path) -> Run {
    let out = data_dir().join("out.nt");
    let args: Vec<&std::ffi::OsStr> = vec![
        data.as_os_str(),
        tbox.as_os_str(),
        "--owl2rl".as_ref(),
        "-o".as_ref(),
        out.as_os_str(),
    ];
    materialize_run::materialize(&args, &data_dir().join("stats.json"))
}

fn median_run(data: &Path, rules: &Path, extra: &[&str], runs: usize) -> Run {
    materialize_run::median(runs, || materialize(data, rules, extra))
}

fn oxigraph(data: &Path, rules: &Path) -> Option<(f64, u64)> {
    let out = Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/datalog_oxigraph.py"))
        .arg(data)
        .arg(rules)
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    Some((json["fixpoint_s"].as_f64()?, json["derived"].as_u64()?))
}

fn row(case: &str, r: &Run, baseline: Option<(f64, u64)>) {
    let ox = baseline
        .map(|(s, n)| {
            let check = if n == r.derived {
                ""
            } else {
                " (derived count differs!)"
            };
            format!(
                "{:>10.3} {:>7.1}x{check}",
                s,
                s * 1e3 / r.fixpoint_ms.max(1e-6)
            )
        })
        .unwrap_or_else(|| format!("{:>10} {:>8}", "-", "-"));
    println!(
        "{case:<28} {:>9.3} {:>11.1} {:>10} {:>12.0} {:>9} {ox}{}",
        r.wall,
        r.fixpoint_ms,
        r.derived,
        r.derived as f64 / (r.fixpoint_ms / 1e3).max(1e-9),
        r.peak_kb
            .map(|k| format!("{}", k / 1024))
            .unwrap_or_else(|| "-".into()),
        r.capped
            .as_ref()
            .map(|c| format!("  capped: {c}"))
            .unwrap_or_default(),
    );
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("datalog bench: skipped outside `cargo bench`");
        return;
    }
    let runs: usize = std::env::var("REASONCTL_DATALOG_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let naive_timeout =
        std::env::var("REASONCTL_NAIVE_TIMEOUT").unwrap_or_else(|_| "60".to_owned());
    let rules_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/lubm-rules");
    println!(
        "{:<28} {:>9} {:>11} {:>10} {:>12} {:>9} {:>10} {:>8}",
        "case", "wall s", "fixpoint ms", "derived", "derived/s", "peak MiB", "oxigraph s", "ratio"
    );
    let spec_rules = write_rules(
        "spec.rq",
        "PREFIX ex: <http://example.org/>\nCONSTRUCT { ?a ex:linked ?b } WHERE { ?a ex:edge ?b }\n",
    );
    row(
        "spec: 100k edges, 1 rule",
        &median_run(&edges(100_000), &spec_rules, &[], runs.max(5)),
        None,
    );
    row(
        "spec, --lenient",
        &median_run(&edges(100_000), &spec_rules, &["--lenient"], runs.max(5)),
        None,
    );
    for (set, univs) in [
        ("LUBM_L", 1),
        ("LUBM_L", 10),
        ("LUBM_LE", 1),
        ("LUBM_LE", 10),
    ] {
        let data = lubm(univs);
        let rules = rules_dir.join(format!("{set}.rq"));
        let r = median_run(&data, &rules, &[], runs);
        let baseline = if univs == 1 || set == "LUBM_L" {
            oxigraph(&data, &rules)
        } else {
            None
        };
        row(&format!("{set} LUBM({univs})"), &r, baseline);
        if univs == 10 {
            // Validation of every IRI is a large share of loading LUBM; Soufflé reads unvalidated TSV.
            let r = median_run(&data, &rules, &["--lenient"], runs);
            row(&format!("{set} LUBM({univs}) --lenient"), &r, None);
        }
    }
    // LUBM_L's axioms as an OWL ontology (benches/lubm-rules/LUBM_L.tbox.ttl, from tbox.py), closed by --owl2rl:
    // every LUBM_L fact, plus OWL's schema facts and memberships of the anonymous restriction classes.
    let tbox = rules_dir.join("LUBM_L.tbox.ttl");
    for univs in [1, 10] {
        let data = lubm(univs);
        let r = materialize_run::median(runs, || owl2rl(&data, &tbox));
        row(&format!("OWL 2 RL LUBM({univs}) + TBox"), &r, None);
    }
    let exists = write_rules(
        "exists.rq",
        concat!(
            "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>\nPREFIX ex: <http://example.org/>\n",
            "#@rule taught\nCONSTRUCT { ?c a ex:TakenCourse } WHERE { ?c a ub:Course . ?s ub:takesCourse ?c }\n",
            "#@rule unadvised\nCONSTRUCT { ?x a ex:Unadvised } WHERE { ?x a ub:GraduateStudent FILTER NOT EXISTS { ?x ub:takesCourse ?c } }\n",
            "#@rule busy\nCONSTRUCT { ?x a ex:Busy } WHERE { ?x a ub:UndergraduateStudent FILTER EXISTS { ?x ub:takesCourse ?c } }\n",
            "#@rule populated\nCONSTRUCT { ?d a ex:Populated } WHERE { ?d a ub:Department . ?x ub:memberOf ?d . ?x ub:takesCourse ?c }\n",
        ),
    );
    row(
        "existence checks LUBM(10)",
        &median_run(&lubm(10), &exists, &[], runs),
        None,
    );
    let keyed = data_dir().join("LUBM_L.tbox-keys.ttl");
    let mut text = std::fs::read_to_string(&tbox).unwrap();
    text.push_str(concat!(
        "\n@prefix ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#> .\n",
        "@prefix owl: <http://www.w3.org/2002/07/owl#> .\n",
        "ub:Person owl:hasKey ( ub:emailAddress ub:telephone ) .\n",
        "ub:GraduateStudent owl:hasKey ( ub:emailAddress ub:telephone ub:name ) .\n",
    ));
    std::fs::write(&keyed, text).unwrap();
    let r = materialize_run::median(runs, || owl2rl(&lubm(10), &keyed));
    row("OWL 2 RL LUBM(10) + TBox + keys", &r, None);
    let anc = write_rules(
        "ancestor.rq",
        "PREFIX ex: <http://example.org/>\n#@rule base\nCONSTRUCT { ?x ex:ancestor ?y } WHERE { ?x ex:parent ?y }\n#@rule step\nCONSTRUCT { ?x ex:ancestor ?z } WHERE { ?x ex:ancestor ?y . ?y ex:parent ?z }\n",
    );
    let c = chain(2000);
    row("chain 2000: staged", &median_run(&c, &anc, &[], runs), None);
    row(
        "chain 2000: whole-program",
        &materialize(
            &c,
            &anc,
            &["--schedule", "whole-program", "--timeout", &naive_timeout],
        ),
        None,
    );
}
