//! Layouts: which rank holds which part of a global sequence.
//!
//! A layout is the offsets of the blocks, `[o_0 = 0, o_1, ..., o_P = n]`: rank `r` holds
//! global elements `o_r..o_{r+1}`. Every rank has the same layout of each distributed
//! sequence, so decisions taken from layouts (who sends what, whether a copy is needed)
//! are the same on every rank without further messages.

use super::call::Call;
use super::wire::{bytes_of, values_of};
use std::ops::Range;

/// The balanced block of rank `rank` among `size` ranks of a sequence of length `n`: the
/// first `n % size` ranks get one element more than the others.
///
/// ```
/// assert_eq!(dpl_mpi::rt::block(10, 0, 4), 0..3);
/// assert_eq!(dpl_mpi::rt::block(10, 3, 4), 8..10);
/// assert_eq!(dpl_mpi::rt::block(2, 3, 4), 2..2);
/// ```
///
/// # Panics
///
/// If `size == 0` or `rank >= size`.
pub fn block(n: usize, rank: usize, size: usize) -> Range<usize> {
    assert!(
        rank < size,
        "dpl::mpi::block: rank {rank} is not below the number of ranks {size}"
    );
    let (q, r) = (n / size, n % size);
    let start = rank * q + rank.min(r);
    start..start + q + usize::from(rank < r)
}

/// The layout of the balanced blocks of `n` elements ([`block`]) over the call's ranks.
pub fn balanced(c: &Call<'_>, n: usize) -> Vec<usize> {
    let p = c.size();
    (0..=p)
        .map(|r| if r == p { n } else { block(n, r, p).start })
        .collect()
}

/// The layout of a distributed sequence whose block on this rank has `local_len`
/// elements: one `all_gather` of the block lengths (with the error agreement).
pub fn layout(c: &Call<'_>, local_len: usize) -> Vec<usize> {
    if c.size() == 1 {
        return vec![0, local_len];
    }
    let lens = c.agree_with(local_len as u64);
    let mut out = Vec::with_capacity(lens.len() + 1);
    let mut at = 0usize;
    out.push(0);
    for l in lens {
        at += l as usize;
        out.push(at);
    }
    out
}

/// The layouts of the sequence parameters of a call, whose blocks on this rank have the
/// lengths `lens`: one `all_gather` of all the lengths. It is the first communication of a
/// call, before any code that could fail, so it needs no error agreement.
pub fn param_layouts(c: &Call<'_>, lens: &[usize]) -> Vec<Vec<usize>> {
    let m = lens.len();
    let all: Vec<u64> = if c.size() == 1 {
        lens.iter().map(|&l| l as u64).collect()
    } else {
        let mine: Vec<u64> = lens.iter().map(|&l| l as u64).collect();
        values_of(&c.all_gather_bytes("layout", &bytes_of(&mine)))
    };
    (0..m)
        .map(|k| {
            let mut lay = Vec::with_capacity(c.size() + 1);
            let mut at = 0usize;
            lay.push(0);
            for r in 0..c.size() {
                at += all[r * m + k] as usize;
                lay.push(at);
            }
            lay
        })
        .collect()
}

/// The global position of this rank's first element (`lay[rank]`).
#[inline]
pub fn offset(c: &Call<'_>, lay: &[usize]) -> usize {
    lay[c.rank()]
}

/// The rank that holds global element `j` (`j < lay[P]`).
#[inline]
pub fn owner(lay: &[usize], j: usize) -> usize {
    // The last rank whose block starts at or before `j`: the one whose block contains it
    // (an empty block starting at `j` is skipped, since the next one starts there too).
    lay[..lay.len() - 1].partition_point(|&o| o <= j) - 1
}

/// Groups items by the rank that owns each (`owners[k]`) for an `all_to_all_v`: the
/// number of items for each rank (0 for `me`, whose items stay), and each item's slot in a
/// buffer grouped by rank (items keep their order within a group; `usize::MAX` for
/// `me`'s own items).
pub(crate) fn group_by_owner(owners: &[u32], p: usize, me: usize) -> (Vec<usize>, Vec<usize>) {
    let mut counts = vec![0usize; p];
    for &q in owners {
        counts[q as usize] += 1;
    }
    counts[me] = 0;
    let mut fill = Vec::with_capacity(p);
    let mut total = 0;
    for &c in &counts {
        fill.push(total);
        total += c;
    }
    let slots = owners
        .iter()
        .map(|&q| {
            let q = q as usize;
            if q == me {
                usize::MAX
            } else {
                fill[q] += 1;
                fill[q] - 1
            }
        })
        .collect();
    (counts, slots)
}

/// The part of `a` that overlaps `b`, as a range (an empty one starts at `b.start`, so it
/// also slices `b`).
#[inline]
pub(crate) fn overlap(a: Range<usize>, b: Range<usize>) -> Range<usize> {
    let s = a.start.max(b.start);
    let e = a.end.min(b.end);
    if s < e { s..e } else { b.start..b.start }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cover_in_order() {
        for n in [0usize, 1, 2, 3, 7, 64, 1001] {
            for p in 1..=5 {
                let mut at = 0;
                for r in 0..p {
                    let b = block(n, r, p);
                    assert_eq!(b.start, at);
                    assert!(b.len() == n / p || b.len() == n / p + 1);
                    at = b.end;
                }
                assert_eq!(at, n);
            }
        }
    }

    #[test]
    fn owners_skip_empty_blocks() {
        let lay = [0, 0, 3, 3, 5];
        let owners: Vec<usize> = (0..5).map(|j| owner(&lay, j)).collect();
        assert_eq!(owners, [1, 1, 1, 3, 3]);
    }
}
