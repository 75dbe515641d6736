//! This module defines the fast closure of one predicate (`p+`, `^p+`, `p*`): the predicate's edges in one graph as
//! a dense graph (node numbers, adjacency arrays both ways), reach from one node by breadth-first search over a
//! stamp array, and all pairs through strongly connected components, each component's reach computed once and
//! shared by its members (Nuutila) — so the pair count is known, and checked against a limit, before any pair is
//! produced.

use std::sync::Arc;

use hashbrown::HashMap;

use crate::store::{TermId, View};

/// The edges of one predicate in one graph, numbered densely.
#[derive(Debug)]
pub struct LinkGraph {
    /// Node number → term, ascending.
    nodes: Vec<TermId>,
    fwd_off: Vec<u32>,
    fwd: Vec<u32>,
    bwd_off: Vec<u32>,
    bwd: Vec<u32>,
}

/// A visited mark per node that resets in O(1).
#[derive(Debug, Default)]
pub struct Stamp {
    marks: Vec<u32>,
    generation: u32,
}

impl Stamp {
    fn start(&mut self, n: usize) {
        if self.marks.len() < n {
            self.marks.resize(n, 0);
        }
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.marks.iter_mut().for_each(|m| *m = 0);
            self.generation = 1;
        }
    }

    /// Marks `i`; whether it was unmarked.
    fn insert(&mut self, i: u32) -> bool {
        let m = &mut self.marks[i as usize];
        if *m == self.generation {
            false
        } else {
            *m = self.generation;
            true
        }
    }
}

/// Dense graphs of one execution, by (graph, predicate), built on first use.
#[derive(Debug, Default)]
pub struct LinkCache {
    graphs: HashMap<(TermId, TermId), Arc<LinkGraph>>,
    /// A reusable visited mark.
    pub stamp: Stamp,
}

impl LinkCache {
    /// The dense graph of predicate `p` in graph `g` of `view`.
    pub fn get(&mut self, view: &View<'_>, g: TermId, p: TermId) -> Arc<LinkGraph> {
        self.graphs
            .entry((g, p))
            .or_insert_with(|| Arc::new(LinkGraph::build(view, g, p)))
            .clone()
    }
}

/// The pair limit was exceeded: the closure has more pairs than this.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooManyPairs(pub usize);

fn csr(n: usize, edges: &[(u32, u32)]) -> (Vec<u32>, Vec<u32>) {
    let mut off = vec![0u32; n + 1];
    for &(a, _) in edges {
        off[a as usize + 1] += 1;
    }
    for i in 0..n {
        off[i + 1] += off[i];
    }
    let mut pos = off.clone();
    let mut adj = vec![0u32; edges.len()];
    for &(a, b) in edges {
        adj[pos[a as usize] as usize] = b;
        pos[a as usize] += 1;
    }
    (off, adj)
}

impl LinkGraph {
    /// Reads the `p` facts of graph `g`.
    pub fn build(view: &View<'_>, g: TermId, p: TermId) -> Self {
        let pairs: Vec<(TermId, TermId)> = view
            .scan(g, &[None, Some(p), None])
            .map(|t| (t[0], t[2]))
            .collect();
        let mut nodes: Vec<TermId> = pairs.iter().flat_map(|&(s, o)| [s, o]).collect();
        nodes.sort_unstable();
        nodes.dedup();
        let index = |t: TermId| nodes.binary_search(&t).expect("a node") as u32;
        let mut edges: Vec<(u32, u32)> = pairs.iter().map(|&(s, o)| (index(s), index(o))).collect();
        edges.sort_unstable();
        edges.dedup();
        let (fwd_off, fwd) = csr(nodes.len(), &edges);
        let reversed: Vec<(u32, u32)> = edges.iter().map(|&(a, b)| (b, a)).collect();
        let (bwd_off, bwd) = csr(nodes.len(), &reversed);
        Self {
            nodes,
            fwd_off,
            fwd,
            bwd_off,
            bwd,
        }
    }

    /// How many nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether there are no edges.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The node number of a term.
    pub fn index(&self, t: TermId) -> Option<u32> {
        self.nodes.binary_search(&t).ok().map(|i| i as u32)
    }

    /// The term of a node number.
    pub fn term(&self, i: u32) -> TermId {
        self.nodes[i as usize]
    }

    fn succ(&self, i: u32, forward: bool) -> &[u32] {
        let (off, adj) = if forward {
            (&self.fwd_off, &self.fwd)
        } else {
            (&self.bwd_off, &self.bwd)
        };
        &adj[off[i as usize] as usize..off[i as usize + 1] as usize]
    }

    /// The nodes one or more steps from `start` (forward: along the edges; else against them), breadth-first,
    /// each once; `Err(limit)` once more than `limit` nodes are visited.
    pub fn reach(
        &self,
        start: u32,
        forward: bool,
        stamp: &mut Stamp,
        limit: usize,
        out: &mut Vec<u32>,
    ) -> Result<(), usize> {
        self.reach_many(&[start], forward, stamp, limit, out)
    }

    /// The nodes one or more steps from any of `starts`, each once (a multi-source breadth-first search);
    /// `Err(limit)` once more than `limit` nodes are visited.
    pub fn reach_many(
        &self,
        starts: &[u32],
        forward: bool,
        stamp: &mut Stamp,
        limit: usize,
        out: &mut Vec<u32>,
    ) -> Result<(), usize> {
        stamp.start(self.nodes.len());
        let first = out.len();
        for &s in starts {
            for &n in self.succ(s, forward) {
                if stamp.insert(n) {
                    out.push(n);
                }
            }
        }
        let mut i = first;
        while i < out.len() {
            let n = out[i];
            i += 1;
            for &s in self.succ(n, forward) {
                if stamp.insert(s) {
                    out.push(s);
                    if out.len() - first > limit {
                        return Err(limit);
                    }
                }
            }
        }
        Ok(())
    }

    /// Strongly connected components (iterative Tarjan), numbered so that a component comes after every
    /// component it reaches; and whether each is cyclic (more than one node, or a self-loop).
    fn components(&self) -> (Vec<u32>, Vec<Vec<u32>>, Vec<bool>) {
        let n = self.nodes.len();
        const NONE: u32 = u32::MAX;
        let mut index = vec![NONE; n];
        let mut low = vec![0u32; n];
        let mut on_stack = vec![false; n];
        let mut stack: Vec<u32> = Vec::new();
        let mut comp = vec![NONE; n];
        let mut members: Vec<Vec<u32>> = Vec::new();
        let mut next = 0u32;
        // (node, next edge position)
        let mut call: Vec<(u32, u32)> = Vec::new();
        for root in 0..n as u32 {
            if index[root as usize] != NONE {
                continue;
            }
            call.push((root, self.fwd_off[root as usize]));
            index[root as usize] = next;
            low[root as usize] = next;
            next += 1;
            stack.push(root);
            on_stack[root as usize] = true;
            while let Some(&mut (v, ref mut e)) = call.last_mut() {
                let end = self.fwd_off[v as usize + 1];
                if *e < end {
                    let w = self.fwd[*e as usize];
                    *e += 1;
                    if index[w as usize] == NONE {
                        index[w as usize] = next;
                        low[w as usize] = next;
                        next += 1;
                        stack.push(w);
                        on_stack[w as usize] = true;
                        call.push((w, self.fwd_off[w as usize]));
                    } else if on_stack[w as usize] {
                        low[v as usize] = low[v as usize].min(index[w as usize]);
                    }
                } else {
                    call.pop();
                    if let Some(&(parent, _)) = call.last() {
                        low[parent as usize] = low[parent as usize].min(low[v as usize]);
                    }
                    if low[v as usize] == index[v as usize] {
                        let c = members.len() as u32;
                        let mut m = Vec::new();
                        loop {
                            let w = stack.pop().expect("on the stack");
                            on_stack[w as usize] = false;
                            comp[w as usize] = c;
                            m.push(w);
                            if w == v {
                                break;
                            }
                        }
                        m.sort_unstable();
                        members.push(m);
                    }
                }
            }
        }
        let cyclic = members
            .iter()
            .map(|m| m.len() > 1 || self.succ(m[0], true).contains(&m[0]))
            .collect();
        (comp, members, cyclic)
    }

    /// Every pair `(a, b)` with `b` one or more steps from `a`, as node numbers: `emit` is called component by
    /// component. Fails before emitting anything when there are more than `limit` pairs.
    pub fn all_pairs(
        &self,
        limit: usize,
        emit: &mut dyn FnMut(u32, u32) -> bool,
    ) -> Result<(), TooManyPairs> {
        let (comp, members, cyclic) = self.components();
        let c_count = members.len();
        // reach[c]: the components one or more steps from c, ascending; a component's successors come first
        // in Tarjan's numbering, so each reach set is built from finished ones.
        let mut reach: Vec<Vec<u32>> = Vec::with_capacity(c_count);
        let mut stamp = Stamp::default();
        let mut total: usize = 0;
        for c in 0..c_count {
            stamp.start(c_count);
            let mut set: Vec<u32> = Vec::new();
            if cyclic[c] {
                stamp.insert(c as u32);
                set.push(c as u32);
            }
            for &v in &members[c] {
                for &w in self.succ(v, true) {
                    let d = comp[w as usize];
                    if d as usize == c {
                        continue;
                    }
                    if stamp.insert(d) {
                        set.push(d);
                    }
                    for &e in &reach[d as usize] {
                        if stamp.insert(e) {
                            set.push(e);
                        }
                    }
                }
            }
            set.sort_unstable();
            let size: usize = set.iter().map(|&d| members[d as usize].len()).sum();
            total = total.saturating_add(size.saturating_mul(members[c].len()));
            if total > limit {
                return Err(TooManyPairs(limit));
            }
            reach.push(set);
        }
        for (c, set) in reach.iter().enumerate() {
            for &a in &members[c] {
                for &d in set {
                    for &b in &members[d as usize] {
                        if !emit(a, b) {
                            return Ok(());
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(u32, u32)], n: u32) -> LinkGraph {
        let nodes: Vec<TermId> = (0..n).map(TermId).collect();
        let (fwd_off, fwd) = csr(n as usize, edges);
        let rev: Vec<(u32, u32)> = edges.iter().map(|&(a, b)| (b, a)).collect();
        let (bwd_off, bwd) = csr(n as usize, &rev);
        LinkGraph {
            nodes,
            fwd_off,
            fwd,
            bwd_off,
            bwd,
        }
    }

    /// Reference closure by repeated BFS.
    fn naive(edges: &[(u32, u32)], n: u32) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        for a in 0..n {
            let mut seen = vec![false; n as usize];
            let mut stack: Vec<u32> = edges.iter().filter(|e| e.0 == a).map(|e| e.1).collect();
            while let Some(b) = stack.pop() {
                if !seen[b as usize] {
                    seen[b as usize] = true;
                    out.push((a, b));
                    stack.extend(edges.iter().filter(|e| e.0 == b).map(|e| e.1));
                }
            }
        }
        out.sort_unstable();
        out
    }

    #[test]
    fn all_pairs_through_components_equals_search_from_every_node() {
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..200 {
            let n = rng.u32(1..12);
            let mut edges: Vec<(u32, u32)> = (0..rng.u32(0..30))
                .map(|_| (rng.u32(0..n), rng.u32(0..n)))
                .collect();
            edges.sort_unstable();
            edges.dedup();
            let g = graph(&edges, n);
            let mut got = Vec::new();
            g.all_pairs(usize::MAX, &mut |a, b| {
                got.push((a, b));
                true
            })
            .unwrap();
            got.sort_unstable();
            assert_eq!(got, naive(&edges, n), "{edges:?}");
            let mut stamp = Stamp::default();
            for a in 0..n {
                let mut out = Vec::new();
                g.reach(a, true, &mut stamp, usize::MAX, &mut out).unwrap();
                out.sort_unstable();
                let expect: Vec<u32> = naive(&edges, n)
                    .into_iter()
                    .filter(|p| p.0 == a)
                    .map(|p| p.1)
                    .collect();
                assert_eq!(out, expect);
            }
        }
    }

    #[test]
    fn the_pair_limit_is_checked_before_any_pair_is_emitted() {
        // A 50-node cycle: 2,500 pairs.
        let edges: Vec<(u32, u32)> = (0..50).map(|i| (i, (i + 1) % 50)).collect();
        let g = graph(&edges, 50);
        let mut emitted = 0;
        let r = g.all_pairs(2_499, &mut |_, _| {
            emitted += 1;
            true
        });
        assert_eq!(r, Err(TooManyPairs(2_499)));
        assert_eq!(emitted, 0);
        assert!(g.all_pairs(2_500, &mut |_, _| true).is_ok());
    }
}
