//! Maps inside maps: rows transformed with captures of outer values and of the row index,
//! ragged results, nested `fn`s taking rows.

use super::*;

/// The programs under test, written in the DSL (default schedule).
mod prog {
    use dpl::prelude::*;

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

on_every_place!(
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
);
