//! This module defines where results go: RDF writers, atomic files, progress bars.

pub mod annotated;
pub mod deps;
pub mod explain;
pub mod files;
pub mod progress;
pub mod rdf;
pub mod results;

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use miette::Diagnostic;
use thiserror::Error;

use crate::codec::Codec;
use crate::store::{Quad, TermId, TermRef, TermSource};
pub use rdf::RdfOutputFormat;

/// Where a dataset is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutputTarget {
    /// Standard output.
    Stdout,
    /// One file, written atomically.
    File(PathBuf),
    /// One file per graph in a directory (plus a `graphs.tsv` index), each written atomically.
    Dir(PathBuf),
}

/// Why output failed.
#[derive(Debug, Error, Diagnostic)]
pub enum OutputError {
    /// A file could not be written.
    #[error("cannot write {path}: {reason}")]
    #[diagnostic(
        code(reasonctl::output::write),
        help("check that the directory exists and is writable; nothing was left half-written")
    )]
    Write {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        reason: String,
    },
    /// Writing to standard output failed.
    #[error("cannot write to standard output: {0}")]
    #[diagnostic(code(reasonctl::output::stdout))]
    Stdout(#[source] io::Error),
    /// A one-graph syntax was asked for a dataset with named graphs.
    #[error(
        "{format} cannot say which graph a triple is in, and the output has {graphs} named graph(s)"
    )]
    #[diagnostic(
        code(reasonctl::output::graphs_need_quads),
        help(
            "use --format trig or --format nquads, or --out-dir DIR to write one {format} file per graph"
        )
    )]
    GraphsNeedQuads {
        /// The requested syntax.
        format: &'static str,
        /// How many named graphs the output holds.
        graphs: usize,
    },
}

impl OutputError {
    /// Whether the reader of standard output went away (`| head`): not a failure of ours.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, OutputError::Stdout(e) if e.kind() == io::ErrorKind::BrokenPipe)
    }
}

/// How [`C1Escaped`] writes a C1 control character.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum C1 {
    /// As it is (a file, a pipe; CSV, which has no escape).
    AsIs,
    /// `\u009B`: RDF text, an RDF Patch, SPARQL JSON and TSV results.
    Unicode,
    /// `&#x9B;`: SPARQL XML results (XML 1.0 reads the reference back as the same character).
    XmlReference,
}

impl C1 {
    /// `escaped` on a terminal, [`C1::AsIs`] elsewhere.
    pub fn on_terminal(terminal: bool, escaped: C1) -> C1 {
        if terminal { escaped } else { C1::AsIs }
    }
}

/// A writer of text shown on a terminal: each C1 control character (U+0080–U+009F, in UTF-8 the bytes
/// `C2 80`–`C2 9F`), which RDF syntaxes and SPARQL results leave as it is and some terminals obey (U+009B is CSI),
/// is written as the escape the text's syntax reads back as the same character ([`C1`]); C0 controls are escaped
/// by the syntax already. Only a literal or an IRI can hold one, and both take the escape.
pub struct C1Escaped<W: Write> {
    inner: W,
    /// A `C2` byte that ended the last write, held until the next byte says what it starts.
    held: bool,
    style: C1,
}

impl<W: Write> C1Escaped<W> {
    /// Wraps a writer.
    pub fn new(inner: W, style: C1) -> Self {
        Self {
            inner,
            held: false,
            style,
        }
    }

    fn escape(&mut self, c1: u8) -> io::Result<()> {
        if self.style == C1::XmlReference {
            write!(self.inner, "&#x{c1:02X};")
        } else {
            write!(self.inner, "\\u00{c1:02X}")
        }
    }
}

impl<W: Write> Write for C1Escaped<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.style == C1::AsIs {
            return self.inner.write(buf);
        }
        let c1 = |b: u8| (0x80..=0x9F).contains(&b);
        let (mut start, mut i) = (0, 0);
        if std::mem::take(&mut self.held) {
            match buf.first() {
                Some(&b) if c1(b) => {
                    self.escape(b)?;
                    (start, i) = (1, 1);
                }
                _ => self.inner.write_all(&[0xC2])?,
            }
        }
        while i < buf.len() {
            if buf[i] == 0xC2 {
                match buf.get(i + 1) {
                    Some(&b) if c1(b) => {
                        self.inner.write_all(&buf[start..i])?;
                        self.escape(b)?;
                        i += 2;
                        start = i;
                        continue;
                    }
                    None => {
                        self.inner.write_all(&buf[start..i])?;
                        self.held = true;
                        return Ok(buf.len());
                    }
                    Some(_) => {}
                }
            }
            i += 1;
        }
        self.inner.write_all(&buf[start..])?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if std::mem::take(&mut self.held) {
            self.inner.write_all(&[0xC2])?;
        }
        self.inner.flush()
    }
}

/// A writer that remembers whether what it wrote ends with a line break, and ends it with one when not.
pub struct LineEnded<W: Write> {
    inner: W,
    last: Option<u8>,
}

impl<W: Write> LineEnded<W> {
    /// Wraps a writer.
    pub fn new(inner: W) -> Self {
        Self { inner, last: None }
    }

    /// Writes a line break unless nothing was written or it already ends with one.
    pub fn finish(mut self) -> io::Result<()> {
        if self.last.is_some_and(|b| b != b'\n') {
            self.inner.write_all(b"\n")?;
        }
        self.inner.flush()
    }
}

impl<W: Write> Write for LineEnded<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        if n > 0 {
            self.last = Some(buf[n - 1]);
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Writes quads (in output order, see [`rdf::sort_quads`]) to a target, in a syntax, compressed or not.
pub fn write_dataset(
    dict: &(impl TermSource + Sync + ?Sized),
    prefixes: &[(String, String)],
    quads: &[Quad],
    (format, codec): (RdfOutputFormat, Option<Codec>),
    target: &OutputTarget,
) -> Result<(), OutputError> {
    // The quads written to `w`, through the codec's encoder (finished: a stream cut short is an error).
    let write = |quads: &[Quad], w: &mut dyn Write| -> io::Result<()> {
        crate::codec::write_through(codec, w, |w| {
            rdf::write_quads(dict, prefixes, quads, format, w).map(|_| ())
        })
    };
    match target {
        OutputTarget::Stdout => {
            check_graphs(quads, format)?;
            let stdout = io::stdout();
            // On a terminal (and not compressed), C1 controls in the data are shown escaped, not obeyed.
            let terminal = codec.is_none() && io::IsTerminal::is_terminal(&stdout);
            let mut out = C1Escaped::new(
                io::BufWriter::with_capacity(1 << 16, stdout.lock()),
                C1::on_terminal(terminal, C1::Unicode),
            );
            write(quads, &mut out)
                .and_then(|()| out.flush())
                .map_err(OutputError::Stdout)
        }
        OutputTarget::File(path) => {
            check_graphs(quads, format)?;
            files::write_atomically(path, |w| write(quads, w)).map_err(write_error(path.clone()))
        }
        OutputTarget::Dir(dir) => {
            files::ensure_dir(dir).map_err(write_error(dir.clone()))?;
            // The files an earlier run listed: those this run does not write again go, after the new index,
            // so that the folder holds this run's graphs only (files it never listed stay).
            let earlier = earlier_files(dir);
            let mut written: Vec<String> = Vec::new();
            let mut staged: Vec<files::Staged> = Vec::new();
            // Each file written beside its place (a staged temporary); on the first failure, those staged go.
            let mut stage_all = || -> Result<(), OutputError> {
                let mut stage = |path: PathBuf, w: &dyn Fn(&mut dyn Write) -> io::Result<()>| {
                    files::stage(&path, w)
                        .map(|s| staged.extend(s))
                        .map_err(write_error(path))
                };
                let mut index = String::from("file\tgraph\n");
                for (graph, parts) in by_graph(quads) {
                    let joined: Vec<Quad>;
                    let chunk: &[Quad] = match parts.as_slice() {
                        [one] => one,
                        _ => {
                            joined = parts.concat();
                            &joined
                        }
                    };
                    let iri = match dict.term(graph) {
                        TermRef::Iri(iri) => Some(iri.to_string()),
                        TermRef::Blank(n) => Some(format!("_:b{n}")),
                        _ => None,
                    };
                    let mut name = format!(
                        "{}.{}",
                        files::graph_file_stem(iri.as_deref()),
                        format.extension()
                    );
                    if let Some(codec) = codec {
                        name = format!("{name}.{}", codec.extension());
                    }
                    stage(dir.join(&name), &|w| write(chunk, w))?;
                    index.push_str(&format!("{name}\t{}\n", iri.as_deref().unwrap_or("")));
                    written.push(name);
                }
                stage(dir.join("graphs.tsv"), &|w| w.write_all(index.as_bytes()))
            };
            if let Err(e) = stage_all() {
                files::discard(staged);
                return Err(e);
            }
            // Every file is written before any is put in place: a run stopped or failed while writing leaves the
            // folder as it was.
            files::commit(staged).map_err(write_error(dir.clone()))?;
            for name in earlier.iter().filter(|n| !written.contains(n)) {
                let stale = dir.join(name);
                // A regular file only, never through a link or over a device.
                if fs::symlink_metadata(&stale).is_ok_and(|m| m.is_file()) {
                    fs::remove_file(&stale).map_err(write_error(stale))?;
                }
            }
            Ok(())
        }
    }
}

/// The file names an earlier run's `graphs.tsv` in `dir` lists (plain names only: no path, no hidden file, not
/// the index itself); none when there is no index or it is not a regular file.
fn earlier_files(dir: &Path) -> Vec<String> {
    let path = dir.join("graphs.tsv");
    if !fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
        return Vec::new();
    }
    let Ok(text) = fs::read_to_string(&path) else {
        return Vec::new();
    };
    text.lines()
        .skip(1)
        .filter_map(|l| l.split('\t').next())
        .filter(|n| {
            !n.is_empty() && !n.starts_with('.') && *n != "graphs.tsv" && !n.contains(['/', '\\'])
        })
        .map(str::to_owned)
        .collect()
}

/// The quads of each graph, in the order given, the graphs in the order they first come: a graph's quads need
/// not be adjacent (with `--provenance`, the reifiers follow every graph's facts), and each graph is one file.
fn by_graph(quads: &[Quad]) -> Vec<(TermId, Vec<&[Quad]>)> {
    let mut groups: Vec<(TermId, Vec<&[Quad]>)> = Vec::new();
    let mut at: hashbrown::HashMap<TermId, usize> = hashbrown::HashMap::new();
    for run in quads.chunk_by(|a, b| a[0] == b[0]) {
        let i = *at.entry(run[0][0]).or_insert_with(|| {
            groups.push((run[0][0], Vec::new()));
            groups.len() - 1
        });
        groups[i].1.push(run);
    }
    groups
}

/// The error for a failed write of `path`, without the temporary file's name the I/O layer adds.
fn write_error(path: PathBuf) -> impl FnOnce(io::Error) -> OutputError {
    move |e| {
        let text = e.to_string();
        let reason = text.split(" at path ").next().unwrap_or(&text).to_owned();
        OutputError::Write { path, reason }
    }
}

fn check_graphs(quads: &[Quad], format: RdfOutputFormat) -> Result<(), OutputError> {
    if format.holds_graphs() {
        return Ok(());
    }
    let mut named: Vec<TermId> = quads
        .iter()
        .map(|q| q[0])
        .filter(|&g| g != TermId::DEFAULT_GRAPH)
        .collect();
    named.dedup();
    named.sort_unstable();
    named.dedup();
    if named.is_empty() {
        Ok(())
    } else {
        Err(OutputError::GraphsNeedQuads {
            format: format.name(),
            graphs: named.len(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c1_controls_are_escaped_even_when_a_write_ends_inside_one_and_other_text_is_kept() {
        // "a", U+009B, "é" (C3 A9), U+0085, "Â" (C3 82: a C2-free lead), U+00A0 (C2 A0: not a control), "z".
        let text = "a\u{9b}é\u{85}Â\u{a0}z".as_bytes();
        let expected = "a\\u009Bé\\u0085Â\u{a0}z";
        for cut in 0..=text.len() {
            let mut out = C1Escaped::new(Vec::new(), C1::Unicode);
            out.write_all(&text[..cut]).unwrap();
            out.write_all(&text[cut..]).unwrap();
            out.flush().unwrap();
            assert_eq!(
                String::from_utf8(out.inner).unwrap(),
                expected,
                "cut at {cut}"
            );
        }
        let mut xml = C1Escaped::new(Vec::new(), C1::XmlReference);
        xml.write_all(text).unwrap();
        assert_eq!(
            String::from_utf8(xml.inner).unwrap(),
            "a&#x9B;é&#x85;Â\u{a0}z"
        );
        let mut kept = C1Escaped::new(Vec::new(), C1::AsIs);
        kept.write_all(text).unwrap();
        assert_eq!(kept.inner, text);
    }
}
