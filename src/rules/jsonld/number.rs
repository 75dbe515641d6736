//! This module defines the literal a JSON number stands for in a JSON-LD rule: the one JSON-LD's RDF conversion
//! gives the same number in JSON-LD data, so that a rule's constant names the term the data loads.

/// A JSON number as JSON-LD writes it in RDF: an `xsd:integer` or an `xsd:double`, in canonical form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Number {
    /// Digits, with a `-` for a negative number: a number with no fraction below 10^20 in magnitude.
    Integer(String),
    /// `D.DDDE±N` (at least one digit after the point), every digit of the JSON text kept: any other number.
    Double(String),
}

/// The canonical literal of the JSON number `text` (JSON syntax: a sign, digits, a fraction, an exponent), a
/// double whatever its value when `always_double` (its datatype is `xsd:double`); a double written as `text` is
/// when it cannot be put in canonical form (its exponent does not fit in 64 bits), as the data loader does.
///
/// The number is read as `0.DIGITS × 10^exp` without leading or trailing zeros: it is an integer when every
/// digit stands before the point (`exp ≥ DIGITS`) and `exp ≤ 20`, as oxjsonld, which loads JSON-LD data, decides
/// (JSON-LD 1.1's conversion of an object to RDF draws the line at 10^21; a rule and its data must agree, so the
/// data's reading is the rule's). The text is the number as written: serde_json keeps it (`arbitrary_precision`),
/// so no digit is lost to a 64-bit float.
pub fn canonical(text: &str, always_double: bool) -> Number {
    canonical_form(text, always_double).unwrap_or_else(|| Number::Double(text.to_owned()))
}

fn canonical_form(text: &str, always_double: bool) -> Option<Number> {
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (mantissa, exp) = unsigned.split_once(['e', 'E']).unwrap_or((unsigned, "0"));
    let mut exp: i64 = exp.parse().ok()?;
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if !(int.bytes().chain(frac.bytes())).all(|b| b.is_ascii_digit()) || int.len() + frac.len() == 0
    {
        return None;
    }
    // 0.DIGITS × 10^exp: the digits without leading and trailing zeros, the exponent moved to match.
    let all: String = format!("{int}{frac}");
    let lead = all.bytes().take_while(|&b| b == b'0').count();
    let digits = all[lead..].trim_end_matches('0');
    if digits.is_empty() {
        return Some(if always_double {
            Number::Double("0.0E0".to_owned())
        } else {
            Number::Integer("0".to_owned())
        });
    }
    // One step, as the point moves past the integer digits less the leading zeros.
    exp = exp.checked_add(i64::try_from(int.len()).ok()? - i64::try_from(lead).ok()?)?;
    let count = i64::try_from(digits.len()).ok()?;
    let sign = if negative { "-" } else { "" };
    Some(if !always_double && exp >= count && exp <= 20 {
        let zeros = usize::try_from(exp - count).ok()?;
        Number::Integer(format!("{sign}{digits}{}", "0".repeat(zeros)))
    } else {
        let (first, rest) = digits.split_at(1);
        let rest = if rest.is_empty() { "0" } else { rest };
        Number::Double(format!("{sign}{first}.{rest}E{}", exp.checked_sub(1)?))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::load::{DataFormat, Loader, NoProgress};
    use crate::store::{LiteralKind, TermRef};
    use proptest::prelude::*;

    /// The literal JSON-LD data with the number `text` loads as: lexical form and datatype IRI.
    fn loaded(text: &str, datatype: Option<&str>) -> (String, String) {
        let value = match datatype {
            Some(dt) => format!(r#"{{"@value": {text}, "@type": "{dt}"}}"#),
            None => text.to_owned(),
        };
        let doc = format!(r#"{{"@id": "http://e/a", "http://e/p": {value}}}"#);
        let mut loader = Loader::new();
        (loader.load_reader("t", doc.as_bytes(), DataFormat::JsonLd, None, &NoProgress)).unwrap();
        let store = loader.finish();
        let quads: Vec<_> = store.quads.quads().collect();
        assert_eq!(quads.len(), 1, "{doc}");
        let TermRef::Literal {
            lexical,
            kind: LiteralKind::Typed(dt),
        } = store.dict.get(quads[0][3])
        else {
            panic!("{doc} loads no typed literal")
        };
        let TermRef::Iri(dt) = store.dict.get(dt) else {
            panic!("a datatype that is no IRI")
        };
        (lexical.to_owned(), dt.to_string())
    }

    fn int(s: &str) -> Number {
        Number::Integer(s.to_owned())
    }

    fn dbl(s: &str) -> Number {
        Number::Double(s.to_owned())
    }

    #[test]
    fn integral_numbers_below_ten_to_the_twenty_are_integers_in_plain_digits() {
        assert_eq!(canonical("5", false), int("5"));
        assert_eq!(canonical("-12", false), int("-12"));
        assert_eq!(canonical("2.5e3", false), int("2500"));
        assert_eq!(canonical("1.0", false), int("1"));
        assert_eq!(canonical("0.0", false), int("0"));
        assert_eq!(canonical("-0", false), int("0"));
        assert_eq!(
            canonical("18446744073709551617", false),
            int("18446744073709551617")
        );
        assert_eq!(
            canonical("99999999999999999999", false),
            int("99999999999999999999")
        );
        assert_eq!(canonical("120e-1", false), int("12"));
    }

    #[test]
    fn fractions_large_numbers_and_doubles_by_type_are_doubles_keeping_every_digit() {
        assert_eq!(canonical("1.5", false), dbl("1.5E0"));
        assert_eq!(canonical("-0.025", false), dbl("-2.5E-2"));
        assert_eq!(canonical("1e20", false), dbl("1.0E20"));
        assert_eq!(
            canonical("123456789012345678901", false),
            dbl("1.23456789012345678901E20")
        );
        assert_eq!(canonical("5", true), dbl("5.0E0"));
        assert_eq!(canonical("0", true), dbl("0.0E0"));
        assert_eq!(canonical("1e400", false), dbl("1.0E400"));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn a_number_reads_as_the_literal_json_ld_data_with_it_loads_as(
            sign in prop::sample::select(vec!["", "-"]),
            int in "(0|[1-9][0-9]{0,24})",
            frac in prop::option::of("[0-9]{1,6}"),
            exp in prop::option::of(-30i32..30),
            double in any::<bool>(),
        ) {
            let mut text = format!("{sign}{int}");
            if let Some(f) = frac {
                text.push('.');
                text.push_str(&f);
            }
            if let Some(e) = exp {
                text.push_str(&format!("e{e}"));
            }
            let xsd = "http://www.w3.org/2001/XMLSchema#";
            let (lexical, kind) = match canonical(&text, double) {
                Number::Integer(l) => (l, "integer"),
                Number::Double(l) => (l, "double"),
            };
            let (data, datatype) = loaded(&text, double.then(|| format!("{xsd}double")).as_deref());
            prop_assert_eq!(lexical, data, "{}", text);
            prop_assert_eq!(datatype, format!("{xsd}{kind}"), "{}", text);
        }
    }

    #[test]
    fn a_number_whose_exponent_does_not_fit_is_a_double_written_as_it_is() {
        assert_eq!(
            canonical("1e99999999999999999999", false),
            dbl("1e99999999999999999999")
        );
        // The point moves in one step: no overflow on the way to an exponent that fits.
        assert_eq!(
            canonical("0.5e9223372036854775807", false),
            dbl("5.0E9223372036854775806")
        );
        assert_eq!(
            canonical("100e9223372036854775806", false),
            dbl("100e9223372036854775806")
        );
    }
}
