//! This module defines how findings are written: miette's graphical report for people, one JSON object per
//! finding for scripts, and SARIF 2.1.0 for code-scanning services.

use std::fmt::Write as _;

use miette::{GraphicalReportHandler, GraphicalTheme};
use serde_json::{Value, json};

use super::{Finding, Severity, codes};

/// `--format` of `reasonctl lint`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum LintFormat {
    /// miette's graphical report (colour on a terminal only).
    #[default]
    Human,
    /// A JSON array, one object per finding.
    Json,
    /// SARIF 2.1.0 (GitHub code scanning and other SARIF viewers).
    Sarif,
}

/// How the human report looks.
#[derive(Copy, Clone, Debug)]
pub struct Style {
    /// ANSI colours.
    pub color: bool,
    /// Wrap width in columns.
    pub width: usize,
}

/// Errors and warnings counted, after `--deny-warnings` (which counts warnings as errors).
pub fn counts(findings: &[Finding]) -> (usize, usize) {
    let errors = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    (errors, findings.len() - errors)
}

/// The human report: every finding, then a summary line.
pub fn human(findings: &[Finding], rules: usize, style: Style) -> String {
    let theme = if style.color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(style.width)
        .with_break_words(false)
        .with_word_separator(textwrap::WordSeparator::AsciiSpace);
    let mut out = String::new();
    for f in findings {
        let _ = handler.render_report(&mut out, f);
        out.push('\n');
    }
    let (errors, warnings) = counts(findings);
    let _ = writeln!(
        out,
        "{} rule(s) checked: {errors} error(s), {warnings} warning(s)",
        rules
    );
    out
}

fn finding_json(f: &Finding) -> Value {
    let (file, start, end) = match f.position() {
        Some((s, start, end)) => (Some(s.name.clone()), Some(start), Some(end)),
        None => (None, None, None),
    };
    json!({
        "code": f.code,
        "severity": f.severity.name(),
        "rule": f.rule,
        "file": file,
        "line": start.map(|p| p.0),
        "column": start.map(|p| p.1),
        "end_line": end.map(|p| p.0),
        "end_column": end.map(|p| p.1),
        "message": f.message,
        "label": f.labels.first().map(|l| l.text.clone()),
        "help": f.help,
    })
}

/// A JSON array of findings.
pub fn json(findings: &[Finding]) -> String {
    let value = Value::Array(findings.iter().map(finding_json).collect());
    let mut s = serde_json::to_string_pretty(&value).unwrap_or_default();
    s.push('\n');
    s
}

/// A relative URI for a path (SARIF `artifactLocation.uri`): `/` separators, percent-encoded where needed.
fn uri(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.replace('\\', "/").chars() {
        if c.is_ascii_alphanumeric() || "-._~/:@!$&'()*+,;=".contains(c) {
            out.push(c);
        } else {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                let _ = write!(out, "%{b:02X}");
            }
        }
    }
    out
}

/// A SARIF 2.1.0 log with one run: the rules are the codes that occur, the results the findings. Findings in a
/// stored rule (no file) carry the rule id as a logical location.
pub fn sarif(findings: &[Finding]) -> String {
    let mut used: Vec<&'static str> = findings.iter().map(|f| f.code).collect();
    used.sort_by_key(|c| codes::ALL.iter().position(|(a, _)| a == c));
    used.dedup();
    let rules: Vec<Value> = used
        .iter()
        .map(|code| {
            let example = findings.iter().find(|f| f.code == *code);
            json!({
                "id": code,
                "name": code.rsplit("::").next().unwrap_or(code),
                "shortDescription": { "text": codes::summary(code) },
                "fullDescription": { "text": format!("{} (see docs/lints.md)", codes::summary(code)) },
                "defaultConfiguration": {
                    "level": example.map_or("error", |f| sarif_level(f.severity)),
                },
            })
        })
        .collect();
    let results: Vec<Value> = findings
        .iter()
        .map(|f| {
            let mut result = json!({
                "ruleId": f.code,
                "ruleIndex": used.iter().position(|c| *c == f.code).unwrap_or(0),
                "level": sarif_level(f.severity),
                "message": { "text": match &f.help {
                    Some(h) => format!("{} Help: {h}", f.message),
                    None => f.message.clone(),
                } },
            });
            let mut locations = Vec::new();
            match f.position() {
                Some((source, start, end)) if source.path.is_some() => {
                    locations.push(json!({
                        "physicalLocation": {
                            "artifactLocation": { "uri": uri(&source.name) },
                            "region": {
                                "startLine": start.0,
                                "startColumn": start.1,
                                "endLine": end.0,
                                "endColumn": end.1,
                            },
                        },
                    }));
                }
                _ => {
                    if let Some(rule) = &f.rule {
                        locations.push(json!({
                            "logicalLocations": [ { "name": rule, "kind": "object" } ],
                        }));
                    }
                }
            }
            if !locations.is_empty() {
                result["locations"] = Value::Array(locations);
            }
            result
        })
        .collect();
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [ {
            "tool": { "driver": {
                "name": "reasonctl",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            } },
            "columnKind": "unicodeCodePoints",
            "results": results,
        } ],
    });
    let mut s = serde_json::to_string_pretty(&log).unwrap_or_default();
    s.push('\n');
    s
}

fn sarif_level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}
