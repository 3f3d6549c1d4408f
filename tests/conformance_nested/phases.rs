//! Results of one phase read by the rows of the next: global values inside rows, gathers
//! guarded by earlier results.

use super::*;

/// The programs under test, written in the DSL (default schedule).
mod prog {
    use dpl::prelude::*;

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

on_every_place!(
    minus_global_mean,
    scaled_by_row_share,
    mat_broadcast_dot,
    guarded_gather,
    gather_kept_indices,
);
