//! This module defines the planner's estimates: pure functions from index counts to expected row counts.

use crate::ir::{PatternTerm, TriplePattern, VarId, VarSet};
use crate::store::quads::PredicateStats;
use crate::store::{Pattern, TermId};

/// What estimates read from the data.
pub trait Statistics {
    /// The exact number of triples matching `pattern` (constants only) in the graphs a pattern of `pattern`'s
    /// graph term reads.
    fn count(&self, tp: &TriplePattern, pattern: &Pattern) -> f64;
    /// Counts for a predicate, when the store has them.
    fn predicate(&self, tp: &TriplePattern, p: TermId) -> Option<PredicateStats>;
    /// How many distinct predicates the data has (at least 1).
    fn predicates(&self) -> f64;
}

/// Whether a pattern position is fixed for a row: a constant, a variable bound earlier, or a triple term whose
/// parts all are.
fn fixed(t: &PatternTerm, bound: &impl Fn(VarId) -> bool) -> bool {
    match t {
        PatternTerm::Const(_) => true,
        PatternTerm::Var(v) => bound(*v),
        PatternTerm::Triple(parts) => parts.iter().all(|p| fixed(p, bound)),
    }
}

/// Which of a triple pattern's subject, predicate and object `bound` fixes (bits 0, 1, 2): all that
/// [`estimate_pattern`] reads of `bound`, so an estimate holds while this mask stays the same.
pub fn fixed_mask(tp: &TriplePattern, bound: impl Fn(VarId) -> bool) -> u8 {
    (0..3).fold(0, |mask, i| {
        mask | u8::from(fixed(&tp.terms[i], &bound)) << i
    })
}

/// Expected matches of a triple pattern for one input row whose bound variables are `bound`.
///
/// The count of the pattern with its constants is exact (a range length); each position bound by a variable
/// divides it by the number of distinct values that position takes for the predicate (uniformity assumption).
pub fn estimate_pattern(stats: &impl Statistics, tp: &TriplePattern, bound: &VarSet) -> f64 {
    let bound = |v: VarId| bound.contains(v);
    let constants: Pattern = tp.terms.clone().map(|t| match t {
        PatternTerm::Const(c) => Some(c),
        _ => None,
    });
    let mut est = stats.count(tp, &constants);
    if est == 0.0 {
        return 0.0;
    }
    let pred = match &tp.terms[1] {
        PatternTerm::Const(p) => stats.predicate(tp, *p),
        _ => None,
    };
    let var_fixed =
        |i: usize| !matches!(tp.terms[i], PatternTerm::Const(_)) && fixed(&tp.terms[i], &bound);
    if var_fixed(0) {
        est /= match pred {
            Some(p) if constants[2].is_none() => p.subjects.max(1) as f64,
            _ => est.sqrt().max(1.0),
        };
    }
    if var_fixed(1) {
        est /= stats.predicates().max(1.0);
    }
    if var_fixed(2) {
        est /= match pred {
            Some(p) if constants[0].is_none() => p.objects.max(1) as f64,
            _ => est.sqrt().max(1.0),
        };
    }
    if (0..3).all(|i| fixed(&tp.terms[i], &bound)) {
        est = est.min(1.0);
    }
    est.max(1e-3)
}

/// Expected output of joining `rows` input rows with an operand that yields `per_row` rows each.
pub fn estimate_join(rows: f64, per_row: f64) -> f64 {
    rows * per_row
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{GraphTerm, VarId};

    struct Fixed;
    impl Statistics for Fixed {
        fn count(&self, _: &TriplePattern, pattern: &Pattern) -> f64 {
            match pattern {
                [None, Some(_), None] => 1000.0,
                [None, Some(_), Some(_)] => 100.0,
                _ => 5000.0,
            }
        }
        fn predicate(&self, _: &TriplePattern, _: TermId) -> Option<PredicateStats> {
            Some(PredicateStats {
                triples: 1000,
                subjects: 500,
                objects: 10,
            })
        }
        fn predicates(&self) -> f64 {
            20.0
        }
    }

    fn tp(s: PatternTerm, o: PatternTerm) -> TriplePattern {
        TriplePattern {
            terms: [s, PatternTerm::Const(TermId(11)), o],
            graph: GraphTerm::Default,
        }
    }

    #[test]
    fn a_bound_subject_divides_by_distinct_subjects() {
        let p = tp(PatternTerm::Var(VarId(0)), PatternTerm::Var(VarId(1)));
        assert_eq!(estimate_pattern(&Fixed, &p, &VarSet::new()), 1000.0);
        let bound: VarSet = [VarId(0)].into_iter().collect();
        assert_eq!(estimate_pattern(&Fixed, &p, &bound), 2.0);
        let bound: VarSet = [VarId(1)].into_iter().collect();
        assert_eq!(estimate_pattern(&Fixed, &p, &bound), 100.0);
    }

    #[test]
    fn a_fully_bound_pattern_yields_at_most_one_row() {
        let p = tp(PatternTerm::Var(VarId(0)), PatternTerm::Const(TermId(12)));
        let bound: VarSet = [VarId(0)].into_iter().collect();
        assert!(estimate_pattern(&Fixed, &p, &bound) <= 1.0);
    }
}
