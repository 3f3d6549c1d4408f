//! `dpl::sparse::SparseRows` on the sparse matrices of sprs, nalgebra-sparse and faer (CSR
//! and CSC, `u32`/`usize` indices): the rows against a dense matrix built independently
//! from the same triplets, then an SpMV over the converted rows on every place against
//! plain Rust. Shapes: empty (0x0, 0xn, nx0), empty rows and columns, one dense row, and
//! random 1,000-row matrices; a matrix wider than `u32` indices allow is an error.
#![cfg(all(feature = "sprs", feature = "nalgebra-sparse", feature = "faer"))]

use dpl::prelude::*;
use dpl::sparse::SparseRows;
use dpl_testkit::SplitMix64;

#[parallel]
fn spmv(vals: &Nested<f64>, cols: &Nested<u32>, x: &[f64]) -> Vec<f64> {
    map(
        |a, c| sum(map(|aij, xj| aij * xj, a, gather(x, c))),
        vals,
        cols,
    )
}

/// A sparse matrix as `(rows, cols, triplets)`, each position at most once.
type Triplets = (usize, usize, Vec<(usize, usize, f64)>);

/// The test matrices.
fn matrices() -> Vec<Triplets> {
    let mut rng = SplitMix64::new(41);
    let mut random = |rows: usize, cols: usize, percent: usize| {
        let mut t = Vec::new();
        for i in 0..rows {
            for j in 0..cols {
                if rng.chance(percent) {
                    t.push((i, j, rng.f64_in(-1.0, 1.0)));
                }
            }
        }
        // Not in row order: the crates sort, dpl must not depend on the input order.
        t.reverse();
        (rows, cols, t)
    };
    vec![
        (0, 0, vec![]),
        (0, 5, vec![]),
        (4, 0, vec![]),
        (3, 4, vec![]),
        (3, 4, vec![(1, 0, 2.0), (1, 3, -1.0)]),
        (2, 6, (0..6).map(|j| (0, j, j as f64)).collect()),
        random(1, 1, 100),
        random(37, 53, 10),
        random(1000, 700, 1),
    ]
}

/// The rows of the matrix, each as `(column, value)` pairs in column order, computed
/// directly from the triplets.
fn want_rows((rows, _, t): &Triplets) -> Vec<Vec<(u32, f64)>> {
    let mut out = vec![Vec::new(); *rows];
    for &(i, j, v) in t {
        out[i].push((j as u32, v));
    }
    for r in &mut out {
        r.sort_by_key(|&(j, _)| j);
    }
    out
}

/// Checks a conversion's rows against the triplets, then the SpMV on every place.
#[track_caller]
fn check(m: &Triplets, got: Result<(Nested<f64>, Nested<u32>), Error>, what: &str) {
    let (vals, cols) = got.unwrap_or_else(|e| panic!("{what}: {e}"));
    let want = want_rows(m);
    assert_eq!(vals.len(), m.0, "{what}: rows");
    assert!(vals.same_offsets(&cols), "{what}: the offsets are shared");
    for (i, w) in want.iter().enumerate() {
        let got: Vec<(u32, f64)> = cols
            .row(i)
            .iter()
            .copied()
            .zip(vals.row(i).iter().copied())
            .collect();
        assert_eq!(&got, w, "{what}: row {i}");
    }
    let x: Vec<f64> = (0..m.1).map(|j| 1.0 + j as f64 / 8.0).collect();
    // Each row summed in column order, as the sequential places do.
    let y: Vec<f64> = want
        .iter()
        .map(|r| r.iter().map(|&(j, v)| v * x[j as usize]).sum())
        .collect();
    for place in dpl::available_places() {
        let got = with_place(place, || spmv(&vals, &cols, &x));
        assert_eq!(got.len(), y.len(), "{what} on {place}");
        for (i, (g, w)) in got.iter().zip(&y).enumerate() {
            assert!(
                (g - w).abs() <= 1e-12 * (1.0 + w.abs()),
                "{what} on {place}: y[{i}] = {g}, want {w}"
            );
        }
    }
}

#[test]
fn sprs_csr_and_csc() {
    for m in matrices() {
        let (rows, cols, t) = &m;
        let mut tri = sprs::TriMat::new((*rows, *cols));
        let mut tri32 = sprs::TriMatI::<f64, u32>::new((*rows, *cols));
        for &(i, j, v) in t {
            tri.add_triplet(i, j, v);
            tri32.add_triplet(i, j, v);
        }
        let csr: sprs::CsMat<f64> = tri.to_csr();
        check(&m, csr.to_nested_rows(), "sprs CSR");
        check(&m, tri.to_csc::<usize>().to_nested_rows(), "sprs CSC");
        check(&m, csr.view().to_nested_rows(), "sprs CSR view");
        check(&m, tri32.to_csr::<u32>().to_nested_rows(), "sprs CSR u32");
        // The transpose as a CSC view of the CSR storage.
        let transposed = (*cols, *rows, t.iter().map(|&(i, j, v)| (j, i, v)).collect());
        check(
            &transposed,
            csr.transpose_view().to_nested_rows(),
            "sprs transpose view",
        );
    }
}

#[test]
fn nalgebra_csr_and_csc() {
    for m in matrices() {
        let (rows, cols, t) = &m;
        let mut coo = nalgebra_sparse::CooMatrix::new(*rows, *cols);
        for &(i, j, v) in t {
            coo.push(i, j, v);
        }
        check(
            &m,
            nalgebra_sparse::CsrMatrix::from(&coo).to_nested_rows(),
            "nalgebra CSR",
        );
        check(
            &m,
            nalgebra_sparse::CscMatrix::from(&coo).to_nested_rows(),
            "nalgebra CSC",
        );
    }
}

#[test]
fn faer_row_and_column_matrices() {
    use faer::sparse::{SparseColMat, SparseRowMat, Triplet};
    for m in matrices() {
        let (rows, cols, t) = &m;
        let trip: Vec<Triplet<usize, usize, f64>> = t
            .iter()
            .map(|&(row, col, val)| Triplet { row, col, val })
            .collect();
        let r = SparseRowMat::<usize, f64>::try_new_from_triplets(*rows, *cols, &trip).unwrap();
        check(&m, r.to_nested_rows(), "faer rows");
        check(&m, r.as_ref().to_nested_rows(), "faer rows (ref)");
        let trip32: Vec<Triplet<u32, u32, f64>> = t
            .iter()
            .map(|&(row, col, val)| Triplet {
                row: row as u32,
                col: col as u32,
                val,
            })
            .collect();
        let c = SparseColMat::<u32, f64>::try_new_from_triplets(*rows, *cols, &trip32).unwrap();
        check(&m, c.to_nested_rows(), "faer columns u32");
        check(&m, c.as_ref().to_nested_rows(), "faer columns (ref)");
    }
}

#[test]
fn too_many_columns_for_u32_indices() {
    let wide = u32::MAX as usize + 2;
    let m =
        nalgebra_sparse::CsrMatrix::<f64>::try_from_csr_data(1, wide, vec![0, 0], vec![], vec![])
            .unwrap();
    let e = m.to_nested_rows().unwrap_err();
    assert!(
        matches!(&e, Error::Malformed { detail, .. } if detail.contains("fit u32")),
        "{e}"
    );
    // Exactly u32::MAX + 1 columns still fit.
    let m = nalgebra_sparse::CsrMatrix::<f64>::try_from_csr_data(
        1,
        wide - 1,
        vec![0, 1],
        vec![wide - 2],
        vec![5.0],
    )
    .unwrap();
    let (vals, cols) = m.to_nested_rows().unwrap();
    assert_eq!((vals.row(0), cols.row(0)), (&[5.0][..], &[u32::MAX][..]));
}
