//! Sparse matrices for tests and benchmarks: a Matrix Market reader, CSR/ELL conversions to
//! dpl's data types, deterministic generators and a sequential SpMV reference.
//!
//! # Reading
//!
//! [`read`] (a file) and [`parse`] (text) accept the Matrix Market exchange format
//! (<https://math.nist.gov/MatrixMarket/formats.html>):
//!
//! ```text
//! %%MatrixMarket matrix coordinate real general
//! % comment lines start with '%'
//! 3 3 4            <- rows cols stored-entries   (array format: rows cols)
//! 1 1 2.0          <- row col value, 1-based      (pattern: row col)
//! 2 1 -1.5
//! 3 3 1e-3
//! 1 3 7
//! ```
//!
//! * format `coordinate` or `array` (dense, column-major, one or more values per line);
//! * field `real` (also `double`; Fortran exponents like `1.5D+02` are accepted), `integer`
//!   or `pattern` (every stored entry is 1.0; coordinate only);
//! * symmetry `general`, `symmetric` or `skew-symmetric`. Symmetric files store the lower
//!   triangle (row >= column) and every off-diagonal entry is mirrored on reading (negated
//!   for skew-symmetric, whose files store the strict lower triangle). An entry above the
//!   diagonal in such a file is an error rather than silently doubled.
//!
//! `complex`, `hermitian` and `vector` are rejected with [`MmError::Unsupported`]. Any other
//! malformed input gives [`MmError::Parse`] with the 1-based line number; a file with fewer
//! or more entries than its size line announces is an error too.
//!
//! The result is a [`CooMatrix`] (0-based triplets, after symmetric expansion, in file
//! order, duplicates kept); [`CooMatrix::to_csr`] sorts it into a [`Csr`] (duplicates summed).
//!
//! # Using a matrix in dpl
//!
//! ```
//! use dpl::mm;
//!
//! let text = "%%MatrixMarket matrix coordinate real symmetric\n\
//!             3 3 4\n1 1 4\n2 1 -1\n2 2 4\n3 3 4\n";
//! let csr = mm::parse(text).unwrap().to_csr();
//! assert_eq!((csr.rows(), csr.cols(), csr.nnz()), (3, 3, 5)); // (2,1) mirrored to (1,2)
//! assert_eq!(csr.spmv(&[1.0, 1.0, 1.0]), vec![3.0, 3.0, 4.0]);
//!
//! // The SpMV inputs of a `#[parallel]` function: one row of values and columns per row.
//! let (vals, cols) = csr.to_nested();
//! assert_eq!(vals.row(1), &[-1.0f32, 4.0]);
//! assert_eq!(cols.row(1), &[0u32, 1]);
//! ```
//!
//! # Generating
//!
//! [`Csr::random`] (uniform row length), [`Csr::laplacian_2d`] (the 5-point stencil) and
//! [`Csr::power_law`] (a few very long rows among many short ones) build test matrices from
//! a seed with [`SplitMix64`], a small deterministic generator defined here, so the same seed
//! gives the same matrix on every machine.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use dpl_core::run::Error;

use crate::data::{Matrix, Nested};

// ---------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------

/// Why a Matrix Market file could not be read.
#[derive(Debug)]
#[non_exhaustive]
pub enum MmError {
    /// The file could not be read.
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The text is not valid Matrix Market.
    Parse {
        /// The file, when reading one with [`read`].
        path: Option<PathBuf>,
        /// The 1-based line where the problem was found (for a missing entry: the last line).
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// Valid Matrix Market that this reader does not handle (complex values, hermitian
    /// symmetry, vectors).
    Unsupported {
        /// The file, when reading one with [`read`].
        path: Option<PathBuf>,
        /// The 1-based line of the header.
        line: usize,
        /// What is not supported.
        what: String,
    },
}

impl MmError {
    fn parse(line: usize, message: impl Into<String>) -> Self {
        MmError::Parse {
            path: None,
            line,
            message: message.into(),
        }
    }

    /// The same error, naming `file`.
    fn in_file(self, file: &Path) -> Self {
        match self {
            MmError::Parse { line, message, .. } => MmError::Parse {
                path: Some(file.to_path_buf()),
                line,
                message,
            },
            MmError::Unsupported { line, what, .. } => MmError::Unsupported {
                path: Some(file.to_path_buf()),
                line,
                what,
            },
            other => other,
        }
    }

    /// The 1-based line of a parse or unsupported-feature error.
    pub fn line(&self) -> Option<usize> {
        match self {
            MmError::Parse { line, .. } | MmError::Unsupported { line, .. } => Some(*line),
            MmError::Io { .. } => None,
        }
    }
}

impl fmt::Display for MmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = |f: &mut fmt::Formatter<'_>, path: &Option<PathBuf>, line: usize| match path {
            Some(p) => write!(f, "{}:{line}: ", p.display()),
            None => write!(f, "line {line}: "),
        };
        match self {
            MmError::Io { path, source } => write!(f, "cannot read {}: {source}", path.display()),
            MmError::Parse {
                path,
                line,
                message,
            } => {
                at(f, path, *line)?;
                f.write_str(message)
            }
            MmError::Unsupported { path, line, what } => {
                at(f, path, *line)?;
                write!(f, "{what} matrices are not supported")
            }
        }
    }
}

impl std::error::Error for MmError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            MmError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

// ---------------------------------------------------------------------------------------
// Header
// ---------------------------------------------------------------------------------------

/// The storage format named in a Matrix Market header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Sparse: one `row col [value]` line per stored entry.
    Coordinate,
    /// Dense: the values in column-major order.
    Array,
}

/// The value type named in a Matrix Market header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    /// Floating-point values.
    Real,
    /// Integer values (converted to `f64`).
    Integer,
    /// No values: every stored entry is 1.0.
    Pattern,
}

/// The symmetry named in a Matrix Market header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Symmetry {
    /// Every entry is stored.
    General,
    /// `a[i][j] == a[j][i]`; the lower triangle is stored.
    Symmetric,
    /// `a[i][j] == -a[j][i]` (zero diagonal); the strict lower triangle is stored.
    SkewSymmetric,
}

struct Header {
    format: Format,
    field: Field,
    symmetry: Symmetry,
}

fn parse_header(line: &str) -> Result<Header, MmError> {
    let unsupported = |what: &str| MmError::Unsupported {
        path: None,
        line: 1,
        what: what.into(),
    };
    let tokens: Vec<String> = line
        .split_whitespace()
        .map(str::to_ascii_lowercase)
        .collect();
    if tokens.first().map(String::as_str) != Some("%%matrixmarket") {
        return Err(MmError::parse(
            1,
            "expected the banner `%%MatrixMarket matrix <format> <field> <symmetry>`",
        ));
    }
    if tokens.len() != 5 {
        return Err(MmError::parse(
            1,
            format!(
                "the banner needs 4 words after %%MatrixMarket (object, format, field, symmetry), found {}",
                tokens.len() - 1
            ),
        ));
    }
    match tokens[1].as_str() {
        "matrix" => {}
        "vector" => return Err(unsupported("vector")),
        other => {
            return Err(MmError::parse(
                1,
                format!("unknown object `{other}` (expected `matrix`)"),
            ));
        }
    }
    let format = match tokens[2].as_str() {
        "coordinate" => Format::Coordinate,
        "array" => Format::Array,
        other => {
            return Err(MmError::parse(
                1,
                format!("unknown format `{other}` (expected `coordinate` or `array`)"),
            ));
        }
    };
    let field = match tokens[3].as_str() {
        "real" | "double" => Field::Real,
        "integer" => Field::Integer,
        "pattern" => Field::Pattern,
        "complex" => return Err(unsupported("complex")),
        other => {
            return Err(MmError::parse(
                1,
                format!("unknown field `{other}` (expected `real`, `integer` or `pattern`)"),
            ));
        }
    };
    let symmetry = match tokens[4].as_str() {
        "general" => Symmetry::General,
        "symmetric" => Symmetry::Symmetric,
        "skew-symmetric" => Symmetry::SkewSymmetric,
        "hermitian" => return Err(unsupported("hermitian")),
        other => {
            return Err(MmError::parse(
                1,
                format!(
                    "unknown symmetry `{other}` (expected `general`, `symmetric` or `skew-symmetric`)"
                ),
            ));
        }
    };
    if format == Format::Array && field == Field::Pattern {
        return Err(MmError::parse(
            1,
            "`pattern` is only valid with the `coordinate` format",
        ));
    }
    Ok(Header {
        format,
        field,
        symmetry,
    })
}

// ---------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------

/// Reads a Matrix Market file (see the [module documentation](self) for what is accepted).
///
/// # Errors
///
/// [`MmError::Io`] if the file cannot be read; otherwise as [`parse`], with the path in the
/// error.
///
/// ```no_run
/// let a = dpl::mm::read("matrices/1138_bus.mtx")?.to_csr();
/// println!("{} x {} with {} entries", a.rows(), a.cols(), a.nnz());
/// # Ok::<(), dpl::mm::MmError>(())
/// ```
pub fn read(path: impl AsRef<Path>) -> Result<CooMatrix<f64>, MmError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|source| MmError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse(&text).map_err(|e| e.in_file(path))
}

/// Parses Matrix Market text (see the [module documentation](self) for what is accepted).
///
/// # Errors
///
/// [`MmError::Parse`] with the line number for malformed input, [`MmError::Unsupported`]
/// for complex, hermitian or vector files.
///
/// ```
/// let e = dpl::mm::parse("%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1.0\n")
///     .unwrap_err();
/// assert_eq!(e.to_string(), "line 3: row index 3 is outside 1..=2");
/// ```
pub fn parse(text: &str) -> Result<CooMatrix<f64>, MmError> {
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    let header = match lines.next() {
        Some((_, l)) => parse_header(l)?,
        None => {
            return Err(MmError::parse(
                1,
                "empty input (expected a %%MatrixMarket banner)",
            ));
        }
    };
    // Blank lines and comments may appear anywhere after the banner.
    let mut content = lines.filter(|(_, l)| {
        let t = l.trim_start();
        !t.is_empty() && !t.starts_with('%')
    });
    let last_line = text.lines().count().max(1);

    let (size_line, size_text) = content
        .next()
        .ok_or_else(|| MmError::parse(last_line, "missing the size line"))?;
    let want = if header.format == Format::Coordinate {
        3
    } else {
        2
    };
    let sizes = size_text
        .split_whitespace()
        .map(|t| {
            t.parse::<usize>().map_err(|_| {
                MmError::parse(
                    size_line,
                    format!("size `{t}` is not a non-negative integer"),
                )
            })
        })
        .collect::<Result<Vec<usize>, MmError>>()?;
    if sizes.len() != want {
        let expected = if want == 3 {
            "rows cols entries"
        } else {
            "rows cols"
        };
        return Err(MmError::parse(
            size_line,
            format!(
                "the size line needs {want} numbers ({expected}), found {}",
                sizes.len()
            ),
        ));
    }
    let (rows, cols) = (sizes[0], sizes[1]);
    if header.symmetry != Symmetry::General && rows != cols {
        return Err(MmError::parse(
            size_line,
            format!(
                "a {:?} matrix must be square, not {rows} x {cols}",
                header.symmetry
            ),
        ));
    }
    if cols > MAX_COLS {
        return Err(MmError::parse(
            size_line,
            format!("{cols} columns: column indices must fit in u32 (at most {MAX_COLS} columns)"),
        ));
    }

    let mut reader = Reader {
        header: &header,
        rows,
        cols,
        entries: Vec::new(),
        stored: 0,
    };
    match header.format {
        Format::Coordinate => {
            let stored = sizes[2];
            // Never trust the announced count for an allocation: each entry takes at least
            // four bytes of text.
            reader
                .entries
                .reserve(stored.min(text.len() / 4) * reader.expansion());
            for (line, l) in content {
                if reader.stored == stored {
                    return Err(MmError::parse(
                        line,
                        format!("more entries than the {stored} announced on line {size_line}"),
                    ));
                }
                reader.coordinate_line(line, l)?;
            }
            if reader.stored != stored {
                return Err(MmError::parse(
                    last_line,
                    format!(
                        "expected {stored} entries (line {size_line}), found {}",
                        reader.stored
                    ),
                ));
            }
        }
        Format::Array => {
            let positions = ArrayPositions::new(rows, cols, header.symmetry);
            let expected = positions.total().ok_or_else(|| {
                MmError::parse(size_line, format!("{rows} x {cols} overflows usize"))
            })?;
            reader
                .entries
                .reserve(expected.min(text.len() / 2) * reader.expansion());
            let mut positions = positions;
            for (line, l) in content {
                for t in l.split_whitespace() {
                    let Some((r, c)) = positions.next() else {
                        return Err(MmError::parse(
                            line,
                            format!(
                                "more values than the {expected} a {rows} x {cols} {:?} array stores",
                                header.symmetry
                            ),
                        ));
                    };
                    let v = reader.value(line, t)?;
                    reader.push(r, c, v);
                }
            }
            if reader.stored != expected {
                return Err(MmError::parse(
                    last_line,
                    format!(
                        "expected {expected} values for a {rows} x {cols} {:?} array, found {}",
                        header.symmetry, reader.stored
                    ),
                ));
            }
        }
    }
    Ok(CooMatrix {
        rows,
        cols,
        entries: reader.entries,
        symmetry: header.symmetry,
        stored: reader.stored,
    })
}

/// The most columns a [`Csr`] can have: column indices are `u32`.
const MAX_COLS: usize = u32::MAX as usize;

/// The state of [`parse`] while reading entries.
struct Reader<'h> {
    header: &'h Header,
    rows: usize,
    cols: usize,
    entries: Vec<(usize, usize, f64)>,
    /// Entries (or array values) read so far.
    stored: usize,
}

impl Reader<'_> {
    /// Entries produced per stored entry, at most.
    fn expansion(&self) -> usize {
        if self.header.symmetry == Symmetry::General {
            1
        } else {
            2
        }
    }

    fn value(&self, line: usize, t: &str) -> Result<f64, MmError> {
        match self.header.field {
            Field::Integer => t
                .parse::<i64>()
                .map(|v| v as f64)
                .map_err(|_| MmError::parse(line, format!("value `{t}` is not an integer"))),
            // Fortran writes `1.5D+02`; nothing else in the format uses `d`.
            _ => t
                .parse::<f64>()
                .or_else(|_| t.replace(['d', 'D'], "e").parse::<f64>())
                .map_err(|_| MmError::parse(line, format!("value `{t}` is not a number"))),
        }
    }

    fn index(&self, line: usize, t: Option<&str>, what: &str, n: usize) -> Result<usize, MmError> {
        let t = t.ok_or_else(|| MmError::parse(line, format!("missing the {what} index")))?;
        match t.parse::<usize>() {
            Ok(i) if (1..=n).contains(&i) => Ok(i - 1),
            Ok(i) => Err(MmError::parse(
                line,
                format!("{what} index {i} is outside 1..={n}"),
            )),
            Err(_) => Err(MmError::parse(
                line,
                format!("{what} index `{t}` is not a positive integer"),
            )),
        }
    }

    fn coordinate_line(&mut self, line: usize, l: &str) -> Result<(), MmError> {
        let mut tokens = l.split_whitespace();
        let r = self.index(line, tokens.next(), "row", self.rows)?;
        let c = self.index(line, tokens.next(), "column", self.cols)?;
        let v = match self.header.field {
            Field::Pattern => 1.0,
            _ => {
                let t = tokens
                    .next()
                    .ok_or_else(|| MmError::parse(line, "missing the value"))?;
                self.value(line, t)?
            }
        };
        if let Some(extra) = tokens.next() {
            return Err(MmError::parse(
                line,
                format!("unexpected `{extra}` after the entry"),
            ));
        }
        match self.header.symmetry {
            Symmetry::General => {}
            Symmetry::Symmetric if r < c => {
                return Err(MmError::parse(
                    line,
                    format!(
                        "entry ({}, {}) is above the diagonal; a symmetric file stores the lower triangle",
                        r + 1,
                        c + 1
                    ),
                ));
            }
            Symmetry::SkewSymmetric if r <= c => {
                return Err(MmError::parse(
                    line,
                    format!(
                        "entry ({}, {}) is not below the diagonal; a skew-symmetric file stores the strict lower triangle",
                        r + 1,
                        c + 1
                    ),
                ));
            }
            _ => {}
        }
        self.push(r, c, v);
        Ok(())
    }
}

impl Reader<'_> {
    /// Records one stored entry and, for a symmetric file, its mirror image.
    fn push(&mut self, r: usize, c: usize, v: f64) {
        self.stored += 1;
        self.entries.push((r, c, v));
        if r != c {
            match self.header.symmetry {
                Symmetry::General => {}
                Symmetry::Symmetric => self.entries.push((c, r, v)),
                Symmetry::SkewSymmetric => self.entries.push((c, r, -v)),
            }
        }
    }
}

/// The positions an `array` file stores, in file order: column-major, and for symmetric
/// files only the lower triangle (strict lower triangle for skew-symmetric).
struct ArrayPositions {
    rows: usize,
    cols: usize,
    symmetry: Symmetry,
    /// The next position; `c == cols` when done.
    r: usize,
    c: usize,
}

impl ArrayPositions {
    fn new(rows: usize, cols: usize, symmetry: Symmetry) -> Self {
        let mut p = ArrayPositions {
            rows,
            cols,
            symmetry,
            r: 0,
            c: 0,
        };
        p.r = p.first_row(0);
        p.settle();
        p
    }

    /// The first stored row of column `c`.
    fn first_row(&self, c: usize) -> usize {
        match self.symmetry {
            Symmetry::General => 0,
            Symmetry::Symmetric => c,
            Symmetry::SkewSymmetric => c + 1,
        }
    }

    /// Moves past columns with no stored rows.
    fn settle(&mut self) {
        while self.c < self.cols && self.r >= self.rows {
            self.c += 1;
            self.r = self.first_row(self.c);
        }
    }

    /// How many values the file must hold, `None` on overflow.
    fn total(&self) -> Option<usize> {
        let n = self.rows;
        match self.symmetry {
            Symmetry::General => self.rows.checked_mul(self.cols),
            Symmetry::Symmetric => n.checked_mul(n + 1).map(|t| t / 2),
            Symmetry::SkewSymmetric => n.checked_mul(n.saturating_sub(1)).map(|t| t / 2),
        }
    }
}

impl Iterator for ArrayPositions {
    type Item = (usize, usize);

    fn next(&mut self) -> Option<(usize, usize)> {
        if self.c >= self.cols {
            return None;
        }
        let here = (self.r, self.c);
        self.r += 1;
        self.settle();
        Some(here)
    }
}

// ---------------------------------------------------------------------------------------
// COO
// ---------------------------------------------------------------------------------------

/// A sparse matrix as 0-based `(row, column, value)` triplets, in no particular order,
/// duplicates allowed (they add up in [`CooMatrix::to_csr`]).
///
/// From [`read`]/[`parse`] the triplets are in file order, with every mirrored entry of a
/// symmetric file right after the stored one.
///
/// ```
/// use dpl::mm::CooMatrix;
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
    /// use dpl::mm::CooMatrix;
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

// ---------------------------------------------------------------------------------------
// CSR
// ---------------------------------------------------------------------------------------

/// A sparse matrix in compressed sparse rows, `f64` values and `u32` column indices.
///
/// Row `i` has the columns `col_indices()[row_offsets()[i]..row_offsets()[i + 1]]`, strictly
/// increasing, with the values at the same positions.
///
/// ```
/// let a = dpl::mm::Csr::laplacian_2d(3, 2);
/// assert_eq!((a.rows(), a.cols()), (6, 6));
/// let y = a.spmv(&vec![1.0; 6]);
/// assert_eq!(y, vec![2.0, 1.0, 2.0, 2.0, 1.0, 2.0]); // 4 minus the neighbour count
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
    /// use dpl::mm::Csr;
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
        // The offsets obey exactly the invariants of a Nested's offsets.
        let rows = Nested::from_parts(col_indices, row_offsets).map_err(|e| match e {
            Error::Malformed { detail, .. } => malformed(format!("row_offsets: {detail}")),
            other => other,
        })?;
        for (r, row) in rows.rows().enumerate() {
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
        let (col_indices, row_offsets) = rows.into_parts();
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

    /// The rows as dpl data, values rounded to `f32`: `(values, columns)`, one row of each
    /// per matrix row, the inputs of an SpMV written with `map` over rows. The two share
    /// one offsets array ([`Nested::same_offsets`] holds), so generated code that zips
    /// their rows reads one offsets array and compares no row lengths.
    pub fn to_nested(&self) -> (Nested<f32>, Nested<u32>) {
        self.nested_with(|v| v as f32)
    }

    /// As [`Csr::to_nested`], keeping `f64` values.
    pub fn to_nested_f64(&self) -> (Nested<f64>, Nested<u32>) {
        self.nested_with(|v| v)
    }

    fn nested_with<V>(&self, convert: impl Fn(f64) -> V) -> (Nested<V>, Nested<u32>) {
        const INVARIANT: &str = "the Csr invariant implies the Nested one";
        let cols = Nested::from_parts(self.col_indices.clone(), self.row_offsets.clone())
            .unwrap_or_else(|e| unreachable!("{INVARIANT}: {e}"));
        let values = self.values.iter().map(|&v| convert(v)).collect();
        let vals = Nested::with_offsets_of(&cols, values)
            .unwrap_or_else(|e| unreachable!("{INVARIANT}: {e}"));
        (vals, cols)
    }

    /// ELLPACK form, values rounded to `f32`: `rows() x width` matrices of values and of
    /// columns, `width` the longest row, stored **column-major** so that entry `k` of
    /// consecutive rows is adjacent in memory (coalesced on a GPU). Short rows are padded
    /// with value 0 and a valid column (the row's last column, or 0 for an empty row), so
    /// a padded product adds `0 * x[valid]`.
    ///
    /// ELL stores `rows() * width` entries: one very long row makes it large (use
    /// [`Csr::to_nested`] for skewed matrices).
    ///
    /// # Panics
    ///
    /// If `rows() * width` overflows `usize`.
    ///
    /// ```
    /// use dpl::mm::CooMatrix;
    ///
    /// let a = CooMatrix::from_triplets(2, 3, vec![(0, 0, 1.0), (0, 2, 2.0), (1, 1, 3.0)])
    ///     .unwrap()
    ///     .to_csr();
    /// let (vals, cols) = a.to_ell();
    /// assert_eq!(vals.to_row_vecs(), vec![vec![1.0f32, 2.0], vec![3.0, 0.0]]);
    /// assert_eq!(cols.to_row_vecs(), vec![vec![0u32, 2], vec![1, 1]]);
    /// assert_eq!(vals.strides(), (1, 2)); // column-major
    /// ```
    pub fn to_ell(&self) -> (Matrix<f32>, Matrix<u32>) {
        self.ell_with(|v| v as f32, 0.0)
    }

    /// As [`Csr::to_ell`], keeping `f64` values.
    pub fn to_ell_f64(&self) -> (Matrix<f64>, Matrix<u32>) {
        self.ell_with(|v| v, 0.0)
    }

    fn ell_with<V: Copy>(&self, convert: impl Fn(f64) -> V, zero: V) -> (Matrix<V>, Matrix<u32>) {
        let rows = self.rows();
        let width = self.row_lengths().into_iter().max().unwrap_or(0);
        let size = rows.checked_mul(width).unwrap_or_else(|| {
            panic!("Csr::to_ell: {rows} rows x {width} (longest row) overflows usize")
        });
        let mut vals = vec![zero; size];
        let mut cols = vec![0u32; size];
        for r in 0..rows {
            let (cs, vs) = self.row(r);
            let pad = cs.last().copied().unwrap_or(0);
            for k in 0..width {
                let at = k * rows + r;
                if k < cs.len() {
                    vals[at] = convert(vs[k]);
                    cols[at] = cs[k];
                } else {
                    cols[at] = pad;
                }
            }
        }
        fn build<X>(rows: usize, width: usize, data: Vec<X>) -> Matrix<X> {
            Matrix::col_major(rows, width, data)
                .unwrap_or_else(|e| unreachable!("ELL data is rows * width long: {e}"))
        }
        (build(rows, width, vals), build(rows, width, cols))
    }

    // -----------------------------------------------------------------------------------
    // Generators
    // -----------------------------------------------------------------------------------

    /// A `rows x cols` matrix with `min(nnz_per_row, cols)` entries in every row, at
    /// distinct uniformly random columns, with values uniform in `[-1, 1)`. The same
    /// arguments always give the same matrix.
    ///
    /// # Panics
    ///
    /// If `cols > u32::MAX`.
    ///
    /// ```
    /// let a = dpl::mm::Csr::random(100, 50, 7, 42);
    /// assert_eq!(a.nnz(), 700);
    /// assert_eq!(a, dpl::mm::Csr::random(100, 50, 7, 42));
    /// ```
    pub fn random(rows: usize, cols: usize, nnz_per_row: usize, seed: u64) -> Csr {
        let mut rng = SplitMix64::new(seed);
        Csr::generate(rows, cols, &mut rng, |_| nnz_per_row)
    }

    /// A matrix whose row lengths follow a power law (Pareto with exponent `alpha`): row
    /// length `floor(min_row_len / u^(1/alpha))` for `u` uniform in `(0, 1]`, capped at
    /// `cols`. Small `alpha` (1 to 2) gives many rows near `min_row_len` and a few very long
    /// ones, the shape that unbalances a one-row-per-thread SpMV. Columns and values as in
    /// [`Csr::random`].
    ///
    /// # Panics
    ///
    /// If `alpha` is not positive and finite, or `cols > u32::MAX`.
    ///
    /// ```
    /// let a = dpl::mm::Csr::power_law(10_000, 10_000, 2, 1.2, 7);
    /// let lens = a.row_lengths();
    /// let mean = a.nnz() as f64 / lens.len() as f64;
    /// let max = *lens.iter().max().unwrap();
    /// assert!(lens.iter().all(|&l| l >= 2));
    /// assert!(max as f64 > 50.0 * mean, "max {max}, mean {mean}");
    /// ```
    pub fn power_law(rows: usize, cols: usize, min_row_len: usize, alpha: f64, seed: u64) -> Csr {
        assert!(
            alpha > 0.0 && alpha.is_finite(),
            "Csr::power_law: alpha must be positive, got {alpha}"
        );
        let mut rng = SplitMix64::new(seed);
        let mut lengths = SplitMix64::new(seed ^ 0x9e37_79b9_7f4a_7c15);
        Csr::generate(rows, cols, &mut rng, |_| {
            let u = 1.0 - lengths.next_f64(); // (0, 1]
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
            values.extend((0..k).map(|_| 2.0 * rng.next_f64() - 1.0));
            row_offsets.push(col_indices.len());
        }
        Csr {
            cols,
            row_offsets,
            col_indices,
            values,
        }
    }

    /// The 5-point Laplacian of an `nx x ny` grid (Dirichlet boundary): `nx * ny` rows,
    /// point `(i, j)` is row `j * nx + i`, 4 on the diagonal and -1 for each of the up to
    /// four neighbours.
    ///
    /// ```
    /// let a = dpl::mm::Csr::laplacian_2d(2, 2);
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
        let n = n.unwrap_or_else(|| panic!("Csr::laplacian_2d: {nx} x {ny} grid is too large"));
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
        Csr {
            cols: n,
            row_offsets,
            col_indices,
            values,
        }
    }
}

/// `k` distinct values of `0..n` (`k <= n`), sorted, uniformly chosen (Floyd's algorithm).
fn distinct_sorted(rng: &mut SplitMix64, k: usize, n: usize) -> Vec<usize> {
    if k == n {
        return (0..n).collect();
    }
    let mut chosen = BTreeSet::new();
    for j in n - k..n {
        let t = rng.below(j as u64 + 1) as usize;
        if !chosen.insert(t) {
            chosen.insert(j);
        }
    }
    chosen.into_iter().collect()
}

// ---------------------------------------------------------------------------------------
// Random numbers
// ---------------------------------------------------------------------------------------

/// A small, fast, deterministic pseudo-random generator (SplitMix64, Steele, Lea and Flood,
/// 2014): the same seed gives the same sequence everywhere. For generating test data, not
/// for anything that needs unpredictability.
///
/// ```
/// use dpl::mm::SplitMix64;
///
/// let mut a = SplitMix64::new(1);
/// let mut b = SplitMix64::new(1);
/// assert_eq!(a.next_u64(), b.next_u64());
/// let x = a.next_f64();
/// assert!((0.0..1.0).contains(&x));
/// assert!(a.below(10) < 10);
/// ```
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform `f64` in `[0, 1)` (53 random bits).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A uniform integer in `0..n`, without bias (Lemire's multiply-and-reject).
    ///
    /// # Panics
    ///
    /// If `n == 0`.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "SplitMix64::below(0): the range is empty");
        let threshold = n.wrapping_neg() % n; // (2^64 - n) mod n
        loop {
            let m = (self.next_u64() as u128) * (n as u128);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }
}

/// `len` values uniform in `[-1, 1)` from `seed`: an input vector for SpMV tests.
///
/// ```
/// let x = dpl::mm::random_vector(5, 3);
/// assert_eq!(x.len(), 5);
/// assert!(x.iter().all(|v| (-1.0..1.0).contains(v)));
/// assert_eq!(x, dpl::mm::random_vector(5, 3));
/// ```
pub fn random_vector(len: usize, seed: u64) -> Vec<f64> {
    let mut rng = SplitMix64::new(seed);
    (0..len).map(|_| 2.0 * rng.next_f64() - 1.0).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const GENERAL: &str = "%%MatrixMarket matrix coordinate real general\n";

    fn err(text: &str) -> (usize, String) {
        match parse(text) {
            Err(MmError::Parse {
                line,
                message,
                path: None,
            }) => (line, message),
            other => panic!("expected a parse error, got {other:?}"),
        }
    }

    /// Dense `rows x cols` from triplets, summing duplicates: the independent reference.
    fn dense(rows: usize, cols: usize, entries: &[(usize, usize, f64)]) -> Vec<Vec<f64>> {
        let mut d = vec![vec![0.0; cols]; rows];
        for &(r, c, v) in entries {
            d[r][c] += v;
        }
        d
    }

    #[test]
    fn coordinate_general_with_comments_blank_lines_and_crlf() {
        let text = "%%MatrixMarket matrix coordinate real general\r\n% a comment\r\n\r\n  \
                    3 4 4\r\n1 1 1.5\r\n% in between\r\n3 4 -2e1\r\n\r\n2 2 7\r\n1 1 0.25";
        let a = parse(text).unwrap();
        assert_eq!(
            (a.rows(), a.cols(), a.nnz(), a.stored_entries()),
            (3, 4, 4, 4)
        );
        assert_eq!(a.symmetry(), Symmetry::General);
        assert_eq!(
            a.entries(),
            &[(0, 0, 1.5), (2, 3, -20.0), (1, 1, 7.0), (0, 0, 0.25)]
        );
        let csr = a.to_csr();
        assert_eq!(csr.row_offsets(), &[0, 1, 2, 3]);
        assert_eq!(csr.col_indices(), &[0, 1, 3]);
        assert_eq!(csr.values(), &[1.75, 7.0, -20.0]);
        assert_eq!(csr.to_dense(), dense(3, 4, a.entries()));
    }

    #[test]
    fn fields() {
        let p =
            parse("%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 2\n2 1\n").unwrap();
        assert_eq!(p.entries(), &[(0, 1, 1.0), (1, 0, 1.0)]);
        let i =
            parse("%%MATRIXMARKET Matrix Coordinate Integer General\n1 1 1\n1 1 -42\n").unwrap();
        assert_eq!(i.entries(), &[(0, 0, -42.0)]);
        let f = parse(&format!("{GENERAL}1 1 1\n1 1 1.5D+02\n")).unwrap();
        assert_eq!(f.entries(), &[(0, 0, 150.0)]);
        assert!(
            err("%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 1.5\n")
                .1
                .contains("not an integer")
        );
    }

    #[test]
    fn symmetric_and_skew_expansion() {
        let s =
            parse("%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 2\n3 1 5\n3 2 -1\n")
                .unwrap();
        assert_eq!((s.stored_entries(), s.nnz()), (3, 5));
        assert_eq!(
            s.to_csr().to_dense(),
            vec![
                vec![2.0, 0.0, 5.0],
                vec![0.0, 0.0, -1.0],
                vec![5.0, -1.0, 0.0]
            ]
        );
        let k =
            parse("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 1 3\n").unwrap();
        assert_eq!(k.to_csr().to_dense(), vec![vec![0.0, -3.0], vec![3.0, 0.0]]);
        let (line, m) =
            err("%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 1 1\n1 2 1\n");
        assert_eq!(line, 4);
        assert!(m.contains("above the diagonal"), "{m}");
        let (line, m) = err("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 1\n");
        assert_eq!(line, 3);
        assert!(m.contains("strict lower triangle"), "{m}");
        let (line, m) = err("%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n");
        assert_eq!(line, 2);
        assert!(m.contains("must be square"), "{m}");
    }

    #[test]
    fn arrays() {
        let g = parse("%%MatrixMarket matrix array real general\n2 3\n1\n2\n3 4\n5\n6\n").unwrap();
        assert_eq!(
            g.to_csr().to_dense(),
            vec![vec![1.0, 3.0, 5.0], vec![2.0, 4.0, 6.0]]
        );
        assert_eq!(g.nnz(), 6);
        let s =
            parse("%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n").unwrap();
        assert_eq!(
            s.to_csr().to_dense(),
            vec![
                vec![1.0, 2.0, 3.0],
                vec![2.0, 4.0, 5.0],
                vec![3.0, 5.0, 6.0]
            ]
        );
        let k =
            parse("%%MatrixMarket matrix array integer skew-symmetric\n3 3\n1\n2\n3\n").unwrap();
        assert_eq!(
            k.to_csr().to_dense(),
            vec![
                vec![0.0, -1.0, -2.0],
                vec![1.0, 0.0, -3.0],
                vec![2.0, 3.0, 0.0]
            ]
        );
        let empty = parse("%%MatrixMarket matrix array real skew-symmetric\n1 1\n").unwrap();
        assert_eq!(empty.nnz(), 0);
        let (line, m) = err("%%MatrixMarket matrix array real general\n1 2\n1\n2\n3\n");
        assert_eq!(line, 5);
        assert!(m.contains("more values than the 2"), "{m}");
        let (line, m) = err("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n");
        assert_eq!(line, 5);
        assert!(m.contains("expected 4 values"), "{m}");
        assert!(
            err("%%MatrixMarket matrix array pattern general\n1 1\n")
                .1
                .contains("pattern")
        );
    }

    #[test]
    fn header_errors() {
        assert_eq!(err("").0, 1);
        assert!(err("hello\n1 1 1\n").1.contains("banner"));
        assert!(
            err("%%MatrixMarket matrix coordinate real\n")
                .1
                .contains("found 3")
        );
        assert!(
            err("%%MatrixMarket tensor coordinate real general\n")
                .1
                .contains("tensor")
        );
        assert!(
            err("%%MatrixMarket matrix sparse real general\n")
                .1
                .contains("sparse")
        );
        assert!(
            err("%%MatrixMarket matrix coordinate quaternion general\n")
                .1
                .contains("quaternion")
        );
        assert!(
            err("%%MatrixMarket matrix coordinate real diagonal\n")
                .1
                .contains("diagonal")
        );
        for (text, what) in [
            (
                "%%MatrixMarket matrix coordinate complex general\n",
                "complex",
            ),
            (
                "%%MatrixMarket matrix coordinate real hermitian\n",
                "hermitian",
            ),
            ("%%MatrixMarket vector coordinate real general\n", "vector"),
        ] {
            match parse(text) {
                Err(e @ MmError::Unsupported { .. }) => {
                    assert_eq!(e.line(), Some(1));
                    assert_eq!(
                        e.to_string(),
                        format!("line 1: {what} matrices are not supported")
                    );
                }
                other => panic!("{text}: {other:?}"),
            }
        }
    }

    #[test]
    fn body_errors_name_their_line() {
        let cases: &[(&str, usize, &str)] = &[
            ("", 1, "missing the size line"),
            ("% only a comment\n", 2, "missing the size line"),
            ("2 2\n", 2, "needs 3 numbers"),
            ("2 -2 1\n", 2, "`-2` is not a non-negative integer"),
            ("2 2 1\n0 1 1.0\n", 3, "row index 0 is outside 1..=2"),
            ("2 2 1\n1 3 1.0\n", 3, "column index 3 is outside 1..=2"),
            (
                "2 2 1\n1 x 1.0\n",
                3,
                "column index `x` is not a positive integer",
            ),
            ("2 2 1\n1\n", 3, "missing the column index"),
            ("2 2 1\n1 1\n", 3, "missing the value"),
            ("2 2 1\n1 1 abc\n", 3, "value `abc` is not a number"),
            ("2 2 1\n1 1 1 1\n", 3, "unexpected `1` after the entry"),
            (
                "2 2 1\n1 1 1\n% c\n2 2 2\n",
                5,
                "more entries than the 1 announced on line 2",
            ),
            (
                "2 2 3\n1 1 1\n2 2 2\n",
                4,
                "expected 3 entries (line 2), found 2",
            ),
        ];
        for &(body, line, needle) in cases {
            let (l, m) = err(&format!("{GENERAL}{body}"));
            assert_eq!(l, line, "{body:?}: {m}");
            assert!(m.contains(needle), "{body:?}: {m}");
        }
        let e = parse(&format!("{GENERAL}2 2 1\n3 1 1\n")).unwrap_err();
        assert_eq!(e.to_string(), "line 3: row index 3 is outside 1..=2");
    }

    #[test]
    fn read_names_the_file() {
        let missing = read("/nonexistent/dir/x.mtx").unwrap_err();
        assert!(matches!(missing, MmError::Io { .. }));
        assert!(
            missing
                .to_string()
                .starts_with("cannot read /nonexistent/dir/x.mtx: ")
        );
        assert!(std::error::Error::source(&missing).is_some());
        let dir = std::env::temp_dir().join(format!("dpl-mm-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("bad.mtx");
        std::fs::write(&file, format!("{GENERAL}1 1 1\n1 1 nope\n")).unwrap();
        let e = read(&file).unwrap_err();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(e.line(), Some(3));
        assert_eq!(
            e.to_string(),
            format!("{}:3: value `nope` is not a number", file.display())
        );
    }

    #[test]
    fn huge_announced_count_does_not_allocate() {
        let e = err(&format!("{GENERAL}10 10 {}\n1 1 1\n", usize::MAX));
        assert!(e.1.contains("found 1"), "{}", e.1);
    }

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
    fn to_csr_matches_dense_accumulation() {
        let mut rng = SplitMix64::new(5);
        let (rows, cols) = (17, 11);
        let entries: Vec<(usize, usize, f64)> = (0..200)
            .map(|_| {
                let r = rng.below(rows as u64) as usize;
                let c = rng.below(cols as u64) as usize;
                // Small integers: sums are exact whatever the order.
                (r, c, rng.below(9) as f64 - 4.0)
            })
            .collect();
        let a = CooMatrix::from_triplets(rows, cols, entries.clone()).unwrap();
        let csr = a.to_csr();
        assert_eq!(csr.to_dense(), dense(rows, cols, &entries));
        // Strictly increasing columns, every (r, c) that appears once.
        let mut distinct: Vec<(usize, usize)> = entries.iter().map(|&(r, c, _)| (r, c)).collect();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(csr.nnz(), distinct.len());
        assert!(
            Csr::from_parts(
                cols,
                csr.row_offsets().to_vec(),
                csr.col_indices().to_vec(),
                csr.values().to_vec()
            )
            .is_ok()
        );
    }

    #[test]
    fn ell_and_nested_agree_with_csr() {
        for a in [
            Csr::random(30, 20, 5, 1),
            Csr::power_law(50, 40, 1, 1.1, 2),
            Csr::laplacian_2d(4, 3),
        ] {
            let x = random_vector(a.cols(), 9);
            let want = a.spmv(&x);
            let (vals, cols) = a.to_ell_f64();
            assert_eq!(vals.strides(), (1, a.rows()));
            let ell: Vec<f64> = (0..a.rows())
                .map(|r| {
                    vals.row(r)
                        .iter()
                        .zip(cols.row(r).iter())
                        .map(|(v, &c)| v * x[c as usize])
                        .sum()
                })
                .collect();
            let (nv, nc) = a.to_nested_f64();
            let nested: Vec<f64> = (0..a.rows())
                .map(|r| {
                    nv.row(r)
                        .iter()
                        .zip(nc.row(r))
                        .map(|(v, &c)| v * x[c as usize])
                        .sum()
                })
                .collect();
            for r in 0..a.rows() {
                assert!(
                    (ell[r] - want[r]).abs() <= 1e-12,
                    "row {r}: {} vs {}",
                    ell[r],
                    want[r]
                );
                assert_eq!(nested[r], want[r]);
            }
            let (v32, c32) = a.to_nested();
            assert_eq!(c32, nc);
            assert_eq!(
                v32.values(),
                a.values().iter().map(|&v| v as f32).collect::<Vec<_>>()
            );
            let (e32, ec) = a.to_ell();
            assert_eq!(ec, cols);
            assert_eq!(e32.to_row_vecs().concat().len(), a.rows() * vals.cols());
        }
        // No columns: no entries, width 0.
        let empty = Csr::random(3, 0, 4, 1);
        let (v, c) = empty.to_ell();
        assert_eq!((v.shape(), c.shape()), ((3, 0), (3, 0)));
    }

    #[test]
    fn generators() {
        let a = Csr::random(200, 30, 8, 11);
        assert!(a.row_lengths().iter().all(|&l| l == 8));
        assert!(a.values().iter().all(|v| (-1.0..1.0).contains(v)));
        assert_ne!(a, Csr::random(200, 30, 8, 12));
        assert!(
            Csr::random(5, 4, 10, 0)
                .row_lengths()
                .iter()
                .all(|&l| l == 4)
        );
        // Every column of a 4-of-30 row equally likely: check all columns get used.
        let mut seen = [false; 30];
        for &c in a.col_indices() {
            seen[c as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));

        let l = Csr::laplacian_2d(5, 4);
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

        let p = Csr::power_law(2000, 500, 3, 1.5, 4);
        assert_eq!(p, Csr::power_law(2000, 500, 3, 1.5, 4));
        let lens = p.row_lengths();
        assert!(lens.iter().all(|&n| (3..=500).contains(&n)));
        let short = lens.iter().filter(|&&n| n < 10).count();
        assert!(short > 1500, "{short} short rows");
        assert!(lens.iter().any(|&n| n > 100));
    }

    #[test]
    fn splitmix_reference_values() {
        // The first outputs of the reference SplitMix64 for seed 0.
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        // `below` is unbiased enough to be roughly uniform over a small range.
        let mut counts = [0usize; 7];
        for _ in 0..70_000 {
            counts[r.below(7) as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (9_000..11_000).contains(&c)),
            "{counts:?}"
        );
    }

    #[test]
    #[should_panic(expected = "x has 2 elements, the matrix 3 columns")]
    fn spmv_checks_length() {
        Csr::laplacian_2d(3, 1).spmv(&[1.0, 2.0]);
    }
}
