//! One kernel under construction and its text.

use std::fmt::Write as _;

use dpl_core::ir::Scalar;

use super::{Cmp, Ins, Label, Reg, Rnd, Space, Src, Sym, Ty, arith, mem, narrow};
use crate::plan::KArg;

/// Register class index and prefix.
fn class(s: Scalar) -> (usize, &'static str) {
    match s {
        Scalar::Bool => (0, "%p"),
        Scalar::I8 | Scalar::U8 | Scalar::I16 | Scalar::U16 => (1, "%r"),
        Scalar::I32 | Scalar::U32 => (1, "%r"),
        Scalar::I64 | Scalar::U64 | Scalar::Usize => (2, "%rd"),
        Scalar::F16 | Scalar::BF16 | Scalar::F32 => (3, "%f"),
        Scalar::F64 => (4, "%fd"),
    }
}

/// One kernel under construction.
pub(crate) struct Kernel {
    /// The `.entry` name.
    pub name: String,
    /// Parameter declarations, in order.
    params: Vec<String>,
    /// What the host passes for each parameter.
    pub args: Vec<KArg>,
    /// The instructions.
    body: String,
    /// Registers used per class.
    counts: [u32; 5],
    /// Labels used.
    labels: u32,
    /// `.shared` and `.local` declarations.
    shared: Vec<String>,
    /// Threads per block it is launched with (`.maxntid`).
    pub block: u32,
}

impl Kernel {
    /// An empty kernel launched with `block` threads per block.
    pub fn new(name: String, block: u32) -> Kernel {
        Kernel {
            block,
            name,
            params: Vec::new(),
            args: Vec::new(),
            body: String::new(),
            counts: [0; 5],
            labels: 0,
            shared: Vec::new(),
        }
    }

    /// A fresh register for a scalar of type `ty`.
    pub fn reg(&mut self, ty: Scalar) -> Reg {
        let (c, prefix) = class(ty);
        self.counts[c] += 1;
        Reg {
            name: format!("{prefix}{}", self.counts[c]),
            ty,
        }
    }

    /// Wraps an 8- or 16-bit integer held in a 32-bit register at its width after an
    /// operation that may carry past it (`cvt.s32.s8 r, r` and the like: the register's
    /// low bits re-extended, see [`narrow`]); nothing for the other types.
    pub fn wrap(&mut self, r: &Reg) {
        if let Some(t) = narrow(r.ty) {
            self.emit(Ins::cvt(arith(r.ty), t, r, r));
        }
    }

    /// Replaces a NaN in the float register `r` by the canonical NaN ([`dpl_core::nan`]):
    /// `setp.nan` and a predicated `mov` (nothing for other types). `f64` arithmetic on
    /// the GPU keeps NaN payloads, and `neg`, `abs` and selections move them, where dpl
    /// promises one NaN on every place.
    pub fn canon(&mut self, r: &Reg) {
        let (bty, bits) = match r.ty {
            // The 16-bit floats' canonical NaNs are this one rounded.
            Scalar::F32 | Scalar::F16 | Scalar::BF16 => {
                (Ty::B32, u64::from(dpl_core::nan::F32_BITS))
            }
            Scalar::F64 => (Ty::B64, dpl_core::nan::F64_BITS),
            _ => return,
        };
        let nan = self.reg(Scalar::Bool);
        self.emit(Ins::setp(Cmp::Nan, arith(r.ty), &nan, r, r));
        self.emit(Ins::mov(bty, r, Src::hex(bits)).when(&nan));
    }

    /// The exact `f32` value, in a register of type `to` (`f16` or `bf16`, which are held
    /// that way), of the 16-bit float whose bits are the low half of the `.b32` `b` (as
    /// `ld.u16` leaves them): `cvt.f32.f16`, or for `bf16` the bits moved to the top.
    pub fn widen_half(&mut self, b: &Reg, to: Scalar) -> Reg {
        let r = self.reg(to);
        if to == Scalar::F16 {
            self.emit(Ins::cvt(Ty::F32, Ty::F16, &r, b));
            // A NaN keeps its sign and payload (a value only moved keeps its bits): the
            // payload's 10 bits on top of the `f32`'s, built in integer arithmetic. The
            // bits moved to the top and shifted back arithmetically by 3 leave the sign on
            // top (copied into the 3 bits below it), the all-ones exponent under those and
            // the payload right under the `f32`'s exponent; setting the `f32`'s exponent
            // then leaves the sign alone on top.
            let nan = self.reg(Scalar::Bool);
            self.emit(Ins::setp(Cmp::Nan, Ty::F32, &nan, &r, &r));
            let m = self.reg(Scalar::I32);
            self.emit(Ins::shl(Ty::B32, &m, b, 16));
            self.emit(Ins::shr(Ty::S32, &m, &m, 3));
            self.emit(Ins::or(Ty::B32, &m, &m, Src::hex(0x7f80_0000)));
            self.emit(Ins::mov(Ty::B32, &r, &m).when(&nan));
        } else {
            let t = self.reg(Scalar::U32);
            self.emit(Ins::shl(Ty::B32, &t, b, 16));
            self.emit(Ins::mov(Ty::B32, &r, &t));
        }
        r
    }

    /// The bits of the 16-bit float held (as its exact `f32` value) in `r`, in the low
    /// half of a `.b32` (for `st.u16`).
    pub fn half_bits(&mut self, r: &Reg) -> Reg {
        let b = self.reg(Scalar::U32);
        if r.ty == Scalar::F16 {
            self.emit(Ins::cvt_rnd(Rnd::Rn, Ty::F16, Ty::F32, &b, r));
            // A NaN's sign and the top 10 bits of its payload, as `widen_half` put them:
            // the bits shifted down by 13 hold the payload and, above it, the all-ones
            // exponent; their low 15 bits go under the sign, which is bit 15 of the bits
            // shifted down by 16 (`bfi`; nothing above bit 15 is set).
            let nan = self.reg(Scalar::Bool);
            self.emit(Ins::setp(Cmp::Nan, Ty::F32, &nan, r, r));
            let (m, s) = (self.reg(Scalar::U32), self.reg(Scalar::U32));
            self.emit(Ins::mov(Ty::B32, &m, r));
            self.emit(Ins::shr(Ty::B32, &s, &m, 16));
            self.emit(Ins::shr(Ty::B32, &m, &m, 13));
            self.emit(Ins::bfi(Ty::B32, &m, &m, &s, 0, 15));
            self.emit(Ins::mov(Ty::B32, &b, &m).when(&nan));
        } else {
            self.emit(Ins::mov(Ty::B32, &b, r));
            self.emit(Ins::shr(Ty::B32, &b, &b, 16));
        }
        b
    }

    /// The `f32` value `x` rounded once, to nearest with ties to even, to the 16-bit float
    /// `to` ([`dpl_core::float16`]), held as its `f32` value with a NaN canonical:
    /// `cvt.rn.f16.f32` and back (`cvt.f32.f16`) for `f16`; for `bf16` (whose `cvt` needs
    /// sm_80) in integer arithmetic on the bits, `bits + 0x7fff + (bit 16)` with the low
    /// half cleared (a carry makes the next binade or infinity), a NaN set apart.
    ///
    /// The value is the result of an operation, whose NaN is canonical whatever its bits
    /// were, so the way back needs none of [`Kernel::widen_half`]'s care for a NaN's
    /// payload (which is for values only moved, as loaded from memory).
    pub fn round_half(&mut self, x: &Reg, to: Scalar) -> Reg {
        let x = Reg {
            ty: Scalar::F32,
            ..x.clone()
        };
        let r = if to == Scalar::F16 {
            let b = self.reg(Scalar::U32);
            self.emit(Ins::cvt_rnd(Rnd::Rn, Ty::F16, Ty::F32, &b, &x));
            let r = self.reg(to);
            self.emit(Ins::cvt(Ty::F32, Ty::F16, &r, &b));
            r
        } else {
            let (b, lsb) = (self.reg(Scalar::U32), self.reg(Scalar::U32));
            self.emit(Ins::mov(Ty::B32, &b, &x));
            self.emit(Ins::shr(Ty::B32, &lsb, &b, 16));
            self.emit(Ins::and(Ty::B32, &lsb, &lsb, 1));
            self.emit(Ins::add(Ty::U32, &b, &b, &lsb));
            self.emit(Ins::add(Ty::U32, &b, &b, Src::hex(0x7fff)));
            self.emit(Ins::and(Ty::B32, &b, &b, Src::hex(0xffff_0000)));
            let r = self.reg(to);
            self.emit(Ins::mov(Ty::B32, &r, &b));
            let nan = self.reg(Scalar::Bool);
            self.emit(Ins::setp(Cmp::Nan, Ty::F32, &nan, &x, &x));
            self.emit(Ins::mov(Ty::B32, &r, &x).when(&nan));
            r
        };
        self.canon(&r);
        r
    }

    /// A fresh label.
    pub fn label(&mut self) -> Label {
        self.labels += 1;
        Label(format!("$L{}", self.labels))
    }

    /// Bytes of instructions emitted so far.
    pub fn body_len(&self) -> usize {
        self.body.len()
    }

    /// Emits one instruction.
    pub fn emit(&mut self, ins: Ins) {
        let _ = writeln!(self.body, "\t{ins};");
    }

    /// Places a label here.
    pub fn place(&mut self, label: &Label) {
        let _ = writeln!(self.body, "{label}:");
    }

    /// Declares a `.local` array of `bytes` bytes (per thread) and returns its name.
    pub fn local(&mut self, bytes: u32) -> Sym {
        let name = format!("{}_lc{}", self.name, self.shared.len());
        self.shared
            .push(format!("\t.local .align 8 .b8 {name}[{bytes}];"));
        Sym(name)
    }

    /// Declares a `.shared` array of `bytes` bytes and returns its name.
    pub fn shared(&mut self, bytes: u32) -> Sym {
        let name = format!("{}_sh{}", self.name, self.shared.len());
        self.shared
            .push(format!("\t.shared .align 8 .b8 {name}[{bytes}];"));
        Sym(name)
    }

    /// Declares a parameter passed as `arg` and loads it into a register of type `ty`
    /// (`bool` is passed as a `.u32` and turned into a predicate, an 8- or 16-bit integer
    /// as a `.s32`/`.u32` already extended to 32 bits, an `f16`/`bf16` as its `.f32`
    /// value).
    pub fn param(&mut self, ty: Scalar, arg: KArg) -> Reg {
        let pty = match ty {
            Scalar::Bool => Ty::U32,
            s if narrow(s).is_some() || s.is_half() => arith(s),
            s => mem(s),
        };
        let pname = self.declare(pty, arg);
        if ty == Scalar::Bool {
            let r = self.reg(Scalar::U32);
            self.emit(Ins::ld(Space::Param, Ty::U32, &r, &pname));
            let p = self.reg(Scalar::Bool);
            self.emit(Ins::setp(Cmp::Ne, Ty::U32, &p, &r, 0));
            p
        } else {
            let r = self.reg(ty);
            self.emit(Ins::ld(Space::Param, pty, &r, &pname));
            r
        }
    }

    /// Declares a `.u64` parameter passed as `arg` without loading it; returns its name,
    /// for `ld.param` where it is used (so it takes no register in between).
    pub fn param_name(&mut self, arg: KArg) -> Sym {
        self.declare(Ty::U64, arg)
    }

    /// Declares the next parameter, of type `ty`, passed as `arg`.
    fn declare(&mut self, ty: Ty, arg: KArg) -> Sym {
        let pname = format!("{}_p{}", self.name, self.params.len());
        self.params.push(format!(".param .{ty} {pname}"));
        self.args.push(arg);
        Sym(pname)
    }

    /// Declares a pointer parameter and converts it to a global address.
    pub fn pointer(&mut self, arg: KArg) -> Reg {
        let r = self.param(Scalar::U64, arg);
        self.emit(Ins::cvta_to_global(&r, &r));
        r
    }

    /// The complete `.entry` text.
    pub fn finish(self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, ".visible .entry {}(", self.name);
        for (i, p) in self.params.iter().enumerate() {
            let sep = if i + 1 < self.params.len() { "," } else { "" };
            let _ = writeln!(out, "\t{p}{sep}");
        }
        let _ = writeln!(out, ")");
        let _ = writeln!(out, ".maxntid {}, 1, 1", self.block);
        // Without it, ptxas for sm_90 may hold a kernel to 32 registers and spill (seen
        // on a look-back scan of an 8-leaf tuple: 4 bytes spilled at 32 registers, none at
        // 40 with this line); one resident block per SM is always true, so it only lifts
        // that cap.
        let _ = writeln!(out, ".minnctapersm 1");
        let _ = writeln!(out, "{{");
        let names = [".pred %p", ".b32 %r", ".b64 %rd", ".f32 %f", ".f64 %fd"];
        for (n, decl) in self.counts.iter().zip(names) {
            if *n > 0 {
                let _ = writeln!(out, "\t.reg {decl}<{}>;", n + 1);
            }
        }
        for s in &self.shared {
            let _ = writeln!(out, "{s}");
        }
        out.push_str(&self.body);
        let _ = writeln!(out, "\tret;");
        let _ = writeln!(out, "}}");
        out
    }
}
