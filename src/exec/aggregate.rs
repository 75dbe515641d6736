//! This module defines GROUP BY: rows grouped by key (first-seen order, so output is deterministic) and the
//! SPARQL aggregates COUNT, SUM, AVG, MIN, MAX, SAMPLE and GROUP_CONCAT, with DISTINCT.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::hash::BuildHasher;

use hashbrown::{DefaultHashBuilder, HashSet, HashTable};

use crate::ir::{Aggregate, AggregateKind, NumOp, VarId};
use crate::store::TermId;

use super::eval::{Env, Eval, arith, as_num, intern_value};
use super::terms::Terms;
use super::value::{self, Num, Value, str_of};
use super::{Context, ROW_UNBOUND, Rows, State};

enum Acc {
    Count(i64),
    /// `None` once a value was not a number.
    Sum(Option<Num>),
    Avg(Option<Num>, i64),
    Min(Option<TermId>),
    Max(Option<TermId>),
    Sample(Option<TermId>),
    /// The text so far (`None` after an error) and how many elements it holds.
    Concat(Option<String>, usize),
}

impl Acc {
    fn new(kind: &AggregateKind) -> Self {
        match kind {
            AggregateKind::CountAll | AggregateKind::Count => Acc::Count(0),
            AggregateKind::Sum => Acc::Sum(Some(Num::Int(0))),
            AggregateKind::Avg => Acc::Avg(Some(Num::Int(0)), 0),
            AggregateKind::Min => Acc::Min(None),
            AggregateKind::Max => Acc::Max(None),
            AggregateKind::Sample => Acc::Sample(None),
            AggregateKind::GroupConcat { .. } => Acc::Concat(Some(String::new()), 0),
        }
    }
}

/// One group's accumulators: the aggregates' running values, the values each `DISTINCT` aggregate has seen, and
/// the rows `COUNT(DISTINCT *)` has counted. The executor's GROUP BY and the dataflow engine's `reduce` both
/// fold rows through it, so the two compute every aggregate alike over rows that come in the same order (the
/// order differs between them: see `docs/scale-out.md`, *Computed terms*, for what that can change).
pub struct GroupState {
    accs: Vec<Acc>,
    seen: Vec<Option<HashSet<TermId>>>,
    counted_rows: HashSet<Vec<TermId>>,
}

impl GroupState {
    /// A group that has seen no row (what an empty input with no GROUP BY keys gives: `COUNT` 0, `SUM` 0, …).
    pub fn new(aggregates: &[(VarId, Aggregate)]) -> Self {
        Self {
            accs: aggregates.iter().map(|(_, a)| Acc::new(&a.kind)).collect(),
            seen: aggregates
                .iter()
                .map(|(_, a)| a.distinct.then(HashSet::new))
                .collect(),
            counted_rows: HashSet::new(),
        }
    }

    /// Folds one row into the group: each aggregate's argument evaluated over it (its value interned into
    /// `terms`; an error leaves the argument unbound, as SPARQL's aggregates skip errors).
    pub fn add(
        &mut self,
        (terms, env): (&mut Terms<'_>, &Env),
        aggregates: &[(VarId, Aggregate)],
        row: &[TermId],
        i: usize,
    ) {
        let mut labels = |terms: &mut Terms<'_>, _: String| terms.fresh_blank();
        for (a, (_, agg)) in aggregates.iter().enumerate() {
            let value = match &agg.expr {
                None => None,
                Some(e) => {
                    let ev = Eval {
                        terms,
                        env,
                        exists: &[],
                    };
                    let v = ev.eval(e, row, i).map(Value::into_owned);
                    v.map(|v| intern_value(terms, v, &mut labels))
                }
            };
            if agg.kind == AggregateKind::CountAll {
                if agg.distinct {
                    // COUNT(DISTINCT *): distinct solutions.
                    if self.counted_rows.insert(row.to_vec()) {
                        if let Acc::Count(n) = &mut self.accs[a] {
                            *n += 1;
                        }
                    }
                } else if let Acc::Count(n) = &mut self.accs[a] {
                    *n += 1;
                }
                continue;
            }
            if let (Some(v), Some(seen)) = (value, &mut self.seen[a]) {
                if !seen.insert(v) {
                    continue;
                }
            }
            accumulate(terms, &mut self.accs[a], value, &agg.kind);
        }
    }

    /// The aggregates' values, each into its variable's cell of `row` (an aggregate that erred leaves its cell
    /// as it was: unbound).
    pub fn finish(
        self,
        terms: &mut Terms<'_>,
        aggregates: &[(VarId, Aggregate)],
        row: &mut [TermId],
    ) {
        let mut labels = |terms: &mut Terms<'_>, _: String| terms.fresh_blank();
        for ((var, _), acc) in aggregates.iter().zip(self.accs) {
            let value: Option<Value<'static>> = match acc {
                Acc::Count(n) => Some(Value::Num(Num::Int(n))),
                Acc::Sum(s) => s.map(Value::Num),
                Acc::Avg(s, n) => match (s, n) {
                    (Some(_), 0) => Some(Value::Num(Num::Int(0))),
                    (Some(s), n) => arith(NumOp::Div, s, Num::Int(n)).map(Value::Num),
                    (None, _) => None,
                },
                Acc::Min(t) | Acc::Max(t) | Acc::Sample(t) => t.map(Value::Term),
                Acc::Concat(s, _) => s.map(|s| Value::Str(Cow::Owned(s))),
            };
            if let Some(v) = value {
                row[var.index()] = intern_value(terms, v, &mut labels);
            }
        }
    }
}

/// Groups `rows` by `keys` and computes `aggregates`; appends one row per group to `out`.
pub fn group(
    cx: &Context<'_>,
    st: &mut State<'_>,
    keys: &[VarId],
    aggregates: &[(VarId, Aggregate)],
    rows: &Rows,
    out: &mut Rows,
) {
    let hasher = DefaultHashBuilder::default();
    let key_width = keys.len().max(1);
    let mut key_rows = Rows::new(key_width);
    let mut table: HashTable<usize> = HashTable::new();
    let mut groups: Vec<GroupState> = Vec::new();
    if keys.is_empty() {
        key_rows.push(&[ROW_UNBOUND]);
        groups.push(GroupState::new(aggregates));
    }
    let mut key = vec![ROW_UNBOUND; key_width];
    for i in 0..rows.len() {
        let row = rows.row(i);
        let g = if keys.is_empty() {
            0
        } else {
            for (k, v) in keys.iter().enumerate() {
                key[k] = row[v.index()];
            }
            let h = hasher.hash_one(&key);
            match table.find(h, |&gi| key_rows.row(gi) == key.as_slice()) {
                Some(&gi) => gi,
                None => {
                    let gi = groups.len();
                    key_rows.push(&key);
                    groups.push(GroupState::new(aggregates));
                    table.insert_unique(h, gi, |&gj| hasher.hash_one(key_rows.row(gj)));
                    gi
                }
            }
        };
        groups[g].add((&mut st.terms, &cx.env), aggregates, row, i);
    }
    for (gi, group) in groups.into_iter().enumerate() {
        let mut row = vec![ROW_UNBOUND; out.width()];
        if !keys.is_empty() {
            for (k, v) in keys.iter().enumerate() {
                row[v.index()] = key_rows.row(gi)[k];
            }
        }
        group.finish(&mut st.terms, aggregates, &mut row);
        out.push(&row);
    }
}

fn accumulate(
    terms: &super::terms::Terms<'_>,
    acc: &mut Acc,
    value: Option<TermId>,
    kind: &AggregateKind,
) {
    match acc {
        Acc::Count(n) => {
            if value.is_some() {
                *n += 1;
            }
        }
        Acc::Sum(sum) | Acc::Avg(sum, _) => {
            let add = value.and_then(|v| as_num(terms, &Value::Term(v)));
            *sum = match (*sum, add) {
                (Some(s), Some(x)) => arith(NumOp::Add, s, x),
                _ => None,
            };
            if let Acc::Avg(_, n) = acc {
                *n += 1;
            }
        }
        Acc::Min(best) | Acc::Max(best) => {
            if let Some(v) = value {
                let better = match best {
                    None => true,
                    Some(b) => {
                        let o = value::order(terms, Some(&Value::Term(v)), Some(&Value::Term(*b)));
                        if matches!(kind, AggregateKind::Min) {
                            o == Ordering::Less
                        } else {
                            o == Ordering::Greater
                        }
                    }
                };
                if better {
                    *best = Some(v);
                }
            }
        }
        Acc::Sample(s) => {
            if s.is_none() {
                *s = value;
            }
        }
        Acc::Concat(text, count) => {
            let AggregateKind::GroupConcat { separator } = kind else {
                unreachable!("concat accumulator")
            };
            let part = value.and_then(|v| {
                let val = Value::Term(v);
                str_of(terms, &val).map(Cow::into_owned)
            });
            *text = match (text.take(), part) {
                (Some(mut t), Some(p)) => {
                    if *count > 0 {
                        t.push_str(separator);
                    }
                    t.push_str(&p);
                    *count += 1;
                    Some(t)
                }
                _ => None,
            };
        }
    }
}
