//! Plain Rust next to the dpl kernels of the `spmv` example, shared by the example, its test
//! and its benchmark (each includes this file with `#[path]`): the test matrices, an
//! independent sequential reference with an error bound, and the hand-written baselines
//! (sequential and rayon) that dpl is timed against.
//!
//! Nothing here uses dpl's compiler: the reference and the baselines are written directly
//! over the CSR arrays, so a mistake in the generated code cannot hide in them.
// Each includer uses a different subset of these items.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use dpl::mm::Csr;
use dpl_testkit::{SplitMix64, sparse};

/// A CSR matrix with `f32` values, the layout the baselines read: `offsets` has `rows + 1`
/// entries, row `r` is `offsets[r]..offsets[r + 1]` of `cols` and `vals`.
///
/// Built from a [`Csr`] whose invariants (offsets non-decreasing and ending at the number of
/// entries, every column `< ncols`) are re-checked here, because the baselines read without
/// bounds checks on the strength of them.
#[derive(Clone, Debug)]
pub struct CsrF32 {
    /// Number of columns: the length `x` must have.
    pub ncols: usize,
    /// Row offsets, `rows + 1` of them.
    pub offsets: Vec<usize>,
    /// Column of every entry.
    pub cols: Vec<u32>,
    /// Value of every entry, rounded to `f32`.
    pub vals: Vec<f32>,
}

impl CsrF32 {
    /// The matrix with values rounded to `f32`.
    ///
    /// # Panics
    ///
    /// If the parts of `a` violate the CSR invariants (they cannot for a `Csr`; checked
    /// anyway because the baselines rely on them for memory safety).
    pub fn new(a: &Csr) -> Self {
        let offsets = a.row_offsets().to_vec();
        let cols = a.col_indices().to_vec();
        let vals: Vec<f32> = a.values().iter().map(|&v| v as f32).collect();
        assert!(
            !offsets.is_empty() && offsets[0] == 0,
            "CSR offsets must start at 0"
        );
        assert!(
            offsets.windows(2).all(|w| w[0] <= w[1]),
            "CSR offsets must not decrease"
        );
        assert_eq!(
            *offsets.last().unwrap(),
            cols.len(),
            "CSR offsets must end at nnz"
        );
        assert_eq!(cols.len(), vals.len(), "one column per value");
        assert!(
            cols.iter().all(|&c| (c as usize) < a.cols()),
            "CSR column out of range"
        );
        CsrF32 {
            ncols: a.cols(),
            offsets,
            cols,
            vals,
        }
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.offsets.len() - 1
    }
}

/// `y = A x` computed in `f64` from the `f32` inputs, with each row's error bound: returns
/// `(y[r], bound[r])` where any `f32` evaluation of row `r` in any order of summation is
/// within `bound[r]` of `y[r]`.
///
/// Bound: a row of `n` products summed in `f32` in any order differs from the exact value by
/// at most `(n + 1) * eps * sum |a_rk * x_k|` (one rounding per product, at most `n - 1`
/// roundings on any path of the summation tree; first-order bound, `n * eps` well below 1
/// here). The `f64` evaluation of the reference is exact enough to not matter against it.
pub fn reference(a: &CsrF32, x: &[f32]) -> Vec<(f64, f64)> {
    assert_eq!(x.len(), a.ncols, "x must have one element per column");
    let mut out = Vec::with_capacity(a.rows());
    for r in 0..a.rows() {
        let mut sum = 0.0f64;
        let mut abs = 0.0f64;
        for k in a.offsets[r]..a.offsets[r + 1] {
            let t = a.vals[k] as f64 * x[a.cols[k] as usize] as f64;
            sum += t;
            abs += t.abs();
        }
        let n = (a.offsets[r + 1] - a.offsets[r]) as f64;
        // Twice the first-order bound, plus the smallest normal f32 for underflow.
        let bound = 2.0 * (n + 1.0) * f32::EPSILON as f64 * abs + f32::MIN_POSITIVE as f64;
        out.push((sum, bound));
    }
    out
}

/// Checks a computed `y` against [`reference`]; the error names the first wrong row.
pub fn check(got: &[f32], want: &[(f64, f64)]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{} results for {} rows", got.len(), want.len()));
    }
    for (r, (&g, &(w, bound))) in got.iter().zip(want).enumerate() {
        let err = (g as f64 - w).abs();
        if err.is_nan() || err > bound {
            return Err(format!(
                "row {r}: got {g}, want {w} (error {err:.3e} > bound {bound:.3e})"
            ));
        }
    }
    Ok(())
}

/// Rows `rows` of `y = A x` into `y` (`y.len() == rows.len()`), sequentially, without
/// bounds checks: the inner loop both baselines run.
#[inline]
fn rows_into(a: &CsrF32, x: &[f32], first: usize, y: &mut [f32]) {
    assert!(x.len() == a.ncols && first + y.len() < a.offsets.len());
    for (i, out) in y.iter_mut().enumerate() {
        let r = first + i;
        // SAFETY: `r + 1 < offsets.len()` (asserted above); offsets are non-decreasing and
        // end at `cols.len() == vals.len()`, so `lo..hi` is inside both; every column is
        // `< ncols == x.len()` (checked in `CsrF32::new`).
        unsafe {
            let lo = *a.offsets.get_unchecked(r);
            let hi = *a.offsets.get_unchecked(r + 1);
            let mut acc = 0.0f32;
            for k in lo..hi {
                let c = *a.cols.get_unchecked(k) as usize;
                acc += *a.vals.get_unchecked(k) * *x.get_unchecked(c);
            }
            *out = acc;
        }
    }
}

/// Sequential `y = A x` in `f32`: the `seq` baseline (the hand-written loop, unchecked).
pub fn spmv_seq(a: &CsrF32, x: &[f32]) -> Vec<f32> {
    let mut y = vec![0.0f32; a.rows()];
    rows_into(a, x, 0, &mut y);
    y
}

/// Hand-written rayon `y = A x`: the `rayon` baseline. Rows are split recursively into
/// contiguous chunks of about equal *entry* counts (so skewed rows balance as well as whole
/// rows allow), each chunk runs the unchecked sequential loop; rayon's work stealing
/// spreads the chunks.
pub fn spmv_rayon(a: &CsrF32, x: &[f32]) -> Vec<f32> {
    assert_eq!(x.len(), a.ncols, "x must have one element per column");
    let mut y = vec![0.0f32; a.rows()];
    let threads = rayon::current_num_threads().max(1);
    // About 8 chunks per thread, and at least 16K entries per chunk (task cost ~1 us).
    let grain = (a.vals.len() / (8 * threads)).max(1 << 14);
    split(a, x, 0, &mut y, grain);
    y
}

fn split(a: &CsrF32, x: &[f32], first: usize, y: &mut [f32], grain: usize) {
    let (lo, hi) = (a.offsets[first], a.offsets[first + y.len()]);
    if hi - lo <= grain || y.len() < 2 {
        rows_into(a, x, first, y);
        return;
    }
    // The row where half of this chunk's entries are behind: in 1..len.
    let half = lo + (hi - lo) / 2;
    let rows = &a.offsets[first..first + y.len()];
    let mid = rows.partition_point(|&o| o <= half).clamp(1, y.len() - 1);
    let (left, right) = y.split_at_mut(mid);
    rayon::join(
        || split(a, x, first, left, grain),
        || split(a, x, first + mid, right, grain),
    );
}

/// The deterministic input vector for a matrix with `n` columns.
pub fn vector(n: usize) -> Vec<f32> {
    sparse::random_vector(n, 0x5EED)
        .into_iter()
        .map(|v| v as f32)
        .collect()
}

/// The size of the generated test matrices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// The sizes of the issue: 1M rows random, 1000x1000 Laplacian, 1M rows power law.
    Full,
    /// Small instances of the same kinds, for tests.
    Small,
}

/// The generated matrices: `(name, matrix)` for a uniform random matrix (10 entries per
/// row), a 2-D 5-point Laplacian, a power-law (skewed) matrix, and [`one_long_row`] (the
/// extreme skew, where `inner = "auto"` switches to parallel rows).
pub fn generated(scale: Scale) -> Vec<(String, Csr)> {
    let (n, grid, long) = match scale {
        Scale::Full => (1_000_000, 1000, 4_000_000),
        Scale::Small => (20_000, 100, 300_000),
    };
    vec![
        ("random".to_string(), sparse::random(n, n, 10, 1)),
        ("laplace2d".to_string(), sparse::laplacian_2d(grid, grid)),
        ("powerlaw".to_string(), power_law(n)),
        ("onelongrow".to_string(), one_long_row(n / 4, long)),
    ]
}

/// The skewed matrix: `n x n`, row lengths Pareto-distributed from 4 with exponent 1.5
/// (mean about 12 entries per row; the longest rows hold tens of thousands of entries at
/// 1M rows).
pub fn power_law(n: usize) -> Csr {
    sparse::power_law(n, n, 4, 1.5, 3)
}

/// One very long row among many short ones: `short_rows` rows of 8 entries, then one row
/// of `long_len` consecutive columns, `max(short_rows, long_len)` columns. When the long
/// row holds more than a thread's share of the entries, one thread per row leaves it to a
/// single thread; `inner = "auto"` then parallelizes inside rows.
pub fn one_long_row(short_rows: usize, long_len: usize) -> Csr {
    let ncols = short_rows.max(long_len).max(8);
    let mut rng = SplitMix64::new(11);
    let mut offsets = vec![0];
    let mut cols = Vec::new();
    for r in 0..short_rows {
        // 8 distinct increasing columns spread around the diagonal.
        let start = r.min(ncols - 8);
        cols.extend((0..8).map(|k| (start + k) as u32));
        offsets.push(cols.len());
    }
    cols.extend((0..long_len).map(|c| c as u32));
    offsets.push(cols.len());
    let vals = (0..cols.len()).map(|_| 2.0 * rng.f64() - 1.0).collect();
    Csr::from_parts(ncols, offsets, cols, vals).expect("valid by construction")
}

/// The folder of the real matrices shipped next to the repository.
pub fn shared_matrix_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/matrices")
}

/// Every `*.mtx` file in [`shared_matrix_dir`], read, as `(file stem, matrix)` sorted by
/// name; `Err` with a message when the folder is absent, so callers can skip.
///
/// # Panics
///
/// If a file is present but cannot be read or parsed (that is a real failure).
pub fn shared_matrices() -> Result<Vec<(String, Csr)>, String> {
    let dir = shared_matrix_dir();
    let entries = std::fs::read_dir(&dir)
        .map_err(|e| format!("no real matrices: cannot read {}: {e}", dir.display()))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "mtx"))
        .collect();
    paths.sort();
    Ok(paths
        .iter()
        .map(|p| (stem(p), read_matrix(p).unwrap_or_else(|e| panic!("{e}"))))
        .collect())
}

/// Reads one Matrix Market file into CSR; the error is printable.
pub fn read_matrix(path: &Path) -> Result<Csr, String> {
    dpl::mm::read(path)
        .map(|coo| coo.to_csr())
        .map_err(|e| format!("cannot use {}: {e}", path.display()))
}

/// A file's name without folder and extension.
pub fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// Whether ELLPACK is reasonable for `a`: its padded `rows x longest row` storage holds at
/// most 8 times the stored entries (plus one row's worth). A few very long rows (the power
/// law) make ELL store orders of magnitude more than CSR; Copperhead's paper (section 6.1)
/// notes the same limit.
pub fn ell_fits(a: &Csr) -> bool {
    let longest = a.row_lengths().into_iter().max().unwrap_or(0);
    a.rows()
        .checked_mul(longest)
        .is_some_and(|padded| padded <= 8 * a.nnz() + longest)
}

/// `(rows, entries, longest row)` of `a`.
pub fn shape(a: &Csr) -> (usize, usize, usize) {
    let longest = a.row_lengths().into_iter().max().unwrap_or(0);
    (a.rows(), a.nnz(), longest)
}
