//! This module defines the executor: physical plans run over `base ⊕ derived`, streaming fixed-width batches of
//! [`TermId`] rows through each node (push-based: a node hands its output batches to the next stage).
//!
//! Every node transforms a batch of input rows; a query starts from one empty row, a seeded pattern (EXISTS,
//! OPTIONAL, a semi-naive rule body) from the rows that seed it. Rows are `width` ids wide, one column per
//! variable, [`ROW_UNBOUND`] where a variable is unbound; no row is ever allocated on its own.

pub mod aggregate;
pub mod batch;
pub mod datetime;
pub mod eval;
pub mod path;
pub mod run;
pub mod scan;
pub mod terms;
pub mod value;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use miette::Diagnostic;
use thiserror::Error;

use crate::plan::{Dataset, Plan};
use crate::store::{TermId, View};

pub use batch::Rows;
use eval::Env;
use terms::Terms;

/// The id of an unbound cell.
pub const ROW_UNBOUND: TermId = TermId(u32::MAX);

/// Rows per batch.
pub const BATCH: usize = 1024;

/// Whether the consumer wants more rows.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Keep sending.
    Continue,
    /// Enough (LIMIT reached, ASK answered).
    Stop,
}

/// Why execution stopped early.
#[derive(Debug, Error, Diagnostic, Clone, PartialEq, Eq)]
pub enum ExecError {
    /// The deadline passed.
    #[error(
        "the query ran past --timeout: it had {0:?} of it left when it started (after loading and reasoning)"
    )]
    #[diagnostic(
        code(reasonctl::exec::timeout),
        help("raise --timeout, or make the query more selective")
    )]
    Timeout(Duration),
    /// The run was interrupted.
    #[error("the query was cancelled")]
    #[diagnostic(code(reasonctl::exec::cancelled))]
    Cancelled,
    /// A property path visited more nodes than allowed.
    #[error("a property path visited more than {0} nodes")]
    #[diagnostic(
        code(reasonctl::exec::path_limit),
        help("bind one end of the path, or raise the limit")
    )]
    PathLimit(usize),
    /// A closure with both ends free relates more pairs than allowed.
    #[error("a property path with both ends free relates more than {0} pairs")]
    #[diagnostic(
        code(reasonctl::exec::pair_limit),
        help("bind one end of the path, or raise the budget")
    )]
    PairLimit(usize),
}

/// A cancellation handle with an optional deadline, checked between batches.
#[derive(Clone, Debug, Default)]
pub struct Cancel {
    deadline: Option<(Instant, Duration)>,
    flag: Arc<AtomicBool>,
    /// Time set aside per unit of a count that grows while the plan runs (the facts a rule body has found, each
    /// to be written later): the deadline comes earlier by `per unit × count`.
    reserve: Option<(Duration, Arc<AtomicUsize>)>,
}

impl Cancel {
    /// No deadline, not cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Times out `after` from now (never, when that is past what an [`Instant`] holds).
    #[must_use]
    pub fn with_timeout(mut self, after: Duration) -> Self {
        self.deadline = Instant::now().checked_add(after).map(|at| (at, after));
        self
    }

    /// Times out at `at` (reported as a timeout of `budget`).
    #[must_use]
    pub fn with_deadline(mut self, at: Instant, budget: Duration) -> Self {
        self.deadline = Some((at, budget));
        self
    }

    /// Sets aside `per_unit` of the time before the deadline for every unit `count` holds when checked.
    #[must_use]
    pub fn with_reserve(mut self, per_unit: Duration, count: Arc<AtomicUsize>) -> Self {
        self.reserve = Some((per_unit, count));
        self
    }

    /// Asks every holder of this handle to stop.
    pub fn cancel(&self) {
        self.flag.store(true, Ordering::Relaxed);
    }

    /// `Err` once cancelled or past the deadline.
    pub fn check(&self) -> Result<(), ExecError> {
        if self.flag.load(Ordering::Relaxed) {
            return Err(ExecError::Cancelled);
        }
        let Some((at, budget)) = self.deadline else {
            return Ok(());
        };
        let set_aside = self
            .reserve
            .as_ref()
            .map_or(Duration::ZERO, |(per, count)| {
                let units = count.load(Ordering::Relaxed) as u64;
                Duration::from_nanos((per.as_nanos() as u64).saturating_mul(units))
            });
        match Instant::now().checked_add(set_aside) {
            Some(t) if t < at => Ok(()),
            _ => Err(ExecError::Timeout(budget)),
        }
    }
}

/// The most nodes one property-path traversal visits unless told otherwise.
pub const DEFAULT_PATH_LIMIT: usize = 10_000_000;

/// What stays fixed while a plan runs.
pub struct Context<'a> {
    /// The facts.
    pub view: View<'a>,
    /// Which graphs the default and named graphs are.
    pub dataset: Dataset,
    /// Time, base IRI, caches of expressions.
    pub env: Env,
    /// Cancellation and deadline.
    pub cancel: Cancel,
    /// The most nodes one property-path traversal may visit.
    pub path_limit: usize,
    /// The most pairs a closure with both ends free may produce (it counts them before producing any).
    pub pair_limit: usize,
    /// The named graphs, sorted (from the dataset, or every named graph of the view).
    pub named: Vec<TermId>,
}

impl<'a> Context<'a> {
    /// A context over `view` reading the data's own default graph, NOW() = `now`.
    pub fn new(view: View<'a>, env: Env) -> Self {
        let dataset = Dataset::default();
        Self {
            named: dataset.named_graphs(&view),
            view,
            dataset,
            env,
            cancel: Cancel::new(),
            path_limit: DEFAULT_PATH_LIMIT,
            pair_limit: usize::MAX,
        }
    }

    /// Reads `dataset` instead of the data's own graphs.
    #[must_use]
    pub fn with_dataset(mut self, dataset: Dataset) -> Self {
        self.named = dataset.named_graphs(&self.view);
        self.dataset = dataset;
        self
    }

    /// Stops at `cancel`'s deadline or cancellation.
    #[must_use]
    pub fn with_cancel(mut self, cancel: Cancel) -> Self {
        self.cancel = cancel;
        self
    }
}

/// What changes while a plan runs: computed terms, cached hash tables, row counts per node.
pub struct State<'a> {
    /// The dictionary plus computed terms.
    pub terms: Terms<'a>,
    pub(crate) caches: Vec<Option<run::Cached>>,
    pub(crate) bnodes: eval::BnodeLabels,
    /// Rows each node produced (for `--explain-plan`).
    pub actual: Vec<u64>,
    /// Dense graphs of closure paths.
    pub(crate) links: path::closure::LinkCache,
}

impl<'a> State<'a> {
    /// Fresh state for `plan` over the dictionary `terms` extends.
    pub fn new(terms: Terms<'a>, plan: &Plan) -> Self {
        Self {
            terms,
            caches: (0..plan.nodes).map(|_| None).collect(),
            bnodes: eval::BnodeLabels::default(),
            actual: vec![0; plan.nodes],
            links: path::closure::LinkCache::default(),
        }
    }
}

/// Runs `plan` from `input` rows (one empty row for a query), handing output batches to `sink`.
pub fn execute<'a>(
    plan: &Plan,
    cx: &Context<'a>,
    st: &mut State<'a>,
    input: &Rows,
    sink: &mut dyn FnMut(&mut State<'a>, &Rows) -> Result<Flow, ExecError>,
) -> Result<(), ExecError> {
    cx.cancel.check()?;
    run::run(cx, st, &plan.root, input, sink).map(|_| ())
}

/// Runs `plan` from one empty row and collects every output row.
pub fn collect<'a>(plan: &Plan, cx: &Context<'a>, st: &mut State<'a>) -> Result<Rows, ExecError> {
    let mut out = Rows::new(plan.width);
    let unit = Rows::unit(plan.width);
    execute(plan, cx, st, &unit, &mut |_, rows| {
        out.extend_from(rows);
        Ok(Flow::Continue)
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancelled_handle_and_a_passed_deadline_stop_with_a_clear_error() {
        let cancel = Cancel::new();
        assert_eq!(cancel.check(), Ok(()));
        let clone = cancel.clone();
        clone.cancel();
        assert_eq!(cancel.check(), Err(ExecError::Cancelled));
        assert_eq!(
            Diagnostic::code(&ExecError::Cancelled).unwrap().to_string(),
            "reasonctl::exec::cancelled"
        );
        let late = Cancel::new().with_deadline(
            Instant::now() - Duration::from_millis(1),
            Duration::from_secs(3),
        );
        let err = late.check().unwrap_err();
        assert_eq!(err, ExecError::Timeout(Duration::from_secs(3)));
        assert!(err.to_string().contains("ran past --timeout"));
    }
}
