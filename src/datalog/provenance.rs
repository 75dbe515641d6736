//! This module defines provenance: the rule each derived fact is credited to, written as an RDF 1.2 reifier of the fact.
//!
//! ```text
//! credit(f) = the first rule r, in stage order (then program order), with a body row over the final facts
//!             whose head instantiates to f
//! r_f rdf:reifies <<( s p o )>> ;  reasonctl:rule "rule id" .     (r_f minted as an annotated head's reifier)
//! ```
//!
//! Crediting runs every rule body once over the fixpoint (one naive pass), in parallel; the credit does not depend
//! on the thread count, the order in which the fixpoint met the facts, or the run. Stage order makes the credit
//! the rule that first derived the fact across stages; within a recursive group, program order decides. A fact
//! no body derives again in one step (a rule calling RAND, UUID, STRUUID or BNODE) is credited to none.

use std::sync::atomic::AtomicUsize;
use std::time::Instant;

use hashbrown::HashSet;
use rayon::prelude::*;

use super::fixpoint::{Job, Limits, run_body};
use super::{Options, Program};
use crate::exec::terms::Terms;
use crate::exec::{Cancel, ExecError};
use crate::rules::reifier;
use crate::store::{
    Dictionary, LiteralKind, Overlay, Quad, Store, TermId, TermRef, TermSource, well_known as wk,
};

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

/// The derived facts of `overlay`, each with the index of the rule credited with it (facts no rule derives again
/// are left out); sorted by fact.
pub fn credit(
    program: &Program,
    store: &Store,
    overlay: &Overlay,
    options: &Options,
) -> Result<Vec<(Quad, usize)>, ExecError> {
    let started = Instant::now();
    let cancel = match (options.budget.deadline(started), options.budget.timeout) {
        (Some(at), Some(t)) => Cancel::new().with_deadline(at, t),
        _ => Cancel::new(),
    };
    let mut order: Vec<usize> = (0..program.rules.len()).collect();
    order.sort_by_key(|&r| (program.deps.groups[program.deps.group_of(r)].stage, r));
    let end = store.dict.end();
    let found = AtomicUsize::new(0);
    let limits = Limits {
        now: options.now,
        cancel: &cancel,
        found: &found,
        room: usize::MAX,
        path_limit: options.path_limit,
        made_cap: usize::MAX,
    };
    // Each rule's derived facts, in credit order.
    let made: Vec<Vec<Quad>> = order
        .par_iter()
        .map(|&r| {
            let job = Job {
                rule: r,
                body: &program.rules[r].body,
                seed: None,
                compiled: None,
            };
            let out = run_body(program, &job, store, overlay, &limits)?;
            let mut quads: Vec<Quad> = out
                .quads
                .into_iter()
                .filter(|q| {
                    q.iter().all(|id| id.0 < end.0) && overlay.contains(q[0], [q[1], q[2], q[3]])
                })
                .collect();
            quads.sort_unstable();
            quads.dedup();
            Ok(quads)
        })
        .collect::<Result<_, ExecError>>()?;
    let mut credited: HashSet<Quad> = HashSet::with_capacity(overlay.len());
    let mut out: Vec<(Quad, usize)> = Vec::with_capacity(overlay.len());
    for (&r, quads) in order.iter().zip(made) {
        for q in quads {
            if credited.insert(q) {
                out.push((q, r));
            }
        }
    }
    out.sort_unstable();
    Ok(out)
}

/// The provenance quads of credited facts: for each, its reifier `rdf:reifies` the fact's triple and carries
/// `reasonctl:rule`, in the fact's graph or in `graph`. New terms are the local terms of `terms`.
pub fn quads(
    program: &Program,
    terms: &mut Terms<'_>,
    credited: &[(Quad, usize)],
    graph: Option<&str>,
) -> Vec<Quad> {
    let dict: &Dictionary = terms.main();
    let graph_iri = |g: TermId| match dict.term(g) {
        TermRef::Iri(i) => Some(i.to_string()),
        _ => None,
    };
    // The reifiers' digests, in parallel (hashing is most of the work), then their IRIs interned in order.
    let digests: Vec<[u8; 16]> = credited
        .par_iter()
        .map(|&([g, s, p, o], r)| {
            let g = graph_iri(g);
            reifier::digest_of(&program.rules[r].id, g.as_deref(), dict, [s, p, o])
        })
        .collect();
    let rule_property = terms.iri(RULE);
    let graph = graph.map(|g| terms.iri(g));
    let ids: Vec<TermId> = program
        .rules
        .iter()
        .map(|r| terms.literal(&r.id, LiteralKind::Simple))
        .collect();
    let mut out = Vec::with_capacity(credited.len() * 2);
    let mut iri = String::new();
    for (&([g, s, p, o], r), digest) in credited.iter().zip(&digests) {
        iri.clear();
        reifier::write_iri(&mut iri, digest);
        let reifier = terms.iri(&iri);
        let edge = terms.triple([s, p, o]);
        let g = graph.unwrap_or(g);
        out.push([g, reifier, wk::RDF_REIFIES, edge]);
        out.push([g, reifier, rule_property, ids[r]]);
    }
    out
}
