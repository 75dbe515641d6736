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
use crate::rules::reifier;
use crate::store::{
    Dictionary, LiteralKind, Quad, Store, TermId, TermRef, TermSource, well_known as wk,
};

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
    let explain_options = explain::Options {
        depth: 1,
        timeout: remaining(run.deadline),
        reserve_per_node: Duration::ZERO,
        now: options.now,
        path_limit: options.path_limit,
        cancel: crate::exec::Cancel::new(),
        rule: None,
    };
    // Only the credited rule's derivations are written: each fact is replayed by that rule alone (not by every
    // rule whose head can make it), in parts of one rule's facts explained side by side.
    let mut by_rule: Vec<(usize, Quad)> = credited.iter().map(|&(q, r)| (r, q)).collect();
    by_rule.sort_unstable();
    let parts: Vec<(usize, Vec<Quad>)> = (by_rule.chunk_by(|a, b| a.0 == b.0))
        .flat_map(|same| same.chunks(PART))
        .map(|part| (part[0].0, part.iter().map(|&(_, q)| q).collect()))
        .collect();
    drop(by_rule);
    let position: hashbrown::HashMap<Quad, usize> = credited
        .iter()
        .enumerate()
        .map(|(i, (q, _))| (*q, i))
        .collect();
    // Each part explained, and of each fact's derivations only the one written kept (a fact of an equivalence
    // class has a derivation per member: all of them, for every fact at once, did not fit in memory).
    let chosen: Vec<Vec<(usize, Derivation)>> = parts
        .par_iter()
        .map(|(rule, facts)| {
            // What is left of --timeout when this part starts (parts on one thread run one after another).
            let only = explain::Options {
                rule: Some(*rule),
                timeout: remaining(run.deadline),
                ..explain_options.clone()
            };
            // The error, or none when the deadline passed.
            let explanation =
                explain::explain(program, store, &reasoned.overlay, facts, &only).map_err(Some)?;
            if explanation.incomplete {
                return Err(None::<explain::ExplainError>);
            }
            let mut nodes = explanation.nodes;
            Ok((explanation.targets.iter())
                .filter_map(|&t| {
                    let node = &mut nodes[t];
                    let i = *position.get(&node.fact)?;
                    let derivations = node.derivations.take()?;
                    chosen(derivations, *rule, &store.dict).map(|d| (i, d))
                })
                .collect())
        })
        .collect::<Result<_, _>>()
        .map_err(|e| match e {
            Some(e) => Failure::input(e),
            None => Failure {
                exit_code: 3,
                ..Failure::input(PremisesTimeout {
                    seconds: explain_options.timeout.unwrap_or_default().as_secs_f64(),
                })
            },
        })?;
    drop(parts);
    // Written in the facts' order (the order the premises' new terms are minted in).
    let mut derivation_of: Vec<Option<Derivation>> = vec![None; credited.len()];
    for (i, d) in chosen.into_iter().flatten() {
        derivation_of[i] = Some(d);
    }
    let mut order: Vec<usize> = (0..credited.len()).collect();
    order.sort_unstable_by_key(|&i| credited[i].0);
    let prefixes = Prefixes::new(std::iter::empty());
    let cx = Context {
        program,
        locations: &[],
        terms: &store.dict,
        prefixes: &prefixes,
        color: false,
        deadline: None,
    };
    for i in order {
        let Some(derivation) = derivation_of[i].take() else {
            continue;
        };
        let mut writer = Premises {
            terms: &mut terms,
            cx: &cx,
            out: &mut premises[i],
            graph: graph.as_deref(),
        };
        // The reifier quads come two per credited fact, in order: the first names the reifier.
        let reifier = reifiers[2 * i][1];
        writer.derivation(credited[i].0[0], reifier, &derivation.premises);
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

/// Of the credited rule's derivations of a fact, the one written: one that does not read the fact itself if
/// there is one, and of those the first by content (the same whatever the terms' ids: a maintained state numbers
/// them in another order than a fresh load).
fn chosen(derivations: Vec<Derivation>, rule: usize, dict: &Dictionary) -> Option<Derivation> {
    let mut candidates = derivations.into_iter().filter(|d| d.rule == rule);
    let first = candidates.next()?;
    let Some(second) = candidates.next() else {
        return Some(first);
    };
    [first, second]
        .into_iter()
        .chain(candidates)
        .map(|d| ((circular(&d), content(&d, dict)), d))
        .min_by(|a, b| a.0.cmp(&b.0))
        .map(|(_, d)| d)
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

/// `--provenance premises` cut by `--timeout`: the replays that find each fact's premises did not all finish.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
#[error(
    "--provenance premises ran past --timeout: the {seconds:.3} s left after deriving did not suffice to replay every derived fact's derivation; nothing was written"
)]
#[diagnostic(
    code(reasonctl::provenance::timeout),
    help(
        "raise --timeout, or use --provenance without `premises` (the credited rule alone is recorded while deriving, with no replay)"
    )
)]
pub struct PremisesTimeout {
    seconds: f64,
}

/// Facts of one rule explained together with `--provenance premises`: parts small enough to spread over the
/// threads, large enough that a part's set-up is paid rarely.
const PART: usize = 4096;

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
