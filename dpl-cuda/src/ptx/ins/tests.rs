//! The spelling of each instruction family.

use dpl_core::ir::Scalar;

use crate::ptx::{Addr, AtomOp, Cmp, Ins, Kernel, Rnd, Shfl, Space, Src, Sreg, Sym, Ty};

/// A kernel's registers: `%rd1`, `%rd2`, `%r1`, `%p1`, `%fd1`.
fn regs() -> (Kernel, [crate::ptx::Reg; 5]) {
    let mut k = Kernel::new("t".into(), 32);
    let r = [
        k.reg(Scalar::U64),
        k.reg(Scalar::U64),
        k.reg(Scalar::U32),
        k.reg(Scalar::Bool),
        k.reg(Scalar::F64),
    ];
    (k, r)
}

#[test]
fn arithmetic_and_logic() {
    let (_, [a, b, r, p, f]) = regs();
    assert_eq!(
        Ins::add(Ty::S64, &a, &a, &b).to_string(),
        "add.s64 %rd1, %rd1, %rd2"
    );
    assert_eq!(
        Ins::mul_wide(Ty::U32, &a, &r, 8u32).to_string(),
        "mul.wide.u32 %rd1, %r1, 8"
    );
    assert_eq!(
        Ins::mad_lo(Ty::S64, &a, &b, 8, &a).to_string(),
        "mad.lo.s64 %rd1, %rd2, 8, %rd1"
    );
    assert_eq!(
        Ins::and(Ty::B64, &a, &a, -32).to_string(),
        "and.b64 %rd1, %rd1, -32"
    );
    assert_eq!(Ins::not(Ty::Pred, &p, &p).to_string(), "not.pred %p1, %p1");
    assert_eq!(
        Ins::fma_rn(Ty::F64, &f, &f, &f, Src::float(Scalar::F64, 1.0)).to_string(),
        "fma.rn.f64 %fd1, %fd1, %fd1, 0d3FF0000000000000"
    );
    assert_eq!(
        Ins::setp(Cmp::Neu, Ty::F32, &p, &f, Src::float(Scalar::F32, 0.0)).to_string(),
        "setp.neu.f32 %p1, %fd1, 0f00000000"
    );
    assert_eq!(
        Ins::setp_and(Cmp::Lt, Ty::U64, &p, &a, &b, &p).to_string(),
        "setp.lt.and.u64 %p1, %rd1, %rd2, %p1"
    );
    assert_eq!(
        Ins::selp(Ty::U32, &r, 1, 0, &p).to_string(),
        "selp.u32 %r1, 1, 0, %p1"
    );
    assert_eq!(
        Ins::bfe(Ty::U32, &r, &r, 8, 8).to_string(),
        "bfe.u32 %r1, %r1, 8, 8"
    );
}

#[test]
fn data_movement_and_conversions() {
    let (_, [a, _, r, _, f]) = regs();
    assert_eq!(
        Ins::mov(Ty::U32, &r, Sreg::TidX).to_string(),
        "mov.u32 %r1, %tid.x"
    );
    assert_eq!(
        Ins::mov(Ty::B64, &a, Src::hex(0x1f)).to_string(),
        "mov.b64 %rd1, 0x1f"
    );
    assert_eq!(
        Ins::and(Ty::B64, &a, &a, Src::word(0xF_FFFF_FFFF_FFFF)).to_string(),
        "and.b64 %rd1, %rd1, 0x000FFFFFFFFFFFFF"
    );
    assert_eq!(
        Ins::split64(&r, &r, &a).to_string(),
        "mov.b64 {%r1, %r1}, %rd1"
    );
    assert_eq!(
        Ins::join64(&a, &r, &r).to_string(),
        "mov.b64 %rd1, {%r1, %r1}"
    );
    assert_eq!(
        Ins::cvt(Ty::U64, Ty::U32, &a, &r).to_string(),
        "cvt.u64.u32 %rd1, %r1"
    );
    assert_eq!(
        Ins::cvt_rnd(Rnd::RziSat, Ty::S32, Ty::F64, &r, &f).to_string(),
        "cvt.rzi.sat.s32.f64 %r1, %fd1"
    );
    assert_eq!(
        Ins::cvta_to_global(&a, &a).to_string(),
        "cvta.to.global.u64 %rd1, %rd1"
    );
}

#[test]
fn memory() {
    let (mut k, [a, _, r, _, _]) = regs();
    let sh = k.shared(8);
    assert_eq!(
        Ins::ld(Space::Global, Ty::U64, &a, Addr::from(&a).plus(8)).to_string(),
        "ld.global.u64 %rd1, [%rd1+8]"
    );
    assert_eq!(
        Ins::ld(Space::Shared, Ty::U32, &r, Addr::from(&r).plus(0)).to_string(),
        "ld.shared.u32 %r1, [%r1+0]"
    );
    assert_eq!(
        Ins::st(Space::Shared, Ty::U32, &sh, &r).to_string(),
        "st.shared.u32 [t_sh0], %r1"
    );
    assert_eq!(
        Ins::st(Space::ReleaseGpuGlobal, Ty::U32, &a, 0).to_string(),
        "st.release.gpu.global.u32 [%rd1], 0"
    );
    assert_eq!(
        Ins::ld(Space::Const, Ty::U64, &a, &Sym::new("tab")).to_string(),
        "ld.const.u64 %rd1, [tab]"
    );
}

#[test]
fn control_warp_sync_atomics() {
    let (mut k, [a, _, r, p, _]) = regs();
    let l = k.label();
    assert_eq!(Ins::bra(&l).to_string(), "bra $L1");
    assert_eq!(Ins::bra_uni(&l).when(&p).to_string(), "@%p1 bra.uni $L1");
    assert_eq!(Ins::bra(&l).unless(&p).to_string(), "@!%p1 bra $L1");
    assert_eq!(
        Ins::shfl(Shfl::Down, &r, &r, 1, 31).to_string(),
        "shfl.sync.down.b32 %r1, %r1, 1, 31, 0xffffffff"
    );
    assert_eq!(
        Ins::vote_ballot(&r, &p).to_string(),
        "vote.sync.ballot.b32 %r1, %p1, 0xffffffff"
    );
    assert_eq!(
        Ins::vote_any(&p, &p).to_string(),
        "vote.sync.any.pred %p1, %p1, 0xffffffff"
    );
    assert_eq!(
        Ins::match_any(&r, &r).to_string(),
        "match.any.sync.b32 %r1, %r1, 0xffffffff"
    );
    assert_eq!(Ins::bar_warp_sync().to_string(), "bar.warp.sync 0xffffffff");
    assert_eq!(Ins::bar_sync().to_string(), "bar.sync 0");
    assert_eq!(
        Ins::bar_red_or(&p, &p).to_string(),
        "bar.red.or.pred %p1, 0, %p1"
    );
    assert_eq!(Ins::membar_gl().to_string(), "membar.gl");
    assert_eq!(Ins::nanosleep(64).to_string(), "nanosleep.u32 64");
    assert_eq!(
        Ins::atom(Space::Global, AtomOp::Add, Ty::U32, &r, &a, 1).to_string(),
        "atom.global.add.u32 %r1, [%rd1], 1"
    );
    assert_eq!(
        Ins::atom_cas(Space::AcquireGpuGlobal, Ty::B32, &r, &a, 0, &r).to_string(),
        "atom.acquire.gpu.global.cas.b32 %r1, [%rd1], 0, %r1"
    );
    assert_eq!(
        Ins::red(
            Space::Global,
            AtomOp::Max,
            Ty::U64,
            Addr::from(&a).plus(8),
            &a
        )
        .to_string(),
        "red.global.max.u64 [%rd1+8], %rd1"
    );
}

#[test]
fn kernel_text() {
    let mut k = Kernel::new("t".into(), 64);
    let p = k.param(Scalar::Bool, crate::plan::KArg::ReportKey);
    let l = k.label();
    k.emit(Ins::bra(&l).when(&p));
    k.place(&l);
    let text = k.finish();
    assert!(text.contains("\t.param .u32 t_p0\n"), "{text}");
    assert!(
        text.contains("\tld.param.u32 %r1, [t_p0];\n\tsetp.ne.u32 %p1, %r1, 0;\n"),
        "{text}"
    );
    assert!(
        text.contains("\t@%p1 bra $L1;\n$L1:\n\tret;\n}\n"),
        "{text}"
    );
    assert!(text.contains(".maxntid 64, 1, 1\n"), "{text}");
}
