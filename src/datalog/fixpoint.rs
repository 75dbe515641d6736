//! This module defines the fixpoint: stages run producers first; inside a stage, passes run until no active group
//! derives anything. Every rule body is an `ir::Op` planned and executed by the query executor over
//! `base ⊕ derived`; the rules of one pass run in parallel over the same overlay and their outputs merge in rule
//! order, so the result never depends on thread count.
//!
//! ```text
//! for stage in stages (producers first):
//!     active = stage's groups, each with delta = none
//!     while active is non-empty:                   (≤ max_iterations passes)
//!         for group in active, rule in group:
//!             bodies = [body] if delta is none or the rule re-runs whole
//!                    = [body seeded by delta at each recursive atom] otherwise
//!             rows of each body → heads → facts not asserted and not yet derived
//!         overlay += new facts; active = recursive groups that derived something, delta = their new facts
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hashbrown::{HashMap, HashSet};
use rayon::prelude::*;

use crate::exec::datetime::DateTime;
use crate::exec::eval::Env;
use crate::exec::terms::Terms;
use crate::exec::{self, Cancel, Context, ExecError, Flow, Rows, State};
use crate::ir::{Op, VarSet};
use crate::plan::{self, Dataset};
use crate::query::instantiate_checking;
use crate::store::quads::{FENCE, Perm, fence_block, gallop, prefetch};
use crate::store::{Overlay, Quad, Store, TermId, TermRef, TermSource, Triple, View};

use super::budget::{Budget, CapReason};
use super::closure::{self, Classes, Closure};
use super::delta::{Seeding, seeded, seeding};
use super::{Program, Report, RuleReport, StageReport};

/// How the program is scheduled.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Schedule {
    /// Stages and recursive groups, semi-naive inside groups (the default).
    #[default]
    Staged,
    /// One group of all rules, every body whole every pass: the reference evaluation of a positive program.
    /// It runs every rule from the first pass, so it refuses programs that negate or aggregate.
    WholeProgram,
    /// Stage by stage, each stage's rules as one group, every body whole every pass: the naive reference
    /// evaluation of a stratified program.
    NaiveStages,
}

/// How a run goes.
#[derive(Clone, Debug)]
pub struct Options {
    /// The schedule.
    pub schedule: Schedule,
    /// Limits.
    pub budget: Budget,
    /// What NOW() returns in rule bodies.
    pub now: DateTime,
    /// Run the rules of a pass in parallel.
    pub parallel: bool,
    /// Compile one-rule transitive-closure groups to a property path (`--no-closure` turns it off).
    pub closure: bool,
    /// The most nodes one property-path traversal of a rule body may visit (past it a compiled closure falls
    /// back to iteration).
    pub path_limit: usize,
    /// Maintenance ([`super::maintain`]): the facts that changed since the prior facts were derived (asserted
    /// facts added, derived facts rederived). Each stage's first pass then runs every rule seeded by them and by
    /// what earlier stages of this run added, at every atom that can read them, instead of whole.
    pub start: Option<Vec<Quad>>,
    /// Record the rule that first derived each new fact ([`super::Report::credits`], for `--provenance`).
    pub track: bool,
}

impl Options {
    /// Staged, no limits, rules of a pass in parallel, closures compiled, the default path limit; NOW() is `now`.
    pub fn new(now: DateTime) -> Self {
        Self {
            schedule: Schedule::Staged,
            budget: Budget::default(),
            now,
            parallel: true,
            closure: true,
            path_limit: crate::exec::DEFAULT_PATH_LIMIT,
            start: None,
            track: false,
        }
    }
}

/// Shows a run's progress (the application draws it).
pub trait FixpointProgress: Sync {
    /// A pass finished: stage (0-based) of `stages`, pass number, facts derived so far.
    fn pass(&self, stage: usize, stages: usize, pass: usize, derived: usize);
}

/// Progress that goes nowhere.
pub struct NoProgress;

impl FixpointProgress for NoProgress {
    fn pass(&self, _: usize, _: usize, _: usize, _: usize) {}
}

/// One body run of a pass.
pub(super) struct Job<'p> {
    pub(super) rule: usize,
    pub(super) body: &'p Op,
    /// Semi-naive: the body runs with this atom seeded by these facts (the seeded body is built when the job
    /// runs and dropped after it, so a pass never holds every job's seed at once).
    pub(super) seed: Option<(usize, &'p [Triple])>,
    /// A closure group's compiled body: run by [`Closure::run`]; a path limit falls back to iteration.
    pub(super) compiled: Option<Closure>,
}

/// What a body run produced: facts (ids may be the run's own computed terms, listed in `locals`).
pub(super) struct JobOut {
    rule: usize,
    /// Facts (under a budget: only new ones, each once).
    pub(super) quads: Vec<Quad>,
    pub(super) locals: Vec<(TermId, oxrdf::Term)>,
    rows: u64,
    /// Head instantiations (new facts or not): a rule that matched rows and made none is worth a warning.
    pub(super) made: u64,
    elapsed: Duration,
}

/// Runs the program over `store` to a fixpoint (or a cap); new terms are interned into `store.dict`.
pub fn run(
    program: &Program,
    store: &mut Store,
    options: &Options,
    progress: &dyn FixpointProgress,
) -> (Overlay, Report) {
    run_over(program, store, options, progress, Overlay::new())
}

/// [`run`] over asserted ⊕ `prior` facts (the OWL 2 RL closure): the returned overlay holds `prior`'s facts and
/// the new ones; the report counts only the new ones.
pub fn run_over(
    program: &Program,
    store: &mut Store,
    options: &Options,
    progress: &dyn FixpointProgress,
    prior: Overlay,
) -> (Overlay, Report) {
    let start = Instant::now();
    let deadline = options.budget.deadline(start);
    let n = program.rules.len();
    let mut overlay = prior;
    let mut report = Report {
        rules: program
            .rules
            .iter()
            .map(|r| RuleReport {
                id: r.id.clone(),
                ..RuleReport::default()
            })
            .collect(),
        ..Report::default()
    };
    // The schedule: groups of rule indices with their stage and recursion.
    let groups: Vec<(Vec<usize>, bool, usize)> = match options.schedule {
        Schedule::Staged => program
            .deps
            .groups
            .iter()
            .map(|g| (g.rules.clone(), g.recursive, g.stage))
            .collect(),
        Schedule::WholeProgram => vec![((0..n).collect(), true, 0)],
        Schedule::NaiveStages => (0..program.deps.stage_count())
            .map(|s| {
                let mut rules: Vec<usize> = program
                    .deps
                    .stage(s)
                    .flat_map(|(_, g)| g.rules.iter().copied())
                    .collect();
                rules.sort_unstable();
                (rules, true, s)
            })
            .collect(),
    };
    let stages = groups.iter().map(|g| g.2 + 1).max().unwrap_or(0);
    // Per group: the writes of its rules, for semi-naive seeding.
    let group_writes: Vec<Vec<super::footprint::Access>> = groups
        .iter()
        .map(|(rules, _, _)| {
            rules
                .iter()
                .flat_map(|&r| program.footprints[r].writes.iter().copied())
                .collect()
        })
        .collect();
    let seedings: Vec<Seeding> = (0..n)
        .map(|r| {
            let g = groups
                .iter()
                .position(|(rules, _, _)| rules.contains(&r))
                .expect("grouped");
            match options.schedule {
                Schedule::WholeProgram | Schedule::NaiveStages => Seeding::Whole,
                Schedule::Staged => seeding(
                    &program.rules[r].body,
                    program.footprints[r].repeatable,
                    &group_writes[g],
                ),
            }
        })
        .collect();
    // Closure groups: one recursive rule shaped as a transitive closure runs once as a path; the square rule with
    // its symmetric rule, once as connected components. Each with the rule its facts are credited to.
    // The rules of a recursive group whose closures may compile.
    let compilable = |rules: &[usize], recursive: bool| -> Option<Vec<&crate::rules::Rule>> {
        (recursive && options.closure && options.schedule == Schedule::Staged)
            .then(|| rules.iter().map(|&r| &program.rules[r]).collect())
    };
    let mut closures: Vec<Option<(usize, Closure)>> = groups
        .iter()
        .map(|(rules, recursive, _)| {
            closure::recognize_group(&compilable(rules, *recursive)?).map(|(at, c)| (rules[at], c))
        })
        .collect();
    // Groups holding the square rule and its symmetric rule among others (OWL 2 RL's eq-trans and eq-sym): the two
    // run as classes kept across the group's passes, the others as bodies.
    let mut classes: Vec<Option<GroupClasses>> = groups
        .iter()
        .map(|(rules, recursive, _)| {
            let bodies = compilable(rules, *recursive)?;
            closure::equivalence_within(&bodies).map(|(square, symmetric, r)| GroupClasses {
                square: rules[square],
                symmetric: rules[symmetric],
                classes: Classes::new(r),
                started: false,
            })
        })
        .collect();
    for c in classes.iter().flatten() {
        for r in [c.square, c.symmetric] {
            report.rules[r].closure = Some(CLASSES);
        }
    }
    let mut group_of = vec![0usize; n];
    for (g, (rules, _, _)) in groups.iter().enumerate() {
        for &r in rules {
            group_of[r] = g;
        }
    }
    // Maintenance: what this run derived so far (later stages are seeded by it too).
    let mut added_by_run: Vec<Quad> = Vec::new();
    let mut matched_rows = vec![0u64; n];
    // Facts the bodies found, new or not, over every pass.
    let mut found_total = 0usize;
    let mut heads_made = vec![0u64; n];
    'stages: for stage in 0..stages {
        let stage_groups: Vec<usize> = (0..groups.len())
            .filter(|&g| groups[g].2 == stage)
            .collect();
        let mut stage_report = StageReport {
            groups: stage_groups
                .iter()
                .map(|&g| {
                    groups[g]
                        .0
                        .iter()
                        .map(|&r| program.rules[r].id.clone())
                        .collect()
                })
                .collect(),
            ..StageReport::default()
        };
        // (group, delta: the group's new default-graph facts of the last pass; None before the first pass)
        // Maintenance: the first pass is seeded by every change so far, at every atom that can read one.
        let changes: Option<Vec<Quad>> = options
            .start
            .as_ref()
            .map(|start| start.iter().chain(&added_by_run).copied().collect());
        let change_seedings: Option<Vec<Seeding>> = changes.as_ref().map(|c| {
            let reads = change_accesses(c);
            (0..n)
                .map(|r| {
                    seeding(
                        &program.rules[r].body,
                        program.footprints[r].repeatable,
                        &reads,
                    )
                })
                .collect()
        });
        let first_delta: Option<Vec<Triple>> = changes.as_deref().map(default_triples);
        let mut first = true;
        let mut active: Vec<(usize, Option<Vec<Triple>>)> = stage_groups
            .iter()
            .map(|&g| (g, first_delta.clone()))
            .collect();
        while !active.is_empty() {
            // The run stops early enough to leave the output the time it needs for what was derived.
            let stop_by = deadline.map(|d| options.budget.stop_by(d, report.derived));
            let (room, room_reason) = options.budget.room(report.derived);
            let stop = if options
                .budget
                .max_iterations
                .is_some_and(|m| stage_report.passes >= m)
            {
                Some(CapReason::Iterations)
            } else if stop_by.is_some_and(|d| Instant::now() >= d) {
                Some(CapReason::Time)
            } else if room == 0 && room_reason == CapReason::Memory {
                // The heap is past what reasoning may use: another pass could only add to it.
                Some(CapReason::Memory)
            } else {
                None
            };
            if let Some(reason) = stop {
                cap(
                    &mut report,
                    reason,
                    &active,
                    &groups,
                    program,
                    stage,
                    stages,
                );
                report.stages.push(stage_report);
                break 'stages;
            }
            let mut jobs: Vec<Job<'_>> = Vec::new();
            // (group, the facts its classes take: None for every R fact of the view)
            let mut class_work: Vec<(usize, Option<&[Triple]>)> = Vec::new();
            for (g, delta) in &active {
                let by_classes = classes[*g].as_ref().map(|c| {
                    class_work.push((*g, delta.as_deref().filter(|_| c.started)));
                    [c.square, c.symmetric]
                });
                if delta.is_none() {
                    let view = View::new(&store.quads, &overlay);
                    if let Some((rule, c)) = &closures[*g] {
                        if c.applies(&view, &store.dict) {
                            jobs.push(Job {
                                rule: *rule,
                                // Not run: a compiled job runs `compiled`.
                                body: &program.rules[*rule].body,
                                seed: None,
                                compiled: Some(c.clone()),
                            });
                            continue;
                        }
                        closures[*g] = None;
                    }
                }
                for &r in &groups[*g].0 {
                    if by_classes.is_some_and(|rules| rules.contains(&r)) {
                        continue;
                    }
                    let body = &program.rules[r].body;
                    let how = match &change_seedings {
                        Some(c) if first => &c[r],
                        _ => &seedings[r],
                    };
                    match (delta, how) {
                        (None, _) | (Some(_), Seeding::Whole) => jobs.push(Job {
                            rule: r,
                            body,
                            seed: None,
                            compiled: None,
                        }),
                        (Some(d), Seeding::Atoms(atoms)) => {
                            for &a in atoms {
                                jobs.push(Job {
                                    rule: r,
                                    body,
                                    seed: Some((a, d.as_slice())),
                                    compiled: None,
                                });
                            }
                        }
                    }
                }
            }
            // Inside the pass, the deadline comes earlier with every fact the pass finds, each to be written if
            // it is new: as many as the share of found facts that were new in the passes so far (all, at first).
            let found_so_far = Arc::new(AtomicUsize::new(0));
            let new_share = if found_total == 0 {
                1.0
            } else {
                (report.derived as f64 / found_total as f64).clamp(0.01, 1.0)
            };
            let cancel = match (stop_by, options.budget.timeout) {
                (Some(at), Some(t)) => Cancel::new().with_deadline(at, t).with_reserve(
                    options.budget.reserve.time_per_fact.mul_f64(new_share),
                    Arc::clone(&found_so_far),
                ),
                _ => Cancel::new(),
            };
            let limits = Limits {
                now: options.now,
                cancel: &cancel,
                found: &found_so_far,
                room,
                path_limit: options.path_limit,
                made_cap: usize::MAX,
                also: None,
                compact: true,
            };
            let mut outs: Vec<Result<JobOut, ExecError>> = {
                let shared: &Store = store;
                let overlay_ref = &overlay;
                let run_job = |job: &Job<'_>| run_body(program, job, shared, overlay_ref, &limits);
                if options.parallel {
                    jobs.par_iter().map(run_job).collect()
                } else {
                    jobs.iter().map(run_job).collect()
                }
            };
            // The classes' jobs come last: the symmetric rule's facts, then the square rule's.
            let classes_from = jobs.len();
            for (g, facts) in class_work {
                let c = classes[g].as_mut().expect("a group with classes");
                let (symmetric, square) = (c.symmetric, c.square);
                match run_classes(c, facts, store, &overlay, (&limits, options.track)) {
                    Ok([by_symmetric, by_square]) => {
                        outs.extend([Ok(by_symmetric), Ok(by_square)]);
                        jobs.extend([symmetric, square].map(|rule| Job {
                            rule,
                            body: &program.rules[rule].body,
                            seed: None,
                            compiled: None,
                        }));
                    }
                    Err(e) => {
                        outs.push(Err(e));
                        jobs.push(Job {
                            rule: square,
                            body: &program.rules[square].body,
                            seed: None,
                            compiled: None,
                        });
                    }
                }
            }
            // Merge in job order: deterministic whatever ran first.
            let mut capped: Option<CapReason> = None;
            // Closure groups whose compiled body ran (done), or hit a path limit (they iterate instead).
            let mut closed: Vec<usize> = Vec::new();
            let mut fell_back: Vec<usize> = Vec::new();
            let mut new_by_group: HashMap<usize, Vec<Triple>> = HashMap::new();
            let mut derived_by_group: HashMap<usize, usize> = HashMap::new();
            // Every fact the pass found, with the job (in job order) that found it: 20 bytes a fact, at the
            // fixpoint's peak (LUBM_LE(10) stages 0–1; with the position within the job too, 24 bytes made the
            // command's peak 4 MB higher).
            // Sized once, exactly: growing it by doubling could leave it twice the size it needs.
            let total: usize = outs.iter().flatten().map(|o| o.quads.len()).sum();
            let mut found: Vec<(Quad, u32)> = Vec::with_capacity(total);
            let mut pending: Vec<(u32, Vec<Quad>)> = Vec::with_capacity(jobs.len());
            // The blank nodes the jobs saw: those the dictionary held before their terms are interned.
            let shared_blanks = store.dict.blank_count();
            for (j, (job, out)) in jobs.iter().zip(outs).enumerate() {
                let g = group_of[job.rule];
                let out = match out {
                    Ok(o) => o,
                    // A compiled closure past the path's visited-node or pair limit: iterate instead.
                    Err(ExecError::PathLimit(_) | ExecError::PairLimit(_))
                        if job.compiled.is_some() =>
                    {
                        fell_back.push(g);
                        report.rules[job.rule].closure = Some("fell back to iteration");
                        continue;
                    }
                    Err(ExecError::PairLimit(_)) => {
                        capped = Some(room_reason);
                        continue;
                    }
                    Err(ExecError::PathLimit(_)) => {
                        capped = Some(CapReason::Memory);
                        continue;
                    }
                    Err(_) => {
                        capped = Some(CapReason::Time);
                        continue;
                    }
                };
                if job.compiled.is_some() {
                    closed.push(g);
                    report.rules[job.rule].closure = Some("compiled to a path");
                }
                if j >= classes_from {
                    report.rules[job.rule].closure = Some(CLASSES);
                }
                let rr = &mut report.rules[out.rule];
                rr.time += out.elapsed;
                rr.runs += 1;
                matched_rows[out.rule] += out.rows;
                heads_made[out.rule] += out.made;
                let map = intern_locals(&mut store.dict, out.locals, shared_blanks);
                let mut quads = out.quads;
                if !map.is_empty() {
                    for id in quads.iter_mut().flatten() {
                        if let Some(m) = map.get(id) {
                            *id = *m;
                        }
                    }
                }
                pending.push((j as u32, quads));
            }
            // Into `found`, each output from its end a slice at a time, the slice moved given back (the allocator
            // keeps a block until it halves: the outputs' memory goes back in steps as `found`'s is touched, not
            // all after it; LUBM_LE(10)'s peak was the two side by side, 1–2 MB lower so).
            let one_sorted = matches!(pending.as_slice(), [(_, quads)] if quads.is_sorted());
            for (j, mut quads) in pending {
                while !quads.is_empty() {
                    let at = quads.len().saturating_sub(MOVED_AT_A_TIME);
                    found.extend(quads[at..].iter().map(|&q| (q, j)));
                    quads.truncate(at);
                    quads.shrink_to_fit();
                }
            }
            // One sorted output (a compiled closure's) is put back in order, so that `new_facts` need not sort
            // it: its slices came last first, each in order; reversed whole, then each slice again.
            if one_sorted {
                found.reverse();
                let head = match found.len() % MOVED_AT_A_TIME {
                    0 => MOVED_AT_A_TIME.min(found.len()),
                    r => r,
                };
                found[..head].reverse();
                found[head..]
                    .chunks_mut(MOVED_AT_A_TIME)
                    .for_each(<[_]>::reverse);
                debug_assert!(found.is_sorted());
            }
            // Dedup by sorting (each fact kept with the first job that found it), then drop what is asserted or already
            // derived by merging against those sorted arrays: sequential memory, no hash table of every fact.
            found_total += found.len();
            let mut new = new_facts(found, store, &overlay);
            // capped(f) :- new(f, j), |{ new(f', j') : (j', f') < (j, f) }| < room.
            if new.len() > room {
                new.sort_unstable_by_key(|&(q, j)| (j, q));
                new.truncate(room);
                capped = Some(room_reason);
            }
            let added = new.len();
            // Counted per job, then per rule and group (no hashing per fact); facts of a graph are contiguous.
            // Seeds of the next pass too: new default-graph facts of groups that iterate (a compiled closure is
            // complete: it is never seeded again).
            let mut per_job = vec![0usize; jobs.len()];
            let mut by_graph: Vec<(TermId, Vec<Triple>)> = Vec::new();
            let seeds_of: Vec<Option<usize>> = jobs
                .iter()
                .map(|job| Some(group_of[job.rule]).filter(|g| !closed.contains(g)))
                .collect();
            for &(q, j) in &new {
                let [graph, s, p, o] = q;
                per_job[j as usize] += 1;
                match by_graph.last_mut() {
                    Some((g, ts)) if *g == graph => ts.push([s, p, o]),
                    // The new facts are sorted by graph (by job when capped: a graph's may then come in several
                    // runs, which the overlay merges): each graph's come together, and are counted first.
                    _ => {
                        let n = new.partition_point(|f| f.0[0] <= graph)
                            - new.partition_point(|f| f.0[0] < graph);
                        let mut ts = Vec::with_capacity(n);
                        ts.push([s, p, o]);
                        by_graph.push((graph, ts));
                    }
                }
                if let (TermId::DEFAULT_GRAPH, Some(g)) = (graph, seeds_of[j as usize]) {
                    new_by_group.entry(g).or_default().push([s, p, o]);
                }
            }
            for (j, n) in per_job.iter().enumerate().filter(|(_, n)| **n > 0) {
                let rule = jobs[j].rule;
                report.rules[rule].facts += n;
                *derived_by_group.entry(group_of[rule]).or_default() += n;
            }
            if options.start.is_some() {
                added_by_run.extend(new.iter().map(|&(q, _)| q));
            }
            // credit(f) = the rule of the first job (in job order) of the pass that first found f.
            if options.track {
                report
                    .credits
                    .extend(new.iter().map(|&(q, j)| (q, jobs[j as usize].rule as u32)));
            }
            drop(new);
            for (graph, triples) in by_graph {
                overlay.add(graph, triples);
            }
            report.derived += added;
            stage_report.passes += 1;
            stage_report.facts += added;
            progress.pass(stage, stages, stage_report.passes, report.derived);
            if let Some(reason) = capped {
                cap(
                    &mut report,
                    reason,
                    &active,
                    &groups,
                    program,
                    stage,
                    stages,
                );
                report.stages.push(stage_report);
                break 'stages;
            }
            // Recursive groups that derived anything iterate, seeded by their new default-graph facts (rules that
            // read named graphs re-run whole).
            // A compiled closure is complete after its one run; one that fell back starts iterating (whole body).
            for g in &fell_back {
                closures[*g] = None;
            }
            first = false;
            active = active
                .iter()
                .filter_map(|(g, _)| {
                    if fell_back.contains(g) {
                        return Some((*g, None));
                    }
                    let more = groups[*g].1
                        && !closed.contains(g)
                        && derived_by_group.get(g).is_some_and(|n| *n > 0);
                    more.then(|| (*g, Some(new_by_group.remove(g).unwrap_or_default())))
                })
                .collect();
        }
        report.stages.push(stage_report);
    }
    for r in 0..n {
        if matched_rows[r] > 0 && heads_made[r] == 0 {
            report.warnings.push(format!(
                "rule {} matched {} row(s) but none instantiated its heads (a literal or an unbound term in a subject or predicate position?)",
                program.rules[r].id, matched_rows[r]
            ));
        }
    }
    report.elapsed = start.elapsed();
    report.credits.sort_unstable();
    report.inserted = added_by_run;
    (overlay, report)
}

/// The default-graph facts of `facts`, as triples (what a seeded atom reads).
pub(super) fn default_triples(facts: &[Quad]) -> Vec<Triple> {
    facts
        .iter()
        .filter(|q| q[0] == TermId::DEFAULT_GRAPH)
        .map(|&[_, s, p, o]| [s, p, o])
        .collect()
}

/// What changed facts can be read as: for each graph (the default one, or a named one), each predicate, and for
/// `rdf:type` facts each class; past 256 keys in a graph, anything of it.
pub(super) fn change_accesses(changes: &[Quad]) -> Vec<super::footprint::Access> {
    use super::footprint::{Access, Key, Scope};
    const MOST: usize = 256;
    let mut keys: Vec<(TermId, Key)> = changes
        .iter()
        .map(|&[g, _, p, o]| {
            let key = if p == crate::store::well_known::RDF_TYPE {
                Key::Class(o)
            } else {
                Key::Predicate(p)
            };
            (g, key)
        })
        .collect();
    keys.sort_unstable_by_key(|(g, k)| {
        (
            *g,
            match k {
                Key::Any => (0, 0),
                Key::Predicate(p) => (1, p.0),
                Key::Class(c) => (2, c.0),
            },
        )
    });
    keys.dedup();
    let mut out = Vec::new();
    for graph in keys.chunk_by(|a, b| a.0 == b.0) {
        let g = graph[0].0;
        let scope = if g == TermId::DEFAULT_GRAPH {
            Scope::Default
        } else {
            Scope::Named(g)
        };
        let access = |key| Access {
            scope,
            key,
            negated: false,
            aggregated: false,
        };
        if graph.len() > MOST {
            out.push(access(Key::Any));
        } else {
            out.extend(graph.iter().map(|&(_, k)| access(k)));
        }
    }
    out
}

/// Facts moved from a body's output into a pass's `found` before the output gives back what they took.
const MOVED_AT_A_TIME: usize = 1 << 16;

/// The facts of `found` that are neither asserted nor derived, each once (with the first job that found it),
/// sorted.
fn new_facts(mut found: Vec<(Quad, u32)>, store: &Store, overlay: &Overlay) -> Vec<(Quad, u32)> {
    // A compiled closure's facts come sorted: checking is linear.
    if !found.is_sorted() {
        if found.len() > 1 << 14 {
            found.par_sort_unstable();
        } else {
            found.sort_unstable();
        }
    }
    found.dedup_by_key(|f| f.0);
    drop_known(&mut found, |f| f.0, store, overlay);
    found
}

/// Drops the facts (sorted by quad) the store asserts or the overlay holds: graph by graph, marks what the graph's
/// asserted triples or derived runs hold, then drops it in one pass.
fn drop_known<T>(facts: &mut Vec<T>, quad: impl Fn(&T) -> Quad, store: &Store, overlay: &Overlay) {
    let mut keep = vec![true; facts.len()];
    mark_all_known(facts, quad, store, overlay, &mut keep);
    let mut k = keep.iter();
    facts.retain(|_| *k.next().expect("one flag per fact"));
}

/// Clears `keep` for the facts (sorted by quad) the store asserts or the overlay holds.
fn mark_all_known<T>(
    facts: &[T],
    quad: impl Fn(&T) -> Quad,
    store: &Store,
    overlay: &Overlay,
    keep: &mut [bool],
) {
    let mut i = 0;
    while i < facts.len() {
        let g = quad(&facts[i])[0];
        let end = i + facts[i..].partition_point(|f| quad(f)[0] == g);
        let (facts, keep) = (&facts[i..end], &mut keep[i..end]);
        if let Some(index) = store.quads.graph(g) {
            let sorted = index.triples();
            if sparse(facts.len(), sorted.len()) {
                mark_known_fenced(facts, &quad, sorted, index.spo_fence(), keep);
            } else {
                mark_known(facts, &quad, sorted, keep);
            }
        }
        for (run, fences) in overlay.fenced_runs_of(g) {
            if sparse(facts.len(), run.len()) {
                let fence = fences.of(Perm::Spo, run, None);
                mark_known_fenced(facts, &quad, run, fence, keep);
            } else {
                mark_known(facts, &quad, run, keep);
            }
        }
        i = end;
    }
}

/// Whether `facts` probes into `len` sorted triples are far apart (more than a fence block between two, on
/// average): then a probe's search reads the fence, which stays in cache, and one block, instead of galloping
/// through the array, a cache miss a step.
fn sparse(facts: usize, len: usize) -> bool {
    facts.saturating_mul(FENCE) < len
}

/// Clears `keep` for the facts (sorted by triple) that `sorted` (SPO-sorted) holds: a merge that gallops through
/// `sorted`, so a few facts against a large array cost a few binary searches and many facts one linear pass.
fn mark_known<T>(facts: &[T], quad: impl Fn(&T) -> Quad, sorted: &[Triple], keep: &mut [bool]) {
    let mut pos = 0;
    for (f, keep) in facts.iter().zip(keep) {
        if !*keep {
            continue;
        }
        let q = quad(f);
        let t = [q[1], q[2], q[3]];
        // The first key not under t, galloping forward from the last fact's.
        pos += gallop(&sorted[pos..], |k| *k < t);
        if pos < sorted.len() && sorted[pos] == t {
            *keep = false;
        }
    }
}

/// [`mark_known`] through `fence`, the SPO [`crate::store::quads::fence`] of `sorted`: the merge gallops through
/// the fence (a post every `FENCE` triples, in cache) and searches one block of `sorted` per fact. The facts go
/// a batch at a time: the blocks of a batch are asked for first, so that their cache misses overlap.
fn mark_known_fenced<T>(
    facts: &[T],
    quad: impl Fn(&T) -> Quad,
    sorted: &[Triple],
    fence: &[Triple],
    keep: &mut [bool],
) {
    const BATCH: usize = 16;
    // Triples a cache line holds, about.
    const LINE: usize = 64 / size_of::<Triple>();
    // Posts below the last fact's triple.
    let mut below = 0;
    let mut blocks = [(0usize, 0usize, [TermId(0); 3]); BATCH];
    for (facts, keep) in facts.chunks(BATCH).zip(keep.chunks_mut(BATCH)) {
        for ((f, keep), block) in facts.iter().zip(keep.iter()).zip(&mut blocks) {
            if !*keep {
                continue;
            }
            let q = quad(f);
            let t = [q[1], q[2], q[3]];
            below += gallop(&fence[below..], |k| *k < t);
            // Post `below - 1` is under t and post `below` is not: the first key not under t is in between.
            let (lo, hi) = fence_block(below, sorted.len());
            for k in (lo..hi).step_by(LINE) {
                prefetch(&sorted[k]);
            }
            *block = (lo, hi, t);
        }
        for (keep, &(lo, hi, t)) in keep.iter_mut().zip(&blocks) {
            if !*keep {
                continue;
            }
            let at = lo + sorted[lo..hi].partition_point(|k| *k < t);
            if sorted.get(at) == Some(&t) {
                *keep = false;
            }
        }
    }
}

/// Records a cap: the rules of the active groups, and every rule of a later stage.
fn cap(
    report: &mut Report,
    reason: CapReason,
    active: &[(usize, Option<Vec<Triple>>)],
    groups: &[(Vec<usize>, bool, usize)],
    program: &Program,
    stage: usize,
    stages: usize,
) {
    report.capped = Some(reason);
    report.capped_rules = active
        .iter()
        .flat_map(|(g, _)| groups[*g].0.iter().map(|&r| program.rules[r].id.clone()))
        .collect();
    report.pending_rules = groups
        .iter()
        .filter(|(_, _, s)| *s > stage && *s < stages)
        .flat_map(|(rules, _, _)| rules.iter().map(|&r| program.rules[r].id.clone()))
        .collect();
}

/// What bounds one body run.
pub(super) struct Limits<'a> {
    /// What NOW() returns.
    pub(super) now: DateTime,
    /// The run's deadline.
    pub(super) cancel: &'a Cancel,
    /// Facts the pass's bodies have found so far (the deadline comes earlier with each).
    pub(super) found: &'a AtomicUsize,
    /// How many new facts the budget still has room for: a run that finds more stops (the merge caps).
    pub(super) room: usize,
    /// The most nodes a path traversal may visit.
    pub(super) path_limit: usize,
    /// The most facts one body may instantiate before it stops (maintenance gives up past it; elsewhere
    /// `usize::MAX`).
    pub(super) made_cap: usize,
    /// A third layer of facts the bodies read, beside the store and the overlay (maintenance's old state).
    pub(super) also: Option<&'a Overlay>,
    /// Whether a body's output may be compacted as it grows (sorted, each fact once, held facts dropped): the
    /// fixpoint wants only new facts; maintenance wants every instantiation (overdeletion reads held ones).
    pub(super) compact: bool,
}

/// Runs one body and instantiates the rule's heads for every row; keeps each new fact once, and stops once it has
/// more than the budget's room.
pub(super) fn run_body(
    program: &Program,
    job: &Job<'_>,
    store: &Store,
    overlay: &Overlay,
    limits: &Limits<'_>,
) -> Result<JobOut, ExecError> {
    let started = Instant::now();
    let rule = &program.rules[job.rule];
    let view = View::with(&store.quads, overlay, limits.also);
    let bounded = limits.room != usize::MAX;
    if let Some(c) = &job.compiled {
        // Each pair comes out once; under a budget only new ones count. The pairs are sorted (so the facts reach
        // the merge in SPO order and its sort only checks).
        let mut pairs: Vec<(TermId, TermId)> = Vec::new();
        let g = TermId::DEFAULT_GRAPH;
        c.run(
            &view,
            &store.dict,
            limits.path_limit,
            limits.cancel,
            &mut |x, z| {
                let known = bounded && view.contains(g, [x, c.r, z]);
                if !known {
                    pairs.push((x, z));
                }
                pairs.len() <= limits.room
            },
        )?;
        return Ok(pair_facts(
            (job.rule, c.r),
            pairs,
            store,
            overlay,
            limits,
            started,
        ));
    }
    let dataset = Dataset::default();
    if job
        .seed
        .is_some_and(|(atom, _)| super::delta::finds_nothing(job.body, atom, &view))
    {
        return Ok(JobOut {
            rule: job.rule,
            quads: Vec::new(),
            locals: Vec::new(),
            rows: 0,
            made: 0,
            elapsed: started.elapsed(),
        });
    }
    let seeded_body = job.seed.map(|(atom, delta)| seeded(job.body, atom, delta));
    let body = seeded_body.as_ref().unwrap_or(job.body);
    let mut plan = plan::plan(body, rule.vars.clone(), view, &dataset, &VarSet::new());
    drop(seeded_body);
    // A fact is made once however many solutions make it: what the heads do not read is only checked for.
    if let Some(live) = rule.head_vars() {
        plan::probe::mark(&mut plan.root, &live);
    }
    let mut cx = Context::new(view, Env::new(limits.now, None)).with_cancel(limits.cancel.clone());
    cx.pair_limit = limits.room.saturating_add(1);
    cx.path_limit = limits.path_limit;
    let mut st = State::new(Terms::new(&store.dict), &plan);
    let mut quads: Vec<Quad> = Vec::new();
    // Under a budget, keep each new fact once and count them, so a body that finds more than the room stops
    // early instead of filling memory.
    let mut fresh: HashSet<Quad> = HashSet::new();
    let mut rows = 0u64;
    let mut made = 0u64;
    let mut counted = 0usize;
    let mut compacted = 0usize;
    let unit = Rows::unit(plan.width);
    // A head's subject must be an IRI or a blank node, its predicate an IRI: checked per fact (a decoding of the
    // term), but where the head puts a constant of the right kind there, or a variable the body always binds at
    // such a place of a fact.
    let (nodes, predicates) = super::delta::node_vars(&rule.body);
    let checks: Vec<[bool; 2]> = (rule.heads.iter())
        .map(|head| {
            use crate::ir::lower::TemplateTerm::{Const, Var};
            let node = |t: &crate::ir::lower::TemplateTerm| match t {
                Var(v) => nodes.contains(*v),
                Const(c) => matches!(st.terms.term(*c), TermRef::Iri(_) | TermRef::Blank(_)),
                _ => false,
            };
            let predicate = |t: &crate::ir::lower::TemplateTerm| match t {
                Var(v) => predicates.contains(*v),
                Const(c) => matches!(st.terms.term(*c), TermRef::Iri(_)),
                _ => false,
            };
            [!node(&head.terms[0]), !predicate(&head.terms[1])]
        })
        .collect();
    exec::execute(&plan, &cx, &mut st, &unit, &mut |st, batch| {
        rows += batch.len() as u64;
        let mut blanks = Vec::new();
        for row in batch.iter() {
            for (head, &check) in rule.heads.iter().zip(&checks) {
                blanks.clear();
                if let Some([s, p, o]) =
                    instantiate_checking(&mut st.terms, &head.terms, row, &mut blanks, check)
                {
                    made += 1;
                    let g = head.graph.unwrap_or(TermId::DEFAULT_GRAPH);
                    let q = [g, s, p, o];
                    if !bounded {
                        // No budget: the merge deduplicates (and the list is compacted as it grows, below).
                        quads.push(q);
                        continue;
                    }
                    let known = !q.iter().any(|&id| st.terms.is_local(id))
                        && (overlay.contains(g, [s, p, o])
                            || store
                                .quads
                                .graph(g)
                                .is_some_and(|idx| idx.contains([s, p, o])));
                    if !known && fresh.insert(q) {
                        quads.push(q);
                    }
                }
            }
        }
        // Without a budget every instantiation is kept until the pass's merge, and a body that makes many facts
        // already held (or one fact many times) would hold them all: each time the facts added since the last
        // time are as many as those kept before, they are sorted, deduplicated and rid of known facts (terms the
        // body computed have ids no held fact has: they stay). Each fact is sorted once, in its chunk; the
        // chunks are merged by the pass's merge.
        if limits.compact && !bounded && quads.len() - compacted >= compacted.max(COMPACT_FROM) {
            compact_from(&mut quads, compacted, store, overlay);
            compacted = quads.len();
            counted = counted.min(quads.len());
        }
        limits
            .found
            .fetch_add(quads.len().saturating_sub(counted), Ordering::Relaxed);
        counted = quads.len();
        Ok(
            if quads.len() > limits.room || made > limits.made_cap as u64 {
                Flow::Stop
            } else {
                Flow::Continue
            },
        )
    })?;
    if limits.compact && !bounded && quads.len() > compacted {
        // The last chunk; duplicates across chunks are left to the pass's merge, which sorts everything anyway.
        compact_from(&mut quads, compacted, store, overlay);
    }
    // Terms the body computed (BIND results, new literals): carried out by value, interned after the pass.
    let mut locals: Vec<(TermId, oxrdf::Term)> = Vec::new();
    let mut listed: HashSet<TermId> = HashSet::new();
    for q in &quads {
        for &id in q {
            if st.terms.is_local(id) && listed.insert(id) {
                if let Some(t) = st.terms.to_oxrdf(id) {
                    locals.push((id, t));
                }
            }
        }
    }
    Ok(JobOut {
        rule: job.rule,
        quads,
        locals,
        rows,
        made,
        elapsed: started.elapsed(),
    })
}

/// A closure's pairs `(x, z)` as the facts `x R z` (default graph) of `rule`: sorted, and without those held
/// (asserted, or derived before) unless the budget kept them out already.
fn pair_facts(
    (rule, r): (usize, TermId),
    pairs: Vec<(TermId, TermId)>,
    store: &Store,
    overlay: &Overlay,
    limits: &Limits<'_>,
    started: Instant,
) -> JobOut {
    let g = TermId::DEFAULT_GRAPH;
    let mut quads: Vec<Quad> = sort_pairs(pairs, store.dict.end())
        .into_iter()
        .map(|(x, z)| [g, x, r, z])
        .collect();
    if limits.compact && limits.room == usize::MAX {
        // Sorted already: one merge against what is held.
        drop_known(&mut quads, |q| *q, store, overlay);
    }
    JobOut {
        rule,
        rows: quads.len() as u64,
        made: quads.len() as u64,
        quads,
        locals: Vec::new(),
        elapsed: started.elapsed(),
    }
}

/// What a group's classes report as their rules' closure.
const CLASSES: &str = "union-find classes in its group";

/// The square rule and its symmetric rule of a larger group, as classes kept across the group's passes.
struct GroupClasses {
    square: usize,
    symmetric: usize,
    classes: Classes,
    /// Whether the classes took the view's R facts (at the group's first pass, whatever seeds it).
    started: bool,
}

/// One pass of a group's classes: at the first, every R fact of the view; then the group's new ones (`facts`).
/// The pairs the classes gain, as the symmetric rule's facts and the square rule's: when credits are tracked
/// (`--provenance`), a pair whose reverse is held is the symmetric rule's (`b R a` from `a R b`, as iteration
/// credits it), else every pair is the square rule's.
fn run_classes(
    c: &mut GroupClasses,
    facts: Option<&[Triple]>,
    store: &Store,
    overlay: &Overlay,
    (limits, track): (&Limits<'_>, bool),
) -> Result<[JobOut; 2], ExecError> {
    let started = Instant::now();
    let view = View::with(&store.quads, overlay, limits.also);
    let (g, r) = (TermId::DEFAULT_GRAPH, c.classes.r);
    let bounded = limits.room != usize::MAX;
    let mut pairs: Vec<(TermId, TermId)> = Vec::new();
    let mut emit = |x, z| {
        if !(bounded && view.contains(g, [x, r, z])) {
            pairs.push((x, z));
        }
        pairs.len() <= limits.room
    };
    let cancel = limits.cancel;
    match facts {
        Some(facts) => c.classes.add(
            facts.iter().filter(|t| t[1] == r).map(|t| (t[0], t[2])),
            &store.dict,
            cancel,
            &mut emit,
        ),
        None => {
            c.started = true;
            let held = view.scan(g, &[None, Some(r), None]).map(|t| (t[0], t[2]));
            c.classes.add(held, &store.dict, cancel, &mut emit)
        }
    }?;
    limits.found.fetch_add(pairs.len(), Ordering::Relaxed);
    let (reversed, others): (Vec<_>, Vec<_>) = if track {
        pairs
            .into_iter()
            .partition(|&(x, z)| x != z && view.contains(g, [z, r, x]))
    } else {
        (Vec::new(), pairs)
    };
    Ok([
        pair_facts((c.symmetric, r), reversed, store, overlay, limits, started),
        pair_facts((c.square, r), others, store, overlay, limits, started),
    ])
}

/// A body's facts past which they are compacted ([`compact_from`]): below it, the pass's merge does the work.
const COMPACT_FROM: usize = 1 << 16;

/// A body's facts from `from` on (those before are compacted already) sorted, each once, without those held
/// already: the pass's merge does the same over all bodies; done per body as it goes, a body's output holds
/// mostly what may be new.
fn compact_from(quads: &mut Vec<Quad>, from: usize, store: &Store, overlay: &Overlay) {
    let tail = &mut quads[from..];
    tail.sort_unstable();
    let mut keep = vec![true; tail.len()];
    for i in 1..tail.len() {
        keep[i] = tail[i] != tail[i - 1];
    }
    mark_all_known(tail, |q| *q, store, overlay, &mut keep);
    let mut at = 0;
    quads.retain(|_| {
        let kept = at < from || keep[at - from];
        at += 1;
        kept
    });
}

/// Sorts distinct pairs of term ids below `end`. Many pairs over few terms: a stable counting sort by the first
/// term (a closure emits each second term's pairs together, in ascending order, so that mostly finishes the
/// job), then each run of equal first terms sorted if it is not already; otherwise a comparison sort.
fn sort_pairs(pairs: Vec<(TermId, TermId)>, end: TermId) -> Vec<(TermId, TermId)> {
    let n = pairs.len();
    if n < 1 << 14 || n < end.index() / 4 {
        let mut pairs = pairs;
        pairs.sort_unstable();
        return pairs;
    }
    let mut start = vec![0u32; end.index() + 1];
    for &(x, _) in &pairs {
        start[x.index() + 1] += 1;
    }
    for i in 1..start.len() {
        start[i] += start[i - 1];
    }
    let mut out = vec![(TermId(0), TermId(0)); n];
    let mut next = start.clone();
    for &(x, z) in &pairs {
        let at = &mut next[x.index()];
        out[*at as usize] = (x, z);
        *at += 1;
    }
    for w in start.windows(2) {
        let run = &mut out[w[0] as usize..w[1] as usize];
        if !run.is_sorted() {
            run.sort_unstable();
        }
    }
    out
}

/// Interns a body run's computed terms into the dictionary. A blank node the dictionary held when the run
/// started (numbered below `shared_blanks`, inside a computed triple term, say) stays that node; one the run
/// minted (`BNODE()`) gets a fresh node, one per label.
pub(crate) fn intern_locals(
    dict: &mut crate::store::Dictionary,
    locals: Vec<(TermId, oxrdf::Term)>,
    shared_blanks: u32,
) -> HashMap<TermId, TermId> {
    let mut fresh = crate::store::dictionary::blank_scope();
    let mut blank = |dict: &mut crate::store::Dictionary, label: &str| {
        // Every label here is a dictionary's own (`_:b{n}`, `dictionary::blank_node`).
        match label.strip_prefix('b').and_then(|n| n.parse::<u32>().ok()) {
            Some(n) if n < shared_blanks => {
                dict.lookup_blank(n).unwrap_or_else(|| fresh(dict, label))
            }
            _ => fresh(dict, label),
        }
    };
    let mut map = HashMap::new();
    for (local, term) in locals {
        map.insert(local, dict.intern_term(term.as_ref(), &mut blank));
    }
    map
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        // The fenced search is a faster way to the same marks: for probes dense or sparse, in any graph, the
        // facts cleared are exactly those the array holds.
        #[test]
        fn the_fenced_search_clears_exactly_the_facts_a_sorted_array_holds(
            held in proptest::collection::btree_set((0u32..40, 0u32..3, 0u32..40), 0..600),
            probes in proptest::collection::btree_set((0u32..40, 0u32..3, 0u32..40), 0..60),
        ) {
            let sorted: Vec<Triple> = held.iter().map(|&(s, p, o)| [TermId(s), TermId(p), TermId(o)]).collect();
            let fence = crate::store::quads::fence(&sorted, |k| *k);
            let facts: Vec<Quad> = probes
                .iter()
                .map(|&(s, p, o)| [TermId::DEFAULT_GRAPH, TermId(s), TermId(p), TermId(o)])
                .collect();
            let mut fenced = vec![true; facts.len()];
            mark_known_fenced(&facts, |q| *q, &sorted, &fence, &mut fenced);
            let mut merged = vec![true; facts.len()];
            mark_known(&facts, |q| *q, &sorted, &mut merged);
            let expected: Vec<bool> = facts
                .iter()
                .map(|q| sorted.binary_search(&[q[1], q[2], q[3]]).is_err())
                .collect();
            prop_assert_eq!(&fenced, &expected);
            prop_assert_eq!(&merged, &expected);
        }
    }
}
