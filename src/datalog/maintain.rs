//! This module defines incremental maintenance of a materialization when asserted facts are removed and added,
//! over the same rule bodies, seeds and executor as the fixpoint: deletion group by group in stage order, then
//! insertion.
//!
//! ```text
//! E⁻, E⁺       asserted facts removed, added;  I the derived facts before, over E;  G the facts gone (E⁻ first)
//! per group    candidates: its heads with one body atom in G (the others over E ∪ I), in I − G
//!  non-recursive  delta rules with an eager one-step check: a candidate no rule done so far derives over
//!                 E' ∪ (I − G) is gone; a gone fact the group derives again comes back
//!  recursive      DRed inside the group (Gupta, Mumick and Subrahmanian, SIGMOD 1993; as in RDFox, Motik et al.,
//!                 AAAI 2015): overdelete its candidates' consequences, rederive in one step, close forward; a
//!                 candidate an earlier group still derives over E' ∪ (I − G), or a monotone rule of the group
//!                 derives over E' alone, is kept and not followed (the Backward/Forward check, Motik et al.,
//!                 AAAI 2015, cut to one step over facts no deletion takes)
//! insert       semi-naive from E⁺ over E', starting from what is left
//! ```
//!
//! A group reads only what earlier stages and itself write, so the facts it reads are final when it runs, and
//! only a recursive group overdeletes. A rule whose body cannot be seeded at the changed atoms (a GRAPH pattern,
//! UNION, EXISTS, a path) runs whole: all its facts become candidates, which is exact, only slower. A rule that
//! negates or aggregates facts the change can reach is evaluated again instead, with every rule that reads or
//! writes what it writes: the other rules are maintained first, then these run over them (a stratified
//! program's later strata over its earlier ones). Elsewhere a negation reads nothing the change touches, so the
//! positive algorithm is exact. A program that calls a volatile function is derived again.

use std::sync::atomic::AtomicUsize;
use std::time::Instant;

use hashbrown::HashSet;
use rayon::prelude::*;

use crate::exec::{Cancel, ExecError};
use crate::ir::{Op, VarId};
use crate::store::overlay::sorted_quads;
use crate::store::{Overlay, Quad, QuadStore, Store, TermId, Triple, View};

use super::delta::{Columns, Place, Seeding, seeding};
use super::explain::{seed_certain, unify};
use super::fixpoint::{
    Job, JobOut, Limits, Options, change_accesses, default_triples, run_body, run_over,
};
use super::footprint::Access;
use super::{FixpointProgress, Program, Report, RunError};

/// What a maintenance run found and did, beside the run's report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Maintenance {
    /// Asserted facts removed.
    pub asserted_removed: usize,
    /// Asserted facts added.
    pub asserted_added: usize,
    /// Derived facts that lost a derivation and were checked for another (a recursive group's overdeleted facts
    /// included).
    pub overdeleted: usize,
    /// Of those and of the removed asserted facts, the ones found to hold still (derived again).
    pub rederived: usize,
    /// Rules evaluated again from scratch (the stages from the first that negates or aggregates facts the change
    /// reaches).
    pub reevaluated: usize,
    /// Time finding candidates (and overdeleting), checking them (and rederiving), inserting.
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
    // What the change can reach, to a fixpoint first: a rule met early may negate what a later rule only
    // reaches on a later round, so no rule is judged before `reached` stops growing.
    let mut reached: Vec<Access> = change_accesses(changed);
    let mut done = vec![false; program.rules.len()];
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
            done[r] = true;
            reached.extend(fp.writes.iter().copied());
            grew = true;
        }
        if !grew {
            break;
        }
    }
    let mut upper: Vec<bool> = program
        .footprints
        .iter()
        .map(|fp| {
            fp.reads
                .iter()
                .any(|a| (a.negated || a.aggregated) && reached.iter().any(|w| a.overlaps(w)))
        })
        .collect();
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
    (overlay, also): (&Overlay, Option<&Overlay>),
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
        also,
        compact: false,
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
pub const GAVE_UP: &str = "the facts the change overdeletes passed a quarter of the derived facts, where deriving them again is cheaper (DRed's worst case: a removed fact in a large recursive component)";

/// Why a change is derived again when the bodies run while deleting instantiate more than half as many facts
/// as are derived.
pub const MADE_TOO_MANY: &str = "the rule bodies run while deleting instantiated more than half as many facts as are derived, where deriving them again is cheaper";

/// The reason for giving up: the instantiation bound when it is spent, else the overdeletion bound.
fn gave_up(made_left: usize) -> &'static str {
    if made_left == 0 {
        MADE_TOO_MANY
    } else {
        GAVE_UP
    }
}

/// Why a change that removes many asserted facts is derived again without trying to maintain.
pub const LARGE_REMOVAL: &str = "the change removes more than a twentieth of the asserted facts, where deriving again is cheaper (LUBM_L over LUBM(10): maintaining a 10 % removal costs 2.5–4× a fresh run's reasoning, a 1 % removal about 0.45×)";

/// Why a change is derived again when every rule reads a negation or aggregate it reaches.
pub const EVERY_RULE: &str = "every rule negates or aggregates facts the change reaches, or reads or writes what such a rule writes";

/// The derived facts before the change, as much of them as a diff needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Was {
    /// The change itself, from what the maintenance did, each list sorted: the derived facts that went, and
    /// those that came.
    Changed {
        /// Derived facts before, not after.
        removed: Vec<Quad>,
        /// Derived facts after, not before.
        added: Vec<Quad>,
    },
    /// Every derived fact before, sorted: the facts were derived again (wholly, or the rules evaluated again),
    /// so only a comparison finds the change.
    Listed(Vec<Quad>),
}

/// How [`update`] brought the derived facts up to date.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Derived again from scratch, for this reason.
    Full(&'static str),
    /// Maintained.
    Incremental(Maintenance),
}

/// The derived facts for the asserted facts now in `store`, given `old`, the facts derived over `old_asserted`
/// by this program under these options, and `changes`, the asserted facts removed and added (sorted, as
/// [`asserted_changes`] gives them; a caller that patched the store knows them without a pass over it);
/// `store`'s dictionary is the one `old` and `old_asserted` use, extended by the new data. Maintained by DRed, except the rules `reevaluated_rules` picks, which are evaluated again
/// over the maintained facts of the others. Derived again from scratch (and [`Mode`] says why) under another
/// schedule, when a rule calls a volatile function, or when every rule would be evaluated again.
pub fn update(
    program: &Program,
    store: &mut Store,
    old_asserted: QuadStore,
    old: Overlay,
    (removed, added): (Vec<Quad>, Vec<Quad>),
    options: &Options,
    progress: &dyn FixpointProgress,
) -> Result<(Overlay, Report, Mode, Was), RunError> {
    debug_assert!(removed.is_sorted() && added.is_sorted());
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
    } else if removed.len() > old_asserted.len() / 20 + 4096 {
        Some(LARGE_REMOVAL)
    } else {
        None
    };
    let full = |store: &mut Store, reason: &'static str, before: Vec<Quad>| {
        let (overlay, report) = super::materialize(program, store, options, progress)?;
        Ok((overlay, report, Mode::Full(reason), Was::Listed(before)))
    };
    if let Some(reason) = reason {
        let before = sorted_quads(&[&old], None);
        drop((old_asserted, old));
        return full(store, reason, before);
    }
    // The maintained rules' facts are those they write (no re-evaluated rule writes them); the re-evaluated
    // rules' facts go, and are derived again over the maintained ones.
    let part =
        |rules: &[usize]| Program::new(rules.iter().map(|&r| program.rules[r].clone()).collect());
    let split = (!upper.is_empty()).then(|| (part(&lower), part(&upper)));
    let early = split.as_ref().map_or(program, |(early, _)| early);
    let mut old = old;
    // The re-evaluated rules' facts go and come back: the change is found by comparing lists.
    let before = split.as_ref().map(|_| sorted_quads(&[&old], None));
    if split.is_some() {
        old.retain(|g, &[s, p, o]| {
            early
                .footprints
                .iter()
                .any(|f| f.writes.iter().any(|w| touches(w, [g, s, p, o])))
        });
    }
    let started = Instant::now();
    let (kept, report, mut stats, change) = match maintain(
        early,
        store,
        (removed, added),
        old_asserted,
        old,
        options,
        progress,
    )? {
        Ok(kept) => kept,
        Err((reason, listed)) => return full(store, reason, before.unwrap_or(listed)),
    };
    let was = before.map_or(change, Was::Listed);
    // A cap that left a negating or aggregating rule unfinished fails the run, as it does a run from scratch.
    let Some((_, late)) = &split else {
        let report = super::refuse_unfinished(program, report)?;
        return Ok((kept, report, Mode::Incremental(stats), was));
    };
    if report.capped.is_some() {
        let report = super::refuse_unfinished(program, report.then(Report::default(), late))?;
        return Ok((kept, report, Mode::Incremental(stats), was));
    }
    let rest = Options {
        budget: options.budget.after(kept.len(), started.elapsed()),
        ..options.clone()
    };
    let (overlay, later) = super::materialize_over(late, store, &rest, progress, kept)?;
    stats.reevaluated = late.rules.len();
    Ok((
        overlay,
        report.then(later, late),
        Mode::Incremental(stats),
        was,
    ))
}

/// The facts of the old state (removed asserted facts, then derived ones) not known to hold now, and the derived
/// facts split into what is left (`now`) and what was taken out (`out`): `now` is the new state's derived facts
/// for the groups done so far, `now ⊕ out` the old state's (no copy of them is made).
struct Gone {
    /// Facts of the old state that hold no longer, as far as the groups done so far know.
    set: HashSet<Quad>,
    /// The old derived facts, less those taken out, with those that came back.
    now: Overlay,
    /// The derived facts taken out of `now`.
    out: Overlay,
    /// Gone derived facts `now` still holds (taken out on [`Gone::sync`], before `now` is read again).
    pending: Vec<Quad>,
    /// Facts that hold after all and are not in `now` (taken out, or removed asserted facts now derived).
    back: Vec<Quad>,
}

impl Gone {
    fn lose(&mut self, q: Quad) -> bool {
        let new = self.set.insert(q);
        if new {
            self.pending.push(q);
        }
        new
    }

    /// `q` holds after all: it comes back into `now` (on the next sync).
    fn regain(&mut self, q: Quad) -> bool {
        if !self.set.remove(&q) {
            return false;
        }
        if !self.now.contains(q[0], [q[1], q[2], q[3]]) {
            self.back.push(q);
        }
        true
    }

    /// Whether `q` is a derived fact of the old state not gone (yet).
    fn holds_derived(&self, q: &Quad) -> bool {
        !self.set.contains(q) && self.now.contains(q[0], [q[1], q[2], q[3]])
    }

    /// Brings `now` up to date for bodies that read `reads`: a pending fact none of them can read stays in it
    /// until a body that can runs (taking facts out of `now` is a pass over all of it).
    fn sync_for(&mut self, reads: &[Access]) {
        if !self.pending.is_empty() || !self.back.is_empty() {
            let pending = change_accesses(&self.pending);
            let back = change_accesses(&self.back);
            if pending
                .iter()
                .chain(&back)
                .any(|w| reads.iter().any(|r| r.overlaps(w)))
            {
                self.sync();
            }
        }
    }

    /// Brings `now` (and `out`) up to date.
    fn sync(&mut self) {
        fn add(to: &mut Overlay, facts: &mut [Quad]) {
            facts.sort_unstable();
            for chunk in facts.chunk_by(|a, b| a[0] == b[0]) {
                to.add(
                    chunk[0][0],
                    chunk.iter().map(|&[_, s, p, o]| [s, p, o]).collect(),
                );
            }
        }
        if !self.pending.is_empty() {
            let set = &self.set;
            let mut taken: Vec<Quad> = self.pending.drain(..).filter(|q| set.contains(q)).collect();
            taken.sort_unstable();
            taken.dedup();
            if !taken.is_empty() {
                // Marked out of the old derived facts' large run, not moved (a pass over it per batch).
                self.now.mark_removed_sorted(&taken);
                add(&mut self.out, &mut taken);
            }
        }
        if !self.back.is_empty() {
            self.back.sort_unstable();
            self.back.dedup();
            // Sorted, as `back` is.
            let from_out: Vec<Quad> = self
                .back
                .iter()
                .filter(|q| self.out.contains(q[0], [q[1], q[2], q[3]]))
                .copied()
                .collect();
            if !from_out.is_empty() {
                self.out.remove_sorted(&from_out);
            }
            let mut back = std::mem::take(&mut self.back);
            add(&mut self.now, &mut back);
        }
    }

    /// The old state's derived facts, sorted: those left and those taken out, less the removed asserted facts
    /// (`removed`, sorted) that came back as derived facts.
    fn old(&mut self, removed: &[Quad]) -> Vec<Quad> {
        self.now.compact();
        let mut old = sorted_quads(&[&self.now, &self.out], None);
        old.retain(|q| removed.binary_search(q).is_err());
        old
    }

    fn sorted(&self) -> Vec<Quad> {
        let mut v: Vec<Quad> = self.set.iter().copied().collect();
        v.sort_unstable();
        v
    }
}

/// The jobs that run `rules` seeded at the atoms that can read `frontier` (`delta`: its default-graph facts); a
/// rule that cannot be seeded there runs whole, once (`whole_done`) unless `again`.
fn seeded_jobs<'p>(
    program: &'p Program,
    rules: &[usize],
    frontier: &[Quad],
    delta: &'p [Triple],
    whole_done: &mut [bool],
    again: bool,
) -> Vec<Job<'p>> {
    let reads = change_accesses(frontier);
    let mut jobs = Vec::new();
    for &r in rules {
        let body = &program.rules[r].body;
        match seeding(body, true, &reads) {
            Seeding::Whole if again || !whole_done[r] => {
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
                seed: Some((a, delta)),
                compiled: None,
            })),
        }
    }
    jobs
}

/// What the rules of `rules` read.
fn reads_of(program: &Program, rules: impl IntoIterator<Item = usize>) -> Vec<Access> {
    rules
        .into_iter()
        .flat_map(|r| program.footprints[r].reads.iter().copied())
        .collect()
}

/// Runs whole bodies (rule, body) over the new state: the store and `now`.
fn run_whole(
    program: &Program,
    bodies: &[(usize, Op)],
    store: &Store,
    now: &Overlay,
    (options, cancel): (&Options, &Cancel),
) -> Result<Vec<JobOut>, ExecError> {
    let jobs: Vec<Job<'_>> = bodies
        .iter()
        .map(|(r, body)| Job {
            rule: *r,
            body,
            seed: None,
            compiled: None,
        })
        .collect();
    run_jobs(
        program,
        &jobs,
        store,
        (now, None),
        options,
        cancel,
        usize::MAX,
    )
}

/// The bodies that find, in one step, which of `candidates` a rule of `rules` derives: each body joined with the
/// head bindings of the candidates its heads unify with (a head with a constant predicate, and object, looks at
/// those only).
fn check_bodies(
    program: &Program,
    checks: &[(&[usize], &[Quad])],
    store: &Store,
) -> Vec<(usize, Op)> {
    let mut bodies: Vec<(usize, Op)> = Vec::new();
    for &(rules, candidates) in checks {
        if candidates.is_empty() {
            continue;
        }
        // The candidates by graph, predicate and object: a head's share is a range of them, found by binary
        // search (a map of lists would allocate one per distinct object).
        let mut by_object: Vec<Quad> = candidates.to_vec();
        by_object.sort_unstable_by_key(|&[g, s, p, o]| [g, p, o, s]);
        let share = |key: &[TermId]| -> &[Quad] {
            let lead = |q: &Quad| [q[0], q[2], q[3]];
            let n = key.len();
            let start = by_object.partition_point(|q| lead(q)[..n] < *key);
            let end = start + by_object[start..].partition_point(|q| lead(q)[..n] == *key);
            &by_object[start..end]
        };
        for &r in rules {
            let rule = &program.rules[r];
            for head in &rule.heads {
                use crate::ir::lower::TemplateTerm::Const;
                let graph = head.graph.unwrap_or(TermId::DEFAULT_GRAPH);
                let these: &[Quad] = match &head.terms {
                    [_, Const(p), Const(o)] => share(&[graph, *p, *o]),
                    [_, Const(p), _] => share(&[graph, *p]),
                    _ => candidates,
                };
                let (vars, rows) = match by_place(head) {
                    // Constants and variables only (most heads): matched by place, into one flat list, with
                    // no binding list per candidate.
                    Some(columns) => columns.rows(
                        (these.iter())
                            .filter(|q| q[0] == graph)
                            .map(|&[_, s, p, o]| [s, p, o]),
                    ),
                    None => {
                        let mut vars: Vec<VarId> = Vec::new();
                        let mut rows: Vec<Vec<Option<TermId>>> = Vec::new();
                        for &q in these {
                            let Some(binding) = unify(head, q, &store.dict) else {
                                continue;
                            };
                            if vars.is_empty() {
                                vars = binding.iter().map(|(v, _)| *v).collect();
                            }
                            rows.push(binding.iter().map(|(_, t)| Some(*t)).collect());
                        }
                        (vars, rows.into())
                    }
                };
                if !rows.is_empty() {
                    bodies.push((r, seed_certain(&rule.body, Op::Values { vars, rows })));
                }
            }
        }
    }
    bodies
}

/// The candidates of `checks` (rules, candidates) that one of those rules derives in one step over `store` ⊕
/// `now`.
fn derivable(
    program: &Program,
    checks: &[(&[usize], &[Quad])],
    store: &Store,
    now: &Overlay,
    (options, cancel): (&Options, &Cancel),
) -> Result<HashSet<Quad>, ExecError> {
    let bodies = check_bodies(program, checks, store);
    let outs = run_whole(program, &bodies, store, now, (options, cancel))?;
    Ok(facts(outs, store.dict.end()).collect())
}

/// The columns of a head of constants and variables (most heads), matched with a fact by place as [`unify`]
/// matches any head.
fn by_place(head: &crate::rules::Head) -> Option<Columns> {
    use crate::ir::lower::TemplateTerm::{Const, Var};
    Columns::new(head.terms.iter().map(|t| match t {
        Const(c) => Some(Place::Const(*c)),
        Var(v) => Some(Place::Var(*v)),
        _ => None,
    }))
}

/// An equivalence group (`R(x,z) :- R(x,y), R(y,z)` with `R(x,y) :- R(y,x)`) maintained as connected components
/// rather than by DRed, which would overdelete a whole class for one lost link:
///
/// ```text
/// L   the gone R facts (links lost earlier: removed, or no longer derived by another rule)
/// A   the old classes of L's ends (an end's class is its R objects in the old state: the closure is complete)
/// B   the R links of A that hold now without this group: asserted, or derived by another rule ("others") with
///     its subject in A; a link to a node outside A (an added fact's) is left to insertion
/// new classes: a union-find over A by B; each class with a link holds all its pairs, and each member the
///     class's literal objects
/// ```
///
/// Another rule of the hub shape `R(x,z) :- P(x ~ y), Q(y ~ z)` ([`super::closure::Hub`]) adds its links to B
/// as a union per shared `y` (the members of A that reach `y` with the members `y` reaches), not as a pair per
/// (x, z): LUBM_LE's connectedCourses from takesCourse made 2.2M pairs for a 1 % removal.
///
/// A class whose members stay together (and that lost no literal object) keeps every pair; a class that split
/// loses the pairs the new classes lack. Gone facts of L that the new classes hold come back. Returns the facts
/// lost and regained.
fn equivalence(
    program: &Program,
    (r, others): (TermId, &[usize]),
    gone: &mut Gone,
    old_asserted: &QuadStore,
    store: &Store,
    (options, cancel): (&Options, &Cancel),
) -> Result<(usize, usize), ExecError> {
    use crate::ir::lower::TemplateTerm::{Const, Var};
    let g0 = TermId::DEFAULT_GRAPH;
    let mut lost_links: Vec<Quad> = gone
        .set
        .iter()
        .filter(|q| q[0] == g0 && q[2] == r)
        .copied()
        .collect();
    if lost_links.is_empty() {
        return Ok((0, 0));
    }
    lost_links.sort_unstable();
    let is_node = |id: TermId| crate::exec::path::is_node(&store.dict, id);
    // The old classes of the lost links' ends.
    let mut class_of: hashbrown::HashMap<TermId, u32> = hashbrown::HashMap::new();
    let mut classes: Vec<Vec<TermId>> = Vec::new();
    for &[_, s, _, o] in &lost_links {
        for x in [s, o] {
            if !is_node(x) || class_of.contains_key(&x) {
                continue;
            }
            let k = classes.len() as u32;
            let mut class = vec![x];
            class.extend(
                View::with(old_asserted, &gone.now, Some(&gone.out))
                    .scan(g0, &[Some(x), Some(r), None])
                    .map(|t| t[2])
                    .filter(|&y| is_node(y)),
            );
            class.sort_unstable();
            class.dedup();
            for &y in &class {
                // Classes are disjoint in a complete closure; a node met twice joins the first class.
                class_of.entry(y).or_insert(k);
            }
            classes.push(class);
        }
    }
    let mut nodes: Vec<TermId> = class_of.keys().copied().collect();
    nodes.sort_unstable();
    let slots: hashbrown::HashMap<TermId, u32> = nodes
        .iter()
        .enumerate()
        .map(|(i, &n)| (n, i as u32))
        .collect();
    let index = |id: TermId| slots.get(&id).copied();
    // The links that hold without the group: asserted now, and derived by the other rules with a subject in A.
    gone.sync_for(&reads_of(program, others.iter().copied()));
    let links: Vec<Triple> = View::new(&store.quads, &Overlay::new())
        .scan(g0, &[None, Some(r), None])
        .filter(|t| class_of.contains_key(&t[0]))
        .collect();
    let rows: crate::ir::ValueRows = nodes
        .iter()
        .map(|&x| vec![Some(x)])
        .collect::<Vec<_>>()
        .into();
    let mut seeded: Vec<(usize, Op)> = Vec::new();
    let mut hubs: Vec<super::closure::Hub> = Vec::new();
    for &w in others {
        let rule = &program.rules[w];
        if let Some(hub) = super::closure::hub(rule).filter(|h| h.r == r) {
            hubs.push(hub);
            continue;
        }
        for head in &rule.heads {
            if head.graph.unwrap_or(g0) != g0 {
                continue;
            }
            match &head.terms {
                [_, Const(p), _] if *p != r => {}
                [Var(v), Const(_) | Var(_), _] => seeded.push((
                    w,
                    seed_certain(
                        &rule.body,
                        Op::Values {
                            vars: vec![*v],
                            rows: rows.clone(),
                        },
                    ),
                )),
                [Const(c), Const(_) | Var(_), _] if class_of.contains_key(c) => {
                    seeded.push((w, rule.body.clone()));
                }
                _ => {}
            }
        }
    }
    let outs = run_whole(program, &seeded, store, &gone.now, (options, cancel))?;
    let derived = facts(outs, store.dict.end())
        .filter(|q| q[0] == g0 && q[2] == r)
        .map(|[_, s, p, o]| [s, p, o]);
    let mut sets = super::closure::UnionFind::new(nodes.len());
    let mut ends: HashSet<(u32, TermId)> = HashSet::new();
    let mut literal_ends: Vec<(u32, TermId)> = Vec::new();
    // Every member of A is a node: an end found among them needs no look at its term.
    for [s, _, o] in links.into_iter().chain(derived) {
        let Some(i) = index(s) else { continue };
        match index(o) {
            Some(j) => sets.union(i, j),
            None if !is_node(o) => literal_ends.push((i, o)),
            None => {}
        }
    }
    // R(x,z) :- P(x ~ y), Q(y ~ z), x in A: the members of A that reach a hub y join the members y reaches (and
    // its literal ends go to their class), a union per hub where the rule would make a pair per (x, z).
    let view = View::new(&store.quads, &gone.now);
    for hub in &hubs {
        cancel.check()?;
        let ((p, x_subject), (q, y_subject)) = (hub.to_hub, hub.from_hub);
        let mut spokes: Vec<(TermId, u32)> = Vec::new();
        for (i, &x) in nodes.iter().enumerate() {
            let pattern = if x_subject {
                [Some(x), Some(p), None]
            } else {
                [None, Some(p), Some(x)]
            };
            let far = if x_subject { 2 } else { 0 };
            spokes.extend(view.scan(g0, &pattern).map(|t| (t[far], i as u32)));
        }
        spokes.sort_unstable();
        spokes.dedup();
        let (near, far) = if y_subject { (0, 2) } else { (2, 0) };
        for spoke in spokes.chunk_by(|a, b| a.0 == b.0) {
            let (y, first) = (spoke[0].0, spoke[0].1);
            let mut pattern: crate::store::Pattern = [None, Some(q), None];
            pattern[near] = Some(y);
            let mut reached = false;
            let mut literals: Vec<TermId> = Vec::new();
            for t in view.scan(g0, &pattern) {
                match index(t[far]) {
                    Some(j) => {
                        sets.union(first, j);
                        reached = true;
                    }
                    None if !is_node(t[far]) => literals.push(t[far]),
                    None => {}
                }
            }
            if reached {
                for &(_, i) in spoke {
                    sets.union(first, i);
                }
            }
            for z in literals {
                if reached {
                    literal_ends.push((first, z));
                } else {
                    literal_ends.extend(spoke.iter().map(|&(_, i)| (i, z)));
                }
            }
        }
    }
    for (i, o) in literal_ends {
        ends.insert((sets.find(i), o));
    }
    let holds = |sets: &mut super::closure::UnionFind, x: TermId, y: TermId| -> bool {
        let Some(i) = index(x) else { return false };
        let root = sets.find(i);
        if !is_node(y) {
            return ends.contains(&(root, y));
        }
        sets.linked[root as usize] && index(y).is_some_and(|j| sets.find(j) == root)
    };
    // Classes that lost a literal object's link, or split: their pairs are compared one by one.
    let mut changed = vec![false; classes.len()];
    for &[_, s, _, o] in &lost_links {
        if !is_node(o) {
            if let Some(&k) = class_of.get(&s) {
                changed[k as usize] = true;
            }
        }
    }
    for (k, class) in classes.iter().enumerate() {
        if changed[k] {
            continue;
        }
        let members: Vec<u32> = class.iter().filter_map(|&x| index(x)).collect();
        let root = sets.find(members[0]);
        changed[k] = !sets.linked[root as usize] || members.iter().any(|&i| sets.find(i) != root);
    }
    let mut lost = 0;
    for (k, class) in classes.iter().enumerate() {
        if !changed[k] {
            continue;
        }
        cancel.check()?;
        for &x in class {
            let pairs: Vec<TermId> = View::with(old_asserted, &gone.now, Some(&gone.out))
                .scan(g0, &[Some(x), Some(r), None])
                .map(|t| t[2])
                .collect();
            for y in pairs {
                let q = [g0, x, r, y];
                if gone.holds_derived(&q) && !holds(&mut sets, x, y) && gone.lose(q) {
                    lost += 1;
                }
            }
        }
    }
    let mut regained = 0;
    for q in lost_links {
        if holds(&mut sets, q[1], q[3]) && gone.regain(q) {
            regained += 1;
        }
    }
    Ok((lost, regained))
}

/// What [`maintain`] gives: the derived facts, the run's report, what it did, and the change it made.
type Maintained = (Overlay, Report, Maintenance, Was);

/// Why [`maintain`] gave up, and the old state's derived facts (sorted), for a diff against a run from scratch.
type GaveUp = (&'static str, Vec<Quad>);

/// Maintains `old` (the facts derived over `old_asserted`) for the asserted facts now in `store`, which differ by
/// `changes` (removed, added). Deletion first, group by group in stage order (a group reads only facts of earlier
/// stages and its own, so what it reads from earlier groups is final when it runs):
///
/// ```text
/// G            the gone facts: E⁻, then each group's facts that no longer hold
/// candidates   C := heads of the group's rules with one atom in G, the others over the old state, in I − G
/// one group    holds(c) := some rule of a group done so far (or this one) derives c in one step over
///              E' ∪ (I − G) (earlier writers read final facts; a later writer brings c back when it runs)
/// non-recursive  G += { c ∈ C | ¬holds(c) };  G −= { g ∈ G | a rule of the group derives g }
/// recursive    DRed inside the group: D := C closed over the group's rules (old state), less the facts an
///              earlier group derives in one step over the new state (they hold: neither overdeleted nor
///              followed); G += D;
///              R := { d ∈ D ∪ G | holds(d) };  G −= R, closed forward over the group's rules (new state)
/// ```
///
/// then insertion: semi-naive from E⁺ over E', from what is left. Only a recursive group overdeletes (and gives
/// up past a quarter of `old`, or when its bodies instantiate more than half as many facts as `old` holds:
/// past that, deriving again from scratch costs less); a non-recursive group's deletions are exact, each checked
/// once (delta rules with an eager one-step rederivation, the Backward/Forward idea without the backward
/// chaining a recursive group would need). The reason instead (the store's asserted facts as they came) when it gives up.
fn maintain(
    program: &Program,
    store: &mut Store,
    (removed, added): (Vec<Quad>, Vec<Quad>),
    mut old_asserted: QuadStore,
    old: Overlay,
    options: &Options,
    progress: &dyn FixpointProgress,
) -> Result<Result<Maintained, GaveUp>, RunError> {
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
    // Past a quarter of the derived facts gone (the removed asserted facts not counted), or half as many
    // instantiated, deriving again costs less: at a 4 % removal over LUBM(10), maintaining LUBM_L, LUBM_LE and
    // OWL 2 RL + TBox unbounded took 0.75×, 1.0× and 0.95× a fresh run (an eighth and a quarter gave up on two).
    let give_up_at = old.len() / 4 + 4096 + removed.len();
    let mut made_left = old.len() / 2 + 8192;
    let mut checking = std::time::Duration::ZERO;

    let mut gone = Gone {
        set: removed.iter().copied().collect(),
        now: old,
        out: Overlay::new(),
        pending: Vec::new(),
        back: Vec::new(),
    };
    let mut whole_done = vec![false; n];
    // The rules of the groups done so far.
    let mut done: Vec<usize> = Vec::new();
    // Runs jobs over the old state (the old asserted facts and `old`): `store.quads` is swapped for the run.
    macro_rules! over_old {
        ($jobs:expr) => {{
            std::mem::swap(&mut store.quads, &mut old_asserted);
            let outs = run_jobs(
                program,
                $jobs,
                store,
                (&gone.now, Some(&gone.out)),
                options,
                &cancel,
                made_left,
            );
            std::mem::swap(&mut store.quads, &mut old_asserted);
            match outs {
                Ok(o) => o,
                Err(_) => return Err(capped_by_time(Report::default())),
            }
        }};
    }
    // The facts of `checks` (rules, candidates) that those rules derive in one step over the new state.
    macro_rules! holding {
        ($checks:expr) => {{
            let t = Instant::now();
            let checks: &[(&[usize], &[Quad])] = $checks;
            gone.sync_for(&reads_of(
                program,
                checks.iter().flat_map(|(rules, _)| rules.iter().copied()),
            ));
            let found = derivable(program, checks, store, &gone.now, (options, &cancel))
                .map_err(|_| capped_by_time(Report::default()))?;
            checking += t.elapsed();
            found
        }};
    }
    for stage in 0..program.deps.stage_count() {
        let groups: Vec<&super::dependency::Group> =
            program.deps.stage(stage).map(|(_, g)| g).collect();
        // The stage's non-recursive groups together: they read earlier stages only.
        let flat: Vec<usize> = groups
            .iter()
            .filter(|g| !g.recursive)
            .flat_map(|g| g.rules.iter().copied())
            .collect();
        if !flat.is_empty() && !gone.set.is_empty() {
            let seeds = gone.sorted();
            let delta = default_triples(&seeds);
            let jobs = seeded_jobs(program, &flat, &seeds, &delta, &mut whole_done, false);
            let outs = over_old!(&jobs);
            made_left = made_left.saturating_sub(outs.iter().map(|o| o.made as usize).sum());
            let mut fresh: Vec<Quad> = facts(outs, end).filter(|q| gone.holds_derived(q)).collect();
            fresh.sort_unstable();
            fresh.dedup();
            stats.overdeleted += fresh.len();
            done.extend(&flat);
            let holds = holding!(&[(&done[..], &fresh[..]), (&flat[..], &seeds[..])]);
            for &q in &fresh {
                if holds.contains(&q) {
                    stats.rederived += 1;
                } else {
                    gone.lose(q);
                }
            }
            for q in seeds.iter().filter(|q| holds.contains(*q)) {
                if gone.regain(*q) {
                    stats.rederived += 1;
                }
            }
            if made_left == 0 || gone.set.len() > give_up_at {
                return Ok(Err((gave_up(made_left), gone.old(&removed))));
            }
        } else {
            done.extend(&flat);
        }
        for g in groups.iter().filter(|g| g.recursive) {
            done.extend(&g.rules);
            if gone.set.is_empty() {
                continue;
            }
            let bodies: Vec<&crate::rules::Rule> =
                g.rules.iter().map(|&r| &program.rules[r]).collect();
            if let Some((_, c)) = super::closure::recognize_group(&bodies)
                .filter(|(_, c)| c.shape == super::closure::Shape::Equivalence)
            {
                let t = Instant::now();
                let others: Vec<usize> = done
                    .iter()
                    .copied()
                    .filter(|r| !g.rules.contains(r))
                    .collect();

                let (lost, regained) = equivalence(
                    program,
                    (c.r, &others),
                    &mut gone,
                    &old_asserted,
                    store,
                    (options, &cancel),
                )
                .map_err(|_| capped_by_time(Report::default()))?;
                stats.overdeleted += lost;
                stats.rederived += regained;
                checking += t.elapsed();
                if gone.set.len() > give_up_at {
                    return Ok(Err((GAVE_UP, gone.old(&removed))));
                }
                continue;
            }
            // Overdelete inside the group, over the old state. A candidate that holds whatever the group loses is
            // neither overdeleted nor followed (the Backward/Forward algorithm's check before propagating, Motik
            // et al., AAAI 2015, cut to one step): one an earlier group derives in one step over the new state
            // (whose facts are final), and one a monotone rule of the group derives in one step from the asserted
            // facts alone, which no deletion takes (a negation or aggregate would read their lack of derived
            // facts as an absence, so those rules are left out).
            let others: Vec<usize> = done
                .iter()
                .copied()
                .filter(|r| !g.rules.contains(r))
                .collect();
            // Rules refuse OPTIONAL, MINUS and LIMIT (`rules::validate`): a body reads an absence only through a
            // negation or an aggregate, which its footprint records.
            let monotone: Vec<usize> = (g.rules.iter().copied())
                .filter(|&r| !program.footprints[r].is_nonmonotone())
                .collect();
            let asserted_only = Overlay::new();
            let before = gone.sorted();
            let mut frontier = before.clone();
            let mut lost: Vec<Quad> = Vec::new();
            while !frontier.is_empty() {
                let delta = default_triples(&frontier);
                let jobs =
                    seeded_jobs(program, &g.rules, &frontier, &delta, &mut whole_done, false);
                let outs = over_old!(&jobs);
                made_left = made_left.saturating_sub(outs.iter().map(|o| o.made as usize).sum());
                let mut found: Vec<Quad> =
                    facts(outs, end).filter(|q| gone.holds_derived(q)).collect();
                found.sort_unstable();
                found.dedup();
                let held = holding!(&[(&others[..], &found[..])]);
                found.retain(|q| !held.contains(q));
                let t = Instant::now();
                let proved = derivable(
                    program,
                    &[(&monotone[..], &found[..])],
                    store,
                    &asserted_only,
                    (options, &cancel),
                )
                .map_err(|_| capped_by_time(Report::default()))?;
                checking += t.elapsed();
                frontier = found
                    .into_iter()
                    .filter(|q| !proved.contains(q) && gone.lose(*q))
                    .collect();
                lost.extend(&frontier);
                if made_left == 0 || gone.set.len() > give_up_at {
                    return Ok(Err((gave_up(made_left), gone.old(&removed))));
                }
            }
            stats.overdeleted += lost.len();
            // Rederive in one step over the new state, then forward inside the group.
            let holds = holding!(&[(&done[..], &lost[..]), (&g.rules[..], &before[..])]);
            let mut frontier: Vec<Quad> = lost
                .iter()
                .chain(&before)
                .filter(|q| holds.contains(*q))
                .copied()
                .filter(|q| gone.regain(*q))
                .collect();
            stats.rederived += frontier.len();
            let mut again = vec![false; n];
            while !frontier.is_empty() {
                frontier.sort_unstable();
                let t = Instant::now();
                gone.sync_for(&reads_of(program, g.rules.iter().copied()));
                let delta = default_triples(&frontier);
                let jobs = seeded_jobs(program, &g.rules, &frontier, &delta, &mut again, true);
                let outs = run_jobs(
                    program,
                    &jobs,
                    store,
                    (&gone.now, None),
                    options,
                    &cancel,
                    usize::MAX,
                )
                .map_err(|_| capped_by_time(Report::default()))?;
                frontier = facts(outs, end).filter(|q| gone.regain(*q)).collect();
                stats.rederived += frontier.len();
                checking += t.elapsed();
            }
        }
    }
    gone.sync();
    let Gone {
        now: mut kept, out, ..
    } = gone;
    kept.compact();
    stats.times[1] = checking;
    stats.times[0] = started.elapsed() - checking;

    // What is left is not asserted now (only an added fact can be).
    let mut asserted_now: Vec<Quad> = Vec::new();
    if !added.is_empty() {
        asserted_now = (added.iter())
            .filter(|q| kept.contains(q[0], [q[1], q[2], q[3]]))
            .copied()
            .collect();
        let now_asserted: HashSet<Quad> = asserted_now.iter().copied().collect();
        kept.retain(|g, &[s, p, o]| !now_asserted.contains(&[g, s, p, o]));
    }

    // Insert: semi-naive from the added asserted facts. `--max-facts` bounds the derived facts the state holds,
    // as in a run from scratch: those kept count.
    let insert = Options {
        start: Some(added),
        budget: options.budget.after(kept.len(), started.elapsed()),
        ..options.clone()
    };
    let (overlay, mut report) = run_over(program, store, &insert, progress, kept);
    // The run's time is the whole maintenance, as a run from scratch's is the whole fixpoint.
    report.elapsed = started.elapsed();
    stats.times[2] = report.elapsed - stats.times[0] - stats.times[1];
    // The change to the derived facts, from what was done rather than from lists of all of them before and
    // after. With O, N the derived facts before and after, T the old ones taken out (`out`), A the old ones
    // asserted now, I those the insertion added, E⁻ the removed asserted facts: O = (N − I − E⁻) ∪ T ∪ A, and
    //   removed = O − N = (T − I) ∪ A        added = N − O = (I − T) ∪ (E⁻ ∩ N)
    // (I is disjoint from A, which is asserted, and from what was kept; E⁻ facts that are derived now were
    // asserted before, not derived.)
    let inserted = std::mem::take(&mut report.inserted);
    let mut came: Vec<Quad> = (inserted.iter())
        .filter(|q| !out.contains(q[0], [q[1], q[2], q[3]]))
        .chain(
            removed
                .iter()
                .filter(|q| overlay.contains(q[0], [q[1], q[2], q[3]])),
        )
        .copied()
        .collect();
    // T − I = T − N: a fact taken out is not among those kept.
    let mut taken_out = out.into_quads();
    taken_out.retain(|q| !overlay.contains(q[0], [q[1], q[2], q[3]]));
    taken_out.extend(asserted_now);
    for list in [&mut taken_out, &mut came] {
        list.sort_unstable();
        list.dedup();
    }
    let was = Was::Changed {
        removed: taken_out,
        added: came,
    };
    Ok(Ok((overlay, report, stats, was)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::lower::TemplateTerm;
    use crate::store::Dictionary;
    use proptest::prelude::*;

    /// A head term over a few constants and variables (so that repeats and clashes occur).
    fn term() -> impl Strategy<Value = TemplateTerm> {
        prop_oneof![
            (1u32..4).prop_map(|c| TemplateTerm::Const(TermId(c))),
            (0u32..3).prop_map(|v| TemplateTerm::Var(VarId(v))),
        ]
    }

    proptest! {
        #[test]
        fn a_plain_head_binds_a_fact_as_unify_does(
            terms in [term(), term(), term()],
            named in any::<bool>(),
            fact in [0u32..2, 1u32..4, 1u32..4, 1u32..4],
        ) {
            let head = crate::rules::Head {
                terms,
                graph: named.then_some(TermId(1)),
            };
            let q = fact.map(TermId);
            let plain = by_place(&head).expect("constants and variables only");
            let by_unify = unify(&head, q, &Dictionary::new())
                .map(|binding| binding.iter().map(|(_, t)| Some(*t)).collect::<Vec<_>>());
            // After a row already there: the new one is appended, or nothing is. The graph is checked as
            // `check_bodies` checks it, before the places.
            let mut cells = vec![Some(TermId(9)); plain.vars.len()];
            let [g, s, p, o] = q;
            let pushed = g == head.graph.unwrap_or(TermId::DEFAULT_GRAPH)
                && plain.push_row([s, p, o], &mut cells);
            prop_assert_eq!(pushed.then(|| cells[plain.vars.len()..].to_vec()), by_unify.clone());
            prop_assert_eq!(cells.len(), plain.vars.len() * (1 + usize::from(pushed)));
            if let Some(binding) = unify(&head, q, &Dictionary::new()) {
                let vars: Vec<VarId> = binding.iter().map(|(v, _)| *v).collect();
                prop_assert_eq!(&plain.vars, &vars);
            }
        }
    }
}
