//! This module defines the node interpreter: [`run`] applies one plan node to a batch of input rows and hands
//! the output, batch by batch, to the next stage.

use std::hash::{BuildHasher, Hasher};

use hashbrown::{DefaultHashBuilder, HashTable};

use crate::ir::{Expr, GraphTerm, PatternTerm, TriplePattern, VarId};
use crate::plan::{ExistsPlan, Kind, LeftMode, Node};
use crate::store::{Pattern, TermId};

use super::eval::{Eval, intern_value};
use super::scan::{Resolved, graphs, resolve, unify};
use super::value::{Value, order};
use super::{BATCH, Context, ExecError, Flow, ROW_UNBOUND, Rows, State, aggregate, path};

type R = Result<Flow, ExecError>;

/// Where a node's output goes.
pub type Sink<'s, 'a> = &'s mut dyn FnMut(&mut State<'a>, &Rows) -> R;

/// Per-node data built once per execution (hash tables of independent sides).
pub(crate) enum Cached {
    /// Rows of a side run on its own, hashed on key variables.
    Hashed(Hashed),
}

/// Rows hashed on some of their columns; rows with an unbound key are kept apart and always checked. One table
/// entry per distinct key, its rows chained in insertion order: many rows sharing a key (a seed keyed on a
/// predicate) cost one probe each, not a probe sequence through all rows of that hash.
pub(crate) struct Hashed {
    rows: Rows,
    keys: Vec<VarId>,
    /// Per distinct key: its first and last row.
    table: HashTable<(u32, u32)>,
    /// Per row: the next row with the same key (`u32::MAX` ends the chain).
    next: Vec<u32>,
    loose: Vec<u32>,
    hasher: DefaultHashBuilder,
}

impl Hashed {
    fn build(rows: Rows, keys: Vec<VarId>) -> Self {
        let hasher = DefaultHashBuilder::default();
        let mut table: HashTable<(u32, u32)> = HashTable::new();
        let mut next = vec![u32::MAX; rows.len()];
        let mut loose = Vec::new();
        let same = |a: usize, b: usize| {
            let (a, b) = (rows.row(a), rows.row(b));
            keys.iter().all(|k| a[k.index()] == b[k.index()])
        };
        for i in 0..rows.len() {
            match key_hash(&hasher, &keys, rows.row(i)) {
                Some(h) => match table.find_mut(h, |&(first, _)| same(first as usize, i)) {
                    Some((_, last)) => {
                        next[*last as usize] = i as u32;
                        *last = i as u32;
                    }
                    None => {
                        table.insert_unique(h, (i as u32, i as u32), |&(first, _)| {
                            key_hash(&hasher, &keys, rows.row(first as usize))
                                .expect("hashed rows have their keys")
                        });
                    }
                },
                None => loose.push(i as u32),
            }
        }
        Self {
            rows,
            keys,
            table,
            next,
            loose,
            hasher,
        }
    }

    /// Calls `f` with every stored row that may be compatible with `row` (same key values, or any when `row`
    /// lacks a key); `f` returns `false` to stop.
    fn candidates(&self, row: &[TermId], mut f: impl FnMut(&[TermId]) -> bool) {
        match key_hash(&self.hasher, &self.keys, row) {
            Some(h) => {
                let key_of = |i: u32| self.rows.row(i as usize);
                let found = self.table.find(h, |&(first, _)| {
                    let cand = key_of(first);
                    self.keys.iter().all(|k| cand[k.index()] == row[k.index()])
                });
                if let Some(&(first, _)) = found {
                    let mut i = first;
                    while i != u32::MAX {
                        if !f(key_of(i)) {
                            return;
                        }
                        i = self.next[i as usize];
                    }
                }
                for &i in &self.loose {
                    if !f(self.rows.row(i as usize)) {
                        return;
                    }
                }
            }
            None => {
                for cand in self.rows.iter() {
                    if !f(cand) {
                        return;
                    }
                }
            }
        }
    }
}

fn key_hash(hasher: &DefaultHashBuilder, keys: &[VarId], row: &[TermId]) -> Option<u64> {
    let mut h = hasher.build_hasher();
    for k in keys {
        let v = row[k.index()];
        if v == ROW_UNBOUND {
            return None;
        }
        h.write_u32(v.0);
    }
    Some(h.finish())
}

/// Merges `b` into `a` (a copy of the left row) if the two are compatible; `false` otherwise.
#[inline]
fn merge(a: &mut [TermId], b: &[TermId]) -> bool {
    for (x, &y) in a.iter_mut().zip(b) {
        if y != ROW_UNBOUND {
            if *x == ROW_UNBOUND {
                *x = y;
            } else if *x != y {
                return false;
            }
        }
    }
    true
}

/// A node's output buffer: rows are written into it and handed on in batches.
/// Joins each input row with its compatible rows of `table`, into `out` (flushed as batches fill).
fn probe<'a>(
    table: &Hashed,
    input: &Rows,
    out: &mut Out<'_, 'a>,
    cx: &Context<'a>,
    st: &mut State<'a>,
) -> Result<Flow, ExecError> {
    for row in input.iter() {
        let mut flow = Flow::Continue;
        let mut err = None;
        table.candidates(row, |cand| {
            let new = out.buf.push_copy(row);
            if !merge(new, cand) {
                out.buf.pop();
            }
            match out.maybe_flush(cx, st) {
                Ok(f) => flow = f,
                Err(e) => err = Some(e),
            }
            flow == Flow::Continue && err.is_none()
        });
        if let Some(e) = err {
            return Err(e);
        }
        if flow == Flow::Stop {
            return Ok(Flow::Stop);
        }
    }
    out.flush(st)
}

struct Out<'s, 'a> {
    buf: Rows,
    sink: Sink<'s, 'a>,
    id: usize,
}

impl<'s, 'a> Out<'s, 'a> {
    fn new(width: usize, id: usize, sink: Sink<'s, 'a>) -> Self {
        Self {
            buf: Rows::with_capacity(width, BATCH),
            sink,
            id,
        }
    }

    fn full(&self) -> bool {
        self.buf.len() >= BATCH
    }

    fn flush(&mut self, st: &mut State<'a>) -> R {
        if self.buf.is_empty() {
            return Ok(Flow::Continue);
        }
        st.actual[self.id] += self.buf.len() as u64;
        let flow = (self.sink)(st, &self.buf)?;
        self.buf.clear();
        Ok(flow)
    }

    /// Flushes when full; `Stop` when the consumer is done.
    fn maybe_flush(&mut self, cx: &Context<'_>, st: &mut State<'a>) -> R {
        if self.full() {
            cx.cancel.check()?;
            return self.flush(st);
        }
        Ok(Flow::Continue)
    }
}

macro_rules! tri {
    ($e:expr) => {
        if $e? == Flow::Stop {
            return Ok(Flow::Stop);
        }
    };
}

/// Applies `node` to every row of `input`, handing output batches to `sink`.
pub fn run<'a>(
    cx: &Context<'a>,
    st: &mut State<'a>,
    node: &Node,
    input: &Rows,
    sink: Sink<'_, 'a>,
) -> R {
    if input.is_empty() {
        return Ok(Flow::Continue);
    }
    let width = input.width();
    match &node.kind {
        Kind::Empty => Ok(Flow::Continue),
        Kind::Unit => {
            st.actual[node.id] += input.len() as u64;
            sink(st, input)
        }
        Kind::Values { vars, rows } => {
            let mut out = Out::new(width, node.id, sink);
            // Rows that already bind some of the columns (VALUES after other operands, e.g. a semi-naive seed
            // the planner put second) look their matches up in a hash table of the values, built once.
            let bound: Vec<VarId> = input.iter().next().map_or_else(Vec::new, |first| {
                vars.iter()
                    .copied()
                    .filter(|v| first[v.index()] != ROW_UNBOUND)
                    .collect()
            });
            if !bound.is_empty() && rows.len() > 8 {
                if st.caches[node.id].is_none() {
                    let mut table = Rows::with_capacity(width, rows.len());
                    for vals in rows.iter() {
                        let new = table.push_copy(&vec![ROW_UNBOUND; width]);
                        for (v, val) in vars.iter().zip(vals) {
                            if let Some(val) = val {
                                new[v.index()] = *val;
                            }
                        }
                    }
                    st.caches[node.id] = Some(Cached::Hashed(Hashed::build(table, bound)));
                }
                let Some(Cached::Hashed(table)) = st.caches[node.id].take() else {
                    unreachable!("built above")
                };
                let result = probe(&table, input, &mut out, cx, st);
                st.caches[node.id] = Some(Cached::Hashed(table));
                return result;
            }
            for row in input.iter() {
                for vals in rows.iter() {
                    let new = out.buf.push_copy(row);
                    let ok = vars.iter().zip(vals).all(|(v, val)| match val {
                        None => true,
                        Some(val) => {
                            let cell = &mut new[v.index()];
                            if *cell == ROW_UNBOUND {
                                *cell = *val;
                                true
                            } else {
                                *cell == *val
                            }
                        }
                    });
                    if !ok {
                        out.buf.pop();
                    }
                    tri!(out.maybe_flush(cx, st));
                }
            }
            out.flush(st)
        }
        Kind::Scan(tp) => scan(cx, st, (node.id, None), tp, input, sink),
        Kind::Probe(tp, key) => scan(cx, st, (node.id, Some(key)), tp, input, sink),
        Kind::Path {
            subject,
            path: p,
            object,
            graph,
        } => {
            let mut out = Out::new(width, node.id, sink);
            let named = &cx.named;
            for row in input.iter() {
                let lookup = |t: [TermId; 3]| cx_lookup_triple(st, t);
                let s = resolve(subject, row, &lookup);
                let o = resolve(object, row, &lookup);
                let (s_var, o_var) = (is_var(subject), is_var(object));
                let (gs, gvar) = graphs(cx, named, graph, row);
                for &g in gs.as_slice() {
                    let mut pairs = Vec::new();
                    path::pairs(cx, &mut st.links, g, p, s, o, s_var, o_var, &mut |a, b| {
                        pairs.push((a, b));
                        Ok(true)
                    })?;
                    for (a, b) in pairs {
                        let new = out.buf.push_copy(row);
                        if let Some(gv) = gvar {
                            new[gv] = g;
                        }
                        if !(unify(subject, a, new, &st.terms) && unify(object, b, new, &st.terms))
                        {
                            out.buf.pop();
                        }
                        tri!(out.maybe_flush(cx, st));
                    }
                }
            }
            out.flush(st)
        }
        Kind::GraphName(g) => {
            let mut out = Out::new(width, node.id, sink);
            for row in input.iter() {
                let (gs, gvar) = graphs(cx, &cx.named, g, row);
                for &gid in gs.as_slice() {
                    let new = out.buf.push_copy(row);
                    if let Some(gv) = gvar {
                        new[gv] = gid;
                    }
                    tri!(out.maybe_flush(cx, st));
                }
            }
            out.flush(st)
        }
        Kind::Seq(stages) => {
            let id = node.id;
            run_seq(cx, st, stages, input, &mut |st, rows| {
                st.actual[id] += rows.len() as u64;
                sink(st, rows)
            })
        }
        Kind::Filter { expr, exists } => {
            let flags = exists_flags(cx, st, exists, input)?;
            let ev = Eval {
                terms: &st.terms,
                env: &cx.env,
                exists: &flags,
            };
            let mut kept = Rows::with_capacity(width, input.len());
            for (i, row) in input.iter().enumerate() {
                if ev.test(expr, row, i) {
                    kept.push(row);
                }
            }
            if kept.is_empty() {
                return Ok(Flow::Continue);
            }
            st.actual[node.id] += kept.len() as u64;
            sink(st, &kept)
        }
        Kind::Extend { var, expr, exists } => {
            let flags = exists_flags(cx, st, exists, input)?;
            let mut out = Rows::with_capacity(width, input.len());
            for (i, row) in input.iter().enumerate() {
                let value = {
                    let ev = Eval {
                        terms: &st.terms,
                        env: &cx.env,
                        exists: &flags,
                    };
                    ev.eval(expr, row, i).map(Value::into_owned)
                };
                let new = out.push_copy(row);
                if let Some(v) = value {
                    let bnodes = &mut st.bnodes;
                    let id =
                        intern_value(&mut st.terms, v, &mut |terms, l| bnodes.node(terms, l, row));
                    let cell = &mut new[var.index()];
                    if *cell == ROW_UNBOUND {
                        *cell = id;
                    } else if *cell != id {
                        out.pop();
                    }
                }
            }
            if out.is_empty() {
                return Ok(Flow::Continue);
            }
            st.actual[node.id] += out.len() as u64;
            sink(st, &out)
        }
        Kind::HashJoin { build, keys } => {
            ensure_hashed(cx, st, node.id, build, keys, width)?;
            let mut out = Out::new(width, node.id, sink);
            let Some(Cached::Hashed(table)) = st.caches[node.id].take() else {
                unreachable!("built above")
            };
            let result = probe(&table, input, &mut out, cx, st);
            st.caches[node.id] = Some(Cached::Hashed(table));
            result
        }
        Kind::Union(branches) => {
            // The rows every branch gives, counted as they pass (for --explain-plan's "actual").
            let id = node.id;
            for b in branches {
                tri!(run(
                    cx,
                    st,
                    b,
                    input,
                    &mut |st: &mut State<'a>, rows: &Rows| {
                        st.actual[id] += rows.len() as u64;
                        sink(st, rows)
                    }
                ));
            }
            Ok(Flow::Continue)
        }
        Kind::LeftJoin {
            right,
            filter,
            exists,
            mode,
        } => left_join(
            cx,
            st,
            node.id,
            right,
            filter.as_ref(),
            exists,
            mode,
            input,
            sink,
        ),
        Kind::Minus { right, context } => {
            ensure_hashed(cx, st, node.id, right, &[], width)?;
            let Some(Cached::Hashed(table)) = &st.caches[node.id] else {
                unreachable!("built above")
            };
            let mut kept = Rows::with_capacity(width, input.len());
            for row in input.iter() {
                let mut removed = false;
                table.candidates(row, |cand| {
                    let mut shared = false;
                    let mut compatible = true;
                    for (c, (x, y)) in row.iter().zip(cand).enumerate() {
                        if *x != ROW_UNBOUND && *y != ROW_UNBOUND {
                            shared |= !context.iter().any(|v| v.index() == c);
                            if x != y {
                                compatible = false;
                                break;
                            }
                        }
                    }
                    removed = shared && compatible;
                    !removed
                });
                if !removed {
                    kept.push(row);
                }
            }
            if kept.is_empty() {
                return Ok(Flow::Continue);
            }
            st.actual[node.id] += kept.len() as u64;
            sink(st, &kept)
        }
        Kind::Project { input: inner, vars } => {
            // Per input row (a subquery's scope), streamed: each output row is the input row with the projected
            // variables of the inner rows.
            let keep: Vec<usize> = vars.iter().map(|v| v.index()).collect();
            let mut single = Rows::with_capacity(width, 1);
            let id = node.id;
            for row in input.iter() {
                single.clear();
                single.push(row);
                let flow = run(cx, st, inner, &single, &mut |st, rows| {
                    let mut out = Rows::with_capacity(width, rows.len());
                    for r in rows.iter() {
                        let new = out.push_copy(row);
                        let mut ok = true;
                        for &c in &keep {
                            let v = r[c];
                            if v == ROW_UNBOUND {
                                continue;
                            }
                            if new[c] == ROW_UNBOUND {
                                new[c] = v;
                            } else if new[c] != v {
                                ok = false;
                                break;
                            }
                        }
                        if !ok {
                            out.pop();
                        }
                    }
                    if out.is_empty() {
                        return Ok(Flow::Continue);
                    }
                    st.actual[id] += out.len() as u64;
                    sink(st, &out)
                })?;
                if flow == Flow::Stop {
                    return Ok(Flow::Stop);
                }
            }
            Ok(Flow::Continue)
        }
        Kind::Distinct(inner) => {
            let id = node.id;
            let mut single = Rows::with_capacity(width, 1);
            for row in input.iter() {
                single.clear();
                single.push(row);
                let mut seen = RowSet::new(width);
                let flow = run(cx, st, inner, &single, &mut |st, rows| {
                    let mut out = Rows::with_capacity(width, rows.len());
                    for r in rows.iter() {
                        if seen.insert(r) {
                            out.push(r);
                        }
                    }
                    if out.is_empty() {
                        return Ok(Flow::Continue);
                    }
                    st.actual[id] += out.len() as u64;
                    sink(st, &out)
                })?;
                if flow == Flow::Stop {
                    return Ok(Flow::Stop);
                }
            }
            Ok(Flow::Continue)
        }
        Kind::Group { .. } | Kind::OrderBy { .. } | Kind::Slice { .. } => {
            // A subquery (or the solution modifiers of a query) is evaluated on its own for each input row, then
            // joined with it: its groups, limits and projections never mix rows of different contexts.
            let mut out = Out::new(width, node.id, sink);
            let mut single = Rows::with_capacity(width, 1);
            for row in input.iter() {
                single.clear();
                single.push(row);
                let results = scope(cx, st, node, &single)?;
                for r in results.iter() {
                    let new = out.buf.push_copy(row);
                    if !merge(new, r) {
                        out.buf.pop();
                    }
                    tri!(out.maybe_flush(cx, st));
                }
            }
            out.flush(st)
        }
    }
}

/// The rows of a scope node (subquery or solution modifier) for one input row.
fn scope<'a>(
    cx: &Context<'a>,
    st: &mut State<'a>,
    node: &Node,
    input: &Rows,
) -> Result<Rows, ExecError> {
    let width = input.width();
    match &node.kind {
        Kind::Group {
            input: inner,
            keys,
            aggregates,
        } => {
            let rows = collect_rows(cx, st, inner, input)?;
            let mut out = Rows::new(width);
            aggregate::group(cx, st, keys, aggregates, &rows, &mut out);
            Ok(out)
        }
        Kind::OrderBy { input: inner, keys } => {
            let rows = collect_rows(cx, st, inner, input)?;
            Ok(sort_rows(cx, st, keys, &rows))
        }
        Kind::Slice {
            input: inner,
            offset,
            limit,
        } => {
            let (offset, limit) = (*offset, *limit);
            let mut out = Rows::new(width);
            if limit == Some(0) {
                return Ok(out);
            }
            let mut skipped = 0usize;
            run(cx, st, inner, input, &mut |_, rows| {
                for row in rows.iter() {
                    if skipped < offset {
                        skipped += 1;
                        continue;
                    }
                    if limit.is_some_and(|l| out.len() >= l) {
                        break;
                    }
                    out.push(row);
                }
                Ok(if limit.is_some_and(|l| out.len() >= l) {
                    Flow::Stop
                } else {
                    Flow::Continue
                })
            })?;
            Ok(out)
        }
        _ => unreachable!("not a scope node"),
    }
}

fn cx_lookup_triple(st: &State<'_>, t: [TermId; 3]) -> Option<TermId> {
    st.terms
        .main()
        .lookup_triple(t)
        .or_else(|| st.terms.local().lookup_triple(t))
}

/// Applies stages in order, each to the output of the one before.
fn run_seq<'a>(
    cx: &Context<'a>,
    st: &mut State<'a>,
    stages: &[Node],
    input: &Rows,
    sink: Sink<'_, 'a>,
) -> R {
    match stages {
        [] => sink(st, input),
        [only] => run(cx, st, only, input, sink),
        [first, rest @ ..] => run(cx, st, first, input, &mut |st, rows| {
            run_seq(cx, st, rest, rows, sink)
        }),
    }
}

/// The index nested-loop join of each input row with a triple pattern's matches.
/// Extends each input row with the matches of `tp`; with `probe` (a [`Kind::Probe`]'s key), keeps each row once,
/// and drops unprobed a row whose key is that of the row kept last (the rows a scan before made for one input
/// row come together, and all but the first are duplicates for what follows once one has matched).
fn scan<'a>(
    cx: &Context<'a>,
    st: &mut State<'a>,
    (id, probe): (usize, Option<&[VarId]>),
    tp: &TriplePattern,
    input: &Rows,
    sink: Sink<'_, 'a>,
) -> R {
    let mut out = Out::new(input.width(), id, sink);
    let multi_default = matches!(tp.graph, GraphTerm::Default) && cx.dataset.default.len() > 1;
    let mut scan = crate::store::Scan::empty();
    let once = probe.is_some();
    let key = probe.unwrap_or_default();
    let same_key = |a: &[TermId], b: &[TermId]| key.iter().all(|v| a[v.index()] == b[v.index()]);
    let mut kept: Option<usize> = None;
    for (i, row) in input.iter().enumerate() {
        if kept.is_some_and(|k| same_key(input.row(k), row)) {
            continue;
        }
        let mut pattern: Pattern = [None; 3];
        let mut impossible = false;
        for (k, t) in tp.terms.iter().enumerate() {
            let lookup = |t: [TermId; 3]| cx_lookup_triple(st, t);
            match resolve(t, row, &lookup) {
                Resolved::Fixed(v) => pattern[k] = Some(v),
                Resolved::Free => {}
                Resolved::Impossible => impossible = true,
            }
        }
        if impossible {
            continue;
        }
        let (gs, gvar) = graphs(cx, &cx.named, &tp.graph, row);
        let gs = gs.as_slice();
        'graphs: for (gi, &g) in gs.iter().enumerate() {
            cx.view.scan_into(g, &pattern, &mut scan);
            for triple in &mut scan {
                if multi_default
                    && gs[..gi]
                        .iter()
                        .any(|&earlier| cx.view.contains(earlier, triple))
                {
                    continue; // the default graph is the merge: a triple in two FROM graphs counts once
                }
                let new = out.buf.push_copy(row);
                if let Some(gv) = gvar {
                    new[gv] = g;
                }
                let ok = (0..3).all(|k| {
                    pattern[k].is_some() || unify(&tp.terms[k], triple[k], new, &st.terms)
                });
                if !ok {
                    out.buf.pop();
                    continue;
                }
                tri!(out.maybe_flush(cx, st));
                if once {
                    kept = Some(i);
                    break 'graphs;
                }
            }
        }
    }
    out.flush(st)
}

/// Runs `node` from `input` and collects everything it outputs.
fn collect_rows<'a>(
    cx: &Context<'a>,
    st: &mut State<'a>,
    node: &Node,
    input: &Rows,
) -> Result<Rows, ExecError> {
    let mut all = Rows::new(input.width());
    run(cx, st, node, input, &mut |_, rows| {
        all.extend_from(rows);
        Ok(Flow::Continue)
    })?;
    Ok(all)
}

/// Builds (once per execution) the hash table of a side that runs on its own.
fn ensure_hashed<'a>(
    cx: &Context<'a>,
    st: &mut State<'a>,
    id: usize,
    side: &Node,
    keys: &[VarId],
    width: usize,
) -> Result<(), ExecError> {
    if st.caches[id].is_some() {
        return Ok(());
    }
    let rows = collect_rows(cx, st, side, &Rows::unit(width))?;
    let keys = if keys.is_empty() {
        common_keys(&rows)
    } else {
        keys.to_vec()
    };
    st.caches[id] = Some(Cached::Hashed(Hashed::build(rows, keys)));
    Ok(())
}

/// The columns bound in every row (the hash key when the planner named none), at most four.
fn common_keys(rows: &Rows) -> Vec<VarId> {
    if rows.is_empty() {
        return Vec::new();
    }
    (0..rows.width())
        .filter(|&c| rows.iter().all(|r| r[c] != ROW_UNBOUND))
        .take(4)
        .map(|c| VarId(c as u32))
        .collect()
}

/// Runs each EXISTS pattern once for the whole batch, seeded by its rows; one flag per row and pattern.
fn exists_flags<'a>(
    cx: &Context<'a>,
    st: &mut State<'a>,
    exists: &[ExistsPlan],
    input: &Rows,
) -> Result<Vec<(usize, Vec<bool>)>, ExecError> {
    let mut all = Vec::with_capacity(exists.len());
    for e in exists {
        let mut seeds = input.clone();
        for i in 0..seeds.len() {
            seeds.row_mut(i)[e.seed.index()] = TermId(i as u32);
        }
        let mut flags = vec![false; input.len()];
        let seed = e.seed.index();
        run(cx, st, &e.plan, &seeds, &mut |_, rows| {
            for row in rows.iter() {
                flags[row[seed].0 as usize] = true;
            }
            Ok(Flow::Continue)
        })?;
        all.push((e.key, flags));
    }
    Ok(all)
}

#[allow(clippy::too_many_arguments)]
fn left_join<'a>(
    cx: &Context<'a>,
    st: &mut State<'a>,
    id: usize,
    right: &Node,
    filter: Option<&Expr>,
    exists: &[ExistsPlan],
    mode: &LeftMode,
    input: &Rows,
    sink: Sink<'_, 'a>,
) -> R {
    let width = input.width();
    // Candidate joined rows, each with the index of the input row it extends.
    let mut merged = Rows::new(width);
    let mut origin: Vec<u32> = Vec::new();
    match mode {
        LeftMode::Seeded { seed } => {
            let mut seeds = input.clone();
            for i in 0..seeds.len() {
                seeds.row_mut(i)[seed.index()] = TermId(i as u32);
            }
            let s = seed.index();
            run(cx, st, right, &seeds, &mut |_, rows| {
                for row in rows.iter() {
                    origin.push(row[s].0);
                    merged.push_copy(row)[s] = ROW_UNBOUND;
                }
                Ok(Flow::Continue)
            })?;
            // Seeded output arrives grouped by batch, not by seed: order it by input row.
            let mut order: Vec<usize> = (0..origin.len()).collect();
            order.sort_by_key(|&k| origin[k]);
            let mut sorted = Rows::with_capacity(width, order.len());
            for &k in &order {
                sorted.push(merged.row(k));
            }
            merged = sorted;
            origin = order.iter().map(|&k| origin[k]).collect();
        }
        LeftMode::Hash { keys } => {
            ensure_hashed(cx, st, id, right, keys, width)?;
            let Some(Cached::Hashed(table)) = &st.caches[id] else {
                unreachable!("built above")
            };
            for (i, row) in input.iter().enumerate() {
                table.candidates(row, |cand| {
                    let new = merged.push_copy(row);
                    if merge(new, cand) {
                        origin.push(i as u32);
                    } else {
                        merged.pop();
                    }
                    true
                });
            }
        }
    }
    let keep: Vec<bool> = match filter {
        None => vec![true; merged.len()],
        Some(f) => {
            let flags = exists_flags(cx, st, exists, &merged)?;
            let ev = Eval {
                terms: &st.terms,
                env: &cx.env,
                exists: &flags,
            };
            merged
                .iter()
                .enumerate()
                .map(|(k, row)| ev.test(f, row, k))
                .collect()
        }
    };
    let mut out = Out::new(width, id, sink);
    let mut k = 0;
    for (i, row) in input.iter().enumerate() {
        let mut matched = false;
        while k < origin.len() && origin[k] as usize == i {
            if keep[k] {
                out.buf.push(merged.row(k));
                matched = true;
                tri!(out.maybe_flush(cx, st));
            }
            k += 1;
        }
        if !matched {
            out.buf.push(row);
            tri!(out.maybe_flush(cx, st));
        }
    }
    out.flush(st)
}

/// Sorts rows by ORDER BY keys (stable, so ties keep their order).
fn sort_rows(cx: &Context<'_>, st: &mut State<'_>, keys: &[(Expr, bool)], rows: &Rows) -> Rows {
    let ev = Eval {
        terms: &st.terms,
        env: &cx.env,
        exists: &[],
    };
    let values: Vec<Vec<Option<Value<'_>>>> = rows
        .iter()
        .enumerate()
        .map(|(i, row)| keys.iter().map(|(e, _)| ev.eval(e, row, i)).collect())
        .collect();
    let mut idx: Vec<usize> = (0..rows.len()).collect();
    idx.sort_by(|&a, &b| {
        for (k, (_, desc)) in keys.iter().enumerate() {
            let o = order(&st.terms, values[a][k].as_ref(), values[b][k].as_ref());
            let o = if *desc { o.reverse() } else { o };
            if o.is_ne() {
                return o;
            }
        }
        std::cmp::Ordering::Equal
    });
    let mut out = Rows::with_capacity(rows.width(), rows.len());
    for i in idx {
        out.push(rows.row(i));
    }
    out
}

/// A set of rows without one allocation per row: rows live in one buffer, the table holds their indices.
struct RowSet {
    rows: Rows,
    table: HashTable<u32>,
    hasher: DefaultHashBuilder,
}

impl RowSet {
    fn new(width: usize) -> Self {
        Self {
            rows: Rows::new(width),
            table: HashTable::new(),
            hasher: DefaultHashBuilder::default(),
        }
    }

    /// `true` if `row` was not in the set yet.
    fn insert(&mut self, row: &[TermId]) -> bool {
        let h = self.hasher.hash_one(row);
        if self
            .table
            .find(h, |&i| self.rows.row(i as usize) == row)
            .is_some()
        {
            return false;
        }
        let i = self.rows.len() as u32;
        self.rows.push(row);
        let (rows, hasher) = (&self.rows, &self.hasher);
        self.table
            .insert_unique(h, i, |&j| hasher.hash_one(rows.row(j as usize)));
        true
    }
}

/// Whether a pattern position is a variable (for callers that only need the simple case).
pub fn is_var(t: &PatternTerm) -> bool {
    matches!(t, PatternTerm::Var(_))
}
