//! Generated sparse matrices ([`Csr`]), SpMV input vectors and a dense [`tridiagonal`]
//! matrix: the same arguments give the same data on every machine.

use std::collections::BTreeSet;

use dpl_mm::Csr;

use crate::SplitMix64;

/// The most columns a [`Csr`] can have: column indices are `u32`.
const MAX_COLS: usize = u32::MAX as usize;

/// A `rows x cols` matrix with `min(nnz_per_row, cols)` entries in every row, at
/// distinct uniformly random columns, with values uniform in `[-1, 1)`. The same
/// arguments always give the same matrix.
///
/// # Panics
///
/// If `cols > u32::MAX`.
///
/// ```
/// let a = dpl_testkit::sparse::random(100, 50, 7, 42);
/// assert_eq!(a.nnz(), 700);
/// assert_eq!(a, dpl_testkit::sparse::random(100, 50, 7, 42));
/// ```
pub fn random(rows: usize, cols: usize, nnz_per_row: usize, seed: u64) -> Csr {
    let mut rng = SplitMix64::new(seed);
    generate(rows, cols, &mut rng, |_| nnz_per_row)
}

/// A matrix whose row lengths follow a power law (Pareto with exponent `alpha`): row
/// length `floor(min_row_len / u^(1/alpha))` for `u` uniform in `(0, 1]`, capped at
/// `cols`. Small `alpha` (1 to 2) gives many rows near `min_row_len` and a few very long
/// ones, the shape that unbalances a one-row-per-thread SpMV. Columns and values as in
/// [`random`].
///
/// # Panics
///
/// If `alpha` is not positive and finite, or `cols > u32::MAX`.
///
/// ```
/// let a = dpl_testkit::sparse::power_law(10_000, 10_000, 2, 1.2, 7);
/// let lens = a.row_lengths();
/// let mean = a.nnz() as f64 / lens.len() as f64;
/// let max = *lens.iter().max().unwrap();
/// assert!(lens.iter().all(|&l| l >= 2));
/// assert!(max as f64 > 50.0 * mean, "max {max}, mean {mean}");
/// ```
pub fn power_law(rows: usize, cols: usize, min_row_len: usize, alpha: f64, seed: u64) -> Csr {
    assert!(
        alpha > 0.0 && alpha.is_finite(),
        "power_law: alpha must be positive, got {alpha}"
    );
    let mut rng = SplitMix64::new(seed);
    let mut lengths = SplitMix64::new(seed ^ 0x9e37_79b9_7f4a_7c15);
    generate(rows, cols, &mut rng, |_| {
        let u = 1.0 - lengths.f64(); // (0, 1]
        let len = min_row_len as f64 / u.powf(1.0 / alpha);
        if len >= cols as f64 {
            cols
        } else {
            len as usize
        }
    })
}

/// Rows of `row_len(r)` distinct random columns (capped at `cols`) with random values.
fn generate(
    rows: usize,
    cols: usize,
    rng: &mut SplitMix64,
    mut row_len: impl FnMut(usize) -> usize,
) -> Csr {
    assert!(
        cols <= MAX_COLS,
        "Csr: {cols} columns do not fit u32 column indices"
    );
    let mut row_offsets = Vec::with_capacity(rows + 1);
    row_offsets.push(0);
    let mut col_indices = Vec::new();
    let mut values = Vec::new();
    for r in 0..rows {
        let k = row_len(r).min(cols);
        col_indices.extend(distinct_sorted(rng, k, cols).into_iter().map(|c| c as u32));
        values.extend((0..k).map(|_| 2.0 * rng.f64() - 1.0));
        row_offsets.push(col_indices.len());
    }
    parts(cols, row_offsets, col_indices, values)
}

/// The 5-point Laplacian of an `nx x ny` grid (Dirichlet boundary): `nx * ny` rows,
/// point `(i, j)` is row `j * nx + i`, 4 on the diagonal and -1 for each of the up to
/// four neighbours.
///
/// ```
/// let a = dpl_testkit::sparse::laplacian_2d(2, 2);
/// assert_eq!(a.to_dense(), vec![
///     vec![4.0, -1.0, -1.0, 0.0],
///     vec![-1.0, 4.0, 0.0, -1.0],
///     vec![-1.0, 0.0, 4.0, -1.0],
///     vec![0.0, -1.0, -1.0, 4.0],
/// ]);
/// ```
///
/// # Panics
///
/// If `nx * ny` overflows or exceeds `u32::MAX`.
pub fn laplacian_2d(nx: usize, ny: usize) -> Csr {
    let n = nx.checked_mul(ny).filter(|&n| n <= MAX_COLS);
    let n = n.unwrap_or_else(|| panic!("laplacian_2d: {nx} x {ny} grid is too large"));
    let mut row_offsets = Vec::with_capacity(n + 1);
    row_offsets.push(0);
    let mut col_indices = Vec::with_capacity(5 * n);
    let mut values = Vec::with_capacity(5 * n);
    for j in 0..ny {
        for i in 0..nx {
            let p = j * nx + i;
            // In increasing column order.
            let neighbours = [
                (j > 0).then(|| (p - nx, -1.0)),
                (i > 0).then(|| (p - 1, -1.0)),
                Some((p, 4.0)),
                (i + 1 < nx).then(|| (p + 1, -1.0)),
                (j + 1 < ny).then(|| (p + nx, -1.0)),
            ];
            for (c, v) in neighbours.into_iter().flatten() {
                col_indices.push(c as u32);
                values.push(v);
            }
            row_offsets.push(col_indices.len());
        }
    }
    parts(n, row_offsets, col_indices, values)
}

/// The matrix of generated parts, which keep every invariant of [`Csr`].
fn parts(cols: usize, row_offsets: Vec<usize>, col_indices: Vec<u32>, values: Vec<f64>) -> Csr {
    Csr::from_parts(cols, row_offsets, col_indices, values)
        .unwrap_or_else(|e| unreachable!("a generated matrix is a valid Csr: {e}"))
}

/// `k` distinct values of `0..n` (`k <= n`), sorted, uniformly chosen (Floyd's algorithm).
fn distinct_sorted(rng: &mut SplitMix64, k: usize, n: usize) -> Vec<usize> {
    if k == n {
        return (0..n).collect();
    }
    let mut chosen = BTreeSet::new();
    for j in n - k..n {
        let t = rng.below(j + 1);
        if !chosen.insert(t) {
            chosen.insert(j);
        }
    }
    chosen.into_iter().collect()
}

/// `len` values uniform in `[-1, 1)` from `seed`: an input vector for SpMV tests.
///
/// ```
/// let x = dpl_testkit::sparse::random_vector(5, 3);
/// assert_eq!(x.len(), 5);
/// assert!(x.iter().all(|v| (-1.0..1.0).contains(v)));
/// assert_eq!(x, dpl_testkit::sparse::random_vector(5, 3));
/// ```
pub fn random_vector(len: usize, seed: u64) -> Vec<f64> {
    let mut rng = SplitMix64::new(seed);
    (0..len).map(|_| 2.0 * rng.f64() - 1.0).collect()
}

/// A symmetric `n x n` matrix with a dominant eigenvalue, dense and row-major: `2 + i / n`
/// on the diagonal and `-0.5` beside it (what the power-iteration tests run on).
pub fn tridiagonal(n: usize) -> Vec<f64> {
    let mut a = vec![0.0; n * n];
    for i in 0..n {
        a[i * n + i] = 2.0 + i as f64 / n as f64;
        if i + 1 < n {
            a[i * n + i + 1] = -0.5;
            a[(i + 1) * n + i] = -0.5;
        }
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generators() {
        let a = random(200, 30, 8, 11);
        assert!(a.row_lengths().iter().all(|&l| l == 8));
        assert!(a.values().iter().all(|v| (-1.0..1.0).contains(v)));
        assert_ne!(a, random(200, 30, 8, 12));
        assert!(random(5, 4, 10, 0).row_lengths().iter().all(|&l| l == 4));
        // Every column of a 4-of-30 row equally likely: check all columns get used.
        let mut seen = [false; 30];
        for &c in a.col_indices() {
            seen[c as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));

        let l = laplacian_2d(5, 4);
        let d = l.to_dense();
        let lengths = l.row_lengths();
        for (i, row) in d.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                assert_eq!(*v, d[j][i]);
            }
            let (px, py) = (i % 5, i / 5);
            let interior_neighbours = [px > 0, px < 4, py > 0, py < 3]
                .iter()
                .filter(|&&b| b)
                .count();
            assert_eq!(lengths[i], 1 + interior_neighbours);
            assert_eq!(row.iter().sum::<f64>(), 4.0 - interior_neighbours as f64);
        }
        assert_eq!(l.nnz(), 20 + 2 * (4 * 4 + 5 * 3));

        let p = power_law(2000, 500, 3, 1.5, 4);
        assert_eq!(p, power_law(2000, 500, 3, 1.5, 4));
        let lens = p.row_lengths();
        assert!(lens.iter().all(|&n| (3..=500).contains(&n)));
        let short = lens.iter().filter(|&&n| n < 10).count();
        assert!(short > 1500, "{short} short rows");
        assert!(lens.iter().any(|&n| n > 100));
    }
}
