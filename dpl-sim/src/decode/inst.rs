//! One instruction: its opcode, modifiers and operands decoded to an [`Op`].

use super::*;
use crate::parse::{Instr, Literal, Operand};

fn is_type(s: &str) -> bool {
    Ty::parse(s).is_some() || matches!(s, "f16x2" | "bf16x2" | "b128")
}

impl Dec<'_> {
    pub(super) fn inst(
        &mut self,
        i: &Instr,
        fixups: &mut Vec<(usize, String, u32)>,
        rets: &mut Vec<usize>,
    ) -> Result<()> {
        let line = i.line;
        let text = i.text();
        let guard = match &i.guard {
            Some((g, neg)) => Some((self.reg(g, line)?, *neg)),
            None => None,
        };
        let mods: Vec<&str> = i.mods.iter().map(|s| s.as_str()).collect();
        let has = |m: &str| mods.contains(&m);
        let types: Vec<Ty> = mods.iter().filter_map(|m| Ty::parse(m)).collect();
        let ops = &i.operands;
        let nops = |n: usize| -> Result<()> {
            if ops.len() == n {
                Ok(())
            } else {
                perr(
                    line,
                    format!("`{text}` expects {n} operands, found {}", ops.len()),
                )
            }
        };
        let last_ty = || -> Result<Ty> {
            types.last().copied().ok_or_else(|| Error::Parse {
                line,
                msg: format!("`{text}` has no type"),
            })
        };
        let rnd = {
            let mut r = Rnd::Default;
            for m in &mods {
                r = match *m {
                    "rn" => Rnd::Rn,
                    "rz" => Rnd::Rz,
                    "rm" => Rnd::Rm,
                    "rp" => Rnd::Rp,
                    "rna" => Rnd::Rna,
                    "rni" => Rnd::Rni,
                    "rzi" => Rnd::Rzi,
                    "rmi" => Rnd::Rmi,
                    "rpi" => Rnd::Rpi,
                    _ => continue,
                };
            }
            r
        };
        let ftz = has("ftz");
        let sat = has("sat") || has("satfinite");
        // Modifiers each family understands; anything else is refused rather than ignored.
        let allowed: Option<&[&str]> = match i.opcode.as_str() {
            "add" | "sub" | "mul" | "mad" | "fma" | "div" | "rem" | "min" | "max" | "abs"
            | "neg" | "addc" | "subc" | "madc" | "mul24" | "mad24" | "sad" | "sqrt" | "rcp"
            | "rsqrt" | "ex2" | "lg2" | "sin" | "cos" | "tanh" | "copysign" => Some(&[
                "lo", "hi", "wide", "cc", "sat", "rn", "rz", "rm", "rp", "ftz", "approx", "full",
            ]),
            "and" | "or" | "xor" | "not" | "cnot" | "shl" | "shr" | "popc" | "clz" | "brev"
            | "bfe" | "bfi" | "bfind" | "lop3" | "dp4a" | "dp2a" | "fns" => {
                Some(&["shiftamt", "lo", "hi"])
            }
            "prmt" => Some(&["f4e", "b4e", "rc8", "ecl", "ecr", "rc16"]),
            "shf" => Some(&["l", "r", "wrap", "clamp"]),
            "mov" | "selp" | "activemask" => Some(&[]),
            "cvt" => Some(&[
                "rn", "rz", "rm", "rp", "rna", "rni", "rzi", "rmi", "rpi", "sat", "ftz",
            ]),
            "setp" | "set" => Some(&[
                "eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs", "equ", "neu", "ltu",
                "leu", "gtu", "geu", "num", "nan", "and", "or", "xor", "ftz",
            ]),
            "slct" => Some(&["ftz"]),
            "testp" => Some(&[
                "finite",
                "infinite",
                "number",
                "notanumber",
                "normal",
                "subnormal",
            ]),
            "shfl" => Some(&["sync", "up", "down", "bfly", "idx"]),
            "vote" => Some(&["sync", "all", "any", "uni", "ballot"]),
            "match" => Some(&["sync", "any", "all"]),
            "redux" => Some(&["sync", "add", "min", "max", "and", "or", "xor"]),
            "bar" | "barrier" => Some(&[
                "sync", "arrive", "red", "popc", "and", "or", "aligned", "cta", "warp",
            ]),
            _ => None,
        };
        if let Some(allowed) = allowed
            && let Some(bad) = mods.iter().find(|m| !is_type(m) && !allowed.contains(m))
        {
            return perr(line, format!("unsupported modifier `.{bad}` in `{text}`"));
        }
        let op: Op = match i.opcode.as_str() {
            "mov" => {
                nops(2)?;
                let ty = last_ty()?;
                match (&ops[0], &ops[1]) {
                    (Operand::Vector(ds), a) => {
                        let parts = ds.len() as u32;
                        let bits = ty.bits() / parts;
                        let ds = ds
                            .iter()
                            .map(|d| self.dst(d, line))
                            .collect::<Result<Vec<_>>>()?;
                        Op::Unpack {
                            ds,
                            a: self.src(a, ty, line)?,
                            bits,
                        }
                    }
                    (d, Operand::Vector(ss)) => {
                        let bits = ty.bits() / ss.len() as u32;
                        let pt = Ty::parse(&format!("b{bits}")).unwrap_or(Ty::B32);
                        let parts = ss
                            .iter()
                            .map(|s| self.src(s, pt, line))
                            .collect::<Result<Vec<_>>>()?;
                        Op::Pack {
                            d: self.dst(d, line)?,
                            parts,
                            bits,
                        }
                    }
                    (d, a) => Op::Mov {
                        ty,
                        d: self.dst(d, line)?,
                        a: self.src(a, ty, line)?,
                    },
                }
            }
            "add" | "sub" | "mul" | "mad" | "fma" | "div" | "rem" | "min" | "max" | "abs"
            | "neg" | "addc" | "subc" | "madc" | "mul24" | "mad24" | "sad"
                if last_ty()?.float() =>
            {
                let ty = last_ty()?;
                let fop = match i.opcode.as_str() {
                    "add" => FOp::Add,
                    "sub" => FOp::Sub,
                    "mul" => FOp::Mul,
                    "mad" | "fma" => FOp::Fma,
                    "div" => FOp::Div {
                        approx: has("approx"),
                    },
                    "min" => FOp::Min,
                    "max" => FOp::Max,
                    "abs" => FOp::Abs,
                    "neg" => FOp::Neg,
                    _ => return perr(line, format!("unsupported instruction `{text}`")),
                };
                if has("NaN") || has("xorsign") || has("relu") || has("oob") {
                    return perr(line, format!("unsupported instruction `{text}`"));
                }
                self.float_op(fop, ty, rnd, ftz, sat, ops, line, &text)?
            }
            "sqrt" | "rcp" | "rsqrt" | "ex2" | "lg2" | "sin" | "cos" | "tanh" | "copysign" => {
                let ty = last_ty()?;
                if !ty.float() {
                    return perr(line, format!("`{text}` needs a floating-point type"));
                }
                let fop = match i.opcode.as_str() {
                    "sqrt" => FOp::Sqrt,
                    "rcp" => FOp::Rcp,
                    "rsqrt" => FOp::Rsqrt,
                    "ex2" => FOp::Ex2,
                    "lg2" => FOp::Lg2,
                    "sin" => FOp::Sin,
                    "cos" => FOp::Cos,
                    "tanh" => FOp::Tanh,
                    _ => FOp::Copysign,
                };
                self.float_op(fop, ty, rnd, ftz, sat, ops, line, &text)?
            }
            "add" | "sub" | "mul" | "mad" | "div" | "rem" | "min" | "max" | "abs" | "neg"
            | "addc" | "subc" | "madc" | "mul24" | "mad24" | "sad" | "and" | "or" | "xor"
            | "not" | "cnot" | "shl" | "shr" | "popc" | "clz" | "brev" | "bfe" | "bfi"
            | "bfind" | "prmt" | "shf" | "lop3" | "dp4a" | "dp2a" | "fns" => {
                let ty = last_ty()?;
                let cc = has("cc");
                let iop = match i.opcode.as_str() {
                    "add" if cc => IntOp::AddC {
                        cin: false,
                        cout: true,
                    },
                    "addc" => IntOp::AddC {
                        cin: true,
                        cout: cc,
                    },
                    "sub" if cc => IntOp::SubC {
                        cin: false,
                        cout: true,
                    },
                    "subc" => IntOp::SubC {
                        cin: true,
                        cout: cc,
                    },
                    "mad" if cc => IntOp::MadC {
                        hi: has("hi"),
                        cin: false,
                        cout: true,
                    },
                    "madc" => IntOp::MadC {
                        hi: has("hi"),
                        cin: true,
                        cout: cc,
                    },
                    "add" if sat => IntOp::AddSat,
                    "sub" if sat => IntOp::SubSat,
                    "add" => IntOp::Add,
                    "sub" => IntOp::Sub,
                    "mul" if has("hi") => IntOp::MulHi,
                    "mul" if has("wide") => IntOp::MulWide,
                    "mul" => IntOp::MulLo,
                    "mad" if has("hi") && sat => IntOp::MadHiSat,
                    "mad" if has("hi") => IntOp::MadHi,
                    "mad" if has("wide") => IntOp::MadWide,
                    "mad" => IntOp::MadLo,
                    "mul24" if has("hi") => IntOp::Mul24Hi,
                    "mul24" => IntOp::Mul24Lo,
                    "mad24" if !has("hi") => IntOp::Mad24Lo,
                    "div" => IntOp::Div,
                    "rem" => IntOp::Rem,
                    "min" => IntOp::Min,
                    "max" => IntOp::Max,
                    "abs" => IntOp::Abs,
                    "neg" => IntOp::Neg,
                    "and" => IntOp::And,
                    "or" => IntOp::Or,
                    "xor" => IntOp::Xor,
                    "not" => IntOp::Not,
                    "cnot" => IntOp::Cnot,
                    "shl" => IntOp::Shl,
                    "shr" => IntOp::Shr,
                    "popc" => IntOp::Popc,
                    "clz" => IntOp::Clz,
                    "brev" => IntOp::Brev,
                    "bfe" => IntOp::Bfe,
                    "bfi" => IntOp::Bfi,
                    "bfind" => IntOp::Bfind {
                        shiftamt: has("shiftamt"),
                    },
                    "prmt" => IntOp::Prmt(
                        match mods
                            .iter()
                            .find(|m| matches!(**m, "f4e" | "b4e" | "rc8" | "ecl" | "ecr" | "rc16"))
                        {
                            None => 0,
                            Some(&"f4e") => 1,
                            Some(&"b4e") => 2,
                            Some(&"rc8") => 3,
                            Some(&"ecl") => 4,
                            Some(&"ecr") => 5,
                            _ => 6,
                        },
                    ),
                    "shf" if has("l") => IntOp::ShfL {
                        clamp: has("clamp"),
                    },
                    "shf" => IntOp::ShfR {
                        clamp: has("clamp"),
                    },
                    "lop3" => IntOp::Lop3,
                    "sad" => IntOp::Sad,
                    "dp4a" => IntOp::Dp4a {
                        a_signed: types[0].signed(),
                        b_signed: types[types.len() - 1].signed(),
                    },
                    "dp2a" => IntOp::Dp2a {
                        hi: has("hi"),
                        a_signed: types[0].signed(),
                        b_signed: types[types.len() - 1].signed(),
                    },
                    "fns" => IntOp::Fns,
                    _ => return perr(line, format!("unsupported instruction `{text}`")),
                };
                if matches!(iop, IntOp::MulWide | IntOp::MadWide) && !matches!(ty.bits(), 16 | 32) {
                    return perr(line, format!("`{text}`: .wide needs a 16- or 32-bit type"));
                }
                if (i.opcode == "add" || i.opcode == "sub") && sat && ty != Ty::S32 {
                    return perr(line, format!("`{text}`: .sat needs .s32"));
                }
                // Source types: shifts and bit positions are u32.
                let n = ops.len();
                if n < 2 {
                    return perr(line, format!("`{text}` needs operands"));
                }
                let d = self.dst(&ops[0], line)?;
                let mut s = [Src::Imm(0); 4];
                for (k, o) in ops[1..].iter().enumerate() {
                    if k >= 4 {
                        return perr(line, format!("`{text}` has too many operands"));
                    }
                    let st = match (iop, k) {
                        (IntOp::MadWide, 2) => ty.widened(),
                        (IntOp::Shl | IntOp::Shr, 1) => Ty::U32,
                        (IntOp::Bfe, 1 | 2) | (IntOp::Bfi, 2 | 3) => Ty::U32,
                        (IntOp::ShfL { .. } | IntOp::ShfR { .. }, 2) => Ty::U32,
                        _ => ty,
                    };
                    s[k] = self.src(o, st, line)?;
                }
                Op::Int { op: iop, ty, d, s }
            }
            "testp" => {
                nops(2)?;
                let what = match mods.first().copied() {
                    Some("finite") => TestP::Finite,
                    Some("infinite") => TestP::Infinite,
                    Some("number") => TestP::Number,
                    Some("notanumber") => TestP::NotANumber,
                    Some("normal") => TestP::Normal,
                    Some("subnormal") => TestP::Subnormal,
                    _ => return perr(line, format!("unsupported instruction `{text}`")),
                };
                let ty = last_ty()?;
                Op::Testp {
                    what,
                    ty,
                    d: self.dst(&ops[0], line)?,
                    a: self.src(&ops[1], ty, line)?,
                }
            }
            "setp" | "set" => {
                let cmp = parse_cmp(&mods).ok_or_else(|| Error::Parse {
                    line,
                    msg: format!("`{text}`: no comparison"),
                })?;
                let bop = mods.iter().find_map(|m| match *m {
                    "and" => Some(BoolOp::And),
                    "or" => Some(BoolOp::Or),
                    "xor" => Some(BoolOp::Xor),
                    _ => None,
                });
                let sty = last_ty()?;
                if ops.len() < 3 {
                    return perr(line, format!("`{text}` needs 3 or 4 operands"));
                }
                let comb = match (bop, ops.get(3)) {
                    (Some(b), Some(c)) => {
                        let (c, neg) = self.pred(c, line)?;
                        Some((b, c, neg))
                    }
                    (None, None) => None,
                    _ => {
                        return perr(
                            line,
                            format!(
                                "`{text}`: boolean operator and predicate operand must come together"
                            ),
                        );
                    }
                };
                if matches!(sty, Ty::F16x2 | Ty::Bf16x2) {
                    return perr(
                        line,
                        format!("unsupported instruction `{text}` (packed comparison)"),
                    );
                }
                let a = self.src(&ops[1], sty, line)?;
                let b = self.src(&ops[2], sty, line)?;
                if i.opcode == "setp" {
                    let (d, d2) = match &ops[0] {
                        Operand::Pair(p, q) => (self.reg(p, line)?, Some(self.reg(q, line)?)),
                        o => (self.dst(o, line)?, None),
                    };
                    Op::Setp {
                        cmp,
                        ty: sty,
                        ftz,
                        d,
                        d2,
                        comb,
                        a,
                        b,
                    }
                } else {
                    if types.len() != 2 {
                        return perr(
                            line,
                            format!("`{text}` needs a destination and a source type"),
                        );
                    }
                    Op::Set {
                        cmp,
                        dty: types[0],
                        sty,
                        ftz,
                        d: self.dst(&ops[0], line)?,
                        comb,
                        a,
                        b,
                    }
                }
            }
            "selp" => {
                nops(4)?;
                let ty = last_ty()?;
                Op::Selp {
                    ty,
                    d: self.dst(&ops[0], line)?,
                    a: self.src(&ops[1], ty, line)?,
                    b: self.src(&ops[2], ty, line)?,
                    c: self.src(&ops[3], Ty::Pred, line)?,
                }
            }
            "slct" => {
                nops(4)?;
                if types.len() != 2 {
                    return perr(line, format!("`{text}` needs two types"));
                }
                Op::Slct {
                    ty: types[0],
                    cty: types[1],
                    ftz,
                    d: self.dst(&ops[0], line)?,
                    a: self.src(&ops[1], types[0], line)?,
                    b: self.src(&ops[2], types[0], line)?,
                    c: self.src(&ops[3], types[1], line)?,
                }
            }
            "cvt" => {
                nops(2)?;
                if types.len() != 2 {
                    return perr(
                        line,
                        format!("unsupported instruction `{text}` (needs two scalar types)"),
                    );
                }
                Op::Cvt {
                    dty: types[0],
                    sty: types[1],
                    rnd,
                    sat,
                    ftz,
                    d: self.dst(&ops[0], line)?,
                    a: self.src(&ops[1], types[1], line)?,
                }
            }
            "cvta" | "isspacep" => {
                nops(2)?;
                let space = mods
                    .iter()
                    .find_map(|m| mem_space(m))
                    .ok_or_else(|| Error::Parse {
                        line,
                        msg: format!("`{text}`: no state space"),
                    })?;
                let ty = types.last().copied().unwrap_or(Ty::U64);
                let d = self.dst(&ops[0], line)?;
                let a = self.src(&ops[1], ty, line)?;
                if i.opcode == "isspacep" {
                    Op::Isspacep { space, d, a }
                } else {
                    Op::Cvta {
                        to: has("to"),
                        space,
                        d,
                        a,
                    }
                }
            }
            "ld" | "ldu" | "st" => {
                let is_ld = i.opcode != "st";
                // A trailing cache-policy operand of `.L2::cache_hint` is ignored.
                let ops = if has("L2::cache_hint") && ops.len() == 3 {
                    &ops[..2]
                } else {
                    &ops[..]
                };
                if ops.len() != 2 {
                    return perr(
                        line,
                        format!("`{text}` expects 2 operands, found {}", ops.len()),
                    );
                }
                let mut space = MemSpace::Generic;
                let mut n = 1u8;
                for m in &mods {
                    if let Some(s) = mem_space(m) {
                        space = s;
                    } else if let Some(v) = m.strip_prefix('v').and_then(|v| v.parse::<u8>().ok()) {
                        n = v;
                    } else if !is_type(m) && !is_cache_mod(m) {
                        return perr(line, format!("unsupported modifier `.{m}` in `{text}`"));
                    }
                }
                if !matches!(n, 1 | 2 | 4) {
                    return perr(line, format!("unsupported vector width in `{text}`"));
                }
                let ty = last_ty()?;
                let (data, addr) = if is_ld {
                    (&ops[0], &ops[1])
                } else {
                    (&ops[1], &ops[0])
                };
                let (space, base, off) = self.addr(addr, space, line)?;
                let elems: Vec<&Operand> = match data {
                    Operand::Vector(v) => v.iter().collect(),
                    o => vec![o],
                };
                if elems.len() != n as usize {
                    return perr(
                        line,
                        format!("`{text}`: {} operands for a vector of {n}", elems.len()),
                    );
                }
                if is_ld {
                    let mut ds = [special::SINK; 4];
                    for (k, e) in elems.iter().enumerate() {
                        ds[k] = self.dst(e, line)?;
                    }
                    Op::Ld {
                        space,
                        ty,
                        n,
                        ds,
                        base,
                        off,
                    }
                } else {
                    let mut srcs = [Src::Imm(0); 4];
                    for (k, e) in elems.iter().enumerate() {
                        srcs[k] = self.src(e, ty, line)?;
                    }
                    Op::St {
                        space,
                        ty,
                        n,
                        srcs,
                        base,
                        off,
                    }
                }
            }
            "atom" | "red" => {
                let is_atom = i.opcode == "atom";
                let mut space = MemSpace::Generic;
                let mut aop = None;
                for m in &mods {
                    if let Some(s) = mem_space(m) {
                        space = s;
                    } else if let Some(o) = atom_op(m) {
                        aop = Some(o);
                    } else if !is_type(m) && !is_cache_mod(m) && !m.starts_with("level::") {
                        return perr(line, format!("unsupported modifier `.{m}` in `{text}`"));
                    }
                }
                let Some(aop) = aop else {
                    return perr(line, format!("`{text}`: no operation"));
                };
                let ty = last_ty()?;
                if ty.bits() < 32 || matches!(ty, Ty::F16x2 | Ty::Bf16x2) {
                    return perr(
                        line,
                        format!(
                            "unsupported instruction `{text}` (atomics on 16-bit and packed types)"
                        ),
                    );
                }
                let want = if is_atom { 3 } else { 2 } + usize::from(aop == AtomOp::Cas);
                nops(want)?;
                let k = usize::from(is_atom);
                let d = if is_atom {
                    Some(self.dst(&ops[0], line)?)
                } else {
                    None
                };
                let (space, base, off) = self.addr(&ops[k], space, line)?;
                let b = self.src(&ops[k + 1], ty, line)?;
                let c = if aop == AtomOp::Cas {
                    self.src(&ops[k + 2], ty, line)?
                } else {
                    Src::Imm(0)
                };
                Op::Atom {
                    space,
                    op: aop,
                    ty,
                    d,
                    base,
                    off,
                    b,
                    c,
                }
            }
            "bra" => {
                nops(1)?;
                let Operand::Name(l) = &ops[0] else {
                    return perr(line, "`bra` needs a label");
                };
                let at = self.push(Op::Nop, guard, line, &text);
                fixups.push((at, l.clone(), line));
                return Ok(());
            }
            "ret" => match self.top {
                Top::Kernel => Op::Exit,
                Top::OutOfLine => Op::Ret,
                Top::Inline => {
                    let at = self.push(Op::Nop, guard, line, &text);
                    rets.push(at);
                    return Ok(());
                }
            },
            "exit" => Op::Exit,
            "trap" => Op::Trap,
            "call" => return self.call(i, guard, &text),
            "bar" | "barrier" if has("warp") => {
                nops(1)?;
                Op::WarpSync {
                    mask: self.src(&ops[0], Ty::B32, line)?,
                }
            }
            "bar" | "barrier" => {
                let kind = if has("arrive") {
                    BarKind::Arrive
                } else if has("red") {
                    if has("popc") {
                        BarKind::RedPopc
                    } else if has("and") {
                        BarKind::RedAnd
                    } else if has("or") {
                        BarKind::RedOr
                    } else {
                        return perr(line, format!("unsupported instruction `{text}`"));
                    }
                } else {
                    BarKind::Sync
                };
                let mut k = 0;
                let mut d = None;
                let red = matches!(kind, BarKind::RedPopc | BarKind::RedAnd | BarKind::RedOr);
                if red {
                    d = Some(self.dst(&ops[0], line)?);
                    k = 1;
                }
                let rest = &ops[k..];
                let (id, count, pred) = match (red, rest.len()) {
                    (false, 0) => (Src::Imm(0), None, None),
                    (false, 1) => (self.src(&rest[0], Ty::U32, line)?, None, None),
                    (false, 2) => (
                        self.src(&rest[0], Ty::U32, line)?,
                        Some(self.src(&rest[1], Ty::U32, line)?),
                        None,
                    ),
                    (true, 2) => (
                        self.src(&rest[0], Ty::U32, line)?,
                        None,
                        Some(self.pred(&rest[1], line)?),
                    ),
                    (true, 3) => (
                        self.src(&rest[0], Ty::U32, line)?,
                        Some(self.src(&rest[1], Ty::U32, line)?),
                        Some(self.pred(&rest[2], line)?),
                    ),
                    _ => return perr(line, format!("`{text}`: wrong number of operands")),
                };
                Op::Bar {
                    kind,
                    id,
                    count,
                    d,
                    pred,
                }
            }
            "shfl" => {
                let mode = if has("up") {
                    ShflMode::Up
                } else if has("down") {
                    ShflMode::Down
                } else if has("bfly") {
                    ShflMode::Bfly
                } else if has("idx") {
                    ShflMode::Idx
                } else {
                    return perr(line, format!("`{text}`: no mode"));
                };
                let (d, p) = match ops.first() {
                    Some(Operand::Pair(a, b)) => (self.reg(a, line)?, Some(self.reg(b, line)?)),
                    Some(o) => (self.dst(o, line)?, None),
                    None => return perr(line, "`shfl` needs operands"),
                };
                let sync = has("sync");
                nops(if sync { 5 } else { 4 })?;
                Op::Shfl {
                    mode,
                    d,
                    p,
                    a: self.src(&ops[1], Ty::B32, line)?,
                    b: self.src(&ops[2], Ty::U32, line)?,
                    c: self.src(&ops[3], Ty::U32, line)?,
                    mask: if sync {
                        self.src(&ops[4], Ty::B32, line)?
                    } else {
                        Src::Imm(0xffff_ffff)
                    },
                }
            }
            "vote" => {
                let mode = if has("all") {
                    VoteMode::All
                } else if has("any") {
                    VoteMode::Any
                } else if has("uni") {
                    VoteMode::Uni
                } else if has("ballot") {
                    VoteMode::Ballot
                } else {
                    return perr(line, format!("`{text}`: no mode"));
                };
                let sync = has("sync");
                nops(if sync { 3 } else { 2 })?;
                let (a, neg) = self.pred(&ops[1], line)?;
                Op::Vote {
                    mode,
                    d: self.dst(&ops[0], line)?,
                    a,
                    neg,
                    mask: if sync {
                        self.src(&ops[2], Ty::B32, line)?
                    } else {
                        Src::Imm(0xffff_ffff)
                    },
                }
            }
            "activemask" => {
                nops(1)?;
                Op::Activemask {
                    d: self.dst(&ops[0], line)?,
                }
            }
            "match" => {
                nops(3)?;
                let ty = last_ty()?;
                let (d, p) = match &ops[0] {
                    Operand::Pair(a, b) => (self.reg(a, line)?, Some(self.reg(b, line)?)),
                    o => (self.dst(o, line)?, None),
                };
                Op::Match {
                    all: has("all"),
                    ty,
                    d,
                    p,
                    a: self.src(&ops[1], ty, line)?,
                    mask: self.src(&ops[2], Ty::B32, line)?,
                }
            }
            "redux" => {
                nops(3)?;
                let ty = last_ty()?;
                let rop = match mods.iter().find_map(|m| match *m {
                    "add" => Some(ReduxOp::Add),
                    "min" => Some(ReduxOp::Min),
                    "max" => Some(ReduxOp::Max),
                    "and" => Some(ReduxOp::And),
                    "or" => Some(ReduxOp::Or),
                    "xor" => Some(ReduxOp::Xor),
                    _ => None,
                }) {
                    Some(r) => r,
                    None => return perr(line, format!("unsupported instruction `{text}`")),
                };
                if ty.float() {
                    return perr(line, format!("unsupported instruction `{text}`"));
                }
                Op::Redux {
                    op: rop,
                    ty,
                    d: self.dst(&ops[0], line)?,
                    a: self.src(&ops[1], ty, line)?,
                    mask: self.src(&ops[2], Ty::B32, line)?,
                }
            }
            "createpolicy" => {
                if ops.is_empty() {
                    return perr(line, "`createpolicy` needs a destination");
                }
                Op::Mov {
                    ty: Ty::B64,
                    d: self.dst(&ops[0], line)?,
                    a: Src::Imm(0),
                }
            }
            "cp" if mods.first() == Some(&"async") => {
                if mods
                    .iter()
                    .any(|m| matches!(*m, "commit_group" | "wait_group" | "wait_all"))
                {
                    // Copies complete when issued, so there is nothing to wait for.
                    Op::Nop
                } else if mods
                    .iter()
                    .any(|m| matches!(*m, "bulk" | "mbarrier" | "tensor"))
                {
                    return perr(line, format!("unsupported instruction `{text}`"));
                } else {
                    if ops.len() < 3 {
                        return perr(
                            line,
                            format!("`{text}` needs a destination, a source and a size"),
                        );
                    }
                    let (_, dst, dst_off) = self.addr(&ops[0], MemSpace::Shared, line)?;
                    let (_, src, src_off) = self.addr(&ops[1], MemSpace::Global, line)?;
                    let size = match &ops[2] {
                        Operand::Imm(Literal::Int(n @ (4 | 8 | 16))) => *n as u32,
                        _ => {
                            return perr(
                                line,
                                format!("`{text}`: the copy size must be 4, 8 or 16"),
                            );
                        }
                    };
                    // An optional source size, then an optional cache policy.
                    let src_size = match ops.get(3) {
                        Some(o) if !has("L2::cache_hint") || ops.len() == 5 => {
                            Some(self.src(o, Ty::U32, line)?)
                        }
                        _ => None,
                    };
                    Op::CpAsync {
                        dst,
                        dst_off,
                        src,
                        src_off,
                        size,
                        src_size,
                    }
                }
            }
            "membar" | "fence" => Op::Fence,
            "nanosleep" => Op::Sleep,
            "brkpt" | "pmevent" | "prefetch" | "prefetchu" | "discard" | "applypriority"
            | "griddepcontrol" => Op::Nop,
            _ => return perr(line, format!("unsupported instruction `{text}`")),
        };
        self.push(op, guard, line, &text);
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn float_op(
        &self,
        op: FOp,
        ty: Ty,
        rnd: Rnd,
        ftz: bool,
        sat: bool,
        ops: &[Operand],
        line: u32,
        text: &str,
    ) -> Result<Op> {
        let want = match op {
            FOp::Fma => 4,
            FOp::Add
            | FOp::Sub
            | FOp::Mul
            | FOp::Div { .. }
            | FOp::Min
            | FOp::Max
            | FOp::Copysign => 3,
            _ => 2,
        };
        if ops.len() != want {
            return perr(
                line,
                format!("`{text}` expects {want} operands, found {}", ops.len()),
            );
        }
        if !matches!(
            ty,
            Ty::F32 | Ty::F64 | Ty::F16 | Ty::Bf16 | Ty::F16x2 | Ty::Bf16x2
        ) {
            return perr(line, format!("unsupported instruction `{text}` (type)"));
        }
        let d = self.dst(&ops[0], line)?;
        let mut s = [Src::Imm(0); 3];
        for (k, o) in ops[1..].iter().enumerate() {
            s[k] = self.src(o, ty, line)?;
        }
        Ok(Op::Float {
            op,
            ty,
            rnd,
            ftz,
            sat,
            d,
            s,
        })
    }
}

fn parse_cmp(mods: &[&str]) -> Option<Cmp> {
    mods.iter().find_map(|m| {
        Some(match *m {
            "eq" => Cmp::Eq,
            "ne" => Cmp::Ne,
            "lt" => Cmp::Lt,
            "le" => Cmp::Le,
            "gt" => Cmp::Gt,
            "ge" => Cmp::Ge,
            "lo" => Cmp::Lo,
            "ls" => Cmp::Ls,
            "hi" => Cmp::Hi,
            "hs" => Cmp::Hs,
            "equ" => Cmp::Equ,
            "neu" => Cmp::Neu,
            "ltu" => Cmp::Ltu,
            "leu" => Cmp::Leu,
            "gtu" => Cmp::Gtu,
            "geu" => Cmp::Geu,
            "num" => Cmp::Num,
            "nan" => Cmp::Nan,
            _ => return None,
        })
    })
}

fn mem_space(m: &str) -> Option<MemSpace> {
    Some(match m {
        "global" => MemSpace::Global,
        "shared" | "shared::cta" => MemSpace::Shared,
        "local" => MemSpace::Local,
        "param" | "param::entry" | "param::func" => MemSpace::Param,
        "const" => MemSpace::Const,
        _ => return None,
    })
}

fn atom_op(m: &str) -> Option<AtomOp> {
    Some(match m {
        "add" => AtomOp::Add,
        "min" => AtomOp::Min,
        "max" => AtomOp::Max,
        "exch" => AtomOp::Exch,
        "cas" => AtomOp::Cas,
        "and" => AtomOp::And,
        "or" => AtomOp::Or,
        "xor" => AtomOp::Xor,
        "inc" => AtomOp::Inc,
        "dec" => AtomOp::Dec,
        _ => return None,
    })
}

/// Cache, ordering and scope qualifiers of memory instructions: accepted, no effect.
fn is_cache_mod(m: &str) -> bool {
    matches!(
        m,
        "ca" | "cg"
            | "cs"
            | "lu"
            | "cv"
            | "wb"
            | "wt"
            | "nc"
            | "volatile"
            | "relaxed"
            | "acquire"
            | "release"
            | "acq_rel"
            | "weak"
            | "mmio"
            | "sc"
            | "cta"
            | "gpu"
            | "sys"
            | "cluster"
            | "noftz"
            | "unified"
    ) || m.contains("::")
}
