//! This module defines the terms a dataflow run computes (BIND values, aggregates, a head's triple terms and
//! minted reifiers): one table that the worker threads of a process share, extending the loaded dictionary, and
//! interned into it after the run.
//!
//! ```text
//! id(t) = the dictionary's id of t, if it has t;  else t's id in the shared table (from the dictionary's end)
//! ```
//!
//! So id equality stays term equality across workers (a join or `distinct` over computed terms is exact), and a
//! term the data already has keeps its id. Which computed term gets which id depends on which worker computed it
//! first; nothing shown depends on it (the writer orders facts by their terms' text).

use std::sync::{Arc, Mutex};

use crate::exec::eval::{Env, Eval, intern_value};
use crate::exec::terms::Terms;
use crate::exec::value::Value;
use crate::ir::Expr;
use crate::store::{Dictionary, Overlay, Store, TermId, TermRef, TermSource};

/// The computed terms of one process's run, shared by its workers.
pub(super) struct Mint {
    store: Arc<Store>,
    /// Taken while a worker evaluates (see [`Mint::with`]).
    local: Mutex<Option<Dictionary>>,
}

impl Mint {
    pub(super) fn new(store: Arc<Store>) -> Self {
        let local = Dictionary::extending(&store.dict);
        Self {
            store,
            local: Mutex::new(Some(local)),
        }
    }

    /// Runs `f` over the dictionary and the terms computed so far, which it may extend; one worker at a time.
    pub(super) fn with<R>(&self, f: impl FnOnce(&mut Terms<'_>) -> R) -> R {
        let mut held = self.local.lock().expect("a worker panicked");
        let local = held.take().expect("a worker panicked while evaluating");
        let mut terms = Terms::resume(&self.store.dict, local);
        let out = f(&mut terms);
        *held = Some(terms.into_local());
        out
    }

    /// `f` of the term `id` names (the dictionary's, or a computed one).
    pub(super) fn term<R>(&self, id: TermId, f: impl FnOnce(TermRef<'_>) -> R) -> R {
        if id < self.store.dict.end() {
            f(self.store.dict.term(id))
        } else {
            self.with(|terms| f(terms.term(id)))
        }
    }

    /// `BIND (expr AS ?v)` over `row`: the value's id, `None` when the expression errs (the variable stays
    /// unbound), as the executor's `Extend`.
    pub(super) fn bind(&self, env: &Env, expr: &Expr, row: &[TermId]) -> Option<TermId> {
        self.with(|terms| {
            let value = Eval {
                terms,
                env,
                exists: &[],
            }
            .eval(expr, row, 0)
            .map(Value::into_owned)?;
            // Volatile functions (BNODE) are refused by `check`: no blank node is minted.
            Some(intern_value(terms, value, &mut |terms, _| {
                terms.fresh_blank()
            }))
        })
    }

    /// `FILTER (expr)` over `row`.
    pub(super) fn test(&self, env: &Env, expr: &Expr, row: &[TermId]) -> bool {
        self.with(|terms| {
            Eval {
                terms,
                env,
                exists: &[],
            }
            .test(expr, row, 0)
        })
    }

    /// The computed terms, each with its id in the run.
    fn computed(self) -> Vec<(TermId, oxrdf::Term)> {
        let local = (self.local.into_inner())
            .ok()
            .flatten()
            .expect("the workers have ended");
        let (from, to) = (local.base().0, local.end().0);
        let terms = Terms::resume(&self.store.dict, local);
        (from..to)
            .filter_map(|i| terms.to_oxrdf(TermId(i)).map(|t| (TermId(i), t)))
            .collect()
    }
}

/// The terms a run computed, by value: interned into the dictionary once the workers have let it go
/// ([`Minted::adopt`]).
#[derive(Debug, Default)]
pub struct Minted(Vec<(TermId, oxrdf::Term)>);

impl Minted {
    /// The terms `mint` holds, once no worker holds it (`None` while one does).
    pub(super) fn of(mint: Option<Arc<Mint>>) -> Option<Self> {
        match mint.map(Arc::into_inner) {
            None => Some(Self::default()),
            Some(Some(mint)) => Some(Self(mint.computed())),
            Some(None) => None,
        }
    }

    /// Interns the computed terms into `dict` (the run's, which they extend) and renames them in `overlay`'s
    /// facts; in the order of their ids, so the dictionary grows as the run numbered them.
    pub fn adopt(self, dict: &mut Dictionary, overlay: Overlay) -> Overlay {
        if self.0.is_empty() {
            return overlay;
        }
        let first = self.0[0].0;
        debug_assert_eq!(first, dict.end(), "computed terms extend the dictionary");
        // As the in-memory engine interns a round's computed terms: a blank node of the dictionary (inside a
        // computed triple term) stays that node.
        let shared_blanks = dict.blank_count();
        let map = crate::datalog::fixpoint::intern_locals(dict, self.0, shared_blanks);
        let rename = |t: TermId| map.get(&t).copied().unwrap_or(t);
        let mut quads = overlay.into_quads();
        for q in &mut quads {
            *q = q.map(rename);
        }
        quads.sort_unstable();
        quads.dedup();
        let mut out = Overlay::new();
        for chunk in quads.chunk_by(|a, b| a[0] == b[0]) {
            out.add(
                chunk[0][0],
                chunk.iter().map(|&[_, s, p, o]| [s, p, o]).collect(),
            );
        }
        out
    }
}
