//! This module defines probes: a scan of a pipeline whose new bindings nothing after it reads becomes an
//! existence check that keeps each input row once when the pattern matches, instead of once per match.
//!
//! Only for consumers that read solutions as a set: a rule's heads (a fact is derived once however many
//! solutions make it) and an EXISTS pattern (a flag per outer row). A query's bag of solutions is left alone.

use crate::ir::{VarId, VarSet};

use super::physical::{Kind, Node};

// For the pipeline s1 … sn read by `live` afterwards, going back from sn:
//   si = Scan(tp), vars(tp) ∩ live ⊆ bound-for-sure before si   =>   si becomes Probe(tp)
//   live := live ∪ what si reads
// A stage the pass does not know (a hash join, a union, an OPTIONAL …) ends it: the stages before stay scans.

/// Turns the scans of `node`'s pipeline (or `node` itself, a lone scan) into probes where nothing after them
/// reads the variables they would bind; `live` are the variables read after the plan.
pub fn mark(node: &mut Node, live: &VarSet) {
    match &mut node.kind {
        Kind::Seq(stages) => mark_stages(stages, live),
        Kind::Scan(_) => mark_stages(std::slice::from_mut(node), live),
        _ => {}
    }
}

fn mark_stages(stages: &mut [Node], live: &VarSet) {
    // The first stage that binds each variable in every row (by variable index): a variable is bound before
    // stage i when that stage is below i. (A set per stage would be quadratic in a long join.)
    let mut first: Vec<usize> = Vec::new();
    for (i, s) in stages.iter().enumerate() {
        for v in binds(s).iter() {
            if v.index() >= first.len() {
                first.resize(v.index() + 1, usize::MAX);
            }
            first[v.index()] = first[v.index()].min(i);
        }
    }
    let bound_before = |v: VarId, i: usize| first.get(v.index()).is_some_and(|&f| f < i);
    let mut live = live.clone();
    for (i, stage) in stages.iter_mut().enumerate().rev() {
        match &stage.kind {
            Kind::Scan(tp) => {
                let vars = tp.vars();
                if vars
                    .iter()
                    .filter(|v| live.contains(*v))
                    .all(|v| bound_before(v, i))
                {
                    let tp = tp.clone();
                    // Every variable read after: bound already (by a stage or by the input rows: an EXISTS
                    // pattern's seed) or not yet (the same unbound mark in every row), so rows equal on them
                    // are one row for everything after.
                    let key = live.iter().collect();
                    stage.kind = Kind::Probe(tp, key);
                }
                live.extend(&vars);
            }
            Kind::Probe(tp, _) => live.extend(&tp.vars()),
            // A function that gives a new value each call (BNODE, RAND, UUID) tells apart rows that are equal
            // on every variable: no probe before it.
            Kind::Filter { expr, .. } | Kind::Extend { expr, .. } if volatile(expr) => return,
            Kind::Filter { expr, .. } => live.extend(&expr.vars()),
            Kind::Extend { var, expr, .. } => {
                live.extend(&expr.vars());
                live.insert(*var);
            }
            _ => return,
        }
    }
}

/// The variables a stage binds in every row it outputs (none, where that is not certain).
/// Whether an expression calls a function that gives a new value each call.
fn volatile(expr: &crate::ir::Expr) -> bool {
    let mut found = false;
    expr.visit(&mut |sub| {
        if let crate::ir::Expr::Call(f, _) = sub {
            found |= f.is_volatile();
        }
    });
    found
}

fn binds(stage: &Node) -> VarSet {
    match &stage.kind {
        Kind::Scan(tp) | Kind::Probe(tp, _) => tp.vars(),
        Kind::Values { vars, rows } => crate::ir::op::values_certain_vars(vars, rows),
        _ => VarSet::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Expr, GraphTerm, PatternTerm, TriplePattern, VarId};
    use crate::plan::LeftMode;
    use crate::store::TermId;

    fn node(kind: Kind) -> Node {
        Node {
            id: 0,
            est: 1.0,
            kind,
        }
    }

    /// `?a <p> ?b` in the default graph.
    fn scan(a: u32, p: u32, b: u32) -> Node {
        node(Kind::Scan(TriplePattern {
            terms: [
                PatternTerm::Var(VarId(a)),
                PatternTerm::Const(TermId(p)),
                PatternTerm::Var(VarId(b)),
            ],
            graph: GraphTerm::Default,
        }))
    }

    fn vars(v: &[u32]) -> VarSet {
        v.iter().map(|&i| VarId(i)).collect()
    }

    /// Which stages of the marked pipeline are probes.
    fn probes(stages: Vec<Node>, live: &[u32]) -> Vec<bool> {
        let mut root = node(Kind::Seq(stages));
        mark(&mut root, &vars(live));
        let Kind::Seq(stages) = root.kind else {
            unreachable!("a pipeline stays one")
        };
        stages
            .iter()
            .map(|s| matches!(s.kind, Kind::Probe(..)))
            .collect()
    }

    // x=0 y=1 z=2
    #[test]
    fn a_last_scan_binding_only_what_nothing_reads_becomes_a_probe() {
        assert_eq!(
            probes(vec![scan(0, 10, 1), scan(1, 11, 2)], &[0, 1]),
            [false, true]
        );
    }

    #[test]
    fn a_probe_keys_its_rows_by_the_variables_read_after_it() {
        // x=0 y=1 z=2 w=3: scan(x, y), probe(y, z), scan(x, w), with x and w read at the end. After the probe, x
        // and w are read (w is bound later, unbound in every row the probe sees): rows with one x are one row for
        // the rest.
        let mut root = node(Kind::Seq(vec![
            scan(0, 10, 1),
            scan(1, 11, 2),
            scan(0, 12, 3),
        ]));
        mark(&mut root, &vars(&[0, 3]));
        let Kind::Seq(stages) = root.kind else {
            unreachable!("a pipeline stays one")
        };
        let keys: Vec<Option<Vec<VarId>>> = (stages.iter())
            .map(|s| match &s.kind {
                Kind::Probe(_, key) => Some(key.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(keys, [None, Some(vec![VarId(0), VarId(3)]), None]);
    }

    #[test]
    fn no_probe_comes_before_a_function_that_gives_a_new_value_each_call() {
        // BIND(BNODE() AS ?w) mints a node per row: rows equal on every variable are not one row for it.
        let mint = node(Kind::Extend {
            var: VarId(3),
            expr: Expr::Call(crate::ir::Func::BNode, Vec::new()),
            exists: Vec::new(),
        });
        assert_eq!(
            probes(vec![scan(0, 10, 1), scan(1, 11, 2), mint], &[0, 3]),
            [false, false, false]
        );
    }

    #[test]
    fn a_scan_binding_a_variable_read_after_it_stays_a_scan() {
        // The head reads z, which the last scan binds; y joins the two scans.
        assert_eq!(
            probes(vec![scan(0, 10, 1), scan(1, 11, 2)], &[0, 2]),
            [false, false]
        );
        // A filter after the scan reads z.
        let filter = node(Kind::Filter {
            expr: Expr::Var(VarId(2)),
            exists: Vec::new(),
        });
        assert_eq!(
            probes(vec![scan(0, 10, 1), scan(1, 11, 2), filter], &[0]),
            [false, false, false]
        );
    }

    #[test]
    fn a_stage_the_pass_does_not_know_ends_it() {
        // After an OPTIONAL, y may be unbound in some rows: the scan before it is left alone, and the one after
        // it binds z, which nothing reads, but reads y, which is not bound for sure: it stays a scan.
        let optional = node(Kind::LeftJoin {
            right: Box::new(scan(0, 12, 1)),
            filter: None,
            exists: Vec::new(),
            mode: LeftMode::Seeded { seed: VarId(9) },
        });
        assert_eq!(
            probes(vec![scan(0, 10, 3), optional, scan(1, 11, 2)], &[0, 1]),
            [false, false, false]
        );
    }

    #[test]
    fn a_chain_of_scans_read_by_nothing_is_probed_from_its_end() {
        // x p y . y q z with only x read: the second scan checks; the first must still find every y.
        assert_eq!(
            probes(vec![scan(0, 10, 1), scan(1, 11, 2)], &[0]),
            [false, true]
        );
        // A lone scan checked for rows that bind x already (an EXISTS pattern's seeds).
        let values = node(Kind::Values {
            vars: vec![VarId(0)],
            rows: vec![vec![Some(TermId(5))]].into(),
        });
        assert_eq!(probes(vec![values, scan(0, 10, 1)], &[0]), [false, true]);
    }
}
