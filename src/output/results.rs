//! This module defines the writers of query answers: SPARQL result formats (JSON, XML, CSV, TSV) for SELECT and
//! ASK via sparesults, and RDF syntaxes for CONSTRUCT and DESCRIBE via [`super::rdf`].

use std::io::{self, Write};

use oxrdf::{Term, Variable};
use sparesults::{QueryResultsFormat, QueryResultsSerializer};

use crate::exec::{ROW_UNBOUND, Rows};
use crate::store::{Quad, TermId, TermSource};

use super::rdf::{self, RdfOutputFormat};

/// The syntax of a query's answer.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum AnswerFormat {
    /// An aligned text table for people (SELECT, ASK), IRIs compacted with the query's prefixes; the default
    /// for SELECT and ASK on a terminal.
    Table,
    /// SPARQL 1.1 Query Results JSON (SELECT, ASK).
    Json,
    /// SPARQL Query Results XML (SELECT, ASK).
    Xml,
    /// SPARQL 1.1 Query Results CSV (SELECT, ASK).
    Csv,
    /// SPARQL 1.1 Query Results TSV (SELECT, ASK).
    Tsv,
    /// N-Triples (CONSTRUCT, DESCRIBE).
    #[value(name = "nt", alias = "ntriples")]
    NTriples,
    /// N-Quads (CONSTRUCT, DESCRIBE).
    #[value(name = "nquads", alias = "nq")]
    NQuads,
    /// Turtle (CONSTRUCT, DESCRIBE).
    Turtle,
    /// TriG (CONSTRUCT, DESCRIBE).
    Trig,
}

impl AnswerFormat {
    /// Whether it writes SELECT and ASK answers.
    pub fn answers_solutions(self) -> bool {
        self == AnswerFormat::Table || self.results().is_some()
    }

    /// The syntax a file's extension names (`.srj` and `.srx` too), if any.
    pub fn of_path(path: &std::path::Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "json" | "srj" => AnswerFormat::Json,
            "xml" | "srx" => AnswerFormat::Xml,
            "csv" => AnswerFormat::Csv,
            "tsv" => AnswerFormat::Tsv,
            "nt" => AnswerFormat::NTriples,
            "nq" => AnswerFormat::NQuads,
            "ttl" => AnswerFormat::Turtle,
            "trig" => AnswerFormat::Trig,
            _ => return None,
        })
    }

    /// The results format, for SELECT and ASK (none for the table).
    pub fn results(self) -> Option<QueryResultsFormat> {
        Some(match self {
            AnswerFormat::Json => QueryResultsFormat::Json,
            AnswerFormat::Xml => QueryResultsFormat::Xml,
            AnswerFormat::Csv => QueryResultsFormat::Csv,
            AnswerFormat::Tsv => QueryResultsFormat::Tsv,
            _ => return None,
        })
    }

    /// The RDF syntax, for CONSTRUCT and DESCRIBE.
    pub fn rdf(self) -> Option<RdfOutputFormat> {
        Some(match self {
            AnswerFormat::NTriples => RdfOutputFormat::NTriples,
            AnswerFormat::NQuads => RdfOutputFormat::NQuads,
            AnswerFormat::Turtle => RdfOutputFormat::Turtle,
            AnswerFormat::Trig => RdfOutputFormat::Trig,
            _ => return None,
        })
    }
}

/// Writes SELECT solutions (`vars.len()` columns wide, [`ROW_UNBOUND`] where unbound).
pub fn write_solutions<W: Write>(
    terms: &(impl TermSource + ?Sized),
    vars: &[String],
    rows: &Rows,
    format: QueryResultsFormat,
    out: W,
) -> io::Result<W> {
    match format {
        QueryResultsFormat::Csv => write_csv(terms, vars, rows, out),
        QueryResultsFormat::Xml => {
            // Checked before anything is written: no half document.
            for row in rows.iter() {
                for &id in row.iter().take(vars.len()).filter(|&&id| id != ROW_UNBOUND) {
                    if let Some(c) = terms.to_oxrdf(id).as_ref().and_then(xml_forbidden) {
                        return Err(io::Error::new(
                            io::ErrorKind::InvalidData,
                            format!(
                                "the answer holds the character U+{:04X}, which XML 1.0 cannot carry; use --format json, tsv or csv",
                                u32::from(c)
                            ),
                        ));
                    }
                }
            }
            serialize(terms, vars, rows, format, XmlText(out)).map(|x| x.0)
        }
        _ => serialize(terms, vars, rows, format, out),
    }
}

/// Writes solutions with sparesults' serializer.
fn serialize<W: Write>(
    terms: &(impl TermSource + ?Sized),
    vars: &[String],
    rows: &Rows,
    format: QueryResultsFormat,
    out: W,
) -> io::Result<W> {
    let variables: Vec<Variable> = vars
        .iter()
        .map(|v| Variable::new_unchecked(v.as_str()))
        .collect();
    let mut ser = QueryResultsSerializer::from_format(format)
        .serialize_solutions_to_writer(out, variables.clone())?;
    for row in rows.iter() {
        let bindings: Vec<(&Variable, Term)> = variables
            .iter()
            .zip(row)
            .filter(|(_, id)| **id != ROW_UNBOUND)
            .filter_map(|(v, id)| terms.to_oxrdf(*id).map(|t| (v, t)))
            .collect();
        ser.serialize(bindings.iter().map(|(v, t)| (v.as_ref(), t.as_ref())))?;
    }
    ser.finish()
}

/// SPARQL 1.1 Query Results CSV: a header of the variables, a row per solution, lines ended by CRLF; an IRI as
/// its text, a literal as its lexical form, a blank node as `_:label`, a triple term in N-Triples
/// (`<<( <s> <p> "o" )>>`); a field holding `,`, `"`, CR or LF quoted, its `"` doubled (RFC 4180), so that an
/// IRI with a comma stays one field.
fn write_csv<W: Write>(
    terms: &(impl TermSource + ?Sized),
    vars: &[String],
    rows: &Rows,
    mut out: W,
) -> io::Result<W> {
    fn field(out: &mut impl Write, text: &str) -> io::Result<()> {
        if text.contains([',', '"', '\r', '\n']) {
            write!(out, "\"{}\"", text.replace('"', "\"\""))
        } else {
            out.write_all(text.as_bytes())
        }
    }
    for (i, v) in vars.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        field(&mut out, v)?;
    }
    out.write_all(b"\r\n")?;
    for row in rows.iter() {
        for (i, &id) in row.iter().take(vars.len()).enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            let term = (id != ROW_UNBOUND).then(|| terms.to_oxrdf(id)).flatten();
            let text = match term {
                None => continue,
                Some(Term::NamedNode(n)) => n.into_string(),
                Some(Term::BlankNode(b)) => b.to_string(),
                Some(Term::Literal(l)) => l.destruct().0,
                Some(Term::Triple(t)) => {
                    format!("<<( {} {} {} )>>", t.subject, t.predicate, t.object)
                }
            };
            field(&mut out, &text)?;
        }
        out.write_all(b"\r\n")?;
    }
    Ok(out)
}

/// The first character of a term that XML 1.0 cannot carry (a control character other than tab, line feed and
/// carriage return; U+FFFE, U+FFFF), if any.
fn xml_forbidden(term: &Term) -> Option<char> {
    let bad = |text: &str| {
        text.chars().find(|&c| {
            (c < ' ' && !matches!(c, '\t' | '\n' | '\r')) || matches!(c, '\u{FFFE}' | '\u{FFFF}')
        })
    };
    match term {
        Term::NamedNode(n) => bad(n.as_str()),
        Term::BlankNode(b) => bad(b.as_str()),
        Term::Literal(l) => bad(l.value()),
        Term::Triple(t) => xml_forbidden(&t.subject.clone().into())
            .or_else(|| bad(t.predicate.as_str()))
            .or_else(|| xml_forbidden(&t.object)),
    }
}

/// A writer of SPARQL Results XML that keeps a value's text as it is: a carriage return (which an XML parser
/// reads as a line feed) is written `&#xD;` (the markup the serializer writes holds none; the characters XML
/// cannot carry at all are refused before, by [`xml_forbidden`]).
struct XmlText<W>(W);

impl<W: Write> Write for XmlText<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut start = 0;
        for (i, _) in buf.iter().enumerate().filter(|(_, b)| **b == b'\r') {
            self.0.write_all(&buf[start..i])?;
            self.0.write_all(b"&#xD;")?;
            start = i + 1;
        }
        self.0.write_all(&buf[start..])?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// Writes SELECT solutions as a table: a header of the variables, a rule, a row per solution, each column as
/// wide as its widest cell (terms in Turtle, IRIs compacted with `prefixes`, unbound cells empty), then the count.
pub fn write_table<W: Write>(
    terms: &(impl TermSource + ?Sized),
    prefixes: &[(String, String)],
    vars: &[String],
    rows: &Rows,
    mut out: W,
) -> io::Result<W> {
    let header: Vec<String> = vars.iter().map(|v| format!("?{v}")).collect();
    let mut cells: Vec<Vec<String>> = Vec::new();
    for row in rows.iter() {
        cells.push(
            row.iter()
                .take(vars.len())
                .map(|&id| {
                    let mut text = String::new();
                    if id != ROW_UNBOUND {
                        super::annotated::term(&mut text, terms, prefixes, id);
                    }
                    shown(text)
                })
                .collect(),
        );
    }
    // Columns on a terminal, not characters: `日本` takes four, `e\u{301}` one.
    let width = |c: &str| unicode_width::UnicodeWidthStr::width(c);
    let widths: Vec<usize> = (0..vars.len())
        .map(|i| {
            cells
                .iter()
                .map(|r| width(&r[i]))
                .chain([width(&header[i])])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |row: &[String], out: &mut W| -> io::Result<()> {
        let mut text = String::new();
        for (cell, w) in row.iter().zip(&widths) {
            text.push_str(cell);
            text.extend(std::iter::repeat_n(' ', w - width(cell) + 2));
        }
        writeln!(out, "{}", text.trim_end())
    };
    line(&header, &mut out)?;
    let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
    line(&rule, &mut out)?;
    for row in &cells {
        line(row, &mut out)?;
    }
    let n = cells.len();
    writeln!(out, "({n} {})", if n == 1 { "row" } else { "rows" })?;
    Ok(out)
}

/// A cell's Turtle text with the control characters Turtle leaves as they are (C1, such as U+009B, which some
/// terminals obey as an escape) written as `\uXXXX`, which Turtle reads back as the same character: a table is
/// read by people, on terminals.
fn shown(text: String) -> String {
    if !text.chars().any(char::is_control) {
        return text;
    }
    text.chars()
        .map(|c| {
            if c.is_control() {
                format!("\\u{:04X}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Writes an ASK answer.
pub fn write_boolean<W: Write>(value: bool, format: QueryResultsFormat, out: W) -> io::Result<W> {
    QueryResultsSerializer::from_format(format).serialize_boolean_to_writer(out, value)
}

/// Writes CONSTRUCT / DESCRIBE triples, sorted, in the default graph.
pub fn write_triples<W: Write>(
    terms: &(impl TermSource + Sync + ?Sized),
    prefixes: &[(String, String)],
    triples: &[[TermId; 3]],
    format: RdfOutputFormat,
    out: W,
) -> io::Result<W> {
    let mut quads: Vec<Quad> = triples
        .iter()
        .map(|&[s, p, o]| [TermId::DEFAULT_GRAPH, s, p, o])
        .collect();
    rdf::sort_quads(terms, &mut quads);
    rdf::write_quads(terms, prefixes, &quads, format, out)
}
