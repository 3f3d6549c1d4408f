//! Transcendental functions and float remainder in PTX, written for dpl (PTX has no
//! correctly rounded `exp`, `log`, `sin`, ... of its own: `ex2.approx`/`lg2.approx`/
//! `sin.approx` are a few ulp off at best and only exist for `f32`).
//!
//! Everything is computed in `f64`; an `f32` argument is widened exactly and the `f64`
//! result rounded once to `f32` (the `f64` result is within about 2^-52 relative, so the
//! `f32` result is the correctly rounded one except in rare near-halfway cases). The
//! algorithms are the classic ones (Cody–Waite range reduction and polynomials; Tang's
//! and fdlibm's descriptions), with every constant and coefficient derived here:
//!
//! * `exp(x)`: `x = k ln2 + r` with `k = round(x / ln2)` and a two-part `ln2` subtracted
//!   with fused multiply-adds (`|r| <= ln2 / 2`); `exp(r)` is its Taylor polynomial to
//!   degree 13 (truncation below 2^-60), `1 + (r + r^2 q(r))`; the result is scaled by
//!   `2^k` as two exact multiplications (so subnormal results round once).
//! * `ln(x)`: `x = 2^e m` with `m` in `[sqrt(1/2), sqrt(2))` (subnormals scaled by 2^54
//!   first), `f = m - 1`, `s = f / (2 + f)` and `ln(m) = 2 atanh(s) = 2s + 2s^3/3 + ...`
//!   (terms to `s^25`); `s` and the sum are carried as double-doubles, and `e ln2` is
//!   added with a two-part `ln2`, so `ln` is available to about 2^-70 relative (used by
//!   `powf`). `log2(x)` multiplies that double-double by a double-double `1/ln2` and is
//!   exact for powers of two.
//! * `sin`, `cos`: `x = k pi/2 + r`, `|r| <= pi/4`: below 2^20 with a four-part `pi/2`
//!   subtracted with fused multiply-adds (Cody–Waite), from 2^20 on with the Payne–Hanek
//!   reduction (`x 2/pi mod 4` from a 192-bit window of a 1216-bit table of `2/pi`, in
//!   64-bit integer arithmetic, giving `r` as a double-double); then Taylor polynomials
//!   (to `r^19` and `r^20`), the low part of `r` as a first-order correction, and the
//!   quadrant `k mod 4`.
//! * `tanh(x)`: from `t = expm1(2|x|)` (the `exp` reduction without the final `1 +`):
//!   `t / (t + 2)` below 1, `1 - 2 / (t + 2)` above, 1 from 22 on, sign of `x`.
//! * `powf(x, y)`: `exp(y ln|x|)` with `ln|x|` as a double-double, the product `y ln|x|`
//!   as a double-double (exact error term from a fused multiply-add) whose low part joins
//!   `exp`'s reduced argument; then the IEEE special cases (`pow(x, 0) = 1`,
//!   `pow(1, y) = 1`, zeros, infinities, negative `x` with integer / odd / non-integer `y`).
//! * `x % y` (`fmod`, exact in IEEE arithmetic): long division on the magnitudes,
//!   subtracting `|y| 2^d` with `d` the largest that fits (each subtraction is exact), at
//!   most one step per binade between `|x|` and `|y|`; the sign of `x`.
//!
//! Accuracy against Rust's `std` (glibc's libm), measured by the tests on the simulator:
//! `f32` results agree bit for bit in the tested ranges except rare 1-ulp differences;
//! `f64` results are within 2 ulp (`exp`, `ln`, `log2`, `sin`, `cos`, `tanh`, `powf`).
//! `%` is bit-exact for both.

use super::*;
use crate::ptx::F64;

const F: Scalar = Scalar::F64;

/// `1/n!` for `n` in `2..=13`, highest first (for Horner).
fn exp_coeffs() -> Vec<f64> {
    let mut f = 1.0f64;
    let mut v = Vec::new();
    for n in 1..=13u32 {
        f *= f64::from(n);
        if n >= 2 {
            v.push(1.0 / f);
        }
    }
    v.reverse();
    v
}

/// `ln 2` in two parts: the high part has 21 trailing zero bits, so `k * LN2_HI` is exact
/// for `|k| < 2^21`.
const LN2_HI: f64 = f64::from_bits(0x3FE6_2E42_FEE0_0000);
const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
/// `1 / ln 2` in two parts.
const INV_LN2_HI: f64 = std::f64::consts::LOG2_E;
const INV_LN2_LO: f64 = 2.035_527_374_093_103_3e-17;

/// The reduction `x = k ln2 + r` (`r` corrected by `lo`); returns `(k as s32, r)` with
/// `k` clamped to `-1100..=1100`.
fn exp_reduce(m: &mut F64<'_>, x: &Reg, lo: Option<&Reg>) -> (Reg, Reg) {
    let il = m.c(std::f64::consts::LOG2_E);
    let t = m.mul(x, &il);
    let kf = m.k.reg(F);
    m.k.emit(Ins::cvt_rnd(Rnd::Rni, Ty::F64, Ty::F64, &kf, &t));
    m.k.emit(Ins::max(Ty::F64, &kf, &kf, Src::float(F, -1100.0)));
    m.k.emit(Ins::min(Ty::F64, &kf, &kf, Src::float(F, 1100.0)));
    let nk = m.neg(&kf);
    let hi = m.c(LN2_HI);
    let lo2 = m.c(LN2_LO);
    let r = m.fma(&nk, &hi, x);
    let mut r = m.fma(&nk, &lo2, &r);
    if let Some(l) = lo {
        r = m.add(&r, l);
    }
    let k = m.k.reg(Scalar::I32);
    m.k.emit(Ins::cvt_rnd(Rnd::Rni, Ty::S32, Ty::F64, &k, &kf));
    (k, r)
}

/// `exp(r) - 1` for the reduced `r`: `r + r^2 q(r)`.
fn expm1_poly(m: &mut F64<'_>, r: &Reg) -> Reg {
    let q = m.horner(r, &exp_coeffs());
    let r2 = m.mul(r, r);
    m.fma(&q, &r2, r)
}

/// `exp(x + lo)` (`lo` a small correction), with overflow to infinity, underflow to 0
/// and NaN kept.
fn exp_dd(m: &mut F64<'_>, x: &Reg, lo: Option<&Reg>) -> Reg {
    let (k, r) = exp_reduce(m, x, lo);
    let p = expm1_poly(m, &r);
    let one = m.c(1.0);
    let e = m.add(&one, &p);
    // 2^k as two exact factors 2^(k>>1) and 2^(k - (k>>1)).
    let k1 = m.k.reg(Scalar::I32);
    m.k.emit(Ins::shr(Ty::S32, &k1, &k, 1));
    let k2 = m.k.reg(Scalar::I32);
    m.k.emit(Ins::sub(Ty::S32, &k2, &k, &k1));
    let s1 = m.pow2(&k1);
    let s2 = m.pow2(&k2);
    let y = m.mul(&e, &s1);
    let y = m.mul(&y, &s2);
    let big = m.cmpc(Cmp::Gt, x, 709.8);
    let y = m.selc(&big, f64::INFINITY, &y);
    let small = m.cmpc(Cmp::Lt, x, -745.2);
    let y = m.selc(&small, 0.0, &y);
    let nan = m.cmp(Cmp::Nan, x, x);
    m.sel(&nan, x, &y)
}

/// `ln(x)` as a double-double `(hi, lo)` for finite `x > 0` (anything for other `x`).
fn ln_dd(m: &mut F64<'_>, x: &Reg) -> (Reg, Reg) {
    // Subnormals: scale by 2^54.
    let tiny = m.cmpc(Cmp::Lt, x, f64::MIN_POSITIVE);
    let scale = m.c(18_014_398_509_481_984.0);
    let xs = m.mul(x, &scale);
    let xv = m.sel(&tiny, &xs, x);
    let bits = m.k.reg(Scalar::U64);
    m.k.emit(Ins::mov(Ty::B64, &bits, &xv));
    let ex = m.k.reg(Scalar::U64);
    m.k.emit(Ins::shr(Ty::U64, &ex, &bits, 52));
    let e = m.k.reg(Scalar::I32);
    m.k.emit(Ins::cvt(Ty::U32, Ty::U64, &e, &ex));
    m.k.emit(Ins::and(Ty::B32, &e, &e, 2047));
    m.k.emit(Ins::sub(Ty::S32, &e, &e, 1023));
    let adj = m.k.reg(Scalar::I32);
    m.k.emit(Ins::selp(Ty::S32, &adj, 54, 0, &tiny));
    m.k.emit(Ins::sub(Ty::S32, &e, &e, &adj));
    let mb = m.k.reg(Scalar::U64);
    m.k.emit(Ins::and(Ty::B64, &mb, &bits, Src::word(0x000FFFFFFFFFFFFF)));
    m.k.emit(Ins::or(Ty::B64, &mb, &mb, Src::word(0x3FF0000000000000)));
    let m1 = m.k.reg(F);
    m.k.emit(Ins::mov(Ty::B64, &m1, &mb));
    let over = m.cmpc(Cmp::Gt, &m1, std::f64::consts::SQRT_2);
    let half = m.c(0.5);
    let mh = m.mul(&m1, &half);
    let mv = m.sel(&over, &mh, &m1);
    let inc = m.k.reg(Scalar::I32);
    m.k.emit(Ins::selp(Ty::S32, &inc, 1, 0, &over));
    m.k.emit(Ins::add(Ty::S32, &e, &e, &inc));
    let one = m.c(1.0);
    let f = m.sub(&mv, &one);
    // d = 2 + f as a double-double, s = f / d as a double-double.
    let two = m.c(2.0);
    let d = m.add(&two, &f);
    let dm2 = m.sub(&d, &two);
    let dlo = m.sub(&f, &dm2);
    let s = m.div(&f, &d);
    let ns = m.neg(&s);
    let res = m.fma(&ns, &d, &f);
    let res = m.fma(&ns, &dlo, &res);
    let slo = m.div(&res, &d);
    // T = 2 s^3 (1/3 + s^2/5 + ...), terms to s^25.
    let z = m.mul(&s, &s);
    let cs: Vec<f64> = (1..=12).rev().map(|j| 2.0 / f64::from(2 * j + 1)).collect();
    let poly = m.horner(&z, &cs);
    let sz = m.mul(&s, &z);
    let t = m.mul(&sz, &poly);
    let s2 = m.add(&s, &s);
    let slo2 = m.add(&slo, &slo);
    let l = m.add(&slo2, &t);
    let h = m.add(&s2, &l);
    let hd = m.sub(&h, &s2);
    let hlo = m.sub(&l, &hd);
    // + e ln2 (two parts; e * LN2_HI exact).
    let ef = m.k.reg(F);
    m.k.emit(Ins::cvt_rnd(Rnd::Rn, Ty::F64, Ty::S32, &ef, &e));
    let lh = m.c(LN2_HI);
    let ll = m.c(LN2_LO);
    let eh = m.mul(&ef, &lh);
    let el = m.mul(&ef, &ll);
    let sum = m.add(&eh, &h);
    let bb = m.sub(&sum, &eh);
    let a1 = m.sub(&sum, &bb);
    let a2 = m.sub(&eh, &a1);
    let b2 = m.sub(&h, &bb);
    let err = m.add(&a2, &b2);
    let lo = m.add(&err, &hlo);
    let lo = m.add(&lo, &el);
    let hi = m.add(&sum, &lo);
    let hd2 = m.sub(&hi, &sum);
    let lo = m.sub(&lo, &hd2);
    (hi, lo)
}

/// The special values of `ln`/`log2`: NaN below 0 and for NaN, `-inf` at 0, `inf` at
/// `inf`.
fn log_specials(m: &mut F64<'_>, x: &Reg, y: &Reg) -> Reg {
    let zero = m.cmpc(Cmp::Eq, x, 0.0);
    let y = m.selc(&zero, f64::NEG_INFINITY, y);
    let inf = m.cmpc(Cmp::Eq, x, f64::INFINITY);
    let y = m.selc(&inf, f64::INFINITY, &y);
    let neg = m.cmpc(Cmp::Lt, x, 0.0);
    let y = m.selc(&neg, f64::NAN, &y);
    let nan = m.cmp(Cmp::Nan, x, x);
    m.sel(&nan, x, &y)
}

fn ln(m: &mut F64<'_>, x: &Reg) -> Reg {
    let (hi, _) = ln_dd(m, x);
    log_specials(m, x, &hi)
}

fn log2(m: &mut F64<'_>, x: &Reg) -> Reg {
    let (hi, lo) = ln_dd(m, x);
    let ih = m.c(INV_LN2_HI);
    let il = m.c(INV_LN2_LO);
    let p = m.mul(&hi, &ih);
    let np = m.neg(&p);
    let perr = m.fma(&hi, &ih, &np);
    let c1 = m.mul(&hi, &il);
    let c2 = m.mul(&lo, &ih);
    let corr = m.add(&c1, &c2);
    let corr = m.add(&perr, &corr);
    let y = m.add(&p, &corr);
    log_specials(m, x, &y)
}

/// `pi/2` in four parts of 33, 33, 33 and 53 bits (fdlibm's split).
const PIO2: [f64; 4] = [
    1.570_796_326_734_125_6,
    6.077_100_506_303_966e-11,
    2.022_266_248_711_166_5e-21,
    8.478_427_660_368_9e-32,
];

/// The name of the module-scope table of the bits of `2/pi` (see [`TWO_OVER_PI`]).
pub(crate) const TWO_OVER_PI_NAME: &str = "dpl_two_over_pi";

/// The bits of `2/pi` after the binary point, 64 per word, after one word of zeros
/// (`word j = floor(2^(64 j) 2/pi) mod 2^64`), enough for the Payne–Hanek reduction of
/// every finite `f64`. Computed with integer arithmetic from Machin's formula.
pub(crate) const TWO_OVER_PI: [u64; 20] = [
    0x0000000000000000,
    0xA2F9836E4E441529,
    0xFC2757D1F534DDC0,
    0xDB6295993C439041,
    0xFE5163ABDEBBC561,
    0xB7246E3A424DD2E0,
    0x06492EEA09D1921C,
    0xFE1DEB1CB129A73E,
    0xE88235F52EBB4484,
    0xE99C7026B45F7E41,
    0x3991D639835339F4,
    0x9C845F8BBDF9283B,
    0x1FF897FFDE05980F,
    0xEF2F118B5A0A6D1F,
    0x6D367ECF27CB09B7,
    0x4F463F669E5FEA2D,
    0x7527BAC7EBE5F17B,
    0x3D0739F78A5292EA,
    0x6BFB5FB11F8D5D08,
    0x56033046FC7B6BAB,
];

/// The module-scope declaration of [`TWO_OVER_PI`].
pub(crate) fn two_over_pi_decl() -> String {
    const_table(&Sym::new(TWO_OVER_PI_NAME), &TWO_OVER_PI)
}

/// `pi/2` as a double-double.
const PIO2_HI: f64 = std::f64::consts::FRAC_PI_2;
const PIO2_LO: f64 = 6.123_233_995_736_766e-17;

/// A 64-bit integer register of `m`.
fn u64r(m: &mut F64<'_>) -> Reg {
    m.k.reg(Scalar::U64)
}

/// `(a << sh) | (b >> (64 - sh))` for `sh` in `0..64`.
fn funnel(m: &mut F64<'_>, a: &Reg, b: &Reg, sh: &Reg, inv: &Reg, zero_sh: &Reg) -> Reg {
    let x = u64r(m);
    m.k.emit(Ins::shl(Ty::B64, &x, a, sh));
    let y = u64r(m);
    m.k.emit(Ins::shr(Ty::B64, &y, b, inv));
    m.k.emit(Ins::selp(Ty::B64, &y, 0, &y, zero_sh));
    m.k.emit(Ins::or(Ty::B64, &x, &x, &y));
    x
}

/// Payne–Hanek: for finite `a >= 2^20`, `a = q pi/2 + (r + rl)` with `|r| <= pi/4`;
/// returns `(r, rl, q)` (`q` an `s32`, only `q mod 4` meaningful). `a = M 2^E` with a
/// 53-bit integer `M`; the 192 bits of `2/pi` from position `E - 1` on, times `M`, give
/// `a 2/pi mod 4` with 128 fraction bits (the bits before contribute multiples of 4, the
/// bits after less than 2^-130).
fn payne_hanek(m: &mut F64<'_>, a: &Reg) -> (Reg, Reg, Reg) {
    let bits = u64r(m);
    m.k.emit(Ins::mov(Ty::B64, &bits, a));
    let mant = u64r(m);
    m.k.emit(Ins::and(
        Ty::B64,
        &mant,
        &bits,
        Src::word(0x000FFFFFFFFFFFFF),
    ));
    m.k.emit(Ins::or(
        Ty::B64,
        &mant,
        &mant,
        Src::word(0x0010000000000000),
    ));
    let ex = u64r(m);
    m.k.emit(Ins::shr(Ty::U64, &ex, &bits, 52));
    // Table bit position of bit E - 1 of 2/pi: E - 1 + 63 = ex - 1075 + 62.
    let pos = u64r(m);
    m.k.emit(Ins::sub(Ty::S64, &pos, &ex, 1013));
    let w = u64r(m);
    m.k.emit(Ins::shr(Ty::U64, &w, &pos, 6));
    let sh64 = u64r(m);
    m.k.emit(Ins::and(Ty::B64, &sh64, &pos, 63));
    let sh = m.k.reg(Scalar::U32);
    m.k.emit(Ins::cvt(Ty::U32, Ty::U64, &sh, &sh64));
    let inv = m.k.reg(Scalar::U32);
    m.k.emit(Ins::sub(Ty::S32, &inv, 64, &sh));
    let zero_sh = m.k.reg(Scalar::Bool);
    m.k.emit(Ins::setp(Cmp::Eq, Ty::U32, &zero_sh, &sh, 0));
    let tab = u64r(m);
    m.k.emit(Ins::mov(Ty::U64, &tab, &Sym::new(TWO_OVER_PI_NAME)));
    let addr = u64r(m);
    m.k.emit(Ins::mad_lo(Ty::U64, &addr, &w, 8, &tab));
    let t: Vec<Reg> = (0..4)
        .map(|j| {
            let r = u64r(m);
            m.k.emit(Ins::ld(
                Space::Const,
                Ty::U64,
                &r,
                Addr::from(&addr).plus(8 * j),
            ));
            r
        })
        .collect();
    let w2 = funnel(m, &t[0], &t[1], &sh, &inv, &zero_sh);
    let w1 = funnel(m, &t[1], &t[2], &sh, &inv, &zero_sh);
    let w0 = funnel(m, &t[2], &t[3], &sh, &inv, &zero_sh);
    let mul = |m: &mut F64<'_>, hi: bool, b: &Reg| {
        let r = u64r(m);
        m.k.emit(if hi {
            Ins::mul_hi(Ty::U64, &r, &mant, b)
        } else {
            Ins::mul_lo(Ty::U64, &r, &mant, b)
        });
        r
    };
    let lo0 = mul(m, false, &w0);
    let hi0 = mul(m, true, &w0);
    let lo1 = mul(m, false, &w1);
    let hi1 = mul(m, true, &w1);
    let lo2 = mul(m, false, &w2);
    // word1 = hi0 + lo1 (carry c1), word2 = hi1 + lo2 + c1 (mod 2^64).
    let word1 = u64r(m);
    m.k.emit(Ins::add(Ty::S64, &word1, &hi0, &lo1));
    let c1 = m.k.reg(Scalar::Bool);
    m.k.emit(Ins::setp(Cmp::Lt, Ty::U64, &c1, &word1, &hi0));
    let word2 = u64r(m);
    m.k.emit(Ins::add(Ty::S64, &word2, &hi1, &lo2));
    let c1v = u64r(m);
    m.k.emit(Ins::selp(Ty::U64, &c1v, 1, 0, &c1));
    m.k.emit(Ins::add(Ty::S64, &word2, &word2, &c1v));
    // Integer part mod 4 and 128 fraction bits.
    let q64 = u64r(m);
    m.k.emit(Ins::shr(Ty::U64, &q64, &word2, 62));
    let fhi = u64r(m);
    let tmp = u64r(m);
    m.k.emit(Ins::shl(Ty::B64, &fhi, &word2, 2));
    m.k.emit(Ins::shr(Ty::U64, &tmp, &word1, 62));
    m.k.emit(Ins::or(Ty::B64, &fhi, &fhi, &tmp));
    let flo = u64r(m);
    let tmp2 = u64r(m);
    m.k.emit(Ins::shl(Ty::B64, &flo, &word1, 2));
    m.k.emit(Ins::shr(Ty::U64, &tmp2, &lo0, 62));
    m.k.emit(Ins::or(Ty::B64, &flo, &flo, &tmp2));
    // A fraction of a half or more: one more quadrant, and the fraction minus one.
    let up = m.k.reg(Scalar::Bool);
    m.k.emit(Ins::setp(Cmp::Lt, Ty::S64, &up, &fhi, 0));
    let nlo = u64r(m);
    m.k.emit(Ins::neg(Ty::S64, &nlo, &flo));
    let nhi = u64r(m);
    m.k.emit(Ins::not(Ty::B64, &nhi, &fhi));
    let lz0 = m.k.reg(Scalar::Bool);
    m.k.emit(Ins::setp(Cmp::Eq, Ty::U64, &lz0, &flo, 0));
    let inc = u64r(m);
    m.k.emit(Ins::selp(Ty::U64, &inc, 1, 0, &lz0));
    m.k.emit(Ins::add(Ty::S64, &nhi, &nhi, &inc));
    m.k.emit(Ins::selp(Ty::B64, &fhi, &nhi, &fhi, &up));
    m.k.emit(Ins::selp(Ty::B64, &flo, &nlo, &flo, &up));
    let upv = u64r(m);
    m.k.emit(Ins::selp(Ty::U64, &upv, 1, 0, &up));
    m.k.emit(Ins::add(Ty::S64, &q64, &q64, &upv));
    // Normalize the 128-bit fraction.
    let hz = m.k.reg(Scalar::Bool);
    m.k.emit(Ins::setp(Cmp::Eq, Ty::U64, &hz, &fhi, 0));
    m.k.emit(Ins::selp(Ty::B64, &fhi, &flo, &fhi, &hz));
    m.k.emit(Ins::selp(Ty::B64, &flo, 0, &flo, &hz));
    let extra = m.k.reg(Scalar::U32);
    m.k.emit(Ins::selp(Ty::U32, &extra, 64, 0, &hz));
    let lz = m.k.reg(Scalar::U32);
    m.k.emit(Ins::clz(Ty::B64, &lz, &fhi));
    m.k.emit(Ins::min(Ty::U32, &lz, &lz, 63));
    let ilz = m.k.reg(Scalar::U32);
    m.k.emit(Ins::sub(Ty::S32, &ilz, 64, &lz));
    let zlz = m.k.reg(Scalar::Bool);
    m.k.emit(Ins::setp(Cmp::Eq, Ty::U32, &zlz, &lz, 0));
    let nh = funnel(m, &fhi, &flo, &lz, &ilz, &zlz);
    let nl = u64r(m);
    m.k.emit(Ins::shl(Ty::B64, &nl, &flo, &lz));
    let top = u64r(m);
    m.k.emit(Ins::shr(Ty::U64, &top, &nh, 11));
    let next = u64r(m);
    let t3 = u64r(m);
    m.k.emit(Ins::shl(Ty::B64, &next, &nh, 53));
    m.k.emit(Ins::shr(Ty::U64, &t3, &nl, 11));
    m.k.emit(Ins::or(Ty::B64, &next, &next, &t3));
    let tot = m.k.reg(Scalar::I32);
    m.k.emit(Ins::add(Ty::S32, &tot, &lz, &extra));
    let e1 = m.k.reg(Scalar::I32);
    m.k.emit(Ins::sub(Ty::S32, &e1, -53, &tot));
    let e2 = m.k.reg(Scalar::I32);
    m.k.emit(Ins::sub(Ty::S32, &e2, -117, &tot));
    let s1 = m.pow2(&e1);
    let s2 = m.pow2(&e2);
    let fa = m.k.reg(F);
    m.k.emit(Ins::cvt_rnd(Rnd::Rn, Ty::F64, Ty::U64, &fa, &top));
    let fb = m.k.reg(F);
    m.k.emit(Ins::cvt_rnd(Rnd::Rn, Ty::F64, Ty::U64, &fb, &next));
    let fh = m.mul(&fa, &s1);
    let fl = m.mul(&fb, &s2);
    // (fh + fl) pi/2 as a double-double.
    let ph = m.c(PIO2_HI);
    let pl = m.c(PIO2_LO);
    let rh = m.mul(&fh, &ph);
    let nrh = m.neg(&rh);
    let err = m.fma(&fh, &ph, &nrh);
    let c1 = m.mul(&fh, &pl);
    let c2 = m.mul(&fl, &ph);
    let cs = m.add(&c1, &c2);
    let rl = m.add(&err, &cs);
    let r = m.add(&rh, &rl);
    let d = m.sub(&r, &rh);
    let rl = m.sub(&rl, &d);
    let nr = m.neg(&r);
    let nrl = m.neg(&rl);
    let r = m.sel(&up, &nr, &r);
    let rl = m.sel(&up, &nrl, &rl);
    let q = m.k.reg(Scalar::I32);
    m.k.emit(Ins::cvt(Ty::U32, Ty::U64, &q, &q64));
    (r, rl, q)
}

/// `sin(x)` or `cos(x)`.
fn sincos(m: &mut F64<'_>, x: &Reg, cos: bool) -> Reg {
    let r = m.k.reg(F);
    let rl = m.k.reg(F);
    let q = m.k.reg(Scalar::I32);
    let ax = m.abs(x);
    let huge = m.cmpc(Cmp::Ge, &ax, 1_048_576.0);
    let fin = m.cmpc(Cmp::Lt, &ax, f64::INFINITY);
    let ph = m.and(&huge, &fin);
    let (lph, join) = (m.k.label(), m.k.label());
    m.k.emit(Ins::bra(&lph).when(&ph));
    // |x| < 2^20 (or not finite): Cody–Waite with a four-part pi/2.
    let tp = m.c(std::f64::consts::FRAC_2_PI);
    let t = m.mul(x, &tp);
    let kf = m.k.reg(F);
    m.k.emit(Ins::cvt_rnd(Rnd::Rni, Ty::F64, Ty::F64, &kf, &t));
    let nk = m.neg(&kf);
    let mut rc = x.clone();
    for p in PIO2 {
        let pc = m.c(p);
        rc = m.fma(&nk, &pc, &rc);
    }
    m.k.emit(Ins::mov(Ty::F64, &r, &rc));
    m.k.emit(Ins::mov(Ty::F64, &rl, Src::float(F, 0.0)));
    m.k.emit(Ins::cvt_rnd(Rnd::Rzi, Ty::S32, Ty::F64, &q, &kf));
    m.k.emit(Ins::bra(&join));
    m.k.place(&lph);
    let (pr, prl, pq) = payne_hanek(m, &ax);
    // x < 0: x = -q pi/2 - (r + rl).
    let neg = m.cmpc(Cmp::Lt, x, 0.0);
    let nr = m.neg(&pr);
    let nrl = m.neg(&prl);
    let sr = m.sel(&neg, &nr, &pr);
    let srl = m.sel(&neg, &nrl, &prl);
    m.k.emit(Ins::mov(Ty::F64, &r, &sr));
    m.k.emit(Ins::mov(Ty::F64, &rl, &srl));
    let nq = m.k.reg(Scalar::I32);
    m.k.emit(Ins::neg(Ty::S32, &nq, &pq));
    m.k.emit(Ins::selp(Ty::B32, &q, &nq, &pq, &neg));
    m.k.place(&join);
    let z = m.mul(&r, &r);
    // sin(r) = r + r z S(z)
    let mut f = 1.0f64;
    let mut sc = Vec::new();
    let mut cc = Vec::new();
    for n in 1..=20u32 {
        f *= f64::from(n);
        let sign = if (n / 2) % 2 == 1 { -1.0 } else { 1.0 };
        if n % 2 == 1 && n >= 3 {
            sc.push(sign / f);
        } else if n % 2 == 0 && n >= 4 {
            cc.push(sign / f);
        }
    }
    sc.reverse();
    cc.reverse();
    let sp = m.horner(&z, &sc);
    let rz = m.mul(&r, &z);
    let sinr = m.fma(&rz, &sp, &r);
    // cos(r) = w + (((1 - w) - z/2) + z^2 C(z)), w = 1 - z/2
    let cp = m.horner(&z, &cc);
    let half = m.c(0.5);
    let hz = m.mul(&z, &half);
    let one = m.c(1.0);
    let w = m.sub(&one, &hz);
    let ow = m.sub(&one, &w);
    let tail = m.sub(&ow, &hz);
    let z2 = m.mul(&z, &z);
    let tail = m.fma(&z2, &cp, &tail);
    let cosr = m.add(&w, &tail);
    // The low part: sin(r + rl) ~ sin r + rl cos r, cos(r + rl) ~ cos r - rl sin r.
    let sinr2 = m.fma(&rl, &cosr, &sinr);
    let nrl = m.neg(&rl);
    let cosr = m.fma(&nrl, &sinr, &cosr);
    let sinr = sinr2;
    // Quadrant.
    if cos {
        m.k.emit(Ins::add(Ty::S32, &q, &q, 1));
    }
    m.k.emit(Ins::and(Ty::B32, &q, &q, 3));
    let odd = m.k.reg(Scalar::Bool);
    let t1 = m.k.reg(Scalar::U32);
    m.k.emit(Ins::and(Ty::B32, &t1, &q, 1));
    m.k.emit(Ins::setp(Cmp::Ne, Ty::U32, &odd, &t1, 0));
    let negp = m.k.reg(Scalar::Bool);
    let t2 = m.k.reg(Scalar::U32);
    m.k.emit(Ins::and(Ty::B32, &t2, &q, 2));
    m.k.emit(Ins::setp(Cmp::Ne, Ty::U32, &negp, &t2, 0));
    let v = m.sel(&odd, &cosr, &sinr);
    let nv = m.neg(&v);
    let y = m.sel(&negp, &nv, &v);
    if cos {
        y
    } else {
        // sin(+-0) = +-0 (the reduction would give +0 for -0).
        let zero = m.cmpc(Cmp::Eq, x, 0.0);
        m.sel(&zero, x, &y)
    }
}

fn tanh(m: &mut F64<'_>, x: &Reg) -> Reg {
    let a = m.abs(x);
    let a2 = m.add(&a, &a);
    let (k, r) = exp_reduce(m, &a2, None);
    let p = expm1_poly(m, &r);
    let s = m.pow2(&k);
    let one = m.c(1.0);
    let sm1 = m.sub(&s, &one);
    let t = m.fma(&s, &p, &sm1);
    let two = m.c(2.0);
    let tp2 = m.add(&t, &two);
    let small = m.div(&t, &tp2);
    let q = m.div(&two, &tp2);
    let large = m.sub(&one, &q);
    let lt1 = m.cmpc(Cmp::Lt, &a, 1.0);
    let z = m.sel(&lt1, &small, &large);
    let sat = m.cmpc(Cmp::Ge, &a, 22.0);
    let z = m.selc(&sat, 1.0, &z);
    let r = m.k.reg(F);
    m.k.emit(Ins::copysign(Ty::F64, &r, x, &z));
    r
}

fn pow(m: &mut F64<'_>, x: &Reg, y: &Reg) -> Reg {
    let ax = m.abs(x);
    let (lh, ll) = ln_dd(m, &ax);
    // y * (lh + ll) as hi + lo.
    let ph = m.mul(y, &lh);
    let nph = m.neg(&ph);
    let perr = m.fma(y, &lh, &nph);
    let yl = m.mul(y, &ll);
    let plo = m.add(&perr, &yl);
    let mag = exp_dd(m, &ph, Some(&plo));
    // Is y an integer, an odd one?
    let yt = m.k.reg(F);
    m.k.emit(Ins::cvt_rnd(Rnd::Rzi, Ty::F64, Ty::F64, &yt, y));
    let yint = m.cmp(Cmp::Eq, &yt, y);
    let half = m.c(0.5);
    let yh = m.mul(y, &half);
    let yht = m.k.reg(F);
    m.k.emit(Ins::cvt_rnd(Rnd::Rzi, Ty::F64, Ty::F64, &yht, &yh));
    let yhi = m.cmp(Cmp::Eq, &yht, &yh);
    let nyhi = m.not(&yhi);
    let yodd = m.and(&yint, &nyhi);
    let ay = m.abs(y);
    let yneg = m.cmpc(Cmp::Lt, y, 0.0);
    // |x| = 0: inf for y < 0, else 0.
    let inf = m.c(f64::INFINITY);
    let zero = m.c(0.0);
    let z_or_inf = m.sel(&yneg, &inf, &zero);
    let inf_or_z = m.sel(&yneg, &zero, &inf);
    let x0 = m.cmpc(Cmp::Eq, &ax, 0.0);
    let mag = m.sel(&x0, &z_or_inf, &mag);
    let xinf = m.cmpc(Cmp::Eq, &ax, f64::INFINITY);
    let mag = m.sel(&xinf, &inf_or_z, &mag);
    // |y| = inf: 1 at |x| = 1, else inf when (|x| < 1) == (y < 0), else 0.
    let axlt1 = m.cmpc(Cmp::Lt, &ax, 1.0);
    let same = m.xor(&axlt1, &yneg);
    let yinf_mag = m.sel(&same, &zero, &inf);
    let ax1 = m.cmpc(Cmp::Eq, &ax, 1.0);
    let yinf_mag = m.selc(&ax1, 1.0, &yinf_mag);
    let yinf = m.cmpc(Cmp::Eq, &ay, f64::INFINITY);
    let mag = m.sel(&yinf, &yinf_mag, &mag);
    // Sign: negative x with odd y.
    let xneg = m.cmpc(Cmp::Lt, x, 0.0);
    let xnegz = m.k.reg(Scalar::Bool);
    {
        // -0 counts as negative for the sign.
        let b = m.k.reg(Scalar::U64);
        m.k.emit(Ins::mov(Ty::B64, &b, x));
        m.k.emit(Ins::setp(Cmp::Lt, Ty::S64, &xnegz, &b, 0));
    }
    let flip = m.and(&xnegz, &yodd);
    let nmag = m.neg(&mag);
    let res = m.sel(&flip, &nmag, &mag);
    // Finite negative x with non-integer y: NaN.
    let nyint = m.not(&yint);
    let bad = m.and(&xneg, &nyint);
    let nxinf = m.not(&xinf);
    let bad = m.and(&bad, &nxinf);
    let res = m.selc(&bad, f64::NAN, &res);
    let xn = m.cmp(Cmp::Nan, x, x);
    let yn = m.cmp(Cmp::Nan, y, y);
    let anyn = m.or(&xn, &yn);
    let res = m.selc(&anyn, f64::NAN, &res);
    let y0 = m.cmpc(Cmp::Eq, y, 0.0);
    let x1 = m.cmpc(Cmp::Eq, x, 1.0);
    let one = m.or(&y0, &x1);
    m.selc(&one, 1.0, &res)
}

/// `ilogb(v)` for finite `v > 0` (subnormals included) as an `s32`.
fn ilogb(m: &mut F64<'_>, v: &Reg) -> Reg {
    let b = m.k.reg(Scalar::U64);
    m.k.emit(Ins::mov(Ty::B64, &b, v));
    let ex = m.k.reg(Scalar::U64);
    m.k.emit(Ins::shr(Ty::U64, &ex, &b, 52));
    let e = m.k.reg(Scalar::I32);
    m.k.emit(Ins::cvt(Ty::U32, Ty::U64, &e, &ex));
    let normal = m.k.reg(Scalar::Bool);
    m.k.emit(Ins::setp(Cmp::Ne, Ty::U32, &normal, &e, 0));
    m.k.emit(Ins::sub(Ty::S32, &e, &e, 1023));
    let lz = m.k.reg(Scalar::U32);
    m.k.emit(Ins::clz(Ty::B64, &lz, &b));
    let sub = m.k.reg(Scalar::I32);
    m.k.emit(Ins::mov(Ty::U32, &sub, -1011));
    m.k.emit(Ins::sub(Ty::S32, &sub, &sub, &lz));
    let r = m.k.reg(Scalar::I32);
    m.k.emit(Ins::selp(Ty::B32, &r, &e, &sub, &normal));
    r
}

fn fmod(m: &mut F64<'_>, x: &Reg, y: &Reg) -> Reg {
    let ax = m.abs(x);
    let ay = m.abs(y);
    let r = m.k.reg(F);
    m.k.emit(Ins::mov(Ty::F64, &r, &ax));
    // The loop runs only for finite x, finite nonzero y and |x| >= |y|.
    let xf = m.cmpc(Cmp::Lt, &ax, f64::INFINITY);
    let yf = m.cmpc(Cmp::Lt, &ay, f64::INFINITY);
    let ynz = m.cmpc(Cmp::Gt, &ay, 0.0);
    let go = m.and(&xf, &yf);
    let go = m.and(&go, &ynz);
    let (top, end) = (m.k.label(), m.k.label());
    m.k.emit(Ins::bra(&end).unless(&go));
    let ey = ilogb(m, &ay);
    m.k.place(&top);
    let lt = m.cmp(Cmp::Lt, &r, &ay);
    m.k.emit(Ins::bra(&end).when(&lt));
    let er = ilogb(m, &r);
    let d = m.k.reg(Scalar::I32);
    m.k.emit(Ins::sub(Ty::S32, &d, &er, &ey));
    // t = |y| 2^d in three exact steps (d <= 2098).
    let d1 = m.k.reg(Scalar::I32);
    m.k.emit(Ins::div(Ty::S32, &d1, &d, 3));
    let d3 = m.k.reg(Scalar::I32);
    m.k.emit(Ins::sub(Ty::S32, &d3, &d, &d1));
    m.k.emit(Ins::sub(Ty::S32, &d3, &d3, &d1));
    let s1 = m.pow2(&d1);
    let s3 = m.pow2(&d3);
    let t = m.mul(&ay, &s1);
    let t = m.mul(&t, &s1);
    let t = m.mul(&t, &s3);
    let over = m.cmp(Cmp::Gt, &t, &r);
    let half = m.c(0.5);
    let th = m.mul(&t, &half);
    let t = m.sel(&over, &th, &t);
    m.k.emit(Ins::sub_rn(Ty::F64, &r, &r, &t));
    m.k.emit(Ins::bra(&top));
    m.k.place(&end);
    let res = m.k.reg(F);
    m.k.emit(Ins::copysign(Ty::F64, &res, x, &r));
    // NaN for NaN operands, infinite x or zero y; x itself for infinite y.
    let yinf = m.cmpc(Cmp::Eq, &ay, f64::INFINITY);
    let res = m.sel(&yinf, x, &res);
    let xinf = m.not(&xf);
    let yz = m.not(&ynz);
    let bad = m.or(&xinf, &yz);
    let res = m.selc(&bad, f64::NAN, &res);
    let xn = m.cmp(Cmp::Nan, x, x);
    let yn = m.cmp(Cmp::Nan, y, y);
    let anyn = m.or(&xn, &yn);
    m.selc(&anyn, f64::NAN, &res)
}

/// Emits `f(args)` for the functions of this module (`exp`, `ln`, `log2`, `sin`, `cos`,
/// `tanh`, `powf`) on `f32` or `f64` arguments (computed in `f64`).
pub(in crate::codegen) fn emit(k: &mut Kernel, f: MathFn, args: &[Reg]) -> R<Reg> {
    let routine: fn(&mut F64<'_>, &[Reg]) -> Reg = match f {
        MathFn::Exp => |m, x| exp_dd(m, &x[0], None),
        MathFn::Ln => |m, x| ln(m, &x[0]),
        MathFn::Log2 => |m, x| log2(m, &x[0]),
        MathFn::Sin => |m, x| sincos(m, &x[0], false),
        MathFn::Cos => |m, x| sincos(m, &x[0], true),
        MathFn::Tanh => |m, x| tanh(m, &x[0]),
        MathFn::Powf => |m, x| pow(m, &x[0], &x[1]),
        _ => return unsupported(format!("`{}` as a math routine (internal)", f.name())),
    };
    Ok(in_f64(k, args, routine))
}

/// The float remainder `x % y` (`fmod`) of `f32` or `f64` operands.
pub(in crate::codegen) fn rem(k: &mut Kernel, x: &Reg, y: &Reg) -> Reg {
    in_f64(k, &[x.clone(), y.clone()], |m, a| fmod(m, &a[0], &a[1]))
}

/// `routine(args)` computed in `f64`: `f32` arguments are widened exactly, an `f32`
/// result is rounded once from the `f64` one.
fn in_f64(k: &mut Kernel, args: &[Reg], routine: fn(&mut F64<'_>, &[Reg]) -> Reg) -> Reg {
    let ty = args[0].ty;
    let mut m = F64 { k: &mut k.ptx };
    let wide: Vec<Reg> = args
        .iter()
        .map(|a| {
            if a.ty == Scalar::F32 {
                let r = m.k.reg(F);
                m.k.emit(Ins::cvt(Ty::F64, Ty::F32, &r, a));
                r
            } else {
                a.clone()
            }
        })
        .collect();
    let y = routine(&mut m, &wide);
    if ty == Scalar::F32 {
        let r = m.k.reg(Scalar::F32);
        m.k.emit(Ins::cvt_rnd(Rnd::Rn, Ty::F32, Ty::F64, &r, &y));
        r
    } else {
        y
    }
}
