//! This module defines property paths in the dataflow engine: the pairs a path relates in one graph, or in each
//! named graph (`GRAPH ?g { s path o }`, a node then a (graph, term) pair, so no step leaves its graph), as a
//! collection (closures iterated to a fixpoint), with the zero-length step as identity pairs.
//!
//! ```text
//! P(p)      = { (s, o) | s p o ∈ G }          P(!(p|…)) = { (s, o) | s q o ∈ G, q ∉ {p, …} }
//! P(^e)     = P(e) reversed                   P(a|b)    = P(a) ∪ P(b)
//! P(a/b)    = P(a) ∘ P(b), ∪ P(a) when b is nullable, ∪ P(b) when a is
//! P(e+)     = x where x = distinct(P(e) ∪ x ∘ P(e)), from x = ∅ (iterated on differences)
//! P(e*)     = P(e+), nullable                 P(e?)     = P(e), nullable
//! nullable  = e*, e?, or a|b / a/b with either / both nullable: the path relates a term to itself
//! ```
//!
//! A nullable path adds the identity pairs the executor's evaluation finds (`path::pairs`): on a constant end,
//! that term (in the graph or not); with both ends variables, every node of the graph (each subject and object).
//! A row binding the path's variable elsewhere is joined with these, so a term outside the graph gets no
//! zero-length step, as in the executor's `reach_bound`. Pairs are a set: a rule's facts are, and the engine
//! runs no aggregate that would count repeated rows. Closures have no visited-node limit here; `--timeout` and
//! `--max-facts` bound them.

use differential_dataflow::VecCollection;
use differential_dataflow::lattice::Lattice;
use differential_dataflow::operators::iterate::Iterate;
use timely::progress::Timestamp;

use crate::exec::path::nullable;
use crate::ir::{GraphTerm, PathExpr, PatternTerm, VarId};
use crate::store::TermId;

use super::{Cx, Row, UNBOUND, bind_term, bind_var};

/// Pairs (start, end) a path relates.
type Pairs<'s, T, N> = VecCollection<'s, T, (N, N), isize>;

/// Where a path runs: in one graph, whose terms are its nodes, or in each named graph (`GRAPH ?g`), where a node
/// is a term of one graph, (graph, term), so that no step leaves the graph it started in.
pub(super) trait Within: Copy + 'static {
    /// A node of the pairs.
    type Node: differential_dataflow::ExchangeData + std::hash::Hash + Copy;
    /// Term `t` of graph `g` as a node, if the path runs in `g`.
    fn node(self, g: u32, t: u32) -> Option<Self::Node>;
    /// A node's graph and term.
    fn parts(self, n: Self::Node) -> (u32, u32);
    /// The one graph, when the path runs in one.
    fn one(self) -> Option<u32>;
}

/// One graph: the default graph or a named one.
#[derive(Clone, Copy)]
pub(super) struct One(pub u32);

impl Within for One {
    type Node = u32;
    fn node(self, g: u32, t: u32) -> Option<u32> {
        (g == self.0).then_some(t)
    }
    fn parts(self, n: u32) -> (u32, u32) {
        (self.0, n)
    }
    fn one(self) -> Option<u32> {
        Some(self.0)
    }
}

/// Each named graph (`GRAPH ?g { s path o }`).
#[derive(Clone, Copy)]
pub(super) struct EachNamed;

impl Within for EachNamed {
    type Node = (u32, u32);
    fn node(self, g: u32, t: u32) -> Option<(u32, u32)> {
        (g != TermId::DEFAULT_GRAPH.0).then_some((g, t))
    }
    fn parts(self, n: (u32, u32)) -> (u32, u32) {
        n
    }
    fn one(self) -> Option<u32> {
        None
    }
}

impl<'s, T: Timestamp + Lattice> Cx<'s, T> {
    /// The rows of `subject path object` matched in `graph`: the default graph, a named one, or each named graph
    /// that has facts, `?g` bound to its name.
    pub(super) fn path_rows(
        &self,
        spo: (&PatternTerm, &PathExpr, &PatternTerm),
        graph: &GraphTerm,
        width: usize,
    ) -> VecCollection<'s, T, Row, isize> {
        match graph {
            GraphTerm::Default => self.path_rows_in(spo, One(TermId::DEFAULT_GRAPH.0), None, width),
            GraphTerm::Named(n) => self.path_rows_in(spo, One(n.0), None, width),
            GraphTerm::Var(v) => self.path_rows_in(spo, EachNamed, Some(*v), width),
        }
    }

    fn path_rows_in<W: Within>(
        &self,
        (subject, path, object): (&PatternTerm, &PathExpr, &PatternTerm),
        within: W,
        graph_var: Option<VarId>,
        width: usize,
    ) -> VecCollection<'s, T, Row, isize> {
        let mut pairs = self.pairs(path, within);
        if nullable(path) {
            let identity = match (subject, object) {
                // The constant end's term in each graph the path runs in: the one graph (whether it holds the
                // term or not), or each named graph that has facts.
                (PatternTerm::Const(a), _) | (_, PatternTerm::Const(a)) => {
                    let a = a.0;
                    let graphs = match within.one() {
                        Some(g) => self.unit.clone().map(move |()| g),
                        None => (self.facts.clone())
                            .flat_map(move |[g, ..]| within.node(g, a).map(|_| g))
                            .distinct(),
                    };
                    graphs.flat_map(move |g| within.node(g, a).map(|n| (n, n)))
                }
                // Every node of each graph the path runs in.
                _ => self.facts.clone().flat_map(move |[g, s, _, o]| {
                    [within.node(g, s), within.node(g, o)]
                        .into_iter()
                        .flatten()
                        .map(|n| (n, n))
                }),
            };
            pairs = pairs.concat(identity);
        }
        let (subject, object, names) = (subject.clone(), object.clone(), self.names());
        pairs.distinct().flat_map(move |(x, y)| {
            let mut row = vec![UNBOUND; width];
            let ((g, x), (_, y)) = (within.parts(x), within.parts(y));
            (graph_var.is_none_or(|v| bind_var(v, g, &mut row))
                && bind_term(&subject, x, &mut row, &names)
                && bind_term(&object, y, &mut row, &names))
            .then_some(row)
        })
    }

    /// The pairs `path` relates in the graphs it runs in, a zero-length step aside (see [`nullable`]).
    fn pairs<W: Within>(&self, path: &PathExpr, within: W) -> Pairs<'s, T, W::Node> {
        // Both ends of a fact, as nodes, when its graph is one the path runs in.
        let ends = move |g: u32, s: u32, o: u32| Some((within.node(g, s)?, within.node(g, o)?));
        match path {
            PathExpr::Link(p) => {
                let p = p.0;
                let source = self.by_predicate.get(&p).unwrap_or(&self.facts);
                source
                    .clone()
                    .flat_map(move |[g, s, q, o]| if q == p { ends(g, s, o) } else { None })
            }
            PathExpr::Negated(set) => {
                let set: Vec<u32> = set.iter().map(|t| t.0).collect();
                (self.facts.clone()).flat_map(move |[g, s, p, o]| {
                    if set.contains(&p) {
                        None
                    } else {
                        ends(g, s, o)
                    }
                })
            }
            PathExpr::Reverse(e) => self.pairs(e, within).map(|(s, o)| (o, s)),
            PathExpr::Alternative(a, b) => self.pairs(a, within).concat(self.pairs(b, within)),
            // P(a/b) = P(a) ∘ P(b), ∪ P(a) when b is nullable, ∪ P(b) when a is.
            PathExpr::Sequence(a, b) => {
                let (pa, pb) = (self.pairs(a, within), self.pairs(b, within));
                let mut out = (pa.clone().map(|(x, y)| (y, x)))
                    .join_map(pb.clone(), |_, x: &W::Node, z: &W::Node| (*x, *z));
                if nullable(b) {
                    out = out.concat(pa);
                }
                if nullable(a) {
                    out = out.concat(pb);
                }
                out
            }
            PathExpr::OneOrMore(e) | PathExpr::ZeroOrMore(e) => closure(self.pairs(e, within)),
            PathExpr::ZeroOrOne(e) => self.pairs(e, within),
        }
    }
}

// P(e+) = x where x = distinct(P(e) ∪ x ∘ P(e)), from x = ∅.
/// The transitive closure of `base`, iterated on differences (semi-naive).
fn closure<'s, T, N>(base: Pairs<'s, T, N>) -> Pairs<'s, T, N>
where
    T: Timestamp + Lattice,
    N: differential_dataflow::ExchangeData + std::hash::Hash + Copy,
{
    let base = base.distinct();
    let step = base.clone();
    base.scope().iterate(move |inner, x| {
        let step = step.enter(inner);
        (x.map(|(s, m)| (m, s)))
            .join_map(step.clone(), |_, s: &N, o: &N| (*s, *o))
            .concat(step)
            .distinct()
    })
}
