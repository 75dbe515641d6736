//! This module defines the dependency analysis: rule B depends on rule A when one of B's reads may observe one
//! of A's writes; strongly connected components (petgraph) are the recursive groups, and each group's stage is
//! one past the latest stage of any group it reads from.

use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};

use super::footprint::Footprint;

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

/// The program's groups and stages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dependencies {
    /// Groups, ordered by stage, then by their first rule.
    pub groups: Vec<Group>,
    /// `edges[b]`: the rules `b` reads from.
    pub reads_from: Vec<Vec<usize>>,
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
}

/// Builds the dependency graph of rules with these footprints.
pub fn analyze(footprints: &[Footprint]) -> Dependencies {
    let n = footprints.len();
    let mut graph: DiGraph<usize, ()> = DiGraph::with_capacity(n, n);
    let nodes: Vec<NodeIndex> = (0..n).map(|i| graph.add_node(i)).collect();
    let mut reads_from = vec![Vec::new(); n];
    for (b, reader) in footprints.iter().enumerate() {
        for (a, writer) in footprints.iter().enumerate() {
            if reader.reads_from(writer) {
                graph.add_edge(nodes[a], nodes[b], ());
                reads_from[b].push(a);
            }
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
    Dependencies { groups, reads_from }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datalog::footprint::{Access, Key, Scope};
    use crate::store::TermId;

    fn fp(reads: &[u32], writes: &[u32]) -> Footprint {
        let acc = |p: &u32| Access {
            scope: Scope::Default,
            key: Key::Predicate(TermId(*p)),
            negated: false,
            aggregated: false,
        };
        Footprint {
            reads: reads.iter().map(acc).collect(),
            writes: writes.iter().map(acc).collect(),
            repeatable: true,
            reads_clock: false,
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
}
