//! The STREAM triad (`a = b + s * c`, Chapel's benchmark of its Block distributions) on
//! `Place::Mpi`: every rank holds its block of the three vectors, and the triad is one
//! local loop with no messages (the layouts of `b` and `c` agree, so nothing is
//! realigned). Reports the job's bandwidth in GB/s of STREAM bytes (24 per element), and
//! on one rank the time against `Place::Cpu` in interleaved rounds.
//!
//! ```text
//! cargo build --release --features mpi --example mpi_triad
//! mpirun -n 2 target/release/examples/mpi_triad 2^25
//! ```

#[path = "mpi/common.rs"]
mod common;

use common::*;
use dpl::prelude::*;

#[parallel]
fn triad(s: f64, b: &[f64], c: &[f64]) -> Vec<f64> {
    map(|bi, ci| bi + s * ci, b, c)
}

#[parallel]
fn checksum(a: &[f64]) -> f64 {
    sum(a)
}

fn main() {
    let mpi = dpl::mpi::init();
    let (rank, size) = (mpi.rank(), mpi.size());
    let n = size_arg(1 << 25);
    let mine = dpl::mpi::block(n, rank, size);
    let b: Vec<f64> = mine.clone().map(|i| (i % 1000) as f64).collect();
    let c: Vec<f64> = mine.clone().map(|i| (i % 7) as f64 * 0.5).collect();
    let s = 3.0;
    let a = with_place(Place::Mpi, || triad(s, &b, &c));
    // Check: every element, and the global sum against its closed form.
    for (k, i) in mine.enumerate() {
        assert_eq!(
            a[k],
            (i % 1000) as f64 + s * ((i % 7) as f64 * 0.5),
            "element {i}"
        );
    }
    let total = with_place(Place::Mpi, || checksum(&a));
    let want: f64 = (0..n)
        .map(|i| (i % 1000) as f64 + s * ((i % 7) as f64 * 0.5))
        .sum();
    assert!(
        (total - want).abs() <= 1e-9 * want.abs().max(1.0),
        "checksum {total} vs {want}"
    );
    let bytes = 24.0 * n as f64;
    let t = job_time(10, &mut || {
        std::hint::black_box(with_place(Place::Mpi, || triad(s, &b, &c)));
    });
    if rank == 0 {
        println!(
            "triad, n = {n} on {size} rank(s) x {} thread(s): {:.2} ms, {:.1} GB/s (checked)",
            rayon::current_num_threads(),
            ms(t),
            bytes / t.as_secs_f64() / 1e9
        );
    }
    report(rank, "triad", "time", ms(t), "ms");
    compare_with_cpu(rank, size, "triad", 15, &|| triad(s, &b, &c));
}
