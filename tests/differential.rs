//! Differential tests of the query executor: on random small datasets and random queries (basic graph patterns,
//! FILTER, UNION, OPTIONAL, MINUS, BIND, property paths), the planned execution, the execution with join operands
//! in written order, and Oxigraph's independent evaluator (spareval) give the same multiset of solutions.

use std::collections::BTreeMap;

use oxrdf::{Dataset, Literal, NamedNode, Quad, Term};
use proptest::prelude::*;
use reasonctl::exec::ROW_UNBOUND;
use reasonctl::plan::{Kind, LeftMode, Node};
use reasonctl::query::{self, Answer, RunOptions};
use reasonctl::store::load::{DataFormat, Loader, NoProgress};
use reasonctl::store::{Overlay, TermSource, View};
use spareval::{QueryEvaluator, QueryResults};

const EX: &str = "http://example.org/";

/// An object: a node 0..5 or an integer literal 0..3.
#[derive(Clone, Debug)]
enum Obj {
    Node(u8),
    Int(u8),
}

fn node(i: u8) -> String {
    format!("<{EX}n{i}>")
}

fn pred(i: u8) -> String {
    format!("<{EX}p{i}>")
}

fn obj_text(o: &Obj) -> String {
    match o {
        Obj::Node(i) => node(*i),
        Obj::Int(i) => i.to_string(),
    }
}

fn arb_obj() -> impl Strategy<Value = Obj> {
    prop_oneof![(0u8..5).prop_map(Obj::Node), (0u8..3).prop_map(Obj::Int)]
}

fn arb_data() -> impl Strategy<Value = Vec<(u8, u8, Obj)>> {
    proptest::collection::vec((0u8..5, 0u8..3, arb_obj()), 0..25)
}

/// A term of a pattern: a variable or a constant.
fn arb_term(vars: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop_oneof![
        3 => proptest::sample::select(vars).prop_map(|v| format!("?{v}")),
        1 => (0u8..5).prop_map(node),
    ]
}

fn arb_triple() -> impl Strategy<Value = String> {
    const VARS: &[&str] = &["x", "y", "z"];
    (
        arb_term(VARS),
        prop_oneof![3 => (0u8..3).prop_map(pred), 1 => Just("?p".to_owned())],
        prop_oneof![3 => arb_term(VARS), 1 => (0u8..3).prop_map(|i| i.to_string())],
    )
        .prop_map(|(s, p, o)| format!("{s} {p} {o} ."))
}

fn arb_bgp() -> impl Strategy<Value = String> {
    proptest::collection::vec(arb_triple(), 1..4).prop_map(|v| v.join(" "))
}

fn arb_filter() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("FILTER(?x != ?y)".to_owned()),
        Just("FILTER(BOUND(?z))".to_owned()),
        Just("FILTER(!BOUND(?z))".to_owned()),
        (0u8..3).prop_map(|i| format!("FILTER(?z > {i} || isIRI(?z))")),
        (0u8..5).prop_map(|i| format!("FILTER(?x = {})", node(i))),
        Just("FILTER(isLiteral(?y))".to_owned()),
    ]
}

/// A group: a basic graph pattern, then optional extras.
fn arb_group() -> impl Strategy<Value = String> {
    (
        arb_bgp(),
        proptest::option::of(arb_filter()),
        proptest::option::of(prop_oneof![
            arb_bgp().prop_map(|b| format!("UNION {{ {b} }}")),
            arb_bgp().prop_map(|b| format!("OPTIONAL {{ {b} }}")),
            arb_bgp().prop_map(|b| format!("MINUS {{ {b} }}")),
            (0u8..3).prop_map(|i| format!("?x {}+ ?w .", pred(i))),
            (0u8..3).prop_map(|i| format!("?x {}* ?w .", pred(i))),
            Just("BIND(COALESCE(?z, 0) AS ?b)".to_owned()),
            arb_bgp().prop_map(|b| format!("FILTER NOT EXISTS {{ {b} }}")),
        ]),
    )
        .prop_map(|(bgp, filter, extra)| match extra {
            Some(e) if e.starts_with("UNION") => {
                format!("{{ {bgp} }} {e} {}", filter.unwrap_or_default())
            }
            Some(e) => format!("{bgp} {e} {}", filter.unwrap_or_default()),
            None => format!("{bgp} {}", filter.unwrap_or_default()),
        })
}

type Solutions = Vec<BTreeMap<String, String>>;

fn ours(data: &str, query_text: &str, reorder: bool) -> Solutions {
    ours_with_plan(data, query_text, reorder, |_| false).0
}

/// [`ours`], with what `probe` says of the plan's root.
fn ours_with_plan(
    data: &str,
    query_text: &str,
    reorder: bool,
    probe: impl Fn(&Node) -> bool,
) -> (Solutions, bool) {
    let mut loader = Loader::new();
    loader
        .load_reader(
            "data",
            data.as_bytes(),
            DataFormat::NTriples,
            None,
            &NoProgress,
        )
        .expect("data");
    let mut store = loader.finish();
    let parsed = query::parse(query_text, "q", None).expect("query parses");
    let overlay = Overlay::new();
    let prepared = query::prepare_with(
        &parsed,
        &mut store.dict,
        View::new(&store.quads, &overlay),
        reorder,
    )
    .expect("prepares");
    let probed = probe(&prepared.plan.root);
    let outcome = query::execute(
        &prepared,
        &store.dict,
        View::new(&store.quads, &overlay),
        &RunOptions::default(),
    )
    .expect("runs");
    let Answer::Solutions { vars, rows } = &outcome.answer else {
        panic!("not a SELECT")
    };
    let mut out: Solutions = rows
        .iter()
        .map(|r| {
            vars.iter()
                .zip(r)
                .filter(|(_, id)| **id != ROW_UNBOUND)
                .map(|(v, id)| {
                    (
                        v.clone(),
                        outcome.terms.to_oxrdf(*id).expect("term").to_string(),
                    )
                })
                .collect()
        })
        .collect();
    out.sort();
    (out, probed)
}

fn hashes_filtered(node: &Node) -> bool {
    let filters = |n: &Node| match &n.kind {
        Kind::Filter { .. } => true,
        Kind::Seq(stages) => stages.iter().any(|s| matches!(s.kind, Kind::Filter { .. })),
        _ => false,
    };
    match &node.kind {
        Kind::HashJoin { build, .. } => filters(build) || hashes_filtered(build),
        Kind::Seq(stages) => stages.iter().any(hashes_filtered),
        Kind::Project { input, .. } => hashes_filtered(input),
        _ => false,
    }
}

/// An owl:sameAs-like class of 120 nodes (every pair linked: 14,400 rows), each node with one other fact: the
/// planner hashes `?s ?p ?o` filtered once instead of meeting each row's 121 facts and filtering 1.7M rows, and
/// the answers are those of the unplanned join, filtered after.
#[test]
fn a_filter_on_a_hashed_pattern_runs_before_the_hash_and_keeps_the_same_answers() {
    let mut data = String::new();
    for a in 0..120 {
        for b in 0..120 {
            data.push_str(&format!("<{EX}n{a}> <{EX}same> <{EX}n{b}> .\n"));
        }
        data.push_str(&format!("<{EX}n{a}> <{EX}name> \"{a}\" .\n"));
    }
    let q = format!(
        "SELECT ?s2 ?p ?o WHERE {{ ?s <{EX}same> ?s2 . ?s ?p ?o FILTER (!sameTerm(?p, <{EX}same>)) }}"
    );
    let (planned, hashed) = ours_with_plan(&data, &q, true, hashes_filtered);
    let (written_order, _) = ours_with_plan(&data, &q, false, hashes_filtered);
    assert!(hashed, "the filtered pattern was not hashed");
    assert_eq!(planned.len(), 120 * 120);
    assert_eq!(planned, written_order);
}

/// Whether the plan's first OPTIONAL is a hash left join with no condition left on it.
fn optional_hashed(node: &Node) -> bool {
    fn find(node: &Node) -> Option<bool> {
        match &node.kind {
            Kind::LeftJoin { mode, filter, .. } => {
                Some(matches!(mode, LeftMode::Hash { .. }) && filter.is_none())
            }
            Kind::Seq(stages) => stages.iter().find_map(find),
            Kind::Project { input, .. } => find(input),
            _ => None,
        }
    }
    find(node).unwrap_or(false)
}

/// An OPTIONAL sharing no variable with what it extends, with a condition on its own variables: it runs once,
/// hashed, the condition filtering it before the join (it was re-run per left row, its rows held until the
/// condition dropped them: 1.6 GB for this 30-node graph); the answers are spareval's.
#[test]
fn an_optional_sharing_no_variable_runs_once_filtered_and_keeps_the_answers() {
    let triples: Vec<(u8, u8, Obj)> = (0..30)
        .flat_map(|a| (0..30).map(move |b| (a, 0, Obj::Node(b))))
        .chain([(3, 1, Obj::Int(2))])
        .collect();
    let data: String = triples
        .iter()
        .map(|(s, p, o)| {
            format!(
                "{} {} {} .\n",
                node(*s),
                pred(*p),
                match o {
                    Obj::Int(i) => format!("\"{i}\"^^<http://www.w3.org/2001/XMLSchema#integer>"),
                    other => obj_text(other),
                }
            )
        })
        .collect();
    let q = format!(
        "SELECT * WHERE {{ ?a <{EX}p0> ?b . OPTIONAL {{ ?x <{EX}p0> ?c . ?c ?p ?o FILTER (?p = <{EX}p1>) }} }}"
    );
    let (planned, hashed) = ours_with_plan(&data, &q, true, optional_hashed);
    assert!(
        hashed,
        "the OPTIONAL is not run once, hashed and unfiltered"
    );
    assert_eq!(planned.len(), 900 * 30);
    assert_eq!(planned, oracle(&triples, &q));
}

/// Whether an EXISTS pattern of the plan runs as a probe (an existence check).
fn exists_probed(node: &Node) -> bool {
    let probed = |plan: &Node| match &plan.kind {
        Kind::Probe(..) => true,
        Kind::Seq(stages) => stages.iter().any(|s| matches!(s.kind, Kind::Probe(..))),
        _ => false,
    };
    match &node.kind {
        Kind::Filter { exists, .. } => exists.iter().any(|e| probed(&e.plan)),
        Kind::Seq(stages) => stages.iter().any(exists_probed),
        Kind::Project { input, .. } => exists_probed(input),
        _ => false,
    }
}

/// Every node with 40 `p1` links: `FILTER EXISTS { ?x p1 ?z }` checks each row's first link instead of meeting
/// all 40, and `NOT EXISTS` likewise; the answers are spareval's.
#[test]
fn an_exists_pattern_stops_at_its_first_match_and_keeps_the_answers() {
    let triples: Vec<(u8, u8, Obj)> = (0..20)
        .flat_map(|a| (0..40).map(move |b| (a, 1, Obj::Node(b))))
        .chain((0..30).map(|a| (a, 0, Obj::Node(a))))
        .collect();
    let data: String = triples
        .iter()
        .map(|(s, p, o)| format!("{} {} {} .\n", node(*s), pred(*p), obj_text(o)))
        .collect();
    for filter in ["EXISTS", "NOT EXISTS"] {
        let q =
            format!("SELECT ?x WHERE {{ ?x <{EX}p0> ?y FILTER {filter} {{ ?x <{EX}p1> ?z }} }}");
        let (planned, probed) = ours_with_plan(&data, &q, true, exists_probed);
        assert!(probed, "the {filter} pattern is not a probe");
        assert_eq!(planned.len(), if filter == "EXISTS" { 20 } else { 10 });
        assert_eq!(planned, oracle(&triples, &q));
    }
}

fn oracle(triples: &[(u8, u8, Obj)], query_text: &str) -> Solutions {
    let mut dataset = Dataset::new();
    for (s, p, o) in triples {
        let object: Term = match o {
            Obj::Node(i) => NamedNode::new_unchecked(format!("{EX}n{i}")).into(),
            Obj::Int(i) => Literal::from(i64::from(*i)).into(),
        };
        dataset.insert(&Quad::new(
            NamedNode::new_unchecked(format!("{EX}n{s}")),
            NamedNode::new_unchecked(format!("{EX}p{p}")),
            object,
            oxrdf::GraphName::DefaultGraph,
        ));
    }
    let parsed = spargebra::SparqlParser::new()
        .parse_query(query_text)
        .expect("query parses");
    let evaluator = QueryEvaluator::new();
    let QueryResults::Solutions(solutions) = evaluator
        .prepare(&parsed)
        .execute(&dataset)
        .expect("spareval runs")
    else {
        panic!("not a SELECT")
    };
    let mut out: Solutions = solutions
        .map(|s| {
            s.expect("solution")
                .iter()
                .map(|(v, t)| (v.as_str().to_owned(), t.to_string()))
                .collect()
        })
        .collect();
    out.sort();
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn planned_unplanned_and_spareval_agree(triples in arb_data(), group in arb_group()) {
        let data: String = triples
            .iter()
            .map(|(s, p, o)| format!("{} {} {} .\n", node(*s), pred(*p), match o {
                Obj::Int(i) => format!("\"{i}\"^^<http://www.w3.org/2001/XMLSchema#integer>"),
                other => obj_text(other),
            }))
            .collect();
        let query_text = format!("SELECT * WHERE {{ {group} }}");
        let planned = ours(&data, &query_text, true);
        let written_order = ours(&data, &query_text, false);
        let reference = oracle(&triples, &query_text);
        prop_assert_eq!(&planned, &written_order, "planned vs written order for {}", query_text);
        prop_assert_eq!(&planned, &reference, "reasonctl vs spareval for {}", query_text);
    }
}
