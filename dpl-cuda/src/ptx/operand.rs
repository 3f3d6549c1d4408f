//! Operands: registers, immediates, special registers, named symbols, addresses and
//! labels.

use std::fmt;

use dpl_core::ir::Scalar;

/// A virtual register holding one scalar of type `ty`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Reg {
    /// The register's name, `%r12`.
    pub name: String,
    /// The scalar it holds (`U64` for addresses and raw 64-bit words, `U32` for raw 32-bit
    /// words, `Bool` for predicates).
    pub ty: Scalar,
}

impl fmt::Display for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// A label of a kernel (`$L3`): where a branch goes.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Label(pub(super) String);

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A named address: a `.shared` array, a kernel parameter or a `.const` table.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Sym(pub(super) String);

impl Sym {
    /// The symbol `name` (a module-scope declaration's name).
    pub(crate) fn new(name: &str) -> Sym {
        Sym(name.to_string())
    }
}

impl fmt::Display for Sym {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

spelled! {
    /// A special register.
    pub(crate) enum Sreg {
        /// `%tid.x`: the thread's index in its block.
        TidX = "%tid.x",
        /// `%ntid.x`: threads per block.
        NtidX = "%ntid.x",
        /// `%ctaid.x`: the block's index in the grid.
        CtaidX = "%ctaid.x",
        /// `%nctaid.x`: blocks in the grid.
        NctaidX = "%nctaid.x",
        /// `%lanemask_lt`: the lanes of the warp below this one.
        LanemaskLt = "%lanemask_lt",
    }
}

/// A source operand: a register, an immediate, a special register or a symbol's address.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Src(String);

impl Src {
    /// An integer immediate in hexadecimal, `0x1f`.
    pub(crate) fn hex(v: u64) -> Src {
        Src(format!("{v:#x}"))
    }

    /// A 64-bit word in hexadecimal with all its 16 digits, `0x000FFFFFFFFFFFFF`.
    pub(crate) fn word(v: u64) -> Src {
        Src(format!("0x{v:016X}"))
    }

    /// A float immediate of type `ty` (`f32` or `f64`) as its bit pattern (`0f3F800000`,
    /// `0d3FF0000000000000`), so the value is exact.
    pub(crate) fn float(ty: Scalar, x: f64) -> Src {
        // A NaN constant is the canonical NaN, as every NaN dpl produces.
        // The 16-bit floats are held as their `f32` value.
        Src(if ty == Scalar::F32 || ty.is_half() {
            format!("0f{:08X}", dpl_core::nan::canon_f32(x as f32).to_bits())
        } else {
            format!("0d{:016X}", dpl_core::nan::canon_f64(x).to_bits())
        })
    }
}

impl fmt::Display for Src {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&Reg> for Src {
    fn from(r: &Reg) -> Src {
        Src(r.name.clone())
    }
}

impl From<Sreg> for Src {
    fn from(s: Sreg) -> Src {
        Src(s.to_string())
    }
}

impl From<&Sym> for Src {
    fn from(s: &Sym) -> Src {
        Src(s.0.clone())
    }
}

macro_rules! int_src {
    ($($t:ty),*) => {$(
        impl From<$t> for Src {
            fn from(v: $t) -> Src {
                Src(v.to_string())
            }
        }
    )*};
}
int_src!(i32, u32, i64, u64);

/// A memory operand: a register or a symbol, plus a constant byte offset (`[%rd4+8]`;
/// an offset given as 0 is written, `[%r5+0]`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Addr {
    base: String,
    offset: Option<u64>,
}

impl Addr {
    /// `offset` bytes further.
    pub(crate) fn plus(self, offset: u64) -> Addr {
        Addr {
            offset: Some(self.offset.unwrap_or(0) + offset),
            ..self
        }
    }
}

impl fmt::Display for Addr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.offset {
            None => write!(f, "[{}]", self.base),
            Some(o) => write!(f, "[{}+{o}]", self.base),
        }
    }
}

impl From<&Reg> for Addr {
    fn from(r: &Reg) -> Addr {
        Addr {
            base: r.name.clone(),
            offset: None,
        }
    }
}

impl From<&Addr> for Addr {
    fn from(a: &Addr) -> Addr {
        a.clone()
    }
}

impl From<&Sym> for Addr {
    fn from(s: &Sym) -> Addr {
        Addr {
            base: s.0.clone(),
            offset: None,
        }
    }
}
