//! The dataflow engine against the in-memory one: every `fixtures/materialize/<case>/` runs again with
//! `--engine dataflow`, on 1 and on 2 workers, and as a cluster of 2 processes × 1 worker on loopback (the test
//! starts both; process 0 writes the output, process 1 nothing) — one test each. A case the engine accepts must give the in-memory
//! engine's output byte for byte and its exit code (`expected.out`, `expected.exit`); a case it refuses must be
//! refused with `reasonctl::rules::engine_unsupported`, naming the rule and `--engine memory`; a case that asks
//! for an option the engine does not take (`--state`, `--provenance`, `--owl2rl`, `--max-iterations`) must be
//! refused by the command line; a capped case (exit 3) must stop with exit 3 too.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Failed, Trial};

#[path = "cases/case.rs"]
mod case;

/// Options `--engine dataflow` conflicts with.
const NOT_TAKEN: &[&str] = &[
    "--state",
    "--provenance",
    "--owl2rl",
    "--max-iterations",
    "--schedule",
];

fn cases() -> Vec<(String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/materialize");
    let mut cases: Vec<(String, PathBuf)> = fs::read_dir(root)
        .expect("fixtures/materialize")
        .flatten()
        .filter(|e| e.path().join("args").is_file())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .collect();
    cases.sort();
    cases
}

/// What a run of one case with the dataflow engine showed.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// Same output and exit code as the in-memory engine.
    Same,
    /// Refused up front, with the documented diagnostic.
    Refused,
    /// An option the engine does not take.
    NotTaken,
    /// Capped, as the in-memory run was.
    Capped,
}

/// How the dataflow engine runs a case.
#[derive(Copy, Clone, Debug)]
enum Layout {
    /// One process with this many worker threads.
    Workers(u32),
    /// Two processes of one worker each, on loopback.
    TwoProcesses,
}

/// Process `i` of a cluster of 2 processes × 1 worker listed in `hosts` (after `--engine dataflow`).
fn cluster_args(hosts: &Path, i: u32) -> Vec<String> {
    let hosts = hosts.display().to_string();
    [
        "--workers",
        "1",
        "--processes",
        "2",
        "--hosts",
        &hosts,
        "--process",
        &i.to_string(),
    ]
    .map(str::to_owned)
    .to_vec()
}

/// A loopback address with a port free now.
fn free_address() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("its address").to_string()
}

/// Runs process 1 of a two-process cluster beside `run0` (process 0), and checks that process 1 wrote nothing,
/// did not panic, and ended as process 0 did (or with success, when process 0 alone judged the result).
fn beside_process_one(
    dir: &Path,
    args: &[String],
    hosts: &Path,
    run0: impl FnOnce(&[String]) -> Result<case::Ran, Failed>,
) -> Result<case::Ran, Failed> {
    let with = |i: u32| -> Vec<String> {
        let mut a = args.to_vec();
        a.extend(cluster_args(hosts, i));
        a
    };
    let mut one = std::process::Command::new(env!("CARGO_BIN_EXE_reasonctl"))
        .args(with(1))
        .current_dir(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    let ran = run0(&with(0));
    // Process 1 ends with process 0 (a failure of either ends the other): waited for, killed past a minute.
    let started = std::time::Instant::now();
    while one.try_wait()?.is_none() {
        if started.elapsed() > std::time::Duration::from_secs(70) {
            let _ = one.kill();
            return Err("process 1 did not end".into());
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let out = one.wait_with_output()?;
    let ran = ran?;
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    let exit = out.status.code().unwrap_or(-1);
    // A budget that stops process 1 first (say --max-memory) ends process 0 as a lost process (exit 1): the
    // cluster was capped, as the in-memory run is.
    if exit == 3 && ran.exit == 1 && ran.stderr.contains("reasonctl::dataflow::cluster_lost") {
        return Ok(case::Ran { exit: 3, ..ran });
    }
    if stderr.contains("panicked") || !stdout.is_empty() || (exit != 0 && exit != ran.exit) {
        return Err(format!(
            "process 1 exited {exit} (process 0: {}), wrote {} bytes:\n{stderr}",
            ran.exit,
            stdout.len()
        )
        .into());
    }
    Ok(ran)
}

fn run(dir: &Path, layout: Layout) -> Result<Outcome, Failed> {
    let mut args = case::args(dir)?;
    if args.first().map(String::as_str) != Some("materialize") {
        return Err("not a materialize case".into());
    }
    if args.iter().any(|a| a == "--engine") {
        // Already a dataflow case (tests/fixtures.rs runs it).
        return Ok(Outcome::Same);
    }
    args.extend(["--engine".into(), "dataflow".into()]);
    let case::Ran {
        stdout,
        stderr,
        exit,
    } = match layout {
        Layout::Workers(n) => {
            args.extend(["--workers".into(), n.to_string()]);
            case::run(dir, &args)?
        }
        Layout::TwoProcesses => {
            let tmp = tempfile::tempdir()?;
            let hosts = tmp.path().join("hosts");
            // A port free when chosen may be taken before a process binds it (other tests connect and listen
            // meanwhile): a run that could not bind (either process) is tried again on other ports.
            let mut tries = 0;
            loop {
                tries += 1;
                fs::write(&hosts, format!("{}\n{}\n", free_address(), free_address()))?;
                let ran = beside_process_one(dir, &args, &hosts, |a| {
                    case::run(dir, a).map_err(Into::into)
                });
                let unbound = match &ran {
                    Ok(r) => r.stderr.contains("reasonctl::dataflow::cluster_bind"),
                    Err(e) => e
                        .message()
                        .is_some_and(|m| m.contains("reasonctl::dataflow::cluster_bind")),
                };
                if !unbound || tries == 3 {
                    break ran?;
                }
            }
        }
    };
    let want_exit = case::want_exit(dir)?;
    if stderr.contains("cannot be used with") {
        return if args
            .iter()
            .any(|a| NOT_TAKEN.iter().any(|n| a.starts_with(n)))
            && exit == 2
        {
            Ok(Outcome::NotTaken)
        } else {
            Err(format!("refused by the command line, exit {exit}:\n{stderr}").into())
        };
    }
    if stderr.contains("reasonctl::rules::engine_unsupported") {
        let flat = stderr.split_whitespace().collect::<Vec<_>>().join(" ");
        return if exit == 1 && flat.contains("--engine memory") && flat.contains("rule ") {
            Ok(Outcome::Refused)
        } else {
            Err(format!("refused without the documented diagnostic, exit {exit}:\n{stderr}").into())
        };
    }
    // A cluster does not read a rule set stored in SHACL Rules' RDF syntax from the data (docs/scale-out.md).
    if stderr.contains("reasonctl::dataflow::cluster_rule_set") {
        let flat = stderr.split_whitespace().collect::<Vec<_>>().join(" ");
        return if matches!(layout, Layout::TwoProcesses)
            && exit == 2
            && flat.contains("--rules file")
        {
            Ok(Outcome::Refused)
        } else {
            Err(format!("refused without the documented diagnostic, exit {exit}:\n{stderr}").into())
        };
    }
    if want_exit == 3 {
        return if exit == 3 {
            Ok(Outcome::Capped)
        } else {
            Err(
                format!("the in-memory run is capped (exit 3), this one exits {exit}:\n{stderr}")
                    .into(),
            )
        };
    }
    if exit != want_exit {
        return Err(format!(
            "exit code {exit}, the in-memory engine's is {want_exit}\nstderr:\n{stderr}"
        )
        .into());
    }
    let want_out = fs::read_to_string(dir.join("expected.out")).unwrap_or_default();
    if stdout != want_out {
        return Err(format!(
            "output differs from the in-memory engine's:\n--- expected\n{want_out}\n--- dataflow\n{stdout}\nstderr:\n{stderr}"
        )
        .into());
    }
    Ok(Outcome::Same)
}

fn main() {
    let args = Arguments::from_args();
    let mut trials: Vec<Trial> = Vec::new();
    for (name, dir) in cases() {
        for layout in [Layout::Workers(1), Layout::Workers(2), Layout::TwoProcesses] {
            let dir = dir.clone();
            let label = match layout {
                Layout::Workers(n) => format!("workers-{n}"),
                Layout::TwoProcesses => "processes-2".to_owned(),
            };
            trials.push(Trial::test(format!("{name}/{label}"), move || {
                run(&dir, layout).map(|_| ())
            }));
        }
    }
    // The comparison must not pass by refusing everything: most cases the engine runs give identical output.
    trials.push(Trial::test("most_cases_run_with_identical_output", || {
        for layout in [Layout::Workers(2), Layout::TwoProcesses] {
            let outcomes: Vec<Outcome> = cases()
                .iter()
                .map(|(_, dir)| run(dir, layout))
                .collect::<Result<_, _>>()?;
            let same = outcomes.iter().filter(|o| **o == Outcome::Same).count();
            if same * 2 < outcomes.len() {
                return Err(format!(
                    "{layout:?}: only {same} of {} cases ran with identical output",
                    outcomes.len()
                )
                .into());
            }
        }
        Ok(())
    }));
    // Cases written for the dataflow engine must run on it, not pass by being refused; cases that compute terms
    // (BIND values, aggregates, a head's triple terms) run on one process, whose workers share the computed terms,
    // and are refused by a cluster of processes, which cannot share them yet.
    for (name, prefix, in_cluster) in [
        (
            "cases_named_dataflow_run_with_identical_output_in_every_layout",
            "dataflow-",
            Outcome::Same,
        ),
        (
            "cases_named_minting_run_on_one_process_and_are_refused_by_a_cluster",
            "minting-",
            Outcome::Refused,
        ),
    ] {
        trials.push(Trial::test(name, move || {
            named_cases_give(
                prefix,
                [
                    (Layout::Workers(1), Outcome::Same),
                    (Layout::Workers(2), Outcome::Same),
                    (Layout::TwoProcesses, in_cluster),
                ],
            )
        }));
    }
    // A cross product of 2,000 facts makes 4M rows in one join step. Counted only after `distinct` gathered them
    // (as before), the run passed 540 MB and stopped on the heap bound (`run::memory`); counted as the rule
    // makes them, it stops on --max-facts at about 300 MB.
    trials.push(Trial::test(
        "max_facts_stops_a_cross_product_as_its_rows_are_made_before_they_fill_the_heap",
        || {
            let dir = tempfile::tempdir()?;
            let data: String = (0..2000)
                .map(|i| format!("<http://e/a{i}> <http://e/p> <http://e/b{i}> .\n"))
                .collect();
            fs::write(dir.path().join("d.nt"), data)?;
            fs::write(
                dir.path().join("r.rq"),
                "CONSTRUCT { ?a <http://e/q> ?d } WHERE { ?a <http://e/p> ?b . ?c <http://e/p> ?d }\n",
            )?;
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_reasonctl"))
                .current_dir(dir.path())
                .args(["-q", "materialize", "d.nt", "--rules", "r.rq", "--engine", "dataflow"])
                .args(["--max-facts", "1000", "--max-memory", "420", "-o", "out.nq"])
                .output()?;
            ended(&out, 3, &["reasonctl::dataflow::max_facts"])?;
            if dir.path().join("out.nq").exists() {
                return Err("a run past --max-facts wrote its output".into());
            }
            Ok(())
        },
    ));
    cluster_trials(&mut trials);
    share_trials(&mut trials);
    libtest_mimic::run(&args, trials).exit();
}

/// Every `fixtures/materialize/<prefix>*` case (there must be one) gives the wanted outcome in each layout.
fn named_cases_give(prefix: &str, wanted: [(Layout, Outcome); 3]) -> Result<(), Failed> {
    let ours: Vec<(String, PathBuf)> = cases()
        .into_iter()
        .filter(|(name, _)| name.starts_with(prefix))
        .collect();
    if ours.is_empty() {
        return Err(format!("no fixtures/materialize/{prefix}* case").into());
    }
    for (name, dir) in ours {
        for (layout, want) in &wanted {
            let outcome = run(&dir, *layout)?;
            if outcome != *want {
                return Err(format!("{name} {layout:?}: {outcome:?}, not {want:?}").into());
            }
        }
    }
    Ok(())
}

/// A transitive closure over a chain of `n` nodes: rules, data (in `dir`).
fn chain(dir: &Path, n: usize) -> (PathBuf, PathBuf) {
    let rules = dir.join("chain.rq");
    fs::write(
        &rules,
        "PREFIX : <http://e/>\n#@rule base\nCONSTRUCT { ?x :reach ?y } WHERE { ?x :edge ?y }\n\
         #@rule step\nCONSTRUCT { ?x :reach ?z } WHERE { ?x :reach ?y . ?y :edge ?z }\n",
    )
    .unwrap();
    let data = dir.join("chain.nt");
    let text: String = (0..n)
        .map(|i| format!("<http://e/n{i}> <http://e/edge> <http://e/n{}> .\n", i + 1))
        .collect();
    fs::write(&data, text).unwrap();
    (rules, data)
}

/// `reasonctl materialize DATA --rules RULES --engine dataflow --workers 1 --processes 2 --hosts HOSTS
/// --process I` plus `extra`, in `dir`.
fn process(
    dir: &Path,
    i: u32,
    hosts: &Path,
    data: &Path,
    rules: &Path,
    extra: &[&str],
) -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_reasonctl"));
    c.current_dir(dir)
        .arg("materialize")
        .arg(data)
        .arg("--rules")
        .arg(rules)
        .args(["--engine", "dataflow"])
        .args(cluster_args(hosts, i))
        .args(extra)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    c
}

fn hosts_file(dir: &Path) -> PathBuf {
    let hosts = dir.join("hosts");
    fs::write(&hosts, format!("{}\n{}\n", free_address(), free_address())).unwrap();
    hosts
}

/// The run's folded stderr, when it exited `exit` and its stderr says every one of `says`; else the failure.
fn ended(out: &std::process::Output, exit: i32, says: &[&str]) -> Result<String, Failed> {
    let err = text(&out.stderr);
    if out.status.code() != Some(exit) || says.iter().any(|s| !err.contains(s)) {
        return Err(format!(
            "exit {:?} (want {exit}, saying {says:?}): {err}",
            out.status.code()
        )
        .into());
    }
    Ok(err)
}

/// Runs both processes of a two-process cluster over `data` and `rules` with `--max-facts max` and `out` (`-o
/// out.nq` or `--out-dir out`), each within 120 s, and checks that each ended with the budget's error (exit 3)
/// at a count in `counts`, and that nothing was written.
fn stopped_past_max_facts(
    dir: &Path,
    hosts: &Path,
    (data, rules): (&Path, &Path),
    (max, out): (usize, &[&str]),
    counts: std::ops::RangeInclusive<usize>,
) -> Result<(), Failed> {
    let max_text = max.to_string();
    let mut args = vec!["--max-facts", max_text.as_str()];
    args.extend(out);
    let one = process(dir, 1, hosts, data, rules, &args).spawn()?;
    let zero = process(dir, 0, hosts, data, rules, &args).spawn()?;
    let (zero, one) = (within(zero, 120)?, within(one, 120)?);
    let past = format!("past --max-facts {max}");
    for ran in [&zero, &one] {
        let err = ended(ran, 3, &["reasonctl::dataflow::max_facts", &past])?;
        let derived = stopped_at(&err)?;
        if !counts.contains(&derived) {
            return Err(format!("stopped at {derived} facts: {err}").into());
        }
    }
    if dir.join("out.nq").exists() || dir.join("out").exists() {
        return Err(format!("{out:?}: output was written").into());
    }
    Ok(())
}

/// The count a `max_facts` error says the run stopped at ("derived N facts").
fn stopped_at(err: &str) -> Result<usize, Failed> {
    err.split("derived ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("no count in: {err}").into())
}

/// The child's output if it ends within `seconds`; else it is killed, and the test fails: it hung.
fn within(mut child: std::process::Child, seconds: u64) -> Result<std::process::Output, Failed> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    while child.try_wait()?.is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("still running after {seconds} s: it hung").into());
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Ok(child.wait_with_output()?)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Data for a cluster that reads shares: an N-Triples file the processes cut (blank nodes met on both sides of
/// every cut), a TriG file read whole by one process, holding a stored rule and the named graph a rule head
/// writes into; and a rules file. The file names, in order.
fn shared_data(dir: &Path) -> Vec<String> {
    let mut nt = String::new();
    for i in 0..3000 {
        let s = if i % 9 == 0 {
            format!("_:b{}", i % 40)
        } else {
            format!("<http://e/n{i}>")
        };
        nt.push_str(&format!("{s} <http://e/edge> <http://e/n{}> .\n", i + 1));
        if i % 13 == 0 {
            nt.push_str(&format!("_:b{} <http://e/tag> \"t{i}\" .\n", i % 40));
        }
    }
    fs::write(dir.join("a.nt"), nt).unwrap();
    fs::write(
        dir.join("b.trig"),
        "PREFIX : <http://e/>\nPREFIX f: <https://ns.flur.ee/db#>\n:n3000 :edge _:z .\n\
         :out { :n0 :edge :n1 }\n\
         :rules { :tagged f:rule \"PREFIX : <http://e/> CONSTRUCT { ?y :tagged ?t } WHERE { ?x :tag ?t . ?x :edge ?y }\"^^f:sparql }\n",
    )
    .unwrap();
    fs::write(
        dir.join("r.rq"),
        "PREFIX : <http://e/>\n#@rule base\nCONSTRUCT { ?x :reach ?y } WHERE { ?x :edge ?y FILTER NOT EXISTS { ?x :tag ?t } }\n\
         #@rule step\nCONSTRUCT { ?x :reach ?z } WHERE { ?x :reach ?y . ?y :edge ?z }\n\
         #@rule out\nCONSTRUCT { GRAPH :out { ?x :near ?y } } WHERE { ?x :edge ?y . ?y :tagged ?t }\n",
    )
    .unwrap();
    // Compressed N-Triples: cut between blocks of lines (one block at this size), its own blank-node labels.
    let mut gz = flate2::write::GzEncoder::new(
        fs::File::create(dir.join("c.nt.gz")).unwrap(),
        flate2::Compression::fast(),
    );
    for i in 0..500 {
        writeln!(gz, "_:b{} <http://e/edge> <http://e/n{}> .", i % 7, i * 3).unwrap();
    }
    gz.finish().unwrap();
    vec!["a.nt".into(), "b.trig".into(), "c.nt.gz".into()]
}

/// `reasonctl materialize FILES --rules r.rq` with `extra`, in `dir`, as process `i` of the cluster in `hosts`
/// (`None`: the in-memory engine).
fn materialize_in(
    dir: &Path,
    files: &[String],
    cluster: Option<(&Path, u32, u32)>,
    extra: &[&str],
) -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_reasonctl"));
    c.current_dir(dir)
        .arg("materialize")
        .args(files)
        .args(["--rules", "r.rq"])
        .args(extra)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    if let Some((hosts, processes, i)) = cluster {
        c.args(["--engine", "dataflow", "--workers", "1", "--processes"])
            .arg(processes.to_string())
            .arg("--hosts")
            .arg(hosts)
            .arg("--process")
            .arg(i.to_string());
    }
    c
}

/// A cluster of 2 processes in `dir`, process 1 given `files1`, process 0 `files0` and `-o out0.nq`, process 1
/// `-o out1.nq`: how each ended (within 2 minutes), after checking that neither wrote its output.
fn failed_pair(
    dir: &Path,
    (files0, files1): (&[String], &[String]),
) -> Result<(std::process::Output, std::process::Output), Failed> {
    let hosts = hosts_file(dir);
    let one = materialize_in(dir, files1, Some((&hosts, 2, 1)), &["-o", "out1.nq"]).spawn()?;
    let zero = materialize_in(dir, files0, Some((&hosts, 2, 0)), &["-o", "out0.nq"]).spawn()?;
    let (zero, one) = (within(zero, 120)?, within(one, 120)?);
    if dir.join("out0.nq").exists() || dir.join("out1.nq").exists() {
        return Err("a process wrote its output".into());
    }
    Ok((zero, one))
}

/// Each process of a cluster reads its share of the data; the output is the in-memory engine's, byte for byte.
fn share_trials(trials: &mut Vec<Trial>) {
    for processes in [2u32, 3] {
        for extra in [&[][..], &["--include-asserted"][..]] {
            let name = format!(
                "cluster/{processes}_processes_reading_shares_of_the_data_write_the_in_memory_output{}",
                if extra.is_empty() {
                    ""
                } else {
                    "_with_the_asserted_facts"
                }
            );
            trials.push(Trial::test(name, move || {
                let tmp = tempfile::tempdir()?;
                let dir = tmp.path();
                let files = shared_data(dir);
                let hosts = dir.join("hosts");
                let addresses: Vec<String> = (0..processes).map(|_| free_address()).collect();
                fs::write(&hosts, addresses.join("\n"))?;
                let mut others = Vec::new();
                for i in 1..processes {
                    let out = format!("out{i}.nq");
                    let args = [extra, &["-o", &out][..]].concat();
                    others.push(
                        materialize_in(dir, &files, Some((&hosts, processes, i)), &args).spawn()?,
                    );
                }
                let args = [extra, &["-o", "out0.nq"][..]].concat();
                let zero = within(
                    materialize_in(dir, &files, Some((&hosts, processes, 0)), &args).spawn()?,
                    120,
                )?;
                ended(&zero, 0, &[])?;
                for (i, other) in others.into_iter().enumerate() {
                    let out = within(other, 120)?;
                    ended(&out, 0, &[])?;
                    if dir.join(format!("out{}.nq", i + 1)).exists() {
                        return Err(format!("process {} wrote output", i + 1).into());
                    }
                }
                let args = [extra, &["-o", "memory.nq"][..]].concat();
                ended(&materialize_in(dir, &files, None, &args).output()?, 0, &[])?;
                let (memory, cluster) = (
                    fs::read(dir.join("memory.nq"))?,
                    fs::read(dir.join("out0.nq"))?,
                );
                // Derived facts of every kind: the stored rule's, the named graph's, across the cut.
                let text = String::from_utf8_lossy(&memory);
                for needle in [
                    "<http://e/tagged>",
                    "<http://e/near>",
                    "<http://e/reach> _:",
                ] {
                    if !text.contains(needle) {
                        return Err(format!("the in-memory output lacks {needle}").into());
                    }
                }
                if memory != cluster {
                    return Err(format!(
                        "the cluster wrote {} bytes, the in-memory engine {}",
                        cluster.len(),
                        memory.len()
                    )
                    .into());
                }
                Ok(())
            }));
        }
    }
    trials.push(Trial::test(
        "cluster/a_process_that_cannot_read_its_share_ends_every_process_with_its_error",
        || {
            let tmp = tempfile::tempdir()?;
            let dir = tmp.path();
            let mut files = shared_data(dir);
            // The last file, read by process 1, has a syntax error on its line 2.
            fs::write(dir.join("c.ttl"), "@prefix : <http://e/> .\n:a :b .\n")?;
            files.push("c.ttl".into());
            let (zero, one) = failed_pair(dir, (&files, &files))?;
            ended(&one, 2, &["c.ttl:2"])?;
            ended(
                &zero,
                2,
                &[
                    "reasonctl::dataflow::cluster_input",
                    "process 1 could not read its share",
                    "c.ttl",
                ],
            )?;
            Ok(())
        },
    ));
    trials.push(Trial::test(
        "cluster/a_rule_set_stored_in_the_data_in_shacl_rules_rdf_syntax_is_refused_by_every_process",
        || {
            let tmp = tempfile::tempdir()?;
            let dir = tmp.path();
            fs::copy(
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("fixtures/materialize/stored-srl-rdf-syntax/data.ttl"),
                dir.join("rules.ttl"),
            )?;
            let mut files = shared_data(dir);
            files.insert(0, "rules.ttl".into());
            let (zero, one) = failed_pair(dir, (&files, &files))?;
            // Process 0 reads the file that holds it; process 1 hears why.
            let says = ["reasonctl::dataflow::cluster_rule_set", "http://example.org/program"];
            ended(&zero, 2, &[&says[..], &["--rules file"]].concat())?;
            ended(&one, 2, &["reasonctl::dataflow::cluster_input", "process 0"])?;
            Ok(())
        },
    ));
    trials.push(Trial::test(
        "cluster/processes_given_other_data_files_refuse_to_run",
        || {
            let tmp = tempfile::tempdir()?;
            let dir = tmp.path();
            let files = shared_data(dir);
            let (zero, one) = failed_pair(dir, (&files, &files[..1]))?;
            for out in [&zero, &one] {
                ended(
                    out,
                    2,
                    &["reasonctl::dataflow::cluster_mismatch", "other data files"],
                )?;
            }
            Ok(())
        },
    ));
}

/// The cluster's own failures: each ends every process with a clear error, and nothing is written.
fn cluster_trials(trials: &mut Vec<Trial>) {
    trials.push(Trial::test(
        "cluster/processes_on_other_rules_both_refuse_to_run",
        || {
            let tmp = tempfile::tempdir()?;
            let (rules, data) = chain(tmp.path(), 5);
            let other = tmp.path().join("other.rq");
            fs::write(
                &other,
                "PREFIX : <http://e/>\nCONSTRUCT { ?y :back ?x } WHERE { ?x :edge ?y }\n",
            )?;
            let hosts = hosts_file(tmp.path());
            let one = process(tmp.path(), 1, &hosts, &data, &other, &[]).spawn()?;
            let zero = process(tmp.path(), 0, &hosts, &data, &rules, &["-o", "out.nq"]).output()?;
            let one = one.wait_with_output()?;
            for out in [&zero, &one] {
                ended(
                    out,
                    2,
                    &["reasonctl::dataflow::cluster_mismatch", "same DATA"],
                )?;
            }
            if tmp.path().join("out.nq").exists() {
                return Err("process 0 wrote its output".into());
            }
            Ok(())
        },
    ));
    trials.push(Trial::test(
        "cluster/a_process_that_never_comes_is_a_timeout_within_the_budget",
        || {
            let tmp = tempfile::tempdir()?;
            let (rules, data) = chain(tmp.path(), 5);
            let hosts = hosts_file(tmp.path());
            let started = std::time::Instant::now();
            let zero = process(
                tmp.path(),
                0,
                &hosts,
                &data,
                &rules,
                &["--timeout", "1", "-o", "out.nq"],
            )
            .output()?;
            ended(&zero, 3, &["reasonctl::dataflow::timeout"])?;
            if started.elapsed() > std::time::Duration::from_secs(10)
                || tmp.path().join("out.nq").exists()
            {
                return Err("it waited past its budget, or wrote its output".into());
            }
            Ok(())
        },
    ));
    trials.push(Trial::test(
        "a_run_out_of_time_stops_its_dataflow_itself_not_by_the_watchdog",
        || {
            let tmp = tempfile::tempdir()?;
            // About a million derived facts: seconds of work on one worker.
            let (rules, data) = chain(tmp.path(), 1500);
            let started = std::time::Instant::now();
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_reasonctl"))
                .current_dir(tmp.path())
                .arg("materialize")
                .arg(&data)
                .arg("--rules")
                .arg(&rules)
                .args(["--engine", "dataflow", "--workers", "1", "--timeout", "1"])
                .args(["-o", "out.nq"])
                .output()?;
            // The engine drops its dataflow at the deadline; left to run, timely would step it to its end
            // and the run-wide watchdog (`reasonctl::run::timeout`) would stop the process instead.
            let err = ended(&out, 3, &["reasonctl::dataflow::timeout"])?;
            if err.contains("reasonctl::run::timeout")
                || started.elapsed() > std::time::Duration::from_secs(5)
                || tmp.path().join("out.nq").exists()
            {
                return Err(
                    format!("not stopped by the engine in time, or output written: {err}").into(),
                );
            }
            Ok(())
        },
    ));
    trials.push(Trial::test(
        "cluster/a_process_killed_mid_run_ends_the_other_with_nothing_written",
        || {
            let tmp = tempfile::tempdir()?;
            // About a million derived facts: seconds of work on one worker each, ample time to kill one.
            let (rules, data) = chain(tmp.path(), 1500);
            let hosts = hosts_file(tmp.path());
            let mut one = process(tmp.path(), 1, &hosts, &data, &rules, &[]).spawn()?;
            let zero = process(tmp.path(), 0, &hosts, &data, &rules, &["-o", "out.nq"]).spawn()?;
            std::thread::sleep(std::time::Duration::from_millis(700));
            one.kill()?;
            let _ = one.wait();
            let zero = zero.wait_with_output()?;
            let err = ended(
                &zero,
                1,
                &["reasonctl::dataflow::cluster_lost", "nothing was written"],
            )?;
            if err.contains("panicked") || tmp.path().join("out.nq").exists() {
                return Err("process 0 panicked or wrote its output".into());
            }
            Ok(())
        },
    ));
    trials.push(Trial::test(
        "cluster/a_process_out_of_time_ends_the_other_which_has_no_budget_with_the_reason",
        || {
            let tmp = tempfile::tempdir()?;
            // About a million derived facts: seconds of work, so process 0's one-second budget ends it first.
            let (rules, data) = chain(tmp.path(), 1500);
            let hosts = hosts_file(tmp.path());
            let one = process(tmp.path(), 1, &hosts, &data, &rules, &[]).spawn()?;
            let zero = process(
                tmp.path(),
                0,
                &hosts,
                &data,
                &rules,
                &["--timeout", "1", "-o", "out.nq"],
            )
            .spawn()?;
            // Both waited for (and killed if they hang) before either is judged: no process outlives the test.
            let (zero, one) = (within(zero, 30), within(one, 30));
            ended(
                &zero?,
                3,
                &["reasonctl::dataflow::timeout", "nothing was written"],
            )?;
            // Process 1 has no budget: process 0 announced its timeout to every worker before it stopped, so
            // process 1 stops too and says why, with the budget's exit. (A process that stopped by returning
            // would close its links cleanly, and process 1 would wait forever.)
            ended(
                &one?,
                3,
                &["reasonctl::dataflow::cluster_timeout", "× process 0 of"],
            )?;
            if tmp.path().join("out.nq").exists() {
                return Err("process 0 wrote its output".into());
            }
            Ok(())
        },
    ));
    trials.push(Trial::test(
        "cluster/out_dir_has_each_process_write_its_share_and_the_shares_are_the_in_memory_output",
        || {
            let tmp = tempfile::tempdir()?;
            let (rules, data) = chain(tmp.path(), 30);
            let hosts = hosts_file(tmp.path());
            let args = [
                "--include-asserted",
                "--format",
                "nquads",
                "--out-dir",
                "out",
            ];
            let one = process(tmp.path(), 1, &hosts, &data, &rules, &args).spawn()?;
            let zero = process(tmp.path(), 0, &hosts, &data, &rules, &args).output()?;
            let one = one.wait_with_output()?;
            ended(&zero, 0, &[])?;
            ended(&one, 0, &[])?;
            let memory = std::process::Command::new(env!("CARGO_BIN_EXE_reasonctl"))
                .current_dir(tmp.path())
                .arg("materialize")
                .arg(&data)
                .arg("--rules")
                .arg(&rules)
                .args(["--include-asserted", "-o", "memory.nq"])
                .output()?;
            ended(&memory, 0, &[])?;
            // Each share is a whole --out-dir folder, in the writer's order; none is empty, no fact is in two,
            // and together they are the in-memory output.
            let mut union: Vec<String> = Vec::new();
            for i in 0..2 {
                let share = tmp.path().join(format!("out/process-{i}"));
                let index = fs::read_to_string(share.join("graphs.tsv"))?;
                if index != "file\tgraph\ndefault.nq\t\n" {
                    return Err(format!("process {i}'s graphs.tsv: {index:?}").into());
                }
                let text = fs::read_to_string(share.join("default.nq"))?;
                if text.is_empty() {
                    return Err(format!("process {i} wrote an empty share").into());
                }
                union.extend(text.lines().map(str::to_owned));
            }
            let mut expected: Vec<String> = fs::read_to_string(tmp.path().join("memory.nq"))?
                .lines()
                .map(str::to_owned)
                .collect();
            let count = union.len();
            union.sort();
            union.dedup();
            expected.sort();
            if union != expected || count != expected.len() {
                return Err(format!(
                    "{count} lines in the shares, {} distinct, {} in memory",
                    union.len(),
                    expected.len()
                )
                .into());
            }
            Ok(())
        },
    ));
    trials.push(Trial::test(
        "cluster/max_facts_counts_the_whole_cluster_when_each_process_writes_its_share",
        || {
            let tmp = tempfile::tempdir()?;
            // 465 derived facts, about half in each share: each share is under 300, the cluster is not. It
            // stops past 300 facts: while deriving, once the processes' counts sum past the budget, or at the
            // fixpoint's 465 if it comes first.
            let (rules, data) = chain(tmp.path(), 30);
            let hosts = hosts_file(tmp.path());
            stopped_past_max_facts(
                tmp.path(),
                &hosts,
                (&data, &rules),
                (300, &["--out-dir", "out"]),
                301..=465,
            )?;
            Ok(())
        },
    ));
    trials.push(Trial::test(
        "cluster/a_process_past_max_facts_stops_every_process_while_deriving",
        || {
            let tmp = tempfile::tempdir()?;
            // A 400-edge chain's closure: 80,200 derived facts, far past the budget of 1,000 that each process
            // passes on its own long before the fixpoint.
            let (rules, data) = chain(tmp.path(), 400);
            let hosts = hosts_file(tmp.path());
            for out in [&["-o", "out.nq"][..], &["--out-dir", "out"]] {
                // The count where the run stopped: past the budget, short of the fixpoint's.
                stopped_past_max_facts(
                    tmp.path(),
                    &hosts,
                    (&data, &rules),
                    (1000, out),
                    1001..=80_199,
                )?;
            }
            Ok(())
        },
    ));
    trials.push(Trial::test(
        "cluster/a_cluster_past_max_facts_only_in_sum_stops_every_process_while_deriving",
        || {
            let tmp = tempfile::tempdir()?;
            // A 400-edge chain's closure: 80,200 derived facts, each process's `distinct` about half of them and
            // each process making about half: under a budget of 60,000 no process is past it alone, the two
            // together are before the fixpoint.
            let (rules, data) = chain(tmp.path(), 400);
            let hosts = hosts_file(tmp.path());
            // The cluster's count where the run stopped: past the budget, short of the fixpoint's.
            stopped_past_max_facts(
                tmp.path(),
                &hosts,
                (&data, &rules),
                (60_000, &["-o", "out.nq"]),
                60_001..=80_199,
            )?;
            Ok(())
        },
    ));
    trials.push(Trial::test(
        "cluster/a_peer_that_is_not_reasonctl_is_named_unreachable",
        || {
            let tmp = tempfile::tempdir()?;
            let (rules, data) = chain(tmp.path(), 5);
            // "Process 0" is a listener that hangs up on every connection without a handshake.
            let peer = std::net::TcpListener::bind("127.0.0.1:0")?;
            let at = peer.local_addr()?.to_string();
            std::thread::spawn(move || {
                for c in peer.incoming() {
                    drop(c);
                }
            });
            let hosts = tmp.path().join("hosts");
            fs::write(&hosts, format!("{at}\n{}\n", free_address()))?;
            let out = process(tmp.path(), 1, &hosts, &data, &rules, &[]).output()?;
            ended(&out, 1, &["reasonctl::dataflow::cluster_unreachable", &at])?;
            Ok(())
        },
    ));
    trials.push(Trial::test(
        "cluster/an_address_this_process_cannot_listen_on_is_refused",
        || {
            let tmp = tempfile::tempdir()?;
            let (rules, data) = chain(tmp.path(), 5);
            // Process 0's own address is taken.
            let taken = std::net::TcpListener::bind("127.0.0.1:0")?;
            let hosts = tmp.path().join("hosts");
            fs::write(
                &hosts,
                format!("{}\n{}\n", taken.local_addr()?, free_address()),
            )?;
            let out = process(tmp.path(), 0, &hosts, &data, &rules, &[]).output()?;
            ended(&out, 2, &["reasonctl::dataflow::cluster_bind"])?;
            Ok(())
        },
    ));
    trials.push(Trial::test("cluster/a_process_index_past_the_count_and_dataflow_options_without_the_engine_are_refused", || {
        let tmp = tempfile::tempdir()?;
        let (rules, data) = chain(tmp.path(), 5);
        let hosts = hosts_file(tmp.path());
        let out = process(tmp.path(), 2, &hosts, &data, &rules, &[]).output()?;
        ended(&out, 2, &["reasonctl::settings::bad_process"])?;
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_reasonctl"))
            .arg("materialize")
            .arg(&data)
            .arg("--rules")
            .arg(&rules)
            .args(["--engine", "memory", "--workers", "2"])
            .output()?;
        ended(&out, 2, &["reasonctl::settings::needs_dataflow", "--workers"])?;
        Ok(())
    }));
    trials.push(Trial::test(
        "cluster/a_hosts_file_that_does_not_list_every_process_is_refused",
        || {
            let tmp = tempfile::tempdir()?;
            let (rules, data) = chain(tmp.path(), 5);
            let hosts = tmp.path().join("hosts");
            fs::write(&hosts, "# one address only\n127.0.0.1:1\n")?;
            let out = process(tmp.path(), 0, &hosts, &data, &rules, &[]).output()?;
            ended(
                &out,
                2,
                &["reasonctl::settings::bad_hosts", "lists 1 addresses"],
            )?;
            Ok(())
        },
    ));
}
