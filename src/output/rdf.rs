//! This module defines the RDF writers: quads sorted by term text, serialized as TriG, N-Quads, Turtle or N-Triples.

use rayon::slice::ParallelSliceMut;
use std::cmp::Ordering;
use std::io::{self, Write};

use oxrdf::Term;
use oxrdfio::{RdfFormat, RdfSerializer};

use crate::store::{LiteralKind, Quad, TermId, TermRef, TermSource};

/// An RDF syntax the writers produce.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum RdfOutputFormat {
    /// TriG: Turtle with named graphs.
    Trig,
    /// N-Quads: one quad a line.
    #[value(name = "nquads")]
    NQuads,
    /// Turtle: one graph.
    Turtle,
    /// N-Triples: one triple a line, one graph.
    #[value(name = "ntriples")]
    NTriples,
}

impl RdfOutputFormat {
    /// Whether the syntax can say which graph a triple is in.
    pub fn holds_graphs(self) -> bool {
        matches!(self, RdfOutputFormat::Trig | RdfOutputFormat::NQuads)
    }

    /// The usual file extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            RdfOutputFormat::Trig => "trig",
            RdfOutputFormat::NQuads => "nq",
            RdfOutputFormat::Turtle => "ttl",
            RdfOutputFormat::NTriples => "nt",
        }
    }

    /// The format an output file extension names.
    pub fn from_extension(ext: &str) -> Option<Self> {
        Some(match ext.to_ascii_lowercase().as_str() {
            "trig" => RdfOutputFormat::Trig,
            "nq" => RdfOutputFormat::NQuads,
            "ttl" => RdfOutputFormat::Turtle,
            "nt" => RdfOutputFormat::NTriples,
            _ => return None,
        })
    }

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            RdfOutputFormat::Trig => "trig",
            RdfOutputFormat::NQuads => "nquads",
            RdfOutputFormat::Turtle => "turtle",
            RdfOutputFormat::NTriples => "ntriples",
        }
    }

    fn rdf_format(self) -> RdfFormat {
        match self {
            RdfOutputFormat::Trig => RdfFormat::TriG,
            RdfOutputFormat::NQuads => RdfFormat::NQuads,
            RdfOutputFormat::Turtle => RdfFormat::Turtle,
            RdfOutputFormat::NTriples => RdfFormat::NTriples,
        }
    }
}

/// Compares two terms by kind (IRIs, blank nodes, literals, triple terms) and then by text.
///
/// This is the order of every output: it depends on the terms only, never on ids or thread count.
pub fn cmp_terms(dict: &(impl TermSource + ?Sized), a: TermId, b: TermId) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    cmp_decoded(dict, &dict.term(a), a, &dict.term(b), b)
}

/// [`cmp_terms`] on terms already decoded.
fn cmp_decoded(
    dict: &(impl TermSource + ?Sized),
    ta: &TermRef<'_>,
    a: TermId,
    tb: &TermRef<'_>,
    b: TermId,
) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    let (ta, tb) = (*ta, *tb);
    kind_rank(&ta)
        .cmp(&kind_rank(&tb))
        .then_with(|| match (ta, tb) {
            (TermRef::Iri(x), TermRef::Iri(y)) => x.cmp_text(&y),
            (TermRef::Blank(x), TermRef::Blank(y)) => x.cmp(&y),
            (
                TermRef::Literal {
                    lexical: lx,
                    kind: kx,
                },
                TermRef::Literal {
                    lexical: ly,
                    kind: ky,
                },
            ) => lx.cmp(ly).then_with(|| cmp_literal_kinds(dict, kx, ky)),
            (TermRef::Triple(x), TermRef::Triple(y)) => x
                .iter()
                .zip(&y)
                .map(|(&i, &j)| cmp_terms(dict, i, j))
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal),
            _ => Ordering::Equal,
        })
}

fn kind_rank(t: &TermRef<'_>) -> u8 {
    match t {
        TermRef::DefaultGraph => 0,
        TermRef::Iri(_) => 1,
        TermRef::Blank(_) => 2,
        TermRef::Literal { .. } => 3,
        TermRef::Triple(_) => 4,
    }
}

fn cmp_literal_kinds(
    dict: &(impl TermSource + ?Sized),
    a: LiteralKind<'_>,
    b: LiteralKind<'_>,
) -> Ordering {
    let rank = |k: &LiteralKind<'_>| match k {
        LiteralKind::Simple => 0,
        LiteralKind::Lang { .. } => 1,
        LiteralKind::Typed(_) => 2,
    };
    rank(&a).cmp(&rank(&b)).then_with(|| match (a, b) {
        (
            LiteralKind::Lang {
                tag: ta,
                direction: da,
            },
            LiteralKind::Lang {
                tag: tb,
                direction: db,
            },
        ) => ta.cmp(tb).then(da.cmp(&db)),
        (LiteralKind::Typed(x), LiteralKind::Typed(y)) => cmp_terms(dict, x, y),
        _ => Ordering::Equal,
    })
}

/// The distinct ids of `quads`, ascending, found by marking them (quads hold millions of ids over far fewer
/// distinct terms, so marking beats sorting them all).
fn distinct_ids(dict: &(impl TermSource + ?Sized), quads: &[Quad]) -> Vec<TermId> {
    let mut seen = vec![false; dict.end().index()];
    for &id in quads.iter().flatten() {
        seen[id.index()] = true;
    }
    seen.iter()
        .enumerate()
        .filter(|(_, s)| **s)
        .map(|(i, _)| TermId(i as u32))
        .collect()
}

/// Sorts quads into output order: graph, subject, predicate, object, each by [`cmp_terms`]; drops duplicates.
pub fn sort_quads(dict: &(impl TermSource + Sync + ?Sized), quads: &mut Vec<Quad>) {
    let ids = distinct_ids(dict, quads);
    // Decode each term once; comparisons then read the decoded views.
    let mut keyed: Vec<(TermRef<'_>, TermId)> = ids.iter().map(|&id| (dict.term(id), id)).collect();
    let cmp = |(ta, a): &(TermRef<'_>, TermId), (tb, b): &(TermRef<'_>, TermId)| {
        cmp_decoded(dict, ta, *a, tb, *b)
    };
    if keyed.len() > 1 << 14 {
        keyed.par_sort_unstable_by(cmp);
    } else {
        keyed.sort_unstable_by(cmp);
    }
    let ids: Vec<TermId> = keyed.into_iter().map(|(_, id)| id).collect();
    let mut rank = vec![0u32; dict.end().index()];
    for (r, id) in ids.iter().enumerate() {
        rank[id.index()] = r as u32;
    }
    // Sort the quads as rank tuples (integers, in parallel for many), then map the ranks back to ids.
    // Each rank tuple packed into one integer (graph rank highest): one comparison instead of four.
    let mut keyed: Vec<u128> = quads
        .iter()
        .map(|q| {
            q.iter()
                .fold(0u128, |key, t| (key << 32) | u128::from(rank[t.index()]))
        })
        .collect();
    if keyed.len() > 1 << 14 {
        keyed.par_sort_unstable();
    } else {
        keyed.sort_unstable();
    }
    keyed.dedup();
    quads.clear();
    quads.extend(
        keyed
            .iter()
            .map(|&k| [96, 64, 32, 0].map(|shift| ids[((k >> shift) as u32) as usize])),
    );
}

/// Writes quads (already in output order) in `format`; Turtle and N-Triples drop the graph names.
pub fn write_quads<W: Write>(
    dict: &(impl TermSource + ?Sized),
    prefixes: &[(String, String)],
    quads: &[Quad],
    format: RdfOutputFormat,
    writer: W,
) -> io::Result<W> {
    if matches!(format, RdfOutputFormat::NTriples | RdfOutputFormat::NQuads) {
        return write_lines(dict, quads, format.holds_graphs(), writer);
    }
    let mut serializer = RdfSerializer::from_format(format.rdf_format());
    if matches!(format, RdfOutputFormat::Trig | RdfOutputFormat::Turtle) {
        for (name, iri) in used_prefixes(dict, prefixes, quads) {
            serializer = match serializer.clone().with_prefix(name, iri) {
                Ok(s) => s,
                Err(_) => serializer, // a prefix the writer cannot print is left out; full IRIs are written
            };
        }
    }
    let mut out = serializer.for_writer(writer);
    // Terms are written from reusable buffers: no allocation per quad but for triple terms.
    let mut bufs: [Buf; 4] = Default::default();
    for &[g, s, p, o] in quads {
        let [bg, bs, bp, bo] = &mut bufs;
        let graph = if format.holds_graphs() && g != TermId::DEFAULT_GRAPH {
            Some(bg.term(dict, g))
        } else {
            None
        };
        let subject = match bs.term(dict, s) {
            oxrdf::TermRef::NamedNode(n) => oxrdf::NamedOrBlankNodeRef::NamedNode(n),
            oxrdf::TermRef::BlankNode(b) => oxrdf::NamedOrBlankNodeRef::BlankNode(b),
            other => unreachable!("{other} is not a subject"),
        };
        let oxrdf::TermRef::NamedNode(predicate) = bp.term(dict, p) else {
            unreachable!("a predicate is an IRI")
        };
        let object = bo.term(dict, o);
        let graph_name = match graph {
            None => oxrdf::GraphNameRef::DefaultGraph,
            Some(oxrdf::TermRef::NamedNode(n)) => oxrdf::GraphNameRef::NamedNode(n),
            Some(oxrdf::TermRef::BlankNode(b)) => oxrdf::GraphNameRef::BlankNode(b),
            Some(other) => unreachable!("{other} is not a graph name"),
        };
        out.serialize_quad(oxrdf::QuadRef::new(subject, predicate, object, graph_name))?;
    }
    out.finish()
}

/// N-Triples / N-Quads, one line per quad: each distinct term is formatted once (by oxrdf, so escaping is the
/// standard's) and its text reused, so a line costs a few copies.
fn write_lines<W: Write>(
    dict: &(impl TermSource + ?Sized),
    quads: &[Quad],
    with_graphs: bool,
    writer: W,
) -> io::Result<W> {
    use std::fmt::Write as _;
    const UNSEEN: u32 = u32::MAX;
    let mut at: Vec<(u32, u32)> = vec![(UNSEEN, 0); dict.end().index()];
    let mut text = String::new();
    let mut buf = Buf::default();
    let mut span = |id: TermId, text: &mut String| -> (usize, usize) {
        let slot = &mut at[id.index()];
        if slot.0 == UNSEEN {
            let start = text.len();
            let _ = write!(text, "{}", buf.term(dict, id));
            *slot = (start as u32, (text.len() - start) as u32);
        }
        (slot.0 as usize, (slot.0 + slot.1) as usize)
    };
    let mut out = io::BufWriter::with_capacity(1 << 16, writer);
    let mut line: Vec<u8> = Vec::with_capacity(256);
    for &[g, s, p, o] in quads {
        line.clear();
        for (i, id) in [s, p, o].into_iter().enumerate() {
            if i > 0 {
                line.push(b' ');
            }
            let (a, b) = span(id, &mut text);
            line.extend_from_slice(&text.as_bytes()[a..b]);
        }
        if with_graphs && g != TermId::DEFAULT_GRAPH {
            line.push(b' ');
            let (a, b) = span(g, &mut text);
            line.extend_from_slice(&text.as_bytes()[a..b]);
        }
        line.extend_from_slice(b" .\n");
        out.write_all(&line)?;
    }
    out.into_inner().map_err(io::IntoInnerError::into_error)
}

/// Reusable text for one term position of a quad being written.
#[derive(Default)]
struct Buf {
    text: String,
    datatype: String,
    triple: Option<oxrdf::Triple>,
}

impl Buf {
    /// The term as an oxrdf reference into this buffer (or into the dictionary).
    fn term<'b>(
        &'b mut self,
        dict: &'b (impl TermSource + ?Sized),
        id: TermId,
    ) -> oxrdf::TermRef<'b> {
        use oxrdf::{BlankNodeRef, LiteralRef, NamedNodeRef};
        match dict.term(id) {
            TermRef::Iri(iri) => {
                iri.write_to(&mut self.text);
                NamedNodeRef::new_unchecked(&self.text).into()
            }
            TermRef::Blank(n) => {
                use std::fmt::Write as _;
                self.text.clear();
                let _ = write!(self.text, "b{n}");
                BlankNodeRef::new_unchecked(&self.text).into()
            }
            TermRef::Literal { lexical, kind } => match kind {
                LiteralKind::Simple => LiteralRef::new_simple_literal(lexical).into(),
                LiteralKind::Lang {
                    tag,
                    direction: None,
                } => LiteralRef::new_language_tagged_literal_unchecked(lexical, tag).into(),
                LiteralKind::Lang {
                    tag,
                    direction: Some(d),
                } => LiteralRef::new_directional_language_tagged_literal_unchecked(
                    lexical,
                    tag,
                    match d {
                        crate::store::Direction::Ltr => oxrdf::BaseDirection::Ltr,
                        crate::store::Direction::Rtl => oxrdf::BaseDirection::Rtl,
                    },
                )
                .into(),
                LiteralKind::Typed(dt) => {
                    if let TermRef::Iri(iri) = dict.term(dt) {
                        iri.write_to(&mut self.datatype);
                    }
                    LiteralRef::new_typed_literal(
                        lexical,
                        NamedNodeRef::new_unchecked(&self.datatype),
                    )
                    .into()
                }
            },
            TermRef::Triple(_) => {
                let Some(Term::Triple(t)) = dict.to_oxrdf(id) else {
                    unreachable!("a triple term")
                };
                oxrdf::TermRef::Triple(self.triple.insert(*t))
            }
            TermRef::DefaultGraph => unreachable!("the default graph is not a term"),
        }
    }
}

/// The declared prefixes some IRI of the output starts with.
fn used_prefixes<'p>(
    dict: &(impl TermSource + ?Sized),
    prefixes: &'p [(String, String)],
    quads: &[Quad],
) -> Vec<(&'p str, &'p str)> {
    let mut used = vec![false; prefixes.len()];
    let mut mark = |id: TermId| {
        if let TermRef::Iri(iri) = dict.term(id) {
            for (i, (_, ns)) in prefixes.iter().enumerate() {
                if !used[i] && iri.len() > ns.len() && starts_with(&iri, ns) {
                    used[i] = true;
                }
            }
        }
    };
    for id in distinct_ids(dict, quads) {
        mark(id);
    }
    prefixes
        .iter()
        .zip(used)
        .filter(|(_, u)| *u)
        .map(|((n, i), _)| (n.as_str(), i.as_str()))
        .collect()
}

fn starts_with(iri: &crate::store::Iri<'_>, prefix: &str) -> bool {
    if prefix.len() <= iri.ns.len() {
        iri.ns.starts_with(prefix)
    } else {
        prefix.starts_with(iri.ns) && iri.local.starts_with(&prefix[iri.ns.len()..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::load::{DataFormat, Loader, NoProgress};

    fn roundtrip(input: &str, format: RdfOutputFormat) -> String {
        let mut loader = Loader::new();
        loader
            .load_reader("t", input.as_bytes(), DataFormat::Trig, None, &NoProgress)
            .unwrap();
        let store = loader.finish();
        let mut quads: Vec<Quad> = store
            .quads
            .graphs()
            .flat_map(|(g, idx)| idx.triples().iter().map(move |&[s, p, o]| [g, s, p, o]))
            .collect();
        sort_quads(&store.dict, &mut quads);
        let out = write_quads(&store.dict, &store.prefixes, &quads, format, Vec::new()).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn nquads_output_is_sorted_by_term_text_and_keeps_lexical_forms() {
        let out = roundtrip(
            "<http://e/z> <http://e/p> \"01\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n\
             <http://e/g> { <http://e/a> <http://e/p> \"x\"@en . }\n\
             <http://e/a> <http://e/p> <http://e/b> .\n",
            RdfOutputFormat::NQuads,
        );
        assert_eq!(
            out,
            "<http://e/a> <http://e/p> <http://e/b> .\n\
             <http://e/z> <http://e/p> \"01\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n\
             <http://e/a> <http://e/p> \"x\"@en <http://e/g> .\n"
        );
    }

    #[test]
    fn trig_output_reuses_only_the_prefixes_it_needs() {
        let out = roundtrip(
            "PREFIX e: <http://e/>\nPREFIX unused: <http://unused/>\ne:a e:p e:b .\n",
            RdfOutputFormat::Trig,
        );
        assert!(out.contains("@prefix e: <http://e/>"), "{out}");
        assert!(!out.contains("unused"), "{out}");
        assert!(out.contains("e:a e:p e:b"), "{out}");
    }
}
