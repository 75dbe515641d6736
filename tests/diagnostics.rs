//! Every diagnostic code the sources define is asserted somewhere: in a fixture's expected output or stderr, in
//! an integration test, or in a unit test (the `#[cfg(test)]` part of a source file). A code no test reaches is
//! a message nobody has seen. See: issue 16 (root cause 13).

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

fn files_under(dir: &Path, keep: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_owned()];
    while let Some(d) = dirs.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if keep(&p) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The codes of a text: `reasonctl::area::name`.
fn codes_in(text: &str) -> impl Iterator<Item = &str> {
    text.match_indices("reasonctl::").filter_map(|(at, _)| {
        let rest = &text[at..];
        let end = rest
            .find(|c: char| !(c.is_ascii_lowercase() || c == '_' || c == ':'))
            .unwrap_or(rest.len());
        let code = rest[..end].trim_end_matches(':');
        (code.matches("::").count() == 2).then_some(code)
    })
}

#[test]
fn every_diagnostic_code_is_asserted_by_a_fixture_or_a_test() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rs = |p: &Path| p.extension().is_some_and(|e| e == "rs");
    // Defined: `code(reasonctl::…)` attributes, and the lint codes' constants.
    let mut defined = BTreeSet::new();
    let mut asserted = BTreeSet::new();
    for path in files_under(&root.join("src"), &rs) {
        let text = fs::read_to_string(&path).unwrap();
        let (body, tests) = text.split_at(text.find("#[cfg(test)]").unwrap_or(text.len()));
        for (at, _) in body.match_indices("code(reasonctl::") {
            defined.extend(codes_in(&body[at + 5..]).take(1).map(str::to_owned));
        }
        if path.ends_with("lint/codes.rs") {
            for line in body.lines().filter(|l| l.starts_with("pub const ")) {
                defined.extend(codes_in(line).map(str::to_owned));
            }
        }
        asserted.extend(codes_in(tests).map(str::to_owned));
    }
    let expected = |p: &Path| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("expected."))
    };
    for path in files_under(&root.join("fixtures"), &expected) {
        asserted
            .extend(codes_in(&fs::read_to_string(&path).unwrap_or_default()).map(str::to_owned));
    }
    for path in files_under(&root.join("tests"), &rs) {
        if path.ends_with("diagnostics.rs") {
            continue;
        }
        asserted.extend(codes_in(&fs::read_to_string(&path).unwrap()).map(str::to_owned));
    }
    assert!(defined.len() > 60, "found only {} codes", defined.len());
    let missing: Vec<&String> = defined.difference(&asserted).collect();
    assert!(
        missing.is_empty(),
        "no fixture or test asserts these codes: {missing:?}"
    );
}
