//! This module defines the derived-facts [`Overlay`] and the [`View`] that scans `base ⊕ derived` as one store.
//!
//! Derived facts live per graph in a few sorted runs. Each run keeps one SPO-sorted array plus two index
//! permutations (POS, OSP) of 4 bytes a fact. Adding a batch makes it a new run, then merges runs geometrically
//! (datafrog's `Variable::changed`): while the newest run is at least half the size of the one before, the two are
//! merged in linear time. So a pass costs about `O(new · log n)` and a fixpoint of a thousand passes never rebuilds
//! a million facts a thousand times; at most `log₂ n` runs exist at once.

use rayon::slice::ParallelSliceMut;
use smallvec::SmallVec;

use super::quads::{
    Fences, Pattern, Perm, QuadStore, Renumber, fenced_range, gallop, order_on_first_use,
};
use super::term::{Quad, TermId, Triple};

/// One sorted, duplicate-free run of derived triples. The index permutations are built on first use: a run no
/// later rule scans by predicate or object (the last stage's, typically) never pays for them.
#[derive(Debug, Default)]
struct Run {
    spo: Vec<Triple>,
    pos: std::sync::OnceLock<Vec<u32>>,
    osp: std::sync::OnceLock<Vec<u32>>,
    /// The distinct predicates of the run, sorted: a pattern whose predicate is absent skips the run. After
    /// triples are taken out, a superset (a predicate none of the rest has may stay).
    preds: Vec<TermId>,
    /// The fences of its three orders, built on first use (and again after the run changes).
    fences: Fences,
    /// Tombstones: a bit per position of `spo` marked as taken out but still in the arrays (empty: none), and
    /// how many. A few facts taken out of a large run are marked ([`Run::mark_out`]) instead of moving the whole
    /// run and its permutations; scans and lookups skip them, and [`Run::compact`] takes them out for good.
    dead: Vec<u64>,
    dead_count: usize,
}

impl Clone for Run {
    fn clone(&self) -> Self {
        let copy = |l: &std::sync::OnceLock<Vec<u32>>| {
            let c = std::sync::OnceLock::new();
            if let Some(v) = l.get() {
                let _ = c.set(v.clone());
            }
            c
        };
        Self {
            spo: self.spo.clone(),
            pos: copy(&self.pos),
            osp: copy(&self.osp),
            preds: self.preds.clone(),
            fences: self.fences.clone(),
            dead: self.dead.clone(),
            dead_count: self.dead_count,
        }
    }
}

/// The distinct predicates of SPO-sorted triples, sorted.
fn predicates(spo: &[Triple]) -> Vec<TermId> {
    let mut preds: Vec<TermId> = Vec::new();
    let mut last: Option<TermId> = None;
    for t in spo {
        if last == Some(t[1]) {
            continue;
        }
        last = Some(t[1]);
        if let Err(i) = preds.binary_search(&t[1]) {
            preds.insert(i, t[1]);
        }
    }
    preds
}

impl Run {
    fn new(mut spo: Vec<Triple>) -> Self {
        if !spo.is_sorted() {
            if spo.len() > 1 << 14 {
                spo.par_sort_unstable();
            } else {
                spo.sort_unstable();
            }
        }
        spo.dedup();
        let preds = predicates(&spo);
        Self {
            spo,
            pos: std::sync::OnceLock::new(),
            osp: std::sync::OnceLock::new(),
            preds,
            fences: Fences::default(),
            dead: Vec::new(),
            dead_count: 0,
        }
    }

    /// Whether position `i` is a tombstone.
    #[inline]
    fn is_dead(&self, i: usize) -> bool {
        self.dead_count > 0 && is_dead(&self.dead, i)
    }

    /// Marks positions `at` (increasing, live) as taken out.
    fn mark_out(&mut self, at: &[u32]) {
        if self.dead.is_empty() {
            self.dead = vec![0; self.spo.len().div_ceil(64)];
        }
        for &i in at {
            self.dead[i as usize / 64] |= 1 << (i % 64);
        }
        self.dead_count += at.len();
    }

    /// Its SPO array, which holds exactly its facts: reading a run with tombstones whole is a bug (a fact taken
    /// out would read as held), so it stops the program rather than give a wrong answer.
    fn compacted_spo(&self) -> &[Triple] {
        assert_eq!(self.dead_count, 0, "the array of a run with tombstones");
        &self.spo
    }

    /// Takes the tombstones out for good.
    fn compact(&mut self) {
        if self.dead_count > 0 {
            self.take_out(&[]);
        }
    }

    fn pos(&self) -> &[u32] {
        order_on_first_use(
            &self.pos,
            &self.spo,
            Perm::Pos,
            self.osp.get().map(Vec::as_slice),
        )
    }

    fn osp(&self) -> &[u32] {
        order_on_first_use(&self.osp, &self.spo, Perm::Osp, None)
    }

    /// Merges two disjoint runs in linear time, the permutations both have included (others are built on use).
    fn merge(mut a: Run, mut b: Run) -> Run {
        a.compact();
        b.compact();
        let n = a.spo.len() + b.spo.len();
        let mut spo = Vec::with_capacity(n);
        // Where each old index lands in the merged array (only needed when a permutation is merged too).
        let track = (a.pos.get().is_some() && b.pos.get().is_some())
            || (a.osp.get().is_some() && b.osp.get().is_some());
        let mut a_to = vec![0u32; if track { a.spo.len() } else { 0 }];
        let mut b_to = vec![0u32; if track { b.spo.len() } else { 0 }];
        let (mut i, mut j) = (0, 0);
        while i < a.spo.len() || j < b.spo.len() {
            let take_a = j == b.spo.len() || (i < a.spo.len() && a.spo[i] <= b.spo[j]);
            if take_a {
                if track {
                    a_to[i] = spo.len() as u32;
                }
                spo.push(a.spo[i]);
                i += 1;
            } else {
                if track {
                    b_to[j] = spo.len() as u32;
                }
                spo.push(b.spo[j]);
                j += 1;
            }
        }
        let merge_perm = |perm: Perm, pa: &[u32], pb: &[u32]| {
            let mut out = Vec::with_capacity(n);
            let (mut i, mut j) = (0, 0);
            while i < pa.len() || j < pb.len() {
                let take_a = j == pb.len()
                    || (i < pa.len()
                        && perm.to_key(a.spo[pa[i] as usize])
                            <= perm.to_key(b.spo[pb[j] as usize]));
                if take_a {
                    out.push(a_to[pa[i] as usize]);
                    i += 1;
                } else {
                    out.push(b_to[pb[j] as usize]);
                    j += 1;
                }
            }
            out
        };
        let merged =
            |perm: Perm, la: &std::sync::OnceLock<Vec<u32>>, lb: &std::sync::OnceLock<Vec<u32>>| {
                let cell = std::sync::OnceLock::new();
                if let (Some(pa), Some(pb)) = (la.get(), lb.get()) {
                    let _ = cell.set(merge_perm(perm, pa, pb));
                }
                cell
            };
        let pos = merged(Perm::Pos, &a.pos, &b.pos);
        let osp = merged(Perm::Osp, &a.osp, &b.osp);
        let mut preds = a.preds.clone();
        for p in &b.preds {
            if let Err(i) = preds.binary_search(p) {
                preds.insert(i, *p);
            }
        }
        Run {
            spo,
            pos,
            osp,
            preds,
            fences: Fences::default(),
            dead: Vec::new(),
            dead_count: 0,
        }
    }

    /// The facts it holds (tombstones not counted).
    fn len(&self) -> usize {
        self.spo.len() - self.dead_count
    }

    /// Keeps the triples `keep` accepts; the permutations built so far are carried over (no sort).
    fn retain(&mut self, keep: &impl Fn(&Triple) -> bool) {
        self.compact();
        let at: Vec<u32> = (self.spo.iter().enumerate())
            .filter(|(_, t)| !keep(t))
            .map(|(i, _)| i as u32)
            .collect();
        self.take_out(&at);
    }

    /// Takes out the triples of `gone` (SPO-sorted) it holds, found by galloping from the last: a run that holds none is
    /// left untouched, and no triple is looked up in a set.
    ///
    /// With `mark` (`Some(k)`), facts are marked as tombstones instead ([`Run::mark_out`]) while they and the
    /// tombstones already there are fewer than one position in `k`.
    fn remove_sorted(&mut self, gone: &[Triple], mark: Option<usize>) {
        let mut at: Vec<u32> = Vec::new();
        let mut from = 0;
        for t in gone {
            let i = from + gallop(&self.spo[from..], |x| x < t);
            if self.spo.get(i) == Some(t) {
                if !self.is_dead(i) {
                    at.push(i as u32);
                }
                from = i + 1;
            } else {
                from = i;
            }
        }
        if at.is_empty() {
            return;
        }
        if mark.is_some_and(|k| (at.len() + self.dead_count).saturating_mul(k) < self.spo.len()) {
            self.mark_out(&at);
        } else {
            self.take_out(&at);
        }
    }

    /// Takes out the triples at positions `at` (increasing), in place, the permutations built so far carried
    /// over: the kept triples move down between the positions taken out, and each permutation entry drops by
    /// how many of those positions lie below it ([`Renumber`]); the three arrays are rewritten in parallel.
    /// The tombstones go too.
    fn take_out(&mut self, at: &[u32]) {
        let merged: Vec<u32>;
        let at = if self.dead_count == 0 {
            at
        } else {
            // The tombstones and `at` (disjoint: `at` holds live positions), in order.
            let mut all: Vec<u32> = Vec::with_capacity(self.dead_count + at.len());
            for (w, &word) in self.dead.iter().enumerate() {
                let mut bits = word;
                while bits != 0 {
                    all.push(w as u32 * 64 + bits.trailing_zeros());
                    bits &= bits - 1;
                }
            }
            all.extend_from_slice(at);
            all.sort_unstable();
            self.dead = Vec::new();
            self.dead_count = 0;
            merged = all;
            &merged
        };
        if at.is_empty() {
            return;
        }
        self.fences = Fences::default();
        let renumber = Renumber::new(self.spo.len(), at, Vec::new());
        // A permutation entry's new value; taken out with its triple.
        let renumber = |order: &mut Vec<u32>| {
            order.retain_mut(|v| match renumber.get(*v) {
                Some(n) => {
                    *v = n;
                    true
                }
                None => false,
            })
        };
        // The predicates stay as they were: a superset still skips only runs that hold none of a pattern's
        // predicate, and listing them again would be a pass over the whole run for each removal.
        let spo = &mut self.spo;
        let (pos, osp) = (self.pos.get_mut(), self.osp.get_mut());
        rayon::join(
            || {
                // The triples between two taken-out positions move down as one block.
                let mut to = at[0] as usize;
                for (k, &i) in at.iter().enumerate() {
                    let end = at.get(k + 1).map_or(spo.len(), |&j| j as usize);
                    spo.copy_within(i as usize + 1..end, to);
                    to += end - i as usize - 1;
                }
                spo.truncate(to);
            },
            || rayon::join(|| pos.map(renumber), || osp.map(renumber)),
        );
    }

    fn cursor(&self, pattern: &Pattern) -> Cursor<'_> {
        if let Some(p) = pattern[1] {
            if self.preds.binary_search(&p).is_err() {
                return Cursor::Keys(&[]);
            }
        }
        let (perm, len) = Perm::for_pattern(pattern);
        let prefix = perm.prefix(pattern);
        let dead = (self.dead_count > 0).then_some(self.dead.as_slice());
        let mut cursor = match perm {
            Perm::Spo => {
                let fence = || self.fences.of(perm, &self.spo, None);
                let range = fenced_range(&self.spo, |k| *k, fence, prefix, len);
                match dead {
                    None => Cursor::Keys(&self.spo[range]),
                    Some(dead) => Cursor::LiveKeys {
                        keys: &self.spo[range.clone()],
                        at: range.start,
                        dead,
                    },
                }
            }
            Perm::Pos | Perm::Osp => {
                let idx = if perm == Perm::Pos {
                    self.pos()
                } else {
                    self.osp()
                };
                let fence = || self.fences.of(perm, &self.spo, Some(idx));
                let key_of = |&i: &u32| perm.to_key(self.spo[i as usize]);
                let idx = &idx[fenced_range(idx, key_of, fence, prefix, len)];
                match dead {
                    None => Cursor::Indexed {
                        idx,
                        spo: &self.spo,
                    },
                    Some(dead) => Cursor::LiveIndexed {
                        idx,
                        spo: &self.spo,
                        dead,
                    },
                }
            }
        };
        cursor.skip_dead();
        cursor
    }

    fn heap_bytes(&self) -> usize {
        self.dead.capacity() * size_of::<u64>()
            + self.spo.capacity() * size_of::<Triple>()
            + self.fences.heap_bytes()
            + (self.pos.get().map_or(0, Vec::capacity)
                + self.osp.get().map_or(0, Vec::capacity)
                + self.preds.capacity())
                * 4
    }
}

/// The derived facts of one graph.
#[derive(Debug, Default, Clone)]
struct DerivedGraph {
    /// Runs by decreasing size.
    runs: Vec<Run>,
}

impl DerivedGraph {
    fn add(&mut self, triples: Vec<Triple>) {
        self.runs.push(Run::new(triples));
        // Merge while the newest run is at least half the size of the one before it.
        while self.runs.len() >= 2 {
            let last = self.runs[self.runs.len() - 1].len();
            let before = self.runs[self.runs.len() - 2].len();
            if 2 * last < before {
                break;
            }
            let b = self.runs.pop().expect("two runs");
            let a = self.runs.pop().expect("two runs");
            self.runs.push(Run::merge(a, b));
        }
    }

    fn len(&self) -> usize {
        self.runs.iter().map(Run::len).sum()
    }
}

/// The facts derived so far, partitioned by graph; disjoint from the asserted facts and from each other.
#[derive(Debug, Default, Clone)]
pub struct Overlay {
    graphs: Vec<(TermId, DerivedGraph)>,
}

impl Overlay {
    /// An empty overlay.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds new facts to a graph. The caller guarantees they are neither asserted nor already derived (the
    /// fixpoint's dedup set does); counts and scans rely on it.
    pub fn add(&mut self, graph: TermId, triples: Vec<Triple>) {
        if triples.is_empty() {
            return;
        }
        let i = match self.graphs.binary_search_by_key(&graph, |(g, _)| *g) {
            Ok(i) => i,
            Err(i) => {
                self.graphs.insert(i, (graph, DerivedGraph::default()));
                i
            }
        };
        self.graphs[i].1.add(triples);
    }

    fn graph(&self, graph: TermId) -> Option<&DerivedGraph> {
        self.graphs
            .binary_search_by_key(&graph, |(g, _)| *g)
            .ok()
            .map(|i| &self.graphs[i].1)
    }

    /// Every derived fact as a quad (in no particular order), each run freed as soon as it is copied: the copy
    /// never holds all the facts twice.
    pub fn into_quads(self) -> Vec<super::Quad> {
        let mut out = Vec::with_capacity(self.len());
        for (g, derived) in self.graphs {
            // Smallest runs first: the large ones go while the copy is still small.
            for run in derived.runs.into_iter().rev() {
                out.extend(
                    (run.spo.iter().enumerate())
                        .filter(|(i, _)| !run.is_dead(*i))
                        .map(|(_, &[s, p, o])| [g, s, p, o]),
                );
            }
        }
        out
    }

    /// Takes out the facts of `gone` (sorted by quad) it holds: each run finds its own by binary search, and a
    /// run holding none is left untouched (cheaper than [`Overlay::retain`] when `gone` is small).
    pub fn remove_sorted(&mut self, gone: &[Quad]) {
        self.remove_sorted_marking(gone, None);
    }

    /// [`Overlay::remove_sorted`], where a large run that loses few facts keeps them as tombstones: it is not
    /// rewritten (a pass over all of it) for each batch. Scans, counts and lookups skip tombstones; the runs'
    /// arrays hold them until [`Overlay::compact`], which must come before the arrays are read whole
    /// ([`Overlay::runs_of`], [`Overlay::fenced_runs_of`], saving; [`Overlay::into_quads`] skips them).
    /// Maintenance takes facts out of the old derived facts batch by batch, and reads them between batches.
    pub fn mark_removed_sorted(&mut self, gone: &[Quad]) {
        // Fewer than one position in 64: the bitmap costs a bit a position, a rewrite 20 bytes.
        self.remove_sorted_marking(gone, Some(64));
    }

    fn remove_sorted_marking(&mut self, gone: &[Quad], mark: Option<usize>) {
        for chunk in gone.chunk_by(|a, b| a[0] == b[0]) {
            let Ok(at) = self.graphs.binary_search_by_key(&chunk[0][0], |(g, _)| *g) else {
                continue;
            };
            let triples: Vec<Triple> = chunk.iter().map(|&[_, s, p, o]| [s, p, o]).collect();
            for run in &mut self.graphs[at].1.runs {
                run.remove_sorted(&triples, mark);
            }
        }
        self.drop_empty();
    }

    /// Takes the tombstones of [`Overlay::mark_removed_sorted`] out for good.
    pub fn compact(&mut self) {
        for (_, derived) in &mut self.graphs {
            derived.runs.iter_mut().for_each(Run::compact);
        }
    }

    /// Keeps the facts `keep` accepts (graph, triple): built permutations are carried over, not sorted again.
    pub fn retain(&mut self, keep: impl Fn(TermId, &Triple) -> bool) {
        for (g, derived) in &mut self.graphs {
            let g = *g;
            for run in &mut derived.runs {
                run.retain(&|t| keep(g, t));
            }
        }
        self.drop_empty();
    }

    /// After facts were taken out: empty runs and graphs go, each graph's runs largest first again.
    fn drop_empty(&mut self) {
        for (_, derived) in &mut self.graphs {
            derived.runs.retain(|r| r.len() > 0);
            derived.runs.sort_by_key(|r| std::cmp::Reverse(r.len()));
        }
        self.graphs.retain(|(_, d)| !d.runs.is_empty());
    }

    /// How many derived facts in all graphs.
    pub fn len(&self) -> usize {
        self.graphs.iter().map(|(_, g)| g.len()).sum()
    }

    /// Whether nothing has been derived.
    pub fn is_empty(&self) -> bool {
        self.graphs.is_empty()
    }

    /// How many sorted runs a graph's facts are split into (at most `log₂ n + 1`).
    pub fn runs(&self, graph: TermId) -> usize {
        self.graph(graph).map_or(0, |g| g.runs.len())
    }

    /// The graphs holding derived facts, by id.
    pub fn graph_ids(&self) -> impl Iterator<Item = TermId> + '_ {
        self.graphs.iter().map(|(g, _)| *g)
    }

    /// The SPO-sorted runs of one graph's derived facts (after [`Overlay::compact`], if facts were marked out:
    /// a run's array is then exactly its facts).
    pub fn runs_of(&self, graph: TermId) -> impl Iterator<Item = &[Triple]> {
        self.graph(graph)
            .into_iter()
            .flat_map(|g| g.runs.iter().map(Run::compacted_spo))
    }

    /// Each run of a graph's facts (SPO-sorted) with its [`Fences`] (each built on first use); as
    /// [`Overlay::runs_of`], after [`Overlay::compact`].
    pub fn fenced_runs_of(&self, graph: TermId) -> impl Iterator<Item = (&[Triple], &Fences)> {
        self.graph(graph)
            .into_iter()
            .flat_map(|g| g.runs.iter().map(|r| (r.compacted_spo(), &r.fences)))
    }

    /// Builds every run's POS and OSP orders not built yet (runs in parallel), as reading them would.
    pub fn build_orders(&self) {
        use rayon::prelude::*;
        let runs: Vec<&Run> = (self.graphs.iter())
            .flat_map(|(_, g)| g.runs.iter())
            .collect();
        runs.par_iter().for_each(|run| {
            run.osp();
            run.pos();
        });
    }

    /// One graph's derived facts as one SPO-sorted list (for a saved state): its runs merged.
    pub fn graph_triples(&self, graph: TermId) -> Vec<Triple> {
        let runs: Vec<&[Triple]> = self.runs_of(graph).collect();
        let mut spo = Vec::with_capacity(runs.iter().map(|r| r.len()).sum());
        merge_runs(&runs, |t| spo.push(t));
        spo
    }

    /// Adds a graph's facts as [`Overlay::graph_triples`] gave them, as one run whose POS and OSP orders are
    /// built when first read; `false` (nothing added) unless `spo` is strictly sorted.
    pub fn add_sorted(&mut self, graph: TermId, spo: Vec<Triple>) -> bool {
        if !spo.is_sorted_by(|a, b| a < b) {
            return false;
        }
        if spo.is_empty() {
            return true;
        }
        let run = Run {
            preds: predicates(&spo),
            spo,
            pos: std::sync::OnceLock::new(),
            osp: std::sync::OnceLock::new(),
            fences: Fences::default(),
            dead: Vec::new(),
            dead_count: 0,
        };
        let i = match self.graphs.binary_search_by_key(&graph, |(g, _)| *g) {
            Ok(i) => i,
            Err(i) => {
                self.graphs.insert(i, (graph, DerivedGraph::default()));
                i
            }
        };
        self.graphs[i].1.runs.push(run);
        true
    }

    /// Whether a fact was derived.
    pub fn contains(&self, graph: TermId, triple: Triple) -> bool {
        self.graph(graph).is_some_and(|g| {
            (g.runs.iter()).any(|r| r.spo.binary_search(&triple).is_ok_and(|i| !r.is_dead(i)))
        })
    }

    /// The derived facts matching a pattern, in the pattern's order.
    pub fn scan(&self, graph: TermId, pattern: &Pattern) -> Scan<'_> {
        let mut scan = Scan::empty();
        scan.perm = Perm::for_pattern(pattern).0;
        self.cursors_into(graph, pattern, &mut scan.cursors);
        scan
    }

    /// Adds a cursor per run of `graph` over the matches of `pattern`.
    fn cursors_into<'s>(
        &'s self,
        graph: TermId,
        pattern: &Pattern,
        out: &mut SmallVec<[Cursor<'s>; 8]>,
    ) {
        if let Some(g) = self.graph(graph) {
            out.extend(g.runs.iter().map(|r| r.cursor(pattern)));
        }
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.graphs
            .iter()
            .flat_map(|(_, g)| &g.runs)
            .map(Run::heap_bytes)
            .sum()
    }
}

/// The asserted facts with the derived facts laid over them, scanned as one sorted store.
#[derive(Copy, Clone, Debug)]
pub struct View<'a> {
    base: &'a QuadStore,
    derived: &'a Overlay,
    /// A third layer, disjoint from the others (maintenance reads the old state as what is left of the derived
    /// facts and what was taken out of them).
    also: Option<&'a Overlay>,
}

impl<'a> View<'a> {
    /// `base ⊕ derived`.
    pub fn new(base: &'a QuadStore, derived: &'a Overlay) -> Self {
        Self {
            base,
            derived,
            also: None,
        }
    }

    /// `base ⊕ derived ⊕ also`, three disjoint layers.
    pub fn with(base: &'a QuadStore, derived: &'a Overlay, also: Option<&'a Overlay>) -> Self {
        Self {
            base,
            derived,
            also,
        }
    }

    /// The asserted facts.
    pub fn base(&self) -> &'a QuadStore {
        self.base
    }

    /// The derived facts.
    pub fn derived(&self) -> &'a Overlay {
        self.derived
    }

    /// Every triple of `graph` matching `pattern`, from both layers, merged into the pattern's sort order.
    pub fn scan(&self, graph: TermId, pattern: &Pattern) -> Scan<'a> {
        let mut scan = Scan::empty();
        self.scan_into(graph, pattern, &mut scan);
        scan
    }

    /// [`View::scan`] into a scan the caller keeps (a probe per input row then copies no scan state around).
    #[inline]
    pub fn scan_into(&self, graph: TermId, pattern: &Pattern, scan: &mut Scan<'a>) {
        scan.perm = Perm::for_pattern(pattern).0;
        scan.cursors.clear();
        self.derived.cursors_into(graph, pattern, &mut scan.cursors);
        if let Some(also) = self.also {
            also.cursors_into(graph, pattern, &mut scan.cursors);
        }
        if let Some(index) = self.base.graph(graph) {
            let matches = index.range(pattern);
            if !matches.is_empty() {
                scan.cursors.push(match matches.parts() {
                    (None, spo) => Cursor::Keys(spo),
                    (Some(idx), spo) => Cursor::Indexed { idx, spo },
                });
            }
        }
        scan.cursors.retain(|c| !c.is_empty());
    }

    /// The number of matches of `pattern` in `graph` (the layers are disjoint): exact, but for facts marked out
    /// of a run ([`Overlay::mark_removed_sorted`]) after the first match of each run, which count too.
    pub fn count(&self, graph: TermId, pattern: &Pattern) -> usize {
        self.scan(graph, pattern).len()
    }

    /// Whether the fact holds in either layer.
    pub fn contains(&self, graph: TermId, triple: Triple) -> bool {
        self.base.graph(graph).is_some_and(|g| g.contains(triple))
            || self.derived.contains(graph, triple)
            || self.also.is_some_and(|a| a.contains(graph, triple))
    }

    /// Every graph holding a fact in either layer, by id.
    pub fn graph_ids(&self) -> Vec<TermId> {
        let mut ids: Vec<TermId> = self.base.graphs().map(|(g, _)| g).collect();
        ids.extend(self.derived.graph_ids());
        ids.extend(self.also.into_iter().flat_map(Overlay::graph_ids));
        ids.sort_unstable();
        ids.dedup();
        ids
    }
}

/// Whether position `i` is marked in a tombstone bitmap (an empty bitmap marks none).
#[inline]
fn is_dead(dead: &[u64], i: usize) -> bool {
    dead.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1)
}

/// One sorted source of a scan. A cursor over a run with tombstones skips them: its head is live, or it is
/// empty.
#[derive(Copy, Clone, Debug)]
enum Cursor<'a> {
    /// Keys already in the scan's order.
    Keys(&'a [[TermId; 3]]),
    /// Indices into an SPO array, sorted by the scan's order.
    Indexed { idx: &'a [u32], spo: &'a [Triple] },
    /// SPO keys of a run with tombstones (`dead`), the first at position `at`.
    LiveKeys {
        keys: &'a [Triple],
        at: usize,
        dead: &'a [u64],
    },
    /// Indices into the SPO array of a run with tombstones.
    LiveIndexed {
        idx: &'a [u32],
        spo: &'a [Triple],
        dead: &'a [u64],
    },
}

impl Cursor<'_> {
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// What is left, tombstones after the head included (exact for a run without them).
    fn len(&self) -> usize {
        match self {
            Cursor::Keys(k) | Cursor::LiveKeys { keys: k, .. } => k.len(),
            Cursor::Indexed { idx, .. } | Cursor::LiveIndexed { idx, .. } => idx.len(),
        }
    }

    /// The head as an SPO triple.
    #[inline]
    fn head(&self, perm: Perm) -> Option<Triple> {
        match self {
            Cursor::Keys(k) => k.first().map(|&k| perm.to_triple(k)),
            Cursor::LiveKeys { keys, .. } => keys.first().copied(),
            Cursor::Indexed { idx, spo } | Cursor::LiveIndexed { idx, spo, .. } => {
                idx.first().map(|&i| spo[i as usize])
            }
        }
    }

    #[inline]
    fn advance(&mut self) {
        match self {
            Cursor::Keys(k) => *k = &k[1..],
            Cursor::Indexed { idx, .. } => *idx = &idx[1..],
            Cursor::LiveKeys { keys, at, .. } => {
                *keys = &keys[1..];
                *at += 1;
                self.skip_dead();
            }
            Cursor::LiveIndexed { idx, .. } => {
                *idx = &idx[1..];
                self.skip_dead();
            }
        }
    }

    /// Moves past tombstones at the head.
    #[inline]
    fn skip_dead(&mut self) {
        match self {
            Cursor::Keys(_) | Cursor::Indexed { .. } => {}
            Cursor::LiveKeys { keys, at, dead } => {
                while !keys.is_empty() && is_dead(dead, *at) {
                    *keys = &keys[1..];
                    *at += 1;
                }
            }
            Cursor::LiveIndexed { idx, dead, .. } => {
                while idx.first().is_some_and(|&i| is_dead(dead, i as usize)) {
                    *idx = &idx[1..];
                }
            }
        }
    }
}

/// A merged scan over sorted sources; yields SPO triples in the order of [`Scan::order`].
#[derive(Clone, Debug)]
pub struct Scan<'a> {
    perm: Perm,
    /// One per run of derived facts and one for the asserted ones: inline, so a probe allocates nothing.
    cursors: SmallVec<[Cursor<'a>; 8]>,
}

impl Scan<'_> {
    /// A scan with nothing in it, to be filled by [`View::scan_into`].
    pub fn empty() -> Self {
        Self {
            perm: Perm::Spo,
            cursors: SmallVec::new(),
        }
    }

    /// The sort order of the triples this scan yields.
    pub fn order(&self) -> Perm {
        self.perm
    }

    /// How many triples remain.
    pub fn len(&self) -> usize {
        self.cursors.iter().map(Cursor::len).sum()
    }

    /// Whether none remain.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Iterator for Scan<'_> {
    type Item = Triple;

    #[inline]
    fn next(&mut self) -> Option<Triple> {
        let perm = self.perm;
        let mut best: Option<(usize, Triple)> = None;
        for (i, c) in self.cursors.iter().enumerate() {
            if let Some(t) = c.head(perm) {
                if best.is_none_or(|(_, b)| perm.to_key(t) < perm.to_key(b)) {
                    best = Some((i, t));
                }
            }
        }
        let (i, t) = best?;
        self.cursors[i].advance();
        Some(t)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.len();
        (n, Some(n))
    }
}

impl ExactSizeIterator for Scan<'_> {}

/// The facts of `parts` (disjoint overlays) and, with `asserted`, of its graphs, sorted by quad. Each graph's
/// facts come in SPO-sorted runs (the overlays', and the asserted index): merged, not sorted again (a graph of one
/// run is copied as it is).
pub fn sorted_quads(parts: &[&Overlay], asserted: Option<&QuadStore>) -> Vec<Quad> {
    let asserted_of =
        |g: TermId| -> Option<&[Triple]> { asserted.and_then(|s| s.graph(g)).map(|i| i.triples()) };
    let mut graphs: Vec<TermId> = parts.iter().flat_map(|o| o.graph_ids()).collect();
    if let Some(store) = asserted {
        graphs.extend(store.graphs().map(|(g, _)| g));
    }
    graphs.sort_unstable();
    graphs.dedup();
    let size = parts.iter().map(|o| o.len()).sum::<usize>()
        + (graphs.iter())
            .filter_map(|&g| asserted_of(g))
            .map(<[_]>::len)
            .sum::<usize>();
    let mut quads: Vec<Quad> = Vec::with_capacity(size);
    for g in graphs {
        let runs: Vec<&[Triple]> = (parts.iter())
            .flat_map(|o| o.runs_of(g))
            .chain(asserted_of(g))
            .filter(|r| !r.is_empty())
            .collect();
        merge_runs(&runs, |[s, p, o]| quads.push([g, s, p, o]));
    }
    // Derived and asserted facts are disjoint, and so are the overlays' runs: this is a guard, not a pass that
    // finds anything.
    quads.dedup();
    quads
}

/// Calls `out` with the triples of sorted `runs`, in order. The largest run is merged with the others' merge
/// by stretches (a maintained state is one large run and a few small ones: its stretches between the others'
/// triples are found by binary search, not taken one at a time off a heap); the others by a k-way merge over a
/// heap of their heads.
pub fn merge_runs(runs: &[&[Triple]], mut out: impl FnMut(Triple)) {
    match runs {
        [] => return,
        [run] => {
            run.iter().for_each(|&t| out(t));
            return;
        }
        _ => {}
    }
    let largest = (0..runs.len())
        .max_by_key(|&r| (runs[r].len(), std::cmp::Reverse(r)))
        .expect("two runs or more");
    let mut rest: Vec<&[Triple]> = runs.to_vec();
    let big = rest.remove(largest);
    if rest.iter().map(|r| r.len()).sum::<usize>() * 8 < big.len() {
        let mut small = Vec::with_capacity(rest.iter().map(|r| r.len()).sum());
        merge_heap(&rest, |t| small.push(t));
        let mut from = 0;
        for t in small {
            let stretch = big[from..].partition_point(|x| *x < t);
            big[from..from + stretch].iter().for_each(|&x| out(x));
            from += stretch;
            out(t);
        }
        big[from..].iter().for_each(|&x| out(x));
        return;
    }
    merge_heap(runs, out);
}

/// Calls `out` with the triples of sorted `runs`, in order: a k-way merge over a heap of the runs' heads.
fn merge_heap(runs: &[&[Triple]], mut out: impl FnMut(Triple)) {
    use std::cmp::Reverse;
    let mut heads: std::collections::BinaryHeap<Reverse<(Triple, usize, usize)>> = (runs.iter())
        .enumerate()
        .filter_map(|(r, run)| run.first().map(|&t| Reverse((t, r, 0))))
        .collect();
    while let Some(Reverse((t, r, i))) = heads.pop() {
        out(t);
        if let Some(&next) = runs[r].get(i + 1) {
            heads.push(Reverse((next, r, i + 1)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn t(s: u32, p: u32, o: u32) -> Triple {
        [TermId(s), TermId(p), TermId(o)]
    }

    #[test]
    fn a_predicate_whose_last_triple_is_taken_out_is_scanned_to_nothing_and_the_rest_still_found() {
        let mut overlay = Overlay::new();
        overlay.add(TermId(0), vec![t(1, 10, 2), t(2, 10, 3), t(1, 11, 4)]);
        let store = QuadStore::from_graphs(vec![(TermId(0), vec![])]);
        let p = |p: u32| -> Pattern { [None, Some(TermId(p)), None] };
        // The permutations are built, then the only triple of predicate 11 goes.
        View::new(&store, &overlay)
            .scan(TermId(0), &p(11))
            .for_each(drop);
        overlay.remove_sorted(&[[TermId(0), TermId(1), TermId(11), TermId(4)]]);
        let view = View::new(&store, &overlay);
        assert_eq!(view.scan(TermId(0), &p(11)).count(), 0);
        assert_eq!(view.count(TermId(0), &p(11)), 0);
        let tens: Vec<Triple> = view.scan(TermId(0), &p(10)).collect();
        assert_eq!(tens, vec![t(1, 10, 2), t(2, 10, 3)]);
        overlay.add(TermId(0), vec![t(5, 11, 6)]);
        let view = View::new(&store, &overlay);
        assert_eq!(
            view.scan(TermId(0), &p(11)).collect::<Vec<_>>(),
            vec![t(5, 11, 6)]
        );
    }

    #[test]
    fn runs_merge_geometrically() {
        let mut overlay = Overlay::new();
        let g = TermId::DEFAULT_GRAPH;
        for round in 0..100u32 {
            overlay.add(g, vec![t(round, 1, round + 1)]);
            let n = overlay.len();
            assert!(overlay.runs(g) <= (usize::BITS - n.leading_zeros()) as usize + 1);
        }
        assert_eq!(overlay.len(), 100);
        assert!(overlay.contains(g, t(57, 1, 58)));
        assert!(!overlay.contains(g, t(58, 1, 57)));
    }

    proptest! {
        #[test]
        fn view_scan_equals_a_sorted_filter_of_base_and_derived(
            facts in proptest::collection::btree_set((0u32..6, 0u32..3, 0u32..6, 0u32..2), 0..80),
            batches in 1usize..6,
            pattern in (proptest::option::of(0u32..6), proptest::option::of(0u32..3), proptest::option::of(0u32..6)),
            graph in 0u32..2,
        ) {
            // Split the facts between the base and several derived batches.
            let facts: Vec<_> = facts.into_iter().collect();
            let mut base: Vec<(TermId, Vec<Triple>)> = vec![(TermId(0), vec![]), (TermId(1), vec![])];
            let mut overlay = Overlay::new();
            let mut pending: Vec<Vec<(u32, Triple)>> = vec![Vec::new(); batches];
            for (i, &(s, p, o, g)) in facts.iter().enumerate() {
                if i % 3 == 0 {
                    base[g as usize].1.push(t(s, p, o));
                } else {
                    pending[i % batches].push((g, t(s, p, o)));
                }
            }
            for batch in pending {
                for g in 0..2u32 {
                    overlay.add(TermId(g), batch.iter().filter(|(bg, _)| *bg == g).map(|(_, t)| *t).collect());
                }
            }
            let store = QuadStore::from_graphs(base);
            let view = View::new(&store, &overlay);
            let pattern: Pattern = [pattern.0.map(TermId), pattern.1.map(TermId), pattern.2.map(TermId)];
            let scan = view.scan(TermId(graph), &pattern);
            let perm = scan.order();
            let got: Vec<Triple> = scan.collect();
            let mut want: Vec<Triple> = facts
                .iter()
                .filter(|&&(_, _, _, g)| g == graph)
                .map(|&(s, p, o, _)| t(s, p, o))
                .filter(|tr| (0..3).all(|i| pattern[i].is_none_or(|b| b == tr[i])))
                .collect();
            want.sort_by_key(|&tr| perm.to_key(tr));
            prop_assert_eq!(view.count(TermId(graph), &pattern), want.len());
            prop_assert_eq!(got, want);
        }

        #[test]
        fn facts_marked_out_batch_by_batch_read_as_facts_taken_out(
            facts in proptest::collection::btree_set((0u32..6, 0u32..3, 0u32..6), 1..80),
            steps in proptest::collection::vec((any::<bool>(), proptest::collection::vec(0usize..80, 0..8)), 1..6),
        ) {
            // One overlay takes facts out by rewriting its runs, the other marks them (every time: `Some(0)`);
            // some steps bring facts back (a new run). Scans, lookups and counts agree after every step, and the
            // runs agree once the marked one is compacted.
            let facts: Vec<Triple> = facts.into_iter().map(|(s, p, o)| t(s, p, o)).collect();
            let (mut moved, mut marked) = (Overlay::new(), Overlay::new());
            moved.add(TermId(0), facts.clone());
            marked.add(TermId(0), facts.clone());
            let store = QuadStore::from_graphs(vec![(TermId(0), vec![])]);
            let mut held: std::collections::BTreeSet<Triple> = facts.iter().copied().collect();
            for (back, picks) in steps {
                let mut chosen: Vec<Triple> = picks.iter().map(|&i| facts[i % facts.len()]).collect();
                chosen.sort_unstable();
                chosen.dedup();
                if back {
                    let returning: Vec<Triple> = chosen.into_iter().filter(|t| !held.contains(t)).collect();
                    held.extend(&returning);
                    moved.add(TermId(0), returning.clone());
                    marked.add(TermId(0), returning);
                } else {
                    let quads: Vec<Quad> = chosen.iter().map(|&[s, p, o]| [TermId(0), s, p, o]).collect();
                    chosen.iter().for_each(|t| { held.remove(t); });
                    moved.remove_sorted(&quads);
                    marked.remove_sorted_marking(&quads, Some(0));
                }
                prop_assert_eq!(marked.len(), held.len());
                let (a, b) = (View::new(&store, &marked), View::new(&store, &moved));
                for pattern in [[None, None, None], [None, Some(TermId(1)), None], [None, None, Some(TermId(2))], [Some(TermId(1)), None, None], [Some(TermId(1)), Some(TermId(1)), None]] {
                    let got: Vec<Triple> = a.scan(TermId(0), &pattern).collect();
                    let want: Vec<Triple> = b.scan(TermId(0), &pattern).collect();
                    prop_assert_eq!(got.is_empty(), a.scan(TermId(0), &pattern).is_empty());
                    prop_assert_eq!(got, want);
                }
                for f in &facts {
                    prop_assert_eq!(marked.contains(TermId(0), *f), held.contains(f));
                }
            }
            marked.compact();
            let (a, b) = (View::new(&store, &marked), View::new(&store, &moved));
            for pattern in [[None, Some(TermId(1)), None], [None, None, Some(TermId(2))]] {
                let got: Vec<Triple> = a.scan(TermId(0), &pattern).collect();
                let want: Vec<Triple> = b.scan(TermId(0), &pattern).collect();
                prop_assert_eq!(got, want);
            }
            let runs = |o: &Overlay| -> Vec<Triple> {
                let mut all: Vec<Triple> = o.runs_of(TermId(0)).flatten().copied().collect();
                all.sort_unstable();
                all
            };
            prop_assert_eq!(runs(&marked), held.into_iter().collect::<Vec<_>>());
            prop_assert_eq!(runs(&moved), runs(&marked));
        }

        #[test]
        fn remove_sorted_takes_out_exactly_what_retain_without_the_set_takes_out(
            facts in proptest::collection::btree_set((0u32..6, 0u32..3, 0u32..6, 0u32..2), 0..80),
            gone_at in proptest::collection::vec(any::<bool>(), 80),
            strangers in proptest::collection::btree_set((0u32..6, 0u32..3, 0u32..6, 0u32..3), 0..10),
            batches in 1usize..5,
        ) {
            // Two overlays with the same runs; the permutations are built before the removal, so both carry them.
            let facts: Vec<_> = facts.into_iter().collect();
            let (mut by_search, mut by_set) = (Overlay::new(), Overlay::new());
            for b in 0..batches {
                for g in 0..2u32 {
                    let batch: Vec<Triple> = (facts.iter().enumerate())
                        .filter(|&(i, &(_, _, _, fg))| i % batches == b && fg == g)
                        .map(|(_, &(s, p, o, _))| t(s, p, o))
                        .collect();
                    by_search.add(TermId(g), batch.clone());
                    by_set.add(TermId(g), batch);
                }
            }
            let store = QuadStore::from_graphs(vec![(TermId(0), vec![]), (TermId(1), vec![])]);
            let by_p: Pattern = [None, Some(TermId(1)), None];
            let by_o: Pattern = [None, None, Some(TermId(2))];
            for overlay in [&by_search, &by_set] {
                let view = View::new(&store, overlay);
                for g in 0..2 {
                    view.scan(TermId(g), &by_p).for_each(drop);
                    view.scan(TermId(g), &by_o).for_each(drop);
                }
            }
            // Taken out: some held facts, and quads no run holds (one in a graph with no facts at all).
            let mut gone: Vec<Quad> = (facts.iter().zip(&gone_at))
                .filter(|&(_, &out)| out)
                .map(|(&(s, p, o, g), _)| [TermId(g), TermId(s), TermId(p), TermId(o)])
                .chain(strangers.iter().map(|&(s, p, o, g)| [TermId(g), TermId(s), TermId(p), TermId(o)]))
                .collect();
            gone.sort_unstable();
            gone.dedup();
            let set: std::collections::HashSet<Quad> = gone.iter().copied().collect();
            by_search.remove_sorted(&gone);
            by_set.retain(|g, &[s, p, o]| !set.contains(&[g, s, p, o]));
            prop_assert_eq!(by_search.len(), by_set.len());
            let (a, b) = (View::new(&store, &by_search), View::new(&store, &by_set));
            for g in 0..3 {
                for pattern in [[None, None, None], by_p, by_o, [Some(TermId(1)), None, None]] {
                    let got: Vec<Triple> = a.scan(TermId(g), &pattern).collect();
                    let want: Vec<Triple> = b.scan(TermId(g), &pattern).collect();
                    prop_assert_eq!(got, want);
                }
            }
        }
    }

    proptest! {
        #[test]
        fn merged_runs_give_their_triples_in_order_whether_one_run_dwarfs_the_others_or_not(
            facts in proptest::collection::btree_map((0u32..30, 0u32..3, 0u32..30), 0usize..4, 0..200),
            dwarfing in proptest::bool::ANY,
        ) {
            // Each triple goes to one of four runs; with `dwarfing`, nearly all to the first.
            let mut runs: Vec<Vec<Triple>> = vec![Vec::new(); 4];
            for (i, (&(s, p, o), &r)) in facts.iter().enumerate() {
                let r = if dwarfing && i % 16 != 0 { 0 } else { r };
                runs[r].push([TermId(s), TermId(p), TermId(o)]);
            }
            let slices: Vec<&[Triple]> = runs.iter().map(Vec::as_slice).collect();
            let mut merged = Vec::new();
            merge_runs(&slices, |t| merged.push(t));
            let expected: Vec<Triple> =
                facts.keys().map(|&(s, p, o)| [TermId(s), TermId(p), TermId(o)]).collect();
            prop_assert_eq!(merged, expected);
        }
    }
}
