//! This module defines the [`Budget`] of a run (time, facts, memory, passes per stage) and why a run was capped.

use std::time::{Duration, Instant};

/// Estimated heap bytes one derived fact costs: its dedup entry (~24), its overlay entry (~20) and its share of
/// a pass's buffers.
pub const BYTES_PER_FACT: usize = 64;

/// The limits of a run; `None` is no limit.
#[derive(Clone, Debug, Default)]
pub struct Budget {
    /// Wall-clock limit, from the start of the fixpoint.
    pub timeout: Option<Duration>,
    /// The most derived facts.
    pub max_facts: Option<usize>,
    /// The most estimated heap bytes for derived facts.
    pub max_memory: Option<usize>,
    /// The most passes in one stage.
    pub max_iterations: Option<usize>,
}

/// Why a run stopped before its fixpoint.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CapReason {
    /// The deadline passed.
    Time,
    /// The fact limit was reached.
    Facts,
    /// The memory estimate reached its limit.
    Memory,
    /// A stage ran its last allowed pass and that pass still derived facts.
    Iterations,
}

impl CapReason {
    /// The name `--stats` and messages use.
    pub fn name(self) -> &'static str {
        match self {
            CapReason::Time => "time",
            CapReason::Facts => "facts",
            CapReason::Memory => "memory",
            CapReason::Iterations => "iterations",
        }
    }
}

impl Budget {
    /// What is left for a run that follows one which derived `derived` facts in `elapsed` (the OWL 2 RL closure
    /// ahead of the rules): fewer facts, less memory, less time; passes are per stage and stay as they are.
    pub fn after(&self, derived: usize, elapsed: Duration) -> Budget {
        Budget {
            timeout: self.timeout.map(|t| t.saturating_sub(elapsed)),
            max_facts: self.max_facts.map(|m| m.saturating_sub(derived)),
            max_memory: self
                .max_memory
                .map(|m| m.saturating_sub(derived.saturating_mul(BYTES_PER_FACT))),
            max_iterations: self.max_iterations,
        }
    }

    /// The deadline for a run starting now.
    pub fn deadline(&self, start: Instant) -> Option<Instant> {
        self.timeout.map(|t| start + t)
    }

    /// How many facts may still be derived when `derived` already were (`usize::MAX`: unlimited), and the cap
    /// that reaching it means.
    pub fn room(&self, derived: usize) -> (usize, CapReason) {
        let by_facts = self
            .max_facts
            .map_or(usize::MAX, |m| m.saturating_sub(derived));
        let by_memory = self
            .max_memory
            .map_or(usize::MAX, |m| (m / BYTES_PER_FACT).saturating_sub(derived));
        if by_memory < by_facts {
            (by_memory, CapReason::Memory)
        } else {
            (by_facts, CapReason::Facts)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_is_the_tighter_of_facts_and_memory() {
        let b = Budget {
            max_facts: Some(100),
            max_memory: Some(64 * 50),
            ..Budget::default()
        };
        assert_eq!(b.room(10), (40, CapReason::Memory));
        let b = Budget {
            max_facts: Some(30),
            ..Budget::default()
        };
        assert_eq!(b.room(10), (20, CapReason::Facts));
        assert_eq!(Budget::default().room(5).0, usize::MAX);
    }

    #[test]
    fn the_budget_after_a_run_is_what_that_run_left() {
        let b = Budget {
            timeout: Some(Duration::from_secs(10)),
            max_facts: Some(100),
            max_memory: Some(64 * 50),
            max_iterations: Some(7),
        };
        let left = b.after(30, Duration::from_secs(4));
        assert_eq!(left.timeout, Some(Duration::from_secs(6)));
        assert_eq!(left.max_facts, Some(70));
        assert_eq!(left.max_memory, Some(64 * 20));
        assert_eq!(left.max_iterations, Some(7));
        let spent = b.after(1000, Duration::from_secs(60));
        assert_eq!(spent.timeout, Some(Duration::ZERO));
        assert_eq!((spent.max_facts, spent.max_memory), (Some(0), Some(0)));
        assert_eq!(
            Budget::default().after(5, Duration::from_secs(1)).max_facts,
            None
        );
    }
}
