//! This module defines [`TermId`], the decoded view [`TermRef`] of a dictionary entry, and the well-known terms.

use std::cmp::Ordering;
use std::fmt;

/// A dense integer standing for one RDF term in a [`super::Dictionary`].
///
/// Ids are assigned in the order terms are first seen, so the same inputs always give the same ids.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Default)]
#[repr(transparent)]
pub struct TermId(pub u32);

impl TermId {
    /// The default graph: a reserved id that is not an RDF term.
    pub const DEFAULT_GRAPH: TermId = TermId(0);

    /// The id as an index into per-term tables.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A triple of term ids in subject, predicate, object order.
pub type Triple = [TermId; 3];

/// A quad of term ids in graph, subject, predicate, object order (the default graph is [`TermId::DEFAULT_GRAPH`]).
pub type Quad = [TermId; 4];

/// The base direction of an RDF 1.2 directional language-tagged string.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum Direction {
    /// Left to right (`--ltr`).
    Ltr,
    /// Right to left (`--rtl`).
    Rtl,
}

/// An IRI as the dictionary stores it: a shared namespace followed by a local part.
#[derive(Copy, Clone, Debug)]
pub struct Iri<'a> {
    /// Everything up to and including the last `/` or `#` (may be empty).
    pub ns: &'a str,
    /// The rest.
    pub local: &'a str,
}

impl Iri<'_> {
    /// The IRI's length in bytes.
    pub fn len(&self) -> usize {
        self.ns.len() + self.local.len()
    }

    /// Whether the IRI is empty (never the case for a parsed IRI).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether this IRI spells `other`.
    pub fn eq_str(&self, other: &str) -> bool {
        other.len() == self.len() && other.starts_with(self.ns) && other.ends_with(self.local)
    }

    /// Writes the whole IRI into `out` (cleared first).
    pub fn write_to(&self, out: &mut String) {
        out.clear();
        out.push_str(self.ns);
        out.push_str(self.local);
    }

    /// Whether the IRI holds a character N-Triples' and Turtle's IRIREF does not allow (a space or control
    /// character, `<>"{}|^` ` and `\`), which only data read with `--lenient` can hold.
    pub fn needs_escaping(&self) -> bool {
        self.ns.bytes().chain(self.local.bytes()).any(not_in_iriref)
    }

    /// Writes the whole IRI into `out` (cleared first), each character IRIREF does not allow as a `\uXXXX`
    /// escape (which IRIREF allows): what a reader, with `--lenient`, reads back as the same IRI.
    pub fn write_escaped(&self, out: &mut String) {
        out.clear();
        for c in self.ns.chars().chain(self.local.chars()) {
            push_escaped(out, c);
        }
    }

    /// Compares two IRIs by their full text, without concatenating them.
    pub fn cmp_text(&self, other: &Iri<'_>) -> Ordering {
        if self.ns == other.ns {
            return self.local.cmp(other.local);
        }
        // Compare the concatenations segment by segment (memcmp on slices, no per-byte iteration).
        let (a, b) = (
            [self.ns.as_bytes(), self.local.as_bytes()],
            [other.ns.as_bytes(), other.local.as_bytes()],
        );
        let (mut ia, mut oa, mut ib, mut ob) = (0, 0, 0, 0);
        loop {
            while ia < 2 && oa == a[ia].len() {
                ia += 1;
                oa = 0;
            }
            while ib < 2 && ob == b[ib].len() {
                ib += 1;
                ob = 0;
            }
            match (ia < 2, ib < 2) {
                (false, false) => return Ordering::Equal,
                (false, true) => return Ordering::Less,
                (true, false) => return Ordering::Greater,
                (true, true) => {}
            }
            let (sa, sb) = (&a[ia][oa..], &b[ib][ob..]);
            let n = sa.len().min(sb.len());
            match sa[..n].cmp(&sb[..n]) {
                Ordering::Equal => {
                    oa += n;
                    ob += n;
                }
                other => return other,
            }
        }
    }
}

impl fmt::Display for Iri<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.ns)?;
        f.write_str(self.local)
    }
}

/// What distinguishes a literal besides its lexical form.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LiteralKind<'a> {
    /// `xsd:string`.
    Simple,
    /// A language-tagged string, with an RDF 1.2 base direction when one was given.
    Lang {
        /// The language tag, lower-cased.
        tag: &'a str,
        /// The base direction.
        direction: Option<Direction>,
    },
    /// Any other datatype, itself an IRI term in the dictionary.
    Typed(TermId),
}

/// A decoded view of one dictionary entry.
#[derive(Copy, Clone, Debug)]
pub enum TermRef<'a> {
    /// The reserved default-graph id.
    DefaultGraph,
    /// An IRI.
    Iri(Iri<'a>),
    /// A blank node, numbered by the dictionary (labels from the input are not kept: they are local to a file).
    Blank(u32),
    /// A literal.
    Literal {
        /// The lexical form, exactly as written.
        lexical: &'a str,
        /// Datatype or language.
        kind: LiteralKind<'a>,
    },
    /// An RDF 1.2 triple term.
    Triple(Triple),
}

/// IRIs the engine refers to by id; they are interned first, in this order, so their ids are constants.
pub mod well_known {
    use super::TermId;

    macro_rules! well_known {
        ($($name:ident = $id:literal : $iri:literal,)*) => {
            $(#[doc = concat!("`", $iri, "`")] pub const $name: TermId = TermId($id);)*
            /// Every well-known IRI with its id, in id order.
            pub const ALL: &[(TermId, &str)] = &[$((TermId($id), $iri),)*];
        };
    }

    well_known! {
        XSD_STRING = 1: "http://www.w3.org/2001/XMLSchema#string",
        RDF_LANG_STRING = 2: "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString",
        RDF_DIR_LANG_STRING = 3: "http://www.w3.org/1999/02/22-rdf-syntax-ns#dirLangString",
        XSD_BOOLEAN = 4: "http://www.w3.org/2001/XMLSchema#boolean",
        XSD_INTEGER = 5: "http://www.w3.org/2001/XMLSchema#integer",
        XSD_DECIMAL = 6: "http://www.w3.org/2001/XMLSchema#decimal",
        XSD_DOUBLE = 7: "http://www.w3.org/2001/XMLSchema#double",
        XSD_FLOAT = 8: "http://www.w3.org/2001/XMLSchema#float",
        XSD_DATE_TIME = 9: "http://www.w3.org/2001/XMLSchema#dateTime",
        XSD_DATE = 10: "http://www.w3.org/2001/XMLSchema#date",
        RDF_TYPE = 11: "http://www.w3.org/1999/02/22-rdf-syntax-ns#type",
        RDF_REIFIES = 12: "http://www.w3.org/1999/02/22-rdf-syntax-ns#reifies",
        RDF_JSON = 13: "http://www.w3.org/1999/02/22-rdf-syntax-ns#JSON",
        F_RULE = 14: "https://ns.flur.ee/db#rule",
        F_SPARQL = 15: "https://ns.flur.ee/db#sparql",
        XSD_TIME = 16: "http://www.w3.org/2001/XMLSchema#time",
        XSD_DAY_TIME_DURATION = 17: "http://www.w3.org/2001/XMLSchema#dayTimeDuration",
    }
}

/// `c`, or its `\\uXXXX` escape when IRIREF does not allow it.
fn push_escaped(out: &mut String, c: char) {
    if c.is_ascii() && not_in_iriref(c as u8) {
        out.push_str(&format!("\\u{:04X}", c as u32));
    } else {
        out.push(c);
    }
}

/// An IRI's text with the characters IRIREF does not allow escaped ([`Iri::write_escaped`] for a whole IRI).
pub fn escape_iri(iri: &str) -> String {
    let mut out = String::with_capacity(iri.len());
    for c in iri.chars() {
        push_escaped(&mut out, c);
    }
    out
}

/// A byte IRIREF does not allow: `[^#x00-#x20<>"{}|^`\\]` of N-Triples, Turtle and SPARQL.
fn not_in_iriref(b: u8) -> bool {
    b <= 0x20
        || matches!(
            b,
            b'<' | b'>' | b'"' | b'{' | b'}' | b'|' | b'^' | b'`' | b'\\'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    // A lenient N-Triples reader reads an escaped IRI back as the IRI; a plain IRI is written as it is.
    #[test]
    fn an_iri_written_escaped_reads_back_leniently_as_itself() {
        for (ns, local) in [
            ("http://e/", "b>c"),
            ("http://e/a b", "\"{}|^`\\<"),
            ("http://e/", "tab\there\u{1}"),
            ("http://e/", "plain-ünï"),
        ] {
            let iri = Iri { ns, local };
            let mut written = String::new();
            iri.write_escaped(&mut written);
            assert_eq!(iri.needs_escaping(), written != format!("{ns}{local}"));
            let line = format!("<{written}> <http://e/p> <http://e/o> .\n");
            let triple = oxttl::NTriplesParser::new()
                .lenient()
                .for_slice(line.as_bytes())
                .next()
                .expect("a triple")
                .expect("it parses");
            let oxrdf::NamedOrBlankNode::NamedNode(subject) = triple.subject else {
                panic!("an IRI subject");
            };
            assert_eq!(subject.as_str(), format!("{ns}{local}"));
        }
    }

    #[test]
    fn split_iris_compare_like_their_full_text() {
        let cases = [
            ("http://a/", "b"),
            ("http://a/b", ""),
            ("http://a/", "bc"),
            ("http://ab/", "c"),
            ("", "http://a/b"),
            ("http://a/", ""),
        ];
        for (x1, x2) in cases {
            for (y1, y2) in cases {
                let (x, y) = (Iri { ns: x1, local: x2 }, Iri { ns: y1, local: y2 });
                assert_eq!(
                    x.cmp_text(&y),
                    format!("{x1}{x2}").cmp(&format!("{y1}{y2}")),
                    "{x} vs {y}"
                );
            }
        }
    }
}
