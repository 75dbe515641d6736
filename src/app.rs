//! This module defines the application layer: validated [`Settings`] in, one command run, an [`Outcome`] or a
//! [`Failure`] (a miette report with its exit code) out. It owns progress display; nothing below it prints.

use miette::Report;

use crate::output::progress::Progress;
use crate::output::{self, OutputTarget, RdfOutputFormat, rdf};
use crate::store::Quad;
use crate::store::load::{self, DataSource, LoadOptions};

/// Everything a run needs, validated once from the command line.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Worker threads (`None`: one per core).
    pub threads: Option<usize>,
    /// No progress display.
    pub quiet: bool,
    /// The command.
    pub command: CommandSettings,
}

/// One command's settings.
#[derive(Clone, Debug)]
pub enum CommandSettings {
    /// `reasonctl materialize`.
    Materialize(MaterializeSettings),
}

/// Settings of `reasonctl materialize`.
#[derive(Clone, Debug)]
pub struct MaterializeSettings {
    /// The data sources, in order.
    pub sources: Vec<DataSource>,
    /// How they are read.
    pub load: LoadOptions,
    /// Where the facts go.
    pub target: OutputTarget,
    /// In which syntax.
    pub format: RdfOutputFormat,
    /// Whether the asserted facts are written too.
    pub include_asserted: bool,
}

/// How a successful run ended; each maps to an exit code.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Done (exit 0).
    Done,
}

impl Outcome {
    /// The process exit code.
    pub fn exit_code(self) -> u8 {
        match self {
            Outcome::Done => 0,
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

impl From<load::LoadError> for Failure {
    fn from(e: load::LoadError) -> Self {
        Failure::input(e)
    }
}

/// Runs one command.
pub fn run(settings: Settings) -> Result<Outcome, Failure> {
    if let Some(threads) = settings.threads {
        // Fails only if a pool was already built (tests running several commands in one process): keep that one.
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global();
    }
    let progress = Progress::new(settings.quiet);
    match settings.command {
        CommandSettings::Materialize(m) => materialize(&m, &progress),
    }
}

fn materialize(settings: &MaterializeSettings, progress: &Progress) -> Result<Outcome, Failure> {
    let store = load::load(&settings.sources, &settings.load, progress)?;
    let mut quads: Vec<Quad> = Vec::new();
    if settings.include_asserted {
        quads.reserve(store.quads.len());
        for (g, index) in store.quads.graphs() {
            quads.extend(index.triples().iter().map(|&[s, p, o]| [g, s, p, o]));
        }
    }
    rdf::sort_quads(&store.dict, &mut quads);
    output::write_dataset(
        &store.dict,
        &store.prefixes,
        &quads,
        settings.format,
        &settings.target,
    )?;
    Ok(Outcome::Done)
}
