//! Names: declarations and their scopes, registers, special registers, operands (with
//! immediates converted to the operand's type) and addresses in their state spaces.

use super::layout::{imm_bits, var_layout};
use super::*;
use crate::parse::{Operand, VarDecl};

impl Dec<'_> {
    pub(super) fn alloc_local(&mut self, v: &VarDecl) -> Result<u32> {
        let (_, size, align) = var_layout(v)?;
        self.local = align_up(self.local, align);
        let at = self.local;
        self.local += size;
        if self.local > WINDOW_SIZE / 64 {
            return perr(v.line, "too much local memory per thread");
        }
        Ok(at as u32)
    }

    pub(super) fn lookup(&self, name: &str) -> Option<Sym> {
        for s in self.scopes.iter().rev() {
            if let Some(x) = s.get(name) {
                return Some(*x);
            }
        }
        if let Some(a) = self.globals.get(name) {
            return Some(Sym::Global(*a));
        }
        if let Some(o) = self.shared.offsets.get(&(String::new(), name.to_string())) {
            return Some(Sym::Shared(*o));
        }
        if self
            .m
            .vars
            .iter()
            .any(|v| v.space == Space::Shared && v.is_extern && v.name == name)
        {
            return Some(Sym::Shared(self.shared.dyn_offset));
        }
        if self.m.funcs.iter().any(|f| f.name == name) {
            return Some(Sym::Func);
        }
        None
    }

    pub(super) fn declare(&mut self, v: &VarDecl) -> Result<()> {
        let sym = match v.space {
            Space::Reg => {
                if let Some(n) = v.range {
                    for i in 0..n {
                        let s = self.new_slot();
                        self.scopes
                            .last_mut()
                            .expect("scope")
                            .insert(format!("{}{}", v.name, i), Sym::Reg(s));
                    }
                    return Ok(());
                }
                if v.vec != 1 || !v.dims.is_empty() {
                    return perr(v.line, "vector and array registers are not supported");
                }
                Sym::Reg(self.new_slot())
            }
            Space::Shared => {
                if v.is_extern {
                    Sym::Shared(self.shared.dyn_offset)
                } else {
                    Sym::Shared(self.shared.offsets[&(self.fname.clone(), v.name.clone())])
                }
            }
            Space::Local => Sym::Local(self.alloc_local(v)?),
            Space::Param => Sym::LParam(self.alloc_local(v)?),
            Space::Global | Space::Const => {
                return perr(
                    v.line,
                    "`.global`/`.const` variables inside functions are not supported",
                );
            }
        };
        self.scopes
            .last_mut()
            .expect("scope")
            .insert(v.name.clone(), sym);
        Ok(())
    }

    pub(super) fn reg(&self, name: &str, line: u32) -> Result<Slot> {
        match self.lookup(name) {
            Some(Sym::Reg(s)) => Ok(s),
            Some(_) => perr(line, format!("`{name}` is not a register")),
            None => perr(line, format!("unknown register `{name}`")),
        }
    }

    pub(super) fn dst(&self, o: &Operand, line: u32) -> Result<Slot> {
        match o {
            Operand::Name(n) => self.reg(n, line),
            Operand::Sink => Ok(special::SINK),
            _ => perr(
                line,
                format!("expected a destination register, found {o:?}"),
            ),
        }
    }

    fn special(name: &str) -> Option<Src> {
        use special::*;
        let comp = |base: Slot, n: &str| -> Option<Src> {
            let (_, c) = n.split_once('.')?;
            Some(Src::Reg(
                base + match c {
                    "x" => 0,
                    "y" => 1,
                    "z" => 2,
                    _ => return None,
                },
            ))
        };
        let head = name.split('.').next().unwrap_or(name);
        Some(match head {
            "%tid" => comp(TID, name)?,
            "%ntid" => comp(NTID, name)?,
            "%ctaid" => comp(CTAID, name)?,
            "%nctaid" => comp(NCTAID, name)?,
            "%laneid" => Src::Reg(LANEID),
            "%warpid" => Src::Reg(WARPID),
            "%nwarpid" => Src::Reg(NWARPID),
            "%smid" => Src::Reg(SMID),
            "%nsmid" => Src::Reg(NSMID),
            "%gridid" => Src::Reg(GRIDID),
            "%lanemask_eq" => Src::Reg(LANEMASK_EQ),
            "%lanemask_lt" => Src::Reg(LANEMASK_LT),
            "%lanemask_le" => Src::Reg(LANEMASK_LE),
            "%lanemask_gt" => Src::Reg(LANEMASK_GT),
            "%lanemask_ge" => Src::Reg(LANEMASK_GE),
            "%dynamic_smem_size" => Src::Reg(DYN_SMEM),
            "%total_smem_size" => Src::Reg(TOTAL_SMEM),
            "%clock" => Src::Clock,
            "%clock64" | "%globaltimer" | "%globaltimer_lo" => Src::Clock64,
            "WARP_SZ" => Src::Imm(32),
            _ => return None,
        })
    }

    /// The address of a symbol in its own state space (what `mov r, sym` yields).
    fn sym_addr(&self, s: Sym, line: u32, name: &str) -> Result<u64> {
        Ok(match s {
            Sym::Global(a) => a,
            Sym::Shared(o) | Sym::Local(o) | Sym::KParam(o) | Sym::LParam(o) => o as u64,
            Sym::Func => {
                return perr(
                    line,
                    format!("function pointers (`{name}`) are not supported"),
                );
            }
            Sym::Reg(_) => unreachable!("registers are handled by the caller"),
        })
    }

    pub(super) fn src(&self, o: &Operand, t: Ty, line: u32) -> Result<Src> {
        match o {
            Operand::Imm(l) => Ok(Src::Imm(imm_bits(*l, t))),
            Operand::Name(n) => {
                if let Some(s) = Self::special(n) {
                    return Ok(s);
                }
                match self.lookup(n) {
                    Some(Sym::Reg(s)) => Ok(Src::Reg(s)),
                    Some(sym) => Ok(Src::Imm(self.sym_addr(sym, line, n)?)),
                    None => perr(line, format!("unknown name `{n}`")),
                }
            }
            Operand::SymOffset(n, off) => match self.lookup(n) {
                Some(Sym::Reg(_)) | None => {
                    perr(line, format!("`{n}+{off}` is not a symbol address"))
                }
                Some(sym) => Ok(Src::Imm(
                    self.sym_addr(sym, line, n)?.wrapping_add(*off as u64),
                )),
            },
            _ => perr(line, format!("unsupported operand {o:?}")),
        }
    }

    pub(super) fn pred(&self, o: &Operand, line: u32) -> Result<(Src, bool)> {
        match o {
            Operand::Not(n) => Ok((Src::Reg(self.reg(n, line)?), true)),
            _ => Ok((self.src(o, Ty::Pred, line)?, false)),
        }
    }

    /// An address operand: (space actually used, base, offset).
    pub(super) fn addr(
        &self,
        o: &Operand,
        space: MemSpace,
        line: u32,
    ) -> Result<(MemSpace, Src, i64)> {
        let Operand::Addr { base, offset } = o else {
            return perr(line, format!("expected an address `[...]`, found {o:?}"));
        };
        let Some(b) = base else {
            return Ok((space, Src::Imm(0), *offset));
        };
        if let Some(Sym::Reg(s)) = self.lookup(b) {
            return Ok((space, Src::Reg(s), *offset));
        }
        let sym = match self.lookup(b) {
            Some(s) => s,
            None => return perr(line, format!("unknown name `{b}` in address")),
        };
        let (sp, a) = match sym {
            Sym::Global(a) => (
                if space == MemSpace::Const {
                    MemSpace::Const
                } else {
                    MemSpace::Global
                },
                a,
            ),
            Sym::Shared(o) => (MemSpace::Shared, o as u64),
            Sym::Local(o) | Sym::LParam(o) => (MemSpace::Local, o as u64),
            Sym::KParam(o) => (MemSpace::Param, o as u64),
            Sym::Func | Sym::Reg(_) => return perr(line, format!("`{b}` is not addressable")),
        };
        Ok((sp, Src::Imm(a), *offset))
    }
}
