//! This module defines the lowering of the JSON-LD `where` language (node maps, keyword arrays, annotations,
//! the filter language) into the query algebra — the same `ir::Op` SPARQL bodies lower to.

use hashbrown::HashMap;
use serde_json::{Map, Value};

use crate::ir::{
    Aggregate, AggregateKind, CmpOp, Expr, Func, GraphTerm, NumOp, Op, PathExpr, PatternTerm,
    TriplePattern, VarId, VarSet, VarTable,
};
use crate::store::{Dictionary, LiteralKind, TermId, well_known as wk};

use super::context::{Context, ExpandError, Expanded};
use super::number::{self, Number};
use super::sexpr::{self, SExpr};

/// Why a `where` clause does not lower; [`super::compile`] turns these into rule errors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WhereError {
    /// A string that does not expand (`foo:x` with `foo` undefined, or a bare key the context lacks).
    Expand(ExpandError),
    /// An unquoted operand with an undefined prefix in a filter.
    FilterPrefix(String),
    /// A bare word in a filter.
    /// A bare word, and a prefix the context defines (for the rewrite).
    BareWord(String, String),
    /// An `@`-key with no meaning in its position.
    UnknownKey {
        /// The key.
        key: String,
        /// Where it was found.
        position: &'static str,
    },
    /// A keyword array whose keyword is unknown.
    UnknownKeyword(String),
    /// An unknown filter function.
    UnknownFunction(String),
    /// Anything else malformed.
    Shape(String),
    /// A filter expression nests deeper than its limit.
    TooDeep,
    /// An `@path`'s brackets nest deeper than [`sexpr::MAX_NESTING`].
    PathTooDeep,
}

impl From<sexpr::SExprError> for WhereError {
    fn from(e: sexpr::SExprError) -> Self {
        match e {
            sexpr::SExprError::Shape(message) => WhereError::Shape(message),
            sexpr::SExprError::TooDeep => WhereError::TooDeep,
        }
    }
}

impl From<ExpandError> for WhereError {
    fn from(e: ExpandError) -> Self {
        WhereError::Expand(e)
    }
}

type R<T> = Result<T, WhereError>;

const RDF_REIFIES: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#reifies";

/// The most operands a filter's `+ - * /` takes, as deep as SPARQL's operators may nest (one level each).
const MAX_OPERANDS: usize = crate::rules::sparql::scan::MAX_DEPTH;

/// The most `|` an `@path` may have, as SPARQL's (each alternative is a level of nesting).
const MAX_PATH_ALTERNATIVES: usize = crate::rules::sparql::scan::MAX_DEPTH;

/// The most `/` an `@path` may have, as SPARQL's sequence paths.
const MAX_PATH_STEPS: usize = crate::rules::sparql::scan::MAX_STEPS;
const XSD: &str = "http://www.w3.org/2001/XMLSchema#";

/// Lowers `where` clauses with one context, interning constants into a dictionary.
pub struct Lowerer<'a> {
    cx: &'a Context,
    dict: &'a mut Dictionary,
    /// The variables.
    pub vars: VarTable,
    /// Names in scope, innermost last.
    scopes: Vec<HashMap<String, VarId>>,
    graph: GraphTerm,
    /// Conditions value objects put on their variables, added to the enclosing group's filters.
    pending: Vec<Expr>,
}

impl<'a> Lowerer<'a> {
    /// A lowerer for one rule (or query).
    pub fn new(cx: &'a Context, dict: &'a mut Dictionary) -> Self {
        Self {
            cx,
            dict,
            vars: VarTable::new(),
            scopes: vec![HashMap::new()],
            graph: GraphTerm::Default,
            pending: Vec::new(),
        }
    }

    /// The variables of the outermost scope, by name.
    pub fn root_scope(&self) -> &HashMap<String, VarId> {
        &self.scopes[0]
    }

    /// The dictionary.
    pub fn dict(&mut self) -> &mut Dictionary {
        self.dict
    }

    fn var(&mut self, name: &str) -> VarId {
        if let Some(&v) = self.scopes.last().and_then(|s| s.get(name)) {
            return v;
        }
        let v = self.vars.named(name);
        self.scopes
            .last_mut()
            .expect("a scope")
            .insert(name.to_owned(), v);
        v
    }

    fn iri(&mut self, iri: &str) -> TermId {
        self.dict.intern_iri(iri)
    }

    fn literal(&mut self, lexical: &str, datatype: &str) -> TermId {
        let dt = self.iri(datatype);
        self.dict.intern_literal(lexical, LiteralKind::Typed(dt))
    }

    /// A JSON scalar as a literal: string → xsd:string, integer → xsd:integer, other number → xsd:double,
    /// boolean → xsd:boolean.
    fn scalar(&mut self, v: &Value) -> R<TermId> {
        Ok(match v {
            Value::String(s) => self.dict.intern_literal(s, LiteralKind::Simple),
            Value::Bool(b) => {
                self.literal(if *b { "true" } else { "false" }, &format!("{XSD}boolean"))
            }
            Value::Number(n) => match number::canonical(&n.to_string(), false) {
                Number::Integer(lexical) => self.literal(&lexical, &format!("{XSD}integer")),
                Number::Double(lexical) => self.literal(&lexical, &format!("{XSD}double")),
            },
            other => return Err(WhereError::Shape(format!("{other} is not a literal value"))),
        })
    }

    /// The whole `where` value: a node map, or an array of node maps and keyword arrays.
    pub fn where_clause(&mut self, value: &Value) -> R<Op> {
        match value {
            Value::Array(items) => self.group(items),
            Value::Object(_) => self.group(std::slice::from_ref(value)),
            other => Err(WhereError::Shape(format!(
                "\"where\" is a node map or an array, found {other}"
            ))),
        }
    }

    /// A group of elements, with SPARQL group semantics: filters apply to the whole group, BIND and OPTIONAL to
    /// what comes before them.
    fn group(&mut self, items: &[Value]) -> R<Op> {
        let mut acc = Op::Unit;
        let mut filters: Vec<Expr> = Vec::new();
        for item in items {
            match item {
                Value::Object(map) => {
                    let mut ops = Vec::new();
                    self.node(map, None, &mut ops)?;
                    acc = Op::join(acc, Op::join_all(ops));
                    filters.append(&mut self.pending);
                }
                Value::Array(arr) => {
                    let Some(Value::String(keyword)) = arr.first() else {
                        return Err(WhereError::Shape(format!(
                            "an array in \"where\" starts with a keyword such as \"filter\", found {item}"
                        )));
                    };
                    let rest = &arr[1..];
                    match keyword.to_ascii_lowercase().as_str() {
                        "filter" => {
                            for e in rest {
                                filters.push(self.expr_value(e)?);
                            }
                        }
                        "bind" => {
                            if rest.len() % 2 != 0 {
                                return Err(WhereError::Shape("[\"bind\", \"?v\", expression, …] takes variable/expression pairs".to_owned()));
                            }
                            for pair in rest.chunks(2) {
                                let Value::String(name) = &pair[0] else {
                                    return Err(WhereError::Shape(format!(
                                        "bind to a \"?variable\", found {}",
                                        pair[0]
                                    )));
                                };
                                let Some(name) = name.strip_prefix('?') else {
                                    return Err(WhereError::Shape(format!(
                                        "bind to a \"?variable\", found \"{name}\""
                                    )));
                                };
                                let expr = self.expr_value(&pair[1])?;
                                let var = self.var(name);
                                acc = Op::Extend {
                                    input: Box::new(acc),
                                    var,
                                    expr,
                                };
                            }
                        }
                        "values" => {
                            for spec in rest {
                                let values = self.values(spec)?;
                                acc = Op::join(acc, values);
                            }
                        }
                        "union" => {
                            let mut branches = Op::Empty;
                            for branch in rest {
                                let b = match branch {
                                    Value::Array(inner) => self.group(inner)?,
                                    other => self.group(std::slice::from_ref(other))?,
                                };
                                branches = Op::union(branches, b);
                            }
                            acc = Op::join(acc, branches);
                        }
                        "optional" => {
                            let right = self.group(rest)?;
                            acc = Op::left_join(acc, right, None);
                        }
                        "minus" => {
                            let right = self.group(rest)?;
                            acc = Op::minus(acc, right);
                        }
                        "exists" => {
                            let inner = self.group(rest)?;
                            filters.push(Expr::Exists(Box::new(inner)));
                        }
                        "not-exists" | "notexists" => {
                            let inner = self.group(rest)?;
                            filters.push(Expr::Not(Box::new(Expr::Exists(Box::new(inner)))));
                        }
                        "query" => {
                            for q in rest {
                                let sub = self.subquery(q)?;
                                acc = Op::join(acc, sub);
                            }
                        }
                        "graph" => {
                            let Some(Value::String(g)) = rest.first() else {
                                return Err(WhereError::Shape(
                                    "[\"graph\", \"<iri>\" or \"?g\", patterns…]".to_owned(),
                                ));
                            };
                            let graph = match self.cx.expand(g)? {
                                Expanded::Var(v) => GraphTerm::Var(self.var(&v)),
                                Expanded::Iri(i) => GraphTerm::Named(self.iri(&i)),
                                Expanded::Type => {
                                    return Err(WhereError::Shape(
                                        "a graph name cannot be @type".to_owned(),
                                    ));
                                }
                            };
                            let outer = std::mem::replace(&mut self.graph, graph);
                            let inner = self.group(&rest[1..]);
                            self.graph = outer;
                            acc = Op::join(acc, Op::join(Op::GraphName(graph), inner?));
                        }
                        _ => return Err(WhereError::UnknownKeyword(keyword.clone())),
                    }
                }
                other => {
                    return Err(WhereError::Shape(format!(
                        "a \"where\" element is a node map or a keyword array, found {other}"
                    )));
                }
            }
        }
        let cond = Expr::all(filters);
        Ok(Op::filter(acc, cond))
    }

    fn subject(&mut self, v: Option<&Value>) -> R<PatternTerm> {
        Ok(match v {
            None => PatternTerm::Var(self.vars.hidden("n")),
            Some(Value::String(s)) => match self.cx.expand(s)? {
                Expanded::Var(v) => PatternTerm::Var(self.var(&v)),
                Expanded::Iri(i) => PatternTerm::Const(self.iri(&i)),
                Expanded::Type => {
                    return Err(WhereError::Shape("\"@id\" cannot be @type".to_owned()));
                }
            },
            Some(other) => {
                return Err(WhereError::Shape(format!(
                    "\"@id\" is a string, found {other}"
                )));
            }
        })
    }

    /// The class terms of an `@type` value (one string or an array of them): variables or IRIs.
    fn classes(&mut self, value: &Value) -> Result<Vec<PatternTerm>, WhereError> {
        let items: Vec<&Value> = match value {
            Value::Array(a) => a.iter().collect(),
            v => vec![v],
        };
        items
            .into_iter()
            .map(|c| {
                let Value::String(c) = c else {
                    return Err(WhereError::Shape(format!("a type is a string, found {c}")));
                };
                match self.cx.expand(c)? {
                    Expanded::Var(v) => Ok(PatternTerm::Var(self.var(&v))),
                    Expanded::Iri(i) => Ok(PatternTerm::Const(self.iri(&i))),
                    Expanded::Type => Err(WhereError::Shape("a type cannot be @type".to_owned())),
                }
            })
            .collect()
    }

    fn pattern(&self, s: PatternTerm, p: PatternTerm, o: PatternTerm) -> Op {
        Op::Pattern(TriplePattern {
            terms: [s, p, o],
            graph: self.graph,
        })
    }

    /// A node map: its patterns go to `ops`; returns its subject.
    fn node(
        &mut self,
        map: &Map<String, Value>,
        subject: Option<PatternTerm>,
        ops: &mut Vec<Op>,
    ) -> R<PatternTerm> {
        let s = match subject {
            Some(s) => s,
            None => self.subject(map.get("@id"))?,
        };
        for (key, value) in map {
            match key.as_str() {
                "@id" => {}
                "@reifies" => {
                    // Claim-first: this node is the reifier; each edge it names is matched as asserted too.
                    let edges: Vec<&Value> = match value {
                        Value::Array(a) => a.iter().collect(),
                        v => vec![v],
                    };
                    for edge in edges {
                        let Value::Object(edge_map) = edge else {
                            return Err(WhereError::Shape(format!(
                                "\"@reifies\" takes a node map naming one edge, found {edge}"
                            )));
                        };
                        let mut triples = Vec::new();
                        let edge_subject = self.subject(edge_map.get("@id"))?;
                        for (k, v) in edge_map {
                            if k == "@id" {
                                continue;
                            }
                            if self.cx.is_type_key(k) {
                                // `"@type": C` in the edge map is the edge `s rdf:type C`.
                                for class in self.classes(v)? {
                                    let t = [
                                        edge_subject.clone(),
                                        PatternTerm::Const(wk::RDF_TYPE),
                                        class,
                                    ];
                                    ops.push(self.pattern(
                                        t[0].clone(),
                                        t[1].clone(),
                                        t[2].clone(),
                                    ));
                                    triples.push(t);
                                }
                            } else if k.starts_with('@') {
                                return Err(WhereError::UnknownKey {
                                    key: k.to_owned(),
                                    position: "the edge a \"@reifies\" names",
                                });
                            }
                        }
                        self.edges(edge_map, edge_subject, ops, &mut triples)?;
                        if triples.is_empty() {
                            return Err(WhereError::Shape(format!(
                                "\"@reifies\" names no edge: give it a predicate key, as in {{\"@id\": \"?a\", \"ex:knows\": {{\"@id\": \"?b\"}}}}; found {edge}"
                            )));
                        }
                        for t in triples {
                            let reifies = PatternTerm::Const(self.iri(RDF_REIFIES));
                            ops.push(self.pattern(
                                s.clone(),
                                reifies,
                                PatternTerm::Triple(Box::new(t)),
                            ));
                        }
                    }
                }
                k if self.cx.is_type_key(k) => {
                    for class in self.classes(value)? {
                        let p = PatternTerm::Const(wk::RDF_TYPE);
                        ops.push(self.pattern(s.clone(), p, class));
                    }
                }
                k if k.starts_with('@') => {
                    return Err(WhereError::UnknownKey {
                        key: k.to_owned(),
                        position: "a node pattern",
                    });
                }
                _ => {}
            }
        }
        // The predicate keys, in order.
        let mut triples = Vec::new();
        self.edges(map, s.clone(), ops, &mut triples)?;
        Ok(s)
    }

    /// The predicate keys of a node map: one pattern per (key, object); `triples` collects them (for `@reifies`).
    fn edges(
        &mut self,
        map: &Map<String, Value>,
        s: PatternTerm,
        ops: &mut Vec<Op>,
        triples: &mut Vec<[PatternTerm; 3]>,
    ) -> R<()> {
        for (key, value) in map {
            if key.starts_with('@') || self.cx.is_type_key(key) {
                continue;
            }
            let def = self.cx.term(key).cloned();
            let objects: Vec<&Value> = match value {
                Value::Array(a) => a.iter().collect(),
                v => vec![v],
            };
            if let Some(path) = def.as_ref().and_then(|d| d.path.clone()) {
                let path = parse_path(&path, self.cx)?;
                let path = self.path_ids(&path);
                for v in objects {
                    let (o, annotation) = self.object(v, def.as_ref(), ops)?;
                    if annotation.is_some() {
                        return Err(WhereError::Shape(format!(
                            "\"@annotation\" on the @path term {key}: a path relates two nodes through several facts, not one annotated edge; annotate a plain predicate instead"
                        )));
                    }
                    ops.push(Op::path(
                        s.clone(),
                        path.clone(),
                        o,
                        self.graph,
                        &mut self.vars,
                    ));
                }
                continue;
            }
            let p = match self.cx.expand(key)? {
                Expanded::Var(v) => PatternTerm::Var(self.var(&v)),
                Expanded::Iri(i) => PatternTerm::Const(self.iri(&i)),
                Expanded::Type => continue,
            };
            for v in objects {
                let (o, annotation) = self.object(v, def.as_ref(), ops)?;
                ops.push(self.pattern(s.clone(), p.clone(), o.clone()));
                let triple = [s.clone(), p.clone(), o];
                if let Some(a) = annotation {
                    self.annotation(&a, triple.clone(), ops)?;
                }
                triples.push(triple);
            }
        }
        Ok(())
    }

    /// `@annotation` on an edge: `?r rdf:reifies <<( s p o )>>` plus the annotation's own keys on `?r`.
    fn annotation(
        &mut self,
        a: &Map<String, Value>,
        edge: [PatternTerm; 3],
        ops: &mut Vec<Op>,
    ) -> R<()> {
        let r = self.subject(a.get("@id"))?;
        let reifies = PatternTerm::Const(self.iri(RDF_REIFIES));
        ops.push(self.pattern(r.clone(), reifies, PatternTerm::Triple(Box::new(edge))));
        self.node(a, Some(r), ops)?;
        Ok(())
    }

    /// An object value: its pattern term, and its `@annotation` if it has one.
    fn object(
        &mut self,
        v: &Value,
        def: Option<&super::context::TermDef>,
        ops: &mut Vec<Op>,
    ) -> R<(PatternTerm, Option<Map<String, Value>>)> {
        Ok(match v {
            Value::String(s) if s.starts_with('?') => (PatternTerm::Var(self.var(&s[1..])), None),
            Value::String(s) if def.is_some_and(|d| d.coerce_id) => {
                (PatternTerm::Const(self.iri(&self.cx.expand_iri(s)?)), None)
            }
            Value::String(s) if def.is_some_and(|d| d.datatype.is_some()) => {
                let dt = def.and_then(|d| d.datatype.clone()).expect("checked");
                (PatternTerm::Const(self.literal(s, &dt)), None)
            }
            Value::String(_) | Value::Number(_) | Value::Bool(_) => {
                (PatternTerm::Const(self.scalar(v)?), None)
            }
            Value::Object(m) if m.contains_key("@value") => {
                for k in m.keys() {
                    if !matches!(k.as_str(), "@value" | "@type" | "@language" | "@annotation") {
                        return Err(WhereError::UnknownKey {
                            key: k.clone(),
                            position: "a value object",
                        });
                    }
                }
                let term = self.value_object(m, ops)?;
                (term, annotation_of(m)?)
            }
            Value::Object(m) => {
                let subject = self.subject(m.get("@id"))?;
                let annotation = annotation_of(m)?;
                let mut rest = m.clone();
                rest.remove("@annotation");
                self.node(&rest, Some(subject.clone()), ops)?;
                (subject, annotation)
            }
            other => return Err(WhereError::Shape(format!("{other} is not an object value"))),
        })
    }

    /// `{"@value": v, "@type": dt}` or `{"@value": v, "@language": l}`; a variable `@value` is constrained by a
    /// filter on its datatype or language.
    fn value_object(&mut self, m: &Map<String, Value>, ops: &mut Vec<Op>) -> R<PatternTerm> {
        let value = &m["@value"];
        let datatype = match m.get("@type") {
            Some(Value::String(t)) => Some(self.cx.expand_iri(t)?),
            Some(other) => {
                return Err(WhereError::Shape(format!(
                    "\"@type\" of a value is a string, found {other}"
                )));
            }
            None => None,
        };
        let language = match m.get("@language") {
            Some(Value::String(l)) => Some(l.to_ascii_lowercase()),
            Some(other) => {
                return Err(WhereError::Shape(format!(
                    "\"@language\" is a string, found {other}"
                )));
            }
            None => None,
        };
        if let Value::String(s) = value {
            if let Some(name) = s.strip_prefix('?') {
                let var = self.var(name);
                let check = match (&datatype, &language) {
                    (Some(dt), _) => Some(Expr::SameTerm(
                        Box::new(Expr::Call(Func::Datatype, vec![Expr::Var(var)])),
                        Box::new(Expr::Const(self.iri(dt))),
                    )),
                    (None, Some(l)) => Some(Expr::Call(
                        Func::LangMatches,
                        vec![
                            Expr::Call(Func::Lang, vec![Expr::Var(var)]),
                            Expr::Const(self.dict.intern_literal(l, LiteralKind::Simple)),
                        ],
                    )),
                    _ => None,
                };
                if let Some(check) = check {
                    self.pending.push(check);
                }
                let _ = ops;
                return Ok(PatternTerm::Var(var));
            }
        }
        let lexical = match value {
            Value::String(s) => s.clone(),
            // The number's canonical form under its datatype, as JSON-LD data gives it.
            Value::Number(n) => {
                let double = datatype.as_deref() == Some(format!("{XSD}double").as_str());
                match number::canonical(&n.to_string(), double) {
                    Number::Integer(l) | Number::Double(l) => l,
                }
            }
            Value::Bool(b) => b.to_string(),
            other => {
                return Err(WhereError::Shape(format!(
                    "\"@value\" is a scalar, found {other}"
                )));
            }
        };
        Ok(PatternTerm::Const(match (datatype, language) {
            (Some(dt), _) => self.literal(&lexical, &dt),
            (None, Some(l)) => self.dict.intern_literal(
                &lexical,
                LiteralKind::Lang {
                    tag: &l,
                    direction: None,
                },
            ),
            (None, None) => match value {
                Value::String(s) => self.dict.intern_literal(s, LiteralKind::Simple),
                other => self.scalar(other)?,
            },
        }))
    }

    fn path_ids(&mut self, p: &PathText) -> PathExpr {
        match p {
            PathText::Link(i) => PathExpr::Link(self.iri(i)),
            PathText::Reverse(q) => PathExpr::Reverse(Box::new(self.path_ids(q))),
            PathText::Seq(a, b) => {
                PathExpr::Sequence(Box::new(self.path_ids(a)), Box::new(self.path_ids(b)))
            }
            PathText::Alt(a, b) => {
                PathExpr::Alternative(Box::new(self.path_ids(a)), Box::new(self.path_ids(b)))
            }
            PathText::Star(q) => PathExpr::ZeroOrMore(Box::new(self.path_ids(q))),
            PathText::Plus(q) => PathExpr::OneOrMore(Box::new(self.path_ids(q))),
            PathText::Opt(q) => PathExpr::ZeroOrOne(Box::new(self.path_ids(q))),
        }
    }

    /// `["values", ["?x", [1, 2]]]` or `["values", [["?x", "?y"], [[1, "a"], [2, "b"]]]]`.
    fn values(&mut self, spec: &Value) -> R<Op> {
        let Value::Array(parts) = spec else {
            return Err(WhereError::Shape(format!(
                "values take [\"?x\", [values…]], found {spec}"
            )));
        };
        let (names, rows): (Vec<&Value>, Vec<Vec<&Value>>) = match parts.as_slice() {
            [Value::String(_), Value::Array(vals)] => {
                (vec![&parts[0]], vals.iter().map(|x| vec![x]).collect())
            }
            [Value::Array(vars), Value::Array(rows)] => {
                let mut out = Vec::new();
                for r in rows {
                    let Value::Array(cells) = r else {
                        return Err(WhereError::Shape(format!(
                            "a values row is an array, found {r}"
                        )));
                    };
                    if cells.len() != vars.len() {
                        return Err(WhereError::Shape(format!(
                            "a values row has {} cells for {} variables",
                            cells.len(),
                            vars.len()
                        )));
                    }
                    out.push(cells.iter().collect());
                }
                (vars.iter().collect(), out)
            }
            _ => {
                return Err(WhereError::Shape(format!(
                    "values take [\"?x\", [values…]] or [[\"?x\", \"?y\"], [[…], …]], found {spec}"
                )));
            }
        };
        let mut vars = Vec::new();
        for n in names {
            match n {
                Value::String(s) if s.starts_with('?') => vars.push(self.var(&s[1..])),
                other => {
                    return Err(WhereError::Shape(format!(
                        "a values column is a \"?variable\", found {other}"
                    )));
                }
            }
        }
        let mut out = Vec::new();
        for r in rows {
            let mut row = Vec::new();
            for cell in r {
                row.push(match cell {
                    Value::Null => None,
                    Value::Object(m) if m.contains_key("@id") => match m.get("@id") {
                        Some(Value::String(s)) => Some(self.iri(&self.cx.expand_iri(s)?)),
                        _ => return Err(WhereError::Shape(format!("{cell} is not a reference"))),
                    },
                    Value::Object(m) if m.contains_key("@value") => {
                        match self.value_object(m, &mut Vec::new())? {
                            PatternTerm::Const(c) => Some(c),
                            _ => {
                                return Err(WhereError::Shape(
                                    "a values cell cannot be a variable".to_owned(),
                                ));
                            }
                        }
                    }
                    other => Some(self.scalar(other)?),
                });
            }
            out.push(row);
        }
        Ok(Op::Values {
            vars,
            rows: out.into(),
        })
    }

    /// `["query", {"select": […], "where": …, "groupBy": […], "having": […]}]`.
    fn subquery(&mut self, q: &Value) -> R<Op> {
        let Value::Object(m) = q else {
            return Err(WhereError::Shape(format!(
                "a subquery is an object, found {q}"
            )));
        };
        for k in m.keys() {
            if !matches!(
                k.as_str(),
                "select"
                    | "selectDistinct"
                    | "where"
                    | "groupBy"
                    | "having"
                    | "orderBy"
                    | "limit"
                    | "offset"
            ) {
                return Err(WhereError::UnknownKey {
                    key: k.clone(),
                    position: "a subquery",
                });
            }
        }
        let distinct = m.contains_key("selectDistinct");
        let select = m.get("select").or_else(|| m.get("selectDistinct"));
        let Some(Value::Array(select)) = select else {
            return Err(WhereError::Shape(
                "a subquery has \"select\": [\"?a\", \"(as (count ?b) ?n)\", …]".to_owned(),
            ));
        };
        // Projected names are shared with the enclosing scope; everything else inside is the subquery's own.
        let mut projected: Vec<(String, Option<SExpr>)> = Vec::new();
        for item in select {
            match item {
                Value::String(s) if s.starts_with('?') => projected.push((s[1..].to_owned(), None)),
                other => match sexpr::from_value(other)? {
                    SExpr::List(l)
                        if l.len() == 3
                            && matches!(&l[0], SExpr::Word(w) if w.eq_ignore_ascii_case("as")) =>
                    {
                        let SExpr::Var(name) = &l[2] else {
                            return Err(WhereError::Shape("(as expression ?variable)".to_owned()));
                        };
                        projected.push((name.clone(), Some(l[1].clone())));
                    }
                    _ => {
                        return Err(WhereError::Shape(format!(
                            "a select item is \"?v\" or \"(as expression ?v)\", found {other}"
                        )));
                    }
                },
            }
        }
        let outer: Vec<VarId> = projected.iter().map(|(n, _)| self.var(n)).collect();
        let scope: HashMap<String, VarId> = projected
            .iter()
            .map(|(n, _)| n.clone())
            .zip(outer.iter().copied())
            .collect();
        self.scopes.push(scope);
        let result = (|| -> R<Op> {
            let body = match m.get("where") {
                Some(w) => self.where_clause(w)?,
                None => Op::Unit,
            };
            let keys: Vec<VarId> = match m.get("groupBy") {
                None => Vec::new(),
                Some(Value::Array(g)) => g
                    .iter()
                    .map(|k| match k {
                        Value::String(s) if s.starts_with('?') => Ok(self.var(&s[1..])),
                        other => Err(WhereError::Shape(format!(
                            "groupBy takes \"?variables\", found {other}"
                        ))),
                    })
                    .collect::<R<_>>()?,
                Some(Value::String(s)) if s.starts_with('?') => vec![self.var(&s[1..])],
                Some(other) => {
                    return Err(WhereError::Shape(format!(
                        "groupBy takes \"?variables\", found {other}"
                    )));
                }
            };
            let mut aggregates: Vec<(VarId, Aggregate)> = Vec::new();
            let mut binds: Vec<(VarId, Expr)> = Vec::new();
            for ((name, expr), var) in projected.iter().zip(&outer) {
                if let Some(e) = expr {
                    let e = self.expr(e, Some(&mut aggregates))?;
                    let _ = name;
                    binds.push((*var, e));
                }
            }
            let having: Vec<Expr> = match m.get("having") {
                None => Vec::new(),
                Some(Value::Array(h)) => h
                    .iter()
                    .map(|e| {
                        sexpr::from_value(e)
                            .map_err(WhereError::from)
                            .and_then(|s| self.expr(&s, Some(&mut aggregates)))
                    })
                    .collect::<R<_>>()?,
                Some(other) => vec![
                    sexpr::from_value(other)
                        .map_err(WhereError::from)
                        .and_then(|s| self.expr(&s, Some(&mut aggregates)))?,
                ],
            };
            let grouped = !keys.is_empty() || !aggregates.is_empty();
            let mut op = if grouped {
                Op::Group {
                    input: Box::new(body),
                    keys,
                    aggregates,
                }
            } else {
                body
            };
            for h in having {
                op = Op::filter(op, h);
            }
            for (var, e) in binds {
                op = Op::Extend {
                    input: Box::new(op),
                    var,
                    expr: e,
                };
            }
            // "orderBy": ["?v", "(desc ?w)", …] (it matters to GROUP_CONCAT above, and to LIMIT).
            let order: Vec<Value> = match m.get("orderBy") {
                None => Vec::new(),
                Some(Value::Array(items)) => items.clone(),
                Some(one) => vec![one.clone()],
            };
            let mut keys: Vec<(Expr, bool)> = Vec::new();
            for item in &order {
                let e = sexpr::from_value(item)?;
                let (inner, desc) = match &e {
                    SExpr::List(l)
                        if l.len() == 2
                            && matches!(&l[0], SExpr::Word(w) if w.eq_ignore_ascii_case("desc") || w.eq_ignore_ascii_case("asc")) =>
                    {
                        let desc =
                            matches!(&l[0], SExpr::Word(w) if w.eq_ignore_ascii_case("desc"));
                        (l[1].clone(), desc)
                    }
                    _ => (e.clone(), false),
                };
                keys.push((self.expr(&inner, None)?, desc));
            }
            if !keys.is_empty() {
                op = Op::OrderBy {
                    input: Box::new(op),
                    keys,
                };
            }
            op = Op::Project {
                input: Box::new(op),
                vars: outer.clone(),
            };
            if distinct {
                op = Op::Distinct(Box::new(op));
            }
            // LIMIT / OFFSET lower as in SPARQL; rule validation then rejects them with its reason.
            let count = |key: &str| -> R<Option<usize>> {
                match m.get(key) {
                    None => Ok(None),
                    Some(v) => v.as_u64().map(|n| Some(n as usize)).ok_or_else(|| {
                        WhereError::Shape(format!(
                            "\"{key}\" takes a non-negative integer, found {v}"
                        ))
                    }),
                }
            };
            let (limit, offset) = (count("limit")?, count("offset")?);
            if limit.is_some() || offset.is_some() {
                op = Op::Slice {
                    input: Box::new(op),
                    offset: offset.unwrap_or(0),
                    limit,
                };
            }
            Ok(op)
        })();
        self.scopes.pop();
        result
    }

    /// A filter or bind expression given as a JSON value.
    pub fn expr_value(&mut self, v: &Value) -> R<Expr> {
        let s = sexpr::from_value(v)?;
        self.expr(&s, None)
    }

    /// Lowers an S-expression; aggregates are allowed (and collected) only when `aggs` is given.
    fn expr(&mut self, e: &SExpr, mut aggs: Option<&mut Vec<(VarId, Aggregate)>>) -> R<Expr> {
        Ok(match e {
            SExpr::Var(v) => Expr::Var(self.var(v)),
            SExpr::Str(s) => Expr::Const(self.dict.intern_literal(s, LiteralKind::Simple)),
            SExpr::Bool(b) => Expr::Const(
                self.literal(if *b { "true" } else { "false" }, &format!("{XSD}boolean")),
            ),
            SExpr::Num(n) => {
                let dt = if n.contains(['e', 'E']) {
                    "double"
                } else if n.contains('.') {
                    "decimal"
                } else {
                    "integer"
                };
                let lexical = n.strip_prefix('+').unwrap_or(n);
                Expr::Const(self.literal(lexical, &format!("{XSD}{dt}")))
            }
            SExpr::Iri(i) => Expr::Const(self.iri(i)),
            SExpr::Word(w) => {
                if w.contains(':') {
                    match self.cx.expand_iri(w) {
                        Ok(i) => Expr::Const(self.iri(&i)),
                        Err(_) => return Err(WhereError::FilterPrefix(w.clone())),
                    }
                } else {
                    return Err(WhereError::BareWord(
                        w.clone(),
                        self.cx.some_prefix().unwrap_or("prefix").to_owned(),
                    ));
                }
            }
            SExpr::List(items) => {
                let Some(SExpr::Word(op)) = items.first() else {
                    return Err(WhereError::Shape(format!(
                        "an expression list starts with a function name, found {items:?}"
                    )));
                };
                let args = &items[1..];
                let lower = op.to_ascii_lowercase();
                if let Some(kind) = aggregate_kind(&lower, args) {
                    let Some(aggs) = aggs.as_deref_mut() else {
                        return Err(WhereError::Shape(format!(
                            "the aggregate {op} is allowed only in a subquery's select or having"
                        )));
                    };
                    let (distinct, rest) = match args.first() {
                        Some(SExpr::Word(d)) if d.eq_ignore_ascii_case("distinct") => {
                            (true, &args[1..])
                        }
                        _ => (false, args),
                    };
                    let (kind, expr) = match (kind, rest) {
                        (AggregateKind::Count, []) => (AggregateKind::CountAll, None),
                        (AggregateKind::Count, [SExpr::Word(w)]) if w == "*" => {
                            (AggregateKind::CountAll, None)
                        }
                        (AggregateKind::GroupConcat { .. }, [x, SExpr::Str(sep)]) => (
                            AggregateKind::GroupConcat {
                                separator: sep.clone(),
                            },
                            Some(self.expr(x, None)?),
                        ),
                        (k, [x]) => (k, Some(self.expr(x, None)?)),
                        _ => return Err(WhereError::Shape(format!("({op} …) takes one argument"))),
                    };
                    let var = self.vars.hidden("agg");
                    aggs.push((
                        var,
                        Aggregate {
                            kind,
                            expr,
                            distinct,
                        },
                    ));
                    return Ok(Expr::Var(var));
                }
                let mut a = Vec::with_capacity(args.len());
                for x in args {
                    a.push(self.expr(x, aggs.as_deref_mut())?);
                }
                self.call(op, &lower, a)?
            }
        })
    }

    fn call(&mut self, op: &str, lower: &str, mut a: Vec<Expr>) -> R<Expr> {
        let b = Box::new;
        let need = |n: usize, a: &[Expr]| -> R<()> {
            if a.len() == n {
                Ok(())
            } else {
                Err(WhereError::Shape(format!(
                    "({op} …) takes {n} argument(s), found {}",
                    a.len()
                )))
            }
        };
        let cmp = |c: CmpOp, a: Vec<Expr>| -> R<Expr> {
            if a.len() < 2 {
                return Err(WhereError::Shape(format!(
                    "({op} …) compares at least two values"
                )));
            }
            // Comparisons chain pairwise: (< a b c) is a < b and b < c.
            Ok(Expr::all(
                a.windows(2)
                    .map(|w| Expr::Compare(c, b(w[0].clone()), b(w[1].clone())))
                    .collect(),
            ))
        };
        let arith = |n: NumOp, a: Vec<Expr>| -> R<Expr> {
            // Left to right, one level per operand (numeric + and * are not associative in floating point).
            if a.len() > MAX_OPERANDS {
                return Err(WhereError::Shape(format!(
                    "({op} …) takes at most {MAX_OPERANDS} operands (it nests one level per operand): compute it in several binds"
                )));
            }
            let mut it = a.into_iter();
            let first = it
                .next()
                .ok_or_else(|| WhereError::Shape(format!("({op} …) needs arguments")))?;
            Ok(it.fold(first, |acc, x| Expr::Arith(n, b(acc), b(x))))
        };
        Ok(match lower {
            "=" => cmp(CmpOp::Eq, a)?,
            "!=" => cmp(CmpOp::Ne, a)?,
            "<" => cmp(CmpOp::Lt, a)?,
            "<=" => cmp(CmpOp::Le, a)?,
            ">" => cmp(CmpOp::Gt, a)?,
            ">=" => cmp(CmpOp::Ge, a)?,
            "+" => arith(NumOp::Add, a)?,
            "-" if a.len() == 1 => Expr::Neg(b(a.remove(0))),
            "-" => arith(NumOp::Sub, a)?,
            "*" => arith(NumOp::Mul, a)?,
            "/" => arith(NumOp::Div, a)?,
            "and" | "&&" => Expr::all(a),
            "or" | "||" => {
                Expr::any(a).ok_or_else(|| WhereError::Shape("(or …) needs arguments".into()))?
            }
            "not" | "!" => {
                need(1, &a)?;
                Expr::Not(b(a.remove(0)))
            }
            "if" => {
                need(3, &a)?;
                let (c, x, y) = (a.remove(0), a.remove(0), a.remove(0));
                Expr::If(b(c), b(x), b(y))
            }
            "coalesce" => Expr::Coalesce(a),
            "bound" => match a.as_slice() {
                [Expr::Var(v)] => Expr::Bound(*v),
                _ => return Err(WhereError::Shape("(bound ?variable)".to_owned())),
            },
            "in" | "not-in" | "notin" => {
                if a.is_empty() {
                    return Err(WhereError::Shape(format!("({op} value candidates…)")));
                }
                let x = a.remove(0);
                let e = Expr::In(b(x), a);
                if lower == "in" { e } else { Expr::Not(b(e)) }
            }
            "sameterm" => {
                need(2, &a)?;
                let (x, y) = (a.remove(0), a.remove(0));
                Expr::SameTerm(b(x), b(y))
            }
            "exists" | "not-exists" | "notexists" => {
                return Err(WhereError::Shape(format!(
                    "write ({op} …) as a keyword array: [\"{lower}\", patterns…]"
                )));
            }
            _ => {
                let f = match lower {
                    "str" => Func::Str,
                    "lang" => Func::Lang,
                    "langmatches" => Func::LangMatches,
                    "datatype" => Func::Datatype,
                    "iri" | "uri" => Func::Iri,
                    "bnode" => Func::BNode,
                    "rand" => Func::Rand,
                    "abs" => Func::Abs,
                    "ceil" => Func::Ceil,
                    "floor" => Func::Floor,
                    "round" => Func::Round,
                    "concat" => Func::Concat,
                    "substr" => Func::SubStr,
                    "strlen" => Func::StrLen,
                    "replace" => Func::Replace,
                    "ucase" => Func::UCase,
                    "lcase" => Func::LCase,
                    "encode_for_uri" | "encode-for-uri" => Func::EncodeForUri,
                    "contains" => Func::Contains,
                    "strstarts" => Func::StrStarts,
                    "strends" => Func::StrEnds,
                    "strbefore" => Func::StrBefore,
                    "strafter" => Func::StrAfter,
                    "year" => Func::Year,
                    "month" => Func::Month,
                    "day" => Func::Day,
                    "hours" => Func::Hours,
                    "minutes" => Func::Minutes,
                    "seconds" => Func::Seconds,
                    "timezone" => Func::Timezone,
                    "tz" => Func::Tz,
                    "now" => Func::Now,
                    "uuid" => Func::Uuid,
                    "struuid" => Func::StrUuid,
                    "md5" => Func::Md5,
                    "sha1" => Func::Sha1,
                    "sha256" => Func::Sha256,
                    "sha384" => Func::Sha384,
                    "sha512" => Func::Sha512,
                    "strlang" => Func::StrLang,
                    "strdt" => Func::StrDt,
                    "isiri" | "isuri" => Func::IsIri,
                    "isblank" => Func::IsBlank,
                    "isliteral" => Func::IsLiteral,
                    "isnumeric" => Func::IsNumeric,
                    "regex" => Func::Regex,
                    "triple" => Func::Triple,
                    "subject" => Func::Subject,
                    "predicate" => Func::Predicate,
                    "object" => Func::Object,
                    "istriple" => Func::IsTriple,
                    "langdir" => Func::LangDir,
                    "haslang" => Func::HasLang,
                    "haslangdir" => Func::HasLangDir,
                    "strlangdir" => Func::StrLangDir,
                    _ => match self.cx.expand_iri(op) {
                        Ok(iri) if iri.starts_with(XSD) => Func::Cast(self.iri(&iri)),
                        _ => return Err(WhereError::UnknownFunction(op.to_owned())),
                    },
                };
                Expr::Call(f, a)
            }
        })
    }

    /// The variables a body binds (for range restriction of heads).
    pub fn bound(op: &Op) -> VarSet {
        op.term_vars()
    }
}

fn annotation_of(m: &Map<String, Value>) -> R<Option<Map<String, Value>>> {
    match m.get("@annotation") {
        None => Ok(None),
        Some(Value::Object(a)) => Ok(Some(a.clone())),
        Some(other) => Err(WhereError::Shape(format!(
            "\"@annotation\" is a node map, found {other}"
        ))),
    }
}

fn aggregate_kind(name: &str, args: &[SExpr]) -> Option<AggregateKind> {
    let _ = args;
    Some(match name {
        "count" => AggregateKind::Count,
        "sum" => AggregateKind::Sum,
        "avg" => AggregateKind::Avg,
        "min" => AggregateKind::Min,
        "max" => AggregateKind::Max,
        "sample" => AggregateKind::Sample,
        "group-concat" | "groupconcat" | "group_concat" => AggregateKind::GroupConcat {
            separator: " ".to_owned(),
        },
        _ => return None,
    })
}

/// A property path as written in an `@path` term, its IRIs expanded.
#[derive(Clone, Debug, PartialEq)]
pub enum PathText {
    /// An IRI.
    Link(String),
    /// `^p`.
    Reverse(Box<PathText>),
    /// `p / q`.
    Seq(Box<PathText>, Box<PathText>),
    /// `p | q`.
    Alt(Box<PathText>, Box<PathText>),
    /// `p*`.
    Star(Box<PathText>),
    /// `p+`.
    Plus(Box<PathText>),
    /// `p?`.
    Opt(Box<PathText>),
}

/// Parses an `@path` (`ex:knows+`, `^ex:parent/ex:parent`, `(ex:a|ex:b)*`).
pub fn parse_path(text: &str, cx: &Context) -> R<PathText> {
    let chars: Vec<char> = text.chars().collect();
    // The parser recurses once per bracket, and the path's walks once per operator: bounded as SPARQL's are.
    let (mut depth, mut deepest) = (0usize, 0usize);
    for &c in &chars {
        match c {
            '(' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    if deepest > sexpr::MAX_NESTING {
        return Err(WhereError::PathTooDeep);
    }
    let count = |c: char| chars.iter().filter(|&&x| x == c).count();
    if count('|') > MAX_PATH_ALTERNATIVES || count('/') > MAX_PATH_STEPS {
        return Err(WhereError::Shape(format!(
            "the path {:?}… has more than {MAX_PATH_ALTERNATIVES} `|` or {MAX_PATH_STEPS} `/`: split it into several patterns or rules",
            chars.iter().take(40).collect::<String>()
        )));
    }
    let mut pos = 0;
    let p = alt(&chars, &mut pos, cx)?;
    skip_ws(&chars, &mut pos);
    if pos != chars.len() {
        return Err(WhereError::Shape(format!(
            "unexpected text in the path {text:?} at {pos}"
        )));
    }
    Ok(p)
}

fn skip_ws(c: &[char], pos: &mut usize) {
    while *pos < c.len() && c[*pos].is_whitespace() {
        *pos += 1;
    }
}

fn alt(c: &[char], pos: &mut usize, cx: &Context) -> R<PathText> {
    let mut left = seq(c, pos, cx)?;
    loop {
        skip_ws(c, pos);
        if *pos < c.len() && c[*pos] == '|' {
            *pos += 1;
            let right = seq(c, pos, cx)?;
            left = PathText::Alt(Box::new(left), Box::new(right));
        } else {
            return Ok(left);
        }
    }
}

fn seq(c: &[char], pos: &mut usize, cx: &Context) -> R<PathText> {
    let mut left = unary(c, pos, cx)?;
    loop {
        skip_ws(c, pos);
        if *pos < c.len() && c[*pos] == '/' {
            *pos += 1;
            let right = unary(c, pos, cx)?;
            left = PathText::Seq(Box::new(left), Box::new(right));
        } else {
            return Ok(left);
        }
    }
}

fn unary(c: &[char], pos: &mut usize, cx: &Context) -> R<PathText> {
    skip_ws(c, pos);
    let mut p = if *pos < c.len() && c[*pos] == '^' {
        *pos += 1;
        PathText::Reverse(Box::new(primary(c, pos, cx)?))
    } else {
        primary(c, pos, cx)?
    };
    // One modifier, as SPARQL's grammar has it (`p**` is no path there; `(p*)*` is).
    p = match c.get(*pos) {
        Some('*') => PathText::Star(Box::new(p)),
        Some('+') => PathText::Plus(Box::new(p)),
        Some('?') => PathText::Opt(Box::new(p)),
        _ => return Ok(p),
    };
    *pos += 1;
    if let Some(m @ ('*' | '+' | '?')) = c.get(*pos) {
        return Err(WhereError::Shape(format!(
            "a path step takes one of * + ?, and this one has a second `{m}` at {}: write (step{})* … with brackets, or one modifier",
            *pos,
            c[*pos - 1]
        )));
    }
    Ok(p)
}

fn primary(c: &[char], pos: &mut usize, cx: &Context) -> R<PathText> {
    skip_ws(c, pos);
    match c.get(*pos) {
        Some('(') => {
            *pos += 1;
            let p = alt(c, pos, cx)?;
            skip_ws(c, pos);
            if c.get(*pos) != Some(&')') {
                return Err(WhereError::Shape(
                    "a \"(\" in a path is never closed".to_owned(),
                ));
            }
            *pos += 1;
            Ok(p)
        }
        Some('<') => {
            let start = *pos;
            while *pos < c.len() && c[*pos] != '>' {
                *pos += 1;
            }
            *pos += 1;
            let s: String = c[start..(*pos).min(c.len())].iter().collect();
            Ok(PathText::Link(cx.expand_iri(&s)?))
        }
        Some(_) => {
            let start = *pos;
            while *pos < c.len()
                && !matches!(c[*pos], '/' | '|' | '*' | '+' | '?' | '(' | ')' | '^')
                && !c[*pos].is_whitespace()
            {
                *pos += 1;
            }
            let s: String = c[start..*pos].iter().collect();
            if s.is_empty() {
                return Err(WhereError::Shape("an empty step in a path".to_owned()));
            }
            Ok(PathText::Link(cx.expand_iri(&s)?))
        }
        None => Err(WhereError::Shape("a path ends too early".to_owned())),
    }
}
