//! This module defines where rules come from: `--rules` files and folders (multi-rule SPARQL files split at
//! `#@rule` lines, JSON-LD files holding one rule or an array), and `f:rule` values stored in the data.

use std::path::{Path, PathBuf};

use crate::store::{Store, TermId, TermRef, TermSource, well_known as wk};

use super::RuleError;
use super::model::{Language, Origin};

/// What to read rules from.
#[derive(Clone, Debug, Default)]
pub struct RuleSources {
    /// `--rules` paths, in order.
    pub paths: Vec<PathBuf>,
    /// `--rules-graph`: take stored rules from this named graph only (`None`: from every graph).
    pub graph: Option<String>,
    /// Rule texts read before (a saved state's rule files), taken first.
    pub texts: Vec<RuleText>,
}

/// One rule's text, before parsing.
#[derive(Clone, Debug)]
pub struct RuleText {
    /// The rule id.
    pub id: String,
    /// Where it came from.
    pub origin: Origin,
    /// Its language.
    pub language: Language,
    /// The text (a SPARQL rule of a multi-rule file with the file's prologue in front).
    pub text: String,
}

/// Every rule text of the sources and the data, and every problem found collecting them (unreadable files,
/// malformed stored rules, duplicate ids).
pub fn collect(sources: &RuleSources, store: &Store) -> (Vec<RuleText>, Vec<RuleError>) {
    let mut texts = sources.texts.clone();
    let mut errors = Vec::new();
    for path in &sources.paths {
        match rule_files(path) {
            Ok(files) => {
                for f in files {
                    if super::srl::rdf::is_rdf_file(&f) {
                        super::srl::rdf::from_file(&f, &mut texts, &mut errors);
                        continue;
                    }
                    match read_rules_file(&f) {
                        Ok(text) => texts.extend(split_file(&f, &text)),
                        Err(e) => errors.push(RuleError::Unreadable {
                            path: f.clone(),
                            reason: e.to_string(),
                        }),
                    }
                }
            }
            Err(e) => errors.push(e),
        }
    }
    stored(store, sources.graph.as_deref(), &mut texts, &mut errors);
    // Ids are compared as the IRIs they stand for: `ex:r` under a context mapping `ex:`, `http://…/r` and a
    // stored rule's subject are one id.
    let mut seen: hashbrown::HashMap<String, usize> = hashbrown::HashMap::new();
    for (index, t) in texts.iter().enumerate() {
        match seen.entry(canonical_id(t)) {
            hashbrown::hash_map::Entry::Occupied(first) => errors.push(RuleError::DuplicateId {
                id: t.id.clone(),
                index,
                taken_by: texts[*first.get()].id.clone(),
            }),
            hashbrown::hash_map::Entry::Vacant(v) => {
                v.insert(index);
            }
        }
    }
    (texts, errors)
}

/// The id a rule text's id stands for: a JSON-LD `@id` expanded through the rule's own `@context` (a compact
/// IRI whose prefix it maps), otherwise the id as written.
fn canonical_id(t: &RuleText) -> String {
    if t.language != Language::JsonLd || matches!(t.origin, Origin::Stored { .. }) {
        return t.id.clone();
    }
    let Ok(value) = serde_json::from_str::<serde_json::Value>(&t.text) else {
        return t.id.clone();
    };
    let context = value.get("@context").or_else(|| value.get("context"));
    let expanded = t.id.split_once(':').and_then(|(prefix, local)| {
        if local.starts_with("//") {
            return None;
        }
        let iri = context?.get(prefix)?;
        let iri = iri.as_str().or_else(|| iri.get("@id")?.as_str())?;
        Some(format!("{iri}{local}"))
    });
    expanded.unwrap_or_else(|| t.id.clone())
}

/// The most bytes a rules file may hold: a rule longer than this is not a rule (and `--rules /dev/zero` would
/// otherwise read until memory runs out).
pub const MAX_RULES_FILE: u64 = 16 << 20;

/// Reads a rules file (at most [`MAX_RULES_FILE`] bytes, UTF-8, a leading byte-order mark dropped). Every
/// reader of rule files — the rules, their diagnostics, `explain`'s rule locations — reads through here, so
/// offsets agree.
pub fn read_rules_file(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_RULES_FILE + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_RULES_FILE {
        return Err(std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            format!(
                "it holds more than {} MiB; a rules file is at most that large",
                MAX_RULES_FILE >> 20
            ),
        ));
    }
    let mut text = crate::excerpt::utf8_text(bytes)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
    if let Some(rest) = text.strip_prefix('\u{FEFF}') {
        text = rest.to_owned();
    }
    Ok(text)
}

/// The rule files a `--rules` path names: the file itself, or a folder's `*.rq *.sparql *.json *.jsonld *.srl
/// *.ttl *.trig` (but folders) sorted by name.
fn rule_files(path: &Path) -> Result<Vec<PathBuf>, RuleError> {
    let unreadable = |reason: String| RuleError::Unreadable {
        path: path.to_owned(),
        reason,
    };
    let meta = std::fs::metadata(path).map_err(|e| unreadable(e.to_string()))?;
    if !meta.is_dir() {
        return Ok(vec![path.to_owned()]);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|e| unreadable(e.to_string()))?
        .flatten()
        .map(|e| e.path())
        // Every entry named as a rule file but a folder: one that cannot be read (a link that leads nowhere)
        // is an error when it is read, never skipped without a word.
        .filter(|p| {
            !p.is_dir()
                && p.extension().and_then(|e| e.to_str()).is_some_and(|e| {
                    matches!(
                        e,
                        "rq" | "sparql" | "json" | "jsonld" | "srl" | "ttl" | "trig"
                    )
                })
        })
        .collect();
    files.sort();
    Ok(files)
}

fn is_json(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e, "json" | "jsonld"))
}

/// Splits a rules file into rule texts with their ids.
pub fn split_file(path: &Path, text: &str) -> Vec<RuleText> {
    let file_id = path.display().to_string();
    if is_json(path) {
        return split_json(path, &file_id, text);
    }
    if path.extension().is_some_and(|e| e == "srl") {
        return super::srl::split(path, text);
    }
    // `#@rule [NAME]` lines start rules; the lines before the first are the prologue shared by all.
    let mut starts: Vec<(usize, Option<String>)> = Vec::new();
    let mut offset = 0;
    for line in lines_inclusive(text) {
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix("#@rule") {
            if rest.is_empty() || rest.starts_with(char::is_whitespace) {
                let name = rest.trim();
                starts.push((offset, (!name.is_empty()).then(|| name.to_owned())));
            }
        }
        offset += line.len();
    }
    if starts.is_empty() {
        return vec![RuleText {
            id: file_id,
            origin: Origin::File {
                path: path.to_owned(),
                offset: 0,
                prologue: 0,
            },
            language: Language::Sparql,
            text: text.to_owned(),
        }];
    }
    let prologue = &text[..starts[0].0];
    let several = starts.len() > 1;
    starts
        .iter()
        .enumerate()
        .map(|(i, (start, name))| {
            let end = starts.get(i + 1).map_or(text.len(), |(s, _)| *s);
            let id = match name {
                Some(n) => n.clone(),
                None if several => format!("{file_id}#{}", i + 1),
                None => file_id.clone(),
            };
            RuleText {
                id,
                origin: Origin::File {
                    path: path.to_owned(),
                    offset: *start,
                    prologue: prologue.len(),
                },
                language: Language::Sparql,
                text: format!("{prologue}{}", &text[*start..end]),
            }
        })
        .collect()
}

/// The lines of `text`, each with its line end: LF, CR LF, or a lone CR (SPARQL ends a line, and a comment, at
/// either character; a file of classic Mac line ends is as many lines as it shows).
fn lines_inclusive(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= bytes.len() {
            return None;
        }
        let from = start;
        let mut i = start;
        while i < bytes.len() {
            match bytes[i] {
                b'\n' => break,
                b'\r' if bytes.get(i + 1) != Some(&b'\n') => break,
                _ => i += 1,
            }
        }
        start = (i + 1).min(bytes.len());
        Some(&text[from..start])
    })
}

/// A JSON-LD rules file: one rule object or an array of them; ids from `@id`, else FILE / FILE#N. Each rule's
/// text is its own slice of the file, so positions in it map back to the file.
fn split_json(path: &Path, file_id: &str, text: &str) -> Vec<RuleText> {
    let one = |id: String, range: std::ops::Range<usize>| RuleText {
        id,
        origin: Origin::File {
            path: path.to_owned(),
            offset: range.start,
            prologue: 0,
        },
        language: Language::JsonLd,
        text: text[range].to_owned(),
    };
    let id_of = |v: &serde_json::Value| v.get("@id").and_then(|v| v.as_str()).map(str::to_owned);
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Array(items)) => {
            let ranges = array_items(text);
            if ranges.len() != items.len() {
                return vec![one(file_id.to_owned(), 0..text.len())];
            }
            let several = items.len() > 1;
            items
                .iter()
                .zip(ranges)
                .enumerate()
                .map(|(i, (item, range))| {
                    let id = id_of(item).unwrap_or_else(|| {
                        if several {
                            format!("{file_id}#{}", i + 1)
                        } else {
                            file_id.to_owned()
                        }
                    });
                    one(id, range)
                })
                .collect()
        }
        Ok(value) => vec![one(
            id_of(&value).unwrap_or_else(|| file_id.to_owned()),
            0..text.len(),
        )],
        // Malformed JSON: the parser reports it, under the file's id.
        Err(_) => vec![one(file_id.to_owned(), 0..text.len())],
    }
}

/// The byte ranges of the elements of the top-level JSON array in `text` (valid JSON).
fn array_items(text: &str) -> Vec<std::ops::Range<usize>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start: Option<usize> = None;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'"' => {
                start.get_or_insert(i);
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'[' | b'{' => {
                if depth == 1 {
                    start.get_or_insert(i);
                }
                depth += 1;
            }
            b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    if let Some(s) = start.take() {
                        out.push(s..text[..i].trim_end().len());
                    }
                }
            }
            b',' if depth == 1 => {
                if let Some(s) = start.take() {
                    out.push(s..text[..i].trim_end().len());
                }
            }
            c if depth == 1 && !c.is_ascii_whitespace() => {
                start.get_or_insert(i);
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The `f:rule` values of the data, and its rule sets in SHACL 1.2 Rules' RDF syntax (of one named graph when
/// `graph` is given).
fn stored(
    store: &Store,
    graph: Option<&str>,
    texts: &mut Vec<RuleText>,
    errors: &mut Vec<RuleError>,
) {
    let dict = &store.dict;
    let only: Option<TermId> = match graph {
        Some(g) => match dict.lookup_iri(g) {
            Some(id) => Some(id),
            None => return, // the graph is not in the data: no stored rules
        },
        None => None,
    };
    // Rule sets in SHACL 1.2 Rules' RDF syntax are stored rules too.
    super::srl::rdf::from_store(store, only, texts, errors);
    let mut found: Vec<(TermId, TermId, TermId)> = Vec::new(); // (subject, object, graph)
    for (g, index) in store.quads.graphs() {
        if only.is_some_and(|o| o != g) {
            continue;
        }
        found.extend(
            (index.range(&[None, Some(wk::F_RULE), None]).iter()).map(|[s, _, o]| (s, o, g)),
        );
    }
    found.sort_by(|a, b| {
        crate::output::rdf::cmp_terms(dict, a.0, b.0)
            .then_with(|| crate::output::rdf::cmp_terms(dict, a.2, b.2))
    });
    let mut k = 0;
    while k < found.len() {
        let (subject, object, g) = found[k];
        let same = found[k..]
            .iter()
            .take_while(|(s, _, _)| *s == subject)
            .count();
        let subject_text = match dict.get(subject) {
            TermRef::Iri(i) => i.to_string(),
            _ => dict.display(subject),
        };
        k += same;
        if same > 1 {
            errors.push(RuleError::StoredTwice {
                subject: subject_text,
            });
            continue;
        }
        let origin = Origin::Stored {
            subject: subject_text.clone(),
            graph: (g != TermId::DEFAULT_GRAPH).then(|| dict.display(g)),
        };
        let (language, text) = match dict.get(object) {
            TermRef::Literal {
                lexical,
                kind: crate::store::LiteralKind::Typed(wk::F_SPARQL),
            } => (Language::Sparql, lexical.to_owned()),
            TermRef::Literal {
                lexical,
                kind: crate::store::LiteralKind::Typed(wk::RDF_JSON),
            } => (Language::JsonLd, lexical.to_owned()),
            other => {
                let found = match other {
                    TermRef::Literal { .. } => format!("the literal {}", dict.display(object)),
                    TermRef::Blank(_) => {
                        "a blank node (a nested JSON-LD object expands into ordinary nodes)"
                            .to_owned()
                    }
                    _ => format!("the term {}", dict.display(object)),
                };
                errors.push(RuleError::StoredShape {
                    subject: subject_text,
                    found,
                });
                continue;
            }
        };
        texts.push(RuleText {
            id: subject_text,
            origin,
            language,
            text,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_lines_are_found_whatever_the_line_ends_lf_cr_lf_or_a_lone_cr() {
        let lf = "PREFIX ex: <http://e/>\n#@rule one\nCONSTRUCT { ?a ex:q ?b } WHERE { ?a ex:p ?b }\n#@rule two\nCONSTRUCT { ?a ex:r ?b } WHERE { ?a ex:q ?b }\n";
        for end in ["\n", "\r\n", "\r"] {
            let text = lf.replace('\n', end);
            let rules = split_file(Path::new("r.rq"), &text);
            let ids: Vec<&str> = rules.iter().map(|r| r.id.as_str()).collect();
            assert_eq!(ids, ["one", "two"], "{end:?}");
            assert_eq!(
                rules[1].text,
                format!(
                    "PREFIX ex: <http://e/>{end}#@rule two{end}CONSTRUCT {{ ?a ex:r ?b }} WHERE {{ ?a ex:q ?b }}{end}"
                )
            );
        }
        assert_eq!(
            lines_inclusive("a\rb\r\nc\nd").collect::<Vec<_>>(),
            ["a\r", "b\r\n", "c\n", "d"]
        );
    }

    #[test]
    fn a_multi_rule_file_splits_at_rule_lines_with_the_prologue_in_front() {
        let text = "PREFIX ex: <http://e/>\n#@rule first\nCONSTRUCT { ?a ex:q ?b } WHERE { ?a ex:p ?b }\n#@rule\nCONSTRUCT { ?a ex:r ?b } WHERE { ?a ex:q ?b }\n";
        let rules = split_file(Path::new("r.rq"), text);
        assert_eq!(rules.len(), 2);
        assert_eq!(rules[0].id, "first");
        assert_eq!(rules[1].id, "r.rq#2");
        assert!(
            rules[1]
                .text
                .starts_with("PREFIX ex: <http://e/>\n#@rule\n")
        );
        assert!(rules[1].text.contains("ex:r"));
        assert!(!rules[0].text.contains("ex:r"));
    }

    #[test]
    fn a_one_rule_file_is_named_after_the_file() {
        let rules = split_file(
            Path::new("dir/one.rq"),
            "CONSTRUCT { ?a ?p ?b } WHERE { ?a ?p ?b }",
        );
        assert_eq!(rules.len(), 1);
        assert_eq!(rules[0].id, "dir/one.rq");
    }

    #[test]
    fn json_array_items_are_their_own_slices_of_the_file() {
        let text = "[ {\"@id\": \"a\", \"x\": [1, \"]\"]} ,\n  {\"where\": {}} ]";
        let rules = split_json(Path::new("r.json"), "r.json", text);
        assert_eq!(rules[0].text, "{\"@id\": \"a\", \"x\": [1, \"]\"]}");
        assert_eq!(rules[1].text, "{\"where\": {}}");
        let Origin::File { offset, .. } = rules[1].origin else {
            panic!("a file")
        };
        assert_eq!(&text[offset..offset + 2], "{\"");
    }

    #[test]
    fn json_rule_arrays_take_ids_from_at_id_or_position() {
        let rules = split_json(
            Path::new("r.json"),
            "r.json",
            r#"[{"@id": "ex:a", "where": {}}, {"where": {}}]"#,
        );
        assert_eq!(
            rules.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
            ["ex:a", "r.json#2"]
        );
    }
}
