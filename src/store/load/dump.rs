//! This module defines the line table of an N-Triples or N-Quads file — the 128-bit hash of each line that
//! states a statement, with the quad it states — and the comparison of a new version of the file (a nightly
//! dump) with the table of the last: every line is hashed, only the lines the table lacks are parsed, and the
//! table's lines the file no longer has give the quads it no longer states.
//!
//! A line means the same wherever it stands in these syntaxes (no prefixes, no base, one statement per line),
//! with one exception: a blank-node label names the file's node, which only a whole read knows. A comparison
//! whose new lines hold a blank node, state two statements on a line or do not parse gives way to a whole read
//! (which reports a syntax error where it is).

use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use hashbrown::HashSet;
use rayon::prelude::*;

use super::chunks::{self, quads_of_lines, read_runs};
use super::{DataFormat, LoadError, LoadOptions, LoadProgress, Loader, open};
use crate::store::quads::prefetch;
use crate::store::{Quad, QuadStore, TermId, Triple};

/// The hash of a line's text, without its line break (and the carriage return of a CR LF one): XXH3, 128 bits,
/// so that two different lines of any real dump share a hash with a probability far below any disk's error
/// rate.
pub fn hash(line: &[u8]) -> u128 {
    xxhash_rust::xxh3::xxh3_128(line)
}

/// The lines of one file that state a statement: each line's hash with the quad it states, sorted by hash,
/// each distinct line once.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineTable {
    hashes: Vec<u128>,
    quads: Vec<Quad>,
}

impl LineTable {
    /// The table of (hash, quad) entries, in any order, repeats allowed.
    pub fn from_entries(mut entries: Vec<(u128, Quad)>) -> Self {
        entries.par_sort_unstable();
        entries.dedup();
        let (hashes, quads) = entries.into_iter().unzip();
        Self { hashes, quads }
    }

    /// A table from its parts (as [`LineTable::parts`] gives them); `None` unless the parts are as long as each
    /// other and the hashes sorted.
    pub fn from_parts(hashes: Vec<u128>, quads: Vec<Quad>) -> Option<Self> {
        (hashes.len() == quads.len() && hashes.is_sorted()).then_some(Self { hashes, quads })
    }

    /// The hashes (sorted) and the quads they state.
    pub fn parts(&self) -> (&[u128], &[Quad]) {
        (&self.hashes, &self.quads)
    }

    /// The table now: the lines `seen` again (by position), and the `added` ones (sorted, none already in it),
    /// merged by hash; with the quads of the lines not seen. Built in place: the kept entries are moved down
    /// over the gone ones, then merged with the added ones from the back, so that comparing a dump does not
    /// hold two tables.
    pub fn patched(
        self,
        seen: impl Fn(usize) -> bool,
        added: &[(u128, Quad)],
    ) -> (LineTable, Vec<Quad>) {
        let Self {
            mut hashes,
            mut quads,
        } = self;
        let mut gone = Vec::new();
        let mut kept = 0;
        for i in 0..hashes.len() {
            if seen(i) {
                hashes[kept] = hashes[i];
                quads[kept] = quads[i];
                kept += 1;
            } else {
                gone.push(quads[i]);
            }
        }
        let size = kept + added.len();
        hashes.resize(size, 0);
        quads.resize(size, [TermId(0); 4]);
        // From the back: the larger of the last kept and the last added goes last.
        let (mut k, mut a) = (kept, added.len());
        for at in (0..size).rev() {
            if a > 0 && (k == 0 || added[a - 1] > (hashes[k - 1], quads[k - 1])) {
                a -= 1;
                (hashes[at], quads[at]) = added[a];
            } else {
                k -= 1;
                hashes[at] = hashes[k];
                quads[at] = quads[k];
            }
        }
        (Self { hashes, quads }, gone)
    }

    /// How many lines.
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    /// Whether the table has no line.
    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }
}

/// A file compared with its last line table.
#[derive(Debug)]
pub struct Compared {
    /// The quads of the table's lines that the file no longer has.
    pub gone: Vec<Quad>,
    /// The quads of the file's lines that the table lacks.
    pub new: Vec<Quad>,
    /// The file's line table now.
    pub table: LineTable,
}

impl Compared {
    /// An unchanged file: its table as it was.
    pub fn unchanged(table: LineTable) -> Self {
        Self {
            gone: Vec::new(),
            new: Vec::new(),
            table,
        }
    }
}

/// The asserted quads removed and added when the compared files replace their last versions (`old` holds what
/// those stated): a gone line's quad is removed unless another line, of any of the files, still states it; a new
/// line's quad is added unless `old` holds it. Both sorted.
pub fn changes(compared: &[Compared], old: &QuadStore) -> (Vec<Quad>, Vec<Quad>) {
    let mut gone: HashSet<Quad> = (compared.iter())
        .flat_map(|c| c.gone.iter().copied())
        .filter(|q| old.contains(*q))
        .collect();
    if !gone.is_empty() {
        // Every line the files state now is looked at (a gone line's quad may be another line's, in any file):
        // in parallel, the few still stated collected, then taken out.
        let stated: Vec<Quad> = (compared.par_iter())
            .flat_map(|c| c.table.quads.par_chunks(1 << 16))
            .flat_map_iter(|chunk| chunk.iter().filter(|q| gone.contains(*q)).copied())
            .collect();
        for q in &stated {
            gone.remove(q);
        }
    }
    let mut removed: Vec<Quad> = gone.into_iter().collect();
    removed.sort_unstable();
    let mut added: Vec<Quad> = (compared.iter())
        .flat_map(|c| c.new.iter().copied())
        .filter(|q| !old.contains(*q))
        .collect();
    added.sort_unstable();
    added.dedup();
    (removed, added)
}

/// Where each hash of a sorted list is: the list cut into `2^bits` buckets by the hash's top bits (about four
/// lines per bucket, one or two cache lines), so a lookup reads a bucket's bounds — a table of 32-bit starts
/// small enough to stay in cache (2 MiB for a million lines) — and then the bucket.
struct Directory<'a> {
    hashes: &'a [u128],
    shift: u32,
    starts: Vec<u32>,
}

impl<'a> Directory<'a> {
    fn new(hashes: &'a [u128]) -> Self {
        let bits = (usize::BITS - hashes.len().leading_zeros())
            .saturating_sub(2)
            .clamp(1, 24);
        let shift = 128 - bits;
        let mut starts = Vec::with_capacity((1 << bits) + 1);
        let mut at = 0;
        for bucket in 0..=(1u128 << bits) {
            while at < hashes.len() && hashes[at] >> shift < bucket {
                at += 1;
            }
            // `compare_file` gives way to a whole read for a table of 2^32 lines or more.
            starts.push(at as u32);
        }
        Self {
            hashes,
            shift,
            starts,
        }
    }

    /// The bucket of `h`.
    fn bucket(&self, h: u128) -> usize {
        (h >> self.shift) as usize
    }

    /// Where `h` is (an empty range when it is not).
    fn find(&self, h: u128) -> Range<usize> {
        let bucket = self.bucket(h);
        let (start, end) = (
            self.starts[bucket] as usize,
            self.starts[bucket + 1] as usize,
        );
        let here = &self.hashes[start..end];
        let first = here.partition_point(|&x| x < h);
        let last = first + here[first..].iter().take_while(|&&x| x == h).count();
        start + first..start + last
    }
}

/// Lines looked up together (see [`scan_range`]).
const BATCH: usize = 16;

/// What a range of the file holds that the table lacks: its new lines (with their line breaks) and their hashes.
/// A range whose new lines pass half of it (and 16 MiB) is not kept: a whole read is then the cheaper way.
struct Fresh {
    text: Vec<u8>,
    hashes: Vec<u128>,
}

/// Whether a line states nothing: blanks, or a comment.
fn is_idle(line: &[u8]) -> bool {
    let at = line
        .iter()
        .position(|&b| b != b' ' && b != b'\t')
        .unwrap_or(line.len());
    at == line.len() || line[at] == b'#'
}

/// Hashes every line of the byte range `start..end` of `path`, marks in `seen` the table's lines it finds, and
/// keeps the others.
fn scan_range(
    path: &Path,
    (start, end): (u64, u64),
    table: &Directory<'_>,
    seen: &[AtomicBool],
    progress: &dyn LoadProgress,
) -> Result<Option<Fresh>, LoadError> {
    /// Why a range stopped early.
    enum Stop {
        Failed(LoadError),
        TooNew,
    }
    let unreadable = |source| {
        Stop::Failed(LoadError::Unreadable {
            path: path.to_path_buf(),
            source,
        })
    };
    let most = ((end - start) / 2).max(16 << 20);
    let mut fresh = Fresh {
        text: Vec::new(),
        hashes: Vec::new(),
    };
    // The lines are looked up a batch at a time, each step of the batch's lookups asking for the memory of the
    // next (the bucket's bounds, then the bucket), so that the cache misses of a batch overlap.
    let read = read_runs(path, (start, end), progress, unreadable, |_, run| {
        if fresh.text.len() as u64 > most {
            return Err(Stop::TooNew);
        }
        let mut lines = chunks::lines_of(run).filter(|line| !is_idle(line));
        let mut slots: [(u128, &[u8]); BATCH] = [(0, &[]); BATCH];
        loop {
            let mut n = 0;
            for (slot, line) in slots.iter_mut().zip(lines.by_ref()) {
                *slot = (hash(line), line);
                n += 1;
            }
            if n == 0 {
                return Ok(());
            }
            let batch = &slots[..n];
            for &(h, _) in batch {
                prefetch(&table.starts[table.bucket(h)]);
            }
            for &(h, _) in batch {
                let start = table.starts[table.bucket(h)] as usize;
                if let Some(first) = table.hashes.get(start) {
                    prefetch(first);
                }
            }
            for &(h, line) in batch {
                let at = table.find(h);
                if at.is_empty() {
                    fresh.hashes.push(h);
                    fresh.text.extend_from_slice(line);
                    fresh.text.push(b'\n');
                } else {
                    for i in at {
                        seen[i].store(true, Ordering::Relaxed);
                    }
                }
            }
        }
    });
    match read {
        Ok(()) => {}
        Err(Stop::TooNew) => return Ok(None),
        Err(Stop::Failed(e)) => return Err(e),
    }
    Ok(Some(fresh))
}

impl Loader {
    /// Compares the N-Triples or N-Quads file `path` with `table`, the line table of its last version: its new
    /// lines' terms are interned into the loader's dictionary, nothing is added to the loader's quads. `None`
    /// when the file must be read whole instead: it is not a regular file, half of it is new, or a new line holds
    /// a blank node, states two statements or does not parse.
    pub fn compare_lines(
        &mut self,
        path: &Path,
        options: &LoadOptions,
        table: LineTable,
        progress: &dyn LoadProgress,
    ) -> Result<Option<Compared>, LoadError> {
        let format = match options.format.or_else(|| DataFormat::from_path(path)) {
            Some(f @ (DataFormat::NTriples | DataFormat::NQuads)) => f,
            _ => return Ok(None),
        };
        self.lenient = options.lenient;
        let compared = self.compare_file(path, format, table, progress);
        self.lenient = false;
        compared
    }

    fn compare_file(
        &mut self,
        path: &Path,
        format: DataFormat,
        table: LineTable,
        progress: &dyn LoadProgress,
    ) -> Result<Option<Compared>, LoadError> {
        let name = path.display().to_string();
        let unreadable = |source| LoadError::Unreadable {
            path: path.to_path_buf(),
            source,
        };
        let mut file = open(path)?;
        let metadata = file.metadata().map_err(unreadable)?;
        // A compressed file's lines are read by decompressing it whole.
        if !metadata.is_file() || super::head_codec(&mut file).map_err(unreadable)?.is_some() {
            return Ok(None);
        }
        let len = metadata.len();
        let ranges = chunks::ranges(
            &mut file,
            len,
            rayon::current_num_threads(),
            chunks::MIN_CHUNK,
        )
        .map_err(unreadable)?;
        drop(file);
        if table.len() >= u32::MAX as usize {
            return Ok(None);
        }
        let directory = Directory::new(&table.hashes);
        let seen: Vec<AtomicBool> = (0..table.len()).map(|_| AtomicBool::new(false)).collect();
        progress.begin(&name, Some(len));
        let scanned: Vec<Result<Option<Fresh>, LoadError>> = ranges
            .par_iter()
            .map(|&range| scan_range(path, range, &directory, &seen, progress))
            .collect();
        progress.end();
        // The new lines, each once, in the file's order.
        let mut text = Vec::new();
        let mut hashes = HashSet::new();
        for fresh in scanned {
            let Some(fresh) = fresh? else {
                return Ok(None);
            };
            let mut lines = fresh.text.split_inclusive(|&b| b == b'\n');
            for h in fresh.hashes {
                let line = lines.next().expect("a line per hash");
                if hashes.insert(h) {
                    text.extend_from_slice(line);
                }
            }
        }
        drop(hashes);
        if memchr::memmem::find(&text, b"_:").is_some() {
            return Ok(None);
        }
        let Some(mut statements) =
            chunks::statements_of((self.lenient, true), format == DataFormat::NQuads, &text)
        else {
            return Ok(None);
        };
        drop(text);
        let (Some(new_lines), true) = (statements.hashes.take(), statements.labels.is_empty())
        else {
            return Ok(None);
        };
        let mut blank = crate::store::dictionary::blank_scope();
        let ids = self.merge_terms(&name, &statements.dict, &statements.labels, &mut blank)?;
        if self.dict.len() > super::TERM_LIMIT {
            return Err(LoadError::TooManyTerms {
                file: name,
                limit: super::TERM_LIMIT as u64,
            });
        }
        let triples: Vec<Triple> = (statements.triples.iter())
            .map(|t| t.map(|id| ids[id.index()]))
            .collect();
        let default = self.target.unwrap_or(TermId::DEFAULT_GRAPH);
        let runs: Vec<(TermId, Range<usize>)> = (statements.runs().into_iter())
            .map(|(g, range)| {
                let graph = if g == TermId::DEFAULT_GRAPH {
                    default
                } else {
                    ids[g.index()]
                };
                (graph, range)
            })
            .collect();
        let mut added: Vec<(u128, Quad)> = quads_of_lines(&new_lines, &runs, &triples).collect();
        added.sort_unstable();
        let new: Vec<Quad> = added.iter().map(|&(_, q)| q).collect();
        let (table, gone) = table.patched(|i| seen[i].load(Ordering::Relaxed), &added);
        Ok(Some(Compared { gone, new, table }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::TermSource;
    use crate::store::load::{DataSource, NoProgress};

    #[test]
    fn the_directory_finds_every_hash_and_only_those() {
        for n in [0usize, 1, 2, 3, 100, 5000] {
            let mut hashes: Vec<u128> = (0..n as u128)
                .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835))
                .collect();
            // A hash twice (two lines that collide) is found as both.
            if n > 2 {
                hashes.push(hashes[1]);
            }
            hashes.sort_unstable();
            let d = Directory::new(&hashes);
            for (i, &h) in hashes.iter().enumerate() {
                let at = d.find(h);
                assert!(at.contains(&i), "n = {n}: {h} at {i}, found {at:?}");
                assert!(hashes[at.clone()].iter().all(|&x| x == h));
            }
            for missing in [u128::MAX, 7, 1 << 127] {
                if !hashes.contains(&missing) {
                    assert!(d.find(missing).is_empty(), "n = {n}: {missing}");
                }
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn a_table_patched_in_place_keeps_the_lines_seen_adds_the_new_ones_sorted_and_gives_the_gone_ones(
            old in proptest::collection::btree_set(0u128..64, 0..40),
            seen_mask in proptest::num::u64::ANY,
            new in proptest::collection::btree_set(64u128..128, 0..40),
        ) {
            // Hashes interleave (old in 0..64 and new in 64..128, spread by a multiplier) so merges cross.
            let spread = |h: u128| h.wrapping_mul(0x9E37_79B9_7F4A_7C15) % 1000;
            let quad = |h: u128| [TermId(h as u32); 4];
            let mut entries: Vec<(u128, Quad)> = old.iter().map(|&h| (spread(h), quad(h))).collect();
            entries.sort_unstable();
            let (hashes, quads) = entries.iter().copied().unzip();
            let table = LineTable::from_parts(hashes, quads).unwrap();
            let seen = |i: usize| seen_mask >> (i % 64) & 1 == 1;
            let mut added: Vec<(u128, Quad)> = new.iter().map(|&h| (spread(h), quad(h))).collect();
            added.sort_unstable();
            let (patched, gone) = table.patched(seen, &added);
            let mut want: Vec<(u128, Quad)> = (entries.iter().enumerate())
                .filter(|&(i, _)| seen(i))
                .map(|(_, &e)| e)
                .chain(added.iter().copied())
                .collect();
            want.sort_unstable();
            let (hashes, quads): (Vec<u128>, Vec<Quad>) = want.into_iter().unzip();
            proptest::prop_assert_eq!(patched.parts(), (&hashes[..], &quads[..]));
            let want_gone: Vec<Quad> = (entries.iter().enumerate())
                .filter(|&(i, _)| !seen(i))
                .map(|(_, &(_, q))| q)
                .collect();
            proptest::prop_assert_eq!(gone, want_gone);
        }
    }

    #[test]
    fn a_table_from_parts_must_be_sorted_and_as_long_as_its_quads() {
        let q = [TermId(0); 4];
        assert!(LineTable::from_parts(vec![1, 2], vec![q, q]).is_some());
        assert!(LineTable::from_parts(vec![2, 1], vec![q, q]).is_none());
        assert!(LineTable::from_parts(vec![1], vec![q, q]).is_none());
    }

    /// The store and line table of an N-Triples text loaded whole.
    fn loaded(dir: &Path, text: &str) -> (crate::store::Store, LineTable) {
        let path = dir.join("d.nt");
        std::fs::write(&path, text).unwrap();
        let mut loader = Loader::new();
        loader.keep_lines();
        loader
            .load_source(
                &DataSource::File(path),
                &LoadOptions::default(),
                &NoProgress,
            )
            .unwrap();
        let table = loader.take_line_tables().remove(0).expect("a line table");
        (loader.finish(), table)
    }

    #[test]
    fn comparing_a_new_version_gives_the_lines_gone_and_new_and_the_table_a_whole_read_gives() {
        let dir = tempfile::tempdir().unwrap();
        let old = "<http://e/a> <http://e/p> <http://e/b> .\n# note\n<http://e/b> <http://e/p> <http://e/c> .\n\
                   <http://e/b> <http://e/p> <http://e/c> .\n";
        let (store, table) = loaded(dir.path(), old);
        assert_eq!(table.len(), 2, "a repeated line is one line");
        let new =
            "<http://e/b> <http://e/p> <http://e/c> .\r\n\n<http://e/c> <http://e/p> \"x\"@en .\n";
        let path = dir.path().join("d.nt");
        std::fs::write(&path, new).unwrap();
        let mut loader = Loader::with_dictionary(store.dict.clone());
        let compared = loader
            .compare_lines(&path, &LoadOptions::default(), table, &NoProgress)
            .unwrap()
            .expect("compared");
        let dict = loader.finish().dict;
        let show = |q: &Quad| {
            q[1..]
                .iter()
                .map(|&t| dict.display(t))
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(
            compared.gone.iter().map(show).collect::<Vec<_>>(),
            ["<http://e/a> <http://e/p> <http://e/b>"]
        );
        assert_eq!(
            compared.new.iter().map(show).collect::<Vec<_>>(),
            ["<http://e/c> <http://e/p> \"x\"@en"]
        );
        // The table now is the one a whole read of the new version keeps (the carriage return is not hashed).
        let (_, whole) = loaded(dir.path(), new);
        let (hashes, quads) = compared.table.parts();
        assert_eq!(hashes, whole.parts().0);
        let mut stated: Vec<String> = quads.iter().map(show).collect();
        stated.sort();
        assert_eq!(
            stated,
            [
                "<http://e/b> <http://e/p> <http://e/c>",
                "<http://e/c> <http://e/p> \"x\"@en"
            ]
        );
        let (removed, added) = changes(&[compared], &store.quads);
        assert_eq!(removed.len(), 1);
        assert_eq!(added.len(), 1);
    }

    #[test]
    fn a_new_line_with_a_blank_node_or_a_syntax_error_asks_for_a_whole_read() {
        let dir = tempfile::tempdir().unwrap();
        let (store, table) = loaded(dir.path(), "<http://e/a> <http://e/p> <http://e/b> .\n");
        let path = dir.path().join("d.nt");
        for new in [
            "_:x <http://e/p> <http://e/b> .\n",
            "<http://e/a> <http://e/p> .\n",
        ] {
            std::fs::write(&path, new).unwrap();
            let mut loader = Loader::with_dictionary(store.dict.clone());
            let compared = loader
                .compare_lines(&path, &LoadOptions::default(), table.clone(), &NoProgress)
                .unwrap();
            assert!(compared.is_none(), "{new}");
        }
    }

    #[test]
    fn a_quad_stated_by_a_line_that_stays_is_not_removed() {
        let q = |i: u32| [TermId(0), TermId(i), TermId(i), TermId(i)];
        let old = QuadStore::from_graphs([(TermId(0), vec![[TermId(1); 3], [TermId(2); 3]])]);
        // The table now: a line that stays (q1), and the new lines (q3, and q2 again).
        let stays = LineTable::from_entries(vec![(5, q(1)), (6, q(3)), (7, q(2))]);
        let c = Compared {
            gone: vec![q(1), q(2)],
            new: vec![q(3), q(2)],
            table: stays,
        };
        assert_eq!(changes(&[c], &old), (vec![], vec![q(3)]));
    }
}
