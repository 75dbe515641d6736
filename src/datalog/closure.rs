//! This module defines closure compilation: a one-rule recursive group shaped as a transitive closure runs once, as
//! a property path, instead of iterating. With `R` the head predicate, `R₀` the R facts visible when the group
//! starts, and `T` another constant predicate (either direction):
//!
//! | rule | derives exactly | compiled body |
//! |---|---|---|
//! | `R(x,z) :- T(x,y), R(y,z)` | `x T+ y` and `R₀(y,z)` | `?y R ?z . ?x T+ ?y` |
//! | `R(x,z) :- R(x,y), T(y,z)` | `R₀(x,y)` and `y T+ z` | `?x R ?y . ?y T+ ?z` (only if no T object is a literal) |
//! | `R(x,z) :- R(x,y), R(y,z)` | `x R₀+ y` and `R₀(y,z)` | `?y R ?z . ?x R+ ?y` (last hop stays a pattern) |
//!
//! [`Closure::run`] evaluates the compiled body with the path operator's dense graph: R₀ grouped by the end the path
//! does not touch, one multi-source search per group, so every derived pair comes out once.
//!
//! A two-rule group of the square rule and `R(x,y) :- R(y,x)` makes R an equivalence over the nodes R₀ links
//! ([`Shape::Equivalence`]): it derives every pair of nodes in one connected component of R₀'s links between IRIs
//! and blank nodes (each member with itself included), and each member with every literal or triple-term object
//! R₀ gives any member (such an object is never a subject, so nothing goes on from it). Components come from a
//! union-find, not from iterating the square rule's cubic joins. The same two rules inside a larger recursive group
//! (OWL 2 RL's equality rules) keep their [`Classes`] across the group's passes ([`equivalence_within`]).

pub mod classes;

pub use classes::Classes;

use rayon::prelude::*;

use crate::exec::path::closure::{LinkGraph, Stamp};
use crate::exec::{Cancel, ExecError};
use crate::ir::lower::TemplateTerm;
use crate::ir::{GraphTerm, Op, PathExpr, PatternTerm, TriplePattern, VarId};
use crate::rules::Rule;
use crate::store::{TermId, TermRef, TermSource, View};

/// Which closure shape a rule has.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `R(x,z) :- T(x,y), R(y,z)`: the T steps come first.
    Left,
    /// `R(x,z) :- R(x,y), T(y,z)`: the T steps come last.
    Right,
    /// `R(x,z) :- R(x,y), R(y,z)`.
    Square,
    /// `R(x,z) :- R(x,y), R(y,z)` and `R(x,y) :- R(y,x)`, one recursive group.
    Equivalence,
}

/// A recognised closure rule and its compiled body.
#[derive(Clone, Debug)]
pub struct Closure {
    /// The shape.
    pub shape: Shape,
    /// The head predicate.
    pub r: TermId,
    /// The step predicate (`R` itself for [`Shape::Square`] and [`Shape::Equivalence`]) and whether the body
    /// follows it forward.
    pub step: (TermId, bool),
    /// The body it stands for, as a query (what [`Closure::run`] computes); `None` for [`Shape::Equivalence`],
    /// which is not one query.
    pub body: Option<Op>,
}

impl Closure {
    /// Whether the compiled body derives exactly what iteration would over this view: the right shape following
    /// T forward needs T to have no literal object (the path's far end).
    pub fn applies(&self, view: &View<'_>, terms: &impl TermSource) -> bool {
        if self.shape != Shape::Right || !self.step.1 {
            return true;
        }
        !view
            .scan(TermId::DEFAULT_GRAPH, &[None, Some(self.step.0), None])
            .any(|t| matches!(terms.term(t[2]), TermRef::Literal { .. }))
    }

    /// The compiled body as text (`?x T+ ?y . ?y R ?z`), with `name` spelling IRIs.
    pub fn describe(&self, name: impl Fn(TermId) -> String) -> String {
        let (t, forward) = self.step;
        let step = if forward {
            format!("{}+", name(t))
        } else {
            format!("(^{})+", name(t))
        };
        let r = name(self.r);
        match self.shape {
            Shape::Left => format!("?x {step} ?y . ?y {r} ?z"),
            Shape::Right => format!("?x {r} ?y . ?y {step} ?z"),
            Shape::Square => format!("?x {step} ?y . ?y {r} ?z"),
            Shape::Equivalence => format!(
                "?x ({r}|^{r})+ ?z between IRIs and blank nodes (connected components); to a literal, ?x ({r}|^{r})* ?y . ?y {r} ?z"
            ),
        }
    }
}

impl Closure {
    /// Runs the compiled body over `view` (`R₀` is the R facts it holds): R's facts grouped by the end the path
    /// does not touch, one multi-source breadth-first search per group, so each derived pair `(x, z)` comes out
    /// exactly once. Groups are searched in parallel, in chunks, and emitted in order; `emit` returns `false` to
    /// stop. A search visiting more than `path_limit` nodes fails with [`ExecError::PathLimit`].
    pub fn run(
        &self,
        view: &View<'_>,
        terms: &(impl TermSource + ?Sized),
        path_limit: usize,
        cancel: &Cancel,
        emit: &mut dyn FnMut(TermId, TermId) -> bool,
    ) -> Result<(), ExecError> {
        if self.shape == Shape::Equivalence {
            return self.components(view, terms, path_limit, cancel, emit);
        }
        // Right: x R y . y T+ z, keyed by x, searching on from each y. Left and square: x T+ y . y R z, keyed
        // by z, searching back from each y.
        let right = self.shape == Shape::Right;
        let g = TermId::DEFAULT_GRAPH;
        let graph = LinkGraph::build(view, g, self.step.0);
        // A subject is an IRI or a blank node: a literal reached as `x` makes no fact (as the head would not).
        // Decided once per node, not once per pair.
        let subject_ok: Vec<bool> = (0..graph.len() as u32)
            .map(|i| crate::exec::path::is_node(terms, graph.term(i)))
            .collect();
        // (key, start): the start nodes of each key's search.
        let mut pairs: Vec<(TermId, TermId)> = view
            .scan(g, &[None, Some(self.r), None])
            .map(|[s, _, o]| if right { (s, o) } else { (o, s) })
            .collect();
        pairs.sort_unstable();
        pairs.dedup();
        let forward = self.step.1 == right;
        let mut groups: Vec<(TermId, Vec<u32>)> = Vec::new();
        for (key, start) in pairs {
            let Some(i) = graph.index(start) else {
                continue;
            };
            match groups.last_mut() {
                Some((k, starts)) if *k == key => starts.push(i),
                _ => groups.push((key, vec![i])),
            }
        }
        const CHUNK: usize = 64;
        for chunk in groups.chunks(CHUNK) {
            cancel.check()?;
            let reached: Vec<Result<Vec<u32>, usize>> = chunk
                .par_iter()
                .map_init(Stamp::default, |stamp, (_, starts)| {
                    let mut out = Vec::new();
                    graph
                        .reach_many(starts, forward, stamp, path_limit, &mut out)
                        .map(|()| out)
                })
                .collect();
            for ((key, _), nodes) in chunk.iter().zip(reached) {
                let nodes = nodes.map_err(ExecError::PathLimit)?;
                if right && !crate::exec::path::is_node(terms, *key) {
                    continue;
                }
                for n in nodes {
                    let t = graph.term(n);
                    let (x, z) = if right {
                        (*key, t)
                    } else if subject_ok[n as usize] {
                        (t, *key)
                    } else {
                        continue;
                    };
                    if !emit(x, z) {
                        return Ok(());
                    }
                }
            }
        }
        Ok(())
    }
}

impl Closure {
    /// [`Shape::Equivalence`]: R₀'s links between nodes (IRIs and blank nodes) joined by a union-find; every
    /// component with a link yields all its pairs, and each member pairs with the component's other objects.
    /// Components are emitted in order of their smallest node, members ascending. A component of more than
    /// `path_limit` nodes fails with [`ExecError::PathLimit`] (the group then iterates).
    fn components(
        &self,
        view: &View<'_>,
        terms: &(impl TermSource + ?Sized),
        path_limit: usize,
        cancel: &Cancel,
        emit: &mut dyn FnMut(TermId, TermId) -> bool,
    ) -> Result<(), ExecError> {
        let facts: Vec<[TermId; 3]> = view
            .scan(TermId::DEFAULT_GRAPH, &[None, Some(self.r), None])
            .collect();
        let is_node = |id: TermId| crate::exec::path::is_node(terms, id);
        let mut nodes: Vec<TermId> = facts.iter().map(|t| t[0]).collect();
        nodes.extend(facts.iter().map(|t| t[2]).filter(|&o| is_node(o)));
        nodes.sort_unstable();
        nodes.dedup();
        let index = |id: TermId| nodes.binary_search(&id).expect("a node") as u32;
        let mut sets = UnionFind::new(nodes.len());
        let mut ends: Vec<(u32, TermId)> = Vec::new();
        for &[s, _, o] in &facts {
            if is_node(o) {
                sets.union(index(s), index(o));
            } else {
                ends.push((index(s), o));
            }
        }
        // Members by component (the root), ascending; a component's ends likewise.
        let mut members: Vec<(u32, u32)> =
            (0..nodes.len() as u32).map(|i| (sets.find(i), i)).collect();
        members.sort_unstable();
        let mut ends: Vec<(u32, TermId)> =
            ends.into_iter().map(|(i, o)| (sets.find(i), o)).collect();
        ends.sort_unstable();
        ends.dedup();
        let mut ordered: Vec<&[(u32, u32)]> = members.chunk_by(|a, b| a.0 == b.0).collect();
        ordered.sort_unstable_by_key(|c| c[0].1);
        for component in ordered {
            cancel.check()?;
            let root = component[0].0;
            // A lone node without a link to a node derives nothing new (its facts are R₀'s).
            if component.len() == 1 && !sets.linked[root as usize] {
                continue;
            }
            if component.len() > path_limit {
                return Err(ExecError::PathLimit(path_limit));
            }
            let from = ends.partition_point(|e| e.0 < root);
            let to = ends.partition_point(|e| e.0 <= root);
            let objects = &ends[from..to];
            for &(_, x) in component {
                // A component emits its size squared: the deadline is checked per member too.
                cancel.check()?;
                let x = nodes[x as usize];
                for &(_, z) in component {
                    if !emit(x, nodes[z as usize]) {
                        return Ok(());
                    }
                }
                for &(_, o) in objects {
                    if !emit(x, o) {
                        return Ok(());
                    }
                }
            }
        }
        Ok(())
    }
}

/// A union-find over `0..n` (union by size, path halving), remembering which sets hold a link.
pub(super) struct UnionFind {
    parent: Vec<u32>,
    size: Vec<u32>,
    /// By root: whether a union (a link, a self-link included) touched the set.
    pub(super) linked: Vec<bool>,
}

impl UnionFind {
    pub(super) fn new(n: usize) -> Self {
        Self {
            parent: (0..n as u32).collect(),
            size: vec![1; n],
            linked: vec![false; n],
        }
    }

    /// One more element, alone in its set.
    pub(super) fn push(&mut self) {
        let n = self.parent.len() as u32;
        self.parent.push(n);
        self.size.push(1);
        self.linked.push(false);
    }

    pub(super) fn find(&mut self, mut i: u32) -> u32 {
        while self.parent[i as usize] != i {
            let grand = self.parent[self.parent[i as usize] as usize];
            self.parent[i as usize] = grand;
            i = grand;
        }
        i
    }

    pub(super) fn union(&mut self, a: u32, b: u32) {
        let (mut a, mut b) = (self.find(a), self.find(b));
        if a != b {
            if self.size[a as usize] < self.size[b as usize] {
                std::mem::swap(&mut a, &mut b);
            }
            self.parent[b as usize] = a;
            self.size[a as usize] += self.size[b as usize];
        }
        self.linked[a as usize] = true;
    }
}

/// `R(x,z) :- P(x ~ y), Q(y ~ z)`: a rule whose body is two edges of the default graph that share only `y`,
/// the head's `x` in the first and `z` in the second (each edge either way round). Every `x` linked through a
/// `y` to some `z` is linked to every `z` of that `y`: a union through `y` says what the pairs say, without
/// making a pair per (x, z) (a student's courses are one class whatever their count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hub {
    /// The head predicate.
    pub r: TermId,
    /// The first edge's predicate, and whether `x` is its subject (`P(x, y)`; else `P(y, x)`).
    pub to_hub: (TermId, bool),
    /// The second edge's predicate, and whether `y` is its subject (`Q(y, z)`; else `Q(z, y)`).
    pub from_hub: (TermId, bool),
}

/// A rule with one head `?x R ?z` (x ≠ z) in the default graph and a body of exactly two edges ([`edge`]):
/// (x, R, z) and the edges.
type TwoEdges = ((VarId, TermId, VarId), [(VarId, TermId, VarId); 2]);

/// A rule's one head `?x R ?z` in the default graph: (x, R, z).
fn head_edge(rule: &Rule) -> Option<(VarId, TermId, VarId)> {
    let [head] = rule.heads.as_slice() else {
        return None;
    };
    match (&head.terms[0], &head.terms[1], &head.terms[2], head.graph) {
        (TemplateTerm::Var(x), TemplateTerm::Const(r), TemplateTerm::Var(z), None) => {
            Some((*x, *r, *z))
        }
        _ => None,
    }
}

fn two_edges(rule: &Rule) -> Option<TwoEdges> {
    let (x, r, z) = head_edge(rule)?;
    if x == z {
        return None;
    }
    let Op::Join(ops) = &rule.body else {
        return None;
    };
    let [a, b] = ops.as_slice() else {
        return None;
    };
    Some(((x, r, z), [edge(a)?, edge(b)?]))
}

/// The [`Hub`] a rule is, if it is one.
pub fn hub(rule: &Rule) -> Option<Hub> {
    let ((x, r, z), [a, b]) = two_edges(rule)?;
    // The edge's other end than `v`, and whether `v` is its subject.
    let other = |(s, _, o): (VarId, TermId, VarId), v: VarId| {
        if s == v {
            Some((o, true))
        } else if o == v {
            Some((s, false))
        } else {
            None
        }
    };
    [(a, b), (b, a)].into_iter().find_map(|(first, second)| {
        let (y, x_subject) = other(first, x)?;
        let (z2, y_subject) = other(second, y)?;
        (y != z && z2 == z).then_some(Hub {
            r,
            to_hub: (first.1, x_subject),
            from_hub: (second.1, y_subject),
        })
    })
}

/// A body triple pattern of the default graph with a constant predicate and two distinct variables.
fn edge(op: &Op) -> Option<(VarId, TermId, VarId)> {
    match op {
        Op::Pattern(TriplePattern {
            terms:
                [
                    PatternTerm::Var(s),
                    PatternTerm::Const(p),
                    PatternTerm::Var(o),
                ],
            graph: GraphTerm::Default,
        }) if s != o => Some((*s, *p, *o)),
        _ => None,
    }
}

fn pattern(s: VarId, p: TermId, o: VarId) -> Op {
    Op::Pattern(TriplePattern {
        terms: [
            PatternTerm::Var(s),
            PatternTerm::Const(p),
            PatternTerm::Var(o),
        ],
        graph: GraphTerm::Default,
    })
}

fn path(s: VarId, step: (TermId, bool), o: VarId) -> Op {
    let link = PathExpr::Link(step.0);
    let link = if step.1 {
        link
    } else {
        PathExpr::Reverse(Box::new(link))
    };
    Op::Path {
        subject: PatternTerm::Var(s),
        path: PathExpr::OneOrMore(Box::new(link)),
        object: PatternTerm::Var(o),
        graph: GraphTerm::Default,
    }
}

/// The closure a recursive group compiles to, with the position (in `rules`) of the rule its facts are credited
/// to: one rule by [`recognize`], or the square rule and `R(x,y) :- R(y,x)` as [`Shape::Equivalence`].
pub fn recognize_group(rules: &[&Rule]) -> Option<(usize, Closure)> {
    match rules {
        [rule] => recognize(rule).map(|c| (0, c)),
        [a, b] => {
            let (at, square) = [(0, *a), (1, *b)].into_iter().find_map(|(i, r)| {
                recognize(r)
                    .filter(|c| c.shape == Shape::Square)
                    .map(|c| (i, c))
            })?;
            let other = if at == 0 { *b } else { *a };
            (symmetric(other) == Some(square.r)).then_some((
                at,
                Closure {
                    shape: Shape::Equivalence,
                    body: None,
                    ..square
                },
            ))
        }
        _ => None,
    }
}

/// In a recursive group of more than two rules, a square rule on R and `R(x,y) :- R(y,x)`: their positions in
/// `rules` (the square rule's first; its facts are credited to it) and R. They then run as [`Classes`].
pub fn equivalence_within(rules: &[&Rule]) -> Option<(usize, usize, TermId)> {
    if rules.len() <= 2 {
        return None;
    }
    rules.iter().enumerate().find_map(|(at, rule)| {
        let square = recognize(rule).filter(|c| c.shape == Shape::Square)?;
        let other = rules.iter().position(|r| symmetric(r) == Some(square.r))?;
        Some((at, other, square.r))
    })
}

/// The predicate R of a rule `R(x,y) :- R(y,x)` (one head in the default graph, one pattern), if it is one.
fn symmetric(rule: &Rule) -> Option<TermId> {
    let (x, r, y) = head_edge(rule)?;
    let (s, p, o) = edge(&rule.body)?;
    (p == r && s == y && o == x && x != y).then_some(r)
}

/// The closure a rule compiles to, if its body is exactly one of the three shapes (two patterns, nothing else),
/// and it has one head `?x R ?z` in the default graph.
pub fn recognize(rule: &Rule) -> Option<Closure> {
    let ((x, r, z), [a, b]) = two_edges(rule)?;
    let distinct = |y: VarId| y != x && y != z;
    // R(x,z) :- R(x,y), R(y,z)
    if a.1 == r && b.1 == r {
        for (first, second) in [(a, b), (b, a)] {
            if first.0 == x && second.2 == z && first.2 == second.0 && distinct(first.2) {
                let y = first.2;
                return Some(Closure {
                    shape: Shape::Square,
                    r,
                    step: (r, true),
                    body: Some(Op::Join(vec![pattern(y, r, z), path(x, (r, true), y)])),
                });
            }
        }
        return None;
    }
    let (rp, tp) = match (a.1 == r, b.1 == r) {
        (true, false) => (a, b),
        (false, true) => (b, a),
        _ => return None,
    };
    let t = tp.1;
    // The T pattern connects u and v in either direction: (u T v) forward, (v T u) backward.
    let connects = |u: VarId, v: VarId| -> Option<bool> {
        if tp.0 == u && tp.2 == v {
            Some(true)
        } else if tp.0 == v && tp.2 == u {
            Some(false)
        } else {
            None
        }
    };
    // R(x,z) :- T(x,y), R(y,z)
    if rp.2 == z && distinct(rp.0) {
        let y = rp.0;
        if let Some(forward) = connects(x, y) {
            return Some(Closure {
                shape: Shape::Left,
                r,
                step: (t, forward),
                body: Some(Op::Join(vec![pattern(y, r, z), path(x, (t, forward), y)])),
            });
        }
    }
    // R(x,z) :- R(x,y), T(y,z)
    if rp.0 == x && distinct(rp.2) {
        let y = rp.2;
        if let Some(forward) = connects(y, z) {
            return Some(Closure {
                shape: Shape::Right,
                r,
                step: (t, forward),
                body: Some(Op::Join(vec![pattern(x, r, y), path(y, (t, forward), z)])),
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Origin, sparql};
    use crate::store::Dictionary;

    fn rule(text: &str) -> Rule {
        rule_in(&mut Dictionary::new(), text)
    }

    /// A rule compiled into `dict` (rules compared with each other share one, so their ids agree).
    fn rule_in(dict: &mut Dictionary, text: &str) -> Rule {
        sparql::compile(
            "r",
            Origin::File {
                path: "r.rq".into(),
                offset: 0,
                prologue: 0,
            },
            &format!("PREFIX : <http://e/> {text}"),
            dict,
        )
        .expect("a valid rule")
    }

    #[test]
    fn the_three_shapes_are_recognised_in_both_directions() {
        let cases = [
            (
                "CONSTRUCT { ?x :r ?z } WHERE { ?x :t ?y . ?y :r ?z }",
                Shape::Left,
                true,
            ),
            (
                "CONSTRUCT { ?x :r ?z } WHERE { ?y :r ?z . ?y :t ?x }",
                Shape::Left,
                false,
            ),
            (
                "CONSTRUCT { ?x :r ?z } WHERE { ?x :r ?y . ?y :t ?z }",
                Shape::Right,
                true,
            ),
            (
                "CONSTRUCT { ?x :r ?z } WHERE { ?z :t ?y . ?x :r ?y }",
                Shape::Right,
                false,
            ),
            (
                "CONSTRUCT { ?x :r ?z } WHERE { ?y :r ?z . ?x :r ?y }",
                Shape::Square,
                true,
            ),
        ];
        for (text, shape, forward) in cases {
            let c = recognize(&rule(text)).unwrap_or_else(|| panic!("{text}"));
            assert_eq!((c.shape, c.step.1), (shape, forward), "{text}");
        }
    }

    #[test]
    fn the_square_rule_with_its_symmetric_rule_is_an_equivalence_in_either_order() {
        let mut dict = Dictionary::new();
        let mut rule = |text: &str| rule_in(&mut dict, text);
        let square = rule("CONSTRUCT { ?x :r ?z } WHERE { ?x :r ?y . ?y :r ?z }");
        let symmetric = rule("CONSTRUCT { ?a :r ?b } WHERE { ?b :r ?a }");
        let (at, c) = recognize_group(&[&square, &symmetric]).expect("an equivalence");
        assert_eq!(
            (at, c.shape, c.body.is_none()),
            (0, Shape::Equivalence, true)
        );
        let (at, c) = recognize_group(&[&symmetric, &square]).expect("an equivalence");
        assert_eq!((at, c.shape), (1, Shape::Equivalence));
        // A one-rule group is the rule's own shape.
        assert_eq!(
            recognize_group(&[&square]).map(|(_, c)| c.shape),
            Some(Shape::Square)
        );
        for other in [
            // not symmetric: the head is the body
            "CONSTRUCT { ?a :r ?b } WHERE { ?a :r ?b }",
            // symmetric over another predicate
            "CONSTRUCT { ?a :s ?b } WHERE { ?b :s ?a }",
            // symmetric from another predicate
            "CONSTRUCT { ?a :r ?b } WHERE { ?b :s ?a }",
            // a filter
            "CONSTRUCT { ?a :r ?b } WHERE { ?b :r ?a FILTER(?a != ?b) }",
            // a named-graph head
            "CONSTRUCT { GRAPH :g { ?a :r ?b } } WHERE { ?b :r ?a }",
            // a left-shaped closure is no square rule
            "CONSTRUCT { ?x :r ?z } WHERE { ?x :t ?y . ?y :r ?z }",
        ] {
            let other = rule(other);
            assert!(recognize_group(&[&square, &other]).is_none(), "{other:?}");
        }
        let left = rule("CONSTRUCT { ?x :r ?z } WHERE { ?x :t ?y . ?y :r ?z }");
        assert!(recognize_group(&[&left, &symmetric]).is_none());
        assert!(recognize_group(&[&square, &symmetric, &square]).is_none());
    }

    #[test]
    fn other_bodies_and_heads_do_not_compile() {
        for text in [
            // a third pattern
            "CONSTRUCT { ?x :r ?z } WHERE { ?x :t ?y . ?y :r ?z . ?z :u ?w }",
            // a filter
            "CONSTRUCT { ?x :r ?z } WHERE { ?x :t ?y . ?y :r ?z FILTER(?x != ?z) }",
            // a named-graph head
            "CONSTRUCT { GRAPH :g { ?x :r ?z } } WHERE { ?x :t ?y . ?y :r ?z }",
            // the head reversed
            "CONSTRUCT { ?z :r ?x } WHERE { ?x :t ?y . ?y :r ?z }",
            // not a chain
            "CONSTRUCT { ?x :r ?z } WHERE { ?x :t ?y . ?x :r ?z }",
            // two heads
            "CONSTRUCT { ?x :r ?z . ?z :s ?x } WHERE { ?x :t ?y . ?y :r ?z }",
        ] {
            assert!(recognize(&rule(text)).is_none(), "{text}");
        }
    }
}
