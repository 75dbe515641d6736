//! This module defines the JSON reading of a JSON-LD rule that refuses a key given twice in one object (plain
//! JSON keeps the last, and the rule would silently lose what the first said).

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// Parses JSON text; a key repeated in an object is an error at its place (serde_json's line and column).
pub fn parse(text: &str) -> Result<Value, serde_json::Error> {
    serde_json::from_str::<Strict>(text).map(|s| s.0)
}

/// A JSON value read with unique keys.
struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

/// The key under which serde_json hands over a number's text (`arbitrary_precision`).
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
        Ok(Value::Number(n.into()))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
        Ok(Value::Number(n.into()))
    }

    fn visit_f64<E>(self, n: f64) -> Result<Value, E> {
        Ok(Number::from_f64(n).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_owned()))
    }

    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            // serde_json (`arbitrary_precision`) hands a number over as a map of one entry, its text under this
            // key: the number as written, every digit kept.
            if out.is_empty() && key == NUMBER_TOKEN {
                let text: String = map.next_value()?;
                return text
                    .parse::<Number>()
                    .map(Value::Number)
                    .map_err(de::Error::custom);
            }
            if out.contains_key(&key) {
                return Err(de::Error::custom(format!(
                    "the key \"{key}\" is given twice in one object (JSON keeps only the last); write its values once, as an array"
                )));
            }
            let Strict(v) = map.next_value()?;
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_given_twice_is_an_error_and_everything_else_reads_as_serde_json_reads_it() {
        let text = r#"{"a": [1, -2, 3.5, true, null, "x", {"b": {}}], "c": 18446744073709551615}"#;
        assert_eq!(
            parse(text).unwrap(),
            serde_json::from_str::<Value>(text).unwrap()
        );
        // A number keeps the digits it was written with, past 64 bits and past a double's (serde_json writes an
        // exponent with its sign).
        let big = parse(r#"[18446744073709551617, 1.50, 1e20, 123456789012345678901]"#).unwrap();
        let texts: Vec<String> = (big.as_array().unwrap().iter())
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            texts,
            [
                "18446744073709551617",
                "1.50",
                "1e+20",
                "123456789012345678901"
            ]
        );
        let e = parse("{\"where\": {\"ex:p\": 1,\n \"ex:p\": 2}}").unwrap_err();
        assert!(e.to_string().contains("\"ex:p\" is given twice"), "{e}");
        assert_eq!(e.line(), 2);
        // Nesting past serde_json's limit is still its recursion error.
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert!(
            parse(&deep)
                .unwrap_err()
                .to_string()
                .starts_with("recursion limit exceeded")
        );
    }
}
