//! Loads and stores of scalar leaves: addresses of elements, `bool` as a byte in memory,
//! `f16`/`bf16` as their 16 bits (held as their `f32` value in registers), shared-array
//! slots.

use super::*;

impl<'f> Gen<'f> {
    /// Element `idx` of each leaf buffer `ptrs` (leaves `ls`), loaded from global memory.
    pub(super) fn load_leaves(
        &mut self,
        k: &mut Kernel,
        ptrs: &[Reg],
        idx: &Reg,
        ls: &[Scalar],
    ) -> Vec<Reg> {
        Self::load_leaves_in(k, Space::Global, ptrs, idx, ls)
    }

    /// [`Gen::load_leaves`] from state space `space` (`ld.relaxed.gpu` where other blocks
    /// of the same launch wrote the values).
    pub(super) fn load_leaves_in(
        k: &mut Kernel,
        space: Space,
        ptrs: &[Reg],
        idx: &Reg,
        ls: &[Scalar],
    ) -> Vec<Reg> {
        ptrs.iter()
            .zip(ls)
            .map(|(p, &s)| {
                let a = Self::addr(k, p, idx, s);
                Self::ld(k, space, &a, s)
            })
            .collect()
    }

    /// The 32-bit address of element `i` of the shared array `array` of `bytes`-byte
    /// elements.
    pub(super) fn shared_at(k: &mut Kernel, array: &Sym, i: &Reg, bytes: u64) -> Reg {
        let a = k.reg(Scalar::U32);
        k.emit(Ins::mov(Ty::U32, &a, array));
        k.emit(Ins::mad_lo(Ty::U32, &a, i, bytes, &a));
        a
    }

    /// The 32-bit address of this thread's element (`%tid.x`) of the shared array `array`
    /// of `bytes`-byte elements.
    pub(super) fn thread_slot(k: &mut Kernel, array: &Sym, bytes: u64) -> Reg {
        let tid = k.tid.clone();
        Self::shared_at(k, array, &tid, bytes)
    }

    /// `base + idx * size_of(ty)`
    pub(super) fn addr(k: &mut Kernel, base: &Reg, idx: &Reg, ty: Scalar) -> Reg {
        let a = k.reg(Scalar::U64);
        let sz = size_of(ty);
        if sz == 1 {
            k.emit(Ins::add(Ty::S64, &a, base, idx));
        } else {
            k.emit(Ins::mad_lo(Ty::S64, &a, idx, sz, base));
        }
        a
    }

    pub(super) fn ld(k: &mut Kernel, space: Space, addr: impl Into<Addr>, ty: Scalar) -> Reg {
        if ty.is_half() {
            // 16 bits in memory, the exact `f32` value in the register.
            let b = k.reg(Scalar::U32);
            k.emit(Ins::ld(space, Ty::U16, &b, addr));
            return k.widen_half(&b, ty);
        }
        if ty == Scalar::Bool {
            let t = k.reg(Scalar::U32);
            k.emit(Ins::ld(space, Ty::U8, &t, addr));
            let p = k.reg(Scalar::Bool);
            k.emit(Ins::setp(Cmp::Ne, Ty::U32, &p, &t, 0));
            p
        } else {
            let r = k.reg(ty);
            k.emit(Ins::ld(space, mem(ty), &r, addr));
            r
        }
    }

    pub(super) fn st(k: &mut Kernel, space: Space, addr: impl Into<Addr>, r: &Reg) {
        if r.ty.is_half() {
            let b = k.half_bits(r);
            k.emit(Ins::st(space, Ty::U16, addr, &b));
            return;
        }
        if r.ty == Scalar::Bool {
            let t = k.reg(Scalar::U32);
            k.emit(Ins::selp(Ty::U32, &t, 1, 0, r));
            k.emit(Ins::st(space, Ty::U8, addr, &t));
        } else {
            k.emit(Ins::st(space, mem(r.ty), addr, r));
        }
    }

    pub(super) fn store(&mut self, k: &mut Kernel, base: &Reg, idx: &Reg, r: &Reg) {
        let a = Self::addr(k, base, idx, r.ty);
        Self::st(k, Space::Global, &a, r);
    }
}
