//! This module defines rules: where they come from (files, folders, stored `f:rule` values), how SPARQL
//! `CONSTRUCT` rules parse into a body and heads, and the validation every command runs on them.

pub mod jsonld;
pub mod model;
pub mod reifier;
pub mod source;
pub mod sparql;
pub mod srl;
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
    #[diagnostic(help(
        "check the --rules path: a rules file is UTF-8 text of at most 16 MiB, a folder holds rule files"
    ))]
    Unreadable {
        /// The path.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// An SRL rule that does not parse or is not well-formed (the code says which condition).
    #[error("rule {rule}: {message}")]
    #[diagnostic(help("{help}"))]
    Srl {
        /// The rule id.
        rule: String,
        /// The diagnostic code (`reasonctl::srl::…`).
        code: &'static str,
        /// What is wrong.
        message: String,
        /// The fix.
        help: String,
        /// Where, in the rule's text.
        at: Option<std::ops::Range<usize>>,
    },
    /// The rule text is not valid SPARQL.
    #[error("rule {rule}: not valid SPARQL: {message}")]
    #[diagnostic(help("a SPARQL rule is CONSTRUCT {{ heads }} WHERE {{ body }}"))]
    Syntax {
        /// The rule id.
        rule: String,
        /// The parser's message.
        message: String,
    },
    /// The rule nests brackets or operators deeper than the parsers and the engine's walks allow.
    #[error("rule {rule}: {what} nest deeper than {limit} levels")]
    #[diagnostic(help("{help}"))]
    TooDeep {
        /// The rule id.
        rule: String,
        /// What nests: brackets, operators, S-expressions.
        what: &'static str,
        /// The limit.
        limit: usize,
        /// The byte offset (in the rule's text) of the first construct past the limit, when known.
        at: Option<usize>,
        /// The rewrite.
        help: &'static str,
    },
    /// The rule is larger in one respect than the parser handles in reasonable time and stack.
    #[error("rule {rule}: more than {limit} {what}")]
    #[diagnostic(help("{help}"))]
    TooLarge {
        /// The rule id.
        rule: String,
        /// What there are too many of.
        what: &'static str,
        /// The limit.
        limit: usize,
        /// The byte offset (in the rule's text) of the first past the limit.
        at: Option<usize>,
        /// The rewrite.
        help: &'static str,
    },
    /// The rule is a SELECT, ASK or DESCRIBE query.
    #[error(
        "rule {rule}: a rule is a CONSTRUCT query, not {form}: SPARQL rules must be CONSTRUCT … WHERE …; the template is the head"
    )]
    #[diagnostic(help("write it as CONSTRUCT {{ heads }} WHERE {{ body }}"))]
    NotConstruct {
        /// The rule id.
        rule: String,
        /// What it is instead.
        form: &'static str,
    },
    /// The body uses a construct rules reject.
    #[error("rule {rule}: {construct} is not allowed in a rule {part}: {why}")]
    #[diagnostic(help("{help}"))]
    Rejected {
        /// The rule id.
        rule: String,
        /// The construct.
        construct: &'static str,
        /// Where it is: "body" or "head".
        part: &'static str,
        /// Why a rule cannot run it.
        why: &'static str,
        /// The rewrite.
        help: &'static str,
    },
    /// Head variables the body never binds.
    #[error(
        "rule {rule}: {} not bound by the body; every variable used in the head must be bound by the body",
        quoted_vars(vars)
    )]
    #[diagnostic(help(
        "bind each in a triple pattern, BIND or VALUES of the body (a FILTER does not bind), or remove it from the head"
    ))]
    UnboundHeadVar {
        /// The rule id.
        rule: String,
        /// The variables, without `?`, in head order.
        vars: Vec<String>,
    },
    /// A variable a negation shares with the rest of the rule that no positive pattern binds.
    #[error(
        "rule {rule}: ?{var} appears in a negation (NOT EXISTS) and elsewhere in the rule, but no positive pattern binds it"
    )]
    #[diagnostic(help(
        "bind ?{var} with a triple pattern of the group the NOT EXISTS filters (outside it), or rename it inside the NOT EXISTS if it is meant to be local there"
    ))]
    UnsafeNegation {
        /// The rule id.
        rule: String,
        /// The variable.
        var: String,
    },
    /// A negated or aggregated read that may observe a write of its own recursive group.
    #[error(
        "rules cannot be stratified: {cycle}; rule {rule} reads {facts} under {construct}, and its own recursive group derives them"
    )]
    #[diagnostic(help(
        "a negation or an aggregate may only read facts of earlier stages: make {rule} read facts no rule of the cycle derives, or remove one rule of the cycle"
    ))]
    Unstratified {
        /// The reading rule.
        rule: String,
        /// The cycle, `a -not-> b -> a`.
        cycle: String,
        /// `a negation (NOT EXISTS)` or `an aggregating subquery`.
        construct: &'static str,
        /// The facts the read names, IRIs spelled out.
        facts: String,
    },
    /// A blank node in a head would mint a new node per derivation.
    #[error(
        "rule {rule}: a head cannot contain a blank node: it would mint a fresh node for every match"
    )]
    #[diagnostic(help(
        "use a variable bound by the body, or an IRI; for one node per match, build its IRI in the body (BIND, or \"bind\" in JSON-LD, with IRI(CONCAT(…))) and use that variable"
    ))]
    HeadBlankNode {
        /// The rule id.
        rule: String,
    },
    /// An annotation in a head that cannot mint its reifier (see [`reifier`]).
    #[error("rule {rule}: {construct} is not allowed in a head")]
    #[diagnostic(help(
        "annotate the edge itself: `?a ex:p ?b {{| ex:q ?c |}}` in SPARQL, {{\"@id\": \"?b\", \"@annotation\": {{…}}}} in JSON-LD; its reifier is minted from the rule, the graph and the edge, or named with `~ ?r` / an \"@id\" the body binds"
    ))]
    HeadAnnotation {
        /// The rule id.
        rule: String,
        /// The construct (`{| … |}`, `@annotation`, `@edge`, `@reifies`).
        construct: String,
    },
    /// A head whose subject (a reifier, say) or predicate is a variable the body binds only to literals.
    #[error(
        "rule {rule}: ?{var} is the {role} of a head, but the body binds it only to literals, so the head derives nothing"
    )]
    #[diagnostic(help(
        "bind ?{var} to an IRI (a triple pattern, VALUES of IRIs, BIND(IRI(…) AS ?{var})); a reifier can also be minted: leave out `~ ?{var}` / the annotation's \"@id\""
    ))]
    LiteralSubject {
        /// The rule id.
        rule: String,
        /// The variable, without `?`.
        var: String,
        /// `reifier`, `subject` or `predicate`.
        role: &'static str,
    },
    /// A REGEX or REPLACE whose constant pattern (with its flags) does not compile: an error on every row.
    #[error(
        "rule {rule}: the regular expression {pattern} (flags {flags:?}) does not compile: {reason}"
    )]
    #[diagnostic(help(
        "the call is an error on every row, so its FILTER keeps nothing and its BIND binds nothing: fix the pattern (XPath regular expressions; escape a literal `(` as `\\(`) or the flags (i, s, m, x, q)"
    ))]
    InvalidRegex {
        /// The rule id.
        rule: String,
        /// The pattern, as an N-Triples literal.
        pattern: String,
        /// The flags.
        flags: String,
        /// What the regex compiler said (its first line).
        reason: String,
    },
    /// A head whose subject or predicate is a constant no triple can have there.
    #[error("rule {rule}: the head's {role} is {term}, {why}, so the head derives nothing")]
    #[diagnostic(help(
        "a triple's subject is an IRI or a blank node and its predicate an IRI; a triple term goes in the object position, as in `?r rdf:reifies <<( ?s ?p ?o )>>`"
    ))]
    HeadNeverFact {
        /// The rule id.
        rule: String,
        /// The term, as written in N-Triples.
        term: String,
        /// `subject` or `predicate`.
        role: &'static str,
        /// Why it cannot be there.
        why: &'static str,
    },
    /// A JSON-LD head node without `@id`.
    #[error("rule {rule}: a head node has no \"@id\"; it would mint a fresh node for every match")]
    #[diagnostic(help("give the node an \"@id\": a \"?variable\" bound by the body, or an IRI"))]
    HeadAnonymous {
        /// The rule id.
        rule: String,
    },
    /// A head value object whose lexical form is invalid for its datatype.
    #[error("rule {rule}: \"{value}\" is not a valid {datatype}")]
    #[diagnostic(help(
        "write a value of that datatype, or change the datatype (`^^` in SPARQL, \"@type\" in JSON-LD)"
    ))]
    InvalidLiteral {
        /// The rule id.
        rule: String,
        /// The lexical form.
        value: String,
        /// The datatype.
        datatype: String,
    },
    /// The JSON text of a JSON-LD rule does not parse.
    #[error("rule {rule}: not valid JSON at line {line}, column {column}: {message}")]
    #[diagnostic(help("a JSON-LD rule is {{\"@context\": …, \"where\": …, \"insert\": …}}"))]
    JsonSyntax {
        /// The rule id.
        rule: String,
        /// serde_json's message.
        message: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
    },
    /// A JSON-LD rule without `where` or `insert`.
    #[error("rule {rule}: a JSON-LD rule needs \"{key}\"")]
    #[diagnostic(help("a JSON-LD rule is {{\"@context\": …, \"where\": …, \"insert\": …}}"))]
    MissingKey {
        /// The rule id.
        rule: String,
        /// The missing key.
        key: &'static str,
    },
    /// An `@`-key with no meaning in its position (it would otherwise be ignored silently).
    #[error("rule {rule}: \"{key}\" has no meaning in {position}")]
    #[diagnostic(help("remove it: a rule fails closed on keys the engine would ignore"))]
    UnknownKey {
        /// The rule id.
        rule: String,
        /// The key.
        key: String,
        /// Where.
        position: String,
    },
    /// A bare key the rule's context does not define.
    #[error("rule {rule}: \"{key}\" is not defined by the rule's @context")]
    #[diagnostic(help(
        "define \"{key}\" in @context, or write it as a compact IRI (ex:{key}) or an absolute IRI"
    ))]
    UndefinedTerm {
        /// The rule id.
        rule: String,
        /// The key or value.
        key: String,
    },
    /// A compact IRI whose prefix the context does not define.
    #[error(
        "rule {rule}: {operand} uses a prefix the rule's @context does not define: define the prefix in @context for an IRI, or quote it (\"{operand}\") for a string"
    )]
    #[diagnostic(help(
        "add \"{}\": \"http://…/\" to the rule's @context, or write \"{operand}\" (quoted) if a string was meant",
        operand.split(':').next().unwrap_or(operand)
    ))]
    UndefinedPrefix {
        /// The rule id.
        rule: String,
        /// The operand.
        operand: String,
    },
    /// A bare word in a filter: neither a string nor an IRI.
    #[error(
        "rule {rule}: the bare word {word} in a filter is neither a string nor an IRI: quote it (\"{word}\") for a string, or give it a prefix the @context defines ({prefix}:{word}) for an IRI"
    )]
    #[diagnostic(help(
        "a filter compares strings only when they are quoted; an unquoted name must be a compact IRI whose prefix the rule's @context defines, or <…> in full"
    ))]
    BareWord {
        /// The rule id.
        rule: String,
        /// The word.
        word: String,
        /// A prefix the rule's context defines (`prefix` when it defines none).
        prefix: String,
    },
    /// A keyword array whose keyword is unknown.
    #[error("rule {rule}: unknown keyword \"{keyword}\" in \"where\"")]
    #[diagnostic(help(
        "use filter, bind, values, union, optional, minus, exists, not-exists, query or graph"
    ))]
    UnknownKeyword {
        /// The rule id.
        rule: String,
        /// The keyword.
        keyword: String,
    },
    /// A filter function the language does not have.
    #[error("rule {rule}: unknown function {name}")]
    #[diagnostic(help(
        "use a SPARQL function name in prefix form, e.g. (strStarts ?n \"A\"), or an XSD cast (xsd:integer ?x)"
    ))]
    UnknownFunction {
        /// The rule id.
        rule: String,
        /// The name.
        name: String,
    },
    /// The rule's `@context` is malformed.
    #[error("rule {rule}: {message}")]
    #[diagnostic(help("a rule's @context maps prefixes and terms to IRIs"))]
    BadContext {
        /// The rule id.
        rule: String,
        /// What is wrong.
        message: String,
    },
    /// Any other malformed JSON-LD rule shape.
    #[error("rule {rule}: {message}")]
    #[diagnostic(help("see docs/jsonld-rules.md for the JSON-LD rule syntax"))]
    JsonLdShape {
        /// The rule id.
        rule: String,
        /// What is wrong.
        message: String,
    },
    /// A named-graph head names a graph the data does not have.
    #[error("rule {rule}: head graph <{graph}> is not a named graph of the loaded data")]
    #[diagnostic(help("load data into <{graph}> first, or write the head without GRAPH"))]
    HeadGraphAbsent {
        /// The rule id.
        rule: String,
        /// The graph IRI.
        graph: String,
    },
    /// Two rules share an id (as written, or once expanded: `ex:r` and `http://example.org/r`).
    #[error("two rules have the id {id}{}", if taken_by == id { String::new() } else { format!(" (the other writes it {taken_by})") })]
    #[diagnostic(help(
        "rename one of them (#@rule NAME, the JSON-LD @id, or the stored rule's subject)"
    ))]
    DuplicateId {
        /// The id, as the later rule writes it.
        id: String,
        /// The later rule's position among the rule texts.
        index: usize,
        /// The id as the earlier rule writes it.
        taken_by: String,
    },
    /// A rule id that `--owl2rl` reserves for its own rules.
    #[error("rule id {id} starts with owl2rl:, which --owl2rl reserves for the OWL 2 RL rules")]
    #[diagnostic(help(
        "rename the rule (#@rule NAME, the JSON-LD @id, or the stored rule's subject)"
    ))]
    ReservedId {
        /// The id.
        id: String,
    },
    /// An `f:rule` value that is neither a SPARQL nor a JSON-LD rule literal.
    #[error(
        "stored rule {subject}: an f:rule value must be a literal typed f:sparql or rdf:JSON, found {found}"
    )]
    #[diagnostic(help(
        "store it as \"CONSTRUCT {{ … }} WHERE {{ … }}\"^^f:sparql, or as a JSON-LD rule object with \"@type\": \"@json\""
    ))]
    StoredShape {
        /// The subject carrying the value.
        subject: String,
        /// What was found instead.
        found: String,
    },
    /// Two `f:rule` values on one subject.
    #[error("stored rule {subject}: more than one f:rule value")]
    #[diagnostic(help("a rule id names one rule: give each rule its own subject"))]
    StoredTwice {
        /// The subject.
        subject: String,
    },
    /// A construct the executor does not run.
    #[error("rule {rule}: {source}")]
    #[diagnostic(forward(source))]
    Lower {
        /// The rule id.
        rule: String,
        /// The lowering error.
        source: LowerError,
    },
    /// The program reads NOW() and no evaluation time was given.
    #[error("rules {rules} read the clock (NOW()), and no evaluation time was given")]
    #[diagnostic(help(
        "pass --reasoning-time 2026-01-01T00:00:00Z so every run derives the same facts"
    ))]
    ClockWithoutTime {
        /// The rule ids.
        rules: String,
    },
    /// A construct `--engine dataflow` does not run yet.
    #[error("rule {rule} uses {construct}, which --engine dataflow does not run yet")]
    #[diagnostic(help(
        "run this program with --engine memory (the default), or rewrite the rule without it; docs/scale-out.md lists what the dataflow engine runs"
    ))]
    EngineUnsupported {
        /// The rule id.
        rule: String,
        /// The construct.
        construct: &'static str,
    },
}

/// `` `?a` is`` or `` `?a`, `?b` are``.
fn quoted_vars(vars: &[String]) -> String {
    let list = vars
        .iter()
        .map(|v| format!("`?{v}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if vars.len() == 1 {
        format!("head variable {list} is")
    } else {
        format!("head variables {list} are")
    }
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
            Language::JsonLd => match jsonld::compile(&t.id, t.origin.clone(), &t.text, dict) {
                Ok(r) => rules.push(r),
                Err(e) => errors.extend(e),
            },
            Language::Srl => match srl::compile(&t.id, t.origin.clone(), &t.text, dict) {
                Ok(r) => rules.push(r),
                Err(e) => errors.extend(e),
            },
        }
    }
    (rules, errors)
}

/// The prefixes the rule texts declare (SPARQL `PREFIX`, JSON-LD `@context` entries naming a namespace ending in
/// `/` or `#`), in order: for showing IRIs compactly.
pub fn declared_prefixes(texts: &[source::RuleText]) -> Vec<(String, String)> {
    static SPARQL: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?i)\bPREFIX\s+([A-Za-z][\w.-]*)?:\s*<([^>]*)>").expect("valid regex")
    });
    let mut out = Vec::new();
    for t in texts {
        match t.language {
            Language::Sparql | Language::Srl => {
                for c in SPARQL.captures_iter(&t.text) {
                    let prefix = c.get(1).map_or("", |m| m.as_str()).to_owned();
                    out.push((prefix, c[2].to_owned()));
                }
            }
            Language::JsonLd => {
                let Ok(serde_json::Value::Object(rule)) = serde_json::from_str(&t.text) else {
                    continue;
                };
                let Some(serde_json::Value::Object(cx)) = rule.get("@context") else {
                    continue;
                };
                for (k, v) in cx {
                    let ns = match v {
                        serde_json::Value::String(s) => s.as_str(),
                        serde_json::Value::Object(o) => {
                            o.get("@id").and_then(|i| i.as_str()).unwrap_or("")
                        }
                        _ => "",
                    };
                    if !k.starts_with('@')
                        && !k.contains(':')
                        && (ns.ends_with('/') || ns.ends_with('#'))
                    {
                        out.push((k.clone(), ns.to_owned()));
                    }
                }
            }
        }
    }
    out
}
