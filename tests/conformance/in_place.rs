//! `&mut [T]`, `&mut Vec<T>` and `&mut Seq<T>` parameters assigned once with `*y = e;`:
//! functions without a result and with one, `Result<(), dpl::Error>`, reads of the new
//! value after the assignment, two parameters changed by one call, a `Vec` whose length
//! changes, a resident `Seq`, and a slice given a value of another length (a length
//! mismatch at the assignment, the slice unchanged), on every place. Which assignments the
//! CPU writes in place (no temporary) and which through a temporary, and that both give
//! the same answers and the same errors (a failing call leaves the parameter unchanged).
//! Functions of a `#[parallel] mod` take `&mut` parameters too.

use super::*;

/// The programs under test, written in the DSL.
mod prog {
    use dpl::prelude::*;

    /// The SPEC's example.
    #[parallel]
    pub fn axpy(a: f32, x: &[f32], y: &mut [f32]) {
        *y = map(|xi, yi| a * xi + yi, x, y);
    }

    /// Generic, at `f32`, `f64` and `f16`: each instantiation writes in place.
    #[parallel]
    pub fn axpy_generic<T: Float>(a: T, x: &[T], y: &mut [T]) {
        *y = map(|xi, yi| a * xi + yi, x, y);
    }

    /// The new value is read after the assignment; the result is declared too.
    #[parallel]
    pub fn grow(v: &mut Vec<i32>, extra: &[i32]) -> usize {
        *v = concat(v, extra);
        len(v) * 2
    }

    #[parallel]
    pub fn keep_positive(v: &mut Vec<f64>) -> Result<(), Error> {
        *v = filter(|t| t > 0.0, v);
    }

    /// A resident sequence, replaced by the result (on a GPU place it stays there).
    #[parallel]
    pub fn scale_seq(s: &mut Seq<f32>, k: f32) -> f32 {
        *s = map(|v| v * k, s);
        sum(s)
    }

    /// Two parameters: `b`'s new value is computed from its old one after `a`'s.
    #[parallel]
    pub fn two(a: &mut [i64], b: &mut [i64]) {
        *a = map(|x, y| x + y, a, b);
        *b = map(|y| y * 2, b);
    }

    #[parallel]
    pub fn only_positive(y: &mut [f32]) -> Result<(), Error> {
        *y = filter(|v| v > 0.0, y);
    }

    #[parallel]
    pub fn only_positive_or_panic(y: &mut [f32]) {
        *y = filter(|v| v > 0.0, y);
    }

    /// [`axpy`] returning its errors: `x` of another length is a length mismatch of the map
    /// (checked before anything is written).
    #[parallel]
    pub fn axpy_checked(a: f32, x: &[f32], y: &mut [f32]) -> Result<(), Error> {
        *y = map(|xi, yi| a * xi + yi, x, y);
    }

    /// A new value that does not read `y`: in place, its length checked first.
    #[parallel]
    pub fn doubled_into(x: &[f32], y: &mut [f32]) -> Result<(), Error> {
        *y = map(|v| v * 2.0, x);
    }

    /// A chain of maps: one pass in place on `Place::Cpu` (fused).
    #[parallel]
    pub fn scale_shift(y: &mut Vec<f64>, k: f64, c: f64) {
        *y = map(|v| v + c, map(|v| v * k, y));
    }

    /// The new value read after the assignment (in place: it is `y` itself).
    #[parallel]
    pub fn doubled_sum(y: &mut [f32]) -> f32 {
        *y = map(|v| v * 2.0, y);
        sum(y)
    }

    /// Element `i` reads `y` at another index: through the temporary.
    #[parallel]
    pub fn add_reversed(x: &[f32], y: &mut [f32]) {
        *y = map(|xi, yi| xi + yi, x, reverse(y));
    }

    /// A gather of `y` (checked reads at any index): through the temporary; an index out
    /// of range is an error, the slice unchanged.
    #[parallel]
    pub fn permute_by(y: &mut [i32], idx: &[usize]) -> Result<(), Error> {
        *y = map(|k| y[k], idx);
    }

    /// The old value read after the assignment, through a view taken before it: through
    /// the temporary.
    #[parallel]
    pub fn double_keep_tail(y: &mut [f32]) -> f32 {
        let tail = y[1..];
        *y = map(|v| v * 2.0, y);
        sum(tail)
    }

    /// An element function that can fail (a checked read of another input): through the
    /// temporary, so that an index out of range leaves `y` unchanged.
    #[parallel]
    pub fn add_gathered(y: &mut [f32], x: &[f32], idx: &[usize]) -> Result<(), Error> {
        *y = map(|yi, k| yi + x[k], y, idx);
    }

    /// The new value of `a` and the result are one loop (horizontal fusion) writing a
    /// new vector: `a`'s part is copied into it.
    #[parallel]
    pub fn one_of_two(a: &mut [i64], b: &[i64]) -> Vec<i64> {
        *a = map(|x, y| x + y, a, b);
        map(|y| y * 2, b)
    }

    /// A statement after the assignment that can fail: through the temporary.
    #[parallel]
    pub fn double_then_pick(y: &mut [f32], k: usize) -> Result<f32, Error> {
        *y = map(|v| v * 2.0, y);
        y[k]
    }
}

/// Functions of a `#[parallel] mod` change their `&mut` parameters as lone functions do,
/// and may call the module's other functions.
#[dpl::parallel]
mod solver {
    fn scaled(a: f32, x: &[f32]) -> Vec<f32> {
        map(|v| a * v, x)
    }

    /// Calls `scaled` (inlined and fused): in place on `Place::Cpu`.
    pub fn axpy(a: f32, x: &[f32], y: &mut [f32]) {
        *y = map(|s, yi| s + yi, scaled(a, x), y);
    }

    pub fn norm2(x: &[f32]) -> f32 {
        sum(map(|v| v * v, x))
    }

    /// Two parameters and a result computed by another function from the new values.
    pub fn step(a: f32, p: &mut Vec<f32>, r: &mut [f32]) -> f32 {
        *r = map(|ri, pi| ri - a * pi, r, p);
        *p = map(|pi, ri| ri + 0.5 * pi, p, r);
        norm2(r)
    }
}

/// Whether the generated code for `Place::Cpu` writes a parameter in place
/// (`rt::update`) instead of into a temporary.
fn updates_in_place(cpu_rust: &str) -> bool {
    let code: String = cpu_rust.split_whitespace().collect();
    code.contains("rt::update(&mut")
        || code.contains("rt::update_canon(&mut")
        || code.contains("rt::update_unzip2(&mut")
        || code.contains("rt::update_unzip2_canon(&mut")
}

#[test]
fn which_assignments_are_in_place() {
    for (name, i, in_place) in [
        ("axpy", dpl::inspect!(prog::axpy), true),
        ("axpy_checked", dpl::inspect!(prog::axpy_checked), true),
        ("scale_seq", dpl::inspect!(prog::scale_seq), true),
        ("scale_shift", dpl::inspect!(prog::scale_shift), true),
        ("doubled_sum", dpl::inspect!(prog::doubled_sum), true),
        ("doubled_into", dpl::inspect!(prog::doubled_into), true),
        ("solver::axpy", dpl::inspect!(solver::axpy), true),
        (
            "axpy_generic::<f64>",
            dpl::inspect!(prog::axpy_generic::<f64>),
            true,
        ),
        // Not a map, or not the same length.
        ("grow", dpl::inspect!(prog::grow), false),
        ("keep_positive", dpl::inspect!(prog::keep_positive), false),
        ("only_positive", dpl::inspect!(prog::only_positive), false),
        // Both maps are one loop writing both parameters (`unzip`).
        ("two", dpl::inspect!(prog::two), true),
        // One loop writing a parameter and a new vector: the parameter's part is copied.
        ("one_of_two", dpl::inspect!(prog::one_of_two), false),
        // Other indices of `y`, the old value read later, something that can fail.
        ("add_reversed", dpl::inspect!(prog::add_reversed), false),
        ("permute_by", dpl::inspect!(prog::permute_by), false),
        (
            "double_keep_tail",
            dpl::inspect!(prog::double_keep_tail),
            false,
        ),
        ("add_gathered", dpl::inspect!(prog::add_gathered), false),
        (
            "double_then_pick",
            dpl::inspect!(prog::double_then_pick),
            false,
        ),
    ] {
        assert_eq!(
            updates_in_place(i.cpu_rust),
            in_place,
            "{name}:\n{}",
            i.cpu_rust
        );
    }
    // In place: one pass, no allocation for the new value.
    let axpy: String = dpl::inspect!(prog::axpy)
        .cpu_rust
        .split_whitespace()
        .collect();
    assert!(!axpy.contains("rt::map"), "{axpy}");
}

/// In place and through a temporary give the same values and the same errors.
fn in_place_or_not(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let mut y = rng.f64s(n, -1.0, 1.0);
        let want = each(&y, |v| v * 1.5 + 0.25);
        prog::scale_shift(&mut y, 1.5, 0.25);
        assert_same(&y, &want, "scale_shift");

        let mut y = rng.f32s(n, -1.0, 1.0);
        let want = each(&y, |v| v * 2.0);
        let total = prog::doubled_sum(&mut y);
        assert_same(&y, &want, "doubled_sum");
        let want_total = dpl_testkit::order::ordered_from(&want, -0.0, |a, b| a + b);
        assert_exact(total, want_total, "doubled_sum: the sum of the new value");

        let x = rng.f32s(n, -1.0, 1.0);
        let mut y = rng.f32s(n, -1.0, 1.0);
        let rev: Vec<f32> = y.iter().rev().copied().collect();
        let want = zip_with(&x, &rev, |a, b| a + b);
        prog::add_reversed(&x, &mut y);
        assert_same(&y, &want, "add_reversed");

        // A rotation by one: element `i` reads `y[i + 1]`, which the loop would already
        // have overwritten had it been written in place.
        let mut y: Vec<i32> = rng.i32s(n);
        let idx: Vec<usize> = (0..n).map(|i| (i + 1) % n).collect();
        let want: Vec<i32> = idx.iter().map(|&k| y[k]).collect();
        prog::permute_by(&mut y, &idx).expect("permute_by");
        assert_eq!(y, want, "permute_by");

        let (mut a, b) = (rng.i64s(n), rng.i64s(n));
        let want_a = zip_with(&a, &b, |p, q| p.wrapping_add(q));
        let doubled = prog::one_of_two(&mut a, &b);
        assert_eq!(a, want_a, "one_of_two");
        assert_eq!(
            doubled,
            each(&b, |q| q.wrapping_mul(2)),
            "one_of_two: the result"
        );

        let mut y = rng.f32s(n, -1.0, 1.0);
        let x = rng.f32s(n, -1.0, 1.0);
        let idx: Vec<usize> = (0..n).map(|i| (i * 7) % n).collect();
        let want = zip_with(&y, &idx, |a, k| a + x[k]);
        prog::add_gathered(&mut y, &x, &idx).expect("add_gathered");
        assert_same(&y, &want, "add_gathered");
    });
    each_size(place, &NONEMPTY_SIZES, |n, rng| {
        let mut y = rng.f32s(n, -1.0, 1.0);
        let want_tail = dpl_testkit::order::ordered_from(&y[1..], -0.0, |a, b| a + b);
        let want = each(&y, |v| v * 2.0);
        let tail = prog::double_keep_tail(&mut y);
        assert_same(&y, &want, "double_keep_tail");
        assert_exact(tail, want_tail, "double_keep_tail: the old tail");

        // Errors leave the parameter unchanged: a length mismatch before the in-place
        // loop, an index out of range inside a loop or after it.
        let x = rng.f32s(n - 1, -1.0, 1.0);
        let mut y = rng.f32s(n, -1.0, 1.0);
        let before = y.clone();
        match prog::axpy_checked(2.0, &x, &mut y) {
            Err(dpl::Error::LengthMismatch { left, right, .. }) => {
                assert_eq!((left, right), (n - 1, n), "axpy_checked");
            }
            other => panic!("axpy_checked with x shorter: {other:?}"),
        }
        assert_same(&y, &before, "axpy_checked: unchanged after the error");
        match prog::doubled_into(&x, &mut y) {
            Err(dpl::Error::LengthMismatch {
                prim: "*y = e",
                left,
                right,
                ..
            }) => assert_eq!((left, right), (n, n - 1), "doubled_into"),
            other => panic!("doubled_into with x shorter: {other:?}"),
        }
        assert_same(&y, &before, "doubled_into: unchanged after the error");
        let mut z = vec![0.0f32; n - 1];
        prog::doubled_into(&x, &mut z).expect("doubled_into");
        assert_same(&z, &each(&x, |v| v * 2.0), "doubled_into");

        let mut idx: Vec<usize> = (0..n).collect();
        idx[n - 1] = n;
        let mut p: Vec<i32> = rng.i32s(n);
        let p_before = p.clone();
        assert!(
            matches!(
                prog::permute_by(&mut p, &idx),
                Err(dpl::Error::IndexOutOfRange { .. })
            ),
            "permute_by out of range"
        );
        assert_eq!(p, p_before, "permute_by: unchanged after the error");

        assert!(
            matches!(
                prog::add_gathered(&mut y, &x, &idx),
                Err(dpl::Error::IndexOutOfRange { .. })
            ),
            "add_gathered out of range"
        );
        assert_same(&y, &before, "add_gathered: unchanged after the error");

        assert!(
            matches!(
                prog::double_then_pick(&mut y, n),
                Err(dpl::Error::IndexOutOfRange { .. })
            ),
            "double_then_pick out of range"
        );
        assert_same(&y, &before, "double_then_pick: unchanged after the error");
        let picked = prog::double_then_pick(&mut y, n - 1).expect("double_then_pick");
        assert_exact(picked, before[n - 1] * 2.0, "double_then_pick");
        assert_same(&y, &each(&before, |v| v * 2.0), "double_then_pick: doubled");
    });
}

on_every_place!(in_place_or_not);

fn in_place(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -1.0, 1.0);
        let mut y = rng.f32s(n, -1.0, 1.0);
        let want = zip_with(&x, &y, |a, b| 2.5 * a + b);
        prog::axpy(2.5, &x, &mut y);
        assert_same(&y, &want, "axpy");
        let mut z = each(&want, |v| v - 1.0);
        let want_z = zip_with(&x, &z, |a, b| 2.5 * a + b);
        prog::axpy_generic(2.5f32, &x, &mut z);
        assert_same(&z, &want_z, "axpy_generic::<f32>");
        let (xd, mut yd) = (each(&x, |v| v as f64), each(&y, |v| v as f64));
        let want_d = zip_with(&xd, &yd, |a, b| 0.5 * a + b);
        prog::axpy_generic(0.5f64, &xd, &mut yd);
        assert_same(&yd, &want_d, "axpy_generic::<f64>");
        let (xh, mut yh) = (each(&x, dpl::f16::from_f32), each(&y, dpl::f16::from_f32));
        let a = dpl::f16::from_f32(0.5);
        let want_h: Vec<u16> = zip_with(&xh, &yh, |p, q| (a * p + q).to_bits());
        prog::axpy_generic(a, &xh, &mut yh);
        assert_eq!(each(&yh, |v| v.to_bits()), want_h, "axpy_generic::<f16>");

        let mut v: Vec<i32> = rng.vec(n, |r| r.i32());
        let extra: Vec<i32> = rng.vec(n / 2 + 1, |r| r.i32());
        let want: Vec<i32> = v.iter().chain(&extra).copied().collect();
        assert_eq!(
            prog::grow(&mut v, &extra),
            want.len() * 2,
            "grow: the new length"
        );
        assert_eq!(v, want, "grow");

        let mut w = rng.f64s(n, -1.0, 1.0);
        let want: Vec<f64> = w.iter().copied().filter(|&t| t > 0.0).collect();
        prog::keep_positive(&mut w).expect("keep_positive");
        assert_same(&w, &want, "keep_positive");

        let (mut a, mut b) = (rng.i64s(n), rng.i64s(n));
        let want_a = zip_with(&a, &b, |p, q| p.wrapping_add(q));
        let want_b = each(&b, |q| q.wrapping_mul(2));
        prog::two(&mut a, &mut b);
        assert_eq!((a, b), (want_a, want_b), "two");
    });
    each_size(place, &[1, 1001], |n, rng| {
        let x = rng.f32s(n, -1.0, 1.0);
        let mut s = dpl::Seq::from(x.clone());
        let scaled = each(&x, |v| v * 3.0);
        let total = prog::scale_seq(&mut s, 3.0);
        assert_same(&s.to_vec(), &scaled, "scale_seq");
        let want = dpl_testkit::order::ordered_from(&scaled, -0.0, |a, b| a + b);
        assert_exact(total, want, "scale_seq: sum of the new value");

        // Positive and negative values: the filter is shorter than the slice.
        let mut y = rng.f32s(n.max(2), -1.0, 1.0);
        y[0] = -0.5;
        let before = y.clone();
        match prog::only_positive(&mut y) {
            Err(dpl::Error::LengthMismatch {
                prim: "*y = e",
                left,
                right,
                ..
            }) => {
                assert_eq!(left, before.len());
                assert_eq!(right, before.iter().filter(|v| **v > 0.0).count());
            }
            other => panic!("a shorter value for a &mut [f32]: {other:?}"),
        }
        assert_same(&y, &before, "unchanged after the error");
        let message = panic_message(|| prog::only_positive_or_panic(&mut y));
        assert!(message.contains("*y = e: length mismatch"), "{message}");
        let mut all = vec![0.25f32; n];
        prog::only_positive(&mut all).expect("same length");
    });
}

on_every_place!(in_place);

fn in_a_module(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -1.0, 1.0);
        let mut y = rng.f32s(n, -1.0, 1.0);
        let want = zip_with(&x, &y, |a, b| 2.5 * a + b);
        solver::axpy(2.5, &x, &mut y);
        assert_same(&y, &want, "solver::axpy");

        let mut p = rng.f32s(n, -1.0, 1.0);
        let mut r = rng.f32s(n, -1.0, 1.0);
        let want_r = zip_with(&r, &p, |ri, pi| ri - 0.75 * pi);
        let want_p = zip_with(&p, &want_r, |pi, ri| ri + 0.5 * pi);
        let squares = each(&want_r, |v| v * v);
        let want_norm = dpl_testkit::order::ordered_from(&squares, -0.0, |a, b| a + b);
        let norm = solver::step(0.75, &mut p, &mut r);
        assert_same(&r, &want_r, "solver::step: r");
        assert_same(&p, &want_p, "solver::step: p");
        assert_exact(norm, want_norm, "solver::step: the norm of the new r");
        assert_exact(solver::norm2(&r), want_norm, "solver::norm2");
    });
}

on_every_place!(in_a_module);

/// Every program compiles to PTX (no CPU fallback on the GPU places).
#[cfg(feature = "sim")]
#[test]
fn every_program_compiles_for_the_gpu() {
    for (name, i) in [
        ("axpy", dpl::inspect!(prog::axpy)),
        ("grow", dpl::inspect!(prog::grow)),
        ("keep_positive", dpl::inspect!(prog::keep_positive)),
        ("scale_seq", dpl::inspect!(prog::scale_seq)),
        ("two", dpl::inspect!(prog::two)),
        ("only_positive", dpl::inspect!(prog::only_positive)),
        ("axpy_checked", dpl::inspect!(prog::axpy_checked)),
        ("scale_shift", dpl::inspect!(prog::scale_shift)),
        ("doubled_sum", dpl::inspect!(prog::doubled_sum)),
        ("add_reversed", dpl::inspect!(prog::add_reversed)),
        ("permute_by", dpl::inspect!(prog::permute_by)),
        ("double_keep_tail", dpl::inspect!(prog::double_keep_tail)),
        ("add_gathered", dpl::inspect!(prog::add_gathered)),
        ("double_then_pick", dpl::inspect!(prog::double_then_pick)),
        ("one_of_two", dpl::inspect!(prog::one_of_two)),
        ("doubled_into", dpl::inspect!(prog::doubled_into)),
        ("solver::axpy", dpl::inspect!(solver::axpy)),
        ("solver::step", dpl::inspect!(solver::step)),
    ] {
        assert_eq!(i.gpu_not_compiled, "", "{name}");
    }
}
