//! The primitives of the language, one page each.
//!
//! Inside a `#[parallel]` function the primitives are called by name (`map(f, x)`, not
//! `dpl::primitives::map`): the macro compiles them, so they are not Rust functions. The
//! items here exist to document them where rustdoc and an IDE can show them; each module
//! is named as its primitive and holds nothing.
//!
//! Notation: `[T]` is a sequence of `T` (a slice or `Vec` parameter, a `Seq`, or a value
//! computed in the body), `[[T]]` a sequence of rows (`Nested` or `Matrix`), `f`/`op`/`pred`
//! a closure written in the call or bound with `let`. Every primitive runs on every place
//! (`Seq`, `Cpu`, `Sim`, `Gpu`, `Mpi`; the README's support table names the few nested
//! forms a place does not distribute or compile) with the same results (floating-point
//! reductions bit for bit: every place combines in one order, see [`reduce`]; floating-point
//! `scan`s up to the order of combination),
//! and accepts rows of a `Nested`/`Matrix` wherever it accepts a sequence (inside an
//! element function over the rows, it works per row). Violated contracts are [`Error`]s naming
//! the primitive and the source location: returned by a function declared
//! `-> Result<T, dpl::Error>`, a panic with the same message otherwise.
//!
//! [`Error`]: crate::Error

/// `map(f, xs1, ..., xsn) -> [U]`: `f` applied element-wise, `n` from 1 to 8.
///
/// `y[i] = f(xs1[i], ..., xsn[i])`. The inputs must have the same length, else
/// [`Error::LengthMismatch`](crate::Error::LengthMismatch). `f` may return a tuple (then
/// the result is a sequence of tuples, see [`unzip`]) or a sequence (then the
/// result is a ragged `Nested`). Chains of maps, and maps read by reductions, scans,
/// filters and gathers, fuse into one loop.
///
/// ```
/// use dpl::prelude::*;
///
/// #[parallel]
/// fn saxpy(a: f32, x: &[f32], y: &[f32]) -> Result<Vec<f32>, Error> {
///     map(|xi, yi| a * xi + yi, x, y)
/// }
///
/// assert_eq!(saxpy(2.0, &[1.0, 2.0], &[10.0, 20.0]), Ok(vec![12.0, 24.0]));
/// assert!(matches!(saxpy(2.0, &[1.0], &[1.0, 2.0]), Err(Error::LengthMismatch { .. })));
/// ```
pub mod map {}

/// `zip(a, b, ...) -> [(A, B, ...)]`: the tuples of 2 to 8 sequences of one length.
///
/// `y[i] = (a[i], b[i], ...)`; lengths that differ are
/// [`Error::LengthMismatch`](crate::Error::LengthMismatch). A zip is never materialised
/// when its reader fuses with it.
///
/// ```
/// use dpl::prelude::*;
///
/// #[parallel]
/// fn pairs(a: &[u32], b: &[f32]) -> Vec<(u32, f32)> {
///     zip(a, b)
/// }
///
/// assert_eq!(pairs(&[1, 2], &[0.5, 1.5]), vec![(1, 0.5), (2, 1.5)]);
///
/// #[parallel]
/// fn triples(a: &[u32], b: &[f32], c: &[bool]) -> Vec<(u32, f32, bool)> {
///     zip(a, b, c)
/// }
///
/// assert_eq!(triples(&[1], &[0.5], &[true]), vec![(1, 0.5, true)]);
/// ```
pub mod zip {}

/// `unzip(s) -> ([A], [B], ...)`: a sequence of tuples as a tuple of sequences.
///
/// The inverse of [`zip`], for tuples of any width; each component is
/// computed without materialising the tuples when the producer is a `map`.
///
/// ```
/// use dpl::prelude::*;
///
/// #[parallel]
/// fn split(x: &[i64]) -> (Vec<i64>, Vec<bool>) {
///     unzip(map(|v| (v * v, v < 0), x))
/// }
///
/// assert_eq!(split(&[-2, 3]), (vec![4, 9], vec![true, false]));
/// ```
pub mod unzip {}

/// `gather(x, idx) -> [T]`: `y[i] = x[idx[i]]`.
///
/// `idx` holds indices of any integer type; one outside `0..len(x)` (negative included)
/// is [`Error::IndexOutOfRange`](crate::Error::IndexOutOfRange), the first such `i`
/// reported. `x[i]` inside an element function is the same read for one index.
///
/// ```
/// use dpl::prelude::*;
///
/// #[parallel]
/// fn pick(x: &[f64], idx: &[u32]) -> Result<Vec<f64>, Error> {
///     gather(x, idx)
/// }
///
/// assert_eq!(pick(&[10.0, 20.0, 30.0], &[2, 0, 2]), Ok(vec![30.0, 10.0, 30.0]));
/// assert!(matches!(pick(&[1.0], &[1]), Err(Error::IndexOutOfRange { index: 1, .. })));
/// ```
pub mod gather {}

/// `permute(x, idx) -> [T]`: `y[idx[i]] = x[i]`.
///
/// `idx` must be a permutation of `0..len(x)`: an index out of range is
/// [`Error::IndexOutOfRange`](crate::Error::IndexOutOfRange), an index that appears twice
/// [`Error::NotAPermutation`](crate::Error::NotAPermutation) (reported at its later
/// occurrence); `x` and `idx` must have one length.
///
/// ```
/// use dpl::prelude::*;
///
/// #[parallel]
/// fn place(x: &[u32], idx: &[usize]) -> Result<Vec<u32>, Error> {
///     permute(x, idx)
/// }
///
/// assert_eq!(place(&[7, 8, 9], &[2, 0, 1]), Ok(vec![8, 9, 7]));
/// assert!(matches!(place(&[7, 8], &[1, 1]), Err(Error::NotAPermutation { .. })));
/// ```
pub mod permute {}

/// `scatter(src, idx, dst) -> [T]`: a copy of `dst` with `y[idx[i]] = src[i]`.
///
/// `src` and `idx` have one length; an index outside `0..len(dst)` is
/// [`Error::IndexOutOfRange`](crate::Error::IndexOutOfRange). With repeated indices,
/// which write wins is unspecified.
///
/// ```
/// use dpl::prelude::*;
///
/// #[parallel]
/// fn update(src: &[i32], idx: &[usize], dst: &[i32]) -> Vec<i32> {
///     scatter(src, idx, dst)
/// }
///
/// assert_eq!(update(&[5, 6], &[3, 0], &[0, 0, 0, 0]), vec![6, 0, 0, 5]);
/// ```
pub mod scatter {}

/// `scatter_reduce(op, src, idx, dst) -> [T]`: reduce by index (histograms).
///
/// A copy of `dst` in which each `y[idx[i]]` is combined with `src[i]` by `op`:
/// `y[k] = op(...op(dst[k], src[i1])..., src[im])` over the `i` with `idx[i] == k`. `op`
/// must be associative and commutative (the order of combination is unspecified; float
/// sums may differ by reassociation). Index errors as for [`scatter`].
///
/// ```
/// use dpl::prelude::*;
///
/// #[parallel]
/// fn histogram(keys: &[u32], bins: usize) -> Vec<u32> {
///     scatter_reduce(|a, b| a + b, replicate(1u32, len(keys)), keys, replicate(0u32, bins))
/// }
///
/// assert_eq!(histogram(&[1, 3, 1, 1], 4), vec![0, 3, 0, 1]);
/// ```
pub mod scatter_reduce {}

/// `reduce(op, x, init) -> T`: `init op x[0] op x[1] op ...`.
///
/// `op` must be associative and commutative; `init` is combined once. Tuples reduce leaf
/// by leaf through a tuple-valued `op`.
///
/// **One order everywhere.** The order of combination depends on the length alone:
/// tiles of 2048 elements; in a tile, lane `j` of 32 folds elements `j, j + 32, ...` left
/// to right, then the lanes meet in a tree, halves first (lane `j < s` takes
/// `op(lane j, lane j + s)` for `s` = 16, 8, 4, 2, 1); the tiles' results are reduced the
/// same way (lane `j` folds tiles `j, j + 32, ...`), and `init` comes first. Every place
/// follows it (`Seq`, `Cpu` with any number of threads, `Sim`, `Gpu`, per row inside
/// element functions under every schedule), so floating-point results have the same bits
/// everywhere, and a long sum is about as accurate as pairwise summation. (`Mpi` combines
/// the ranks' results in rank order: the same bits for any number of threads per rank.)
///
/// ```
/// use dpl::prelude::*;
///
/// #[parallel]
/// fn product(x: &[u64]) -> u64 {
///     reduce(|a, b| a * b, x, 1u64)
/// }
///
/// assert_eq!(product(&[2, 3, 7]), 42);
/// assert_eq!(product(&[]), 1);
/// ```
pub mod reduce {}

/// `sum(x) -> T`: the sum of the elements (`0` for an empty sequence).
///
/// Integers wrap, as `wrapping_add` does; floats are added in [`reduce`]'s one order: the
/// same bits on every place (not a left-to-right sum, which is less accurate).
///
/// ```
/// use dpl::prelude::*;
///
/// #[parallel]
/// fn total(x: &[i32]) -> i32 {
///     sum(x)
/// }
///
/// assert_eq!(total(&[1, -2, 40]), 39);
/// ```
pub mod sum {}

/// `min(x) -> T`: the smallest element.
///
/// An empty `x` is [`Error::Empty`](crate::Error::Empty).
///
/// ```
/// use dpl::prelude::*;
///
/// #[parallel]
/// fn lowest(x: &[f32]) -> Result<f32, Error> {
///     min(x)
/// }
///
/// assert_eq!(lowest(&[3.0, -1.5, 2.0]), Ok(-1.5));
/// assert!(matches!(lowest(&[]), Err(Error::Empty { prim: "min", .. })));
/// ```
pub mod min {}

/// `max(x) -> T`: the largest element; an empty `x` is
/// [`Error::Empty`](crate::Error::Empty).
///
/// ```
/// use dpl::prelude::*;
///
/// #[parallel]
/// fn highest(x: &[i64]) -> i64 {
///     max(x)
/// }
///
/// assert_eq!(highest(&[3, -1, 9]), 9);
/// ```
pub mod max {}

/// `any(x)`, `any(pred, x) -> bool`: whether some element is `true` (satisfies `pred`);
/// `false` for an empty sequence.
///
/// ```
/// use dpl::prelude::*;
///
/// #[parallel]
/// fn has_negative(x: &[f64]) -> bool {
///     any(|v| v < 0.0, x)
/// }
///
/// assert!(has_negative(&[1.0, -0.5]));
/// assert!(!has_negative(&[]));
/// ```
pub mod any {}

/// `all(x)`, `all(pred, x) -> bool`: whether every element is `true` (satisfies `pred`);
/// `true` for an empty sequence.
///
/// ```
/// use dpl::prelude::*;
///
/// #[parallel]
/// fn sorted(x: &[u32]) -> bool {
///     all(|i| i == 0 || x[i - 1] <= x[i], indices(x))
/// }
///
/// assert!(sorted(&[1, 2, 2, 5]));
/// assert!(!sorted(&[2, 1]));
/// ```
pub mod all {}

/// `count(x)`, `count(pred, x) -> usize`: how many elements are `true` (satisfy `pred`).
///
/// ```
/// use dpl::prelude::*;
///
/// #[parallel]
/// fn evens(x: &[u64]) -> usize {
///     count(|v| v % 2 == 0, x)
/// }
///
/// assert_eq!(evens(&[1, 2, 4, 7]), 2);
/// ```
pub mod count {}

/// `scan(op, x) -> [T]`: the inclusive scan, `y[0] = x[0]`, `y[i] = op(y[i - 1], x[i])`.
///
/// `op` must be associative (its order is kept: no commutativity needed).
///
/// ```
/// use dpl::prelude::*;
///
/// #[parallel]
/// fn running_max(x: &[i32]) -> Vec<i32> {
///     scan(|a, b| a.max(b), x)
/// }
///
/// assert_eq!(running_max(&[3, 1, 4, 1, 5]), vec![3, 3, 4, 4, 5]);
/// ```
pub mod scan {}

/// `exclusive_scan(op, x, init) -> [T]`: `y[0] = init`, `y[i] = op(y[i - 1], x[i - 1])`.
///
/// The offsets of rows from their lengths are the usual use.
///
/// ```
/// use dpl::prelude::*;
///
/// #[parallel]
/// fn offsets(lengths: &[usize]) -> Vec<usize> {
///     exclusive_scan(|a, b| a + b, lengths, 0usize)
/// }
///
/// assert_eq!(offsets(&[2, 0, 3]), vec![0, 2, 2]);
/// ```
pub mod exclusive_scan {}

/// `filter(pred, x) -> [T]`: the elements satisfying `pred`, in order.
///
/// ```
/// use dpl::prelude::*;
///
/// #[parallel]
/// fn positives(x: &[f32]) -> Vec<f32> {
///     filter(|v| v > 0.0, x)
/// }
///
/// assert_eq!(positives(&[1.0, -2.0, 3.0]), vec![1.0, 3.0]);
/// ```
pub mod filter {}

/// `replicate(v, n) -> [T]`: `n` copies of `v`.
///
/// Read element-wise it is never materialised (see [`scatter_reduce`]).
///
/// ```
/// use dpl::prelude::*;
///
/// #[parallel]
/// fn zeros(n: usize) -> Vec<f64> {
///     replicate(0.0f64, n)
/// }
///
/// assert_eq!(zeros(3), vec![0.0; 3]);
/// ```
pub mod replicate {}

/// `indices(x) -> [usize]`: `[0, 1, ..., len(x) - 1]`.
///
/// ```
/// use dpl::prelude::*;
///
/// #[parallel]
/// fn weighted(x: &[f32]) -> Vec<f32> {
///     map(|i| i as f32 * x[i], indices(x))
/// }
///
/// assert_eq!(weighted(&[5.0, 5.0, 5.0]), vec![0.0, 5.0, 10.0]);
/// ```
pub mod indices {}

/// `range(n) -> [usize]`: `[0, 1, ..., n - 1]`; `range(a, b)`: `[a, a + 1, ..., b - 1]`.
///
/// As Rust's `a..b`, `range(a, b)` is empty when `b <= a`. Both are computed, never
/// stored, when their reader fuses with them.
///
/// ```
/// use dpl::prelude::*;
///
/// #[parallel]
/// fn squares(n: usize) -> Vec<usize> {
///     map(|i| i * i, range(n))
/// }
///
/// #[parallel]
/// fn between(a: usize, b: usize) -> Vec<usize> {
///     range(a, b)
/// }
///
/// assert_eq!(squares(4), vec![0, 1, 4, 9]);
/// assert_eq!(between(3, 6), vec![3, 4, 5]);
/// assert_eq!(between(6, 3), vec![]);
/// ```
pub mod range {}

/// `reverse(x) -> [T]`: `x` back to front.
///
/// `y[i] = x[len(x) - 1 - i]`. The front end writes it as a `map` over the positions, so a
/// reverse read by another primitive fuses with it (`sum(reverse(x))` is one loop with no
/// temporary).
///
/// ```
/// use dpl::prelude::*;
///
/// #[parallel]
/// fn backwards(x: &[i32]) -> Vec<i32> {
///     reverse(x)
/// }
///
/// assert_eq!(backwards(&[1, 2, 3]), vec![3, 2, 1]);
/// ```
pub mod reverse {}

/// `concat(a, b) -> [T]`: `a` followed by `b`.
///
/// `y[i] = a[i]` for `i < len(a)`, else `b[i - len(a)]`; either may be empty. Like
/// [`reverse`], a `map` over the positions that fuses with its reader.
///
/// ```
/// use dpl::prelude::*;
///
/// #[parallel]
/// fn joined(a: &[u32], b: &[u32]) -> Vec<u32> {
///     concat(a, filter(|v| v % 2 == 0, b))
/// }
///
/// assert_eq!(joined(&[7], &[1, 2, 3, 4]), vec![7, 2, 4]);
/// ```
pub mod concat {}

/// `flatten(rows) -> [T]`: the values of the rows of a `Nested`/`Matrix`, or of a ragged
/// result computed in the body, in order.
///
/// The front end writes it with the primitives: the rows' starts (an `exclusive_scan` of
/// their lengths) are marked with their row numbers and spread over the rows by a `scan`
/// with `max`, then `y[k]` reads its row. That costs a few passes over the rows and the
/// values (it is not a free view of a `Nested`'s values) and runs on every place.
///
/// ```
/// use dpl::prelude::*;
///
/// /// The neighbours of a BFS frontier.
/// #[parallel]
/// fn neighbours(adj: &Nested<u32>, frontier: &[u32]) -> Vec<u32> {
///     flatten(map(|v| adj[v], frontier))
/// }
///
/// let adj = Nested::from_rows(vec![vec![1, 2], vec![], vec![0]]);
/// assert_eq!(neighbours(&adj, &[2, 1, 0]), vec![0, 1, 2]);
/// ```
pub mod flatten {}

/// `argmin(x) -> usize`: the index of the first smallest element.
///
/// Between equal elements the first wins; NaNs lose to every number (as in `f32::min`;
/// all NaN gives 0). An empty `x` is [`Error::Empty`](crate::Error::Empty) naming
/// `argmin`. The front end writes it as a reduction over `(x[i], i)` pairs whose
/// operator keeps the better value and, between equals, the smaller index, so every place
/// gives the same index whatever its order of combination.
///
/// ```
/// use dpl::prelude::*;
///
/// #[parallel]
/// fn lowest(x: &[f32]) -> Result<usize, Error> {
///     argmin(x)
/// }
///
/// assert_eq!(lowest(&[3.0, -1.5, 2.0, -1.5]), Ok(1));
/// assert!(matches!(lowest(&[]), Err(Error::Empty { prim: "argmin", .. })));
/// ```
pub mod argmin {}

/// `argmax(x) -> usize`: the index of the first largest element.
///
/// As [`argmin`] with the order reversed (NaNs still lose to every number); an empty `x`
/// is [`Error::Empty`](crate::Error::Empty) naming `argmax`.
///
/// ```
/// use dpl::prelude::*;
///
/// #[parallel]
/// fn highest(x: &[i64]) -> Result<usize, Error> {
///     argmax(x)
/// }
///
/// assert_eq!(highest(&[3, 9, 2, 9]), Ok(1));
/// assert!(matches!(highest(&[]), Err(Error::Empty { prim: "argmax", .. })));
/// ```
pub mod argmax {}

/// `len(x) -> usize` (also `x.len()`): the number of elements (of rows, for `[[T]]`).
///
/// ```
/// use dpl::prelude::*;
///
/// #[parallel]
/// fn mean(x: &[f64]) -> f64 {
///     sum(x) / len(x) as f64
/// }
///
/// assert_eq!(mean(&[1.0, 2.0, 6.0]), 3.0);
/// ```
pub mod len {}

/// `sort(x) -> [T]`: `x` in ascending order, stable.
///
/// Keys are integers, `bool`, floats (IEEE 754 `totalOrder`, as `f32::total_cmp`:
/// `-NaN < -inf < ... < -0.0 < +0.0 < ... < inf < NaN`) and tuples of those
/// (lexicographic). Inside an element function over rows it sorts each row.
///
/// ```
/// use dpl::prelude::*;
///
/// #[parallel]
/// fn ascending(x: &[f32]) -> Vec<f32> {
///     sort(x)
/// }
///
/// assert_eq!(ascending(&[2.0, -1.0, 0.5]), vec![-1.0, 0.5, 2.0]);
/// ```
pub mod sort {}

/// `sort_by_key(keys, vals) -> [V]`: the `vals` ordered by their `keys`, stable.
///
/// `keys` and `vals` must have one length, else
/// [`Error::LengthMismatch`](crate::Error::LengthMismatch); keys order as for
/// [`sort`].
///
/// ```
/// use dpl::prelude::*;
///
/// #[parallel]
/// fn by_age(ages: &[u32], ids: &[u64]) -> Vec<u64> {
///     sort_by_key(ages, ids)
/// }
///
/// assert_eq!(by_age(&[40, 20, 40, 30], &[1, 2, 3, 4]), vec![2, 4, 1, 3]);
/// ```
pub mod sort_by_key {}

/// `stencil(f, x, offsets, default) -> [U]`: each element from its neighbours.
///
/// `y[i] = f(w)` with `w[k] = x[i + offsets[k]]`, or `default` where that read falls
/// outside `x`. The offsets are constants written in the call: integers over a `[T]`,
/// `(row, column)` pairs over the rows of a `Matrix` or `Nested` (the result then has
/// `x`'s row lengths); `f` indexes the window `w` by constants. The call becomes a `map`
/// with guarded reads, so it fuses like one.
///
/// ```
/// use dpl::prelude::*;
///
/// #[parallel]
/// fn blur(x: &[f32]) -> Vec<f32> {
///     stencil(|w| (w[0] + w[1] + w[2]) / 3.0, x, [-1, 0, 1], 0.0f32)
/// }
///
/// assert_eq!(blur(&[3.0, 3.0, 3.0]), vec![2.0, 3.0, 2.0]);
/// ```
pub mod stencil {}
