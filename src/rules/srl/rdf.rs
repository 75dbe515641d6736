//! This module defines the RDF syntax of SHACL 1.2 Rules (the `srl:` vocabulary): rule sets found in a graph,
//! translated node by node into SRL text, which the SRL surface then checks and lowers like a `.srl` file.
//!
//! ```text
//! [ a srl:RuleSet ; srl:data ( d… ) ; srl:rules ( r… ) ]   ⇒  DATA { d… }  and one SRL rule per r
//! r = [ srl:head ( [ srl:tripleTemplate t ]… ) ; srl:body ( e… ) ]  ⇒  RULE <r>? { t… } WHERE { e… }
//! r = [ srl:text "…" ; sh:prefixes [ sh:declare [ sh:prefix "p" ; sh:namespace "…" ] ] ]  ⇒  PREFIX p: <…> …
//! e = [ srl:triplePattern t ]  ⇒  t     [ srl:filter x ]  ⇒  FILTER(x)     [ srl:not ( e… ) ]  ⇒  NOT { e… }
//!     [ srl:assign [ srl:assignVar v ; srl:assignValue x ] ]  ⇒  SET(v := x)
//! t = [ srl:subject s ; srl:predicate p ; srl:object o ]  ⇒  s p o .   (a data item may be <<( s p o )>>)
//! v = [ srl:varName "n" ]  ⇒  ?n        x = a term, a variable, or [ f ( x… ) ] (`sparql:` operators by name)
//! ```
//!
//! The shapes followed are the editors' draft's `rdf-syntax-shapes.ttl` (copied 2026-12-03; the change log of
//! 2026-08-12 removes the RDF syntax from the draft, the shapes and their tests remain; see docs/srl.md). Every
//! shape is a function here, so the draft's shape tests run against them (`fixtures/srl/rdf-syntax-tests`).

use std::path::Path;

use crate::store::load::{DataSource, LoadOptions, Loader, NoProgress};
use crate::store::quads::TripleIndex;
use crate::store::{Dictionary, LiteralKind, Store, TermId, TermRef, TermSource};

use super::super::RuleError;
use super::super::model::{Language, Origin};
use super::super::source::{MAX_RULES_FILE, RuleText};
use super::codes;

/// The rules vocabulary.
pub const SRL: &str = "http://www.w3.org/ns/shacl-rules#";
/// SPARQL's function and operator namespace.
const SPARQL: &str = "http://www.w3.org/ns/sparql#";
/// SHACL node expressions' namespace (`shnex:var` names a variable in an expression).
const SHNEX: &str = "http://www.w3.org/ns/shacl-node-expr#";
/// SHACL's namespace (prefix declarations, `sh:deactivated`).
const SH: &str = "http://www.w3.org/ns/shacl#";
const RDF: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#";
const XSD_BOOLEAN: &str = "http://www.w3.org/2001/XMLSchema#boolean";

/// The help every RDF-syntax problem carries.
const HELP: &str = "write the rule as the shapes of SHACL 1.2 Rules' RDF syntax say (docs/srl.md, \"RDF syntax\"), \
                    or write it in SRL (.srl)";

/// The most nodes an expression may have, written out (shared nodes once per use).
const EXPRESSION_NODES: usize = 1 << 16;

/// One graph of a store, read as rules.
#[derive(Clone, Copy)]
pub struct Graph<'a> {
    dict: &'a Dictionary,
    index: &'a TripleIndex,
    written: &'a Written,
}

/// The expressions a graph's rules have written so far: each blank node's text, written once however many
/// expressions, body elements or rules name it, and the bytes of expression text handed out in all.
#[derive(Default)]
pub struct Written {
    texts: std::cell::RefCell<hashbrown::HashMap<TermId, String>>,
    bytes: std::cell::Cell<usize>,
}

/// Why a node is not what its shape requires.
type Fault = String;

impl<'a> Graph<'a> {
    /// The graph `index` of a store whose terms `dict` holds.
    pub fn new(dict: &'a Dictionary, index: &'a TripleIndex, written: &'a Written) -> Self {
        Self {
            dict,
            index,
            written,
        }
    }

    fn id(&self, iri: &str) -> Option<TermId> {
        self.dict.lookup_iri(iri)
    }

    /// The objects of `(node, ns + local)`, in id order.
    fn values(&self, node: TermId, ns: &str, local: &str) -> Vec<TermId> {
        let Some(p) = self.id(&format!("{ns}{local}")) else {
            return Vec::new();
        };
        self.index
            .range(&[Some(node), Some(p), None])
            .iter()
            .map(|t| t[2])
            .collect()
    }

    /// Every triple of `node` as subject: (predicate, object).
    fn out(&self, node: TermId) -> Vec<(TermId, TermId)> {
        (self.index.range(&[Some(node), None, None]).iter())
            .map(|[_, p, o]| (p, o))
            .collect()
    }

    /// The one value of `(node, srl:local)`; none, or more than one, is a fault.
    fn one(&self, node: TermId, ns: &str, local: &str) -> Result<TermId, Fault> {
        match self.values(node, ns, local)[..] {
            [v] => Ok(v),
            [] => Err(format!("{} has no {}", self.show(node), short(ns, local))),
            _ => Err(format!(
                "{} has more than one {}",
                self.show(node),
                short(ns, local)
            )),
        }
    }

    /// The value of `(node, srl:local)` if there is one; more than one is a fault.
    fn at_most_one(&self, node: TermId, ns: &str, local: &str) -> Result<Option<TermId>, Fault> {
        match self.values(node, ns, local)[..] {
            [] => Ok(None),
            [v] => Ok(Some(v)),
            _ => Err(format!(
                "{} has more than one {}",
                self.show(node),
                short(ns, local)
            )),
        }
    }

    /// The members of the RDF list starting at `head`, in order.
    fn list(&self, head: TermId) -> Result<Vec<TermId>, Fault> {
        let nil = self.id(&format!("{RDF}nil"));
        let mut items = Vec::new();
        let mut node = head;
        let mut seen = hashbrown::HashSet::new();
        while Some(node) != nil {
            if !matches!(self.dict.get(node), TermRef::Blank(_) | TermRef::Iri(_))
                || !seen.insert(node)
            {
                return Err(format!("{} is not a well-formed RDF list", self.show(head)));
            }
            let first = self.one(node, RDF, "first");
            let rest = self.one(node, RDF, "rest");
            match (first, rest) {
                (Ok(f), Ok(r)) => {
                    items.push(f);
                    node = r;
                }
                _ => return Err(format!("{} is not a well-formed RDF list", self.show(head))),
            }
        }
        Ok(items)
    }

    fn is_blank(&self, node: TermId) -> bool {
        matches!(self.dict.get(node), TermRef::Blank(_))
    }

    fn is_iri(&self, node: TermId) -> bool {
        matches!(self.dict.get(node), TermRef::Iri(_))
    }

    /// A term as messages show it.
    fn show(&self, node: TermId) -> String {
        match self.dict.get(node) {
            TermRef::Blank(_) => "a blank node".to_owned(),
            _ => self.dict.display(node),
        }
    }

    /// Whether a node is a variable: a blank node with `srl:varName` (or, in an expression, `shnex:var`).
    fn names_variable(&self, node: TermId, in_expression: bool) -> bool {
        self.is_blank(node)
            && (!self.values(node, SRL, "varName").is_empty()
                || in_expression && !self.values(node, SHNEX, "var").is_empty())
    }

    // ---- terms and variables: srl-sh:variableShape, termShape, varOrTermShape, varOrIRIShape ----

    /// `?name`: a blank node with exactly one `srl:varName` string.
    pub fn variable(&self, node: TermId) -> Result<String, Fault> {
        if !self.is_blank(node) {
            return Err(format!(
                "{} is not a variable (a blank node with srl:varName)",
                self.show(node)
            ));
        }
        let mut names = self.values(node, SRL, "varName");
        names.extend(self.values(node, SHNEX, "var"));
        let [name] = names[..] else {
            return Err(if names.is_empty() {
                "a blank node without srl:varName is not a variable".to_owned()
            } else {
                "a variable has more than one srl:varName".to_owned()
            });
        };
        let name = match self.dict.get(name) {
            TermRef::Literal {
                lexical,
                kind: LiteralKind::Simple,
            } => lexical,
            _ => {
                return Err(format!(
                    "the variable name {} is not a string",
                    self.show(name)
                ));
            }
        };
        let valid = !name.is_empty()
            && name
                .chars()
                .all(|c| c == '_' || c.is_alphanumeric() || c == '\u{B7}');
        if !valid {
            return Err(format!(
                "\"{name}\" is not a variable name (letters, digits and _)"
            ));
        }
        Ok(format!("?{name}"))
    }

    /// An RDF term: an IRI, a literal, a triple term, or a blank node that is not a variable.
    pub fn term(&self, node: TermId) -> Result<String, Fault> {
        match self.dict.get(node) {
            TermRef::Blank(_) if self.names_variable(node, false) => {
                Err("a variable where an RDF term must be".to_owned())
            }
            TermRef::Triple([s, p, o]) => Ok(format!(
                "<<( {} {} {} )>>",
                self.term(s)?,
                self.term(p)?,
                self.term(o)?
            )),
            TermRef::DefaultGraph => Err("the default graph is not a term".to_owned()),
            _ => Ok(self.dict.display(node)),
        }
    }

    /// A variable or an RDF term.
    pub fn var_or_term(&self, node: TermId) -> Result<String, Fault> {
        if self.names_variable(node, false) {
            self.variable(node)
        } else {
            self.term(node)
        }
    }

    /// A variable or an IRI (a predicate).
    pub fn var_or_iri(&self, node: TermId) -> Result<String, Fault> {
        if self.names_variable(node, false) {
            self.variable(node)
        } else if self.is_iri(node) {
            self.term(node)
        } else {
            Err(format!(
                "{} is neither a variable nor an IRI",
                self.show(node)
            ))
        }
    }

    // ---- triples: srl-sh:tripleShape, tripleDataShape, triplePatternShape, tripleTemplateShape ----

    /// `s p o .` of a node with one `srl:subject`, `srl:predicate` and `srl:object`; with `data`, terms only
    /// and an IRI predicate.
    pub fn triple(&self, node: TermId, data: bool) -> Result<String, Fault> {
        let s = self.one(node, SRL, "subject")?;
        let p = self.one(node, SRL, "predicate")?;
        let o = self.one(node, SRL, "object")?;
        if data {
            if !self.is_iri(p) {
                return Err(format!(
                    "a data triple's predicate must be an IRI, not {}",
                    self.show(p)
                ));
            }
            Ok(format!(
                "{} {} {} .",
                self.term(s)?,
                self.term(p)?,
                self.term(o)?
            ))
        } else {
            Ok(format!(
                "{} {} {} .",
                self.var_or_term(s)?,
                self.var_or_iri(p)?,
                self.var_or_term(o)?
            ))
        }
    }

    /// A data block item: a data triple node, or a triple term standing for its triple.
    pub fn data_item(&self, node: TermId) -> Result<String, Fault> {
        match self.dict.get(node) {
            TermRef::Triple([s, p, o]) => Ok(format!(
                "{} {} {} .",
                self.term(s)?,
                self.term(p)?,
                self.term(o)?
            )),
            TermRef::Blank(_) | TermRef::Iri(_)
                if !self.values(node, SRL, "subject").is_empty() =>
            {
                self.triple(node, true)
            }
            _ => Err(format!(
                "{} is not a data triple (a node with srl:subject, srl:predicate, srl:object, or a triple term)",
                self.show(node)
            )),
        }
    }

    /// A head element: `[ srl:tripleTemplate t ]`.
    pub fn template(&self, node: TermId) -> Result<String, Fault> {
        self.triple(self.one(node, SRL, "tripleTemplate")?, false)
    }

    // ---- expressions: srl-sh:expressionShape ----

    /// An expression: a term, a variable, or a function call `[ f ( args… ) ]`.
    pub fn expression(&self, node: TermId) -> Result<String, Fault> {
        let text = self.expression_at(node, 0, &mut 0)?;
        // Every use of a shared expression is text the rule parser reads: the graph's in all are bounded as a
        // rules file is.
        let bytes = self.written.bytes.get() + text.len();
        self.written.bytes.set(bytes);
        if bytes as u64 > MAX_RULES_FILE {
            return Err(format!(
                "the rules' expressions, written out, come to more than {} MiB (a filter named by several body elements or rules counts once for each use)",
                MAX_RULES_FILE >> 20
            ));
        }
        Ok(text)
    }

    /// The expression at `node`, `depth` calls down, with `nodes` counting the nodes written so far: a node that
    /// several arguments share is written once for each, so a graph of shared nodes a few kilobytes long can
    /// stand for an expression of 2^N nodes (refused past [`EXPRESSION_NODES`], never expanded).
    fn expression_at(
        &self,
        node: TermId,
        depth: usize,
        nodes: &mut usize,
    ) -> Result<String, Fault> {
        if depth > 256 {
            return Err("an expression nested more than 256 deep".to_owned());
        }
        *nodes += 1;
        if *nodes > EXPRESSION_NODES {
            return Err(format!(
                "an expression of more than {EXPRESSION_NODES} nodes (a node shared by several arguments counts once for each)"
            ));
        }
        if !self.is_blank(node) {
            return self.term(node);
        }
        if self.names_variable(node, true) {
            return self.variable(node);
        }
        if let Some(text) = self.written.texts.borrow().get(&node) {
            return Ok(text.clone());
        }
        let text = self.call_at(node, depth, nodes)?;
        // A node whose arguments share nodes doubles its text at each level: refused before it outgrows a rules
        // file.
        if text.len() as u64 > MAX_RULES_FILE {
            return Err(format!(
                "an expression longer than {} MiB written out (a node shared by several arguments is written once for each)",
                MAX_RULES_FILE >> 20
            ));
        }
        self.written.texts.borrow_mut().insert(node, text.clone());
        Ok(text)
    }

    /// The function call at the blank node `node`.
    fn call_at(&self, node: TermId, depth: usize, nodes: &mut usize) -> Result<String, Fault> {
        let [(f, args)] = self.out(node)[..] else {
            return Err(
                "a blank node in an expression must be a variable or one function call [ f ( args ) ]"
                    .to_owned(),
            );
        };
        let args = self
            .list(args)?
            .into_iter()
            .map(|a| self.expression_at(a, depth + 1, nodes))
            .collect::<Result<Vec<_>, _>>()?;
        let TermRef::Iri(iri) = self.dict.get(f) else {
            return Err(format!("{} is not a function IRI", self.show(f)));
        };
        let iri = iri.to_string();
        let Some(name) = iri.strip_prefix(SPARQL) else {
            return Ok(format!("{}({})", self.dict.display(f), args.join(", ")));
        };
        call(name, &args)
    }

    // ---- body elements: srl-sh:filterElementShape, assignmentElementShape, negationElementShape ----

    /// A body element: exactly one of `srl:triplePattern`, `srl:filter`, `srl:assign`, `srl:not`.
    pub fn element(&self, node: TermId) -> Result<String, Fault> {
        self.element_in(node, false)
    }

    fn element_in(&self, node: TermId, negated: bool) -> Result<String, Fault> {
        let kinds: Vec<&str> = ["triplePattern", "filter", "assign", "not"]
            .into_iter()
            .filter(|k| !self.values(node, SRL, k).is_empty())
            .collect();
        let [kind] = kinds[..] else {
            return Err(if kinds.is_empty() {
                format!(
                    "{} is not a rule body element (srl:triplePattern, srl:filter, srl:assign or srl:not)",
                    self.show(node)
                )
            } else {
                format!(
                    "a body element has both srl:{} and srl:{}",
                    kinds[0], kinds[1]
                )
            });
        };
        let value = self.one(node, SRL, kind)?;
        match kind {
            "triplePattern" => self.triple(value, false),
            "filter" => Ok(format!("FILTER({})", self.expression(value)?)),
            "assign" if negated => {
                Err("a negation holds triple patterns and filters only, not srl:assign".to_owned())
            }
            "assign" => {
                let var = self.variable(self.one(value, SRL, "assignVar")?)?;
                let expr = self.expression(self.one(value, SRL, "assignValue")?)?;
                Ok(format!("SET({var} := {expr})"))
            }
            "not" if negated => Err("a negation inside a negation".to_owned()),
            _ => {
                let inner = self
                    .list(value)?
                    .into_iter()
                    .map(|e| self.element_in(e, true))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(format!("NOT {{ {} }}", inner.join(" ")))
            }
        }
    }

    // ---- rules and rule sets: srl-sh:ruleShape, dataBlockShape, ruleSetShape ----

    /// A rule's SRL text under `name` (`RULE <name>`, or unnamed); `None` for a deactivated rule.
    pub fn rule(&self, node: TermId, name: Option<&str>) -> Result<Option<String>, Fault> {
        if let Some(d) = self.at_most_one(node, SH, "deactivated")? {
            if self.dict.display(d) == format!("\"true\"^^<{XSD_BOOLEAN}>") {
                return Ok(None);
            }
        }
        let text = self.at_most_one(node, SRL, "text")?;
        let head = self.at_most_one(node, SRL, "head")?;
        let body = self.at_most_one(node, SRL, "body")?;
        match (text, head, body) {
            (Some(t), None, None) => self.rule_text(node, t).map(Some),
            (None, Some(head), Some(body)) => {
                let heads = (self.list(head)?.into_iter())
                    .map(|h| self.template(h))
                    .collect::<Result<Vec<_>, _>>()?;
                let body = (self.list(body)?.into_iter())
                    .map(|e| self.element(e))
                    .collect::<Result<Vec<_>, _>>()?;
                let name = name.map_or(String::new(), |n| format!("<{n}> "));
                Ok(Some(format!(
                    "RULE {name}{{\n  {}\n}} WHERE {{\n  {}\n}}\n",
                    heads.join("\n  "),
                    body.join("\n  ")
                )))
            }
            (Some(_), _, _) => {
                Err("a rule has srl:text and srl:head or srl:body as well".to_owned())
            }
            (None, None, _) => Err(format!("{} has no srl:head", self.show(node))),
            (None, _, None) => Err(format!("{} has no srl:body", self.show(node))),
        }
    }

    /// A rule given as SRL text (`srl:text`), with the prefixes its `sh:prefixes` declare in front.
    fn rule_text(&self, node: TermId, text: TermId) -> Result<String, Fault> {
        let TermRef::Literal { lexical, .. } = self.dict.get(text) else {
            return Err("srl:text is not a string".to_owned());
        };
        let mut out = String::new();
        for holder in self.values(node, SH, "prefixes") {
            for decl in self.values(holder, SH, "declare") {
                let prefix = self.one(decl, SH, "prefix")?;
                let ns = self.one(decl, SH, "namespace")?;
                match (self.dict.get(prefix), self.dict.get(ns)) {
                    (TermRef::Literal { lexical: p, .. }, TermRef::Literal { lexical: n, .. }) => {
                        out.push_str(&format!("PREFIX {p}: <{n}>\n"));
                    }
                    _ => {
                        return Err(
                            "an sh:declare's sh:prefix and sh:namespace must be literals"
                                .to_owned(),
                        );
                    }
                }
            }
        }
        out.push_str(lexical);
        out.push('\n');
        Ok(out)
    }

    /// A data block: the `DATA { … }` of a node's `srl:data` lists (`None` when they are empty).
    pub fn data_block(&self, node: TermId) -> Result<Option<String>, Fault> {
        let mut triples = Vec::new();
        for list in self.values(node, SRL, "data") {
            for item in self.list(list)? {
                triples.push(self.data_item(item)?);
            }
        }
        Ok((!triples.is_empty()).then(|| format!("DATA {{\n  {}\n}}\n", triples.join("\n  "))))
    }

    /// A rule set's rules (`srl:rules` lists, in order).
    fn rules_of(&self, node: TermId) -> Result<Vec<TermId>, Fault> {
        let mut rules = Vec::new();
        for list in self.values(node, SRL, "rules") {
            rules.extend(self.list(list)?);
        }
        Ok(rules)
    }

    /// Checks a whole rule set (the shape tests' entry point): its data block and every rule.
    pub fn rule_set(&self, node: TermId) -> Result<(), Fault> {
        self.data_block(node)?;
        for r in self.rules_of(node)? {
            self.rule(r, None)?;
        }
        Ok(())
    }
}

/// `ns + local` as the messages write it.
fn short(ns: &str, local: &str) -> String {
    let prefix = match ns {
        SRL => "srl",
        SH => "sh",
        SHNEX => "shnex",
        RDF => "rdf",
        _ => return format!("<{ns}{local}>"),
    };
    format!("{prefix}:{local}")
}

/// SPARQL's built-in functions, in the spelling the SPARQL grammar uses; a `sparql:` name matches one ignoring
/// case, `-` and `_` (`sparql:encode-for-uri` is `ENCODE_FOR_URI`).
const BUILT_INS: &[&str] = &[
    "STR",
    "LANG",
    "LANGMATCHES",
    "LANGDIR",
    "DATATYPE",
    "BOUND",
    "IRI",
    "URI",
    "BNODE",
    "RAND",
    "ABS",
    "CEIL",
    "FLOOR",
    "ROUND",
    "CONCAT",
    "STRLEN",
    "UCASE",
    "LCASE",
    "ENCODE_FOR_URI",
    "CONTAINS",
    "STRSTARTS",
    "STRENDS",
    "STRBEFORE",
    "STRAFTER",
    "YEAR",
    "MONTH",
    "DAY",
    "HOURS",
    "MINUTES",
    "SECONDS",
    "TIMEZONE",
    "TZ",
    "NOW",
    "UUID",
    "STRUUID",
    "MD5",
    "SHA1",
    "SHA256",
    "SHA384",
    "SHA512",
    "COALESCE",
    "IF",
    "STRLANG",
    "STRLANGDIR",
    "STRDT",
    "sameTerm",
    "isIRI",
    "isURI",
    "isBlank",
    "isLiteral",
    "isNumeric",
    "hasLang",
    "hasLangDir",
    "isTRIPLE",
    "TRIPLE",
    "SUBJECT",
    "PREDICATE",
    "OBJECT",
    "REGEX",
    "SUBSTR",
    "REPLACE",
];

/// A `sparql:` function or operator applied to its arguments, as SPARQL text.
fn call(name: &str, args: &[String]) -> Result<String, Fault> {
    let binary = match name {
        "add" => Some("+"),
        "subtract" => Some("-"),
        "multiply" => Some("*"),
        "divide" => Some("/"),
        "equal" | "equals" => Some("="),
        "not-equal" => Some("!="),
        "less-than" => Some("<"),
        "greater-than" => Some(">"),
        "less-than-or-equal" => Some("<="),
        "greater-than-or-equal" => Some(">="),
        "logical-and" | "and" => Some("&&"),
        "logical-or" | "or" => Some("||"),
        _ => None,
    };
    if let Some(op) = binary {
        // Associative operators take two or more operands; the others exactly two.
        let associative = matches!(op, "+" | "*" | "&&" | "||");
        if args.len() == 2 || associative && args.len() > 2 {
            return Ok(format!("({})", args.join(&format!(" {op} "))));
        }
        return Err(format!(
            "sparql:{name} takes two operands, not {}",
            args.len()
        ));
    }
    let unary = match name {
        "logical-not" | "not" => Some("!"),
        "unary-minus" => Some("-"),
        "unary-plus" => Some("+"),
        _ => None,
    };
    if let Some(op) = unary {
        return match args {
            [a] => Ok(format!("({op}{a})")),
            _ => Err(format!(
                "sparql:{name} takes one operand, not {}",
                args.len()
            )),
        };
    }
    let plain = |s: &str| s.replace(['-', '_'], "").to_ascii_lowercase();
    match BUILT_INS.iter().find(|b| plain(b) == plain(name)) {
        Some(b) => Ok(format!("{b}({})", args.join(", "))),
        None => Err(format!(
            "sparql:{name} is not a SPARQL function or operator this reader knows"
        )),
    }
}

/// The RDF-syntax rule sets of one graph as rule texts (`source` names where the graph came from, for ids of
/// blank rule sets; `origin` gives each rule's origin from its node's text), with the problems found.
fn translate(
    graph: Graph<'_>,
    source: &str,
    origin: &dyn Fn(&str) -> Origin,
    texts: &mut Vec<RuleText>,
    errors: &mut Vec<RuleError>,
) {
    let dict = graph.dict;
    let fault = |id: &str, message: String| RuleError::Srl {
        rule: id.to_owned(),
        code: codes::RDF_SYNTAX,
        message: format!("(RDF syntax, {source}) {message}"),
        help: HELP.to_owned(),
        at: None,
    };
    let (Some(rdf_type), srl_rules) = (
        graph.id(&format!("{RDF}type")),
        graph.id(&format!("{SRL}rules")),
    ) else {
        return;
    };
    // Rule sets: typed srl:RuleSet, or holding srl:rules; rules typed srl:Rule outside every set are sets of one.
    let mut sets: Vec<TermId> = Vec::new();
    if let Some(class) = graph.id(&format!("{SRL}RuleSet")) {
        sets.extend(
            graph
                .index
                .range(&[None, Some(rdf_type), Some(class)])
                .iter()
                .map(|t| t[0]),
        );
    }
    if let Some(p) = srl_rules {
        sets.extend(
            graph
                .index
                .range(&[None, Some(p), None])
                .iter()
                .map(|t| t[0]),
        );
    }
    sets.sort_by(|a, b| crate::output::rdf::cmp_terms(dict, *a, *b));
    sets.dedup();
    let mut members = hashbrown::HashSet::new();
    let mut blank_sets = 0;
    let mut lone = Vec::new();
    for &set in &sets {
        let set_id = if graph.is_iri(set) {
            iri_of(dict, set)
        } else {
            blank_sets += 1;
            format!("{source}#ruleset-{blank_sets}")
        };
        match graph.data_block(set) {
            Ok(Some(text)) => {
                let id = format!("{set_id}#data");
                texts.push(RuleText {
                    origin: origin(&id),
                    id,
                    language: Language::Srl,
                    text: format!("# srl:data of the rule set {set_id} (RDF syntax)\n{text}"),
                });
            }
            Ok(None) => {}
            Err(e) => errors.push(fault(&set_id, format!("its srl:data: {e}"))),
        }
        let rules = match graph.rules_of(set) {
            Ok(r) => r,
            Err(e) => {
                errors.push(fault(&set_id, format!("its srl:rules: {e}")));
                continue;
            }
        };
        for (n, rule) in rules.into_iter().enumerate() {
            members.insert(rule);
            one_rule(
                graph,
                rule,
                &format!("{set_id}#{}", n + 1),
                (&set_id, source),
                origin,
                texts,
                errors,
            );
        }
    }
    if let Some(class) = graph.id(&format!("{SRL}Rule")) {
        lone.extend(
            (graph
                .index
                .range(&[None, Some(rdf_type), Some(class)])
                .iter())
            .map(|t| t[0])
            .filter(|r| !members.contains(r)),
        );
    }
    lone.sort_by(|a, b| crate::output::rdf::cmp_terms(dict, *a, *b));
    for (n, rule) in lone.into_iter().enumerate() {
        one_rule(
            graph,
            rule,
            &format!("{source}#rule-{}", n + 1),
            (source, source),
            origin,
            texts,
            errors,
        );
    }
}

/// One rule of a rule set (`fallback`: its id when its node is blank; `set`, `source`: its rule set's id and
/// where the graph came from).
fn one_rule(
    graph: Graph<'_>,
    rule: TermId,
    fallback: &str,
    (set, source): (&str, &str),
    origin: &dyn Fn(&str) -> Origin,
    texts: &mut Vec<RuleText>,
    errors: &mut Vec<RuleError>,
) {
    let named = graph.is_iri(rule).then(|| iri_of(graph.dict, rule));
    let id = named.clone().unwrap_or_else(|| fallback.to_owned());
    match graph.rule(rule, named.as_deref()) {
        Ok(Some(text)) => texts.push(RuleText {
            origin: origin(&id),
            id: id.clone(),
            language: Language::Srl,
            text: format!("# srl:Rule {id} of the rule set {set} (RDF syntax)\n{text}"),
        }),
        Ok(None) => {} // sh:deactivated true
        Err(e) => errors.push(RuleError::Srl {
            rule: id.clone(),
            code: codes::RDF_SYNTAX,
            message: format!("(RDF syntax, {source}) {e}"),
            help: HELP.to_owned(),
            at: None,
        }),
    }
}

fn iri_of(dict: &Dictionary, node: TermId) -> String {
    match dict.get(node) {
        TermRef::Iri(i) => i.to_string(),
        _ => dict.display(node),
    }
}

/// Whether a rules file is RDF (its rule sets in the `srl:` vocabulary) by its extension.
pub fn is_rdf_file(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e, "ttl" | "trig" | "nt" | "nq"))
}

/// The rule sets of an RDF rules file; a file that does not parse, or holds no rule set, is an error.
pub fn from_file(path: &Path, texts: &mut Vec<RuleText>, errors: &mut Vec<RuleError>) {
    let unreadable = |reason: String| RuleError::Unreadable {
        path: path.to_owned(),
        reason,
    };
    let mut loader = Loader::new();
    if let Err(e) = loader.load_source(
        &DataSource::File(path.to_owned()),
        &LoadOptions::default(),
        &NoProgress,
    ) {
        errors.push(unreadable(format!("{e}")));
        return;
    }
    let store = loader.finish();
    let before = (texts.len(), errors.len());
    let file = path.display().to_string();
    for (g, index) in store.quads.graphs() {
        let origin = |node: &str| Origin::Translated {
            path: path.to_owned(),
            node: node.to_owned(),
        };
        let source = if g == TermId::DEFAULT_GRAPH {
            file.clone()
        } else {
            format!("{file}#{}", store.dict.display(g))
        };
        let written = Written::default();
        translate(
            Graph::new(&store.dict, index, &written),
            &source,
            &origin,
            texts,
            errors,
        );
    }
    if (texts.len(), errors.len()) == before {
        errors.push(unreadable(format!(
            "it holds no rule set of SHACL 1.2 Rules' RDF syntax (a node typed <{SRL}RuleSet> or with <{SRL}rules>)"
        )));
    }
}

/// The RDF-syntax rule sets stored in the data (of one named graph when `only` is given), like `f:rule` values.
pub fn from_store(
    store: &Store,
    only: Option<TermId>,
    texts: &mut Vec<RuleText>,
    errors: &mut Vec<RuleError>,
) {
    // Nothing to look for when the data never mentions the vocabulary.
    if store.dict.lookup_iri(&format!("{SRL}rules")).is_none()
        && store.dict.lookup_iri(&format!("{SRL}RuleSet")).is_none()
        && store.dict.lookup_iri(&format!("{SRL}Rule")).is_none()
    {
        return;
    }
    for (g, index) in store.quads.graphs() {
        if only.is_some_and(|o| o != g) {
            continue;
        }
        let graph_name = (g != TermId::DEFAULT_GRAPH).then(|| store.dict.display(g));
        let source = match &graph_name {
            Some(name) => format!("data graph {name}"),
            None => "data".to_owned(),
        };
        let origin = |node: &str| Origin::Stored {
            subject: node.to_owned(),
            graph: graph_name.clone(),
        };
        let written = Written::default();
        translate(
            Graph::new(&store.dict, index, &written),
            &source,
            &origin,
            texts,
            errors,
        );
    }
}
