//! This module defines [`Expr`], the expression algebra of FILTER, BIND, ORDER BY and aggregates, and the
//! function set [`Func`] (the SPARQL 1.1 library plus the SPARQL 1.2 additions).

use crate::store::TermId;

use super::op::{Op, VarId, VarSet};

/// A comparison operator.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `=` (value equality, an error for incomparable values).
    Eq,
    /// `!=`.
    Ne,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
}

/// An arithmetic operator.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum NumOp {
    /// `+`.
    Add,
    /// `-`.
    Sub,
    /// `*`.
    Mul,
    /// `/`.
    Div,
}

/// A built-in function (operators that are not functions are [`Expr`] variants).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Func {
    Str,
    Lang,
    LangMatches,
    Datatype,
    Iri,
    BNode,
    Rand,
    Abs,
    Ceil,
    Floor,
    Round,
    Concat,
    SubStr,
    StrLen,
    Replace,
    UCase,
    LCase,
    EncodeForUri,
    Contains,
    StrStarts,
    StrEnds,
    StrBefore,
    StrAfter,
    Year,
    Month,
    Day,
    Hours,
    Minutes,
    Seconds,
    Timezone,
    Tz,
    Now,
    Uuid,
    StrUuid,
    Md5,
    Sha1,
    Sha256,
    Sha384,
    Sha512,
    StrLang,
    StrDt,
    IsIri,
    IsBlank,
    IsLiteral,
    IsNumeric,
    Regex,
    /// `TRIPLE(s, p, o)` (SPARQL 1.2).
    Triple,
    /// `SUBJECT(t)`.
    Subject,
    /// `PREDICATE(t)`.
    Predicate,
    /// `OBJECT(t)`.
    Object,
    /// `isTRIPLE(t)`.
    IsTriple,
    /// `LANGDIR(l)`.
    LangDir,
    /// `hasLANG(l)`.
    HasLang,
    /// `hasLANGDIR(l)`.
    HasLangDir,
    /// `STRLANGDIR(s, lang, dir)`.
    StrLangDir,
    /// An XSD constructor function (`xsd:integer(?x)`): a cast to the datatype.
    Cast(TermId),
}

impl Func {
    /// Whether two calls with the same arguments may give different results (RAND, NOW without a fixed
    /// evaluation time is handled by the context, BNODE mints, UUIDs are random).
    pub fn is_volatile(&self) -> bool {
        matches!(self, Func::Rand | Func::Uuid | Func::StrUuid | Func::BNode)
    }
}

/// An aggregate function.
#[derive(Clone, Debug, PartialEq)]
pub enum AggregateKind {
    /// `COUNT(*)`.
    CountAll,
    /// `COUNT(e)`.
    Count,
    /// `SUM(e)`.
    Sum,
    /// `AVG(e)`.
    Avg,
    /// `MIN(e)`.
    Min,
    /// `MAX(e)`.
    Max,
    /// `SAMPLE(e)`.
    Sample,
    /// `GROUP_CONCAT(e; SEPARATOR = s)`.
    GroupConcat {
        /// The separator (default a space).
        separator: String,
    },
}

/// One aggregate of a GROUP BY.
#[derive(Clone, Debug, PartialEq)]
pub struct Aggregate {
    /// Which function.
    pub kind: AggregateKind,
    /// Its argument (`None` for `COUNT(*)`).
    pub expr: Option<Expr>,
    /// `DISTINCT`.
    pub distinct: bool,
}

/// An expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// The boolean `true` (what an absent condition means).
    True,
    /// A constant term.
    Const(TermId),
    /// A variable (an error when unbound).
    Var(VarId),
    /// `||` (SPARQL's three-valued logic over errors).
    Or(Box<Expr>, Box<Expr>),
    /// `&&`.
    And(Box<Expr>, Box<Expr>),
    /// `!`.
    Not(Box<Expr>),
    /// A comparison.
    Compare(CmpOp, Box<Expr>, Box<Expr>),
    /// `sameTerm`.
    SameTerm(Box<Expr>, Box<Expr>),
    /// `e IN (…)`; `NOT IN` is `Not(In)`.
    In(Box<Expr>, Vec<Expr>),
    /// Arithmetic.
    Arith(NumOp, Box<Expr>, Box<Expr>),
    /// Unary `-`.
    Neg(Box<Expr>),
    /// Unary `+`.
    Plus(Box<Expr>),
    /// `BOUND(?v)`.
    Bound(VarId),
    /// `IF(c, a, b)`.
    If(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `COALESCE(…)`.
    Coalesce(Vec<Expr>),
    /// `EXISTS { … }`; `NOT EXISTS` is `Not(Exists)`.
    Exists(Box<Op>),
    /// A function call.
    Call(Func, Vec<Expr>),
}

impl Expr {
    /// The variables the expression reads (inside EXISTS too).
    pub fn vars(&self) -> VarSet {
        let mut out = VarSet::new();
        self.collect_vars(&mut out);
        out
    }

    fn collect_vars(&self, out: &mut VarSet) {
        match self {
            Expr::True | Expr::Const(_) => {}
            Expr::Var(v) | Expr::Bound(v) => out.insert(*v),
            Expr::Or(a, b)
            | Expr::And(a, b)
            | Expr::Compare(_, a, b)
            | Expr::SameTerm(a, b)
            | Expr::Arith(_, a, b) => {
                a.collect_vars(out);
                b.collect_vars(out);
            }
            Expr::Not(a) | Expr::Neg(a) | Expr::Plus(a) => a.collect_vars(out),
            Expr::In(a, list) => {
                a.collect_vars(out);
                list.iter().for_each(|e| e.collect_vars(out));
            }
            Expr::If(a, b, c) => {
                a.collect_vars(out);
                b.collect_vars(out);
                c.collect_vars(out);
            }
            Expr::Coalesce(list) | Expr::Call(_, list) => {
                list.iter().for_each(|e| e.collect_vars(out))
            }
            // What the pattern reads of the row it is substituted with, filters included.
            Expr::Exists(op) => out.extend(&op.mentioned_vars()),
        }
    }

    /// Whether the expression contains an EXISTS.
    pub fn has_exists(&self) -> bool {
        let mut found = false;
        self.visit(&mut |e| found |= matches!(e, Expr::Exists(_)));
        found
    }

    /// Calls `f` on this expression and every sub-expression (not inside EXISTS patterns).
    pub fn visit<'e>(&'e self, f: &mut impl FnMut(&'e Expr)) {
        f(self);
        match self {
            Expr::True | Expr::Const(_) | Expr::Var(_) | Expr::Bound(_) | Expr::Exists(_) => {}
            Expr::Or(a, b)
            | Expr::And(a, b)
            | Expr::Compare(_, a, b)
            | Expr::SameTerm(a, b)
            | Expr::Arith(_, a, b) => {
                a.visit(f);
                b.visit(f);
            }
            Expr::Not(a) | Expr::Neg(a) | Expr::Plus(a) => a.visit(f),
            Expr::In(a, list) => {
                a.visit(f);
                list.iter().for_each(|e| e.visit(f));
            }
            Expr::If(a, b, c) => {
                a.visit(f);
                b.visit(f);
                c.visit(f);
            }
            Expr::Coalesce(list) | Expr::Call(_, list) => list.iter().for_each(|e| e.visit(f)),
        }
    }

    /// Calls `f` on every EXISTS pattern of the expression (not inside the patterns) with whether it is read
    /// negatively. An EXISTS is read positively only as a filter condition (`positive`), possibly under `&&` and
    /// `||`; under `!`, as an operand of a comparison, IF, COALESCE, IN or a function, or in BIND, a row can come
    /// from its *absence*, so it counts as negated (double negation included: conservative).
    pub fn visit_exists<'e>(&'e self, positive: bool, f: &mut impl FnMut(&'e Op, bool)) {
        match self {
            Expr::True | Expr::Const(_) | Expr::Var(_) | Expr::Bound(_) => {}
            Expr::Exists(op) => f(op, !positive),
            Expr::Or(a, b) | Expr::And(a, b) => {
                a.visit_exists(positive, f);
                b.visit_exists(positive, f);
            }
            Expr::Compare(_, a, b) | Expr::SameTerm(a, b) | Expr::Arith(_, a, b) => {
                a.visit_exists(false, f);
                b.visit_exists(false, f);
            }
            Expr::Not(a) | Expr::Neg(a) | Expr::Plus(a) => a.visit_exists(false, f),
            Expr::In(a, list) => {
                a.visit_exists(false, f);
                list.iter().for_each(|e| e.visit_exists(false, f));
            }
            Expr::If(a, b, c) => {
                a.visit_exists(false, f);
                b.visit_exists(false, f);
                c.visit_exists(false, f);
            }
            Expr::Coalesce(list) | Expr::Call(_, list) => {
                list.iter().for_each(|e| e.visit_exists(false, f))
            }
        }
    }

    /// Calls `f` on every EXISTS pattern in the expression, mutably.
    pub fn visit_ops_mut(&mut self, f: &mut impl FnMut(&mut Op)) {
        match self {
            Expr::True | Expr::Const(_) | Expr::Var(_) | Expr::Bound(_) => {}
            Expr::Exists(op) => f(op),
            Expr::Or(a, b)
            | Expr::And(a, b)
            | Expr::Compare(_, a, b)
            | Expr::SameTerm(a, b)
            | Expr::Arith(_, a, b) => {
                a.visit_ops_mut(f);
                b.visit_ops_mut(f);
            }
            Expr::Not(a) | Expr::Neg(a) | Expr::Plus(a) => a.visit_ops_mut(f),
            Expr::In(a, list) => {
                a.visit_ops_mut(f);
                list.iter_mut().for_each(|e| e.visit_ops_mut(f));
            }
            Expr::If(a, b, c) => {
                a.visit_ops_mut(f);
                b.visit_ops_mut(f);
                c.visit_ops_mut(f);
            }
            Expr::Coalesce(list) | Expr::Call(_, list) => {
                list.iter_mut().for_each(|e| e.visit_ops_mut(f))
            }
        }
    }

    /// `a && b`, simplified when one side is `true`.
    pub fn and(a: Expr, b: Expr) -> Expr {
        match (a, b) {
            (Expr::True, x) | (x, Expr::True) => x,
            (a, b) => Expr::And(Box::new(a), Box::new(b)),
        }
    }

    /// The conjunction of `items` (`True` for none) as a balanced tree: a list of any length nests only as deep
    /// as its logarithm (a left-deep chain of a million conditions overflowed the stack of every walk over it).
    /// `&&` is associative in SPARQL's three-valued logic, so the grouping changes no answer.
    pub fn all(items: Vec<Expr>) -> Expr {
        let items: Vec<Expr> = items.into_iter().filter(|e| *e != Expr::True).collect();
        balanced(items, |a, b| Expr::And(Box::new(a), Box::new(b))).unwrap_or(Expr::True)
    }

    /// The disjunction of `items` as a balanced tree (see [`Expr::all`]); `None` for none.
    pub fn any(items: Vec<Expr>) -> Option<Expr> {
        balanced(items, |a, b| Expr::Or(Box::new(a), Box::new(b)))
    }
}

/// `items` joined pairwise, round after round, in order: a tree of depth ⌈log₂ n⌉; `None` for none.
fn balanced(mut items: Vec<Expr>, join: fn(Expr, Expr) -> Expr) -> Option<Expr> {
    while items.len() > 1 {
        let mut next = Vec::with_capacity(items.len().div_ceil(2));
        let mut it = items.into_iter();
        while let Some(a) = it.next() {
            next.push(match it.next() {
                Some(b) => join(a, b),
                None => a,
            });
        }
        items = next;
    }
    items.pop()
}
