//! This module defines property-path evaluation: one step of a path expression from a node, closures by
//! breadth-first search with a visited-node limit, and the pairs a path relates for one row.

pub mod closure;

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
    if from_var && nullable(path) && !in_graph(cx, g, node) {
        out.retain(|n| *n != node);
    }
    Ok(())
}

/// A closure of one predicate, which [`closure`] evaluates fast: `p+`, `^p+`, `p*`, `^p*` as (predicate,
/// forward, zero-length included).
fn link_closure(path: &PathExpr) -> Option<(TermId, bool, bool)> {
    let (inner, zero) = match path {
        PathExpr::OneOrMore(q) => (q, false),
        PathExpr::ZeroOrMore(q) => (q, true),
        _ => return None,
    };
    match inner.as_ref() {
        PathExpr::Link(p) => Some((*p, true, zero)),
        PathExpr::Reverse(q) => match q.as_ref() {
            PathExpr::Link(p) => Some((*p, false, zero)),
            _ => None,
        },
        _ => None,
    }
}

/// [`pairs`] for a closure of one predicate, over its dense graph.
#[allow(clippy::too_many_arguments)]
fn link_pairs(
    cx: &Context<'_>,
    links: &mut closure::LinkCache,
    g: TermId,
    (p, forward, zero): (TermId, bool, bool),
    s: Resolved,
    o: Resolved,
    s_var: bool,
    o_var: bool,
    emit: &mut dyn FnMut(TermId, TermId) -> Result<bool, ExecError>,
) -> Result<(), ExecError> {
    let graph = links.get(&cx.view, g, p);
    let limit = cx.path_limit;
    let mut ends: Vec<u32> = Vec::new();
    // The nodes one or more steps from `t` in direction `dir`, as terms.
    let mut reach = |t: TermId, dir: bool, ends: &mut Vec<u32>| -> Result<(), ExecError> {
        ends.clear();
        if let Some(i) = graph.index(t) {
            graph
                .reach(i, dir, &mut links.stamp, limit, ends)
                .map_err(ExecError::PathLimit)?;
        }
        cx.cancel.check()
    };
    // A zero-length step from a node bound by a variable stays only on a node of the graph.
    let zero_ok = |t: TermId, from_var: bool| zero && (!from_var || in_graph(cx, g, t));
    match (s, o) {
        (Resolved::Impossible, _) | (_, Resolved::Impossible) => {}
        (Resolved::Fixed(a), Resolved::Fixed(b)) => {
            let hit = (a == b && zero_ok(a, s_var && o_var)) || {
                reach(a, forward, &mut ends)?;
                ends.iter().any(|&e| graph.term(e) == b)
            };
            if hit {
                emit(a, b)?;
            }
        }
        (Resolved::Fixed(a), Resolved::Free) => {
            if zero_ok(a, s_var) && !emit(a, a)? {
                return Ok(());
            }
            reach(a, forward, &mut ends)?;
            for &e in &ends {
                let b = graph.term(e);
                if zero && b == a {
                    continue;
                }
                if !emit(a, b)? {
                    return Ok(());
                }
            }
        }
        (Resolved::Free, Resolved::Fixed(b)) => {
            if zero_ok(b, o_var) && !emit(b, b)? {
                return Ok(());
            }
            reach(b, !forward, &mut ends)?;
            for &e in &ends {
                let a = graph.term(e);
                if zero && a == b {
                    continue;
                }
                if !emit(a, b)? {
                    return Ok(());
                }
            }
        }
        (Resolved::Free, Resolved::Free) => {
            if zero {
                for n in nodes(cx, g) {
                    if !emit(n, n)? {
                        return Ok(());
                    }
                }
            }
            let mut failed: Option<ExecError> = None;
            let result = graph.all_pairs(cx.pair_limit, &mut |x, y| {
                let (a, b) = if forward { (x, y) } else { (y, x) };
                if zero && a == b {
                    return true;
                }
                match emit(graph.term(a), graph.term(b)) {
                    Ok(more) => more,
                    Err(e) => {
                        failed = Some(e);
                        false
                    }
                }
            });
            if let Some(e) = failed {
                return Err(e);
            }
            result.map_err(|closure::TooManyPairs(n)| ExecError::PairLimit(n))?;
        }
    }
    Ok(())
}

/// Calls `emit(start, end)` for every pair `path` relates in graph `g`, given how the row fixes each end
/// (`*_var`: fixed by a variable's binding rather than a constant of the pattern).
#[allow(clippy::too_many_arguments)]
pub fn pairs(
    cx: &Context<'_>,
    links: &mut closure::LinkCache,
    g: TermId,
    path: &PathExpr,
    s: Resolved,
    o: Resolved,
    s_var: bool,
    o_var: bool,
    emit: &mut dyn FnMut(TermId, TermId) -> Result<bool, ExecError>,
) -> Result<(), ExecError> {
    if let Some(link) = link_closure(path) {
        return link_pairs(cx, links, g, link, s, o, s_var, o_var, emit);
    }
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

/// Whether a path relates every term to itself (a zero-length step): `e*`, `e?`, an alternative with a nullable
/// branch, a sequence of nullable steps, the reverse of a nullable path.
pub fn nullable(path: &PathExpr) -> bool {
    match path {
        PathExpr::ZeroOrMore(_) | PathExpr::ZeroOrOne(_) => true,
        PathExpr::Link(_) | PathExpr::Negated(_) => false,
        PathExpr::OneOrMore(e) | PathExpr::Reverse(e) => nullable(e),
        PathExpr::Alternative(a, b) => nullable(a) || nullable(b),
        PathExpr::Sequence(a, b) => nullable(a) && nullable(b),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_nullable_when_it_can_take_no_step() {
        let p = || Box::new(PathExpr::Link(TermId(7)));
        let star = || Box::new(PathExpr::ZeroOrMore(p()));
        let opt = || Box::new(PathExpr::ZeroOrOne(p()));
        assert!(!nullable(&PathExpr::Link(TermId(7))));
        assert!(!nullable(&PathExpr::Negated(vec![TermId(7)])));
        assert!(nullable(&star()));
        assert!(nullable(&opt()));
        assert!(!nullable(&PathExpr::OneOrMore(p())));
        assert!(nullable(&PathExpr::OneOrMore(opt())));
        assert!(nullable(&PathExpr::Reverse(star())));
        assert!(nullable(&PathExpr::Alternative(p(), opt())));
        assert!(!nullable(&PathExpr::Alternative(p(), p())));
        assert!(nullable(&PathExpr::Sequence(star(), opt())));
        assert!(!nullable(&PathExpr::Sequence(star(), p())));
    }
}
