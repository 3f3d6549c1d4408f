//! One call on `Place::Mpi`: the [`Call`] context, error agreement, the collectives every
//! communication pattern is built from, and the traffic counters.
//!
//! Every communication point starts with [`Call::agree`] (or [`Call::check`], which also
//! reports a local error): an `all_gather` of one fixed-size record per rank, the status of
//! the rank and one word of payload (a block length, when the point needs one). A rank
//! whose local code raised a dpl error unwinds to [`call`], which joins the other ranks at
//! their next communication point with the same record, its status set. When any status
//! is set, the failing rank with the smallest key (the element's global position where the
//! error is about an element, then the rank) broadcasts its error, and every rank raises
//! that one. Each call ends with one more agreement, for errors raised after the last
//! communication point.

use super::env::{AGREED_PANIC, world};
use dpl_core::run::{Error, Location, Place};
use mpi::collective::{CommunicatorCollectives, Root};
use mpi::datatype::{Partition, PartitionMut};
use mpi::topology::{Communicator, SimpleCommunicator};
use std::cell::Cell;
use std::collections::{BTreeMap, HashSet};
use std::sync::Mutex;

/// Ranks are the low bits of an agreement key, positions the high bits.
const RANK_BITS: u32 = 20;
/// The key of a rank without error.
const NO_ERROR: u64 = u64::MAX;

/// What the generated code tells the run time about a call before it starts.
#[derive(Clone, Copy, Debug, Default)]
pub struct Plan {
    /// Bytes of payload that the agreement records of this call carry after their status
    /// (the largest per-rank value its reductions and scans exchange, which then need no
    /// collective of their own). The same at every communication point of the call, so a
    /// rank that joins with an error sends a record of the same size.
    pub payload: usize,
    /// Whether the call ends with an agreement: needed when something after its last
    /// communication point can raise an error (the lowering tells).
    pub final_agreement: bool,
}

/// The context of one `#[parallel]` call on `Place::Mpi`, passed to every run-time function.
pub struct Call<'w> {
    comm: &'w SimpleCommunicator,
    rank: usize,
    size: usize,
    /// Payload bytes of the agreement records ([`Plan::payload`]).
    payload: usize,
    /// The error being raised was agreed by every rank already.
    agreed: Cell<bool>,
}

impl Call<'_> {
    /// This rank.
    #[inline]
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of ranks.
    #[inline]
    pub fn size(&self) -> usize {
        self.size
    }

    /// A communication point without a local error: agrees with the other ranks, raising
    /// the agreed error if any rank reports one.
    pub fn agree(&self) {
        self.agree_with(0);
    }

    /// [`Call::agree`], also gathering one word from every rank (returned in rank order).
    pub(crate) fn agree_with(&self, word: u64) -> Vec<u64> {
        match self.exchange(None, word, &[]) {
            Ok((words, _)) => words,
            Err(e) => self.raise_agreed(e),
        }
    }

    /// [`Call::agree`], also gathering `mine` (at most [`Plan::payload`] bytes) from every
    /// rank: the ranks' bytes, `mine.len()` each, in rank order.
    pub(crate) fn agree_gather(&self, what: &'static str, mine: &[u8]) -> Vec<u8> {
        assert!(
            mine.len() <= self.payload,
            "dpl internal error: {} bytes of payload in records of {}",
            mine.len(),
            self.payload
        );
        match self.exchange(None, 0, mine) {
            Ok((_, payloads)) => {
                count(what, 0, ((self.size - 1) * mine.len()) as u64);
                payloads
                    .chunks(self.payload.max(1))
                    .take(self.size)
                    .flat_map(|r| &r[..mine.len()])
                    .copied()
                    .collect()
            }
            Err(e) => self.raise_agreed(e),
        }
    }

    /// A communication point where this rank may have found an error (`Some((error, key))`,
    /// `key` the global position of the offending element, or 0): every rank raises the
    /// agreed error when any rank has one.
    pub(crate) fn check(&self, local: Option<(Error, u64)>) {
        if let Err(e) = self.exchange(local, 0, &[]) {
            self.raise_agreed(e)
        }
    }

    fn raise_agreed(&self, e: Error) -> ! {
        self.agreed.set(true);
        std::panic::resume_unwind(Box::new(e))
    }

    /// The agreement collective: one record per rank, `(key, word, payload)`, `payload`
    /// padded to the call's payload size; every rank's words and payloads, or `Err` with
    /// the winner's error.
    fn exchange(
        &self,
        local: Option<(Error, u64)>,
        word: u64,
        payload: &[u8],
    ) -> Result<(Vec<u64>, Vec<u8>), Error> {
        let key = match &local {
            None => NO_ERROR,
            Some((_, pos)) => {
                ((*pos).min((1 << (63 - RANK_BITS)) - 1) << RANK_BITS) | self.rank as u64
            }
        };
        let record = 16 + self.payload;
        let mut mine = vec![0u8; record];
        mine[..8].copy_from_slice(&key.to_ne_bytes());
        mine[8..16].copy_from_slice(&word.to_ne_bytes());
        mine[16..16 + payload.len()].copy_from_slice(payload);
        let mut all = recv_buffer(record * self.size);
        self.comm.all_gather_into(&mine[..], &mut all[..]);
        let header = 16 * (self.size as u64 - 1);
        count("agree", header, header);
        let field = |r: usize, at: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&all[r * record + at..r * record + at + 8]);
            u64::from_ne_bytes(b)
        };
        let best = (0..self.size)
            .map(|r| field(r, 0))
            .min()
            .unwrap_or(NO_ERROR);
        if best == NO_ERROR {
            let words = (0..self.size).map(|r| field(r, 8)).collect();
            let payloads = (0..self.size)
                .flat_map(|r| all[r * record + 16..(r + 1) * record].iter().copied())
                .collect();
            return Ok((words, payloads));
        }
        let winner = (best & ((1 << RANK_BITS) - 1)) as usize;
        let mut bytes = match &local {
            Some((e, _)) if winner == self.rank => encode(e),
            _ => Vec::new(),
        };
        let root = self.comm.process_at_rank(winner as i32);
        let mut n = bytes.len() as u64;
        root.broadcast_into(&mut n);
        bytes.resize(n as usize, 0);
        root.broadcast_into(&mut bytes[..]);
        Err(decode(&bytes))
    }

    /// `all_gather` of equal-length byte strings.
    pub(crate) fn all_gather_bytes(&self, what: &'static str, mine: &[u8]) -> Vec<u8> {
        let mut all = recv_buffer(mine.len() * self.size);
        self.comm.all_gather_into(send_buffer(mine), &mut all[..]);
        let others = (self.size - 1) as u64 * mine.len() as u64;
        count(what, others, others);
        all
    }

    /// `all_gather_v` of byte strings whose lengths every rank knows (`counts`, in rank
    /// order).
    pub(crate) fn all_gather_var(
        &self,
        what: &'static str,
        mine: &[u8],
        counts: &[usize],
    ) -> Vec<u8> {
        let (c32, d32, total) = partition(counts);
        let mut all = recv_buffer(total);
        {
            let mut part = PartitionMut::new(&mut all[..], &c32[..], &d32[..]);
            self.comm
                .all_gather_varcount_into(send_buffer(mine), &mut part);
        }
        count(
            what,
            (self.size - 1) as u64 * mine.len() as u64,
            (total - mine.len()) as u64,
        );
        all
    }

    /// `all_to_all` of one count per destination: the counts every rank sends to this one.
    pub(crate) fn all_to_all_counts(&self, what: &'static str, send: &[usize]) -> Vec<usize> {
        let send: Vec<u64> = send.iter().map(|&c| c as u64).collect();
        let mut recv = vec![0u64; self.size];
        self.comm.all_to_all_into(&send[..], &mut recv[..]);
        let others = 8 * (self.size as u64 - 1);
        count(what, others, others);
        recv.into_iter().map(|c| c as usize).collect()
    }

    /// `all_to_all_v` of bytes: `send` holds the parts for ranks `0..P` one after another
    /// (`send_counts` bytes each); the result the parts from every rank, in rank order
    /// (`recv_counts` bytes each, known to the caller).
    pub(crate) fn all_to_all_bytes(
        &self,
        what: &'static str,
        send: &[u8],
        send_counts: &[usize],
        recv_counts: &[usize],
    ) -> Vec<u8> {
        let (sc, sd, stotal) = partition(send_counts);
        let (rc, rd, rtotal) = partition(recv_counts);
        debug_assert_eq!(stotal, send.len());
        let mut recv = recv_buffer(rtotal);
        {
            let spart = Partition::new(send_buffer(send), &sc[..], &sd[..]);
            let mut rpart = PartitionMut::new(&mut recv[..], &rc[..], &rd[..]);
            self.comm.all_to_all_varcount_into(&spart, &mut rpart);
        }
        count(
            what,
            (stotal - send_counts[self.rank]) as u64,
            (rtotal - recv_counts[self.rank]) as u64,
        );
        recv
    }

    /// `scatter_v` from `root`: `send` (meaningful on `root` only) holds the parts for
    /// ranks `0..P` one after another, `counts` bytes each (known on every rank); returns
    /// this rank's part.
    pub(crate) fn scatter_bytes(
        &self,
        what: &'static str,
        root: usize,
        send: &[u8],
        counts: &[usize],
    ) -> Vec<u8> {
        let mut mine = recv_buffer(counts[self.rank]);
        let r = self.comm.process_at_rank(root as i32);
        if self.rank == root {
            let (c32, d32, _) = partition(counts);
            let part = Partition::new(send_buffer(send), &c32[..], &d32[..]);
            r.scatter_varcount_into_root(&part, &mut mine[..]);
            count(what, (send.len() - counts[root]) as u64, 0);
        } else {
            r.scatter_varcount_into(&mut mine[..]);
            count(what, 0, mine.len() as u64);
        }
        mine
    }

    /// `gather_v` to `root`: every rank's `mine` (`counts` bytes each, known on every
    /// rank), concatenated in rank order on `root`; empty elsewhere.
    pub(crate) fn gather_bytes(
        &self,
        what: &'static str,
        root: usize,
        mine: &[u8],
        counts: &[usize],
    ) -> Vec<u8> {
        let r = self.comm.process_at_rank(root as i32);
        if self.rank == root {
            let (c32, d32, total) = partition(counts);
            let mut all = recv_buffer(total);
            {
                let mut part = PartitionMut::new(&mut all[..], &c32[..], &d32[..]);
                r.gather_varcount_into_root(send_buffer(mine), &mut part);
            }
            count(what, 0, (total - mine.len()) as u64);
            all
        } else {
            r.gather_varcount_into(send_buffer(mine));
            count(what, mine.len() as u64, 0);
            Vec::new()
        }
    }

    /// Broadcasts `buf` from `root`.
    pub(crate) fn broadcast_bytes(&self, what: &'static str, root: usize, buf: &mut [u8]) {
        self.comm.process_at_rank(root as i32).broadcast_into(buf);
        let n = buf.len() as u64;
        if root == self.rank {
            count(what, n * (self.size as u64 - 1), 0);
        } else {
            count(what, 0, n);
        }
    }
}

/// A zeroed receive buffer of `n` bytes whose address is a real allocation even when `n`
/// is 0: MPI rejects a receive buffer equal to the send buffer, which two empty `Vec`s
/// (both dangling at the same address) would be.
fn recv_buffer(n: usize) -> Vec<u8> {
    let mut b = Vec::with_capacity(n.max(1));
    b.resize(n, 0);
    b
}

/// `b`, or an empty slice of a static when `b` is empty (see [`recv_buffer`]).
fn send_buffer(b: &[u8]) -> &[u8] {
    static NOTHING: [u8; 1] = [0];
    if b.is_empty() { &NOTHING[..0] } else { b }
}

/// Counts and displacements as MPI's `int`s; the total.
fn partition(counts: &[usize]) -> (Vec<i32>, Vec<i32>, usize) {
    let mut c32 = Vec::with_capacity(counts.len());
    let mut d32 = Vec::with_capacity(counts.len());
    let mut total = 0usize;
    for &c in counts {
        d32.push(as_count(total));
        c32.push(as_count(c));
        total += c;
    }
    (c32, d32, total)
}

/// A byte count or displacement as MPI's `int`: one message part of 2 GiB or more cannot
/// be described to MPI, which is reported as a device error on every rank alike.
fn as_count(n: usize) -> i32 {
    i32::try_from(n).unwrap_or_else(|_| {
        panic!(
            "dpl: a message of {n} bytes exceeds MPI's int counts (2 GiB per part); use more ranks"
        )
    })
}

/// Runs one call on `Place::Mpi`: `Err` when MPI is not running, or with the error every
/// rank agreed on.
pub fn call<T>(plan: Plan, body: impl FnOnce(&Call<'_>) -> T) -> Result<T, Error> {
    let guard = world();
    let Some(w) = guard.0.as_ref() else {
        return Err(Error::PlaceUnavailable {
            place: Place::Mpi,
            reason: "MPI is not running: call dpl::mpi::init() first (and keep its guard alive)"
                .into(),
        });
    };
    let c = Call {
        comm: &w.comm,
        rank: w.rank,
        size: w.size,
        payload: plan.payload,
        agreed: Cell::new(false),
    };
    if c.size == 1 {
        return dpl_cpu::rt::run(|| body(&c));
    }
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(&c))) {
        Ok(v) if !plan.final_agreement => Ok(v),
        Ok(v) => match c.exchange(None, 0, &[]) {
            Ok(_) => Ok(v),
            Err(e) => Err(e),
        },
        Err(payload) => match payload.downcast::<Error>() {
            Ok(e) if c.agreed.get() => Err(*e),
            Ok(e) => match c.exchange(Some((*e, 0)), 0, &[]) {
                Err(agreed) => Err(agreed),
                Ok(_) => unreachable!("this rank reported an error"),
            },
            Err(other) => std::panic::resume_unwind(other),
        },
    }
}

/// Runs `body` with a context for communication outside a `#[parallel]` call (the
/// program's own data movement); `None` when MPI is not running.
pub(crate) fn with_world<T>(body: impl FnOnce(&Call<'_>) -> T) -> Option<T> {
    let guard = world();
    let w = guard.0.as_ref()?;
    Some(body(&Call {
        comm: &w.comm,
        rank: w.rank,
        size: w.size,
        payload: 0,
        agreed: Cell::new(false),
    }))
}

/// [`call`], panicking with the agreed error's message (on every rank alike, which does
/// not abort the job).
#[track_caller]
pub fn call_or_panic<T>(plan: Plan, body: impl FnOnce(&Call<'_>) -> T) -> T {
    match call(plan, body) {
        Ok(v) => v,
        Err(e) => {
            AGREED_PANIC.with(|f| f.set(true));
            panic!("{e}")
        }
    }
}

/// Bytes and collectives of one kind of communication, counted on this rank.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Traffic {
    /// Collective operations.
    pub collectives: u64,
    /// Bytes this rank sent to other ranks.
    pub sent: u64,
    /// Bytes this rank received from other ranks.
    pub received: u64,
}

static TRAFFIC: Mutex<BTreeMap<&'static str, Traffic>> = Mutex::new(BTreeMap::new());

fn count(what: &'static str, sent: u64, received: u64) {
    let mut t = TRAFFIC.lock().unwrap_or_else(|e| e.into_inner());
    let e = t.entry(what).or_default();
    e.collectives += 1;
    e.sent += sent;
    e.received += received;
}

/// What this rank has communicated since the start (or [`reset_traffic`]), by kind:
/// `agree` (error agreement), `layout`, `reduce`, `scan`, `realign`, `halo`, `all_gather`,
/// `element`, `gather`, `scatter`, `scatter_reduce`, `permute`, `sort`, `io`.
pub fn traffic() -> Vec<(&'static str, Traffic)> {
    let t = TRAFFIC.lock().unwrap_or_else(|e| e.into_inner());
    t.iter().map(|(k, v)| (*k, *v)).collect()
}

/// Sets the counters of [`traffic`] back to zero.
pub fn reset_traffic() {
    TRAFFIC.lock().unwrap_or_else(|e| e.into_inner()).clear();
}

// ---- errors on the wire ----------------------------------------------------------------

/// The error as bytes, to be decoded on the other ranks (which run the same program, so
/// the strings name the same primitives and source files).
fn encode(e: &Error) -> Vec<u8> {
    let mut w = Writer(Vec::new());
    match e {
        Error::LengthMismatch {
            prim,
            left,
            right,
            at,
        } => {
            w.u8(0);
            w.str(prim);
            w.u64(*left as u64);
            w.u64(*right as u64);
            w.loc(at);
        }
        Error::IndexOutOfRange {
            prim,
            index,
            len,
            at,
        } => {
            w.u8(1);
            w.str(prim);
            w.0.extend_from_slice(&index.to_le_bytes());
            w.u64(*len as u64);
            w.loc(at);
        }
        Error::Empty { prim, at } => {
            w.u8(2);
            w.str(prim);
            w.loc(at);
        }
        Error::NotAPermutation { prim, detail, at } => {
            w.u8(3);
            w.str(prim);
            w.str(detail);
            w.loc(at);
        }
        Error::DivideByZero { op, at } => {
            w.u8(4);
            w.u8(u8::from(*op == "%"));
            w.loc(at);
        }
        Error::Malformed { what, detail } => {
            w.u8(5);
            w.str(what);
            w.str(detail);
        }
        Error::PlaceUnavailable { place, reason } => {
            w.u8(6);
            w.str(&place.to_string());
            w.str(reason);
        }
        Error::BadPlace { text } => {
            w.u8(7);
            w.str(text);
        }
        Error::OutOfMemory { prim, bytes, at } => {
            w.u8(9);
            w.str(prim);
            w.0.extend_from_slice(&bytes.to_le_bytes());
            w.loc(at);
        }
        Error::Device(m) => {
            w.u8(8);
            w.str(m);
        }
        other => {
            w.u8(8);
            w.str(&other.to_string());
        }
    }
    w.0
}

fn decode(b: &[u8]) -> Error {
    let mut r = Reader(b);
    match r.u8() {
        0 => Error::LengthMismatch {
            prim: r.name(),
            left: r.u64() as usize,
            right: r.u64() as usize,
            at: r.loc(),
        },
        1 => Error::IndexOutOfRange {
            prim: r.name(),
            index: i128::from_le_bytes(r.take(16).try_into().unwrap_or([0; 16])),
            len: r.u64() as usize,
            at: r.loc(),
        },
        2 => Error::Empty {
            prim: r.name(),
            at: r.loc(),
        },
        3 => Error::NotAPermutation {
            prim: r.name(),
            detail: r.string(),
            at: r.loc(),
        },
        4 => Error::DivideByZero {
            op: if r.u8() == 1 { "%" } else { "/" },
            at: r.loc(),
        },
        5 => Error::Malformed {
            what: r.name(),
            detail: r.string(),
        },
        6 => {
            let place = r.string();
            Error::PlaceUnavailable {
                place: Place::parse(&place).unwrap_or(Place::Mpi),
                reason: r.string(),
            }
        }
        7 => Error::BadPlace { text: r.string() },
        9 => Error::OutOfMemory {
            prim: r.name(),
            bytes: u128::from_le_bytes(r.take(16).try_into().unwrap_or([0; 16])),
            at: r.loc(),
        },
        _ => Error::Device(r.string()),
    }
}

struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn str(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
    }
    fn loc(&mut self, at: &Location) {
        self.str(at.file);
        self.u64(u64::from(at.line));
        self.u64(u64::from(at.column));
    }
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take(&mut self, n: usize) -> &[u8] {
        let n = n.min(self.0.len());
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        a
    }
    fn u8(&mut self) -> u8 {
        self.take(1).first().copied().unwrap_or(u8::MAX)
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take(8).try_into().unwrap_or([0; 8]))
    }
    fn string(&mut self) -> String {
        let n = self.u64() as usize;
        String::from_utf8_lossy(self.take(n)).into_owned()
    }
    /// A string that the error keeps as `&'static str`: interned, so each distinct one is
    /// allocated once per process.
    fn name(&mut self) -> &'static str {
        intern(self.string())
    }
    fn loc(&mut self) -> Location {
        Location {
            file: self.name(),
            line: self.u64() as u32,
            column: self.u64() as u32,
        }
    }
}

fn intern(s: String) -> &'static str {
    static NAMES: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    let set = names.get_or_insert_with(HashSet::new);
    if let Some(&known) = set.get(s.as_str()) {
        return known;
    }
    let leaked: &'static str = Box::leak(s.into_boxed_str());
    set.insert(leaked);
    leaked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_survive_the_wire() {
        let at = Location {
            file: "src/x.rs",
            line: 3,
            column: 9,
        };
        let errors = [
            Error::LengthMismatch {
                prim: "map",
                left: 3,
                right: 4,
                at,
            },
            Error::IndexOutOfRange {
                prim: "gather",
                index: -7,
                len: 10,
                at,
            },
            Error::Empty { prim: "min", at },
            Error::NotAPermutation {
                prim: "permute",
                detail: "index 3 appears twice".into(),
                at,
            },
            Error::DivideByZero { op: "/", at },
            Error::DivideByZero { op: "%", at },
            Error::Malformed {
                what: "Nested",
                detail: "offsets".into(),
            },
            Error::PlaceUnavailable {
                place: Place::Gpu(2),
                reason: "none".into(),
            },
            Error::BadPlace { text: "x".into() },
            Error::Device("oom".into()),
        ];
        for e in errors {
            assert_eq!(decode(&encode(&e)), e);
        }
    }
}
