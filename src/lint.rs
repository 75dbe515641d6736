//! This module defines rule validation as findings: every check `materialize` runs (the same code), each problem a
//! miette diagnostic with a stable code, the rule id, a label on the construct in its source, and a help line.

pub mod codes;
pub mod locate;
pub mod report;
pub mod warnings;

use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use miette::{Diagnostic, LabeledSpan, SourceCode};

use crate::datalog::{self, Program};
use crate::excerpt::Excerpt;
use crate::rules::source::RuleText;
use crate::rules::sparql::scan;
use crate::rules::{self, Language, Origin, RuleError, RuleSources};
use crate::store::Store;

use locate::{Json, Sparql};

/// How bad a finding is.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// The rule cannot run: every command refuses the program.
    Error,
    /// The rule runs but is very likely wrong; `lint --deny-warnings` makes it an error.
    Warning,
}

impl Severity {
    /// `error` or `warning`.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// A text findings point into: a rules file, or a stored rule's literal.
#[derive(Debug)]
pub struct SourceFile {
    /// The file, for a rules file.
    pub path: Option<PathBuf>,
    /// The name diagnostics show (the path, or `stored rule <subject>`).
    pub name: String,
    excerpt: Excerpt,
}

impl SourceFile {
    fn new(path: Option<PathBuf>, name: String, text: String) -> Self {
        Self {
            path,
            excerpt: Excerpt::new(name.clone(), text),
            name,
        }
    }

    /// The text.
    pub fn text(&self) -> &str {
        self.excerpt.text()
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> LineCol {
        self.excerpt.line_col(offset)
    }
}

/// A 1-based line and column (in characters).
pub type LineCol = (usize, usize);

/// A labelled range of a source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    /// Byte range in the source.
    pub range: Range<usize>,
    /// What it shows.
    pub text: String,
}

/// One problem with a rule (or with the rule inputs).
#[derive(Debug)]
pub struct Finding {
    /// Its stable code ([`codes`]).
    pub code: &'static str,
    /// Error or warning.
    pub severity: Severity,
    /// The rule's id, when it is about one rule.
    pub rule: Option<String>,
    /// What is wrong.
    pub message: String,
    /// The rewrite.
    pub help: Option<String>,
    /// Where: the first label is the primary one.
    pub labels: Vec<Label>,
    /// The text the labels point into.
    pub source: Option<Arc<SourceFile>>,
}

impl Finding {
    /// A finding not tied to a source text.
    pub fn bare(
        code: &'static str,
        severity: Severity,
        message: String,
        help: Option<String>,
    ) -> Self {
        Self {
            code,
            severity,
            rule: None,
            message,
            help,
            labels: Vec::new(),
            source: None,
        }
    }

    /// The file (or stored rule name), 1-based line and column of the primary label's start and end.
    pub fn position(&self) -> Option<(&SourceFile, LineCol, LineCol)> {
        let source = self.source.as_deref()?;
        let label = self.labels.first()?;
        Some((
            source,
            source.line_col(label.range.start),
            source.line_col(label.range.end),
        ))
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Finding {}

impl Diagnostic for Finding {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.code))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        })
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help
            .as_deref()
            .map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.source
            .as_deref()
            .map(|s| &s.excerpt as &dyn SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let source = self.source.as_ref()?;
        Some(Box::new(self.labels.iter().enumerate().map(|(i, l)| {
            let range = source.excerpt.clip(l.range.clone());
            let span = (range.start, range.len());
            if i == 0 {
                LabeledSpan::new_primary_with_span(Some(l.text.clone()), span)
            } else {
                LabeledSpan::new_with_span(Some(l.text.clone()), span)
            }
        })))
    }
}

/// Which checks run.
#[derive(Copy, Clone, Debug, Default)]
pub struct Checks {
    /// The data is the data the rules will run over: check head graphs against it, and (with `warnings`) the
    /// predicates and classes the bodies name.
    pub data: bool,
    /// Look for warnings too.
    pub warnings: bool,
}

/// The outcome of validation: the rules that passed, as a program, and every finding.
#[derive(Debug)]
pub struct Validation {
    /// The valid rules.
    pub program: Program,
    /// Every problem, in rule order.
    pub findings: Vec<Finding>,
    /// The rule texts read.
    pub texts: Vec<RuleText>,
}

impl Validation {
    /// Whether any finding is an error.
    pub fn has_errors(&self) -> bool {
        self.findings.iter().any(|f| f.severity == Severity::Error)
    }
}

/// An error for each construct of `program` that `--engine dataflow` does not run (see
/// [`crate::datalog::dataflow::check`]; on a `cluster` of processes), pointing at its rule.
pub fn dataflow_findings(
    program: &crate::datalog::Program,
    texts: &[RuleText],
    cluster: bool,
) -> Vec<Finding> {
    let mut builder = Builder::new(texts);
    crate::datalog::dataflow::check(program, cluster)
        .into_iter()
        .map(|u| {
            builder.error(RuleError::EngineUnsupported {
                rule: u.rule,
                construct: u.construct,
            })
        })
        .collect()
}

/// Reads, parses and validates every rule of `sources` (and of the data's `f:rule` values); constants are
/// interned into `store.dict`. `materialize`, `query`, `deps` and `lint` all validate through here.
pub fn validate(sources: &RuleSources, store: &mut Store, checks: Checks) -> Validation {
    let (texts, mut errors) = rules::collect(sources, store);
    let (compiled, compile_errors) = rules::compile_all(&texts, &mut store.dict);
    errors.extend(compile_errors);
    if checks.data {
        errors.extend(datalog::graphs::check(&compiled, store));
    }
    let program = Program::new(compiled);
    errors.extend(program.stratification_errors(&store.dict));
    let mut builder = Builder::new(&texts);
    let mut findings: Vec<Finding> = errors.into_iter().map(|e| builder.error(e)).collect();
    if checks.warnings {
        findings.extend(
            warnings::check(&program, store, checks.data)
                .into_iter()
                .map(|w| builder.warning(w)),
        );
        if texts.is_empty() && findings.is_empty() {
            findings.push(Finding::bare(
                codes::NO_RULES,
                Severity::Warning,
                "no rules found in the inputs".to_owned(),
                Some(
                    "pass rule files (.rq, .sparql, .json, .jsonld), folders of them, or data holding f:rule values"
                        .to_owned(),
                ),
            ));
        }
    }
    findings.sort_by_key(|f| builder.order(f));
    // The same problem at the same place once (a pattern lowered twice, as for an aggregate inside GRAPH ?g).
    findings.dedup_by(|a, b| {
        a.code == b.code
            && a.rule == b.rule
            && a.message == b.message
            && a.labels
                .iter()
                .map(|l| &l.range)
                .eq(b.labels.iter().map(|l| &l.range))
    });
    Validation {
        program,
        findings,
        texts,
    }
}

/// Turns rule errors and warnings into findings with labels in their sources (files read once).
pub struct Builder<'t> {
    texts: &'t [RuleText],
    files: HashMap<PathBuf, Option<Arc<SourceFile>>>,
}

impl<'t> Builder<'t> {
    /// A builder over these rule texts.
    pub fn new(texts: &'t [RuleText]) -> Self {
        Self {
            texts,
            files: HashMap::new(),
        }
    }

    /// Where a finding sorts: by the position of its rule's text, then its primary label.
    fn order(&self, f: &Finding) -> (usize, usize, Severity) {
        let rule = f
            .rule
            .as_deref()
            .and_then(|id| self.texts.iter().position(|t| t.id == id))
            .unwrap_or(usize::MAX);
        let at = f.labels.first().map_or(0, |l| l.range.start);
        (rule, at, f.severity)
    }

    fn source_of(&mut self, text: &RuleText) -> Option<Arc<SourceFile>> {
        match &text.origin {
            Origin::File { path, .. } => self
                .files
                .entry(path.clone())
                .or_insert_with(|| {
                    crate::rules::source::read_rules_file(path).ok().map(|t| {
                        Arc::new(SourceFile::new(
                            Some(path.clone()),
                            path.display().to_string(),
                            t,
                        ))
                    })
                })
                .clone(),
            Origin::Translated { path, node } => {
                let name = format!("rule {node} of {} (RDF syntax, as SRL)", path.display());
                Some(Arc::new(SourceFile::new(None, name, text.text.clone())))
            }
            Origin::Stored { subject, graph } => {
                let name = match graph {
                    Some(g) => format!("stored rule {subject} (graph {g})"),
                    None => format!("stored rule {subject}"),
                };
                Some(Arc::new(SourceFile::new(None, name, text.text.clone())))
            }
        }
    }

    /// Maps a range of a rule's text to its source.
    fn to_source(text: &RuleText, r: Range<usize>) -> Range<usize> {
        match text.origin {
            Origin::File {
                offset, prologue, ..
            } => {
                let map = |p: usize| {
                    if p < prologue {
                        p
                    } else {
                        offset + p - prologue
                    }
                };
                map(r.start)..map(r.end)
            }
            Origin::Stored { .. } | Origin::Translated { .. } => r,
        }
    }

    /// A finding for a rule error.
    pub fn error(&mut self, e: RuleError) -> Finding {
        let code = codes::of(&e);
        let help = e.help().map(|h| h.to_string());
        let message = e.to_string();
        let (rule_id, text) = match &e {
            RuleError::DuplicateId { id, index, .. } => (Some(id.clone()), self.texts.get(*index)),
            other => {
                let id = rule_of(other);
                let text = id.and_then(|id| self.texts.iter().find(|t| t.id == id));
                (id.map(str::to_owned), text)
            }
        };
        // What a SPARQL syntax error means, when the parser's message does not say.
        let hint = match (&e, text) {
            (RuleError::Syntax { message, .. }, Some(t)) if t.language == Language::Sparql => {
                scan::syntax_hint(&t.text, syntax_position(message, &t.text), message, true)
            }
            _ => None,
        };
        let (labels, source) = match text {
            Some(t) => {
                let mut labels = match hint.as_ref().and_then(|h| Some((h.at.clone()?, h.label))) {
                    Some((range, text)) => vec![Label {
                        range,
                        text: text.to_owned(),
                    }],
                    None => error_labels(&e, t),
                };
                if labels.is_empty() {
                    labels.push(Label {
                        range: rule_start(t),
                        text: "in this rule".to_owned(),
                    });
                }
                let labels = labels
                    .into_iter()
                    .map(|l| Label {
                        range: Self::to_source(t, l.range),
                        text: l.text,
                    })
                    .collect();
                (labels, self.source_of(t))
            }
            None => (Vec::new(), None),
        };
        let (message, source, labels) = match source {
            Some(s) => (message, Some(s), labels),
            None => (message, None, Vec::new()),
        };
        let (message, help) = match (hint, &rule_id) {
            (Some(h), Some(rule)) => (
                format!("rule {rule}: not valid SPARQL: {}", h.what),
                Some(h.fix),
            ),
            _ => (
                shorten_syntax(&e, text.map(|t| t.text.as_str())).unwrap_or(message),
                help,
            ),
        };
        Finding {
            code,
            severity: Severity::Error,
            rule: rule_id,
            message,
            help,
            labels,
            source,
        }
    }

    /// A finding for a warning.
    pub fn warning(&mut self, w: warnings::Warning) -> Finding {
        let text = self.texts.iter().find(|t| t.id == w.rule);
        let (labels, source) = match text {
            Some(t) => {
                let mut labels: Vec<Label> = w
                    .locate
                    .iter()
                    .find_map(|target| target.find(t))
                    .into_iter()
                    .map(|range| Label {
                        range,
                        text: w.label.clone(),
                    })
                    .collect();
                if labels.is_empty() {
                    labels.push(Label {
                        range: rule_start(t),
                        text: w.label.clone(),
                    });
                }
                let labels = labels
                    .into_iter()
                    .map(|l| Label {
                        range: Self::to_source(t, l.range),
                        text: l.text,
                    })
                    .collect();
                (labels, self.source_of(t))
            }
            None => (Vec::new(), None),
        };
        Finding {
            code: w.code,
            severity: Severity::Warning,
            rule: Some(w.rule),
            message: w.message,
            help: Some(w.help),
            labels: if source.is_some() { labels } else { Vec::new() },
            source,
        }
    }
}

/// The rule an error is about.
fn rule_of(e: &RuleError) -> Option<&str> {
    match e {
        RuleError::Syntax { rule, .. }
        | RuleError::Srl { rule, .. }
        | RuleError::TooDeep { rule, .. }
        | RuleError::TooLarge { rule, .. }
        | RuleError::NotConstruct { rule, .. }
        | RuleError::Rejected { rule, .. }
        | RuleError::UnboundHeadVar { rule, .. }
        | RuleError::UnsafeNegation { rule, .. }
        | RuleError::Unstratified { rule, .. }
        | RuleError::HeadBlankNode { rule }
        | RuleError::HeadAnnotation { rule, .. }
        | RuleError::HeadAnonymous { rule }
        | RuleError::LiteralSubject { rule, .. }
        | RuleError::HeadNeverFact { rule, .. }
        | RuleError::InvalidRegex { rule, .. }
        | RuleError::InvalidLiteral { rule, .. }
        | RuleError::JsonSyntax { rule, .. }
        | RuleError::MissingKey { rule, .. }
        | RuleError::UnknownKey { rule, .. }
        | RuleError::UndefinedTerm { rule, .. }
        | RuleError::UndefinedPrefix { rule, .. }
        | RuleError::BareWord { rule, .. }
        | RuleError::UnknownKeyword { rule, .. }
        | RuleError::UnknownFunction { rule, .. }
        | RuleError::BadContext { rule, .. }
        | RuleError::JsonLdShape { rule, .. }
        | RuleError::HeadGraphAbsent { rule, .. }
        | RuleError::Lower { rule, .. }
        | RuleError::EngineUnsupported { rule, .. } => Some(rule),
        RuleError::DuplicateId { id, .. } | RuleError::ReservedId { id } => Some(id),
        RuleError::Unreadable { .. }
        | RuleError::StoredShape { .. }
        | RuleError::StoredTwice { .. }
        | RuleError::ClockWithoutTime { .. } => None,
    }
}

/// The first line of a rule's own text (after a multi-rule file's prologue), in rule-text coordinates.
fn rule_start(t: &RuleText) -> Range<usize> {
    let skip = match t.origin {
        Origin::File { prologue, .. } => prologue,
        Origin::Stored { .. } | Origin::Translated { .. } => 0,
    };
    let own = &t.text[skip..];
    let lead = own.len() - own.trim_start().len();
    let start = skip + lead;
    let end = t.text[start..]
        .find('\n')
        .map_or(t.text.len(), |p| start + p);
    start..end.max(start + 1).min(t.text.len().max(start))
}

/// What a target of a warning is, to be found in a rule's text.
#[derive(Clone, Debug)]
pub enum Target {
    /// A SPARQL variable `?name` (first occurrence), or the JSON-LD string `"?name"`.
    Var(String),
    /// A term as written in SPARQL (`<iri>` or `p:local`) or JSON-LD (`"p:local"` / `"<iri>"`): tried with each of
    /// these spellings.
    Term(Vec<String>),
    /// The CONSTRUCT template / the `insert` value.
    Head,
}

impl Target {
    /// Finds the target in a rule's text (rule-text coordinates).
    pub fn find(&self, t: &RuleText) -> Option<Range<usize>> {
        match (t.language, self) {
            // SRL spells variables and terms as SPARQL does; a variable is found where it first occurs.
            (Language::Srl, Target::Var(v)) => Sparql::new(&t.text).var_in(v, None),
            (Language::Srl, Target::Head) => None,
            (Language::Sparql, Target::Var(v)) => {
                let s = Sparql::new(&t.text);
                let where_at = s.keyword_from(0, &["WHERE"]).map(|(i, _)| i);
                s.var_in(v, where_at.map(|w| w..s.len()))
                    .or_else(|| s.var_in(v, None))
            }
            (Language::JsonLd, Target::Var(v)) => {
                let j = Json::new(&t.text);
                let from = j.after_key("where").unwrap_or(0);
                j.string_from(from, &format!("?{v}"))
                    .or_else(|| j.word_in_string_from(from, &format!("?{v}")))
            }
            (Language::Sparql | Language::Srl, Target::Term(spellings)) => {
                let s = Sparql::new(&t.text);
                let where_at = s.keyword_from(0, &["WHERE"]).map_or(0, |(i, _)| i);
                spellings.iter().find_map(|sp| {
                    s.find_in(where_at..s.len(), |tok| match tok {
                        locate::Tok::Word(w) => w == sp,
                        _ => false,
                    })
                    .or_else(|| {
                        let at = t.text.find(sp.as_str())?;
                        Some(at..at + sp.len())
                    })
                })
            }
            (Language::JsonLd, Target::Term(spellings)) => {
                let j = Json::new(&t.text);
                let from = j.after_key("where").unwrap_or(0);
                spellings.iter().find_map(|sp| {
                    j.string_from(from, sp)
                        .or_else(|| j.word_in_string_from(from, sp))
                })
            }
            (Language::Sparql, Target::Head) => {
                let s = Sparql::new(&t.text);
                s.template().and_then(|tpl| s.bytes(tpl))
            }
            (Language::JsonLd, Target::Head) => Json::new(&t.text).key("insert"),
        }
    }
}

/// The labels of a rule error in its rule's text (rule-text coordinates); empty when the construct is not found.
fn error_labels(e: &RuleError, t: &RuleText) -> Vec<Label> {
    let label = |range: Option<Range<usize>>, text: &str| -> Vec<Label> {
        range
            .map(|range| Label {
                range,
                text: text.to_owned(),
            })
            .into_iter()
            .collect()
    };
    if let RuleError::TooDeep { at: Some(at), .. } = e {
        return label(
            Some(crate::excerpt::snap(&t.text, *at..*at + 1)),
            "nested too deep here",
        );
    }
    if let RuleError::TooLarge { at: Some(at), .. } = e {
        return label(
            Some(crate::excerpt::snap(&t.text, *at..*at + 1)),
            "past the limit here",
        );
    }
    if let RuleError::Srl { at, code, .. } = e {
        let text = match *code {
            crate::rules::srl::codes::SYNTAX => "here",
            crate::rules::srl::codes::UNSUPPORTED => "not supported yet",
            crate::rules::srl::codes::REASSIGNED | crate::rules::srl::codes::ASSIGNED_AFTER_USE => {
                "assigned here"
            }
            _ => "no value here",
        };
        return label(at.clone(), text);
    }
    match t.language {
        Language::Sparql | Language::Srl => {
            let s = Sparql::new(&t.text);
            match e {
                RuleError::Syntax { message, .. } if message.contains("Prefix not found") => label(
                    syntax_position(message, &t.text).map(|p| word_around(&t.text, p)),
                    "undeclared prefix",
                ),
                RuleError::Syntax { message, .. } => label(
                    syntax_position(message, &t.text).map(|p| token_at(&t.text, p)),
                    "here",
                ),
                RuleError::NotConstruct { form, .. } => {
                    label(s.keyword(&[form]), "a rule must be a CONSTRUCT query")
                }
                RuleError::Rejected { construct, .. } => {
                    let range = match *construct {
                        "OPTIONAL" => s.keyword(&["OPTIONAL"]),
                        "MINUS" => s.keyword(&["MINUS"]),
                        "LIMIT / OFFSET" => s.keyword(&["LIMIT"]).or_else(|| s.keyword(&["OFFSET"])),
                        "SERVICE" => s.keyword(&["SERVICE"]),
                        "FROM / FROM NAMED" => s.keyword(&["FROM"]),
                        c if c.starts_with("GROUP BY") => s.keyword(&["GROUP", "BY"]),
                        c if c.contains("graph name") => s
                            .template()
                            .and_then(|tpl| s.find_in(tpl, |t| matches!(t, locate::Tok::Word(w) if w.eq_ignore_ascii_case("GRAPH")))),
                        _ => None,
                    };
                    label(range, &format!("{construct} is not allowed in a rule"))
                }
                RuleError::UnboundHeadVar { vars, .. } => vars
                    .iter()
                    .flat_map(|v| {
                        label(
                            s.var_in(v, s.template()),
                            &format!("?{v} is not bound by the body"),
                        )
                    })
                    .collect(),
                RuleError::LiteralSubject { var, role, .. } => label(
                    s.var_in(var, s.template()),
                    &format!("this {role} is always a literal"),
                ),
                RuleError::HeadNeverFact { role, .. } => label(
                    s.template().and_then(|t| s.bytes(t)),
                    &format!("a head here has this {role}"),
                ),
                RuleError::InvalidRegex { pattern, .. } => label(
                    t.text
                        .find(pattern.as_str())
                        .map(|at| at..at + pattern.len()),
                    "does not compile",
                ),
                RuleError::InvalidLiteral { value, .. } => {
                    // The literal's quoted form inside the template.
                    let within = s.template().and_then(|t| s.bytes(t));
                    let found = within.and_then(|r| {
                        let quoted = format!("\"{value}\"");
                        t.text[r.clone()]
                            .find(&quoted)
                            .map(|at| r.start + at..r.start + at + quoted.len())
                    });
                    label(found, "not a value of its datatype")
                }
                RuleError::UnsafeNegation { var, .. } => {
                    let neg = s.negation_with(Some(var));
                    let inner = neg
                        .as_ref()
                        .and_then(|n| s.negation_group(n))
                        .and_then(|g| s.var_in(var, Some(g)));
                    let mut out = label(inner, &format!("?{var} is bound only inside the negation"));
                    out.extend(label(neg, "this negation"));
                    out
                }
                RuleError::Unstratified { construct, .. } => {
                    if construct.contains("aggregat") {
                        label(s.subquery(), "aggregates facts its own recursive group derives")
                    } else {
                        label(s.negation_with(None), "negates facts its own recursive group derives")
                    }
                }
                RuleError::HeadBlankNode { .. } => label(
                    s.template().and_then(|tpl| {
                        s.find_in(tpl, |t| {
                            matches!(t, locate::Tok::Punct('['))
                                || matches!(t, locate::Tok::Word(w) if w.starts_with("_:"))
                        })
                    }),
                    "a blank node would mint a new node for every match",
                ),
                RuleError::HeadAnnotation { .. } => label(
                    s.template().and_then(|tpl| {
                        s.find_in(tpl, |t| {
                            matches!(t, locate::Tok::AnnotationOpen | locate::Tok::Punct('~'))
                                || matches!(t, locate::Tok::Word(w) if w.starts_with("_:"))
                        })
                    }),
                    "no reifier can be minted here",
                ),
                RuleError::HeadGraphAbsent { .. } => label(
                    s.template().and_then(|tpl| {
                        s.find_in(tpl, |t| matches!(t, locate::Tok::Word(w) if w.eq_ignore_ascii_case("GRAPH")))
                    }),
                    "the data has no such graph",
                ),
                RuleError::DuplicateId { .. } => label(
                    t.text.find("#@rule").map(|p| {
                        let skip = match t.origin {
                            Origin::File { prologue, .. } => prologue,
                            Origin::Stored { .. } | Origin::Translated { .. } => 0,
                        };
                        let p = t.text[skip..].find("#@rule").map_or(p, |q| skip + q);
                        p..t.text[p..].find('\n').map_or(t.text.len(), |e| p + e)
                    }),
                    "this id is already taken",
                ),
                RuleError::Lower {
                    source: crate::ir::lower::LowerError::Service,
                    ..
                } => label(s.keyword(&["SERVICE"]), "SERVICE is not allowed in a rule"),
                _ => Vec::new(),
            }
        }
        Language::JsonLd => {
            let j = Json::new(&t.text);
            let body = j.after_key("where").unwrap_or(0);
            let head = j.after_key("insert").unwrap_or(0);
            match e {
                RuleError::JsonSyntax { line, column, .. } => label(
                    Some(token_at(
                        &t.text,
                        crate::excerpt::offset_of(&t.text, *line, *column),
                    )),
                    "here",
                ),
                RuleError::Rejected { construct, .. } => {
                    let range = match *construct {
                        "OPTIONAL" => j.string_from_ci(body, "optional"),
                        "MINUS" => j.string_from_ci(body, "minus"),
                        "LIMIT / OFFSET" => j.key("limit").or_else(|| j.key("offset")),
                        c if c.starts_with("GROUP BY") => {
                            j.key("groupBy").or_else(|| j.key("having"))
                        }
                        _ => None,
                    };
                    label(range, &format!("{construct} is not allowed in a rule"))
                }
                RuleError::UnboundHeadVar { vars, .. } => vars
                    .iter()
                    .flat_map(|v| {
                        label(
                            j.string_from(head, &format!("?{v}")),
                            &format!("?{v} is not bound by the body"),
                        )
                    })
                    .collect(),
                RuleError::LiteralSubject { var, role, .. } => label(
                    j.string_from(head, &format!("?{var}")),
                    &format!("this {role} is always a literal"),
                ),
                RuleError::HeadNeverFact { role, .. } => {
                    label(j.key("insert"), &format!("a head here has this {role}"))
                }
                RuleError::UnsafeNegation { var, .. } => {
                    // The negation whose own region (up to the next negation) names the variable.
                    let negations = j.all_ci(body, &["not-exists", "notexists"]);
                    let name = format!("?{var}");
                    let found = negations.iter().enumerate().find_map(|(i, n)| {
                        let v = j.string_from(n.end, &name)?;
                        let before_next = negations.get(i + 1).is_none_or(|m| v.start < m.start);
                        before_next.then(|| (n.clone(), v))
                    });
                    let (neg, inner) = match found {
                        Some((n, v)) => (Some(n), Some(v)),
                        None => (negations.first().cloned(), None),
                    };
                    let mut out =
                        label(inner, &format!("?{var} is bound only inside the negation"));
                    out.extend(label(neg, "this negation"));
                    out
                }
                RuleError::Unstratified { construct, .. } => {
                    if construct.contains("aggregat") {
                        label(
                            j.string_from(body, "query"),
                            "aggregates facts its own recursive group derives",
                        )
                    } else {
                        label(
                            j.all_ci(body, &["not-exists", "notexists"])
                                .into_iter()
                                .next(),
                            "negates facts its own recursive group derives",
                        )
                    }
                }
                RuleError::HeadAnnotation { construct, .. } => label(
                    j.key_from(head, construct.trim_matches('"')),
                    "no reifier can be minted here",
                ),
                RuleError::HeadAnonymous { .. } => {
                    label(j.key("insert"), "a head node here has no \"@id\"")
                }
                RuleError::HeadBlankNode { .. } => label(
                    j.string_starting_from(head, "_:"),
                    "a blank node would mint a new node for every match",
                ),
                RuleError::InvalidLiteral { value, .. } => label(
                    j.string_from(head, value).or_else(|| {
                        t.text[head..]
                            .find(value.as_str())
                            .map(|p| head + p..head + p + value.len())
                    }),
                    "not a valid value of its datatype",
                ),
                RuleError::MissingKey { key, .. } => {
                    label(j.opening(), &format!("this rule has no \"{key}\""))
                }
                RuleError::UnknownKey { key, .. } => {
                    label(j.key(key), "this key has no meaning here")
                }
                RuleError::UndefinedTerm { key, .. } => label(
                    j.key(key)
                        .or_else(|| j.string_from(0, key))
                        .or_else(|| j.word_in_string_from(0, key)),
                    "not defined by the rule's @context",
                ),
                RuleError::UndefinedPrefix { operand, .. } => label(
                    j.key(operand)
                        .or_else(|| j.string_from(0, operand))
                        .or_else(|| j.operand_from(0, operand)),
                    "this prefix is not defined",
                ),
                RuleError::BareWord { word, .. } => {
                    label(j.operand_from(body, word), "neither a string nor an IRI")
                }
                RuleError::UnknownKeyword { keyword, .. } => {
                    label(j.string_from(body, keyword), "not a keyword")
                }
                RuleError::UnknownFunction { name, .. } => {
                    label(j.operand_from(body, name), "unknown function")
                }
                RuleError::BadContext { .. } => label(j.key("@context"), "in this @context"),
                // The first quoted key or value the message names, if the rule has it.
                RuleError::JsonLdShape { message, .. } => label(
                    message
                        .split('"')
                        .skip(1)
                        .step_by(2)
                        .find_map(|q| j.key(q).or_else(|| j.string_from(0, q))),
                    "here",
                ),
                RuleError::HeadGraphAbsent { .. } => {
                    label(j.key_from(head, "@graph"), "the data has no such graph")
                }
                RuleError::DuplicateId { id, .. } => label(
                    j.key("@id")
                        .and_then(|k| j.string_from(k.end, id))
                        .or_else(|| j.opening()),
                    "this id is already taken",
                ),
                _ => Vec::new(),
            }
        }
    }
}

/// The `error at LINE:COL` position of a spargebra message, as a byte offset of `text`.
fn syntax_position(message: &str, text: &str) -> Option<usize> {
    let rest = &message[message.find("error at ")? + "error at ".len()..];
    let (line, rest) = rest.split_once(':')?;
    let col: String = rest.chars().take_while(char::is_ascii_digit).collect();
    Some(crate::excerpt::offset_of(
        text,
        line.parse().ok()?,
        col.parse().ok()?,
    ))
}

/// The prefixed name around `offset` (name characters and `:` on both sides).
fn word_around(text: &str, offset: usize) -> Range<usize> {
    let is_name = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | ':' | '.');
    let offset = crate::excerpt::floor_boundary(text, offset);
    let start = text[..offset]
        .char_indices()
        .rev()
        .take_while(|(_, c)| is_name(*c))
        .last()
        .map_or(offset, |(i, _)| i);
    let end = text[offset..]
        .char_indices()
        .find(|(_, c)| !is_name(*c))
        .map_or(text.len(), |(i, _)| offset + i);
    let end = text[start..end].trim_end_matches('.').len() + start;
    start..crate::excerpt::ceil_boundary(text, end.max(start + 1))
}

/// The token starting at `offset` (a run of non-space characters, at most 24), or one character.
fn token_at(text: &str, offset: usize) -> Range<usize> {
    let offset = crate::excerpt::floor_boundary(text, offset);
    let rest = &text[offset..];
    let len = rest
        .char_indices()
        .take_while(|(i, c)| !c.is_whitespace() && *i < 24)
        .last()
        .map_or(0, |(i, c)| i + c.len_utf8());
    if len == 0 {
        // At a space or the end: point at the character before.
        let before = text[..offset].trim_end();
        return match before.char_indices().next_back() {
            Some((start, c)) => start..start + c.len_utf8(),
            None => 0..text.chars().next().map_or(0, char::len_utf8),
        };
    }
    offset..offset + len
}

/// A short message for a SPARQL syntax error: spargebra lists long character classes; say what it found there
/// (the label shows where).
fn shorten_syntax(e: &RuleError, text: Option<&str>) -> Option<String> {
    let RuleError::Syntax { rule, message } = e else {
        return None;
    };
    let (_, expected) = message.split_once("expected one of ")?;
    if expected.contains("Prefix not found") {
        let prefix = text
            .and_then(|t| syntax_position(message, t).map(|p| (t, p)))
            .map(|(t, p)| {
                let word = &t[word_around(t, p)];
                format!("`{}:`", word.split(':').next().unwrap_or(word))
            })
            .unwrap_or_else(|| "a prefix".to_owned());
        return Some(format!(
            "rule {rule}: not valid SPARQL: {prefix} is not declared (add a PREFIX line to the rule, or to the file's prologue before its first #@rule)"
        ));
    }
    let found = text
        .and_then(|t| syntax_position(message, t).map(|p| (t, p)))
        .map(|(t, p)| {
            let tok = &t[token_at(t, p)];
            if p >= t.trim_end().len() {
                "end of the rule".to_owned()
            } else {
                format!("`{tok}`")
            }
        });
    let found = found.map_or_else(String::new, |f| format!(": unexpected {f}"));
    if expected.len() <= 60 {
        return Some(format!(
            "rule {rule}: not valid SPARQL{found} (expected one of {expected})"
        ));
    }
    Some(format!("rule {rule}: not valid SPARQL{found}"))
}
