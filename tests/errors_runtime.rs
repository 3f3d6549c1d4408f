//! Run-time contract violations and places.
//!
//! Every violation is checked twice on every place: a function returning a plain value
//! panics with a message naming the primitive and the `file:line` of the primitive in this
//! file; the same body declared `-> Result<_, dpl::Error>` returns the matching `Err`
//! variant with that location. Inputs larger than the CPU backend's grain check the
//! parallel paths too.
//!
//! Each program is preceded by a `*_LINE` constant holding the line of its primitive
//! (`line!()` plus the distance to it), so moving code keeps the expectations right.

mod common;

use common::*;
use dpl::{Error, Location, Matrix, Place};

/// The programs, each in a panicking and a `Result` form.
mod prog {
    use dpl::prelude::*;

    pub const MAP_LINE: u32 = line!() + 3;
    #[parallel]
    pub fn add(a: &[f32], b: &[f32]) -> Vec<f32> {
        map(|x, y| x + y, a, b)
    }

    pub const TRY_MAP_LINE: u32 = line!() + 3;
    #[parallel]
    pub fn try_add(a: &[f32], b: &[f32]) -> Result<Vec<f32>, dpl::Error> {
        map(|x, y| x + y, a, b)
    }

    pub const ZIP_LINE: u32 = line!() + 3;
    #[parallel]
    pub fn zip_sum(a: &[i32], b: &[i32]) -> i32 {
        sum(map(|p| p.0 * p.1, zip(a, b)))
    }

    pub const TRY_ZIP_LINE: u32 = line!() + 3;
    #[parallel]
    pub fn try_zip_sum(a: &[i32], b: &[i32]) -> Result<i32, Error> {
        sum(map(|p| p.0 * p.1, zip(a, b)))
    }

    pub const GATHER_LINE: u32 = line!() + 3;
    #[parallel]
    pub fn gather_i32(x: &[f64], idx: &[i32]) -> Vec<f64> {
        gather(x, idx)
    }

    pub const TRY_GATHER_LINE: u32 = line!() + 3;
    #[parallel]
    pub fn try_gather_i32(x: &[f64], idx: &[i32]) -> Result<Vec<f64>, Error> {
        gather(x, idx)
    }

    pub const PERMUTE_LINE: u32 = line!() + 3;
    #[parallel]
    pub fn permute_u32(x: &[u64], idx: &[u32]) -> Vec<u64> {
        permute(x, idx)
    }

    pub const TRY_PERMUTE_LINE: u32 = line!() + 3;
    #[parallel]
    pub fn try_permute_u32(x: &[u64], idx: &[u32]) -> Result<Vec<u64>, Error> {
        permute(x, idx)
    }

    pub const SCATTER_LINE: u32 = line!() + 3;
    #[parallel]
    pub fn scatter_usize(src: &[i64], idx: &[usize], dst: &[i64]) -> Vec<i64> {
        scatter(src, idx, dst)
    }

    pub const TRY_SCATTER_LINE: u32 = line!() + 3;
    #[parallel]
    pub fn try_scatter_usize(src: &[i64], idx: &[usize], dst: &[i64]) -> Result<Vec<i64>, Error> {
        scatter(src, idx, dst)
    }

    pub const SCATTER_REDUCE_LINE: u32 = line!() + 3;
    #[parallel]
    pub fn histogram(keys: &[u32], bins: usize) -> Vec<u32> {
        scatter_reduce(
            |a, b| a + b,
            map(|_k| 1u32, keys),
            keys,
            replicate(0u32, bins),
        )
    }

    pub const TRY_SCATTER_REDUCE_LINE: u32 = line!() + 3;
    #[parallel]
    pub fn try_histogram(keys: &[u32], bins: usize) -> Result<Vec<u32>, Error> {
        scatter_reduce(
            |a, b| a + b,
            replicate(1u32, len(keys)),
            keys,
            replicate(0u32, bins),
        )
    }

    pub const MIN_LINE: u32 = line!() + 3;
    #[parallel]
    pub fn smallest(x: &[i32]) -> i32 {
        min(x)
    }

    pub const TRY_MAX_LINE: u32 = line!() + 3;
    #[parallel]
    pub fn try_largest(x: &[f32]) -> Result<f32, Error> {
        max(x)
    }

    pub const INDEX_LINE: u32 = line!() + 3;
    #[parallel]
    pub fn lookup(table: &[f32], keys: &[u64]) -> Vec<f32> {
        map(|k| table[k], keys)
    }

    pub const TRY_INDEX_LINE: u32 = line!() + 3;
    #[parallel]
    pub fn try_lookup(table: &[f32], keys: &[u64]) -> Result<Vec<f32>, Error> {
        map(|k| table[k], keys)
    }

    pub const DIV_LINE: u32 = line!() + 3;
    #[parallel]
    pub fn quotients(a: &[i32], b: &[i32]) -> Vec<i32> {
        map(|p, q| p / q, a, b)
    }

    pub const TRY_REM_LINE: u32 = line!() + 3;
    #[parallel]
    pub fn try_remainders(a: &[u64], b: &[u64]) -> Result<Vec<u64>, Error> {
        map(|p, q| p % q, a, b)
    }

    #[parallel]
    pub fn float_quotients(a: &[f32], b: &[f32]) -> Result<Vec<f32>, Error> {
        map(|p, q| p / q, a, b)
    }

    // ---- violations inside fused pipelines and lambdas ----

    pub const FUSED_GATHER_LINE: u32 = line!() + 3;
    #[parallel]
    pub fn energy(x: &[f32], idx: &[u32]) -> Result<f32, Error> {
        sum(map(|v| v * v, gather(x, idx)))
    }

    pub const MAX_OF_MAP_LINE: u32 = line!() + 3;
    #[parallel]
    pub fn max_shifted(x: &[f64]) -> Result<f64, Error> {
        max(map(|v| v + 1.0, x))
    }

    pub const MIN_OF_FILTER_LINE: u32 = line!() + 3;
    #[parallel]
    pub fn min_positive(x: &[i64]) -> Result<i64, Error> {
        min(filter(|v| v > 0, x))
    }

    pub const MAP_OF_FILTER_LINE: u32 = line!() + 3;
    #[parallel]
    pub fn add_positives(x: &[i32], y: &[i32]) -> Result<Vec<i32>, Error> {
        map(|a, b| a + b, filter(|v| v > 0, x), y)
    }

    pub const DIV_IN_SUM_LINE: u32 = line!() + 3;
    #[parallel]
    pub fn sum_of_quotients(a: &[i64], b: &[i64]) -> Result<i64, Error> {
        sum(map(|p, q| p / q, a, b))
    }

    pub const INDEX_IN_PREDICATE_LINE: u32 = line!() + 3;
    #[parallel]
    pub fn select_positive(x: &[f32], idx: &[usize]) -> Result<Vec<usize>, Error> {
        filter(|i| x[i] > 0.0, idx)
    }

    pub const WRAPPED_INDEX_LINE: u32 = line!() + 3;
    #[parallel]
    pub fn shift_left(x: &[u32]) -> Result<Vec<u32>, Error> {
        gather(x, map(|i| i - 1, indices(x)))
    }

    pub const SORT_BY_KEY_LINE: u32 = line!() + 3;
    #[parallel]
    pub fn sort_by_key_u32(k: &[u32], v: &[f32]) -> Vec<f32> {
        sort_by_key(k, v)
    }

    pub const TRY_SORT_BY_KEY_LINE: u32 = line!() + 3;
    #[parallel]
    pub fn try_sort_by_key_u32(k: &[u32], v: &[f32]) -> Result<Vec<f32>, Error> {
        sort_by_key(k, v)
    }

    pub const NEGATIVE_INDEX_LINE: u32 = line!() + 3;
    #[parallel]
    pub fn lookup_i32(x: &[u64], idx: &[i32]) -> Result<Vec<u64>, Error> {
        map(|i| x[i], idx)
    }

    pub const HUGE_MAP_LINE: u32 = line!() + 3;
    #[parallel]
    pub fn iota(n: usize) -> Result<Vec<f64>, Error> {
        map(|i| i as f64 * 0.5, range(n))
    }

    pub const HUGE_ROWS_LINE: u32 = line!() + 3;
    #[parallel]
    pub fn row_sums(m: &Matrix<f64>) -> Result<Vec<f64>, Error> {
        map(|r| sum(r), m)
    }

    pub const HUGE_SCAN_LINE: u32 = line!() + 3;
    #[parallel]
    pub fn running(n: usize) -> Vec<u32> {
        scan(|a, b| a + b, map(|i| i as u32, range(n)))
    }
}

/// Where an error says it happened.
fn location(e: &Error) -> Option<Location> {
    match e {
        Error::LengthMismatch { at, .. }
        | Error::IndexOutOfRange { at, .. }
        | Error::Empty { at, .. }
        | Error::NotAPermutation { at, .. }
        | Error::DivideByZero { at, .. }
        | Error::OutOfMemory { at, .. } => Some(*at),
        _ => None,
    }
}

/// Checks that `message`, the panic of a violation in the primitive `prim` written at `line`
/// of this file, names both.
#[track_caller]
fn assert_panic_names(message: &str, prim: &str, line: u32) {
    assert!(
        message.contains(prim),
        "the message `{message}` does not name `{prim}`"
    );
    let at = format!("{}:{line}:", file!());
    assert!(
        message.contains(&at),
        "the message `{message}` does not name the location {at}"
    );
}

/// Checks that `result` is an `Err` accepted by `is_expected`, located at `line` of this file.
#[track_caller]
fn assert_err_at<T: std::fmt::Debug>(
    result: Result<T, Error>,
    line: u32,
    is_expected: impl Fn(&Error) -> bool,
) {
    let e = result.expect_err("a violated contract must return Err");
    assert!(is_expected(&e), "unexpected error: {e:?}");
    let at = location(&e).expect("the error carries a location");
    assert!(at.file.ends_with("errors_runtime.rs"), "wrong file in {e}");
    assert_eq!(at.line, line, "wrong line in {e}");
}

/// A length mismatch between two inputs `a` of length `n` and `b` of length `m`.
fn is_length_mismatch(e: &Error, prim: &str, n: usize, m: usize) -> bool {
    matches!(e, Error::LengthMismatch { prim: p, left, right, .. }
        if *p == prim && ((*left, *right) == (n, m) || (*left, *right) == (m, n)))
}

fn is_out_of_range(e: &Error, prim: &str, index: i128, len: usize) -> bool {
    matches!(e, Error::IndexOutOfRange { prim: p, index: i, len: l, .. }
        if *p == prim && *i == index && *l == len)
}

/// Sizes of the violations: small (sequential paths) and above the grain (parallel paths).
const VIOLATION_SIZES: [usize; 2] = [5, BIG];

fn map_length_mismatch(place: Place) {
    each_size(place, &VIOLATION_SIZES, |n, rng| {
        let (a, b) = (rng.f32s(n, 0.0, 1.0), rng.f32s(n + 1, 0.0, 1.0));
        assert_panic_names(&panic_message(|| prog::add(&a, &b)), "map", prog::MAP_LINE);
        assert_err_at(prog::try_add(&a, &b), prog::TRY_MAP_LINE, |e| {
            is_length_mismatch(e, "map", n, n + 1)
        });
        // An empty input against a non-empty one is a mismatch too.
        assert_err_at(prog::try_add(&[], &b), prog::TRY_MAP_LINE, |e| {
            is_length_mismatch(e, "map", 0, n + 1)
        });
    });
}

fn zip_length_mismatch(place: Place) {
    each_size(place, &VIOLATION_SIZES, |n, rng| {
        let (a, b) = (rng.i32s(n + 2), rng.i32s(n));
        assert_panic_names(
            &panic_message(|| prog::zip_sum(&a, &b)),
            "zip",
            prog::ZIP_LINE,
        );
        assert_err_at(prog::try_zip_sum(&a, &b), prog::TRY_ZIP_LINE, |e| {
            is_length_mismatch(e, "zip", n + 2, n)
        });
    });
}

fn sort_by_key_length_mismatch(place: Place) {
    each_size(place, &VIOLATION_SIZES, |n, rng| {
        let (k, v) = (rng.u32s(n), rng.f32s(n + 3, 0.0, 1.0));
        assert_panic_names(
            &panic_message(|| prog::sort_by_key_u32(&k, &v)),
            "sort_by_key",
            prog::SORT_BY_KEY_LINE,
        );
        assert_err_at(
            prog::try_sort_by_key_u32(&k, &v),
            prog::TRY_SORT_BY_KEY_LINE,
            |e| is_length_mismatch(e, "sort_by_key", n, n + 3),
        );
    });
}

fn gather_out_of_range(place: Place) {
    each_size(place, &VIOLATION_SIZES, |n, rng| {
        let x = rng.f64s(n, 0.0, 1.0);
        let mut idx = cast_indices::<i32>(&rng.indices(n, n));
        // One bad index near the end: past the end, then negative.
        idx[n - 2] = n as i32;
        let message = panic_message(|| prog::gather_i32(&x, &idx));
        assert_panic_names(&message, "gather", prog::GATHER_LINE);
        assert!(
            message.contains(&n.to_string()),
            "{message} does not give the index"
        );
        assert_err_at(prog::try_gather_i32(&x, &idx), prog::TRY_GATHER_LINE, |e| {
            is_out_of_range(e, "gather", n as i128, n)
        });
        idx[n - 2] = -1;
        assert_err_at(prog::try_gather_i32(&x, &idx), prog::TRY_GATHER_LINE, |e| {
            is_out_of_range(e, "gather", -1, n)
        });
        // Any index into an empty sequence is out of range.
        assert_err_at(
            prog::try_gather_i32(&[], &[0]),
            prog::TRY_GATHER_LINE,
            |e| is_out_of_range(e, "gather", 0, 0),
        );
    });
}

fn permute_violations(place: Place) {
    each_size(place, &VIOLATION_SIZES, |n, rng| {
        let x = rng.u64s(n);
        let mut idx = cast_indices::<u32>(&rng.permutation(n));
        // A repeated index: not a permutation.
        let (first, second) = (idx[1], idx[n - 1]);
        idx[n - 1] = first;
        assert_panic_names(
            &panic_message(|| prog::permute_u32(&x, &idx)),
            "permute",
            prog::PERMUTE_LINE,
        );
        assert_err_at(
            prog::try_permute_u32(&x, &idx),
            prog::TRY_PERMUTE_LINE,
            |e| {
                matches!(
                    e,
                    Error::NotAPermutation {
                        prim: "permute",
                        ..
                    }
                )
            },
        );
        // An index past the end.
        idx[n - 1] = n as u32;
        assert_err_at(
            prog::try_permute_u32(&x, &idx),
            prog::TRY_PERMUTE_LINE,
            |e| is_out_of_range(e, "permute", n as i128, n),
        );
        // Fewer indices than values.
        idx[n - 1] = second;
        assert_err_at(
            prog::try_permute_u32(&x, &idx[..n - 1]),
            prog::TRY_PERMUTE_LINE,
            |e| is_length_mismatch(e, "permute", n, n - 1),
        );
        // The valid permutation still works after the failures.
        assert!(prog::try_permute_u32(&x, &idx).is_ok());
    });
}

fn scatter_violations(place: Place) {
    each_size(place, &VIOLATION_SIZES, |n, rng| {
        let dst = rng.i64s(n);
        let src = rng.i64s(n / 2 + 1);
        let mut idx = rng.indices(src.len(), n);
        let last = idx.len() - 1;
        idx[last] = n + 7;
        let message = panic_message(|| prog::scatter_usize(&src, &idx, &dst));
        assert_panic_names(&message, "scatter", prog::SCATTER_LINE);
        assert_err_at(
            prog::try_scatter_usize(&src, &idx, &dst),
            prog::TRY_SCATTER_LINE,
            |e| is_out_of_range(e, "scatter", (n + 7) as i128, n),
        );
        assert_err_at(
            prog::try_scatter_usize(&src, &idx[..last], &dst),
            prog::TRY_SCATTER_LINE,
            |e| is_length_mismatch(e, "scatter", src.len(), last),
        );
    });
}

fn scatter_reduce_out_of_range(place: Place) {
    each_size(place, &VIOLATION_SIZES, |n, rng| {
        let bins = 10;
        let mut keys = cast_indices::<u32>(&rng.indices(n, bins));
        keys[n / 2] = u32::MAX;
        let message = panic_message(|| prog::histogram(&keys, bins));
        assert_panic_names(&message, "scatter_reduce", prog::SCATTER_REDUCE_LINE);
        assert_err_at(
            prog::try_histogram(&keys, bins),
            prog::TRY_SCATTER_REDUCE_LINE,
            |e| is_out_of_range(e, "scatter_reduce", u32::MAX as i128, bins),
        );
        // No bins at all: every key is out of range.
        assert_err_at(
            prog::try_histogram(&keys[..1], 0),
            prog::TRY_SCATTER_REDUCE_LINE,
            |e| {
                matches!(
                    e,
                    Error::IndexOutOfRange {
                        prim: "scatter_reduce",
                        len: 0,
                        ..
                    }
                )
            },
        );
    });
}

fn empty_min_max(place: Place) {
    each_size(place, &[0], |_, _| {
        assert_panic_names(
            &panic_message(|| prog::smallest(&[])),
            "min",
            prog::MIN_LINE,
        );
        assert_err_at(prog::try_largest(&[]), prog::TRY_MAX_LINE, |e| {
            matches!(e, Error::Empty { prim: "max", .. })
        });
        assert_eq!(prog::try_largest(&[2.5]), Ok(2.5));
    });
}

fn index_out_of_range(place: Place) {
    each_size(place, &VIOLATION_SIZES, |n, rng| {
        let table = rng.f32s(n, 0.0, 1.0);
        let mut keys: Vec<u64> = cast_indices(&rng.indices(n, n));
        keys[n - 1] = u64::MAX;
        assert_panic_names(
            &panic_message(|| prog::lookup(&table, &keys)),
            "index",
            prog::INDEX_LINE,
        );
        assert_err_at(prog::try_lookup(&table, &keys), prog::TRY_INDEX_LINE, |e| {
            is_out_of_range(e, "index", u64::MAX as i128, n)
        });
    });
}

fn divide_by_zero(place: Place) {
    each_size(place, &VIOLATION_SIZES, |n, rng| {
        let a = rng.i32s(n);
        let mut b = rng.vec(n, |r| r.int_in(1..=100) as i32);
        b[n / 3] = 0;
        let message = panic_message(|| prog::quotients(&a, &b));
        assert_panic_names(&message, "attempt to divide by zero (`/`)", prog::DIV_LINE);
        let (a, mut b) = (rng.u64s(n), rng.vec(n, |r| r.int_in(1..=100) as u64));
        b[n - 1] = 0;
        assert_err_at(prog::try_remainders(&a, &b), prog::TRY_REM_LINE, |e| {
            matches!(e, Error::DivideByZero { op: "%", .. })
                && e.to_string().starts_with(
                    "attempt to calculate the remainder with a divisor of zero (`%`) at ",
                )
        });
        // Floating-point division by zero is no error: IEEE gives infinities and NaN.
        let got = prog::float_quotients(&[1.0, -1.0, 0.0], &[0.0, 0.0, 0.0]).expect("no error");
        assert_eq!(&got[..2], &[f32::INFINITY, f32::NEG_INFINITY]);
        assert!(got[2].is_nan());
    });
}

fn violations_in_fused_pipelines(place: Place) {
    each_size(place, &VIOLATION_SIZES, |n, rng| {
        let x = rng.f32s(n, -1.0, 1.0);
        let mut idx = cast_indices::<u32>(&rng.indices(2 * n, n));
        idx[n] = n as u32 + 1;
        assert_err_at(prog::energy(&x, &idx), prog::FUSED_GATHER_LINE, |e| {
            is_out_of_range(e, "gather", n as i128 + 1, n)
        });
        assert_err_at(prog::max_shifted(&[]), prog::MAX_OF_MAP_LINE, |e| {
            matches!(e, Error::Empty { prim: "max", .. })
        });
        // Not empty, but nothing passes the filter.
        let negative = rng.vec(n, |r| r.int_in(-1000..=0));
        assert_err_at(
            prog::min_positive(&negative),
            prog::MIN_OF_FILTER_LINE,
            |e| matches!(e, Error::Empty { prim: "min", .. }),
        );
        // A length known only at run time, after the filter.
        let (a, b) = (rng.vec(n, |r| r.int_in(-5..=5) as i32), rng.i32s(n));
        let kept = a.iter().filter(|&&v| v > 0).count();
        if kept != n {
            assert_err_at(prog::add_positives(&a, &b), prog::MAP_OF_FILTER_LINE, |e| {
                is_length_mismatch(e, "map", kept, n)
            });
        }
        let (p, mut q) = (rng.i64s(n), rng.vec(n, |r| r.int_in(1..=9)));
        q[n / 2] = 0;
        assert_err_at(prog::sum_of_quotients(&p, &q), prog::DIV_IN_SUM_LINE, |e| {
            matches!(e, Error::DivideByZero { .. })
        });
        let mut positions = rng.indices(n, n);
        positions[n - 1] = n;
        assert_err_at(
            prog::select_positive(&x, &positions),
            prog::INDEX_IN_PREDICATE_LINE,
            |e| is_out_of_range(e, "index", n as i128, n),
        );
        // `0usize - 1` wraps to usize::MAX, which is then out of range.
        let y = rng.u32s(n);
        assert_err_at(prog::shift_left(&y), prog::WRAPPED_INDEX_LINE, |e| {
            is_out_of_range(e, "gather", usize::MAX as i128, n)
        });
        let table = rng.u64s(n);
        let mut signed = cast_indices::<i32>(&rng.indices(n, n));
        signed[n / 3] = -3;
        assert_err_at(
            prog::lookup_i32(&table, &signed),
            prog::NEGATIVE_INDEX_LINE,
            |e| is_out_of_range(e, "index", -3, n),
        );
    });
}

/// Results that cannot be allocated: `Err(OutOfMemory)` naming the primitive and the
/// location (or its panic), never an abort of the process. Sizes past the address space
/// fail on any machine, whatever its memory and overcommit policy.
fn impossible_sizes(place: Place) {
    dpl::with_place(place, || {
        for n in [1usize << 50, 1 << 61, usize::MAX] {
            assert_err_at(prog::iota(n), prog::HUGE_MAP_LINE, |e| {
                matches!(e, Error::OutOfMemory { prim: "map", bytes, .. }
                    if *bytes == n as u128 * 8)
            });
        }
        // 2^46 rows of nothing: the rows are free, the 512 TiB of results are not, past the
        // 47-bit address space of x86-64 user code. (2^40 rows, 8 TiB, were allocated on a
        // machine that overcommits memory without limit, and filling them got the process
        // killed.)
        let m = Matrix::<f64>::row_major(1 << 46, 0, Vec::new()).expect("a valid shape");
        assert_err_at(prog::row_sums(&m), prog::HUGE_ROWS_LINE, |e| {
            matches!(e, Error::OutOfMemory { prim: "map", .. })
        });
        let message = panic_message(|| prog::running(1 << 62));
        assert_panic_names(&message, "out of memory", prog::HUGE_SCAN_LINE);
        // The same functions still work at ordinary sizes.
        assert_eq!(prog::iota(3), Ok(vec![0.0, 0.5, 1.0]));
        assert_eq!(prog::running(4), vec![0, 1, 3, 6]);
        let m = Matrix::row_major(2, 2, vec![1.0, 2.0, 3.0, 4.0]).expect("a valid shape");
        assert_eq!(prog::row_sums(&m), Ok(vec![3.0, 7.0]));
    });
}

on_every_place!(
    impossible_sizes,
    map_length_mismatch,
    zip_length_mismatch,
    sort_by_key_length_mismatch,
    gather_out_of_range,
    permute_violations,
    scatter_violations,
    scatter_reduce_out_of_range,
    empty_min_max,
    index_out_of_range,
    divide_by_zero,
    violations_in_fused_pipelines,
);

/// The plain `#[should_panic]` form of the checks above, on the two CPU places.
mod should_panic {
    use super::prog;
    use dpl::{Place, with_place};

    #[test]
    #[should_panic(expected = "gather")]
    fn gather_seq() {
        with_place(Place::Seq, || prog::gather_i32(&[1.0, 2.0], &[0, 2]));
    }

    #[test]
    #[should_panic(expected = "gather")]
    fn gather_cpu() {
        with_place(Place::Cpu, || prog::gather_i32(&[1.0, 2.0], &[0, 2]));
    }

    #[test]
    #[should_panic(expected = "map: length mismatch")]
    fn map_seq() {
        with_place(Place::Seq, || prog::add(&[1.0], &[1.0, 2.0]));
    }

    #[test]
    #[should_panic(expected = "map: length mismatch")]
    fn map_cpu() {
        with_place(Place::Cpu, || prog::add(&[1.0], &[1.0, 2.0]));
    }

    #[test]
    #[should_panic(expected = "min: empty sequence")]
    fn min_cpu() {
        with_place(Place::Cpu, || prog::smallest(&[]));
    }
}

/// Choosing places: `Place::parse`, `with_place` scopes, `DPL_PLACE`, unavailable places.
mod places {
    use super::common::panic_message;
    use super::prog;
    use dpl::{Error, Place, current_place, with_place};

    #[test]
    fn parse_accepts_every_spelling() {
        let good = [
            ("cpu", Place::Cpu),
            ("CPU", Place::Cpu),
            (" seq\n", Place::Seq),
            ("sim", Place::Sim),
            ("gpu", Place::Gpu(0)),
            ("gpu:0", Place::Gpu(0)),
            ("Gpu:7", Place::Gpu(7)),
        ];
        for (text, place) in good {
            assert_eq!(Place::parse(text), Ok(place), "{text:?}");
        }
        for place in [
            Place::Cpu,
            Place::Seq,
            Place::Sim,
            Place::Gpu(0),
            Place::Gpu(12),
        ] {
            assert_eq!(
                Place::parse(&place.to_string()),
                Ok(place),
                "round trip of {place:?}"
            );
        }
    }

    #[test]
    fn parse_rejects_other_text() {
        for text in [
            "", "tpu", "gpu:", "gpu:-1", "gpu:x", "gpu0", "cpu:1", "seqq",
        ] {
            match Place::parse(text) {
                Err(Error::BadPlace { text: t }) => assert_eq!(t, text),
                other => panic!("{text:?} parsed as {other:?}"),
            }
            let message = Place::parse(text).unwrap_err().to_string();
            assert!(
                message.contains("cpu, seq, gpu, gpu:N, sim or mpi"),
                "{message}"
            );
        }
    }

    #[test]
    fn with_place_nests_and_restores() {
        let outer = current_place();
        with_place(Place::Seq, || {
            assert_eq!(current_place(), Place::Seq);
            let inner = with_place(Place::Cpu, || {
                assert_eq!(current_place(), Place::Cpu);
                with_place(Place::Sim, current_place)
            });
            assert_eq!(inner, Place::Sim);
            assert_eq!(current_place(), Place::Seq);
        });
        assert_eq!(current_place(), outer);
    }

    #[test]
    fn with_place_restores_after_a_panic() {
        let outer = current_place();
        with_place(Place::Seq, || {
            // A contract violation on the parallel place, caught outside its scope...
            let message =
                panic_message(|| with_place(Place::Cpu, || prog::add(&vec![1.0; 1 << 16], &[1.0])));
            assert!(message.contains("map"), "{message}");
            // ...leaves the enclosing scope's place in force.
            assert_eq!(current_place(), Place::Seq);
            assert_eq!(prog::try_add(&[1.0], &[2.0]), Ok(vec![3.0]));
            // So does an ordinary panic.
            panic_message(|| with_place(Place::Sim, || panic!("user panic")));
            assert_eq!(current_place(), Place::Seq);
        });
        assert_eq!(current_place(), outer);
    }

    #[test]
    fn with_place_is_per_thread() {
        with_place(Place::Seq, || {
            let other = std::thread::spawn(current_place).join().unwrap();
            assert_eq!(other, dpl::default_place());
        });
    }

    /// Checks the error and the panic for a place this build has no backend for.
    #[cfg(not(all(feature = "sim", feature = "cuda")))]
    fn assert_unavailable(place: Place, name: &str) {
        match with_place(place, || prog::try_add(&[1.0], &[2.0])) {
            Err(Error::PlaceUnavailable { place: p, reason }) => {
                assert_eq!(p, place);
                assert!(!reason.is_empty());
            }
            other => panic!("{place:?}: expected PlaceUnavailable, got {other:?}"),
        }
        let message = panic_message(|| with_place(place, || prog::add(&[1.0], &[2.0])));
        assert!(
            message.contains(name),
            "the message `{message}` does not name {name}"
        );
        assert!(message.contains("not available"), "{message}");
    }

    #[cfg(not(feature = "sim"))]
    #[test]
    fn sim_without_the_feature_is_a_clear_error() {
        assert_unavailable(Place::Sim, "sim");
    }

    #[cfg(not(feature = "cuda"))]
    #[test]
    fn gpu_without_the_feature_is_a_clear_error() {
        assert_unavailable(Place::Gpu(0), "gpu:0");
        assert_unavailable(Place::Gpu(3), "gpu:3");
    }

    /// Runs this test binary again, only [`dpl_place_child`], with `DPL_PLACE=value`.
    fn run_child(value: &str, expect: &str) -> std::process::Output {
        let output = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "places::dpl_place_child",
                "--ignored",
                "--nocapture",
            ])
            .env("DPL_PLACE", value)
            .env("DPL_TEST_EXPECT_PLACE", expect)
            .output()
            .expect("the test binary runs");
        assert!(
            output.status.success(),
            "DPL_PLACE={value:?}: child failed:\n{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        output
    }

    #[test]
    fn dpl_place_sets_the_default() {
        for (value, expect) in [
            ("seq", "seq"),
            ("cpu", "cpu"),
            (" SEQ ", "seq"),
            ("sim", "sim"),
            ("gpu:2", "gpu:2"),
        ] {
            run_child(value, expect);
        }
        // A value that names no place is reported (a `warn` record of the `log` crate,
        // which the child prints) and ignored: the default is then the GPU when the build
        // has one and device 0 is usable, else the CPU.
        let fallback = if dpl::available_places().contains(&Place::Gpu(0)) {
            "gpu:0"
        } else {
            "cpu"
        };
        let output = run_child("warp-drive", fallback);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("WARN dpl::place: ignoring DPL_PLACE") && stderr.contains("warp-drive"),
            "{stderr}"
        );
    }

    /// Prints each log record on standard error as `LEVEL target: message`, for the parent
    /// of [`dpl_place_child`] to read.
    struct StderrLogger;

    impl log::Log for StderrLogger {
        fn enabled(&self, _: &log::Metadata<'_>) -> bool {
            true
        }

        fn log(&self, record: &log::Record<'_>) {
            eprintln!("{} {}: {}", record.level(), record.target(), record.args());
        }

        fn flush(&self) {}
    }

    /// The child side of [`dpl_place_sets_the_default`]; does nothing when run by hand.
    #[test]
    #[ignore = "run by dpl_place_sets_the_default with DPL_PLACE set"]
    fn dpl_place_child() {
        let Ok(expect) = std::env::var("DPL_TEST_EXPECT_PLACE") else {
            return;
        };
        log::set_logger(&StderrLogger).expect("the child's logger is the first");
        log::set_max_level(log::LevelFilter::Warn);
        let expect = Place::parse(&expect).unwrap();
        assert_eq!(dpl::default_place(), expect);
        assert_eq!(current_place(), expect);
        // Calls really run there: a place without a backend in this build refuses them.
        let result = prog::try_add(&[1.0], &[2.0]);
        // With `cuda`, a GPU place runs on the device, or on the CPU when there is none
        // (saying so on standard error); without it, it is refused.
        let compiled_in = match expect {
            Place::Cpu | Place::Seq => true,
            Place::Sim => cfg!(feature = "sim"),
            Place::Gpu(_) => cfg!(feature = "cuda"),
            // Needs `dpl::mpi::init()`, which this child does not call.
            Place::Mpi => false,
        };
        if compiled_in {
            assert_eq!(result, Ok(vec![3.0]));
        } else {
            assert!(
                matches!(result, Err(Error::PlaceUnavailable { place, .. }) if place == expect)
            );
        }
        // `with_place` overrides the default.
        assert_eq!(
            with_place(Place::Seq, || prog::try_add(&[1.0], &[2.0])),
            Ok(vec![3.0])
        );
    }
}
