//! Saved states (`--state DIR`, issue 17): `materialize` writes one; `query`, `explain`, `deps` and `materialize`
//! answer from it as they answer from the data; inputs that differ are refused (or refreshed); a damaged, other
//! format or foreign folder is refused and left as it is; a run killed while saving leaves the previous state.

use std::fs;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

use assert_cmd::Command;

fn reasonctl() -> Command {
    let mut cmd = Command::cargo_bin("reasonctl").expect("binary");
    cmd.timeout(Duration::from_secs(60));
    cmd
}

const DATA: &str = "@prefix ex: <http://example.org/> .\n\
ex:a ex:p ex:b . ex:b ex:p ex:c . ex:c ex:p ex:d .\n\
ex:g { ex:a ex:q ex:z . }\n";

const RULES: &str = "PREFIX ex: <http://example.org/>\n\
#@rule base\nCONSTRUCT { ?x ex:reach ?y } WHERE { ?x ex:p ?y }\n\
#@rule step\nCONSTRUCT { ?x ex:reach ?z } WHERE { ?x ex:reach ?y . ?y ex:p ?z }\n\
#@rule named\nCONSTRUCT { GRAPH ex:g { ?x ex:seen ex:yes } } WHERE { GRAPH ex:g { ?x ex:q ?y } }\n";

fn folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("data.trig"), DATA).unwrap();
    fs::write(dir.path().join("rules.rq"), RULES).unwrap();
    dir
}

fn run(dir: &Path, args: &[&str]) -> Output {
    reasonctl().args(args).current_dir(dir).output().unwrap()
}

/// `materialize --state st --add plus.nt --stats s.json` and `extra` in `dir`: it must succeed; its output and
/// statistics.
fn add_plus(dir: &Path, extra: &[&str]) -> (Output, serde_json::Value) {
    let mut args = vec![
        "materialize",
        "--state",
        "st",
        "--add",
        "plus.nt",
        "--stats",
        "s.json",
    ];
    args.extend_from_slice(extra);
    let out = run(dir, &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let stats = json(dir, "s.json");
    (out, stats)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn save(dir: &Path) -> Output {
    let out = run(
        dir,
        &[
            "materialize",
            "data.trig",
            "--rules",
            "rules.rq",
            "--state",
            "st",
            "--format",
            "nquads",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    out
}

#[test]
fn every_command_answers_from_a_state_as_from_the_data() {
    let dir = folder();
    let made = save(dir.path());
    assert!(dir.path().join("st/manifest.json").is_file());
    // materialize: the same facts, from the state alone.
    let again = run(
        dir.path(),
        &["materialize", "--state", "st", "--format", "nquads"],
    );
    assert_eq!(stdout(&again), stdout(&made), "{}", stderr(&again));
    // query: the same answer as over the data.
    let q = "SELECT ?x ?y WHERE { ?x <http://example.org/reach> ?y } ORDER BY ?x ?y";
    let from_data = run(
        dir.path(),
        &[
            "query",
            "data.trig",
            "--rules",
            "rules.rq",
            "--query",
            q,
            "--format",
            "tsv",
        ],
    );
    let from_state = run(
        dir.path(),
        &["query", "--state", "st", "--query", q, "--format", "tsv"],
    );
    assert_eq!(from_state.status.code(), Some(0), "{}", stderr(&from_state));
    assert_eq!(stdout(&from_state), stdout(&from_data));
    assert_eq!(stdout(&from_state).lines().count(), 7);
    // explain: the same premise tree.
    let fact = "<http://example.org/a> <http://example.org/reach> <http://example.org/d>";
    let e_data = run(
        dir.path(),
        &[
            "explain",
            "data.trig",
            "--rules",
            "rules.rq",
            "--fact",
            fact,
            "--depth",
            "3",
        ],
    );
    let e_state = run(
        dir.path(),
        &["explain", "--state", "st", "--fact", fact, "--depth", "3"],
    );
    assert_eq!(e_state.status.code(), Some(0), "{}", stderr(&e_state));
    assert_eq!(stdout(&e_state), stdout(&e_data));
    // Matching inputs given with the state: answered from it as well.
    let e_both = run(
        dir.path(),
        &[
            "explain",
            "data.trig",
            "--rules",
            "rules.rq",
            "--state",
            "st",
            "--fact",
            fact,
            "--depth",
            "3",
        ],
    );
    assert_eq!(stdout(&e_both), stdout(&e_data), "{}", stderr(&e_both));
    // deps: the program.
    let d_data = run(
        dir.path(),
        &[
            "deps",
            "--rules",
            "rules.rq",
            "data.trig",
            "--format",
            "json",
        ],
    );
    let d_state = run(dir.path(), &["deps", "--state", "st", "--format", "json"]);
    assert_eq!(stdout(&d_state), stdout(&d_data), "{}", stderr(&d_state));
}

#[test]
fn inputs_that_differ_from_the_state_are_refused_unless_refreshed() {
    let dir = folder();
    save(dir.path());
    let manifest = fs::read(dir.path().join("st/manifest.json")).unwrap();
    fs::write(
        dir.path().join("data.trig"),
        format!("{DATA}<http://example.org/d> <http://example.org/p> <http://example.org/e> .\n"),
    )
    .unwrap();
    let q = "SELECT (COUNT(*) AS ?n) WHERE { ?x <http://example.org/reach> ?y }";
    let out = run(
        dir.path(),
        &[
            "query",
            "data.trig",
            "--rules",
            "rules.rq",
            "--state",
            "st",
            "--query",
            q,
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("reasonctl::state::mismatch"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("data.trig differs"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        fs::read(dir.path().join("st/manifest.json")).unwrap(),
        manifest
    );
    // Other rules, another result-changing option: refused too.
    fs::write(
        dir.path().join("other.rq"),
        "CONSTRUCT { ?x <http://example.org/r> ?y } WHERE { ?x <http://example.org/p> ?y }\n",
    )
    .unwrap();
    let out = run(
        dir.path(),
        &[
            "query", "--rules", "other.rq", "--state", "st", "--query", q,
        ],
    );
    assert!(
        stderr(&out).contains("the rules differ"),
        "{}",
        stderr(&out)
    );
    let out = run(
        dir.path(),
        &["query", "--state", "st", "--owl2rl", "--query", q],
    );
    assert!(
        stderr(&out).contains("--owl2rl is true here"),
        "{}",
        stderr(&out)
    );
    // --refresh runs them and replaces the state.
    let out = run(
        dir.path(),
        &[
            "query",
            "data.trig",
            "--rules",
            "rules.rq",
            "--state",
            "st",
            "--refresh",
            "--query",
            q,
            "--format",
            "tsv",
        ],
    );
    assert_eq!(stdout(&out), "?n\n10\n", "{}", stderr(&out));
    let from_state = run(
        dir.path(),
        &["query", "--state", "st", "--query", q, "--format", "tsv"],
    );
    assert_eq!(stdout(&from_state), "?n\n10\n");
}

#[test]
fn refreshing_from_new_data_alone_keeps_the_state_rules_and_refreshing_without_data_is_refused() {
    let dir = folder();
    save(dir.path());
    fs::write(
        dir.path().join("data.trig"),
        format!("{DATA}<http://example.org/d> <http://example.org/p> <http://example.org/e> .\n"),
    )
    .unwrap();
    let q = "SELECT (COUNT(*) AS ?n) WHERE { ?x <http://example.org/reach> ?y }";
    for command in ["query", "explain"] {
        let mut args = vec![command, "data.trig", "--state", "st", "--refresh"];
        args.extend(if command == "query" {
            ["--query", q]
        } else {
            [
                "--fact",
                "<http://example.org/a> <http://example.org/reach> <http://example.org/e>",
            ]
        });
        let out = run(dir.path(), &args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        if command == "query" {
            assert!(stdout(&out).contains("10"), "{}", stdout(&out));
        }
        // The state saved holds the new data's facts under the state's rules.
        let from_state = run(
            dir.path(),
            &["query", "--state", "st", "--query", q, "--format", "tsv"],
        );
        assert_eq!(stdout(&from_state), "?n\n10\n", "{}", stderr(&from_state));
        let manifest = fs::read_to_string(dir.path().join("st/manifest.json")).unwrap();
        assert!(manifest.contains("\"step\""), "{manifest}");
    }
    // Only an option differs and no DATA is given: refreshing would derive the state from nothing too.
    let out = run(
        dir.path(),
        &[
            "query",
            "--state",
            "st",
            "--refresh",
            "--owl2rl",
            "--query",
            q,
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("reasonctl::state::refresh_needs_data"),
        "{}",
        stderr(&out)
    );
    // A --rules file that cannot be read is that error, not a difference from the state.
    let out = run(
        dir.path(),
        &[
            "query",
            "data.trig",
            "--rules",
            "gone.rq",
            "--state",
            "st",
            "--query",
            q,
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("reasonctl::rules::unreadable"),
        "{}",
        stderr(&out)
    );
    // Other rules and no data: refreshing would derive the state from nothing; refused, the state kept.
    fs::write(
        dir.path().join("other.rq"),
        "CONSTRUCT { ?x <http://example.org/r> ?y } WHERE { ?x <http://example.org/p> ?y }\n",
    )
    .unwrap();
    let manifest = fs::read(dir.path().join("st/manifest.json")).unwrap();
    let out = run(
        dir.path(),
        &[
            "query",
            "--rules",
            "other.rq",
            "--state",
            "st",
            "--refresh",
            "--query",
            q,
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("reasonctl::state::refresh_needs_data"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        fs::read(dir.path().join("st/manifest.json")).unwrap(),
        manifest
    );
}

#[test]
fn a_manifest_field_that_is_missing_or_of_the_wrong_kind_is_named() {
    let dir = folder();
    save(dir.path());
    let path = dir.path().join("st/manifest.json");
    let good: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    let q = ["query", "--state", "st", "--query", "ASK {}"];
    for (edit, named) in [
        (
            &(|m: &mut serde_json::Value| m["counts"]["terms"] = (-1).into())
                as &dyn Fn(&mut serde_json::Value),
            "`counts.terms` is missing or not a count",
        ),
        (
            &|m: &mut serde_json::Value| m["snapshot"]["crc32"] = (1u64 << 40).into(),
            "`snapshot.crc32` is missing or not a CRC-32",
        ),
        (
            &|m: &mut serde_json::Value| m["snapshot"]["file"] = "../x".into(),
            "`snapshot.file` is missing or not a file name inside the state folder",
        ),
        (
            &|m: &mut serde_json::Value| m["inputs"][0]["bytes"] = "many".into(),
            "`inputs[0].bytes` is missing or not a count",
        ),
        (
            &|m: &mut serde_json::Value| {
                m["options"].as_object_mut().unwrap().remove("schedule");
            },
            "`options.schedule` is missing or not a string",
        ),
    ] {
        let mut m = good.clone();
        edit(&mut m);
        fs::write(&path, serde_json::to_string_pretty(&m).unwrap()).unwrap();
        let out = run(dir.path(), &q);
        assert_eq!(out.status.code(), Some(2), "{named}: {}", stderr(&out));
        // Words as they are, whatever the wrapping.
        let text = (stderr(&out).split_whitespace())
            .filter(|w| *w != "│")
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            text.contains("reasonctl::state::corrupt") && text.contains(named),
            "{named}: {text}"
        );
    }
}

#[test]
fn a_damaged_truncated_or_newer_state_is_refused_and_left_as_it_is() {
    let dir = folder();
    save(dir.path());
    let snapshot = dir.path().join("st/snapshot.bin");
    let bytes = fs::read(&snapshot).unwrap();
    let q = ["query", "--state", "st", "--query", "ASK {}"];
    for damaged in [bytes[..bytes.len() / 2].to_vec(), {
        let mut b = bytes.clone();
        let at = b.len() / 3;
        b[at] ^= 0x40;
        b
    }] {
        fs::write(&snapshot, &damaged).unwrap();
        let out = run(dir.path(), &q);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("reasonctl::state::corrupt"),
            "{}",
            stderr(&out)
        );
        assert_eq!(fs::read(&snapshot).unwrap(), damaged, "nothing changed");
    }
    // The help's way out works: with the damaged folder removed, the first run's command builds it again.
    let help = stderr(&run(dir.path(), &q));
    assert!(help.contains("rm -r st &&"), "{help}");
    fs::remove_dir_all(dir.path().join("st")).unwrap();
    save(dir.path());
    assert_eq!(run(dir.path(), &q).status.code(), Some(0));
    // A FIFO in the snapshot's place is refused, not waited on (opening it would block); in the manifest's,
    // there is no state.
    #[cfg(unix)]
    for (file, says) in [
        ("st/snapshot.bin", "not a regular file"),
        ("st/manifest.json", "reasonctl::state::missing"),
    ] {
        let path = dir.path().join(file);
        let kept = fs::read(&path).unwrap();
        fs::remove_file(&path).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(made.success());
        let out = run(dir.path(), &q);
        assert_eq!(out.status.code(), Some(2), "{file}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{file}: {}", stderr(&out));
        fs::remove_file(&path).unwrap();
        fs::write(&path, kept).unwrap();
    }
    let manifest = dir.path().join("st/manifest.json");
    let text = fs::read_to_string(&manifest).unwrap();
    fs::write(
        &manifest,
        text.replace(
            &format!("\"format_version\": {}", reasonctl::state::MANIFEST_VERSION),
            &format!(
                "\"format_version\": {}",
                reasonctl::state::MANIFEST_VERSION + 1
            ),
        ),
    )
    .unwrap();
    let out = run(dir.path(), &q);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("reasonctl::state::version"),
        "{}",
        stderr(&out)
    );
    let out = run(
        dir.path(),
        &["query", "--state", "nowhere", "--query", "ASK {}"],
    );
    assert!(
        stderr(&out).contains("reasonctl::state::missing"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_folder_that_is_not_a_state_is_refused_before_the_run_writes_anything_and_not_replaced() {
    let dir = folder();
    fs::create_dir(dir.path().join("st")).unwrap();
    fs::write(dir.path().join("st/notes.txt"), "mine").unwrap();
    let out = run(
        dir.path(),
        &[
            "materialize",
            "data.trig",
            "--rules",
            "rules.rq",
            "--state",
            "st",
            "-o",
            "out.nq",
        ],
    );
    assert!(!dir.path().join("out.nq").exists());
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("reasonctl::state::not_a_state"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("st/notes.txt")).unwrap(),
        "mine"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_state_that_cannot_be_written_fails_with_exit_2() {
    let dir = folder();
    let out = run(
        dir.path(),
        &[
            "materialize",
            "data.trig",
            "--rules",
            "rules.rq",
            "--state",
            "/proc/reasonctl-state",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("reasonctl::state::write"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_output_written_inside_the_state_folder_is_refused_before_anything_runs() {
    let dir = folder();
    save(dir.path());
    let manifest = fs::read(dir.path().join("st/manifest.json")).unwrap();
    let snapshot = fs::read(dir.path().join("st/snapshot.bin")).unwrap();
    let base = [
        "materialize",
        "data.trig",
        "--rules",
        "rules.rq",
        "--state",
        "st",
    ];
    for (extra, flag) in [
        (&["-o", "st/snapshot.bin", "--format", "nquads"][..], "-o"),
        (&["-o", "st/new.nq"][..], "-o"),
        (&["-o", "./st/../st/x.nq"][..], "-o"),
        (&["--out-dir", "st/out"][..], "--out-dir"),
        (&["-o", "o.nq", "--diff", "st/manifest.json"][..], "--diff"),
        (
            &["-o", "o.nq", "--stats", "st/manifest.json"][..],
            "--stats",
        ),
    ] {
        let mut args = base.to_vec();
        args.extend(extra);
        let out = run(dir.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("reasonctl::settings::inside_state")
                && stderr(&out).contains(&format!("{flag} ")),
            "{extra:?}: {}",
            stderr(&out)
        );
    }
    // A query refreshing the state may not write its answer there either.
    let out = run(
        dir.path(),
        &[
            "query",
            "data.trig",
            "--rules",
            "rules.rq",
            "--state",
            "st",
            "--refresh",
            "--query",
            "ASK { ?s ?p ?o }",
            "-o",
            "st/answer.srj",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("reasonctl::settings::inside_state"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        fs::read(dir.path().join("st/manifest.json")).unwrap(),
        manifest
    );
    assert_eq!(
        fs::read(dir.path().join("st/snapshot.bin")).unwrap(),
        snapshot
    );
    assert!(!dir.path().join("o.nq").exists());
}

#[cfg(unix)]
#[test]
fn a_state_named_by_a_symbolic_link_is_the_folder_it_leads_to_saved_and_locked_there() {
    let dir = folder();
    save(dir.path());
    std::os::unix::fs::symlink("st", dir.path().join("link")).unwrap();
    fs::write(
        dir.path().join("plus.nt"),
        "<http://example.org/d> <http://example.org/p> <http://example.org/e> .\n",
    )
    .unwrap();
    let count = |state: &str| {
        stdout(&run(
            dir.path(),
            &[
                "query",
                "--state",
                state,
                "--query",
                "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }",
                "--format",
                "tsv",
            ],
        ))
    };
    let before = count("st");
    let out = run(
        dir.path(),
        &[
            "materialize",
            "--state",
            "link",
            "--add",
            "plus.nt",
            "-o",
            "o.nq",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The link is still a link, and the folder it leads to holds the change.
    assert!(
        fs::symlink_metadata(dir.path().join("link"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_ne!(count("st"), before);
    assert_eq!(count("st"), count("link"));
    // While a run holds the state, a run through the link is refused as busy: one lock, beside the folder.
    let _held = reasonctl::state::lock(&dir.path().join("st")).unwrap();
    let busy = run(
        dir.path(),
        &[
            "materialize",
            "--state",
            "link",
            "--add",
            "plus.nt",
            "-o",
            "o.nq",
        ],
    );
    assert_eq!(busy.status.code(), Some(2), "{}", stderr(&busy));
    assert!(
        stderr(&busy).contains("reasonctl::state::busy"),
        "{}",
        stderr(&busy)
    );
    // A link that leads nowhere is refused, and nothing is left beside it.
    std::os::unix::fs::symlink("missing", dir.path().join("dangling")).unwrap();
    let out = run(
        dir.path(),
        &[
            "materialize",
            "data.trig",
            "--rules",
            "rules.rq",
            "--state",
            "dangling",
            "-o",
            "o.nq",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("reasonctl::settings::state_link"),
        "{}",
        stderr(&out)
    );
    let left: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("reasonctl-"))
        .collect();
    assert_eq!(left, Vec::<String>::new());
}

#[cfg(unix)]
#[test]
fn a_pipe_as_data_or_change_set_of_a_state_run_is_refused_not_read_twice() {
    let dir = folder();
    save(dir.path());
    let fifo = dir.path().join("p.nt");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    for args in [
        &[
            "materialize",
            "--state",
            "st",
            "--add",
            "p.nt",
            "-o",
            "o.nq",
        ][..],
        &[
            "materialize",
            "--state",
            "st",
            "--remove",
            "p.nt",
            "-o",
            "o.nq",
        ][..],
        &[
            "materialize",
            "p.nt",
            "--rules",
            "rules.rq",
            "--state",
            "new",
            "-o",
            "o.nq",
        ][..],
    ] {
        // No writer ever opens the FIFO: a run that read it would wait (the helper's timeout says so).
        let out = run(dir.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("reasonctl::settings::state_pipe"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn a_capped_run_does_not_write_its_state_and_leaves_nothing_beside_it() {
    let dir = folder();
    save(dir.path());
    let manifest = fs::read(dir.path().join("st/manifest.json")).unwrap();
    fs::write(
        dir.path().join("data.trig"),
        format!("{DATA}<http://example.org/d> <http://example.org/p> <http://example.org/e> .\n"),
    )
    .unwrap();
    let out = run(
        dir.path(),
        &[
            "materialize",
            "data.trig",
            "--rules",
            "rules.rq",
            "--state",
            "st",
            "--max-facts",
            "2",
        ],
    );
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("reasonctl::state::not_written"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        fs::read(dir.path().join("st/manifest.json")).unwrap(),
        manifest
    );
    // The data's line table, written beside the state as soon as the data was read, went with the run.
    assert_eq!(left_beside(dir.path()), Vec::<String>::new());
}

/// A chain `n0 → … → n(len-1)` over ex:p, as N-Triples.
fn chain_nt(from: usize, to: usize) -> String {
    (from..to)
        .map(|i| {
            format!(
                "<http://example.org/n{i}> <http://example.org/p> <http://example.org/n{}> .\n",
                i + 1
            )
        })
        .collect()
}

#[test]
fn a_capped_maintenance_run_that_leaves_a_negation_unfinished_writes_nothing_and_counts_every_held_fact()
 {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(
        d.join("rules.rq"),
        "PREFIX ex: <http://example.org/>\n\
         #@rule base\nCONSTRUCT { ?a ex:anc ?b } WHERE { ?a ex:p ?b }\n\
         #@rule tc\nCONSTRUCT { ?a ex:anc ?c } WHERE { ?a ex:anc ?b . ?b ex:p ?c }\n\
         #@rule leaf\nCONSTRUCT { ?a ex:leaf true } WHERE { ?x ex:p ?a FILTER NOT EXISTS { ?a ex:anc ?y } }\n",
    )
    .unwrap();
    // 30 nodes: 435 ex:anc facts and one leaf; 40 nodes: 780 and one.
    fs::write(d.join("old.nt"), chain_nt(0, 30)).unwrap();
    fs::write(d.join("new.nt"), chain_nt(0, 40)).unwrap();
    fs::write(d.join("plus.nt"), chain_nt(30, 40)).unwrap();
    let first = run(
        d,
        &[
            "materialize",
            "old.nt",
            "--rules",
            "rules.rq",
            "--state",
            "st",
            "-o",
            "old.nq",
        ],
    );
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let manifest = fs::read(d.join("st/manifest.json")).unwrap();
    // From scratch, 600 facts stop the run before `leaf` ran over complete inputs: an error, nothing written.
    let fresh = run(
        d,
        &[
            "materialize",
            "new.nt",
            "--rules",
            "rules.rq",
            "-o",
            "fresh.nq",
            "--max-facts",
            "600",
        ],
    );
    assert_eq!(fresh.status.code(), Some(3), "{}", stderr(&fresh));
    assert!(
        stderr(&fresh).contains("reasonctl::datalog::resource_limit"),
        "{}",
        stderr(&fresh)
    );
    // Maintained, by the new dump or by a change set, the same cap fails the same way: no output, no patch, the
    // state as it was. The cap counts the facts kept from the state (436), not only the 345 new ones.
    for change in [&["new.nt"][..], &["--add", "plus.nt"][..]] {
        let args = [
            &["materialize"][..],
            change,
            &[
                "--rules",
                "rules.rq",
                "--state",
                "st",
                "-o",
                "new.nq",
                "--diff",
                "p.rdfp",
                "--max-facts",
                "600",
            ],
        ]
        .concat();
        let out = run(d, &args);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("reasonctl::datalog::resource_limit"),
            "{}",
            stderr(&out)
        );
        assert!(
            !d.join("new.nq").exists() && !d.join("p.rdfp").exists(),
            "{args:?}"
        );
        assert_eq!(fs::read(d.join("st/manifest.json")).unwrap(), manifest);
    }
}

#[test]
fn a_change_that_empties_a_head_graph_fails_as_a_run_from_scratch_over_the_changed_data_does() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(
        d.join("rules.rq"),
        "PREFIX ex: <http://example.org/>\n\
         #@rule into\nCONSTRUCT { GRAPH ex:g { ?a ex:in ?b } } WHERE { ?a ex:q ?b }\n",
    )
    .unwrap();
    let only_g = "<http://example.org/x> <http://example.org/y> <http://example.org/z> <http://example.org/g> .\n";
    let rest = "<http://example.org/a> <http://example.org/q> <http://example.org/b> .\n";
    fs::write(d.join("old.nq"), format!("{only_g}{rest}")).unwrap();
    fs::write(d.join("new.nq"), rest).unwrap();
    fs::write(d.join("minus.nq"), only_g).unwrap();
    let first = run(
        d,
        &[
            "materialize",
            "old.nq",
            "--rules",
            "rules.rq",
            "--state",
            "st",
            "-o",
            "old.out.nq",
        ],
    );
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let manifest = fs::read(d.join("st/manifest.json")).unwrap();
    let fresh = run(
        d,
        &[
            "materialize",
            "new.nq",
            "--rules",
            "rules.rq",
            "-o",
            "new.out.nq",
        ],
    );
    assert_eq!(fresh.status.code(), Some(1), "{}", stderr(&fresh));
    assert!(
        stderr(&fresh).contains("reasonctl::rules::head_graph_absent"),
        "{}",
        stderr(&fresh)
    );
    for change in [
        &["new.nq", "--rules", "rules.rq"][..],
        &["--remove", "minus.nq"][..],
    ] {
        let args = [
            &["materialize"][..],
            change,
            &["--state", "st", "-o", "new.out.nq"],
        ]
        .concat();
        let out = run(d, &args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("reasonctl::rules::head_graph_absent"),
            "{}",
            stderr(&out)
        );
        assert!(!d.join("new.out.nq").exists());
        assert_eq!(fs::read(d.join("st/manifest.json")).unwrap(), manifest);
    }
}

#[test]
fn a_run_that_would_write_a_state_another_run_is_updating_is_refused_and_changes_nothing() {
    let dir = folder();
    save(dir.path());
    let manifest = fs::read(dir.path().join("st/manifest.json")).unwrap();
    fs::write(
        dir.path().join("plus.nt"),
        "<http://example.org/d> <http://example.org/p> <http://example.org/e> .\n",
    )
    .unwrap();
    // The run that saved the state let go of it and removed its lock file.
    let lock_file = dir.path().join(".st.reasonctl.lock");
    assert!(!lock_file.exists(), "the lock file stays after the run");
    // Another run's hold: the lock file beside the state, locked.
    let lock = fs::File::create(&lock_file).unwrap();
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: `flock` on a descriptor the test owns.
        assert_eq!(unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) }, 0);
    }
    let q = "ASK { ?x ?p ?y }";
    for args in [
        &["materialize", "--state", "st", "--add", "plus.nt"][..],
        &[
            "materialize",
            "data.trig",
            "--rules",
            "rules.rq",
            "--state",
            "st",
        ][..],
        &[
            "query",
            "data.trig",
            "--state",
            "st",
            "--refresh",
            "--query",
            q,
        ][..],
    ] {
        let out = run(dir.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("reasonctl::state::busy"),
            "{}",
            stderr(&out)
        );
        assert_eq!(
            fs::read(dir.path().join("st/manifest.json")).unwrap(),
            manifest
        );
    }
    // Reading the state needs no hold: a query, or materialize with no DATA and no change set.
    let read = run(dir.path(), &["query", "--state", "st", "--query", q]);
    assert_eq!(read.status.code(), Some(0), "{}", stderr(&read));
    let read = run(
        dir.path(),
        &["materialize", "--state", "st", "-o", "out.nq"],
    );
    assert_eq!(read.status.code(), Some(0), "{}", stderr(&read));
    drop(lock);
    // A lock file left by a run that ended without removing it (killed) is taken, and removed after.
    let (_, stats) = add_plus(dir.path(), &[]);
    assert_eq!(stats["asserted_added"], 1, "{stats}");
    assert!(!lock_file.exists(), "a left lock file stays after the run");
}

#[test]
fn a_state_cannot_record_standard_input() {
    let dir = folder();
    let out = run(
        dir.path(),
        &["materialize", "-", "--rules", "rules.rq", "--state", "st"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("reasonctl::settings::state_stdin"),
        "{}",
        stderr(&out)
    );
}

/// A run killed (SIGKILL: no cleanup at all) while it replaces a state leaves the previous state readable, or the
/// new one whole.
#[cfg(unix)]
#[test]
fn a_run_killed_while_saving_leaves_a_readable_state() {
    use std::process::{Command as Process, Stdio};
    use std::time::Instant;
    let dir = folder();
    let mut data = String::new();
    for i in 0..20_000 {
        data.push_str(&format!(
            "<http://example.org/n{i}> <http://example.org/p> <http://example.org/n{}> .\n",
            i + 1
        ));
    }
    // Each version of the data differs from the one before by a fact: every run maintains and saves the state.
    let version = |k: usize| {
        format!("{data}<http://example.org/x{k}> <http://example.org/p> <http://example.org/y> .\n")
    };
    fs::write(dir.path().join("big.nt"), version(0)).unwrap();
    fs::write(
        dir.path().join("copy.rq"),
        "CONSTRUCT { ?y <http://example.org/back> ?x } WHERE { ?x <http://example.org/p> ?y }\n",
    )
    .unwrap();
    let args = [
        "materialize",
        "big.nt",
        "--rules",
        "copy.rq",
        "--state",
        "st",
        "-o",
        "out.nq",
    ];
    let first = run(dir.path(), &args);
    assert!(first.status.success(), "{}", stderr(&first));
    fs::write(dir.path().join("big.nt"), version(1)).unwrap();
    let started = Instant::now();
    let second = run(dir.path(), &args);
    assert!(second.status.success(), "{}", stderr(&second));
    let took = started.elapsed();
    let q = [
        "query",
        "--state",
        "st",
        "--query",
        "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }",
        "--format",
        "tsv",
    ];
    let before = stdout(&run(dir.path(), &q));
    for (k, tenth) in [2, 4, 6, 8, 9, 10].into_iter().enumerate() {
        fs::write(dir.path().join("big.nt"), version(k + 2)).unwrap();
        let mut child = Process::new(env!("CARGO_BIN_EXE_reasonctl"))
            .args(args)
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(took * tenth / 10);
        let _ = child.kill();
        let _ = child.wait();
        let now = run(dir.path(), &q);
        assert_eq!(
            now.status.code(),
            Some(0),
            "killed at {tenth}/10: {}",
            stderr(&now)
        );
        assert_eq!(stdout(&now), before, "killed at {tenth}/10");
    }
    // The next save clears what the killed runs left beside the state.
    fs::write(dir.path().join("big.nt"), version(99)).unwrap();
    assert!(run(dir.path(), &args).status.success());
    assert_eq!(left_beside(dir.path()), Vec::<String>::new());
}

/// What runs left beside the state `st` in `dir`: folders being written, line tables written ahead.
fn left_beside(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".st.reasonctl-"))
        .collect()
}

/// The quads of an N-Quads text, sorted.
fn lines(text: &str) -> Vec<String> {
    let mut out: Vec<String> = text.lines().map(str::to_owned).collect();
    out.sort();
    out
}

/// An RDF Patch applied to the lines of an N-Quads output: `D` rows removed (each must be there), `A` rows added
/// (none may be there yet), inside one `TX` / `TC` transaction.
fn patched(old: &str, patch: &str) -> Vec<String> {
    let mut set: std::collections::BTreeSet<String> = old.lines().map(str::to_owned).collect();
    let rows: Vec<&str> = patch.lines().collect();
    assert_eq!(rows.first(), Some(&"TX ."), "{patch}");
    assert_eq!(rows.last(), Some(&"TC ."), "{patch}");
    for row in &rows[1..rows.len() - 1] {
        match row.split_at(2) {
            ("D ", quad) => assert!(set.remove(quad), "D of an absent quad: {row}"),
            ("A ", quad) => assert!(set.insert(quad.to_owned()), "A of a present quad: {row}"),
            _ => panic!("not a patch row: {row}"),
        }
    }
    set.into_iter().collect()
}

fn json(dir: &Path, file: &str) -> serde_json::Value {
    serde_json::from_slice(&fs::read(dir.join(file)).unwrap()).unwrap()
}

const CHANGED: &str = "@prefix ex: <http://example.org/> .\n\
ex:a ex:p ex:b . ex:c ex:p ex:d . ex:d ex:p ex:e .\n\
ex:g { ex:a ex:q ex:z . ex:b ex:q ex:z . }\n";

#[test]
fn changed_data_is_maintained_to_the_bytes_a_fresh_run_writes_and_the_diff_patches_the_old_output()
{
    let dir = folder();
    let old = stdout(&save(dir.path()));
    fs::write(dir.path().join("data.trig"), CHANGED).unwrap();
    let args = [
        "materialize",
        "data.trig",
        "--rules",
        "rules.rq",
        "--format",
        "nquads",
    ];
    let fresh = run(dir.path(), &args);
    let mut with_state = args.to_vec();
    with_state.extend([
        "--state",
        "st",
        "--diff",
        "change.rdfp",
        "--stats",
        "s.json",
    ]);
    let kept = run(dir.path(), &with_state);
    assert_eq!(kept.status.code(), Some(0), "{}", stderr(&kept));
    assert_eq!(stdout(&kept), stdout(&fresh));
    let stats = json(dir.path(), "s.json");
    assert_eq!(stats["mode"], "incremental", "{stats}");
    // ex:b ex:p ex:c went, ex:d ex:p ex:e and a ex:q fact in ex:g came.
    assert_eq!(stats["asserted_removed"], 1, "{stats}");
    assert_eq!(stats["asserted_added"], 2, "{stats}");
    assert!(stats["phases"]["reason"].is_number(), "{stats}");
    let patch = fs::read_to_string(dir.path().join("change.rdfp")).unwrap();
    assert_eq!(patched(&old, &patch), lines(&stdout(&fresh)), "{patch}");
    // The state is the new one: the same data again changes nothing, and says so.
    let again = run(dir.path(), &with_state);
    assert_eq!(stdout(&again), stdout(&fresh));
    assert_eq!(
        fs::read_to_string(dir.path().join("change.rdfp")).unwrap(),
        "TX .\nTC .\n"
    );
    assert_eq!(json(dir.path(), "s.json")["mode"], "unchanged");
}

/// The `--stats` counts of the output's change, and the patch's `D` and `A` rows (when one was asked for).
fn output_change(dir: &Path, args: &[&str], diff: bool) -> ((u64, u64), Option<(usize, usize)>) {
    let mut args = args.to_vec();
    args.extend(["--stats", "s.json"]);
    if diff {
        args.extend(["--diff", "p.rdfp"]);
    }
    let out = run(dir, &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let stats = json(dir, "s.json");
    let counts = (
        stats["output_removed"].as_u64().unwrap(),
        stats["output_added"].as_u64().unwrap(),
    );
    let rows = diff.then(|| {
        let patch = fs::read_to_string(dir.join("p.rdfp")).unwrap();
        let rows = |tag: &str| patch.lines().filter(|l| l.starts_with(tag)).count();
        (rows("D "), rows("A "))
    });
    (counts, rows)
}

#[test]
fn the_stats_count_the_output_change_the_patch_lists_whether_or_not_a_patch_is_written() {
    let args = [
        "materialize",
        "data.trig",
        "--rules",
        "rules.rq",
        "--state",
        "st",
        "-o",
        "out.nq",
    ];
    let (plain, patched) = (folder(), folder());
    // A new state: every derived fact is new (6 reach facts, 1 seen fact).
    let counted = output_change(plain.path(), &args, false);
    let listed = output_change(patched.path(), &args, true);
    assert_eq!(counted.0, (0, 7));
    assert_eq!(listed, ((0, 7), Some((0, 7))));
    // Other rules derive again from scratch: one reach rule gone, its facts with it, a fact of a new rule.
    for dir in [&plain, &patched] {
        fs::write(
            dir.path().join("rules.rq"),
            RULES.replace(
                "#@rule step\nCONSTRUCT { ?x ex:reach ?z } WHERE { ?x ex:reach ?y . ?y ex:p ?z }\n",
                "",
            ) + "#@rule end\nCONSTRUCT { ex:d ex:end ex:yes } WHERE { ex:c ex:p ex:d }\n",
        )
        .unwrap();
    }
    let counted = output_change(plain.path(), &args, false);
    let listed = output_change(patched.path(), &args, true);
    assert_eq!(counted.0, (3, 1));
    assert_eq!(listed, ((3, 1), Some((3, 1))));
}

#[test]
fn change_sets_apply_to_a_state_without_its_data_and_are_recorded() {
    let dir = folder();
    let old = stdout(&save(dir.path()));
    fs::write(
        dir.path().join("minus.nt"),
        "<http://example.org/b> <http://example.org/p> <http://example.org/c> .\n\
         <http://example.org/nothing> <http://example.org/p> <http://example.org/here> .\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("plus.trig"),
        "@prefix ex: <http://example.org/> .\nex:d ex:p ex:e .\nex:g { ex:b ex:q ex:z . }\n",
    )
    .unwrap();
    let out = run(
        dir.path(),
        &[
            "materialize",
            "--state",
            "st",
            "--remove",
            "minus.nt",
            "--add",
            "plus.trig",
            "--format",
            "nquads",
            "--diff",
            "change.rdfp",
            "--stats",
            "s.json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    fs::write(dir.path().join("data.trig"), CHANGED).unwrap();
    let fresh = run(
        dir.path(),
        &[
            "materialize",
            "data.trig",
            "--rules",
            "rules.rq",
            "--format",
            "nquads",
        ],
    );
    assert_eq!(stdout(&out), stdout(&fresh));
    let stats = json(dir.path(), "s.json");
    assert_eq!(stats["mode"], "incremental", "{stats}");
    assert_eq!(stats["asserted_removed"], 1, "{stats}");
    // The run's elapsed time is the whole maintenance (finding, checking, inserting), not the insertion alone.
    let maintained: f64 = ["overdelete", "rederive", "insert"]
        .iter()
        .map(|k| stats["phases"][k].as_f64().unwrap() * 1e3)
        .sum();
    assert!(
        stats["elapsed_ms"].as_f64().unwrap() >= maintained * 0.999,
        "{stats}"
    );
    let patch = fs::read_to_string(dir.path().join("change.rdfp")).unwrap();
    assert_eq!(patched(&old, &patch), lines(&stdout(&fresh)), "{patch}");
    // The manifest records the change sets; the original data no longer describes the state.
    let manifest = json(dir.path(), "st/manifest.json");
    let kinds: Vec<&str> = manifest["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["remove", "add"]);
    fs::write(dir.path().join("data.trig"), DATA).unwrap();
    let q = run(
        dir.path(),
        &[
            "query",
            "data.trig",
            "--rules",
            "rules.rq",
            "--state",
            "st",
            "--query",
            "ASK { ?s ?p ?o }",
        ],
    );
    assert_eq!(q.status.code(), Some(2), "{}", stderr(&q));
    assert!(
        stderr(&q).contains("change set(s) were applied"),
        "{}",
        stderr(&q)
    );
}

#[test]
fn a_change_set_read_apart_from_the_state_numbers_terms_of_every_kind_as_a_fresh_run_does() {
    // The change set is read while the state opens, into a dictionary of its own, and its terms are numbered in
    // the state's after: terms the state holds, new IRIs, blank nodes (new ones, in both files), literals of a
    // new datatype and language, and a triple term must come out as a run from scratch over the changed data
    // writes them (the asserted facts included).
    let dir = folder();
    save(dir.path());
    fs::write(
        dir.path().join("minus.nt"),
        "<http://example.org/c> <http://example.org/p> <http://example.org/d> .\n\
         _:x <http://example.org/p> <http://example.org/a> .\n",
    )
    .unwrap();
    let plus = "_:n1 <http://example.org/p> <http://example.org/a> .\n\
                <http://example.org/d> <http://example.org/p> _:n1 .\n\
                _:n2 <http://example.org/p> \"7\"^^<http://example.org/myType> .\n\
                <http://example.org/new> <http://example.org/p> \"chat\"@fr .\n\
                <http://example.org/r> <http://www.w3.org/1999/02/22-rdf-syntax-ns#reifies> \
                <<( <http://example.org/a> <http://example.org/p> _:n2 )>> .\n";
    fs::write(dir.path().join("plus.nt"), plus).unwrap();
    let out = run(
        dir.path(),
        &[
            "materialize",
            "--state",
            "st",
            "--remove",
            "minus.nt",
            "--add",
            "plus.nt",
            "--include-asserted",
            "--format",
            "nquads",
            "--stats",
            "s.json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(dir.path(), "s.json")["mode"], "incremental");
    // The changed data: DATA without `c p d`, with plus.nt's facts.
    fs::write(
        dir.path().join("data.trig"),
        "@prefix ex: <http://example.org/> .
         ex:a ex:p ex:b . ex:b ex:p ex:c .
         ex:g { ex:a ex:q ex:z . }
",
    )
    .unwrap();
    let fresh = run(
        dir.path(),
        &[
            "materialize",
            "data.trig",
            "plus.nt",
            "--rules",
            "rules.rq",
            "--include-asserted",
            "--format",
            "nquads",
        ],
    );
    assert_eq!(fresh.status.code(), Some(0), "{}", stderr(&fresh));
    // Asserted facts included: the triple term and the blank nodes of the added file are compared too.
    let text = stdout(&fresh);
    assert!(
        text.contains("\"chat\"@fr") && text.contains("<<( "),
        "{text}"
    );
    assert_eq!(stdout(&out), stdout(&fresh));
}

#[test]
fn a_compressed_change_set_applies_on_one_thread_and_removes_literal_triple_term_and_named_graph_facts()
 {
    // The change set is read beside the opening state, outside the thread pool: a compressed file's reader waits
    // for parsing it hands to the pool, which with `--threads 1` a pool worker waiting on it could never run.
    // Then removals of facts with a typed literal, a triple term and a named graph, looked up in the state's
    // dictionary, give what a run from scratch over the changed data gives.
    let dir = folder();
    save(dir.path());
    let plus = "<http://example.org/t> <http://example.org/p> \"7\"^^<http://example.org/myType> .\n\
                <http://example.org/new> <http://example.org/p> \"chat\"@fr .\n\
                <http://example.org/r2> <http://www.w3.org/1999/02/22-rdf-syntax-ns#reifies> \
                <<( <http://example.org/a> <http://example.org/p> <http://example.org/b> )>> .\n\
                <http://example.org/b> <http://example.org/q> <http://example.org/y> <http://example.org/g> .\n";
    let mut gz = flate2::write::GzEncoder::new(
        fs::File::create(dir.path().join("plus.nq.gz")).unwrap(),
        flate2::Compression::fast(),
    );
    std::io::Write::write_all(&mut gz, plus.as_bytes()).unwrap();
    gz.finish().unwrap();
    let added = run(
        dir.path(),
        &[
            "materialize",
            "--threads",
            "1",
            "--state",
            "st",
            "--add",
            "plus.nq.gz",
            "--diff",
            "-",
        ],
    );
    assert_eq!(added.status.code(), Some(0), "{}", stderr(&added));
    fs::write(
        dir.path().join("minus.nq"),
        "<http://example.org/t> <http://example.org/p> \"7\"^^<http://example.org/myType> .\n\
         <http://example.org/r2> <http://www.w3.org/1999/02/22-rdf-syntax-ns#reifies> \
         <<( <http://example.org/a> <http://example.org/p> <http://example.org/b> )>> .\n\
         <http://example.org/a> <http://example.org/q> <http://example.org/z> <http://example.org/g> .\n",
    )
    .unwrap();
    let out = run(
        dir.path(),
        &[
            "materialize",
            "--threads",
            "1",
            "--state",
            "st",
            "--remove",
            "minus.nq",
            "--include-asserted",
            "--format",
            "nquads",
            "--stats",
            "s.json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let stats = json(dir.path(), "s.json");
    assert_eq!(stats["mode"], "incremental", "{stats}");
    assert_eq!(stats["asserted_removed"], 3, "{stats}");
    fs::write(
        dir.path().join("data.trig"),
        "@prefix ex: <http://example.org/> .\n\
         ex:a ex:p ex:b . ex:b ex:p ex:c . ex:c ex:p ex:d .\n\
         ex:new ex:p \"chat\"@fr .\n\
         ex:g { ex:b ex:q ex:y . }\n",
    )
    .unwrap();
    let fresh = run(
        dir.path(),
        &[
            "materialize",
            "data.trig",
            "--rules",
            "rules.rq",
            "--include-asserted",
            "--format",
            "nquads",
        ],
    );
    assert_eq!(fresh.status.code(), Some(0), "{}", stderr(&fresh));
    assert!(!stdout(&fresh).contains("myType"), "{}", stdout(&fresh));
    assert_eq!(stdout(&out), stdout(&fresh));
}

#[test]
fn other_rules_or_options_derive_again_from_scratch_and_a_change_set_under_them_is_refused() {
    let dir = folder();
    save(dir.path());
    fs::write(
        dir.path().join("other.rq"),
        "CONSTRUCT { ?y <http://example.org/back> ?x } WHERE { ?x <http://example.org/p> ?y }\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("plus.nt"),
        "<http://example.org/d> <http://example.org/p> <http://example.org/e> .\n",
    )
    .unwrap();
    let manifest = fs::read(dir.path().join("st/manifest.json")).unwrap();
    let refused = run(
        dir.path(),
        &[
            "materialize",
            "--state",
            "st",
            "--rules",
            "other.rq",
            "--add",
            "plus.nt",
        ],
    );
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("reasonctl::state::change_mismatch"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(
        fs::read(dir.path().join("st/manifest.json")).unwrap(),
        manifest
    );
    let out = run(
        dir.path(),
        &[
            "materialize",
            "data.trig",
            "--rules",
            "other.rq",
            "--state",
            "st",
            "--stats",
            "s.json",
            "--format",
            "nquads",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let stats = json(dir.path(), "s.json");
    assert_eq!(stats["mode"], "full", "{stats}");
    assert_eq!(
        stats["mode_reason"], "the rules differ from the state's",
        "{stats}"
    );
    assert_eq!(stdout(&out).lines().count(), 3);
    // A rule that negates what the change reaches: evaluated again, the rest maintained.
    fs::write(
        dir.path().join("neg.rq"),
        "CONSTRUCT { ?x <http://example.org/end> true } WHERE { ?y <http://example.org/p> ?x FILTER NOT EXISTS { ?x <http://example.org/p> ?z } }\n",
    )
    .unwrap();
    let args = [
        "materialize",
        "--state",
        "st",
        "--rules",
        "neg.rq",
        "data.trig",
        "--stats",
        "s.json",
    ];
    assert!(run(dir.path(), &args).status.success());
    let (out, stats) = add_plus(dir.path(), &["--format", "nquads"]);
    assert_eq!(stats["mode"], "full", "{stats}");
    assert!(
        stats["mode_reason"]
            .as_str()
            .unwrap()
            .starts_with("every rule negates"),
        "{stats}"
    );
    assert_eq!(
        stdout(&out),
        "<http://example.org/e> <http://example.org/end> \"true\"^^<http://www.w3.org/2001/XMLSchema#boolean> .\n"
    );
    // Beside a rule the change cannot make negate anything, the negating rule alone is evaluated again.
    let two = format!(
        "#@rule neg\n{}#@rule copy\nCONSTRUCT {{ ?x <http://example.org/r> ?y }} WHERE {{ ?x <http://example.org/p> ?y }}\n",
        fs::read_to_string(dir.path().join("neg.rq")).unwrap()
    );
    fs::write(dir.path().join("neg.rq"), two).unwrap();
    assert!(run(dir.path(), &args).status.success());
    let (_, stats) = add_plus(dir.path(), &[]);
    assert_eq!(stats["mode"], "incremental", "{stats}");
    assert_eq!(stats["reevaluated_rules"], 1, "{stats}");
    // A rule writing what a re-evaluated rule writes is evaluated again with it (`early`, `n`, `late`; `m` kept).
    fs::write(dir.path().join("overlap.rq"), OVERLAP).unwrap();
    let args = [
        "materialize",
        "--state",
        "st",
        "--rules",
        "overlap.rq",
        "data.trig",
    ];
    assert!(run(dir.path(), &args).status.success());
    let (out, stats) = add_plus(dir.path(), &[]);
    assert_eq!(stats["mode"], "incremental", "{stats}");
    assert_eq!(stats["reevaluated_rules"], 3, "{stats}");
    let fresh = run(
        dir.path(),
        &[
            "materialize",
            "--rules",
            "overlap.rq",
            "data.trig",
            "plus.nt",
        ],
    );
    assert!(fresh.status.success(), "{}", stderr(&fresh));
    assert!(!fresh.stdout.is_empty());
    assert_eq!(stdout(&out), stdout(&fresh));
}

#[test]
fn a_change_set_with_data_or_a_diff_over_another_output_is_refused() {
    let dir = folder();
    let out = run(
        dir.path(),
        &[
            "materialize",
            "data.trig",
            "--state",
            "st",
            "--add",
            "data.trig",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("reasonctl::settings::change_with_data"),
        "{}",
        stderr(&out)
    );
    let out = run(
        dir.path(),
        &[
            "materialize",
            "data.trig",
            "--state",
            "st",
            "-o",
            "x.nq",
            "--diff",
            "x.nq",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("reasonctl::settings::diff_clash"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.path().join("st").exists());
    // `--diff -` and `-o -` would both write to standard output.
    let out = run(
        dir.path(),
        &[
            "materialize",
            "data.trig",
            "--rules",
            "rules.rq",
            "--state",
            "st",
            "--diff",
            "-",
            "-o",
            "-",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("reasonctl::settings::diff_clash"),
        "{}",
        stderr(&out)
    );
    // A change set needs a state to change.
    let out = run(
        dir.path(),
        &["materialize", "--state", "st", "--add", "data.trig"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("reasonctl::state::missing"),
        "{}",
        stderr(&out)
    );
}

/// A negation the change reaches, and a rule after it (`late`) writing ex:w as a rule before it (`early`) does.
const OVERLAP: &str = "PREFIX ex: <http://example.org/>\n\
    #@rule early\nCONSTRUCT { ?x ex:w ?y } WHERE { ?x ex:p ?y }\n\
    #@rule m\nCONSTRUCT { ?x ex:m ?y } WHERE { ?x ex:p ?y }\n\
    #@rule n\nCONSTRUCT { ?x ex:n ?x } WHERE { ?x ex:q ?y FILTER NOT EXISTS { ?x ex:m ?z } }\n\
    #@rule late\nCONSTRUCT { ?x ex:w ?y } WHERE { ?x ex:n ?y }\n";

/// A negation listed before the rule that writes what it negates: a change reaching both the negating rule's
/// positive atom and, through `blocked`, its negated one.
const LATE_NEGATION: &str = "PREFIX ex: <http://example.org/>\n\
    #@rule out\nCONSTRUCT { ?x ex:out true } WHERE { ?x ex:p ?y FILTER NOT EXISTS { ?x ex:blocked true } }\n\
    #@rule blocked\nCONSTRUCT { ?x ex:blocked true } WHERE { ?x ex:q ?y }\n";

/// An aggregate listed before the rule that writes what it counts.
const LATE_AGGREGATE: &str = "PREFIX ex: <http://example.org/>\n\
    #@rule n\nCONSTRUCT { ?x ex:n ?n } WHERE { ?x ex:p ?z { SELECT ?x (COUNT(?t) AS ?n) WHERE { ?x ex:tag ?t } GROUP BY ?x } }\n\
    #@rule tag\nCONSTRUCT { ?x ex:tag ?y } WHERE { ?x ex:q ?y }\n";

/// Programs for the command-level differential test: recursive, a closure, stratified negation, an aggregate,
/// named-graph heads, OWL 2 RL with a rule over its facts (`--owl2rl` given when the name says so), and an
/// annotated head (minted reifiers) under recursion.
const PROGRAMS: &[(&str, &str)] = &[
    (
        "recursive",
        "PREFIX ex: <http://example.org/>\n\
         #@rule base\nCONSTRUCT { ?x ex:r ?y } WHERE { ?x ex:p ?y }\n\
         #@rule step\nCONSTRUCT { ?x ex:r ?z } WHERE { ?x ex:r ?y . ?y ex:q ?z }\n",
    ),
    (
        "closure",
        "PREFIX ex: <http://example.org/>\n\
         #@rule t\nCONSTRUCT { ?x ex:p ?z } WHERE { ?x ex:p ?y . ?y ex:p ?z }\n",
    ),
    (
        "negation",
        "PREFIX ex: <http://example.org/>\n\
         #@rule reach\nCONSTRUCT { ?x ex:r ?z } WHERE { ?x ex:p ?z }\n\
         #@rule step\nCONSTRUCT { ?x ex:r ?z } WHERE { ?x ex:r ?y . ?y ex:p ?z }\n\
         #@rule lone\nCONSTRUCT { ?x ex:lone true } WHERE { ?x ex:q ?y FILTER NOT EXISTS { ?x ex:r ?w } }\n",
    ),
    (
        "aggregate",
        "PREFIX ex: <http://example.org/>\n\
         #@rule fan\nCONSTRUCT { ?x ex:fan ?n } WHERE { { SELECT ?x (COUNT(?y) AS ?n) WHERE { ?x ex:p ?y } GROUP BY ?x } }\n",
    ),
    (
        "graphs",
        "PREFIX ex: <http://example.org/>\n\
         #@rule into\nCONSTRUCT { GRAPH ex:g { ?y ex:back ?x } } WHERE { ?x ex:q ?y }\n\
         #@rule out\nCONSTRUCT { ?x ex:seen ?y } WHERE { GRAPH ex:g { ?x ex:back ?y } }\n",
    ),
    (
        "owl2rl",
        "PREFIX ex: <http://example.org/>\n\
         #@rule typed\nCONSTRUCT { ?x ex:kind ?c } WHERE { ?x a ?c }\n",
    ),
    ("overlap", OVERLAP),
    ("late_negation", LATE_NEGATION),
    ("late_aggregate", LATE_AGGREGATE),
    (
        "annotated",
        "PREFIX ex: <http://example.org/>\n\
         #@rule via\nCONSTRUCT { ?x ex:r ?y {| ex:via ?z |} } WHERE { ?x ex:p ?z . ?z ex:q ?y }\n\
         #@rule step\nCONSTRUCT { ?x ex:r ?y } WHERE { ?x ex:r ?z . ?z ex:r ?y }\n",
    ),
];

/// TriG over a few nodes and ex:p, ex:q; with `base`, a small ontology (ex:p transitive, ex:q's domain ex:C) and
/// a fact in the named graph ex:g.
fn data_text(facts: &[(u8, u8, u8)], base: bool) -> String {
    let mut text = String::from(
        "@prefix ex: <http://example.org/> .\n@prefix owl: <http://www.w3.org/2002/07/owl#> .\n\
         @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n",
    );
    if base {
        text.push_str(
            "ex:p a owl:TransitiveProperty . ex:q rdfs:domain ex:C .\nex:g { ex:n0 ex:back ex:n1 }\n",
        );
    }
    for &(s, p, o) in facts {
        let p = ["p", "q"][usize::from(p % 2)];
        text.push_str(&format!("ex:n{s} ex:{p} ex:n{o} .\n"));
    }
    text
}

/// [`data_text`] as N-Quads, a statement per line in `order` (a permutation seed), with a comment and the first
/// fact twice: a dump that the state compares line by line.
fn data_nquads(facts: &[(u8, u8, u8)], order: u64) -> String {
    const EX: &str = "http://example.org/";
    let mut rows = vec![
        format!(
            "<{EX}p> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://www.w3.org/2002/07/owl#TransitiveProperty> ."
        ),
        format!("<{EX}q> <http://www.w3.org/2000/01/rdf-schema#domain> <{EX}C> ."),
        format!("<{EX}n0> <{EX}back> <{EX}n1> <{EX}g> ."),
        "# a comment".to_owned(),
    ];
    for &(s, p, o) in facts.iter().chain(facts.first()) {
        let p = ["p", "q"][usize::from(p % 2)];
        rows.push(format!("<{EX}n{s}> <{EX}{p}> <{EX}n{o}> ."));
    }
    let mut seed = order | 1;
    for i in (1..rows.len()).rev() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        rows.swap(i, (seed % (i as u64 + 1)) as usize);
    }
    rows.iter().map(|r| format!("{r}\n")).collect()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 24, ..Default::default() })]

    #[test]
    fn a_maintained_state_writes_what_a_run_from_scratch_writes_and_its_patch_leads_there(
        program in 0usize..PROGRAMS.len(),
        old in proptest::collection::vec((0u8..5, 0u8..2, 0u8..5), 0..12),
        keep in proptest::collection::vec(proptest::prelude::any::<bool>(), 12),
        new in proptest::collection::vec((0u8..5, 0u8..2, 0u8..5), 0..6),
        form in 0u8..4,
        order in proptest::prelude::any::<(u64, u64)>(),
    ) {
        // Form 0: a change set removing and adding; 1: a new dump (TriG); 2: a new dump in N-Quads, compared line
        // by line; 3: a change set that only adds (`--add` alone: the state opens without its asserted orders).
        let as_change_set = form == 0 || form == 3;
        let keep: Vec<bool> = keep.iter().map(|&k| k || form == 3).collect();
        let (name, rules) = PROGRAMS[program];
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::write(d.join("rules.rq"), rules).unwrap();
        let kept: Vec<(u8, u8, u8)> =
            old.iter().zip(&keep).filter(|(_, k)| **k).map(|(f, _)| *f).collect();
        let gone: Vec<(u8, u8, u8)> =
            old.iter().zip(&keep).filter(|(_, k)| !**k).map(|(f, _)| *f).collect();
        let now: Vec<(u8, u8, u8)> = kept.iter().chain(&new).copied().collect();
        fs::write(d.join("old.trig"), data_text(&old, true)).unwrap();
        fs::write(d.join("new.trig"), data_text(&now, true)).unwrap();
        fs::write(d.join("old.nq"), data_nquads(&old, order.0)).unwrap();
        fs::write(d.join("new.nq"), data_nquads(&now, order.1)).unwrap();
        // The dump in N-Quads (form 2) is compared with the state's line by line.
        let (old_file, new_file) = if form == 2 { ("old.nq", "new.nq") } else { ("old.trig", "new.trig") };
        // The change set: facts gone (unless also new), and the new facts (the ontology stays).
        let gone: Vec<(u8, u8, u8)> = gone.into_iter().filter(|f| !now.contains(f)).collect();
        fs::write(d.join("minus.trig"), data_text(&gone, false)).unwrap();
        fs::write(d.join("plus.trig"), data_text(&new, false)).unwrap();
        let mut common = vec!["--rules", "rules.rq", "--format", "nquads"];
        if name == "owl2rl" {
            common.push("--owl2rl");
        }
        let with = |first: &[&str]| -> Vec<String> {
            first.iter().chain(&common).map(|s| (*s).to_owned()).collect()
        };
        let go = |args: Vec<String>| {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = run(d, &args);
            assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
            stdout(&out)
        };
        let before = go(with(&["materialize", old_file, "--state", "st"]));
        let maintained = if as_change_set {
            let mut args = vec!["materialize", "--state", "st"];
            if form == 0 {
                args.extend(["--remove", "minus.trig"]);
            }
            args.extend(["--add", "plus.trig", "--diff", "patch.rdfp", "--format", "nquads"]);
            if name == "owl2rl" {
                args.push("--owl2rl");
            }
            go(args.iter().map(|s| (*s).to_owned()).collect())
        } else {
            go(with(&["materialize", new_file, "--state", "st", "--diff", "patch.rdfp", "--stats", "s.json"]))
        };
        if form == 2 {
            let stats = json(d, "s.json");
            proptest::prop_assert!(stats["lines_compared"].is_object() || stats["mode"] == "unchanged", "{}", stats);
        }
        let fresh = go(with(&["materialize", new_file]));
        proptest::prop_assert_eq!(&maintained, &fresh, "{} (form {})", name, form);
        let patch = fs::read_to_string(d.join("patch.rdfp")).unwrap();
        proptest::prop_assert_eq!(patched(&before, &patch), lines(&fresh));
    }
}

#[test]
fn a_negation_or_aggregate_over_what_a_later_listed_rule_writes_is_evaluated_again_when_the_change_reaches_it()
 {
    for (rules, old, added, gone, kept) in [
        (
            LATE_NEGATION,
            "ex:n1 ex:p ex:n2 .",
            "ex:n5 ex:p ex:n6 . ex:n1 ex:q ex:n3 .",
            "<http://example.org/n1> <http://example.org/out>",
            "<http://example.org/n5> <http://example.org/out>",
        ),
        (
            LATE_AGGREGATE,
            "ex:n1 ex:p ex:n2 . ex:n1 ex:q ex:n7 .",
            "ex:n5 ex:p ex:n6 . ex:n1 ex:q ex:n3 .",
            "<http://example.org/n1> <http://example.org/n> \"1\"",
            "<http://example.org/n1> <http://example.org/n> \"2\"",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let prefix = "@prefix ex: <http://example.org/> .\n";
        fs::write(d.join("rules.rq"), rules).unwrap();
        fs::write(d.join("old.ttl"), format!("{prefix}{old}")).unwrap();
        fs::write(d.join("plus.ttl"), format!("{prefix}{added}")).unwrap();
        fs::write(d.join("new.ttl"), format!("{prefix}{old} {added}")).unwrap();
        let nq = ["--rules", "rules.rq", "--format", "nquads"];
        let first = run(
            d,
            &[&["materialize", "old.ttl", "--state", "st"][..], &nq].concat(),
        );
        assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
        let maintained = run(
            d,
            &[
                &["materialize", "--state", "st", "--add", "plus.ttl"][..],
                &nq,
            ]
            .concat(),
        );
        assert_eq!(maintained.status.code(), Some(0), "{}", stderr(&maintained));
        let fresh = run(d, &[&["materialize", "new.ttl"][..], &nq].concat());
        let (maintained, fresh) = (stdout(&maintained), stdout(&fresh));
        assert!(fresh.contains(kept) && !fresh.contains(gone), "{fresh}");
        assert_eq!(maintained, fresh);
    }
}

/// `materialize data.nt --rules rules.rq --state st --stats s.json` in `dir`.
fn dump_run(dir: &Path) -> Output {
    run(
        dir,
        &[
            "materialize",
            "data.nt",
            "--rules",
            "rules.rq",
            "--state",
            "st",
            "--format",
            "nquads",
            "--stats",
            "s.json",
        ],
    )
}

/// [`dump_run`], which must succeed: its output and statistics.
fn dump_ok(dir: &Path) -> (String, serde_json::Value) {
    let out = dump_run(dir);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    (stdout(&out), json(dir, "s.json"))
}

/// The output of a run from scratch over `data.nt` in `dir`.
fn fresh_nt(dir: &Path) -> String {
    let out = run(
        dir,
        &[
            "materialize",
            "data.nt",
            "--rules",
            "rules.rq",
            "--format",
            "nquads",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    stdout(&out)
}

const NT: &str = "<http://example.org/a> <http://example.org/p> <http://example.org/b> .\n\
# the chain\n\
<http://example.org/b> <http://example.org/p> <http://example.org/c> .\n\
<http://example.org/c> <http://example.org/p> <http://example.org/d> .\n\
<http://example.org/b> <http://example.org/p> <http://example.org/c> .\n";

#[test]
fn an_ntriples_dump_is_compared_with_the_state_line_by_line_and_read_whole_when_it_must_be() {
    let dir = folder();
    let d = dir.path();
    fs::write(
        d.join("rules.rq"),
        "PREFIX ex: <http://example.org/>\n\
         #@rule base\nCONSTRUCT { ?x ex:reach ?y } WHERE { ?x ex:p ?y }\n\
         #@rule step\nCONSTRUCT { ?x ex:reach ?z } WHERE { ?x ex:reach ?y . ?y ex:p ?z }\n",
    )
    .unwrap();
    fs::write(d.join("data.nt"), NT).unwrap();
    let (_, stats) = dump_ok(d);
    assert_eq!(stats["mode"], "full");
    assert!(d.join("st/lines.bin").is_file());

    // One line gone (b p c is stated twice: one copy goes, the fact stays), one line new, the rest moved.
    let changed = "<http://example.org/c> <http://example.org/p> <http://example.org/d> .\n\
        <http://example.org/d> <http://example.org/p> <http://example.org/e> .\n\
        <http://example.org/b> <http://example.org/p> <http://example.org/c> .\n";
    fs::write(d.join("data.nt"), changed).unwrap();
    let (out, stats) = dump_ok(d);
    assert_eq!(stats["mode"], "incremental", "{stats}");
    assert_eq!(stats["lines_compared"]["new"], 1, "{stats}");
    assert_eq!(stats["lines_compared"]["gone"], 1, "{stats}");
    assert_eq!(stats["asserted_removed"], 1, "{stats}");
    assert_eq!(stats["asserted_added"], 1, "{stats}");
    assert_eq!(out, fresh_nt(d));

    // A new line with a blank node: its label names the file's node, which only a whole read knows.
    let blank = format!("{changed}_:x <http://example.org/p> <http://example.org/a> .\n");
    fs::write(d.join("data.nt"), &blank).unwrap();
    let (_, stats) = dump_ok(d);
    assert!(stats["lines_compared"].is_null(), "{stats}");
    assert_eq!(stats["mode"], "incremental", "{stats}");
    // The whole read kept the tables: the next change is compared again, the blank node's line unchanged.
    let more =
        format!("{blank}<http://example.org/e> <http://example.org/p> <http://example.org/f> .\n");
    fs::write(d.join("data.nt"), &more).unwrap();
    let (_, stats) = dump_ok(d);
    assert_eq!(stats["lines_compared"]["new"], 1, "{stats}");
    assert_eq!(stats["asserted_added"], 1, "{stats}");

    // A new line that does not parse is reported where it is, by a whole read; the state stays.
    let kept = fs::read(d.join("st/manifest.json")).unwrap();
    fs::write(
        d.join("data.nt"),
        format!("{more}<http://example.org/x> oops .\n"),
    )
    .unwrap();
    let out = dump_run(d);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("data.nt:6:"), "{}", stderr(&out));
    assert_eq!(fs::read(d.join("st/manifest.json")).unwrap(), kept);

    // Damaged line tables are a cache that is not used: the dump is read whole, to the same facts.
    fs::write(d.join("data.nt"), NT).unwrap();
    fs::write(d.join("st/lines.bin"), b"REASONCTL-LINES\n").unwrap();
    let (out, stats) = dump_ok(d);
    assert!(stats["lines_compared"].is_null(), "{stats}");
    assert_eq!(out, fresh_nt(d));

    // After a change set the data is no longer what the file says: the next dump is read whole.
    fs::write(
        d.join("plus.nt"),
        "<http://example.org/z> <http://example.org/p> <http://example.org/a> .\n",
    )
    .unwrap();
    add_plus(d, &["--format", "nquads"]);
    assert!(!d.join("st/lines.bin").exists());
    fs::write(d.join("data.nt"), changed).unwrap();
    let (out, stats) = dump_ok(d);
    assert!(stats["lines_compared"].is_null(), "{stats}");
    assert_eq!(out, fresh_nt(d));
}

#[test]
fn a_diff_file_named_gz_is_written_compressed() {
    let dir = folder();
    save(dir.path());
    fs::write(
        dir.path().join("plus.nt"),
        "<http://example.org/d> <http://example.org/p> <http://example.org/e> .\n",
    )
    .unwrap();
    add_plus(dir.path(), &["--diff", "p.rdfp.gz"]);
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(fs::File::open(dir.path().join("p.rdfp.gz")).unwrap()),
        &mut text,
    )
    .unwrap();
    assert!(
        text.starts_with("TX .\n") && text.ends_with("TC .\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "A <http://example.org/d> <http://example.org/reach> <http://example.org/e> ."
        ),
        "{text}"
    );
}

/// OWL 2 RL data over nodes ex:n0…: `(s, k, o)` is a fact of kind `k` (a transitive, a symmetric, a functional
/// property, one with a domain, one inverse to the transitive one, owl:sameAs, a class member); with `ontology`,
/// the ontology (which no change touches; its key on K2, functional and domain property, runs prp-key/2).
fn owl_data(facts: &[(u8, u8, u8)], ontology: bool) -> String {
    let mut text = String::from(
        "@prefix ex: <http://example.org/> .\n@prefix owl: <http://www.w3.org/2002/07/owl#> .\n\
         @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n",
    );
    if ontology {
        text.push_str(
            "ex:t a owl:TransitiveProperty . ex:s a owl:SymmetricProperty . ex:f a owl:FunctionalProperty .\n\
         ex:d rdfs:domain ex:K0 . ex:i owl:inverseOf ex:t . ex:K0 rdfs:subClassOf ex:K1 .\n\
         ex:K1 owl:equivalentClass ex:K2 . ex:K3 owl:intersectionOf ( ex:K0 ex:K2 ) .\n\
         ex:K2 owl:hasKey ( ex:f ex:d ) .\n",
        );
    }
    for &(s, k, o) in facts {
        let fact = match k {
            0 => format!("ex:n{s} ex:t ex:n{o}"),
            1 => format!("ex:n{s} ex:s ex:n{o}"),
            2 => format!("ex:n{s} ex:f ex:n{o}"),
            3 => format!("ex:n{s} ex:d ex:n{o}"),
            4 => format!("ex:n{s} ex:i ex:n{o}"),
            5 => format!("ex:n{s} owl:sameAs ex:n{o}"),
            _ => format!("ex:n{s} a ex:K{}", o % 3),
        };
        text.push_str(&fact);
        text.push_str(" .\n");
    }
    text
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 16, ..Default::default() })]

    #[test]
    fn an_owl2rl_state_is_maintained_incrementally_to_what_a_run_from_scratch_writes(
        old in proptest::collection::vec((0u8..6, 0u8..7, 0u8..6), 0..14),
        keep in proptest::collection::vec(proptest::prelude::any::<bool>(), 14),
        new in proptest::collection::vec((0u8..6, 0u8..7, 0u8..6), 0..6),
        as_change_set in proptest::prelude::any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        // One tuple per fact: a class member's class is its object modulo 3.
        let fact = |&(s, k, o): &(u8, u8, u8)| (s, k, if k == 6 { o % 3 } else { o });
        let old: Vec<(u8, u8, u8)> = old.iter().map(fact).collect();
        let new: Vec<(u8, u8, u8)> = new.iter().map(fact).collect();
        let kept: Vec<(u8, u8, u8)> =
            old.iter().zip(&keep).filter(|(_, k)| **k).map(|(f, _)| *f).collect();
        let now: Vec<(u8, u8, u8)> = kept.iter().chain(&new).copied().collect();
        let gone: Vec<(u8, u8, u8)> = (old.iter().zip(&keep))
            .filter(|(f, k)| !**k && !now.contains(f))
            .map(|(f, _)| *f)
            .collect();
        fs::write(d.join("old.ttl"), owl_data(&old, true)).unwrap();
        fs::write(d.join("new.ttl"), owl_data(&now, true)).unwrap();
        fs::write(d.join("minus.ttl"), owl_data(&gone, false)).unwrap();
        fs::write(d.join("plus.ttl"), owl_data(&new, false)).unwrap();
        let go = |args: &[&str]| {
            let mut all = args.to_vec();
            all.extend(["--owl2rl", "--format", "nquads"]);
            let out = run(d, &all);
            assert_eq!(out.status.code(), Some(0), "{all:?}: {}", stderr(&out));
            stdout(&out)
        };
        let before = go(&["materialize", "old.ttl", "--state", "st"]);
        let maintained = if as_change_set {
            go(&["materialize", "--state", "st", "--remove", "minus.ttl", "--add", "plus.ttl", "--diff", "patch.rdfp", "--stats", "s.json"])
        } else {
            go(&["materialize", "new.ttl", "--state", "st", "--diff", "patch.rdfp", "--stats", "s.json"])
        };
        let stats = json(d, "s.json");
        proptest::prop_assert!(stats["mode"] == "incremental" || stats["mode"] == "unchanged", "{}", stats);
        let fresh = go(&["materialize", "new.ttl"]);
        proptest::prop_assert_eq!(&maintained, &fresh);
        let patch = fs::read_to_string(d.join("patch.rdfp")).unwrap();
        proptest::prop_assert_eq!(patched(&before, &patch), lines(&fresh));
    }
}

#[test]
fn an_owl2rl_state_with_rules_or_a_new_list_length_is_derived_again_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let prefix =
        "@prefix ex: <http://example.org/> .\n@prefix owl: <http://www.w3.org/2002/07/owl#> .\n";
    fs::write(d.join("data.ttl"), format!("{prefix}ex:a ex:p ex:b .")).unwrap();
    fs::write(d.join("same.ttl"), format!("{prefix}ex:b ex:p ex:c .")).unwrap();
    let list = "ex:I owl:intersectionOf (ex:A ex:B) . ex:x a ex:A , ex:B .";
    fs::write(d.join("list.ttl"), format!("{prefix}{list}")).unwrap();
    fs::write(
        d.join("rules.rq"),
        "PREFIX ex: <http://example.org/>\nCONSTRUCT { ?x ex:q ?y } WHERE { ?x ex:p ?y }\n",
    )
    .unwrap();
    let mode = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--owl2rl", "-o", "out.nq", "--stats", "s.json"]);
        let out = run(d, &all);
        assert_eq!(out.status.code(), Some(0), "{all:?}: {}", stderr(&out));
        let stats = json(d, "s.json");
        let reason = stats["mode_reason"].as_str().unwrap_or("").to_owned();
        (stats["mode"].as_str().unwrap().to_owned(), reason)
    };
    mode(&["materialize", "data.ttl", "--state", "alone"]);
    let (m, _) = mode(&["materialize", "--state", "alone", "--add", "same.ttl"]);
    assert_eq!(m, "incremental");
    let (m, why) = mode(&["materialize", "--state", "alone", "--add", "list.ttl"]);
    assert_eq!(m, "full");
    assert!(why.contains("lists changed length"), "{why}");
    assert!(fs::read_to_string(d.join("out.nq")).unwrap().contains(
        "<http://example.org/x> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://example.org/I>"
    ));
    mode(&[
        "materialize",
        "data.ttl",
        "--rules",
        "rules.rq",
        "--state",
        "with",
    ]);
    let (m, why) = mode(&["materialize", "--state", "with", "--add", "same.ttl"]);
    assert_eq!(m, "full");
    assert!(why.contains("--owl2rl with rules"), "{why}");
}

#[test]
fn an_unchanged_turtle_file_beside_a_changed_dump_is_not_read_again_and_keeps_its_blank_nodes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The ontology's restriction is a blank node: read again, it would be a new node, and every fact it holds
    // would be removed and added.
    fs::write(
        d.join("onto.ttl"),
        "@prefix ex: <http://example.org/> .\n@prefix owl: <http://www.w3.org/2002/07/owl#> .\n\
         @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n\
         ex:Parent owl:equivalentClass [ a owl:Restriction ; owl:onProperty ex:child ; owl:someValuesFrom ex:Person ] .\n",
    )
    .unwrap();
    let ex = "http://example.org/";
    let fact = |s: &str, o: &str| {
        format!(
            "<{ex}{s}> <{ex}child> <{ex}{o}> .\n<{ex}{o}> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{ex}Person> .\n"
        )
    };
    fs::write(d.join("data.nt"), fact("a", "b")).unwrap();
    let go = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--owl2rl", "--format", "nquads", "--stats", "s.json"]);
        let out = run(d, &all);
        assert_eq!(out.status.code(), Some(0), "{all:?}: {}", stderr(&out));
        (stdout(&out), json(d, "s.json"))
    };
    go(&["materialize", "data.nt", "onto.ttl", "--state", "st"]);
    fs::write(
        d.join("data.nt"),
        format!("{}{}", fact("a", "b"), fact("c", "d")),
    )
    .unwrap();
    let (maintained, stats) = go(&["materialize", "data.nt", "onto.ttl", "--state", "st"]);
    assert_eq!(stats["mode"], "incremental", "{stats}");
    // Only the dump's new lines were read: the ontology's facts are the state's.
    assert_eq!(stats["lines_compared"]["new"], 2, "{stats}");
    assert_eq!(stats["asserted_removed"], 0, "{stats}");
    assert_eq!(stats["asserted_added"], 2, "{stats}");
    let parent = format!("<{ex}c> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{ex}Parent>");
    let (fresh, _) = go(&["materialize", "data.nt", "onto.ttl"]);
    assert!(fresh.contains(&parent));
    assert_eq!(maintained, fresh);
    // A changed Turtle file is read whole: its facts, and so the output, are as a fresh run's.
    fs::write(
        d.join("onto.ttl"),
        "@prefix ex: <http://example.org/> .\n@prefix owl: <http://www.w3.org/2002/07/owl#> .\n\
         ex:Parent owl:equivalentClass [ a owl:Restriction ; owl:onProperty ex:child ; owl:someValuesFrom ex:Thing ] .\n",
    )
    .unwrap();
    let (maintained, stats) = go(&["materialize", "data.nt", "onto.ttl", "--state", "st"]);
    assert!(stats["lines_compared"].is_null(), "{stats}");
    let (fresh, _) = go(&["materialize", "data.nt", "onto.ttl"]);
    assert!(!fresh.contains(&parent));
    // The restriction read again is a new node, labelled after the state's old one.
    let unlabelled = |t: &str| {
        t.split("_:b")
            .enumerate()
            .map(|(i, part)| {
                if i == 0 {
                    part
                } else {
                    part.trim_start_matches(|c: char| c.is_ascii_digit())
                }
            })
            .collect::<Vec<_>>()
            .join("_:b")
    };
    assert_eq!(unlabelled(&maintained), unlabelled(&fresh));
}

/// `materialize ARGS --format nquads -o OUT` in `dir` (must succeed), and what it wrote.
fn written(dir: &Path, args: &[&str], out: &str) -> String {
    let mut all = args.to_vec();
    all.extend(["--format", "nquads", "-o", out]);
    let o = run(dir, &all);
    assert_eq!(o.status.code(), Some(0), "{all:?}: {}", stderr(&o));
    fs::read_to_string(dir.join(out)).unwrap()
}

#[test]
fn a_zero_or_more_path_from_a_variable_bound_only_as_a_predicate_is_maintained_and_staged_exactly()
{
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // ?z is a predicate, no node: its zero-length step exists only once a fact names it as subject or object.
    fs::write(
        d.join("r.rq"),
        "PREFIX ex: <http://ex.org/>\n#@rule r\nCONSTRUCT { ?z ex:r ?y } WHERE { ?s ?z ?o . ?z ex:q* ?y }\n\
         #@rule w\nCONSTRUCT { ex:b ex:w ?v } WHERE { ?u ex:r ?v }\n",
    )
    .unwrap();
    let ex = "http://ex.org/";
    let old = format!("<{ex}a> <{ex}b> <{ex}c> .\n");
    let new = format!("{old}<{ex}b> <{ex}t> <{ex}k> .\n");
    fs::write(d.join("old.nt"), &old).unwrap();
    fs::write(d.join("new.nt"), &new).unwrap();
    fs::write(d.join("plus.nt"), format!("<{ex}b> <{ex}t> <{ex}k> .\n")).unwrap();
    let fresh_new = written(d, &["materialize", "new.nt", "--rules", "r.rq"], "f.nq");
    assert!(
        fresh_new.contains(&format!("<{ex}b> <{ex}r> <{ex}b>")),
        "{fresh_new}"
    );
    let whole = written(
        d,
        &[
            "materialize",
            "new.nt",
            "--rules",
            "r.rq",
            "--schedule",
            "whole-program",
        ],
        "w.nq",
    );
    assert_eq!(fresh_new, whole);
    let fresh_old = written(d, &["materialize", "old.nt", "--rules", "r.rq"], "f.nq");
    written(
        d,
        &["materialize", "old.nt", "--rules", "r.rq", "--state", "st"],
        "a.nq",
    );
    let added = written(
        d,
        &["materialize", "--state", "st", "--add", "plus.nt"],
        "b.nq",
    );
    assert_eq!(added, fresh_new);
    let removed = written(
        d,
        &["materialize", "old.nt", "--rules", "r.rq", "--state", "st"],
        "c.nq",
    );
    assert_eq!(removed, fresh_old);
}

#[test]
fn an_unchanged_turtle_file_is_read_again_when_it_moved_or_its_base_changed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::create_dir(d.join("sub")).unwrap();
    // Relative IRIs: they resolve against the file's place, or --base.
    let onto = "<a> <http://ex.org/p> <b> .\n";
    fs::write(d.join("o.ttl"), onto).unwrap();
    fs::write(d.join("sub/o.ttl"), onto).unwrap();
    fs::write(
        d.join("d.nt"),
        "<http://ex.org/x> <http://ex.org/p> <http://ex.org/y> .\n",
    )
    .unwrap();
    fs::write(
        d.join("d2.nt"),
        "<http://ex.org/x> <http://ex.org/p> <http://ex.org/z> .\n",
    )
    .unwrap();
    fs::write(
        d.join("r.rq"),
        "PREFIX ex: <http://ex.org/>\nCONSTRUCT { ?x ex:r ?y } WHERE { ?x ex:p ?y }\n",
    )
    .unwrap();
    let rules = ["--rules", "r.rq"];
    let with = |args: &[&'static str]| -> Vec<&'static str> { [args, &rules].concat() };
    written(
        d,
        &with(&["materialize", "o.ttl", "d.nt", "--state", "st"]),
        "a.nq",
    );
    // The same content at another place, beside a changed dump.
    let moved = written(
        d,
        &with(&["materialize", "sub/o.ttl", "d2.nt", "--state", "st"]),
        "b.nq",
    );
    let fresh = written(d, &with(&["materialize", "sub/o.ttl", "d2.nt"]), "c.nq");
    assert!(fresh.contains("/sub/a>"), "{fresh}");
    assert_eq!(moved, fresh);
    // The same place under another --base.
    let based = written(
        d,
        &with(&[
            "materialize",
            "sub/o.ttl",
            "d.nt",
            "--state",
            "st",
            "--base",
            "http://other.org/",
        ]),
        "b.nq",
    );
    let fresh = written(
        d,
        &with(&[
            "materialize",
            "sub/o.ttl",
            "d.nt",
            "--base",
            "http://other.org/",
        ]),
        "c.nq",
    );
    assert!(fresh.contains("<http://other.org/a>"), "{fresh}");
    assert_eq!(based, fresh);
}

#[test]
fn an_owl2rl_state_asked_for_provenance_is_derived_again() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let prefix = "@prefix ex: <http://example.org/> .\n@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n";
    fs::write(
        d.join("old.ttl"),
        format!("{prefix}ex:C rdfs:subClassOf ex:D . ex:a a ex:C ."),
    )
    .unwrap();
    fs::write(
        d.join("new.ttl"),
        format!("{prefix}ex:C rdfs:subClassOf ex:D . ex:a a ex:C . ex:b a ex:C ."),
    )
    .unwrap();
    written(
        d,
        &["materialize", "old.ttl", "--owl2rl", "--state", "st"],
        "a.nq",
    );
    let out = run(
        d,
        &[
            "materialize",
            "new.ttl",
            "--owl2rl",
            "--state",
            "st",
            "--provenance",
            "-o",
            "b.nq",
            "--stats",
            "s.json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(d, "s.json")["mode"], "full");
    let fresh = written(
        d,
        &["materialize", "new.ttl", "--owl2rl", "--provenance"],
        "c.nq",
    );
    let maintained = fs::read_to_string(d.join("b.nq")).unwrap();
    assert!(fresh.contains("reasonctl.invalid/ns#rule"), "{fresh}");
    // -o b.nq wrote N-Quads by its extension, as --format nquads does.
    assert_eq!(maintained, fresh);
}

#[test]
fn an_inconsistency_found_while_maintaining_reads_as_the_one_a_run_from_scratch_finds() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    let pre =
        "@prefix owl: <http://www.w3.org/2002/07/owl#> .\n@prefix ex: <http://example.org/> .\n";
    let same = "ex:c owl:sameAs ex:d . ex:a owl:sameAs ex:b .\n";
    let different = "ex:d owl:differentFrom ex:c . ex:b owl:differentFrom ex:a .\n";
    fs::write(p.join("rest.ttl"), format!("{pre}{same}")).unwrap();
    fs::write(p.join("plus.ttl"), format!("{pre}{different}")).unwrap();
    // The same facts with the change first: its terms are numbered in another order than the state's.
    fs::write(p.join("all.ttl"), format!("{pre}{different}{same}")).unwrap();
    let saved = run(
        p,
        &[
            "materialize",
            "rest.ttl",
            "--owl2rl",
            "--state",
            "st",
            "-o",
            "o1.nt",
        ],
    );
    assert_eq!(saved.status.code(), Some(0), "{}", stderr(&saved));
    let maintained = run(
        p,
        &[
            "materialize",
            "--state",
            "st",
            "--add",
            "plus.ttl",
            "-o",
            "o2.nt",
        ],
    );
    let fresh = run(p, &["materialize", "all.ttl", "--owl2rl", "-o", "o3.nt"]);
    assert_eq!(maintained.status.code(), Some(1), "{}", stderr(&maintained));
    assert_eq!(fresh.status.code(), Some(1), "{}", stderr(&fresh));
    assert!(stderr(&fresh).contains("reasonctl::owl2rl::inconsistent"));
    // The same clashes, each written the same way round, in the same order.
    assert_eq!(stderr(&maintained), stderr(&fresh));
}

/// A run stopped by SIGINT or SIGTERM while it holds the state removes its lock file with its other temporaries,
/// and leaves the state as it was.
#[cfg(unix)]
#[test]
fn a_run_stopped_by_a_signal_leaves_no_lock_file_beside_the_state() {
    use std::process::{Command as Process, Stdio};
    let dir = folder();
    save(dir.path());
    let manifest = fs::read(dir.path().join("st/manifest.json")).unwrap();
    // A long chain: its transitive closure keeps the run busy well past the signal.
    fs::write(dir.path().join("data.trig"), chain_nt(0, 3000)).unwrap();
    let lock = dir.path().join(".st.reasonctl.lock");
    for signal in ["INT", "TERM"] {
        let mut child = Process::new(env!("CARGO_BIN_EXE_reasonctl"))
            .args([
                "materialize",
                "data.trig",
                "--rules",
                "rules.rq",
                "--state",
                "st",
                "-o",
                "o.nq",
            ])
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        while !lock.exists() && started.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(lock.exists(), "SIG{signal}: the run never took the lock");
        let sent = Process::new("kill")
            .args([format!("-{signal}"), child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let status = child.wait().unwrap();
        assert!(
            !status.success(),
            "SIG{signal}: the run finished before the signal"
        );
        assert!(!lock.exists(), "SIG{signal}: the lock file was left");
        assert_eq!(
            fs::read(dir.path().join("st/manifest.json")).unwrap(),
            manifest
        );
        assert_eq!(left_beside(dir.path()), Vec::<String>::new());
    }
}

// A state saved with --lenient from data whose IRIs all read strictly, then a change set with one that does not:
// the patch escapes it (`\u003E`), as a run over all of it would, and does not write `<http://e/m>>`.
#[test]
fn an_iri_a_lenient_change_set_brings_is_escaped_in_the_patch() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("d.nt"),
        "<http://e/a> <http://e/p> <http://e/b> .\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("r.rq"),
        "CONSTRUCT { ?s <http://e/q> ?o } WHERE { ?s <http://e/p> ?o }\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("add.nt"),
        "<http://e/n> <http://e/p> <http://e/m\\u003E> .\n",
    )
    .unwrap();
    let saved = run(
        dir.path(),
        &["materialize", "-q", "d.nt", "--rules", "r.rq", "--lenient"]
            .into_iter()
            .chain(["-o", "o.nt", "--state", "st"])
            .collect::<Vec<_>>(),
    );
    assert!(saved.status.success(), "{}", stderr(&saved));
    let added = run(
        dir.path(),
        &[
            "materialize",
            "-q",
            "--state",
            "st",
            "--add",
            "add.nt",
            "--diff",
            "-",
        ],
    );
    assert!(added.status.success(), "{}", stderr(&added));
    assert!(
        stdout(&added).contains("A <http://e/n> <http://e/q> <http://e/m\\u003E> ."),
        "{}",
        stdout(&added)
    );
}
