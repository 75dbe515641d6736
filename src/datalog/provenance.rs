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
use crate::store::{
    Dictionary, Iri, LiteralKind, Quad, TermId, TermRef, TermSource, Triple, well_known as wk,
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

/// The provenance quads of credited facts: for each, two quads in order, its reifier `rdf:reifies` the fact's
/// triple and the reifier's `reasonctl:rule`, in the fact's graph or in `graph`. New terms are the local terms of
/// `terms`, interned (premises written after them may name the same triple terms).
pub fn quads(
    program: &Program,
    terms: &mut Terms<'_>,
    credited: &[(Quad, usize)],
    graph: Option<&str>,
) -> Vec<Quad> {
    let digests = digests(program, terms.main(), credited);
    let named = Named::new(program, terms, graph);
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
    named.quads(credited, &reifiers, &edges)
}

/// [`quads`] when nothing is interned after them (`--provenance` without premises): the reifier IRIs and triple
/// terms the dictionary lacks are not interned but numbered past `terms`' end, in a [`Minted`] that decodes them.
/// Each is minted once (facts of several graphs may name one edge twice) and a term the dictionary holds keeps its
/// id there: id equality stays term equality. Interning a reifier and a
/// triple term per derived fact, one at a time, was most of what `--provenance` added before the output.
pub fn minted<'a>(
    program: &Program,
    mut terms: Terms<'a>,
    credited: &[(Quad, usize)],
    graph: Option<&str>,
) -> (Minted<'a>, Vec<Quad>) {
    let main = terms.main();
    let digests = digests(program, main, credited);
    let named = Named::new(program, &mut terms, graph);
    let base = terms.end();
    // The dictionary's id, else `None` (and the term is minted); looked up only if the dictionary could hold it.
    let in_main: Vec<Option<TermId>> = if main.holds_namespace(reifier::GENID_BASE) {
        digests
            .par_iter()
            .map(|d| {
                let mut iri = String::new();
                reifier::write_iri(&mut iri, d);
                main.lookup_iri(&iri)
            })
            .collect()
    } else {
        vec![None; credited.len()]
    };
    // The n-th term minted (as the dictionary, fewer than 2^32 ids: `end` is one past the last).
    let nth = |n: usize| {
        assert!(base.index() + n < u32::MAX as usize, "2^32 terms or more");
        TermId((base.index() + n) as u32)
    };
    // Facts of one graph name distinct edges and reifiers; facts of several may name an edge twice (one edge in
    // two graphs; a reifier only by a digest collision): minted once, looked up.
    let several_graphs = credited.iter().any(|(q, _)| q[0] != credited[0].0[0]);
    let mut minted_reifiers: hashbrown::HashMap<[u8; 16], TermId> = hashbrown::HashMap::new();
    let mut hex = Vec::new();
    let mut reifiers = Vec::with_capacity(credited.len());
    for (d, found) in digests.iter().zip(in_main) {
        let id = if let Some(id) = found.or_else(|| minted_reifiers.get(d).copied()) {
            id
        } else {
            hex.push(reifier::hex(d));
            let id = nth(hex.len() - 1);
            if several_graphs {
                minted_reifiers.insert(*d, id);
            }
            id
        };
        reifiers.push(id);
    }
    drop((digests, minted_reifiers));
    let edge_in_main: Vec<Option<TermId>> = credited
        .par_iter()
        .map(|&([_, s, p, o], _)| main.lookup_triple([s, p, o]))
        .collect();
    let mut minted_edges: hashbrown::HashMap<Triple, TermId> = hashbrown::HashMap::new();
    let mut triples = Vec::new();
    let mut edges = Vec::with_capacity(credited.len());
    for (&([_, s, p, o], _), found) in credited.iter().zip(edge_in_main) {
        let id = if let Some(id) = found.or_else(|| minted_edges.get(&[s, p, o]).copied()) {
            id
        } else {
            triples.push([s, p, o]);
            let id = nth(hex.len() + triples.len() - 1);
            if several_graphs {
                minted_edges.insert([s, p, o], id);
            }
            id
        };
        edges.push(id);
    }
    let quads = named.quads(credited, &reifiers, &edges);
    let minted = Minted {
        terms,
        base,
        reifiers: hex,
        edges: triples,
    };
    (minted, quads)
}

/// The reifiers' digests, in parallel (hashing is most of the work). The graph is fed as a term: an IRI and
/// the default graph as an annotated head's constant graph is, a blank-node graph by its node (not as the
/// default graph, whose reifiers a blank-node graph's would otherwise share).
fn digests(program: &Program, dict: &Dictionary, credited: &[(Quad, usize)]) -> Vec<[u8; 16]> {
    credited
        .par_iter()
        .map(|&([g, s, p, o], r)| reifier::digest_in(&program.rules[r].id, dict, g, [s, p, o]))
        .collect()
}

/// The terms every credit names: `reasonctl:rule`, the graph given for provenance, each rule's id.
struct Named {
    rule_property: TermId,
    graph: Option<TermId>,
    ids: Vec<TermId>,
}

impl Named {
    fn new(program: &Program, terms: &mut Terms<'_>, graph: Option<&str>) -> Self {
        Self {
            rule_property: terms.iri(RULE),
            graph: graph.map(|g| terms.iri(g)),
            ids: (program.rules.iter())
                .map(|r| terms.literal(&r.id, LiteralKind::Simple))
                .collect(),
        }
    }

    // reifies(R, <<( s p o )>>), rule(R, id) :- credited(g s p o, rule), R = reifier(rule, g, s p o).
    /// Two quads per credited fact, in order.
    fn quads(
        &self,
        credited: &[(Quad, usize)],
        reifiers: &[TermId],
        edges: &[TermId],
    ) -> Vec<Quad> {
        let mut out = Vec::with_capacity(credited.len() * 2);
        for ((&([g, ..], r), &reifier), &edge) in credited.iter().zip(reifiers).zip(edges) {
            let g = self.graph.unwrap_or(g);
            out.push([g, reifier, wk::RDF_REIFIES, edge]);
            out.push([g, reifier, self.rule_property, self.ids[r]]);
        }
        out
    }
}

/// Terms and the reifier IRIs and triple terms [`minted`] numbered past them: ids from `base`, the reifiers
/// first (each its IRI's last segment, 32 hex digits under [`reifier::GENID_BASE`]), then the triple terms.
pub struct Minted<'a> {
    terms: Terms<'a>,
    base: TermId,
    reifiers: Vec<[u8; 32]>,
    edges: Vec<Triple>,
}

impl<'a> Minted<'a> {
    /// Terms with nothing minted past them (for provenance that interns what it writes).
    pub fn none(terms: Terms<'a>) -> Self {
        Self {
            base: terms.end(),
            terms,
            reifiers: Vec::new(),
            edges: Vec::new(),
        }
    }
}

impl TermSource for Minted<'_> {
    fn term(&self, id: TermId) -> TermRef<'_> {
        let Some(i) = id.0.checked_sub(self.base.0) else {
            return self.terms.term(id);
        };
        let i = i as usize;
        match self.reifiers.get(i) {
            Some(hex) => TermRef::Iri(Iri {
                ns: reifier::GENID_BASE,
                local: std::str::from_utf8(hex).expect("hex digits"),
            }),
            None => TermRef::Triple(self.edges[i - self.reifiers.len()]),
        }
    }

    fn end(&self) -> TermId {
        TermId(self.base.0 + (self.reifiers.len() + self.edges.len()) as u32)
    }

    fn has_raw_iris(&self) -> bool {
        self.terms.has_raw_iris()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minted_terms_are_the_terms_interning_gives_and_the_dictionarys_own_keep_their_ids() {
        // `:a :p :b` is annotated in the data, so its triple term is the dictionary's; the rest are not.
        let (program, store) = crate::datalog::test_program(
            ":a :p :b {| :x 1 |} . :b :p :c . GRAPH :g { :c :p :a }",
            &["CONSTRUCT { ?x :q ?y } WHERE { ?x :p ?y }"],
        );
        let id = |l: &str| store.dict.lookup_iri(&format!("http://e/{l}")).expect(l);
        let g0 = TermId::DEFAULT_GRAPH;
        let credited: Vec<(Quad, usize)> = [
            [g0, id("a"), id("p"), id("b")],
            [g0, id("b"), id("p"), id("c")],
            [id("g"), id("c"), id("p"), id("a")],
            [id("g"), id("b"), id("p"), id("c")],
        ]
        .into_iter()
        .map(|q| (q, 0))
        .collect();
        let mut interned = Terms::new(&store.dict);
        let expected = quads(&program, &mut interned, &credited, None);
        let (minted, got) = minted(&program, Terms::new(&store.dict), &credited, None);
        let text = |source: &dyn Fn(TermId) -> String, qs: &[Quad]| -> Vec<Vec<String>> {
            qs.iter()
                .map(|q| q.iter().map(|&t| source(t)).collect())
                .collect()
        };
        assert_eq!(
            text(&|t| minted.display(t), &got),
            text(&|t| interned.display(t), &expected)
        );
        // The annotated edge's triple term is the dictionary's; the two others are minted, each once.
        let edge_of = |i: usize| got[2 * i][3];
        let held = store.dict.lookup_triple([id("a"), id("p"), id("b")]);
        assert_eq!(Some(edge_of(0)), held);
        let base = interned.main().end();
        assert!(edge_of(1) >= base && edge_of(2) >= base && edge_of(1) != edge_of(2));
        // One edge in two graphs: one triple term, one id, as interning gives.
        assert_eq!(edge_of(1), edge_of(3));
        assert_eq!(expected[2][3], expected[6][3]);
        // Four reifiers (one per fact: the graph is in the digest), four distinct ids; all below `end`.
        let reifiers: hashbrown::HashSet<TermId> = got.iter().map(|q| q[1]).collect();
        assert_eq!(reifiers.len(), 4);
        assert!(got.iter().flatten().all(|&t| t < minted.end()));
    }
}
