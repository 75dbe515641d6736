//! This module defines query planning: [`Op`](crate::ir::Op) trees become physical [`Plan`]s whose join order
//! comes from exact index counts, with filters placed where their variables are bound.

pub mod cost;
pub mod physical;
pub mod planner;
pub mod probe;

pub use physical::{ExistsPlan, Kind, LeftMode, Node, Plan};
pub use planner::{Dataset, plan, plan_with};
