//! This module defines provenance: the rule each derived fact is credited to, written as an RDF 1.2 reifier of the fact.
//!
//! ```text
//! credit(f) = the rule that first derived f: its first stage, that stage's first pass to find it, and in the
//!             pass the first job (in job order: rules in program order) that found it
//! r_f rdf:reifies <<( s p o )>> ;  reasonctl:rule "rule id" .     (r_f minted as an annotated head's reifier)
//! ```
//!
//! The fixpoint records the credits as it merges each pass ([`super::Options::track`]): no second evaluation,
//! and the same credits whatever the thread count (jobs keep their order) or the run.

use rayon::prelude::*;

use super::Program;
use crate::exec::terms::Terms;
use crate::rules::reifier;
use crate::store::{Dictionary, LiteralKind, Quad, TermId, TermRef, TermSource, well_known as wk};

/// What `--provenance` writes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Level {
    /// The rule credited with each derived fact.
    Rule,
    /// The rule, and the premises of its derivation.
    Premises,
}

/// The project's own vocabulary for provenance.
pub const NS: &str = "https://reasonctl.invalid/ns#";
/// `reasonctl:rule`: the id of the rule a fact is credited to, as a string.
pub const RULE: &str = "https://reasonctl.invalid/ns#rule";

/// The provenance quads of credited facts: for each, two quads in order, its reifier `rdf:reifies` the fact's
/// triple and the reifier's `reasonctl:rule`, in the fact's graph or in `graph`. New terms are the local terms of `terms`.
pub fn quads(
    program: &Program,
    terms: &mut Terms<'_>,
    credited: &[(Quad, usize)],
    graph: Option<&str>,
) -> Vec<Quad> {
    let dict: &Dictionary = terms.main();
    // The graphs' IRIs, written once each (many facts, few graphs).
    let mut graphs: hashbrown::HashMap<TermId, Option<String>> = hashbrown::HashMap::new();
    for &([g, ..], _) in credited {
        graphs.entry(g).or_insert_with(|| match dict.term(g) {
            TermRef::Iri(i) => Some(i.to_string()),
            _ => None,
        });
    }
    let graph_iri = |g: TermId| graphs.get(&g).and_then(Option::as_deref);
    // The reifiers' digests, in parallel (hashing is most of the work).
    let digests: Vec<[u8; 16]> = credited
        .par_iter()
        .map(|&([g, s, p, o], r)| {
            reifier::digest_of(&program.rules[r].id, graph_iri(g), dict, [s, p, o])
        })
        .collect();
    let rule_property = terms.iri(RULE);
    let graph = graph.map(|g| terms.iri(g));
    let ids: Vec<TermId> = program
        .rules
        .iter()
        .map(|r| terms.literal(&r.id, LiteralKind::Simple))
        .collect();
    // At most a reifier IRI and a triple term per fact (fewer where the dictionary holds them): their entries are
    // an IRI's tag, namespace id and 32 digits, a triple term's tag and three ids. Reserved at once (reserved
    // piece by piece, the text would double).
    terms.reserve(
        credited.len() * 2,
        credited.len() * ((1 + 4 + 32) + (1 + 3 * 4)),
    );
    // The reifiers' IRIs and the facts' triple terms: looked up and hashed in parallel, the new ones interned in
    // order (a reifier and a triple term per fact: interning them one by one was most of `--provenance`'s cost).
    let reifiers = terms.iris_in(reifier::GENID_BASE, credited.len(), |i, out| {
        reifier::write_local(out, &digests[i]);
    });
    drop(digests);
    let edges = terms.triples(credited.len(), |i| {
        let [_, s, p, o] = credited[i].0;
        [s, p, o]
    });
    let mut out = Vec::with_capacity(credited.len() * 2);
    for ((&([g, ..], r), reifier), edge) in credited.iter().zip(reifiers).zip(edges) {
        let g = graph.unwrap_or(g);
        out.push([g, reifier, wk::RDF_REIFIES, edge]);
        out.push([g, reifier, rule_property, ids[r]]);
    }
    out
}
