//! This module defines the OWL 2 RL/RDF program (`--owl2rl`): the specification's rules as CONSTRUCT rules the
//! datalog engine runs like any other (`owl2rl/rules.rq`), the rules that read a whole list generated for each
//! list length the data holds, and the consistency checks (`owl2rl/checks.rq`) run over the closure.
//!
//! The rules read and write the default graph. Their ids are the specification's names prefixed `owl2rl:`
//! (`owl2rl:cax-sco`; a generated rule adds its list length: `owl2rl:cls-int1/3`).

use std::collections::HashSet;
use std::path::Path;

use miette::Diagnostic;
use thiserror::Error;

use super::{
    FixpointProgress, Options, Program, Report, RunError, materialize_over, refuse_whole_program,
    run,
};
use crate::exec::datetime::DateTime;
use crate::query::{self, Answer, QueryError, RunOptions};
use crate::rules::model::{Language, Origin};
use crate::rules::source::{RuleText, split_file};
use crate::store::{Overlay, Store, TermId, TermRef, TermSource, View};

/// The fixed rules, as a multi-rule SPARQL file.
pub const RULES: &str = include_str!("owl2rl/rules.rq");

/// The consistency checks.
const CHECKS: &str = include_str!("owl2rl/checks.rq");

/// What the rules' origin names as their file.
pub const SOURCE: &str = "<owl2rl>";

/// The prefix of every OWL 2 RL rule id.
pub const ID_PREFIX: &str = "owl2rl:";

const PROLOGUE: &str = "PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>\n\
PREFIX owl: <http://www.w3.org/2002/07/owl#>\n";

const OWL: &str = "http://www.w3.org/2002/07/owl#";

/// Lists longer than this are not read as lists (a generated rule joins one pattern per member).
const MAX_LIST: usize = 64;

/// Why the OWL 2 RL closure gives no answer.
#[derive(Debug, Error, Diagnostic)]
pub enum Owl2RlError {
    /// The data is inconsistent.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Inconsistent(#[from] Inconsistent),
    /// One of the built-in rules or checks does not compile or run: a bug in reasonctl, never a data problem.
    #[error("the built-in OWL 2 RL {what} does not run: {message}")]
    #[diagnostic(
        code(reasonctl::owl2rl::internal),
        help("this is a bug in reasonctl; please report it with the data that shows it")
    )]
    Internal {
        /// The rule or check.
        what: String,
        /// Why.
        message: String,
    },
    /// The consistency checks did not finish within `--timeout`.
    #[error(
        "the OWL 2 RL consistency check {check} did not finish within the --timeout, so the data is not known to be consistent; nothing was written"
    )]
    #[diagnostic(
        code(reasonctl::owl2rl::check_timeout),
        help("raise --timeout so the closure and its consistency checks finish")
    )]
    CheckTimeout {
        /// The check that was running.
        check: String,
    },
    /// The closure ran out of time, so the consistency checks could not run.
    #[error(
        "the OWL 2 RL closure did not finish within the --timeout ({} facts derived when it stopped), so the consistency checks did not run and the data is not known to be consistent; nothing was written",
        .report.derived
    )]
    #[diagnostic(
        code(reasonctl::owl2rl::closure_timeout),
        help("raise --timeout so the closure and its consistency checks finish")
    )]
    ClosureTimeout {
        /// The closure's run, capped by time (its facts derived, and for `--stats`).
        report: Box<Report>,
    },
}

/// The OWL 2 RL closure of the default graph: its program (for `explain`), its facts and its run report.
pub struct Closure {
    /// The rules that ran.
    pub program: Program,
    /// The facts they derived.
    pub overlay: Overlay,
    /// The run.
    pub report: Report,
    /// Lists the list rules do not read ([`unread_lists`]).
    pub unread_lists: Vec<String>,
}

/// Runs the OWL 2 RL rules over `store` (within `options`' budget), then the consistency checks over the
/// closure. A capped closure is checked too: its facts are sound, so a clash among them is a clash.
pub fn materialize(
    store: &mut Store,
    options: &Options,
    progress: &dyn FixpointProgress,
) -> Result<Closure, Owl2RlError> {
    let texts = rule_texts(store);
    let (rules, errors) = crate::rules::compile_all(&texts, &mut store.dict);
    if let Some(e) = errors.first() {
        return Err(Owl2RlError::Internal {
            what: "rules".to_owned(),
            message: e.to_string(),
        });
    }
    let program = Program::new(rules);
    let started = std::time::Instant::now();
    let (overlay, mut report) = run(&program, store, options, progress);
    // A row that cannot make a head is one with a literal subject (prp-rng over a literal value, generalized
    // RDF): expected, not a problem of the data.
    report.warnings.clear();
    let left = options
        .budget
        .timeout
        .map(|t| t.saturating_sub(started.elapsed()));
    check_closure(store, &overlay, &report, options.now, left)?;
    // The checks' time is the closure's: what follows gets what is left.
    report.elapsed = started.elapsed();
    Ok(Closure {
        program,
        overlay,
        report,
        unread_lists: unread_lists(store),
    })
}

/// What `--owl2rl` followed by the rules gives: the OWL rules and then the rules as one program (for `explain`),
/// every derived fact, the combined report, and the lists the list rules did not read.
pub struct WithRules {
    /// OWL 2 RL rules first, then the rules.
    pub program: Program,
    /// OWL's facts and the rules'.
    pub overlay: Overlay,
    /// Both runs, one after the other.
    pub report: Report,
    /// See [`unread_lists`].
    pub unread_lists: Vec<String>,
}

/// `--owl2rl`: the OWL 2 RL closure first; it is `program`'s input, and what it spent comes off its budget. A
/// capped closure leaves the rules pending, and fails the run if they negate or aggregate (their input is
/// incomplete); `--schedule whole-program` is refused before the closure runs.
pub fn then_rules(
    program: Program,
    store: &mut Store,
    options: &Options,
    progress: &dyn FixpointProgress,
) -> Result<WithRules, RunError> {
    refuse_whole_program(&program, options)?;
    let closure = materialize(store, options, progress)?;
    let (overlay, report) = match closure.report.capped {
        Some(reason) => {
            let nonmonotone = program.nonmonotone_rules();
            if !nonmonotone.is_empty() {
                return Err(RunError::ResourceLimit {
                    reason: reason.name(),
                    rules: nonmonotone.join(", "),
                    report: Box::new(closure.report.then(Report::default(), &program)),
                });
            }
            (closure.overlay, Report::default())
        }
        None => {
            let rest = Options {
                budget: options
                    .budget
                    .after(closure.report.derived, closure.report.elapsed),
                ..options.clone()
            };
            match materialize_over(&program, store, &rest, progress, closure.overlay) {
                Ok(done) => done,
                Err(mut e) => {
                    if let RunError::ResourceLimit { report, .. } = &mut e {
                        let rules = std::mem::take(&mut **report);
                        **report = closure.report.then(rules, &program);
                    }
                    return Err(e);
                }
            }
        }
    };
    let report = closure.report.then(report, &program);
    let mut rules = closure.program.rules;
    rules.extend(program.rules);
    Ok(WithRules {
        program: Program::new(rules),
        overlay,
        report,
        unread_lists: closure.unread_lists,
    })
}

/// The data is inconsistent under the OWL 2 RL rules.
#[derive(Debug, Error, Diagnostic)]
#[error("the data is inconsistent under OWL 2 RL ({count} {noun}):\n{shown}")]
#[diagnostic(
    code(reasonctl::owl2rl::inconsistent),
    help(
        "an inconsistent ontology entails everything, so nothing was written; remove or correct the facts or axioms named above (the rule before each clash is the OWL 2 RL rule that found it)"
    )
)]
pub struct Inconsistent {
    count: usize,
    noun: &'static str,
    shown: String,
    /// Every clash: the check's rule name and its message.
    pub clashes: Vec<(String, String)>,
}

impl Inconsistent {
    fn new(clashes: Vec<(String, String)>) -> Self {
        const SHOWN: usize = 20;
        let mut shown: Vec<String> = clashes
            .iter()
            .take(SHOWN)
            .map(|(rule, message)| format!("  {rule}: {message}"))
            .collect();
        if clashes.len() > SHOWN {
            shown.push(format!("  … and {} more", clashes.len() - SHOWN));
        }
        Self {
            count: clashes.len(),
            noun: if clashes.len() == 1 {
                "clash"
            } else {
                "clashes"
            },
            shown: shown.join("\n"),
            clashes,
        }
    }
}

/// The OWL 2 RL rule texts for `store`'s data: the fixed rules, then the list rules for the list lengths the
/// default graph holds.
pub fn rule_texts(store: &Store) -> Vec<RuleText> {
    let mut texts = split_file(Path::new(SOURCE), RULES);
    let generated = |id: String, text: String| RuleText {
        id,
        origin: Origin::File {
            path: SOURCE.into(),
            offset: 0,
            prologue: 0,
        },
        language: Language::Sparql,
        text: format!("{PROLOGUE}{text}"),
    };
    for n in list_lengths(store, "intersectionOf") {
        // cls-int1: T(?y, rdf:type, ?c) :- T(?c, owl:intersectionOf, [?c1 … ?cn]), T(?y, rdf:type, ?ci) for all i.
        let members: String = (1..=n).map(|i| format!(" ?y a ?c{i} .")).collect();
        texts.push(generated(
            format!("{ID_PREFIX}cls-int1/{n}"),
            format!(
                "CONSTRUCT {{ ?y a ?c }} WHERE {{ ?c owl:intersectionOf ?l1 .{}{members} }}\n",
                list("c", n)
            ),
        ));
    }
    for n in list_lengths(store, "propertyChainAxiom") {
        // prp-spo2: T(?u1, ?p, ?un+1) :- T(?p, owl:propertyChainAxiom, [?p1 … ?pn]), T(?ui, ?pi, ?ui+1) for all i.
        let hops: String = (1..=n)
            .map(|i| format!(" ?u{i} ?p{i} ?u{} .", i + 1))
            .collect();
        texts.push(generated(
            format!("{ID_PREFIX}prp-spo2/{n}"),
            format!(
                "CONSTRUCT {{ ?u1 ?p ?u{} }} WHERE {{ ?p owl:propertyChainAxiom ?l1 .{}{hops} }}\n",
                n + 1,
                list("p", n)
            ),
        ));
    }
    for n in list_lengths(store, "hasKey") {
        // prp-key: T(?x, owl:sameAs, ?y) :- T(?c, owl:hasKey, [?p1 … ?pn]), T(?x, rdf:type, ?c),
        //          T(?x, ?pi, ?zi), T(?y, rdf:type, ?c), T(?y, ?pi, ?zi) for all i.
        // The keys after the first as EXISTS, each value its own: joined, the keys' values multiply (k^n rows
        // for k values a key property has), where a check per key reads each key's values once.
        let values: String = (1..=n)
            .map(|i| match i {
                1 => " ?x ?p1 ?z1 . ?y ?p1 ?z1 .".to_owned(),
                i => format!(" FILTER EXISTS {{ ?x ?p{i} ?z{i} . ?y ?p{i} ?z{i} }}"),
            })
            .collect();
        texts.push(generated(
            format!("{ID_PREFIX}prp-key/{n}"),
            format!(
                "CONSTRUCT {{ ?x owl:sameAs ?y }} WHERE {{ ?c owl:hasKey ?l1 .{} ?x a ?c . ?y a ?c .{values} FILTER (!sameTerm(?x, ?y)) }}\n",
                list("p", n)
            ),
        ));
    }
    texts
}

/// The patterns of a list `?l1` of `n` members `?{var}1 … ?{var}n`.
fn list(var: &str, n: usize) -> String {
    (1..=n)
        .map(|i| {
            let rest = if i == n {
                "rdf:nil".to_owned()
            } else {
                format!("?l{}", i + 1)
            };
            format!(" ?l{i} rdf:first ?{var}{i} ; rdf:rest {rest} .")
        })
        .collect()
}

/// The lengths of the well-formed lists that are objects of `owl:{predicate}` in the default graph, ascending.
fn list_lengths(store: &Store, predicate: &str) -> Vec<usize> {
    let (mut lengths, _) = lists(store, predicate);
    lengths.sort_unstable();
    lengths.dedup();
    lengths
}

/// The lists that are objects of `owl:{predicate}` in the default graph: the lengths of the well-formed ones
/// (with repeats), and the subjects of those longer than [`MAX_LIST`] (or cyclic).
fn lists(store: &Store, predicate: &str) -> (Vec<usize>, Vec<TermId>) {
    const RDF: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#";
    let iri = |name: &str| store.dict.lookup_iri(name);
    let (Some(p), Some(first), Some(rest), Some(nil), Some(index)) = (
        iri(&format!("{OWL}{predicate}")),
        iri(&format!("{RDF}first")),
        iri(&format!("{RDF}rest")),
        iri(&format!("{RDF}nil")),
        store.quads.graph(TermId::DEFAULT_GRAPH),
    ) else {
        return (Vec::new(), Vec::new());
    };
    // The one object of (s, p), if there is exactly one.
    let one = |s: TermId, p: TermId| -> Option<TermId> {
        let m = index.range(&[Some(s), Some(p), None]);
        (m.len() == 1).then(|| m.get(0)[2])
    };
    let keys = index.range(&[None, Some(p), None]);
    let mut lengths = Vec::new();
    let mut long = Vec::new();
    for [subject, _, mut node] in keys.iter() {
        let mut n = 0;
        let mut well_formed = true;
        while node != nil && n <= MAX_LIST {
            match (one(node, first), one(node, rest)) {
                (Some(_), Some(next)) => node = next,
                _ => {
                    well_formed = false;
                    break;
                }
            }
            n += 1;
        }
        match (well_formed, n) {
            (false, _) | (true, 0) => {}
            (true, n) if n > MAX_LIST => long.push(subject),
            (true, n) => lengths.push(n),
        }
    }
    (lengths, long)
}

/// What the list rules do not read: one line per list longer than `MAX_LIST` members (or cyclic).
pub fn unread_lists(store: &Store) -> Vec<String> {
    let rules = [
        ("intersectionOf", "cls-int1"),
        ("propertyChainAxiom", "prp-spo2"),
        ("hasKey", "prp-key"),
    ];
    let mut out = Vec::new();
    for (predicate, rule) in rules {
        for subject in lists(store, predicate).1 {
            let shown = match store.dict.term(subject) {
                TermRef::Blank(_) => "a blank node".to_owned(),
                _ => store.dict.display(subject),
            };
            out.push(format!(
                "the owl:{predicate} list of {shown} has more than {MAX_LIST} members (or is cyclic); {ID_PREFIX}{rule} does not read it"
            ));
        }
    }
    out
}

/// Runs the consistency checks over asserted ⊕ the closure's facts `derived` (its run: `report`), within
/// `timeout`. A closure that ran out of time is not checked: the budget is spent, and the error names the
/// closure, not a check it never reached.
pub fn check_closure(
    store: &mut Store,
    derived: &Overlay,
    report: &Report,
    now: DateTime,
    timeout: Option<std::time::Duration>,
) -> Result<(), Owl2RlError> {
    if report.capped == Some(super::CapReason::Time) {
        return Err(Owl2RlError::ClosureTimeout {
            report: Box::new(report.clone()),
        });
    }
    check(store, derived, now, timeout)
}

/// Runs the consistency checks over asserted ⊕ `derived` facts, within `timeout`: every clash found, as (rule,
/// message).
fn check(
    store: &mut Store,
    derived: &Overlay,
    now: DateTime,
    timeout: Option<std::time::Duration>,
) -> Result<(), Owl2RlError> {
    let started = std::time::Instant::now();
    let mut clashes = Vec::new();
    for check in checks() {
        let what = format!("check {}", check.rule);
        let internal = |e: QueryError| Owl2RlError::Internal {
            what: what.clone(),
            message: e.to_string(),
        };
        let parsed = query::parse(&check.text, SOURCE, None).map_err(internal)?;
        let view = View::new(&store.quads, derived);
        let prepared = query::prepare(&parsed, &mut store.dict, view).map_err(internal)?;
        let view = View::new(&store.quads, derived);
        let timed_out = || Owl2RlError::CheckTimeout {
            check: check.rule.clone(),
        };
        let left = match timeout.map(|t| t.checked_sub(started.elapsed())) {
            Some(None) => return Err(timed_out()),
            Some(Some(left)) => Some(left),
            None => None,
        };
        let options = RunOptions {
            now: Some(now),
            timeout: left,
            ..RunOptions::default()
        };
        let outcome = match query::execute(&prepared, &store.dict, view, &options) {
            Ok(o) => o,
            Err(QueryError::Exec(
                crate::exec::ExecError::Timeout(_) | crate::exec::ExecError::Cancelled,
            )) => return Err(timed_out()),
            Err(e) => return Err(internal(e)),
        };
        let Answer::Solutions { vars, rows } = outcome.answer else {
            return Err(Owl2RlError::Internal {
                what,
                message: "it is not a SELECT query".to_owned(),
            });
        };
        let column = |name: &str| vars.iter().position(|v| v == name);
        let either = check
            .either
            .as_ref()
            .and_then(|(a, b)| Some((column(a)?, column(b)?)));
        let shown = |id: TermId| match outcome.terms.term(id) {
            TermRef::Blank(_) => "a blank node".to_owned(),
            _ => outcome.terms.display(id),
        };
        let mut seen: HashSet<Vec<TermId>> = HashSet::new();
        let mut texts: Vec<String> = Vec::new();
        for row in rows.iter() {
            let mut row = row.to_vec();
            // One clash found both ways round is reported once, the way round its terms' text orders it (ids
            // depend on the order terms were met: a maintained state's are not a fresh run's).
            if let Some((a, b)) = either {
                if shown(row[a]) > shown(row[b]) {
                    row.swap(a, b);
                }
                let mut key = row.clone();
                if key[a] > key[b] {
                    key.swap(a, b);
                }
                if !seen.insert(key) {
                    continue;
                }
            }
            let mut text = check.message.clone();
            for (var, &id) in vars.iter().zip(&row) {
                text = text.replace(&format!("{{{var}}}"), &shown(id));
            }
            texts.push(text);
        }
        // In the order of their text, not of term ids: the same data gives the same message, however it was
        // reached (a run from scratch, or a maintained state).
        texts.sort();
        let rule = format!("{ID_PREFIX}{}", check.rule);
        clashes.extend(texts.into_iter().map(|t| (rule.clone(), t)));
    }
    for mut more in [ill_typed(store, derived), out_of_range(store, derived)] {
        more.sort();
        clashes.extend(more);
    }
    if clashes.is_empty() {
        Ok(())
    } else {
        Err(Inconsistent::new(clashes).into())
    }
}

/// dt-not-type for the numeric and boolean datatypes: every literal of the dictionary whose lexical form is not
/// in its datatype's lexical space (XML Schema; the ranges of the bounded integer types are not checked) and that
/// is the object of a default-graph fact, with one such fact. Each distinct literal is checked once, by its
/// lexical form alone: a valid integer beyond 64 bits is well typed.
fn ill_typed(store: &Store, derived: &Overlay) -> Vec<(String, String)> {
    use std::sync::LazyLock;
    static INTEGER: LazyLock<regex::Regex> =
        LazyLock::new(|| regex::Regex::new(r"^\s*[+-]?[0-9]+\s*$").expect("valid regex"));
    static DECIMAL: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(r"^\s*[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)\s*$").expect("valid regex")
    });
    static FLOAT: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(
            r"^\s*([+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?|[+-]?INF|NaN)\s*$",
        )
        .expect("valid regex")
    });
    static BOOLEAN: LazyLock<regex::Regex> =
        LazyLock::new(|| regex::Regex::new(r"^\s*(true|false|1|0)\s*$").expect("valid regex"));
    let view = View::new(&store.quads, derived);
    let dict = &store.dict;
    let mut lexical_space: hashbrown::HashMap<TermId, Option<&regex::Regex>> =
        hashbrown::HashMap::new();
    let mut out = Vec::new();
    for id in (0..dict.end().0).map(TermId) {
        let TermRef::Literal {
            lexical,
            kind: crate::store::LiteralKind::Typed(dt),
        } = dict.term(id)
        else {
            continue;
        };
        let space = *lexical_space
            .entry(dt)
            .or_insert_with(|| match dict.term(dt) {
                TermRef::Iri(iri) => {
                    let text = iri.to_string();
                    match text.strip_prefix("http://www.w3.org/2001/XMLSchema#") {
                        _ if crate::exec::value::is_integer_type(&text) => Some(&*INTEGER),
                        Some("decimal") => Some(&*DECIMAL),
                        Some("float" | "double") => Some(&*FLOAT),
                        Some("boolean") => Some(&*BOOLEAN),
                        _ => None,
                    }
                }
                _ => None,
            });
        if space.is_none_or(|re| re.is_match(lexical)) {
            continue;
        }
        if let Some([s, p, _]) = view
            .scan(TermId::DEFAULT_GRAPH, &[None, None, Some(id)])
            .next()
        {
            let shown = |t: TermId| match dict.term(t) {
                TermRef::Blank(_) => "a blank node".to_owned(),
                _ => dict.display(t),
            };
            out.push((
                format!("{ID_PREFIX}dt-not-type"),
                format!(
                    "{} (object of {} {}) is not a value of its datatype",
                    shown(id),
                    shown(s),
                    shown(p)
                ),
            ));
        }
    }
    out
}

/// The value-space family of a datatype, for the datatypes OWL 2 RL supports (`None`: another datatype, which
/// is never judged). Families are disjoint value spaces; the integer types are the decimal family.
fn family(dict: &crate::store::Dictionary, dt: TermId) -> Option<&'static str> {
    let TermRef::Iri(iri) = dict.term(dt) else {
        return None;
    };
    let text = iri.to_string();
    if crate::exec::value::is_integer_type(&text) {
        return Some("decimal");
    }
    if let Some(local) = text.strip_prefix("http://www.w3.org/2001/XMLSchema#") {
        return match local {
            "decimal" => Some("decimal"),
            "float" => Some("float"),
            "double" => Some("double"),
            "boolean" => Some("boolean"),
            "dateTime" | "dateTimeStamp" => Some("dateTime"),
            "string" | "normalizedString" | "token" | "language" | "Name" | "NCName"
            | "NMTOKEN" => Some("string"),
            "hexBinary" => Some("hexBinary"),
            "base64Binary" => Some("base64Binary"),
            "anyURI" => Some("anyURI"),
            _ => None,
        };
    }
    match text.as_str() {
        "http://www.w3.org/1999/02/22-rdf-syntax-ns#PlainLiteral"
        | "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString" => Some("string"),
        _ => None,
    }
}

/// The clash of prp-rng with dt-not-type, which the rules cannot reach (its middle step, `lt rdf:type dt`, has a
/// literal subject): a literal object of a property whose `rdfs:range` is a supported datatype, in another
/// value space (a string where a number is due), or a fraction where an integer is due. Only what is certain is a
/// clash: datatypes of unknown value space, and ranges within one family (bounds of `xsd:byte` …), are not judged.
fn out_of_range(store: &Store, derived: &Overlay) -> Vec<(String, String)> {
    static INTEGRAL: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^\s*[+-]?([0-9]+(\.0*)?|\.0+)\s*$").expect("valid regex")
    });
    static DECIMAL: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^\s*[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)\s*$").expect("valid regex")
    });
    let dict = &store.dict;
    let Some(range) = dict.lookup_iri("http://www.w3.org/2000/01/rdf-schema#range") else {
        return Vec::new();
    };
    let view = View::new(&store.quads, derived);
    let g = TermId::DEFAULT_GRAPH;
    let shown = |t: TermId| match dict.term(t) {
        TermRef::Blank(_) => "a blank node".to_owned(),
        _ => dict.display(t),
    };
    let mut out = Vec::new();
    // A literal's family by its datatype, worked out once per datatype (not per fact).
    let mut families: hashbrown::HashMap<TermId, Option<&'static str>> = hashbrown::HashMap::new();
    for [p, _, dt] in view.scan(g, &[None, Some(range), None]) {
        let Some(due) = family(dict, dt) else {
            continue;
        };
        let integral = matches!(dict.term(dt), TermRef::Iri(iri) if crate::exec::value::is_integer_type(&iri.to_string()));
        for [x, _, lt] in view.scan(g, &[None, Some(p), None]) {
            let TermRef::Literal { lexical, kind } = dict.term(lt) else {
                continue;
            };
            let (has, own_decimal) = match kind {
                crate::store::LiteralKind::Simple | crate::store::LiteralKind::Lang { .. } => {
                    (Some("string"), false)
                }
                crate::store::LiteralKind::Typed(own) => (
                    *families.entry(own).or_insert_with(|| family(dict, own)),
                    own == crate::store::well_known::XSD_DECIMAL,
                ),
            };
            // A well-formed xsd:decimal with a fraction where an integer is due (ill-typed forms are dt-not-type's).
            let fraction =
                || own_decimal && DECIMAL.is_match(lexical) && !INTEGRAL.is_match(lexical);
            let clash = match has {
                Some(has) if has != due => true,
                Some(_) => integral && fraction(),
                None => false,
            };
            if clash {
                out.push((
                    format!("{ID_PREFIX}prp-rng"),
                    format!(
                        "{} (object of {} {}) is not a value of {}, the range of {}",
                        shown(lt),
                        shown(x),
                        shown(p),
                        shown(dt),
                        shown(p)
                    ),
                ));
            }
        }
    }
    out
}

/// A consistency check.
struct Check {
    /// The OWL 2 RL rule it is.
    rule: String,
    /// The message, `{var}` standing for the row's binding of `?var`.
    message: String,
    /// The query, with the file's prologue.
    text: String,
    /// Two variables whose bindings the query finds both ways round for one clash.
    either: Option<(String, String)>,
}

/// The checks of `checks.rq`.
fn checks() -> Vec<Check> {
    let mut out = Vec::new();
    let mut prologue = String::new();
    let mut current: Option<Check> = None;
    for line in CHECKS.lines() {
        if let Some(rest) = line.strip_prefix("#@check ") {
            out.extend(current.take());
            let (rule, message) = rest.split_once(": ").unwrap_or((rest, ""));
            current = Some(Check {
                rule: rule.to_owned(),
                message: message.to_owned(),
                text: prologue.clone(),
                either: None,
            });
        } else if let (Some(rest), Some(check)) = (line.strip_prefix("#@either "), &mut current) {
            check.either = rest
                .split_once(' ')
                .map(|(a, b)| (a.trim().to_owned(), b.trim().to_owned()));
        } else if let Some(check) = &mut current {
            check.text.push_str(line);
            check.text.push('\n');
        } else if line.starts_with("PREFIX") {
            prologue.push_str(line);
            prologue.push('\n');
        }
    }
    out.extend(current);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turtle(data: &str) -> Store {
        let mut loader = crate::store::load::Loader::new();
        loader
            .load_reader(
                "t",
                data.as_bytes(),
                crate::store::load::DataFormat::Turtle,
                None,
                &crate::store::load::NoProgress,
            )
            .unwrap();
        loader.finish()
    }

    #[test]
    fn every_check_parses_and_names_only_variables_it_projects() {
        let checks = checks();
        assert!(checks.len() >= 18, "{} checks", checks.len());
        for Check {
            rule,
            message,
            text,
            either,
        } in checks
        {
            let parsed =
                query::parse(&text, SOURCE, None).unwrap_or_else(|e| panic!("{rule}: {e}"));
            let spargebra::Query::Select { pattern, .. } = &parsed else {
                panic!("{rule} is not a SELECT")
            };
            let projected: Vec<String> = match pattern {
                spargebra::algebra::GraphPattern::Distinct { inner } => match &**inner {
                    spargebra::algebra::GraphPattern::Project { variables, .. } => {
                        variables.iter().map(|v| v.as_str().to_owned()).collect()
                    }
                    other => panic!("{rule}: {other:?}"),
                },
                other => panic!("{rule}: not SELECT DISTINCT: {other:?}"),
            };
            for var in either.iter().flat_map(|(a, b)| [a, b]) {
                assert!(
                    projected.contains(var),
                    "{rule}: #@either {var} is not projected"
                );
            }
            let mut rest = message.as_str();
            while let Some(open) = rest.find('{') {
                let close = rest[open..].find('}').expect("closed placeholder") + open;
                let var = &rest[open + 1..close];
                assert!(
                    projected.iter().any(|p| p == var),
                    "{rule}: {{{var}}} is not projected"
                );
                rest = &rest[close + 1..];
            }
        }
    }

    #[test]
    fn list_rules_are_generated_per_length_the_data_holds() {
        let data = "@prefix owl: <http://www.w3.org/2002/07/owl#> . @prefix : <http://e/> .\n\
                    :A owl:intersectionOf (:B :C) . :D owl:intersectionOf (:B :C :E) . :F owl:intersectionOf (:G :H) .\n\
                    :p owl:propertyChainAxiom (:q :r) . :K owl:hasKey (:k) .\n\
                    :bad owl:intersectionOf :notalist .";
        let store = turtle(data);
        let ids: Vec<String> = rule_texts(&store)
            .into_iter()
            .map(|t| t.id)
            .filter(|id| id.contains('/'))
            .collect();
        assert_eq!(
            ids,
            [
                "owl2rl:cls-int1/2",
                "owl2rl:cls-int1/3",
                "owl2rl:prp-spo2/2",
                "owl2rl:prp-key/1"
            ]
        );
        assert!(unread_lists(&store).is_empty());
        let members: String = (0..=MAX_LIST).map(|i| format!(" :m{i}")).collect();
        let long = turtle(&format!(
            "@prefix owl: <http://www.w3.org/2002/07/owl#> . @prefix : <http://e/> . :A owl:intersectionOf ({members}) ."
        ));
        assert!(list_lengths(&long, "intersectionOf").is_empty());
        assert_eq!(
            unread_lists(&long),
            [format!(
                "the owl:intersectionOf list of <http://e/A> has more than {MAX_LIST} members (or is cyclic); owl2rl:cls-int1 does not read it"
            )]
        );
    }

    #[test]
    fn every_rule_compiles_and_the_program_is_positive_for_lists_of_every_length() {
        let mut data = String::from(
            "@prefix owl: <http://www.w3.org/2002/07/owl#> . @prefix : <http://e/> .\n",
        );
        for n in 1..=MAX_LIST {
            let members: String = (0..n).map(|i| format!(" :m{i}")).collect();
            data.push_str(&format!(
                ":c{n} owl:intersectionOf ({members}) . :p{n} owl:propertyChainAxiom ({members}) . :k{n} owl:hasKey ({members}) .\n"
            ));
        }
        let mut store = turtle(&data);
        let texts = rule_texts(&store);
        assert_eq!(texts.len(), RULES.matches("#@rule ").count() + 3 * MAX_LIST);
        let (rules, errors) = crate::rules::compile_all(&texts, &mut store.dict);
        assert!(errors.is_empty(), "{errors:?}");
        let program = Program::new(rules);
        assert!(program.nonmonotone_rules().is_empty());
        assert!(program.stratification_errors(&store.dict).is_empty());
    }
}
