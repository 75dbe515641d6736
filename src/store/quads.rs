//! This module defines the asserted quads: per graph, one [`TripleIndex`] of sorted permutation arrays.
//!
//! Every triple pattern has a bound prefix in one of the three orders SPO, POS and OSP, so any pattern is one
//! binary-searched range, and the length of that range is an exact count for the planner.

use std::sync::OnceLock;

use rayon::slice::ParallelSliceMut;

use super::term::{TermId, Triple};

/// A triple pattern: `Some` for a bound position, `None` for a free one (subject, predicate, object).
pub type Pattern = [Option<TermId>; 3];

/// One of the three sort orders a triple index keeps.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Perm {
    /// Subject, predicate, object.
    Spo,
    /// Predicate, object, subject.
    Pos,
    /// Object, subject, predicate.
    Osp,
}

impl Perm {
    /// The order whose leading positions are exactly the bound ones, and how many lead.
    pub fn for_pattern(pattern: &Pattern) -> (Perm, usize) {
        match pattern.map(|t| t.is_some()) {
            [false, false, false] => (Perm::Spo, 0),
            [true, false, false] => (Perm::Spo, 1),
            [true, true, false] => (Perm::Spo, 2),
            [true, true, true] => (Perm::Spo, 3),
            [false, true, false] => (Perm::Pos, 1),
            [false, true, true] => (Perm::Pos, 2),
            [false, false, true] => (Perm::Osp, 1),
            [true, false, true] => (Perm::Osp, 2),
        }
    }

    /// Reorders an SPO triple into this order.
    #[inline]
    pub fn to_key(self, [s, p, o]: Triple) -> [TermId; 3] {
        match self {
            Perm::Spo => [s, p, o],
            Perm::Pos => [p, o, s],
            Perm::Osp => [o, s, p],
        }
    }

    /// Turns a key in this order back into an SPO triple.
    #[inline]
    pub fn to_triple(self, [a, b, c]: [TermId; 3]) -> Triple {
        match self {
            Perm::Spo => [a, b, c],
            Perm::Pos => [c, a, b],
            Perm::Osp => [b, c, a],
        }
    }

    /// The bound prefix of a pattern in this order (only the first `len` entries are meaningful).
    #[inline]
    pub fn prefix(self, pattern: &Pattern) -> [TermId; 3] {
        let [s, p, o] = pattern.map(Option::unwrap_or_default);
        self.to_key([s, p, o])
    }
}

/// The range of `keys` (sorted) whose first `len` entries equal `prefix`'s.
#[inline]
pub fn prefix_range<T>(
    keys: &[T],
    key_of: impl Fn(&T) -> [TermId; 3],
    prefix: [TermId; 3],
    len: usize,
) -> std::ops::Range<usize> {
    fenced_range(keys, key_of, || &[], prefix, len)
}

/// Asks for the cache line of `at` to be loaded, without waiting for it.
#[inline]
pub(crate) fn prefetch<T>(at: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint that never faults, and `at` is a valid reference besides.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(at).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

/// Keys between two fence posts: a fence holds the key of every `FENCE`-th position of a sorted order.
pub const FENCE: usize = 32;

/// The fence of a sorted order: the key at every [`FENCE`]-th position. A search reads it first (a small array,
/// 12 bytes per 32 triples, that stays in cache) and then only the block between two posts of the order, which
/// for a permutation is two cache misses a step (the entry, then its triple).
pub fn fence<T>(keys: &[T], key_of: impl Fn(&T) -> [TermId; 3]) -> Vec<[TermId; 3]> {
    keys.iter().step_by(FENCE).map(key_of).collect()
}

/// The block of a fenced array of `len` entries where the first key not below a searched one lies, given that
/// `below` posts of the [`fence`] are below it: after the last of those posts, and at or before the next.
#[inline]
pub(crate) fn fence_block(below: usize, len: usize) -> (usize, usize) {
    (below.saturating_sub(1) * FENCE, (below * FENCE).min(len))
}

/// [`prefix_range`] through `fence`, which gives the [`fence`] of `keys` (empty: none, the whole order is
/// searched); asked for only when the pattern binds something (a fence is built on first use).
#[inline]
pub fn fenced_range<'f, T>(
    keys: &[T],
    key_of: impl Fn(&T) -> [TermId; 3],
    fence: impl FnOnce() -> &'f [[TermId; 3]],
    prefix: [TermId; 3],
    len: usize,
) -> std::ops::Range<usize> {
    if len == 0 {
        return 0..keys.len();
    }
    let fence = fence();
    let p = &prefix[..len];
    // The first key not below the prefix lies after the last post below it, and at or before the next post.
    let (lo, hi) = if fence.is_empty() {
        (0, keys.len())
    } else {
        fence_block(fence.partition_point(|k| &k[..len] < p), keys.len())
    };
    let start = lo + keys[lo..hi].partition_point(|k| &key_of(k)[..len] < p);
    // The end by galloping from the start: most ranges a join probes are short, and a short range costs a few
    // comparisons instead of a second search over the whole remainder.
    let rest = &keys[start..];
    let within = |i: usize| &key_of(&rest[i])[..len] <= p;
    let mut step = 1;
    let mut lo = 0;
    while step <= rest.len() && within(step - 1) {
        lo = step;
        step *= 2;
    }
    let hi = step.min(rest.len());
    let end = start + lo + rest[lo..hi].partition_point(|k| &key_of(k)[..len] <= p);
    start..end
}

/// Counts per predicate, for the planner's estimates.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct PredicateStats {
    /// Triples with this predicate.
    pub triples: usize,
    /// Distinct subjects of those triples.
    pub subjects: usize,
    /// Distinct objects of those triples.
    pub objects: usize,
}

/// Sorted, distinct `keys` without `removed` (each must be there) and with `added` (none may be): one merge.
/// `None` if a removed key is missing or an added one present.
pub fn patch_sorted<T: Ord + Copy>(
    keys: &[T],
    mut removed: Vec<T>,
    mut added: Vec<T>,
) -> Option<Vec<T>> {
    removed.sort_unstable();
    added.sort_unstable();
    let mut out = Vec::with_capacity((keys.len() + added.len()).saturating_sub(removed.len()));
    let (mut r, mut a) = (0, 0);
    for k in keys {
        while a < added.len() && added[a] < *k {
            out.push(added[a]);
            a += 1;
        }
        if a < added.len() && added[a] == *k {
            return None;
        }
        if r < removed.len() && removed[r] == *k {
            r += 1;
            continue;
        }
        out.push(*k);
    }
    out.extend_from_slice(&added[a..]);
    (r == removed.len()).then_some(out)
}

/// The permutation of `spo` that sorts it in `perm` order. Sorts (key, index) pairs packed together: no random
/// access into `spo` while sorting.
pub(crate) fn permutation(spo: &[Triple], perm: Perm) -> Vec<u32> {
    permutation_seeing(spo, perm, |_| {}, Sort::Parallel)
}

/// How a permutation's pairs are sorted: on the rayon pool, or on the calling thread alone. An order built on
/// first use (inside a `OnceLock`'s initializer, maybe on a pool thread in the middle of a query) is sorted on
/// its thread: a pool thread waiting for its parallel sort could take up another task of the same query, which
/// would wait on the same `OnceLock`, that the thread itself holds — a deadlock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sort {
    /// On the rayon pool (large inputs).
    Parallel,
    /// On the calling thread.
    Here,
}

/// The permutation of `spo`, which must be SPO-sorted, that sorts it in `perm` order, by stable counting sorts
/// (radix, least significant first: OSP is SPO counted by object; POS is OSP counted by predicate) where the
/// terms' ids span little more than the triples: beside the result, a table of counts and, for POS, the OSP
/// order, 4 bytes a triple where [`permutation`] sorts 16-byte (key, index) pairs. `osp` is the OSP order when
/// it is already built (POS then starts from it). Elsewhere (ids spread far wider) as [`permutation`] does.
pub(crate) fn sorted_permutation(
    spo: &[Triple],
    perm: Perm,
    osp: Option<&[u32]>,
    sort: Sort,
) -> Vec<u32> {
    debug_assert!(spo.is_sorted());
    // The span of ids of component `c`, if a table of counts for it costs at most about two words a triple.
    let span = |c: usize| -> Option<(u32, usize)> {
        let (lo, hi) = spo.iter().fold((u32::MAX, 0), |(lo, hi), t| {
            (lo.min(t[c].0), hi.max(t[c].0))
        });
        let range = (hi as usize + 1).saturating_sub(lo as usize);
        (range <= 2 * spo.len() + (1 << 16)).then_some((lo, range))
    };
    // `order` (indices into `spo`) stably sorted by component `c`.
    let counted = |order: &mut dyn Iterator<Item = u32>, c: usize, (lo, range): (u32, usize)| {
        let mut starts = vec![0u32; range + 1];
        for t in spo {
            starts[(t[c].0 - lo) as usize + 1] += 1;
        }
        for k in 1..starts.len() {
            starts[k] += starts[k - 1];
        }
        let mut out = vec![0u32; spo.len()];
        for i in order {
            let k = (spo[i as usize][c].0 - lo) as usize;
            out[starts[k] as usize] = i;
            starts[k] += 1;
        }
        out
    };
    let osp: Option<std::borrow::Cow<'_, [u32]>> = match osp {
        Some(o) => Some(o.into()),
        None => span(2).map(|objects| counted(&mut (0..spo.len() as u32), 2, objects).into()),
    };
    let sorted = || permutation_seeing(spo, perm, |_| {}, sort);
    match (perm, osp) {
        (Perm::Spo, _) => (0..spo.len() as u32).collect(),
        (Perm::Osp, Some(osp)) => osp.into_owned(),
        (Perm::Pos, Some(osp)) => match span(1) {
            Some(predicates) => counted(&mut osp.iter().copied(), 1, predicates),
            None => sorted(),
        },
        (_, None) => sorted(),
    }
}

/// The `perm` order of `spo` held in `cell`, built on first use (from `osp`, the OSP order, when it is built) on
/// the calling thread ([`Sort::Here`]): the initializer may run on a pool thread in the middle of a query.
pub(crate) fn order_on_first_use<'a>(
    cell: &'a OnceLock<Vec<u32>>,
    spo: &[Triple],
    perm: Perm,
    osp: Option<&[u32]>,
) -> &'a [u32] {
    cell.get_or_init(|| sorted_permutation(spo, perm, osp, Sort::Here))
}

/// [`permutation`], showing each key in order to `see` as it goes (sequential reads of the sorted keys, where
/// reading the triples through the permutation afterwards would be one random access each).
fn permutation_seeing(
    spo: &[Triple],
    perm: Perm,
    mut see: impl FnMut([TermId; 3]),
    sort: Sort,
) -> Vec<u32> {
    let mut keyed: Vec<[u32; 4]> = spo
        .iter()
        .enumerate()
        .map(|(i, &t)| {
            let [a, b, c] = perm.to_key(t);
            [a.0, b.0, c.0, i as u32]
        })
        .collect();
    if keyed.len() > 1 << 14 && sort == Sort::Parallel {
        keyed.par_sort_unstable();
    } else {
        keyed.sort_unstable();
    }
    // A new vector, not `into_iter().collect()`: that would reuse the pairs' allocation, four times too large.
    let mut order = Vec::with_capacity(keyed.len());
    order.extend(keyed.iter().map(|k| {
        see([TermId(k[0]), TermId(k[1]), TermId(k[2])]);
        k[3]
    }));
    order
}

/// The number of leading items of `items` that `before` holds for, when it holds for a prefix of them: found by
/// galloping (1, 2, 4, … items, then a binary search in the last step), so an answer `k` costs `O(log k)`
/// comparisons near the start instead of `O(log n)` across the whole slice.
pub(crate) fn gallop<T>(items: &[T], before: impl Fn(&T) -> bool) -> usize {
    let mut lo = 0;
    let mut step = 1;
    while lo + step <= items.len() && before(&items[lo + step - 1]) {
        lo += step;
        step *= 2;
    }
    let hi = (lo + step).min(items.len());
    lo + items[lo..hi].partition_point(before)
}

/// Old positions in a sorted array to new ones, after some positions were taken out (`gone`, increasing) and
/// new items put in before others (`ins`, non-decreasing: an item put in before old position `i`; `len` for
/// the end): a bitmap of the positions taken out with a count per 64, and where each 64's insertions start —
/// tables of a few bytes per 64 positions, which stay in cache where a table with an entry per position would
/// not (a permutation reads them in random order).
pub(crate) struct Renumber {
    words: Vec<u64>,
    /// Positions taken out below each word's first.
    gone_before: Vec<u32>,
    /// Insertions before each word's first position (an index into `ins`), and one past the last word.
    ins_before: Vec<u32>,
    ins: Vec<u32>,
}

impl Renumber {
    pub(crate) fn new(len: usize, gone: &[u32], ins: Vec<u32>) -> Self {
        let n_words = len.div_ceil(64);
        let mut words = vec![0u64; n_words];
        for &i in gone {
            words[i as usize / 64] |= 1 << (i % 64);
        }
        let mut below = 0u32;
        let gone_before = (words.iter())
            .map(|w| {
                below += w.count_ones();
                below - w.count_ones()
            })
            .collect();
        let mut ins_before = Vec::with_capacity(n_words + 1);
        let mut k = 0;
        for w in 0..=n_words {
            while k < ins.len() && (ins[k] as usize) < w * 64 {
                k += 1;
            }
            ins_before.push(k as u32);
        }
        Self {
            words,
            gone_before,
            ins_before,
            ins,
        }
    }

    /// The new position of old position `v` (below the length), `None` if it was taken out.
    // new(v) = v − |{g ∈ gone : g < v}| + |{i ∈ ins : i ≤ v}|
    #[inline]
    pub(crate) fn get(&self, v: u32) -> Option<u32> {
        let (w, bit) = (v as usize / 64, v % 64);
        let word = self.words[w];
        if word >> bit & 1 == 1 {
            return None;
        }
        let gone = self.gone_before[w] + (word & ((1u64 << bit) - 1)).count_ones();
        let (from, to) = (self.ins_before[w], self.ins_before[w + 1]);
        let mut put = from;
        if from < to {
            put += self.ins[from as usize..to as usize]
                .iter()
                .take_while(|&&i| i <= v)
                .count() as u32;
        }
        Some(v - gone + put)
    }
}

/// Triples in SPO order with their POS and OSP permutations, without `removed` and with `added` (both sorted):
/// SPO copied in blocks between the changes, each permutation renumbered (`Renumber`) and merged with the
/// added triples' places, found by galloping, not sorted again — `O(n + k log n)` for `k` changes, with no
/// random access into the triples but for the `k`. `None` if a removed triple is missing, an added one
/// present, or a permutation names an index out of range.
pub fn patch_permuted(
    spo: &[Triple],
    (pos, osp): (&[u32], &[u32]),
    fences: &Fences,
    removed: &[Triple],
    added: &[Triple],
) -> Option<(Vec<Triple>, Vec<u32>, Vec<u32>)> {
    // Where each removed triple is, and before which old triple each added one goes.
    let mut gone = Vec::with_capacity(removed.len());
    let mut from = 0;
    for t in removed {
        let i = from + gallop(&spo[from..], |x| x < t);
        if spo.get(i) != Some(t) {
            return None;
        }
        gone.push(i as u32);
        from = i + 1;
    }
    let mut ins = Vec::with_capacity(added.len());
    let mut from = 0;
    for t in added {
        let i = from + gallop(&spo[from..], |x| x < t);
        if spo.get(i) == Some(t) {
            return None;
        }
        ins.push(i as u32);
        from = i;
    }
    // Where each added triple lands in the new SPO array: its old place, less the removed triples before it, plus
    // the added ones before it. So the new SPO array and the two permutations are built side by side.
    let mut placed: Vec<u32> = Vec::with_capacity(added.len());
    let mut below = 0;
    for (a, &k) in ins.iter().enumerate() {
        while below < gone.len() && gone[below] < k {
            below += 1;
        }
        placed.push(k - below as u32 + a as u32);
    }
    // SPO: the kept triples in blocks, the added ones between them (an added triple goes before a removed one at
    // its place).
    let merge = || {
        let mut out: Vec<Triple> = Vec::with_capacity(spo.len() + added.len() - removed.len());
        let (mut g, mut a, mut at) = (0, 0, 0);
        loop {
            let next_gone = gone.get(g).map_or(spo.len(), |&i| i as usize);
            let next_ins = ins.get(a).map_or(spo.len(), |&i| i as usize);
            let next = next_gone.min(next_ins);
            out.extend_from_slice(&spo[at..next]);
            at = next;
            if a < ins.len() && next_ins == next {
                debug_assert_eq!(placed[a] as usize, out.len());
                out.push(added[a]);
                a += 1;
            } else if g < gone.len() {
                g += 1;
                at += 1;
            } else {
                break;
            }
        }
        out
    };
    let renumber = Renumber::new(spo.len(), &gone, ins.clone());
    let remap = |order: &[u32], perm: Perm| -> Option<Vec<u32>> {
        if order.len() != spo.len() || order.iter().any(|&i| i as usize >= spo.len()) {
            return None;
        }
        let key = |t: &Triple| perm.to_key(*t);
        let mut fresh: Vec<(u32, Triple)> =
            placed.iter().copied().zip(added.iter().copied()).collect();
        fresh.sort_unstable_by_key(|(_, t)| key(t));
        let keys: Vec<Triple> = fresh.iter().map(|(_, t)| key(t)).collect();
        // The order's fence, the one its searches use (kept by `fences` for the old index's later reads).
        let fence = fences.of(perm, spo, Some(order));
        let places = insertion_points(order, spo, (perm, fence), &keys);
        let mut merged = Vec::with_capacity(spo.len() + added.len() - removed.len());
        let mut from = 0;
        for ((f, _), to) in fresh.into_iter().zip(places) {
            merged.extend(order[from..to].iter().filter_map(|&i| renumber.get(i)));
            merged.push(f);
            from = to;
        }
        merged.extend(order[from..].iter().filter_map(|&i| renumber.get(i)));
        Some(merged)
    };
    let (out, (pos, osp)) = rayon::join(merge, || {
        rayon::join(|| remap(pos, Perm::Pos), || remap(osp, Perm::Osp))
    });
    Some((out, pos?, osp?))
}

/// Where each of `keys` (ascending, in `perm`'s key order, none an old triple's) goes in `order`, the permutation
/// of `spo` sorted by that key: how many of the old triples are below it. Each key is found through `posts`, the
/// order's [`fence`] (it stays in cache), and a binary search of one block, whose every step reads a triple at
/// random: the keys go a batch at a time, each step asking for the triples of the whole batch before comparing,
/// so that their cache misses overlap rather than follow one another.
fn insertion_points(
    order: &[u32],
    spo: &[Triple],
    (perm, posts): (Perm, &[Triple]),
    keys: &[Triple],
) -> Vec<usize> {
    const BATCH: usize = 16;
    let key_at = |j: usize| perm.to_key(spo[order[j] as usize]);
    let mut out = Vec::with_capacity(keys.len());
    let mut below = 0;
    for batch in keys.chunks(BATCH) {
        // Each key's block: between the last post below it and the next.
        let mut range = [(0usize, 0usize); BATCH];
        for (k, r) in batch.iter().zip(&mut range) {
            below += gallop(&posts[below..], |p| p < k);
            *r = fence_block(below, order.len());
            if let Some(first) = order.get(r.0) {
                prefetch(first);
            }
        }
        // Binary searches in step: the first entry of each block not below its key.
        loop {
            let mut open = false;
            for (_, &(lo, hi)) in batch.iter().zip(&range) {
                if lo < hi {
                    prefetch(&spo[order[lo + (hi - lo) / 2] as usize]);
                    open = true;
                }
            }
            if !open {
                break;
            }
            for (k, r) in batch.iter().zip(&mut range) {
                let (lo, hi) = *r;
                if lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    *r = if key_at(mid) < *k {
                        (mid + 1, hi)
                    } else {
                        (lo, mid)
                    };
                }
            }
        }
        out.extend(range[..batch.len()].iter().map(|&(lo, _)| lo));
    }
    out
}

/// The triples of one graph, sorted three ways: the triples themselves in SPO order, and the POS and OSP orders
/// as permutations of them (4 bytes a triple each instead of 12: 20 bytes a triple in all, not 36).
#[derive(Debug, Default, Clone)]
pub struct TripleIndex {
    spo: Vec<Triple>,
    /// The POS and OSP permutations, built on first use where the index is read from a saved state (an
    /// incremental run that patches the triples builds the new index's orders, and never the old one's).
    pos: OnceLock<Vec<u32>>,
    osp: OnceLock<Vec<u32>>,
    predicates: Vec<(TermId, PredicateStats)>,
    /// The [`fence`] of each order (SPO, POS, OSP), built on the first search of it.
    fences: Fences,
}

/// The [`fence`]s of the three orders of a set of triples, each built on first use.
#[derive(Debug, Default, Clone)]
pub struct Fences([std::sync::OnceLock<Vec<[TermId; 3]>>; 3]);

impl Fences {
    /// The fence of `perm`'s order of `spo` (`idx`: the permutation, `None` for SPO itself).
    pub fn of(&self, perm: Perm, spo: &[Triple], idx: Option<&[u32]>) -> &[[TermId; 3]] {
        self.0[perm as usize].get_or_init(|| match idx {
            None => fence(spo, |k| *k),
            Some(idx) => fence(idx, |&i| perm.to_key(spo[i as usize])),
        })
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        (self.0.iter())
            .map(|f| {
                f.get()
                    .map_or(0, |v| v.capacity() * size_of::<[TermId; 3]>())
            })
            .sum()
    }
}

/// The triples of an index matching a pattern, in the order of the pattern's permutation: a range of the SPO
/// array, or of a permutation of it.
#[derive(Copy, Clone, Debug)]
pub struct Matches<'a> {
    perm: Perm,
    spo: &'a [Triple],
    /// The range of the permutation (`None`: `spo` itself is the range, in SPO order).
    idx: Option<&'a [u32]>,
}

impl<'a> Matches<'a> {
    /// The order the matches are sorted in.
    pub fn order(&self) -> Perm {
        self.perm
    }

    /// How many.
    pub fn len(&self) -> usize {
        self.idx.map_or(self.spo.len(), <[u32]>::len)
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `i`-th match (an SPO triple).
    #[inline]
    pub fn get(&self, i: usize) -> Triple {
        match self.idx {
            None => self.spo[i],
            Some(idx) => self.spo[idx[i] as usize],
        }
    }

    /// The matches, as SPO triples, in [`Matches::order`].
    pub fn iter(self) -> impl ExactSizeIterator<Item = Triple> + 'a {
        (0..self.len()).map(move |i| self.get(i))
    }

    /// The parts a scan cursor reads: the permutation's range (if any) and the SPO array it indexes.
    pub(crate) fn parts(&self) -> (Option<&'a [u32]>, &'a [Triple]) {
        (self.idx, self.spo)
    }
}

impl TripleIndex {
    /// Sorts and deduplicates `triples` (SPO) and builds the other two orders.
    pub fn from_triples(mut triples: Vec<Triple>) -> Self {
        triples.par_sort_unstable();
        triples.dedup();
        // Capacity never written is never touched; only a large surplus is worth a copy.
        if triples.capacity() > triples.len() + triples.len() / 4 {
            triples.shrink_to_fit();
        }
        // The objects' counts while the POS keys go by in order, not through the permutation afterwards.
        let mut counter = ObjectCounter::default();
        let pos = permutation_seeing(
            &triples,
            Perm::Pos,
            |[p, o, _]| counter.see(p, o),
            Sort::Parallel,
        );
        let osp = permutation(&triples, Perm::Osp);
        let predicates = counter.with_subjects(&triples);
        Self {
            spo: triples,
            pos: pos.into(),
            osp: osp.into(),
            predicates,
            fences: Fences::default(),
        }
    }

    /// An index from its triples in SPO order (a saved state, or a state's triples with a change merged in),
    /// its POS and OSP orders built by stable counting sorts where ids allow: now with `orders` (beside the
    /// predicates' counts), else on first use. `None` unless the triples are strictly sorted.
    pub fn from_sorted(spo: Vec<Triple>, orders: bool) -> Option<Self> {
        use rayon::prelude::*;
        spo.par_windows(2)
            .all(|w| w[0] < w[1])
            .then(|| Self::of_sorted(spo, orders))
    }

    /// [`TripleIndex::from_sorted`] of triples known to be strictly sorted.
    fn of_sorted(spo: Vec<Triple>, orders: bool) -> Self {
        let mut index = Self {
            spo,
            ..Self::default()
        };
        let spo = &index.spo;
        let predicates = if orders {
            let osp = sorted_permutation(spo, Perm::Osp, None, Sort::Parallel);
            let (pos, predicates) = rayon::join(
                || sorted_permutation(spo, Perm::Pos, Some(&osp), Sort::Parallel),
                || dense_stats(spo),
            );
            let predicates = predicates.unwrap_or_else(|| stats_through(spo, &pos));
            index.osp = osp.into();
            index.pos = pos.into();
            predicates
        } else {
            match dense_stats(spo) {
                Some(stats) => stats,
                None => stats_through(spo, index.pos()),
            }
        };
        index.predicates = predicates;
        index
    }

    /// The POS order (built on first use, from the OSP order, which is kept).
    fn pos(&self) -> &[u32] {
        order_on_first_use(&self.pos, &self.spo, Perm::Pos, Some(self.osp()))
    }

    /// The OSP order (built on first use).
    fn osp(&self) -> &[u32] {
        order_on_first_use(&self.osp, &self.spo, Perm::Osp, None)
    }

    /// Whether the POS and OSP orders are built.
    pub fn has_orders(&self) -> bool {
        self.pos.get().is_some() && self.osp.get().is_some()
    }

    /// The index without `removed` (each must be here) and with `added` (none may be): SPO merged, each
    /// permutation remapped and merged with the added triples' places, not sorted again: `O(n + k log k)` for
    /// `k` changes. `None` if a change does not fit.
    pub fn patched(&self, removed: &[Triple], added: &[Triple]) -> Option<Self> {
        let mut removed = removed.to_vec();
        let mut added = added.to_vec();
        removed.sort_unstable();
        added.sort_unstable();
        if !self.has_orders() {
            // The old orders were never read: the new index's are built from its triples (on first use), which
            // costs less than building the old ones to patch them.
            return Some(Self::of_sorted(
                patch_sorted(&self.spo, removed, added)?,
                false,
            ));
        }
        let (spo, pos, osp) = patch_permuted(
            &self.spo,
            (self.pos(), self.osp()),
            &self.fences,
            &removed,
            &added,
        )?;
        let predicates = predicate_stats(&spo, &pos);
        Some(Self {
            spo,
            pos: pos.into(),
            osp: osp.into(),
            predicates,
            fences: Fences::default(),
        })
    }

    /// Counts for one predicate.
    pub fn predicate_stats(&self, p: TermId) -> Option<PredicateStats> {
        self.predicates
            .binary_search_by_key(&p, |(q, _)| *q)
            .ok()
            .map(|i| self.predicates[i].1)
    }

    /// The distinct predicates, ascending by id.
    pub fn predicates(&self) -> impl Iterator<Item = TermId> + '_ {
        self.predicates.iter().map(|(p, _)| *p)
    }

    /// How many distinct predicates.
    pub fn predicate_count(&self) -> usize {
        self.predicates.len()
    }

    /// How many triples.
    pub fn len(&self) -> usize {
        self.spo.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.spo.is_empty()
    }

    /// The permutation of the SPO array that sorts it in `perm` order (`None` for SPO itself).
    pub fn permutation(&self, perm: Perm) -> Option<&[u32]> {
        match perm {
            Perm::Spo => None,
            Perm::Pos => Some(self.pos()),
            Perm::Osp => Some(self.osp()),
        }
    }

    /// The matches of a pattern, in the order whose bound prefix it is.
    pub fn range(&self, pattern: &Pattern) -> Matches<'_> {
        let (perm, len) = Perm::for_pattern(pattern);
        let prefix = perm.prefix(pattern);
        let spo = &self.spo[..];
        let idx = self.permutation(perm);
        let fence = || self.fences.of(perm, spo, idx);
        match idx {
            None => {
                let range = fenced_range(spo, |k| *k, fence, prefix, len);
                Matches {
                    perm,
                    spo: &spo[range],
                    idx: None,
                }
            }
            Some(idx) => {
                let key_of = |&i: &u32| perm.to_key(spo[i as usize]);
                let range = fenced_range(idx, key_of, fence, prefix, len);
                Matches {
                    perm,
                    spo,
                    idx: Some(&idx[range]),
                }
            }
        }
    }

    /// The exact number of matches of a pattern.
    pub fn count(&self, pattern: &Pattern) -> usize {
        self.range(pattern).len()
    }

    /// Whether the triple is present.
    pub fn contains(&self, triple: Triple) -> bool {
        self.spo.binary_search(&triple).is_ok()
    }

    /// All triples in SPO order.
    pub fn triples(&self) -> &[Triple] {
        &self.spo
    }

    /// The SPO order's [`fence`] (built on first use).
    pub fn spo_fence(&self) -> &[[TermId; 3]] {
        self.fences.of(Perm::Spo, &self.spo, None)
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.spo.capacity() * size_of::<Triple>()
            + [&self.pos, &self.osp]
                .iter()
                .map(|o| o.get().map_or(0, Vec::capacity) * 4)
                .sum::<usize>()
            + self.fences.heap_bytes()
    }
}

/// Per-predicate counts: in one sequential pass over SPO where the predicates are few enough ([`dense_stats`]),
/// else through the POS permutation, by chunks in parallel (each chunk's counter joined to the next: a
/// predicate, or a (predicate, object) run, cut by a chunk's end is counted once).
fn predicate_stats(spo: &[Triple], pos: &[u32]) -> Vec<(TermId, PredicateStats)> {
    dense_stats(spo).unwrap_or_else(|| stats_through(spo, pos))
}

/// Per-predicate counts through the POS permutation (random reads of SPO), by chunks in parallel.
fn stats_through(spo: &[Triple], pos: &[u32]) -> Vec<(TermId, PredicateStats)> {
    use rayon::prelude::*;
    let parts: Vec<ObjectCounter> = pos
        .par_chunks(STATS_CHUNK)
        .map(|chunk| {
            let mut counter = ObjectCounter::default();
            for &i in chunk {
                let [_, p, o] = spo[i as usize];
                counter.see(p, o);
            }
            counter
        })
        .collect();
    let mut all = ObjectCounter::default();
    for part in parts {
        all.join(part);
    }
    all.with_subjects(spo)
}

/// Per-predicate counts in sequential passes over SPO, `None` where the tables they need would be large: a slot
/// per predicate id between the least and the greatest, and a bitmap of the objects seen per predicate (one bit
/// per predicate and object id in the objects' span), at most about a byte per triple and per chunk: in cache,
/// where random reads through POS would not be. In SPO order a (subject, predicate) pair is one run, so a
/// predicate's subjects are counted when its last subject changes (a run cut by a chunk's end once); its objects
/// are the bits set in its row of the chunks' bitmaps, or-ed.
fn dense_stats(spo: &[Triple]) -> Option<Vec<(TermId, PredicateStats)>> {
    use rayon::prelude::*;
    let span = |(lo, hi): (u32, u32)| (hi as usize + 1).saturating_sub(lo as usize);
    let ([p_lo, o_lo], [p_hi, o_hi]) = spo
        .par_iter()
        .fold(
            || ([u32::MAX; 2], [0; 2]),
            |(lo, hi), t| {
                (
                    [lo[0].min(t[1].0), lo[1].min(t[2].0)],
                    [hi[0].max(t[1].0), hi[1].max(t[2].0)],
                )
            },
        )
        .reduce(
            || ([u32::MAX; 2], [0; 2]),
            |(a, b), (c, d)| {
                (
                    [a[0].min(c[0]), a[1].min(c[1])],
                    [b[0].max(d[0]), b[1].max(d[1])],
                )
            },
        );
    let (p_span, o_span) = (span((p_lo, p_hi)), span((o_lo, o_hi)));
    if spo.is_empty() || p_span > spo.len() + (1 << 16) {
        return None;
    }
    // The predicates present, numbered in id order.
    let mut slot = vec![u32::MAX; p_span];
    for t in spo {
        slot[(t[1].0 - p_lo) as usize] = 0;
    }
    let mut preds: Vec<TermId> = Vec::new();
    for (k, s) in slot.iter_mut().enumerate() {
        if *s == 0 {
            *s = preds.len() as u32;
            preds.push(TermId(p_lo + k as u32));
        }
    }
    let words = o_span.div_ceil(64);
    let budget = 8 * spo.len() + (1 << 20);
    if preds
        .len()
        .checked_mul(words * 64)
        .is_none_or(|bits| bits > budget)
    {
        return None;
    }
    let chunk = spo.len().div_ceil(rayon::current_num_threads().clamp(1, 4));
    let parts: Vec<(Vec<[usize; 2]>, Vec<u64>)> = spo
        .par_chunks(chunk)
        .map(|part| {
            let mut seen = vec![0u64; preds.len() * words];
            let mut counts = vec![[0usize; 2]; preds.len()];
            let mut last_subject = vec![u32::MAX; preds.len()];
            for &[s, p, o] in part {
                let k = slot[(p.0 - p_lo) as usize] as usize;
                counts[k][0] += 1;
                if last_subject[k] != s.0 {
                    last_subject[k] = s.0;
                    counts[k][1] += 1;
                }
                let bit = (o.0 - o_lo) as usize;
                seen[k * words + bit / 64] |= 1 << (bit % 64);
            }
            (counts, seen)
        })
        .collect();
    let mut stats = vec![PredicateStats::default(); preds.len()];
    let mut rows: Option<Vec<u64>> = None;
    for (counts, seen) in parts {
        for (st, [triples, subjects]) in stats.iter_mut().zip(counts) {
            st.triples += triples;
            st.subjects += subjects;
        }
        match &mut rows {
            None => rows = Some(seen),
            Some(rows) => rows.iter_mut().zip(seen).for_each(|(a, b)| *a |= b),
        }
    }
    for cut in (chunk..spo.len()).step_by(chunk) {
        let ([s, p, _], [t, q, _]) = (spo[cut - 1], spo[cut]);
        if [s, p] == [t, q] {
            stats[slot[(p.0 - p_lo) as usize] as usize].subjects -= 1;
        }
    }
    let rows = rows.expect("one chunk or more");
    for (k, st) in stats.iter_mut().enumerate() {
        st.objects = (rows[k * words..(k + 1) * words].iter())
            .map(|w| w.count_ones() as usize)
            .sum();
    }
    Some(preds.into_iter().zip(stats).collect())
}

/// Triples a chunk when counting in parallel.
const STATS_CHUNK: usize = 1 << 18;

/// Counts per predicate, fed (predicate, object) in POS order: triples and distinct objects.
#[derive(Default)]
struct ObjectCounter {
    out: Vec<(TermId, PredicateStats)>,
    first: Option<[TermId; 2]>,
    last: Option<[TermId; 2]>,
}

impl ObjectCounter {
    fn see(&mut self, p: TermId, o: TermId) {
        if self.out.last().is_none_or(|(q, _)| *q != p) {
            self.out.push((p, PredicateStats::default()));
        }
        let stats = &mut self.out.last_mut().expect("pushed").1;
        stats.triples += 1;
        if self.last != Some([p, o]) {
            stats.objects += 1;
            self.last = Some([p, o]);
        }
        self.first.get_or_insert([p, o]);
    }

    /// Appends the counts of the (predicate, object) pairs that follow this counter's in POS order.
    fn join(&mut self, next: ObjectCounter) {
        let mut rest = next.out.into_iter();
        if let (Some((p, mine)), Some(first)) = (self.out.last_mut(), next.first) {
            if *p == first[0] {
                let theirs = rest
                    .next()
                    .expect("a first pair has its predicate's counts")
                    .1;
                mine.triples += theirs.triples;
                mine.objects += theirs.objects - usize::from(self.last == Some(first));
            }
        }
        self.out.extend(rest);
        self.first = self.first.or(next.first);
        self.last = next.last.or(self.last);
    }

    /// The counts, with each predicate's distinct subjects counted from SPO order (by chunks in parallel: a
    /// (subject, predicate) run cut by a chunk's end is counted once).
    fn with_subjects(self, spo: &[Triple]) -> Vec<(TermId, PredicateStats)> {
        use rayon::prelude::*;
        let mut out = self.out;
        let preds: Vec<TermId> = out.iter().map(|(p, _)| *p).collect();
        let parts: Vec<Vec<usize>> = spo
            .par_chunks(STATS_CHUNK)
            .map(|chunk| {
                let mut counts = vec![0usize; preds.len()];
                let mut last: Option<[TermId; 2]> = None;
                for &[s, p, _] in chunk {
                    if last != Some([s, p]) {
                        last = Some([s, p]);
                        if let Ok(i) = preds.binary_search(&p) {
                            counts[i] += 1;
                        }
                    }
                }
                counts
            })
            .collect();
        for counts in parts {
            for (i, n) in counts.into_iter().enumerate() {
                out[i].1.subjects += n;
            }
        }
        // A run cut by a chunk's end was counted in both chunks.
        for cut in (STATS_CHUNK..spo.len()).step_by(STATS_CHUNK) {
            let ([s, p, _], [t, q, _]) = (spo[cut - 1], spo[cut]);
            if [s, p] == [t, q] {
                if let Ok(i) = preds.binary_search(&p) {
                    out[i].1.subjects -= 1;
                }
            }
        }
        out
    }
}

/// The asserted quads, one [`TripleIndex`] per graph, graphs ordered by id.
#[derive(Debug, Default, Clone)]
pub struct QuadStore {
    graphs: Vec<(TermId, TripleIndex)>,
}

impl QuadStore {
    /// A store from per-graph triple lists (any order, duplicates allowed).
    pub fn from_graphs(graphs: impl IntoIterator<Item = (TermId, Vec<Triple>)>) -> Self {
        let mut graphs: Vec<(TermId, TripleIndex)> = graphs
            .into_iter()
            .filter(|(_, triples)| !triples.is_empty())
            .map(|(g, triples)| (g, TripleIndex::from_triples(triples)))
            .collect();
        graphs.sort_unstable_by_key(|(g, _)| *g);
        Self { graphs }
    }

    /// A store from per-graph indexes (graphs in any order, each once).
    pub fn from_indexes(mut graphs: Vec<(TermId, TripleIndex)>) -> Self {
        graphs.retain(|(_, idx)| !idx.is_empty());
        graphs.sort_unstable_by_key(|(g, _)| *g);
        Self { graphs }
    }

    /// The store without `removed` (each held) and with `added` (none held), both sorted by graph: each graph's
    /// index patched ([`TripleIndex::patched`]), not built again. `None` if a change does not fit.
    pub fn patched(&self, removed: &[super::Quad], added: &[super::Quad]) -> Option<Self> {
        let mut graphs: Vec<TermId> = (self.graphs.iter().map(|(g, _)| *g))
            .chain(added.iter().map(|q| q[0]))
            .collect();
        graphs.sort_unstable();
        graphs.dedup();
        let of = |quads: &[super::Quad], g: TermId| -> Vec<Triple> {
            let start = quads.partition_point(|q| q[0] < g);
            let end = quads.partition_point(|q| q[0] <= g);
            quads[start..end]
                .iter()
                .map(|&[_, s, p, o]| [s, p, o])
                .collect()
        };
        let empty = TripleIndex::default();
        let mut indexes = Vec::with_capacity(graphs.len());
        for g in graphs {
            let (gone, new) = (of(removed, g), of(added, g));
            let before = self.graph(g).unwrap_or(&empty);
            let index = if gone.is_empty() && new.is_empty() {
                before.clone()
            } else {
                before.patched(&gone, &new)?
            };
            indexes.push((g, index));
        }
        Some(Self::from_indexes(indexes))
    }

    /// Every quad (sorted), each graph's index freed as soon as its triples are copied.
    pub fn into_quads(self) -> Vec<super::Quad> {
        let mut out = Vec::with_capacity(self.len());
        for (g, index) in self.graphs {
            out.extend(index.spo.iter().map(|&[s, p, o]| [g, s, p, o]));
        }
        out
    }

    /// The index of one graph, if it holds any triple.
    pub fn graph(&self, graph: TermId) -> Option<&TripleIndex> {
        self.graphs
            .binary_search_by_key(&graph, |(g, _)| *g)
            .ok()
            .map(|i| &self.graphs[i].1)
    }

    /// Every non-empty graph with its index, by id.
    pub fn graphs(&self) -> impl Iterator<Item = (TermId, &TripleIndex)> {
        self.graphs.iter().map(|(g, idx)| (*g, idx))
    }

    /// Every quad, sorted (graph, subject, predicate, object).
    pub fn quads(&self) -> impl Iterator<Item = super::Quad> + '_ {
        (self.graphs.iter())
            .flat_map(|(g, idx)| idx.triples().iter().map(|&[s, p, o]| [*g, s, p, o]))
    }

    /// Whether the store holds a quad.
    pub fn contains(&self, [g, s, p, o]: super::Quad) -> bool {
        self.graph(g).is_some_and(|i| i.contains([s, p, o]))
    }

    /// The total number of quads.
    pub fn len(&self) -> usize {
        self.graphs.iter().map(|(_, idx)| idx.len()).sum()
    }

    /// Whether there are no quads.
    pub fn is_empty(&self) -> bool {
        self.graphs.is_empty()
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.graphs.iter().map(|(_, idx)| idx.heap_bytes()).sum()
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
    fn predicate_counts_by_chunks_equal_counts_by_sets_when_runs_cross_chunk_ends() {
        // (subject, predicate) runs of 3 and (predicate, object) runs of 100,000 triples, cut by chunk ends.
        let triples: Vec<Triple> = (0..900_000u32)
            .map(|i| t(i / 9, 1 + (i / 3) % 3, i % 3))
            .collect();
        let mut want: std::collections::BTreeMap<
            u32,
            (
                usize,
                std::collections::BTreeSet<u32>,
                std::collections::BTreeSet<u32>,
            ),
        > = Default::default();
        let mut distinct = triples.clone();
        distinct.sort_unstable();
        distinct.dedup();
        for &[s, p, o] in &distinct {
            let e = want.entry(p.0).or_default();
            e.0 += 1;
            e.1.insert(s.0);
            e.2.insert(o.0);
        }
        let built = TripleIndex::from_triples(triples);
        let read = TripleIndex::from_sorted(built.spo.clone(), false).expect("sorted");
        for perm in [Perm::Pos, Perm::Osp] {
            assert!(
                read.permutation(perm) == built.permutation(perm),
                "{perm:?}"
            );
        }
        for index in [&built, &read] {
            for (&p, (n, subjects, objects)) in &want {
                let got = index
                    .predicate_stats(TermId(p))
                    .expect("a predicate present");
                assert_eq!(
                    (got.triples, got.subjects, got.objects),
                    (*n, subjects.len(), objects.len()),
                    "predicate {p}"
                );
            }
        }
    }

    #[test]
    fn orders_built_on_first_use_by_many_pool_threads_at_once_equal_those_built_eagerly() {
        use rayon::prelude::*;
        // Ids spread wider than counting sorts take, and more triples than a sort does alone: the orders are
        // sorted as pairs; built on first use from pool threads, that sort must not wait on the pool.
        let spo: Vec<Triple> = (0..40_000u32)
            .map(|i| t(i, 7 + i % 3, (i * 7919) % 40_000 * 10))
            .collect();
        let eager = TripleIndex::from_sorted(spo.clone(), true).unwrap();
        let lazy = TripleIndex::from_sorted(spo, false).unwrap();
        assert!(!lazy.has_orders());
        let perms = [Perm::Pos, Perm::Osp];
        let read: Vec<Vec<u32>> = (0..64)
            .into_par_iter()
            .map(|k| lazy.permutation(perms[k % 2]).unwrap().to_vec())
            .collect();
        for (k, order) in read.iter().enumerate() {
            assert_eq!(Some(order.as_slice()), eager.permutation(perms[k % 2]));
        }
    }

    proptest! {
        #[test]
        fn prefix_range_is_the_run_of_keys_sharing_the_prefix_and_a_search_through_the_fence_finds_it(
            mut keys in prop::collection::vec((0u32..4, 0u32..4, 0u32..4), 0..300),
            prefix in (0u32..5, 0u32..5, 0u32..5),
            len in 0usize..=3,
        ) {
            keys.sort_unstable();
            let keys: Vec<Triple> = keys.into_iter().map(|(a, b, c)| t(a, b, c)).collect();
            let prefix = t(prefix.0, prefix.1, prefix.2);
            let range = prefix_range(&keys, |k| *k, prefix, len);
            let expected: Vec<usize> =
                (0..keys.len()).filter(|&i| keys[i][..len] == prefix[..len]).collect();
            prop_assert_eq!(range.clone().collect::<Vec<_>>(), expected.clone());
            if expected.is_empty() {
                // An empty range sits where the prefix would be inserted.
                prop_assert_eq!(range.start, keys.partition_point(|k| k[..len] < prefix[..len]));
            }
            // Through the fence (every FENCE-th key; runs of equal keys cross its posts), the same range.
            let fence = fence(&keys, |k| *k);
            prop_assert_eq!(fence.len(), keys.len().div_ceil(FENCE));
            prop_assert_eq!(fenced_range(&keys, |k| *k, || &fence, prefix, len), range);
        }
    }

    fn naive(triples: &[Triple], pattern: &Pattern) -> Vec<Triple> {
        let mut out: Vec<Triple> = triples
            .iter()
            .copied()
            .filter(|tr| (0..3).all(|i| pattern[i].is_none_or(|b| b == tr[i])))
            .collect();
        out.sort();
        out.dedup();
        out
    }

    #[test]
    fn duplicates_are_dropped_and_every_order_is_sorted() {
        let idx = TripleIndex::from_triples(vec![t(2, 1, 3), t(1, 1, 1), t(2, 1, 3), t(1, 2, 0)]);
        assert_eq!(idx.len(), 3);
        assert!(idx.triples().is_sorted());
        for perm in [Perm::Pos, Perm::Osp] {
            let order = idx.permutation(perm).unwrap();
            let keys: Vec<[TermId; 3]> = order
                .iter()
                .map(|&i| perm.to_key(idx.triples()[i as usize]))
                .collect();
            assert!(keys.is_sorted(), "{perm:?}");
            assert_eq!(keys.len(), 3);
        }
    }

    #[test]
    fn predicate_stats_count_triples_and_distinct_ends() {
        let idx = TripleIndex::from_triples(vec![t(1, 9, 3), t(1, 9, 4), t(2, 9, 3), t(2, 8, 3)]);
        assert_eq!(
            idx.predicate_stats(TermId(9)),
            Some(PredicateStats {
                triples: 3,
                subjects: 2,
                objects: 2
            })
        );
        assert_eq!(idx.predicate_count(), 2);
    }

    proptest! {
        #[test]
        fn every_pattern_range_matches_a_naive_filter(
            triples in proptest::collection::vec((0u32..5, 0u32..4, 0u32..5), 0..60),
            pattern in (proptest::option::of(0u32..5), proptest::option::of(0u32..4), proptest::option::of(0u32..5)),
        ) {
            let triples: Vec<Triple> = triples.into_iter().map(|(s, p, o)| t(s, p, o)).collect();
            let pattern: Pattern = [pattern.0.map(TermId), pattern.1.map(TermId), pattern.2.map(TermId)];
            let idx = TripleIndex::from_triples(triples.clone());
            let matches = idx.range(&pattern);
            let perm = matches.order();
            let mut got: Vec<Triple> = matches.iter().collect();
            prop_assert!(got.iter().map(|&t| perm.to_key(t)).is_sorted());
            got.sort();
            prop_assert_eq!(idx.count(&pattern), got.len());
            prop_assert_eq!(got, naive(&triples, &pattern));
        }

        #[test]
        fn stats_counted_in_one_pass_over_spo_equal_those_counted_through_pos(
            triples in proptest::collection::btree_set((0u32..40, 0u32..6, 0u32..40), 0..120),
            wide in proptest::bool::ANY,
        ) {
            // `wide`: predicate ids spread far past the triples' count, where the pass through POS is used.
            let spread = if wide { 1 << 24 } else { 1 };
            let spo: Vec<Triple> = triples
                .into_iter()
                .map(|(s, p, o)| t(s, 1 + p * spread, o))
                .collect();
            let pos = permutation(&spo, Perm::Pos);
            let dense = dense_stats(&spo);
            let predicates: std::collections::BTreeSet<TermId> = spo.iter().map(|x| x[1]).collect();
            prop_assert_eq!(dense.is_none(), spo.is_empty() || wide && predicates.len() > 1);
            if let Some(dense) = dense {
                prop_assert_eq!(dense, stats_through(&spo, &pos));
            }
        }

        #[test]
        fn counting_sorts_give_the_permutations_that_sorting_pairs_gives(
            triples in proptest::collection::btree_set((0u32..40, 0u32..6, 0u32..40), 0..80),
            wide in proptest::bool::ANY,
        ) {
            // `wide`: ids spread far past the triples' count, where the sort of pairs is used instead.
            let spread = if wide { 1 << 24 } else { 1 };
            let spo: Vec<Triple> = triples
                .into_iter()
                .map(|(s, p, o)| t(s * spread, p * spread, o * spread))
                .collect();
            let osp = sorted_permutation(&spo, Perm::Osp, None, Sort::Parallel);
            prop_assert_eq!(&osp, &permutation(&spo, Perm::Osp));
            let pos = permutation(&spo, Perm::Pos);
            for sort in [Sort::Parallel, Sort::Here] {
                prop_assert_eq!(&sorted_permutation(&spo, Perm::Pos, None, sort), &pos);
                prop_assert_eq!(&sorted_permutation(&spo, Perm::Pos, Some(&osp), sort), &pos);
                prop_assert_eq!(&sorted_permutation(&spo, Perm::Osp, None, sort), &osp);
            }
        }

        #[test]
        fn galloping_finds_where_a_sorted_slice_stops_being_below_a_key_as_binary_search_does(
            items in proptest::collection::vec(0u32..100, 0..200),
            key in 0u32..110,
        ) {
            let mut items = items;
            items.sort_unstable();
            prop_assert_eq!(gallop(&items, |&x| x < key), items.partition_point(|&x| x < key));
        }

        #[test]
        fn a_patched_index_equals_one_built_from_its_triples(
            before in proptest::collection::btree_set((0u32..12, 0u32..4, 0u32..12), 0..300),
            after in proptest::collection::btree_set((0u32..12, 0u32..4, 0u32..12), 0..300),
        ) {
            // Up to 576 distinct triples: the positions span several 64-position words of the renumbering.
            let set = |s: &std::collections::BTreeSet<(u32, u32, u32)>| -> Vec<Triple> {
                s.iter().map(|&(a, b, c)| t(a, b, c)).collect()
            };
            let (old, new) = (set(&before), set(&after));
            let removed: Vec<Triple> = old.iter().filter(|x| !new.contains(x)).copied().collect();
            let added: Vec<Triple> = new.iter().filter(|x| !old.contains(x)).copied().collect();
            let patched = TripleIndex::from_triples(old.clone()).patched(&removed, &added).unwrap();
            let built = TripleIndex::from_triples(new);
            prop_assert_eq!(patched.triples(), built.triples());
            for perm in [Perm::Pos, Perm::Osp] {
                prop_assert_eq!(patched.permutation(perm), built.permutation(perm));
            }
            prop_assert_eq!(&patched.predicates, &built.predicates);
            // An index read from a state whose orders were never read: the new index's are built from its
            // triples (the old ones stay unbuilt), and equal those patched.
            let lazy = TripleIndex::from_sorted(old.clone(), false).unwrap();
            let unread = !lazy.has_orders();
            let rebuilt = lazy.patched(&removed, &added).unwrap();
            prop_assert_eq!(lazy.has_orders(), !unread, "patching built no old order");
            prop_assert_eq!(rebuilt.triples(), built.triples());
            for perm in [Perm::Pos, Perm::Osp] {
                prop_assert_eq!(rebuilt.permutation(perm), built.permutation(perm));
            }
            prop_assert_eq!(&rebuilt.predicates, &built.predicates);
            // A change that does not fit is refused: removing what is not there, adding what is.
            if let Some(&x) = added.first() {
                prop_assert!(TripleIndex::from_triples(old.clone()).patched(&[x], &[]).is_none());
            }
            if let Some(&x) = added.first() {
                prop_assert!(TripleIndex::from_sorted(old.clone(), false).unwrap().patched(&[x], &[]).is_none());
            }
            if let Some(&x) = old.first() {
                prop_assert!(TripleIndex::from_sorted(old.clone(), false).unwrap().patched(&[], &[x]).is_none());
                prop_assert!(TripleIndex::from_triples(old).patched(&[], &[x]).is_none());
            }
        }
    }
}
