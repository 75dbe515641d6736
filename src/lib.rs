//! reasonctl: an RDF reasoner whose rules are ordinary queries, run to a fixpoint by a planned query executor.
//!
//! Modules depend downward only: `cli → app → output → store`. See `DESIGN.md` for the map.

pub mod app;
pub mod cli;
pub mod codec;
pub mod control;
pub mod datalog;
pub mod excerpt;
pub mod exec;
pub mod ir;
pub mod lint;
pub mod output;
pub mod plan;
pub mod query;
pub mod rules;
pub mod state;
pub mod store;

/// The stack of every thread that evaluates rules, queries or parsers: the command's own thread, rayon's
/// workers and the loader's parser thread. Walks over a rule or a query recurse once per level of nesting (which
/// the parsers bound), a derivation tree of `explain --depth` once per level, and the data parsers once per
/// nested term; a worker with a smaller stack than the command thread would overflow where it does not.
pub const STACK: usize = 256 << 20;
