//! This module defines the annotation form of Turtle and TriG output: an edge written with its reifiers, `s p o ~ r {| … |}`.
//!
//! An edge of the output is written so when a reifier of the output, in the same graph, reifies it and nothing
//! else, and the reifier appears in no other position (not as an object, not in another graph, not inside a
//! triple term): its triples then go inside `{| … |}` (RDF 1.2 Turtle §2.10). Everything else is left to the
//! ordinary writer. The statements keep the output's order (the order of their edges).

use std::io::{self, Write};

use hashbrown::HashMap;

use crate::store::{LiteralKind, Quad, TermId, TermRef, TermSource, Triple, well_known as wk};

/// An edge with its reifiers and their other triples.
pub(super) struct Statement {
    graph: TermId,
    edge: Triple,
    reifiers: Vec<(TermId, Vec<(TermId, TermId)>)>,
}

/// The quads left to the ordinary writer, and the statements written in annotation form (`None`: no edge has a
/// reifier to write so). Three passes over the quads, with tables as large as the reifiers, not the output.
pub(super) fn split(
    dict: &(impl TermSource + ?Sized),
    quads: &[Quad],
) -> Option<(Vec<Quad>, Vec<Statement>)> {
    /// A reifier seen reifying: its graph, its edge, and whether it can be written in annotation form.
    struct Seen {
        graph: TermId,
        edge: Triple,
        fit: bool,
    }
    // reifies(r, g, e) :- quad(g, r, rdf:reifies, <<e>>).
    let mut seen: HashMap<TermId, Seen> = HashMap::new();
    for &[g, s, p, o] in quads {
        if p != wk::RDF_REIFIES {
            continue;
        }
        if let TermRef::Triple(edge) = dict.term(o) {
            match seen.get_mut(&s) {
                // A second edge, or a second graph: not one reifier of one edge.
                Some(r) => r.fit &= r.graph == g && r.edge == edge,
                None => {
                    let fit = matches!(dict.term(s), TermRef::Iri(_) | TermRef::Blank(_));
                    seen.insert(
                        s,
                        Seen {
                            graph: g,
                            edge,
                            fit,
                        },
                    );
                }
            }
        }
    }
    if seen.is_empty() {
        return None;
    }
    // A reifier anywhere but as a subject in its graph (a predicate, an object, a graph name, inside a triple
    // term) is written plainly.
    let unfit = |id: TermId, seen: &mut HashMap<TermId, Seen>| {
        if let Some(r) = seen.get_mut(&id) {
            r.fit = false;
        }
    };
    for &[g, s, p, o] in quads {
        if let Some(r) = seen.get_mut(&s)
            && r.graph != g
        {
            r.fit = false;
        }
        unfit(p, &mut seen);
        if g != TermId::DEFAULT_GRAPH {
            unfit(g, &mut seen);
        }
        let reifies = p == wk::RDF_REIFIES && matches!(dict.term(o), TermRef::Triple(_));
        if !reifies {
            unfit(o, &mut seen);
        }
        let mut stack = vec![o];
        while let Some(id) = stack.pop() {
            if let TermRef::Triple(parts) = dict.term(id) {
                for x in parts {
                    unfit(x, &mut seen);
                    stack.push(x);
                }
            }
        }
    }
    // The edges of fit reifiers, with whether the output holds them.
    let mut edges: HashMap<Quad, (Vec<TermId>, bool)> = HashMap::new();
    for (&r, seen) in &seen {
        if seen.fit {
            let [s, p, o] = seen.edge;
            edges.entry([seen.graph, s, p, o]).or_default().0.push(r);
        }
    }
    for q in quads {
        if let Some(e) = edges.get_mut(q) {
            e.1 = true;
        }
    }
    edges.retain(|_, (_, present)| *present);
    if edges.is_empty() {
        return None;
    }
    // Statements in the order of their edges; each reifier's other triples inside its annotation.
    let mut at: HashMap<Quad, usize> = HashMap::with_capacity(edges.len());
    let mut statements: Vec<Statement> = Vec::with_capacity(edges.len());
    for &q in quads {
        if let Some((rs, _)) = edges.get_mut(&q) {
            rs.sort_unstable_by(|a, b| super::rdf::cmp_terms(dict, *a, *b));
            at.insert(q, statements.len());
            statements.push(Statement {
                graph: q[0],
                edge: [q[1], q[2], q[3]],
                reifiers: rs.iter().map(|&r| (r, Vec::new())).collect(),
            });
        }
    }
    drop(edges);
    let mut rest = Vec::with_capacity(quads.len().saturating_sub(statements.len()));
    for &q in quads {
        let [g, s, p, o] = q;
        if at.contains_key(&q) {
            continue;
        }
        let written = seen.get(&s).filter(|r| r.fit).and_then(|r| {
            let [es, ep, eo] = r.edge;
            at.get(&[r.graph, es, ep, eo]).copied()
        });
        if let Some(i) = written {
            if p != wk::RDF_REIFIES {
                let entry = statements[i]
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
pub(super) fn term(
    text: &mut String,
    dict: &(impl TermSource + ?Sized),
    prefixes: &[(String, String)],
    id: TermId,
) {
    match dict.term(id) {
        TermRef::Iri(iri) => {
            // An IRI read with --lenient may hold characters IRIREF does not allow: escaped.
            let mut full = String::new();
            if dict.has_raw_iris() {
                iri.write_escaped(&mut full);
            } else {
                iri.write_to(&mut full);
            }
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
        } if matches!(dict.term(dt), TermRef::Iri(i)
            if super::rdf::bare_literal(lexical, &format!("{}{}", i.ns, i.local))) =>
        {
            text.push_str(lexical)
        }
        _ => {
            if let Some(t) = dict.to_oxrdf(id) {
                // An IRI read with --lenient may hold characters IRIREF does not allow: escaped.
                let t = if dict.has_raw_iris() {
                    super::rdf::escaped_iris(t)
                } else {
                    t
                };
                text.push_str(&t.to_string());
            }
        }
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
