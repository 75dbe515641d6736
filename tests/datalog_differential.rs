//! Differential tests of the fixpoint: on random small datasets and random positive rule programs (joins,
//! recursion, mutual recursion, UNION, FILTER, BIND, paths, named-graph heads), staged semi-naive evaluation
//! derives exactly the facts whole-program naive evaluation derives, and the thread count never changes the
//! output bytes.

use proptest::prelude::*;
use reasonctl::datalog::{self, Budget, NoProgress, Options, Program, Schedule};
use reasonctl::exec::datetime::DateTime;
use reasonctl::output::rdf::{RdfOutputFormat, sort_quads, write_quads};
use reasonctl::rules::{Origin, sparql};
use reasonctl::store::Quad;
use reasonctl::store::load::{DataFormat, Loader, NoProgress as NoLoadProgress};

const EX: &str = "http://example.org/";

fn arb_data() -> impl Strategy<Value = String> {
    proptest::collection::vec((0u8..6, 0u8..3, 0u8..6, any::<bool>()), 0..20).prop_map(|edges| {
        let mut text = String::new();
        for (s, p, o, lit) in edges {
            let object = if lit && o < 2 {
                format!("\"{o}\"^^<http://www.w3.org/2001/XMLSchema#integer>")
            } else {
                format!("<{EX}n{o}>")
            };
            text.push_str(&format!("<{EX}n{s}> <{EX}p{p}> {object} .\n"));
        }
        text.push_str(&format!("<{EX}g> {{ <{EX}n0> <{EX}p0> <{EX}n1> . }}\n"));
        text
    })
}

/// One rule: a body over predicates p0..p4 and a head writing one of them, range-restricted by construction.
fn arb_rule() -> impl Strategy<Value = String> {
    let atom = |a: &'static str, b: &'static str| {
        (0u8..5).prop_map(move |p| format!("?{a} <{EX}p{p}> ?{b} ."))
    };
    prop_oneof![
        // chain join
        (atom("x", "y"), atom("y", "z"), 0u8..5, any::<bool>()).prop_map(|(a, b, h, rev)| {
            let head = if rev {
                format!("?z <{EX}p{h}> ?x")
            } else {
                format!("?x <{EX}p{h}> ?z")
            };
            format!("CONSTRUCT {{ {head} }} WHERE {{ {a} {b} FILTER(isIRI(?z)) }}")
        }),
        // copy / inverse
        (atom("x", "y"), 0u8..5).prop_map(|(a, h)| format!(
            "CONSTRUCT {{ ?y <{EX}p{h}> ?x }} WHERE {{ {a} FILTER(isIRI(?y)) }}"
        )),
        // union
        (atom("x", "y"), atom("x", "y"), 0u8..5).prop_map(|(a, b, h)| format!(
            "CONSTRUCT {{ ?x <{EX}p{h}> ?y }} WHERE {{ {{ {a} }} UNION {{ {b} }} }}"
        )),
        // bind a constant
        (atom("x", "y"), 0u8..5).prop_map(|(a, h)| format!(
            "CONSTRUCT {{ ?x <{EX}p{h}> ?k }} WHERE {{ {a} BIND(<{EX}n5> AS ?k) }}"
        )),
        // path
        (0u8..3, 0u8..5).prop_map(|(p, h)| format!(
            "CONSTRUCT {{ ?x <{EX}p{h}> ?y }} WHERE {{ ?x <{EX}p{p}>+ ?y }}"
        )),
        // EXISTS over another predicate (positive)
        (atom("x", "y"), 0u8..5, 0u8..5).prop_map(|(a, q, h)| format!(
            "CONSTRUCT {{ ?x <{EX}p{h}> ?y }} WHERE {{ {a} FILTER EXISTS {{ ?y <{EX}p{q}> ?w }} }}"
        )),
        // into a named graph
        (atom("x", "y"), 0u8..5).prop_map(|(a, h)| format!(
            "CONSTRUCT {{ GRAPH <{EX}g> {{ ?x <{EX}p{h}> ?y }} }} WHERE {{ {a} }}"
        )),
    ]
}

fn run(data: &str, rules: &[String], schedule: Schedule, threads: usize) -> String {
    let mut loader = Loader::new();
    loader
        .load_reader(
            "data",
            data.as_bytes(),
            DataFormat::Trig,
            None,
            &NoLoadProgress,
        )
        .expect("data");
    let mut store = loader.finish();
    let compiled = rules
        .iter()
        .enumerate()
        .map(|(i, text)| {
            sparql::compile(
                &format!("r{i}"),
                Origin::File {
                    path: "r.rq".into(),
                    offset: 0,
                },
                text,
                &mut store.dict,
            )
            .unwrap_or_else(|e| panic!("{text}: {e:?}"))
        })
        .collect();
    let program = Program::new(compiled);
    let options = Options {
        schedule,
        budget: Budget {
            max_iterations: Some(10_000),
            ..Budget::default()
        },
        now: DateTime::from_unix(0, 0),
        parallel: threads > 1,
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("pool");
    let (overlay, report) =
        pool.install(|| datalog::run(&program, &mut store, &options, &NoProgress));
    assert!(report.capped.is_none(), "capped: {report:?}");
    let mut quads: Vec<Quad> = Vec::new();
    for g in overlay.graph_ids() {
        quads.extend(
            overlay
                .scan(g, &[None, None, None])
                .map(|[s, p, o]| [g, s, p, o]),
        );
    }
    sort_quads(&store.dict, &mut quads);
    String::from_utf8(
        write_quads(
            &store.dict,
            &[],
            &quads,
            RdfOutputFormat::NQuads,
            Vec::new(),
        )
        .expect("write"),
    )
    .expect("utf-8")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, ..ProptestConfig::default() })]

    #[test]
    fn staged_semi_naive_equals_whole_program_evaluation(data in arb_data(), rules in proptest::collection::vec(arb_rule(), 1..6)) {
        let staged = run(&data, &rules, Schedule::Staged, 1);
        let naive = run(&data, &rules, Schedule::WholeProgram, 1);
        prop_assert_eq!(staged, naive, "rules: {:#?}", rules);
    }

    #[test]
    fn thread_count_never_changes_the_output_bytes(data in arb_data(), rules in proptest::collection::vec(arb_rule(), 1..6)) {
        let one = run(&data, &rules, Schedule::Staged, 1);
        let four = run(&data, &rules, Schedule::Staged, 4);
        prop_assert_eq!(one, four);
    }
}

#[test]
fn a_recursive_chain_closes_the_same_way_staged_and_naive() {
    let mut data = String::new();
    for i in 0..40 {
        data.push_str(&format!("<{EX}n{i}> <{EX}p0> <{EX}n{}> .\n", i + 1));
    }
    let rules = vec![
        format!("CONSTRUCT {{ ?x <{EX}p1> ?y }} WHERE {{ ?x <{EX}p0> ?y }}"),
        format!("CONSTRUCT {{ ?x <{EX}p1> ?z }} WHERE {{ ?x <{EX}p1> ?y . ?y <{EX}p0> ?z }}"),
    ];
    let staged = run(&data, &rules, Schedule::Staged, 2);
    assert_eq!(staged.lines().count(), 40 * 41 / 2);
    assert_eq!(staged, run(&data, &rules, Schedule::WholeProgram, 1));
}
