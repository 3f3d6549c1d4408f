//! Copperhead's preconditioned conjugate gradient solver (PPoPP 2011, section 6.2) in dpl:
//! the coupled 5-point stencil system of variational optical flow on a 512x512 field,
//! preconditioned with Figure 6's block Jacobi preconditioner.
//!
//! The host loop is plain Rust ([`solver::pcg`]); each step calls a `#[parallel]` function
//! of one `#[parallel] mod` ([`kernels::pcg`]): the stencil operator, the preconditioner,
//! dot products and `axpy` updates, each compiled to one fused loop. The same solver is
//! also one `#[parallel]` function with its loop inside ([`kernels::pcg::solve`], the row
//! "dpl 1 call"): on a GPU place its vectors stay on the device for the whole solve. The same loop runs
//! with hand-written rayon and sequential kernels ([`baselines::Plain`]), and the example
//! prints for each: iterations, the final residual, the time per iteration, and the ratios;
//! then the per-kernel times.
//!
//! Precision: vectors are `f32` (as Copperhead's single-precision solver; the solver is
//! bound by memory traffic), dot products and scalars `f64`. The tolerance, 1e-6 on the
//! relative residual `|r| / |b|` of the PCG recurrence, is about 16 units of `f32`
//! rounding: reachable by the recurrence; the true residual `|b - A x| / |b|` (computed in
//! `f64`, printed too) stops a little above it, at the rounding error of evaluating `A x`
//! in `f32`.
//!
//! ```text
//! cargo run --release --example pcg            # 512x512
//! PCG_SIZE=128 PCG_ALPHA=0.05 cargo run --release --example pcg
//! ```
//!
//! Timings are medians on a shared machine: read the ratios, not the absolute numbers.
//!
//! # Where dpl stands against the hand-written rayon kernels
//!
//! The kernel table of the output (a quiet 2-core machine, 2026-11-29): the operator
//! (`apply`; `apply_half` is one loop after fusion, as the structure lines of the output
//! say) and `dot` are faster than rayon's (1.19x, 1.44x). The in-place kernels, in the
//! interleaved table (2026-12-07, six runs on a busy machine): `precondition`, written in
//! place ([`kernels::pcg::precondition_into`]: both components in one loop), 1.05-1.16x
//! rayon; `axpy`, written in place (`*x = axpy(s, x, y);`,
//! [`kernels::pcg::axpy_in_place`]) as the hand-written code does, 1.05-1.23x. Both run
//! dpl's AVX2 loops (`dpl_cpu::rt::isa`: this crate is built for the baseline x86-64, as
//! the rayon kernels are); with `DPL_CPU_WIDE=0` (the baseline loops) they were at
//! 0.94-1.08x and 0.88-1.00x: dpl's results are made NaN-canonical (its contract on every
//! place; the stored values are checked for NaNs in the same loop and rewritten only if
//! one is there), which at these in-cache sizes (1 MiB per component) costs about the
//! gap. The mod's own `precondition` returns two
//! new vectors (3 loops and 1 temporary after fusion).

#[path = "pcg/baselines.rs"]
mod baselines;
#[path = "pcg/kernels.rs"]
mod kernels;
#[path = "pcg/problem.rs"]
mod problem;
#[path = "pcg/solver.rs"]
mod solver;
#[path = "shared/timing.rs"]
mod timing;

use std::time::{Duration, Instant};

use baselines::Plain;
use dpl::prelude::*;
use kernels::{Dpl, pcg as dk};
use problem::{Field, Problem, relative_distance};
use solver::{Kernels, Options, Solution, pcg};

/// Solutions of different solvers must agree to this relative distance: each stops within
/// the tolerance, and they differ only by the rounding of their dot products.
const AGREEMENT: f64 = 1e-4;

fn env<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(s) => s.parse().unwrap_or_else(|_| {
            eprintln!("{name}={s} is not a valid value");
            std::process::exit(2)
        }),
        Err(_) => default,
    }
}

fn main() {
    let size: usize = env("PCG_SIZE", 512);
    let alpha: f64 = env("PCG_ALPHA", 0.01);
    let tolerance: f64 = env("PCG_TOL", 1e-6);
    let repeat: usize = env("PCG_REPEAT", 5).max(1);
    let problem = Problem::optical_flow(size, size, alpha).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let opts = Options::converge(tolerance, 20 * problem.unknowns());
    println!(
        "PCG on the optical-flow system of a {size}x{size} field ({} unknowns), alpha {alpha}, \
         block-Jacobi preconditioner\ntolerance {tolerance:e} on |r|/|b| (f32 vectors, f64 dot \
         products); {} rayon threads; median of {repeat} solves\n",
        problem.unknowns(),
        rayon::current_num_threads()
    );
    println!(
        "{:<10} {:>10} {:>12} {:>12} {:>12} {:>10}",
        "solver", "iterations", "residual", "true resid.", "time/iter", "vs rayon"
    );

    let mut failures = Vec::new();
    // The sequential reference place runs the unfused program: one solve is enough.
    let dpl_seq = dpl::available_places().contains(&Place::Seq).then(|| {
        with_place(Place::Seq, || {
            solve_once(&Dpl::new(&problem), &problem, opts)
        })
    });
    // The timed solvers take turns, so that a change of the machine's load between them
    // (it is shared) affects all alike; the median solve of each is reported.
    let dpl_cpu = with_place(Place::Cpu, || Dpl::new(&problem));
    let (rayon_k, seq_k) = (Plain::rayon(&problem), Plain::sequential(&problem));
    let mut runs: [Vec<Solution>; 4] = Default::default();
    for _ in 0..repeat {
        runs[0].push(with_place(Place::Cpu, || {
            solve_once(&dpl_cpu, &problem, opts)
        }));
        runs[1].push(with_place(Place::Cpu, || {
            dpl_cpu.solve(&problem.rhs, opts).unwrap_or_else(|e| {
                eprintln!("{e}");
                std::process::exit(1)
            })
        }));
        runs[2].push(solve_once(&rayon_k, &problem, opts));
        runs[3].push(solve_once(&seq_k, &problem, opts));
    }
    let [dpl_runs, dpl_one_call, rayon_runs, seq_runs] = runs.map(median_solve);
    let reference = seq_runs.clone();
    let rayon = rayon_runs.clone();
    let mut rows: Vec<(String, Solution)> = Vec::new();
    if let Some(s) = dpl_seq {
        rows.push(("dpl seq".into(), s));
    }
    rows.push(("dpl cpu".into(), dpl_runs));
    rows.push(("dpl 1 call".into(), dpl_one_call));
    rows.push(("rayon".into(), rayon_runs));
    rows.push(("seq".into(), seq_runs));
    for (name, s) in &rows {
        let ratio = rayon.per_iteration().as_secs_f64() / s.per_iteration().as_secs_f64();
        println!(
            "{name:<10} {:>10} {:>12.3e} {:>12.3e} {:>12} {:>9.2}x",
            s.iterations,
            s.residual,
            problem.relative_residual(&s.x),
            timing::fmt(s.per_iteration()),
            ratio
        );
        if !s.converged {
            failures.push(format!("{name}: not converged"));
        }
        let d = relative_distance(&s.x, &reference.x);
        if d > AGREEMENT {
            failures.push(format!("{name}: solution differs from seq by {d:.2e}"));
        }
        if s.iterations.abs_diff(reference.iterations) > 2 {
            failures.push(format!(
                "{name}: {} iterations, seq {}",
                s.iterations, reference.iterations
            ));
        }
    }
    println!(
        "(vs rayon: rayon's time per iteration over this one; above 1 is faster than rayon)\n"
    );

    kernel_times(&problem, &reference.x);
    in_place_times(&problem, &reference.x);

    if failures.is_empty() {
        println!(
            "\nall solvers converged and agree with the sequential solver (relative distance <= {AGREEMENT:e})"
        );
    } else {
        for f in &failures {
            println!("WRONG: {f}");
        }
        std::process::exit(1);
    }
}

/// One solve; exits the program on a breakdown.
fn solve_once<K: Kernels>(k: &K, problem: &Problem, opts: Options) -> Solution {
    pcg(k, &problem.rhs, opts).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1)
    })
}

/// The solve with the median time.
fn median_solve(mut all: Vec<Solution>) -> Solution {
    all.sort_by_key(|s| s.elapsed);
    let mid = all.len() / 2;
    all.swap_remove(mid)
}

/// Median times of the kernels of one iteration, dpl on `Place::Cpu` against rayon and
/// sequential Rust, on the vectors of a real solve.
fn kernel_times(problem: &Problem, x: &Field) {
    let dpl = with_place(Place::Cpu, || Dpl::new(problem));
    let (rayon, seq) = (Plain::rayon(problem), Plain::sequential(problem));
    let y = problem.rhs.clone();
    println!(
        "{:<14} {:>11} {:>11} {:>11} {:>10}",
        "kernel", "dpl cpu", "rayon", "seq", "vs rayon"
    );
    type Step<'k> = Box<dyn Fn(&dyn Kernels, &mut Field) + 'k>;
    let steps: [(&str, Step<'_>); 4] = [
        ("apply (A p)", Box::new(|k, out| k.apply(x, out))),
        ("precondition", Box::new(|k, out| k.precondition(x, out))),
        (
            "dot",
            Box::new(|k, _| {
                std::hint::black_box(k.dot(x, &y));
            }),
        ),
        ("axpy", Box::new(|k, out| k.add_scaled(out, 0.5, x))),
    ];
    for (name, step) in &steps {
        let mut outs = [y.clone(), y.clone(), y.clone()];
        let mut times: [Vec<Duration>; 3] = Default::default();
        for _ in 0..KERNEL_RUNS {
            let [o0, o1, o2] = &mut outs;
            times[0].push(with_place(Place::Cpu, || timed(|| step(&dpl, o0))));
            times[1].push(timed(|| step(&rayon, o1)));
            times[2].push(timed(|| step(&seq, o2)));
        }
        let [t_dpl, t_rayon, t_seq] = times.map(median);
        println!(
            "{name:<14} {:>11} {:>11} {:>11} {:>9.2}x",
            timing::fmt(t_dpl),
            timing::fmt(t_rayon),
            timing::fmt(t_seq),
            t_rayon.as_secs_f64() / t_dpl.as_secs_f64()
        );
    }
    // Structure: what the compiler made of the kernels.
    for i in [
        dpl::inspect!(dk::apply_half),
        dpl::inspect!(dk::block_row),
        dpl::inspect!(dk::precondition),
        dpl::inspect!(dk::dot),
    ] {
        println!(
            "{:<14} {} loops and {} temporaries before fusion, {} loop(s) and {} after",
            i.name, i.loops_before_fusion, i.temporaries_before_fusion, i.loops, i.temporaries
        );
    }
}

/// The kernels that update a vector, dpl on `Place::Cpu` writing into the existing vector
/// (`*y = e;`, what the solver calls) and returning a new one (the `#[parallel] mod`'s
/// functions), against rayon's in-place loops: minima of interleaved rounds.
fn in_place_times(problem: &Problem, x: &Field) {
    use std::cell::RefCell;
    let dpl = with_place(Place::Cpu, || Dpl::new(problem));
    let rayon = Plain::rayon(problem);
    let (p_a, p_b, p_c) = dpl.preconditioner();
    let outs: [RefCell<Field>; 3] = std::array::from_fn(|_| RefCell::new(problem.rhs.clone()));
    let axpy_in_place = || {
        with_place(Place::Cpu, || {
            dpl.add_scaled(&mut outs[0].borrow_mut(), 1e-3, x)
        })
    };
    let axpy_new = || {
        with_place(Place::Cpu, || {
            let out = &mut *outs[1].borrow_mut();
            out.u = dk::axpy(1e-3, &out.u, &x.u);
            out.v = dk::axpy(1e-3, &out.v, &x.v);
        })
    };
    let axpy_rayon = || rayon.add_scaled(&mut outs[2].borrow_mut(), 1e-3, x);
    let pre_in_place = || {
        with_place(Place::Cpu, || {
            dpl.precondition(x, &mut outs[0].borrow_mut())
        })
    };
    let pre_new = || {
        with_place(Place::Cpu, || {
            let out = &mut *outs[1].borrow_mut();
            (out.u, out.v) = dk::precondition(&x.u, &x.v, p_a, p_b, p_c);
        })
    };
    let pre_rayon = || rayon.precondition(x, &mut outs[2].borrow_mut());
    println!(
        "\n{:<14} {:>13} {:>13} {:>11} {:>10} {:>10}",
        "kernel", "dpl in place", "dpl new vec", "rayon", "in place", "new vec"
    );
    type Three<'f> = [&'f dyn Fn(); 3];
    let kernels: [(&str, Three<'_>); 2] = [
        ("axpy", [&axpy_in_place, &axpy_new, &axpy_rayon]),
        ("precondition", [&pre_in_place, &pre_new, &pre_rayon]),
    ];
    for (name, fs) in kernels {
        let t = timing::interleaved(&fs, IN_PLACE_ROUNDS);
        let ratio = |k: usize| t[2].0.as_secs_f64() / t[k].0.as_secs_f64();
        println!(
            "{name:<14} {:>13} {:>13} {:>11} {:>9.2}x {:>9.2}x",
            timing::fmt(t[0].0),
            timing::fmt(t[1].0),
            timing::fmt(t[2].0),
            ratio(0),
            ratio(1)
        );
    }
    println!(
        "(minima of {IN_PLACE_ROUNDS} interleaved rounds; the ratios are rayon's time over dpl's)"
    );
}

/// Rounds of [`in_place_times`].
const IN_PLACE_ROUNDS: usize = 201;

/// Runs of each kernel (taking turns); the median is reported.
const KERNEL_RUNS: usize = 21;

fn timed(f: impl FnOnce()) -> Duration {
    let t = Instant::now();
    f();
    t.elapsed()
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}
