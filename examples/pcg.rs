//! Copperhead's preconditioned conjugate gradient solver (PPoPP 2011, section 6.2) in dpl:
//! the coupled 5-point stencil system of variational optical flow on a 512x512 field,
//! preconditioned with Figure 6's block Jacobi preconditioner.
//!
//! The host loop is plain Rust ([`solver::pcg`]); each step calls a `#[parallel]` function
//! of one `#[parallel] mod` ([`kernels::pcg`]): the stencil operator, the preconditioner,
//! dot products and `axpy` updates, each compiled to one fused loop. The same loop runs
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

#[path = "pcg/baselines.rs"]
mod baselines;
#[path = "pcg/kernels.rs"]
mod kernels;
#[path = "pcg/problem.rs"]
mod problem;
#[path = "pcg/solver.rs"]
mod solver;

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
    if let Ok(k) = std::env::var("PCG_PROFILE") {
        let problem = Problem::optical_flow(512, 512, 0.01).unwrap();
        let d = Dpl::new(&problem);
        let r = Plain::rayon(&problem);
        let x = problem.rhs.clone();
        let mut out = Field::default();
        let t = Instant::now();
        for _ in 0..300 {
            match k.as_str() {
                "dpl_pre" => d.precondition(&x, &mut out),
                "rayon_pre" => r.precondition(&x, &mut out),
                "dpl_apply" => d.apply(&x, &mut out),
                "rayon_apply" => r.apply(&x, &mut out),
                _ => panic!(),
            }
        }
        println!("{:?}", t.elapsed() / 300);
        return;
    }
    let size: usize = env("PCG_SIZE", 512);
    let alpha: f64 = env("PCG_ALPHA", 0.01);
    let tolerance: f64 = env("PCG_TOL", 1e-6);
    let repeat: usize = env("PCG_REPEAT", 3).max(1);
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
    let reference = solve(&Plain::sequential(&problem), &problem, opts, 1);
    let rayon = solve(&Plain::rayon(&problem), &problem, opts, repeat);
    let mut rows: Vec<(String, Solution)> = Vec::new();
    for place in dpl::available_places() {
        // The sequential reference place runs the unfused program: one solve is enough.
        let n = if place == Place::Seq { 1 } else { repeat };
        let s = with_place(place, || solve(&Dpl::new(&problem), &problem, opts, n));
        rows.push((format!("dpl {place}"), s));
    }
    rows.push(("rayon".into(), rayon.clone()));
    rows.push(("seq".into(), reference.clone()));
    for (name, s) in &rows {
        let ratio = rayon.per_iteration().as_secs_f64() / s.per_iteration().as_secs_f64();
        println!(
            "{name:<10} {:>10} {:>12.3e} {:>12.3e} {:>12} {:>9.2}x",
            s.iterations,
            s.residual,
            problem.relative_residual(&s.x),
            fmt(s.per_iteration()),
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
            failures.push(format!("{name}: {} iterations, seq {}", s.iterations, reference.iterations));
        }
    }
    println!("(vs rayon: rayon's time per iteration over this one; above 1 is faster than rayon)\n");

    kernel_times(&problem, &reference.x);

    if failures.is_empty() {
        println!("\nall solvers converged and agree with the sequential solver (relative distance <= {AGREEMENT:e})");
    } else {
        for f in &failures {
            println!("WRONG: {f}");
        }
        std::process::exit(1);
    }
}

/// Solves `repeat` times; returns the solve with the median time.
fn solve<K: Kernels>(k: &K, problem: &Problem, opts: Options, repeat: usize) -> Solution {
    let mut all: Vec<Solution> = (0..repeat)
        .map(|_| {
            pcg(k, &problem.rhs, opts).unwrap_or_else(|e| {
                eprintln!("{e}");
                std::process::exit(1)
            })
        })
        .collect();
    all.sort_by_key(|s| s.elapsed);
    all.swap_remove(repeat / 2)
}

/// Median times of the kernels of one iteration, dpl on `Place::Cpu` against rayon and
/// sequential Rust, on the vectors of a real solve.
fn kernel_times(problem: &Problem, x: &Field) {
    let dpl = with_place(Place::Cpu, || Dpl::new(problem));
    let (rayon, seq) = (Plain::rayon(problem), Plain::sequential(problem));
    let y = problem.rhs.clone();
    println!("{:<14} {:>11} {:>11} {:>11} {:>10}", "kernel", "dpl cpu", "rayon", "seq", "vs rayon");
    type Step<'k> = Box<dyn Fn(&dyn Kernels, &mut Field) + 'k>;
    let steps: [(&str, Step<'_>); 4] = [
        ("apply (A p)", Box::new(|k, out| k.apply(x, out))),
        ("precondition", Box::new(|k, out| k.precondition(x, out))),
        ("dot", Box::new(|k, _| {
            std::hint::black_box(k.dot(x, &y));
        })),
        ("axpy", Box::new(|k, out| k.add_scaled(out, 0.5, x))),
    ];
    for (name, step) in &steps {
        let mut out = y.clone();
        let t_dpl = with_place(Place::Cpu, || median(|| step(&dpl, &mut out)));
        let t_rayon = median(|| step(&rayon, &mut out));
        let t_seq = median(|| step(&seq, &mut out));
        println!(
            "{name:<14} {:>11} {:>11} {:>11} {:>9.2}x",
            fmt(t_dpl),
            fmt(t_rayon),
            fmt(t_seq),
            t_rayon.as_secs_f64() / t_dpl.as_secs_f64()
        );
    }
    // Structure: what the compiler made of the kernels.
    for i in [dpl::inspect!(dk::apply_half), dpl::inspect!(dk::block_row), dpl::inspect!(dk::precondition), dpl::inspect!(dk::dot)] {
        println!(
            "{:<14} {} loops and {} temporaries before fusion, {} loop(s) and {} after",
            i.name, i.loops_before_fusion, i.temporaries_before_fusion, i.loops, i.temporaries
        );
    }
}

fn median(mut f: impl FnMut()) -> Duration {
    f();
    let mut times: Vec<Duration> = (0..15)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

fn fmt(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us < 1000.0 { format!("{us:.1} us") } else { format!("{:.2} ms", us / 1000.0) }
}
