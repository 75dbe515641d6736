//! This module defines the loading of a compressed N-Triples or N-Quads file: one thread decompresses it into
//! line-aligned blocks while the others parse the blocks ([`Statements`]), merged in document order as the
//! ranges of a plain file are.

use std::collections::BTreeMap;
use std::io::{self, Read};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;

use rayon::prelude::*;

use super::chunks::statements_of;
use super::lines::Statements;
use super::{Counted, DataFormat, LoadError, LoadProgress, Loader, open};
use crate::codec::Codec;

/// Decompressed bytes per block (a line longer than this makes its block longer).
pub(super) const BLOCK: usize = 4 << 20;

/// Which blocks of a compressed file a share takes: those that start (the compressed bytes read when the block
/// begins) at `from` or past it and before `to`.
pub(super) struct Within {
    /// The compressed bytes read so far ([`Codec::decoder`]'s count).
    pub(super) read: Arc<AtomicU64>,
    /// The range of block starts taken.
    pub(super) range: (u64, u64),
    /// What the blocks taken cover of the decompressed text: where the first starts, where the last ends, and
    /// whether the text ended there (for the processes to check that their shares tile the file).
    pub(super) covered: std::sync::Mutex<Option<(u64, u64, bool)>>,
}

/// Reads `reader` into blocks of about `size` bytes that end at a line break (the last may not), numbered in
/// order, until it ends, fails, or nobody takes the blocks any more. With `within`, only the blocks that start
/// in its range are handed on (numbered from 0), and reading stops at the first block past it.
fn blocks(
    mut reader: impl Read,
    size: usize,
    (stop, within): (&AtomicBool, Option<&Within>),
    tx: &mpsc::SyncSender<io::Result<(usize, Vec<u8>)>>,
) {
    let mut carry: Vec<u8> = Vec::new();
    let mut k = 0;
    let mut first = true;
    // Where the next block starts in the decompressed text.
    let mut at = 0u64;
    loop {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        // Where this block starts in the compressed file: before, in or past the share's range.
        let taken = match within {
            None => true,
            Some(w) => {
                let at = w.read.load(Ordering::Relaxed);
                if at >= w.range.1 {
                    return;
                }
                at >= w.range.0
            }
        };
        let mut block = Vec::with_capacity(size + carry.len());
        block.append(&mut carry);
        let ended = loop {
            let want = size.saturating_sub(block.len()).max(size / 16).max(1);
            match (&mut reader).take(want as u64).read_to_end(&mut block) {
                Ok(0) => break true,
                Ok(_) if block.len() < size => continue,
                Ok(_) => match memchr::memrchr(b'\n', &block) {
                    Some(at) => {
                        carry.extend_from_slice(&block[at + 1..]);
                        block.truncate(at + 1);
                        break false;
                    }
                    // A line longer than a block: read on.
                    None => continue,
                },
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            }
        };
        // A leading byte-order mark is not part of the first statement.
        if std::mem::take(&mut first) && block.starts_with(super::BOM) {
            block.drain(..super::BOM.len());
        }
        let start = at;
        at += block.len() as u64;
        if let Some(w) = within.filter(|_| taken) {
            let mut covered = w.covered.lock().unwrap_or_else(|e| e.into_inner());
            let from = covered.map_or(start, |c| c.0);
            *covered = Some((from, at, ended));
        }
        if taken && !block.is_empty() {
            if tx.send(Ok((k, block))).is_err() {
                return;
            }
            k += 1;
        }
        if ended {
            return;
        }
    }
}

impl Loader {
    /// Loads the compressed N-Triples or N-Quads file `path`: decompressed on one thread, its blocks parsed on
    /// the others, merged in document order. `Ok(false)`: a line oxttl refuses, and nothing was loaded (the
    /// caller parses the file sequentially, which reports the error).
    /// With `range`, only the blocks that start there in the compressed file ([`Within`]).
    pub(super) fn load_compressed_lines(
        &mut self,
        path: &Path,
        name: &str,
        (format, codec): (DataFormat, Codec),
        (size, range): (usize, Option<(u64, u64)>),
        progress: &dyn LoadProgress,
    ) -> Result<bool, LoadError> {
        let file = open(path)?;
        let len = file.metadata().ok().map(|m| m.len());
        progress.begin(name, len);
        let reader = codec.decoder(Counted {
            inner: file,
            progress,
            pending: 0,
        });
        let within = range.map(|range| Within {
            read: reader.compressed_read(),
            range,
            covered: std::sync::Mutex::new(None),
        });
        // No line table: a compressed file is compared with a state by reading it whole.
        let flags = (self.lenient, false);
        let with_graphs = format == DataFormat::NQuads;
        let stop = AtomicBool::new(false);
        let (to_parse, blocks_in) = mpsc::sync_channel(2);
        let (parsed_out, parsed) = mpsc::channel::<io::Result<(usize, Option<Statements>)>>();
        let stop = &stop;
        let merged = std::thread::scope(|scope| -> Result<bool, LoadError> {
            let within = within.as_ref();
            let reading = scope.spawn(move || blocks(reader, size, (stop, within), &to_parse));
            let parsing = scope.spawn(move || {
                blocks_in.into_iter().par_bridge().for_each(|block| {
                    let parsed =
                        block.map(|(k, text)| (k, statements_of(flags, with_graphs, &text)));
                    let _ = parsed_out.send(parsed);
                });
            });
            // Merged in order as they are parsed: block k waits in `early` until every block before it is in.
            let mut merge = self.merge_start();
            let mut early: BTreeMap<usize, Statements> = BTreeMap::new();
            let mut next = 0;
            let outcome = (|| {
                for message in parsed.iter() {
                    let (k, chunk) = message.map_err(|e| super::io_error(name, e))?;
                    let Some(chunk) = chunk else {
                        return Ok(false);
                    };
                    early.insert(k, chunk);
                    while let Some(chunk) = early.remove(&next) {
                        self.merge_chunk(&mut merge, name, chunk, 0)?;
                        next += 1;
                    }
                }
                Ok(true)
            })();
            // On a failure the reader stops at its next block; what is parsed by then goes unmerged.
            stop.store(true, Ordering::Relaxed);
            drop(parsed);
            if outcome.as_ref().is_ok_and(|&done| done) {
                self.merge_finish(merge);
            }
            // Joined, not detached by dropping their handles (see `Loader::load_reader`): the reader stops at
            // the flag, the parsers when its channel closes.
            for thread in [reading, parsing] {
                if let Err(panic) = thread.join() {
                    std::panic::resume_unwind(panic);
                }
            }
            outcome
        });
        progress.end();
        if let Some(w) = within {
            self.covered = w.covered.into_inner().unwrap_or_else(|e| e.into_inner());
        }
        merged
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::store::load::{DataSource, LoadOptions, NoProgress};

    #[test]
    fn blocks_end_at_line_breaks_and_keep_a_long_line_whole() {
        let long = "x".repeat(100);
        let text = format!("a\nbb\n{long}\nccc\nd");
        let (tx, rx) = mpsc::sync_channel(64);
        blocks(text.as_bytes(), 8, (&AtomicBool::new(false), None), &tx);
        drop(tx);
        let got: Vec<(usize, Vec<u8>)> = rx.into_iter().map(Result::unwrap).collect();
        assert_eq!(
            got.iter().map(|b| b.0).collect::<Vec<_>>(),
            (0..got.len()).collect::<Vec<_>>()
        );
        let whole: Vec<u8> = got.iter().flat_map(|b| b.1.clone()).collect();
        assert_eq!(whole, text.as_bytes());
        for (_, block) in &got[..got.len() - 1] {
            assert_eq!(block.last(), Some(&b'\n'));
        }
        assert!(
            got.iter()
                .any(|(_, b)| b.windows(100).any(|w| w == long.as_bytes()))
        );
    }

    #[test]
    fn small_blocks_load_to_the_ids_and_quads_of_the_plain_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut text = String::new();
        for i in 0..500 {
            text.push_str(&format!(
                "<http://e/s{i}> <http://e/p{}> \"v{}\" <http://e/g{}> .\n_:b{} <http://e/q> <http://e/s{i}> .\n",
                i % 7,
                i % 13,
                i % 3,
                i % 11
            ));
        }
        let plain = dir.path().join("d.nq");
        std::fs::write(&plain, &text).unwrap();
        let packed = dir.path().join("d.nq.zst");
        let mut e = Codec::Zstd.encoder(Vec::new()).unwrap();
        e.write_all(text.as_bytes()).unwrap();
        std::fs::write(&packed, e.finish().unwrap()).unwrap();
        let mut whole = Loader::new();
        whole
            .load_source(
                &DataSource::File(plain),
                &LoadOptions::default(),
                &NoProgress,
            )
            .unwrap();
        let whole = whole.finish();
        let mut blocked = Loader::new();
        let loaded = blocked
            .load_compressed_lines(
                &packed,
                "d",
                (DataFormat::NQuads, Codec::Zstd),
                (256, None),
                &NoProgress,
            )
            .unwrap();
        assert!(loaded);
        let blocked = blocked.finish();
        assert_eq!(blocked.dict.to_parts(), whole.dict.to_parts());
        let quads = |s: &crate::store::Store| s.quads.quads().collect::<Vec<_>>();
        assert_eq!(quads(&blocked), quads(&whole));
    }
}
