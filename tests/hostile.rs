//! Hostile input (issue 16): inputs generated at test time — long lines, odd characters, deep nesting, huge flag
//! values — must give a diagnostic and a documented exit code: never a panic (101), a stack overflow (134) or a
//! hang. Each test names the root cause it reproduces.
// See: issue 16.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use assert_cmd::Command;

fn reasonctl() -> Command {
    let mut cmd = Command::cargo_bin("reasonctl").expect("binary");
    cmd.timeout(Duration::from_secs(60));
    cmd
}

const PREFIX: &str = "PREFIX ex: <http://example.org/>\n";

/// A folder with `data.ttl` (one `ex:a ex:p ex:b` fact).
fn folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("data.ttl"),
        "@prefix ex: <http://example.org/> .\nex:a ex:p ex:b .\n",
    )
    .unwrap();
    dir
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, text).unwrap();
    path
}

/// The run's exit code, after checking it neither panicked nor died by a signal.
fn code(out: &Output) -> i32 {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("panicked") && !stderr.contains("overflowed its stack"),
        "{stderr}"
    );
    out.status
        .code()
        .unwrap_or_else(|| panic!("killed by a signal: {:?}\n{stderr}", out.status))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `lint` (every format), `deps` and `materialize` over one rules file: each exits `want` without panicking,
/// and stderr or stdout holds `says`.
fn every_command(dir: &Path, rules: &Path, want: i32, says: &str) {
    let rules = rules.to_str().unwrap();
    for format in ["human", "json", "sarif"] {
        let out = reasonctl()
            .args(["lint", "--format", format, rules])
            .current_dir(dir)
            .output()
            .unwrap();
        assert_eq!(code(&out), want, "lint --format {format}\n{}", stderr(&out));
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
        assert!(text.contains(says), "lint --format {format}: {text}");
    }
    for args in [
        vec!["deps", "--rules", rules],
        vec!["materialize", "data.ttl", "--rules", rules],
    ] {
        let out = reasonctl().args(&args).current_dir(dir).output().unwrap();
        assert_eq!(code(&out), want, "{args:?}\n{}", stderr(&out));
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
    }
}

// Root cause 1: a label past column 65,535 panicked inside miette; so did a rule id of 65,536 characters in
// `deps` text output.
#[test]
fn a_syntax_error_past_column_65535_is_reported_at_its_true_column() {
    let dir = folder();
    let rules = write(
        dir.path(),
        "long.rq",
        &format!(
            "{PREFIX}CONSTRUCT {{ ?a ex:p \"{}\" }} WHERE {{ ?a ex:knows ?b ) }}\n",
            "x".repeat(70_000)
        ),
    );
    every_command(dir.path(), &rules, 1, "reasonctl::rules::syntax");
    let out = reasonctl()
        .args(["lint", "long.rq"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("[long.rq:2:70051]"), "{text}");
    assert!(
        text.lines().all(|l| l.chars().count() < 400),
        "a long line is shown as a window"
    );
}

#[test]
fn a_long_jsonld_rule_with_an_error_far_right_is_reported() {
    let dir = folder();
    let rules = write(
        dir.path(),
        "long.json",
        &format!(
            "{{\"@context\": {{\"ex\": \"http://example.org/\"}}, \"where\": {{\"@id\": \"?a\", \"ex:p\": \"{}\"}}, \"insert\": {{\"@id\": \"?a\", \"nope:q\": \"?b\"}}}}",
            "x".repeat(70_000)
        ),
    );
    every_command(dir.path(), &rules, 1, "reasonctl::rules::");
}

#[test]
fn deps_prints_a_rule_id_of_70000_characters() {
    let dir = folder();
    let long = format!("r{}", "x".repeat(70_000));
    let rules = write(
        dir.path(),
        "r.rq",
        &format!(
            "{PREFIX}#@rule {long}\nCONSTRUCT {{ ?a ex:q ?b }} WHERE {{ ?a ex:p ?b }}\n#@rule r2\nCONSTRUCT {{ ?a ex:p ?b }} WHERE {{ ?a ex:q ?b }}\n"
        ),
    );
    let out = reasonctl()
        .args(["deps", "--rules", rules.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains(&long));
}

// Root cause 2: byte offsets inside multi-byte characters.
#[test]
fn offsets_inside_multibyte_characters_do_not_panic() {
    let dir = folder();
    let cases = [
        ("e.rq", "é".to_owned()),
        (
            "fffd.rq",
            format!("{PREFIX}CONSTRUCT {{ ?a ex:p ex:x\u{FFFD} }} WHERE {{ ?a ex:knows ?b }}\n"),
        ),
        ("esc.json", "{\"where\": \"\\é\"}".to_owned()),
        (
            "esc2.json",
            "{\"where\": \"€\\€\", \"insert\": 1}".to_owned(),
        ),
    ];
    for (name, text) in cases {
        let rules = write(dir.path(), name, &text);
        every_command(dir.path(), &rules, 1, "reasonctl::rules::");
    }
}

#[test]
fn a_prefixed_name_with_a_character_past_u_ffff_is_valid_sparql() {
    let dir = folder();
    write(
        dir.path(),
        "r.rq",
        &format!("{PREFIX}CONSTRUCT {{ ?a𐀀 ex:q ex:x𐀀 }} WHERE {{ ?a𐀀 ex:p ex:b }}\n"),
    );
    let out = reasonctl()
        .args([
            "materialize",
            "data.ttl",
            "--rules",
            "r.rq",
            "--format",
            "ntriples",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "<http://example.org/a> <http://example.org/q> <http://example.org/x𐀀> .\n"
    );
    let out = reasonctl()
        .args([
            "query",
            "data.ttl",
            "--query",
            "PREFIX ex: <http://example.org/> ASK { ex:a ex:p ex:b𐀀 }",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

// Root cause 3: deep nesting overflowed the stack, on worker threads first (two rules).
fn two_rules(first_body: &str) -> String {
    format!(
        "{PREFIX}#@rule r1\nCONSTRUCT {{ ?a ex:q ?b }} WHERE {{ {first_body} }}\n#@rule r2\nCONSTRUCT {{ ?a ex:r ?b }} WHERE {{ ?a ex:p ?b }}\n"
    )
}

#[test]
fn rules_nested_past_the_limits_are_refused_by_every_command() {
    let dir = folder();
    let cases = [
        (
            "not-exists.rq",
            two_rules(&format!(
                "?a ex:p ?b {}{}",
                "FILTER NOT EXISTS { ?a ex:p ?b ".repeat(1000),
                "}".repeat(1000)
            )),
        ),
        (
            "subqueries.rq",
            two_rules(&format!(
                "{}{{ ?a ex:p ?b }}{}",
                "{ SELECT * WHERE ".repeat(5000),
                " }".repeat(5000)
            )),
        ),
        (
            "concat.rq",
            two_rules(&format!(
                "?a ex:p ?b BIND({}\"x\"{} AS ?c)",
                "CONCAT(".repeat(5000),
                ")".repeat(5000)
            )),
        ),
        (
            "plus.rq",
            two_rules(&format!(
                "?a ex:p ?b BIND({} AS ?c)",
                vec!["1"; 20_000].join(" + ")
            )),
        ),
        (
            "and.rq",
            two_rules(&format!(
                "?a ex:p ?b FILTER({})",
                vec!["true"; 20_000].join(" && ")
            )),
        ),
        (
            "head.rq",
            format!(
                "{PREFIX}CONSTRUCT {{ ?a ex:q {}?b{} }} WHERE {{ ?a ex:p ?b }}\n",
                "<<( ?a ex:p ".repeat(20_000),
                " )>>".repeat(20_000)
            ),
        ),
        (
            "parens.rq",
            format!(
                "{PREFIX}CONSTRUCT {{ ?a ex:q {}?b{} }} WHERE {{ ?a ex:p ?b }}\n",
                "(".repeat(20_000),
                ")".repeat(20_000)
            ),
        ),
        (
            "sexpr.json",
            format!(
                "[{{\"@context\": {{\"ex\": \"http://example.org/\"}}, \"@id\": \"ex:r1\", \"where\": [{{\"@id\": \"?a\", \"ex:p\": \"?b\"}}, [\"filter\", \"{}true{}\"]], \"insert\": {{\"@id\": \"?a\", \"ex:q\": \"?b\"}}}}, {{\"@context\": {{\"ex\": \"http://example.org/\"}}, \"@id\": \"ex:r2\", \"where\": {{\"@id\": \"?a\", \"ex:p\": \"?b\"}}, \"insert\": {{\"@id\": \"?a\", \"ex:r\": \"?b\"}}}}]",
                "(not ".repeat(20_000),
                ")".repeat(20_000)
            ),
        ),
        (
            "json.json",
            format!(
                "{{\"where\": {}1{}, \"insert\": {{}}}}",
                "[".repeat(1000),
                "]".repeat(1000)
            ),
        ),
    ];
    for (name, text) in cases {
        let started = Instant::now();
        let rules = write(dir.path(), name, &text);
        every_command(dir.path(), &rules, 1, "reasonctl::rules::too_deep");
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{name} took {:?}",
            started.elapsed()
        );
    }
}

#[test]
fn rules_just_inside_the_limits_run() {
    let dir = folder();
    write(
        dir.path(),
        "r.rq",
        &two_rules(&format!(
            "?a ex:p ?b FILTER({}) FILTER NOT EXISTS {{ {}?a ex:nothing ?b{} }}",
            vec!["true"; 1000].join(" && "),
            "{ ".repeat(100),
            " }".repeat(100)
        )),
    );
    let out = reasonctl()
        .args([
            "materialize",
            "data.ttl",
            "--rules",
            "r.rq",
            "--format",
            "ntriples",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 2);
}

#[test]
fn a_query_nested_past_the_limits_is_refused() {
    let dir = folder();
    for query in [
        format!(
            "SELECT * WHERE {{ {}?a ?p ?b{} }}",
            "{ ".repeat(500),
            " }".repeat(500)
        ),
        format!(
            "SELECT * WHERE {{ ?a ?p ?b FILTER({}) }}",
            vec!["true"; 5000].join(" || ")
        ),
    ] {
        let out = reasonctl()
            .args(["query", "data.ttl", "--query", &query])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_eq!(code(&out), 2, "{}", stderr(&out));
        assert!(
            stderr(&out).contains("reasonctl::query::too_deep"),
            "{}",
            stderr(&out)
        );
    }
}

#[test]
fn data_nested_past_the_limits_is_refused_with_its_position() {
    let dir = folder();
    let deep = 5000;
    let cases = [
        (
            "deep.jsonld",
            format!(
                "{{\"@context\": {{\"ex\": \"http://example.org/\"}}, \"@id\": \"ex:a\", \"ex:p\": {}\"x\"{}}}",
                "{\"ex:p\": ".repeat(1000),
                "}".repeat(1000)
            ),
            "JSON arrays and objects nest deeper than 128 levels",
        ),
        (
            "list.jsonld",
            format!(
                "{{\"@context\": {{\"ex\": \"http://example.org/\"}}, \"@id\": \"ex:a\", \"ex:p\": {}\"x\"{}}}",
                "{\"@list\": [".repeat(1000),
                "]}".repeat(1000)
            ),
            "JSON arrays and objects nest deeper than 128 levels",
        ),
        (
            "terms.ttl",
            format!(
                "@prefix ex: <http://example.org/> .\nex:a ex:p {}ex:b{} .\n",
                "<<( ex:a ex:p ".repeat(deep),
                " )>>".repeat(deep)
            ),
            "terms.ttl:2:",
        ),
        (
            "terms.nt",
            format!(
                "<http://e/a> <http://e/p> {}<http://e/b>{} .\n",
                "<<( <http://e/a> <http://e/p> ".repeat(deep),
                " )>>".repeat(deep)
            ),
            "triple terms nest deeper than 1024 levels",
        ),
        (
            "deep.rdf",
            format!(
                "<?xml version=\"1.0\"?>\n<rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\" xmlns:ex=\"http://example.org/\">{}<rdf:Description rdf:about=\"http://e/x\"/>{}</rdf:RDF>\n",
                "<rdf:Description><ex:p>".repeat(50_000),
                "</ex:p></rdf:Description>".repeat(50_000)
            ),
            "XML elements nest deeper than 1024 levels",
        ),
    ];
    write(
        dir.path(),
        "r.rq",
        &format!("{PREFIX}CONSTRUCT {{ ?a ex:q ?b }} WHERE {{ ?a ex:p ?b }}\n"),
    );
    for (name, text, says) in cases {
        write(dir.path(), name, &text);
        let started = Instant::now();
        let out = reasonctl()
            .args(["materialize", name, "--rules", "r.rq"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_eq!(code(&out), 2, "{name}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("reasonctl::load::too_deep"),
            "{name}: {}",
            stderr(&out)
        );
        assert!(stderr(&out).contains(says), "{name}: {}", stderr(&out));
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{name}: {:?}",
            started.elapsed()
        );
    }
}

// Root cause 4: superlinear work on small inputs, which --timeout did not stop.
#[test]
#[ignore = "needs --timeout to bound the whole command (the next change)"]
fn a_sequence_path_of_3000_steps_ends_within_its_timeout() {
    let dir = folder();
    write(
        dir.path(),
        "r.rq",
        &format!(
            "{PREFIX}CONSTRUCT {{ ?a ex:q ?b }} WHERE {{ ?a {} ?b }}\n",
            vec!["ex:p"; 3000].join("/")
        ),
    );
    let started = Instant::now();
    let out = reasonctl()
        .args([
            "materialize",
            "data.ttl",
            "--rules",
            "r.rq",
            "--timeout",
            "3",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(matches!(code(&out), 0 | 3), "{}", stderr(&out));
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "{:?}",
        started.elapsed()
    );
}
