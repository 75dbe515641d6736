//! This module defines the datalog engine: rules' footprints, their dependency stages, and the semi-naive
//! fixpoint that runs rule bodies through the query executor.

pub mod budget;
pub mod delta;
pub mod dependency;
pub mod fixpoint;
pub mod footprint;
pub mod graphs;

use std::time::Duration;

use serde_json::json;

use crate::rules::Rule;

pub use budget::{Budget, CapReason};
pub use fixpoint::{FixpointProgress, NoProgress, Options, Schedule, run};

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
            })).collect::<Vec<_>>(),
            "warnings": self.warnings,
        })
    }
}
