//! This module defines how a triple pattern meets a row: positions resolved from the row's bindings, stored
//! terms unified back into it (repeated variables and triple-term sub-patterns included), and the graphs a
//! pattern's graph term stands for.

use crate::ir::{GraphTerm, PatternTerm};
use crate::store::{TermId, TermRef, TermSource};

use super::{Context, ROW_UNBOUND};

/// A pattern position for one row.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Resolved {
    /// Fixed to this term.
    Fixed(TermId),
    /// Free: any term, unified afterwards.
    Free,
    /// Nothing can match (a triple term whose parts are fixed but which no fact holds).
    Impossible,
}

/// Resolves a position against a row.
pub fn resolve(
    t: &PatternTerm,
    row: &[TermId],
    lookup: &impl Fn([TermId; 3]) -> Option<TermId>,
) -> Resolved {
    match t {
        PatternTerm::Const(c) => Resolved::Fixed(*c),
        PatternTerm::Var(v) => match row[v.index()] {
            ROW_UNBOUND => Resolved::Free,
            id => Resolved::Fixed(id),
        },
        PatternTerm::Triple(parts) => {
            let mut ids = [TermId(0); 3];
            for (k, p) in parts.iter().enumerate() {
                match resolve(p, row, lookup) {
                    Resolved::Fixed(id) => ids[k] = id,
                    Resolved::Free => return Resolved::Free,
                    Resolved::Impossible => return Resolved::Impossible,
                }
            }
            match lookup(ids) {
                Some(id) => Resolved::Fixed(id),
                None => Resolved::Impossible,
            }
        }
    }
}

/// Unifies a stored term with a pattern position, binding free variables in `out`; `false` on a mismatch
/// (then `out` may hold partial bindings and is discarded).
#[inline]
pub fn unify(
    t: &PatternTerm,
    value: TermId,
    out: &mut [TermId],
    terms: &(impl TermSource + ?Sized),
) -> bool {
    match t {
        PatternTerm::Const(c) => *c == value,
        PatternTerm::Var(v) => {
            let cell = &mut out[v.index()];
            if *cell == ROW_UNBOUND {
                *cell = value;
                true
            } else {
                *cell == value
            }
        }
        PatternTerm::Triple(parts) => match terms.term(value) {
            TermRef::Triple([s, p, o]) => {
                unify(&parts[0], s, out, terms)
                    && unify(&parts[1], p, out, terms)
                    && unify(&parts[2], o, out, terms)
            }
            _ => false,
        },
    }
}

/// The graphs a graph term reads for one row, and the variable to bind to each (for `GRAPH ?g`).
pub fn graphs<'c>(
    cx: &'c Context<'_>,
    named: &'c [TermId],
    g: &GraphTerm,
    row: &[TermId],
) -> (GraphList<'c>, Option<usize>) {
    match g {
        GraphTerm::Default => (GraphList::Slice(&cx.dataset.default), None),
        GraphTerm::Named(id) => {
            if named.binary_search(id).is_ok() {
                (GraphList::One(*id), None)
            } else {
                (GraphList::Slice(&[]), None)
            }
        }
        GraphTerm::Var(v) => match row[v.index()] {
            ROW_UNBOUND => (GraphList::Slice(named), Some(v.index())),
            id if named.binary_search(&id).is_ok() => (GraphList::One(id), None),
            _ => (GraphList::Slice(&[]), None),
        },
    }
}

/// A short list of graph ids.
#[derive(Copy, Clone, Debug)]
pub enum GraphList<'c> {
    /// Borrowed.
    Slice(&'c [TermId]),
    /// Just one.
    One(TermId),
}

impl GraphList<'_> {
    /// The ids.
    pub fn as_slice(&self) -> &[TermId] {
        match self {
            GraphList::Slice(s) => s,
            GraphList::One(g) => std::slice::from_ref(g),
        }
    }
}
