//! What the `mpi_*` examples share: sizes from the command line, timing on every rank
//! (the slowest rank's time is the job's), and one output line per measurement, which
//! `cargo xtask mpi-report` reads.

#![allow(dead_code)]

use std::time::{Duration, Instant};

/// The first command-line argument as a number, or `default`; `2^k` may be written `2^k`.
pub fn size_arg(default: usize) -> usize {
    match std::env::args().nth(1) {
        Some(a) => parse_size(&a).unwrap_or_else(|| {
            eprintln!("not a size: {a} (write a number or 2^k)");
            std::process::exit(2)
        }),
        None => default,
    }
}

fn parse_size(a: &str) -> Option<usize> {
    match a.split_once('^') {
        Some((b, e)) => b.parse::<usize>().ok()?.checked_pow(e.parse().ok()?),
        None => a.parse().ok(),
    }
}

/// The minimum over `rounds` runs of `f` of the slowest rank's time (every rank calls
/// it: the maximum is a collective).
pub fn job_time(rounds: usize, f: &mut dyn FnMut()) -> Duration {
    let mut best = Duration::MAX;
    for _ in 0..rounds.max(1) {
        let start = Instant::now();
        f();
        let mine = start.elapsed().as_secs_f64();
        let slowest = dpl::mpi::gather_to_all(&[mine])
            .into_iter()
            .fold(0.0f64, f64::max);
        best = best.min(Duration::from_secs_f64(slowest));
    }
    best
}

#[path = "../shared/timing.rs"]
mod timing;

/// On one rank only: `f` on `Place::Mpi` against `Place::Cpu` in `rounds` interleaved
/// rounds (`examples/shared/timing.rs`), printed and reported as `<example> mpi_over_cpu`
/// (the ratio of the minimum times).
pub fn compare_with_cpu<T>(
    rank: usize,
    size: usize,
    example: &str,
    rounds: usize,
    f: &dyn Fn() -> T,
) {
    if size != 1 {
        return;
    }
    use dpl::prelude::{Place, with_place};
    let times = timing::interleaved(
        &[
            &|| {
                std::hint::black_box(with_place(Place::Mpi, f));
            },
            &|| {
                std::hint::black_box(with_place(Place::Cpu, f));
            },
        ],
        rounds,
    );
    let (tm, tc) = (ms(times[0].0), ms(times[1].0));
    println!(
        "one rank: Place::Mpi {tm:.2} ms, Place::Cpu {tc:.2} ms (ratio {:.3})",
        tm / tc
    );
    report(rank, example, "mpi_over_cpu", tm / tc, "ratio");
}

/// Prints a measurement line on rank 0: `mpi-report: <example> <what> <value> <unit>`.
pub fn report(rank: usize, example: &str, what: &str, value: f64, unit: &str) {
    if rank == 0 {
        println!("mpi-report: {example} {what} {value:.6} {unit}");
    }
}

/// Milliseconds.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
