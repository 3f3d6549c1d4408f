//! Moving a program's own data between ranks: a root's vector into balanced blocks, and
//! blocks back to a root or to every rank (`scatter_v`, `gather_v`, `all_gather_v`).
//!
//! Without MPI running (no [`init`](super::init)), the program is one rank: the data stays
//! as it is.

use super::call::with_world;
use super::layout::block;
use super::wire::{Wire, bytes_of, values_of};

/// The balanced blocks ([`block`]) of `data` (read on rank `root`; ignored elsewhere):
/// every rank gets its block.
///
/// # Panics
///
/// If `root` is not a rank of the job.
pub fn scatter_from_root<T: Wire>(data: &[T], root: usize) -> Vec<T> {
    with_world(|c| {
        let p = c.size();
        assert!(
            root < p,
            "dpl::mpi::scatter_from_root: root {root} is not a rank (the job has {p})"
        );
        let mut n = (data.len() as u64).to_ne_bytes();
        c.broadcast_bytes("io", root, &mut n);
        let n = u64::from_ne_bytes(n) as usize;
        let counts: Vec<usize> = (0..p).map(|q| block(n, q, p).len() * T::BYTES).collect();
        values_of(&c.scatter_bytes("io", root, &bytes_of(data), &counts))
    })
    .unwrap_or_else(|| data.to_vec())
}

/// Every rank's `local` block, concatenated in rank order, on rank `root` (`None` on the
/// other ranks).
///
/// # Panics
///
/// If `root` is not a rank of the job.
pub fn gather_to_root<T: Wire>(local: &[T], root: usize) -> Option<Vec<T>> {
    with_world(|c| {
        let p = c.size();
        assert!(
            root < p,
            "dpl::mpi::gather_to_root: root {root} is not a rank (the job has {p})"
        );
        let counts = block_bytes::<T>(c, local.len());
        let all = c.gather_bytes("io", root, &bytes_of(local), &counts);
        (c.rank() == root).then(|| values_of(&all))
    })
    .unwrap_or_else(|| Some(local.to_vec()))
}

/// Every rank's `local` block, concatenated in rank order, on every rank.
pub fn gather_to_all<T: Wire>(local: &[T]) -> Vec<T> {
    with_world(|c| {
        let counts = block_bytes::<T>(c, local.len());
        values_of(&c.all_gather_var("io", &bytes_of(local), &counts))
    })
    .unwrap_or_else(|| local.to_vec())
}

/// The byte counts of every rank's block (one `all_gather` of the lengths).
fn block_bytes<T: Wire>(c: &super::Call<'_>, len: usize) -> Vec<usize> {
    let lens: Vec<u64> = values_of(&c.all_gather_bytes("io", &bytes_of(&[len as u64])));
    lens.into_iter().map(|l| l as usize * T::BYTES).collect()
}
