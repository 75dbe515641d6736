//! This module defines the reifiers minted for annotated rule heads and for `--provenance`: skolem IRIs named by the rule, the graph and the edge.
//!
//! `CONSTRUCT { ?a ex:p ?b {| ex:q ?c |} }` (or JSON-LD `"@annotation"`) derives the edge, a reifier `r` with
//! `r rdf:reifies <<( a p b )>>`, and the annotation's triples on `r`. The reifier cannot be a fresh blank node
//! (every pass of the fixpoint would make another one, and the run would not end) nor a blank node with a label
//! of the run's own (the ids would change between runs, and a saved state could not be diffed). It is a skolem
//! IRI (RDF 1.1 Concepts §3.5) under [`GENID_BASE`], its last segment the first 128 bits, in hex, of the SHA-256
//! of the rule id, the graph and the edge (each term in a length-prefixed canonical form): the same inputs give
//! the same reifier whatever the thread count, the rule order or the run; two derivations of one edge by one rule
//! share it; two rules, or two graphs, get two. `--provenance` names the reifier of a derived fact the same way
//! (with the rule it credits), so a rule's annotation and its provenance land on one node.

use sha2::{Digest, Sha256};

use crate::exec::terms::Terms;
use crate::ir::lower::TemplateTerm;
use crate::store::{Direction, LiteralKind, TermId, TermRef, TermSource, Triple};

/// Where minted reifiers live: a `/.well-known/genid/` path (RDF 1.1 Concepts §3.5) under the reserved `.invalid`
/// host, so a minted IRI never names anything of anyone else's and is plainly not meant to be dereferenced.
pub const GENID_BASE: &str = "https://reasonctl.invalid/.well-known/genid/";

/// A reifier of an annotated head edge: the edge, and what names the minter (the rule and the head's graph).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Minted {
    /// The edge reified.
    pub edge: [TemplateTerm; 3],
    /// The rule id.
    pub rule: String,
    /// The head's graph IRI (`None`: the default graph).
    pub graph: Option<String>,
}

impl Minted {
    /// The minter of `rule`'s head in `graph` (`None`: the default graph) for `edge`.
    pub fn new(rule: &str, graph: Option<&str>, edge: [TemplateTerm; 3]) -> Self {
        Minted {
            edge,
            rule: rule.to_owned(),
            graph: graph.map(str::to_owned),
        }
    }
}

/// A reifier's digest under way: the rule and the graph fed; the edge's terms go next (see [`feed`],
/// [`open_triple`]), then [`finish`].
pub fn start(rule: &str, graph: Option<&str>) -> Sha256 {
    let mut h = Sha256::new();
    put(&mut h, b'R', rule.as_bytes());
    match graph {
        Some(g) => put(&mut h, b'I', g.as_bytes()),
        None => h.update([b'D']),
    }
    h
}

/// A tag, the length and the bytes: no two different sequences of terms feed the same bytes.
fn put(h: &mut Sha256, tag: u8, bytes: &[u8]) {
    h.update([tag]);
    h.update((bytes.len() as u64).to_le_bytes());
    h.update(bytes);
}

/// Marks a triple term whose three parts are fed next (as [`feed`] does for a triple term's id).
pub fn open_triple(h: &mut Sha256) {
    h.update([b'T']);
}

/// Feeds one term, by id.
pub fn feed(h: &mut Sha256, terms: &impl TermSource, id: TermId) {
    match terms.term(id) {
        TermRef::DefaultGraph => h.update([b'D']),
        TermRef::Iri(i) => {
            h.update([b'I']);
            h.update((i.len() as u64).to_le_bytes());
            h.update(i.ns.as_bytes());
            h.update(i.local.as_bytes());
        }
        TermRef::Blank(n) => {
            h.update([b'B']);
            h.update(n.to_le_bytes());
        }
        TermRef::Literal { lexical, kind } => {
            put(h, b'L', lexical.as_bytes());
            match kind {
                LiteralKind::Simple => h.update([b's']),
                LiteralKind::Lang { tag, direction } => {
                    put(h, b'l', tag.as_bytes());
                    h.update([match direction {
                        None => b'-',
                        Some(Direction::Ltr) => b'>',
                        Some(Direction::Rtl) => b'<',
                    }]);
                }
                LiteralKind::Typed(dt) => {
                    h.update([b't']);
                    feed(h, terms, dt);
                }
            }
        }
        TermRef::Triple(parts) => {
            open_triple(h);
            for p in parts {
                feed(h, terms, p);
            }
        }
    }
}

/// The skolem IRI of a finished digest.
pub fn finish(h: Sha256) -> String {
    let mut out = String::with_capacity(GENID_BASE.len() + 32);
    write_iri(&mut out, &digest(h));
    out
}

/// The 128 bits of a finished digest that name the reifier.
pub fn digest(h: Sha256) -> [u8; 16] {
    let d = h.finalize();
    let mut out = [0; 16];
    out.copy_from_slice(&d[..16]);
    out
}

/// Appends the skolem IRI of `digest` to `out`.
pub fn write_iri(out: &mut String, digest: &[u8; 16]) {
    out.push_str(GENID_BASE);
    out.push_str(std::str::from_utf8(&hex(digest)).expect("hex digits"));
}

/// Appends the last segment of the skolem IRI of `digest` (after [`GENID_BASE`]) to `out`: 32 hex digits.
pub fn write_local(out: &mut Vec<u8>, digest: &[u8; 16]) {
    out.extend_from_slice(&hex(digest));
}

/// A digest's 32 lower-case hex digits (the last segment of its skolem IRI).
pub fn hex(digest: &[u8; 16]) -> [u8; 32] {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = [0; 32];
    for (pair, b) in out.chunks_exact_mut(2).zip(digest) {
        pair.copy_from_slice(&[DIGITS[usize::from(b >> 4)], DIGITS[usize::from(b & 15)]]);
    }
    out
}

/// The skolem IRI of the reifier `rule` mints in `graph` for the edge `(s, p, o)`.
pub fn iri(rule: &str, graph: Option<&str>, terms: &impl TermSource, edge: Triple) -> String {
    let mut out = String::with_capacity(GENID_BASE.len() + 32);
    write_iri(&mut out, &digest_of(rule, graph, terms, edge));
    out
}

/// The digest naming the reifier `rule` mints in `graph` for the edge `(s, p, o)` (see [`write_iri`]).
pub fn digest_of(
    rule: &str,
    graph: Option<&str>,
    terms: &impl TermSource,
    edge: Triple,
) -> [u8; 16] {
    let mut h = start(rule, graph);
    for id in edge {
        feed(&mut h, terms, id);
    }
    digest(h)
}

/// The digest naming the reifier `rule` mints for the edge `(s, p, o)` in the graph `graph`, a term (the default
/// graph, an IRI, or a blank node): for an IRI or the default graph the digest [`digest_of`] gives from its IRI
/// or `None`, for a blank node one of its own.
pub fn digest_in(rule: &str, terms: &impl TermSource, graph: TermId, edge: Triple) -> [u8; 16] {
    let mut h = Sha256::new();
    put(&mut h, b'R', rule.as_bytes());
    feed(&mut h, terms, graph);
    for id in edge {
        feed(&mut h, terms, id);
    }
    digest(h)
}

/// The reifier `minted` names for the instantiated `edge`, interned into `terms`.
pub fn mint(terms: &mut Terms<'_>, minted: &Minted, edge: Triple) -> Option<TermId> {
    let iri = iri(&minted.rule, minted.graph.as_deref(), &*terms, edge);
    Some(terms.iri(&iri))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Dictionary;

    #[test]
    fn one_rule_one_graph_one_edge_name_one_reifier_and_any_other_names_another() {
        let mut d = Dictionary::new();
        let [a, p, b, c] =
            ["http://e/a", "http://e/p", "http://e/b", "http://e/c"].map(|i| d.intern_iri(i));
        let first = iri("r1", None, &d, [a, p, b]);
        assert!(first.starts_with(GENID_BASE));
        assert_eq!(first.len(), GENID_BASE.len() + 32);
        assert_eq!(first, iri("r1", None, &d, [a, p, b]));
        assert_ne!(first, iri("r2", None, &d, [a, p, b]));
        assert_ne!(first, iri("r1", Some("http://e/g"), &d, [a, p, b]));
        assert_ne!(first, iri("r1", None, &d, [a, p, c]));
        // A graph fed as a term: an IRI and the default graph as by name, a blank node apart from both.
        let (g, blank) = (d.intern_iri("http://e/g"), d.new_blank_node());
        let named = |graph: Option<&str>| digest_of("r1", graph, &d, [a, p, b]);
        assert_eq!(digest_in("r1", &d, g, [a, p, b]), named(Some("http://e/g")));
        assert_eq!(
            digest_in("r1", &d, TermId::DEFAULT_GRAPH, [a, p, b]),
            named(None)
        );
        let in_blank = digest_in("r1", &d, blank, [a, p, b]);
        assert!(in_blank != named(None) && in_blank != named(Some("http://e/g")));
        // Lengths are fed: rule "r1x" in the default graph is not rule "r1" in graph "x".
        assert_ne!(
            iri("r1x", None, &d, [a, p, b]),
            iri("r1", Some("x"), &d, [a, p, b])
        );
        // A triple term fed by id is the same as its parts fed after `open_triple`.
        let t = d.intern_triple([a, p, b]);
        let mut by_id = start("r", None);
        feed(&mut by_id, &d, t);
        let mut by_parts = start("r", None);
        open_triple(&mut by_parts);
        for id in [a, p, b] {
            feed(&mut by_parts, &d, id);
        }
        assert_eq!(finish(by_id), finish(by_parts));
        // Literals: the lexical form and the datatype or language both count.
        let one = d.intern_literal("1", LiteralKind::Simple);
        let en = d.intern_literal(
            "1",
            LiteralKind::Lang {
                tag: "en",
                direction: None,
            },
        );
        assert_ne!(
            iri("r", None, &d, [a, p, one]),
            iri("r", None, &d, [a, p, en])
        );
    }
}
