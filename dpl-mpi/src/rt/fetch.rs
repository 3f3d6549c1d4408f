//! Fetching ranges of a distributed sequence: windows (halos and realignments), whole
//! copies, single elements, and the block of a replicated value.
//!
//! A window is the range of global elements a rank's loop reads: its own block of the
//! loop's layout `lay_t`, widened by `lo` elements below and `hi` above (halos of reads
//! `x[i - lo]..x[i + hi]`), clipped to `x`. Every rank computes every rank's window from
//! the replicated layouts, so one `all_to_all_v` with counts known on both sides moves
//! them; ranks holding nothing of a window send nothing. When every window lies inside its
//! rank's own block (the same layouts, no halo, or one rank), nothing moves and the block
//! itself is borrowed.

use super::call::Call;
use super::layout::{block, overlap};
use super::wire::{Wire, bytes_of, extend_bytes, values_of};
use dpl_cpu::rt::{At, Idx, index_error};
use std::borrow::Cow;
use std::ops::Range;

/// Sequences of rows that can be sent: `Nested` and `Matrix` blocks (implemented by the
/// facade) and rows built by generated code (`[Vec<T>]`).
pub trait Rows<T> {
    /// Number of rows.
    fn count(&self) -> usize;
    /// Length of row `r`.
    fn row_len(&self, r: usize) -> usize;
    /// Appends the elements of row `r` to `out`.
    fn extend_row(&self, r: usize, out: &mut Vec<T>);
}

impl<T: Copy> Rows<T> for [Vec<T>] {
    fn count(&self) -> usize {
        self.len()
    }
    fn row_len(&self, r: usize) -> usize {
        self[r].len()
    }
    fn extend_row(&self, r: usize, out: &mut Vec<T>) {
        out.extend_from_slice(&self[r]);
    }
}

/// Sequences of rows that can be built from rows (what [`window_rows`] returns when rows
/// move).
pub trait FromRows<T>: Sized {
    /// The sequence of these rows.
    fn from_rows(rows: Vec<Vec<T>>) -> Self;
}

impl<T> FromRows<T> for Vec<Vec<T>> {
    fn from_rows(rows: Vec<Vec<T>>) -> Self {
        rows
    }
}

/// The window of rank `q`: its block of `lay_t` widened by `lo`/`hi`, within `0..n`;
/// empty for an empty block (a loop with no iteration reads nothing).
fn window_of(lay_t: &[usize], n: usize, lo: usize, hi: usize, q: usize) -> Range<usize> {
    let (s, e) = (lay_t[q], lay_t[q + 1]);
    if s == e {
        let at = s.min(n);
        return at..at;
    }
    let start = (s.max(lo) - lo).min(n);
    let end = e.saturating_add(hi).clamp(start, n);
    start..end
}

fn block_range(lay: &[usize], q: usize) -> Range<usize> {
    lay[q]..lay[q + 1]
}

/// Whether every rank's window lies inside its own block of `x` (nothing to move).
fn all_local(lay_x: &[usize], lay_t: &[usize], lo: usize, hi: usize) -> bool {
    let n = lay_x[lay_x.len() - 1];
    (0..lay_x.len() - 1).all(|q| {
        let w = window_of(lay_t, n, lo, hi, q);
        w.is_empty() || (lay_x[q] <= w.start && w.end <= lay_x[q + 1])
    })
}

/// This rank's window of `x` (its block `local`, layout `lay_x`) for a loop over the
/// layout `lay_t` reading `x[i - lo]..=x[i + hi]`: the elements of global positions
/// `max(o - lo, 0)..min(e + hi, n)` (`o..e` the loop's block; empty when it is empty).
/// Counted as `halo` traffic when `lo` or `hi` is not 0, else as `realign`.
pub fn window<'a, T: Wire>(
    c: &Call<'_>,
    local: &'a [T],
    lay_x: &[usize],
    lay_t: &[usize],
    lo: usize,
    hi: usize,
) -> Cow<'a, [T]> {
    window_as(c, local, lay_x, lay_t, lo, hi, label(lo, hi))
}

fn label(lo: usize, hi: usize) -> &'static str {
    if lo == 0 && hi == 0 {
        "realign"
    } else {
        "halo"
    }
}

/// [`window`], counted as `what` traffic.
pub(crate) fn window_as<'a, T: Wire>(
    c: &Call<'_>,
    local: &'a [T],
    lay_x: &[usize],
    lay_t: &[usize],
    lo: usize,
    hi: usize,
    what: &'static str,
) -> Cow<'a, [T]> {
    let n = lay_x[c.size()];
    let me = c.rank();
    let mine = window_of(lay_t, n, lo, hi, me);
    if all_local(lay_x, lay_t, lo, hi) {
        let o = lay_x[me];
        return if mine.is_empty() {
            Cow::Borrowed(&local[..0])
        } else {
            Cow::Borrowed(&local[mine.start - o..mine.end - o])
        };
    }
    c.agree();
    let own = block_range(lay_x, me);
    let mut send = Vec::new();
    let mut send_counts = Vec::with_capacity(c.size());
    let mut recv_counts = Vec::with_capacity(c.size());
    for q in 0..c.size() {
        let part = overlap(window_of(lay_t, n, lo, hi, q), own.clone());
        extend_bytes(
            &mut send,
            &local[part.start - own.start..part.end - own.start],
        );
        send_counts.push(part.len() * T::BYTES);
        recv_counts.push(overlap(mine.clone(), block_range(lay_x, q)).len() * T::BYTES);
    }
    Cow::Owned(values_of(&c.all_to_all_bytes(
        what,
        &send,
        &send_counts,
        &recv_counts,
    )))
}

/// [`window`] for a sequence of rows (a `Nested`, a `Matrix`, built rows): the block
/// itself when every window is its rank's own block (a realignment of equal layouts),
/// else the rows of the window, built into the same kind of sequence. Row lengths and
/// values travel together in one `all_to_all_v` (after one `all_to_all` of the byte
/// counts).
pub fn window_rows<'a, T, R>(
    c: &Call<'_>,
    local: &'a R,
    lay_x: &[usize],
    lay_t: &[usize],
    lo: usize,
    hi: usize,
) -> Cow<'a, R>
where
    T: Wire,
    R: Rows<T> + ToOwned + ?Sized,
    R::Owned: FromRows<T>,
{
    let what = label(lo, hi);
    let n = lay_x[c.size()];
    let me = c.rank();
    let mine = window_of(lay_t, n, lo, hi, me);
    let own = block_range(lay_x, me);
    if all_local(lay_x, lay_t, lo, hi) {
        if mine == own || (mine.is_empty() && own.is_empty()) {
            return Cow::Borrowed(local);
        }
        let rows = (mine.start.max(own.start) - own.start..mine.end.max(own.start) - own.start)
            .map(|r| {
                let mut v = Vec::with_capacity(local.row_len(r));
                local.extend_row(r, &mut v);
                v
            })
            .collect();
        return Cow::Owned(R::Owned::from_rows(rows));
    }
    c.agree();
    let mut send = Vec::new();
    let mut send_counts = Vec::with_capacity(c.size());
    for q in 0..c.size() {
        let part = overlap(window_of(lay_t, n, lo, hi, q), own.clone());
        let before = send.len();
        pack_rows(
            &mut send,
            local,
            part.start - own.start..part.end - own.start,
        );
        send_counts.push(send.len() - before);
    }
    let recv_counts = c.all_to_all_counts(what, &send_counts);
    let bytes = c.all_to_all_bytes(what, &send, &send_counts, &recv_counts);
    let mut out = Vec::with_capacity(mine.len());
    let mut at = 0;
    for (q, &len) in recv_counts.iter().enumerate() {
        let rows = overlap(mine.clone(), block_range(lay_x, q)).len();
        unpack_rows(&bytes[at..at + len], rows, &mut out);
        at += len;
    }
    Cow::Owned(R::Owned::from_rows(out))
}

/// Appends rows `rows` of `local` as their lengths (`u64`) followed by their values.
fn pack_rows<T: Wire, R: Rows<T> + ?Sized>(out: &mut Vec<u8>, local: &R, rows: Range<usize>) {
    let lens: Vec<u64> = rows.clone().map(|r| local.row_len(r) as u64).collect();
    extend_bytes(out, &lens);
    let mut values = Vec::with_capacity(lens.iter().sum::<u64>() as usize);
    for r in rows {
        local.extend_row(r, &mut values);
    }
    extend_bytes(out, &values);
}

/// Reads `rows` rows written by [`pack_rows`] from `bytes`, appending them to `out`.
fn unpack_rows<T: Wire>(bytes: &[u8], rows: usize, out: &mut Vec<Vec<T>>) {
    let (lens, values) = bytes.split_at(rows * 8);
    let lens: Vec<u64> = values_of(lens);
    let values: Vec<T> = values_of(values);
    let mut at = 0;
    for l in lens {
        let l = l as usize;
        out.push(values[at..at + l].to_vec());
        at += l;
    }
}

/// The whole global sequence on every rank (an `all_gather_v`; counts from the layout).
pub fn all_gather<'a, T: Wire>(c: &Call<'_>, local: &'a [T], lay: &[usize]) -> Cow<'a, [T]> {
    if c.size() == 1 {
        return Cow::Borrowed(local);
    }
    c.agree();
    let counts: Vec<usize> = (0..c.size())
        .map(|q| (lay[q + 1] - lay[q]) * T::BYTES)
        .collect();
    Cow::Owned(values_of(&c.all_gather_var(
        "all_gather",
        &bytes_of(local),
        &counts,
    )))
}

/// [`all_gather`] for rows: every row of the global sequence on every rank.
pub fn all_gather_rows<T: Wire, R: Rows<T> + ?Sized>(
    c: &Call<'_>,
    local: &R,
    lay: &[usize],
) -> Vec<Vec<T>> {
    let p = c.size();
    if p == 1 {
        let mut out = Vec::new();
        unpack_all(local, &mut out);
        return out;
    }
    c.agree();
    let lens: Vec<u64> = (0..local.count())
        .map(|r| local.row_len(r) as u64)
        .collect();
    let counts: Vec<usize> = (0..p).map(|q| (lay[q + 1] - lay[q]) * 8).collect();
    let all_lens: Vec<u64> = values_of(&c.all_gather_var("all_gather", &bytes_of(&lens), &counts));
    let mut values = Vec::new();
    for r in 0..local.count() {
        local.extend_row(r, &mut values);
    }
    let value_counts: Vec<usize> = (0..p)
        .map(|q| all_lens[lay[q]..lay[q + 1]].iter().sum::<u64>() as usize * T::BYTES)
        .collect();
    let all_values: Vec<T> =
        values_of(&c.all_gather_var("all_gather", &bytes_of(&values), &value_counts));
    let mut out = Vec::with_capacity(all_lens.len());
    let mut at = 0;
    for l in all_lens {
        out.push(all_values[at..at + l as usize].to_vec());
        at += l as usize;
    }
    out
}

fn unpack_all<T, R: Rows<T> + ?Sized>(local: &R, out: &mut Vec<Vec<T>>) {
    for r in 0..local.count() {
        let mut v = Vec::with_capacity(local.row_len(r));
        local.extend_row(r, &mut v);
        out.push(v);
    }
}

/// Global element `index` of a distributed sequence, on every rank: one broadcast from
/// the rank that holds it. An index outside the sequence raises `IndexOutOfRange` for
/// `prim` (on every rank alike: the index and the length are the same everywhere).
/// Without `needed` (a read inside a loop that has no element anywhere) nothing is read,
/// nor checked, and the value is all zero bits (never used).
pub fn element<T: Wire, I: Idx>(
    c: &Call<'_>,
    local: &[T],
    lay: &[usize],
    index: I,
    needed: bool,
    prim: &'static str,
    at: At,
) -> T {
    if !needed {
        return T::get(&vec![0u8; T::BYTES]);
    }
    let n = lay[c.size()];
    let Some(j) = index.checked(n) else {
        index_error(prim, index.value(), n, at)
    };
    if c.size() == 1 {
        return local[j];
    }
    let q = super::layout::owner(lay, j);
    c.agree();
    let mut buf = vec![0u8; T::BYTES];
    if q == c.rank() {
        local[j - lay[q]].put(&mut buf);
    }
    c.broadcast_bytes("element", q, &mut buf);
    T::get(&buf)
}

/// This rank's balanced block ([`block`]) of a sequence every rank holds whole: how a
/// replicated sequence is returned.
pub fn block_of<T: Copy>(c: &Call<'_>, whole: &[T]) -> Vec<T> {
    whole[block(whole.len(), c.rank(), c.size())].to_vec()
}

/// [`block_of`] for rows.
pub fn block_of_rows<T, R: Rows<T> + ?Sized>(c: &Call<'_>, whole: &R) -> Vec<Vec<T>> {
    block(whole.count(), c.rank(), c.size())
        .map(|r| {
            let mut v = Vec::with_capacity(whole.row_len(r));
            whole.extend_row(r, &mut v);
            v
        })
        .collect()
}
