//! `gather`: reads at computed global indices, moving only the elements of other ranks.
//!
//! The indices a rank needs (computed by a loop of their own before the read) are checked
//! against the global length, then bucketed by the rank that owns each: requests for the
//! rank's own block are served in place; the others go out in one `all_to_all_v` (after an
//! `all_to_all` of the counts), and the owners' replies come back in the same order in a
//! second one.

use super::call::Call;
use super::fetch::Rows;
use super::layout::{group_by_owner, owner};
use super::wire::{Wire, bytes_of, values_of};
use dpl_cpu::rt::{At, Idx, check_indices};
use std::borrow::Cow;

/// `y[k] = x[req[k]]` for this rank's requests, `x` distributed (block `local`, layout
/// `lay`). An index outside `x` raises `IndexOutOfRange` for `prim` (the first one in
/// index order, which the agreement makes the globally first).
pub fn gather<T: Wire, I: Idx>(
    c: &Call<'_>,
    local: &[T],
    lay: &[usize],
    req: &[I],
    prim: &'static str,
    at: At,
) -> Vec<T> {
    let n = lay[c.size()];
    check_indices(req, n, prim, at);
    let me = c.rank();
    let base = lay[me];
    if c.size() == 1 {
        // SAFETY: every index was checked against `n == local.len()` above.
        let read = |k: usize| unsafe {
            *local.get_unchecked(req.get_unchecked(k).checked(n).unwrap_unchecked())
        };
        return dpl_cpu::rt::map(req.len(), read, prim, at);
    }
    c.agree();
    let owners: Vec<u32> = req
        .iter()
        .map(|&j| owner(lay, j.checked(n).unwrap_or(0)) as u32)
        .collect();
    let (counts, slot) = group_by_owner(&owners, c.size(), me);
    // Requests grouped by owner (global indices as u64).
    let mut wanted = vec![0u64; counts.iter().sum()];
    for (&j, &s) in req.iter().zip(&slot) {
        if s != usize::MAX {
            wanted[s] = j.checked(n).unwrap_or(0) as u64;
        }
    }
    let got = fetch(c, local, base, &wanted, &counts);
    req.iter()
        .zip(&slot)
        .map(|(&j, &s)| {
            if s == usize::MAX {
                local[j.checked(n).unwrap_or(0) - base]
            } else {
                got[s]
            }
        })
        .collect()
}

/// A copy of the distributed `x` (block `local`, layout `lay`) as long as the global
/// sequence, holding at their global positions the elements named by the values of this
/// rank's `rows` (`x[cols[i][k]]` in a loop over the rows of `cols`); its other elements are
/// zero bits (never read: the loop reads `x` only at those values). Only elements of other
/// ranks move, each once per rank however often it is named: the indices are collected in
/// a bitmap, requested from their owners (one `all_to_all` of counts, one `all_to_all_v`
/// of requests), and the replies come back in a second `all_to_all_v`. Values outside
/// `0..len(x)` are not fetched (the loop's checked read reports them). With one rank,
/// `local` itself.
pub fn fetch_indexed<'a, T: Wire, I: Idx, R: Rows<I> + ?Sized>(
    c: &Call<'_>,
    local: &'a [T],
    lay: &[usize],
    rows: &R,
) -> Cow<'a, [T]> {
    if c.size() == 1 {
        return Cow::Borrowed(local);
    }
    let (p, me) = (c.size(), c.rank());
    let n = lay[p];
    let (lo, hi) = (lay[me], lay[me + 1]);
    let mut wanted = vec![0u64; n.div_ceil(64)];
    let mut row = Vec::new();
    for r in 0..rows.count() {
        row.clear();
        rows.extend_row(r, &mut row);
        for &j in &row {
            if let Some(j) = j.checked(n)
                && (j < lo || j >= hi)
            {
                wanted[j / 64] |= 1 << (j % 64);
            }
        }
    }
    c.agree();
    // Requests in increasing order: grouped by owner already.
    let mut requests: Vec<u64> = Vec::new();
    for (w, &bits) in wanted.iter().enumerate() {
        let mut b = bits;
        while b != 0 {
            requests.push((w * 64) as u64 + u64::from(b.trailing_zeros()));
            b &= b - 1;
        }
    }
    let mut counts = vec![0usize; p];
    for &j in &requests {
        counts[owner(lay, j as usize)] += 1;
    }
    let got = fetch(c, local, lo, &requests, &counts);
    let zero = T::get(&vec![0u8; T::BYTES]);
    let mut full = vec![zero; n];
    full[lo..hi].copy_from_slice(local);
    for (&j, v) in requests.iter().zip(got) {
        full[j as usize] = v;
    }
    Cow::Owned(full)
}

/// Requests the elements at the global indices `wanted` (grouped by owner, `counts` per
/// rank, none for this one) from their owners, which serve them from their blocks
/// (`local`, starting at global position `base`): one `all_to_all` of counts and two
/// `all_to_all_v`, of requests and of replies. The values, in the order of `wanted`.
fn fetch<T: Wire>(
    c: &Call<'_>,
    local: &[T],
    base: usize,
    wanted: &[u64],
    counts: &[usize],
) -> Vec<T> {
    let asked = c.all_to_all_counts("gather", counts);
    let bytes = |v: &[usize], b: usize| v.iter().map(|&x| x * b).collect::<Vec<usize>>();
    let incoming: Vec<u64> = values_of(&c.all_to_all_bytes(
        "gather",
        &bytes_of(wanted),
        &bytes(counts, 8),
        &bytes(&asked, 8),
    ));
    let served: Vec<T> = incoming.iter().map(|&j| local[j as usize - base]).collect();
    values_of(&c.all_to_all_bytes(
        "gather",
        &bytes_of(&served),
        &bytes(&asked, T::BYTES),
        &bytes(counts, T::BYTES),
    ))
}
