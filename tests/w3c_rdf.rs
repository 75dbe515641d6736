//! The W3C RDF 1.2 (and included RDF 1.1) Turtle, TriG, N-Triples and N-Quads test suites, run through the loader.
//!
//! Positive syntax tests must load; negative ones must fail with a diagnostic; evaluation and C14N tests must
//! round-trip through the store and the N-Quads writer to the expected result (blank-node isomorphic, literals
//! compared by lexical form). One test per manifest entry; `EXCLUDED` lists the entries not run, with the reason.

use std::collections::{BTreeSet, HashSet};
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Failed, Trial};
use oxrdf::dataset::CanonicalizationAlgorithm;
use oxrdf::{Dataset, NamedNode, Quad, Term, Triple};
use oxttl::{NQuadsParser, NTriplesParser, TurtleParser};
use reasonctl::output::rdf::{RdfOutputFormat, sort_quads, write_quads};
use reasonctl::store::load::{DataFormat, DataSource, LoadError, LoadOptions, Loader, NoProgress};
use reasonctl::store::{Quad as IdQuad, Store, TermId};

/// Where the suites were published; manifests and test files resolve against it (`mf:assumedTestBase`).
const PUBLISHED: &str = "https://w3c.github.io/rdf-tests/";

const ROOTS: &[&str] = &[
    "rdf/rdf12/rdf-turtle/manifest.ttl",
    "rdf/rdf12/rdf-trig/manifest.ttl",
    "rdf/rdf12/rdf-n-triples/manifest.ttl",
    "rdf/rdf12/rdf-n-quads/manifest.ttl",
];

/// Entries not run, with the reason.
const EXCLUDED: &[(&str, &str)] = &[];

const MF: &str = "http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#";
const RDF: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#";

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    PositiveSyntax,
    NegativeSyntax,
    Eval,
    NegativeEval,
    C14n,
}

#[derive(Clone, Debug)]
struct Case {
    name: String,
    kind: Kind,
    format: DataFormat,
    action: String,
    result: Option<String>,
}

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/w3c")
}

fn local(url: &str) -> PathBuf {
    let path = url.split('#').next().unwrap_or(url);
    let rel = path
        .strip_prefix(PUBLISHED)
        .unwrap_or_else(|| panic!("{url} is outside the suites"));
    fixture_dir().join(rel)
}

fn parse_manifest(url: &str) -> Vec<Triple> {
    let file = File::open(local(url)).unwrap_or_else(|e| panic!("{url}: {e}"));
    TurtleParser::new()
        .with_base_iri(url)
        .expect("base")
        .for_reader(BufReader::new(file))
        .map(|t| t.unwrap_or_else(|e| panic!("{url}: {e}")))
        .collect()
}

fn objects<'a>(
    graph: &'a [Triple],
    subject: &'a Term,
    predicate: &'a str,
) -> impl Iterator<Item = &'a Term> + 'a {
    graph
        .iter()
        .filter(move |t| {
            Term::from(t.subject.clone()) == *subject && t.predicate.as_str() == predicate
        })
        .map(|t| &t.object)
}

fn list(graph: &[Triple], mut node: Term) -> Vec<Term> {
    let mut items = Vec::new();
    let nil = Term::NamedNode(NamedNode::new_unchecked(format!("{RDF}nil")));
    let (first, rest) = (format!("{RDF}first"), format!("{RDF}rest"));
    while node != nil {
        let Some(item) = objects(graph, &node, &first).next() else {
            break;
        };
        items.push(item.clone());
        let Some(next) = objects(graph, &node, &rest).next() else {
            break;
        };
        node = next.clone();
    }
    items
}

fn iri(term: &Term) -> String {
    match term {
        Term::NamedNode(n) => n.as_str().to_owned(),
        other => panic!("{other} is not an IRI"),
    }
}

fn collect(url: &str, cases: &mut Vec<Case>, seen: &mut HashSet<String>) {
    if !seen.insert(url.to_owned()) {
        return;
    }
    let graph = parse_manifest(url);
    let manifests: Vec<Term> = graph
        .iter()
        .filter(|t| {
            t.predicate.as_str() == format!("{RDF}type")
                && t.object == Term::NamedNode(NamedNode::new_unchecked(format!("{MF}Manifest")))
        })
        .map(|t| t.subject.clone().into())
        .collect();
    for m in &manifests {
        for include in objects(&graph, m, &format!("{MF}include"))
            .cloned()
            .collect::<Vec<_>>()
        {
            for inc in list(&graph, include) {
                collect(&iri(&inc), cases, seen);
            }
        }
        for entries in objects(&graph, m, &format!("{MF}entries"))
            .cloned()
            .collect::<Vec<_>>()
        {
            for entry in list(&graph, entries) {
                let ty = iri(objects(&graph, &entry, &format!("{RDF}type"))
                    .next()
                    .expect("type"));
                let ty = ty.rsplit('#').next().unwrap_or_default().to_owned();
                let format = if ty.starts_with("TestTurtle") {
                    DataFormat::Turtle
                } else if ty.to_ascii_lowercase().starts_with("testtrig") {
                    DataFormat::Trig
                } else if ty.starts_with("TestNTriples") {
                    DataFormat::NTriples
                } else if ty.starts_with("TestNQuads") {
                    DataFormat::NQuads
                } else {
                    panic!("unknown test type {ty}")
                };
                let kind = if ty.ends_with("PositiveSyntax") {
                    Kind::PositiveSyntax
                } else if ty.ends_with("NegativeSyntax") {
                    Kind::NegativeSyntax
                } else if ty.ends_with("NegativeEval") {
                    Kind::NegativeEval
                } else if ty.ends_with("PositiveC14N") {
                    Kind::C14n
                } else if ty.ends_with("Eval") {
                    Kind::Eval
                } else {
                    panic!("unknown test type {ty}")
                };
                let entry_iri = iri(&entry);
                let name = entry_iri
                    .strip_prefix(PUBLISHED)
                    .unwrap_or(&entry_iri)
                    .replace("/manifest.ttl#", "#");
                cases.push(Case {
                    name,
                    kind,
                    format,
                    action: iri(objects(&graph, &entry, &format!("{MF}action"))
                        .next()
                        .expect("action")),
                    result: objects(&graph, &entry, &format!("{MF}result"))
                        .next()
                        .map(iri),
                });
            }
        }
    }
}

/// Loads a case as the command line does (N-Triples and N-Quads through the line reader, which hands what it
/// does not read itself to oxttl); for those two formats, also checks that the result is what oxttl alone loads.
fn load(case: &Case) -> Result<Store, LoadError> {
    let options = LoadOptions {
        base: Some(case.action.clone()),
        format: Some(case.format),
        lenient: false,
    };
    let mut loader = Loader::new();
    let loaded = loader
        .load_source(
            &DataSource::File(local(&case.action)),
            &options,
            &NoProgress,
        )
        .map(|()| loader.finish());
    if matches!(case.format, DataFormat::NTriples | DataFormat::NQuads) {
        let by_oxttl = load_with_oxttl(case);
        match (&loaded, &by_oxttl) {
            (Ok(a), Ok(b)) => assert_eq!(
                listing(a),
                listing(b),
                "{}: line reader vs oxttl",
                case.name
            ),
            (Err(_), Err(_)) => {}
            _ => panic!(
                "{}: the line reader {} but oxttl {}",
                case.name,
                if loaded.is_ok() { "loads" } else { "refuses" },
                if by_oxttl.is_ok() { "loads" } else { "refuses" }
            ),
        }
    }
    loaded
}

/// Loads a case through oxttl's streaming parser alone.
fn load_with_oxttl(case: &Case) -> Result<Store, LoadError> {
    let file = File::open(local(&case.action))
        .map_err(|e| panic!("{}: {e}", case.action))
        .unwrap();
    let mut loader = Loader::new();
    loader.load_reader(
        &case.name,
        BufReader::new(file),
        case.format,
        Some(&case.action),
        &NoProgress,
    )?;
    Ok(loader.finish())
}

/// Every term by id, and every quad: equal stores give equal listings.
fn listing(store: &Store) -> (Vec<String>, Vec<IdQuad>) {
    let terms = (0..store.dict.len() as u32)
        .map(|i| format!("{:?}", store.dict.get(TermId(i))))
        .collect();
    let quads = store
        .quads
        .graphs()
        .flat_map(|(g, idx)| idx.triples().iter().map(move |&[s, p, o]| [g, s, p, o]))
        .collect();
    (terms, quads)
}

/// The store written as N-Quads by the project's own writer.
fn written(store: &Store, format: RdfOutputFormat) -> String {
    let mut quads: Vec<IdQuad> = store
        .quads
        .graphs()
        .flat_map(|(g, idx)| idx.triples().iter().map(move |&[s, p, o]| [g, s, p, o]))
        .collect();
    sort_quads(&store.dict, &mut quads);
    String::from_utf8(write_quads(&store.dict, &[], &quads, format, Vec::new()).expect("write"))
        .expect("utf-8")
}

fn canonical(quads: Vec<Quad>) -> BTreeSet<String> {
    let mut dataset: Dataset = quads.into_iter().collect();
    dataset.canonicalize(CanonicalizationAlgorithm::Unstable);
    dataset.iter().map(|q| q.to_string()).collect()
}

fn parse_nquads(text: &[u8], what: &str) -> Result<Vec<Quad>, Failed> {
    NQuadsParser::new()
        .for_slice(text)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{what} does not parse as N-Quads: {e}").into())
}

fn expected(url: &str) -> Result<Vec<Quad>, Failed> {
    let bytes = std::fs::read(local(url)).map_err(|e| format!("{url}: {e}"))?;
    if url.ends_with(".nq") {
        parse_nquads(&bytes, url)
    } else {
        NTriplesParser::new()
            .for_slice(&bytes)
            .map(|t| t.map(|t| t.in_graph(oxrdf::GraphName::DefaultGraph)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("{url} does not parse: {e}").into())
    }
}

/// The lines of a canonical N-Triples/N-Quads text, sorted, with blank-node labels blanked out.
fn canonical_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text
        .lines()
        .map(|line| {
            let mut out = String::with_capacity(line.len());
            let mut rest = line;
            while let Some(i) = rest.find("_:") {
                out.push_str(&rest[..i + 2]);
                out.push('x');
                rest = rest[i + 2..]
                    .trim_start_matches(|c: char| c.is_alphanumeric() || "_-.".contains(c));
            }
            out.push_str(rest);
            out
        })
        .collect();
    lines.sort();
    lines
}

fn run(case: &Case) -> Result<(), Failed> {
    match case.kind {
        Kind::PositiveSyntax => load(case)
            .map(|_| ())
            .map_err(|e| format!("{:?}", miette::Report::new(e)).into()),
        Kind::NegativeSyntax | Kind::NegativeEval => match load(case) {
            Ok(store) => Err(format!(
                "loaded {} quads; expected a syntax error",
                store.quads.len()
            )
            .into()),
            Err(e @ (LoadError::Syntax(_) | LoadError::SyntaxUnplaced { .. })) => {
                let rendered = format!("{:?}", miette::Report::new(e));
                if rendered.contains("reasonctl::load::syntax") {
                    Ok(())
                } else {
                    Err(format!("diagnostic lacks its code: {rendered}").into())
                }
            }
            Err(other) => Err(format!("expected a syntax error, got {other:?}").into()),
        },
        Kind::Eval | Kind::C14n => {
            let store = load(case).map_err(|e| format!("{:?}", miette::Report::new(e)))?;
            let out = written(&store, RdfOutputFormat::NQuads);
            let got = canonical(parse_nquads(out.as_bytes(), "the writer's output")?);
            let result = case.result.as_deref().ok_or("no mf:result")?;
            let want = canonical(expected(result)?);
            if got != want {
                return Err(format!(
                    "round trip differs\n--- expected\n{}\n--- got\n{}",
                    want.into_iter().collect::<Vec<_>>().join("\n"),
                    got.into_iter().collect::<Vec<_>>().join("\n")
                )
                .into());
            }
            if case.kind == Kind::C14n {
                // Each line must be in canonical form; line order and blank-node labels are not part of it.
                let format = if case.format == DataFormat::NQuads {
                    RdfOutputFormat::NQuads
                } else {
                    RdfOutputFormat::NTriples
                };
                let got_lines = canonical_lines(&written(&store, format));
                let want_lines = canonical_lines(
                    &std::fs::read_to_string(local(result)).map_err(|e| e.to_string())?,
                );
                if got_lines != want_lines {
                    return Err(format!(
                        "not canonical\n--- expected\n{want_lines:#?}\n--- got\n{got_lines:#?}"
                    )
                    .into());
                }
            }
            Ok(())
        }
    }
}

fn main() {
    let args = Arguments::from_args();
    let mut cases = Vec::new();
    let mut seen = HashSet::new();
    for root in ROOTS {
        collect(&format!("{PUBLISHED}{root}"), &mut cases, &mut seen);
    }
    let mut names = HashSet::new();
    cases.retain(|c| names.insert(c.name.clone()));
    let trials: Vec<Trial> = cases
        .into_iter()
        .map(|case| {
            let excluded = EXCLUDED.iter().any(|(name, _)| *name == case.name);
            let name = case.name.clone();
            Trial::test(name, move || run(&case)).with_ignored_flag(excluded)
        })
        .collect();
    let total = trials.len();
    let conclusion = libtest_mimic::run(&args, trials);
    println!(
        "W3C RDF 1.2 syntax/eval suites: {} passed, {} failed, {} excluded, of {total}",
        conclusion.num_passed, conclusion.num_failed, conclusion.num_ignored
    );
    conclusion.exit();
}
