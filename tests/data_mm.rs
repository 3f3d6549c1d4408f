//! `dpl::mm` on the real matrices in `shared/data/matrices/`, checked against a plain
//! re-reading of the same text, and the CSR conversions against each other.
//!
//! The files live beside the repository; a test whose file is missing says so and passes.

use std::collections::HashMap;

use dpl::mm::{self, Csr, CsrExt, Symmetry};
use dpl_testkit::sparse;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/data/matrices/");

/// The text of a matrix file, or `None` (with a message) if it is not there.
fn load(name: &str) -> Option<(String, String)> {
    let path = format!("{DIR}{name}");
    match std::fs::read_to_string(&path) {
        Ok(text) => Some((path, text)),
        Err(e) => {
            eprintln!("skipping: {path} is not readable ({e})");
            None
        }
    }
}

/// An independent, minimal reading of a coordinate real file: the size line and the
/// stored triplets (0-based), nothing validated.
/// 0-based `(row, column, value)`.
type Triplet = (usize, usize, f64);

fn plain_read(text: &str) -> ((usize, usize, usize), Vec<Triplet>) {
    let mut lines = text
        .lines()
        .filter(|l| !l.starts_with('%') && !l.trim().is_empty());
    let size: Vec<usize> = lines
        .next()
        .unwrap()
        .split_whitespace()
        .map(|t| t.parse().unwrap())
        .collect();
    let triplets = lines
        .map(|l| {
            let t: Vec<&str> = l.split_whitespace().collect();
            (
                t[0].parse::<usize>().unwrap() - 1,
                t[1].parse::<usize>().unwrap() - 1,
                t[2].parse::<f64>().unwrap(),
            )
        })
        .collect();
    ((size[0], size[1], size[2]), triplets)
}

/// The full matrix as a map (row, col) -> summed value, mirroring when `symmetric`.
fn plain_full(triplets: &[Triplet], symmetric: bool) -> HashMap<(usize, usize), f64> {
    let mut m = HashMap::new();
    for &(r, c, v) in triplets {
        *m.entry((r, c)).or_insert(0.0) += v;
        if symmetric && r != c {
            *m.entry((c, r)).or_insert(0.0) += v;
        }
    }
    m
}

fn check_file(name: &str, symmetric: bool, shape: (usize, usize, usize)) -> Option<Csr> {
    let (path, text) = load(name)?;
    let coo = mm::read(&path).unwrap_or_else(|e| panic!("{e}"));
    let ((rows, cols, stored), triplets) = plain_read(&text);
    assert_eq!((rows, cols, stored), shape, "{name}: size line");
    assert_eq!(triplets.len(), stored, "{name}: entries in the file");
    assert_eq!((coo.rows(), coo.cols(), coo.stored_entries()), shape);
    assert_eq!(
        coo.symmetry(),
        if symmetric {
            Symmetry::Symmetric
        } else {
            Symmetry::General
        }
    );
    let diagonal = triplets.iter().filter(|&&(r, c, _)| r == c).count();
    let expanded = if symmetric {
        2 * stored - diagonal
    } else {
        stored
    };
    assert_eq!(coo.nnz(), expanded, "{name}: triplets after expansion");

    let full = plain_full(&triplets, symmetric);
    let csr = coo.to_csr();
    assert_eq!((csr.rows(), csr.cols()), (rows, cols));
    assert_eq!(csr.nnz(), full.len(), "{name}: distinct positions");
    for r in 0..rows {
        let (cs, vs) = csr.row(r);
        assert!(
            cs.windows(2).all(|w| w[0] < w[1]),
            "{name}: row {r} not sorted"
        );
        for (&c, &v) in cs.iter().zip(vs) {
            assert_eq!(full.get(&(r, c as usize)), Some(&v), "{name}: ({r}, {c})");
        }
    }

    // SpMV: the reference against a direct accumulation over the plain triplets.
    let x = sparse::random_vector(cols, 17);
    let mut want = vec![0.0f64; rows];
    for (&(r, c), &v) in &full {
        want[r] += v * x[c];
    }
    let got = csr.spmv(&x);
    for r in 0..rows {
        let tol = 1e-12 * (1.0 + want[r].abs());
        assert!(
            (got[r] - want[r]).abs() <= tol,
            "{name}: y[{r}] = {} vs {}",
            got[r],
            want[r]
        );
    }
    Some(csr)
}

#[test]
fn bus_1138_is_symmetric_with_4054_entries() {
    let Some(csr) = check_file("1138_bus.mtx", true, (1138, 1138, 2596)) else {
        return;
    };
    // Known from the SuiteSparse collection: 4054 entries in the full matrix.
    assert_eq!(csr.nnz(), 4054);
    let dense_symmetric = (0..csr.rows()).all(|r| {
        let (cs, vs) = csr.row(r);
        cs.iter().zip(vs).all(|(&c, &v)| {
            let (cc, cv) = csr.row(c as usize);
            cc.binary_search(&(r as u32)).is_ok_and(|k| cv[k] == v)
        })
    });
    assert!(dense_symmetric);
}

#[test]
fn cyl_2d_general() {
    let Some(csr) = check_file("2dcyl1.mtx", false, (1784, 1784, 34656)) else {
        return;
    };
    // Block size 4: explicit zeros are stored entries and must be kept.
    assert!(csr.values().contains(&0.0));
}

#[test]
fn ani4_general() {
    check_file("ani4.mtx", false, (3081, 3081, 20971));
}

#[test]
fn real_matrix_through_nested_and_ell() {
    let Some((path, _)) = load("ani4.mtx") else {
        return;
    };
    let csr = mm::read(path).unwrap().to_csr();
    let x = sparse::random_vector(csr.cols(), 3);
    let want = csr.spmv(&x);
    let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();

    let (vals, cols) = csr.to_nested();
    assert_eq!((vals.len(), vals.total_len()), (csr.rows(), csr.nnz()));
    assert_eq!(vals.offsets(), cols.offsets());
    assert!(vals.same_offsets(&cols));
    let (evals, ecols) = csr.to_ell();
    let width = csr.row_lengths().into_iter().max().unwrap();
    assert_eq!(evals.shape(), (csr.rows(), width));
    for r in 0..csr.rows() {
        let nested: f32 = vals[r]
            .iter()
            .zip(&cols[r])
            .map(|(&v, &c)| v * x32[c as usize])
            .sum();
        let ell: f32 = evals
            .row(r)
            .iter()
            .zip(ecols.row(r).iter())
            .map(|(&v, &c)| v * x32[c as usize])
            .sum();
        let tol = 1e-4 * (1.0 + want[r].abs());
        assert!(
            (f64::from(nested) - want[r]).abs() <= tol,
            "row {r}: {nested} vs {}",
            want[r]
        );
        assert!(
            (f64::from(ell) - want[r]).abs() <= tol,
            "row {r}: {ell} vs {}",
            want[r]
        );
    }
}

#[test]
fn a_truncated_real_file_reports_the_end() {
    let Some((_, text)) = load("1138_bus.mtx") else {
        return;
    };
    let lines: Vec<&str> = text.lines().collect();
    let cut = lines[..lines.len() - 10].join("\n");
    let e = mm::parse(&cut).unwrap_err();
    assert_eq!(e.line(), Some(lines.len() - 10));
    assert!(e.to_string().contains("expected 2596 entries"), "{e}");
}

#[test]
fn to_nested_gives_values_and_columns_sharing_offsets() {
    for csr in [
        sparse::random(50, 40, 3, 11),
        sparse::laplacian_2d(6, 5),
        sparse::power_law(60, 60, 1, 1.5, 2),
    ] {
        let (vals, cols) = csr.to_nested();
        let (vals64, cols64) = csr.to_nested_f64();
        assert!(vals.same_offsets(&cols));
        assert!(vals64.same_offsets(&cols64));
        // Each call builds its own offsets: two calls do not share.
        assert!(!vals.same_offsets(&cols64));
        for r in 0..csr.rows() {
            let (c, v) = csr.row(r);
            assert_eq!(cols.row(r), c);
            assert_eq!(vals64.row(r), v);
            let v32: Vec<f32> = v.iter().map(|&x| x as f32).collect();
            assert_eq!(vals.row(r), &v32[..]);
        }
    }
}
