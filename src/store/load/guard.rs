//! This module defines the nesting guard: a reader that passes a data file's bytes on to its parser while
//! tracking how deep the parser will have to recurse, and fails with the position past a limit.
//!
//! The parsers recurse once per nested triple term (oxrdfio) or JSON level (oxjsonld), and oxrdfxml's work grows
//! with the square of element depth, so a small hostile file could overflow the stack or run for minutes. The
//! guard tracks only what nests: `<<` … `>>` outside IRIs, strings and comments (Turtle, TriG, N-Triples,
//! N-Quads), `{`/`[` outside strings (JSON-LD), and elements outside comments, CDATA, processing instructions
//! and declarations (RDF/XML). In the Turtle family it also checks that comments are UTF-8, which the parsers
//! skip unread (everything else they read themselves).

use std::io::{self, Read};

/// How deep triple terms may nest inside triple terms, and XML elements inside each other.
pub const MAX_DATA_NESTING: usize = 1024;

/// How deep JSON-LD arrays and objects may nest, as serde_json's default recursion limit: oxjsonld's memory grows
/// with the square of the depth (300 MB for a 9 KB file nested 1,000 deep).
pub const MAX_JSON_NESTING: usize = 128;

/// Where the guard stopped the data, and why: nested past its limit, or a comment that is not UTF-8.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TooDeep {
    /// What nests (`None`: invalid UTF-8 in a comment).
    pub what: Option<&'static str>,
    /// 1-based line.
    pub line: u64,
    /// 1-based column (in characters).
    pub column: u64,
    /// Byte offset.
    pub offset: u64,
    /// The limit passed.
    pub limit: usize,
}

impl std::fmt::Display for TooDeep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.what {
            Some(what) => write!(
                f,
                "{what} nest deeper than {} levels at line {} column {}",
                self.limit, self.line, self.column
            ),
            None => write!(
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
        }
    }

    fn too_deep(&self) -> TooDeep {
        TooDeep {
            what: Some(match self.family {
                Family::Turtle => "triple terms",
                Family::Json => "JSON arrays and objects",
                Family::Xml => "XML elements",
            }),
            line: self.mark.0,
            column: self.mark.1,
            offset: self.mark.2,
            limit: self.limit(),
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
            what: None,
            line,
            column,
            offset,
            limit: self.limit(),
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
                    _ => State::Decl {
                        brackets: u32::from(b == b'['),
                        quote: 0,
                    },
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
                (0, b'"' | b'\'') => State::Decl { brackets, quote: b },
                (0, b'[') => State::Decl {
                    brackets: brackets + 1,
                    quote,
                },
                (0, b']') => State::Decl {
                    brackets: brackets.saturating_sub(1),
                    quote,
                },
                (0, b'>') if brackets == 0 => State::Normal,
                (q, c) if q != 0 && c == q => State::Decl { brackets, quote: 0 },
                _ => State::Decl { brackets, quote },
            },
            _ => {
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
        self.scanner
            .scan(&buf[..n])
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
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
        assert_eq!((e.what, e.line, e.column), (None, 1, 48));
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
