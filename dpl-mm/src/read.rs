//! The Matrix Market header and the reader: [`read`] (a file) and [`parse`] (text).

use std::path::Path;

use crate::{CooMatrix, MAX_COLS, MmError};

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

/// Reads a Matrix Market file (see the [crate documentation](crate) for what is accepted).
///
/// # Errors
///
/// [`MmError::Io`] if the file cannot be read; otherwise as [`parse`], with the path in the
/// error.
///
/// ```no_run
/// let a = dpl_mm::read("matrices/1138_bus.mtx")?.to_csr();
/// println!("{} x {} with {} entries", a.rows(), a.cols(), a.nnz());
/// # Ok::<(), dpl_mm::MmError>(())
/// ```
pub fn read(path: impl AsRef<Path>) -> Result<CooMatrix<f64>, MmError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|source| MmError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse(&text).map_err(|e| e.in_file(path))
}

/// Parses Matrix Market text (see the [crate documentation](crate) for what is accepted).
///
/// # Errors
///
/// [`MmError::Parse`] with the line number for malformed input, [`MmError::Unsupported`]
/// for complex, hermitian or vector files.
///
/// ```
/// let e = dpl_mm::parse("%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1.0\n")
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
    Ok(CooMatrix::parsed(
        rows,
        cols,
        reader.entries,
        header.symmetry,
        reader.stored,
    ))
}

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
}
