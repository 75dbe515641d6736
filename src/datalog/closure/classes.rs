//! This module defines the classes of an equivalence that shares its recursive group with other rules: the square
//! rule `R(x,z) :- R(x,y), R(y,z)` and `R(x,y) :- R(y,x)` (OWL 2 RL's eq-trans and eq-sym, in the group of every
//! rule that reads or makes `owl:sameAs`) kept as a union-find across the group's passes instead of run as bodies.
//!
//! The two rules derive, from R facts F: every pair of nodes (IRIs, blank nodes) in one connected component of F's
//! links between nodes, each linked node with itself included; and each member of a component with every literal
//! or triple-term object F gives a member (such an object is never a subject: its symmetric fact has no RDF
//! form). [`Classes::add`] takes F's facts in any number of steps and, at each merge of two components A and B,
//! yields exactly the pairs the merge makes new: `A×B`, `B×A`, `A×A` if A had no link yet (likewise B), and each
//! side with the other side's objects it lacked. A closure of n members then costs its n² pairs, where the two
//! rules' semi-naive joins cost n³.

use hashbrown::HashMap;

use super::UnionFind;
use crate::exec::{Cancel, ExecError};
use crate::store::{TermId, TermSource};

/// The classes of R over the facts added so far.
pub struct Classes {
    /// The predicate.
    pub r: TermId,
    slot: HashMap<TermId, u32>,
    nodes: Vec<TermId>,
    sets: UnionFind,
    /// By root: the members (slots).
    members: Vec<Vec<u32>>,
    /// By root: the literal and triple-term objects of its members, sorted.
    ends: Vec<Vec<TermId>>,
}

/// How many facts or pairs go between two looks at the deadline.
const CHECK_EVERY: usize = 1 << 12;

impl Classes {
    /// No facts yet.
    pub fn new(r: TermId) -> Self {
        Self {
            r,
            slot: HashMap::new(),
            nodes: Vec::new(),
            sets: UnionFind::new(0),
            members: Vec::new(),
            ends: Vec::new(),
        }
    }

    fn slot_of(&mut self, id: TermId) -> u32 {
        if let Some(&s) = self.slot.get(&id) {
            return s;
        }
        let s = self.nodes.len() as u32;
        self.slot.insert(id, s);
        self.nodes.push(id);
        self.sets.push();
        self.members.push(vec![s]);
        self.ends.push(Vec::new());
        s
    }

    /// Adds R facts `(subject, object)`, calling `emit` with each pair the closure gains (some may be held
    /// already: the caller drops those); `emit` returns `false` to stop, and so does [`Classes::add`] (`Ok(false)`).
    pub fn add(
        &mut self,
        facts: impl IntoIterator<Item = (TermId, TermId)>,
        terms: &(impl TermSource + ?Sized),
        cancel: &Cancel,
        emit: &mut dyn FnMut(TermId, TermId) -> bool,
    ) -> Result<bool, ExecError> {
        let is_node = |id: TermId| crate::exec::path::is_node(terms, id);
        for (k, (s, o)) in facts.into_iter().enumerate() {
            if k % CHECK_EVERY == 0 {
                cancel.check()?;
            }
            // A subject is a node: a fact with another subject takes part in nothing the rules derive.
            if !is_node(s) {
                continue;
            }
            let a = self.slot_of(s);
            let more = if is_node(o) {
                let b = self.slot_of(o);
                self.link(a, b, cancel, emit)?
            } else {
                self.end(a, o, cancel, emit)?
            };
            if !more {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// `x R o` for an object that is no node: every member of x's class gains `o`.
    fn end(
        &mut self,
        x: u32,
        o: TermId,
        cancel: &Cancel,
        emit: &mut dyn FnMut(TermId, TermId) -> bool,
    ) -> Result<bool, ExecError> {
        let root = self.sets.find(x) as usize;
        let Err(at) = self.ends[root].binary_search(&o) else {
            return Ok(true);
        };
        self.ends[root].insert(at, o);
        self.pairs(&self.members[root], &[o], cancel, emit)
    }

    /// `x R y` between nodes: their classes merge.
    fn link(
        &mut self,
        x: u32,
        y: u32,
        cancel: &Cancel,
        emit: &mut dyn FnMut(TermId, TermId) -> bool,
    ) -> Result<bool, ExecError> {
        let (a, b) = (self.sets.find(x) as usize, self.sets.find(y) as usize);
        if a == b {
            // A self-link (or a link inside a class): `x R x` is the fact itself.
            self.sets.linked[a] = true;
            return Ok(true);
        }
        let (ma, mb) = (&self.members[a], &self.members[b]);
        let (ea, eb) = (&self.ends[a], &self.ends[b]);
        // A class without a link is one node: it gains itself.
        let more = (self.sets.linked[a]
            || self.pairs(ma, &[self.nodes[x as usize]], cancel, emit)?)
            && (self.sets.linked[b] || self.pairs(mb, &[self.nodes[y as usize]], cancel, emit)?)
            && self.pairs(ma, &self.terms_of(mb), cancel, emit)?
            && self.pairs(mb, &self.terms_of(ma), cancel, emit)?
            && self.pairs(ma, &missing(eb, ea), cancel, emit)?
            && self.pairs(mb, &missing(ea, eb), cancel, emit)?;
        if !more {
            return Ok(false);
        }
        self.sets.union(a as u32, b as u32);
        let root = self.sets.find(a as u32) as usize;
        let other = if root == a { b } else { a };
        let moved = std::mem::take(&mut self.members[other]);
        self.members[root].extend(moved);
        let theirs = std::mem::take(&mut self.ends[other]);
        self.ends[root] = merged(&self.ends[root], &theirs);
        Ok(true)
    }

    fn terms_of(&self, members: &[u32]) -> Vec<TermId> {
        members.iter().map(|&m| self.nodes[m as usize]).collect()
    }

    /// Emits `x R z` for every member x and every z.
    fn pairs(
        &self,
        members: &[u32],
        zs: &[TermId],
        cancel: &Cancel,
        emit: &mut dyn FnMut(TermId, TermId) -> bool,
    ) -> Result<bool, ExecError> {
        if zs.is_empty() {
            return Ok(true);
        }
        for (k, &m) in members.iter().enumerate() {
            if k % (CHECK_EVERY / zs.len()).max(1) == 0 {
                cancel.check()?;
            }
            let x = self.nodes[m as usize];
            for &z in zs {
                if !emit(x, z) {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }
}

/// The terms of sorted `from` that sorted `held` lacks.
fn missing(from: &[TermId], held: &[TermId]) -> Vec<TermId> {
    from.iter()
        .filter(|t| held.binary_search(t).is_err())
        .copied()
        .collect()
}

/// Two sorted lists as one, each term once.
fn merged(a: &[TermId], b: &[TermId]) -> Vec<TermId> {
    let mut out: Vec<TermId> = a.iter().chain(b).copied().collect();
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Dictionary;
    use std::collections::BTreeSet;

    /// The symmetric–transitive closure of `facts` by iterating the two rules naively (a literal subject makes no
    /// fact), minus the facts themselves.
    fn naive(facts: &[(TermId, TermId)], dict: &Dictionary) -> BTreeSet<(TermId, TermId)> {
        let node = |t: TermId| crate::exec::path::is_node(dict, t);
        let mut all: BTreeSet<(TermId, TermId)> = facts.iter().copied().collect();
        loop {
            let mut next = all.clone();
            for &(x, y) in &all {
                if node(y) {
                    next.insert((y, x));
                }
                for &(y2, z) in &all {
                    if y2 == y {
                        next.insert((x, z));
                    }
                }
            }
            if next == all {
                break;
            }
            all = next;
        }
        for f in facts {
            all.remove(f);
        }
        all
    }

    #[test]
    fn merges_in_any_steps_yield_exactly_the_pairs_the_two_rules_derive() {
        let mut dict = Dictionary::new();
        let iri = |d: &mut Dictionary, i: u32| d.intern_iri(&format!("http://e/n{i}"));
        let n: Vec<TermId> = (0..8).map(|i| iri(&mut dict, i)).collect();
        let lit = dict.intern_literal("v", crate::store::LiteralKind::Simple);
        // Two chains joined late, a self-link, a literal object before and after a merge, a lone literal end.
        let facts = vec![
            (n[0], n[1]),
            (n[2], lit),
            (n[1], n[2]),
            (n[4], n[3]),
            (n[5], n[5]),
            (n[3], n[0]),
            (n[6], lit),
            (n[3], lit),
            (n[7], n[6]),
        ];
        let expected = naive(&facts, &dict);
        for split in 0..=facts.len() {
            let mut classes = Classes::new(TermId(0));
            let mut got: BTreeSet<(TermId, TermId)> = BTreeSet::new();
            let mut emit = |x, z| {
                got.insert((x, z));
                true
            };
            let cancel = Cancel::new();
            let (first, second) = facts.split_at(split);
            assert!(
                classes
                    .add(first.iter().copied(), &dict, &cancel, &mut emit)
                    .unwrap()
            );
            assert!(
                classes
                    .add(second.iter().copied(), &dict, &cancel, &mut emit)
                    .unwrap()
            );
            for f in &facts {
                got.remove(f);
            }
            assert_eq!(got, expected, "split at {split}");
        }
    }
}
