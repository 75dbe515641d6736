//! This module defines the planner: [`plan`] turns an [`Op`] into a physical [`Plan`].
//!
//! Joins are ordered greedily by estimated output (exact range counts for constants, distinct counts for
//! positions bound by earlier operands); an operand runs seeded by the rows before it (index nested-loop) when
//! that cannot change its meaning, otherwise once on its own and hash-joined. A filter runs as soon as no
//! operand still to come can bind one of its variables.

use std::borrow::Cow;
use std::collections::VecDeque;

use crate::exec::eval::exists_key;
use crate::ir::{Expr, GraphTerm, Op, TriplePattern, VarId, VarSet, VarTable};
use crate::store::quads::PredicateStats;
use crate::store::{Pattern, TermId, View};

use super::cost::{Statistics, estimate_pattern};
use super::physical::{ExistsPlan, Kind, LeftMode, Node, Plan};

/// The graphs a query reads: which make up its default graph, which are its named graphs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dataset {
    /// Graphs merged into the default graph (normally just the data's default graph).
    pub default: Vec<TermId>,
    /// The named graphs (`None`: every named graph of the data).
    pub named: Option<Vec<TermId>>,
}

impl Default for Dataset {
    fn default() -> Self {
        Self {
            default: vec![TermId::DEFAULT_GRAPH],
            named: None,
        }
    }
}

impl Dataset {
    /// The named graphs, in id order.
    pub fn named_graphs(&self, view: &View<'_>) -> Vec<TermId> {
        match &self.named {
            Some(n) => {
                let mut n = n.clone();
                n.sort_unstable();
                n.dedup();
                n
            }
            None => view
                .graph_ids()
                .into_iter()
                .filter(|g| *g != TermId::DEFAULT_GRAPH)
                .collect(),
        }
    }

    /// Whether `g` is one of the named graphs.
    pub fn is_named(&self, view: &View<'_>, g: TermId) -> bool {
        g != TermId::DEFAULT_GRAPH
            && match &self.named {
                Some(n) => n.contains(&g),
                None => true,
            }
            && (self.named.is_some() || view.graph_ids().contains(&g))
    }
}

/// Plans `op` for input rows in which `bound` are bound (empty for a query; the outer variables for a seeded
/// pattern). Hidden variables the plan needs (seed columns) are added to `vars`.
pub fn plan(op: &Op, vars: VarTable, view: View<'_>, dataset: &Dataset, bound: &VarSet) -> Plan {
    plan_with(op, vars, view, dataset, bound, true)
}

/// [`plan`], optionally keeping join operands in the order they were written (`reorder: false`), the reference
/// the differential tests compare planned execution against.
pub fn plan_with(
    op: &Op,
    vars: VarTable,
    view: View<'_>,
    dataset: &Dataset,
    bound: &VarSet,
    reorder: bool,
) -> Plan {
    let mut p = Planner {
        stats: ViewStats { view, dataset },
        vars,
        next: 0,
        reorder,
    };
    let root = p.plan(op, bound);
    Plan {
        width: p.vars.len().max(1),
        nodes: p.next,
        vars: p.vars,
        root,
    }
}

struct ViewStats<'a> {
    view: View<'a>,
    dataset: &'a Dataset,
}

impl ViewStats<'_> {
    fn graphs(&self, tp: &TriplePattern) -> Vec<TermId> {
        match tp.graph {
            GraphTerm::Default => self.dataset.default.clone(),
            GraphTerm::Named(g) => vec![g],
            GraphTerm::Var(_) => self.dataset.named_graphs(&self.view),
        }
    }
}

impl Statistics for ViewStats<'_> {
    fn count(&self, tp: &TriplePattern, pattern: &Pattern) -> f64 {
        self.graphs(tp)
            .into_iter()
            .map(|g| self.view.count(g, pattern) as f64)
            .sum()
    }

    fn predicate(&self, tp: &TriplePattern, p: TermId) -> Option<PredicateStats> {
        let g = *self.graphs(tp).first()?;
        self.view.base().graph(g)?.predicate_stats(p)
    }

    fn predicates(&self) -> f64 {
        self.view
            .base()
            .graph(TermId::DEFAULT_GRAPH)
            .map_or(10.0, |g| g.predicate_count().max(1) as f64)
    }
}

struct Planner<'a> {
    stats: ViewStats<'a>,
    vars: VarTable,
    next: usize,
    /// Order join operands by estimated cost (off: keep the written order).
    reorder: bool,
}

/// How many of a join's operands left each step of its greedy ordering looks at (the first, in written order).
const JOIN_WINDOW: usize = 64;

/// What a join's planning keeps of an operand from step to step: what it needs bound before it can run and its
/// variables (the same at every step), and its last estimates: with the step's bound variables (a triple
/// pattern's, by which of its terms they fix), and with none.
struct Operand {
    needs: VarSet,
    vars: VarSet,
    bound: Option<(u8, f64)>,
    alone: Option<f64>,
}

/// Whether evaluating `op` on input rows that may bind `maybe` (instead of on its own and joining) gives the
/// same solutions: true for patterns, and for compound operators whose inner scopes read none of the input's
/// variables that the operator does not itself bind for sure.
pub fn seedable(op: &Op, maybe: &VarSet) -> bool {
    let hidden_ok = |inner: VarSet, certain: VarSet| inner.intersection(maybe).is_subset(&certain);
    match op {
        Op::Empty
        | Op::Unit
        | Op::Pattern(_)
        | Op::Path { .. }
        | Op::GraphName(_)
        | Op::Values { .. } => true,
        Op::Join(ops) | Op::Union(ops) => ops.iter().all(|o| seedable(o, maybe)),
        Op::Filter { input, expr } => {
            seedable(input, maybe) && hidden_ok(expr.vars(), input.certain_vars())
        }
        Op::Extend { input, expr, .. } => {
            seedable(input, maybe) && hidden_ok(expr.vars(), input.certain_vars())
        }
        Op::LeftJoin {
            left,
            right,
            filter,
        } => {
            let mut inner = right.vars();
            if let Some(f) = filter {
                inner.extend(&f.vars());
            }
            seedable(left, maybe) && hidden_ok(inner, left.certain_vars())
        }
        Op::Minus { left, right } => {
            seedable(left, maybe) && hidden_ok(right.vars(), left.certain_vars())
        }
        Op::Project { .. }
        | Op::Distinct(_)
        | Op::Reduced(_)
        | Op::OrderBy { .. }
        | Op::Slice { .. }
        | Op::Group { .. } => !op.vars().intersects(maybe),
    }
}

impl Planner<'_> {
    fn node(&mut self, est: f64, kind: Kind) -> Node {
        let id = self.next;
        self.next += 1;
        Node { id, est, kind }
    }

    /// [`Planner::estimate`], remembered in `memo` for a triple pattern by which of its terms `bound` fixes.
    /// `is_bound` answers as `bound` does, by table.
    fn estimate_memo(
        &self,
        op: &Op,
        (bound, is_bound): (&VarSet, &impl Fn(VarId) -> bool),
        memo: &mut Option<(u8, f64)>,
    ) -> f64 {
        let Op::Pattern(tp) = op else {
            return self.estimate(op, bound);
        };
        let key = crate::plan::cost::fixed_mask(tp, is_bound);
        match *memo {
            Some((k, e)) if k == key => e,
            _ => {
                let e = self.estimate(op, bound);
                *memo = Some((key, e));
                e
            }
        }
    }

    /// Expected output rows per input row.
    fn estimate(&self, op: &Op, bound: &VarSet) -> f64 {
        match op {
            Op::Empty => 0.0,
            Op::Unit => 1.0,
            Op::Pattern(tp) => estimate_pattern(&self.stats, tp, bound),
            Op::Path { .. } => 10.0,
            Op::GraphName(_) => self
                .stats
                .dataset
                .named_graphs(&self.stats.view)
                .len()
                .max(1) as f64,
            Op::Values { rows, .. } => rows.len() as f64,
            Op::Join(ops) => {
                let mut b = bound.clone();
                let mut rows = 1.0;
                for o in ops {
                    rows *= self.estimate(o, &b);
                    b.extend(&o.certain_vars());
                }
                rows
            }
            Op::Union(ops) => ops.iter().map(|o| self.estimate(o, bound)).sum(),
            Op::LeftJoin { left, right, .. } => {
                let l = self.estimate(left, bound);
                let mut b = bound.clone();
                b.extend(&left.certain_vars());
                l * self.estimate(right, &b).max(1.0)
            }
            Op::Minus { left, .. } => self.estimate(left, bound),
            Op::Filter { input, .. } => self.estimate(input, bound) * 0.5,
            Op::Extend { input, .. }
            | Op::Project { input, .. }
            | Op::Distinct(input)
            | Op::Reduced(input)
            | Op::OrderBy { input, .. } => self.estimate(input, bound),
            Op::Slice { input, limit, .. } => {
                let e = self.estimate(input, bound);
                limit.map_or(e, |l| e.min(l as f64))
            }
            Op::Group { input, keys, .. } => {
                if keys.is_empty() {
                    1.0
                } else {
                    self.estimate(input, bound).sqrt().max(1.0)
                }
            }
        }
    }

    fn exists_plans(&mut self, expr: &Expr, bound: &VarSet) -> Vec<ExistsPlan> {
        let mut found: Vec<&Op> = Vec::new();
        collect_exists(expr, &mut found);
        found
            .into_iter()
            .map(|op| {
                let seed = self.vars.hidden("seed");
                let mut b = bound.clone();
                b.insert(seed);
                // Only the seed column is read from what the pattern outputs (a flag per outer row).
                let mut plan = self.plan(op, &b);
                super::probe::mark(&mut plan, &std::iter::once(seed).collect());
                ExistsPlan {
                    key: exists_key(op),
                    plan,
                    seed,
                }
            })
            .collect()
    }

    fn plan(&mut self, op: &Op, bound: &VarSet) -> Node {
        match op {
            Op::Empty => self.node(0.0, Kind::Empty),
            Op::Unit => self.node(1.0, Kind::Unit),
            Op::Pattern(tp) => {
                let est = estimate_pattern(&self.stats, tp, bound);
                self.node(est, Kind::Scan(tp.clone()))
            }
            Op::Path {
                subject,
                path,
                object,
                graph,
            } => {
                let est = self.estimate(op, bound);
                self.node(
                    est,
                    Kind::Path {
                        subject: subject.clone(),
                        path: path.clone(),
                        object: object.clone(),
                        graph: *graph,
                    },
                )
            }
            Op::GraphName(g) => {
                let est = self.estimate(op, bound);
                self.node(est, Kind::GraphName(*g))
            }
            Op::Values { vars, rows } => self.node(
                rows.len() as f64,
                Kind::Values {
                    vars: vars.clone(),
                    rows: rows.clone(),
                },
            ),
            Op::Join(ops) => self.plan_join(ops.iter().collect(), Vec::new(), bound),
            Op::Filter { .. } => {
                let mut filters = Vec::new();
                let mut inner = op;
                while let Op::Filter { input, expr } = inner {
                    filters.push(expr);
                    inner = input;
                }
                let operands = match inner {
                    Op::Join(ops) => ops.iter().collect(),
                    other => vec![other],
                };
                self.plan_join(operands, filters, bound)
            }
            Op::Extend { input, var, expr } => {
                let inner = self.plan(input, bound);
                let mut b = bound.clone();
                b.extend(&input.certain_vars());
                let exists = self.exists_plans(expr, &b);
                let est = inner.est;
                let stage = self.node(
                    1.0,
                    Kind::Extend {
                        var: *var,
                        expr: expr.clone(),
                        exists: Vec::new(),
                    },
                );
                let stage = with_exists(stage, exists, expr);
                self.node(est, Kind::Seq(vec![inner, stage]))
            }
            Op::LeftJoin {
                left,
                right,
                filter,
            } => {
                let left_node = self.plan(left, bound);
                let mut lb = bound.clone();
                lb.extend(&left.certain_vars());
                let mut lm = lb.clone();
                lm.extend(&left.vars());
                // A condition reading only what the optional part always binds (no EXISTS) filters that part
                // itself: LeftJoin(L, R, F) = LeftJoin(L, Filter(R, F)) then, and R's rows are dropped before they
                // meet L's.
                let (filtered, filter) = match filter {
                    Some(f) if !f.has_exists() && f.vars().is_subset(&right.certain_vars()) => (
                        Some(Op::Filter {
                            input: right.clone(),
                            expr: f.clone(),
                        }),
                        None,
                    ),
                    other => (None, other.clone()),
                };
                let right: &Op = filtered.as_ref().unwrap_or(right);
                // Seeded: run once per left row with its bindings; pointless (the same rows each time) when the
                // optional part shares no variable with the left: then it runs once, hashed.
                let (mode, right_node) = if right.vars().intersects(&lm) && seedable(right, &lm) {
                    let seed = self.vars.hidden("seed");
                    let mut rb = lb.clone();
                    rb.insert(seed);
                    (LeftMode::Seeded { seed }, self.plan(right, &rb))
                } else {
                    let keys = right.certain_vars().intersection(&lb).iter().collect();
                    (LeftMode::Hash { keys }, self.plan(right, &VarSet::new()))
                };
                let mut fb = lb.clone();
                fb.extend(&right.certain_vars());
                let exists = filter
                    .as_ref()
                    .map(|f| self.exists_plans(f, &fb))
                    .unwrap_or_default();
                let est = left_node.est * right_node.est.max(1.0);
                let stage = self.node(
                    right_node.est.max(1.0),
                    Kind::LeftJoin {
                        right: Box::new(right_node),
                        filter: filter.clone(),
                        exists,
                        mode,
                    },
                );
                let stage = rekey_left_join(stage);
                self.node(est, Kind::Seq(vec![left_node, stage]))
            }
            Op::Minus { left, right } => {
                let left_node = self.plan(left, bound);
                let right_node = self.plan(right, &VarSet::new());
                let est = left_node.est;
                let stage = self.node(
                    1.0,
                    Kind::Minus {
                        right: Box::new(right_node),
                        context: right.graph_context_vars().iter().collect(),
                    },
                );
                self.node(est, Kind::Seq(vec![left_node, stage]))
            }
            Op::Union(ops) => {
                let branches: Vec<Node> = ops.iter().map(|o| self.plan(o, bound)).collect();
                let est = branches.iter().map(|b| b.est).sum();
                self.node(est, Kind::Union(branches))
            }
            Op::Project { input, vars } => {
                let inner = self.plan(input, bound);
                let est = inner.est;
                self.node(
                    est,
                    Kind::Project {
                        input: Box::new(inner),
                        vars: vars.clone(),
                    },
                )
            }
            Op::Distinct(input) | Op::Reduced(input) => {
                let inner = self.plan(input, bound);
                let est = inner.est;
                self.node(est, Kind::Distinct(Box::new(inner)))
            }
            Op::OrderBy { input, keys } => {
                let inner = self.plan(input, bound);
                let est = inner.est;
                self.node(
                    est,
                    Kind::OrderBy {
                        input: Box::new(inner),
                        keys: keys.clone(),
                    },
                )
            }
            Op::Slice {
                input,
                offset,
                limit,
            } => {
                let inner = self.plan(input, bound);
                let est = limit.map_or(inner.est, |l| inner.est.min(l as f64));
                self.node(
                    est,
                    Kind::Slice {
                        input: Box::new(inner),
                        offset: *offset,
                        limit: *limit,
                    },
                )
            }
            Op::Group {
                input,
                keys,
                aggregates,
            } => {
                let inner = self.plan(input, bound);
                let est = self.estimate(op, bound);
                self.node(
                    est,
                    Kind::Group {
                        input: Box::new(inner),
                        keys: keys.clone(),
                        aggregates: aggregates.clone(),
                    },
                )
            }
        }
    }

    /// A join group: operands ordered greedily, filters placed as early as their variables allow.
    fn plan_join(&mut self, operands: Vec<&Op>, mut filters: Vec<&Expr>, bound: &VarSet) -> Node {
        let mut stages = Vec::new();
        let mut certain = bound.clone();
        let mut maybe = bound.clone();
        let mut rows = 1.0;
        // The graph variable of a `GRAPH ?g { … }` block (a `GraphName(?g)` operand): inside the block it is the
        // active graph, always bound once the graph names are, so binding it from the input is the block's own
        // semantics, not an outer binding leaking into a filter, optional part or subquery.
        let active: VarSet = operands
            .iter()
            .filter_map(|op| match op {
                Op::GraphName(GraphTerm::Var(v)) => Some(*v),
                _ => None,
            })
            .collect();
        // The variables an operand may take from outside the join (its `seedable` question), once per step: the
        // step's loop asks it of every operand. Without a graph variable, all that may be bound (not copied: a
        // copy per step is quadratic in a long join).
        fn outer_of<'m>(active: &VarSet, maybe: &'m VarSet, certain: &VarSet) -> Cow<'m, VarSet> {
            if active.is_empty() {
                return Cow::Borrowed(maybe);
            }
            Cow::Owned(
                maybe
                    .iter()
                    .filter(|v| !(active.contains(*v) && certain.contains(*v)))
                    .collect(),
            )
        }
        self.place_filters(&mut filters, &operands, &certain, &mut stages);
        // What each operand needs and its variables are worked out once (each step's choice looks at every operand
        // left: work done per operand per step makes a join of n operands cost n² of it).
        let mut kept: VecDeque<Operand> = operands
            .iter()
            .map(|op| {
                // A subquery of the block that projects the block's graph (it reads it) waits for it too, so its
                // LIMIT, ORDER BY and groups apply per graph.
                let scope = matches!(
                    op,
                    Op::Project { .. }
                        | Op::Group { .. }
                        | Op::Distinct(_)
                        | Op::Slice { .. }
                        | Op::OrderBy { .. }
                );
                let mut needs = required(op);
                if scope {
                    needs.extend(&op.vars().intersection(&active));
                }
                Operand {
                    needs,
                    vars: op.vars(),
                    bound: None,
                    alone: None,
                }
            })
            .collect();
        // `certain` as a table by variable index, for the per-operand questions of each step.
        let mut is_certain: Vec<bool> = Vec::new();
        let mark = |is_certain: &mut Vec<bool>, vars: &VarSet| {
            for v in vars.iter() {
                if v.index() >= is_certain.len() {
                    is_certain.resize(v.index() + 1, false);
                }
                is_certain[v.index()] = true;
            }
        };
        mark(&mut is_certain, &certain);
        let mut operands: VecDeque<&Op> = operands.into();
        while !operands.is_empty() {
            let bound = |v: VarId| is_certain.get(v.index()).copied().unwrap_or(false);
            let mut best = 0;
            let mut best_cost = f64::INFINITY;
            // Each step chooses among the first JOIN_WINDOW operands left, in written order: a join of
            // thousands (a long sequence path) is then planned in linear time, not quadratic (a 20,000-step
            // path took 3.8 s).
            let window = operands.len().min(JOIN_WINDOW);
            // A subquery inside GRAPH ?g reads the graph ?g names: it waits until ?g is bound.
            let ready: Vec<bool> = kept
                .iter()
                .take(window)
                .map(|k| k.needs.is_subset(&certain))
                .collect();
            let any_ready = ready.iter().any(|r| *r);
            let outer = outer_of(&active, &maybe, &certain);
            let outer: &VarSet = &outer;
            for (i, op) in operands.iter().take(window).enumerate() {
                if any_ready && !ready[i] {
                    continue;
                }
                if !self.reorder {
                    best = i;
                    break;
                }
                let per_row = if seedable(op, outer) {
                    self.estimate_memo(op, (&certain, &bound), &mut kept[i].bound)
                } else {
                    *kept[i]
                        .alone
                        .get_or_insert_with(|| self.estimate(op, &VarSet::new()))
                };
                // Prefer operands connected to what is bound: a cross product only when nothing else is left.
                let connected = certain.is_empty() || kept[i].vars.iter().any(bound);
                let cost = rows * per_row * if connected { 1.0 } else { 1e3 };
                if cost < best_cost {
                    best_cost = cost;
                    best = i;
                }
            }
            let op = operands.remove(best).expect("an operand left");
            let mut chosen = kept.remove(best).expect("an operand left");
            let per_row = self.estimate_memo(op, (&certain, &bound), &mut chosen.bound);
            let keys: Vec<VarId> = op.certain_vars().intersection(&certain).iter().collect();
            // Many input rows against a small pattern: hash the pattern's matches once instead of one index
            // lookup per row.
            let hash_pattern =
                self.reorder && matches!(op, Op::Pattern(_)) && !keys.is_empty() && {
                    let whole = self.estimate(op, &VarSet::new());
                    rows > 10_000.0 && rows > 4.0 * whole && whole < 5e6
                };
            // Many input rows that each meet many matches a filter then drops (`?s ?p ?o` with ?s bound and
            // `FILTER (!sameTerm(?p, owl:sameAs))`, over an owl:sameAs class of n terms: n² rows meeting n facts
            // each): the pattern's matches filtered once, then hashed. A filter reading only the pattern's own
            // variables (no EXISTS, which sees the whole row) gives the same verdict on the pattern's match as on
            // the joined row.
            let own = op.certain_vars();
            let pushable: Vec<usize> = (0..filters.len())
                .filter(|&f| !filters[f].has_exists() && filters[f].vars().is_subset(&own))
                .collect();
            let hash_filtered = self.reorder
                && !hash_pattern
                && matches!(op, Op::Pattern(_))
                && !keys.is_empty()
                && !pushable.is_empty()
                && {
                    let whole = self.estimate(op, &VarSet::new());
                    rows > 10_000.0 && rows * per_row > 4.0 * whole && whole < 5e6
                };
            let stage = if hash_filtered {
                let mut build = op.clone();
                for f in pushable.iter().rev() {
                    build = Op::Filter {
                        input: Box::new(build),
                        expr: filters.remove(*f).clone(),
                    };
                }
                let build = self.plan(&build, &VarSet::new());
                self.node(
                    per_row,
                    Kind::HashJoin {
                        build: Box::new(build),
                        keys,
                    },
                )
            } else if seedable(op, outer) && !hash_pattern {
                self.plan(op, &certain)
            } else {
                let build = self.plan(op, &VarSet::new());
                self.node(
                    per_row,
                    Kind::HashJoin {
                        build: Box::new(build),
                        keys,
                    },
                )
            };
            rows *= per_row;
            let own = op.certain_vars();
            mark(&mut is_certain, &own);
            certain.extend(&own);
            maybe.extend(&op.vars());
            stages.push(stage);
            self.place_filters(
                &mut filters,
                operands.make_contiguous(),
                &certain,
                &mut stages,
            );
        }
        for f in filters {
            let exists = self.exists_plans(f, &certain);
            let stage = self.node(
                0.5,
                Kind::Filter {
                    expr: f.clone(),
                    exists: Vec::new(),
                },
            );
            stages.push(with_exists(stage, exists, f));
        }
        if stages.len() == 1 {
            return stages.pop().expect("one stage");
        }
        self.node(rows, Kind::Seq(stages))
    }

    /// Moves into `stages` every filter none of whose variables a remaining operand can bind.
    fn place_filters(
        &mut self,
        filters: &mut Vec<&Expr>,
        remaining: &[&Op],
        certain: &VarSet,
        stages: &mut Vec<Node>,
    ) {
        if filters.is_empty() {
            return;
        }
        let mut pending: VarSet = VarSet::new();
        for op in remaining {
            pending.extend(&op.vars());
        }
        let mut k = 0;
        while k < filters.len() {
            if filters[k].vars().intersects(&pending) {
                k += 1;
                continue;
            }
            let f = filters.remove(k);
            let exists = self.exists_plans(f, certain);
            let stage = self.node(
                0.5,
                Kind::Filter {
                    expr: f.clone(),
                    exists: Vec::new(),
                },
            );
            stages.push(with_exists(stage, exists, f));
        }
    }
}

/// Variables an operand needs bound before it can run: the graph context of a subquery (its graph variables
/// bound by an enclosing GRAPH), since a subquery is evaluated per graph.
fn required(op: &Op) -> VarSet {
    match op {
        Op::Project { .. }
        | Op::Group { .. }
        | Op::Distinct(_)
        | Op::Slice { .. }
        | Op::OrderBy { .. }
        // A filter, BIND, OPTIONAL or MINUS inside GRAPH ?g reads the active graph too (a NOT EXISTS over it,
        // say) without binding it.
        | Op::Filter { .. }
        | Op::Extend { .. }
        | Op::LeftJoin { .. }
        | Op::Minus { .. } => op.graph_context_vars(),
        _ => VarSet::new(),
    }
}

/// Every EXISTS pattern of an expression, in evaluation order.
fn collect_exists<'e>(e: &'e Expr, out: &mut Vec<&'e Op>) {
    e.visit(&mut |sub| {
        if let Expr::Exists(op) = sub {
            // Safety of the key: the pattern lives in a Box, so its address survives moves of the Expr.
            out.push(op.as_ref());
        }
    });
}

/// Attaches EXISTS plans to a filter or bind stage whose expression is a clone of `original`: the keys were
/// taken from `original`, so they are retaken from the stage's own copy (same shape, same order).
fn with_exists(mut stage: Node, plans: Vec<ExistsPlan>, original: &Expr) -> Node {
    if plans.is_empty() {
        return stage;
    }
    let _ = original;
    let rekey = |expr: &Expr, mut plans: Vec<ExistsPlan>| {
        let mut own = Vec::new();
        collect_exists(expr, &mut own);
        for (p, op) in plans.iter_mut().zip(own) {
            p.key = exists_key(op);
        }
        plans
    };
    match &mut stage.kind {
        Kind::Filter { expr, exists } | Kind::Extend { expr, exists, .. } => {
            *exists = rekey(expr, plans)
        }
        _ => unreachable!("EXISTS attaches to filters and binds"),
    }
    stage
}

/// Retakes a left join's EXISTS keys from its own copy of the filter.
fn rekey_left_join(mut stage: Node) -> Node {
    if let Kind::LeftJoin {
        filter: Some(f),
        exists,
        ..
    } = &mut stage.kind
    {
        let mut own = Vec::new();
        collect_exists(f, &mut own);
        for (p, op) in exists.iter_mut().zip(own) {
            p.key = exists_key(op);
        }
    }
    stage
}
