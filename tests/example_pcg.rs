//! Tests of the `pcg` example (`examples/pcg.rs`): the dpl PCG solver converges on every
//! place and agrees with the plain-Rust solvers; its kernels compute what the
//! independent `f64` reference and the hand-written kernels compute; the structure of
//! the compiled kernels (fusion of Figure 6 across calls); and bad input.

#[path = "../examples/pcg/baselines.rs"]
mod baselines;
#[path = "../examples/pcg/kernels.rs"]
mod kernels;
#[path = "../examples/pcg/problem.rs"]
mod problem;
#[path = "../examples/pcg/solver.rs"]
mod solver;

use baselines::Plain;
use dpl::prelude::*;
use dpl_testkit::SplitMix64;
use kernels::{Dpl, pcg as dk};
use problem::{Field, Problem, relative_distance};
use solver::{Kernels, Options, pcg};

const TOLERANCE: f64 = 1e-6;

/// A field of pseudo-random values in [-1, 1).
fn random_field(pixels: usize, seed: u64) -> Field {
    let mut rng = SplitMix64::new(seed);
    let u = rng.f32s(pixels, -1.0, 1.0);
    let v = rng.f32s(pixels, -1.0, 1.0);
    Field { u, v }
}

/// Held by whatever runs on `Place::Sim`, so that a test counting the transfers of the
/// process sees only its own.
static SIM: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn each_place(f: impl Fn(Place)) {
    for p in dpl::available_places() {
        let _sim = (p == Place::Sim).then(|| SIM.lock().unwrap_or_else(|e| e.into_inner()));
        with_place(p, || f(p));
    }
}

#[test]
fn dpl_converges_on_every_place_and_agrees_with_plain_rust() {
    for (w, h) in [(32, 32), (64, 64), (48, 20)] {
        let problem = Problem::optical_flow(w, h, 0.01).unwrap();
        let opts = Options::converge(TOLERANCE, 10 * problem.unknowns());
        let seq = pcg(&Plain::sequential(&problem), &problem.rhs, opts).unwrap();
        assert!(
            seq.converged,
            "{w}x{h}: the sequential solver did not converge"
        );
        // Independent of every kernel: the true residual computed in f64 from the stencil.
        // It stays a little above the tolerance of the recurrence: f32 rounding of A x.
        let true_residual = problem.relative_residual(&seq.x);
        assert!(
            true_residual < 2e-5,
            "{w}x{h}: true residual {true_residual:e}"
        );
        let rayon = pcg(&Plain::rayon(&problem), &problem.rhs, opts).unwrap();
        assert!(rayon.converged && rayon.iterations.abs_diff(seq.iterations) <= 2);
        assert!(relative_distance(&rayon.x, &seq.x) < 1e-4);
        each_place(|place| {
            let s = pcg(&Dpl::new(&problem), &problem.rhs, opts).unwrap();
            assert!(
                s.converged,
                "{w}x{h} {place}: not converged after {} iterations",
                s.iterations
            );
            assert!(s.residual <= TOLERANCE);
            assert!(
                s.iterations.abs_diff(seq.iterations) <= 2,
                "{w}x{h} {place}: {} iterations, sequential Rust {}",
                s.iterations,
                seq.iterations
            );
            let d = relative_distance(&s.x, &seq.x);
            assert!(
                d < 1e-4,
                "{w}x{h} {place}: solution differs from sequential Rust by {d:e}"
            );
            let r = problem.relative_residual(&s.x);
            assert!(r < 2e-5, "{w}x{h} {place}: true residual {r:e}");
        });
    }
}

#[test]
fn fixed_iterations_run_exactly_and_agree() {
    let problem = Problem::optical_flow(40, 24, 0.02).unwrap();
    let seq = pcg(
        &Plain::sequential(&problem),
        &problem.rhs,
        Options::fixed(7),
    )
    .unwrap();
    assert_eq!(seq.iterations, 7);
    assert!(!seq.converged);
    each_place(|place| {
        let s = pcg(&Dpl::new(&problem), &problem.rhs, Options::fixed(7)).unwrap();
        assert_eq!(s.iterations, 7, "{place}");
        let d = relative_distance(&s.x, &seq.x);
        assert!(d < 1e-5, "{place}: {d:e}");
        assert!(
            (s.residual - seq.residual).abs() <= 1e-4 * seq.residual,
            "{place}"
        );
    });
}

/// The dpl operator is exactly the hand-written one (same arithmetic in the same order;
/// `==` also equates the zeros of different signs that the border terms may produce), and
/// both are within `f32` rounding of the `f64` reference.
#[test]
fn operator_matches_the_reference() {
    for (w, h) in [(1, 1), (1, 9), (9, 1), (17, 13)] {
        let problem = Problem::optical_flow(w, h, 0.05).unwrap();
        let x = random_field(problem.pixels(), (w * 31 + h) as u64);
        let mut want = Field::default();
        Plain::sequential(&problem).apply(&x, &mut want);
        let reference = problem.apply_f64(&x);
        let n = problem.pixels();
        for i in 0..n {
            // A bound on the rounding of the f32 evaluation: 8 roundings of terms at most
            // |a| + |b| + |c| + the weights, times max |x| = 1.
            let scale = (problem.a[i].abs() + problem.b[i].abs() + problem.c[i].abs()) as f64
                + 4.0
                    * problem
                        .right
                        .iter()
                        .chain(&problem.down)
                        .fold(0.0f32, |m, &v| m.max(v)) as f64;
            let bound = 8.0 * f32::EPSILON as f64 * scale;
            assert!(
                (want.u[i] as f64 - reference[i]).abs() <= bound,
                "{w}x{h} u[{i}]"
            );
            assert!(
                (want.v[i] as f64 - reference[n + i]).abs() <= bound,
                "{w}x{h} v[{i}]"
            );
        }
        each_place(|place| {
            let mut got = Field::default();
            Dpl::new(&problem).apply(&x, &mut got);
            assert_eq!(got, want, "{w}x{h} {place}");
        });
    }
}

#[test]
fn figure6_preconditioner_inverts_the_blocks() {
    let problem = Problem::optical_flow(23, 11, 0.03).unwrap();
    let r = random_field(problem.pixels(), 5);
    let plain = Plain::sequential(&problem);
    let mut want = Field::default();
    plain.precondition(&r, &mut want);
    each_place(|place| {
        let dpl = Dpl::new(&problem);
        let (p_a, p_b, p_c) = dpl.preconditioner();
        assert_eq!((p_a, p_b, p_c), plain.preconditioner(), "{place}");
        for i in 0..problem.pixels() {
            // [a b; b c] [p_a p_b; p_b p_c] = I, in f64 from the f32 entries.
            let (a, b, c) = (
                problem.a[i] as f64,
                problem.b[i] as f64,
                problem.c[i] as f64,
            );
            let (pa, pb, pc) = (p_a[i] as f64, p_b[i] as f64, p_c[i] as f64);
            for (got, want) in [
                (a * pa + b * pb, 1.0),
                (a * pb + b * pc, 0.0),
                (b * pb + c * pc, 1.0),
            ] {
                assert!(
                    (got - want).abs() < 1e-5,
                    "{place}: pixel {i}: {got} vs {want}"
                );
            }
        }
        let mut z = Field::default();
        dpl.precondition(&r, &mut z);
        assert_eq!(z, want, "{place}");
        // Figure 6's `precondition` as written (one function, two results) agrees.
        let (e, f) = dk::precondition(&r.u, &r.v, p_a, p_b, p_c);
        assert_eq!(Field { u: e, v: f }, want, "{place}");
    });
}

#[test]
fn dot_and_axpy_match_plain_rust() {
    let x = random_field(1000, 1);
    let y = random_field(1000, 2);
    let problem = Problem::optical_flow(50, 20, 0.01).unwrap();
    let plain = Plain::sequential(&problem);
    let want_dot: f64 =
        x.u.iter()
            .zip(&y.u)
            .chain(x.v.iter().zip(&y.v))
            .map(|(a, b)| (a * b) as f64)
            .sum();
    let mut want_x = x.clone();
    plain.add_scaled(&mut want_x, 0.75, &y);
    let mut want_p = y.clone();
    plain.scale_add(&x, -1.5, &mut want_p);
    each_place(|place| {
        let dpl = Dpl::new(&problem);
        let got = dpl.dot(&x, &y);
        assert!(
            (got - want_dot).abs() <= 1e-12 * want_dot.abs().max(1.0),
            "{place}: {got} vs {want_dot}"
        );
        let mut got_x = x.clone();
        dpl.add_scaled(&mut got_x, 0.75, &y);
        assert_eq!(got_x, want_x, "{place}");
        let mut got_p = y.clone();
        dpl.scale_add(&x, -1.5, &mut got_p);
        assert_eq!(got_p, want_p, "{place}");
    });
}

/// Calls between the functions of the `#[parallel] mod` are inlined and fused: every
/// kernel the solver calls is one loop with no temporary.
#[test]
fn kernels_are_fused_across_calls() {
    let shape = |i: dpl::Inspect| {
        (
            i.loops_before_fusion,
            i.temporaries_before_fusion,
            i.loops,
            i.temporaries,
        )
    };
    // vadd(vmul(p, u), vmul(q, v)): three calls, one loop.
    assert_eq!(shape(dpl::inspect!(dk::block_row)), (3, 2, 1, 0));
    // block_row and the neighbour sum, then their difference: one loop.
    assert_eq!(shape(dpl::inspect!(dk::apply_half)), (6, 5, 1, 0));
    assert_eq!(shape(dpl::inspect!(dk::dot)), (2, 1, 1, 0));
    assert_eq!(shape(dpl::inspect!(dk::axpy)), (1, 0, 1, 0));
    // Figure 6's precondition: each of its two results is one fused loop, and the two
    // loops are merged by horizontal fusion into a map of pairs and its two projections
    // (the code generator writes them as one loop: figure6_precondition_is_one_loop).
    assert_eq!(shape(dpl::inspect!(dk::precondition)), (6, 4, 3, 1));
    // form_preconditioner keeps `indets` (three consumers) as its one temporary; two of its
    // three maps are merged (one map of pairs, a temporary in the IR, and its projections).
    assert_eq!(dpl::inspect!(dk::form_preconditioner).temporaries, 2);
}

/// What Copperhead's compiler does with Figure 6: the two maps of `precondition` run over
/// the same index space and read the same inputs, so they become one loop writing two
/// outputs. In the IR, horizontal fusion makes them one map of pairs and its two
/// projections (`unzip`: 3 combinators, counted as such by `inspect!`); the CPU code
/// generator writes that as one loop, a single `map_unzip2` call (`map_unzip2_canon`: its
/// two float components' NaNs made canonical after the loop).
#[test]
fn figure6_precondition_is_one_loop() {
    let one_loop = |i: &dpl::Inspect| {
        // The text is wrapped into lines: compare without whitespace.
        let rust: String = i.cpu_rust.chars().filter(|c| !c.is_whitespace()).collect();
        // Every loop helper of the run time.
        let helpers = [
            "rt::map(",
            "rt::map_canon(",
            "rt::reduce(",
            "heavy::map(",
            "heavy::reduce(",
            "rt::map_unzip2(",
            "rt::map_unzip2_canon(",
            "rt::map_unzip3(",
            "rt::map_unzip3_canon(",
        ];
        let calls: usize = helpers.iter().map(|h| rust.matches(h).count()).sum();
        assert_eq!(calls, 1, "{}\n{}", i.fused_ir, i.cpu_rust);
        assert_eq!(
            rust.matches("rt::map_unzip2_canon(").count(),
            1,
            "{}",
            i.cpu_rust
        );
    };
    let p = dpl::inspect!(dk::precondition);
    assert_eq!((p.loops, p.temporaries), (3, 1), "{}", p.fused_ir);
    one_loop(&p);
    // The operator's two components are one loop too (written as one map of pairs).
    one_loop(&dpl::inspect!(dk::apply));
}

/// The kernels that update the solver's vectors (functions of the module with `&mut`
/// parameters, written with its other functions) write them in place on the CPU: one
/// `rt::update` loop (`update_canon`: its NaNs made canonical after the loop; two outputs:
/// `rt::update_unzip2_canon`), no new vector.
#[test]
fn updates_are_written_in_place() {
    for (name, i, helper) in [
        (
            "axpy_in_place",
            dpl::inspect!(dk::axpy_in_place),
            "rt::update_canon(",
        ),
        (
            "scale_add_in_place",
            dpl::inspect!(dk::scale_add_in_place),
            "rt::update_canon(",
        ),
        (
            "precondition_into",
            dpl::inspect!(dk::precondition_into),
            "rt::update_unzip2_canon(",
        ),
    ] {
        let rust: String = i.cpu_rust.chars().filter(|c| !c.is_whitespace()).collect();
        assert_eq!(rust.matches(helper).count(), 1, "{name}: {}", i.cpu_rust);
        for fresh in [
            "rt::map(",
            "rt::map_canon(",
            "rt::map_unzip2(",
            "rt::map_unzip2_canon(",
            "heavy::map(",
        ] {
            assert!(!rust.contains(fresh), "{name}: {}", i.cpu_rust);
        }
    }
}

/// Results returned in a tuple are moved out of the generated code's locals, not copied.
#[test]
fn tuple_results_are_moved_not_copied() {
    for rust in [
        dpl::inspect!(dk::precondition).cpu_rust,
        dpl::inspect!(dk::form_preconditioner).cpu_rust,
    ] {
        assert!(!rust.contains("to_vec"), "{rust}");
    }
}

#[test]
fn zero_right_hand_side_is_solved_at_once() {
    let problem = Problem::optical_flow(8, 8, 0.01).unwrap();
    let zero = Field::zeros(problem.pixels());
    each_place(|place| {
        let s = pcg(
            &Dpl::new(&problem),
            &zero,
            Options::converge(TOLERANCE, 100),
        )
        .unwrap();
        assert!(s.converged && s.iterations == 0 && s.x == zero, "{place}");
    });
}

#[test]
fn breakdown_is_an_error_not_a_wrong_answer() {
    // An indefinite operator: negated diagonal blocks.
    let mut problem = Problem::optical_flow(8, 8, 0.01).unwrap();
    for v in problem.a.iter_mut().chain(problem.c.iter_mut()) {
        *v = -*v;
    }
    each_place(|place| {
        let e = pcg(
            &Dpl::new(&problem),
            &problem.rhs,
            Options::converge(TOLERANCE, 1000),
        )
        .unwrap_err();
        assert!(e.contains("breakdown"), "{place}: {e}");
    });
    let e = pcg(
        &Plain::sequential(&problem),
        &problem.rhs,
        Options::converge(TOLERANCE, 1000),
    )
    .unwrap_err();
    assert!(e.contains("breakdown"), "{e}");
}

#[test]
fn bad_problems_are_rejected() {
    assert!(
        Problem::optical_flow(0, 4, 0.01)
            .unwrap_err()
            .contains("empty")
    );
    assert!(
        Problem::optical_flow(4, 0, 0.01)
            .unwrap_err()
            .contains("empty")
    );
    assert!(
        Problem::optical_flow(4, 4, 0.0)
            .unwrap_err()
            .contains("positive")
    );
    assert!(
        Problem::optical_flow(4, 4, f64::NAN)
            .unwrap_err()
            .contains("positive")
    );
    assert!(
        Problem::optical_flow(1 << 20, 1 << 20, 0.01)
            .unwrap_err()
            .contains("too large")
    );
}

#[test]
fn kernels_reject_mismatched_lengths() {
    each_place(|place| {
        // A contract violation panics with a message naming the primitive and the place.
        let payload = std::panic::catch_unwind(|| dk::axpy(1.0, &[1.0, 2.0], &[1.0])).unwrap_err();
        let msg = payload.downcast::<String>().expect("a panic message");
        assert!(
            msg.contains("map: length mismatch") && msg.contains("kernels.rs"),
            "{place}: {msg}"
        );
    });
}

/// The solver as one `#[parallel]` function (its loop inside) runs the iterations of the
/// host loop over the same kernels, on every place, and agrees with it and with plain Rust;
/// a zero right-hand side and a breakdown behave as in the host loop.
#[test]
fn the_solver_in_one_call_agrees_with_the_host_loop() {
    for (w, h, opts) in [
        (32, 32, Options::converge(TOLERANCE, 10_000)),
        (48, 20, Options::converge(TOLERANCE, 10_000)),
        (40, 24, Options::fixed(7)),
    ] {
        let problem = Problem::optical_flow(w, h, 0.01).unwrap();
        let seq = pcg(&Plain::sequential(&problem), &problem.rhs, opts).unwrap();
        each_place(|place| {
            let k = Dpl::new(&problem);
            let host = pcg(&k, &problem.rhs, opts).unwrap();
            let one = k.solve(&problem.rhs, opts).unwrap();
            assert_eq!(one.iterations, host.iterations, "{w}x{h} {place}");
            assert_eq!(one.converged, host.converged, "{w}x{h} {place}");
            let d = relative_distance(&one.x, &host.x);
            assert!(d < 1e-6, "{w}x{h} {place}: {d:e} from the host loop");
            let d = relative_distance(&one.x, &seq.x);
            assert!(d < 1e-4, "{w}x{h} {place}: {d:e} from sequential Rust");
            assert!((one.residual - host.residual).abs() <= 1e-6 * host.residual);
        });
    }
    let problem = Problem::optical_flow(8, 8, 0.01).unwrap();
    let zero = Field::zeros(problem.pixels());
    let mut indefinite = problem.clone();
    for v in indefinite.a.iter_mut().chain(indefinite.c.iter_mut()) {
        *v = -*v;
    }
    each_place(|place| {
        let s = Dpl::new(&problem)
            .solve(&zero, Options::converge(TOLERANCE, 100))
            .unwrap();
        assert!(s.converged && s.iterations == 0 && s.x == zero, "{place}");
        let e = Dpl::new(&indefinite)
            .solve(&indefinite.rhs, Options::converge(TOLERANCE, 1000))
            .unwrap_err();
        assert!(e.contains("breakdown"), "{place}: {e}");
    });
}

/// On the simulated GPU the one-call solver moves no vector per iteration: a solve of 40
/// iterations uploads what one of 5 does, and downloads only the dot products and the
/// error records per iteration, never a vector.
#[cfg(feature = "sim")]
#[test]
fn the_solver_in_one_call_moves_no_vector_per_iteration() {
    let _sim = SIM.lock().unwrap_or_else(|e| e.into_inner());
    let problem = Problem::optical_flow(64, 64, 0.01).unwrap();
    let k = with_place(Place::Sim, || Dpl::new(&problem));
    let moved = |iters: usize| {
        let before = dpl::transfers(Place::Sim);
        let s = with_place(Place::Sim, || k.solve(&problem.rhs, Options::fixed(iters)));
        assert_eq!(s.unwrap().iterations, iters);
        let after = dpl::transfers(Place::Sim);
        (
            after.to_device_bytes - before.to_device_bytes,
            after.to_host_bytes - before.to_host_bytes,
        )
    };
    let (up5, down5) = moved(5);
    let (up40, down40) = moved(40);
    assert_eq!(up40, up5, "uploads");
    let vector = 4 * problem.pixels() as u64;
    let per_iteration = (down40 - down5) / 35;
    eprintln!("{per_iteration} bytes to the host per iteration (a vector is {vector})");
    assert!(
        per_iteration < vector / 8,
        "{per_iteration} bytes per iteration"
    );
}
