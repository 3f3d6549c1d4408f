//! Syntax tree to executable kernels: name resolution, operand typing, call inlining.
//!
//! Each `.entry` becomes one [`Kernel`]. A `call` to a `.func` with a body is inlined at
//! the call site: the callee gets fresh registers and local memory, its formal `.param`s
//! are bound to the caller's argument `.param` variables (which live in the thread's local
//! frame, as on hardware), and its `ret` becomes a branch to the end of the inlined body.
//! Recursion is refused at load time. A call of a function without a body (`vprintf`,
//! `__assertfail`, ...) loads but faults if executed.
//!
//! - this module: the decoder's state, kernels and function bodies (scopes, labels);
//! - [`layout`]: sizes, alignment and initial bytes of variables, static shared memory;
//! - [`names`]: declarations and scopes, registers, special registers, operands and
//!   addresses;
//! - [`inst`]: one instruction (opcode, modifiers and operands) to an [`Op`];
//! - [`calls`]: calls, inlined or out of line (recursive functions).

mod calls;
mod inst;
mod layout;
mod names;

use std::collections::{HashMap, HashSet};

use crate::error::{Error, Result};
use crate::ir::*;
use crate::parse::{PtxModule, Space, Stmt};

use calls::{Ool, recursive_functions};
use layout::var_layout;
pub(crate) use layout::{SharedLayout, shared_layout, var_init};

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
}
