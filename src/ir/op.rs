//! This module defines [`Op`], the graph-pattern algebra, with smart constructors that keep trees small
//! (`Op::join` with an empty side is empty, with a unit side is the other side).

use std::fmt;

use crate::store::TermId;

use super::expr::{Aggregate, Expr};

/// A variable: an index into a solution row.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct VarId(pub u32);

impl VarId {
    /// The variable's column in a row.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The variables of one query (or rule body): names for display, hidden ones for blank nodes and path steps.
#[derive(Clone, Debug, Default)]
pub struct VarTable {
    names: Vec<String>,
    hidden: Vec<bool>,
}

impl VarTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// A new variable with a user-visible name.
    pub fn named(&mut self, name: &str) -> VarId {
        self.push(name.to_owned(), false)
    }

    /// A new variable the user did not write (blank node, path step, seed column), named for plan display.
    pub fn hidden(&mut self, hint: &str) -> VarId {
        let name = format!("_{hint}{}", self.names.len());
        self.push(name, true)
    }

    fn push(&mut self, name: String, hidden: bool) -> VarId {
        let id = VarId(u32::try_from(self.names.len()).expect("more than 2^32 variables"));
        self.names.push(name);
        self.hidden.push(hidden);
        id
    }

    /// How many variables (the width of a row).
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The variable's name (without `?`).
    pub fn name(&self, v: VarId) -> &str {
        &self.names[v.index()]
    }

    /// Whether the user did not write this variable.
    pub fn is_hidden(&self, v: VarId) -> bool {
        self.hidden[v.index()]
    }
}

/// A small set of variables, kept sorted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct VarSet(Vec<VarId>);

impl VarSet {
    /// The empty set.
    pub fn new() -> Self {
        Self(Vec::new())
    }

    /// Adds a variable.
    pub fn insert(&mut self, v: VarId) {
        if let Err(i) = self.0.binary_search(&v) {
            self.0.insert(i, v);
        }
    }

    /// Whether the set holds `v`.
    pub fn contains(&self, v: VarId) -> bool {
        self.0.binary_search(&v).is_ok()
    }

    /// Adds every variable of `other`.
    pub fn extend(&mut self, other: &VarSet) {
        for &v in &other.0 {
            self.insert(v);
        }
    }

    /// The variables in both sets.
    pub fn intersection(&self, other: &VarSet) -> VarSet {
        VarSet(
            self.0
                .iter()
                .copied()
                .filter(|v| other.contains(*v))
                .collect(),
        )
    }

    /// Whether every variable of `self` is in `other`.
    pub fn is_subset(&self, other: &VarSet) -> bool {
        self.0.iter().all(|v| other.contains(*v))
    }

    /// Whether the sets share a variable.
    pub fn intersects(&self, other: &VarSet) -> bool {
        self.0.iter().any(|v| other.contains(*v))
    }

    /// The variables, sorted.
    pub fn iter(&self) -> impl Iterator<Item = VarId> + '_ {
        self.0.iter().copied()
    }

    /// How many.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl FromIterator<VarId> for VarSet {
    fn from_iter<I: IntoIterator<Item = VarId>>(iter: I) -> Self {
        let mut v: Vec<VarId> = iter.into_iter().collect();
        v.sort_unstable();
        v.dedup();
        VarSet(v)
    }
}

/// One position of a triple pattern.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PatternTerm {
    /// A variable.
    Var(VarId),
    /// A constant term.
    Const(TermId),
    /// An RDF 1.2 triple term with pattern components, `<<( s p o )>>`.
    Triple(Box<[PatternTerm; 3]>),
}

impl PatternTerm {
    /// Adds the variables this position mentions.
    pub fn collect_vars(&self, out: &mut VarSet) {
        match self {
            PatternTerm::Var(v) => out.insert(*v),
            PatternTerm::Const(_) => {}
            PatternTerm::Triple(t) => t.iter().for_each(|p| p.collect_vars(out)),
        }
    }

    /// The variable, if this position is one.
    pub fn as_var(&self) -> Option<VarId> {
        match self {
            PatternTerm::Var(v) => Some(*v),
            _ => None,
        }
    }
}

/// Which graph a pattern reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GraphTerm {
    /// The active default graph (the dataset's; the data's default graph unless FROM says otherwise).
    Default,
    /// One named graph.
    Named(TermId),
    /// Every named graph, the variable bound to its name.
    Var(VarId),
}

/// A triple pattern in a graph.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TriplePattern {
    /// Subject, predicate, object.
    pub terms: [PatternTerm; 3],
    /// The graph.
    pub graph: GraphTerm,
}

impl TriplePattern {
    /// The variables of the pattern (graph variable included).
    pub fn vars(&self) -> VarSet {
        let mut out = VarSet::new();
        for t in &self.terms {
            t.collect_vars(&mut out);
        }
        if let GraphTerm::Var(g) = self.graph {
            out.insert(g);
        }
        out
    }
}

/// A property path expression (`/ | ^ * + ?` and negated property sets).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PathExpr {
    /// One predicate.
    Link(TermId),
    /// `^p`.
    Reverse(Box<PathExpr>),
    /// `p / q`.
    Sequence(Box<PathExpr>, Box<PathExpr>),
    /// `p | q`.
    Alternative(Box<PathExpr>, Box<PathExpr>),
    /// `p*`.
    ZeroOrMore(Box<PathExpr>),
    /// `p+`.
    OneOrMore(Box<PathExpr>),
    /// `p?`.
    ZeroOrOne(Box<PathExpr>),
    /// `!(p | q)`: one step over any predicate but these (`!(^p)` is `Reverse(Negated([p]))`).
    Negated(Vec<TermId>),
}

/// The rows of a VALUES block (`None` is UNDEF), in one flat list shared between the operator tree and its plans
/// (a plan holds the block as planned, not a copy; a block is no list of lists: a maintenance check joins a body
/// with tens of thousands of candidate facts, a row each), with the columns every row binds, worked out once
/// (the planner asks at each step of a join).
#[derive(Clone, Debug, PartialEq)]
pub struct ValueRows(std::sync::Arc<ValueTable>);

#[derive(Debug, PartialEq)]
struct ValueTable {
    width: usize,
    rows: usize,
    cells: Vec<Option<TermId>>,
    /// By column: whether every row binds it.
    full: Vec<bool>,
}

impl ValueRows {
    /// Rows of `width` cells each, laid end to end in `cells`.
    pub fn flat(width: usize, cells: Vec<Option<TermId>>) -> Self {
        let rows = cells.len().checked_div(width).unwrap_or(0);
        debug_assert_eq!(rows * width, cells.len());
        let full = (0..width)
            .map(|c| (0..rows).all(|r| cells[r * width + c].is_some()))
            .collect();
        Self(std::sync::Arc::new(ValueTable {
            width,
            rows,
            cells,
            full,
        }))
    }

    /// The same number of empty rows (a VALUES block without variables).
    pub fn empty_rows(rows: usize) -> Self {
        Self(std::sync::Arc::new(ValueTable {
            width: 0,
            rows,
            cells: Vec::new(),
            full: Vec::new(),
        }))
    }

    /// How many rows.
    pub fn len(&self) -> usize {
        self.0.rows
    }

    /// Whether there is no row.
    pub fn is_empty(&self) -> bool {
        self.0.rows == 0
    }

    /// The rows, in order.
    pub fn iter(&self) -> impl Iterator<Item = &[Option<TermId>]> + '_ {
        let w = self.0.width;
        (0..self.0.rows).map(move |r| &self.0.cells[r * w..(r + 1) * w])
    }

    /// Whether every row binds column `c` (no row: every column).
    pub fn binds_always(&self, c: usize) -> bool {
        self.0.rows == 0 || self.0.full.get(c).copied().unwrap_or(false)
    }
}

impl From<Vec<Vec<Option<TermId>>>> for ValueRows {
    /// Rows as lists of one length (the block's variables).
    fn from(rows: Vec<Vec<Option<TermId>>>) -> Self {
        let width = rows.first().map_or(0, Vec::len);
        if width == 0 {
            return Self::empty_rows(rows.len());
        }
        let mut cells = Vec::with_capacity(width * rows.len());
        for mut row in rows {
            debug_assert_eq!(row.len(), width, "a VALUES row of another length");
            row.resize(width, None);
            cells.extend(row);
        }
        Self::flat(width, cells)
    }
}

/// The graph-pattern algebra.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// No solutions.
    Empty,
    /// One solution binding nothing (the identity of join).
    Unit,
    /// A triple pattern.
    Pattern(TriplePattern),
    /// A property path between two terms.
    Path {
        /// Start.
        subject: PatternTerm,
        /// The path.
        path: PathExpr,
        /// End.
        object: PatternTerm,
        /// The graph it is matched in.
        graph: GraphTerm,
    },
    /// The named graphs of the dataset: for a variable, one solution per graph binding it; for a constant, one
    /// empty solution if that graph is in the dataset. `GRAPH g { P }` is `Join([GraphName(g), P])`.
    GraphName(GraphTerm),
    /// The natural join of all operands (bag semantics).
    Join(Vec<Op>),
    /// OPTIONAL.
    LeftJoin {
        /// Required side.
        left: Box<Op>,
        /// Optional side.
        right: Box<Op>,
        /// The filter of the OPTIONAL group, over both sides' bindings.
        filter: Option<Expr>,
    },
    /// MINUS.
    Minus {
        /// Kept side.
        left: Box<Op>,
        /// Removed side.
        right: Box<Op>,
    },
    /// FILTER.
    Filter {
        /// Input.
        input: Box<Op>,
        /// Condition (effective boolean value).
        expr: Expr,
    },
    /// BIND.
    Extend {
        /// Input.
        input: Box<Op>,
        /// Bound variable.
        var: VarId,
        /// Value.
        expr: Expr,
    },
    /// VALUES: inline solutions (`None` is UNDEF).
    Values {
        /// Columns.
        vars: Vec<VarId>,
        /// Rows, shared: a plan holds the block as planned, not a copy of it (a maintenance check joins a body
        /// with a block of tens of thousands of candidate facts).
        rows: ValueRows,
    },
    /// UNION of all operands (bag).
    Union(Vec<Op>),
    /// Projection (a subquery's scope boundary).
    Project {
        /// Input.
        input: Box<Op>,
        /// Kept variables, in order.
        vars: Vec<VarId>,
    },
    /// DISTINCT.
    Distinct(Box<Op>),
    /// REDUCED (evaluated as DISTINCT).
    Reduced(Box<Op>),
    /// ORDER BY.
    OrderBy {
        /// Input.
        input: Box<Op>,
        /// Keys, each with `true` for descending.
        keys: Vec<(Expr, bool)>,
    },
    /// OFFSET / LIMIT.
    Slice {
        /// Input.
        input: Box<Op>,
        /// Rows skipped.
        offset: usize,
        /// Rows kept after that.
        limit: Option<usize>,
    },
    /// GROUP BY with aggregates.
    Group {
        /// Input.
        input: Box<Op>,
        /// Grouping variables.
        keys: Vec<VarId>,
        /// Aggregates, each bound to a variable.
        aggregates: Vec<(VarId, Aggregate)>,
    },
}

/// The variables of a VALUES block that every row binds.
pub fn values_certain_vars(vars: &[VarId], rows: &ValueRows) -> VarSet {
    vars.iter()
        .enumerate()
        .filter(|(i, _)| rows.binds_always(*i))
        .map(|(_, v)| *v)
        .collect()
}

impl Op {
    /// The natural join of two operands; flattens nested joins, drops units, and is empty if either side is.
    pub fn join(left: Op, right: Op) -> Op {
        Op::join_all([left, right])
    }

    /// The natural join of many operands (same simplifications as [`Op::join`]). A `GRAPH ?g { … }` block (a join
    /// holding `GraphName(?g)`) stays one operand: inside it ?g is the active graph, bound once the graph names
    /// are; outside it ?g is an ordinary variable (an OPTIONAL or a subquery beside the block binds it on its own).
    pub fn join_all(ops: impl IntoIterator<Item = Op>) -> Op {
        let mut out = Vec::new();
        for op in ops {
            match op {
                Op::Empty => return Op::Empty,
                Op::Unit => {}
                Op::Join(inner)
                    if !inner
                        .iter()
                        .any(|o| matches!(o, Op::GraphName(GraphTerm::Var(_)))) =>
                {
                    out.extend(inner)
                }
                other => out.push(other),
            }
        }
        match out.len() {
            0 => Op::Unit,
            1 => out.pop().expect("one operand"),
            _ => Op::Join(out),
        }
    }

    /// The union of two operands; flattens nested unions and drops empty branches.
    pub fn union(left: Op, right: Op) -> Op {
        // The left side's branches kept in place: a union built one branch at a time is linear, not quadratic.
        let mut out = match left {
            Op::Empty => Vec::new(),
            Op::Union(inner) => inner,
            other => vec![other],
        };
        match right {
            Op::Empty => {}
            Op::Union(inner) => out.extend(inner),
            other => out.push(other),
        }
        match out.len() {
            0 => Op::Empty,
            1 => out.pop().expect("one branch"),
            _ => Op::Union(out),
        }
    }

    /// FILTER; a constant-true condition is no filter, a filter of nothing is nothing.
    pub fn filter(input: Op, expr: Expr) -> Op {
        match (&input, &expr) {
            (Op::Empty, _) => Op::Empty,
            (_, Expr::True) => input,
            _ => Op::Filter {
                input: Box::new(input),
                expr,
            },
        }
    }

    /// OPTIONAL; optional nothing is the left side unchanged, nothing optional-joined is nothing.
    pub fn left_join(left: Op, right: Op, filter: Option<Expr>) -> Op {
        match (&left, &right) {
            (Op::Empty, _) => Op::Empty,
            (_, Op::Empty) => left,
            _ => Op::LeftJoin {
                left: Box::new(left),
                right: Box::new(right),
                filter: filter.filter(|f| *f != Expr::True),
            },
        }
    }

    /// MINUS; minus nothing is the left side.
    pub fn minus(left: Op, right: Op) -> Op {
        match (&left, &right) {
            (Op::Empty, _) => Op::Empty,
            (_, Op::Empty) => left,
            _ => Op::Minus {
                left: Box::new(left),
                right: Box::new(right),
            },
        }
    }

    /// `subject path object`: a single link is a triple pattern, a sequence a join over a hidden variable, an
    /// alternative a union, an inverse swaps the ends; closures and negated sets stay [`Op::Path`].
    pub fn path(
        subject: PatternTerm,
        path: PathExpr,
        object: PatternTerm,
        graph: GraphTerm,
        vars: &mut VarTable,
    ) -> Op {
        match path {
            PathExpr::Link(p) => Op::Pattern(TriplePattern {
                terms: [subject, PatternTerm::Const(p), object],
                graph,
            }),
            PathExpr::Reverse(inner) => Op::path(object, *inner, subject, graph, vars),
            PathExpr::Sequence(a, b) => {
                let mid = PatternTerm::Var(vars.hidden("p"));
                let left = Op::path(subject, *a, mid.clone(), graph, vars);
                let right = Op::path(mid, *b, object, graph, vars);
                Op::join(left, right)
            }
            PathExpr::Alternative(a, b) => {
                let left = Op::path(subject.clone(), *a, object.clone(), graph, vars);
                let right = Op::path(subject, *b, object, graph, vars);
                Op::union(left, right)
            }
            other => Op::Path {
                subject,
                path: other,
                object,
                graph,
            },
        }
    }

    /// The variables the operator may bind in its output ("in scope"), graph variables of patterns included.
    pub fn vars(&self) -> VarSet {
        let mut out = VarSet::new();
        self.collect_vars(&mut out, true);
        out
    }

    /// Every variable the operator reads or binds in its own scope: [`Op::vars`] and those of its expressions
    /// (FILTER, BIND, an OPTIONAL's condition, ORDER BY keys, nested EXISTS) and of a MINUS's right side; a
    /// subquery shows only what it projects. What an enclosing EXISTS substitutes the outer row into, so a
    /// FILTER holding one waits for all of these (`EXISTS { FILTER (?x = 2) }` reads `?x`).
    pub fn mentioned_vars(&self) -> VarSet {
        let mut out = VarSet::new();
        self.collect_mentioned(&mut out);
        out
    }

    fn collect_mentioned(&self, out: &mut VarSet) {
        match self {
            Op::Empty | Op::Unit | Op::Pattern(_) | Op::Path { .. } | Op::GraphName(_) => {
                out.extend(&self.vars())
            }
            Op::Values { vars, .. } | Op::Project { vars, .. } => {
                vars.iter().for_each(|v| out.insert(*v))
            }
            Op::Join(ops) | Op::Union(ops) => ops.iter().for_each(|o| o.collect_mentioned(out)),
            Op::LeftJoin {
                left,
                right,
                filter,
            } => {
                left.collect_mentioned(out);
                right.collect_mentioned(out);
                if let Some(f) = filter {
                    out.extend(&f.vars());
                }
            }
            Op::Minus { left, right } => {
                left.collect_mentioned(out);
                right.collect_mentioned(out);
            }
            Op::Filter { input, expr } => {
                input.collect_mentioned(out);
                out.extend(&expr.vars());
            }
            Op::Extend { input, var, expr } => {
                input.collect_mentioned(out);
                out.insert(*var);
                out.extend(&expr.vars());
            }
            Op::OrderBy { input, keys } => {
                input.collect_mentioned(out);
                keys.iter().for_each(|(e, _)| out.extend(&e.vars()));
            }
            Op::Distinct(input) | Op::Reduced(input) | Op::Slice { input, .. } => {
                input.collect_mentioned(out)
            }
            Op::Group { .. } => out.extend(&self.vars()),
        }
    }

    /// The variables in term positions: [`Op::vars`] without the graph variables of patterns and paths.
    pub fn term_vars(&self) -> VarSet {
        let mut out = VarSet::new();
        self.collect_vars(&mut out, false);
        out
    }

    /// Graph variables of patterns that no term position binds: the graph an enclosing `GRAPH ?g` reads. Such a
    /// variable ties the operator to its context; it is not one of the operator's own bindings.
    pub fn graph_context_vars(&self) -> VarSet {
        let mut graphs = VarSet::new();
        self.visit_graph_terms(&mut |g| {
            if let GraphTerm::Var(v) = g {
                graphs.insert(*v);
            }
        });
        let terms = self.term_vars();
        graphs.iter().filter(|v| !terms.contains(*v)).collect()
    }

    /// Replaces the graph variable `from` by `to` in every pattern, path and graph-name leaf.
    pub fn rename_graph_var(&mut self, from: VarId, to: VarId) {
        self.visit_graph_terms_mut(&mut |g| {
            if *g == GraphTerm::Var(from) {
                *g = GraphTerm::Var(to);
            }
        });
    }

    fn visit_graph_terms(&self, f: &mut impl FnMut(&GraphTerm)) {
        match self {
            Op::Pattern(p) => f(&p.graph),
            Op::Path { graph, .. } | Op::GraphName(graph) => f(graph),
            _ => self
                .children()
                .into_iter()
                .for_each(|c| c.visit_graph_terms(f)),
        }
        if let Some(exprs) = self.exprs() {
            for e in exprs {
                e.visit(&mut |sub| {
                    if let Expr::Exists(op) = sub {
                        op.visit_graph_terms(f);
                    }
                });
            }
        }
    }

    fn visit_graph_terms_mut(&mut self, f: &mut impl FnMut(&mut GraphTerm)) {
        match self {
            Op::Pattern(p) => f(&mut p.graph),
            Op::Path { graph, .. } | Op::GraphName(graph) => f(graph),
            Op::Join(ops) | Op::Union(ops) => {
                ops.iter_mut().for_each(|o| o.visit_graph_terms_mut(f))
            }
            Op::LeftJoin {
                left,
                right,
                filter,
            } => {
                left.visit_graph_terms_mut(f);
                right.visit_graph_terms_mut(f);
                if let Some(e) = filter {
                    e.visit_ops_mut(&mut |op| op.visit_graph_terms_mut(f));
                }
            }
            Op::Minus { left, right } => {
                left.visit_graph_terms_mut(f);
                right.visit_graph_terms_mut(f);
            }
            Op::Filter { input, expr } | Op::Extend { input, expr, .. } => {
                input.visit_graph_terms_mut(f);
                expr.visit_ops_mut(&mut |op| op.visit_graph_terms_mut(f));
            }
            Op::Project { input, .. }
            | Op::Distinct(input)
            | Op::Reduced(input)
            | Op::OrderBy { input, .. }
            | Op::Slice { input, .. }
            | Op::Group { input, .. } => input.visit_graph_terms_mut(f),
            Op::Empty | Op::Unit | Op::Values { .. } => {}
        }
    }

    /// The direct sub-operators.
    pub fn children(&self) -> Vec<&Op> {
        match self {
            Op::Join(ops) | Op::Union(ops) => ops.iter().collect(),
            Op::LeftJoin { left, right, .. } | Op::Minus { left, right } => vec![left, right],
            Op::Filter { input, .. }
            | Op::Extend { input, .. }
            | Op::Project { input, .. }
            | Op::Distinct(input)
            | Op::Reduced(input)
            | Op::OrderBy { input, .. }
            | Op::Slice { input, .. }
            | Op::Group { input, .. } => vec![input],
            _ => Vec::new(),
        }
    }

    /// The expressions the operator itself holds (filters, binds, the OPTIONAL condition).
    pub(crate) fn exprs(&self) -> Option<Vec<&Expr>> {
        match self {
            Op::Filter { expr, .. } | Op::Extend { expr, .. } => Some(vec![expr]),
            Op::LeftJoin {
                filter: Some(f), ..
            } => Some(vec![f]),
            _ => None,
        }
    }

    fn collect_vars(&self, out: &mut VarSet, graphs: bool) {
        match self {
            Op::Empty | Op::Unit => {}
            Op::Pattern(p) => {
                for t in &p.terms {
                    t.collect_vars(out);
                }
                if let (true, GraphTerm::Var(g)) = (graphs, p.graph) {
                    out.insert(g);
                }
            }
            Op::Path {
                subject,
                object,
                graph,
                ..
            } => {
                subject.collect_vars(out);
                object.collect_vars(out);
                if let (true, GraphTerm::Var(g)) = (graphs, graph) {
                    out.insert(*g);
                }
            }
            Op::GraphName(g) => {
                if let GraphTerm::Var(v) = g {
                    out.insert(*v);
                }
            }
            Op::Join(ops) | Op::Union(ops) => ops.iter().for_each(|o| o.collect_vars(out, graphs)),
            Op::LeftJoin { left, right, .. } => {
                left.collect_vars(out, graphs);
                right.collect_vars(out, graphs);
            }
            Op::Minus { left, .. } => left.collect_vars(out, graphs),
            Op::Filter { input, .. }
            | Op::Distinct(input)
            | Op::Reduced(input)
            | Op::OrderBy { input, .. }
            | Op::Slice { input, .. } => input.collect_vars(out, graphs),
            Op::Extend { input, var, .. } => {
                input.collect_vars(out, graphs);
                out.insert(*var);
            }
            Op::Values { vars, .. } => vars.iter().for_each(|v| out.insert(*v)),
            Op::Project { vars, .. } => vars.iter().for_each(|v| out.insert(*v)),
            Op::Group {
                keys, aggregates, ..
            } => {
                keys.iter().for_each(|v| out.insert(*v));
                aggregates.iter().for_each(|(v, _)| out.insert(*v));
            }
        }
    }

    /// The variables bound in every solution of the operator ("certainly bound").
    pub fn certain_vars(&self) -> VarSet {
        match self {
            Op::Empty | Op::Unit => VarSet::new(),
            Op::Pattern(_) | Op::Path { .. } | Op::GraphName(_) => self.vars(),
            Op::Join(ops) => {
                let mut out = VarSet::new();
                ops.iter().for_each(|o| out.extend(&o.certain_vars()));
                out
            }
            Op::Union(ops) => {
                let mut it = ops.iter().map(Op::certain_vars);
                let first = it.next().unwrap_or_default();
                it.fold(first, |acc, s| acc.intersection(&s))
            }
            Op::LeftJoin { left, .. } | Op::Minus { left, .. } => left.certain_vars(),
            Op::Filter { input, .. }
            | Op::Distinct(input)
            | Op::Reduced(input)
            | Op::OrderBy { input, .. }
            | Op::Slice { input, .. }
            | Op::Extend { input, .. } => input.certain_vars(),
            Op::Values { vars, rows } => values_certain_vars(vars, rows),
            Op::Project { input, vars } => input
                .certain_vars()
                .intersection(&vars.iter().copied().collect()),
            Op::Group { keys, .. } => {
                // Group keys are bound unless the key variable was unbound in the input rows.
                let certain = match self {
                    Op::Group { input, .. } => input.certain_vars(),
                    _ => unreachable!(),
                };
                keys.iter()
                    .copied()
                    .filter(|k| certain.contains(*k))
                    .collect()
            }
        }
    }
}

impl fmt::Display for VarId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "?{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(v: u32) -> Op {
        Op::Pattern(TriplePattern {
            terms: [
                PatternTerm::Var(VarId(v)),
                PatternTerm::Const(TermId(11)),
                PatternTerm::Var(VarId(v + 1)),
            ],
            graph: GraphTerm::Default,
        })
    }

    #[test]
    fn join_with_empty_is_empty_and_with_unit_is_the_other_side() {
        assert_eq!(Op::join(pattern(0), Op::Empty), Op::Empty);
        assert_eq!(Op::join(Op::Unit, pattern(0)), pattern(0));
        assert_eq!(
            Op::join(Op::join(pattern(0), pattern(2)), pattern(4)),
            Op::Join(vec![pattern(0), pattern(2), pattern(4)])
        );
    }

    #[test]
    fn union_drops_empty_branches_and_filter_true_is_no_filter() {
        assert_eq!(Op::union(Op::Empty, pattern(0)), pattern(0));
        assert_eq!(Op::filter(pattern(0), Expr::True), pattern(0));
        assert_eq!(Op::left_join(pattern(0), Op::Empty, None), pattern(0));
    }

    #[test]
    fn optional_side_variables_are_not_certain() {
        let op = Op::left_join(pattern(0), pattern(5), None);
        assert_eq!(op.vars().len(), 4);
        assert_eq!(
            op.certain_vars(),
            [VarId(0), VarId(1)].into_iter().collect()
        );
    }
}
