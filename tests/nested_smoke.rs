//! Nested data parallelism on every place: `Nested` and `Matrix` parameters, per-row
//! primitives, ragged results.

use dpl::prelude::*;
use dpl_testkit::SplitMix64;

#[parallel]
fn spmv_csr(vals: &Nested<f32>, cols: &Nested<u32>, x: &[f32]) -> Vec<f32> {
    let spvv = |ai, ci| sum(map(|aij, xj| aij * xj, ai, gather(x, ci)));
    map(spvv, vals, cols)
}

#[parallel(inner = "block")]
fn spmv_csr_block(vals: &Nested<f32>, cols: &Nested<u32>, x: &[f32]) -> Vec<f32> {
    map(
        |ai, ci| sum(map(|aij, xj| aij * xj, ai, gather(x, ci))),
        vals,
        cols,
    )
}

#[parallel(inner = "auto")]
fn spmv_csr_auto(vals: &Nested<f32>, cols: &Nested<u32>, x: &[f32]) -> Vec<f32> {
    map(
        |ai, ci| sum(map(|aij, xj| aij * xj, ai, gather(x, ci))),
        vals,
        cols,
    )
}

#[parallel]
fn row_sums(m: &Matrix<f64>) -> Vec<f64> {
    map(|r| sum(r), m)
}

#[parallel]
fn positives_per_row(rows: &Nested<i32>) -> Nested<i32> {
    map(|r| filter(|v| v > 0, r), rows)
}

#[parallel]
fn prefix_per_row(rows: &Nested<i64>) -> Nested<i64> {
    map(|r| scan(|a, b| a + b, r), rows)
}

#[parallel]
fn first_and_len(rows: &Nested<u32>) -> (Vec<u32>, Vec<usize>) {
    let firsts = map(|r| if len(r) > 0 { r[0] } else { 0 }, rows);
    let lens = map(|r| r.len(), rows);
    (firsts, lens)
}

fn rows(n: usize, seed: u64) -> Vec<Vec<i32>> {
    let mut rng = SplitMix64::new(seed);
    rng.vec(n, |r| {
        let len = r.below(9);
        r.vec(len, |r| r.int_in(-10..=10) as i32)
    })
}

fn each_place(f: impl Fn(Place)) {
    for p in dpl::available_places() {
        with_place(p, || f(p));
    }
}

#[test]
fn spmv_all_schedules() {
    for n in [0usize, 1, 7, 3000] {
        let r = rows(n, 3);
        let cols: Vec<Vec<u32>> = r
            .iter()
            .map(|row| {
                row.iter()
                    .map(|v| (v.unsigned_abs() as usize % n.max(1)) as u32)
                    .collect()
            })
            .collect();
        let vals: Vec<Vec<f32>> = r
            .iter()
            .map(|row| row.iter().map(|&v| v as f32 * 0.5).collect())
            .collect();
        let x: Vec<f32> = (0..n.max(1)).map(|i| (i % 13) as f32 - 6.0).collect();
        let want: Vec<f32> = vals
            .iter()
            .zip(&cols)
            .map(|(a, c)| a.iter().zip(c).map(|(a, &c)| a * x[c as usize]).sum())
            .collect();
        let (vals, cols) = (Nested::from(vals), Nested::from(cols));
        each_place(|p| {
            for got in [
                spmv_csr(&vals, &cols, &x),
                spmv_csr_block(&vals, &cols, &x),
                spmv_csr_auto(&vals, &cols, &x),
            ] {
                assert_eq!(got.len(), want.len(), "{p}");
                for (g, w) in got.iter().zip(&want) {
                    assert!((g - w).abs() <= 1e-3 * w.abs().max(1.0), "{p}: {g} vs {w}");
                }
            }
        });
    }
}

#[test]
fn matrix_rows() {
    let data: Vec<f64> = (0..35).map(|i| i as f64 * 0.25).collect();
    for m in [
        Matrix::row_major(5, 7, data.clone()).unwrap(),
        Matrix::col_major(5, 7, data.clone()).unwrap(),
    ] {
        let want: Vec<f64> = m.to_row_vecs().iter().map(|r| r.iter().sum()).collect();
        each_place(|p| assert_eq!(row_sums(&m), want, "{p}"));
    }
}

#[test]
fn ragged_results() {
    let r = rows(500, 9);
    let n = Nested::from(r.clone());
    let want: Vec<Vec<i32>> = r
        .iter()
        .map(|row| row.iter().copied().filter(|&v| v > 0).collect())
        .collect();
    let r64: Vec<Vec<i64>> = r
        .iter()
        .map(|row| row.iter().map(|&v| v as i64).collect())
        .collect();
    let want_scan: Vec<Vec<i64>> = r64
        .iter()
        .map(|row| {
            row.iter()
                .scan(0i64, |a, &v| {
                    *a += v;
                    Some(*a)
                })
                .collect()
        })
        .collect();
    let n64 = Nested::from(r64);
    each_place(|p| {
        assert_eq!(positives_per_row(&n).to_vecs(), want, "{p}");
        assert_eq!(prefix_per_row(&n64).to_vecs(), want_scan, "{p}");
    });
}

#[test]
fn row_indexing_and_lengths() {
    let r: Vec<Vec<u32>> = rows(200, 4)
        .into_iter()
        .map(|row| row.into_iter().map(|v| v.unsigned_abs()).collect())
        .collect();
    let n = Nested::from(r.clone());
    let firsts: Vec<u32> = r
        .iter()
        .map(|row| row.first().copied().unwrap_or(0))
        .collect();
    let lens: Vec<usize> = r.iter().map(Vec::len).collect();
    each_place(|p| assert_eq!(first_and_len(&n), (firsts.clone(), lens.clone()), "{p}"));
}
