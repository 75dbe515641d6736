//! This module defines the query algebra every front end lowers to: [`Op`] trees over [`VarId`]s and
//! dictionary constants, with [`Expr`] expressions. SPARQL (and later the JSON-LD `where` language) lower here;
//! the planner and executor see nothing else.

pub mod display;
pub mod expr;
pub mod lower;
pub mod op;

pub use expr::{Aggregate, AggregateKind, CmpOp, Expr, Func, NumOp};
pub use op::{
    GraphTerm, Op, PathExpr, PatternTerm, TriplePattern, ValueRows, VarId, VarSet, VarTable,
};
