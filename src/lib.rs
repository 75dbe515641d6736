//! reasonctl: an RDF reasoner whose rules are ordinary queries, run to a fixpoint by a planned query executor.
//!
//! Modules depend downward only: `cli → app → output → store`. See `DESIGN.md` for the map.

pub mod app;
pub mod cli;
pub mod datalog;
pub mod exec;
pub mod ir;
pub mod lint;
pub mod output;
pub mod plan;
pub mod query;
pub mod rules;
pub mod store;
