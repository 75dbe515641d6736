//! This module defines the loading of one N-Triples or N-Quads file: line-aligned byte ranges, each read by the
//! line reader ([`Statements`]) into a dictionary of its own (on rayon threads when there are several), then
//! merged into the loader's dictionary in document order.
//!
//! The merge interns each range's terms in the order of their first appearance in the file, exactly as the
//! sequential loader does, so ids (and therefore output) do not depend on how many ranges there were. A syntax
//! error in any range loads nothing: the caller parses the file sequentially, which reports it as always.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use rayon::prelude::*;

use super::dump::LineTable;
use super::lines::Statements;
use super::{Counted, DataFormat, LoadError, LoadProgress, Loader};
use crate::store::{Dictionary, LiteralKind, Quad, TermId, TermRef, Triple};

/// The smallest chunk worth its own thread (below it, local numbering costs more than the second thread gains).
pub(super) const MIN_CHUNK: u64 = 4 << 20;

/// The line-aligned byte ranges of the `len`-byte `file` to parse in parallel: one per thread, none smaller than
/// `min_chunk`; a single range when the file is too small to split.
pub(super) fn ranges(
    file: &mut File,
    len: u64,
    threads: usize,
    min_chunk: u64,
) -> io::Result<Vec<(u64, u64)>> {
    let start = first_statement(file)?;
    ranges_within(file, (start, len), threads, min_chunk)
}

/// Where a file's first statement may start: after a leading byte-order mark, which is not part of it.
pub(super) fn first_statement(file: &mut File) -> io::Result<u64> {
    let mut buf = [0u8; 3];
    file.seek(SeekFrom::Start(0))?;
    let mut head = 0;
    while head < buf.len() {
        match file.read(&mut buf[head..])? {
            0 => break,
            n => head += n,
        }
    }
    Ok(if buf[..head] == *super::BOM { 3 } else { 0 })
}

/// [`ranges`] of the bytes `from..to` of `file` (`from` starts a line; `to` ends one, or the file).
pub(super) fn ranges_within(
    file: &mut File,
    (from, to): (u64, u64),
    threads: usize,
    min_chunk: u64,
) -> io::Result<Vec<(u64, u64)>> {
    let n = ((to - from) / min_chunk.max(1)).clamp(1, threads.max(1) as u64);
    let mut ranges = Vec::with_capacity(n as usize);
    let mut start = from;
    for i in 1..n {
        let end = line_end(file, (from + (to - from) * i / n).max(start), to)?;
        if end >= to {
            break;
        }
        ranges.push((start, end));
        start = end;
    }
    ranges.push((start, to));
    Ok(ranges)
}

/// Just past the first line break at or after `at` (N-Triples and N-Quads escape every line break inside a term,
/// so a line break ends a statement or a comment; a file where it does not fails to parse in some range, and is
/// then parsed sequentially); `len` when there is none before it.
pub(super) fn line_end(file: &mut File, mut at: u64, len: u64) -> io::Result<u64> {
    let mut buf = [0u8; 4096];
    file.seek(SeekFrom::Start(at))?;
    loop {
        let read = file.read(&mut buf)?;
        if read == 0 {
            return Ok(len);
        }
        if let Some(i) = buf[..read].iter().position(|&b| b == b'\n') {
            return Ok((at + i as u64 + 1).min(len));
        }
        at += read as u64;
        if at >= len {
            return Ok(len);
        }
    }
}

/// Why a range stopped early.
enum Stopped {
    /// The file could not be read.
    Io(LoadError),
    /// A line oxttl refuses: the file is parsed again sequentially, which reports it exactly as it always does
    /// (and decides the cases a split cannot, such as a raw line break inside a term that `--lenient` lets
    /// through).
    Syntax,
}

/// Bytes read at a time (a longer line grows the buffer).
const READ: usize = 1 << 20;

/// What [`read_lines`] hands its reader: a block just read (before its lines), or a line (without its line
/// break and a CR LF's carriage return).
pub(super) enum Piece<'a> {
    /// A block of the range, as read.
    Block(&'a [u8]),
    /// A line.
    Line(&'a [u8]),
}

/// Reads the byte range `start..end` of `path` in blocks, handing `each` every block and then its lines, until
/// the range ends or `each` fails; `unreadable` makes the error of a failed read.
pub(super) fn read_lines<E>(
    path: &Path,
    range: (u64, u64),
    progress: &dyn LoadProgress,
    unreadable: impl Fn(io::Error) -> E,
    mut each: impl FnMut(Piece<'_>) -> Result<(), E>,
) -> Result<(), E> {
    read_runs(path, range, progress, unreadable, |block, run| {
        if !block.is_empty() {
            each(Piece::Block(block))?;
        }
        for line in lines_of(run) {
            each(Piece::Line(line))?;
        }
        Ok(())
    })
}

/// The lines of a run of whole lines (as [`read_runs`] hands them), without their line breaks and a CR LF's
/// carriage return.
pub(super) fn lines_of(run: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut at = 0;
    std::iter::from_fn(move || {
        if at >= run.len() {
            return None;
        }
        let len = memchr::memchr(b'\n', &run[at..]).unwrap_or(run.len() - at);
        let line = strip_cr(&run[at..at + len]);
        at += len + 1;
        Some(line)
    })
}

/// Reads the byte range `start..end` of `path` in blocks, handing `each` every block just read with the run of
/// whole lines it completes (each with its line break; the range's last line may lack one), until the range
/// ends or `each` fails; `unreadable` makes the error of a failed read.
pub(super) fn read_runs<E>(
    path: &Path,
    (start, end): (u64, u64),
    progress: &dyn LoadProgress,
    unreadable: impl Fn(io::Error) -> E,
    mut each: impl FnMut(&[u8], &[u8]) -> Result<(), E>,
) -> Result<(), E> {
    let mut file = File::open(path).map_err(&unreadable)?;
    file.seek(SeekFrom::Start(start)).map_err(&unreadable)?;
    let mut reader = Counted {
        inner: file.take(end - start),
        progress,
        pending: 0,
    };
    let mut buf = vec![0u8; READ];
    let mut filled = 0;
    loop {
        if filled == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        let read = match reader.read(&mut buf[filled..]) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(unreadable(e)),
        };
        let block = filled..filled + read;
        filled += read;
        // The run ends after the block's last line break; at the range's end, with its last byte.
        let whole = match read {
            0 => filled,
            _ => memchr::memrchr(b'\n', &buf[block.clone()]).map_or(0, |i| block.start + i + 1),
        };
        if read > 0 || whole > 0 {
            let (head, _) = buf.split_at(filled);
            each(&head[block], &head[..whole])?;
        }
        if read == 0 {
            return Ok(());
        }
        buf.copy_within(whole..filled, 0);
        filled -= whole;
    }
}

/// Parses the byte range `start..end` of `path`, line by line.
fn parse_range(
    (lenient, keep_lines): (bool, bool),
    path: &Path,
    format: DataFormat,
    (start, end): (u64, u64),
    progress: &dyn LoadProgress,
) -> Result<Statements, Stopped> {
    let unreadable = |source| {
        Stopped::Io(LoadError::Unreadable {
            path: path.to_path_buf(),
            source,
        })
    };
    let mut statements = Statements::new(lenient, format == DataFormat::NQuads);
    if keep_lines {
        statements.keep_lines();
    }
    read_lines(
        path,
        (start, end),
        progress,
        unreadable,
        |piece| match piece {
            Piece::Block(block) => {
                if statements.triples.capacity() == 0 {
                    // Reserve for the range's statements once, at the line length of its first block, instead of
                    // growing (and copying) as they come.
                    let lines = memchr::memchr_iter(b'\n', block).count().max(1) as u64;
                    let estimate = (end - start) * lines / block.len() as u64;
                    statements
                        .triples
                        .reserve((estimate + estimate / 16) as usize);
                }
                if statements.dict.len() > super::TERM_LIMIT {
                    return Err(Stopped::Io(LoadError::TooManyTerms {
                        file: path.display().to_string(),
                        limit: super::TERM_LIMIT as u64,
                    }));
                }
                Ok(())
            }
            Piece::Line(line) => statements.line(line).map_err(|_| Stopped::Syntax),
        },
    )?;
    Ok(statements)
}

/// The statements of `text`, whole lines of an N-Triples (or, `with_graphs`, N-Quads) file, read as a range
/// is read (`flags`: lenient, keep lines); `None` when a line is refused.
pub(super) fn statements_of(
    (lenient, keep_lines): (bool, bool),
    with_graphs: bool,
    text: &[u8],
) -> Option<Statements> {
    let mut statements = Statements::new(lenient, with_graphs);
    if keep_lines {
        statements.keep_lines();
    }
    let text = text.strip_suffix(b"\n").unwrap_or(text);
    if !text.is_empty() {
        for line in text.split(|&b| b == b'\n') {
            statements.line(strip_cr(line)).ok()?;
        }
    }
    Some(statements)
}

/// A line without the carriage return of a CR LF line end.
pub(super) fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// The quad each hashed line states: `hashes` are (hash, place in `triples`) in line order, `runs` the graph of
/// each run of `triples` (ids of the loader's dictionary).
pub(super) fn quads_of_lines<'a>(
    hashes: &'a [(u128, usize)],
    runs: &'a [(TermId, std::ops::Range<usize>)],
    triples: &'a [Triple],
) -> impl Iterator<Item = (u128, Quad)> + 'a {
    let mut run = 0;
    hashes.iter().map(move |&(h, i)| {
        while !runs[run].1.contains(&i) {
            run += 1;
        }
        let [s, p, o] = triples[i];
        (h, [runs[run].0, s, p, o])
    })
}

/// The merging of one file's parsed ranges, in document order ([`Loader::merge_chunk`]).
pub(super) struct Merge {
    /// Blank-node label -> node, for the whole file.
    labels: hashbrown::HashMap<Box<str>, TermId>,
    /// Ranges merged so far.
    merged: usize,
    /// The file's line table so far, while lines are kept and each states at most one statement.
    lines: Option<Vec<(u128, Quad)>>,
}

impl Loader {
    /// Loads the N-Triples or N-Quads file `path` in `ranges` (from [`ranges`]; in parallel when there are
    /// several), merged in document order; blank-node labels are scoped to the file. `Ok(false)`: a line oxttl
    /// refuses, and nothing was loaded (the caller parses the file sequentially, which reports the error).
    pub(super) fn load_ranges(
        &mut self,
        path: &Path,
        name: &str,
        format: DataFormat,
        ranges: &[(u64, u64)],
        progress: &dyn LoadProgress,
    ) -> Result<bool, LoadError> {
        let flags = (self.lenient, self.keep_lines);
        let parse = |&range: &(u64, u64)| parse_range(flags, path, format, range, progress);
        let parsed: Vec<Result<Statements, Stopped>> = if ranges.len() == 1 {
            ranges.iter().map(parse).collect()
        } else {
            ranges.par_iter().map(parse).collect()
        };
        // The first problem in document order decides; nothing is merged unless every range parsed.
        let mut chunks = Vec::with_capacity(parsed.len());
        for chunk in parsed {
            match chunk {
                Ok(chunk) => chunks.push(chunk),
                Err(Stopped::Io(error)) => return Err(error),
                Err(Stopped::Syntax) => return Ok(false),
            }
        }
        let mut merge = self.merge_start();
        let mut later: usize = chunks.iter().map(|c| c.triples.len()).sum();
        for chunk in chunks {
            later -= chunk.triples.len();
            self.merge_chunk(&mut merge, name, chunk, later)?;
        }
        self.merge_finish(merge);
        Ok(true)
    }

    /// The merging of one file's parsed ranges, none merged yet.
    pub(super) fn merge_start(&self) -> Merge {
        Merge {
            labels: hashbrown::HashMap::new(),
            merged: 0,
            lines: self.keep_lines.then(Vec::new),
        }
    }

    /// Merges the next parsed range of a file (in document order) into the loader: its terms interned as
    /// sequential loading interns them, blank-node labels scoped to the file. `later`: how many statements the
    /// file's later ranges hold, when known (room is kept for them).
    pub(super) fn merge_chunk(
        &mut self,
        merge: &mut Merge,
        name: &str,
        mut chunk: Statements,
        later: usize,
    ) -> Result<(), LoadError> {
        // Into a dictionary holding nothing yet, the first range's dictionary (and its blank-node labels) is
        // what merging it would build: it is adopted, and the later ranges merge into it.
        let adopt = merge.merged == 0 && self.dict.is_empty() && self.dict.blank_count() == 0;
        merge.merged += 1;
        let ids = if adopt {
            self.dict = std::mem::take(&mut chunk.dict);
            merge.labels = std::mem::take(&mut chunk.blanks);
            None
        } else {
            let labels = &mut merge.labels;
            let mut blank = |dict: &mut Dictionary, label: &str| -> TermId {
                if let Some(&id) = labels.get(label) {
                    return id;
                }
                let id = dict.new_blank_node();
                labels.insert(label.into(), id);
                id
            };
            let ids = self.merge_terms(name, &chunk.dict, &chunk.labels, &mut blank)?;
            for t in chunk.triples.iter_mut().flatten() {
                *t = ids[t.index()];
            }
            Some(ids)
        };
        let default = self.target.unwrap_or(TermId::DEFAULT_GRAPH);
        let runs: Vec<(TermId, std::ops::Range<usize>)> = (chunk.runs().into_iter())
            .map(|(g, range)| {
                let graph = match (g, &ids) {
                    (TermId::DEFAULT_GRAPH, _) => default,
                    (g, Some(ids)) => ids[g.index()],
                    (g, None) => g,
                };
                (graph, range)
            })
            .collect();
        // The file's line table, while each line states at most one statement.
        match (&mut merge.lines, &chunk.hashes) {
            (Some(lines), Some(hashes)) => {
                lines.extend(quads_of_lines(hashes, &runs, &chunk.triples));
            }
            (lines, None) => *lines = None,
            _ => {}
        }
        for (graph, range) in &runs {
            let slot = self.graph_slot(*graph);
            let triples = &mut self.graphs[slot].1;
            if runs.len() == 1 && triples.is_empty() {
                // The range is one graph's first triples: they move, uncopied, with room for the later ranges'
                // (most files are one graph).
                *triples = std::mem::take(&mut chunk.triples);
                triples.reserve(later);
            } else {
                triples.extend_from_slice(&chunk.triples[range.clone()]);
            }
        }
        if self.dict.len() > super::TERM_LIMIT {
            return Err(LoadError::TooManyTerms {
                file: name.to_owned(),
                limit: super::TERM_LIMIT as u64,
            });
        }
        Ok(())
    }

    /// Ends a file's merging: its line table kept, when it has one.
    pub(super) fn merge_finish(&mut self, merge: Merge) {
        if let Some(kept) = &mut self.labels {
            for (label, id) in merge.labels {
                if let TermRef::Blank(n) = self.dict.get(id) {
                    kept.push((n, label));
                }
            }
        }
        self.table = merge.lines.map(LineTable::from_entries);
    }

    /// Interns a range's terms in the order of their local ids (the order of their first appearance), so ids
    /// come out as sequential loading gives them; returns each local id's id.
    pub(super) fn merge_terms(
        &mut self,
        name: &str,
        local: &Dictionary,
        labels: &[Box<str>],
        blank: &mut impl FnMut(&mut Dictionary, &str) -> TermId,
    ) -> Result<Vec<TermId>, LoadError> {
        merge_terms(&mut self.dict, name, local, &mut |dict, n| {
            blank(dict, &labels[n as usize])
        })
    }
}

/// Interns the terms of `local` into `dict` in the order of their local ids; returns each local id's id.
/// `blank` gives local blank node `n` its node in `dict`.
pub(super) fn merge_terms(
    dict: &mut Dictionary,
    name: &str,
    local: &Dictionary,
    blank: &mut impl FnMut(&mut Dictionary, u32) -> TermId,
) -> Result<Vec<TermId>, LoadError> {
    let mut ids: Vec<TermId> = Vec::with_capacity(local.len());
    for i in 0..local.len() as u32 {
        if i % 4096 == 0 && dict.len() > super::TERM_LIMIT {
            return Err(LoadError::TooManyTerms {
                file: name.to_owned(),
                limit: super::TERM_LIMIT as u64,
            });
        }
        let id = match local.get(TermId(i)) {
            TermRef::DefaultGraph => TermId::DEFAULT_GRAPH,
            TermRef::Iri(iri) => dict.intern_iri_parts(iri.ns, iri.local),
            TermRef::Blank(n) => blank(dict, n),
            TermRef::Literal { lexical, kind } => {
                let kind = match kind {
                    LiteralKind::Typed(dt) => LiteralKind::Typed(ids[dt.index()]),
                    other => other,
                };
                dict.intern_literal(lexical, kind)
            }
            TermRef::Triple(t) => dict.intern_triple(t.map(|t| ids[t.index()])),
        };
        ids.push(id);
    }
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::super::{DataSource, LoadOptions, NoProgress};
    use super::*;
    use crate::store::{Dictionary, Store};

    /// Statements of every kind a line format holds: named graphs, blank nodes (shared across chunk borders),
    /// literals of each kind, RDF 1.2 triple terms, comments and blank lines.
    fn nquads(lines: usize) -> String {
        let mut text = String::from("# a comment\n\n");
        for i in 0..lines {
            let line = match i % 6 {
                0 => format!("<http://e/s{i}> <http://e/p> <http://e/o{}> .\n", i / 3),
                1 => format!(
                    "_:b{} <http://e/p> \"v{i}\"@en-GB <http://e/g{}> .\n",
                    i % 7,
                    i % 3
                ),
                2 => format!(
                    "<http://e/s{i}> <http://e/q> \"{i}\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n"
                ),
                3 => format!(
                    "<http://e/r{i}> <http://www.w3.org/1999/02/22-rdf-syntax-ns#reifies> <<( <http://e/s{i}> <http://e/p> _:b{} )>> .\n",
                    i % 5
                ),
                4 => "# between statements\n".to_owned(),
                _ => format!("_:x{i} <http://e/p> \"line\\nbreak\" _:g{} .\n", i % 2),
            };
            text.push_str(&line);
        }
        text
    }

    fn write(text: &str, ext: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(format!("data.{ext}"));
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    fn sequential(path: &Path) -> Store {
        let mut loader = Loader::new();
        let file = File::open(path).unwrap();
        loader
            .load_reader("data", file, DataFormat::NQuads, None, &NoProgress)
            .unwrap();
        loader.finish()
    }

    fn chunked(path: &Path, threads: usize, min_chunk: u64) -> (usize, Store) {
        let mut file = File::open(path).unwrap();
        let len = file.metadata().unwrap().len();
        let ranges = ranges(&mut file, len, threads, min_chunk).unwrap();
        let mut loader = Loader::new();
        loader
            .load_ranges(path, "data", DataFormat::NQuads, &ranges, &NoProgress)
            .unwrap();
        (ranges.len(), loader.finish())
    }

    /// Every term by id, and every quad: equal stores give equal listings.
    fn listing(store: &Store) -> (Vec<String>, Vec<[TermId; 4]>) {
        let terms = (1..store.dict.len() as u32)
            .map(|i| format!("{:?}", store.dict.get(TermId(i))))
            .collect();
        let quads = store
            .quads
            .graphs()
            .flat_map(|(g, idx)| idx.triples().iter().map(move |&[s, p, o]| [g, s, p, o]))
            .collect();
        (terms, quads)
    }

    /// The lines `read_lines` hands for the whole of `text`, and the bytes of the blocks it hands.
    fn lines_read(text: &[u8]) -> (Vec<Vec<u8>>, usize) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lines.nt");
        std::fs::write(&path, text).unwrap();
        let (mut lines, mut blocks) = (Vec::new(), 0);
        read_lines(
            &path,
            (0, text.len() as u64),
            &crate::store::load::NoProgress,
            |e| e,
            |piece| {
                match piece {
                    Piece::Block(b) => blocks += b.len(),
                    Piece::Line(l) => lines.push(l.to_vec()),
                }
                Ok(())
            },
        )
        .unwrap();
        (lines, blocks)
    }

    #[test]
    fn lines_are_read_without_their_breaks_blank_lines_kept_and_a_last_line_without_a_break_included()
     {
        let (lines, blocks) = lines_read(b"a b\r\n\nc\n\r\nlast");
        let expected: Vec<&[u8]> = vec![b"a b", b"", b"c", b"", b"last"];
        assert_eq!(lines, expected);
        assert_eq!(blocks, 14);
        assert_eq!(lines_read(b"").0, Vec::<Vec<u8>>::new());
        assert_eq!(lines_read(b"x\n").0, vec![b"x".to_vec()]);
    }

    #[test]
    fn a_line_longer_than_a_read_arrives_whole() {
        let long = vec![b'x'; 3 * READ + 17];
        let mut text = long.clone();
        text.extend_from_slice(b"\nshort\n");
        text.extend_from_slice(&long);
        let (lines, blocks) = lines_read(&text);
        assert_eq!(lines, vec![long.clone(), b"short".to_vec(), long]);
        assert_eq!(blocks, text.len());
    }

    #[test]
    fn ranges_split_after_line_breaks_and_cover_the_file() {
        let text = nquads(300);
        let (_dir, path) = write(&text, "nq");
        let mut file = File::open(&path).unwrap();
        let ranges = ranges(&mut file, text.len() as u64, 4, 100).unwrap();
        assert_eq!(ranges.len(), 4);
        assert_eq!(ranges[0].0, 0);
        assert_eq!(ranges.last().unwrap().1, text.len() as u64);
        for pair in ranges.windows(2) {
            assert_eq!(pair[0].1, pair[1].0);
            assert_eq!(text.as_bytes()[pair[0].1 as usize - 1], b'\n');
        }
        // Too small to split: one range.
        assert_eq!(ranges_of(&path, 4, 1 << 30), vec![(0, text.len() as u64)]);
    }

    fn ranges_of(path: &Path, threads: usize, min_chunk: u64) -> Vec<(u64, u64)> {
        let mut file = File::open(path).unwrap();
        let len = file.metadata().unwrap().len();
        ranges(&mut file, len, threads, min_chunk).unwrap()
    }

    #[test]
    fn chunked_loading_gives_the_ids_and_quads_of_sequential_loading() {
        let (_dir, path) = write(&nquads(600), "nq");
        let expected = listing(&sequential(&path));
        assert!(expected.1.len() > 400);
        for threads in [2, 3, 7] {
            let (n, store) = chunked(&path, threads, 64);
            assert_eq!(n, threads);
            assert_eq!(listing(&store), expected, "{threads} chunks");
        }
    }

    #[test]
    fn a_syntax_error_in_any_range_loads_nothing_and_asks_for_a_sequential_parse() {
        let mut text = nquads(600);
        text.push_str("<http://e/a> <http://e/p> oops .\n");
        text.push_str(&nquads(30));
        let (_dir, path) = write(&text, "nq");
        let mut file = File::open(&path).unwrap();
        let ranges = ranges(&mut file, text.len() as u64, 4, 64).unwrap();
        assert!(ranges[0].1 < text.find("oops").unwrap() as u64);
        let mut loader = Loader::new();
        let loaded = loader
            .load_ranges(&path, "data.nq", DataFormat::NQuads, &ranges, &NoProgress)
            .unwrap();
        assert!(!loaded);
        let store = loader.finish();
        assert_eq!(
            (store.quads.len(), store.dict.len()),
            (0, Dictionary::new().len())
        );
    }

    /// `lines` N-Triples lines of filler.
    fn filler(lines: usize, tag: &str) -> String {
        (0..lines)
            .map(|i| format!("<http://e/{tag}{i}> <http://e/p> _:b{} .\n", i % 100))
            .collect()
    }

    /// A file of two equal halves around `middle`, large enough to split in two, and its two ranges.
    fn halves(middle: &str) -> (tempfile::TempDir, std::path::PathBuf, Vec<(u64, u64)>) {
        // Lines are 30 to 40 bytes: each half holds more than MIN_CHUNK.
        let lines = MIN_CHUNK as usize / 30;
        let text = format!("{}{middle}{}", filler(lines, "a"), filler(lines, "c"));
        let (dir, path) = write(&text, "nt");
        let mut file = File::open(&path).unwrap();
        let ranges = ranges(&mut file, text.len() as u64, 2, MIN_CHUNK).unwrap();
        assert_eq!(ranges.len(), 2);
        (dir, path, ranges)
    }

    fn load_file(path: &Path, lenient: bool) -> Result<Store, LoadError> {
        let options = LoadOptions {
            lenient,
            ..LoadOptions::default()
        };
        let mut loader = Loader::new();
        loader.load_source(&DataSource::File(path.to_path_buf()), &options, &NoProgress)?;
        Ok(loader.finish())
    }

    fn load_sequentially(path: &Path, lenient: bool) -> Result<Store, LoadError> {
        let mut loader = Loader::new();
        loader.lenient = lenient;
        let file = File::open(path).unwrap();
        loader.load_reader(
            &path.display().to_string(),
            file,
            DataFormat::NTriples,
            None,
            &NoProgress,
        )?;
        Ok(loader.finish())
    }

    #[test]
    fn a_syntax_error_on_the_first_line_of_a_later_range_is_reported_as_sequential_loading_reports_it()
     {
        // The split lands after the first line break past the middle: the bad line begins the second range.
        let (_dir, path, ranges) =
            halves("<http://e/m> <http://e/p> <http://e/o> .\n<http://e/a> <http://e/p> oops .\n");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text[ranges[1].0 as usize..].starts_with("<http://e/a> <http://e/p> oops ."));
        let split = load_file(&path, false).map(|_| ()).unwrap_err();
        let sequential = load_sequentially(&path, false).map(|_| ()).unwrap_err();
        assert_eq!(format!("{split:?}"), format!("{sequential:?}"));
        let LoadError::Syntax(e) = &split else {
            panic!("{split:?}")
        };
        let line = text[..text.find("oops").unwrap()].matches('\n').count() as u64 + 1;
        assert_eq!((e.line, e.column), (line, 27));
        assert_eq!(
            e.snippet.as_ref().unwrap().text(),
            "<http://e/a> <http://e/p> oops ."
        );
    }

    #[test]
    fn with_lenient_a_raw_line_break_inside_a_literal_loads_whatever_the_split() {
        // --lenient lets a raw line break inside a literal through; the split falls right after it.
        let (_dir, path, ranges) = halves("<http://e/m> <http://e/p> \"x\ny\" .\n");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text[..ranges[0].1 as usize].ends_with("\"x\n"));
        let split = load_file(&path, true).unwrap();
        let sequential = load_sequentially(&path, true).unwrap();
        assert_eq!(listing(&split), listing(&sequential));
        assert!(
            split
                .dict
                .lookup_literal("x\ny", crate::store::LiteralKind::Simple)
                .is_some()
        );
        // Without --lenient it is an error, as sequential loading says.
        let strict = load_file(&path, false).map(|_| ()).unwrap_err();
        let sequential = load_sequentially(&path, false).map(|_| ()).unwrap_err();
        assert_eq!(format!("{strict:?}"), format!("{sequential:?}"));
    }

    #[cfg(unix)]
    #[test]
    fn a_named_pipe_loads_sequentially() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("data.nt");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                std::fs::write(fifo, "<http://e/a> <http://e/p> <http://e/b> .\n")
            })
        };
        let store = load_file(&fifo, false).unwrap();
        writer.join().unwrap().unwrap();
        assert_eq!(store.quads.len(), 1);
    }

    #[test]
    fn load_source_splits_a_large_ntriples_file() {
        let mut text = String::new();
        while (text.len() as u64) < 2 * MIN_CHUNK + 10 {
            let i = text.len();
            text.push_str(&format!("<http://e/s{i}> <http://e/p> _:b{} .\n", i % 1000));
        }
        let (_dir, path) = write(&text, "nt");
        let mut loader = Loader::new();
        loader
            .load_source(
                &DataSource::File(path.clone()),
                &LoadOptions::default(),
                &NoProgress,
            )
            .unwrap();
        let store = loader.finish();
        assert_eq!(store.quads.len(), text.lines().count());
        let mut loader = Loader::new();
        loader
            .load_reader(
                "data",
                File::open(&path).unwrap(),
                DataFormat::NTriples,
                None,
                &NoProgress,
            )
            .unwrap();
        assert_eq!(listing(&store), listing(&loader.finish()));
    }
}
