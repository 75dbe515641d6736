//! This module defines every stable code a rule finding carries, in one place; `docs/lints.md` explains each.

use crate::rules::srl::codes as srl;

use crate::rules::RuleError;

/// A rules file or folder could not be read.
pub const UNREADABLE: &str = "reasonctl::rules::unreadable";
/// The rule is not valid SPARQL.
pub const SYNTAX: &str = "reasonctl::rules::syntax";
/// A rule nesting brackets, operators or S-expressions past the limits.
pub const TOO_DEEP: &str = "reasonctl::rules::too_deep";
/// Code of a rule with more sequence-path steps or distinct variables than the parser handles.
pub const TOO_LARGE: &str = "reasonctl::rules::too_large";
/// A SELECT, ASK or DESCRIBE query given as a rule.
pub const NOT_CONSTRUCT: &str = "reasonctl::rules::not_construct";
/// OPTIONAL, MINUS, LIMIT/OFFSET, top-level GROUP BY, SERVICE, a variable head graph.
pub const REJECTED_CONSTRUCT: &str = "reasonctl::rules::rejected_construct";
/// Head variables the body does not bind.
pub const UNBOUND_HEAD_VAR: &str = "reasonctl::rules::unbound_head_var";
/// A variable a negation shares with the rule, bound by no positive pattern.
pub const UNSAFE_NEGATION: &str = "reasonctl::rules::unsafe_negation";
/// A negated or aggregated read of the reading rule's own recursive group.
pub const UNSTRATIFIED: &str = "reasonctl::rules::unstratified";
/// A blank node in a head.
pub const HEAD_BLANK_NODE: &str = "reasonctl::rules::head_blank_node";
/// A head reifier that cannot be minted: a blank node reifying two edges, an annotated edge holding a blank
/// node, `@edge` or `@reifies` in a JSON-LD head.
pub const HEAD_ANNOTATION: &str = "reasonctl::rules::head_annotation";
/// A head subject or predicate variable the body binds only to literals.
pub const LITERAL_SUBJECT: &str = "reasonctl::rules::literal_subject";
/// Error: a head's constant subject or predicate that no triple can have there.
pub const HEAD_NEVER_FACT: &str = "reasonctl::rules::head_never_fact";
/// Code of a constant regular expression that does not compile.
pub const INVALID_REGEX: &str = "reasonctl::rules::invalid_regex";
/// A JSON-LD head node without `@id`.
pub const HEAD_ANONYMOUS: &str = "reasonctl::rules::head_anonymous";
/// A head value whose lexical form is invalid for its datatype.
pub const INVALID_LITERAL: &str = "reasonctl::rules::invalid_literal";
/// A JSON-LD rule that is not valid JSON.
pub const JSON_SYNTAX: &str = "reasonctl::rules::json_syntax";
/// A JSON-LD rule without `where` or `insert`.
pub const MISSING_KEY: &str = "reasonctl::rules::missing_key";
/// An `@`-key with no meaning in its position.
pub const UNKNOWN_KEY: &str = "reasonctl::rules::unknown_key";
/// A bare key or value the rule's `@context` does not define.
pub const UNDEFINED_TERM: &str = "reasonctl::rules::undefined_term";
/// A compact IRI whose prefix the rule's `@context` does not define.
pub const UNDEFINED_PREFIX: &str = "reasonctl::rules::undefined_prefix";
/// A bare word in a filter.
pub const BARE_WORD: &str = "reasonctl::rules::bare_word";
/// An unknown keyword array in `where`.
pub const UNKNOWN_KEYWORD: &str = "reasonctl::rules::unknown_keyword";
/// An unknown function in a JSON-LD filter.
pub const UNKNOWN_FUNCTION: &str = "reasonctl::rules::unknown_function";
/// A malformed `@context`.
pub const BAD_CONTEXT: &str = "reasonctl::rules::bad_context";
/// Any other malformed JSON-LD rule shape.
pub const JSONLD_SHAPE: &str = "reasonctl::rules::jsonld_shape";
/// A head graph the data does not have.
pub const HEAD_GRAPH_ABSENT: &str = "reasonctl::rules::head_graph_absent";
/// Two rules with one id.
pub const DUPLICATE_ID: &str = "reasonctl::rules::duplicate_id";
/// A rule id with the `owl2rl:` prefix in a run with `--owl2rl`.
pub const RESERVED_ID: &str = "reasonctl::rules::reserved_id";
/// A stored `f:rule` value of another datatype (or a nested object).
pub const STORED_SHAPE: &str = "reasonctl::rules::stored_shape";
/// Two `f:rule` values on one subject.
pub const STORED_TWICE: &str = "reasonctl::rules::stored_twice";
/// A construct the query executor does not run (an unknown function, a nested aggregate, …).
pub const UNSUPPORTED: &str = "reasonctl::rules::unsupported";
/// Rules read NOW() and the run has no `--reasoning-time`.
pub const CLOCK_WITHOUT_TIME: &str = "reasonctl::rules::clock_without_time";
/// A construct `--engine dataflow` does not run yet.
pub const ENGINE_UNSUPPORTED: &str = "reasonctl::rules::engine_unsupported";

/// Warning: a body pattern names an IRI no fact has in that position and no rule derives.
pub const NEVER_MATCHES: &str = "reasonctl::lint::never_matches";
/// Warning: a variable that is always an IRI compared with a quoted string.
pub const STRING_COMPARED_WITH_IRI: &str = "reasonctl::lint::string_compared_with_iri";
/// Warning: a head restates a pattern of its own body.
pub const HEAD_RESTATES_BODY: &str = "reasonctl::lint::head_restates_body";
/// Warning: a recursive rule mints reifiers for edges that can hold reifiers its group mints.
pub const MINTING_CYCLE: &str = "reasonctl::lint::minting_cycle";
/// Warning: the inputs hold no rule at all.
pub const NO_RULES: &str = "reasonctl::lint::no_rules";

/// Every finding code with a one-line summary, errors then warnings.
pub const ALL: &[(&str, &str)] = &[
    (UNREADABLE, "A rules file or folder could not be read"),
    (SYNTAX, "The rule is not valid SPARQL"),
    (srl::SYNTAX, "The SRL rule or data block does not parse"),
    (
        srl::UNBOUND_HEAD_VAR,
        "An SRL head variable no triple pattern or SET of the body binds",
    ),
    (
        srl::UNBOUND_EXPR_VAR,
        "An SRL FILTER or SET expression reads a variable nothing before it binds",
    ),
    (
        srl::REASSIGNED,
        "An SRL variable assigned by two SET elements",
    ),
    (
        srl::ASSIGNED_AFTER_USE,
        "An SRL SET of a variable a triple pattern before it already uses",
    ),
    (
        srl::UNSUPPORTED,
        "An SRL construct of the draft not run yet (IMPORTS, WHERE DATA, NOT DATA)",
    ),
    (
        srl::RDF_SYNTAX,
        "A rule set in SHACL 1.2 Rules' RDF syntax whose nodes break the syntax's shapes",
    ),
    (
        TOO_DEEP,
        "A rule nesting brackets, operators or S-expressions past the limits",
    ),
    (
        TOO_LARGE,
        "A rule with more than 10,000 steps in one sequence path or 10,000 distinct variables",
    ),
    (
        NOT_CONSTRUCT,
        "A SELECT, ASK or DESCRIBE query given as a rule",
    ),
    (
        REJECTED_CONSTRUCT,
        "OPTIONAL, MINUS, LIMIT/OFFSET, top-level GROUP BY, SERVICE, a variable head graph",
    ),
    (UNBOUND_HEAD_VAR, "Head variables the body does not bind"),
    (
        UNSAFE_NEGATION,
        "A variable a negation shares with the rule, bound by no positive pattern",
    ),
    (
        UNSTRATIFIED,
        "A negated or aggregated read of the reading rule's own recursive group",
    ),
    (HEAD_BLANK_NODE, "A blank node in a head"),
    (
        HEAD_ANNOTATION,
        "A head reifier that cannot be minted (a blank node reifying two edges, `@edge`, `@reifies`)",
    ),
    (
        LITERAL_SUBJECT,
        "A head subject (a reifier) or predicate variable the body binds only to literals",
    ),
    (
        HEAD_NEVER_FACT,
        "A head subject that is a literal or a triple term, or a predicate that is not an IRI",
    ),
    (
        INVALID_REGEX,
        "A REGEX or REPLACE whose constant pattern or flags do not compile",
    ),
    (HEAD_ANONYMOUS, "A JSON-LD head node without `@id`"),
    (
        INVALID_LITERAL,
        "A head value whose lexical form is invalid for its datatype",
    ),
    (JSON_SYNTAX, "A JSON-LD rule that is not valid JSON"),
    (MISSING_KEY, "A JSON-LD rule without `where` or `insert`"),
    (UNKNOWN_KEY, "An `@`-key with no meaning in its position"),
    (
        UNDEFINED_TERM,
        "A bare key or value the rule's `@context` does not define",
    ),
    (
        UNDEFINED_PREFIX,
        "A compact IRI whose prefix the rule's `@context` does not define",
    ),
    (BARE_WORD, "A bare word in a filter"),
    (UNKNOWN_KEYWORD, "An unknown keyword array in `where`"),
    (UNKNOWN_FUNCTION, "An unknown function in a JSON-LD filter"),
    (BAD_CONTEXT, "A malformed `@context`"),
    (JSONLD_SHAPE, "Any other malformed JSON-LD rule shape"),
    (HEAD_GRAPH_ABSENT, "A head graph the data does not have"),
    (DUPLICATE_ID, "Two rules with one id"),
    (
        RESERVED_ID,
        "A rule id with the `owl2rl:` prefix in a run with `--owl2rl`",
    ),
    (
        STORED_SHAPE,
        "A stored `f:rule` value of another datatype (or a nested object)",
    ),
    (STORED_TWICE, "Two `f:rule` values on one subject"),
    (
        UNSUPPORTED,
        "A construct the query executor does not run (an unknown function, a nested aggregate, …)",
    ),
    (
        CLOCK_WITHOUT_TIME,
        "Rules read NOW() and the run has no `--reasoning-time`",
    ),
    (
        ENGINE_UNSUPPORTED,
        "A construct `--engine dataflow` does not run yet",
    ),
    (
        NEVER_MATCHES,
        "Warning: a body pattern names an IRI no fact has in that position and no rule derives",
    ),
    (
        STRING_COMPARED_WITH_IRI,
        "Warning: a variable that is always an IRI compared with a quoted string",
    ),
    (
        HEAD_RESTATES_BODY,
        "Warning: a head restates a pattern of its own body",
    ),
    (
        MINTING_CYCLE,
        "Warning: a recursive rule mints reifiers for edges that can hold minted reifiers",
    ),
    (NO_RULES, "Warning: the inputs hold no rule at all"),
];

/// The one-line summary of a code.
pub fn summary(code: &str) -> &'static str {
    ALL.iter().find(|(c, _)| *c == code).map_or("", |(_, s)| s)
}

/// The code of a rule error.
pub fn of(e: &RuleError) -> &'static str {
    match e {
        RuleError::Unreadable { .. } => UNREADABLE,
        RuleError::Syntax { .. } => SYNTAX,
        RuleError::Srl { code, .. } => code,
        RuleError::TooDeep { .. } => TOO_DEEP,
        RuleError::TooLarge { .. } => TOO_LARGE,
        RuleError::NotConstruct { .. } => NOT_CONSTRUCT,
        RuleError::Rejected { .. } => REJECTED_CONSTRUCT,
        RuleError::UnboundHeadVar { .. } => UNBOUND_HEAD_VAR,
        RuleError::UnsafeNegation { .. } => UNSAFE_NEGATION,
        RuleError::Unstratified { .. } => UNSTRATIFIED,
        RuleError::HeadBlankNode { .. } => HEAD_BLANK_NODE,
        RuleError::HeadAnnotation { .. } => HEAD_ANNOTATION,
        RuleError::LiteralSubject { .. } => LITERAL_SUBJECT,
        RuleError::HeadNeverFact { .. } => HEAD_NEVER_FACT,
        RuleError::InvalidRegex { .. } => INVALID_REGEX,
        RuleError::HeadAnonymous { .. } => HEAD_ANONYMOUS,
        RuleError::InvalidLiteral { .. } => INVALID_LITERAL,
        RuleError::JsonSyntax { .. } => JSON_SYNTAX,
        RuleError::MissingKey { .. } => MISSING_KEY,
        RuleError::UnknownKey { .. } => UNKNOWN_KEY,
        RuleError::UndefinedTerm { .. } => UNDEFINED_TERM,
        RuleError::UndefinedPrefix { .. } => UNDEFINED_PREFIX,
        RuleError::BareWord { .. } => BARE_WORD,
        RuleError::UnknownKeyword { .. } => UNKNOWN_KEYWORD,
        RuleError::UnknownFunction { .. } => UNKNOWN_FUNCTION,
        RuleError::BadContext { .. } => BAD_CONTEXT,
        RuleError::JsonLdShape { .. } => JSONLD_SHAPE,
        RuleError::HeadGraphAbsent { .. } => HEAD_GRAPH_ABSENT,
        RuleError::DuplicateId { .. } => DUPLICATE_ID,
        RuleError::ReservedId { .. } => RESERVED_ID,
        RuleError::StoredShape { .. } => STORED_SHAPE,
        RuleError::StoredTwice { .. } => STORED_TWICE,
        RuleError::Lower { .. } => UNSUPPORTED,
        RuleError::ClockWithoutTime { .. } => CLOCK_WITHOUT_TIME,
        RuleError::EngineUnsupported { .. } => ENGINE_UNSUPPORTED,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `code(reasonctl::…)` attribute in the sources (the other layers' errors).
    fn attribute_codes() -> Vec<String> {
        let re = regex::Regex::new(r"code\((reasonctl::[a-z_:]+)\)").expect("regex");
        let mut out = Vec::new();
        let mut dirs = vec![std::path::PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/src"
        ))];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).expect("src").flatten() {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&path).expect("source");
                    out.extend(re.captures_iter(&text).map(|c| c[1].to_owned()));
                }
            }
        }
        out
    }

    #[test]
    fn every_code_is_unique_across_findings_and_other_errors() {
        let mut seen = std::collections::HashSet::new();
        for code in ALL
            .iter()
            .map(|(c, _)| (*c).to_owned())
            .chain(attribute_codes())
        {
            assert!(code.starts_with("reasonctl::"), "{code}");
            assert!(seen.insert(code.clone()), "code {code} is used twice");
        }
    }

    #[test]
    fn every_code_is_documented() {
        let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/lints.md"))
            .expect("docs/lints.md");
        for (code, _) in ALL {
            assert!(
                docs.contains(&format!("`{code}`")),
                "{code} is not in docs/lints.md"
            );
        }
    }
}
