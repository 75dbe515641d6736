//! `--max-memory` holds in every phase: LUBM_LE over LUBM(10) under 64, 128, 256 and 512 MiB, and two small
//! hostile inputs (an RDF/XML entity bomb, refused as it is read; a 1 MiB prefix IRI repeated) under 100 MiB.
//! Each run's peak resident size (the kernel's high-water mark, polled from `/proc`) must stay within the limit + 10% + 32 MiB (the
//! binary, its stacks and the allocator's own pages on top of the heap the limit counts), and a run that hits
//! the limit must exit 3. `cargo bench --bench memory` (Linux); exits 1 if a bound is broken.

mod lubm_gen;
mod measure;

use std::path::{Path, PathBuf};

use lubm_gen::data_dir;
use measure::measure;

/// An RDF/XML document whose one literal expands, entity by entity, to 58 × 10^`levels` bytes.
fn entity_bomb(levels: u32) -> PathBuf {
    let mut entities = vec![format!("<!ENTITY a0 \"{}\">", "d".repeat(58))];
    for i in 1..=levels {
        entities.push(format!(
            "<!ENTITY a{i} \"{}\">",
            format!("&a{};", i - 1).repeat(10)
        ));
    }
    let text = format!(
        "<?xml version=\"1.0\"?>\n<!DOCTYPE rdf:RDF [\n{}\n]>\n<rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\" xmlns:ex=\"http://example.org/\"><rdf:Description rdf:about=\"http://example.org/a\"><ex:p>&a{levels};</ex:p></rdf:Description></rdf:RDF>\n",
        entities.join("\n")
    );
    let path = data_dir().join(format!("entity-bomb-{levels}.rdf"));
    std::fs::write(&path, text).unwrap();
    path
}

/// A 1 MiB Turtle file declaring a 1 MiB prefix IRI, used by 1,000 distinct names (1 GiB of IRIs).
fn repeated_prefix() -> PathBuf {
    let mut text = format!(
        "@prefix p: <http://example.org/{}> .\n",
        "x".repeat(1 << 20)
    );
    for i in 0..1000 {
        text.push_str(&format!("p:s{i} <http://example.org/p> \"x\" .\n"));
    }
    let path = data_dir().join("repeated-prefix.ttl");
    std::fs::write(&path, text).unwrap();
    path
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("memory bench: skipped outside `cargo bench`");
        return;
    }
    if !Path::new("/proc/self/status").exists() {
        println!("memory bench: needs /proc (Linux)");
        return;
    }
    let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/lubm-rules/LUBM_LE.rq");
    let rules = rules.to_str().unwrap();
    let tiny = data_dir().join("copy.rq");
    std::fs::write(
        &tiny,
        "PREFIX ex: <http://example.org/>\nCONSTRUCT { ?a ex:q ?b } WHERE { ?a ex:p ?b }\n",
    )
    .unwrap();
    let lubm10 = lubm_gen::cached(10);
    let lubm10 = lubm10.to_str().unwrap();
    let mut cases: Vec<(String, u64, Vec<String>)> = Vec::new();
    for limit in [64u64, 128, 256, 512] {
        cases.push((
            format!("LUBM_LE(10), {limit} MiB"),
            limit,
            [
                lubm10,
                "--rules",
                rules,
                "--format",
                "nquads",
                "-o",
                "/dev/null",
            ]
            .iter()
            .map(|s| (*s).to_owned())
            .collect(),
        ));
    }
    for (name, path) in [
        ("entity bomb, 7 levels", entity_bomb(7)),
        ("entity bomb, 9 levels", entity_bomb(9)),
        ("1 MiB prefix x 1000", repeated_prefix()),
    ] {
        cases.push((
            format!("{name}, 100 MiB"),
            100,
            vec![
                path.display().to_string(),
                "--rules".to_owned(),
                tiny.display().to_string(),
                "--timeout".to_owned(),
                "60".to_owned(),
            ],
        ));
    }
    println!(
        "{:<30} {:>9} {:>9} {:>6} {:>7}  said",
        "case", "peak MiB", "bound", "exit", "wall s"
    );
    let mut broken = 0;
    for (name, limit, args) in &cases {
        let mut all: Vec<&str> = vec!["materialize", "-q", "--max-memory"];
        let limit_text = limit.to_string();
        all.push(&limit_text);
        all.extend(args.iter().map(String::as_str));
        let m = measure(&all);
        let bound = *limit as f64 * 1.1 + 32.0;
        let capped = m.said().contains("capped") || m.said().contains("run::memory");
        // An entity bomb is refused as it is read (exit 2), before it expands.
        let refused = m.code == 2 && m.said().contains("entity_expansion");
        let ok = m.peak_mib <= bound && (m.code == 0 || (m.code == 3 && capped) || refused);
        if !ok {
            broken += 1;
        }
        println!(
            "{:<30} {:>9.1} {:>9.1} {:>6} {:>7.2}  {}{}",
            name,
            m.peak_mib,
            bound,
            m.code,
            m.wall,
            m.said(),
            if ok { "" } else { "   <-- BROKEN" }
        );
    }
    if broken > 0 {
        println!("memory bench: {broken} bound(s) broken");
        std::process::exit(1);
    }
}
