//! Command-line behaviour that fixture folders cannot express: stdin, files and directories written, exit codes
//! on I/O failures, determinism across thread counts, and the committed man pages and completions.

use std::fs;
use std::path::Path;

use assert_cmd::Command;

fn reasonctl() -> Command {
    Command::cargo_bin("reasonctl").expect("binary")
}

const DATA: &str = "PREFIX ex: <http://example.org/>\n\
                    ex:a ex:p ex:b .\n\
                    ex:g { ex:a ex:q \"x\" . }\n\
                    <http://example.org/other%20graph> { ex:c ex:p ex:d . }\n";

fn write_data(dir: &Path) -> String {
    let path = dir.join("data.trig");
    fs::write(&path, DATA).unwrap();
    path.display().to_string()
}

#[test]
fn stdin_is_read_with_the_given_format() {
    let out = reasonctl()
        .args([
            "materialize",
            "-",
            "--data-format",
            "turtle",
            "--include-asserted",
            "--format",
            "ntriples",
        ])
        .write_stdin("<http://e/a> <http://e/p> <http://e/b> .\n")
        .assert()
        .success();
    assert_eq!(
        String::from_utf8_lossy(&out.get_output().stdout),
        "<http://e/a> <http://e/p> <http://e/b> .\n"
    );
}

#[test]
fn output_file_is_written_in_the_format_its_extension_names() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_data(dir.path());
    let out = dir.path().join("out.nq");
    reasonctl()
        .args(["materialize", &data, "--include-asserted", "-o"])
        .arg(&out)
        .assert()
        .success()
        .stdout("");
    let text = fs::read_to_string(&out).unwrap();
    assert!(
        text.contains(
            "<http://example.org/a> <http://example.org/q> \"x\" <http://example.org/g> .\n"
        ),
        "{text}"
    );
    let leftovers: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

#[test]
fn out_dir_writes_one_file_per_graph_with_reversible_names() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_data(dir.path());
    let out = dir.path().join("graphs");
    reasonctl()
        .args(["materialize", &data, "--include-asserted", "--out-dir"])
        .arg(&out)
        .assert()
        .success();
    let mut names: Vec<String> = fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "default.ttl",
            "graphs.tsv",
            "http%3A%2F%2Fexample.org%2Fg.ttl",
            "http%3A%2F%2Fexample.org%2Fother%2520graph.ttl"
        ]
    );
    let g = fs::read_to_string(out.join("http%3A%2F%2Fexample.org%2Fg.ttl")).unwrap();
    assert_eq!(
        g,
        "@prefix ex: <http://example.org/> .\nex:a ex:q \"x\" .\n"
    );
    let index = fs::read_to_string(out.join("graphs.tsv")).unwrap();
    assert!(
        index.contains(
            "http%3A%2F%2Fexample.org%2Fother%2520graph.ttl\thttp://example.org/other%20graph\n"
        ),
        "{index}"
    );
}

#[test]
fn out_dir_puts_no_file_in_place_when_a_later_one_cannot_be_written() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_data(dir.path());
    let out = dir.path().join("graphs");
    // The last graph's file cannot be written (a folder has its name); the others are written before it.
    fs::create_dir_all(out.join("http%3A%2F%2Fexample.org%2Fother%2520graph.ttl")).unwrap();
    reasonctl()
        .args(["materialize", &data, "--include-asserted", "--out-dir"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("other%2520graph.ttl"));
    // Nothing of the run is left: no graph file, no index, no temporary.
    let names: Vec<String> = fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["http%3A%2F%2Fexample.org%2Fother%2520graph.ttl"]);
}

#[test]
fn out_dir_with_provenance_writes_each_graph_once_with_its_facts_and_their_reifiers() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_data(dir.path());
    let rules = dir.path().join("rules.rq");
    fs::write(
        &rules,
        "PREFIX ex: <http://example.org/>\n\
         #@rule here\nCONSTRUCT { ?x ex:r ?y } WHERE { ?x ex:p ?y }\n\
         #@rule there\nCONSTRUCT { GRAPH ex:g { ?x ex:s ?y } } WHERE { GRAPH ex:g { ?x ex:q ?y } }\n",
    )
    .unwrap();
    let out = dir.path().join("graphs");
    reasonctl()
        .args([
            "materialize",
            &data,
            "--provenance",
            "--format",
            "nquads",
            "--rules",
        ])
        .arg(&rules)
        .arg("--out-dir")
        .arg(&out)
        .assert()
        .success();
    let index = fs::read_to_string(out.join("graphs.tsv")).unwrap();
    assert_eq!(
        index,
        "file\tgraph\ndefault.nq\t\nhttp%3A%2F%2Fexample.org%2Fg.nq\thttp://example.org/g\n"
    );
    // Each file holds its graph's derived facts, then their reifiers (none overwritten by the other).
    for (file, fact, rule) in [
        (
            "default.nq",
            "<http://example.org/a> <http://example.org/r> <http://example.org/b> .",
            "\"here\"",
        ),
        (
            "http%3A%2F%2Fexample.org%2Fg.nq",
            "<http://example.org/a> <http://example.org/s> \"x\" <http://example.org/g> .",
            "\"there\"",
        ),
    ] {
        let text = fs::read_to_string(out.join(file)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.contains(&fact), "{file}: {text}");
        assert_eq!(
            lines.iter().filter(|l| l.contains("#reifies>")).count(),
            1,
            "{file}: {text}"
        );
        assert!(lines.iter().any(|l| l.contains(rule)), "{file}: {text}");
    }
}

#[test]
fn a_syntax_error_leaves_an_existing_output_file_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.nt");
    fs::write(
        &bad,
        "<http://e/a> <http://e/p> <http://e/b> .\n<http://e/a> <http://e/p> .\n",
    )
    .unwrap();
    let out = dir.path().join("out.nt");
    fs::write(&out, "previous run\n").unwrap();
    reasonctl()
        .args(["materialize"])
        .arg(&bad)
        .args(["--include-asserted", "-o"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("bad.nt:2:"));
    assert_eq!(fs::read_to_string(&out).unwrap(), "previous run\n");
}

#[test]
fn a_syntax_error_after_lone_cr_line_ends_quotes_its_line_at_the_column_it_names() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("cr.nt");
    fs::write(
        &data,
        "<http://a> <http://b> <http://c> .\r<http://a> <http://b> <http://c> <http://d> .\r",
    )
    .unwrap();
    let out = reasonctl()
        .args(["materialize", "-q", "--include-asserted", "cr.nt"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    // The message and the quoted line's header name the same place (the header counted LF only: 2:74).
    assert!(err.contains("cr.nt:2:"), "{err}");
    let at = err
        .split("cr.nt:2:")
        .nth(1)
        .unwrap()
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap();
    assert!(err.contains(&format!("[cr.nt:2:{at}]")), "{err}");
}

#[test]
fn a_query_output_file_whose_extension_names_a_syntax_for_the_other_kind_of_answer_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_data(dir.path());
    for (out, query, form) in [
        ("x.nt", "SELECT * WHERE { ?s ?p ?o }", "SELECT"),
        (
            "y.json",
            "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }",
            "CONSTRUCT",
        ),
    ] {
        reasonctl()
            .args(["query", &data, "--query", query, "-o", out])
            .current_dir(dir.path())
            .assert()
            .code(2)
            .stderr(predicates::str::contains(format!(
                "-o {out} (by its extension) cannot hold the answer of a {form}"
            )));
        assert!(!dir.path().join(out).exists(), "{out}");
    }
    // --format overrides the extension (an extension that fits decides: see
    // `a_query_output_file_extension_picks_the_answer_syntax_when_it_suits_the_answer`).
    reasonctl()
        .args([
            "query",
            &data,
            "--query",
            "SELECT ?s WHERE { ?s ?p ?o } LIMIT 1",
            "-o",
            "b.nt",
            "--format",
            "csv",
        ])
        .current_dir(dir.path())
        .assert()
        .success();
    assert!(
        fs::read_to_string(dir.path().join("b.nt"))
            .unwrap()
            .starts_with("s\r\n")
    );
}

#[test]
fn a_version_directive_read_from_standard_input_is_no_statement() {
    for (format, text) in [
        (
            "ntriples",
            "VERSION \"1.2\"\n<http://e/a> <http://e/p> <http://e/b> .\n",
        ),
        (
            "nquads",
            "<http://e/a> <http://e/p> <http://e/b> <http://e/g> .\n  VERSION '1.2'\n",
        ),
    ] {
        let out = reasonctl()
            .args([
                "materialize",
                "-q",
                "-",
                "--data-format",
                format,
                "--include-asserted",
                "--format",
                "nquads",
            ])
            .write_stdin(text)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).lines().count(),
            1,
            "{format}"
        );
    }
}

#[test]
fn an_unwritable_output_fails_with_exit_2_and_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_data(dir.path());
    let out = dir.path().join("missing-dir").join("out.trig");
    reasonctl()
        .args(["materialize", &data, "--include-asserted", "-o"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("reasonctl::output::write"))
        .stderr(predicates::str::contains("out.trig"));
    assert!(!out.exists());
}

#[test]
fn a_missing_file_and_an_unknown_extension_exit_2_with_help() {
    reasonctl()
        .args(["materialize", "does-not-exist.ttl"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "does-not-exist.ttl does not exist",
        ));
    let dir = tempfile::tempdir().unwrap();
    let odd = dir.path().join("data.csv");
    fs::write(&odd, "a,b\n").unwrap();
    reasonctl()
        .arg("materialize")
        .arg(&odd)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--data-format"));
}

#[test]
fn a_directory_given_as_data_is_refused_not_panicked_on() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("folder.ttl");
    fs::create_dir(&sub).unwrap();
    reasonctl()
        .arg("materialize")
        .arg(&sub)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("directory"));
}

#[test]
fn turtle_to_stdout_refuses_named_graphs() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_data(dir.path());
    reasonctl()
        .args([
            "materialize",
            &data,
            "--include-asserted",
            "--format",
            "turtle",
        ])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--out-dir"));
}

#[test]
fn bad_flag_values_exit_2() {
    reasonctl()
        .args(["materialize", "x.ttl", "--base", "not an iri"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--base"));
    reasonctl()
        .args(["materialize", "x.ttl", "--threads", "0"])
        .assert()
        .code(2);
    reasonctl()
        .args(["materialize", "x.ttl", "-o", "out.csv"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--format"));
}

#[test]
fn output_is_identical_whatever_the_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_data(dir.path());
    let run = |threads: &str| {
        reasonctl()
            .args([
                "materialize",
                &data,
                "--include-asserted",
                "--threads",
                threads,
            ])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone()
    };
    assert_eq!(run("1"), run("2"));
}

#[test]
fn help_lists_every_materialize_flag() {
    let out = reasonctl()
        .args(["materialize", "--help"])
        .assert()
        .success();
    let help = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    for flag in [
        "--data-format",
        "--base",
        "--output",
        "--out-dir",
        "--format",
        "--include-asserted",
        "--threads",
        "--quiet",
    ] {
        assert!(help.contains(flag), "--help lacks {flag}:\n{help}");
    }
}

/// The committed `man/` and `completions/` must be what `reasonctl generate` writes now.
#[test]
fn committed_man_pages_and_completions_are_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (what, dir) in [("man", "man"), ("completions", "completions")] {
        let fresh = tempfile::tempdir().unwrap();
        reasonctl()
            .args(["generate", what, "--out-dir"])
            .arg(fresh.path())
            .assert()
            .success();
        let listing = |d: &Path| {
            let mut v: Vec<(String, Vec<u8>)> = fs::read_dir(d)
                .unwrap()
                .flatten()
                .map(|e| {
                    (
                        e.file_name().to_string_lossy().into_owned(),
                        fs::read(e.path()).unwrap(),
                    )
                })
                .collect();
            v.sort();
            v
        };
        let committed = listing(&root.join(dir));
        let generated = listing(fresh.path());
        let names = |v: &[(String, Vec<u8>)]| v.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
        assert_eq!(
            names(&committed),
            names(&generated),
            "run `cargo run -- generate {what} --out-dir {dir}`"
        );
        for ((name, a), (_, b)) in committed.iter().zip(&generated) {
            assert!(
                a == b,
                "{dir}/{name} is stale: run `cargo run -- generate {what} --out-dir {dir}`"
            );
        }
    }
}

#[test]
fn stats_file_reports_derived_counts_caps_stages_and_rules() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data.nt");
    fs::write(
        &data,
        "<http://e/a> <http://e/p> <http://e/b> .\n<http://e/b> <http://e/p> <http://e/c> .\n",
    )
    .unwrap();
    let rules = dir.path().join("rules.rq");
    fs::write(&rules, "#@rule base\nCONSTRUCT { ?x <http://e/r> ?y } WHERE { ?x <http://e/p> ?y }\n#@rule step\nCONSTRUCT { ?x <http://e/r> ?z } WHERE { ?x <http://e/r> ?y . ?y <http://e/p> ?z }\n").unwrap();
    let stats = dir.path().join("stats.json");
    reasonctl()
        .arg("materialize")
        .arg(&data)
        .arg("--rules")
        .arg(&rules)
        .arg("--stats")
        .arg(&stats)
        .arg("--max-facts")
        .arg("2")
        .assert()
        .code(3);
    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&stats).unwrap()).unwrap();
    assert_eq!(json["derived"], 2);
    assert_eq!(json["capped"], true);
    assert_eq!(json["capped_reason"], "facts");
    assert!(
        json["capped_rules"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r == "step"),
        "{json}"
    );
    assert!(json["pending_rules"].is_array());
    assert!(json["stages"].as_array().unwrap().len() >= 2, "{json}");
    assert_eq!(json["rules"].as_array().unwrap().len(), 2);
}

/// `--stats -` puts the statistics on standard output when the command's output goes to a file, and is refused
/// where that output goes to standard output too (no file named `-` is made).
#[test]
fn stats_dash_writes_to_standard_output_only_when_it_is_free() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_data(dir.path());
    let run = |args: &[&str]| {
        reasonctl()
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    fs::write(
        dir.path().join("r.rq"),
        "PREFIX ex: <http://example.org/>\n#@rule r\nCONSTRUCT { ?b ex:back ?a } WHERE { ?a ex:p ?b }\n",
    )
    .unwrap();
    let out = run(&[
        "materialize",
        &data,
        "--rules",
        "r.rq",
        "-o",
        "out.nt",
        "--stats",
        "-",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stats: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert!(stats["derived"].is_u64(), "{stats}");
    assert!(dir.path().join("out.nt").is_file());
    for args in [
        vec![
            "materialize",
            data.as_str(),
            "--rules",
            "r.rq",
            "--stats",
            "-",
        ],
        vec![
            "query",
            data.as_str(),
            "--query",
            "SELECT * { ?s ?p ?o }",
            "--stats",
            "-",
        ],
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("reasonctl::settings::stats_on_stdout"),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    assert!(!dir.path().join("-").exists());
}

#[test]
fn rules_output_is_identical_whatever_the_thread_count() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let run = |threads: &str| {
        reasonctl()
            .arg("materialize")
            .arg(root.join("fixtures/example/claims.trig"))
            .arg("--rules")
            .arg(root.join("fixtures/example/rules"))
            .args(["--include-asserted", "--threads", threads])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone()
    };
    assert_eq!(run("1"), run("2"));
}

/// The fail-open bug this design comes from: `(= ?p ex:knows)` compared the IRI with the string "ex:knows".
#[test]
fn jsonld_filter_iri_operands_compare_by_term_identity() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data.ttl");
    fs::write(
        &data,
        "PREFIX ex: <http://example.org/>\nex:a ex:knows ex:b ; ex:ssn \"123\" ; ex:name \"A\" .\n",
    )
    .unwrap();
    let rules = dir.path().join("rules.json");
    fs::write(
        &rules,
        r#"[{"@context": {"ex": "http://example.org/"}, "@id": "eq",
             "where": [{"@id": "?s", "?p": "?o"}, ["filter", "(= ?p ex:knows)"]],
             "insert": {"@id": "?s", "ex:matchedEq": {"@id": "?p"}}},
            {"@context": {"ex": "http://example.org/"}, "@id": "ne",
             "where": [{"@id": "?s", "?p": "?o"}, ["filter", "(!= ?p ex:ssn)"]],
             "insert": {"@id": "?s", "ex:matchedNe": {"@id": "?p"}}}]"#,
    )
    .unwrap();
    let out = reasonctl()
        .arg("materialize")
        .arg(&data)
        .arg("--rules")
        .arg(&rules)
        .args(["--format", "ntriples"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let out = String::from_utf8(out).unwrap();
    // = matches exactly the IRI ex:knows.
    assert!(
        out.contains(
            "<http://example.org/a> <http://example.org/matchedEq> <http://example.org/knows> .\n"
        ),
        "{out}"
    );
    assert_eq!(
        out.lines()
            .filter(|l| l.contains("> <http://example.org/matchedEq> <"))
            .count(),
        1,
        "{out}"
    );
    // != keeps every predicate but ex:ssn.
    assert!(
        out.contains("<http://example.org/matchedNe> <http://example.org/knows>"),
        "{out}"
    );
    assert!(
        out.contains("<http://example.org/matchedNe> <http://example.org/name>"),
        "{out}"
    );
    assert!(
        !out.contains("<http://example.org/matchedNe> <http://example.org/ssn>"),
        "{out}"
    );
}

#[test]
fn a_cap_before_a_negating_rule_fails_writes_no_output_and_still_writes_stats() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/materialize/strata-chain");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.nq");
    let (stderr, json) = failed_with_stats(
        reasonctl()
            .arg("materialize")
            .arg(root.join("data.ttl"))
            .arg("--rules")
            .arg(root.join("rules.rq"))
            .args(["--max-facts", "6"]),
        &out,
        dir.path(),
    );
    assert!(
        stderr.contains("reasonctl::datalog::resource_limit"),
        "{stderr}"
    );
    assert_eq!(json["capped"], true);
    assert_eq!(json["derived"], 6);
    let pending: Vec<&str> = json["pending_rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert!(pending.contains(&"hub"), "{json}");
    // The same run with room to finish succeeds.
    reasonctl()
        .arg("materialize")
        .arg(root.join("data.ttl"))
        .arg("--rules")
        .arg(root.join("rules.rq"))
        .args(["--max-facts", "1000", "-o"])
        .arg(&out)
        .assert()
        .success();
    assert!(out.exists());
}

#[test]
fn an_owl2rl_closure_out_of_time_fails_naming_the_closure_and_still_writes_stats() {
    let root =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/materialize/owl2rl-closure-timeout");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.nt");
    let (stderr, json) = failed_with_stats(
        reasonctl()
            .arg("materialize")
            .arg(root.join("data.ttl"))
            .args(["--owl2rl", "--timeout", "0.000000001"]),
        &out,
        dir.path(),
    );
    assert!(
        stderr.contains("reasonctl::owl2rl::closure_timeout") && !stderr.contains("check_timeout"),
        "{stderr}"
    );
    // The closure's statistics, capped by time: where the budget went.
    assert_eq!(json["capped"], true, "{json}");
    assert_eq!(json["capped_reason"], "time", "{json}");
}

/// Runs `cmd` with `-o out --stats DIR/stats.json`; it must exit 3 and write no output. Its standard error and
/// its statistics.
fn failed_with_stats(
    cmd: &mut assert_cmd::Command,
    out: &Path,
    dir: &Path,
) -> (String, serde_json::Value) {
    let stats = dir.join("stats.json");
    let assert = cmd
        .arg("-o")
        .arg(out)
        .arg("--stats")
        .arg(&stats)
        .assert()
        .code(3);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).to_string();
    assert!(!out.exists(), "a failed run must not write its output");
    let json = serde_json::from_str(&fs::read_to_string(&stats).unwrap()).unwrap();
    (stderr, json)
}

#[test]
fn deps_text_fits_80_columns_and_json_lists_stages_producers_first() {
    let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/deps/_program/rules");
    let text = reasonctl()
        .arg("deps")
        .arg("--rules")
        .arg(&rules)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&text.get_output().stdout).to_string();
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    let json = reasonctl()
        .arg("deps")
        .arg("--rules")
        .arg(&rules)
        .args(["--format", "json"])
        .assert()
        .success();
    let json: serde_json::Value = serde_json::from_slice(&json.get_output().stdout).unwrap();
    let stage_of = |id: &str| {
        json["rules"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
            .unwrap()["stage"]
            .as_u64()
            .unwrap()
    };
    let stages = json["stages"].as_array().unwrap();
    assert!(stages.len() >= 4);
    for (i, s) in stages.iter().enumerate() {
        assert_eq!(s["stage"], i);
    }
    // Every edge goes from an earlier stage, or stays inside a stage (a recursive group); negated and
    // aggregated edges always come from an earlier stage.
    for e in json["edges"].as_array().unwrap() {
        let (from, to) = (
            stage_of(e["from"].as_str().unwrap()),
            stage_of(e["to"].as_str().unwrap()),
        );
        assert!(from <= to, "{e}");
        if e["kind"] != "positive" {
            assert!(from < to, "{e}");
        }
    }
    assert_eq!(json["unstratified"].as_array().unwrap().len(), 0);
}

#[test]
fn lint_sarif_output_is_valid_sarif_2_1_0() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let schema: serde_json::Value = serde_json::from_str(
        &fs::read_to_string(root.join("sarif/sarif-schema-2.1.0.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::draft7::new(&schema).expect("the SARIF schema compiles");
    let out = reasonctl()
        .arg("lint")
        .arg(root.join("lint/sparql-unsafe-negation/rules.rq"))
        .arg(root.join("lint/jsonld-filter-bare-word/rule.json"))
        .arg(root.join("lint/warning-never-matches/rules.rq"))
        .arg(root.join("lint/warning-never-matches/data.ttl"))
        .arg(root.join("lint/stored-rule-wrong-datatype/data.ttl"))
        .args(["--format", "sarif"])
        .assert()
        .code(1);
    let log: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&log)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 4, "{log:#}");
    // The schema is not vacuous: a result without a message is refused.
    let mut broken = log.clone();
    broken["runs"][0]["results"][0]
        .as_object_mut()
        .unwrap()
        .remove("message");
    assert!(!validator.is_valid(&broken));
}

#[test]
fn lint_json_findings_carry_code_rule_file_line_column_and_help() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/lint");
    let out = reasonctl()
        .arg("lint")
        .arg(root.join("sparql-optional/rules.rq"))
        .args(["--format", "json"])
        .assert()
        .code(1);
    let findings: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let f = &findings[0];
    assert_eq!(f["code"], "reasonctl::rules::rejected_construct");
    assert_eq!(f["severity"], "error");
    assert!(f["rule"].as_str().unwrap().ends_with("rules.rq"));
    assert!(
        f["file"]
            .as_str()
            .unwrap()
            .ends_with("sparql-optional/rules.rq")
    );
    assert_eq!(
        (f["line"].as_u64(), f["column"].as_u64()),
        (Some(4), Some(3))
    );
    assert!(f["help"].as_str().unwrap().contains("NOT EXISTS"));
}

#[test]
fn lint_checks_every_rule_of_a_folder_and_reports_each_finding() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..40 {
        let body = if i % 10 == 7 {
            // every tenth rule (from the eighth) is broken: an OPTIONAL
            format!("?x ex:p{i} ?y OPTIONAL {{ ?y ex:q ?z }}")
        } else {
            format!("?x ex:p{i} ?y . ?y ex:q ?z")
        };
        fs::write(
            dir.path().join(format!("r{i:03}.rq")),
            format!("PREFIX ex: <http://example.org/>\nCONSTRUCT {{ ?x ex:p{} ?y }} WHERE {{ {body} }}\n", i + 1),
        )
        .unwrap();
    }
    let out = reasonctl().arg("lint").arg(dir.path()).assert().code(1);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        stdout.contains("40 rule(s) checked: 4 error(s), 0 warning(s)"),
        "{stdout}"
    );
    for i in [7, 17, 27, 37] {
        assert!(
            stdout.contains(&format!("r{i:03}.rq:2:")),
            "r{i:03} not reported: {stdout}"
        );
    }
}

#[test]
fn explaining_a_derivation_chain_thousands_deep_does_not_overflow_the_stack() {
    let dir = tempfile::tempdir().unwrap();
    let mut data = String::from("@prefix ex: <http://example.org/> .\nex:n0 ex:marked true .\n");
    for i in 0..2500 {
        data.push_str(&format!("ex:n{i} ex:next ex:n{} .\n", i + 1));
    }
    let data_path = dir.path().join("chain.ttl");
    fs::write(&data_path, data).unwrap();
    let rules = dir.path().join("mark.rq");
    fs::write(
        &rules,
        "PREFIX ex: <http://example.org/>\nCONSTRUCT { ?y ex:marked true } WHERE { ?x ex:marked true . ?x ex:next ?y }\n",
    )
    .unwrap();
    let out = reasonctl()
        .arg("explain")
        .arg(&data_path)
        .arg("--rules")
        .arg(&rules)
        .args(["--fact", "ex:n2500 ex:marked true", "--depth", "10000"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    // The tree reaches the asserted start of the chain, 2,500 derivations down.
    assert!(
        text.contains("asserted  ex:n0 ex:marked true ."),
        "{}",
        &text[..text.len().min(500)]
    );
    assert_eq!(text.matches("rule ").count(), 2500);
}

#[test]
fn lenient_loads_an_iri_the_validating_parser_refuses_and_still_fails_on_syntax() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data.nt");
    fs::write(&data, "<http://e/a> <http://e/p> <http://[::1/o> .\n").unwrap();
    reasonctl()
        .args(["materialize", "--include-asserted"])
        .arg(&data)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("data.nt:1:27"));
    let out = reasonctl()
        .args(["materialize", "--include-asserted", "--lenient"])
        .arg(&data)
        .assert()
        .success();
    assert_eq!(
        String::from_utf8_lossy(&out.get_output().stdout),
        "<http://e/a> <http://e/p> <http://[::1/o> .\n"
    );
    // Leniency skips validation, not the grammar: a missing object is still an error with its place.
    fs::write(&data, "<http://e/a> <http://e/p> .\n").unwrap();
    reasonctl()
        .args(["materialize", "--include-asserted", "--lenient"])
        .arg(&data)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("data.nt:1:"));
}

#[test]
fn select_on_a_terminal_is_a_table_and_elsewhere_json_ending_with_a_line_break() {
    let data = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/query/table-with-prefixes/data.trig"
    );
    let query = "PREFIX ex: <http://example.org/> SELECT ?s WHERE { ?s a ?c } ORDER BY ?s LIMIT 2";
    let piped = reasonctl()
        .args(["query", "-q", data, "--query", query])
        .output()
        .unwrap();
    assert_eq!(piped.status.code(), Some(0));
    assert!(piped.stdout.starts_with(b"{\"head\""), "{:?}", piped.stdout);
    assert!(piped.stdout.ends_with(b"}\n"), "{:?}", piped.stdout);
    // On a terminal (util-linux `script` gives one), the default is the table.
    let bin = env!("CARGO_BIN_EXE_reasonctl");
    let on_tty = std::process::Command::new("script")
        .args([
            "-qec",
            &format!("{bin} query -q {data} --query '{query}'"),
            "/dev/null",
        ])
        .output();
    match on_tty {
        Ok(out) => {
            let text = String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n");
            assert_eq!(text, "?s\n--------\nex:alice\nex:bob\n(2 rows)\n");
        }
        Err(e) => {
            eprintln!("no `script` to give a terminal ({e}): the table default is not checked here")
        }
    }
}

/// The allocator runs without transparent huge pages (see `allocator_settings` in main.rs): the kernel's flag for
/// the process is read from /proc while a run waits for its standard input.
#[cfg(target_os = "linux")]
#[test]
fn a_run_uses_no_transparent_huge_pages() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_reasonctl"))
        .args(["materialize", "-q", "-", "--format", "ntriples"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let status_file = format!("/proc/{}/status", child.id());
    // The flag is set before `main` (right after exec, which inherits this test's flag); the process then waits
    // for its input, so it is read until it shows or two seconds have passed.
    let mut status = String::new();
    for _ in 0..200 {
        status = fs::read_to_string(&status_file).unwrap_or_default();
        if !status.contains("THP_enabled") || status.contains("THP_enabled:\t0") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"<http://example.org/a> <http://example.org/b> <http://example.org/c> .\n")
        .unwrap();
    drop(stdin);
    assert!(child.wait().unwrap().success());
    if !status.contains("THP_enabled") {
        // Kernels before 6.x do not report the flag; nothing to check there.
        return;
    }
    assert!(
        status.contains("THP_enabled:\t0"),
        "transparent huge pages are on: {}",
        status.lines().find(|l| l.starts_with("THP")).unwrap_or("")
    );
}

#[cfg(unix)]
#[test]
fn output_to_dev_stdout_or_dash_goes_to_the_descriptor_shared_with_the_shell() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_data(dir.path());
    let args = |o: &str| {
        [
            "materialize",
            data.as_str(),
            "--include-asserted",
            "--format",
            "nquads",
            "-o",
            o,
        ]
        .map(str::to_owned)
    };
    let expected = String::from_utf8(
        reasonctl()
            .args(&args("-")[..5])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone(),
    )
    .unwrap();
    assert!(expected.contains("<http://example.org/a>"), "{expected}");
    // Standard output a pipe: `/dev/stdout` names `pipe:[N]`, a descriptor, not a path; `-` is standard output
    // and no file named `-` is made.
    for o in ["/dev/stdout", "-"] {
        let out = reasonctl()
            .args(args(o))
            .current_dir(dir.path())
            .assert()
            .success();
        assert_eq!(
            String::from_utf8_lossy(&out.get_output().stdout),
            expected,
            "{o}"
        );
    }
    assert!(!dir.path().join("-").exists());
    // Standard output a file the shell opened to append: the output is appended to it through the shell's open
    // file, not renamed over it.
    let file = dir.path().join("log.nq");
    fs::write(&file, "kept\n").unwrap();
    let shell = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "\"$0\" {} >> '{}'",
            args("/dev/stdout").join(" "),
            file.display()
        ))
        .arg(assert_cmd::cargo::cargo_bin("reasonctl"))
        .status()
        .unwrap();
    assert!(shell.success());
    assert_eq!(
        fs::read_to_string(&file).unwrap(),
        format!("kept\n{expected}")
    );
}

#[test]
fn csv_answers_quote_fields_with_commas_or_quotes_and_xml_keeps_a_carriage_return() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("d.nt");
    fs::write(
        &data,
        "<http://e/a,b> <http://e/p> <<( <http://e/s> <http://e/p> \"x,y\" )>> .\n\
         <http://e/c> <http://e/p> \"a\\rb\" .\n\
         <http://e/d> <http://e/q> \"bell\\u0007\" .\n",
    )
    .unwrap();
    let answer = |query: &str, format: &str| {
        reasonctl()
            .arg("query")
            .arg(&data)
            .args(["--query", query, "--format", format])
            .output()
            .unwrap()
    };
    let q = "SELECT ?s ?o ?none WHERE { ?s <http://e/p> ?o OPTIONAL { ?s <http://e/none> ?none } } ORDER BY ?s";
    let csv = answer(q, "csv");
    assert!(
        csv.status.success(),
        "{}",
        String::from_utf8_lossy(&csv.stderr)
    );
    assert_eq!(
        String::from_utf8(csv.stdout).unwrap(),
        "s,o,none\r\n\
         \"http://e/a,b\",\"<<( <http://e/s> <http://e/p> \"\"x,y\"\" )>>\",\r\n\
         http://e/c,\"a\rb\",\r\n"
    );
    let xml = answer(q, "xml");
    assert!(xml.status.success());
    let text = String::from_utf8(xml.stdout).unwrap();
    assert!(
        text.contains("<literal>a&#xD;b</literal>") && !text.contains('\r'),
        "{text}"
    );
    // A character XML 1.0 cannot carry (a control character, U+FFFF): an error that names the formats that
    // can, and nothing written, not a document no parser reads.
    let bell = answer("SELECT ?o WHERE { ?s <http://e/q> ?o }", "xml");
    assert_eq!(bell.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bell.stderr).contains("use --format json, tsv or csv"));
    assert!(bell.stdout.is_empty());
    fs::write(&data, "<http://e/d> <http://e/q> \"not\\uFFFFa char\" .\n").unwrap();
    let noncharacter = answer("SELECT ?o WHERE { ?s <http://e/q> ?o }", "xml");
    assert_eq!(noncharacter.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&noncharacter.stderr).contains("U+FFFF"));
}

#[test]
fn a_query_output_file_extension_picks_the_answer_syntax_when_it_suits_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_data(dir.path());
    let select = "SELECT ?o WHERE { <http://example.org/a> <http://example.org/p> ?o }";
    let construct = "CONSTRUCT WHERE { <http://example.org/a> <http://example.org/p> ?o }";
    for (query, file, starts) in [
        (select, "a.csv", "o\r\nhttp://example.org/b\r\n"),
        (select, "a.tsv", "?o\n<http://example.org/b>\n"),
        (select, "a.srx", "<?xml"),
        // An extension that names no syntax leaves the default, JSON (one for RDF is refused: see
        // `a_query_output_file_whose_extension_names_a_syntax_for_the_other_kind_of_answer_is_refused`).
        (select, "a.out", "{\"head\""),
        (
            construct,
            "a.nq",
            "<http://example.org/a> <http://example.org/p> <http://example.org/b> .\n",
        ),
        (
            construct,
            "a.ttl",
            "@prefix ex: <http://example.org/> .\nex:a ex:p ex:b .\n",
        ),
    ] {
        reasonctl()
            .args(["query", &data, "--query", query, "-o"])
            .arg(dir.path().join(file))
            .assert()
            .success();
        let text = fs::read_to_string(dir.path().join(file)).unwrap();
        assert!(text.starts_with(starts), "{file}: {text}");
    }
}

#[test]
fn out_dir_removes_the_graph_files_an_earlier_run_listed_and_this_one_does_not_write() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_data(dir.path());
    let out = dir.path().join("out");
    let run = |data: &str| {
        reasonctl()
            .args(["materialize", data, "--include-asserted", "--out-dir"])
            .arg(&out)
            .assert()
            .success();
    };
    run(&data);
    let g = out.join("http%3A%2F%2Fexample.org%2Fg.ttl");
    assert!(g.exists());
    fs::write(out.join("notes.txt"), "mine").unwrap();
    let smaller = dir.path().join("small.ttl");
    fs::write(
        &smaller,
        "<http://example.org/a> <http://example.org/p> <http://example.org/b> .\n",
    )
    .unwrap();
    run(smaller.to_str().unwrap());
    let mut names: Vec<String> = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["default.ttl", "graphs.tsv", "notes.txt"]);
    assert_eq!(fs::read_to_string(out.join("notes.txt")).unwrap(), "mine");
}

#[cfg(unix)]
#[test]
fn output_to_a_descriptor_path_reaches_only_descriptors_the_shell_passed() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_data(dir.path());
    // Descriptor 3 is not passed: it is reasonctl's own (its signal pipe) or none; writing there is refused.
    let out = reasonctl()
        .args([
            "materialize",
            &data,
            "--include-asserted",
            "--format",
            "nquads",
            "-o",
            "/dev/fd/3",
        ])
        .assert()
        .code(2);
    assert!(
        String::from_utf8_lossy(&out.get_output().stderr).contains("Bad file descriptor"),
        "{}",
        String::from_utf8_lossy(&out.get_output().stderr)
    );
    // Passed by the shell (`3> file`): written there.
    let file = dir.path().join("three.nq");
    let shell = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "\"$0\" materialize '{data}' --include-asserted --format nquads -o /dev/fd/3 3> '{}'",
            file.display()
        ))
        .arg(assert_cmd::cargo::cargo_bin("reasonctl"))
        .status()
        .unwrap();
    assert!(shell.success());
    assert!(
        fs::read_to_string(&file)
            .unwrap()
            .contains("<http://example.org/a>")
    );
}
