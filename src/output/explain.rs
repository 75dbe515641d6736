//! This module defines the output of `reasonctl explain`: a premise tree for people (text), a node list for
//! scripts (JSON), and a Graphviz graph (dot).

use std::fmt::Write;

use hashbrown::{HashMap, HashSet};
use serde_json::{Value, json};

use crate::datalog::Program;
use crate::datalog::explain::{
    Atom, Derivation, Explanation, GraphSlot, Premise, RowsKind, Slot, Status,
};
use crate::ir::PathExpr;
use crate::store::{Quad, TermId, TermSource};

use super::deps::Prefixes;

/// `--format` of `reasonctl explain`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ExplainFormat {
    /// A premise tree (box-drawing characters; colours on a terminal).
    Text,
    /// Every explained fact as a node with its derivations (schema in docs/explain.md).
    Json,
    /// Graphviz: facts, derivations and premises.
    Dot,
}

/// What the renderers need besides the explanation.
pub struct Context<'a, T: TermSource> {
    /// The program (rule ids).
    pub program: &'a Program,
    /// Where each rule is written (`file:line:col`, or where it is stored), by rule index.
    pub locations: &'a [String],
    /// The terms.
    pub terms: &'a T,
    /// Prefixes for the text form.
    pub prefixes: &'a Prefixes,
    /// ANSI colours (text form).
    pub color: bool,
    /// Past this instant the text form stops and says where it was cut (a tree of aggregate rows can run to
    /// hundreds of megabytes).
    pub deadline: Option<std::time::Instant>,
}

/// Renders `e` in `format`, and whether the text is whole (`false`: the text form was cut at the deadline, and
/// says where).
pub fn render<T: TermSource>(
    cx: &Context<'_, T>,
    e: &Explanation,
    format: ExplainFormat,
) -> (String, bool) {
    match format {
        ExplainFormat::Text => Text::new(cx, e).render(),
        ExplainFormat::Json => {
            let mut s = serde_json::to_string_pretty(&json(cx, e)).unwrap_or_default();
            s.push('\n');
            (s, true)
        }
        ExplainFormat::Dot => (dot(cx, e), true),
    }
}

/// Why a rule is not replayed.
pub const NOT_REPEATABLE: &str =
    "its body calls RAND, UUID, STRUUID or BNODE, so a replay would not see the rows the run saw";

/// The most levels a tree line indents. Deeper, the indentation starts again at the margin behind `┊`, so that a
/// deep explanation's text grows with its lines, not with their depth squared (a 10,000-link chain explained
/// whole wrote 1.2 GB of indentation).
const MAX_LEVELS: usize = 40;

/// The prefix of a node's children: its own and `next`, or past [`MAX_LEVELS`], `┊` and `next`.
fn deeper(prefix: &str, next: &str) -> String {
    if prefix.chars().count() >= MAX_LEVELS * 3 {
        format!("┊  {next}")
    } else {
        format!("{prefix}{next}")
    }
}

impl<T: TermSource> Context<'_, T> {
    fn term(&self, id: TermId, short: bool) -> String {
        let full = self.terms.display(id);
        if !short {
            return full;
        }
        match self.terms.to_oxrdf(id) {
            Some(oxrdf::Term::NamedNode(n)) => self.prefixes.compact(n.as_str()),
            Some(oxrdf::Term::Literal(l)) => {
                let v = l.value();
                // Turtle's short forms, only where they read back as the same term.
                let short_form =
                    l.language().is_none() && super::rdf::bare_literal(v, l.datatype().as_str());
                if short_form {
                    v.to_owned()
                } else if l.language().is_some()
                    || l.datatype().as_str() == "http://www.w3.org/2001/XMLSchema#string"
                {
                    full
                } else {
                    let lexical = &full[..full.rfind("^^").unwrap_or(full.len())];
                    format!(
                        "{lexical}^^{}",
                        self.prefixes.compact(l.datatype().as_str())
                    )
                }
            }
            Some(oxrdf::Term::Triple(t)) => {
                // Parts by id, so they are shortened too.
                match self.terms.term(id) {
                    crate::store::TermRef::Triple([s, p, o]) => format!(
                        "<<( {} {} {} )>>",
                        self.term(s, true),
                        self.term(p, true),
                        self.term(o, true)
                    ),
                    _ => oxrdf::Term::Triple(t).to_string(),
                }
            }
            _ => full,
        }
    }

    /// A slot as text (`short`: prefixed names and Turtle's literal forms).
    pub fn slot(&self, s: &Slot, short: bool) -> String {
        match s {
            Slot::Term(id) => self.term(*id, short),
            Slot::Computed(text) => text.clone(),
            Slot::Var(v) => format!("?{v}"),
            Slot::Triple(parts) => format!(
                "<<( {} {} {} )>>",
                self.slot(&parts[0], short),
                self.slot(&parts[1], short),
                self.slot(&parts[2], short)
            ),
        }
    }

    fn graph(&self, g: &GraphSlot, short: bool) -> Option<String> {
        match g {
            GraphSlot::Default => None,
            GraphSlot::Named(id) => Some(self.term(*id, short)),
            GraphSlot::Var(v) => Some(format!("?{v}")),
        }
    }

    fn quad(&self, [g, s, p, o]: Quad, short: bool) -> String {
        let mut out = format!(
            "{} {} {} .",
            self.term(s, short),
            self.term(p, short),
            self.term(o, short)
        );
        if g != TermId::DEFAULT_GRAPH {
            let _ = write!(out, "  in graph {}", self.term(g, short));
        }
        out
    }

    /// A pattern instantiated by a row, as text (`s p o .`, with its graph).
    pub fn atom(&self, a: &Atom, short: bool) -> String {
        let mut out = format!(
            "{} {} {} .",
            self.slot(&a.terms[0], short),
            self.slot(&a.terms[1], short),
            self.slot(&a.terms[2], short)
        );
        if let Some(g) = self.graph(&a.graph, short) {
            let _ = write!(out, "  in graph {g}");
        }
        out
    }

    /// A property path, as SPARQL writes it.
    pub fn path(&self, p: &PathExpr, short: bool) -> String {
        match p {
            PathExpr::Link(id) => self.term(*id, short),
            PathExpr::Reverse(inner) => format!("^{}", self.path_atom(inner, short)),
            PathExpr::Sequence(a, b) => {
                format!("{}/{}", self.path_atom(a, short), self.path_atom(b, short))
            }
            PathExpr::Alternative(a, b) => {
                format!("{}|{}", self.path_atom(a, short), self.path_atom(b, short))
            }
            PathExpr::ZeroOrMore(inner) => format!("{}*", self.path_atom(inner, short)),
            PathExpr::OneOrMore(inner) => format!("{}+", self.path_atom(inner, short)),
            PathExpr::ZeroOrOne(inner) => format!("{}?", self.path_atom(inner, short)),
            PathExpr::Negated(set) => format!(
                "!({})",
                set.iter()
                    .map(|id| self.term(*id, short))
                    .collect::<Vec<_>>()
                    .join("|")
            ),
        }
    }

    fn path_atom(&self, p: &PathExpr, short: bool) -> String {
        match p {
            PathExpr::Link(_) | PathExpr::Negated(_) => self.path(p, short),
            _ => format!("({})", self.path(p, short)),
        }
    }

    /// `no { … } in the default graph`, `no { … } in graph g`, or with mixed graphs `no { … GRAPH g { … } }`.
    fn absence(&self, patterns: &[Premise], filters: &[String]) -> String {
        let graph_of = |p: &Premise| match p {
            Premise::Fact { atom, .. } => atom.graph.clone(),
            Premise::Path { graph, .. } => graph.clone(),
            _ => GraphSlot::Default,
        };
        let text = |p: &Premise| match p {
            Premise::Fact { atom, .. } => {
                let mut a = atom.clone();
                a.graph = GraphSlot::Default;
                self.atom(&a, true)
            }
            Premise::Path {
                subject,
                path,
                object,
                ..
            } => self.path_text(subject, path, object, &GraphSlot::Default, true),
            _ => String::new(),
        };
        let conditions = filters
            .iter()
            .map(|f| format!("FILTER({})", unwrap_parens(f)));
        let first = patterns.first().map(graph_of).unwrap_or(GraphSlot::Default);
        if patterns.iter().all(|p| graph_of(p) == first) {
            let body: Vec<String> = patterns.iter().map(text).chain(conditions).collect();
            let scope = self.graph(&first, true).map_or_else(
                || "in the default graph".to_owned(),
                |g| format!("in graph {g}"),
            );
            return format!("no {{ {} }} {scope}", body.join(" "));
        }
        let body: Vec<String> = patterns
            .iter()
            .map(|p| match self.graph(&graph_of(p), true) {
                Some(g) => format!("GRAPH {g} {{ {} }}", text(p)),
                None => text(p),
            })
            .chain(conditions)
            .collect();
        format!("no {{ {} }}", body.join(" "))
    }

    fn path_text(
        &self,
        subject: &Slot,
        path: &PathExpr,
        object: &Slot,
        graph: &GraphSlot,
        short: bool,
    ) -> String {
        let mut out = format!(
            "{} {} {}",
            self.slot(subject, short),
            self.path(path, short),
            self.slot(object, short)
        );
        if let Some(g) = self.graph(graph, short) {
            let _ = write!(out, "  in graph {g}");
        }
        out
    }
}

/// The text tree.
struct Text<'c, 'a, T: TermSource> {
    cx: &'c Context<'a, T>,
    e: &'c Explanation,
    out: String,
    /// Label of each node printed (or referenced) so far that premises refer to.
    labels: HashMap<usize, usize>,
    /// Nodes whose derivations are printed.
    printed: HashSet<usize>,
    /// Nodes whose derivations are being printed (a premise referring to one is a cycle).
    open: Vec<usize>,
    /// Nodes some premise refers to (they carry a label).
    referenced: HashSet<usize>,
    /// The deadline passed: nothing more is written.
    cut: bool,
    /// The length of `out` at which the deadline is looked at next.
    next_check: usize,
}

impl<'c, 'a, T: TermSource> Text<'c, 'a, T> {
    fn new(cx: &'c Context<'a, T>, e: &'c Explanation) -> Self {
        // Nodes shown in more than one place (a target also referred to, a shared premise, a cycle's start)
        // carry a label the other places refer to.
        let mut count: HashMap<usize, usize> = HashMap::new();
        fn walk(p: &Premise, count: &mut HashMap<usize, usize>) {
            match p {
                Premise::Fact { node: Some(n), .. } => *count.entry(*n).or_default() += 1,
                Premise::Rows { rows, .. } => rows.iter().flatten().for_each(|p| walk(p, count)),
                _ => {}
            }
        }
        for &t in &e.targets {
            *count.entry(t).or_default() += 1;
        }
        for n in &e.nodes {
            for d in n.derivations.iter().flatten() {
                d.premises.iter().for_each(|p| walk(p, &mut count));
            }
        }
        let referenced = count
            .into_iter()
            .filter(|(_, c)| *c > 1)
            .map(|(n, _)| n)
            .collect();
        Self {
            cx,
            e,
            out: String::new(),
            labels: HashMap::new(),
            printed: HashSet::new(),
            open: Vec::new(),
            referenced,
            cut: false,
            next_check: 0,
        }
    }

    /// Whether the deadline has passed (looked at every 64 KiB of text).
    fn cut(&mut self) -> bool {
        if !self.cut && self.out.len() >= self.next_check {
            self.next_check = self.out.len() + (1 << 16);
            self.cut = self
                .cx
                .deadline
                .is_some_and(|d| std::time::Instant::now() >= d);
        }
        self.cut
    }

    fn paint(&self, text: &str, code: &str) -> String {
        if self.cx.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    fn status(&self, s: Status) -> String {
        let (word, code) = match s {
            Status::Asserted => ("asserted", "32"),
            Status::Derived => ("derived ", "36"),
            Status::Missing => ("missing ", "31"),
        };
        self.paint(word, code)
    }

    fn render(mut self) -> (String, bool) {
        for (i, &n) in self.e.targets.iter().enumerate() {
            if self.cut() {
                break;
            }
            if i > 0 {
                self.out.push('\n');
            }
            let node = &self.e.nodes[n];
            let fact = self.cx.quad(node.fact, true);
            match node.status {
                Status::Asserted => {
                    let _ = writeln!(self.out, "{fact}\n└─ asserted in the data, not derived");
                }
                _ => {
                    let label = self.label(n);
                    let _ = writeln!(
                        self.out,
                        "{}{}",
                        self.paint(&fact, "1"),
                        self.paint(&label, "2")
                    );
                    if self.printed.contains(&n) {
                        let _ = writeln!(self.out, "└─ explained above");
                    } else {
                        self.derivations(n, "");
                    }
                }
            }
        }
        if !self.e.not_replayed.is_empty() {
            self.out.push('\n');
            for &r in &self.e.not_replayed {
                let _ = writeln!(
                    self.out,
                    "note: rule {} could also produce these facts but was not replayed: {NOT_REPEATABLE}",
                    self.cx.program.rules[r].id
                );
            }
        }
        if self.e.incomplete {
            let _ = writeln!(
                self.out,
                "\nnote: explanation incomplete: the --timeout deadline passed before every rule was replayed"
            );
        }
        if self.cut {
            let _ = writeln!(
                self.out,
                "\nnote: the text is cut here: the --timeout deadline passed while it was written (--format json lists every node once)"
            );
        }
        if self.e.unexplained > 0 {
            let _ = writeln!(
                self.out,
                "note: {} more matching fact(s) not shown: the deadline passed before they were reached",
                self.e.unexplained
            );
        }
        (self.out, !self.cut)
    }

    /// `  [n]` for a node premises refer to, else nothing.
    fn label(&mut self, n: usize) -> String {
        if !self.referenced.contains(&n) {
            return String::new();
        }
        let next = self.labels.len() + 1;
        let l = *self.labels.entry(n).or_insert(next);
        format!("  [{l}]")
    }

    /// The derivations of node `n` under `prefix`.
    fn derivations(&mut self, n: usize, prefix: &str) {
        if self.cut() {
            return;
        }
        let node = &self.e.nodes[n];
        self.printed.insert(n);
        let Some(ds) = &node.derivations else { return };
        if ds.is_empty() {
            let _ = writeln!(
                self.out,
                "{prefix}└─ no derivation found by replaying the rules (see the notes below)"
            );
            return;
        }
        if !node.complete {
            let _ = writeln!(
                self.out,
                "{prefix}├─ (incomplete: the deadline cut its replays; it may have more derivations)"
            );
        }
        self.open.push(n);
        for (i, d) in ds.iter().enumerate() {
            let last = i + 1 == ds.len();
            self.derivation(d, prefix, last);
        }
        self.open.pop();
    }

    fn derivation(&mut self, d: &Derivation, prefix: &str, last: bool) {
        if self.cut() {
            return;
        }
        let rule = &self.cx.program.rules[d.rule];
        let (branch, next) = if last {
            ("└─ ", "   ")
        } else {
            ("├─ ", "│  ")
        };
        let _ = writeln!(
            self.out,
            "{prefix}{branch}rule {}  {}",
            self.paint(&rule.id, "1;35"),
            self.paint(&format!("({})", self.cx.locations[d.rule]), "2")
        );
        let inner = deeper(prefix, next);
        let mut lines: Vec<&Premise> = d.premises.iter().collect();
        if lines.is_empty() {
            let _ = writeln!(
                self.out,
                "{inner}└─ (no premises: the body matched without reading facts)"
            );
        }
        if d.unions_cut {
            let _ = writeln!(
                self.out,
                "{inner}├─ (more than 64 choices of UNION branches: only premises outside the unions are listed)"
            );
        }
        let count = lines.len();
        for (i, p) in lines.drain(..).enumerate() {
            self.premise(p, &inner, i + 1 == count);
        }
    }

    fn premise(&mut self, p: &Premise, prefix: &str, last: bool) {
        if self.cut() {
            return;
        }
        let (branch, next) = if last {
            ("└─ ", "   ")
        } else {
            ("├─ ", "│  ")
        };
        let inner = deeper(prefix, next);
        match p {
            Premise::Fact {
                atom,
                status,
                node,
                cycle,
            } => {
                let text = self.cx.atom(atom, true);
                let mut line = format!("{prefix}{branch}{}  {text}", self.status(*status));
                match node {
                    Some(n) if *cycle || self.open.contains(n) => {
                        let l = self.label(*n);
                        let _ = write!(
                            line,
                            "  {}",
                            self.paint(&format!("(cycle: see {})", l.trim()), "33")
                        );
                        let _ = writeln!(self.out, "{line}");
                    }
                    Some(n) if self.printed.contains(n) => {
                        let l = self.label(*n);
                        let _ = write!(
                            line,
                            "  {}",
                            self.paint(
                                &format!("(explained above {})", l.trim())
                                    .trim_end()
                                    .replace(" )", ")"),
                                "2"
                            )
                        );
                        let _ = writeln!(self.out, "{line}");
                    }
                    Some(n) if self.e.nodes[*n].derivations.is_some() => {
                        let l = self.label(*n);
                        let _ = writeln!(self.out, "{line}{}", self.paint(&l, "2"));
                        self.derivations(*n, &inner);
                    }
                    _ => {
                        let _ = writeln!(self.out, "{line}");
                    }
                }
            }
            Premise::Path {
                subject,
                path,
                object,
                graph,
            } => {
                let _ = writeln!(
                    self.out,
                    "{prefix}{branch}{}  {}",
                    self.paint("path    ", "34"),
                    self.cx.path_text(subject, path, object, graph, true)
                );
            }
            Premise::Absence { patterns, filters } => {
                let _ = writeln!(
                    self.out,
                    "{prefix}{branch}{}  {}",
                    self.paint("absent  ", "33"),
                    self.cx.absence(patterns, filters)
                );
            }
            Premise::Rows {
                kind,
                key,
                rows,
                total,
            } => {
                let key_text = if key.is_empty() {
                    String::new()
                } else {
                    format!(
                        " {}",
                        key.iter()
                            .map(|(v, s)| format!("?{v} = {}", self.cx.slot(s, true)))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                let what = match kind {
                    RowsKind::Grouped => "row(s) in the group",
                    RowsKind::Subquery => "row(s) of the subquery",
                    RowsKind::Exists => "match(es) of EXISTS",
                };
                let shown = if rows.len() < *total {
                    format!(", the first {} shown", rows.len())
                } else {
                    String::new()
                };
                let _ = writeln!(
                    self.out,
                    "{prefix}{branch}{}  {total} {what}{key_text}{shown}",
                    self.paint(&format!("{:<8}", kind.name()), "34")
                );
                for (i, row) in rows.iter().enumerate() {
                    if self.cut() {
                        return;
                    }
                    let last_row = i + 1 == rows.len();
                    let (b, n) = if last_row {
                        ("└─ ", "   ")
                    } else {
                        ("├─ ", "│  ")
                    };
                    let _ = writeln!(self.out, "{inner}{b}row {}", i + 1);
                    let row_prefix = format!("{inner}{n}");
                    for (j, p) in row.iter().enumerate() {
                        self.premise(p, &row_prefix, j + 1 == row.len());
                    }
                }
            }
        }
    }
}

fn fact_json<T: TermSource>(cx: &Context<'_, T>, [g, s, p, o]: Quad) -> Value {
    json!({
        "subject": cx.term(s, false),
        "predicate": cx.term(p, false),
        "object": cx.term(o, false),
        "graph": (g != TermId::DEFAULT_GRAPH).then(|| cx.term(g, false)),
    })
}

fn atom_json<T: TermSource>(cx: &Context<'_, T>, a: &Atom) -> Value {
    json!({
        "subject": cx.slot(&a.terms[0], false),
        "predicate": cx.slot(&a.terms[1], false),
        "object": cx.slot(&a.terms[2], false),
        "graph": cx.graph(&a.graph, false),
    })
}

fn premise_json<T: TermSource>(cx: &Context<'_, T>, p: &Premise) -> Value {
    match p {
        Premise::Fact {
            atom,
            status,
            node,
            cycle,
        } => json!({
            "kind": "fact",
            "status": status.name(),
            "fact": atom_json(cx, atom),
            "node": node,
            "cycle": cycle,
        }),
        Premise::Path {
            subject,
            path,
            object,
            graph,
        } => json!({
            "kind": "path",
            "subject": cx.slot(subject, false),
            "path": cx.path(path, false),
            "object": cx.slot(object, false),
            "graph": cx.graph(graph, false),
        }),
        Premise::Absence { patterns, filters } => json!({
            "kind": "absence",
            "filters": filters,
            "patterns": patterns.iter().map(|p| match p {
                Premise::Fact { atom, .. } => json!({"kind": "fact", "fact": atom_json(cx, atom)}),
                other => premise_json(cx, other),
            }).collect::<Vec<_>>(),
        }),
        Premise::Rows {
            kind,
            key,
            rows,
            total,
        } => {
            let mut k = serde_json::Map::new();
            for (v, s) in key {
                k.insert(v.clone(), Value::String(cx.slot(s, false)));
            }
            json!({
                "kind": kind.name(),
                "key": k,
                "total": total,
                "rows": rows.iter().map(|r| r.iter().map(|p| premise_json(cx, p)).collect::<Vec<_>>()).collect::<Vec<_>>(),
            })
        }
    }
}

fn json<T: TermSource>(cx: &Context<'_, T>, e: &Explanation) -> Value {
    json!({
        "complete": !e.incomplete,
        "unexplained": e.unexplained,
        "targets": e.targets,
        "nodes": e.nodes.iter().enumerate().map(|(i, n)| json!({
            "id": i,
            "fact": fact_json(cx, n.fact),
            "status": n.status.name(),
            "explained": n.derivations.is_some(),
            "complete": n.complete,
            "derivations": n.derivations.iter().flatten().map(|d| json!({
                "rule": cx.program.rules[d.rule].id,
                "source": cx.locations[d.rule],
                "unions_cut": d.unions_cut,
                "premises": d.premises.iter().map(|p| premise_json(cx, p)).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "not_replayed": e.not_replayed.iter().map(|&r| json!({
            "rule": cx.program.rules[r].id,
            "reason": NOT_REPEATABLE,
        })).collect::<Vec<_>>(),
    })
}

/// `(a = b)` without its outer parentheses, when they enclose the whole text.
fn unwrap_parens(text: &str) -> &str {
    let Some(inner) = text.strip_prefix('(').and_then(|t| t.strip_suffix(')')) else {
        return text;
    };
    let mut depth = 0i32;
    for c in inner.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if depth < 0 {
            return text;
        }
    }
    if depth == 0 { inner } else { text }
}

fn dot_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

fn dot<T: TermSource>(cx: &Context<'_, T>, e: &Explanation) -> String {
    let mut out =
        String::from("digraph explain {\n  rankdir=LR;\n  node [fontname=\"monospace\"];\n");
    for (i, n) in e.nodes.iter().enumerate() {
        let style = match n.status {
            Status::Asserted => "shape=box, color=darkgreen",
            Status::Derived => "shape=box, color=steelblue",
            Status::Missing => "shape=box, color=red",
        };
        let _ = writeln!(
            out,
            "  f{i} [label=\"{}\", {style}];",
            dot_escape(&cx.quad(n.fact, true))
        );
    }
    let mut extra = 0usize;
    for (i, n) in e.nodes.iter().enumerate() {
        for (j, d) in n.derivations.iter().flatten().enumerate() {
            let id = format!("d{i}_{j}");
            let _ = writeln!(
                out,
                "  {id} [label=\"{}\", shape=ellipse, style=filled, fillcolor=lavender];\n  {id} -> f{i};",
                dot_escape(&cx.program.rules[d.rule].id)
            );
            for p in &d.premises {
                dot_premise(cx, &mut out, &id, p, &mut extra);
            }
        }
    }
    out.push_str("}\n");
    out
}

fn dot_premise<T: TermSource>(
    cx: &Context<'_, T>,
    out: &mut String,
    to: &str,
    p: &Premise,
    extra: &mut usize,
) {
    *extra += 1;
    let id = format!("p{extra}");
    match p {
        Premise::Fact {
            atom,
            status,
            node,
            cycle,
        } => {
            if let Some(n) = node {
                let style = if *cycle {
                    " [style=dashed, label=\"cycle\"]"
                } else {
                    ""
                };
                let _ = writeln!(out, "  f{n} -> {to}{style};");
            } else {
                let color = match status {
                    Status::Asserted => "darkgreen",
                    Status::Derived => "steelblue",
                    Status::Missing => "red",
                };
                let _ = writeln!(
                    out,
                    "  {id} [label=\"{}\", shape=box, color={color}];\n  {id} -> {to};",
                    dot_escape(&cx.atom(atom, true))
                );
            }
        }
        Premise::Path {
            subject,
            path,
            object,
            graph,
        } => {
            let _ = writeln!(
                out,
                "  {id} [label=\"{}\", shape=box, style=rounded, color=blue];\n  {id} -> {to};",
                dot_escape(&cx.path_text(subject, path, object, graph, true))
            );
        }
        Premise::Absence { patterns, filters } => {
            let _ = writeln!(
                out,
                "  {id} [label=\"{}\", shape=box, style=dashed, color=orange];\n  {id} -> {to} [style=dashed, label=\"not\"];",
                dot_escape(&cx.absence(patterns, filters))
            );
        }
        Premise::Rows {
            kind, rows, total, ..
        } => {
            let _ = writeln!(
                out,
                "  {id} [label=\"{} ({total} rows)\", shape=folder];\n  {id} -> {to};",
                kind.name()
            );
            for row in rows {
                for p in row {
                    dot_premise(cx, out, &id, p, extra);
                }
            }
        }
    }
}
