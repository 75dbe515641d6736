//! SHACL 1.2 Rules' RDF syntax (`src/rules/srl/rdf.rs`) against the draft's own tests
//! (`fixtures/w3c/shacl12-rules/`): every test node typed `:Test…Good` must be read, every `:Test…Bad` one refused,
//! by the reader function of the shape it tests; and the rule sets of `tests/test-rules.ttl` lower to the same
//! program as their SRL form.

use std::path::{Path, PathBuf};

use reasonctl::rules::source::{RuleSources, RuleText, collect};
use reasonctl::rules::srl::rdf::{Graph, Written};
use reasonctl::rules::{Language, compile_all};
use reasonctl::store::load::{DataSource, LoadOptions, NoProgress, load};
use reasonctl::store::{Dictionary, Store, TermId, TermRef, well_known};

fn suite() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/w3c/shacl12-rules")
}

fn loaded(path: &Path) -> Store {
    load(
        &[DataSource::File(path.to_owned())],
        &LoadOptions::default(),
        &NoProgress,
    )
    .unwrap()
}

/// What reading a node as the shape of a test class gives: `Ok` for a node the reader takes.
fn read_as(graph: &Graph<'_>, class: &str, node: TermId) -> Result<(), String> {
    match class {
        "Term" => graph.term(node).map(drop),
        "Variable" => graph.variable(node).map(drop),
        "VarOrTerm" => graph.var_or_term(node).map(drop),
        "TripleData" => graph.triple(node, true).map(drop),
        // The tests write a triple pattern as the body element that holds it: `[ srl:triplePattern t ]`.
        "TriplePattern" | "FilterElement" | "Assignment" | "NegationElement" => {
            graph.element(node).map(drop)
        }
        "TripleTemplate" => graph.template(node).map(drop),
        "Expression" => graph.expression(node).map(drop),
        "Rule" => graph.rule(node, None).map(drop),
        "DataBlock" => graph.data_block(node).map(drop),
        "RuleSet" => graph.rule_set(node),
        other => panic!("a test class this test does not know: {other}"),
    }
}

#[test]
fn every_shape_test_of_the_draft_is_read_or_refused_as_it_says() {
    const EX: &str = "http://example/";
    let mut checked = 0;
    let mut wrong = Vec::new();
    for file in [
        "test-terms.ttl",
        "test-triples.ttl",
        "test-elements.ttl",
        "test-rules.ttl",
    ] {
        let store = loaded(&suite().join("tests").join(file));
        let index = store.quads.graph(TermId::DEFAULT_GRAPH).unwrap();
        let written = Written::default();
        let graph = Graph::new(&store.dict, index, &written);
        let test = store.dict.lookup_iri(&format!("{EX}test")).unwrap();
        for [case, _, class] in index
            .range(&[None, Some(well_known::RDF_TYPE), None])
            .iter()
        {
            let TermRef::Iri(class) = store.dict.get(class) else {
                continue;
            };
            let class = class.to_string();
            let Some(name) = class.strip_prefix(&format!("{EX}Test")) else {
                continue;
            };
            let (shape, good) = match (name.strip_suffix("Good"), name.strip_suffix("Bad")) {
                (Some(s), _) => (s, true),
                (_, Some(s)) => (s, false),
                _ => continue,
            };
            let values = index.range(&[Some(case), Some(test), None]);
            assert!(!values.is_empty(), "{file}: a test without :test");
            for [_, _, node] in values.iter() {
                let got = read_as(&graph, shape, node);
                checked += 1;
                if got.is_ok() != good {
                    wrong.push(format!(
                        "{file}: {} ({name}): {got:?}",
                        store.dict.get(case).to_string_lossy()
                    ));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "read against the test's verdict:\n{}",
        wrong.join("\n")
    );
    // Every test the files write (`:case rdf:type :Test…Good|Bad ; :test …`, one per such line) was checked.
    let written: usize = [
        "test-terms.ttl",
        "test-triples.ttl",
        "test-elements.ttl",
        "test-rules.ttl",
    ]
    .iter()
    .map(|f| {
        let text = std::fs::read_to_string(suite().join("tests").join(f)).unwrap();
        text.lines()
            .filter(|l| {
                let l = l.split_whitespace().collect::<Vec<_>>();
                l.len() >= 3
                    && l[1] == "rdf:type"
                    && l[2].starts_with(":Test")
                    && (l[2].trim_end_matches(';').ends_with("Good")
                        || l[2].trim_end_matches(';').ends_with("Bad"))
            })
            .count()
    })
    .sum();
    assert!(written > 40, "found only {written} tests in the files");
    assert_eq!(checked, written, "test nodes checked");
}

trait Lossy {
    fn to_string_lossy(&self) -> String;
}

impl Lossy for TermRef<'_> {
    fn to_string_lossy(&self) -> String {
        match self {
            TermRef::Iri(i) => i.to_string(),
            _ => "a blank node".to_owned(),
        }
    }
}

/// The rule texts of one rules file.
fn texts_of(path: &Path) -> Vec<RuleText> {
    let sources = RuleSources {
        paths: vec![path.to_owned()],
        ..RuleSources::default()
    };
    let (texts, errors) = collect(&sources, &Store::default());
    assert!(errors.is_empty(), "{}: {errors:?}", path.display());
    texts
}

/// A program's lowered rules (bodies and heads, in order) and its problems' codes, ids left out: the RDF syntax
/// names blank rules by rule set and position, SRL by file and position.
fn lowered(texts: &[RuleText], dict: &mut Dictionary) -> (Vec<String>, Vec<String>) {
    let (rules, errors) = compile_all(texts, dict);
    let rules = rules
        .iter()
        .map(|r| format!("{:?} => {:?}", r.body, r.heads))
        .collect();
    let codes = errors
        .iter()
        .map(|e| reasonctl::lint::codes::of(e).to_owned())
        .collect();
    (rules, codes)
}

#[test]
fn the_drafts_rule_sets_lower_to_the_same_program_as_their_srl_form() {
    let rdf = texts_of(&suite().join("tests/test-rules.ttl"));
    let srl = texts_of(&suite().join("test-rules.srl"));
    assert!(rdf.iter().all(|t| t.language == Language::Srl));
    // Two data blocks and six rules: five of `:ruleSet-1`, one of the blank rule set.
    assert_eq!(
        rdf.len(),
        8,
        "{:#?}",
        rdf.iter().map(|t| &t.id).collect::<Vec<_>>()
    );
    assert_eq!(srl.len(), rdf.len());
    let mut dict = Dictionary::new();
    let (rdf_rules, rdf_errors) = lowered(&rdf, &mut dict);
    let (srl_rules, srl_errors) = lowered(&srl, &mut dict);
    assert_eq!(rdf_rules, srl_rules);
    // The draft's fifth rule of `:ruleSet-1` puts ?o in the head but binds it only inside NOT: not well-formed,
    // in either form.
    assert_eq!(rdf_errors, ["reasonctl::srl::unbound_head_var"]);
    assert_eq!(srl_errors, rdf_errors);
    assert_eq!(rdf_rules.len(), 7);
}

/// A rules file in the RDF syntax, written to a temporary folder.
fn rules_file(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("rules.ttl");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn odd_rdf_rule_sets_are_refused_with_the_rdf_syntax_code_not_crashed_on() {
    const HEAD: &str = "PREFIX : <http://e/>\nPREFIX srl: <http://www.w3.org/ns/shacl-rules#>\n\
                        PREFIX sparql: <http://www.w3.org/ns/sparql#>\n";
    let rule = |body: &str| {
        format!(
            "{HEAD}:set a srl:RuleSet ; srl:rules ( :r ) .\n\
             :r srl:head ( [ srl:tripleTemplate [ srl:subject [ srl:varName \"x\" ] ; srl:predicate :q ; \
             srl:object :o ] ] ) ;\n srl:body ( [ srl:triplePattern [ srl:subject [ srl:varName \"x\" ] ; \
             srl:predicate :p ; srl:object :o ] ] {body} ) .\n"
        )
    };
    // An expression nested 300 deep; a list that loops; a list that never ends in rdf:nil; a variable name that
    // is not one; an expression node with two function calls; 60 nodes each naming the next twice (2^60 nodes
    // written out: refused at once, not expanded).
    let mut deep = "1".to_owned();
    for _ in 0..300 {
        deep = format!("[ sparql:add ( {deep} 1 ) ]");
    }
    let shared: String = (0..60)
        .map(|i| format!("_:e{i} sparql:and ( _:e{j} _:e{j} ) .\n", j = i + 1))
        .chain(["_:e60 sparql:bound ( [ srl:varName \"x\" ] ) .\n".to_owned()])
        .collect();
    let cases = [
        rule(&format!("[ srl:filter [ sparql:less-than ( {deep} 5 ) ] ]")),
        format!(
            "{HEAD}:set a srl:RuleSet ; srl:rules _:l .\n_:l <http://www.w3.org/1999/02/22-rdf-syntax-ns#first> :r ; \
             <http://www.w3.org/1999/02/22-rdf-syntax-ns#rest> _:l .\n"
        ),
        format!(
            "{HEAD}:set a srl:RuleSet ; srl:rules _:l .\n_:l <http://www.w3.org/1999/02/22-rdf-syntax-ns#first> :r .\n"
        ),
        rule("[ srl:filter [ sparql:bound ( [ srl:varName \"not a name\" ] ) ] ]"),
        rule("[ srl:filter [ sparql:bound ( 1 ) ; sparql:str ( 2 ) ] ]"),
        rule("[ srl:filter _:e0 ]") + &shared,
        // 14 levels (about 49,000 nodes, within one expression's bound) named by 2,000 body elements: each is
        // written once, and the uses come to more than a rules file's 16 MiB.
        rule(&"_:f ".repeat(2000)) + "_:f srl:filter _:e46 .\n" + &shared,
    ];
    let dir = tempfile::tempdir().unwrap();
    for (n, text) in cases.iter().enumerate() {
        let path = rules_file(dir.path(), text);
        let sources = RuleSources {
            paths: vec![path],
            ..RuleSources::default()
        };
        let (texts, errors) = collect(&sources, &Store::default());
        let codes: Vec<&str> = errors.iter().map(reasonctl::lint::codes::of).collect();
        assert!(texts.is_empty(), "case {n}: {texts:?}");
        assert_eq!(
            codes,
            ["reasonctl::srl::rdf_syntax"],
            "case {n}: {errors:?}"
        );
    }
}
