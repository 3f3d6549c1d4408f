//! PTX text building blocks: typed virtual registers, labels, parameters, and the spelling
//! of scalar types in instructions.
//!
//! Every value gets a fresh virtual register (ptxas allocates the physical ones), except
//! loop-carried values, which are updated in place with `mov`. Registers live in five
//! classes declared at the top of each kernel: `%p` (predicates, `bool`), `%r` (32-bit
//! integers), `%rd` (64-bit integers and addresses), `%f` (`f32`) and `%fd` (`f64`).

use std::fmt::Write as _;

use dpl_core::ir::Scalar;

use crate::plan::KArg;

/// A virtual register holding one scalar of type `ty`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Reg {
    /// The register's name, `%r12`.
    pub name: String,
    /// The scalar it holds (`U64` for addresses and raw 64-bit words, `U32` for raw 32-bit
    /// words, `Bool` for predicates).
    pub ty: Scalar,
}

impl std::fmt::Display for Reg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name)
    }
}

/// Register class index and prefix.
fn class(s: Scalar) -> (usize, &'static str) {
    match s {
        Scalar::Bool => (0, "%p"),
        Scalar::I32 | Scalar::U32 => (1, "%r"),
        Scalar::I64 | Scalar::U64 | Scalar::Usize => (2, "%rd"),
        Scalar::F32 => (3, "%f"),
        Scalar::F64 => (4, "%fd"),
    }
}

/// The type suffix of arithmetic and comparisons: `s32`, `u64`, `f32`, ...
pub(crate) fn arith(s: Scalar) -> &'static str {
    match s {
        Scalar::Bool => "pred",
        Scalar::I32 => "s32",
        Scalar::U32 => "u32",
        Scalar::I64 => "s64",
        Scalar::U64 | Scalar::Usize => "u64",
        Scalar::F32 => "f32",
        Scalar::F64 => "f64",
    }
}

/// The untyped suffix of the same width: `b32` or `b64` (`pred` for `bool`).
pub(crate) fn bits(s: Scalar) -> &'static str {
    match s {
        Scalar::Bool => "pred",
        Scalar::I32 | Scalar::U32 | Scalar::F32 => "b32",
        Scalar::I64 | Scalar::U64 | Scalar::Usize | Scalar::F64 => "b64",
    }
}

/// Width in bits of the register class (`bool` counts as 1).
pub(crate) fn width(s: Scalar) -> u32 {
    match s {
        Scalar::Bool => 1,
        Scalar::I32 | Scalar::U32 | Scalar::F32 => 32,
        _ => 64,
    }
}

/// The type used in memory (loads, stores, buffers): `bool` is one byte.
pub(crate) fn mem(s: Scalar) -> &'static str {
    match s {
        Scalar::Bool => "u8",
        Scalar::I32 | Scalar::U32 => "u32",
        Scalar::I64 | Scalar::U64 | Scalar::Usize => "u64",
        Scalar::F32 => "f32",
        Scalar::F64 => "f64",
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
    /// `.shared` declarations.
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

    /// A fresh label.
    pub fn label(&mut self) -> String {
        self.labels += 1;
        format!("$L{}", self.labels)
    }

    /// Emits one instruction (without the `;`).
    pub fn ins(&mut self, text: impl AsRef<str>) {
        let _ = writeln!(self.body, "\t{};", text.as_ref());
    }

    /// Places a label here.
    pub fn place(&mut self, label: &str) {
        let _ = writeln!(self.body, "{label}:");
    }

    /// Declares a `.shared` array of `bytes` bytes and returns its name.
    pub fn shared(&mut self, bytes: u32) -> String {
        let name = format!("{}_sh{}", self.name, self.shared.len());
        self.shared
            .push(format!("\t.shared .align 8 .b8 {name}[{bytes}];"));
        name
    }

    /// Declares a parameter passed as `arg` and loads it into a register of type `ty`
    /// (`bool` is passed as a `.u32` and turned into a predicate).
    pub fn param(&mut self, ty: Scalar, arg: KArg) -> Reg {
        let pname = format!("{}_p{}", self.name, self.params.len());
        let pty = match ty {
            Scalar::Bool => "u32",
            s => mem(s),
        };
        self.params.push(format!(".param .{pty} {pname}"));
        self.args.push(arg);
        if ty == Scalar::Bool {
            let r = self.reg(Scalar::U32);
            self.ins(format!("ld.param.u32 {r}, [{pname}]"));
            let p = self.reg(Scalar::Bool);
            self.ins(format!("setp.ne.u32 {p}, {r}, 0"));
            p
        } else {
            let r = self.reg(ty);
            self.ins(format!("ld.param.{pty} {r}, [{pname}]"));
            r
        }
    }

    /// Declares a `.u64` parameter passed as `arg` without loading it; returns its name,
    /// for `ld.param` where it is used (so it takes no register in between).
    pub fn param_name(&mut self, arg: KArg) -> String {
        let pname = format!("{}_p{}", self.name, self.params.len());
        self.params.push(format!(".param .u64 {pname}"));
        self.args.push(arg);
        pname
    }

    /// Declares a pointer parameter and converts it to a global address.
    pub fn pointer(&mut self, arg: KArg) -> Reg {
        let r = self.param(Scalar::U64, arg);
        self.ins(format!("cvta.to.global.u64 {r}, {r}"));
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

/// The PTX immediate for a float constant of type `ty` (`0f...` / `0d...` bit patterns,
/// so the value is exact).
pub(crate) fn float_imm(ty: Scalar, x: f64) -> String {
    if ty == Scalar::F32 {
        format!("0f{:08X}", (x as f32).to_bits())
    } else {
        format!("0d{:016X}", x.to_bits())
    }
}
