//! This module defines the text form of [`Op`] trees and expressions, for plan printing and messages.

use std::fmt::Write;

use crate::store::{TermId, TermSource};

use super::expr::Expr;
use super::op::{GraphTerm, Op, PathExpr, PatternTerm, VarId, VarTable};

/// Names terms and variables for display.
pub struct Namer<'a> {
    /// The terms (ids past their end are shown by number).
    pub dict: &'a dyn TermSource,
    /// The variables.
    pub vars: &'a VarTable,
}

impl Namer<'_> {
    /// A term in N-Triples syntax, IRIs shortened to their local part when long.
    pub fn term(&self, id: TermId) -> String {
        if id >= self.dict.end() {
            return format!("#{}", id.0);
        }
        self.dict.display(id)
    }

    /// `?name`.
    pub fn var(&self, v: VarId) -> String {
        if v.index() < self.vars.len() {
            format!("?{}", self.vars.name(v))
        } else {
            format!("?{}", v.0)
        }
    }

    /// A pattern position.
    pub fn pattern_term(&self, t: &PatternTerm) -> String {
        match t {
            PatternTerm::Var(v) => self.var(*v),
            PatternTerm::Const(c) => self.term(*c),
            PatternTerm::Triple(t) => format!(
                "<<( {} {} {} )>>",
                self.pattern_term(&t[0]),
                self.pattern_term(&t[1]),
                self.pattern_term(&t[2])
            ),
        }
    }

    /// A graph term, `None` for the default graph.
    pub fn graph(&self, g: &GraphTerm) -> Option<String> {
        match g {
            GraphTerm::Default => None,
            GraphTerm::Named(id) => Some(self.term(*id)),
            GraphTerm::Var(v) => Some(self.var(*v)),
        }
    }

    /// A path expression.
    pub fn path(&self, p: &PathExpr) -> String {
        match p {
            PathExpr::Link(id) => self.term(*id),
            PathExpr::Reverse(p) => format!("^({})", self.path(p)),
            PathExpr::Sequence(a, b) => format!("({} / {})", self.path(a), self.path(b)),
            PathExpr::Alternative(a, b) => format!("({} | {})", self.path(a), self.path(b)),
            PathExpr::ZeroOrMore(p) => format!("({})*", self.path(p)),
            PathExpr::OneOrMore(p) => format!("({})+", self.path(p)),
            PathExpr::ZeroOrOne(p) => format!("({})?", self.path(p)),
            PathExpr::Negated(set) => format!(
                "!({})",
                set.iter()
                    .map(|t| self.term(*t))
                    .collect::<Vec<_>>()
                    .join(" | ")
            ),
        }
    }

    /// An expression, in SPARQL-like syntax.
    pub fn expr(&self, e: &Expr) -> String {
        use crate::ir::expr::{CmpOp, NumOp};
        match e {
            Expr::True => "true".to_owned(),
            Expr::Const(c) => self.term(*c),
            Expr::Var(v) => self.var(*v),
            Expr::Or(a, b) => format!("({} || {})", self.expr(a), self.expr(b)),
            Expr::And(a, b) => format!("({} && {})", self.expr(a), self.expr(b)),
            Expr::Not(a) => format!("!{}", self.expr(a)),
            Expr::Compare(op, a, b) => {
                let op = match op {
                    CmpOp::Eq => "=",
                    CmpOp::Ne => "!=",
                    CmpOp::Lt => "<",
                    CmpOp::Le => "<=",
                    CmpOp::Gt => ">",
                    CmpOp::Ge => ">=",
                };
                format!("({} {op} {})", self.expr(a), self.expr(b))
            }
            Expr::SameTerm(a, b) => format!("sameTerm({}, {})", self.expr(a), self.expr(b)),
            Expr::In(a, list) => format!(
                "({} IN ({}))",
                self.expr(a),
                list.iter()
                    .map(|e| self.expr(e))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Expr::Arith(op, a, b) => {
                let op = match op {
                    NumOp::Add => "+",
                    NumOp::Sub => "-",
                    NumOp::Mul => "*",
                    NumOp::Div => "/",
                };
                format!("({} {op} {})", self.expr(a), self.expr(b))
            }
            Expr::Neg(a) => format!("-{}", self.expr(a)),
            Expr::Plus(a) => format!("+{}", self.expr(a)),
            Expr::Bound(v) => format!("BOUND({})", self.var(*v)),
            Expr::If(a, b, c) => {
                format!("IF({}, {}, {})", self.expr(a), self.expr(b), self.expr(c))
            }
            Expr::Coalesce(list) => format!(
                "COALESCE({})",
                list.iter()
                    .map(|e| self.expr(e))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Expr::Exists(_) => "EXISTS { … }".to_owned(),
            Expr::Call(f, args) => format!(
                "{f:?}({})",
                args.iter()
                    .map(|e| self.expr(e))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// An operator tree, one node a line, indented.
    pub fn op(&self, op: &Op) -> String {
        let mut out = String::new();
        self.op_into(op, 0, &mut out);
        out
    }

    fn op_into(&self, op: &Op, depth: usize, out: &mut String) {
        let pad = "  ".repeat(depth);
        let line = match op {
            Op::Empty => "Empty".to_owned(),
            Op::Unit => "Unit".to_owned(),
            Op::Pattern(p) => {
                let g = self
                    .graph(&p.graph)
                    .map(|g| format!(" in {g}"))
                    .unwrap_or_default();
                format!(
                    "Pattern {} {} {}{g}",
                    self.pattern_term(&p.terms[0]),
                    self.pattern_term(&p.terms[1]),
                    self.pattern_term(&p.terms[2])
                )
            }
            Op::Path {
                subject,
                path,
                object,
                ..
            } => format!(
                "Path {} {} {}",
                self.pattern_term(subject),
                self.path(path),
                self.pattern_term(object)
            ),
            Op::GraphName(g) => format!("GraphName {}", self.graph(g).unwrap_or_default()),
            Op::Join(_) => "Join".to_owned(),
            Op::LeftJoin { filter, .. } => match filter {
                Some(f) => format!("LeftJoin filter {}", self.expr(f)),
                None => "LeftJoin".to_owned(),
            },
            Op::Minus { .. } => "Minus".to_owned(),
            Op::Filter { expr, .. } => format!("Filter {}", self.expr(expr)),
            Op::Extend { var, expr, .. } => {
                format!("Extend {} := {}", self.var(*var), self.expr(expr))
            }
            Op::Values { vars, rows } => format!(
                "Values ({}) × {} rows",
                vars.iter()
                    .map(|v| self.var(*v))
                    .collect::<Vec<_>>()
                    .join(" "),
                rows.len()
            ),
            Op::Union(_) => "Union".to_owned(),
            Op::Project { vars, .. } => format!(
                "Project {}",
                vars.iter()
                    .map(|v| self.var(*v))
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
            Op::Distinct(_) => "Distinct".to_owned(),
            Op::Reduced(_) => "Reduced".to_owned(),
            Op::OrderBy { keys, .. } => format!(
                "OrderBy {}",
                keys.iter()
                    .map(|(e, d)| if *d {
                        format!("DESC({})", self.expr(e))
                    } else {
                        self.expr(e)
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
            Op::Slice { offset, limit, .. } => format!("Slice offset {offset} limit {limit:?}"),
            Op::Group {
                keys, aggregates, ..
            } => format!(
                "Group by ({}) computing {}",
                keys.iter()
                    .map(|v| self.var(*v))
                    .collect::<Vec<_>>()
                    .join(" "),
                aggregates
                    .iter()
                    .map(|(v, a)| format!("{}={:?}", self.var(*v), a.kind))
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
        };
        let _ = writeln!(out, "{pad}{line}");
        match op {
            Op::Join(ops) | Op::Union(ops) => {
                ops.iter().for_each(|o| self.op_into(o, depth + 1, out))
            }
            Op::LeftJoin { left, right, .. } | Op::Minus { left, right } => {
                self.op_into(left, depth + 1, out);
                self.op_into(right, depth + 1, out);
            }
            Op::Filter { input, .. }
            | Op::Extend { input, .. }
            | Op::Project { input, .. }
            | Op::Distinct(input)
            | Op::Reduced(input)
            | Op::OrderBy { input, .. }
            | Op::Slice { input, .. }
            | Op::Group { input, .. } => self.op_into(input, depth + 1, out),
            _ => {}
        }
    }
}
