//! This module defines the snapshot file of a state: the dictionary, the asserted quads in their three sorted
//! orders, the derived quads, the prefixes and the program's rule texts, in one little-endian binary file read
//! back by one sequential read. The file starts with a magic line and the format version; the manifest records
//! its length and CRC-32.

use std::path::PathBuf;

use crate::rules::source::RuleText;
use crate::rules::{Language, Origin};
use crate::store::dictionary::DictionaryParts;
use crate::store::{Dictionary, Overlay, QuadStore, Store, TermId, TripleIndex};

/// The first bytes of a snapshot.
pub const MAGIC: &[u8; 16] = b"REASONCTL-STATE\n";

/// The snapshot format this build writes and reads; any other is refused.
pub const VERSION: u32 = 1;

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

/// Encodes a store, its derived facts and the program's rule texts.
pub fn encode(store: &Store, overlay: &Overlay, rules: &[RuleText]) -> Vec<u8> {
    let mut w = Writer(Vec::with_capacity(
        store.heap_bytes() + overlay.len() * 12 + 1024,
    ));
    w.0.extend_from_slice(MAGIC);
    w.u32(VERSION);
    let d = store.dict.to_parts();
    w.bytes(&d.terms);
    w.u64s(&d.term_starts);
    w.bytes(&d.namespaces);
    w.u64s(&d.namespace_starts);
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
        for perm in [
            crate::store::Perm::Spo,
            crate::store::Perm::Pos,
            crate::store::Perm::Osp,
        ] {
            w.triples(index.keys(perm));
        }
    }
    let derived: Vec<TermId> = overlay.graph_ids().collect();
    w.u32(derived.len() as u32);
    for g in derived {
        let (spo, pos, osp) = overlay.graph_orders(g);
        w.u32(g.0);
        w.u64(spo.len() as u64);
        w.triples(&spo);
        w.u32s(&pos);
        w.u32s(&osp);
    }
    w.u32(rules.len() as u32);
    for r in rules {
        w.str(&r.id);
        w.u32(match r.language {
            Language::Sparql => 0,
            Language::JsonLd => 1,
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
            Origin::Stored { subject, graph } => {
                w.u32(1);
                w.str(subject);
                w.str(graph.as_deref().unwrap_or(""));
                w.u32(u32::from(graph.is_some()));
            }
        }
        w.str(&r.text);
    }
    w.0
}

/// Decodes a snapshot ([`encode`]'s bytes).
pub fn decode(bytes: &[u8]) -> Result<Snapshot, Damaged> {
    let mut r = Reader { bytes, at: 0 };
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
    let parts = DictionaryParts {
        terms: r.blob()?,
        term_starts: r.u64s()?,
        namespaces: r.blob()?,
        namespace_starts: r.u64s()?,
        base: r.u32()?,
        blank_nodes: r.u32()?,
    };
    let dict = Dictionary::from_parts(parts)
        .ok_or_else(|| Damaged("the dictionary does not decode".to_owned()))?;
    let end = dict.end().0;
    let mut prefixes = Vec::new();
    for _ in 0..r.u32()? {
        prefixes.push((r.string()?, r.string()?));
    }
    let in_range = |ts: &[[TermId; 3]]| ts.iter().flatten().all(|t| t.0 < end);
    let mut graphs = Vec::new();
    for _ in 0..r.u32()? {
        let g = TermId(r.u32()?);
        let n = r.len()?;
        let spo = r.triples(n)?;
        let pos = r.triples(n)?;
        let osp = r.triples(n)?;
        if g.0 >= end || !in_range(&spo) {
            return Err(Damaged(
                "an asserted quad names a term the dictionary lacks".to_owned(),
            ));
        }
        let index = TripleIndex::from_orders(spo, pos, osp)
            .ok_or_else(|| Damaged("an index of asserted quads is not sorted".to_owned()))?;
        graphs.push((g, index));
    }
    let mut overlay = Overlay::new();
    for _ in 0..r.u32()? {
        let g = TermId(r.u32()?);
        let n = r.len()?;
        let spo = r.triples(n)?;
        let pos = r.u32s(n)?;
        let osp = r.u32s(n)?;
        if g.0 >= end || !in_range(&spo) || !overlay.add_orders(g, spo, pos, osp) {
            return Err(Damaged("the derived quads are damaged".to_owned()));
        }
    }
    let mut rules = Vec::new();
    for _ in 0..r.u32()? {
        let id = r.string()?;
        let language = match r.u32()? {
            0 => Language::Sparql,
            1 => Language::JsonLd,
            _ => return Err(Damaged("a rule's language is unknown".to_owned())),
        };
        let origin = match r.u32()? {
            0 => Origin::File {
                path: PathBuf::from(r.string()?),
                offset: r.len()?,
                prologue: r.len()?,
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
            _ => return Err(Damaged("a rule's origin is unknown".to_owned())),
        };
        rules.push(RuleText {
            id,
            origin,
            language,
            text: r.string()?,
        });
    }
    if r.at != bytes.len() {
        return Err(Damaged("bytes follow the last section".to_owned()));
    }
    Ok(Snapshot {
        store: Store {
            dict,
            quads: QuadStore::from_indexes(graphs),
            prefixes,
        },
        overlay,
        rules,
    })
}

struct Writer(Vec<u8>);

impl Writer {
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.0.extend_from_slice(b);
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

    fn u32s(&mut self, v: &[u32]) {
        self.0.reserve(v.len() * 4);
        for x in v {
            self.u32(*x);
        }
    }

    fn triples(&mut self, ts: &[[TermId; 3]]) {
        self.0.reserve(ts.len() * 12);
        for t in ts {
            for id in t {
                self.u32(id.0);
            }
        }
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Damaged> {
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
            .filter(|&n| n <= self.bytes.len())
            .ok_or_else(|| Damaged(format!("a length of {n} is past the end of the file")))
    }

    fn blob(&mut self) -> Result<Vec<u8>, Damaged> {
        let n = self.len()?;
        Ok(self.take(n)?.to_vec())
    }

    fn string(&mut self) -> Result<String, Damaged> {
        let n = self.len()?;
        String::from_utf8(self.take(n)?.to_vec())
            .map_err(|_| Damaged("a text is not UTF-8".to_owned()))
    }

    fn u64s(&mut self) -> Result<Vec<u64>, Damaged> {
        let n = self.len()?;
        let raw = self.take(
            n.checked_mul(8)
                .ok_or_else(|| Damaged("a list is too long".to_owned()))?,
        )?;
        Ok(raw
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect())
    }

    fn u32s(&mut self, n: usize) -> Result<Vec<u32>, Damaged> {
        let raw = self.take(
            n.checked_mul(4)
                .ok_or_else(|| Damaged("a list is too long".to_owned()))?,
        )?;
        Ok(raw
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect())
    }

    fn triples(&mut self, n: usize) -> Result<Vec<[TermId; 3]>, Damaged> {
        let raw = self.take(
            n.checked_mul(12)
                .ok_or_else(|| Damaged("a list is too long".to_owned()))?,
        )?;
        Ok(raw
            .chunks_exact(12)
            .map(|c| {
                let id =
                    |k: usize| TermId(u32::from_le_bytes(c[k..k + 4].try_into().expect("4 bytes")));
                [id(0), id(4), id(8)]
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
        let back = decode(&bytes).unwrap();
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

    #[test]
    fn a_damaged_snapshot_is_refused_not_misread() {
        let bytes = encode(&store(), &Overlay::new(), &rules());
        assert!(decode(&bytes[..bytes.len() - 3]).is_err());
        assert!(decode(&bytes[..40]).is_err());
        let mut other = bytes.clone();
        other[16] = 9;
        let e = decode(&other).err().unwrap();
        assert!(e.0.contains("format 9"), "{e:?}");
        // Every single-byte change either decodes to something valid or is refused; never a panic.
        for at in (0..bytes.len()).step_by(7) {
            let mut b = bytes.clone();
            b[at] ^= 0xA5;
            let _ = decode(&b);
        }
    }
}
