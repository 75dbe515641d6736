//! This module defines the dataflow engine (`materialize --engine dataflow`): the rule program lowered to
//! differential-dataflow collections and run by timely dataflow on `--workers N` threads.
//!
//! ```text
//! facts₀            = the asserted quads                          (one input collection, split over the workers)
//! stage s, group G  = rules(G, factsₛ)                            (a group that does not read its own writes)
//!                   | factsₛ.iterate(x ↦ distinct(rules(G, x) ∪ x))  (a recursive group: semi-naive, as differential
//!                                                                    iterates on differences)
//! factsₛ₊₁          = distinct(factsₛ ∪ every group's facts of stage s)
//! derived           = facts_last − asserted
//! ```
//!
//! A rule body lowers operator by operator: a triple pattern is a `flat_map` over the facts to rows (a triple
//! term in it, as RDF 1.2 annotations and reifiers in bodies lower to, matches the fact's triple term, decoded by
//! the dictionary), a join a
//! `join_map` keyed by the variables both sides always bind (the others are checked for compatibility after),
//! FILTER a `filter` calling the executor's own expression evaluator, `FILTER (NOT) EXISTS` a semijoin or antijoin
//! on the outer row's variables the pattern mentions (the pattern seeded with the outer rows' values when a
//! FILTER of it reads them), UNION a `concat`, VALUES a constant collection, BIND a `map` (a computed value through
//! the evaluator), a subquery's projection a `map`, DISTINCT a `distinct`, GROUP BY and its aggregates a `reduce`,
//! a subquery's ORDER BY nothing (with no LIMIT, which rules refuse, its order shows nowhere), a property path
//! the pairs it relates (closures iterated, in `dataflow/path.rs`). A row is a `Vec<u32>` as wide as the rule's
//! variables, `u32::MAX` where unbound.
//!
//! Terms: the workers are threads of one process and share the loaded dictionary read-only, so every worker
//! numbers terms alike and the output is the in-memory engine's, byte for byte. A term the run computes (a BIND
//! value, an aggregate) goes into one table the process's workers share (`dataflow/mint.rs`), and into the
//! dictionary after the run; a cluster's processes cannot share it yet, so [`check`] refuses those rules there.
//! An aggregate in a subquery is a `reduce` by its group keys, folding each group's rows through the executor's
//! own accumulators; a head's triple terms and minted reifiers are made in the same table. What would number
//! fresh terms in the workers' order (blank nodes in heads), reads rows in an order the engines do not share
//! (SAMPLE, GROUP_CONCAT), or is not lowered yet (OPTIONAL, MINUS, a
//! triple term at an end of a path that may take a zero-length step, LIMIT / OFFSET) is rejected up front by
//! [`check`], never run by another engine in its place.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use differential_dataflow::VecCollection;
use differential_dataflow::collection::AsCollection;
use differential_dataflow::input::Input;
use differential_dataflow::lattice::Lattice;
use differential_dataflow::operators::iterate::Iterate;
use hashbrown::HashMap;
use timely::communication::allocator::zero_copy::initialize::initialize_networking_from_sockets;
use timely::communication::allocator::{AllocatorBuilder, ProcessBuilder};
use timely::container::CapacityContainerBuilder;
use timely::dataflow::operators::core::Exchange;
use timely::dataflow::operators::core::Input as TimelyInput;
use timely::dataflow::operators::core::Partition;
use timely::dataflow::operators::vec::Broadcast;
use timely::dataflow::operators::{Inspect, Probe};
use timely::progress::Timestamp;

use crate::exec::ROW_UNBOUND;
use crate::exec::aggregate::GroupState;
use crate::exec::datetime::DateTime;
use crate::exec::eval::{Env, Eval};
use crate::exec::terms::Terms;
use crate::ir::lower::TemplateTerm;
use crate::ir::{AggregateKind, Expr, GraphTerm, Op, PatternTerm, TriplePattern, VarId, VarSet};
use crate::rules::Rule;
use crate::store::{Overlay, Store, TermId, TermRef, TermSource};

use super::Program;

mod cluster;
mod input;
mod mint;
mod path;
pub use cluster::{Cluster, WAIT};
pub use input::{ShareError, load_share};
use mint::Mint;
pub use mint::Minted;

/// A solution row: one cell per variable of the rule, [`UNBOUND`] where unbound.
type Row = Vec<u32>;
/// A quad as the dataflow carries it: graph, subject, predicate, object.
type Q = [u32; 4];
/// A group of rules of one stage, and whether it reads its own writes.
type Group = (Vec<usize>, bool);

const UNBOUND: u32 = ROW_UNBOUND.0;

/// A construct the dataflow engine does not run: which rule, and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported {
    /// The rule's id.
    pub rule: String,
    /// The construct, as a user wrote it.
    pub construct: &'static str,
}

/// Why a dataflow run stopped without a result.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum DataflowError {
    /// The run passed its `--timeout`.
    #[error(
        "the dataflow engine passed the time budget ({seconds:.1} s) before the fixpoint; nothing was written"
    )]
    #[diagnostic(
        code(reasonctl::dataflow::timeout),
        help(
            "raise --timeout, or run with --engine memory, which stops at the budget with the facts derived so far"
        )
    )]
    Timeout {
        /// The budget, in seconds.
        seconds: f64,
    },
    /// Another process of the cluster passed its own `--timeout`, and every process stopped.
    #[error(
        "process {process} of the dataflow cluster passed its time budget ({seconds:.1} s of its --timeout) before the fixpoint, and every process stopped; nothing was written"
    )]
    #[diagnostic(
        code(reasonctl::dataflow::cluster_timeout),
        help(
            "each process keeps its own --timeout: raise it on process {process} (or give the processes the same budget)"
        )
    )]
    PeerTimeout {
        /// The process whose budget ran out.
        process: u32,
        /// Its budget, in seconds.
        seconds: f64,
    },
    /// The run derived more than `--max-facts`.
    #[error(
        "the dataflow engine derived {derived} facts, past --max-facts {max}; nothing was written"
    )]
    #[diagnostic(
        code(reasonctl::dataflow::max_facts),
        help(
            "raise --max-facts, or run with --engine memory, which stops at the budget with the facts derived so far"
        )
    )]
    MaxFacts {
        /// Facts derived.
        derived: usize,
        /// The budget.
        max: usize,
    },
    /// This process could not listen on its `--hosts` address.
    #[error("the dataflow cluster cannot listen on {address}: {reason}; nothing was written")]
    #[diagnostic(
        code(reasonctl::dataflow::cluster_bind),
        help(
            "the --hosts line of this process (--process) must be an address of this machine with a free port"
        )
    )]
    Bind {
        /// The address.
        address: String,
        /// What the system said.
        reason: String,
    },
    /// Another process of the cluster could not be reached, or did not connect, before the deadline.
    #[error(
        "the dataflow cluster's process {process} ({address}) is not there: {reason}; nothing was written"
    )]
    #[diagnostic(
        code(reasonctl::dataflow::cluster_unreachable),
        help(
            "start every process of the cluster (--process 0 … P-1, each with the same --hosts file) within a minute of each other (or within --timeout), and check that their addresses are reachable"
        )
    )]
    Unreachable {
        /// The other process's index.
        process: usize,
        /// Its address.
        address: String,
        /// Why.
        reason: String,
    },
    /// Another process of the cluster was started on other data, rules or options.
    #[error(
        "the dataflow cluster's process {process} does not match this one: {what}; nothing was written"
    )]
    #[diagnostic(
        code(reasonctl::dataflow::cluster_mismatch),
        help(
            "start every process with the same command line but for --process: the same DATA, --rules, options and --hosts file"
        )
    )]
    Mismatch {
        /// The other process's index.
        process: usize,
        /// What differs.
        what: String,
    },
    /// Another process of the cluster could not read its share of the data.
    #[error(
        "the dataflow cluster's process {process} could not read its share of the data: {message}; nothing was written"
    )]
    #[diagnostic(
        code(reasonctl::dataflow::cluster_input),
        help(
            "each process reads a share of DATA: fix what process {process}'s own error points at, then start every process again"
        )
    )]
    PeerInput {
        /// The process that could not read.
        process: usize,
        /// Its error.
        message: String,
    },
    /// A rule set in SHACL 1.2 Rules' RDF syntax in this process's share of the data.
    #[error(
        "the data holds the rule set {id} in SHACL 1.2 Rules' RDF syntax, which a dataflow cluster does not read from the data (its facts may be cut between processes); nothing was written"
    )]
    #[diagnostic(
        code(reasonctl::dataflow::cluster_rule_set),
        help(
            "move the rule set into a --rules file (SHACL Rules' RDF syntax reads as Turtle: .ttl), or run on one process"
        )
    )]
    RuleSetInData {
        /// The rule set's (or its first rule's) name.
        id: String,
    },
    /// A worker failed, or another process of the cluster went away, during the run.
    #[error("the dataflow run stopped: {reason}; nothing was written")]
    #[diagnostic(
        code(reasonctl::dataflow::cluster_lost),
        help(
            "a process of the cluster ended or lost its connection (a budget such as --timeout or --max-memory stops a process with exit 3): look at that process's own error, then start every process again"
        )
    )]
    Lost {
        /// What the failing thread said.
        reason: String,
    },
    /// Timely could not start or a worker failed.
    #[error("the dataflow engine failed: {reason}")]
    #[diagnostic(
        code(reasonctl::dataflow::failed),
        help(
            "run with --engine memory; please report this with the rules and data that caused it"
        )
    )]
    Failed {
        /// What timely said.
        reason: String,
    },
}

/// How to run: workers, time, budgets.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Worker threads.
    pub workers: usize,
    /// What NOW() returns.
    pub now: DateTime,
    /// When the run must have ended.
    pub deadline: Option<Instant>,
    /// `--timeout`, for the message.
    pub timeout: Option<std::time::Duration>,
    /// `--max-facts`.
    pub max_facts: Option<usize>,
    /// `--processes P --process I --hosts FILE`; `None`: this process alone.
    pub cluster: Option<Cluster>,
    /// Each process keeps its own share of the facts (a cluster writing with `--out-dir`), instead of process 0
    /// gathering them all.
    pub shares: bool,
    /// The output writes the asserted facts too (`--include-asserted`): in a cluster whose processes loaded
    /// shares ([`load_share`]), process 0 gathers them (or each process keeps its share of them).
    pub keep_asserted: bool,
}

/// The constructs of `program` this engine does not run, one per rule and construct, in rule order; with
/// `cluster` (more than one process), also those that compute terms, which processes cannot share yet.
pub fn check(program: &Program, cluster: bool) -> Vec<Unsupported> {
    let mut out = Vec::new();
    for (rule, footprint) in program.rules.iter().zip(&program.footprints) {
        let walk = walk_rule(rule);
        let mut found = walk.found;
        if cluster && walk.computes {
            found.push(IN_CLUSTER);
        }
        // A volatile function's values differ from the in-memory engine's (and from run to run).
        if !footprint.repeatable {
            found.push("a volatile function (RAND, UUID, STRUUID, BNODE)");
        }
        // A head's triple terms and minted reifiers are made in the shared table, as computed values are; a
        // blank node would be numbered in the order workers make them, which shows in the output (rules refuse
        // blank nodes in heads, `rules::head_blank_node`: this is a second guard).
        if (rule.heads.iter()).any(|h| h.terms.iter().any(has_blank)) {
            found.push("a blank node in a rule head");
        }
        let mut seen = Vec::new();
        for construct in found {
            if !seen.contains(&construct) {
                seen.push(construct);
                out.push(Unsupported {
                    rule: rule.id.clone(),
                    construct,
                });
            }
        }
    }
    out
}

/// How many variables an EXISTS pattern mentions that its outer rows may leave unbound, at most: its rows are
/// split by which of them are bound, one part each (2 to that power).
const MAYBE_BOUND: usize = 4;

/// Why a cluster refuses a rule that computes terms.
const IN_CLUSTER: &str = "a computed term (a BIND value, an aggregate, a triple term or minted reifier in a head) in a cluster of processes (computed terms cannot be shared between processes yet; one process with --workers runs them)";

/// What a walk over a body found: the constructs this engine does not run, and whether the body computes terms.
#[derive(Default)]
struct Walk {
    found: Vec<&'static str>,
    computes: bool,
}

/// A rule's body walked ([`check_op`]), and whether it computes terms there or in its heads (a BIND of a
/// computed value, an aggregate, a head's triple term or minted reifier).
fn walk_rule(rule: &Rule) -> Walk {
    let mut walk = Walk::default();
    check_op(&rule.body, &mut walk);
    walk.computes |= rule.heads.iter().any(|h| !is_plain(&h.terms));
    walk
}

/// Whether any rule of `program` computes terms ([`walk_rule`]).
fn computes_terms(program: &Program) -> bool {
    program.rules.iter().any(|rule| walk_rule(rule).computes)
}

/// Whether a head term is, or holds, a blank node.
fn has_blank(t: &TemplateTerm) -> bool {
    match t {
        TemplateTerm::Blank(_) => true,
        TemplateTerm::Const(_) | TemplateTerm::Var(_) => false,
        TemplateTerm::Triple(parts) => parts.iter().any(has_blank),
        TemplateTerm::Reifier(minted) => minted.edge.iter().any(has_blank),
    }
}

fn check_op(op: &Op, walk: &mut Walk) {
    let found = &mut walk.found;
    match op {
        Op::Empty | Op::Unit | Op::Values { .. } => {}
        // A triple term in a pattern matches the triple terms the facts name (decoded by the dictionary every
        // process holds): nothing is minted.
        Op::Pattern(_) => {}
        // A triple term at an end matches the ends of the pairs the path relates, part by part. A zero-length
        // step from one is refused: the executor takes it from the term when the row binds its parts first
        // (as from a constant) and from the graph's nodes when not (as from a variable), so which one depends
        // on its plan.
        Op::Path {
            subject,
            object,
            path,
            ..
        } => {
            if crate::exec::path::nullable(path)
                && [subject, object]
                    .iter()
                    .any(|t| matches!(t, PatternTerm::Triple(_)))
            {
                found.push("a triple term at an end of a property path that may take a zero-length step (*, ?)");
            }
        }
        // `GRAPH <g> { … }`: whether that graph has facts; `GRAPH ?g` ranges over the dataset's names (the
        // named graphs that have facts).
        Op::GraphName(GraphTerm::Named(_) | GraphTerm::Var(_)) => {}
        Op::GraphName(GraphTerm::Default) => found.push("GRAPH over the default graph"),
        Op::Join(ops) | Op::Union(ops) => ops.iter().for_each(|o| check_op(o, walk)),
        Op::LeftJoin { .. } => found.push("OPTIONAL"),
        Op::Minus { .. } => found.push("MINUS"),
        Op::Filter { input, expr } => {
            check_op(input, walk);
            check_filter(expr, (&input.certain_vars(), &input.vars()), walk);
        }
        // A computed value is interned into the run's shared table (`mint`).
        Op::Extend { input, expr, .. } => {
            check_op(input, walk);
            if !matches!(expr, Expr::Var(_) | Expr::Const(_)) {
                walk.computes = true;
                if expr.has_exists() {
                    walk.found.push("EXISTS inside BIND");
                }
            }
        }
        // ORDER BY without LIMIT (rules refuse LIMIT and OFFSET) orders nothing that shows (see `Cx::rows`).
        Op::Project { input, .. }
        | Op::Distinct(input)
        | Op::Reduced(input)
        | Op::OrderBy { input, .. } => check_op(input, walk),
        Op::Slice { .. } => found.push("LIMIT or OFFSET in a subquery"),
        Op::Group {
            input, aggregates, ..
        } => {
            // SAMPLE and GROUP_CONCAT take the rows in the order they come, which differs between the engines.
            if (aggregates.iter()).any(|(_, a)| {
                matches!(
                    a.kind,
                    AggregateKind::Sample | AggregateKind::GroupConcat { .. }
                )
            }) {
                found
                    .push("SAMPLE or GROUP_CONCAT (their values depend on the order rows come in)");
            }
            if (aggregates.iter()).any(|(_, a)| a.expr.as_ref().is_some_and(Expr::has_exists)) {
                found.push("EXISTS inside an aggregate");
            }
            walk.computes = true;
            check_op(input, walk);
        }
    }
}

/// A FILTER's condition: `(NOT) EXISTS { p }` whole, or a conjunction of such and of conditions without EXISTS
/// (each conjunct a filter of its own, see [`conjunction`]).
/// `outer`: the variables the rows filtered always bind, and those they may bind.
fn check_filter(expr: &Expr, outer: (&VarSet, &VarSet), walk: &mut Walk) {
    match (exists_of(expr), conjunction(expr)) {
        (Some((inner, _)), _) => {
            check_op(inner, walk);
            // The outer rows are split by which of the variables the pattern mentions they may leave unbound
            // (`Cx::exists`): one part per subset.
            let (certain, possible) = outer;
            let maybe = (inner.mentioned_vars().intersection(possible).iter())
                .filter(|v| !certain.contains(*v))
                .count();
            if maybe > MAYBE_BOUND {
                walk.found.push(
                    "EXISTS over more than 4 variables that the outer row may leave unbound (bind them in every branch, or split the rule)",
                );
            }
        }
        (None, Some((a, b))) => {
            check_filter(a, outer, walk);
            check_filter(b, outer, walk);
        }
        (None, None) if expr.has_exists() => walk.found.push(
            "EXISTS inside a FILTER expression other than a conjunction (only FILTER (NOT) EXISTS, alone or joined by &&)",
        ),
        (None, None) => {}
    }
}

/// The two sides of `a && b` when EXISTS is in it. FILTER(a && b) keeps a row when both are true (an error in
/// either is not true, and EXISTS never errs): as FILTER(a) then FILTER(b).
fn conjunction(expr: &Expr) -> Option<(&Expr, &Expr)> {
    match expr {
        Expr::And(a, b) if expr.has_exists() => Some((a, b)),
        _ => None,
    }
}

/// `FILTER EXISTS { p }` (`true`) or `FILTER NOT EXISTS { p }` (`false`), under any number of double negations.
fn exists_of(expr: &Expr) -> Option<(&Op, bool)> {
    match expr {
        Expr::Exists(p) => Some((p, true)),
        Expr::Not(e) => match &**e {
            Expr::Exists(p) => Some((p, false)),
            // !!e is e where e cannot err, as EXISTS cannot.
            Expr::Not(e) => exists_of(e),
            _ => None,
        },
        _ => None,
    }
}

/// What lowering reads in one scope: the facts so far, the same split by the predicates the scope's patterns
/// name, and the one empty row.
struct Cx<'s, T: Timestamp + Lattice> {
    facts: VecCollection<'s, T, Q, isize>,
    /// The facts of each predicate a pattern of the scope names: one pass routes every fact to its predicate's
    /// collection, so that a pattern with a constant predicate reads only its facts instead of all of them.
    /// Ordered: every worker must build the same operators in the same order (a map iterated in another order
    /// on each worker would connect one worker's operator to another's).
    by_predicate: std::collections::BTreeMap<u32, VecCollection<'s, T, Q, isize>>,
    unit: VecCollection<'s, T, (), isize>,
    store: Arc<Store>,
    env: Rc<Env>,
    /// The terms the run computes, when its program computes any.
    mint: Option<Arc<Mint>>,
}

impl<'s, T: Timestamp + Lattice> Cx<'s, T> {
    /// The scope over `facts` for the rules `members` (the predicates their footprints read split out).
    fn new(
        facts: VecCollection<'s, T, Q, isize>,
        unit: VecCollection<'s, T, (), isize>,
        (store, env, mint): (Arc<Store>, Rc<Env>, Option<Arc<Mint>>),
        (members, reads): (&[usize], &[Vec<u32>]),
    ) -> Self {
        let mut preds: Vec<u32> = members
            .iter()
            .flat_map(|&r| reads[r].iter().copied())
            .collect();
        preds.sort_unstable();
        preds.dedup();
        let mut by_predicate = std::collections::BTreeMap::new();
        if !preds.is_empty() {
            let index: HashMap<u32, u64> = (preds.iter().enumerate())
                .map(|(i, &p)| (p, i as u64))
                .collect();
            let other = preds.len() as u64;
            // The last part (predicates no pattern names) is left unread.
            let parts = facts
                .inner
                .clone()
                .partition::<CapacityContainerBuilder<Vec<(Q, T, isize)>>, _, _>(
                    other + 1,
                    move |(q, t, r)| (index.get(&q[2]).copied().unwrap_or(other), (q, t, r)),
                );
            by_predicate = preds
                .iter()
                .zip(parts)
                .map(|(&p, part)| (p, part.as_collection()))
                .collect();
        }
        Cx {
            facts,
            by_predicate,
            unit,
            store,
            env,
            mint,
        }
    }

    fn rows(&self, op: &Op, width: usize) -> VecCollection<'s, T, Row, isize> {
        match op {
            Op::Empty => self.unit.clone().flat_map(|()| None::<Row>),
            Op::Unit => self.unit.clone().map(move |()| vec![UNBOUND; width]),
            Op::Pattern(tp) => {
                let source = match tp.terms[1] {
                    PatternTerm::Const(p) => self.by_predicate.get(&p.0),
                    _ => None,
                };
                let (tp, names) = (tp.clone(), self.names());
                source
                    .unwrap_or(&self.facts)
                    .clone()
                    .flat_map(move |q| match_pattern(&tp, q, width, &names))
            }
            Op::Join(ops) => {
                let mut acc: Option<(VecCollection<'s, T, Row, isize>, VarSet, VarSet)> = None;
                for o in ops {
                    let rows = self.rows(o, width);
                    let (c, p) = (o.certain_vars(), o.vars());
                    acc = Some(match acc {
                        None => (rows, c, p),
                        Some((left, lc, lp)) => {
                            let joined = join(left, &lc, &lp, rows, &c, &p);
                            let mut nc = lc;
                            nc.extend(&c);
                            let mut np = lp;
                            np.extend(&p);
                            (joined, nc, np)
                        }
                    });
                }
                acc.map_or_else(|| self.rows(&Op::Unit, width), |(rows, ..)| rows)
            }
            Op::Union(ops) => {
                let mut out = self.rows(&Op::Empty, width);
                for o in ops {
                    out = out.concat(self.rows(o, width));
                }
                out
            }
            Op::Values { vars, rows } => {
                let table: Vec<Row> = rows
                    .iter()
                    .map(|r| {
                        let mut row = vec![UNBOUND; width];
                        for (v, t) in vars.iter().zip(r) {
                            row[v.index()] = t.map_or(UNBOUND, |t| t.0);
                        }
                        row
                    })
                    .collect();
                self.unit.clone().flat_map(move |()| table.clone())
            }
            Op::Filter { input, expr } => {
                let rows = self.rows(input, width);
                self.filtered(rows, (&input.certain_vars(), &input.vars()), expr, width)
            }
            Op::Extend { input, var, expr } => {
                let rows = self.rows(input, width);
                self.extended(rows, *var, expr, width)
            }
            // group(k, aggregates(rows of k)) :- the input's rows, grouped by the key variables' cells; with no
            // keys one group, even over no rows (COUNT 0), seeded by the one unit row. Each group's rows are folded
            // through the executor's own accumulators (`aggregate::GroupState`), a row as often as it occurs.
            Op::Group {
                input,
                keys,
                aggregates,
            } => {
                let mint = (self.mint.clone()).expect("a program with aggregates has a mint");
                let env = self.env.clone();
                let key_cells: Vec<usize> = keys.iter().map(|v| v.index()).collect();
                let key_vars = key_cells.clone();
                let aggregates = aggregates.clone();
                // Over the facts as a set, as the executor reads them: a fact two stages derive is twice in
                // the collection, which no pattern elsewhere minds (heads are sets), but COUNT and SUM would.
                let mut keyed = self
                    .as_set(input)
                    .rows(input, width)
                    .map(move |r| (key_of(&r, &key_cells), Some(r)));
                if keys.is_empty() {
                    keyed = keyed.concat(self.unit.clone().map(|()| (Vec::new(), None)));
                }
                keyed
                    .reduce(move |key: &Row, rows: &[(&Option<Row>, isize)], out| {
                        let mut group = GroupState::new(&aggregates);
                        let mut cells = vec![ROW_UNBOUND; width];
                        for (&k, &i) in key.iter().zip(&key_vars) {
                            cells[i] = TermId(k);
                        }
                        let done = mint.with(|terms| {
                            let mut row: Vec<TermId> = Vec::with_capacity(width);
                            for (r, n) in rows {
                                let Some(r) = r else { continue };
                                row.clear();
                                row.extend(r.iter().map(|&t| TermId(t)));
                                for _ in 0..*n {
                                    group.add((terms, &env), &aggregates, &row, 0);
                                }
                            }
                            group.finish(terms, &aggregates, &mut cells);
                            cells
                        });
                        out.push((done.iter().map(|t| t.0).collect::<Row>(), 1));
                    })
                    .map(|(_, row)| row)
            }
            // A subquery's ORDER BY orders a bag that is joined or grouped next: with no LIMIT (rules refuse it)
            // and no order-sensitive aggregate (`check` refuses SAMPLE and GROUP_CONCAT), the order shows nowhere.
            Op::OrderBy { input, .. } => self.rows(input, width),
            Op::Project { input, vars } => {
                let keep: Vec<usize> = vars.iter().map(|v| v.index()).collect();
                self.rows(input, width).map(move |r| {
                    let mut out = vec![UNBOUND; r.len()];
                    for &i in &keep {
                        out[i] = r[i];
                    }
                    out
                })
            }
            Op::Distinct(input) | Op::Reduced(input) => self.rows(input, width).distinct(),
            Op::Path {
                subject,
                path,
                object,
                graph,
            } => self.path_rows((subject, path, object), graph, width),
            // One empty row if the graph has facts (is in the dataset), as the executor's `graphs` finds.
            Op::GraphName(GraphTerm::Named(n)) => {
                let n = n.0;
                (self.facts.clone())
                    .flat_map(move |q| (q[0] == n).then_some(()))
                    .distinct()
                    .map(move |()| vec![UNBOUND; width])
            }
            // A row for each named graph that has facts, `?g` bound to its name, as the executor's `graphs`
            // ranges over the view's named graphs.
            // name(g) :- fact(g, s, p, o), g ≠ the default graph.
            Op::GraphName(GraphTerm::Var(v)) => {
                let v = v.index();
                (self.facts.clone())
                    .flat_map(|q| (q[0] != TermId::DEFAULT_GRAPH.0).then_some(q[0]))
                    .distinct()
                    .map(move |g| {
                        let mut row = vec![UNBOUND; width];
                        row[v] = g;
                        row
                    })
            }
            Op::GraphName(GraphTerm::Default)
            | Op::LeftJoin { .. }
            | Op::Minus { .. }
            | Op::Slice { .. } => unreachable!("check rejects {op:?}"),
        }
    }

    // bind(row, v, e) :- row, value = eval(e, row), (row[v] unbound ; row[v] = value).
    // An expression that errs leaves `v` unbound, as the executor's `Extend`.
    fn extended(
        &self,
        rows: VecCollection<'s, T, Row, isize>,
        var: VarId,
        expr: &Expr,
        width: usize,
    ) -> VecCollection<'s, T, Row, isize> {
        let (var, value) = (var.index(), expr.clone());
        let (mint, env) = (self.mint.clone(), self.env.clone());
        let buffer: RefCell<Vec<TermId>> = RefCell::new(Vec::with_capacity(width));
        rows.flat_map(move |mut r| {
            let id = match &value {
                Expr::Const(c) => Some(c.0),
                Expr::Var(v) => Some(r[v.index()]).filter(|&t| t != UNBOUND),
                computed => {
                    let mint = mint
                        .as_ref()
                        .expect("a program that computes terms has a mint");
                    let mut row = buffer.borrow_mut();
                    row.clear();
                    row.extend(r.iter().map(|&t| TermId(t)));
                    mint.bind(&env, computed, &row).map(|t| t.0)
                }
            };
            match id {
                Some(id) if r[var] != UNBOUND && r[var] != id => None,
                Some(id) => {
                    r[var] = id;
                    Some(r)
                }
                None => Some(r),
            }
        })
    }

    /// `FILTER (expr)` over `rows`, whose certain and possible variables are `vars`: a conjunction with EXISTS in
    /// it as one filter after the other (filter(a && b) = filter(b) ∘ filter(a)), `(NOT) EXISTS` as a semijoin
    /// (antijoin), any other condition through the executor's evaluator.
    fn filtered(
        &self,
        rows: VecCollection<'s, T, Row, isize>,
        vars: (&VarSet, &VarSet),
        expr: &Expr,
        width: usize,
    ) -> VecCollection<'s, T, Row, isize> {
        if exists_of(expr).is_none() {
            if let Some((a, b)) = conjunction(expr) {
                let first = self.filtered(rows, vars, a, width);
                return self.filtered(first, vars, b, width);
            }
        }
        if let Some((inner, keep)) = exists_of(expr) {
            return self.exists(rows, vars, (inner, keep), width);
        }
        let expr = expr.clone();
        let store = self.store.clone();
        let env = self.env.clone();
        let buffer: RefCell<Vec<TermId>> = RefCell::new(Vec::with_capacity(width));
        if let Some(mint) = self.mint.clone() {
            // Rows may hold computed terms: evaluated over the shared table.
            return rows.filter(move |r| {
                let mut row = buffer.borrow_mut();
                row.clear();
                row.extend(r.iter().map(|&t| TermId(t)));
                mint.test(&env, &expr, &row)
            });
        }
        rows.filter(move |r| {
            let mut row = buffer.borrow_mut();
            row.clear();
            row.extend(r.iter().map(|&t| TermId(t)));
            let terms = Terms::new(&store.dict);
            let eval = Eval {
                terms: &terms,
                env: &env,
                exists: &[],
            };
            eval.test(&expr, &row, 0)
        })
    }

    /// `FILTER (NOT) EXISTS { inner }` (`keep`: EXISTS) over `rows`, whose certain and possible variables are
    /// `(certain, possible)`. The pattern sees each outer row's values (SPARQL's substitution, as the executor
    /// seeds it with the row): rows that leave some of the variables it mentions unbound go apart, one part per
    /// set of those bound (`maybe`, at most [`MAYBE_BOUND`] of them), each with those variables certain.
    fn exists(
        &self,
        rows: VecCollection<'s, T, Row, isize>,
        (certain, possible): (&VarSet, &VarSet),
        (inner, keep): (&Op, bool),
        width: usize,
    ) -> VecCollection<'s, T, Row, isize> {
        let mentioned = inner.mentioned_vars();
        let maybe: Vec<VarId> = (mentioned.intersection(possible).iter())
            .filter(|v| !certain.contains(*v))
            .collect();
        if maybe.is_empty() {
            return self.exists_over(rows, certain, (inner, keep), width);
        }
        let mut out = self.rows(&Op::Empty, width);
        for bound in 0..1u32 << maybe.len() {
            let cells: Vec<(usize, bool)> = (maybe.iter().enumerate())
                .map(|(i, v)| (v.index(), bound >> i & 1 == 1))
                .collect();
            let part = rows
                .clone()
                .filter(move |r| cells.iter().all(|&(c, b)| (r[c] != UNBOUND) == b));
            let mut these = certain.clone();
            for (i, v) in maybe.iter().enumerate() {
                if bound >> i & 1 == 1 {
                    these.insert(*v);
                }
            }
            out = out.concat(self.exists_over(part, &these, (inner, keep), width));
        }
        out
    }

    /// [`Cx::exists`] over rows that bind every variable of `certain`. When every one of them the pattern mentions
    /// is one it always binds, the pattern runs on its own and meets the rows on those; otherwise (a FILTER of
    /// the pattern reads one) it runs seeded with the rows' distinct values of them ([`Cx::rows_seeded`]).
    // exists(row) :- key(row, S) ∈ { key(r, S) | r ∈ inner seeded with { key(row', S) | row' } },
    //                S = the certain variables the pattern mentions.
    fn exists_over(
        &self,
        rows: VecCollection<'s, T, Row, isize>,
        certain: &VarSet,
        (inner, keep): (&Op, bool),
        width: usize,
    ) -> VecCollection<'s, T, Row, isize> {
        let reads = inner.mentioned_vars().intersection(certain);
        let shared: Vec<VarId> = reads.iter().collect();
        let found = if reads.is_subset(&inner.certain_vars()) {
            self.rows(inner, width)
        } else {
            let cells = shared.clone();
            let seed = (rows.clone())
                .map(move |r| {
                    let mut s = vec![UNBOUND; width];
                    for v in &cells {
                        s[v.index()] = r[v.index()];
                    }
                    s
                })
                .distinct();
            self.rows_seeded(inner, (&seed, &reads), width)
        };
        let keys = found
            .map({
                let shared = shared.clone();
                move |r| key(&r, &shared)
            })
            .distinct();
        let keyed = rows.map(move |r| (key(&r, &shared), r));
        if keep {
            keyed.semijoin(keys).map(|(_, r)| r)
        } else {
            keyed.antijoin(keys).map(|(_, r)| r)
        }
    }

    /// The rows of `op` met by `seed`'s rows (which bind exactly `vars`), as the executor runs an EXISTS pattern
    /// from the outer rows: `op`'s top FILTERs read the joined rows (so they see the seed's values), and
    /// everything below them is evaluated on its own and joined (SPARQL's bottom-up join: a BIND or a nested
    /// group's FILTER sees only its own group's variables; the planner seeds an operand only where that gives
    /// the same rows, `plan::planner::seedable`).
    // seeded(FILTER(p, e), σ) = FILTER(seeded(p, σ), e)        seeded(p, σ) = σ ⋈ p  otherwise
    fn rows_seeded(
        &self,
        op: &Op,
        (seed, vars): (&VecCollection<'s, T, Row, isize>, &VarSet),
        width: usize,
    ) -> VecCollection<'s, T, Row, isize> {
        let with = |set: VarSet| {
            let mut set = set;
            set.extend(vars);
            set
        };
        match op {
            Op::Filter { input, expr } => {
                let rows = self.rows_seeded(input, (seed, vars), width);
                let certain = with(input.certain_vars());
                self.filtered(rows, (&certain, &with(input.vars())), expr, width)
            }
            other => join(
                seed.clone(),
                vars,
                vars,
                self.rows(other, width),
                &other.certain_vars(),
                &other.vars(),
            ),
        }
    }

    /// This scope over its facts as a set, for `op` (an aggregate's input): each predicate's facts made distinct,
    /// and all facts too when `op` reads facts of any predicate (a variable predicate, a path, a graph's name).
    fn as_set(&self, op: &Op) -> Self {
        let facts = if reads_any_predicate(op) {
            self.facts.clone().distinct()
        } else {
            self.facts.clone()
        };
        Cx {
            facts,
            by_predicate: (self.by_predicate.iter())
                .map(|(&p, c)| (p, c.clone().distinct()))
                .collect(),
            unit: self.unit.clone(),
            store: self.store.clone(),
            env: self.env.clone(),
            mint: self.mint.clone(),
        }
    }

    /// No facts.
    fn rows_none(&self) -> VecCollection<'s, T, Q, isize> {
        self.unit.clone().flat_map(|()| None::<Q>)
    }

    /// The facts one rule derives over this scope's facts.
    fn rule(&self, rule: &Rule) -> VecCollection<'s, T, Q, isize> {
        let width = rule.vars.len();
        let heads: Vec<([TemplateTerm; 3], u32)> = rule
            .heads
            .iter()
            .map(|h| (h.terms.clone(), h.graph.unwrap_or(TermId::DEFAULT_GRAPH).0))
            .collect();
        let names = self.names();
        let buffer: RefCell<Vec<TermId>> = RefCell::new(Vec::with_capacity(width));
        self.rows(&rule.body, width).flat_map(move |r| {
            let mut out: Vec<Q> = Vec::with_capacity(heads.len());
            for (terms, g) in &heads {
                // A triple term or a minted reifier (an annotated head): instantiated as the in-memory engine
                // does (`query::instantiate`), its term from the shared table.
                if !is_plain(terms) {
                    let mint = names
                        .mint
                        .as_ref()
                        .expect("a head that makes terms has a mint");
                    let mut row = buffer.borrow_mut();
                    row.clear();
                    row.extend(r.iter().map(|&t| TermId(t)));
                    let made =
                        mint.with(|t| crate::query::instantiate(t, terms, &row, &mut Vec::new()));
                    if let Some([s, p, o]) = made {
                        out.push([*g, s.0, p.0, o.0]);
                    }
                    continue;
                }
                let cell = |t: &TemplateTerm| match t {
                    TemplateTerm::Const(c) => Some(c.0),
                    TemplateTerm::Var(v) => Some(r[v.index()]).filter(|&x| x != UNBOUND),
                    _ => None,
                };
                let (Some(s), Some(p), Some(o)) =
                    (cell(&terms[0]), cell(&terms[1]), cell(&terms[2]))
                else {
                    continue;
                };
                // Subjects are IRIs or blank nodes, predicates IRIs (as `query::instantiate` checks).
                let subject = names.term(s, |t| matches!(t, TermRef::Iri(_) | TermRef::Blank(_)));
                if !subject || !names.term(p, |t| matches!(t, TermRef::Iri(_))) {
                    continue;
                }
                out.push([*g, s, p, o]);
            }
            out
        })
    }
}

/// Whether a head's terms are constants and variables only.
fn is_plain(terms: &[TemplateTerm; 3]) -> bool {
    (terms.iter()).all(|t| matches!(t, TemplateTerm::Const(_) | TemplateTerm::Var(_)))
}

/// The terms facts and rows name: the dictionary's, and those the run computes when it computes any.
#[derive(Clone)]
struct Names {
    store: Arc<Store>,
    mint: Option<Arc<Mint>>,
}

impl Names {
    /// `f` of the term `id` names.
    fn term<R>(&self, id: u32, f: impl FnOnce(TermRef<'_>) -> R) -> R {
        match &self.mint {
            Some(mint) => mint.term(TermId(id), f),
            None => f(self.store.dict.term(TermId(id))),
        }
    }
}

impl<'s, T: Timestamp + Lattice> Cx<'s, T> {
    fn names(&self) -> Names {
        Names {
            store: self.store.clone(),
            mint: self.mint.clone(),
        }
    }
}

/// Whether lowering `op` reads the scope's facts of every predicate, not only its predicates' collections: a
/// pattern with a variable predicate, a property path (its zero-length steps, its negated sets), a graph's name.
fn reads_any_predicate(op: &Op) -> bool {
    match op {
        Op::Empty | Op::Unit | Op::Values { .. } => false,
        Op::Pattern(tp) => !matches!(tp.terms[1], PatternTerm::Const(_)),
        Op::Path { .. } | Op::GraphName(_) => true,
        Op::Join(ops) | Op::Union(ops) => ops.iter().any(reads_any_predicate),
        Op::Filter { input, expr } => {
            let mut inner = false;
            expr.visit_exists(true, &mut |p, _| inner |= reads_any_predicate(p));
            inner || reads_any_predicate(input)
        }
        Op::LeftJoin { left, right, .. } | Op::Minus { left, right } => {
            reads_any_predicate(left) || reads_any_predicate(right)
        }
        Op::Extend { input, .. }
        | Op::Project { input, .. }
        | Op::Distinct(input)
        | Op::Reduced(input)
        | Op::OrderBy { input, .. }
        | Op::Slice { input, .. }
        | Op::Group { input, .. } => reads_any_predicate(input),
    }
}

/// The cells of `vars` in `row`, as a key.
fn key_of(row: &[u32], vars: &[usize]) -> Row {
    vars.iter().map(|&i| row[i]).collect()
}

/// The row of a triple pattern over one quad, if it matches.
fn match_pattern(tp: &TriplePattern, [g, s, p, o]: Q, width: usize, names: &Names) -> Option<Row> {
    let mut row = vec![UNBOUND; width];
    let graph_ok = match tp.graph {
        GraphTerm::Default => g == TermId::DEFAULT_GRAPH.0,
        GraphTerm::Named(n) => g == n.0,
        GraphTerm::Var(v) => g != TermId::DEFAULT_GRAPH.0 && bind_var(v, g, &mut row),
    };
    (graph_ok
        && (tp.terms.iter().zip([s, p, o])).all(|(t, value)| bind_term(t, value, &mut row, names)))
    .then_some(row)
}

/// Binds `v` to `value` in `row`, or checks that it is bound to it.
fn bind_var(v: VarId, value: u32, row: &mut Row) -> bool {
    let cell = &mut row[v.index()];
    if *cell == UNBOUND {
        *cell = value;
    }
    *cell == value
}

/// Matches a pattern's term against `value`: a constant must be it, a variable takes it (or must agree), a
/// triple term `<<( s p o )>>` matches a triple term whose parts match `s`, `p` and `o` (nested ones too).
// bind(<<( s p o )>>, v) :- v = <<( a b c )>>, bind(s, a), bind(p, b), bind(o, c).
fn bind_term(t: &PatternTerm, value: u32, row: &mut Row, names: &Names) -> bool {
    match t {
        PatternTerm::Const(c) => c.0 == value,
        PatternTerm::Var(v) => bind_var(*v, value, row),
        // The parts first, then each matched: a computed term's parts are read under the table's lock.
        PatternTerm::Triple(parts) => match names.term(value, |t| match t {
            TermRef::Triple(ids) => Some(ids),
            _ => None,
        }) {
            Some(ids) => (parts.iter().zip(ids)).all(|(t, id)| bind_term(t, id.0, row, names)),
            None => false,
        },
    }
}

fn key(row: &[u32], vars: &[VarId]) -> Vec<u32> {
    vars.iter().map(|v| row[v.index()]).collect()
}

/// The natural join of two row collections: keyed by the variables both always bind, the variables either may
/// bind checked after (compatible: equal, or unbound on one side).
fn join<'s, T: Timestamp + Lattice>(
    left: VecCollection<'s, T, Row, isize>,
    left_certain: &VarSet,
    left_possible: &VarSet,
    right: VecCollection<'s, T, Row, isize>,
    right_certain: &VarSet,
    right_possible: &VarSet,
) -> VecCollection<'s, T, Row, isize> {
    let keyed: Vec<VarId> = left_certain.intersection(right_certain).iter().collect();
    let maybe: Vec<usize> = left_possible
        .intersection(right_possible)
        .iter()
        .filter(|v| !keyed.contains(v))
        .map(VarId::index)
        .collect();
    let right_vars: Vec<usize> = right_possible.iter().map(VarId::index).collect();
    let lk = keyed.clone();
    let l = left.map(move |r| (key(&r, &lk), r));
    let r = right.map(move |r| (key(&r, &keyed), r));
    l.join_map(r, move |_, a: &Row, b: &Row| {
        for &i in &maybe {
            if a[i] != UNBOUND && b[i] != UNBOUND && a[i] != b[i] {
                return None;
            }
        }
        let mut out = a.clone();
        for &i in &right_vars {
            if out[i] == UNBOUND {
                out[i] = b[i];
            }
        }
        Some(out)
    })
    .flat_map(|r| r)
}

/// `made`, its rows shown to `count` on the way (each `(fact, diff)` as it is made, before any `distinct`), when
/// there is a count.
fn shown_to<'s, T: Timestamp + Lattice>(
    made: VecCollection<'s, T, Q, isize>,
    count: Option<&Counter>,
) -> VecCollection<'s, T, Q, isize> {
    match count {
        None => made,
        Some(count) => {
            let count = count.clone();
            (made.inner)
                .inspect(move |(q, _, diff)| count.see(q, *diff))
                .as_collection()
        }
    }
}

/// How many records `c` holds, broadcast to every worker of every process and kept in `into`; `probe` waits for
/// it.
fn counted_everywhere<'s>(
    c: VecCollection<'s, u64, (), isize>,
    into: &Arc<std::sync::atomic::AtomicUsize>,
    probe: &timely::dataflow::ProbeHandle<u64>,
) {
    let into = into.clone();
    c.count()
        .inner
        .broadcast()
        .inspect(move |(((), n), _, diff)| {
            if *diff > 0 {
                into.store(*n as usize, std::sync::atomic::Ordering::Relaxed);
            }
        })
        .probe_with(probe);
}

/// Under `--max-facts`: the distinct derived facts this process's workers have made, counted once each (a set
/// shared by the workers, in shards to spare them waiting on one lock).
#[derive(Clone)]
struct Counter {
    store: Arc<Store>,
    seen: Arc<Vec<Mutex<hashbrown::HashSet<Q>>>>,
    hasher: hashbrown::DefaultHashBuilder,
    counted: Arc<std::sync::atomic::AtomicUsize>,
}

/// Shards of [`Counter`]'s set.
const COUNTER_SHARDS: usize = 64;

impl Counter {
    fn new(store: Arc<Store>, counted: Arc<std::sync::atomic::AtomicUsize>) -> Self {
        Self {
            store,
            seen: Arc::new((0..COUNTER_SHARDS).map(|_| Mutex::default()).collect()),
            hasher: hashbrown::DefaultHashBuilder::default(),
            counted,
        }
    }

    /// A made fact: counted if it is new, and neither asserted nor a retraction.
    fn see(&self, q: &Q, diff: isize) {
        use std::hash::BuildHasher;
        if diff <= 0 {
            return;
        }
        let [g, s, p, o] = q.map(TermId);
        if self
            .store
            .quads
            .graph(g)
            .is_some_and(|i| i.contains([s, p, o]))
        {
            return;
        }
        let shard = self.hasher.hash_one(q) as usize % COUNTER_SHARDS;
        if self.seen[shard]
            .lock()
            .expect("a worker panicked")
            .insert(*q)
        {
            self.counted
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

/// How often, at most, a process in a cluster under `--max-facts` announces its `owned` count while it grows.
const ANNOUNCE_EVERY: std::time::Duration = std::time::Duration::from_millis(10);

/// What a dataflow run moved between processes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Exchanged {
    /// Bytes this process sent to the others (0 for one process).
    pub bytes_sent: u64,
}

/// What a run leaves with this process.
#[derive(Debug)]
pub struct Ran {
    /// The derived facts this process holds: all of them (one process, or process 0 of a cluster that gathers),
    /// its share ([`Settings::shares`]), or none (the other processes of a cluster that gathers).
    pub overlay: Overlay,
    /// With [`Settings::shares`]: the asserted facts of this process's share, sorted (what it writes with
    /// `--include-asserted`; every asserted fact is in one process's share).
    pub asserted: Option<Vec<Q>>,
    /// What was sent.
    pub exchanged: Exchanged,
    /// The terms the run computed, which `overlay`'s facts may name: [`Minted::adopt`] interns them.
    pub minted: Minted,
}

/// Runs `program` over `store`'s asserted facts on `settings.workers` threads (of this process, and of the
/// others of `settings.cluster`). The caller has [`check`]ed the program.
pub fn materialize(
    program: &Program,
    store: Arc<Store>,
    settings: &Settings,
) -> Result<Ran, DataflowError> {
    let rules: Arc<Vec<Rule>> = Arc::new(program.rules.clone());
    // The predicates each rule's body reads (its footprint's; a class read is an `rdf:type` read).
    let reads: Arc<Vec<Vec<u32>>> = Arc::new(
        (program.footprints.iter())
            .map(|f| {
                f.reads
                    .iter()
                    .filter_map(|a| a.key.predicate())
                    .map(|p| p.0)
                    .collect()
            })
            .collect(),
    );
    // Groups by stage, each with its rules and whether it reads its own writes.
    let deps = &program.deps;
    let stages: Arc<Vec<Vec<Group>>> = Arc::new(
        (0..deps.stage_count())
            .map(|s| {
                deps.stage(s)
                    .map(|(_, g)| (g.rules.clone(), g.recursive))
                    .collect()
            })
            .collect(),
    );
    let found: Arc<Mutex<Vec<Q>>> = Arc::new(Mutex::new(Vec::new()));
    // A cluster whose processes loaded shares of the data (`load_share`): its links, and how many asserted facts
    // the shares hold. No process holds every asserted fact, so the facts come out flagged as asserted or not
    // (`flagged`, below).
    let joined = settings
        .cluster
        .as_ref()
        .and_then(|_| cluster::take_joined());
    let split = joined.is_some();
    // A process's count of made facts (`counted`) leaves out only its own share's asserted facts: it may count
    // the others' asserted facts again, so it is past the budget for sure only when it passes it by as many; the
    // announced counts summed, by as many as all shares hold.
    let (slack, slack_sum) = joined
        .as_ref()
        .map_or((0, 0), |j| (j.elsewhere as usize, j.everywhere));
    let flagged: Arc<Mutex<Vec<(Q, bool)>>> = Arc::new(Mutex::new(Vec::new()));
    // With shares of the data: how many derived (not asserted) facts the whole cluster holds, broadcast.
    let exact = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let keep_asserted = settings.keep_asserted;
    // With shares of the output on one process (a cluster's processes flag facts instead, `exact`): how many facts,
    // asserted and derived, its workers hold together, broadcast to every worker.
    let total = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let shares = settings.shares;
    let timed_out = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // Under --max-facts: the distinct derived facts this process's workers have made so far, so that a run past
    // the budget stops while deriving. A monotone rule's rows are counted as they are made, before the `distinct`
    // that would first gather them all (a cross product of 5,000 facts made 25M rows, 3.4 GB, before a count
    // after `distinct` saw one); a rule that negates, whose rows a later retraction may take back, when its
    // stage's `distinct` gives them. In a cluster each process counts what its workers make: the cluster holds at
    // least as many facts as any one process made, so a process past the budget stops the cluster. It announces
    // its count to every worker of every process (`over`), and each stops with the budget's error (exit 3); a
    // process stopping alone would end the others with `cluster_lost` (exit 1). A cluster past the budget
    // though no process is: each process also counts the distinct derived facts whose `distinct` runs on its
    // workers (`owned`: `distinct` partitions facts by hash over every worker of every process, so each fact is
    // some one process's), its first worker announces that count as it grows (kind 2), and a worker that sees
    // the announced counts sum past the budget announces the sum as a process past it does.
    //   cluster(t) = Σ_process owned(process, t)    exact: no fact is two processes', none goes uncounted
    let counted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let owned = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let over = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    // In a cluster: a process whose own --timeout passed, and its budget in milliseconds, as announced.
    let late: Arc<Mutex<Option<(u32, u64)>>> = Arc::new(Mutex::new(None));
    let max_facts = settings.max_facts;
    let counter = max_facts.map(|_| Counter::new(store.clone(), counted.clone()));
    // The terms the run computes (BIND values, aggregates), in one table the workers share; a cluster's
    // processes could not share it, and `check` refuses these constructs there.
    let mint: Option<Arc<Mint>> =
        computes_terms(program).then(|| Arc::new(Mint::new(store.clone())));
    let in_cluster = settings.cluster.is_some();
    let owner =
        (max_facts.is_some() && in_cluster).then(|| Counter::new(store.clone(), owned.clone()));
    let workers = settings.workers.max(1);
    let processes = settings.cluster.as_ref().map_or(1, |c| c.addresses.len());
    // Each process's `owned` count, as last announced.
    let sums: Arc<Vec<std::sync::atomic::AtomicU64>> =
        Arc::new((0..processes).map(|_| Default::default()).collect());
    let monotone: Arc<Vec<bool>> = Arc::new(
        program
            .footprints
            .iter()
            .map(|f| !f.is_nonmonotone())
            .collect(),
    );
    // The workers' ends: in a cluster a worker that stops early is held, not returned (see `cluster::Ending`).
    let ended = Arc::new(cluster::Ended::default());
    let (now, deadline) = (settings.now, settings.deadline);
    let settings_timeout = settings.timeout;
    let shared = (
        (store.clone(), flagged.clone(), exact.clone()),
        found.clone(),
        timed_out.clone(),
        total.clone(),
        (counted.clone(), over.clone(), late.clone()),
        (owned.clone(), sums.clone()),
    );
    // Bytes this process sends to the others (a cluster's exchange volume, for --stats; its share's terms, sent while
    // loading, included).
    let sent = Arc::new(std::sync::atomic::AtomicU64::new(
        joined.as_ref().map_or(0, |j| j.sent),
    ));
    // The workers' allocators: this process's threads, and with a cluster the links to the other processes.
    let (builders, links): (Vec<AllocatorBuilder>, Box<dyn std::any::Any + Send>) = match &settings
        .cluster
    {
        None => timely::CommunicationConfig::Process(workers)
            .try_build()
            .map_err(|reason| DataflowError::Failed { reason })?,
        Some(c) => {
            // Connected while loading (`load_share`): the processes check that they compiled one program.
            let Some(joined) = joined else {
                return Err(DataflowError::Failed {
                    reason: "a cluster's processes load their shares first (load_share)".to_owned(),
                });
            };
            cluster::agree(&joined.links, c.process, program, &store.dict)?;
            let links = joined.links;
            let links: Vec<Option<cluster::Counted>> = links
                .into_iter()
                .map(|l| l.map(|s| cluster::Counted::new(s, sent.clone())))
                .collect();
            let hooks = timely::communication::Hooks::default();
            let local = ProcessBuilder::new_typed_vector(workers, hooks.refill.clone(), None);
            let (builders, guard) =
                initialize_networking_from_sockets(local, links, c.process, workers, hooks)
                    .map_err(|e| DataflowError::Failed {
                        reason: e.to_string(),
                    })?;
            let builders = builders.into_iter().map(AllocatorBuilder::Tcp).collect();
            (builders, Box::new(cluster::UnlessLost(Some(guard))))
        }
    };
    cluster::keep_worker_panics();
    let config = timely::WorkerConfig::default();
    let ending = ended.clone();
    let mints = mint.clone();
    let guards = timely::execute::execute_from(builders, links, config, move |worker| {
        // Declared first, dropped last: after the dataflow, before timely drops the worker's links.
        let mut ending = ending.ending(in_cluster);
        let (
            (store, flagged, exact),
            found,
            timed_out,
            total,
            (counted, over, late),
            (owned, sums),
        ) = shared.clone();
        let (counter, owner, monotone) = (counter.clone(), owner.clone(), monotone.clone());
        let mint = mints.clone();
        // Each worker evaluates with its own environment (it caches regexes; not shared between threads).
        let env = Rc::new(Env::new(now, None));
        let (index, peers) = (worker.index(), worker.peers());
        let (mut facts_in, mut unit_in, probe) = worker.dataflow::<u64, _, _>(|scope| {
            let (facts_in, asserted) = scope.new_collection::<Q, isize>();
            let (unit_in, unit) = scope.new_collection::<(), isize>();
            // Each stage's facts are deduplicated among themselves (a full `distinct` of every fact per stage would
            // arrange the whole dataset once per stage); a fact derived again by a later stage only repeats in
            // the collection (patterns are bags, heads sets), and the end deduplicates once.
            let mut facts = asserted.clone();
            for stage in stages.iter() {
                let mut derived = Vec::new();
                // The stage's non-recursive rules read one split of the facts so far.
                let flat: Vec<usize> = (stage.iter())
                    .filter(|(_, recursive)| !recursive)
                    .flat_map(|(group, _)| group.iter().copied())
                    .collect();
                let cx = (!flat.is_empty()).then(|| {
                    Cx::new(
                        facts.clone(),
                        unit.clone(),
                        (store.clone(), env.clone(), mint.clone()),
                        (&flat, &reads),
                    )
                });
                for &r in &flat {
                    let made = cx.as_ref().expect("a scope for the rules").rule(&rules[r]);
                    derived.push(shown_to(made, counter.as_ref().filter(|_| monotone[r])));
                }
                for (group, recursive) in stage {
                    if *recursive {
                        // x = distinct(rules(G, facts ∪ x)), from x = ∅: iterated on differences (semi-naive).
                        let (unit, store, env) = (unit.clone(), store.clone(), env.clone());
                        let mint = mint.clone();
                        let (rules, group, base) = (rules.clone(), group.clone(), facts.clone());
                        let reads = reads.clone();
                        let (counter, owner, monotone) =
                            (counter.clone(), owner.clone(), monotone.clone());
                        derived.push(facts.scope().iterate(move |inner, x| {
                            let cx = Cx::new(
                                base.enter(inner).concat(x),
                                unit.enter(inner),
                                (store, env, mint),
                                (&group, &reads),
                            );
                            let mut out = cx.rows_none();
                            for &r in &group {
                                let made = cx.rule(&rules[r]);
                                out = out.concat(shown_to(
                                    made,
                                    counter.as_ref().filter(|_| monotone[r]),
                                ));
                            }
                            // Counted again after `distinct` only when a rule's rows were not counted as made.
                            let late = group.iter().any(|&r| !monotone[r]);
                            let out = shown_to(out.distinct(), owner.as_ref());
                            shown_to(out, counter.as_ref().filter(|_| late))
                        }));
                    }
                }
                if !derived.is_empty() {
                    let mut stage_facts = derived.remove(0);
                    for d in derived {
                        stage_facts = stage_facts.concat(d);
                    }
                    // A recursive group's facts are counted inside it; a flat rule's as made, or here
                    // when it negates or aggregates.
                    let late = flat.iter().any(|&r| !monotone[r]);
                    let stage_facts = shown_to(stage_facts.distinct(), owner.as_ref());
                    facts = facts.concat(shown_to(stage_facts, counter.as_ref().filter(|_| late)));
                }
            }
            if split {
                // fact(q, asserted) :- one per distinct fact, flagged when some share asserted it.
                let flags = facts
                    .map(|q| (q, false))
                    .concat(asserted.map(|q| (q, true)))
                    .reduce(|_, input, output| {
                        output.push((input.iter().any(|(asserted, _)| **asserted), 1isize))
                    });
                let sink = flagged.clone();
                let keep = move |((q, a), _, diff): &((Q, bool), u64, isize)| {
                    if *diff > 0 {
                        sink.lock().expect("a worker panicked").push((*q, *a));
                    }
                };
                let kept = flags.clone().filter(move |(_, a)| !a || keep_asserted);
                let (probe, _) = if shares {
                    kept.inner.inspect(keep).probe()
                } else {
                    kept.inner.exchange(|_| 0).inspect(keep).probe()
                };
                counted_everywhere(flags.filter(|(_, a)| !a).map(|_| ()), &exact, &probe);
                return (facts_in, unit_in, probe);
            }
            let facts = facts.distinct();
            let sink = found.clone();
            let keep = move |(q, _, diff): &(Q, u64, isize)| {
                if *diff > 0 {
                    sink.lock().expect("a worker panicked").push(*q);
                }
            };
            let probe = if shares {
                // Each worker keeps the facts `distinct` left with it (they are partitioned by hash over every
                // worker of every process); the cluster's count of them comes to every worker, for --max-facts.
                let (probe, _) = facts.clone().inner.inspect(keep).probe();
                counted_everywhere(facts.map(|_| ()), &total, &probe);
                probe
            } else {
                // Every derived fact goes to worker 0 (of process 0), which alone keeps them.
                facts.inner.exchange(|_| 0).inspect(keep).probe().0
            };
            (facts_in, unit_in, probe)
        });
        // In a cluster, why a process stops, announced to every worker (each process builds this dataflow,
        // whatever its options, so that the processes' dataflows match): a count past --max-facts (kind 0), or
        // its own --timeout passed (kind 1, with the budget); and, under --max-facts, each process's `owned`
        // count as it grows (kind 2). A worker that heard one closes its input, and
        // stops once every worker's input is closed (the probe is done): by then every worker heard it, so no
        // process exits (which the others would see as a lost link) before all know why. A process past its
        // deadline waits for that no longer than the grace the command gives a phase past it.
        let mut announce = in_cluster.then(|| {
            worker.dataflow::<u64, _, _>(|scope| {
                let (input, announced) = TimelyInput::new_input::<Vec<(u8, u32, u64)>>(&scope);
                let (over, late, sums) = (over.clone(), late.clone(), sums.clone());
                let (heard, _) = announced
                    .broadcast()
                    .inspect(move |&(kind, process, n)| {
                        if kind == 0 {
                            over.fetch_max(n as usize, std::sync::atomic::Ordering::Relaxed);
                        } else if kind == 2 {
                            if let Some(sum) = sums.get(process as usize) {
                                sum.fetch_max(n, std::sync::atomic::Ordering::Relaxed);
                            }
                        } else {
                            late.lock()
                                .expect("a worker panicked")
                                .get_or_insert((process, n));
                        }
                    })
                    .probe();
                (Some(input), heard)
            })
        });
        let process = (index / workers) as u32;
        let heard_stop = || {
            over.load(std::sync::atomic::Ordering::Relaxed) > 0
                || late.lock().expect("a worker panicked").is_some()
        };
        // Each worker feeds its share of the asserted facts (of its process's share of the data, when it read one).
        let (part, parts) = if split {
            (index % workers, workers)
        } else {
            (index, peers)
        };
        for (g, index_of) in store.quads.graphs() {
            for (i, &[s, p, o]) in index_of.triples().iter().enumerate() {
                if i % parts == part {
                    facts_in.insert([g.0, s.0, p.0, o.0]);
                }
            }
        }
        if index == 0 {
            unit_in.insert(());
        }
        facts_in.advance_to(1);
        unit_in.advance_to(1);
        facts_in.flush();
        unit_in.flush();
        drop((facts_in, unit_in));
        let budget_ms = settings_timeout.map_or(0, |t| t.as_millis() as u64);
        // The `owned` count this worker announced last, and when (the first worker of each process announces).
        let mut told = (0usize, Instant::now());
        let grace = crate::control::grace(settings_timeout.unwrap_or_default());
        while probe.less_than(&1) {
            use std::sync::atomic::Ordering::Relaxed;
            let now = Instant::now();
            let late_since = deadline.filter(|&d| now >= d);
            if late_since.is_some() {
                timed_out.store(true, Relaxed);
            }
            let made = counted.load(Relaxed);
            let cluster: u64 = sums.iter().map(|s| s.load(Relaxed)).sum();
            // Why this process stops, if it does: its time (kind 1, with the budget) or its facts (kind 0, with
            // the count: its own, or the cluster's as announced).
            let stop = if timed_out.load(Relaxed) {
                Some((1, budget_ms))
            } else {
                max_facts.and_then(|m| {
                    (made > m.saturating_add(slack))
                        .then(|| (0, (made - slack) as u64))
                        .or_else(|| {
                            (cluster > (m as u64).saturating_add(slack_sum))
                                .then(|| (0, cluster - slack_sum))
                        })
                })
            };
            if cluster::link_lost() {
                break;
            }
            let Some((input, heard)) = announce.as_mut() else {
                // One process: it stops at once.
                if stop.is_some() {
                    break;
                }
                worker.step();
                continue;
            };
            // This process's `owned` count, when it grew, at most every ANNOUNCE_EVERY.
            if let Some(input) = input.as_mut() {
                let mine = owned.load(Relaxed);
                if owner.is_some()
                    && index % workers == 0
                    && mine != told.0
                    && now >= told.1 + ANNOUNCE_EVERY
                {
                    input.send((2, process, mine as u64));
                    input.flush();
                    told = (mine, now);
                }
            }
            // A worker with a reason, or that heard one, says its reason (if any) and closes its input; it stops
            // once every worker's input is closed, or past its own deadline by the grace.
            if stop.is_some() || heard_stop() {
                if let Some(mut input) = input.take() {
                    if let Some((kind, n)) = stop {
                        input.send((kind, process, n));
                        input.flush();
                    }
                }
                if heard.done() || late_since.is_some_and(|d| now >= d + grace) {
                    break;
                }
            }
            worker.step();
        }
        // Stopped early (out of time, past --max-facts, or a peer gone): the dataflow is dropped, not stepped to its end by
        // timely after this closure returns (it would compute on past the deadline, or wait for a peer that
        // is gone).
        // In a cluster the worker is then held (`ending`), so that the others see this process lost, not done.
        if probe.less_than(&1) {
            ending.early = true;
            for id in worker.installed_dataflows() {
                worker.drop_dataflow(id);
            }
        }
    })
    .map_err(|reason| DataflowError::Failed { reason })?;
    let finished = || guards.guards().iter().filter(|h| h.is_finished()).count();
    let failed = if ended.wait(workers, finished) {
        // Held workers (a cluster's, stopped early) never end: their guards are forgotten, and their threads and
        // links end with the process. A lost link or a panic held them; else their own deadline did.
        std::mem::forget(guards);
        cluster::link_lost() || !timed_out.load(std::sync::atomic::Ordering::Relaxed)
    } else {
        // A worker that panicked, or a link whose other end went away (timely's reader panics, then the
        // workers): the first panic's message; the guards' own panics on the way out are caught.
        match cluster::quietly(move || guards.join()) {
            Ok(results) => results.iter().any(Result::is_err) || cluster::link_lost(),
            Err(_) => true,
        }
    };
    // Every worker heard why a process stopped (past --max-facts or its --timeout) before any stopped (see
    // `announce`): a link that went away after that is a process that stopped for that reason.
    let peer_late = *late.lock().expect("a worker panicked");
    let failed =
        failed && over.load(std::sync::atomic::Ordering::Relaxed) == 0 && peer_late.is_none();
    if failed {
        let reason = cluster::take_panic().unwrap_or_else(|| "a worker stopped".to_owned());
        return Err(DataflowError::Lost { reason });
    }
    if timed_out.load(std::sync::atomic::Ordering::Relaxed) {
        return Err(DataflowError::Timeout {
            seconds: settings.timeout.map_or(0.0, |t| t.as_secs_f64()),
        });
    }
    if let Some((process, millis)) = peer_late {
        return Err(DataflowError::PeerTimeout {
            process,
            seconds: millis as f64 / 1000.0,
        });
    }
    // Past the budget while deriving: stopped there (this process made more facts than the budget, or in a
    // cluster, a process announced that it did).
    let seen = (counted.load(std::sync::atomic::Ordering::Relaxed))
        .saturating_sub(slack)
        .max(over.load(std::sync::atomic::Ordering::Relaxed));
    if let Some(max) = max_facts.filter(|&m| seen > m) {
        return Err(DataflowError::MaxFacts { derived: seen, max });
    }
    let exchanged = Exchanged {
        bytes_sent: sent.load(std::sync::atomic::Ordering::Relaxed),
    };
    if split {
        return split_run(
            std::mem::take(&mut *flagged.lock().expect("a worker panicked")),
            exact.load(std::sync::atomic::Ordering::Relaxed),
            settings,
            exchanged,
        );
    }
    let mut quads: Vec<Q> = std::mem::take(&mut *found.lock().expect("a worker panicked"));
    quads.sort_unstable();
    quads.dedup();
    let mut overlay = Overlay::new();
    let mut derived = 0usize;
    let mut share_asserted = Vec::new();
    for chunk in quads.chunk_by(|a, b| a[0] == b[0]) {
        let g = TermId(chunk[0][0]);
        let asserted = store.quads.graph(g);
        let mut triples: Vec<[TermId; 3]> = Vec::with_capacity(chunk.len());
        for &q in chunk {
            let [_, s, p, o] = q.map(TermId);
            if asserted.is_some_and(|i| i.contains([s, p, o])) {
                share_asserted.push(q);
            } else {
                triples.push([s, p, o]);
            }
        }
        derived += triples.len();
        overlay.add(g, triples);
    }
    if shares {
        // The facts, less the asserted ones (this process holds all of those): the derived ones.
        derived =
            (total.load(std::sync::atomic::Ordering::Relaxed)).saturating_sub(store.quads.len());
    }
    if let Some(max) = settings.max_facts {
        if derived > max {
            return Err(DataflowError::MaxFacts { derived, max });
        }
    }
    let minted = Minted::of(mint).ok_or_else(|| DataflowError::Failed {
        reason: "a worker still held the computed terms after the run".to_owned(),
    })?;
    Ok(Ran {
        overlay,
        asserted: shares.then_some(share_asserted),
        exchanged,
        minted,
    })
}

/// The end of a run over shares of the data: the facts this process kept (all of them on process 0 when it
/// gathers; its share with `--out-dir`), each flagged as asserted or not, and the cluster's count of derived
/// facts, exact on every process.
fn split_run(
    mut flagged: Vec<(Q, bool)>,
    derived: usize,
    settings: &Settings,
    exchanged: Exchanged,
) -> Result<Ran, DataflowError> {
    if let Some(max) = settings.max_facts.filter(|&m| derived > m) {
        return Err(DataflowError::MaxFacts { derived, max });
    }
    flagged.sort_unstable();
    flagged.dedup();
    let mut overlay = Overlay::new();
    let mut asserted = Vec::new();
    for chunk in flagged.chunk_by(|a, b| a.0[0] == b.0[0]) {
        let mut triples: Vec<[TermId; 3]> = Vec::with_capacity(chunk.len());
        for &(q, a) in chunk {
            if a {
                asserted.push(q);
            } else {
                triples.push([q[1], q[2], q[3]].map(TermId));
            }
        }
        overlay.add(TermId(chunk[0].0[0]), triples);
    }
    Ok(Ran {
        overlay,
        asserted: settings.keep_asserted.then_some(asserted),
        exchanged,
        minted: Minted::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `rules` (SPARQL, with the `:` prefix) over `data` (Turtle, with the `:` prefix), checked.
    fn setup(data: &str, rules: &[&str]) -> (Program, Arc<Store>) {
        let (program, store) = crate::datalog::test_program(data, rules);
        assert!(
            check(&program, false).is_empty(),
            "{:?}",
            check(&program, false)
        );
        (program, Arc::new(store))
    }

    fn settings(workers: usize) -> Settings {
        Settings {
            workers,
            now: DateTime::from_unix(0, 0),
            deadline: None,
            timeout: None,
            max_facts: None,
            cluster: None,
            shares: false,
            keep_asserted: false,
        }
    }

    const CHAIN: &str = ":a :edge :b . :b :edge :c . :c :edge :d .";
    const REACH: &[&str] = &[
        "CONSTRUCT { ?x :reach ?y } WHERE { ?x :edge ?y }",
        "CONSTRUCT { ?x :reach ?z } WHERE { ?x :reach ?y . ?y :reach ?z }",
    ];

    // reach(x,z) :- reach(x,y), reach(y,z): 6 pairs over a 4-node chain, whatever the worker count.
    #[test]
    fn a_recursive_group_reaches_its_fixpoint_on_one_and_two_workers() {
        let (program, store) = setup(CHAIN, REACH);
        for workers in [1, 2] {
            let ran = materialize(&program, store.clone(), &settings(workers)).expect("a run");
            assert_eq!(ran.overlay.len(), 6, "{workers} worker(s)");
            assert!(ran.asserted.is_none());
        }
    }

    // said(x) :- ?r :says <<( ?x :claims <<( ?y :knows ?z )>> )>>: a nested triple term matches part by part, and
    // a fact whose object is no triple term, or a triple term of another shape, does not.
    #[test]
    fn a_nested_triple_term_in_a_pattern_matches_the_facts_triple_terms_part_by_part() {
        let data = ":r1 :says <<( :a :claims <<( :b :knows :c )>> )>> . \
                    :r2 :says <<( :d :claims :e )>> . \
                    :r3 :says :f . \
                    :r4 :says <<( :g :denies <<( :h :knows :i )>> )>> .";
        let rules = [
            "CONSTRUCT { ?x :heard ?z } WHERE { ?r :says <<( ?x :claims <<( ?y :knows ?z )>> )>> }",
        ];
        let (program, store) = setup(data, &rules);
        let iri = |local: &str| store.dict.lookup_iri(&format!("http://e/{local}")).unwrap();
        for workers in [1, 2] {
            let ran = materialize(&program, store.clone(), &settings(workers)).expect("a run");
            assert_eq!(
                ran.overlay.graph_triples(TermId::DEFAULT_GRAPH),
                vec![[iri("a"), iri("heard"), iri("c")]],
                "{workers} worker(s)"
            );
        }
    }

    // One process keeping its share holds every fact (its workers' shares are all of them), and the cluster's
    // count it is told agrees: 6 derived, so --max-facts 5 stops it.
    #[test]
    fn a_process_keeping_its_share_alone_holds_every_fact_and_counts_the_cluster() {
        let (program, store) = setup(CHAIN, REACH);
        let shares = |max_facts| Settings {
            shares: true,
            max_facts,
            ..settings(2)
        };
        let ran = materialize(&program, store.clone(), &shares(Some(6))).expect("a run");
        assert_eq!(ran.overlay.len(), 6);
        assert_eq!(ran.asserted.map(|a| a.len()), Some(3));
        let err = materialize(&program, store, &shares(Some(5))).expect_err("6 facts > 5");
        assert!(
            matches!(err, DataflowError::MaxFacts { derived: 6, max: 5 }),
            "{err:?}"
        );
    }

    #[test]
    fn a_run_past_its_deadline_stops_with_the_timeout_error() {
        let (program, store) = setup(CHAIN, REACH);
        let run = Settings {
            deadline: Some(Instant::now()),
            timeout: Some(std::time::Duration::ZERO),
            ..settings(2)
        };
        let err = materialize(&program, store, &run).expect_err("past the deadline");
        assert!(matches!(err, DataflowError::Timeout { .. }), "{err:?}");
        let code = miette::Diagnostic::code(&err).map(|c| c.to_string());
        assert_eq!(code.as_deref(), Some("reasonctl::dataflow::timeout"));
    }

    #[test]
    fn more_facts_than_max_facts_is_an_error_not_a_partial_result() {
        let (program, store) = setup(CHAIN, REACH);
        let run = Settings {
            max_facts: Some(5),
            ..settings(1)
        };
        let err = materialize(&program, store, &run).expect_err("6 facts > 5");
        assert!(
            matches!(err, DataflowError::MaxFacts { derived: 6, max: 5 }),
            "{err:?}"
        );
        let code = miette::Diagnostic::code(&err).map(|c| c.to_string());
        assert_eq!(code.as_deref(), Some("reasonctl::dataflow::max_facts"));
    }

    // 400 nodes in a chain: 79,800 reach pairs. With --max-facts 100 the run stops while deriving, once it has
    // seen more than 100, instead of closing the chain first and counting after.
    #[test]
    fn a_run_past_max_facts_stops_while_deriving() {
        let chain: String = (0..399)
            .map(|i| format!(":n{i} :edge :n{} . ", i + 1))
            .collect();
        let (program, store) = setup(&chain, REACH);
        for workers in [1, 2] {
            let run = Settings {
                max_facts: Some(100),
                ..settings(workers)
            };
            let err = materialize(&program, store.clone(), &run).expect_err("79,800 facts > 100");
            let DataflowError::MaxFacts { derived, max: 100 } = err else {
                panic!("{err:?}")
            };
            assert!(
                derived > 100 && derived < 79_800 / 2,
                "{workers} worker(s): stopped at {derived} facts"
            );
        }
    }

    #[test]
    fn a_failed_run_names_its_code_and_the_way_out() {
        let err = DataflowError::Failed {
            reason: "worker 1 panicked".into(),
        };
        let code = miette::Diagnostic::code(&err).map(|c| c.to_string());
        assert_eq!(code.as_deref(), Some("reasonctl::dataflow::failed"));
        let help = miette::Diagnostic::help(&err).map(|h| h.to_string());
        assert!(help.is_some_and(|h| h.contains("--engine memory")));
    }

    #[test]
    fn constructs_the_engine_does_not_run_are_named_per_rule() {
        use crate::rules::{Origin, sparql};
        use crate::store::load::{DataFormat, Loader, NoProgress};
        let mut loader = Loader::new();
        loader
            .load_reader("d", "".as_bytes(), DataFormat::Turtle, None, &NoProgress)
            .expect("data");
        let mut store = loader.finish();
        let rule = |id: &str, text: &str, store: &mut Store| {
            let origin = Origin::File {
                path: "r.rq".into(),
                offset: 0,
                prologue: 0,
            };
            let text = format!("PREFIX : <http://e/> {text}");
            sparql::compile(id, origin, &text, &mut store.dict).expect("a rule")
        };
        let program = Program::new(vec![
            rule(
                "closure",
                "CONSTRUCT { ?x :q ?y } WHERE { ?x (:p|^:r)+ ?y }",
                &mut store,
            ),
            rule(
                "path",
                "CONSTRUCT { ?x :q ?y } WHERE { GRAPH ?g { ?x :p+ ?y } }",
                &mut store,
            ),
            rule(
                "path-to-a-triple-term",
                "CONSTRUCT { ?x :q ?s } WHERE { ?x :p* <<( ?s :b :c )>> }",
                &mut store,
            ),
            rule(
                "plus-to-a-triple-term",
                "CONSTRUCT { ?x :q ?s } WHERE { ?x :p+ <<( ?s :b :c )>> }",
                &mut store,
            ),
            rule(
                "ok",
                "CONSTRUCT { ?x :q ?y } WHERE { ?x :p ?y FILTER(?x != ?y) }",
                &mut store,
            ),
            rule(
                "bind",
                "CONSTRUCT { ?x :q ?n } WHERE { ?x :p ?y BIND(STR(?y) AS ?n) }",
                &mut store,
            ),
            rule(
                "count",
                "CONSTRUCT { ?x :q ?n } WHERE { { SELECT ?x (COUNT(?y) AS ?n) WHERE { ?x :p ?y } GROUP BY ?x } }",
                &mut store,
            ),
            rule(
                "sample",
                "CONSTRUCT { ?x :q ?n } WHERE { { SELECT ?x (SAMPLE(?y) AS ?n) WHERE { ?x :p ?y } GROUP BY ?x } }",
                &mut store,
            ),
            rule(
                "random",
                "CONSTRUCT { ?x :q ?y } WHERE { ?x :p ?y FILTER(RAND() < 2) }",
                &mut store,
            ),
            rule(
                "triple-head",
                "CONSTRUCT { :log :saw <<( ?x :p ?y )>> } WHERE { ?x :p ?y }",
                &mut store,
            ),
        ]);
        let found = |cluster| -> Vec<(String, &str)> {
            check(&program, cluster)
                .into_iter()
                .map(|u| (u.rule, u.construct))
                .collect()
        };
        let path = (
            "path-to-a-triple-term".to_owned(),
            "a triple term at an end of a property path that may take a zero-length step (*, ?)",
        );
        let sample = (
            "sample".to_owned(),
            "SAMPLE or GROUP_CONCAT (their values depend on the order rows come in)",
        );
        let random = (
            "random".to_owned(),
            "a volatile function (RAND, UUID, STRUUID, BNODE)",
        );
        // One process computes terms (BIND, COUNT, a head's triple term) in its workers' shared table.
        assert_eq!(
            found(false),
            vec![path.clone(), sample.clone(), random.clone()]
        );
        // A cluster's processes cannot share them.
        let cluster = |id: &str| (id.to_owned(), IN_CLUSTER);
        assert_eq!(
            found(true),
            vec![
                path,
                cluster("bind"),
                cluster("count"),
                sample,
                cluster("sample"),
                random,
                cluster("triple-head"),
            ]
        );
    }
}
