//! This module defines how a finding finds its construct in a rule's source text (spargebra and serde_json give
//! no spans): a light SPARQL tokenizer and a JSON string scanner, and searches over their tokens.

use std::ops::Range;

/// A SPARQL token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    /// A keyword, prefixed name or bare word (`CONSTRUCT`, `ex:knows`, `a`).
    Word(String),
    /// `?x` or `$x` (the name without the sigil).
    Var(String),
    /// `<…>`.
    Iri,
    /// A string literal.
    Str,
    /// `{|` (an annotation block).
    AnnotationOpen,
    /// Any other character (`{`, `}`, `[`, `~`, `!`, `.`, …).
    Punct(char),
}

/// The tokens of a SPARQL text, each with its byte range; comments are skipped.
pub fn sparql_tokens(text: &str) -> Vec<(Range<usize>, Tok)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let is_name = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'-' || c >= 0x80;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        match c {
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            c if c.is_ascii_whitespace() => {
                i += 1;
                continue;
            }
            b'<' if bytes
                .get(i + 1)
                .is_some_and(|n| !n.is_ascii_whitespace() && *n != b'=') =>
            {
                // An IRI, unless it is a comparison (`<` followed by space or `=`) or `<<`.
                if bytes[i + 1] == b'<' {
                    i += 2;
                    out.push((start..i, Tok::Punct('<')));
                    continue;
                }
                let close = text[i..].find('>').map(|p| i + p + 1);
                match close {
                    Some(end) if !text[i..end].contains(char::is_whitespace) => {
                        i = end;
                        out.push((start..i, Tok::Iri));
                    }
                    _ => {
                        i += 1;
                        out.push((start..i, Tok::Punct('<')));
                    }
                }
                continue;
            }
            b'"' | b'\'' => {
                let long = text[i..].starts_with(if c == b'"' { "\"\"\"" } else { "'''" });
                i += if long { 3 } else { 1 };
                while i < bytes.len() {
                    if bytes[i] == b'\\' {
                        i += 2;
                        continue;
                    }
                    if long {
                        if bytes[i] == c
                            && bytes.get(i + 1) == Some(&c)
                            && bytes.get(i + 2) == Some(&c)
                        {
                            i += 3;
                            break;
                        }
                    } else if bytes[i] == c || bytes[i] == b'\n' {
                        i += 1;
                        break;
                    }
                    i += 1;
                }
                out.push((start..i.min(bytes.len()), Tok::Str));
                continue;
            }
            b'?' | b'$' if bytes.get(i + 1).is_some_and(|n| is_name(*n)) => {
                i += 1;
                while i < bytes.len() && is_name(bytes[i]) {
                    i += 1;
                }
                out.push((start..i, Tok::Var(text[start + 1..i].to_owned())));
                continue;
            }
            b'{' if bytes.get(i + 1) == Some(&b'|') => {
                i += 2;
                out.push((start..i, Tok::AnnotationOpen));
                continue;
            }
            c if is_name(c) || c == b':' => {
                while i < bytes.len() && (is_name(bytes[i]) || bytes[i] == b':' || bytes[i] == b'.')
                {
                    i += 1;
                }
                // A trailing `.` ends a triple, not the name.
                while i > start + 1 && bytes[i - 1] == b'.' {
                    i -= 1;
                }
                out.push((start..i, Tok::Word(text[start..i].to_owned())));
                continue;
            }
            _ => {
                let ch = text[i..].chars().next().unwrap_or(' ');
                i += ch.len_utf8();
                out.push((start..i, Tok::Punct(ch)));
            }
        }
    }
    out
}

/// Searches over a SPARQL rule's tokens.
pub struct Sparql<'t> {
    toks: Vec<(Range<usize>, Tok)>,
    _text: &'t str,
}

impl<'t> Sparql<'t> {
    /// Tokenizes `text`.
    pub fn new(text: &'t str) -> Self {
        Self {
            toks: sparql_tokens(text),
            _text: text,
        }
    }

    fn is_word(&self, i: usize, w: &str) -> bool {
        matches!(&self.toks.get(i), Some((_, Tok::Word(x))) if x.eq_ignore_ascii_case(w))
    }

    /// The first occurrence, at or after token `from`, of the keyword sequence `words` (case-insensitive).
    pub fn keyword_from(&self, from: usize, words: &[&str]) -> Option<(usize, Range<usize>)> {
        (from..self.toks.len()).find_map(|i| {
            words
                .iter()
                .enumerate()
                .all(|(k, w)| self.is_word(i + k, w))
                .then(|| {
                    (
                        i,
                        self.toks[i].0.start..self.toks[i + words.len() - 1].0.end,
                    )
                })
        })
    }

    /// The first occurrence of the keyword sequence.
    pub fn keyword(&self, words: &[&str]) -> Option<Range<usize>> {
        self.keyword_from(0, words).map(|(_, r)| r)
    }

    /// The token range of the CONSTRUCT template: from the `{` after CONSTRUCT to its matching `}`.
    pub fn template(&self) -> Option<Range<usize>> {
        let (k, _) = self.keyword_from(0, &["CONSTRUCT"])?;
        let open = (k + 1..self.toks.len()).find(|&i| self.toks[i].1 == Tok::Punct('{'))?;
        self.matching(open).map(|close| open..close + 1)
    }

    /// The index of the `}` closing the `{` (or `{|`) at `open`.
    fn matching(&self, open: usize) -> Option<usize> {
        let mut depth = 0i32;
        for i in open..self.toks.len() {
            match self.toks[i].1 {
                Tok::Punct('{') | Tok::AnnotationOpen => depth += 1,
                Tok::Punct('}') => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(i);
                    }
                }
                _ => {}
            }
        }
        None
    }

    /// The group (`{ … }`) right after the keyword sequence at token `at`.
    fn group_after(&self, at: usize, words: usize) -> Option<Range<usize>> {
        let open = at + words;
        (self.toks.get(open)?.1 == Tok::Punct('{'))
            .then(|| self.matching(open).map(|close| open..close + 1))
            .flatten()
    }

    /// The first `?var` in the token range `within` (all tokens when `None`).
    pub fn var_in(&self, name: &str, within: Option<Range<usize>>) -> Option<Range<usize>> {
        let within = within.unwrap_or(0..self.toks.len());
        self.toks[within]
            .iter()
            .find(|(_, t)| matches!(t, Tok::Var(v) if v == name))
            .map(|(r, _)| r.clone())
    }

    /// The first token in `within` matching `pred`.
    pub fn find_in(
        &self,
        within: Range<usize>,
        pred: impl Fn(&Tok) -> bool,
    ) -> Option<Range<usize>> {
        self.toks[within]
            .iter()
            .find(|(_, t)| pred(t))
            .map(|(r, _)| r.clone())
    }

    /// The `NOT EXISTS` (or `!EXISTS`, `! EXISTS`) whose group mentions `?var` (any negation when `None`), as the
    /// keyword's range.
    pub fn negation_with(&self, var: Option<&str>) -> Option<Range<usize>> {
        let mut from = 0;
        while from < self.toks.len() {
            let found = (from..self.toks.len()).find_map(|i| {
                let not = self.is_word(i, "NOT") || self.toks[i].1 == Tok::Punct('!');
                (not && self.is_word(i + 1, "EXISTS"))
                    .then(|| (i, i + 2, self.toks[i].0.start..self.toks[i + 1].0.end))
            });
            let (at, after, range) = found?;
            let group = self.group_after(after, 0);
            match (var, group) {
                (None, _) => return Some(range),
                (Some(v), Some(g)) if self.var_in(v, Some(g.clone())).is_some() => {
                    return Some(range);
                }
                _ => from = at + 1,
            }
        }
        None
    }

    /// The token index range of the group after the negation keyword at byte `range`.
    pub fn negation_group(&self, range: &Range<usize>) -> Option<Range<usize>> {
        let at = self.toks.iter().position(|(r, _)| r.end == range.end)?;
        self.group_after(at + 1, 0)
    }

    /// The first subquery's `SELECT` (after WHERE).
    pub fn subquery(&self) -> Option<Range<usize>> {
        let (w, _) = self.keyword_from(0, &["WHERE"])?;
        self.keyword_from(w, &["SELECT"]).map(|(_, r)| r)
    }

    /// The bytes a range of tokens covers.
    pub fn bytes(&self, toks: Range<usize>) -> Option<Range<usize>> {
        let first = self.toks.get(toks.start)?;
        let last = self.toks.get(toks.end.checked_sub(1)?)?;
        Some(first.0.start..last.0.end)
    }

    /// The number of tokens.
    pub fn len(&self) -> usize {
        self.toks.len()
    }

    /// Whether there are no tokens.
    pub fn is_empty(&self) -> bool {
        self.toks.is_empty()
    }
}

/// A JSON string literal: its range (quotes included), its raw contents, and whether it is an object key.
#[derive(Clone, Debug)]
pub struct JsonStr {
    /// Byte range, quotes included.
    pub range: Range<usize>,
    /// The text between the quotes, unescaped only for `\"` and `\\`.
    pub value: String,
    /// Followed by `:`.
    pub key: bool,
}

/// Every string literal of a JSON text, in order.
pub fn json_strings(text: &str) -> Vec<JsonStr> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'"' {
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        let mut value = String::new();
        let mut seg = i;
        while i < bytes.len() && bytes[i] != b'"' {
            if bytes[i] == b'\\' && i + 1 < bytes.len() {
                value.push_str(&text[seg..i]);
                // The escaped character may be any character (an invalid escape such as `\é` included).
                let esc = text[i + 1..].chars().next().unwrap_or('\\');
                if matches!(esc, '"' | '\\' | '/') {
                    value.push(esc);
                } else {
                    value.push('\\');
                    value.push(esc);
                }
                i += 1 + esc.len_utf8();
                seg = i;
                continue;
            }
            i += 1;
        }
        value.push_str(&text[seg..i.min(bytes.len())]);
        i = (i + 1).min(bytes.len());
        let mut j = i;
        while j < bytes.len() && bytes[j].is_ascii_whitespace() {
            j += 1;
        }
        out.push(JsonStr {
            range: start..i,
            value,
            key: bytes.get(j) == Some(&b':'),
        });
    }
    out
}

/// Searches over a JSON-LD rule's string literals.
pub struct Json<'t> {
    strs: Vec<JsonStr>,
    text: &'t str,
}

impl<'t> Json<'t> {
    /// Scans `text`.
    pub fn new(text: &'t str) -> Self {
        Self {
            strs: json_strings(text),
            text,
        }
    }

    /// Where the value of the top-level-ish key `key` starts (the first such key), as a byte offset.
    pub fn after_key(&self, key: &str) -> Option<usize> {
        self.strs
            .iter()
            .find(|s| s.key && s.value == key)
            .map(|s| s.range.end)
    }

    /// The range of the key `key` itself.
    pub fn key(&self, key: &str) -> Option<Range<usize>> {
        self.key_from(0, key)
    }

    /// The first key `key` at or after byte `from`.
    pub fn key_from(&self, from: usize, key: &str) -> Option<Range<usize>> {
        self.strs
            .iter()
            .find(|s| s.key && s.value == key && s.range.start >= from)
            .map(|s| s.range.clone())
    }

    /// The first string (key or value) equal to `value` at or after byte `from`.
    pub fn string_from(&self, from: usize, value: &str) -> Option<Range<usize>> {
        self.strs
            .iter()
            .find(|s| s.value == value && s.range.start >= from)
            .map(|s| s.range.clone())
    }

    /// The first string value starting with `prefix` at or after byte `from`.
    pub fn string_starting_from(&self, from: usize, prefix: &str) -> Option<Range<usize>> {
        self.strs
            .iter()
            .find(|s| !s.key && s.value.starts_with(prefix) && s.range.start >= from)
            .map(|s| s.range.clone())
    }

    /// The first string (key or value) equal to `value` ignoring ASCII case, at or after byte `from`.
    pub fn string_from_ci(&self, from: usize, value: &str) -> Option<Range<usize>> {
        self.strs
            .iter()
            .find(|s| s.value.eq_ignore_ascii_case(value) && s.range.start >= from)
            .map(|s| s.range.clone())
    }

    /// Every string equal to one of `values` ignoring ASCII case, at or after byte `from`, in order.
    pub fn all_ci(&self, from: usize, values: &[&str]) -> Vec<Range<usize>> {
        self.strs
            .iter()
            .filter(|s| {
                s.range.start >= from && values.iter().any(|v| s.value.eq_ignore_ascii_case(v))
            })
            .map(|s| s.range.clone())
            .collect()
    }

    /// The first occurrence of `word` as a whole word inside an S-expression string (one starting with `(`) at
    /// or after byte `from`, else inside any string.
    pub fn operand_from(&self, from: usize, word: &str) -> Option<Range<usize>> {
        let in_expr = self
            .strs
            .iter()
            .filter(|s| s.range.start >= from && s.value.trim_start().starts_with('('))
            .find_map(|s| self.word_in(s, word));
        in_expr.or_else(|| self.word_in_string_from(from, word))
    }

    fn word_in(&self, s: &JsonStr, word: &str) -> Option<Range<usize>> {
        let raw = &self.text[s.range.clone()];
        let mut search = 0;
        while let Some(p) = raw[search..].find(word) {
            let at = search + p;
            let before = raw[..at].chars().next_back();
            let after = raw[at + word.len()..].chars().next();
            let boundary = |c: Option<char>| {
                c.is_none_or(|c| !(c.is_alphanumeric() || matches!(c, ':' | '_' | '-' | '?')))
            };
            if boundary(before) && boundary(after) {
                return Some(s.range.start + at..s.range.start + at + word.len());
            }
            search = at + word.len();
        }
        None
    }

    /// The first occurrence of `word` as a whole word inside a string value at or after byte `from` (an operand
    /// of a filter expression), as its own range.
    pub fn word_in_string_from(&self, from: usize, word: &str) -> Option<Range<usize>> {
        self.strs
            .iter()
            .filter(|s| s.range.start >= from)
            .find_map(|s| self.word_in(s, word))
    }

    /// The first `{` of the text (the rule object), as a one-byte range.
    pub fn opening(&self) -> Option<Range<usize>> {
        self.text.find('{').map(|p| p..p + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_are_found_outside_comments_strings_and_iris() {
        let text = "# OPTIONAL in a comment\nCONSTRUCT { ?a <http://e/OPTIONAL> \"OPTIONAL\" } WHERE { ?a ?p ?b optional { ?b ?q ?c } }";
        let s = Sparql::new(text);
        let r = s.keyword(&["OPTIONAL"]).unwrap();
        assert_eq!(&text[r], "optional");
    }

    #[test]
    fn template_variables_and_negations_are_located() {
        let text = "CONSTRUCT { ?x a ?c } WHERE { ?y a ?c FILTER NOT EXISTS { ?x ?p ?y } }";
        let s = Sparql::new(text);
        let t = s.template().unwrap();
        assert_eq!(&text[s.var_in("x", Some(t)).unwrap()], "?x");
        let n = s.negation_with(Some("x")).unwrap();
        assert_eq!(&text[n.clone()], "NOT EXISTS");
        let g = s.negation_group(&n).unwrap();
        let v = s.var_in("x", Some(g)).unwrap();
        assert!(v.start > n.end);
    }

    #[test]
    fn json_keys_values_and_filter_operands_are_located() {
        let text = r#"{"where": [{"@id": "?a", "@reverse": {}}, ["filter", "(= ?p knows)"]], "insert": {}}"#;
        let j = Json::new(text);
        assert_eq!(&text[j.key("@reverse").unwrap()], "\"@reverse\"");
        assert_eq!(&text[j.word_in_string_from(0, "knows").unwrap()], "knows");
        assert!(j.after_key("insert").unwrap() > j.after_key("where").unwrap());
    }
}
