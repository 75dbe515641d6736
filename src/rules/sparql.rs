//! This module defines SPARQL rules: `CONSTRUCT { heads } WHERE { body }` parsed by spargebra, validated, and
//! lowered to the query algebra. `GRAPH <g> { … }` in the template is not SPARQL 1.1 grammar, so such a rule is
//! parsed a second time as the equivalent `INSERT { … } WHERE { … }` update, whose template holds quads.

pub mod scan;

use spargebra::algebra::GraphPattern;
use spargebra::term::{GraphNamePattern, NamedNodePattern, TermPattern};
use spargebra::{GraphUpdateOperation, Query, SparqlParser};

use crate::ir::lower::{self, TemplateTerm};
use crate::ir::{VarId, VarSet};
use crate::store::Dictionary;

use super::RuleError;
use super::model::{Head, Language, Origin, Rule};
use super::reifier::Minted;
use super::validate::{self, TemplateTriple};

/// A parsed rule: its body and its template quads (`None` graph: the default graph).
struct Parsed {
    body: GraphPattern,
    /// The body is wrapped in the projection of every variable CONSTRUCT adds (an INSERT's body is not).
    projected: bool,
    template: Vec<(TermPattern, NamedNodePattern, TermPattern, GraphNamePattern)>,
    /// The query names its own dataset (FROM / FROM NAMED).
    dataset: bool,
}

/// A rule whose brackets nest too deep: spargebra's parser recurses once per bracket.
pub fn brackets_too_deep(id: &str, at: usize) -> RuleError {
    RuleError::TooDeep {
        rule: id.to_owned(),
        what: "brackets ( { [ <<",
        limit: scan::MAX_NESTING,
        at: Some(at),
        help: "write it flatter: join patterns inside one group instead of nesting groups, and nest expressions and triple terms less; generated rules should be generated flat",
    }
}

/// A rule with a sequence path (or a division) of more steps than spargebra's parser can recurse through.
pub fn steps_too_many(id: &str, at: usize) -> RuleError {
    RuleError::TooLarge {
        rule: id.to_owned(),
        what: "steps in one sequence path (each `/` in one triple pattern is a step)",
        limit: scan::MAX_STEPS,
        at: Some(at),
        help: "the parser recurses once per step: split the path into triple patterns through intermediate variables, or into several rules",
    }
}

/// A rule with more distinct variables than spargebra's parser collects in reasonable time.
pub fn variables_too_many(id: &str, at: usize) -> RuleError {
    RuleError::TooLarge {
        rule: id.to_owned(),
        what: "distinct variables",
        limit: scan::MAX_VARIABLES,
        at: Some(at),
        help: "the parser's time grows with the square of the variables: split the rule into several, joined through facts they derive",
    }
}

/// A rule whose parsed operators nest too deep.
pub fn operators_too_deep(id: &str) -> RuleError {
    RuleError::TooDeep {
        rule: id.to_owned(),
        what: "operators (each `||`, `&&`, `+` of a chain, each `!` or sign before an operand, and each `|` of a path is one level)",
        limit: scan::MAX_DEPTH,
        at: None,
        help: "write long alternatives as ?x IN (a, b, …), long sums as several BINDs, long paths as triple patterns through intermediate variables, and `!!…!x` as `x` or `!x` (chains of && and || of any length are fine)",
    }
}

fn parse(id: &str, text: &str) -> Result<Parsed, RuleError> {
    match scan::too_deep(text) {
        Some((at, scan::Deep::Brackets)) => return Err(brackets_too_deep(id, at)),
        Some((at, scan::Deep::Steps)) => return Err(steps_too_many(id, at)),
        Some((at, scan::Deep::Variables)) => return Err(variables_too_many(id, at)),
        None => {}
    }
    // Names with characters past U+FFFF are rewritten for the parser; its errors are reported on the text as
    // written.
    if let Some(at) = scan::literal_triple_term_subject(text) {
        let (line, col) = crate::excerpt::line_col(text, at);
        return Err(RuleError::Syntax {
            rule: id.to_owned(),
            message: format!(
                "error at {line}:{col}: a triple term's subject must be an IRI, a blank node or a variable"
            ),
        });
    }
    let widened = scan::widen_names(text);
    let parsed = parse_text(id, widened.as_deref().unwrap_or(text));
    let parsed = match (parsed, &widened) {
        (Err(RuleError::Syntax { .. }), Some(_)) => parse_text(id, text),
        (other, _) => other,
    }?;
    let mut parsed = parsed;
    scan::rebalance(&mut parsed.body);
    let deep = scan::pattern_too_deep(&parsed.body)
        || parsed
            .template
            .iter()
            .any(|(s, _, o, _)| scan::term_too_deep(s) || scan::term_too_deep(o));
    if deep {
        scan::forget_deep(parsed);
        return Err(operators_too_deep(id));
    }
    Ok(parsed)
}

fn parse_text(id: &str, text: &str) -> Result<Parsed, RuleError> {
    let first = match SparqlParser::new().parse_query(text) {
        Ok(Query::Construct {
            template,
            pattern,
            dataset,
            ..
        }) => {
            return Ok(Parsed {
                body: pattern,
                projected: true,
                dataset: dataset.is_some(),
                template: template
                    .into_iter()
                    .map(|t| {
                        (
                            t.subject,
                            t.predicate,
                            t.object,
                            GraphNamePattern::DefaultGraph,
                        )
                    })
                    .collect(),
            });
        }
        Ok(q) => {
            return Err(RuleError::NotConstruct {
                rule: id.to_owned(),
                form: match q {
                    Query::Select { .. } => "SELECT",
                    Query::Ask { .. } => "ASK",
                    _ => "DESCRIBE",
                },
            });
        }
        Err(e) => e.to_string(),
    };
    // A named-graph head: the same text as an INSERT update (with FROM as USING, to be refused as FROM).
    let rewritten = replace_keyword(text, "construct", "INSERT", false)
        .map(|t| replace_keyword(&t, "from", "USING", true).unwrap_or(t));
    if let Some(rewritten) = rewritten {
        if let Ok(update) = SparqlParser::new().parse_update(&rewritten) {
            if let [
                GraphUpdateOperation::DeleteInsert {
                    delete,
                    insert,
                    pattern,
                    using,
                },
            ] = update.operations.as_slice()
            {
                if delete.is_empty() {
                    return Ok(Parsed {
                        body: (**pattern).clone(),
                        projected: false,
                        dataset: using.is_some(),
                        template: insert
                            .iter()
                            .map(|q| {
                                (
                                    q.subject.clone(),
                                    q.predicate.clone(),
                                    q.object.clone(),
                                    q.graph_name.clone(),
                                )
                            })
                            .collect(),
                    });
                }
            }
        }
    }
    // spargebra rejects a CONSTRUCT with a top-level GROUP BY as a syntax error: say what it is.
    if top_level_group_by(text) {
        return Err(RuleError::Rejected {
            rule: id.to_owned(),
            construct: "GROUP BY at the top of a body",
            part: "body",
            why: "a CONSTRUCT template cannot read aggregates of its own WHERE",
            help: "aggregate in a subquery: { SELECT ?x (COUNT(?y) AS ?n) WHERE { … } GROUP BY ?x }",
        });
    }
    Err(RuleError::Syntax {
        rule: id.to_owned(),
        message: first,
    })
}

/// Whether `GROUP BY` follows the last `}` of the text (comments aside): a top-level GROUP BY.
fn top_level_group_by(text: &str) -> bool {
    static GROUP_BY: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"(?i)\bGROUP\s+BY\b").expect("regex"));
    let Some(last) = text.rfind('}') else {
        return false;
    };
    let tail: String = text[last..]
        .lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    GROUP_BY.is_match(&tail)
}

/// The text with its first `keyword` (every one, with `every`), outside comments, IRIs and strings and not part
/// of a name (`ex:from`, `?from`, `from:x`), replaced by `by`, case aside; `None` when it has none.
fn replace_keyword(text: &str, keyword: &str, by: &str, every: bool) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'<' => {
                while i < bytes.len() && bytes[i] != b'>' && !bytes[i].is_ascii_whitespace() {
                    i += 1;
                }
            }
            q @ (b'"' | b'\'') => {
                i += 1;
                while i < bytes.len() && bytes[i] != q {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            _ => {
                let Some(word) = text.get(i..i + keyword.len()) else {
                    break;
                };
                let word_char = |b: Option<&u8>| {
                    b.is_some_and(|b| b.is_ascii_alphanumeric() || b"_:?$-.".contains(b))
                };
                let boundary = (i == 0 || !word_char(bytes.get(i - 1)))
                    && !word_char(bytes.get(i + keyword.len()));
                if boundary && word.eq_ignore_ascii_case(keyword) {
                    out.push_str(&text[copied..i]);
                    out.push_str(by);
                    i += keyword.len();
                    copied = i;
                    if !every {
                        break;
                    }
                    continue;
                }
            }
        }
        i += 1;
    }
    (copied > 0).then(|| {
        out.push_str(&text[copied..]);
        out
    })
}

/// Parses, validates and lowers a SPARQL rule; every problem found is returned.
pub fn compile(
    id: &str,
    origin: Origin,
    text: &str,
    dict: &mut Dictionary,
) -> Result<Rule, Vec<RuleError>> {
    let parsed = parse(id, text).map_err(|e| vec![e])?;
    let mut errors = Vec::new();
    let triples: Vec<TemplateTriple<'_>> = parsed
        .template
        .iter()
        .map(|(s, p, o, _)| TemplateTriple {
            subject: s,
            predicate: p,
            object: o,
        })
        .collect();
    errors.extend(validate::heads(id, &triples));
    if parsed.dataset {
        errors.push(RuleError::Rejected {
            rule: id.to_owned(),
            construct: "FROM / FROM NAMED",
            part: "body",
            why: "a rule reads the loaded data's own graphs (its default graph, and a named graph through GRAPH)",
            help: "drop FROM; wrap the patterns that read a named graph in GRAPH <http://example.org/g> { … }",
        });
    }
    if parsed
        .template
        .iter()
        .any(|(_, _, _, g)| matches!(g, GraphNamePattern::Variable(_)))
    {
        errors.push(RuleError::Rejected {
            rule: id.to_owned(),
            construct: "a variable graph name in a head",
            part: "head",
            why: "the graph a fact goes to must be known before the run, to resolve it against the data",
            help: "name the graph: GRAPH <http://example.org/g> { … }",
        });
    }
    let (body, vars, scope) = match lower::lower_pattern(&parsed.body, dict) {
        // CONSTRUCT projects every variable of its body; without that projection the body's triple patterns are
        // top-level operands, which semi-naive seeding needs.
        Ok((crate::ir::Op::Project { input, .. }, vars, scope)) if parsed.projected => {
            (*input, vars, scope)
        }
        Ok(l) => l,
        Err(lower::LowerError::Service) => {
            errors.push(validate::service(id));
            return Err(errors);
        }
        Err(source) => {
            errors.push(RuleError::Lower {
                rule: id.to_owned(),
                source,
            });
            return Err(errors);
        }
    };
    errors.splice(0..0, validate::body(id, &body));
    if !errors.is_empty() {
        return Err(errors);
    }
    // Range restriction: every head variable is bound somewhere in the body (a FILTER does not bind).
    let bound: VarSet = body.term_vars();
    let mut heads = Vec::new();
    let mut unbound: Vec<String> = Vec::new();
    let mut head_vars: Vec<String> = Vec::new();
    let mut var = |name: &str| -> Option<VarId> {
        if !head_vars.iter().any(|h| h == name) {
            head_vars.push(name.to_owned());
        }
        match scope.get(name) {
            Some(v) if bound.contains(*v) => Some(*v),
            _ => {
                if !unbound.iter().any(|u| u == name) {
                    unbound.push(name.to_owned());
                }
                None
            }
        }
    };
    // The reifiers of annotations (validated above: one edge each, no blank node in it), minted per rule, graph
    // and edge.
    // A nested annotation's edge holds the outer reifier: minted in rounds, each reifier once the reifiers its
    // edge holds are.
    let mut minted: Vec<(String, TemplateTerm)> = Vec::new();
    loop {
        let before = minted.len();
        for (s, p, o, g) in &parsed.template {
            if let (
                TermPattern::BlankNode(b),
                NamedNodePattern::NamedNode(p),
                TermPattern::Triple(_),
            ) = (s, p, o)
                && p.as_str() == "http://www.w3.org/1999/02/22-rdf-syntax-ns#reifies"
                && !minted.iter().any(|(label, _)| label == b.as_str())
                && let Some(TemplateTerm::Triple(edge)) = template_term(o, dict, &minted, &mut var)
            {
                let graph = match g {
                    GraphNamePattern::NamedNode(n) => Some(n.as_str()),
                    _ => None,
                };
                let reifier = Minted::new(id, graph, *edge);
                minted.push((
                    b.as_str().to_owned(),
                    TemplateTerm::Reifier(Box::new(reifier)),
                ));
            }
        }
        if minted.len() == before {
            break;
        }
    }
    for (s, p, o, g) in &parsed.template {
        let terms = [
            template_term(s, dict, &minted, &mut var),
            match p {
                NamedNodePattern::NamedNode(n) => {
                    Some(TemplateTerm::Const(dict.intern_iri(n.as_str())))
                }
                NamedNodePattern::Variable(v) => var(v.as_str()).map(TemplateTerm::Var),
            },
            template_term(o, dict, &minted, &mut var),
        ];
        let graph = match g {
            GraphNamePattern::NamedNode(n) => Some(dict.intern_iri(n.as_str())),
            _ => None,
        };
        if let [Some(s), Some(p), Some(o)] = terms {
            heads.push(Head {
                terms: [s, p, o],
                graph,
            });
        }
    }
    // A head variable bound only inside a NOT EXISTS is reported as the negation problem it is.
    let mut errors = validate::negation(id, &body, &head_vars, &vars);
    unbound.retain(|u| {
        !errors
            .iter()
            .any(|e| matches!(e, RuleError::UnsafeNegation { var, .. } if var == u))
    });
    if !unbound.is_empty() {
        errors.push(RuleError::UnboundHeadVar {
            rule: id.to_owned(),
            vars: unbound,
        });
    }
    errors.extend(validate::literal_subjects(id, &body, &heads, &vars, dict));
    errors.extend(validate::constant_heads(id, &heads, dict));
    errors.extend(validate::invalid_regexes(id, &body, dict));
    errors.extend(validate::invalid_head_literals(id, &heads, dict));
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(Rule {
        id: id.to_owned(),
        origin,
        language: Language::Sparql,
        text: text.to_owned(),
        body,
        vars,
        heads,
    })
}

/// A head term; `minted` names the blank nodes that are minted reifiers (any other blank node is rejected by
/// validation before lowering).
fn template_term(
    t: &TermPattern,
    dict: &mut Dictionary,
    minted: &[(String, TemplateTerm)],
    var: &mut impl FnMut(&str) -> Option<VarId>,
) -> Option<TemplateTerm> {
    Some(match t {
        TermPattern::NamedNode(n) => TemplateTerm::Const(dict.intern_iri(n.as_str())),
        TermPattern::Literal(l) => TemplateTerm::Const(dict.intern_oxrdf_literal(l.as_ref())),
        TermPattern::Variable(v) => TemplateTerm::Var(var(v.as_str())?),
        TermPattern::BlankNode(b) => minted
            .iter()
            .find(|(label, _)| label == b.as_str())
            .map(|(_, r)| r.clone())?,
        TermPattern::Triple(t) => {
            let s = template_term(&t.subject, dict, minted, var)?;
            let p = match &t.predicate {
                NamedNodePattern::NamedNode(n) => TemplateTerm::Const(dict.intern_iri(n.as_str())),
                NamedNodePattern::Variable(v) => TemplateTerm::Var(var(v.as_str())?),
            };
            let o = template_term(&t.object, dict, minted, var)?;
            TemplateTerm::Triple(Box::new([s, p, o]))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compile_text(text: &str) -> Result<Rule, Vec<RuleError>> {
        let mut dict = Dictionary::new();
        compile(
            "r",
            Origin::File {
                path: "r.rq".into(),
                offset: 0,
                prologue: 0,
            },
            text,
            &mut dict,
        )
    }

    #[test]
    fn a_construct_rule_has_its_template_triples_as_heads() {
        let rule = compile_text(
            "PREFIX ex: <http://e/> CONSTRUCT { ?a ex:q ?b . ?b ex:q ?a } WHERE { ?a ex:p ?b }",
        )
        .unwrap();
        assert_eq!(rule.heads.len(), 2);
        assert!(rule.heads.iter().all(|h| h.graph.is_none()));
    }

    #[test]
    fn a_graph_block_in_the_template_gives_named_graph_heads() {
        let rule = compile_text(
            "PREFIX ex: <http://e/> CONSTRUCT { GRAPH ex:g { ?a ex:q ?b } } WHERE { ?a ex:p ?b }",
        )
        .unwrap();
        assert_eq!(rule.heads.len(), 1);
        assert!(rule.heads[0].graph.is_some());
    }

    #[test]
    fn rejected_constructs_are_all_reported() {
        let errors = compile_text(
            "PREFIX ex: <http://e/> CONSTRUCT { ?a ex:q ?b } WHERE { ?a ex:p ?b OPTIONAL { ?a ex:r ?c } MINUS { ?a ex:s ?b } }",
        )
        .unwrap_err();
        let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert!(text.iter().any(|t| t.contains("OPTIONAL")), "{text:?}");
        assert!(text.iter().any(|t| t.contains("MINUS")), "{text:?}");
    }

    #[test]
    fn a_head_variable_only_filtered_is_unbound() {
        let errors = compile_text(
            "PREFIX ex: <http://e/> CONSTRUCT { ?a ex:q ?c } WHERE { ?a ex:p ?b FILTER(?c = 1) }",
        )
        .unwrap_err();
        assert!(
            matches!(&errors[0], RuleError::UnboundHeadVar { vars, .. } if vars == &["c"]),
            "{errors:?}"
        );
    }

    #[test]
    fn a_named_graph_head_over_a_subquery_keeps_the_subquery_below_the_top() {
        // The INSERT re-parse has no CONSTRUCT projection: the subquery's own projection must stay.
        let rule = compile_text(
            "PREFIX ex: <http://e/> CONSTRUCT { GRAPH ex:g { ?a ex:n ?n } } WHERE { { SELECT ?a (COUNT(?b) AS ?n) WHERE { ?a ex:p ?b } GROUP BY ?a } }",
        )
        .unwrap();
        assert!(
            matches!(rule.body, crate::ir::Op::Project { .. }),
            "{:?}",
            rule.body
        );
    }

    #[test]
    fn a_variable_shared_with_a_negation_must_be_bound_outside_it() {
        // ?x reaches the head but only the NOT EXISTS binds it.
        let errors = compile_text(
            "PREFIX ex: <http://e/> CONSTRUCT { ?x a ex:Orphan } WHERE { ?y a ex:P FILTER NOT EXISTS { ?x ex:knows ?y } }",
        )
        .unwrap_err();
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(
            matches!(&errors[0], RuleError::UnsafeNegation { var, .. } if var == "x"),
            "{errors:?}"
        );
        // ?z is shared with a filter of the group, bound by nothing positive.
        let errors = compile_text(
            "PREFIX ex: <http://e/> CONSTRUCT { ?y a ex:Q } WHERE { ?y a ex:P FILTER NOT EXISTS { ?y ex:knows ?z } FILTER(?z != ex:a) }",
        )
        .unwrap_err();
        assert!(
            matches!(&errors[0], RuleError::UnsafeNegation { var, .. } if var == "z"),
            "{errors:?}"
        );
        // Local to the negation, or bound outside it: fine (also through a nested negation).
        compile_text(
            "PREFIX ex: <http://e/> CONSTRUCT { ?y a ex:Q } WHERE { ?y a ex:P FILTER NOT EXISTS { ?y ex:knows ?z FILTER NOT EXISTS { ?z a ex:P } } }",
        )
        .unwrap();
    }

    #[test]
    fn annotated_heads_mint_their_reifier_and_other_blank_nodes_in_heads_are_rejected() {
        let rule = compile_text(
            "PREFIX ex: <http://e/> CONSTRUCT { ?a ex:q ?b {| ex:c 1 |} } WHERE { ?a ex:p ?b }",
        )
        .unwrap();
        // The edge, `r rdf:reifies <<( a q b )>>` and `r ex:c 1`, r minted for the edge.
        assert_eq!(rule.heads.len(), 3, "{:?}", rule.heads);
        let edge = rule
            .heads
            .iter()
            .find(|h| matches!(h.terms[0], TemplateTerm::Var(_)))
            .map(|h| h.terms.clone())
            .unwrap();
        let minted = rule
            .heads
            .iter()
            .filter(|h| matches!(&h.terms[0], TemplateTerm::Reifier(m) if m.edge == edge))
            .count();
        assert_eq!(minted, 2, "{:?}", rule.heads);
        // A nested annotation: the inner edge holds the outer reifier, minted first.
        let nested = compile_text(
            "PREFIX ex: <http://e/> CONSTRUCT { ?a ex:q ?b {| ex:c ?b {| ex:d 2 |} |} } WHERE { ?a ex:p ?b }",
        )
        .unwrap();
        assert!(nested.heads.iter().any(|h| matches!(&h.terms[0],
            TemplateTerm::Reifier(m) if matches!(m.edge[0], TemplateTerm::Reifier(_)))));
        // A reifier inside its own edge cannot be minted.
        let errors = compile_text(
            "PREFIX ex: <http://e/> PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> CONSTRUCT { _:r rdf:reifies <<( _:r ex:q ?b )>> } WHERE { ?a ex:p ?b }",
        )
        .unwrap_err();
        assert!(
            matches!(&errors[0], RuleError::HeadAnnotation { construct, .. } if construct.contains("inside")),
            "{errors:?}"
        );
        let errors = compile_text(
            "PREFIX ex: <http://e/> PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> CONSTRUCT { _:r rdf:reifies <<( ?a ex:q ?b )>>, <<( ?b ex:q ?a )>> } WHERE { ?a ex:p ?b }",
        )
        .unwrap_err();
        assert!(
            matches!(errors[0], RuleError::HeadAnnotation { .. }),
            "{errors:?}"
        );
        let errors =
            compile_text("PREFIX ex: <http://e/> CONSTRUCT { ?a ex:q [] } WHERE { ?a ex:p ?b }")
                .unwrap_err();
        assert!(
            matches!(errors[0], RuleError::HeadBlankNode { .. }),
            "{errors:?}"
        );
    }

    #[test]
    fn the_construct_keyword_is_found_outside_iris_strings_and_comments() {
        let text =
            "# CONSTRUCT in a comment\nPREFIX c: <http://e/construct/> CONSTRUCT { } WHERE { }";
        let rewritten = replace_keyword(text, "construct", "INSERT", false).unwrap();
        assert!(rewritten.contains("INSERT { }"));
        assert!(rewritten.contains("<http://e/construct/>"));
    }

    #[test]
    fn from_is_refused_with_a_named_graph_head_too_and_names_called_from_are_not_from() {
        let errors = compile_text(
            "PREFIX ex: <http://e/> CONSTRUCT { GRAPH ex:g { ?a ex:q ?b } } FROM ex:d WHERE { ?a ex:p ?b }",
        )
        .unwrap_err();
        assert!(
            matches!(
                errors[0],
                RuleError::Rejected {
                    construct: "FROM / FROM NAMED",
                    part: "body",
                    ..
                }
            ),
            "{errors:?}"
        );
        let text = "PREFIX from: <http://e/> CONSTRUCT { GRAPH from:g { ?from from:q ?b } } WHERE { ?from from:from ?b }";
        assert_eq!(replace_keyword(text, "from", "USING", true), None);
        assert!(compile_text(text).is_ok());
    }
}
