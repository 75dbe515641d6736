//! This module defines the conversion of parsed [`Args`] into validated [`Settings`], once, before any work.

use miette::Diagnostic;
use thiserror::Error;

use super::{
    Args, Command, DataArgs, DepsArgs, ExplainArgs, LintArgs, MaterializeArgs, QueryArgs,
    ReasoningArgs, ScheduleArg,
};
use crate::app::{
    ChangeSet, CommandSettings, DepsSettings, ExplainSettings, LintSettings, MaterializeSettings,
    QueryInput, QuerySettings, ReasoningSettings, Settings,
};
use crate::datalog::{Budget, Schedule};
use crate::exec::datetime::DateTime;
use crate::output::{OutputTarget, RdfOutputFormat};
use crate::rules::RuleSources;
use crate::store::load::{DataFormat, DataSource, LoadOptions};
use crate::store::well_known;

/// A flag value that cannot be used.
#[derive(Debug, Error, Diagnostic)]
pub enum SettingsError {
    /// `--base` is not an absolute IRI.
    #[error("--base {iri:?} is not an absolute IRI: {message}")]
    #[diagnostic(
        code(reasonctl::settings::bad_base),
        help("pass an absolute IRI such as http://example.org/data/")
    )]
    BadBase {
        /// As given.
        iri: String,
        /// Why.
        message: String,
    },
    /// The output file's extension names no RDF syntax.
    #[error("cannot tell the output syntax from {path:?}")]
    #[diagnostic(
        code(reasonctl::settings::output_format),
        help(
            "name the file .trig, .nq, .ttl or .nt, or pass --format trig|nquads|turtle|ntriples"
        )
    )]
    OutputFormat {
        /// As given.
        path: String,
    },
    /// `--threads 0`, or far more than the machine has cores.
    #[error("--threads {given} is outside 1..={max}")]
    #[diagnostic(
        code(reasonctl::settings::threads),
        help(
            "omit --threads to use one thread per core; more threads than cores do not go faster, and each costs a stack"
        )
    )]
    Threads {
        /// As given.
        given: usize,
        /// The most allowed: 256, or four per core on a larger machine.
        max: usize,
    },
    /// `--timeout` is not a positive number.
    #[error("--timeout {0} is not a positive number of seconds")]
    #[diagnostic(
        code(reasonctl::settings::timeout),
        help("pass seconds, e.g. --timeout 30 or --timeout 0.5")
    )]
    Timeout(f64),
    /// `--reasoning-time` is not an xsd:dateTime.
    #[error("--reasoning-time {0:?} is not a date-time")]
    #[diagnostic(
        code(reasonctl::settings::reasoning_time),
        help("write it as RFC 3339 / xsd:dateTime, e.g. 2026-12-02T15:00:00Z")
    )]
    ReasoningTime(String),
    /// `--query` names neither a readable file nor a query.
    #[error("cannot read the query file {path}: {reason}")]
    #[diagnostic(
        code(reasonctl::settings::query_file),
        help("pass a readable file, or the query text itself")
    )]
    QueryFile {
        /// The path.
        path: String,
        /// Why.
        reason: String,
    },
    /// `--provenance-graph` is not an absolute IRI.
    #[error("--provenance-graph {iri:?} is not an absolute IRI: {message}")]
    #[diagnostic(
        code(reasonctl::settings::provenance_graph),
        help(
            "name the graph the provenance goes to by its IRI, e.g. --provenance-graph http://example.org/provenance"
        )
    )]
    ProvenanceGraph {
        /// As given.
        iri: String,
        /// Why.
        message: String,
    },
    /// `--rules-graph` is not an absolute IRI.
    #[error("--rules-graph {iri:?} is not an absolute IRI: {message}")]
    #[diagnostic(
        code(reasonctl::settings::rules_graph),
        help(
            "name the graph holding the f:rule values by its IRI, e.g. --rules-graph http://example.org/rules"
        )
    )]
    RulesGraph {
        /// As given.
        iri: String,
        /// Why.
        message: String,
    },
    /// `-o FILE` and `--stats FILE` name the same file.
    #[error("--stats and -o both name {path}: one would overwrite the other")]
    #[diagnostic(
        code(reasonctl::settings::stats_is_output),
        help("write the statistics to another file, e.g. --stats stats.json")
    )]
    StatsIsOutput {
        /// The path.
        path: String,
    },
    /// `--stats -` where standard output carries the command's own output.
    #[error("--stats - writes the statistics to standard output, which carries {what}")]
    #[diagnostic(
        code(reasonctl::settings::stats_on_stdout),
        help("give --stats a file (--stats stats.json){or}")
    )]
    StatsOnStdout {
        /// What goes to standard output.
        what: &'static str,
        /// The other way out, if any (` , or send … to a file with -o FILE`).
        or: &'static str,
    },
    /// `--diff FILE` names the file of another flag.
    #[error("--diff and {flag} both name {path}: one would overwrite the other")]
    #[diagnostic(
        code(reasonctl::settings::diff_clash),
        help("write the patch to a file of its own, e.g. --diff changes.rdfp")
    )]
    DiffClash {
        /// The other flag.
        flag: &'static str,
        /// The path.
        path: String,
    },
    /// `--add` / `--remove` with DATA.
    #[error("--add / --remove change the state's data: DATA cannot be given with them")]
    #[diagnostic(
        code(reasonctl::settings::change_with_data),
        help(
            "either give the full new DATA (reasonctl finds what changed), or leave it out and give only the change with --add FILE / --remove FILE"
        )
    )]
    ChangeWithData,
    /// An option of the dataflow engine given with the in-memory engine.
    #[error("{option} is an option of the dataflow engine, but --engine is memory")]
    #[diagnostic(
        code(reasonctl::settings::needs_dataflow),
        help("add --engine dataflow, or leave {option} out to run on the in-memory engine")
    )]
    NeedsDataflow {
        /// The option.
        option: &'static str,
    },
    /// `--process` is not below `--processes`.
    #[error("--process {process} is not one of the {processes} processes (0 to {last})", last = processes - 1)]
    #[diagnostic(
        code(reasonctl::settings::bad_process),
        help("number the processes of a cluster 0, 1, … P-1, one --process each")
    )]
    BadProcess {
        /// `--process`.
        process: u32,
        /// `--processes`.
        processes: u32,
    },
    /// The `--hosts` file cannot be read or does not list one address per process.
    #[error("--hosts {path}: {problem}")]
    #[diagnostic(
        code(reasonctl::settings::bad_hosts),
        help(
            "list every process's host:port, one per line in process order (process 0 first), as many lines as --processes; `#` starts a comment"
        )
    )]
    BadHosts {
        /// The file.
        path: String,
        /// What is wrong, with the line.
        problem: String,
    },
    /// `--rules -`.
    #[error("--rules - : rules cannot be read from standard input")]
    #[diagnostic(
        code(reasonctl::settings::rules_stdin),
        help(
            "write the rules to a file and pass its path; standard input is for data (-), and diagnostics point into rule files by line"
        )
    )]
    RulesStdin,
    /// `--state` with data on standard input.
    #[error("--state cannot record data read from standard input")]
    #[diagnostic(
        code(reasonctl::settings::state_stdin),
        help(
            "write the data to a file and pass its path: a state checks its inputs by their contents later"
        )
    )]
    StateStdin,
    /// An input of a state run that can be read only once.
    #[error(
        "--state records its inputs by their contents, and {path} is not a regular file (a pipe or device is read only once)"
    )]
    #[diagnostic(
        code(reasonctl::settings::state_pipe),
        help(
            "write it to a file and pass its path (a compressed file is read as it is: pass x.nt.gz itself)"
        )
    )]
    StatePipe {
        /// The input.
        path: String,
    },
    /// `--state` names a symbolic link that leads nowhere.
    #[error("--state {path} is a symbolic link to {target}, which does not exist")]
    #[diagnostic(
        code(reasonctl::settings::state_link),
        help("create the folder the link leads to, or give --state the folder itself")
    )]
    StateLink {
        /// The link.
        path: String,
        /// Where it leads.
        target: String,
    },
    /// An output file inside the state folder.
    #[error(
        "{flag} {path} is inside the state folder {state}, which is replaced whole when the state is saved"
    )]
    #[diagnostic(
        code(reasonctl::settings::inside_state),
        help("write it outside the state folder, for example beside it")
    )]
    InsideState {
        /// The flag.
        flag: &'static str,
        /// The path.
        path: String,
        /// The state folder.
        state: String,
    },
    /// Stdin named twice.
    #[error("standard input (-) is named more than once")]
    #[diagnostic(code(reasonctl::settings::stdin_twice), help("pass - at most once"))]
    StdinTwice,
}

/// What `main` should do.
#[derive(Debug)]
pub enum Task {
    /// Run a command.
    Run(Box<Settings>),
    /// Generate man pages or completions.
    Generate(super::GenerateArgs),
}

/// Validates the arguments.
pub fn task(args: Args) -> Result<Task, SettingsError> {
    let started = std::time::Instant::now();
    if let Some(given) = args.threads {
        let max = max_threads();
        if given == 0 || given > max {
            return Err(SettingsError::Threads { given, max });
        }
    }
    let command = match args.command {
        Command::Generate(g) => return Ok(Task::Generate(g)),
        Command::Materialize(m) => CommandSettings::Materialize(materialize(m)?),
        Command::Explain(e) => CommandSettings::Explain(explain(e)?),
        Command::Query(q) => CommandSettings::Query(query(q)?),
        Command::Deps(d) => CommandSettings::Deps(deps(d)?),
        Command::Lint(l) => CommandSettings::Lint(lint(l)?),
    };
    Ok(Task::Run(Box::new(Settings {
        threads: args.threads,
        quiet: args.quiet,
        started,
        command,
    })))
}

/// The most `--threads`: 256, or four per core on a machine with more than 64 cores. Every worker gets the
/// command thread's stack, and starting ten thousand of them takes longer than a small run itself.
fn max_threads() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    cores.saturating_mul(4).max(256)
}

fn data(args: DataArgs) -> Result<(Vec<DataSource>, LoadOptions), SettingsError> {
    if let Some(base) = &args.base {
        oxrdf::NamedNode::new(base.as_str()).map_err(|e| SettingsError::BadBase {
            iri: base.clone(),
            message: e.to_string(),
        })?;
    }
    let sources: Vec<DataSource> = args.data.iter().map(|a| DataSource::from_arg(a)).collect();
    if sources.iter().filter(|s| **s == DataSource::Stdin).count() > 1 {
        return Err(SettingsError::StdinTwice);
    }
    Ok((
        sources,
        LoadOptions {
            base: args.base,
            format: args.data_format,
            lenient: args.lenient,
        },
    ))
}

/// `-o -` is standard output, as `-` is standard input for DATA and `--diff -` standard output for the patch (a
/// file named `-` is `./-`).
/// `--stats -` is refused where standard output carries `taken` (what, and how else to send it).
fn stats_beside(
    stats: Option<&std::path::PathBuf>,
    taken: Option<(&'static str, &'static str)>,
) -> Result<(), SettingsError> {
    match (stats, taken) {
        (Some(s), Some((what, or))) if s.as_os_str() == "-" => {
            Err(SettingsError::StatsOnStdout { what, or })
        }
        _ => Ok(()),
    }
}

fn stdout_if_dash(output: Option<std::path::PathBuf>) -> Option<std::path::PathBuf> {
    output.filter(|p| p.as_os_str() != "-")
}

fn query(args: QueryArgs) -> Result<QuerySettings, SettingsError> {
    let output = stdout_if_dash(args.output);
    let (sources, load) = data(DataArgs {
        data: args.data,
        data_format: args.data_format,
        base: args.base.clone(),
        lenient: args.lenient,
    })?;
    // A query names a file when one exists at that path (or when it cannot be query text); else it is the text.
    let path = std::path::Path::new(&args.query);
    let looks_like_query = ["select", "ask", "construct", "describe", "prefix", "base"]
        .iter()
        .any(|k| args.query.trim_start().to_ascii_lowercase().starts_with(k))
        || args.query.contains('{');
    let input = if path.is_file() || !looks_like_query {
        // At most as large as a rules file (`--query /dev/zero` is not read until memory runs out).
        const MAX: u64 = crate::rules::source::MAX_RULES_FILE;
        let text = std::fs::File::open(path)
            .and_then(|f| {
                use std::io::Read;
                let mut bytes = Vec::new();
                f.take(MAX + 1).read_to_end(&mut bytes).map(|_| bytes)
            })
            .map_err(|e| e.to_string())
            .and_then(|bytes| {
                if bytes.len() as u64 > MAX {
                    Err(format!(
                        "it holds more than {} MiB; a query file is at most that large",
                        MAX >> 20
                    ))
                } else {
                    Ok(bytes)
                }
            })
            .and_then(crate::excerpt::utf8_text)
            .map_err(|reason| SettingsError::QueryFile {
                path: args.query.clone(),
                reason,
            })?;
        QueryInput {
            text,
            name: args.query.clone(),
            base: args
                .base
                .clone()
                .or_else(|| Some(crate::store::load::file_iri(path))),
        }
    } else {
        QueryInput {
            text: args.query.clone(),
            name: "<query>".to_owned(),
            base: args.base.clone(),
        }
    };
    let timeout = timeout(args.timeout)?;
    let now = reasoning_time(args.reasoning_time.as_deref())?;
    let reasoning = reasoning(args.reasoning, timeout, now, &sources)?;
    if let (Some(state), Some(out)) = (&reasoning.state, &output) {
        outside(state, "-o", out)?;
    }
    stats_beside(
        reasoning.stats.as_ref(),
        output.is_none().then_some((
            "the answers",
            ", or send the answers to a file with -o FILE",
        )),
    )?;
    Ok(QuerySettings {
        reasoning,
        sources,
        load,
        query: input,
        format: args.format,
        terminal: output.is_none() && std::io::IsTerminal::is_terminal(&std::io::stdout()),
        output,
        explain_plan: args.explain_plan,
        timeout,
        now,
    })
}

fn timeout(t: Option<f64>) -> Result<Option<std::time::Duration>, SettingsError> {
    match t {
        None => Ok(None),
        // Past what a Duration holds (1e20 s): no limit in effect, not a panic.
        Some(t) if t > 0.0 && t.is_finite() => Ok(Some(
            std::time::Duration::try_from_secs_f64(t).unwrap_or(std::time::Duration::MAX),
        )),
        Some(t) => Err(SettingsError::Timeout(t)),
    }
}

fn reasoning_time(t: Option<&str>) -> Result<Option<DateTime>, SettingsError> {
    match t {
        None => Ok(None),
        Some(t) => DateTime::parse(t, well_known::XSD_DATE_TIME)
            .map(Some)
            .ok_or_else(|| SettingsError::ReasoningTime(t.to_owned())),
    }
}

/// Rule sources: `--rules` paths (standard input is not one) and the `--rules-graph` IRI, checked.
fn rule_sources(
    paths: Vec<std::path::PathBuf>,
    graph: Option<String>,
) -> Result<RuleSources, SettingsError> {
    if paths.iter().any(|p| p.as_os_str() == "-") {
        return Err(SettingsError::RulesStdin);
    }
    if let Some(g) = &graph {
        oxrdf::NamedNode::new(g.as_str()).map_err(|e| SettingsError::RulesGraph {
            iri: g.clone(),
            message: e.to_string(),
        })?;
    }
    Ok(RuleSources {
        paths,
        graph,
        texts: Vec::new(),
    })
}

fn reasoning(
    args: ReasoningArgs,
    timeout: Option<std::time::Duration>,
    now: Option<DateTime>,
    sources: &[DataSource],
) -> Result<ReasoningSettings, SettingsError> {
    let state = args.state.map(state_folder).transpose()?;
    if let Some(state) = &state {
        if sources.contains(&DataSource::Stdin) {
            return Err(SettingsError::StateStdin);
        }
        for source in sources {
            if let DataSource::File(path) = source {
                read_once(path)?;
            }
        }
        if let Some(stats) = &args.stats {
            outside(state, "--stats", stats)?;
        }
    }
    Ok(ReasoningSettings {
        sources: rule_sources(args.rules, args.rules_graph)?,
        schedule: match args.schedule {
            ScheduleArg::Staged => Schedule::Staged,
            ScheduleArg::WholeProgram => Schedule::WholeProgram,
            ScheduleArg::NaiveStages => Schedule::NaiveStages,
        },
        budget: Budget {
            timeout,
            max_facts: args.max_facts,
            max_memory: args.max_memory.map(|m| m.saturating_mul(1 << 20)),
            max_iterations: args.max_iterations,
            ..Budget::default()
        },
        now,
        stats: args.stats,
        closure: !args.no_closure,
        owl2rl: args.owl2rl,
        state,
        refresh: args.refresh,
        track: false,
        dataflow: None,
        cluster: None,
    })
}

fn materialize(args: MaterializeArgs) -> Result<MaterializeSettings, SettingsError> {
    let (sources, load) = data(args.data)?;
    let dash_output = args.output.as_deref().is_some_and(|p| p.as_os_str() == "-");
    let (mut target, format) = match (stdout_if_dash(args.output), args.out_dir) {
        (Some(path), _) => {
            let format = match args.format {
                Some(f) => f,
                None => crate::codec::split_path(&path)
                    .0
                    .extension()
                    .and_then(|e| e.to_str())
                    .and_then(RdfOutputFormat::from_extension)
                    .ok_or_else(|| SettingsError::OutputFormat {
                        path: path.display().to_string(),
                    })?,
            };
            (OutputTarget::File(path), format)
        }
        (None, Some(dir)) => (
            OutputTarget::Dir(dir),
            args.format.unwrap_or(RdfOutputFormat::Turtle),
        ),
        (None, None) => (
            OutputTarget::Stdout,
            args.format.unwrap_or(RdfOutputFormat::Trig),
        ),
    };
    let timeout = timeout(args.timeout)?;
    let now = reasoning_time(args.reasoning_time.as_deref())?;
    let mut reasoning = reasoning(args.reasoning, timeout, now, &sources)?;
    reasoning.track = args.provenance.is_some();
    if args.engine == crate::cli::EngineArg::Dataflow {
        reasoning.dataflow = Some(args.workers.map_or_else(
            || std::thread::available_parallelism().map_or(1, usize::from),
            |w| w as usize,
        ));
    }
    if args.engine != crate::cli::EngineArg::Dataflow {
        let given = [
            ("--workers", args.workers.is_some()),
            ("--processes", args.processes.is_some()),
        ];
        if let Some((option, _)) = given.iter().find(|(_, g)| *g) {
            return Err(SettingsError::NeedsDataflow { option });
        }
    }
    if let (Some(processes), Some(process), Some(hosts)) =
        (args.processes, args.process, &args.hosts)
    {
        let mut cluster = cluster(processes, process, hosts)?;
        // `--out-dir DIR` in a cluster: each process writes its share of the facts into `DIR/process-I`.
        if let OutputTarget::Dir(dir) = &mut target {
            cluster.shares = true;
            dir.push(format!("process-{process}"));
        }
        // What decides the dataflow's shape and what gathers where: every process must be given it alike.
        cluster.agreed = format!(
            "out-dir {} include-asserted {} max-facts {:?}",
            cluster.shares, args.include_asserted, reasoning.budget.max_facts
        );
        reasoning.cluster = Some(cluster);
    }
    let changes = !(args.add.is_empty() && args.remove.is_empty());
    if changes && !sources.is_empty() {
        return Err(SettingsError::ChangeWithData);
    }
    if args
        .add
        .iter()
        .chain(&args.remove)
        .any(|p| p.as_os_str() == "-")
    {
        return Err(SettingsError::StateStdin);
    }
    if let Some(state) = &reasoning.state {
        for path in args.add.iter().chain(&args.remove) {
            read_once(path)?;
        }
        match &target {
            OutputTarget::File(out) => outside(state, "-o", out)?,
            OutputTarget::Dir(dir) => outside(state, "--out-dir", dir)?,
            _ => {}
        }
        if let Some(diff) = args.diff.as_deref().filter(|d| d.as_os_str() != "-") {
            outside(state, "--diff", diff)?;
        }
    }
    if let Some(diff) = &args.diff {
        let clash = |flag, other: Option<&std::path::PathBuf>| match other {
            Some(p) if same_file(diff, p) => Err(SettingsError::DiffClash {
                flag,
                path: diff.display().to_string(),
            }),
            _ => Ok(()),
        };
        clash(
            "-o",
            match &target {
                OutputTarget::File(out) => Some(out),
                _ => None,
            },
        )?;
        clash("--stats", reasoning.stats.as_ref())?;
        // `--diff -` puts the patch where the facts go without -o; `-o -` asks for them there too.
        if diff.as_os_str() == "-" && dash_output {
            return Err(SettingsError::DiffClash {
                flag: "-o",
                path: "-".to_owned(),
            });
        }
    }
    if let (OutputTarget::File(out), Some(stats)) = (&target, &reasoning.stats) {
        if same_file(out, stats) {
            return Err(SettingsError::StatsIsOutput {
                path: stats.display().to_string(),
            });
        }
    }
    if let Some(g) = &args.provenance_graph {
        oxrdf::NamedNode::new(g.as_str()).map_err(|e| SettingsError::ProvenanceGraph {
            iri: g.clone(),
            message: e.to_string(),
        })?;
    }
    let provenance = args.provenance.map(|level| (level, args.provenance_graph));
    let patch_on_stdout = args.diff.as_deref().is_some_and(|d| d.as_os_str() == "-");
    stats_beside(
        reasoning.stats.as_ref(),
        if patch_on_stdout {
            Some(("the patch (--diff -)", ", or the patch with --diff FILE"))
        } else if matches!(target, OutputTarget::Stdout) {
            Some((
                "the derived facts",
                ", or send the facts to a file with -o FILE",
            ))
        } else {
            None
        },
    )?;
    // `--diff -` puts the patch on standard output: the facts are written only where -o / --out-dir say.
    let output = !(args.diff.as_deref().is_some_and(|d| d.as_os_str() == "-")
        && matches!(target, OutputTarget::Stdout));
    let compress = match &target {
        OutputTarget::File(path) => crate::codec::Codec::of_path(path),
        _ => args.compress,
    };
    Ok(MaterializeSettings {
        reasoning,
        sources,
        load,
        target,
        format,
        compress,
        include_asserted: args.include_asserted,
        change: ChangeSet {
            add: args.add,
            remove: args.remove,
        },
        output,
        diff: args.diff,
        provenance,
    })
}

fn explain(args: ExplainArgs) -> Result<ExplainSettings, SettingsError> {
    let (sources, load) = data(args.data)?;
    let timeout = timeout(args.timeout)?;
    let now = reasoning_time(args.reasoning_time.as_deref())?;
    let reasoning = reasoning(args.reasoning, timeout, now, &sources)?;
    stats_beside(reasoning.stats.as_ref(), Some(("the explanation", "")))?;
    Ok(ExplainSettings {
        reasoning,
        sources,
        load,
        fact: args.fact,
        depth: args.depth as usize,
        format: args.format,
        timeout,
    })
}

fn deps(args: DepsArgs) -> Result<DepsSettings, SettingsError> {
    let (sources, load) = data(DataArgs {
        data: args.data,
        data_format: args.data_format,
        base: args.base,
        lenient: false,
    })?;
    Ok(DepsSettings {
        rules: rule_sources(args.rules, args.rules_graph)?,
        sources,
        load,
        format: args.format,
        output: stdout_if_dash(args.output),
        state: args.state,
    })
}

/// The state folder `--state` names: a symbolic link is followed (the folder it leads to is the state, saved in
/// its place and locked beside it, whatever the spelling), and must lead to something.
fn state_folder(path: std::path::PathBuf) -> Result<std::path::PathBuf, SettingsError> {
    if !std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Ok(path);
    }
    std::fs::canonicalize(&path).map_err(|_| SettingsError::StateLink {
        path: path.display().to_string(),
        target: std::fs::read_link(&path)
            .map_or_else(|e| e.to_string(), |t| t.display().to_string()),
    })
}

/// An input of a state run: a file read twice (once for its content hash), so not a pipe or a device.
fn read_once(path: &std::path::Path) -> Result<(), SettingsError> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() && !m.is_dir() => Err(SettingsError::StatePipe {
            path: path.display().to_string(),
        }),
        // A missing file or a folder: the load says so.
        _ => Ok(()),
    }
}

/// `path` (given with `flag`) outside the state folder `state`, which a save replaces whole: a file written
/// inside would be lost, or would damage the state.
fn outside(
    state: &std::path::Path,
    flag: &'static str,
    path: &std::path::Path,
) -> Result<(), SettingsError> {
    // A path made absolute, its deepest existing part resolved (links, `..`), the rest as written.
    let resolved = |p: &std::path::Path| -> Option<std::path::PathBuf> {
        let whole = std::path::absolute(p).ok()?;
        let mut existing = whole.as_path();
        let mut rest = Vec::new();
        while std::fs::symlink_metadata(existing).is_err() {
            rest.push(existing.file_name()?);
            existing = existing.parent()?;
        }
        let mut out = std::fs::canonicalize(existing).ok()?;
        out.extend(rest.iter().rev());
        Some(out)
    };
    match (resolved(state), resolved(path)) {
        (Some(s), Some(p)) if p.starts_with(&s) => Err(SettingsError::InsideState {
            flag,
            path: path.display().to_string(),
            state: state.display().to_string(),
        }),
        _ => Ok(()),
    }
}

/// Whether two paths name one file: the same text, or (when both exist) the same file on disk. A device such as
/// `/dev/null` is never "the same output" (writing it twice loses nothing).
fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    let device =
        |p: &std::path::Path| std::fs::metadata(p).is_ok_and(|m| !m.is_file() && !m.is_dir());
    if device(a) || device(b) {
        return false;
    }
    a == b
        || matches!((std::path::absolute(a), std::path::absolute(b)), (Ok(x), Ok(y)) if x == y)
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

/// Whether a `lint` input is rules (a folder, `.rq`, `.sparql`, `.json`, a `.jsonld` whose top level has `where`
/// or `insert`, or a file of no data extension when `--data-format` is not given) rather than data.
fn is_rules_input(arg: &str, data_format: bool) -> bool {
    let path = std::path::Path::new(arg);
    if arg == "-" {
        return false;
    }
    if path.is_dir() {
        return true;
    }
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("rq" | "sparql" | "json") => true,
        Some("jsonld") => {
            let rule =
                |v: &serde_json::Value| v.get("where").is_some() || v.get("insert").is_some();
            match std::fs::read_to_string(path)
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok())
            {
                Some(serde_json::Value::Array(items)) => items.iter().any(rule),
                Some(v) => rule(&v),
                // Unreadable or malformed: as rules, whose reader reports it with the rule syntax in mind.
                None => true,
            }
        }
        // Data by its extension (or all data under --data-format); any other file is rules, as `--rules FILE`
        // reads it (SPARQL).
        _ => !data_format && DataFormat::from_path(path).is_none(),
    }
}

fn lint(args: LintArgs) -> Result<LintSettings, SettingsError> {
    let (rule_args, data_args): (Vec<String>, Vec<String>) = args
        .files
        .into_iter()
        .partition(|f| is_rules_input(f, args.data_format.is_some()));
    let (sources, load) = data(DataArgs {
        data: data_args,
        data_format: args.data_format,
        base: args.base,
        lenient: false,
    })?;
    let mut paths: Vec<std::path::PathBuf> = rule_args.into_iter().map(Into::into).collect();
    paths.extend(args.rules);
    Ok(LintSettings {
        rules: rule_sources(paths, args.rules_graph)?,
        sources,
        load,
        format: args.format,
        deny_warnings: args.deny_warnings,
        output: stdout_if_dash(args.output),
        dataflow: args.engine == crate::cli::EngineArg::Dataflow,
    })
}

/// `--processes P --process I --hosts FILE`: the cluster, its addresses read and checked (one `host:port` per
/// process, in order; blank lines and `#` comments skipped).
fn cluster(
    processes: u32,
    process: u32,
    hosts: &std::path::Path,
) -> Result<crate::datalog::dataflow::Cluster, SettingsError> {
    if process >= processes {
        return Err(SettingsError::BadProcess { process, processes });
    }
    let bad = |problem: String| SettingsError::BadHosts {
        path: hosts.display().to_string(),
        problem,
    };
    let text = std::fs::read_to_string(hosts).map_err(|e| bad(format!("cannot be read: {e}")))?;
    let mut addresses = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let port = line.rsplit_once(':').map(|(_, p)| p);
        if line.contains(char::is_whitespace) || port.is_none_or(|p| p.parse::<u16>().is_err()) {
            return Err(bad(format!(
                "line {}: {line:?} is not a host:port address",
                n + 1
            )));
        }
        addresses.push(line.to_owned());
    }
    if addresses.len() != processes as usize {
        return Err(bad(format!(
            "it lists {} addresses, but --processes is {processes}",
            addresses.len()
        )));
    }
    Ok(crate::datalog::dataflow::Cluster {
        process: process as usize,
        addresses,
        shares: false,
        agreed: String::new(),
    })
}
