//! This module defines the datalog engine: rules' footprints, their dependency stages, and the semi-naive
//! fixpoint that runs rule bodies through the query executor.

pub mod budget;
pub mod closure;
pub mod dataflow;
pub mod delta;
pub mod dependency;
pub mod explain;
pub mod fixpoint;
pub mod footprint;
pub mod graphs;
pub mod maintain;
pub mod owl2rl;
pub mod provenance;

use std::time::Duration;

use miette::Diagnostic;
use serde_json::json;
use thiserror::Error;

use crate::rules::{Rule, RuleError};
use crate::store::{Overlay, Quad, Store, TermId, TermSource};

pub use budget::{Budget, CapReason};
pub use fixpoint::{FixpointProgress, NoProgress, Options, Schedule, run, run_over};

use dependency::{EdgeKind, Via};
use footprint::{Key, Scope};

/// A program that cannot be run as asked, or a run that cannot give a sound answer.
#[derive(Debug, Error, Diagnostic)]
pub enum RunError {
    /// `--schedule whole-program` over rules that negate or aggregate.
    #[error(
        "--schedule whole-program cannot run rules that negate or aggregate ({rules}): it runs every rule from the first pass, so a NOT EXISTS or an aggregate would read half-derived facts and conclude wrongly"
    )]
    #[diagnostic(
        code(reasonctl::datalog::whole_program_nonmonotone),
        help(
            "use --schedule staged (the default), or --schedule naive-stages for the naive reference evaluation stage by stage"
        )
    )]
    WholeProgramNonMonotone {
        /// The negating and aggregating rules.
        rules: String,
    },
    /// A cap left a negating or aggregating rule unfinished.
    #[error(
        "reasoning hit its {reason} limit before rules that negate or aggregate ran over complete inputs ({rules}); their partial conclusions could be wrong, so nothing was written"
    )]
    #[diagnostic(
        code(reasonctl::datalog::resource_limit),
        help(
            "raise the limit (--timeout, --max-facts, --max-memory or --max-iterations) so the run reaches its fixpoint"
        )
    )]
    ResourceLimit {
        /// Which limit.
        reason: &'static str,
        /// The unfinished negating or aggregating rules.
        rules: String,
        /// The run's report (for `--stats`).
        report: Box<Report>,
    },
    /// The OWL 2 RL closure ahead of the rules gave no answer (inconsistent data, or checks past the deadline).
    #[error(transparent)]
    #[diagnostic(transparent)]
    Owl2Rl(#[from] owl2rl::Owl2RlError),
}

/// Refuses `WholeProgram` for a program that negates or aggregates.
fn refuse_whole_program(program: &Program, options: &Options) -> Result<(), RunError> {
    let rules = program.nonmonotone_rules();
    if options.schedule == Schedule::WholeProgram && !rules.is_empty() {
        return Err(RunError::WholeProgramNonMonotone {
            rules: rules.join(", "),
        });
    }
    Ok(())
}

/// Runs a validated, stratified program: refuses `WholeProgram` for a program that negates or aggregates, and
/// fails a capped run that left a negating or aggregating rule unfinished (rather than return its partial
/// conclusions). A positive program's capped run returns what it derived, with the cap in the report.
pub fn materialize(
    program: &Program,
    store: &mut Store,
    options: &Options,
    progress: &dyn FixpointProgress,
) -> Result<(Overlay, Report), RunError> {
    materialize_over(program, store, options, progress, Overlay::new())
}

/// [`materialize`] over asserted ⊕ `prior` facts (see [`run_over`]).
pub fn materialize_over(
    program: &Program,
    store: &mut Store,
    options: &Options,
    progress: &dyn FixpointProgress,
    prior: Overlay,
) -> Result<(Overlay, Report), RunError> {
    refuse_whole_program(program, options)?;
    let (overlay, report) = run_over(program, store, options, progress, prior);
    Ok((overlay, refuse_unfinished(program, report)?))
}

/// A capped run's report, refused when the cap left a negating or aggregating rule of `program` unfinished
/// (capped, or pending).
fn refuse_unfinished(program: &Program, report: Report) -> Result<Report, RunError> {
    if let Some(reason) = report.capped {
        let nonmonotone = program.nonmonotone_rules();
        let unfinished: Vec<&str> = report
            .capped_rules
            .iter()
            .chain(&report.pending_rules)
            .map(String::as_str)
            .filter(|r| nonmonotone.contains(r))
            .collect();
        if !unfinished.is_empty() {
            return Err(RunError::ResourceLimit {
                reason: reason.name(),
                rules: unfinished.join(", "),
                report: Box::new(report),
            });
        }
    }
    Ok(report)
}

/// A validated set of rules with their footprints and dependency stages.
#[derive(Clone, Debug)]
pub struct Program {
    /// The rules, in source order.
    pub rules: Vec<Rule>,
    /// Their footprints.
    pub footprints: Vec<footprint::Footprint>,
    /// Groups and stages.
    pub deps: dependency::Dependencies,
}

impl Program {
    /// Analyses the rules.
    pub fn new(rules: Vec<Rule>) -> Self {
        let footprints: Vec<_> = rules.iter().map(footprint::footprint).collect();
        let deps = dependency::analyze(&footprints);
        Self {
            rules,
            footprints,
            deps,
        }
    }

    /// The rules that read under a negation or inside an aggregating subquery, in source order.
    pub fn nonmonotone_rules(&self) -> Vec<&str> {
        self.rules
            .iter()
            .zip(&self.footprints)
            .filter(|(_, f)| f.is_nonmonotone())
            .map(|(r, _)| r.id.as_str())
            .collect()
    }

    /// `a -not-> b -> a`: the cycle's rule ids, the first arrow its offending read, the others how each rule
    /// reads the one before.
    pub fn cycle_text(&self, c: &dependency::Cycle) -> String {
        let mut s = self.rules[c.rules[0]].id.clone();
        for (i, r) in c.rules[1..].iter().enumerate() {
            let arrow = if i == 0 {
                c.kind
            } else {
                self.deps.arrow(c.rules[i], *r)
            };
            s.push_str(&format!(" {} {}", arrow.arrow(), self.rules[*r].id));
        }
        s
    }

    /// One error per recursive group with a negated or aggregated read of its own writes: the cycle, its first
    /// arrow `-not->` or `-agg->`, and the facts the read names with IRIs spelled out.
    pub fn stratification_errors(&self, terms: &impl TermSource) -> Vec<RuleError> {
        self.deps
            .unstratified()
            .into_iter()
            .map(|c| {
                let cycle = self.cycle_text(&c);
                RuleError::Unstratified {
                    rule: self.rules[c.rules[1]].id.clone(),
                    cycle,
                    construct: match c.kind {
                        EdgeKind::Aggregated => "an aggregating subquery",
                        _ => "a negation",
                    },
                    facts: c
                        .via
                        .iter()
                        .map(|v| describe_facts(v, terms))
                        .collect::<Vec<_>>()
                        .join(" and "),
                }
            })
            .collect()
    }

    /// The rules whose bodies call NOW().
    pub fn clock_readers(&self) -> Vec<&str> {
        self.rules
            .iter()
            .zip(&self.footprints)
            .filter(|(_, f)| f.reads_clock)
            .map(|(r, _)| r.id.as_str())
            .collect()
    }
}

/// The facts an edge carries as a pattern with IRIs spelled out: `{ ?s <p> ?o }`, `{ ?s <rdf:type> <C> }`,
/// `GRAPH <g> { ?s ?p ?o }`.
pub fn describe_facts(via: &Via, terms: &impl TermSource) -> String {
    let name = |id: TermId| {
        terms
            .to_oxrdf(id)
            .map_or_else(|| format!("{id:?}"), |t| t.to_string())
    };
    let triple = match via.key {
        Key::Any => "{ ?s ?p ?o }".to_owned(),
        Key::Predicate(p) => format!("{{ ?s {} ?o }}", name(p)),
        Key::Class(c) => format!(
            "{{ ?s <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> {} }}",
            name(c)
        ),
    };
    match via.scope {
        Scope::Default => triple,
        Scope::Named(g) => format!("GRAPH {} {triple}", name(g)),
        Scope::AnyNamed => format!("GRAPH ?g {triple}"),
    }
}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Facts derived (new: neither asserted nor derived twice).
    pub derived: usize,
    /// Why the run stopped early, if it did.
    pub capped: Option<CapReason>,
    /// Rules of the groups still running when the cap fired.
    pub capped_rules: Vec<String>,
    /// Rules of the stages after the cap.
    pub pending_rules: Vec<String>,
    /// Per stage.
    pub stages: Vec<StageReport>,
    /// Per rule.
    pub rules: Vec<RuleReport>,
    /// Rules that matched rows but could not instantiate a head.
    pub warnings: Vec<String>,
    /// Time of the fixpoint.
    pub elapsed: Duration,
    /// With [`Options::track`]: each derived fact with the index of the rule that first derived it (the first
    /// stage, then the first pass, then the first job in job order that found it), sorted by fact.
    pub credits: Vec<(Quad, u32)>,
    /// With [`Options::start`] (maintenance's insertion): the facts the run added, in the order it added them.
    pub inserted: Vec<Quad>,
}

impl Report {
    /// This run's report followed by that of a later run of `later` over its facts: counts added, stages and
    /// rules one after the other. A capped first run leaves every rule of `later` pending.
    pub fn then(self, later: Report, program: &Program) -> Report {
        let mut pending = self.pending_rules;
        if self.capped.is_some() {
            pending.extend(program.rules.iter().map(|r| r.id.clone()));
        } else {
            pending.extend(later.pending_rules);
        }
        let mut capped_rules = self.capped_rules;
        capped_rules.extend(later.capped_rules);
        let mut stages = self.stages;
        stages.extend(later.stages);
        // The later program's rules follow this one's.
        let offset = self.rules.len() as u32;
        let mut rules = self.rules;
        rules.extend(later.rules);
        let mut warnings = self.warnings;
        warnings.extend(later.warnings);
        let mut credits = self.credits;
        credits.extend(later.credits.into_iter().map(|(q, r)| (q, r + offset)));
        credits.sort_unstable();
        let mut inserted = self.inserted;
        inserted.extend(later.inserted);
        Report {
            credits,
            inserted,
            derived: self.derived + later.derived,
            capped: self.capped.or(later.capped),
            capped_rules,
            pending_rules: pending,
            stages,
            rules,
            warnings,
            elapsed: self.elapsed + later.elapsed,
        }
    }
}

/// One stage of a run.
#[derive(Clone, Debug, Default)]
pub struct StageReport {
    /// Its groups' rule ids.
    pub groups: Vec<Vec<String>>,
    /// Passes run.
    pub passes: usize,
    /// Facts derived.
    pub facts: usize,
}

/// One rule of a run.
#[derive(Clone, Debug, Default)]
pub struct RuleReport {
    /// The id.
    pub id: String,
    /// Time in its body runs.
    pub time: Duration,
    /// Body runs.
    pub runs: usize,
    /// New facts it derived.
    pub facts: usize,
    /// For a closure rule: whether it ran as a path (`compiled to a path`) or iterated after a path limit.
    pub closure: Option<&'static str>,
}

impl Report {
    /// The `--stats` JSON object.
    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "derived": self.derived,
            "capped": self.capped.is_some(),
            "capped_reason": self.capped.map(CapReason::name),
            "capped_rules": self.capped_rules,
            "pending_rules": self.pending_rules,
            "elapsed_ms": self.elapsed.as_secs_f64() * 1e3,
            "stages": self.stages.iter().enumerate().map(|(i, s)| json!({
                "stage": i,
                "groups": s.groups,
                "passes": s.passes,
                "facts": s.facts,
            })).collect::<Vec<_>>(),
            "rules": self.rules.iter().map(|r| json!({
                "id": r.id,
                "time_ms": r.time.as_secs_f64() * 1e3,
                "runs": r.runs,
                "facts": r.facts,
                "closure": r.closure,
            })).collect::<Vec<_>>(),
            "warnings": self.warnings,
        })
    }
}

/// `rules` (SPARQL rules with the `:` prefix, ids `r0`, `r1`, …) compiled over `data` (TriG with the `:` prefix):
/// the program and the store, for the unit tests of the engines.
#[cfg(test)]
pub(crate) fn test_program(data: &str, rules: &[&str]) -> (Program, Store) {
    use crate::rules::{Origin, sparql};
    use crate::store::load::{DataFormat, Loader, NoProgress};
    let mut loader = Loader::new();
    let data = format!("PREFIX : <http://e/>\n{data}");
    loader
        .load_reader("data", data.as_bytes(), DataFormat::Trig, None, &NoProgress)
        .expect("data");
    let mut store = loader.finish();
    let compiled = rules
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let origin = Origin::File {
                path: "r.rq".into(),
                offset: 0,
                prologue: 0,
            };
            let text = format!("PREFIX : <http://e/> {text}");
            sparql::compile(&format!("r{i}"), origin, &text, &mut store.dict).expect("a valid rule")
        })
        .collect();
    (Program::new(compiled), store)
}
