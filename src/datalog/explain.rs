//! This module defines explanations: the derivations of derived facts, found by replaying the bodies of the rules
//! whose heads can produce them, seeded with the fact, over asserted plus derived facts.
//!
//! A derivation is one body row whose head instantiates to the fact (term identity: ids). Its premises are the
//! body read through that row: triple patterns instantiated (asserted or derived), property paths with both ends,
//! NOT EXISTS patterns as absences, EXISTS and subqueries (grouped or not) re-run without grouping and filtered to
//! the row's bindings, and one derivation per choice of UNION branches the row satisfies (at most
//! [`MAX_CHOICES`]; past that only what lies outside the unions).

pub mod target;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hashbrown::{HashMap, HashSet};
use miette::Diagnostic;
use thiserror::Error;

use crate::exec::datetime::DateTime;
use crate::exec::eval::Env;
use crate::exec::terms::Terms;
use crate::exec::{self, Cancel, Context, ExecError, Flow, ROW_UNBOUND, Rows, State};
use crate::ir::lower::TemplateTerm;
use crate::ir::{
    Expr, GraphTerm, Op, PathExpr, PatternTerm, TriplePattern, VarId, VarSet, VarTable,
};
use crate::plan::{self, Dataset};
use crate::rules::{Head, reifier};
use crate::store::{Overlay, Quad, Store, TermId, TermRef, TermSource, Triple, View};

use super::Program;

pub use target::{FactError, parse as parse_target};

/// The most choices of UNION branches one row is reported with.
pub const MAX_CHOICES: usize = 64;

/// The most rows of a re-run subquery or EXISTS listed under one premise (the total is reported).
pub const MAX_ROWS: usize = 100;

/// A replay that could not run.
#[derive(Debug, Error, Diagnostic)]
pub enum ExplainError {
    /// The explanation was interrupted (Ctrl-C): nothing is reported.
    #[error("the explanation was interrupted; nothing was printed")]
    #[diagnostic(
        code(reasonctl::explain::interrupted),
        help("run it again; --timeout bounds it instead, and prints what it found by then")
    )]
    Interrupted,
    /// The executor stopped (cancelled, or a limit of its own).
    #[error("explaining {fact}: replaying rule {rule} failed: {source}")]
    #[diagnostic(
        code(reasonctl::explain::replay),
        help("a cancelled explanation is not reported; run it again")
    )]
    Replay {
        /// The fact being explained.
        fact: String,
        /// The rule replayed.
        rule: String,
        /// Why.
        source: ExecError,
    },
}

/// Which facts to explain: each position a term or a variable (`None`); the graph a term, the default graph, or
/// any graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// Subject, predicate, object.
    pub terms: [Option<TermId>; 3],
    /// The graph: `Some(id)` (the default graph is [`TermId::DEFAULT_GRAPH`]), `None` for every graph.
    pub graph: Option<TermId>,
    /// Positions (0–2: s, p, o; 3: graph) named by the same variable, which must hold the same term.
    pub same: Vec<(usize, usize)>,
}

impl Target {
    /// Whether a quad matches.
    pub fn matches(&self, [g, s, p, o]: Quad) -> bool {
        let q = [s, p, o, g];
        self.graph.is_none_or(|x| x == g)
            && self
                .terms
                .iter()
                .zip([s, p, o])
                .all(|(t, v)| t.is_none_or(|t| t == v))
            && self.same.iter().all(|&(a, b)| q[a] == q[b])
    }

    /// The derived facts it matches, in quad order.
    pub fn derived(&self, overlay: &Overlay) -> Vec<Quad> {
        let mut out = Vec::new();
        for g in overlay.graph_ids() {
            if self.graph.is_some_and(|x| x != g) {
                continue;
            }
            out.extend(
                overlay
                    .scan(g, &self.terms)
                    .map(|[s, p, o]| [g, s, p, o])
                    .filter(|q| self.matches(*q)),
            );
        }
        out.sort_unstable();
        out
    }

    /// The asserted facts it matches, in quad order.
    pub fn asserted(&self, store: &Store) -> Vec<Quad> {
        let mut out = Vec::new();
        for (g, index) in store.quads.graphs() {
            if self.graph.is_some_and(|x| x != g) {
                continue;
            }
            out.extend(
                (index.range(&self.terms).iter())
                    .map(|[s, p, o]| [g, s, p, o])
                    .filter(|q| self.matches(*q)),
            );
        }
        out.sort_unstable();
        out
    }
}

/// Whether a fact is in the data, derived, or neither.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// In the loaded data.
    Asserted,
    /// Derived by the run.
    Derived,
    /// Neither (or not fully bound).
    Missing,
}

impl Status {
    /// `asserted`, `derived`, `missing`.
    pub fn name(self) -> &'static str {
        match self {
            Status::Asserted => "asserted",
            Status::Derived => "derived",
            Status::Missing => "missing",
        }
    }
}

/// One position of an instantiated pattern.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Slot {
    /// A term of the dictionary.
    Term(TermId),
    /// A term the replay computed (BIND, string functions), in N-Triples syntax.
    Computed(String),
    /// A variable the row leaves unbound (inside NOT EXISTS: local to it).
    Var(String),
    /// A triple term with a part that is not a dictionary term.
    Triple(Box<[Slot; 3]>),
}

/// The graph of an instantiated pattern.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum GraphSlot {
    /// The default graph.
    Default,
    /// A named graph.
    Named(TermId),
    /// Any named graph (a variable the row leaves unbound).
    Var(String),
}

/// A triple pattern instantiated by a row.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Atom {
    /// Subject, predicate, object.
    pub terms: [Slot; 3],
    /// The graph.
    pub graph: GraphSlot,
}

impl Atom {
    /// The quad, when every position is a dictionary term.
    pub fn quad(&self) -> Option<Quad> {
        let g = match self.graph {
            GraphSlot::Default => TermId::DEFAULT_GRAPH,
            GraphSlot::Named(g) => g,
            GraphSlot::Var(_) => return None,
        };
        let mut q = [g; 4];
        for (i, t) in self.terms.iter().enumerate() {
            let Slot::Term(id) = t else { return None };
            q[i + 1] = *id;
        }
        Some(q)
    }
}

/// What re-ran for a [`Premise::Rows`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum RowsKind {
    /// A grouped (aggregating) subquery, re-run without grouping.
    Grouped,
    /// A subquery without grouping.
    Subquery,
    /// A FILTER EXISTS pattern.
    Exists,
}

impl RowsKind {
    /// `aggregate`, `subquery`, `exists`.
    pub fn name(self) -> &'static str {
        match self {
            RowsKind::Grouped => "aggregate",
            RowsKind::Subquery => "subquery",
            RowsKind::Exists => "exists",
        }
    }
}

/// One premise of a derivation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Premise {
    /// A triple pattern of the body, instantiated.
    Fact {
        /// The fact.
        atom: Atom,
        /// Asserted, derived, or missing.
        status: Status,
        /// The node explaining it, when explained (or already explained elsewhere).
        node: Option<usize>,
        /// The fact is one the explanation is already inside: the node is an ancestor.
        cycle: bool,
    },
    /// A property path with both ends.
    Path {
        /// Start.
        subject: Slot,
        /// The path.
        path: PathExpr,
        /// End.
        object: Slot,
        /// The graph it was matched in.
        graph: GraphSlot,
    },
    /// A NOT EXISTS: its patterns, instantiated with the row (its own variables left), hold for no binding.
    Absence {
        /// Its triple patterns and paths (as [`Premise::Fact`] with status missing, and [`Premise::Path`]).
        patterns: Vec<Premise>,
        /// Its FILTER conditions, as written (variables by name, IRIs in full).
        filters: Vec<String>,
    },
    /// A subquery or EXISTS re-run inside the row's scope: the rows that fed it.
    Rows {
        /// What re-ran.
        kind: RowsKind,
        /// The row's bindings it was filtered to (for a grouped subquery: the group key).
        key: Vec<(String, Slot)>,
        /// Each row's premises (at most [`MAX_ROWS`]).
        rows: Vec<Vec<Premise>>,
        /// How many rows there were.
        total: usize,
    },
}

impl Premise {
    /// Whether the premise is satisfied by its row: a fact bound and present, a path with both ends bound.
    fn holds(&self) -> bool {
        match self {
            Premise::Fact { status, .. } => *status != Status::Missing,
            Premise::Path {
                subject, object, ..
            } => !matches!(subject, Slot::Var(_)) && !matches!(object, Slot::Var(_)),
            Premise::Absence { .. } => true,
            Premise::Rows { total, .. } => *total > 0,
        }
    }
}

/// One way a fact was derived.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Derivation {
    /// The rule (index into the program).
    pub rule: usize,
    /// Its premises.
    pub premises: Vec<Premise>,
    /// More than [`MAX_CHOICES`] UNION choices: only what lies outside the unions is listed.
    pub unions_cut: bool,
}

/// One fact of the explanation.
#[derive(Clone, Debug)]
pub struct Node {
    /// The fact.
    pub fact: Quad,
    /// Asserted, derived, or missing.
    pub status: Status,
    /// Its derivations; `None` when it was not explained (asserted, or past the depth).
    pub derivations: Option<Vec<Derivation>>,
    /// Every rule that could produce it was replayed (false: the deadline cut its replays; it may have more).
    pub complete: bool,
}

/// The explanation of the target facts.
#[derive(Clone, Debug, Default)]
pub struct Explanation {
    /// The nodes of the target facts, in quad order.
    pub targets: Vec<usize>,
    /// Every node; derived premises refer to them by index, each explained once.
    pub nodes: Vec<Node>,
    /// Rules whose heads could produce an explained fact but whose bodies are not repeatable (RAND, UUID,
    /// STRUUID, BNODE), so they were not replayed.
    pub not_replayed: Vec<usize>,
    /// The deadline passed: some facts are not (fully) explained.
    pub incomplete: bool,
    /// Matching facts not even listed: the deadline passed before they were reached.
    pub unexplained: usize,
}

/// How far and how long to explain.
#[derive(Clone, Debug)]
pub struct Options {
    /// Levels of derived premises explained below the targets (1: the targets only).
    pub depth: usize,
    /// The explanation's deadline, from its start.
    pub timeout: Option<Duration>,
    /// Time to set aside per fact met (to render it afterwards): the deadline comes earlier by this much for
    /// each node of the explanation.
    pub reserve_per_node: Duration,
    /// What NOW() returns (the run's time).
    pub now: DateTime,
    /// The most nodes one path traversal may visit.
    pub path_limit: usize,
    /// Interrupts (a cancelled explanation fails).
    pub cancel: Cancel,
    /// Replays only this rule (by index): its derivations alone are wanted (`--provenance premises`, which
    /// writes the credited rule's). `None`: every rule whose head can produce the fact.
    pub rule: Option<usize>,
}

/// Explains `facts` (derived facts of the run that produced `overlay`).
pub fn explain(
    program: &Program,
    store: &Store,
    overlay: &Overlay,
    facts: &[Quad],
    options: &Options,
) -> Result<Explanation, ExplainError> {
    let mut cancel = options.cancel.clone();
    let nodes = Arc::new(AtomicUsize::new(0));
    if let Some(t) = options.timeout {
        cancel = cancel
            .with_timeout(t)
            .with_reserve(options.reserve_per_node, Arc::clone(&nodes));
    }
    let mut ex = Explainer {
        program,
        store,
        overlay,
        options,
        cancel,
        nodes,
        out: Explanation::default(),
        index: HashMap::new(),
        stack: Vec::new(),
        depth_of: HashMap::new(),
        not_replayed: HashSet::new(),
    };
    for (i, &q) in facts.iter().enumerate() {
        if ex.out.incomplete {
            // Past the deadline, the remaining facts are counted, not listed (each would be a node to render).
            ex.out.unexplained = facts.len() - i;
            break;
        }
        let n = ex.node(q, options.depth.max(1))?;
        ex.out.targets.push(n);
    }
    // Premises met at the depth limit whose facts were explained elsewhere (a later target, say) point there too.
    let index = &ex.index;
    fn relink(p: &mut Premise, index: &HashMap<Quad, usize>) {
        match p {
            Premise::Fact {
                atom,
                status: Status::Derived,
                node: node @ None,
                ..
            } => *node = atom.quad().and_then(|q| index.get(&q).copied()),
            Premise::Rows { rows, .. } => rows.iter_mut().flatten().for_each(|p| relink(p, index)),
            _ => {}
        }
    }
    for n in &mut ex.out.nodes {
        for d in n.derivations.iter_mut().flatten() {
            d.premises.iter_mut().for_each(|p| relink(p, index));
        }
    }
    let mut not_replayed: Vec<usize> = ex.not_replayed.into_iter().collect();
    not_replayed.sort_unstable();
    ex.out.not_replayed = not_replayed;
    Ok(ex.out)
}

struct Explainer<'a> {
    program: &'a Program,
    store: &'a Store,
    overlay: &'a Overlay,
    options: &'a Options,
    cancel: Cancel,
    /// How many nodes `out` has (the deadline's reserve grows with it).
    nodes: Arc<AtomicUsize>,
    out: Explanation,
    /// Node of each fact met.
    index: HashMap<Quad, usize>,
    /// The facts being explained, outermost first (a premise among them is a cycle).
    stack: Vec<Quad>,
    /// The depth each explained node was explained to.
    depth_of: HashMap<usize, usize>,
    not_replayed: HashSet<usize>,
}

/// The rows of one replay, with the terms it computed spelled out.
struct Replay {
    rows: Rows,
    computed: HashMap<TermId, String>,
}

impl Explainer<'_> {
    fn status(&self, [g, s, p, o]: Quad) -> Status {
        if self
            .store
            .quads
            .graph(g)
            .is_some_and(|i| i.contains([s, p, o]))
        {
            Status::Asserted
        } else if self.overlay.contains(g, [s, p, o]) {
            Status::Derived
        } else {
            Status::Missing
        }
    }

    /// The node of `q`, explained `depth` levels down if it is derived (deeper than before, if it was met
    /// nearer the depth limit first).
    fn node(&mut self, q: Quad, depth: usize) -> Result<usize, ExplainError> {
        let n = match self.index.get(&q) {
            Some(&n) => n,
            None => {
                let n = self.out.nodes.len();
                self.out.nodes.push(Node {
                    fact: q,
                    status: self.status(q),
                    derivations: None,
                    complete: true,
                });
                self.index.insert(q, n);
                self.nodes.fetch_add(1, Ordering::Relaxed);
                n
            }
        };
        if depth == 0 || self.out.nodes[n].status != Status::Derived || self.out.incomplete {
            return Ok(n);
        }
        let done = self.depth_of.get(&n).copied();
        if done.is_some_and(|d| d >= depth) {
            return Ok(n);
        }
        self.depth_of.insert(n, depth);
        self.stack.push(q);
        let found = match self.out.nodes[n].derivations.take() {
            // Explained before, less deep: only its premises go further down.
            Some(mut ds) => {
                for d in &mut ds {
                    for p in &mut d.premises {
                        self.link(p, depth)?;
                    }
                }
                Some(ds)
            }
            None => {
                let before = self.out.incomplete;
                let ds = self.derivations(q, depth)?;
                if self.out.incomplete && !before {
                    self.out.nodes[n].complete = false;
                }
                // Past the deadline with nothing found: not explained (rather than "no derivation").
                (!(self.out.incomplete && ds.is_empty())).then_some(ds)
            }
        };
        self.stack.pop();
        self.out.nodes[n].derivations = found;
        Ok(n)
    }

    /// Replays every repeatable rule whose head can produce `q`; links (and, below `depth`, explains) the derived
    /// premises.
    fn derivations(&mut self, q: Quad, depth: usize) -> Result<Vec<Derivation>, ExplainError> {
        let mut found: Vec<Derivation> = Vec::new();
        let mut seen: HashSet<Derivation> = HashSet::new();
        let program = self.program;
        'rules: for (r, rule) in program.rules.iter().enumerate() {
            if self.options.rule.is_some_and(|only| only != r) {
                continue;
            }
            let seeds: Vec<Vec<(VarId, TermId)>> = rule
                .heads
                .iter()
                .filter_map(|h| unify(h, q, &self.store.dict))
                .collect();
            if seeds.is_empty() {
                continue;
            }
            if !program.footprints[r].repeatable {
                self.not_replayed.insert(r);
                continue;
            }
            for seed in dedup(seeds) {
                if self.out.incomplete {
                    break 'rules;
                }
                let this: &Self = self;
                let replayed = (|| -> Result<(), ExecError> {
                    // A short replay ends within one batch, before the executor looks at the deadline.
                    this.cancel.check()?;
                    // Only what the body always binds is seeded (see `seed_certain`): `produces` then compares
                    // the body's own values with the fact.
                    let certain = rule.body.certain_vars();
                    let seed: Vec<(VarId, TermId)> = (seed.iter())
                        .filter(|(v, _)| certain.contains(*v))
                        .copied()
                        .collect();
                    let replay = this.run(&rule.body, &rule.vars, &seed)?;
                    for i in 0..replay.rows.len() {
                        let row = replay.rows.row(i);
                        if !rule
                            .heads
                            .iter()
                            .any(|h| produces(h, row, q, &this.store.dict))
                        {
                            continue;
                        }
                        let walk = Walk {
                            row,
                            computed: &replay.computed,
                            vars: &rule.vars,
                        };
                        let (choices, unions_cut) = walk.choices(this, &rule.body)?;
                        for premises in choices {
                            let d = Derivation {
                                rule: r,
                                premises,
                                unions_cut,
                            };
                            if seen.insert(d.clone()) {
                                found.push(d);
                            }
                        }
                    }
                    Ok(())
                })();
                match replayed {
                    Ok(()) => {}
                    // The deadline: what was found so far, marked incomplete.
                    Err(ExecError::Timeout(_)) => {
                        self.out.incomplete = true;
                        break 'rules;
                    }
                    Err(ExecError::Cancelled) => return Err(ExplainError::Interrupted),
                    Err(source) => {
                        return Err(ExplainError::Replay {
                            fact: display_quad(&self.store.dict, q),
                            rule: rule.id.clone(),
                            source,
                        });
                    }
                }
            }
        }
        for d in &mut found {
            for p in &mut d.premises {
                self.link(p, depth)?;
            }
        }
        Ok(found)
    }

    /// Points a derived premise at its node: an ancestor is a cycle; below the depth it is explained; at the
    /// depth, only a node explained elsewhere is referenced.
    fn link(&mut self, p: &mut Premise, depth: usize) -> Result<(), ExplainError> {
        match p {
            Premise::Fact {
                atom,
                status: Status::Derived,
                node,
                cycle,
            } => {
                let Some(q) = atom.quad() else { return Ok(()) };
                if self.stack.contains(&q) {
                    *cycle = true;
                    *node = self.index.get(&q).copied();
                } else if depth > 1 {
                    *node = Some(self.node(q, depth - 1)?);
                } else {
                    *node = self.index.get(&q).copied();
                }
            }
            Premise::Rows { rows, .. } => {
                for row in rows {
                    for p in row {
                        self.link(p, depth)?;
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Runs `op` with `seed` bound, under the explanation's deadline.
    fn run(&self, op: &Op, vars: &VarTable, seed: &[(VarId, TermId)]) -> Result<Replay, ExecError> {
        self.run_rows(op, vars, seed, false)
    }

    /// [`Self::run`], stopping after the first batch of rows when `first_only` (enough to know there is one).
    fn run_rows(
        &self,
        op: &Op,
        vars: &VarTable,
        seed: &[(VarId, TermId)],
        first_only: bool,
    ) -> Result<Replay, ExecError> {
        let seeded = seed_inside(
            op,
            Op::Values {
                vars: seed.iter().map(|(v, _)| *v).collect(),
                rows: vec![seed.iter().map(|(_, t)| Some(*t)).collect()].into(),
            },
        );
        let view = View::new(&self.store.quads, self.overlay);
        let plan = plan::plan(
            &seeded,
            vars.clone(),
            view,
            &Dataset::default(),
            &VarSet::new(),
        );
        let mut cx =
            Context::new(view, Env::new(self.options.now, None)).with_cancel(self.cancel.clone());
        cx.path_limit = self.options.path_limit;
        let mut st = State::new(Terms::new(&self.store.dict), &plan);
        let mut rows = Rows::new(plan.width);
        let unit = Rows::unit(plan.width);
        exec::execute(&plan, &cx, &mut st, &unit, &mut |_, batch| {
            rows.extend_from(batch);
            Ok(if first_only && !rows.is_empty() {
                Flow::Stop
            } else {
                Flow::Continue
            })
        })?;
        let mut computed = HashMap::new();
        for i in 0..rows.len() {
            for &id in rows.row(i) {
                if id != ROW_UNBOUND && st.terms.is_local(id) && !computed.contains_key(&id) {
                    computed.insert(id, st.terms.display(id));
                }
            }
        }
        Ok(Replay { rows, computed })
    }
}

/// `s p o [g]` in N-Triples syntax, for messages.
pub fn display_quad(terms: &impl TermSource, [g, s, p, o]: Quad) -> String {
    let mut out = format!(
        "{} {} {}",
        terms.display(s),
        terms.display(p),
        terms.display(o)
    );
    if g != TermId::DEFAULT_GRAPH {
        out.push(' ');
        out.push_str(&terms.display(g));
    }
    out
}

fn dedup(seeds: Vec<Vec<(VarId, TermId)>>) -> Vec<Vec<(VarId, TermId)>> {
    let mut out: Vec<Vec<(VarId, TermId)>> = Vec::new();
    for s in seeds {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// The body with `values` joined inside its top-level filters (so the filters see the seed's bindings as the
/// body's own).
pub(super) fn seed_inside(body: &Op, values: Op) -> Op {
    match body {
        Op::Filter { input, expr } => Op::filter(seed_inside(input, values), expr.clone()),
        other => Op::join(values, other.clone()),
    }
}

/// [`seed_inside`], seeding only the variables the body always binds: what finds the body's rows that make a
/// given head. A join is compatible with a variable the body leaves unbound (a BIND whose expression errs, a
/// UNION branch without it, an aggregate that errs), so a seeded value there would pass for the body's own and
/// instantiate a head the rule never makes; unseeded, the body's own value is compared with the head's.
pub(super) fn seed_certain(body: &Op, values: Op) -> Op {
    seed_inside(body, bound_only(values, &body.certain_vars()))
}

/// `values` without the columns of variables outside `certain`, each row once.
fn bound_only(values: Op, certain: &crate::ir::VarSet) -> Op {
    let Op::Values { vars, rows } = &values else {
        return values;
    };
    if vars.iter().all(|v| certain.contains(*v)) {
        return values;
    }
    let keep: Vec<usize> = (0..vars.len())
        .filter(|&i| certain.contains(vars[i]))
        .collect();
    let mut seen = hashbrown::HashSet::new();
    let kept: Vec<Vec<Option<TermId>>> = rows
        .iter()
        .map(|row| keep.iter().map(|&i| row[i]).collect::<Vec<_>>())
        .filter(|row| seen.insert(row.clone()))
        .collect();
    Op::Values {
        vars: keep.iter().map(|&i| vars[i]).collect(),
        rows: kept.into(),
    }
}

/// The head variables' terms if the head can produce `q` (graph, constants and repeated variables agree).
pub(super) fn unify(
    head: &Head,
    [g, s, p, o]: Quad,
    dict: &impl TermSource,
) -> Option<Vec<(VarId, TermId)>> {
    if head.graph.unwrap_or(TermId::DEFAULT_GRAPH) != g {
        return None;
    }
    let mut seed = Vec::new();
    for (t, v) in head.terms.iter().zip([s, p, o]) {
        unify_term(t, v, dict, &mut seed)?;
    }
    Some(seed)
}

fn unify_term(
    t: &TemplateTerm,
    value: TermId,
    dict: &impl TermSource,
    seed: &mut Vec<(VarId, TermId)>,
) -> Option<()> {
    match t {
        TemplateTerm::Const(c) => (*c == value).then_some(()),
        TemplateTerm::Var(v) => match seed.iter().find(|(x, _)| x == v) {
            Some((_, bound)) => (*bound == value).then_some(()),
            None => {
                seed.push((*v, value));
                Some(())
            }
        },
        TemplateTerm::Blank(_) => None,
        // A minted reifier binds nothing (its IRI is a hash); [`produces`] checks it once the row is known.
        TemplateTerm::Reifier(_) => match dict.term(value) {
            TermRef::Iri(iri) if iri.to_string().starts_with(reifier::GENID_BASE) => Some(()),
            _ => None,
        },
        TemplateTerm::Triple(parts) => {
            let TermRef::Triple(inner) = dict.term(value) else {
                return None;
            };
            for (t, v) in parts.iter().zip(inner) {
                unify_term(t, v, dict, seed)?;
            }
            Some(())
        }
    }
}

/// Whether `head`, instantiated by `row`, is `q` (ids compare terms: a replay's terms already in the dictionary
/// keep their ids).
fn produces(head: &Head, row: &[TermId], q: Quad, dict: &impl TermSource) -> bool {
    head.graph.unwrap_or(TermId::DEFAULT_GRAPH) == q[0]
        && head
            .terms
            .iter()
            .zip(&q[1..])
            .all(|(t, v)| term_is(t, row, *v, dict))
}

fn term_is(t: &TemplateTerm, row: &[TermId], value: TermId, dict: &impl TermSource) -> bool {
    match t {
        TemplateTerm::Const(c) => *c == value,
        TemplateTerm::Var(v) => row[v.index()] == value,
        TemplateTerm::Blank(_) => false,
        TemplateTerm::Triple(parts) => match dict.term(value) {
            TermRef::Triple(inner) => parts
                .iter()
                .zip(inner)
                .all(|(t, v)| term_is(t, row, v, dict)),
            _ => false,
        },
        TemplateTerm::Reifier(minted) => {
            let mut h = reifier::start(&minted.rule, minted.graph.as_deref());
            minted.edge.iter().all(|t| fed(&mut h, t, row, dict))
                && dict.to_oxrdf(value).is_some_and(
                    |t| matches!(t, oxrdf::Term::NamedNode(n) if n.as_str() == reifier::finish(h)),
                )
        }
    }
}

/// Feeds a head term instantiated by `row` to a reifier's digest (false: unbound, or not a term).
fn fed(h: &mut sha2::Sha256, t: &TemplateTerm, row: &[TermId], dict: &impl TermSource) -> bool {
    match t {
        TemplateTerm::Const(c) => {
            reifier::feed(h, dict, *c);
            true
        }
        TemplateTerm::Var(v) => match row.get(v.index()) {
            Some(&id) if id != ROW_UNBOUND => {
                reifier::feed(h, dict, id);
                true
            }
            _ => false,
        },
        TemplateTerm::Triple(parts) => {
            reifier::open_triple(h);
            parts.iter().all(|p| fed(h, p, row, dict))
        }
        TemplateTerm::Blank(_) | TemplateTerm::Reifier(_) => false,
    }
}

/// A body read through one row.
struct Walk<'w> {
    row: &'w [TermId],
    computed: &'w HashMap<TermId, String>,
    vars: &'w VarTable,
}

/// Alternative premise lists (one per choice of UNION branches).
type Choices = Vec<Vec<Premise>>;

impl Walk<'_> {
    /// The row's premise lists, one per satisfied choice of UNION branches; past [`MAX_CHOICES`], one list of
    /// what lies outside the unions (and `true`).
    fn choices(&self, ex: &Explainer<'_>, body: &Op) -> Result<(Choices, bool), ExecError> {
        let mut over = false;
        let all = self.alts(ex, body, true, &mut over)?;
        if !over {
            return Ok((all, false));
        }
        let mut ignored = false;
        Ok((self.alts(ex, body, false, &mut ignored)?, true))
    }

    fn alts(
        &self,
        ex: &Explainer<'_>,
        op: &Op,
        unions: bool,
        over: &mut bool,
    ) -> Result<Choices, ExecError> {
        Ok(match op {
            Op::Empty | Op::Unit | Op::GraphName(_) | Op::Values { .. } => vec![vec![]],
            Op::Pattern(tp) => vec![vec![self.fact(ex, tp)]],
            Op::Path {
                subject,
                path,
                object,
                graph,
            } => vec![vec![Premise::Path {
                subject: self.slot(ex, subject),
                path: path.clone(),
                object: self.slot(ex, object),
                graph: self.graph(graph),
            }]],
            Op::Join(ops) => {
                let mut acc: Choices = vec![vec![]];
                for o in ops {
                    let next = self.alts(ex, o, unions, over)?;
                    acc = product(acc, next, over);
                }
                acc
            }
            Op::Filter { input, expr } => {
                let acc = self.alts(ex, input, unions, over)?;
                let mut extra = Vec::new();
                self.conditions(ex, expr, &mut extra)?;
                product(acc, vec![extra], over)
            }
            Op::Extend { input, .. }
            | Op::Distinct(input)
            | Op::Reduced(input)
            | Op::OrderBy { input, .. }
            | Op::Slice { input, .. } => self.alts(ex, input, unions, over)?,
            Op::Minus { left, .. } => self.alts(ex, left, unions, over)?,
            Op::LeftJoin { left, right, .. } => {
                let acc = self.alts(ex, left, unions, over)?;
                let mut opt: Choices = self
                    .alts(ex, right, unions, over)?
                    .into_iter()
                    .filter(|c| c.iter().all(Premise::holds))
                    .collect();
                if opt.is_empty() {
                    opt.push(vec![]);
                }
                product(acc, opt, over)
            }
            Op::Union(branches) => {
                if !unions {
                    return Ok(vec![vec![]]);
                }
                // A branch the row satisfies: run with the row's bindings of its variables, it has a solution
                // (its filters and negations included).
                let mut out: Choices = Vec::new();
                for b in branches {
                    if !self.satisfies(ex, b)? {
                        continue;
                    }
                    out.extend(
                        self.alts(ex, b, unions, over)?
                            .into_iter()
                            .filter(|c| c.iter().all(Premise::holds)),
                    );
                }
                if out.len() > MAX_CHOICES {
                    *over = true;
                    out.truncate(MAX_CHOICES);
                }
                if out.is_empty() {
                    out.push(vec![]);
                }
                out
            }
            Op::Project { .. } | Op::Group { .. } => self
                .subquery(ex, op)?
                .into_iter()
                .map(|p| vec![p])
                .collect(),
        })
    }

    /// Premises of a filter condition: absences for NOT EXISTS, the matching rows of an EXISTS.
    fn conditions(
        &self,
        ex: &Explainer<'_>,
        expr: &Expr,
        out: &mut Vec<Premise>,
    ) -> Result<(), ExecError> {
        let mut found: Vec<(&Op, bool)> = Vec::new();
        expr.visit_exists(true, &mut |op, negated| found.push((op, negated)));
        for (op, negated) in found {
            if negated {
                let mut patterns = Vec::new();
                let mut filters = Vec::new();
                self.absent(ex, op, &mut patterns, &mut filters);
                out.push(Premise::Absence { patterns, filters });
            } else {
                out.push(self.rerun(ex, op, RowsKind::Exists, &[])?);
            }
        }
        Ok(())
    }

    /// The patterns and paths inside a NOT EXISTS, instantiated as far as the row binds them.
    fn absent(
        &self,
        ex: &Explainer<'_>,
        op: &Op,
        out: &mut Vec<Premise>,
        filters: &mut Vec<String>,
    ) {
        match op {
            Op::Pattern(tp) => {
                let Premise::Fact { atom, .. } = self.fact(ex, tp) else {
                    unreachable!("a pattern is a fact")
                };
                out.push(Premise::Fact {
                    atom,
                    status: Status::Missing,
                    node: None,
                    cycle: false,
                });
            }
            Op::Path {
                subject,
                path,
                object,
                graph,
            } => out.push(Premise::Path {
                subject: self.slot(ex, subject),
                path: path.clone(),
                object: self.slot(ex, object),
                graph: self.graph(graph),
            }),
            Op::Join(ops) | Op::Union(ops) => {
                ops.iter().for_each(|o| self.absent(ex, o, out, filters))
            }
            Op::Filter { input, expr } => {
                let namer = crate::ir::display::Namer {
                    dict: &ex.store.dict,
                    vars: self.vars,
                };
                filters.push(namer.expr(expr));
                self.absent(ex, input, out, filters);
            }
            Op::Extend { input, .. }
            | Op::Distinct(input)
            | Op::Reduced(input)
            | Op::OrderBy { input, .. }
            | Op::Slice { input, .. }
            | Op::Project { input, .. }
            | Op::Group { input, .. } => self.absent(ex, input, out, filters),
            Op::LeftJoin { left, right, .. } | Op::Minus { left, right } => {
                self.absent(ex, left, out, filters);
                self.absent(ex, right, out, filters);
            }
            Op::Empty | Op::Unit | Op::GraphName(_) | Op::Values { .. } => {}
        }
    }

    /// A subquery, re-run inside the row's scope without its grouping (and its modifiers): one premise per group
    /// the row can come from (one, unless the group key is not projected and several groups give the row).
    fn subquery(&self, ex: &Explainer<'_>, op: &Op) -> Result<Vec<Premise>, ExecError> {
        let mut inner = op;
        let mut top: Option<&Op> = None;
        let mut group: Option<(&Op, &[VarId])> = None;
        loop {
            match inner {
                Op::Project { input, .. } if top.is_none() => {
                    top = Some(input);
                    inner = input;
                }
                Op::Project { input, .. }
                | Op::Distinct(input)
                | Op::Reduced(input)
                | Op::OrderBy { input, .. }
                | Op::Slice { input, .. } => inner = input,
                Op::Filter { input, .. } | Op::Extend { input, .. } if contains_group(input) => {
                    inner = input
                }
                Op::Group { input, keys, .. } => {
                    group = Some((inner, keys));
                    inner = input;
                    break;
                }
                _ => break,
            }
        }
        let Some((group_op, keys)) = group else {
            return Ok(vec![self.rerun(ex, inner, RowsKind::Subquery, &[])?]);
        };
        let bound = |v: &VarId| {
            let id = self.row[v.index()];
            id != ROW_UNBOUND && !self.computed.contains_key(&id)
        };
        if keys.iter().all(bound) {
            return Ok(vec![self.rerun(ex, inner, RowsKind::Grouped, &[])?]);
        }
        // A key the subquery does not project: find the groups whose output is the row's, then re-run each.
        let above = top.unwrap_or(group_op);
        let seed: Vec<(VarId, TermId)> = above
            .vars()
            .iter()
            .filter(bound)
            .map(|v| (v, self.row[v.index()]))
            .collect();
        let groups = ex.run(above, self.vars, &seed)?;
        let mut out = Vec::new();
        let mut seen: HashSet<Vec<(VarId, TermId)>> = HashSet::new();
        for i in 0..groups.rows.len() {
            let g = groups.rows.row(i);
            let key: Vec<(VarId, TermId)> = keys
                .iter()
                .filter(|k| {
                    g[k.index()] != ROW_UNBOUND && !groups.computed.contains_key(&g[k.index()])
                })
                .map(|k| (*k, g[k.index()]))
                .collect();
            if seen.insert(key.clone()) {
                out.push(self.rerun(ex, inner, RowsKind::Grouped, &key)?);
            }
        }
        if out.is_empty() {
            out.push(self.rerun(ex, inner, RowsKind::Grouped, &[])?);
        }
        Ok(out)
    }

    /// Whether `branch`, run with the row's bindings of its variables, has a solution.
    fn satisfies(&self, ex: &Explainer<'_>, branch: &Op) -> Result<bool, ExecError> {
        let seed: Vec<(VarId, TermId)> = branch
            .vars()
            .iter()
            .filter_map(|v| {
                let id = self.row[v.index()];
                (id != ROW_UNBOUND && !self.computed.contains_key(&id)).then_some((v, id))
            })
            .collect();
        Ok(!ex.run_rows(branch, self.vars, &seed, true)?.rows.is_empty())
    }

    /// Runs `inner` seeded with the row's bindings of its variables (those it shares with the row's scope: a
    /// subquery's own variables have ids of their own, unbound in the row) and with `extra` (a group key).
    fn rerun(
        &self,
        ex: &Explainer<'_>,
        inner: &Op,
        kind: RowsKind,
        extra: &[(VarId, TermId)],
    ) -> Result<Premise, ExecError> {
        let inner_vars = inner.vars();
        let mut seed: Vec<(VarId, TermId)> = Vec::new();
        let mut key = Vec::new();
        for v in inner_vars.iter() {
            let id = match extra.iter().find(|(x, _)| *x == v) {
                Some((_, id)) => *id,
                None => self.row[v.index()],
            };
            // Unbound, or a computed term the dictionary lacks (the re-run could not bind it).
            if id == ROW_UNBOUND || self.computed.contains_key(&id) {
                continue;
            }
            seed.push((v, id));
            if !self.vars.is_hidden(v) {
                key.push((self.vars.name(v).to_owned(), Slot::Term(id)));
            }
        }
        let replay = ex.run(inner, self.vars, &seed)?;
        let total = replay.rows.len();
        let mut rows = Vec::new();
        // Identical rows (a bag) that several UNION branches both give: the n-th copy shows the n-th choice, so
        // each branch's facts appear.
        let mut copies: HashMap<&[TermId], usize> = HashMap::new();
        for i in 0..total.min(MAX_ROWS) {
            let row = replay.rows.row(i);
            let walk = Walk {
                row,
                computed: &replay.computed,
                vars: self.vars,
            };
            let mut over = false;
            let mut alts = walk.alts(ex, inner, true, &mut over)?;
            if over {
                alts = walk.alts(ex, inner, false, &mut over)?;
            }
            let nth = copies.entry(row).or_insert(0);
            let pick = if alts.is_empty() {
                0
            } else {
                *nth % alts.len()
            };
            *nth += 1;
            rows.push(alts.into_iter().nth(pick).unwrap_or_default());
        }
        Ok(Premise::Rows {
            kind,
            key,
            rows,
            total,
        })
    }

    fn fact(&self, ex: &Explainer<'_>, tp: &TriplePattern) -> Premise {
        let atom = Atom {
            terms: [
                self.slot(ex, &tp.terms[0]),
                self.slot(ex, &tp.terms[1]),
                self.slot(ex, &tp.terms[2]),
            ],
            graph: self.graph(&tp.graph),
        };
        let status = atom.quad().map_or(Status::Missing, |q| ex.status(q));
        Premise::Fact {
            atom,
            status,
            node: None,
            cycle: false,
        }
    }

    fn slot(&self, ex: &Explainer<'_>, t: &PatternTerm) -> Slot {
        match t {
            PatternTerm::Const(c) => Slot::Term(*c),
            PatternTerm::Var(v) => {
                let id = self.row[v.index()];
                if id == ROW_UNBOUND {
                    Slot::Var(self.vars.name(*v).to_owned())
                } else if let Some(text) = self.computed.get(&id) {
                    Slot::Computed(text.clone())
                } else {
                    Slot::Term(id)
                }
            }
            PatternTerm::Triple(parts) => {
                let slots = [
                    self.slot(ex, &parts[0]),
                    self.slot(ex, &parts[1]),
                    self.slot(ex, &parts[2]),
                ];
                if let [Slot::Term(s), Slot::Term(p), Slot::Term(o)] = slots {
                    let t: Triple = [s, p, o];
                    if let Some(id) = ex.store.dict.lookup_triple(t) {
                        return Slot::Term(id);
                    }
                }
                Slot::Triple(Box::new(slots))
            }
        }
    }

    fn graph(&self, g: &GraphTerm) -> GraphSlot {
        match g {
            GraphTerm::Default => GraphSlot::Default,
            GraphTerm::Named(id) => GraphSlot::Named(*id),
            GraphTerm::Var(v) => match self.row[v.index()] {
                ROW_UNBOUND => GraphSlot::Var(self.vars.name(*v).to_owned()),
                id => GraphSlot::Named(id),
            },
        }
    }
}

fn contains_group(op: &Op) -> bool {
    match op {
        Op::Group { .. } => true,
        Op::Filter { input, .. }
        | Op::Extend { input, .. }
        | Op::Distinct(input)
        | Op::Reduced(input)
        | Op::OrderBy { input, .. }
        | Op::Slice { input, .. } => contains_group(input),
        _ => false,
    }
}

/// Every combination of one list of `a` with one of `b`; more than [`MAX_CHOICES`] sets `over` and keeps the
/// first.
fn product(a: Choices, b: Choices, over: &mut bool) -> Choices {
    if b.len() == 1 {
        let extra = &b[0];
        return a
            .into_iter()
            .map(|mut x| {
                x.extend(extra.iter().cloned());
                x
            })
            .collect();
    }
    let mut out = Vec::new();
    'outer: for x in &a {
        for y in &b {
            if out.len() == MAX_CHOICES {
                *over = true;
                break 'outer;
            }
            let mut c = x.clone();
            c.extend(y.iter().cloned());
            out.push(c);
        }
    }
    out
}

/// The rules nearest to producing a fact no run derived.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Closest {
    /// Rules whose heads could produce it: their bodies matched nothing that does.
    Could(Vec<usize>),
    /// Rules whose heads produce such facts, but into another graph.
    OtherGraph(Vec<usize>),
    /// No head has its predicate: up to three rules whose head predicates are spelled most like it.
    Spelling(Vec<usize>),
}

/// When no fact matches `target`: which rules come closest.
pub fn closest_rules(program: &Program, target: &Target, dict: &impl TermSource) -> Closest {
    let fitting = |any_graph: bool| -> Vec<usize> {
        program
            .rules
            .iter()
            .enumerate()
            .filter(|(_, r)| r.heads.iter().any(|h| head_fits(h, target, any_graph)))
            .map(|(i, _)| i)
            .collect()
    };
    let could = fitting(false);
    if !could.is_empty() {
        return Closest::Could(could);
    }
    let elsewhere = fitting(true);
    if !elsewhere.is_empty() {
        return Closest::OtherGraph(elsewhere);
    }
    let Some(p) = target.terms[1] else {
        return Closest::Spelling(Vec::new());
    };
    let wanted = dict.display(p);
    let mut scored: Vec<(f64, usize)> = program
        .rules
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            r.heads
                .iter()
                .filter_map(|h| match &h.terms[1] {
                    TemplateTerm::Const(c) => {
                        Some(strsim::normalized_levenshtein(&wanted, &dict.display(*c)))
                    }
                    _ => None,
                })
                .max_by(f64::total_cmp)
                .map(|score| (score, i))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    // Close spellings when there are some (typos), else the three closest.
    let close = scored.iter().filter(|(score, _)| *score >= 0.8).count();
    let keep = if close > 0 { close.min(3) } else { 3 };
    Closest::Spelling(scored.into_iter().take(keep).map(|(_, i)| i).collect())
}

/// Whether a head could produce some fact the target matches (constants agree where both are constants; the
/// graph too unless `any_graph`).
fn head_fits(head: &Head, target: &Target, any_graph: bool) -> bool {
    let graph = head.graph.unwrap_or(TermId::DEFAULT_GRAPH);
    (any_graph || target.graph.is_none_or(|g| g == graph))
        && head
            .terms
            .iter()
            .zip(target.terms)
            .all(|(h, t)| match (h, t) {
                (TemplateTerm::Const(c), Some(t)) => *c == t,
                _ => true,
            })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datalog::{Budget, Schedule, fixpoint};

    /// Materializes `rules` (each a SPARQL rule with the `:` prefix) over `data` (TriG with the `:` prefix).
    fn run(data: &str, rules: &[&str]) -> (Program, Store, Overlay) {
        let (program, mut store) = crate::datalog::test_program(data, rules);
        let options = fixpoint::Options {
            schedule: Schedule::Staged,
            budget: Budget::default(),
            now: DateTime::from_unix(0, 0),
            parallel: false,
            closure: true,
            path_limit: exec::DEFAULT_PATH_LIMIT,
            start: None,
            track: false,
        };
        let (overlay, _) =
            super::super::materialize(&program, &mut store, &options, &fixpoint::NoProgress)
                .expect("a run");
        (program, store, overlay)
    }

    fn options(timeout: Option<Duration>) -> Options {
        Options {
            depth: 1,
            timeout,
            reserve_per_node: Duration::ZERO,
            now: DateTime::from_unix(0, 0),
            path_limit: exec::DEFAULT_PATH_LIMIT,
            cancel: Cancel::new(),
            rule: None,
        }
    }

    fn fact(store: &Store, s: &str, p: &str, o: &str) -> Quad {
        let id = |l: &str| store.dict.lookup_iri(&format!("http://e/{l}")).expect(l);
        [TermId::DEFAULT_GRAPH, id(s), id(p), id(o)]
    }

    #[test]
    fn a_passed_deadline_marks_the_explanation_incomplete_instead_of_failing() {
        let (program, store, overlay) =
            run(":a :p :b .", &["CONSTRUCT { ?x :q ?y } WHERE { ?x :p ?y }"]);
        let q = fact(&store, "a", "q", "b");
        let e = explain(
            &program,
            &store,
            &overlay,
            &[q],
            &options(Some(Duration::ZERO)),
        )
        .unwrap();
        assert!(e.incomplete);
        assert!(
            e.nodes[0].derivations.is_none(),
            "a fact the deadline left unexplained is not reported as explained"
        );
        assert!(!e.nodes[0].complete);
        let full = explain(&program, &store, &overlay, &[q], &options(None)).unwrap();
        assert!(!full.incomplete);
        assert!(full.nodes[0].complete);
        assert_eq!(full.nodes[0].derivations.as_ref().unwrap().len(), 1);
    }

    #[test]
    fn an_interrupt_fails_the_explanation() {
        let (program, store, overlay) =
            run(":a :p :b .", &["CONSTRUCT { ?x :q ?y } WHERE { ?x :p ?y }"]);
        let q = fact(&store, "a", "q", "b");
        let o = options(None);
        o.cancel.cancel();
        let e = explain(&program, &store, &overlay, &[q], &o).unwrap_err();
        assert!(matches!(e, ExplainError::Interrupted), "{e}");
        assert_eq!(
            miette::Diagnostic::code(&e).unwrap().to_string(),
            "reasonctl::explain::interrupted"
        );
    }

    #[test]
    fn a_replay_past_the_path_limit_fails_naming_the_fact_and_the_rule() {
        let (program, store, overlay) = run(
            ":a :p :b . :b :p :c . :c :p :d .",
            &["CONSTRUCT { ?x :q ?y } WHERE { ?x (:p|^:p)* ?y }"],
        );
        let q = fact(&store, "a", "q", "d");
        let o = Options {
            path_limit: 1,
            ..options(None)
        };
        let e = explain(&program, &store, &overlay, &[q], &o).unwrap_err();
        assert_eq!(
            miette::Diagnostic::code(&e).unwrap().to_string(),
            "reasonctl::explain::replay"
        );
        assert!(e.to_string().contains("replaying rule r0"), "{e}");
    }

    #[test]
    fn more_than_64_union_choices_keep_only_the_premises_outside_the_unions() {
        // Seven unions of two branches that both hold: 128 choices for one row.
        let unions: String = (0..7)
            .map(|i| format!("{{ ?x :u{i} :v }} UNION {{ ?x :w{i} :v }} "))
            .collect();
        let data: String = (0..7)
            .map(|i| format!(":a :u{i} :v . :a :w{i} :v . "))
            .collect();
        let (program, store, overlay) = run(
            &format!("{data} :a a :T ."),
            &[&format!(
                "CONSTRUCT {{ ?x :ok :v }} WHERE {{ ?x a :T {unions} }}"
            )],
        );
        let q = fact(&store, "a", "ok", "v");
        let e = explain(&program, &store, &overlay, &[q], &options(None)).unwrap();
        let ds = e.nodes[0].derivations.as_ref().unwrap();
        assert_eq!(ds.len(), 1);
        assert!(ds[0].unions_cut);
        assert_eq!(
            ds[0].premises.len(),
            1,
            "only ?x a :T lies outside the unions"
        );
    }

    #[test]
    fn two_satisfied_union_branches_give_two_derivations() {
        let (program, store, overlay) = run(
            ":a :email :e ; :phone :f .",
            &[
                "CONSTRUCT { ?x :reachable :v } WHERE { { ?x :email ?e } UNION { ?x :phone ?f } BIND(:v AS ?v0) }",
            ],
        );
        let q = [
            TermId::DEFAULT_GRAPH,
            store.dict.lookup_iri("http://e/a").unwrap(),
            store.dict.lookup_iri("http://e/reachable").unwrap(),
            store.dict.lookup_iri("http://e/v").unwrap(),
        ];
        let e = explain(&program, &store, &overlay, &[q], &options(None)).unwrap();
        let ds = e.nodes[0].derivations.as_ref().unwrap();
        assert_eq!(ds.len(), 2);
        assert!(ds.iter().all(|d| !d.unions_cut && d.premises.len() == 1));
    }

    #[test]
    fn a_computed_head_term_is_matched_by_term_identity() {
        let (program, store, overlay) = run(
            ":a :name \"Ann\" .",
            &["CONSTRUCT { ?x :label ?l } WHERE { ?x :name ?n BIND(CONCAT(\"Dr \", ?n) AS ?l) }"],
        );
        let target = Target {
            terms: [None, store.dict.lookup_iri("http://e/label"), None],
            graph: Some(TermId::DEFAULT_GRAPH),
            same: Vec::new(),
        };
        let facts = target.derived(&overlay);
        assert_eq!(facts.len(), 1);
        let e = explain(&program, &store, &overlay, &facts, &options(None)).unwrap();
        assert_eq!(e.nodes[0].derivations.as_ref().unwrap().len(), 1);
    }

    #[test]
    fn a_rule_with_a_volatile_function_is_reported_not_replayed() {
        let (program, store, overlay) = run(
            ":a :p :b .",
            &["CONSTRUCT { ?x :q ?y } WHERE { ?x :p ?y BIND(RAND() AS ?r) }"],
        );
        let q = fact(&store, "a", "q", "b");
        let e = explain(&program, &store, &overlay, &[q], &options(None)).unwrap();
        assert_eq!(e.not_replayed, vec![0]);
        assert_eq!(e.nodes[0].derivations.as_deref().map(<[_]>::len), Some(0));
    }
}
