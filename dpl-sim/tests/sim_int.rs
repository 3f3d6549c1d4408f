//! Integer and bit instructions at 16, 32 and 64 bits (and 8-bit loads, stores and
//! conversions), compared with Rust's wrapping arithmetic on random and edge inputs.

mod common;

use common::{Rng, elementwise, elementwise_in, run3};

const N: usize = 300;

fn ext(v: u64, bits: u32, signed: bool) -> i128 {
    let m = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let v = v & m;
    if signed && bits < 64 && v >> (bits - 1) & 1 == 1 {
        v as i128 - (1i128 << bits)
    } else if signed && bits == 64 {
        v as i64 as i128
    } else {
        v as i128
    }
}

fn wrap(v: i128, bits: u32) -> u64 {
    let m = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    (v as u64) & m
}

fn inputs(bits: u32, seed: u64) -> (Vec<u64>, Vec<u64>, Vec<u64>) {
    let mut r = Rng::new(seed);
    let a = (0..N).map(|_| r.edgy(bits)).collect();
    let b = (0..N).map(|_| r.edgy(bits)).collect();
    let c = (0..N).map(|_| r.edgy(bits)).collect();
    (a, b, c)
}

/// Runs `body` with inputs and output of `bits` width and returns raw output bits.
fn run_bits(bits: u32, body: &str, a: &[u64], b: &[u64], c: &[u64]) -> Vec<u64> {
    let t = format!("b{bits}");
    let ptx = elementwise(&t, bits / 8, &t, bits / 8, body);
    match bits {
        16 => {
            let cv = |v: &[u64]| v.iter().map(|&x| x as u16).collect::<Vec<_>>();
            run3::<u16, u16>(&ptx, &cv(a), &cv(b), &cv(c))
                .into_iter()
                .map(u64::from)
                .collect()
        }
        32 => {
            let cv = |v: &[u64]| v.iter().map(|&x| x as u32).collect::<Vec<_>>();
            run3::<u32, u32>(&ptx, &cv(a), &cv(b), &cv(c))
                .into_iter()
                .map(u64::from)
                .collect()
        }
        _ => run3::<u64, u64>(&ptx, a, b, c),
    }
}

/// High half of the full product (u128 for unsigned so 64-bit products fit).
fn hi(a: i128, b: i128, bits: u32, signed: bool) -> i128 {
    if signed {
        (a * b) >> bits
    } else {
        ((a as u128 * b as u128) >> bits) as i128
    }
}

type Ref = fn(i128, i128, i128, u32, bool) -> Option<i128>;

fn check(name: &str, ptx_op: &str, operands: usize, reference: Ref, signed_too: bool) {
    for bits in [16u32, 32, 64] {
        for signed in [false, true] {
            if signed && !signed_too {
                continue;
            }
            let ty = format!("{}{bits}", if signed { "s" } else { "u" });
            let ops = ["%x1", "%x2", "%x3"][..operands].join(", ");
            let body = format!("\t{ptx_op}.{ty} \t%y1, {ops};");
            let (a, b, c) = inputs(bits, bits as u64 * 7 + signed as u64);
            let got = run_bits(bits, &body, &a, &b, &c);
            for i in 0..N {
                let (x, y, z) = (
                    ext(a[i], bits, signed),
                    ext(b[i], bits, signed),
                    ext(c[i], bits, signed),
                );
                let Some(want) = reference(x, y, z, bits, signed) else {
                    continue;
                };
                assert_eq!(
                    got[i],
                    wrap(want, bits),
                    "{name}.{ty}: inputs {:#x} {:#x} {:#x}",
                    a[i],
                    b[i],
                    c[i]
                );
            }
        }
    }
}

#[test]
fn arithmetic_wraps_like_rust() {
    check("add", "add", 2, |a, b, _, _, _| Some(a + b), true);
    check("sub", "sub", 2, |a, b, _, _, _| Some(a - b), true);
    check(
        "mul.lo",
        "mul.lo",
        2,
        |a, b, _, _, _| Some(a.wrapping_mul(b)),
        true,
    );
    check(
        "mul.hi",
        "mul.hi",
        2,
        |a, b, _, bits, s| Some(hi(a, b, bits, s)),
        true,
    );
    check(
        "mad.lo",
        "mad.lo",
        3,
        |a, b, c, _, _| Some(a.wrapping_mul(b).wrapping_add(c)),
        true,
    );
    check(
        "mad.hi",
        "mad.hi",
        3,
        |a, b, c, bits, s| Some(hi(a, b, bits, s) + c),
        true,
    );
    check("min", "min", 2, |a, b, _, _, _| Some(a.min(b)), true);
    check("max", "max", 2, |a, b, _, _, _| Some(a.max(b)), true);
    check(
        "div",
        "div",
        2,
        |a, b, _, bits, signed| {
            if b == 0 {
                return None;
            }
            // Signed overflow (MIN / -1) wraps.
            if signed && a == -(1i128 << (bits - 1)) && b == -1 {
                return Some(a);
            }
            Some(a / b)
        },
        true,
    );
    check(
        "rem",
        "rem",
        2,
        |a, b, _, _, _| if b == 0 { None } else { Some(a % b) },
        true,
    );
}

#[test]
fn signed_only_operations() {
    for bits in [16u32, 32, 64] {
        let ty = format!("s{bits}");
        let (a, b, c) = inputs(bits, 99 + bits as u64);
        let got = run_bits(bits, &format!("\tabs.{ty} %y1, %x1;"), &a, &b, &c);
        let got2 = run_bits(bits, &format!("\tneg.{ty} %y1, %x1;"), &a, &b, &c);
        for i in 0..N {
            let x = ext(a[i], bits, true);
            assert_eq!(got[i], wrap(x.abs(), bits), "abs {:#x}", a[i]);
            assert_eq!(got2[i], wrap(-x, bits), "neg {:#x}", a[i]);
        }
    }
    // Saturating add/sub on s32.
    let (a, b, c) = inputs(32, 5);
    let add = run_bits(32, "\tadd.sat.s32 %y1, %x1, %x2;", &a, &b, &c);
    let sub = run_bits(32, "\tsub.sat.s32 %y1, %x1, %x2;", &a, &b, &c);
    for i in 0..N {
        let (x, y) = (a[i] as u32 as i32, b[i] as u32 as i32);
        assert_eq!(add[i] as u32 as i32, x.saturating_add(y));
        assert_eq!(sub[i] as u32 as i32, x.saturating_sub(y));
    }
}

#[test]
fn bitwise_and_shifts() {
    check("and", "and", 2, |a, b, _, _, _| Some(a & b), false);
    check("or", "or", 2, |a, b, _, _, _| Some(a | b), false);
    check("xor", "xor", 2, |a, b, _, _, _| Some(a ^ b), false);
    for bits in [16u32, 32, 64] {
        let (a, b, c) = inputs(bits, 11 + bits as u64);
        let not = run_bits(bits, &format!("\tnot.b{bits} %y1, %x1;"), &a, &b, &c);
        let cnot = run_bits(bits, &format!("\tcnot.b{bits} %y1, %x1;"), &a, &b, &c);
        // Shift amounts are u32; use the low bits of b plus some too-large values.
        let shl = run_bits(
            bits,
            &format!(
                "\tcvt.u32.u{bits} %r1, %x2;\n\trem.u32 %r1, %r1, {};\n\tshl.b{bits} %y1, %x1, %r1;",
                bits + 8
            ),
            &a,
            &b,
            &c,
        );
        let shr_u = run_bits(
            bits,
            &format!(
                "\tcvt.u32.u{bits} %r1, %x2;\n\trem.u32 %r1, %r1, {};\n\tshr.u{bits} %y1, %x1, %r1;",
                bits + 8
            ),
            &a,
            &b,
            &c,
        );
        let shr_s = run_bits(
            bits,
            &format!(
                "\tcvt.u32.u{bits} %r1, %x2;\n\trem.u32 %r1, %r1, {};\n\tshr.s{bits} %y1, %x1, %r1;",
                bits + 8
            ),
            &a,
            &b,
            &c,
        );
        let m = if bits == 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        for i in 0..N {
            let s = (b[i] & m) as u32 % (bits + 8);
            assert_eq!(not[i], !a[i] & m);
            assert_eq!(cnot[i], (a[i] & m == 0) as u64);
            let want_shl = if s >= bits { 0 } else { (a[i] << s) & m };
            assert_eq!(shl[i], want_shl, "shl {:#x} {s}", a[i]);
            let want_shr = if s >= bits { 0 } else { (a[i] & m) >> s };
            assert_eq!(shr_u[i], want_shr, "shr.u {:#x} {s}", a[i]);
            let sx = ext(a[i], bits, true);
            assert_eq!(
                shr_s[i],
                wrap(sx >> s.min(bits - 1), bits),
                "shr.s {:#x} {s}",
                a[i]
            );
        }
    }
}

#[test]
fn bit_counting_and_fields() {
    let mut r = Rng::new(3);
    let a: Vec<u32> = (0..N).map(|_| r.edgy(32) as u32).collect();
    let b: Vec<u32> = (0..N).map(|_| r.next() as u32).collect();
    let c: Vec<u32> = (0..N).map(|_| r.next() as u32).collect();
    let run = |body: &str| run3::<u32, u32>(&elementwise("b32", 4, "b32", 4, body), &a, &b, &c);
    let popc = run("\tpopc.b32 %y1, %x1;");
    let clz = run("\tclz.b32 %y1, %x1;");
    let brev = run("\tbrev.b32 %y1, %x1;");
    let bfe_u =
        run("\tand.b32 %r1, %x2, 31;\n\tand.b32 %r2, %x3, 15;\n\tbfe.u32 %y1, %x1, %r1, %r2;");
    let bfe_s =
        run("\tand.b32 %r1, %x2, 31;\n\tand.b32 %r2, %x3, 15;\n\tbfe.s32 %y1, %x1, %r1, %r2;");
    let bfi =
        run("\tand.b32 %r1, %x2, 31;\n\tand.b32 %r2, %x3, 15;\n\tbfi.b32 %y1, %x3, %x1, %r1, %r2;");
    let prmt = run("\tprmt.b32 %y1, %x1, %x2, %x3;");
    let shf_l = run("\tshf.l.wrap.b32 %y1, %x1, %x2, %x3;");
    let shf_r = run("\tshf.r.clamp.b32 %y1, %x1, %x2, %x3;");
    let lop = run("\tlop3.b32 %y1, %x1, %x2, %x3, 0xe8;");
    let bfind = run("\tbfind.u32 %y1, %x1;");
    for i in 0..N {
        let (x, y, z) = (a[i], b[i], c[i]);
        assert_eq!(popc[i], x.count_ones());
        assert_eq!(clz[i], x.leading_zeros());
        assert_eq!(brev[i], x.reverse_bits());
        let (pos, len) = (y & 31, z & 15);
        let field = if len == 0 {
            0
        } else {
            ((x as u64 >> pos) & ((1u64 << len) - 1)) as u32
        };
        assert_eq!(bfe_u[i], field, "bfe.u32 {x:#x} {pos} {len}");
        let sfield = if len == 0 {
            0
        } else {
            let top = (pos + len - 1).min(31);
            let sign = (x >> top) & 1;
            let mut v = field;
            for k in len..32 {
                if pos + k >= 32 || k >= len {
                    v |= sign << k;
                }
            }
            if pos + len > 32 {
                // Bits of the field beyond bit 31 also take the sign.
                for k in (32 - pos)..len {
                    v |= sign << k;
                }
            }
            v
        };
        assert_eq!(bfe_s[i], sfield, "bfe.s32 {x:#x} {pos} {len}");
        let mut ins = x;
        for k in 0..len {
            if pos + k < 32 {
                ins = (ins & !(1 << (pos + k))) | (((z >> k) & 1) << (pos + k));
            }
        }
        assert_eq!(bfi[i], ins, "bfi");
        let bytes = ((y as u64) << 32) | x as u64;
        let mut want = 0u32;
        for k in 0..4 {
            let sel = (z >> (4 * k)) & 0xf;
            let mut byte = ((bytes >> (8 * (sel & 7))) & 0xff) as u32;
            if sel & 8 != 0 {
                byte = if byte & 0x80 != 0 { 0xff } else { 0 };
            }
            want |= byte << (8 * k);
        }
        assert_eq!(prmt[i], want, "prmt");
        let n = z & 31;
        assert_eq!(
            shf_l[i],
            ((((y as u64) << 32 | x as u64) << n) >> 32) as u32,
            "shf.l"
        );
        let n = z.min(32);
        assert_eq!(
            shf_r[i],
            (((y as u64) << 32 | x as u64) >> n) as u32,
            "shf.r"
        );
        // 0xe8 is the majority function.
        assert_eq!(lop[i], (x & y) | (x & z) | (y & z), "lop3");
        assert_eq!(
            bfind[i],
            if x == 0 {
                u32::MAX
            } else {
                31 - x.leading_zeros()
            }
        );
    }
}

#[test]
fn wide_multiplies_and_carries() {
    let mut r = Rng::new(8);
    let a: Vec<u32> = (0..N).map(|_| r.edgy(32) as u32).collect();
    let b: Vec<u32> = (0..N).map(|_| r.edgy(32) as u32).collect();
    let c: Vec<u32> = (0..N).map(|_| r.next() as u32).collect();
    let ptx = |body: &str| elementwise("b32", 4, "b64", 8, body);
    let wu = run3::<u32, u64>(&ptx("\tmul.wide.u32 %y1, %x1, %x2;"), &a, &b, &c);
    let ws = run3::<u32, u64>(&ptx("\tmul.wide.s32 %y1, %x1, %x2;"), &a, &b, &c);
    let mw = run3::<u32, u64>(
        &ptx("\tcvt.u64.u32 %rd1, %x3;\n\tmad.wide.u32 %y1, %x1, %x2, %rd1;"),
        &a,
        &b,
        &c,
    );
    // 64-bit add through add.cc / addc on 32-bit halves.
    let cc = run3::<u32, u64>(
        &ptx("\tadd.cc.u32 %r1, %x1, %x2;\n\taddc.u32 %r2, %x3, 0;\n\tmov.b64 %y1, {%r1, %r2};"),
        &a,
        &b,
        &c,
    );
    for i in 0..N {
        let (x, y, z) = (a[i], b[i], c[i]);
        assert_eq!(wu[i], x as u64 * y as u64);
        assert_eq!(ws[i], (x as i32 as i64 * y as i32 as i64) as u64);
        assert_eq!(mw[i], (x as u64 * y as u64).wrapping_add(z as u64));
        let (lo, carry) = x.overflowing_add(y);
        assert_eq!(
            cc[i],
            (lo as u64) | ((z.wrapping_add(carry as u32) as u64) << 32)
        );
    }
}

#[test]
fn comparisons_and_selects() {
    type Cmp = fn(i128, i128) -> bool;
    let cmps: [(&str, Cmp); 6] = [
        ("eq", |a, b| a == b),
        ("ne", |a, b| a != b),
        ("lt", |a, b| a < b),
        ("le", |a, b| a <= b),
        ("gt", |a, b| a > b),
        ("ge", |a, b| a >= b),
    ];
    for bits in [16u32, 32, 64] {
        for signed in [false, true] {
            let ty = format!("{}{bits}", if signed { "s" } else { "u" });
            let (a, mut b, c) = inputs(bits, 40 + bits as u64);
            for i in (0..N).step_by(5) {
                b[i] = a[i];
            }
            for (name, f) in cmps {
                let body =
                    format!("\tsetp.{name}.{ty} %p1, %x1, %x2;\n\tselp.b{bits} %y1, %x3, 7, %p1;");
                let got = run_bits(bits, &body, &a, &b, &c);
                for i in 0..N {
                    let r = f(ext(a[i], bits, signed), ext(b[i], bits, signed));
                    let m = if bits == 64 {
                        u64::MAX
                    } else {
                        (1u64 << bits) - 1
                    };
                    assert_eq!(
                        got[i],
                        if r { c[i] & m } else { 7 },
                        "setp.{name}.{ty} {:#x} {:#x}",
                        a[i],
                        b[i]
                    );
                }
            }
        }
    }
    // Unsigned-only comparison names, two destinations, and a combining predicate.
    let (a, b, c) = inputs(32, 77);
    let body = "\tsetp.lo.u32 %p1|%p2, %x1, %x2;\n\tsetp.hs.and.u32 %p3, %x2, %x3, !%p1;\n\tselp.u32 %r1, 1, 0, %p2;\n\tselp.u32 %r2, 2, 0, %p3;\n\tor.b32 %y1, %r1, %r2;";
    let got = run_bits(32, body, &a, &b, &c);
    for i in 0..N {
        let (x, y, z) = (a[i] as u32, b[i] as u32, c[i] as u32);
        let p1 = x < y;
        let p3 = y >= z && !p1;
        assert_eq!(got[i], (!p1) as u64 | ((p3 as u64) << 1));
    }
}

#[test]
fn conversions_between_widths() {
    let mut r = Rng::new(21);
    let a: Vec<u64> = (0..N).map(|_| r.edgy(64)).collect();
    let run = |body: &str| run3::<u64, u64>(&elementwise("b64", 8, "b64", 8, body), &a, &a, &a);
    let s8 = run("\tcvt.s8.s64 %h1, %x1;\n\tcvt.s64.s8 %y1, %h1;");
    let u16 = run("\tcvt.u16.u64 %h1, %x1;\n\tcvt.u64.u16 %y1, %h1;");
    let s32 = run("\tcvt.s32.s64 %r1, %x1;\n\tcvt.s64.s32 %y1, %r1;");
    let sat8 = run("\tcvt.sat.s8.s64 %h1, %x1;\n\tcvt.s64.s8 %y1, %h1;");
    let satu16 = run("\tcvt.sat.u16.s64 %h1, %x1;\n\tcvt.u64.u16 %y1, %h1;");
    let sat32 = run("\tcvt.sat.u32.s64 %r1, %x1;\n\tcvt.u64.u32 %y1, %r1;");
    for i in 0..N {
        let x = a[i];
        assert_eq!(s8[i], x as i8 as i64 as u64);
        assert_eq!(u16[i], x as u16 as u64);
        assert_eq!(s32[i], x as i32 as i64 as u64);
        assert_eq!(sat8[i], (x as i64).clamp(-128, 127) as u64);
        assert_eq!(satu16[i], (x as i64).clamp(0, 65535) as u64);
        assert_eq!(sat32[i], (x as i64).clamp(0, u32::MAX as i64) as u64);
    }
}

#[test]
fn eight_bit_loads_and_stores() {
    // Neighbouring bytes written by different threads (and blocks) must all land.
    let mut r = Rng::new(4);
    let a: Vec<i8> = (0..1000).map(|_| r.next() as i8).collect();
    let ptx = elementwise(
        "s8",
        1,
        "s8",
        1,
        "\tcvt.s32.s8 %r1, %x1;\n\tmul.lo.s32 %r1, %r1, -3;\n\tcvt.s8.s32 %y1, %r1;",
    );
    let got = run3::<i8, i8>(&ptx, &a, &a, &a);
    let want: Vec<i8> = a.iter().map(|&x| (x as i32 * -3) as i8).collect();
    assert_eq!(got, want);
    let b: Vec<u8> = (0..1000).map(|_| r.next() as u8).collect();
    let ptx = elementwise("u8", 1, "u8", 1, "\tadd.u16 %y1, %x1, %x2;");
    let got = run3::<u8, u8>(&ptx, &b, &b, &b);
    let want: Vec<u8> = b.iter().map(|&x| x.wrapping_add(x)).collect();
    assert_eq!(got, want);
}

/// 8- and 16-bit memory values in 32-bit registers, as dpl-cuda holds `i8 u8 i16 u16`:
/// `ld.s8`/`ld.s16` sign-extend into the wider register and `ld.u8`/`ld.u16` zero-extend,
/// `cvt.s32.s8 r, r` (and the like) re-extends the low bits of a 32-bit register (wrapping
/// a sum at 8 bits), and `st.s8`/`st.u16` from a 32-bit register store its low bits.
#[test]
fn narrow_values_in_32_bit_registers() {
    let mut r = Rng::new(5);
    let a: Vec<i8> = (0..1000).map(|_| r.next() as i8).collect();
    let b: Vec<u16> = (0..1000).map(|_| r.next() as u16).collect();
    let widened = elementwise_in("b32", "s8", 1, "b32", "s32", 4, "\tmov.b32 %y1, %x1;");
    let got = run3::<i8, i32>(&widened, &a, &a, &a);
    assert_eq!(got, a.iter().map(|&x| i32::from(x)).collect::<Vec<_>>());
    let widened = elementwise_in("b32", "u16", 2, "b32", "u32", 4, "\tmov.b32 %y1, %x1;");
    let got = run3::<u16, u32>(&widened, &b, &b, &b);
    assert_eq!(got, b.iter().map(|&x| u32::from(x)).collect::<Vec<_>>());
    // (a + a) wrapped at 8 bits, then an arithmetic shift of the wrapped value.
    let wrapped = elementwise_in(
        "b32",
        "s8",
        1,
        "b32",
        "s8",
        1,
        "\tadd.s32 %r1, %x1, %x2;\n\tcvt.s32.s8 %r1, %r1;\n\tshr.s32 %y1, %r1, 1;",
    );
    let got = run3::<i8, i8>(&wrapped, &a, &a, &a);
    let want: Vec<i8> = a.iter().map(|&x| x.wrapping_add(x) >> 1).collect();
    assert_eq!(got, want);
    // The product wrapped at 16 bits (zero-extended), then shifted right.
    let wrapped = elementwise_in(
        "b32",
        "u16",
        2,
        "b32",
        "u16",
        2,
        "\tmul.lo.u32 %r1, %x1, %x2;\n\tcvt.u32.u16 %r1, %r1;\n\tshr.u32 %y1, %r1, 3;",
    );
    let got = run3::<u16, u16>(&wrapped, &b, &b, &b);
    let want: Vec<u16> = b.iter().map(|&x| x.wrapping_mul(x) >> 3).collect();
    assert_eq!(got, want);
}

#[test]
fn mul24_mad24_and_dp2a() {
    // The low 24 bits of a 32-bit operand, sign-extended for `.s32`.
    let low24 = |v: u64, signed: bool| ext(v, 24, signed);
    // The `k`-th 16-bit half and 8-bit byte of a 32-bit operand.
    let half = |v: u64, k: u32, signed: bool| ext(v >> (16 * k), 16, signed);
    let byte = |v: u64, k: u32, signed: bool| ext(v >> (8 * k), 8, signed);
    let (a, b, c) = inputs(32, 24);
    for signed in [false, true] {
        let ty = if signed { "s32" } else { "u32" };
        let lo = run_bits(32, &format!("\tmul24.lo.{ty} %y1, %x1, %x2;"), &a, &b, &c);
        let hi = run_bits(32, &format!("\tmul24.hi.{ty} %y1, %x1, %x2;"), &a, &b, &c);
        let mad = run_bits(
            32,
            &format!("\tmad24.lo.{ty} %y1, %x1, %x2, %x3;"),
            &a,
            &b,
            &c,
        );
        for i in 0..N {
            // The 48-bit product of the 24-bit operands.
            let p = low24(a[i], signed) * low24(b[i], signed);
            let what = format!("{ty} {:#x} {:#x} {:#x}", a[i], b[i], c[i]);
            assert_eq!(lo[i], wrap(p, 32), "mul24.lo.{what}");
            assert_eq!(hi[i], wrap(p >> 16, 32), "mul24.hi.{what}");
            assert_eq!(
                mad[i],
                wrap(p + ext(c[i], 32, signed), 32),
                "mad24.lo.{what}"
            );
        }
    }
    for (a_ty, b_ty) in [
        ("u32", "u32"),
        ("s32", "s32"),
        ("s32", "u32"),
        ("u32", "s32"),
    ] {
        let (sa, sb) = (a_ty == "s32", b_ty == "s32");
        for (part, first) in [("lo", 0), ("hi", 2)] {
            let body = format!("\tdp2a.{part}.{a_ty}.{b_ty} %y1, %x1, %x2, %x3;");
            let got = run_bits(32, &body, &a, &b, &c);
            for i in 0..N {
                // Two 16-bit halves of a times bytes `first` and `first + 1` of b, plus c.
                let want = ext(c[i], 32, sa || sb)
                    + half(a[i], 0, sa) * byte(b[i], first, sb)
                    + half(a[i], 1, sa) * byte(b[i], first + 1, sb);
                assert_eq!(
                    got[i],
                    wrap(want, 32),
                    "{body} {:#x} {:#x} {:#x}",
                    a[i],
                    b[i],
                    c[i]
                );
            }
        }
    }
}
