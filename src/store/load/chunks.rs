//! This module defines parallel loading of one N-Triples or N-Quads file: line-aligned byte ranges parsed and
//! interned locally on rayon threads, then merged into the dictionary in document order.
//!
//! The merge interns each chunk's terms in the order of their first appearance in the file, exactly as the
//! sequential loader does, so ids (and therefore output) do not depend on how many chunks there were. A syntax
//! error in any range loads nothing: the caller parses the file sequentially, which reports it as always.

use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use hashbrown::HashMap;
use oxttl::{NQuadsParser, NTriplesParser, TurtleParseError};
use rayon::prelude::*;

use super::{Counted, DataFormat, LoadError, LoadProgress, Loader};
use crate::store::TermId;

/// A local number not yet given an id (ids stay below the loader's term limit).
const UNSET: TermId = TermId(u32::MAX);

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
    let n = (len / min_chunk.max(1)).clamp(1, threads.max(1) as u64);
    let mut ranges = Vec::with_capacity(n as usize);
    let mut start = 0;
    let mut buf = [0u8; 4096];
    for i in 1..n {
        let mut at = (len * i / n).max(start);
        file.seek(SeekFrom::Start(at))?;
        // The range ends after the first line break at or past `at` (N-Triples and N-Quads escape every line break
        // inside a term, so a line break ends a statement or a comment; a file where it does not fails to parse
        // in some range, and is then parsed sequentially).
        let end = loop {
            let read = file.read(&mut buf)?;
            if read == 0 {
                break len;
            }
            if let Some(i) = buf[..read].iter().position(|&b| b == b'\n') {
                break at + i as u64 + 1;
            }
            at += read as u64;
        };
        if end >= len {
            break;
        }
        ranges.push((start, end));
        start = end;
    }
    ranges.push((start, len));
    Ok(ranges)
}

/// One chunk, parsed: its distinct terms numbered by first appearance (0 is the default graph) and its quads
/// over those numbers, or what stopped it.
struct Parsed {
    terms: Vec<oxrdf::Term>,
    quads: Vec<[u32; 4]>,
    error: Option<Stopped>,
}

/// Why a chunk stopped early.
enum Stopped {
    /// The file could not be read.
    Io(LoadError),
    /// A syntax error: the file is parsed again sequentially, which reports it exactly as it always does (and
    /// decides the cases a split cannot, such as a raw line break inside a term that `--lenient` lets through).
    Syntax,
}

/// Local numbers of one chunk's terms.
#[derive(Default)]
struct Local {
    ids: HashMap<oxrdf::Term, u32>,
}

impl Local {
    fn id(&mut self, term: oxrdf::Term) -> u32 {
        let next = self.ids.len() as u32 + 1;
        *self.ids.entry(term).or_insert(next)
    }

    fn graph(&mut self, graph: oxrdf::GraphName) -> u32 {
        match graph {
            oxrdf::GraphName::DefaultGraph => 0,
            oxrdf::GraphName::NamedNode(n) => self.id(n.into()),
            oxrdf::GraphName::BlankNode(b) => self.id(b.into()),
        }
    }

    /// The terms in order of their numbers (number `i` at index `i - 1`).
    fn into_terms(self) -> Vec<oxrdf::Term> {
        let mut slots: Vec<Option<oxrdf::Term>> = vec![None; self.ids.len()];
        for (term, id) in self.ids {
            slots[id as usize - 1] = Some(term);
        }
        slots.into_iter().flatten().collect()
    }
}

/// Parses the byte range `start..end` of `path`.
fn parse_range(
    lenient: bool,
    path: &Path,
    format: DataFormat,
    (start, end): (u64, u64),
    progress: &dyn LoadProgress,
) -> Parsed {
    let mut local = Local::default();
    let mut quads = Vec::new();
    let error = match File::open(path).and_then(|mut f| f.seek(SeekFrom::Start(start)).map(|_| f)) {
        Err(source) => Some(Stopped::Io(LoadError::Unreadable {
            path: path.to_path_buf(),
            source,
        })),
        Ok(file) => {
            let reader = Counted {
                inner: BufReader::with_capacity(1 << 16, file.take(end - start)),
                progress,
                pending: 0,
            };
            let failed: Option<TurtleParseError> = match format {
                DataFormat::NQuads => {
                    let parser = if lenient {
                        NQuadsParser::new().lenient()
                    } else {
                        NQuadsParser::new()
                    };
                    parser.for_reader(reader).find_map(|quad| match quad {
                        Ok(q) => {
                            let g = local.graph(q.graph_name);
                            let [s, p, o] = [q.subject.into(), q.predicate.into(), q.object]
                                .map(|t| local.id(t));
                            quads.push([g, s, p, o]);
                            None
                        }
                        Err(e) => Some(e),
                    })
                }
                _ => if lenient {
                    NTriplesParser::new().lenient()
                } else {
                    NTriplesParser::new()
                }
                .for_reader(reader)
                .find_map(|triple| match triple {
                    Ok(t) => {
                        let [s, p, o] =
                            [t.subject.into(), t.predicate.into(), t.object].map(|t| local.id(t));
                        quads.push([0, s, p, o]);
                        None
                    }
                    Err(e) => Some(e),
                }),
            };
            failed.map(|e| match e {
                TurtleParseError::Io(source) => Stopped::Io(LoadError::Unreadable {
                    path: path.to_path_buf(),
                    source,
                }),
                TurtleParseError::Syntax(_) => Stopped::Syntax,
            })
        }
    };
    Parsed {
        terms: local.into_terms(),
        quads,
        error,
    }
}

impl Loader {
    /// Loads the N-Triples or N-Quads file `path` in `ranges` (from [`ranges`]), parsed in parallel, merged in
    /// document order; blank-node labels are scoped to the file. `Ok(false)`: a range met a syntax error and
    /// nothing was loaded (the caller parses the file sequentially, which reports the error).
    pub(super) fn load_ranges(
        &mut self,
        path: &Path,
        name: &str,
        format: DataFormat,
        ranges: &[(u64, u64)],
        progress: &dyn LoadProgress,
    ) -> Result<bool, LoadError> {
        let mut parsed: Vec<Parsed> = ranges
            .par_iter()
            .map(|&range| parse_range(self.lenient, path, format, range, progress))
            .collect();
        // The first problem in document order decides; nothing is merged unless every range parsed.
        if let Some(i) = parsed.iter().position(|c| c.error.is_some()) {
            return match parsed.swap_remove(i).error {
                Some(Stopped::Io(error)) => Err(error),
                _ => Ok(false),
            };
        }
        let mut blank = crate::store::dictionary::blank_scope();
        for chunk in parsed {
            // Local number -> id, assigned at the term's first appearance (graph, subject, predicate, object).
            let mut ids = vec![UNSET; chunk.terms.len() + 1];
            let default = self.target.unwrap_or(TermId::DEFAULT_GRAPH);
            let mut last_graph = (u32::MAX, 0);
            for (k, [g, s, p, o]) in chunk.quads.into_iter().enumerate() {
                if k % 4096 == 0 && self.dict.len() > super::TERM_LIMIT {
                    return Err(LoadError::TooManyTerms {
                        file: name.to_owned(),
                        limit: super::TERM_LIMIT as u64,
                    });
                }
                let slot = if g == last_graph.0 {
                    last_graph.1
                } else {
                    let id = if g == 0 {
                        default
                    } else {
                        self.global(&chunk.terms, &mut ids, g, &mut blank)
                    };
                    let slot = self.graph_slot(id);
                    last_graph = (g, slot);
                    slot
                };
                let triple = [s, p, o].map(|t| self.global(&chunk.terms, &mut ids, t, &mut blank));
                self.graphs[slot].1.push(triple);
            }
        }
        Ok(true)
    }

    fn global(
        &mut self,
        terms: &[oxrdf::Term],
        ids: &mut [TermId],
        local: u32,
        blank: &mut impl FnMut(&mut crate::store::Dictionary, &str) -> TermId,
    ) -> TermId {
        let slot = &mut ids[local as usize];
        if *slot == UNSET {
            *slot = self
                .dict
                .intern_term(terms[local as usize - 1].as_ref(), blank);
        }
        *slot
    }
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
