//! This module defines the dependency analysis: rule B depends on rule A when one of B's reads may observe one
//! of A's writes; strongly connected components (petgraph) are the recursive groups, and each group's stage is
//! one past the latest stage of any group it reads from.

use std::collections::VecDeque;

use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};

use super::footprint::{Access, Footprint, Key, Scope};

/// A recursive group (or a single non-recursive rule).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// Rule indices, ascending.
    pub rules: Vec<usize>,
    /// Whether the group reads its own writes (several rules, or one rule reading itself).
    pub recursive: bool,
    /// Its stage (0: reads nothing any rule writes).
    pub stage: usize,
}

/// How a rule reads what another writes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EdgeKind {
    /// An ordinary read.
    Positive,
    /// A read under NOT EXISTS or `!` (`-not->`).
    Negated,
    /// A read inside a grouped or aggregating subquery (`-agg->`).
    Aggregated,
}

impl EdgeKind {
    fn of(read: &Access) -> Self {
        if read.negated {
            EdgeKind::Negated
        } else if read.aggregated {
            EdgeKind::Aggregated
        } else {
            EdgeKind::Positive
        }
    }

    /// The arrow printed for it: `->`, `-not->` or `-agg->`.
    pub fn arrow(self) -> &'static str {
        match self {
            EdgeKind::Positive => "->",
            EdgeKind::Negated => "-not->",
            EdgeKind::Aggregated => "-agg->",
        }
    }

    /// The name JSON output uses.
    pub fn name(self) -> &'static str {
        match self {
            EdgeKind::Positive => "positive",
            EdgeKind::Negated => "negated",
            EdgeKind::Aggregated => "aggregated",
        }
    }
}

/// The facts an edge carries: a graph scope and a predicate or class (the narrower of the read and the write).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Via {
    /// Graphs.
    pub scope: Scope,
    /// Facts.
    pub key: Key,
}

/// Facts flow from rule `from` (it writes them) to rule `to` (it reads them), read as `kind`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edge {
    /// The writer.
    pub from: usize,
    /// The reader.
    pub to: usize,
    /// How the reader reads them.
    pub kind: EdgeKind,
    /// Which facts, in the order found.
    pub via: Vec<Via>,
}

/// A cycle through a negated or aggregated read inside one recursive group: `rules[0] -kind-> rules[1] -> … ->
/// rules[0]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cycle {
    /// The rules along the cycle; the last is the first again.
    pub rules: Vec<usize>,
    /// The first arrow's kind (negated or aggregated).
    pub kind: EdgeKind,
    /// The facts the offending read names.
    pub via: Vec<Via>,
}

/// The program's groups and stages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dependencies {
    /// Groups, ordered by stage, then by their first rule.
    pub groups: Vec<Group>,
    /// Edges, ordered by writer, reader and kind.
    pub edges: Vec<Edge>,
}

impl Dependencies {
    /// The number of stages.
    pub fn stage_count(&self) -> usize {
        self.groups.iter().map(|g| g.stage + 1).max().unwrap_or(0)
    }

    /// The groups of one stage.
    pub fn stage(&self, s: usize) -> impl Iterator<Item = (usize, &Group)> {
        self.groups
            .iter()
            .enumerate()
            .filter(move |(_, g)| g.stage == s)
    }

    /// The group a rule belongs to.
    pub fn group_of(&self, rule: usize) -> usize {
        self.groups
            .iter()
            .position(|g| g.rules.contains(&rule))
            .expect("every rule has a group")
    }

    /// How `to` reads `from` for display: negated if any read is, else aggregated if any is, else positive.
    pub fn arrow(&self, from: usize, to: usize) -> EdgeKind {
        let kinds = || {
            self.edges
                .iter()
                .filter(move |e| e.from == from && e.to == to)
                .map(|e| e.kind)
        };
        if kinds().any(|k| k == EdgeKind::Negated) {
            EdgeKind::Negated
        } else if kinds().any(|k| k == EdgeKind::Aggregated) {
            EdgeKind::Aggregated
        } else {
            EdgeKind::Positive
        }
    }

    /// Every cycle through a negated or aggregated read: a read that may observe a write of the reading rule's
    /// own recursive group, so no stage order can give it complete inputs. One cycle per such group, found by a
    /// breadth-first search inside the group from the reader back to the writer.
    pub fn unstratified(&self) -> Vec<Cycle> {
        let mut out = Vec::new();
        for group in self.groups.iter().filter(|g| g.recursive) {
            let inside = |r: usize| group.rules.contains(&r);
            let Some(bad) = self
                .edges
                .iter()
                .filter(|e| e.kind != EdgeKind::Positive && inside(e.from) && inside(e.to))
                .min_by_key(|e| (e.to, e.from, e.kind))
            else {
                continue;
            };
            let path = self.shortest_path(bad.to, bad.from, &inside);
            // bad.from -kind-> bad.to -> … -> bad.from (the path ends where the first arrow starts).
            let mut rules = vec![bad.from];
            rules.extend(path);
            out.push(Cycle {
                rules,
                kind: bad.kind,
                via: bad.via.clone(),
            });
        }
        out
    }

    /// The rules from `start` to `goal` along edges between rules `inside` accepts (both ends included; just
    /// `[start]` when they are the same rule). Breadth-first, lower rule indices first: deterministic.
    fn shortest_path(
        &self,
        start: usize,
        goal: usize,
        inside: &impl Fn(usize) -> bool,
    ) -> Vec<usize> {
        let mut prev: hashbrown::HashMap<usize, usize> = hashbrown::HashMap::new();
        let mut queue = VecDeque::from([start]);
        prev.insert(start, start);
        while let Some(r) = queue.pop_front() {
            if r == goal {
                break;
            }
            let mut next: Vec<usize> = self
                .edges
                .iter()
                .filter(|e| e.from == r && inside(e.to))
                .map(|e| e.to)
                .collect();
            next.sort_unstable();
            for n in next {
                if !prev.contains_key(&n) {
                    prev.insert(n, r);
                    queue.push_back(n);
                }
            }
        }
        let mut path = vec![goal];
        while let Some(&p) = prev.get(path.last().expect("non-empty")) {
            if p == *path.last().expect("non-empty") {
                break;
            }
            path.push(p);
        }
        path.reverse();
        path
    }
}

/// The narrower of a read and the write it observes: a specific predicate, class or graph over "any".
fn via(read: &Access, write: &Access) -> Via {
    let key = match (read.key, write.key) {
        (Key::Any, k) | (k, Key::Any) => k,
        (Key::Class(c), _) | (_, Key::Class(c)) => Key::Class(c),
        (k, _) => k,
    };
    let scope = match (read.scope, write.scope) {
        (Scope::AnyNamed, s) | (s, Scope::AnyNamed) => s,
        (s, _) => s,
    };
    Via { scope, key }
}

/// Builds the dependency graph of rules with these footprints.
pub fn analyze(footprints: &[Footprint]) -> Dependencies {
    let n = footprints.len();
    // The (writer, reader) pairs that may overlap at all, found through the predicate an access names (a class
    // is an `rdf:type` access) instead of by comparing every rule with every rule; each pair is then checked
    // access by access, in writer-then-reader order as before.
    let bucket = Key::predicate;
    let mut writers_of: hashbrown::HashMap<crate::store::TermId, Vec<usize>> =
        hashbrown::HashMap::new();
    let mut wild: Vec<usize> = Vec::new();
    for (a, writer) in footprints.iter().enumerate() {
        for w in &writer.writes {
            match bucket(w.key) {
                Some(p) => writers_of.entry(p).or_default().push(a),
                None => wild.push(a),
            }
        }
    }
    wild.dedup();
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    let mut candidates: Vec<usize> = Vec::new();
    for (b, reader) in footprints.iter().enumerate() {
        candidates.clear();
        for r in &reader.reads {
            match bucket(r.key) {
                Some(p) => {
                    candidates.extend(writers_of.get(&p).into_iter().flatten());
                    candidates.extend(&wild);
                }
                None => candidates.extend(0..n),
            }
        }
        candidates.sort_unstable();
        candidates.dedup();
        pairs.extend(candidates.iter().map(|&a| (a, b)));
    }
    pairs.sort_unstable();
    let mut edges: Vec<Edge> = Vec::new();
    for (a, b) in pairs {
        let (writer, reader) = (&footprints[a], &footprints[b]);
        {
            let first = edges.len();
            for r in &reader.reads {
                for w in writer.writes.iter().filter(|w| r.overlaps(w)) {
                    let kind = EdgeKind::of(r);
                    let v = via(r, w);
                    match edges[first..].iter_mut().find(|e| e.kind == kind) {
                        Some(e) => {
                            if !e.via.contains(&v) {
                                e.via.push(v);
                            }
                        }
                        None => edges.push(Edge {
                            from: a,
                            to: b,
                            kind,
                            via: vec![v],
                        }),
                    }
                }
            }
            edges[first..].sort_by_key(|e| e.kind);
        }
    }
    let mut graph: DiGraph<usize, ()> = DiGraph::with_capacity(n, edges.len());
    let nodes: Vec<NodeIndex> = (0..n).map(|i| graph.add_node(i)).collect();
    let mut reads_from = vec![Vec::new(); n];
    for e in &edges {
        if !reads_from[e.to].contains(&e.from) {
            graph.add_edge(nodes[e.from], nodes[e.to], ());
            reads_from[e.to].push(e.from);
        }
    }
    // tarjan_scc lists components sinks first; reversed, every component comes after the ones it reads from.
    let mut components: Vec<Vec<usize>> = tarjan_scc(&graph)
        .into_iter()
        .rev()
        .map(|c| {
            let mut rules: Vec<usize> = c.into_iter().map(|ix| graph[ix]).collect();
            rules.sort_unstable();
            rules
        })
        .collect();
    let mut group_of = vec![0; n];
    let mut stages: Vec<usize> = Vec::with_capacity(components.len());
    for (gi, comp) in components.iter().enumerate() {
        for &r in comp {
            group_of[r] = gi;
        }
        let stage = comp
            .iter()
            .flat_map(|&r| reads_from[r].iter())
            .filter(|&&a| !comp.contains(&a))
            .map(|&a| stages[group_of[a]] + 1)
            .max()
            .unwrap_or(0);
        stages.push(stage);
    }
    let mut groups: Vec<Group> = components
        .drain(..)
        .zip(stages)
        .map(|(rules, stage)| {
            let recursive = rules.len() > 1 || reads_from[rules[0]].contains(&rules[0]);
            Group {
                rules,
                recursive,
                stage,
            }
        })
        .collect();
    groups.sort_by_key(|g| (g.stage, g.rules[0]));
    Dependencies { groups, edges }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datalog::footprint::{Access, Key, Scope};
    use crate::store::TermId;

    fn acc(p: u32) -> Access {
        Access {
            scope: Scope::Default,
            key: Key::Predicate(TermId(p)),
            negated: false,
            aggregated: false,
        }
    }

    fn fp(reads: &[u32], writes: &[u32]) -> Footprint {
        Footprint {
            reads: reads.iter().map(|p| acc(*p)).collect(),
            writes: writes.iter().map(|p| acc(*p)).collect(),
            repeatable: true,
            reads_clock: false,
        }
    }

    fn negating(mut f: Footprint, p: u32) -> Footprint {
        f.reads.push(Access {
            negated: true,
            ..acc(p)
        });
        f
    }

    /// Any access over a few predicates, classes and graphs.
    fn any_access() -> impl proptest::strategy::Strategy<Value = Access> {
        use proptest::prelude::*;
        let key = prop_oneof![
            Just(Key::Any),
            (0u32..4).prop_map(|p| Key::Predicate(TermId(p))),
            Just(Key::Predicate(crate::store::well_known::RDF_TYPE)),
            (10u32..12).prop_map(|c| Key::Class(TermId(c))),
        ];
        let scope = prop_oneof![
            Just(Scope::Default),
            Just(Scope::AnyNamed),
            (20u32..22).prop_map(|g| Scope::Named(TermId(g))),
        ];
        (scope, key, any::<bool>(), any::<bool>()).prop_map(|(scope, key, negated, aggregated)| {
            Access {
                scope,
                key,
                negated,
                aggregated,
            }
        })
    }

    proptest::proptest! {
        // The pairs found through the predicate index are exactly the pairs with an overlapping access.
        #[test]
        fn the_indexed_edges_are_the_all_pairs_edges(
            rules in proptest::collection::vec(
                (proptest::collection::vec(any_access(), 0..4), proptest::collection::vec(any_access(), 0..3)),
                0..12,
            )
        ) {
            let footprints: Vec<Footprint> = rules
                .into_iter()
                .map(|(reads, writes)| Footprint { reads, writes, repeatable: true, reads_clock: false })
                .collect();
            let got: Vec<(usize, usize)> = analyze(&footprints).edges.iter().map(|e| (e.from, e.to)).collect();
            let mut want = Vec::new();
            for (a, w) in footprints.iter().enumerate() {
                for (b, r) in footprints.iter().enumerate() {
                    let kinds: std::collections::BTreeSet<EdgeKind> = r
                        .reads
                        .iter()
                        .filter(|x| w.writes.iter().any(|y| x.overlaps(y)))
                        .map(EdgeKind::of)
                        .collect();
                    want.extend(kinds.into_iter().map(|_| (a, b)));
                }
            }
            proptest::prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn producers_come_first_and_cycles_form_recursive_groups() {
        // r0: p -> q ; r1: q -> r ; r2: r -> q (cycle with r1) ; r3: r -> s ; r4: s -> s (self loop)
        let deps = analyze(&[
            fp(&[1], &[2]),
            fp(&[2], &[3]),
            fp(&[3], &[2]),
            fp(&[3], &[4]),
            fp(&[4], &[4]),
        ]);
        let shape: Vec<(Vec<usize>, bool, usize)> = deps
            .groups
            .iter()
            .map(|g| (g.rules.clone(), g.recursive, g.stage))
            .collect();
        assert_eq!(
            shape,
            vec![
                (vec![0], false, 0),
                (vec![1, 2], true, 1),
                (vec![3], false, 2),
                (vec![4], true, 3)
            ]
        );
        assert_eq!(deps.stage_count(), 4);
    }

    #[test]
    fn a_negation_of_a_lower_stage_is_stratified_and_ordered_after_it() {
        // r0: p -> q ; r1: p, not q -> s
        let deps = analyze(&[fp(&[1], &[2]), negating(fp(&[1], &[3]), 2)]);
        assert!(deps.unstratified().is_empty());
        assert_eq!(deps.groups[1].rules, vec![1]);
        assert_eq!(deps.groups[1].stage, 1);
        let kinds: Vec<(usize, usize, EdgeKind)> =
            deps.edges.iter().map(|e| (e.from, e.to, e.kind)).collect();
        assert_eq!(kinds, vec![(0, 1, EdgeKind::Negated)]);
    }

    #[test]
    fn a_negation_inside_its_group_is_a_cycle_starting_with_the_negated_arrow() {
        // r0: s -> q ; r1: q -> t ; r2: t, not q -> s   (r0 -> r1 -> r2 -> r0, and r0 -not-> r2)
        let deps = analyze(&[fp(&[4], &[2]), fp(&[2], &[3]), negating(fp(&[3], &[4]), 2)]);
        let cycles = deps.unstratified();
        assert_eq!(cycles.len(), 1);
        assert_eq!(cycles[0].rules, vec![0, 2, 0]);
        assert_eq!(cycles[0].kind, EdgeKind::Negated);
        assert_eq!(
            cycles[0].via,
            vec![Via {
                scope: Scope::Default,
                key: Key::Predicate(TermId(2))
            }]
        );
    }

    #[test]
    fn a_rule_negating_its_own_head_is_a_one_rule_cycle() {
        let deps = analyze(&[negating(fp(&[1], &[2]), 2)]);
        let cycles = deps.unstratified();
        assert_eq!(cycles.len(), 1);
        assert_eq!(cycles[0].rules, vec![0, 0]);
    }
}
