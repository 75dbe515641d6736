//! `--owl2rl` against the LUBM_L rules it stands for: over generated LUBM data, the OWL 2 RL closure with LUBM_L's
//! axioms as an ontology (`benches/lubm-rules/LUBM_L.tbox.ttl`, written by `tbox.py`) holds every fact the
//! LUBM_L rules derive.

#[path = "../benches/lubm_gen.rs"]
#[allow(dead_code)]
mod lubm_gen;

use std::collections::HashSet;
use std::path::Path;

use reasonctl::datalog::{self, NoProgress as NoRunProgress, Options, Program};
use reasonctl::exec::datetime::DateTime;
use reasonctl::rules::source::split_file;
use reasonctl::store::load::{DataFormat, Loader, NoProgress};
use reasonctl::store::well_known::XSD_DATE_TIME;
use reasonctl::store::{Overlay, Store, TermSource};

fn store(data: &[u8], tbox: Option<&str>) -> Store {
    let mut loader = Loader::new();
    loader
        .load_reader("lubm.nt", data, DataFormat::NTriples, None, &NoProgress)
        .expect("LUBM data loads");
    if let Some(tbox) = tbox {
        loader
            .load_reader(
                "tbox.ttl",
                tbox.as_bytes(),
                DataFormat::Turtle,
                None,
                &NoProgress,
            )
            .expect("the TBox loads");
    }
    loader.finish()
}

fn options() -> Options {
    Options::new(DateTime::parse("2026-01-01T00:00:00Z", XSD_DATE_TIME).expect("time"))
}

/// The derived facts as N-Triples-like text (the two runs have dictionaries of their own).
fn facts(store: &Store, overlay: &Overlay) -> HashSet<String> {
    overlay
        .graph_ids()
        .flat_map(|g| overlay.runs_of(g))
        .flatten()
        .map(|t| t.map(|id| store.dict.display(id)).join(" "))
        .collect()
}

#[test]
fn the_owl2rl_closure_with_lubm_l_axioms_holds_every_fact_the_lubm_l_rules_derive() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/lubm-rules");
    let mut data = Vec::new();
    lubm_gen::generate(1, 7, &mut data).expect("LUBM data");
    // LUBM_L as rules.
    let rules_path = root.join("LUBM_L.rq");
    let text = std::fs::read_to_string(&rules_path).expect("LUBM_L.rq");
    let mut by_rules = store(&data, None);
    let (rules, errors) =
        reasonctl::rules::compile_all(&split_file(&rules_path, &text), &mut by_rules.dict);
    assert!(errors.is_empty(), "{errors:?}");
    let (overlay, report) = datalog::run(
        &Program::new(rules),
        &mut by_rules,
        &options(),
        &NoRunProgress,
    );
    assert!(
        report.capped.is_none() && report.derived > 10_000,
        "{} derived",
        report.derived
    );
    let want = facts(&by_rules, &overlay);
    // LUBM_L's axioms, closed by OWL 2 RL.
    let tbox = std::fs::read_to_string(root.join("LUBM_L.tbox.ttl")).expect("the TBox");
    let mut by_owl = store(&data, Some(&tbox));
    let closure = datalog::owl2rl::materialize(&mut by_owl, &options(), &NoRunProgress)
        .expect("LUBM is consistent");
    let got = facts(&by_owl, &closure.overlay);
    let missing: Vec<&String> = want.difference(&got).take(5).collect();
    assert!(
        missing.is_empty(),
        "{} LUBM_L facts not in the OWL closure, e.g. {missing:?}",
        want.difference(&got).count()
    );
}
