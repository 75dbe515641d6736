//! This module defines the checks every rule passes before it runs: constructs a body may not use, and the
//! head checks (blank nodes, annotations). `materialize`, `query --rules` and `lint` all call these.

use spargebra::term::{NamedNodePattern, TermPattern};

use crate::ir::{Expr, Op, VarSet, VarTable};

use super::RuleError;

/// A head triple as the template wrote it (the graph aside).
pub struct TemplateTriple<'a> {
    /// Subject.
    pub subject: &'a TermPattern,
    /// Predicate.
    pub predicate: &'a NamedNodePattern,
    /// Object.
    pub object: &'a TermPattern,
}

/// Every construct of a lowered body that rules reject: OPTIONAL, MINUS, LIMIT/OFFSET anywhere, GROUP BY at the top
/// (aggregates belong in a subquery). SERVICE never lowers (see [`crate::ir::lower::LowerError::Service`]).
pub fn body(rule: &str, body: &Op) -> Vec<RuleError> {
    let mut out = Vec::new();
    walk(rule, body, true, &mut out);
    out
}

/// The rejection of SERVICE, which lowering reports.
pub fn service(rule: &str) -> RuleError {
    reject(
        rule,
        "SERVICE",
        "a rule runs over the loaded data only",
        "load the remote data and reason over it locally",
    )
}

fn reject(rule: &str, construct: &'static str, why: &'static str, help: &'static str) -> RuleError {
    RuleError::Rejected {
        rule: rule.to_owned(),
        construct,
        part: "body",
        why,
        help,
    }
}

fn walk(rule: &str, op: &Op, top: bool, out: &mut Vec<RuleError>) {
    match op {
        Op::LeftJoin { .. } => out.push(reject(
            rule,
            "OPTIONAL",
            "a fact derived from a match with the optional part missing would be retracted once the part is derived, and a fixpoint never retracts",
            "write one rule without the optional part and one that requires it, or test absence with FILTER NOT EXISTS { … } (JSON-LD: [\"not-exists\", …])",
        )),
        Op::Minus { .. } => out.push(reject(
            rule,
            "MINUS",
            "its meaning depends on which variables the two sides share, which a rule cannot stratify reliably",
            "use FILTER NOT EXISTS { … } (JSON-LD: [\"not-exists\", …]), the supported negation",
        )),
        Op::Slice { .. } => out.push(reject(
            rule,
            "LIMIT / OFFSET",
            "which rows it keeps depends on evaluation order, so the derived facts would too",
            "remove it: a rule derives from every match of its body",
        )),
        Op::Group { .. } if top => out.push(reject(
            rule,
            "GROUP BY at the top of a body",
            "a CONSTRUCT template cannot read aggregates of its own WHERE",
            "aggregate in a subquery: { SELECT ?x (COUNT(?y) AS ?n) WHERE { … } GROUP BY ?x }",
        )),
        _ => {}
    }
    let below_top = top && !matches!(op, Op::Project { .. });
    for child in op.children() {
        walk(rule, child, below_top, out);
    }
    let exprs: Vec<&Expr> = match op {
        Op::Filter { expr, .. } | Op::Extend { expr, .. } => vec![expr],
        Op::LeftJoin {
            filter: Some(f), ..
        } => vec![f],
        _ => Vec::new(),
    };
    for e in exprs {
        e.visit(&mut |sub| {
            if let Expr::Exists(inner) = sub {
                walk(rule, inner, false, out);
            }
        });
    }
}

/// The blank nodes of a head that are reifiers (`{| … |}` and `~` write `_:r rdf:reifies <<( s p o )>>`), each
/// with the edges it reifies: minted by [`crate::rules::reifier`] when it reifies exactly one.
pub fn reifiers<'a>(
    heads: &[TemplateTriple<'a>],
) -> Vec<(&'a str, Vec<&'a spargebra::term::TriplePattern>)> {
    let reifies = "http://www.w3.org/1999/02/22-rdf-syntax-ns#reifies";
    let mut out: Vec<(&str, Vec<&spargebra::term::TriplePattern>)> = Vec::new();
    for h in heads {
        if let (
            TermPattern::BlankNode(b),
            NamedNodePattern::NamedNode(p),
            TermPattern::Triple(edge),
        ) = (h.subject, h.predicate, h.object)
            && p.as_str() == reifies
        {
            match out.iter_mut().find(|(label, _)| *label == b.as_str()) {
                Some((_, edges)) => {
                    if !edges.contains(&&**edge) {
                        edges.push(edge);
                    }
                }
                None => out.push((b.as_str(), vec![edge])),
            }
        }
    }
    out
}

/// Whether a term holds one of these blank nodes (at any depth of a triple term).
fn holds_blank(t: &TermPattern, labels: &[&str]) -> bool {
    match t {
        TermPattern::BlankNode(b) => labels.contains(&b.as_str()),
        TermPattern::Triple(t) => holds_blank(&t.subject, labels) || holds_blank(&t.object, labels),
        _ => false,
    }
}

/// Blank nodes in heads: a reifier of an annotation (see [`reifiers`]) is minted, unless it reifies two edges or
/// its edge holds a blank node; any other blank node would be fresh for every match. At most one error per kind.
pub fn heads(rule: &str, heads: &[TemplateTriple<'_>]) -> Vec<RuleError> {
    let mut out = Vec::new();
    let reifiers = reifiers(heads);
    fn has_blank(t: &TermPattern, allowed: &[&str]) -> bool {
        match t {
            TermPattern::BlankNode(b) => !allowed.contains(&b.as_str()),
            TermPattern::Triple(t) => {
                has_blank(&t.subject, allowed) || has_blank(&t.object, allowed)
            }
            _ => false,
        }
    }
    if reifiers.iter().any(|(_, edges)| edges.len() > 1) {
        out.push(RuleError::HeadAnnotation {
            rule: rule.to_owned(),
            construct: "a blank node reifying two edges".to_owned(),
        });
    }
    // An edge may hold another reifier (a nested annotation, `{| p ?x {| q ?y |} |}`), minted first; any other
    // blank node, or a reifier inside its own edge (directly or through others), cannot be minted.
    let labels: Vec<&str> = reifiers.iter().map(|(b, _)| *b).collect();
    if reifiers.iter().any(|(_, edges)| {
        edges
            .iter()
            .any(|e| has_blank(&e.subject, &labels) || has_blank(&e.object, &labels))
    }) {
        out.push(RuleError::HeadAnnotation {
            rule: rule.to_owned(),
            construct: "an annotated edge holding a blank node".to_owned(),
        });
    } else {
        // Mint in order: a reifier whose edge holds only reifiers already minted; what is left is a cycle.
        let mut done: Vec<&str> = Vec::new();
        loop {
            let before = done.len();
            for (b, edges) in &reifiers {
                let pending: Vec<&str> = labels
                    .iter()
                    .copied()
                    .filter(|l| !done.contains(l))
                    .collect();
                let ready = !done.contains(b)
                    && edges.iter().all(|e| {
                        !holds_blank(&e.subject, &pending) && !holds_blank(&e.object, &pending)
                    });
                if ready {
                    done.push(b);
                }
            }
            if done.len() == before {
                break;
            }
        }
        if done.len() < reifiers.len() {
            out.push(RuleError::HeadAnnotation {
                rule: rule.to_owned(),
                construct: "a reifier inside the edge it reifies".to_owned(),
            });
        }
    }
    if !out.is_empty() {
        return out;
    }
    let allowed: Vec<&str> = reifiers.iter().map(|(b, _)| *b).collect();
    if heads
        .iter()
        .any(|h| has_blank(h.subject, &allowed) || has_blank(h.object, &allowed))
    {
        out.push(RuleError::HeadBlankNode {
            rule: rule.to_owned(),
        });
    }
    out
}

/// Negation safety: every variable a negated EXISTS (see [`Expr::visit_exists`]) shares with the rest of the rule
/// (its group, an enclosing negation, or the head) must be bound by a positive pattern of the group the negation
/// filters, or of a group it is nested in; otherwise the negation tests "no such fact for *any* value", which is
/// almost never what was meant. One error per variable.
/// Head variables are given by name: one the body binds only inside a negation is local to it, not in the
/// body's scope.
pub fn negation(rule: &str, body: &Op, head_vars: &[String], vars: &VarTable) -> Vec<RuleError> {
    let mut out = Vec::new();
    let mut reported = VarSet::new();
    let cx = NegationCx {
        rule,
        whole: body,
        head_vars,
        vars,
    };
    cx.walk(body, &VarSet::new(), &mut reported, &mut out);
    out
}

struct NegationCx<'a> {
    rule: &'a str,
    whole: &'a Op,
    head_vars: &'a [String],
    vars: &'a VarTable,
}

impl NegationCx<'_> {
    /// `outer`: the variables rows of enclosing EXISTS patterns bind (an EXISTS runs once per outer row).
    fn walk(&self, op: &Op, outer: &VarSet, reported: &mut VarSet, out: &mut Vec<RuleError>) {
        if let Op::Filter { input, expr } | Op::Extend { input, expr, .. } = op {
            let mut bound = outer.clone();
            bound.extend(&positively_bound(input));
            expr.visit_exists(matches!(op, Op::Filter { .. }), &mut |inner, negated| {
                if negated {
                    self.check(inner, &bound, reported, out);
                }
                self.walk(inner, &bound, reported, out);
            });
        }
        for child in op.children() {
            self.walk(child, outer, reported, out);
        }
    }

    fn check(
        &self,
        negation: &Op,
        bound: &VarSet,
        reported: &mut VarSet,
        out: &mut Vec<RuleError>,
    ) {
        let mut inside = VarSet::new();
        mentions(negation, None, &mut inside);
        let mut outside = VarSet::new();
        mentions(self.whole, Some(negation), &mut outside);
        for v in inside.iter() {
            let in_head = self.head_vars.iter().any(|h| h == self.vars.name(v));
            if (outside.contains(v) || in_head)
                && !bound.contains(v)
                && !self.vars.is_hidden(v)
                && !reported.contains(v)
            {
                reported.insert(v);
                out.push(RuleError::UnsafeNegation {
                    rule: self.rule.to_owned(),
                    var: self.vars.name(v).to_owned(),
                });
            }
        }
    }
}

/// The variables every solution of `op` binds, counting BIND and aggregate results as bound (they are computed
/// from bound values): the positive bindings a negation may rely on.
fn positively_bound(op: &Op) -> VarSet {
    match op {
        Op::Join(ops) => {
            let mut out = VarSet::new();
            ops.iter().for_each(|o| out.extend(&positively_bound(o)));
            out
        }
        Op::Union(ops) => {
            let mut it = ops.iter().map(positively_bound);
            let first = it.next().unwrap_or_default();
            it.fold(first, |acc, s| acc.intersection(&s))
        }
        Op::Filter { input, .. }
        | Op::Distinct(input)
        | Op::Reduced(input)
        | Op::OrderBy { input, .. }
        | Op::Slice { input, .. }
        | Op::LeftJoin { left: input, .. }
        | Op::Minus { left: input, .. } => positively_bound(input),
        Op::Extend { input, var, .. } => {
            let mut out = positively_bound(input);
            out.insert(*var);
            out
        }
        Op::Project { input, vars } => {
            positively_bound(input).intersection(&vars.iter().copied().collect())
        }
        Op::Group {
            input,
            keys,
            aggregates,
        } => {
            let inner = positively_bound(input);
            keys.iter()
                .copied()
                .filter(|k| inner.contains(*k))
                .chain(aggregates.iter().map(|(v, _)| *v))
                .collect()
        }
        other => other.certain_vars(),
    }
}

/// Every variable `op` mentions anywhere (patterns, expressions, EXISTS patterns, projections), except inside
/// the operator `skip` (compared by address).
fn mentions(op: &Op, skip: Option<&Op>, out: &mut VarSet) {
    if skip.is_some_and(|s| std::ptr::eq(s, op)) {
        return;
    }
    let expr = |e: &Expr, out: &mut VarSet| {
        e.visit(&mut |sub| match sub {
            Expr::Var(v) | Expr::Bound(v) => out.insert(*v),
            Expr::Exists(inner) => mentions(inner, skip, out),
            _ => {}
        });
    };
    match op {
        Op::Filter { expr: e, .. } => expr(e, out),
        Op::Extend { expr: e, var, .. } => {
            out.insert(*var);
            expr(e, out);
        }
        Op::LeftJoin {
            filter: Some(e), ..
        } => expr(e, out),
        Op::OrderBy { keys, .. } => keys.iter().for_each(|(e, _)| expr(e, out)),
        Op::Group {
            keys, aggregates, ..
        } => {
            keys.iter().for_each(|k| out.insert(*k));
            for (v, a) in aggregates {
                out.insert(*v);
                if let Some(e) = &a.expr {
                    expr(e, out);
                }
            }
        }
        Op::Project { vars, .. } | Op::Values { vars, .. } => {
            vars.iter().for_each(|v| out.insert(*v))
        }
        Op::Pattern(_) | Op::Path { .. } | Op::GraphName(_) => out.extend(&op.vars()),
        _ => {}
    }
    for child in op.children() {
        mentions(child, skip, out);
    }
}

/// REGEX and REPLACE calls whose pattern and flags are constant strings that do not compile (as the executor
/// compiles them): the call is an error on every row. One error per pattern and flags.
pub fn invalid_regexes(
    rule: &str,
    body: &crate::ir::Op,
    dict: &crate::store::Dictionary,
) -> Vec<RuleError> {
    use crate::ir::{Expr, Func, Op};
    use crate::store::{LiteralKind, TermRef};
    // invalid(r, p, f) :- call(r, regex, [_, p, f]), string(p), string(f), not compiles(p, f).
    let text = |e: Option<&Expr>| -> Option<String> {
        match e? {
            Expr::Const(c) => match dict.get(*c) {
                TermRef::Literal {
                    lexical,
                    kind: LiteralKind::Simple,
                } => Some(lexical.to_owned()),
                _ => None,
            },
            _ => None,
        }
    };
    let mut out: Vec<RuleError> = Vec::new();
    let mut ops: Vec<&Op> = vec![body];
    while let Some(op) = ops.pop() {
        ops.extend(op.children());
        for e in op.exprs().unwrap_or_default() {
            let mut exists: Vec<&Op> = Vec::new();
            e.visit_exists(true, &mut |inner, _| exists.push(inner));
            ops.extend(exists);
            e.visit(&mut |sub| {
                let (pattern, flags) = match sub {
                    Expr::Call(Func::Regex, args) => (args.get(1), args.get(2)),
                    Expr::Call(Func::Replace, args) => (args.get(1), args.get(3)),
                    _ => return,
                };
                let Some(pattern) = text(pattern) else { return };
                let flags = match flags {
                    None => String::new(),
                    Some(f) => match text(Some(f)) {
                        Some(f) => f,
                        None => return,
                    },
                };
                if let Err(reason) = crate::exec::eval::compile_regex_or_why(&pattern, &flags) {
                    let pattern = format!("{pattern:?}");
                    if !out.iter().any(|e| {
                        matches!(e, RuleError::InvalidRegex { pattern: p, flags: f, .. } if *p == pattern && *f == flags)
                    }) {
                        out.push(RuleError::InvalidRegex {
                            rule: rule.to_owned(),
                            pattern,
                            flags,
                            reason,
                        });
                    }
                }
            });
        }
    }
    out
}

/// Head subjects that are literal or triple-term constants, and predicates that are constants other than IRIs:
/// no triple has them there, so such a head derives nothing. One error per term.
pub fn constant_heads(
    rule: &str,
    heads: &[crate::rules::Head],
    dict: &crate::store::Dictionary,
) -> Vec<RuleError> {
    use crate::ir::lower::TemplateTerm;
    let mut out = Vec::new();
    // never(r) :- head(r, h), subject(h, s), (literal(s) ; triple_term(s)).
    // never(r) :- head(r, h), predicate(h, p), constant(p), not iri(p).
    for h in heads {
        use crate::store::{TermRef, TermSource};
        let subject = match &h.terms[0] {
            TemplateTerm::Const(c) if matches!(dict.get(*c), TermRef::Literal { .. }) => {
                Some((Some(*c), "a literal"))
            }
            TemplateTerm::Triple(_) => Some((None, "a triple term")),
            _ => None,
        };
        let predicate = match &h.terms[1] {
            TemplateTerm::Const(c) if !matches!(dict.get(*c), TermRef::Iri(_)) => {
                Some((Some(*c), "not an IRI"))
            }
            _ => None,
        };
        for (found, role) in [(subject, "subject"), (predicate, "predicate")] {
            if let Some((term, why)) = found {
                let term = term.map_or_else(|| "<<( … )>>".to_owned(), |t| dict.display(t));
                if !out
                    .iter()
                    .any(|e| matches!(e, RuleError::HeadNeverFact { term: t, .. } if *t == term))
                {
                    out.push(RuleError::HeadNeverFact {
                        rule: rule.to_owned(),
                        term,
                        role,
                        why,
                    });
                }
            }
        }
    }
    out
}

/// Head subjects (reifiers among them) and predicates that the body binds only to literals: such a head derives
/// nothing. A variable is literal-only when the body binds it, and every binding is a BIND of an expression that
/// always yields a literal, a VALUES column of literals, or a COUNT, SUM, AVG or GROUP_CONCAT. One error per
/// variable.
pub fn literal_subjects(
    rule: &str,
    body: &Op,
    heads: &[crate::rules::Head],
    vars: &VarTable,
    dict: &crate::store::Dictionary,
) -> Vec<RuleError> {
    use crate::ir::lower::TemplateTerm;
    use crate::store::well_known as wk;
    let mut out = Vec::new();
    let mut seen: Vec<crate::ir::VarId> = Vec::new();
    let reifiers: Vec<&TemplateTerm> = heads
        .iter()
        .filter(|h| h.terms[1] == TemplateTerm::Const(wk::RDF_REIFIES))
        .map(|h| &h.terms[0])
        .collect();
    for h in heads {
        let roles = [
            (
                &h.terms[0],
                if reifiers.contains(&&h.terms[0]) {
                    "reifier"
                } else {
                    "subject"
                },
            ),
            (&h.terms[1], "predicate"),
        ];
        for (t, role) in roles {
            let TemplateTerm::Var(v) = t else { continue };
            if seen.contains(v) {
                continue;
            }
            seen.push(*v);
            let mut found = Bindings::default();
            bindings(body, *v, dict, &mut found);
            if found.literal && !found.other {
                out.push(RuleError::LiteralSubject {
                    rule: rule.to_owned(),
                    var: vars.name(*v).to_owned(),
                    role,
                });
            }
        }
    }
    out
}

/// Head literals whose lexical form is invalid for their datatype (`"abc"^^xsd:integer`), as the JSON-LD surface
/// refuses them: one error per literal.
pub fn invalid_head_literals(
    rule: &str,
    heads: &[crate::rules::Head],
    dict: &crate::store::Dictionary,
) -> Vec<RuleError> {
    use crate::ir::lower::TemplateTerm;
    use crate::store::{LiteralKind, TermRef};
    let mut out: Vec<RuleError> = Vec::new();
    let mut terms: Vec<&TemplateTerm> = heads.iter().flat_map(|h| h.terms.iter()).collect();
    while let Some(t) = terms.pop() {
        match t {
            TemplateTerm::Triple(inner) => terms.extend(inner.iter()),
            TemplateTerm::Const(c) => {
                let TermRef::Literal {
                    lexical,
                    kind: LiteralKind::Typed(datatype),
                } = dict.get(*c)
                else {
                    continue;
                };
                let TermRef::Iri(datatype) = dict.get(datatype) else {
                    continue;
                };
                let datatype = datatype.to_string();
                let seen = |e: &RuleError| matches!(e, RuleError::InvalidLiteral { value, datatype: d, .. } if value == lexical && *d == datatype);
                if !super::jsonld::head::valid_lexical(lexical, &datatype) && !out.iter().any(seen)
                {
                    out.push(RuleError::InvalidLiteral {
                        rule: rule.to_owned(),
                        value: lexical.to_owned(),
                        datatype,
                    });
                }
            }
            _ => {}
        }
    }
    out
}

/// How a body binds one variable: to literals only, or (also) otherwise.
#[derive(Default)]
struct Bindings {
    literal: bool,
    other: bool,
}

// binds(op, v, literal) :- extend(op, v, e), literal_only(e).
// binds(op, v, other)   :- pattern(op), mentions(op, v).
fn bindings(op: &Op, v: crate::ir::VarId, dict: &crate::store::Dictionary, found: &mut Bindings) {
    use crate::ir::AggregateKind;
    match op {
        Op::Pattern(_) | Op::Path { .. } | Op::GraphName(_) if op.term_vars().contains(v) => {
            found.other = true;
        }
        Op::Extend { var, expr, .. } if *var == v => {
            if literal_only(expr, dict) {
                found.literal = true;
            } else {
                found.other = true;
            }
        }
        Op::Values { vars, rows } => {
            if let Some(i) = vars.iter().position(|x| *x == v) {
                let literals = rows.iter().all(|r| {
                    r[i].is_none_or(|id| {
                        matches!(
                            crate::store::TermSource::term(dict, id),
                            crate::store::TermRef::Literal { .. }
                        )
                    })
                });
                if literals {
                    found.literal = true;
                } else {
                    found.other = true;
                }
            }
        }
        Op::Group { aggregates, .. } => {
            for (av, agg) in aggregates {
                if *av == v {
                    match agg.kind {
                        AggregateKind::CountAll
                        | AggregateKind::Count
                        | AggregateKind::Sum
                        | AggregateKind::Avg
                        | AggregateKind::GroupConcat { .. } => found.literal = true,
                        _ => found.other = true,
                    }
                }
            }
        }
        _ => {}
    }
    for c in op.children() {
        bindings(c, v, dict, found);
    }
}

/// Whether an expression always yields a literal (or an error).
fn literal_only(e: &Expr, dict: &crate::store::Dictionary) -> bool {
    use crate::ir::Func;
    match e {
        Expr::Const(id) => matches!(
            crate::store::TermSource::term(dict, *id),
            crate::store::TermRef::Literal { .. }
        ),
        Expr::Var(_) => false,
        Expr::If(_, a, b) => literal_only(a, dict) && literal_only(b, dict),
        Expr::Coalesce(list) => !list.is_empty() && list.iter().all(|x| literal_only(x, dict)),
        Expr::Call(f, _) => !matches!(
            f,
            Func::Iri
                | Func::BNode
                | Func::Uuid
                | Func::Datatype
                | Func::Triple
                | Func::Subject
                | Func::Predicate
                | Func::Object
        ),
        _ => true,
    }
}
