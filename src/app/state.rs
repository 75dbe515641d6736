//! This module defines how commands use a saved state (`--state DIR`): answer from it without the data or the
//! rules, check the inputs given against it, or run them and replace it.

use std::path::Path;
use std::time::{Duration, Instant};

use super::{
    ChangeSet, Failure, Reasoned, ReasoningSettings, Run, load_to_reason, ran, reason, run_failure,
    run_options,
};
use crate::control::{self, Phase};
use crate::datalog::maintain::{self, Maintenance};
use crate::datalog::{self, Schedule};
use crate::exec::datetime::DateTime;
use crate::output::progress::Progress;
use crate::rules::source::RuleText;
use crate::rules::{self, Origin, RuleSources};
use crate::state::format::Delta;
use crate::state::format::Orders;
use crate::state::{self, Change, Files, Input, LinesAhead, Manifest, ResultOptions, StateError};
use crate::store::load::dump::{self, Compared, LineTable};
use crate::store::load::{self, DataFormat, DataSource, LoadOptions, Loader};
use crate::store::overlay::sorted_quads;
use crate::store::{Dictionary, Quad, QuadStore, Store, TermId, well_known};

/// Where a command's facts came from.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// The data and rules were loaded and run.
    Ran,
    /// A saved state, as it was.
    State,
}

/// The result-changing options of a run, as a manifest records them.
/// Why `--provenance` derives a state again: the rule credited with a fact is the one that first derived it in a
/// run from scratch, which a state does not keep.
const PROVENANCE: &str =
    "--provenance credits each fact to the rule that first derived it in a run from scratch";

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

/// The data files a state is made from (standard input is refused earlier), hashed.
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
        .filter(|t| matches!(t.origin, Origin::File { .. } | Origin::Translated { .. }))
        .cloned()
        .collect()
}

/// The rule texts of the `--rules` files, to compare with a state's; a file that cannot be read is an error
/// (`reasonctl::rules::unreadable`), not a difference.
fn given_rules(sources: &RuleSources) -> Result<Vec<RuleText>, Failure> {
    let (texts, errors) = rules::collect(sources, &Store::default());
    match errors.into_iter().find(rules::RuleError::is_input) {
        Some(e) => Err(super::rule_failure(vec![
            crate::lint::Builder::new(&texts).error(e),
        ])),
        None => Ok(file_rules(&texts)),
    }
}

/// What differs between a state's manifest and the inputs given (empty: the state holds their result).
fn differences(
    manifest: &Manifest,
    sources: &[DataSource],
    rule_sources: &RuleSources,
    given: &ResultOptions,
) -> Result<Vec<String>, Failure> {
    let mut out = Vec::new();
    if !sources.is_empty() && !manifest.changes.is_empty() {
        out.push(format!(
            "{} change set(s) were applied to the state (--add / --remove) since it was made from its data files",
            manifest.changes.len()
        ));
    }
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
                if a.hash != b.hash {
                    out.push(format!(
                        "{} differs from the {} the state was made from",
                        a.path, b.path
                    ));
                }
            }
        }
    }
    if !rule_sources.paths.is_empty()
        && state::program_hash(&given_rules(rule_sources)?) != manifest.program_sha256
    {
        out.push("the rules differ from the state's".to_owned());
    }
    out.extend(conflicts(&manifest.options, given));
    Ok(out)
}

/// The store, derived facts and program of a state; its reasoning time; its manifest; the files it was opened
/// from.
fn from_state(dir: &Path, orders: Orders, progress: &Progress) -> Result<Opened, Failure> {
    control::enter(Phase::Open);
    progress.message(&format!("opening the state {}", dir.display()));
    let (manifest, snapshot, files) = state::open(dir, orders).map_err(failure)?;
    let mut store = snapshot.store;
    // Data read with --lenient may hold IRIs the writers must escape (the strict parsers refuse them).
    if manifest.options.lenient {
        store.dict.note_raw_iris();
    }
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
        files,
    ))
}

/// A state's store and program, as it was saved.
pub(super) fn opened(dir: &Path, progress: &Progress) -> Result<(Store, Reasoned), Failure> {
    from_state(dir, Orders::Lookups, progress).map(|(store, reasoned, ..)| (store, reasoned))
}

/// The facts a command answers from. Without `--state`: the data loaded and the rules run. With it: the state,
/// when no data and no rules are given, or when those given are the state's; else, with `refresh`, the data
/// run under the rules and options given and the state's where none are given (as `materialize --state` runs
/// them; the caller saves the state after, with the settings returned), and without it a mismatch error.
/// `orders`: which of the state's POS and OSP orders are built as it opens (the rest on first use).
pub(super) fn obtain(
    sources: &[DataSource],
    load: &LoadOptions,
    reasoning: &ReasoningSettings,
    run: Run,
    (refresh, orders): (bool, Orders),
    progress: &Progress,
) -> Result<Obtained, Failure> {
    let ran = |load: LoadOptions, reasoning: ReasoningSettings, progress: &Progress| {
        let mut store = load_to_reason(sources, &load, (&reasoning, run.deadline), progress)?;
        let reasoned = reason(&mut store, &reasoning, run, true, progress)?;
        Ok(Obtained {
            store,
            reasoned,
            source: Source::Ran,
            now: reasoning.now,
            used: (load, reasoning),
        })
    };
    let Some(dir) = &reasoning.state else {
        return ran(load.clone(), reasoning.clone(), progress);
    };
    let given = options(load, reasoning);
    let answered = |(store, reasoned, now, ..): Opened| Obtained {
        store,
        reasoned,
        source: Source::State,
        now,
        used: (load.clone(), reasoning.clone()),
    };
    if sources.is_empty() && reasoning.sources.paths.is_empty() {
        let opened = from_state(dir, orders, progress)?;
        let differs = conflicts(&opened.3.options, &given);
        if !differs.is_empty() {
            let (dir, differs) = (dir.display().to_string(), differs.join("; "));
            return Err(failure(if refresh {
                StateError::RefreshWithoutData { dir, differs }
            } else {
                StateError::Mismatch { dir, differs }
            }));
        }
        return Ok(answered(opened));
    }
    let manifest = match state::open_manifest(dir) {
        Ok(manifest) => Some(manifest),
        // No state yet: it is made.
        Err(StateError::Missing { .. }) if refresh => None,
        Err(e) => return Err(failure(e)),
    };
    let differs = match &manifest {
        Some(m) => differences(m, sources, &reasoning.sources, &given)?,
        None => vec!["there is no state yet".to_owned()],
    };
    if differs.is_empty() {
        return Ok(answered(from_state(dir, orders, progress)?));
    }
    if !refresh {
        return Err(failure(StateError::Mismatch {
            dir: dir.display().to_string(),
            differs: differs.join("; "),
        }));
    }
    if sources.is_empty() {
        // Derived again from no data, the state would lose its facts.
        return Err(failure(StateError::RefreshWithoutData {
            dir: dir.display().to_string(),
            differs: differs.join("; "),
        }));
    }
    let Some(manifest) = manifest else {
        return ran(load.clone(), reasoning.clone(), progress);
    };
    // The state's rules when no --rules is given (they are in its snapshot), and its options where none is given.
    let texts = if reasoning.sources.paths.is_empty() {
        from_state(dir, Orders::Lookups, progress)?.1.texts
    } else {
        Vec::new()
    };
    let (load, reasoning) = effective(load, reasoning, &manifest, &texts);
    ran(load, reasoning, progress)
}

/// A state as [`from_state`] opens it.
type Opened = (Store, Reasoned, Option<DateTime>, Manifest, Files);

/// What [`obtain`] gives a command.
pub(super) struct Obtained {
    pub(super) store: Store,
    pub(super) reasoned: Reasoned,
    pub(super) source: Source,
    /// The reasoning time the facts were derived at.
    pub(super) now: Option<DateTime>,
    /// The load options and reasoning settings the facts were derived with (the state's own where a refreshed
    /// run took them from it), for saving the state.
    pub(super) used: (LoadOptions, ReasoningSettings),
}

/// What a state is made of, as its manifest records it: its data files, the change sets applied since, the
/// result-changing options.
pub(super) struct Record {
    inputs: Vec<Input>,
    changes: Vec<Change>,
    options: ResultOptions,
    /// The data files' line tables, for the next dump to be compared with, written ahead beside the state
    /// (none after a change set: the data is then no longer what the files say).
    lines: Option<LinesAhead>,
}

impl Record {
    /// The data files given (no change since), read with these options.
    pub(super) fn files(
        sources: &[DataSource],
        load: &LoadOptions,
        reasoning: &ReasoningSettings,
    ) -> Result<Self, Failure> {
        Ok(Self {
            inputs: inputs(sources)?,
            changes: Vec::new(),
            options: options(load, reasoning),
            lines: None,
        })
    }
}

/// Writes the state of a run (not of a capped one: it is not a fixpoint, and maintenance would build on it).
pub(super) fn save(
    dir: &Path,
    record: Record,
    store: &Store,
    reasoned: &Reasoned,
    delta: Option<(&Delta, &Files)>,
    progress: &Progress,
) -> Result<bool, Failure> {
    if reasoned.report.as_ref().is_some_and(|r| r.capped.is_some()) {
        return Ok(false);
    }
    control::enter(Phase::Save);
    progress.message(&format!("saving the state {}", dir.display()));
    let manifest = Manifest {
        reasonctl: env!("CARGO_PKG_VERSION").to_owned(),
        inputs: record.inputs,
        changes: record.changes,
        rules: reasoned.texts.iter().map(|t| t.id.clone()).collect(),
        program_sha256: state::program_hash(&file_rules(&reasoned.texts)),
        options: record.options,
        terms: store.dict.len() as u64,
        asserted: store.quads.len() as u64,
        derived: reasoned.overlay.len() as u64,
        lines: None,
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
    state::save(
        dir,
        &manifest,
        store,
        &reasoned.overlay,
        &program,
        delta,
        record.lines,
    )
    .map_err(failure)?;
    progress.clear();
    Ok(true)
}

/// How `materialize --state` brought the facts up to date.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// The state already held them.
    Unchanged,
    /// Derived from scratch, for this reason.
    Full(String),
    /// Maintained.
    Incremental(Maintenance),
}

impl Mode {
    /// The name `--stats` gives it.
    pub(super) fn name(&self) -> &'static str {
        match self {
            Mode::Unchanged => "unchanged",
            Mode::Full(_) => "full",
            Mode::Incremental(_) => "incremental",
        }
    }
}

/// The facts `materialize --state` writes, and how it got them.
pub(super) struct Updated {
    pub(super) store: Store,
    pub(super) reasoned: Reasoned,
    /// `Ran`: the state is saved after the output.
    pub(super) source: Source,
    pub(super) mode: Mode,
    /// The derived facts the state held before (ids of `store`'s dictionary), as much as `--diff`, the
    /// statistics and the delta need: the change, when maintenance knows it, else all of them (none when
    /// there was no state).
    pub(super) was: maintain::Was,
    /// The asserted facts removed and added, sorted, when the state's data changed.
    pub(super) asserted: Changes,
    /// When the state's program and options still hold: the files it was opened from and its dictionary's
    /// counts then, for saving what changed as a delta.
    pub(super) base: Option<(Files, (usize, usize))>,
    /// What the state's manifest records (for the save).
    pub(super) record: Record,
    /// Time per phase.
    pub(super) times: Vec<(&'static str, Duration)>,
    /// When the data files were compared line by line with the state's: the lines new, and gone.
    pub(super) lines_compared: Option<(usize, usize)>,
}

/// The data loaded by `loader` (into its dictionary), with each file's line table, for the next dump to be
/// compared with.
fn load_lines(
    mut loader: Loader,
    sources: &[DataSource],
    options: &LoadOptions,
    progress: &Progress,
) -> Result<(Store, Vec<Option<LineTable>>), Failure> {
    loader.keep_lines();
    for source in sources {
        loader.load_source(source, options, progress)?;
    }
    let lines = loader.take_line_tables();
    Ok((loader.finish(), lines))
}

/// The data files given, compared line by line ([`dump`]) with the line tables of the state's data files;
/// those whose hash is the state's are not read (a file of another syntax has a table of its facts: read whole
/// when changed, not read when not). `None` when the data must be read whole: the state has no line
/// tables (or change sets were applied to it since), the files are not as many, or one has no table or cannot
/// be compared so.
fn compare(
    loader: &mut Loader,
    (dir, manifest, terms): (&Path, &Manifest, TermId),
    sources: &[DataSource],
    given: &[Input],
    load: &LoadOptions,
    progress: &Progress,
) -> Result<Option<Vec<Compared>>, Failure> {
    if !manifest.changes.is_empty()
        || sources.len() != manifest.inputs.len()
        || given.len() != sources.len()
    {
        return Ok(None);
    }
    let Some(tables) = state::open_lines(dir, manifest, terms) else {
        return Ok(None);
    };
    if tables.len() != sources.len() {
        return Ok(None);
    }
    // A table is reused only for a file read as it was: another --base, --data-format or --lenient reads it
    // otherwise.
    let (then, now) = (
        &manifest.options,
        options(load, &ReasoningSettings::default()),
    );
    let read_alike =
        then.base == now.base && then.lenient == now.lenient && then.data_format == now.data_format;
    if !read_alike {
        return Ok(None);
    }
    let mut compared = Vec::with_capacity(tables.len());
    let files = sources
        .iter()
        .zip(tables)
        .zip(given.iter().zip(&manifest.inputs));
    for ((source, table), (now, then)) in files {
        let (DataSource::File(path), Some(table)) = (source, table) else {
            return Ok(None);
        };
        let lines = matches!(
            load.format.or_else(|| DataFormat::from_path(path)),
            Some(DataFormat::NTriples | DataFormat::NQuads)
        );
        // Another syntax's table lists the file's facts, whose relative IRIs resolved against where it was: it
        // stands for the file only at the same place, unchanged; a changed file is read whole.
        let same_place = now.absolute.is_some() && now.absolute == then.absolute;
        if now.hash == then.hash && (lines || same_place) {
            compared.push(Compared::unchanged(table));
            continue;
        }
        if !lines {
            return Ok(None);
        }
        match loader.compare_lines(path, load, table, progress)? {
            Some(c) => compared.push(c),
            None => return Ok(None),
        }
    }
    Ok(Some(compared))
}

/// The load options and reasoning settings a state's data is read and run with: those given, and the state's
/// where none is given; the state's rule files when no `--rules` is given.
fn effective(
    load: &LoadOptions,
    reasoning: &ReasoningSettings,
    manifest: &Manifest,
    texts: &[RuleText],
) -> (LoadOptions, ReasoningSettings) {
    let state = &manifest.options;
    let load = LoadOptions {
        base: load.base.clone().or(state.base.clone()),
        lenient: load.lenient || state.lenient,
        format: load.format.or_else(|| {
            state
                .data_format
                .as_deref()
                .and_then(|f| <DataFormat as clap::ValueEnum>::from_str(f, true).ok())
        }),
    };
    let mut reasoning = reasoning.clone();
    reasoning.owl2rl |= state.owl2rl;
    if reasoning.now.is_none() {
        reasoning.now = state
            .reasoning_time
            .as_deref()
            .and_then(|t| DateTime::parse(t, well_known::XSD_DATE_TIME));
    }
    if reasoning.sources.graph.is_none() {
        reasoning.sources.graph = state.rules_graph.clone();
    }
    if reasoning.schedule == Schedule::Staged {
        reasoning.schedule = match state.schedule.as_str() {
            "whole-program" => Schedule::WholeProgram,
            "naive-stages" => Schedule::NaiveStages,
            _ => Schedule::Staged,
        };
    }
    if reasoning.sources.paths.is_empty() {
        reasoning.sources.texts = file_rules(texts);
    }
    (load, reasoning)
}

/// Asserted facts removed and added, each sorted.
pub(super) type Changes = (Vec<Quad>, Vec<Quad>);

/// A change set's files, read apart from the state (while it opens): the store the `--remove` files make and the
/// one the `--add` files make, each over a dictionary of its own; each file's record for the manifest.
type ReadChange = (Store, Store, Vec<Change>);

/// Reads a change set's files: the `--remove` files, and the `--add` files, each into a dictionary of its own,
/// and hashes each for its record.
fn read_change(
    change: &ChangeSet,
    load: &LoadOptions,
    progress: &Progress,
) -> Result<ReadChange, Failure> {
    let files = |paths: &[std::path::PathBuf]| -> Vec<DataSource> {
        paths.iter().cloned().map(DataSource::File).collect()
    };
    let removed = load::load_into(Dictionary::new(), &files(&change.remove), load, progress)?;
    let added = load::load_into(Dictionary::new(), &files(&change.add), load, progress)?;
    let mut records = Vec::new();
    for (paths, added) in [(&change.remove, false), (&change.add, true)] {
        for input in inputs(&files(paths))? {
            records.push(Change { added, input });
        }
    }
    Ok((removed, added, records))
}

/// The state's asserted facts with a change set applied: the facts of the `--remove` files taken out (those the
/// state's dictionary can name: a term it lacks, or a blank node of the file, is in no fact it holds), then those
/// of the `--add` files put in, their terms numbered in the state's dictionary. The new store keeps the state's
/// prefixes; the old asserted facts and the change (removed, added; sorted) come with it.
fn apply(
    store: Store,
    (removed, added): (Store, Store),
    names: &[String],
) -> Result<(Store, QuadStore, Changes), Failure> {
    let Store {
        mut dict,
        quads: old,
        prefixes,
        ..
    } = store;
    let held = dict.ids_of(&removed.dict);
    let mut minus: Vec<Quad> = (removed.quads.quads())
        .filter_map(|q| {
            let [g, s, p, o] = q.map(|t| held[t.index()]);
            Some([g?, s?, p?, o?])
        })
        .collect();
    minus.sort_unstable();
    let ids = load::import(&mut dict, &added.dict, &names.join(", "))?;
    let mut plus: Vec<Quad> = (added.quads.quads())
        .map(|q| q.map(|t| ids[t.index()]))
        .collect();
    plus.sort_unstable();
    // Removed, then added: a fact in both files stays; facts not held are not removed, held ones not added.
    let gone: Vec<Quad> = (minus.into_iter())
        .filter(|q| old.contains(*q) && plus.binary_search(q).is_err())
        .collect();
    let new: Vec<Quad> = plus.into_iter().filter(|q| !old.contains(*q)).collect();
    let quads = old
        .patched(&gone, &new)
        .expect("removals held and additions new, by construction");
    let mut prefixes = prefixes;
    load::add_prefixes(&mut prefixes, added.prefixes);
    Ok((
        Store {
            dict,
            quads,
            prefixes,
            graphs_elsewhere: Vec::new(),
        },
        old,
        (gone, new),
    ))
}

/// Why an `--owl2rl` state is derived again rather than maintained, if it is. The OWL 2 RL closure alone is
/// maintained like any program; its rules are generated for the list lengths the data holds, so a change that
/// adds a length (or drops the last list of one) changes the program. Rules given beside `--owl2rl` run after
/// the closure, over it, and the state does not keep which facts are the closure's: derived again.
fn owl2rl_full(program: &datalog::Program, store: &Store) -> Option<&'static str> {
    if program
        .rules
        .iter()
        .any(|r| !r.id.starts_with(datalog::owl2rl::ID_PREFIX))
    {
        return Some(
            "--owl2rl with rules: the rules run over the OWL 2 RL closure, which is maintained only on its own",
        );
    }
    let now = datalog::owl2rl::rule_texts(store);
    let same = now.len() == program.rules.len()
        && now
            .iter()
            .zip(&program.rules)
            .all(|(t, r)| t.id == r.id && t.text == r.text);
    (!same).then_some(
        "--owl2rl: the data's OWL lists changed length, so the generated list rules (cls-int1/n, prp-spo2/n, prp-key/n) differ",
    )
}

/// What [`load_changed`] gives: the asserted facts after the change, numbered by the state's dictionary; the
/// state's asserted facts; the facts removed and added; the record of the inputs; the lines compared (new,
/// gone), when only the changed lines of a dump were read.
type Loaded = (Store, QuadStore, Changes, Record, Option<(usize, usize)>);

/// The asserted facts after the change: a new dump compared with the state's, or a change set applied to them.
fn load_changed(
    old_store: Store,
    (dir, manifest): (&Path, &Manifest),
    (sources, change, given_inputs): (&[DataSource], &ChangeSet, Vec<Input>),
    read: Option<ReadChange>,
    (load, settings): (&LoadOptions, &ReasoningSettings),
    progress: &Progress,
) -> Result<Loaded, Failure> {
    let mut lines_compared = None;
    let (store, old_asserted, asserted, record) = if let Some(read) = read {
        let names: Vec<String> = (change.add.iter())
            .map(|p| p.display().to_string())
            .collect();
        let (removed, added, records) = read;
        let (store, old_asserted, asserted) = apply(old_store, (removed, added), &names)?;
        let mut changes = manifest.changes.clone();
        changes.extend(records);
        let record = Record {
            inputs: manifest.inputs.clone(),
            changes,
            options: options(load, settings),
            lines: None,
        };
        (store, old_asserted, asserted, record)
    } else {
        let Store {
            dict,
            quads: old_asserted,
            prefixes,
            ..
        } = old_store;
        let terms = dict.end();

        let mut loader = Loader::with_dictionary(dict);
        loader.keep_lines();
        let compared = compare(
            &mut loader,
            (dir, manifest, terms),
            sources,
            &given_inputs,
            load,
            progress,
        )?;
        let (store, lines, asserted) = match compared {
            // Only the lines that changed were read: the asserted facts are the state's, patched.
            Some(compared) => {
                lines_compared = Some((
                    compared.iter().map(|c| c.new.len()).sum(),
                    compared.iter().map(|c| c.gone.len()).sum(),
                ));
                let (removed, added) = dump::changes(&compared, &old_asserted);
                let quads = old_asserted
                    .patched(&removed, &added)
                    .expect("removals held and additions new, by construction");
                let Store { dict, .. } = loader.finish();
                let store = Store {
                    dict,
                    quads,
                    prefixes,
                    graphs_elsewhere: Vec::new(),
                };
                let lines = compared.into_iter().map(|c| Some(c.table)).collect();
                (store, lines, (removed, added))
            }
            None => {
                let (store, lines) = load_lines(loader, sources, load, progress)?;
                let asserted = maintain::asserted_changes(&old_asserted, &store.quads);
                (store, lines, asserted)
            }
        };
        let record = Record {
            inputs: given_inputs,
            changes: Vec::new(),
            options: options(load, settings),
            lines: LinesAhead::write(dir, &lines).map_err(failure)?,
        };
        (store, old_asserted, asserted, record)
    };
    Ok((store, old_asserted, asserted, record, lines_compared))
}

/// `materialize --state`: the facts for the data given (or the state's data with a change set applied), from
/// the state as it is when nothing changed, maintained from it when only the data changed, derived from scratch
/// otherwise (no state yet; other rules or options), with the reason.
pub(super) fn update(
    sources: &[DataSource],
    load_options: &LoadOptions,
    reasoning: &ReasoningSettings,
    change: &ChangeSet,
    run: Run,
    progress: &Progress,
) -> Result<Updated, Failure> {
    let dir = reasoning.state.as_deref().expect("materialize --state");
    let mut times: Vec<(&'static str, Duration)> = Vec::new();
    let mut clock = Instant::now();
    let mut lap = |name: &'static str, times: &mut Vec<(&'static str, Duration)>| {
        times.push((name, clock.elapsed()));
        clock = Instant::now();
    };
    let given = options(load_options, reasoning);
    let manifest = match state::open_manifest(dir) {
        Ok(m) => m,
        // No state yet: the data and rules run.
        Err(StateError::Missing { .. }) if change.is_empty() => {
            // A folder that is not a state is refused now, not after the run wrote its output.
            state::replaceable(dir).map_err(failure)?;
            control::enter(Phase::Load);
            let (mut store, lines) = load_lines(Loader::new(), sources, load_options, progress)?;
            let mut record = Record::files(sources, load_options, reasoning)?;
            record.lines = LinesAhead::write(dir, &lines).map_err(failure)?;
            drop(lines);
            lap("load", &mut times);
            let reasoned = reason(&mut store, reasoning, run, false, progress)?;
            lap("reason", &mut times);
            return Ok(Updated {
                store,
                reasoned,
                source: Source::Ran,
                mode: Mode::Full("there was no state yet".to_owned()),
                was: maintain::Was::Listed(Vec::new()),
                asserted: (Vec::new(), Vec::new()),
                base: None,
                record,
                times,
                lines_compared: None,
            });
        }
        Err(e) => return Err(failure(e)),
    };
    // What differs besides the data: other options, other rule files.
    let mut differs = conflicts(&manifest.options, &given);
    if !reasoning.sources.paths.is_empty()
        && state::program_hash(&given_rules(&reasoning.sources)?) != manifest.program_sha256
    {
        differs.push("the rules differ from the state's".to_owned());
    }
    if !change.is_empty() && !differs.is_empty() {
        return Err(failure(StateError::ChangeMismatch {
            dir: dir.display().to_string(),
            differs: differs.join("; "),
        }));
    }
    // While the state is opened: the data files hashed (a dump's hash is a sequential pass over it), or the change
    // set read (its terms are numbered in the state's dictionary after). The change set's progress shows. It is
    // read on a thread of its own, not a rayon worker: a compressed file's reader waits for parsing that it hands
    // to the pool, which a worker blocked in that wait could never run with `--threads 1`.
    let change_load = LoadOptions {
        format: load_options.format,
        ..effective(load_options, reasoning, &manifest, &[]).0
    };
    let hidden = Progress::new(true);
    // The state's opening shows, then the change set's load bar, then the opening again if it is not done.
    let opening = format!("opening the state {}", dir.display());
    // The state's asserted orders are built while it opens (beside its dictionary) when the run will read them:
    // when facts are removed (the old facts' consequences are found over them), or may be (a new dump). A change
    // set that only adds facts builds the new index's orders from its triples, and never needs the old ones.
    let orders = if !change.remove.is_empty() || change.is_empty() {
        Orders::All
    } else {
        Orders::Derived
    };
    let (opened, given_inputs, read) = std::thread::scope(|scope| {
        let reading = (!change.is_empty()).then(|| {
            progress.message(&opening);
            scope.spawn(|| {
                let read = read_change(change, &change_load, progress);
                progress.message(&opening);
                read
            })
        });
        let (opened, given_inputs) = rayon::join(
            || {
                from_state(
                    dir,
                    orders,
                    if change.is_empty() { progress } else { &hidden },
                )
            },
            || inputs(sources),
        );
        let read = reading
            .map(|r| {
                r.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .transpose();
        if !change.is_empty() {
            progress.clear();
        }
        (opened, given_inputs, read)
    });
    let given_inputs = given_inputs?;
    let same_data = change.is_empty()
        && manifest.changes.is_empty()
        && given_inputs
            .iter()
            .map(|i| &i.hash)
            .eq(manifest.inputs.iter().map(|i| &i.hash));
    if sources.is_empty() && change.is_empty() || same_data && differs.is_empty() {
        // Nothing to bring up to date: the state answers (its options must not conflict with those given).
        if !differs.is_empty() {
            return Err(failure(StateError::Mismatch {
                dir: dir.display().to_string(),
                differs: differs.join("; "),
            }));
        }
        let (mut store, mut reasoned, ..) = opened?;
        lap("open", &mut times);
        let mut mode = Mode::Unchanged;
        let mut before = Vec::new();
        if reasoning.track {
            before = sorted_quads(&[&reasoned.overlay], None);
            // The credits are not saved: the state's program runs again over its data (the state stays).
            let (_, settings) = effective(load_options, reasoning, &manifest, &reasoned.texts);
            reasoned = reason(&mut store, &settings, run, false, progress)?;
            lap("reason", &mut times);
            mode = Mode::Full(PROVENANCE.to_owned());
        }
        return Ok(Updated {
            store,
            reasoned,
            source: Source::State,
            mode,
            was: maintain::Was::Listed(before),
            asserted: (Vec::new(), Vec::new()),
            base: None,
            record: Record {
                inputs: manifest.inputs.clone(),
                changes: manifest.changes.clone(),
                options: manifest.options.clone(),
                lines: None,
            },
            times,
            lines_compared: None,
        });
    }
    let (old_store, old, _, _, files) = opened?;
    let read = read?;
    lap("open", &mut times);
    let counts = old_store.dict.counts();
    let (load, settings) = effective(load_options, reasoning, &manifest, &old.texts);
    // The new data, numbered by the state's dictionary so that its facts compare with the state's by id.
    control::enter(Phase::Load);
    let (mut store, old_asserted, asserted, record, lines_compared) = load_changed(
        old_store,
        (dir, &manifest),
        (sources, change, given_inputs),
        read,
        (&load, &settings),
        progress,
    )?;
    lap("load", &mut times);
    // The data's stored rules are part of the program: a change to them is a change of program.
    let stored = |texts: &[RuleText]| -> Vec<RuleText> {
        texts
            .iter()
            .filter(|t| !matches!(t.origin, Origin::File { .. } | Origin::Translated { .. }))
            .cloned()
            .collect()
    };
    let (now_texts, _) = rules::collect(
        &RuleSources {
            graph: settings.sources.graph.clone(),
            ..RuleSources::default()
        },
        &store,
    );
    if state::program_hash(&stored(&now_texts)) != state::program_hash(&stored(&old.texts)) {
        differs.push("the data's stored rules (f:rule) changed".to_owned());
    }
    // A delta holds no rules: it is written only under the state's own program and options.
    let base = differs.is_empty().then_some((files, counts));
    let full = if !differs.is_empty() {
        Some(differs.join("; "))
    } else if settings.track {
        Some(PROVENANCE.to_owned())
    } else if settings.owl2rl {
        owl2rl_full(&old.program, &store).map(str::to_owned)
    } else {
        None
    };
    if let Some(why) = full {
        let before = sorted_quads(&[&old.overlay], None);
        drop((old_asserted, old));
        let reasoned = reason(&mut store, &settings, run, false, progress)?;
        lap("reason", &mut times);
        return Ok(Updated {
            store,
            reasoned,
            source: Source::Ran,
            mode: Mode::Full(why),
            was: maintain::Was::Listed(before),
            asserted,
            base,
            record,
            times,
            lines_compared,
        });
    }
    control::enter(Phase::Reason);
    progress.message(&format!(
        "maintaining the derived facts: {} asserted facts removed, {} added",
        asserted.0.len(),
        asserted.1.len()
    ));
    let options = run_options(&settings, run, &store);
    let Reasoned {
        program,
        overlay,
        texts,
        ..
    } = old;
    // The checks against the data that a run from scratch makes: the changed data may lack a head's graph.
    let absent = crate::datalog::graphs::check(&program.rules, &store);
    if !absent.is_empty() {
        let mut builder = crate::lint::Builder::new(&texts);
        return Err(super::rule_failure(
            absent.into_iter().map(|e| builder.error(e)).collect(),
        ));
    }
    let (overlay, report, how, was) = maintain::update(
        &program,
        &mut store,
        old_asserted,
        overlay,
        asserted.clone(),
        &options,
        progress,
    )
    .map_err(|e| run_failure(&settings, e))?;
    let mut report = report;
    if settings.owl2rl {
        // As after a closure from scratch: rows with a literal subject are expected, and the closure is checked.
        report.warnings.clear();
        let left = options
            .budget
            .timeout
            .map(|t| t.saturating_sub(report.elapsed));
        datalog::owl2rl::check_closure(&mut store, &overlay, &report, options.now, left)
            .map_err(|e| run_failure(&settings, datalog::RunError::Owl2Rl(e)))?;
        super::warn_unread_lists(&datalog::owl2rl::unread_lists(&store));
    }
    progress.clear();
    ran(&settings, &report, None)?;
    lap("reason", &mut times);
    let mode = match how {
        maintain::Mode::Full(why) => Mode::Full(why.to_owned()),
        maintain::Mode::Incremental(m) => Mode::Incremental(m),
    };
    Ok(Updated {
        store,
        reasoned: Reasoned {
            program,
            overlay,
            report: Some(report),
            texts,
        },
        source: Source::Ran,
        mode,
        was,
        asserted,
        base,
        record,
        times,
        lines_compared,
    })
}
