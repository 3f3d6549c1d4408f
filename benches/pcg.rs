//! Benchmark of the `pcg` example (Copperhead's preconditioned conjugate gradient on the
//! optical-flow system of a 512x512 field, `examples/pcg.rs`): the whole solver for a fixed
//! number of iterations, and each kernel of one iteration, dpl (`Place::Cpu`) against the
//! same algorithm hand-written with rayon and sequentially.
//!
//! Groups (naming scheme of `xtask/src/bench.rs`; the size is the number of pixels, 2^18):
//!
//! * `pcg_optical_flow_f32/2^18` — [`ITERATIONS`] PCG iterations from `x = 0` (the
//!   preconditioner formed beforehand, not timed); a fixed count so the timing is stable.
//! * `pcg_solve_one_call_f32/2^18` — the same, the dpl solver being one `#[parallel]`
//!   function with its loop inside (`pcg::solve`), against the host loops over the rayon
//!   and sequential kernels.
//! * `pcg_apply_f32/2^18` — `q = A p` (the coupled 5-point stencil).
//! * `pcg_precondition_f32/2^18` — `z = M^-1 r` (Figure 6's block Jacobi).
//! * `pcg_dot_f32/2^18` — the dot product of two fields.
//! * `pcg_axpy_f32/2^18` — `x = x + s y` on both components.
//!
//! Throughput: the bytes each algorithm reads and writes once (`f32` arrays of one value per
//! pixel: the system has 5, a field 2). `DPL_BENCH_QUICK=1` shortens the run.
#![allow(missing_docs)] // criterion_group! generates undocumented items.

#[path = "../examples/pcg/baselines.rs"]
mod baselines;
#[path = "../examples/pcg/kernels.rs"]
mod kernels;
#[path = "../examples/pcg/problem.rs"]
mod problem;
#[path = "../examples/pcg/solver.rs"]
mod solver;

use std::hint::black_box;
use std::time::Duration;

use baselines::Plain;
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use dpl::prelude::*;
use kernels::Dpl;
use problem::{Field, Problem};
use solver::{Kernels, Options, pcg};

/// Iterations of the end-to-end case.
const ITERATIONS: usize = 20;
/// Side of the field.
const SIDE: usize = 512;
/// The size label: pixels.
const SIZE: &str = "2^18";

fn quick() -> bool {
    std::env::var_os("DPL_BENCH_QUICK").is_some()
}

fn group<'a>(c: &'a mut Criterion, case: &str, arrays: u64) -> BenchmarkGroup<'a, WallTime> {
    let mut g = c.benchmark_group(format!("{case}/{SIZE}"));
    g.throughput(Throughput::Bytes(
        arrays * (SIDE * SIDE * size_of::<f32>()) as u64,
    ));
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(if quick() { 100 } else { 500 }));
    g.measurement_time(Duration::from_millis(if quick() { 500 } else { 3000 }));
    g
}

/// Benchmarks `step` for the three kernel sets; `step` gets the kernels and an output
/// field it may overwrite (so that in-place kernels have somewhere to write).
fn three_ways(
    c: &mut Criterion,
    case: &str,
    arrays: u64,
    problem: &Problem,
    step: impl Fn(&dyn Kernels, &mut Field),
) {
    let dpl = with_place(Place::Cpu, || Dpl::new(problem));
    let (rayon, seq) = (Plain::rayon(problem), Plain::sequential(problem));
    let mut g = group(c, case, arrays);
    let mut out = problem.rhs.clone();
    g.bench_function("dpl", |b| {
        with_place(Place::Cpu, || b.iter(|| step(&dpl, &mut out)))
    });
    let mut out = problem.rhs.clone();
    g.bench_function("rayon", |b| b.iter(|| step(&rayon, &mut out)));
    let mut out = problem.rhs.clone();
    g.bench_function("seq", |b| b.iter(|| step(&seq, &mut out)));
    g.finish();
}

/// The same solve with its loop inside one `#[parallel]` function ([`Dpl::solve`]) against
/// the host loop over the rayon and sequential kernels.
fn one_call(c: &mut Criterion, problem: &Problem) {
    let dpl = with_place(Place::Cpu, || Dpl::new(problem));
    let (rayon, seq) = (Plain::rayon(problem), Plain::sequential(problem));
    let opts = Options::fixed(ITERATIONS);
    let mut g = group(c, "pcg_solve_one_call_f32", ITERATIONS as u64 * 44);
    g.bench_function("dpl", |b| {
        with_place(Place::Cpu, || {
            b.iter(|| {
                let s = dpl.solve(&problem.rhs, opts).expect("no breakdown");
                assert_eq!(s.iterations, ITERATIONS);
                black_box(s.x)
            })
        })
    });
    for (name, k) in [("rayon", &rayon), ("seq", &seq)] {
        g.bench_function(name, |b| {
            b.iter(|| black_box(pcg(k, &problem.rhs, opts).expect("no breakdown").x))
        });
    }
    g.finish();
}

fn benches(c: &mut Criterion) {
    let problem = Problem::optical_flow(SIDE, SIDE, 0.01).expect("a valid problem");
    let x = {
        // A realistic vector: the solution after a few iterations.
        let s =
            pcg(&Plain::rayon(&problem), &problem.rhs, Options::fixed(5)).expect("no breakdown");
        s.x
    };
    // Per iteration: apply 7 + 2, three dots 4 + 2 + 4, three axpys 3 x 6, precondition 5 + 2.
    three_ways(
        c,
        "pcg_optical_flow_f32",
        ITERATIONS as u64 * 44,
        &problem,
        |k, out| {
            let s = pcg(k, &problem.rhs, Options::fixed(ITERATIONS)).expect("no breakdown");
            assert_eq!(s.iterations, ITERATIONS);
            *out = s.x;
        },
    );
    one_call(c, &problem);
    three_ways(c, "pcg_apply_f32", 9, &problem, |k, out| k.apply(&x, out));
    three_ways(c, "pcg_precondition_f32", 7, &problem, |k, out| {
        k.precondition(&x, out)
    });
    three_ways(c, "pcg_dot_f32", 4, &problem, |k, _| {
        black_box(k.dot(&x, &problem.rhs));
    });
    three_ways(c, "pcg_axpy_f32", 6, &problem, |k, out| {
        k.add_scaled(out, 1e-3, &x)
    });
}

criterion_group!(pcg_benches, benches);
criterion_main!(pcg_benches);
