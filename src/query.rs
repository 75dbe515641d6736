//! This module defines SPARQL queries end to end: [`prepare`] (parse, lower, plan) and [`execute`] (run, then
//! shape the answer: solutions, a boolean, or triples for CONSTRUCT and DESCRIBE).

use std::time::Duration;

use miette::{Diagnostic, SourceSpan};
use spargebra::SparqlParser;
use thiserror::Error;

use crate::excerpt::{self, Excerpt};
use crate::exec::datetime::DateTime;
use crate::exec::eval::Env;
use crate::exec::terms::Terms;
use crate::exec::{self, Cancel, Context, ExecError, Flow, ROW_UNBOUND, Rows, State};
use crate::ir::lower::{self, LowerError, QueryForm, TemplateTerm};
use crate::ir::{VarId, VarSet};
use crate::plan::{self, Dataset, Plan};
use crate::rules::sparql::scan;
use crate::store::{Dictionary, TermId, TermRef, TermSource, Triple, View};

/// Why a query could not be prepared or run.
#[derive(Debug, Error, Diagnostic)]
pub enum QueryError {
    /// The query text is not SPARQL.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Syntax(Box<SyntaxError>),
    /// The query nests brackets or operators too deep.
    #[error("the query's {what} nest deeper than {limit} levels")]
    #[diagnostic(
        code(reasonctl::query::too_deep),
        help(
            "write it flatter: ?x IN (a, b, …) for long alternatives, several BINDs for a long sum, triple patterns through intermediate variables for a long path, fewer nested groups"
        )
    )]
    TooDeep {
        /// What nests.
        what: &'static str,
        /// The limit.
        limit: usize,
        /// The query text.
        #[source_code]
        text: Excerpt,
        /// The first bracket past the limit, when known.
        #[label("nested too deep here")]
        span: Option<SourceSpan>,
    },
    /// The query has more sequence-path steps or distinct variables than the parser handles.
    #[error("the query has more than {limit} {what}")]
    #[diagnostic(
        code(reasonctl::query::too_large),
        help(
            "the parser recurses once per step of a sequence path, and its time grows with the square of the variables: split long paths into triple patterns through intermediate variables, and a huge query into several"
        )
    )]
    TooLarge {
        /// What there are too many of.
        what: &'static str,
        /// The limit.
        limit: usize,
        /// The query text.
        #[source_code]
        text: Excerpt,
        /// The first past the limit.
        #[label("past the limit here")]
        span: Option<SourceSpan>,
    },
    /// A construct the executor does not run.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Lower(#[from] LowerError),
    /// Execution stopped.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Exec(#[from] ExecError),
}

/// A query text that is not SPARQL.
#[derive(Debug, Error, Diagnostic)]
#[error("the query is not valid SPARQL: {message}")]
#[diagnostic(code(reasonctl::query::syntax), help("{help}"))]
pub struct SyntaxError {
    /// The parser's message (its position removed), or what it means.
    message: String,
    /// The fix.
    help: String,
    /// The query text.
    #[source_code]
    text: Excerpt,
    /// Where.
    #[label("here")]
    span: Option<SourceSpan>,
}

/// A query ready to run: its form, its plan, and the dataset it reads.
#[derive(Debug)]
pub struct Prepared {
    /// What it returns.
    pub form: QueryForm,
    /// The plan.
    pub plan: Plan,
    /// FROM / FROM NAMED, or the data's own graphs.
    pub dataset: Dataset,
    /// The base IRI `IRI()` resolves against.
    pub base: Option<String>,
}

/// Parses SPARQL text into a spargebra query, turning syntax errors into a diagnostic with a span.
pub fn parse(text: &str, name: &str, base: Option<&str>) -> Result<spargebra::Query, QueryError> {
    let mut parser = SparqlParser::new();
    if let Some(b) = base {
        parser = parser.with_base_iri(b).map_err(|e| {
            QueryError::Syntax(Box::new(SyntaxError {
                message: format!("bad base IRI {b}: {e}"),
                help: "pass an absolute IRI to --base".to_owned(),
                text: Excerpt::new(name, text),
                span: None,
            }))
        })?;
    }
    if let Some((at, deep)) = scan::too_deep(text) {
        let range = excerpt::snap(text, at..at + 1);
        let span = Some(SourceSpan::new(range.start.into(), range.len()));
        let (what, limit) = match deep {
            scan::Deep::Brackets => ("brackets ( { [ <<", scan::MAX_NESTING),
            scan::Deep::Steps => (
                "steps in one sequence path (each `/` in one triple pattern is a step)",
                scan::MAX_STEPS,
            ),
            scan::Deep::Variables => ("distinct variables", scan::MAX_VARIABLES),
        };
        if deep != scan::Deep::Brackets {
            return Err(QueryError::TooLarge {
                what,
                limit,
                text: Excerpt::new(name, text),
                span,
            });
        }
        return Err(QueryError::TooDeep {
            what,
            limit,
            text: Excerpt::new(name, text),
            span: Some(SourceSpan::new(range.start.into(), range.len())),
        });
    }
    // Names with characters past U+FFFF are rewritten for the parser; its errors are reported on the text as
    // written.
    let parsed = match scan::widen_names(text) {
        Some(widened) => parser
            .clone()
            .parse_query(&widened)
            .or_else(|_| parser.parse_query(text)),
        None => parser.parse_query(text),
    }
    .map_err(|e| syntax_error(text, name, &e.to_string()))?;
    if let Some(at) = scan::literal_triple_term_subject(text) {
        let (line, col) = excerpt::line_col(text, at);
        return Err(syntax_error(
            text,
            name,
            &format!(
                "error at {line}:{col}: a triple term's subject must be an IRI, a blank node or a variable (TRIPLE() takes any term, and gives an error for such a subject)"
            ),
        ));
    }
    let mut parsed = parsed;
    match &mut parsed {
        spargebra::Query::Select { pattern, .. }
        | spargebra::Query::Construct { pattern, .. }
        | spargebra::Query::Describe { pattern, .. }
        | spargebra::Query::Ask { pattern, .. } => scan::rebalance(pattern),
    }
    let pattern = match &parsed {
        spargebra::Query::Select { pattern, .. }
        | spargebra::Query::Construct { pattern, .. }
        | spargebra::Query::Describe { pattern, .. }
        | spargebra::Query::Ask { pattern, .. } => pattern,
    };
    let template_deep = match &parsed {
        spargebra::Query::Construct { template, .. } => template
            .iter()
            .any(|t| scan::term_too_deep(&t.subject) || scan::term_too_deep(&t.object)),
        _ => false,
    };
    if template_deep || scan::pattern_too_deep(pattern) {
        scan::forget_deep(parsed);
        return Err(QueryError::TooDeep {
            what: "operators",
            limit: scan::MAX_DEPTH,
            text: Excerpt::new(name, text),
            span: None,
        });
    }
    Ok(parsed)
}

/// A syntax error as a diagnostic: spargebra writes "error at L:C: expected …"; the span is rebuilt from it and
/// the long list of expected characters is cut.
pub fn syntax_error(text: &str, name: &str, message: &str) -> QueryError {
    let mut span = None;
    let mut short = message.to_owned();
    if let Some(rest) = message.strip_prefix("error at ") {
        if let Some((pos, msg)) = rest.split_once(": ") {
            if let Some((l, c)) = pos.split_once(':') {
                if let (Ok(line), Ok(col)) = (l.parse::<usize>(), c.parse::<usize>()) {
                    // Past the end of the text: at its last character.
                    let at = excerpt::offset_of(text, line, col)
                        .min(excerpt::floor_boundary(text, text.len().saturating_sub(1)));
                    let range = excerpt::snap(text, at..at + 1);
                    span = Some(SourceSpan::new(range.start.into(), range.len()));
                    short = msg.to_owned();
                }
            }
        }
    }
    if let Some(i) = short.find("expected one of") {
        let list = &short[i..];
        if list.len() > 120 {
            short = format!("{}…", &short[..excerpt::floor_boundary(&short, i + 120)]);
        }
    }
    let at = span.map(|s| s.offset());
    let (short, help) = match scan::syntax_hint(text, at, message, false) {
        Some(h) => {
            if let Some(r) = h.at {
                span = Some(SourceSpan::new(r.start.into(), r.len()));
            }
            (h.what, h.fix)
        }
        None => (short, "fix the query at the marked position".to_owned()),
    };
    QueryError::Syntax(Box::new(SyntaxError {
        message: short,
        help,
        text: Excerpt::new(name, text),
        span,
    }))
}

/// Lowers and plans a parsed query; constants are interned into `dict`.
pub fn prepare(
    query: &spargebra::Query,
    dict: &mut Dictionary,
    view: View<'_>,
) -> Result<Prepared, QueryError> {
    prepare_with(query, dict, view, true)
}

/// [`prepare`], with join reordering switchable (off: operands in written order, the differential baseline).
pub fn prepare_with(
    query: &spargebra::Query,
    dict: &mut Dictionary,
    view: View<'_>,
    reorder: bool,
) -> Result<Prepared, QueryError> {
    let base = match query {
        spargebra::Query::Select { base_iri, .. }
        | spargebra::Query::Construct { base_iri, .. }
        | spargebra::Query::Describe { base_iri, .. }
        | spargebra::Query::Ask { base_iri, .. } => {
            base_iri.as_ref().map(|b| b.as_str().to_owned())
        }
    };
    let lowered = lower::lower_query(query, dict)?;
    let dataset = match &lowered.dataset {
        None => Dataset::default(),
        Some(d) => Dataset {
            default: d.default.clone(),
            named: Some(d.named.clone().unwrap_or_default()),
        },
    };
    let plan = plan::plan_with(
        &lowered.op,
        lowered.vars,
        view,
        &dataset,
        &VarSet::new(),
        reorder,
    );
    Ok(Prepared {
        form: lowered.form,
        plan,
        dataset,
        base,
    })
}

/// How a query runs.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// What NOW() returns (default: the current time, fixed for the run).
    pub now: Option<DateTime>,
    /// A deadline.
    pub timeout: Option<Duration>,
    /// The most nodes one property-path traversal visits (`None`: [`exec::DEFAULT_PATH_LIMIT`]).
    pub path_limit: Option<usize>,
    /// The most pairs a path with both ends free relates (`None`: no limit).
    pub pair_limit: Option<usize>,
}

/// A query's answer; ids refer to the [`Terms`] returned with it.
#[derive(Debug)]
pub enum Answer {
    /// SELECT: column names and rows (one column per name).
    Solutions {
        /// Variable names, in projection order.
        vars: Vec<String>,
        /// Rows, `vars.len()` wide (at least 1), [`ROW_UNBOUND`] where unbound.
        rows: Rows,
    },
    /// ASK.
    Boolean(bool),
    /// CONSTRUCT / DESCRIBE: distinct triples, in construction order.
    Triples(Vec<Triple>),
}

/// The outcome of running a query: the answer, the terms it refers to, and rows per plan node.
pub struct Outcome<'a> {
    /// The answer.
    pub answer: Answer,
    /// The dictionary plus computed terms.
    pub terms: Terms<'a>,
    /// Rows each plan node produced.
    pub actual: Vec<u64>,
}

/// Runs a prepared query over `view`.
pub fn execute<'a>(
    prepared: &Prepared,
    dict: &'a Dictionary,
    view: View<'a>,
    options: &RunOptions,
) -> Result<Outcome<'a>, QueryError> {
    let env = Env::new(
        options.now.unwrap_or_else(DateTime::now),
        prepared.base.clone(),
    );
    let mut cancel = Cancel::new();
    if let Some(t) = options.timeout {
        cancel = cancel.with_timeout(t);
    }
    let mut cx = Context::new(view, env)
        .with_dataset(prepared.dataset.clone())
        .with_cancel(cancel);
    if let Some(n) = options.path_limit {
        cx.path_limit = n;
    }
    if let Some(n) = options.pair_limit {
        cx.pair_limit = n;
    }
    let plan = &prepared.plan;
    let mut st = State::new(Terms::new(dict), plan);
    let unit = Rows::unit(plan.width);
    let answer = match &prepared.form {
        QueryForm::Ask => {
            let mut found = false;
            exec::execute(plan, &cx, &mut st, &unit, &mut |_, rows| {
                found |= !rows.is_empty();
                Ok(if found { Flow::Stop } else { Flow::Continue })
            })?;
            Answer::Boolean(found)
        }
        QueryForm::Select { projection } => {
            let cols: Vec<VarId> = projection.clone();
            let width = cols.len().max(1);
            let mut out = Rows::new(width);
            let mut buf = vec![ROW_UNBOUND; width];
            exec::execute(plan, &cx, &mut st, &unit, &mut |_, rows| {
                for row in rows.iter() {
                    for (k, v) in cols.iter().enumerate() {
                        buf[k] = row[v.index()];
                    }
                    out.push(&buf);
                }
                Ok(Flow::Continue)
            })?;
            Answer::Solutions {
                vars: cols.iter().map(|v| plan.vars.name(*v).to_owned()).collect(),
                rows: out,
            }
        }
        QueryForm::Construct { template } => {
            let rows = exec::collect(plan, &cx, &mut st)?;
            let mut triples = Vec::new();
            let mut seen = hashbrown::HashSet::new();
            for row in rows.iter() {
                let mut blanks: Vec<Option<TermId>> = Vec::new();
                for t in template {
                    if let Some(triple) = instantiate(&mut st.terms, t, row, &mut blanks) {
                        if seen.insert(triple) {
                            triples.push(triple);
                        }
                    }
                }
            }
            Answer::Triples(triples)
        }
        QueryForm::Describe { projection } => {
            let rows = exec::collect(plan, &cx, &mut st)?;
            let mut targets: Vec<TermId> = rows
                .iter()
                .flat_map(|row| {
                    projection
                        .iter()
                        .map(|v| row[v.index()])
                        .collect::<Vec<_>>()
                })
                .filter(|id| *id != ROW_UNBOUND)
                .collect();
            targets.sort_unstable();
            targets.dedup();
            let mut triples = Vec::new();
            for t in targets {
                for g in &cx.dataset.default {
                    triples.extend(cx.view.scan(*g, &[Some(t), None, None]));
                }
            }
            Answer::Triples(triples)
        }
    };
    Ok(Outcome {
        answer,
        actual: st.actual,
        terms: st.terms,
    })
}

/// One template triple for one row: `None` if a variable is unbound or a position cannot hold the term.
pub fn instantiate(
    terms: &mut Terms<'_>,
    t: &[TemplateTerm; 3],
    row: &[TermId],
    blanks: &mut Vec<Option<TermId>>,
) -> Option<Triple> {
    instantiate_checking(terms, t, row, blanks, [true; 2])
}

/// [`instantiate`], checking the subject's and the predicate's kind only where `check` says (a position the
/// caller knows holds a subject, or a predicate, of a fact needs no decoding of its term).
pub fn instantiate_checking(
    terms: &mut Terms<'_>,
    t: &[TemplateTerm; 3],
    row: &[TermId],
    blanks: &mut Vec<Option<TermId>>,
    [check_s, check_p]: [bool; 2],
) -> Option<Triple> {
    let s = template_term(terms, &t[0], row, blanks)?;
    let p = template_term(terms, &t[1], row, blanks)?;
    let o = template_term(terms, &t[2], row, blanks)?;
    if check_s && !matches!(terms.term(s), TermRef::Iri(_) | TermRef::Blank(_))
        || check_p && !matches!(terms.term(p), TermRef::Iri(_))
    {
        return None;
    }
    Some([s, p, o])
}

fn template_term(
    terms: &mut Terms<'_>,
    t: &TemplateTerm,
    row: &[TermId],
    blanks: &mut Vec<Option<TermId>>,
) -> Option<TermId> {
    match t {
        TemplateTerm::Const(c) => Some(*c),
        TemplateTerm::Var(v) => Some(row[v.index()]).filter(|id| *id != ROW_UNBOUND),
        TemplateTerm::Blank(n) => {
            let n = *n as usize;
            if blanks.len() <= n {
                blanks.resize(n + 1, None);
            }
            Some(*blanks[n].get_or_insert_with(|| terms.fresh_blank()))
        }
        TemplateTerm::Triple(parts) => {
            let triple = instantiate(terms, parts, row, blanks)?;
            Some(terms.triple(triple))
        }
        TemplateTerm::Reifier(minted) => {
            let edge = instantiate(terms, &minted.edge, row, blanks)?;
            crate::rules::reifier::mint(terms, minted, edge)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::load::{DataFormat, Loader};
    use crate::store::{Overlay, Store};
    use miette::Diagnostic;

    fn store() -> Store {
        let mut loader = Loader::new();
        loader
            .load_reader(
                "data",
                "<http://e/a> <http://e/p> <http://e/b> .\n<http://e/b> <http://e/p> <http://e/c> .\n<http://e/c> <http://e/p> <http://e/d> .\n".as_bytes(),
                DataFormat::NTriples,
                None,
                &crate::store::load::NoProgress,
            )
            .unwrap();
        loader.finish()
    }

    fn run(text: &str, options: &RunOptions) -> Result<usize, QueryError> {
        let mut store = store();
        let overlay = Overlay::new();
        let parsed = parse(text, "<query>", None)?;
        let prepared = prepare(&parsed, &mut store.dict, View::new(&store.quads, &overlay))?;
        let outcome = execute(
            &prepared,
            &store.dict,
            View::new(&store.quads, &overlay),
            options,
        )?;
        Ok(match outcome.answer {
            Answer::Solutions { rows, .. } => rows.len(),
            _ => 0,
        })
    }

    fn code(e: &QueryError) -> String {
        e.code().map(|c| c.to_string()).unwrap_or_default()
    }

    #[test]
    fn limits_of_paths_pairs_and_time_stop_a_query_with_their_codes() {
        assert_eq!(
            run(
                "SELECT * WHERE { <http://e/a> <http://e/p>+ ?x }",
                &RunOptions::default()
            )
            .unwrap(),
            3
        );
        let e = run(
            "SELECT * WHERE { <http://e/a> (<http://e/p>|^<http://e/p>)* ?x }",
            &RunOptions {
                path_limit: Some(2),
                ..RunOptions::default()
            },
        )
        .unwrap_err();
        assert_eq!(code(&e), "reasonctl::exec::path_limit");
        let e = run(
            "SELECT * WHERE { ?x <http://e/p>+ ?y }",
            &RunOptions {
                pair_limit: Some(2),
                ..RunOptions::default()
            },
        )
        .unwrap_err();
        assert_eq!(code(&e), "reasonctl::exec::pair_limit");
        let e = run(
            "SELECT * WHERE { ?a ?p ?b . ?c ?q ?d . ?e ?r ?f . ?g ?s ?h . ?i ?t ?j }",
            &RunOptions {
                timeout: Some(Duration::ZERO),
                ..RunOptions::default()
            },
        )
        .unwrap_err();
        assert_eq!(code(&e), "reasonctl::exec::timeout");
    }
}
