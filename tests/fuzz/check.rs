//! The properties every generated input must keep when the binary runs it: no panic, no stack overflow or other
//! signal, no hang, an exit code in the documented set (0, 1, 2, 3), the same output for one thread and two, and
//! for positive programs the same facts from staged semi-naive and whole-program naive evaluation.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one run may take before it counts as a hang.
const HANG: Duration = Duration::from_secs(60);

/// What a run gave.
pub struct Ran {
    /// The exit code (0, 1, 2 or 3).
    pub code: i32,
    /// Standard output.
    pub stdout: Vec<u8>,
    /// Standard error.
    pub stderr: String,
}

/// Runs `bin` in `dir`; `Err` says which property broke.
pub fn run(bin: &str, dir: &Path, args: &[&str]) -> Result<Ran, String> {
    let started = Instant::now();
    let mut child = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {bin}: {e}"))?;
    // Read both pipes on threads, so a full pipe never stalls the child.
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = std::io::Read::read_to_end(&mut out, &mut v);
        v
    });
    let err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = std::io::Read::read_to_end(&mut err, &mut v);
        v
    });
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if started.elapsed() > HANG {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("hang: {args:?} ran past {HANG:?}"));
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let stdout = out.join().unwrap_or_default();
    let stderr = String::from_utf8_lossy(&err.join().unwrap_or_default()).into_owned();
    if stderr.contains("panicked") || stderr.contains("overflowed its stack") {
        return Err(format!("panic: {args:?}\n{stderr}"));
    }
    let Some(code) = status.code() else {
        return Err(format!(
            "killed by a signal ({status:?}): {args:?}\n{stderr}"
        ));
    };
    if !(0..=3).contains(&code) {
        return Err(format!("undocumented exit code {code}: {args:?}\n{stderr}"));
    }
    Ok(Ran {
        code,
        stdout,
        stderr,
    })
}

/// The small dataset rules run over: p0..p3 among n0..n5, a literal, a triple term, and graph `g0`.
pub const DATA: &str = "<http://example.org/n0> <http://example.org/p0> <http://example.org/n1> .\n\
<http://example.org/n1> <http://example.org/p0> <http://example.org/n2> .\n\
<http://example.org/n2> <http://example.org/p1> \"x\" .\n\
<http://example.org/n3> <http://example.org/p2> \"2\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n\
<http://example.org/n4> <http://www.w3.org/1999/02/22-rdf-syntax-ns#reifies> <<( <http://example.org/n0> <http://example.org/p0> <http://example.org/n1> )>> .\n\
<http://example.org/n0> <http://example.org/p3> <http://example.org/n0> <http://example.org/g0> .\n";

/// The same arguments with one thread and with two: the same exit code and output (unless a timeout capped a
/// run, which depends on the machine).
pub fn same_for_1_and_2_threads(bin: &str, dir: &Path, args: &[&str]) -> Result<Ran, String> {
    let one = run(bin, dir, &[&["--threads", "1"], args].concat())?;
    let two = run(bin, dir, &[&["--threads", "2"], args].concat())?;
    if one.code == 3 || two.code == 3 {
        return Ok(one);
    }
    if one.code != two.code || one.stdout != two.stdout {
        return Err(format!(
            "1 and 2 threads differ on {args:?}: exit {} / {}\n{}\n---\n{}",
            one.code,
            two.code,
            String::from_utf8_lossy(&one.stdout),
            String::from_utf8_lossy(&two.stdout)
        ));
    }
    Ok(one)
}

/// A rules file (`ext`: rq or json): lint in every format, deps, and materialize over [`DATA`].
pub fn rules(bin: &str, text: &str, ext: &str) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let name = format!("rules.{ext}");
    std::fs::write(dir.path().join(&name), text).map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join("data.nq"), DATA).map_err(|e| e.to_string())?;
    for format in ["human", "json", "sarif"] {
        run(bin, dir.path(), &["lint", "--format", format, &name])?;
    }
    run(bin, dir.path(), &["deps", "--rules", &name])?;
    same_for_1_and_2_threads(
        bin,
        dir.path(),
        &[
            "materialize",
            "data.nq",
            "--rules",
            &name,
            "--format",
            "nquads",
            "--timeout",
            "30",
        ],
    )?;
    Ok(())
}

/// A data file: materialize with a small program, and lint it (its stored rules, none here).
pub fn data(bin: &str, ext: &str, bytes: &[u8]) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let name = format!("data.{ext}");
    std::fs::write(dir.path().join(&name), bytes).map_err(|e| e.to_string())?;
    std::fs::write(
        dir.path().join("rules.rq"),
        "PREFIX ex: <http://example.org/>\n#@rule copy\nCONSTRUCT { ?b ex:back ?a } WHERE { ?a ?p ?b FILTER(isIRI(?b)) }\n#@rule two\nCONSTRUCT { ?a ex:two ?c } WHERE { ?a ex:p0 ?b . ?b ex:p0 ?c }\n",
    )
    .map_err(|e| e.to_string())?;
    same_for_1_and_2_threads(
        bin,
        dir.path(),
        &[
            "materialize",
            &name,
            "--rules",
            "rules.rq",
            "--format",
            "nquads",
            "--timeout",
            "30",
        ],
    )?;
    run(bin, dir.path(), &["lint", &name])?;
    Ok(())
}

/// A `--fact` pattern, explained over a small program (a NUL cannot be passed as an argument: it is dropped).
pub fn fact(bin: &str, fact: &str) -> Result<(), String> {
    let fact = fact.replace('\0', "");
    let fact = fact.as_str();
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join("data.nq"), DATA).map_err(|e| e.to_string())?;
    std::fs::write(
        dir.path().join("rules.rq"),
        "PREFIX ex: <http://example.org/>\n#@rule q\nCONSTRUCT { ?a ex:q0 ?b } WHERE { ?a ex:p0 ?b }\n#@rule step\nCONSTRUCT { ?a ex:q0 ?c } WHERE { ?a ex:q0 ?b . ?b ex:p0 ?c }\n",
    )
    .map_err(|e| e.to_string())?;
    for format in ["text", "json", "dot"] {
        run(
            bin,
            dir.path(),
            &[
                "explain", "data.nq", "--rules", "rules.rq", "--fact", fact, "--format", format,
                "--depth", "3",
            ],
        )?;
    }
    Ok(())
}

/// A positive program: staged semi-naive and whole-program naive evaluation derive the same facts, with one
/// thread or two, and both succeed.
pub fn program(bin: &str, data: &str, rules: &str) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join("data.nq"), data).map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join("rules.rq"), rules).map_err(|e| e.to_string())?;
    let args = |schedule: &'static str| {
        [
            "materialize",
            "data.nq",
            "--rules",
            "rules.rq",
            "--format",
            "nquads",
            "--schedule",
            schedule,
        ]
    };
    let staged = same_for_1_and_2_threads(bin, dir.path(), &args("staged"))?;
    let naive = run(bin, dir.path(), &args("whole-program"))?;
    if staged.code != 0 || naive.code != 0 {
        return Err(format!(
            "a positive program failed: staged exit {}, whole-program exit {}\n{}{}",
            staged.code, naive.code, staged.stderr, naive.stderr
        ));
    }
    if staged.stdout != naive.stdout {
        return Err(format!(
            "staged and whole-program differ:\n{}\n---\n{}",
            String::from_utf8_lossy(&staged.stdout),
            String::from_utf8_lossy(&naive.stdout)
        ));
    }
    Ok(())
}
