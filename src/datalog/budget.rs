//! This module defines the [`Budget`] of a run (time, facts, memory, passes per stage), what the phase after it
//! needs set aside ([`Reserve`]), and why a run was capped.

use std::time::{Duration, Instant};

use crate::control;

/// Heap one more derived fact costs while the run goes on: its overlay entry and index positions (~24 bytes),
/// its share of a pass's buffers (the found facts, their order, the next pass's seed), and its dedup entry under
/// a budget. Without the counting allocator (a library user), also the estimate of the heap itself.
pub const BYTES_PER_FACT: usize = 64;

/// The share of `--max-memory` reasoning leaves unused: transient allocations inside a pass (a join's hash table,
/// a sort's buffer) come on top of what the pass starts with.
const MEMORY_MARGIN: usize = 8;

/// What writing a run's facts will need, set aside from its budget: the run stops early enough, in time and in
/// memory, that what it derived can still be written within `--timeout` and `--max-memory`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Reserve {
    /// Time to write one fact.
    pub time_per_fact: Duration,
    /// Heap to write one fact.
    pub bytes_per_fact: usize,
    /// Facts written besides the derived ones (the asserted ones, with `--include-asserted`).
    pub facts: usize,
}

impl Reserve {
    /// What `materialize` needs to sort and write each fact as RDF: 0.4–0.7 µs and about 40 bytes per fact
    /// measured on LUBM(10) (a 16-byte quad, its sort buffer, the formatted blocks); `extra` facts besides the
    /// derived ones. A slower disk may need more: past the deadline's grace the command is stopped instead.
    pub fn rdf_output(extra: usize) -> Self {
        Self {
            time_per_fact: Duration::from_nanos(750),
            bytes_per_fact: 48,
            facts: extra,
        }
    }

    /// The time set aside when `derived` facts were derived.
    pub fn time(&self, derived: usize) -> Duration {
        let facts = derived.saturating_add(self.facts) as u64;
        Duration::from_nanos((self.time_per_fact.as_nanos() as u64).saturating_mul(facts))
    }

    /// The heap set aside when `derived` facts were derived.
    pub fn bytes(&self, derived: usize) -> usize {
        derived
            .saturating_add(self.facts)
            .saturating_mul(self.bytes_per_fact)
    }
}

/// The limits of a run; `None` is no limit.
#[derive(Clone, Debug, Default)]
pub struct Budget {
    /// Wall-clock limit, from the start of the run (the command gives the run what is left of `--timeout`).
    pub timeout: Option<Duration>,
    /// The most derived facts.
    pub max_facts: Option<usize>,
    /// The most heap bytes of the whole process (`--max-memory`): counted by the allocator when the binary runs.
    pub max_memory: Option<usize>,
    /// The most passes in one stage.
    pub max_iterations: Option<usize>,
    /// What the output after the run needs.
    pub reserve: Reserve,
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
    /// ahead of the rules): fewer facts, less time; passes are per stage and stay as they are. The memory limit
    /// stays: it bounds the whole heap, which holds the first run's facts (only the estimate used without the
    /// counting allocator is charged for them).
    pub fn after(&self, derived: usize, elapsed: Duration) -> Budget {
        Budget {
            timeout: self.timeout.map(|t| t.saturating_sub(elapsed)),
            max_facts: self.max_facts.map(|m| m.saturating_sub(derived)),
            max_memory: self.max_memory.map(|m| {
                if control::counting() {
                    m
                } else {
                    m.saturating_sub(derived.saturating_mul(BYTES_PER_FACT))
                }
            }),
            max_iterations: self.max_iterations,
            reserve: self.reserve,
        }
    }

    /// The deadline for a run starting now (`None` also when it lies past what an [`Instant`] holds).
    pub fn deadline(&self, start: Instant) -> Option<Instant> {
        self.timeout.and_then(|t| control::deadline(start, t))
    }

    /// When a run that has derived `derived` facts must stop to leave the output its time.
    pub fn stop_by(&self, deadline: Instant, derived: usize) -> Instant {
        deadline
            .checked_sub(self.reserve.time(derived))
            .unwrap_or(deadline)
    }

    /// How many facts may still be derived when `derived` already were (`usize::MAX`: unlimited), and the cap
    /// that reaching it means. The memory room is what the heap has left under `--max-memory` (less a margin and
    /// the output's reserve), at [`BYTES_PER_FACT`] plus the reserve a fact.
    pub fn room(&self, derived: usize) -> (usize, CapReason) {
        let by_facts = self
            .max_facts
            .map_or(usize::MAX, |m| m.saturating_sub(derived));
        let by_memory = self.max_memory.map_or(usize::MAX, |m| {
            let heap = if control::counting() {
                control::heap()
            } else {
                derived.saturating_mul(BYTES_PER_FACT)
            };
            let usable = m - m / MEMORY_MARGIN;
            let left = usable.saturating_sub(heap.saturating_add(self.reserve.bytes(derived)));
            left / (BYTES_PER_FACT + self.reserve.bytes_per_fact)
        });
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
        // Without the counting allocator (a test), the heap is estimated from the facts.
        let b = Budget {
            max_facts: Some(100),
            max_memory: Some(64 * 64),
            ..Budget::default()
        };
        // 7/8 of 4096 bytes is 3584: 56 facts, 10 of them derived.
        assert_eq!(b.room(10), (46, CapReason::Memory));
        let reserved = Budget {
            reserve: Reserve {
                bytes_per_fact: 64,
                ..Reserve::default()
            },
            ..b.clone()
        };
        // Each fact also reserves 64 bytes of output: (3584 - 640 - 640) / 128.
        assert_eq!(reserved.room(10), (18, CapReason::Memory));
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
            ..Budget::default()
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

    #[test]
    fn the_output_reserve_moves_the_stop_earlier_by_the_time_to_write() {
        let b = Budget {
            reserve: Reserve::rdf_output(1_000_000),
            ..Budget::default()
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        // 1M asserted + 1M derived facts at 0.75 µs each: 1.5 s.
        assert_eq!(
            b.stop_by(deadline, 1_000_000),
            deadline - Duration::from_millis(1500)
        );
        assert_eq!(Budget::default().stop_by(deadline, 5), deadline);
        let huge = Budget {
            timeout: Some(Duration::MAX),
            ..Budget::default()
        };
        assert_eq!(huge.deadline(Instant::now()), None);
    }
}
