//! This module defines the `@context` of a JSON-LD rule: prefixes, terms (with `"@type": "@id"` coercion or an
//! `@path`), `@vocab`, `@type` aliases, and the expansion of keys and values through them.

use hashbrown::HashMap;
use serde_json::Value;

/// What a term the context defines stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TermDef {
    /// The expanded IRI (`None` for a pure `@path` term).
    pub iri: Option<String>,
    /// `"@type": "@id"`: string values are IRIs.
    pub coerce_id: bool,
    /// `"@type": datatype`: string values are literals of that datatype.
    pub datatype: Option<String>,
    /// `"@path"`: the term is a property path, in SPARQL syntax with compact IRIs.
    pub path: Option<String>,
}

/// A parsed `@context`.
#[derive(Clone, Debug, Default)]
pub struct Context {
    terms: HashMap<String, TermDef>,
    vocab: Option<String>,
    type_aliases: Vec<String>,
}

/// How a string expands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expanded {
    /// A variable (`?name`, without the `?`).
    Var(String),
    /// An IRI.
    Iri(String),
    /// `rdf:type` (from `@type` or an alias).
    Type,
}

/// Why a string does not expand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExpandError {
    /// `foo:bar` where `foo` is not defined.
    UndefinedPrefix(String),
    /// A bare word the context does not define (and no `@vocab`).
    UndefinedTerm(String),
    /// The context itself is malformed.
    BadContext(String),
}

impl Context {
    /// A prefix the context defines (a term naming a namespace ending in `/` or `#`), alphabetically first: for
    /// messages that show how to write a compact IRI.
    pub fn some_prefix(&self) -> Option<&str> {
        let mut prefixes: Vec<&str> = self
            .terms
            .iter()
            .filter(|(_, d)| {
                d.iri
                    .as_deref()
                    .is_some_and(|i| i.ends_with('/') || i.ends_with('#'))
            })
            .map(|(k, _)| k.as_str())
            .collect();
        prefixes.sort_unstable();
        prefixes.first().copied()
    }

    /// Parses a context value: an object, an array of objects, or null. Remote contexts (strings) are refused.
    pub fn parse(value: Option<&Value>) -> Result<Self, ExpandError> {
        let mut cx = Context::default();
        match value {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) => {
                for item in items {
                    cx.merge(item)?;
                }
            }
            Some(v) => cx.merge(v)?,
        }
        Ok(cx)
    }

    fn merge(&mut self, value: &Value) -> Result<(), ExpandError> {
        let Value::Object(map) = value else {
            return Err(ExpandError::BadContext(format!(
                "a context must be an object (remote contexts are not fetched), found {value}"
            )));
        };
        // Plain IRI definitions first, so compact IRIs in other definitions can use them.
        let mut pending: Vec<(&String, &Value)> = Vec::new();
        for (k, v) in map {
            match (k.as_str(), v) {
                ("@vocab", Value::String(s)) => self.vocab = Some(s.clone()),
                ("@vocab", Value::Null) => self.vocab = None,
                ("@version" | "@protected", _) => {}
                // A default language or direction would tag plain strings; the engine does not apply them, so a
                // rule that declares one would match (or derive) something other than it says.
                ("@language" | "@direction" | "@base", _) => {
                    return Err(ExpandError::BadContext(format!(
                        "{k} in a rule's context is not supported: write the language on each value ({{\"@value\": …, \"@language\": …}}) and IRIs in full or compact form"
                    )));
                }
                (_, Value::String(s)) if s == "@type" => self.type_aliases.push(k.clone()),
                (k, Value::String(s))
                    if !k.starts_with('@') && (s.contains("://") || s.starts_with("urn:")) =>
                {
                    self.terms.insert(
                        k.to_owned(),
                        TermDef {
                            iri: Some(s.clone()),
                            coerce_id: false,
                            datatype: None,
                            path: None,
                        },
                    );
                }
                (k, _) if k.starts_with('@') => {
                    return Err(ExpandError::BadContext(format!(
                        "{k} is not supported in a rule's context"
                    )));
                }
                _ => pending.push((k, v)),
            }
        }
        for (k, v) in pending {
            let def = match v {
                Value::String(s) => TermDef {
                    iri: Some(self.expand_iri(s)?),
                    coerce_id: false,
                    datatype: None,
                    path: None,
                },
                Value::Object(o) => {
                    if let Some(bad) = o
                        .keys()
                        .find(|key| !matches!(key.as_str(), "@id" | "@type" | "@path"))
                    {
                        return Err(ExpandError::BadContext(format!(
                            "the term definition of {k} uses {bad}, which rules do not support (only \"@id\", \"@type\" and \"@path\")"
                        )));
                    }
                    let iri = match o.get("@id") {
                        Some(Value::String(s)) => Some(self.expand_iri(s)?),
                        None => None,
                        Some(other) => {
                            return Err(ExpandError::BadContext(format!(
                                "\"@id\" of {k} must be a string, found {other}"
                            )));
                        }
                    };
                    let (coerce_id, datatype) = match o.get("@type") {
                        Some(Value::String(t)) if t == "@id" || t == "@vocab" => (true, None),
                        Some(Value::String(t)) => (false, Some(self.expand_iri(t)?)),
                        _ => (false, None),
                    };
                    let path = match o.get("@path") {
                        Some(Value::String(p)) => Some(p.clone()),
                        _ => None,
                    };
                    if iri.is_none() && path.is_none() {
                        return Err(ExpandError::BadContext(format!(
                            "the term {k} needs an \"@id\" or a \"@path\""
                        )));
                    }
                    TermDef {
                        iri,
                        coerce_id,
                        datatype,
                        path,
                    }
                }
                other => {
                    return Err(ExpandError::BadContext(format!(
                        "the term {k} has an unsupported definition {other}"
                    )));
                }
            };
            self.terms.insert(k.clone(), def);
        }
        Ok(())
    }

    /// A term's definition.
    pub fn term(&self, name: &str) -> Option<&TermDef> {
        self.terms.get(name)
    }

    /// Whether `key` means `rdf:type`.
    pub fn is_type_key(&self, key: &str) -> bool {
        key == "@type"
            || key == "type" && !self.terms.contains_key("type")
            || self.type_aliases.iter().any(|a| a == key)
    }

    /// The prefixes the context defines (name, IRI), for error messages and `<…>` display.
    pub fn prefix(&self, name: &str) -> Option<&str> {
        self.terms.get(name).and_then(|d| d.iri.as_deref())
    }

    /// Expands an IRI-valued string: `<abs>`, `prefix:local` with a defined prefix, an absolute IRI, or a defined
    /// term. A bare word uses `@vocab` when there is one.
    pub fn expand_iri(&self, s: &str) -> Result<String, ExpandError> {
        if let Some(inner) = s.strip_prefix('<').and_then(|r| r.strip_suffix('>')) {
            return Ok(inner.to_owned());
        }
        if let Some(def) = self.terms.get(s) {
            if let Some(iri) = &def.iri {
                return Ok(iri.clone());
            }
        }
        if let Some((prefix, local)) = s.split_once(':') {
            if let Some(ns) = self.prefix(prefix) {
                return Ok(format!("{ns}{local}"));
            }
            if local.starts_with("//")
                || matches!(prefix, "urn" | "mailto" | "tag" | "did" | "data" | "file")
            {
                return Ok(s.to_owned());
            }
            return Err(ExpandError::UndefinedPrefix(s.to_owned()));
        }
        match &self.vocab {
            Some(v) => Ok(format!("{v}{s}")),
            None => Err(ExpandError::UndefinedTerm(s.to_owned())),
        }
    }

    /// Expands a key or a `@type` value: variables, `@type`, IRIs.
    pub fn expand(&self, s: &str) -> Result<Expanded, ExpandError> {
        if let Some(v) = s.strip_prefix('?') {
            return Ok(Expanded::Var(v.to_owned()));
        }
        if self.is_type_key(s) {
            return Ok(Expanded::Type);
        }
        self.expand_iri(s).map(Expanded::Iri)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cx(v: Value) -> Context {
        Context::parse(Some(&v)).unwrap()
    }

    #[test]
    fn prefixes_terms_and_vocab_expand() {
        let c = cx(
            json!({"ex": "http://example.org/", "name": "ex:name", "knows": {"@id": "ex:knows", "@type": "@id"}, "a": "@type"}),
        );
        assert_eq!(
            c.expand("ex:knows").unwrap(),
            Expanded::Iri("http://example.org/knows".into())
        );
        assert_eq!(
            c.expand("name").unwrap(),
            Expanded::Iri("http://example.org/name".into())
        );
        assert!(c.term("knows").unwrap().coerce_id);
        assert_eq!(c.expand("a").unwrap(), Expanded::Type);
        assert_eq!(c.expand("?x").unwrap(), Expanded::Var("x".into()));
        assert_eq!(
            c.expand("http://other.org/p").unwrap(),
            Expanded::Iri("http://other.org/p".into())
        );
        assert_eq!(
            c.expand("foo:bar"),
            Err(ExpandError::UndefinedPrefix("foo:bar".into()))
        );
        assert_eq!(
            c.expand("bare"),
            Err(ExpandError::UndefinedTerm("bare".into()))
        );
        let v = cx(json!({"@vocab": "http://schema.org/"}));
        assert_eq!(
            v.expand("Person").unwrap(),
            Expanded::Iri("http://schema.org/Person".into())
        );
    }

    #[test]
    fn remote_contexts_are_refused() {
        assert!(Context::parse(Some(&json!("http://schema.org/"))).is_err());
    }
}
