//! This module defines the lint warnings: rules that run but are very likely wrong — a body that can never match
//! the data, a quoted string compared with a variable that is always an IRI, a head that restates its body.

use crate::datalog::Program;
use crate::ir::lower::TemplateTerm;
use crate::ir::{CmpOp, Expr, GraphTerm, Op, PatternTerm, TriplePattern, VarId};
use crate::rules::Rule;
use crate::store::{LiteralKind, Store, TermId, TermRef, TermSource, well_known as wk};

use super::Target;
use super::codes;

/// A warning about one rule.
#[derive(Clone, Debug)]
pub struct Warning {
    /// Its code.
    pub code: &'static str,
    /// The rule id.
    pub rule: String,
    /// What is wrong.
    pub message: String,
    /// The rewrite.
    pub help: String,
    /// The label on the construct.
    pub label: String,
    /// Where to point, tried in order.
    pub locate: Vec<Target>,
}

/// Every warning of the program; with `data`, also the bodies naming terms the data lacks.
pub fn check(program: &Program, store: &Store, data: bool) -> Vec<Warning> {
    let mut out = Vec::new();
    for rule in &program.rules {
        let atoms = top_atoms(&rule.body);
        if data {
            never_matches(rule, &atoms, program, store, &mut out);
        }
        string_vs_iri(rule, &atoms, store, &mut out);
        restates(rule, &atoms, store, &mut out);
    }
    minting_cycles(program, &mut out);
    out
}

/// The minting-cycle warnings alone (they need no data): `materialize` prints them before it runs.
pub fn minting(program: &Program) -> Vec<Warning> {
    let mut out = Vec::new();
    minting_cycles(program, &mut out);
    out
}

/// Every triple pattern of a body (in joins, unions, filters' inputs and subqueries; not inside EXISTS).
fn all_atoms(body: &Op) -> Vec<&TriplePattern> {
    let mut out = Vec::new();
    let mut stack = vec![body];
    while let Some(op) = stack.pop() {
        if let Op::Pattern(tp) = op {
            out.push(tp);
        }
        stack.extend(op.children());
    }
    out
}

// tainted(p, side) :- head(r, h), h[side] is a minted reifier, h[1] = p.
// tainted(p2, side2) :- head(r, h), h[side2] = ?v, h[1] = p2, body(r, a), a[side] = ?v, a[1] = p, tainted(p, side).
// minting_cycle(r) :- recursive(r), head(r, h), h mints over an edge holding ?v, tainted ?v.
/// Rules of recursive groups that mint reifiers over edges holding a variable that can be a minted reifier
/// (weak acyclicity, simplified to predicate positions: a `None` predicate is any).
fn minting_cycles(program: &Program, out: &mut Vec<Warning>) {
    use hashbrown::HashSet;
    let side_terms = |t: &TemplateTerm| -> Option<VarId> {
        match t {
            TemplateTerm::Var(v) => Some(*v),
            _ => None,
        }
    };
    let predicate_of = |t: &TemplateTerm| match t {
        TemplateTerm::Const(p) => Some(*p),
        _ => None,
    };
    // A position: (predicate, side, and for the subject of rdf:reifies the reified edge's predicate); `None` is
    // any. A reifier written as `r rdf:reifies <<( s P o )>>` taints only patterns reading reifiers of P edges.
    type Position = (Option<TermId>, usize, Option<TermId>);
    let head_position = |h: &crate::rules::Head, side: usize| -> Position {
        let p = predicate_of(&h.terms[1]);
        let reified = match (&p, side, &h.terms[2]) {
            (Some(wk::RDF_REIFIES), 0, TemplateTerm::Triple(e)) => predicate_of(&e[1]),
            _ => None,
        };
        (p, side, reified)
    };
    let mut tainted: HashSet<Position> = HashSet::new();
    for rule in &program.rules {
        for h in &rule.heads {
            for side in [0, 2] {
                if matches!(h.terms[side], TemplateTerm::Reifier(_)) {
                    tainted.insert(head_position(h, side));
                }
            }
        }
    }
    if tainted.is_empty() {
        return;
    }
    let is_tainted = |tainted: &HashSet<Position>, tp: &TriplePattern, side: usize| {
        let reified = match (&tp.terms[1], side, &tp.terms[2]) {
            (PatternTerm::Const(wk::RDF_REIFIES), 0, PatternTerm::Triple(e)) => match e[1] {
                PatternTerm::Const(p) => Some(p),
                _ => None,
            },
            _ => None,
        };
        tainted.iter().any(|&(p, s, r)| {
            s == side
                && match (&tp.terms[1], p) {
                    (PatternTerm::Const(q), Some(p)) => *q == p,
                    _ => true,
                }
                && match (reified, r) {
                    (Some(q), Some(r)) => q == r,
                    _ => true,
                }
        })
    };
    // The variables of each rule that can be bound to a minted reifier, to a fixpoint.
    let mut vars: Vec<HashSet<VarId>> = vec![HashSet::new(); program.rules.len()];
    loop {
        let mut grew = false;
        for (r, rule) in program.rules.iter().enumerate() {
            for tp in all_atoms(&rule.body) {
                for side in [0, 2] {
                    if let PatternTerm::Var(v) = tp.terms[side]
                        && is_tainted(&tainted, tp, side)
                    {
                        grew |= vars[r].insert(v);
                    }
                }
            }
            for h in &rule.heads {
                for side in [0, 2] {
                    if let Some(v) = side_terms(&h.terms[side])
                        && vars[r].contains(&v)
                    {
                        grew |= tainted.insert(head_position(h, side));
                    }
                }
            }
        }
        if !grew {
            break;
        }
    }
    for (r, rule) in program.rules.iter().enumerate() {
        if !program.deps.groups[program.deps.group_of(r)].recursive {
            continue;
        }
        let culprit = rule.heads.iter().find_map(|h| {
            h.terms.iter().find_map(|t| match t {
                TemplateTerm::Reifier(m) => m
                    .edge
                    .iter()
                    .filter_map(side_terms)
                    .find(|v| vars[r].contains(v)),
                _ => None,
            })
        });
        if let Some(v) = culprit {
            let name = rule.vars.name(v).to_owned();
            out.push(Warning {
                code: codes::MINTING_CYCLE,
                rule: rule.id.clone(),
                message: format!(
                    "rule {} mints reifiers for edges holding ?{name}, which can itself be a reifier its recursive group mints: each pass can mint a reifier of a reifier, and the run need not end",
                    rule.id
                ),
                help: "build the annotated edge from terms of the data, not from reifiers; or bound the run with --max-facts or --timeout".to_owned(),
                label: "can be a minted reifier".to_owned(),
                locate: vec![Target::Var(name), Target::Head],
            });
        }
    }
}

/// The triple patterns every match of the body satisfies: the body's top-level join operands (through FILTER
/// and BIND), not inside UNION, EXISTS or subqueries.
fn top_atoms(body: &Op) -> Vec<&TriplePattern> {
    let mut out = Vec::new();
    let mut stack = vec![body];
    while let Some(op) = stack.pop() {
        match op {
            Op::Pattern(tp) => out.push(tp),
            Op::Join(ops) => stack.extend(ops.iter().rev()),
            Op::Filter { input, .. } | Op::Extend { input, .. } => stack.push(input),
            _ => {}
        }
    }
    out
}

const POSITIONS: [&str; 3] = ["subject", "predicate", "object"];

/// Whether some asserted fact has `id` at `pos` (in any graph).
fn in_data(store: &Store, pos: usize, id: TermId) -> bool {
    let mut pattern = [None, None, None];
    pattern[pos] = Some(id);
    store
        .quads
        .graphs()
        .any(|(_, index)| !index.range(&pattern).is_empty())
}

/// Whether some head of the program may write `id` at `pos`.
fn derivable(program: &Program, pos: usize, id: TermId) -> bool {
    program
        .rules
        .iter()
        .flat_map(|r| &r.heads)
        .any(|h| match &h.terms[pos] {
            TemplateTerm::Const(c) => *c == id,
            // A minted reifier is an IRI no one can know before the run.
            TemplateTerm::Var(_) | TemplateTerm::Reifier(_) => true,
            _ => false,
        })
}

fn iri(store: &Store, id: TermId) -> Option<String> {
    match store.dict.term(id) {
        TermRef::Iri(i) => Some(i.to_string()),
        _ => None,
    }
}

/// How an IRI may be written in a rule: in full, or with any prefix before its local name.
fn spellings(full: &str) -> Vec<String> {
    let local = full
        .rsplit(['/', '#'])
        .next()
        .filter(|l| !l.is_empty())
        .unwrap_or(full);
    vec![
        format!("<{full}>"),
        full.to_owned(),
        format!(":{local}"),
        local.to_owned(),
    ]
}

// never_matches(r) :- atom(r, pos, c), not fact(pos, c), not head(pos, c).
fn never_matches(
    rule: &Rule,
    atoms: &[&TriplePattern],
    program: &Program,
    store: &Store,
    out: &mut Vec<Warning>,
) {
    for tp in atoms {
        for (pos, term) in tp.terms.iter().enumerate() {
            let PatternTerm::Const(id) = term else {
                continue;
            };
            let Some(full) = iri(store, *id) else {
                continue;
            };
            if in_data(store, pos, *id) || derivable(program, pos, *id) {
                continue;
            }
            let similar = if pos == 1 {
                similar_predicate(store, &full)
            } else {
                None
            };
            let help = match &similar {
                Some(s) => format!("did you mean <{s}>? The data uses it as a predicate"),
                None => {
                    format!("check <{full}> for a typo, or load the data that holds such facts")
                }
            };
            out.push(Warning {
                code: codes::NEVER_MATCHES,
                rule: rule.id.clone(),
                message: format!(
                    "rule {} can never match: no fact has <{full}> as its {}, and no rule derives one",
                    rule.id, POSITIONS[pos]
                ),
                help,
                label: "absent from the data".to_owned(),
                locate: vec![Target::Term(spellings(&full))],
            });
            return;
        }
    }
}

/// A predicate of the data whose IRI is within two edits of `iri`, or has its local name in another case.
fn similar_predicate(store: &Store, iri: &str) -> Option<String> {
    let mut best: Option<(usize, String)> = None;
    for (_, index) in store.quads.graphs() {
        for p in index.predicates() {
            let Some(candidate) = self::iri(store, p) else {
                continue;
            };
            let d = bounded_distance(iri, &candidate, 2);
            if d <= 2
                && best
                    .as_ref()
                    .is_none_or(|(bd, b)| (d, &candidate) < (*bd, b))
            {
                best = Some((d, candidate));
            }
        }
    }
    best.map(|(_, s)| s)
}

/// The edit distance of two strings, or `limit + 1` once it exceeds `limit`.
fn bounded_distance(a: &str, b: &str, limit: usize) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len().abs_diff(b.len()) > limit {
        return limit + 1;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(!ca.eq_ignore_ascii_case(cb));
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        if cur.iter().min().is_some_and(|m| *m > limit) {
            return limit + 1;
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Variables that are never literals: subjects and predicates of required patterns, and graph variables.
fn never_literal(atoms: &[&TriplePattern], v: VarId) -> Option<&'static str> {
    atoms.iter().find_map(|tp| {
        if tp.terms[1] == PatternTerm::Var(v) {
            Some("a predicate, always an IRI")
        } else if tp.terms[0] == PatternTerm::Var(v) {
            Some("a subject, never a literal")
        } else if tp.graph == GraphTerm::Var(v) {
            Some("a graph name, always an IRI")
        } else {
            None
        }
    })
}

// string_vs_iri(r) :- filter(r, cmp(?v, "s")), never_literal(?v).
fn string_vs_iri(rule: &Rule, atoms: &[&TriplePattern], store: &Store, out: &mut Vec<Warning>) {
    let mut filters: Vec<&Expr> = Vec::new();
    let mut stack = vec![&rule.body];
    while let Some(op) = stack.pop() {
        if let Op::Filter { expr, .. } = op {
            filters.push(expr);
        }
        stack.extend(op.children());
    }
    for f in filters {
        let mut found: Option<(VarId, TermId, bool)> = None;
        f.visit(&mut |e| {
            let (op, a, b) = match e {
                Expr::Compare(op @ (CmpOp::Eq | CmpOp::Ne), a, b) => (*op, a, b),
                Expr::SameTerm(a, b) => (CmpOp::Eq, a, b),
                _ => return,
            };
            let pair = match (a.as_ref(), b.as_ref()) {
                (Expr::Var(v), Expr::Const(c)) | (Expr::Const(c), Expr::Var(v)) => (*v, *c),
                _ => return,
            };
            let is_string = matches!(
                store.dict.term(pair.1),
                TermRef::Literal {
                    kind: LiteralKind::Simple,
                    ..
                }
            ) || matches!(
                store.dict.term(pair.1),
                TermRef::Literal { kind: LiteralKind::Typed(dt), .. } if dt == wk::XSD_STRING
            );
            if is_string && found.is_none() {
                found = Some((pair.0, pair.1, op == CmpOp::Ne));
            }
        });
        let Some((v, c, ne)) = found else { continue };
        let Some(why) = never_literal(atoms, v) else {
            continue;
        };
        let name = rule.vars.name(v);
        let lexical = match store.dict.term(c) {
            TermRef::Literal { lexical, .. } => lexical.to_owned(),
            _ => continue,
        };
        let outcome = if ne { "always true" } else { "never true" };
        out.push(Warning {
            code: codes::STRING_COMPARED_WITH_IRI,
            rule: rule.id.clone(),
            message: format!(
                "rule {} compares ?{name} with the string \"{lexical}\", but ?{name} is {why}: the comparison is {outcome}",
                rule.id
            ),
            help: format!(
                "to compare with an IRI, write it unquoted: {lexical} with a declared prefix (JSON-LD and SPARQL) or <…> in full"
            ),
            label: "a string, not an IRI".to_owned(),
            locate: vec![
                Target::Term(vec![format!("\"{lexical}\""), lexical.clone()]),
                Target::Var(name.to_owned()),
            ],
        });
    }
}

// restates(r) :- head(r, h), atom(r, a), h = a, not reified(r, h).
fn restates(rule: &Rule, atoms: &[&TriplePattern], store: &Store, out: &mut Vec<Warning>) {
    let same = |h: &TemplateTerm, p: &PatternTerm| match (h, p) {
        (TemplateTerm::Const(a), PatternTerm::Const(b)) => a == b,
        (TemplateTerm::Var(a), PatternTerm::Var(b)) => a == b,
        _ => false,
    };
    // An annotated head's edge is written with the reifier another head of the rule makes for it
    // (`?r rdf:reifies <<( s p o )>>`): restating the body, it still derives the annotation.
    let reified = |h: &crate::rules::Head| {
        rule.heads.iter().any(|other| {
            other.graph == h.graph
                && matches!(&other.terms[2], TemplateTerm::Triple(t) if **t == h.terms)
        })
    };
    for head in (rule.heads.iter()).filter(|h| h.graph.is_none() && !reified(h)) {
        let restated = atoms.iter().any(|tp| {
            tp.graph == GraphTerm::Default && (0..3).all(|i| same(&head.terms[i], &tp.terms[i]))
        });
        if !restated {
            continue;
        }
        let show = |t: &TemplateTerm| match t {
            TemplateTerm::Var(v) => format!("?{}", rule.vars.name(*v)),
            TemplateTerm::Const(c) => store.dict.display(*c),
            _ => "…".to_owned(),
        };
        out.push(Warning {
            code: codes::HEAD_RESTATES_BODY,
            rule: rule.id.clone(),
            message: format!(
                "rule {}: the head {{ {} {} {} }} restates a pattern of its own body, so it derives nothing new",
                rule.id,
                show(&head.terms[0]),
                show(&head.terms[1]),
                show(&head.terms[2])
            ),
            help: "derive a different triple (another predicate, or the variables in another order), or remove the rule"
                .to_owned(),
            label: "this head only repeats its body".to_owned(),
            locate: vec![Target::Head],
        });
        return;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_is_bounded_and_ignores_ascii_case() {
        assert_eq!(bounded_distance("http://e/knows", "http://e/knwos", 2), 2);
        assert_eq!(bounded_distance("http://e/Knows", "http://e/knows", 2), 0);
        assert_eq!(bounded_distance("http://e/a", "http://e/abcdef", 2), 3);
    }
}
