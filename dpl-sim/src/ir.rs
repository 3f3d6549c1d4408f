//! The decoded, executable form of a kernel.
//!
//! Every register is an index into a per-thread register file of 64-bit slots; every
//! operand kind, type, rounding mode and state space is resolved when the module is
//! loaded, so execution does no string handling or hashing. Calls to `.func`s are inlined
//! (each call site gets its own registers and local frame), so a kernel is one flat list
//! of instructions whose branch targets are indices into that list.

/// An index into the per-thread register file.
pub(crate) type Slot = u32;

/// A source operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Src {
    /// A register (including the special registers, which live in fixed slots).
    Reg(Slot),
    /// An immediate, already converted to the operand's type (raw bits).
    Imm(u64),
    /// `%clock` (low 32 bits of the warp's instruction counter).
    Clock,
    /// `%clock64` / `%globaltimer`.
    Clock64,
}

/// Fixed slots of the special registers, filled when a warp starts.
pub(crate) mod special {
    use super::Slot;
    pub const TID: Slot = 0; // 0,1,2
    pub const NTID: Slot = 3; // 3,4,5
    pub const CTAID: Slot = 6; // 6,7,8
    pub const NCTAID: Slot = 9; // 9,10,11
    pub const LANEID: Slot = 12;
    pub const WARPID: Slot = 13;
    pub const NWARPID: Slot = 14;
    pub const SMID: Slot = 15;
    pub const NSMID: Slot = 16;
    pub const GRIDID: Slot = 17;
    pub const LANEMASK_EQ: Slot = 18;
    pub const LANEMASK_LT: Slot = 19;
    pub const LANEMASK_LE: Slot = 20;
    pub const LANEMASK_GT: Slot = 21;
    pub const LANEMASK_GE: Slot = 22;
    pub const DYN_SMEM: Slot = 23;
    pub const TOTAL_SMEM: Slot = 24;
    /// The carry flag of `add.cc` / `addc`.
    pub const CARRY: Slot = 25;
    /// Writes to `_` land here.
    pub const SINK: Slot = 26;
    /// The first slot of ordinary registers.
    pub const FIRST_FREE: Slot = 27;
}

/// Scalar types of instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub(crate) enum Ty {
    B8,
    B16,
    B32,
    B64,
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    F16,
    Bf16,
    /// Two f16 in 32 bits (low half first).
    F16x2,
    /// Two bf16 in 32 bits.
    Bf16x2,
    F32,
    F64,
    Pred,
}

impl Ty {
    pub(crate) fn parse(s: &str) -> Option<Ty> {
        Some(match s {
            "b8" => Ty::B8,
            "b16" => Ty::B16,
            "b32" => Ty::B32,
            "b64" => Ty::B64,
            "u8" => Ty::U8,
            "u16" => Ty::U16,
            "u32" => Ty::U32,
            "u64" => Ty::U64,
            "s8" => Ty::S8,
            "s16" => Ty::S16,
            "s32" => Ty::S32,
            "s64" => Ty::S64,
            "f16" => Ty::F16,
            "bf16" => Ty::Bf16,
            "f16x2" => Ty::F16x2,
            "bf16x2" => Ty::Bf16x2,
            "f32" => Ty::F32,
            "f64" => Ty::F64,
            "pred" => Ty::Pred,
            _ => return None,
        })
    }
    pub(crate) fn bits(self) -> u32 {
        match self {
            Ty::B8 | Ty::U8 | Ty::S8 => 8,
            Ty::B16 | Ty::U16 | Ty::S16 | Ty::F16 | Ty::Bf16 => 16,
            Ty::B32 | Ty::U32 | Ty::S32 | Ty::F32 | Ty::F16x2 | Ty::Bf16x2 => 32,
            Ty::B64 | Ty::U64 | Ty::S64 | Ty::F64 => 64,
            Ty::Pred => 1,
        }
    }
    pub(crate) fn bytes(self) -> u32 {
        self.bits().div_ceil(8)
    }
    pub(crate) fn signed(self) -> bool {
        matches!(self, Ty::S8 | Ty::S16 | Ty::S32 | Ty::S64)
    }
    pub(crate) fn float(self) -> bool {
        matches!(
            self,
            Ty::F16 | Ty::Bf16 | Ty::F16x2 | Ty::Bf16x2 | Ty::F32 | Ty::F64
        )
    }
    /// The signed type of twice the width (for `.wide`).
    pub(crate) fn widened(self) -> Ty {
        match (self.signed(), self.bits()) {
            (true, 8) => Ty::S16,
            (true, 16) => Ty::S32,
            (true, _) => Ty::S64,
            (false, 8) => Ty::U16,
            (false, 16) => Ty::U32,
            (false, _) => Ty::U64,
        }
    }
}

/// Rounding modifiers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub(crate) enum Rnd {
    /// No modifier given.
    Default,
    Rn,
    Rz,
    Rm,
    Rp,
    Rna,
    Rni,
    Rzi,
    Rmi,
    Rpi,
}

/// Integer (and bitwise) operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub(crate) enum IntOp {
    Add,
    Sub,
    AddSat,
    SubSat,
    /// `add.cc` etc: `cin` reads the carry, `cout` writes it.
    AddC {
        cin: bool,
        cout: bool,
    },
    SubC {
        cin: bool,
        cout: bool,
    },
    MadC {
        hi: bool,
        cin: bool,
        cout: bool,
    },
    MulLo,
    MulHi,
    MulWide,
    Mul24Lo,
    Mul24Hi,
    MadLo,
    MadHi,
    MadWide,
    MadHiSat,
    Mad24Lo,
    Div,
    Rem,
    And,
    Or,
    Xor,
    Not,
    Cnot,
    Shl,
    Shr,
    Min,
    Max,
    Abs,
    Neg,
    Popc,
    Clz,
    Brev,
    Bfe,
    Bfi,
    Bfind {
        shiftamt: bool,
    },
    Prmt(u8),
    ShfL {
        clamp: bool,
    },
    ShfR {
        clamp: bool,
    },
    Lop3,
    Sad,
    Dp4a {
        a_signed: bool,
        b_signed: bool,
    },
    Dp2a {
        hi: bool,
        a_signed: bool,
        b_signed: bool,
    },
    Fns,
}

/// Floating-point operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub(crate) enum FOp {
    Add,
    Sub,
    Mul,
    Fma,
    Div { approx: bool },
    Sqrt,
    Rcp,
    Rsqrt,
    Ex2,
    Lg2,
    Sin,
    Cos,
    Tanh,
    Min,
    Max,
    Abs,
    Neg,
    Copysign,
}

/// Comparisons of `setp` and `set`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub(crate) enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Lo,
    Ls,
    Hi,
    Hs,
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    Num,
    Nan,
}

/// Boolean combination of a comparison with a second predicate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub(crate) enum BoolOp {
    And,
    Or,
    Xor,
}

/// Where a memory instruction goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub(crate) enum MemSpace {
    Global,
    Shared,
    Local,
    /// Kernel parameters.
    Param,
    Const,
    Generic,
}

/// Atomic operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub(crate) enum AtomOp {
    Add,
    Min,
    Max,
    Exch,
    Cas,
    And,
    Or,
    Xor,
    Inc,
    Dec,
}

/// `shfl` modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub(crate) enum ShflMode {
    Up,
    Down,
    Bfly,
    Idx,
}

/// `vote` modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub(crate) enum VoteMode {
    All,
    Any,
    Uni,
    Ballot,
}

/// `testp` properties.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub(crate) enum TestP {
    Finite,
    Infinite,
    Number,
    NotANumber,
    Normal,
    Subnormal,
}

/// Barrier flavours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub(crate) enum BarKind {
    Sync,
    Arrive,
    RedPopc,
    RedAnd,
    RedOr,
}

/// `redux.sync` operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub(crate) enum ReduxOp {
    Add,
    Min,
    Max,
    And,
    Or,
    Xor,
}

/// One decoded operation.
#[derive(Clone, Debug)]
pub(crate) enum Op {
    /// `mov` (and `cvta` of an already generic value): d = a masked to `ty`.
    Mov { ty: Ty, d: Slot, a: Src },
    /// `mov.b64 d, {a, b}`: concatenates `parts` of `bits` each, first is lowest.
    Pack { d: Slot, parts: Vec<Src>, bits: u32 },
    /// `mov.b64 {a, b}, d`: splits.
    Unpack { ds: Vec<Slot>, a: Src, bits: u32 },
    /// Integer operations; unused sources are `Imm(0)`.
    Int {
        op: IntOp,
        ty: Ty,
        d: Slot,
        s: [Src; 4],
    },
    /// Floating-point operations.
    Float {
        op: FOp,
        ty: Ty,
        rnd: Rnd,
        ftz: bool,
        sat: bool,
        d: Slot,
        s: [Src; 3],
    },
    /// `setp`.
    Setp {
        cmp: Cmp,
        ty: Ty,
        ftz: bool,
        d: Slot,
        d2: Option<Slot>,
        comb: Option<(BoolOp, Src, bool)>,
        a: Src,
        b: Src,
    },
    /// `set` (result all ones / 1.0 or zero).
    Set {
        cmp: Cmp,
        dty: Ty,
        sty: Ty,
        ftz: bool,
        d: Slot,
        comb: Option<(BoolOp, Src, bool)>,
        a: Src,
        b: Src,
    },
    /// `selp`: d = c ? a : b.
    Selp {
        ty: Ty,
        d: Slot,
        a: Src,
        b: Src,
        c: Src,
    },
    /// `slct`: d = c >= 0 ? a : b.
    Slct {
        ty: Ty,
        cty: Ty,
        ftz: bool,
        d: Slot,
        a: Src,
        b: Src,
        c: Src,
    },
    /// `cvt`.
    Cvt {
        dty: Ty,
        sty: Ty,
        rnd: Rnd,
        sat: bool,
        ftz: bool,
        d: Slot,
        a: Src,
    },
    /// `cvta`: to generic (`to == false`) or from generic to `space`.
    Cvta {
        to: bool,
        space: MemSpace,
        d: Slot,
        a: Src,
    },
    /// `isspacep`.
    Isspacep { space: MemSpace, d: Slot, a: Src },
    /// `ld`, `ldu`: `n` elements of `ty` into `ds`.
    Ld {
        space: MemSpace,
        ty: Ty,
        n: u8,
        ds: [Slot; 4],
        base: Src,
        off: i64,
    },
    /// `st`.
    St {
        space: MemSpace,
        ty: Ty,
        n: u8,
        srcs: [Src; 4],
        base: Src,
        off: i64,
    },
    /// `atom` / `red` (d = None).
    Atom {
        space: MemSpace,
        op: AtomOp,
        ty: Ty,
        d: Option<Slot>,
        base: Src,
        off: i64,
        b: Src,
        c: Src,
    },
    /// `bra`.
    Bra { target: u32 },
    /// `bar` / `barrier`.
    Bar {
        kind: BarKind,
        id: Src,
        count: Option<Src>,
        d: Option<Slot>,
        pred: Option<(Src, bool)>,
    },
    /// `bar.warp.sync`.
    WarpSync { mask: Src },
    /// `shfl.sync`.
    Shfl {
        mode: ShflMode,
        d: Slot,
        p: Option<Slot>,
        a: Src,
        b: Src,
        c: Src,
        mask: Src,
    },
    /// `vote`.
    Vote {
        mode: VoteMode,
        d: Slot,
        a: Src,
        neg: bool,
        mask: Src,
    },
    /// `activemask`.
    Activemask { d: Slot },
    /// `match.sync`.
    Match {
        all: bool,
        ty: Ty,
        d: Slot,
        p: Option<Slot>,
        a: Src,
        mask: Src,
    },
    /// `redux.sync`.
    Redux {
        op: ReduxOp,
        ty: Ty,
        d: Slot,
        a: Src,
        mask: Src,
    },
    /// `testp`.
    Testp {
        what: TestP,
        ty: Ty,
        d: Slot,
        a: Src,
    },
    /// A call of a recursive `.func` (emitted out of line; other calls are inlined):
    /// saves the callee's registers and local memory, copies the arguments
    /// (caller offset, callee offset, bytes) and jumps to `entry`.
    Call {
        entry: u32,
        args: Vec<(u32, u32, u32)>,
        rets: Vec<(u32, u32, u32)>,
        regs: (Slot, Slot),
        locals: Vec<(u32, u32)>,
    },
    /// `ret` of an out-of-line function: copies the results back, restores what the call
    /// saved and returns.
    Ret,
    /// `cp.async` global to shared: copies `size` bytes (zero-filling after `src_size`
    /// bytes) at once; the commit/wait instructions are then no-ops.
    CpAsync {
        dst: Src,
        dst_off: i64,
        src: Src,
        src_off: i64,
        size: u32,
        src_size: Option<Src>,
    },
    /// `call vprintf`: local-frame offsets of the format pointer, the argument-buffer
    /// pointer and the `.b32` result.
    Printf {
        fmt: u32,
        args: u32,
        ret: Option<u32>,
    },
    /// `call __assertfail` (a failed `assert`): local-frame offsets of the message, file,
    /// line and function arguments.
    AssertFail {
        msg: u32,
        file: u32,
        line: u32,
        func: u32,
    },
    /// `exit`, and `ret` in a kernel.
    Exit,
    /// `trap`.
    Trap,
    /// Something loaded but refused when executed (e.g. a call of an external function).
    Unsupported(String),
    /// `brkpt`, `pmevent`, `prefetch`: no effect here.
    Nop,
    /// `nanosleep`: the host thread running the block sleeps a little (a fixed
    /// 20 µs, whatever the operand), so a spin-wait loop with back-off
    /// does not execute (and count) thousands of iterations while the block it waits for
    /// runs on another host thread.
    Sleep,
    /// `membar`, `fence`: a sequentially consistent fence of the host (blocks run on
    /// several host threads and global memory is relaxed atomics, so a flag published
    /// after a fence is seen only after the data written before it).
    Fence,
}

/// A decoded instruction with its guard and source position.
#[derive(Clone, Debug)]
pub(crate) struct Inst {
    pub op: Op,
    /// `@p` (false) / `@!p` (true).
    pub guard: Option<(Slot, bool)>,
    /// 1-based PTX line.
    pub line: u32,
    /// Index into the kernel's table of instruction texts.
    pub text: u32,
}

/// How a kernel parameter is laid out.
#[derive(Clone, Debug)]
pub(crate) struct ParamInfo {
    pub name: String,
    pub ty: Option<Ty>,
    pub size: u32,
    pub offset: u32,
}

/// A decoded kernel.
#[derive(Clone, Debug)]
pub(crate) struct Kernel {
    pub name: String,
    pub insts: Vec<Inst>,
    /// Texts of instructions for messages (opcode and modifiers).
    pub texts: Vec<String>,
    /// Register slots per thread.
    pub nslots: u32,
    pub params: Vec<ParamInfo>,
    pub param_bytes: u32,
    /// Bytes of static shared memory; dynamic shared memory starts at `dyn_shared_offset`.
    pub shared_static: u32,
    pub dyn_shared_offset: u32,
    /// Bytes of local memory per thread (locals and call parameters).
    pub local_bytes: u32,
    /// `.maxntid` and `.reqntid` of the entry.
    pub maxntid: Option<[u32; 3]>,
    pub reqntid: Option<[u32; 3]>,
}
