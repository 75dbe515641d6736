//! This module defines the [`Dictionary`]: the two-way map between RDF terms and dense [`TermId`]s.
//!
//! Every term is encoded once into a byte arena (a tag byte, then the fields) and found again through a hash table
//! that stores only the 4-byte id and compares against the arena, so a term costs its encoded bytes plus about
//! 16 bytes. IRIs are split after their last `/` or `#`; the namespace part is interned separately, so the many
//! IRIs sharing a namespace store it once.

use std::fmt;
use std::hash::BuildHasher;

use hashbrown::{DefaultHashBuilder, HashTable};
use oxrdf::{BlankNode, GraphName, Literal, NamedNode, NamedOrBlankNode, Term};
use rayon::prelude::*;

use super::term::{Direction, Iri, LiteralKind, TermId, TermRef, Triple, well_known};

const TAG_DEFAULT_GRAPH: u8 = 0;
const TAG_IRI: u8 = 1;
const TAG_BLANK: u8 = 2;
const TAG_SIMPLE: u8 = 3;
const TAG_LANG: u8 = 4;
const TAG_TYPED: u8 = 5;
const TAG_TRIPLE: u8 = 6;

/// Byte strings stored back to back, each found again by content in O(1).
#[derive(Default, Clone)]
struct Interner {
    bytes: Vec<u8>,
    starts: Vec<u64>,
    table: HashTable<u32>,
    hasher: DefaultHashBuilder,
}

impl Interner {
    fn len(&self) -> usize {
        self.starts.len()
    }

    fn entry(&self, i: u32) -> &[u8] {
        entry(&self.bytes, &self.starts, i)
    }

    fn get(&self, key: &[u8]) -> Option<u32> {
        let hash = self.hasher.hash_one(key);
        self.table
            .find(hash, |&i| entry(&self.bytes, &self.starts, i) == key)
            .copied()
    }

    /// The entry's number, added if new.
    /// Room for `entries` more entries of `bytes` bytes in all.
    fn reserve(&mut self, entries: usize, bytes: usize) {
        let Self {
            bytes: b,
            starts,
            table,
            hasher,
        } = self;
        b.reserve(bytes);
        starts.reserve(entries);
        table.reserve(entries, |&j| hasher.hash_one(entry(b, starts, j)));
    }

    fn intern(&mut self, key: &[u8]) -> u32 {
        self.intern_if(key, || true).expect("accepted")
    }

    /// The entry's number, added if new, for a key whose hash (by this interner's hasher) is known.
    fn intern_hashed(&mut self, key: &[u8], hash: u64) -> u32 {
        debug_assert_eq!(hash, self.hasher.hash_one(key));
        self.intern_hashed_if(key, hash, || true).expect("accepted")
    }

    /// The entry's number; a new one is added only if `accept()` says so.
    fn intern_if(&mut self, key: &[u8], accept: impl FnOnce() -> bool) -> Option<u32> {
        let hash = self.hasher.hash_one(key);
        self.intern_hashed_if(key, hash, accept)
    }

    /// [`Interner::intern_if`] for a key whose hash is known.
    fn intern_hashed_if(
        &mut self,
        key: &[u8],
        hash: u64,
        accept: impl FnOnce() -> bool,
    ) -> Option<u32> {
        let Self {
            bytes,
            starts,
            table,
            hasher,
        } = self;
        if let Some(&i) = table.find(hash, |&i| entry(bytes, starts, i) == key) {
            return Some(i);
        }
        if !accept() {
            return None;
        }
        let i = u32::try_from(starts.len()).expect("more than 2^32 dictionary entries");
        starts.push(bytes.len() as u64);
        bytes.extend_from_slice(key);
        table.insert_unique(hash, i, |&j| hasher.hash_one(entry(bytes, starts, j)));
        Some(i)
    }

    fn heap_bytes(&self) -> usize {
        self.bytes.capacity() + self.starts.capacity() * 8 + self.table.capacity() * 5
    }

    /// An interner over entries stored back to back (`starts[i]` is where entry `i` begins in `bytes`): the
    /// hash table is rebuilt. `None` if the starts do not fit the bytes.
    fn from_parts(bytes: Vec<u8>, starts: Vec<u64>) -> Option<Self> {
        if !starts.is_sorted() || starts.last().is_some_and(|&s| s as usize > bytes.len()) {
            return None;
        }
        let n = u32::try_from(starts.len()).ok()?;
        let hasher = DefaultHashBuilder::default();
        // Hashed in parallel, inserted in order.
        let hashes: Vec<u64> = (0..n)
            .into_par_iter()
            .map(|i| hasher.hash_one(entry(&bytes, &starts, i)))
            .collect();
        // Room for more entries beside those given (the arrays a saved state is read into have it too): the
        // first terms a maintenance run adds then rehash nothing.
        let mut table = HashTable::with_capacity(starts.len() + room(starts.len()));
        for (i, hash) in (0..n).zip(hashes) {
            table.insert_unique(hash, i, |&j| hasher.hash_one(entry(&bytes, &starts, j)));
        }
        Some(Self {
            bytes,
            starts,
            table,
            hasher,
        })
    }
}

/// The room a dictionary of `n` entries is built or read with, for the terms a maintenance run adds (an eighth
/// more): capacity only, which costs no memory until it is written.
pub fn room(n: usize) -> usize {
    n / 8 + 4096
}

/// A dictionary as the bytes it is made of, for a saved state: every entry back to back, where each starts, for
/// the terms and for the IRI namespaces; the first id and the blank-node count.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DictionaryParts {
    /// The terms' encoded entries.
    pub terms: Vec<u8>,
    /// Where each term's entry starts.
    pub term_starts: Vec<u64>,
    /// The namespaces' entries.
    pub namespaces: Vec<u8>,
    /// Where each namespace starts.
    pub namespace_starts: Vec<u64>,
    /// The first id.
    pub base: u32,
    /// Blank nodes numbered so far.
    pub blank_nodes: u32,
}

/// A dictionary's [`DictionaryParts`], borrowed ([`Dictionary::parts`]).
pub struct PartsRef<'a> {
    /// The terms' encoded entries.
    pub terms: &'a [u8],
    /// Where each term's entry starts.
    pub term_starts: &'a [u64],
    /// The namespaces' entries.
    pub namespaces: &'a [u8],
    /// Where each namespace starts.
    pub namespace_starts: &'a [u64],
    /// The first id.
    pub base: u32,
    /// Blank nodes numbered so far.
    pub blank_nodes: u32,
}

impl DictionaryParts {
    /// How many terms and namespaces the parts hold (a [`Dictionary::tail_since`] mark).
    pub fn counts(&self) -> (usize, usize) {
        (self.term_starts.len(), self.namespace_starts.len())
    }

    /// Appends a [`Dictionary::tail_since`] taken at these parts' counts.
    pub fn append(&mut self, tail: DictionaryParts) {
        let (t, n) = (self.terms.len() as u64, self.namespaces.len() as u64);
        self.terms.extend_from_slice(&tail.terms);
        self.term_starts
            .extend(tail.term_starts.iter().map(|s| s + t));
        self.namespaces.extend_from_slice(&tail.namespaces);
        self.namespace_starts
            .extend(tail.namespace_starts.iter().map(|s| s + n));
        self.blank_nodes = tail.blank_nodes;
    }
}

fn entry<'a>(bytes: &'a [u8], starts: &[u64], i: u32) -> &'a [u8] {
    let i = i as usize;
    let start = starts[i] as usize;
    let end = starts.get(i + 1).map_or(bytes.len(), |&e| e as usize);
    &bytes[start..end]
}

/// The term dictionary: [`TermId`] ↔ RDF term, with RDF 1.2 triple terms and directional literals.
#[derive(Clone)]
pub struct Dictionary {
    terms: Interner,
    namespaces: Interner,
    /// The namespace interned last (most IRIs in a row share one): its text's length in `last_ns_text`, its id.
    last_ns: Option<u32>,
    last_ns_text: String,
    /// The id of this dictionary's first entry: 0, or the end of the dictionary it extends.
    base: u32,
    blank_nodes: u32,
    scratch: Vec<u8>,
    /// Whether an IRI holds a character N-Triples' IRIREF does not allow (only data read with `--lenient` can):
    /// writers then escape it ([`crate::store::term::Iri::write_escaped`]). Set by [`Dictionary::note_raw_iris`].
    raw_iris: bool,
}

impl Default for Dictionary {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Dictionary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dictionary")
            .field("terms", &self.len())
            .field("namespaces", &self.namespaces.len())
            .finish()
    }
}

impl Dictionary {
    /// An empty dictionary holding only the default-graph id and the [`well_known`] IRIs.
    pub fn new() -> Self {
        let mut dict = Self {
            terms: Interner::default(),
            namespaces: Interner::default(),
            last_ns: None,
            last_ns_text: String::new(),
            base: 0,
            blank_nodes: 0,
            scratch: Vec::new(),
            raw_iris: false,
        };
        dict.namespaces.intern(b"");
        let default_graph = dict.terms.intern(&[TAG_DEFAULT_GRAPH]);
        debug_assert_eq!(default_graph, TermId::DEFAULT_GRAPH.0);
        for &(id, iri) in well_known::ALL {
            let got = dict.intern_iri(iri);
            debug_assert_eq!(got, id, "{iri}");
        }
        dict
    }

    /// Room for `terms` more terms of about `bytes` bytes in all (their encoded forms), so a bulk of new terms
    /// does not grow the dictionary by doubling.
    pub fn reserve(&mut self, terms: usize, bytes: usize) {
        self.terms.reserve(terms, bytes);
    }

    /// An empty dictionary that extends `main`: its ids and blank nodes continue where `main`'s end, so the two
    /// never collide. A query's computed terms live in one; `main` stays shared and unchanged. Made without an
    /// allocation (its namespaces, the empty one included, are interned as its IRIs need them): the dataflow
    /// engine makes one per row it filters.
    pub fn extending(main: &Dictionary) -> Self {
        Self {
            terms: Interner::default(),
            namespaces: Interner::default(),
            last_ns: None,
            last_ns_text: String::new(),
            base: main.end().0,
            blank_nodes: main.blank_nodes,
            scratch: Vec::new(),
            raw_iris: false,
        }
    }

    /// The bytes this dictionary is made of ([`Dictionary::from_parts`] rebuilds it).
    pub fn to_parts(&self) -> DictionaryParts {
        let p = self.parts();
        DictionaryParts {
            terms: p.terms.to_vec(),
            term_starts: p.term_starts.to_vec(),
            namespaces: p.namespaces.to_vec(),
            namespace_starts: p.namespace_starts.to_vec(),
            base: p.base,
            blank_nodes: p.blank_nodes,
        }
    }

    /// The bytes this dictionary is made of, borrowed: what [`Dictionary::to_parts`] copies.
    pub fn parts(&self) -> PartsRef<'_> {
        PartsRef {
            terms: &self.terms.bytes,
            term_starts: &self.terms.starts,
            namespaces: &self.namespaces.bytes,
            namespace_starts: &self.namespaces.starts,
            base: self.base,
            blank_nodes: self.blank_nodes,
        }
    }

    /// How many terms and namespaces it holds: the mark [`Dictionary::tail_since`] takes.
    pub fn counts(&self) -> (usize, usize) {
        (self.terms.len(), self.namespaces.len())
    }

    /// The entries added since it held `counts` terms and namespaces, as parts whose starts count from the
    /// first of them ([`DictionaryParts::append`] puts them back after the parts they extend).
    pub fn tail_since(&self, (terms, namespaces): (usize, usize)) -> DictionaryParts {
        let tail = |i: &Interner, from: usize| -> (Vec<u8>, Vec<u64>) {
            let at = i.starts.get(from).map_or(i.bytes.len() as u64, |&s| s);
            (
                i.bytes[at as usize..].to_vec(),
                i.starts[from.min(i.starts.len())..]
                    .iter()
                    .map(|s| s - at)
                    .collect(),
            )
        };
        let (terms, term_starts) = tail(&self.terms, terms);
        let (namespaces, namespace_starts) = tail(&self.namespaces, namespaces);
        DictionaryParts {
            terms,
            term_starts,
            namespaces,
            namespace_starts,
            base: self.base,
            blank_nodes: self.blank_nodes,
        }
    }

    /// The dictionary [`Dictionary::to_parts`] gave; `None` if the parts are not one (a damaged state).
    pub fn from_parts(parts: DictionaryParts) -> Option<Self> {
        let terms = Interner::from_parts(parts.terms, parts.term_starts)?;
        let namespaces = Interner::from_parts(parts.namespaces, parts.namespace_starts)?;
        // Every entry must decode: a tag the reader knows, and references inside the dictionary.
        let dict = Self {
            terms,
            namespaces,
            last_ns: None,
            last_ns_text: String::new(),
            base: parts.base,
            blank_nodes: parts.blank_nodes,
            scratch: Vec::new(),
            raw_iris: false,
        };
        dict.is_well_formed().then_some(dict)
    }

    /// Whether every entry decodes to a term: known tags, long enough, UTF-8 text (a language tag and its
    /// lexical form each whole), ids in range and naming the kind of term they must (a datatype an IRI; a triple
    /// term's subject an IRI or blank node, its predicate an IRI, each part an earlier entry, so none contains
    /// itself).
    fn is_well_formed(&self) -> bool {
        let ids = self.base..self.end().0;
        let namespaces = self.namespaces.len() as u32;
        let tag_of = |id: u32| -> Option<u8> {
            ids.contains(&id)
                .then(|| self.terms.entry(id - self.base).first().copied())
                .flatten()
        };
        let utf8 = |b: &[u8]| std::str::from_utf8(b).is_ok();
        (0..self.terms.len() as u32).into_par_iter().all(|i| {
            let bytes = self.terms.entry(i);
            let Some((&tag, rest)) = bytes.split_first() else {
                return false;
            };
            let id_at = |at: usize| rest.get(at..at + 4).map(read_u32);
            match tag {
                TAG_DEFAULT_GRAPH => rest.is_empty(),
                TAG_IRI => id_at(0).is_some_and(|ns| ns < namespaces) && utf8(&rest[4..]),
                TAG_BLANK => rest.len() == 4,
                TAG_SIMPLE => utf8(rest),
                TAG_LANG => lang_span(rest)
                    .is_some_and(|(start, end)| utf8(&rest[start..end]) && utf8(&rest[end..])),
                TAG_TYPED => {
                    id_at(0).is_some_and(|d| tag_of(d) == Some(TAG_IRI)) && utf8(&rest[4..])
                }
                TAG_TRIPLE => {
                    let own = self.base + i;
                    let part = |k: usize, kinds: &[u8]| {
                        id_at(4 * k).is_some_and(|t| {
                            t < own && tag_of(t).is_some_and(|tag| kinds.contains(&tag))
                        })
                    };
                    rest.len() == 12
                        && part(0, &[TAG_IRI, TAG_BLANK])
                        && part(1, &[TAG_IRI])
                        && part(
                            2,
                            &[
                                TAG_IRI, TAG_BLANK, TAG_SIMPLE, TAG_LANG, TAG_TYPED, TAG_TRIPLE,
                            ],
                        )
                }
                _ => false,
            }
        }) && (0..namespaces).all(|i| utf8(self.namespaces.entry(i)))
    }

    /// How many ids are in use (the default graph included).
    pub fn len(&self) -> usize {
        self.terms.len()
    }

    /// The first id this dictionary hands out.
    pub fn base(&self) -> TermId {
        TermId(self.base)
    }

    /// One past the last id in use.
    pub fn end(&self) -> TermId {
        TermId(self.base + self.terms.len() as u32)
    }

    /// Whether `id` is one of this dictionary's (not of the one it extends).
    pub fn owns(&self, id: TermId) -> bool {
        id.0 >= self.base && id.0 < self.end().0
    }

    /// How many blank nodes have been numbered (this dictionary's and the one it extends).
    pub fn blank_count(&self) -> u32 {
        self.blank_nodes
    }

    /// Whether the dictionary holds nothing but its reserved entries.
    pub fn is_empty(&self) -> bool {
        self.len() <= 1 + well_known::ALL.len()
    }

    /// Approximate heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.terms.heap_bytes() + self.namespaces.heap_bytes()
    }

    /// Decodes an id. Panics on an id this dictionary did not hand out.
    pub fn get(&self, id: TermId) -> TermRef<'_> {
        let bytes = self.terms.entry(id.0 - self.base);
        let (&tag, rest) = bytes.split_first().expect("empty dictionary entry");
        match tag {
            TAG_DEFAULT_GRAPH => TermRef::DefaultGraph,
            TAG_IRI => {
                let ns = self.namespaces.entry(read_u32(rest));
                TermRef::Iri(Iri {
                    ns: utf8(ns),
                    local: utf8(&rest[4..]),
                })
            }
            TAG_BLANK => TermRef::Blank(read_u32(rest)),
            TAG_SIMPLE => TermRef::Literal {
                lexical: utf8(rest),
                kind: LiteralKind::Simple,
            },
            TAG_LANG => {
                let direction = match rest[0] {
                    1 => Some(Direction::Ltr),
                    2 => Some(Direction::Rtl),
                    _ => None,
                };
                let (start, end) = lang_span(rest).expect("a language tag the dictionary wrote");
                TermRef::Literal {
                    lexical: utf8(&rest[end..]),
                    kind: LiteralKind::Lang {
                        tag: utf8(&rest[start..end]),
                        direction,
                    },
                }
            }
            TAG_TYPED => TermRef::Literal {
                lexical: utf8(&rest[4..]),
                kind: LiteralKind::Typed(TermId(read_u32(rest))),
            },
            TAG_TRIPLE => TermRef::Triple([
                TermId(read_u32(rest)),
                TermId(read_u32(&rest[4..])),
                TermId(read_u32(&rest[8..])),
            ]),
            _ => unreachable!("unknown dictionary tag {tag}"),
        }
    }

    /// Interns an IRI given as its full text.
    pub fn intern_iri(&mut self, iri: &str) -> TermId {
        let (ns, local) = split_iri(iri);
        self.intern_iri_parts(ns, local)
    }

    /// Interns an IRI given as the two parts [`Iri`] holds (`ns` as another dictionary split it).
    pub fn intern_iri_parts(&mut self, ns: &str, local: &str) -> TermId {
        self.iri_key(ns, local);
        self.intern_scratch()
    }

    /// Interns an IRI, asking `valid` first if the dictionary has not seen it; `None` (and nothing interned)
    /// when `valid` refuses it.
    pub fn intern_iri_if(&mut self, iri: &str, valid: impl FnOnce(&str) -> bool) -> Option<TermId> {
        let (ns, local) = split_iri(iri);
        self.iri_key(ns, local);
        self.terms
            .intern_if(&self.scratch, || valid(iri))
            .map(|i| TermId(self.base + i))
    }

    /// Puts the key of IRI `ns` + `local` in `scratch` (interning the namespace).
    fn iri_key(&mut self, ns: &str, local: &str) {
        let ns_id = match self.last_ns {
            Some(id) if self.last_ns_text == ns => id,
            _ => {
                let id = self.namespaces.intern(ns.as_bytes());
                self.last_ns = Some(id);
                self.last_ns_text.clear();
                self.last_ns_text.push_str(ns);
                id
            }
        };
        self.scratch.clear();
        self.scratch.push(TAG_IRI);
        self.scratch.extend_from_slice(&ns_id.to_le_bytes());
        self.scratch.extend_from_slice(local.as_bytes());
    }

    /// Notes whether some IRI holds a character IRIREF does not allow, which writers must then escape: what data
    /// read with `--lenient` may hold (the strict parsers, the rule parsers and IRI() refuse such IRIs). A scan
    /// of every IRI the dictionary holds, run once after such a load.
    pub fn note_raw_iris(&mut self) {
        self.raw_iris = (self.base..self.end().0).any(|i| match self.get(TermId(i)) {
            TermRef::Iri(iri) => iri.needs_escaping(),
            _ => false,
        });
    }

    /// Notes the raw IRIs of `other`, whose terms were interned into this dictionary (a change set's).
    pub fn take_raw_iris_of(&mut self, other: &Dictionary) {
        self.raw_iris |= other.raw_iris;
    }

    /// The id of an IRI, if the dictionary has seen it.
    pub fn lookup_iri(&self, iri: &str) -> Option<TermId> {
        let (ns, local) = split_iri(iri);
        self.lookup_iri_parts(ns, local)
    }

    /// The id of an IRI given as the two parts [`Iri`] holds, if the dictionary has seen it.
    fn lookup_iri_parts(&self, ns: &str, local: &str) -> Option<TermId> {
        let ns_id = self.namespaces.get(ns.as_bytes())?;
        let mut key = Vec::with_capacity(5 + local.len());
        key.push(TAG_IRI);
        key.extend_from_slice(&ns_id.to_le_bytes());
        key.extend_from_slice(local.as_bytes());
        self.terms.get(&key).map(|i| TermId(self.base + i))
    }

    /// The id here of each of `other`'s terms, in `other`'s order, where this dictionary holds the term. A blank
    /// node of `other` is never held: read apart, it is another node. (A literal's datatype and a triple term's
    /// parts are numbered before it in `other`, as the loader interns them; one that is not is not held.)
    pub fn ids_of(&self, other: &Dictionary) -> Vec<Option<TermId>> {
        let mut ids: Vec<Option<TermId>> = Vec::with_capacity(other.len());
        for i in 0..other.len() as u32 {
            let id = match other.get(TermId(other.base + i)) {
                TermRef::DefaultGraph => Some(TermId::DEFAULT_GRAPH),
                TermRef::Iri(iri) => self.lookup_iri_parts(iri.ns, iri.local),
                TermRef::Blank(_) => None,
                TermRef::Literal { lexical, kind } => match kind {
                    LiteralKind::Typed(dt) => (ids.get(dt.0.wrapping_sub(other.base) as usize))
                        .copied()
                        .flatten()
                        .and_then(|dt| self.lookup_literal(lexical, LiteralKind::Typed(dt))),
                    kind => self.lookup_literal(lexical, kind),
                },
                TermRef::Triple(t) => {
                    // A part is numbered before the triple term (as the loader interns them).
                    let part = |t: TermId| {
                        (ids.get(t.0.wrapping_sub(other.base) as usize))
                            .copied()
                            .flatten()
                    };
                    match t.map(part) {
                        [Some(s), Some(p), Some(o)] => self.lookup_triple([s, p, o]),
                        _ => None,
                    }
                }
            };
            ids.push(id);
        }
        ids
    }

    /// Whether some IRI the dictionary holds splits at `ns` (an IRI of that namespace can be in it).
    pub fn holds_namespace(&self, ns: &str) -> bool {
        self.namespaces.get(ns.as_bytes()).is_some()
    }

    /// The id of blank node number `n` (written `_:b{n}`), if the dictionary holds it.
    pub fn lookup_blank(&self, n: u32) -> Option<TermId> {
        let mut key = [TAG_BLANK, 0, 0, 0, 0];
        key[1..].copy_from_slice(&n.to_le_bytes());
        self.terms.get(&key).map(|i| TermId(self.base + i))
    }

    /// A blank node distinct from every other.
    pub fn new_blank_node(&mut self) -> TermId {
        let n = self.blank_nodes;
        self.blank_nodes += 1;
        self.scratch.clear();
        self.scratch.push(TAG_BLANK);
        self.scratch.extend_from_slice(&n.to_le_bytes());
        self.intern_scratch()
    }

    /// Interns a literal; an `xsd:string` datatype is stored as a simple literal.
    pub fn intern_literal(&mut self, lexical: &str, kind: LiteralKind<'_>) -> TermId {
        encode_literal(&mut self.scratch, lexical, kind);
        self.intern_scratch()
    }

    /// The id of a literal, if the dictionary has seen it.
    pub fn lookup_literal(&self, lexical: &str, kind: LiteralKind<'_>) -> Option<TermId> {
        let mut key = Vec::with_capacity(8 + lexical.len());
        encode_literal(&mut key, lexical, kind);
        self.terms.get(&key).map(|i| TermId(self.base + i))
    }

    /// Interns an RDF 1.2 triple term over already-interned parts.
    pub fn intern_triple(&mut self, [s, p, o]: Triple) -> TermId {
        self.scratch.clear();
        self.scratch.push(TAG_TRIPLE);
        for id in [s, p, o] {
            self.scratch.extend_from_slice(&id.0.to_le_bytes());
        }
        self.intern_scratch()
    }

    /// The id of a triple term, if the dictionary has seen it.
    pub fn lookup_triple(&self, [s, p, o]: Triple) -> Option<TermId> {
        let mut key = [TAG_TRIPLE; 13];
        for (i, id) in [s, p, o].into_iter().enumerate() {
            key[1 + 4 * i..5 + 4 * i].copy_from_slice(&id.0.to_le_bytes());
        }
        self.terms.get(&key).map(|i| TermId(self.base + i))
    }

    /// The ids of IRIs `ns` + `local(i)`, for `i < n`, in order: `main`'s where it holds the IRI, else this
    /// dictionary's (it extends `main`), interned now; the ids one [`Dictionary::lookup_iri`] in `main` and then
    /// [`Dictionary::intern_iri`] here per IRI would give. `local` writes the local part, which must hold no `/`
    /// or `#` (so that `ns` is where the IRI splits); `ns` must end with one.
    pub fn intern_iris_in(
        &mut self,
        main: &Dictionary,
        ns: &str,
        n: usize,
        local: impl Fn(usize, &mut Vec<u8>) + Sync,
    ) -> Vec<TermId> {
        let in_main = main.namespaces.get(ns.as_bytes());
        let here = self.namespaces.intern(ns.as_bytes());
        self.intern_keys(main, n, |i, for_main, key| {
            let ns_id = match (for_main, in_main) {
                (true, Some(id)) => id,
                (true, None) => return false,
                (false, _) => here,
            };
            key.push(TAG_IRI);
            key.extend_from_slice(&ns_id.to_le_bytes());
            let at = key.len();
            local(i, key);
            debug_assert!(
                !key[at..].contains(&b'/')
                    && !key[at..].contains(&b'#')
                    && ns.ends_with(['/', '#']),
                "an IRI that does not split at its namespace"
            );
            true
        })
    }

    /// The ids of triple terms `triple(i)`, for `i < n`, in order: `main`'s where it holds the term, else this
    /// dictionary's (it extends `main`), interned now; the ids one [`Dictionary::lookup_triple`] in `main` and then
    /// [`Dictionary::intern_triple`] here per term would give.
    pub fn intern_triples(
        &mut self,
        main: &Dictionary,
        n: usize,
        triple: impl Fn(usize) -> Triple + Sync,
    ) -> Vec<TermId> {
        self.intern_keys(main, n, |i, _, key| {
            key.push(TAG_TRIPLE);
            for id in triple(i) {
                key.extend_from_slice(&id.0.to_le_bytes());
            }
            true
        })
    }

    /// The ids of `n` terms whose keys `key(i, for_main, buf)` writes into `buf` (in `main`'s encoding when
    /// `for_main`, else in this dictionary's; `false` when `main` cannot hold the term): `main`'s id where it
    /// holds the term, else this dictionary's, interned in order. The lookups in `main` and the hashing run in
    /// parallel; only the insertions, in order, do not (many terms: a reifier and a triple term per derived fact).
    fn intern_keys(
        &mut self,
        main: &Dictionary,
        n: usize,
        key: impl Fn(usize, bool, &mut Vec<u8>) -> bool + Sync,
    ) -> Vec<TermId> {
        /// Terms looked up at a time (what is held per term until it is interned stays small).
        const CHUNK: usize = 1 << 16;
        let mut ids = Vec::with_capacity(n);
        let mut buf = Vec::new();
        for start in (0..n).step_by(CHUNK) {
            let end = n.min(start + CHUNK);
            let hasher = &self.terms.hasher;
            // Each term: `main`'s id, or the hash and length of its key here.
            let found: Vec<Result<TermId, (u64, u32)>> = (start..end)
                .into_par_iter()
                .map_init(Vec::new, |buf, i| {
                    buf.clear();
                    if key(i, true, buf)
                        && let Some(j) = main.terms.get(buf)
                    {
                        return Ok(TermId(main.base + j));
                    }
                    buf.clear();
                    key(i, false, buf);
                    Err((hasher.hash_one(&buf[..]), buf.len() as u32))
                })
                .collect();
            let (new, bytes) = (found.iter().filter_map(|f| f.err()))
                .fold((0, 0), |(n, b), (_, len)| (n + 1, b + len as usize));
            self.terms.reserve(new, bytes);
            for (i, f) in (start..end).zip(found) {
                ids.push(f.unwrap_or_else(|(hash, _)| {
                    buf.clear();
                    key(i, false, &mut buf);
                    TermId(self.base + self.terms.intern_hashed(&buf, hash))
                }));
            }
        }
        ids
    }

    fn intern_scratch(&mut self) -> TermId {
        TermId(self.base + self.terms.intern(&self.scratch))
    }

    /// Interns an oxrdf term; blank nodes are mapped by `blank`, which owns their scope (one input file, say).
    pub fn intern_term(
        &mut self,
        term: oxrdf::TermRef<'_>,
        blank: &mut impl FnMut(&mut Self, &str) -> TermId,
    ) -> TermId {
        match term {
            oxrdf::TermRef::NamedNode(n) => self.intern_iri(n.as_str()),
            oxrdf::TermRef::BlankNode(b) => blank(self, b.as_str()),
            oxrdf::TermRef::Literal(l) => self.intern_oxrdf_literal(l),
            oxrdf::TermRef::Triple(t) => {
                let s = self.intern_term(t.subject.as_ref().into(), blank);
                let p = self.intern_iri(t.predicate.as_str());
                let o = self.intern_term(t.object.as_ref(), blank);
                self.intern_triple([s, p, o])
            }
        }
    }

    /// Interns an oxrdf literal.
    pub fn intern_oxrdf_literal(&mut self, l: oxrdf::LiteralRef<'_>) -> TermId {
        let kind = if let Some(tag) = l.language() {
            LiteralKind::Lang {
                tag,
                direction: l.direction().map(|d| match d {
                    oxrdf::BaseDirection::Ltr => Direction::Ltr,
                    oxrdf::BaseDirection::Rtl => Direction::Rtl,
                }),
            }
        } else {
            let datatype = l.datatype().as_str();
            if datatype == oxrdf::vocab::xsd::STRING.as_str() {
                LiteralKind::Simple
            } else {
                // Borrow checker: the datatype text lives in `l`, not in `self`.
                let dt = self.intern_iri(datatype);
                LiteralKind::Typed(dt)
            }
        };
        self.intern_literal(l.value(), kind)
    }
}

/// Anything that decodes term ids: the dictionary, or a query's dictionary plus the terms it computed.
pub trait TermSource {
    /// Decodes an id.
    fn term(&self, id: TermId) -> TermRef<'_>;

    /// Whether an IRI may hold a character writers must escape ([`Dictionary::note_raw_iris`]).
    fn has_raw_iris(&self) -> bool {
        false
    }

    /// The term as an owned oxrdf term (for writers and messages). The default graph has no term form.
    fn to_oxrdf(&self, id: TermId) -> Option<Term> {
        Some(match self.term(id) {
            TermRef::DefaultGraph => return None,
            TermRef::Iri(iri) => Term::NamedNode(NamedNode::new_unchecked(iri.to_string())),
            TermRef::Blank(n) => Term::BlankNode(blank_node(n)),
            TermRef::Literal { lexical, kind } => Term::Literal(match kind {
                LiteralKind::Simple => Literal::new_simple_literal(lexical),
                LiteralKind::Lang {
                    tag,
                    direction: None,
                } => Literal::new_language_tagged_literal_unchecked(lexical, tag),
                LiteralKind::Lang {
                    tag,
                    direction: Some(d),
                } => Literal::new_directional_language_tagged_literal_unchecked(
                    lexical,
                    tag,
                    match d {
                        Direction::Ltr => oxrdf::BaseDirection::Ltr,
                        Direction::Rtl => oxrdf::BaseDirection::Rtl,
                    },
                ),
                LiteralKind::Typed(dt) => {
                    Literal::new_typed_literal(lexical, NamedNode::new_unchecked(self.iri_text(dt)))
                }
            }),
            TermRef::Triple([s, p, o]) => Term::Triple(Box::new(oxrdf::Triple::new(
                self.to_subject(s),
                NamedNode::new_unchecked(self.iri_text(p)),
                self.to_oxrdf(o)
                    .expect("default graph inside a triple term"),
            ))),
        })
    }

    /// The term as a subject (an IRI or blank node).
    fn to_subject(&self, id: TermId) -> NamedOrBlankNode {
        match self.to_oxrdf(id) {
            Some(Term::NamedNode(n)) => n.into(),
            Some(Term::BlankNode(b)) => b.into(),
            other => unreachable!("{other:?} is not a subject"),
        }
    }

    /// The graph name of a graph id.
    fn to_graph_name(&self, id: TermId) -> GraphName {
        match self.to_oxrdf(id) {
            None => GraphName::DefaultGraph,
            Some(Term::NamedNode(n)) => n.into(),
            Some(Term::BlankNode(b)) => b.into(),
            Some(other) => unreachable!("{other} is not a graph name"),
        }
    }

    /// The full text of an IRI id (allocates; for writers and messages).
    fn iri_text(&self, id: TermId) -> String {
        match self.term(id) {
            TermRef::Iri(iri) => iri.to_string(),
            other => unreachable!("{other:?} is not an IRI"),
        }
    }

    /// The N-Triples form of a term, for messages (`DEFAULT` for the default graph).
    fn display(&self, id: TermId) -> String {
        match self.to_oxrdf(id) {
            Some(term) => term.to_string(),
            None => "DEFAULT".to_owned(),
        }
    }

    /// One past the largest id this source decodes.
    fn end(&self) -> TermId;
}

impl TermSource for Dictionary {
    fn term(&self, id: TermId) -> TermRef<'_> {
        self.get(id)
    }

    fn end(&self) -> TermId {
        Dictionary::end(self)
    }

    fn has_raw_iris(&self) -> bool {
        self.raw_iris
    }
}

/// The blank node a dictionary number is written as.
pub fn blank_node(n: u32) -> BlankNode {
    BlankNode::new_unchecked(format!("b{n}"))
}

/// Splits an IRI after its last `/` or `#` (not counting a final one), the namespace first.
fn split_iri(iri: &str) -> (&str, &str) {
    let body = &iri.as_bytes()[..iri.len().saturating_sub(1)];
    match body.iter().rposition(|&b| b == b'/' || b == b'#') {
        Some(i) => iri.split_at(i + 1),
        None => ("", iri),
    }
}

/// The 16-bit length of a language tag that says its length follows in 32 bits.
const LONG_TAG: u16 = u16::MAX;

/// Where a language-tagged literal's tag starts and ends in its key after the tag byte (`rest`: the direction,
/// the tag's length, the tag, the lexical form); `None` if the key is too short for them.
fn lang_span(rest: &[u8]) -> Option<(usize, usize)> {
    let short = u16::from_le_bytes([*rest.get(1)?, *rest.get(2)?]);
    let (start, len): (usize, usize) = if short == LONG_TAG {
        let long = rest.get(3..7)?;
        (
            7,
            u32::from_le_bytes([long[0], long[1], long[2], long[3]]) as usize,
        )
    } else {
        (3, usize::from(short))
    };
    let end = start.checked_add(len)?;
    (end <= rest.len()).then_some((start, end))
}

fn encode_literal(out: &mut Vec<u8>, lexical: &str, kind: LiteralKind<'_>) {
    out.clear();
    match kind {
        LiteralKind::Simple | LiteralKind::Typed(well_known::XSD_STRING) => out.push(TAG_SIMPLE),
        LiteralKind::Lang { tag, direction } => {
            out.push(TAG_LANG);
            out.push(match direction {
                None => 0,
                Some(Direction::Ltr) => 1,
                Some(Direction::Rtl) => 2,
            });
            // The tag's length in 16 bits; from 65,535 bytes up, 0xFFFF and the length in 32 bits.
            match u16::try_from(tag.len()) {
                Ok(len) if len < LONG_TAG => out.extend_from_slice(&len.to_le_bytes()),
                _ => {
                    out.extend_from_slice(&LONG_TAG.to_le_bytes());
                    let len = u32::try_from(tag.len()).expect("a language tag under 4 GiB");
                    out.extend_from_slice(&len.to_le_bytes());
                }
            }
            out.extend_from_slice(tag.as_bytes());
        }
        LiteralKind::Typed(datatype) => {
            out.push(TAG_TYPED);
            out.extend_from_slice(&datatype.0.to_le_bytes());
        }
    }
    out.extend_from_slice(lexical.as_bytes());
}

fn read_u32(bytes: &[u8]) -> u32 {
    u32::from_le_bytes(bytes[..4].try_into().expect("4 bytes"))
}

fn utf8(bytes: &[u8]) -> &str {
    debug_assert!(
        std::str::from_utf8(bytes).is_ok(),
        "dictionary entry is not UTF-8"
    );
    // SAFETY: every text field of an entry was copied from a `&str`, and entries are split only at the field
    // boundaries the encoder wrote (tags, fixed-width ids, a length-prefixed language tag), so each slice
    // decoded here is exactly the bytes of one `&str`. This is the hottest decode path (sorting, writing,
    // filters), where re-validating every string costs more than the comparison it serves.
    unsafe { std::str::from_utf8_unchecked(bytes) }
}

/// One scope of blank-node labels (a source file, a body run), as [`Dictionary::intern_term`] takes it: a label
/// gets a fresh node the first time it is met and the same node after.
pub fn blank_scope() -> impl FnMut(&mut Dictionary, &str) -> TermId {
    blank_scope_with(hashbrown::HashMap::new())
}

/// [`blank_scope`], starting from the labels `seen` already gave nodes.
pub fn blank_scope_with(
    mut seen: hashbrown::HashMap<Box<str>, TermId>,
) -> impl FnMut(&mut Dictionary, &str) -> TermId {
    move |dict, label| {
        if let Some(&id) = seen.get(label) {
            return id;
        }
        let id = dict.new_blank_node();
        seen.insert(label.into(), id);
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn language_tags_of_any_length_are_kept_whole_and_read_back_from_the_parts() {
        let mut dict = Dictionary::new();
        // Around the 16-bit length, and past it (70,000 bytes were cut to 65,535 and no longer parsed).
        let tags: Vec<String> = [65_534usize, 65_535, 65_536, 70_000]
            .iter()
            .map(|&n| {
                let mut tag = format!("en{}", "-abcdefgh".repeat(n / 9 + 1))[..n].to_owned();
                if tag.ends_with('-') {
                    tag.replace_range(n - 1.., "x");
                }
                tag
            })
            .chain(["en".to_owned(), "de-CH".to_owned()])
            .collect();
        let ids: Vec<TermId> = tags
            .iter()
            .map(|tag| {
                dict.intern_literal(
                    "x",
                    LiteralKind::Lang {
                        tag,
                        direction: Some(Direction::Rtl),
                    },
                )
            })
            .collect();
        let back = Dictionary::from_parts(dict.to_parts()).expect("the parts decode");
        for (tag, &id) in tags.iter().zip(&ids) {
            for d in [&dict, &back] {
                let TermRef::Literal {
                    lexical,
                    kind:
                        LiteralKind::Lang {
                            tag: got,
                            direction,
                        },
                } = d.get(id)
                else {
                    panic!("not a language-tagged literal");
                };
                assert_eq!(
                    (lexical, got, direction),
                    ("x", tag.as_str(), Some(Direction::Rtl))
                );
            }
        }
    }

    #[test]
    fn terms_interned_in_bulk_get_the_ids_one_lookup_and_intern_at_a_time_give() {
        let mut main = Dictionary::new();
        let ns = "http://e.example/g/";
        let held = main.intern_iri(&format!("{ns}k3"));
        let [a, p] = ["http://e.example/a", "http://e.example/p"].map(|i| main.intern_iri(i));
        let held_triple = main.intern_triple([a, p, held]);
        // More than one chunk; names repeated within the batch; some held by `main`.
        let n = (1 << 16) + 100;
        let local = |i: usize| format!("k{}", i % 70_000);
        let triple = |i: usize| [a, p, if i % 3 == 0 { held } else { a }];
        let mut bulk = Dictionary::extending(&main);
        let iris = bulk.intern_iris_in(&main, ns, n, |i, out| {
            out.extend_from_slice(local(i).as_bytes());
        });
        let triples = bulk.intern_triples(&main, n, triple);
        let mut one = Dictionary::extending(&main);
        for (i, &id) in iris.iter().enumerate() {
            let iri = format!("{ns}{}", local(i));
            let one_id = main.lookup_iri(&iri);
            assert_eq!(id, one_id.unwrap_or_else(|| one.intern_iri(&iri)), "{iri}");
        }
        for (i, &id) in triples.iter().enumerate() {
            let t = triple(i);
            assert_eq!(
                id,
                main.lookup_triple(t)
                    .unwrap_or_else(|| one.intern_triple(t))
            );
        }
        assert_eq!(iris[3], held);
        assert_eq!(triples[0], held_triple);
        assert_eq!(bulk.len(), one.len());
        assert_eq!(bulk.lookup_iri(&format!("{ns}k5")), Some(iris[5]));
    }

    #[test]
    fn a_tail_appended_to_the_parts_it_extends_rebuilds_the_grown_dictionary() {
        let mut dict = Dictionary::new();
        dict.intern_iri("http://a.example/x");
        let before = dict.to_parts();
        let mark = dict.counts();
        dict.intern_iri("http://b.example/y");
        dict.intern_iri("http://a.example/z");
        dict.new_blank_node();
        let mut parts = before;
        parts.append(dict.tail_since(mark));
        assert_eq!(parts, dict.to_parts());
        let back = Dictionary::from_parts(parts).unwrap();
        assert_eq!(
            back.lookup_iri("http://b.example/y"),
            dict.lookup_iri("http://b.example/y")
        );
        // Nothing added: an empty tail.
        let empty = dict.tail_since(dict.counts());
        assert!(empty.terms.is_empty() && empty.term_starts.is_empty());
    }

    #[test]
    fn ids_of_another_dictionary_name_the_terms_held_here_and_never_its_blank_nodes() {
        let mut here = Dictionary::new();
        let [a, p] = ["http://e.example/a", "http://e.example/p"].map(|i| here.intern_iri(i));
        let dt = here.intern_iri("http://e.example/dt");
        let typed = here.intern_literal("1", LiteralKind::Typed(dt));
        let triple = here.intern_triple([a, p, typed]);
        let mut other = Dictionary::new();
        let b = other.new_blank_node();
        let o_a = other.intern_iri("http://e.example/a");
        let o_new = other.intern_iri("http://e.example/new");
        let o_p = other.intern_iri("http://e.example/p");
        let o_dt = other.intern_iri("http://e.example/dt");
        let o_typed = other.intern_literal("1", LiteralKind::Typed(o_dt));
        let o_other_dt = other.intern_iri("http://e.example/other");
        let o_unheld = other.intern_literal("1", LiteralKind::Typed(o_other_dt));
        let o_triple = other.intern_triple([o_a, o_p, o_typed]);
        let o_with_blank = other.intern_triple([b, o_p, o_a]);
        let ids = here.ids_of(&other);
        assert_eq!(ids.len(), other.len());
        let id = |t: TermId| ids[t.index()];
        assert_eq!(id(TermId::DEFAULT_GRAPH), Some(TermId::DEFAULT_GRAPH));
        assert_eq!(id(b), None);
        assert_eq!([id(o_a), id(o_p), id(o_dt)], [Some(a), Some(p), Some(dt)]);
        assert_eq!([id(o_new), id(o_other_dt), id(o_unheld)], [None; 3]);
        assert_eq!([id(o_typed), id(o_triple)], [Some(typed), Some(triple)]);
        assert_eq!(id(o_with_blank), None);
        // Looking up interns nothing.
        assert_eq!(here.len(), Dictionary::new().len() + 5);
    }

    #[test]
    fn well_known_iris_have_their_constant_ids() {
        let dict = Dictionary::new();
        for &(id, iri) in well_known::ALL {
            assert_eq!(dict.lookup_iri(iri), Some(id));
            assert!(matches!(dict.get(id), TermRef::Iri(i) if i.eq_str(iri)));
        }
    }

    #[test]
    fn interning_twice_gives_the_same_id_and_decodes_back() {
        let mut dict = Dictionary::new();
        let a = dict.intern_iri("http://example.org/a");
        let b = dict.intern_iri("http://example.org/b");
        assert_ne!(a, b);
        assert_eq!(dict.intern_iri("http://example.org/a"), a);
        assert_eq!(dict.iri_text(b), "http://example.org/b");
        let ns_only = dict.intern_iri("http://example.org/");
        assert_eq!(dict.iri_text(ns_only), "http://example.org/");
        let no_slash = dict.intern_iri("urn:isbn:0451450523");
        assert_eq!(dict.iri_text(no_slash), "urn:isbn:0451450523");
    }

    #[test]
    fn literals_keep_lexical_form_datatype_language_and_direction() {
        let mut dict = Dictionary::new();
        let mut blank = blank_scope();
        let cases = [
            Literal::new_simple_literal("hello"),
            Literal::new_typed_literal("01", oxrdf::vocab::xsd::INTEGER),
            Literal::new_typed_literal("1", oxrdf::vocab::xsd::INTEGER),
            Literal::new_language_tagged_literal_unchecked("chat", "fr"),
            Literal::new_directional_language_tagged_literal_unchecked(
                "chat",
                "fr",
                oxrdf::BaseDirection::Rtl,
            ),
        ];
        let ids: Vec<_> = cases
            .iter()
            .map(|l| dict.intern_term(l.as_ref().into(), &mut blank))
            .collect();
        let unique: std::collections::HashSet<_> = ids.iter().collect();
        assert_eq!(unique.len(), cases.len());
        for (l, id) in cases.iter().zip(&ids) {
            assert_eq!(dict.to_oxrdf(*id), Some(Term::Literal(l.clone())));
        }
        let typed_string = Literal::new_typed_literal("hello", oxrdf::vocab::xsd::STRING);
        assert_eq!(
            dict.intern_term(typed_string.as_ref().into(), &mut blank),
            ids[0]
        );
    }

    #[test]
    fn triple_terms_nest_and_blank_nodes_follow_their_scope() {
        let mut dict = Dictionary::new();
        let mut scope_a = blank_scope();
        let mut scope_b = blank_scope();
        let inner = oxrdf::Triple::new(
            BlankNode::new_unchecked("x"),
            NamedNode::new_unchecked("http://example.org/p"),
            Literal::new_simple_literal("v"),
        );
        let term = Term::Triple(Box::new(inner));
        let a1 = dict.intern_term(term.as_ref(), &mut scope_a);
        let a2 = dict.intern_term(term.as_ref(), &mut scope_a);
        let b1 = dict.intern_term(term.as_ref(), &mut scope_b);
        assert_eq!(a1, a2);
        assert_ne!(a1, b1, "a blank node label is local to its scope");
        let TermRef::Triple([s, _, _]) = dict.get(a1) else {
            panic!("not a triple term")
        };
        assert!(matches!(dict.get(s), TermRef::Blank(_)));
        assert_eq!(
            dict.lookup_triple(match dict.get(b1) {
                TermRef::Triple(t) => t,
                _ => unreachable!(),
            }),
            Some(b1)
        );
    }

    #[test]
    fn iri_text_order_ignores_the_namespace_split() {
        let mut dict = Dictionary::new();
        let a = dict.intern_iri("http://a.org/zz");
        let b = dict.intern_iri("http://a.org/z/a");
        let (TermRef::Iri(ia), TermRef::Iri(ib)) = (dict.get(a), dict.get(b)) else {
            unreachable!()
        };
        assert_eq!(ia.cmp_text(&ib), "http://a.org/zz".cmp("http://a.org/z/a"));
    }
}
