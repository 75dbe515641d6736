//! This module defines the filter expression language of JSON-LD rules: S-expression strings
//! (`"(> ?c 0.85)"`) and the equivalent JSON data form (`[">", "?c", 0.85]`), parsed into [`SExpr`] trees, with
//! the operand classification rules lower: `?x` a variable, quoted text a string, numbers and booleans literals,
//! `ex:knows` (a defined prefix) or `<…>` an IRI; anything else unquoted rejects the rule.

use serde_json::Value;

/// A parsed S-expression.
#[derive(Clone, Debug, PartialEq)]
pub enum SExpr {
    /// `(op arg …)`.
    List(Vec<SExpr>),
    /// `?name`.
    Var(String),
    /// `"text"`.
    Str(String),
    /// A number, as written.
    Num(String),
    /// `true` / `false`.
    Bool(bool),
    /// `<iri>`.
    Iri(String),
    /// Any other unquoted token: a function name in head position, else a compact IRI or a bare word.
    Word(String),
}

/// Why an expression given in a rule does not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SExprError {
    /// It is malformed: what is wrong.
    Shape(String),
    /// Its parentheses nest deeper than [`MAX_NESTING`].
    TooDeep,
}

impl From<String> for SExprError {
    fn from(message: String) -> Self {
        SExprError::Shape(message)
    }
}

/// The most parentheses an S-expression may nest (the parser and every walk over an expression recurse once per
/// level), as SPARQL's bracket limit.
pub const MAX_NESTING: usize = crate::rules::sparql::scan::MAX_NESTING;

/// Parses an S-expression string.
pub fn parse(text: &str) -> Result<SExpr, SExprError> {
    let tokens = tokenize(text)?;
    let mut depth = 0usize;
    for t in &tokens {
        match t {
            Token::Open => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(SExprError::TooDeep);
                }
            }
            Token::Close => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    let mut pos = 0;
    let expr = parse_tokens(&tokens, &mut pos)?;
    if pos != tokens.len() {
        return Err(format!("unexpected text after the expression in {text:?}").into());
    }
    Ok(expr)
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Open,
    Close,
    Str(String),
    Atom(String),
}

fn tokenize(text: &str) -> Result<Vec<Token>, String> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some(&(_, c)) = chars.peek() {
        match c {
            c if c.is_whitespace() => {
                chars.next();
            }
            '(' => {
                chars.next();
                out.push(Token::Open);
            }
            ')' => {
                chars.next();
                out.push(Token::Close);
            }
            '"' | '\'' => {
                let quote = c;
                chars.next();
                let mut s = String::new();
                let mut closed = false;
                while let Some((_, c)) = chars.next() {
                    match c {
                        '\\' => match chars.next().map(|(_, c)| c) {
                            Some('n') => s.push('\n'),
                            Some('t') => s.push('\t'),
                            Some('r') => s.push('\r'),
                            Some(other) => s.push(other),
                            None => return Err("a string ends with a backslash".to_owned()),
                        },
                        c if c == quote => {
                            closed = true;
                            break;
                        }
                        c => s.push(c),
                    }
                }
                if !closed {
                    return Err(format!("unterminated string in {text:?}"));
                }
                out.push(Token::Str(s));
            }
            _ => {
                let mut s = String::new();
                while let Some(&(_, c)) = chars.peek() {
                    if c.is_whitespace() || c == '(' || c == ')' {
                        break;
                    }
                    s.push(c);
                    chars.next();
                }
                out.push(Token::Atom(s));
            }
        }
    }
    Ok(out)
}

fn parse_tokens(tokens: &[Token], pos: &mut usize) -> Result<SExpr, String> {
    let Some(t) = tokens.get(*pos) else {
        return Err("an expression ends too early (a missing \")\"?)".to_owned());
    };
    *pos += 1;
    Ok(match t {
        Token::Open => {
            let mut items = Vec::new();
            loop {
                match tokens.get(*pos) {
                    None => return Err("a \"(\" is never closed".to_owned()),
                    Some(Token::Close) => {
                        *pos += 1;
                        break;
                    }
                    Some(_) => items.push(parse_tokens(tokens, pos)?),
                }
            }
            SExpr::List(items)
        }
        Token::Close => return Err("an unexpected \")\"".to_owned()),
        Token::Str(s) => SExpr::Str(s.clone()),
        Token::Atom(a) => atom(a),
    })
}

fn atom(a: &str) -> SExpr {
    if let Some(v) = a.strip_prefix('?') {
        return SExpr::Var(v.to_owned());
    }
    if let Some(iri) = a.strip_prefix('<').and_then(|r| r.strip_suffix('>')) {
        return SExpr::Iri(iri.to_owned());
    }
    match a {
        "true" => return SExpr::Bool(true),
        "false" => return SExpr::Bool(false),
        _ => {}
    }
    let body = a.strip_prefix(['+', '-']).unwrap_or(a);
    let numeric = !body.is_empty()
        && body.starts_with(|c: char| c.is_ascii_digit() || c == '.')
        && body
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'))
        && body.chars().any(|c| c.is_ascii_digit());
    if numeric {
        SExpr::Num(a.to_owned())
    } else {
        SExpr::Word(a.to_owned())
    }
}

/// The data form of an expression: arrays are applications (the first element names the function), `"?x"` is a
/// variable, other strings are strings, numbers and booleans literals, `["iri", "http://…"]` an IRI.
pub fn from_data(value: &Value) -> Result<SExpr, String> {
    Ok(match value {
        Value::Array(items) => {
            let Some(Value::String(op)) = items.first() else {
                return Err(format!(
                    "a data-form expression starts with its function name as a string, found {value}"
                ));
            };
            // ["iri", "ex:b"] / ["iri", "http://…"] is an IRI constant (expanded like an unquoted operand);
            // ["iri", "?v"] or ["iri", [expression]] is the IRI() function.
            if op.eq_ignore_ascii_case("iri") && items.len() == 2 {
                if let Value::String(iri) = &items[1] {
                    if !iri.starts_with('?') {
                        return Ok(if iri.contains("://") || iri.starts_with("urn:") {
                            SExpr::Iri(iri.clone())
                        } else {
                            atom(iri)
                        });
                    }
                }
            }
            let mut list = vec![SExpr::Word(op.clone())];
            for item in &items[1..] {
                list.push(from_data(item)?);
            }
            SExpr::List(list)
        }
        Value::String(s) => match s.strip_prefix('?') {
            Some(v) => SExpr::Var(v.to_owned()),
            None => SExpr::Str(s.clone()),
        },
        Value::Number(n) => SExpr::Num(n.to_string()),
        Value::Bool(b) => SExpr::Bool(*b),
        other => return Err(format!("{other} is not an expression")),
    })
}

/// An expression given in a rule: an S-expression string, or the data form.
pub fn from_value(value: &Value) -> Result<SExpr, SExprError> {
    match value {
        Value::String(s) if s.trim_start().starts_with('(') => parse(s),
        Value::String(s) => Ok(atom(s.trim())),
        other => Ok(from_data(other)?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn s_expressions_classify_their_operands() {
        let e = parse(
            r#"(and (>= ?a 62) (strStarts ?n "A") (= ?p ex:knows) (!= ?q <http://e/x>) true)"#,
        )
        .unwrap();
        let SExpr::List(items) = e else { panic!() };
        assert_eq!(items[0], SExpr::Word("and".into()));
        assert_eq!(
            items[1],
            SExpr::List(vec![
                SExpr::Word(">=".into()),
                SExpr::Var("a".into()),
                SExpr::Num("62".into())
            ])
        );
        assert_eq!(
            items[2],
            SExpr::List(vec![
                SExpr::Word("strStarts".into()),
                SExpr::Var("n".into()),
                SExpr::Str("A".into())
            ])
        );
        assert_eq!(
            items[3],
            SExpr::List(vec![
                SExpr::Word("=".into()),
                SExpr::Var("p".into()),
                SExpr::Word("ex:knows".into())
            ])
        );
        assert_eq!(
            items[4],
            SExpr::List(vec![
                SExpr::Word("!=".into()),
                SExpr::Var("q".into()),
                SExpr::Iri("http://e/x".into())
            ])
        );
        assert_eq!(items[5], SExpr::Bool(true));
    }

    #[test]
    fn the_data_form_reads_like_the_string_form() {
        assert_eq!(
            from_data(&json!([">", "?age", 18])).unwrap(),
            SExpr::List(vec![
                SExpr::Word(">".into()),
                SExpr::Var("age".into()),
                SExpr::Num("18".into())
            ])
        );
        assert_eq!(
            from_data(&json!(["iri", "http://e/x"])).unwrap(),
            SExpr::Iri("http://e/x".into())
        );
        assert_eq!(
            from_data(&json!(["=", "?n", "Alice"])).unwrap().to_owned(),
            SExpr::List(vec![
                SExpr::Word("=".into()),
                SExpr::Var("n".into()),
                SExpr::Str("Alice".into())
            ])
        );
    }

    #[test]
    fn malformed_expressions_are_errors() {
        assert!(parse("(> ?a 1").is_err());
        assert!(parse("(> ?a \"x)").is_err());
        assert!(parse("(> ?a 1))").is_err());
        let deep = format!(
            "{}true{}",
            "(not ".repeat(MAX_NESTING + 1),
            ")".repeat(MAX_NESTING + 1)
        );
        assert_eq!(parse(&deep), Err(SExprError::TooDeep));
        let ok = format!(
            "{}true{}",
            "(not ".repeat(MAX_NESTING),
            ")".repeat(MAX_NESTING)
        );
        assert!(parse(&ok).is_ok());
    }
}
