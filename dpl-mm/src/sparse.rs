//! The sparse matrices: [`CooMatrix`] (triplets, what the reader gives) and [`Csr`]
//! (compressed sparse rows).

use dpl_core::run::Error;

use crate::{MAX_COLS, Symmetry};

/// A sparse matrix as 0-based `(row, column, value)` triplets, in no particular order,
/// duplicates allowed (they add up in [`CooMatrix::to_csr`]).
///
/// From [`read`](crate::read)/[`parse`](crate::parse) the triplets are in file order, with every mirrored entry of a
/// symmetric file right after the stored one.
///
/// ```
/// use dpl_mm::CooMatrix;
///
/// let a = CooMatrix::from_triplets(2, 3, vec![(1, 2, 5.0), (0, 0, 1.0), (1, 2, 0.5)]).unwrap();
/// let csr = a.to_csr();
/// assert_eq!(csr.row(1), (&[2u32][..], &[5.5][..]));
/// assert!(CooMatrix::from_triplets(2, 3, vec![(2, 0, 1.0)]).is_err());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct CooMatrix<T> {
    rows: usize,
    cols: usize,
    /// Every `(r, c, _)` has `r < rows` and `c < cols`; `cols <= u32::MAX`.
    entries: Vec<(usize, usize, T)>,
    symmetry: Symmetry,
    /// Entries stored in the file (before symmetric expansion).
    stored: usize,
}

impl<T> CooMatrix<T> {
    /// What [`parse`](crate::parse)(crate::parse) read: the expanded triplets of a file and how many it
    /// stored (the reader checked the shape).
    pub(crate) fn parsed(
        rows: usize,
        cols: usize,
        entries: Vec<(usize, usize, T)>,
        symmetry: Symmetry,
        stored: usize,
    ) -> Self {
        CooMatrix {
            rows,
            cols,
            entries,
            symmetry,
            stored,
        }
    }

    /// A `rows x cols` matrix from 0-based triplets.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] (with `what: "CooMatrix"`) if a triplet is outside the shape or
    /// `cols` exceeds `u32::MAX` (column indices become `u32` in [`Csr`]).
    pub fn from_triplets(
        rows: usize,
        cols: usize,
        entries: Vec<(usize, usize, T)>,
    ) -> Result<Self, Error> {
        let malformed = |detail| Error::Malformed {
            what: "CooMatrix",
            detail,
        };
        if cols > MAX_COLS {
            return Err(malformed(format!(
                "{cols} columns: column indices must fit in u32"
            )));
        }
        if let Some(k) = entries.iter().position(|&(r, c, _)| r >= rows || c >= cols) {
            let (r, c, _) = entries[k];
            return Err(malformed(format!(
                "entry {k} at ({r}, {c}) is outside the {rows} x {cols} shape"
            )));
        }
        let stored = entries.len();
        Ok(CooMatrix {
            rows,
            cols,
            entries,
            symmetry: Symmetry::General,
            stored,
        })
    }

    /// The number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The number of columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The number of triplets (after symmetric expansion, duplicates counted).
    pub fn nnz(&self) -> usize {
        self.entries.len()
    }

    /// The number of entries the file stored (before symmetric expansion); for a matrix
    /// built with [`CooMatrix::from_triplets`], the number of triplets.
    pub fn stored_entries(&self) -> usize {
        self.stored
    }

    /// The symmetry declared by the file ([`Symmetry::General`] for
    /// [`CooMatrix::from_triplets`]). The triplets are always the full, expanded matrix.
    pub fn symmetry(&self) -> Symmetry {
        self.symmetry
    }

    /// The 0-based `(row, column, value)` triplets.
    pub fn entries(&self) -> &[(usize, usize, T)] {
        &self.entries
    }

    /// The triplets, by value.
    pub fn into_entries(self) -> Vec<(usize, usize, T)> {
        self.entries
    }
}

impl CooMatrix<f64> {
    /// Compressed sparse rows: entries sorted by row then column, duplicates summed.
    ///
    /// ```
    /// use dpl_mm::CooMatrix;
    ///
    /// let a = CooMatrix::from_triplets(2, 2, vec![(1, 1, 1.0), (0, 1, 2.0), (1, 0, 3.0), (1, 1, 4.0)])
    ///     .unwrap()
    ///     .to_csr();
    /// assert_eq!(a.row_offsets(), &[0, 1, 3]);
    /// assert_eq!(a.col_indices(), &[1, 0, 1]);
    /// assert_eq!(a.values(), &[2.0, 3.0, 5.0]);
    /// ```
    pub fn to_csr(&self) -> Csr {
        // Counting sort by row (stable), then sort each row by column and merge duplicates.
        let mut row_offsets = vec![0usize; self.rows + 1];
        for &(r, _, _) in &self.entries {
            row_offsets[r + 1] += 1;
        }
        for r in 0..self.rows {
            row_offsets[r + 1] += row_offsets[r];
        }
        let mut next = row_offsets.clone();
        let mut by_row = vec![(0u32, 0.0f64); self.entries.len()];
        for &(r, c, v) in &self.entries {
            // `c < cols <= u32::MAX` by the invariant.
            by_row[next[r]] = (c as u32, v);
            next[r] += 1;
        }
        let mut offsets = Vec::with_capacity(self.rows + 1);
        offsets.push(0);
        let mut col_indices = Vec::with_capacity(by_row.len());
        let mut values = Vec::with_capacity(by_row.len());
        for r in 0..self.rows {
            let row = &mut by_row[row_offsets[r]..row_offsets[r + 1]];
            row.sort_by_key(|&(c, _)| c);
            let start = col_indices.len();
            for &(c, v) in row.iter() {
                if col_indices.len() > start && col_indices.last() == Some(&c) {
                    *values.last_mut().expect("a value per column") += v;
                } else {
                    col_indices.push(c);
                    values.push(v);
                }
            }
            offsets.push(col_indices.len());
        }
        Csr {
            cols: self.cols,
            row_offsets: offsets,
            col_indices,
            values,
        }
    }
}

/// A sparse matrix in compressed sparse rows, `f64` values and `u32` column indices.
///
/// Row `i` has the columns `col_indices()[row_offsets()[i]..row_offsets()[i + 1]]`, strictly
/// increasing, with the values at the same positions.
///
/// ```
/// // The 1-D Laplacian of 3 points: 2 on the diagonal, -1 beside it.
/// let a = dpl_mm::Csr::from_parts(
///     3,
///     vec![0, 2, 5, 7],
///     vec![0, 1, 0, 1, 2, 1, 2],
///     vec![2.0, -1.0, -1.0, 2.0, -1.0, -1.0, 2.0],
/// )
/// .unwrap();
/// assert_eq!((a.rows(), a.cols(), a.nnz()), (3, 3, 7));
/// assert_eq!(a.row(1), (&[0u32, 1, 2][..], &[-1.0, 2.0, -1.0][..]));
/// assert_eq!(a.spmv(&[1.0; 3]), vec![1.0, 0.0, 1.0]); // 2 minus the neighbour count
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Csr {
    cols: usize,
    /// `rows + 1` entries from 0, non-decreasing, ending at `values.len()`.
    row_offsets: Vec<usize>,
    /// Strictly increasing within each row, each `< cols`; `len() == values.len()`.
    col_indices: Vec<u32>,
    values: Vec<f64>,
}

impl Csr {
    /// A CSR matrix from its parts, checking every invariant (see [`Csr`]).
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] (with `what: "Csr"`) naming the first violation.
    ///
    /// ```
    /// use dpl_mm::Csr;
    ///
    /// let a = Csr::from_parts(3, vec![0, 2, 2], vec![0, 2], vec![1.0, 2.0]).unwrap();
    /// assert_eq!(a.spmv(&[1.0, 10.0, 100.0]), vec![201.0, 0.0]);
    /// assert!(Csr::from_parts(3, vec![0, 2, 2], vec![2, 0], vec![1.0, 2.0]).is_err()); // unsorted
    /// ```
    pub fn from_parts(
        cols: usize,
        row_offsets: Vec<usize>,
        col_indices: Vec<u32>,
        values: Vec<f64>,
    ) -> Result<Self, Error> {
        let malformed = |detail| Error::Malformed {
            what: "Csr",
            detail,
        };
        if col_indices.len() != values.len() {
            return Err(malformed(format!(
                "{} column indices but {} values",
                col_indices.len(),
                values.len()
            )));
        }
        if cols > MAX_COLS {
            return Err(malformed(format!(
                "{cols} columns: column indices must fit in u32"
            )));
        }
        check_offsets(&row_offsets, col_indices.len())
            .map_err(|detail| malformed(format!("row_offsets: {detail}")))?;
        for (r, w) in row_offsets.windows(2).enumerate() {
            let row = &col_indices[w[0]..w[1]];
            if let Some(&c) = row.iter().find(|&&c| c as usize >= cols) {
                return Err(malformed(format!(
                    "row {r}: column {c} is outside 0..{cols}"
                )));
            }
            if let Some(w) = row.windows(2).find(|w| w[0] >= w[1]) {
                return Err(malformed(format!(
                    "row {r}: columns not strictly increasing ({} then {})",
                    w[0], w[1]
                )));
            }
        }
        Ok(Csr {
            cols,
            row_offsets,
            col_indices,
            values,
        })
    }

    /// The number of rows.
    pub fn rows(&self) -> usize {
        self.row_offsets.len() - 1
    }

    /// The number of columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The number of stored entries.
    pub fn nnz(&self) -> usize {
        self.values.len()
    }

    /// The row offsets (`rows() + 1` entries).
    pub fn row_offsets(&self) -> &[usize] {
        &self.row_offsets
    }

    /// The column of every stored entry, row after row.
    pub fn col_indices(&self) -> &[u32] {
        &self.col_indices
    }

    /// The value of every stored entry, row after row.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// Row `i` as `(columns, values)`.
    ///
    /// # Panics
    ///
    /// If `i >= rows()`.
    #[track_caller]
    pub fn row(&self, i: usize) -> (&[u32], &[f64]) {
        assert!(
            i < self.rows(),
            "Csr: row index {i} out of range for {} rows",
            self.rows()
        );
        let range = self.row_offsets[i]..self.row_offsets[i + 1];
        (&self.col_indices[range.clone()], &self.values[range])
    }

    /// The number of entries in each row.
    pub fn row_lengths(&self) -> Vec<usize> {
        self.row_offsets.windows(2).map(|w| w[1] - w[0]).collect()
    }

    /// Takes the matrix apart into `(cols, row_offsets, col_indices, values)`.
    pub fn into_parts(self) -> (usize, Vec<usize>, Vec<u32>, Vec<f64>) {
        (self.cols, self.row_offsets, self.col_indices, self.values)
    }

    /// `y = A x`, sequentially, in `f64`: the reference for SpMV tests.
    ///
    /// # Panics
    ///
    /// If `x.len() != cols()`.
    #[track_caller]
    pub fn spmv(&self, x: &[f64]) -> Vec<f64> {
        assert_eq!(
            x.len(),
            self.cols,
            "Csr::spmv: x has {} elements, the matrix {} columns",
            x.len(),
            self.cols
        );
        (0..self.rows())
            .map(|r| {
                let (cols, vals) = self.row(r);
                cols.iter()
                    .zip(vals)
                    .map(|(&c, &v)| v * x[c as usize])
                    .sum()
            })
            .collect()
    }

    /// The matrix as dense rows (for small matrices in tests).
    pub fn to_dense(&self) -> Vec<Vec<f64>> {
        (0..self.rows())
            .map(|r| {
                let mut row = vec![0.0; self.cols];
                let (cols, vals) = self.row(r);
                for (&c, &v) in cols.iter().zip(vals) {
                    row[c as usize] = v;
                }
                row
            })
            .collect()
    }
}

/// Checks that `offsets` delimit rows of `len` entries: `rows + 1` offsets from 0,
/// non-decreasing, ending at `len` (the invariant of a `dpl::Nested`'s offsets, with its
/// messages).
fn check_offsets(offsets: &[usize], len: usize) -> Result<(), String> {
    let Some(&first) = offsets.first() else {
        return Err("offsets is empty (it needs rows + 1 entries, starting with 0)".into());
    };
    if first != 0 {
        return Err(format!("offsets[0] is {first}, expected 0"));
    }
    if let Some(i) = offsets.windows(2).position(|w| w[0] > w[1]) {
        return Err(format!(
            "offsets decrease at row {i}: offsets[{i}] = {} > offsets[{}] = {}",
            offsets[i],
            i + 1,
            offsets[i + 1]
        ));
    }
    let last = offsets[offsets.len() - 1];
    if last != len {
        return Err(format!("last offset is {last} but there are {len} values"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triplets_and_csr_validation() {
        let bad = |r: Result<CooMatrix<f64>, Error>| match r {
            Err(Error::Malformed {
                what: "CooMatrix",
                detail,
            }) => detail,
            other => panic!("{other:?}"),
        };
        assert!(bad(CooMatrix::from_triplets(2, 2, vec![(0, 2, 1.0)])).contains("(0, 2)"));
        assert!(bad(CooMatrix::from_triplets(1, usize::MAX, vec![])).contains("u32"));
        let csr = |o: Vec<usize>, c: Vec<u32>, v: Vec<f64>| match Csr::from_parts(3, o, c, v) {
            Err(Error::Malformed {
                what: "Csr",
                detail,
            }) => detail,
            other => panic!("{other:?}"),
        };
        assert!(csr(vec![0, 1], vec![0], vec![]).contains("1 column indices but 0 values"));
        assert!(csr(vec![0, 2], vec![0], vec![1.0]).contains("row_offsets: last offset"));
        assert!(csr(vec![1, 1], vec![0], vec![1.0]).contains("offsets[0]"));
        assert!(csr(vec![0, 1], vec![3], vec![1.0]).contains("column 3 is outside 0..3"));
        assert!(csr(vec![0, 2], vec![1, 1], vec![1.0, 1.0]).contains("1 then 1"));
        let ok = Csr::from_parts(3, vec![0, 0, 2], vec![0, 2], vec![1.0, 2.0]).unwrap();
        assert_eq!(ok.to_dense(), vec![vec![0.0; 3], vec![1.0, 0.0, 2.0]]);
        assert_eq!(
            ok.clone().into_parts(),
            (3, vec![0, 0, 2], vec![0, 2], vec![1.0, 2.0])
        );
    }

    #[test]
    #[should_panic(expected = "x has 2 elements, the matrix 3 columns")]
    fn spmv_checks_length() {
        let a = Csr::from_parts(3, vec![0, 1], vec![2], vec![1.0]).unwrap();
        a.spmv(&[1.0, 2.0]);
    }
}
