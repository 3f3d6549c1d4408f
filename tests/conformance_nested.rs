//! The nested conformance suite: DSL programs over `Nested` and `Matrix` data (per-row
//! primitives, maps inside maps, ragged results, closures capturing outer sequences, nested
//! fns and module functions taking rows, errors raised inside rows), each run on every place
//! at every shape of `common_nested` (no rows, one row, empty rows among others, many short
//! rows, few long rows, one very long row among many short, and 2^20 elements) and compared
//! with plain Rust written independently here.
//!
//! The programs of `sched` are compiled four times, once per schedule (default: inner
//! levels sequential; `inner = "block"` and `"warp"`: inner levels parallel too on the CPU;
//! `inner = "auto"`: chosen at run time from the shape), and every variant must give the
//! oracle's result.
//!
//! Integer results must match exactly; floating-point reductions and scans may differ by
//! reassociation (`common::assert_reduced`, `common::assert_scanned`), row by row.

mod common;
mod common_nested;

use common::*;
use common_nested::*;
use dpl::{Error, Nested, Place};

/// The programs under test, written in the DSL (default schedule).
mod prog {
    use dpl::prelude::*;

    // ---- per-row reductions ----

    #[parallel]
    pub fn row_sums_f32(x: &Nested<f32>) -> Vec<f32> {
        map(|r| sum(r), x)
    }

    #[parallel]
    pub fn row_sums_u64(x: &Nested<u64>) -> Vec<u64> {
        map(|r| sum(r), x)
    }

    #[parallel]
    pub fn row_min_max_guarded(x: &Nested<i32>) -> (Vec<i32>, Vec<i32>) {
        (
            map(|r| if len(r) > 0 { min(r) } else { i32::MAX }, x),
            map(|r| if r.len() == 0 { i32::MIN } else { max(r) }, x),
        )
    }

    #[parallel]
    pub fn row_min_max_f64(x: &Nested<f64>) -> Result<(Vec<f64>, Vec<f64>), Error> {
        (map(|r| min(r), x), map(|r| max(r), x))
    }

    #[parallel]
    pub fn row_any_all(x: &Nested<f64>, t: f64) -> (Vec<bool>, Vec<bool>) {
        (
            map(|r| any(|v| v > t, r), x),
            map(|r| all(|v| v > -t, r), x),
        )
    }

    #[parallel]
    pub fn row_any_all_bool(x: &Nested<bool>) -> (Vec<bool>, Vec<bool>) {
        (map(|r| any(r), x), map(|r| all(r), x))
    }

    #[parallel]
    pub fn row_counts(x: &Nested<u32>, k: u32) -> (Vec<usize>, Vec<usize>) {
        (map(|r| count(|v| v % k == 0, r), x), map(|r| len(r), x))
    }

    #[parallel]
    pub fn row_products(x: &Nested<u64>) -> Vec<u64> {
        map(|r| reduce(|a, b| a * b, r, 1u64), x)
    }

    #[parallel]
    pub fn row_argmax(x: &Nested<f32>) -> (Vec<f32>, Vec<usize>) {
        unzip(map(
            |r| {
                reduce(
                    |p, q| {
                        if q.0 > p.0 || q.0 == p.0 && q.1 < p.1 {
                            q
                        } else {
                            p
                        }
                    },
                    zip(r, indices(r)),
                    (f32::NEG_INFINITY, usize::MAX),
                )
            },
            x,
        ))
    }

    // ---- per-row scans ----

    #[parallel]
    pub fn row_prefix_f64(x: &Nested<f64>) -> Nested<f64> {
        map(|r| scan(|a, b| a + b, r), x)
    }

    #[parallel]
    pub fn row_exclusive_u32(x: &Nested<u32>, init: u32) -> Nested<u32> {
        map(|r| exclusive_scan(|a, b| a + b, r, init), x)
    }

    #[parallel]
    pub fn row_running_max(x: &Nested<f32>) -> Nested<f32> {
        map(|r| scan(|a, b| a.max(b), r), x)
    }

    #[parallel]
    pub fn row_prefix_of_squares(x: &Nested<i64>) -> Nested<i64> {
        map(|r| scan(|a, b| a + b, map(|v| v * v, r)), x)
    }

    // ---- per-row filters (ragged results) ----

    #[parallel]
    pub fn row_filter_of_map(x: &Nested<i64>) -> Nested<i64> {
        map(|r| filter(|v| v % 3 == 0, map(|v| v * 7 + 1, r)), x)
    }

    #[parallel]
    pub fn row_map_of_filter(x: &Nested<f32>) -> Nested<f32> {
        map(|r| map(|v| v * 2.0, filter(|v| v > 0.0, r)), x)
    }

    #[parallel]
    pub fn row_filter_and_sum(x: &Nested<i32>) -> (Nested<i32>, Vec<i32>) {
        let kept = map(|r| filter(|v| v % 2 != 0, r), x);
        (kept, map(|r| sum(filter(|v| v % 2 != 0, r)), x))
    }

    /// Unzip of a per-row (sequence, scalar) pair into a ragged and a flat result.
    #[parallel]
    pub fn row_positives_and_sums(x: &Nested<i32>) -> (Nested<i32>, Vec<i32>) {
        unzip(map(|r| (filter(|v| v > 0, r), sum(r)), x))
    }

    /// `filter` over the rows themselves: whole rows kept or dropped.
    #[parallel]
    pub fn rows_longer_than(x: &Nested<i32>, k: usize) -> Nested<i32> {
        filter(|r| len(r) > k, x)
    }

    /// The rows kept by a `filter` over rows, then a per-row reduction of the survivors.
    #[parallel]
    pub fn sums_of_rows_with_positive_head(x: &Nested<i64>) -> Vec<i64> {
        map(|r| sum(r), filter(|r| len(r) > 0 && r[0] > 0, x))
    }

    #[parallel]
    pub fn row_neighbour_diffs(x: &Nested<i32>) -> Nested<i32> {
        map(
            |r| map(|i| r[i + 1] - r[i], filter(|i| i + 1 < len(r), indices(r))),
            x,
        )
    }

    // ---- maps inside maps, captures ----

    #[parallel]
    pub fn affine_rows(x: &Nested<f32>, a: f32, b: f32) -> Nested<f32> {
        map(|r| map(|v| a * v + b, r), x)
    }

    #[parallel]
    pub fn clamp_rows(x: &Nested<i32>, lo: i32, hi: i32) -> Nested<i32> {
        let clamp = |v| {
            if v < lo {
                lo
            } else if v > hi {
                hi
            } else {
                v
            }
        };
        map(|r| map(clamp, r), x)
    }

    #[parallel]
    pub fn positional_weights(x: &Nested<f64>, w: &[f64]) -> Vec<f64> {
        let n = len(w);
        map(|r| sum(map(|v, i| v * w[i % n], r, indices(r))), x)
    }

    #[parallel]
    pub fn plus_row_index(x: &Nested<i64>) -> Nested<i64> {
        map(|r, i| map(|v| v + i as i64, r), x, indices(x))
    }

    #[parallel]
    pub fn centered_rows(x: &Nested<f64>) -> Nested<f64> {
        map(
            |r| {
                let mean = sum(r) / (len(r) as f64);
                map(|v| v - mean, r)
            },
            x,
        )
    }

    #[parallel]
    pub fn row_reverse(x: &Nested<i32>) -> Nested<i32> {
        map(|r| gather(r, map(|i| len(r) - 1 - i, indices(r))), x)
    }

    #[parallel]
    pub fn replicate_per_row(x: &Nested<u32>) -> Nested<u32> {
        map(|r| replicate(sum(r) % 5, len(r)), x)
    }

    #[parallel]
    pub fn rows_from_counts(counts: &[u32]) -> Nested<u64> {
        map(
            |k| map(|i| (i * i) as u64 + k as u64, range(k as usize)),
            counts,
        )
    }

    #[parallel]
    pub fn ends(x: &Nested<u64>) -> (Vec<u64>, Vec<u64>) {
        (
            map(|r| if len(r) > 0 { r[0] } else { 7 }, x),
            map(|r| if len(r) > 0 { r[len(r) - 1] } else { 9 }, x),
        )
    }

    #[parallel]
    pub fn nested_fn_norms(x: &Nested<f32>) -> Vec<f32> {
        fn norm(r: &[f32]) -> f32 {
            sum(map(|v| v * v, r)).sqrt()
        }
        map(|r| norm(r), x)
    }

    #[parallel]
    pub fn nested_fn_scaled(x: &Nested<i64>, s: i64) -> Nested<i64> {
        fn scale(r: &[i64], s: i64) -> Vec<i64> {
            map(|v| v * s, r)
        }
        map(|r| scale(r, s), x)
    }

    #[parallel]
    pub fn row_stats(x: &Nested<f32>) -> (Vec<f32>, Vec<usize>) {
        (
            map(|r| reduce(|a, b| a.max(b), map(|v| v.abs(), r), 0.0f32), x),
            map(|r| count(|v| v > 0.0, r), x),
        )
    }

    // ---- two nested inputs, outer reductions ----

    #[parallel]
    pub fn row_dots(x: &Nested<f64>, y: &Nested<f64>) -> Result<Vec<f64>, Error> {
        map(|a, b| sum(map(|p, q| p * q, a, b)), x, y)
    }

    #[parallel]
    pub fn row_differences(x: &Nested<i32>, y: &Nested<i32>) -> Result<Nested<i32>, Error> {
        map(|a, b| map(|p, q| p - q, a, b), x, y)
    }

    #[parallel]
    pub fn total(x: &Nested<i64>) -> (i64, usize) {
        (sum(map(|r| sum(r), x)), sum(map(|r| len(r), x)))
    }

    #[parallel]
    pub fn max_row_sum(x: &Nested<i32>) -> Result<i32, Error> {
        max(map(|r| sum(r), x))
    }

    // ---- gathers per row: SpMV ----

    #[parallel]
    pub fn gather_rows(idx: &Nested<u32>, x: &[i64]) -> Nested<i64> {
        map(|r| gather(x, r), idx)
    }

    #[parallel]
    pub fn spmv_tuple_rows(
        vals: &Nested<f32>,
        cols: &Nested<u32>,
        x: &[f32],
    ) -> (Vec<f32>, Vec<usize>) {
        let y = map(|a, c| sum(map(|v, j| v * x[j], a, c)), vals, cols);
        (y, map(|c| len(c), cols))
    }

    // ---- Matrix ----

    #[parallel]
    pub fn mat_row_sums(m: &Matrix<f64>) -> Vec<f64> {
        map(|r| sum(r), m)
    }

    #[parallel]
    pub fn mat_row_scan(m: &Matrix<i32>) -> Nested<i32> {
        map(|r| scan(|a, b| a + b, r), m)
    }

    #[parallel]
    pub fn mat_row_filter(m: &Matrix<f32>) -> Nested<f32> {
        map(|r| filter(|v| v < 0.5, r), m)
    }

    #[parallel]
    pub fn mat_corners(m: &Matrix<u32>) -> (Vec<u32>, Vec<usize>) {
        (
            map(|r| if len(r) > 0 { r[0] + r[len(r) - 1] } else { 0 }, m),
            map(|r| len(r), m),
        )
    }

    #[parallel]
    pub fn mat_minus_nested(m: &Matrix<i64>, n: &Nested<i64>) -> Result<Vec<i64>, Error> {
        map(|a, b| sum(a) - sum(b), m, n)
    }

    #[parallel]
    pub fn ell_spmv(vals: &Matrix<f32>, cols: &Matrix<u32>, x: &[f32]) -> Vec<f32> {
        map(|a, c| sum(map(|v, j| v * x[j], a, c)), vals, cols)
    }

    // ---- three levels, per-row captures, rows as values ----

    #[parallel]
    pub fn pair_sums_per_row(x: &Nested<i64>) -> Vec<i64> {
        map(|r| sum(map(|v| sum(map(|w| v * w, r)), r)), x)
    }

    #[parallel]
    pub fn keep_row_max(x: &Nested<i32>) -> Nested<i32> {
        map(
            |r| {
                let m = if len(r) > 0 { max(r) } else { 0 };
                filter(|v| v == m, r)
            },
            x,
        )
    }

    #[parallel]
    pub fn row_by_index(x: &Nested<i64>, idx: &[usize]) -> Result<(Vec<i64>, Vec<usize>), Error> {
        (map(|i| sum(x[i]), idx), map(|i| len(x[i]), idx))
    }

    #[parallel]
    pub fn pick_rows(x: &Nested<i32>, idx: &[u32]) -> Result<Nested<i32>, Error> {
        gather(x, idx)
    }

    #[parallel]
    pub fn identity(x: &Nested<i32>) -> Nested<i32> {
        x
    }

    #[parallel]
    pub fn offsets_of(x: &Nested<i32>) -> Vec<usize> {
        exclusive_scan(|a, b| a + b, map(|r| len(r), x), 0usize)
    }

    #[parallel]
    pub fn per_row_init(x: &Nested<u32>, starts: &[u32]) -> Nested<u32> {
        map(|r, s| exclusive_scan(|a, b| a + b, r, s), x, starts)
    }

    #[parallel]
    pub fn fn_item_as_function(x: &Nested<i32>) -> Nested<i32> {
        fn positive(r: &[i32]) -> Vec<i32> {
            filter(|v| v > 0, r)
        }
        map(positive, x)
    }

    #[parallel]
    pub fn row_histograms(x: &Nested<u32>) -> Nested<u32> {
        map(
            |r| {
                scatter_reduce(
                    |a, b| a + b,
                    replicate(1u32, len(r)),
                    map(|v| v % 4, r),
                    replicate(0u32, 4),
                )
            },
            x,
        )
    }

    #[parallel]
    pub fn row_permute_scatter(x: &Nested<i32>) -> (Nested<i32>, Nested<i32>) {
        (
            map(|r| permute(r, map(|i| len(r) - 1 - i, indices(r))), x),
            map(
                |r| {
                    scatter(
                        map(|v| v / 2, r),
                        map(|i| i / 2 * 2, indices(r)),
                        replicate(-1, len(r)),
                    )
                },
                x,
            ),
        )
    }

    #[parallel]
    pub fn row_indices_and_signs(x: &Nested<f32>) -> (Nested<usize>, Nested<bool>) {
        (map(|r| indices(r), x), map(|r| map(|v| v > 0.0, r), x))
    }

    #[parallel]
    pub fn zip_rows(x: &Nested<i32>, y: &Nested<i32>) -> (Nested<i32>, Vec<usize>) {
        (
            map(|a, b| map(|p| p.0 * p.1, zip(a, b)), x, y),
            map(|a, b| count(|p| p.0 == p.1, zip(a, b)), x, y),
        )
    }

    #[parallel]
    pub fn cyclic_weights(x: &Nested<f32>, w: &Vec<f32>) -> Vec<f32> {
        map(
            |r| {
                sum(map(
                    |v, u| v * u,
                    r,
                    gather(w, map(|i| i % len(w), indices(r))),
                ))
            },
            x,
        )
    }

    #[parallel]
    pub fn mat_doubled_by_index(m: &Matrix<i32>) -> Nested<i32> {
        map(|r| map(|i| r[i] * 2, indices(r)), m)
    }

    #[parallel]
    pub fn mat_row_and_col0(m: &Matrix<f64>, i: usize) -> Result<(f64, Vec<f64>), Error> {
        (sum(m[i]), map(|r| r[0], m))
    }

    // ---- results of one phase read by the rows of the next ----

    #[parallel]
    pub fn minus_global_mean(x: &Nested<f64>) -> Nested<f64> {
        let mean = sum(map(|r| sum(r), x)) / (sum(map(|r| len(r), x)) as f64);
        map(|r| map(|v| v - mean, r), x)
    }

    #[parallel]
    pub fn scaled_by_row_share(x: &Nested<i64>) -> Nested<i64> {
        let sums = map(|r| sum(r), x);
        let top = reduce(|a, b| a.max(b), sums, 0i64);
        map(|r, s| map(|v| v * s - top, r), x, sums)
    }

    #[parallel]
    pub fn mat_broadcast_dot(m: &Matrix<f32>, x: &[f32]) -> Vec<f32> {
        map(|r| sum(map(|a, b| a * b, r, x)), m)
    }

    /// Rows of 3 or more hold indices that are out of range: they must not be read.
    #[parallel]
    pub fn guarded_gather(idx: &Nested<u32>, x: &[f32]) -> Result<Vec<f32>, Error> {
        map(|r| if len(r) < 3 { sum(gather(x, r)) } else { -1.0 }, idx)
    }

    /// Only the indices below `len(x)` are gathered; the others are filtered out first.
    #[parallel]
    pub fn gather_kept_indices(idx: &Nested<u32>, x: &[f32]) -> Result<Nested<f32>, Error> {
        map(
            |r| filter(|v| v > 0.0, gather(x, filter(|j| (j as usize) < len(x), r))),
            idx,
        )
    }

    // ---- errors inside rows ----

    #[parallel]
    pub fn try_filter_by_lookup(idx: &Nested<u32>, x: &[i32]) -> Result<Nested<u32>, Error> {
        map(|r| filter(|j| x[j] > 0, r), idx)
    }

    #[parallel]
    pub fn try_divide_rows(x: &Nested<i32>) -> Result<(Nested<i32>, Vec<i32>), Error> {
        (map(|r| map(|v| 100 / v, r), x), map(|r| max(r), x))
    }

    #[parallel]
    pub fn try_row_index(x: &Nested<i32>, k: usize) -> Result<Vec<i32>, Error> {
        map(|r| r[k], x)
    }

    #[parallel]
    pub fn try_row_min(x: &Nested<i64>) -> Result<Vec<i64>, Error> {
        map(|r| min(r), x)
    }
}

/// The programs compiled once per schedule (see `common_nested::scheduled!`).
mod sched {
    use crate::common_nested::scheduled;

    scheduled! {
        pub fn spmv(vals: &Nested<f32>, cols: &Nested<u32>, x: &[f32]) -> Vec<f32> {
            let spvv = |ai, ci| sum(map(|aij, xj| aij * xj, ai, gather(x, ci)));
            map(spvv, vals, cols)
        }

        pub fn row_sums_i64(x: &Nested<i64>) -> Vec<i64> {
            map(|r| sum(r), x)
        }

        pub fn row_min_max(x: &Nested<i32>) -> (Vec<i32>, Vec<i32>) {
            (
                map(|r| if len(r) > 0 { min(r) } else { 0 }, x),
                map(|r| if len(r) > 0 { max(r) } else { 0 }, x),
            )
        }

        pub fn count_any(x: &Nested<u32>, k: u32) -> (Vec<usize>, Vec<bool>) {
            (map(|r| count(|v| v % k == 1, r), x), map(|r| any(|v| v == k, r), x))
        }

        pub fn positives(x: &Nested<i32>) -> Nested<i32> {
            map(|r| filter(|v| v > 0, r), x)
        }

        pub fn prefix(x: &Nested<i64>) -> Nested<i64> {
            map(|r| scan(|a, b| a + b, r), x)
        }

        pub fn centered(x: &Nested<f64>) -> Nested<f64> {
            map(|r| {
                let m = sum(r) / (len(r) as f64);
                map(|v| v - m, r)
            }, x)
        }

        pub fn gather_rows(idx: &Nested<u32>, x: &[i64]) -> Nested<i64> {
            map(|r| gather(x, r), idx)
        }

        pub fn mat_vec(m: &Matrix<f32>, x: &[f32]) -> Vec<f32> {
            map(|r| sum(map(|a, b| a * b, r, x)), m)
        }

        pub fn try_gather_rows(idx: &Nested<u32>, x: &[f32]) -> Result<Nested<f32>, Error> {
            map(|r| map(|v| v * 2.0, gather(x, r)), idx)
        }

        pub fn sum_sq(r: &[f32]) -> f32 {
            sum(map(|v| v * v, r))
        }

        pub fn scale(r: &[f32], s: f32) -> Vec<f32> {
            map(|v| v * s, r)
        }

        pub fn row_norms(x: &Nested<f32>) -> Vec<f32> {
            map(|r| sum_sq(r).sqrt(), x)
        }

        pub fn unit_rows(x: &Nested<f32>) -> Nested<f32> {
            map(|r| scale(r, 1.0 / sum_sq(r).sqrt()), x)
        }
    }
}

// ===================================================================== oracles =====

/// The rows as slices.
fn slices<T>(rows: &[Vec<T>]) -> impl Iterator<Item = &[T]> {
    rows.iter().map(Vec::as_slice)
}

/// `f` applied to every row.
fn per_row<T, R>(rows: &[Vec<T>], f: impl FnMut(&[T]) -> R) -> Vec<R> {
    slices(rows).map(f).collect()
}

/// Asserts that every row's float sum is within reassociation of the oracle.
#[track_caller]
fn assert_row_sums<T: Float>(got: &[T], terms: &[Vec<T>], what: &str) {
    assert_eq!(got.len(), terms.len(), "{what}: number of rows");
    for (i, (g, r)) in got.iter().zip(terms).enumerate() {
        let (s, m) = f64_sum(r.iter().copied());
        assert_reduced(*g, s, m, r.len(), &format!("{what}: row {i}"));
    }
}

/// Asserts that a ragged float result is, row by row, the inclusive `+` scan of `terms`.
#[track_caller]
fn assert_row_scans<T: Float>(got: &Nested<T>, terms: &[Vec<T>], what: &str) {
    assert_eq!(got.len(), terms.len(), "{what}: number of rows");
    for (i, r) in terms.iter().enumerate() {
        let (s, m) = f64_prefix_sums(r);
        assert_scanned(got.row(i), &s, &m, &format!("{what}: row {i}"));
    }
}

fn wrapping_sum_i64(r: &[i64]) -> i64 {
    r.iter().fold(0i64, |a, &b| a.wrapping_add(b))
}

fn wrapping_sum_i32(r: &[i32]) -> i32 {
    r.iter().fold(0i32, |a, &b| a.wrapping_add(b))
}

/// `n` dense `f32` values in `[-1, 1)`, a vector to multiply by.
fn dense(n: usize, rng: &mut Rng) -> Vec<f32> {
    rng.f32s(n, -1.0, 1.0)
}

/// A CSR matrix with the given row lengths over `ncols` columns: `(vals, cols)` rows.
fn csr(lens: &[usize], ncols: usize, rng: &mut Rng) -> (Vec<Vec<f32>>, Vec<Vec<u32>>) {
    let vals = rows_of(lens, rng, |r| r.f32_in(-2.0, 2.0));
    let cols = rows_of(lens, rng, |r| r.below(ncols) as u32);
    (vals, cols)
}

fn spmv_oracle(vals: &[Vec<f32>], cols: &[Vec<u32>], x: &[f32]) -> Vec<Vec<f32>> {
    vals.iter()
        .zip(cols)
        .map(|(a, c)| a.iter().zip(c).map(|(v, &j)| v * x[j as usize]).collect())
        .collect()
}

// ===================================================================== checks =====

fn row_sums_f32(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, |r| r.f32_in(-1e3, 1e3));
        assert_row_sums(&prog::row_sums_f32(&x), &rows, "row_sums_f32");
    });
}

fn row_sums_u64(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::u64);
        let want = per_row(&rows, |r| r.iter().fold(0u64, |a, &b| a.wrapping_add(b)));
        assert_same(&prog::row_sums_u64(&x), &want, "row_sums_u64");
    });
}

fn row_min_max_guarded(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i32);
        let lo = per_row(&rows, |r| r.iter().copied().min().unwrap_or(i32::MAX));
        let hi = per_row(&rows, |r| r.iter().copied().max().unwrap_or(i32::MIN));
        let (glo, ghi) = prog::row_min_max_guarded(&x);
        assert_same(&glo, &lo, "min");
        assert_same(&ghi, &hi, "max");
    });
}

fn row_min_max_f64(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, |r| r.f64_in(-1e9, 1e9));
        let got = prog::row_min_max_f64(&x);
        if let Some(i) = lens.iter().position(|&n| n == 0) {
            // An empty row has no minimum: the error names `min` (which of several empty
            // rows is reported is unspecified).
            match got {
                Err(Error::Empty { prim: "min", .. }) => {}
                other => panic!("row {i} is empty: want Err(Empty(min)), got {other:?}"),
            }
        } else {
            let lo = per_row(&rows, |r| r.iter().copied().fold(f64::INFINITY, f64::min));
            let hi = per_row(&rows, |r| {
                r.iter().copied().fold(f64::NEG_INFINITY, f64::max)
            });
            let (glo, ghi) = got.expect("no empty row");
            assert_same(&glo, &lo, "min");
            assert_same(&ghi, &hi, "max");
        }
    });
}

fn row_any_all(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, |r| r.f64_in(-1.0, 1.0));
        for t in [0.5, 0.999, 2.0] {
            let any = per_row(&rows, |r| r.iter().any(|&v| v > t));
            let all = per_row(&rows, |r| r.iter().all(|&v| v > -t));
            let (gany, gall) = prog::row_any_all(&x, t);
            assert_same(&gany, &any, &format!("any, t = {t}"));
            assert_same(&gall, &all, &format!("all, t = {t}"));
        }
    });
}

fn row_any_all_bool(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        // Mostly true, so that both `all` outcomes occur in short rows.
        let (x, rows) = nested_of(lens, rng, |r| r.below(6) != 0);
        let (gany, gall) = prog::row_any_all_bool(&x);
        assert_same(&gany, &per_row(&rows, |r| r.iter().any(|&b| b)), "any");
        assert_same(&gall, &per_row(&rows, |r| r.iter().all(|&b| b)), "all");
    });
}

fn row_counts(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::u32);
        for k in [1, 3, 1000] {
            let (gc, gl) = prog::row_counts(&x, k);
            assert_same(
                &gc,
                &per_row(&rows, |r| r.iter().filter(|&&v| v % k == 0).count()),
                "count",
            );
            assert_same(&gl, lens, "len");
        }
    });
}

fn row_products(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, |r| r.u64() | 1);
        let want = per_row(&rows, |r| r.iter().fold(1u64, |a, &b| a.wrapping_mul(b)));
        assert_same(&prog::row_products(&x), &want, "row_products");
    });
}

fn row_argmax(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        // Few distinct values, so ties are common and the smallest index must win.
        let (x, rows) = nested_of(lens, rng, |r| r.below(50) as f32 - 25.0);
        let want: Vec<(f32, usize)> = per_row(&rows, |r| {
            r.iter()
                .enumerate()
                .fold((f32::NEG_INFINITY, usize::MAX), |best, (i, &v)| {
                    if v > best.0 { (v, i) } else { best }
                })
        });
        let (gv, gi) = prog::row_argmax(&x);
        assert_same(
            &gv,
            &want.iter().map(|p| p.0).collect::<Vec<_>>(),
            "max value",
        );
        assert_same(&gi, &want.iter().map(|p| p.1).collect::<Vec<_>>(), "argmax");
    });
}

fn row_prefix_f64(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, |r| r.f64_in(-1e3, 1e3));
        assert_row_scans(&prog::row_prefix_f64(&x), &rows, "row_prefix_f64");
    });
}

fn row_exclusive_u32(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::u32);
        let init: u32 = 0xdead_beef;
        let want: Vec<Vec<u32>> = per_row(&rows, |r| {
            let mut s = init;
            r.iter()
                .map(|&v| {
                    let before = s;
                    s = s.wrapping_add(v);
                    before
                })
                .collect()
        });
        assert_rows(
            &prog::row_exclusive_u32(&x, init),
            &want,
            "row_exclusive_u32",
        );
    });
}

fn row_running_max(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, |r| r.f32_in(-1e6, 1e6));
        let want: Vec<Vec<f32>> = per_row(&rows, |r| {
            let mut m = f32::NEG_INFINITY;
            r.iter()
                .map(|&v| {
                    m = m.max(v);
                    m
                })
                .collect()
        });
        assert_rows(&prog::row_running_max(&x), &want, "row_running_max");
    });
}

fn row_prefix_of_squares(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i64);
        let want: Vec<Vec<i64>> = per_row(&rows, |r| {
            let mut s = 0i64;
            r.iter()
                .map(|&v| {
                    s = s.wrapping_add(v.wrapping_mul(v));
                    s
                })
                .collect()
        });
        assert_rows(
            &prog::row_prefix_of_squares(&x),
            &want,
            "row_prefix_of_squares",
        );
    });
}

fn row_filter_of_map(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i64);
        let want: Vec<Vec<i64>> = per_row(&rows, |r| {
            r.iter()
                .map(|v| v.wrapping_mul(7).wrapping_add(1))
                .filter(|v| v % 3 == 0)
                .collect()
        });
        assert_rows(&prog::row_filter_of_map(&x), &want, "row_filter_of_map");
    });
}

fn row_map_of_filter(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, |r| r.f32_in(-1.0, 1.0));
        let want: Vec<Vec<f32>> = per_row(&rows, |r| {
            r.iter().filter(|&&v| v > 0.0).map(|v| v * 2.0).collect()
        });
        assert_rows(&prog::row_map_of_filter(&x), &want, "row_map_of_filter");
    });
}

fn row_filter_and_sum(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i32);
        let kept: Vec<Vec<i32>> = per_row(&rows, |r| {
            r.iter().copied().filter(|v| v % 2 != 0).collect()
        });
        let (gk, gs) = prog::row_filter_and_sum(&x);
        assert_rows(&gk, &kept, "kept");
        assert_same(&gs, &per_row(&kept, wrapping_sum_i32), "sum of kept");
    });
}

fn row_positives_and_sums(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i32);
        let kept: Vec<Vec<i32>> =
            per_row(&rows, |r| r.iter().copied().filter(|&v| v > 0).collect());
        let (gk, gs) = prog::row_positives_and_sums(&x);
        assert_rows(&gk, &kept, "positives");
        assert_same(&gs, &per_row(&rows, wrapping_sum_i32), "row sums");
    });
}

fn rows_longer_than(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i32);
        for k in [0, 1, 3] {
            let want: Vec<Vec<i32>> = rows.iter().filter(|r| r.len() > k).cloned().collect();
            assert_rows(
                &prog::rows_longer_than(&x, k),
                &want,
                &format!("rows longer than {k}"),
            );
        }
    });
}

fn sums_of_rows_with_positive_head(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, |r| r.i32() as i64);
        let want: Vec<i64> = rows
            .iter()
            .filter(|r| r.first().is_some_and(|&v| v > 0))
            .map(|r| r.iter().fold(0i64, |a, &b| a.wrapping_add(b)))
            .collect();
        assert_same(
            &prog::sums_of_rows_with_positive_head(&x),
            &want,
            "sums of rows with a positive head",
        );
    });
}

fn row_neighbour_diffs(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i32);
        let want: Vec<Vec<i32>> = per_row(&rows, |r| {
            r.windows(2).map(|w| w[1].wrapping_sub(w[0])).collect()
        });
        assert_rows(&prog::row_neighbour_diffs(&x), &want, "row_neighbour_diffs");
    });
}

fn affine_rows(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, |r| r.f32_in(-1e3, 1e3));
        let (a, b) = (1.5f32, -0.25f32);
        let want: Vec<Vec<f32>> = per_row(&rows, |r| r.iter().map(|v| a * v + b).collect());
        assert_rows(&prog::affine_rows(&x, a, b), &want, "affine_rows");
    });
}

fn clamp_rows(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, |r| r.int_in(-100..=100) as i32);
        let want: Vec<Vec<i32>> = per_row(&rows, |r| r.iter().map(|&v| v.clamp(-20, 30)).collect());
        assert_rows(&prog::clamp_rows(&x, -20, 30), &want, "clamp_rows");
    });
}

fn positional_weights(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, |r| r.f64_in(-1.0, 1.0));
        let w = rng.f64s(97, 0.0, 2.0);
        let terms: Vec<Vec<f64>> = per_row(&rows, |r| {
            r.iter().enumerate().map(|(i, v)| v * w[i % 97]).collect()
        });
        assert_row_sums(
            &prog::positional_weights(&x, &w),
            &terms,
            "positional_weights",
        );
    });
}

fn plus_row_index(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i64);
        let want: Vec<Vec<i64>> = rows
            .iter()
            .enumerate()
            .map(|(i, r)| r.iter().map(|v| v.wrapping_add(i as i64)).collect())
            .collect();
        assert_rows(&prog::plus_row_index(&x), &want, "plus_row_index");
    });
}

/// The oracle of `centered_rows`: each row minus its mean (the mean in `f64`, summed in
/// order; the program's sum may be reassociated, so the comparison allows for that).
fn check_centered(got: &Nested<f64>, rows: &[Vec<f64>], what: &str) {
    assert_eq!(got.len(), rows.len(), "{what}: number of rows");
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(got.row_len(i), r.len(), "{what}: length of row {i}");
        let (s, m) = f64_sum(r.iter().copied());
        let mean = s / r.len() as f64;
        // An error e in the sum shifts every element by e / len.
        let allowed = reassociation_tolerance::<f64>(r.len()) * m / r.len() as f64;
        for (k, (&g, &v)) in got.row(i).iter().zip(r).enumerate() {
            let w = v - mean;
            assert!(
                (g - w).abs() <= allowed + 4.0 * f64::EPSILON * v.abs().max(mean.abs()),
                "{what}: row {i}[{k}]: got {g}, want {w}"
            );
        }
    }
}

fn centered_rows(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, |r| r.f64_in(0.0, 100.0));
        check_centered(&prog::centered_rows(&x), &rows, "centered_rows");
    });
}

fn row_reverse(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i32);
        let want: Vec<Vec<i32>> = per_row(&rows, |r| r.iter().rev().copied().collect());
        assert_rows(&prog::row_reverse(&x), &want, "row_reverse");
    });
}

fn replicate_per_row(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, |r| r.below(1000) as u32);
        let want: Vec<Vec<u32>> = per_row(&rows, |r| vec![r.iter().sum::<u32>() % 5; r.len()]);
        assert_rows(&prog::replicate_per_row(&x), &want, "replicate_per_row");
    });
}

fn rows_from_counts(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, _| {
        // The row lengths of the shape become the counts: the result has that shape.
        let counts: Vec<u32> = lens.iter().map(|&n| n as u32).collect();
        let want: Vec<Vec<u64>> = counts
            .iter()
            .map(|&k| (0..k as u64).map(|i| i * i + k as u64).collect())
            .collect();
        assert_rows(&prog::rows_from_counts(&counts), &want, "rows_from_counts");
    });
}

fn ends(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::u64);
        let (gf, gl) = prog::ends(&x);
        assert_same(
            &gf,
            &per_row(&rows, |r| r.first().copied().unwrap_or(7)),
            "first",
        );
        assert_same(
            &gl,
            &per_row(&rows, |r| r.last().copied().unwrap_or(9)),
            "last",
        );
    });
}

fn nested_fn_norms(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, |r| r.f32_in(-10.0, 10.0));
        let got = prog::nested_fn_norms(&x);
        let squares: Vec<Vec<f32>> = per_row(&rows, |r| r.iter().map(|v| v * v).collect());
        let sq: Vec<f32> = got.iter().map(|g| g * g).collect();
        // norm^2 within reassociation of the sum of squares, plus the sqrt's rounding.
        assert_eq!(got.len(), rows.len());
        for (i, (g, r)) in sq.iter().zip(&squares).enumerate() {
            let (s, m) = f64_sum(r.iter().copied());
            let allowed =
                reassociation_tolerance::<f32>(r.len()) * m + 4.0 * f32::EPSILON as f64 * s;
            assert!(
                (*g as f64 - s).abs() <= allowed + f64::MIN_POSITIVE,
                "row {i}: norm^2 {g} vs {s}"
            );
        }
    });
}

fn nested_fn_scaled(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i64);
        let want: Vec<Vec<i64>> =
            per_row(&rows, |r| r.iter().map(|v| v.wrapping_mul(-3)).collect());
        assert_rows(&prog::nested_fn_scaled(&x, -3), &want, "nested_fn_scaled");
    });
}

fn row_stats(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, |r| r.f32_in(-5.0, 5.0));
        let (gm, gc) = prog::row_stats(&x);
        assert_same(
            &gm,
            &per_row(&rows, |r| r.iter().fold(0.0f32, |a, v| a.max(v.abs()))),
            "max abs",
        );
        assert_same(
            &gc,
            &per_row(&rows, |r| r.iter().filter(|&&v| v > 0.0).count()),
            "positives",
        );
    });
}

fn row_dots(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, xr) = nested_of(lens, rng, |r| r.f64_in(-1.0, 1.0));
        let (y, yr) = nested_of(lens, rng, |r| r.f64_in(-1.0, 1.0));
        let terms: Vec<Vec<f64>> = xr
            .iter()
            .zip(&yr)
            .map(|(a, b)| a.iter().zip(b).map(|(p, q)| p * q).collect())
            .collect();
        assert_row_sums(
            &prog::row_dots(&x, &y).expect("same shapes"),
            &terms,
            "row_dots",
        );
        // A row of another length is a length mismatch of the inner map.
        if let Some(i) = lens.iter().position(|&n| n > 0) {
            let mut short = yr.clone();
            short[i].pop();
            match prog::row_dots(&x, &Nested::from(short)) {
                Err(Error::LengthMismatch { prim: "map", .. }) => {}
                other => {
                    panic!("row {i} one shorter: want Err(LengthMismatch(map)), got {other:?}")
                }
            }
        }
        // A different number of rows is a length mismatch of the outer map.
        let more: Vec<Vec<f64>> = yr.iter().cloned().chain([vec![1.0]]).collect();
        match prog::row_dots(&x, &Nested::from(more)) {
            Err(Error::LengthMismatch {
                prim: "map",
                left,
                right,
                ..
            }) => {
                assert_eq!(
                    (left.min(right), left.max(right)),
                    (lens.len(), lens.len() + 1)
                );
            }
            other => panic!("one row more: want Err(LengthMismatch(map)), got {other:?}"),
        }
    });
}

fn row_differences(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, xr) = nested_of(lens, rng, Rng::i32);
        let (y, yr) = nested_of(lens, rng, Rng::i32);
        let want: Vec<Vec<i32>> = xr
            .iter()
            .zip(&yr)
            .map(|(a, b)| a.iter().zip(b).map(|(p, q)| p.wrapping_sub(*q)).collect())
            .collect();
        assert_rows(
            &prog::row_differences(&x, &y).expect("same shapes"),
            &want,
            "row_differences",
        );
        if let Some(i) = lens.iter().rposition(|&n| n > 0) {
            let mut short = yr.clone();
            short[i].pop();
            assert!(
                matches!(
                    prog::row_differences(&x, &Nested::from(short)),
                    Err(Error::LengthMismatch { prim: "map", .. })
                ),
                "row {i} one shorter"
            );
        }
    });
}

fn total(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i64);
        let want = rows.iter().flatten().fold(0i64, |a, &b| a.wrapping_add(b));
        assert_eq!(prog::total(&x), (want, lens.iter().sum::<usize>()), "total");
    });
}

fn max_row_sum(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i32);
        let want = slices(&rows).map(wrapping_sum_i32).max();
        match (prog::max_row_sum(&x), want) {
            (Ok(g), Some(w)) => assert_eq!(g, w, "max_row_sum"),
            (Err(Error::Empty { prim: "max", .. }), None) => {}
            (got, want) => panic!("max_row_sum: got {got:?}, want {want:?}"),
        }
    });
}

fn gather_rows(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let x = rng.i64s(5_000);
        let (idx, ir) = nested_of(lens, rng, |r| r.below(5_000) as u32);
        let want: Vec<Vec<i64>> = per_row(&ir, |r| r.iter().map(|&j| x[j as usize]).collect());
        assert_rows(&prog::gather_rows(&idx, &x), &want, "gather_rows");
    });
}

fn spmv_tuple_rows(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let ncols = 1 + lens.len();
        let x = dense(ncols, rng);
        let (vals, cols) = csr(lens, ncols, rng);
        let terms = spmv_oracle(&vals, &cols, &x);
        let (y, nnz) = prog::spmv_tuple_rows(&Nested::from(vals), &Nested::from(cols), &x);
        assert_row_sums(&y, &terms, "y");
        assert_same(&nnz, lens, "nnz per row");
    });
}

fn mat_row_sums(place: Place) {
    each_matrix(place, |layout, rows, cols, rng| {
        let data = rows_of(&vec![cols; rows], rng, |r| r.f64_in(-1.0, 1.0));
        let m = matrix(layout, &data, cols, f64::NAN);
        assert_row_sums(&prog::mat_row_sums(&m), &data, "mat_row_sums");
    });
}

fn mat_row_scan(place: Place) {
    each_matrix(place, |layout, rows, cols, rng| {
        let data = rows_of(&vec![cols; rows], rng, Rng::i32);
        let m = matrix(layout, &data, cols, i32::MIN);
        let want: Vec<Vec<i32>> = per_row(&data, |r| {
            let mut s = 0i32;
            r.iter()
                .map(|&v| {
                    s = s.wrapping_add(v);
                    s
                })
                .collect()
        });
        assert_rows(&prog::mat_row_scan(&m), &want, "mat_row_scan");
    });
}

fn mat_row_filter(place: Place) {
    each_matrix(place, |layout, rows, cols, rng| {
        let data = rows_of(&vec![cols; rows], rng, |r| r.f32_in(0.0, 1.0));
        // The padding would pass the filter: reading it would show.
        let m = matrix(layout, &data, cols, -1.0);
        let want: Vec<Vec<f32>> =
            per_row(&data, |r| r.iter().copied().filter(|&v| v < 0.5).collect());
        assert_rows(&prog::mat_row_filter(&m), &want, "mat_row_filter");
    });
}

fn mat_corners(place: Place) {
    each_matrix(place, |layout, rows, cols, rng| {
        let data = rows_of(&vec![cols; rows], rng, Rng::u32);
        let m = matrix(layout, &data, cols, 0);
        let (gc, gl) = prog::mat_corners(&m);
        let want = per_row(&data, |r| match (r.first(), r.last()) {
            (Some(a), Some(b)) => a.wrapping_add(*b),
            _ => 0,
        });
        assert_same(&gc, &want, "first + last");
        assert_same(&gl, &vec![cols; rows], "len");
    });
}

fn mat_minus_nested(place: Place) {
    each_matrix(place, |layout, rows, cols, rng| {
        let data = rows_of(&vec![cols; rows], rng, Rng::i64);
        let m = matrix(layout, &data, cols, 0);
        // A ragged input with as many rows as the matrix.
        let lens: Vec<usize> = (0..rows).map(|_| rng.below(6)).collect();
        let (n, nr) = nested_of(&lens, rng, Rng::i64);
        let want: Vec<i64> = data
            .iter()
            .zip(&nr)
            .map(|(a, b)| wrapping_sum_i64(a).wrapping_sub(wrapping_sum_i64(b)))
            .collect();
        assert_same(
            &prog::mat_minus_nested(&m, &n).expect("same rows"),
            &want,
            "mat_minus_nested",
        );
        let one_more = Nested::from(nr.iter().cloned().chain([vec![1]]).collect::<Vec<_>>());
        assert!(
            matches!(
                prog::mat_minus_nested(&m, &one_more),
                Err(Error::LengthMismatch { prim: "map", .. })
            ),
            "one row more"
        );
    });
}

fn ell_spmv(place: Place) {
    each_matrix(place, |layout, rows, width, rng| {
        let ncols = rows + 1;
        let x = dense(ncols, rng);
        let vals = rows_of(&vec![width; rows], rng, |r| r.f32_in(-2.0, 2.0));
        let cols = rows_of(&vec![width; rows], rng, |r| r.below(ncols) as u32);
        let terms = spmv_oracle(&vals, &cols, &x);
        let got = prog::ell_spmv(
            &matrix(layout, &vals, width, f32::NAN),
            &matrix(layout, &cols, width, u32::MAX),
            &x,
        );
        assert_row_sums(&got, &terms, "ell_spmv");
    });
}

fn try_row_index(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i32);
        for k in [0usize, 3] {
            let short = lens.iter().position(|&n| n <= k);
            match (prog::try_row_index(&x, k), short) {
                (Ok(got), None) => assert_same(&got, &per_row(&rows, |r| r[k]), "r[k]"),
                (
                    Err(Error::IndexOutOfRange {
                        prim: "index",
                        index,
                        len,
                        ..
                    }),
                    Some(_),
                ) => {
                    assert_eq!(index, k as i128, "the index reported");
                    assert!(len <= k, "the reported row has {len} elements, index {k}");
                }
                (got, short) => panic!("k = {k}, first short row {short:?}: got {got:?}"),
            }
        }
    });
}

fn try_row_min(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i64);
        match prog::try_row_min(&x) {
            Ok(got) => {
                assert!(lens.iter().all(|&n| n > 0), "Ok despite an empty row");
                assert_same(&got, &per_row(&rows, |r| *r.iter().min().unwrap()), "min");
            }
            Err(Error::Empty { prim: "min", .. }) => {
                assert!(lens.contains(&0), "Empty without an empty row")
            }
            Err(e) => panic!("{e}"),
        }
    });
}

/// Shapes whose rows are short enough for programs quadratic in the row length.
const SHORT_ROW_SHAPES: [Shape; 4] = [
    Shape::NoRows,
    Shape::OneRow,
    Shape::EmptyAmong,
    Shape::ManyShort,
];

fn pair_sums_per_row(place: Place) {
    each_shape(place, &SHORT_ROW_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i64);
        let want = per_row(&rows, |r| {
            r.iter().fold(0i64, |a, &v| {
                a.wrapping_add(
                    r.iter()
                        .fold(0i64, |b, &w| b.wrapping_add(v.wrapping_mul(w))),
                )
            })
        });
        assert_same(&prog::pair_sums_per_row(&x), &want, "pair_sums_per_row");
    });
}

fn keep_row_max(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        // Few distinct values, so the maximum occurs several times in long rows.
        let (x, rows) = nested_of(lens, rng, |r| r.below(40) as i32 - 20);
        let want: Vec<Vec<i32>> = per_row(&rows, |r| {
            let m = r.iter().copied().max().unwrap_or(0);
            r.iter().copied().filter(|&v| v == m).collect()
        });
        assert_rows(&prog::keep_row_max(&x), &want, "keep_row_max");
    });
}

fn row_by_index(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i64);
        let idx = if lens.is_empty() {
            vec![]
        } else {
            rng.indices(2 * lens.len() + 1, lens.len())
        };
        let (gs, gl) = prog::row_by_index(&x, &idx).expect("rows in range");
        let want_s: Vec<i64> = idx.iter().map(|&i| wrapping_sum_i64(&rows[i])).collect();
        let want_l: Vec<usize> = idx.iter().map(|&i| lens[i]).collect();
        assert_same(&gs, &want_s, "sum(x[i])");
        assert_same(&gl, &want_l, "len(x[i])");
        match prog::row_by_index(&x, &[lens.len()]) {
            Err(Error::IndexOutOfRange {
                prim: "index",
                index,
                len,
                ..
            }) => {
                assert_eq!((index, len), (lens.len() as i128, lens.len()))
            }
            other => panic!("x[len(x)]: want Err(IndexOutOfRange(index)), got {other:?}"),
        }
    });
}

fn pick_rows(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i32);
        let idx: Vec<u32> = if lens.is_empty() {
            vec![]
        } else {
            cast_indices(&rng.indices(lens.len() / 2 + 3, lens.len()))
        };
        let want: Vec<Vec<i32>> = idx.iter().map(|&i| rows[i as usize].clone()).collect();
        assert_rows(
            &prog::pick_rows(&x, &idx).expect("rows in range"),
            &want,
            "pick_rows",
        );
        match prog::pick_rows(&x, &[0, lens.len() as u32]) {
            Err(Error::IndexOutOfRange { prim: "gather", .. }) => {}
            other => panic!("row len(x): want Err(IndexOutOfRange(gather)), got {other:?}"),
        }
    });
}

fn identity(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i32);
        assert_rows(&prog::identity(&x), &rows, "identity");
    });
}

fn offsets_of(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, _) = nested_of(lens, rng, Rng::i32);
        assert_same(
            &prog::offsets_of(&x),
            &x.offsets()[..lens.len()],
            "offsets_of",
        );
    });
}

fn per_row_init(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::u32);
        let starts = rng.u32s(lens.len());
        let want: Vec<Vec<u32>> = rows
            .iter()
            .zip(&starts)
            .map(|(r, &init)| {
                let mut s = init;
                r.iter()
                    .map(|&v| {
                        let before = s;
                        s = s.wrapping_add(v);
                        before
                    })
                    .collect()
            })
            .collect();
        assert_rows(&prog::per_row_init(&x, &starts), &want, "per_row_init");
    });
}

fn fn_item_as_function(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i32);
        let want: Vec<Vec<i32>> =
            per_row(&rows, |r| r.iter().copied().filter(|&v| v > 0).collect());
        assert_rows(&prog::fn_item_as_function(&x), &want, "fn_item_as_function");
    });
}

fn row_histograms(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::u32);
        let want: Vec<Vec<u32>> = per_row(&rows, |r| {
            let mut h = vec![0u32; 4];
            for &v in r {
                h[(v % 4) as usize] += 1;
            }
            h
        });
        assert_rows(&prog::row_histograms(&x), &want, "row_histograms");
    });
}

fn row_permute_scatter(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i32);
        let reversed: Vec<Vec<i32>> = per_row(&rows, |r| r.iter().rev().copied().collect());
        // Element i goes to i rounded down to even: the odd targets keep -1; each even
        // target receives two writes (i and i + 1) and either may win.
        let (gp, gs) = prog::row_permute_scatter(&x);
        assert_rows(&gp, &reversed, "permute");
        assert_eq!(gs.len(), rows.len(), "scatter: rows");
        for (i, r) in rows.iter().enumerate() {
            let g = gs.row(i);
            assert_eq!(g.len(), r.len(), "scatter: length of row {i}");
            for (k, &v) in g.iter().enumerate() {
                let ok = if k % 2 == 1 {
                    v == -1
                } else {
                    v == r[k] / 2 || r.get(k + 1).is_some_and(|&w| v == w / 2)
                };
                assert!(ok, "scatter: row {i}[{k}] = {v}");
            }
        }
    });
}

fn row_indices_and_signs(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, |r| r.f32_in(-1.0, 1.0));
        let (gi, gs) = prog::row_indices_and_signs(&x);
        assert_rows(&gi, &per_row(&rows, |r| (0..r.len()).collect()), "indices");
        assert_rows(
            &gs,
            &per_row(&rows, |r| r.iter().map(|&v| v > 0.0).collect()),
            "signs",
        );
    });
}

fn zip_rows(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, xr) = nested_of(lens, rng, |r| r.int_in(-3..=3) as i32);
        let (y, yr) = nested_of(lens, rng, |r| r.int_in(-3..=3) as i32);
        let prods: Vec<Vec<i32>> = xr
            .iter()
            .zip(&yr)
            .map(|(a, b)| a.iter().zip(b).map(|(p, q)| p * q).collect())
            .collect();
        let equal: Vec<usize> = xr
            .iter()
            .zip(&yr)
            .map(|(a, b)| a.iter().zip(b).filter(|(p, q)| p == q).count())
            .collect();
        let (gp, ge) = prog::zip_rows(&x, &y);
        assert_rows(&gp, &prods, "products");
        assert_same(&ge, &equal, "equal pairs");
    });
}

fn cyclic_weights(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, |r| r.f32_in(-1.0, 1.0));
        let w = rng.f32s(13, -2.0, 2.0);
        let terms: Vec<Vec<f32>> = per_row(&rows, |r| {
            r.iter().enumerate().map(|(i, v)| v * w[i % 13]).collect()
        });
        assert_row_sums(&prog::cyclic_weights(&x, &w), &terms, "cyclic_weights");
    });
}

fn mat_doubled_by_index(place: Place) {
    each_matrix(place, |layout, rows, cols, rng| {
        let data = rows_of(&vec![cols; rows], rng, Rng::i32);
        let m = matrix(layout, &data, cols, 0);
        let want: Vec<Vec<i32>> = per_row(&data, |r| r.iter().map(|v| v.wrapping_mul(2)).collect());
        assert_rows(
            &prog::mat_doubled_by_index(&m),
            &want,
            "mat_doubled_by_index",
        );
    });
}

fn mat_row_and_col0(place: Place) {
    each_matrix(place, |layout, rows, cols, rng| {
        let data = rows_of(&vec![cols; rows], rng, |r| r.f64_in(-1.0, 1.0));
        let m = matrix(layout, &data, cols, f64::NAN);
        let got = prog::mat_row_and_col0(&m, rows / 2);
        if rows == 0 {
            assert!(
                matches!(
                    got,
                    Err(Error::IndexOutOfRange {
                        prim: "index",
                        index: 0,
                        len: 0,
                        ..
                    })
                ),
                "m[0] of an empty matrix: {got:?}"
            );
        } else if cols == 0 {
            assert!(
                matches!(
                    got,
                    Err(Error::IndexOutOfRange {
                        prim: "index",
                        index: 0,
                        len: 0,
                        ..
                    })
                ),
                "r[0] of an empty row: {got:?}"
            );
        } else {
            let (s, col0) = got.expect("in range");
            let (w, mag) = f64_sum(data[rows / 2].iter().copied());
            assert_reduced(s, w, mag, cols, "sum(m[i])");
            assert_same(&col0, &per_row(&data, |r| r[0]), "r[0]");
        }
    });
}

fn try_filter_by_lookup(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let x = rng.i32s(777);
        let (idx, ir) = nested_of(lens, rng, |r| r.below(777) as u32);
        let want: Vec<Vec<u32>> = per_row(&ir, |r| {
            r.iter().copied().filter(|&j| x[j as usize] > 0).collect()
        });
        assert_rows(
            &prog::try_filter_by_lookup(&idx, &x).expect("in range"),
            &want,
            "filter",
        );
        if let Some(i) = lens.iter().rposition(|&n| n > 0) {
            let mut bad = ir.clone();
            bad[i][0] = 777;
            match prog::try_filter_by_lookup(&Nested::from(bad), &x) {
                Err(Error::IndexOutOfRange {
                    prim: "index",
                    index: 777,
                    len: 777,
                    ..
                }) => {}
                other => panic!("row {i}: want Err(IndexOutOfRange(index)), got {other:?}"),
            }
        }
    });
}

fn try_divide_rows(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, |r| {
            let v = r.int_in(-1000..=1000) as i32;
            if v == 0 { 1 } else { v }
        });
        let got = prog::try_divide_rows(&x);
        if lens.contains(&0) {
            assert!(
                matches!(got, Err(Error::Empty { prim: "max", .. })),
                "empty row: {got:?}"
            );
        } else {
            let (q, m) = got.expect("no zero, no empty row");
            assert_rows(
                &q,
                &per_row(&rows, |r| r.iter().map(|v| 100 / v).collect()),
                "100 / v",
            );
            assert_same(&m, &per_row(&rows, |r| *r.iter().max().unwrap()), "max");
        }
        if let Some(i) = lens.iter().position(|&n| n > 1) {
            let mut zero = rows.clone();
            zero[i][1] = 0;
            let got = prog::try_divide_rows(&Nested::from(zero));
            // Both a division by zero and (if a row is empty) an empty max are errors of
            // this call; which one is reported is unspecified.
            match got {
                Err(Error::DivideByZero { .. }) => {}
                Err(Error::Empty { prim: "max", .. }) if lens.contains(&0) => {}
                other => panic!("a zero in row {i}: want Err(DivideByZero), got {other:?}"),
            }
        }
    });
}

fn minus_global_mean(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, |r| r.f64_in(0.0, 10.0));
        let got = prog::minus_global_mean(&x);
        let (s, m) = f64_sum(rows.iter().flatten().copied());
        let n = lens.iter().sum::<usize>();
        let mean = s / n as f64;
        // An error e in the total shifts every element by e / n.
        let allowed = reassociation_tolerance::<f64>(n) * m / n as f64 + 1e-13;
        assert_eq!(got.len(), rows.len(), "rows");
        for (i, r) in rows.iter().enumerate() {
            assert_eq!(got.row_len(i), r.len(), "length of row {i}");
            for (k, (&g, &v)) in got.row(i).iter().zip(r).enumerate() {
                assert!(
                    (g - (v - mean)).abs() <= allowed,
                    "row {i}[{k}]: {g} vs {}",
                    v - mean
                );
            }
        }
    });
}

fn scaled_by_row_share(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, |r| r.int_in(-1000..=1000));
        let sums: Vec<i64> = per_row(&rows, wrapping_sum_i64);
        let top = sums.iter().copied().fold(0i64, i64::max);
        let want: Vec<Vec<i64>> = rows
            .iter()
            .zip(&sums)
            .map(|(r, &s)| {
                r.iter()
                    .map(|&v| v.wrapping_mul(s).wrapping_sub(top))
                    .collect()
            })
            .collect();
        assert_rows(&prog::scaled_by_row_share(&x), &want, "scaled_by_row_share");
    });
}

fn mat_broadcast_dot(place: Place) {
    // One row of data read as every row (row stride 0): every result is the same dot.
    for (rows, cols) in [(0, 5), (3, 0), (5_000, 7), (3, (1 << 16) + 1)] {
        eprintln!("place {place:?}, broadcast {rows} x {cols}");
        let mut rng = Rng::new(rows as u64 ^ (cols as u64) << 32);
        let row = rng.f32s(cols, -1.0, 1.0);
        let x = rng.f32s(cols, -1.0, 1.0);
        let m = dpl::Matrix::with_strides(rows, cols, row.clone(), 0, 1).expect("broadcast");
        let terms: Vec<Vec<f32>> = vec![row.iter().zip(&x).map(|(a, b)| a * b).collect(); rows];
        let got = dpl::with_place(place, || prog::mat_broadcast_dot(&m, &x));
        assert_row_sums(&got, &terms, "mat_broadcast_dot");
    }
}

fn guarded_gather(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let x = rng.f32s(100, -1.0, 1.0);
        // Rows of 3 or more elements are never gathered: their indices are out of range.
        let ir: Vec<Vec<u32>> = rows_of(lens, rng, |r| r.below(100) as u32)
            .into_iter()
            .map(|r| {
                if r.len() < 3 {
                    r
                } else {
                    r.iter().map(|j| j + 100).collect()
                }
            })
            .collect();
        let idx = Nested::from(ir.clone());
        let terms: Vec<Vec<f32>> = per_row(&ir, |r| {
            if r.len() < 3 {
                r.iter().map(|&j| x[j as usize]).collect()
            } else {
                vec![]
            }
        });
        let got = prog::guarded_gather(&idx, &x).expect("untaken branches read nothing");
        assert_eq!(got.len(), ir.len(), "rows");
        for (i, r) in ir.iter().enumerate() {
            if r.len() >= 3 {
                assert_eq!(got[i], -1.0, "row {i}");
            } else {
                let (w, m) = f64_sum(terms[i].iter().copied());
                assert_reduced(got[i], w, m, r.len(), &format!("row {i}"));
            }
        }
    });
}

fn gather_kept_indices(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let x = rng.f32s(500, -1.0, 1.0);
        // Half the indices are out of range and filtered out before the gather.
        let (idx, ir) = nested_of(lens, rng, |r| r.below(1000) as u32);
        let want: Vec<Vec<f32>> = per_row(&ir, |r| {
            r.iter()
                .filter(|&&j| (j as usize) < x.len())
                .map(|&j| x[j as usize])
                .filter(|&v| v > 0.0)
                .collect()
        });
        assert_rows(
            &prog::gather_kept_indices(&idx, &x).expect("in range"),
            &want,
            "kept",
        );
    });
}

// ---- the scheduled programs: every schedule against the same oracle ----

fn sched_spmv(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let ncols = 7 + lens.len() / 2;
        let x = dense(ncols, rng);
        let (vals, cols) = csr(lens, ncols, rng);
        let terms = spmv_oracle(&vals, &cols, &x);
        let (vals, cols) = (Nested::from(vals), Nested::from(cols));
        each_schedule!(|s, f| assert_row_sums(&f::spmv(&vals, &cols, &x), &terms, s));
    });
}

fn sched_row_sums_i64(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i64);
        let want = per_row(&rows, wrapping_sum_i64);
        each_schedule!(|s, f| assert_same(&f::row_sums_i64(&x), &want, s));
    });
}

fn sched_row_min_max(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i32);
        let lo = per_row(&rows, |r| r.iter().copied().min().unwrap_or(0));
        let hi = per_row(&rows, |r| r.iter().copied().max().unwrap_or(0));
        each_schedule!(|s, f| {
            let (glo, ghi) = f::row_min_max(&x);
            assert_same(&glo, &lo, &format!("{s}: min"));
            assert_same(&ghi, &hi, &format!("{s}: max"));
        });
    });
}

fn sched_count_any(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, |r| r.below(400) as u32);
        let k = 100;
        let c = per_row(&rows, |r| r.iter().filter(|&&v| v % k == 1).count());
        let a = per_row(&rows, |r| r.contains(&k));
        each_schedule!(|s, f| {
            let (gc, ga) = f::count_any(&x, k);
            assert_same(&gc, &c, &format!("{s}: count"));
            assert_same(&ga, &a, &format!("{s}: any"));
        });
    });
}

fn sched_positives(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i32);
        let want: Vec<Vec<i32>> =
            per_row(&rows, |r| r.iter().copied().filter(|&v| v > 0).collect());
        each_schedule!(|s, f| assert_rows(&f::positives(&x), &want, s));
    });
}

fn sched_prefix(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i64);
        let want: Vec<Vec<i64>> = per_row(&rows, |r| {
            let mut s = 0i64;
            r.iter()
                .map(|&v| {
                    s = s.wrapping_add(v);
                    s
                })
                .collect()
        });
        each_schedule!(|s, f| assert_rows(&f::prefix(&x), &want, s));
    });
}

fn sched_centered(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, |r| r.f64_in(-50.0, 100.0));
        each_schedule!(|s, f| check_centered(&f::centered(&x), &rows, s));
    });
}

fn sched_gather_rows(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let x = rng.i64s(3_001);
        let (idx, ir) = nested_of(lens, rng, |r| r.below(3_001) as u32);
        let want: Vec<Vec<i64>> = per_row(&ir, |r| r.iter().map(|&j| x[j as usize]).collect());
        each_schedule!(|s, f| assert_rows(&f::gather_rows(&idx, &x), &want, s));
    });
}

fn sched_mat_vec(place: Place) {
    each_matrix(place, |layout, rows, cols, rng| {
        let data = rows_of(&vec![cols; rows], rng, |r| r.f32_in(-1.0, 1.0));
        let x = dense(cols, rng);
        let m = matrix(layout, &data, cols, f32::NAN);
        let terms: Vec<Vec<f32>> =
            per_row(&data, |r| r.iter().zip(&x).map(|(a, b)| a * b).collect());
        each_schedule!(|s, f| assert_row_sums(&f::mat_vec(&m, &x), &terms, s));
        // A vector of the wrong length is a length mismatch of the inner map (with at
        // least one row to run it).
        if rows > 0 {
            let long = dense(cols + 1, rng);
            each_schedule!(|s, f| {
                let e = panic_message(|| f::mat_vec(&m, &long));
                assert!(
                    e.contains("map") && e.contains("length mismatch"),
                    "{s}: {e}"
                );
            });
        }
    });
}

fn sched_try_gather_rows(place: Place) {
    each_shape(place, &ALL_SHAPES, |shape, lens, rng| {
        let x = rng.f32s(1_000, -1.0, 1.0);
        let (idx, ir) = nested_of(lens, rng, |r| r.below(1_000) as u32);
        let want: Vec<Vec<f32>> =
            per_row(&ir, |r| r.iter().map(|&j| x[j as usize] * 2.0).collect());
        each_schedule!(|s, f| assert_rows(
            &f::try_gather_rows(&idx, &x).expect("indices in range"),
            &want,
            s
        ));
        // One index out of range, in the longest row's last element (for the skewed
        // shape, inside the very long row): Err naming gather, never a panic.
        if let Some((i, _)) = lens
            .iter()
            .enumerate()
            .filter(|p| *p.1 > 0)
            .max_by_key(|p| p.1)
        {
            let mut bad = ir.clone();
            *bad[i].last_mut().unwrap() = 1_000 + 17;
            let bad = Nested::from(bad);
            each_schedule!(|s, f| match f::try_gather_rows(&bad, &x) {
                Err(Error::IndexOutOfRange {
                    prim: "gather",
                    index: 1_017,
                    len: 1_000,
                    ..
                }) => {}
                other => panic!(
                    "{s}, {shape:?}: row {i}: want Err(IndexOutOfRange(gather)), got {other:?}"
                ),
            });
        }
    });
}

fn sched_module_calls(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, |r| r.f32_in(0.5, 2.0));
        let squares: Vec<Vec<f32>> = per_row(&rows, |r| r.iter().map(|v| v * v).collect());
        each_schedule!(|s, f| {
            let norms = f::row_norms(&x);
            let sq: Vec<f32> = norms.iter().map(|g| g * g).collect();
            // norm^2 within reassociation of the sum of squares, plus the sqrt's rounding.
            for (i, (g, r)) in sq.iter().zip(&squares).enumerate() {
                let (w, m) = f64_sum(r.iter().copied());
                let allowed =
                    reassociation_tolerance::<f32>(r.len()) * m + 4.0 * f32::EPSILON as f64 * w;
                assert!(
                    (*g as f64 - w).abs() <= allowed + f64::MIN_POSITIVE,
                    "{s}: row {i}: norm^2 {g} vs {w}"
                );
            }
            let unit = f::unit_rows(&x);
            assert_eq!(unit.len(), rows.len(), "{s}: rows");
            for (i, r) in rows.iter().enumerate() {
                assert_eq!(unit.row_len(i), r.len(), "{s}: length of row {i}");
                let (w, _) = f64_sum(r.iter().map(|v| v * v));
                for (k, (&u, &v)) in unit.row(i).iter().zip(r).enumerate() {
                    let want = v as f64 / w.sqrt();
                    assert!(
                        (u as f64 - want).abs() <= 1e-4 * want.abs() + 1e-7,
                        "{s}: row {i}[{k}]: {u} vs {want}"
                    );
                }
            }
            // A module function taking a row is callable from Rust with a slice too.
            if let Some(r) = rows.first() {
                let (w, m) = f64_sum(r.iter().map(|v| v * v));
                assert_reduced(f::sum_sq(r), w, m, r.len(), &format!("{s}: sum_sq"));
            }
        });
    });
}

on_every_place!(
    row_sums_f32,
    row_sums_u64,
    row_min_max_guarded,
    row_min_max_f64,
    row_any_all,
    row_any_all_bool,
    row_counts,
    row_products,
    row_argmax,
    row_prefix_f64,
    row_exclusive_u32,
    row_running_max,
    row_prefix_of_squares,
    row_filter_of_map,
    row_map_of_filter,
    row_filter_and_sum,
    row_positives_and_sums,
    rows_longer_than,
    sums_of_rows_with_positive_head,
    row_neighbour_diffs,
    affine_rows,
    clamp_rows,
    positional_weights,
    plus_row_index,
    centered_rows,
    row_reverse,
    replicate_per_row,
    rows_from_counts,
    ends,
    nested_fn_norms,
    nested_fn_scaled,
    row_stats,
    row_dots,
    row_differences,
    total,
    max_row_sum,
    gather_rows,
    spmv_tuple_rows,
    mat_row_sums,
    mat_row_scan,
    mat_row_filter,
    mat_corners,
    mat_minus_nested,
    ell_spmv,
    try_row_index,
    try_row_min,
    pair_sums_per_row,
    keep_row_max,
    row_by_index,
    pick_rows,
    identity,
    offsets_of,
    per_row_init,
    fn_item_as_function,
    row_histograms,
    row_permute_scatter,
    row_indices_and_signs,
    zip_rows,
    cyclic_weights,
    mat_doubled_by_index,
    mat_row_and_col0,
    try_filter_by_lookup,
    try_divide_rows,
    minus_global_mean,
    scaled_by_row_share,
    mat_broadcast_dot,
    guarded_gather,
    gather_kept_indices,
    sched_spmv,
    sched_row_sums_i64,
    sched_row_min_max,
    sched_count_any,
    sched_positives,
    sched_prefix,
    sched_centered,
    sched_gather_rows,
    sched_mat_vec,
    sched_try_gather_rows,
    sched_module_calls,
);
