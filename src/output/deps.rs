//! This module defines how `reasonctl deps` shows a program's dependencies: text for people (80 columns), JSON
//! for scripts, Graphviz dot.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::datalog::Program;
use crate::datalog::closure::{self, Closure};
use crate::datalog::dependency::Group;
use crate::datalog::dependency::{Edge, EdgeKind, Via};
use crate::datalog::footprint::{Key, Scope};
use crate::store::{TermId, TermSource};

/// `--format` of `reasonctl deps`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum DepsFormat {
    /// Stages, groups and edges, aligned for a terminal.
    #[default]
    Text,
    /// One JSON object (schema in docs/deps.md).
    Json,
    /// A Graphviz digraph: clusters per stage and recursive group.
    Dot,
}

/// Shortens IRIs with prefixes (the data's and the rules' declarations, plus rdf, rdfs, owl, xsd).
#[derive(Clone, Debug, Default)]
pub struct Prefixes {
    /// (prefix, namespace), first declaration first.
    pairs: Vec<(String, String)>,
    /// The prefixes and the namespaces of `pairs`, so that each declaration is one lookup (a data file may
    /// declare a hundred thousand).
    names: hashbrown::HashSet<String>,
    namespaces: hashbrown::HashSet<String>,
}

impl Prefixes {
    /// The well-known prefixes, then `declared` (a prefix or namespace already present is skipped).
    pub fn new(declared: impl IntoIterator<Item = (String, String)>) -> Self {
        let mut p = Prefixes::default();
        for (prefix, ns) in declared {
            p.add(prefix, ns);
        }
        for (prefix, ns) in [
            ("rdf", "http://www.w3.org/1999/02/22-rdf-syntax-ns#"),
            ("rdfs", "http://www.w3.org/2000/01/rdf-schema#"),
            ("owl", "http://www.w3.org/2002/07/owl#"),
            ("xsd", "http://www.w3.org/2001/XMLSchema#"),
        ] {
            p.add(prefix.to_owned(), ns.to_owned());
        }
        p
    }

    /// The (prefix, namespace) pairs, first declaration first.
    pub fn pairs(&self) -> &[(String, String)] {
        &self.pairs
    }

    fn add(&mut self, prefix: String, ns: String) {
        if ns.is_empty() || self.names.contains(&prefix) || self.namespaces.contains(&ns) {
            return;
        }
        self.names.insert(prefix.clone());
        self.namespaces.insert(ns.clone());
        self.pairs.push((prefix, ns));
    }

    /// `p:local` for the longest matching namespace whose local part is a plain name, else `<iri>`.
    pub fn compact(&self, iri: &str) -> String {
        let plain = |l: &str| {
            !l.is_empty()
                && !l.ends_with('.')
                && l.chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
        };
        self.pairs
            .iter()
            .filter(|(_, ns)| iri.starts_with(ns.as_str()) && plain(&iri[ns.len()..]))
            .max_by_key(|(_, ns)| ns.len())
            .map_or_else(
                || format!("<{iri}>"),
                |(p, ns)| format!("{p}:{}", &iri[ns.len()..]),
            )
    }
}

/// Renders the dependencies of `program` in `format`.
pub fn render(
    program: &Program,
    terms: &impl TermSource,
    prefixes: &Prefixes,
    format: DepsFormat,
) -> String {
    let cx = Cx {
        program,
        terms,
        prefixes,
    };
    match format {
        DepsFormat::Text => cx.text(),
        DepsFormat::Json => {
            let mut s = serde_json::to_string_pretty(&cx.json()).unwrap_or_default();
            s.push('\n');
            s
        }
        DepsFormat::Dot => cx.dot(),
    }
}

struct Cx<'a, T> {
    program: &'a Program,
    terms: &'a T,
    prefixes: &'a Prefixes,
}

const WIDTH: usize = 80;

impl<T: TermSource> Cx<'_, T> {
    fn id(&self, rule: usize) -> &str {
        &self.program.rules[rule].id
    }

    /// The path a recursive group compiles to (unless `--no-closure`, or the right shape meets a literal object at
    /// run time).
    fn closure(&self, group: &Group) -> Option<Closure> {
        closure::recognize_group(&self.recursive_rules(group)?).map(|(_, c)| c)
    }

    /// A recursive group's rules (`None` for a group that is not recursive).
    fn recursive_rules(&self, group: &Group) -> Option<Vec<&crate::rules::Rule>> {
        let rules = group.rules.iter().map(|&r| &self.program.rules[r]);
        group.recursive.then(|| rules.collect())
    }

    /// The square rule and its symmetric rule of a larger recursive group (run as union-find classes, unless
    /// `--no-closure`): their ids and R.
    fn classes(&self, group: &Group) -> Option<(&str, &str, TermId)> {
        closure::equivalence_within(&self.recursive_rules(group)?)
            .map(|(a, b, r)| (self.id(group.rules[a]), self.id(group.rules[b]), r))
    }

    fn closure_text(&self, c: &Closure) -> String {
        c.describe(|id| self.prefixes.compact(&self.iri(id)))
    }

    fn iri(&self, id: TermId) -> String {
        match self.terms.to_oxrdf(id) {
            Some(oxrdf::Term::NamedNode(n)) => n.into_string(),
            Some(other) => other.to_string(),
            None => String::new(),
        }
    }

    /// `ex:p`, `a ex:C`, `any`, with ` in <g>` / ` in any named graph`.
    fn label(&self, via: &Via) -> String {
        let key = match via.key {
            Key::Any => "any".to_owned(),
            Key::Predicate(p) => self.prefixes.compact(&self.iri(p)),
            Key::Class(c) => format!("a {}", self.prefixes.compact(&self.iri(c))),
        };
        match via.scope {
            Scope::Default => key,
            Scope::Named(g) => format!("{key} in {}", self.prefixes.compact(&self.iri(g))),
            Scope::AnyNamed => format!("{key} in any named graph"),
        }
    }

    fn labels(&self, edge: &Edge) -> String {
        edge.via
            .iter()
            .map(|v| self.label(v))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn text(&self) -> String {
        let deps = &self.program.deps;
        let mut out = String::new();
        let n = self.program.rules.len();
        if n == 0 {
            out.push_str("no rules\n");
            return out;
        }
        let recursive = deps.groups.iter().filter(|g| g.recursive).count();
        let _ = writeln!(
            out,
            "{n} rule(s) in {} group(s) over {} stage(s); {recursive} recursive group(s)",
            deps.groups.len(),
            deps.stage_count()
        );
        let cycles = deps.unstratified();
        // Column widths of the edge lines: "    from  arrow  to  labels"; a long id is not padded to.
        let from_w = deps
            .edges
            .iter()
            .map(|e| self.id(e.from).chars().count())
            .filter(|&n| n <= MAX_COLUMN)
            .max()
            .unwrap_or(0);
        let to_w = deps
            .edges
            .iter()
            .map(|e| e.kind.arrow().len() + 1 + self.id(e.to).chars().count())
            .filter(|&n| n <= MAX_COLUMN)
            .max()
            .unwrap_or(0);
        for stage in 0..deps.stage_count() {
            let _ = writeln!(out, "\nstage {stage}");
            for (gi, group) in deps.stage(stage) {
                let names: Vec<&str> = group.rules.iter().map(|&r| self.id(r)).collect();
                let head = if group.recursive {
                    format!("  group {gi}, recursive: ")
                } else {
                    format!("  group {gi}: ")
                };
                wrap_list(&mut out, &head, &names);
                if let Some(c) = self.closure(group) {
                    let _ = writeln!(out, "    compiles to a path: {}", self.closure_text(&c));
                }
                if let Some((square, symmetric, r)) = self.classes(group) {
                    let r = self.prefixes.compact(&self.iri(r));
                    let _ = writeln!(
                        out,
                        "    {square} and {symmetric} run as union-find classes of {r}"
                    );
                }
                for e in deps.edges.iter().filter(|e| group.rules.contains(&e.to)) {
                    let from = self.id(e.from);
                    let to = format!("{} {}", e.kind.arrow(), self.id(e.to));
                    let labels = self.labels(e);
                    let line = format!("    {}  {}  ", padded(from, from_w), padded(&to, to_w));
                    if line.chars().count() + labels.chars().count() <= WIDTH {
                        let _ = writeln!(out, "{line}{labels}");
                    } else {
                        let _ = writeln!(out, "{}", line.trim_end());
                        let _ = writeln!(out, "        {labels}");
                    }
                }
                for c in cycles.iter().filter(|c| group.rules.contains(&c.rules[0])) {
                    let _ = writeln!(out, "    NOT STRATIFIED: {}", self.program.cycle_text(c));
                }
            }
        }
        out
    }

    fn via_json(&self, via: &Via) -> Value {
        let (scope, graph) = match via.scope {
            Scope::Default => ("default", Value::Null),
            Scope::Named(g) => ("named", Value::String(self.iri(g))),
            Scope::AnyNamed => ("any-named", Value::Null),
        };
        let (predicate, class) = match via.key {
            Key::Any => (Value::Null, Value::Null),
            Key::Predicate(p) => (Value::String(self.iri(p)), Value::Null),
            Key::Class(c) => (
                Value::String("http://www.w3.org/1999/02/22-rdf-syntax-ns#type".to_owned()),
                Value::String(self.iri(c)),
            ),
        };
        json!({ "scope": scope, "graph": graph, "predicate": predicate, "class": class })
    }

    fn json(&self) -> Value {
        let program = self.program;
        let deps = &program.deps;
        let stages: Vec<Value> = (0..deps.stage_count())
            .map(|s| {
                json!({
                    "stage": s,
                    "groups": deps.stage(s).map(|(gi, g)| json!({
                        "group": gi,
                        "recursive": g.recursive,
                        "rules": g.rules.iter().map(|&r| self.id(r)).collect::<Vec<_>>(),
                        "closure": self.closure(g).map(|c| c.describe(|id| format!("<{}>", self.iri(id)))),
                        "classes": self.classes(g).map(|(square, symmetric, r)| json!({
                            "rules": [square, symmetric],
                            "predicate": self.iri(r),
                        })),
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        let rules: Vec<Value> = program
            .rules
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let g = deps.group_of(i);
                let fp = &program.footprints[i];
                json!({
                    "id": r.id,
                    "stage": deps.groups[g].stage,
                    "group": g,
                    "negates": fp.negates(),
                    "aggregates": fp.aggregates(),
                    "reads_clock": fp.reads_clock,
                })
            })
            .collect();
        let edges: Vec<Value> = deps
            .edges
            .iter()
            .map(|e| {
                json!({
                    "from": self.id(e.from),
                    "to": self.id(e.to),
                    "kind": e.kind.name(),
                    "facts": e.via.iter().map(|v| self.via_json(v)).collect::<Vec<_>>(),
                })
            })
            .collect();
        let unstratified: Vec<Value> = deps
            .unstratified()
            .iter()
            .map(|c| {
                json!({
                    "rule": self.id(c.rules[1]),
                    "kind": c.kind.name(),
                    "cycle": c.rules.iter().map(|&r| self.id(r)).collect::<Vec<_>>(),
                    "text": self.program.cycle_text(c),
                    "facts": c.via.iter().map(|v| self.via_json(v)).collect::<Vec<_>>(),
                })
            })
            .collect();
        json!({
            "stages": stages,
            "rules": rules,
            "edges": edges,
            "unstratified": unstratified,
        })
    }

    fn dot(&self) -> String {
        let deps = &self.program.deps;
        let mut out = String::from(
            "digraph reasonctl {\n  rankdir=LR;\n  node [shape=box];\n  compound=true;\n",
        );
        for stage in 0..deps.stage_count() {
            let _ = writeln!(
                out,
                "  subgraph cluster_stage_{stage} {{\n    label=\"stage {stage}\";\n    style=rounded;"
            );
            for (gi, group) in deps.stage(stage) {
                if group.recursive {
                    let _ = writeln!(
                        out,
                        "    subgraph cluster_group_{gi} {{\n      label={};\n      style=dashed;",
                        quote(&match self.closure(group) {
                            Some(c) => format!(
                                "recursive group {gi}\ncompiles to {}",
                                self.closure_text(&c)
                            ),
                            None => format!("recursive group {gi}"),
                        })
                    );
                    for &r in &group.rules {
                        let _ = writeln!(out, "      {};", quote(self.id(r)));
                    }
                    out.push_str("    }\n");
                } else {
                    for &r in &group.rules {
                        let _ = writeln!(out, "    {};", quote(self.id(r)));
                    }
                }
            }
            out.push_str("  }\n");
        }
        for e in &deps.edges {
            let labels = self.labels(e);
            let style = match e.kind {
                EdgeKind::Positive => format!("label={}", quote(&labels)),
                EdgeKind::Negated => format!(
                    "label={}, style=dashed, color=red, fontcolor=red, arrowhead=tee",
                    quote(&format!("not {labels}"))
                ),
                EdgeKind::Aggregated => format!(
                    "label={}, style=bold, color=blue, fontcolor=blue, arrowhead=diamond",
                    quote(&format!("agg {labels}"))
                ),
            };
            let _ = writeln!(
                out,
                "  {} -> {} [{style}];",
                quote(self.id(e.from)),
                quote(self.id(e.to))
            );
        }
        out.push_str("}\n");
        out
    }
}

/// A dot string literal.
fn quote(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            '\n' => q.push_str("\\n"),
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

/// `head` followed by `items` joined with ", ", wrapped at [`WIDTH`] columns under the first item.
fn wrap_list(out: &mut String, head: &str, items: &[&str]) {
    let indent = head.chars().count();
    let mut line = head.to_owned();
    let mut col = indent;
    for (i, item) in items.iter().enumerate() {
        let piece = if i + 1 < items.len() {
            format!("{item},")
        } else {
            (*item).to_owned()
        };
        let len = piece.chars().count();
        if col > indent && col + 1 + len > WIDTH {
            out.push_str(line.trim_end());
            out.push('\n');
            line = " ".repeat(indent);
            col = indent;
        } else if col > indent {
            line.push(' ');
            col += 1;
        }
        line.push_str(&piece);
        col += len;
    }
    out.push_str(&line);
    out.push('\n');
}

/// The widest edge column that is padded to: longer ids stand as they are.
const MAX_COLUMN: usize = 40;

/// `text` followed by spaces up to `width` characters (a format width is limited to 65,535).
fn padded(text: &str, width: usize) -> String {
    let n = text.chars().count();
    format!("{text}{}", " ".repeat(width.saturating_sub(n)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compaction_takes_the_longest_namespace_and_falls_back_to_angle_brackets() {
        let p = Prefixes::new([
            ("ex".to_owned(), "http://example.org/".to_owned()),
            ("exv".to_owned(), "http://example.org/vocab#".to_owned()),
        ]);
        assert_eq!(p.compact("http://example.org/vocab#knows"), "exv:knows");
        assert_eq!(p.compact("http://example.org/a"), "ex:a");
        assert_eq!(
            p.compact("http://example.org/a/b"),
            "<http://example.org/a/b>"
        );
        assert_eq!(
            p.compact("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"),
            "rdf:type"
        );
    }

    #[test]
    fn long_lists_wrap_under_their_first_item() {
        let mut out = String::new();
        let items: Vec<String> = (0..12).map(|i| format!("rule-number-{i}")).collect();
        let refs: Vec<&str> = items.iter().map(String::as_str).collect();
        wrap_list(&mut out, "  group 3: ", &refs);
        assert!(out.lines().count() > 1);
        assert!(out.lines().all(|l| l.chars().count() <= WIDTH), "{out}");
        assert!(out.lines().skip(1).all(|l| l.starts_with("           r")));
    }
}
