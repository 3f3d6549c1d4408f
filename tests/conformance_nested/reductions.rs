//! Per-row reductions: `sum`, `min`/`max` (guarded for empty rows), `any`/`all`, `count`,
//! products, argmax.

use super::*;

/// The programs under test, written in the DSL (default schedule).
mod prog {
    use dpl::prelude::*;

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
}

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
);
