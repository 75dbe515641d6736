//! This module defines property-path evaluation: one step of a path expression from a node, closures by
//! breadth-first search with a visited-node limit, and the pairs a path relates for one row.

use hashbrown::HashSet;

use crate::ir::PathExpr;
use crate::store::{TermId, TermRef, TermSource};

use super::scan::Resolved;
use super::{Context, ExecError};

/// Adds to `out` every node one `path` step from `node` (forward) or to it (backward), with repetitions
/// (sequences and alternatives keep bag semantics inside a step).
pub fn step(
    cx: &Context<'_>,
    g: TermId,
    path: &PathExpr,
    node: TermId,
    forward: bool,
    out: &mut Vec<TermId>,
) -> Result<(), ExecError> {
    match path {
        PathExpr::Link(p) => {
            if forward {
                out.extend(cx.view.scan(g, &[Some(node), Some(*p), None]).map(|t| t[2]));
            } else {
                out.extend(cx.view.scan(g, &[None, Some(*p), Some(node)]).map(|t| t[0]));
            }
        }
        PathExpr::Negated(set) => {
            if forward {
                out.extend(
                    cx.view
                        .scan(g, &[Some(node), None, None])
                        .filter(|t| !set.contains(&t[1]))
                        .map(|t| t[2]),
                );
            } else {
                out.extend(
                    cx.view
                        .scan(g, &[None, None, Some(node)])
                        .filter(|t| !set.contains(&t[1]))
                        .map(|t| t[0]),
                );
            }
        }
        PathExpr::Reverse(q) => step(cx, g, q, node, !forward, out)?,
        PathExpr::Sequence(a, b) => {
            let (first, second) = if forward { (a, b) } else { (b, a) };
            let mut mids = Vec::new();
            step(cx, g, first, node, forward, &mut mids)?;
            for m in mids {
                step(cx, g, second, m, forward, out)?;
            }
        }
        PathExpr::Alternative(a, b) => {
            step(cx, g, a, node, forward, out)?;
            step(cx, g, b, node, forward, out)?;
        }
        PathExpr::ZeroOrMore(_) | PathExpr::OneOrMore(_) | PathExpr::ZeroOrOne(_) => {
            reach(cx, g, path, node, forward, out)?;
        }
    }
    Ok(())
}

/// Adds to `out` the nodes `path` relates `node` to; closures and `?` give each node once.
pub fn reach(
    cx: &Context<'_>,
    g: TermId,
    path: &PathExpr,
    node: TermId,
    forward: bool,
    out: &mut Vec<TermId>,
) -> Result<(), ExecError> {
    let (inner, with_start) = match path {
        PathExpr::ZeroOrMore(q) => (q, true),
        PathExpr::OneOrMore(q) => (q, false),
        PathExpr::ZeroOrOne(q) => {
            let mut ends = vec![node];
            step(cx, g, q, node, forward, &mut ends)?;
            let mut seen = HashSet::new();
            out.extend(ends.into_iter().filter(|e| seen.insert(*e)));
            return Ok(());
        }
        other => return step(cx, g, other, node, forward, out),
    };
    let mut visited: HashSet<TermId> = HashSet::new();
    let mut frontier = vec![node];
    if with_start {
        visited.insert(node);
        out.push(node);
    }
    let mut next = Vec::new();
    while !frontier.is_empty() {
        for &n in &frontier {
            let mut succ = Vec::new();
            step(cx, g, inner, n, forward, &mut succ)?;
            for s in succ {
                if visited.insert(s) {
                    out.push(s);
                    next.push(s);
                    if visited.len() > cx.path_limit {
                        return Err(ExecError::PathLimit(cx.path_limit));
                    }
                }
            }
        }
        cx.cancel.check()?;
        frontier.clear();
        std::mem::swap(&mut frontier, &mut next);
    }
    Ok(())
}

/// Every node of a graph (subjects and objects), sorted.
pub fn nodes(cx: &Context<'_>, g: TermId) -> Vec<TermId> {
    let mut all: Vec<TermId> = cx
        .view
        .scan(g, &[None, None, None])
        .flat_map(|t| [t[0], t[2]])
        .collect();
    all.sort_unstable();
    all.dedup();
    all
}

/// Whether a term occurs in a graph (as a subject or an object).
fn in_graph(cx: &Context<'_>, g: TermId, n: TermId) -> bool {
    cx.view.scan(g, &[Some(n), None, None]).next().is_some()
        || cx.view.scan(g, &[None, None, Some(n)]).next().is_some()
}

/// The nodes `path` relates `node` to, where `node` came from a variable binding: a zero-length step then
/// only stays on a node of the graph (as evaluating the path on its own and joining would find).
fn reach_bound(
    cx: &Context<'_>,
    g: TermId,
    path: &PathExpr,
    node: TermId,
    forward: bool,
    from_var: bool,
    out: &mut Vec<TermId>,
) -> Result<(), ExecError> {
    reach(cx, g, path, node, forward, out)?;
    if from_var
        && matches!(path, PathExpr::ZeroOrMore(_) | PathExpr::ZeroOrOne(_))
        && !in_graph(cx, g, node)
    {
        out.retain(|n| *n != node);
    }
    Ok(())
}

/// Calls `emit(start, end)` for every pair `path` relates in graph `g`, given how the row fixes each end
/// (`*_var`: fixed by a variable's binding rather than a constant of the pattern).
#[allow(clippy::too_many_arguments)]
pub fn pairs(
    cx: &Context<'_>,
    g: TermId,
    path: &PathExpr,
    s: Resolved,
    o: Resolved,
    s_var: bool,
    o_var: bool,
    emit: &mut dyn FnMut(TermId, TermId) -> Result<bool, ExecError>,
) -> Result<(), ExecError> {
    let mut ends = Vec::new();
    match (s, o) {
        (Resolved::Impossible, _) | (_, Resolved::Impossible) => {}
        (Resolved::Fixed(a), Resolved::Fixed(b)) => {
            reach_bound(cx, g, path, a, true, s_var && o_var, &mut ends)?;
            if ends.contains(&b) {
                // Closures relate a pair once; a negated set once per matching triple.
                let times = if is_closure(path) {
                    1
                } else {
                    ends.iter().filter(|e| **e == b).count()
                };
                for _ in 0..times {
                    if !emit(a, b)? {
                        return Ok(());
                    }
                }
            }
        }
        (Resolved::Fixed(a), Resolved::Free) => {
            reach_bound(cx, g, path, a, true, s_var, &mut ends)?;
            for e in ends {
                if !emit(a, e)? {
                    return Ok(());
                }
            }
        }
        (Resolved::Free, Resolved::Fixed(b)) => {
            reach_bound(cx, g, path, b, false, o_var, &mut ends)?;
            for e in ends {
                if !emit(e, b)? {
                    return Ok(());
                }
            }
        }
        (Resolved::Free, Resolved::Free) => {
            for n in nodes(cx, g) {
                ends.clear();
                reach(cx, g, path, n, true, &mut ends)?;
                for &e in &ends {
                    if !emit(n, e)? {
                        return Ok(());
                    }
                }
            }
        }
    }
    Ok(())
}

fn is_closure(path: &PathExpr) -> bool {
    matches!(
        path,
        PathExpr::ZeroOrMore(_) | PathExpr::OneOrMore(_) | PathExpr::ZeroOrOne(_)
    )
}

/// Whether a term can continue a path (IRIs and blank nodes; literals and triple terms end it).
pub fn is_node(terms: &(impl TermSource + ?Sized), id: TermId) -> bool {
    matches!(terms.term(id), TermRef::Iri(_) | TermRef::Blank(_))
}
