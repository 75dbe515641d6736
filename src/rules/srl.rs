//! This module defines SRL rules (SHACL 1.2 Rules' compact syntax, `.srl` files): split into rules and data
//! blocks, checked against the specification's well-formedness conditions, and lowered through the SPARQL rule
//! surface to the same `ir::Op` bodies and head templates.
//!
//! ```text
//! RULE iri? { head } WHERE { body }    ⇒  CONSTRUCT { head } WHERE { body' }
//! IF { body } THEN { head }            ⇒  CONSTRUCT { head } WHERE { body' }
//! DATA { triples }                     ⇒  CONSTRUCT { triples } WHERE { }      (inferred unless asserted)
//! body' element by element:  triples ⇒ triples · FILTER c ⇒ FILTER c · SET(?v := e) ⇒ BIND(e AS ?v)
//!                            NOT { b } ⇒ FILTER NOT EXISTS { b' }, b' = b with every variable no element
//!                                        before the NOT binds renamed apart (it is the negation's own)
//! ```
//!
//! The grammar followed is the editors' draft's `shapes-rule-language.bnf` (copied 2026-12-03; see docs/srl.md).
//! A rule's text is its file's text with every other rule and data block blanked out, so that an offset in it is
//! the same offset in the file, and diagnostics point into the file as written.

use std::ops::Range;
use std::path::Path;

use hashbrown::{HashMap, HashSet};

use super::RuleError;
use super::model::{Language, Origin, Rule};
use super::source::RuleText;
use crate::store::Dictionary;

/// Diagnostic codes of SRL rules.
pub mod codes {
    /// The text is not SRL.
    pub const SYNTAX: &str = "reasonctl::srl::syntax";
    /// A head variable the body never binds (well-formedness, first condition).
    pub const UNBOUND_HEAD_VAR: &str = "reasonctl::srl::unbound_head_var";
    /// A variable of a FILTER or SET expression not bound by an element before it.
    pub const UNBOUND_EXPR_VAR: &str = "reasonctl::srl::unbound_expr_var";
    /// A variable assigned by two SET elements.
    pub const REASSIGNED: &str = "reasonctl::srl::reassigned";
    /// A SET variable already used by a triple pattern before it.
    pub const ASSIGNED_AFTER_USE: &str = "reasonctl::srl::assigned_after_use";
    /// A construct of the draft this implementation does not run yet.
    pub const UNSUPPORTED: &str = "reasonctl::srl::unsupported";
    /// A rule set in the RDF syntax (`srl:` vocabulary) whose nodes are not what the syntax's shapes require.
    pub const RDF_SYNTAX: &str = "reasonctl::srl::rdf_syntax";
}

pub mod rdf;

/// Where the specification states the well-formedness conditions.
const WELL_FORMED: &str = "SHACL 1.2 Rules, section \"Well-formedness Conditions\"";

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Kind {
    Iri,
    PName,
    Var,
    Str,
    Num,
    Blank,
    Lang,
    Word,
    Punct,
}

#[derive(Clone, Debug)]
struct Tok {
    kind: Kind,
    at: Range<usize>,
}

/// An SRL problem: code, message, where (in the text), and the fix.
#[derive(Clone, Debug)]
struct Problem {
    code: &'static str,
    message: String,
    at: Option<Range<usize>>,
    help: String,
}

fn problem(code: &'static str, at: Range<usize>, message: String, help: &str) -> Problem {
    Problem {
        code,
        message,
        at: Some(at),
        help: help.to_owned(),
    }
}

fn syntax(at: Range<usize>, message: impl Into<String>) -> Problem {
    problem(
        codes::SYNTAX,
        at,
        message.into(),
        "an SRL rule is RULE { head } WHERE { body } or IF { body } THEN { head }; data is DATA { triples } \
         (see docs/srl.md)",
    )
}

/// `WHERE DATA` / `NOT DATA` (`keyword`, matching `what` against the data only): not supported yet.
fn data_form(at: Range<usize>, keyword: &str, what: &str) -> Problem {
    problem(
        codes::UNSUPPORTED,
        at,
        format!(
            "{keyword} DATA ({what} matched against the data only) is not supported yet: the draft text followed here does not define its evaluation"
        ),
        &format!("write {keyword} {{ … }}; see docs/srl.md"),
    )
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '-' || c == '.' || c == '\u{b7}'
}

/// The tokens of `text` (comments and white space skipped).
fn tokens(text: &str) -> Result<Vec<Tok>, Problem> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let starts = |i: usize, s: &str| text[i..].starts_with(s);
    while i < b.len() {
        let c = text[i..].chars().next().expect("in bounds");
        if c.is_whitespace() {
            i += c.len_utf8();
            continue;
        }
        if c == '#' {
            i = text[i..].find('\n').map_or(b.len(), |n| i + n + 1);
            continue;
        }
        let start = i;
        let (kind, end) = match c {
            '<' => {
                if starts(i, "<<(") {
                    (Kind::Punct, i + 3)
                } else if starts(i, "<<") {
                    (Kind::Punct, i + 2)
                } else {
                    // An IRI runs to `>` without white space or the characters IRIs exclude; else an operator.
                    // `<` before a variable, a number, a sign, a bracket or a string is an operator: `?a<?b&&?b>1`
                    // is a comparison (a relative IRI starting so would be odd).
                    let rest = &text[i + 1..];
                    let operand = rest
                        .chars()
                        .next()
                        .is_some_and(|ch| "?$-+(\"'".contains(ch) || ch.is_ascii_digit());
                    let stop = rest.find(|ch: char| {
                        ch == '>' || ch.is_whitespace() || "<\"{}|^`".contains(ch)
                    });
                    match stop {
                        Some(n) if !operand && rest[n..].starts_with('>') => {
                            (Kind::Iri, i + 1 + n + 1)
                        }
                        _ if starts(i, "<=") => (Kind::Punct, i + 2),
                        _ => (Kind::Punct, i + 1),
                    }
                }
            }
            '>' if starts(i, ">>") || starts(i, ">=") => (Kind::Punct, i + 2),
            ')' if starts(i, ")>>") => (Kind::Punct, i + 3),
            '{' if starts(i, "{|") => (Kind::Punct, i + 2),
            '|' if starts(i, "|}") || starts(i, "||") => (Kind::Punct, i + 2),
            '&' if starts(i, "&&") => (Kind::Punct, i + 2),
            '!' if starts(i, "!=") => (Kind::Punct, i + 2),
            ':' if starts(i, ":=") => (Kind::Punct, i + 2),
            '^' if starts(i, "^^") => (Kind::Punct, i + 2),
            '"' | '\'' => {
                let long: String = std::iter::repeat_n(c, 3).collect();
                let (open, close) = if starts(i, &long) {
                    (3, long.as_str())
                } else {
                    (1, &long[..1])
                };
                let mut j = i + open;
                loop {
                    if j >= b.len() || (open == 1 && (b[j] == b'\n' || b[j] == b'\r')) {
                        return Err(syntax(start..start + open, "a string that does not end"));
                    }
                    if b[j] == b'\\' {
                        // The escaped character, whole (it may be several bytes).
                        j += 1 + text[j + 1..].chars().next().map_or(0, char::len_utf8);
                        continue;
                    }
                    if starts(j, close) {
                        break (Kind::Str, j + close.len());
                    }
                    j += text[j..].chars().next().map_or(1, char::len_utf8);
                }
            }
            '?' | '$' => {
                let n = text[i + 1..]
                    .find(|ch: char| !(ch.is_alphanumeric() || ch == '_' || ch == '\u{b7}'))
                    .unwrap_or(b.len() - i - 1);
                if n == 0 {
                    return Err(syntax(start..start + 1, "a variable without a name"));
                }
                (Kind::Var, i + 1 + n)
            }
            '@' => {
                let n = text[i + 1..]
                    .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '-'))
                    .unwrap_or(b.len() - i - 1);
                (Kind::Lang, i + 1 + n)
            }
            '_' if starts(i, "_:") => {
                let n = text[i + 2..]
                    .find(|ch: char| !is_name_char(ch))
                    .unwrap_or(b.len() - i - 2);
                (Kind::Blank, i + 2 + n)
            }
            d if d.is_ascii_digit()
                || (d == '.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) =>
            {
                let mut j = i;
                while j < b.len() && (b[j].is_ascii_digit() || b[j] == b'.') {
                    // A final `.` ends a triple, not the number.
                    if b[j] == b'.' && !b.get(j + 1).is_some_and(u8::is_ascii_digit) {
                        break;
                    }
                    j += 1;
                }
                if j < b.len() && (b[j] == b'e' || b[j] == b'E') {
                    j += 1;
                    if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
                        j += 1;
                    }
                    while j < b.len() && b[j].is_ascii_digit() {
                        j += 1;
                    }
                }
                (Kind::Num, j)
            }
            c if c.is_alphabetic() || c == '_' || c == ':' => {
                // A word, or a prefixed name (prefix, `:`, local part; a final `.` is not part of it).
                let mut j = i;
                let mut colon = false;
                while j < b.len() {
                    let ch = text[j..].chars().next().expect("in bounds");
                    if ch == ':' && !starts(j, ":=") {
                        colon = true;
                    } else if ch == '%' || ch == '\\' {
                        // `%XX` or `\c`: the next character belongs to the name, whole.
                        j += 1 + text[j + 1..].chars().next().map_or(0, char::len_utf8);
                        continue;
                    } else if !is_name_char(ch) {
                        break;
                    }
                    j += ch.len_utf8();
                }
                while j > i + 1 && b[j - 1] == b'.' && b[j - 2] != b'\\' {
                    j -= 1;
                }
                (if colon { Kind::PName } else { Kind::Word }, j.min(b.len()))
            }
            '.' | ';' | ',' | '{' | '}' | '(' | ')' | '[' | ']' | '~' | '^' | '/' | '*' | '+'
            | '-' | '=' | '!' | '>' | '|' | '&' => (Kind::Punct, i + 1),
            _ => {
                return Err(syntax(
                    start..start + c.len_utf8(),
                    format!("unexpected character {c:?}"),
                ));
            }
        };
        out.push(Tok {
            kind,
            at: start..end,
        });
        i = end;
    }
    Ok(out)
}

/// One element of a rule body.
#[derive(Clone, Debug)]
enum Element {
    /// Triple patterns (text range), and their variables with where each is.
    Triples(Range<usize>, Vec<(String, Range<usize>)>),
    /// `FILTER` and its constraint (text range), with the constraint's variables.
    Filter(Range<usize>, Vec<(String, Range<usize>)>),
    /// `NOT { … }`: the inside (text range) and its elements (triple patterns and FILTERs), in order.
    Not(Range<usize>, Vec<Element>),
    /// `SET(?v := e)`: the variable (with where it is), the expression (text range), its variables.
    Set(
        (String, Range<usize>),
        Range<usize>,
        Vec<(String, Range<usize>)>,
    ),
}

/// A top-level item of an SRL text.
#[derive(Clone, Debug)]
enum Item {
    /// `BASE`, `PREFIX` (kept), `VERSION` (dropped), `IMPORTS` (refused when compiled); its range.
    Decl(Range<usize>),
    /// A rule: its range, its name if it has one, its head's inside, its body.
    Rule {
        at: Range<usize>,
        name: Option<Range<usize>>,
        head: Range<usize>,
        body: Vec<Element>,
    },
    /// `DATA { … }`: its range and its inside.
    Data {
        at: Range<usize>,
        inside: Range<usize>,
    },
}

struct Parser<'t> {
    text: &'t str,
    toks: Vec<Tok>,
    /// For each opening bracket's token, the index of the token that closes it.
    pairs: Vec<Option<usize>>,
    i: usize,
}

/// The closing bracket of each opening one (matched by kind, in one pass); an error at the first bracket that
/// closes the wrong kind or is never closed.
fn pairs(text: &str, toks: &[Tok]) -> Result<Vec<Option<usize>>, Problem> {
    let mut out = vec![None; toks.len()];
    let mut open: Vec<(usize, &str)> = Vec::new();
    for (j, t) in toks.iter().enumerate() {
        if t.kind != Kind::Punct {
            continue;
        }
        let p = &text[t.at.clone()];
        let closer = match p {
            "{" => "}",
            "(" => ")",
            "[" => "]",
            "<<" => ">>",
            "{|" => "|}",
            "<<(" => ")>>",
            "}" | ")" | "]" | ">>" | "|}" | ")>>" => {
                match open.pop() {
                    Some((k, want)) if want == p => out[k] = Some(j),
                    Some((k, want)) => {
                        return Err(syntax(
                            t.at.clone(),
                            format!(
                                "{p} closes the {} at byte {} (expected {want})",
                                &text[toks[k].at.clone()],
                                toks[k].at.start
                            ),
                        ));
                    }
                    None => return Err(syntax(t.at.clone(), format!("{p} closes nothing"))),
                }
                continue;
            }
            _ => continue,
        };
        open.push((j, closer));
    }
    match open.pop() {
        Some((k, _)) => Err(syntax(toks[k].at.clone(), "this bracket is never closed")),
        None => Ok(out),
    }
}

impl<'t> Parser<'t> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.i)
    }

    fn word(&self, w: &str) -> bool {
        self.peek().is_some_and(|t| {
            t.kind == Kind::Word && self.text[t.at.clone()].eq_ignore_ascii_case(w)
        })
    }

    fn punct(&self, p: &str) -> bool {
        self.peek()
            .is_some_and(|t| t.kind == Kind::Punct && &self.text[t.at.clone()] == p)
    }

    /// Where the next token is (the end of the text after the last).
    fn here(&self) -> Range<usize> {
        self.peek()
            .map_or(self.text.len()..self.text.len(), |t| t.at.clone())
    }

    /// The index of the token closing the bracket at `self.i` (`{`, `(`, `[`, `<<`, `{|`, `<<(`).
    fn closing(&self) -> Result<usize, Problem> {
        self.pairs
            .get(self.i)
            .copied()
            .flatten()
            .ok_or_else(|| syntax(self.here(), "expected an opening bracket"))
    }

    /// A bracketed block: the range strictly inside it, the parser after it.
    fn block(&mut self, open: &str, what: &str) -> Result<Range<usize>, Problem> {
        if !self.punct(open) {
            return Err(syntax(self.here(), format!("expected {what}")));
        }
        let close = self.closing()?;
        let inside = self.toks[self.i].at.end..self.toks[close].at.start;
        self.i = close + 1;
        Ok(inside)
    }

    /// The variables (by name) and blank node labels (as spelled: `_:b`; the two cannot clash) in `range`.
    fn vars(&self, range: &Range<usize>) -> Vec<(String, Range<usize>)> {
        // Tokens are in text order: only those of the range are looked at.
        let from = self.toks.partition_point(|t| t.at.start < range.start);
        self.toks[from..]
            .iter()
            .take_while(|t| t.at.end <= range.end)
            .filter(|t| matches!(t.kind, Kind::Var | Kind::Blank))
            .map(|t| {
                let skip = usize::from(t.kind == Kind::Var);
                (
                    self.text[t.at.start + skip..t.at.end].to_owned(),
                    t.at.clone(),
                )
            })
            .collect()
    }

    fn items(&mut self) -> Result<Vec<Item>, Problem> {
        let mut items = Vec::new();
        while let Some(t) = self.peek().cloned() {
            let start = t.at.start;
            if self.word("PREFIX") {
                self.i += 1;
                let ns = self.peek().cloned().filter(|t| t.kind == Kind::PName);
                let Some(ns) = ns.filter(|t| self.text[t.at.clone()].ends_with(':')) else {
                    return Err(syntax(
                        self.here(),
                        "expected a prefix such as ex: after PREFIX",
                    ));
                };
                self.i += 1;
                let iri = self.here();
                if self.peek().is_none_or(|t| t.kind != Kind::Iri) {
                    return Err(syntax(
                        iri,
                        format!("expected <IRI> after PREFIX {}", &self.text[ns.at]),
                    ));
                }
                self.i += 1;
                items.push(Item::Decl(start..iri.end));
            } else if self.word("BASE") || self.word("IMPORTS") {
                let base = self.word("BASE");
                self.i += 1;
                let at = self.here();
                let fits = |t: &Tok| t.kind == Kind::Iri || (!base && t.kind == Kind::PName);
                if self.peek().is_none_or(|t| !fits(t)) {
                    let what = if base {
                        "expected <IRI> after BASE"
                    } else {
                        "expected an IRI"
                    };
                    return Err(syntax(at, what));
                }
                self.i += 1;
                items.push(Item::Decl(start..at.end));
            } else if self.word("VERSION") {
                self.i += 1;
                let at = self.here();
                if self.peek().is_none_or(|t| t.kind != Kind::Str) {
                    return Err(syntax(at, "expected a version string after VERSION"));
                }
                self.i += 1;
                items.push(Item::Decl(start..at.end));
            } else if self.word("DATA") {
                self.i += 1;
                let inside = self.block("{", "{ after DATA")?;
                let within = |t: &&Tok| t.at.start >= inside.start && t.at.end <= inside.end;
                if let Some(t) = self
                    .toks
                    .iter()
                    .filter(within)
                    .find(|t| t.kind == Kind::Var)
                {
                    return Err(syntax(
                        t.at.clone(),
                        format!(
                            "a DATA block holds triples only, not the variable {}",
                            &self.text[t.at.clone()]
                        ),
                    ));
                }
                let anonymous = |t: &&Tok| {
                    t.kind == Kind::Blank
                        || (t.kind == Kind::Punct && matches!(&self.text[t.at.clone()], "[" | "("))
                };
                if let Some(t) = self.toks.iter().filter(within).find(anonymous) {
                    return Err(problem(
                        codes::UNSUPPORTED,
                        t.at.clone(),
                        "blank nodes and collections in a DATA block are not supported yet (a data block runs as a rule, and rule heads do not mint blank nodes)".to_owned(),
                        "name the node with an IRI, or put these triples in the data files",
                    ));
                }
                items.push(Item::Data {
                    at: start..self.toks[self.i - 1].at.end,
                    inside,
                });
            } else if self.word("RULE") {
                self.i += 1;
                let name = self
                    .peek()
                    .filter(|t| matches!(t.kind, Kind::Iri | Kind::PName))
                    .map(|t| t.at.clone());
                if name.is_some() {
                    self.i += 1;
                }
                let head = self.block("{", "{ head } after RULE")?;
                if !self.word("WHERE") {
                    return Err(syntax(self.here(), "expected WHERE after the rule's head"));
                }
                self.i += 1;
                if self.word("DATA") {
                    return Err(data_form(self.here(), "WHERE", "a body"));
                }
                let body = self.body()?;
                items.push(Item::Rule {
                    at: start..self.toks[self.i - 1].at.end,
                    name,
                    head,
                    body,
                });
            } else if self.word("IF") {
                self.i += 1;
                let body = self.body()?;
                if !self.word("THEN") {
                    return Err(syntax(self.here(), "expected THEN after the rule's body"));
                }
                self.i += 1;
                let head = self.block("{", "{ head } after THEN")?;
                items.push(Item::Rule {
                    at: start..self.toks[self.i - 1].at.end,
                    name: None,
                    head,
                    body,
                });
            } else {
                return Err(syntax(
                    t.at.clone(),
                    format!(
                        "expected RULE, IF, DATA, PREFIX, BASE, VERSION or IMPORTS, found {:?}",
                        &self.text[t.at]
                    ),
                ));
            }
        }
        Ok(items)
    }

    /// A body `{ … }` as its elements.
    fn body(&mut self) -> Result<Vec<Element>, Problem> {
        let close = if self.punct("{") {
            self.closing()?
        } else {
            return Err(syntax(self.here(), "expected { body }"));
        };
        self.i += 1;
        let elements = self.elements(close, false)?;
        self.i = close + 1;
        Ok(elements)
    }

    /// Elements up to the token `end`; `basic`: inside NOT (triples and FILTER only).
    fn elements(&mut self, end: usize, basic: bool) -> Result<Vec<Element>, Problem> {
        let mut out = Vec::new();
        while self.i < end {
            if self.punct(".") {
                self.i += 1;
            } else if self.word("FILTER") {
                self.i += 1;
                let start = self.here().start;
                let is_call = self
                    .peek()
                    .is_some_and(|t| matches!(t.kind, Kind::Word | Kind::Iri | Kind::PName));
                if is_call {
                    self.i += 1;
                }
                if !self.punct("(") {
                    return Err(syntax(
                        self.here(),
                        "expected ( after FILTER (a bracketed expression or a function call)",
                    ));
                }
                let close = self.closing()?;
                let at = start..self.toks[close].at.end;
                self.i = close + 1;
                out.push(Element::Filter(at.clone(), self.vars(&at)));
            } else if self.word("NOT") {
                let not = self.here();
                if basic {
                    return Err(syntax(not, "NOT cannot be nested inside NOT"));
                }
                self.i += 1;
                if self.word("DATA") {
                    return Err(data_form(self.here(), "NOT", "a negation"));
                }
                if !self.punct("{") {
                    return Err(syntax(self.here(), "expected { after NOT"));
                }
                let open = self.i;
                let close = self.closing()?;
                self.i += 1;
                let inner = self.elements(close, true)?;
                let range = self.toks[open].at.end..self.toks[close].at.start;
                self.i = close + 1;
                out.push(Element::Not(range, inner));
            } else if self.word("SET") {
                if basic {
                    return Err(syntax(self.here(), "SET cannot be used inside NOT"));
                }
                self.i += 1;
                if !self.punct("(") {
                    return Err(syntax(self.here(), "expected ( after SET"));
                }
                let close = self.closing()?;
                self.i += 1;
                let var = match self.peek() {
                    Some(t) if t.kind == Kind::Var => t.at.clone(),
                    _ => {
                        return Err(syntax(
                            self.here(),
                            "expected a variable: SET(?v := expression)",
                        ));
                    }
                };
                self.i += 1;
                if !self.punct(":=") {
                    return Err(syntax(
                        self.here(),
                        "expected := after the variable: SET(?v := expression)",
                    ));
                }
                self.i += 1;
                if self.i >= close {
                    return Err(syntax(self.here(), "expected an expression after :="));
                }
                let expr = self.toks[self.i].at.start..self.toks[close - 1].at.end;
                self.i = close + 1;
                let name = self.text[var.start + 1..var.end].to_owned();
                out.push(Element::Set((name, var), expr.clone(), self.vars(&expr)));
            } else {
                // Triple patterns, up to the next FILTER, NOT or SET at this level.
                let start = self.i;
                while self.i < end {
                    if self.word("FILTER") || self.word("NOT") || self.word("SET") {
                        break;
                    }
                    let t = &self.toks[self.i];
                    if t.kind == Kind::Punct
                        && matches!(
                            &self.text[t.at.clone()],
                            "{" | "(" | "[" | "<<" | "{|" | "<<("
                        )
                    {
                        let close = self.closing()?;
                        if close >= end {
                            return Err(syntax(
                                t.at.clone(),
                                "this bracket is not closed inside the body",
                            ));
                        }
                        if &self.text[t.at.clone()] == "{" {
                            return Err(syntax(
                                t.at.clone(),
                                "a group { … } is not SRL: a body is a flat sequence of triple patterns, FILTER, NOT and SET",
                            ));
                        }
                        self.i = close + 1;
                    } else {
                        self.i += 1;
                    }
                }
                // Only SRL's own triple syntax: no SPARQL keywords, no path closures or alternatives.
                for (k, t) in self.toks[start..self.i].iter().enumerate() {
                    let spelled = &self.text[t.at.clone()];
                    let next_is_number = self
                        .toks
                        .get(start + k + 1)
                        .is_some_and(|n| n.kind == Kind::Num && n.at.start == t.at.end);
                    let bad = match t.kind {
                        Kind::Word => !matches!(spelled, "a" | "true" | "false"),
                        Kind::Punct => {
                            matches!(spelled, "|" | "*") || (spelled == "+" && !next_is_number)
                        }
                        _ => false,
                    };
                    if bad {
                        return Err(syntax(
                            t.at.clone(),
                            format!(
                                "{spelled} is not SRL here: a body holds triple patterns (paths with / and ^ only), FILTER, NOT and SET(?v := expression)"
                            ),
                        ));
                    }
                }
                let at = self.toks[start].at.start..self.toks[self.i - 1].at.end;
                out.push(Element::Triples(at.clone(), self.vars(&at)));
            }
        }
        Ok(out)
    }
}

fn parse(text: &str) -> Result<Vec<Item>, Problem> {
    let toks = tokens(text)?;
    let mut p = Parser {
        text,
        pairs: pairs(text, &toks)?,
        toks,
        i: 0,
    };
    p.items()
}

/// What follows `keyword` (any case) at the start of a declaration's text; `None` if it does not start so.
fn keyword_rest<'d>(d: &'d str, keyword: &str) -> Option<&'d str> {
    d.get(..keyword.len())
        .filter(|k| k.eq_ignore_ascii_case(keyword))
        .map(|_| &d[keyword.len()..])
}

/// The IRI a rule name (`<iri>`, relative to the `BASE` before it, or a prefixed name) stands for.
fn expand(
    text: &str,
    name: &Range<usize>,
    (prefixes, base): &(HashMap<String, String>, Option<String>),
) -> Option<String> {
    let n = &text[name.clone()];
    if let Some(iri) = n.strip_prefix('<').and_then(|s| s.strip_suffix('>')) {
        // Relative to the BASE before it; without one it must be absolute (a relative name has no IRI).
        return match base.as_deref() {
            Some(b) => oxiri::Iri::parse(b.to_owned())
                .ok()
                .and_then(|b| b.resolve(iri).ok())
                .map(oxiri::Iri::into_inner),
            None => oxiri::Iri::parse(iri.to_owned())
                .ok()
                .map(oxiri::Iri::into_inner),
        };
    }
    let (prefix, local) = n.split_once(':')?;
    prefixes.get(prefix).map(|ns| format!("{ns}{local}"))
}

/// The prefixes and the base `items` declare before `upto` (a byte offset).
fn prefixes_before(
    text: &str,
    items: &[Item],
    upto: usize,
) -> (HashMap<String, String>, Option<String>) {
    let mut out = HashMap::new();
    let mut base = None;
    for item in items {
        if let Item::Decl(at) = item {
            if at.start >= upto {
                break;
            }
            let d = &text[at.clone()];
            if let Some(rest) = keyword_rest(d, "BASE") {
                let iri = rest.trim().trim_start_matches('<').trim_end_matches('>');
                base = Some(iri.to_owned());
            }
            if let Some(rest) = keyword_rest(d, "PREFIX") {
                let rest = rest.trim_start();
                if let Some((p, iri)) = rest.split_once(':') {
                    let iri = iri.trim().trim_start_matches('<').trim_end_matches('>');
                    out.insert(p.trim().to_owned(), iri.to_owned());
                }
            }
        }
    }
    (out, base)
}

/// The rules and data blocks of an SRL file, each as a rule text: the file with every other rule and data block
/// blanked out (so offsets are the file's). Ids: a named rule's IRI; else `FILE#N` (the N-th rule of the file)
/// or `FILE#data-N` (the N-th data block). A file that does not parse is one text, whose compilation reports why.
pub fn split(path: &Path, text: &str) -> Vec<RuleText> {
    let file_id = path.display().to_string();
    let whole = |id: String| RuleText {
        id,
        origin: Origin::File {
            path: path.to_owned(),
            offset: 0,
            prologue: 0,
        },
        language: Language::Srl,
        text: text.to_owned(),
    };
    let Ok(items) = parse(text) else {
        return vec![whole(file_id)];
    };
    let mut out = Vec::new();
    let (mut rules, mut data) = (0, 0);
    // One pass, in file order: the prologue so far (the file up to the last declaration, the items in it
    // blanked, line breaks kept), and the prefixes and base it declares.
    let mut prefix: Vec<u8> = Vec::new();
    let mut pending: Vec<Range<usize>> = Vec::new();
    let mut declared: (HashMap<String, String>, Option<String>) = (HashMap::new(), None);
    for item in &items {
        let at = match item {
            Item::Decl(d) => {
                let from = prefix.len();
                prefix.extend_from_slice(&text.as_bytes()[from..d.end]);
                for r in pending.drain(..) {
                    for b in &mut prefix[r] {
                        if *b != b'\n' {
                            *b = b' ';
                        }
                    }
                }
                let one = prefixes_before(text, std::slice::from_ref(item), d.end);
                declared.0.extend(one.0);
                if one.1.is_some() {
                    declared.1 = one.1;
                }
                continue;
            }
            Item::Rule { at, .. } | Item::Data { at, .. } => at.clone(),
        };
        pending.push(at.clone());
        let id = match item {
            Item::Rule { name: Some(n), .. } => {
                rules += 1;
                expand(text, n, &declared).unwrap_or_else(|| text[n.clone()].to_owned())
            }
            Item::Rule { .. } => {
                rules += 1;
                format!("{file_id}#{rules}")
            }
            _ => {
                data += 1;
                format!("{file_id}#data-{data}")
            }
        };
        // The prologue, then the item: offsets below `prologue` are the file's, above it
        // `offset + p - prologue`. (With the declarations at the top, as usual, the prologue is short.)
        let mut own_text = prefix.clone();
        own_text.push(b'\n');
        let prologue = own_text.len();
        own_text.extend_from_slice(&text.as_bytes()[at.clone()]);
        out.push(RuleText {
            id,
            origin: Origin::File {
                path: path.to_owned(),
                offset: at.start,
                prologue,
            },
            language: Language::Srl,
            // Blanking replaces whole UTF-8 sequences byte by byte with spaces: still UTF-8.
            text: String::from_utf8(own_text).unwrap_or_else(|_| text[at.clone()].to_owned()),
        });
    }
    // A file with no rule and no data block (empty, or declarations only) is an empty rule set.
    out
}

/// The well-formedness problems of a rule's body and head (the conditions of the specification, in its order).
fn well_formed(text: &str, head: &Range<usize>, body: &[Element]) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut bound: HashSet<&str> = HashSet::new();
    let mut in_patterns: HashSet<&str> = HashSet::new();
    let mut assigned: HashMap<&str, Range<usize>> = HashMap::new();
    let unbound = |v: &str, at: &Range<usize>, what: &str| {
        problem(
            codes::UNBOUND_EXPR_VAR,
            at.clone(),
            format!(
                "?{v} in {what} has no value there: no triple pattern or SET before it binds it ({WELL_FORMED})"
            ),
            "bind the variable with a triple pattern or SET before this element, or move the element after one",
        )
    };
    for e in body {
        match e {
            Element::Triples(_, vars) => {
                for (v, _) in vars {
                    bound.insert(v);
                    in_patterns.insert(v);
                }
            }
            Element::Filter(_, vars) => {
                for (v, at) in vars {
                    if !bound.contains(v.as_str()) {
                        problems.push(unbound(v, at, "a FILTER"));
                    }
                }
            }
            Element::Not(_, inner) => {
                // Inside the negation too, element by element: a FILTER sees what is bound before it, outside
                // the NOT or by the negation's own patterns.
                let mut seen = bound.clone();
                for e in inner {
                    match e {
                        Element::Triples(_, vars) => {
                            seen.extend(vars.iter().map(|(v, _)| v.as_str()))
                        }
                        Element::Filter(_, vars) => {
                            for (v, at) in vars {
                                if !seen.contains(v.as_str()) {
                                    problems.push(unbound(v, at, "a FILTER inside NOT"));
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
            Element::Set((v, at), _, vars) => {
                for (u, uat) in vars {
                    if !bound.contains(u.as_str()) {
                        problems.push(unbound(u, uat, "a SET expression"));
                    }
                }
                if assigned.contains_key(v.as_str()) {
                    problems.push(problem(
                        codes::REASSIGNED,
                        at.clone(),
                        format!("?{v} is assigned by a second SET: each assignment variable is used in only one assignment ({WELL_FORMED})"),
                        "assign a new variable, e.g. SET(?v2 := …)",
                    ));
                } else if in_patterns.contains(v.as_str()) {
                    problems.push(problem(
                        codes::ASSIGNED_AFTER_USE,
                        at.clone(),
                        format!("?{v} is assigned by SET after a triple pattern already uses it: an assignment introduces a new variable ({WELL_FORMED})"),
                        "assign a new variable and compare it in a FILTER, e.g. SET(?v2 := …) FILTER(?v2 = ?v)",
                    ));
                }
                assigned.insert(v, at.clone());
                bound.insert(v);
            }
        }
    }
    let toks = tokens(&text[head.clone()]).unwrap_or_default();
    for t in toks.iter().filter(|t| t.kind == Kind::Var) {
        let at = head.start + t.at.start..head.start + t.at.end;
        let v = &text[at.start + 1..at.end];
        if !in_patterns.contains(v) && !assigned.contains_key(v) {
            problems.push(problem(
                codes::UNBOUND_HEAD_VAR,
                at,
                format!("?{v} in the head is not bound by the body: every head variable must occur in a triple pattern or SET of the body ({WELL_FORMED})"),
                "bind it in the body (a triple pattern or SET), or use a constant in the head",
            ));
        }
    }
    problems
}

/// The SPARQL rule an SRL rule (or data block) stands for; its problems when it is not well-formed.
fn to_sparql(text: &str) -> Result<String, Vec<Problem>> {
    let items = parse(text).map_err(|p| vec![p])?;
    let mut sparql = String::new();
    let mut item = None;
    for it in &items {
        match it {
            Item::Decl(at) => {
                let d = &text[at.clone()];
                if keyword_rest(d, "IMPORTS").is_some() {
                    return Err(vec![problem(
                        codes::UNSUPPORTED,
                        at.clone(),
                        "IMPORTS is not supported: rules are read from --rules files and folders"
                            .to_owned(),
                        "give the imported rule set to --rules as well, and remove the IMPORTS line",
                    )]);
                }
                if keyword_rest(d, "VERSION").is_some() {
                    continue;
                }
                sparql.push_str(d);
                sparql.push('\n');
            }
            other => item = Some(other),
        }
    }
    let Some(item) = item else {
        return Err(vec![syntax(
            0..0,
            "the text holds no rule and no DATA block",
        )]);
    };
    match item {
        Item::Data { inside, .. } => {
            sparql.push_str("CONSTRUCT {");
            sparql.push_str(&text[inside.clone()]);
            sparql.push_str("\n} WHERE { }\n");
        }
        Item::Rule {
            head, body, name, ..
        } => {
            // A rule's name must say which IRI it is.
            if let Some(n) = name {
                if expand(text, n, &prefixes_before(text, &items, n.start)).is_none() {
                    let name = &text[n.clone()];
                    return Err(vec![syntax(
                        n.clone(),
                        if name.starts_with('<') {
                            format!(
                                "the rule name {name} is not an absolute IRI and no BASE before it resolves it"
                            )
                        } else {
                            format!(
                                "the rule name {name} uses a prefix no PREFIX before it declares"
                            )
                        },
                    )]);
                }
            }
            let problems = well_formed(text, head, body);
            if !problems.is_empty() {
                return Err(problems);
            }
            sparql.push_str("CONSTRUCT {");
            sparql.push_str(&text[head.clone()]);
            sparql.push_str("\n} WHERE {");
            sparql.push_str(&lower_body(text, body));
            sparql.push_str("\n}\n");
        }
        Item::Decl(_) => unreachable!("declarations are skipped"),
    }
    Ok(sparql)
}

/// The SPARQL group of a body, element by element (see the module's table).
fn lower_body(text: &str, body: &[Element]) -> String {
    let mut acc = String::new();
    let mut taken: HashSet<String> = HashSet::new();
    for t in tokens(text).unwrap_or_default() {
        if t.kind == Kind::Var {
            taken.insert(text[t.at.start + 1..t.at.end].to_owned());
        }
    }
    // A name no variable of the rule has, from `base` (ASCII letters, digits and `_` only).
    let fresh = |base: String, taken: &mut HashSet<String>| {
        let mut f: String = base
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        while taken.contains(&f) {
            f.insert(0, '_');
        }
        taken.insert(f.clone());
        f
    };
    // A blank node label of the body is a variable of the whole body (SPARQL would not let a NOT EXISTS group
    // share a label with the rest).
    let mut blanks: HashMap<String, String> = HashMap::new();
    for (i, e) in body.iter().enumerate() {
        match e {
            Element::Triples(at, _) => {
                // The block's own final `.` (optional in SRL; a token, not the escaped dot of a name) is
                // dropped: one is added.
                let block = &text[at.clone()];
                let last = tokens(block).ok().and_then(|t| t.last().cloned());
                let end = match last {
                    Some(t) if t.kind == Kind::Punct && &block[t.at.clone()] == "." => {
                        at.start + t.at.start
                    }
                    _ => at.end,
                };
                let block = rewrite(text, at.start..end, |t, spelled| {
                    (t.kind == Kind::Blank).then(|| {
                        let v = blanks.entry(spelled.to_owned()).or_insert_with(|| {
                            fresh(format!("bnode_{}", &spelled[2..]), &mut taken)
                        });
                        format!("?{v}")
                    })
                });
                acc.push('\n');
                acc.push_str(block.trim_end());
                acc.push_str(" .");
            }
            Element::Filter(at, _) => {
                acc.push_str("\nFILTER ");
                acc.push_str(&text[at.clone()]);
            }
            Element::Set((v, _), expr, _) => {
                acc.push_str(&format!("\nBIND({} AS ?{v})", &text[expr.clone()]));
            }
            Element::Not(inside, _) => {
                // SRL tests a negation against the solutions so far: a variable (or blank node) no element
                // before it binds is the negation's own (∃), even when a later element binds one of that name.
                // Renamed apart, the negation means the same as SPARQL's FILTER NOT EXISTS over the whole group.
                let before = bound_by(&body[..i]);
                let mut own: HashMap<String, String> = HashMap::new();
                let inner = rewrite(text, inside.clone(), |t, spelled| {
                    let key = match t.kind {
                        Kind::Var => &spelled[1..],
                        Kind::Blank => spelled,
                        _ => return None,
                    };
                    if before.contains(key) {
                        return (t.kind == Kind::Blank).then(|| format!("?{}", blanks[key]));
                    }
                    let v = own.entry(key.to_owned()).or_insert_with(|| {
                        fresh(
                            format!("not{}_{}", i + 1, key.trim_start_matches("_:")),
                            &mut taken,
                        )
                    });
                    Some(format!("?{v}"))
                });
                acc.push_str(&format!("\nFILTER NOT EXISTS {{{inner}\n}}"));
            }
        }
    }
    acc
}

/// `text[range]` with each token `f` gives a replacement for replaced (`f` sees the token, offsets relative to
/// `range`, and its spelling).
fn rewrite(
    text: &str,
    range: Range<usize>,
    mut f: impl FnMut(&Tok, &str) -> Option<String>,
) -> String {
    let part = &text[range];
    let mut out = String::with_capacity(part.len());
    let mut last = 0;
    for t in tokens(part).unwrap_or_default() {
        if let Some(with) = f(&t, &part[t.at.clone()]) {
            out.push_str(&part[last..t.at.start]);
            out.push_str(&with);
            last = t.at.end;
        }
    }
    out.push_str(&part[last..]);
    out
}

/// The variables triple patterns and SET elements of `elements` bind.
fn bound_by(elements: &[Element]) -> HashSet<&str> {
    let mut out = HashSet::new();
    for e in elements {
        match e {
            Element::Triples(_, vars) => out.extend(vars.iter().map(|(v, _)| v.as_str())),
            Element::Set((v, _), ..) => {
                out.insert(v.as_str());
            }
            _ => {}
        }
    }
    out
}

fn to_error(id: &str, p: Problem) -> RuleError {
    RuleError::Srl {
        rule: id.to_owned(),
        code: p.code,
        message: p.message,
        help: p.help,
        at: p.at,
    }
}

/// Compiles one SRL rule text (see [`split`]) through the SPARQL surface. Problems of the SPARQL form (which
/// the checks here should leave none of) are reported on the rule as a whole.
pub fn compile(
    id: &str,
    origin: Origin,
    text: &str,
    dict: &mut Dictionary,
) -> Result<Rule, Vec<RuleError>> {
    let sparql = to_sparql(text)
        .map_err(|ps| ps.into_iter().map(|p| to_error(id, p)).collect::<Vec<_>>())?;
    match super::sparql::compile(id, origin, &sparql, dict) {
        Ok(mut rule) => {
            rule.language = Language::Srl;
            rule.text = text.to_owned();
            Ok(rule)
        }
        Err(errors) => Err(errors
            .into_iter()
            .map(|e| match e {
                RuleError::Syntax { rule, message } => RuleError::Srl {
                    rule,
                    code: codes::SYNTAX,
                    message: format!("its SPARQL form is not valid: {message}"),
                    help:
                        "check the expressions' functions and the terms' syntax (see docs/srl.md)"
                            .to_owned(),
                    at: None,
                },
                other => other,
            })
            .collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sparql(text: &str) -> String {
        to_sparql(text).unwrap_or_else(|p| panic!("{p:?}"))
    }

    fn codes_of(text: &str) -> Vec<&'static str> {
        to_sparql(text)
            .err()
            .unwrap_or_default()
            .iter()
            .map(|p| p.code)
            .collect()
    }

    #[test]
    fn rule_if_then_and_data_lower_to_construct_queries() {
        let s = sparql("PREFIX : <http://e/>\nRULE { ?x :q ?y } WHERE { ?x :p ?y FILTER(?y > 1) }");
        assert!(
            s.contains("CONSTRUCT { ?x :q ?y \n} WHERE {\n?x :p ?y .\nFILTER (?y > 1)"),
            "{s}"
        );
        let s =
            sparql("PREFIX : <http://e/>\nIF { ?x :p ?y . SET(?z := ?y + 1) } THEN { ?x :q ?z }");
        assert!(s.contains("BIND(?y + 1 AS ?z)"), "{s}");
        let s = sparql("PREFIX : <http://e/>\nDATA { :x :p 1 ; :q 2 . }");
        assert!(
            s.contains("CONSTRUCT { :x :p 1 ; :q 2 . \n} WHERE { }"),
            "{s}"
        );
    }

    #[test]
    fn a_negation_over_a_later_variable_keeps_that_variable_its_own() {
        // ?z is bound only after the NOT: SRL tests NOT { ?z :q ?x } with ?z free, so it is renamed apart.
        let s = sparql(
            "PREFIX : <http://e/>\nRULE { ?x :r ?z } WHERE { ?x :p ?y NOT { ?z :q ?x } ?z :s ?x }",
        );
        assert!(
            s.contains("FILTER NOT EXISTS { ?not2_z :q ?x \n}\n?z :s ?x ."),
            "{s}"
        );
        // Shared variables bound before: kept.
        let s =
            sparql("PREFIX : <http://e/>\nRULE { ?x :r ?y } WHERE { ?x :p ?y NOT { ?x :q ?y } }");
        assert!(
            s.contains("?x :p ?y .\nFILTER NOT EXISTS { ?x :q ?y \n}"),
            "{s}"
        );
        // A fresh name never takes a name the rule uses.
        let s = sparql(
            "PREFIX : <http://e/>\nRULE { ?x :r ?not2_z } WHERE { ?x :p ?not2_z NOT { ?z :q ?x } }",
        );
        assert!(s.contains("{ ?_not2_z :q ?x"), "{s}");
    }

    #[test]
    fn each_well_formedness_condition_has_its_code() {
        let p = "PREFIX : <http://e/>\n";
        assert_eq!(
            codes_of(&format!("{p}RULE {{ ?x :q ?w }} WHERE {{ ?x :p ?y }}")),
            [codes::UNBOUND_HEAD_VAR]
        );
        assert_eq!(
            codes_of(&format!(
                "{p}RULE {{ ?x :q ?y }} WHERE {{ FILTER(?y > 1) ?x :p ?y }}"
            )),
            [codes::UNBOUND_EXPR_VAR]
        );
        assert_eq!(
            codes_of(&format!(
                "{p}RULE {{ ?x :q ?z }} WHERE {{ ?x :p ?y SET(?z := 1) SET(?z := 2) }}"
            )),
            [codes::REASSIGNED]
        );
        assert_eq!(
            codes_of(&format!(
                "{p}RULE {{ ?x :q ?y }} WHERE {{ ?x :p ?y SET(?y := 1) }}"
            )),
            [codes::ASSIGNED_AFTER_USE]
        );
        assert_eq!(
            codes_of(&format!(
                "{p}RULE {{ ?x :q ?z }} WHERE {{ ?x :p ?y SET(?z := ?w) }}"
            )),
            [codes::UNBOUND_EXPR_VAR]
        );
        assert_eq!(
            codes_of(&format!("{p}RULE {{ ?x :q ?y }} WHERE DATA {{ ?x :p ?y }}")),
            [codes::UNSUPPORTED]
        );
        assert_eq!(
            codes_of(&format!(
                "{p}RULE {{ ?x :q ?y }} WHERE {{ ?x :p ?y NOT DATA {{ ?x :r ?y }} }}"
            )),
            [codes::UNSUPPORTED]
        );
        assert_eq!(
            codes_of(&format!("{p}RULE {{ ?x :q ?y }} WHERE {{ ?x :p ?y ")),
            [codes::SYNTAX]
        );
    }

    #[test]
    fn a_split_rule_keeps_the_files_offsets_and_takes_its_name_or_position() {
        let text = "PREFIX : <http://e/>\nDATA { :a :p :b }\nRULE :named { ?x :q ?y } WHERE { ?x :p ?y }\nIF { ?x :q ?y } THEN { ?y :r ?x }\n";
        let texts = split(Path::new("f.srl"), text);
        let ids: Vec<&str> = texts.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["f.srl#data-1", "http://e/named", "f.srl#2"]);
        let last = &texts[2];
        assert!(last.text.starts_with("PREFIX : <http://e/>\n"));
        assert!(
            !last.text.contains("DATA") && !last.text.contains(":named"),
            "{}",
            last.text
        );
        // The rule's own text, and where it maps to in the file.
        let Origin::File {
            offset, prologue, ..
        } = last.origin
        else {
            panic!("a file")
        };
        assert_eq!(&last.text[prologue..], "IF { ?x :q ?y } THEN { ?y :r ?x }");
        assert_eq!(offset, text.find("IF").unwrap());
        // A later declaration is kept, the items before it blanked.
        let text = "PREFIX : <http://e/>\nDATA { :a :p :b }\nPREFIX ex: <http://x/>\nIF { ?x ex:q ?y } THEN { ?y :r ?x }";
        let t = &split(Path::new("f.srl"), text)[1];
        assert!(
            t.text.contains("PREFIX ex: <http://x/>") && !t.text.contains("DATA"),
            "{}",
            t.text
        );
    }

    #[test]
    fn a_triple_block_ending_with_a_dot_before_set_or_filter_stays_valid_sparql() {
        let s = sparql(
            "PREFIX : <http://e/>\nRULE { ?x :q ?n } WHERE { ?x :p ?v ; :q ?n . SET(?l := 1) FILTER(?n > 1) }",
        );
        assert!(s.contains("?x :p ?v ; :q ?n .\nBIND(1 AS ?l)"), "{s}");
        assert!(!s.contains(". ."), "{s}");
    }

    #[test]
    fn a_relative_rule_name_resolves_against_the_base_before_it() {
        let text = "BASE <http://e/base/>\nPREFIX : <http://e/>\nRULE <named> { ?x :q ?y } WHERE { ?x :p ?y }\n";
        let texts = split(Path::new("f.srl"), text);
        assert_eq!(texts[0].id, "http://e/base/named");
    }

    proptest::proptest! {
        #[test]
        fn any_text_is_split_and_translated_without_a_panic(text in "\\PC{0,80}") {
            let _ = to_sparql(&text);
            let _ = split(Path::new("f.srl"), &text);
        }

        #[test]
        fn any_soup_of_srl_tokens_is_split_and_translated_without_a_panic(
            parts in proptest::collection::vec(proptest::sample::select(vec![
                "RULE", "IF", "THEN", "WHERE", "DATA", "NOT", "SET", "FILTER", "PREFIX", "BASE", "VERSION",
                "IMPORTS", "{", "}", "(", ")", "[", "]", "<<", ">>", "<<(", ")>>", "{|", "|}", "~", ".", ";",
                ",", ":=", "?x", "?y", ":p", "ex:", "<http://e/>", "\"s\"", "'''t'''", "1", "1.5", "-2",
                "@en", "^^", "^", "/", "a", "&&", "||", "!", "<", ">=", "é", "\\", "%", "#c\n", "_:b",
            ]), 0..40)
        ) {
            let text = parts.join(" ");
            let _ = to_sparql(&text);
            let _ = split(Path::new("f.srl"), &text);
            let glued = parts.concat();
            let _ = to_sparql(&glued);
            let _ = split(Path::new("f.srl"), &glued);
        }
    }

    #[test]
    fn blank_nodes_of_a_body_are_variables_shared_with_a_not_and_local_to_it_otherwise() {
        let s =
            sparql("PREFIX : <http://e/>\nRULE { ?x :r ?x } WHERE { ?x :p _:b NOT { _:b :q ?x } }");
        assert!(
            s.contains("?x :p ?bnode_b .\nFILTER NOT EXISTS { ?bnode_b :q ?x"),
            "{s}"
        );
        let s =
            sparql("PREFIX : <http://e/>\nRULE { ?x :r ?x } WHERE { ?x :p ?y NOT { _:c :q ?x } }");
        assert!(s.contains("FILTER NOT EXISTS { ?not2_c :q ?x"), "{s}");
    }

    #[test]
    fn sparql_only_syntax_mismatched_brackets_and_anonymous_data_are_refused() {
        let p = "PREFIX : <http://e/>\n";
        for body in [
            "?x :p ?y BIND(1 AS ?z)",
            "?x :p* ?y",
            "?x :p|:q ?y",
            "?x :p+ ?y",
            "OPTIONAL { ?x :p ?y }",
        ] {
            let text = format!("{p}RULE {{ ?x :r ?y }} WHERE {{ {body} }}");
            assert_eq!(codes_of(&text), [codes::SYNTAX], "{body}");
        }
        assert_eq!(
            codes_of(&format!("{p}RULE {{ ?x :r ?y ) WHERE {{ ?x :p ?y }}")),
            [codes::SYNTAX]
        );
        assert_eq!(
            codes_of(&format!("{p}DATA {{ [] :p 1 }}")),
            [codes::UNSUPPORTED]
        );
        assert_eq!(
            codes_of(&format!("{p}DATA {{ :x :p (1 2) }}")),
            [codes::UNSUPPORTED]
        );
        // A signed number is not a path.
        assert!(
            to_sparql(&format!(
                "{p}RULE {{ ?x :r ?y }} WHERE {{ ?x :p +1 . ?x :q ?y }}"
            ))
            .is_ok()
        );
    }

    #[test]
    fn a_filter_inside_not_sees_only_what_is_bound_before_it() {
        let p = "PREFIX : <http://e/>\n";
        assert_eq!(
            codes_of(&format!(
                "{p}RULE {{ ?x :r ?x }} WHERE {{ ?x :p ?y NOT {{ FILTER(?z > 1) ?x :q ?z }} }}"
            )),
            [codes::UNBOUND_EXPR_VAR]
        );
        assert!(
            to_sparql(&format!(
                "{p}RULE {{ ?x :r ?x }} WHERE {{ ?x :p ?y NOT {{ ?x :q ?z FILTER(?z > 1) }} }}"
            ))
            .is_ok()
        );
    }

    #[test]
    fn a_comparison_written_without_spaces_is_not_an_iri() {
        let p = "PREFIX : <http://e/>\n";
        assert_eq!(
            codes_of(&format!(
                "{p}RULE {{ ?x :r ?x }} WHERE {{ FILTER(1<?z&&?z>0) ?x :p ?z }}"
            )),
            [codes::UNBOUND_EXPR_VAR; 2]
        );
    }

    #[test]
    fn an_escaped_final_dot_of_a_name_stays() {
        let s = sparql("PREFIX ex: <http://e/>\nRULE { ?x ex:r ?x } WHERE { ?x ex:p ex:a\\. }");
        assert!(s.contains("?x ex:p ex:a\\. ."), "{s}");
    }

    #[test]
    fn a_rule_name_with_an_undeclared_prefix_is_an_error() {
        assert_eq!(
            codes_of("PREFIX : <http://e/>\nRULE ex:r { ?x :q ?y } WHERE { ?x :p ?y }"),
            [codes::SYNTAX]
        );
        assert!(
            to_sparql("PREFIX ex: <http://e/>\nRULE ex:r { ?x ex:q ?y } WHERE { ?x ex:p ?y }")
                .is_ok()
        );
    }

    #[test]
    fn a_relative_rule_name_needs_a_base_before_it() {
        let rule = "RULE <r> { ?x <http://e/q> ?y } WHERE { ?x <http://e/p> ?y }";
        assert_eq!(codes_of(rule), [codes::SYNTAX]);
        let err = to_sparql(rule).unwrap_err();
        assert!(
            err[0].message.contains("not an absolute IRI"),
            "{}",
            err[0].message
        );
        let based = format!("BASE <http://e/>\n{rule}");
        assert!(to_sparql(&based).is_ok());
        let texts = split(Path::new("f.srl"), &based);
        assert_eq!(texts[0].id, "http://e/r");
    }

    #[test]
    fn an_empty_file_or_one_of_declarations_is_an_empty_rule_set() {
        assert!(split(Path::new("f.srl"), "").is_empty());
        assert!(split(Path::new("f.srl"), "# nothing\nPREFIX : <http://e/>\n").is_empty());
    }

    #[test]
    fn deep_or_odd_input_is_a_syntax_error_not_a_crash() {
        for text in [
            "RULE { ?x",
            "IF { ?x :p \"never ends } THEN { }",
            "RULE { } WHERE { { ?x :p ?y } }",
            "@@@",
            "RULE { ?x :p ?y } WHERE { ((((((((( }",
        ] {
            assert!(to_sparql(text).is_err(), "{text}");
        }
        for text in [
            "BASE<é>\nIF { ?x :p ?y } THEN { ?x :q ?y }",
            "PREFIX é:<http://e/> IF { ?x é:p ?y } THEN { ?x é:q ?y }",
            "IF { ?x :p \"\\é\" } THEN { ?x :q 1 }",
            "IF { ?x ex:a\\é ?y } THEN { }",
            "IF { ?x :p \"\\",
            "RULE { } WHERE { ?x ex:a%",
            "RULE { ?x :q ?y } WHERE { ?x :p ?y NOT { é:a :p ?x } }",
        ] {
            let _ = to_sparql(text);
            let _ = split(Path::new("f.srl"), text);
        }
        let deep = format!(
            "RULE {{ ?x <p> ?y }} WHERE {{ ?x <p> ?y FILTER({}1{}) }}",
            "(".repeat(100_000),
            ")".repeat(100_000)
        );
        assert!(to_sparql(&deep).is_ok());
    }
}
