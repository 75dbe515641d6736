//! This module defines a cluster process's share of the data: which sources, and which line-aligned ranges of
//! an N-Triples or N-Quads file, it reads; what it tells the others about them; and the dictionary every process
//! builds alike from what all of them read.
//!
//! The sources are laid end to end and cut into `P` runs of about equal bytes; process `I` reads the `I`-th.
//! A plain N-Triples or N-Quads file is cut inside, just past a line break. A compressed one is cut between
//! blocks of decompressed lines, by where each block starts in the compressed bytes: every process that shares
//! it decompresses it from the start (and no further than its run), and parses only its blocks. Any other
//! source (another syntax, a pipe, stdin) goes whole to the process where it starts (stdin to process 0). The
//! shares are
//! contiguous and in source order, so building the dictionary share after share, each share's terms in the order
//! it met them, numbers blank nodes exactly as one process reading every source does (labels scoped per file,
//! across the cuts of a file): blank-node labels, the only ids output shows, come out the same.

use std::io;
use std::path::Path;

use hashbrown::HashMap;

use super::chunks::{self, merge_terms};
use super::{DataFormat, DataSource, LoadError, LoadOptions, LoadProgress, Loader, open};
use crate::codec::Codec;
use crate::store::dictionary::DictionaryParts;
use crate::store::{Dictionary, LiteralKind, Quad, Store, TermId, TermRef, well_known as wk};

/// One source, or one range of one, of a process's share.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Piece {
    /// The source's index in the list of sources.
    pub source: usize,
    /// The byte range of the file (a whole line at each end); `None`: the whole source.
    pub range: Option<(u64, u64)>,
    /// The file's codec, when it is compressed and cut: `range` is where, in its compressed bytes, the blocks
    /// of lines this piece takes start (every process reading the file decompresses it from the start, and
    /// parses only its blocks).
    pub blocks: Option<Codec>,
}

/// How a source is cut between processes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Cut {
    /// Not at all: it goes whole to one process.
    Whole,
    /// Just past line breaks (a plain N-Triples or N-Quads file).
    Lines,
    /// Between blocks of decompressed lines, by where each starts in the compressed file (a compressed
    /// N-Triples or N-Quads file, in this codec).
    Blocks(Codec),
}

/// How a source takes part in the cut: its size in bytes, and how it may be cut.
fn measure(source: &DataSource, options: &LoadOptions) -> Result<(u64, Cut), LoadError> {
    let DataSource::File(path) = source else {
        return Ok((0, Cut::Whole));
    };
    let unreadable = |source| LoadError::Unreadable {
        path: path.to_owned(),
        source,
    };
    // Only a regular file is opened here: opening a pipe would wait for its writer, on every process.
    let metadata = match std::fs::metadata(path) {
        Ok(m) if m.is_file() => m,
        Ok(_) => return Ok((0, Cut::Whole)),
        Err(_) => return open(path).map(|_| (0, Cut::Whole)),
    };
    let mut file = open(path)?;
    let lines = matches!(
        options.format.or_else(|| DataFormat::from_path(path)),
        Some(DataFormat::NTriples | DataFormat::NQuads)
    );
    // Compressed: told by its first bytes, else by its extension (as the loader tells it).
    let codec = super::head_codec(&mut file)
        .map_err(unreadable)?
        .or_else(|| Codec::of_path(path));
    let cut = match (lines, codec) {
        (false, _) => Cut::Whole,
        (true, None) => Cut::Lines,
        (true, Some(codec)) => Cut::Blocks(codec),
    };
    Ok((metadata.len(), cut))
}

/// The pieces process `process` of `processes` reads, in source order.
pub fn pieces(
    sources: &[DataSource],
    options: &LoadOptions,
    processes: usize,
    process: usize,
) -> Result<Vec<Piece>, LoadError> {
    let measured: Vec<(u64, Cut)> = (sources.iter())
        .map(|s| measure(s, options))
        .collect::<Result<_, _>>()?;
    let whole: u64 = measured.iter().map(|m| m.0).sum();
    let p = processes.max(1) as u128;
    // The process whose run holds byte `x` of the whole, and where run `q` starts.
    let owner = |x: u64| -> usize {
        if whole == 0 {
            0
        } else {
            ((x as u128 * p / whole as u128) as usize).min(processes - 1)
        }
    };
    let run_start = |q: usize| -> u64 { (whole as u128 * q as u128).div_ceil(p) as u64 };
    // Stdin is process 0's, and ahead of every file, or the shares would not follow the sources' order.
    if let Some(at) = sources
        .iter()
        .position(|s| matches!(s, DataSource::Stdin))
        .filter(|&i| i > 0)
    {
        return Err(LoadError::Unreadable {
            path: "-".into(),
            source: io::Error::other(format!(
                "in a cluster, standard input is read by process 0 and must be the first DATA source (it is \
                 source {}): put - first",
                at + 1
            )),
        });
    }
    let mut pieces = Vec::new();
    let mut offset = 0u64;
    for (i, (source, &(len, cut))) in sources.iter().zip(&measured).enumerate() {
        let first = if matches!(source, DataSource::Stdin) {
            0
        } else {
            owner(offset)
        };
        let last = if cut != Cut::Whole && len > 0 {
            owner(offset + len - 1)
        } else {
            first
        };
        if (first..=last).contains(&process) {
            if first == last {
                pieces.push(Piece {
                    source: i,
                    range: None,
                    blocks: None,
                });
            } else if let Cut::Blocks(codec) = cut {
                // Blocks that start in this process's run, the first process's from the file's start, the last
                // one's to its end.
                let from = if process == first {
                    0
                } else {
                    run_start(process) - offset
                };
                let to = if process == last {
                    u64::MAX
                } else {
                    run_start(process + 1) - offset
                };
                pieces.push(Piece {
                    source: i,
                    range: Some((from, to)),
                    blocks: Some(codec),
                });
            } else if let DataSource::File(path) = source {
                let range = cut_range(path, len, offset, (first, last, process), run_start)
                    .map_err(|source| LoadError::Unreadable {
                        path: path.clone(),
                        source,
                    })?;
                if range.0 < range.1 {
                    pieces.push(Piece {
                        source: i,
                        range: Some(range),
                        blocks: None,
                    });
                }
            }
        }
        offset += len;
    }
    Ok(pieces)
}

/// Process `me`'s range of the `len`-byte file at `offset` of the whole, which processes `first..=last` share:
/// from just past the first line break at or after its run's start (the file's first statement for `first`) to
/// where the next process's range starts (the file's end for `last`).
fn cut_range(
    path: &Path,
    len: u64,
    offset: u64,
    (first, last, me): (usize, usize, usize),
    run_start: impl Fn(usize) -> u64,
) -> io::Result<(u64, u64)> {
    let mut file = std::fs::File::open(path)?;
    let cut = |file: &mut std::fs::File, q: usize| -> io::Result<u64> {
        let at = run_start(q).saturating_sub(offset).clamp(1, len);
        chunks::line_end(file, at, len)
    };
    // The first part starts at the file's start (a byte-order mark is skipped when it is read).
    let start = if me == first { 0 } else { cut(&mut file, me)? };
    let end = if me == last {
        len
    } else {
        cut(&mut file, me + 1)?
    };
    Ok((start, end.max(start)))
}

/// Decompressed bytes per block of a compressed file's share (smaller in tests, so that small files make several).
const SHARE_BLOCK: usize = if cfg!(test) {
    1 << 12
} else {
    super::compressed::BLOCK
};

impl Loader {
    /// Loads one piece of a share: a whole source as [`Loader::load_source`] does, or a range of an N-Triples or
    /// N-Quads file (parsed in parallel, as a whole file is), keeping the labels of its blank nodes
    /// ([`Loader::take_labels`]) so that the other ranges of the file, read by other processes, meet the same
    /// nodes. A compressed file's piece: the blocks of lines that start in its range of compressed bytes. A
    /// piece holding a line that does not parse: the whole file is parsed sequentially, which reports the error
    /// at its line as always.
    pub fn load_piece(
        &mut self,
        source: &DataSource,
        piece: &Piece,
        options: &LoadOptions,
        progress: &dyn LoadProgress,
    ) -> Result<(), LoadError> {
        let (Some((start, end)), DataSource::File(path)) = (piece.range, source) else {
            return self.load_source(source, options, progress);
        };
        let format = match options.format.or_else(|| DataFormat::from_path(path)) {
            Some(f) => f,
            None => return Err(LoadError::UnknownFormat { path: path.clone() }),
        };
        let unreadable = |source| LoadError::Unreadable {
            path: path.clone(),
            source,
        };
        let mut file = open(path)?;
        let name = path.display().to_string();
        self.lenient = options.lenient;
        self.labels.get_or_insert_with(Vec::new);
        let loaded = if let Some(codec) = piece.blocks {
            drop(file);
            let blocks = (SHARE_BLOCK, Some((start, end)));
            self.load_compressed_lines(path, &name, (format, codec), blocks, progress)
        } else {
            let from = if start == 0 {
                chunks::first_statement(&mut file).map_err(unreadable)?
            } else {
                start
            };
            let ranges = chunks::ranges_within(
                &mut file,
                (from, end.max(from)),
                rayon::current_num_threads(),
                chunks::MIN_CHUNK,
            )
            .map_err(unreadable)?;
            progress.begin(&name, Some(end - start));
            let loaded = self.load_ranges(path, &name, format, &ranges, progress);
            progress.end();
            loaded
        };
        self.lenient = false;
        if loaded? {
            return Ok(());
        }
        // The error, as a sequential read of the whole file reports it.
        Loader::new().load_source(source, options, progress)?;
        Err(unreadable(io::Error::other(
            "a line break inside a term: the file cannot be cut into shares at line breaks (give it to one \
             process, or run on one process)",
        )))
    }

    /// The labels of the blank nodes the ranges loaded by [`Loader::load_piece`] met, by node number.
    pub fn take_labels(&mut self) -> Vec<(u32, Box<str>)> {
        self.labels.take().unwrap_or_default()
    }
}

/// Loads process `process`'s share of `sources`: the store, and what it tells the others about it.
pub fn load(
    sources: &[DataSource],
    options: &LoadOptions,
    (processes, process): (usize, usize),
    progress: &dyn LoadProgress,
) -> Result<(Store, Share), LoadError> {
    let mut loader = Loader::new();
    let mut labels = Vec::new();
    let mut covered = Vec::new();
    for piece in pieces(sources, options, processes, process)? {
        loader.load_piece(&sources[piece.source], &piece, options, progress)?;
        let source = piece.source as u32;
        labels.extend((loader.take_labels().into_iter()).map(|(n, label)| (n, source, label)));
        match (piece.range, &sources[piece.source]) {
            (Some(_), _) if piece.blocks.is_some() => {
                if let Some((from, to, end)) = loader.covered.take() {
                    covered.push((source, from, to, end));
                }
            }
            (Some((from, to)), DataSource::File(path)) => {
                let len = std::fs::metadata(path).map_or(u64::MAX, |m| m.len());
                covered.push((source, from, to, to == len));
            }
            _ => {}
        }
    }
    let store = loader.finish();
    let mut share = Share::of(&store, labels);
    share.covered = covered;
    Ok((store, share))
}

/// What a process tells the others about its share: its terms, its prefixes, and the facts every process needs
/// whoever read them (stored rules).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Share {
    /// The share's dictionary.
    pub dict: DictionaryParts,
    /// Blank nodes met in a cut file: (node number, the file's source index, label).
    pub labels: Vec<(u32, u32, Box<str>)>,
    /// The prefixes its sources declared, in order.
    pub prefixes: Vec<(String, String)>,
    /// Its `f:rule` facts (stored rules), in the share's ids.
    pub rules: Vec<Quad>,
    /// The named graphs it holds facts in.
    pub graphs: Vec<TermId>,
    /// What it read of each file cut between processes: (source, start, end, whether it read to the end), in
    /// bytes of the file, or of its decompressed text for a compressed one ([`tiled`] checks them).
    pub covered: Vec<(u32, u64, u64, bool)>,
    /// How many asserted facts it holds.
    pub facts: u64,
}

const MAGIC: &[u8; 8] = b"rctl-sh1";

impl Share {
    /// What `store` (the share as loaded) tells the others; `labels` from [`Loader::take_labels`], by source.
    pub fn of(store: &Store, labels: Vec<(u32, u32, Box<str>)>) -> Self {
        let mut rules = Vec::new();
        for (g, index) in store.quads.graphs() {
            rules.extend(
                (index.range(&[None, Some(wk::F_RULE), None]).iter()).map(|[s, p, o]| [g, s, p, o]),
            );
        }
        let graphs = (store.quads.graphs())
            .filter(|(g, index)| *g != TermId::DEFAULT_GRAPH && !index.triples().is_empty())
            .map(|(g, _)| g)
            .collect();
        Share {
            dict: store.dict.to_parts(),
            graphs,
            labels,
            prefixes: store.prefixes.clone(),
            rules,
            covered: Vec::new(),
            facts: store.quads.len() as u64,
        }
    }

    /// The bytes sent.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        let bytes = |out: &mut Vec<u8>, b: &[u8]| {
            out.extend((b.len() as u64).to_le_bytes());
            out.extend_from_slice(b);
        };
        let words = |out: &mut Vec<u8>, w: &[u64]| {
            out.extend((w.len() as u64).to_le_bytes());
            w.iter().for_each(|x| out.extend(x.to_le_bytes()));
        };
        let d = &self.dict;
        bytes(&mut out, &d.terms);
        words(&mut out, &d.term_starts);
        bytes(&mut out, &d.namespaces);
        words(&mut out, &d.namespace_starts);
        words(&mut out, &[d.base as u64, d.blank_nodes as u64, self.facts]);
        out.extend((self.labels.len() as u64).to_le_bytes());
        for (n, source, label) in &self.labels {
            words(&mut out, &[*n as u64, *source as u64]);
            bytes(&mut out, label.as_bytes());
        }
        out.extend((self.prefixes.len() as u64).to_le_bytes());
        for (name, iri) in &self.prefixes {
            bytes(&mut out, name.as_bytes());
            bytes(&mut out, iri.as_bytes());
        }
        let rules: Vec<u64> = (self.rules.iter())
            .flat_map(|q| q.map(|t| t.0 as u64))
            .collect();
        words(&mut out, &rules);
        let graphs: Vec<u64> = self.graphs.iter().map(|g| g.0 as u64).collect();
        words(&mut out, &graphs);
        let covered: Vec<u64> = (self.covered.iter())
            .flat_map(|&(s, a, b, end)| [s as u64, a, b, end as u64])
            .collect();
        words(&mut out, &covered);
        out
    }

    /// The share [`Share::encode`] wrote; `None` for anything else.
    pub fn decode(b: &[u8]) -> Option<Self> {
        let mut r = Reader(b.strip_prefix(MAGIC)?);
        let terms = r.bytes()?.to_vec();
        let term_starts = r.words()?;
        let namespaces = r.bytes()?.to_vec();
        let namespace_starts = r.words()?;
        let [base, blank_nodes, facts] = <[u64; 3]>::try_from(r.words()?).ok()?;
        let mut labels = Vec::new();
        for _ in 0..r.count()? {
            let [n, source] = <[u64; 2]>::try_from(r.words()?).ok()?;
            let label = std::str::from_utf8(r.bytes()?).ok()?;
            labels.push((
                u32::try_from(n).ok()?,
                u32::try_from(source).ok()?,
                label.into(),
            ));
        }
        let mut prefixes = Vec::new();
        for _ in 0..r.count()? {
            let name = std::str::from_utf8(r.bytes()?).ok()?.to_owned();
            let iri = std::str::from_utf8(r.bytes()?).ok()?.to_owned();
            prefixes.push((name, iri));
        }
        let ids = r.words()?;
        let rules = (ids.chunks_exact(4))
            .map(|q| {
                let id = |i: usize| u32::try_from(q[i]).ok().map(TermId);
                Some([id(0)?, id(1)?, id(2)?, id(3)?])
            })
            .collect::<Option<Vec<Quad>>>()?;
        let graphs = (r.words()?.into_iter())
            .map(|g| u32::try_from(g).ok().map(TermId))
            .collect::<Option<Vec<TermId>>>()?;
        let covered = r.words()?;
        if covered.len() % 4 != 0 {
            return None;
        }
        let covered = (covered.chunks_exact(4))
            .map(|c| Some((u32::try_from(c[0]).ok()?, c[1], c[2], c[3] != 0)))
            .collect::<Option<Vec<_>>>()?;
        let (base, blank_nodes) = (u32::try_from(base).ok()?, u32::try_from(blank_nodes).ok()?);
        (r.0.is_empty() && ids.len() % 4 == 0).then_some(Share {
            dict: DictionaryParts {
                terms,
                term_starts,
                namespaces,
                namespace_starts,
                base,
                blank_nodes,
            },
            labels,
            prefixes,
            rules,
            graphs,
            covered,
            facts,
        })
    }
}

/// Reads what [`Share::encode`] wrote.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn count(&mut self) -> Option<u64> {
        let (head, rest) = self.0.split_first_chunk::<8>()?;
        self.0 = rest;
        Some(u64::from_le_bytes(*head))
    }

    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = usize::try_from(self.count()?).ok()?;
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }

    fn words(&mut self) -> Option<Vec<u64>> {
        let n = usize::try_from(self.count()?).ok()?;
        let (head, rest) = self.0.split_at_checked(n.checked_mul(8)?)?;
        self.0 = rest;
        Some(
            (head.chunks_exact(8))
                .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")))
                .collect(),
        )
    }
}

/// The dictionary every process builds from all shares, and what it means for one of them.
pub struct United {
    /// Every share's terms, share after share.
    pub dict: Dictionary,
    /// Share `me`'s ids in it, by the share's own id.
    pub ids: Vec<TermId>,
    /// The other shares' stored rules, in its ids.
    pub rules: Vec<Quad>,
    /// Every share's prefixes, the first declaration of a name winning.
    pub prefixes: Vec<(String, String)>,
    /// The named graphs the other shares hold facts in.
    pub graphs: Vec<TermId>,
}

/// Interns every share's terms, in share order and each share's terms in the order it met them; a blank node of
/// a file cut between shares is one node in all of them. `None`: a share's dictionary is damaged.
pub fn unite(shares: &[Share], me: usize) -> Result<Option<United>, LoadError> {
    let mut dict = Dictionary::new();
    // (source, label) -> node, for the files cut between shares.
    let mut cut: HashMap<(u32, Box<str>), TermId> = HashMap::new();
    let (mut mine, mut rules, mut prefixes, mut graphs) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (i, share) in shares.iter().enumerate() {
        // A share's dictionary numbers from 0, each literal's datatype before it (as the loader interns them).
        let Some(local) = Dictionary::from_parts(share.dict.clone())
            .filter(|d| d.base() == TermId(0) && datatypes_first(d))
        else {
            return Ok(None);
        };
        let labels: HashMap<u32, (u32, &str)> = (share.labels.iter())
            .map(|(n, source, label)| (*n, (*source, &**label)))
            .collect();
        let name = format!("process {i}'s share");
        let ids = merge_terms(
            &mut dict,
            &name,
            &local,
            &mut |dict, n| match labels.get(&n) {
                Some(&(source, label)) => *cut
                    .entry((source, label.into()))
                    .or_insert_with(|| dict.new_blank_node()),
                None => dict.new_blank_node(),
            },
        )?;
        let mapped = |t: TermId| ids.get(t.index()).copied();
        for q in share.rules.iter().filter(|_| i != me) {
            match q.map(mapped) {
                [Some(g), Some(s), Some(p), Some(o)] => rules.push([g, s, p, o]),
                _ => return Ok(None),
            }
        }
        for &g in share.graphs.iter().filter(|_| i != me) {
            graphs.push(mapped(g));
        }
        super::add_prefixes(&mut prefixes, share.prefixes.iter().cloned());
        if i == me {
            mine = ids;
        }
    }
    let Some(mut graphs) = graphs.into_iter().collect::<Option<Vec<TermId>>>() else {
        return Ok(None);
    };
    graphs.sort_unstable();
    graphs.dedup();
    Ok(Some(United {
        dict,
        ids: mine,
        rules,
        prefixes,
        graphs,
    }))
}

/// Whether the files cut between processes are read whole and once: for each, the parts the shares read (in
/// process order) start at its first statement, each where the one before ends, and the last at its end. `Err`:
/// the first process whose part does not fit, and how. (Every process cuts alike from the same files and the
/// same build; a copy of a file that differs, or a decompression that reads otherwise, would load lines twice
/// or not at all.)
pub fn tiled(shares: &[Share]) -> Result<(), (usize, String)> {
    let mut sources: Vec<u32> = (shares.iter())
        .flat_map(|s| s.covered.iter().map(|c| c.0))
        .collect();
    sources.sort_unstable();
    sources.dedup();
    for source in sources {
        let parts: Vec<(usize, u64, u64, bool)> = (shares.iter().enumerate())
            .flat_map(|(i, s)| {
                (s.covered.iter())
                    .filter(move |c| c.0 == source)
                    .map(move |c| (i, c.1, c.2, c.3))
            })
            .collect();
        let mut at: Option<u64> = None;
        for &(i, start, end, _) in &parts {
            let fits = at.unwrap_or(0) == start;
            if !fits {
                return Err((
                    i,
                    format!(
                        "its part of DATA source {} starts at byte {start}, where the part before ends at {}",
                        source + 1,
                        at.map_or("the start".to_owned(), |a| a.to_string())
                    ),
                ));
            }
            at = Some(end);
        }
        if let Some(&(i, _, end, false)) = parts.last() {
            return Err((
                i,
                format!(
                    "its part of DATA source {} ends at byte {end}, before the end",
                    source + 1
                ),
            ));
        }
    }
    Ok(())
}

/// Whether every typed literal of `dict` comes after its datatype.
fn datatypes_first(dict: &Dictionary) -> bool {
    (0..dict.len() as u32).all(|i| match dict.get(TermId(i)) {
        TermRef::Literal {
            kind: LiteralKind::Typed(dt),
            ..
        } => dt.0 < i,
        _ => true,
    })
}

#[cfg(test)]
mod tests {
    use super::super::NoProgress;
    use super::*;
    use crate::store::TermSource;

    /// Sources of every kind: an N-Triples file with a byte-order mark and blank nodes met all along it, a Turtle
    /// file (never cut) with anonymous nodes, an N-Quads file reusing the first file's labels (other nodes).
    fn sources(dir: &Path) -> Vec<DataSource> {
        let mut nt = String::from("\u{feff}");
        for i in 0..400 {
            let s = if i % 3 == 0 {
                format!("_:b{}", i % 17)
            } else {
                format!("<http://e/n{i}>")
            };
            let pad = "x".repeat(i % 23);
            nt.push_str(&format!("{s} <http://e/p> \"{pad}\" .\n"));
            if i % 5 == 0 {
                nt.push_str(&format!(
                    "# a comment {i}\n<http://e/n{i}> <http://e/q> _:b{} .\n",
                    i % 11
                ));
            }
        }
        let ttl = "@prefix : <http://e/> .\n:a :p [ :q :b ] .\n:c :p [ :q _:b1 ] .\n";
        let mut nq = String::new();
        for i in 0..150 {
            nq.push_str(&format!(
                "_:b{} <http://e/r> <http://e/m{i}> <http://e/g{}> .\n",
                i % 7,
                i % 3
            ));
        }
        // Compressed, in many blocks of lines, after a byte-order mark; labels again (other nodes: another file).
        let mut gz = String::from("\u{feff}");
        for i in 0..8000u64 {
            let noise = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 20;
            gz.push_str(&format!("_:b{} <http://e/s> \"{noise:x}\" .\n", i % 29));
        }
        let files = [
            ("a.nt", nt),
            ("b.ttl", ttl.to_owned()),
            ("c.nq", nq),
            ("d.nt.gz", gz),
        ];
        (files.into_iter())
            .map(|(name, text)| {
                let path = dir.join(name);
                if name.ends_with(".gz") {
                    use std::io::Write;
                    let file = std::fs::File::create(&path).unwrap();
                    let mut e = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
                    e.write_all(text.as_bytes()).unwrap();
                    e.finish().unwrap();
                } else {
                    std::fs::write(&path, text).unwrap();
                }
                DataSource::File(path)
            })
            .collect()
    }

    #[test]
    fn shares_cut_files_at_line_breaks_into_contiguous_ranges_that_cover_every_byte_once() {
        let dir = tempfile::tempdir().unwrap();
        let sources = sources(dir.path());
        let options = LoadOptions::default();
        let bytes: Vec<Vec<u8>> = (sources.iter())
            .map(|s| match s {
                DataSource::File(p) => std::fs::read(p).unwrap(),
                DataSource::Stdin => unreachable!(),
            })
            .collect();
        for processes in 1..=5 {
            let all: Vec<(usize, Piece)> = (0..processes)
                .flat_map(|i| {
                    let pieces = pieces(&sources, &options, processes, i).unwrap();
                    pieces.into_iter().map(move |p| (i, p))
                })
                .collect();
            // In process order, the pieces go through the sources in order.
            assert!(
                all.windows(2).all(|w| w[0].1.source <= w[1].1.source),
                "{all:?}"
            );
            for (source, text) in bytes.iter().enumerate() {
                let of: Vec<&Piece> = (all.iter())
                    .map(|(_, p)| p)
                    .filter(|p| p.source == source)
                    .collect();
                if source == 1 {
                    let whole = Piece {
                        source,
                        range: None,
                        blocks: None,
                    };
                    assert_eq!(of, [&whole], "{processes} processes");
                    continue;
                }
                if source == 3 && of.len() > 1 {
                    // A compressed file: block starts from 0 to its end, run after run.
                    let ranges: Vec<(u64, u64)> = of.iter().map(|p| p.range.unwrap()).collect();
                    assert!(of.iter().all(|p| p.blocks.is_some()));
                    assert_eq!((ranges[0].0, ranges.last().unwrap().1), (0, u64::MAX));
                    assert!(ranges.windows(2).all(|w| w[0].1 == w[1].0), "{ranges:?}");
                    continue;
                }
                if of.len() == 1 && of[0].range.is_none() {
                    continue;
                }
                let ranges: Vec<(u64, u64)> =
                    of.iter().map(|p| p.range.expect("a range")).collect();
                // From the file's start (its byte-order mark skipped as the piece is read).
                assert_eq!(ranges[0].0, 0, "{processes} processes: {ranges:?}");
                assert_eq!(ranges.last().unwrap().1, text.len() as u64);
                for w in ranges.windows(2) {
                    assert_eq!(w[0].1, w[1].0, "contiguous: {ranges:?}");
                    assert_eq!(
                        text[w[0].1 as usize - 1],
                        b'\n',
                        "cut after a line break: {ranges:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn standard_input_is_process_zeros_and_must_come_first() {
        let dir = tempfile::tempdir().unwrap();
        let mut sources = sources(dir.path());
        let options = LoadOptions::default();
        sources.insert(0, DataSource::Stdin);
        let first = pieces(&sources, &options, 2, 0).unwrap();
        assert_eq!(first[0].source, 0);
        assert!(
            pieces(&sources, &options, 2, 1)
                .unwrap()
                .iter()
                .all(|p| p.source != 0)
        );
        sources.swap(0, 1);
        let err = pieces(&sources, &options, 2, 1).unwrap_err().to_string();
        assert!(err.contains("put - first"), "{err}");
    }

    /// Every fact of `store`, as text.
    fn facts(store: &Store) -> Vec<String> {
        let mut out: Vec<String> = (store.quads.graphs())
            .flat_map(|(g, index)| {
                index.triples().iter().map(move |t| {
                    let [s, p, o] = t.map(|x| store.dict.display(x));
                    format!("{s} {p} {o} {}", store.dict.display(g))
                })
            })
            .collect();
        out.sort();
        out
    }

    // The shares, united, hold the facts one process reading everything holds, blank-node numbers included: a
    // label cut between shares is one node, the same label in two files two.
    #[test]
    fn united_shares_hold_the_facts_and_blank_nodes_one_process_loading_everything_holds() {
        let dir = tempfile::tempdir().unwrap();
        let sources = sources(dir.path());
        let options = LoadOptions::default();
        let whole = super::super::load(&sources, &options, &NoProgress).unwrap();
        for processes in 1..=4 {
            let loaded: Vec<(Store, Share)> = (0..processes)
                .map(|i| load(&sources, &options, (processes, i), &NoProgress).unwrap())
                .collect();
            let shares: Vec<Share> = loaded
                .iter()
                .map(|(_, s)| Share::decode(&s.encode()).unwrap())
                .collect();
            // The cut files are read whole and once; a part read otherwise is named.
            assert_eq!(tiled(&shares), Ok(()), "{processes} processes");
            if processes > 1 {
                let mut gap = Share::decode(&shares[1].encode()).unwrap();
                for c in &mut gap.covered {
                    c.1 += 1;
                }
                let mut other = shares
                    .iter()
                    .map(|s| Share::decode(&s.encode()).unwrap())
                    .collect::<Vec<_>>();
                if !gap.covered.is_empty() {
                    other[1] = gap;
                    assert!(
                        matches!(tiled(&other), Err((1, _))),
                        "{processes} processes"
                    );
                }
            }
            let mut united = Vec::new();
            for (me, (store, _)) in loaded.iter().enumerate() {
                let u = unite(&shares, me).unwrap().unwrap();
                assert_eq!(
                    u.dict.to_parts(),
                    unite(&shares, 0).unwrap().unwrap().dict.to_parts()
                );
                // Every named graph with facts: this share's, or one the others hold facts in.
                let mut graphs: Vec<String> = u.graphs.iter().map(|&g| u.dict.display(g)).collect();
                for (g, index) in store.quads.graphs() {
                    for t in index.triples() {
                        let [s, p, o] = t.map(|x| u.dict.display(u.ids[x.index()]));
                        united.push(format!("{s} {p} {o} {}", u.dict.display(u.ids[g.index()])));
                    }
                    if g != TermId::DEFAULT_GRAPH {
                        graphs.push(u.dict.display(u.ids[g.index()]));
                    }
                }
                graphs.sort();
                graphs.dedup();
                assert_eq!(graphs, ["<http://e/g0>", "<http://e/g1>", "<http://e/g2>"]);
                assert_eq!(
                    u.dict.blank_count(),
                    whole.dict.blank_count(),
                    "{processes} processes"
                );
            }
            united.sort();
            united.dedup();
            assert_eq!(united, facts(&whole), "{processes} processes");
        }
    }

    #[test]
    fn a_share_reads_back_as_encoded_and_a_cut_short_one_is_refused() {
        let mut dict = Dictionary::new();
        let a = dict.intern_iri("http://e.example/a");
        let b = dict.new_blank_node();
        let share = Share {
            dict: dict.to_parts(),
            labels: vec![(0, 2, "x".into())],
            prefixes: vec![("e".into(), "http://e.example/".into())],
            rules: vec![[TermId::DEFAULT_GRAPH, a, wk::F_RULE, b]],
            graphs: vec![a],
            covered: vec![(0, 3, 90, false), (2, 0, 7, true)],
            facts: 7,
        };
        let bytes = share.encode();
        assert_eq!(Share::decode(&bytes), Some(share));
        let share = Share::decode(&bytes).unwrap();
        assert!(unite(&[share], 0).unwrap().is_some());
        // A typed literal before its datatype (no loader interns so): refused, not a panic.
        let mut dict = Dictionary::new();
        let at = dict.end();
        dict.intern_literal("1", LiteralKind::Typed(TermId(at.0 + 1)));
        dict.intern_iri("http://e.example/type");
        let forward = Share {
            dict: dict.to_parts(),
            ..Share::default()
        };
        assert!(unite(&[forward], 0).unwrap().is_none());
        assert_eq!(Share::decode(&bytes[..bytes.len() - 1]), None);
        assert_eq!(Share::decode(b"nonsense"), None);
    }
}
