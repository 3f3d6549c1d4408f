//! Syntax tree to executable kernels: name resolution, operand typing, call inlining.
//!
//! Each `.entry` becomes one [`Kernel`]. A `call` to a `.func` with a body is inlined at
//! the call site: the callee gets fresh registers and local memory, its formal `.param`s
//! are bound to the caller's argument `.param` variables (which live in the thread's local
//! frame, as on hardware), and its `ret` becomes a branch to the end of the inlined body.
//! Recursion is refused at load time. A call of a function without a body (`vprintf`,
//! `__assertfail`, ...) loads but faults if executed.

use std::collections::{HashMap, HashSet};

use crate::error::{Error, Result};
use crate::ir::*;
use crate::parse::{Function, Instr, Literal, Operand, PtxModule, Space, Stmt, VarDecl};

/// Base of the generic-address window of shared memory.
pub(crate) const SHARED_WINDOW: u64 = 0x0100_0000;
/// Base of the generic-address window of local memory.
pub(crate) const LOCAL_WINDOW: u64 = 0x0200_0000;
/// Base of the generic-address window of kernel parameters.
pub(crate) const PARAM_WINDOW: u64 = 0x0300_0000;
/// Size of each window.
pub(crate) const WINDOW_SIZE: u64 = 0x0100_0000;

fn perr<T>(line: u32, msg: impl Into<String>) -> Result<T> {
    Err(Error::Parse {
        line,
        msg: msg.into(),
    })
}

fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a.max(1)) * a.max(1)
}

/// Element size, total size and alignment of a declared variable.
pub(crate) fn var_layout(v: &VarDecl) -> Result<(u64, u64, u64)> {
    let Some(t) = Ty::parse(&v.ty).or(match v.ty.as_str() {
        "b128" => Some(Ty::B64),
        "f16x2" | "bf16x2" => Some(Ty::B32),
        _ => None,
    }) else {
        return perr(
            v.line,
            format!("unsupported type `.{}` of `{}`", v.ty, v.name),
        );
    };
    let mut elem = t.bytes() as u64 * v.vec as u64;
    if v.ty == "b128" {
        elem = 16 * v.vec as u64;
    }
    let mut count: u64 = 1;
    for (i, d) in v.dims.iter().enumerate() {
        match d {
            Some(n) => count *= n,
            None if i == 0 => {
                count *= match &v.init {
                    Some(init) => {
                        let inner: u64 = v.dims[1..].iter().map(|d| d.unwrap_or(1)).product();
                        (init.len() as u64 * t.bytes() as u64).div_ceil(elem.max(1) * inner.max(1))
                    }
                    None => 0,
                }
            }
            None => return perr(v.line, "only the first array dimension may be empty"),
        }
    }
    let align = v.align.map(|a| a as u64).unwrap_or(elem.max(1));
    Ok((elem, elem * count, align))
}

/// The initial bytes of a `.global`/`.const` variable (zeros where no initializer).
pub(crate) fn var_init(v: &VarDecl) -> Result<Vec<u8>> {
    let (_, size, _) = var_layout(v)?;
    let mut out = vec![0u8; size as usize];
    if let Some(init) = &v.init {
        let t = Ty::parse(&v.ty).unwrap_or(Ty::B8);
        let w = t.bytes() as usize;
        for (i, lit) in init.iter().enumerate() {
            let bits = imm_bits(*lit, t);
            let at = i * w;
            if at + w > out.len() {
                return perr(
                    v.line,
                    format!("initializer of `{}` is longer than the variable", v.name),
                );
            }
            out[at..at + w].copy_from_slice(&bits.to_le_bytes()[..w]);
        }
    }
    Ok(out)
}

/// A literal converted to the raw bits of an operand of type `t`.
pub(crate) fn imm_bits(l: Literal, t: Ty) -> u64 {
    match (l, t) {
        (Literal::Int(v), Ty::F32) => (v as f32).to_bits() as u64,
        (Literal::Int(v), Ty::F64) => (v as f64).to_bits(),
        (Literal::Int(v), _) => v as u64,
        (Literal::F32(b), Ty::F64) => (f32::from_bits(b) as f64).to_bits(),
        (Literal::F32(b), _) => b as u64,
        (Literal::F64(b), Ty::F32) => (f64::from_bits(b) as f32).to_bits() as u64,
        (Literal::F64(b), _) => b,
        (Literal::Float(x), Ty::F32) => (x as f32).to_bits() as u64,
        (Literal::Float(x), Ty::F64) => x.to_bits(),
        (Literal::Float(x), Ty::F16) => crate::fpu::f32_to_f16(x as f32, Rnd::Rn) as u64,
        (Literal::Float(x), _) => x as i64 as u64,
    }
}

/// The layout of static shared memory of a module.
pub(crate) struct SharedLayout {
    /// (function name or "" for module scope, variable) -> offset.
    pub offsets: HashMap<(String, String), u32>,
    pub static_size: u32,
    pub dyn_offset: u32,
}

pub(crate) fn shared_layout(m: &PtxModule) -> Result<SharedLayout> {
    let mut offsets = HashMap::new();
    let mut size: u64 = 0;
    let mut max_align: u64 = 16;
    let mut place = |scope: &str, v: &VarDecl, size: &mut u64| -> Result<()> {
        if v.is_extern {
            return Ok(());
        }
        let (_, bytes, align) = var_layout(v)?;
        max_align = max_align.max(align);
        *size = align_up(*size, align);
        offsets.insert((scope.to_string(), v.name.clone()), *size as u32);
        *size += bytes;
        Ok(())
    };
    for v in m.vars.iter().filter(|v| v.space == Space::Shared) {
        place("", v, &mut size)?;
    }
    for f in &m.funcs {
        for s in f.body.iter().flatten() {
            if let Stmt::Decl(v) = s
                && v.space == Space::Shared
            {
                place(&f.name, v, &mut size)?;
            }
        }
    }
    if size > WINDOW_SIZE / 2 {
        return perr(
            1,
            format!("{size} bytes of static shared memory is too much"),
        );
    }
    let dyn_offset = align_up(size, max_align) as u32;
    Ok(SharedLayout {
        offsets,
        static_size: size as u32,
        dyn_offset,
    })
}

#[derive(Clone, Copy, Debug)]
enum Sym {
    Reg(Slot),
    Global(u64),
    Shared(u32),
    Local(u32),
    KParam(u32),
    LParam(u32),
    Func,
}

/// What `ret` means in the body being emitted.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Top {
    Kernel,
    Inline,
    OutOfLine,
}

/// Layout of an out-of-line (recursive) function.
#[derive(Clone, Default)]
struct Ool {
    entry: u32,
    params: Vec<(u32, u32)>,
    rets: Vec<(u32, u32)>,
    regs: (Slot, Slot),
    locals: Vec<(u32, u32)>,
}

/// The functions that can reach themselves through calls.
fn recursive_functions(m: &PtxModule) -> HashSet<String> {
    let mut calls: HashMap<&str, Vec<&str>> = HashMap::new();
    for f in &m.funcs {
        let mut out = Vec::new();
        for s in f.body.iter().flatten() {
            if let Stmt::Inst(i) = s
                && i.opcode == "call"
            {
                for o in &i.operands {
                    if let Operand::Name(n) = o {
                        out.push(n.as_str());
                    }
                }
            }
        }
        calls.insert(f.name.as_str(), out);
    }
    let mut rec = HashSet::new();
    for f in &m.funcs {
        let mut seen = HashSet::new();
        let mut stack: Vec<&str> = calls.get(f.name.as_str()).cloned().unwrap_or_default();
        while let Some(g) = stack.pop() {
            if g == f.name {
                rec.insert(f.name.clone());
                break;
            }
            if seen.insert(g) {
                stack.extend(calls.get(g).cloned().unwrap_or_default());
            }
        }
    }
    rec
}

struct Dec<'a> {
    top: Top,
    recursive: &'a HashSet<String>,
    ool: HashMap<String, Ool>,
    ool_queue: Vec<String>,
    call_fixups: Vec<(usize, String)>,
    m: &'a PtxModule,
    globals: &'a HashMap<String, u64>,
    shared: &'a SharedLayout,
    insts: Vec<Inst>,
    texts: Vec<String>,
    text_ids: HashMap<String, u32>,
    nslots: u32,
    local: u64,
    scopes: Vec<HashMap<String, Sym>>,
    inline_stack: Vec<String>,
    fname: String,
}

/// Decodes every `.entry` of a module.
pub(crate) fn decode_module(
    m: &PtxModule,
    globals: &HashMap<String, u64>,
    shared: &SharedLayout,
) -> Result<Vec<Kernel>> {
    let mut out = Vec::new();
    let recursive = recursive_functions(m);
    for f in m.funcs.iter().filter(|f| f.is_entry) {
        let Some(body) = &f.body else { continue };
        let mut d = Dec {
            top: Top::Kernel,
            recursive: &recursive,
            ool: HashMap::new(),
            ool_queue: Vec::new(),
            call_fixups: Vec::new(),
            m,
            globals,
            shared,
            insts: Vec::new(),
            texts: Vec::new(),
            text_ids: HashMap::new(),
            nslots: special::FIRST_FREE,
            local: 0,
            scopes: Vec::new(),
            inline_stack: vec![f.name.clone()],
            fname: f.name.clone(),
        };
        let mut params = Vec::new();
        let mut binds = HashMap::new();
        let mut off: u64 = 0;
        for p in &f.params {
            if p.space != Space::Param {
                return perr(p.line, "kernel parameters must be `.param`");
            }
            let (_, size, align) = var_layout(p)?;
            off = align_up(off, align);
            binds.insert(p.name.clone(), Sym::KParam(off as u32));
            params.push(ParamInfo {
                name: p.name.clone(),
                ty: if p.dims.is_empty() {
                    Ty::parse(&p.ty)
                } else {
                    None
                },
                size: size as u32,
                offset: off as u32,
            });
            off += size;
        }
        d.body(body, binds, Top::Kernel)?;
        // Falling off the end of a kernel exits.
        d.push(Op::Exit, None, f.line, "ret");
        d.emit_out_of_line()?;
        out.push(Kernel {
            name: f.name.clone(),
            insts: d.insts,
            texts: d.texts,
            nslots: d.nslots,
            params,
            param_bytes: off as u32,
            shared_static: shared.static_size,
            dyn_shared_offset: shared.dyn_offset,
            local_bytes: align_up(d.local, 16) as u32,
            maxntid: f.maxntid,
            reqntid: f.reqntid,
        });
    }
    Ok(out)
}

fn is_type(s: &str) -> bool {
    Ty::parse(s).is_some() || matches!(s, "f16x2" | "bf16x2" | "b128")
}

impl<'a> Dec<'a> {
    fn push(&mut self, op: Op, guard: Option<(Slot, bool)>, line: u32, text: &str) -> usize {
        let id = match self.text_ids.get(text) {
            Some(&i) => i,
            None => {
                let i = self.texts.len() as u32;
                self.texts.push(text.to_string());
                self.text_ids.insert(text.to_string(), i);
                i
            }
        };
        self.insts.push(Inst {
            op,
            guard,
            line,
            text: id,
        });
        self.insts.len() - 1
    }

    fn new_slot(&mut self) -> Slot {
        let s = self.nslots;
        self.nslots += 1;
        s
    }

    fn alloc_local(&mut self, v: &VarDecl) -> Result<u32> {
        let (_, size, align) = var_layout(v)?;
        self.local = align_up(self.local, align);
        let at = self.local;
        self.local += size;
        if self.local > WINDOW_SIZE / 64 {
            return perr(v.line, "too much local memory per thread");
        }
        Ok(at as u32)
    }

    fn lookup(&self, name: &str) -> Option<Sym> {
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

    fn declare(&mut self, v: &VarDecl) -> Result<()> {
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

    /// Emits the recursive functions called so far (and those they call) after the kernel,
    /// then fills in the calls.
    fn emit_out_of_line(&mut self) -> Result<()> {
        while let Some(name) = self.ool_queue.pop() {
            let f = self
                .m
                .funcs
                .iter()
                .find(|f| f.name == name && f.body.is_some())
                .expect("queued functions have bodies");
            let mut layout = self.ool[&name].clone();
            layout.entry = self.insts.len() as u32;
            let (r0, l0) = (self.nslots, self.local);
            let mut binds = HashMap::new();
            for (formal, (off, _)) in f
                .params
                .iter()
                .chain(&f.rets)
                .zip(layout.params.iter().chain(&layout.rets))
            {
                binds.insert(formal.name.clone(), Sym::LParam(*off));
            }
            let saved_name = std::mem::replace(&mut self.fname, name.clone());
            let saved_stack = std::mem::replace(&mut self.inline_stack, vec![name.clone()]);
            self.body(f.body.as_ref().expect("checked"), binds, Top::OutOfLine)?;
            self.push(Op::Ret, None, f.line, "ret");
            self.fname = saved_name;
            self.inline_stack = saved_stack;
            layout.regs = (r0, self.nslots);
            layout.locals.push((l0 as u32, self.local as u32));
            self.ool.insert(name, layout);
        }
        for (at, name) in std::mem::take(&mut self.call_fixups) {
            let o = &self.ool[&name];
            if let Op::Call {
                entry,
                regs,
                locals,
                ..
            } = &mut self.insts[at].op
            {
                *entry = o.entry;
                *regs = o.regs;
                *locals = o.locals.clone();
            }
        }
        Ok(())
    }

    /// Emits a function body with the given parameter bindings.
    fn body(&mut self, body: &[Stmt], binds: HashMap<String, Sym>, top: Top) -> Result<()> {
        let saved_top = std::mem::replace(&mut self.top, top);
        let saved = std::mem::take(&mut self.scopes);
        self.scopes.push(binds);
        let mut labels: HashMap<String, u32> = HashMap::new();
        let mut fixups: Vec<(usize, String, u32)> = Vec::new();
        let mut rets: Vec<usize> = Vec::new();
        for s in body {
            match s {
                Stmt::Open => self.scopes.push(HashMap::new()),
                Stmt::Close => {
                    self.scopes.pop();
                }
                Stmt::Decl(v) => self.declare(v)?,
                Stmt::Label(n, line) => {
                    if labels.insert(n.clone(), self.insts.len() as u32).is_some() {
                        return perr(*line, format!("label `{n}` defined twice"));
                    }
                }
                Stmt::Inst(i) => self.inst(i, &mut fixups, &mut rets)?,
            }
        }
        let end = self.insts.len() as u32;
        for (at, label, line) in fixups {
            let Some(&t) = labels.get(&label) else {
                return perr(line, format!("unknown label `{label}`"));
            };
            self.insts[at].op = Op::Bra { target: t };
        }
        for at in rets {
            self.insts[at].op = Op::Bra { target: end };
        }
        self.scopes = saved;
        self.top = saved_top;
        Ok(())
    }

    fn reg(&self, name: &str, line: u32) -> Result<Slot> {
        match self.lookup(name) {
            Some(Sym::Reg(s)) => Ok(s),
            Some(_) => perr(line, format!("`{name}` is not a register")),
            None => perr(line, format!("unknown register `{name}`")),
        }
    }

    fn dst(&self, o: &Operand, line: u32) -> Result<Slot> {
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

    fn src(&self, o: &Operand, t: Ty, line: u32) -> Result<Src> {
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

    fn pred(&self, o: &Operand, line: u32) -> Result<(Src, bool)> {
        match o {
            Operand::Not(n) => Ok((Src::Reg(self.reg(n, line)?), true)),
            _ => Ok((self.src(o, Ty::Pred, line)?, false)),
        }
    }

    /// An address operand: (space actually used, base, offset).
    fn addr(&self, o: &Operand, space: MemSpace, line: u32) -> Result<(MemSpace, Src, i64)> {
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

    fn inst(
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

    fn call(&mut self, i: &Instr, guard: Option<(Slot, bool)>, text: &str) -> Result<()> {
        let line = i.line;
        let ops = &i.operands;
        let (rets, name, args): (&[Operand], &str, &[Operand]) = match ops.as_slice() {
            [Operand::List(r), Operand::Name(f), Operand::List(a), ..] => (r, f, a),
            [Operand::List(r), Operand::Name(f)] => (r, f, &[]),
            [Operand::Name(f), Operand::List(a), ..] => (&[], f, a),
            [Operand::Name(f)] => (&[], f, &[]),
            _ => {
                return perr(
                    line,
                    format!("unsupported form of `{text}` (indirect calls are not supported)"),
                );
            }
        };
        let Some(f) = self
            .m
            .funcs
            .iter()
            .filter(|f| f.name == name)
            .find(|f| f.body.is_some())
            .or_else(|| self.m.funcs.iter().find(|f| f.name == name))
        else {
            return perr(line, format!("call of unknown function `{name}`"));
        };
        let f: &Function = f;
        if name == "vprintf" && f.body.is_none() {
            // printf: the format string and argument buffer pointers are in the argument
            // `.param`s, which live in local memory.
            let off = |o: Option<&Operand>| -> Result<u32> {
                match o {
                    Some(Operand::Name(n)) => match self.lookup(n) {
                        Some(Sym::LParam(off) | Sym::Local(off)) => Ok(off),
                        _ => perr(
                            line,
                            format!("vprintf argument `{n}` must be a `.param` variable"),
                        ),
                    },
                    _ => perr(line, "vprintf needs a format and an argument buffer"),
                }
            };
            let fmt = off(args.first())?;
            let buf = off(args.get(1))?;
            let ret = match rets.first() {
                Some(r) => Some(off(Some(r))?),
                None => None,
            };
            self.push(
                Op::Printf {
                    fmt,
                    args: buf,
                    ret,
                },
                guard,
                line,
                text,
            );
            return Ok(());
        }
        if name == "__assertfail" && f.body.is_none() {
            // assert(): message, file, line, function, char size.
            let off = |o: Option<&Operand>| -> Result<u32> {
                match o {
                    Some(Operand::Name(n)) => match self.lookup(n) {
                        Some(Sym::LParam(off) | Sym::Local(off)) => Ok(off),
                        _ => perr(
                            line,
                            format!("__assertfail argument `{n}` must be a `.param` variable"),
                        ),
                    },
                    _ => perr(
                        line,
                        "__assertfail needs message, file, line and function arguments",
                    ),
                }
            };
            let op = Op::AssertFail {
                msg: off(args.first())?,
                file: off(args.get(1))?,
                line: off(args.get(2))?,
                func: off(args.get(3))?,
            };
            self.push(op, guard, line, text);
            return Ok(());
        }
        let Some(body) = &f.body else {
            self.push(
                Op::Unsupported(format!(
                    "call of external function `{name}`, which the simulator cannot run"
                )),
                guard,
                line,
                text,
            );
            return Ok(());
        };
        if self.recursive.contains(name) {
            return self.call_out_of_line(f, rets, args, guard, line, text);
        }
        if self.inline_stack.iter().any(|n| n == name) {
            return perr(line, format!("recursive call of `{name}` is not supported"));
        }
        if rets.len() != f.rets.len() || args.len() != f.params.len() {
            return perr(
                line,
                format!("call of `{name}` with the wrong number of arguments"),
            );
        }
        let mut binds = HashMap::new();
        for (formal, actual) in f.params.iter().chain(&f.rets).zip(args.iter().chain(rets)) {
            let sym = match actual {
                Operand::Name(n) => match self.lookup(n) {
                    Some(s @ (Sym::LParam(_) | Sym::Local(_))) => s,
                    Some(Sym::Reg(r)) if formal.space == Space::Reg => Sym::Reg(r),
                    _ => {
                        return perr(
                            line,
                            format!("call argument `{n}` must be a `.param` variable"),
                        );
                    }
                },
                _ => return perr(line, "call arguments must be `.param` variables"),
            };
            binds.insert(formal.name.clone(), sym);
        }
        if guard.is_some() {
            // A guarded call: skip the inlined body when the guard is false.
            let skip = self.push(Op::Nop, guard.map(|(s, n)| (s, !n)), line, text);
            self.inline_stack.push(name.to_string());
            let saved_name = std::mem::replace(&mut self.fname, name.to_string());
            self.body(body, binds, Top::Inline)?;
            self.fname = saved_name;
            self.inline_stack.pop();
            self.insts[skip].op = Op::Bra {
                target: self.insts.len() as u32,
            };
            return Ok(());
        }
        self.inline_stack.push(name.to_string());
        let saved_name = std::mem::replace(&mut self.fname, name.to_string());
        self.body(body, binds, Top::Inline)?;
        self.fname = saved_name;
        self.inline_stack.pop();
        Ok(())
    }
}

impl Dec<'_> {
    fn call_out_of_line(
        &mut self,
        f: &Function,
        rets: &[Operand],
        args: &[Operand],
        guard: Option<(Slot, bool)>,
        line: u32,
        text: &str,
    ) -> Result<()> {
        if !self.ool.contains_key(&f.name) {
            let l0 = self.local;
            let mut layout = Ool::default();
            for p in &f.params {
                let (_, size, _) = var_layout(p)?;
                layout.params.push((self.alloc_local(p)?, size as u32));
            }
            for p in &f.rets {
                let (_, size, _) = var_layout(p)?;
                layout.rets.push((self.alloc_local(p)?, size as u32));
            }
            layout.locals.push((l0 as u32, self.local as u32));
            self.ool.insert(f.name.clone(), layout);
            self.ool_queue.push(f.name.clone());
        }
        let layout = self.ool[&f.name].clone();
        let offset_of = |o: &Operand| -> Result<u32> {
            match o {
                Operand::Name(n) => match self.lookup(n) {
                    Some(Sym::LParam(off) | Sym::Local(off)) => Ok(off),
                    _ => perr(
                        line,
                        format!("call argument `{n}` must be a `.param` variable"),
                    ),
                },
                _ => perr(line, "call arguments must be `.param` variables"),
            }
        };
        let mut a = Vec::new();
        for (o, (off, size)) in args.iter().zip(&layout.params) {
            a.push((offset_of(o)?, *off, *size));
        }
        let mut r = Vec::new();
        for (o, (off, size)) in rets.iter().zip(&layout.rets) {
            r.push((*off, offset_of(o)?, *size));
        }
        let at = self.push(
            Op::Call {
                entry: 0,
                args: a,
                rets: r,
                regs: (0, 0),
                locals: Vec::new(),
            },
            guard,
            line,
            text,
        );
        self.call_fixups.push((at, f.name.clone()));
        Ok(())
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
