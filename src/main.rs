//! The `reasonctl` binary: parse the arguments, run one command, map the outcome to an exit code; stop the
//! command cleanly on a signal, past `--timeout` or at `--max-memory`.

use std::io::Write;
use std::process::ExitCode;
use std::sync::OnceLock;
use std::time::Instant;

use clap::Parser;
use reasonctl::app;
use reasonctl::cli::settings::{self, Task};
use reasonctl::cli::{Args, generate};
use reasonctl::control::{self, Stop};

/// mimalloc: the parsers allocate a string per term on one thread and the loader frees it on another, which the
/// system allocator serializes on its arena lock. Counted, so that `--max-memory` bounds the real heap.
#[global_allocator]
static ALLOCATOR: control::Counting<mimalloc::MiMalloc> = control::Counting(mimalloc::MiMalloc);

unsafe extern "C" {
    /// mimalloc's option setter (libmimalloc-sys links it; its Rust declaration needs a feature we do not use).
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
}

/// `mi_option_purge_delay` in mimalloc 3's `mi_option_t` (libmimalloc-sys 0.1.49): how long freed memory is kept.
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

/// `mi_option_allow_thp` in the same enum: whether mimalloc asks for transparent huge pages (2 MiB) for its arenas.
const MI_OPTION_ALLOW_THP: std::ffi::c_int = 43;

/// The allocator's settings, made before any constructor runs (mimalloc's own initialization among them, which
/// reads them), hence a `.preinit_array` entry rather than the first lines of `main`.
///
/// Freed memory goes back to the system at once, so the process's size follows its heap (which `--max-memory`
/// bounds). On LUBM(10) this is faster as well as smaller: LUBM_L 0.79 s and 146 MB against 1.11 s and 239 MB
/// with mimalloc's default delay (medians of 6, 2-core VM), LUBM_LE 1.37 s and 237 MB against 2.07 s and 350 MB.
///
/// No transparent huge pages: a huge page is resident (and zeroed) whole as soon as one byte of it is touched,
/// and freed memory goes back only in 2 MiB units, so the process is larger; and when the kernel has no free huge
/// page at hand it compacts memory first, which made some runs on a machine with a full page cache 2–3× slower
/// than the same run with 4 KiB pages. LUBM(10), 5 alternating runs each, 2-core VM, medians: LUBM_L 0.78 s /
/// 115 MB without against 0.86 s / 145 MB with, LUBM_LE 1.89 s / 203 MB against 2.54 s / 236 MB; the 100k-edge
/// case 27 MB against 46 MB (`cargo bench --bench datalog`). The option keeps mimalloc from advising huge pages,
/// the process flag keeps the kernel from using them anyway
/// (child processes inherit it; reasonctl starts none).
#[cfg(target_os = "linux")]
extern "C" fn allocator_settings() {
    // SAFETY: plain option setters (they store a value) and a process flag, on the only thread there is.
    unsafe {
        mi_option_set(MI_OPTION_PURGE_DELAY, 0);
        mi_option_set(MI_OPTION_ALLOW_THP, 0);
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".preinit_array")]
static ALLOCATOR_SETTINGS: extern "C" fn() = allocator_settings;

/// Writes a report to stderr; a closed stderr is ignored (exit codes still tell).
fn report(text: std::fmt::Arguments<'_>) {
    let text = text.to_string();
    let _ = writeln!(
        std::io::stderr(),
        "{}",
        reasonctl::excerpt::printable(&text)
    );
}

/// The limits the stop message names.
static LIMITS: OnceLock<app::Limits> = OnceLock::new();

/// Ends the process for a stop from outside the command's own checks: temporary files removed, a message
/// naming the limit and the phase, exit 3 for a limit and 128 + N for signal N.
fn stop(reason: Stop) -> ! {
    let removed = control::discard_temporaries();
    let limits = LIMITS.get().copied().unwrap_or_default();
    report(format_args!(
        "{:?}",
        app::stopped(reason, limits, control::phase(), removed)
    ));
    let code = match reason {
        Stop::Memory | Stop::Time => 3,
        Stop::Signal(n) => 128 + n,
    };
    std::process::exit(code)
}

/// Turns SIGINT, SIGTERM and SIGHUP into a stop, on a thread of their own.
fn watch_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    if let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) {
        let _ = std::thread::Builder::new()
            .name("signals".to_owned())
            .spawn(move || {
                if let Some(signal) = signals.forever().next() {
                    control::stop(Stop::Signal(signal));
                }
            });
    }
}

/// Stops the command at its deadline plus the grace ([`control::grace`]), whatever phase it is in.
fn watch_deadline(started: Instant, limits: app::Limits) {
    let Some(timeout) = limits.timeout else {
        return;
    };
    let Some(at) = control::deadline(started, timeout.saturating_add(control::grace(timeout)))
    else {
        return;
    };
    let _ = std::thread::Builder::new()
        .name("deadline".to_owned())
        .spawn(move || {
            std::thread::sleep(at.saturating_duration_since(Instant::now()));
            control::stop(Stop::Time);
        });
}

/// Runs the command on a thread with a [`reasonctl::STACK`]-byte stack, or on this thread if the system
/// refuses one that large; `Err` if it panicked.
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
    reasonctl::output::files::note_inherited_descriptors();
    control::install(stop);
    watch_signals();
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
        Task::Run(settings) => {
            let limits = settings.limits();
            let _ = LIMITS.set(limits);
            watch_deadline(settings.started, limits);
            match run_on_big_stack(*settings) {
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
            }
        }
    }
}
