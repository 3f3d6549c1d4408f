//! Arithmetic on raw 64-bit register values: integer operations with carries, float
//! operations with rounding modes, flush-to-zero and saturation, comparisons, boolean
//! operations, conversions and the values atomics combine.

use super::*;
use crate::fpu;

/// Integer operations with a fast path at 32 and 64 bits.
#[inline]
pub(super) fn fast_int(op: IntOp) -> bool {
    matches!(
        op,
        IntOp::Add | IntOp::Sub | IntOp::MulLo | IntOp::MadLo | IntOp::And | IntOp::Or | IntOp::Xor
    )
}

#[inline]
pub(super) fn bool_op(op: BoolOp, a: bool, b: bool) -> bool {
    match op {
        BoolOp::And => a && b,
        BoolOp::Or => a || b,
        BoolOp::Xor => a != b,
    }
}

#[inline]
fn to_f64(ty: Ty, v: u64, ftz: bool) -> f64 {
    match ty {
        Ty::F32 => {
            let f = f32::from_bits(v as u32);
            (if ftz { fpu::ftz32(f) } else { f }) as f64
        }
        Ty::F16 => fpu::from_small_float(v as u32 & 0xffff, 10, 5),
        Ty::Bf16 => fpu::from_small_float(v as u32 & 0xffff, 7, 8),
        _ => f64::from_bits(v),
    }
}

#[inline]
pub(super) fn compare(cmp: Cmp, ty: Ty, ftz: bool, a: u64, b: u64) -> bool {
    if ty.float() {
        let (x, y) = (to_f64(ty, a, ftz), to_f64(ty, b, ftz));
        let un = x.is_nan() || y.is_nan();
        return match cmp {
            Cmp::Eq => x == y,
            Cmp::Ne => !un && x != y,
            Cmp::Lt | Cmp::Lo => x < y,
            Cmp::Le | Cmp::Ls => x <= y,
            Cmp::Gt | Cmp::Hi => x > y,
            Cmp::Ge | Cmp::Hs => x >= y,
            Cmp::Equ => un || x == y,
            Cmp::Neu => un || x != y,
            Cmp::Ltu => un || x < y,
            Cmp::Leu => un || x <= y,
            Cmp::Gtu => un || x > y,
            Cmp::Geu => un || x >= y,
            Cmp::Num => !un,
            Cmp::Nan => un,
        };
    }
    let (a, b) = (canon(ty, a), canon(ty, b));
    let signed = ty.signed();
    let lt = if signed {
        (a as i64) < (b as i64)
    } else {
        a < b
    };
    let ult = a < b;
    match cmp {
        Cmp::Eq | Cmp::Equ => a == b,
        Cmp::Ne | Cmp::Neu => a != b,
        Cmp::Lt | Cmp::Ltu => lt,
        Cmp::Le | Cmp::Leu => lt || a == b,
        Cmp::Gt | Cmp::Gtu => !lt && a != b,
        Cmp::Ge | Cmp::Geu => !lt,
        Cmp::Lo => ult,
        Cmp::Ls => ult || a == b,
        Cmp::Hi => !ult && a != b,
        Cmp::Hs => !ult,
        Cmp::Num => true,
        Cmp::Nan => false,
    }
}

/// Integer operation on canonical operands; returns (result, carry out).
#[inline]
pub(super) fn int_op(
    op: IntOp,
    ty: Ty,
    a: u64,
    b: u64,
    c: u64,
    e: u64,
    carry: u64,
) -> Result<(u64, Option<u64>), String> {
    let bits = ty.bits();
    let msk = mask_of(bits);
    let signed = ty.signed();
    let b = canon(ty, b);
    let sx = |v: u64| -> i128 { if signed { v as i64 as i128 } else { v as i128 } };
    let wrap = |v: i128| -> u64 { canon(ty, v as u64 & msk) };
    // The low 24 bits of an operand of `mul24`/`mad24`.
    let low24 = |v: u64| i128::from(field(v, 24, 0, signed));
    let r = match op {
        IntOp::Add => wrap(sx(a) + sx(b)),
        IntOp::Sub => wrap(sx(a) - sx(b)),
        IntOp::AddSat => (a as i32).saturating_add(b as i32) as i64 as u64,
        IntOp::SubSat => (a as i32).saturating_sub(b as i32) as i64 as u64,
        IntOp::AddC { cin, cout } => {
            let s =
                (a & msk) as u128 + (b & msk) as u128 + if cin { (carry & 1) as u128 } else { 0 };
            let co = if cout {
                Some(((s >> bits) & 1) as u64)
            } else {
                None
            };
            return Ok((canon(ty, s as u64 & msk), co));
        }
        IntOp::SubC { cin, cout } => {
            let bin = if cin { carry & 1 } else { 0 };
            let s = ((a & msk) as i128) - ((b & msk) as i128) - bin as i128;
            let co = if cout { Some((s < 0) as u64) } else { None };
            return Ok((canon(ty, s as u64 & msk), co));
        }
        IntOp::MadC { hi, cin, cout } => {
            let part = if hi {
                mul_hi(a, b, bits, signed, msk) & msk
            } else {
                sx(a).wrapping_mul(sx(b)) as u64 & msk
            };
            let cc = canon(ty, c) & msk;
            let s = part as u128 + cc as u128 + if cin { (carry & 1) as u128 } else { 0 };
            let co = if cout {
                Some(((s >> bits) & 1) as u64)
            } else {
                None
            };
            return Ok((canon(ty, s as u64 & msk), co));
        }
        IntOp::MulLo => wrap(sx(a).wrapping_mul(sx(b))),
        IntOp::MulHi => mul_hi(a, b, bits, signed, msk),
        IntOp::MulWide => {
            let p = sx(a) * sx(b);
            canon(ty.widened(), p as u64 & mask_of(bits * 2))
        }
        IntOp::Mul24Lo => wrap(low24(a) * low24(b)),
        IntOp::Mul24Hi => wrap((low24(a) * low24(b)) >> 16),
        IntOp::MadLo => wrap(sx(a).wrapping_mul(sx(b)).wrapping_add(sx(canon(ty, c)))),
        IntOp::MadHi => wrap(sx(mul_hi(a, b, bits, signed, msk)) + sx(canon(ty, c))),
        IntOp::MadHiSat => {
            let v = ((sx(a) * sx(b)) >> 32) + sx(canon(ty, c));
            v.clamp(i32::MIN as i128, i32::MAX as i128) as i64 as u64
        }
        IntOp::MadWide => {
            let wt = ty.widened();
            let p = sx(a) * sx(b);
            let cc = canon(wt, c);
            let cv = if signed {
                cc as i64 as i128
            } else {
                cc as i128
            };
            canon(wt, (p + cv) as u64 & mask_of(bits * 2))
        }
        IntOp::Mad24Lo => wrap(low24(a) * low24(b) + sx(canon(ty, c))),
        IntOp::Div => {
            if b & msk == 0 {
                msk
            } else {
                wrap(sx(a).wrapping_div(sx(b)))
            }
        }
        IntOp::Rem => {
            if b & msk == 0 {
                a
            } else {
                wrap(sx(a).wrapping_rem(sx(b)))
            }
        }
        IntOp::And => (a & b) & msk,
        IntOp::Or => (a | b) & msk,
        IntOp::Xor => (a ^ b) & msk,
        IntOp::Not => !a & msk,
        IntOp::Cnot => (a & msk == 0) as u64,
        IntOp::Shl => {
            let s = b as u32 as u64;
            if s >= bits as u64 {
                0
            } else {
                canon(ty, (a << s) & msk)
            }
        }
        IntOp::Shr => {
            let s = (b as u32 as u64).min(bits as u64 - 1 + u64::from(!signed));
            if signed {
                canon(ty, ((a as i64) >> s.min(63)) as u64 & msk)
            } else if s >= bits as u64 {
                0
            } else {
                (a & msk) >> s
            }
        }
        IntOp::Min => {
            if signed {
                (a as i64).min(b as i64) as u64
            } else {
                a.min(b)
            }
        }
        IntOp::Max => {
            if signed {
                (a as i64).max(b as i64) as u64
            } else {
                a.max(b)
            }
        }
        IntOp::Abs => wrap((a as i64 as i128).abs()),
        IntOp::Neg => wrap(-(sx(a))),
        IntOp::Popc => (a & msk).count_ones() as u64,
        IntOp::Clz => ((a & msk).leading_zeros() - (64 - bits)) as u64,
        IntOp::Brev => ((a & msk).reverse_bits() >> (64 - bits)) & msk,
        IntOp::Bfe => {
            let pos = (b & 0xff) as u32;
            let len = (c & 0xff) as u32;
            let raw = a & msk;
            let sbit = if signed {
                if len == 0 {
                    false
                } else {
                    let top = (pos + len - 1).min(bits - 1);
                    (raw >> top) & 1 == 1
                }
            } else {
                false
            };
            let mut v = 0u64;
            for i in 0..bits {
                // Bits past the source's top (and above the field) take the sign bit.
                let bit = if i < len && pos + i < bits {
                    (raw >> (pos + i)) & 1
                } else {
                    sbit as u64
                };
                v |= bit << i;
            }
            canon(ty, v & msk)
        }
        IntOp::Bfi => {
            // bfi d, a, b, pos, len: insert a's low bits into b.
            let pos = (c & 0xff) as u32;
            let len = (e & 0xff) as u32;
            let mut v = b & msk;
            for i in 0..len {
                if pos + i >= bits {
                    break;
                }
                let bit = (a >> i) & 1;
                v = (v & !(1 << (pos + i))) | (bit << (pos + i));
            }
            v
        }
        IntOp::Bfind { shiftamt } => {
            let x = a & msk;
            let v = if signed && (x >> (bits - 1)) & 1 == 1 {
                !x & msk
            } else {
                x
            };
            if v == 0 {
                0xffff_ffff
            } else {
                let p = 63 - v.leading_zeros();
                (if shiftamt { bits - 1 - p } else { p }) as u64
            }
        }
        IntOp::Prmt(mode) => {
            let bytes = ((b as u32 as u64) << 32) | (a as u32 as u64);
            let byte = |i: u64| (bytes >> (8 * (i & 7))) & 0xff;
            let sel = c as u32;
            let mut r = 0u64;
            match mode {
                0 => {
                    for k in 0..4 {
                        let s = (sel >> (4 * k)) & 0xf;
                        let mut v = byte(s as u64 & 7);
                        if s & 8 != 0 {
                            v = if v & 0x80 != 0 { 0xff } else { 0 };
                        }
                        r |= v << (8 * k);
                    }
                }
                _ => {
                    let s = (sel & 3) as u64;
                    let idxs: [u64; 4] = match mode {
                        1 => [s, s + 1, s + 2, s + 3],
                        2 => [s, (s + 7) % 8, (s + 6) % 8, (s + 5) % 8],
                        3 => [s; 4],
                        4 => match s {
                            0 => [0, 1, 2, 3],
                            1 => [1, 1, 2, 3],
                            2 => [2, 2, 2, 3],
                            _ => [3, 3, 3, 3],
                        },
                        5 => match s {
                            0 => [0, 0, 0, 0],
                            1 => [0, 1, 1, 1],
                            2 => [0, 1, 2, 2],
                            _ => [0, 1, 2, 3],
                        },
                        _ => {
                            let h = s & 1;
                            [2 * h, 2 * h + 1, 2 * h, 2 * h + 1]
                        }
                    };
                    for (k, i) in idxs.iter().enumerate() {
                        r |= byte(*i % 8) << (8 * k);
                    }
                }
            }
            r
        }
        IntOp::ShfL { clamp } | IntOp::ShfR { clamp } => {
            let n = if clamp {
                (c as u32).min(32)
            } else {
                c as u32 & 31
            };
            let pair = ((b as u32 as u64) << 32) | (a as u32 as u64);
            if matches!(op, IntOp::ShfL { .. }) {
                ((pair << n) >> 32) & 0xffff_ffff
            } else {
                (pair >> n) & 0xffff_ffff
            }
        }
        IntOp::Lop3 => {
            let lut = e as u8;
            let mut r = 0u64;
            for i in 0..bits {
                let k = (((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((c >> i) & 1);
                r |= (((lut >> k) & 1) as u64) << i;
            }
            r
        }
        IntOp::Sad => {
            let d = if signed {
                ((a as i64) - (b as i64)).unsigned_abs()
            } else {
                a.abs_diff(b)
            };
            wrap(d as i128 + sx(canon(ty, c)))
        }
        IntOp::Dp4a { a_signed, b_signed } => {
            let mut s = c as u32 as i64;
            for k in 0..4 {
                s += field(a, 8, k, a_signed) * field(b, 8, k, b_signed);
            }
            s as u64 & 0xffff_ffff
        }
        IntOp::Dp2a {
            hi,
            a_signed,
            b_signed,
        } => {
            let mut s = c as u32 as i64;
            let first = if hi { 2 } else { 0 };
            for k in 0..2 {
                s += field(a, 16, k, a_signed) * field(b, 8, first + k, b_signed);
            }
            s as u64 & 0xffff_ffff
        }
        IntOp::Fns => return Err("`fns` is not supported".into()),
    };
    Ok((r, None))
}

/// The `k`-th `bits`-wide field of `v` (`mul24`, `dp4a`, ...), sign-extended when `signed`.
#[inline]
fn field(v: u64, bits: u32, k: u32, signed: bool) -> i64 {
    let x = (v >> (bits * k)) & mask_of(bits);
    if signed {
        ((x << (64 - bits)) as i64) >> (64 - bits)
    } else {
        x as i64
    }
}

/// The high half of the full product (canonical result).
#[inline]
fn mul_hi(a: u64, b: u64, bits: u32, signed: bool, msk: u64) -> u64 {
    let hi = if signed {
        ((a as i64 as i128 * b as i64 as i128) >> bits) as u64
    } else {
        (((a & msk) as u128 * (b & msk) as u128) >> bits) as u64
    };
    let hi = hi & msk;
    if signed && bits < 64 && (hi >> (bits - 1)) & 1 == 1 {
        hi | !msk
    } else {
        hi
    }
}

#[inline]
fn f32_out(x: f32, ftz: bool, sat: bool) -> u64 {
    let mut x = if ftz { fpu::ftz32(x) } else { x };
    if sat {
        x = if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
    }
    if x.is_nan() {
        fpu::F32_NAN as u64
    } else {
        x.to_bits() as u64
    }
}

#[allow(clippy::too_many_arguments)]
#[inline]
pub(super) fn float_op(
    op: FOp,
    ty: Ty,
    rnd: Rnd,
    ftz: bool,
    sat: bool,
    a: u64,
    b: u64,
    c: u64,
) -> u64 {
    match ty {
        Ty::F32 => {
            let g = |v: u64| {
                let f = f32::from_bits(v as u32);
                if ftz { fpu::ftz32(f) } else { f }
            };
            let (x, y, z) = (g(a), g(b), g(c));
            let r = match op {
                FOp::Add => fpu::add32(x, y, rnd),
                FOp::Sub => fpu::add32(x, -y, rnd),
                FOp::Mul => fpu::mul32(x, y, rnd),
                FOp::Fma => fpu::fma32(x, y, z, rnd),
                FOp::Div { .. } => fpu::div32(x, y, rnd),
                FOp::Sqrt => fpu::sqrt32(x, rnd),
                FOp::Rcp => fpu::div32(1.0, x, rnd),
                FOp::Rsqrt => (1.0 / (x as f64).sqrt()) as f32,
                FOp::Ex2 => (x as f64).exp2() as f32,
                FOp::Lg2 => (x as f64).log2() as f32,
                FOp::Sin => (x as f64).sin() as f32,
                FOp::Cos => (x as f64).cos() as f32,
                FOp::Tanh => (x as f64).tanh() as f32,
                FOp::Min | FOp::Max => {
                    fpu::fminmax(x.into(), y.into(), matches!(op, FOp::Max)) as f32
                }
                FOp::Abs => return f32_out(x.abs(), ftz, false),
                FOp::Neg => {
                    return (if ftz { fpu::ftz32(x) } else { x }).to_bits() as u64 ^ 0x8000_0000;
                }
                FOp::Copysign => y.copysign(x),
            };
            if matches!(op, FOp::Copysign) {
                return r.to_bits() as u64;
            }
            f32_out(r, ftz, sat)
        }
        Ty::F64 => {
            let (x, y, z) = (f64::from_bits(a), f64::from_bits(b), f64::from_bits(c));
            let r = match op {
                FOp::Add => fpu::add64(x, y, rnd),
                FOp::Sub => fpu::add64(x, -y, rnd),
                FOp::Mul => fpu::mul64(x, y, rnd),
                FOp::Fma => fpu::fma64(x, y, z, rnd),
                FOp::Div { .. } => fpu::div64(x, y, rnd),
                FOp::Sqrt => fpu::sqrt64(x, rnd),
                FOp::Rcp => fpu::div64(1.0, x, rnd),
                FOp::Rsqrt => 1.0 / x.sqrt(),
                FOp::Ex2 => x.exp2(),
                FOp::Lg2 => x.log2(),
                FOp::Sin => x.sin(),
                FOp::Cos => x.cos(),
                FOp::Tanh => x.tanh(),
                FOp::Min | FOp::Max => fpu::fminmax(x, y, matches!(op, FOp::Max)),
                FOp::Abs => return a & !(1 << 63),
                FOp::Neg => return a ^ (1 << 63),
                FOp::Copysign => y.copysign(x),
            };
            let r = if sat {
                if r.is_nan() { 0.0 } else { r.clamp(0.0, 1.0) }
            } else {
                r
            };
            r.to_bits()
        }
        Ty::F16x2 | Ty::Bf16x2 => {
            let half = if ty == Ty::F16x2 { Ty::F16 } else { Ty::Bf16 };
            let lo = float_op(op, half, rnd, ftz, sat, a & 0xffff, b & 0xffff, c & 0xffff);
            let hi = float_op(
                op,
                half,
                rnd,
                ftz,
                sat,
                (a >> 16) & 0xffff,
                (b >> 16) & 0xffff,
                (c >> 16) & 0xffff,
            );
            lo | (hi << 16)
        }
        _ => {
            // f16/bf16: compute in f64 and round once to the half format. Sums, differences
            // and products of f16 values are exact in f64; quotients and square roots are
            // rounded twice, which is harmless for nearest rounding (53 >= 2 * 11 + 2).
            let bf = ty == Ty::Bf16;
            let (mant, exp) = if bf { (7, 8) } else { (10, 5) };
            let g = |v: u64| fpu::from_small_float(v as u32 & 0xffff, mant, exp);
            let (x, y, z) = (g(a), g(b), g(c));
            let r = match op {
                FOp::Add => x + y,
                FOp::Sub => x - y,
                FOp::Mul => x * y,
                FOp::Fma => x.mul_add(y, z),
                FOp::Div { .. } => x / y,
                FOp::Sqrt => x.sqrt(),
                FOp::Rcp => 1.0 / x,
                FOp::Rsqrt => 1.0 / x.sqrt(),
                FOp::Ex2 => x.exp2(),
                FOp::Lg2 => x.log2(),
                FOp::Sin => x.sin(),
                FOp::Cos => x.cos(),
                FOp::Tanh => x.tanh(),
                FOp::Min | FOp::Max => fpu::fminmax(x, y, matches!(op, FOp::Max)),
                FOp::Abs => return a & 0x7fff,
                FOp::Neg => return (a ^ 0x8000) & 0xffff,
                FOp::Copysign => y.copysign(x),
            };
            let r = if sat {
                if r.is_nan() { 0.0 } else { r.clamp(0.0, 1.0) }
            } else {
                r
            };
            let rnd = if rnd == Rnd::Default { Rnd::Rn } else { rnd };
            fpu::to_small_float(r, mant, exp, rnd) as u64
        }
    }
}

#[inline]
fn int_range(t: Ty) -> (i128, i128) {
    let bits = t.bits();
    if t.signed() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// What a float-to-integer `cvt` gives for a NaN, as measured on an H100 (sm_90) for every
/// rounding mode, with and without `.sat`: 0 from an `f32` to a 32-bit integer, else the
/// top bit alone (`i32::MIN`/`i64::MIN`, or `2^31`/`2^63` for unsigned destinations) —
/// from an `f64`, or to a 64-bit integer. Narrower destinations (not measured) give 0.
#[inline]
fn nan_to_int(dty: Ty, sty: Ty) -> u64 {
    let top = match dty.bits() {
        32 if sty == Ty::F64 => 1 << 31,
        64 => 1 << 63,
        _ => 0,
    };
    canon(dty, top)
}

#[inline]
pub(super) fn convert(dty: Ty, sty: Ty, rnd: Rnd, sat: bool, ftz: bool, v: u64) -> u64 {
    match (dty.float(), sty.float()) {
        (false, false) => {
            let x = canon(sty, v);
            let xi = if sty.signed() {
                x as i64 as i128
            } else {
                x as i128
            };
            let xi = if sat {
                let (lo, hi) = int_range(dty);
                xi.clamp(lo, hi)
            } else {
                xi
            };
            canon(dty, xi as u64 & mask_of(dty.bits()))
        }
        (false, true) => {
            let x = to_f64(sty, v, ftz);
            if x.is_nan() {
                return nan_to_int(dty, sty);
            }
            let r = fpu::round_int(x, if rnd == Rnd::Default { Rnd::Rzi } else { rnd });
            let (lo, hi) = int_range(dty);
            let i = if r <= lo as f64 {
                lo
            } else if r >= hi as f64 {
                hi
            } else {
                r as i128
            };
            canon(dty, i as u64 & mask_of(dty.bits()))
        }
        (true, false) => {
            let x = canon(sty, v);
            let xi = if sty.signed() {
                x as i64 as i128
            } else {
                x as i128
            };
            match dty {
                Ty::F32 => {
                    let f = fpu::int_to_f32(xi, rnd);
                    f32_out(f, ftz, sat)
                }
                Ty::F64 => fpu::int_to_f64(xi, rnd).to_bits(),
                Ty::F16 => fpu::to_small_float(xi as f64, 10, 5, rnd) as u64,
                _ => fpu::to_small_float(xi as f64, 7, 8, rnd) as u64,
            }
        }
        (true, true) => {
            let x = to_f64(sty, v, ftz);
            let integral = matches!(rnd, Rnd::Rni | Rnd::Rzi | Rnd::Rmi | Rnd::Rpi);
            let x = if integral { fpu::round_int(x, rnd) } else { x };
            let x = if sat {
                if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) }
            } else {
                x
            };
            let r = if rnd == Rnd::Default || integral {
                Rnd::Rn
            } else {
                rnd
            };
            match dty {
                Ty::F32 => {
                    let f = if sty == Ty::F64 {
                        fpu::f64_to_f32(x, r)
                    } else {
                        x as f32
                    };
                    f32_out(f, ftz, false)
                }
                Ty::F64 => x.to_bits(),
                Ty::F16 => fpu::to_small_float(x, 10, 5, r) as u64,
                _ => fpu::to_small_float(x, 7, 8, r) as u64,
            }
        }
    }
}

#[inline]
pub(super) fn atom_apply(op: AtomOp, ty: Ty, old: u64, b: u64, c: u64) -> u64 {
    let msk = mask_of(ty.bits());
    let o = canon(ty, old);
    let r = match (op, ty) {
        (AtomOp::Add, Ty::F32) => {
            (f32::from_bits(o as u32) + f32::from_bits(b as u32)).to_bits() as u64
        }
        (AtomOp::Add, Ty::F64) => (f64::from_bits(o) + f64::from_bits(b)).to_bits(),
        (AtomOp::Add, _) => o.wrapping_add(b),
        (AtomOp::Min, t) if t.signed() => (o as i64).min(b as i64) as u64,
        (AtomOp::Max, t) if t.signed() => (o as i64).max(b as i64) as u64,
        (AtomOp::Min, Ty::F32) => f32::from_bits(o as u32)
            .min(f32::from_bits(b as u32))
            .to_bits() as u64,
        (AtomOp::Max, Ty::F32) => f32::from_bits(o as u32)
            .max(f32::from_bits(b as u32))
            .to_bits() as u64,
        (AtomOp::Min, _) => o.min(b),
        (AtomOp::Max, _) => o.max(b),
        (AtomOp::Exch, _) => b,
        (AtomOp::Cas, _) => {
            if o == b {
                c
            } else {
                o
            }
        }
        (AtomOp::And, _) => o & b,
        (AtomOp::Or, _) => o | b,
        (AtomOp::Xor, _) => o ^ b,
        (AtomOp::Inc, _) => {
            if (o & msk) >= (b & msk) {
                0
            } else {
                o + 1
            }
        }
        (AtomOp::Dec, _) => {
            if o & msk == 0 || (o & msk) > (b & msk) {
                b
            } else {
                o - 1
            }
        }
    };
    r & msk
}
