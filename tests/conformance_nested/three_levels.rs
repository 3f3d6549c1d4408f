//! Three levels of nesting, per-row captures, rows as values (picked, indexed, returned),
//! per-row `scatter`/`permute`/histograms.

use super::*;

/// The programs under test, written in the DSL (default schedule).
mod prog {
    use dpl::prelude::*;

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
            .map(|(r, &init)| running(r, init, false, u32::wrapping_add))
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
        if rows == 0 || cols == 0 {
            // `m[0]` of an empty matrix, or `r[0]` of an empty row.
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
                "{rows}x{cols}: {got:?}"
            );
        } else {
            let (s, col0) = got.expect("in range");
            let (w, mag) = f64_sum(data[rows / 2].iter().copied());
            assert_reduced(s, w, mag, cols, "sum(m[i])");
            assert_same(&col0, &per_row(&data, |r| r[0]), "r[0]");
        }
    });
}

on_every_place!(
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
);
