//! `&mut [T]`, `&mut Vec<T>` and `&mut Seq<T>` parameters assigned once with `*y = e;`:
//! functions without a result and with one, `Result<(), dpl::Error>`, reads of the new
//! value after the assignment, two parameters changed by one call, a `Vec` whose length
//! changes, a resident `Seq`, and a slice given a value of another length (a length
//! mismatch at the assignment, the slice unchanged), on every place.

use super::*;

/// The programs under test, written in the DSL.
mod prog {
    use dpl::prelude::*;

    /// The SPEC's example.
    #[parallel]
    pub fn axpy(a: f32, x: &[f32], y: &mut [f32]) {
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
}

fn in_place(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -1.0, 1.0);
        let mut y = rng.f32s(n, -1.0, 1.0);
        let want = zip_with(&x, &y, |a, b| 2.5 * a + b);
        prog::axpy(2.5, &x, &mut y);
        assert_same(&y, &want, "axpy");

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
    ] {
        assert_eq!(i.gpu_not_compiled, "", "{name}");
    }
}
