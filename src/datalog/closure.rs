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
}

/// A recognised closure rule and its compiled body.
#[derive(Clone, Debug)]
pub struct Closure {
    /// The shape.
    pub shape: Shape,
    /// The head predicate.
    pub r: TermId,
    /// The step predicate (`R` itself for [`Shape::Square`]) and whether the body follows it forward.
    pub step: (TermId, bool),
    /// The body it stands for, as a query (what [`Closure::run`] computes).
    pub body: Op,
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
            .map(|[s, _, o]| match self.shape {
                // x T+ y . y R z: keyed by z, searching back from each y.
                Shape::Left | Shape::Square => (o, s),
                // x R y . y T+ z: keyed by x, searching on from each y.
                Shape::Right => (s, o),
            })
            .collect();
        pairs.sort_unstable();
        pairs.dedup();
        let forward = match self.shape {
            Shape::Left | Shape::Square => !self.step.1,
            Shape::Right => self.step.1,
        };
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
                if self.shape == Shape::Right && !crate::exec::path::is_node(terms, *key) {
                    continue;
                }
                for n in nodes {
                    let t = graph.term(n);
                    let (x, z) = match self.shape {
                        Shape::Left | Shape::Square => {
                            if !subject_ok[n as usize] {
                                continue;
                            }
                            (t, *key)
                        }
                        Shape::Right => (*key, t),
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

/// The closure a rule compiles to, if its body is exactly one of the three shapes (two patterns, nothing else),
/// and it has one head `?x R ?z` in the default graph.
pub fn recognize(rule: &Rule) -> Option<Closure> {
    let [head] = rule.heads.as_slice() else {
        return None;
    };
    let (TemplateTerm::Var(x), TemplateTerm::Const(r), TemplateTerm::Var(z), None) =
        (&head.terms[0], &head.terms[1], &head.terms[2], head.graph)
    else {
        return None;
    };
    let (x, r, z) = (*x, *r, *z);
    if x == z {
        return None;
    }
    let Op::Join(ops) = &rule.body else {
        return None;
    };
    let [a, b] = ops.as_slice() else {
        return None;
    };
    let (a, b) = (edge(a)?, edge(b)?);
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
                    body: Op::Join(vec![pattern(y, r, z), path(x, (r, true), y)]),
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
                body: Op::Join(vec![pattern(y, r, z), path(x, (t, forward), y)]),
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
                body: Op::Join(vec![pattern(x, r, y), path(y, (t, forward), z)]),
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
        let mut dict = Dictionary::new();
        sparql::compile(
            "r",
            Origin::File {
                path: "r.rq".into(),
                offset: 0,
                prologue: 0,
            },
            &format!("PREFIX : <http://e/> {text}"),
            &mut dict,
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
