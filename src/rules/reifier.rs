//! This module defines the reifiers minted for annotated rule heads: skolem IRIs named by the rule, the graph and the edge.
//!
//! `CONSTRUCT { ?a ex:p ?b {| ex:q ?c |} }` (or JSON-LD `"@annotation"`) derives the edge, a reifier `r` with
//! `r rdf:reifies <<( a p b )>>`, and the annotation's triples on `r`. The reifier cannot be a fresh blank node
//! (every pass of the fixpoint would make another one, and the run would not end) nor a blank node with a label
//! of the run's own (the ids would change between runs, and a saved state could not be diffed). It is a skolem
//! IRI (RDF 1.1 Concepts §3.5) under [`GENID_BASE`], its last segment the first 128 bits, in hex, of the SHA-256
//! of the rule id, the graph and the edge, each written as in N-Quads: the same inputs give the same reifier
//! whatever the thread count, the rule order or the run; two derivations of one edge by one rule share it; two
//! rules, or two graphs, get two.

use oxrdf::Term;
use sha2::{Digest, Sha256};

use crate::exec::terms::Terms;
use crate::ir::lower::TemplateTerm;
use crate::store::{TermId, TermSource, Triple};

/// Where minted reifiers live: a `/.well-known/genid/` path (RDF 1.1 Concepts §3.5) under the reserved `.invalid`
/// host, so a minted IRI never names anything of anyone else's and is plainly not meant to be dereferenced.
pub const GENID_BASE: &str = "https://reasonctl.invalid/.well-known/genid/";

/// A reifier of an annotated head edge: the edge, and what names the minter (the rule id and the head's graph).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Minted {
    /// The edge reified.
    pub edge: [TemplateTerm; 3],
    /// The rule id and the graph's IRI (empty for the default graph), a line each.
    pub salt: String,
}

impl Minted {
    /// The minter of `rule`'s head in `graph` (`None`: the default graph) for `edge`.
    pub fn new(rule: &str, graph: Option<&str>, edge: [TemplateTerm; 3]) -> Self {
        Minted {
            edge,
            salt: format!("{rule}\n{}\n", graph.unwrap_or("")),
        }
    }
}

/// The skolem IRI of the reifier `salt` mints for the edge `(s, p, o)`.
pub fn iri(salt: &str, [s, p, o]: [&Term; 3]) -> String {
    let mut h = Sha256::new();
    h.update(salt.as_bytes());
    h.update(format!("{s} {p} {o}").as_bytes());
    let digest = h.finalize();
    let mut out = String::with_capacity(GENID_BASE.len() + 32);
    out.push_str(GENID_BASE);
    for b in &digest[..16] {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// The reifier `minted` names for the instantiated `edge`, interned into `terms`; `None` when a term of the edge
/// cannot be written.
pub fn mint(terms: &mut Terms<'_>, minted: &Minted, edge: Triple) -> Option<TermId> {
    let [s, p, o] = edge.map(|id| terms.to_oxrdf(id));
    let iri = iri(&minted.salt, [s.as_ref()?, p.as_ref()?, o.as_ref()?]);
    Some(terms.iri(&iri))
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxrdf::NamedNode;

    fn n(s: &str) -> Term {
        NamedNode::new_unchecked(s).into()
    }

    #[test]
    fn one_rule_one_graph_one_edge_name_one_reifier_and_any_other_names_another() {
        let (a, p, b, c) = (
            n("http://e/a"),
            n("http://e/p"),
            n("http://e/b"),
            n("http://e/c"),
        );
        let r1 = Minted::new(
            "r1",
            None,
            [
                TemplateTerm::Blank(0),
                TemplateTerm::Blank(1),
                TemplateTerm::Blank(2),
            ],
        );
        let r2 = Minted::new("r2", None, r1.edge.clone());
        let g = Minted::new("r1", Some("http://e/g"), r1.edge.clone());
        let first = iri(&r1.salt, [&a, &p, &b]);
        assert!(first.starts_with(GENID_BASE));
        assert_eq!(first.len(), GENID_BASE.len() + 32);
        assert_eq!(first, iri(&r1.salt, [&a, &p, &b]));
        assert_ne!(first, iri(&r2.salt, [&a, &p, &b]));
        assert_ne!(first, iri(&g.salt, [&a, &p, &b]));
        assert_ne!(first, iri(&r1.salt, [&a, &p, &c]));
        // The id and the graph are kept apart: rule "r1\nx" in the default graph is not rule "r1" in graph x.
        assert_ne!(
            iri(
                &Minted::new("r1\nx", None, r1.edge.clone()).salt,
                [&a, &p, &b]
            ),
            iri(
                &Minted::new("r1", Some("x"), r1.edge.clone()).salt,
                [&a, &p, &b]
            )
        );
    }
}
