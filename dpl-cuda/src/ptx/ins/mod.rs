//! PTX instructions as values: [`Ins`] and its constructors, one per instruction, in a
//! file per family. A constructor takes the instruction's type and typed operands
//! (destination registers, [`Src`] sources, [`Addr`] addresses, [`Label`](crate::ptx::Label)s) and spells
//! the instruction; [`Ins::when`] / [`Ins::unless`] guard it with a predicate.

use std::fmt;

use super::{Addr, Reg, Src};

pub(crate) mod alu;
pub(crate) mod atomic;
pub(crate) mod control;
pub(crate) mod data;
pub(crate) mod memory;
pub(crate) mod sync;
pub(crate) mod warp;

pub(crate) use alu::Cmp;
pub(crate) use atomic::AtomOp;
pub(crate) use data::Rnd;
pub(crate) use memory::Space;
pub(crate) use warp::Shfl;

/// One instruction: an optional guard predicate, the opcode with its qualifiers and type,
/// the operands.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Ins {
    /// `@%p3` or `@!%p3`.
    guard: Option<String>,
    /// `add.s64`, `ld.global.u32`, ...
    op: String,
    /// The operands, in order.
    operands: Vec<String>,
}

impl Ins {
    /// The instruction `op` with `operands`.
    fn new(op: String, operands: &[&dyn fmt::Display]) -> Ins {
        Ins {
            guard: None,
            op,
            operands: operands.iter().map(|o| o.to_string()).collect(),
        }
    }

    /// Runs only where the predicate `p` holds (`@p`).
    pub(crate) fn when(self, p: &Reg) -> Ins {
        Ins {
            guard: Some(format!("@{p}")),
            ..self
        }
    }

    /// Runs only where the predicate `p` does not hold (`@!p`).
    pub(crate) fn unless(self, p: &Reg) -> Ins {
        Ins {
            guard: Some(format!("@!{p}")),
            ..self
        }
    }
}

impl fmt::Display for Ins {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(g) = &self.guard {
            write!(f, "{g} ")?;
        }
        f.write_str(&self.op)?;
        for (i, o) in self.operands.iter().enumerate() {
            f.write_str(if i == 0 { " " } else { ", " })?;
            f.write_str(o)?;
        }
        Ok(())
    }
}

/// The operands of the constructors, converted once.
fn src(s: impl Into<Src>) -> Src {
    s.into()
}

/// An address operand.
fn addr(a: impl Into<Addr>) -> Addr {
    a.into()
}

#[cfg(test)]
mod tests;
