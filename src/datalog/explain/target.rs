//! This module defines the parsing of `--fact 'S P O [G]'` into a [`Target`]: N-Triples term syntax, prefixed
//! names with the data's prefixes, `?x` for any term.

use miette::Diagnostic;
use spargebra::algebra::GraphPattern;
use spargebra::term::{NamedNodePattern, TermPattern};
use spargebra::{Query, SparqlParser};
use thiserror::Error;

use crate::store::{Dictionary, TermId};

use super::Target;

/// A `--fact` value that is not a fact pattern.
#[derive(Debug, Error, Diagnostic)]
#[error("--fact '{text}' is not a fact: {reason}")]
#[diagnostic(
    code(reasonctl::explain::fact),
    help(
        "write S P O [G] in N-Triples term syntax, e.g. --fact '<http://example.org/a> <http://example.org/p> ?o'; prefixed names may use the data's prefixes{prefixes}; blank nodes are written _:bN as materialize writes them"
    )
)]
pub struct FactError {
    text: String,
    reason: String,
    prefixes: String,
}

/// Parses `text` (`S P O` or `S P O G`, an optional final `.`) with the data's `prefixes`; terms are interned
/// (a term the data lacks matches no fact).
pub fn parse(
    text: &str,
    prefixes: &[(String, String)],
    dict: &mut Dictionary,
) -> Result<Target, FactError> {
    let fail = |reason: String| FactError {
        text: text.to_owned(),
        reason,
        prefixes: if prefixes.is_empty() {
            String::new()
        } else {
            format!(
                " ({})",
                prefixes
                    .iter()
                    .map(|(p, _)| format!("{p}:"))
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        },
    };
    let body = text.trim();
    let body = body.strip_suffix('.').unwrap_or(body).trim_end();
    if body.is_empty() {
        return Err(fail("it is empty".to_owned()));
    }
    if has_path_operator(body) {
        return Err(fail(
            "it holds a property path (`^`, `/`, `|`, `*`, `+`): a fact's predicate is one IRI or a variable"
                .to_owned(),
        ));
    }
    let mut parser = SparqlParser::new();
    for (p, ns) in prefixes {
        if let Ok(with) = parser.clone().with_prefix(p, ns) {
            parser = with;
        }
    }
    let three = parser
        .clone()
        .parse_query(&format!("SELECT * WHERE {{ {body} }}"));
    let (pattern, graph) = match three.as_ref().ok().and_then(single) {
        Some(found) => found,
        None => {
            // `S P O G`: the graph name is the last word (IRIs, prefixed names and variables hold no spaces).
            let four = body.rsplit_once(char::is_whitespace).and_then(|(spo, g)| {
                parser
                    .parse_query(&format!("SELECT * WHERE {{ GRAPH {g} {{ {spo} }} }}"))
                    .ok()
            });
            match four.as_ref().and_then(single) {
                Some(found) => found,
                None => {
                    let reason = match three {
                        Err(e) => {
                            let message = e.to_string();
                            format!("{}{}", short(&message), at_word(&message, body))
                        }
                        Ok(_) => "it is not one triple pattern".to_owned(),
                    };
                    return Err(fail(reason));
                }
            }
        }
    };
    let mut names: [Option<String>; 4] = Default::default();
    let mut terms = [None; 3];
    for (i, t) in [&pattern.subject, &pattern.object].into_iter().enumerate() {
        let at = if i == 0 { 0 } else { 2 };
        match t {
            TermPattern::Variable(v) => names[at] = Some(v.as_str().to_owned()),
            t => terms[at] = Some(ground(t, dict).map_err(&fail)?),
        }
    }
    match &pattern.predicate {
        NamedNodePattern::Variable(v) => names[1] = Some(v.as_str().to_owned()),
        NamedNodePattern::NamedNode(n) => terms[1] = Some(dict.intern_iri(n.as_str())),
    }
    let graph = match graph {
        None => Some(TermId::DEFAULT_GRAPH),
        Some(NamedNodePattern::NamedNode(n)) => Some(dict.intern_iri(n.as_str())),
        Some(NamedNodePattern::Variable(v)) => {
            names[3] = Some(v.as_str().to_owned());
            None
        }
    };
    let mut same = Vec::new();
    for a in 0..4 {
        for b in a + 1..4 {
            if names[a].is_some() && names[a] == names[b] {
                same.push((a, b));
            }
        }
    }
    Ok(Target { terms, graph, same })
}

/// Whether the text, outside IRIs and quoted strings, holds a path operator (SPARQL would read `a ^p b` as the
/// reversed triple, silently).
fn has_path_operator(text: &str) -> bool {
    let mut chars = text.chars().peekable();
    let mut prev = ' ';
    while let Some(c) = chars.next() {
        match c {
            '<' if chars.peek() != Some(&'<') && prev != '<' => {
                // An IRI (not `<<(`): skip to its end.
                for d in chars.by_ref() {
                    if d == '>' {
                        break;
                    }
                }
                prev = '>';
                continue;
            }
            '"' | '\'' => {
                let mut escaped = false;
                for d in chars.by_ref() {
                    if escaped {
                        escaped = false;
                    } else if d == '\\' {
                        escaped = true;
                    } else if d == c {
                        break;
                    }
                }
            }
            '^' if prev != '^' && chars.peek() != Some(&'^') => return true,
            '|' | '/' => return true,
            // `p+ o`, `p* o`: after a name and before a space (`1.5e+3` is a number).
            '*' | '+'
                if (prev.is_alphanumeric() || prev == '>' || prev == ')')
                    && chars.peek().is_none_or(|n| n.is_whitespace()) =>
            {
                return true;
            }
            _ => {}
        }
        prev = c;
    }
    false
}

/// The one triple pattern of `SELECT * WHERE { … }`, with its GRAPH name if any.
fn single(q: &Query) -> Option<(spargebra::term::TriplePattern, Option<NamedNodePattern>)> {
    let Query::Select { pattern, .. } = q else {
        return None;
    };
    let mut p = pattern;
    let mut graph = None;
    loop {
        match p {
            GraphPattern::Project { inner, .. } => p = inner,
            GraphPattern::Graph { name, inner } if graph.is_none() => {
                graph = Some(name.clone());
                p = inner;
            }
            GraphPattern::Bgp { patterns } if patterns.len() == 1 => {
                return Some((patterns[0].clone(), graph));
            }
            _ => return None,
        }
    }
}

/// A term without variables.
fn ground(t: &TermPattern, dict: &mut Dictionary) -> Result<TermId, String> {
    match t {
        TermPattern::NamedNode(n) => Ok(dict.intern_iri(n.as_str())),
        TermPattern::Literal(l) => Ok(dict.intern_oxrdf_literal(l.as_ref())),
        TermPattern::BlankNode(b) => b
            .as_str()
            .strip_prefix('b')
            .and_then(|n| n.parse::<u32>().ok())
            .and_then(|n| dict.lookup_blank(n))
            .ok_or_else(|| format!("the data has no blank node _:{}", b.as_str())),
        TermPattern::Triple(tp) => {
            let s = ground(&tp.subject, dict)?;
            let p = match &tp.predicate {
                NamedNodePattern::NamedNode(n) => dict.intern_iri(n.as_str()),
                NamedNodePattern::Variable(v) => {
                    return Err(format!(
                        "?{} inside a triple term: only whole positions may be variables",
                        v.as_str()
                    ));
                }
            };
            let o = ground(&tp.object, dict)?;
            Ok(dict.intern_triple([s, p, o]))
        }
        TermPattern::Variable(v) => Err(format!(
            "?{} inside a triple term: only whole positions may be variables",
            v.as_str()
        )),
    }
}

/// Where in the fact the parser stopped (its `error at 1:C`, less the query text wrapped around the fact), and the
/// word there: the term it could not read, or the one after it; empty where the message has no position.
fn at_word(message: &str, body: &str) -> String {
    // The fact went in after `SELECT * WHERE { `, on line 1.
    const WRAPPER: usize = "SELECT * WHERE { ".len();
    let Some(column) = message
        .strip_prefix("error at 1:")
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|c| c.parse::<usize>().ok())
    else {
        return String::new();
    };
    let chars: Vec<char> = body.chars().collect();
    let Some(at) = column
        .checked_sub(1 + WRAPPER)
        .filter(|&at| at < chars.len())
    else {
        return String::new();
    };
    // The word around that character (back to the previous space, on to the next).
    let start = chars[..at]
        .iter()
        .rposition(|c| c.is_whitespace())
        .map_or(0, |i| i + 1);
    let end = chars[at..]
        .iter()
        .position(|c| c.is_whitespace())
        .map_or(chars.len(), |i| at + i);
    let word: String = chars[start..end].iter().collect();
    if word.is_empty() {
        return String::new();
    }
    format!(" (reading stopped at column {}, at `{word}`)", at + 1)
}

/// The parser's message without its position (which counts the wrapper text) and its list of expected tokens.
fn short(message: &str) -> String {
    let m = message
        .split_once(": ")
        .filter(|(head, _)| head.starts_with("error at"))
        .map_or(message, |(_, rest)| rest);
    if m.starts_with("expected") {
        return "it is not a triple S P O (and optionally a graph G) of N-Triples terms, prefixed names or variables"
            .to_owned();
    }
    m.split(", expected").next().unwrap_or(m).trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prefixes() -> Vec<(String, String)> {
        vec![("ex".to_owned(), "http://example.org/".to_owned())]
    }

    #[test]
    fn a_fact_that_does_not_parse_names_the_word_where_reading_stopped() {
        let mut dict = Dictionary::new();
        let e = parse("undefined:a ex:p ex:c", &prefixes(), &mut dict).unwrap_err();
        assert!(
            e.reason
                .ends_with("(reading stopped at column 12, at `undefined:a`)"),
            "{}",
            e.reason
        );
        // The parser's position is past the fact: no word.
        let e = parse("ex:a ex:p", &prefixes(), &mut dict).unwrap_err();
        assert!(!e.reason.contains("reading stopped"), "{}", e.reason);
    }

    #[test]
    fn three_terms_with_prefixed_names_and_a_variable_parse_to_the_default_graph() {
        let mut dict = Dictionary::new();
        let t = parse("ex:a ex:p ?o .", &prefixes(), &mut dict).unwrap();
        assert_eq!(t.terms[0], dict.lookup_iri("http://example.org/a"));
        assert_eq!(t.terms[1], dict.lookup_iri("http://example.org/p"));
        assert_eq!(t.terms[2], None);
        assert_eq!(t.graph, Some(TermId::DEFAULT_GRAPH));
    }

    #[test]
    fn a_fourth_term_is_the_graph_and_a_graph_variable_means_every_graph() {
        let mut dict = Dictionary::new();
        let t = parse(
            "<http://x/a> <http://x/p> \"v w\"@en <http://x/g>",
            &[],
            &mut dict,
        )
        .unwrap();
        assert_eq!(t.graph, dict.lookup_iri("http://x/g"));
        let any = parse("?s <http://x/p> ?o ?g", &[], &mut dict).unwrap();
        assert_eq!(any.graph, None);
    }

    #[test]
    fn a_repeated_variable_requires_equal_terms() {
        let mut dict = Dictionary::new();
        let t = parse("?x <http://x/p> ?x", &[], &mut dict).unwrap();
        assert_eq!(t.same, vec![(0, 2)]);
        let a = dict.intern_iri("http://x/a");
        let b = dict.intern_iri("http://x/b");
        let p = dict.lookup_iri("http://x/p").unwrap();
        assert!(t.matches([TermId::DEFAULT_GRAPH, a, p, a]));
        assert!(!t.matches([TermId::DEFAULT_GRAPH, a, p, b]));
    }

    #[test]
    fn malformed_text_and_unknown_blank_nodes_are_errors_naming_the_problem() {
        let mut dict = Dictionary::new();
        let e = parse("ex:a ex:p", &prefixes(), &mut dict).unwrap_err();
        assert!(e.to_string().contains("--fact 'ex:a ex:p'"), "{e}");
        let e = parse("_:x <http://x/p> ?o", &[], &mut dict).unwrap_err();
        assert!(e.to_string().contains("no blank node _:x"), "{e}");
        let e = parse("", &[], &mut dict).unwrap_err();
        assert!(e.to_string().contains("empty"), "{e}");
        let e = parse("<http://x/a> ^<http://x/p> <http://x/b>", &[], &mut dict).unwrap_err();
        assert!(e.to_string().contains("property path"), "{e}");
        // `^^` of a datatype, operators inside strings, and signs of numbers are not paths.
        parse("?s <http://x/p> \"a^b+c|d\"^^<http://x/t>", &[], &mut dict).unwrap();
        parse("?s <http://x/p> -5", &[], &mut dict).unwrap();
        parse("?s <http://x/p> 1.5e+3", &[], &mut dict).unwrap();
        let e = parse("?s <http://x/p>+ ?o", &[], &mut dict).unwrap_err();
        assert!(e.to_string().contains("property path"), "{e}");
    }
}
