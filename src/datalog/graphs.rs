//! This module defines how heads' named graphs resolve against the loaded dataset: a head may write only into a
//! named graph the data already has, never into a graph that is absent or into the default graph by name.

use crate::rules::{Rule, RuleError};
use crate::store::{Store, TermId, TermSource};

/// Every head graph of `rules` that the data lacks, as errors naming the rule.
pub fn check(rules: &[Rule], store: &Store) -> Vec<RuleError> {
    let mut errors = Vec::new();
    for rule in rules {
        let mut reported: Vec<TermId> = Vec::new();
        for g in rule.heads.iter().filter_map(|h| h.graph) {
            // A graph a change set emptied is absent, as it is from data loaded without it.
            let present = g != TermId::DEFAULT_GRAPH
                && (store
                    .quads
                    .graph(g)
                    .is_some_and(|i| !i.triples().is_empty())
                    || store.graphs_elsewhere.contains(&g));
            if !present && !reported.contains(&g) {
                reported.push(g);
                errors.push(RuleError::HeadGraphAbsent {
                    rule: rule.id.clone(),
                    graph: store.dict.iri_text(g),
                });
            }
        }
    }
    errors
}
