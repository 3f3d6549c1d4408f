//! From a fused function (Soac level) to PTX kernels and a launch plan.
//!
//! The top level of the function becomes the [`Plan`]: scalar statements and assertions
//! run on the host, each combinator ([`Soac`]) becomes one to three kernels plus the
//! allocations, copies and read-backs around them. Inside a kernel, the element function
//! and the operator lambdas are compiled inline: scalars live in registers, tuples are
//! flattened into one register per scalar leaf, captured sequences are kernel parameters
//! (one pointer per leaf plus the length), and a combinator nested inside an element
//! function runs as a loop in its thread, or across its warp or block under an inner
//! schedule.
//!
//! `README.md` next to this file describes the design: the files of this folder, the
//! kernels of each combinator and why. Run-time checks inside kernels (checked indexing,
//! division by zero, nested assertions, `scatter`/`permute` indices) never fault: they
//! record the failure in the error record and skip the element (see [`Gen::record`]).

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use dpl_core::ir::*;

use crate::plan::*;
use crate::ptx::{
    self, Addr, AtomOp, Cmp, Ins, Label, Reg, Rnd, Shfl, Space, Src, Sreg, Sym, Ty, arith, bits,
    const_table, mem, narrow, size_of, width,
};
use crate::{GpuProgram, KernelBlock, Unsupported};

mod checks;
mod collectives;
mod elem;
mod filter;
mod host;
mod kernel;
mod map;
mod memory;
mod permute;
mod reduce;
mod row_sort;
mod rows;
mod scan;
mod scatter;
mod share;
mod sort;
mod value;

pub(crate) use crate::layout::{leaves, scalar_leaves, slot_bytes};
use checks::{At, Ctx};
use elem::stream::{Lanes, flag};
use kernel::{ElemLoop, GroupLoop, Kernel};
use rows::Group;
pub use scan::tiles::scan_items;
use value::{
    Comb, CondSeq, Env, KVal, LazySeq, Opt, RowLayout, type_at, unflatten, unflatten_with,
};

/// Threads per block of a kernel with a thread per element (or a warp per element) when
/// neither the attribute nor register counts say otherwise (see [`crate::occupancy`]).
const DEFAULT_BLOCK: u32 = 256;

/// Rounds of a block's threads' worth of elements per block in the reduce-then-scan
/// offsets of ragged results (a tile is `ROUNDS * block` elements; scans and filters use
/// [`scan_items`] and warp chunks instead).
const ROUNDS: u64 = 4;

/// Threads per block of a `map` with a block per element when neither the attribute nor
/// register counts say otherwise.
const GROUP_BLOCK: u32 = 128;

type R<T> = Result<T, Unsupported>;

fn unsupported<T>(msg: impl Into<String>) -> R<T> {
    Err(Unsupported {
        message: msg.into(),
        too_large: None,
    })
}

/// Row bounds loaded ahead: nested sequence -> (start, end) of the current row.
type Prefetched = HashMap<VarId, (Reg, Reg)>;

/// The generator for one function.
struct Gen<'f> {
    f: &'f Function,
    /// What was asked for: the inner schedule, the block size, the scan algorithm.
    opts: crate::Options,
    /// Threads per block chosen from register counts, by combinator (its ordinal among the
    /// top-level combinators, see [`Gen::kinfo`]).
    tuned: &'f HashMap<u32, u32>,
    /// Kernel texts, in order.
    kernels: Vec<(String, String)>,
    /// Error sites.
    sites: Vec<ErrorSite>,
    /// Temporaries used.
    temps: u32,
    base: String,
    /// `len s` statements: the variable defined -> `s`.
    len_of: HashMap<VarId, VarId>,
    /// Variables used other than as the length of a combinator.
    other_use: HashSet<VarId>,
    /// Variables some statement reads (anywhere, lambdas included): a per-element
    /// `scatter`/`scatter_reduce`/`permute` among them is stored ([`Gen::materialize`]).
    operand_use: HashSet<VarId>,
    /// Sequences inside element functions stored rather than recomputed at each read
    /// ([`share`]).
    stored: HashSet<VarId>,
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
    /// The top-level statement being compiled: its primitive (if it is one) and span,
    /// recorded in its [`Step::Alloc`]s.
    stmt_origin: (Option<Origin>, u32),
    /// While compiling the fill kernel of a nested `map`: one flag (`bool`) per output
    /// element, for the duplicate check of a per-element `permute`.
    owner: Option<Reg>,
    /// Set while compiling the element function of a grouped `map` (a warp or a block per
    /// element), outside any split loop: the next inner reduction is split across the
    /// group's lanes.
    split: Option<Split>,
    /// Per kernel, in order: the ordinal of the combinator it belongs to, its block size
    /// and the default block size of its kind.
    kinfo: Vec<KernelInfo>,
    /// The ordinal of the next combinator.
    ordinal: u32,
    /// The combinator being compiled: its ordinal, block size and default block size.
    cur: KernelInfo,
    /// The span and the primitive of the top-level combinator being compiled (for
    /// [`Gen::check_size`]).
    cur_stmt: (u32, &'static str),
    /// Bytes of PTX of the kernels finished so far.
    done_bytes: usize,
}

/// Which combinator a kernel belongs to and its block size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct KernelInfo {
    /// The ordinal of the top-level combinator (kernels of one combinator share a block
    /// size: their tiles and temporaries are sized from it).
    group: u32,
    /// Threads per block.
    block: u32,
    /// The block size of the kernel's kind without attribute or register counts.
    default: u32,
    /// Said after the block size's reason: an asked inner schedule this kernel does not
    /// apply, or why the size is fixed.
    note: Option<&'static str>,
    /// The kernel works only with this block size (a radix sort's thread per digit
    /// value): neither the attribute nor the register counts change it.
    fixed: bool,
}

/// A group of threads working on one element together.
#[derive(Clone, Debug)]
struct Split {
    /// A whole block (else a warp).
    block: bool,
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

/// Adds the variables a top-level block (and the branches of its top-level `if`s, the
/// params and blocks of its top-level loops) defines.
fn host_block_vars(b: &Block, out: &mut HashSet<VarId>) {
    for st in &b.stmts {
        out.insert(st.var);
        match &st.expr {
            Expr::If(_, t, e) => {
                host_block_vars(t, out);
                host_block_vars(e, out);
            }
            Expr::Loop(l) => {
                out.extend(l.params.iter().copied());
                host_block_vars(&l.cond, out);
                host_block_vars(&l.body, out);
            }
            _ => {}
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

/// Compiles `f` with the options `opts` and the block sizes by combinator chosen from
/// register counts (`tuned`, with their reasons `whys`; both empty before they are known):
/// the PTX module (header, the `2/pi` table where a kernel reads it, each kernel after a
/// comment giving its block size and why) and the plan.
pub(crate) fn generate(
    f: &Function,
    opts: &crate::Options,
    tuned: &HashMap<u32, u32>,
    whys: &HashMap<u32, String>,
) -> R<GpuProgram> {
    for &p in &f.params {
        check_param_type(f.ty(p))?;
    }
    if let Some(b) = opts.block {
        crate::check_block(b).map_err(|message| Unsupported {
            message,
            too_large: None,
        })?;
    }
    let mut g = Gen::new(f, opts, tuned);
    let steps = g.host_block(&f.body)?;
    g.cur_stmt = (0, "");
    g.check_size(None)?;
    let mut ptx = String::from(crate::PTX_HEADER);
    if g.kernels
        .iter()
        .any(|(_, t)| t.contains(elem::math::TWO_OVER_PI_NAME))
    {
        ptx.push('\n');
        ptx.push_str(&elem::math::two_over_pi_decl());
    }
    let mut kernels = Vec::new();
    let mut blocks = Vec::new();
    let mut params = Vec::new();
    for ((name, text), info) in g.kernels.iter().zip(&g.kinfo) {
        let why = if info.fixed {
            "fixed by the algorithm, whatever the attribute or register counts say".to_string()
        } else if opts.block.is_some() {
            "given by the attribute (block = N)".to_string()
        } else if let Some(w) = whys.get(&info.group) {
            w.clone()
        } else if info.default == DEFAULT_BLOCK {
            "the default for a thread (or warp) per element; no register counts".to_string()
        } else {
            "the default for a block per element; no register counts".to_string()
        };
        let why = match info.note {
            Some(note) => format!("{why}; {note}"),
            None => why,
        };
        ptx.push('\n');
        ptx.push_str(&format!(
            "// {name}: {} threads per block ({why})\n",
            info.block
        ));
        ptx.push_str(text);
        kernels.push(name.clone());
        params.push(kernel_params(name, text)?);
        blocks.push(KernelBlock {
            block: info.block,
            group: info.group,
            why,
        });
    }
    let plan = Plan {
        params: f
            .params
            .iter()
            .map(|p| (p.index() as u32, f.ty(*p).clone()))
            .collect(),
        steps,
        result: f.body.result.index() as u32,
        ret: f.ret.clone(),
        temps: g.temps,
        sites: g.sites,
    };
    let program = GpuProgram {
        name: f.name.clone(),
        ptx,
        kernels,
        blocks,
        params,
        plan,
        cubins: Vec::new(),
    };
    if cfg!(debug_assertions) {
        program.verify().map_err(|e| Unsupported {
            message: format!(
                "internal compiler error: the launch plan of `{}` is invalid: {e}",
                f.name
            ),
            too_large: None,
        })?;
    }
    Ok(program)
}

/// The number of parameters kernel `name` declares in its PTX `text`.
fn kernel_params(name: &str, text: &str) -> R<u32> {
    let internal = |why: String| Unsupported {
        message: format!("internal compiler error: the PTX of kernel `{name}`: {why}"),
        too_large: None,
    };
    let params = crate::entry::params(text).map_err(|e| internal(e.to_string()))?;
    let list = params
        .get(name)
        .ok_or_else(|| internal("no entry of that name".into()))?;
    Ok(list.len() as u32)
}

/// Parameters are scalars, sequences of scalars or tuples, sequences of such sequences
/// (`[[T]]`: `Nested` and `Matrix` values, stored as the rows' elements plus row
/// offsets), and tuples of those.
fn check_param_type(t: &Type) -> R<()> {
    match t {
        Type::Scalar(_) => Ok(()),
        Type::Tuple(ts) => ts.iter().try_for_each(check_param_type),
        Type::Seq(e) => {
            let leaf = match &**e {
                Type::Seq(inner) => inner,
                _ => e,
            };
            leaves(leaf).map(|_| ()).or_else(|_| {
                unsupported(format!(
                    "parameters of type `{t}` (more than two levels of nesting)"
                ))
            })
        }
        Type::Infer | Type::Param(..) => unsupported("an untyped parameter"),
    }
}

impl<'f> Gen<'f> {
    /// A generator for `f` with the options `opts` and the block sizes chosen from
    /// register counts (`tuned`, by combinator; empty before they are known).
    fn new(f: &'f Function, opts: &crate::Options, tuned: &'f HashMap<u32, u32>) -> Gen<'f> {
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
            opts: *opts,
            tuned,
            operand_use,
            stored: share::stored_seqs(f),
            defs,
            host_vars,
            kernels: Vec::new(),
            sites: Vec::new(),
            temps: 0,
            base: format!("dpl_{base}"),
            len_of,
            other_use,
            split: None,
            prefetched: None,
            owner: None,
            deferred: HashMap::new(),
            stmt_origin: (None, 0),
            kinfo: Vec::new(),
            ordinal: 0,
            cur: KernelInfo {
                group: 0,
                block: DEFAULT_BLOCK,
                default: DEFAULT_BLOCK,
                note: None,
                fixed: false,
            },
            cur_stmt: (0, ""),
            done_bytes: 0,
        }
    }

    /// Fails with [`Unsupported::too_large`] once the kernels finished so far and the one
    /// being written `k` (when given) pass [`crate::MAX_PTX_BYTES`]: checked as each
    /// block of a kernel is compiled, so that a kernel whose code would explode stops
    /// early.
    fn check_size(&self, k: Option<&Kernel>) -> R<()> {
        let bytes = self.done_bytes + k.map_or(0, |k| k.ptx.body_len());
        if bytes <= crate::MAX_PTX_BYTES {
            return Ok(());
        }
        let (span, prim) = self.cur_stmt;
        let at = if prim.is_empty() {
            String::new()
        } else {
            format!(", reached while compiling the kernel of this `{prim}`")
        };
        Err(Unsupported {
            message: format!(
                "the GPU code of `{}` is larger than {} MiB of PTX, the limit per function{at} ({} KiB so far): its element functions are too large once inlined; split the function, or compute intermediate sequences at the top level",
                self.f.name,
                crate::MAX_PTX_BYTES >> 20,
                bytes >> 10
            ),
            too_large: Some(span),
        })
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
            .opts
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

    fn soac(&mut self, s: &Stmt, soac: &Soac, steps: &mut Vec<Step>) -> R<()> {
        if soac.elem.params.len() != 1 {
            return unsupported("an element function without exactly one index parameter");
        }
        self.start_group(DEFAULT_BLOCK);
        self.cur_stmt = (s.span.0, soac.kind.origin_name());
        match (&soac.kind, self.ty(s.var).elem()) {
            (SoacKind::Map, Some(e)) if holds_seq_in_tuple(e) => {
                self.deferred.insert(s.var, soac.clone());
                Ok(())
            }
            (SoacKind::Map | SoacKind::Filter { .. }, Some(Type::Seq(row))) => {
                self.ragged(s, soac, row, steps)
            }
            (SoacKind::Map, _) => self.map_scheduled(s, soac, steps),
            (SoacKind::Reduce { .. }, _) => self.reduce(s, soac, steps),
            (SoacKind::Scan { .. } | SoacKind::ExclusiveScan { .. }, _) => {
                self.scan(s, soac, steps)
            }
            (SoacKind::Filter { pred }, _) => self.filter(s, soac, pred, steps),
            (SoacKind::Scatter { dst }, _) => self.scatter(s, soac, None, *dst, steps),
            (SoacKind::ScatterReduce { op, dst }, _) => {
                self.scatter(s, soac, Some(op), *dst, steps)
            }
            (SoacKind::Permute, _) => self.permute(s, soac, steps),
            (SoacKind::Sort | SoacKind::SortByKey, _) => self.sort(s, soac, steps),
        }
    }
}
