//! `sort` and `sort_by_key` across ranks: a sample sort.
//!
//! 1. Each rank sorts its block with dpl-cpu (a stable radix sort for scalar keys).
//! 2. Each takes `S` regular samples of its sorted block; the samples of all ranks are
//!    all-gathered and every rank picks the same `P - 1` splitters from them.
//! 3. Each rank cuts its sorted block at the splitters and sends piece `q` to rank `q`
//!    (one `all_to_all` of counts, one `all_to_all_v`).
//! 4. Each rank sorts the runs it received, concatenated in rank order, stably.
//! 5. The result is rebalanced to the input's block lengths (a realignment window).
//!
//! Elements are compared by `(key, rank, position in the rank's sorted block)`: a total
//! order in which equal keys follow their original global order (blocks are in rank order
//! and the local sort is stable). So splitters can fall inside a run of equal keys, which
//! keeps the buckets balanced with many duplicates, and the sort stays stable.

use super::call::Call;
use super::fetch::window_as;
use super::layout::layout;
use super::wire::{Wire, bytes_of, values_of};
use dpl_cpu::rt::{At, SortKey};
use std::cmp::Ordering;

/// Samples per rank per splitter: more samples, more even buckets.
const OVERSAMPLE: usize = 16;

/// This rank's block (of the lengths of `lay_out`, the input's layout) of the global
/// sequence `f(0..len)` of every rank, sorted ascending (the result of `prim` at `at`).
pub fn sort<T, F>(
    c: &Call<'_>,
    len: usize,
    f: F,
    lay_out: &[usize],
    prim: &'static str,
    at: At,
) -> Vec<T>
where
    T: SortKey + Wire,
    F: Fn(usize) -> T + Sync,
{
    let local = dpl_cpu::rt::sort(len, f, prim, at);
    if c.size() == 1 {
        return local;
    }
    sample_sort(c, local, |t: &T| *t, lay_out, prim, at)
}

/// This rank's block (the lengths of `lay_out`) of the values of the pairs `(key, value)
/// = f(k)` of every rank, ordered by ascending key; equal keys keep their global order.
/// The result is that of `prim` at `at`.
pub fn sort_by_key<K, V, F>(
    c: &Call<'_>,
    len: usize,
    f: F,
    lay_out: &[usize],
    prim: &'static str,
    at: At,
) -> Vec<V>
where
    K: SortKey + Wire,
    V: Wire,
    F: Fn(usize) -> (K, V) + Sync,
{
    if c.size() == 1 {
        return dpl_cpu::rt::sort_by_key(len, f, prim, at);
    }
    let pair = |k| {
        let e = f(k);
        (e.0, e)
    };
    let local: Vec<(K, V)> = dpl_cpu::rt::sort_by_key(len, pair, prim, at);
    let sorted = sample_sort(c, local, |e: &(K, V)| e.0, lay_out, prim, at);
    sorted.into_iter().map(|e| e.1).collect()
}

/// Steps 2-5 of the module docs for `local`, sorted stably by `key`.
fn sample_sort<E, K, G>(
    c: &Call<'_>,
    local: Vec<E>,
    key: G,
    lay_out: &[usize],
    prim: &'static str,
    at: At,
) -> Vec<E>
where
    E: Wire,
    K: SortKey + Wire,
    G: Fn(&E) -> K + Sync,
{
    let (p, me) = (c.size(), c.rank());
    c.agree();
    let cmp = |a: &(K, u64, u64), b: &(K, u64, u64)| {
        a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2))
    };
    // Regular samples of the sorted block, tagged with their rank and position.
    let s = OVERSAMPLE * (p - 1);
    let n = local.len();
    let samples: Vec<Option<(K, u64, u64)>> = (0..s)
        .map(|i| {
            let pos = (i + 1) * n / (s + 1);
            (pos < n).then(|| (key(&local[pos]), me as u64, pos as u64))
        })
        .collect();
    let mut all: Vec<(K, u64, u64)> =
        values_of::<Option<(K, u64, u64)>>(&c.all_gather_bytes("sort", &bytes_of(&samples)))
            .into_iter()
            .flatten()
            .collect();
    all.sort_by(cmp);
    let splitters: Vec<(K, u64, u64)> = (1..p)
        .filter_map(|q| all.get(q * all.len() / p).copied())
        .collect();
    // Cut points of the local block: element `i` is `(key, me, i)` in the total order.
    let mut cuts = Vec::with_capacity(p + 1);
    cuts.push(0);
    for t in &splitters {
        let below = |i: usize| cmp(&(key(&local[i]), me as u64, i as u64), t) == Ordering::Less;
        let (mut lo, mut hi) = (0, n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if below(mid) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let at = lo;
        cuts.push(at.max(*cuts.last().unwrap_or(&0)));
    }
    while cuts.len() <= p {
        cuts.push(n);
    }
    cuts[p] = n;
    let send_counts: Vec<usize> = (0..p).map(|q| (cuts[q + 1] - cuts[q]) * E::BYTES).collect();
    let recv_counts = c.all_to_all_counts("sort", &send_counts);
    let runs: Vec<E> =
        values_of(&c.all_to_all_bytes("sort", &bytes_of(&local), &send_counts, &recv_counts));
    drop(local);
    // The runs, in rank order, each sorted: a stable sort orders them globally.
    let runs = &runs[..];
    // SAFETY: `sort_by_key` calls the element function only with indices below its length.
    let run = |i: usize| unsafe { (key(runs.get_unchecked(i)), *runs.get_unchecked(i)) };
    let merged: Vec<E> = dpl_cpu::rt::sort_by_key(runs.len(), run, prim, at);
    let lay_now = layout(c, merged.len());
    let w = window_as(c, &merged, &lay_now, lay_out, 0, 0, "sort");
    if matches!(&w, std::borrow::Cow::Borrowed(b) if b.len() == merged.len()) {
        drop(w);
        merged
    } else {
        w.into_owned()
    }
}
