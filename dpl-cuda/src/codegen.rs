//! From a fused function (Soac level) to PTX kernels and a launch plan.
//!
//! The top level of the function becomes the [`Plan`]: scalar statements and assertions
//! run on the host, each combinator ([`Soac`]) becomes one to three kernels plus the
//! allocations, copies and read-backs around them (see the crate README for each kind).
//! Inside a kernel, the element function and the operator lambdas are compiled inline:
//! scalars live in registers, tuples are flattened into one register per scalar leaf,
//! captured sequences are kernel parameters (one pointer per leaf plus the length), and a
//! combinator nested inside an element function runs as a sequential loop in its thread
//! (Copperhead's default schedule; only reductions are supported there).
//!
//! Run-time checks inside kernels (checked indexing, division by zero, nested assertions,
//! `scatter`/`permute` indices) never fault: they record the failure in the error record
//! and skip the element (see [`Gen::record`]).

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use dpl_core::ir::*;

use crate::Unsupported;
use crate::layout::{leaves, scalar_leaves, size_of, slot_bytes};
use crate::math::Fun;
use crate::plan::*;
use crate::ptx::{Kernel, Reg, arith, bits, float_imm, mem, width};

mod sort;

/// Threads per block of a kernel with a thread per element (or a warp per element) when
/// neither the attribute nor register counts say otherwise (see [`crate::occupancy`]).
pub const DEFAULT_BLOCK: u32 = 256;
/// Rounds of a block's threads' worth of elements per block in the reduce-then-scan
/// offsets of ragged results (a tile is `ROUNDS * block` elements; scans and filters use
/// [`scan_items`] and warp chunks instead).
pub const ROUNDS: u64 = 4;
/// Threads per block of a `map` with a block per element when neither the attribute nor
/// register counts say otherwise.
pub const GROUP_BLOCK: u32 = 128;
/// Elements per thread before a reduction uses more blocks than half the resident ones
/// (the block-level combination costs a few hundred instructions per thread, so each
/// thread should accumulate many).
const REDUCE_PER_THREAD: u64 = 64;
/// The fewest elements per thread of a reduction: below [`REDUCE_PER_THREAD`] per thread
/// it still takes up to half the resident blocks, so that every multiprocessor has work
/// (64 per thread would leave most of a large GPU idle on a million elements).
const REDUCE_MIN_PER_THREAD: u64 = 8;

/// Said after the block-size reason of the kernels of a `map` or `filter` producing rows
/// that run a thread per row although an inner schedule was asked for.
const THREAD_PER_ROW: &str =
    "the inner schedule asked for is not applied to sequences of rows: a thread per element";
/// Said after the block-size reason of the kernels of a `map` with scalar or tuple
/// elements that runs a thread per element although an inner schedule was asked for.
const NOT_SPLIT: &str = "the inner schedule asked for cannot split this element function (a `sort` in it runs in one thread): a thread per element";
/// Said after the block-size reason of the sizes kernel of a `map` producing rows with a
/// warp or a block per row, when that kernel runs a thread per row on purpose.
const LENGTHS_ONLY: &str = "a thread per row for the sizes alone: they need only the rows' lengths";

type R<T> = Result<T, Unsupported>;

fn unsupported<T>(msg: impl Into<String>) -> R<T> {
    Err(Unsupported {
        message: msg.into(),
    })
}

/// A value inside a kernel.
#[derive(Clone, Debug)]
enum KVal {
    /// A scalar in a register.
    S(Reg),
    /// A sequence in memory: one pointer per scalar leaf of the element type, and the
    /// length. A nested sequence (`elem` is `[T]`) also has the pointer to its `len + 1`
    /// row offsets and its [`RowLayout`], and `ptrs` point to the leaves of `T`. A row of
    /// a strided matrix has a `step`: element `j` is at `ptrs + j * step` (else `j`).
    Seq {
        ptrs: Vec<Reg>,
        len: Reg,
        elem: Type,
        offs: Option<Reg>,
        layout: Option<Rc<RowLayout>>,
        step: Option<Reg>,
    },
    /// A sequence built inside an element function and not stored: its elements are
    /// produced on demand by a sequential loop (see [`Gen::stream`]).
    Lazy(Rc<LazySeq>),
    /// A lazy sequence while a loop streams it: the current position and element.
    Cur {
        idx: Reg,
        val: Box<KVal>,
        of: Rc<LazySeq>,
    },
    /// A tuple.
    Tup(Vec<KVal>),
    /// A sequence an `if` inside an element function chooses (alone or inside a tuple it
    /// chooses): not built; each consumer branches on the condition and consumes the
    /// branch's sequence, evaluating that branch's block there (see [`Gen::branch_seq`]).
    Cond(Rc<CondSeq>),
}

/// The condition and branches of a [`KVal::Cond`].
#[derive(Debug)]
struct CondSeq {
    cond: Reg,
    then: Block,
    els: Block,
    /// The field indices selecting the sequence in the branches' value (empty when the
    /// `if` chooses a sequence; a tuple's sequence is chosen along with the tuple).
    path: Vec<u32>,
}

/// How the rows of a nested sequence are found, decided at run time (kernel parameters,
/// [`KArg::RowLayout`]): from the row offsets, or, for a strided matrix (`strided` set),
/// row `r` starting at element `r * rs` of the leaves, `cols` long, its elements `cs`
/// apart (a column-major matrix: `rs = 1`, `cs = rows`; no offsets then).
#[derive(Debug)]
struct RowLayout {
    /// The parameters' names: strided flag, row stride, column stride, columns (loaded
    /// where used, so they hold no registers across the kernel).
    names: [String; 4],
}

impl RowLayout {
    /// Loads field `f` (0 to 3) into a fresh register.
    fn load(&self, k: &mut Kernel, f: usize) -> Reg {
        let r = k.reg(Scalar::U64);
        k.ins(format!("ld.param.u64 {r}, [{}]", self.names[f]));
        r
    }

    /// Whether the rows are strided (a predicate), and its negation.
    fn strided(&self, k: &mut Kernel) -> (Reg, Reg) {
        let f = self.load(k, 0);
        let (p, n) = (k.reg(Scalar::Bool), k.reg(Scalar::Bool));
        k.ins(format!("setp.ne.u64 {p}, {f}, 0"));
        k.ins(format!("setp.eq.u64 {n}, {f}, 0"));
        (p, n)
    }
}

/// A combinator producing a sequence inside an element function.
#[derive(Debug)]
struct LazySeq {
    /// The variable it defines.
    var: VarId,
    /// The combinator (a `Map`, `Scan`, `ExclusiveScan` or `Filter`, which can be
    /// streamed; or a `Scatter`, `ScatterReduce` or `Permute`, which can only be written
    /// out as the element's result, see [`Gen::write_scattered`]).
    soac: Soac,
    /// Its element type.
    elem_ty: Type,
    /// The statement's span.
    span: u32,
}

impl KVal {
    fn unit() -> KVal {
        KVal::Tup(Vec::new())
    }

    fn reg(&self) -> R<&Reg> {
        match self {
            KVal::S(r) => Ok(r),
            _ => unsupported("a scalar was expected (internal)"),
        }
    }

    /// The scalar leaves, in order.
    fn flatten(&self) -> R<Vec<Reg>> {
        self.scalars(false)
    }

    /// The scalar leaves, in order; the sequences inside are skipped with `skip_seqs`,
    /// an error otherwise.
    fn scalars(&self, skip_seqs: bool) -> R<Vec<Reg>> {
        let mut out = Vec::new();
        fn go(v: &KVal, skip: bool, out: &mut Vec<Reg>) -> R<()> {
            match v {
                KVal::S(r) => out.push(r.clone()),
                KVal::Tup(vs) => vs.iter().try_for_each(|v| go(v, skip, out))?,
                KVal::Seq { .. } | KVal::Lazy(_) | KVal::Cur { .. } | KVal::Cond(_) => {
                    if !skip {
                        return unsupported("a sequence inside a value computed per element");
                    }
                }
            }
            Ok(())
        }
        go(self, skip_seqs, &mut out)?;
        Ok(out)
    }

    /// The part of a tuple value `path` selects.
    fn at(&self, path: &[u32]) -> R<KVal> {
        match path.split_first() {
            None => Ok(self.clone()),
            Some((&n, rest)) => match self {
                KVal::Tup(vs) if (n as usize) < vs.len() => vs[n as usize].at(rest),
                _ => unsupported("a field of a non-tuple (internal)"),
            },
        }
    }
}

/// The part of a tuple type `path` selects.
fn type_at<'t>(ty: &'t Type, path: &[u32]) -> Option<&'t Type> {
    match path.split_first() {
        None => Some(ty),
        Some((&n, rest)) => match ty {
            Type::Tuple(ts) => type_at(ts.get(n as usize)?, rest),
            _ => None,
        },
    }
}

/// Rebuilds a structured value of type `ty` from its leaves.
fn unflatten(ty: &Type, regs: &mut impl Iterator<Item = Reg>) -> R<KVal> {
    unflatten_with(ty, regs, &mut Vec::new(), &mut |_| {
        unsupported(format!("a value of type {ty} per element"))
    })
}

/// [`unflatten`] for a type holding sequences: the sequence at field path `p` is `seq(p)`.
fn unflatten_with(
    ty: &Type,
    regs: &mut dyn Iterator<Item = Reg>,
    path: &mut Vec<u32>,
    seq: &mut dyn FnMut(&[u32]) -> R<KVal>,
) -> R<KVal> {
    Ok(match ty {
        Type::Scalar(_) => match regs.next() {
            Some(r) => KVal::S(r),
            None => return unsupported("too few leaves (internal)"),
        },
        Type::Tuple(ts) => {
            let mut vs = Vec::with_capacity(ts.len());
            for (n, t) in ts.iter().enumerate() {
                path.push(n as u32);
                let v = unflatten_with(t, regs, path, seq);
                path.pop();
                vs.push(v?);
            }
            KVal::Tup(vs)
        }
        Type::Seq(_) => seq(path)?,
        Type::Infer => return unsupported("an untyped variable"),
    })
}

/// An optional value (for reductions without identity): a predicate and the leaves.
#[derive(Clone, Debug)]
struct Opt {
    has: Reg,
    v: Vec<Reg>,
}

/// How two elements are combined.
#[derive(Clone, Copy)]
enum Comb<'l> {
    /// The user's operator on elements of the given type.
    Op(&'l Lambda, &'l Type),
    /// `u64` addition (counts of filters).
    AddU64,
}

/// Where failed checks go: the key of the current element (smaller keys are reported
/// first) and the label to jump to (none: go on with an unspecified value).
#[derive(Clone, Debug)]
struct Ctx {
    key: Reg,
    fail: Option<String>,
}

/// Registers every kernel has.
struct Common {
    err: Reg,
    report: Reg,
    tid: Reg,
    tid64: Reg,
    lane: Reg,
    warp: Reg,
    ctaid64: Reg,
}

type Env = HashMap<VarId, KVal>;

/// Row bounds loaded ahead: nested sequence -> (start, end) of the current row.
type Prefetched = HashMap<VarId, (Reg, Reg)>;

/// The element source of a tile ([`Gen::tile_load`]): `(index, label a failed check
/// jumps to)` -> the element's leaves.
type ElemAt<'b, 'f> =
    dyn FnMut(&mut Gen<'f>, &mut Kernel, &mut Env, &Reg, &str) -> R<Vec<Reg>> + 'b;

/// The work of one element in [`Gen::tile_rounds`]: `(index, shared address per leaf,
/// label skipping the rest)`.
type RoundBody<'b, 'f> = dyn FnMut(&mut Gen<'f>, &mut Kernel, &Reg, &[Reg], &str) -> R<()> + 'b;

/// The work of one round of a filter's chunk in [`Gen::chunk_rounds`]: `(the element's
/// leaves, kept, the warp's ballot of kept)`.
type ChunkBody<'b, 'f> = dyn FnMut(&mut Gen<'f>, &mut Kernel, &[Reg], &Reg, &Reg) -> R<()> + 'b;

/// Where a tile's results go ([`Gen::tile_store`]): `(index, leaves)`.
type StoreAt<'b, 'f> = dyn FnMut(&mut Gen<'f>, &mut Kernel, &Reg, &[Reg]) -> R<()> + 'b;

/// At most this many bytes of shared memory hold a scan tile's elements.
const TILE_SHARED: u64 = 16 * 1024;

/// Rounds of 32 elements per warp in a filter's chunk.
const FILTER_ROUNDS: u64 = 16;

/// At most this many items per thread in a scan tile.
const MAX_ITEMS: u64 = 15;

/// Items per thread of a scan tile of `block` threads for elements of leaves `ls` (see
/// [`Gen::scan_items`]): the largest odd number with the tile within [`TILE_SHARED`]
/// bytes, at most [`MAX_ITEMS`], at least 1 (one item stays in registers: no shared
/// memory, whatever the element's size).
pub fn scan_items(block: u32, ls: &[Scalar]) -> u64 {
    let bytes: u64 = ls.iter().map(|&s| u64::from(slot_bytes(s))).sum();
    let fit = (TILE_SHARED / (u64::from(block) * bytes.max(1))).clamp(1, MAX_ITEMS);
    if fit % 2 == 0 { fit - 1 } else { fit }
}

/// One of a thread's items in [`Gen::thread_items`].
struct Item<'a> {
    /// The thread's first item.
    first: bool,
    /// The running state must be in the caller's fixed registers after this item.
    fix: bool,
    /// The item's address in each shared array.
    addrs: &'a [String],
}

/// A scan tile being generated: `items` consecutive elements per thread, staged in
/// shared memory (one array per leaf, `items * block` slots).
struct Tile {
    /// The shared arrays, one per leaf.
    arrays: Vec<String>,
    /// The leaves.
    ls: Vec<Scalar>,
    /// Items per thread.
    items: u64,
    /// Index of the tile's first element (`u64`).
    base: Reg,
    /// Elements in the tile (`u64`; `items * block` but in the last tile).
    lim: Reg,
    /// This thread's items (`u32`, `items` but in the last tile).
    mine: Reg,
    /// Shared address of this thread's first item in each array (`u32`).
    first: Vec<Reg>,
    /// With one item per thread, the thread's item is its element in the coalesced order
    /// too: it stays in these registers (one per leaf) and there are no shared arrays
    /// (so any element fits, whatever the block size).
    regs: Option<Vec<Reg>>,
}

/// The look-back status of a scan's tiles (temporaries): the tile counter, one flag per
/// tile, the aggregates and the inclusive prefixes (one buffer per leaf, plus the "has"
/// bytes).
struct Status {
    counter: u32,
    flags: u32,
    aggs: Vec<u32>,
    agg_has: u32,
    incs: Vec<u32>,
    inc_has: u32,
}

/// [`Status`] as kernel parameters.
struct StatusPtrs {
    counter: Reg,
    flags: Reg,
    aggs: Vec<Reg>,
    agg_has: Reg,
    incs: Vec<Reg>,
    inc_has: Reg,
}

/// The per-element callback of [`Gen::for_each`] and [`Gen::stream`]: `(position, element)`.
type Body<'b, 'f> = dyn FnMut(&mut Gen<'f>, &mut Kernel, &mut Env, &Reg, KVal) -> R<()> + 'b;

/// The per-chunk callback of a group's streaming ([`Gen::stream_grouped`]):
/// `(position, valid, element)`.
type GroupBody<'b, 'f> =
    dyn FnMut(&mut Gen<'f>, &mut Kernel, &mut Env, &Reg, &Reg, KVal) -> R<()> + 'b;

/// An element of a group's chunk loop at a position ([`Gen::chunks`]), with the context
/// its checks use.
type GroupElem<'b, 'f> = dyn FnMut(&mut Gen<'f>, &mut Kernel, &mut Env, &Reg, &Ctx) -> R<KVal> + 'b;

/// A value evaluated where a thread has an element ([`Gen::guarded`]), with the context
/// its checks use.
type Guarded<'b, 'f> = dyn FnMut(&mut Gen<'f>, &mut Kernel, &mut Env, &Ctx) -> R<KVal> + 'b;

/// The generator for one function.
pub(crate) struct Gen<'f> {
    f: &'f Function,
    /// Kernel texts, in order.
    pub kernels: Vec<(String, String)>,
    /// Error sites.
    pub sites: Vec<ErrorSite>,
    /// Temporaries used.
    pub temps: u32,
    base: String,
    /// `len s` statements: the variable defined -> `s`.
    len_of: HashMap<VarId, VarId>,
    /// Variables used other than as the length of a combinator.
    other_use: HashSet<VarId>,
    /// Variables some statement reads (anywhere, lambdas included): a per-element
    /// `scatter`/`scatter_reduce`/`permute` among them is stored ([`Gen::materialize`]).
    operand_use: HashSet<VarId>,
    /// Every statement's expression, by the variable it defines.
    defs: HashMap<VarId, &'f Expr>,
    /// The parameters and the variables of the top-level blocks (host values).
    host_vars: HashSet<VarId>,
    /// In a warp-per-element `map`: the element's index register, and for nested
    /// sequences whose row `i` the element function reads, that row's start and end
    /// (loaded for 32 rows at once, coalesced, and shuffled to the warp).
    prefetched: Option<(Reg, Prefetched)>,
    /// Top-level `map`s whose elements hold sequences inside tuples (not stored: their
    /// consumers evaluate the element function again where they read an element, as
    /// fusion would).
    deferred: HashMap<VarId, Soac>,
    /// While compiling the fill kernel of a nested `map`: one flag (`bool`) per output
    /// element, for the duplicate check of a per-element `permute`.
    owner: Option<Reg>,
    /// The schedule of inner levels asked for.
    pub inner: crate::Inner,
    /// Set while compiling the element function of a grouped `map` (a warp or a block per
    /// element), outside any split loop: the next inner reduction is split across the
    /// group's lanes.
    split: Option<Split>,
    /// Threads per block asked for by the attribute (`block = N`), for every kernel.
    pub block: Option<u32>,
    /// The device-wide scan algorithm.
    pub scan_alg: crate::Scan,
    /// Threads per block chosen from register counts, by combinator (its ordinal among the
    /// top-level combinators, see [`Gen::kinfo`]).
    pub tuned: HashMap<u32, u32>,
    /// Per kernel, in order: the ordinal of the combinator it belongs to, its block size
    /// and the default block size of its kind.
    pub kinfo: Vec<KernelInfo>,
    /// The ordinal of the next combinator.
    ordinal: u32,
    /// The combinator being compiled: its ordinal, block size and default block size.
    cur: KernelInfo,
}

/// Which combinator a kernel belongs to and its block size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KernelInfo {
    /// The ordinal of the top-level combinator (kernels of one combinator share a block
    /// size: their tiles and temporaries are sized from it).
    pub group: u32,
    /// Threads per block.
    pub block: u32,
    /// The block size of the kernel's kind without attribute or register counts.
    pub default: u32,
    /// Said after the block size's reason: an asked inner schedule this kernel does not
    /// apply, or why the size is fixed.
    pub note: Option<&'static str>,
    /// The kernel works only with this block size (a radix sort's thread per digit
    /// value): neither the attribute nor the register counts change it.
    pub fixed: bool,
}

/// A group of threads working on one element together.
#[derive(Clone, Debug)]
struct Split {
    /// A whole block (else a warp).
    block: bool,
    /// The thread's position in its group.
    lane: Reg,
}

/// The generator of a combinator producing rows, with a warp (`Some(false)`), a block
/// (`Some(true)`) or a thread (`None`) per row ([`Gen::rows_scheduled`]).
type RowsGen<'b, 'f> = dyn FnMut(&mut Gen<'f>, Option<bool>, &mut Vec<Step>) -> R<()> + 'b;

/// The loop of a kernel with a group of threads (a warp or a block) per element
/// ([`Gen::group_loop_head`]).
#[derive(Clone, Debug)]
struct GroupLoop {
    /// A block per element (else a warp).
    block: bool,
    /// The element's index (the same in every thread of the group).
    i: Reg,
    /// The step of `i`: the number of groups of the grid.
    stride: Reg,
    /// The thread's position in its group.
    lane: Reg,
    /// Whether the thread is the group's first.
    leader: Reg,
    /// The loop's labels: its top, the next element, its end.
    top: String,
    cont: String,
    end: String,
}

/// A group of threads (a warp or a block) writing or measuring one row of a ragged
/// result together (see [`Gen::stream_grouped`]): thread `lane` takes the positions
/// `lane, lane + width, ...` of each sequence, in chunks of `width`.
#[derive(Clone, Debug)]
struct Group {
    /// A whole block (else a warp).
    block: bool,
    /// The thread's position in its group (`u32`).
    lane: Reg,
    /// The group's width (`u64`): 32 or the block's threads.
    width: Reg,
    /// The key of the row's failures (its index).
    key: Reg,
    /// Where the whole group goes when a check fails in the row.
    fail: String,
}

/// A tuple type with a sequence somewhere inside.
fn holds_seq_in_tuple(t: &Type) -> bool {
    matches!(t, Type::Tuple(_)) && t.holds_seq()
}

/// Fills [`Gen::len_of`] and [`Gen::other_use`].
fn analyse(b: &Block, len_of: &mut HashMap<VarId, VarId>, other: &mut HashSet<VarId>) {
    other.insert(b.result);
    for s in &b.stmts {
        if let Expr::Len(x) = s.expr {
            len_of.insert(s.var, x);
        }
        for (j, o) in s.expr.operands().into_iter().enumerate() {
            if !(j == 0 && matches!(s.expr, Expr::Soac(_))) {
                other.insert(o);
            }
        }
        s.expr.for_each_block(&mut |b| analyse(b, len_of, other));
    }
}

/// Fills [`Gen::defs`] and [`Gen::operand_use`] from a block and everything inside it.
fn collect_defs<'a>(b: &'a Block, defs: &mut HashMap<VarId, &'a Expr>, used: &mut HashSet<VarId>) {
    for st in &b.stmts {
        defs.insert(st.var, &st.expr);
        used.extend(st.expr.operands());
        st.expr.for_each_block(&mut |b| collect_defs(b, defs, used));
    }
}

/// Adds the variables a top-level block (and the branches of its top-level `if`s)
/// defines.
fn host_block_vars(b: &Block, out: &mut HashSet<VarId>) {
    for st in &b.stmts {
        out.insert(st.var);
        if let Expr::If(_, t, e) = &st.expr {
            host_block_vars(t, out);
            host_block_vars(e, out);
        }
    }
}

fn var(v: VarId) -> u32 {
    v.index() as u32
}

fn origin_of(kind: &SoacKind) -> Origin {
    Origin::Prim(Prim::from_name(kind.origin_name()).unwrap_or(Prim::Reduce))
}

fn cdiv(c: Count, by: u64) -> Count {
    Count::CeilDiv(Box::new(c), by)
}

fn cmin(a: Count, b: Count) -> Count {
    Count::Min(Box::new(a), Box::new(b))
}

fn cmax1(a: Count) -> Count {
    Count::Max(Box::new(a), Box::new(Count::Const(1)))
}

impl<'f> Gen<'f> {
    pub fn new(f: &'f Function) -> Gen<'f> {
        let base: String = f
            .name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let (mut len_of, mut other_use) = (HashMap::new(), HashSet::new());
        analyse(&f.body, &mut len_of, &mut other_use);
        let (mut defs, mut operand_use) = (HashMap::new(), HashSet::new());
        collect_defs(&f.body, &mut defs, &mut operand_use);
        let mut host_vars: HashSet<VarId> = f.params.iter().copied().collect();
        host_block_vars(&f.body, &mut host_vars);
        Gen {
            f,
            operand_use,
            defs,
            host_vars,
            kernels: Vec::new(),
            sites: Vec::new(),
            temps: 0,
            base: format!("dpl_{base}"),
            len_of,
            other_use,
            inner: crate::Inner::Seq,
            split: None,
            prefetched: None,
            owner: None,
            deferred: HashMap::new(),
            block: None,
            scan_alg: crate::Scan::default(),
            tuned: HashMap::new(),
            kinfo: Vec::new(),
            ordinal: 0,
            cur: KernelInfo {
                group: 0,
                block: DEFAULT_BLOCK,
                default: DEFAULT_BLOCK,
                note: None,
                fixed: false,
            },
        }
    }

    /// Starts the kernels of the next top-level combinator, whose kernels default to
    /// `default` threads per block.
    fn start_group(&mut self, default: u32) {
        let group = self.ordinal;
        self.ordinal += 1;
        self.set_group(group, default);
    }

    /// Makes the kernels created from now on part of combinator `group` with the block size
    /// the attribute, the register counts or `default` says (in that order).
    fn set_group(&mut self, group: u32, default: u32) {
        let block = self
            .block
            .or_else(|| self.tuned.get(&group).copied())
            .unwrap_or(default);
        self.cur = KernelInfo {
            group,
            block,
            default,
            note: None,
            fixed: false,
        };
    }

    /// Threads per block of the kernels being generated.
    fn bsize(&self) -> u32 {
        self.cur.block
    }

    /// Warps per block of the kernels being generated.
    fn warps(&self) -> u32 {
        self.cur.block / 32
    }

    /// Elements per block of the reduce-then-scan offsets being generated.
    fn tile(&self) -> u64 {
        u64::from(self.cur.block) * ROUNDS
    }

    /// The number of blocks of a kernel whose result does not depend on its grid (a grid-,
    /// warp- or block-stride loop over `n` items, `per_block` items per block and turn):
    /// enough blocks for every item, but no more than the device keeps resident.
    fn stride_grid(&self, kernel: u32, n: &Count, per_block: u64) -> Count {
        cmax1(cmin(
            cdiv(n.clone(), per_block),
            Count::Resident {
                kernel,
                block: self.bsize(),
            },
        ))
    }

    /// The index the next kernel pushed will have.
    fn next_kernel(&self) -> u32 {
        self.kernels.len() as u32
    }

    fn temp(&mut self) -> u32 {
        self.temps += 1;
        self.temps - 1
    }

    fn ty(&self, v: VarId) -> &'f Type {
        self.f.ty(v)
    }

    // -----------------------------------------------------------------------------------
    // The host level

    /// The steps of a top-level block (the function body or a branch of a top-level `if`).
    pub fn host_block(&mut self, b: &Block) -> R<Vec<Step>> {
        let mut steps = Vec::new();
        for s in &b.stmts {
            self.host_stmt(s, &mut steps)?;
        }
        if self.deferred.contains_key(&b.result) {
            return unsupported(format!("a result of type `{}`", self.ty(b.result)));
        }
        Ok(steps)
    }

    fn host_stmt(&mut self, s: &Stmt, steps: &mut Vec<Step>) -> R<()> {
        let v = var(s.var);
        let span = s.span.0;
        let ty = self.ty(s.var).clone();
        let host = |expr| Step::Host {
            var: v,
            ty: ty.clone(),
            expr,
            span,
        };
        if let Some(d) = s
            .expr
            .operands()
            .into_iter()
            .find(|o| self.deferred.contains_key(o))
        {
            if let (Expr::Len(_), Some(soac)) = (&s.expr, self.deferred.get(&d)) {
                steps.push(host(HostExpr::Var(var(soac.len))));
                return Ok(());
            }
            return unsupported(format!(
                "a sequence of `{}` used other than by element functions",
                self.ty(d).elem().map(|t| t.to_string()).unwrap_or_default()
            ));
        }
        match &s.expr {
            Expr::Const(c) => steps.push(host(HostExpr::Const(*c))),
            Expr::Var(x) => steps.push(host(HostExpr::Var(var(*x)))),
            Expr::Unary(op, x) => steps.push(host(HostExpr::Unary(*op, var(*x)))),
            Expr::Binary(op, a, b) => steps.push(host(HostExpr::Binary(*op, var(*a), var(*b)))),
            Expr::Cast(x, to) => steps.push(host(HostExpr::Cast(var(*x), *to))),
            Expr::Tuple(xs) => {
                steps.push(host(HostExpr::Tuple(xs.iter().map(|x| var(*x)).collect())))
            }
            Expr::Field(x, n) => steps.push(host(HostExpr::Field(var(*x), *n))),
            Expr::Math(m, xs) => steps.push(host(HostExpr::Math(
                *m,
                xs.iter().map(|x| var(*x)).collect(),
            ))),
            Expr::Len(x) => steps.push(host(HostExpr::Len(var(*x)))),
            Expr::Index {
                seq,
                index,
                checked,
            } => {
                if let Some(e) = self.ty(*seq).elem()
                    && leaves(e).is_err()
                    && e.elem().is_none_or(|t| leaves(t).is_err())
                {
                    return unsupported(format!("indexing a sequence of `{e}` on the host"));
                }
                steps.push(host(HostExpr::Index {
                    seq: var(*seq),
                    index: var(*index),
                    checked: *checked,
                }))
            }
            Expr::If(c, t, e) => {
                let then = self.host_block(t)?;
                let else_ = self.host_block(e)?;
                steps.push(Step::If {
                    var: v,
                    cond: var(*c),
                    then,
                    then_result: var(t.result),
                    else_,
                    else_result: var(e.result),
                });
            }
            Expr::Assert(a) => {
                let check = match a {
                    Assertion::EqLen { origin, a, b } => HostAssert::EqLen {
                        origin: *origin,
                        a: var(*a),
                        b: var(*b),
                    },
                    Assertion::InBounds { origin, index, len } => HostAssert::InBounds {
                        origin: *origin,
                        index: var(*index),
                        len: var(*len),
                    },
                    Assertion::NonEmpty { origin, len } => HostAssert::NonEmpty {
                        origin: *origin,
                        len: var(*len),
                    },
                    Assertion::IndicesInRange { .. } => {
                        return unsupported("the indices_in_range assertion");
                    }
                };
                steps.push(host(HostExpr::Tuple(Vec::new())));
                steps.push(Step::Assert { check, span });
            }
            Expr::Prim { prim, .. } => {
                return unsupported(format!(
                    "primitive `{}` at the Prim level: compile the fused function",
                    prim.name()
                ));
            }
            Expr::Soac(soac) => self.soac(s, soac, steps)?,
        }
        Ok(())
    }

    fn new_kernel(&mut self, what: &str) -> (Kernel, Common) {
        let name = format!("{}_k{}_{what}", self.base, self.kernels.len());
        let mut k = Kernel::new(name, self.bsize());
        let err = k.pointer(KArg::ErrorRecord);
        let report = k.param(Scalar::U64, KArg::ReportKey);
        let tid = k.reg(Scalar::U32);
        k.ins(format!("mov.u32 {tid}, %tid.x"));
        let tid64 = k.reg(Scalar::U64);
        k.ins(format!("cvt.u64.u32 {tid64}, {tid}"));
        let lane = k.reg(Scalar::U32);
        k.ins(format!("and.b32 {lane}, {tid}, 31"));
        let warp = k.reg(Scalar::U32);
        k.ins(format!("shr.u32 {warp}, {tid}, 5"));
        let cta = k.reg(Scalar::U32);
        k.ins(format!("mov.u32 {cta}, %ctaid.x"));
        let ctaid64 = k.reg(Scalar::U64);
        k.ins(format!("cvt.u64.u32 {ctaid64}, {cta}"));
        (
            k,
            Common {
                err,
                report,
                tid,
                tid64,
                lane,
                warp,
                ctaid64,
            },
        )
    }

    fn push_kernel(&mut self, k: Kernel) -> u32 {
        let name = k.name.clone();
        self.kinfo.push(KernelInfo {
            block: k.block,
            ..self.cur
        });
        self.kernels.push((name, k.finish()));
        self.kernels.len() as u32 - 1
    }

    /// Binds a host variable (or a part of it) as kernel parameters.
    fn bind_var(&mut self, k: &mut Kernel, v: u32, path: Vec<u32>, ty: &Type) -> R<KVal> {
        Ok(match ty {
            Type::Scalar(s) => KVal::S(k.param(
                *s,
                KArg::Scalar {
                    var: v,
                    path,
                    ty: *s,
                },
            )),
            Type::Tuple(ts) => KVal::Tup(
                ts.iter()
                    .enumerate()
                    .map(|(i, t)| {
                        let mut p = path.clone();
                        p.push(i as u32);
                        self.bind_var(k, v, p, t)
                    })
                    .collect::<R<_>>()?,
            ),
            Type::Seq(elem) => {
                let (offs, leaf_ty) = match &**elem {
                    Type::Seq(inner) => (
                        Some(k.pointer(KArg::Buf(Buf::Offsets {
                            var: v,
                            path: path.clone(),
                        }))),
                        &**inner,
                    ),
                    e => (None, e),
                };
                let layout = if offs.is_some() {
                    let mut field = |f: u32| {
                        k.param_name(KArg::RowLayout {
                            var: v,
                            path: path.clone(),
                            field: f,
                        })
                    };
                    let names = [field(0), field(1), field(2), field(3)];
                    Some(Rc::new(RowLayout { names }))
                } else {
                    None
                };
                let ls = match leaves(leaf_ty) {
                    Ok(ls) => ls,
                    Err(_) => return unsupported(format!("the sequence type `{ty}` in a kernel")),
                };
                let ptrs = (0..ls.len())
                    .map(|j| {
                        k.pointer(KArg::Buf(Buf::Seq {
                            var: v,
                            path: path.clone(),
                            leaf: j as u32,
                        }))
                    })
                    .collect();
                let len = k.param(Scalar::U64, KArg::Count(Count::Len { var: v, path }));
                KVal::Seq {
                    ptrs,
                    len: Reg {
                        ty: Scalar::Usize,
                        ..len
                    },
                    elem: (**elem).clone(),
                    offs,
                    layout,
                    step: None,
                }
            }
            Type::Infer => return unsupported("an untyped variable"),
        })
    }

    /// Binds the captures of some lambdas as kernel parameters.
    fn bind_captures(&mut self, k: &mut Kernel, lambdas: &[&Lambda]) -> R<Env> {
        let mut env = Env::new();
        for l in lambdas {
            for &c in &l.captures {
                if env.contains_key(&c) {
                    continue;
                }
                if let Some(soac) = self.deferred.get(&c).cloned() {
                    // Its element function's captures, then the map itself, lazily.
                    let inner = self.bind_captures(k, &[&soac.elem])?;
                    for (v, x) in inner {
                        env.entry(v).or_insert(x);
                    }
                    let elem_ty = self.ty(c).elem().cloned().unwrap_or(Type::Infer);
                    env.insert(
                        c,
                        KVal::Lazy(Rc::new(LazySeq {
                            var: c,
                            soac,
                            elem_ty,
                            span: 0,
                        })),
                    );
                    continue;
                }
                let t = self.ty(c).clone();
                let val = self.bind_var(k, var(c), Vec::new(), &t)?;
                env.insert(c, val);
            }
        }
        Ok(env)
    }

    /// Pointers to temporaries, one per leaf, as kernel parameters.
    fn temp_ptrs(k: &mut Kernel, temps: &[u32]) -> Vec<Reg> {
        temps
            .iter()
            .map(|t| k.pointer(KArg::Buf(Buf::Temp(*t))))
            .collect()
    }

    fn alloc_leaves(&mut self, ls: &[Scalar], count: &Count, steps: &mut Vec<Step>) -> Vec<u32> {
        ls.iter()
            .map(|&elem| {
                let temp = self.temp();
                steps.push(Step::Alloc {
                    temp,
                    elem,
                    count: count.clone(),
                });
                temp
            })
            .collect()
    }

    fn soac(&mut self, s: &Stmt, soac: &Soac, steps: &mut Vec<Step>) -> R<()> {
        if soac.elem.params.len() != 1 {
            return unsupported("an element function without exactly one index parameter");
        }
        self.start_group(DEFAULT_BLOCK);
        match &soac.kind {
            SoacKind::Map if self.ty(s.var).elem().is_some_and(holds_seq_in_tuple) => {
                self.deferred.insert(s.var, soac.clone());
                Ok(())
            }
            SoacKind::Filter { pred } if matches!(self.ty(s.var).elem(), Some(Type::Seq(_))) => {
                let Some(Type::Seq(row)) = self.ty(s.var).elem() else {
                    return unsupported("a filter of rows without a row type (internal)");
                };
                self.rows_scheduled(soac, steps, &mut |g, group, steps| {
                    g.nested_filter(s, soac, pred, row, group, steps)
                })
            }
            SoacKind::Map => match self.ty(s.var).elem() {
                Some(Type::Seq(row)) => self.rows_scheduled(soac, steps, &mut |g, group, steps| {
                    g.nested_map(s, soac, row, group, steps)
                }),
                _ => self.map_scheduled(s, soac, steps),
            },
            SoacKind::Reduce { op, init } => self.reduce(s, soac, op, *init, steps),
            SoacKind::Scan { op } => match self.scan_alg {
                crate::Scan::LookBack => self.scan_lookback(s, soac, op, None, steps),
                crate::Scan::ReduceThenScan => self.scan(s, soac, op, None, steps),
            },
            SoacKind::ExclusiveScan { op, init } => match self.scan_alg {
                crate::Scan::LookBack => self.scan_lookback(s, soac, op, Some(*init), steps),
                crate::Scan::ReduceThenScan => self.scan(s, soac, op, Some(*init), steps),
            },
            SoacKind::Filter { pred } => self.filter(s, soac, pred, steps),
            SoacKind::Scatter { dst } => self.scatter(s, soac, None, *dst, steps),
            SoacKind::ScatterReduce { op, dst } => self.scatter(s, soac, Some(op), *dst, steps),
            SoacKind::Permute => self.permute(s, soac, steps),
            SoacKind::Sort | SoacKind::SortByKey => self.sort(s, soac, steps),
        }
    }

    /// The grid-stride loop head: returns (index register, loop label, continue label,
    /// end label). The caller emits the body, then [`Gen::loop_tail`].
    fn grid_stride_head(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        n: &Reg,
    ) -> (Reg, Reg, String, String, String) {
        let ntid = k.reg(Scalar::U32);
        k.ins(format!("mov.u32 {ntid}, %ntid.x"));
        let ncta = k.reg(Scalar::U32);
        k.ins(format!("mov.u32 {ncta}, %nctaid.x"));
        let stride = k.reg(Scalar::U64);
        k.ins(format!("mul.wide.u32 {stride}, {ntid}, {ncta}"));
        let i = k.reg(Scalar::Usize);
        let base = k.reg(Scalar::U64);
        let cta = k.reg(Scalar::U32);
        k.ins(format!("cvt.u32.u64 {cta}, {}", c.ctaid64));
        k.ins(format!("mul.wide.u32 {base}, {ntid}, {cta}"));
        k.ins(format!("add.s64 {i}, {base}, {}", c.tid64));
        let (top, cont, end) = (k.label(), k.label(), k.label());
        k.place(&top);
        let p = k.reg(Scalar::Bool);
        k.ins(format!("setp.ge.u64 {p}, {i}, {n}"));
        k.ins(format!("@{p} bra {end}"));
        (i, stride, top, cont, end)
    }

    fn loop_tail(k: &mut Kernel, i: &Reg, stride: &Reg, top: &str, cont: &str, end: &str) {
        k.place(cont);
        k.ins(format!("add.s64 {i}, {i}, {stride}"));
        k.ins(format!("bra.uni {top}"));
        k.place(end);
    }

    /// A launch of a kernel whose results depend on its grid size (one block per tile,
    /// one block in all).
    fn launch(&self, kernel: u32, grid: Count, args: Vec<KArg>) -> Step {
        Step::Launch(Launch {
            kernel,
            grid,
            block: self.bsize(),
            args,
            any_grid: false,
        })
    }

    /// A launch of a grid-stride kernel (see [`Gen::stride_grid`]) over `n` items,
    /// `per_block` per block and turn.
    fn stride_launch(&self, kernel: u32, n: &Count, per_block: u64, args: Vec<KArg>) -> Step {
        Step::Launch(Launch {
            kernel,
            grid: self.stride_grid(kernel, n, per_block),
            block: self.bsize(),
            args,
            any_grid: true,
        })
    }

    /// Evaluates the element function at index `i`.
    fn elem(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        l: &Lambda,
        i: &Reg,
        ctx: &Ctx,
    ) -> R<KVal> {
        env.insert(
            l.params[0],
            KVal::S(Reg {
                ty: Scalar::Usize,
                ..i.clone()
            }),
        );
        self.block(k, c, env, &l.body, ctx)
    }

    fn map(&mut self, s: &Stmt, soac: &Soac, steps: &mut Vec<Step>) -> R<()> {
        let Some(elem_ty) = self.ty(s.var).elem() else {
            return unsupported("map without a sequence type");
        };
        let n_count = Count::Var(var(soac.len));
        let outs = self.map_to_temps(soac, &leaves(elem_ty)?, "map", steps)?;
        steps.push(Self::bind_flat(s.var, elem_ty, outs, n_count));
        Ok(())
    }

    /// Makes `v` the flat sequence of `len` elements of type `elem` held in the
    /// temporaries `outs` (one per scalar leaf).
    fn bind_flat(v: VarId, elem: &Type, outs: Vec<u32>, len: Count) -> Step {
        Step::BindSeq {
            var: var(v),
            elem: elem.clone(),
            bufs: outs.into_iter().map(Buf::Temp).collect(),
            len,
            offs: None,
        }
    }

    /// The elements of `soac` (a combinator over `soac.len` indices whose element function
    /// gives scalars or tuples of leaf types `ls`), one grid-stride kernel named `what`
    /// evaluating the element function once per index and storing each leaf in a fresh
    /// temporary of `soac.len` elements; returns the temporaries.
    fn map_to_temps(
        &mut self,
        soac: &Soac,
        ls: &[Scalar],
        what: &str,
        steps: &mut Vec<Step>,
    ) -> R<Vec<u32>> {
        let n_count = Count::Var(var(soac.len));
        let outs = self.alloc_leaves(ls, &n_count, steps);
        let (mut k, c) = self.new_kernel(what);
        let mut env = self.bind_captures(&mut k, &[&soac.elem])?;
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let ptrs = Self::temp_ptrs(&mut k, &outs);
        let (i, stride, top, cont, end) = self.grid_stride_head(&mut k, &c, &n);
        let ctx = Ctx {
            key: i.clone(),
            fail: Some(cont.clone()),
        };
        let v = self.elem(&mut k, &c, &mut env, &soac.elem, &i, &ctx)?;
        for (r, p) in v.flatten()?.iter().zip(&ptrs) {
            self.store(&mut k, p, &i, r);
        }
        Self::loop_tail(&mut k, &i, &stride, &top, &cont, &end);
        let args = k.args.clone();
        let kid = self.push_kernel(k);
        let per_block = u64::from(self.bsize());
        steps.push(self.stride_launch(kid, &n_count, per_block, args));
        steps.push(Step::CheckErrors);
        Ok(outs)
    }

    /// A `map` whose elements are scalars or tuples under the inner schedule asked for:
    /// a thread ([`Gen::map`]), a warp ([`Gen::map_warp`]) or a block
    /// ([`Gen::map_grouped`]) per element, or with `inner = "auto"` both a warp and a
    /// thread per element, chosen at run time from the shape of the rows the element
    /// function reads ([`Step::ByShape`]). Where the group version cannot be generated (a
    /// `sort` inside the element function runs in one thread), a thread per element,
    /// which the kernels' block-size reason says.
    fn map_scheduled(&mut self, s: &Stmt, soac: &Soac, steps: &mut Vec<Step>) -> R<()> {
        let shape = self.shape_source(soac);
        let block = match (self.inner, shape) {
            (crate::Inner::Seq, _) | (crate::Inner::Auto, None) => {
                return self.map(s, soac, steps);
            }
            (crate::Inner::Warp | crate::Inner::Auto, _) => false,
            (crate::Inner::Block, _) => true,
        };
        let Some(grouped) = self.try_grouped(&mut |g, steps| match block {
            true => g.map_grouped(s, soac, true, steps),
            false => g.map_warp(s, soac, steps),
        }) else {
            self.cur.note = Some(NOT_SPLIT);
            return self.map(s, soac, steps);
        };
        match shape {
            Some(rows) if self.inner == crate::Inner::Auto => {
                let mut seq = Vec::new();
                self.map(s, soac, &mut seq)?;
                steps.push(Step::ByShape {
                    rows,
                    warp: grouped,
                    seq,
                });
            }
            _ => steps.extend(grouped),
        }
        Ok(())
    }

    /// Generates a group schedule with `make` into fresh steps; if it fails, undoes what it
    /// made (kernels, sites, temporaries, the kernels' block size) and returns `None`.
    fn try_grouped(
        &mut self,
        make: &mut dyn FnMut(&mut Self, &mut Vec<Step>) -> R<()>,
    ) -> Option<Vec<Step>> {
        let mark = (
            self.kernels.len(),
            self.kinfo.len(),
            self.sites.len(),
            self.temps,
            self.cur,
        );
        let mut grouped = Vec::new();
        if make(self, &mut grouped).is_ok() {
            return Some(grouped);
        }
        self.kernels.truncate(mark.0);
        self.kinfo.truncate(mark.1);
        self.sites.truncate(mark.2);
        self.temps = mark.3;
        self.split = None;
        self.owner = None;
        self.set_group(mark.4.group, DEFAULT_BLOCK);
        None
    }

    /// A `map` or a `filter` whose elements are sequences (a ragged result) under the
    /// inner schedule asked for: `rows(group)` generates it with a warp or a block per
    /// row (`Some(false)` / `Some(true)`, see [`Gen::nested_map`], [`Gen::nested_filter`])
    /// or a thread per row (`None`). The group version is used when it can be generated
    /// (the row written by a group, [`Gen::write_grouped`]: rows, captured sequences, and
    /// `map`s, `scan`s and `filter`s of them); otherwise, or with `inner = "seq"`, a
    /// thread per row, which the kernels' block-size reason says when an inner schedule
    /// was asked for. `inner = "auto"` compiles both, chosen at run time from the shape of
    /// the rows the element function reads ([`Step::ByShape`]).
    fn rows_scheduled(
        &mut self,
        soac: &Soac,
        steps: &mut Vec<Step>,
        rows: &mut RowsGen<'_, 'f>,
    ) -> R<()> {
        let shape = self.shape_source(soac);
        let block = match self.inner {
            crate::Inner::Seq => return rows(self, None, steps),
            crate::Inner::Warp => false,
            crate::Inner::Block => true,
            crate::Inner::Auto if shape.is_some() => false,
            crate::Inner::Auto => {
                self.cur.note = Some(THREAD_PER_ROW);
                return rows(self, None, steps);
            }
        };
        let Some(grouped) = self.try_grouped(&mut |g, steps| rows(g, Some(block), steps)) else {
            self.cur.note = Some(THREAD_PER_ROW);
            return rows(self, None, steps);
        };
        match shape {
            Some(shape) if self.inner == crate::Inner::Auto => {
                let mut seq = Vec::new();
                rows(self, None, &mut seq)?;
                steps.push(Step::ByShape {
                    rows: shape,
                    warp: grouped,
                    seq,
                });
            }
            _ => steps.extend(grouped),
        }
        Ok(())
    }

    /// Whether the length of an element function's result needs no work beyond reading
    /// lengths: its top-level statements (and those of its `if`s) hold no combinator
    /// other than `map`, `scan` and `exclusive_scan` (which stay lazy, their length being
    /// their index space's): no reduction, `filter` (counted) or `scatter`/`permute`.
    fn lengths_only(&self, b: &Block) -> bool {
        b.stmts.iter().all(|st| match &st.expr {
            Expr::Soac(x) => matches!(
                x.kind,
                SoacKind::Map | SoacKind::Scan { .. } | SoacKind::ExclusiveScan { .. }
            ),
            Expr::If(_, t, e) => self.lengths_only(t) && self.lengths_only(e),
            // An element of a map not stored is its element function, evaluated here.
            Expr::Index { seq, .. } => self
                .deferred
                .get(seq)
                .is_none_or(|d| self.lengths_only(&d.elem.body)),
            _ => true,
        })
    }

    /// A `map` whose elements are sequences (a nested result, rows of any lengths), in
    /// phases: (1) each element's length into `sizes`; (2) an exclusive scan of the sizes
    /// gives the row offsets and the total, read back to allocate the leaves exactly;
    /// (3) each element again, written at its offset.
    ///
    /// With `group` (`Some(true)`: a block per row, `Some(false)`: a warp), (1) and (3)
    /// give each row a group of threads: every thread evaluates the element function (its
    /// inner reductions split across the group), then the group measures
    /// ([`Gen::group_len`]) or writes ([`Gen::write_grouped`]) the row together. (1) stays
    /// a thread per row when the lengths need no work ([`Gen::lengths_only`]). Fails when
    /// the row cannot be written by a group.
    fn nested_map(
        &mut self,
        s: &Stmt,
        soac: &Soac,
        row: &Type,
        group: Option<bool>,
        steps: &mut Vec<Step>,
    ) -> R<()> {
        let ls = match leaves(row) {
            Ok(ls) => ls,
            Err(_) => return unsupported(format!("sequences of `[{row}]` as results")),
        };
        if group == Some(true) {
            self.set_group(self.cur.group, GROUP_BLOCK);
        }
        let per_block = |g: &Self, grp: Option<bool>| match grp {
            None => u64::from(g.bsize()),
            Some(false) => u64::from(g.warps()),
            Some(true) => 1,
        };
        let n_count = Count::Var(var(soac.len));
        let sizes = self.alloc_leaves(&[Scalar::U64], &n_count, steps)[0];

        let sized_by = group.filter(|_| !self.lengths_only(&soac.elem.body));
        let (mut k, c) = self.new_kernel(match sized_by {
            None => "row_sizes",
            Some(false) => "row_sizes_warp",
            Some(true) => "row_sizes_block",
        });
        let mut env = self.bind_captures(&mut k, &[&soac.elem])?;
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let sp = Self::temp_ptrs(&mut k, &[sizes])[0].clone();
        match sized_by {
            None => {
                let (i, stride, top, cont, end) = self.grid_stride_head(&mut k, &c, &n);
                let ctx = Ctx {
                    key: i.clone(),
                    fail: Some(cont.clone()),
                };
                let v = self.elem(&mut k, &c, &mut env, &soac.elem, &i, &ctx)?;
                let len = self.seq_len(&mut k, &c, &mut env, &v, &ctx)?;
                self.store(&mut k, &sp, &i, &len);
                Self::loop_tail(&mut k, &i, &stride, &top, &cont, &end);
            }
            Some(block) => {
                let gl = Self::group_loop_head(&mut k, &c, &n, block);
                let ctx = Ctx {
                    key: gl.i.clone(),
                    fail: Some(gl.cont.clone()),
                };
                let v = self.split_elem(&mut k, &c, &mut env, &soac.elem, &gl, &ctx)?;
                let grp = self.group(&mut k, &gl);
                let len = self.group_len(&mut k, &c, &mut env, &v, &grp)?;
                k.ins(format!("@!{} bra {}", gl.leader, gl.cont));
                self.store(&mut k, &sp, &gl.i, &len);
                Self::group_loop_tail(&mut k, &gl);
            }
        }
        let args = k.args.clone();
        let note = self.cur.note;
        if group.is_some() && sized_by.is_none() {
            self.cur.note = Some(LENGTHS_ONLY);
        }
        let k1 = self.push_kernel(k);
        self.cur.note = note;
        steps.push(self.stride_launch(k1, &n_count, per_block(self, sized_by), args));
        steps.push(Step::CheckErrors);

        let (offs, total) = self.offsets(sizes, &n_count, steps)?;
        let outs = self.alloc_leaves(&ls, &Count::Temp(total), steps);
        let mut has_permute = false;
        soac.elem.body.walk(&mut |st| {
            if let Expr::Soac(x) = &st.expr {
                has_permute |= matches!(x.kind, SoacKind::Permute);
            }
        });
        let owner =
            has_permute.then(|| self.alloc_leaves(&[Scalar::Bool], &Count::Temp(total), steps)[0]);

        let (mut k, c) = self.new_kernel(match group {
            None => "row_fill",
            Some(false) => "row_fill_warp",
            Some(true) => "row_fill_block",
        });
        let mut env = self.bind_captures(&mut k, &[&soac.elem])?;
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let op = Self::temp_ptrs(&mut k, &[offs])[0].clone();
        let ptrs = Self::temp_ptrs(&mut k, &outs);
        self.owner = owner.map(|o| Self::temp_ptrs(&mut k, &[o])[0].clone());
        let written = match group {
            None => (|| {
                let (i, stride, top, cont, end) = self.grid_stride_head(&mut k, &c, &n);
                let ctx = Ctx {
                    key: i.clone(),
                    fail: Some(cont.clone()),
                };
                let v = self.elem(&mut k, &c, &mut env, &soac.elem, &i, &ctx)?;
                let a = Self::addr(&mut k, &op, &i, Scalar::U64);
                let base = k.reg(Scalar::U64);
                k.ins(format!("ld.global.u64 {base}, [{a}]"));
                self.write_seq(&mut k, &c, &mut env, &v, &ptrs, &base, &ctx)?;
                Self::loop_tail(&mut k, &i, &stride, &top, &cont, &end);
                Ok(())
            })(),
            Some(block) => (|| {
                let gl = Self::group_loop_head(&mut k, &c, &n, block);
                let ctx = Ctx {
                    key: gl.i.clone(),
                    fail: Some(gl.cont.clone()),
                };
                let v = self.split_elem(&mut k, &c, &mut env, &soac.elem, &gl, &ctx)?;
                let a = Self::addr(&mut k, &op, &gl.i, Scalar::U64);
                let (base, stop) = (k.reg(Scalar::U64), k.reg(Scalar::U64));
                k.ins(format!("ld.global.u64 {base}, [{a}]"));
                k.ins(format!("ld.global.u64 {stop}, [{a}+8]"));
                let size = k.reg(Scalar::U64);
                k.ins(format!("sub.s64 {size}, {stop}, {base}"));
                self.write_rows_grouped(&mut k, &c, &mut env, &v, &ptrs, &base, &size, &gl, &ctx)?;
                Self::group_loop_tail(&mut k, &gl);
                Ok(())
            })(),
        };
        self.owner = None;
        written?;
        let args = k.args.clone();
        let k2 = self.push_kernel(k);
        steps.push(self.stride_launch(k2, &n_count, per_block(self, group), args));
        steps.push(Step::CheckErrors);
        steps.push(Step::BindSeq {
            var: var(s.var),
            elem: Type::seq(row.clone()),
            bufs: outs.into_iter().map(Buf::Temp).collect(),
            len: n_count,
            offs: Some(Buf::Temp(offs)),
        });
        Ok(())
    }

    /// `report != 0`: the kernel runs in report mode (see [`Gen::record`]).
    fn report_mode(k: &mut Kernel, c: &Common) -> Reg {
        let rep = k.reg(Scalar::Bool);
        k.ins(format!("setp.ne.u64 {rep}, {}, 0", c.report));
        rep
    }

    /// The [`Group`] of a group loop's threads, for its current element.
    fn group(&mut self, k: &mut Kernel, gl: &GroupLoop) -> Group {
        let width = k.reg(Scalar::U64);
        if gl.block {
            let nt = k.reg(Scalar::U32);
            k.ins(format!("mov.u32 {nt}, %ntid.x"));
            k.ins(format!("cvt.u64.u32 {width}, {nt}"));
        } else {
            k.ins(format!("mov.u64 {width}, 32"));
        }
        Group {
            block: gl.block,
            lane: gl.lane.clone(),
            width,
            key: gl.i.clone(),
            fail: gl.cont.clone(),
        }
    }

    /// The length of a row (an element function's result) measured by a group: a
    /// `filter` in it is counted in chunks of the group's width ([`Gen::group_count`]).
    /// In report mode every thread counts alone, in order ([`Gen::seq_len`]), so the
    /// failure recorded first is the first in sequential order.
    fn group_len(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        v: &KVal,
        grp: &Group,
    ) -> R<Reg> {
        let n = k.reg(Scalar::Usize);
        let rep = Self::report_mode(k, c);
        let (alone, done) = (k.label(), k.label());
        k.ins(format!("@{rep} bra {alone}"));
        let m = self.len_grouped(k, c, env, v, grp)?;
        Self::mov(k, &n, &m);
        k.ins(format!("bra {done}"));
        k.place(&alone);
        let ctx = Ctx {
            key: grp.key.clone(),
            fail: Some(grp.fail.clone()),
        };
        let m = self.seq_len(k, c, env, v, &ctx)?;
        Self::mov(k, &n, &m);
        k.place(&done);
        Ok(n)
    }

    /// [`Gen::seq_len`] by a group (see [`Gen::group_len`]); fails for sequences a group
    /// does not produce ([`Gen::stream_grouped`]).
    fn len_grouped(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        v: &KVal,
        grp: &Group,
    ) -> R<Reg> {
        let l = match v {
            KVal::Seq { offs: None, .. } => return self.seq_len(k, c, env, v, &Self::no_fail(grp)),
            KVal::Lazy(l) | KVal::Cur { of: l, .. } => l.clone(),
            _ => return unsupported("this row by a group of threads"),
        };
        match &l.soac.kind {
            SoacKind::Filter { pred } => {
                let cnt = k.reg(Scalar::Usize);
                k.ins(format!("mov.u64 {cnt}, 0"));
                let saved = env.get(&l.var).cloned();
                self.for_each_grouped(k, c, env, &l.soac, grp, &mut |g, k, env, _j, ok, e| {
                    let keep = g.group_keep(k, c, env, grp, pred, ok, e)?;
                    let (_, total) = g.group_count(k, c, env, grp, &keep, false)?;
                    k.ins(format!("add.s64 {cnt}, {cnt}, {total}"));
                    Ok(())
                })?;
                if let Some(sv) = saved {
                    env.insert(l.var, sv);
                }
                Ok(cnt)
            }
            SoacKind::Map | SoacKind::Scan { .. } | SoacKind::ExclusiveScan { .. } => {
                match self.streamed_source(env, &l.soac) {
                    Some((_, src)) => self.len_grouped(k, c, env, &src, grp),
                    None => Ok(Self::get(env, l.soac.len)?.reg()?.clone()),
                }
            }
            _ => unsupported("this row by a group of threads"),
        }
    }

    /// A context recording failures with the row's key and going on (in code no check
    /// can fail in, or where the group cannot leave: its collective steps).
    fn no_fail(grp: &Group) -> Ctx {
        Ctx {
            key: grp.key.clone(),
            fail: None,
        }
    }

    /// Writes a row (an element function's result) at `base` of `ptrs` with a group:
    /// thread `t` takes positions `t, t + width, ...` ([`Gen::stream_grouped`]), so the
    /// stores of a chunk are consecutive. Positions past `size` (the row's length from
    /// the sizes pass) are not written. Fails for rows a group does not produce: then the
    /// map runs a thread per row.
    #[allow(clippy::too_many_arguments)]
    fn write_grouped(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        v: &KVal,
        ptrs: &[Reg],
        base: &Reg,
        size: &Reg,
        grp: &Group,
    ) -> R<()> {
        let put = |g: &mut Self, k: &mut Kernel, j: &Reg, ok: &Reg, e: KVal| -> R<()> {
            let w = k.reg(Scalar::Bool);
            k.ins(format!("setp.lt.and.u64 {w}, {j}, {size}, {ok}"));
            let skip = k.label();
            k.ins(format!("@!{w} bra {skip}"));
            let at = k.reg(Scalar::U64);
            k.ins(format!("add.s64 {at}, {base}, {j}"));
            for (r, p) in e.flatten()?.iter().zip(ptrs) {
                g.store(k, p, &at, r);
            }
            k.place(&skip);
            Ok(())
        };
        match v {
            KVal::Seq {
                offs: None,
                len,
                elem,
                ..
            } => {
                let (len, elem) = (len.clone(), elem.clone());
                self.chunks(
                    k,
                    env,
                    grp,
                    &len,
                    &elem,
                    &mut |g, k, env, j, ctx| g.index(k, c, env, v, j, ctx),
                    &mut |g, k, _env, j, ok, e| put(g, k, j, ok, e),
                )
            }
            KVal::Lazy(l) | KVal::Cur { of: l, .. } => {
                let l = l.clone();
                self.stream_grouped(k, c, env, &l, grp, &mut |g, k, _env, j, ok, e| {
                    put(g, k, j, ok, e)
                })
            }
            _ => unsupported("this row by a group of threads"),
        }
    }

    /// [`Gen::stream`] by a group: produces the elements of a lazy sequence in chunks of
    /// the group's width, `body(position, produced, element)` in every thread of the
    /// group at each chunk (`produced` false where the thread has no element). A `map`
    /// evaluates its element function at the thread's position; a `scan` combines a
    /// group scan of the chunk ([`Gen::group_scan`]) with the carry of the chunks before;
    /// a `filter` places its survivors after those of the chunks before by a group count
    /// of its flags ([`Gen::group_count`]), keeping their order. Fails for the other
    /// combinators.
    fn stream_grouped(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        l: &Rc<LazySeq>,
        grp: &Group,
        body: &mut GroupBody<'_, 'f>,
    ) -> R<()> {
        let ety = &l.elem_ty;
        match &l.soac.kind {
            SoacKind::Map => self.for_each_grouped(k, c, env, &l.soac, grp, body),
            SoacKind::Scan { op } | SoacKind::ExclusiveScan { op, .. } => {
                let ls = leaves(ety)?;
                let comb = Comb::Op(op, ety);
                let carry = self.none(k, &ls);
                let exclusive = match &l.soac.kind {
                    SoacKind::ExclusiveScan { init, .. } => {
                        let v = Self::get(env, *init)?.flatten()?;
                        for (d, s) in carry.v.iter().zip(&v) {
                            Self::mov(k, d, s);
                        }
                        k.ins(format!("setp.eq.u32 {}, 0, 0", carry.has));
                        true
                    }
                    _ => false,
                };
                let op_ctx = Self::no_fail(grp);
                self.for_each_grouped(k, c, env, &l.soac, grp, &mut |g, k, env, j, ok, e| {
                    let x = Opt {
                        has: ok.clone(),
                        v: e.flatten()?,
                    };
                    let (incl, excl, total) = g.group_scan(k, c, env, grp, comb, &x, &op_ctx)?;
                    let mine = if exclusive { &excl } else { &incl };
                    let out = g.opt_combine(k, c, env, comb, &carry, mine, &op_ctx)?;
                    let next = g.opt_combine(k, c, env, comb, &carry, &total, &op_ctx)?;
                    Self::mov_opt(k, &carry, &next);
                    body(g, k, env, j, ok, unflatten(ety, &mut out.v.into_iter())?)
                })
            }
            SoacKind::Filter { pred } => {
                let cnt = k.reg(Scalar::Usize);
                k.ins(format!("mov.u64 {cnt}, 0"));
                self.for_each_grouped(k, c, env, &l.soac, grp, &mut |g, k, env, _j, ok, e| {
                    let keep = g.group_keep(k, c, env, grp, pred, ok, e.clone())?;
                    let (before, total) = g.group_count(k, c, env, grp, &keep, true)?;
                    let pos = k.reg(Scalar::Usize);
                    k.ins(format!("add.s64 {pos}, {cnt}, {before}"));
                    k.ins(format!("add.s64 {cnt}, {cnt}, {total}"));
                    body(g, k, env, &pos, &keep, e)
                })
            }
            _ => unsupported("this row by a group of threads"),
        }
    }

    /// [`Gen::for_each`] by a group: `body(position, valid, element)` over a combinator's
    /// index space in chunks of the group's width, or inside [`Gen::stream_grouped`] of
    /// the lazy sequence whose length it is.
    fn for_each_grouped(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        soac: &Soac,
        grp: &Group,
        body: &mut GroupBody<'_, 'f>,
    ) -> R<()> {
        let ety = self.ty(soac.elem.body.result).clone();
        if let Some(&src) = self.len_of.get(&soac.len)
            && matches!(env.get(&src), Some(KVal::Cond(_)))
        {
            return unsupported("a sequence an `if` chooses, by a group of threads");
        }
        if let Some((src, saved)) = self.streamed_source(env, soac) {
            let of = match &saved {
                KVal::Lazy(l) | KVal::Cur { of: l, .. } => l.clone(),
                _ => return unsupported("a lazy sequence was expected (internal)"),
            };
            let r = self.stream_grouped(k, c, env, &of, grp, &mut |g, k, env, j, ok, e| {
                env.insert(
                    src,
                    KVal::Cur {
                        idx: j.clone(),
                        val: Box::new(e),
                        of: of.clone(),
                    },
                );
                let x = g.guarded(k, env, grp, ok, &ety, &mut |g, k, env, ctx| {
                    g.elem(k, c, env, &soac.elem, j, ctx)
                })?;
                body(g, k, env, j, ok, x)
            });
            env.insert(src, saved);
            return r;
        }
        let len = Self::get(env, soac.len)?.reg()?.clone();
        self.chunks(
            k,
            env,
            grp,
            &len,
            &ety,
            &mut |g, k, env, j, ctx| g.elem(k, c, env, &soac.elem, j, ctx),
            body,
        )
    }

    /// The chunk loop of a group over positions `0..len` (the same in every thread):
    /// thread `lane` takes position `start + lane` of each chunk; `elem(position)` is
    /// evaluated where the position is below `len` ([`Gen::guarded`]), then
    /// `body(position, valid, element)` runs in every thread.
    #[allow(clippy::too_many_arguments)]
    fn chunks(
        &mut self,
        k: &mut Kernel,
        env: &mut Env,
        grp: &Group,
        len: &Reg,
        ety: &Type,
        elem: &mut GroupElem<'_, 'f>,
        body: &mut GroupBody<'_, 'f>,
    ) -> R<()> {
        let start = k.reg(Scalar::U64);
        k.ins(format!("mov.u64 {start}, 0"));
        let lane64 = k.reg(Scalar::U64);
        k.ins(format!("cvt.u64.u32 {lane64}, {}", grp.lane));
        let (top, end) = (k.label(), k.label());
        k.place(&top);
        let p = k.reg(Scalar::Bool);
        k.ins(format!("setp.ge.u64 {p}, {start}, {len}"));
        k.ins(format!("@{p} bra.uni {end}"));
        let j = k.reg(Scalar::Usize);
        k.ins(format!("add.s64 {j}, {start}, {lane64}"));
        let valid = k.reg(Scalar::Bool);
        k.ins(format!("setp.lt.u64 {valid}, {j}, {len}"));
        let e = self.guarded(k, env, grp, &valid, ety, &mut |g, k, env, ctx| {
            elem(g, k, env, &j, ctx)
        })?;
        body(self, k, env, &j, &valid, e)?;
        k.ins(format!("add.s64 {start}, {start}, {}", grp.width));
        k.ins(format!("bra.uni {top}"));
        k.place(&end);
        Ok(())
    }

    /// Evaluates `f` (an element, a predicate: a value of type `ty` holding scalars) in
    /// the threads where `valid` holds, sequentially in each (no split reduction); the
    /// others get zeros. A failed check marks the thread; when `f` has checks, the group
    /// then agrees (`vote.sync.any` / `bar.red.or`) and leaves the row together, to
    /// [`Group::fail`], so its collective steps stay uniform.
    #[allow(clippy::too_many_arguments)]
    fn guarded(
        &mut self,
        k: &mut Kernel,
        env: &mut Env,
        grp: &Group,
        valid: &Reg,
        ty: &Type,
        f: &mut Guarded<'_, 'f>,
    ) -> R<KVal> {
        let ls = leaves(ty)?;
        let out: Vec<Reg> = ls.iter().map(|&s| self.zero(k, s)).collect();
        let failed = self.pconst(k, false);
        let (flag, join) = (k.label(), k.label());
        let sites = self.sites.len();
        k.ins(format!("@!{valid} bra {join}"));
        let ctx = Ctx {
            key: grp.key.clone(),
            fail: Some(flag.clone()),
        };
        let split = self.split.take();
        let v = f(self, k, env, &ctx);
        self.split = split;
        for (d, s) in out.iter().zip(&v?.flatten()?) {
            Self::mov(k, d, s);
        }
        k.ins(format!("bra {join}"));
        k.place(&flag);
        k.ins(format!("setp.eq.u32 {failed}, 0, 0"));
        k.place(&join);
        if self.sites.len() > sites {
            let any = k.reg(Scalar::Bool);
            if grp.block {
                k.ins(format!("bar.red.or.pred {any}, 0, {failed}"));
            } else {
                k.ins(format!("vote.sync.any.pred {any}, {failed}, 0xffffffff"));
            }
            k.ins(format!("@{any} bra.uni {}", grp.fail));
        }
        unflatten(ty, &mut out.into_iter())
    }

    /// A filter's predicate on element `e` of a group's chunk, where `valid` (false
    /// elsewhere).
    #[allow(clippy::too_many_arguments)]
    fn group_keep(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        grp: &Group,
        pred: &Lambda,
        valid: &Reg,
        e: KVal,
    ) -> R<Reg> {
        env.insert(pred.params[0], e);
        let keep = self.guarded(
            k,
            env,
            grp,
            valid,
            &Type::Scalar(Scalar::Bool),
            &mut |g, k, env, ctx| g.block(k, c, env, &pred.body, ctx),
        )?;
        Ok(keep.reg()?.clone())
    }

    /// Counts the threads of a group where `keep` holds: returns (with `before`) how many
    /// of the threads before this one, and how many in all (`u64`s). A warp: `vote.ballot`
    /// and `popc` (with `%lanemask_lt`); a block: a block scan of the flags
    /// ([`Gen::block_scan`]).
    fn group_count(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        grp: &Group,
        keep: &Reg,
        before: bool,
    ) -> R<(Reg, Reg)> {
        let (b, t) = (k.reg(Scalar::U64), k.reg(Scalar::U64));
        if grp.block {
            let f = k.reg(Scalar::U64);
            k.ins(format!("selp.u64 {f}, 1, 0, {keep}"));
            let has = self.pconst(k, true);
            let x = Opt { has, v: vec![f] };
            let (_, ex, total) =
                self.block_scan(k, c, env, Comb::AddU64, &x, &Self::no_fail(grp))?;
            k.ins(format!("selp.u64 {b}, {}, 0, {}", ex.v[0], ex.has));
            Self::mov(k, &t, &total.v[0]);
        } else {
            let m = k.reg(Scalar::U32);
            k.ins(format!("vote.sync.ballot.b32 {m}, {keep}, 0xffffffff"));
            let n = k.reg(Scalar::U32);
            k.ins(format!("popc.b32 {n}, {m}"));
            k.ins(format!("cvt.u64.u32 {t}, {n}"));
            if before {
                let lt = k.reg(Scalar::U32);
                k.ins(format!("mov.u32 {lt}, %lanemask_lt"));
                k.ins(format!("and.b32 {lt}, {lt}, {m}"));
                let nb = k.reg(Scalar::U32);
                k.ins(format!("popc.b32 {nb}, {lt}"));
                k.ins(format!("cvt.u64.u32 {b}, {nb}"));
            }
        }
        Ok((b, t))
    }

    /// An ordered scan of one optional value per thread over a group: this thread's
    /// inclusive and exclusive prefixes and the group's total (every thread gets it). A
    /// block: [`Gen::block_scan`]; a warp: [`Gen::warp_scan`], the total from lane 31.
    #[allow(clippy::too_many_arguments)]
    fn group_scan(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        grp: &Group,
        comb: Comb<'_>,
        x: &Opt,
        ctx: &Ctx,
    ) -> R<(Opt, Opt, Opt)> {
        if grp.block {
            return self.block_scan(k, c, env, comb, x, ctx);
        }
        let (incl, excl) = self.warp_scan(k, c, env, comb, x, ctx)?;
        let total = Self::shfl_opt(k, &incl, "idx", 31);
        Ok((incl, excl, total))
    }

    /// A `filter` of rows (elements that are sequences): (1) per element, whether it is
    /// kept and its length if so; (2) exclusive scans of the flags (positions of the kept
    /// rows, and their number) and of the lengths (where each kept row's elements go);
    /// (3) each kept row written at its place, its offset at its position.
    ///
    /// With `group` (`Some(true)`: a block per row, `Some(false)`: a warp), (1) and (3)
    /// give each row a group of threads, as [`Gen::nested_map`] does: the element
    /// function and the predicate are evaluated by every thread (their inner reductions
    /// split across the group), the row measured and written by the group. Fails when the
    /// row cannot be written by a group.
    fn nested_filter(
        &mut self,
        s: &Stmt,
        soac: &Soac,
        pred: &Lambda,
        row: &Type,
        group: Option<bool>,
        steps: &mut Vec<Step>,
    ) -> R<()> {
        let ls = match leaves(row) {
            Ok(ls) => ls,
            Err(_) => return unsupported(format!("sequences of `[{row}]` as results")),
        };
        if group == Some(true) {
            self.set_group(self.cur.group, GROUP_BLOCK);
        }
        let per_block = match group {
            None => u64::from(self.bsize()),
            Some(false) => u64::from(self.warps()),
            Some(true) => 1,
        };
        let suffix = match group {
            None => "",
            Some(false) => "_warp",
            Some(true) => "_block",
        };
        let n_count = Count::Var(var(soac.len));
        let flags = self.alloc_leaves(&[Scalar::U64], &n_count, steps)[0];
        let sizes = self.alloc_leaves(&[Scalar::U64], &n_count, steps)[0];
        // Evaluates the element and the predicate (split across a group when given);
        // returns (row, keep). (Predicate failures are keyed after every element's, as
        // the flat filter does.)
        let kept = |g: &mut Self,
                    k: &mut Kernel,
                    c: &Common,
                    env: &mut Env,
                    i: &Reg,
                    n: &Reg,
                    ctx: &Ctx,
                    split: Option<Split>| {
            g.split = split;
            let v = (|| {
                let v = g.elem(k, c, env, &soac.elem, i, ctx)?;
                env.insert(pred.params[0], v.clone());
                let key = k.reg(Scalar::U64);
                k.ins(format!("add.s64 {key}, {n}, {i}"));
                let pctx = Ctx {
                    key,
                    fail: ctx.fail.clone(),
                };
                let keep = g.block(k, c, env, &pred.body, &pctx)?.reg()?.clone();
                Ok::<_, Unsupported>((v, keep))
            })();
            g.split = None;
            v
        };

        let (mut k, c) = self.new_kernel(&format!("row_filter_sizes{suffix}"));
        let mut env = self.bind_captures(&mut k, &[&soac.elem, pred])?;
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let fp = Self::temp_ptrs(&mut k, &[flags])[0].clone();
        let sp = Self::temp_ptrs(&mut k, &[sizes])[0].clone();
        match group {
            None => {
                let (i, stride, top, cont, end) = self.grid_stride_head(&mut k, &c, &n);
                let ctx = Ctx {
                    key: i.clone(),
                    fail: Some(cont.clone()),
                };
                let (v, keep) = kept(self, &mut k, &c, &mut env, &i, &n, &ctx, None)?;
                let len = self.seq_len(&mut k, &c, &mut env, &v, &ctx)?;
                let f = Self::flag(&mut k, Some(&keep));
                let sz = k.reg(Scalar::U64);
                k.ins(format!("selp.u64 {sz}, {len}, 0, {keep}"));
                self.store(&mut k, &fp, &i, &f);
                self.store(&mut k, &sp, &i, &sz);
                Self::loop_tail(&mut k, &i, &stride, &top, &cont, &end);
            }
            Some(block) => {
                let gl = Self::group_loop_head(&mut k, &c, &n, block);
                let ctx = Ctx {
                    key: gl.i.clone(),
                    fail: Some(gl.cont.clone()),
                };
                let split = Split {
                    block,
                    lane: gl.lane.clone(),
                };
                let (v, keep) = kept(self, &mut k, &c, &mut env, &gl.i, &n, &ctx, Some(split))?;
                let grp = self.group(&mut k, &gl);
                let len = self.group_len(&mut k, &c, &mut env, &v, &grp)?;
                let f = Self::flag(&mut k, Some(&keep));
                let sz = k.reg(Scalar::U64);
                k.ins(format!("selp.u64 {sz}, {len}, 0, {keep}"));
                k.ins(format!("@!{} bra {}", gl.leader, gl.cont));
                self.store(&mut k, &fp, &gl.i, &f);
                self.store(&mut k, &sp, &gl.i, &sz);
                Self::group_loop_tail(&mut k, &gl);
            }
        }
        let args = k.args.clone();
        let k1 = self.push_kernel(k);
        steps.push(self.stride_launch(k1, &n_count, per_block, args));
        steps.push(Step::CheckErrors);

        let (pos, rows) = self.offsets(flags, &n_count, steps)?;
        let (eoffs, total) = self.offsets(sizes, &n_count, steps)?;
        let outs = self.alloc_leaves(&ls, &Count::Temp(total), steps);
        let n1 = Count::Add(Box::new(Count::Temp(rows)), Box::new(Count::Const(1)));
        let out_offs = self.alloc_leaves(&[Scalar::U64], &n1, steps)[0];

        let (mut k, c) = self.new_kernel(&format!("row_filter{suffix}"));
        let mut env = self.bind_captures(&mut k, &[&soac.elem, pred])?;
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let pp = Self::temp_ptrs(&mut k, &[pos])[0].clone();
        let ep = Self::temp_ptrs(&mut k, &[eoffs])[0].clone();
        let op = Self::temp_ptrs(&mut k, &[out_offs])[0].clone();
        let ptrs = Self::temp_ptrs(&mut k, &outs);
        // The end of the last row: out_offs[pos[n]] = eoffs[n] (thread 0 of block 0).
        let first = k.reg(Scalar::Bool);
        let gid = k.reg(Scalar::U64);
        k.ins(format!("or.b64 {gid}, {}, {}", c.ctaid64, c.tid64));
        k.ins(format!("setp.eq.u64 {first}, {gid}, 0"));
        let skip = k.label();
        k.ins(format!("@!{first} bra {skip}"));
        let last_pos = self.load_leaves(&mut k, std::slice::from_ref(&pp), &n, &[Scalar::U64]);
        let last_off = self.load_leaves(&mut k, std::slice::from_ref(&ep), &n, &[Scalar::U64]);
        self.store(&mut k, &op, &last_pos[0], &last_off[0]);
        k.place(&skip);
        match group {
            None => {
                let (i, stride, top, cont, end) = self.grid_stride_head(&mut k, &c, &n);
                let ctx = Ctx {
                    key: i.clone(),
                    fail: Some(cont.clone()),
                };
                let (v, keep) = kept(self, &mut k, &c, &mut env, &i, &n, &ctx, None)?;
                k.ins(format!("@!{keep} bra {cont}"));
                let at = self.load_leaves(&mut k, std::slice::from_ref(&pp), &i, &[Scalar::U64]);
                let base = self.load_leaves(&mut k, std::slice::from_ref(&ep), &i, &[Scalar::U64]);
                self.store(&mut k, &op, &at[0], &base[0]);
                self.write_seq(&mut k, &c, &mut env, &v, &ptrs, &base[0], &ctx)?;
                Self::loop_tail(&mut k, &i, &stride, &top, &cont, &end);
            }
            Some(block) => {
                let gl = Self::group_loop_head(&mut k, &c, &n, block);
                let ctx = Ctx {
                    key: gl.i.clone(),
                    fail: Some(gl.cont.clone()),
                };
                let split = Split {
                    block,
                    lane: gl.lane.clone(),
                };
                let (v, keep) = kept(self, &mut k, &c, &mut env, &gl.i, &n, &ctx, Some(split))?;
                // The same in every thread of the group.
                k.ins(format!("@!{keep} bra {}", gl.cont));
                let a = Self::addr(&mut k, &ep, &gl.i, Scalar::U64);
                let (base, stop) = (k.reg(Scalar::U64), k.reg(Scalar::U64));
                k.ins(format!("ld.global.u64 {base}, [{a}]"));
                k.ins(format!("ld.global.u64 {stop}, [{a}+8]"));
                let size = k.reg(Scalar::U64);
                k.ins(format!("sub.s64 {size}, {stop}, {base}"));
                let at = self.load_leaves(&mut k, std::slice::from_ref(&pp), &gl.i, &[Scalar::U64]);
                let not_leader = k.label();
                k.ins(format!("@!{} bra {not_leader}", gl.leader));
                self.store(&mut k, &op, &at[0], &base);
                k.place(&not_leader);
                self.write_rows_grouped(&mut k, &c, &mut env, &v, &ptrs, &base, &size, &gl, &ctx)?;
                Self::group_loop_tail(&mut k, &gl);
            }
        }
        let args = k.args.clone();
        let k2 = self.push_kernel(k);
        steps.push(self.stride_launch(k2, &n_count, per_block, args));
        steps.push(Step::CheckErrors);
        steps.push(Step::BindSeq {
            var: var(s.var),
            elem: Type::seq(row.clone()),
            bufs: outs.into_iter().map(Buf::Temp).collect(),
            len: Count::Temp(rows),
            offs: Some(Buf::Temp(out_offs)),
        });
        Ok(())
    }

    /// Writes row `v` of a group loop's element at `base` of `ptrs` (`size` elements,
    /// from the sizes pass) with the group ([`Gen::write_grouped`]); in report mode every
    /// thread writes it alone, in order ([`Gen::write_seq`]), so the failure recorded
    /// first is the first in sequential order. Ends at the loop's next element.
    #[allow(clippy::too_many_arguments)]
    fn write_rows_grouped(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        v: &KVal,
        ptrs: &[Reg],
        base: &Reg,
        size: &Reg,
        gl: &GroupLoop,
        ctx: &Ctx,
    ) -> R<()> {
        let rep = Self::report_mode(k, c);
        let alone = k.label();
        k.ins(format!("@{rep} bra {alone}"));
        let grp = self.group(k, gl);
        self.write_grouped(k, c, env, v, ptrs, base, size, &grp)?;
        k.ins(format!("bra {}", gl.cont));
        k.place(&alone);
        self.write_seq(k, c, env, v, ptrs, base, ctx)
    }

    /// Writes the elements of a sequence value at `base`, `base + 1`, ... of `ptrs`.
    #[allow(clippy::too_many_arguments)]
    fn write_seq(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        v: &KVal,
        ptrs: &[Reg],
        base: &Reg,
        ctx: &Ctx,
    ) -> R<()> {
        let put = |g: &mut Self, k: &mut Kernel, j: &Reg, e: KVal| -> R<()> {
            let at = k.reg(Scalar::U64);
            k.ins(format!("add.s64 {at}, {base}, {j}"));
            for (r, p) in e.flatten()?.iter().zip(ptrs) {
                g.store(k, p, &at, r);
            }
            Ok(())
        };
        match v {
            KVal::Cond(cs) => self.branch_seq(k, c, env, cs, ctx, &mut |g, k, env, v| {
                g.write_seq(k, c, env, &v, ptrs, base, ctx)
            }),
            KVal::Seq { offs: Some(_), .. } => unsupported("three levels of nesting"),
            KVal::Seq { len, .. } => {
                let j = k.reg(Scalar::Usize);
                k.ins(format!("mov.u64 {j}, 0"));
                let (top, end) = (k.label(), k.label());
                k.place(&top);
                let p = k.reg(Scalar::Bool);
                k.ins(format!("setp.ge.u64 {p}, {j}, {len}"));
                k.ins(format!("@{p} bra {end}"));
                let e = self.index(k, c, env, v, &j, ctx)?;
                put(self, k, &j, e)?;
                k.ins(format!("add.s64 {j}, {j}, 1"));
                k.ins(format!("bra {top}"));
                k.place(&end);
                Ok(())
            }
            KVal::Lazy(l) | KVal::Cur { of: l, .. } => {
                let l = l.clone();
                if matches!(
                    l.soac.kind,
                    SoacKind::Scatter { .. } | SoacKind::ScatterReduce { .. } | SoacKind::Permute
                ) {
                    return self.write_scattered(k, c, env, &l, ptrs, base, ctx);
                }
                self.stream(k, c, env, &l, ctx, &mut |g, k, _env, j, e| put(g, k, j, e))
            }
            _ => unsupported("a sequence was expected (internal)"),
        }
    }

    /// Stores a per-element `scatter`/`scatter_reduce`/`permute` that is read again (not
    /// only the element's result) in a per-thread temporary ([`KArg::Scratch`]: the
    /// executor allocates `per` elements per leaf for every thread of the launch), and
    /// returns it as a sequence in memory. Thread `t` (of the whole grid) uses elements
    /// `t * per ..` of it, written as [`Gen::write_scattered`] writes a ragged result's
    /// row (a `permute` gets per-thread duplicate flags the same way). `per`, a bound on
    /// its length, is known before the launch ([`Gen::host_soac_len`]); when none is, the
    /// sequence stays lazy, which suffices where it is only written out as the element's
    /// result.
    fn materialize(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        l: &Rc<LazySeq>,
        per: Count,
        ctx: &Ctx,
    ) -> R<KVal> {
        let ls = leaves(&l.elem_ty)?;
        let scratch = |k: &mut Kernel, elem: Scalar| {
            k.pointer(KArg::Scratch {
                elem,
                per_thread: per.clone(),
            })
        };
        let ptrs: Vec<Reg> = ls.iter().map(|&e| scratch(k, e)).collect();
        let owner = matches!(l.soac.kind, SoacKind::Permute).then(|| scratch(k, Scalar::Bool));
        let base = Self::scratch_base(k, c, &per);
        let saved = std::mem::replace(&mut self.owner, owner);
        let written = self.write_scattered(k, c, env, l, &ptrs, &base, ctx);
        self.owner = saved;
        written?;
        let len = self.seq_len(k, c, env, &KVal::Lazy(l.clone()), ctx)?;
        let stop = k.reg(Scalar::U64);
        k.ins(format!("add.s64 {stop}, {base}, {len}"));
        self.row_view(
            k,
            &ptrs,
            &Type::Seq(Box::new(l.elem_ty.clone())),
            &base,
            &stop,
            None,
        )
    }

    /// Where this thread's part of a per-thread temporary ([`KArg::Scratch`]) of `per`
    /// elements per thread starts: the thread's index in the launch times `per`.
    fn scratch_base(k: &mut Kernel, c: &Common, per: &Count) -> Reg {
        let per_reg = k.param(Scalar::U64, KArg::Count(per.clone()));
        let (thread, base) = (k.reg(Scalar::U64), k.reg(Scalar::U64));
        k.ins(format!(
            "mad.lo.u64 {thread}, {}, {}, {}",
            c.ctaid64, k.block, c.tid64
        ));
        k.ins(format!("mul.lo.u64 {base}, {thread}, {per_reg}"));
        base
    }

    /// A bound on the length of the sequence combinator `soac` produces as a host
    /// [`Count`]: a `scatter`/`scatter_reduce` is as long as its destination, a
    /// `map`/`scan`/`permute` (a `gather` is a `map` over its indices) as its index space,
    /// and a `filter` at most as long.
    fn host_soac_len(&self, soac: &Soac) -> Option<Count> {
        match &soac.kind {
            SoacKind::Scatter { dst } | SoacKind::ScatterReduce { dst, .. } => {
                self.host_seq_len(*dst)
            }
            SoacKind::Reduce { .. } => None,
            SoacKind::Map
            | SoacKind::Scan { .. }
            | SoacKind::ExclusiveScan { .. }
            | SoacKind::Filter { .. }
            | SoacKind::Permute
            | SoacKind::Sort
            | SoacKind::SortByKey => self.host_scalar(soac.len),
        }
    }

    /// A bound on the length of sequence `v` as a host [`Count`]: a top-level sequence's
    /// length, the longest row of a top-level nested sequence `v` is a row of, or the
    /// bound [`Gen::host_soac_len`] gives for the combinator defining `v` (from its
    /// input's bound, recursively: e.g. a `filter` of a row is bounded by the longest row),
    /// or the larger of the bounds of the sequences an `if` chooses from.
    fn host_seq_len(&self, v: VarId) -> Option<Count> {
        if self.host_vars.contains(&v) && !self.deferred.contains_key(&v) {
            return Some(Count::Len {
                var: var(v),
                path: Vec::new(),
            });
        }
        match self.defs.get(&v)? {
            Expr::Index { seq: x, .. }
                if self.host_vars.contains(x)
                    && !self.deferred.contains_key(x)
                    && matches!(self.ty(*x).elem(), Some(Type::Seq(_))) =>
            {
                Some(Count::Longest {
                    var: var(*x),
                    path: Vec::new(),
                })
            }
            Expr::Var(x) => self.host_seq_len(*x),
            Expr::Soac(soac) => self.host_soac_len(soac),
            Expr::If(_, a, b) => self.host_either(a, b, Self::host_seq_len),
            _ => None,
        }
    }

    /// A bound on a `usize` variable as a host [`Count`]: a top-level variable, a
    /// constant, a copy of one, the length of a sequence [`Gen::host_seq_len`] bounds, or
    /// the larger of the bounds of the values an `if` chooses from.
    fn host_scalar(&self, v: VarId) -> Option<Count> {
        if self.host_vars.contains(&v) {
            return Some(Count::Var(var(v)));
        }
        match self.defs.get(&v)? {
            Expr::Const(Const::Int(n)) => u64::try_from(*n).ok().map(Count::Const),
            Expr::Var(x) => self.host_scalar(*x),
            Expr::Len(x) => self.host_seq_len(*x),
            Expr::If(_, a, b) => self.host_either(a, b, Self::host_scalar),
            _ => None,
        }
    }

    /// The larger of the bounds `bound` gives for the results of the two branches of an
    /// `if`, when both have one.
    fn host_either(
        &self,
        a: &Block,
        b: &Block,
        bound: fn(&Self, VarId) -> Option<Count>,
    ) -> Option<Count> {
        let (x, y) = (bound(self, a.result)?, bound(self, b.result)?);
        Some(if x == y {
            x
        } else {
            Count::Max(Box::new(x), Box::new(y))
        })
    }

    /// Writes a per-element `scatter` / `scatter_reduce` (a copy of `dst`, then each
    /// `(index, value)` written or combined in order) or `permute` (each value at its
    /// index; a second write to a position is the "appears twice" error, found with the
    /// owner flags [`Gen::owner`] of the output) at `base` of `ptrs`, sequentially.
    #[allow(clippy::too_many_arguments)]
    fn write_scattered(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        l: &Rc<LazySeq>,
        ptrs: &[Reg],
        base: &Reg,
        ctx: &Ctx,
    ) -> R<()> {
        let origin = origin_of(&l.soac.kind);
        let (bound, op) = match &l.soac.kind {
            SoacKind::Scatter { dst } | SoacKind::ScatterReduce { dst, .. } => {
                let dv = Self::get(env, *dst)?;
                let n = self.seq_len(k, c, env, &dv, ctx)?;
                self.write_seq(k, c, env, &dv, ptrs, base, ctx)?;
                let op = match &l.soac.kind {
                    SoacKind::ScatterReduce { op, .. } => Some(op),
                    _ => None,
                };
                (n, op)
            }
            _ => {
                let lv = KVal::Lazy(l.clone());
                (self.seq_len(k, c, env, &lv, ctx)?, None)
            }
        };
        let Some(owner) = self.owner.clone() else {
            if matches!(l.soac.kind, SoacKind::Permute) {
                return unsupported("a nested `permute` outside a nested map (internal)");
            }
            return self.scatter_loop(k, c, env, l, ptrs, base, ctx, &bound, op, origin, None);
        };
        let owner = matches!(l.soac.kind, SoacKind::Permute).then_some(owner);
        if let Some(o) = &owner {
            // Clear this element's flags first, so a re-run (report mode) sees the same.
            let j = k.reg(Scalar::U64);
            k.ins(format!("mov.u64 {j}, 0"));
            let (top, end) = (k.label(), k.label());
            k.place(&top);
            let p = k.reg(Scalar::Bool);
            k.ins(format!("setp.ge.u64 {p}, {j}, {bound}"));
            k.ins(format!("@{p} bra {end}"));
            let at = k.reg(Scalar::U64);
            k.ins(format!("add.s64 {at}, {base}, {j}"));
            let a = Self::addr(k, o, &at, Scalar::Bool);
            k.ins(format!("st.global.u8 [{a}], 0"));
            k.ins(format!("add.s64 {j}, {j}, 1"));
            k.ins(format!("bra {top}"));
            k.place(&end);
        }
        self.scatter_loop(
            k,
            c,
            env,
            l,
            ptrs,
            base,
            ctx,
            &bound,
            op,
            origin,
            owner.as_ref(),
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn scatter_loop(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        l: &Rc<LazySeq>,
        ptrs: &[Reg],
        base: &Reg,
        ctx: &Ctx,
        bound: &Reg,
        op: Option<&Lambda>,
        origin: Origin,
        owner: Option<&Reg>,
    ) -> R<()> {
        let ety = l.elem_ty.clone();
        let ls = leaves(&ety)?;
        let span = l.span;
        self.for_each(k, c, env, &l.soac, ctx, &mut |g, k, env, _j, e| {
            let (idx, signed, vals) = g.pair(k, e)?;
            let bad = k.reg(Scalar::Bool);
            k.ins(format!("setp.ge.u64 {bad}, {idx}, {bound}"));
            g.check(
                k,
                c,
                ctx,
                &bad,
                SiteKind::IndexOutOfRange,
                origin,
                span,
                signed,
                &idx,
                bound,
            );
            let at = k.reg(Scalar::U64);
            k.ins(format!("add.s64 {at}, {base}, {idx}"));
            if let Some(o) = owner {
                let a = Self::addr(k, o, &at, Scalar::Bool);
                let seen = Self::ld(k, "global", &a.name, Scalar::Bool);
                g.check(
                    k,
                    c,
                    ctx,
                    &seen,
                    SiteKind::Duplicate,
                    origin,
                    span,
                    false,
                    &idx,
                    bound,
                );
                let t = g.pconst(k, true);
                Self::st(k, "global", &a.name, &t);
            }
            let vals = match op {
                None => vals,
                Some(op) => {
                    let old = g.load_leaves(k, ptrs, &at, &ls);
                    env.insert(op.params[0], unflatten(&ety, &mut old.into_iter())?);
                    env.insert(op.params[1], unflatten(&ety, &mut vals.into_iter())?);
                    g.block(k, c, env, &op.body, ctx)?.flatten()?
                }
            };
            for (r, p) in vals.iter().zip(ptrs) {
                g.store(k, p, &at, r);
            }
            Ok(())
        })
    }

    /// [`Gen::exclusive_offsets`], then the total (`offs[n]`) read back into a numeric
    /// temporary; returns both temporaries.
    fn offsets(&mut self, sizes: u32, n_count: &Count, steps: &mut Vec<Step>) -> R<(u32, u32)> {
        let offs = self.exclusive_offsets(sizes, n_count, steps)?;
        let total = self.temp();
        steps.push(Step::ReadCount {
            temp: total,
            src: Buf::Temp(offs),
            index: n_count.clone(),
            guard: Count::Const(1),
        });
        Ok((offs, total))
    }

    /// The exclusive scan of `n` `u64` sizes into `n + 1` offsets (`offs[0]` is 0, `offs[n]`
    /// the total), with the look-back scan ([`Gen::offsets_lookback`]) unless
    /// reduce-then-scan is asked for: then over tiles, as [`Gen::scan`]; returns the
    /// offsets' temporary.
    fn exclusive_offsets(&mut self, sizes: u32, n_count: &Count, steps: &mut Vec<Step>) -> R<u32> {
        if self.scan_alg == crate::Scan::LookBack {
            return self.offsets_lookback(sizes, n_count, steps);
        }
        let grid = cmax1(cdiv(n_count.clone(), self.tile()));
        let tiles = self.alloc_leaves(&[Scalar::U64], &grid, steps);
        let n1 = Count::Add(Box::new(n_count.clone()), Box::new(Count::Const(1)));
        let offs = self.alloc_leaves(&[Scalar::U64], &n1, steps)[0];
        for pass in 0..2 {
            let (mut k, c) = self.new_kernel(if pass == 0 {
                "offsets_tiles"
            } else {
                "offsets"
            });
            let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
            let sp = Self::temp_ptrs(&mut k, &[sizes])[0].clone();
            let tp = Self::temp_ptrs(&mut k, &tiles)[0].clone();
            let opp = Self::temp_ptrs(&mut k, &[offs])[0].clone();
            let op_ctx = Ctx {
                key: n.clone(),
                fail: None,
            };
            let mut env = Env::new();
            let carry = k.reg(Scalar::U64);
            k.ins(format!("mov.u64 {carry}, 0"));
            if pass == 1 {
                let has_prev = k.reg(Scalar::Bool);
                k.ins(format!("setp.ne.u64 {has_prev}, {}, 0", c.ctaid64));
                let prev_i = k.reg(Scalar::U64);
                k.ins(format!("sub.s64 {prev_i}, {}, 1", c.ctaid64));
                let skip = k.label();
                k.ins(format!("@!{has_prev} bra {skip}"));
                let prev =
                    self.load_leaves(&mut k, std::slice::from_ref(&tp), &prev_i, &[Scalar::U64]);
                k.ins(format!("mov.u64 {carry}, {}", prev[0]));
                k.place(&skip);
            }
            let (r, top, end) = Self::rounds_head(&mut k, ROUNDS);
            let idx = k.reg(Scalar::U64);
            k.ins(format!("mul.lo.u64 {idx}, {}, {}", c.ctaid64, self.tile()));
            let off = k.reg(Scalar::U64);
            k.ins(format!("mul.wide.u32 {off}, {r}, {}", self.bsize()));
            k.ins(format!("add.s64 {idx}, {idx}, {off}"));
            k.ins(format!("add.s64 {idx}, {idx}, {}", c.tid64));
            let valid = k.reg(Scalar::Bool);
            k.ins(format!("setp.lt.u64 {valid}, {idx}, {n}"));
            let x = k.reg(Scalar::U64);
            k.ins(format!("mov.u64 {x}, 0"));
            let skip = k.label();
            k.ins(format!("@!{valid} bra {skip}"));
            let v = self.load_leaves(&mut k, std::slice::from_ref(&sp), &idx, &[Scalar::U64]);
            k.ins(format!("mov.u64 {x}, {}", v[0]));
            k.place(&skip);
            let t = self.pconst(&mut k, true);
            let xo = Opt { has: t, v: vec![x] };
            let (incl, _, total) =
                self.block_scan(&mut k, &c, &mut env, Comb::AddU64, &xo, &op_ctx)?;
            if pass == 1 {
                let skipw = k.label();
                k.ins(format!("@!{valid} bra {skipw}"));
                let val = k.reg(Scalar::U64);
                k.ins(format!("add.s64 {val}, {carry}, {}", incl.v[0]));
                let at = k.reg(Scalar::U64);
                k.ins(format!("add.s64 {at}, {idx}, 1"));
                self.store(&mut k, &opp, &at, &val);
                k.place(&skipw);
            }
            k.ins(format!("add.s64 {carry}, {carry}, {}", total.v[0]));
            Self::rounds_tail(&mut k, &r, &top, &end);
            if pass == 0 {
                let t = self.pconst(&mut k, true);
                let cc = Opt {
                    has: t,
                    v: vec![carry],
                };
                self.store_if_thread0(
                    &mut k,
                    &c,
                    std::slice::from_ref(&tp),
                    &Reg {
                        name: String::new(),
                        ty: Scalar::Bool,
                    },
                    &c.ctaid64.clone(),
                    &cc,
                );
            }
            let args = k.args.clone();
            let kid = self.push_kernel(k);
            steps.push(self.launch(kid, grid.clone(), args));
            if pass == 0 {
                self.scan_totals(
                    &[Scalar::U64],
                    Comb::AddU64,
                    None,
                    &tiles,
                    &grid,
                    n_count,
                    steps,
                )?;
            }
        }
        Ok(offs)
    }

    /// For `inner = "auto"`: the nested sequence (a top-level variable) whose rows a
    /// `map`'s element function reads (`x[i]` of a captured `[[T]]`, directly or through
    /// the element of a map not stored), if any.
    fn shape_source(&self, soac: &Soac) -> Option<u32> {
        soac.elem.body.stmts.iter().find_map(|st| match &st.expr {
            Expr::Index { seq, .. }
                if soac.elem.captures.contains(seq)
                    && matches!(self.ty(*seq).elem(), Some(Type::Seq(_))) =>
            {
                Some(var(*seq))
            }
            // An element of a map not stored: the rows its element function reads.
            Expr::Index { seq, .. } => self.shape_source(self.deferred.get(seq)?),
            _ => None,
        })
    }

    /// A `map` with a warp per element (vector CSR, when the element reads rows): each
    /// warp takes 32 consecutive elements at a time. It first loads the row offsets those
    /// 32 elements read (one coalesced load per nested sequence, lane `r` for element
    /// `r`), then evaluates the elements one after the other, every lane evaluating the
    /// element function and the inner reductions split across the lanes (see
    /// [`Gen::split_reduce`]); lane `r` keeps element `r`'s result, and the 32 results are
    /// stored with one coalesced store.
    fn map_warp(&mut self, s: &Stmt, soac: &Soac, steps: &mut Vec<Step>) -> R<()> {
        let Some(elem_ty) = self.ty(s.var).elem() else {
            return unsupported("map without a sequence type");
        };
        let ls = leaves(elem_ty)?;
        let n_count = Count::Var(var(soac.len));
        let outs = self.alloc_leaves(&ls, &n_count, steps);
        let (mut k, c) = self.new_kernel("map_warp");
        let mut env = self.bind_captures(&mut k, &[&soac.elem])?;
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let ptrs = Self::temp_ptrs(&mut k, &outs);
        // Rows read as `x[i]` (i the element's index) of captured nested sequences.
        let p0 = soac.elem.params[0];
        let rows: Vec<VarId> = soac
            .elem
            .body
            .stmts
            .iter()
            .filter_map(|st| match &st.expr {
                // Only reads in range by construction (a checked one may be past the end
                // of `seq`'s offsets, which the prefetch must not read).
                Expr::Index {
                    seq,
                    index,
                    checked: None,
                } if *index == p0
                    && soac.elem.captures.contains(seq)
                    && matches!(self.ty(*seq).elem(), Some(Type::Seq(_))) =>
                {
                    Some(*seq)
                }
                _ => None,
            })
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        let ntid = k.reg(Scalar::U32);
        k.ins(format!("mov.u32 {ntid}, %ntid.x"));
        let ncta = k.reg(Scalar::U32);
        k.ins(format!("mov.u32 {ncta}, %nctaid.x"));
        let cta = k.reg(Scalar::U32);
        k.ins(format!("cvt.u32.u64 {cta}, {}", c.ctaid64));
        // base = warp * 32 = (ctaid * ntid + tid) & ~31; stride = ntid * nctaid.
        let base = k.reg(Scalar::U64);
        k.ins(format!("mul.wide.u32 {base}, {ntid}, {cta}"));
        k.ins(format!("add.s64 {base}, {base}, {}", c.tid64));
        k.ins(format!("and.b64 {base}, {base}, -32"));
        let stride = k.reg(Scalar::U64);
        k.ins(format!("mul.wide.u32 {stride}, {ntid}, {ncta}"));
        let lane64 = k.reg(Scalar::U64);
        k.ins(format!("cvt.u64.u32 {lane64}, {}", c.lane));
        let (top, end) = (k.label(), k.label());
        k.place(&top);
        let p = k.reg(Scalar::Bool);
        k.ins(format!("setp.ge.u64 {p}, {base}, {n}"));
        k.ins(format!("@{p} bra {end}"));
        let mine = k.reg(Scalar::U64);
        k.ins(format!("add.s64 {mine}, {base}, {lane64}"));
        let live = k.reg(Scalar::Bool);
        k.ins(format!("setp.lt.u64 {live}, {mine}, {n}"));
        // The lanes whose next row's start is not in the warp: lane 31 and the last row.
        let last = k.reg(Scalar::Bool);
        k.ins(format!("setp.eq.u32 {last}, {}, 31", c.lane));
        let next = k.reg(Scalar::U64);
        k.ins(format!("add.s64 {next}, {mine}, 1"));
        let edge = k.reg(Scalar::Bool);
        k.ins(format!("setp.eq.u64 {edge}, {next}, {n}"));
        k.ins(format!("or.pred {last}, {last}, {edge}"));
        // Prefetch: lane r loads offs[base + r]; the end of row r is the start of row
        // r + 1 (a shuffle), or loaded by the lanes of `last`.
        let mut pre = Vec::new();
        for &x in &rows {
            let Some(KVal::Seq {
                offs: Some(o),
                layout,
                ..
            }) = env.get(&x).cloned()
            else {
                continue;
            };
            let start = k.reg(Scalar::U64);
            k.ins(format!("mov.u64 {start}, 0"));
            let a = Self::addr(&mut k, &o, &mine, Scalar::U64);
            let load = k.reg(Scalar::Bool);
            match &layout {
                Some(l) => {
                    let (_, offsets) = l.strided(&mut k);
                    k.ins(format!("and.pred {load}, {live}, {offsets}"));
                }
                None => k.ins(format!("mov.pred {load}, {live}")),
            }
            k.ins(format!("@{load} ld.global.u64 {start}, [{a}]"));
            let stop = Self::shfl(&mut k, &start, "down", 1, 31);
            let l31 = k.reg(Scalar::Bool);
            k.ins(format!("and.pred {l31}, {last}, {load}"));
            k.ins(format!("@{l31} ld.global.u64 {stop}, [{a}+8]"));
            if let Some(l) = &layout {
                Self::strided_bounds(&mut k, l, &mine, &start, &stop);
            }
            pre.push((x, start, stop));
        }
        let res: Vec<Reg> = ls.iter().map(|&l| self.zero(&mut k, l)).collect();
        let ok = self.pconst(&mut k, false);
        let r = k.reg(Scalar::U32);
        k.ins(format!("mov.u32 {r}, 0"));
        let (rtop, rnext, rend) = (k.label(), k.label(), k.label());
        k.place(&rtop);
        let i = k.reg(Scalar::Usize);
        k.ins(format!("cvt.u64.u32 {i}, {r}"));
        k.ins(format!("add.s64 {i}, {i}, {base}"));
        let done = k.reg(Scalar::Bool);
        k.ins(format!("setp.ge.u64 {done}, {i}, {n}"));
        let r32 = k.reg(Scalar::Bool);
        k.ins(format!("setp.ge.u32 {r32}, {r}, 32"));
        k.ins(format!("or.pred {done}, {done}, {r32}"));
        k.ins(format!("@{done} bra {rend}"));
        let mut bound = HashMap::new();
        for (x, start, stop) in &pre {
            let a = Self::shfl(&mut k, start, "idx", &r, 31);
            let b = Self::shfl(&mut k, stop, "idx", &r, 31);
            bound.insert(*x, (a, b));
        }
        let ctx = Ctx {
            key: i.clone(),
            fail: Some(rnext.clone()),
        };
        self.split = Some(Split {
            block: false,
            lane: c.lane.clone(),
        });
        self.prefetched = Some((i.clone(), bound));
        let v = self.elem(&mut k, &c, &mut env, &soac.elem, &i, &ctx);
        self.split = None;
        self.prefetched = None;
        let v = v?.flatten()?;
        let me = k.reg(Scalar::Bool);
        k.ins(format!("setp.eq.u32 {me}, {}, {r}", c.lane));
        for (d, x) in res.iter().zip(&v) {
            Self::select(&mut k, d, &me, x, d);
        }
        k.ins(format!("or.pred {ok}, {ok}, {me}"));
        k.place(&rnext);
        k.ins(format!("add.s32 {r}, {r}, 1"));
        k.ins(format!("bra {rtop}"));
        k.place(&rend);
        let skip = k.label();
        k.ins(format!("@!{ok} bra {skip}"));
        for (x, p) in res.iter().zip(&ptrs) {
            self.store(&mut k, p, &mine, x);
        }
        k.place(&skip);
        k.ins(format!("add.s64 {base}, {base}, {stride}"));
        k.ins(format!("bra {top}"));
        k.place(&end);
        let args = k.args.clone();
        let kid = self.push_kernel(k);
        let per_block = u64::from(self.bsize());
        steps.push(self.stride_launch(kid, &n_count, per_block, args));
        steps.push(Step::CheckErrors);
        steps.push(Self::bind_flat(s.var, elem_ty, outs, n_count));
        Ok(())
    }

    /// The head of a kernel's loop with a group of threads per element (a block with
    /// `block`, else a warp): element `i` of `n`, stepping by the number of groups of the
    /// grid; emits up to the test of `i` (the loop ends at [`GroupLoop::end`]). The caller
    /// emits the body, then [`Gen::group_loop_tail`].
    fn group_loop_head(k: &mut Kernel, c: &Common, n: &Reg, block: bool) -> GroupLoop {
        let ntid = k.reg(Scalar::U32);
        k.ins(format!("mov.u32 {ntid}, %ntid.x"));
        let ncta = k.reg(Scalar::U32);
        k.ins(format!("mov.u32 {ncta}, %nctaid.x"));
        let i = k.reg(Scalar::Usize);
        let stride = k.reg(Scalar::U64);
        let lane = if block {
            k.ins(format!("mov.u64 {i}, {}", c.ctaid64));
            k.ins(format!("cvt.u64.u32 {stride}, {ncta}"));
            c.tid.clone()
        } else {
            let cta = k.reg(Scalar::U32);
            k.ins(format!("cvt.u32.u64 {cta}, {}", c.ctaid64));
            k.ins(format!("mul.wide.u32 {i}, {ntid}, {cta}"));
            k.ins(format!("add.s64 {i}, {i}, {}", c.tid64));
            k.ins(format!("shr.u64 {i}, {i}, 5"));
            k.ins(format!("mul.wide.u32 {stride}, {ntid}, {ncta}"));
            k.ins(format!("shr.u64 {stride}, {stride}, 5"));
            c.lane.clone()
        };
        let leader = k.reg(Scalar::Bool);
        k.ins(format!("setp.eq.u32 {leader}, {lane}, 0"));
        let (top, cont, end) = (k.label(), k.label(), k.label());
        k.place(&top);
        let p = k.reg(Scalar::Bool);
        k.ins(format!("setp.ge.u64 {p}, {i}, {n}"));
        k.ins(format!("@{p} bra {end}"));
        GroupLoop {
            block,
            i,
            stride,
            lane,
            leader,
            top,
            cont,
            end,
        }
    }

    /// The end of the loop [`Gen::group_loop_head`] began (the `cont` label, the step).
    fn group_loop_tail(k: &mut Kernel, gl: &GroupLoop) {
        k.place(&gl.cont);
        k.ins(format!("add.s64 {}, {}, {}", gl.i, gl.i, gl.stride));
        k.ins(format!("bra {}", gl.top));
        k.place(&gl.end);
    }

    /// Evaluates the element function at the group loop's element with every thread of
    /// the group, its inner reductions split across them (see [`Gen::split_reduce`]).
    fn split_elem(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        l: &Lambda,
        gl: &GroupLoop,
        ctx: &Ctx,
    ) -> R<KVal> {
        self.split = Some(Split {
            block: gl.block,
            lane: gl.lane.clone(),
        });
        let v = self.elem(k, c, env, l, &gl.i, ctx);
        self.split = None;
        v
    }

    /// A `map` with a group of threads per element (a warp, or a block with
    /// `block`): every thread of the group evaluates the element function (so control
    /// flow stays uniform in the group), except the inner reductions, whose elements are
    /// split across the group's threads and combined with shuffles / shared memory (see
    /// [`Gen::inner_soac`]); the group's first thread stores the result.
    fn map_grouped(&mut self, s: &Stmt, soac: &Soac, block: bool, steps: &mut Vec<Step>) -> R<()> {
        let Some(elem_ty) = self.ty(s.var).elem() else {
            return unsupported("map without a sequence type");
        };
        let ls = leaves(elem_ty)?;
        if block {
            self.set_group(self.cur.group, GROUP_BLOCK);
        }
        let n_count = Count::Var(var(soac.len));
        let outs = self.alloc_leaves(&ls, &n_count, steps);
        let (mut k, c) = self.new_kernel(if block { "map_block" } else { "map_warp" });
        let mut env = self.bind_captures(&mut k, &[&soac.elem])?;
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let ptrs = Self::temp_ptrs(&mut k, &outs);
        let gl = Self::group_loop_head(&mut k, &c, &n, block);
        let ctx = Ctx {
            key: gl.i.clone(),
            fail: Some(gl.cont.clone()),
        };
        let v = self.split_elem(&mut k, &c, &mut env, &soac.elem, &gl, &ctx)?;
        k.ins(format!("@!{} bra {}", gl.leader, gl.cont));
        for (r, p) in v.flatten()?.iter().zip(&ptrs) {
            self.store(&mut k, p, &gl.i, r);
        }
        Self::group_loop_tail(&mut k, &gl);
        let args = k.args.clone();
        let kid = self.push_kernel(k);
        let per_block = if block { 1 } else { u64::from(self.warps()) };
        steps.push(self.stride_launch(kid, &n_count, per_block, args));
        steps.push(Step::CheckErrors);
        steps.push(Self::bind_flat(s.var, elem_ty, outs, n_count));
        Ok(())
    }

    fn reduce(
        &mut self,
        s: &Stmt,
        soac: &Soac,
        op: &Lambda,
        init: Option<VarId>,
        steps: &mut Vec<Step>,
    ) -> R<()> {
        let ty = self.ty(s.var);
        let ls = leaves(ty)?;
        let comb = Comb::Op(op, ty);
        let n_count = Count::Var(var(soac.len));
        // The partials are as many as the first pass's blocks: enough for
        // `REDUCE_PER_THREAD` elements per thread or half the resident blocks, whichever
        // is more, but no more than `REDUCE_MIN_PER_THREAD` elements per thread need and
        // the resident blocks hold.
        let k1_id = self.next_kernel();
        let resident = Count::Resident {
            kernel: k1_id,
            block: self.bsize(),
        };
        let per_block = u64::from(self.bsize());
        let wanted = Count::Max(
            Box::new(cdiv(n_count.clone(), per_block * REDUCE_PER_THREAD)),
            Box::new(cdiv(resident.clone(), 2)),
        );
        let grid = cmax1(cmin(
            cdiv(n_count.clone(), per_block * REDUCE_MIN_PER_THREAD),
            cmin(wanted, resident),
        ));
        let partials = self.alloc_leaves(&ls, &grid, steps);
        let phas = self.alloc_leaves(&[Scalar::Bool], &grid, steps)[0];

        // Pass 1: per-thread accumulation over a grid-stride loop, then the block. The
        // thread's first element is peeled off, so the loop body combines plain values:
        // only the thread (which may have no element) and the block tree carry a flag.
        let (mut k, c) = self.new_kernel("reduce");
        let mut env = self.bind_captures(&mut k, &[&soac.elem, op])?;
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let pp = Self::temp_ptrs(&mut k, &partials);
        let ph = Self::temp_ptrs(&mut k, &[phas])[0].clone();
        let acc = self.none(&mut k, &ls);
        let (i, stride, _, _, end) = self.grid_stride_head(&mut k, &c, &n);
        // The first element (a failed check leaves the zeroed value: the error is
        // reported, the partial never read).
        let first_done = k.label();
        let ctx = Ctx {
            key: i.clone(),
            fail: Some(first_done.clone()),
        };
        let e = self
            .elem(&mut k, &c, &mut env, &soac.elem, &i, &ctx)?
            .flatten()?;
        for (d, s) in acc.v.iter().zip(&e) {
            Self::mov(&mut k, d, s);
        }
        k.place(&first_done);
        k.ins(format!("setp.eq.u32 {}, 1, 1", acc.has));
        // The rest: `acc = acc op e`.
        let rest = k.label();
        k.place(&rest);
        k.ins(format!("add.s64 {i}, {i}, {stride}"));
        let p = k.reg(Scalar::Bool);
        k.ins(format!("setp.ge.u64 {p}, {i}, {n}"));
        k.ins(format!("@{p} bra {end}"));
        let ctx = Ctx {
            key: i.clone(),
            fail: Some(rest.clone()),
        };
        let e = self
            .elem(&mut k, &c, &mut env, &soac.elem, &i, &ctx)?
            .flatten()?;
        let op_ctx = Ctx {
            key: n.clone(),
            fail: None,
        };
        let next = self.combine(&mut k, &c, &mut env, comb, &acc.v, &e, &op_ctx)?;
        for (d, s) in acc.v.iter().zip(&next) {
            Self::mov(&mut k, d, s);
        }
        k.ins(format!("bra.uni {rest}"));
        k.place(&end);
        let total = self.block_reduce(&mut k, &c, &mut env, comb, &acc, &op_ctx)?;
        self.store_if_thread0(&mut k, &c, &pp, &ph, &c.ctaid64.clone(), &total);
        let args = k.args.clone();
        let k1 = self.push_kernel(k);
        if k1 != k1_id {
            return unsupported("a kernel was generated out of order (internal)");
        }
        steps.push(Step::Launch(Launch {
            kernel: k1,
            grid: grid.clone(),
            block: self.bsize(),
            args,
            any_grid: true,
        }));
        steps.push(Step::CheckErrors);

        // Pass 2: one block combines the partials (and the start value).
        let outs = self.alloc_leaves(&ls, &Count::Const(1), steps);
        let ohas = self.alloc_leaves(&[Scalar::Bool], &Count::Const(1), steps)[0];
        let (mut k, c) = self.new_kernel("reduce_finish");
        let mut env = self.bind_captures(&mut k, &[op])?;
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let g = k.param(Scalar::U64, KArg::Count(grid.clone()));
        let pp = Self::temp_ptrs(&mut k, &partials);
        let ph = Self::temp_ptrs(&mut k, &[phas])[0].clone();
        let init_v = self.bind_init(&mut k, init)?;
        let op_ctx = Ctx {
            key: n.clone(),
            fail: None,
        };
        let op_ptrs = Self::temp_ptrs(&mut k, &outs);
        let oh = Self::temp_ptrs(&mut k, &[ohas])[0].clone();
        let acc = self.none(&mut k, &ls);
        let j = k.reg(Scalar::U64);
        k.ins(format!("mov.u64 {j}, {}", c.tid64));
        let (top, end) = (k.label(), k.label());
        k.place(&top);
        let p = k.reg(Scalar::Bool);
        k.ins(format!("setp.ge.u64 {p}, {j}, {g}"));
        k.ins(format!("@{p} bra {end}"));
        let x = self.load_opt(&mut k, &pp, &ph, &j, &ls);
        let next = self.opt_combine(&mut k, &c, &mut env, comb, &acc, &x, &op_ctx)?;
        Self::mov_opt(&mut k, &acc, &next);
        k.ins(format!("add.s64 {j}, {j}, {}", self.bsize()));
        k.ins(format!("bra.uni {top}"));
        k.place(&end);
        let mut total = self.block_reduce(&mut k, &c, &mut env, comb, &acc, &op_ctx)?;
        if let Some(iv) = init_v {
            let t = self.pconst(&mut k, true);
            let first = Opt { has: t, v: iv };
            total = self.opt_combine(&mut k, &c, &mut env, comb, &first, &total, &op_ctx)?;
        }
        let zero = k.reg(Scalar::U64);
        k.ins(format!("mov.u64 {zero}, 0"));
        self.store_if_thread0(&mut k, &c, &op_ptrs, &oh, &zero, &total);
        let args = k.args.clone();
        let k2 = self.push_kernel(k);
        steps.push(self.launch(k2, Count::Const(1), args));
        steps.push(Step::CheckErrors);
        steps.push(Step::ReadScalars {
            var: var(s.var),
            ty: ty.clone(),
            bufs: outs.into_iter().map(Buf::Temp).collect(),
            has: if init.is_none() {
                Some(Buf::Temp(ohas))
            } else {
                None
            },
            origin: origin_of(&soac.kind),
            span: s.span.0,
        });
        Ok(())
    }

    fn scan(
        &mut self,
        s: &Stmt,
        soac: &Soac,
        op: &Lambda,
        init: Option<VarId>,
        steps: &mut Vec<Step>,
    ) -> R<()> {
        let Some(elem_ty) = self.ty(s.var).elem() else {
            return unsupported("scan without a sequence type");
        };
        let ls = leaves(elem_ty)?;
        let comb = Comb::Op(op, elem_ty);
        let n_count = Count::Var(var(soac.len));
        let tile_len = u64::from(self.bsize()) * self.scan_items(&ls);
        let grid = cmax1(cdiv(n_count.clone(), tile_len));
        let totals = self.alloc_leaves(&ls, &grid, steps);

        // Pass 1: the total of each tile.
        let (mut k, c) = self.new_kernel("scan_tiles");
        let mut env = self.bind_captures(&mut k, &[&soac.elem, op])?;
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let tp = Self::temp_ptrs(&mut k, &totals);
        let op_ctx = Ctx {
            key: n.clone(),
            fail: None,
        };
        let t = self.tile_begin(&mut k, &c, &ls, &c.ctaid64, &n);
        let mut elem = Self::scan_elem(&c, soac, &n);
        self.tile_load(&mut k, &c, &mut env, &t, &mut elem)?;
        let mine = self.tile_reduce(&mut k, &c, &mut env, comb, &t, &op_ctx)?;
        let total = self.block_reduce(&mut k, &c, &mut env, comb, &mine, &op_ctx)?;
        let no_has = Reg {
            name: String::new(),
            ty: Scalar::Bool,
        };
        self.store_if_thread0(&mut k, &c, &tp, &no_has, &c.ctaid64.clone(), &total);
        let args = k.args.clone();
        let k1 = self.push_kernel(k);
        steps.push(self.launch(k1, grid.clone(), args));
        steps.push(Step::CheckErrors);

        // Pass 2: scan of the tile totals.
        self.scan_totals(&ls, comb, Some(op), &totals, &grid, &n_count, steps)?;

        // Pass 3: each tile again, with the carry of the tiles before it.
        let outs = self.alloc_leaves(&ls, &n_count, steps);
        let (mut k, c) = self.new_kernel("scan");
        let mut env = self.bind_captures(&mut k, &[&soac.elem, op])?;
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let tp = Self::temp_ptrs(&mut k, &totals);
        let op_p = Self::temp_ptrs(&mut k, &outs);
        let init_v = self.bind_init(&mut k, init)?;
        let op_ctx = Ctx {
            key: n.clone(),
            fail: None,
        };
        let t = self.tile_begin(&mut k, &c, &ls, &c.ctaid64, &n);
        let mut elem = Self::scan_elem(&c, soac, &n);
        self.tile_load(&mut k, &c, &mut env, &t, &mut elem)?;
        let mine = self.tile_reduce(&mut k, &c, &mut env, comb, &t, &op_ctx)?;
        let (_, excl, _) = self.block_scan(&mut k, &c, &mut env, comb, &mine, &op_ctx)?;
        // Start value (exclusive scan), the tiles before, the threads before.
        let carry = self.none(&mut k, &ls);
        Self::set_init(&mut k, &carry, init_v.as_deref());
        let has_prev = k.reg(Scalar::Bool);
        k.ins(format!("setp.ne.u64 {has_prev}, {}, 0", c.ctaid64));
        let prev_i = k.reg(Scalar::U64);
        k.ins(format!("sub.s64 {prev_i}, {}, 1", c.ctaid64));
        let skip = k.label();
        k.ins(format!("@!{has_prev} bra {skip}"));
        let prev = self.load_leaves(&mut k, &tp, &prev_i, &ls);
        let tr = self.pconst(&mut k, true);
        let prev = Opt { has: tr, v: prev };
        let next = self.opt_combine(&mut k, &c, &mut env, comb, &carry, &prev, &op_ctx)?;
        Self::mov_opt(&mut k, &carry, &next);
        k.place(&skip);
        let prefix = self.opt_combine(&mut k, &c, &mut env, comb, &carry, &excl, &op_ctx)?;
        self.tile_scan(
            &mut k,
            &c,
            &mut env,
            comb,
            &t,
            &prefix,
            init.is_some(),
            &op_ctx,
        )?;
        let mut store = Self::leaf_store(&op_p);
        self.tile_store(&mut k, &c, &t, &mut store)?;
        let args = k.args.clone();
        let k3 = self.push_kernel(k);
        steps.push(self.launch(k3, grid, args));
        steps.push(Step::CheckErrors);
        steps.push(Self::bind_flat(s.var, elem_ty, outs, n_count));
        Ok(())
    }

    /// The element source of a scan's tile: the element function at the index.
    fn scan_elem<'b>(
        c: &'b Common,
        soac: &'b Soac,
        n: &'b Reg,
    ) -> impl FnMut(&mut Self, &mut Kernel, &mut Env, &Reg, &str) -> R<Vec<Reg>> + 'b {
        move |g: &mut Self, k: &mut Kernel, env: &mut Env, idx: &Reg, fail: &str| {
            Ok(g.elem_at(k, c, env, soac, None, n, idx, fail)?.0)
        }
    }

    /// The store of a tile's results: leaf `j` at the index of buffer `ptrs[j]`.
    fn leaf_store<'b>(
        ptrs: &'b [Reg],
    ) -> impl FnMut(&mut Self, &mut Kernel, &Reg, &[Reg]) -> R<()> + 'b {
        move |g: &mut Self, k: &mut Kernel, idx: &Reg, v: &[Reg]| {
            for (r, p) in v.iter().zip(ptrs) {
                g.store(k, p, idx, r);
            }
            Ok(())
        }
    }

    /// A single-pass scan with decoupled look-back (Merrill and Garland): every block takes
    /// the next tile from an atomic counter (so a block waits only for tiles taken before
    /// its own, which are running or done, whatever order the blocks are scheduled in),
    /// loads it into shared memory, each thread combines its consecutive items, one block
    /// scan of the thread totals gives the tile's aggregate, published (flag 1); then its
    /// first warp looks back over the tiles before it, 32 at a time, combining aggregates
    /// in order until one with its inclusive prefix published (flag 2); the block then
    /// publishes its own inclusive prefix, each thread scans its items from its prefix and
    /// the tile is written out. Status: per tile a `u32` flag, and the aggregate and
    /// inclusive prefix as optional values (a "has" byte plus the leaves), written before
    /// the flag with a `membar.gl` between (and read after it with one); flags are read
    /// and written `volatile`, values read `ld.relaxed.gpu`. In report mode (the launch
    /// again, the counter past the end) tile `t mod grid` is taken and every flag is set.
    fn scan_lookback(
        &mut self,
        s: &Stmt,
        soac: &Soac,
        op: &Lambda,
        init: Option<VarId>,
        steps: &mut Vec<Step>,
    ) -> R<()> {
        let Some(elem_ty) = self.ty(s.var).elem() else {
            return unsupported("scan without a sequence type");
        };
        let ls = leaves(elem_ty)?;
        let comb = Comb::Op(op, elem_ty);
        let n_count = Count::Var(var(soac.len));
        let tile_len = u64::from(self.bsize()) * self.scan_items(&ls);
        let grid = cmax1(cdiv(n_count.clone(), tile_len));
        let status = self.alloc_status(&ls, &grid, steps);
        let outs = self.alloc_leaves(&ls, &n_count, steps);

        let (mut k, c) = self.new_kernel("scan_lookback");
        let mut env = self.bind_captures(&mut k, &[&soac.elem, op])?;
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let st = Self::status_ptrs(&mut k, &status);
        let op_p = Self::temp_ptrs(&mut k, &outs);
        let init_v = self.bind_init(&mut k, init)?;
        let op_ctx = Ctx {
            key: n.clone(),
            fail: None,
        };
        let mut elem = Self::scan_elem(&c, soac, &n);
        let (before, excl, t) =
            self.lookback_core(&mut k, &c, &mut env, comb, &op_ctx, &ls, &st, &n, &mut elem)?;
        // Start value (exclusive scan), earlier tiles, then the threads before this one.
        let base = self.none(&mut k, &ls);
        Self::set_init(&mut k, &base, init_v.as_deref());
        let base = self.opt_combine(&mut k, &c, &mut env, comb, &base, &before, &op_ctx)?;
        let prefix = self.opt_combine(&mut k, &c, &mut env, comb, &base, &excl, &op_ctx)?;
        self.tile_scan(
            &mut k,
            &c,
            &mut env,
            comb,
            &t,
            &prefix,
            init.is_some(),
            &op_ctx,
        )?;
        let mut store = Self::leaf_store(&op_p);
        self.tile_store(&mut k, &c, &t, &mut store)?;
        let args = k.args.clone();
        let kid = self.push_kernel(k);
        steps.push(self.launch(kid, grid, args));
        steps.push(Step::CheckErrors);
        steps.push(Self::bind_flat(s.var, elem_ty, outs, n_count));
        Ok(())
    }

    /// The row offsets of a ragged result from the row sizes (`sizes`, `n` of them, `u64`)
    /// in one pass with decoupled look-back: `offs[i + 1]` is the inclusive sum up to `i`
    /// (`offs[0]` is 0 from the zeroed allocation). Returns the offsets.
    fn offsets_lookback(&mut self, sizes: u32, n_count: &Count, steps: &mut Vec<Step>) -> R<u32> {
        let ls = [Scalar::U64];
        let tile_len = u64::from(self.bsize()) * self.scan_items(&ls);
        let grid = cmax1(cdiv(n_count.clone(), tile_len));
        let status = self.alloc_status(&ls, &grid, steps);
        let n1 = Count::Add(Box::new(n_count.clone()), Box::new(Count::Const(1)));
        let offs = self.alloc_leaves(&[Scalar::U64], &n1, steps)[0];

        let (mut k, c) = self.new_kernel("offsets_lookback");
        let mut env = Env::new();
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let sp = Self::temp_ptrs(&mut k, &[sizes])[0].clone();
        let opp = Self::temp_ptrs(&mut k, &[offs])[0].clone();
        let st = Self::status_ptrs(&mut k, &status);
        let op_ctx = Ctx {
            key: n.clone(),
            fail: None,
        };
        let mut elem = |g: &mut Self, k: &mut Kernel, _: &mut Env, idx: &Reg, _: &str| {
            Ok(g.load_leaves(k, std::slice::from_ref(&sp), idx, &[Scalar::U64]))
        };
        let comb = Comb::AddU64;
        let (before, excl, t) =
            self.lookback_core(&mut k, &c, &mut env, comb, &op_ctx, &ls, &st, &n, &mut elem)?;
        let prefix = self.opt_combine(&mut k, &c, &mut env, comb, &before, &excl, &op_ctx)?;
        self.tile_scan(&mut k, &c, &mut env, comb, &t, &prefix, false, &op_ctx)?;
        let mut store = |g: &mut Self, k: &mut Kernel, idx: &Reg, v: &[Reg]| {
            let at = k.reg(Scalar::U64);
            k.ins(format!("add.s64 {at}, {idx}, 1"));
            g.store(k, &opp, &at, &v[0]);
            Ok(())
        };
        self.tile_store(&mut k, &c, &t, &mut store)?;
        let args = k.args.clone();
        let kid = self.push_kernel(k);
        steps.push(self.launch(kid, grid, args));
        Ok(offs)
    }

    /// Allocates the look-back status of `grid` tiles for elements of leaves `ls`: the
    /// tile counter, the flags, the aggregates and inclusive prefixes (each with its "has"
    /// flags), all zeroed.
    fn alloc_status(&mut self, ls: &[Scalar], grid: &Count, steps: &mut Vec<Step>) -> Status {
        Status {
            counter: self.alloc_leaves(&[Scalar::U32], &Count::Const(1), steps)[0],
            flags: self.alloc_leaves(&[Scalar::U32], grid, steps)[0],
            aggs: self.alloc_leaves(ls, grid, steps),
            agg_has: self.alloc_leaves(&[Scalar::Bool], grid, steps)[0],
            incs: self.alloc_leaves(ls, grid, steps),
            inc_has: self.alloc_leaves(&[Scalar::Bool], grid, steps)[0],
        }
    }

    /// The look-back status buffers as kernel parameters.
    fn status_ptrs(k: &mut Kernel, s: &Status) -> StatusPtrs {
        StatusPtrs {
            counter: Self::temp_ptrs(k, &[s.counter])[0].clone(),
            flags: Self::temp_ptrs(k, &[s.flags])[0].clone(),
            aggs: Self::temp_ptrs(k, &s.aggs),
            agg_has: Self::temp_ptrs(k, &[s.agg_has])[0].clone(),
            incs: Self::temp_ptrs(k, &s.incs),
            inc_has: Self::temp_ptrs(k, &[s.inc_has])[0].clone(),
        }
    }

    /// The body of a single-pass scan with decoupled look-back (see
    /// [`Gen::scan_lookback`]): takes a tile, loads it (`elem` gives the element at an
    /// index), combines each thread's items, scans the thread totals over the block,
    /// publishes, looks back, publishes the inclusive prefix. Returns the prefix of the
    /// tiles before (no value for tile 0), this thread's exclusive prefix within the tile,
    /// and the tile (its elements in shared memory, for [`Gen::tile_scan`]).
    #[allow(clippy::too_many_arguments)]
    fn lookback_core(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        comb: Comb<'_>,
        op_ctx: &Ctx,
        ls: &[Scalar],
        st: &StatusPtrs,
        n: &Reg,
        elem: &mut ElemAt<'_, 'f>,
    ) -> R<(Opt, Opt, Tile)> {
        // The tile: thread 0 takes the next number, the block reads it from shared memory.
        let tsh = k.shared(8);
        let is0 = k.reg(Scalar::Bool);
        k.ins(format!("setp.eq.u32 {is0}, {}, 0", c.tid));
        let skip = k.label();
        k.ins(format!("@!{is0} bra {skip}"));
        let t = k.reg(Scalar::U32);
        k.ins(format!("atom.global.add.u32 {t}, [{}], 1", st.counter));
        let ncta = k.reg(Scalar::U32);
        k.ins(format!("mov.u32 {ncta}, %nctaid.x"));
        k.ins(format!("rem.u32 {t}, {t}, {ncta}"));
        k.ins(format!("st.shared.u32 [{tsh}], {t}"));
        k.place(&skip);
        k.ins("bar.sync 0");
        let t32 = k.reg(Scalar::U32);
        k.ins(format!("ld.shared.u32 {t32}, [{tsh}]"));
        let tile = k.reg(Scalar::U64);
        k.ins(format!("cvt.u64.u32 {tile}, {t32}"));

        // The tile: loaded, each thread's items combined, the thread totals scanned.
        let t = self.tile_begin(k, c, ls, &tile, n);
        self.tile_load(k, c, env, &t, elem)?;
        let mine = self.tile_reduce(k, c, env, comb, &t, op_ctx)?;
        let (_, excl, carry) = self.block_scan(k, c, env, comb, &mine, op_ctx)?;

        // Publish the aggregate (tile 0: its inclusive prefix).
        let first = k.reg(Scalar::Bool);
        k.ins(format!("setp.eq.u64 {first}, {tile}, 0"));
        let later = k.reg(Scalar::Bool);
        k.ins(format!("setp.ne.u64 {later}, {tile}, 0"));
        let skip = k.label();
        k.ins(format!("@!{is0} bra {skip}"));
        let (agg_pub, inc_pub, done_pub) = (k.label(), k.label(), k.label());
        k.ins(format!("@{first} bra {inc_pub}"));
        k.place(&agg_pub);
        self.publish(k, &st.aggs, &st.agg_has, &st.flags, &tile, &carry, 1);
        k.ins(format!("bra.uni {done_pub}"));
        k.place(&inc_pub);
        self.publish(k, &st.incs, &st.inc_has, &st.flags, &tile, &carry, 2);
        k.place(&done_pub);
        k.place(&skip);

        // Look-back by warp 0 (tiles after the first).
        let prefix = self.none(k, ls);
        let psh: Vec<String> = (0..=ls.len()).map(|_| k.shared(8)).collect();
        let skip_lb = k.label();
        let w0 = k.reg(Scalar::Bool);
        k.ins(format!("setp.eq.u32 {w0}, {}, 0", c.warp));
        let lb = k.reg(Scalar::Bool);
        k.ins(format!("and.pred {lb}, {w0}, {later}"));
        k.ins(format!("@!{lb} bra {skip_lb}"));
        self.look_back(k, c, env, comb, op_ctx, ls, &tile, st, &prefix)?;
        // Lane 0 publishes the inclusive prefix and shares the exclusive one.
        let lane0 = k.reg(Scalar::Bool);
        k.ins(format!("setp.eq.u32 {lane0}, {}, 0", c.lane));
        k.ins(format!("@!{lane0} bra {skip_lb}"));
        let inc = self.opt_combine(k, c, env, comb, &prefix, &carry, op_ctx)?;
        self.publish(k, &st.incs, &st.inc_has, &st.flags, &tile, &inc, 2);
        for (r, a) in std::iter::once(&prefix.has).chain(&prefix.v).zip(&psh) {
            Self::st(k, "shared", a, r);
        }
        k.place(&skip_lb);
        k.ins("bar.sync 0");
        // Every thread: the prefix of the tiles before (none for tile 0).
        let got = {
            let zero = k.reg(Scalar::U32);
            k.ins(format!("mov.u32 {zero}, 0"));
            Self::warp_partial(k, &psh, ls, &zero)
        };
        let before = Opt {
            has: k.reg(Scalar::Bool),
            v: got.v.clone(),
        };
        k.ins(format!("and.pred {}, {}, {later}", before.has, got.has));
        Ok((before, excl, t))
    }

    /// Items per thread of a scan tile for elements of leaves `ls`: the tile is staged in
    /// shared memory (one array per leaf, a `bool` in a 32-bit slot), at most
    /// [`TILE_SHARED`] bytes, at most [`MAX_ITEMS`] items; odd, so that a thread's
    /// consecutive items (stride `items` slots) fall in distinct banks.
    fn scan_items(&self, ls: &[Scalar]) -> u64 {
        scan_items(self.bsize(), ls)
    }

    /// Sets up tile `tile` (a `u64` register) of `items` elements per thread over `n`
    /// elements, with its shared arrays (see [`Tile`]).
    fn tile_begin(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        ls: &[Scalar],
        tile: &Reg,
        n: &Reg,
    ) -> Tile {
        let items = self.scan_items(ls);
        let bsize = u64::from(self.bsize());
        let tile_len = items * bsize;
        let direct = items == 1;
        let arrays: Vec<String> = if direct {
            Vec::new()
        } else {
            ls.iter()
                .map(|&s| k.shared((tile_len * u64::from(slot_bytes(s))) as u32))
                .collect()
        };
        let base = k.reg(Scalar::U64);
        k.ins(format!("mul.lo.u64 {base}, {tile}, {tile_len}"));
        // Elements in this tile: min(n - base, tile_len) (n >= base for every tile).
        let lim = k.reg(Scalar::U64);
        k.ins(format!("sub.s64 {lim}, {n}, {base}"));
        k.ins(format!("min.u64 {lim}, {lim}, {tile_len}"));
        // This thread's: clamp(lim - tid * items, 0, items).
        let d = k.reg(Scalar::U64);
        k.ins(format!("mul.lo.u64 {d}, {}, {items}", c.tid64));
        k.ins(format!("sub.s64 {d}, {lim}, {d}"));
        k.ins(format!("max.s64 {d}, {d}, 0"));
        k.ins(format!("min.s64 {d}, {d}, {items}"));
        let mine = k.reg(Scalar::U32);
        k.ins(format!("cvt.u32.u64 {mine}, {d}"));
        let first = arrays
            .iter()
            .zip(ls)
            .map(|(a, &s)| Self::shared_at(k, a, &c.tid, items * u64::from(slot_bytes(s))))
            .collect();
        let regs = direct.then(|| ls.iter().map(|&s| self.zero(k, s)).collect());
        Tile {
            arrays,
            ls: ls.to_vec(),
            items,
            base,
            lim,
            mine,
            first,
            regs,
        }
    }

    /// Loops over the tile in coalesced rounds (thread `t` takes elements `t`, `t +
    /// block`, ... of the tile, while inside it); `body` gets the element's global index,
    /// the shared address of its slot in each array and a label to jump to to skip the
    /// rest of its work, and emits the work of one element.
    fn tile_rounds(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        t: &Tile,
        body: &mut RoundBody<'_, 'f>,
    ) -> R<()> {
        let bsize = self.bsize();
        let (idx, end) = (k.reg(Scalar::U64), k.reg(Scalar::U64));
        k.ins(format!("add.s64 {idx}, {}, {}", t.base, c.tid64));
        k.ins(format!("add.s64 {end}, {}, {}", t.base, t.lim));
        let addrs: Vec<Reg> = t
            .arrays
            .iter()
            .zip(&t.ls)
            .map(|(a, &s)| Self::shared_at(k, a, &c.tid, u64::from(slot_bytes(s))))
            .collect();
        let (top, next, done) = (k.label(), k.label(), k.label());
        k.place(&top);
        let out = k.reg(Scalar::Bool);
        k.ins(format!("setp.ge.u64 {out}, {idx}, {end}"));
        k.ins(format!("@{out} bra {done}"));
        body(self, k, &idx, &addrs, &next)?;
        k.place(&next);
        k.ins(format!("add.s64 {idx}, {idx}, {bsize}"));
        for (a, &s) in addrs.iter().zip(&t.ls) {
            k.ins(format!("add.s32 {a}, {a}, {}", bsize * slot_bytes(s)));
        }
        k.ins(format!("bra.uni {top}"));
        k.place(&done);
        Ok(())
    }

    /// With one item per thread ([`Tile::regs`]): the thread's element index (`base +
    /// tid`) and a label (placed by the caller) that threads past the tile's end jump to.
    fn direct_elem(k: &mut Kernel, c: &Common, t: &Tile) -> (Reg, String) {
        let skip = k.label();
        let out = k.reg(Scalar::Bool);
        k.ins(format!("setp.ge.u64 {out}, {}, {}", c.tid64, t.lim));
        k.ins(format!("@{out} bra {skip}"));
        let idx = k.reg(Scalar::U64);
        k.ins(format!("add.s64 {idx}, {}, {}", t.base, c.tid64));
        (idx, skip)
    }

    /// Step 1 of a tile: the element function of each element of the tile, in coalesced
    /// rounds, into the shared arrays; then the block waits. A failed check leaves the
    /// slot unspecified (the failure is reported; the results are never used).
    fn tile_load(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        t: &Tile,
        elem: &mut ElemAt<'_, 'f>,
    ) -> R<()> {
        if let Some(regs) = &t.regs {
            let (idx, skip) = Self::direct_elem(k, c, t);
            let e = elem(self, k, env, &idx, &skip)?;
            for (d, s) in regs.iter().zip(&e) {
                Self::mov(k, d, s);
            }
            k.place(&skip);
            return Ok(());
        }
        self.tile_rounds(k, c, t, &mut |g, k, idx, addrs, next| {
            let e = elem(g, k, env, idx, next)?;
            for (r, a) in e.iter().zip(addrs) {
                Self::st(k, "shared", &a.name, r);
            }
            Ok(())
        })?;
        k.ins("bar.sync 0");
        Ok(())
    }

    /// The last step of a tile: each element's result from the shared arrays to `store`,
    /// in coalesced rounds (unrolled, with constant shared offsets, for a whole tile).
    fn tile_store(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        t: &Tile,
        store: &mut StoreAt<'_, 'f>,
    ) -> R<()> {
        if let Some(regs) = &t.regs {
            let (idx, skip) = Self::direct_elem(k, c, t);
            store(self, k, &idx, regs)?;
            k.place(&skip);
            return Ok(());
        }
        let bsize = u64::from(self.bsize());
        let (part, done) = (k.label(), k.label());
        let whole = k.reg(Scalar::Bool);
        k.ins(format!(
            "setp.eq.u64 {whole}, {}, {}",
            t.lim,
            t.items * bsize
        ));
        k.ins(format!("@!{whole} bra {part}"));
        let idx0 = k.reg(Scalar::U64);
        k.ins(format!("add.s64 {idx0}, {}, {}", t.base, c.tid64));
        let rows: Vec<Reg> = t
            .arrays
            .iter()
            .zip(&t.ls)
            .map(|(a, &s)| Self::shared_at(k, a, &c.tid, u64::from(slot_bytes(s))))
            .collect();
        for round in 0..t.items {
            let idx = if round == 0 {
                idx0.clone()
            } else {
                let i = k.reg(Scalar::U64);
                k.ins(format!("add.s64 {i}, {idx0}, {}", round * bsize));
                i
            };
            let v: Vec<Reg> = rows
                .iter()
                .zip(&t.ls)
                .map(|(a, &s)| {
                    let off = round * bsize * u64::from(slot_bytes(s));
                    Self::ld(k, "shared", &format!("{a}+{off}"), s)
                })
                .collect();
            store(self, k, &idx, &v)?;
        }
        k.ins(format!("bra.uni {done}"));
        k.place(&part);
        self.tile_rounds(k, c, t, &mut |g, k, idx, addrs, _| {
            let v: Vec<Reg> = addrs
                .iter()
                .zip(&t.ls)
                .map(|(a, &s)| Self::ld(k, "shared", &a.name, s))
                .collect();
            store(g, k, idx, &v)
        })?;
        k.place(&done);
        Ok(())
    }

    /// Runs `body` on each of this thread's consecutive items of the tile in order, with
    /// an [`Item`] (first, whose state must be in registers fixed by the caller after it,
    /// shared addresses): unrolled with constant offsets when the thread has all its
    /// items (the state then only needs to be fixed after the last), else a loop over the
    /// ones it has (the tile's tail; after every item).
    fn thread_items(
        &mut self,
        k: &mut Kernel,
        t: &Tile,
        body: &mut dyn FnMut(&mut Self, &mut Kernel, Item<'_>) -> R<()>,
    ) -> R<()> {
        let (slow, done) = (k.label(), k.label());
        let full = k.reg(Scalar::Bool);
        k.ins(format!("setp.eq.u32 {full}, {}, {}", t.mine, t.items));
        k.ins(format!("@!{full} bra {slow}"));
        for j in 0..t.items {
            let addrs: Vec<String> = t
                .first
                .iter()
                .zip(&t.ls)
                .map(|(a, &s)| format!("{a}+{}", j * u64::from(slot_bytes(s))))
                .collect();
            let item = Item {
                first: j == 0,
                fix: j + 1 == t.items,
                addrs: &addrs,
            };
            body(self, k, item)?;
        }
        k.ins(format!("bra.uni {done}"));
        k.place(&slow);
        let none = k.reg(Scalar::Bool);
        k.ins(format!("setp.eq.u32 {none}, {}, 0", t.mine));
        k.ins(format!("@{none} bra {done}"));
        let first: Vec<String> = t.first.iter().map(|a| a.name.clone()).collect();
        let item = Item {
            first: true,
            fix: true,
            addrs: &first,
        };
        body(self, k, item)?;
        let j = k.reg(Scalar::U32);
        k.ins(format!("mov.u32 {j}, 1"));
        let addrs: Vec<Reg> = t.first.iter().map(|a| k.reg(a.ty)).collect();
        for ((d, a), &s) in addrs.iter().zip(&t.first).zip(&t.ls) {
            k.ins(format!("add.s32 {d}, {a}, {}", slot_bytes(s)));
        }
        let top = k.label();
        k.place(&top);
        let out = k.reg(Scalar::Bool);
        k.ins(format!("setp.ge.u32 {out}, {j}, {}", t.mine));
        k.ins(format!("@{out} bra {done}"));
        let names: Vec<String> = addrs.iter().map(|a| a.name.clone()).collect();
        let item = Item {
            first: false,
            fix: true,
            addrs: &names,
        };
        body(self, k, item)?;
        k.ins(format!("add.s32 {j}, {j}, 1"));
        for (a, &s) in addrs.iter().zip(&t.ls) {
            k.ins(format!("add.s32 {a}, {a}, {}", slot_bytes(s)));
        }
        k.ins(format!("bra.uni {top}"));
        k.place(&done);
        Ok(())
    }

    /// Loads one item of this thread's (see [`Gen::thread_items`]) from the shared arrays.
    fn load_item(k: &mut Kernel, t: &Tile, addrs: &[String]) -> Vec<Reg> {
        addrs
            .iter()
            .zip(&t.ls)
            .map(|(a, &s)| Self::ld(k, "shared", a, s))
            .collect()
    }

    /// This thread's items of the tile combined in order (no value when it has none).
    fn tile_reduce(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        comb: Comb<'_>,
        t: &Tile,
        ctx: &Ctx,
    ) -> R<Opt> {
        if let Some(regs) = &t.regs {
            let has = k.reg(Scalar::Bool);
            k.ins(format!("setp.ne.u32 {has}, {}, 0", t.mine));
            return Ok(Opt {
                has,
                v: regs.clone(),
            });
        }
        let acc = self.none(k, &t.ls);
        // The running value (registers of the last combination between fixes).
        let mut cur = acc.v.clone();
        self.thread_items(k, t, &mut |g, k, it| {
            let x = Self::load_item(k, t, it.addrs);
            cur = if it.first {
                k.ins(format!("setp.eq.u32 {}, 1, 1", acc.has));
                x
            } else {
                g.combine(k, c, env, comb, &cur, &x, ctx)?
            };
            if it.fix {
                for (d, s) in acc.v.iter().zip(&cur) {
                    Self::mov(k, d, s);
                }
                cur = acc.v.clone();
            }
            Ok(())
        })?;
        Ok(acc)
    }

    /// Replaces this thread's items in the shared arrays by their scan: `prefix` (the
    /// optional combination of everything before the thread's first item) combined with
    /// the items up to each one (inclusive) or before it (`exclusive`; `prefix` then has
    /// a value: the start value at least); then the block waits.
    #[allow(clippy::too_many_arguments)]
    fn tile_scan(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        comb: Comb<'_>,
        t: &Tile,
        prefix: &Opt,
        exclusive: bool,
        ctx: &Ctx,
    ) -> R<()> {
        if let Some(regs) = &t.regs {
            // The thread's element (if it has one) becomes its result.
            let skip = k.label();
            let none = k.reg(Scalar::Bool);
            k.ins(format!("setp.eq.u32 {none}, {}, 0", t.mine));
            k.ins(format!("@{none} bra {skip}"));
            let res = if exclusive {
                prefix.v.clone()
            } else {
                let tr = self.pconst(k, true);
                let x = Opt {
                    has: tr,
                    v: regs.clone(),
                };
                self.opt_combine(k, c, env, comb, prefix, &x, ctx)?.v
            };
            for (d, s) in regs.iter().zip(&res) {
                Self::mov(k, d, s);
            }
            k.place(&skip);
            return Ok(());
        }
        let acc = Opt {
            has: k.reg(Scalar::Bool),
            v: prefix.v.iter().map(|r| k.reg(r.ty)).collect(),
        };
        Self::mov_opt(k, &acc, prefix);
        let mut cur = acc.v.clone();
        self.thread_items(k, t, &mut |g, k, it| {
            let x = Self::load_item(k, t, it.addrs);
            if exclusive {
                let before = if it.first { &acc.v } else { &cur };
                for (r, a) in before.iter().zip(it.addrs) {
                    Self::st(k, "shared", a, r);
                }
            }
            cur = if it.first {
                let t = g.pconst(k, true);
                let xo = Opt { has: t, v: x };
                g.opt_combine(k, c, env, comb, &acc, &xo, ctx)?.v
            } else {
                g.combine(k, c, env, comb, &cur, &x, ctx)?
            };
            if !exclusive {
                for (r, a) in cur.iter().zip(it.addrs) {
                    Self::st(k, "shared", a, r);
                }
            }
            if it.fix {
                // After the first item there is a value.
                k.ins(format!("setp.eq.u32 {}, 1, 1", acc.has));
                for (d, s) in acc.v.iter().zip(&cur) {
                    Self::mov(k, d, s);
                }
                cur = acc.v.clone();
            }
            Ok(())
        })?;
        k.ins("bar.sync 0");
        Ok(())
    }

    /// The element function (and, for a filter, its predicate) at index `idx` for a tile:
    /// its leaves and whether it is kept (`None` without a predicate). A failed check in
    /// either jumps to `fail` (the key is `idx` for the element, `n + idx` for the
    /// predicate).
    #[allow(clippy::too_many_arguments)]
    fn elem_at(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        soac: &Soac,
        pred: Option<&Lambda>,
        n: &Reg,
        idx: &Reg,
        fail: &str,
    ) -> R<(Vec<Reg>, Option<Reg>)> {
        let ctx = Ctx {
            key: idx.clone(),
            fail: Some(fail.to_string()),
        };
        let e = self.elem(k, c, env, &soac.elem, idx, &ctx)?.flatten()?;
        let Some(pl) = pred else {
            return Ok((e, None));
        };
        let key = k.reg(Scalar::U64);
        k.ins(format!("add.s64 {key}, {n}, {idx}"));
        let pctx = Ctx {
            key,
            fail: Some(fail.to_string()),
        };
        let ev = unflatten(self.ty(pl.params[0]), &mut e.clone().into_iter())?;
        env.insert(pl.params[0], ev);
        let kv = self.block(k, c, env, &pl.body, &pctx)?;
        Ok((e, Some(kv.reg()?.clone())))
    }

    /// The start value of a reduction or exclusive scan (`init`), bound as kernel
    /// parameters: its scalar leaves.
    fn bind_init(&mut self, k: &mut Kernel, init: Option<VarId>) -> R<Option<Vec<Reg>>> {
        match init {
            Some(v) => {
                let t = self.ty(v).clone();
                Ok(Some(self.bind_var(k, var(v), Vec::new(), &t)?.flatten()?))
            }
            None => Ok(None),
        }
    }

    /// Sets the optional `acc` to the start value `init`, if there is one.
    fn set_init(k: &mut Kernel, acc: &Opt, init: Option<&[Reg]>) {
        if let Some(iv) = init {
            for (d, s) in acc.v.iter().zip(iv) {
                Self::mov(k, d, s);
            }
            k.ins(format!("setp.eq.u32 {}, 1, 1", acc.has));
        }
    }

    /// Stores the optional value `v` as tile `tile`'s entry of the status arrays `ptrs`
    /// (leaves) and `has`, then, after a fence, `flag` into the tile's flag (volatile).
    #[allow(clippy::too_many_arguments)]
    fn publish(
        &mut self,
        k: &mut Kernel,
        ptrs: &[Reg],
        has: &Reg,
        flags: &Reg,
        tile: &Reg,
        v: &Opt,
        flag: u32,
    ) {
        for (r, p) in v.v.iter().zip(ptrs) {
            self.store(k, p, tile, r);
        }
        self.store(k, has, tile, &v.has);
        k.ins("membar.gl");
        let a = Self::addr(k, flags, tile, Scalar::U32);
        k.ins(format!("st.volatile.global.u32 [{a}], {flag}"));
    }

    /// The look-back of [`Gen::scan_lookback`], run by a whole warp: lane `l` looks at tile
    /// `base - 1 - l` (`base` starts at `tile`), waits for its flag, and the warp finds the
    /// nearest tile with an inclusive prefix (`vote.ballot`); the values of the tiles from
    /// that one (its inclusive prefix) to the nearest (their aggregates) are combined in
    /// tile order by a shuffle-down reduction towards lane 0 and put before `prefix`. With
    /// no inclusive prefix in the window, the next 32 tiles follow.
    #[allow(clippy::too_many_arguments)]
    fn look_back(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        comb: Comb<'_>,
        ctx: &Ctx,
        ls: &[Scalar],
        tile: &Reg,
        st: &StatusPtrs,
        prefix: &Opt,
    ) -> R<()> {
        let (fp, ap, ahp, ip, ihp) = (&st.flags, &st.aggs, &st.agg_has, &st.incs, &st.inc_has);
        let base = k.reg(Scalar::U64);
        k.ins(format!("mov.u64 {base}, {tile}"));
        let lane64 = k.reg(Scalar::U64);
        k.ins(format!("cvt.u64.u32 {lane64}, {}", c.lane));
        let (top, end) = (k.label(), k.label());
        k.place(&top);
        // Lane l: tile base - 1 - l, if there is one.
        let exists = k.reg(Scalar::Bool);
        k.ins(format!("setp.gt.u64 {exists}, {base}, {lane64}"));
        let j = k.reg(Scalar::U64);
        k.ins(format!("sub.s64 {j}, {base}, 1"));
        k.ins(format!("sub.s64 {j}, {j}, {lane64}"));
        let f = k.reg(Scalar::U32);
        k.ins(format!("mov.u32 {f}, 0"));
        let (spin, spun) = (k.label(), k.label());
        k.ins(format!("@!{exists} bra {spun}"));
        let fa = Self::addr(k, fp, &j, Scalar::U32);
        let first_try = k.label();
        k.ins(format!("bra {first_try}"));
        k.place(&spin);
        // Back off before reading again (the block published nothing yet).
        k.ins("nanosleep.u32 64");
        k.place(&first_try);
        k.ins(format!("ld.volatile.global.u32 {f}, [{fa}]"));
        let waiting = k.reg(Scalar::Bool);
        k.ins(format!("setp.eq.u32 {waiting}, {f}, 0"));
        k.ins(format!("@{waiting} bra {spin}"));
        k.place(&spun);
        k.ins("membar.gl");
        // The nearest lane with an inclusive prefix (32: none).
        let incl = k.reg(Scalar::Bool);
        k.ins(format!("setp.eq.u32 {incl}, {f}, 2"));
        let ballot = k.reg(Scalar::U32);
        k.ins(format!("vote.sync.ballot.b32 {ballot}, {incl}, 0xffffffff"));
        let low = k.reg(Scalar::U32);
        k.ins(format!("neg.s32 {low}, {ballot}"));
        k.ins(format!("and.b32 {low}, {low}, {ballot}"));
        let stop = k.reg(Scalar::U32);
        k.ins(format!("bfind.u32 {stop}, {low}"));
        let none = k.reg(Scalar::Bool);
        k.ins(format!("setp.eq.u32 {none}, {ballot}, 0"));
        k.ins(format!("selp.u32 {stop}, 32, {stop}, {none}"));
        // This lane's value: the inclusive prefix at the stop, aggregates before it.
        let v = self.none(k, ls);
        let take = k.reg(Scalar::Bool);
        k.ins(format!("setp.le.u32 {take}, {}, {stop}", c.lane));
        k.ins(format!("and.pred {take}, {take}, {exists}"));
        let at_stop = k.reg(Scalar::Bool);
        k.ins(format!("setp.eq.u32 {at_stop}, {}, {stop}", c.lane));
        let (skip, agg, got) = (k.label(), k.label(), k.label());
        k.ins(format!("@!{take} bra {skip}"));
        k.ins(format!("@!{at_stop} bra {agg}"));
        let x = Self::load_status(k, ip, ihp, &j, ls);
        Self::mov_opt(k, &v, &x);
        k.ins(format!("bra.uni {got}"));
        k.place(&agg);
        let x = Self::load_status(k, ap, ahp, &j, ls);
        Self::mov_opt(k, &v, &x);
        k.place(&got);
        k.place(&skip);
        // In tile order (higher lanes first) towards lane 0.
        self.warp_reduce_down(k, c, env, comb, &v, true, ctx)?;
        let w = Self::shfl_opt(k, &v, "idx", 0);
        let n = self.opt_combine(k, c, env, comb, &w, prefix, ctx)?;
        Self::mov_opt(k, prefix, &n);
        k.ins(format!("@!{none} bra.uni {end}"));
        k.ins(format!("sub.s64 {base}, {base}, 32"));
        let past = k.reg(Scalar::Bool);
        k.ins(format!("setp.le.s64 {past}, {base}, 0"));
        k.ins(format!("@{past} bra.uni {end}"));
        k.ins(format!("bra.uni {top}"));
        k.place(&end);
        Ok(())
    }

    /// Loads entry `j` of a status array (leaves `ptrs`, flags `has`) coherently at the
    /// device scope.
    fn load_status(k: &mut Kernel, ptrs: &[Reg], has: &Reg, j: &Reg, ls: &[Scalar]) -> Opt {
        let v = ptrs
            .iter()
            .zip(ls)
            .map(|(p, &s)| {
                let a = Self::addr(k, p, j, s);
                Self::ld(k, "relaxed.gpu.global", &a.name, s)
            })
            .collect();
        let a = Self::addr(k, has, j, Scalar::Bool);
        let h = Self::ld(k, "relaxed.gpu.global", &a.name, Scalar::Bool);
        Opt { has: h, v }
    }

    /// One block scans the `grid` tile totals in place (inclusive), in chunks of a block's
    /// threads.
    #[allow(clippy::too_many_arguments)]
    fn scan_totals(
        &mut self,
        ls: &[Scalar],
        comb: Comb<'_>,
        op: Option<&Lambda>,
        totals: &[u32],
        grid: &Count,
        n_count: &Count,
        steps: &mut Vec<Step>,
    ) -> R<()> {
        let (mut k, c) = self.new_kernel("scan_totals");
        let mut env = match op {
            Some(op) => self.bind_captures(&mut k, &[op])?,
            None => Env::new(),
        };
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let g = k.param(Scalar::U64, KArg::Count(grid.clone()));
        let tp = Self::temp_ptrs(&mut k, totals);
        let op_ctx = Ctx { key: n, fail: None };
        let carry = self.none(&mut k, ls);
        let cbase = k.reg(Scalar::U64);
        k.ins(format!("mov.u64 {cbase}, 0"));
        let (top, end) = (k.label(), k.label());
        k.place(&top);
        let p = k.reg(Scalar::Bool);
        k.ins(format!("setp.ge.u64 {p}, {cbase}, {g}"));
        k.ins(format!("@{p} bra.uni {end}"));
        let j = k.reg(Scalar::U64);
        k.ins(format!("add.s64 {j}, {cbase}, {}", c.tid64));
        let valid = k.reg(Scalar::Bool);
        k.ins(format!("setp.lt.u64 {valid}, {j}, {g}"));
        let x = self.none(&mut k, ls);
        let skip = k.label();
        k.ins(format!("@!{valid} bra {skip}"));
        let v = self.load_leaves(&mut k, &tp, &j, ls);
        for (d, s) in x.v.iter().zip(&v) {
            Self::mov(&mut k, d, s);
        }
        k.ins(format!("setp.eq.u32 {}, 1, 1", x.has));
        k.place(&skip);
        let (incl, _, total) = self.block_scan(&mut k, &c, &mut env, comb, &x, &op_ctx)?;
        let res = self.opt_combine(&mut k, &c, &mut env, comb, &carry, &incl, &op_ctx)?;
        let skipw = k.label();
        k.ins(format!("@!{valid} bra {skipw}"));
        for (rg, ptr) in res.v.iter().zip(&tp) {
            self.store(&mut k, ptr, &j, rg);
        }
        k.place(&skipw);
        let next = self.opt_combine(&mut k, &c, &mut env, comb, &carry, &total, &op_ctx)?;
        Self::mov_opt(&mut k, &carry, &next);
        k.ins(format!("add.s64 {cbase}, {cbase}, {}", self.bsize()));
        k.ins(format!("bra.uni {top}"));
        k.place(&end);
        let args = k.args.clone();
        let kid = self.push_kernel(k);
        steps.push(self.launch(kid, Count::Const(1), args));
        Ok(())
    }

    /// The head of a loop over `rounds` rounds: returns the round counter and the labels
    /// for [`Gen::rounds_tail`].
    fn rounds_head(k: &mut Kernel, rounds: u64) -> (Reg, String, String) {
        let r = k.reg(Scalar::U32);
        k.ins(format!("mov.u32 {r}, 0"));
        let (top, end) = (k.label(), k.label());
        k.place(&top);
        let p = k.reg(Scalar::Bool);
        k.ins(format!("setp.ge.u32 {p}, {r}, {rounds}"));
        k.ins(format!("@{p} bra.uni {end}"));
        (r, top, end)
    }

    fn rounds_tail(k: &mut Kernel, r: &Reg, top: &str, end: &str) {
        k.ins(format!("add.s32 {r}, {r}, 1"));
        k.ins(format!("bra.uni {top}"));
        k.place(end);
    }

    fn filter(&mut self, s: &Stmt, soac: &Soac, pred: &Lambda, steps: &mut Vec<Step>) -> R<()> {
        let Some(elem_ty) = self.ty(s.var).elem() else {
            return unsupported("filter without a sequence type");
        };
        let ls = leaves(elem_ty)?;
        let n_count = Count::Var(var(soac.len));
        // A chunk of `32 * FILTER_ROUNDS` consecutive elements per warp.
        let chunks = cmax1(cdiv(n_count.clone(), 32 * FILTER_ROUNDS));
        let grid = cmax1(cdiv(
            n_count.clone(),
            32 * FILTER_ROUNDS * u64::from(self.warps()),
        ));
        let counts = self.alloc_leaves(&[Scalar::U64], &chunks, steps);

        // Pass 1: survivors per chunk.
        let (mut k, c) = self.new_kernel("filter_count");
        let mut env = self.bind_captures(&mut k, &[&soac.elem, pred])?;
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let cp = Self::temp_ptrs(&mut k, &counts)[0].clone();
        let (wc, cbase, end) = self.chunk_begin(&mut k, &c, &n);
        let count = k.reg(Scalar::U64);
        k.ins(format!("mov.u64 {count}, 0"));
        self.chunk_rounds(
            &mut k,
            &c,
            &mut env,
            soac,
            pred,
            &n,
            &cbase,
            &mut |_, k, _, _, ballot| {
                Self::add_popc(k, &count, ballot);
                Ok(())
            },
        )?;
        // Lane 0 writes the chunk's count.
        let lane0 = k.reg(Scalar::Bool);
        k.ins(format!("setp.eq.u32 {lane0}, {}, 0", c.lane));
        k.ins(format!("@!{lane0} bra {end}"));
        self.store(&mut k, &cp, &wc, &count);
        k.place(&end);
        let args = k.args.clone();
        let k1 = self.push_kernel(k);
        steps.push(self.launch(k1, grid.clone(), args));
        steps.push(Step::CheckErrors);

        // Pass 2: offsets of the chunks; the last one is the result's length.
        self.scan_totals(
            &[Scalar::U64],
            Comb::AddU64,
            None,
            &counts,
            &chunks,
            &n_count,
            steps,
        )?;
        let total_t = self.temp();
        steps.push(Step::ReadCount {
            temp: total_t,
            src: Buf::Temp(counts[0]),
            index: Count::Sub(Box::new(chunks.clone()), Box::new(Count::Const(1))),
            guard: n_count.clone(),
        });
        let out_len = Count::Temp(total_t);
        let outs = self.alloc_leaves(&ls, &out_len, steps);

        // Pass 3: survivors written at their offsets: after the chunks before, the
        // warp's earlier rounds and the lanes below in the round.
        let (mut k, c) = self.new_kernel("filter");
        let mut env = self.bind_captures(&mut k, &[&soac.elem, pred])?;
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let cp = Self::temp_ptrs(&mut k, &counts)[0].clone();
        let op_p = Self::temp_ptrs(&mut k, &outs);
        let olen = k.param(Scalar::U64, KArg::Count(out_len.clone()));
        let (wc, cbase, end) = self.chunk_begin(&mut k, &c, &n);
        let pos = k.reg(Scalar::U64);
        k.ins(format!("mov.u64 {pos}, 0"));
        let has_prev = k.reg(Scalar::Bool);
        k.ins(format!("setp.ne.u64 {has_prev}, {wc}, 0"));
        let skip = k.label();
        k.ins(format!("@!{has_prev} bra {skip}"));
        let prev_i = k.reg(Scalar::U64);
        k.ins(format!("sub.s64 {prev_i}, {wc}, 1"));
        let prev = self.load_leaves(&mut k, std::slice::from_ref(&cp), &prev_i, &[Scalar::U64]);
        k.ins(format!("mov.u64 {pos}, {}", prev[0]));
        k.place(&skip);
        let lt = k.reg(Scalar::U32);
        k.ins(format!("mov.u32 {lt}, %lanemask_lt"));
        self.chunk_rounds(
            &mut k,
            &c,
            &mut env,
            soac,
            pred,
            &n,
            &cbase,
            &mut |g, k, x, keep, ballot| {
                let below = k.reg(Scalar::U32);
                k.ins(format!("and.b32 {below}, {ballot}, {lt}"));
                let rank = k.reg(Scalar::U32);
                k.ins(format!("popc.b32 {rank}, {below}"));
                let at = k.reg(Scalar::U64);
                k.ins(format!("cvt.u64.u32 {at}, {rank}"));
                k.ins(format!("add.s64 {at}, {at}, {pos}"));
                let w = k.reg(Scalar::Bool);
                k.ins(format!("setp.lt.u64 {w}, {at}, {olen}"));
                k.ins(format!("and.pred {w}, {w}, {keep}"));
                let skipw = k.label();
                k.ins(format!("@!{w} bra {skipw}"));
                for (rg, p) in x.iter().zip(&op_p) {
                    g.store(k, p, &at, rg);
                }
                k.place(&skipw);
                Self::add_popc(k, &pos, ballot);
                Ok(())
            },
        )?;
        k.place(&end);
        let args = k.args.clone();
        let k3 = self.push_kernel(k);
        steps.push(self.launch(k3, grid, args));
        steps.push(Step::CheckErrors);
        steps.push(Self::bind_flat(s.var, elem_ty, outs, out_len));
        Ok(())
    }

    /// `acc += popc(ballot)` (`acc` a `u64`).
    fn add_popc(k: &mut Kernel, acc: &Reg, ballot: &Reg) {
        let pc = k.reg(Scalar::U32);
        k.ins(format!("popc.b32 {pc}, {ballot}"));
        let pc64 = k.reg(Scalar::U64);
        k.ins(format!("cvt.u64.u32 {pc64}, {pc}"));
        k.ins(format!("add.s64 {acc}, {acc}, {pc64}"));
    }

    /// This warp's chunk of a filter (warp `w` of block `b`: chunk `b * warps + w`, of
    /// `32 * FILTER_ROUNDS` elements): returns the chunk number, its first index (`u64`
    /// each) and the label a warp whose chunk starts past the end jumps to (the caller
    /// places it at the end of the kernel).
    fn chunk_begin(&mut self, k: &mut Kernel, c: &Common, n: &Reg) -> (Reg, Reg, String) {
        let wc = k.reg(Scalar::U64);
        k.ins(format!("mul.lo.u64 {wc}, {}, {}", c.ctaid64, self.warps()));
        let w64 = k.reg(Scalar::U64);
        k.ins(format!("cvt.u64.u32 {w64}, {}", c.warp));
        k.ins(format!("add.s64 {wc}, {wc}, {w64}"));
        let cbase = k.reg(Scalar::U64);
        k.ins(format!("mul.lo.u64 {cbase}, {wc}, {}", 32 * FILTER_ROUNDS));
        let end = k.label();
        let past = k.reg(Scalar::Bool);
        k.ins(format!("setp.ge.u64 {past}, {cbase}, {n}"));
        k.ins(format!("@{past} bra.uni {end}"));
        (wc, cbase, end)
    }

    /// The rounds of a filter's chunk starting at `cbase`: in each, lane `l` evaluates
    /// element `cbase + 32 r + l` (if inside) and the predicate, the warp takes the ballot
    /// of the kept ones, and `body` gets (the element's leaves, kept, ballot). A failed
    /// check leaves the element not kept.
    #[allow(clippy::too_many_arguments)]
    fn chunk_rounds(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        soac: &Soac,
        pred: &Lambda,
        n: &Reg,
        cbase: &Reg,
        body: &mut ChunkBody<'_, 'f>,
    ) -> R<()> {
        let stop = k.reg(Scalar::U64);
        k.ins(format!("add.s64 {stop}, {cbase}, {}", 32 * FILTER_ROUNDS));
        k.ins(format!("min.u64 {stop}, {stop}, {n}"));
        let idx = k.reg(Scalar::U64);
        let lane64 = k.reg(Scalar::U64);
        k.ins(format!("cvt.u64.u32 {lane64}, {}", c.lane));
        k.ins(format!("add.s64 {idx}, {cbase}, {lane64}"));
        let (top, skip, done) = (k.label(), k.label(), k.label());
        k.place(&top);
        // The round's first index (the same in every lane) against the chunk's end.
        let rbase = k.reg(Scalar::U64);
        k.ins(format!("sub.s64 {rbase}, {idx}, {lane64}"));
        let out = k.reg(Scalar::Bool);
        k.ins(format!("setp.ge.u64 {out}, {rbase}, {stop}"));
        k.ins(format!("@{out} bra.uni {done}"));
        let keep = self.pconst(k, false);
        let valid = k.reg(Scalar::Bool);
        k.ins(format!("setp.lt.u64 {valid}, {idx}, {n}"));
        k.ins(format!("@!{valid} bra {skip}"));
        let (x, kp) = self.elem_at(k, c, env, soac, Some(pred), n, &idx, &skip)?;
        if let Some(kp) = kp {
            k.ins(format!("mov.pred {keep}, {kp}"));
        }
        k.place(&skip);
        let ballot = k.reg(Scalar::U32);
        k.ins(format!("vote.sync.ballot.b32 {ballot}, {keep}, 0xffffffff"));
        body(self, k, &x, &keep, &ballot)?;
        k.ins(format!("add.s64 {idx}, {idx}, 32"));
        k.ins(format!("bra.uni {top}"));
        k.place(&done);
        Ok(())
    }

    fn flag(k: &mut Kernel, keep: Option<&Reg>) -> Reg {
        let flag = k.reg(Scalar::U64);
        match keep {
            Some(p) => k.ins(format!("selp.u64 {flag}, 1, 0, {p}")),
            None => k.ins(format!("mov.u64 {flag}, 0")),
        }
        flag
    }

    /// Splits an `(index, value)` element; returns the index as `u64`, whether it was
    /// signed, and the value's leaves.
    fn pair(&mut self, k: &mut Kernel, v: KVal) -> R<(Reg, bool, Vec<Reg>)> {
        let (idx, signed, value) = self.target(k, v)?;
        Ok((idx, signed, value.flatten()?))
    }

    /// An `(index, value)` element of a scatter or permute: the index widened to 64 bits,
    /// whether it was signed, and the value.
    fn target(&mut self, k: &mut Kernel, v: KVal) -> R<(Reg, bool, KVal)> {
        let KVal::Tup(mut parts) = v else {
            return unsupported("(index, value) elements expected");
        };
        if parts.len() != 2 {
            return unsupported("(index, value) elements expected");
        }
        let (Some(value), Some(idx)) = (parts.pop(), parts.pop()) else {
            return unsupported("(index, value) elements expected");
        };
        let idx = idx.reg()?.clone();
        if !idx.ty.is_int() {
            return unsupported("a non-integer scatter index");
        }
        let signed = idx.ty.is_signed_int();
        Ok((self.widen_index(k, &idx), signed, value))
    }

    fn scatter(
        &mut self,
        s: &Stmt,
        soac: &Soac,
        op: Option<&Lambda>,
        dst: VarId,
        steps: &mut Vec<Step>,
    ) -> R<()> {
        let Some(elem_ty) = self.ty(s.var).elem() else {
            return unsupported("scatter without a sequence type");
        };
        let ls = leaves(elem_ty)?;
        let origin = origin_of(&soac.kind);
        let dlen = Count::Len {
            var: var(dst),
            path: Vec::new(),
        };
        let scheme = op.map(|op| combine_scheme(op, elem_ty, &ls));
        let outs: Vec<u32> = match &scheme {
            // `bool` leaves combined by atomics on their containing 32-bit word: the buffer
            // is rounded up to whole words, so that word is always inside the allocation.
            Some(Combine::Atomic(_) | Combine::Cas) => ls
                .iter()
                .map(|&l| {
                    let (elem, count) = if l == Scalar::Bool {
                        (Scalar::U32, Count::CeilDiv(Box::new(dlen.clone()), 4))
                    } else {
                        (l, dlen.clone())
                    };
                    self.alloc_leaves(&[elem], &count, steps)[0]
                })
                .collect(),
            _ => self.alloc_leaves(&ls, &dlen, steps),
        };
        let lock = matches!(scheme, Some(Combine::Lock))
            .then(|| self.alloc_leaves(&[Scalar::U32], &dlen, steps)[0]);
        for (j, (&t, &l)) in outs.iter().zip(&ls).enumerate() {
            steps.push(Step::Copy {
                src: Buf::Seq {
                    var: var(dst),
                    path: Vec::new(),
                    leaf: j as u32,
                },
                dst: Buf::Temp(t),
                elem: l,
                count: dlen.clone(),
            });
        }
        let what = if op.is_some() {
            "scatter_reduce"
        } else {
            "scatter"
        };
        let (mut k, c) = self.new_kernel(what);
        let lambdas: Vec<&Lambda> = std::iter::once(&soac.elem).chain(op).collect();
        let mut env = self.bind_captures(&mut k, &lambdas)?;
        let n = k.param(Scalar::U64, KArg::Count(Count::Var(var(soac.len))));
        let dl = k.param(Scalar::U64, KArg::Count(dlen.clone()));
        let ptrs = Self::temp_ptrs(&mut k, &outs);
        let lock = lock.map(|t| Self::temp_ptrs(&mut k, &[t])[0].clone());
        let (i, stride, top, cont, end) = self.grid_stride_head(&mut k, &c, &n);
        let ctx = Ctx {
            key: i.clone(),
            fail: Some(cont.clone()),
        };
        let e = self.elem(&mut k, &c, &mut env, &soac.elem, &i, &ctx)?;
        let (idx, signed, vals) = self.pair(&mut k, e)?;
        let key = k.reg(Scalar::U64);
        k.ins(format!("add.s64 {key}, {n}, {i}"));
        let ctx2 = Ctx {
            key,
            fail: Some(cont.clone()),
        };
        let bad = k.reg(Scalar::Bool);
        k.ins(format!("setp.ge.u64 {bad}, {idx}, {dl}"));
        self.check(
            &mut k,
            &c,
            &ctx2,
            &bad,
            SiteKind::IndexOutOfRange,
            origin,
            s.span.0,
            signed,
            &idx,
            &dl,
        );
        match op {
            None => {
                for (r, p) in vals.iter().zip(&ptrs) {
                    self.store(&mut k, p, &idx, r);
                }
            }
            Some(op) => {
                let op_ctx = Ctx {
                    key: ctx2.key.clone(),
                    fail: None,
                };
                match &scheme {
                    Some(Combine::Atomic(names)) => {
                        for (((r, p), name), &l) in vals.iter().zip(&ptrs).zip(names).zip(&ls) {
                            let addr = Self::addr(&mut k, p, &idx, l);
                            Self::atomic_leaf(&mut k, &addr, r, name)?;
                        }
                    }
                    Some(Combine::Cas) => {
                        let [v] = vals.as_slice() else {
                            return unsupported("a CAS loop on a tuple (internal)");
                        };
                        let addr = Self::addr(&mut k, &ptrs[0], &idx, v.ty);
                        self.cas_combine(&mut k, &c, &mut env, op, &addr, v, &op_ctx)?;
                    }
                    _ => {
                        let Some(lock) = &lock else {
                            return unsupported("a scatter_reduce without its locks (internal)");
                        };
                        let target = Locked {
                            ptrs: &ptrs,
                            lock,
                            idx: &idx,
                            elem_ty,
                        };
                        self.locked_combine(&mut k, &c, &mut env, op, &target, &vals, &op_ctx)?;
                    }
                }
            }
        }
        Self::loop_tail(&mut k, &i, &stride, &top, &cont, &end);
        let args = k.args.clone();
        let kid = self.push_kernel(k);
        let n_count = Count::Var(var(soac.len));
        let per_block = u64::from(self.bsize());
        steps.push(self.stride_launch(kid, &n_count, per_block, args));
        steps.push(Step::CheckErrors);
        steps.push(Self::bind_flat(s.var, elem_ty, outs, dlen));
        Ok(())
    }

    /// `red.global.<name>` of leaf `r` into the slot at `addr` (a [`leaf_atomic`] name).
    /// A `bool` slot is a byte of the 32-bit word at `addr & !3` (the buffer is rounded
    /// up to whole words): `or`/`xor` set/flip the byte's low bit when `r` holds, `and`
    /// clears the byte when it does not.
    fn atomic_leaf(k: &mut Kernel, addr: &Reg, r: &Reg, name: &str) -> R<()> {
        let Some(atom) = leaf_atomic(name, r.ty) else {
            return unsupported(format!("no atomic `{name}` on {} (internal)", r.ty));
        };
        if r.ty != Scalar::Bool {
            k.ins(format!("red.global.{atom} [{addr}], {r}"));
            return Ok(());
        }
        let (word, shift) = Self::byte_in_word(k, addr);
        let bits = k.reg(Scalar::U32);
        let guard = if atom.starts_with("and") {
            k.ins(format!("shl.b32 {bits}, 255, {shift}"));
            k.ins(format!("not.b32 {bits}, {bits}"));
            format!("@!{r}")
        } else {
            k.ins(format!("shl.b32 {bits}, 1, {shift}"));
            format!("@{r}")
        };
        k.ins(format!("{guard} red.global.{atom} [{word}], {bits}"));
        Ok(())
    }

    /// The 32-bit word holding the byte at `addr`, and the byte's bit offset in it.
    fn byte_in_word(k: &mut Kernel, addr: &Reg) -> (Reg, Reg) {
        let word = k.reg(Scalar::U64);
        k.ins(format!("and.b64 {word}, {addr}, -4"));
        let (low, shift) = (k.reg(Scalar::U32), k.reg(Scalar::U32));
        k.ins(format!("cvt.u32.u64 {low}, {addr}"));
        k.ins(format!("and.b32 {low}, {low}, 3"));
        k.ins(format!("shl.b32 {shift}, {low}, 3"));
        (word, shift)
    }

    /// `slot = op(slot, v)` at `addr` by a compare-and-swap loop with the operator
    /// inline: on the value's own 32/64-bit word, or for a `bool` on the byte inside its
    /// 32-bit word (the other bytes kept as the swap found them).
    #[allow(clippy::too_many_arguments)]
    fn cas_combine(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        op: &Lambda,
        addr: &Reg,
        v: &Reg,
        ctx: &Ctx,
    ) -> R<()> {
        let byte = (v.ty == Scalar::Bool).then(|| Self::byte_in_word(k, addr));
        let raw = if width(v.ty) == 64 {
            Scalar::U64
        } else {
            Scalar::U32
        };
        let b = bits(raw);
        let at = byte.as_ref().map_or(addr, |(w, _)| w);
        let old = k.reg(raw);
        k.ins(format!("ld.global.{} {old}, [{at}]", mem(raw)));
        let (lp, done) = (k.label(), k.label());
        k.place(&lp);
        let cur = k.reg(v.ty);
        match &byte {
            Some((_, shift)) => {
                let t = k.reg(Scalar::U32);
                k.ins(format!("shr.b32 {t}, {old}, {shift}"));
                k.ins(format!("and.b32 {t}, {t}, 255"));
                k.ins(format!("setp.ne.u32 {cur}, {t}, 0"));
            }
            None => k.ins(format!("mov.{b} {cur}, {old}")),
        }
        env.insert(op.params[0], KVal::S(cur));
        env.insert(op.params[1], KVal::S(v.clone()));
        let new = self.block(k, c, env, &op.body, ctx)?;
        let new = new.reg()?.clone();
        let nw = k.reg(raw);
        match &byte {
            Some((_, shift)) => {
                let (keep, put) = (k.reg(Scalar::U32), k.reg(Scalar::U32));
                k.ins(format!("shl.b32 {keep}, 255, {shift}"));
                k.ins(format!("not.b32 {keep}, {keep}"));
                k.ins(format!("and.b32 {keep}, {old}, {keep}"));
                k.ins(format!("selp.u32 {put}, 1, 0, {new}"));
                k.ins(format!("shl.b32 {put}, {put}, {shift}"));
                k.ins(format!("or.b32 {nw}, {keep}, {put}"));
            }
            None => k.ins(format!("mov.{b} {nw}, {new}")),
        }
        let prev = k.reg(raw);
        k.ins(format!("atom.global.cas.{b} {prev}, [{at}], {old}, {nw}"));
        let same = k.reg(Scalar::Bool);
        k.ins(format!("setp.eq.{} {same}, {prev}, {old}", arith(raw)));
        k.ins(format!("@{same} bra {done}"));
        k.ins(format!("mov.{b} {old}, {prev}"));
        k.ins(format!("bra {lp}"));
        k.place(&done);
        Ok(())
    }

    /// `slot = op(slot, vals)` under the slot's lock (a `u32` per destination element,
    /// zeroed by the host): taken with `atom.acquire.gpu` compare-and-swap 0 -> 1, the
    /// leaves read, combined and written, then released with `st.release.gpu`. The
    /// critical section is the taken-lock side of the branch and the retry comes after
    /// it in the code, so a thread never waits for a lock held by a lane of its own warp
    /// that cannot run: on hardware without independent scheduling, and on dpl-sim, the
    /// lanes that got their lock run to the release before the others try again
    /// (sm_70+'s independent thread scheduling needs no such care). A thread holds at
    /// most one lock and never waits while holding it, so the loop always ends.
    #[allow(clippy::too_many_arguments)]
    fn locked_combine(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        op: &Lambda,
        t: &Locked<'_>,
        vals: &[Reg],
        ctx: &Ctx,
    ) -> R<()> {
        let la = Self::addr(k, t.lock, t.idx, Scalar::U32);
        let (lp, retry, done) = (k.label(), k.label(), k.label());
        k.place(&lp);
        let (got, one) = (k.reg(Scalar::U32), k.reg(Scalar::U32));
        k.ins(format!("mov.u32 {one}, 1"));
        k.ins(format!(
            "atom.acquire.gpu.global.cas.b32 {got}, [{la}], 0, {one}"
        ));
        let busy = k.reg(Scalar::Bool);
        k.ins(format!("setp.ne.u32 {busy}, {got}, 0"));
        k.ins(format!("@{busy} bra {retry}"));
        let addrs: Vec<Reg> = t
            .ptrs
            .iter()
            .zip(vals)
            .map(|(p, v)| Self::addr(k, p, t.idx, v.ty))
            .collect();
        let olds: Vec<Reg> = addrs
            .iter()
            .zip(vals)
            .map(|(a, v)| Self::ld(k, "global", &a.name, v.ty))
            .collect();
        env.insert(op.params[0], unflatten(t.elem_ty, &mut olds.into_iter())?);
        env.insert(
            op.params[1],
            unflatten(t.elem_ty, &mut vals.iter().cloned())?,
        );
        let new = self.block(k, c, env, &op.body, ctx)?.flatten()?;
        for (a, r) in addrs.iter().zip(&new) {
            Self::st(k, "global", &a.name, r);
        }
        let zero = k.reg(Scalar::U32);
        k.ins(format!("mov.u32 {zero}, 0"));
        k.ins(format!("st.release.gpu.global.u32 [{la}], {zero}"));
        k.ins(format!("bra {done}"));
        k.place(&retry);
        k.ins(format!("bra {lp}"));
        k.place(&done);
        Ok(())
    }

    /// `permute`: (1) each target index is checked and claims its slot (`owner`: the
    /// largest `!i` wins); (2) each element whose claim held is written at its target, and
    /// a lost claim is the duplicate error. Rows (elements that are sequences) take two
    /// more steps: pass (2) writes each row's length at its target, an exclusive scan of
    /// those gives the result's offsets, and (3) each row is written at the offset of its
    /// target.
    fn permute(&mut self, s: &Stmt, soac: &Soac, steps: &mut Vec<Step>) -> R<()> {
        let Some(elem_ty) = self.ty(s.var).elem() else {
            return unsupported("permute without a sequence type");
        };
        let row = match elem_ty {
            Type::Seq(row) => Some(&**row),
            _ => None,
        };
        let ls = leaves(row.unwrap_or(elem_ty))?;
        let origin = origin_of(&soac.kind);
        let n_count = Count::Var(var(soac.len));
        let owner = self.alloc_leaves(&[Scalar::U64], &n_count, steps)[0];
        // The elements, or the rows' lengths.
        let outs = match row {
            None => self.alloc_leaves(&ls, &n_count, steps),
            Some(_) => self.alloc_leaves(&[Scalar::U64], &n_count, steps),
        };
        let per_block = u64::from(self.bsize());
        for pass in 0..2 {
            let (mut k, c) = self.new_kernel(match (pass, row) {
                (0, _) => "permute_owners",
                (_, None) => "permute",
                (_, Some(_)) => "permute_row_sizes",
            });
            let mut env = self.bind_captures(&mut k, &[&soac.elem])?;
            let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
            let own = Self::temp_ptrs(&mut k, &[owner])[0].clone();
            let ptrs = if pass == 1 {
                Self::temp_ptrs(&mut k, &outs)
            } else {
                Vec::new()
            };
            let (i, stride, top, cont, end) = self.grid_stride_head(&mut k, &c, &n);
            let ctx = Ctx {
                key: i.clone(),
                fail: Some(cont.clone()),
            };
            let e = self.elem(&mut k, &c, &mut env, &soac.elem, &i, &ctx)?;
            let (idx, signed, value) = self.target(&mut k, e)?;
            let key = k.reg(Scalar::U64);
            k.ins(format!("add.s64 {key}, {n}, {i}"));
            let ctx2 = Ctx {
                key,
                fail: Some(cont.clone()),
            };
            let bad = k.reg(Scalar::Bool);
            k.ins(format!("setp.ge.u64 {bad}, {idx}, {n}"));
            let ni = k.reg(Scalar::U64);
            k.ins(format!("not.b64 {ni}, {i}"));
            let oa = Self::addr(&mut k, &own, &idx, Scalar::U64);
            if pass == 0 {
                self.check(
                    &mut k,
                    &c,
                    &ctx2,
                    &bad,
                    SiteKind::IndexOutOfRange,
                    origin,
                    s.span.0,
                    signed,
                    &idx,
                    &n,
                );
                k.ins(format!("red.global.max.u64 [{oa}], {ni}"));
            } else {
                k.ins(format!("@{bad} bra {cont}"));
                let o = k.reg(Scalar::U64);
                k.ins(format!("ld.global.u64 {o}, [{oa}]"));
                let dup = k.reg(Scalar::Bool);
                k.ins(format!("setp.ne.u64 {dup}, {o}, {ni}"));
                self.check(
                    &mut k,
                    &c,
                    &ctx2,
                    &dup,
                    SiteKind::Duplicate,
                    origin,
                    s.span.0,
                    false,
                    &idx,
                    &n,
                );
                let vals = match row {
                    None => value.flatten()?,
                    Some(_) => vec![self.seq_len(&mut k, &c, &mut env, &value, &ctx)?],
                };
                for (r, p) in vals.iter().zip(&ptrs) {
                    self.store(&mut k, p, &idx, r);
                }
            }
            Self::loop_tail(&mut k, &i, &stride, &top, &cont, &end);
            let args = k.args.clone();
            let kid = self.push_kernel(k);
            steps.push(self.stride_launch(kid, &n_count, per_block, args));
        }
        steps.push(Step::CheckErrors);
        let Some(row) = row else {
            steps.push(Self::bind_flat(s.var, elem_ty, outs, n_count));
            return Ok(());
        };

        // Rows: every target is valid and claimed once (the errors were checked).
        let (offs, total) = self.offsets(outs[0], &n_count, steps)?;
        let values = self.alloc_leaves(&ls, &Count::Temp(total), steps);
        let (mut k, c) = self.new_kernel("permute_row_fill");
        let mut env = self.bind_captures(&mut k, &[&soac.elem])?;
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let op = Self::temp_ptrs(&mut k, &[offs])[0].clone();
        let ptrs = Self::temp_ptrs(&mut k, &values);
        let (i, stride, top, cont, end) = self.grid_stride_head(&mut k, &c, &n);
        let ctx = Ctx {
            key: i.clone(),
            fail: Some(cont.clone()),
        };
        let e = self.elem(&mut k, &c, &mut env, &soac.elem, &i, &ctx)?;
        let (idx, _, value) = self.target(&mut k, e)?;
        let a = Self::addr(&mut k, &op, &idx, Scalar::U64);
        let base = k.reg(Scalar::U64);
        k.ins(format!("ld.global.u64 {base}, [{a}]"));
        self.write_seq(&mut k, &c, &mut env, &value, &ptrs, &base, &ctx)?;
        Self::loop_tail(&mut k, &i, &stride, &top, &cont, &end);
        let args = k.args.clone();
        let kid = self.push_kernel(k);
        steps.push(self.stride_launch(kid, &n_count, per_block, args));
        steps.push(Step::CheckErrors);
        steps.push(Step::BindSeq {
            var: var(s.var),
            elem: Type::seq(row.clone()),
            bufs: values.into_iter().map(Buf::Temp).collect(),
            len: n_count,
            offs: Some(Buf::Temp(offs)),
        });
        Ok(())
    }

    // -----------------------------------------------------------------------------------
    // Block-level building blocks

    /// A `none` optional value with zeroed leaves.
    fn none(&mut self, k: &mut Kernel, ls: &[Scalar]) -> Opt {
        let has = self.pconst(k, false);
        let v = ls.iter().map(|&s| self.zero(k, s)).collect();
        Opt { has, v }
    }

    fn zero(&mut self, k: &mut Kernel, s: Scalar) -> Reg {
        let r = k.reg(s);
        match s {
            Scalar::Bool => k.ins(format!("setp.ne.u32 {r}, 0, 0")),
            Scalar::F32 | Scalar::F64 => {
                k.ins(format!("mov.{} {r}, {}", arith(s), float_imm(s, 0.0)))
            }
            _ => k.ins(format!("mov.{} {r}, 0", bits(s))),
        }
        r
    }

    fn pconst(&mut self, k: &mut Kernel, b: bool) -> Reg {
        let r = k.reg(Scalar::Bool);
        k.ins(format!(
            "setp.{}.u32 {r}, 0, 0",
            if b { "eq" } else { "ne" }
        ));
        r
    }

    fn mov(k: &mut Kernel, d: &Reg, s: &Reg) {
        if d.name != s.name {
            k.ins(format!("mov.{} {d}, {s}", bits(d.ty)));
        }
    }

    fn mov_opt(k: &mut Kernel, d: &Opt, s: &Opt) {
        Self::mov(k, &d.has, &s.has);
        for (a, b) in d.v.iter().zip(&s.v) {
            Self::mov(k, a, b);
        }
    }

    /// `d = c ? a : b`
    fn select(k: &mut Kernel, d: &Reg, c: &Reg, a: &Reg, b: &Reg) {
        if d.ty == Scalar::Bool {
            let (t1, t2, nc) = (
                k.reg(Scalar::Bool),
                k.reg(Scalar::Bool),
                k.reg(Scalar::Bool),
            );
            k.ins(format!("and.pred {t1}, {c}, {a}"));
            k.ins(format!("not.pred {nc}, {c}"));
            k.ins(format!("and.pred {t2}, {nc}, {b}"));
            k.ins(format!("or.pred {d}, {t1}, {t2}"));
        } else {
            let t = if d.ty.is_float() {
                arith(d.ty)
            } else {
                bits(d.ty)
            };
            k.ins(format!("selp.{t} {d}, {a}, {b}, {c}"));
        }
    }

    /// Combines two elements.
    #[allow(clippy::too_many_arguments)]
    fn combine(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        comb: Comb<'_>,
        a: &[Reg],
        b: &[Reg],
        ctx: &Ctx,
    ) -> R<Vec<Reg>> {
        match comb {
            Comb::AddU64 => {
                let r = k.reg(Scalar::U64);
                k.ins(format!("add.s64 {r}, {}, {}", a[0], b[0]));
                Ok(vec![r])
            }
            Comb::Op(op, ty) => {
                env.insert(op.params[0], unflatten(ty, &mut a.iter().cloned())?);
                env.insert(op.params[1], unflatten(ty, &mut b.iter().cloned())?);
                self.block(k, c, env, &op.body, ctx)?.flatten()
            }
        }
    }

    /// `a ⊕ b` where a missing operand is the identity.
    #[allow(clippy::too_many_arguments)]
    fn opt_combine(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        comb: Comb<'_>,
        a: &Opt,
        b: &Opt,
        ctx: &Ctx,
    ) -> R<Opt> {
        let v: Vec<Reg> = a.v.iter().map(|r| k.reg(r.ty)).collect();
        for ((d, x), y) in v.iter().zip(&a.v).zip(&b.v) {
            Self::select(k, d, &a.has, x, y);
        }
        let both = k.reg(Scalar::Bool);
        k.ins(format!("and.pred {both}, {}, {}", a.has, b.has));
        let skip = k.label();
        k.ins(format!("@!{both} bra {skip}"));
        let r = self.combine(k, c, env, comb, &a.v, &b.v, ctx)?;
        for (d, s) in v.iter().zip(&r) {
            Self::mov(k, d, s);
        }
        k.place(&skip);
        let has = k.reg(Scalar::Bool);
        k.ins(format!("or.pred {has}, {}, {}", a.has, b.has));
        Ok(Opt { has, v })
    }

    /// `shfl.sync.up` of one register by `d` lanes.
    fn shfl_up(k: &mut Kernel, r: &Reg, d: u32) -> Reg {
        Self::shfl(k, r, "up", d, 0)
    }

    /// `shfl.sync.<mode>` of one register (`bool`s through a 32-bit word, 64-bit values
    /// as two halves); `cl` is the clamp operand.
    fn shfl(k: &mut Kernel, r: &Reg, mode: &str, d: impl std::fmt::Display, cl: u32) -> Reg {
        let out = k.reg(r.ty);
        match width(r.ty) {
            1 => {
                let (a, b) = (k.reg(Scalar::U32), k.reg(Scalar::U32));
                k.ins(format!("selp.u32 {a}, 1, 0, {r}"));
                k.ins(format!(
                    "shfl.sync.{mode}.b32 {b}, {a}, {d}, {cl}, 0xffffffff"
                ));
                k.ins(format!("setp.ne.u32 {out}, {b}, 0"));
            }
            32 => {
                let (a, b) = (k.reg(Scalar::U32), k.reg(Scalar::U32));
                k.ins(format!("mov.b32 {a}, {r}"));
                k.ins(format!(
                    "shfl.sync.{mode}.b32 {b}, {a}, {d}, {cl}, 0xffffffff"
                ));
                k.ins(format!("mov.b32 {out}, {b}"));
            }
            _ => {
                let (lo, hi, lo2, hi2) = (
                    k.reg(Scalar::U32),
                    k.reg(Scalar::U32),
                    k.reg(Scalar::U32),
                    k.reg(Scalar::U32),
                );
                k.ins(format!("mov.b64 {{{lo}, {hi}}}, {r}"));
                k.ins(format!(
                    "shfl.sync.{mode}.b32 {lo2}, {lo}, {d}, {cl}, 0xffffffff"
                ));
                k.ins(format!(
                    "shfl.sync.{mode}.b32 {hi2}, {hi}, {d}, {cl}, 0xffffffff"
                ));
                k.ins(format!("mov.b64 {out}, {{{lo2}, {hi2}}}"));
            }
        }
        out
    }

    fn shfl_opt(k: &mut Kernel, x: &Opt, mode: &str, d: u32) -> Opt {
        Opt {
            has: Self::shfl(k, &x.has, mode, d, 31),
            v: x.v.iter().map(|r| Self::shfl(k, r, mode, d, 31)).collect(),
        }
    }

    /// Combines one optional value per lane over the group of a split inner reduction:
    /// a butterfly over the warp, then lane 0's result to every lane (so all lanes go on
    /// with the same value whatever the operator), or the block's total.
    #[allow(clippy::too_many_arguments)]
    fn group_combine(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        comb: Comb<'_>,
        x: &Opt,
        block: bool,
        ctx: &Ctx,
    ) -> R<Opt> {
        let cur = Opt {
            has: k.reg(Scalar::Bool),
            v: x.v.iter().map(|r| k.reg(r.ty)).collect(),
        };
        Self::mov_opt(k, &cur, x);
        for d in [16, 8, 4, 2, 1] {
            let y = Self::shfl_opt(k, &cur, "bfly", d);
            let n = self.opt_combine(k, c, env, comb, &cur, &y, ctx)?;
            Self::mov_opt(k, &cur, &n);
        }
        let warp_total = Self::shfl_opt(k, &cur, "idx", 0);
        if !block {
            return Ok(warp_total);
        }
        // The block: lane 0 of each warp puts its total in shared memory; every thread
        // combines the totals of the block's warps (%ntid.x / 32 of them) in order.
        let arrays = self.warp_values_to_shared(k, c, &warp_total, 0);
        let ls: Vec<Scalar> = cur.v.iter().map(|r| r.ty).collect();
        let total = self.none(k, &ls);
        let nw = k.reg(Scalar::U32);
        k.ins(format!("mov.u32 {nw}, %ntid.x"));
        k.ins(format!("shr.u32 {nw}, {nw}, 5"));
        let w = k.reg(Scalar::U32);
        k.ins(format!("mov.u32 {w}, 0"));
        let (top, end) = (k.label(), k.label());
        k.place(&top);
        let done = k.reg(Scalar::Bool);
        k.ins(format!("setp.ge.u32 {done}, {w}, {nw}"));
        k.ins(format!("@{done} bra.uni {end}"));
        let t = Self::warp_partial(k, &arrays, &ls, &w);
        let nt = self.opt_combine(k, c, env, comb, &total, &t, ctx)?;
        Self::mov_opt(k, &total, &nt);
        k.ins(format!("add.s32 {w}, {w}, 1"));
        k.ins(format!("bra.uni {top}"));
        k.place(&end);
        k.ins("bar.sync 0");
        Ok(total)
    }

    /// Reduces the optional values `v` of a warp's lanes towards lane 0 in place (a
    /// `shfl.sync.down` tree): lane 0 ends with the combination of all 32 in lane order
    /// (`reversed`: higher lanes first). The other lanes hold partial combinations.
    #[allow(clippy::too_many_arguments)]
    fn warp_reduce_down(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        comb: Comb<'_>,
        v: &Opt,
        reversed: bool,
        ctx: &Ctx,
    ) -> R<()> {
        for d in [1u32, 2, 4, 8, 16] {
            let y = Self::shfl_opt(k, v, "down", d);
            let inside = k.reg(Scalar::Bool);
            k.ins(format!("setp.lt.u32 {inside}, {}, {}", c.lane, 32 - d));
            k.ins(format!("and.pred {}, {}, {inside}", y.has, y.has));
            let n = if reversed {
                self.opt_combine(k, c, env, comb, &y, v, ctx)?
            } else {
                self.opt_combine(k, c, env, comb, v, &y, ctx)?
            };
            Self::mov_opt(k, v, &n);
        }
        Ok(())
    }

    /// The combination, in thread order, of one optional value per thread of the block,
    /// valid in thread 0 (the other threads hold partial values): each warp reduces
    /// towards its lane 0 ([`Gen::warp_reduce_down`]), the warp totals go through shared
    /// memory, and warp 0 reduces them the same way. Every thread of the block must call
    /// it (it has a barrier).
    fn block_reduce(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        comb: Comb<'_>,
        x: &Opt,
        ctx: &Ctx,
    ) -> R<Opt> {
        let cur = Opt {
            has: k.reg(Scalar::Bool),
            v: x.v.iter().map(|r| k.reg(r.ty)).collect(),
        };
        Self::mov_opt(k, &cur, x);
        self.warp_reduce_down(k, c, env, comb, &cur, false, ctx)?;
        if self.warps() == 1 {
            return Ok(cur);
        }
        let arrays = self.warp_values_to_shared(k, c, &cur, 0);
        let skip = k.label();
        let w0 = k.reg(Scalar::Bool);
        k.ins(format!("setp.eq.u32 {w0}, {}, 0", c.warp));
        k.ins(format!("@!{w0} bra.uni {skip}"));
        // Warp 0: lane l takes warp l's total (none past the block's warps).
        let ls: Vec<Scalar> = cur.v.iter().map(|r| r.ty).collect();
        let mine = k.reg(Scalar::Bool);
        k.ins(format!("setp.lt.u32 {mine}, {}, {}", c.lane, self.warps()));
        let t = self.none(k, &ls);
        let none_here = k.label();
        k.ins(format!("@!{mine} bra {none_here}"));
        let got = Self::warp_partial(k, &arrays, &ls, &c.lane);
        Self::mov_opt(k, &t, &got);
        k.place(&none_here);
        self.warp_reduce_down(k, c, env, comb, &t, false, ctx)?;
        Self::mov_opt(k, &cur, &t);
        k.place(&skip);
        Ok(cur)
    }

    /// An inclusive scan in lane order of the optional values `v` of a warp's lanes, in
    /// place (`shfl.sync.up` steps of 1, 2, 4, 8 and 16 lanes).
    fn warp_scan_up(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        comb: Comb<'_>,
        v: &Opt,
        ctx: &Ctx,
    ) -> R<()> {
        let mut d = 1;
        while d < 32 {
            let y = Opt {
                has: Self::shfl_up(k, &v.has, d),
                v: v.v.iter().map(|r| Self::shfl_up(k, r, d)).collect(),
            };
            let p = k.reg(Scalar::Bool);
            k.ins(format!("setp.lt.u32 {p}, {}, {d}", c.lane));
            let skip = k.label();
            k.ins(format!("@{p} bra {skip}"));
            let n = self.opt_combine(k, c, env, comb, &y, v, ctx)?;
            Self::mov_opt(k, v, &n);
            k.place(&skip);
            d *= 2;
        }
        Ok(())
    }

    /// An ordered scan of one value per lane over the warp (`shfl.sync.up`): returns this
    /// lane's inclusive and exclusive prefixes within the warp. Every lane of the warp must
    /// call it.
    fn warp_scan(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        comb: Comb<'_>,
        x: &Opt,
        ctx: &Ctx,
    ) -> R<(Opt, Opt)> {
        let cur = Opt {
            has: k.reg(Scalar::Bool),
            v: x.v.iter().map(|r| k.reg(r.ty)).collect(),
        };
        Self::mov_opt(k, &cur, x);
        self.warp_scan_up(k, c, env, comb, &cur, ctx)?;
        // Exclusive within the warp.
        let ex = Opt {
            has: Self::shfl_up(k, &cur.has, 1),
            v: cur.v.iter().map(|r| Self::shfl_up(k, r, 1)).collect(),
        };
        let nz = k.reg(Scalar::Bool);
        k.ins(format!("setp.ne.u32 {nz}, {}, 0", c.lane));
        k.ins(format!("and.pred {}, {}, {nz}", ex.has, ex.has));
        Ok((cur, ex))
    }

    /// An ordered scan of one value per thread over the block: returns the inclusive and
    /// exclusive prefixes of this thread and the block's total (every thread gets it).
    /// Warp scans with shuffles; the warp totals go through shared memory, where warp 0
    /// scans them the same way; each thread then reads the prefix of the warps before its
    /// own and the total. Every thread of the block must call it (it has barriers).
    fn block_scan(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        comb: Comb<'_>,
        x: &Opt,
        ctx: &Ctx,
    ) -> R<(Opt, Opt, Opt)> {
        let (cur, ex) = self.warp_scan(k, c, env, comb, x, ctx)?;
        let ls: Vec<Scalar> = cur.v.iter().map(|r| r.ty).collect();
        let warps = self.warps();
        if warps == 1 {
            let total = Opt {
                has: k.reg(Scalar::Bool),
                v: ls.iter().map(|&s| k.reg(s)).collect(),
            };
            let t = Self::shfl_opt(k, &cur, "idx", 31);
            Self::mov_opt(k, &total, &t);
            return Ok((cur, ex, total));
        }
        // Warp totals (the last lane's inclusive values) to shared memory; warp 0 scans
        // them in place (lane l: warp l).
        let arrays = self.warp_values_to_shared(k, c, &cur, 31);
        let skip = k.label();
        let w0 = k.reg(Scalar::Bool);
        k.ins(format!("setp.eq.u32 {w0}, {}, 0", c.warp));
        k.ins(format!("@!{w0} bra.uni {skip}"));
        let mine = k.reg(Scalar::Bool);
        k.ins(format!("setp.lt.u32 {mine}, {}, {warps}", c.lane));
        let t = self.none(k, &ls);
        let none_here = k.label();
        k.ins(format!("@!{mine} bra {none_here}"));
        let got = Self::warp_partial(k, &arrays, &ls, &c.lane);
        Self::mov_opt(k, &t, &got);
        k.place(&none_here);
        self.warp_scan_up(k, c, env, comb, &t, ctx)?;
        let no_write = k.label();
        k.ins(format!("@!{mine} bra {no_write}"));
        let off = k.reg(Scalar::U32);
        k.ins(format!("shl.b32 {off}, {}, 3", c.lane));
        for (r, a) in std::iter::once(&t.has).chain(&t.v).zip(&arrays) {
            let addr = k.reg(Scalar::U32);
            k.ins(format!("mov.u32 {addr}, {a}"));
            k.ins(format!("add.s32 {addr}, {addr}, {off}"));
            Self::st(k, "shared", &addr.name, r);
        }
        k.place(&no_write);
        k.place(&skip);
        k.ins("bar.sync 0");
        // The warps before this one (none for warp 0), and all of them.
        let prefix = self.none(k, &ls);
        let first = k.reg(Scalar::Bool);
        k.ins(format!("setp.eq.u32 {first}, {}, 0", c.warp));
        let no_prefix = k.label();
        k.ins(format!("@{first} bra {no_prefix}"));
        let wp = k.reg(Scalar::U32);
        k.ins(format!("sub.s32 {wp}, {}, 1", c.warp));
        let p = Self::warp_partial(k, &arrays, &ls, &wp);
        Self::mov_opt(k, &prefix, &p);
        k.place(&no_prefix);
        let last = k.reg(Scalar::U32);
        k.ins(format!("mov.u32 {last}, {}", warps - 1));
        let total = Self::warp_partial(k, &arrays, &ls, &last);
        // The arrays are written again if this code runs again (a loop).
        k.ins("bar.sync 0");
        let incl = self.opt_combine(k, c, env, comb, &prefix, &cur, ctx)?;
        let excl = self.opt_combine(k, c, env, comb, &prefix, &ex, ctx)?;
        Ok((incl, excl, total))
    }

    /// Thread 0 stores `v` at `idx` of the leaf buffers `ptrs` (and its flag in `has`
    /// unless `has` has an empty name).
    fn store_if_thread0(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        ptrs: &[Reg],
        has: &Reg,
        idx: &Reg,
        v: &Opt,
    ) {
        let p = k.reg(Scalar::Bool);
        k.ins(format!("setp.ne.u32 {p}, {}, 0", c.tid));
        let skip = k.label();
        k.ins(format!("@{p} bra {skip}"));
        for (r, ptr) in v.v.iter().zip(ptrs) {
            self.store(k, ptr, idx, r);
        }
        if !has.name.is_empty() {
            self.store(k, has, idx, &v.has);
        }
        k.place(&skip);
    }

    fn load_opt(
        &mut self,
        k: &mut Kernel,
        ptrs: &[Reg],
        has: &Reg,
        idx: &Reg,
        ls: &[Scalar],
    ) -> Opt {
        let v = self.load_leaves(k, ptrs, idx, ls);
        let a = Self::addr(k, has, idx, Scalar::Bool);
        let h = Self::ld(k, "global", &a.name, Scalar::Bool);
        Opt { has: h, v }
    }

    fn load_leaves(&mut self, k: &mut Kernel, ptrs: &[Reg], idx: &Reg, ls: &[Scalar]) -> Vec<Reg> {
        ptrs.iter()
            .zip(ls)
            .map(|(p, &s)| {
                let a = Self::addr(k, p, idx, s);
                Self::ld(k, "global", &a.name, s)
            })
            .collect()
    }

    // -----------------------------------------------------------------------------------
    // Memory

    /// The 32-bit address of element `i` of the shared array `array` of `bytes`-byte
    /// elements.
    fn shared_at(k: &mut Kernel, array: &str, i: &Reg, bytes: u64) -> Reg {
        let a = k.reg(Scalar::U32);
        k.ins(format!("mov.u32 {a}, {array}"));
        k.ins(format!("mad.lo.u32 {a}, {i}, {bytes}, {a}"));
        a
    }

    /// `base + idx * size_of(ty)`
    fn addr(k: &mut Kernel, base: &Reg, idx: &Reg, ty: Scalar) -> Reg {
        let a = k.reg(Scalar::U64);
        let sz = size_of(ty);
        if sz == 1 {
            k.ins(format!("add.s64 {a}, {base}, {idx}"));
        } else {
            k.ins(format!("mad.lo.s64 {a}, {idx}, {sz}, {base}"));
        }
        a
    }

    /// Lane `lane` of every warp stores its optional value `v` (the flag, then each leaf)
    /// into the warp's 8-byte slot of fresh per-warp shared arrays, then the block waits
    /// (`bar.sync`); returns the arrays (read back with [`Gen::warp_partial`]). The
    /// block-level step shared by the block reduce ([`Gen::group_combine`]) and the block
    /// scan ([`Gen::block_scan`]).
    fn warp_values_to_shared(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        v: &Opt,
        lane: u32,
    ) -> Vec<String> {
        let arrays: Vec<String> = (0..=v.v.len())
            .map(|_| k.shared(self.warps() * 8))
            .collect();
        let off = k.reg(Scalar::U32);
        k.ins(format!("shl.b32 {off}, {}, 3", c.warp));
        let writer = k.reg(Scalar::Bool);
        k.ins(format!("setp.eq.u32 {writer}, {}, {lane}", c.lane));
        let skip = k.label();
        k.ins(format!("@!{writer} bra {skip}"));
        for (r, a) in std::iter::once(&v.has).chain(&v.v).zip(&arrays) {
            let addr = k.reg(Scalar::U32);
            k.ins(format!("mov.u32 {addr}, {a}"));
            k.ins(format!("add.s32 {addr}, {addr}, {off}"));
            Self::st(k, "shared", &addr.name, r);
        }
        k.place(&skip);
        k.ins("bar.sync 0");
        arrays
    }

    /// Loads warp `w`'s optional partial (the "has value" flag and one value per leaf of
    /// types `ls`) from the per-warp shared arrays `arrays` (8-byte slots).
    fn warp_partial<A: std::fmt::Display>(
        k: &mut Kernel,
        arrays: &[A],
        ls: &[Scalar],
        w: &Reg,
    ) -> Opt {
        let woff = k.reg(Scalar::U32);
        k.ins(format!("shl.b32 {woff}, {w}, 3"));
        let mut got = Vec::new();
        for (ty, a) in std::iter::once(Scalar::Bool)
            .chain(ls.iter().copied())
            .zip(arrays)
        {
            let addr = k.reg(Scalar::U32);
            k.ins(format!("mov.u32 {addr}, {a}"));
            k.ins(format!("add.s32 {addr}, {addr}, {woff}"));
            got.push(Self::ld(k, "shared", &addr.name, ty));
        }
        Opt {
            has: got[0].clone(),
            v: got[1..].to_vec(),
        }
    }

    fn ld(k: &mut Kernel, space: &str, addr: &str, ty: Scalar) -> Reg {
        if ty == Scalar::Bool {
            let t = k.reg(Scalar::U32);
            k.ins(format!("ld.{space}.u8 {t}, [{addr}]"));
            let p = k.reg(Scalar::Bool);
            k.ins(format!("setp.ne.u32 {p}, {t}, 0"));
            p
        } else {
            let r = k.reg(ty);
            k.ins(format!("ld.{space}.{} {r}, [{addr}]", mem(ty)));
            r
        }
    }

    fn st(k: &mut Kernel, space: &str, addr: &str, r: &Reg) {
        if r.ty == Scalar::Bool {
            let t = k.reg(Scalar::U32);
            k.ins(format!("selp.u32 {t}, 1, 0, {r}"));
            k.ins(format!("st.{space}.u8 [{addr}], {t}"));
        } else {
            k.ins(format!("st.{space}.{} [{addr}], {r}", mem(r.ty)));
        }
    }

    fn store(&mut self, k: &mut Kernel, base: &Reg, idx: &Reg, r: &Reg) {
        let a = Self::addr(k, base, idx, r.ty);
        Self::st(k, "global", &a.name, r);
    }

    // -----------------------------------------------------------------------------------
    // Checks

    /// If `bad` holds: records the failure at `site` for the current key and jumps to the
    /// context's fail label.
    #[allow(clippy::too_many_arguments)]
    fn check(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        ctx: &Ctx,
        bad: &Reg,
        kind: SiteKind,
        origin: Origin,
        span: u32,
        signed: bool,
        a: &Reg,
        b: &Reg,
    ) {
        let site = self.sites.len() as u64;
        self.sites.push(ErrorSite {
            kind,
            origin,
            span,
            signed,
        });
        let ok = k.label();
        k.ins(format!("@!{bad} bra {ok}"));
        self.record(k, c, ctx, site, a, b);
        if let Some(l) = &ctx.fail {
            k.ins(format!("bra {l}"));
        }
        k.place(&ok);
    }

    /// Records a failure: the error record's first word keeps the bitwise negation of the
    /// smallest failing key (`atom.max`, 0 = no failure). In report mode (the report key
    /// parameter is that negation), the thread with that key also writes the site and the
    /// two values; the first site it reaches wins (`atom.cas` on the site word).
    fn record(&mut self, k: &mut Kernel, c: &Common, ctx: &Ctx, site: u64, a: &Reg, b: &Reg) {
        let nk = k.reg(Scalar::U64);
        k.ins(format!("not.b64 {nk}, {}", ctx.key));
        k.ins(format!("red.global.max.u64 [{}], {nk}", c.err));
        let other = k.reg(Scalar::Bool);
        k.ins(format!("setp.ne.u64 {other}, {nk}, {}", c.report));
        let skip = k.label();
        k.ins(format!("@{other} bra {skip}"));
        let (sid, old) = (k.reg(Scalar::U64), k.reg(Scalar::U64));
        k.ins(format!("mov.u64 {sid}, {}", site + 1));
        k.ins(format!(
            "atom.global.cas.b64 {old}, [{}+8], 0, {sid}",
            c.err
        ));
        let taken = k.reg(Scalar::Bool);
        k.ins(format!("setp.ne.u64 {taken}, {old}, 0"));
        k.ins(format!("@{taken} bra {skip}"));
        k.ins(format!("st.global.u64 [{}+16], {a}", c.err));
        k.ins(format!("st.global.u64 [{}+24], {b}", c.err));
        k.place(&skip);
    }

    /// An index register of any integer type as `u64` (sign-extended when signed, so a
    /// negative index is out of range of every length).
    fn widen_index(&mut self, k: &mut Kernel, r: &Reg) -> Reg {
        match r.ty {
            Scalar::I32 => {
                let d = k.reg(Scalar::U64);
                k.ins(format!("cvt.s64.s32 {d}, {r}"));
                d
            }
            Scalar::U32 => {
                let d = k.reg(Scalar::U64);
                k.ins(format!("cvt.u64.u32 {d}, {r}"));
                d
            }
            _ => Reg {
                ty: Scalar::U64,
                ..r.clone()
            },
        }
    }

    // -----------------------------------------------------------------------------------
    // The scalar language inside kernels

    fn block(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        b: &Block,
        ctx: &Ctx,
    ) -> R<KVal> {
        for s in &b.stmts {
            let v = self.stmt(k, c, env, s, ctx)?;
            env.insert(s.var, v);
        }
        match env.get(&b.result) {
            Some(v) => Ok(v.clone()),
            None => unsupported(format!(
                "variable %{} is not available in the kernel",
                b.result.index()
            )),
        }
    }

    fn get(env: &Env, v: VarId) -> R<KVal> {
        match env.get(&v) {
            Some(x) => Ok(x.clone()),
            None => unsupported(format!(
                "variable %{} is not available in the kernel",
                v.index()
            )),
        }
    }

    fn stmt(&mut self, k: &mut Kernel, c: &Common, env: &mut Env, s: &Stmt, ctx: &Ctx) -> R<KVal> {
        let ty = self.ty(s.var);
        let span = s.span.0;
        Ok(match &s.expr {
            Expr::Const(cst) => {
                let Some(sc) = ty.scalar() else {
                    return unsupported("a non-scalar constant");
                };
                KVal::S(Self::constant(k, sc, *cst)?)
            }
            Expr::Var(v) => Self::get(env, *v)?,
            Expr::Unary(op, v) => {
                let x = Self::get(env, *v)?.reg()?.clone();
                KVal::S(Self::unary(k, *op, &x))
            }
            Expr::Binary(op, a, b) => {
                let x = Self::get(env, *a)?.reg()?.clone();
                let y = Self::get(env, *b)?.reg()?.clone();
                KVal::S(self.binary(k, c, ctx, *op, &x, &y, span)?)
            }
            Expr::Cast(v, to) => {
                let x = Self::get(env, *v)?.reg()?.clone();
                KVal::S(Self::cast(k, &x, *to))
            }
            Expr::Tuple(vs) => KVal::Tup(vs.iter().map(|v| Self::get(env, *v)).collect::<R<_>>()?),
            Expr::Field(v, n) => match Self::get(env, *v)? {
                KVal::Tup(vs) if (*n as usize) < vs.len() => vs[*n as usize].clone(),
                _ => return unsupported("a field of a non-tuple (internal)"),
            },
            Expr::If(cv, t, e) if matches!(ty, Type::Seq(_)) => KVal::Cond(Rc::new(CondSeq {
                cond: Self::get(env, *cv)?.reg()?.clone(),
                then: t.clone(),
                els: e.clone(),
                path: Vec::new(),
            })),
            Expr::If(cv, t, e) => {
                // A tuple holding sequences: its scalars are chosen here, each sequence
                // where it is consumed (a `KVal::Cond` selecting it in the branches).
                let cond = Self::get(env, *cv)?.reg()?.clone();
                let seqs = ty.holds_seq();
                let ls = scalar_leaves(ty, seqs)?;
                let res: Vec<Reg> = ls.iter().map(|&l| k.reg(l)).collect();
                let (els, end) = (k.label(), k.label());
                k.ins(format!("@!{cond} bra {els}"));
                let tv = self.block(k, c, env, t, ctx)?.scalars(seqs)?;
                for (d, s) in res.iter().zip(&tv) {
                    Self::mov(k, d, s);
                }
                k.ins(format!("bra {end}"));
                k.place(&els);
                let ev = self.block(k, c, env, e, ctx)?.scalars(seqs)?;
                for (d, s) in res.iter().zip(&ev) {
                    Self::mov(k, d, s);
                }
                k.place(&end);
                unflatten_with(ty, &mut res.into_iter(), &mut Vec::new(), &mut |p| {
                    Ok(KVal::Cond(Rc::new(CondSeq {
                        cond: cond.clone(),
                        then: t.clone(),
                        els: e.clone(),
                        path: p.to_vec(),
                    })))
                })?
            }
            Expr::Index {
                seq,
                index,
                checked,
            } => {
                let i = Self::get(env, *index)?.reg()?.clone();
                if !i.ty.is_int() {
                    return unsupported("a non-integer index");
                }
                let i64r = self.widen_index(k, &i);
                let sv = Self::get(env, *seq)?;
                if let Some(origin) = checked {
                    let len = self.seq_len(k, c, env, &sv, ctx)?;
                    let bad = k.reg(Scalar::Bool);
                    k.ins(format!("setp.ge.u64 {bad}, {i64r}, {len}"));
                    self.check(
                        k,
                        c,
                        ctx,
                        &bad,
                        SiteKind::IndexOutOfRange,
                        *origin,
                        span,
                        i.ty.is_signed_int(),
                        &i64r,
                        &len,
                    );
                }
                let pre = self
                    .prefetched
                    .as_ref()
                    .and_then(|(at, rows)| (at.name == i64r.name).then(|| rows.get(seq)).flatten());
                match (pre, &sv) {
                    (
                        Some((start, stop)),
                        KVal::Seq {
                            ptrs,
                            elem,
                            offs: Some(_),
                            layout,
                            ..
                        },
                    ) => {
                        let (start, stop) = (start.clone(), stop.clone());
                        let step = layout.as_ref().map(|l| Self::row_step(k, l));
                        self.row_view(k, ptrs, elem, &start, &stop, step)?
                    }
                    _ => self.index(k, c, env, &sv, &i64r, ctx)?,
                }
            }
            Expr::Len(v) => {
                let sv = Self::get(env, *v)?;
                let only_lengths = !self.other_use.contains(&s.var);
                match &sv {
                    KVal::Lazy(l) | KVal::Cur { of: l, .. }
                        if only_lengths && matches!(l.soac.kind, SoacKind::Filter { .. }) =>
                    {
                        // Only used as the length of combinators, which stream the filter
                        // instead of counting it first.
                        KVal::unit()
                    }
                    _ => KVal::S(self.seq_len(k, c, env, &sv, ctx)?),
                }
            }
            Expr::Math(m, vs) => {
                let xs = vs
                    .iter()
                    .map(|v| Self::get(env, *v)?.reg().cloned())
                    .collect::<R<Vec<_>>>()?;
                KVal::S(self.math(k, *m, &xs)?)
            }
            Expr::Assert(a) => {
                match a {
                    Assertion::InBounds { origin, index, len } => {
                        let i = Self::get(env, *index)?.reg()?.clone();
                        let l = Self::get(env, *len)?.reg()?.clone();
                        let i64r = self.widen_index(k, &i);
                        let bad = k.reg(Scalar::Bool);
                        k.ins(format!("setp.ge.u64 {bad}, {i64r}, {l}"));
                        self.check(
                            k,
                            c,
                            ctx,
                            &bad,
                            SiteKind::IndexOutOfRange,
                            *origin,
                            span,
                            i.ty.is_signed_int(),
                            &i64r,
                            &l,
                        );
                    }
                    Assertion::EqLen { origin, a, b } => {
                        let x = Self::get(env, *a)?.reg()?.clone();
                        let y = Self::get(env, *b)?.reg()?.clone();
                        let bad = k.reg(Scalar::Bool);
                        k.ins(format!("setp.ne.u64 {bad}, {x}, {y}"));
                        self.check(
                            k,
                            c,
                            ctx,
                            &bad,
                            SiteKind::LengthMismatch,
                            *origin,
                            span,
                            false,
                            &x,
                            &y,
                        );
                    }
                    Assertion::NonEmpty { origin, len } => {
                        let l = Self::get(env, *len)?.reg()?.clone();
                        let bad = k.reg(Scalar::Bool);
                        k.ins(format!("setp.eq.u64 {bad}, {l}, 0"));
                        self.check(
                            k,
                            c,
                            ctx,
                            &bad,
                            SiteKind::Empty,
                            *origin,
                            span,
                            false,
                            &l,
                            &l,
                        );
                    }
                    Assertion::IndicesInRange { .. } => {
                        return unsupported("the indices_in_range assertion inside a kernel");
                    }
                }
                KVal::unit()
            }
            Expr::Soac(inner) => self.inner_soac(k, c, env, s, inner, ctx)?,
            Expr::Prim { prim, .. } => {
                return unsupported(format!("primitive `{}` at the Prim level", prim.name()));
            }
        })
    }

    /// A combinator inside an element function: a reduction runs as a sequential loop in
    /// the thread; a sequence is not built, it stays [`KVal::Lazy`] and is streamed by
    /// its consumers.
    fn inner_soac(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        s: &Stmt,
        soac: &Soac,
        ctx: &Ctx,
    ) -> R<KVal> {
        if soac.elem.params.len() != 1 {
            return unsupported("an element function without exactly one index parameter");
        }
        if matches!(soac.kind, SoacKind::Sort | SoacKind::SortByKey) {
            return self.sort_in_thread(k, c, env, s, soac, ctx);
        }
        let (op, init) = match &soac.kind {
            SoacKind::Reduce { op, init } => (op, init),
            _ => {
                let Some(elem_ty) = self.ty(s.var).elem() else {
                    return unsupported("a sequence combinator without a sequence type");
                };
                let lazy = Rc::new(LazySeq {
                    var: s.var,
                    soac: soac.clone(),
                    elem_ty: elem_ty.clone(),
                    span: s.span.0,
                });
                let scattered = matches!(
                    soac.kind,
                    SoacKind::Scatter { .. } | SoacKind::ScatterReduce { .. } | SoacKind::Permute
                );
                if scattered
                    && self.operand_use.contains(&s.var)
                    && let Some(per) = self.host_soac_len(&lazy.soac)
                {
                    return self.materialize(k, c, env, &lazy, per, ctx);
                }
                return Ok(KVal::Lazy(lazy));
            }
        };
        let ty = self.ty(s.var);
        let ls = leaves(ty)?;
        let comb = Comb::Op(op, ty);
        if self.split.is_some() && self.streamed_source(env, soac).is_none() {
            return self.split_reduce(k, c, env, s, soac, op, *init, ctx);
        }
        let acc = self.none(k, &ls);
        if let Some(iv) = init {
            let v = Self::get(env, *iv)?.flatten()?;
            for (d, s) in acc.v.iter().zip(&v) {
                Self::mov(k, d, s);
            }
            k.ins(format!("setp.eq.u32 {}, 0, 0", acc.has));
        }
        let accc = acc.clone();
        self.for_each(k, c, env, soac, ctx, &mut |g, k, env, _j, e| {
            let e = e.flatten()?;
            let t = g.pconst(k, true);
            let n = g.opt_combine(k, c, env, comb, &accc, &Opt { has: t, v: e }, ctx)?;
            Self::mov_opt(k, &accc, &n);
            Ok(())
        })?;
        if init.is_none() {
            let bad = k.reg(Scalar::Bool);
            k.ins(format!("not.pred {bad}, {}", acc.has));
            let zero = k.reg(Scalar::U64);
            k.ins(format!("mov.u64 {zero}, 0"));
            self.check(
                k,
                c,
                ctx,
                &bad,
                SiteKind::Empty,
                origin_of(&soac.kind),
                s.span.0,
                false,
                &zero,
                &zero,
            );
        }
        unflatten(ty, &mut acc.v.into_iter())
    }

    /// An inner reduction split across the threads of a group (warp or block): thread
    /// `t` takes elements `t, t + width, ...`, then the group combines the partial
    /// results. A failed check in one thread marks it; after the loop the group agrees
    /// (`vote` / `bar.red`) and leaves the element together.
    #[allow(clippy::too_many_arguments)]
    fn split_reduce(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        s: &Stmt,
        soac: &Soac,
        op: &Lambda,
        init: Option<VarId>,
        ctx: &Ctx,
    ) -> R<KVal> {
        let Some(sp) = self.split.take() else {
            return unsupported("a split reduction outside a group (internal)");
        };
        let ty = self.ty(s.var);
        let ls = leaves(ty)?;
        let comb = Comb::Op(op, ty);
        let width = k.reg(Scalar::U64);
        if sp.block {
            let nt = k.reg(Scalar::U32);
            k.ins(format!("mov.u32 {nt}, %ntid.x"));
            k.ins(format!("cvt.u64.u32 {width}, {nt}"));
        } else {
            k.ins(format!("mov.u64 {width}, 32"));
        }
        let len = Self::get(env, soac.len)?.reg()?.clone();
        let acc = self.none(k, &ls);
        let failed = self.pconst(k, false);
        let j = k.reg(Scalar::Usize);
        k.ins(format!("cvt.u64.u32 {j}, {}", sp.lane));
        // In report mode every thread takes all the elements in order, so the failure
        // recorded first is the first in sequential order (the value is not used then).
        let rep = k.reg(Scalar::Bool);
        k.ins(format!("setp.ne.u64 {rep}, {}, 0", c.report));
        k.ins(format!("selp.u64 {j}, 0, {j}, {rep}"));
        k.ins(format!("selp.u64 {width}, 1, {width}, {rep}"));
        let (top, next, flag, end) = (k.label(), k.label(), k.label(), k.label());
        k.place(&top);
        let p = k.reg(Scalar::Bool);
        k.ins(format!("setp.ge.u64 {p}, {j}, {len}"));
        k.ins(format!("@{p} bra {end}"));
        let ictx = Ctx {
            key: ctx.key.clone(),
            fail: Some(flag.clone()),
        };
        let body = (|| {
            let e = self.elem(k, c, env, &soac.elem, &j, &ictx)?.flatten()?;
            let t = self.pconst(k, true);
            let n = self.opt_combine(k, c, env, comb, &acc, &Opt { has: t, v: e }, &ictx)?;
            Self::mov_opt(k, &acc, &n);
            Ok(())
        })();
        self.split = Some(sp.clone());
        body?;
        k.place(&next);
        k.ins(format!("add.s64 {j}, {j}, {width}"));
        k.ins(format!("bra {top}"));
        k.place(&flag);
        k.ins(format!("setp.eq.u32 {failed}, 0, 0"));
        k.ins(format!("bra {next}"));
        k.place(&end);
        let any = k.reg(Scalar::Bool);
        if sp.block {
            k.ins(format!("bar.red.or.pred {any}, 0, {failed}"));
        } else {
            k.ins(format!("vote.sync.any.pred {any}, {failed}, 0xffffffff"));
        }
        if let Some(l) = &ctx.fail {
            k.ins(format!("@{any} bra {l}"));
        }
        let op_ctx = Ctx {
            key: ctx.key.clone(),
            fail: None,
        };
        let combined = self.group_combine(k, c, env, comb, &acc, sp.block, &op_ctx)?;
        // In report mode each thread already has the whole reduction, in sequential order.
        let mut total = Opt {
            has: k.reg(Scalar::Bool),
            v: acc.v.iter().map(|r| k.reg(r.ty)).collect(),
        };
        Self::select(k, &total.has, &rep, &acc.has, &combined.has);
        for ((d, a), b) in total.v.iter().zip(&acc.v).zip(&combined.v) {
            Self::select(k, d, &rep, a, b);
        }
        match init {
            Some(iv) => {
                let v = Self::get(env, iv)?.flatten()?;
                let t = self.pconst(k, true);
                let first = Opt { has: t, v };
                total = self.opt_combine(k, c, env, comb, &first, &total, &op_ctx)?;
            }
            None => {
                let bad = k.reg(Scalar::Bool);
                k.ins(format!("not.pred {bad}, {}", total.has));
                let zero = k.reg(Scalar::U64);
                k.ins(format!("mov.u64 {zero}, 0"));
                self.check(
                    k,
                    c,
                    ctx,
                    &bad,
                    SiteKind::Empty,
                    origin_of(&soac.kind),
                    s.span.0,
                    false,
                    &zero,
                    &zero,
                );
            }
        }
        unflatten(ty, &mut total.v.into_iter())
    }

    /// Emits `if cond { f(then's sequence) } else { f(else's sequence) }` for a sequence an
    /// `if` chose: each branch's block is evaluated in its branch, then consumed by `f`.
    fn branch_seq(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        cs: &CondSeq,
        ctx: &Ctx,
        f: &mut dyn FnMut(&mut Self, &mut Kernel, &mut Env, KVal) -> R<()>,
    ) -> R<()> {
        let (els, end) = (k.label(), k.label());
        k.ins(format!("@!{} bra {els}", cs.cond));
        let v = self.block(k, c, env, &cs.then, ctx)?.at(&cs.path)?;
        f(self, k, env, v)?;
        k.ins(format!("bra {end}"));
        k.place(&els);
        let v = self.block(k, c, env, &cs.els, ctx)?.at(&cs.path)?;
        f(self, k, env, v)?;
        k.place(&end);
        Ok(())
    }

    /// The lazy sequence a combinator streams: the one whose length is its index space,
    /// when that sequence is lazy.
    fn streamed_source(&self, env: &Env, soac: &Soac) -> Option<(VarId, KVal)> {
        if let Some(src) = self.len_of.get(&soac.len)
            && let Some(v @ (KVal::Lazy(_) | KVal::Cur { .. })) = env.get(src)
        {
            return Some((*src, v.clone()));
        }
        // A lazy scan (or map) over the same index space read at the element's own index
        // (the pipeline gives `map(f, scan(..))` the scan's length, not `len` of it).
        let p0 = *soac.elem.params.first()?;
        soac.elem.body.stmts.iter().find_map(|st| match &st.expr {
            Expr::Index { seq, index, .. } if *index == p0 => match env.get(seq)? {
                v @ (KVal::Lazy(l) | KVal::Cur { of: l, .. })
                    if l.soac.len == soac.len
                        && matches!(
                            l.soac.kind,
                            SoacKind::Map | SoacKind::Scan { .. } | SoacKind::ExclusiveScan { .. }
                        ) =>
                {
                    Some((*seq, v.clone()))
                }
                _ => None,
            },
            _ => None,
        })
    }

    /// Runs `body(j, elem(j))` for every element of a combinator's index space, in order:
    /// a counted loop, or — when the index space is the length of a lazy sequence — inside
    /// the loop that produces that sequence (`j` is then the position in it).
    fn for_each(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        soac: &Soac,
        ctx: &Ctx,
        body: &mut Body<'_, 'f>,
    ) -> R<()> {
        if let Some(&src) = self.len_of.get(&soac.len)
            && let Some(KVal::Cond(cs)) = env.get(&src).cloned()
        {
            // Over the length of a sequence an `if` chose: the loop in each branch, over
            // that branch's sequence.
            let r = self.branch_seq(k, c, env, &cs, ctx, &mut |g, k, env, v| {
                env.insert(src, v);
                g.for_each(k, c, env, soac, ctx, body)
            });
            env.insert(src, KVal::Cond(cs));
            return r;
        }
        if let Some((src, saved)) = self.streamed_source(env, soac) {
            let of = match &saved {
                KVal::Lazy(l) | KVal::Cur { of: l, .. } => l.clone(),
                _ => return unsupported("a lazy sequence was expected (internal)"),
            };
            let r = self.stream(k, c, env, &of, ctx, &mut |g, k, env, j, e| {
                env.insert(
                    src,
                    KVal::Cur {
                        idx: j.clone(),
                        val: Box::new(e),
                        of: of.clone(),
                    },
                );
                let x = g.elem(k, c, env, &soac.elem, j, ctx)?;
                body(g, k, env, j, x)
            });
            env.insert(src, saved);
            return r;
        }
        let len = Self::get(env, soac.len)?.reg()?.clone();
        let j = k.reg(Scalar::Usize);
        k.ins(format!("mov.u64 {j}, 0"));
        let (top, end) = (k.label(), k.label());
        k.place(&top);
        let p = k.reg(Scalar::Bool);
        k.ins(format!("setp.ge.u64 {p}, {j}, {len}"));
        k.ins(format!("@{p} bra {end}"));
        let e = self.elem(k, c, env, &soac.elem, &j, ctx)?;
        body(self, k, env, &j, e)?;
        k.ins(format!("add.s64 {j}, {j}, 1"));
        k.ins(format!("bra {top}"));
        k.place(&end);
        Ok(())
    }

    /// Produces the elements of a lazy sequence in order: `body(position, element)`.
    fn stream(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        l: &Rc<LazySeq>,
        ctx: &Ctx,
        body: &mut Body<'_, 'f>,
    ) -> R<()> {
        let ety = &l.elem_ty;
        match &l.soac.kind {
            SoacKind::Map => self.for_each(k, c, env, &l.soac, ctx, body),
            SoacKind::Scan { op } | SoacKind::ExclusiveScan { op, .. } => {
                let ls = leaves(ety)?;
                let comb = Comb::Op(op, ety);
                let acc = self.none(k, &ls);
                let exclusive = match &l.soac.kind {
                    SoacKind::ExclusiveScan { init, .. } => {
                        let v = Self::get(env, *init)?.flatten()?;
                        for (d, s) in acc.v.iter().zip(&v) {
                            Self::mov(k, d, s);
                        }
                        k.ins(format!("setp.eq.u32 {}, 0, 0", acc.has));
                        true
                    }
                    _ => false,
                };
                self.for_each(k, c, env, &l.soac, ctx, &mut |g, k, env, j, e| {
                    let e = e.flatten()?;
                    if exclusive {
                        let cur = unflatten(ety, &mut acc.v.clone().into_iter())?;
                        body(g, k, env, j, cur)?;
                    }
                    let t = g.pconst(k, true);
                    let n = g.opt_combine(k, c, env, comb, &acc, &Opt { has: t, v: e }, ctx)?;
                    Self::mov_opt(k, &acc, &n);
                    if !exclusive {
                        // Copies, so the consumer sees this step's value even if it loops.
                        let cur: Vec<Reg> = acc.v.iter().map(|r| k.reg(r.ty)).collect();
                        for (d, s) in cur.iter().zip(&acc.v) {
                            Self::mov(k, d, s);
                        }
                        body(g, k, env, j, unflatten(ety, &mut cur.into_iter())?)?;
                    }
                    Ok(())
                })
            }
            SoacKind::Filter { pred } => {
                let cnt = k.reg(Scalar::Usize);
                k.ins(format!("mov.u64 {cnt}, 0"));
                self.for_each(k, c, env, &l.soac, ctx, &mut |g, k, env, _j, e| {
                    env.insert(pred.params[0], e.clone());
                    let keep = g.block(k, c, env, &pred.body, ctx)?.reg()?.clone();
                    let skip = k.label();
                    k.ins(format!("@!{keep} bra {skip}"));
                    let pos = k.reg(Scalar::Usize);
                    k.ins(format!("mov.u64 {pos}, {cnt}"));
                    body(g, k, env, &pos, e)?;
                    k.ins(format!("add.s64 {cnt}, {cnt}, 1"));
                    k.place(&skip);
                    Ok(())
                })
            }
            kind => unsupported(format!(
                "a nested `{}` used other than as the result of an element function, \
                 whose length is not known before the launch (read again, it is stored \
                 per thread when its length is bounded by a captured sequence's, a \
                 constant, a top-level `usize` or the longest row of a nested parameter, \
                 or derived from one by `map`, `scan`, `filter`, `gather`, `scatter` or `if`)",
                kind.name()
            )),
        }
    }

    /// The length of a sequence value (a filter is counted by a loop).
    fn seq_len(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        v: &KVal,
        ctx: &Ctx,
    ) -> R<Reg> {
        let l = match v {
            KVal::Seq { len, .. } => {
                return Ok(Reg {
                    ty: Scalar::Usize,
                    ..len.clone()
                });
            }
            KVal::Lazy(l) | KVal::Cur { of: l, .. } => l.clone(),
            KVal::Cond(cs) => {
                let n = k.reg(Scalar::Usize);
                self.branch_seq(k, c, env, cs, ctx, &mut |g, k, env, v| {
                    let m = g.seq_len(k, c, env, &v, ctx)?;
                    Self::mov(k, &n, &m);
                    Ok(())
                })?;
                return Ok(n);
            }
            _ => return unsupported("the length of a non-sequence (internal)"),
        };
        match &l.soac.kind {
            SoacKind::Scatter { dst } | SoacKind::ScatterReduce { dst, .. } => {
                let dv = Self::get(env, *dst)?;
                self.seq_len(k, c, env, &dv, ctx)
            }
            SoacKind::Map
            | SoacKind::Scan { .. }
            | SoacKind::ExclusiveScan { .. }
            | SoacKind::Permute => match self.streamed_source(env, &l.soac) {
                Some((_, src)) => self.seq_len(k, c, env, &src, ctx),
                None => Ok(Self::get(env, l.soac.len)?.reg()?.clone()),
            },
            _ => {
                let n = k.reg(Scalar::Usize);
                k.ins(format!("mov.u64 {n}, 0"));
                let saved = env.get(&l.var).cloned();
                self.stream(k, c, env, &l, ctx, &mut |_, k, _, _, _| {
                    k.ins(format!("add.s64 {n}, {n}, 1"));
                    Ok(())
                })?;
                if let Some(sv) = saved {
                    env.insert(l.var, sv);
                }
                Ok(n)
            }
        }
    }

    /// The row `start..stop` of a nested sequence whose leaves are at `ptrs`.
    fn row_view(
        &mut self,
        k: &mut Kernel,
        ptrs: &[Reg],
        elem: &Type,
        start: &Reg,
        stop: &Reg,
        step: Option<Reg>,
    ) -> R<KVal> {
        let Some(inner) = elem.elem() else {
            return unsupported("rows of a flat sequence (internal)");
        };
        let ls = leaves(inner)?;
        let len = k.reg(Scalar::Usize);
        k.ins(format!("sub.s64 {len}, {stop}, {start}"));
        let rows = ptrs
            .iter()
            .zip(&ls)
            .map(|(p, &l)| Self::addr(k, p, start, l))
            .collect();
        Ok(KVal::Seq {
            ptrs: rows,
            len,
            elem: inner.clone(),
            offs: None,
            layout: None,
            step,
        })
    }

    /// For a strided matrix (the layout's flag set), replaces the bounds of row `i` (`start`,
    /// `stop`, element positions in the leaves) with `i * rs` and `i * rs + cols`.
    fn strided_bounds(k: &mut Kernel, l: &RowLayout, i: &Reg, start: &Reg, stop: &Reg) {
        let (strided, _) = l.strided(k);
        let (rs, cols) = (l.load(k, 1), l.load(k, 3));
        let s = k.reg(Scalar::U64);
        k.ins(format!("mul.lo.u64 {s}, {i}, {rs}"));
        let e = k.reg(Scalar::U64);
        k.ins(format!("add.s64 {e}, {s}, {cols}"));
        k.ins(format!("selp.b64 {start}, {s}, {start}, {strided}"));
        k.ins(format!("selp.b64 {stop}, {e}, {stop}, {strided}"));
    }

    /// The distance between consecutive elements of a row: `cs` for a strided matrix, 1
    /// for rows found from offsets (the host passes either in field 2).
    fn row_step(k: &mut Kernel, l: &RowLayout) -> Reg {
        l.load(k, 2)
    }

    /// Element `i` (a `u64`, in range) of a sequence value.
    fn index(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        sv: &KVal,
        i: &Reg,
        ctx: &Ctx,
    ) -> R<KVal> {
        match sv {
            KVal::Seq {
                ptrs,
                elem,
                offs: None,
                step,
                ..
            } => {
                let ls = leaves(elem)?;
                let regs = match step {
                    Some(st) => {
                        let at = k.reg(Scalar::U64);
                        k.ins(format!("mul.lo.u64 {at}, {i}, {st}"));
                        self.load_leaves(k, ptrs, &at, &ls)
                    }
                    None => self.load_leaves(k, ptrs, i, &ls),
                };
                unflatten(elem, &mut regs.into_iter())
            }
            KVal::Seq {
                ptrs,
                elem,
                offs: Some(o),
                layout,
                ..
            } => {
                // A row: a view into the leaves, from offs[i] to offs[i + 1] (or strided).
                let a = Self::addr(k, o, i, Scalar::U64);
                let start = k.reg(Scalar::U64);
                let stop = k.reg(Scalar::U64);
                match layout {
                    Some(l) => {
                        k.ins(format!("mov.u64 {start}, 0"));
                        k.ins(format!("mov.u64 {stop}, 0"));
                        let (_, off) = l.strided(k);
                        k.ins(format!("@{off} ld.global.u64 {start}, [{a}]"));
                        k.ins(format!("@{off} ld.global.u64 {stop}, [{a}+8]"));
                        Self::strided_bounds(k, l, i, &start, &stop);
                        let step = Self::row_step(k, l);
                        self.row_view(k, ptrs, elem, &start, &stop, Some(step))
                    }
                    None => {
                        k.ins(format!("ld.global.u64 {start}, [{a}]"));
                        k.ins(format!("ld.global.u64 {stop}, [{a}+8]"));
                        self.row_view(k, ptrs, elem, &start, &stop, None)
                    }
                }
            }
            KVal::Cur { idx, val, .. } if idx.name == i.name => Ok((**val).clone()),
            KVal::Cond(cs) => {
                let Some(Type::Seq(elem)) = type_at(self.ty(cs.then.result), &cs.path) else {
                    return unsupported("an `if` of sequences without a sequence type (internal)");
                };
                let out: Vec<Reg> = leaves(elem)?.iter().map(|&s| k.reg(s)).collect();
                self.branch_seq(k, c, env, cs, ctx, &mut |g, k, env, v| {
                    let e = g.index(k, c, env, &v, i, ctx)?.flatten()?;
                    for (d, s) in out.iter().zip(&e) {
                        Self::mov(k, d, s);
                    }
                    Ok(())
                })?;
                unflatten(elem, &mut out.into_iter())
            }
            KVal::Lazy(l) | KVal::Cur { of: l, .. } => match &l.soac.kind {
                SoacKind::Map if self.streamed_source(env, &l.soac).is_none() => {
                    self.elem(k, c, env, &l.soac.elem.clone(), i, ctx)
                }
                _ => {
                    // Stream up to position i and keep that element.
                    let ls = leaves(&l.elem_ty)?;
                    let out: Vec<Reg> = ls.iter().map(|&s| k.reg(s)).collect();
                    let saved = env.get(&l.var).cloned();
                    self.stream(k, c, env, l, ctx, &mut |_, k, _, j, e| {
                        let e = e.flatten()?;
                        let hit = k.reg(Scalar::Bool);
                        k.ins(format!("setp.eq.u64 {hit}, {j}, {i}"));
                        for (d, s) in out.iter().zip(&e) {
                            Self::select(k, d, &hit, s, d);
                        }
                        Ok(())
                    })?;
                    if let Some(sv) = saved {
                        env.insert(l.var, sv);
                    }
                    unflatten(&l.elem_ty, &mut out.into_iter())
                }
            },
            _ => unsupported("indexing a non-sequence (internal)"),
        }
    }

    fn constant(k: &mut Kernel, s: Scalar, c: Const) -> R<Reg> {
        let r = k.reg(s);
        match (c, s) {
            (Const::Bool(b), Scalar::Bool) => k.ins(format!(
                "setp.{}.u32 {r}, 0, 0",
                if b { "eq" } else { "ne" }
            )),
            (Const::Float(x), Scalar::F32 | Scalar::F64) => {
                k.ins(format!("mov.{} {r}, {}", arith(s), float_imm(s, x)))
            }
            (Const::Int(i), s) if s.is_int() => {
                let bitsv = if width(s) == 32 {
                    (i as u32) as u64
                } else {
                    i as u64
                };
                k.ins(format!("mov.{} {r}, {bitsv:#x}", bits(s)))
            }
            _ => return unsupported(format!("the constant {c:?} of type {s}")),
        }
        Ok(r)
    }

    fn unary(k: &mut Kernel, op: UnOp, x: &Reg) -> Reg {
        let r = k.reg(x.ty);
        match (op, x.ty) {
            (UnOp::Not, Scalar::Bool) => k.ins(format!("not.pred {r}, {x}")),
            (UnOp::Not, s) => k.ins(format!("not.{} {r}, {x}", bits(s))),
            (UnOp::Neg, s) if s.is_float() => k.ins(format!("neg.{} {r}, {x}", arith(s))),
            (UnOp::Neg, s) => {
                let t = if width(s) == 32 { "s32" } else { "s64" };
                k.ins(format!("neg.{t} {r}, {x}"))
            }
        }
        r
    }

    #[allow(clippy::too_many_arguments)]
    fn binary(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        ctx: &Ctx,
        op: BinOp,
        a: &Reg,
        b: &Reg,
        span: u32,
    ) -> R<Reg> {
        use BinOp::*;
        let s = a.ty;
        if op.is_comparison() {
            let r = k.reg(Scalar::Bool);
            if s == Scalar::Bool {
                let x = k.reg(Scalar::Bool);
                let (na, nb) = (k.reg(Scalar::Bool), k.reg(Scalar::Bool));
                k.ins(format!("not.pred {na}, {a}"));
                k.ins(format!("not.pred {nb}, {b}"));
                match op {
                    Eq => {
                        k.ins(format!("xor.pred {x}, {a}, {b}"));
                        k.ins(format!("not.pred {r}, {x}"));
                    }
                    Ne => k.ins(format!("xor.pred {r}, {a}, {b}")),
                    Lt => k.ins(format!("and.pred {r}, {na}, {b}")),
                    Le => k.ins(format!("or.pred {r}, {na}, {b}")),
                    Gt => k.ins(format!("and.pred {r}, {a}, {nb}")),
                    _ => k.ins(format!("or.pred {r}, {a}, {nb}")),
                }
                return Ok(r);
            }
            let cmp = match op {
                Eq => "eq",
                Ne if s.is_float() => "neu",
                Ne => "ne",
                Lt => "lt",
                Le => "le",
                Gt => "gt",
                _ => "ge",
            };
            k.ins(format!("setp.{cmp}.{} {r}, {a}, {b}", arith(s)));
            return Ok(r);
        }
        if s == Scalar::Bool {
            let r = k.reg(Scalar::Bool);
            let name = match op {
                BitAnd => "and",
                BitOr => "or",
                BitXor => "xor",
                _ => return unsupported(format!("`{}` on bool", op.symbol())),
            };
            k.ins(format!("{name}.pred {r}, {a}, {b}"));
            return Ok(r);
        }
        if s.is_float() {
            let r = k.reg(s);
            let t = arith(s);
            match op {
                Add => k.ins(format!("add.rn.{t} {r}, {a}, {b}")),
                Sub => k.ins(format!("sub.rn.{t} {r}, {a}, {b}")),
                Mul => k.ins(format!("mul.rn.{t} {r}, {a}, {b}")),
                Div => k.ins(format!("div.rn.{t} {r}, {a}, {b}")),
                Rem => return Ok(crate::math::emit(k, Fun::Rem, &[a.clone(), b.clone()])),
                _ => return unsupported(format!("`{}` on floats", op.symbol())),
            }
            return Ok(r);
        }
        // Integers: wrapping.
        let r = k.reg(s);
        let t = arith(s);
        let bt = bits(s);
        match op {
            Add => k.ins(format!("add.{t} {r}, {a}, {b}")),
            Sub => k.ins(format!("sub.{t} {r}, {a}, {b}")),
            Mul => k.ins(format!("mul.lo.{t} {r}, {a}, {b}")),
            BitAnd => k.ins(format!("and.{bt} {r}, {a}, {b}")),
            BitOr => k.ins(format!("or.{bt} {r}, {a}, {b}")),
            BitXor => k.ins(format!("xor.{bt} {r}, {a}, {b}")),
            Shl | Shr => {
                let amt = k.reg(Scalar::U32);
                if width(b.ty) == 64 {
                    k.ins(format!("cvt.u32.u64 {amt}, {b}"));
                } else {
                    k.ins(format!("mov.b32 {amt}, {b}"));
                }
                k.ins(format!("and.b32 {amt}, {amt}, {}", width(s) - 1));
                if op == Shl {
                    k.ins(format!("shl.{bt} {r}, {a}, {amt}"));
                } else {
                    k.ins(format!("shr.{t} {r}, {a}, {amt}"));
                }
            }
            Div | Rem => {
                let z = k.reg(Scalar::Bool);
                k.ins(format!("setp.eq.{t} {z}, {b}, 0"));
                let zero = k.reg(Scalar::U64);
                k.ins(format!("mov.u64 {zero}, 0"));
                self.check(
                    k,
                    c,
                    ctx,
                    &z,
                    SiteKind::DivideByZero,
                    Origin::Index,
                    span,
                    false,
                    &zero,
                    &zero,
                );
                // A zero divisor (only reached when going on after a failure) divides by 1.
                let safe = k.reg(s);
                k.ins(format!("selp.{bt} {safe}, 1, {b}, {z}"));
                let name = if op == Div { "div" } else { "rem" };
                if s.is_signed_int() {
                    // MIN / -1 wraps to MIN, MIN % -1 is 0, as Rust's wrapping ops.
                    let m1 = k.reg(Scalar::Bool);
                    k.ins(format!("setp.eq.{t} {m1}, {safe}, -1"));
                    k.ins(format!("selp.{bt} {safe}, 1, {safe}, {m1}"));
                    let q = k.reg(s);
                    k.ins(format!("{name}.{t} {q}, {a}, {safe}"));
                    if op == Div {
                        let na = k.reg(s);
                        k.ins(format!("neg.{t} {na}, {a}"));
                        k.ins(format!("selp.{bt} {r}, {na}, {q}, {m1}"));
                    } else {
                        k.ins(format!("selp.{bt} {r}, 0, {q}, {m1}"));
                    }
                } else {
                    k.ins(format!("{name}.{t} {r}, {a}, {safe}"));
                }
            }
            _ => return unsupported(format!("`{}` on integers", op.symbol())),
        }
        Ok(r)
    }

    /// Rust's `as` between scalar types.
    fn cast(k: &mut Kernel, x: &Reg, to: Scalar) -> Reg {
        let from = x.ty;
        let r = k.reg(to);
        if from == to {
            Self::mov(k, &r, x);
            return r;
        }
        match (from, to) {
            (Scalar::Bool, t) if t.is_float() => k.ins(format!(
                "selp.{} {r}, {}, {}, {x}",
                arith(t),
                float_imm(t, 1.0),
                float_imm(t, 0.0)
            )),
            (Scalar::Bool, t) => k.ins(format!("selp.{} {r}, 1, 0, {x}", bits(t))),
            (f, Scalar::Bool) if f.is_float() => k.ins(format!(
                "setp.neu.{} {r}, {x}, {}",
                arith(f),
                float_imm(f, 0.0)
            )),
            (f, Scalar::Bool) => k.ins(format!("setp.ne.{} {r}, {x}, 0", arith(f))),
            (f, t) if f.is_int() && t.is_int() => match (width(f), width(t)) {
                (a, b) if a == b => k.ins(format!("mov.{} {r}, {x}", bits(t))),
                (32, 64) => k.ins(format!(
                    "cvt.{}.{} {r}, {x}",
                    if f.is_signed_int() { "s64" } else { "u64" },
                    arith(f)
                )),
                _ => k.ins(format!("cvt.u32.u64 {r}, {x}")),
            },
            (f, t) if f.is_int() => k.ins(format!("cvt.rn.{}.{} {r}, {x}", arith(t), arith(f))),
            (f, t) if t.is_int() => {
                // Rust's `as` gives 0 for NaN; an H100 gives `i32::MIN` for an `f64` NaN
                // converted to `s32` (seen on the device machine), so NaN is set apart.
                k.ins(format!("cvt.rzi.sat.{}.{} {r}, {x}", arith(t), arith(f)));
                let nan = k.reg(Scalar::Bool);
                k.ins(format!("setp.nan.{} {nan}, {x}, {x}", arith(f)));
                k.ins(format!("@{nan} mov.{} {r}, 0", bits(t)));
            }
            (Scalar::F32, Scalar::F64) => k.ins(format!("cvt.f64.f32 {r}, {x}")),
            _ => k.ins(format!("cvt.rn.f32.f64 {r}, {x}")),
        }
        r
    }

    fn math(&mut self, k: &mut Kernel, m: MathFn, xs: &[Reg]) -> R<Reg> {
        use MathFn::*;
        let Some(x) = xs.first() else {
            return unsupported("a math function without arguments");
        };
        if xs.len() != m.arity() {
            return unsupported(format!("`{}` with {} arguments", m.name(), xs.len()));
        }
        let s = x.ty;
        let t = arith(s);
        let r = k.reg(s);
        if !s.is_float() {
            match m {
                Abs if s.is_signed_int() => k.ins(format!("abs.{t} {r}, {x}")),
                Abs => Self::mov(k, &r, x),
                Min => k.ins(format!("min.{t} {r}, {x}, {}", xs[1])),
                Max => k.ins(format!("max.{t} {r}, {x}, {}", xs[1])),
                _ => return unsupported(format!("`{}` of an integer", m.name())),
            }
            return Ok(r);
        }
        match m {
            Abs => k.ins(format!("abs.{t} {r}, {x}")),
            Sqrt => k.ins(format!("sqrt.rn.{t} {r}, {x}")),
            Floor => k.ins(format!("cvt.rmi.{t}.{t} {r}, {x}")),
            Ceil => k.ins(format!("cvt.rpi.{t}.{t} {r}, {x}")),
            Trunc => k.ins(format!("cvt.rzi.{t}.{t} {r}, {x}")),
            Round => {
                // Half away from zero: trunc, then one step away when the dropped part is
                // at least a half (x - trunc(x) is exact).
                let tr = k.reg(s);
                k.ins(format!("cvt.rzi.{t}.{t} {tr}, {x}"));
                let d = k.reg(s);
                k.ins(format!("sub.rn.{t} {d}, {x}, {tr}"));
                k.ins(format!("abs.{t} {d}, {d}"));
                let ge = k.reg(Scalar::Bool);
                k.ins(format!("setp.ge.{t} {ge}, {d}, {}", float_imm(s, 0.5)));
                let one = k.reg(s);
                k.ins(format!("mov.{t} {one}, {}", float_imm(s, 1.0)));
                k.ins(format!("copysign.{t} {one}, {x}, {one}"));
                let up = k.reg(s);
                k.ins(format!("add.rn.{t} {up}, {tr}, {one}"));
                k.ins(format!("selp.{t} {r}, {up}, {tr}, {ge}"));
            }
            Min | Max => {
                // As Rust on x86-64 computes `x.min(y)` / `x.max(y)`: `y` when it is
                // strictly better or `x` is NaN, else `x` (so equal zeros give `x`).
                let y = &xs[1];
                let better = k.reg(Scalar::Bool);
                let cmp = if m == Min { "lt" } else { "gt" };
                k.ins(format!("setp.{cmp}.{t} {better}, {y}, {x}"));
                let nan = k.reg(Scalar::Bool);
                k.ins(format!("setp.nan.{t} {nan}, {x}, {x}"));
                k.ins(format!("or.pred {better}, {better}, {nan}"));
                k.ins(format!("selp.{t} {r}, {y}, {x}, {better}"));
            }
            MulAdd => k.ins(format!("fma.rn.{t} {r}, {x}, {}, {}", xs[1], xs[2])),
            Exp | Ln | Log2 | Sin | Cos | Tanh | Powf => {
                let f = match m {
                    Exp => Fun::Exp,
                    Ln => Fun::Ln,
                    Log2 => Fun::Log2,
                    Sin => Fun::Sin,
                    Cos => Fun::Cos,
                    Tanh => Fun::Tanh,
                    _ => Fun::Pow,
                };
                return Ok(crate::math::emit(k, f, xs));
            }
        }
        Ok(r)
    }
}

/// The destination of a locked `scatter_reduce` combination ([`Gen::locked_combine`]).
struct Locked<'a> {
    /// One pointer per leaf of the destination.
    ptrs: &'a [Reg],
    /// The lock array (a `u32` per destination element).
    lock: &'a Reg,
    /// The destination index (`u64`, in range).
    idx: &'a Reg,
    /// The element type.
    elem_ty: &'a Type,
}

/// How a top-level `scatter_reduce` combines a value into its destination slot.
#[derive(Clone, Debug, PartialEq)]
enum Combine {
    /// The operator is component-wise and each leaf's operation has an atomic form: one
    /// `red.global` per leaf (the names of [`leaf_atomic`]).
    Atomic(Vec<&'static str>),
    /// One scalar leaf: a compare-and-swap loop with the operator inline (on the
    /// containing 32-bit word for a `bool`).
    Cas,
    /// Anything else (tuples with a general operator): the slot's lock, taken with a
    /// compare-and-swap, the leaves read, combined and written while it is held.
    Lock,
}

/// Chooses how a `scatter_reduce` with operator `op` on elements of type `ty` (leaves
/// `ls`) combines.
fn combine_scheme(op: &Lambda, ty: &Type, ls: &[Scalar]) -> Combine {
    match leafwise_ops(op, ty) {
        Some(names)
            if names.len() == ls.len()
                && names
                    .iter()
                    .zip(ls)
                    .all(|(n, &l)| leaf_atomic(n, l).is_some()) =>
        {
            Combine::Atomic(names)
        }
        _ if ls.len() == 1 => Combine::Cas,
        _ => Combine::Lock,
    }
}

/// What a variable of a `scatter_reduce` operator is, for [`leafwise_ops`].
#[derive(Clone)]
enum OpNode {
    /// Part of operand `p` (0 or 1) of type `ty`, whose first leaf is leaf `at`.
    Part { p: usize, at: usize, ty: Type },
    /// `name(a.leaf, b.leaf)` of the two operands' leaf `at`.
    Leaf { name: &'static str, at: usize },
    /// A tuple of other nodes.
    Tup(Vec<OpNode>),
}

/// When `op` combines its operands component-wise, leaf `j` of the result being
/// `name_j(a.j, b.j)` for `add`, `&`, `|`, `^`, `min` or `max` (either operand order), the
/// name of each leaf's operation.
fn leafwise_ops(op: &Lambda, ty: &Type) -> Option<Vec<&'static str>> {
    let [p, q] = op.params.as_slice() else {
        return None;
    };
    let mut nodes: HashMap<VarId, OpNode> = HashMap::new();
    nodes.insert(
        *p,
        OpNode::Part {
            p: 0,
            at: 0,
            ty: ty.clone(),
        },
    );
    nodes.insert(
        *q,
        OpNode::Part {
            p: 1,
            at: 0,
            ty: ty.clone(),
        },
    );
    let scalar_part = |n: Option<&OpNode>| match n {
        Some(OpNode::Part {
            p,
            at,
            ty: Type::Scalar(_),
        }) => Some((*p, *at)),
        _ => None,
    };
    for st in &op.body.stmts {
        let node = match &st.expr {
            Expr::Var(x) => nodes.get(x)?.clone(),
            Expr::Field(x, n) => match nodes.get(x)? {
                OpNode::Part {
                    p,
                    at,
                    ty: Type::Tuple(ts),
                } => {
                    let before: usize = ts
                        .iter()
                        .take(*n as usize)
                        .map(|t| leaves(t).map(|l| l.len()))
                        .sum::<R<usize>>()
                        .ok()?;
                    OpNode::Part {
                        p: *p,
                        at: at + before,
                        ty: ts.get(*n as usize)?.clone(),
                    }
                }
                OpNode::Tup(xs) => xs.get(*n as usize)?.clone(),
                _ => return None,
            },
            Expr::Tuple(xs) => OpNode::Tup(
                xs.iter()
                    .map(|x| nodes.get(x).cloned())
                    .collect::<Option<_>>()?,
            ),
            e => {
                let (name, a, b) = match e {
                    Expr::Binary(bop, a, b) => (
                        match bop {
                            BinOp::Add => "add",
                            BinOp::BitAnd => "and",
                            BinOp::BitOr => "or",
                            BinOp::BitXor => "xor",
                            _ => return None,
                        },
                        *a,
                        *b,
                    ),
                    Expr::Math(m @ (MathFn::Min | MathFn::Max), xs) if xs.len() == 2 => {
                        (if *m == MathFn::Min { "min" } else { "max" }, xs[0], xs[1])
                    }
                    _ => return None,
                };
                let (pa, la) = scalar_part(nodes.get(&a))?;
                let (pb, lb) = scalar_part(nodes.get(&b))?;
                if pa == pb || la != lb {
                    return None;
                }
                OpNode::Leaf { name, at: la }
            }
        };
        nodes.insert(st.var, node);
    }
    let mut names = Vec::new();
    fn collect(n: &OpNode, names: &mut Vec<&'static str>) -> Option<()> {
        match n {
            OpNode::Leaf { name, at } if *at == names.len() => names.push(name),
            OpNode::Tup(xs) => xs.iter().try_for_each(|x| collect(x, names))?,
            _ => return None,
        }
        Some(())
    }
    collect(nodes.get(&op.body.result)?, &mut names)?;
    (leaves(ty).ok()?.len() == names.len()).then_some(names)
}

/// The `red.global` operation (type suffix included) doing `name` on one leaf of type
/// `ty` in memory, if there is one. A `bool` is a byte of a 32-bit word: `|`/`max` and
/// `^` become `or`/`xor` of its low bit, `&`/`min` an `and` clearing the byte (see
/// [`Gen::atomic_leaf`]).
fn leaf_atomic(name: &str, ty: Scalar) -> Option<String> {
    match (name, ty) {
        ("or" | "max", Scalar::Bool) => Some("or.b32".into()),
        ("and" | "min", Scalar::Bool) => Some("and.b32".into()),
        ("xor", Scalar::Bool) => Some("xor.b32".into()),
        (_, Scalar::Bool) => None,
        ("add", Scalar::F32) => Some("add.f32".into()),
        ("add", Scalar::F64) => Some("add.f64".into()),
        (_, s) if s.is_float() => None,
        ("add", s) => Some(format!(
            "add.{}",
            if width(s) == 32 { "u32" } else { "u64" }
        )),
        ("min" | "max", s) => Some(format!("{name}.{}", arith(s))),
        (_, s) => Some(format!("{name}.{}", bits(s))),
    }
}
