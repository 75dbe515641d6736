//! This module defines rules: where they come from (files, folders, stored `f:rule` values), how SPARQL
//! `CONSTRUCT` rules parse into a body and heads, and the validation every command runs on them.

pub mod model;
pub mod source;
pub mod sparql;
pub mod validate;

use std::path::PathBuf;

use miette::Diagnostic;
use thiserror::Error;

use crate::ir::lower::LowerError;

pub use model::{Head, Language, Origin, Rule};
pub use source::{RuleSources, collect};

/// A rule that cannot run, or a rule source that cannot be read.
#[derive(Debug, Error, Diagnostic)]
pub enum RuleError {
    /// A rules file or folder could not be read (the tool's own input: exit 2).
    #[error("cannot read rules from {path}: {reason}")]
    #[diagnostic(code(reasonctl::rules::unreadable), help("check the --rules path"))]
    Unreadable {
        /// The path.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The rule text is not valid SPARQL.
    #[error("rule {rule}: not valid SPARQL: {message}")]
    #[diagnostic(
        code(reasonctl::rules::syntax),
        help("a SPARQL rule is CONSTRUCT {{ heads }} WHERE {{ body }}")
    )]
    Syntax {
        /// The rule id.
        rule: String,
        /// The parser's message.
        message: String,
    },
    /// The rule is a SELECT, ASK or DESCRIBE query.
    #[error("rule {rule}: a rule is a CONSTRUCT query, not {form}")]
    #[diagnostic(
        code(reasonctl::rules::not_construct),
        help("write it as CONSTRUCT {{ heads }} WHERE {{ body }}")
    )]
    NotConstruct {
        /// The rule id.
        rule: String,
        /// What it is instead.
        form: &'static str,
    },
    /// The body uses a construct rules reject.
    #[error("rule {rule}: {construct} is not allowed in a rule body")]
    #[diagnostic(code(reasonctl::rules::rejected_construct), help("{help}"))]
    Rejected {
        /// The rule id.
        rule: String,
        /// The construct.
        construct: &'static str,
        /// The rewrite.
        help: &'static str,
    },
    /// A head variable the body never binds.
    #[error("rule {rule}: head variable ?{var} is not bound by the body")]
    #[diagnostic(
        code(reasonctl::rules::unbound_head_var),
        help(
            "bind ?{var} in a triple pattern, BIND or VALUES of the body (a FILTER does not bind)"
        )
    )]
    UnboundHeadVar {
        /// The rule id.
        rule: String,
        /// The variable.
        var: String,
    },
    /// A blank node in a head would mint a new node per derivation.
    #[error("rule {rule}: a head cannot contain a blank node")]
    #[diagnostic(
        code(reasonctl::rules::head_blank_node),
        help("use a variable bound by the body, or an IRI")
    )]
    HeadBlankNode {
        /// The rule id.
        rule: String,
    },
    /// An annotation in a head (reifier minting is not decided yet).
    #[error("rule {rule}: annotations ({{| … |}} or ~ reifier) are not allowed in a head")]
    #[diagnostic(
        code(reasonctl::rules::head_annotation),
        help("derive the plain triple; minting reifiers in heads is not supported")
    )]
    HeadAnnotation {
        /// The rule id.
        rule: String,
    },
    /// A named-graph head names a graph the data does not have.
    #[error("rule {rule}: head graph <{graph}> is not a named graph of the loaded data")]
    #[diagnostic(
        code(reasonctl::rules::head_graph_absent),
        help("load data into <{graph}> first, or write the head without GRAPH")
    )]
    HeadGraphAbsent {
        /// The rule id.
        rule: String,
        /// The graph IRI.
        graph: String,
    },
    /// Two rules share an id.
    #[error("two rules have the id {id}")]
    #[diagnostic(
        code(reasonctl::rules::duplicate_id),
        help("rename one of them (#@rule NAME, the JSON-LD @id, or the stored rule's subject)")
    )]
    DuplicateId {
        /// The id.
        id: String,
    },
    /// An `f:rule` value that is neither a SPARQL nor a JSON-LD rule literal.
    #[error(
        "stored rule {subject}: an f:rule value must be a literal typed f:sparql or rdf:JSON, found {found}"
    )]
    #[diagnostic(
        code(reasonctl::rules::stored_shape),
        help(
            "store it as \"CONSTRUCT {{ … }} WHERE {{ … }}\"^^f:sparql, or as a JSON-LD rule object with \"@type\": \"@json\""
        )
    )]
    StoredShape {
        /// The subject carrying the value.
        subject: String,
        /// What was found instead.
        found: String,
    },
    /// Two `f:rule` values on one subject.
    #[error("stored rule {subject}: more than one f:rule value")]
    #[diagnostic(
        code(reasonctl::rules::stored_twice),
        help("a rule id names one rule: give each rule its own subject")
    )]
    StoredTwice {
        /// The subject.
        subject: String,
    },
    /// A JSON-LD rule (its parser is not part of this build yet).
    #[error("rule {rule}: JSON-LD rules are not supported by this build yet")]
    #[diagnostic(
        code(reasonctl::rules::jsonld_unsupported),
        help("write the rule as SPARQL CONSTRUCT {{ … }} WHERE {{ … }}")
    )]
    JsonLdUnsupported {
        /// The rule id.
        rule: String,
    },
    /// A construct the executor does not run.
    #[error("rule {rule}: {source}")]
    #[diagnostic(code(reasonctl::rules::unsupported), help("see the message"))]
    Lower {
        /// The rule id.
        rule: String,
        /// The lowering error.
        source: LowerError,
    },
    /// The program reads NOW() and no evaluation time was given.
    #[error("rules {rules} read the clock (NOW()), and no evaluation time was given")]
    #[diagnostic(
        code(reasonctl::rules::clock_without_time),
        help("pass --reasoning-time 2026-01-01T00:00:00Z so every run derives the same facts")
    )]
    ClockWithoutTime {
        /// The rule ids.
        rules: String,
    },
}

impl RuleError {
    /// Whether the error is about the tool's own input (a file), not about a rule.
    pub fn is_input(&self) -> bool {
        matches!(self, RuleError::Unreadable { .. })
    }
}

/// Compiles every rule text into a rule (constants interned into `dict`); returns the rules that passed and
/// every error found, rule by rule.
pub fn compile_all(
    texts: &[source::RuleText],
    dict: &mut crate::store::Dictionary,
) -> (Vec<Rule>, Vec<RuleError>) {
    let mut rules = Vec::new();
    let mut errors = Vec::new();
    for t in texts {
        match t.language {
            Language::Sparql => match sparql::compile(&t.id, t.origin.clone(), &t.text, dict) {
                Ok(r) => rules.push(r),
                Err(e) => errors.extend(e),
            },
            Language::JsonLd => errors.push(RuleError::JsonLdUnsupported { rule: t.id.clone() }),
        }
    }
    (rules, errors)
}
