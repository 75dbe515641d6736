//! The `reasonctl` binary: parse the arguments, run one command, map the outcome to an exit code.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use reasonctl::app;
use reasonctl::cli::settings::{self, Task};
use reasonctl::cli::{Args, generate};

/// mimalloc: the parsers allocate a string per term on one thread and the loader frees it on another, which the
/// system allocator serializes on its arena lock.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Writes a report to stderr; a closed stderr is ignored (exit codes still tell).
fn report(text: std::fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// Runs the command on a thread with a [`reasonctl::STACK`]-byte stack, or on this thread if the system refuses one
/// that large; `Err` if it panicked.
fn run_on_big_stack(settings: app::Settings) -> Result<Result<app::Outcome, app::Failure>, String> {
    let (send, receive) = std::sync::mpsc::channel::<app::Settings>();
    match std::thread::Builder::new()
        .stack_size(reasonctl::STACK)
        .spawn(move || receive.recv().map(app::run))
    {
        Ok(handle) => {
            send.send(settings)
                .map_err(|_| "the command thread ended early".to_owned())?;
            match handle.join() {
                Ok(Ok(result)) => Ok(result),
                Ok(Err(_)) => Err("the command thread received nothing".to_owned()),
                Err(_) => Err("the command panicked".to_owned()),
            }
        }
        Err(_) => Ok(app::run(settings)),
    }
}

fn main() -> ExitCode {
    // Diagnostics wrap at spaces only: IRIs and paths stay whole, so they can be copied.
    let _ = miette::set_hook(Box::new(|_| {
        Box::new(
            miette::MietteHandlerOpts::new()
                .break_words(false)
                .word_separator(textwrap::WordSeparator::AsciiSpace)
                .build(),
        )
    }));
    let args = Args::parse();
    let task = match settings::task(args) {
        Ok(task) => task,
        Err(e) => {
            report(format_args!("{:?}", miette::Report::new(e)));
            return ExitCode::from(2);
        }
    };
    match task {
        Task::Generate(g) => match generate::generate(g.what, &g.out_dir) {
            Ok(_) => ExitCode::SUCCESS,
            Err(e) => {
                report(format_args!(
                    "error: cannot write into {}: {e}",
                    g.out_dir.display()
                ));
                ExitCode::from(2)
            }
        },
        Task::Run(settings) => match run_on_big_stack(*settings) {
            Err(e) => {
                report(format_args!("error: {e}"));
                ExitCode::from(101)
            }
            Ok(result) => match result {
                Ok(outcome) => ExitCode::from(outcome.exit_code()),
                // `reasonctl … | head`: the reader left; that is not an error (the Unix convention).
                Err(failure) if failure.broken_pipe => ExitCode::SUCCESS,
                Err(failure) => {
                    report(format_args!("{:?}", failure.report));
                    ExitCode::from(failure.exit_code)
                }
            },
        },
    }
}
