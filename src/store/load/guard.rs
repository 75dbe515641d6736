//! This module defines the nesting guard: a reader that passes a data file's bytes on to its parser while
//! tracking how deep the parser will have to recurse, and fails with the position past a limit.
//!
//! The parsers recurse once per nested triple term (oxrdfio) or JSON level (oxjsonld), and oxrdfxml's work grows
//! with the square of element depth, so a small hostile file could overflow the stack or run for minutes. The
//! guard tracks only what nests: `<<` … `>>` outside IRIs, strings and comments (Turtle, TriG, N-Triples,
//! N-Quads), `{`/`[` outside strings (JSON-LD), and elements outside comments, CDATA, processing instructions
//! and declarations (RDF/XML). In the Turtle family it also checks that comments are UTF-8, which the parsers
//! skip unread (everything else they read themselves). In RDF/XML it also counts what entities expand to:
//! oxrdfxml expands each `<!ENTITY>` value in memory as it is declared and each `&name;` where it is used, so
//! ten nested entities of ten references each (the "billion laughs") make gigabytes of a kilobyte.

use std::io::{self, Read};

use hashbrown::HashMap;

/// How deep triple terms may nest inside triple terms, and XML elements inside each other.
pub const MAX_DATA_NESTING: usize = 1024;

/// How deep JSON-LD arrays and objects may nest, as serde_json's default recursion limit: oxjsonld's memory grows
/// with the square of the depth (300 MB for a 9 KB file nested 1,000 deep).
pub const MAX_JSON_NESTING: usize = 128;

/// How many bytes XML entities may expand to in all (declared values and references), beyond
/// [`ENTITY_BYTES_PER_BYTE`] per byte of the file read so far: writing namespaces as entities (`&rdf;type`)
/// stays far below it, nesting them does not.
pub const MAX_ENTITY_EXPANSION: u64 = 16 << 20;

/// The expansion XML entities are allowed per byte of the file read, past [`MAX_ENTITY_EXPANSION`].
pub const ENTITY_BYTES_PER_BYTE: u64 = 8;

/// Why the guard stopped the data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Why {
    /// What nests went past the limit.
    Nesting(&'static str),
    /// A comment is not UTF-8.
    InvalidUtf8,
    /// XML entities expand past their allowance, at this entity (declared or referenced).
    Entities(String),
    /// An XML document ends with this many elements open (the parser took what it had read as the whole).
    Unclosed(usize),
}

/// Where the guard stopped the data, and why: nested past its limit, a comment that is not UTF-8, or entities
/// that expand too far.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TooDeep {
    /// Why it stopped.
    pub what: Why,
    /// 1-based line.
    pub line: u64,
    /// 1-based column (in characters).
    pub column: u64,
    /// Byte offset.
    pub offset: u64,
    /// The limit passed (levels, or bytes the entities may expand to there).
    pub limit: u64,
}

impl std::fmt::Display for TooDeep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.what {
            Why::Nesting(what) => write!(
                f,
                "{what} nest deeper than {} levels at line {} column {}",
                self.limit, self.line, self.column
            ),
            Why::Entities(name) => write!(
                f,
                "XML entities expand past {} bytes at `{name}`, line {} column {}",
                self.limit, self.line, self.column
            ),
            Why::Unclosed(open) => write!(
                f,
                "the XML document ends with {open} element(s) open, at line {} column {}",
                self.line, self.column
            ),
            Why::InvalidUtf8 => write!(
                f,
                "invalid UTF-8 in a comment at line {} column {}",
                self.line, self.column
            ),
        }
    }
}

impl std::error::Error for TooDeep {}

/// The syntax family a guard scans.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Family {
    /// Turtle, TriG, N-Triples, N-Quads: triple terms.
    Turtle,
    /// JSON-LD: arrays and objects.
    Json,
    /// RDF/XML: elements.
    Xml,
}

/// Where the scanner is in the text.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum State {
    Normal,
    Comment,
    /// Inside `<…>` (Turtle) or a tag (XML).
    Iri,
    /// A `<` was read (Turtle: `<<` or an IRI follows; XML: a tag).
    Lt,
    /// A `>` was read (Turtle: `>>` may follow).
    Gt,
    /// One quote read (Turtle: the string may be long).
    Quote1(u8),
    /// Two quotes read.
    Quote2(u8),
    /// Inside a string; `run` quotes in a row so far (long strings end at three).
    Str {
        quote: u8,
        long: bool,
        run: u8,
    },
    /// After a backslash in a string.
    Escape {
        quote: u8,
        long: bool,
    },
    /// XML: inside a start tag; `slash` when the last byte was `/`.
    StartTag {
        slash: bool,
    },
    /// XML: inside an attribute value.
    Attr {
        quote: u8,
    },
    /// XML: inside an end tag.
    EndTag,
    /// XML: after `<!`, `matched` bytes of `--` or `[CDATA[` read.
    Bang {
        matched: u8,
        cdata: bool,
    },
    /// XML: inside `<!-- … -->` or `<![CDATA[ … ]]>`, `run` closing characters in a row.
    Skip {
        cdata: bool,
        run: u8,
    },
    /// XML: inside `<? … ?>`, `question` when the last byte was `?`.
    Pi {
        question: bool,
    },
    /// XML: inside `<!DOCTYPE …>` or another declaration.
    Decl {
        brackets: u32,
        quote: u8,
    },
}

/// The nesting scanner: feed it the bytes in order.
#[derive(Clone, Debug)]
pub struct Scanner {
    family: Family,
    state: State,
    depth: usize,
    /// The position (line, column, offset) of the next byte.
    next: (u64, u64, u64),
    /// The position of the construct being read (the `<` of `<<` or of a tag, a JSON bracket).
    mark: (u64, u64, u64),
    /// Continuation bytes still due in a comment's UTF-8 sequence.
    utf8: u8,
    /// XML: what entities expand to.
    entities: Entities,
}

/// XML entities: their expanded lengths, the declaration being read, the reference being read, and what they
/// have expanded to so far.
#[derive(Clone, Debug, Default)]
struct Entities {
    /// Each declared entity's expanded length, as oxrdfxml stores it (the last declaration of a name wins).
    lengths: HashMap<Vec<u8>, u64>,
    /// The declaration being read (the bytes after `<!`).
    decl: Vec<u8>,
    /// The name of the `&name;` being read, from its `&`; `None` outside one.
    reference: Option<Vec<u8>>,
    /// Where that `&` is.
    at: (u64, u64, u64),
    /// Bytes expanded so far.
    expanded: u64,
}

/// The longest entity name the guard reads (a longer one is no reference the parser resolves).
const MAX_ENTITY_NAME: usize = 1024;

impl Entities {
    /// The length `value` expands to, its references resolved as declared so far (`&#…;` at most 4 bytes, the
    /// predefined entities 1, an unknown name as written: the parser refuses it).
    fn expanded_length(&self, value: &[u8]) -> u64 {
        let mut n: u64 = 0;
        let mut rest = value;
        while let Some(amp) = rest.iter().position(|&b| b == b'&') {
            n = n.saturating_add(amp as u64);
            rest = &rest[amp..];
            let Some(semi) = rest.iter().position(|&b| b == b';') else {
                break;
            };
            let name = &rest[1..semi];
            n = n.saturating_add(match name {
                [b'#', ..] => 4,
                b"lt" | b"gt" | b"amp" | b"apos" | b"quot" => 1,
                _ => self.lengths.get(name).copied().unwrap_or(semi as u64 + 1),
            });
            rest = &rest[semi + 1..];
        }
        n.saturating_add(rest.len() as u64)
    }

    /// The entities of a DOCTYPE's text (`decl`, from after `<!`), read as oxrdfxml reads them: each
    /// `<!ENTITY [%] name "value">`, its value's references expanded. Returns the first whose expansion takes the
    /// total past `limit`.
    fn declare(&mut self, limit: u64) -> Option<String> {
        let decl = std::mem::take(&mut self.decl);
        if !decl.starts_with(b"DOCTYPE") {
            return None;
        }
        for part in decl.split(|&b| b == b'<').skip(1) {
            let Some(rest) = part.strip_prefix(b"!ENTITY") else {
                continue;
            };
            let rest = rest.trim_ascii_start();
            let rest = rest.strip_prefix(b"%").unwrap_or(rest).trim_ascii_start();
            let Some(end) = rest.iter().position(u8::is_ascii_whitespace) else {
                continue;
            };
            let (name, rest) = rest.split_at(end);
            let Some(value) = rest.trim_ascii_start().strip_prefix(b"\"") else {
                continue;
            };
            let value = value.split(|&b| b == b'"').next().unwrap_or_default();
            let length = self.expanded_length(value);
            self.expanded = self.expanded.saturating_add(length);
            self.lengths.insert(name.to_vec(), length);
            if self.expanded > limit {
                return Some(String::from_utf8_lossy(name).into_owned());
            }
        }
        None
    }

    /// Reads byte `b` of text or of an attribute value: a complete `&name;` adds what the entity expands to.
    /// Returns the entity whose expansion takes the total past `limit`.
    fn text(&mut self, b: u8, here: (u64, u64, u64), limit: u64) -> Option<String> {
        if b == b'&' {
            self.reference = Some(Vec::new());
            self.at = here;
            return None;
        }
        let name = self.reference.as_mut()?;
        if b == b';' {
            let name = self.reference.take().unwrap_or_default();
            if let Some(&length) = self.lengths.get(&name) {
                self.expanded = self.expanded.saturating_add(length);
                if self.expanded > limit {
                    return Some(String::from_utf8_lossy(&name).into_owned());
                }
            }
        } else if name.len() < MAX_ENTITY_NAME && !b.is_ascii_whitespace() && b != b'<' {
            name.push(b);
        } else {
            self.reference = None;
        }
        None
    }
}

impl Scanner {
    /// A scanner at the start of a text.
    pub fn new(family: Family) -> Self {
        Self {
            family,
            state: State::Normal,
            depth: 0,
            next: (1, 1, 0),
            mark: (1, 1, 0),
            utf8: 0,
            entities: Entities::default(),
        }
    }

    fn too_deep(&self) -> TooDeep {
        TooDeep {
            what: Why::Nesting(match self.family {
                Family::Turtle => "triple terms",
                Family::Json => "JSON arrays and objects",
                Family::Xml => "XML elements",
            }),
            line: self.mark.0,
            column: self.mark.1,
            offset: self.mark.2,
            limit: self.limit() as u64,
        }
    }

    /// What XML entities may expand to in all, `read` bytes into the file.
    fn entity_limit(read: u64) -> u64 {
        MAX_ENTITY_EXPANSION.saturating_add(read.saturating_mul(ENTITY_BYTES_PER_BYTE))
    }

    fn too_expanded(&self, name: String, (line, column, offset): (u64, u64, u64)) -> TooDeep {
        TooDeep {
            what: Why::Entities(name),
            line,
            column,
            offset,
            limit: Self::entity_limit(self.next.2),
        }
    }

    /// How deep this family may nest.
    pub fn limit(&self) -> usize {
        match self.family {
            Family::Json => MAX_JSON_NESTING,
            Family::Turtle | Family::Xml => MAX_DATA_NESTING,
        }
    }

    fn invalid_utf8(&self, (line, column, offset): (u64, u64, u64)) -> TooDeep {
        TooDeep {
            what: Why::InvalidUtf8,
            line,
            column,
            offset,
            limit: self.limit() as u64,
        }
    }

    fn open(&mut self) -> Result<(), TooDeep> {
        self.depth += 1;
        if self.depth > self.limit() {
            return Err(self.too_deep());
        }
        Ok(())
    }

    fn close(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// The end of the text: an XML document must have closed every element it opened.
    pub fn finish(&self) -> Result<(), TooDeep> {
        if self.family == Family::Xml && self.depth > 0 {
            let (line, column, offset) = self.next;
            return Err(TooDeep {
                what: Why::Unclosed(self.depth),
                line,
                column,
                offset,
                limit: self.limit() as u64,
            });
        }
        Ok(())
    }

    /// Scans the next bytes.
    pub fn scan(&mut self, bytes: &[u8]) -> Result<(), TooDeep> {
        for &b in bytes {
            let here = self.next;
            match self.family {
                Family::Turtle => self.turtle(b, here)?,
                Family::Json => self.json(b, here)?,
                Family::Xml => self.xml(b, here)?,
            }
            let (line, column, offset) = &mut self.next;
            *offset += 1;
            if b == b'\n' {
                *line += 1;
                *column = 1;
            } else if b & 0xC0 != 0x80 {
                *column += 1;
            }
        }
        Ok(())
    }

    fn string(&mut self, b: u8) -> bool {
        match self.state {
            State::Str { quote, long, run } => {
                self.state = if b == b'\\' {
                    State::Escape { quote, long }
                } else if b == quote {
                    if !long || run == 2 {
                        State::Normal
                    } else {
                        State::Str {
                            quote,
                            long,
                            run: run + 1,
                        }
                    }
                } else if b == b'\n' && !long {
                    // An unterminated short string: the parser reports it; keep scanning.
                    State::Normal
                } else {
                    State::Str {
                        quote,
                        long,
                        run: 0,
                    }
                };
                true
            }
            State::Escape { quote, long } => {
                self.state = State::Str {
                    quote,
                    long,
                    run: 0,
                };
                true
            }
            _ => false,
        }
    }

    fn turtle(&mut self, b: u8, here: (u64, u64, u64)) -> Result<(), TooDeep> {
        if self.string(b) {
            return Ok(());
        }
        match self.state {
            State::Comment => {
                if self.utf8 > 0 {
                    // A continuation byte is due.
                    if b & 0xC0 != 0x80 {
                        return Err(self.invalid_utf8(here));
                    }
                    self.utf8 -= 1;
                } else if b == b'\n' || b == b'\r' {
                    self.state = State::Normal;
                } else if b >= 0x80 {
                    self.utf8 = match b {
                        0xC2..=0xDF => 1,
                        0xE0..=0xEF => 2,
                        0xF0..=0xF4 => 3,
                        _ => return Err(self.invalid_utf8(here)),
                    };
                }
            }
            State::Iri => {
                if b == b'>' {
                    self.state = State::Normal;
                }
            }
            State::Lt => {
                if b == b'<' {
                    self.state = State::Normal;
                    self.open()?;
                } else {
                    self.state = if b == b'>' { State::Normal } else { State::Iri };
                }
            }
            State::Gt => {
                self.state = State::Normal;
                if b == b'>' {
                    self.close();
                } else {
                    self.turtle(b, here)?;
                }
            }
            State::Quote1(q) => {
                if b == q {
                    self.state = State::Quote2(q);
                } else {
                    self.state = State::Str {
                        quote: q,
                        long: false,
                        run: 0,
                    };
                    self.string(b);
                }
            }
            State::Quote2(q) => {
                if b == q {
                    self.state = State::Str {
                        quote: q,
                        long: true,
                        run: 0,
                    };
                } else {
                    // `""`: an empty string, then this byte.
                    self.state = State::Normal;
                    self.turtle(b, here)?;
                }
            }
            _ => match b {
                b'#' => self.state = State::Comment,
                b'<' => {
                    self.mark = here;
                    self.state = State::Lt;
                }
                b'>' => self.state = State::Gt,
                b'"' | b'\'' => self.state = State::Quote1(b),
                _ => {}
            },
        }
        Ok(())
    }

    fn json(&mut self, b: u8, here: (u64, u64, u64)) -> Result<(), TooDeep> {
        if self.string(b) {
            return Ok(());
        }
        match b {
            b'"' => {
                self.state = State::Str {
                    quote: b'"',
                    long: false,
                    run: 0,
                }
            }
            b'{' | b'[' => {
                self.mark = here;
                self.open()?;
            }
            b'}' | b']' => self.close(),
            _ => {}
        }
        Ok(())
    }

    fn xml(&mut self, b: u8, here: (u64, u64, u64)) -> Result<(), TooDeep> {
        self.state = match self.state {
            State::Lt => match b {
                b'/' => State::EndTag,
                b'!' => State::Bang {
                    matched: 0,
                    cdata: false,
                },
                b'?' => State::Pi { question: false },
                _ => {
                    self.open()?;
                    State::StartTag { slash: b == b'/' }
                }
            },
            State::StartTag { slash } => match b {
                b'>' => {
                    if slash {
                        self.close();
                    }
                    State::Normal
                }
                b'"' | b'\'' => State::Attr { quote: b },
                _ => State::StartTag { slash: b == b'/' },
            },
            State::Attr { quote } => {
                if let Some(name) = self.entities.text(b, here, Self::entity_limit(here.2)) {
                    return Err(self.too_expanded(name, self.entities.at));
                }
                if b == quote {
                    State::StartTag { slash: false }
                } else {
                    State::Attr { quote }
                }
            }
            State::EndTag => {
                if b == b'>' {
                    self.close();
                    State::Normal
                } else {
                    State::EndTag
                }
            }
            State::Bang { matched, cdata } => {
                const CDATA: &[u8] = b"[CDATA[";
                match (matched, cdata, b) {
                    (0, _, b'-') => State::Bang {
                        matched: 1,
                        cdata: false,
                    },
                    (1, false, b'-') => State::Skip {
                        cdata: false,
                        run: 0,
                    },
                    (m, c, _) if (m == 0 || c) && CDATA.get(usize::from(m)) == Some(&b) => {
                        if usize::from(m) + 1 == CDATA.len() {
                            State::Skip {
                                cdata: true,
                                run: 0,
                            }
                        } else {
                            State::Bang {
                                matched: m + 1,
                                cdata: true,
                            }
                        }
                    }
                    _ => {
                        self.entities.decl.clear();
                        self.entities.decl.push(b);
                        State::Decl {
                            brackets: u32::from(b == b'['),
                            quote: 0,
                        }
                    }
                }
            }
            State::Skip { cdata, run } => {
                let closing = if cdata { b']' } else { b'-' };
                if b == closing {
                    State::Skip {
                        cdata,
                        run: run.saturating_add(1),
                    }
                } else if b == b'>' && run >= 2 {
                    State::Normal
                } else {
                    State::Skip { cdata, run: 0 }
                }
            }
            State::Pi { question } => {
                if question && b == b'>' {
                    State::Normal
                } else {
                    State::Pi {
                        question: b == b'?',
                    }
                }
            }
            State::Decl { brackets, quote } => match (quote, b) {
                (0, b'>') if brackets == 0 => {
                    if let Some(name) = self.entities.declare(Self::entity_limit(here.2)) {
                        return Err(self.too_expanded(name, self.mark));
                    }
                    State::Normal
                }
                _ => {
                    self.entities.decl.push(b);
                    Self::declaration(brackets, quote, b)
                }
            },
            _ => {
                if let Some(name) = self.entities.text(b, here, Self::entity_limit(here.2)) {
                    return Err(self.too_expanded(name, self.entities.at));
                }
                if b == b'<' {
                    self.mark = here;
                    State::Lt
                } else {
                    State::Normal
                }
            }
        };
        Ok(())
    }

    /// The declaration state after byte `b` (not its final `>`).
    fn declaration(brackets: u32, quote: u8, b: u8) -> State {
        match (quote, b) {
            (0, b'"' | b'\'') => State::Decl { brackets, quote: b },
            (0, b'[') => State::Decl {
                brackets: brackets + 1,
                quote,
            },
            (0, b']') => State::Decl {
                brackets: brackets.saturating_sub(1),
                quote,
            },
            (q, c) if q != 0 && c == q => State::Decl { brackets, quote: 0 },
            _ => State::Decl { brackets, quote },
        }
    }
}

/// A reader that scans what it passes on and fails with [`TooDeep`] (as the error's inner value) past the limit.
pub struct Guard<R> {
    inner: R,
    scanner: Scanner,
}

impl<R> Guard<R> {
    /// Guards `inner`, a text of the syntax `family`.
    pub fn new(inner: R, family: Family) -> Self {
        Self {
            inner,
            scanner: Scanner::new(family),
        }
    }
}

impl<R: Read> Read for Guard<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let scanned = if n == 0 && !buf.is_empty() {
            self.scanner.finish()
        } else {
            self.scanner.scan(&buf[..n])
        };
        scanned.map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        Ok(n)
    }
}

/// The [`TooDeep`] inside an I/O error a [`Guard`] returned, if it is one.
pub fn too_deep(e: &io::Error) -> Option<&TooDeep> {
    e.get_ref()?.downcast_ref::<TooDeep>()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(family: Family, text: &str) -> Result<(), TooDeep> {
        let mut s = Scanner::new(family);
        // Byte by byte: every state survives a read boundary.
        for b in text.as_bytes() {
            s.scan(std::slice::from_ref(b))?;
        }
        Ok(())
    }

    fn nested_triple_terms(n: usize) -> String {
        format!(
            "<http://e/a> <http://e/p> {}<http://e/b>{} .\n",
            "<<( <http://e/a> <http://e/p> ".repeat(n),
            " )>>".repeat(n)
        )
    }

    #[test]
    fn triple_terms_nested_past_the_limit_stop_where_the_limit_is_passed() {
        assert!(scan(Family::Turtle, &nested_triple_terms(MAX_DATA_NESTING)).is_ok());
        let text = nested_triple_terms(MAX_DATA_NESTING + 1);
        let e = scan(Family::Turtle, &text).unwrap_err();
        assert_eq!(e.line, 1);
        let at = usize::try_from(e.offset).unwrap();
        assert_eq!(&text[at..at + 2], "<<");
        assert_eq!(text[..at].matches("<<(").count(), MAX_DATA_NESTING);
    }

    #[test]
    fn brackets_in_strings_iris_and_comments_do_not_count() {
        let deep = "<<".repeat(MAX_DATA_NESTING + 1);
        let text = format!(
            "# {deep}\n<http://e/{}> <http://e/p> \"{deep}\", '{deep}', \"\"\"{deep}\n\"\" {deep}\"\"\", \"a\\\"{deep}\" .\n",
            "x"
        );
        assert!(scan(Family::Turtle, &text).is_ok());
        let json = format!(
            "{{\"@id\": \"{}\", \"p\": [\"\\\"{}\"]}}",
            "[".repeat(2000),
            "{".repeat(2000)
        );
        assert!(scan(Family::Json, &json).is_ok());
    }

    #[test]
    fn json_nesting_past_the_limit_is_refused() {
        let n = MAX_JSON_NESTING;
        assert!(
            scan(
                Family::Json,
                &format!("{}1{}", "[".repeat(n), "]".repeat(n))
            )
            .is_ok()
        );
        let e = scan(
            Family::Json,
            &format!("{}1{}", "[".repeat(n + 1), "]".repeat(n + 1)),
        )
        .unwrap_err();
        assert_eq!(e.column, n as u64 + 1);
        assert_eq!(e.offset, n as u64);
    }

    #[test]
    fn xml_elements_count_but_comments_cdata_and_declarations_do_not() {
        let ok = format!(
            "<?xml version=\"1.0\"?><!DOCTYPE r [<!ENTITY e \"<a><b>\">]><r a='<x>' b=\"/>\"><!-- {c} --><![CDATA[{c}]]><e/>{open}{close}</r>",
            c = "<a>".repeat(3000),
            open = "<a>".repeat(MAX_DATA_NESTING - 1),
            close = "</a>".repeat(MAX_DATA_NESTING - 1)
        );
        assert!(
            scan(Family::Xml, &ok).is_ok(),
            "{:?}",
            scan(Family::Xml, &ok)
        );
        let deep = format!("<r>{}", "<a>".repeat(MAX_DATA_NESTING));
        assert!(scan(Family::Xml, &deep).is_err());
        let siblings = format!("<r>{}</r>", "<a/><b></b>".repeat(5000));
        assert!(scan(Family::Xml, &siblings).is_ok());
    }

    fn laughs(levels: usize) -> String {
        let mut text =
            String::from("<?xml version=\"1.0\"?>\n<!DOCTYPE r [\n<!ENTITY l0 \"lol\">\n");
        for i in 1..=levels {
            let refs = format!("&l{};", i - 1).repeat(10);
            text.push_str(&format!("<!ENTITY l{i} \"{refs}\">\n"));
        }
        text + "]>\n<r>&l1;</r>\n"
    }

    #[test]
    fn nested_xml_entities_are_refused_at_the_declaration_past_the_allowance() {
        // l6 expands to 3 MB, l7 to 30 MB: past 16 MiB plus 8 bytes a byte of the file.
        assert!(scan(Family::Xml, &laughs(6)).is_ok());
        let e = scan(Family::Xml, &laughs(7)).unwrap_err();
        assert_eq!(e.what, Why::Entities("l7".to_owned()));
        // At the DOCTYPE's `<`.
        assert_eq!((e.line, e.column), (2, 1));
    }

    #[test]
    fn xml_entity_references_count_each_time_they_are_used() {
        let text = |uses: usize| {
            format!(
                "<!DOCTYPE r [<!ENTITY big \"{}\">]>\n<r a=\"&big;\">{}</r>",
                "x".repeat(1 << 20),
                "&big; ".repeat(uses)
            )
        };
        // The declaration and the attribute expand 2 MiB, 22 uses 22 MiB more: within 16 MiB plus 8 bytes a byte of
        // the 1 MiB file. 40 uses are not.
        assert!(scan(Family::Xml, &text(22)).is_ok());
        let e = scan(Family::Xml, &text(40)).unwrap_err();
        assert_eq!(e.what, Why::Entities("big".to_owned()));
        assert_eq!(e.line, 2);
        let at = usize::try_from(e.offset).unwrap();
        assert_eq!(&text(40)[at..at + 5], "&big;");
    }

    #[test]
    fn namespace_entities_used_on_every_line_stay_within_the_allowance() {
        let mut text = String::from(
            "<!DOCTYPE r [<!ENTITY ex \"http://example.org/a/rather/long/namespace/#\"> <!ENTITY rdf \"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">]>\n<r>",
        );
        for i in 0..200_000 {
            text.push_str(&format!(
                "<d a=\"&ex;n{i}\"><p b=\"&rdf;type\">&amp;&#65;&ex;</p></d>\n"
            ));
        }
        assert!(scan(Family::Xml, &(text + "</r>")).is_ok());
    }

    #[test]
    fn an_xml_document_that_ends_with_elements_open_is_refused_at_its_end() {
        let mut s = Scanner::new(Family::Xml);
        s.scan(b"<?xml version=\"1.0\"?>\n<r><a x='<'>text<b/><!-- <c> --></a>\n<d>cut")
            .unwrap();
        let e = s.finish().unwrap_err();
        assert_eq!((e.what, e.line, e.column), (Why::Unclosed(2), 3, 7));
        let mut whole = Scanner::new(Family::Xml);
        whole.scan(b"<r><a/><b></b></r>\n").unwrap();
        assert!(whole.finish().is_ok());
        // Through the reader: the error comes at the end of the input, not before.
        let mut out = Vec::new();
        let err = Guard::new(&b"<r><a>x</a>"[..], Family::Xml)
            .read_to_end(&mut out)
            .unwrap_err();
        assert_eq!(too_deep(&err).unwrap().what, Why::Unclosed(1));
        assert_eq!(out, b"<r><a>x</a>");
        // Other syntaxes have no elements to close.
        assert!(Scanner::new(Family::Turtle).finish().is_ok());
    }

    #[test]
    fn invalid_utf8_in_a_turtle_comment_is_refused_where_it_is() {
        let mut s = Scanner::new(Family::Turtle);
        assert!(
            s.scan("# é ok\n<http://e/a> <http://e/p> \"\u{1F600}\" .\n".as_bytes())
                .is_ok()
        );
        let mut s = Scanner::new(Family::Turtle);
        let e = s
            .scan(b"<http://e/a> <http://e/p> <http://e/b> . # bad \xff here\n")
            .unwrap_err();
        assert_eq!((e.what, e.line, e.column), (Why::InvalidUtf8, 1, 48));
        let mut s = Scanner::new(Family::Turtle);
        assert!(s.scan(b"# cut \xc3\n").is_err());
    }

    #[test]
    fn the_guard_reader_fails_with_the_position() {
        let text = nested_triple_terms(MAX_DATA_NESTING + 5);
        let mut out = Vec::new();
        let err = Guard::new(text.as_bytes(), Family::Turtle)
            .read_to_end(&mut out)
            .unwrap_err();
        assert_eq!(too_deep(&err).unwrap().line, 1);
    }
}
