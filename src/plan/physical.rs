//! This module defines the physical plan: [`Node`]s the executor runs, each over a batch of input rows, and
//! the plan printer (`--explain-plan`).

use std::fmt::Write;

use crate::ir::display::Namer;
use crate::ir::{
    Aggregate, Expr, GraphTerm, PathExpr, PatternTerm, TriplePattern, VarId, VarTable,
};

/// A planned query: the root node, the row width, and the variables.
#[derive(Debug)]
pub struct Plan {
    /// The root.
    pub root: Node,
    /// Row width (every variable, hidden ones included).
    pub width: usize,
    /// Variable names.
    pub vars: VarTable,
    /// How many nodes (ids are `0..nodes`).
    pub nodes: usize,
}

/// One node: an id (for caches and statistics), the estimated output rows, and what it does.
#[derive(Debug)]
pub struct Node {
    /// Unique within the plan.
    pub id: usize,
    /// Estimated rows out per input row.
    pub est: f64,
    /// The operation.
    pub kind: Kind,
}

/// An EXISTS pattern of an expression, planned to run seeded by a batch of rows.
#[derive(Debug)]
pub struct ExistsPlan {
    /// Where the expression finds its result ([`crate::exec::eval::exists_key`] of the pattern).
    pub key: usize,
    /// The pattern, planned with the outer variables bound.
    pub plan: Node,
    /// The hidden column carrying each seed row's index.
    pub seed: VarId,
}

/// How OPTIONAL runs its right side.
#[derive(Debug)]
pub enum LeftMode {
    /// Run the right side seeded by each batch of left rows (the right side reads their bindings).
    Seeded {
        /// The hidden column carrying each left row's index.
        seed: VarId,
    },
    /// Run the right side once, independently, and probe it with each left row.
    Hash {
        /// Variables bound on both sides: the hash key.
        keys: Vec<VarId>,
    },
}

/// What a node does to each input row.
#[derive(Debug)]
#[allow(missing_docs)]
pub enum Kind {
    /// Nothing comes out.
    Empty,
    /// The input passes unchanged.
    Unit,
    /// Joins each input row with inline rows.
    Values {
        vars: Vec<VarId>,
        rows: crate::ir::ValueRows,
    },
    /// Extends each input row with the matches of a triple pattern (index nested-loop join).
    Scan(TriplePattern),
    /// Keeps each input row the triple pattern matches, once: what it would bind, nothing after reads (a
    /// semijoin; see [`super::probe`]). The variables are the ones read after it: a row whose values of them
    /// (bound, or not yet) equal those of the row it kept last is a duplicate of that row for everything after,
    /// and is dropped unprobed.
    Probe(TriplePattern, Vec<VarId>),
    /// Extends each input row with the matches of a property path.
    Path {
        subject: PatternTerm,
        path: PathExpr,
        object: PatternTerm,
        graph: GraphTerm,
    },
    /// Joins each input row with the dataset's named graphs.
    GraphName(GraphTerm),
    /// Stages applied in order: a pipeline of joins, filters and binds.
    Seq(Vec<Node>),
    /// Keeps rows whose condition holds.
    Filter { expr: Expr, exists: Vec<ExistsPlan> },
    /// Binds a variable (BIND).
    Extend {
        var: VarId,
        expr: Expr,
        exists: Vec<ExistsPlan>,
    },
    /// Joins each input row with the rows of `build`, run once from nothing and hashed on `keys`.
    HashJoin { build: Box<Node>, keys: Vec<VarId> },
    /// Each branch over the same input, one after the other.
    Union(Vec<Node>),
    /// OPTIONAL of the input with `right`.
    LeftJoin {
        right: Box<Node>,
        filter: Option<Expr>,
        exists: Vec<ExistsPlan>,
        mode: LeftMode,
    },
    /// MINUS of `right` (run once) from the input; `context` are graph variables of an enclosing GRAPH, which
    /// must agree but do not count as shared variables.
    Minus {
        right: Box<Node>,
        context: Vec<VarId>,
    },
    /// GROUP BY over the rows of `input`.
    Group {
        input: Box<Node>,
        keys: Vec<VarId>,
        aggregates: Vec<(VarId, Aggregate)>,
    },
    /// Keeps only `vars`.
    Project { input: Box<Node>, vars: Vec<VarId> },
    /// Drops repeated rows.
    Distinct(Box<Node>),
    /// Sorts.
    OrderBy {
        input: Box<Node>,
        keys: Vec<(Expr, bool)>,
    },
    /// Skips `offset` rows and keeps `limit`.
    Slice {
        input: Box<Node>,
        offset: usize,
        limit: Option<usize>,
    },
}

impl Plan {
    /// The plan as an indented tree with estimated (and, when given, actual) row counts per node.
    pub fn explain(&self, namer: &Namer<'_>, actual: Option<&[u64]>) -> String {
        let mut out = String::new();
        explain_node(&self.root, namer, actual, 0, &mut out);
        out
    }
}

fn explain_node(
    node: &Node,
    n: &Namer<'_>,
    actual: Option<&[u64]>,
    depth: usize,
    out: &mut String,
) {
    let pad = "  ".repeat(depth);
    let label = match &node.kind {
        Kind::Empty => "Empty".to_owned(),
        Kind::Unit => "Unit".to_owned(),
        Kind::Values { vars, rows } => format!(
            "Values ({}) {} rows",
            vars.iter().map(|v| n.var(*v)).collect::<Vec<_>>().join(" "),
            rows.len()
        ),
        Kind::Scan(p) | Kind::Probe(p, _) => {
            let g = n
                .graph(&p.graph)
                .map(|g| format!(" GRAPH {g}"))
                .unwrap_or_default();
            format!(
                "{} {} {} {}{g}",
                if matches!(node.kind, Kind::Probe(..)) {
                    "Probe"
                } else {
                    "Scan"
                },
                n.pattern_term(&p.terms[0]),
                n.pattern_term(&p.terms[1]),
                n.pattern_term(&p.terms[2])
            )
        }
        Kind::Path {
            subject,
            path,
            object,
            ..
        } => format!(
            "Path {} {} {}",
            n.pattern_term(subject),
            n.path(path),
            n.pattern_term(object)
        ),
        Kind::GraphName(g) => format!("GraphName {}", n.graph(g).unwrap_or_default()),
        Kind::Seq(_) => "Pipeline".to_owned(),
        Kind::Filter { expr, .. } => format!("Filter {}", n.expr(expr)),
        Kind::Extend { var, expr, .. } => format!("Bind {} := {}", n.var(*var), n.expr(expr)),
        Kind::HashJoin { keys, .. } => format!(
            "HashJoin on ({})",
            keys.iter().map(|v| n.var(*v)).collect::<Vec<_>>().join(" ")
        ),
        Kind::Union(_) => "Union".to_owned(),
        Kind::LeftJoin { mode, filter, .. } => {
            let how = match mode {
                LeftMode::Seeded { .. } => "seeded".to_owned(),
                LeftMode::Hash { keys } => format!(
                    "hash on ({})",
                    keys.iter().map(|v| n.var(*v)).collect::<Vec<_>>().join(" ")
                ),
            };
            match filter {
                Some(f) => format!("Optional {how} filter {}", n.expr(f)),
                None => format!("Optional {how}"),
            }
        }
        Kind::Minus { .. } => "Minus".to_owned(),
        Kind::Group {
            keys, aggregates, ..
        } => format!(
            "Group by ({}) {} aggregate(s)",
            keys.iter().map(|v| n.var(*v)).collect::<Vec<_>>().join(" "),
            aggregates.len()
        ),
        Kind::Project { vars, .. } => format!(
            "Project {}",
            vars.iter().map(|v| n.var(*v)).collect::<Vec<_>>().join(" ")
        ),
        Kind::Distinct(_) => "Distinct".to_owned(),
        Kind::OrderBy { .. } => "OrderBy".to_owned(),
        Kind::Slice { offset, limit, .. } => match limit {
            Some(l) => format!("Slice offset {offset} limit {l}"),
            None => format!("Slice offset {offset}"),
        },
    };
    let counts = match actual {
        Some(a) => format!(
            "  (est {:.0}, actual {})",
            node.est,
            a.get(node.id).copied().unwrap_or(0)
        ),
        None => format!("  (est {:.0})", node.est),
    };
    let _ = writeln!(out, "{pad}{label}{counts}");
    let children: Vec<&Node> = match &node.kind {
        Kind::Seq(v) | Kind::Union(v) => v.iter().collect(),
        Kind::HashJoin { build, .. } => vec![build],
        Kind::LeftJoin { right, .. } | Kind::Minus { right, .. } => vec![right],
        Kind::Group { input, .. }
        | Kind::Project { input, .. }
        | Kind::Distinct(input)
        | Kind::OrderBy { input, .. }
        | Kind::Slice { input, .. } => vec![input],
        _ => Vec::new(),
    };
    for c in children {
        explain_node(c, n, actual, depth + 1, out);
    }
    let exists = match &node.kind {
        Kind::Filter { exists, .. }
        | Kind::Extend { exists, .. }
        | Kind::LeftJoin { exists, .. } => exists.as_slice(),
        _ => &[],
    };
    for e in exists {
        let _ = writeln!(out, "{pad}  Exists (seeded)");
        explain_node(&e.plan, n, actual, depth + 2, out);
    }
}
