//! `gather`: reads at computed global indices, moving only the elements of other ranks.
//!
//! The indices a rank needs (computed by a loop of their own before the read) are checked
//! against the global length, then bucketed by the rank that owns each: requests for the
//! rank's own block are served in place; the others go out in one `all_to_all_v` (after an
//! `all_to_all` of the counts), and the owners' replies come back in the same order in a
//! second one.

use super::call::Call;
use super::layout::owner;
use super::wire::{Wire, bytes_of, extend_bytes, values_of};
use dpl_cpu::rt::{At, Idx, check_indices};

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
        return dpl_cpu::rt::map(req.len(), |k| unsafe {
            *local.get_unchecked(req.get_unchecked(k).checked(n).unwrap_unchecked())
        });
    }
    c.agree();
    let p = c.size();
    // Owner of each request; counts of remote requests per owner.
    let owners: Vec<u32> = req
        .iter()
        .map(|&j| owner(lay, j.checked(n).unwrap_or(0)) as u32)
        .collect();
    let mut counts = vec![0usize; p];
    for &q in &owners {
        counts[q as usize] += 1;
    }
    counts[me] = 0;
    let mut starts = vec![0usize; p];
    let mut at_ = 0;
    for q in 0..p {
        starts[q] = at_;
        at_ += counts[q];
    }
    // Requests grouped by owner (global indices as u64), and where each reply will be.
    let mut wanted = vec![0u64; at_];
    let mut slot = vec![usize::MAX; req.len()];
    let mut fill = starts.clone();
    for (k, (&j, &q)) in req.iter().zip(&owners).enumerate() {
        let q = q as usize;
        if q != me {
            wanted[fill[q]] = j.checked(n).unwrap_or(0) as u64;
            slot[k] = fill[q];
            fill[q] += 1;
        }
    }
    let asked = c.all_to_all_counts("gather", &counts);
    let bytes = |v: &[usize], b: usize| v.iter().map(|&x| x * b).collect::<Vec<usize>>();
    let incoming: Vec<u64> = values_of(&c.all_to_all_bytes(
        "gather",
        &bytes_of(&wanted),
        &bytes(&counts, 8),
        &bytes(&asked, 8),
    ));
    let mut replies = Vec::with_capacity(incoming.len() * T::BYTES);
    let served: Vec<T> = incoming.iter().map(|&j| local[j as usize - base]).collect();
    extend_bytes(&mut replies, &served);
    let got: Vec<T> = values_of(&c.all_to_all_bytes(
        "gather",
        &replies,
        &bytes(&asked, T::BYTES),
        &bytes(&counts, T::BYTES),
    ));
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
