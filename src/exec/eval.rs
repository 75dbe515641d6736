//! This module defines expression evaluation: [`Eval::eval`] over one row, with SPARQL's error semantics
//! (an error is `None`; `||` and `&&` absorb errors as the three-valued logic says), and [`intern_value`],
//! which turns a computed value into a term id when a row keeps it.

use std::borrow::Cow;
use std::cell::RefCell;
use std::cmp::Ordering;
use std::rc::Rc;

use hashbrown::HashMap;
use regex::{Regex, RegexBuilder};
use rust_decimal::Decimal;
use rust_decimal::prelude::ToPrimitive;

use crate::ir::{CmpOp, Expr, Func, NumOp, Op};
use crate::store::{Direction, LiteralKind, TermId, TermRef, TermSource, well_known as wk};

use super::ROW_UNBOUND;
use super::datetime::DateTime;
use super::terms::Terms;
use super::value::{
    self, Lit, Num, Value, View, compare, ebv, equals, num_lexical, parse_boolean, parse_decimal,
    parse_double, parse_integer, str_of, view,
};

/// A compiled regex, or `None` for a pattern that does not compile.
type Compiled = Option<Rc<Regex>>;

/// What expressions read besides the row: the evaluation time, the base IRI, and caches.
pub struct Env {
    /// What NOW() returns (fixed for a whole run).
    pub now: DateTime,
    /// The base IRI `IRI()` resolves against.
    pub base: Option<oxiri::Iri<String>>,
    /// Compiled regexes by (pattern, flags), shared (a cloned `Regex` starts with empty match caches); the last
    /// one used is looked up without building a key.
    regexes: RefCell<HashMap<(String, String), Compiled>>,
    last_regex: RefCell<Option<(String, String, Compiled)>>,
    rng: RefCell<fastrand::Rng>,
}

impl Env {
    /// An environment reading `now` as the time.
    pub fn new(now: DateTime, base: Option<String>) -> Self {
        Self {
            now,
            base: base.and_then(|b| oxiri::Iri::parse(b).ok()),
            regexes: RefCell::new(HashMap::new()),
            last_regex: RefCell::new(None),
            rng: RefCell::new(fastrand::Rng::new()),
        }
    }

    fn regex(&self, pattern: &str, flags: &str) -> Option<Rc<Regex>> {
        if let Some((p, f, r)) = &*self.last_regex.borrow() {
            if p == pattern && f == flags {
                return r.clone();
            }
        }
        let key = (pattern.to_owned(), flags.to_owned());
        let found = self.regexes.borrow().get(&key).cloned();
        let compiled = match found {
            Some(r) => r,
            None => {
                let r = compile_regex(pattern, flags).map(Rc::new);
                self.regexes.borrow_mut().insert(key, r.clone());
                r
            }
        };
        *self.last_regex.borrow_mut() =
            Some((pattern.to_owned(), flags.to_owned(), compiled.clone()));
        compiled
    }
}

pub(crate) fn compile_regex(pattern: &str, flags: &str) -> Option<Regex> {
    compile_regex_or_why(pattern, flags).ok()
}

/// [`compile_regex`], with why it does not compile: an unknown flag, or the compiler's first line.
pub(crate) fn compile_regex_or_why(pattern: &str, flags: &str) -> Result<Regex, String> {
    let mut builder_pattern = Cow::Borrowed(pattern);
    let mut literal = false;
    let mut opts = (false, false, false, false);
    for f in flags.chars() {
        match f {
            'i' => opts.0 = true,
            's' => opts.1 = true,
            'm' => opts.2 = true,
            'x' => opts.3 = true,
            'q' => literal = true,
            other => return Err(format!("`{other}` is no flag")),
        }
    }
    if literal {
        builder_pattern = Cow::Owned(regex::escape(pattern));
    }
    let mut b = RegexBuilder::new(&builder_pattern);
    b.case_insensitive(opts.0)
        .dot_matches_new_line(opts.1)
        .multi_line(opts.2)
        .ignore_whitespace(opts.3)
        .size_limit(1 << 20);
    b.build().map_err(|e| {
        let text = e.to_string();
        let last = text
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        last.trim().trim_start_matches("error: ").to_owned()
    })
}

/// Evaluates expressions over rows.
pub struct Eval<'e, 't> {
    /// The terms rows refer to.
    pub terms: &'t Terms<'t>,
    /// Time, base, caches.
    pub env: &'e Env,
    /// Precomputed EXISTS results for the current batch: (the EXISTS pattern's address, one flag per row).
    pub exists: &'e [(usize, Vec<bool>)],
}

/// The key [`Eval`] finds an EXISTS pattern's results under.
pub fn exists_key(op: &Op) -> usize {
    op as *const Op as usize
}

type R<'t> = Option<Value<'t>>;

impl<'e, 't> Eval<'e, 't> {
    fn ebv(&self, e: &Expr, row: &[TermId], i: usize) -> Option<bool> {
        let v = self.eval(e, row, i)?;
        ebv(self.terms, &v)
    }

    /// The effective boolean value of `e` on `row` (`false` on error), as FILTER uses it.
    pub fn test(&self, e: &Expr, row: &[TermId], i: usize) -> bool {
        self.ebv(e, row, i).unwrap_or(false)
    }

    /// Evaluates `e` on `row` (the `i`-th of its batch, for EXISTS results).
    pub fn eval(&self, e: &Expr, row: &[TermId], i: usize) -> R<'t> {
        let t = self.terms;
        match e {
            Expr::True => Some(Value::Bool(true)),
            Expr::Const(id) => Some(Value::Term(*id)),
            Expr::Var(v) => {
                let id = row[v.index()];
                (id != ROW_UNBOUND).then_some(Value::Term(id))
            }
            Expr::Bound(v) => Some(Value::Bool(row[v.index()] != ROW_UNBOUND)),
            Expr::Or(a, b) => match (self.ebv(a, row, i), self.ebv(b, row, i)) {
                (Some(true), _) | (_, Some(true)) => Some(Value::Bool(true)),
                (Some(false), Some(false)) => Some(Value::Bool(false)),
                _ => None,
            },
            Expr::And(a, b) => match (self.ebv(a, row, i), self.ebv(b, row, i)) {
                (Some(false), _) | (_, Some(false)) => Some(Value::Bool(false)),
                (Some(true), Some(true)) => Some(Value::Bool(true)),
                _ => None,
            },
            Expr::Not(a) => self.ebv(a, row, i).map(|b| Value::Bool(!b)),
            Expr::Compare(op, a, b) => {
                let x = self.eval(a, row, i)?;
                let y = self.eval(b, row, i)?;
                let result = match op {
                    CmpOp::Eq => equals(t, &x, &y)?,
                    CmpOp::Ne => !equals(t, &x, &y)?,
                    CmpOp::Lt => compare(t, &x, &y)? == Ordering::Less,
                    CmpOp::Le => compare(t, &x, &y)? != Ordering::Greater,
                    CmpOp::Gt => compare(t, &x, &y)? == Ordering::Greater,
                    CmpOp::Ge => compare(t, &x, &y)? != Ordering::Less,
                };
                Some(Value::Bool(result))
            }
            Expr::SameTerm(a, b) => {
                let x = self.eval(a, row, i)?;
                let y = self.eval(b, row, i)?;
                Some(Value::Bool(same_term(t, &x, &y)))
            }
            Expr::In(a, list) => {
                let x = self.eval(a, row, i)?;
                let mut error = false;
                for item in list {
                    match self.eval(item, row, i).and_then(|y| equals(t, &x, &y)) {
                        Some(true) => return Some(Value::Bool(true)),
                        Some(false) => {}
                        None => error = true,
                    }
                }
                (!error).then_some(Value::Bool(false))
            }
            Expr::Arith(op, a, b) => {
                let x = self.num(a, row, i)?;
                let y = self.num(b, row, i)?;
                arith(*op, x, y).map(Value::Num)
            }
            Expr::Neg(a) => Some(Value::Num(match self.num(a, row, i)? {
                Num::Int(x) => Num::Int(x.checked_neg()?),
                Num::Dec(x) => Num::Dec(-x),
                Num::Float(x) => Num::Float(-x),
                Num::Double(x) => Num::Double(-x),
            })),
            // Unary plus is the identity on numbers: a stored number keeps its lexical form.
            Expr::Plus(a) => {
                let v = self.eval(a, row, i)?;
                as_num(t, &v)?;
                Some(v)
            }
            Expr::If(c, a, b) => {
                if self.ebv(c, row, i)? {
                    self.eval(a, row, i)
                } else {
                    self.eval(b, row, i)
                }
            }
            Expr::Coalesce(list) => list.iter().find_map(|e| self.eval(e, row, i)),
            Expr::Exists(op) => {
                let key = exists_key(op);
                let flags = self.exists.iter().find(|(k, _)| *k == key)?;
                Some(Value::Bool(flags.1[i]))
            }
            Expr::Call(f, args) => self.call(f, args, row, i),
        }
    }

    fn num(&self, e: &Expr, row: &[TermId], i: usize) -> Option<Num> {
        let v = self.eval(e, row, i)?;
        as_num(self.terms, &v)
    }

    fn args(&self, args: &[Expr], row: &[TermId], i: usize) -> Option<Vec<Value<'t>>> {
        args.iter().map(|a| self.eval(a, row, i)).collect()
    }

    fn call(&self, f: &Func, args: &[Expr], row: &[TermId], i: usize) -> R<'static> {
        let t = self.terms;
        // Functions that look at their arguments lazily or take none.
        match f {
            Func::Rand => return Some(Value::Num(Num::Double(self.env.rng.borrow_mut().f64()))),
            Func::Now => return Some(Value::DateTime(self.env.now)),
            Func::Uuid => return Some(Value::Iri(Cow::Owned(format!("urn:uuid:{}", self.uuid())))),
            Func::StrUuid => return Some(Value::Str(Cow::Owned(self.uuid()))),
            Func::BNode if args.is_empty() => return Some(Value::NewBlank(None)),
            _ => {}
        }
        let a = self.args(args, row, i)?;
        let arg = |k: usize| a.get(k);
        Some(match f {
            Func::Str => Value::Str(Cow::Owned(str_of(t, arg(0)?)?.into_owned())),
            Func::Lang => match view(t, arg(0)?) {
                View::Lit(Lit::Lang(_, l, _)) => Value::Str(Cow::Owned(l.into_owned())),
                View::Lit(_) => Value::Str(Cow::Borrowed("")),
                _ => return None,
            },
            Func::LangDir => match view(t, arg(0)?) {
                View::Lit(Lit::Lang(_, _, d)) => Value::Str(Cow::Borrowed(match d {
                    Some(Direction::Ltr) => "ltr",
                    Some(Direction::Rtl) => "rtl",
                    None => "",
                })),
                View::Lit(_) => Value::Str(Cow::Borrowed("")),
                _ => return None,
            },
            Func::HasLang => Value::Bool(matches!(view(t, arg(0)?), View::Lit(Lit::Lang(..)))),
            Func::HasLangDir => Value::Bool(matches!(
                view(t, arg(0)?),
                View::Lit(Lit::Lang(_, _, Some(_)))
            )),
            Func::LangMatches => {
                let tag = simple_str(t, arg(0)?)?;
                let range = simple_str(t, arg(1)?)?;
                Value::Bool(lang_matches(&tag, &range))
            }
            Func::Datatype => match view(t, arg(0)?) {
                View::Lit(l) => Value::Term(match l {
                    Lit::Str(_) => wk::XSD_STRING,
                    Lit::Lang(_, _, None) => wk::RDF_LANG_STRING,
                    Lit::Lang(_, _, Some(_)) => wk::RDF_DIR_LANG_STRING,
                    Lit::Bool(_) => wk::XSD_BOOLEAN,
                    Lit::Num(n) => datatype_of_value(t, arg(0)?).unwrap_or(num_lexical(n).1),
                    Lit::DateTime(d) => d.datatype,
                    Lit::Other(_, dt) => dt,
                }),
                _ => return None,
            },
            Func::Iri => match view(t, arg(0)?) {
                View::Iri(_) => arg(0)?.clone().into_owned(),
                View::Lit(Lit::Str(s)) => Value::Iri(Cow::Owned(self.resolve(&s)?)),
                _ => return None,
            },
            Func::BNode => {
                let label = simple_str(t, arg(0)?)?;
                Value::NewBlank(Some(label.into_owned()))
            }
            Func::Abs | Func::Ceil | Func::Floor | Func::Round => {
                let n = as_num(t, arg(0)?)?;
                Value::Num(rounding(f, n)?)
            }
            Func::Concat => {
                let mut out = String::new();
                let mut lang: Option<Option<(String, Option<Direction>)>> = None;
                for v in &a {
                    let (s, l) = string_lit(t, v)?;
                    out.push_str(&s);
                    let l = l.map(|(tag, d)| (tag.to_ascii_lowercase(), d));
                    lang = match lang {
                        None => Some(l),
                        Some(prev) if prev == l => Some(prev),
                        Some(_) => Some(None),
                    };
                }
                with_lang(out, lang.flatten())
            }
            Func::SubStr => {
                let (s, l) = string_lit(t, arg(0)?)?;
                let start = as_num(t, arg(1)?)?.to_f64();
                let len = match arg(2) {
                    Some(v) => Some(as_num(t, v)?.to_f64()),
                    None => None,
                };
                with_lang(substring(&s, start, len), l.map(owned_lang))
            }
            Func::StrLen => {
                let (s, _) = string_lit(t, arg(0)?)?;
                Value::Num(Num::Int(s.chars().count() as i64))
            }
            Func::UCase | Func::LCase => {
                let (s, l) = string_lit(t, arg(0)?)?;
                let s = if *f == Func::UCase {
                    s.to_uppercase()
                } else {
                    s.to_lowercase()
                };
                with_lang(s, l.map(owned_lang))
            }
            Func::EncodeForUri => {
                let (s, _) = string_lit(t, arg(0)?)?;
                Value::Str(Cow::Owned(encode_for_uri(&s)))
            }
            Func::Contains | Func::StrStarts | Func::StrEnds => {
                let (x, y) = compatible(t, arg(0)?, arg(1)?)?;
                Value::Bool(match f {
                    Func::Contains => x.0.contains(&*y),
                    Func::StrStarts => x.0.starts_with(&*y),
                    _ => x.0.ends_with(&*y),
                })
            }
            Func::StrBefore | Func::StrAfter => {
                let ((x, l), y) = compatible(t, arg(0)?, arg(1)?)?;
                match x.find(&*y) {
                    None => Value::Str(Cow::Borrowed("")),
                    Some(k) => {
                        let part = if *f == Func::StrBefore {
                            &x[..k]
                        } else {
                            &x[k + y.len()..]
                        };
                        // An empty result keeps the language only when something matched.
                        with_lang(part.to_owned(), l.map(owned_lang))
                    }
                }
            }
            Func::Replace => {
                let (s, l) = string_lit(t, arg(0)?)?;
                let pattern = simple_str(t, arg(1)?)?;
                let replacement = simple_str(t, arg(2)?)?;
                let flags = match arg(3) {
                    Some(v) => simple_str(t, v)?.into_owned(),
                    None => String::new(),
                };
                let re = self.env.regex(&pattern, &flags)?;
                if re.is_match("") {
                    return None; // XPath: a pattern matching the empty string is an error
                }
                let replacement = xpath_replacement(&replacement)?;
                let out = re.replace_all(&s, replacement.as_str()).into_owned();
                with_lang(out, l.map(owned_lang))
            }
            Func::Regex => {
                let (s, _) = string_lit(t, arg(0)?)?;
                let pattern = simple_str(t, arg(1)?)?;
                let flags = match arg(2) {
                    Some(v) => simple_str(t, v)?.into_owned(),
                    None => String::new(),
                };
                Value::Bool(self.env.regex(&pattern, &flags)?.is_match(&s))
            }
            Func::Year
            | Func::Month
            | Func::Day
            | Func::Hours
            | Func::Minutes
            | Func::Seconds
            | Func::Timezone
            | Func::Tz => {
                let d = match view(t, arg(0)?) {
                    View::Lit(Lit::DateTime(d)) => d,
                    _ => return None,
                };
                match f {
                    Func::Year => Value::Num(Num::Int(d.year)),
                    Func::Month => Value::Num(Num::Int(i64::from(d.month))),
                    Func::Day => Value::Num(Num::Int(i64::from(d.day))),
                    Func::Hours => Value::Num(Num::Int(i64::from(d.hour))),
                    Func::Minutes => Value::Num(Num::Int(i64::from(d.minute))),
                    Func::Seconds => Value::Num(Num::Dec(d.second)),
                    Func::Timezone => Value::Typed(
                        Cow::Owned(d.timezone_duration()?),
                        wk::XSD_DAY_TIME_DURATION,
                    ),
                    _ => Value::Str(Cow::Owned(d.tz_text())),
                }
            }
            Func::Md5 | Func::Sha1 | Func::Sha256 | Func::Sha384 | Func::Sha512 => {
                let s = simple_str(t, arg(0)?)?;
                Value::Str(Cow::Owned(hash_hex(f, s.as_bytes())))
            }
            Func::StrLang => {
                let s = simple_str(t, arg(0)?)?;
                let tag = simple_str(t, arg(1)?)?;
                let tag = oxilangtag::LanguageTag::parse(tag.to_ascii_lowercase()).ok()?;
                Value::Lang(
                    Cow::Owned(s.into_owned()),
                    Cow::Owned(tag.into_inner()),
                    None,
                )
            }
            Func::StrLangDir => {
                let s = simple_str(t, arg(0)?)?;
                let tag = simple_str(t, arg(1)?)?;
                let dir = match &*simple_str(t, arg(2)?)? {
                    "ltr" => Direction::Ltr,
                    "rtl" => Direction::Rtl,
                    _ => return None,
                };
                let tag = oxilangtag::LanguageTag::parse(tag.to_ascii_lowercase()).ok()?;
                Value::Lang(
                    Cow::Owned(s.into_owned()),
                    Cow::Owned(tag.into_inner()),
                    Some(dir),
                )
            }
            Func::StrDt => {
                let s = simple_str(t, arg(0)?)?;
                let dt = match arg(1)? {
                    Value::Term(id) if matches!(t.term(*id), TermRef::Iri(_)) => *id,
                    _ => return None,
                };
                if dt == wk::RDF_LANG_STRING || dt == wk::RDF_DIR_LANG_STRING {
                    return None;
                }
                if dt == wk::XSD_STRING {
                    Value::Str(Cow::Owned(s.into_owned()))
                } else {
                    Value::Typed(Cow::Owned(s.into_owned()), dt)
                }
            }
            Func::IsIri => Value::Bool(matches!(view(t, arg(0)?), View::Iri(_))),
            Func::IsBlank => Value::Bool(matches!(view(t, arg(0)?), View::Blank)),
            Func::IsLiteral => Value::Bool(matches!(view(t, arg(0)?), View::Lit(_))),
            Func::IsNumeric => Value::Bool(matches!(view(t, arg(0)?), View::Lit(Lit::Num(_)))),
            Func::IsTriple => Value::Bool(matches!(view(t, arg(0)?), View::Triple(_))),
            Func::Triple => {
                let ids = [
                    term_id(t, arg(0)?)?,
                    term_id(t, arg(1)?)?,
                    term_id(t, arg(2)?)?,
                ];
                if !matches!(t.term(ids[0]), TermRef::Iri(_) | TermRef::Blank(_))
                    || !matches!(t.term(ids[1]), TermRef::Iri(_))
                {
                    return None;
                }
                Value::Triple(ids)
            }
            Func::Subject | Func::Predicate | Func::Object => match view(t, arg(0)?) {
                View::Triple(parts) => Value::Term(
                    parts[match f {
                        Func::Subject => 0,
                        Func::Predicate => 1,
                        _ => 2,
                    }],
                ),
                _ => return None,
            },
            Func::Cast(dt) => cast(t, arg(0)?, *dt)?,
            Func::Rand | Func::Now | Func::Uuid | Func::StrUuid => unreachable!("handled above"),
        })
    }

    fn uuid(&self) -> String {
        let mut rng = self.env.rng.borrow_mut();
        let mut b: [u8; 16] = std::array::from_fn(|_| rng.u8(..));
        b[6] = (b[6] & 0x0f) | 0x40;
        b[8] = (b[8] & 0x3f) | 0x80;
        let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
        format!(
            "{}-{}-{}-{}-{}",
            &h[..8],
            &h[8..12],
            &h[12..16],
            &h[16..20],
            &h[20..]
        )
    }

    fn resolve(&self, s: &str) -> Option<String> {
        match &self.env.base {
            Some(base) => base.resolve(s).ok().map(|i| i.into_inner()),
            None => oxiri::Iri::parse(s.to_owned()).ok().map(|i| i.into_inner()),
        }
    }
}

/// A value's term id: a stored term, or a triple term the terms already hold.
fn term_id(t: &Terms<'_>, v: &Value<'_>) -> Option<TermId> {
    match v {
        Value::Term(id) => Some(*id),
        Value::Triple(parts) => t
            .main()
            .lookup_triple(*parts)
            .or_else(|| t.local().lookup_triple(*parts)),
        _ => None,
    }
}

/// The datatype of a stored numeric literal (so `xsd:int` stays `xsd:int`).
fn datatype_of_value(t: &Terms<'_>, v: &Value<'_>) -> Option<TermId> {
    match v {
        Value::Term(id) => match t.term(*id) {
            TermRef::Literal {
                kind: LiteralKind::Typed(dt),
                ..
            } => Some(dt),
            _ => None,
        },
        _ => None,
    }
}

/// A value as a number (`None`: not numeric).
pub fn as_num(t: &(impl TermSource + ?Sized), v: &Value<'_>) -> Option<Num> {
    match v {
        Value::Num(n) => Some(*n),
        _ => match view(t, v) {
            View::Lit(Lit::Num(n)) => Some(n),
            _ => None,
        },
    }
}

/// Arithmetic with SPARQL's promotion. Integers are 64-bit: a result past that is an error (unbound), as in
/// Oxigraph, like every other integer past 64 bits (a cast, a negation, ABS, a SUM): never a wrong number, and
/// never an `xsd:decimal` where XPath says `xsd:integer`.
pub fn arith(op: NumOp, x: Num, y: Num) -> Option<Num> {
    Some(match Num::promote(x, y) {
        (Num::Int(a), Num::Int(b)) => match op {
            NumOp::Add => Num::Int(a.checked_add(b)?),
            NumOp::Sub => Num::Int(a.checked_sub(b)?),
            NumOp::Mul => Num::Int(a.checked_mul(b)?),
            NumOp::Div => {
                if b == 0 {
                    return None;
                }
                Num::Dec(Decimal::from(a).checked_div(Decimal::from(b))?)
            }
        },
        (Num::Dec(a), Num::Dec(b)) => Num::Dec(match op {
            NumOp::Add => a.checked_add(b)?,
            NumOp::Sub => a.checked_sub(b)?,
            NumOp::Mul => a.checked_mul(b)?,
            NumOp::Div => {
                if b.is_zero() {
                    return None;
                }
                a.checked_div(b)?
            }
        }),
        (Num::Float(a), Num::Float(b)) => Num::Float(match op {
            NumOp::Add => a + b,
            NumOp::Sub => a - b,
            NumOp::Mul => a * b,
            NumOp::Div => a / b,
        }),
        (Num::Double(a), Num::Double(b)) => Num::Double(match op {
            NumOp::Add => a + b,
            NumOp::Sub => a - b,
            NumOp::Mul => a * b,
            NumOp::Div => a / b,
        }),
        _ => return None,
    })
}

fn rounding(f: &Func, n: Num) -> Option<Num> {
    Some(match n {
        Num::Int(i) => Num::Int(if *f == Func::Abs { i.checked_abs()? } else { i }),
        Num::Dec(d) => Num::Dec(match f {
            Func::Abs => d.abs(),
            Func::Ceil => d.ceil(),
            Func::Floor => d.floor(),
            _ => (d + Decimal::new(5, 1)).floor(),
        }),
        Num::Float(x) => Num::Float(match f {
            Func::Abs => x.abs(),
            Func::Ceil => x.ceil(),
            Func::Floor => x.floor(),
            _ => (x + 0.5).floor(),
        }),
        Num::Double(x) => Num::Double(match f {
            Func::Abs => x.abs(),
            Func::Ceil => x.ceil(),
            Func::Floor => x.floor(),
            _ => (x + 0.5).floor(),
        }),
    })
}

type LangOf<'t> = Option<(Cow<'t, str>, Option<Direction>)>;

fn owned_lang((tag, d): (Cow<'_, str>, Option<Direction>)) -> (String, Option<Direction>) {
    (tag.into_owned(), d)
}

/// A string literal (simple, `xsd:string`, or language-tagged) and its language.
fn string_lit<'v>(t: &'v Terms<'_>, v: &'v Value<'_>) -> Option<(Cow<'v, str>, LangOf<'v>)> {
    match view(t, v) {
        View::Lit(Lit::Str(s)) => Some((s, None)),
        View::Lit(Lit::Lang(s, l, d)) => Some((s, Some((l, d)))),
        _ => None,
    }
}

/// A simple literal or `xsd:string`.
fn simple_str<'v>(t: &'v Terms<'_>, v: &'v Value<'_>) -> Option<Cow<'v, str>> {
    match view(t, v) {
        View::Lit(Lit::Str(s)) => Some(s),
        _ => None,
    }
}

/// Two string arguments under SPARQL's argument-compatibility rules.
#[allow(clippy::type_complexity)]
fn compatible<'v>(
    t: &'v Terms<'_>,
    a: &'v Value<'_>,
    b: &'v Value<'_>,
) -> Option<((Cow<'v, str>, LangOf<'v>), Cow<'v, str>)> {
    let (x, lx) = string_lit(t, a)?;
    let (y, ly) = string_lit(t, b)?;
    match (&lx, &ly) {
        (_, None) => {}
        (Some((l1, _)), Some((l2, _))) if l1.eq_ignore_ascii_case(l2) => {}
        _ => return None,
    }
    Some(((x, lx), y))
}

fn with_lang(s: String, lang: Option<(String, Option<Direction>)>) -> Value<'static> {
    match lang {
        Some((tag, d)) => Value::Lang(Cow::Owned(s), Cow::Owned(tag), d),
        None => Value::Str(Cow::Owned(s)),
    }
}

/// XPath `fn:substring`: 1-based, rounding its double arguments.
fn substring(s: &str, start: f64, len: Option<f64>) -> String {
    let start = start.round();
    let end = match len {
        Some(l) => start + l.round(),
        None => f64::INFINITY,
    };
    if start.is_nan() || end.is_nan() {
        return String::new();
    }
    s.chars()
        .enumerate()
        .filter(|(k, _)| {
            let pos = (*k + 1) as f64;
            pos >= start && pos < end
        })
        .map(|(_, c)| c)
        .collect()
}

fn lang_matches(tag: &str, range: &str) -> bool {
    if range == "*" {
        return !tag.is_empty();
    }
    let (tag, range) = (tag.to_ascii_lowercase(), range.to_ascii_lowercase());
    tag == range || (tag.starts_with(&range) && tag.as_bytes().get(range.len()) == Some(&b'-'))
}

fn encode_for_uri(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// An XPath replacement string (`$1`, `\$`) in the regex crate's syntax (`${1}`, `$$`).
fn xpath_replacement(r: &str) -> Option<String> {
    let mut out = String::with_capacity(r.len());
    let mut chars = r.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next()? {
                '$' => out.push_str("$$"),
                '\\' => out.push('\\'),
                _ => return None,
            },
            '$' => {
                let mut n = String::new();
                while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                    n.push(*d);
                    chars.next();
                }
                if n.is_empty() {
                    return None;
                }
                out.push_str(&format!("${{{n}}}"));
            }
            c => out.push(c),
        }
    }
    Some(out)
}

fn hash_hex(f: &Func, bytes: &[u8]) -> String {
    use sha2::Digest;
    let digest: Vec<u8> = match f {
        Func::Md5 => md5::Md5::digest(bytes).to_vec(),
        Func::Sha1 => sha1::Sha1::digest(bytes).to_vec(),
        Func::Sha256 => sha2::Sha256::digest(bytes).to_vec(),
        Func::Sha384 => sha2::Sha384::digest(bytes).to_vec(),
        _ => sha2::Sha512::digest(bytes).to_vec(),
    };
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// `sameTerm`: the same RDF term (lexical form, datatype and language included).
pub fn same_term(t: &(impl TermSource + ?Sized), a: &Value<'_>, b: &Value<'_>) -> bool {
    match (a, b) {
        (Value::Term(x), Value::Term(y)) => x == y,
        _ => term_key(t, a) == term_key(t, b),
    }
}

/// A value as (kind, lexical form, datatype or language) — what identifies an RDF term.
fn term_key<'v>(
    t: &'v (impl TermSource + ?Sized),
    v: &'v Value<'_>,
) -> Option<(u8, Cow<'v, str>, Cow<'v, str>)> {
    Some(match v {
        Value::Term(id) => match t.term(*id) {
            TermRef::Iri(i) => (0, Cow::Owned(i.to_string()), Cow::Borrowed("")),
            TermRef::Literal { lexical, kind } => match kind {
                LiteralKind::Simple => (2, Cow::Borrowed(lexical), Cow::Borrowed(wk::ALL[0].1)),
                LiteralKind::Lang { tag, direction } => (
                    3,
                    Cow::Borrowed(lexical),
                    Cow::Owned(format!("{tag}{direction:?}")),
                ),
                LiteralKind::Typed(dt) => (2, Cow::Borrowed(lexical), Cow::Owned(t.iri_text(dt))),
            },
            _ => return None,
        },
        Value::Iri(s) => (0, Cow::Borrowed(s), Cow::Borrowed("")),
        Value::Str(s) => (2, Cow::Borrowed(s), Cow::Borrowed(wk::ALL[0].1)),
        Value::Lang(s, l, d) => (3, Cow::Borrowed(s), Cow::Owned(format!("{l}{d:?}"))),
        Value::Typed(s, dt) => (2, Cow::Borrowed(s), Cow::Owned(t.iri_text(*dt))),
        Value::Bool(_) | Value::Num(_) | Value::DateTime(_) => {
            let (lex, dt) = lexical_and_datatype(v)?;
            (2, Cow::Owned(lex), Cow::Owned(t.iri_text(dt)))
        }
        Value::NewBlank(_) | Value::Triple(_) => return None,
    })
}

/// The canonical lexical form and datatype of a computed literal.
fn lexical_and_datatype(v: &Value<'_>) -> Option<(String, TermId)> {
    Some(match v {
        Value::Bool(b) => (b.to_string(), wk::XSD_BOOLEAN),
        Value::Num(n) => num_lexical(*n),
        Value::DateTime(d) => (d.to_string(), d.datatype),
        _ => return None,
    })
}

/// XSD casts (`xsd:integer(?x)` …) as SPARQL 1.1 §17.5 tabulates them.
fn cast(t: &Terms<'_>, v: &Value<'_>, dt: TermId) -> Option<Value<'static>> {
    let target = t.iri_text(dt);
    let local = target.strip_prefix("http://www.w3.org/2001/XMLSchema#")?;
    let vw = view(t, v);
    if matches!(vw, View::Blank | View::Triple(_)) {
        return None;
    }
    if local == "string" {
        // A typed value casts to its canonical string (`"0E1"^^xsd:double` is `"0"`); anything else to its text.
        let text = match &vw {
            View::Lit(Lit::Num(n)) => num_lexical(*n).0,
            View::Lit(Lit::Bool(b)) => b.to_string(),
            View::Lit(Lit::DateTime(d)) => d.to_string(),
            _ => str_of(t, v)?.into_owned(),
        };
        return Some(Value::Str(Cow::Owned(text)));
    }
    let source = match &vw {
        View::Iri(_) => return None,
        View::Lit(l) => l.clone(),
        _ => return None,
    };
    let text = |l: &Lit<'_>| -> Option<String> {
        match l {
            Lit::Str(s) => Some(s.trim().to_owned()),
            _ => None,
        }
    };
    Some(match local {
        "boolean" => Value::Bool(match &source {
            Lit::Bool(b) => *b,
            Lit::Num(n) => !n.is_falsy(),
            other => parse_boolean(&text(other)?)?,
        }),
        "double" | "float" => {
            let d = match &source {
                Lit::Num(n) => n.to_f64(),
                Lit::Bool(b) => f64::from(u8::from(*b)),
                other => parse_double(&text(other)?)?,
            };
            Value::Num(if local == "double" {
                Num::Double(d)
            } else {
                Num::Float(d as f32)
            })
        }
        "decimal" => Value::Num(Num::Dec(match &source {
            Lit::Num(Num::Int(i)) => Decimal::from(*i),
            Lit::Num(Num::Dec(d)) => *d,
            Lit::Num(Num::Float(f)) => Decimal::try_from(*f).ok()?,
            Lit::Num(Num::Double(f)) => Decimal::try_from(*f).ok()?,
            Lit::Bool(b) => Decimal::from(u8::from(*b)),
            other => parse_decimal(&text(other)?)?,
        })),
        "dateTime" | "date" | "time" => match &source {
            Lit::DateTime(d) if d.datatype == dt => Value::DateTime(*d),
            Lit::DateTime(d) if local == "date" => {
                let mut d = *d;
                d.datatype = dt;
                d.kind = super::datetime::DtKind::Date;
                Value::DateTime(d)
            }
            other => Value::DateTime(DateTime::parse(&text(other)?, dt)?),
        },
        _ if value::is_integer_type(&target) => {
            let i = match &source {
                Lit::Num(Num::Int(i)) => *i,
                Lit::Num(Num::Dec(d)) => d.trunc().to_i64()?,
                Lit::Num(n) => {
                    // Past 64 bits (1e300, 9.3e18) there is no integer to give: unbound, not i64::MAX.
                    let f = n.to_f64().trunc();
                    // -2^63 ≤ f < 2^63, both exact doubles.
                    let bound = -(i64::MIN as f64);
                    if !(-bound..bound).contains(&f) {
                        return None;
                    }
                    f as i64
                }
                Lit::Bool(b) => i64::from(*b),
                other => parse_integer(&text(other)?)?,
            };
            if !value::integer_in_range(local, i) {
                return None;
            }
            if local == "integer" {
                Value::Num(Num::Int(i))
            } else {
                Value::Typed(Cow::Owned(i.to_string()), dt)
            }
        }
        _ => {
            // Durations: accept a string in the lexical space as is.
            let s = text(&source)?;
            Value::Typed(Cow::Owned(s), dt)
        }
    })
}

/// Blank nodes minted by `BNODE(label)`: one node per label and solution.
#[derive(Default)]
pub struct BnodeLabels {
    minted: hashbrown::HashSet<TermId>,
    by_label: HashMap<(String, Vec<TermId>), TermId>,
}

impl BnodeLabels {
    /// The node for `label` in the solution `row` (blank nodes this table minted do not count as part of the
    /// solution, so two BNODE calls of one solution agree even after the first was bound).
    pub fn node(&mut self, terms: &mut Terms<'_>, label: String, row: &[TermId]) -> TermId {
        let key: Vec<TermId> = row
            .iter()
            .map(|c| {
                if self.minted.contains(c) {
                    super::ROW_UNBOUND
                } else {
                    *c
                }
            })
            .collect();
        if let Some(&id) = self.by_label.get(&(label.clone(), key.clone())) {
            return id;
        }
        let id = terms.fresh_blank();
        self.minted.insert(id);
        self.by_label.insert((label, key), id);
        id
    }
}

/// Interns a computed value; `label` gives the node of a `BNODE(label)` in the current solution.
pub fn intern_value(
    terms: &mut Terms<'_>,
    v: Value<'_>,
    label: &mut dyn FnMut(&mut Terms<'_>, String) -> TermId,
) -> TermId {
    match v {
        Value::Term(id) => id,
        Value::Str(s) => terms.literal(&s, LiteralKind::Simple),
        Value::Lang(s, l, d) => terms.literal(
            &s,
            LiteralKind::Lang {
                tag: &l,
                direction: d,
            },
        ),
        Value::Typed(s, dt) => terms.literal(&s, LiteralKind::Typed(dt)),
        Value::Iri(s) => terms.iri(&s),
        Value::Triple(t) => terms.triple(t),
        Value::NewBlank(None) => terms.fresh_blank(),
        Value::NewBlank(Some(l)) => label(terms, l),
        other => {
            let (lex, dt) = lexical_and_datatype(&other).expect("a computed literal");
            terms.literal(&lex, LiteralKind::Typed(dt))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substring_follows_xpath_rounding() {
        assert_eq!(substring("motor car", 6.0, None), " car");
        assert_eq!(substring("metadata", 4.0, Some(3.0)), "ada");
        assert_eq!(substring("12345", 1.5, Some(2.6)), "234");
        assert_eq!(substring("12345", 0.0, Some(3.0)), "12");
    }

    #[test]
    fn language_ranges_match_at_subtag_boundaries() {
        assert!(lang_matches("en-US", "en"));
        assert!(!lang_matches("english", "en"));
        assert!(lang_matches("fr", "*"));
        assert!(!lang_matches("", "*"));
    }

    #[test]
    fn xpath_replacements_translate_group_references() {
        assert_eq!(xpath_replacement("$1x").as_deref(), Some("${1}x"));
        assert_eq!(xpath_replacement("a\\$b").as_deref(), Some("a$$b"));
        assert_eq!(xpath_replacement("$"), None);
    }

    #[test]
    fn integer_overflow_is_unbound_and_division_gives_a_decimal() {
        assert_eq!(arith(NumOp::Add, Num::Int(i64::MAX), Num::Int(1)), None);
        assert_eq!(arith(NumOp::Sub, Num::Int(i64::MIN), Num::Int(1)), None);
        assert_eq!(arith(NumOp::Mul, Num::Int(1 << 62), Num::Int(4)), None);
        assert_eq!(
            arith(NumOp::Add, Num::Int(i64::MAX - 1), Num::Int(1)),
            Some(Num::Int(i64::MAX))
        );
        assert_eq!(
            arith(NumOp::Div, Num::Int(1), Num::Int(2)),
            Some(Num::Dec(Decimal::new(5, 1)))
        );
        assert_eq!(arith(NumOp::Div, Num::Int(1), Num::Int(0)), None);
    }
}
