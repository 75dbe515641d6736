//! This module defines the checks and rewrites a SPARQL text gets before spargebra parses it: a nesting limit
//! (spargebra's parser recurses once per bracket and slows down superlinearly), an operator depth limit on the
//! parsed tree (every walk over it recurses), and names with characters past U+FFFF, which SPARQL allows and
//! spargebra 0.4 rejects.

use std::ops::Range;

use spargebra::algebra::{
    AggregateExpression, Expression, GraphPattern, OrderExpression, PropertyPathExpression,
};
use spargebra::term::{GroundTerm, TermPattern, TriplePattern};

/// The most brackets (`( { [ <<`) a SPARQL text may nest, as serde_json's default recursion limit.
pub const MAX_NESTING: usize = 128;

/// The most operators a parsed query may nest (`1 + 1 + …` and `?a || ?b || …` nest one per operator, a path
/// `a|b|…` one per alternative; a sequence path is a chain of triple patterns once parsed, which does not nest).
pub const MAX_DEPTH: usize = 1024;

/// A token kind of the light scanner.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Kind {
    /// `<…>`.
    Iri,
    /// A string literal.
    Str,
    /// A run of name characters: a keyword, a prefixed name, `?var`, `_:label`, a number.
    Name,
    /// An opening bracket: `(`, `{`, `[`, `<<`.
    Open,
    /// A closing bracket: `)`, `}`, `]`, `>>`.
    Close,
    /// Anything else.
    Other,
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b >= 0x80 || matches!(b, b'_' | b'-' | b':' | b'.' | b'%' | b'\\')
}

/// The tokens of a SPARQL text that matter to these checks (comments and white space skipped).
fn tokens(text: &str) -> impl Iterator<Item = (Range<usize>, Kind)> + '_ {
    let bytes = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        loop {
            let c = *bytes.get(i)?;
            let start = i;
            match c {
                b'#' => {
                    i = memchr::memchr(b'\n', &bytes[i..]).map_or(bytes.len(), |n| i + n);
                }
                c if c.is_ascii_whitespace() => i += 1,
                b'<' if bytes.get(i + 1) == Some(&b'<') => {
                    i += 2;
                    return Some((start..i, Kind::Open));
                }
                b'>' if bytes.get(i + 1) == Some(&b'>') => {
                    i += 2;
                    return Some((start..i, Kind::Close));
                }
                b'<' => {
                    // An IRI runs to the next `>` with no white space in between; otherwise `<` compares.
                    let end = bytes[i + 1..]
                        .iter()
                        .position(|&b| b == b'>' || b.is_ascii_whitespace())
                        .map(|n| i + 1 + n);
                    match end {
                        Some(e) if bytes[e] == b'>' => {
                            i = e + 1;
                            return Some((start..i, Kind::Iri));
                        }
                        _ => {
                            i += 1;
                            return Some((start..i, Kind::Other));
                        }
                    }
                }
                b'"' | b'\'' => {
                    let long = bytes.get(i + 1) == Some(&c) && bytes.get(i + 2) == Some(&c);
                    i += if long { 3 } else { 1 };
                    while i < bytes.len() {
                        if bytes[i] == b'\\' {
                            i += 2;
                        } else if long {
                            if bytes[i..].starts_with(&[c, c, c]) {
                                i += 3;
                                break;
                            }
                            i += 1;
                        } else {
                            i += 1;
                            if bytes[i - 1] == c || bytes[i - 1] == b'\n' {
                                break;
                            }
                        }
                    }
                    i = i.min(bytes.len());
                    return Some((start..i, Kind::Str));
                }
                b'(' | b'{' | b'[' => {
                    i += 1;
                    return Some((start..i, Kind::Open));
                }
                b')' | b'}' | b']' => {
                    i += 1;
                    return Some((start..i, Kind::Close));
                }
                b'?' | b'$' => {
                    i += 1;
                    while i < bytes.len() && is_name_byte(bytes[i]) && bytes[i] != b':' {
                        i += 1;
                    }
                    return Some((start..trim_dots(bytes, start, i), Kind::Name));
                }
                c if is_name_byte(c) => {
                    while i < bytes.len() && is_name_byte(bytes[i]) {
                        i += 1;
                    }
                    let end = trim_dots(bytes, start, i);
                    i = end;
                    return Some((start..end, Kind::Name));
                }
                _ => {
                    i += text[i..].chars().next().map_or(1, char::len_utf8);
                    return Some((start..i, Kind::Other));
                }
            }
        }
    })
}

/// The prefixes a SPARQL text declares (`PREFIX name: <iri>`, the name without its colon), in order; a later
/// declaration of a name replaces the earlier one. Relative IRIs are left as written.
pub fn prefixes(text: &str) -> Vec<(String, String)> {
    let all: Vec<(Range<usize>, Kind)> = tokens(text).collect();
    let mut out: Vec<(String, String)> = Vec::new();
    for w in all.windows(3) {
        let [(k, Kind::Name), (name, Kind::Name), (iri, Kind::Iri)] = w else {
            continue;
        };
        let (keyword, name, iri) = (&text[k.clone()], &text[name.clone()], &text[iri.clone()]);
        let Some(name) = name.strip_suffix(':') else {
            continue;
        };
        if !keyword.eq_ignore_ascii_case("prefix") || name.contains(':') {
            continue;
        }
        let iri = iri[1..iri.len() - 1].to_owned();
        out.retain(|(n, _)| n != name);
        out.push((name.to_owned(), iri));
    }
    out
}

/// A name does not end with `.` (that dot ends a triple).
fn trim_dots(bytes: &[u8], start: usize, mut end: usize) -> usize {
    while end > start + 1 && bytes[end - 1] == b'.' {
        end -= 1;
    }
    end
}

/// The most `/` a SPARQL text may have in one triple pattern (the steps of a sequence path, and divisions):
/// spargebra's parser recurses once per step of a sequence path, and overflowed 256 MiB of stack at 200,000.
pub const MAX_STEPS: usize = 10_000;

/// The most distinct variables a SPARQL text may name: spargebra's parser collects a query's variables in a
/// list it searches for each one, and took 9.5 s over 60,000.
pub const MAX_VARIABLES: usize = 10_000;

/// What is too deep or too large for the parser, found before it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deep {
    /// Brackets nested deeper than [`MAX_NESTING`].
    Brackets,
    /// More than [`MAX_STEPS`] `/` in one triple pattern.
    Steps,
    /// More than [`MAX_VARIABLES`] distinct variables.
    Variables,
}

/// The byte offset of the first bracket nested deeper than [`MAX_NESTING`], of the first `/` past
/// [`MAX_STEPS`] in one triple pattern (counted from the last `.`, `;`, `,`, `{` or `}`), or of the first
/// variable past [`MAX_VARIABLES`], if any.
pub fn too_deep(text: &str) -> Option<(usize, Deep)> {
    let mut depth = 0usize;
    let mut steps = 0usize;
    let mut variables: hashbrown::HashSet<&str> = hashbrown::HashSet::new();
    for (range, kind) in tokens(text) {
        let token = &text[range.clone()];
        if kind == Kind::Name
            && token.len() > 1
            && token.starts_with(['?', '$'])
            && variables.insert(&token[1..])
            && variables.len() > MAX_VARIABLES
        {
            return Some((range.start, Deep::Variables));
        }
        match kind {
            Kind::Open => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Some((range.start, Deep::Brackets));
                }
            }
            Kind::Close => depth = depth.saturating_sub(1),
            _ => {}
        }
        match token {
            "/" => {
                steps += 1;
                if steps > MAX_STEPS {
                    return Some((range.start, Deep::Steps));
                }
            }
            "." | ";" | "," | "{" | "}" => steps = 0,
            _ => {}
        }
    }
    None
}

/// What a SPARQL syntax error means when spargebra's message does not say (an undeclared prefix reads as
/// "expected ENCODE_FOR_URI", an empty text as "expected \[_\]"): what is wrong, the fix, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hint {
    /// What is wrong.
    pub what: String,
    /// How to fix it.
    pub fix: String,
    /// The construct, when the hint knows better than the parser's position.
    pub at: Option<Range<usize>>,
    /// What the label on it says.
    pub label: &'static str,
}

/// The IRIs of the prefixes everyone uses, for the fix of an undeclared one.
const WELL_KNOWN: &[(&str, &str)] = &[
    ("xsd", "http://www.w3.org/2001/XMLSchema#"),
    ("rdf", "http://www.w3.org/1999/02/22-rdf-syntax-ns#"),
    ("rdfs", "http://www.w3.org/2000/01/rdf-schema#"),
    ("owl", "http://www.w3.org/2002/07/owl#"),
    ("f", "https://ns.flur.ee/db#"),
];

const UPDATES: &[&str] = &[
    "INSERT", "DELETE", "LOAD", "CLEAR", "DROP", "CREATE", "ADD", "MOVE", "COPY", "WITH",
];

const FORMS: &[&str] = &["CONSTRUCT", "SELECT", "ASK", "DESCRIBE"];

/// A hint for a syntax error of `text` (a rule when `rule`, else a query) at byte `at` with spargebra's
/// `message`, when the text shows what the message does not.
pub fn syntax_hint(text: &str, at: Option<usize>, message: &str, rule: bool) -> Option<Hint> {
    let what_it_is = if rule { "rule" } else { "query" };
    let shape = if rule {
        "write it as CONSTRUCT { heads } WHERE { body }"
    } else {
        "write a SELECT, ASK, CONSTRUCT or DESCRIBE query"
    };
    let toks: Vec<(Range<usize>, Kind)> = tokens(text).collect();
    if toks.is_empty() {
        return Some(Hint {
            what: format!("the {what_it_is} is empty (white space and comments only)"),
            fix: shape.to_owned(),
            at: None,
            label: "here",
        });
    }
    if let Some(hint) = unbalanced(text, &toks) {
        return Some(hint);
    }
    // A comparison or a logical operator with a closing bracket right after it (`FILTER (?y > )`): the parser
    // gives up later, often at the end of the text.
    let operator = toks.windows(2).find_map(|w| match w {
        // (`|}` ends an annotation.)
        [(op, Kind::Other), (close, Kind::Close)]
            if matches!(&text[op.clone()], "=" | "<" | ">" | "&" | "|")
                && !(&text[op.clone()] == "|" && &text[close.clone()] == "}") =>
        {
            // The whole operator: `>=`, `!=`, `&&`, `||`.
            let start = toks
                .iter()
                .rev()
                .skip_while(|(r, _)| r.start > op.start)
                .take_while(|(r, k)| *k == Kind::Other && r.len() == 1)
                .take_while(|(r, _)| matches!(&text[r.clone()], "=" | "<" | ">" | "&" | "|" | "!"))
                .last()
                .map_or(op.start, |(r, _)| r.start);
            Some(start..op.end)
        }
        _ => None,
    });
    if let Some(op) = operator {
        return Some(Hint {
            what: format!("`{}` has nothing on its right", &text[op.clone()]),
            fix: "give the operator its second operand (`FILTER (?y > 5)`), or remove it"
                .to_owned(),
            at: Some(op),
            label: "an operator without its right operand",
        });
    }
    // Keywords outside every bracket, prefix declarations skipped.
    let mut depth = 0usize;
    let mut top: Vec<(Range<usize>, String)> = Vec::new();
    for (range, kind) in &toks {
        match kind {
            Kind::Open => depth += 1,
            Kind::Close => depth = depth.saturating_sub(1),
            Kind::Name if depth == 0 => {
                top.push((range.clone(), text[range.clone()].to_ascii_uppercase()))
            }
            _ => {}
        }
    }
    if let Some((range, word)) = top
        .iter()
        .find(|(_, w)| UPDATES.contains(&w.as_str()))
        .filter(|_| !top.iter().any(|(_, w)| FORMS.contains(&w.as_str())))
    {
        return Some(Hint {
            what: format!("`{word}` starts a SPARQL update, not a {what_it_is}"),
            fix: if rule {
                "a rule is CONSTRUCT { heads } WHERE { body }: its template is what the update would insert".to_owned()
            } else {
                "reasonctl query runs SELECT, ASK, CONSTRUCT and DESCRIBE; to derive facts, write a rule".to_owned()
            },
            at: Some(range.clone()),
            label: "an update",
        });
    }
    let forms: Vec<&Range<usize>> = top
        .iter()
        .filter(|(_, w)| FORMS.contains(&w.as_str()))
        .map(|(r, _)| r)
        .collect();
    if let [_, second, ..] = forms.as_slice() {
        return Some(Hint {
            what: format!(
                "a second {} starts here: one {what_it_is} is one query",
                text[(*second).clone()].to_ascii_uppercase()
            ),
            fix: if rule {
                "start each rule with a `#@rule NAME` line (the lines before the first are a prologue shared by all)"
                    .to_owned()
            } else {
                "run one query at a time".to_owned()
            },
            at: Some((*second).clone()),
            label: "a second query",
        });
    }
    if let Some(hint) = undeclared_prefix(text, &toks, at, rule) {
        return Some(hint);
    }
    if let Some(star) = select_star_grouped(text, &toks) {
        return Some(Hint {
            what: "SELECT * cannot be combined with GROUP BY: a grouped query projects only its group keys and aggregates".to_owned(),
            fix: "name them: SELECT ?x (COUNT(?y) AS ?n) WHERE { … } GROUP BY ?x".to_owned(),
            at: Some(star),
            label: "SELECT * in a grouped query",
        });
    }
    if message.contains("limit should be") || message.contains("offset should be") {
        // The number after LIMIT or OFFSET that does not fit.
        let number = toks.windows(2).find_map(|w| match w {
            [(k, Kind::Name), (n, Kind::Name)]
                if (text[k.clone()].eq_ignore_ascii_case("LIMIT")
                    || text[k.clone()].eq_ignore_ascii_case("OFFSET"))
                    && text[n.clone()].parse::<u64>().is_err() =>
            {
                Some(n.clone())
            }
            _ => None,
        });
        return Some(Hint {
            what: "the LIMIT or OFFSET is larger than reasonctl can count (18446744073709551615)"
                .to_owned(),
            fix: "write a smaller number, or leave the LIMIT out".to_owned(),
            at: number,
            label: "too large",
        });
    }
    None
}

/// The first bracket that does not pair: a closing one with nothing (or another kind) open before it, else the
/// innermost opening one never closed. The parser reports either where it gave up, often the end of the text.
fn unbalanced(text: &str, toks: &[(Range<usize>, Kind)]) -> Option<Hint> {
    let closer = |open: &str| match open {
        "(" => ")",
        "{" => "}",
        "[" => "]",
        _ => ">>",
    };
    let opener = |close: &str| match close {
        ")" => "(",
        "}" => "{",
        "]" => "[",
        _ => "<<",
    };
    let mut open: Vec<&Range<usize>> = Vec::new();
    for (range, kind) in toks {
        match kind {
            Kind::Open => open.push(range),
            Kind::Close => {
                let close = &text[range.clone()];
                let what = match open.pop() {
                    Some(o) if closer(&text[o.clone()]) == close => continue,
                    Some(o) => format!(
                        "this `{close}` does not close the `{}` open before it",
                        &text[o.clone()]
                    ),
                    None => {
                        format!("this `{close}` closes nothing: every bracket before it is closed")
                    }
                };
                return Some(Hint {
                    what,
                    fix: format!("remove it, or add the `{}` it closes", opener(close)),
                    at: Some(range.clone()),
                    label: "unmatched",
                });
            }
            _ => {}
        }
    }
    let o = open.pop()?;
    let bracket = &text[o.clone()];
    Some(Hint {
        what: format!("this `{bracket}` is never closed"),
        fix: format!("close it with `{}`", closer(bracket)),
        at: Some(o.clone()),
        label: "never closed",
    })
}

/// The first prefixed name (at or before byte `at`, where the parser stopped) whose prefix no `PREFIX` line
/// declares: the parser fails at it, or a little after it (`xsd:integer(?b)` fails at the `)`).
fn undeclared_prefix(
    text: &str,
    toks: &[(Range<usize>, Kind)],
    at: Option<usize>,
    rule: bool,
) -> Option<Hint> {
    let declared: Vec<&str> = toks
        .windows(2)
        .filter_map(|w| match w {
            [(k, Kind::Name), (p, Kind::Name)]
                if text[k.clone()].eq_ignore_ascii_case("PREFIX") =>
            {
                text[p.clone()].strip_suffix(':')
            }
            _ => None,
        })
        .collect();
    let (range, label) = toks.iter().find_map(|(r, k)| {
        let name = &text[r.clone()];
        let label = name.split_once(':')?.0;
        let undeclared = *k == Kind::Name
            && at.is_none_or(|at| r.start <= at)
            && !name.starts_with(['?', '$', '_'])
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && !declared.contains(&label);
        undeclared.then_some((r, label))
    })?;
    let name = &text[range.clone()];
    let iri = WELL_KNOWN
        .iter()
        .find(|(l, _)| *l == label)
        .map_or("http://…", |(_, iri)| iri);
    Some(Hint {
        what: format!("the prefix `{label}:` of {name} is not declared"),
        fix: if rule {
            format!(
                "add `PREFIX {label}: <{iri}>` to the rule, or to the file's prologue before its first #@rule"
            )
        } else {
            format!("add `PREFIX {label}: <{iri}>` before the query")
        },
        at: Some(range.start..range.start + label.len() + 1),
        label: "undeclared prefix",
    })
}

/// The `*` of a `SELECT *` whose query has a `GROUP BY` (at the same bracket depth, before that depth closes).
fn select_star_grouped(text: &str, toks: &[(Range<usize>, Kind)]) -> Option<Range<usize>> {
    let mut depth = 0usize;
    // Open SELECT * queries: (depth, the `*`).
    let mut stars: Vec<(usize, Range<usize>)> = Vec::new();
    for (i, (range, kind)) in toks.iter().enumerate() {
        match kind {
            Kind::Open => depth += 1,
            Kind::Close => {
                depth = depth.saturating_sub(1);
                stars.retain(|(d, _)| *d <= depth);
            }
            Kind::Name => {
                let word = &text[range.clone()];
                if word.eq_ignore_ascii_case("SELECT") {
                    let mut j = i + 1;
                    // SELECT DISTINCT * / SELECT REDUCED *
                    while toks.get(j).is_some_and(|(r, k)| {
                        *k == Kind::Name
                            && (text[r.clone()].eq_ignore_ascii_case("DISTINCT")
                                || text[r.clone()].eq_ignore_ascii_case("REDUCED"))
                    }) {
                        j += 1;
                    }
                    if let Some((r, Kind::Other)) = toks.get(j) {
                        if &text[r.clone()] == "*" {
                            stars.push((depth, r.clone()));
                        }
                    }
                } else if word.eq_ignore_ascii_case("GROUP")
                    && toks
                        .get(i + 1)
                        .is_some_and(|(r, _)| text[r.clone()].eq_ignore_ascii_case("BY"))
                {
                    if let Some((_, star)) = stars.iter().rev().find(|(d, _)| *d == depth) {
                        return Some(star.clone());
                    }
                }
            }
            _ => {}
        }
    }
    None
}

/// The subject of a triple term written in an expression (`BIND(<<( "a" :p :o )>> AS ?t)`) that is a literal or
/// another triple term, which the SPARQL 1.2 grammar forbids there (a pattern may nest triple terms).
/// spargebra reads the expression form as a call of TRIPLE(), where such arguments are legal and evaluate to
/// an error, so the two are told apart here, by the text: a `<<(` inside parentheses is an expression.
pub fn literal_triple_term_subject(text: &str) -> Option<usize> {
    let toks: Vec<(Range<usize>, Kind)> = tokens(text).collect();
    // Open brackets: whether each is a parenthesis (an expression around what follows).
    let mut open: Vec<bool> = Vec::new();
    for (i, (range, kind)) in toks.iter().enumerate() {
        match kind {
            Kind::Open => {
                let bracket = &text[range.clone()];
                let in_expression = open.iter().any(|paren| *paren);
                let tripleterm = bracket == "<<"
                    && toks
                        .get(i + 1)
                        .is_some_and(|(r, _)| &text[r.clone()] == "(");
                if tripleterm && in_expression {
                    if let Some((subject, kind)) = toks.get(i + 2) {
                        let s = &text[subject.clone()];
                        let literal = match kind {
                            Kind::Str => true,
                            Kind::Open => s == "<<",
                            Kind::Name => {
                                s.starts_with(|c: char| {
                                    c.is_ascii_digit() || matches!(c, '+' | '-' | '.')
                                }) || s.eq_ignore_ascii_case("true")
                                    || s.eq_ignore_ascii_case("false")
                            }
                            _ => false,
                        };
                        if literal {
                            return Some(subject.start);
                        }
                    }
                }
                // The `(` of `<<(` belongs to the triple term, not to an expression.
                let triple_paren = bracket == "("
                    && i > 0
                    && matches!(&toks[i - 1], (r, Kind::Open) if &text[r.clone()] == "<<");
                open.push(bracket == "(" && !triple_paren);
            }
            Kind::Close => {
                open.pop();
            }
            _ => {}
        }
    }
    None
}

/// Whether a character lies past U+FFFF (a four-byte UTF-8 sequence).
fn has_supplementary(s: &str) -> bool {
    s.bytes().any(|b| b >= 0xF0)
}

/// The text with every name that holds a character past U+FFFF rewritten into a form spargebra reads: a
/// prefixed name becomes the `<IRI>` it stands for, and such characters in a variable, blank-node label or
/// prefix label become `_uXXXXX_` (the same name each time, so the query means the same). `None` when nothing
/// needs rewriting (or a prefixed name's prefix is not declared: the parser then says so).
pub fn widen_names(text: &str) -> Option<String> {
    if !has_supplementary(text) {
        return None;
    }
    let toks: Vec<(Range<usize>, Kind)> = tokens(text).collect();
    // PREFIX label: <iri> declarations, in order (a later one wins, as in the grammar's scope).
    let mut prefixes: Vec<(&str, &str)> = Vec::new();
    for w in toks.windows(3) {
        if let [(k, Kind::Name), (p, Kind::Name), (iri, Kind::Iri)] = w {
            if text[k.clone()].eq_ignore_ascii_case("PREFIX") && text[p.clone()].ends_with(':') {
                let label = &text[p.start..p.end - 1];
                prefixes.push((label, &text[iri.start + 1..iri.end - 1]));
            }
        }
    }
    let mut out = String::with_capacity(text.len() + 64);
    let mut last = 0;
    let mut changed = false;
    for (range, kind) in &toks {
        let name = &text[range.clone()];
        if *kind != Kind::Name || !has_supplementary(name) {
            continue;
        }
        let rewritten = if name.starts_with(['?', '$']) || name.starts_with("_:") {
            mangle(name)
        } else if let Some((label, local)) = name.split_once(':') {
            match (local.is_empty(), has_supplementary(local)) {
                // `PREFIX lab𐀀:` or a prefixed name whose only odd characters are in the label.
                (true, _) | (false, false) => format!("{}:{local}", mangle(label)),
                (false, true) => {
                    let iri = prefixes.iter().rev().find(|(l, _)| *l == label)?.1;
                    format!("<{iri}{}>", unescape_local(local))
                }
            }
        } else {
            continue;
        };
        out.push_str(&text[last..range.start]);
        out.push_str(&rewritten);
        last = range.end;
        changed = true;
    }
    out.push_str(&text[last..]);
    changed.then_some(out)
}

/// Characters past U+FFFF as `_uXXXXX_`.
fn mangle(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 8);
    for c in name.chars() {
        if u32::from(c) > 0xFFFF {
            out.push_str(&format!("_u{:X}_", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// A local name with its `\x` escapes (PN_LOCAL_ESC) removed; `%XX` stays, as in the IRI.
fn unescape_local(local: &str) -> String {
    let mut out = String::with_capacity(local.len());
    let mut chars = local.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether a parsed pattern nests operators deeper than [`MAX_DEPTH`] (the walk stops at the limit, so it
/// recurses at most that deep itself).
pub fn pattern_too_deep(p: &GraphPattern) -> bool {
    Depth.pattern(p, 0)
}

/// Whether a template or pattern term nests triple terms deeper than [`MAX_DEPTH`].
pub fn term_too_deep(t: &TermPattern) -> bool {
    Depth.term(t, 0)
}

/// The bounded depth walk.
struct Depth;

impl Depth {
    fn pattern(&self, p: &GraphPattern, d: usize) -> bool {
        if d > MAX_DEPTH {
            return true;
        }
        let d = d + 1;
        match p {
            GraphPattern::Bgp { patterns } => patterns.iter().any(|t| self.triple(t, d)),
            GraphPattern::Path {
                subject,
                path,
                object,
            } => self.term(subject, d) || self.path(path, d) || self.term(object, d),
            GraphPattern::Join { left, right }
            | GraphPattern::Union { left, right }
            | GraphPattern::Minus { left, right } => {
                self.pattern(left, d) || self.pattern(right, d)
            }
            GraphPattern::LeftJoin {
                left,
                right,
                expression,
            } => {
                self.pattern(left, d)
                    || self.pattern(right, d)
                    || expression.as_ref().is_some_and(|e| self.expr(e, d))
            }
            GraphPattern::Filter { expr, inner } => self.expr(expr, d) || self.pattern(inner, d),
            GraphPattern::Graph { inner, .. }
            | GraphPattern::Project { inner, .. }
            | GraphPattern::Distinct { inner }
            | GraphPattern::Reduced { inner }
            | GraphPattern::Slice { inner, .. } => self.pattern(inner, d),
            GraphPattern::Extend {
                inner, expression, ..
            } => self.pattern(inner, d) || self.expr(expression, d),
            GraphPattern::OrderBy { inner, expression } => {
                self.pattern(inner, d)
                    || expression.iter().any(|o| match o {
                        OrderExpression::Asc(e) | OrderExpression::Desc(e) => self.expr(e, d),
                    })
            }
            GraphPattern::Group {
                inner, aggregates, ..
            } => {
                self.pattern(inner, d)
                    || aggregates.iter().any(|(_, a)| match a {
                        AggregateExpression::CountSolutions { .. } => false,
                        AggregateExpression::FunctionCall { expr, .. } => self.expr(expr, d),
                    })
            }
            GraphPattern::Service { inner, .. } => self.pattern(inner, d),
            GraphPattern::Values { bindings, .. } => bindings
                .iter()
                .flatten()
                .flatten()
                .any(|t| self.ground(t, d)),
        }
    }

    fn triple(&self, t: &TriplePattern, d: usize) -> bool {
        self.term(&t.subject, d) || self.term(&t.object, d)
    }

    fn term(&self, t: &TermPattern, d: usize) -> bool {
        if d > MAX_DEPTH {
            return true;
        }
        match t {
            TermPattern::Triple(t) => self.term(&t.subject, d + 1) || self.term(&t.object, d + 1),
            _ => false,
        }
    }

    fn ground(&self, t: &GroundTerm, d: usize) -> bool {
        if d > MAX_DEPTH {
            return true;
        }
        match t {
            GroundTerm::Triple(t) => self.ground(&t.object, d + 1),
            _ => false,
        }
    }

    fn path(&self, p: &PropertyPathExpression, d: usize) -> bool {
        if d > MAX_DEPTH {
            return true;
        }
        let d = d + 1;
        match p {
            PropertyPathExpression::NamedNode(_)
            | PropertyPathExpression::NegatedPropertySet(_) => false,
            PropertyPathExpression::Reverse(p)
            | PropertyPathExpression::ZeroOrMore(p)
            | PropertyPathExpression::OneOrMore(p)
            | PropertyPathExpression::ZeroOrOne(p) => self.path(p, d),
            PropertyPathExpression::Sequence(a, b) | PropertyPathExpression::Alternative(a, b) => {
                self.path(a, d) || self.path(b, d)
            }
        }
    }

    fn expr(&self, e: &Expression, d: usize) -> bool {
        if d > MAX_DEPTH {
            return true;
        }
        let d = d + 1;
        match e {
            Expression::NamedNode(_)
            | Expression::Literal(_)
            | Expression::Variable(_)
            | Expression::Bound(_) => false,
            Expression::Or(a, b)
            | Expression::And(a, b)
            | Expression::Equal(a, b)
            | Expression::SameTerm(a, b)
            | Expression::Greater(a, b)
            | Expression::GreaterOrEqual(a, b)
            | Expression::Less(a, b)
            | Expression::LessOrEqual(a, b)
            | Expression::Add(a, b)
            | Expression::Subtract(a, b)
            | Expression::Multiply(a, b)
            | Expression::Divide(a, b) => self.expr(a, d) || self.expr(b, d),
            Expression::In(a, list) => self.expr(a, d) || list.iter().any(|x| self.expr(x, d)),
            Expression::UnaryPlus(a) | Expression::UnaryMinus(a) | Expression::Not(a) => {
                self.expr(a, d)
            }
            Expression::Exists(p) => self.pattern(p, d),
            Expression::If(a, b, c) => self.expr(a, d) || self.expr(b, d) || self.expr(c, d),
            Expression::Coalesce(list) | Expression::FunctionCall(_, list) => {
                list.iter().any(|x| self.expr(x, d))
            }
        }
    }
}

/// Regroups every chain of `&&`, and of `||`, in a parsed pattern as a balanced tree of the same operands in the
/// same order: `a && b && c && d` parses as `((a && b) && c) && d`, one level per operator, and a rule's FILTERs
/// of one group are one such chain, so 1,100 FILTERs were "too deep" for [`pattern_too_deep`]. SPARQL's `&&`
/// and `||` (errors included) are associative, so the grouping changes no result. A chain is taken apart by a
/// loop, not by recursion; the walk into anything else stops below [`MAX_DEPTH`] (the depth check then refuses
/// what is left).
pub fn rebalance(p: &mut GraphPattern) {
    Rebalance.pattern(p, 0);
}

/// The rebalancing walk.
struct Rebalance;

impl Rebalance {
    fn pattern(&self, p: &mut GraphPattern, d: usize) {
        if d > MAX_DEPTH {
            return;
        }
        let d = d + 1;
        match p {
            GraphPattern::Bgp { .. } | GraphPattern::Path { .. } | GraphPattern::Values { .. } => {}
            GraphPattern::Join { left, right }
            | GraphPattern::Union { left, right }
            | GraphPattern::Minus { left, right } => {
                self.pattern(left, d);
                self.pattern(right, d);
            }
            GraphPattern::LeftJoin {
                left,
                right,
                expression,
            } => {
                self.pattern(left, d);
                self.pattern(right, d);
                if let Some(e) = expression {
                    self.expr(e, d);
                }
            }
            GraphPattern::Filter { expr, inner } => {
                self.expr(expr, d);
                self.pattern(inner, d);
            }
            GraphPattern::Graph { inner, .. }
            | GraphPattern::Project { inner, .. }
            | GraphPattern::Distinct { inner }
            | GraphPattern::Reduced { inner }
            | GraphPattern::Slice { inner, .. }
            | GraphPattern::Service { inner, .. } => self.pattern(inner, d),
            GraphPattern::Extend {
                inner, expression, ..
            } => {
                self.pattern(inner, d);
                self.expr(expression, d);
            }
            GraphPattern::OrderBy { inner, expression } => {
                self.pattern(inner, d);
                for o in expression {
                    match o {
                        OrderExpression::Asc(e) | OrderExpression::Desc(e) => self.expr(e, d),
                    }
                }
            }
            GraphPattern::Group {
                inner, aggregates, ..
            } => {
                self.pattern(inner, d);
                for (_, a) in aggregates {
                    if let AggregateExpression::FunctionCall { expr, .. } = a {
                        self.expr(expr, d);
                    }
                }
            }
        }
    }

    fn expr(&self, e: &mut Expression, d: usize) {
        if d > MAX_DEPTH {
            return;
        }
        let d = d + 1;
        match e {
            Expression::And(..) | Expression::Or(..) => {
                let and = matches!(e, Expression::And(..));
                // The chain's operands in order, by a loop over its operators.
                let mut operands = Vec::new();
                let mut todo = vec![std::mem::replace(e, Expression::Literal("".into()))];
                while let Some(x) = todo.pop() {
                    match x {
                        Expression::And(a, b) if and => todo.extend([*b, *a]),
                        Expression::Or(a, b) if !and => todo.extend([*b, *a]),
                        operand => operands.push(operand),
                    }
                }
                for o in &mut operands {
                    self.expr(o, d);
                }
                *e = balanced(operands, and);
            }
            Expression::NamedNode(_)
            | Expression::Literal(_)
            | Expression::Variable(_)
            | Expression::Bound(_) => {}
            Expression::Equal(a, b)
            | Expression::SameTerm(a, b)
            | Expression::Greater(a, b)
            | Expression::GreaterOrEqual(a, b)
            | Expression::Less(a, b)
            | Expression::LessOrEqual(a, b)
            | Expression::Add(a, b)
            | Expression::Subtract(a, b)
            | Expression::Multiply(a, b)
            | Expression::Divide(a, b) => {
                self.expr(a, d);
                self.expr(b, d);
            }
            Expression::In(a, list) => {
                self.expr(a, d);
                list.iter_mut().for_each(|x| self.expr(x, d));
            }
            Expression::UnaryPlus(a) | Expression::UnaryMinus(a) | Expression::Not(a) => {
                self.expr(a, d)
            }
            Expression::Exists(p) => self.pattern(p, d),
            Expression::If(a, b, c) => {
                self.expr(a, d);
                self.expr(b, d);
                self.expr(c, d);
            }
            Expression::Coalesce(list) | Expression::FunctionCall(_, list) => {
                list.iter_mut().for_each(|x| self.expr(x, d))
            }
        }
    }
}

/// `operands` (one at least) joined by `&&` (or `||`) as a balanced tree, in order.
fn balanced(mut operands: Vec<Expression>, and: bool) -> Expression {
    if operands.len() == 1 {
        return operands.pop().expect("one operand");
    }
    let right = operands.split_off(operands.len() / 2);
    let (a, b) = (
        Box::new(balanced(operands, and)),
        Box::new(balanced(right, and)),
    );
    if and {
        Expression::And(a, b)
    } else {
        Expression::Or(a, b)
    }
}

/// Drops a parsed value found too deep ([`pattern_too_deep`]) without recursing through it: it is leaked, and
/// the command fails right after.
pub fn forget_deep<T>(value: T) {
    std::mem::forget(value);
}

#[cfg(test)]
mod tests {
    #[test]
    fn declared_prefixes_are_read_in_order_and_comments_and_strings_are_not() {
        let text = "# PREFIX no: <http://no/>\nprefix ex: <http://e/> PREFIX : <http://d/>\n\
                    SELECT * WHERE { ?s ?p \"PREFIX str: <http://s/>\" } PREFIX ex: <http://e2/>";
        assert_eq!(
            prefixes(text),
            [
                (String::new(), "http://d/".to_owned()),
                ("ex".to_owned(), "http://e2/".to_owned())
            ]
        );
    }

    use super::*;

    #[test]
    fn brackets_in_strings_iris_and_comments_do_not_nest() {
        let deep = "(".repeat(MAX_NESTING + 1);
        let text = format!("# {deep}\nSELECT * WHERE {{ ?a <http://e/{deep}> \"{deep}\" }}");
        assert_eq!(too_deep(&text), None);
        let text = format!(
            "SELECT * WHERE {{ FILTER({deep}1{}) }}",
            ")".repeat(MAX_NESTING + 1)
        );
        let (at, deep) = too_deep(&text).unwrap();
        assert_eq!(deep, Deep::Brackets);
        assert_eq!(&text[at..at + 1], "(");
        assert_eq!(text[..at].matches('(').count() + 1, MAX_NESTING);
    }

    #[test]
    fn sequence_steps_count_per_triple_pattern_and_past_the_limit_stop_at_the_slash() {
        let path = |n: usize| vec!["<http://e/p>"; n + 1].join("/");
        let many = path(MAX_STEPS - 1);
        // Two patterns of a path just within the limit, apart at `.`, `;` and `,`.
        let ok = format!(
            "SELECT * WHERE {{ ?a {many} ?b . ?b {many} ?c ; {many} ?d , ?e }} # {}",
            path(MAX_STEPS + 1)
        );
        assert_eq!(too_deep(&ok), None);
        let text = format!("SELECT * WHERE {{ ?a {} ?b }}", path(MAX_STEPS + 1));
        let (at, deep) = too_deep(&text).unwrap();
        assert_eq!(deep, Deep::Steps);
        assert_eq!(&text[at..at + 1], "/");
        assert_eq!(text[..at].matches(">/<").count(), MAX_STEPS);
    }

    #[test]
    fn triple_terms_count_as_brackets() {
        let n = MAX_NESTING / 2 + 1;
        let text = format!(
            "SELECT * WHERE {{ ?a ?p {}?b{} }}",
            "<<( ?a ?p ".repeat(n),
            " )>>".repeat(n)
        );
        assert!(too_deep(&text).is_some());
    }

    #[test]
    fn names_past_u_ffff_are_rewritten_and_others_left_alone() {
        assert_eq!(
            widen_names("SELECT ?x WHERE { ?x <http://e/p> \"𐀀\" }"),
            None
        );
        let text = "PREFIX ex: <http://example.org/>\nCONSTRUCT { ?a ex:p ex:x𐀀\\.y } WHERE { ?a𐀀 ex:q ?a . ?a ex:r _:b𐀀 }";
        let w = widen_names(text).unwrap();
        assert!(w.contains("<http://example.org/x𐀀.y>"), "{w}");
        assert!(w.contains("?a_u10000_ ex:q"), "{w}");
        assert!(w.contains("_:b_u10000_"), "{w}");
        // An undeclared prefix is left for the parser to report.
        assert_eq!(widen_names("SELECT * WHERE { ?a nope:x𐀀 ?b }"), None);
    }

    fn hint(text: &str, at: Option<usize>, message: &str) -> Option<Hint> {
        syntax_hint(text, at, message, true)
    }

    #[test]
    fn a_literal_or_triple_term_subject_of_a_triple_term_is_found_in_the_text() {
        let at =
            literal_triple_term_subject("SELECT * { BIND(<<( \"l\" :q :z )>> AS ?x) }").unwrap();
        assert_eq!(at, 20);
        // Patterns may nest triple terms.
        assert_eq!(
            literal_triple_term_subject("SELECT * { <<( <<(?S :p :o )>> :r :z )>> :q 1 . }"),
            None
        );
        assert!(
            literal_triple_term_subject("SELECT * { BIND(<<( <<(:s :p :o)>> :q :z )>> AS ?x) }")
                .is_some()
        );
        assert!(literal_triple_term_subject("SELECT * { BIND(<<( 1 :q :z )>> AS ?x) }").is_some());
        assert_eq!(
            literal_triple_term_subject("SELECT * { BIND(TRIPLE(1, :q, :z) AS ?x) }"),
            None
        );
        assert_eq!(
            literal_triple_term_subject("SELECT * { BIND(<<( :s :q 1 )>> AS ?x) }"),
            None
        );
    }

    #[test]
    fn unbalanced_brackets_and_operators_without_an_operand_are_pointed_at() {
        let at = |text: &str| {
            let h = hint(text, Some(text.len()), "").unwrap();
            let at = h.at.unwrap();
            (h.what, text[at.clone()].to_owned(), at.start)
        };
        let text = "CONSTRUCT { ?a <http://e/q> ?b } WHERE { ?a <http://e/p> ?b . OPTIONAL { ?b <http://e/r> ?c }";
        let (what, bracket, start) = at(text);
        assert_eq!(
            (what.as_str(), bracket.as_str()),
            ("this `{` is never closed", "{")
        );
        assert_eq!(start, text.find("WHERE {").unwrap() + 6);
        let text = "CONSTRUCT { ?a <http://e/q> ?b } WHERE { ?a <http://e/p> ?b } }";
        let (what, _, start) = at(text);
        assert!(what.contains("closes nothing"), "{what}");
        assert_eq!(start, text.len() - 1);
        let (what, bracket, _) = at("CONSTRUCT { ?a ?p ?b } WHERE { ?a ?p ?b FILTER (?b != 1)) }");
        assert_eq!(
            (what.as_str(), bracket.as_str()),
            ("this `)` does not close the `{` open before it", ")")
        );
        // Triple terms, annotations and IRIs pair up.
        assert_eq!(
            hint(
                "SELECT * { <<( ?s ?p ?o )>> ?q ?r {| ?x ?y |} . FILTER(?r < <http://e/x>) }",
                None,
                ""
            ),
            None
        );
        let (what, op, _) = at("CONSTRUCT { ?a ?p ?b } WHERE { ?a ?p ?b FILTER (?b >= 1 && ) }");
        assert_eq!(
            (what.as_str(), op.as_str()),
            ("`&&` has nothing on its right", "&&")
        );
        let (_, op, _) = at("CONSTRUCT { ?a ?p ?b } WHERE { ?a ?p ?b FILTER (?b >= ) }");
        assert_eq!(op, ">=");
        // COUNT(*) and a path's `+` before a bracket are no operators missing an operand.
        assert_eq!(
            syntax_hint(
                "SELECT (COUNT(*) AS ?n) WHERE { ?a (<http://e/p>+) ?b }",
                None,
                "",
                false
            ),
            None
        );
    }

    #[test]
    fn syntax_hints_say_what_the_parser_does_not() {
        assert!(
            hint("# nothing\n", None, "")
                .unwrap()
                .what
                .contains("empty")
        );
        let text = "PREFIX ex: <http://e/>\nCONSTRUCT { ?a ex:q ?b } WHERE { ?a ex:p ?b FILTER(xsd:integer(?b) > 1) }";
        let at = text.find("xsd:integer").unwrap() + "xsd:integer".len();
        let h = hint(text, Some(at), "expected ENCODE_FOR_URI").unwrap();
        assert!(
            h.fix
                .contains("PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>"),
            "{h:?}"
        );
        assert_eq!(&text[h.at.unwrap()], "xsd:");
        let text = "PREFIX ex: <http://e/>\nCONSTRUCT { ?a ex:q ?b } WHERE { ?a ex:p ?b }\nconstruct { ?a ex:r ?b } WHERE { ?a ex:p ?b }";
        let h = hint(text, None, "").unwrap();
        assert!(h.fix.contains("#@rule"), "{h:?}");
        assert_eq!(h.at.unwrap().start, text.rfind("construct").unwrap());
        let h = hint(
            "PREFIX ex: <http://e/> INSERT DATA { ex:a ex:p ex:b }",
            None,
            "",
        )
        .unwrap();
        assert!(h.what.contains("`INSERT` starts a SPARQL update"), "{h:?}");
        let text = "CONSTRUCT { ?a <http://e/n> ?n } WHERE { { SELECT * WHERE { ?a ?p ?b } GROUP BY ?a } }";
        let h = hint(text, None, "").unwrap();
        assert!(h.what.starts_with("SELECT * cannot"), "{h:?}");
        // A SELECT * subquery next to a grouped one is fine.
        let text =
            "SELECT * WHERE { { SELECT ?a (COUNT(?b) AS ?n) WHERE { ?a ?p ?b } GROUP BY ?a } }";
        assert_eq!(syntax_hint(text, None, "", false), None);
        let h = hint(
            "SELECT * WHERE {} LIMIT 99999999999999999999999",
            None,
            "expected one of The query limit should be a non negative integer",
        )
        .unwrap();
        assert!(h.what.contains("LIMIT"), "{h:?}");
    }

    #[test]
    fn operator_chains_past_the_limit_are_too_deep() {
        // As the command does, on a thread with the command's stack: a debug build's frames are large.
        std::thread::Builder::new()
            .stack_size(crate::STACK)
            .spawn(operator_chains)
            .unwrap()
            .join()
            .unwrap();
    }

    fn operator_chains() {
        let parse = |q: &str| spargebra::SparqlParser::new().parse_query(q).unwrap();
        let chain = |n: usize| vec!["?a"; n].join(" + ");
        let ok = parse(&format!("SELECT * WHERE {{ BIND({} AS ?x) }}", chain(100)));
        let spargebra::Query::Select { pattern, .. } = &ok else {
            panic!()
        };
        assert!(!pattern_too_deep(pattern));
        let deep = parse(&format!(
            "SELECT * WHERE {{ BIND({} AS ?x) }}",
            chain(MAX_DEPTH + 10)
        ));
        let spargebra::Query::Select { pattern, .. } = &deep else {
            panic!()
        };
        assert!(pattern_too_deep(pattern));
        // (A sequence path is a chain of triple patterns once parsed; alternatives nest.)
        let path = vec!["<http://e/p>"; MAX_DEPTH + 10].join("|");
        let deep = parse(&format!("SELECT * WHERE {{ ?a {path} ?b }}"));
        let spargebra::Query::Select { pattern, .. } = &deep else {
            panic!()
        };
        assert!(pattern_too_deep(pattern));
        forget_deep(deep);
    }
}
