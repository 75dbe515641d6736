//! This module defines the application layer: validated [`Settings`] in, one command run, an [`Outcome`] or a
//! [`Failure`] (a miette report with its exit code) out. It owns progress display; nothing below it prints.

mod provenance;
mod state;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use miette::{Diagnostic, Report};
use thiserror::Error;

use crate::control::{self, Phase, Stop};
use crate::datalog::maintain::Was;
use crate::datalog::{self, Budget, Report as RunReport, RunError, Schedule};
use crate::exec::datetime::DateTime;
use crate::exec::terms::Terms;
use crate::ir::display::Namer;
use crate::lint::report::{self, LintFormat};
use crate::lint::{self, Builder, Checks, Finding, Validation};
use crate::output::deps::{DepsFormat, Prefixes};
use crate::output::explain::ExplainFormat;
use crate::output::progress::Progress;
use crate::output::results::{self, AnswerFormat};
use crate::output::{self, C1, C1Escaped, OutputTarget, RdfOutputFormat, files, rdf};
use crate::query::{self, Answer, QueryError, RunOptions};
use crate::rules::{self, RuleError, RuleSources};
use crate::state::format::Orders;
use crate::store::load::{self, DataSource, LoadOptions};
use crate::store::overlay::sorted_quads;
use crate::store::{Overlay, Quad, Store, View};

/// Everything a run needs, validated once from the command line.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Worker threads (`None`: one per core).
    pub threads: Option<usize>,
    /// No progress display.
    pub quiet: bool,
    /// When the command started: `--timeout` counts from here.
    pub started: Instant,
    /// The command.
    pub command: CommandSettings,
}

/// The limits that bound the whole command.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// `--timeout`: the whole command, from its start.
    pub timeout: Option<Duration>,
    /// `--max-memory`, in bytes: the heap, in every phase.
    pub max_memory: Option<usize>,
}

impl Settings {
    /// The limits of the whole command.
    pub fn limits(&self) -> Limits {
        let budget = match &self.command {
            CommandSettings::Materialize(m) => Some(&m.reasoning.budget),
            CommandSettings::Query(q) => Some(&q.reasoning.budget),
            CommandSettings::Explain(e) => Some(&e.reasoning.budget),
            CommandSettings::Deps(_) | CommandSettings::Lint(_) => None,
        };
        Limits {
            timeout: budget.and_then(|b| b.timeout),
            max_memory: budget.and_then(|b| b.max_memory),
        }
    }

    /// The command's deadline (`None`: no `--timeout`, or one too large to matter).
    pub fn deadline(&self) -> Option<Instant> {
        self.limits()
            .timeout
            .and_then(|t| control::deadline(self.started, t))
    }
}

/// What is left of the time until `deadline` (`None`: no deadline).
fn remaining(deadline: Option<Instant>) -> Option<Duration> {
    deadline.map(|d| d.saturating_duration_since(Instant::now()))
}

/// One command's settings.
#[derive(Clone, Debug)]
pub enum CommandSettings {
    /// `reasonctl materialize`.
    Materialize(MaterializeSettings),
    /// `reasonctl query`.
    Query(QuerySettings),
    /// `reasonctl deps`.
    Deps(DepsSettings),
    /// `reasonctl lint`.
    Lint(LintSettings),
    /// `reasonctl explain`.
    Explain(ExplainSettings),
}

/// Settings of `reasonctl explain`.
#[derive(Clone, Debug)]
pub struct ExplainSettings {
    /// Rules and limits (the materialization is `materialize`'s).
    pub reasoning: ReasoningSettings,
    /// The data sources, in order.
    pub sources: Vec<DataSource>,
    /// How they are read.
    pub load: LoadOptions,
    /// The `--fact` text.
    pub fact: String,
    /// Levels of derived premises explained (at least 1).
    pub depth: usize,
    /// Output syntax.
    pub format: ExplainFormat,
    /// The explanation's own deadline, from its start.
    pub timeout: Option<std::time::Duration>,
}

/// Settings of `reasonctl lint`.
#[derive(Clone, Debug)]
pub struct LintSettings {
    /// The rule files and folders.
    pub rules: RuleSources,
    /// Data files (stored rules; head graphs and body terms are checked against them).
    pub sources: Vec<DataSource>,
    /// How they are read.
    pub load: LoadOptions,
    /// Human, JSON or SARIF.
    pub format: LintFormat,
    /// Warnings count as errors.
    pub deny_warnings: bool,
    /// A file to write to instead of stdout.
    pub output: Option<std::path::PathBuf>,
    /// `--engine dataflow`: report what that engine does not run.
    pub dataflow: bool,
}

/// Settings of `reasonctl deps`.
#[derive(Clone, Debug)]
pub struct DepsSettings {
    /// Where rules come from.
    pub rules: RuleSources,
    /// Data carrying stored rules (may be none).
    pub sources: Vec<DataSource>,
    /// How it is read.
    pub load: LoadOptions,
    /// Text, JSON or dot.
    pub format: DepsFormat,
    /// A file to write to instead of stdout.
    pub output: Option<std::path::PathBuf>,
    /// Show a saved state's program instead.
    pub state: Option<std::path::PathBuf>,
}

/// The text of a query and where it came from.
#[derive(Clone, Debug)]
pub struct QueryInput {
    /// The SPARQL text.
    pub text: String,
    /// A file name or `<query>`, for diagnostics.
    pub name: String,
    /// The base IRI its relative IRIs resolve against.
    pub base: Option<String>,
}

/// Settings of `reasonctl query`.
#[derive(Clone, Debug)]
pub struct QuerySettings {
    /// Rules whose derived facts the query also sees, and limits.
    pub reasoning: ReasoningSettings,
    /// The data sources (may be none).
    pub sources: Vec<DataSource>,
    /// How they are read.
    pub load: LoadOptions,
    /// The query.
    pub query: QueryInput,
    /// The answer syntax (`None`: by query form).
    pub format: Option<AnswerFormat>,
    /// Whether the answer goes to a terminal (SELECT and ASK are then a table by default).
    pub terminal: bool,
    /// A file to write to instead of stdout.
    pub output: Option<std::path::PathBuf>,
    /// Print the plan instead of the answer.
    pub explain_plan: bool,
    /// A deadline.
    pub timeout: Option<std::time::Duration>,
    /// What NOW() returns.
    pub now: Option<DateTime>,
}

/// Rules and the limits of a run.
#[derive(Clone, Debug, Default)]
pub struct ReasoningSettings {
    /// Where rules come from (stored rules in the data are always read).
    pub sources: RuleSources,
    /// How the program is scheduled.
    pub schedule: Schedule,
    /// Limits.
    pub budget: Budget,
    /// What NOW() returns (required when a rule reads the clock).
    pub now: Option<DateTime>,
    /// Where to write run statistics.
    pub stats: Option<std::path::PathBuf>,
    /// Compile transitive-closure groups to property paths.
    pub closure: bool,
    /// Run the OWL 2 RL rules first (`--owl2rl`).
    pub owl2rl: bool,
    /// A saved state to write (materialize) or answer from (`--state`).
    pub state: Option<std::path::PathBuf>,
    /// Bring the state up to date when the inputs given differ from it (`--refresh`).
    pub refresh: bool,
    /// Record the rule that first derived each fact (`materialize --provenance`).
    pub track: bool,
    /// `materialize --engine dataflow --workers N`: the worker threads (`None`: the in-memory engine).
    pub dataflow: Option<usize>,
    /// `--processes P --process I --hosts FILE` with the dataflow engine.
    pub cluster: Option<datalog::dataflow::Cluster>,
}

/// Settings of `reasonctl materialize`.
#[derive(Clone, Debug)]
pub struct MaterializeSettings {
    /// Rules and limits.
    pub reasoning: ReasoningSettings,
    /// The data sources, in order.
    pub sources: Vec<DataSource>,
    /// How they are read.
    pub load: LoadOptions,
    /// Where the facts go.
    pub target: OutputTarget,
    /// In which syntax.
    pub format: RdfOutputFormat,
    /// Compressed with (`-o`'s extension, or `--compress`).
    pub compress: Option<crate::codec::Codec>,
    /// Whether the asserted facts are written too.
    pub include_asserted: bool,
    /// `--add` / `--remove`: a change set applied to the state.
    pub change: ChangeSet,
    /// `--diff`: where the change to the output since the state goes, as RDF Patch (`-`: standard output).
    pub diff: Option<PathBuf>,
    /// Whether the facts are written (not with `--diff -` and no `-o` / `--out-dir`).
    pub output: bool,
    /// `--provenance`: what is written of it, and `--provenance-graph`.
    pub provenance: Option<(datalog::provenance::Level, Option<String>)>,
}

/// Files of facts to add to and remove from a state's data.
#[derive(Clone, Debug, Default)]
pub struct ChangeSet {
    /// `--add`, in order.
    pub add: Vec<PathBuf>,
    /// `--remove`, in order.
    pub remove: Vec<PathBuf>,
}

impl ChangeSet {
    /// Whether it changes nothing.
    pub fn is_empty(&self) -> bool {
        self.add.is_empty() && self.remove.is_empty()
    }
}

/// How a successful run ended; each maps to an exit code.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Done (exit 0).
    Done,
    /// Reasoning stopped at a budget; what it derived was written (exit 3).
    Capped,
}

impl Outcome {
    /// The process exit code.
    pub fn exit_code(self) -> u8 {
        match self {
            Outcome::Done => 0,
            Outcome::Capped => 3,
        }
    }
}

/// A failed run: the report to print and the exit code.
#[derive(Debug)]
pub struct Failure {
    /// The diagnostic.
    pub report: Report,
    /// 1 for findings about rules, 2 for the tool's own inputs and I/O.
    pub exit_code: u8,
    /// The reader of standard output went away: exit quietly.
    pub broken_pipe: bool,
}

impl Failure {
    /// A failure caused by the tool's own inputs or I/O (exit 2).
    pub fn input(error: impl miette::Diagnostic + Send + Sync + 'static) -> Self {
        Self {
            report: Report::new(error),
            exit_code: 2,
            broken_pipe: false,
        }
    }
}

impl From<output::OutputError> for Failure {
    fn from(e: output::OutputError) -> Self {
        let broken_pipe = e.is_broken_pipe();
        Self {
            broken_pipe,
            ..Failure::input(e)
        }
    }
}

impl From<QueryError> for Failure {
    fn from(e: QueryError) -> Self {
        // A query past --timeout hit a budget (exit 3), like a capped run.
        let timed_out = matches!(e, QueryError::Exec(crate::exec::ExecError::Timeout(_)));
        Failure {
            exit_code: if timed_out { 3 } else { 2 },
            ..Failure::input(e)
        }
    }
}

/// An answer format that cannot hold the query's answer.
#[derive(Debug, Error, Diagnostic)]
#[error("{format} cannot hold the answer of a {form} query")]
#[diagnostic(
    code(reasonctl::query::format),
    help(
        "use json, xml, csv or tsv (.json .srj .xml .srx .csv .tsv) for SELECT and ASK; nt, nquads, turtle or trig (.nt .nq .ttl .trig) for CONSTRUCT and DESCRIBE; --format overrides the -o file's extension"
    )
)]
pub struct AnswerFormatError {
    /// `--format F`, or the `-o` file's extension.
    format: String,
    form: &'static str,
}

/// Rules that cannot run, all of them.
#[derive(Debug, Error, Diagnostic)]
#[error("{} rule problem(s); nothing was derived", errors.len())]
#[diagnostic(
    code(reasonctl::rules::rejected),
    help("fix the rules listed below; `reasonctl lint` checks rules without running them")
)]
pub struct RuleProblems {
    #[related]
    errors: Vec<Finding>,
}

/// A run that stopped at a budget.
#[derive(Debug, Error, Diagnostic)]
#[error(
    "reasoning was capped by {reason} after deriving {derived} fact(s); the output holds those facts only"
)]
#[diagnostic(
    code(reasonctl::datalog::capped),
    severity(Warning),
    help(
        "rules still running: {capped}; rules not run: {pending}. Raise the limit to reach the fixpoint"
    )
)]
pub struct Capped {
    reason: &'static str,
    derived: usize,
    capped: String,
    pending: String,
}

/// A command stopped from outside its phases' own checks: a hard limit or a signal.
#[derive(Debug, Error, Diagnostic)]
pub enum Stopped {
    /// An allocation would have passed `--max-memory`.
    #[error("the heap reached --max-memory ({mib} MiB) {doing}; the command was stopped{written}")]
    #[diagnostic(
        code(reasonctl::run::memory),
        help(
            "raise --max-memory; reasoning stops at it with what it derived, but loading the data, planning and writing must fit in it whole"
        )
    )]
    Memory {
        /// The limit in MiB.
        mib: usize,
        /// `while loading the data`, …
        doing: &'static str,
        /// What became of the output.
        written: &'static str,
    },
    /// An allocation would have passed the memory the machine allows (no `--max-memory` given).
    #[error(
        "the heap reached the memory this machine allows ({mib} MiB: RAM and swap, or the memory cgroup's limit, less a margin for what is not heap, and at most half of what an address-space limit (ulimit -v) leaves) {doing}; the command was stopped{written}"
    )]
    #[diagnostic(
        code(reasonctl::run::machine_memory),
        help(
            "the command needs more memory than there is: give it less data or fewer rules, or pass --max-facts or --max-memory so that reasoning stops in time to write what it derived"
        )
    )]
    MachineMemory {
        /// The bound in MiB.
        mib: usize,
        /// `while loading the data`, …
        doing: &'static str,
        /// What became of the output.
        written: &'static str,
    },
    /// The command ran past `--timeout` and its grace.
    #[error("the command ran past --timeout ({secs} s) {doing}; it was stopped{written}")]
    #[diagnostic(
        code(reasonctl::run::timeout),
        help(
            "raise --timeout; reasoning stops in time to write what it derived, but loading the data, planning and writing must fit in it whole"
        )
    )]
    Time {
        /// The timeout in seconds.
        secs: f64,
        /// `while loading the data`, …
        doing: &'static str,
        /// What became of the output.
        written: &'static str,
    },
    /// A signal arrived.
    #[error("interrupted by {signal} {doing}{written}")]
    #[diagnostic(
        code(reasonctl::run::interrupted),
        help(
            "run the command again and let it finish; --timeout bounds it instead, and keeps what it derived"
        )
    )]
    Signal {
        /// `SIGINT`, …
        signal: &'static str,
        /// `while loading the data`, …
        doing: &'static str,
        /// What became of the output.
        written: &'static str,
    },
}

/// The report of a stop ([`control::stop`]): the limit, the phase, and what became of output files.
pub fn stopped(reason: Stop, limits: Limits, phase: Phase, removed: usize) -> Report {
    let doing = phase.doing();
    let written = match (phase, removed) {
        (Phase::Output, 0) => {
            "; an output file already renamed into place is whole, and standard output may end early"
        }
        (Phase::Output, _) => {
            "; the output files being written were removed (the previous ones are intact)"
        }
        // The output files were written before the save began; the swap of the state's folder is one step.
        (Phase::Save, _) => {
            "; the output files written are whole, and the state is either the previous one or the new one, whole (run the command again to bring it up to date: a state that already is changes nothing)"
        }
        _ => "; nothing was written",
    };
    Report::new(match reason {
        Stop::Memory => match limits.max_memory {
            Some(bytes) => Stopped::Memory {
                mib: bytes >> 20,
                doing,
                written,
            },
            None => Stopped::MachineMemory {
                mib: control::heap_limit().unwrap_or(0) >> 20,
                doing,
                written,
            },
        },
        Stop::Time => Stopped::Time {
            secs: limits.timeout.map_or(0.0, |t| t.as_secs_f64()),
            doing,
            written,
        },
        Stop::Signal(n) => Stopped::Signal {
            signal: match n {
                1 => "SIGHUP",
                2 => "SIGINT",
                15 => "SIGTERM",
                _ => "a signal",
            },
            doing,
            written,
        },
    })
}

/// A rule that matched rows it could not turn into facts.
#[derive(Debug, Error, Diagnostic)]
#[error("{0}")]
#[diagnostic(code(reasonctl::datalog::no_facts), severity(Warning))]
pub struct RuleWarning(String);

/// A list the OWL 2 RL list rules do not read.
#[derive(Debug, Error, Diagnostic)]
#[error("{0}")]
#[diagnostic(
    code(reasonctl::owl2rl::unread_list),
    severity(Warning),
    help(
        "shorten the list (an intersection of intersections, a chain of chains); longer lists would need a rule joining one pattern per member"
    )
)]
pub struct UnreadList(String);

impl From<load::LoadError> for Failure {
    fn from(e: load::LoadError) -> Self {
        Failure::input(e)
    }
}

/// Writes a warning to stderr; a closed stderr is ignored.
fn warn(text: std::fmt::Arguments<'_>) {
    let text = text.to_string();
    let _ = writeln!(std::io::stderr(), "{}", crate::excerpt::printable(&text));
}

/// Runs one command.
pub fn run(settings: Settings) -> Result<Outcome, Failure> {
    // Fails only if a pool was already built (tests running several commands in one process): keep that one.
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads(settings.threads.unwrap_or(0))
        .stack_size(crate::STACK)
        .build_global();
    // Without --max-memory, the heap is bounded by what the machine can give at all: a runaway command stops
    // with a report instead of being killed by the kernel or aborting on a failed allocation.
    control::set_heap_limit(
        settings
            .limits()
            .max_memory
            .or_else(control::machine_memory),
    );
    let progress = Progress::new(settings.quiet);
    let deadline = settings.deadline();
    match settings.command {
        CommandSettings::Materialize(m) => materialize(&m, deadline, &progress),
        CommandSettings::Query(q) => run_query(&q, deadline, &progress),
        CommandSettings::Deps(d) => deps(&d, &progress),
        CommandSettings::Lint(l) => run_lint(&l, &progress),
        CommandSettings::Explain(e) => explain(&e, deadline, &progress),
    }
}

/// What a reasoning run gets from its command: the command's deadline, and what the output after it needs.
#[derive(Copy, Clone, Debug, Default)]
struct Run {
    deadline: Option<Instant>,
    reserve: datalog::budget::Reserve,
    /// The output writes the asserted facts too (`--include-asserted`): the reserve counts them.
    include_asserted: bool,
}

/// What a command answers from: the program, the facts it derived, the run's report (none when the facts come
/// from a saved state), and the user's rule texts.
pub(crate) struct Reasoned {
    program: datalog::Program,
    overlay: Overlay,
    report: Option<RunReport>,
    texts: Vec<rules::source::RuleText>,
}

/// Loads the data sources (the load phase).
fn load_data(
    sources: &[DataSource],
    options: &LoadOptions,
    progress: &Progress,
) -> Result<Store, Failure> {
    control::enter(Phase::Load);
    Ok(load::load(sources, options, progress)?)
}

/// Loads the data a run reasons over: all of it, or in a dataflow cluster this process's share (see
/// [`datalog::dataflow::load_share`]).
fn load_to_reason(
    sources: &[DataSource],
    options: &LoadOptions,
    (reasoning, deadline): (&ReasoningSettings, Option<Instant>),
    progress: &Progress,
) -> Result<Store, Failure> {
    let (Some(cluster), Some(workers)) = (&reasoning.cluster, reasoning.dataflow) else {
        return load_data(sources, options, progress);
    };
    control::enter(Phase::Load);
    use datalog::dataflow::ShareError;
    let budget = (deadline, reasoning.budget.timeout);
    let mut store =
        datalog::dataflow::load_share(sources, options, cluster, workers, budget, progress)
            .map_err(|e| match e {
                ShareError::Load(e) => Failure::from(e),
                ShareError::Cluster(e) => dataflow_failure(e),
            })?;
    // The dictionary the shares built together: its IRIs read with --lenient may need escaping on output.
    if options.lenient {
        store.dict.note_raw_iris();
    }
    Ok(store)
}

/// Reads, validates and runs the rules over `store`; the derived facts and the run's report. No rules at all is
/// an empty overlay. Rule problems fail the command (exit 1; an unreadable rules file exits 2).
fn reason(
    store: &mut Store,
    settings: &ReasoningSettings,
    run: Run,
    stats: bool,
    progress: &Progress,
) -> Result<Reasoned, Failure> {
    control::enter(Phase::Rules);
    let validation = lint::validate(
        &settings.sources,
        store,
        Checks {
            data: true,
            warnings: false,
        },
    );
    // No rules: nothing to run, but for a cluster (its processes loaded shares: the run gathers the asserted
    // facts, and every process takes part).
    if validation.texts.is_empty()
        && validation.findings.is_empty()
        && !settings.owl2rl
        && settings.cluster.is_none()
    {
        // `--stats` still says what ran: nothing (no rules, nothing derived).
        if stats {
            write_stats(settings, &RunReport::default(), None)?;
        }
        return Ok(Reasoned {
            program: validation.program,
            overlay: Overlay::new(),
            report: None,
            texts: Vec::new(),
        });
    }
    let Validation {
        program,
        mut findings,
        texts,
    } = validation;
    // A recursive rule that may mint reifiers without end: said before the run (which may not end).
    for w in lint::warnings::minting(&program) {
        let finding = Builder::new(&texts).warning(w);
        warn(format_args!("{:?}", Report::new(finding)));
    }
    let clock = program.clock_readers();
    if settings.now.is_none() && !clock.is_empty() {
        findings.push(Builder::new(&texts).error(RuleError::ClockWithoutTime {
            rules: clock.join(", "),
        }));
    }
    if settings.owl2rl {
        let mut builder = Builder::new(&texts);
        for rule in &program.rules {
            if rule.id.starts_with(datalog::owl2rl::ID_PREFIX) {
                findings.push(builder.error(RuleError::ReservedId {
                    id: rule.id.clone(),
                }));
            }
        }
    }
    if settings.dataflow.is_some() {
        let cluster = settings.cluster.is_some();
        findings.extend(lint::dataflow_findings(&program, &texts, cluster));
    }
    if !findings.is_empty() {
        return Err(rule_failure(findings));
    }
    control::enter(Phase::Reason);
    let options = run_options(settings, run, store);
    let mut extra = None;
    let (program, overlay, report) = if let Some(workers) = settings.dataflow {
        let (overlay, report, exchanged) = dataflow(
            store,
            &program,
            (workers, run.include_asserted),
            &options,
            settings,
        )?;
        let mut json = serde_json::Map::new();
        json.insert("engine".into(), "dataflow".into());
        json.insert("workers".into(), workers.into());
        let (process, processes) = settings
            .cluster
            .as_ref()
            .map_or((0, 1), |c| (c.process, c.addresses.len()));
        json.insert("process".into(), process.into());
        json.insert("processes".into(), processes.into());
        json.insert("bytes_sent".into(), exchanged.bytes_sent.into());
        extra = Some(json);
        (program, overlay, report)
    } else {
        let outcome = if settings.owl2rl {
            datalog::owl2rl::then_rules(program, store, &options, progress).map(|done| {
                warn_unread_lists(&done.unread_lists);
                (done.program, done.overlay, done.report)
            })
        } else {
            datalog::materialize(&program, store, &options, progress)
                .map(|(overlay, report)| (program, overlay, report))
        };
        outcome.map_err(|e| run_failure(settings, e))?
    };
    ran(settings, &report, stats.then_some(extra))?;
    Ok(Reasoned {
        program,
        overlay,
        report: Some(report),
        texts,
    })
}

/// The warning for each list the OWL 2 RL list rules do not read.
fn warn_unread_lists(lists: &[String]) {
    for w in lists {
        warn(format_args!("{:?}", Report::new(UnreadList(w.clone()))));
    }
}

/// `--engine dataflow`: the checked program run by differential dataflow on `workers` threads. The store moves
/// into an `Arc` the workers share for the run, and back after.
fn dataflow(
    store: &mut Store,
    program: &datalog::Program,
    (workers, keep_asserted): (usize, bool),
    options: &datalog::Options,
    settings: &ReasoningSettings,
) -> Result<(Overlay, RunReport, datalog::dataflow::Exchanged), Failure> {
    let started = Instant::now();
    let timeout = options.budget.timeout;
    let df = datalog::dataflow::Settings {
        workers,
        now: options.now,
        deadline: timeout.map(|t| started + t),
        timeout,
        max_facts: options.budget.max_facts,
        cluster: settings.cluster.clone(),
        shares: settings.cluster.as_ref().is_some_and(|c| c.shares),
        keep_asserted,
    };
    let shared = std::sync::Arc::new(std::mem::take(store));
    let outcome = datalog::dataflow::materialize(program, shared.clone(), &df);
    // After a run that ended, the workers have ended (joined): the store is the run's alone again. A cluster's
    // workers stopped early are held, with the data, until the process ends: the run failed, and says why.
    let back = std::sync::Arc::try_unwrap(shared);
    let ran = outcome.map_err(dataflow_failure)?;
    let Ok(back) = back else {
        return Err(Failure {
            exit_code: 1,
            ..Failure::input(datalog::dataflow::DataflowError::Failed {
                reason: "a worker still held the data after the run".to_owned(),
            })
        });
    };
    *store = back;
    let datalog::dataflow::Ran {
        overlay,
        asserted,
        exchanged,
        minted,
    } = ran;
    // The terms the run computed join the dictionary, as the in-memory engine's do after each round.
    let overlay = minted.adopt(&mut store.dict, overlay);
    if let Some(share) = asserted {
        // A process writing its share keeps its share of the asserted facts (what --include-asserted writes).
        let mut graphs: Vec<(crate::store::TermId, Vec<crate::store::Triple>)> = Vec::new();
        for chunk in share.chunk_by(|a, b| a[0] == b[0]) {
            let triples = (chunk.iter()).map(|&[_, s, p, o]| [s, p, o].map(crate::store::TermId));
            graphs.push((crate::store::TermId(chunk[0][0]), triples.collect()));
        }
        store.quads = crate::store::QuadStore::from_graphs(graphs);
    }
    let report = RunReport {
        derived: overlay.len(),
        elapsed: started.elapsed(),
        ..RunReport::default()
    };
    Ok((overlay, report, exchanged))
}

/// The failure of a dataflow run, or of a cluster's joining: its exit code by cause.
fn dataflow_failure(e: datalog::dataflow::DataflowError) -> Failure {
    use datalog::dataflow::DataflowError as E;
    let exit_code = match e {
        E::Timeout { .. } | E::PeerTimeout { .. } | E::MaxFacts { .. } => 3,
        // A cluster started with a wrong address or on other inputs: the command line's fault.
        E::Bind { .. } | E::Mismatch { .. } | E::PeerInput { .. } | E::RuleSetInData { .. } => 2,
        E::Unreachable { .. } | E::Lost { .. } | E::Failed { .. } => 1,
    };
    Failure {
        exit_code,
        ..Failure::input(e)
    }
}

/// How the rules run for a command: its settings, what is left of its deadline, the output's reserve.
fn run_options(settings: &ReasoningSettings, run: Run, store: &Store) -> datalog::Options {
    datalog::Options {
        schedule: settings.schedule,
        budget: Budget {
            timeout: remaining(run.deadline),
            reserve: datalog::budget::Reserve {
                facts: if run.include_asserted {
                    store.quads.len()
                } else {
                    0
                },
                ..run.reserve
            },
            ..settings.budget.clone()
        },
        closure: settings.closure,
        track: settings.track,
        ..datalog::Options::new(settings.now.unwrap_or_else(DateTime::now))
    }
}

/// The failure of a run that could not finish: a budget that stopped rules that negate or aggregate, or the
/// OWL 2 RL closure (exit 3, with its statistics written), an OWL 2 RL check out of time (exit 3), anything
/// else (exit 1).
fn run_failure(settings: &ReasoningSettings, e: RunError) -> Failure {
    let exit_code = match &e {
        RunError::ResourceLimit { report, .. }
        | RunError::Owl2Rl(datalog::owl2rl::Owl2RlError::ClosureTimeout { report }) => {
            if let Err(failure) = write_stats(settings, report, None) {
                return failure;
            }
            3
        }
        RunError::Owl2Rl(datalog::owl2rl::Owl2RlError::CheckTimeout { .. }) => 3,
        _ => 1,
    };
    Failure {
        report: Report::new(e),
        exit_code,
        broken_pipe: false,
    }
}

/// After a run: its warnings on stderr, its statistics written when `stats`.
/// The run's warnings, and with `stats` (`Some`, with what the engine adds) its statistics.
fn ran(
    settings: &ReasoningSettings,
    report: &RunReport,
    stats: Option<Option<serde_json::Map<String, serde_json::Value>>>,
) -> Result<(), Failure> {
    for w in &report.warnings {
        warn(format_args!("{:?}", Report::new(RuleWarning(w.clone()))));
    }
    if let Some(extra) = stats {
        write_stats(settings, report, extra)?;
    }
    Ok(())
}

/// The failure for rule problems: exit 1, or 2 when a rules file could not be read; one problem on its own,
/// several under one heading.
fn rule_failure(mut findings: Vec<Finding>) -> Failure {
    let exit_code = if findings.iter().any(|f| f.code == lint::codes::UNREADABLE) {
        2
    } else {
        1
    };
    let report = if findings.len() == 1 {
        Report::new(findings.pop().expect("one finding"))
    } else {
        Report::new(RuleProblems { errors: findings })
    };
    Failure {
        report,
        exit_code,
        broken_pipe: false,
    }
}

/// `reasonctl deps`: the program's stages, groups and edges; an unstratified program is shown, then fails with
/// its cycles (exit 1).
fn deps(settings: &DepsSettings, progress: &Progress) -> Result<Outcome, Failure> {
    if let Some(dir) = &settings.state {
        // The program a state was made with (it ran: no finding to report).
        let (store, reasoned) = state::opened(dir, progress)?;
        let prefixes = Prefixes::new(
            store
                .prefixes
                .iter()
                .cloned()
                .chain(rules::declared_prefixes(&reasoned.texts)),
        );
        let text = output::deps::render(&reasoned.program, &store.dict, &prefixes, settings.format);
        let human = settings.format != DepsFormat::Json;
        write_text(settings.output.as_deref(), &text, human)?;
        return Ok(Outcome::Done);
    }
    let mut store = load_data(&settings.sources, &settings.load, progress)?;
    control::enter(Phase::Rules);
    let Validation {
        program,
        findings,
        texts,
    } = lint::validate(&settings.rules, &mut store, Checks::default());
    // Cycles are shown in the output first, then reported; any other problem stops here.
    let (unstratified, others): (Vec<Finding>, Vec<Finding>) = findings
        .into_iter()
        .partition(|f| f.code == lint::codes::UNSTRATIFIED);
    if !others.is_empty() {
        return Err(rule_failure(others));
    }
    let prefixes = Prefixes::new(
        store
            .prefixes
            .iter()
            .cloned()
            .chain(rules::declared_prefixes(&texts)),
    );
    let text = output::deps::render(&program, &store.dict, &prefixes, settings.format);
    let human = settings.format != DepsFormat::Json;
    write_text(settings.output.as_deref(), &text, human)?;
    if unstratified.is_empty() {
        Ok(Outcome::Done)
    } else {
        Err(rule_failure(unstratified))
    }
}

/// Findings of a lint run (the report is the output, so the failure itself says only how it ended).
#[derive(Debug, Error, Diagnostic)]
#[error("lint found {errors} error(s){}", if *.denied { " (warnings denied)" } else { "" })]
#[diagnostic(code(reasonctl::lint::failed))]
pub struct LintFailed {
    errors: usize,
    denied: bool,
}

/// `reasonctl lint`: every finding of every rule, as a report on stdout; exit 1 when any is an error (a warning
/// under `--deny-warnings`), 2 when an input could not be read.
fn run_lint(settings: &LintSettings, progress: &Progress) -> Result<Outcome, Failure> {
    let mut store = load_data(&settings.sources, &settings.load, progress)?;
    control::enter(Phase::Rules);
    let checks = Checks {
        data: !settings.sources.is_empty(),
        warnings: true,
    };
    let mut validation = lint::validate(&settings.rules, &mut store, checks);
    if settings.dataflow {
        let found = lint::dataflow_findings(&validation.program, &validation.texts, false);
        validation.findings.extend(found);
    }
    if settings.deny_warnings {
        for f in &mut validation.findings {
            f.severity = lint::Severity::Error;
        }
    }
    let findings = &validation.findings;
    let text = match settings.format {
        LintFormat::Human => {
            let terminal = settings.output.is_none() && std::io::stdout().is_terminal();
            let style = report::Style {
                color: terminal && std::env::var_os("NO_COLOR").is_none(),
                width: std::env::var("COLUMNS")
                    .ok()
                    .and_then(|c| c.parse().ok())
                    .filter(|_| terminal)
                    .unwrap_or(80),
            };
            report::human(findings, validation.texts.len(), style)
        }
        LintFormat::Json => report::json(findings),
        LintFormat::Sarif => report::sarif(findings),
    };
    let human = settings.format == LintFormat::Human;
    write_text(settings.output.as_deref(), &text, human)?;
    let (errors, _) = report::counts(findings);
    let unreadable = findings.iter().any(|f| f.code == lint::codes::UNREADABLE);
    if errors == 0 {
        return Ok(Outcome::Done);
    }
    Err(Failure {
        report: Report::new(LintFailed {
            errors,
            denied: settings.deny_warnings,
        }),
        exit_code: if unreadable { 2 } else { 1 },
        broken_pipe: false,
    })
}

/// Writes text to a file (atomically) or to stdout; `human` text (not JSON, whose strings escape control
/// characters themselves) shows control characters escaped on a terminal.
fn write_text(path: Option<&std::path::Path>, text: &str, human: bool) -> Result<(), Failure> {
    // A stop from here on (a signal while a FIFO waits for its reader) names the output, not the phase before.
    control::enter(Phase::Output);
    match path {
        Some(path) => {
            files::write_atomically(path, |w| w.write_all(text.as_bytes())).map_err(|e| {
                Failure::from(output::OutputError::Write {
                    path: path.to_owned(),
                    reason: e.to_string(),
                })
            })
        }
        None => {
            let stdout = std::io::stdout();
            // On a terminal, control characters from the data or the rules are shown, not obeyed.
            let text = if human && stdout.is_terminal() {
                crate::excerpt::printable(text)
            } else {
                text.into()
            };
            let mut lock = stdout.lock();
            lock.write_all(text.as_bytes())
                .and_then(|()| lock.flush())
                .map_err(|e| Failure::from(output::OutputError::Stdout(e)))
        }
    }
}

/// Writes `--stats FILE`, if asked.
/// Writes `--stats`: the run's report, with `extra` fields (a state's maintenance) after its own.
fn write_stats(
    settings: &ReasoningSettings,
    report: &RunReport,
    extra: Option<serde_json::Map<String, serde_json::Value>>,
) -> Result<(), Failure> {
    let Some(path) = &settings.stats else {
        return Ok(());
    };
    let mut json = report.to_json();
    if let (Some(object), Some(extra)) = (json.as_object_mut(), extra) {
        object.extend(extra);
    }
    let mut text = serde_json::to_string_pretty(&json).unwrap_or_default();
    if path.as_os_str() == "-" {
        // Standard output is free: settings refuse `--stats -` where the command's output goes there.
        text.push('\n');
        let mut out = std::io::stdout().lock();
        return out
            .write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .map_err(|e| Failure::from(output::OutputError::Stdout(e)));
    }
    files::write_atomically(path, |w| w.write_all(text.as_bytes())).map_err(|e| {
        Failure::from(output::OutputError::Write {
            path: path.clone(),
            reason: e.to_string(),
        })
    })
}

/// Prints a cap on stderr; whether the run was capped.
fn report_cap(report: Option<&RunReport>) -> bool {
    let Some(r) = report else { return false };
    let Some(reason) = r.capped else { return false };
    let list = |v: &[String]| {
        if v.is_empty() {
            "none".to_owned()
        } else {
            v.join(", ")
        }
    };
    warn(format_args!(
        "{:?}",
        Report::new(Capped {
            reason: reason.name(),
            derived: r.derived,
            capped: list(&r.capped_rules),
            pending: list(&r.pending_rules),
        })
    ));
    true
}

fn run_query(
    settings: &QuerySettings,
    deadline: Option<Instant>,
    progress: &Progress,
) -> Result<Outcome, Failure> {
    let q = &settings.query;
    let parsed = query::parse(&q.text, &q.name, q.base.as_deref())?;
    // Reasoning capped by --timeout stops in time for the query to read what it derived: a tenth of the
    // timeout is the query's, and as long again as writing each fact would take (a query may read them all).
    let run = Run {
        deadline: deadline.map(|d| {
            d.checked_sub(settings.timeout.map_or(Duration::ZERO, |t| t / 10))
                .unwrap_or(d)
        }),
        reserve: datalog::budget::Reserve::rdf_output(0),
        ..Run::default()
    };
    let reasoning = &settings.reasoning;
    let _held = hold_state(reasoning)?;
    let state::Obtained {
        mut store,
        reasoned,
        source,
        used,
        ..
    } = state::obtain(
        &settings.sources,
        &settings.load,
        reasoning,
        run,
        (reasoning.refresh, Orders::All),
        progress,
    )?;
    let capped = report_cap(reasoned.report.as_ref());
    let overlay = &reasoned.overlay;
    control::enter(Phase::Query);
    let prepared = query::prepare(&parsed, &mut store.dict, View::new(&store.quads, overlay))?;
    // The query gets what is left of --timeout.
    let options = RunOptions {
        now: settings.now,
        timeout: remaining(deadline),
        ..RunOptions::default()
    };
    let outcome = query::execute(
        &prepared,
        &store.dict,
        View::new(&store.quads, overlay),
        &options,
    )?;
    // No --format: the -o file's extension, when it names a syntax (one for another kind of answer is refused,
    // below: `-o out.nt` for a SELECT would have got JSON); else the default.
    let by_extension = settings
        .format
        .is_none()
        .then(|| AnswerFormat::of_path(settings.output.as_deref()?))
        .flatten();
    let format = settings.format.or(by_extension);
    let write = |out: &mut dyn Write| -> std::io::Result<()> {
        if settings.explain_plan {
            let namer = Namer {
                dict: &outcome.terms,
                vars: &prepared.plan.vars,
            };
            return out.write_all(
                prepared
                    .plan
                    .explain(&namer, Some(&outcome.actual))
                    .as_bytes(),
            );
        }
        // SELECT and ASK: JSON, or a table on a terminal; CONSTRUCT and DESCRIBE: N-Triples.
        let solutions = format.unwrap_or(if settings.terminal {
            AnswerFormat::Table
        } else {
            AnswerFormat::Json
        });
        match &outcome.answer {
            Answer::Solutions { vars, rows } => match solutions.results() {
                Some(f) => results::write_solutions(&outcome.terms, vars, rows, f, out).map(|_| ()),
                None => {
                    // The query's prefixes first, then the data's.
                    let mut prefixes = crate::rules::sparql::scan::prefixes(&q.text);
                    prefixes.extend(store.prefixes.iter().cloned());
                    results::write_table(&outcome.terms, &prefixes, vars, rows, out).map(|_| ())
                }
            },
            Answer::Boolean(b) => match solutions.results() {
                Some(f) => results::write_boolean(*b, f, out).map(|_| ()),
                None => writeln!(out, "{b}"),
            },
            Answer::Triples(t) => {
                let f = format
                    .unwrap_or(AnswerFormat::NTriples)
                    .rdf()
                    .expect("checked below");
                results::write_triples(&outcome.terms, &store.prefixes, t, f, out).map(|_| ())
            }
        }
    };
    if !settings.explain_plan {
        let (ok, form) = match (&outcome.answer, format) {
            (_, None) => (true, ""),
            (Answer::Triples(_), Some(f)) => (f.rdf().is_some(), "CONSTRUCT or DESCRIBE"),
            (Answer::Boolean(_), Some(f)) => (f.answers_solutions(), "ASK"),
            (Answer::Solutions { .. }, Some(f)) => (f.answers_solutions(), "SELECT"),
        };
        if !ok {
            let shown = match (settings.format, &settings.output) {
                (Some(f), _) => format!("--format {}", format!("{f:?}").to_lowercase()),
                (None, Some(path)) => format!("-o {} (by its extension)", path.display()),
                (None, None) => unreachable!("a format comes from --format or -o"),
            };
            return Err(Failure::input(AnswerFormatError {
                format: shown,
                form,
            }));
        }
    }
    control::enter(Phase::Output);
    // Every answer ends with a line break (the JSON and XML writers end without one).
    let write = |out: &mut dyn Write| -> std::io::Result<()> {
        let mut ended = output::LineEnded::new(out);
        write(&mut ended)?;
        ended.finish()
    };
    match &settings.output {
        Some(path) => files::write_atomically(path, |w| write(w)).map_err(|e| {
            Failure::from(output::OutputError::Write {
                path: path.clone(),
                reason: e.to_string(),
            })
        })?,
        None => {
            let stdout = std::io::stdout();
            let mut lock = std::io::BufWriter::new(stdout.lock());
            // On a terminal, C1 controls of the data are shown escaped in the answer's own syntax, not obeyed
            // (the table escapes its cells itself, the plan is text for people; CSV has no escape and writes
            // them as they are).
            let escaped = match (&outcome.answer, format) {
                _ if settings.explain_plan => C1::Unicode,
                (Answer::Triples(_), _) => C1::Unicode,
                (_, Some(AnswerFormat::Csv)) => C1::AsIs,
                (_, Some(AnswerFormat::Xml)) => C1::XmlReference,
                _ => C1::Unicode,
            };
            let mut out = C1Escaped::new(&mut lock, C1::on_terminal(settings.terminal, escaped));
            write(&mut out)
                .and_then(|()| out.flush())
                .map_err(|e| Failure::from(output::OutputError::Stdout(e)))?;
        }
    }
    keep_state(
        source,
        &settings.sources,
        &used,
        &store,
        &reasoned,
        progress,
    )?;
    Ok(if capped {
        Outcome::Capped
    } else {
        Outcome::Done
    })
}

/// A state not written because the run was capped.
#[derive(Debug, Error, Diagnostic)]
#[error(
    "the state {dir} was not written: a capped run is not a fixpoint; the previous state is as it was"
)]
#[diagnostic(
    code(reasonctl::state::not_written),
    severity(Warning),
    help("raise the limit that capped the run, and run it again with --state")
)]
pub struct StateNotWritten {
    dir: String,
}

/// The hold on the state of a `query` or `explain` that may write it (`--refresh`), for the whole command.
fn hold_state(reasoning: &ReasoningSettings) -> Result<Option<crate::state::Lock>, Failure> {
    match &reasoning.state {
        Some(dir) if reasoning.refresh => crate::state::lock(dir).map(Some).map_err(Failure::input),
        _ => Ok(None),
    }
}

/// Writes the state of a run that ran its data and rules (not one answered from the state itself).
fn keep_state(
    source: state::Source,
    sources: &[DataSource],
    (load, reasoning): &(LoadOptions, ReasoningSettings),
    store: &Store,
    reasoned: &Reasoned,
    progress: &Progress,
) -> Result<(), Failure> {
    let (state::Source::Ran, Some(dir)) = (source, &reasoning.state) else {
        return Ok(());
    };
    let record = state::Record::files(sources, load, reasoning)?;
    if !state::save(dir, record, store, reasoned, None, progress)? {
        warn(format_args!(
            "{:?}",
            Report::new(StateNotWritten {
                dir: dir.display().to_string()
            })
        ));
    }
    Ok(())
}

fn materialize(
    settings: &MaterializeSettings,
    deadline: Option<Instant>,
    progress: &Progress,
) -> Result<Outcome, Failure> {
    let run = Run {
        deadline,
        reserve: datalog::budget::Reserve::rdf_output(0),
        include_asserted: settings.include_asserted,
    };
    let reasoning = &settings.reasoning;
    if reasoning.state.is_some() {
        return materialize_state(settings, run, progress);
    }
    let state::Obtained {
        mut store,
        mut reasoned,
        ..
    } = state::obtain(
        &settings.sources,
        &settings.load,
        reasoning,
        run,
        // A dump of the state reads no index but SPO.
        (true, Orders::Lookups),
        progress,
    )?;
    // In a cluster, process 0 gathered the derived facts and writes them, and the others write nothing; or each
    // writes its share (`--out-dir`).
    if (reasoning.cluster.as_ref()).is_some_and(|c| c.process != 0 && !c.shares) {
        return Ok(Outcome::Done);
    }
    control::enter(Phase::Output);
    let quads = if settings.provenance.is_none() {
        // The asserted facts' indexes and the derived overlay are not read again (only provenance would): the
        // facts to write are moved out of them, each part freed as soon as it is copied, so the copy never sits
        // beside all of them (LUBM_LE(10): the peak was this copy, 126 MB; see CHANGELOG).
        let asserted = std::mem::take(&mut store.quads);
        let asserted = settings.include_asserted.then_some(asserted);
        let mut quads = std::mem::take(&mut reasoned.overlay).into_quads();
        if let Some(asserted) = asserted {
            quads.extend(asserted.into_quads());
        }
        quads
    } else {
        sorted_quads(
            &[&reasoned.overlay],
            settings.include_asserted.then_some(&store.quads),
        )
    };
    write_facts(settings, &store, &mut reasoned, run, quads)?;
    Ok(if report_cap(reasoned.report.as_ref()) {
        Outcome::Capped
    } else {
        Outcome::Done
    })
}

/// Writes the output's facts: sorted into output order, then (with `--provenance`) each one's reifier and
/// premises in that order, whose new terms are the writer's own.
fn write_facts(
    settings: &MaterializeSettings,
    store: &Store,
    reasoned: &mut Reasoned,
    run: Run,
    mut quads: Vec<Quad>,
) -> Result<(), Failure> {
    rdf::sort_quads(&store.dict, &mut quads);
    // Derived and asserted facts are disjoint, and so are the overlay's runs; a duplicate would be adjacent now.
    quads.dedup();
    let terms = Terms::new(&store.dict);
    // The run's credits are read once, here, and freed before the output is written.
    let by_fact =
        (reasoned.report.as_mut()).map_or_else(Vec::new, |r| std::mem::take(&mut r.credits));
    let (terms, credits) =
        provenance::provenance(settings, store, reasoned, run, terms, &quads, by_fact)?;
    control::enter(Phase::Output);
    quads.extend(credits);
    let prefixes = provenance::prefixes(settings, &store.prefixes);
    let how = (settings.format, settings.compress);
    output::write_dataset(&terms, &prefixes, &quads, how, &settings.target)?;
    Ok(())
}

/// The quads of `before` not in `after` and of `after` not in `before` (both sorted by id).
fn changes(before: &[Quad], after: &[Quad]) -> (Vec<Quad>, Vec<Quad>) {
    let (mut removed, mut added) = (Vec::new(), Vec::new());
    walk_changes(before, after, |q, gone| {
        if gone { &mut removed } else { &mut added }.push(*q)
    });
    (removed, added)
}

/// How many quads of sorted `before` are not in sorted `after`, and how many of `after` not in `before`: what
/// [`changes`] would list.
fn count_changes(before: &[Quad], after: &[Quad]) -> (usize, usize) {
    let (mut removed, mut added) = (0, 0);
    walk_changes(before, after, |_, gone| {
        *if gone { &mut removed } else { &mut added } += 1
    });
    (removed, added)
}

/// Calls `f` with each quad of sorted `before` not in sorted `after` (`true`: gone) and each of `after` not in
/// `before` (`false`: new), in order.
fn walk_changes(before: &[Quad], after: &[Quad], mut f: impl FnMut(&Quad, bool)) {
    let (mut i, mut j) = (0, 0);
    loop {
        match (before.get(i), after.get(j)) {
            (Some(a), Some(b)) if a == b => {
                i += 1;
                j += 1;
            }
            (Some(a), Some(b)) if a < b => {
                f(a, true);
                i += 1;
            }
            (Some(a), None) => {
                f(a, true);
                i += 1;
            }
            (_, Some(b)) => {
                f(b, false);
                j += 1;
            }
            (None, None) => break,
        }
    }
}

/// `materialize --state`: the facts brought up to date from the state (maintained when only the data changed),
/// written; the change written as RDF Patch (`--diff`); the state saved; the statistics with the mode and the
/// time of each phase.
fn materialize_state(
    settings: &MaterializeSettings,
    run: Run,
    progress: &Progress,
) -> Result<Outcome, Failure> {
    let dir = settings
        .reasoning
        .state
        .as_deref()
        .expect("materialize --state");
    // Without DATA and a change set the state is only read (it answers as it is): no hold, so that readers
    // run side by side and a state in a folder the user cannot write is still read.
    let writes = !settings.sources.is_empty() || !settings.change.is_empty();
    let _held = writes
        .then(|| crate::state::lock(dir))
        .transpose()
        .map_err(Failure::input)?;
    let state::Updated {
        store,
        mut reasoned,
        source,
        mode,
        was,
        asserted,
        base,
        record,
        mut times,
        lines_compared,
    } = state::update(
        &settings.sources,
        &settings.load,
        &settings.reasoning,
        &settings.change,
        run,
        progress,
    )?;
    let mut clock = Instant::now();
    control::enter(Phase::Output);
    let mut after = None;
    // The derived facts' change is listed for what reads it (the patch, a delta of the state, the net change
    // with the asserted facts); else, after a run from scratch, only counted: no copies of the derived facts.
    let listed = settings.diff.is_some() || base.is_some() || settings.include_asserted;
    let mut counted = None;
    let derived = match was {
        _ if mode == state::Mode::Unchanged => (Vec::new(), Vec::new()),
        Was::Changed { removed, added } => (removed, added),
        Was::Listed(before) => {
            let now = after.insert(sorted_quads(&[&reasoned.overlay], None));
            if listed {
                changes(&before, now)
            } else {
                counted = Some(count_changes(&before, now));
                (Vec::new(), Vec::new())
            }
        }
    };
    let derived_after = |q: &Quad| (reasoned.overlay).contains(q[0], [q[1], q[2], q[3]]);
    // Derived before: derived after and not added, or removed.
    let derived_before = |q: &Quad| {
        derived_after(q) && derived.1.binary_search(q).is_err()
            || derived.0.binary_search(q).is_ok()
    };
    // The output's change: the derived facts', or with the asserted facts written too, the net change of both
    // (a fact no longer asserted but now derived stays in the output).
    let (mut removed, mut added) = if settings.include_asserted {
        let had_asserted = |q: &Quad| {
            asserted.0.binary_search(q).is_ok()
                || (store
                    .quads
                    .graph(q[0])
                    .is_some_and(|i| i.contains([q[1], q[2], q[3]]))
                    && asserted.1.binary_search(q).is_err())
        };
        let has_asserted = |q: &Quad| {
            store
                .quads
                .graph(q[0])
                .is_some_and(|i| i.contains([q[1], q[2], q[3]]))
        };
        let mut removed: Vec<Quad> = (derived.0.iter().chain(&asserted.0))
            .filter(|q| !has_asserted(q) && !derived_after(q))
            .copied()
            .collect();
        let mut added: Vec<Quad> = (derived.1.iter().chain(&asserted.1))
            .filter(|q| !had_asserted(q) && !derived_before(q))
            .copied()
            .collect();
        for list in [&mut removed, &mut added] {
            list.sort_unstable();
            list.dedup();
        }
        (removed, added)
    } else if settings.diff.is_some() {
        derived.clone()
    } else {
        (Vec::new(), Vec::new())
    };
    if settings.output {
        let quads = if settings.include_asserted {
            sorted_quads(&[&reasoned.overlay], Some(&store.quads))
        } else {
            after.unwrap_or_else(|| sorted_quads(&[&reasoned.overlay], None))
        };
        write_facts(settings, &store, &mut reasoned, run, quads)?;
    } else {
        drop(after);
    }
    let (removed_count, added_count) = match counted {
        Some(counts) => counts,
        None if settings.include_asserted => (removed.len(), added.len()),
        None => (derived.0.len(), derived.1.len()),
    };
    if let Some(path) = &settings.diff {
        rdf::sort_quads(&store.dict, &mut removed);
        rdf::sort_quads(&store.dict, &mut added);
        if path.as_os_str() == "-" {
            let stdout = std::io::stdout();
            // On a terminal, C1 controls in the data are shown escaped, not obeyed (as the facts are).
            let style = C1::on_terminal(stdout.is_terminal(), C1::Unicode);
            let out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
            rdf::write_patch(&store.dict, &removed, &added, C1Escaped::new(out, style))
                .and_then(|mut out| out.flush())
                .map_err(output::OutputError::Stdout)?;
        } else {
            // Compressed as its extension says (`patch.rdfp.gz`), as `-o` is.
            files::write_atomically(path, |w| {
                crate::codec::write_through(crate::codec::Codec::of_path(path), w, |w| {
                    rdf::write_patch(&store.dict, &removed, &added, w).map(|_| ())
                })
            })
            .map_err(|e| {
                Failure::from(output::OutputError::Write {
                    path: path.clone(),
                    reason: e.to_string(),
                })
            })?;
        }
    }
    drop((removed, added));
    times.push(("output", clock.elapsed()));
    clock = Instant::now();
    let capped = report_cap(reasoned.report.as_ref());
    let (asserted_removed, asserted_added) = (asserted.0.len(), asserted.1.len());
    if source == state::Source::Ran {
        let dir = settings.reasoning.state.as_deref().expect("--state");
        let delta = base.as_ref().map(|(files, counts)| {
            (
                crate::state::format::Delta {
                    dict: store.dict.tail_since(*counts),
                    prefixes: store.prefixes.clone(),
                    asserted,
                    derived,
                },
                files,
            )
        });
        let delta = delta.as_ref().map(|(d, files)| (d, *files));
        if !state::save(dir, record, &store, &reasoned, delta, progress)? {
            warn(format_args!(
                "{:?}",
                Report::new(StateNotWritten {
                    dir: dir.display().to_string()
                })
            ));
        }
        times.push(("save", clock.elapsed()));
    }
    let mut extra = serde_json::Map::new();
    extra.insert("mode".into(), mode.name().into());
    if let state::Mode::Full(why) = &mode {
        extra.insert("mode_reason".into(), why.as_str().into());
    }
    extra.insert("asserted_removed".into(), asserted_removed.into());
    extra.insert("asserted_added".into(), asserted_added.into());
    extra.insert("output_removed".into(), removed_count.into());
    extra.insert("output_added".into(), added_count.into());
    extra.insert(
        "lines_compared".into(),
        lines_compared.map_or(
            serde_json::Value::Null,
            |(new, gone)| serde_json::json!({"new": new, "gone": gone}),
        ),
    );
    if let state::Mode::Incremental(m) = &mode {
        extra.insert("overdeleted".into(), m.overdeleted.into());
        extra.insert("rederived".into(), m.rederived.into());
        extra.insert("reevaluated_rules".into(), m.reevaluated.into());
        for (name, t) in ["overdelete", "rederive", "insert"]
            .into_iter()
            .zip(m.times)
        {
            times.push((name, t));
        }
    }
    extra.insert(
        "phases".into(),
        serde_json::Value::Object(
            times
                .iter()
                .map(|(name, t)| ((*name).to_owned(), t.as_secs_f64().into()))
                .collect(),
        ),
    );
    let report = reasoned.report.clone().unwrap_or_default();
    write_stats(&settings.reasoning, &report, Some(extra))?;
    Ok(if capped {
        Outcome::Capped
    } else {
        Outcome::Done
    })
}

/// No fact matches `--fact`.
#[derive(Debug, Error, Diagnostic)]
#[error("{fact} is neither derived nor asserted")]
#[diagnostic(code(reasonctl::explain::not_derived), help("{help}"))]
pub struct NotDerived {
    fact: String,
    help: String,
}

/// No fact matches `--fact` after a capped run: it may follow from the reasoning the cap cut short.
#[derive(Debug, Error, Diagnostic)]
#[error("{fact} was not derived before reasoning was capped, and is not asserted")]
#[diagnostic(
    code(reasonctl::explain::capped),
    help(
        "reasoning stopped at a budget before its fixpoint, so the fact may still follow: raise the limit the warning above names (--timeout, --max-facts, --max-iterations, --max-memory) and explain it again"
    )
)]
pub struct NotDerivedCapped {
    fact: String,
}

fn explain(
    settings: &ExplainSettings,
    deadline: Option<Instant>,
    progress: &Progress,
) -> Result<Outcome, Failure> {
    use crate::datalog::explain;
    let run = Run {
        deadline,
        ..Run::default()
    };
    let reasoning = &settings.reasoning;
    let _held = hold_state(reasoning)?;
    let state::Obtained {
        mut store,
        reasoned,
        source,
        now,
        used,
    } = state::obtain(
        &settings.sources,
        &settings.load,
        reasoning,
        run,
        // An explanation reads both orders of most indexes: built in parallel as the state opens, not one by one
        // as they are first read (LUBM_LE(10): 0.13 s against 0.15 s).
        (reasoning.refresh, Orders::All),
        progress,
    )?;
    let program = &reasoned.program;
    let overlay = &reasoned.overlay;
    let capped = report_cap(reasoned.report.as_ref());
    control::enter(Phase::Explain);
    // The prefixes the output uses (the data's, then rdf: rdfs: owl: xsd:) are the ones --fact accepts.
    let prefixes = Prefixes::new(store.prefixes.iter().cloned());
    let target = explain::parse_target(&settings.fact, prefixes.pairs(), &mut store.dict)
        .map_err(Failure::input)?;
    let derived = target.derived(overlay);
    let facts = if derived.is_empty() {
        target.asserted(&store)
    } else {
        derived
    };
    if facts.is_empty() && capped {
        return Err(Failure {
            report: Report::new(NotDerivedCapped {
                fact: settings.fact.trim().to_owned(),
            }),
            exit_code: 3,
            broken_pipe: false,
        });
    }
    if facts.is_empty() {
        let named = |rs: &[usize]| {
            rs.iter()
                .map(|&r| program.rules[r].id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let help = match explain::closest_rules(program, &target, &store.dict) {
            explain::Closest::Could(rules) => format!(
                "rules whose heads could produce it: {}; their bodies matched nothing that produces it (check their premises with `reasonctl query`)",
                named(&rules)
            ),
            explain::Closest::OtherGraph(rules) => format!(
                "rules {} produce such facts, but into another graph: add or change the graph (the 4th term of --fact)",
                named(&rules)
            ),
            explain::Closest::Spelling(rules) if rules.is_empty() => {
                "no rule derives facts like it; check the fact's terms (prefixed names use the data's prefixes)"
                    .to_owned()
            }
            explain::Closest::Spelling(rules) => format!(
                "no rule's head produces its predicate; the rules whose head predicates are closest: {}",
                named(&rules)
            ),
        };
        return Err(Failure {
            report: Report::new(NotDerived {
                fact: settings.fact.trim().to_owned(),
                help,
            }),
            exit_code: 1,
            broken_pipe: false,
        });
    }
    let options = explain::Options {
        depth: settings.depth,
        // The explanation gets what is left of --timeout, less what rendering its nodes takes (about 10 µs a
        // node measured over LUBM(1), twice that set aside).
        timeout: remaining(deadline),
        reserve_per_node: Duration::from_micros(20),
        now: now.unwrap_or_else(DateTime::now),
        path_limit: crate::exec::DEFAULT_PATH_LIMIT,
        cancel: crate::exec::Cancel::new(),
        rule: None,
    };
    let explanation = match explain::explain(program, &store, overlay, &facts, &options) {
        Ok(e) => e,
        Err(e @ explain::ExplainError::Interrupted) => {
            return Err(Failure {
                report: Report::new(e),
                exit_code: 130,
                broken_pipe: false,
            });
        }
        Err(e) => return Err(Failure::input(e)),
    };
    let locations = rule_locations(program);
    let cx = output::explain::Context {
        program,
        locations: &locations,
        terms: &store.dict,
        prefixes: &prefixes,
        color: settings.format == ExplainFormat::Text
            && std::io::stdout().is_terminal()
            && std::env::var_os("NO_COLOR").is_none(),
        deadline,
    };
    control::enter(Phase::Output);
    let (text, whole) = output::explain::render(&cx, &explanation, settings.format);
    write_text(None, &text, settings.format != ExplainFormat::Json)?;
    keep_state(
        source,
        &settings.sources,
        &used,
        &store,
        &reasoned,
        progress,
    )?;
    // An explanation cut by the deadline is a capped run: printed as far as it got, and exit 3.
    let before = match (explanation.incomplete, whole) {
        (true, _) => Some("every rule was replayed"),
        (false, false) => Some("its text was written whole (the output says where it was cut)"),
        (false, true) => None,
    };
    if let Some(before) = before {
        warn(format_args!(
            "{:?}",
            Report::new(Incomplete {
                timeout: settings.timeout.map_or(0.0, |t| t.as_secs_f64()),
                before,
            })
        ));
    }
    Ok(if capped || before.is_some() {
        Outcome::Capped
    } else {
        Outcome::Done
    })
}

/// An explanation cut by its deadline.
#[derive(Debug, Error, Diagnostic)]
#[error("the explanation is incomplete: its {timeout} s deadline passed before {before}")]
#[diagnostic(
    code(reasonctl::explain::incomplete),
    severity(Warning),
    help("raise --timeout, or lower --depth")
)]
pub struct Incomplete {
    timeout: f64,
    before: &'static str,
}

/// Where each rule is written: `file:line:col` of its text, or the stored value's subject (and graph).
fn rule_locations(program: &datalog::Program) -> Vec<String> {
    let mut files: std::collections::HashMap<std::path::PathBuf, Option<String>> =
        std::collections::HashMap::new();
    program
        .rules
        .iter()
        .map(|r| match &r.origin {
            rules::Origin::File { path, offset, .. } => {
                let text = files
                    .entry(path.clone())
                    .or_insert_with(|| rules::source::read_rules_file(path).ok());
                match text {
                    Some(t) => {
                        let (line, col) = crate::excerpt::line_col(t, *offset);
                        format!("{}:{line}:{col}", path.display())
                    }
                    None => path.display().to_string(),
                }
            }
            rules::Origin::Translated { path, node } => {
                format!("{} (RDF syntax), rule {node}", path.display())
            }
            rules::Origin::Stored { subject, graph } => match graph {
                Some(g) => format!("stored on {subject} in graph {g}"),
                None => format!("stored on {subject}"),
            },
        })
        .collect()
}
