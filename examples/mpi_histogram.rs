//! A distributed histogram on `Place::Mpi` (default 2^26 keys into 256 bins):
//! `scatter_reduce` into a destination much smaller than the source, which each rank
//! first reduces into a private copy of all bins, then sends each owner its bins (a
//! reduce-scatter; the bins are distributed in balanced blocks). Checked against plain
//! counting. A second run with as many bins as keys takes the other path: each
//! `(bin, 1)` pair travels to the rank that owns its bin.
//!
//! ```text
//! cargo build --release --features mpi --example mpi_histogram
//! mpirun -n 2 target/release/examples/mpi_histogram 2^26 256
//! ```

#[path = "mpi/common.rs"]
mod common;

use common::*;
use dpl::prelude::*;

#[parallel]
fn histogram(keys: &[u32], bins: usize) -> Vec<u32> {
    scatter_reduce(
        |a, b| a + b,
        replicate(1u32, len(keys)),
        keys,
        replicate(0u32, bins),
    )
}

/// The key of global position `i`: skewed towards low bins (a product of two uniform
/// draws), so that bins differ in size.
fn key(i: usize, bins: usize) -> u32 {
    let z = dpl_testkit::mix(i as u64);
    let (a, b) = ((z >> 40) as usize % bins, (z >> 8) as usize % bins);
    (a * b / bins.max(1)) as u32
}

fn run(rank: usize, size: usize, n: usize, bins: usize, name: &str) {
    let mine = dpl::mpi::block(n, rank, size);
    let keys: Vec<u32> = mine.map(|i| key(i, bins)).collect();
    let mut got = Vec::new();
    let t = job_time(5, &mut || {
        got = with_place(Place::Mpi, || histogram(&keys, bins))
    });
    let all = dpl::mpi::gather_to_root(&got, 0);
    if let Some(all) = all {
        let mut want = vec![0u32; bins];
        for i in 0..n {
            want[key(i, bins) as usize] += 1;
        }
        assert_eq!(all, want, "{name}: counts differ from plain counting");
        println!(
            "{name}: {n} keys into {bins} bins on {size} rank(s) x {} thread(s): {:.2} ms, {:.0} M keys/s (checked)",
            rayon::current_num_threads(),
            ms(t),
            n as f64 / t.as_secs_f64() / 1e6
        );
    }
    report(rank, name, "time", ms(t), "ms");
    compare_with_cpu(rank, size, name, 9, &|| histogram(&keys, bins));
}

fn main() {
    let mpi = dpl::mpi::init();
    let (rank, size) = (mpi.rank(), mpi.size());
    let n = size_arg(1 << 26);
    let bins = std::env::args()
        .nth(2)
        .and_then(|b| b.parse().ok())
        .unwrap_or(256);
    run(rank, size, n, bins, "histogram");
    let wide = (n / 16).max(1);
    run(rank, size, n / 16, wide, "histogram_wide");
}
