//! This module defines what `materialize --provenance` writes: the rule credited with each derived fact and, with `premises`, that derivation's premises, as reifier quads.

use std::time::Duration;

use rayon::prelude::*;

use super::{Failure, MaterializeSettings, Reasoned, Run, remaining, run_options};
use crate::control::{self, Phase};
use crate::datalog::explain::{self, Derivation, GraphSlot, Premise, Slot};
use crate::datalog::provenance::{self, Level, Minted, NS};
use crate::exec::terms::Terms;
use crate::output::deps::Prefixes;
use crate::output::explain::Context;
use crate::query::QueryError;
use crate::rules::reifier;
use crate::store::{LiteralKind, Quad, Store, TermId, TermRef, TermSource, well_known as wk};

/// `--provenance`: the derived facts of `order` (the output's facts, in output order) credited to rules (`by_fact`,
/// the run's credits, sorted by fact), as reifier quads in the same order (each fact's reifier, then its
/// premises), and the terms they are written with: `terms` and what was minted past them; nothing without the
/// flag. A pass past the deadline fails the command (exit 3, nothing written).
pub(super) fn provenance<'a>(
    settings: &MaterializeSettings,
    store: &Store,
    reasoned: &Reasoned,
    run: Run,
    mut terms: Terms<'a>,
    order: &[Quad],
    by_fact: Vec<(Quad, u32)>,
) -> Result<(Minted<'a>, Vec<Quad>), Failure> {
    let Some((level, graph)) = &settings.provenance else {
        return Ok((Minted::none(terms), Vec::new()));
    };
    control::enter(Phase::Reason);
    let options = run_options(&settings.reasoning, run, store);
    let program = &reasoned.program;
    // The run recorded each fact's first derivation (`--provenance` sets `track`).
    // Each fact's place among the credits, searched in parallel (a small list: the pairs themselves, collected
    // in parallel, would sit twice in memory at the command's peak).
    let at: Vec<u32> = order
        .par_iter()
        .map(|q| {
            by_fact
                .binary_search_by(|(f, _)| f.cmp(q))
                .map_or(u32::MAX, |i| i as u32)
        })
        .collect();
    let credited: Vec<(Quad, usize)> = (at.into_iter())
        .filter(|&i| i != u32::MAX)
        .map(|i| (by_fact[i as usize].0, by_fact[i as usize].1 as usize))
        .collect();
    drop(by_fact);
    // Already a fact (an annotated head's reifier of its own edge): written once.
    let end = store.dict.end();
    let known = |[g, s, p, o]: Quad| {
        s < end
            && o < end
            && (reasoned.overlay.contains(g, [s, p, o])
                || store.quads.graph(g).is_some_and(|i| i.contains([s, p, o])))
    };
    if *level == Level::Rule {
        let (minted, reifiers) = provenance::minted(program, terms, &credited, graph.as_deref());
        let fresh = reifiers.into_iter().filter(|q| !known(*q)).collect();
        return Ok((minted, fresh));
    }
    let reifiers = provenance::quads(program, &mut terms, &credited, graph.as_deref());
    let mut premises: Vec<Vec<Quad>> = vec![Vec::new(); credited.len()];
    let mut facts: Vec<Quad> = credited.iter().map(|(q, _)| *q).collect();
    facts.sort_unstable();
    let explain_options = explain::Options {
        depth: 1,
        timeout: remaining(run.deadline),
        reserve_per_node: Duration::ZERO,
        now: options.now,
        path_limit: options.path_limit,
        cancel: crate::exec::Cancel::new(),
    };
    let explanation = explain::explain(program, store, &reasoned.overlay, &facts, &explain_options)
        .map_err(Failure::input)?;
    if explanation.incomplete {
        return Err(Failure {
            exit_code: 3,
            ..Failure::input(QueryError::Exec(crate::exec::ExecError::Timeout(
                explain_options.timeout.unwrap_or_default(),
            )))
        });
    }
    let position: hashbrown::HashMap<Quad, usize> = credited
        .iter()
        .enumerate()
        .map(|(i, (q, _))| (*q, i))
        .collect();
    let prefixes = Prefixes::new(std::iter::empty());
    let cx = Context {
        program,
        locations: &[],
        terms: &store.dict,
        prefixes: &prefixes,
        color: false,
        deadline: None,
    };
    for &t in &explanation.targets {
        let node = &explanation.nodes[t];
        let Some(&i) = position.get(&node.fact) else {
            continue;
        };
        let rule = credited[i].1;
        // Of the credited rule's derivations, one that does not read the fact itself if there is one, and of
        // those the first by content: the same whatever the terms' ids (a maintained state numbers them in
        // another order than a fresh load).
        let mut candidates = node.derivations.iter().flatten().filter(|d| d.rule == rule);
        let Some(first) = candidates.next() else {
            continue;
        };
        let derivation = match candidates.next() {
            None => first,
            Some(second) => [first, second]
                .into_iter()
                .chain(candidates)
                .map(|d| ((circular(d), content(d, &store.dict)), d))
                .min_by(|a, b| a.0.cmp(&b.0))
                .map(|(_, d)| d)
                .expect("two candidates"),
        };
        let mut writer = Premises {
            terms: &mut terms,
            cx: &cx,
            out: &mut premises[i],
            graph: graph.as_deref(),
        };
        // The reifier quads come two per credited fact, in order: the first names the reifier.
        let reifier = reifiers[2 * i][1];
        writer.derivation(node.fact[0], reifier, &derivation.premises);
    }
    let mut out = Vec::with_capacity(reifiers.len() + premises.iter().map(Vec::len).sum::<usize>());
    for (pair, premises) in reifiers.chunks(2).zip(premises) {
        out.extend(pair.iter().copied().filter(|q| !known(*q)));
        out.extend(premises);
    }
    Ok((Minted::none(terms), out))
}

/// The output's prefixes: the data's, and with `--provenance` also `rdf:`, `reasonctl:` and `genid:` (minted
/// reifiers) where the data does not bind those names.
pub(super) fn prefixes(
    settings: &MaterializeSettings,
    data: &[(String, String)],
) -> Vec<(String, String)> {
    let mut out = data.to_vec();
    if settings.provenance.is_some() {
        for (name, ns) in [
            ("rdf", "http://www.w3.org/1999/02/22-rdf-syntax-ns#"),
            ("reasonctl", NS),
            ("genid", reifier::GENID_BASE),
        ] {
            if !out.iter().any(|(n, _)| n == name) {
                out.push((name.to_owned(), ns.to_owned()));
            }
        }
    }
    out
}

/// Whether a derivation reads the fact it derives (`x R z` from `x R z` and `z R z`): true, and explains nothing.
fn circular(d: &Derivation) -> bool {
    d.premises
        .iter()
        .any(|p| matches!(p, Premise::Fact { cycle: true, .. }))
}

/// A derivation's premises as text, in body order: each term in N-Triples syntax, variables by name.
fn content(d: &Derivation, terms: &(impl TermSource + ?Sized)) -> Vec<String> {
    fn slot(s: &Slot, terms: &(impl TermSource + ?Sized), out: &mut Vec<String>) {
        match s {
            Slot::Term(id) => out.push(
                terms
                    .to_oxrdf(*id)
                    .map(|t| t.to_string())
                    .unwrap_or_default(),
            ),
            Slot::Computed(text) => out.push(text.clone()),
            Slot::Var(name) => out.push(format!("?{name}")),
            Slot::Triple(parts) => parts.iter().for_each(|p| slot(p, terms, out)),
        }
    }
    fn graph(g: &GraphSlot, terms: &(impl TermSource + ?Sized), out: &mut Vec<String>) {
        match g {
            GraphSlot::Default => out.push(String::new()),
            GraphSlot::Named(id) => slot(&Slot::Term(*id), terms, out),
            GraphSlot::Var(name) => out.push(format!("?{name}")),
        }
    }
    fn premise(p: &Premise, terms: &(impl TermSource + ?Sized), out: &mut Vec<String>) {
        match p {
            Premise::Fact { atom, .. } => {
                atom.terms.iter().for_each(|s| slot(s, terms, out));
                graph(&atom.graph, terms, out);
            }
            Premise::Path {
                subject,
                object,
                graph: g,
                ..
            } => {
                slot(subject, terms, out);
                slot(object, terms, out);
                graph(g, terms, out);
            }
            Premise::Absence { patterns, filters } => {
                patterns.iter().for_each(|p| premise(p, terms, out));
                out.extend(filters.iter().cloned());
            }
            Premise::Rows { key, rows, .. } => {
                key.iter().for_each(|(_, s)| slot(s, terms, out));
                rows.iter().flatten().for_each(|p| premise(p, terms, out));
            }
        }
    }
    let mut out = Vec::new();
    d.premises.iter().for_each(|p| premise(p, terms, &mut out));
    out
}

/// Writes the premises of credited derivations (see README, *Provenance*).
struct Premises<'w, 't, 'c> {
    terms: &'w mut Terms<'t>,
    cx: &'w Context<'c, crate::store::Dictionary>,
    out: &'w mut Vec<Quad>,
    graph: Option<&'w str>,
}

impl Premises<'_, '_, '_> {
    fn iri(&mut self, local: &str) -> TermId {
        self.terms.iri(&format!("{NS}{local}"))
    }

    fn text(&mut self, s: &str) -> TermId {
        self.terms.literal(s, LiteralKind::Simple)
    }

    /// A slot's term: a dictionary term, or its text.
    fn slot(&mut self, s: &Slot) -> TermId {
        match s {
            Slot::Term(id) => *id,
            other => {
                let text = self.cx.slot(other, false);
                self.text(&text)
            }
        }
    }

    // premise(R, <<( s p o )>>) :- derivation(f, d), credited(f, rule(d)), fact(d, s p o), R = reifier(f).
    /// The premises of the fact of graph `g` whose reifier (minted by [`provenance::quads`]) is `r`.
    fn derivation(&mut self, g: TermId, r: TermId, premises: &[Premise]) {
        let r_iri = match self.terms.term(r) {
            TermRef::Iri(i) => format!("{}{}", i.ns, i.local),
            _ => return,
        };
        let g = match self.graph {
            Some(pg) => self.terms.iri(pg),
            None => g,
        };
        let premise = self.iri("premise");
        for (i, p) in premises.iter().enumerate() {
            match p {
                Premise::Fact { atom, .. } => {
                    if let Some([_, s, p, o]) = atom.quad() {
                        let t = self.terms.triple([s, p, o]);
                        self.out.push([g, r, premise, t]);
                    }
                }
                other => {
                    let node = self.terms.iri(&format!("{r_iri}/premise/{}", i + 1));
                    self.out.push([g, r, premise, node]);
                    self.node(g, node, other);
                }
            }
        }
    }

    /// A premise other than a fact, as a node: a path, an absence, or the rows of an aggregate, subquery or
    /// EXISTS.
    fn node(&mut self, g: TermId, node: TermId, p: &Premise) {
        let kind = |w: &mut Self, name: &str| {
            let class = w.iri(name);
            w.out.push([g, node, wk::RDF_TYPE, class]);
        };
        match p {
            Premise::Fact { .. } => {}
            Premise::Path {
                subject,
                path,
                object,
                ..
            } => {
                kind(self, "Path");
                let (sp, pp, op) = (self.iri("subject"), self.iri("path"), self.iri("object"));
                let (s, o) = (self.slot(subject), self.slot(object));
                let text = self.cx.path(path, false);
                let text = self.text(&text);
                self.out
                    .extend([[g, node, sp, s], [g, node, pp, text], [g, node, op, o]]);
            }
            Premise::Absence { patterns, filters } => {
                kind(self, "Absence");
                let (pattern, filter) = (self.iri("pattern"), self.iri("filter"));
                for q in patterns {
                    let text = match q {
                        Premise::Fact { atom, .. } => self.cx.atom(atom, false),
                        Premise::Path {
                            subject,
                            path,
                            object,
                            ..
                        } => format!(
                            "{} {} {} .",
                            self.cx.slot(subject, false),
                            self.cx.path(path, false),
                            self.cx.slot(object, false)
                        ),
                        _ => continue,
                    };
                    let t = self.text(&text);
                    self.out.push([g, node, pattern, t]);
                }
                for f in filters {
                    let t = self.text(f);
                    self.out.push([g, node, filter, t]);
                }
            }
            Premise::Rows {
                kind: k,
                rows,
                total,
                ..
            } => {
                kind(
                    self,
                    match k {
                        explain::RowsKind::Grouped => "Aggregate",
                        explain::RowsKind::Subquery => "Subquery",
                        explain::RowsKind::Exists => "Exists",
                    },
                );
                let (count, premise) = (self.iri("rows"), self.iri("premise"));
                let xsd_integer = self.terms.iri("http://www.w3.org/2001/XMLSchema#integer");
                let n = self
                    .terms
                    .literal(&total.to_string(), LiteralKind::Typed(xsd_integer));
                self.out.push([g, node, count, n]);
                for row in rows {
                    for q in row {
                        if let Premise::Fact { atom, .. } = q
                            && let Some([_, s, p, o]) = atom.quad()
                        {
                            let t = self.terms.triple([s, p, o]);
                            self.out.push([g, node, premise, t]);
                        }
                    }
                }
            }
        }
    }
}
