//! This module defines incremental maintenance of a materialization when asserted facts are removed and added:
//! DRed, delete and rederive (Gupta, Mumick and Subrahmanian, SIGMOD 1993; as in RDFox, Motik et al., AAAI
//! 2015), over the same rule bodies, seeds and executor as the fixpoint.
//!
//! ```text
//! E⁻, E⁺       asserted facts removed, added;  I the derived facts before, over E
//! overdelete   D := every fact of I with a derivation (over E ∪ I) using a fact of E⁻ ∪ D    (seeded by them)
//! rederive     R := the facts of D ∪ E⁻ with a derivation in one step over E' ∪ (I − D)       (seeded by them)
//! insert       semi-naive from E⁺ ∪ R over E', starting from (I − D) ∪ R                    (fixpoint, seeded)
//! ```
//!
//! A rule whose body cannot be seeded at the changed atoms (a GRAPH pattern, UNION, EXISTS, a path) runs whole:
//! all its facts are overdeleted and rederived, which is exact, only slower. A rule that negates or aggregates
//! facts the change can reach is evaluated again instead, with every rule that reads or writes what it writes:
//! the other rules are maintained first, then these run over them (a stratified program's later strata over its
//! earlier ones). Elsewhere a negation reads nothing the change touches, so the positive algorithm is exact. A
//! program that calls a volatile function is derived again.

use std::sync::atomic::AtomicUsize;
use std::time::Instant;

use hashbrown::HashSet;
use rayon::prelude::*;

use crate::exec::{Cancel, ExecError};
use crate::ir::{Op, VarId};
use crate::store::{Overlay, Quad, QuadStore, Store, TermId, Triple};

use super::delta::{Seeding, seeding};
use super::explain::{seed_inside, unify};
use super::fixpoint::{Job, JobOut, Limits, Options, change_accesses, run_body, run_over};
use super::footprint::Access;
use super::{FixpointProgress, Program, Report, RunError};

/// What a maintenance run found and did, beside the run's report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Maintenance {
    /// Asserted facts removed.
    pub asserted_removed: usize,
    /// Asserted facts added.
    pub asserted_added: usize,
    /// Derived facts overdeleted (deleted, then some rederived).
    pub overdeleted: usize,
    /// Of those and the removed asserted facts, derived again in one step.
    pub rederived: usize,
    /// Rules evaluated again from scratch (the stages from the first that negates or aggregates facts the change
    /// reaches).
    pub reevaluated: usize,
    /// Time overdeleting, rederiving, inserting.
    pub times: [std::time::Duration; 3],
}

/// The asserted facts of `old` not in `new`, and of `new` not in `old`, each sorted.
pub fn asserted_changes(old: &QuadStore, new: &QuadStore) -> (Vec<Quad>, Vec<Quad>) {
    let mut removed = Vec::new();
    let mut added = Vec::new();
    let mut graphs: Vec<TermId> = old
        .graphs()
        .map(|(g, _)| g)
        .chain(new.graphs().map(|(g, _)| g))
        .collect();
    graphs.sort_unstable();
    graphs.dedup();
    for g in graphs {
        let a: &[Triple] = old.graph(g).map_or(&[], |i| i.triples());
        let b: &[Triple] = new.graph(g).map_or(&[], |i| i.triples());
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            match (a.get(i), b.get(j)) {
                (Some(x), Some(y)) if x == y => {
                    i += 1;
                    j += 1;
                }
                (Some(x), Some(y)) if x < y => {
                    removed.push([g, x[0], x[1], x[2]]);
                    i += 1;
                }
                (Some(x), None) => {
                    removed.push([g, x[0], x[1], x[2]]);
                    i += 1;
                }
                (_, Some(y)) => {
                    added.push([g, y[0], y[1], y[2]]);
                    j += 1;
                }
                (None, None) => unreachable!(),
            }
        }
    }
    (removed, added)
}

/// The rules that must be evaluated again rather than maintained: each rule that negates or aggregates facts
/// the change can reach (the changed facts, then the writes of every rule reading what is reached), and, closed
/// over, every rule that reads what such a rule writes or writes what it writes.
fn reevaluated_rules(program: &Program, changed: &[Quad]) -> Vec<bool> {
    let mut reached: Vec<Access> = change_accesses(changed);
    let mut done = vec![false; program.rules.len()];
    let mut upper = vec![false; program.rules.len()];
    loop {
        let mut grew = false;
        for (r, fp) in program.footprints.iter().enumerate() {
            if done[r]
                || !fp
                    .reads
                    .iter()
                    .any(|a| reached.iter().any(|w| a.overlaps(w)))
            {
                continue;
            }
            upper[r] = fp
                .reads
                .iter()
                .any(|a| (a.negated || a.aggregated) && reached.iter().any(|w| a.overlaps(w)));
            done[r] = true;
            reached.extend(fp.writes.iter().copied());
            grew = true;
        }
        if !grew {
            break;
        }
    }
    // Closed upward: a rule reading or writing what a re-evaluated rule writes is re-evaluated too, so the
    // maintained rules read and write nothing the re-evaluated ones write.
    loop {
        let written: Vec<Access> = program
            .footprints
            .iter()
            .zip(&upper)
            .filter(|&(_, &u)| u)
            .flat_map(|(f, _)| f.writes.iter().copied())
            .collect();
        let mut grew = false;
        for (r, fp) in program.footprints.iter().enumerate() {
            if !upper[r]
                && fp
                    .reads
                    .iter()
                    .chain(&fp.writes)
                    .any(|a| written.iter().any(|w| a.overlaps(w)))
            {
                upper[r] = true;
                grew = true;
            }
        }
        if !grew {
            return upper;
        }
    }
}

/// Whether a fact is one an access touches.
fn touches(a: &Access, [g, _, p, o]: Quad) -> bool {
    use super::footprint::{Key, Scope};
    let scope = match a.scope {
        Scope::Default => g == TermId::DEFAULT_GRAPH,
        Scope::Named(n) => g == n,
        Scope::AnyNamed => g != TermId::DEFAULT_GRAPH,
    };
    scope
        && match a.key {
            Key::Any => true,
            Key::Predicate(q) => p == q,
            Key::Class(c) => p == crate::store::well_known::RDF_TYPE && o == c,
        }
}

/// Runs jobs over `store` ⊕ `overlay`, in parallel, under the run's deadline; their outputs in job order.
fn run_jobs(
    program: &Program,
    jobs: &[Job<'_>],
    store: &Store,
    overlay: &Overlay,
    options: &Options,
    cancel: &Cancel,
    made_cap: usize,
) -> Result<Vec<JobOut>, ExecError> {
    let found = AtomicUsize::new(0);
    let limits = Limits {
        now: options.now,
        cancel,
        found: &found,
        room: usize::MAX,
        path_limit: options.path_limit,
        made_cap,
    };
    jobs.par_iter()
        .map(|job| run_body(program, job, store, overlay, &limits))
        .collect()
}

/// The facts of job outputs that are ids of the dictionary (a fact with a term the body computed and the
/// dictionary lacks is in no store).
fn facts(outs: Vec<JobOut>, dict_end: TermId) -> impl Iterator<Item = Quad> {
    outs.into_iter()
        .flat_map(|o| o.quads)
        .filter(move |q| q.iter().all(|id| id.0 < dict_end.0))
}

/// Why a change is derived again when overdeletion grows past its bound.
pub const GAVE_UP: &str = "the facts the change overdeletes passed an eighth of the derived facts, where deriving them again is cheaper (DRed's worst case: a removed fact in a large recursive component)";

/// Why a change is derived again when every rule reads a negation or aggregate it reaches.
pub const EVERY_RULE: &str = "every rule negates or aggregates facts the change reaches, or reads or writes what such a rule writes";

/// How [`update`] brought the derived facts up to date.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Derived again from scratch, for this reason.
    Full(&'static str),
    /// Maintained.
    Incremental(Maintenance),
}

/// The derived facts for the asserted facts now in `store`, given `old`, the facts derived over `old_asserted`
/// by this program under these options; `store`'s dictionary is the one `old` and `old_asserted` use, extended
/// by the new data. Maintained by DRed, except the rules [`reevaluated_rules`] picks, which are evaluated again
/// over the maintained facts of the others. Derived again from scratch (and [`Mode`] says why) under another
/// schedule, when a rule calls a volatile function, or when every rule would be evaluated again.
pub fn update(
    program: &Program,
    store: &mut Store,
    old_asserted: QuadStore,
    old: Overlay,
    options: &Options,
    progress: &dyn FixpointProgress,
) -> Result<(Overlay, Report, Mode), RunError> {
    let (removed, added) = asserted_changes(&old_asserted, &store.quads);
    let changed: Vec<Quad> = removed.iter().chain(&added).copied().collect();
    let again = reevaluated_rules(program, &changed);
    let (upper, lower): (Vec<usize>, Vec<usize>) =
        (0..program.rules.len()).partition(|&r| again[r]);
    let reason = if options.schedule != super::Schedule::Staged {
        Some("only the staged schedule is maintained")
    } else if program.footprints.iter().any(|f| !f.repeatable) {
        Some("a rule calls a volatile function (RAND, UUID, STRUUID, BNODE)")
    } else if lower.is_empty() {
        Some(EVERY_RULE)
    } else {
        None
    };
    let full = |store: &mut Store, reason: &'static str| {
        let (overlay, report) = super::materialize(program, store, options, progress)?;
        Ok((overlay, report, Mode::Full(reason)))
    };
    if let Some(reason) = reason {
        drop((old_asserted, old));
        return full(store, reason);
    }
    // The maintained rules' facts are those they write (no re-evaluated rule writes them); the re-evaluated
    // rules' facts go, and are derived again over the maintained ones.
    let part =
        |rules: &[usize]| Program::new(rules.iter().map(|&r| program.rules[r].clone()).collect());
    let split = (!upper.is_empty()).then(|| (part(&lower), part(&upper)));
    let early = split.as_ref().map_or(program, |(early, _)| early);
    let mut old = old;
    if split.is_some() {
        old.retain(|g, &[s, p, o]| {
            early
                .footprints
                .iter()
                .any(|f| f.writes.iter().any(|w| touches(w, [g, s, p, o])))
        });
    }
    let started = Instant::now();
    let Some((kept, report, mut stats)) = maintain(
        early,
        store,
        (removed, added),
        old_asserted,
        old,
        options,
        progress,
    )?
    else {
        return full(store, GAVE_UP);
    };
    let Some((_, late)) = &split else {
        return Ok((kept, report, Mode::Incremental(stats)));
    };
    if report.capped.is_some() {
        return Ok((
            kept,
            report.then(Report::default(), late),
            Mode::Incremental(stats),
        ));
    }
    let rest = Options {
        budget: options.budget.after(report.derived, started.elapsed()),
        ..options.clone()
    };
    let (overlay, later) = super::materialize_over(late, store, &rest, progress, kept)?;
    stats.reevaluated = late.rules.len();
    Ok((overlay, report.then(later, late), Mode::Incremental(stats)))
}

/// Maintains `old` (the facts derived over `old_asserted`) for the asserted facts now in `store`, which differ by
/// `changes` (removed, added): overdelete, rederive, insert. `None` (the store's asserted facts as they came) when
/// overdeletion passes an eighth of `old`, or its bodies instantiate more than a quarter as many facts as `old`
/// holds: past that, deriving again from scratch costs less. (On LUBM_L(10) maintenance costs about 8.5× the
/// overdeleted share of a fresh run: 4% overdeleted, 34% of the time; break-even is near 12%.)
fn maintain(
    program: &Program,
    store: &mut Store,
    (removed, added): (Vec<Quad>, Vec<Quad>),
    mut old_asserted: QuadStore,
    old: Overlay,
    options: &Options,
    progress: &dyn FixpointProgress,
) -> Result<Option<(Overlay, Report, Maintenance)>, RunError> {
    let started = Instant::now();
    let deadline = options.budget.deadline(started);
    let cancel = match (deadline, options.budget.timeout) {
        (Some(at), Some(t)) => Cancel::new().with_deadline(at, t),
        _ => Cancel::new(),
    };
    let capped_by_time = |report: Report| RunError::ResourceLimit {
        reason: "time",
        rules: "every rule (while maintaining)".to_owned(),
        report: Box::new(report),
    };
    let mut stats = Maintenance {
        asserted_removed: removed.len(),
        asserted_added: added.len(),
        ..Maintenance::default()
    };
    let n = program.rules.len();
    let end = store.dict.end();

    // Overdelete, over the old asserted facts and the old derived ones.
    std::mem::swap(&mut store.quads, &mut old_asserted);
    let mut deleted: HashSet<Quad> = HashSet::new();
    let mut frontier: Vec<Quad> = removed.clone();
    let mut whole_done = vec![false; n];
    let give_up_at = old.len() / 8 + 4096;
    let mut made_left = old.len() / 4 + 8192;
    while !frontier.is_empty() {
        let reads = change_accesses(&frontier);
        let delta: Vec<Triple> = frontier
            .iter()
            .filter(|q| q[0] == TermId::DEFAULT_GRAPH)
            .map(|&[_, s, p, o]| [s, p, o])
            .collect();
        let mut jobs: Vec<Job<'_>> = Vec::new();
        for (r, rule) in program.rules.iter().enumerate() {
            let body = &rule.body;
            match seeding(body, true, &reads) {
                Seeding::Whole if !whole_done[r] => {
                    whole_done[r] = true;
                    jobs.push(Job {
                        rule: r,
                        body,
                        seed: None,
                        compiled: None,
                    });
                }
                Seeding::Whole => {}
                Seeding::Atoms(atoms) => jobs.extend(atoms.into_iter().map(|a| Job {
                    rule: r,
                    body,
                    seed: Some((a, delta.as_slice())),
                    compiled: None,
                })),
            }
        }
        let outs = match run_jobs(program, &jobs, store, &old, options, &cancel, made_left) {
            Ok(o) => o,
            Err(_) => {
                std::mem::swap(&mut store.quads, &mut old_asserted);
                return Err(capped_by_time(Report::default()));
            }
        };
        let made: usize = outs.iter().map(|o| o.made as usize).sum();
        made_left = made_left.saturating_sub(made);
        frontier = facts(outs, end)
            .filter(|q| old.contains(q[0], [q[1], q[2], q[3]]))
            .filter(|q| deleted.insert(*q))
            .collect();
        frontier.sort_unstable();
        if made_left == 0 || deleted.len() > give_up_at {
            std::mem::swap(&mut store.quads, &mut old_asserted);
            return Ok(None);
        }
    }
    std::mem::swap(&mut store.quads, &mut old_asserted);
    stats.overdeleted = deleted.len();
    stats.times[0] = started.elapsed();

    // What is left of the old derived facts: not overdeleted, and not asserted now (only an added fact can be).
    let mut kept = old;
    let now_asserted: HashSet<Quad> = added.iter().copied().collect();
    kept.retain(|g, &[s, p, o]| {
        let q = [g, s, p, o];
        !deleted.contains(&q) && !now_asserted.contains(&q)
    });
    drop(now_asserted);

    // Rederive, in one step over the new asserted facts and what is kept: the overdeleted facts, and the removed
    // asserted facts (derivable now that they are not asserted).
    let mut candidates: Vec<Quad> = deleted
        .iter()
        .copied()
        .chain(removed.iter().copied())
        .collect();
    candidates.sort_unstable();
    candidates.retain(|q| {
        !store
            .quads
            .graph(q[0])
            .is_some_and(|i| i.contains([q[1], q[2], q[3]]))
    });
    let wanted: HashSet<Quad> = candidates.iter().copied().collect();
    // The candidates by graph and predicate, and by graph, predicate and object: a head with a constant
    // predicate (and object) unifies with those only.
    let mut by_predicate: hashbrown::HashMap<(TermId, TermId), Vec<Quad>> =
        hashbrown::HashMap::new();
    let mut by_object: hashbrown::HashMap<[TermId; 3], Vec<Quad>> = hashbrown::HashMap::new();
    for &q in &candidates {
        by_predicate.entry((q[0], q[2])).or_default().push(q);
        by_object.entry([q[0], q[2], q[3]]).or_default().push(q);
    }
    let mut seeded_bodies: Vec<(usize, Op)> = Vec::new();
    for (r, rule) in program.rules.iter().enumerate() {
        for head in &rule.heads {
            use crate::ir::lower::TemplateTerm::Const;
            let graph = head.graph.unwrap_or(TermId::DEFAULT_GRAPH);
            let these: &[Quad] = match &head.terms {
                [_, Const(p), Const(o)] => {
                    by_object.get(&[graph, *p, *o]).map_or(&[], Vec::as_slice)
                }
                [_, Const(p), _] => by_predicate.get(&(graph, *p)).map_or(&[], Vec::as_slice),
                _ => &candidates,
            };
            let mut vars: Vec<VarId> = Vec::new();
            let mut rows: Vec<Vec<Option<crate::store::TermId>>> = Vec::new();
            for &q in these {
                let Some(binding) = unify(head, q, &store.dict) else {
                    continue;
                };
                if vars.is_empty() {
                    vars = binding.iter().map(|(v, _)| *v).collect();
                }
                rows.push(binding.iter().map(|(_, t)| Some(*t)).collect());
            }
            if !rows.is_empty() {
                seeded_bodies.push((r, seed_inside(&rule.body, Op::Values { vars, rows })));
            }
        }
    }
    let jobs: Vec<Job<'_>> = seeded_bodies
        .iter()
        .map(|(r, body)| Job {
            rule: *r,
            body,
            seed: None,
            compiled: None,
        })
        .collect();
    let outs = run_jobs(program, &jobs, store, &kept, options, &cancel, usize::MAX)
        .map_err(|_| capped_by_time(Report::default()))?;
    let mut rederived: Vec<Quad> = facts(outs, end).filter(|q| wanted.contains(q)).collect();
    rederived.sort_unstable();
    rederived.dedup();
    stats.rederived = rederived.len();
    stats.times[1] = started.elapsed() - stats.times[0];
    let mut prior = kept;
    for chunk in rederived.chunk_by(|a, b| a[0] == b[0]) {
        prior.add(
            chunk[0][0],
            chunk.iter().map(|&[_, s, p, o]| [s, p, o]).collect(),
        );
    }

    // Insert: semi-naive from the added asserted facts and the rederived ones.
    let insert = Options {
        start: Some(added.into_iter().chain(rederived).collect()),
        budget: options.budget.after(0, started.elapsed()),
        ..options.clone()
    };
    let (overlay, report) = run_over(program, store, &insert, progress, prior);
    stats.times[2] = started.elapsed() - stats.times[0] - stats.times[1];
    Ok(Some((overlay, report, stats)))
}
