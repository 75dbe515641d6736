//! This module defines the annotation form of Turtle and TriG output: an edge written with its reifiers, `s p o ~ r {| … |}`.
//!
//! An edge of the output is written so when a reifier of the output, in the same graph, reifies it and nothing
//! else, and the reifier appears in no other position (not as an object, not in another graph, not inside a
//! triple term): its triples then go inside `{| … |}` (RDF 1.2 Turtle §2.10). Everything else is left to the
//! ordinary writer. The statements keep the output's order (the order of their edges).

use std::io::{self, Write};

use hashbrown::{HashMap, HashSet};

use crate::store::{LiteralKind, Quad, TermId, TermRef, TermSource, Triple, well_known as wk};

/// An edge with its reifiers and their other triples.
pub(super) struct Statement {
    graph: TermId,
    edge: Triple,
    reifiers: Vec<(TermId, Vec<(TermId, TermId)>)>,
}

/// The quads left to the ordinary writer, and the statements written in annotation form (`None`: no edge has a
/// reifier to write so).
pub(super) fn split(
    dict: &(impl TermSource + ?Sized),
    quads: &[Quad],
) -> Option<(Vec<Quad>, Vec<Statement>)> {
    // Where each term appears other than as a subject, and in which graphs it is a subject.
    let mut elsewhere: HashSet<TermId> = HashSet::new();
    let mut subject_graphs: HashMap<TermId, (TermId, bool)> = HashMap::new();
    let mut reified: HashMap<TermId, Vec<Triple>> = HashMap::new();
    for &[g, s, p, o] in quads {
        match subject_graphs.get_mut(&s) {
            Some((first, same)) => *same &= *first == g,
            None => {
                subject_graphs.insert(s, (g, true));
            }
        }
        elsewhere.insert(p);
        if g != TermId::DEFAULT_GRAPH {
            elsewhere.insert(g);
        }
        match dict.term(o) {
            TermRef::Triple(parts) if p == wk::RDF_REIFIES => {
                reified.entry(s).or_default().push(parts)
            }
            _ => {
                elsewhere.insert(o);
            }
        }
        // Every part of a triple term, at any depth, is elsewhere.
        let mut stack = vec![o];
        while let Some(id) = stack.pop() {
            if let TermRef::Triple(parts) = dict.term(id) {
                elsewhere.extend(parts);
                stack.extend(parts);
            }
        }
    }
    let present: HashSet<Quad> = quads.iter().copied().collect();
    // reifier(r, g, e) :- quad(g, r, rdf:reifies, <<e>>), one edge, only a subject, only in g, quad(g, e).
    let mut reifier_of: HashMap<TermId, (TermId, Triple)> = HashMap::new();
    for (&r, edges) in &reified {
        let [edge] = edges.as_slice() else { continue };
        let Some(&(g, true)) = subject_graphs.get(&r) else {
            continue;
        };
        if elsewhere.contains(&r) || !matches!(dict.term(r), TermRef::Iri(_) | TermRef::Blank(_)) {
            continue;
        }
        let [s, p, o] = *edge;
        if present.contains(&[g, s, p, o]) {
            reifier_of.insert(r, (g, *edge));
        }
    }
    if reifier_of.is_empty() {
        return None;
    }
    let mut by_edge: HashMap<Quad, usize> = HashMap::new();
    let mut statements: Vec<Statement> = Vec::new();
    let mut rest = Vec::with_capacity(quads.len());
    // Edges first, in output order, so each statement sits where its edge was.
    let mut reifiers_of_edge: HashMap<Quad, Vec<TermId>> = HashMap::new();
    for (&r, &(g, [s, p, o])) in &reifier_of {
        reifiers_of_edge.entry([g, s, p, o]).or_default().push(r);
    }
    for &q in quads {
        if let Some(rs) = reifiers_of_edge.get_mut(&q) {
            rs.sort_unstable_by(|a, b| super::rdf::cmp_terms(dict, *a, *b));
            by_edge.insert(q, statements.len());
            statements.push(Statement {
                graph: q[0],
                edge: [q[1], q[2], q[3]],
                reifiers: rs.iter().map(|&r| (r, Vec::new())).collect(),
            });
        }
    }
    for &q in quads {
        let [g, s, p, o] = q;
        if by_edge.contains_key(&q) {
            continue;
        }
        if let Some(&(rg, [es, ep, eo])) = reifier_of.get(&s) {
            let at = by_edge[&[rg, es, ep, eo]];
            if p != wk::RDF_REIFIES {
                let entry = statements[at]
                    .reifiers
                    .iter_mut()
                    .find(|(r, _)| *r == s)
                    .expect("the reifier of its edge");
                entry.1.push((p, o));
            }
            continue;
        }
        rest.push([g, s, p, o]);
    }
    Some((rest, statements))
}

/// Writes the statements: at the top level (the default graph, or Turtle), or in `g { … }` blocks for TriG.
/// `declare`: the ordinary writer wrote nothing, so the prefixes are declared here.
pub(super) fn write<W: Write>(
    mut out: W,
    dict: &(impl TermSource + ?Sized),
    prefixes: &[(String, String)],
    statements: &[Statement],
    with_graphs: bool,
    declare: bool,
) -> io::Result<W> {
    let mut open: Option<TermId> = None;
    let mut text = String::new();
    if declare {
        for (name, ns) in prefixes {
            text.push_str(&format!("@prefix {name}: <{ns}> .\n"));
        }
    }
    for st in statements {
        let graph = if with_graphs {
            st.graph
        } else {
            TermId::DEFAULT_GRAPH
        };
        if open != Some(graph) {
            if open.is_some_and(|g| g != TermId::DEFAULT_GRAPH) {
                text.push_str("}\n");
            }
            if graph != TermId::DEFAULT_GRAPH {
                term(&mut text, dict, prefixes, graph);
                text.push_str(" {\n");
            }
            open = Some(graph);
        }
        let indent = if graph == TermId::DEFAULT_GRAPH {
            ""
        } else {
            "\t"
        };
        text.push_str(indent);
        let [s, p, o] = st.edge;
        term(&mut text, dict, prefixes, s);
        text.push(' ');
        predicate(&mut text, dict, prefixes, p);
        text.push(' ');
        term(&mut text, dict, prefixes, o);
        for (r, props) in &st.reifiers {
            text.push_str(" ~ ");
            term(&mut text, dict, prefixes, *r);
            if !props.is_empty() {
                text.push_str(" {| ");
                for (i, (p, o)) in props.iter().enumerate() {
                    if i > 0 {
                        text.push_str(" ; ");
                    }
                    predicate(&mut text, dict, prefixes, *p);
                    text.push(' ');
                    term(&mut text, dict, prefixes, *o);
                }
                text.push_str(" |}");
            }
        }
        text.push_str(" .\n");
        if text.len() > 1 << 16 {
            out.write_all(text.as_bytes())?;
            text.clear();
        }
    }
    if open.is_some_and(|g| g != TermId::DEFAULT_GRAPH) {
        text.push_str("}\n");
    }
    out.write_all(text.as_bytes())?;
    Ok(out)
}

fn predicate(
    text: &mut String,
    dict: &(impl TermSource + ?Sized),
    prefixes: &[(String, String)],
    p: TermId,
) {
    if p == wk::RDF_TYPE {
        text.push('a');
    } else {
        term(text, dict, prefixes, p);
    }
}

/// A term in Turtle: an IRI as a prefixed name where the local part is plainly one, else in full; a triple term
/// part by part; a literal or blank node as N-Triples writes it (also Turtle).
fn term(
    text: &mut String,
    dict: &(impl TermSource + ?Sized),
    prefixes: &[(String, String)],
    id: TermId,
) {
    match dict.term(id) {
        TermRef::Iri(iri) => {
            let full = format!("{}{}", iri.ns, iri.local);
            let short = prefixes.iter().find_map(|(name, ns)| {
                let local = full.strip_prefix(ns.as_str())?;
                let plain = !local.is_empty()
                    && local
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
                    && !local.starts_with('-');
                plain.then(|| format!("{name}:{local}"))
            });
            match short {
                Some(s) => text.push_str(&s),
                None => {
                    text.push('<');
                    text.push_str(&full);
                    text.push('>');
                }
            }
        }
        TermRef::Triple([s, p, o]) => {
            text.push_str("<<( ");
            term(text, dict, prefixes, s);
            text.push(' ');
            term(text, dict, prefixes, p);
            text.push(' ');
            term(text, dict, prefixes, o);
            text.push_str(" )>>");
        }
        // As the other writers label them.
        TermRef::Blank(n) => {
            use std::fmt::Write as _;
            let _ = write!(text, "_:b{n}");
        }
        TermRef::Literal {
            lexical,
            kind: LiteralKind::Typed(dt),
        } if short_literal(dict, lexical, dt) => text.push_str(lexical),
        _ => {
            if let Some(t) = dict.to_oxrdf(id) {
                text.push_str(&t.to_string());
            }
        }
    }
}

/// Whether a typed literal reads back the same written bare, as Turtle allows for integers, decimals and
/// booleans in their plain forms.
fn short_literal(dict: &(impl TermSource + ?Sized), lexical: &str, dt: TermId) -> bool {
    let TermRef::Iri(iri) = dict.term(dt) else {
        return false;
    };
    let digits = |d: &str| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit());
    let unsigned = lexical.strip_prefix(['+', '-']).unwrap_or(lexical);
    match format!("{}{}", iri.ns, iri.local).as_str() {
        "http://www.w3.org/2001/XMLSchema#integer" => digits(unsigned),
        "http://www.w3.org/2001/XMLSchema#decimal" => unsigned
            .split_once('.')
            .is_some_and(|(i, f)| digits(i) && digits(f)),
        "http://www.w3.org/2001/XMLSchema#boolean" => lexical == "true" || lexical == "false",
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Dictionary;

    #[test]
    fn only_a_reifier_of_one_present_edge_that_appears_nowhere_else_is_written_in_annotation_form()
    {
        let mut d = Dictionary::new();
        let [a, p, b, q, r1, r2, c] = [
            "http://e/a",
            "http://e/p",
            "http://e/b",
            "http://e/q",
            "http://e/r1",
            "http://e/r2",
            "http://e/c",
        ]
        .map(|i| d.intern_iri(i));
        let g = TermId::DEFAULT_GRAPH;
        let edge = d.intern_triple([a, p, b]);
        let absent = d.intern_triple([a, q, b]);
        let quads = vec![
            [g, a, p, b],
            [g, r1, wk::RDF_REIFIES, edge],
            [g, r1, q, c],
            // r2 reifies an edge the output does not hold: written plainly.
            [g, r2, wk::RDF_REIFIES, absent],
        ];
        let (rest, statements) = split(&d, &quads).expect("r1 is written in annotation form");
        assert_eq!(rest, vec![[g, r2, wk::RDF_REIFIES, absent]]);
        assert_eq!(statements.len(), 1);
        let mut out = Vec::new();
        write(
            &mut out,
            &d,
            &[("e".into(), "http://e/".into())],
            &statements,
            false,
            true,
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "@prefix e: <http://e/> .\ne:a e:p e:b ~ e:r1 {| e:q e:c |} .\n"
        );
        // r1 also an object elsewhere: no annotation form at all.
        let mut more = quads.clone();
        more.push([g, c, q, r1]);
        assert!(split(&d, &more).is_none());
    }
}
