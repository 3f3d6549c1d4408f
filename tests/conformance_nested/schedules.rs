//! The programs compiled once per schedule (`inner = "seq" | "block" | "warp" | "auto"`),
//! every schedule against the same oracle.

use super::*;

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
        let want: Vec<Vec<i64>> = per_row(&rows, |r| running(r, 0, true, i64::wrapping_add));
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
