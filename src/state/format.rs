//! This module defines the snapshot file of a state: the dictionary, the asserted and the derived quads (each
//! graph's triples in SPO order; the other orders are built when the state is opened or first read), the
//! prefixes and the program's rule texts, in one little-endian binary file read back in one sequential pass,
//! through a small buffer. The file starts with a magic line and the format version; the manifest records its
//! length and CRC-32.

use std::io::{self, Write};
use std::path::PathBuf;

use crate::rules::source::RuleText;
use crate::rules::{Language, Origin};
use crate::store::dictionary::{DictionaryParts, room};
use crate::store::load::dump::LineTable;
use crate::store::quads::patch_sorted;
use crate::store::{Dictionary, Overlay, Quad, QuadStore, Store, TermId, Triple, TripleIndex};

/// The first bytes of a snapshot.
pub const MAGIC: &[u8; 16] = b"REASONCTL-STATE\n";

/// The snapshot (and delta) format this build writes and reads; any other is refused. Format 3: each graph's
/// triples in SPO order only (12 bytes a triple); the POS and OSP orders are built on opening by counting sorts,
/// which costs less than reading format 2's stored permutations (4 bytes a triple each) and checking them.
pub const VERSION: u32 = 3;

/// What a snapshot holds.
pub struct Snapshot {
    /// The dictionary, the asserted quads and the prefixes.
    pub store: Store,
    /// The derived quads.
    pub overlay: Overlay,
    /// The program's rules, as text.
    pub rules: Vec<RuleText>,
}

/// A snapshot that does not decode: what was expected where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damaged(pub String);

/// Encodes a store, its derived facts and the program's rule texts in memory ([`write()`]'s bytes).
#[cfg(test)]
pub fn encode(store: &Store, overlay: &Overlay, rules: &[RuleText]) -> Vec<u8> {
    write(Vec::new(), store, overlay, rules)
        .expect("a vector takes every byte")
        .out
}

/// Writes the snapshot of a store, its derived facts and the program's rule texts to `out`, through a buffer of
/// its own (the snapshot is never held whole: saving a state costs no second copy of the store), with the
/// bytes written and their CRC-32.
pub fn write<W: Write>(
    out: W,
    store: &Store,
    overlay: &Overlay,
    rules: &[RuleText],
) -> io::Result<Written<W>> {
    let mut w = Writer::new(out);
    w.put(MAGIC);
    w.u32(VERSION);
    let d = store.dict.parts();
    w.bytes(d.terms);
    w.u64s(d.term_starts);
    w.bytes(d.namespaces);
    w.u64s(d.namespace_starts);
    w.u32(d.base);
    w.u32(d.blank_nodes);
    w.u32(store.prefixes.len() as u32);
    for (name, iri) in &store.prefixes {
        w.str(name);
        w.str(iri);
    }
    let graphs: Vec<(TermId, &TripleIndex)> = store.quads.graphs().collect();
    w.u32(graphs.len() as u32);
    for (g, index) in graphs {
        w.u32(g.0);
        w.u64(index.len() as u64);
        index.triples().iter().for_each(|t| w.triple(t));
    }
    let derived: Vec<TermId> = overlay.graph_ids().collect();
    w.u32(derived.len() as u32);
    for g in derived {
        // A graph's runs hold different triples: their merge is as long as they are together.
        let runs: Vec<&[Triple]> = overlay.runs_of(g).collect();
        w.u32(g.0);
        w.u64(runs.iter().map(|r| r.len() as u64).sum());
        crate::store::overlay::merge_runs(&runs, |t| w.triple(&t));
    }
    w.u32(rules.len() as u32);
    for r in rules {
        w.str(&r.id);
        w.u32(match r.language {
            Language::Sparql => 0,
            Language::JsonLd => 1,
            Language::Srl => 2,
        });
        match &r.origin {
            Origin::File {
                path,
                offset,
                prologue,
            } => {
                w.u32(0);
                w.str(&path.to_string_lossy());
                w.u64(*offset as u64);
                w.u64(*prologue as u64);
            }
            Origin::Translated { path, node } => {
                w.u32(2);
                w.str(&path.to_string_lossy());
                w.str(node);
            }
            Origin::Stored { subject, graph } => {
                w.u32(1);
                w.str(subject);
                w.str(graph.as_deref().unwrap_or(""));
                w.u32(u32::from(graph.is_some()));
            }
        }
        w.str(&r.text);
    }
    w.finish()
}

/// A snapshot's sections before they are assembled: what deltas apply to.
struct Parts {
    dict: DictionaryParts,
    prefixes: Vec<(String, String)>,
    /// Per graph: the triples in SPO order.
    asserted: Vec<(TermId, Vec<Triple>)>,
    /// Per graph: the triples in SPO order.
    derived: Vec<(TermId, Vec<Triple>)>,
    rules: Vec<RuleText>,
}

/// What one run changed in a state: the dictionary's new entries, the prefixes, and the asserted and derived
/// quads removed and added (each list sorted, no quad in both).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Delta {
    /// The entries added to the dictionary ([`Dictionary::tail_since`]).
    pub dict: DictionaryParts,
    /// The prefixes now.
    pub prefixes: Vec<(String, String)>,
    /// Asserted quads removed, added.
    pub asserted: (Vec<Quad>, Vec<Quad>),
    /// Derived quads removed, added.
    pub derived: (Vec<Quad>, Vec<Quad>),
}

/// The first bytes of a delta.
pub const DELTA_MAGIC: &[u8; 16] = b"REASONCTL-DELTA\n";

/// Encodes a delta, with its length and CRC-32.
pub fn encode_delta(d: &Delta) -> Written<Vec<u8>> {
    let quads = d.asserted.0.len() + d.asserted.1.len() + d.derived.0.len() + d.derived.1.len();
    let mut w = Writer::new(Vec::with_capacity(d.dict.terms.len() + quads * 16 + 1024));
    w.put(DELTA_MAGIC);
    w.u32(VERSION);
    w.bytes(&d.dict.terms);
    w.u64s(&d.dict.term_starts);
    w.bytes(&d.dict.namespaces);
    w.u64s(&d.dict.namespace_starts);
    w.u32(d.dict.base);
    w.u32(d.dict.blank_nodes);
    w.u32(d.prefixes.len() as u32);
    for (name, iri) in &d.prefixes {
        w.str(name);
        w.str(iri);
    }
    for list in [&d.asserted.0, &d.asserted.1, &d.derived.0, &d.derived.1] {
        w.u64(list.len() as u64);
        for q in list {
            for id in q {
                w.u32(id.0);
            }
        }
    }
    w.finish().expect("a vector takes every byte")
}

fn decode_delta(bytes: &[u8]) -> Result<Delta, Damaged> {
    let mut r = Reader { bytes, at: 0 };
    if r.take(DELTA_MAGIC.len())? != DELTA_MAGIC {
        return Err(Damaged(
            "a delta file does not start as a reasonctl delta".to_owned(),
        ));
    }
    let version = r.u32()?;
    if version != VERSION {
        return Err(Damaged(format!(
            "delta format {version}, and this reasonctl reads format {VERSION}"
        )));
    }
    let dict = DictionaryParts {
        terms: r.blob()?,
        term_starts: r.u64s()?,
        namespaces: r.blob()?,
        namespace_starts: r.u64s()?,
        base: r.u32()?,
        blank_nodes: r.u32()?,
    };
    let mut prefixes = Vec::new();
    for _ in 0..r.u32()? {
        prefixes.push((r.string()?, r.string()?));
    }
    let mut lists: Vec<Vec<Quad>> = Vec::new();
    for _ in 0..4 {
        let n = r.len()?;
        let list = r.quads(n)?;
        if !list.is_sorted() {
            return Err(Damaged("a delta's quads are not sorted".to_owned()));
        }
        lists.push(list);
    }
    if r.left() != 0 {
        return Err(Damaged("bytes follow a delta's last section".to_owned()));
    }
    let derived_added = lists.pop().expect("four lists");
    let derived_removed = lists.pop().expect("four lists");
    let asserted_added = lists.pop().expect("four lists");
    let asserted_removed = lists.pop().expect("four lists");
    Ok(Delta {
        dict,
        prefixes,
        asserted: (asserted_removed, asserted_added),
        derived: (derived_removed, derived_added),
    })
}

/// The triples of one graph among sorted quads.
fn of_graph(quads: &[Quad], g: TermId) -> Vec<Triple> {
    let from = quads.partition_point(|q| q[0] < g);
    let to = quads.partition_point(|q| q[0] <= g);
    quads[from..to]
        .iter()
        .map(|&[_, s, p, o]| [s, p, o])
        .collect()
}

/// The graphs of sorted quads.
fn graphs_of(quads: &[Quad]) -> Vec<TermId> {
    let mut out: Vec<TermId> = quads.iter().map(|q| q[0]).collect();
    out.dedup();
    out
}

/// A graph's triples without `removed` and with `added` (both sorted).
fn patch_graph(
    spo: &[Triple],
    removed: Vec<Triple>,
    added: Vec<Triple>,
) -> Result<Vec<Triple>, Damaged> {
    patch_sorted(spo, removed, added).ok_or_else(|| {
        Damaged("a delta removes a fact the state lacks or adds one it holds".to_owned())
    })
}

impl Parts {
    fn read(r: &mut impl Source) -> Result<Self, Damaged> {
        if r.take(MAGIC.len())? != MAGIC {
            return Err(Damaged(
                "the file does not start as a reasonctl state".to_owned(),
            ));
        }
        let version = r.u32()?;
        if version != VERSION {
            return Err(Damaged(format!(
                "snapshot format {version}, and this reasonctl reads format {VERSION}"
            )));
        }
        // The terms' arena and starts with room to grow: a maintenance run adds terms, and a full vector would
        // be copied whole (and its new pages faulted in) at the first.
        let dict = DictionaryParts {
            terms: r.blob_with_room()?,
            term_starts: r.u64s_with_room()?,
            namespaces: r.blob()?,
            namespace_starts: r.u64s()?,
            base: r.u32()?,
            blank_nodes: r.u32()?,
        };
        let mut prefixes = Vec::new();
        for _ in 0..r.u32()? {
            prefixes.push((r.string()?, r.string()?));
        }
        let mut asserted = Vec::new();
        for _ in 0..r.u32()? {
            let g = TermId(r.u32()?);
            let n = r.len()?;
            asserted.push((g, r.triples(n)?));
        }
        let mut derived = Vec::new();
        for _ in 0..r.u32()? {
            let g = TermId(r.u32()?);
            let n = r.len()?;
            derived.push((g, r.triples(n)?));
        }
        let mut rules = Vec::new();
        for _ in 0..r.u32()? {
            let id = r.string()?;
            let language = match r.u32()? {
                0 => Language::Sparql,
                1 => Language::JsonLd,
                2 => Language::Srl,
                _ => return Err(Damaged("a rule's language is unknown".to_owned())),
            };
            let origin = match r.u32()? {
                0 => Origin::File {
                    path: PathBuf::from(r.string()?),
                    offset: r.index()?,
                    prologue: r.index()?,
                },
                1 => {
                    let subject = r.string()?;
                    let graph = r.string()?;
                    let some = r.u32()? == 1;
                    Origin::Stored {
                        subject,
                        graph: some.then_some(graph),
                    }
                }
                2 => Origin::Translated {
                    path: PathBuf::from(r.string()?),
                    node: r.string()?,
                },
                _ => return Err(Damaged("a rule's origin is unknown".to_owned())),
            };
            rules.push(RuleText {
                id,
                origin,
                language,
                text: r.string()?,
            });
        }
        if r.left() != 0 {
            return Err(Damaged("bytes follow the last section".to_owned()));
        }
        Ok(Self {
            dict,
            prefixes,
            asserted,
            derived,
            rules,
        })
    }

    /// Applies a delta: the dictionary grows, the prefixes are replaced, facts go and come, graphs with them.
    fn apply(&mut self, delta: Delta) -> Result<(), Damaged> {
        if delta.dict.base != self.dict.base {
            return Err(Damaged(
                "a delta's dictionary does not extend the state's".to_owned(),
            ));
        }
        self.dict.append(delta.dict);
        self.prefixes = delta.prefixes;
        let (removed, added) = delta.asserted;
        let mut graphs: Vec<TermId> = self.asserted.iter().map(|(g, _)| *g).collect();
        graphs.extend(graphs_of(&added));
        graphs.sort_unstable();
        graphs.dedup();
        let mut old: std::collections::HashMap<TermId, Vec<Triple>> =
            std::mem::take(&mut self.asserted).into_iter().collect();
        for g in graphs {
            let spo = old.remove(&g).unwrap_or_default();
            let (gone, new) = (of_graph(&removed, g), of_graph(&added, g));
            if gone.is_empty() && new.is_empty() {
                self.asserted.push((g, spo));
                continue;
            }
            let spo = patch_graph(&spo, gone, new)?;
            if !spo.is_empty() {
                self.asserted.push((g, spo));
            }
        }
        if !old.is_empty() {
            return Err(Damaged(
                "a graph of asserted quads is listed twice".to_owned(),
            ));
        }
        let (removed, added) = delta.derived;
        let mut graphs: Vec<TermId> = self.derived.iter().map(|(g, _)| *g).collect();
        graphs.extend(graphs_of(&added));
        graphs.sort_unstable();
        graphs.dedup();
        let mut old: std::collections::HashMap<TermId, Vec<Triple>> =
            std::mem::take(&mut self.derived).into_iter().collect();
        for g in graphs {
            let spo = old.remove(&g).unwrap_or_default();
            let spo = patch_graph(&spo, of_graph(&removed, g), of_graph(&added, g))?;
            if !spo.is_empty() {
                self.derived.push((g, spo));
            }
        }
        if !old.is_empty() {
            return Err(Damaged(
                "a graph of derived quads is listed twice".to_owned(),
            ));
        }
        Ok(())
    }

    /// The snapshot these parts make, with `deltas` (the files written after it) applied in order; with
    /// `orders`: which POS and OSP orders are built now (the others on first use).
    fn with_deltas(mut self, deltas: &[Vec<u8>], orders: Orders) -> Result<Snapshot, Damaged> {
        for d in deltas {
            self.apply(decode_delta(d)?)?;
        }
        self.assemble(orders)
    }

    fn assemble(self, orders: Orders) -> Result<Snapshot, Damaged> {
        let end = self
            .dict
            .base
            .checked_add(u32::try_from(self.dict.term_starts.len()).unwrap_or(u32::MAX))
            .ok_or_else(|| Damaged("the dictionary does not decode".to_owned()))?;
        // The ids the dictionary has: from its base (below it, an id names nothing) to its end.
        let base = self.dict.base;
        let known = |t: TermId| (base..end).contains(&t.0);
        // A triple's terms are RDF terms: the default graph's reserved id is none of them.
        let in_range = |ts: &[[TermId; 3]]| {
            ts.iter()
                .flatten()
                .all(|&t| t != TermId::DEFAULT_GRAPH && known(t))
        };
        // A state's dictionary is whole: it starts at 0, where the default graph and the built-in terms are.
        if base != 0 {
            return Err(Damaged(
                "the dictionary does not start at the first id".to_owned(),
            ));
        }
        // The dictionary's table, the asserted quads' indexes and the derived quads' orders are built side by side
        // (the derived orders would otherwise be built on first read, by one thread, in the middle of a query).
        // The asserted quads' orders too when the caller will read them all (a run that removes facts reads the
        // old ones): a run that only adds facts builds the new index's from its triples and never the old's.
        let (asserted, derived) = (self.asserted, self.derived);
        let indexes = || -> Result<Vec<(TermId, TripleIndex)>, Damaged> {
            let mut graphs = Vec::new();
            for (g, spo) in asserted {
                if !known(g) || !in_range(&spo) {
                    return Err(Damaged(
                        "an asserted quad names a term the dictionary lacks".to_owned(),
                    ));
                }
                let index =
                    TripleIndex::from_sorted(spo, orders == Orders::All).ok_or_else(|| {
                        Damaged("an index of asserted quads is not sorted".to_owned())
                    })?;
                graphs.push((g, index));
            }
            Ok(graphs)
        };
        let overlay = || -> Result<Overlay, Damaged> {
            let mut overlay = Overlay::new();
            for (g, spo) in derived {
                if !known(g) || !in_range(&spo) || !overlay.add_sorted(g, spo) {
                    return Err(Damaged("the derived quads are damaged".to_owned()));
                }
            }
            if orders != Orders::Lookups {
                overlay.build_orders();
            }
            Ok(overlay)
        };
        let (dict, (graphs, overlay)) = rayon::join(
            || Dictionary::from_parts(self.dict),
            || rayon::join(indexes, overlay),
        );
        let dict = dict.ok_or_else(|| Damaged("the dictionary does not decode".to_owned()))?;
        debug_assert_eq!(dict.end().0, end);
        let (graphs, overlay) = (graphs?, overlay?);
        Ok(Snapshot {
            store: Store {
                dict,
                quads: QuadStore::from_indexes(graphs),
                prefixes: self.prefixes,
                graphs_elsewhere: Vec::new(),
            },
            overlay,
            rules: self.rules,
        })
    }
}

/// Which of a snapshot's POS and OSP orders its reader builds as it opens, in parallel; the others are built
/// when first read (by the reading thread), which costs less where a command reads few facts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Orders {
    /// None: the command reads the facts in SPO order or not at all (`deps`, a dump written from the state).
    Lookups,
    /// The derived facts' (a change set that only adds facts: the old asserted orders are never read).
    Derived,
    /// All of them (a query, `explain`; a run that removes facts, whose consequences are found over the old ones).
    All,
}

/// Decodes a snapshot ([`write()`]'s bytes) and applies the deltas written after it ([`encode_delta`]'s), in
/// order; the asserted quads' orders are built.
pub fn decode(bytes: &[u8], deltas: &[Vec<u8>]) -> Result<Snapshot, Damaged> {
    Parts::read(&mut Reader { bytes, at: 0 })?.with_deltas(deltas, Orders::All)
}

/// A snapshot file read through once, in order: what it decoded to (or why it did not), and its length and
/// CRC-32 as read, to be checked against the manifest before the parts are trusted.
pub struct Streamed {
    parts: Result<Parts, Damaged>,
    /// Bytes read.
    pub bytes: u64,
    /// CRC-32 of the bytes read.
    pub crc32: u32,
}

/// Reads a snapshot file of `len` bytes (its length on disk) through one small buffer, decoding it on the way:
/// the file is never held whole, and each list is copied once, from the buffer into its place. An error
/// reading it is returned as such; a file that does not decode is [`Streamed`]'s to report.
pub fn stream(file: impl std::io::Read, len: u64) -> std::io::Result<Streamed> {
    stream_through(file, len, STREAM_BUFFER)
}

fn stream_through(file: impl std::io::Read, len: u64, buffer: usize) -> std::io::Result<Streamed> {
    let (parts, bytes, crc32) = read_through(file, (len, buffer), Parts::read)?;
    Ok(Streamed {
        parts,
        bytes,
        crc32,
    })
}

/// What `read` decodes from a file of `len` bytes streamed through a buffer of `buffer` bytes, and the file's
/// length and CRC-32 as read (to the end, past what `read` took).
fn read_through<R: std::io::Read, T>(
    file: R,
    (len, buffer): (u64, usize),
    read: impl FnOnce(&mut Stream<R>) -> Result<T, Damaged>,
) -> std::io::Result<(Result<T, Damaged>, u64, u32)> {
    let mut source = Stream::new(file, len, buffer);
    let decoded = read(&mut source);
    let (bytes, crc32) = source.finish()?;
    Ok((decoded, bytes, crc32))
}

impl Streamed {
    /// The snapshot, with the deltas written after it applied in order; with `orders`, the asserted quads'
    /// POS and OSP orders built now (else on first use).
    pub fn decode(self, deltas: &[Vec<u8>], orders: Orders) -> Result<Snapshot, Damaged> {
        self.parts?.with_deltas(deltas, orders)
    }
}

/// The first bytes of a lines file.
pub const LINES_MAGIC: &[u8; 16] = b"REASONCTL-LINES\n";

/// Encodes the line tables of a state's data files in memory ([`write_lines`]'s bytes).
#[cfg(test)]
pub fn encode_lines(tables: &[Option<LineTable>]) -> Vec<u8> {
    write_lines(Vec::new(), tables)
        .expect("a vector takes every byte")
        .out
}

/// Writes the line tables of a state's data files, in the files' order (`None`: a file without one), to
/// `out` through a buffer, with the bytes written and their CRC-32.
pub fn write_lines<W: Write>(out: W, tables: &[Option<LineTable>]) -> io::Result<Written<W>> {
    let mut w = Writer::new(out);
    w.put(LINES_MAGIC);
    w.u32(VERSION);
    w.u32(tables.len() as u32);
    for table in tables {
        let Some(table) = table else {
            w.put(&[0]);
            continue;
        };
        w.put(&[1]);
        let (hashes, quads) = table.parts();
        w.u64(hashes.len() as u64);
        for h in hashes {
            w.put(&h.to_le_bytes());
        }
        for q in quads {
            for id in q {
                w.u32(id.0);
            }
        }
    }
    w.finish()
}

/// Decodes what [`encode_lines`] wrote, for a dictionary of `terms` terms (every id must be one of them).
#[cfg(test)]
pub fn decode_lines(bytes: &[u8], terms: TermId) -> Result<LineTables, Damaged> {
    read_lines(&mut Reader { bytes, at: 0 }, terms)
}

/// Reads a lines file of `len` bytes as [`stream`] reads a snapshot: the tables (or why they do not decode),
/// and the file's length and CRC-32 as read.
pub fn stream_lines(
    file: impl std::io::Read,
    len: u64,
    terms: TermId,
) -> std::io::Result<(Result<LineTables, Damaged>, u64, u32)> {
    read_through(file, (len, STREAM_BUFFER), |r| read_lines(r, terms))
}

/// The line tables of a state's data files, in the files' order (`None`: a file without one).
pub type LineTables = Vec<Option<LineTable>>;

fn read_lines(r: &mut impl Source, terms: TermId) -> Result<LineTables, Damaged> {
    if r.take(LINES_MAGIC.len())? != LINES_MAGIC || r.u32()? != VERSION {
        return Err(Damaged("not a lines file of this format".to_owned()));
    }
    let n = r.u32()?;
    let mut tables = Vec::new();
    for _ in 0..n {
        match r.take(1)?[0] {
            0 => tables.push(None),
            1 => {
                let n = r.len()?;
                let hashes: Vec<u128> = r.list(n, 16, |c| {
                    u128::from_le_bytes(c.try_into().expect("16 bytes"))
                })?;
                let quads = r.quads(n)?;
                if quads.iter().any(|q| {
                    q.iter().any(|id| id.0 >= terms.0) || q[1..].contains(&TermId::DEFAULT_GRAPH)
                }) {
                    return Err(Damaged(
                        "a line's quad names a term the dictionary lacks".to_owned(),
                    ));
                }
                let table = LineTable::from_parts(hashes, quads)
                    .ok_or_else(|| Damaged("a line table is not sorted".to_owned()))?;
                tables.push(Some(table));
            }
            _ => {
                return Err(Damaged(
                    "a line table's marker is neither 0 nor 1".to_owned(),
                ));
            }
        }
    }
    if r.left() != 0 {
        return Err(Damaged("bytes follow the last line table".to_owned()));
    }
    Ok(tables)
}

/// How many bytes a [`Writer`] gathers before it hands them on.
const WRITE_BUFFER: usize = 1 << 20;

/// What [`write()`] or [`write_lines`] wrote: its sink back, the bytes written and their CRC-32.
pub struct Written<W> {
    /// The sink written to.
    pub out: W,
    /// How many bytes.
    pub bytes: u64,
    /// Their CRC-32.
    pub crc32: u32,
}

/// Writes little-endian numbers and lists to a sink through a buffer, counting the bytes and their CRC-32 as
/// they go. The first error of the sink is kept and returned by [`Writer::finish`]; nothing is written after it.
struct Writer<W: Write> {
    out: W,
    buffer: Vec<u8>,
    crc: crc32fast::Hasher,
    bytes: u64,
    failed: Option<io::Error>,
}

impl<W: Write> Writer<W> {
    fn new(out: W) -> Self {
        Self {
            out,
            buffer: Vec::with_capacity(WRITE_BUFFER),
            crc: crc32fast::Hasher::new(),
            bytes: 0,
            failed: None,
        }
    }

    /// Hands the gathered bytes to the sink.
    fn drain(&mut self) {
        let gathered = std::mem::take(&mut self.buffer);
        self.pass(&gathered);
        self.buffer = gathered;
        self.buffer.clear();
    }

    /// Counts `b` and writes it to the sink (unless the sink failed before).
    fn pass(&mut self, b: &[u8]) {
        self.crc.update(b);
        self.bytes += b.len() as u64;
        if self.failed.is_none()
            && let Err(e) = self.out.write_all(b)
        {
            self.failed = Some(e);
        }
    }

    fn put(&mut self, b: &[u8]) {
        if self.buffer.len() + b.len() > WRITE_BUFFER {
            self.drain();
        }
        // A slice larger than the buffer (the dictionary's text) goes to the sink as it is, not copied.
        if b.len() > WRITE_BUFFER {
            self.pass(b);
        } else {
            self.buffer.extend_from_slice(b);
        }
    }

    fn u32(&mut self, v: u32) {
        self.put(&v.to_le_bytes());
    }

    fn u64(&mut self, v: u64) {
        self.put(&v.to_le_bytes());
    }

    fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.put(b);
    }

    fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }

    fn u64s(&mut self, v: &[u64]) {
        self.u64(v.len() as u64);
        for x in v {
            self.u64(*x);
        }
    }

    fn triple(&mut self, t: &Triple) {
        let mut b = [0u8; 12];
        for (i, id) in t.iter().enumerate() {
            b[4 * i..4 * i + 4].copy_from_slice(&id.0.to_le_bytes());
        }
        self.put(&b);
    }

    /// The sink, the bytes written and their CRC-32; or the sink's first error.
    fn finish(mut self) -> io::Result<Written<W>> {
        self.drain();
        if let Some(e) = self.failed {
            return Err(e);
        }
        self.out.flush()?;
        Ok(Written {
            out: self.out,
            bytes: self.bytes,
            crc32: self.crc.finalize(),
        })
    }
}

/// Where a decoder reads bytes from: a slice in memory ([`Reader`]) or a file streamed through a small buffer
/// ([`Stream`]). Lists are handed over in pieces, so a streamed file is copied once, into the lists it holds.
trait Source {
    /// The next `n` bytes (a few: a number or a magic line).
    fn take(&mut self, n: usize) -> Result<&[u8], Damaged>;

    /// Bytes not read yet.
    fn left(&self) -> usize;

    /// The next `n` bytes, in pieces whose lengths are multiples of `unit` (`n` is one).
    fn pieces(&mut self, n: usize, unit: usize, f: &mut dyn FnMut(&[u8])) -> Result<(), Damaged>;

    fn u32(&mut self) -> Result<u32, Damaged> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }

    fn u64(&mut self) -> Result<u64, Damaged> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }

    /// A length, which must fit in what is left.
    fn len(&mut self) -> Result<usize, Damaged> {
        let n = self.u64()?;
        usize::try_from(n)
            .ok()
            .filter(|&n| n <= self.left())
            .ok_or_else(|| Damaged(format!("a length of {n} is past the end of the file")))
    }

    /// A number that is not a length in this file (an offset into a rule file).
    fn index(&mut self) -> Result<usize, Damaged> {
        let n = self.u64()?;
        usize::try_from(n).map_err(|_| Damaged(format!("an offset of {n} does not fit in memory")))
    }

    /// `n` units of `unit` bytes, each decoded by `f`.
    fn list<T>(
        &mut self,
        n: usize,
        unit: usize,
        f: impl Fn(&[u8]) -> T,
    ) -> Result<Vec<T>, Damaged> {
        self.list_with_room((n, unit), 0, f)
    }

    /// `n` units of `unit` bytes, each decoded by `f`, in a vector with capacity for `spare` more (allocated once
    /// the length is checked).
    fn list_with_room<T>(
        &mut self,
        (n, unit): (usize, usize),
        spare: usize,
        f: impl Fn(&[u8]) -> T,
    ) -> Result<Vec<T>, Damaged> {
        let bytes = n
            .checked_mul(unit)
            .filter(|&b| b <= self.left())
            .ok_or_else(|| Damaged("a list is too long".to_owned()))?;
        let mut out = Vec::with_capacity(n + spare);
        self.pieces(bytes, unit, &mut |piece| {
            out.extend(piece.chunks_exact(unit).map(&f));
        })?;
        Ok(out)
    }

    fn blob(&mut self) -> Result<Vec<u8>, Damaged> {
        let n = self.len()?;
        let mut out = Vec::with_capacity(n);
        self.pieces(n, 1, &mut |piece| out.extend_from_slice(piece))?;
        Ok(out)
    }

    /// [`Source::blob`], allocated with [`room`] to grow.
    fn blob_with_room(&mut self) -> Result<Vec<u8>, Damaged> {
        let n = self.len()?;
        let mut out = Vec::with_capacity(n + room(n));
        self.pieces(n, 1, &mut |piece| out.extend_from_slice(piece))?;
        Ok(out)
    }

    /// [`Source::u64s`], allocated with [`room`] to grow.
    fn u64s_with_room(&mut self) -> Result<Vec<u64>, Damaged> {
        let n = self.len()?;
        self.list_with_room((n, 8), room(n), |c| {
            u64::from_le_bytes(c.try_into().expect("8 bytes"))
        })
    }

    fn string(&mut self) -> Result<String, Damaged> {
        String::from_utf8(self.blob()?).map_err(|_| Damaged("a text is not UTF-8".to_owned()))
    }

    fn u64s(&mut self) -> Result<Vec<u64>, Damaged> {
        let n = self.len()?;
        self.list(n, 8, |c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
    }

    fn triples(&mut self, n: usize) -> Result<Vec<[TermId; 3]>, Damaged> {
        self.list(n, 12, ids)
    }

    fn quads(&mut self, n: usize) -> Result<Vec<Quad>, Damaged> {
        self.list(n, 16, ids)
    }
}

/// `N` little-endian term ids, back to back.
fn ids<const N: usize>(bytes: &[u8]) -> [TermId; N] {
    std::array::from_fn(|k| {
        TermId(u32::from_le_bytes(
            bytes[4 * k..4 * k + 4].try_into().expect("4 bytes"),
        ))
    })
}

/// Bytes in memory.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Source for Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], Damaged> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| {
                Damaged(format!(
                    "the file ends early (at byte {})",
                    self.bytes.len()
                ))
            })?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn left(&self) -> usize {
        self.bytes.len() - self.at
    }

    fn pieces(&mut self, n: usize, _unit: usize, f: &mut dyn FnMut(&[u8])) -> Result<(), Damaged> {
        f(self.take(n)?);
        Ok(())
    }
}

/// Bytes of a file of a known length, read in order through one buffer and checksummed (CRC-32) as they come.
struct Stream<R> {
    inner: R,
    buf: Vec<u8>,
    /// The buffered bytes not handed out yet: `buf[start..end]`.
    start: usize,
    end: usize,
    /// Bytes of the file not handed out yet.
    left: usize,
    crc: crc32fast::Hasher,
    /// Bytes read from the file.
    read: u64,
    /// Why reading stopped early, if it did.
    failed: Option<std::io::Error>,
}

/// The stream's buffer: a multiple of every unit a list uses (1, 4, 8, 12, 16 bytes).
const STREAM_BUFFER: usize = 48 << 15;

impl<R: std::io::Read> Stream<R> {
    /// A stream of `len` bytes through a buffer of `buffer` bytes (a multiple of 48).
    fn new(inner: R, len: u64, buffer: usize) -> Self {
        debug_assert!(buffer > 0 && buffer % 48 == 0);
        Self {
            inner,
            buf: vec![0; buffer],
            start: 0,
            end: 0,
            left: usize::try_from(len).unwrap_or(usize::MAX),
            crc: crc32fast::Hasher::new(),
            read: 0,
            failed: None,
        }
    }

    /// Reads until `n` bytes are buffered (or the file ends: `false`).
    fn fill(&mut self, n: usize) -> bool {
        if self.end - self.start >= n {
            return true;
        }
        self.buf.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        if self.buf.len() < n {
            self.buf.resize(n, 0);
        }
        while self.end < n {
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => return false,
                Ok(k) => {
                    self.crc.update(&self.buf[self.end..self.end + k]);
                    self.read += k as u64;
                    self.end += k;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.failed = Some(e);
                    return false;
                }
            }
        }
        true
    }

    fn ended(&self) -> Damaged {
        match &self.failed {
            Some(e) => Damaged(format!("reading it failed: {e}")),
            None => Damaged(format!("the file ends early (at byte {})", self.read)),
        }
    }

    /// Reads the rest of the file: its length and CRC-32 as read, or why reading failed.
    fn finish(mut self) -> Result<(u64, u32), std::io::Error> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        self.start = 0;
        self.end = 0;
        while self.fill(self.buf.len()) {
            self.end = 0;
        }
        match self.failed {
            Some(e) => Err(e),
            None => Ok((self.read, self.crc.finalize())),
        }
    }
}

impl<R: std::io::Read> Source for Stream<R> {
    fn take(&mut self, n: usize) -> Result<&[u8], Damaged> {
        if n > self.left || !self.fill(n) {
            return Err(self.ended());
        }
        let s = &self.buf[self.start..self.start + n];
        self.start += n;
        self.left -= n;
        Ok(s)
    }

    fn left(&self) -> usize {
        self.left
    }

    fn pieces(
        &mut self,
        mut n: usize,
        unit: usize,
        f: &mut dyn FnMut(&[u8]),
    ) -> Result<(), Damaged> {
        if n > self.left {
            return Err(self.ended());
        }
        let most = (self.buf.len() / unit).max(1) * unit;
        while n > 0 {
            let want = n.min(most);
            if !self.fill(want) {
                return Err(self.ended());
            }
            f(&self.buf[self.start..self.start + want]);
            self.start += want;
            self.left -= want;
            n -= want;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::dictionary::TermSource;
    use crate::store::load::{DataFormat, Loader, NoProgress};

    fn store() -> Store {
        let mut loader = Loader::new();
        loader
            .load_reader(
                "t",
                "PREFIX : <http://e/>\n:a :p :b , \"é\"@fr , <<( :a :p :b )>> . _:x :q 1 . :g { :a :p :c }\n"
                    .as_bytes(),
                DataFormat::Trig,
                None,
                &NoProgress,
            )
            .unwrap();
        loader.finish()
    }

    fn rules() -> Vec<RuleText> {
        vec![
            RuleText {
                id: "r1".to_owned(),
                origin: Origin::File {
                    path: "rules.rq".into(),
                    offset: 5,
                    prologue: 2,
                },
                language: Language::Sparql,
                text: "CONSTRUCT { ?a <http://e/q> ?b } WHERE { ?a <http://e/p> ?b }".to_owned(),
            },
            RuleText {
                id: "http://e/s".to_owned(),
                origin: Origin::Stored {
                    subject: "http://e/s".to_owned(),
                    graph: Some("http://e/g".to_owned()),
                },
                language: Language::JsonLd,
                text: "{}".to_owned(),
            },
        ]
    }

    #[test]
    fn a_snapshot_decodes_to_what_was_encoded() {
        let mut store = store();
        let mut overlay = Overlay::new();
        let q = store.dict.intern_iri("http://e/q");
        let a = store.dict.lookup_iri("http://e/a").unwrap();
        overlay.add(TermId::DEFAULT_GRAPH, vec![[a, q, a]]);
        let bytes = encode(&store, &overlay, &rules());
        let back = decode(&bytes, &[]).unwrap();
        assert_eq!(back.store.dict.to_parts(), store.dict.to_parts());
        assert_eq!(back.store.dict.lookup_iri("http://e/q"), Some(q));
        assert_eq!(back.store.prefixes, store.prefixes);
        let graphs = |s: &QuadStore| {
            s.graphs()
                .map(|(g, i)| (g, i.triples().to_vec()))
                .collect::<Vec<_>>()
        };
        assert_eq!(graphs(&back.store.quads), graphs(&store.quads));
        assert!(back.overlay.contains(TermId::DEFAULT_GRAPH, [a, q, a]));
        assert_eq!(back.overlay.len(), 1);
        assert_eq!(back.rules.len(), 2);
        assert_eq!(back.rules[1].origin, rules()[1].origin);
        assert_eq!(back.rules[0].origin, rules()[0].origin);
        // The same bytes again: encoding is deterministic.
        assert_eq!(encode(&back.store, &back.overlay, &back.rules), bytes);
    }

    /// A sink that takes `room` bytes, then fails as a full disk does.
    struct Full {
        room: usize,
        taken: Vec<u8>,
    }

    impl Write for Full {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            if self.taken.len() + b.len() > self.room {
                return Err(io::Error::new(io::ErrorKind::StorageFull, "no room"));
            }
            self.taken.extend_from_slice(b);
            Ok(b.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_snapshot_written_through_the_buffer_counts_its_bytes_and_checksum_and_a_sink_error_is_returned()
     {
        let mut store = store();
        let mut overlay = Overlay::new();
        let q = store.dict.intern_iri("http://e/q");
        let a = store.dict.lookup_iri("http://e/a").unwrap();
        // More derived triples than the writer's buffer holds, in two runs merged as they are written.
        let n = WRITE_BUFFER / 12 + 1000;
        let mut many: Vec<Triple> = (0..n)
            .map(|i| [store.dict.intern_iri(&format!("http://e/s{i}")), q, a])
            .collect();
        many.sort_unstable();
        let (odd, even): (Vec<Triple>, Vec<Triple>) = many.iter().partition(|t| t[0].0 % 2 == 1);
        overlay.add(TermId::DEFAULT_GRAPH, even);
        overlay.add(TermId::DEFAULT_GRAPH, odd);
        let written = write(
            Full {
                room: usize::MAX,
                taken: Vec::new(),
            },
            &store,
            &overlay,
            &rules(),
        )
        .unwrap();
        let bytes = written.out.taken;
        assert_eq!(written.bytes, bytes.len() as u64);
        assert_eq!(written.crc32, crc32fast::hash(&bytes));
        assert!(bytes.len() > WRITE_BUFFER);
        let back = decode(&bytes, &[]).unwrap();
        assert_eq!(back.overlay.graph_triples(TermId::DEFAULT_GRAPH), many);
        let failed = write(
            Full {
                room: bytes.len() / 2,
                taken: Vec::new(),
            },
            &store,
            &overlay,
            &rules(),
        );
        assert_eq!(
            failed.map(|w| w.bytes).unwrap_err().kind(),
            io::ErrorKind::StorageFull
        );
    }

    #[test]
    fn a_snapshot_streamed_through_a_small_buffer_decodes_as_in_memory_with_its_length_and_checksum()
     {
        let mut store = store();
        let mut overlay = Overlay::new();
        let q = store.dict.intern_iri("http://e/q");
        let a = store.dict.lookup_iri("http://e/a").unwrap();
        overlay.add(TermId::DEFAULT_GRAPH, vec![[a, q, a]]);
        // A rule far into a large rule file: its offset is past the snapshot's own length.
        let mut rules = rules();
        rules[0].origin = Origin::File {
            path: "rules.rq".into(),
            offset: 1 << 33,
            prologue: 1 << 20,
        };
        let bytes = encode(&store, &overlay, &rules);
        let len = bytes.len() as u64;
        let whole = decode(&bytes, &[]).unwrap();
        assert_eq!(whole.rules[0].origin, rules[0].origin);
        // Buffers smaller than one list, than one string, and larger than the file.
        for buffer in [48, 96, 480, 48 * 1024] {
            let streamed = stream_through(&bytes[..], len, buffer).unwrap();
            assert_eq!(streamed.bytes, len, "buffer {buffer}");
            assert_eq!(streamed.crc32, crc32fast::hash(&bytes), "buffer {buffer}");
            let back = streamed.decode(&[], Orders::All).unwrap();
            assert_eq!(back.store.dict.to_parts(), whole.store.dict.to_parts());
            assert_eq!(back.store.prefixes, whole.store.prefixes);
            assert_eq!(
                encode(&back.store, &back.overlay, &back.rules),
                bytes,
                "buffer {buffer}"
            );
        }
        // Cut short: what was read is counted, and it does not decode.
        let streamed = stream_through(&bytes[..bytes.len() - 5], len, 96).unwrap();
        assert_eq!(streamed.bytes, len - 5);
        let e = streamed.decode(&[], Orders::All).err().unwrap();
        assert!(e.0.contains("ends early"), "{e:?}");
        // Longer than the manifest says: the extra bytes are read and counted, and refused.
        let mut longer = bytes.clone();
        longer.extend_from_slice(b"tail");
        let streamed = stream_through(&longer[..], len, 96).unwrap();
        assert_eq!(streamed.bytes, len + 4);
        assert_eq!(streamed.crc32, crc32fast::hash(&longer));
    }

    #[test]
    fn a_snapshot_or_delta_whose_triple_names_the_default_graph_id_as_a_term_is_refused() {
        let mut store = store();
        let q = store.dict.intern_iri("http://e/q");
        let a = store.dict.lookup_iri("http://e/a").unwrap();
        for place in 0..3 {
            let mut t = [a, q, a];
            t[place] = TermId::DEFAULT_GRAPH;
            let mut overlay = Overlay::new();
            overlay.add(TermId::DEFAULT_GRAPH, vec![t]);
            let bytes = encode(&store, &overlay, &rules());
            assert_eq!(
                decode(&bytes, &[]).err(),
                Some(Damaged("the derived quads are damaged".to_owned())),
                "{t:?}"
            );
            // The same triple added by a delta to a sound snapshot.
            let sound = encode(&store, &Overlay::new(), &rules());
            let delta = encode_delta(&Delta {
                dict: store.dict.tail_since(store.dict.counts()),
                prefixes: store.prefixes.clone(),
                asserted: (Vec::new(), vec![[TermId::DEFAULT_GRAPH, t[0], t[1], t[2]]]),
                derived: (Vec::new(), Vec::new()),
            });
            assert!(decode(&sound, &[delta.out]).is_err(), "{t:?}");
        }
    }

    #[test]
    fn a_snapshot_whose_dictionary_does_not_start_at_the_first_id_is_refused() {
        // IRIs only: no entry of the dictionary names another by id, so it decodes whatever its base.
        let bytes = encode(&crate::state::tests::store(), &Overlay::new(), &rules());
        // The base follows the dictionary's four length-prefixed lists (after the magic line and the version).
        let mut at = MAGIC.len() + 4;
        for width in [1, 8, 1, 8] {
            let n = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
            at += 8 + n * width;
        }
        let base = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        let mut moved = bytes.clone();
        moved[at..at + 4].copy_from_slice(&(base + 1000).to_le_bytes());
        let e = decode(&moved, &[]).err().expect("refused");
        assert!(e.0.contains("does not start at the first id"), "{e:?}");
    }

    #[test]
    fn a_damaged_snapshot_is_refused_not_misread() {
        let bytes = encode(&store(), &Overlay::new(), &rules());
        assert!(decode(&bytes[..bytes.len() - 3], &[]).is_err());
        assert!(decode(&bytes[..40], &[]).is_err());
        let mut other = bytes.clone();
        other[16] = 9;
        let e = decode(&other, &[]).err().unwrap();
        assert!(e.0.contains("format 9"), "{e:?}");
        // Every single-byte change, and every four bytes zeroed (an id, a count, the dictionary's base), either
        // decodes to something valid — every term its quads name can be read — or is refused; never a panic.
        let mut changed: Vec<Vec<u8>> = Vec::new();
        for at in 0..bytes.len() {
            let mut b = bytes.clone();
            b[at] ^= 0xA5;
            changed.push(b);
            let mut b = bytes.clone();
            for x in b.iter_mut().skip(at).take(4) {
                *x = 0;
            }
            changed.push(b);
        }
        for b in changed {
            let Ok(back) = decode(&b, &[]) else { continue };
            let dict = &back.store.dict;
            for q in back.store.quads.quads() {
                q.iter().for_each(|&t| {
                    let _ = (dict.get(t), dict.display(t), dict.to_oxrdf(t));
                });
            }
            for g in back.overlay.graph_ids() {
                let _ = (dict.get(g), dict.display(g));
                for t in back.overlay.runs_of(g).flatten().flatten() {
                    let _ = (dict.get(*t), dict.display(*t), dict.to_oxrdf(*t));
                }
            }
        }
    }

    #[test]
    fn line_tables_decode_to_what_was_encoded_and_damage_is_refused() {
        let q = |i: u32| [TermId(0), TermId(i), TermId(1), TermId(i)];
        let tables = vec![
            Some(LineTable::from_entries(vec![
                (9, q(2)),
                (3, q(1)),
                (u128::MAX, q(3)),
            ])),
            None,
            Some(LineTable::default()),
        ];
        let bytes = encode_lines(&tables);
        assert_eq!(decode_lines(&bytes, TermId(4)).unwrap(), tables);
        let (streamed, len, crc) = stream_lines(&bytes[..], bytes.len() as u64, TermId(4)).unwrap();
        assert_eq!(streamed.unwrap(), tables);
        assert_eq!((len, crc), (bytes.len() as u64, crc32fast::hash(&bytes)));
        // A quad naming a term past the dictionary, a cut file, bytes after the end, another file.
        assert!(decode_lines(&bytes, TermId(3)).is_err());
        assert!(decode_lines(&bytes[..bytes.len() - 1], TermId(4)).is_err());
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode_lines(&longer, TermId(4)).is_err());
        assert!(decode_lines(MAGIC, TermId(4)).is_err());
        // Hashes out of order.
        let mut swapped = bytes.clone();
        let first = LINES_MAGIC.len() + 4 + 4 + 1 + 8;
        swapped[first..first + 16].copy_from_slice(&u128::MAX.to_le_bytes());
        assert!(decode_lines(&swapped, TermId(4)).is_err());
    }
}
