//! This module defines property paths in the dataflow engine: the pairs a path relates in one graph, as a
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
use crate::ir::{GraphTerm, PathExpr, PatternTerm};
use crate::store::TermId;

use super::{Cx, Q, Row, UNBOUND, bind_term};

/// Pairs (start, end) a path relates.
type Pairs<'s, T> = VecCollection<'s, T, (u32, u32), isize>;

impl<'s, T: Timestamp + Lattice> Cx<'s, T> {
    /// The rows of `subject path object` matched in `graph` (the default graph or a named one).
    pub(super) fn path_rows(
        &self,
        (subject, path, object): (&PatternTerm, &PathExpr, &PatternTerm),
        graph: &GraphTerm,
        width: usize,
    ) -> VecCollection<'s, T, Row, isize> {
        let g = match graph {
            GraphTerm::Default => TermId::DEFAULT_GRAPH.0,
            GraphTerm::Named(n) => n.0,
            GraphTerm::Var(_) => unreachable!("check rejects a path inside GRAPH ?g"),
        };
        let mut pairs = self.pairs(path, g);
        if nullable(path) {
            let identity = match (subject, object) {
                (PatternTerm::Const(a), _) | (_, PatternTerm::Const(a)) => {
                    let a = a.0;
                    self.unit.clone().map(move |()| (a, a))
                }
                _ => self.in_graph(g).flat_map(|[_, s, _, o]| [(s, s), (o, o)]),
            };
            pairs = pairs.concat(identity);
        }
        let (subject, object, store) = (subject.clone(), object.clone(), self.store.clone());
        pairs.distinct().flat_map(move |(x, y)| {
            let mut row = vec![UNBOUND; width];
            let dict = &store.dict;
            (bind_term(&subject, x, &mut row, dict) && bind_term(&object, y, &mut row, dict))
                .then_some(row)
        })
    }

    /// The facts of graph `g`.
    fn in_graph(&self, g: u32) -> VecCollection<'s, T, Q, isize> {
        self.facts.clone().filter(move |q| q[0] == g)
    }

    /// The pairs `path` relates in graph `g`, a zero-length step aside (see [`nullable`]).
    fn pairs(&self, path: &PathExpr, g: u32) -> Pairs<'s, T> {
        match path {
            PathExpr::Link(p) => {
                let p = p.0;
                let source = self.by_predicate.get(&p).unwrap_or(&self.facts);
                source
                    .clone()
                    .flat_map(move |[qg, s, qp, o]| (qg == g && qp == p).then_some((s, o)))
            }
            PathExpr::Negated(set) => {
                let set: Vec<u32> = set.iter().map(|t| t.0).collect();
                self.in_graph(g)
                    .flat_map(move |[_, s, p, o]| (!set.contains(&p)).then_some((s, o)))
            }
            PathExpr::Reverse(e) => self.pairs(e, g).map(|(s, o)| (o, s)),
            PathExpr::Alternative(a, b) => self.pairs(a, g).concat(self.pairs(b, g)),
            // P(a/b) = P(a) ∘ P(b), ∪ P(a) when b is nullable, ∪ P(b) when a is.
            PathExpr::Sequence(a, b) => {
                let (pa, pb) = (self.pairs(a, g), self.pairs(b, g));
                let mut out =
                    (pa.clone().map(|(x, y)| (y, x))).join_map(pb.clone(), |_, &x, &z| (x, z));
                if nullable(b) {
                    out = out.concat(pa);
                }
                if nullable(a) {
                    out = out.concat(pb);
                }
                out
            }
            PathExpr::OneOrMore(e) | PathExpr::ZeroOrMore(e) => closure(self.pairs(e, g)),
            PathExpr::ZeroOrOne(e) => self.pairs(e, g),
        }
    }
}

// P(e+) = x where x = distinct(P(e) ∪ x ∘ P(e)), from x = ∅.
/// The transitive closure of `base`, iterated on differences (semi-naive).
fn closure<'s, T: Timestamp + Lattice>(base: Pairs<'s, T>) -> Pairs<'s, T> {
    let base = base.distinct();
    let step = base.clone();
    base.scope().iterate(move |inner, x| {
        let step = step.enter(inner);
        (x.map(|(s, m)| (m, s)))
            .join_map(step.clone(), |_, &s, &o| (s, o))
            .concat(step)
            .distinct()
    })
}
