//! This module defines the checks every rule passes before it runs: constructs a body may not use, and the
//! head checks (blank nodes, annotations). `materialize`, `query --rules` and `lint` all call these.

use spargebra::algebra::{Expression, GraphPattern};
use spargebra::term::{NamedNodePattern, TermPattern};

use super::RuleError;

/// A head triple as the template wrote it (the graph aside).
pub struct TemplateTriple<'a> {
    /// Subject.
    pub subject: &'a TermPattern,
    /// Predicate.
    pub predicate: &'a NamedNodePattern,
    /// Object.
    pub object: &'a TermPattern,
}

/// Every construct of `body` that rules reject (OPTIONAL, MINUS, SERVICE, top-level GROUP BY, LIMIT/OFFSET).
pub fn body(rule: &str, body: &GraphPattern) -> Vec<RuleError> {
    let mut out = Vec::new();
    walk(rule, body, true, &mut out);
    out
}

fn reject(rule: &str, construct: &'static str, help: &'static str) -> RuleError {
    RuleError::Rejected {
        rule: rule.to_owned(),
        construct,
        help,
    }
}

fn walk(rule: &str, p: &GraphPattern, top: bool, out: &mut Vec<RuleError>) {
    match p {
        GraphPattern::LeftJoin {
            left,
            right,
            expression,
        } => {
            out.push(reject(
                rule,
                "OPTIONAL",
                "a rule derives only from what every match binds: write one rule without the OPTIONAL part and one that requires it",
            ));
            walk(rule, left, top, out);
            walk(rule, right, false, out);
            if let Some(e) = expression {
                walk_expr(rule, e, out);
            }
        }
        GraphPattern::Minus { left, right } => {
            out.push(reject(
                rule,
                "MINUS",
                "use FILTER NOT EXISTS { … }, the supported negation",
            ));
            walk(rule, left, top, out);
            walk(rule, right, false, out);
        }
        GraphPattern::Service { .. } => {
            out.push(reject(
                rule,
                "SERVICE",
                "load the remote data and reason over it locally",
            ));
        }
        GraphPattern::Group { inner, .. } => {
            if top {
                out.push(reject(
                    rule,
                    "GROUP BY at the top of a body",
                    "aggregate in a subquery: { SELECT ?x (COUNT(?y) AS ?n) WHERE { … } GROUP BY ?x }",
                ));
            }
            walk(rule, inner, false, out);
        }
        GraphPattern::Slice { inner, .. } => {
            out.push(reject(
                rule,
                "LIMIT / OFFSET",
                "remove it: a rule derives from every match of its body",
            ));
            walk(rule, inner, top, out);
        }
        GraphPattern::Project { inner, .. } => walk(rule, inner, false, out),
        GraphPattern::Join { left, right } | GraphPattern::Union { left, right } => {
            walk(rule, left, top, out);
            walk(rule, right, top, out);
        }
        GraphPattern::Filter { expr, inner } => {
            walk_expr(rule, expr, out);
            walk(rule, inner, top, out);
        }
        GraphPattern::Extend {
            inner, expression, ..
        } => {
            walk_expr(rule, expression, out);
            walk(rule, inner, top, out);
        }
        GraphPattern::Graph { inner, .. }
        | GraphPattern::Distinct { inner }
        | GraphPattern::Reduced { inner }
        | GraphPattern::OrderBy { inner, .. } => walk(rule, inner, top, out),
        GraphPattern::Bgp { .. } | GraphPattern::Path { .. } | GraphPattern::Values { .. } => {}
    }
}

fn walk_expr(rule: &str, e: &Expression, out: &mut Vec<RuleError>) {
    match e {
        Expression::Exists(p) => walk(rule, p, false, out),
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
        | Expression::Divide(a, b) => {
            walk_expr(rule, a, out);
            walk_expr(rule, b, out);
        }
        Expression::UnaryPlus(a) | Expression::UnaryMinus(a) | Expression::Not(a) => {
            walk_expr(rule, a, out)
        }
        Expression::In(a, list) => {
            walk_expr(rule, a, out);
            list.iter().for_each(|x| walk_expr(rule, x, out));
        }
        Expression::If(a, b, c) => {
            walk_expr(rule, a, out);
            walk_expr(rule, b, out);
            walk_expr(rule, c, out);
        }
        Expression::Coalesce(list) | Expression::FunctionCall(_, list) => {
            list.iter().for_each(|x| walk_expr(rule, x, out))
        }
        Expression::NamedNode(_)
        | Expression::Literal(_)
        | Expression::Variable(_)
        | Expression::Bound(_) => {}
    }
}

/// Blank nodes in heads: an annotation (a blank reifier with `rdf:reifies`, or a triple term annotated) is
/// reported as such, any other blank node as a blank node. At most one error per kind.
pub fn heads(rule: &str, heads: &[TemplateTriple<'_>]) -> Vec<RuleError> {
    let mut out = Vec::new();
    let reifies = "http://www.w3.org/1999/02/22-rdf-syntax-ns#reifies";
    let annotation = heads.iter().any(|h| {
        matches!(h.subject, TermPattern::BlankNode(_))
            && matches!(h.predicate, NamedNodePattern::NamedNode(p) if p.as_str() == reifies)
    });
    if annotation {
        out.push(RuleError::HeadAnnotation {
            rule: rule.to_owned(),
        });
        return out;
    }
    fn has_blank(t: &TermPattern) -> bool {
        match t {
            TermPattern::BlankNode(_) => true,
            TermPattern::Triple(t) => has_blank(&t.subject) || has_blank(&t.object),
            _ => false,
        }
    }
    if heads
        .iter()
        .any(|h| has_blank(h.subject) || has_blank(h.object))
    {
        out.push(RuleError::HeadBlankNode {
            rule: rule.to_owned(),
        });
    }
    out
}
