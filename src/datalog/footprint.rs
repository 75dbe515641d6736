//! This module defines a rule's [`Footprint`]: what its body may read and its heads may write, qualified by graph
//! and predicate (`rdf:type` by class); anything the walk cannot pin down reads or writes everything.

use crate::ir::lower::TemplateTerm;
use crate::ir::{Expr, Func, GraphTerm, Op, PathExpr, PatternTerm};
use crate::store::{TermId, well_known as wk};

use crate::rules::Rule;

/// Which facts of a graph an access touches.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    /// Every fact.
    Any,
    /// Facts with this predicate.
    Predicate(TermId),
    /// `rdf:type` facts with this class.
    Class(TermId),
}

/// Which graphs an access touches.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    /// The graph the rules run against (the data's default graph).
    Default,
    /// One named graph.
    Named(TermId),
    /// Any named graph (`GRAPH ?g`).
    AnyNamed,
}

/// One read or write.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Access {
    /// Graphs.
    pub scope: Scope,
    /// Facts.
    pub key: Key,
    /// Under NOT EXISTS or `!` (a read only).
    pub negated: bool,
    /// Inside a grouped or aggregating subquery (a read only).
    pub aggregated: bool,
}

impl Key {
    /// The predicate of the facts this key names: its own, `rdf:type` for a class; `None` for every fact.
    pub fn predicate(self) -> Option<TermId> {
        match self {
            Key::Predicate(p) => Some(p),
            Key::Class(_) => Some(wk::RDF_TYPE),
            Key::Any => None,
        }
    }
}

impl Access {
    /// Whether this read may observe the write `w`.
    pub fn overlaps(&self, w: &Access) -> bool {
        let scopes = match (self.scope, w.scope) {
            (Scope::Default, Scope::Default) => true,
            (Scope::Named(a), Scope::Named(b)) => a == b,
            (Scope::AnyNamed, Scope::Named(_) | Scope::AnyNamed)
            | (Scope::Named(_), Scope::AnyNamed) => true,
            _ => false,
        };
        let keys = match (self.key, w.key) {
            (Key::Any, _) | (_, Key::Any) => true,
            (Key::Predicate(a), Key::Predicate(b)) => a == b,
            (Key::Class(a), Key::Class(b)) => a == b,
            (Key::Class(_), Key::Predicate(p)) | (Key::Predicate(p), Key::Class(_)) => {
                p == wk::RDF_TYPE
            }
        };
        scopes && keys
    }
}

/// What a rule reads and writes, and whether re-running its body is repeatable.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Footprint {
    /// Reads of the body.
    pub reads: Vec<Access>,
    /// Writes of the heads.
    pub writes: Vec<Access>,
    /// No volatile function (RAND, UUID, STRUUID, BNODE): running the body twice gives the same rows.
    pub repeatable: bool,
    /// The body calls NOW().
    pub reads_clock: bool,
}

impl Footprint {
    /// Whether the body reads anything under a negation.
    pub fn negates(&self) -> bool {
        self.reads.iter().any(|r| r.negated)
    }

    /// Whether the body reads anything inside a grouped or aggregating subquery.
    pub fn aggregates(&self) -> bool {
        self.reads.iter().any(|r| r.aggregated)
    }

    /// Whether running the body over a partial input could conclude something the complete input refutes.
    pub fn is_nonmonotone(&self) -> bool {
        self.negates() || self.aggregates()
    }

    /// Whether any read of `self` may observe a write of `writer`.
    pub fn reads_from(&self, writer: &Footprint) -> bool {
        self.reads
            .iter()
            .any(|r| writer.writes.iter().any(|w| r.overlaps(w)))
    }
}

/// The footprint of a rule.
pub fn footprint(rule: &Rule) -> Footprint {
    let mut fp = Footprint {
        repeatable: true,
        ..Footprint::default()
    };
    walk(&rule.body, Ctx::default(), &mut fp);
    for h in &rule.heads {
        let scope = match h.graph {
            Some(g) => Scope::Named(g),
            None => Scope::Default,
        };
        let key = match (&h.terms[1], &h.terms[2]) {
            (TemplateTerm::Const(wk::RDF_TYPE), TemplateTerm::Const(c)) => Key::Class(*c),
            (TemplateTerm::Const(p), _) => Key::Predicate(*p),
            _ => Key::Any,
        };
        let w = Access {
            scope,
            key,
            negated: false,
            aggregated: false,
        };
        if !fp.writes.contains(&w) {
            fp.writes.push(w);
        }
    }
    fp
}

/// The reads of one operator (a body's operand), as [`footprint`] records them.
pub fn op_reads(op: &Op) -> Vec<Access> {
    let mut fp = Footprint::default();
    walk(op, Ctx::default(), &mut fp);
    fp.reads
}

/// What operand `at` of a join (`ops`) reads. A property path with an end anchored — a constant, or a variable
/// that a triple pattern of the path's graph among the other operands binds as subject or object (a predicate is
/// no node) — reads only its links: its zero-length pairs `(x, x)` reach the join's result only for the `x` the
/// anchor gives, so the graph's other nodes are not read (`?l rdf:rest* ?m . ?m rdf:first ?c`, as SPARQL expands
/// `rdf:rest*/rdf:first`). Any other operand reads what [`op_reads`] says.
pub fn operand_reads(ops: &[&Op], at: usize) -> Vec<Access> {
    let mut fp = Footprint::default();
    walk_operand(ops, at, Ctx::default(), &mut fp);
    fp.reads
}

fn walk_operand(ops: &[&Op], at: usize, cx: Ctx, fp: &mut Footprint) {
    match ops[at] {
        Op::Path {
            subject,
            path,
            object,
            graph,
        } if [subject, object]
            .iter()
            .any(|end| anchored(end, graph, ops, at)) =>
        {
            let mut keys = Vec::new();
            link_keys(path, &mut keys);
            for k in keys {
                read(fp, cx, scope_of(graph), k);
            }
        }
        op => walk(op, cx, fp),
    }
}

/// Whether a path end is a constant, or a variable that a triple pattern of the path's graph among the other
/// operands binds as its subject or object.
fn anchored(end: &PatternTerm, graph: &GraphTerm, ops: &[&Op], path: usize) -> bool {
    match end {
        PatternTerm::Const(_) => true,
        PatternTerm::Var(v) => ops.iter().enumerate().any(|(i, op)| {
            i != path
                && matches!(op, Op::Pattern(tp)
                    if tp.graph == *graph
                        && [&tp.terms[0], &tp.terms[2]].contains(&&PatternTerm::Var(*v)))
        }),
        PatternTerm::Triple(_) => false,
    }
}

/// The reads of a filter condition's EXISTS patterns.
pub fn expr_reads(e: &Expr) -> Vec<Access> {
    let mut fp = Footprint::default();
    walk_expr(e, Ctx::default(), true, &mut fp);
    fp.reads
}

#[derive(Copy, Clone, Default)]
struct Ctx {
    negated: bool,
    aggregated: bool,
}

fn scope_of(g: &GraphTerm) -> Scope {
    match g {
        GraphTerm::Default => Scope::Default,
        GraphTerm::Named(id) => Scope::Named(*id),
        GraphTerm::Var(_) => Scope::AnyNamed,
    }
}

fn read(fp: &mut Footprint, cx: Ctx, scope: Scope, key: Key) {
    let a = Access {
        scope,
        key,
        negated: cx.negated,
        aggregated: cx.aggregated,
    };
    if !fp.reads.contains(&a) {
        fp.reads.push(a);
    }
}

fn walk(op: &Op, cx: Ctx, fp: &mut Footprint) {
    match op {
        Op::Pattern(tp) => {
            let key = match (&tp.terms[1], &tp.terms[2]) {
                (PatternTerm::Const(wk::RDF_TYPE), PatternTerm::Const(c)) => Key::Class(*c),
                (PatternTerm::Const(p), _) => Key::Predicate(*p),
                _ => Key::Any,
            };
            read(fp, cx, scope_of(&tp.graph), key);
        }
        Op::Path { path, graph, .. } => {
            let mut keys = Vec::new();
            path_keys(path, &mut keys);
            for k in keys {
                read(fp, cx, scope_of(graph), k);
            }
        }
        Op::Join(ops) => {
            let ops: Vec<&Op> = ops.iter().collect();
            for at in 0..ops.len() {
                walk_operand(&ops, at, cx, fp);
            }
        }
        Op::Filter { input, expr } => {
            walk(input, cx, fp);
            walk_expr(expr, cx, true, fp);
        }
        Op::Extend { input, expr, .. } => {
            walk(input, cx, fp);
            walk_expr(expr, cx, false, fp);
        }
        Op::LeftJoin {
            left,
            right,
            filter,
        } => {
            walk(left, cx, fp);
            walk(right, cx, fp);
            if let Some(f) = filter {
                walk_expr(f, cx, true, fp);
            }
        }
        Op::Group {
            input, aggregates, ..
        } => {
            let inner = Ctx {
                aggregated: true,
                ..cx
            };
            walk(input, inner, fp);
            for (_, a) in aggregates {
                if let Some(e) = &a.expr {
                    walk_expr(e, inner, false, fp);
                }
            }
        }
        Op::OrderBy { input, keys } => {
            walk(input, cx, fp);
            keys.iter().for_each(|(e, _)| walk_expr(e, cx, false, fp));
        }
        other => other.children().into_iter().for_each(|c| walk(c, cx, fp)),
    }
}

/// The reads of an expression's EXISTS patterns (negated unless `positive` allows them, see
/// [`Expr::visit_exists`]), and its calls to volatile functions and NOW().
fn walk_expr(e: &Expr, cx: Ctx, positive: bool, fp: &mut Footprint) {
    e.visit(&mut |sub| {
        if let Expr::Call(f, _) = sub {
            if f.is_volatile() {
                fp.repeatable = false;
            }
            if *f == Func::Now {
                fp.reads_clock = true;
            }
        }
    });
    e.visit_exists(positive, &mut |op, negated| {
        let inner = Ctx {
            negated: cx.negated || negated,
            ..cx
        };
        walk(op, inner, fp);
    });
}

/// The predicates a path reads; a zero-length step or a negated set reads everything.
/// What a path reads: the predicates of its links (any, for a negated set), and every fact when the path as a
/// whole matches a zero-length path (its pairs `(x, x)` range over every node of the graph). A zero-length step
/// inside a path that needs a link (`rdf:rest*/rdf:first`) reads no more than its links: it starts or ends at a
/// node a link reaches.
fn path_keys(p: &PathExpr, out: &mut Vec<Key>) {
    if nullable(p) {
        out.push(Key::Any);
    }
    link_keys(p, out);
}

/// Whether a path matches a zero-length path.
fn nullable(p: &PathExpr) -> bool {
    match p {
        PathExpr::Link(_) | PathExpr::Negated(_) => false,
        PathExpr::ZeroOrMore(_) | PathExpr::ZeroOrOne(_) => true,
        PathExpr::Reverse(q) | PathExpr::OneOrMore(q) => nullable(q),
        PathExpr::Sequence(a, b) => nullable(a) && nullable(b),
        PathExpr::Alternative(a, b) => nullable(a) || nullable(b),
    }
}

/// The predicates of a path's links.
fn link_keys(p: &PathExpr, out: &mut Vec<Key>) {
    match p {
        PathExpr::Link(id) => out.push(Key::Predicate(*id)),
        PathExpr::Negated(_) => out.push(Key::Any),
        PathExpr::ZeroOrMore(q)
        | PathExpr::ZeroOrOne(q)
        | PathExpr::Reverse(q)
        | PathExpr::OneOrMore(q) => link_keys(q, out),
        PathExpr::Sequence(a, b) | PathExpr::Alternative(a, b) => {
            link_keys(a, out);
            link_keys(b, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_join_reads_only_the_links_of_a_path_a_pattern_anchors() {
        use crate::ir::{TriplePattern, VarId};
        let v = |i: u32| PatternTerm::Var(VarId(i));
        let star = |s: PatternTerm| Op::Path {
            subject: s,
            path: PathExpr::ZeroOrMore(Box::new(PathExpr::Link(TermId(80)))),
            object: v(2),
            graph: GraphTerm::Default,
        };
        let first = Op::Pattern(TriplePattern {
            terms: [v(2), PatternTerm::Const(TermId(81)), v(3)],
            graph: GraphTerm::Default,
        });
        // ?l rdf:rest* ?m . ?m rdf:first ?x
        let anchored = op_reads(&Op::Join(vec![star(v(1)), first.clone()]));
        assert!(anchored.iter().all(|a| a.key != Key::Any), "{anchored:?}");
        // Alone, the path's zero-length pairs range over every node.
        assert!(op_reads(&star(v(1))).iter().any(|a| a.key == Key::Any));
    }

    #[test]
    fn a_path_that_needs_a_link_reads_its_links_and_a_nullable_one_reads_everything() {
        let link = |p: u32| Box::new(PathExpr::Link(TermId(p)));
        let keys = |p: PathExpr| {
            let mut out = Vec::new();
            path_keys(&p, &mut out);
            out
        };
        // (:rest*/:first)+ needs a :first link: its zero-length steps start at nodes a link reaches.
        let needs_link = PathExpr::OneOrMore(Box::new(PathExpr::Sequence(
            Box::new(PathExpr::ZeroOrMore(link(80))),
            link(81),
        )));
        assert_eq!(
            keys(needs_link),
            vec![Key::Predicate(TermId(80)), Key::Predicate(TermId(81))]
        );
        // :rest* and :a?|:b match (x, x) for every node x of the graph.
        assert!(keys(PathExpr::ZeroOrMore(link(80))).contains(&Key::Any));
        let optional = PathExpr::Alternative(Box::new(PathExpr::ZeroOrOne(link(80))), link(81));
        assert!(keys(optional).contains(&Key::Any));
    }

    fn a(scope: Scope, key: Key) -> Access {
        Access {
            scope,
            key,
            negated: false,
            aggregated: false,
        }
    }

    #[test]
    fn class_reads_see_type_writes_and_any_sees_everything() {
        let c = TermId(100);
        assert!(
            a(Scope::Default, Key::Class(c))
                .overlaps(&a(Scope::Default, Key::Predicate(wk::RDF_TYPE)))
        );
        assert!(
            !a(Scope::Default, Key::Class(c)).overlaps(&a(Scope::Default, Key::Class(TermId(101))))
        );
        assert!(
            a(Scope::Default, Key::Any).overlaps(&a(Scope::Default, Key::Predicate(TermId(7))))
        );
        assert!(!a(Scope::Default, Key::Any).overlaps(&a(Scope::Named(TermId(5)), Key::Any)));
        assert!(a(Scope::AnyNamed, Key::Any).overlaps(&a(Scope::Named(TermId(5)), Key::Any)));
    }

    fn reads_of(body: &str) -> Vec<(bool, bool)> {
        let mut dict = crate::store::Dictionary::new();
        let rule = crate::rules::sparql::compile(
            "r",
            crate::rules::Origin::File {
                path: "r.rq".into(),
                offset: 0,
                prologue: 0,
            },
            &format!("PREFIX ex: <http://e/> CONSTRUCT {{ ?x ex:out ?y }} WHERE {{ {body} }}"),
            &mut dict,
        )
        .expect("valid rule");
        let q = dict.intern_iri("http://e/q");
        footprint(&rule)
            .reads
            .iter()
            .filter(|r| r.key == Key::Predicate(q))
            .map(|r| (r.negated, r.aggregated))
            .collect()
    }

    #[test]
    fn exists_is_positive_only_as_a_filter_condition() {
        assert_eq!(
            reads_of("?x ex:p ?y FILTER EXISTS { ?y ex:q ?x }"),
            vec![(false, false)]
        );
        assert_eq!(
            reads_of("?x ex:p ?y FILTER (EXISTS { ?y ex:q ?x } || ?y = ex:a)"),
            vec![(false, false)]
        );
        assert_eq!(
            reads_of("?x ex:p ?y FILTER NOT EXISTS { ?y ex:q ?x }"),
            vec![(true, false)]
        );
        // Double negation, and EXISTS as a value: a row can come from an absence.
        assert_eq!(
            reads_of("?x ex:p ?y FILTER (!(!EXISTS { ?y ex:q ?x }))"),
            vec![(true, false)]
        );
        assert_eq!(
            reads_of("?x ex:p ?z BIND (EXISTS { ?z ex:q ?x } AS ?y)"),
            vec![(true, false)]
        );
        assert_eq!(
            reads_of("?x ex:p ?y FILTER (EXISTS { ?y ex:q ?x } = false)"),
            vec![(true, false)]
        );
    }

    #[test]
    fn reads_inside_a_grouped_subquery_are_aggregated() {
        assert_eq!(
            reads_of("{ SELECT ?x (COUNT(?z) AS ?y) WHERE { ?x ex:q ?z } GROUP BY ?x }"),
            vec![(false, true)]
        );
        assert_eq!(
            reads_of("?x ex:p ?y { SELECT (MAX(?z) AS ?m) WHERE { ?w ex:q ?z } }"),
            vec![(false, true)]
        );
    }
}
