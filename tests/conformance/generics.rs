//! Generic `#[parallel]` functions: type parameters bounded by `Scalar`, `Num`, `Int` and
//! `Float` (in the list and in `where` clauses, several at once), literals that take the
//! type the context asks for, `v as T`, `T::ZERO/ONE/MIN/MAX`, `types(...)`, generic
//! `Nested` parameters and tuple results, called at many types on every place and from
//! generic Rust code, against plain Rust at each type.

use super::*;

/// The programs under test, written in the DSL.
mod prog {
    use dpl::prelude::*;

    /// The SPEC's example.
    #[parallel]
    pub fn dot<T: Float>(x: &[T], y: &[T]) -> T {
        sum(map(|a, b| a * b, x, y))
    }

    /// The same function written for `f32`: its instantiation must compile to the same code.
    #[parallel]
    pub fn dot_f32(x: &[f32], y: &[f32]) -> f32 {
        sum(map(|a, b| a * b, x, y))
    }

    /// The SPEC's example.
    #[parallel]
    pub fn clamp_all<T: Num>(x: &[T], lo: T, hi: T) -> Vec<T> {
        map(|v| v.max(lo).min(hi), x)
    }

    /// Unsuffixed literals become `T` (an integer or a float), and the constants of `Num`.
    #[parallel]
    pub fn affine<T: Num>(a: T, x: &[T]) -> (Vec<T>, T, T) {
        let y = map(|v| v * a + 3 - T::ONE, x);
        (
            y,
            reduce(|p, q| p.max(q), x, T::MIN),
            reduce(|p, q| p.min(q), x, T::MAX) + T::ZERO,
        )
    }

    /// Two type parameters, bounded in a `where` clause; `v as U` from an integer.
    #[parallel]
    pub fn scaled<T, U>(x: &[T], s: U) -> Vec<U>
    where
        T: Int,
        U: Float,
    {
        map(|v| (v as U) * s + 0.5, x)
    }

    /// Every scalar type, `bool` included.
    #[parallel]
    pub fn pick<T: Scalar>(c: &[bool], a: &[T], b: &[T]) -> Vec<T> {
        map(|c, a, b| if c { a } else { b }, c, a, b)
    }

    /// Generic rows and a tuple result.
    #[parallel]
    pub fn row_stats<T: Num>(rows: &Nested<T>) -> (Vec<T>, Vec<usize>) {
        (
            map(|r| reduce(|p, q| p + q, r, T::ZERO), rows),
            map(|r| len(r), rows),
        )
    }

    /// Sorting and a scan at any number type.
    #[parallel]
    pub fn sorted_prefix<T: Num>(x: &[T]) -> (Vec<T>, Vec<T>) {
        (sort(x), scan(|p, q| p + q, x))
    }

    /// Generated for the listed types only.
    #[parallel(types(T = "f32, i64"))]
    pub fn halve<T: Num>(x: &[T]) -> Vec<T> {
        map(|v| v / 2, x)
    }

    /// Resident sequences, a `Matrix`, a `Result` and a `Matrix` result at a type parameter.
    #[parallel]
    pub fn seq_and_matrix<T: Num>(
        x: &Seq<T>,
        m: &Matrix<T>,
        k: usize,
    ) -> Result<(Seq<T>, Vec<T>, T, Matrix<T>), Error> {
        (
            map(|v| v + T::ONE, x),
            map(|r| sum(r), m),
            x[k],
            map(|r| map(|v| v * 2, r), m),
        )
    }

    /// Several bounds on one parameter (their intersection).
    #[parallel]
    pub fn negate<T: Num + Copy>(x: &[T]) -> Vec<T>
    where
        T: Float,
    {
        map(|v| -v, x)
    }
}

/// Generic functions in a `#[parallel] mod`: instantiated as lone ones are, calling the
/// module's other functions (inlined and fused), next to non-generic functions.
#[dpl::parallel]
mod linalg {
    use dpl::prelude::*;

    fn squares(x: &[f64]) -> Vec<f64> {
        map(|v| v * v, x)
    }

    /// Calls a non-generic function of the module.
    pub fn weighted<T: Num>(x: &[T], w: &[f64]) -> (Vec<T>, f64) {
        (map(|v| v + v, x), sum(squares(w)))
    }

    pub fn dot<T: Float>(x: &[T], y: &[T]) -> T {
        sum(map(|a, b| a * b, x, y))
    }

    /// Not generic, next to the generic ones.
    pub fn norm2(x: &[f64]) -> f64 {
        sum(squares(x))
    }

    /// Another parameter bound, used at two types.
    pub fn scaled_products<T: Int>(x: &[T], y: &[T], k: T) -> Vec<T> {
        map(|a, b| a * b * k, x, y)
    }
}

/// Generic functions called from `#[parallel]` code: inlined at the types each call gives
/// them (found by type inference over the caller), from non-generic and generic callers,
/// inside a closure, as a primitive's function, and two levels deep.
#[dpl::parallel]
mod calls {
    use dpl::prelude::*;

    pub fn dot<T: Num>(x: &[T], y: &[T]) -> T {
        sum(map(|a, b| a * b, x, y))
    }

    /// Literals, `T::ZERO` and `as T` in a callee.
    pub fn doubled_clamped<T: Num>(x: &[T], hi: T) -> (Vec<T>, T) {
        (map(|v| (v * 2).min(hi).max(T::ZERO), x), x.len() as T)
    }

    /// Generic, calling a generic function.
    pub fn norm<T: Float>(x: &[T]) -> T {
        dot(x, x).sqrt()
    }

    pub fn square<T: Num>(v: T) -> T {
        v * v
    }

    /// `T` only in the result: decided by a turbofish or by the use of the result.
    pub fn halves<T: Float>(n: usize) -> Vec<T> {
        map(|i| (i as T) * 0.5, range(n))
    }

    pub fn named(n: usize) -> (Vec<f32>, f64) {
        let h: Vec<f64> = halves(n);
        (halves::<f32>(n), sum(h) + dot::<f64>(h, h))
    }

    /// A non-generic caller, at several types.
    pub fn stats(x: &[f64], k: &[i32], b: &[u8]) -> (f64, i32, (Vec<u8>, u8), f64) {
        (dot(x, x), dot(k, k), doubled_clamped(b, 200), norm(x))
    }

    /// Per row, inside a closure.
    pub fn row_norms(rows: &Nested<f32>) -> Vec<f32> {
        map(|r| norm(r), rows)
    }

    /// The same, written out for `f32`: the call compiles to what it stands for.
    pub fn row_norms_written(rows: &Nested<f32>) -> Vec<f32> {
        map(|r| sum(map(|a, b| a * b, r, r)).sqrt(), rows)
    }

    /// As a primitive's function.
    pub fn squares(x: &[i16]) -> Vec<i16> {
        map(square, x)
    }

    /// In a loop at the top level, and from a `let`-bound closure used at two types.
    pub fn iterated(x: &[f64], k: &[f32]) -> (f64, f32) {
        let norm_of = |v| norm(v);
        let mut y = x.to_vec();
        for _ in 0..3 {
            y = map(|v| v * 0.5, y);
        }
        (norm_of(y) + dot(y, y), norm_of(k))
    }

    /// Generated for `f32` and `f64` only: a generic function of a module names its types
    /// in an attribute of its own.
    #[parallel(types(T = "f32, f64"))]
    pub fn axpy<T: Float>(a: T, x: &[T], y: &[T]) -> Vec<T> {
        map(|u, v| a * u + v, x, y)
    }

    /// Calls the narrowed function at both its types.
    pub fn axpys(x: &[f32], w: &[f64]) -> (Vec<f32>, Vec<f64>) {
        (axpy(2.0, x, x), axpy(0.5, w, map(|v| v * 3.0, w)))
    }

    /// A generic caller: each instantiation calls at its own types; the literal `2.0`
    /// takes `T`.
    pub fn energy<T: Float>(x: &[T]) -> T {
        norm(x) * 0.5 + dot(x, map(|v| v * 2.0, x))
    }
}

fn generic_calls(place: Place) {
    use dpl_testkit::order::ordered_from;
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f64s(n, -1.0, 1.0);
        let k: Vec<i32> = each(&rng.i32s(n), |v| v % 1000);
        let b: Vec<u8> = each(&rng.i32s(n), |v| v as u8);
        let dot_x = ordered_from(&each(&x, |v| v * v), -0.0, |p, q| p + q);
        let dot_k = k
            .iter()
            .fold(0i32, |s, v| s.wrapping_add(v.wrapping_mul(*v)));
        let clamped: Vec<u8> = each(&b, |v| v.wrapping_mul(2).min(200));
        let (d, i, (c, len), nrm) = calls::stats(&x, &k, &b);
        assert_exact(d, dot_x, "dot::<f64> called from stats");
        assert_eq!(i, dot_k, "dot::<i32> called from stats");
        assert_eq!(c, clamped, "doubled_clamped::<u8> called from stats");
        assert_eq!(len, n as u8, "x.len() as u8");
        assert_exact(nrm, dot_x.sqrt(), "norm::<f64> called from stats");
        let h: Vec<i16> = each(&k, |v| v as i16);
        assert_eq!(
            calls::squares(&h),
            each(&h, |v| v.wrapping_mul(v)),
            "map(square, x)"
        );
        let (h32, total) = calls::named(n);
        let h: Vec<f64> = (0..n).map(|i| i as f64 * 0.5).collect();
        assert_eq!(h32, each(&h, |v| v as f32), "halves::<f32>");
        let want = ordered_from(&h, -0.0, |p, q| p + q)
            + ordered_from(&each(&h, |v| v * v), -0.0, |p, q| p + q);
        assert_exact(
            total,
            want,
            "halves at f64 decided by an annotation, dot::<f64>",
        );
        let xf = rng.f32s(n, -1.0, 1.0);
        let y = each(&x, |v| v * 0.125);
        let dot_y = ordered_from(&each(&y, |v| v * v), -0.0, |p, q| p + q);
        let dot_xf = ordered_from(&each(&xf, |v| v * v), -0.0, |p, q| p + q);
        let (a, c) = calls::iterated(&x, &xf);
        assert_exact(a, dot_y.sqrt() + dot_y, "iterated: norm and dot at f64");
        assert_exact(c, dot_xf.sqrt(), "iterated: norm at f32");
        let twice = each(&xf, |v| v * 2.0);
        let want = ordered_from(&each(&xf, |v| v * v), -0.0, |p, q| p + q).sqrt() * 0.5
            + ordered_from(&zip_with(&xf, &twice, |p, q| p * q), -0.0, |p, q| p + q);
        assert_exact(calls::energy(&xf), want, "energy::<f32>");
        let (p, q) = calls::axpys(&xf, &x);
        assert_eq!(
            p,
            each(&xf, |v| 2.0 * v + v),
            "axpy::<f32> called from axpys"
        );
        let want_q = each(&x, |v| 0.5 * v + v * 3.0);
        assert_eq!(q, want_q, "axpy::<f64> called from axpys");
        assert_eq!(
            calls::axpy(0.5, &x, &each(&x, |v| v * 3.0)),
            want_q,
            "axpy::<f64>"
        );
        let lens: Vec<usize> = (0..n.min(300)).map(|i| (i * 7) % 13).collect();
        let rows: Vec<Vec<f32>> = lens.iter().map(|&l| rng.f32s(l, -1.0, 1.0)).collect();
        let want: Vec<f32> = rows
            .iter()
            .map(|r| ordered_from(&each(r, |v| v * v), -0.0, |p, q| p + q).sqrt())
            .collect();
        let rows = dpl::Nested::from_rows(rows);
        assert_same(&calls::row_norms(&rows), &want, "map(|r| norm(r), rows)");
        assert_same(&calls::row_norms_written(&rows), &want, "row_norms_written");
    });
}

fn in_a_module(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (x, w) = (rng.f32s(n, -1.0, 1.0), rng.f64s(n, -1.0, 1.0));
        let squares = each(&w, |a| a * a);
        let want_norm = dpl_testkit::order::ordered_from(&squares, -0.0, |a, b| a + b);
        let (doubled, norm) = linalg::weighted(&x, &w);
        assert_same(&doubled, &each(&x, |v| v + v), "weighted::<f32>");
        assert_exact(norm, want_norm, "weighted::<f32>: the norm");
        assert_exact(linalg::norm2(&w), want_norm, "norm2");
        let products = zip_with(&x, &x, |a, b| a * b);
        let want = dpl_testkit::order::ordered_from(&products, -0.0, |a, b| a + b);
        assert_exact(linalg::dot(&x, &x), want, "dot::<f32>");
        let (a, b) = (rng.i32s(n), rng.i32s(n));
        let want: Vec<i32> = zip_with(&a, &b, |p, q| p.wrapping_mul(q).wrapping_mul(3));
        assert_eq!(
            linalg::scaled_products(&a, &b, 3),
            want,
            "scaled_products::<i32>"
        );
        let (a, b): (Vec<u8>, Vec<u8>) = (each(&a, |v| v as u8), each(&b, |v| v as u8));
        let want: Vec<u8> = zip_with(&a, &b, |p, q| p.wrapping_mul(q).wrapping_mul(7));
        assert_eq!(
            linalg::scaled_products(&a, &b, 7),
            want,
            "scaled_products::<u8>"
        );
    });
}

/// A generic Rust function calling a generic `#[parallel]` function: the bounds suffice.
fn norm2<T: dpl::Float>(x: &[T]) -> T {
    prog::dot(x, x)
}

fn dot(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (x, y) = (rng.f32s(n, -1.0, 1.0), rng.f32s(n, -1.0, 1.0));
        let products = zip_with(&x, &y, |a, b| a * b);
        let want = dpl_testkit::order::ordered_from(&products, -0.0, |a, b| a + b);
        assert_exact(prog::dot(&x, &y), want, "dot::<f32>");
        assert_exact(
            prog::dot(&x, &y),
            prog::dot_f32(&x, &y),
            "dot::<f32> and dot_f32",
        );
        let (x, y) = (rng.f64s(n, -1.0, 1.0), rng.f64s(n, -1.0, 1.0));
        let products = zip_with(&x, &y, |a, b| a * b);
        let want = dpl_testkit::order::ordered_from(&products, -0.0, |a, b| a + b);
        assert_exact(prog::dot(&x, &y), want, "dot::<f64>");
        // Half precision: each product and sum computed in f32 and rounded once (the
        // `half` crate's operators), in dpl's order.
        let (xh, yh): (Vec<dpl::f16>, Vec<dpl::f16>) =
            (each(&x, dpl::f16::from_f64), each(&y, dpl::f16::from_f64));
        let products = zip_with(&xh, &yh, |a, b| a * b);
        let want =
            dpl_testkit::order::ordered_from(&products, dpl::f16::from_f32(-0.0), |a, b| a + b);
        assert_eq!(prog::dot(&xh, &yh).to_bits(), want.to_bits(), "dot::<f16>");
        let (xb, yb): (Vec<dpl::bf16>, Vec<dpl::bf16>) =
            (each(&x, dpl::bf16::from_f64), each(&y, dpl::bf16::from_f64));
        let products = zip_with(&xb, &yb, |a, b| a * b);
        let want =
            dpl_testkit::order::ordered_from(&products, dpl::bf16::from_f32(-0.0), |a, b| a + b);
        assert_eq!(prog::dot(&xb, &yb).to_bits(), want.to_bits(), "dot::<bf16>");
        let squares = each(&x, |a| a * a);
        let want = dpl_testkit::order::ordered_from(&squares, -0.0, |a, b| a + b);
        assert_exact(norm2(&x), want, "norm2::<f64>");
    });
}

fn clamp(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x: Vec<i8> = rng.vec(n, |r| r.u64() as i8);
        let want = each(&x, |v| v.clamp(-5, 9));
        assert_same(&prog::clamp_all(&x, -5i8, 9), &want, "clamp_all::<i8>");
        let x: Vec<u16> = rng.vec(n, |r| r.u64() as u16);
        let want = each(&x, |v| v.clamp(100, 60_000));
        assert_same(
            &prog::clamp_all(&x, 100u16, 60_000),
            &want,
            "clamp_all::<u16>",
        );
        let x = rng.u64s(n);
        let want = each(&x, |v| v.clamp(1 << 40, 1 << 62));
        assert_same(
            &prog::clamp_all(&x, 1u64 << 40, 1 << 62),
            &want,
            "clamp_all::<u64>",
        );
        let x = rng.f64s(n, -3.0, 3.0);
        let want = each(&x, |v| v.clamp(-1.0, 2.0));
        assert_same(
            &prog::clamp_all(&x, -1.0f64, 2.0),
            &want,
            "clamp_all::<f64>",
        );
    });
}

fn literals_and_constants(place: Place) {
    each_size(place, &[1, 1001], |n, rng| {
        let x = rng.i32s(n);
        let want = (
            each(&x, |v| v.wrapping_mul(7).wrapping_add(3).wrapping_sub(1)),
            x.iter().copied().fold(i32::MIN, i32::max),
            x.iter().copied().fold(i32::MAX, i32::min),
        );
        assert_eq!(prog::affine(7i32, &x), want, "affine::<i32>");
        let x: Vec<u8> = rng.vec(n, |r| r.u64() as u8);
        let want = (
            each(&x, |v| v.wrapping_mul(3).wrapping_add(3).wrapping_sub(1)),
            x.iter().copied().fold(u8::MIN, u8::max),
            x.iter().copied().fold(u8::MAX, u8::min),
        );
        assert_eq!(prog::affine(3u8, &x), want, "affine::<u8>");
        let x = rng.f32s(n, -10.0, 10.0);
        let (y, hi, lo) = prog::affine(1.5f32, &x);
        assert_same(&y, &each(&x, |v| v * 1.5 + 3.0 - 1.0), "affine::<f32>");
        let hi_want = x.iter().copied().fold(f32::MIN, f32::max);
        let lo_want = x.iter().copied().fold(f32::MAX, f32::min);
        assert_exact((hi, lo), (hi_want, lo_want), "affine::<f32> extremes");
    });
}

fn two_parameters(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i64s(n);
        let want = each(&x, |v| (v as f32) * 0.25 + 0.5);
        assert_same(&prog::scaled(&x, 0.25f32), &want, "scaled::<i64, f32>");
        let x: Vec<u16> = rng.vec(n, |r| r.u64() as u16);
        let want = each(&x, |v| f64::from(v) * -3.0 + 0.5);
        assert_same(&prog::scaled(&x, -3.0f64), &want, "scaled::<u16, f64>");
    });
}

fn every_scalar(place: Place) {
    each_size(place, &[0, 1, 1001], |n, rng| {
        let c = rng.bools(n);
        macro_rules! check {
            ($($t:ty: $gen:expr),*) => {$(
                let (a, b): (Vec<$t>, Vec<$t>) = (rng.vec(n, $gen), rng.vec(n, $gen));
                let want: Vec<$t> = (0..n).map(|i| if c[i] { a[i] } else { b[i] }).collect();
                assert_eq!(prog::pick(&c, &a, &b), want, concat!("pick::<", stringify!($t), ">"));
            )*};
        }
        check!(
            bool: |r: &mut Rng| r.bool(), i8: |r: &mut Rng| r.u64() as i8,
            u8: |r: &mut Rng| r.u64() as u8, i16: |r: &mut Rng| r.u64() as i16,
            u16: |r: &mut Rng| r.u64() as u16, i32: |r: &mut Rng| r.i32(),
            u32: |r: &mut Rng| r.u32(), i64: |r: &mut Rng| r.i64(),
            u64: |r: &mut Rng| r.u64(), usize: |r: &mut Rng| r.u64() as usize,
            dpl::f16: |r: &mut Rng| dpl::f16::from_f64(r.f64()),
            dpl::bf16: |r: &mut Rng| dpl::bf16::from_f64(r.f64()),
            f32: |r: &mut Rng| r.f32_in(-1.0, 1.0), f64: |r: &mut Rng| r.f64()
        );
    });
}

fn rows_sorts_and_scans(place: Place) {
    each_size(place, &[0, 1, 1001], |n, rng| {
        let rows: Vec<Vec<i16>> = (0..n)
            .map(|_| {
                let len = rng.below(9);
                rng.vec(len, |r| r.u64() as i16)
            })
            .collect();
        let want = (
            rows.iter()
                .map(|r| r.iter().fold(0i16, |s, &v| s.wrapping_add(v)))
                .collect::<Vec<_>>(),
            rows.iter().map(Vec::len).collect::<Vec<_>>(),
        );
        assert_eq!(
            prog::row_stats(&dpl::Nested::from(rows)),
            want,
            "row_stats::<i16>"
        );
        let x = rng.u32s(n);
        let mut sorted = x.clone();
        sorted.sort_unstable();
        let prefix: Vec<u32> = x
            .iter()
            .scan(0u32, |s, &v| {
                *s = s.wrapping_add(v);
                Some(*s)
            })
            .collect();
        assert_eq!(
            prog::sorted_prefix(&x),
            (sorted, prefix),
            "sorted_prefix::<u32>"
        );
        let x = rng.f64s(n, -1.0, 1.0);
        let mut sorted = x.clone();
        sorted.sort_by(f64::total_cmp);
        let prefix = dpl_testkit::order::scanned(&x, None, |a, b| a + b);
        let (got_sorted, got_prefix) = prog::sorted_prefix(&x);
        assert_same(&got_sorted, &sorted, "sorted_prefix::<f64> sort");
        assert_same(&got_prefix, &prefix, "sorted_prefix::<f64> scan");
    });
}

fn listed_types_and_bounds(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -4.0, 4.0);
        assert_same(&prog::halve(&x), &each(&x, |v| v / 2.0), "halve::<f32>");
        let x = rng.i64s(n);
        assert_same(&prog::halve(&x), &each(&x, |v| v / 2), "halve::<i64>");
        let x = rng.f64s(n, -4.0, 4.0);
        assert_same(&prog::negate(&x), &each(&x, |v| -v), "negate::<f64>");
    });
}

fn resident_and_results(place: Place) {
    each_size(place, &[1, 1001], |n, rng| {
        let x: Vec<i16> = rng.vec(n, |r| r.u64() as i16);
        let cols = 3;
        let flat: Vec<i16> = rng.vec(n * cols, |r| r.u64() as i16);
        let rows: Vec<Vec<i16>> = flat.chunks(cols).map(<[i16]>::to_vec).collect();
        let m = dpl::Matrix::from_rows(rows.clone()).expect("rows of one length");
        let (s, sums, at, doubled) =
            prog::seq_and_matrix(&dpl::Seq::from(x.clone()), &m, n - 1).expect("in range");
        assert_eq!(
            s.to_vec(),
            each(&x, |v| v.wrapping_add(1)),
            "seq_and_matrix::<i16> seq"
        );
        let want: Vec<i16> = rows
            .iter()
            .map(|r| r.iter().fold(0i16, |a, &b| a.wrapping_add(b)))
            .collect();
        assert_eq!(sums, want, "seq_and_matrix::<i16> row sums");
        assert_eq!(at, x[n - 1]);
        let want: Vec<Vec<i16>> = rows
            .iter()
            .map(|r| each(r, |v| v.wrapping_mul(2)))
            .collect();
        assert_eq!(
            doubled,
            dpl::Matrix::from_rows(want).expect("rows"),
            "seq_and_matrix::<i16> matrix"
        );
        let got = prog::seq_and_matrix(&dpl::Seq::from(x.clone()), &m, n);
        assert!(
            matches!(got, Err(dpl::Error::IndexOutOfRange { .. })),
            "x[n] of a generic function: {got:?}"
        );
        let xf = rng.f64s(n, -2.0, 2.0);
        let mf = dpl::Matrix::from_rows(vec![xf.clone()]).expect("one row");
        let (s, sums, _, _) =
            prog::seq_and_matrix(&dpl::Seq::from(xf.clone()), &mf, 0).expect("in range");
        assert_same(
            &s.to_vec(),
            &each(&xf, |v| v + 1.0),
            "seq_and_matrix::<f64> seq",
        );
        let want = dpl_testkit::order::ordered_from(&xf, -0.0, |a, b| a + b);
        assert_exact(sums[0], want, "seq_and_matrix::<f64> row sum");
    });
}

on_every_place!(
    resident_and_results,
    dot,
    clamp,
    literals_and_constants,
    two_parameters,
    every_scalar,
    rows_sorts_and_scans,
    listed_types_and_bounds,
    in_a_module,
    generic_calls,
);

/// An instantiation compiles to the same IR and CPU code as the function written for its
/// types (up to the function's name), so it runs at the same speed.
#[test]
fn an_instantiation_is_the_function_written_for_its_types() {
    let generic = dpl::inspect!(prog::dot::<f32>);
    let written = dpl::inspect!(prog::dot_f32);
    assert_eq!(generic.name, "dot::<f32>");
    let rename = |s: &str| s.replace("__dpl_dot__f32", "dot_f32");
    assert_eq!(rename(generic.fused_ir), written.fused_ir);
    assert_eq!(rename(generic.cpu_rust), written.cpu_rust);
    assert_eq!(generic.loops, 1);
    // Without types, the first instantiation (the bound's first type).
    assert_eq!(dpl::inspect!(prog::dot).name, "dot::<f16>");
    assert_eq!(
        dpl::inspect!(prog::scaled::<u16, f64>).name,
        "scaled::<u16, f64>"
    );
}

/// A call of a generic function from `#[parallel]` code is inlined at its types and fused
/// like any call: the same loops as the body written out.
#[test]
fn a_generic_call_is_the_body_written_out() {
    let called = dpl::inspect!(calls::row_norms);
    let written = dpl::inspect!(calls::row_norms_written);
    assert_eq!(called.loops, written.loops);
    assert_eq!(called.temporaries, written.temporaries);
    assert_eq!(called.phases, written.phases);
    // The body, as inlined at `f32`, inside the rows' map (not a call); `dot(x, x)`'s two
    // arguments are one sequence, so no check that their lengths agree.
    assert!(called.fused_ir.contains("sqrt %"), "{}", called.fused_ir);
    assert!(!called.fused_ir.contains("assert"), "{}", called.fused_ir);
    assert!(!called.cpu_rust.contains("norm"), "{}", called.cpu_rust);
}
