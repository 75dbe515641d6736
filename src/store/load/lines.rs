//! This module defines [`Statements`]: the statement reader of N-Triples and N-Quads, which parses a line in the
//! common form in place and interns its terms at once, and hands any other line to oxttl.
//!
//! The common form: IRIs without escapes, ASCII blank-node labels, literals (escapes included) plain, with a
//! language tag (no base direction) or with a datatype, one statement per line, an optional comment after the
//! dot, space and tab between terms. Everything else — triple terms, `\u` in IRIs, directional or unusual
//! language tags, non-ASCII labels, stray characters — is oxttl's to parse, line by line, so what loads and
//! what it means stay oxttl's: the fast path accepts a line only where oxttl accepts it too, with the same
//! terms, and checks what oxttl checks (each new IRI with oxiri, each language tag with oxilangtag) unless
//! `lenient`. A line oxttl refuses stops the reader; the caller then parses the file with oxttl from the start,
//! which reports the error with its position.

use std::io::{self, Read};

use hashbrown::HashMap;
use memchr::memchr2;
use oxttl::{NQuadsParser, NTriplesParser};

use crate::store::Dictionary;
use crate::store::term::{LiteralKind, TermId, Triple};

const RDF_LANG_STRING: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString";
const RDF_DIR_LANG_STRING: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#dirLangString";
const XSD_STRING: &str = "http://www.w3.org/2001/XMLSchema#string";

/// One range of a line-based file, parsed: its own dictionary (terms numbered in order of first appearance, the
/// graph first, then subject, predicate, object), the label of each of its blank nodes, and its statements.
pub(super) struct Statements {
    /// The range's terms.
    pub dict: Dictionary,
    /// Blank node number `n` of `dict` was written `_:labels[n]`.
    pub labels: Vec<Box<str>>,
    /// The statements' triples, in order.
    pub triples: Vec<Triple>,
    /// The graph of each run of statements: where the run starts in `triples`, and its graph (the default graph
    /// is [`TermId::DEFAULT_GRAPH`]); consecutive statements of one graph are one run.
    pub graphs: Vec<(usize, TermId)>,
    /// Blank-node label -> node.
    pub blanks: HashMap<Box<str>, TermId>,
    /// When kept ([`Statements::keep_lines`]): each line that states one statement, by its hash
    /// ([`super::dump::hash`]), with that statement's place in `triples`; `None` once a line states more than one
    /// (such a file has no line table).
    pub hashes: Option<Vec<(u128, usize)>>,
    keep_lines: bool,
    lenient: bool,
    with_graphs: bool,
    /// A literal's text with its escapes resolved.
    text: String,
    /// A language tag, lower-cased.
    lang: String,
    /// The last language tag found valid (as written).
    valid_lang: String,
}

/// Why a line did not load.
#[derive(Debug)]
pub(super) struct Refused;

/// A term of a line, as written.
#[derive(Clone, Copy)]
enum Term<'a> {
    Iri(&'a str),
    Blank(&'a str),
    /// A literal: its text between the quotes, whether that holds escapes, and its tag or datatype.
    Literal(&'a str, bool, Tail<'a>),
}

#[derive(Clone, Copy)]
enum Tail<'a> {
    Simple,
    Lang(&'a str),
    Typed(&'a str),
}

impl Statements {
    /// An empty reader; `with_graphs` for N-Quads.
    pub fn new(lenient: bool, with_graphs: bool) -> Self {
        Self {
            dict: Dictionary::new(),
            labels: Vec::new(),
            triples: Vec::new(),
            graphs: Vec::new(),
            blanks: HashMap::new(),
            hashes: None,
            keep_lines: false,
            lenient,
            with_graphs,
            text: String::new(),
            lang: String::new(),
            valid_lang: String::new(),
        }
    }

    /// Keeps the hash of each line that states a statement ([`Statements::hashes`]).
    pub fn keep_lines(&mut self) {
        self.keep_lines = true;
        self.hashes = Some(Vec::new());
    }

    /// Reads one line (without its line break).
    pub fn line(&mut self, line: &[u8]) -> Result<(), Refused> {
        if !self.keep_lines {
            return self.read(line);
        }
        let before = self.triples.len();
        self.read(line)?;
        match self.triples.len() - before {
            0 => {}
            1 => {
                if let Some(hashes) = &mut self.hashes {
                    hashes.push((super::dump::hash(line), before));
                }
            }
            _ => self.hashes = None,
        }
        Ok(())
    }

    fn read(&mut self, line: &[u8]) -> Result<(), Refused> {
        // versionDirective ::= 'VERSION' versionSpecifier (RDF 1.2 N-Triples and N-Quads; oxttl 0.2 reads it in
        // Turtle only): the version says what the document may use, and is not a statement.
        if is_version(line) {
            return Ok(());
        }
        // A carriage return inside a line ends a statement, or is a raw one inside a literal (which oxttl takes
        // when lenient): oxttl's to read.
        let Some(text) = std::str::from_utf8(line)
            .ok()
            .filter(|_| memchr::memchr(b'\r', line).is_none())
        else {
            return self.with_oxttl(line);
        };
        match self.fast(text) {
            None => self.with_oxttl(line),
            Some(None) => Ok(()),
            // A term the fast path cannot take after all (an escape it does not resolve, a check that fails)
            // leaves the line to oxttl; the terms interned before it are the line's first ones, in oxttl's order.
            Some(Some(terms)) => match self.intern(terms) {
                Some(()) => Ok(()),
                None => self.with_oxttl(line),
            },
        }
    }

    /// The terms of a line in the common form (`Some(None)`: nothing but blanks or a comment); `None`: the line
    /// is not in the common form.
    fn fast<'a>(&self, line: &'a str) -> Option<Option<[Option<Term<'a>>; 4]>> {
        let b = line.as_bytes();
        let mut i = skip_blanks(b, 0);
        if i == b.len() || b[i] == b'#' {
            return Some(None);
        }
        let (s, at) = term(line, i)?;
        let (p, at) = term(line, skip_blanks(b, at))?;
        let (o, at) = term(line, skip_blanks(b, at))?;
        if matches!(s, Term::Literal(..)) || !matches!(p, Term::Iri(_)) {
            return None;
        }
        i = skip_blanks(b, at);
        let mut g = None;
        if self.with_graphs && matches!(b.get(i), Some(b'<' | b'_')) {
            let (graph, at) = term(line, i)?;
            if matches!(graph, Term::Literal(..)) {
                return None;
            }
            g = Some(graph);
            i = skip_blanks(b, at);
        }
        if b.get(i) != Some(&b'.') {
            return None;
        }
        i = skip_blanks(b, i + 1);
        if i < b.len() && b[i] != b'#' {
            return None;
        }
        Some(Some([g, Some(s), Some(p), Some(o)]))
    }

    /// Interns one statement's terms, graph first (no graph: the default graph); `None` when a term is refused.
    fn intern(&mut self, terms: [Option<Term<'_>>; 4]) -> Option<()> {
        let mut quad = [TermId::DEFAULT_GRAPH; 4];
        for (slot, term) in quad.iter_mut().zip(terms) {
            if let Some(term) = term {
                *slot = self.term_id(term)?;
            }
        }
        self.push(quad);
        Some(())
    }

    fn push(&mut self, [g, s, p, o]: [TermId; 4]) {
        if self.graphs.last().is_none_or(|&(_, last)| last != g) {
            self.graphs.push((self.triples.len(), g));
        }
        self.triples.push([s, p, o]);
    }

    /// Each run of statements of one graph: the graph and the run's range in `triples`.
    pub fn runs(&self) -> Vec<(TermId, std::ops::Range<usize>)> {
        (self.graphs.iter().enumerate())
            .map(|(i, &(start, g))| {
                let end = self.graphs.get(i + 1).map_or(self.triples.len(), |r| r.0);
                (g, start..end)
            })
            .collect()
    }

    fn term_id(&mut self, term: Term<'_>) -> Option<TermId> {
        match term {
            Term::Iri(iri) => self.iri(iri),
            Term::Blank(label) => Some(self.blank(label)),
            Term::Literal(raw, escaped, tail) => {
                let kind = match tail {
                    Tail::Simple => LiteralKind::Simple,
                    Tail::Typed(XSD_STRING) => LiteralKind::Simple,
                    Tail::Typed(dt) => LiteralKind::Typed(self.iri(dt)?),
                    Tail::Lang(tag) => {
                        if !self.lenient && tag != self.valid_lang {
                            oxilangtag::LanguageTag::parse(tag).ok()?;
                            self.valid_lang.clear();
                            self.valid_lang.push_str(tag);
                        }
                        self.lang.clear();
                        self.lang.push_str(tag);
                        self.lang.make_ascii_lowercase();
                        LiteralKind::Lang {
                            tag: &self.lang,
                            direction: None,
                        }
                    }
                };
                let lexical = if escaped {
                    unescape(raw, &mut self.text)?;
                    self.text.as_str()
                } else {
                    raw
                };
                Some(self.dict.intern_literal(lexical, kind))
            }
        }
    }

    /// An IRI, checked by oxiri the first time this range meets it (unless lenient).
    fn iri(&mut self, iri: &str) -> Option<TermId> {
        if self.lenient {
            return Some(self.dict.intern_iri(iri));
        }
        self.dict
            .intern_iri_if(iri, |text| oxiri::Iri::parse(text).is_ok())
    }

    fn blank(&mut self, label: &str) -> TermId {
        let Self {
            dict,
            labels,
            blanks,
            ..
        } = self;
        label_scope(blanks, labels)(dict, label)
    }

    /// A line outside the common form, parsed by oxttl (which may find several statements in it, or none).
    fn with_oxttl(&mut self, line: &[u8]) -> Result<(), Refused> {
        // Triple terms nested too deep, or a comment that is not UTF-8 (oxttl skips comments unread): the reload
        // through the guarded parser says where.
        super::guard::Scanner::new(super::guard::Family::Turtle)
            .scan(line)
            .map_err(|_| Refused)?;
        let quads: Vec<oxrdf::Quad> = if self.with_graphs {
            let parser = if self.lenient {
                NQuadsParser::new().lenient()
            } else {
                NQuadsParser::new()
            };
            parser.for_slice(line).collect::<Result<_, _>>()
        } else {
            let parser = if self.lenient {
                NTriplesParser::new().lenient()
            } else {
                NTriplesParser::new()
            };
            parser
                .for_slice(line)
                .map(|t| t.map(|t| t.in_graph(oxrdf::GraphName::DefaultGraph)))
                .collect::<Result<_, _>>()
        }
        .map_err(|_| Refused)?;
        let mut read = Vec::with_capacity(quads.len());
        let mut blank = label_scope(&mut self.blanks, &mut self.labels);
        for q in quads {
            let dict = &mut self.dict;
            let g = match q.graph_name.as_ref() {
                oxrdf::GraphNameRef::DefaultGraph => TermId::DEFAULT_GRAPH,
                oxrdf::GraphNameRef::NamedNode(n) => dict.intern_iri(n.as_str()),
                oxrdf::GraphNameRef::BlankNode(b) => blank(dict, b.as_str()),
            };
            let s = dict.intern_term(q.subject.as_ref().into(), &mut blank);
            let p = dict.intern_iri(q.predicate.as_str());
            let o = dict.intern_term(q.object.as_ref(), &mut blank);
            read.push([g, s, p, o]);
        }
        drop(blank);
        for quad in read {
            self.push(quad);
        }
        Ok(())
    }
}

/// The range's blank-node scope, as [`Dictionary::intern_term`] takes it: a label gets a fresh node the first
/// time it is met (its label recorded at the node's number) and the same node after.
fn label_scope<'s>(
    blanks: &'s mut HashMap<Box<str>, TermId>,
    labels: &'s mut Vec<Box<str>>,
) -> impl FnMut(&mut Dictionary, &str) -> TermId + 's {
    move |dict, label| {
        if let Some(&id) = blanks.get(label) {
            return id;
        }
        let id = dict.new_blank_node();
        debug_assert_eq!(labels.len() as u32 + 1, dict.blank_count());
        labels.push(label.into());
        blanks.insert(label.into(), id);
        id
    }
}

/// The most bytes a line may hold and still be waited for as a version directive when a read cuts it.
const MAX_DIRECTIVE: usize = 4096;

/// A reader of N-Triples or N-Quads for oxttl that turns each `VERSION "…"` line into blanks of the same length
/// (oxttl 0.2 reads the directive in Turtle only; positions stay where they were). A line a read cuts short is
/// held back until its end while it may still be a directive (blanks, then a prefix of `VERSION`, at most
/// 4 KiB); every other byte passes at once.
pub struct VersionLines<R> {
    inner: R,
    buf: Vec<u8>,
    /// Bytes before this were handed out.
    start: usize,
    /// Bytes before this are final.
    done: usize,
    /// `done` is inside a line that is no directive (its rest passes unread).
    mid_line: bool,
    ended: bool,
}

impl<R: Read> VersionLines<R> {
    /// Reads `inner`.
    pub fn new(inner: R) -> Self {
        Self {
            inner,
            buf: Vec::new(),
            start: 0,
            done: 0,
            mid_line: false,
            ended: false,
        }
    }

    /// Makes final what can be: whole lines (directives blanked), and a cut line that cannot be a directive.
    fn settle(&mut self) {
        loop {
            let rest = &self.buf[self.done..];
            let end = memchr::memchr(b'\n', rest);
            if self.mid_line {
                match end {
                    Some(e) => {
                        self.done += e + 1;
                        self.mid_line = false;
                    }
                    None => {
                        self.done = self.buf.len();
                        return;
                    }
                }
                continue;
            }
            match end {
                Some(e) => {
                    if is_version(&rest[..e]) {
                        let at = self.done;
                        self.buf[at..at + e].fill(b' ');
                    }
                    self.done += e + 1;
                }
                None if self.ended => {
                    if is_version(rest) {
                        let at = self.done;
                        self.buf[at..].fill(b' ');
                    }
                    self.done = self.buf.len();
                    return;
                }
                None => {
                    let i = skip_blanks(rest, 0);
                    let word = &rest[i..];
                    let may_be = rest.len() <= MAX_DIRECTIVE
                        && (word.len() >= 7 && word.starts_with(b"VERSION")
                            || b"VERSION".starts_with(word));
                    if !may_be {
                        self.done = self.buf.len();
                        self.mid_line = true;
                    }
                    return;
                }
            }
        }
    }
}

impl<R: Read> Read for VersionLines<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.start < self.done || out.is_empty() {
                let n = (self.done - self.start).min(out.len());
                out[..n].copy_from_slice(&self.buf[self.start..self.start + n]);
                self.start += n;
                return Ok(n);
            }
            if self.ended {
                return Ok(0);
            }
            // Everything handed out: keep only the held bytes, then read more.
            self.buf.drain(..self.start);
            self.done -= self.start;
            self.start = 0;
            let had = self.buf.len();
            self.buf.resize(had + (1 << 16), 0);
            let n = match self.inner.read(&mut self.buf[had..]) {
                Ok(n) => n,
                Err(e) => {
                    self.buf.truncate(had);
                    return Err(e);
                }
            };
            self.buf.truncate(had + n);
            self.ended = n == 0;
            self.settle();
        }
    }
}

/// Whether a line is `VERSION "…"` or `VERSION '…'` (no quote or backslash inside), blanks and a comment around.
fn is_version(line: &[u8]) -> bool {
    let i = skip_blanks(line, 0);
    let Some(rest) = line[i..].strip_prefix(b"VERSION") else {
        return false;
    };
    let j = skip_blanks(rest, 0);
    if j == 0 {
        return false;
    }
    let rest = &rest[j..];
    let Some(&quote) = rest.first().filter(|q| matches!(q, b'"' | b'\'')) else {
        return false;
    };
    let Some(end) = rest[1..]
        .iter()
        .position(|&c| c == quote || c == b'\\' || c == b'\n')
    else {
        return false;
    };
    if rest[1 + end] != quote {
        return false;
    }
    let after = &rest[2 + end..];
    let k = skip_blanks(after, 0);
    k == after.len() || after[k] == b'#'
}

fn skip_blanks(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t') {
        i += 1;
    }
    i
}

/// The term starting at byte `i`, and the byte after it; `None` outside the common form.
fn term(line: &str, i: usize) -> Option<(Term<'_>, usize)> {
    let b = line.as_bytes();
    match *b.get(i)? {
        b'<' => iri(line, i).map(|(iri, end)| (Term::Iri(iri), end)),
        b'_' => blank_label(line, i),
        b'"' => literal(line, i),
        _ => None,
    }
}

// IRIREF ::= '<' ([^#x00-#x20<>"{}|^`\] | UCHAR)* '>'   (escapes and `<<` left to oxttl; oxiri checks the rest)
fn iri(line: &str, i: usize) -> Option<(&str, usize)> {
    let b = line.as_bytes();
    let start = i + 1;
    if b.get(start) == Some(&b'<') {
        return None;
    }
    let len = memchr2(b'>', b'\\', &b[start..])?;
    (b[start + len] == b'>').then(|| (&line[start..start + len], start + len + 1))
}

// BLANK_NODE_LABEL ::= '_:' (PN_CHARS_U | [0-9]) ((PN_CHARS | '.')* PN_CHARS)?   (ASCII labels only)
fn blank_label(line: &str, i: usize) -> Option<(Term<'_>, usize)> {
    let b = line.as_bytes();
    if b.get(i + 1) != Some(&b':') {
        return None;
    }
    let start = i + 2;
    if !b
        .get(start)
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
    {
        return None;
    }
    let mut end = start + 1;
    while end < b.len() && (b[end].is_ascii_alphanumeric() || matches!(b[end], b'_' | b'-' | b'.'))
    {
        end += 1;
    }
    if b.get(end).is_some_and(|c| !c.is_ascii()) {
        return None; // the label may go on in a character outside ASCII
    }
    while b[end - 1] == b'.' {
        end -= 1;
    }
    Some((Term::Blank(&line[start..end]), end))
}

// STRING_LITERAL_QUOTE ('@' LANGTAG | '^^' IRIREF)?
fn literal(line: &str, i: usize) -> Option<(Term<'_>, usize)> {
    let b = line.as_bytes();
    let start = i + 1;
    let mut at = start;
    let mut escaped = false;
    loop {
        at += memchr2(b'"', b'\\', &b[at..])?;
        if b[at] == b'"' {
            break;
        }
        escaped = true;
        at += 2; // the escaped character is never the closing quote; unescape() checks the escape itself
        if at > b.len() {
            return None;
        }
    }
    let text = &line[start..at];
    let mut end = at + 1;
    let tail = match b.get(end) {
        Some(b'@') => {
            // LANGTAG ::= '@' [a-zA-Z]+ ('-' [a-zA-Z0-9]+)*   (a base direction `--ltr` is oxttl's)
            let tag_start = end + 1;
            end = tag_start;
            while b.get(end).is_some_and(u8::is_ascii_alphabetic) {
                end += 1;
            }
            if end == tag_start {
                return None;
            }
            while b.get(end) == Some(&b'-') && b.get(end + 1).is_some_and(u8::is_ascii_alphanumeric)
            {
                end += 1;
                while b.get(end).is_some_and(u8::is_ascii_alphanumeric) {
                    end += 1;
                }
            }
            if b.get(end) == Some(&b'-') {
                return None;
            }
            Tail::Lang(&line[tag_start..end])
        }
        Some(b'^') => {
            if b.get(end + 1) != Some(&b'^') || b.get(end + 2) != Some(&b'<') {
                return None;
            }
            let (dt, after) = iri(line, end + 2)?;
            if dt == RDF_LANG_STRING || dt == RDF_DIR_LANG_STRING {
                return None;
            }
            end = after;
            Tail::Typed(dt)
        }
        _ => Tail::Simple,
    };
    Some((Term::Literal(text, escaped, tail), end))
}

// ECHAR ::= '\' [tbnrf"'\]     UCHAR ::= '\u' HEX{4} | '\U' HEX{8}
/// Writes `raw` with its escapes resolved into `out`; `None` for an escape outside those two forms (or naming
/// no character), which oxttl then reports.
fn unescape(raw: &str, out: &mut String) -> Option<()> {
    out.clear();
    let mut rest = raw;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let b = &rest.as_bytes()[at + 1..];
        let (c, len) = match *b.first()? {
            b't' => ('\t', 1),
            b'b' => ('\x08', 1),
            b'n' => ('\n', 1),
            b'r' => ('\r', 1),
            b'f' => ('\x0C', 1),
            b'"' => ('"', 1),
            b'\'' => ('\'', 1),
            b'\\' => ('\\', 1),
            b'u' => (hex_char(b.get(1..5)?)?, 5),
            b'U' => (hex_char(b.get(1..9)?)?, 9),
            _ => return None,
        };
        out.push(c);
        rest = &rest[at + 1 + len..];
    }
    out.push_str(rest);
    Some(())
}

fn hex_char(digits: &[u8]) -> Option<char> {
    let mut code = 0u32;
    for &d in digits {
        code = code * 16 + char::from(d).to_digit(16)?;
    }
    char::from_u32(code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::term::{TermRef, well_known};

    impl Statements {
        /// The statements as quads, graph first.
        fn quads(&self) -> Vec<[TermId; 4]> {
            (self.runs().into_iter())
                .flat_map(|(g, range)| {
                    self.triples[range]
                        .iter()
                        .map(move |&[s, p, o]| [g, s, p, o])
                })
                .collect()
        }
    }

    /// A text read line by line, listed: each quad's terms as the dictionary decodes them, then every
    /// dictionary entry in id order and the blank-node labels (so equal listings mean equal ids too).
    fn read(text: &str, lenient: bool, with_graphs: bool) -> Result<Vec<String>, Refused> {
        let mut st = Statements::new(lenient, with_graphs);
        for line in text.split('\n') {
            st.line(line.as_bytes())?;
        }
        Ok(listing(&st))
    }

    fn listing(st: &Statements) -> Vec<String> {
        use crate::store::TermSource;
        let quads = st.quads().into_iter().map(|q| {
            q.iter()
                .map(|&t| st.dict.display(t))
                .collect::<Vec<_>>()
                .join(" ")
        });
        let terms = (0..st.dict.len() as u32).map(|i| format!("{:?}", st.dict.get(TermId(i))));
        quads
            .chain(terms)
            .chain(st.labels.iter().map(|l| format!("_:{l}")))
            .collect()
    }

    /// What oxttl reads from the same text, in the same listing.
    fn oxttl(text: &str, lenient: bool, with_graphs: bool) -> Option<Vec<String>> {
        let mut st = Statements::new(lenient, with_graphs);
        st.with_oxttl(text.as_bytes()).ok()?;
        Some(listing(&st))
    }

    /// Pieces of N-Triples / N-Quads lines, valid and not, for random lines.
    const PIECES: &[&str] = &[
        "<http://e/s>",
        "<http://e/p>",
        "<http://e/p#x>",
        "<http://e/a b>",
        "<rel>",
        "<>",
        r"<http://e/\u0041>",
        "<http://é.example/ü>",
        "<http://[::1]/x>",
        "<http://e/%zz>",
        "<http://e/{x}>",
        "_:a",
        "_:a.",
        "_:1x",
        "_:a-b.c",
        "_:",
        "_:é",
        "_:a·b",
        "\"x\"",
        r#""a\"b\\""#,
        r#""\u00e9\U0001F600""#,
        r#""\uD800""#,
        r#""\uD83D\uDE00""#,
        r#""\q""#,
        "\"x\"@en",
        "\"x\"@EN-gb",
        "\"x\"@en--ltr",
        "\"x\"@en--up",
        "\"x\"@en-",
        "\"x\"@1",
        "\"x\"@en_US",
        "\"x\"@xx-notatag-0000000000",
        "\"1\"^^<http://www.w3.org/2001/XMLSchema#integer>",
        "\"s\"^^<http://www.w3.org/2001/XMLSchema#string>",
        "\"x\"^^<rel>",
        "\"x\"^^<http://www.w3.org/1999/02/22-rdf-syntax-ns#langString>",
        "\"x\"^^xsd:int",
        "\"x\"^",
        "\"x",
        "\"a\rb\"",
        "<<(",
        ")>>",
        "<<",
        ">>",
        " ",
        "\t",
        ".",
        "# c",
        "~",
        "\r",
        "a",
        ";",
    ];

    fn piece() -> impl proptest::strategy::Strategy<Value = String> {
        proptest::sample::select(PIECES).prop_map(str::to_owned)
    }

    use proptest::prelude::*;

    proptest! {
        /// On random lines — mostly statement-shaped, some not — the line reader loads exactly what oxttl
        /// loads, with the same ids, and refuses exactly what it refuses.
        #[test]
        fn random_lines_read_as_oxttl_reads_them(
            s in piece(), p in piece(), o in piece(), g in proptest::option::of(piece()),
            gaps in proptest::collection::vec(prop_oneof![Just(""), Just(" "), Just("\t")], 5),
            end in prop_oneof![Just("."), Just(" ."), Just(". # c"), Just(""), Just(". ."), Just(" .\r")],
            noise in proptest::collection::vec(piece(), 0..4),
            lenient in any::<bool>(),
            with_graphs in any::<bool>(),
        ) {
            let graph = g.map(|g| format!("{}{g}", gaps[3])).unwrap_or_default();
            let line = format!("{s}{}{p}{}{o}{graph}{}{end}{}", gaps[0], gaps[1], gaps[2], noise.concat());
            let fast = read(&line, lenient, with_graphs).ok();
            prop_assert_eq!(fast, oxttl(&line, lenient, with_graphs), "{:?}", line);
        }
    }

    /// A reader that hands out at most `step` bytes a read.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.0.len().min(self.1).min(out.len());
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn version_lines_are_blanked_whatever_the_reads_cut_and_nothing_else_changes() {
        let text = "VERSION \"1.2\"\n<http://s> <http://p> \"VERSION \\\"x\\\"\" .\n  VERSION '1.2-basic'  # c\nVERSIONX \"1\"\nV\n<http://s> <http://p> <http://o> .\nVERSION \"end\"";
        let want = text
            .replace("VERSION \"1.2\"", &" ".repeat(13))
            .replace("VERSION '1.2-basic'  # c", &" ".repeat(24))
            .replace("VERSION \"end\"", &" ".repeat(13));
        for step in [1, 2, 3, 7, 64, 1 << 20] {
            let mut out = Vec::new();
            VersionLines::new(Trickle(text.as_bytes(), step))
                .read_to_end(&mut out)
                .unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), want, "reads of {step}");
        }
        // The statement reader takes the same lines as no statements.
        let read = read(
            text.replace("VERSIONX \"1\"\nV\n", "").as_str(),
            false,
            false,
        )
        .unwrap();
        let statements: Vec<&String> = read.iter().filter(|l| l.starts_with("DEFAULT ")).collect();
        assert_eq!(statements.len(), 2, "{read:?}");
    }

    #[test]
    fn common_lines_read_as_oxttl_reads_them() {
        let lines = [
            "<http://e/s> <http://e/p> <http://e/o> .",
            "<http://e/s><http://e/p><http://e/o>.",
            "  _:b1\t<http://e/p> _:b.2. # a comment",
            "<http://e/s> <http://e/p> \"plain\" .",
            "<http://e/s> <http://e/p> \"Tag\"@EN-gb .",
            "<http://e/s> <http://e/p> \"1\"^^<http://www.w3.org/2001/XMLSchema#integer> .",
            "<http://e/s> <http://e/p> \"s\"^^<http://www.w3.org/2001/XMLSchema#string> .",
            r#"<http://e/s> <http://e/p> "a\"b\\c\n\u00e9\U0001F600\t" ."#,
            "<http://e/s> <http://e/p> \"é ü\" .",
            "# only a comment",
            "",
        ];
        for line in lines {
            assert_eq!(
                Some(read(line, false, false).unwrap()),
                oxttl(line, false, false),
                "{line}"
            );
        }
        let quads = "<http://e/s> <http://e/p> \"x\" <http://e/g> .\n_:s <http://e/p> _:o _:g .";
        assert_eq!(
            Some(read(quads, false, true).unwrap()),
            oxttl(quads, false, true)
        );
    }

    #[test]
    fn lines_outside_the_common_form_are_read_by_oxttl() {
        // Triple terms, escapes in IRIs, a base direction, a label outside ASCII: oxttl's terms, not refused.
        let lines = [
            "<http://e/r> <http://www.w3.org/1999/02/22-rdf-syntax-ns#reifies> <<( <http://e/s> <http://e/p> <http://e/o> )>> .",
            r"<http://e/\u0073> <http://e/p> <http://e/o> .",
            "<http://e/s> <http://e/p> \"x\"@en--ltr .",
            "_:é <http://e/p> <http://e/o> .",
        ];
        for line in lines {
            let fast = read(line, false, false).unwrap();
            assert_eq!(Some(fast), oxttl(line, false, false), "{line}");
        }
    }

    #[test]
    fn what_oxttl_refuses_is_refused() {
        let lines = [
            "<relative> <http://e/p> <http://e/o> .",
            "<http://e/s> <http://e/p> <http://e/o>",
            "<http://e/s> <http://e/p> <http://e/o> . <http://e/s> <http://e/p> <http://e/o> .",
            "<http://e/s> <http://e/p> <http://e/o> <http://e/g> .",
            "<http://e/s> <http://e/p> \"x\"@1en .",
            "<http://e/s> <http://e/p> \"x\"@en- .",
            "<http://e/s> <http://e/p> \"x\"^^<http://www.w3.org/1999/02/22-rdf-syntax-ns#langString> .",
            r#"<http://e/s> <http://e/p> "\q" ."#,
            r#"<http://e/s> <http://e/p> "\uD800" ."#,
            "<http://e/s> <http://e/p> \"unterminated .",
            "<http://e/a b> <http://e/p> <http://e/o> .",
            "\"lit\" <http://e/p> <http://e/o> .",
            "<http://e/s> _:p <http://e/o> .",
            "_: <http://e/p> <http://e/o> .",
        ];
        for line in lines {
            assert!(read(line, false, false).is_err(), "{line}");
            assert!(oxttl(line, false, false).is_none(), "{line}");
        }
    }

    #[test]
    fn lenient_reading_skips_the_iri_and_tag_checks_as_oxttl_does() {
        let line = "<not an iri> <http://e/p> \"x\"@xx-notatag-0000000000 .";
        assert!(read(line, false, false).is_err());
        assert_eq!(
            Some(read(line, true, false).unwrap()),
            oxttl(line, true, false)
        );
    }

    #[test]
    fn blank_labels_are_one_scope_and_recorded_by_number() {
        let mut st = Statements::new(false, false);
        for line in ["_:a <http://e/p> _:b .", "_:b <http://e/p> _:a ."] {
            st.line(line.as_bytes()).unwrap();
        }
        let quads = st.quads();
        assert_eq!(quads[0][1], quads[1][3]);
        assert_eq!(quads[0][3], quads[1][1]);
        let labels: Vec<&str> = st.labels.iter().map(|l| &**l).collect();
        assert_eq!(labels, ["a", "b"]);
        assert!(matches!(st.dict.get(quads[0][3]), TermRef::Blank(1)));
    }

    #[test]
    fn well_known_ids_are_kept() {
        let mut st = Statements::new(false, false);
        st.line(b"<http://e/s> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://e/C> .")
            .unwrap();
        assert_eq!(st.quads()[0][2], well_known::RDF_TYPE);
    }
}
