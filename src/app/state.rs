//! This module defines how commands use a saved state (`--state DIR`): answer from it without the data or the
//! rules, check the inputs given against it, or run them and replace it.

use std::path::Path;

use super::{Failure, Reasoned, ReasoningSettings, Run, load_data, reason};
use crate::control::{self, Phase};
use crate::datalog::{self, Schedule};
use crate::exec::datetime::DateTime;
use crate::output::progress::Progress;
use crate::rules::source::RuleText;
use crate::rules::{self, Origin, RuleSources};
use crate::state::{self, Input, Manifest, ResultOptions, StateError};
use crate::store::load::{DataSource, LoadOptions};
use crate::store::{Store, well_known};

/// Where a command's facts came from.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// The data and rules were loaded and run.
    Ran,
    /// A saved state, as it was.
    State,
}

/// The result-changing options of a run, as a manifest records them.
fn options(load: &LoadOptions, reasoning: &ReasoningSettings) -> ResultOptions {
    ResultOptions {
        owl2rl: reasoning.owl2rl,
        reasoning_time: reasoning.now.map(|t| t.to_string()),
        rules_graph: reasoning.sources.graph.clone(),
        base: load.base.clone(),
        lenient: load.lenient,
        data_format: load.format.map(|f| format!("{f:?}").to_ascii_lowercase()),
        schedule: schedule_name(reasoning.schedule).to_owned(),
    }
}

fn schedule_name(s: Schedule) -> &'static str {
    match s {
        Schedule::Staged => "staged",
        Schedule::WholeProgram => "whole-program",
        Schedule::NaiveStages => "naive-stages",
    }
}

/// The options given (non-default) that differ from the state's: a state answers with its own options.
fn conflicts(state: &ResultOptions, given: &ResultOptions) -> Vec<String> {
    let effective = ResultOptions {
        owl2rl: given.owl2rl || state.owl2rl,
        reasoning_time: given
            .reasoning_time
            .clone()
            .or(state.reasoning_time.clone()),
        rules_graph: given.rules_graph.clone().or(state.rules_graph.clone()),
        base: given.base.clone().or(state.base.clone()),
        lenient: given.lenient || state.lenient,
        data_format: given.data_format.clone().or(state.data_format.clone()),
        schedule: if given.schedule == "staged" {
            state.schedule.clone()
        } else {
            given.schedule.clone()
        },
    };
    state.differences(&effective)
}

fn failure(e: StateError) -> Failure {
    Failure::input(e)
}

/// The data files a state is made from (standard input is refused earlier).
fn inputs(sources: &[DataSource]) -> Result<Vec<Input>, Failure> {
    sources
        .iter()
        .filter_map(|s| match s {
            DataSource::File(p) => Some(p),
            DataSource::Stdin => None,
        })
        .map(|p| {
            Input::of(p).map_err(|e| {
                Failure::from(crate::store::load::LoadError::Unreadable {
                    path: p.clone(),
                    source: e,
                })
            })
        })
        .collect()
}

/// The user's rule texts from files (stored rules are part of the data, which the inputs' hashes cover).
fn file_rules(texts: &[RuleText]) -> Vec<RuleText> {
    texts
        .iter()
        .filter(|t| matches!(t.origin, Origin::File { .. }))
        .cloned()
        .collect()
}

/// What differs between a state's manifest and the inputs given (empty: the state holds their result).
fn differences(
    manifest: &Manifest,
    sources: &[DataSource],
    rule_sources: &RuleSources,
    given: &ResultOptions,
) -> Result<Vec<String>, Failure> {
    let mut out = Vec::new();
    if !sources.is_empty() {
        let now = inputs(sources)?;
        if now.len() != manifest.inputs.len() {
            out.push(format!(
                "{} data file(s) given, {} for the state",
                now.len(),
                manifest.inputs.len()
            ));
        } else {
            for (a, b) in now.iter().zip(&manifest.inputs) {
                if a.sha256 != b.sha256 {
                    out.push(format!(
                        "{} differs from the {} the state was made from",
                        a.path, b.path
                    ));
                }
            }
        }
    }
    if !rule_sources.paths.is_empty() {
        let (texts, _) = rules::collect(rule_sources, &Store::default());
        if state::program_hash(&file_rules(&texts)) != manifest.program_sha256 {
            out.push("the rules differ from the state's".to_owned());
        }
    }
    out.extend(conflicts(&manifest.options, given));
    Ok(out)
}

/// The store, derived facts and program of a state; its reasoning time; its manifest.
fn from_state(
    dir: &Path,
    progress: &Progress,
) -> Result<(Store, Reasoned, Option<DateTime>, Manifest), Failure> {
    control::enter(Phase::State);
    progress.message(&format!("opening the state {}", dir.display()));
    let (manifest, snapshot) = state::open(dir).map_err(failure)?;
    let mut store = snapshot.store;
    let (compiled, errors) = rules::compile_all(&snapshot.rules, &mut store.dict);
    if !errors.is_empty() {
        return Err(failure(StateError::Corrupt {
            dir: dir.display().to_string(),
            what: format!("its rules no longer compile ({})", errors[0]),
        }));
    }
    let now = manifest
        .options
        .reasoning_time
        .as_deref()
        .and_then(|t| DateTime::parse(t, well_known::XSD_DATE_TIME));
    let user: Vec<RuleText> = snapshot
        .rules
        .into_iter()
        .filter(|t| !t.id.starts_with(datalog::owl2rl::ID_PREFIX))
        .collect();
    progress.clear();
    Ok((
        store,
        Reasoned {
            program: datalog::Program::new(compiled),
            overlay: snapshot.overlay,
            report: None,
            texts: user,
        },
        now,
        manifest,
    ))
}

/// A state's store and program, as it was saved.
pub(super) fn opened(dir: &Path, progress: &Progress) -> Result<(Store, Reasoned), Failure> {
    from_state(dir, progress).map(|(store, reasoned, _, _)| (store, reasoned))
}

/// The facts a command answers from. Without `--state`: the data loaded and the rules run. With it: the state,
/// when no data and no rules are given, or when those given are the state's; else, with `refresh`, the data
/// and rules run (the caller saves the state after), and without it a mismatch error.
pub(super) fn obtain(
    sources: &[DataSource],
    load: &LoadOptions,
    reasoning: &ReasoningSettings,
    run: Run,
    refresh: bool,
    progress: &Progress,
) -> Result<(Store, Reasoned, Source, Option<DateTime>), Failure> {
    let ran = |progress: &Progress| -> Result<_, Failure> {
        let mut store = load_data(sources, load, progress)?;
        let reasoned = reason(&mut store, reasoning, run, progress)?;
        Ok((store, reasoned, Source::Ran, reasoning.now))
    };
    let Some(dir) = &reasoning.state else {
        return ran(progress);
    };
    let given = options(load, reasoning);
    if sources.is_empty() && reasoning.sources.paths.is_empty() {
        let (store, reasoned, now, manifest) = from_state(dir, progress)?;
        let differs = conflicts(&manifest.options, &given);
        if !differs.is_empty() {
            return Err(failure(StateError::Mismatch {
                dir: dir.display().to_string(),
                differs: differs.join("; "),
            }));
        }
        return Ok((store, reasoned, Source::State, now));
    }
    let differs = match state::open_manifest(dir) {
        Ok(manifest) => differences(&manifest, sources, &reasoning.sources, &given)?,
        // No state yet: it is made.
        Err(StateError::Missing { .. }) if refresh => vec!["there is no state yet".to_owned()],
        Err(e) => return Err(failure(e)),
    };
    if differs.is_empty() {
        let (store, reasoned, now, _) = from_state(dir, progress)?;
        return Ok((store, reasoned, Source::State, now));
    }
    if refresh {
        return ran(progress);
    }
    Err(failure(StateError::Mismatch {
        dir: dir.display().to_string(),
        differs: differs.join("; "),
    }))
}

/// Writes the state of a run (not of a capped one: it is not a fixpoint, and maintenance would build on it).
pub(super) fn save(
    dir: &Path,
    sources: &[DataSource],
    load: &LoadOptions,
    reasoning: &ReasoningSettings,
    store: &Store,
    reasoned: &Reasoned,
    progress: &Progress,
) -> Result<bool, Failure> {
    if reasoned.report.as_ref().is_some_and(|r| r.capped.is_some()) {
        return Ok(false);
    }
    control::enter(Phase::State);
    progress.message(&format!("saving the state {}", dir.display()));
    let manifest = Manifest {
        reasonctl: env!("CARGO_PKG_VERSION").to_owned(),
        inputs: inputs(sources)?,
        rules: reasoned.texts.iter().map(|t| t.id.clone()).collect(),
        program_sha256: state::program_hash(&file_rules(&reasoned.texts)),
        options: options(load, reasoning),
        terms: store.dict.len() as u64,
        asserted: store.quads.len() as u64,
        derived: reasoned.overlay.len() as u64,
    };
    let program: Vec<RuleText> = reasoned
        .program
        .rules
        .iter()
        .map(|r| RuleText {
            id: r.id.clone(),
            origin: r.origin.clone(),
            language: r.language,
            text: r.text.clone(),
        })
        .collect();
    state::save(dir, &manifest, store, &reasoned.overlay, &program).map_err(failure)?;
    progress.clear();
    Ok(true)
}
