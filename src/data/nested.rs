//! [`Nested<T>`]: a ragged sequence of sequences in one flat buffer.
//!
//! The representation, its invariants and the design are documented on [`Nested`] itself
//! (this module is private; the type is re-exported at the crate root).

use std::fmt;
use std::ops::Index;
use std::sync::Arc;

use dpl_core::run::Error;
use dpl_cpu::rt::Idx;

use super::IndexBound;

/// A ragged sequence of sequences: flat `values` plus row `offsets` (rows may be empty).
///
/// In a `#[parallel]` body a `&Nested<T>` is a `[[T]]`: a sequence whose elements are its
/// rows. See *Representation* below.
///
/// ```
/// use dpl::Nested;
///
/// let n = Nested::from_rows(vec![vec![1, 2, 3], vec![], vec![4]]);
/// assert_eq!(n.len(), 3);
/// assert_eq!(n.row(0), &[1, 2, 3]);
/// assert!(n[1].is_empty());
/// assert_eq!(n.values(), &[1, 2, 3, 4]);
/// assert_eq!(n.offsets(), &[0, 3, 3, 4]);
/// assert_eq!(n.to_vecs(), vec![vec![1, 2, 3], vec![], vec![4]]);
/// ```
///
/// # Representation
///
/// A `Nested<T>` with `n` rows is two vectors:
///
/// * `values`: every element of every row, row after row (row 0 first);
/// * `offsets`: `n + 1` positions into `values`; row `i` is `values[offsets[i]..offsets[i + 1]]`.
///
/// The invariants, checked by every constructor and kept by every method:
///
/// 1. `offsets.len() == rows + 1` (so `offsets` is never empty; zero rows is `[0]`);
/// 2. `offsets[0] == 0`;
/// 3. `offsets` is non-decreasing (equal neighbours are empty rows);
/// 4. `offsets[rows] == values.len()`.
///
/// This is the segment-descriptor form of Copperhead and NESL (values plus the start of each
/// segment), the same layout as the row part of a CSR sparse matrix. Generated code reads a
/// row with [`Nested::row`], a cheap slice of `values` (two loads and a bounds-checked
/// slice), and builds results with [`Nested::from_parts`] or [`Nested::from_lengths`].
///
/// Two `Nested` are equal when they have the same rows with the same elements; thanks to
/// the invariants that is exactly equality of `values` and `offsets`.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Nested<T> {
    /// Every element of every row, row 0 first. `values.len() == offsets[rows]`.
    values: Vec<T>,
    /// Row boundaries: `rows + 1` entries, starting at 0, non-decreasing, ending at
    /// `values.len()`. Shared (not copied) by clones, by [`Nested::map_values`] and by
    /// [`Nested::with_offsets_of`], so that [`Nested::same_offsets`] can tell in one
    /// pointer comparison that two `Nested` have the same rows structure.
    offsets: Arc<[usize]>,
    /// The length of the longest row (0 without rows), kept by every constructor and by
    /// [`Nested::push_row`]: `inner = "auto"` reads it on every call, and the structure is
    /// immutable otherwise. A function of `offsets`, so the derived traits stay exact.
    longest: usize,
    /// For integer values: the shortest sequence every value indexes
    /// ([`Nested::__indices_below`]), computed on first use and forgotten by every method
    /// that can change a value. Not part of the value: ignored by the derived traits.
    bound: IndexBound,
}

fn malformed(detail: String) -> Error {
    Error::Malformed {
        what: "Nested",
        detail,
    }
}

impl<T> Nested<T> {
    /// A `Nested` with no rows.
    ///
    /// ```
    /// let n = dpl::Nested::<f32>::new();
    /// assert!(n.is_empty());
    /// assert_eq!(n.offsets(), &[0]);
    /// ```
    pub fn new() -> Self {
        Self::assemble(Vec::new(), Arc::new([0]), 0)
    }

    /// Builds a `Nested` from anything that iterates over rows, each row being anything
    /// that iterates over elements: `Vec<Vec<T>>`, an array of arrays, an iterator of
    /// iterators, ...
    ///
    /// For rows given as borrowed slices, see [`Nested::from_slices`].
    ///
    /// ```
    /// use dpl::Nested;
    ///
    /// let a = Nested::from_rows([[1, 2], [3, 4]]);
    /// let b = Nested::from_rows((0..3).map(|i| 0..i));
    /// assert_eq!(a.to_vecs(), vec![vec![1, 2], vec![3, 4]]);
    /// assert_eq!(b.to_vecs(), vec![vec![], vec![0], vec![0, 1]]);
    /// ```
    pub fn from_rows<R>(rows: R) -> Self
    where
        R: IntoIterator,
        R::Item: IntoIterator<Item = T>,
    {
        let rows = rows.into_iter();
        let mut offsets = Vec::with_capacity(rows.size_hint().0 + 1);
        offsets.push(0);
        let mut values = Vec::new();
        let mut longest = 0;
        for row in rows {
            let before = values.len();
            values.extend(row);
            longest = longest.max(values.len() - before);
            offsets.push(values.len());
        }
        Self::assemble(values, offsets.into(), longest)
    }

    /// Builds a `Nested` from its parts, checking every invariant (see
    /// [`Nested`]).
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] (with `what: "Nested"`) naming the first violated invariant.
    ///
    /// ```
    /// use dpl::Nested;
    ///
    /// let n = Nested::from_parts(vec![1.0, 2.0, 3.0], vec![0, 1, 1, 3]).unwrap();
    /// assert_eq!(n.to_vecs(), vec![vec![1.0], vec![], vec![2.0, 3.0]]);
    ///
    /// // The last offset must be the number of values.
    /// let e = Nested::from_parts(vec![1.0, 2.0], vec![0, 1]).unwrap_err();
    /// assert!(e.to_string().contains("last offset"));
    /// ```
    pub fn from_parts(values: Vec<T>, offsets: Vec<usize>) -> Result<Self, Error> {
        let Some(&first) = offsets.first() else {
            return Err(malformed(
                "offsets is empty (it needs rows + 1 entries, starting with 0)".into(),
            ));
        };
        if first != 0 {
            return Err(malformed(format!("offsets[0] is {first}, expected 0")));
        }
        // One pass finds the longest row and whether some neighbours decrease (only then is
        // the first such row searched for the message).
        let mut longest = 0usize;
        let mut decreasing = false;
        for w in offsets.windows(2) {
            decreasing |= w[0] > w[1];
            longest = longest.max(w[1].wrapping_sub(w[0]));
        }
        if let Some(i) = decreasing
            .then(|| offsets.windows(2).position(|w| w[0] > w[1]))
            .flatten()
        {
            return Err(malformed(format!(
                "offsets decrease at row {i}: offsets[{i}] = {} > offsets[{}] = {}",
                offsets[i],
                i + 1,
                offsets[i + 1]
            )));
        }
        let last = offsets[offsets.len() - 1];
        Self::ending_at(values, offsets, longest, "last offset is", last)
    }

    /// The `Nested` of `values` split by valid `offsets` whose longest row has `longest`
    /// values, with no index bound computed yet.
    fn assemble(values: Vec<T>, offsets: Arc<[usize]>, longest: usize) -> Self {
        Nested {
            values,
            offsets,
            longest,
            bound: IndexBound::default(),
        }
    }

    /// The `Nested` of valid `offsets` (starting at 0, never decreasing) whose last entry
    /// is `end`, if `end` is the number of values; else the error `"{what} {end} but
    /// there are n values"`.
    fn ending_at(
        values: Vec<T>,
        offsets: Vec<usize>,
        longest: usize,
        what: &str,
        end: usize,
    ) -> Result<Self, Error> {
        if end != values.len() {
            return Err(malformed(format!(
                "{what} {end} but there are {} values",
                values.len()
            )));
        }
        Ok(Self::assemble(values, offsets.into(), longest))
    }

    /// Builds a `Nested` from flat values and the length of each row.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] if the lengths do not add up to `values.len()`.
    ///
    /// ```
    /// use dpl::Nested;
    ///
    /// let n = Nested::from_lengths(vec!['a', 'b', 'c'], [2, 0, 1]).unwrap();
    /// assert_eq!(n.offsets(), &[0, 2, 2, 3]);
    /// assert!(Nested::from_lengths(vec!['a'], [2]).is_err());
    /// ```
    pub fn from_lengths<L>(values: Vec<T>, lengths: L) -> Result<Self, Error>
    where
        L: IntoIterator<Item = usize>,
    {
        let lengths = lengths.into_iter();
        let mut offsets = Vec::with_capacity(lengths.size_hint().0 + 1);
        offsets.push(0usize);
        let mut end = 0usize;
        let mut longest = 0;
        for (row, len) in lengths.enumerate() {
            longest = longest.max(len);
            end = match end.checked_add(len) {
                Some(e) if e <= values.len() => e,
                _ => {
                    return Err(malformed(format!(
                        "row lengths exceed the {} values (at row {row}, length {len})",
                        values.len()
                    )));
                }
            };
            offsets.push(end);
        }
        Self::ending_at(values, offsets, longest, "row lengths add up to", end)
    }

    /// The number of rows.
    #[inline]
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// `true` if there are no rows (a `Nested` of empty rows is not empty).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `i` as a slice.
    ///
    /// # Panics
    ///
    /// If `i >= self.len()`, with a message giving the index and the number of rows.
    ///
    /// ```
    /// let n = dpl::Nested::from_rows([vec![1], vec![2, 3]]);
    /// assert_eq!(n.row(1), &[2, 3]);
    /// ```
    #[inline]
    #[track_caller]
    pub fn row(&self, i: usize) -> &[T] {
        match self.get(i) {
            Some(r) => r,
            None => row_out_of_range(i, self.len()),
        }
    }

    /// Row `i` as a slice, without the range check: what generated code uses for reads
    /// that the compiler proved in range.
    ///
    /// # Safety
    ///
    /// `i < self.len()`.
    ///
    /// ```
    /// let n = dpl::Nested::from_rows([vec![1], vec![2, 3]]);
    /// // SAFETY: 1 < 2 rows.
    /// assert_eq!(unsafe { n.row_unchecked(1) }, &[2, 3]);
    /// ```
    #[inline]
    pub unsafe fn row_unchecked(&self, i: usize) -> &[T] {
        debug_assert!(i < self.len());
        // SAFETY: `i + 1 < offsets.len()` by the caller's promise; by the invariants the
        // offsets are non-decreasing and end at `values.len()`, so `lo..hi` is in `values`.
        unsafe {
            let lo = *self.offsets.get_unchecked(i);
            let hi = *self.offsets.get_unchecked(i + 1);
            self.values.get_unchecked(lo..hi)
        }
    }

    /// Row `i` as a slice, or `None` if `i >= self.len()`.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&[T]> {
        if i < self.len() {
            Some(&self.values[self.offsets[i]..self.offsets[i + 1]])
        } else {
            None
        }
    }

    /// Row `i` as a mutable slice (the row structure cannot change through it).
    ///
    /// # Panics
    ///
    /// If `i >= self.len()`.
    #[inline]
    #[track_caller]
    pub fn row_mut(&mut self, i: usize) -> &mut [T] {
        if i >= self.len() {
            row_out_of_range(i, self.len());
        }
        self.bound = IndexBound::default();
        &mut self.values[self.offsets[i]..self.offsets[i + 1]]
    }

    /// The length of row `i`.
    ///
    /// # Panics
    ///
    /// If `i >= self.len()`.
    #[inline]
    #[track_caller]
    pub fn row_len(&self, i: usize) -> usize {
        if i >= self.len() {
            row_out_of_range(i, self.len());
        }
        self.offsets[i + 1] - self.offsets[i]
    }

    /// An iterator over the rows, as slices.
    ///
    /// ```
    /// let n = dpl::Nested::from_rows([vec![1, 2], vec![], vec![3]]);
    /// let sums: Vec<i32> = n.rows().map(|r| r.iter().sum()).collect();
    /// assert_eq!(sums, vec![3, 0, 3]);
    /// ```
    pub fn rows(&self) -> Rows<'_, T> {
        Rows::new(self, self.len())
    }

    /// The same as [`Nested::rows`]: the elements of a `Nested` in the DSL are its rows.
    pub fn iter(&self) -> Rows<'_, T> {
        self.rows()
    }

    /// An iterator over the row lengths.
    ///
    /// ```
    /// let n = dpl::Nested::from_rows([vec![1, 2], vec![], vec![3]]);
    /// assert_eq!(n.row_lengths().collect::<Vec<_>>(), vec![2, 0, 1]);
    /// ```
    pub fn row_lengths(&self) -> impl ExactSizeIterator<Item = usize> + '_ {
        self.offsets.windows(2).map(|w| w[1] - w[0])
    }

    /// The length of the longest row (0 if there are no rows). Constant time: it is
    /// computed on construction.
    #[inline]
    pub fn max_row_len(&self) -> usize {
        self.longest
    }

    /// All elements, row after row.
    #[inline]
    pub fn values(&self) -> &[T] {
        &self.values
    }

    /// All elements, mutable (the row structure cannot change through it).
    #[inline]
    pub fn values_mut(&mut self) -> &mut [T] {
        self.bound = IndexBound::default();
        &mut self.values
    }

    /// The row offsets: `len() + 1` entries, row `i` is `values()[offsets[i]..offsets[i + 1]]`.
    #[inline]
    pub fn offsets(&self) -> &[usize] {
        &self.offsets
    }

    /// The total number of elements over all rows (`values().len()`).
    #[inline]
    pub fn total_len(&self) -> usize {
        self.values.len()
    }

    /// Takes the `Nested` apart into `(values, offsets)`; [`Nested::from_parts`] puts it
    /// back together.
    ///
    /// ```
    /// let n = dpl::Nested::from_rows([vec![7], vec![8, 9]]);
    /// let (values, offsets) = n.clone().into_parts();
    /// assert_eq!((values.as_slice(), offsets.as_slice()), (&[7, 8, 9][..], &[0, 1, 3][..]));
    /// assert_eq!(dpl::Nested::from_parts(values, offsets).unwrap(), n);
    /// ```
    ///
    /// The offsets are copied out (they may be shared with other `Nested`).
    pub fn into_parts(self) -> (Vec<T>, Vec<usize>) {
        (self.values, self.offsets.to_vec())
    }

    /// Appends a row.
    ///
    /// ```
    /// let mut n = dpl::Nested::new();
    /// n.push_row([1, 2]);
    /// n.push_row([]);
    /// assert_eq!(n.to_vecs(), vec![vec![1, 2], vec![]]);
    /// ```
    ///
    /// The offsets are shared storage (see [`Nested::same_offsets`]), so appending copies
    /// them (`O(rows)` per call) and ends any sharing; build a `Nested` of many rows with
    /// [`Nested::from_rows`] or [`Nested::from_lengths`] instead.
    pub fn push_row<R: IntoIterator<Item = T>>(&mut self, row: R) {
        let before = self.values.len();
        self.values.extend(row);
        self.bound = IndexBound::default();
        self.longest = self.longest.max(self.values.len() - before);
        let mut offsets = Vec::with_capacity(self.offsets.len() + 1);
        offsets.extend_from_slice(&self.offsets);
        offsets.push(self.values.len());
        self.offsets = offsets.into();
    }

    /// A `Nested` with the same rows structure and `f` applied to every element.
    ///
    /// ```
    /// let n = dpl::Nested::from_rows([vec![1, 2], vec![3]]);
    /// assert_eq!(n.map_values(|v| v * 10).to_vecs(), vec![vec![10, 20], vec![30]]);
    /// ```
    ///
    /// The result shares this `Nested`'s offsets ([`Nested::same_offsets`] holds).
    pub fn map_values<U>(&self, f: impl FnMut(&T) -> U) -> Nested<U> {
        Nested::assemble(
            self.values.iter().map(f).collect(),
            Arc::clone(&self.offsets),
            self.longest,
        )
    }

    /// A `Nested` of `values` with the rows structure of `other`, sharing its offsets
    /// (not copying them): row `i` of the result is as long as row `i` of `other`, and
    /// [`Nested::same_offsets`] holds between the two. The values and the column indices
    /// of a CSR matrix are such a pair (`dpl::mm::CsrExt::to_nested` builds one).
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] unless `values.len() == other.total_len()`.
    ///
    /// ```
    /// let cols = dpl::Nested::from_rows([vec![0u32, 2], vec![1]]);
    /// let vals = dpl::Nested::with_offsets_of(&cols, vec![1.0f32, 2.0, 3.0]).unwrap();
    /// assert_eq!(vals.to_vecs(), vec![vec![1.0, 2.0], vec![3.0]]);
    /// assert!(vals.same_offsets(&cols));
    /// assert!(dpl::Nested::with_offsets_of(&cols, vec![1.0f32]).is_err());
    /// ```
    pub fn with_offsets_of<U>(other: &Nested<U>, values: Vec<T>) -> Result<Self, Error> {
        if values.len() != other.total_len() {
            return Err(malformed(format!(
                "{} values for the offsets of a Nested of {} elements in {} rows",
                values.len(),
                other.total_len(),
                other.len()
            )));
        }
        Ok(Self::assemble(
            values,
            Arc::clone(&other.offsets),
            other.longest,
        ))
    }

    /// Whether `self` and `other` share one offsets array (built from one another by
    /// [`Nested::with_offsets_of`], [`Nested::map_values`] or `clone`): a pointer
    /// comparison, nothing else, so `false` does not mean the rows differ in length.
    /// When it holds, row `i` of both has the same length for every `i`; generated code
    /// tests it once per call to read one offsets array for both and skip the per-row
    /// length comparison when it zips their rows.
    ///
    /// ```
    /// let a = dpl::Nested::from_rows([vec![1, 2], vec![3]]);
    /// let b = a.map_values(|v| v * 2);
    /// let c = dpl::Nested::from_rows([vec![2, 4], vec![6]]);
    /// assert!(a.same_offsets(&b));
    /// assert!(!b.same_offsets(&c)); // equal offsets, but not shared
    /// ```
    #[inline]
    pub fn same_offsets<U>(&self, other: &Nested<U>) -> bool {
        Arc::ptr_eq(&self.offsets, &other.offsets)
    }
}

impl<T: Idx> Nested<T> {
    /// Whether every value is a valid index into a sequence of length `len` (in `0..len`).
    ///
    /// Generated code asks this before a loop whose reads `x[c]` take their index `c` from
    /// this `Nested` (SpMV's `x[cols[i][k]]`), and runs that loop without per-read checks
    /// when it holds. The bound behind the answer is computed on the first call (one pass
    /// over the values) and kept with the data, so every later call with the
    /// same matrix costs one comparison; every method that can change a value
    /// (`values_mut`, `row_mut`, `push_row`) forgets it.
    #[doc(hidden)]
    pub fn __indices_below(&self, len: usize) -> bool {
        self.bound.below(&self.values, len)
    }
}

impl<T: Clone> Nested<T> {
    /// Builds a `Nested` by copying borrowed rows (`&[Vec<T>]`, `&[&[T]]`, ...).
    ///
    /// ```
    /// let rows: [&[u32]; 2] = [&[1, 2], &[]];
    /// let n = dpl::Nested::from_slices(&rows);
    /// assert_eq!(n.to_vecs(), vec![vec![1, 2], vec![]]);
    /// ```
    pub fn from_slices<S: AsRef<[T]>>(rows: &[S]) -> Self {
        let total = rows.iter().map(|r| r.as_ref().len()).sum();
        let mut values = Vec::with_capacity(total);
        let mut offsets = Vec::with_capacity(rows.len() + 1);
        offsets.push(0);
        let mut longest = 0;
        for r in rows {
            values.extend_from_slice(r.as_ref());
            longest = longest.max(r.as_ref().len());
            offsets.push(values.len());
        }
        Self::assemble(values, offsets.into(), longest)
    }

    /// The rows copied into a `Vec` of `Vec`s.
    pub fn to_vecs(&self) -> Vec<Vec<T>> {
        self.rows().map(<[T]>::to_vec).collect()
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn row_out_of_range(i: usize, rows: usize) -> ! {
    panic!("Nested: row index {i} out of range for {rows} rows")
}

impl<T> Default for Nested<T> {
    fn default() -> Self {
        Nested::new()
    }
}

impl<T> Index<usize> for Nested<T> {
    type Output = [T];

    #[inline]
    #[track_caller]
    fn index(&self, i: usize) -> &[T] {
        self.row(i)
    }
}

impl<T: fmt::Debug> fmt::Debug for Nested<T> {
    /// Formats as the list of rows, e.g. `Nested[[1, 2], [], [3]]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Nested")?;
        f.debug_list().entries(self.rows()).finish()
    }
}

impl<T> From<Vec<Vec<T>>> for Nested<T> {
    /// Moves the rows into one buffer allocated at its final size (the generated code of a
    /// function with a ragged result builds its rows as `Vec`s and converts them here).
    fn from(rows: Vec<Vec<T>>) -> Self {
        let total = rows.iter().map(Vec::len).sum();
        let mut values = Vec::with_capacity(total);
        let mut offsets = Vec::with_capacity(rows.len() + 1);
        offsets.push(0);
        let mut longest = 0;
        for row in rows {
            longest = longest.max(row.len());
            values.extend(row);
            offsets.push(values.len());
        }
        Self::assemble(values, offsets.into(), longest)
    }
}

impl<T> From<dpl_cpu::heavy::Ragged<T>> for Nested<T> {
    /// Takes over a ragged result built in place by the CPU run time (the generated code
    /// of a function with a ragged result). Its parts satisfy the invariants by
    /// construction (only `dpl_cpu::heavy` builds a `Ragged`), so nothing is checked or
    /// copied; debug builds check anyway.
    fn from(r: dpl_cpu::heavy::Ragged<T>) -> Self {
        let (values, offsets, longest) = r.into_parts();
        debug_assert!(
            offsets.first() == Some(&0)
                && offsets.windows(2).all(|w| w[0] <= w[1])
                && offsets.last() == Some(&values.len())
                && longest == offsets.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0),
            "dpl internal error: malformed ragged result"
        );
        Self::assemble(values, offsets.into(), longest)
    }
}

impl<T: Clone> From<&[Vec<T>]> for Nested<T> {
    fn from(rows: &[Vec<T>]) -> Self {
        Nested::from_slices(rows)
    }
}

impl<T> From<Nested<T>> for Vec<Vec<T>> {
    fn from(n: Nested<T>) -> Self {
        let Nested {
            values, offsets, ..
        } = n;
        let mut rows = Vec::with_capacity(offsets.len() - 1);
        let mut rest = values.into_iter();
        for w in offsets.windows(2) {
            rows.push(rest.by_ref().take(w[1] - w[0]).collect());
        }
        rows
    }
}

/// Collects rows (each anything iterable over `T`, e.g. a `Vec<T>`) into a `Nested`.
///
/// ```
/// let n: dpl::Nested<usize> = (1..4).map(|k| vec![k; k]).collect();
/// assert_eq!(n.row_lengths().collect::<Vec<_>>(), vec![1, 2, 3]);
/// ```
impl<T, R: IntoIterator<Item = T>> FromIterator<R> for Nested<T> {
    fn from_iter<I: IntoIterator<Item = R>>(rows: I) -> Self {
        Nested::from_rows(rows)
    }
}

impl<'a, T> IntoIterator for &'a Nested<T> {
    type Item = &'a [T];
    type IntoIter = Rows<'a, T>;

    fn into_iter(self) -> Rows<'a, T> {
        self.rows()
    }
}

position_iterator!(
    /// The iterator over the rows of a [`Nested`], from [`Nested::rows`].
    Rows<'a>, nested: &'a Nested<T>, &'a [T],
    |n, r| n.row(r)
);

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows a `Nested` must hold, checked against an independent `Vec<Vec<_>>`.
    fn check_against(n: &Nested<i32>, rows: &[Vec<i32>]) {
        assert_eq!(n.len(), rows.len());
        assert_eq!(n.is_empty(), rows.is_empty());
        assert_eq!(n.total_len(), rows.iter().map(Vec::len).sum::<usize>());
        for (i, r) in rows.iter().enumerate() {
            assert_eq!(n.row(i), r.as_slice());
            assert_eq!(&n[i], r.as_slice());
            assert_eq!(n.row_len(i), r.len());
            assert_eq!(n.get(i), Some(r.as_slice()));
        }
        assert_eq!(n.get(rows.len()), None);
        assert_eq!(n.to_vecs(), rows);
        let flat: Vec<i32> = rows.iter().flatten().copied().collect();
        assert_eq!(n.values(), flat.as_slice());
    }

    #[test]
    fn constructors_agree() {
        let rows = vec![vec![], vec![1, 2, 3], vec![], vec![4], vec![]];
        let a = Nested::from_rows(rows.clone());
        check_against(&a, &rows);
        assert_eq!(a.offsets(), &[0, 0, 3, 3, 4, 4]);
        let b = Nested::from_parts(vec![1, 2, 3, 4], vec![0, 0, 3, 3, 4, 4]).unwrap();
        let c = Nested::from_lengths(vec![1, 2, 3, 4], [0, 3, 0, 1, 0]).unwrap();
        let d = Nested::from_slices(&rows);
        let e: Nested<i32> = rows.iter().cloned().collect();
        let f = Nested::from(rows.clone());
        for x in [&b, &c, &d, &e, &f] {
            assert_eq!(x, &a);
        }
        assert_eq!(Vec::<Vec<i32>>::from(a), rows);
    }

    #[test]
    fn empty_and_all_empty_rows() {
        let n: Nested<i32> = Nested::new();
        check_against(&n, &[]);
        assert_eq!(n, Nested::default());
        assert_eq!(n, Nested::from_parts(vec![], vec![0]).unwrap());
        let e = Nested::from_rows(vec![Vec::<i32>::new(); 3]);
        check_against(&e, &[vec![], vec![], vec![]]);
        assert!(!e.is_empty());
        assert_ne!(n, e);
        assert_eq!(e.max_row_len(), 0);
    }

    #[test]
    fn from_parts_rejects_each_invariant() {
        let msg = |v: Vec<i32>, o: Vec<usize>| match Nested::from_parts(v, o) {
            Err(Error::Malformed { what, detail }) => {
                assert_eq!(what, "Nested");
                detail
            }
            other => panic!("expected Malformed, got {other:?}"),
        };
        assert!(msg(vec![], vec![]).contains("offsets is empty"));
        assert!(msg(vec![1], vec![1, 1]).contains("offsets[0] is 1"));
        assert!(msg(vec![1, 2], vec![0, 2, 1, 2]).contains("decrease at row 1"));
        assert!(msg(vec![1, 2], vec![0, 1]).contains("last offset is 1 but there are 2"));
        assert!(msg(vec![1], vec![0, 2]).contains("last offset is 2 but there are 1"));
    }

    #[test]
    fn from_lengths_rejects_bad_sums() {
        assert!(Nested::from_lengths(vec![1, 2, 3], [1, 1]).is_err());
        assert!(Nested::from_lengths(vec![1, 2, 3], [2, 2]).is_err());
        assert!(Nested::from_lengths(vec![1, 2, 3], [usize::MAX, 4]).is_err());
        assert!(
            Nested::<i32>::from_lengths(vec![], std::iter::empty())
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn rows_iterator_both_ends() {
        let n = Nested::from_rows([vec![1], vec![2, 2], vec![], vec![4]]);
        let mut it = n.rows();
        assert_eq!(it.len(), 4);
        assert_eq!(it.next(), Some(&[1][..]));
        assert_eq!(it.next_back(), Some(&[4][..]));
        assert_eq!(it.len(), 2);
        assert_eq!(it.next_back(), Some(&[][..]));
        assert_eq!(it.next(), Some(&[2, 2][..]));
        assert_eq!(it.next(), None);
        assert_eq!(it.next_back(), None);
        assert_eq!(n.rows().nth(3), Some(&[4][..]));
        assert_eq!(n.rows().nth(9), None);
        let rev: Vec<&[i32]> = n.rows().rev().collect();
        assert_eq!(rev, vec![&[4][..], &[], &[2, 2], &[1]]);
        assert_eq!((&n).into_iter().count(), 4);
    }

    #[test]
    #[should_panic(expected = "row index 2 out of range for 2 rows")]
    fn row_out_of_range_panics() {
        let n = Nested::from_rows([vec![1], vec![2]]);
        let _ = n.row(2);
    }

    #[test]
    fn mutation_keeps_structure() {
        let mut n = Nested::from_rows([vec![1, 2], vec![3]]);
        n.row_mut(0)[1] = 20;
        n.values_mut()[2] = 30;
        n.push_row(vec![4, 5]);
        assert_eq!(n.to_vecs(), vec![vec![1, 20], vec![30], vec![4, 5]]);
        assert_eq!(n.max_row_len(), 2);
    }

    #[test]
    fn debug_lists_rows() {
        let n = Nested::from_rows([vec![1, 2], vec![], vec![3]]);
        assert_eq!(format!("{n:?}"), "Nested[[1, 2], [], [3]]");
        let mut rows = n.rows();
        rows.next();
        assert_eq!(format!("{rows:?}"), "[[], [3]]");
    }
}
