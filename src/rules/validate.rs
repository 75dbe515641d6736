//! This module defines the checks every rule passes before it runs: constructs a body may not use, and the
//! head checks (blank nodes, annotations). `materialize`, `query --rules` and `lint` all call these.

use spargebra::term::{NamedNodePattern, TermPattern};

use crate::ir::{Expr, Op};

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

/// Every construct of a lowered body that rules reject: OPTIONAL, MINUS, LIMIT/OFFSET anywhere, GROUP BY at the top
/// (aggregates belong in a subquery). SERVICE never lowers (see [`crate::ir::lower::LowerError::Service`]).
pub fn body(rule: &str, body: &Op) -> Vec<RuleError> {
    let mut out = Vec::new();
    walk(rule, body, true, &mut out);
    out
}

/// The rejection of SERVICE, which lowering reports.
pub fn service(rule: &str) -> RuleError {
    reject(
        rule,
        "SERVICE",
        "load the remote data and reason over it locally",
    )
}

fn reject(rule: &str, construct: &'static str, help: &'static str) -> RuleError {
    RuleError::Rejected {
        rule: rule.to_owned(),
        construct,
        help,
    }
}

fn walk(rule: &str, op: &Op, top: bool, out: &mut Vec<RuleError>) {
    match op {
        Op::LeftJoin { .. } => out.push(reject(
            rule,
            "OPTIONAL",
            "a rule derives only from what every match binds: write one rule without the optional part and one that requires it",
        )),
        Op::Minus { .. } => out.push(reject(rule, "MINUS", "use FILTER NOT EXISTS { … } (JSON-LD: [\"not-exists\", …]), the supported negation")),
        Op::Slice { .. } => out.push(reject(rule, "LIMIT / OFFSET", "remove it: a rule derives from every match of its body")),
        Op::Group { .. } if top => out.push(reject(
            rule,
            "GROUP BY at the top of a body",
            "aggregate in a subquery: { SELECT ?x (COUNT(?y) AS ?n) WHERE { … } GROUP BY ?x }",
        )),
        _ => {}
    }
    let below_top = top && !matches!(op, Op::Project { .. });
    for child in op.children() {
        walk(rule, child, below_top, out);
    }
    let exprs: Vec<&Expr> = match op {
        Op::Filter { expr, .. } | Op::Extend { expr, .. } => vec![expr],
        Op::LeftJoin {
            filter: Some(f), ..
        } => vec![f],
        _ => Vec::new(),
    };
    for e in exprs {
        e.visit(&mut |sub| {
            if let Expr::Exists(inner) = sub {
                walk(rule, inner, false, out);
            }
        });
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
            construct: "an annotation ({| … |} or a ~ reifier)".to_owned(),
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
