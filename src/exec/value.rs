//! This module defines [`Value`], what an expression evaluates to, with SPARQL's typed views of literals
//! (numbers with promotion, strings, booleans, date-times), comparison, effective boolean value and the
//! canonical lexical forms of computed literals.

use std::borrow::Cow;
use std::cmp::Ordering;

use rust_decimal::Decimal;

use crate::store::{Direction, LiteralKind, TermId, TermRef, TermSource, well_known as wk};

use super::datetime::DateTime;

/// A number, by SPARQL's promotion order (integer < decimal < float < double).
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Num {
    /// `xsd:integer` (and its derived types), within 64 bits.
    Int(i64),
    /// `xsd:decimal`.
    Dec(Decimal),
    /// `xsd:float`.
    Float(f32),
    /// `xsd:double`.
    Double(f64),
}

impl Num {
    fn rank(self) -> u8 {
        match self {
            Num::Int(_) => 0,
            Num::Dec(_) => 1,
            Num::Float(_) => 2,
            Num::Double(_) => 3,
        }
    }

    /// This number as a decimal (integers and decimals only).
    pub fn to_dec(self) -> Option<Decimal> {
        match self {
            Num::Int(i) => Some(Decimal::from(i)),
            Num::Dec(d) => Some(d),
            _ => None,
        }
    }

    /// This number as a double.
    pub fn to_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Dec(d) => decimal_to_f64(d),
            Num::Float(f) => f64::from(f),
            Num::Double(d) => d,
        }
    }

    /// Both numbers promoted to their common type.
    pub fn promote(a: Num, b: Num) -> (Num, Num) {
        let rank = a.rank().max(b.rank());
        (a.to_rank(rank), b.to_rank(rank))
    }

    fn to_rank(self, rank: u8) -> Num {
        match rank {
            0 => self,
            1 => Num::Dec(self.to_dec().unwrap_or_default()),
            2 => Num::Float(self.to_f64() as f32),
            _ => Num::Double(self.to_f64()),
        }
    }

    /// Numeric comparison (`None` when a NaN is involved).
    pub fn compare(a: Num, b: Num) -> Option<Ordering> {
        match Num::promote(a, b) {
            (Num::Int(x), Num::Int(y)) => Some(x.cmp(&y)),
            (Num::Dec(x), Num::Dec(y)) => Some(x.cmp(&y)),
            (Num::Float(x), Num::Float(y)) => x.partial_cmp(&y),
            (Num::Double(x), Num::Double(y)) => x.partial_cmp(&y),
            _ => None,
        }
    }

    /// Whether the number is zero or NaN (its effective boolean value is false).
    pub fn is_falsy(self) -> bool {
        match self {
            Num::Int(i) => i == 0,
            Num::Dec(d) => d.is_zero(),
            Num::Float(f) => f == 0.0 || f.is_nan(),
            Num::Double(d) => d == 0.0 || d.is_nan(),
        }
    }
}

/// The double nearest a decimal.
pub fn decimal_to_f64(d: Decimal) -> f64 {
    d.to_string().parse().unwrap_or(f64::NAN)
}

/// What an expression evaluates to. Terms read from rows stay [`Value::Term`], so their lexical form survives a
/// BIND; typed views are taken on demand. Computed values are interned only when a row keeps them.
#[derive(Clone, Debug, PartialEq)]
pub enum Value<'t> {
    /// A term of the dictionary or of the execution.
    Term(TermId),
    /// A computed boolean.
    Bool(bool),
    /// A computed number.
    Num(Num),
    /// A computed simple literal (`xsd:string`).
    Str(Cow<'t, str>),
    /// A computed language-tagged string (tag lower-case), with its base direction.
    Lang(Cow<'t, str>, Cow<'t, str>, Option<Direction>),
    /// A computed literal of another datatype (lexical form, datatype).
    Typed(Cow<'t, str>, TermId),
    /// A computed date/time value (its datatype inside).
    DateTime(DateTime),
    /// A computed IRI.
    Iri(Cow<'t, str>),
    /// A blank node to mint when the row is kept; `Some(label)` shares one node per label within a row.
    NewBlank(Option<String>),
    /// A computed triple term.
    Triple([TermId; 3]),
}

impl Value<'_> {
    /// Detaches the value from the terms it borrows.
    pub fn into_owned(self) -> Value<'static> {
        match self {
            Value::Term(t) => Value::Term(t),
            Value::Bool(b) => Value::Bool(b),
            Value::Num(n) => Value::Num(n),
            Value::Str(s) => Value::Str(Cow::Owned(s.into_owned())),
            Value::Lang(s, l, d) => {
                Value::Lang(Cow::Owned(s.into_owned()), Cow::Owned(l.into_owned()), d)
            }
            Value::Typed(s, dt) => Value::Typed(Cow::Owned(s.into_owned()), dt),
            Value::DateTime(d) => Value::DateTime(d),
            Value::Iri(s) => Value::Iri(Cow::Owned(s.into_owned())),
            Value::NewBlank(l) => Value::NewBlank(l),
            Value::Triple(t) => Value::Triple(t),
        }
    }
}

/// A literal seen through its datatype.
#[derive(Clone, Debug, PartialEq)]
pub enum Lit<'t> {
    /// `xsd:boolean`.
    Bool(bool),
    /// A number.
    Num(Num),
    /// A simple literal or `xsd:string`.
    Str(Cow<'t, str>),
    /// A language-tagged string.
    Lang(Cow<'t, str>, Cow<'t, str>, Option<Direction>),
    /// A date/time.
    DateTime(DateTime),
    /// Any other datatype, or an ill-typed lexical form (with its datatype): comparable only by identity.
    Other(Cow<'t, str>, TermId),
}

/// A value seen by kind.
#[derive(Clone, Debug, PartialEq)]
pub enum View<'t> {
    /// An IRI.
    Iri(Cow<'t, str>),
    /// A blank node (existing or to be minted).
    Blank,
    /// A literal.
    Lit(Lit<'t>),
    /// A triple term.
    Triple([TermId; 3]),
}

/// Whether a datatype is `xsd:integer` or derived from it.
pub fn is_integer_type(text: &str) -> bool {
    matches!(
        text.strip_prefix("http://www.w3.org/2001/XMLSchema#"),
        Some(
            "integer"
                | "int"
                | "long"
                | "short"
                | "byte"
                | "nonNegativeInteger"
                | "positiveInteger"
                | "negativeInteger"
                | "nonPositiveInteger"
                | "unsignedInt"
                | "unsignedLong"
                | "unsignedShort"
                | "unsignedByte"
        )
    )
}

/// Whether `i` lies in the value space of the XSD integer type named `local` (`integer`: any).
pub fn integer_in_range(local: &str, i: i64) -> bool {
    match local {
        "int" => i32::try_from(i).is_ok(),
        "short" => i16::try_from(i).is_ok(),
        "byte" => i8::try_from(i).is_ok(),
        "nonNegativeInteger" | "unsignedLong" => i >= 0,
        "positiveInteger" => i > 0,
        "negativeInteger" => i < 0,
        "nonPositiveInteger" => i <= 0,
        "unsignedInt" => u32::try_from(i).is_ok(),
        "unsignedShort" => u16::try_from(i).is_ok(),
        "unsignedByte" => u8::try_from(i).is_ok(),
        _ => true,
    }
}

/// Parses an `xsd:integer` lexical form (optional sign, digits, surrounding whitespace allowed).
pub fn parse_integer(lexical: &str) -> Option<i64> {
    let t = lexical.trim();
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.strip_prefix('+').unwrap_or(t).parse().ok()
}

/// Parses an `xsd:decimal` lexical form (no exponent).
pub fn parse_decimal(lexical: &str) -> Option<Decimal> {
    let t = lexical.trim();
    let body = t.strip_prefix(['+', '-']).unwrap_or(t);
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    if int.is_empty() && frac.is_empty()
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let normal = t.strip_prefix('+').unwrap_or(t);
    let normal = normal.strip_suffix('.').unwrap_or(normal);
    let normal = if normal.starts_with('.') || normal.starts_with("-.") {
        Cow::Owned(normal.replacen('.', "0.", 1))
    } else {
        Cow::Borrowed(normal)
    };
    Decimal::from_str_exact(&normal)
        .or_else(|_| normal.parse::<Decimal>())
        .ok()
}

/// Parses an `xsd:double` / `xsd:float` lexical form (`INF`, `-INF`, `NaN` included).
pub fn parse_double(lexical: &str) -> Option<f64> {
    let t = lexical.trim();
    match t {
        "INF" | "+INF" => return Some(f64::INFINITY),
        "-INF" => return Some(f64::NEG_INFINITY),
        "NaN" => return Some(f64::NAN),
        _ => {}
    }
    let body = t.strip_prefix(['+', '-']).unwrap_or(t);
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits_ok = !(int.is_empty() && frac.is_empty())
        && int.bytes().all(|b| b.is_ascii_digit())
        && frac.bytes().all(|b| b.is_ascii_digit());
    let exp_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && e.bytes().all(|b| b.is_ascii_digit())
    });
    if !digits_ok || !exp_ok {
        return None;
    }
    t.parse().ok()
}

/// Parses an `xsd:boolean` lexical form.
pub fn parse_boolean(lexical: &str) -> Option<bool> {
    match lexical.trim() {
        "true" | "1" => Some(true),
        "false" | "0" => Some(false),
        _ => None,
    }
}

/// A literal's typed view from its lexical form and datatype.
pub fn typed_literal<'t>(
    terms: &'t (impl TermSource + ?Sized),
    lexical: &'t str,
    kind: LiteralKind<'t>,
) -> Lit<'t> {
    match kind {
        LiteralKind::Simple => Lit::Str(Cow::Borrowed(lexical)),
        LiteralKind::Lang { tag, direction } => {
            Lit::Lang(Cow::Borrowed(lexical), Cow::Borrowed(tag), direction)
        }
        LiteralKind::Typed(dt) => {
            let parsed = match dt {
                wk::XSD_BOOLEAN => parse_boolean(lexical).map(Lit::Bool),
                wk::XSD_INTEGER => parse_integer(lexical).map(|i| Lit::Num(Num::Int(i))),
                wk::XSD_DECIMAL => parse_decimal(lexical).map(|d| Lit::Num(Num::Dec(d))),
                wk::XSD_DOUBLE => parse_double(lexical).map(|d| Lit::Num(Num::Double(d))),
                wk::XSD_FLOAT => parse_double(lexical).map(|d| Lit::Num(Num::Float(d as f32))),
                wk::XSD_DATE_TIME | wk::XSD_DATE | wk::XSD_TIME => {
                    DateTime::parse(lexical, dt).map(Lit::DateTime)
                }
                _ => match terms.term(dt) {
                    TermRef::Iri(iri) => {
                        let text = iri.to_string();
                        if is_integer_type(&text) {
                            // Outside the type's range (`"300"^^xsd:byte`) the literal is ill-typed: no number.
                            let local = text.rsplit('#').next().unwrap_or("");
                            parse_integer(lexical)
                                .filter(|&i| integer_in_range(local, i))
                                .map(|i| Lit::Num(Num::Int(i)))
                        } else {
                            None
                        }
                    }
                    _ => None,
                },
            };
            parsed.unwrap_or(Lit::Other(Cow::Borrowed(lexical), dt))
        }
    }
}

/// Sees a value by kind, decoding stored terms.
pub fn view<'v>(terms: &'v (impl TermSource + ?Sized), v: &'v Value<'_>) -> View<'v> {
    match v {
        Value::Term(id) => match terms.term(*id) {
            TermRef::Iri(iri) => View::Iri(if iri.ns.is_empty() {
                Cow::Borrowed(iri.local)
            } else {
                Cow::Owned(iri.to_string())
            }),
            TermRef::Blank(_) | TermRef::DefaultGraph => View::Blank,
            TermRef::Literal { lexical, kind } => View::Lit(typed_literal(terms, lexical, kind)),
            TermRef::Triple(t) => View::Triple(t),
        },
        Value::Bool(b) => View::Lit(Lit::Bool(*b)),
        Value::Num(n) => View::Lit(Lit::Num(*n)),
        Value::Str(s) => View::Lit(Lit::Str(Cow::Borrowed(s))),
        Value::Lang(s, l, d) => View::Lit(Lit::Lang(Cow::Borrowed(s), Cow::Borrowed(l), *d)),
        // A computed typed literal (a cast to xsd:long, say) is seen as the same literal stored would be.
        Value::Typed(s, dt) => View::Lit(typed_literal(terms, s, LiteralKind::Typed(*dt))),
        Value::DateTime(d) => View::Lit(Lit::DateTime(*d)),
        Value::Iri(s) => View::Iri(Cow::Borrowed(s)),
        Value::NewBlank(_) => View::Blank,
        Value::Triple(t) => View::Triple(*t),
    }
}

/// The effective boolean value (`None`: a type error).
pub fn ebv(terms: &(impl TermSource + ?Sized), v: &Value<'_>) -> Option<bool> {
    match v {
        Value::Bool(b) => return Some(*b),
        Value::Num(n) => return Some(!n.is_falsy()),
        Value::Str(s) => return Some(!s.is_empty()),
        _ => {}
    }
    match view(terms, v) {
        View::Lit(Lit::Bool(b)) => Some(b),
        View::Lit(Lit::Num(n)) => Some(!n.is_falsy()),
        View::Lit(Lit::Str(s)) => Some(!s.is_empty()),
        // An ill-typed boolean or number has no effective boolean value (SPARQL 1.2's not-not test).
        _ => None,
    }
}

/// The canonical lexical form of an `xsd:decimal` (XSD 1.1): no exponent, no trailing zeros, no decimal point
/// for an integral value (`2`, `0.5`, `-1.25`).
pub fn decimal_lexical(d: Decimal) -> String {
    d.normalize().to_string()
}

/// The lexical form of a computed `xsd:double`: XPath's string form (what `xsd:string(?d)` gives): plain
/// decimal notation for magnitudes in [10⁻⁶, 10⁶) (`6`, `0.25`, `1050`), otherwise the canonical scientific form
/// (`1.0E7`, `-1.5E-9`), and `INF`, `-INF`, `NaN`.
pub fn double_lexical(d: f64) -> String {
    if d == 0.0 || (1e-6..1e6).contains(&d.abs()) {
        return format!("{d}");
    }
    if d.is_nan() {
        return "NaN".to_owned();
    }
    if d.is_infinite() {
        return if d > 0.0 { "INF" } else { "-INF" }.to_owned();
    }
    let s = format!("{d:E}");
    match s.split_once('E') {
        Some((m, e)) if !m.contains('.') => format!("{m}.0E{e}"),
        _ => s,
    }
}

/// The lexical form of a computed `xsd:float`, by the same rule as [`double_lexical`].
pub fn float_lexical(f: f32) -> String {
    if f == 0.0 || (1e-6..1e6).contains(&f.abs()) {
        return format!("{f}");
    }
    if f.is_nan() {
        return "NaN".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { "INF" } else { "-INF" }.to_owned();
    }
    let s = format!("{f:E}");
    match s.split_once('E') {
        Some((m, e)) if !m.contains('.') => format!("{m}.0E{e}"),
        _ => s,
    }
}

/// A number's canonical lexical form and datatype.
pub fn num_lexical(n: Num) -> (String, TermId) {
    match n {
        Num::Int(i) => (i.to_string(), wk::XSD_INTEGER),
        Num::Dec(d) => (decimal_lexical(d), wk::XSD_DECIMAL),
        Num::Float(f) => (float_lexical(f), wk::XSD_FLOAT),
        Num::Double(d) => (double_lexical(d), wk::XSD_DOUBLE),
    }
}

/// The string a value's `STR()` gives (`None` for blank nodes and triple terms).
pub fn str_of<'v>(terms: &'v (impl TermSource + ?Sized), v: &'v Value<'_>) -> Option<Cow<'v, str>> {
    Some(match v {
        Value::Term(id) => match terms.term(*id) {
            TermRef::Iri(iri) => Cow::Owned(iri.to_string()),
            TermRef::Literal { lexical, .. } => Cow::Borrowed(lexical),
            _ => return None,
        },
        Value::Bool(b) => Cow::Borrowed(if *b { "true" } else { "false" }),
        Value::Num(n) => Cow::Owned(num_lexical(*n).0),
        Value::Str(s) | Value::Lang(s, _, _) | Value::Typed(s, _) | Value::Iri(s) => {
            Cow::Borrowed(s)
        }
        Value::DateTime(d) => Cow::Owned(d.to_string()),
        Value::NewBlank(_) | Value::Triple(_) => return None,
    })
}

/// Value equality (`=`): `Some(true/false)`, or `None` for a type error (two literals of unknown datatypes that
/// are not the same term, say).
pub fn equals(terms: &(impl TermSource + ?Sized), a: &Value<'_>, b: &Value<'_>) -> Option<bool> {
    // One stored term equals itself, but for NaN (IEEE 754: NaN = NaN is false) and a triple term, whose
    // components are compared (one may be NaN).
    if let (Value::Term(x), Value::Term(y)) = (a, b) {
        if x == y && !holds_nan_or_triple(terms.term(*x)) {
            return Some(true);
        }
    }
    match (view(terms, a), view(terms, b)) {
        (View::Iri(x), View::Iri(y)) => Some(x == y),
        (View::Blank, View::Blank) => Some(same_blank(a, b)),
        (View::Triple(x), View::Triple(y)) => {
            let mut all = true;
            for i in 0..3 {
                match equals(terms, &Value::Term(x[i]), &Value::Term(y[i])) {
                    Some(true) => {}
                    Some(false) => all = false,
                    None => return None,
                }
            }
            Some(all)
        }
        (View::Lit(x), View::Lit(y)) => literal_equals(&x, &y),
        _ => Some(false),
    }
}

/// Whether a stored term is an `xsd:double` or `xsd:float` NaN, or a triple term.
fn holds_nan_or_triple(t: TermRef<'_>) -> bool {
    match t {
        TermRef::Triple(_) => true,
        TermRef::Literal {
            lexical,
            kind: LiteralKind::Typed(wk::XSD_DOUBLE | wk::XSD_FLOAT),
        } => lexical.trim() == "NaN",
        _ => false,
    }
}

fn same_blank(a: &Value<'_>, b: &Value<'_>) -> bool {
    matches!((a, b), (Value::Term(x), Value::Term(y)) if x == y)
}

fn literal_equals(a: &Lit<'_>, b: &Lit<'_>) -> Option<bool> {
    match (a, b) {
        (Lit::Num(x), Lit::Num(y)) => Some(Num::compare(*x, *y) == Some(Ordering::Equal)),
        (Lit::Str(x), Lit::Str(y)) => Some(x == y),
        (Lit::Lang(x, lx, dx), Lit::Lang(y, ly, dy)) => {
            Some(x == y && lx.eq_ignore_ascii_case(ly) && dx == dy)
        }
        (Lit::Bool(x), Lit::Bool(y)) => Some(x == y),
        (Lit::DateTime(x), Lit::DateTime(y)) if x.kind != y.kind => Some(false),
        (Lit::DateTime(x), Lit::DateTime(y)) => x.compare(y).map(|o| o == Ordering::Equal),
        (Lit::Other(x, dx), Lit::Other(y, dy)) => {
            if x == y && dx == dy {
                Some(true)
            } else {
                None
            }
        }
        // A language-tagged string only ever equals a language-tagged string.
        (Lit::Lang(..), Lit::Other(..)) | (Lit::Other(..), Lit::Lang(..)) => Some(false),
        // A literal of unknown (or ill-typed) datatype might denote any value: comparing it is an error.
        (Lit::Other(..), _) | (_, Lit::Other(..)) => None,
        _ => Some(false),
    }
}

/// Ordering comparison (`<` and friends): `None` for a type error.
pub fn compare(
    terms: &(impl TermSource + ?Sized),
    a: &Value<'_>,
    b: &Value<'_>,
) -> Option<Ordering> {
    match (view(terms, a), view(terms, b)) {
        (View::Lit(x), View::Lit(y)) => match (x, y) {
            (Lit::Num(x), Lit::Num(y)) => Num::compare(x, y),
            (Lit::Str(x), Lit::Str(y)) => Some(x.cmp(&y)),
            (Lit::Lang(x, lx, dx), Lit::Lang(y, ly, dy))
                if lx.eq_ignore_ascii_case(&ly) && dx == dy =>
            {
                Some(x.cmp(&y))
            }
            (Lit::Bool(x), Lit::Bool(y)) => Some(x.cmp(&y)),
            (Lit::DateTime(x), Lit::DateTime(y)) => x.compare(&y),
            _ => None,
        },
        _ => None,
    }
}

/// The total order of ORDER BY: unbound, blank nodes, IRIs, literals (by value where comparable, then by
/// lexical form and datatype), triple terms.
pub fn order(
    terms: &(impl TermSource + ?Sized),
    a: Option<&Value<'_>>,
    b: Option<&Value<'_>>,
) -> Ordering {
    let (a, b) = match (a, b) {
        (None, None) => return Ordering::Equal,
        (None, Some(_)) => return Ordering::Less,
        (Some(_), None) => return Ordering::Greater,
        (Some(a), Some(b)) => (a, b),
    };
    let (va, vb) = (view(terms, a), view(terms, b));
    let kind = |v: &View<'_>| match v {
        View::Blank => 0,
        View::Iri(_) => 1,
        View::Lit(_) => 2,
        View::Triple(_) => 3,
    };
    kind(&va).cmp(&kind(&vb)).then_with(|| match (&va, &vb) {
        (View::Iri(x), View::Iri(y)) => x.cmp(y),
        (View::Blank, View::Blank) => match (a, b) {
            (Value::Term(x), Value::Term(y)) => x.cmp(y),
            _ => Ordering::Equal,
        },
        (View::Lit(x), View::Lit(y)) => {
            let by_value = match (x, y) {
                (Lit::Num(p), Lit::Num(q)) => Num::compare(*p, *q),
                (Lit::Str(p), Lit::Str(q)) => Some(p.cmp(q)),
                (Lit::Bool(p), Lit::Bool(q)) => Some(p.cmp(q)),
                (Lit::DateTime(p), Lit::DateTime(q)) => p.compare(q),
                _ => None,
            };
            by_value.filter(|o| o.is_ne()).unwrap_or_else(|| {
                let sa = str_of(terms, a).unwrap_or_default();
                let sb = str_of(terms, b).unwrap_or_default();
                lit_rank(x).cmp(&lit_rank(y)).then_with(|| sa.cmp(&sb))
            })
        }
        (View::Triple(x), View::Triple(y)) => x
            .iter()
            .zip(y)
            .map(|(p, q)| order(terms, Some(&Value::Term(*p)), Some(&Value::Term(*q))))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal),
        _ => Ordering::Equal,
    })
}

fn lit_rank(l: &Lit<'_>) -> u8 {
    match l {
        Lit::Str(_) => 0,
        Lit::Lang(..) => 1,
        Lit::Bool(_) => 2,
        Lit::Num(_) => 3,
        Lit::DateTime(_) => 4,
        Lit::Other(..) => 5,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_forms_parse_as_xsd_says() {
        assert_eq!(parse_integer(" 01 "), Some(1));
        assert_eq!(parse_integer("1.0"), None);
        assert_eq!(parse_decimal("-.5"), Decimal::from_str_exact("-0.5").ok());
        assert_eq!(parse_decimal("1e3"), None);
        assert_eq!(parse_double("1e3"), Some(1000.0));
        assert_eq!(parse_double("abc"), None);
        assert!(parse_double("NaN").unwrap().is_nan());
    }

    #[test]
    fn computed_numbers_get_canonical_lexical_forms() {
        assert_eq!(
            decimal_lexical(Decimal::from_str_exact("2.500").unwrap()),
            "2.5"
        );
        assert_eq!(decimal_lexical(Decimal::from(3)), "3");
        assert_eq!(double_lexical(1.0), "1");
        assert_eq!(double_lexical(-0.0015), "-0.0015");
        assert_eq!(double_lexical(1.0e7), "1.0E7");
        assert_eq!(double_lexical(-1.5e-9), "-1.5E-9");
        assert_eq!(double_lexical(f64::NEG_INFINITY), "-INF");
    }

    #[test]
    fn numbers_promote_before_comparing() {
        let (a, b) = Num::promote(Num::Int(1), Num::Double(1.5));
        assert_eq!((a, b), (Num::Double(1.0), Num::Double(1.5)));
        assert_eq!(
            Num::compare(Num::Int(2), Num::Dec(Decimal::from(2))),
            Some(Ordering::Equal)
        );
    }
}
