//! This module defines the RDF writers: quads sorted by term text, serialized as TriG, N-Quads, Turtle or N-Triples.

use rayon::prelude::*;
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
    sort_quads_with(dict, quads, false);
}

/// [`sort_quads`], with u128 keys even where fewer bytes would do when `wide`.
fn sort_quads_with(dict: &(impl TermSource + Sync + ?Sized), quads: &mut Vec<Quad>, wide: bool) {
    // The positions each term holds (bit k: position k), found by marking: quads hold millions of ids over far
    // fewer distinct terms, so marking beats sorting them all.
    let mut held = vec![0u8; dict.end().index()];
    for q in quads.iter() {
        for (k, t) in q.iter().enumerate() {
            held[t.index()] |= 1 << k;
        }
    }
    // Decode each distinct term once; comparisons then read the decoded views.
    let mut keyed: Vec<(TermRef<'_>, TermId)> = (held.iter().enumerate())
        .filter(|(_, h)| **h != 0)
        .map(|(i, _)| (dict.term(TermId(i as u32)), TermId(i as u32)))
        .collect();
    let cmp = |(ta, a): &(TermRef<'_>, TermId), (tb, b): &(TermRef<'_>, TermId)| {
        cmp_decoded(dict, ta, *a, tb, *b)
    };
    if keyed.len() > 1 << 14 {
        keyed.par_sort_unstable_by(cmp);
    } else {
        keyed.sort_unstable_by(cmp);
    }
    // A new vector (`into_iter().collect()` would keep the pairs' allocation, eight times what the ids need).
    let ids: Vec<TermId> = keyed.iter().map(|(_, id)| *id).collect();
    drop(keyed);
    let mut rank = vec![0u32; dict.end().index()];
    for (r, id) in ids.iter().enumerate() {
        rank[id.index()] = r as u32;
    }
    // Graphs and predicates are few: numbered among themselves, they take a few bits of the packed key (one
    // graph none); subjects and objects take their rank. Usually one u64 a quad.
    let positions = [
        Position::among(&ids, &held, 0),
        Position::ranked(&ids),
        Position::among(&ids, &held, 2),
        Position::ranked(&ids),
    ];
    // The radix sort reads only the bytes the key uses.
    let bytes = positions
        .iter()
        .map(|p| p.bits)
        .sum::<u32>()
        .div_ceil(8)
        .max(1);
    match (bytes, wide) {
        (1, false) => sort_packed::<Packed<1>>(quads, &rank, &positions),
        (2, false) => sort_packed::<Packed<2>>(quads, &rank, &positions),
        (3, false) => sort_packed::<Packed<3>>(quads, &rank, &positions),
        (4, false) => sort_packed::<Packed<4>>(quads, &rank, &positions),
        (5, false) => sort_packed::<Packed<5>>(quads, &rank, &positions),
        (6, false) => sort_packed::<Packed<6>>(quads, &rank, &positions),
        (7, false) => sort_packed::<Packed<7>>(quads, &rank, &positions),
        (8, false) => sort_packed::<Packed<8>>(quads, &rank, &positions),
        _ => sort_packed::<u128>(quads, &rank, &positions),
    }
}

/// A sort key of the packed numbers of a quad's positions.
trait Key: rdst::RadixKey + Copy + Ord + Send + Sync {
    fn pack(key: u128) -> Self;
    fn unpack(self) -> u128;
}

/// A key of `BYTES` bytes held in a u64 (the radix sort skips the bytes above).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Packed<const BYTES: usize>(u64);

impl<const BYTES: usize> rdst::RadixKey for Packed<BYTES> {
    const LEVELS: usize = BYTES;

    #[inline]
    fn get_level(&self, level: usize) -> u8 {
        (self.0 >> (level * 8)) as u8
    }
}

impl<const BYTES: usize> Key for Packed<BYTES> {
    fn pack(key: u128) -> Self {
        debug_assert!(key >> (BYTES * 8) == 0, "the positions' bits fit the key");
        Self(key as u64)
    }

    fn unpack(self) -> u128 {
        u128::from(self.0)
    }
}

impl Key for u128 {
    fn pack(key: u128) -> Self {
        key
    }

    fn unpack(self) -> u128 {
        self
    }
}

/// How one quad position numbers its terms in the packed sort key: by output rank, or densely among the terms
/// it holds (in output order).
struct Position<'a> {
    /// Output rank -> number (`None`: the rank itself).
    number: Option<Vec<u32>>,
    /// Number -> term.
    ids: std::borrow::Cow<'a, [TermId]>,
    /// Bits a number takes.
    bits: u32,
}

impl<'a> Position<'a> {
    fn ranked(ids: &'a [TermId]) -> Self {
        Self {
            number: None,
            ids: ids.into(),
            bits: bits(ids.len()),
        }
    }

    fn among(ids: &[TermId], held: &[u8], k: usize) -> Self {
        let mut number = vec![0u32; ids.len()];
        let mut mine = Vec::new();
        for (r, id) in ids.iter().enumerate() {
            if held[id.index()] & (1 << k) != 0 {
                number[r] = mine.len() as u32;
                mine.push(*id);
            }
        }
        Self {
            number: Some(number),
            bits: bits(mine.len()),
            ids: mine.into(),
        }
    }

    fn number(&self, rank: u32) -> u128 {
        u128::from(self.number.as_ref().map_or(rank, |n| n[rank as usize]))
    }
}

/// Bits that number `n` values `0..n`.
fn bits(n: usize) -> u32 {
    u32::BITS - (n.saturating_sub(1) as u32).leading_zeros()
}

/// Sorts `quads` as packed keys of their positions' numbers (graph highest), radix-sorted in parallel, and maps
/// the keys back to ids.
fn sort_packed<K: Key>(quads: &mut Vec<Quad>, rank: &[u32], positions: &[Position<'_>; 4]) {
    let pack = |q: &Quad| {
        let key = (positions.iter().zip(q)).fold(0u128, |key, (p, t)| {
            (key << p.bits) | p.number(rank[t.index()])
        });
        K::pack(key)
    };
    let mut keys: Vec<K> = if quads.len() > 1 << 14 {
        quads.par_iter().map(pack).collect()
    } else {
        quads.iter().map(pack).collect()
    };
    rdst::RadixSort::radix_sort_unstable(&mut keys);
    keys.dedup();
    quads.clear();
    quads.extend(keys.iter().map(|&k| {
        let mut key = k.unpack();
        let mut quad = [TermId::DEFAULT_GRAPH; 4];
        for (slot, p) in quad.iter_mut().zip(positions).rev() {
            *slot = p.ids[(key & ((1u128 << p.bits) - 1)) as usize];
            key >>= p.bits;
        }
        quad
    }));
}

/// Whether a literal of `datatype` reads back as the same term written bare, as Turtle writes integers, decimals
/// and booleans in their plain forms.
pub fn bare_literal(lexical: &str, datatype: &str) -> bool {
    let digits = |d: &str| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit());
    let unsigned = lexical.strip_prefix(['+', '-']).unwrap_or(lexical);
    match datatype {
        "http://www.w3.org/2001/XMLSchema#integer" => digits(unsigned),
        "http://www.w3.org/2001/XMLSchema#decimal" => unsigned
            .split_once('.')
            .is_some_and(|(i, f)| (i.is_empty() || digits(i)) && digits(f)),
        "http://www.w3.org/2001/XMLSchema#boolean" => lexical == "true" || lexical == "false",
        _ => false,
    }
}

/// Writes quads (already in output order) in `format`; Turtle and N-Triples drop the graph names.
pub fn write_quads<W: Write>(
    dict: &(impl TermSource + Sync + ?Sized),
    prefixes: &[(String, String)],
    quads: &[Quad],
    format: RdfOutputFormat,
    writer: W,
) -> io::Result<W> {
    if matches!(format, RdfOutputFormat::NTriples | RdfOutputFormat::NQuads) {
        return write_lines(dict, quads, format.holds_graphs(), b"", writer);
    }
    let mut serializer = RdfSerializer::from_format(format.rdf_format());
    let turtle = matches!(format, RdfOutputFormat::Trig | RdfOutputFormat::Turtle);
    let mut declared: Vec<(String, String)> = Vec::new();
    if turtle {
        for (name, iri) in used_prefixes(dict, prefixes, quads) {
            serializer = match serializer.clone().with_prefix(name, iri) {
                Ok(s) => {
                    declared.push((name.to_owned(), iri.to_owned()));
                    s
                }
                Err(_) => serializer, // a prefix the writer cannot print is left out; full IRIs are written
            };
        }
    }
    // Edges with their reifiers go last, in annotation form (`s p o ~ r {| … |}`).
    let split = if turtle {
        super::annotated::split(dict, quads)
    } else {
        None
    };
    let quads: &[Quad] = split.as_ref().map_or(quads, |(rest, _)| rest);
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
    let writer = out.finish()?;
    match &split {
        Some((rest, statements)) => super::annotated::write(
            writer,
            dict,
            &declared,
            statements,
            format.holds_graphs(),
            rest.is_empty(),
        ),
        None => Ok(writer),
    }
}

/// N-Triples / N-Quads, one line per quad: IRIs are copied straight from the dictionary, and triple terms
/// written part by part; each distinct literal or blank node is formatted once (by oxrdf, so escaping is the
/// standard's) and its text reused. Blocks of lines are put together in parallel and written in order.
fn write_lines<W: Write>(
    dict: &(impl TermSource + Sync + ?Sized),
    quads: &[Quad],
    with_graphs: bool,
    row: &[u8],
    mut writer: W,
) -> io::Result<W> {
    use std::fmt::Write as _;
    use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
    /// Quads a block holds.
    const BLOCK: usize = 1 << 14;
    // Literals and blank nodes, at any depth of a triple term, formatted once: each part of the quads claims the
    // ones it meets first (in parallel: looking every term up is most of the work) and formats them into its own
    // text; the texts are then laid end to end, each term's place in them noted.
    let claimed: Vec<AtomicBool> = (0..dict.end().index())
        .map(|_| AtomicBool::new(false))
        .collect();
    /// A part's text, and where in it each term it claimed starts and how long it is.
    type Part = (String, Vec<(TermId, u32, u32)>);
    let parts: Vec<Part> = quads
        .par_chunks(BLOCK)
        .map(|chunk| {
            let mut text = String::new();
            let mut placed = Vec::new();
            let mut buf = Buf::default();
            let mut stack: Vec<TermId> = Vec::new();
            for &[g, s, p, o] in chunk {
                let graph = (with_graphs && g != TermId::DEFAULT_GRAPH).then_some(g);
                stack.extend([Some(s), Some(p), Some(o), graph].into_iter().flatten());
                while let Some(id) = stack.pop() {
                    match dict.term(id) {
                        TermRef::Iri(_) | TermRef::DefaultGraph => {}
                        TermRef::Triple(parts) => stack.extend(parts),
                        _ => {
                            if !claimed[id.index()].load(Relaxed)
                                && !claimed[id.index()].swap(true, Relaxed)
                            {
                                let start = text.len();
                                let _ = write!(text, "{}", buf.term(dict, id));
                                placed.push((id, start as u32, (text.len() - start) as u32));
                            }
                        }
                    }
                }
            }
            (text, placed)
        })
        .collect();
    drop(claimed);
    // Indexed by id up to the last literal or blank node (computed terms past it, say minted IRIs, need none).
    let last = (parts.iter().flat_map(|(_, placed)| placed))
        .map(|(id, ..)| id.index() + 1)
        .max();
    let mut at: Vec<(u32, u32)> = vec![(0, 0); last.unwrap_or(0)];
    let mut text = String::with_capacity(parts.iter().map(|(t, _)| t.len()).sum());
    for (part, placed) in parts {
        let offset = text.len() as u32;
        text.push_str(&part);
        for (id, start, len) in placed {
            at[id.index()] = (offset + start, len);
        }
    }
    fn put(
        out: &mut Vec<u8>,
        dict: &(impl TermSource + ?Sized),
        at: &[(u32, u32)],
        text: &[u8],
        id: TermId,
    ) {
        match dict.term(id) {
            // An IRI read with --lenient may hold characters IRIREF does not allow: escaped.
            TermRef::Iri(iri) if dict.has_raw_iris() && iri.needs_escaping() => {
                let mut escaped = String::new();
                iri.write_escaped(&mut escaped);
                out.push(b'<');
                out.extend_from_slice(escaped.as_bytes());
                out.push(b'>');
            }
            TermRef::Iri(iri) => {
                out.push(b'<');
                out.extend_from_slice(iri.ns.as_bytes());
                out.extend_from_slice(iri.local.as_bytes());
                out.push(b'>');
            }
            TermRef::Triple([s, p, o]) => {
                out.extend_from_slice(b"<<( ");
                put(out, dict, at, text, s);
                out.push(b' ');
                put(out, dict, at, text, p);
                out.push(b' ');
                put(out, dict, at, text, o);
                out.extend_from_slice(b" )>>");
            }
            _ => {
                let (start, len) = at[id.index()];
                out.extend_from_slice(&text[start as usize..(start + len) as usize]);
            }
        }
    }
    let text = text.as_bytes();
    let at = at.as_slice();
    let threads = rayon::current_num_threads().max(1);
    // Puts a group's lines together, a block per thread; returns the blocks it filled.
    let format = |blocks: &mut [Vec<u8>], group: &[Quad]| -> usize {
        blocks
            .par_iter_mut()
            .zip(group.par_chunks(BLOCK))
            .for_each(|(out, chunk)| {
                out.clear();
                for &[g, s, p, o] in chunk {
                    out.extend_from_slice(row);
                    put(out, dict, at, text, s);
                    out.push(b' ');
                    put(out, dict, at, text, p);
                    out.push(b' ');
                    put(out, dict, at, text, o);
                    if with_graphs && g != TermId::DEFAULT_GRAPH {
                        out.push(b' ');
                        put(out, dict, at, text, g);
                    }
                    out.extend_from_slice(b" .\n");
                }
            });
        group.len().div_ceil(BLOCK)
    };
    // A group's blocks are written while the next group's are put together (the write, a copy into the kernel,
    // is as long as the formatting): two sets of blocks, swapped after each group.
    let mut ready: Vec<Vec<u8>> = vec![Vec::new(); threads];
    let mut next: Vec<Vec<u8>> = vec![Vec::new(); threads];
    let mut filled = 0;
    for group in quads.chunks(BLOCK * threads) {
        let mut made = 0;
        let written = rayon::in_place_scope(|scope| {
            scope.spawn(|_| made = format(&mut next, group));
            ready[..filled].iter().try_for_each(|b| writer.write_all(b))
        });
        written?;
        std::mem::swap(&mut ready, &mut next);
        filled = made;
    }
    for b in &ready[..filled] {
        writer.write_all(b)?;
    }
    Ok(writer)
}

/// A change to a dataset as RDF Patch (the format Apache Jena uses for dataset changes): one transaction, `D`
/// rows for the quads removed, then `A` rows for the quads added, each `D S P O [G] .` in N-Quads term syntax (no
/// graph term for the default graph), in the order given.
pub fn write_patch<W: Write>(
    dict: &(impl TermSource + Sync + ?Sized),
    removed: &[Quad],
    added: &[Quad],
    mut writer: W,
) -> io::Result<W> {
    writer.write_all(b"TX .\n")?;
    let mut writer = write_lines(dict, removed, true, b"D ", writer)?;
    writer = write_lines(dict, added, true, b"A ", writer)?;
    writer.write_all(b"TC .\n")?;
    Ok(writer)
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
                // An IRI read with --lenient may hold characters IRIREF does not allow: escaped.
                if dict.has_raw_iris() {
                    iri.write_escaped(&mut self.text);
                } else {
                    iri.write_to(&mut self.text);
                }
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
                        if dict.has_raw_iris() {
                            iri.write_escaped(&mut self.datatype);
                        } else {
                            iri.write_to(&mut self.datatype);
                        }
                    }
                    LiteralRef::new_typed_literal(
                        lexical,
                        NamedNodeRef::new_unchecked(&self.datatype),
                    )
                    .into()
                }
            },
            TermRef::Triple(_) => {
                let Some(mut term) = dict.to_oxrdf(id) else {
                    unreachable!("a triple term")
                };
                if dict.has_raw_iris() {
                    term = escaped_iris(term);
                }
                let Term::Triple(t) = term else {
                    unreachable!("a triple term")
                };
                oxrdf::TermRef::Triple(self.triple.insert(*t))
            }
            TermRef::DefaultGraph => unreachable!("the default graph is not a term"),
        }
    }
}

/// `term` with the characters IRIREF does not allow escaped in each of its IRIs (a datatype's, a triple term's
/// parts'): what data read with `--lenient` may hold ([`crate::store::Dictionary::note_raw_iris`]).
pub(crate) fn escaped_iris(term: Term) -> Term {
    use oxrdf::{Literal, NamedNode, NamedOrBlankNode, Triple};
    let iri = |n: NamedNode| NamedNode::new_unchecked(crate::store::term::escape_iri(n.as_str()));
    match term {
        Term::NamedNode(n) => Term::NamedNode(iri(n)),
        // A typed literal's datatype (a simple or language-tagged literal's is built in).
        Term::Literal(l) if l.language().is_none() && l.datatype() != oxrdf::vocab::xsd::STRING => {
            let dt = iri(l.datatype().into_owned());
            Term::Literal(Literal::new_typed_literal(l.value(), dt))
        }
        Term::Triple(t) => {
            let Triple {
                subject,
                predicate,
                object,
            } = *t;
            let subject = match subject {
                NamedOrBlankNode::NamedNode(n) => NamedOrBlankNode::NamedNode(iri(n)),
                other => other,
            };
            Term::Triple(Box::new(Triple::new(
                subject,
                iri(predicate),
                escaped_iris(object),
            )))
        }
        other => other,
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

    /// Random quads over terms of every kind, sorted by `sort_quads` with u64 and with u128 keys, equal the
    /// same quads sorted by comparing terms position by position, duplicates dropped.
    #[test]
    fn packed_key_sort_equals_a_sort_by_term_comparison() {
        use crate::store::{Dictionary, LiteralKind, TermSource as _};
        let mut dict = Dictionary::new();
        let mut terms = Vec::new();
        for i in 0..40 {
            terms.push(dict.intern_iri(&format!("http://e/{}{i}", ["a", "b/", "c#"][i % 3])));
            terms.push(dict.new_blank_node());
            terms.push(dict.intern_literal(&format!("{}", 97 - i), LiteralKind::Simple));
            let dt = terms[0];
            terms.push(dict.intern_literal(&format!("{i}"), LiteralKind::Typed(dt)));
        }
        let (a, b) = (terms[0], terms[4]);
        terms.push(dict.intern_triple([a, b, terms[2]]));
        let iris: Vec<TermId> = terms.iter().copied().step_by(4).collect();
        let mut rng = fastrand::Rng::with_seed(7);
        let quads: Vec<Quad> = (0..5000)
            .map(|_| {
                let g = if rng.bool() {
                    TermId::DEFAULT_GRAPH
                } else {
                    iris[rng.usize(..3)]
                };
                let s = if rng.bool() {
                    iris[rng.usize(..iris.len())]
                } else {
                    terms[1 + 4 * rng.usize(..40)]
                };
                [g, s, iris[rng.usize(..6)], terms[rng.usize(..terms.len())]]
            })
            .collect();
        let mut expected = quads.clone();
        expected.sort_by(|x, y| {
            (x.iter().zip(y))
                .map(|(&a, &b)| {
                    if a == b {
                        Ordering::Equal
                    } else {
                        cmp_terms(&dict, a, b)
                    }
                })
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        });
        expected.dedup();
        assert!(
            expected.len() > 4000,
            "few distinct quads: {}",
            expected.len()
        );
        for wide in [false, true] {
            let mut got = quads.clone();
            sort_quads_with(&dict, &mut got, wide);
            let show = |q: &[Quad]| {
                q.iter()
                    .take(3)
                    .map(|q| q.map(|t| dict.display(t)))
                    .collect::<Vec<_>>()
            };
            assert!(
                got == expected,
                "wide {wide}: {:?} vs {:?}",
                show(&got),
                show(&expected)
            );
        }
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
