//! This module defines the `insert` heads of JSON-LD rules: node maps with an `@id`, their keys and values, and
//! named-graph heads (`"@graph": "<iri>"` on a node, or `{"@id": g, "@graph": [nodes]}`).

use hashbrown::HashMap;
use serde_json::{Map, Value};

use crate::exec::datetime::DateTime;
use crate::exec::value::{parse_boolean, parse_decimal, parse_double, parse_integer};
use crate::ir::lower::TemplateTerm;
use crate::ir::{VarId, VarSet};
use crate::rules::Head;
use crate::rules::reifier::Minted;
use crate::store::{Dictionary, LiteralKind, TermId, TermRef, TermSource, well_known as wk};

use super::context::{Context, ExpandError, Expanded};
use super::number::{self, Number};

/// Why an `insert` does not make heads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeadError {
    /// A blank node `"_:b"` in a head (it would mint a fresh node per derivation).
    Blank,
    /// A head node without `@id` (it would mint a fresh node per derivation).
    Anonymous,
    /// `@edge` or `@reifies` in a head.
    Construct(String),
    /// An `@`-key with no meaning in a head.
    UnknownKey(String),
    /// A head variable the body does not bind.
    Unbound(String),
    /// A value object whose lexical form is not valid for its datatype.
    InvalidLiteral {
        /// The lexical form.
        value: String,
        /// The datatype IRI.
        datatype: String,
    },
    /// A string that does not expand.
    Expand(ExpandError),
    /// Anything else malformed.
    Shape(String),
}

impl From<ExpandError> for HeadError {
    fn from(e: ExpandError) -> Self {
        HeadError::Expand(e)
    }
}

/// Builds heads from an `insert` value; every problem found is returned.
pub struct HeadBuilder<'a> {
    /// The rule's id (it names the reifiers the heads' annotations mint).
    pub rule: &'a str,
    /// The rule's context.
    pub cx: &'a Context,
    /// The dictionary constants are interned into.
    pub dict: &'a mut Dictionary,
    /// The body's variables by name.
    pub scope: &'a HashMap<String, VarId>,
    /// The variables the body binds.
    pub bound: &'a VarSet,
    /// Every variable name the heads use (bound or not).
    pub vars: Vec<String>,
    /// The heads built.
    pub heads: Vec<Head>,
    /// The problems found.
    pub errors: Vec<HeadError>,
}

impl HeadBuilder<'_> {
    /// Adds the heads of an `insert` value.
    pub fn insert(&mut self, v: &Value) {
        match v {
            Value::Array(items) => items.iter().for_each(|i| self.top(i)),
            other => self.top(other),
        }
    }

    fn top(&mut self, v: &Value) {
        match v {
            Value::Object(m) => {
                // A named-graph object: {"@id": g, "@graph": [nodes]}.
                if let (Some(Value::String(g)), Some(Value::Array(nodes))) =
                    (m.get("@id"), m.get("@graph"))
                {
                    if m.len() > 2 {
                        self.errors.push(HeadError::Shape(
                            "a named-graph object holds only \"@id\" and \"@graph\"".to_owned(),
                        ));
                    }
                    match self.cx.expand_iri(g) {
                        Ok(iri) => {
                            let gid = self.dict.intern_iri(&iri);
                            for n in nodes {
                                match n {
                                    Value::Object(nm) => {
                                        let _ = self.node(nm, Some(gid));
                                    }
                                    other => self.errors.push(HeadError::Shape(format!(
                                        "a graph's node is an object, found {other}"
                                    ))),
                                }
                            }
                        }
                        Err(e) => self.errors.push(e.into()),
                    }
                    return;
                }
                let _ = self.node(m, None);
            }
            other => self.errors.push(HeadError::Shape(format!(
                "\"insert\" holds node maps, found {other}"
            ))),
        }
    }

    fn var(&mut self, name: &str) -> Option<TemplateTerm> {
        if !self.vars.iter().any(|h| h == name) {
            self.vars.push(name.to_owned());
        }
        match self.scope.get(name) {
            Some(v) if self.bound.contains(*v) => Some(TemplateTerm::Var(*v)),
            _ => {
                let e = HeadError::Unbound(name.to_owned());
                if !self.errors.contains(&e) {
                    self.errors.push(e);
                }
                None
            }
        }
    }

    fn iri_or_var(&mut self, s: &str) -> Option<TemplateTerm> {
        // `_:label` is a blank node, not a compact IRI with an undefined prefix `_`.
        if s.starts_with("_:") {
            if !self.errors.contains(&HeadError::Blank) {
                self.errors.push(HeadError::Blank);
            }
            return None;
        }
        match self.cx.expand(s) {
            Ok(Expanded::Var(v)) => self.var(&v),
            Ok(Expanded::Iri(i)) => Some(TemplateTerm::Const(self.dict.intern_iri(&i))),
            Ok(Expanded::Type) => Some(TemplateTerm::Const(wk::RDF_TYPE)),
            Err(e) => {
                self.errors.push(e.into());
                None
            }
        }
    }

    /// A head node; returns its subject term.
    fn node(&mut self, m: &Map<String, Value>, graph: Option<TermId>) -> Option<TemplateTerm> {
        let subject = match m.get("@id") {
            Some(Value::String(s)) => self.iri_or_var(s),
            Some(other) => {
                self.errors.push(HeadError::Shape(format!(
                    "\"@id\" is a string, found {other}"
                )));
                None
            }
            None => {
                self.errors.push(HeadError::Anonymous);
                None
            }
        };
        let graph = match m.get("@graph") {
            Some(Value::String(g)) => match self.cx.expand_iri(g) {
                Ok(i) => Some(self.dict.intern_iri(&i)),
                Err(e) => {
                    self.errors.push(e.into());
                    graph
                }
            },
            Some(other) => {
                self.errors.push(HeadError::Shape(format!(
                    "\"@graph\" on a head node names one graph, found {other}"
                )));
                graph
            }
            None => graph,
        };
        self.properties(m, subject.clone(), graph);
        subject
    }

    /// The heads of a node map's keys (all but `@id` and `@graph`), on `subject`.
    fn properties(
        &mut self,
        m: &Map<String, Value>,
        subject: Option<TemplateTerm>,
        graph: Option<TermId>,
    ) {
        for (key, value) in m {
            let predicate = match key.as_str() {
                "@id" | "@graph" => continue,
                "@edge" | "@reifies" => {
                    self.errors.push(HeadError::Construct(key.clone()));
                    continue;
                }
                "@annotation" => {
                    self.errors.push(HeadError::Shape(
                        "\"@annotation\" annotates a property's value: put it in the value object, {\"@id\": …, \"@annotation\": {…}}".to_owned(),
                    ));
                    continue;
                }
                k if self.cx.is_type_key(k) => Some(TemplateTerm::Const(wk::RDF_TYPE)),
                k if k.starts_with('@') => {
                    self.errors.push(HeadError::UnknownKey(k.to_owned()));
                    continue;
                }
                k => self.iri_or_var(k),
            };
            let is_type = matches!(predicate, Some(TemplateTerm::Const(wk::RDF_TYPE)));
            let def = self.cx.term(key).cloned();
            let values: Vec<&Value> = match value {
                Value::Array(a) => a.iter().collect(),
                v => vec![v],
            };
            for v in values {
                // {"@id": …, "@annotation": {…}}: the edge, and its annotation on a minted (or named) reifier.
                let (v, annotation) = match v {
                    Value::Object(vm) if vm.contains_key("@annotation") => {
                        let mut plain = vm.clone();
                        let annotation = plain.remove("@annotation");
                        (Value::Object(plain), annotation)
                    }
                    v => (v.clone(), None),
                };
                let object = self.object(&v, is_type, def.as_ref(), graph);
                if let (Some(s), Some(p), Some(o)) = (subject.clone(), predicate.clone(), object) {
                    self.heads.push(Head {
                        terms: [s.clone(), p.clone(), o.clone()],
                        graph,
                    });
                    if let Some(a) = annotation {
                        self.annotation(&a, [s, p, o], graph);
                    }
                }
            }
        }
    }

    /// An `@annotation` value (a node map, or an array of them) on `edge`: its reifier (the map's `@id`, or one
    /// minted for the rule, the graph and the edge) reifies the edge and carries the map's keys.
    fn annotation(&mut self, a: &Value, edge: [TemplateTerm; 3], graph: Option<TermId>) {
        let maps: Vec<&Value> = match a {
            Value::Array(items) => items.iter().collect(),
            v => vec![v],
        };
        for m in maps {
            let Value::Object(m) = m else {
                self.errors.push(HeadError::Shape(format!(
                    "\"@annotation\" holds node maps, found {m}"
                )));
                continue;
            };
            if m.contains_key("@graph") {
                self.errors.push(HeadError::Shape(
                    "an annotation is in the graph of its edge; \"@graph\" goes on the edge's node"
                        .to_owned(),
                ));
                continue;
            }
            let reifier = match m.get("@id") {
                Some(Value::String(id)) => self.iri_or_var(id),
                Some(other) => {
                    self.errors.push(HeadError::Shape(format!(
                        "\"@id\" is a string, found {other}"
                    )));
                    None
                }
                None => {
                    let graph_iri = graph.map(|g| match self.dict.term(g) {
                        TermRef::Iri(i) => i.to_string(),
                        _ => String::new(),
                    });
                    let minted = Minted::new(self.rule, graph_iri.as_deref(), edge.clone());
                    Some(TemplateTerm::Reifier(Box::new(minted)))
                }
            };
            if let Some(r) = &reifier {
                self.heads.push(Head {
                    terms: [
                        r.clone(),
                        TemplateTerm::Const(wk::RDF_REIFIES),
                        TemplateTerm::Triple(Box::new(edge.clone())),
                    ],
                    graph,
                });
            }
            self.properties(m, reifier, graph);
        }
    }

    fn object(
        &mut self,
        v: &Value,
        is_type: bool,
        def: Option<&super::context::TermDef>,
        graph: Option<TermId>,
    ) -> Option<TemplateTerm> {
        match v {
            Value::String(s) if s.starts_with('?') => self.var(&s[1..]),
            Value::String(s) if is_type || def.is_some_and(|d| d.coerce_id) => self.iri_or_var(s),
            Value::String(s) if def.is_some_and(|d| d.datatype.is_some()) => {
                let dt = def.and_then(|d| d.datatype.clone()).expect("checked");
                self.typed(s, &dt)
            }
            Value::String(s) => Some(TemplateTerm::Const(
                self.dict.intern_literal(s, LiteralKind::Simple),
            )),
            Value::Bool(b) => self.typed(
                if *b { "true" } else { "false" },
                "http://www.w3.org/2001/XMLSchema#boolean",
            ),
            // The canonical form is a valid literal of its type by construction (an integer past 64 bits too,
            // which the range check of a written `@value` would refuse).
            Value::Number(n) => {
                let (lexical, dt) = match number::canonical(&n.to_string(), false) {
                    Number::Integer(l) => (l, "http://www.w3.org/2001/XMLSchema#integer"),
                    Number::Double(l) => (l, "http://www.w3.org/2001/XMLSchema#double"),
                };
                Some(self.literal(&lexical, dt))
            }
            Value::Object(m) if m.contains_key("@value") => {
                for k in m.keys() {
                    match k.as_str() {
                        "@value" | "@type" | "@language" => {}
                        "@annotation" => {
                            self.errors.push(HeadError::Construct(k.clone()));
                            return None;
                        }
                        other => {
                            self.errors.push(HeadError::UnknownKey(other.to_owned()));
                            return None;
                        }
                    }
                }
                let lexical = match &m["@value"] {
                    Value::String(s) if s.starts_with('?') => {
                        self.errors.push(HeadError::Shape(format!(
                            "a head value object needs a literal \"@value\"; to write ?{} with a datatype, BIND(STRDT(STR(?x), dt) AS ?y) in the body",
                            &s[1..]
                        )));
                        return None;
                    }
                    Value::String(s) => s.clone(),
                    // A number typed xsd:double or xsd:integer in its canonical form, as JSON-LD data gives it;
                    // under another datatype (`xsd:decimal`, …) as written, a valid literal of it.
                    Value::Number(n) => {
                        let dt = match m.get("@type") {
                            Some(Value::String(t)) => self.cx.expand_iri(t).ok(),
                            _ => None,
                        };
                        let xsd = "http://www.w3.org/2001/XMLSchema#";
                        match dt.as_deref().and_then(|d| d.strip_prefix(xsd)) {
                            Some(local @ ("double" | "integer")) => {
                                match number::canonical(&n.to_string(), local == "double") {
                                    Number::Integer(l) | Number::Double(l) => l,
                                }
                            }
                            _ => n.to_string(),
                        }
                    }
                    Value::Bool(b) => b.to_string(),
                    other => {
                        self.errors.push(HeadError::Shape(format!(
                            "\"@value\" is a scalar, found {other}"
                        )));
                        return None;
                    }
                };
                match (m.get("@type"), m.get("@language")) {
                    (Some(Value::String(t)), _) => match self.cx.expand_iri(t) {
                        Ok(dt) => self.typed(&lexical, &dt),
                        Err(e) => {
                            self.errors.push(e.into());
                            None
                        }
                    },
                    (None, Some(Value::String(l))) => {
                        match oxilangtag::LanguageTag::parse(l.to_ascii_lowercase()) {
                            Ok(tag) => Some(TemplateTerm::Const(self.dict.intern_literal(
                                &lexical,
                                LiteralKind::Lang {
                                    tag: tag.as_str(),
                                    direction: None,
                                },
                            ))),
                            Err(_) => {
                                self.errors.push(HeadError::InvalidLiteral {
                                    value: l.clone(),
                                    datatype: "a language tag".to_owned(),
                                });
                                None
                            }
                        }
                    }
                    _ => Some(TemplateTerm::Const(
                        self.dict.intern_literal(&lexical, LiteralKind::Simple),
                    )),
                }
            }
            Value::Object(m) => {
                // A reference; more keys derive the referenced node's own triples.
                if m.keys().any(|k| k != "@id") {
                    self.node(m, graph)
                } else {
                    match m.get("@id") {
                        Some(Value::String(s)) => self.iri_or_var(s),
                        _ => {
                            self.errors.push(HeadError::Anonymous);
                            None
                        }
                    }
                }
            }
            other => {
                self.errors
                    .push(HeadError::Shape(format!("{other} is not a head value")));
                None
            }
        }
    }

    /// A typed literal, its lexical form checked for the XSD types the engine knows.
    fn typed(&mut self, lexical: &str, datatype: &str) -> Option<TemplateTerm> {
        if !valid_lexical(lexical, datatype) {
            self.errors.push(HeadError::InvalidLiteral {
                value: lexical.to_owned(),
                datatype: datatype.to_owned(),
            });
            return None;
        }
        Some(self.literal(lexical, datatype))
    }

    /// The constant typed literal, unchecked (see [`Self::typed`]).
    fn literal(&mut self, lexical: &str, datatype: &str) -> TemplateTerm {
        let dt = self.dict.intern_iri(datatype);
        TemplateTerm::Const(self.dict.intern_literal(lexical, LiteralKind::Typed(dt)))
    }
}

/// Whether `lexical` is a valid form of `datatype`, for the XSD types the engine knows (any form of another
/// type is taken as it is): a rule head's literal, in either rule language.
pub(crate) fn valid_lexical(lexical: &str, datatype: &str) -> bool {
    let local = datatype.strip_prefix("http://www.w3.org/2001/XMLSchema#");
    match local {
        // Every type derived from xsd:integer, its value in the type's range (`"300"^^xsd:byte` is not).
        Some(l) if crate::exec::value::is_integer_type(datatype) => {
            parse_integer(lexical).is_some_and(|i| crate::exec::value::integer_in_range(l, i))
        }
        Some("decimal") => parse_decimal(lexical).is_some(),
        Some("double" | "float") => parse_double(lexical).is_some(),
        Some("boolean") => parse_boolean(lexical).is_some(),
        Some("dateTime") => DateTime::parse(lexical, wk::XSD_DATE_TIME).is_some(),
        Some("date") => DateTime::parse(lexical, wk::XSD_DATE).is_some(),
        _ => true,
    }
}
