//! The W3C SPARQL 1.0 / 1.1 / 1.2 query suites run through the library: every `mf:QueryEvaluationTest`
//! (SELECT, ASK, CONSTRUCT, DESCRIBE) compared strictly — multisets with blank-node isomorphism, order only
//! under ORDER BY, literals as terms with their lexical form — plus every syntax test.
//!
//! `tests/w3c_sparql_expected_failures.txt` records the tests that still fail, each with its reason. A test in
//! it that passes, or a failure not in it, fails this harness; the pass count is printed.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use libtest_mimic::{Arguments, Failed, Trial};
use oxrdf::{NamedNode, Term, Triple};
use oxttl::TurtleParser;
use reasonctl::exec::datetime::DateTime;
use reasonctl::query::{self, Answer, RunOptions};
use reasonctl::store::load::{DataFormat, Loader, NoProgress};
use reasonctl::store::{Overlay, TermSource, View};
use sparesults::{QueryResultsFormat, QueryResultsParser, SliceQueryResultsParserOutput};

const PUBLISHED: &str = "http://w3c.github.io/rdf-tests/";

const ROOTS: &[&str] = &[
    "sparql/sparql10/manifest-evaluation.ttl",
    "sparql/sparql10/manifest-syntax.ttl",
    "sparql/sparql11/manifest-sparql11-query.ttl",
    "sparql/sparql11/manifest-sparql11-results.ttl",
    "sparql/sparql12/manifest.ttl",
];

const MF: &str = "http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#";
const QT: &str = "http://www.w3.org/2001/sw/DataAccess/tests/test-query#";
const RDF: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#";
const RS: &str = "http://www.w3.org/2001/sw/DataAccess/tests/result-set#";

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Eval,
    PositiveSyntax,
    NegativeSyntax,
}

#[derive(Clone, Debug)]
struct Case {
    name: String,
    kind: Kind,
    query: String,
    data: Vec<String>,
    graph_data: Vec<String>,
    result: Option<String>,
}

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/w3c")
}

fn local(url: &str) -> PathBuf {
    let path = url.split('#').next().unwrap_or(url);
    match path.strip_prefix(PUBLISHED) {
        Some(rel) => fixture_dir().join(rel),
        None => PathBuf::from("/nonexistent"),
    }
}

struct Graph(Vec<Triple>);

impl Graph {
    fn parse(url: &str) -> Self {
        let file = File::open(local(url)).unwrap_or_else(|e| panic!("{url}: {e}"));
        Graph(
            TurtleParser::new()
                .with_base_iri(url)
                .expect("base")
                .for_reader(BufReader::new(file))
                .map(|t| t.unwrap_or_else(|e| panic!("{url}: {e}")))
                .collect(),
        )
    }

    fn objects<'a>(&'a self, s: &'a Term, p: &str) -> Vec<&'a Term> {
        self.0
            .iter()
            .filter(|t| Term::from(t.subject.clone()) == *s && t.predicate.as_str() == p)
            .map(|t| &t.object)
            .collect()
    }

    fn list(&self, mut node: Term) -> Vec<Term> {
        let mut out = Vec::new();
        loop {
            let first = self.objects(&node, &format!("{RDF}first"));
            let Some(f) = first.first() else { break };
            out.push((*f).clone());
            let rest = self.objects(&node, &format!("{RDF}rest"));
            let Some(r) = rest.first() else { break };
            node = (*r).clone();
        }
        out
    }
}

fn iri(t: &Term) -> String {
    match t {
        Term::NamedNode(n) => n.as_str().to_owned(),
        other => panic!("{other} is not an IRI"),
    }
}

fn collect(url: &str, cases: &mut Vec<Case>, seen: &mut HashSet<String>) {
    if !seen.insert(url.to_owned()) {
        return;
    }
    let g = Graph::parse(url);
    let manifest_type = Term::NamedNode(NamedNode::new_unchecked(format!("{MF}Manifest")));
    let manifests: Vec<Term> =
        g.0.iter()
            .filter(|t| t.predicate.as_str() == format!("{RDF}type") && t.object == manifest_type)
            .map(|t| t.subject.clone().into())
            .collect();
    for m in &manifests {
        for inc in g.objects(m, &format!("{MF}include")) {
            for u in g.list(inc.clone()) {
                collect(&iri(&u), cases, seen);
            }
        }
        for entries in g.objects(m, &format!("{MF}entries")) {
            for entry in g.list(entries.clone()) {
                let Some(ty) = g
                    .objects(&entry, &format!("{RDF}type"))
                    .first()
                    .map(|t| iri(t))
                else {
                    continue;
                };
                let local_type = ty.rsplit('#').next().unwrap_or_default();
                let kind = match local_type {
                    "QueryEvaluationTest" => Kind::Eval,
                    "PositiveSyntaxTest" | "PositiveSyntaxTest11" => Kind::PositiveSyntax,
                    "NegativeSyntaxTest" | "NegativeSyntaxTest11" => Kind::NegativeSyntax,
                    _ => continue,
                };
                let entry_iri = iri(&entry);
                let name = entry_iri
                    .strip_prefix(PUBLISHED)
                    .unwrap_or(&entry_iri)
                    .replace("/manifest.ttl#", "#");
                let action = g.objects(&entry, &format!("{MF}action"))[0].clone();
                let (query, data, graph_data) = match &action {
                    Term::NamedNode(n) => (n.as_str().to_owned(), Vec::new(), Vec::new()),
                    node => (
                        iri(g.objects(node, &format!("{QT}query"))[0]),
                        g.objects(node, &format!("{QT}data"))
                            .into_iter()
                            .map(iri)
                            .collect(),
                        g.objects(node, &format!("{QT}graphData"))
                            .into_iter()
                            .map(iri)
                            .collect(),
                    ),
                };
                let result = g
                    .objects(&entry, &format!("{MF}result"))
                    .first()
                    .map(|t| iri(t));
                cases.push(Case {
                    name,
                    kind,
                    query,
                    data,
                    graph_data,
                    result,
                });
            }
        }
    }
}

fn data_format(url: &str) -> DataFormat {
    let path = local(url);
    DataFormat::from_path(&path).unwrap_or(DataFormat::Turtle)
}

/// A result table: variable names and rows of optional terms.
#[derive(Debug, Clone, PartialEq)]
enum Results {
    Boolean(bool),
    Solutions(Vec<String>, Vec<Vec<Option<Term>>>),
    Graph(Vec<Triple>),
}

fn read_results(url: &str) -> Result<Results, Failed> {
    let path = local(url);
    let bytes = std::fs::read(&path).map_err(|e| format!("{url}: {e}"))?;
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let format = match ext {
        "srx" => Some(QueryResultsFormat::Xml),
        "srj" => Some(QueryResultsFormat::Json),
        "tsv" => Some(QueryResultsFormat::Tsv),
        "csv" => Some(QueryResultsFormat::Csv),
        _ => None,
    };
    if let Some(format) = format {
        return match QueryResultsParser::from_format(format)
            .for_slice(&bytes)
            .map_err(|e| format!("{url}: {e}"))?
        {
            SliceQueryResultsParserOutput::Boolean(b) => Ok(Results::Boolean(b)),
            SliceQueryResultsParserOutput::Solutions(s) => {
                let vars: Vec<String> = s
                    .variables()
                    .iter()
                    .map(|v| v.as_str().to_owned())
                    .collect();
                let mut rows = Vec::new();
                for sol in s {
                    let sol = sol.map_err(|e| format!("{url}: {e}"))?;
                    rows.push(vars.iter().map(|v| sol.get(v.as_str()).cloned()).collect());
                }
                Ok(Results::Solutions(vars, rows))
            }
        };
    }
    // An RDF file: a graph, or a result set in the DAWG vocabulary.
    let mut loader = Loader::new();
    let fmt = DataFormat::from_path(&path).unwrap_or(DataFormat::Turtle);
    let file = File::open(&path).map_err(|e| e.to_string())?;
    loader
        .load_reader(url, BufReader::new(file), fmt, Some(url), &NoProgress)
        .map_err(|e| format!("{e:?}"))?;
    let store = loader.finish();
    let mut triples: Vec<Triple> = Vec::new();
    if let Some(g) = store.quads.graph(reasonctl::store::TermId::DEFAULT_GRAPH) {
        for &[s, p, o] in g.triples() {
            triples.push(Triple::new(
                store.dict.to_subject(s),
                NamedNode::new_unchecked(store.dict.iri_text(p)),
                store.dict.to_oxrdf(o).expect("term"),
            ));
        }
    }
    let rs_type = Term::NamedNode(NamedNode::new_unchecked(format!("{RS}ResultSet")));
    let Some(rs) = triples
        .iter()
        .find(|t| t.object == rs_type)
        .map(|t| Term::from(t.subject.clone()))
    else {
        return Ok(Results::Graph(triples));
    };
    let g = Graph(triples);
    if let Some(b) = g.objects(&rs, &format!("{RS}boolean")).first() {
        return Ok(Results::Boolean(
            matches!(b, Term::Literal(l) if l.value() == "true"),
        ));
    }
    let vars: Vec<String> = g
        .objects(&rs, &format!("{RS}resultVariable"))
        .into_iter()
        .map(|t| match t {
            Term::Literal(l) => l.value().to_owned(),
            other => other.to_string(),
        })
        .collect();
    let mut indexed: Vec<(i64, Vec<Option<Term>>)> = Vec::new();
    for sol in g.objects(&rs, &format!("{RS}solution")) {
        let mut row = vec![None; vars.len()];
        for b in g.objects(sol, &format!("{RS}binding")) {
            let name = match g.objects(b, &format!("{RS}variable")).first() {
                Some(Term::Literal(l)) => l.value().to_owned(),
                _ => continue,
            };
            let value = g
                .objects(b, &format!("{RS}value"))
                .first()
                .map(|t| (*t).clone());
            if let Some(k) = vars.iter().position(|v| *v == name) {
                row[k] = value;
            }
        }
        let index = match g.objects(sol, &format!("{RS}index")).first() {
            Some(Term::Literal(l)) => l.value().parse().unwrap_or(0),
            _ => 0,
        };
        indexed.push((index, row));
    }
    indexed.sort_by_key(|(i, _)| *i);
    Ok(Results::Solutions(
        vars,
        indexed.into_iter().map(|(_, r)| r).collect(),
    ))
}

/// Whether the query's answer order is significant (a top-level ORDER BY).
fn is_ordered(q: &spargebra::Query) -> bool {
    use spargebra::algebra::GraphPattern;
    let mut p = match q {
        spargebra::Query::Select { pattern, .. } => pattern,
        _ => return false,
    };
    loop {
        match p {
            GraphPattern::OrderBy { .. } => return true,
            GraphPattern::Slice { inner, .. }
            | GraphPattern::Distinct { inner }
            | GraphPattern::Reduced { inner }
            | GraphPattern::Project { inner, .. }
            | GraphPattern::Extend { inner, .. } => p = inner,
            _ => return false,
        }
    }
}

fn run_eval(case: &Case) -> Result<(), Failed> {
    let text = std::fs::read_to_string(local(&case.query)).map_err(|e| e.to_string())?;
    let parsed = query::parse(&text, &case.query, Some(&case.query))
        .map_err(|e| format!("{:?}", miette::Report::new(e)))?;
    let mut loader = Loader::new();
    // A query's FROM / FROM NAMED name the test's data files: load each into the graph it names.
    let dataset = match &parsed {
        spargebra::Query::Select { dataset, .. }
        | spargebra::Query::Construct { dataset, .. }
        | spargebra::Query::Describe { dataset, .. }
        | spargebra::Query::Ask { dataset, .. } => dataset.clone(),
    };
    if let Some(d) = dataset {
        for g in d.default.iter().chain(d.named.iter().flatten()) {
            let url = g.as_str();
            if !local(url).exists() {
                continue;
            }
            loader.set_target_graph(Some(url));
            let file = File::open(local(url)).map_err(|e| format!("{url}: {e}"))?;
            loader
                .load_reader(
                    url,
                    BufReader::new(file),
                    data_format(url),
                    Some(url),
                    &NoProgress,
                )
                .map_err(|e| format!("{e:?}"))?;
        }
        loader.set_target_graph(None);
    }
    for d in &case.data {
        let file = File::open(local(d)).map_err(|e| format!("{d}: {e}"))?;
        loader
            .load_reader(
                d,
                BufReader::new(file),
                data_format(d),
                Some(d),
                &NoProgress,
            )
            .map_err(|e| format!("{e:?}"))?;
    }
    for d in &case.graph_data {
        loader.set_target_graph(Some(d));
        let file = File::open(local(d)).map_err(|e| format!("{d}: {e}"))?;
        loader
            .load_reader(
                d,
                BufReader::new(file),
                data_format(d),
                Some(d),
                &NoProgress,
            )
            .map_err(|e| format!("{e:?}"))?;
    }
    loader.set_target_graph(None);
    let mut store = loader.finish();
    let overlay = Overlay::new();
    let prepared = {
        let view = View::new(&store.quads, &overlay);
        query::prepare(&parsed, &mut store.dict, view)
            .map_err(|e| format!("{:?}", miette::Report::new(e)))?
    };
    let view = View::new(&store.quads, &overlay);
    let options = RunOptions {
        now: Some(DateTime::from_unix(1_700_000_000, 0)),
        timeout: Some(std::time::Duration::from_secs(20)),
        ..RunOptions::default()
    };
    let outcome = query::execute(&prepared, &store.dict, view, &options)
        .map_err(|e| format!("{:?}", miette::Report::new(e)))?;
    let terms = &outcome.terms;
    let got = match &outcome.answer {
        Answer::Boolean(b) => Results::Boolean(*b),
        Answer::Solutions { vars, rows } => Results::Solutions(
            vars.clone(),
            rows.iter()
                .map(|r| {
                    r.iter()
                        .take(vars.len())
                        .map(|&id| {
                            (id != reasonctl::exec::ROW_UNBOUND)
                                .then(|| terms.to_oxrdf(id))
                                .flatten()
                        })
                        .collect()
                })
                .collect(),
        ),
        Answer::Triples(ts) => Results::Graph(
            ts.iter()
                .map(|&[s, p, o]| {
                    Triple::new(
                        terms.to_subject(s),
                        NamedNode::new_unchecked(terms.iri_text(p)),
                        terms.to_oxrdf(o).expect("term"),
                    )
                })
                .collect(),
        ),
    };
    let result = case.result.as_deref().ok_or("no mf:result")?;
    let want = read_results(result)?;
    compare(&want, &got, is_ordered(&parsed))
}

fn compare(want: &Results, got: &Results, ordered: bool) -> Result<(), Failed> {
    match (want, got) {
        (Results::Boolean(a), Results::Boolean(b)) if a == b => Ok(()),
        (Results::Solutions(wv, wr), Results::Solutions(gv, gr)) => {
            // Align columns by name (the expected file may list variables in another order).
            let mut names: Vec<&String> = wv.iter().chain(gv.iter()).collect();
            names.sort();
            names.dedup();
            let align = |vars: &[String], rows: &[Vec<Option<Term>>]| -> Vec<Vec<Option<Term>>> {
                rows.iter()
                    .map(|r| {
                        names
                            .iter()
                            .map(|n| vars.iter().position(|v| v == *n).and_then(|k| r[k].clone()))
                            .collect()
                    })
                    .collect()
            };
            let (w, g) = (align(wv, wr), align(gv, gr));
            if isomorphic_rows(&w, &g, ordered) {
                Ok(())
            } else {
                Err(format!(
                    "solutions differ\nexpected ({}):\n{}\ngot ({}):\n{}",
                    w.len(),
                    show(&names, &w),
                    g.len(),
                    show(&names, &g)
                )
                .into())
            }
        }
        (Results::Graph(w), Results::Graph(g)) => {
            let wd: oxrdf::Graph = w.iter().collect();
            let gd: oxrdf::Graph = g.iter().collect();
            let mut wc = wd.clone();
            let mut gc = gd.clone();
            wc.canonicalize(oxrdf::dataset::CanonicalizationAlgorithm::Unstable);
            gc.canonicalize(oxrdf::dataset::CanonicalizationAlgorithm::Unstable);
            if wc == gc {
                Ok(())
            } else {
                Err(format!("graphs differ\nexpected:\n{wd}\ngot:\n{gd}").into())
            }
        }
        _ => Err(format!("expected {want:?}\ngot {got:?}").into()),
    }
}

fn show(names: &[&String], rows: &[Vec<Option<Term>>]) -> String {
    let mut lines: Vec<String> = rows
        .iter()
        .map(|r| {
            names
                .iter()
                .zip(r)
                .map(|(n, v)| {
                    format!(
                        "?{n}={}",
                        v.as_ref().map_or("UNDEF".to_owned(), |t| t.to_string())
                    )
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    lines.truncate(40);
    lines.join("\n")
}

fn is_blank(t: &Option<Term>) -> bool {
    matches!(t, Some(Term::BlankNode(_)))
}

/// Rows equal up to a renaming of blank nodes (one renaming for the whole result).
fn isomorphic_rows(w: &[Vec<Option<Term>>], g: &[Vec<Option<Term>>], ordered: bool) -> bool {
    if w.len() != g.len() {
        return false;
    }
    if ordered {
        let mut map = HashMap::new();
        return w.iter().zip(g).all(|(a, b)| row_matches(a, b, &mut map));
    }
    let has_blank = |r: &Vec<Option<Term>>| {
        r.iter().any(is_blank) || r.iter().any(|t| matches!(t, Some(Term::Triple(_))))
    };
    let (mut wp, wb): (Vec<_>, Vec<_>) = w.iter().partition(|r| !has_blank(r));
    let (mut gp, gb): (Vec<_>, Vec<_>) = g.iter().partition(|r| !has_blank(r));
    let key = |r: &&Vec<Option<Term>>| format!("{r:?}");
    wp.sort_by_key(key);
    gp.sort_by_key(key);
    if wp != gp || wb.len() != gb.len() {
        return false;
    }
    let mut used = vec![false; gb.len()];
    let mut map = HashMap::new();
    backtrack(&wb, &gb, 0, &mut used, &mut map)
}

fn backtrack(
    w: &[&Vec<Option<Term>>],
    g: &[&Vec<Option<Term>>],
    i: usize,
    used: &mut [bool],
    map: &mut HashMap<String, String>,
) -> bool {
    if i == w.len() {
        return true;
    }
    for j in 0..g.len() {
        if used[j] {
            continue;
        }
        let mut attempt = map.clone();
        if row_matches(w[i], g[j], &mut attempt) {
            used[j] = true;
            if backtrack(w, g, i + 1, used, &mut attempt) {
                *map = attempt;
                return true;
            }
            used[j] = false;
        }
    }
    false
}

fn row_matches(a: &[Option<Term>], b: &[Option<Term>], map: &mut HashMap<String, String>) -> bool {
    a.iter().zip(b).all(|(x, y)| match (x, y) {
        (None, None) => true,
        (Some(x), Some(y)) => term_matches(x, y, map),
        _ => false,
    })
}

fn term_matches(x: &Term, y: &Term, map: &mut HashMap<String, String>) -> bool {
    match (x, y) {
        (Term::BlankNode(a), Term::BlankNode(b)) => {
            let (a, b) = (a.as_str().to_owned(), b.as_str().to_owned());
            if let Some(m) = map.get(&a) {
                return *m == b;
            }
            if map.values().any(|v| *v == b) {
                return false;
            }
            map.insert(a, b);
            true
        }
        (Term::Triple(a), Term::Triple(b)) => {
            term_matches(&a.subject.clone().into(), &b.subject.clone().into(), map)
                && a.predicate == b.predicate
                && term_matches(&a.object, &b.object, map)
        }
        _ => x == y,
    }
}

fn run_syntax(case: &Case) -> Result<(), Failed> {
    let text = std::fs::read_to_string(local(&case.query)).map_err(|e| e.to_string())?;
    // The front end is the parser and the lowering: a query either must pass both.
    let parsed = query::parse(&text, &case.query, Some(&case.query)).and_then(|q| {
        let mut dict = reasonctl::store::Dictionary::new();
        match reasonctl::ir::lower::lower_query(&q, &mut dict) {
            Err(e) if e.is_syntax() => Err(query::QueryError::from(e)),
            _ => Ok(q),
        }
    });
    match (&case.kind, parsed) {
        (Kind::PositiveSyntax, Ok(_)) | (Kind::NegativeSyntax, Err(_)) => Ok(()),
        (Kind::PositiveSyntax, Err(e)) => {
            Err(format!("rejected: {:?}", miette::Report::new(e)).into())
        }
        (_, Ok(_)) => Err("accepted, but the test expects a syntax error".into()),
        (Kind::Eval, Err(e)) => Err(format!("{e}").into()),
    }
}

/// The recorded failures: `name<TAB>reason` lines.
fn expected_failures() -> BTreeMap<String, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/w3c_sparql_expected_failures.txt");
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (n, r) = l.split_once('\t').unwrap_or((l, ""));
            (n.trim().to_owned(), r.trim().to_owned())
        })
        .collect()
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
    let expected = expected_failures();
    let evals = cases.iter().filter(|c| c.kind == Kind::Eval).count();
    let passed_evals = std::sync::Arc::new(Mutex::new(0usize));
    let trials: Vec<Trial> = cases
        .into_iter()
        .map(|case| {
            let known = expected.get(&case.name).cloned();
            let counter = std::sync::Arc::clone(&passed_evals);
            Trial::test(case.name.clone(), move || {
                let outcome = std::panic::catch_unwind(|| match case.kind {
                    Kind::Eval => run_eval(&case),
                    _ => run_syntax(&case),
                })
                .unwrap_or_else(|p| {
                    let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
                    Err(format!("panicked: {msg}").into())
                });
                if outcome.is_ok() && case.kind == Kind::Eval {
                    *counter.lock().expect("counter") += 1;
                }
                match (outcome, known) {
                    (Ok(()), None) => Ok(()),
                    (Err(_), Some(_)) => Ok(()),
                    (Ok(()), Some(reason)) => Err(format!("passes now: remove it from tests/w3c_sparql_expected_failures.txt ({reason})").into()),
                    (Err(e), None) => Err(e),
                }
            })
        })
        .collect();
    let conclusion = libtest_mimic::run(&args, trials);
    let passed = *passed_evals.lock().expect("counter");
    println!(
        "W3C SPARQL query evaluation: {passed} of {evals} pass ({:.1}%); {} recorded failures",
        100.0 * passed as f64 / evals.max(1) as f64,
        expected.len()
    );
    conclusion.exit();
}
