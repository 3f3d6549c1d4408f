//! Memory layout of declared variables: element and total sizes, alignment, initial
//! bytes, literals as raw bits, and the static shared memory of a module.

use std::collections::HashMap;

use super::{WINDOW_SIZE, align_up, perr};
use crate::error::Result;
use crate::ir::*;
use crate::parse::{Literal, PtxModule, Space, Stmt, VarDecl};

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
