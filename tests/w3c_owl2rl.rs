//! The W3C OWL 2 test cases of the RL profile under the RDF-Based Semantics (`fixtures/w3c/owl2rl/`), run
//! through `--owl2rl`'s closure: a consistency test must close without a clash, an inconsistency test must
//! fail with one, a positive entailment test's conclusion must hold in the closure (its blank nodes read as
//! variables), a negative entailment test's non-conclusion must not.
//!
//! The OWL 2 RL/RDF rules are complete only for ground assertions (OWL 2 Profiles, theorem PR1), so some
//! entailments are out of their reach; `tests/w3c_owl2rl_expected_failures.txt` records them, each with its
//! reason. A test in it that passes, or a failure not in it, fails this harness; the pass count is printed.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use libtest_mimic::{Arguments, Failed, Trial};
use oxrdf::{NamedOrBlankNode, Term};
use oxttl::NTriplesParser;
use reasonctl::datalog::owl2rl::{self, Owl2RlError};
use reasonctl::datalog::{NoProgress as NoRunProgress, Options};
use reasonctl::exec::datetime::DateTime;
use reasonctl::query::{self, Answer, RunOptions};
use reasonctl::store::load::{DataFormat, Loader, NoProgress};
use reasonctl::store::well_known::XSD_DATE_TIME;
use reasonctl::store::{Overlay, Store, View};

fn suite() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/w3c/owl2rl")
}

#[derive(Clone, Debug)]
struct Case {
    id: String,
    types: Vec<String>,
    premise: Option<PathBuf>,
    conclusion: Option<PathBuf>,
    nonconclusion: Option<PathBuf>,
}

fn cases() -> Vec<Case> {
    let manifest: serde_json::Value = serde_json::from_reader(BufReader::new(
        File::open(suite().join("manifest.json")).expect("manifest"),
    ))
    .expect("manifest JSON");
    let file = |t: &serde_json::Value, key: &str| t["files"][key].as_str().map(|f| suite().join(f));
    manifest
        .as_array()
        .expect("a list of tests")
        .iter()
        .map(|t| Case {
            id: t["id"].as_str().expect("id").to_owned(),
            types: t["types"]
                .as_array()
                .expect("types")
                .iter()
                .map(|x| x.as_str().expect("type").to_owned())
                .collect(),
            premise: file(t, "premise"),
            conclusion: file(t, "conclusion"),
            nonconclusion: file(t, "nonconclusion"),
        })
        .collect()
}

fn load(path: &Path) -> Store {
    let mut loader = Loader::new();
    loader
        .load_reader(
            &path.display().to_string(),
            BufReader::new(File::open(path).expect("premise")),
            DataFormat::NTriples,
            None,
            &NoProgress,
        )
        .expect("premise loads");
    loader.finish()
}

fn options() -> Options {
    Options::new(DateTime::parse("2026-01-01T00:00:00Z", XSD_DATE_TIME).expect("time"))
}

/// An ASK query for the graph in `path`, its blank nodes as variables.
fn ask(path: &Path) -> String {
    let mut blanks: HashMap<String, usize> = HashMap::new();
    let mut var = |label: &str| {
        let n = blanks.len();
        format!("?b{}", *blanks.entry(label.to_owned()).or_insert(n))
    };
    let mut body = String::new();
    for triple in NTriplesParser::new().for_reader(File::open(path).expect("conclusion")) {
        let t = triple.expect("conclusion parses");
        let s = match &t.subject {
            NamedOrBlankNode::BlankNode(b) => var(b.as_str()),
            other => other.to_string(),
        };
        let o = match &t.object {
            Term::BlankNode(b) => var(b.as_str()),
            other => other.to_string(),
        };
        body.push_str(&format!("{s} {} {o} .\n", t.predicate));
    }
    format!("ASK {{\n{body}}}")
}

fn holds(store: &mut Store, overlay: &Overlay, path: &Path) -> Result<bool, Failed> {
    ask_text(store, overlay, &ask(path))
}

fn ask_text(store: &mut Store, overlay: &Overlay, text: &str) -> Result<bool, Failed> {
    let parsed = query::parse(text, "conclusion", None).map_err(|e| format!("{e}\n{text}"))?;
    let prepared = query::prepare(&parsed, &mut store.dict, View::new(&store.quads, overlay))
        .map_err(|e| e.to_string())?;
    let outcome = query::execute(
        &prepared,
        &store.dict,
        View::new(&store.quads, overlay),
        &RunOptions::default(),
    )
    .map_err(|e| e.to_string())?;
    match outcome.answer {
        Answer::Boolean(b) => Ok(b),
        _ => Err("not an ASK answer".into()),
    }
}

fn run(case: &Case) -> Result<(), Failed> {
    let premise = case.premise.as_ref().expect("a premise");
    let mut store = load(premise);
    let closure = owl2rl::materialize(&mut store, &options(), &NoRunProgress);
    let is = |t: &str| case.types.iter().any(|x| x == t);
    if is("InconsistencyTest") {
        return match closure {
            Err(Owl2RlError::Inconsistent(_)) => Ok(()),
            Err(e) => Err(e.to_string().into()),
            Ok(_) => Err("no clash found in inconsistent data".into()),
        };
    }
    let closure = closure.map_err(|e| format!("consistent data: {e}"))?;
    if let Some(path) = &case.conclusion {
        if !holds(&mut store, &closure.overlay, path)? {
            let text = ask(path);
            // The triples that do not hold even on their own, to say what is missing.
            let mut missing = Vec::new();
            for line in text.lines().filter(|l| l.ends_with(" .")) {
                let one = format!("ASK {{ {line} }}");
                if !ask_text(&mut store, &closure.overlay, &one)? {
                    missing.push(line);
                }
            }
            return Err(format!(
                "the conclusion is not entailed; on their own these do not hold:\n{}",
                missing.join("\n")
            )
            .into());
        }
    }
    if let Some(path) = &case.nonconclusion {
        if holds(&mut store, &closure.overlay, path)? {
            return Err(format!("the non-conclusion is entailed:\n{}", ask(path)).into());
        }
    }
    Ok(())
}

fn expected_failures() -> BTreeMap<String, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/w3c_owl2rl_expected_failures.txt");
    std::fs::read_to_string(path)
        .expect("expected failures")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (id, reason) = l.split_once('\t').expect("id <TAB> reason");
            (id.to_owned(), reason.to_owned())
        })
        .collect()
}

fn main() {
    let args = Arguments::from_args();
    let expected = expected_failures();
    let all = cases();
    let runnable: Vec<Case> = all
        .iter()
        .filter(|c| c.premise.is_some())
        .cloned()
        .collect();
    let total = runnable.len();
    let passed = Arc::new(Mutex::new(0usize));
    let mut trials: Vec<Trial> = runnable
        .into_iter()
        .map(|case| {
            let known = expected.get(&case.id).cloned();
            let passed = Arc::clone(&passed);
            Trial::test(case.id.clone(), move || {
                let outcome = run(&case);
                if outcome.is_ok() {
                    *passed.lock().expect("counter") += 1;
                }
                match (outcome, known) {
                    (Ok(()), None) => Ok(()),
                    // A recorded test may only fail the way it is recorded to: its conclusion not entailed.
                    (Err(e), Some(_)) if format!("{e:?}").contains("the conclusion is not entailed") => Ok(()),
                    (Err(e), Some(reason)) => {
                        Err(format!("fails otherwise than recorded ({reason}): {e:?}").into())
                    }
                    (Ok(()), Some(reason)) => Err(format!(
                        "passes now: remove it from tests/w3c_owl2rl_expected_failures.txt ({reason})"
                    )
                    .into()),
                    (Err(e), None) => Err(e),
                }
            })
        })
        .collect();
    // Tests with no RDF premise here (functional-syntax only, or no premise at all) are listed as ignored.
    trials.extend(
        all.iter()
            .filter(|c| c.premise.is_none())
            .map(|c| Trial::test(c.id.clone(), || Ok(())).with_ignored_flag(true)),
    );
    let conclusion = libtest_mimic::run(&args, trials);
    let passed = *passed.lock().expect("counter");
    println!(
        "W3C OWL 2 RL (RDF-Based): {passed} of {total} pass; {} recorded failures",
        expected.len()
    );
    conclusion.exit();
}
