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

/// `r.rq`: one rule copying `ex:p` facts to `ex:q`.
fn copy_rule(dir: &Path) {
    write(
        dir,
        "r.rq",
        &format!("{PREFIX}CONSTRUCT {{ ?a ex:q ?b }} WHERE {{ ?a ex:p ?b }}\n"),
    );
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

/// Checks that the run exited `exit` with the diagnostic `code` on stderr.
fn fails_with(out: &Output, exit: i32, diagnostic: &str) {
    assert_eq!(code(out), exit, "{}", stderr(out));
    assert!(stderr(out).contains(diagnostic), "{}", stderr(out));
}

/// Writes `bomb.rdf`: an RDF/XML literal of entities nested `levels` deep, ten references each (58 bytes × 10^levels).
fn entity_bomb(dir: &Path, levels: u32) {
    let mut entities = vec![format!("<!ENTITY a0 \"{}\">", "d".repeat(58))];
    for i in 1..=levels {
        entities.push(format!(
            "<!ENTITY a{i} \"{}\">",
            format!("&a{};", i - 1).repeat(10)
        ));
    }
    write(
        dir,
        "bomb.rdf",
        &format!(
            "<?xml version=\"1.0\"?>\n<!DOCTYPE rdf:RDF [\n{}\n]>\n<rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\" xmlns:ex=\"http://example.org/\"><rdf:Description rdf:about=\"http://example.org/a\"><ex:p>&a{levels};</ex:p></rdf:Description></rdf:RDF>\n",
            entities.join("\n")
        ),
    );
}

/// Runs reasonctl with `args` (shell words) in `dir` on a terminal, which util-linux `script` gives; `Err` where
/// there is no `script`.
fn on_terminal(dir: &Path, args: &str) -> std::io::Result<Output> {
    let bin = env!("CARGO_BIN_EXE_reasonctl");
    std::process::Command::new("script")
        .args(["-qec", &format!("{bin} {args}"), "/dev/null"])
        .current_dir(dir)
        .output()
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

/// 2,000 `!` before an operand nest 2,000 operators: too deep, and the message counts `!` among the levels.
#[test]
fn a_long_run_of_negations_is_too_deep_and_said_so() {
    let dir = folder();
    write(
        dir.path(),
        "not.rq",
        &format!(
            "{PREFIX}CONSTRUCT {{ ?a ex:q ?b }} WHERE {{ ?a ex:p ?b FILTER ({}?b) }}\n",
            "!".repeat(2_000)
        ),
    );
    let out = reasonctl()
        .args(["lint", "not.rq"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(code(&out), 1);
    assert!(text.contains("reasonctl::rules::too_deep"), "{text}");
    assert!(text.contains("each `!`"), "{text}");
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
    // At the `)` that closes nothing.
    assert!(text.contains("[long.rq:2:70049]"), "{text}");
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
        // (A chain of && or || is regrouped, not refused: see `long_chains_of_filters_and_of_and_or_run…`.)
        (
            "times.rq",
            two_rules(&format!(
                "?a ex:p ?b FILTER({} > 0)",
                vec!["1"; 20_000].join(" * ")
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
            "SELECT * WHERE {{ ?a ?p ?b FILTER({} > 0) }}",
            vec!["1"; 5000].join(" + ")
        ),
    ] {
        let out = reasonctl()
            .args(["query", "data.ttl", "--query", &query])
            .current_dir(dir.path())
            .output()
            .unwrap();
        fails_with(&out, 2, "reasonctl::query::too_deep");
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
    copy_rule(dir.path());
    for (name, text, says) in cases {
        write(dir.path(), name, &text);
        refused_within_seconds(dir.path(), name, "reasonctl::load::too_deep", says);
    }
}

/// `materialize NAME --rules r.rq` in `dir` exits 2 within 10 s, with the diagnostic `code` and saying `says`.
fn refused_within_seconds(dir: &Path, name: &str, code_name: &str, says: &str) {
    let started = Instant::now();
    let out = reasonctl()
        .args(["materialize", name, "--rules", "r.rq"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert_eq!(code(&out), 2, "{name}: {}", stderr(&out));
    assert!(stderr(&out).contains(code_name), "{name}: {}", stderr(&out));
    assert!(stderr(&out).contains(says), "{name}: {}", stderr(&out));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{name}: {:?}",
        started.elapsed()
    );
}

#[test]
fn rdf_xml_entities_that_expand_a_kilobyte_into_gigabytes_are_refused_before_they_expand() {
    let dir = folder();
    copy_rule(dir.path());
    // Nine levels of ten references: 58 GB from a kilobyte, as declared (oxrdfxml expands each value then).
    entity_bomb(dir.path(), 9);
    // One 100 KB entity referenced 2,000 times: 200 MB of text from a 106 KB file.
    let repeated = format!(
        "<?xml version=\"1.0\"?>\n<!DOCTYPE rdf:RDF [<!ENTITY big \"{}\">]>\n<rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\" xmlns:ex=\"http://example.org/\">\n<rdf:Description rdf:about=\"http://e/x\"><ex:p>{}</ex:p></rdf:Description></rdf:RDF>\n",
        "x".repeat(100_000),
        "&big;".repeat(2000)
    );
    for (name, text, says) in [
        ("bomb.rdf", None, "bomb.rdf:2:1: XML entities expand past"),
        ("repeated.rdf", Some(repeated), "repeated.rdf:4:"),
    ] {
        if let Some(text) = text {
            write(dir.path(), name, &text);
        }
        refused_within_seconds(dir.path(), name, "reasonctl::load::entity_expansion", says);
    }
}

// Root cause 4: superlinear work on small inputs, which --timeout did not stop.
#[test]
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

#[test]
fn a_sequence_path_of_10000_steps_plans_in_linear_time_and_a_longer_one_is_refused_before_parsing()
{
    let dir = folder();
    let rule = |steps: usize| {
        format!(
            "{PREFIX}CONSTRUCT {{ ?a ex:q ?b }} WHERE {{ ?a {} ?b }}\n",
            vec!["ex:p"; steps].join("/")
        )
    };
    // Planning was quadratic in time and memory: 20,000 steps took 3.8 s and 846 MB (release build).
    write(dir.path(), "r.rq", &rule(10_000));
    let started = Instant::now();
    let out = reasonctl()
        .args(["materialize", "data.ttl", "--rules", "r.rq", "-o", "out.nq"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    // The parser recurses once per step: 200,000 overflowed its 256 MiB stack.
    write(dir.path(), "r.rq", &rule(200_000));
    let out = reasonctl()
        .args([
            "materialize",
            "data.ttl",
            "--rules",
            "r.rq",
            "-o",
            "out2.nq",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    fails_with(&out, 1, "reasonctl::rules::too_large");
    assert!(
        stderr(&out).contains("more than 10000 steps in one sequence path"),
        "{}",
        stderr(&out)
    );
    write(
        dir.path(),
        "q.rq",
        &rule(200_000).replace("CONSTRUCT { ?a ex:q ?b }", "SELECT *"),
    );
    let out = reasonctl()
        .args(["query", "data.ttl", "--query", "q.rq"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    fails_with(&out, 2, "reasonctl::query::too_large");
    assert!(
        stderr(&out).contains("more than 10000 steps in one sequence path"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_rule_or_query_of_more_than_10000_distinct_variables_is_refused_before_parsing() {
    let dir = folder();
    let chain = |n: usize| {
        (0..n)
            .map(|i| format!("?x{i} ex:p ?x{} .", i + 1))
            .collect::<Vec<_>>()
            .join(" ")
    };
    // 9,999 links name 10,000 variables: within the limit.
    write(
        dir.path(),
        "r.rq",
        &format!(
            "{PREFIX}CONSTRUCT {{ ?x0 ex:q ?x9999 }} WHERE {{ {} }}\n",
            chain(9_999)
        ),
    );
    let out = reasonctl()
        .args(["lint", "r.rq"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // The parser searched a list per variable: 60,000 took 9.5 s (release build).
    write(
        dir.path(),
        "r.rq",
        &format!(
            "{PREFIX}CONSTRUCT {{ ?x0 ex:q ?x1 }} WHERE {{ {} }}\n",
            chain(60_000)
        ),
    );
    let started = Instant::now();
    let out = reasonctl()
        .args(["lint", "r.rq"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(said.contains("reasonctl::rules::too_large"), "{said}");
    assert!(
        said.contains("more than 10000 distinct variables"),
        "{said}"
    );
    assert!(said.contains("?x10000"), "{said}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    write(
        dir.path(),
        "q.rq",
        &format!("{PREFIX}SELECT ?x0 WHERE {{ {} }}\n", chain(60_000)),
    );
    let out = reasonctl()
        .args(["query", "data.ttl", "--query", "q.rq"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    fails_with(&out, 2, "reasonctl::query::too_large");
}

// Root cause 5: a timeout past what a Duration holds.
#[test]
fn huge_timeouts_mean_no_limit_in_every_command() {
    let dir = folder();
    copy_rule(dir.path());
    for timeout in ["1e20", "1e300", "18446744073709551616"] {
        for args in [
            vec!["materialize", "data.ttl", "--rules", "r.rq"],
            vec![
                "query",
                "data.ttl",
                "--rules",
                "r.rq",
                "--query",
                "ASK { ?a ?p ?b }",
            ],
            vec![
                "explain",
                "data.ttl",
                "--rules",
                "r.rq",
                "--fact",
                "<http://example.org/a> <http://example.org/q> <http://example.org/b>",
            ],
        ] {
            let out = reasonctl()
                .args(&args)
                .args(["--timeout", timeout])
                .current_dir(dir.path())
                .output()
                .unwrap();
            assert_eq!(
                code(&out),
                0,
                "{args:?} --timeout {timeout}: {}",
                stderr(&out)
            );
        }
    }
}

// Root cause 6: -o and --stats renamed a temporary file over devices, FIFOs and symlinks.
#[cfg(unix)]
#[test]
fn output_to_dev_null_writes_through_and_leaves_the_device() {
    use std::os::unix::fs::FileTypeExt;
    let dir = folder();
    copy_rule(dir.path());
    let out = reasonctl()
        .args([
            "materialize",
            "data.ttl",
            "--rules",
            "r.rq",
            "-o",
            "/dev/null",
            "--format",
            "nquads",
            "--stats",
            "/dev/null",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let null = fs::metadata("/dev/null").unwrap();
    assert!(null.file_type().is_char_device(), "/dev/null was replaced");
}

#[cfg(unix)]
#[test]
fn output_into_a_fifo_is_written_through_and_the_fifo_stays() {
    use std::io::Read;
    use std::os::unix::fs::FileTypeExt;
    let dir = folder();
    copy_rule(dir.path());
    let fifo = dir.path().join("out.nq");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut text = String::new();
            fs::File::open(fifo)
                .unwrap()
                .read_to_string(&mut text)
                .unwrap();
            text
        })
    };
    let out = reasonctl()
        .args(["materialize", "data.ttl", "--rules", "r.rq", "-o", "out.nq"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        reader.join().unwrap(),
        "<http://example.org/a> <http://example.org/q> <http://example.org/b> .\n"
    );
    assert!(fs::metadata(&fifo).unwrap().file_type().is_fifo());
}

#[cfg(unix)]
#[test]
fn output_through_a_symlink_replaces_its_target_and_keeps_the_link() {
    let dir = folder();
    copy_rule(dir.path());
    fs::create_dir(dir.path().join("real")).unwrap();
    write(dir.path(), "real/out.nt", "old\n");
    std::os::unix::fs::symlink("real/out.nt", dir.path().join("link.nt")).unwrap();
    let out = reasonctl()
        .args([
            "materialize",
            "data.ttl",
            "--rules",
            "r.rq",
            "-o",
            "link.nt",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let link = fs::symlink_metadata(dir.path().join("link.nt")).unwrap();
    assert!(link.file_type().is_symlink(), "the link was replaced");
    assert_eq!(
        fs::read_to_string(dir.path().join("real/out.nt")).unwrap(),
        "<http://example.org/a> <http://example.org/q> <http://example.org/b> .\n"
    );
    let leftovers: Vec<_> = fs::read_dir(dir.path().join("real"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "{leftovers:?}");
}

// Root cause 7: --max-memory bounds the real heap in every phase, loading included. (An entity bomb is refused
// before it expands: `rdf_xml_entities_that_expand_a_kilobyte_into_gigabytes_are_refused_before_they_expand`.)
#[test]
fn a_long_prefix_repeated_stops_at_max_memory_while_loading() {
    let dir = folder();
    let iri = format!("http://example.org/{}", "x".repeat(1 << 20));
    let mut text = format!("@prefix p: <{iri}> .\n");
    for i in 0..1000 {
        text.push_str(&format!("p:s{i} <http://example.org/p> \"x\" .\n"));
    }
    write(dir.path(), "prefix.ttl", &text);
    copy_rule(dir.path());
    let out = reasonctl()
        .args([
            "materialize",
            "prefix.ttl",
            "--rules",
            "r.rq",
            "--max-memory",
            "100",
            "--timeout",
            "20",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    fails_with(&out, 3, "reasonctl::run::memory");
}

#[test]
fn a_capped_run_warns_of_no_rule_whose_facts_were_all_known() {
    let dir = folder();
    // `again` restates asserted facts, `more` derives new ones until the fact cap.
    let mut data = String::from("@prefix ex: <http://example.org/> .\n");
    for i in 0..200 {
        data.push_str(&format!("ex:n{i} ex:p ex:n{} .\n", i + 1));
    }
    write(dir.path(), "data.ttl", &data);
    write(
        dir.path(),
        "r.rq",
        &format!(
            "{PREFIX}#@rule again\nCONSTRUCT {{ ?a ex:p ?b }} WHERE {{ ?a ex:p ?b }}\n#@rule more\nCONSTRUCT {{ ?a ex:reach ?c }} WHERE {{ ?a ex:p ?b . ?b ex:p ?c }}\n"
        ),
    );
    let out = reasonctl()
        .args([
            "materialize",
            "data.ttl",
            "--rules",
            "r.rq",
            "--max-facts",
            "10",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert!(!stderr(&out).contains("no_facts"), "{}", stderr(&out));
    // A rule whose rows truly make no fact is still reported (the literal subject is not known before the run:
    // one that is, `BIND("lit" AS ?c)`, is refused as reasonctl::rules::literal_subject).
    write(
        dir.path(),
        "bad.rq",
        &format!(
            "{PREFIX}CONSTRUCT {{ ?c ex:q ?a }} WHERE {{ ?a ex:p ?b BIND(IF(true, \"lit\", ?a) AS ?c) }}\n"
        ),
    );
    let out = reasonctl()
        .args(["materialize", "data.ttl", "--rules", "bad.rq"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    fails_with(&out, 0, "reasonctl::datalog::no_facts");
}

// Root cause 10: --threads 10000 ran for seconds on two triples.
#[test]
fn thousands_of_threads_are_refused_at_once() {
    let dir = folder();
    let started = Instant::now();
    let out = reasonctl()
        .args(["--threads", "10000", "lint", "data.ttl"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    fails_with(&out, 2, "reasonctl::settings::threads");
    assert!(started.elapsed() < Duration::from_secs(5));
}

// Root cause 8: a signal during output left `.reasonctl-*.tmp` files, and the process died by the signal.
#[cfg(unix)]
mod signals {
    use super::*;
    use std::process::{Command as Process, Stdio};

    /// 1,000 nodes: 1,000,000 pairs in the default graph and 1,000 in `ex:g`, a run of a second or more.
    fn long_run() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let mut data = String::from(
            "<http://example.org/x> <http://example.org/p> <http://example.org/y> <http://example.org/g> .\n",
        );
        for i in 0..1000 {
            data.push_str(&format!(
                "<http://example.org/n{i}> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://example.org/Node> .\n"
            ));
        }
        write(dir.path(), "data.nq", &data);
        write(
            dir.path(),
            "r.rq",
            &format!(
                "{PREFIX}#@rule pairs\nCONSTRUCT {{ ?x ex:pair ?y }} WHERE {{ ?x a ex:Node . ?y a ex:Node }}\n#@rule named\nCONSTRUCT {{ GRAPH ex:g {{ ?x ex:self ?x }} }} WHERE {{ ?x a ex:Node }}\n"
            ),
        );
        dir
    }

    fn run(
        dir: &Path,
        target: &[&str],
        signal: Option<(&str, Duration)>,
    ) -> (Option<i32>, Duration, String) {
        let started = Instant::now();
        let child = Process::new(env!("CARGO_BIN_EXE_reasonctl"))
            .args([
                "materialize",
                "data.nq",
                "--rules",
                "r.rq",
                "--format",
                "nquads",
            ])
            .args(target)
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        if let Some((name, after)) = signal {
            std::thread::sleep(after);
            let _ = Process::new("kill")
                .args([&format!("-{name}"), &child.id().to_string()])
                .status();
        }
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!stderr.contains("panicked"), "{stderr}");
        (out.status.code(), started.elapsed(), stderr)
    }

    fn temporaries(dir: &Path) -> Vec<String> {
        fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".reasonctl-"))
            .collect()
    }

    #[test]
    fn a_fifo_without_a_reader_waits_like_a_shell_redirection_and_sigint_names_the_output() {
        use std::os::unix::fs::FileTypeExt;
        let dir = folder();
        copy_rule(dir.path());
        let fifo = dir.path().join("out.txt");
        assert!(
            Process::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let child = Process::new(env!("CARGO_BIN_EXE_reasonctl"))
            .args(["lint", "r.rq", "-o", "out.txt"])
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Long enough for a loaded machine to reach the output (a rule file of one rule).
        std::thread::sleep(Duration::from_secs(2));
        let _ = Process::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).replace('\n', " ");
        assert_eq!(out.status.code(), Some(130), "{stderr}");
        assert!(stderr.contains("while writing the output"), "{stderr}");
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    }

    #[test]
    fn sigint_and_sigterm_at_any_point_leave_no_temporary_and_the_previous_file_intact() {
        let dir = long_run();
        // An uninterrupted run: the complete output, and how long a run takes.
        let (code, took, _) = run(dir.path(), &["-o", "reference.nq"], None);
        assert_eq!(code, Some(0));
        let complete = fs::read(dir.path().join("reference.nq")).unwrap();
        for (name, want) in [("INT", 130), ("TERM", 143)] {
            for tenth in [1, 3, 5, 7, 9] {
                write(dir.path(), "out.nq", "previous\n");
                let (code, _, stderr) = run(
                    dir.path(),
                    &["-o", "out.nq"],
                    Some((name, took * tenth / 10)),
                );
                let now = fs::read(dir.path().join("out.nq")).unwrap();
                match code {
                    // Stopped: the previous file, or (a signal after the rename, while the command ends) the
                    // complete one; never a part.
                    Some(c) if c == want => {
                        assert!(
                            now == b"previous\n" || now == complete,
                            "SIG{name} at {tenth}/10: the file is neither the previous nor the complete one"
                        );
                        assert!(stderr.contains("reasonctl::run::interrupted"), "{stderr}");
                    }
                    // Finished before the signal came.
                    Some(0) => assert_eq!(now, complete, "SIG{name} at {tenth}/10"),
                    other => panic!("SIG{name} at {tenth}/10: exit {other:?}"),
                }
                assert_eq!(
                    temporaries(dir.path()),
                    Vec::<String>::new(),
                    "SIG{name} at {tenth}/10"
                );
            }
        }
    }

    #[test]
    fn a_signal_during_out_dir_leaves_every_graph_file_whole() {
        let dir = long_run();
        let (code, took, _) = run(dir.path(), &["--out-dir", "reference"], None);
        assert_eq!(code, Some(0));
        let reference = dir.path().join("reference");
        for (name, want) in [("INT", 130), ("TERM", 143)] {
            for tenth in [2, 5, 8] {
                let out = dir.path().join("out");
                let _ = fs::remove_dir_all(&out);
                fs::create_dir(&out).unwrap();
                for f in fs::read_dir(&reference).unwrap().flatten() {
                    fs::write(out.join(f.file_name()), "previous\n").unwrap();
                }
                let (code, _, _) = run(
                    dir.path(),
                    &["--out-dir", "out"],
                    Some((name, took * tenth / 10)),
                );
                assert!(
                    code == Some(want) || code == Some(0),
                    "SIG{name}: exit {code:?}"
                );
                assert_eq!(
                    temporaries(&out),
                    Vec::<String>::new(),
                    "SIG{name} at {tenth}/10"
                );
                for f in fs::read_dir(&reference).unwrap().flatten() {
                    let now = fs::read(out.join(f.file_name())).unwrap();
                    let whole = fs::read(f.path()).unwrap();
                    assert!(
                        now == b"previous\n" || now == whole,
                        "SIG{name} at {tenth}/10: {:?} is neither the previous file nor the whole new one",
                        f.file_name()
                    );
                }
            }
        }
    }
}

// A rules or query file that is not UTF-8: where it stops being UTF-8, not only that it does.
#[test]
fn a_rules_or_query_file_that_is_not_utf8_is_refused_with_its_line_and_column() {
    let dir = folder();
    fs::write(
        dir.path().join("bad.rq"),
        b"PREFIX ex: <http://example.org/>\nCONSTRUCT { ?a ex:q ?b } WHERE { ?a ex:p \"\xC3\x28\" }\n",
    )
    .unwrap();
    fs::write(dir.path().join("bad-query.rq"), b"ASK { ?s ?p \"\xFF\" }\n").unwrap();
    for (args, code_name, at) in [
        (
            &[
                "materialize",
                "data.ttl",
                "--rules",
                "bad.rq",
                "-o",
                "out.nq",
            ][..],
            "reasonctl::rules::unreadable",
            "line 2, column 43 (byte 75)",
        ),
        (
            &["query", "data.ttl", "--query", "bad-query.rq"][..],
            "reasonctl::settings::query_file",
            "line 1, column 14 (byte 13)",
        ),
    ] {
        let out = reasonctl()
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_eq!(code(&out), 2, "{}", stderr(&out));
        let text = stderr(&out).replace('\n', " ").replace(" │ ", " ");
        assert!(text.contains(code_name), "{text}");
        assert!(text.contains(at), "{text}");
        assert!(!dir.path().join("out.nq").exists());
    }
}

#[cfg(unix)]
#[test]
fn a_query_file_past_16_mib_is_refused_without_reading_it_all() {
    let dir = folder();
    let out = reasonctl()
        .args(["query", "data.ttl", "--query", "/dev/zero"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let text = stderr(&out).replace('\n', " ").replace(" │ ", " ");
    assert!(text.contains("reasonctl::settings::query_file"), "{text}");
    assert!(text.contains("more than 16 MiB"), "{text}");
}

// Root cause 12: `--rules /dev/zero` read until memory ran out.
#[cfg(unix)]
#[test]
fn a_rules_file_past_16_mib_is_refused_without_reading_it_all() {
    let dir = folder();
    let started = Instant::now();
    let out = reasonctl()
        .args(["materialize", "data.ttl", "--rules", "/dev/zero"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    fails_with(&out, 2, "reasonctl::rules::unreadable");
    assert!(
        stderr(&out).contains("more than 16 MiB"),
        "{}",
        stderr(&out)
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn explain_stops_at_its_timeout_says_it_is_incomplete_and_exits_3() {
    let dir = folder();
    let mut chain = String::from("@prefix ex: <http://example.org/> .\n");
    for i in 0..300 {
        chain.push_str(&format!("ex:n{i} ex:p ex:n{} .\n", i + 1));
    }
    write(dir.path(), "chain.ttl", &chain);
    write(
        dir.path(),
        "r.rq",
        &format!(
            "{PREFIX}#@rule base\nCONSTRUCT {{ ?a ex:reach ?b }} WHERE {{ ?a ex:p ?b }}\n#@rule step\nCONSTRUCT {{ ?a ex:reach ?c }} WHERE {{ ?a ex:reach ?b . ?b ex:p ?c }}\n"
        ),
    );
    let started = Instant::now();
    let out = reasonctl()
        .args([
            "explain",
            "chain.ttl",
            "--rules",
            "r.rq",
            "--fact",
            "?s <http://example.org/reach> ?o",
            "--depth",
            "2",
            "--timeout",
            "1",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    fails_with(&out, 3, "reasonctl::explain::incomplete");
    assert!(String::from_utf8_lossy(&out.stdout).contains("not shown: the deadline passed"));
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

// A full disk (ENOSPC) on standard output is an error with its own code, not a broken pipe.
#[cfg(target_os = "linux")]
#[test]
fn a_full_standard_output_fails_with_exit_2() {
    let dir = folder();
    copy_rule(dir.path());
    let full = fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_reasonctl"))
        .args(["materialize", "data.ttl", "--rules", "r.rq"])
        .current_dir(dir.path())
        .stdout(full)
        .output()
        .unwrap();
    fails_with(&out, 2, "reasonctl::output::stdout");
}

// Without --max-memory, a command that needs more memory than the machine (here its cgroup) allows stops with a
// report (exit 3) instead of being killed by the kernel (exit 137). Needs a writable cgroup-v1 memory controller
// and no swap (the bound counts swap, which the cgroup's limit does not); said and skipped otherwise.
#[cfg(target_os = "linux")]
#[test]
fn a_query_past_the_cgroups_memory_stops_with_a_report_instead_of_the_kernels_kill() {
    let swap = fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .any(|l| l.starts_with("SwapTotal:") && !l.ends_with(" 0 kB"));
    let group = PathBuf::from(format!(
        "/sys/fs/cgroup/memory/reasonctl-test-{}",
        std::process::id()
    ));
    if swap || fs::create_dir(&group).is_err() {
        eprintln!("skipped: no writable cgroup-v1 memory controller, or the machine has swap");
        return;
    }
    struct Remove(PathBuf);
    impl Drop for Remove {
        fn drop(&mut self) {
            let _ = fs::remove_dir(&self.0);
        }
    }
    let _remove = Remove(group.clone());
    fs::write(group.join("memory.limit_in_bytes"), "400M").unwrap();
    let dir = folder();
    let triples: String = (0..200)
        .map(|i| format!("ex:s{i} ex:p ex:o{i} .\n"))
        .collect();
    write(
        dir.path(),
        "d.ttl",
        &format!("@prefix ex: <http://example.org/> .\n{triples}"),
    );
    // 200^5 rows.
    write(
        dir.path(),
        "q.rq",
        "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n ?o }\n",
    );
    let bin = assert_cmd::cargo::cargo_bin("reasonctl");
    let script = format!(
        "echo $$ > {}/cgroup.procs && exec {} query d.ttl --query q.rq > rows.tsv",
        group.display(),
        bin.display()
    );
    let out = std::process::Command::new("sh")
        .args(["-c", &script])
        .current_dir(dir.path())
        .output()
        .unwrap();
    fails_with(&out, 3, "reasonctl::run::machine_memory");
}

// A C1 control character (U+009B, CSI on some terminals) in the data reached `query`'s table as it was: Turtle
// leaves it unescaped. The table writes it as `\u009B`.
#[test]
fn query_tables_write_c1_control_characters_as_turtle_escapes() {
    let dir = folder();
    write(
        dir.path(),
        "c1.ttl",
        "@prefix ex: <http://example.org/> .\nex:a ex:p \"x\u{9b}31my\" .\n",
    );
    let out = reasonctl()
        .args([
            "query",
            "c1.ttl",
            "--query",
            "SELECT ?o WHERE { ?s ?p ?o }",
            "--format",
            "table",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("\"x\\u009B31my\""), "{table}");
    assert!(!table.contains('\u{9b}'), "{table}");
}

// The same character reached a terminal from `materialize` (facts on stdout, and `--diff -`) as it was: N-Quads and
// TriG leave C1 controls unescaped. On a terminal they are written as `\u009B`; a pipe still gets the character.
#[test]
fn facts_and_patches_on_a_terminal_write_c1_controls_as_escapes_and_pipes_keep_them() {
    let dir = folder();
    write(
        dir.path(),
        "c1.ttl",
        "@prefix ex: <http://example.org/> .\nex:a ex:p \"x\u{9b}31my\" .\n",
    );
    write(
        dir.path(),
        "more.ttl",
        "@prefix ex: <http://example.org/> .\nex:b ex:p \"z\u{85}w\" .\n",
    );
    write(
        dir.path(),
        "q.rq",
        "PREFIX ex: <http://example.org/>\nCONSTRUCT { ?s ex:q ?o } WHERE { ?s ex:p ?o }\n",
    );
    let piped = reasonctl()
        .args([
            "materialize",
            "-q",
            "c1.ttl",
            "--rules",
            "q.rq",
            "--format",
            "nquads",
        ])
        .args(["--state", "st"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(code(&piped), 0, "{}", stderr(&piped));
    let piped = String::from_utf8(piped.stdout).unwrap();
    assert!(piped.contains("\"x\u{9b}31my\""), "{piped}");
    let facts = on_terminal(
        dir.path(),
        "materialize -q c1.ttl --rules q.rq --format nquads",
    );
    let patch = on_terminal(
        dir.path(),
        "materialize -q --state st --add more.ttl --diff -",
    );
    match (facts, patch) {
        (Ok(facts), Ok(patch)) => {
            let facts = String::from_utf8(facts.stdout).unwrap();
            assert!(facts.contains("\"x\\u009B31my\""), "{facts}");
            assert!(!facts.contains('\u{9b}'), "{facts}");
            let patch = String::from_utf8(patch.stdout).unwrap();
            assert!(
                patch.contains("A <http://example.org/b> <http://example.org/q> \"z\\u0085w\" ."),
                "{patch}"
            );
            assert!(!patch.contains('\u{85}'), "{patch}");
        }
        (Err(e), _) | (_, Err(e)) => {
            eprintln!(
                "no `script` to give a terminal ({e}): the escapes on a terminal are not checked here"
            )
        }
    }
}

// Under an address-space limit (`ulimit -v`) an RDF/XML entity bomb's 928 MB allocation failed and aborted the
// process (signal 6, a backtrace); the default heap bound now takes half of what the limit leaves, and the run
// stops at it with the machine-memory report, exit 3.
#[cfg(target_os = "linux")]
#[test]
fn an_address_space_limit_bounds_the_heap_and_a_run_past_it_stops_with_a_report() {
    let dir = folder();
    // A 1 MiB prefix used 2,000 times: 2 GB of IRIs from a 1 MiB file.
    let iri = format!("http://example.org/{}", "x".repeat(1 << 20));
    let mut text = format!("@prefix p: <{iri}> .\n");
    for i in 0..2000 {
        text.push_str(&format!("p:s{i} <http://example.org/p> \"x\" .\n"));
    }
    write(dir.path(), "prefix.ttl", &text);
    copy_rule(dir.path());
    let bin = env!("CARGO_BIN_EXE_reasonctl");
    // 2.5 GB of address space: the binary, three 256 MiB stacks and the parser's leave about a gigabyte, half of
    // it the heap's; the IRIs take two.
    let out = std::process::Command::new("sh")
        .args([
            "-c",
            &format!("ulimit -v 2500000 && exec {bin} materialize -q --threads 2 prefix.ttl --rules r.rq -o out.nq"),
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    fails_with(&out, 3, "reasonctl::run::machine_memory");
    assert!(!dir.path().join("out.nq").exists());
}

#[test]
fn an_allocation_the_system_refuses_below_the_heap_limit_stops_with_a_report_not_an_abort() {
    let dir = folder();
    let mut data = String::new();
    for i in 0..1_000_000 {
        data.push_str(&format!("<http://ex/s{i}> <http://ex/v> \"{i}\" .\n"));
    }
    write(dir.path(), "big.nt", &data);
    let bin = env!("CARGO_BIN_EXE_reasonctl");
    // A cross product sorted whole: its rows grow by doubling, and a doubling's new block (the old one still
    // held) does not fit in what the address space has left, though the heap counted is under its limit. The
    // allocator returned null and the standard library aborted (exit 134, two threads, 3 runs of 3).
    let out = std::process::Command::new("sh")
        .args([
            "-c",
            &format!(
                "unset RUST_BACKTRACE; ulimit -v 4000000 && exec {bin} --threads 2 query --timeout 60 --format tsv -o out.tsv --query 'SELECT ?a ?b WHERE {{ ?a ?p ?o . ?b ?q ?r }} ORDER BY ?a ?b LIMIT 1' big.nt"
            ),
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    fails_with(&out, 3, "reasonctl::run::machine_memory");
    assert!(!dir.path().join("out.tsv").exists());
}

/// A JSON-LD rule over `ex:p` deriving `ex:q`, with `extra` (JSON) appended to its `where` array.
fn jsonld_rule(extra: &str) -> String {
    format!(
        "{{\"@context\": {{\"ex\": \"http://example.org/\"}}, \"where\": [{{\"@id\": \"?a\", \"ex:p\": \"?b\"}}{extra}], \"insert\": {{\"@id\": \"?a\", \"ex:q\": \"?b\"}}}}"
    )
}

#[test]
fn jsonld_filters_of_a_million_operands_run_as_balanced_trees() {
    let dir = folder();
    // Left-deep chains a million deep overflowed the stack (exit 134) in materialize while lint passed them.
    for (name, filter) in [
        (
            "or.json",
            format!("(|| {}true)", "false ".repeat(1_000_000)),
        ),
        (
            "and.json",
            format!("(&& {}true)", "true ".repeat(1_000_000)),
        ),
    ] {
        write(
            dir.path(),
            name,
            &jsonld_rule(&format!(", [\"filter\", \"{filter}\"]")),
        );
        let out = reasonctl()
            .args(["materialize", "data.ttl", "--rules", name, "-o", "out.nq"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{name}: {}", stderr(&out));
        assert_eq!(
            fs::read_to_string(dir.path().join("out.nq")).unwrap(),
            "<http://example.org/a> <http://example.org/q> <http://example.org/b> .\n",
            "{name}"
        );
    }
}

#[test]
fn jsonld_paths_and_sums_past_the_parser_limits_are_refused_and_a_long_union_reads_in_linear_time()
{
    let dir = folder();
    let path_rule = |path: &str| {
        format!(
            "{{\"@context\": {{\"ex\": \"http://example.org/\", \"pp\": {{\"@path\": \"{path}\"}}}}, \"where\": {{\"@id\": \"?a\", \"pp\": \"?b\"}}, \"insert\": {{\"@id\": \"?a\", \"ex:q\": \"?b\"}}}}"
        )
    };
    let sum = format!(", [\"bind\", \"?c\", [\"+\"{}]]", ", 1".repeat(2000));
    for (name, text, says) in [
        // 400,000 brackets overflowed the stack in lint, deps and materialize.
        (
            "deep.json",
            path_rule(&format!(
                "{}ex:p{}",
                "(".repeat(400_000),
                ")".repeat(400_000)
            )),
            "an @path's brackets nest deeper than 128 levels",
        ),
        // `p**…` ran in time growing as the cube of the stars (1,000: past a minute); SPARQL has no `p**`.
        (
            "stars.json",
            path_rule(&format!("ex:p{}", "*".repeat(400))),
            "a path step takes one of * + ?",
        ),
        ("sum.json", jsonld_rule(&sum), "takes at most 1024 operands"),
    ] {
        write(dir.path(), name, &text);
        let out = reasonctl()
            .args(["lint", name])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_eq!(code(&out), 1, "{name}: {}", stderr(&out));
        let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
        assert!(said.contains(says), "{name}: {said}");
    }
    // 40,000 branches: 58 s to read (each branch copied the union so far), now well under a second (release).
    let union = format!(
        ", [\"union\"{}]",
        ", {\"@id\": \"?a\", \"ex:p\": \"?b\"}".repeat(40_000)
    );
    write(dir.path(), "union.json", &jsonld_rule(&union));
    let started = Instant::now();
    let out = reasonctl()
        .args([
            "materialize",
            "data.ttl",
            "--rules",
            "union.json",
            "-o",
            "u.nq",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
}

// `query` answers on a terminal wrote the character as it was in JSON, XML and TSV results and in N-Triples: each
// now escapes it in its own syntax (`\u009B`, XML `&#x9B;`), which reads back as the same character.
#[test]
fn query_answers_on_a_terminal_escape_c1_controls_in_their_own_syntax() {
    let dir = folder();
    write(
        dir.path(),
        "c1.ttl",
        "@prefix ex: <http://example.org/> .\nex:a ex:p \"x\u{9b}31my\" .\n",
    );
    let on_tty = |query: &str, format: &str| {
        on_terminal(
            dir.path(),
            &format!("query -q c1.ttl --query '{query}' --format {format}"),
        )
    };
    let select = "SELECT ?o WHERE { ?s ?p ?o }";
    let construct = "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }";
    let cases = [
        (select, "json", "\"x\\u009B31my\""),
        (select, "xml", "x&#x9B;31my"),
        (select, "tsv", "\"x\\u009B31my\""),
        (construct, "nt", "\"x\\u009B31my\" ."),
    ];
    for (query, format, shown) in cases {
        match on_tty(query, format) {
            Ok(out) => {
                let text = String::from_utf8(out.stdout).unwrap();
                assert!(text.contains(shown), "{format}: {text}");
                assert!(!text.contains('\u{9b}'), "{format}: {text}");
            }
            Err(e) => {
                eprintln!(
                    "no `script` to give a terminal ({e}): the escapes on a terminal are not checked here"
                );
                return;
            }
        }
    }
}

// A rules folder with a link named as a rule file that leads nowhere: the rule it was meant to hold is not
// silently dropped.
#[cfg(unix)]
#[test]
fn a_rules_folder_with_a_dangling_rule_file_link_is_refused_not_skipped() {
    let dir = folder();
    fs::create_dir(dir.path().join("rules")).unwrap();
    fs::write(
        dir.path().join("rules/a.rq"),
        format!("{PREFIX}CONSTRUCT {{ ?a ex:q ?b }} WHERE {{ ?a ex:p ?b }}\n"),
    )
    .unwrap();
    std::os::unix::fs::symlink("/nonexistent/b.rq", dir.path().join("rules/b.rq")).unwrap();
    for args in [
        &["lint", "rules"][..],
        &[
            "materialize",
            "data.ttl",
            "--rules",
            "rules",
            "-o",
            "out.nq",
        ][..],
    ] {
        let out = reasonctl()
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
        // lint reports each rule's diagnostic on standard output, the verdict on standard error.
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out))
            .replace('\n', " ")
            .replace(" │ ", " ");
        assert!(
            text.contains("reasonctl::rules::unreadable") && text.contains("b.rq"),
            "{args:?}: {text}"
        );
    }
    assert!(!dir.path().join("out.nq").exists());
}

// A rule's FILTERs of one group parse as one chain of `&&`, one level per FILTER: 1,025 of them were refused as
// operators nested past the limit, and so was a long `||` in a query. Such chains are regrouped as balanced trees
// (the operators are associative), so they run, and filter as written.
#[test]
fn long_chains_of_filters_and_of_and_or_run_and_filter_as_written() {
    let dir = folder();
    fs::write(
        dir.path().join("data.ttl"),
        "@prefix ex: <http://example.org/> .\nex:a ex:p ex:b . ex:a ex:p ex:z700 . ex:a ex:p ex:z99999 .\n",
    )
    .unwrap();
    let filters: String = (0..1100)
        .map(|i| format!("FILTER(?y != ex:z{i}) "))
        .collect();
    let and: Vec<String> = (0..100_000).map(|i| format!("?y != ex:z{i}")).collect();
    fs::write(
        dir.path().join("filters.rq"),
        format!("{PREFIX}CONSTRUCT {{ ?x ex:q ?y }} WHERE {{ ?x ex:p ?y {filters}}}\n"),
    )
    .unwrap();
    fs::write(
        dir.path().join("and.rq"),
        format!(
            "{PREFIX}CONSTRUCT {{ ?x ex:q ?y }} WHERE {{ ?x ex:p ?y FILTER({}) }}\n",
            and.join(" && ")
        ),
    )
    .unwrap();
    for (rules, kept) in [
        ("filters.rq", "<http://example.org/z99999>"),
        ("and.rq", "<http://example.org/b>"),
    ] {
        let out = reasonctl()
            .args([
                "materialize",
                "data.ttl",
                "--rules",
                rules,
                "--format",
                "nquads",
            ])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{rules}: {}", stderr(&out));
        let facts = String::from_utf8_lossy(&out.stdout).into_owned();
        // ex:b is kept by both; ex:z700 by neither; ex:z99999 only past the 1,100 FILTERs.
        assert!(
            facts.contains("<http://example.org/b> ."),
            "{rules}: {facts}"
        );
        assert!(facts.contains(kept), "{rules}: {facts}");
        assert!(!facts.contains("z700"), "{rules}: {facts}");
    }
    let or: Vec<&str> = std::iter::repeat_n("false", 5000)
        .chain(["?b = <http://example.org/b>"])
        .collect();
    let out = reasonctl()
        .args([
            "query",
            "data.ttl",
            "--format",
            "tsv",
            "--query",
            &format!("SELECT ?b WHERE {{ ?a ?p ?b FILTER({}) }}", or.join(" || ")),
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "?b\n<http://example.org/b>\n"
    );
}

// `query --timeout` over rules that never reach a fixpoint: reasoning took the whole budget and the query failed
// with "ran past its deadline (0ns)". Reasoning now stops a tenth of the timeout early, and the query answers
// from the facts derived so far, capped (exit 3), as `explain` and `materialize` do.
#[test]
fn a_query_over_rules_capped_by_time_answers_from_what_they_derived_and_says_so() {
    let dir = folder();
    fs::write(
        dir.path().join("grow.rq"),
        format!("{PREFIX}CONSTRUCT {{ ?a ex:p ?t }} WHERE {{ ?a ex:p ?v BIND(CONCAT(STR(?v), \"a\") AS ?t) }}\n"),
    )
    .unwrap();
    let out = reasonctl()
        .args([
            "query",
            "data.ttl",
            "--rules",
            "grow.rq",
            "--timeout",
            "2",
            "--format",
            "tsv",
            "--query",
            "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("reasonctl::datalog::capped"),
        "{}",
        stderr(&out)
    );
    let answer = String::from_utf8_lossy(&out.stdout).into_owned();
    let n: u64 = answer
        .strip_prefix("?n\n")
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("not a count: {answer}"));
    assert!(n > 2, "{answer}");
}

// `explain --depth` over a long chain: each level indented the next by three more characters, so the text grew with
// the depth squared (a 12,000-link chain explained 10,000 deep wrote 1.2 GB). Past 40 levels a line's indentation
// starts again behind `┊`.
#[test]
fn a_deep_explanation_indents_at_most_forty_levels_and_grows_linearly() {
    let dir = folder();
    let chain: String = (0..300)
        .map(|i| {
            format!(
                "<http://example.org/n{i}> <http://example.org/e> <http://example.org/n{}> .\n",
                i + 1
            )
        })
        .collect();
    fs::write(dir.path().join("chain.nt"), chain).unwrap();
    fs::write(
        dir.path().join("reach.rq"),
        format!(
            "{PREFIX}#@rule base\nCONSTRUCT {{ ?x ex:r ?y }} WHERE {{ ?x ex:e ?y }}\n\
             #@rule step\nCONSTRUCT {{ ?x ex:r ?z }} WHERE {{ ?x ex:r ?y . ?y ex:e ?z }}\n"
        ),
    )
    .unwrap();
    let out = reasonctl()
        .args([
            "explain",
            "chain.nt",
            "--rules",
            "reach.rq",
            "--depth",
            "300",
            "--fact",
            "<http://example.org/n0> <http://example.org/r> <http://example.org/n300>",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    // Every step of the chain is explained, down to the first link.
    assert!(
        text.contains("<http://example.org/n0> <http://example.org/r> <http://example.org/n1> ."),
        "{}",
        &text[..text.len().min(2000)]
    );
    assert!(text.contains('┊'));
    let longest = text.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    // The deepest prefix (40 levels of three characters), a branch, the status and the fact.
    assert!(longest < 41 * 3 + 120, "a line of {longest} characters");
    assert!(text.len() < 400_000, "{} bytes", text.len());
}
