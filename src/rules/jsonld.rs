//! This module defines JSON-LD rules: `{"@context", "@id"?, "where", "insert"}`, the `where` clause lowered by
//! [`pattern`] to the same query algebra SPARQL bodies use, the `insert` heads built by [`head`].

pub mod context;
pub mod head;
pub mod number;
pub mod pattern;
pub mod sexpr;
mod strict;

use serde_json::Value;

use crate::store::Dictionary;

use super::model::{Language, Origin, Rule};
use super::{RuleError, validate};
use context::{Context, ExpandError};
use head::{HeadBuilder, HeadError};
use pattern::{Lowerer, WhereError};

/// How deep serde_json lets arrays and objects nest (its default recursion limit).
const JSON_NESTING: usize = 128;

/// Parses, validates and lowers a JSON-LD rule; every problem found is returned.
pub fn compile(
    id: &str,
    origin: Origin,
    text: &str,
    dict: &mut Dictionary,
) -> Result<Rule, Vec<RuleError>> {
    let rule = id.to_owned();
    let value: Value = strict::parse(text).map_err(|e| {
        if e.to_string().starts_with("recursion limit exceeded") {
            return vec![RuleError::TooDeep {
                rule: rule.clone(),
                what: "JSON arrays and objects",
                limit: JSON_NESTING,
                at: Some(crate::excerpt::offset_of(text, e.line(), e.column())),
                help: "nest the rule's where and insert less: list patterns side by side instead of inside each other",
            }];
        }
        vec![RuleError::JsonSyntax {
            rule: rule.clone(),
            message: e
                .to_string()
                .split(" at line")
                .next()
                .unwrap_or_default()
                .to_owned(),
            line: e.line(),
            column: e.column(),
        }]
    })?;
    let Value::Object(map) = &value else {
        return Err(vec![RuleError::JsonLdShape {
            rule,
            message: format!("a JSON-LD rule is an object, found {value}"),
        }]);
    };
    let mut errors = Vec::new();
    // A key a rule object gives no meaning would be ignored (a `values` restriction dropped, a `limit` not
    // applied): every key is accounted for.
    for key in map.keys() {
        match key.as_str() {
            "@context" | "context" | "@type" | "where" | "insert" => {}
            // The rule's id: a string, or the id would silently fall back to the file's name.
            "@id" if map["@id"].is_string() => {}
            "@id" => errors.push(RuleError::JsonLdShape {
                rule: rule.clone(),
                message: format!(
                    "a rule's \"@id\" is a string (its id), found {}",
                    map["@id"]
                ),
            }),
            "groupBy" | "having" => errors.push(RuleError::Rejected {
                rule: rule.clone(),
                construct: "GROUP BY at the top of a body",
                part: "body",
                why: "a rule's insert cannot read aggregates of its own where",
                help: "aggregate in a subquery: [\"query\", {\"select\": [\"?x\", \"(as (count ?y) ?n)\"], \"where\": …, \"groupBy\": [\"?x\"]}]",
            }),
            "limit" | "offset" => errors.push(RuleError::Rejected {
                rule: rule.clone(),
                construct: "LIMIT / OFFSET",
                part: "body",
                why: "which rows it keeps depends on evaluation order, so the derived facts would too",
                help: "remove it: a rule derives from every match of its body",
            }),
            _ => errors.push(RuleError::UnknownKey {
                rule: rule.clone(),
                key: key.clone(),
                position: "a rule object (it holds \"@context\", \"@id\", \"where\" and \"insert\"; put values, filters and binds inside \"where\")".to_owned(),
            }),
        }
    }
    let cx = match Context::parse(map.get("@context").or_else(|| map.get("context"))) {
        Ok(cx) => cx,
        Err(e) => {
            errors.push(expand_error(&rule, e));
            return Err(errors);
        }
    };
    let (Some(where_value), Some(insert)) = (map.get("where"), map.get("insert")) else {
        for key in ["where", "insert"] {
            if !map.contains_key(key) {
                errors.push(RuleError::MissingKey {
                    rule: rule.clone(),
                    key,
                });
            }
        }
        return Err(errors);
    };
    // A rule that inserts nothing derives nothing: said, not run.
    if insert.as_array().is_some_and(Vec::is_empty)
        || insert.as_object().is_some_and(|m| m.is_empty())
    {
        errors.push(RuleError::JsonLdShape {
            rule: rule.clone(),
            message: "the \"insert\" is empty: the rule would derive nothing".to_owned(),
        });
        return Err(errors);
    }
    let mut lowerer = Lowerer::new(&cx, dict);
    let body = match lowerer.where_clause(where_value) {
        Ok(op) => op,
        Err(e) => {
            errors.push(where_error(&rule, e));
            return Err(errors);
        }
    };
    errors.extend(validate::body(&rule, &body));
    let scope = lowerer.root_scope().clone();
    let vars = lowerer.vars;
    let bound = body.term_vars();
    let mut builder = HeadBuilder {
        rule: &rule,
        cx: &cx,
        dict,
        scope: &scope,
        bound: &bound,
        vars: Vec::new(),
        heads: Vec::new(),
        errors: Vec::new(),
    };
    builder.insert(insert);
    let heads = builder.heads;
    // A head variable bound only inside a not-exists is reported as the negation problem it is.
    let negation = validate::negation(&rule, &body, &builder.vars, &vars);
    let mut unbound: Vec<String> = Vec::new();
    for e in builder.errors {
        match e {
            HeadError::Unbound(v) => {
                let negated = negation
                    .iter()
                    .any(|n| matches!(n, RuleError::UnsafeNegation { var, .. } if *var == v));
                if !negated && !unbound.contains(&v) {
                    unbound.push(v);
                }
            }
            e => errors.push(head_error(&rule, e)),
        }
    }
    if !unbound.is_empty() {
        errors.push(RuleError::UnboundHeadVar {
            rule: rule.clone(),
            vars: unbound,
        });
    }
    errors.extend(negation);
    errors.extend(validate::constant_heads(&rule, &heads, dict));
    errors.extend(validate::invalid_regexes(&rule, &body, dict));
    errors.extend(validate::literal_subjects(
        &rule, &body, &heads, &vars, dict,
    ));
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(Rule {
        id: rule,
        origin,
        language: Language::JsonLd,
        text: text.to_owned(),
        body,
        vars,
        heads,
    })
}

fn expand_error(rule: &str, e: ExpandError) -> RuleError {
    let rule = rule.to_owned();
    match e {
        ExpandError::UndefinedPrefix(operand) => RuleError::UndefinedPrefix { rule, operand },
        ExpandError::UndefinedTerm(key) => RuleError::UndefinedTerm { rule, key },
        ExpandError::BadContext(message) => RuleError::BadContext { rule, message },
    }
}

fn where_error(rule: &str, e: WhereError) -> RuleError {
    let r = rule.to_owned();
    match e {
        WhereError::Expand(e) => expand_error(rule, e),
        WhereError::FilterPrefix(operand) => RuleError::UndefinedPrefix { rule: r, operand },
        WhereError::BareWord(word, prefix) => RuleError::BareWord {
            rule: r,
            word,
            prefix,
        },
        WhereError::UnknownKey { key, position } => RuleError::UnknownKey {
            rule: r,
            key,
            position: position.to_owned(),
        },
        WhereError::UnknownKeyword(keyword) => RuleError::UnknownKeyword { rule: r, keyword },
        WhereError::UnknownFunction(name) => RuleError::UnknownFunction { rule: r, name },
        WhereError::Shape(message) => RuleError::JsonLdShape { rule: r, message },
        WhereError::TooDeep => RuleError::TooDeep {
            rule: r,
            what: "a filter's parentheses",
            limit: sexpr::MAX_NESTING,
            at: None,
            help: "split the expression into several filters, or nest it less (and/or take any number of operands)",
        },
        WhereError::PathTooDeep => RuleError::TooDeep {
            rule: r,
            what: "an @path's brackets",
            limit: sexpr::MAX_NESTING,
            at: None,
            help: "nest the path less, or write it as several patterns through intermediate variables",
        },
    }
}

fn head_error(rule: &str, e: HeadError) -> RuleError {
    let r = rule.to_owned();
    match e {
        HeadError::Anonymous => RuleError::HeadAnonymous { rule: r },
        HeadError::Blank => RuleError::HeadBlankNode { rule: r },
        HeadError::Construct(c) => RuleError::HeadAnnotation {
            rule: r,
            construct: format!("\"{c}\""),
        },
        HeadError::UnknownKey(key) => RuleError::UnknownKey {
            rule: r,
            key,
            position: "a head node".to_owned(),
        },
        HeadError::Unbound(var) => RuleError::UnboundHeadVar {
            rule: r,
            vars: vec![var],
        },
        HeadError::InvalidLiteral { value, datatype } => RuleError::InvalidLiteral {
            rule: r,
            value,
            datatype,
        },
        HeadError::Expand(e) => expand_error(rule, e),
        HeadError::Shape(message) => RuleError::JsonLdShape { rule: r, message },
    }
}
