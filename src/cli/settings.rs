//! This module defines the conversion of parsed [`Args`] into validated [`Settings`], once, before any work.

use miette::Diagnostic;
use thiserror::Error;

use super::{Args, Command, DataArgs, MaterializeArgs};
use crate::app::{CommandSettings, MaterializeSettings, Settings};
use crate::output::{OutputTarget, RdfOutputFormat};
use crate::store::load::{DataSource, LoadOptions};

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
    /// `--threads 0`.
    #[error("--threads must be at least 1")]
    #[diagnostic(
        code(reasonctl::settings::threads),
        help("omit --threads to use one thread per core")
    )]
    Threads,
    /// Stdin named twice.
    #[error("standard input (-) is named more than once")]
    #[diagnostic(code(reasonctl::settings::stdin_twice), help("pass - at most once"))]
    StdinTwice,
}

/// What `main` should do.
#[derive(Debug)]
pub enum Task {
    /// Run a command.
    Run(Settings),
    /// Generate man pages or completions.
    Generate(super::GenerateArgs),
}

/// Validates the arguments.
pub fn task(args: Args) -> Result<Task, SettingsError> {
    if args.threads == Some(0) {
        return Err(SettingsError::Threads);
    }
    let command = match args.command {
        Command::Generate(g) => return Ok(Task::Generate(g)),
        Command::Materialize(m) => CommandSettings::Materialize(materialize(m)?),
    };
    Ok(Task::Run(Settings {
        threads: args.threads,
        quiet: args.quiet,
        command,
    }))
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
        },
    ))
}

fn materialize(args: MaterializeArgs) -> Result<MaterializeSettings, SettingsError> {
    let (sources, load) = data(args.data)?;
    let (target, format) = match (args.output, args.out_dir) {
        (Some(path), _) => {
            let format = match args.format {
                Some(f) => f,
                None => path
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
    Ok(MaterializeSettings {
        sources,
        load,
        target,
        format,
        include_asserted: args.include_asserted,
    })
}
