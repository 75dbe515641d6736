//! The `reasonctl` binary: parse the arguments, run one command, map the outcome to an exit code.

use std::process::ExitCode;

use clap::Parser;
use reasonctl::app;
use reasonctl::cli::settings::{self, Task};
use reasonctl::cli::{Args, generate};

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
            eprintln!("{:?}", miette::Report::new(e));
            return ExitCode::from(2);
        }
    };
    match task {
        Task::Generate(g) => match generate::generate(g.what, &g.out_dir) {
            Ok(_) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: cannot write into {}: {e}", g.out_dir.display());
                ExitCode::from(2)
            }
        },
        Task::Run(settings) => match app::run(*settings) {
            Ok(outcome) => ExitCode::from(outcome.exit_code()),
            // `reasonctl … | head`: the reader left; that is not an error (the Unix convention).
            Err(failure) if failure.broken_pipe => ExitCode::SUCCESS,
            Err(failure) => {
                eprintln!("{:?}", failure.report);
                ExitCode::from(failure.exit_code)
            }
        },
    }
}
