//! `scatter`, `scatter_reduce` and `permute` across ranks: writes to global indices.
//!
//! Each rank computes its `(index, value)` pairs with dpl-cpu's map and checks the indices
//! (the first bad one raises, and the agreement makes it the globally first). The pairs
//! are bucketed by the rank that owns their index, in source order; one `all_to_all` of
//! counts and one `all_to_all_v` of pairs move the buckets, and each owner applies what it
//! receives rank by rank, in rank order: global source order, so the last write in source
//! order wins and `scatter_reduce` combines in source order, as the sequential definition.
//!
//! A `scatter_reduce` into a destination small next to its source (`P * len(dst) <=
//! len(src)`, histograms) sends partial results instead of pairs: each rank reduces its
//! pairs into a private copy of the whole destination (dpl-cpu's `scatter_reduce`, slots
//! empty until written), then each owner receives its slice of every rank's copy and
//! combines them in rank order (a reduce-scatter).

use super::call::Call;
use super::layout::{group_by_owner, owner};
use super::wire::{Wire, bytes_of, values_of};
use dpl_core::run::Error;
use dpl_cpu::rt::{At, Idx, index_error};
use std::mem::MaybeUninit;

/// The pairs `f(0..len)`, with their indices checked against `n`.
fn checked_pairs<I: Idx, T: Send, F: Fn(usize) -> (I, T) + Sync>(
    len: usize,
    f: F,
    n: usize,
    prim: &'static str,
    at: At,
) -> Vec<(usize, T)> {
    let pairs = dpl_cpu::rt::map(len, f, prim, at);
    if let Some((j, _)) = pairs.iter().find(|(j, _)| !j.in_range(n)) {
        index_error(prim, j.value(), n, at)
    }
    pairs
        .into_iter()
        .map(|(j, v)| (j.checked(n).unwrap_or(0), v))
        .collect()
}

/// Moves each pair to the owner of its index (layout `lay`); returns the pairs this rank
/// owns, with indices local to its block, in global source order.
fn route<T: Wire>(
    c: &Call<'_>,
    what: &'static str,
    pairs: Vec<(usize, T)>,
    lay: &[usize],
) -> Vec<(usize, T)> {
    let me = c.rank();
    let owners: Vec<u32> = pairs.iter().map(|&(j, _)| owner(lay, j) as u32).collect();
    let (counts, slots) = group_by_owner(&owners, c.size(), me);
    let total: usize = counts.iter().sum();
    let mut grouped: Vec<(u64, T)> = Vec::with_capacity(total);
    let spare = &mut grouped.spare_capacity_mut()[..total];
    let mut own = Vec::with_capacity(pairs.len() - total);
    for (&(j, v), &s) in pairs.iter().zip(&slots) {
        if s == usize::MAX {
            own.push((j - lay[me], v));
        } else {
            spare[s] = MaybeUninit::new((j as u64, v));
        }
    }
    // SAFETY: the slots of the items of other ranks are `0..total`, one each.
    unsafe { grouped.set_len(total) };
    let recv = c.all_to_all_counts(what, &counts);
    let bytes = |v: &[usize]| {
        v.iter()
            .map(|&x| x * <(u64, T)>::BYTES)
            .collect::<Vec<usize>>()
    };
    let got: Vec<(u64, T)> =
        values_of(&c.all_to_all_bytes(what, &bytes_of(&grouped), &bytes(&counts), &bytes(&recv)));
    let mut out = Vec::with_capacity(got.len() + own.len());
    let mut at = 0;
    for (q, &n) in recv.iter().enumerate() {
        if q == me {
            out.append(&mut own);
        }
        out.extend(
            got[at..at + n]
                .iter()
                .map(|&(j, v)| (j as usize - lay[me], v)),
        );
        at += n;
    }
    out
}

/// A copy of this rank's block `dst` of the destination (layout `lay_dst`) with `dst[j] =
/// v` for every pair `(j, v) = f(k)` of every rank (global `j`); the last in global
/// source order wins.
pub fn scatter<I, T, F>(
    c: &Call<'_>,
    len: usize,
    f: F,
    dst: &[T],
    lay_dst: &[usize],
    prim: &'static str,
    at: At,
) -> Vec<T>
where
    I: Idx,
    T: Wire,
    F: Fn(usize) -> (I, T) + Sync,
{
    if c.size() == 1 {
        return dpl_cpu::rt::scatter(len, f, dst, prim, at);
    }
    let pairs = checked_pairs(len, f, lay_dst[c.size()], prim, at);
    c.agree();
    let mut out = dst.to_vec();
    for (j, v) in route(c, "scatter", pairs, lay_dst) {
        out[j] = v;
    }
    out
}

/// A copy of this rank's block `dst` of the destination with `dst[j] = op(dst[j], v)` for
/// every pair `(j, v) = f(k)` of every rank, in global source order (`op` associative and
/// commutative). `src_len` is the global length of the source, which picks the
/// reduce-scatter when the destination is small; `identity`, `op`'s identity when known
/// (`dpl_core::ops`), lets the private copies of that path (and the one-rank case, as on
/// `Place::Cpu`) hold plain values instead of optional ones.
#[allow(clippy::too_many_arguments)]
pub fn scatter_reduce<I, T, F, Op>(
    c: &Call<'_>,
    len: usize,
    f: F,
    dst: &[T],
    lay_dst: &[usize],
    src_len: usize,
    op: Op,
    identity: Option<T>,
    prim: &'static str,
    at: At,
) -> Vec<T>
where
    I: Idx,
    T: Wire + PartialEq,
    F: Fn(usize) -> (I, T) + Sync,
    Op: Fn(T, T) -> T + Sync,
{
    let p = c.size();
    if p == 1 {
        return match identity {
            Some(id) => dpl_cpu::rt::scatter_reduce_identity(len, f, dst, op, id, prim, at),
            None => dpl_cpu::rt::scatter_reduce(len, f, dst, op, prim, at),
        };
    }
    let m = lay_dst[p];
    let mut out = dst.to_vec();
    if p.saturating_mul(m) <= src_len {
        match identity {
            Some(id) => {
                let parts =
                    dpl_cpu::rt::scatter_reduce_identity(len, f, &vec![id; m], &op, id, prim, at);
                combine_parts(c, &mut out, &parts, lay_dst, |o, v| *o = op(*o, v));
            }
            None => {
                let parts = dpl_cpu::rt::scatter_reduce(
                    len,
                    |k| {
                        let (j, v) = f(k);
                        (j, Some(v))
                    },
                    &vec![None; m],
                    |a: Option<T>, b: Option<T>| match (a, b) {
                        (Some(a), Some(b)) => Some(op(a, b)),
                        (a, None) => a,
                        (None, b) => b,
                    },
                    prim,
                    at,
                );
                combine_parts(c, &mut out, &parts, lay_dst, |o, v| {
                    if let Some(v) = v {
                        *o = op(*o, v)
                    }
                });
            }
        }
        return out;
    }
    let pairs = checked_pairs(len, f, m, prim, at);
    c.agree();
    for (j, v) in route(c, "scatter_reduce", pairs, lay_dst) {
        out[j] = op(out[j], v);
    }
    out
}

/// The reduce-scatter of [`scatter_reduce`], once this rank's private copy `parts` of the
/// whole destination (layout `lay_dst`) is made: agrees, sends each rank its slice, and
/// applies `combine` to this rank's block `out` with each slice received, in rank order.
fn combine_parts<T, V: Wire>(
    c: &Call<'_>,
    out: &mut [T],
    parts: &[V],
    lay_dst: &[usize],
    combine: impl Fn(&mut T, V),
) {
    let p = c.size();
    c.agree();
    let send_counts: Vec<usize> = (0..p)
        .map(|q| (lay_dst[q + 1] - lay_dst[q]) * V::BYTES)
        .collect();
    let mine = out.len() * V::BYTES;
    let got: Vec<V> = values_of(&c.all_to_all_bytes(
        "scatter_reduce",
        &bytes_of(parts),
        &send_counts,
        &vec![mine; p],
    ));
    for from in got.chunks(out.len().max(1)).take(p) {
        for (o, &v) in out.iter_mut().zip(from) {
            combine(o, v);
        }
    }
}

/// This rank's block (layout `lay`) of `y` with `y[j] = v` for every pair `(j, v) = f(k)`
/// of every rank, the `j` a permutation of `0..n`. An index out of range raises
/// `IndexOutOfRange`; an index given twice `NotAPermutation` (found by its owner).
pub fn permute<I, T, F>(
    c: &Call<'_>,
    len: usize,
    f: F,
    lay: &[usize],
    prim: &'static str,
    at: At,
) -> Vec<T>
where
    I: Idx,
    T: Wire,
    F: Fn(usize) -> (I, T) + Sync,
{
    let (p, me) = (c.size(), c.rank());
    if p == 1 {
        return dpl_cpu::rt::permute(len, f, prim, at);
    }
    let pairs = checked_pairs(len, f, lay[p], prim, at);
    c.agree();
    let mine = lay[me + 1] - lay[me];
    let mut out: Vec<T> = Vec::with_capacity(mine);
    let mut seen = vec![false; mine];
    let mut dup = None;
    {
        let spare = &mut out.spare_capacity_mut()[..mine];
        for (j, v) in route(c, "permute", pairs, lay) {
            if std::mem::replace(&mut seen[j], true) {
                dup.get_or_insert(Error::NotAPermutation {
                    prim,
                    detail: format!("index {} appears twice", j + lay[me]),
                    at: *at,
                });
            } else {
                spare[j] = MaybeUninit::new(v);
            }
        }
    }
    c.check(dup.map(|e| (e, 0)));
    // With every index in range and none twice, the `n` pairs of all ranks fill the `n`
    // slots of all ranks, each once.
    assert!(
        seen.iter().all(|&s| s),
        "dpl internal error: permute left a slot unwritten"
    );
    // SAFETY: every slot was written (checked just above).
    unsafe { out.set_len(mine) };
    out
}
