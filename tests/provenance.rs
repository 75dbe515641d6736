//! Annotated rule heads: minted reifiers survive a round trip through the output syntaxes, and their ids do not
//! depend on the thread count, the run or the order of the rules.

use std::path::Path;
use std::process::Command;

use oxrdf::Quad;
use oxttl::{NQuadsParser, TriGParser};

const CASES: &[&str] = &[
    "provenance-claims-sparql",
    "provenance-claims-jsonld",
    "provenance-two-rules-one-edge",
    "provenance-recursive",
    "provenance-named-graph",
    "provenance-rule",
    "provenance-premises",
    "provenance-graph",
    "provenance-nested-annotation",
    "provenance-blank-node-edge",
];

/// The case's arguments (from its `args`), without `--format` and its value.
fn args(case: &str) -> Vec<String> {
    args_but(case, &[])
}

/// The case's arguments without `--format` (and its value) and without the flags in `drop`.
fn args_but(case: &str, drop: &[&str]) -> Vec<String> {
    let text = std::fs::read_to_string(dir(case).join("args")).unwrap();
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(l) = lines.next() {
        if l == "--format" {
            lines.next();
        } else if drop.contains(&l) {
        } else {
            out.push(l.to_owned());
        }
    }
    out
}

fn dir(case: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/materialize")
        .join(case)
}

/// Runs reasonctl in `dir` with `args`; it must succeed; its standard output.
fn succeed<S: AsRef<std::ffi::OsStr>>(dir: &Path, args: &[S]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_reasonctl"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{:?}: {}",
        args.iter().map(AsRef::as_ref).collect::<Vec<_>>(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn run(case: &str, extra: &[&str]) -> String {
    let mut all = args(case);
    all.extend(extra.iter().map(|a| (*a).to_owned()));
    succeed(&dir(case), &all)
}

fn sorted(mut quads: Vec<Quad>) -> Vec<Quad> {
    quads.sort_by_key(|q| q.to_string());
    quads.dedup();
    quads
}

#[test]
fn minted_reifiers_read_back_as_the_same_quads_from_trig_and_from_n_quads() {
    for case in CASES {
        let trig = run(case, &["--format", "trig"]);
        let nquads = run(case, &["--format", "nquads"]);
        let from_trig: Vec<Quad> = TriGParser::new()
            .for_slice(trig.as_bytes())
            .collect::<Result<_, _>>()
            .unwrap_or_else(|e| panic!("{case}: the TriG output does not parse: {e}\n{trig}"));
        let from_nquads: Vec<Quad> = NQuadsParser::new()
            .for_slice(nquads.as_bytes())
            .collect::<Result<_, _>>()
            .unwrap_or_else(|e| panic!("{case}: the N-Quads output does not parse: {e}\n{nquads}"));
        let reifies = from_nquads
            .iter()
            .filter(|q| {
                q.predicate.as_str() == "http://www.w3.org/1999/02/22-rdf-syntax-ns#reifies"
            })
            .count();
        assert!(reifies > 0, "{case}: no reifier minted\n{nquads}");
        assert_eq!(sorted(from_trig), sorted(from_nquads), "{case}");
    }
}

#[test]
fn minted_reifier_ids_are_the_same_for_one_and_two_threads_and_across_runs() {
    for case in CASES {
        let one = run(case, &["--format", "nquads", "--threads", "1"]);
        let two = run(case, &["--format", "nquads", "--threads", "2"]);
        let again = run(case, &["--format", "nquads", "--threads", "2"]);
        assert_eq!(one, two, "{case}");
        assert_eq!(two, again, "{case}");
    }
}

#[test]
fn minted_reifier_ids_do_not_depend_on_the_order_of_the_rules() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(
        d.join("data.ttl"),
        "PREFIX ex: <http://example.org/>\nex:a ex:knows ex:b ; ex:worksWith ex:b .\n",
    )
    .unwrap();
    std::fs::write(
        d.join("one.rq"),
        "PREFIX ex: <http://example.org/>\n#@rule social\nCONSTRUCT { ?a ex:related ?b {| ex:source ex:knows |} } WHERE { ?a ex:knows ?b }\n",
    )
    .unwrap();
    std::fs::write(
        d.join("two.rq"),
        "PREFIX ex: <http://example.org/>\n#@rule work\nCONSTRUCT { ?a ex:related ?b {| ex:source ex:worksWith |} } WHERE { ?a ex:worksWith ?b }\n",
    )
    .unwrap();
    let run = |first: &str, second: &str| {
        succeed(
            d,
            &[
                "materialize",
                "data.ttl",
                "--rules",
                first,
                "--rules",
                second,
                "--format",
                "nquads",
            ],
        )
    };
    let forward = run("one.rq", "two.rq");
    // Two rules, one edge: two reifiers.
    assert_eq!(
        forward.matches("/.well-known/genid/").count(),
        4,
        "{forward}"
    );
    assert_eq!(forward, run("two.rq", "one.rq"));
}

fn parse(nquads: &str) -> Vec<Quad> {
    NQuadsParser::new()
        .for_slice(nquads.as_bytes())
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn with_provenance_every_derived_fact_is_credited_to_exactly_one_rule() {
    let case = "provenance-rule";
    let mut plain = args_but(case, &["--provenance"]);
    plain.extend(["--format".to_owned(), "nquads".to_owned()]);
    let derived = parse(&succeed(&dir(case), &plain));
    assert!(derived.len() >= 8);
    let with = parse(&run(case, &["--format", "nquads"]));
    let rule = "https://reasonctl.invalid/ns#rule";
    let reifies = "http://www.w3.org/1999/02/22-rdf-syntax-ns#reifies";
    for q in &derived {
        let t = oxrdf::Term::Triple(Box::new(oxrdf::Triple::new(
            q.subject.clone(),
            q.predicate.clone(),
            q.object.clone(),
        )));
        let reifiers: Vec<&Quad> = with
            .iter()
            .filter(|r| {
                r.predicate.as_str() == reifies && r.object == t && r.graph_name == q.graph_name
            })
            .collect();
        assert_eq!(reifiers.len(), 1, "{q}");
        let credits = with
            .iter()
            .filter(|c| {
                c.predicate.as_str() == rule
                    && oxrdf::Term::from(c.subject.clone())
                        == oxrdf::Term::from(reifiers[0].subject.clone())
            })
            .count();
        assert_eq!(credits, 1, "{q}");
    }
    // Nothing but the facts and their provenance: two quads per derived fact.
    assert_eq!(with.len(), derived.len() * 3);
}

#[test]
fn provenance_from_a_state_is_the_provenance_of_a_run_from_scratch() {
    let case = "provenance-rule";
    let tmp = tempfile::tempdir().unwrap();
    for f in ["data.ttl", "rules.rq"] {
        std::fs::copy(dir(case).join(f), tmp.path().join(f)).unwrap();
    }
    std::fs::write(
        tmp.path().join("plus.nt"),
        "<http://example.org/eve> <http://example.org/knows> <http://example.org/ann> .\n",
    )
    .unwrap();
    let run = |args: &[&str]| succeed(tmp.path(), args);
    let fresh = run(&[
        "materialize",
        "data.ttl",
        "--rules",
        "rules.rq",
        "--provenance",
        "--format",
        "nquads",
    ]);
    let saved = run(&[
        "materialize",
        "data.ttl",
        "--rules",
        "rules.rq",
        "--state",
        "st",
        "--provenance",
        "--format",
        "nquads",
    ]);
    assert_eq!(fresh, saved);
    // Unchanged state: the program runs again for the credits, and says so.
    let again = run(&[
        "materialize",
        "--state",
        "st",
        "--provenance",
        "--format",
        "nquads",
        "--stats",
        "s.json",
    ]);
    assert_eq!(fresh, again);
    let stats: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("s.json")).unwrap()).unwrap();
    assert_eq!(stats["mode"], "full", "{stats}");
    assert!(
        stats["mode_reason"]
            .as_str()
            .unwrap()
            .contains("--provenance"),
        "{stats}"
    );
    // A change set: derived again, the same provenance as a fresh run over the changed data.
    let changed = run(&[
        "materialize",
        "--state",
        "st",
        "--add",
        "plus.nt",
        "--provenance",
        "--format",
        "nquads",
    ]);
    let fresh = run(&[
        "materialize",
        "data.ttl",
        "plus.nt",
        "--rules",
        "rules.rq",
        "--provenance",
        "--format",
        "nquads",
    ]);
    assert_eq!(changed, fresh);
    assert!(fresh.contains("eve"));
}

/// `a r c` has two derivations of one rule in one pass (through b1 and through b2). A state made from the b2 half,
/// then given the b1 half, numbers b2 before b1; a fresh load of both numbers b1 first. The premises recorded are
/// those of the derivation first by content, so both write the same bytes.
#[test]
fn the_premises_recorded_do_not_depend_on_the_order_terms_were_met_in() {
    let tmp = tempfile::tempdir().unwrap();
    let ex = |s: &str| format!("<http://example.org/{s}>");
    let half = |b: &str| {
        format!(
            "{} {} {} .\n{} {} {} .\n",
            ex("a"),
            ex("p"),
            ex(b),
            ex(b),
            ex("q"),
            ex("c")
        )
    };
    std::fs::write(tmp.path().join("b2.nt"), half("b2")).unwrap();
    std::fs::write(tmp.path().join("b1.nt"), half("b1")).unwrap();
    std::fs::write(
        tmp.path().join("both.nt"),
        format!("{}{}", half("b1"), half("b2")),
    )
    .unwrap();
    std::fs::write(
        tmp.path().join("rules.rq"),
        "PREFIX ex: <http://example.org/>\n#@rule r\nCONSTRUCT { ?x ex:r ?z } WHERE { ?x ex:p ?y . ?y ex:q ?z }\n",
    )
    .unwrap();
    let run = |args: &[&str]| succeed(tmp.path(), args);
    let common = ["--provenance", "premises", "--format", "nquads"];
    let fresh = run(&[
        &["materialize", "both.nt", "--rules", "rules.rq"],
        &common[..],
    ]
    .concat());
    run(&[
        &[
            "materialize",
            "b2.nt",
            "--rules",
            "rules.rq",
            "--state",
            "st",
        ],
        &common[..],
    ]
    .concat());
    let maintained = run(&[
        &["materialize", "--state", "st", "--add", "b1.nt"],
        &common[..],
    ]
    .concat());
    assert!(fresh.contains("<http://example.org/b1>"), "{fresh}");
    assert!(!fresh.contains("<http://example.org/b2>"), "{fresh}");
    assert_eq!(maintained, fresh);
}

/// owl:sameAs under `--owl2rl` runs as union-find classes, not as eq-sym and eq-trans bodies: `b = a` from `a = b`
/// is still credited to eq-sym as iteration credits it, and no recorded derivation reads the fact it derives
/// (`b = b` from `b = a` and `a = b`, not from `b = b` and `b = a`) when another does not.
#[test]
fn owl_same_as_classes_credit_the_symmetric_rule_and_record_no_circular_premises() {
    let tmp = tempfile::tempdir().unwrap();
    let owl = "http://www.w3.org/2002/07/owl#sameAs";
    let link =
        |a: &str, b: &str| format!("<http://example.org/{a}> <{owl}> <http://example.org/{b}> .\n");
    std::fs::write(tmp.path().join("one.nt"), link("a", "b")).unwrap();
    std::fs::write(
        tmp.path().join("chain.nt"),
        [link("a", "b"), link("b", "c"), link("c", "d")].concat(),
    )
    .unwrap();
    let run = |args: &[&str]| succeed(tmp.path(), args);
    let common = ["--owl2rl", "--provenance", "premises", "--format", "nquads"];
    let classes = run(&[&["materialize", "one.nt"], &common[..]].concat());
    let iterated = run(&[&["materialize", "one.nt", "--no-closure"], &common[..]].concat());
    assert_eq!(classes, iterated);
    assert!(classes.contains("\"owl2rl:eq-sym\""), "{classes}");
    let chain = run(&[&["materialize", "chain.nt"], &common[..]].concat());
    let reifies = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#reifies>";
    let premise = "<https://reasonctl.invalid/ns#premise>";
    let mut facts: std::collections::HashMap<&str, &str> = std::collections::HashMap::new();
    for line in chain.lines() {
        if let Some((r, t)) = line.split_once(&format!(" {reifies} ")) {
            facts.insert(r, t);
        }
    }
    let mut premises = 0;
    for line in chain.lines() {
        if let Some((r, t)) = line.split_once(&format!(" {premise} ")) {
            premises += 1;
            assert_ne!(
                facts.get(r),
                Some(&t),
                "a fact recorded as its own premise: {line}"
            );
        }
    }
    assert!(premises > 0, "{chain}");
}

#[test]
fn a_rule_that_may_mint_reifiers_without_end_is_warned_of_before_the_run_and_budgets_stop_it() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("data.nt"),
        "<http://example.org/a> <http://example.org/knows> <http://example.org/b> .\n",
    )
    .unwrap();
    let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/lint/minting-cycle/rules.rq");
    let out = Command::new(env!("CARGO_BIN_EXE_reasonctl"))
        .args(["materialize", "data.nt", "--rules"])
        .arg(&rules)
        .args(["--max-facts", "50", "--format", "nquads"])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("reasonctl::lint::minting_cycle"),
        "{stderr}"
    );
    assert!(stderr.contains("reasonctl::datalog::capped"), "{stderr}");
    // Capped at the budget: 50 facts, with reifiers of reifiers among them.
    let written = String::from_utf8(out.stdout).unwrap();
    assert_eq!(written.lines().count(), 50, "{written}");
    assert!(
        written.lines().any(
            |l| l.starts_with("<https://reasonctl.invalid/.well-known/genid/")
                && l.contains("> <http://example.org/trusts> ")
        ),
        "{written}"
    );
}

/// `--provenance premises` past `--timeout`: the replays stop at the deadline (well before they would end), exit 3,
/// nothing written. A 400-edge chain's closure (80,200 facts) is derived, and its reifiers minted, in a fraction
/// of the budget (a smaller budget is spent before the replays start, where the command's own stop ends the run);
/// replaying every fact's derivation takes over twice it (7 s in a debug build).
#[test]
fn premises_past_the_timeout_stop_at_the_deadline_with_exit_3_and_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("chain.rq"),
        "PREFIX : <http://e/>\n#@rule base\nCONSTRUCT { ?x :reach ?y } WHERE { ?x :edge ?y }\n\
         #@rule step\nCONSTRUCT { ?x :reach ?z } WHERE { ?x :reach ?y . ?y :edge ?z }\n",
    )
    .unwrap();
    let chain: String = (0..400)
        .map(|i| format!("<http://e/n{i}> <http://e/edge> <http://e/n{}> .\n", i + 1))
        .collect();
    std::fs::write(d.join("chain.nt"), chain).unwrap();
    let started = std::time::Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_reasonctl"))
        .args([
            "materialize",
            "chain.nt",
            "--rules",
            "chain.rq",
            "--provenance",
            "premises",
        ])
        .args(["--timeout", "3", "-o", "out.nq"])
        .current_dir(d)
        .output()
        .unwrap();
    let took = started.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("reasonctl::provenance::timeout"), "{err}");
    assert!(err.contains("ran past --timeout"), "{err}");
    assert!(
        !d.join("out.nq").exists(),
        "a run past its deadline wrote its output"
    );
    assert!(
        took < std::time::Duration::from_secs(8),
        "took {took:?}: not stopped at the deadline"
    );
}
