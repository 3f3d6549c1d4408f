//! Calls: a `.func` with a body is inlined at the call site; one that can reach itself
//! is emitted once after the kernel and called through the per-thread call stack.

use super::*;
use crate::parse::{Function, Instr, Operand};

/// Layout of an out-of-line (recursive) function.
#[derive(Clone, Default)]
pub(super) struct Ool {
    entry: u32,
    params: Vec<(u32, u32)>,
    rets: Vec<(u32, u32)>,
    regs: (Slot, Slot),
    locals: Vec<(u32, u32)>,
}

/// The functions that can reach themselves through calls.
pub(super) fn recursive_functions(m: &PtxModule) -> HashSet<String> {
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

impl Dec<'_> {
    /// The local-frame offset of an argument `.param` of the built-in function `name`
    /// (`vprintf`, `__assertfail`), which `needs` its arguments.
    fn builtin_arg(&self, o: Option<&Operand>, name: &str, needs: &str, line: u32) -> Result<u32> {
        match o {
            Some(Operand::Name(n)) => match self.lookup(n) {
                Some(Sym::LParam(off) | Sym::Local(off)) => Ok(off),
                _ => perr(
                    line,
                    format!("{name} argument `{n}` must be a `.param` variable"),
                ),
            },
            _ => perr(line, format!("{name} needs {needs}")),
        }
    }

    /// Emits the recursive functions called so far (and those they call) after the kernel,
    /// then fills in the calls.
    pub(super) fn emit_out_of_line(&mut self) -> Result<()> {
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

    pub(super) fn call(
        &mut self,
        i: &Instr,
        guard: Option<(Slot, bool)>,
        text: &str,
    ) -> Result<()> {
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
            let off = |o| self.builtin_arg(o, name, "a format and an argument buffer", line);
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
            let needs = "message, file, line and function arguments";
            let off = |o| self.builtin_arg(o, name, needs, line);
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
