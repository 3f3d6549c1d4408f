//! A distributed sort (default 2^26 `u32` keys) on `Place::Mpi`: a sample sort (local radix
//! sort, splitters from regular samples, one all-to-all of the buckets, a local sort of
//! the received runs, a rebalance to the input's block lengths). Checked: every block is
//! sorted, blocks are in order across ranks, the result holds the same keys (two
//! order-independent checksums), and each rank holds as many keys as it gave.
//!
//! ```text
//! cargo build --release --features mpi --example mpi_sort
//! mpirun -n 2 target/release/examples/mpi_sort 2^26
//! ```

#[path = "mpi/common.rs"]
mod common;

use common::*;
use dpl::prelude::*;

#[parallel]
fn sorted(x: &[u32]) -> Vec<u32> {
    sort(x)
}

/// A pseudo-random key for global position `i`.
fn key(i: usize) -> u32 {
    dpl_testkit::mix(i as u64) as u32
}

/// Two checksums of a multiset of keys: the wrapping sum, and the sum of a mixing function.
fn checksums(keys: &[u32]) -> [u64; 2] {
    keys.iter().fold([0u64, 0u64], |[s, h], &k| {
        [
            s.wrapping_add(u64::from(k)),
            h.wrapping_add(
                u64::from(k)
                    .wrapping_mul(0x9e37_79b9_7f4a_7c15)
                    .rotate_left(17),
            ),
        ]
    })
}

fn main() {
    let mpi = dpl::mpi::init();
    let (rank, size) = (mpi.rank(), mpi.size());
    let n = size_arg(1 << 26);
    let mine = dpl::mpi::block(n, rank, size);
    let x: Vec<u32> = mine.clone().map(key).collect();
    let mut out = Vec::new();
    let t = job_time(3, &mut || out = with_place(Place::Mpi, || sorted(&x)));
    assert_eq!(out.len(), x.len(), "the block lengths of the input");
    assert!(
        out.windows(2).all(|w| w[0] <= w[1]),
        "a block is not sorted"
    );
    let ends = dpl::mpi::gather_to_all(&[
        out.first().copied().unwrap_or(u32::MAX),
        out.last().copied().unwrap_or(0),
        out.len() as u32,
    ]);
    let mut last = 0;
    for e in ends.chunks(3).filter(|e| e[2] > 0) {
        assert!(last <= e[0], "blocks out of order across ranks");
        last = e[1];
    }
    let sums = |v: &[u32]| {
        let c = checksums(v);
        dpl::mpi::gather_to_all(&c)
            .chunks(2)
            .fold([0u64, 0u64], |a, c| {
                [a[0].wrapping_add(c[0]), a[1].wrapping_add(c[1])]
            })
    };
    assert_eq!(sums(&out), sums(&x), "the keys changed");
    if rank == 0 {
        println!(
            "sort of {n} u32 keys on {size} rank(s) x {} thread(s): {:.1} ms, {:.1} M keys/s (checked)",
            rayon::current_num_threads(),
            ms(t),
            n as f64 / t.as_secs_f64() / 1e6
        );
    }
    report(rank, "sort", "time", ms(t), "ms");
    compare_with_cpu(rank, size, "sort", 5, &|| sorted(&x));
}
