//! This module defines the command line: clap [`Args`], their conversion into validated settings, and the hidden
//! `generate` command that writes man pages and shell completions.

pub mod generate;
pub mod settings;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::output::RdfOutputFormat;
use crate::store::load::DataFormat;

/// RDF reasoning from the command line: rules as SPARQL CONSTRUCT or JSON-LD queries, run to a fixpoint.
#[derive(Debug, Parser)]
#[command(name = "reasonctl", version, about, long_about = None, propagate_version = true)]
pub struct Args {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,

    /// Worker threads, 1 to 256 (default: one per core). Output does not depend on it.
    #[arg(long, global = true, value_name = "N")]
    pub threads: Option<usize>,

    /// No progress bars.
    #[arg(short, long, global = true)]
    pub quiet: bool,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Load the data, run the rules to a fixpoint, and write the facts per named graph.
    Materialize(MaterializeArgs),
    /// Run a SPARQL query (SELECT, ASK, CONSTRUCT, DESCRIBE) over the data.
    Query(QueryArgs),
    /// Check rules without running them: every rule that cannot run is an error with a code, the rule id, the
    /// construct in its source and the fix; likely mistakes are warnings.
    Lint(LintArgs),
    /// Show how rules depend on each other: stages (producers first), recursive groups, negated and aggregated
    /// reads; a program that cannot be stratified exits 1 with its cycle.
    Deps(DepsArgs),
    /// Explain derived facts: replay the rules whose heads produce them and show the premises each derivation
    /// used (asserted or derived facts, paths, absences, aggregate rows), as a tree; --depth N explains derived
    /// premises in turn.
    Explain(ExplainArgs),
    /// Write the man pages or shell completions (for packagers).
    #[command(hide = true)]
    Generate(GenerateArgs),
}

/// Data inputs, shared by the commands that read data.
#[derive(Debug, clap::Args)]
pub struct DataArgs {
    /// Data files (Turtle, TriG, N-Triples, N-Quads, RDF/XML, JSON-LD; RDF 1.2 included), plain or compressed
    /// (.gz, .bz2, .xz, .zst: dump.nt.gz); `-` reads stdin. Optional with --state.
    #[arg(value_name = "DATA", required_unless_present = "state")]
    pub data: Vec<String>,

    /// The syntax of every data file, instead of guessing it from the extension (stdin: default nquads).
    #[arg(long, value_name = "FORMAT")]
    pub data_format: Option<DataFormat>,

    /// The base IRI relative IRIs resolve against (default: each file's own file:// IRI).
    #[arg(long, value_name = "IRI")]
    pub base: Option<String>,

    /// Trust the data: skip the parsers' IRI and language-tag validation (about 3x faster on large N-Triples).
    /// Invalid data may then load as broken terms instead of failing; syntax errors still fail.
    #[arg(long)]
    pub lenient: bool,
}

/// `reasonctl materialize`.
#[derive(Debug, clap::Args)]
pub struct MaterializeArgs {
    #[command(flatten)]
    pub data: DataArgs,

    /// Write to FILE (atomically) instead of stdout; the format follows its extension unless --format is given;
    /// a last extension .gz, .bz2, .xz or .zst compresses it (out.nq.gz).
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        conflicts_with = "out_dir"
    )]
    pub output: Option<PathBuf>,

    /// Write one file per graph into DIR (named after the graph IRI, percent-encoded; graphs.tsv lists them).
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,

    /// Compress the output (each file of --out-dir, or stdout); with -o the file's extension says it.
    #[arg(long, value_name = "CODEC", conflicts_with = "output")]
    pub compress: Option<crate::codec::Codec>,

    /// Output syntax (default: trig on stdout, the extension of -o FILE, turtle in --out-dir).
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<RdfOutputFormat>,

    /// Write the asserted facts too, not only the derived ones.
    #[arg(long)]
    pub include_asserted: bool,

    /// With --state and no DATA: add the facts of FILE to the state's data and maintain the derived facts
    /// incrementally, without reading the full data again (repeatable; any data syntax).
    #[arg(long, value_name = "FILE", requires = "state")]
    pub add: Vec<PathBuf>,

    /// With --state and no DATA: remove the facts of FILE from the state's data (facts it does not hold are
    /// ignored) and maintain the derived facts incrementally (repeatable; applied before --add).
    #[arg(long, value_name = "FILE", requires = "state")]
    pub remove: Vec<PathBuf>,

    /// With --state: write the change to the output since the state (derived facts; asserted ones too with
    /// --include-asserted) to FILE as RDF Patch: `D` rows removed, then `A` rows added. `--diff -` writes it to
    /// standard output instead of the facts, which are then written only with -o or --out-dir.
    #[arg(long, value_name = "FILE", requires = "state")]
    pub diff: Option<PathBuf>,

    /// Write a reifier for every derived fact naming the rule credited with it (`reasonctl:rule`); `premises`
    /// adds the premises of that derivation (`reasonctl:premise`). Give it after DATA, or as --provenance=premises.
    #[arg(long, value_name = "WHAT", num_args = 0..=1, default_missing_value = "rule")]
    pub provenance: Option<crate::datalog::provenance::Level>,

    /// With --provenance: write the provenance into the graph IRI instead of each fact's own graph.
    #[arg(long, value_name = "IRI", requires = "provenance")]
    pub provenance_graph: Option<String>,

    /// memory: the planned in-memory executor (the default); dataflow: the program lowered to differential
    /// dataflow and run on --workers threads (for capacity; rules it cannot run yet are refused, see
    /// docs/scale-out.md).
    #[arg(long, value_name = "ENGINE", default_value = "memory", conflicts_with_all = ["state", "provenance", "owl2rl", "max_iterations", "schedule"])]
    pub engine: EngineArg,

    /// With --engine dataflow: the worker threads (default: the machine's cores).
    #[arg(long, value_name = "N", requires = "engine", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub workers: Option<u32>,

    /// With --engine dataflow: run as one of P processes (a cluster; see docs/scale-out.md). Every process is
    /// started with the same command line but for --process, and reads its share of DATA; process 0 writes the
    /// output, or with --out-dir DIR each process writes its share of the facts into DIR/process-I.
    #[arg(long, value_name = "P", requires_all = ["engine", "hosts", "process"], value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub processes: Option<u32>,

    /// With --processes: this process's index, 0 to P-1.
    #[arg(long, value_name = "I", requires = "processes")]
    pub process: Option<u32>,

    /// With --processes: a file listing every process's host:port, one per line in process order (`#` comments).
    #[arg(long, value_name = "FILE", requires = "processes")]
    pub hosts: Option<PathBuf>,

    #[command(flatten)]
    pub reasoning: ReasoningArgs,

    /// Bound the whole command to SECS seconds: reasoning stops in time to write what it derived (capped, exit 3);
    /// a phase still running at the deadline plus a short grace is stopped (exit 3, nothing written).
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,

    /// The time NOW() returns in rules, as an xsd:dateTime (required when a rule reads the clock).
    #[arg(long, value_name = "RFC3339")]
    pub reasoning_time: Option<String>,
}

/// `reasonctl explain`.
#[derive(Debug, clap::Args)]
pub struct ExplainArgs {
    #[command(flatten)]
    pub data: DataArgs,

    /// The fact to explain, `S P O [G]` in N-Triples term syntax (prefixed names may use the data's prefixes;
    /// `?x` in any position selects every matching derived fact; blank nodes as materialize writes them, `_:bN`).
    #[arg(long, value_name = "'S P O [G]'")]
    pub fact: String,

    /// How deep to explain: 1 shows the fact's own derivations, 2 also those of their derived premises, and so
    /// on (at most 10000).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub depth: u32,

    /// Output syntax.
    #[arg(long, value_name = "FORMAT", default_value = "text")]
    pub format: crate::output::explain::ExplainFormat,

    #[command(flatten)]
    pub reasoning: ReasoningArgs,

    /// Bound the whole command to SECS seconds: a capped materialization explains what was derived, and the
    /// explanation stops in time to print what it found, saying it is incomplete.
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,

    /// The time NOW() returns in rules, as an xsd:dateTime (required when a rule reads the clock).
    #[arg(long, value_name = "RFC3339")]
    pub reasoning_time: Option<String>,
}

/// Rules and the limits of a run, shared by the commands that reason.
#[derive(Debug, clap::Args)]
pub struct ReasoningArgs {
    /// A rules file (.rq / .sparql: SPARQL CONSTRUCT rules, several split by `#@rule NAME` lines; .json / .jsonld:
    /// one JSON-LD rule or an array; .srl: SHACL 1.2 Rules; .ttl / .trig: SHACL 1.2 Rules' RDF syntax, see
    /// docs/srl.md) or a folder of them; repeatable. Rules stored in the data as f:rule values (typed f:sparql or
    /// rdf:JSON) and rule sets in SHACL 1.2 Rules' RDF syntax are read too.
    #[arg(long, value_name = "PATH")]
    pub rules: Vec<PathBuf>,

    /// Take stored f:rule values from this named graph only.
    #[arg(long, value_name = "IRI")]
    pub rules_graph: Option<String>,

    /// staged: dependency stages, semi-naive inside recursive groups; whole-program: every rule whole every pass
    /// (the reference evaluation).
    #[arg(long, value_name = "SCHEDULE", default_value = "staged")]
    pub schedule: ScheduleArg,

    /// Do not compile one-rule transitive-closure groups to property paths: iterate them like any recursive group
    /// (for comparison and bisecting).
    #[arg(long)]
    pub no_closure: bool,

    /// Run the OWL 2 RL/RDF rules over the default graph first (owl:sameAs, subclasses and subproperties,
    /// domains and ranges, inverse, symmetric, transitive and functional properties, restrictions, property
    /// chains, keys …); the rules then run over asserted ⊕ OWL facts. Inconsistent data fails (exit 1).
    #[arg(long)]
    pub owl2rl: bool,

    /// Stop after deriving N facts (capped, exit 3).
    #[arg(long, value_name = "N")]
    pub max_facts: Option<usize>,

    /// Bound the process's heap to MIB mebibytes in every phase: reasoning stops in time to write what it
    /// derived (capped, exit 3); loading, planning or writing past it is stopped (exit 3, nothing written).
    /// Without it, the bound is what the machine allows (RAM and swap, or the memory cgroup's limit; under `ulimit -v`, at most half of the address space left).
    #[arg(long, value_name = "MIB")]
    pub max_memory: Option<usize>,

    /// Stop a stage after N passes if its last pass still derived facts (capped, exit 3).
    #[arg(long, value_name = "N")]
    pub max_iterations: Option<usize>,

    /// Write run statistics (derived, capped, capped_reason, capped_rules, pending_rules, stages, rules) as JSON
    /// (`-`: to standard output, when the command's own output goes to a file).
    #[arg(long, value_name = "FILE")]
    pub stats: Option<PathBuf>,

    /// A saved materialization in folder DIR: materialize writes it (whole, atomically) after its output; with
    /// --state and no DATA, commands answer from it without loading data or running rules. DATA and --rules
    /// given with it must be those it was made from (else --refresh).
    #[arg(long, value_name = "DIR")]
    pub state: Option<PathBuf>,

    /// With --state, DATA and --rules: when they differ from the state's, run them and replace the state
    /// instead of refusing.
    #[arg(long, requires = "state")]
    pub refresh: bool,
}

/// `--engine`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineArg {
    /// The planned in-memory executor.
    Memory,
    /// Differential dataflow on worker threads.
    Dataflow,
}

/// `--schedule`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ScheduleArg {
    /// Stages producers first, recursive groups semi-naive.
    Staged,
    /// All rules, whole bodies, every pass (the naive reference; refuses negation and aggregation).
    WholeProgram,
    /// Stage by stage, whole bodies every pass (the naive reference for negation and aggregation).
    NaiveStages,
}

/// `reasonctl query`.
#[derive(Debug, clap::Args)]
pub struct QueryArgs {
    /// Data files (as for materialize); none: an empty dataset. `-` reads stdin.
    #[arg(value_name = "DATA")]
    pub data: Vec<String>,

    /// The query: a file holding it, or its text.
    #[arg(long, value_name = "FILE|TEXT")]
    pub query: String,

    /// The syntax of every data file, instead of guessing it from the extension (stdin: default nquads).
    #[arg(long, value_name = "FORMAT")]
    pub data_format: Option<DataFormat>,

    /// The base IRI for the data and the query (default: each file's own file:// IRI).
    #[arg(long, value_name = "IRI")]
    pub base: Option<String>,

    /// Trust the data: skip the parsers' IRI and language-tag validation (as for materialize).
    #[arg(long)]
    pub lenient: bool,

    /// Answer syntax (default: json for SELECT and ASK, nt for CONSTRUCT and DESCRIBE).
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<crate::output::results::AnswerFormat>,

    /// Write the answer to FILE (atomically) instead of stdout; without --format, an extension that names a
    /// syntax for the answer (.json .srj .xml .srx .csv .tsv for SELECT and ASK, .nt .nq .ttl .trig for
    /// CONSTRUCT and DESCRIBE) picks it, and one for the other kind of answer is refused.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Print the plan, with estimated and actual rows per node, instead of the answer.
    #[arg(long)]
    pub explain_plan: bool,

    /// Bound the whole command to SECS seconds, reasoning and query together (a query past it, or a capped
    /// reasoning run, exits 3).
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,

    /// The time NOW() returns, as an xsd:dateTime (e.g. 2026-01-01T00:00:00Z); default: the current time.
    #[arg(long, value_name = "RFC3339")]
    pub reasoning_time: Option<String>,

    #[command(flatten)]
    pub reasoning: ReasoningArgs,
}

/// `reasonctl lint`.
#[derive(Debug, clap::Args)]
pub struct LintArgs {
    /// Rule files (.rq, .sparql, .json, a .jsonld holding rules), folders of them, and data files carrying
    /// stored f:rule values (their data also checks head graphs and the terms bodies name).
    #[arg(value_name = "FILES", required_unless_present = "rules")]
    pub files: Vec<String>,

    /// A rules file or folder (also accepted as FILES); repeatable.
    #[arg(long, value_name = "PATH")]
    pub rules: Vec<PathBuf>,

    /// Take stored f:rule values from this named graph only.
    #[arg(long, value_name = "IRI")]
    pub rules_graph: Option<String>,

    /// The syntax of every data file, instead of guessing it from the extension.
    #[arg(long, value_name = "FORMAT")]
    pub data_format: Option<DataFormat>,

    /// The base IRI relative IRIs of the data resolve against (default: each file's own file:// IRI).
    #[arg(long, value_name = "IRI")]
    pub base: Option<String>,

    /// human: miette's report (colour on a terminal); json: one object per finding; sarif: SARIF 2.1.0.
    #[arg(long, value_name = "FORMAT", default_value = "human")]
    pub format: crate::lint::report::LintFormat,

    /// Treat warnings as errors (exit 1).
    #[arg(long)]
    pub deny_warnings: bool,

    /// Write the report to FILE (atomically) instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Also check that the rules run on this engine of `materialize --engine` (dataflow: report what it does
    /// not run yet, as errors).
    #[arg(long, value_name = "ENGINE", default_value = "memory")]
    pub engine: EngineArg,
}

/// `reasonctl deps`.
#[derive(Debug, clap::Args)]
pub struct DepsArgs {
    /// Data files carrying stored f:rule values (optional). `-` reads stdin.
    #[arg(value_name = "DATA")]
    pub data: Vec<String>,

    /// A rules file (.rq / .sparql, .json / .jsonld) or a folder of them; repeatable.
    #[arg(long, value_name = "PATH")]
    pub rules: Vec<PathBuf>,

    /// Take stored f:rule values from this named graph only.
    #[arg(long, value_name = "IRI")]
    pub rules_graph: Option<String>,

    /// The syntax of every data file, instead of guessing it from the extension (stdin: default nquads).
    #[arg(long, value_name = "FORMAT")]
    pub data_format: Option<DataFormat>,

    /// The base IRI relative IRIs of the data resolve against (default: each file's own file:// IRI).
    #[arg(long, value_name = "IRI")]
    pub base: Option<String>,

    /// text: stages, groups and edges for a terminal; json: for scripts (see docs/deps.md); dot: Graphviz.
    #[arg(long, value_name = "FORMAT", default_value = "text")]
    pub format: crate::output::deps::DepsFormat,

    /// Show the program a saved materialization (`materialize --state DIR`) was made with.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["data", "rules"])]
    pub state: Option<PathBuf>,

    /// Write to FILE (atomically) instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `reasonctl generate`.
#[derive(Debug, clap::Args)]
pub struct GenerateArgs {
    /// What to generate.
    pub what: GenerateKind,

    /// Where to write it.
    #[arg(long, value_name = "DIR")]
    pub out_dir: PathBuf,
}

/// Generated artefacts.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum GenerateKind {
    /// Man pages (roff), one per command.
    Man,
    /// Shell completions for bash, zsh, fish and PowerShell.
    Completions,
}
