//! dpl-sim against nvcc-compiled kernels using features beyond the basics (`misc.cu`,
//! `async_copy.cu`, `half.cu`): vector and sub-word accesses, a struct parameter,
//! `__constant__` and `__device__` variables, a dense switch, reducing barriers,
//! `__syncwarp`, `__dp4a`, a 64-bit CAS loop, `__threadfence`, `cp.async`, and f16.
//! All comparisons are exact; the f16 reference rounds exact integer results itself.

#[path = "../fixtures/support.rs"]
mod support;

use dpl_sim::Arg;
use support::{Fixture, Rng, assert_bits_f32, assert_bits_f64, assert_same, blocks_for, dim1};

const MISC: &str = include_str!("../fixtures/misc.ptx");
const ASYNC_COPY: &str = include_str!("../fixtures/async_copy.ptx");
const HALF: &str = include_str!("../fixtures/half.ptx");

const SIZES: [usize; 6] = [1, 31, 32, 33, 257, 1000];

#[test]
fn float4_and_sub_word_accesses() {
    let fx = Fixture::new("misc.ptx", MISC);
    let mut rng = Rng::new(60);
    for &(n4, n) in &[(1usize, 1usize), (10, 37), (64, 3), (250, 1000)] {
        let floats: Vec<f32> = (0..4 * n4).map(|_| rng.f32_in(-1e3, 1e3)).collect();
        let bytes: Vec<i8> = (0..n).map(|_| rng.next_u32() as i8).collect();
        let halves: Vec<i16> = (0..n).map(|_| rng.next_u32() as i16).collect();
        let (din4, dout4) = (fx.upload(&floats), fx.zeros::<f32>(4 * n4));
        let (db, dh, wide, narrow) = (
            fx.upload(&bytes),
            fx.upload(&halves),
            fx.zeros::<i32>(n),
            fx.zeros::<u8>(n),
        );
        fx.launch(
            "vector_and_subword",
            dim1(blocks_for(n.max(n4), 64)),
            dim1(64),
            0,
            &[
                (&din4).into(),
                (&dout4).into(),
                (n4 as i32).into(),
                (&db).into(),
                (&dh).into(),
                (&wide).into(),
                (&narrow).into(),
                (n as i32).into(),
            ],
        );
        let doubled: Vec<f32> = floats.iter().map(|v| v * 2.0).collect();
        assert_bits_f32(&format!("float4 n4={n4}"), &fx.download(&dout4), &doubled);
        let want_wide: Vec<i32> = bytes
            .iter()
            .zip(&halves)
            .map(|(&b, &h)| b as i32 + h as i32)
            .collect();
        assert_same(&format!("s8 + s16 n={n}"), &fx.download(&wide), &want_wide);
        let want_narrow: Vec<u8> = bytes.iter().map(|&b| (b as i32 + 1) as u8).collect();
        assert_same(
            &format!("u8 stores n={n}"),
            &fx.download(&narrow),
            &want_narrow,
        );
    }
}

/// `struct Affine { float scale; int offset; double bias; unsigned char flags; }` as the
/// 24 bytes of its `.param .align 8 .b8 [24]`.
fn affine_bytes(scale: f32, offset: i32, bias: f64, flags: u8) -> Vec<u8> {
    let mut b = vec![0u8; 24];
    b[0..4].copy_from_slice(&scale.to_le_bytes());
    b[4..8].copy_from_slice(&offset.to_le_bytes());
    b[8..16].copy_from_slice(&bias.to_le_bytes());
    b[16] = flags;
    b
}

#[test]
fn struct_passed_by_value() {
    let fx = Fixture::new("misc.ptx", MISC);
    let mut rng = Rng::new(61);
    for &n in &SIZES {
        let input: Vec<f32> = (0..n).map(|_| rng.f32_in(-10.0, 10.0)).collect();
        for (scale, offset, bias, flags) in [(1.5f32, -7, 0.125f64, 0u8), (-0.3, 1000, 1e-9, 3)] {
            let (din, dout) = (fx.upload(&input), fx.zeros::<f64>(n));
            fx.launch(
                "struct_param",
                dim1(blocks_for(n, 128)),
                dim1(128),
                0,
                &[
                    Arg::Bytes(affine_bytes(scale, offset, bias, flags)),
                    (&din).into(),
                    (&dout).into(),
                    (n as i32).into(),
                ],
            );
            let want: Vec<f64> = input
                .iter()
                .map(|&x| {
                    let v = (x * scale) as f64 + offset as f64 + bias;
                    if flags & 1 == 1 { -v } else { v }
                })
                .collect();
            assert_bits_f64(
                &format!("struct param n={n} flags={flags}"),
                &fx.download(&dout),
                &want,
            );
        }
    }
}

#[test]
fn constant_table_and_module_variable() {
    const TABLE: [u32; 16] = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3];
    let fx = Fixture::new("misc.ptx", MISC);
    let mut rng = Rng::new(62);
    let counter = fx.zeros::<u32>(1);
    let mut launched = 0u32;
    for &n in &SIZES {
        let keys: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
        let (dk, dout) = (fx.upload(&keys), fx.zeros::<u32>(n));
        fx.launch(
            "constant_lookup",
            dim1(blocks_for(n, 64)),
            dim1(64),
            0,
            &[(&dk).into(), (&dout).into(), (n as i32).into()],
        );
        let want: Vec<u32> = keys.iter().map(|&k| TABLE[(k % 16) as usize]).collect();
        assert_same(&format!("constant table n={n}"), &fx.download(&dout), &want);
        // g_counter is a module variable: it keeps counting across launches.
        launched += n as u32;
        fx.launch("read_counter", dim1(1), dim1(1), 0, &[(&counter).into()]);
        assert_eq!(
            fx.download(&counter),
            vec![launched],
            "g_counter after {launched} threads"
        );
    }
    // A module loaded afresh starts with g_counter = 0.
    let fresh = Fixture::new("misc.ptx", MISC);
    let out = fresh.upload(&[99u32]);
    fresh.launch("read_counter", dim1(1), dim1(1), 0, &[(&out).into()]);
    assert_eq!(fresh.download(&out), vec![0]);
}

#[test]
fn dense_switch() {
    let fx = Fixture::new("misc.ptx", MISC);
    let mut rng = Rng::new(63);
    for &n in &SIZES {
        let keys: Vec<i32> = (0..n)
            .map(|_| rng.range_i64(-10000, 10000) as i32)
            .collect();
        let (dk, dout) = (fx.upload(&keys), fx.zeros::<i32>(n));
        fx.launch(
            "switch_dispatch",
            dim1(blocks_for(n, 32)),
            dim1(32),
            0,
            &[(&dk).into(), (&dout).into(), (n as i32).into()],
        );
        let want: Vec<i32> = keys
            .iter()
            .map(|&k| match k.rem_euclid(10) {
                0 => k + 7,
                1 => k * 3,
                2 => k ^ 0x55,
                3 => k - 100,
                4 => k << 2,
                5 => k >> 1,
                6 => !k,
                7 => k * k,
                8 => k & 0xf0,
                _ => -k,
            })
            .collect();
        assert_same(&format!("switch n={n}"), &fx.download(&dout), &want);
    }
}

#[test]
fn syncthreads_count_and_or() {
    let fx = Fixture::new("misc.ptx", MISC);
    let mut rng = Rng::new(64);
    let threshold = 50;
    for &block in &[32u32, 96, 256] {
        for &n in &SIZES {
            // The first block is all above the threshold, so __syncthreads_and is 1 there
            // when the block is full.
            let values: Vec<i32> = (0..n)
                .map(|i| {
                    if i < block as usize {
                        99
                    } else {
                        rng.range_i64(0, 100) as i32
                    }
                })
                .collect();
            let groups = blocks_for(n, block) as usize;
            let (din, counts, ands, ors) = (
                fx.upload(&values),
                fx.zeros::<i32>(groups),
                fx.zeros::<i32>(groups),
                fx.zeros::<i32>(groups),
            );
            fx.launch(
                "barrier_reductions",
                dim1(groups as u32),
                dim1(block),
                0,
                &[
                    (&din).into(),
                    (&counts).into(),
                    (&ands).into(),
                    (&ors).into(),
                    (n as i32).into(),
                    threshold.into(),
                ],
            );
            let (mut wc, mut wa, mut wo) = (vec![], vec![], vec![]);
            for g in 0..groups {
                let preds: Vec<bool> = (0..block as usize)
                    .map(|t| g * block as usize + t)
                    .map(|i| i < n && values[i] > threshold)
                    .collect();
                wc.push(preds.iter().filter(|&&p| p).count() as i32);
                wa.push(preds.iter().all(|&p| p) as i32);
                wo.push(preds.iter().any(|&p| p) as i32);
            }
            assert_same(
                &format!("__syncthreads_count block={block} n={n}"),
                &fx.download(&counts),
                &wc,
            );
            assert_same(
                &format!("__syncthreads_and block={block} n={n}"),
                &fx.download(&ands),
                &wa,
            );
            assert_same(
                &format!("__syncthreads_or block={block} n={n}"),
                &fx.download(&ors),
                &wo,
            );
        }
    }
}

#[test]
fn warp_synchronous_sum_with_syncwarp() {
    let fx = Fixture::new("misc.ptx", MISC);
    let mut rng = Rng::new(65);
    for &block in &[32u32, 128, 256] {
        for &n in &SIZES {
            let values: Vec<i32> = (0..n).map(|_| rng.next_u32() as i32).collect();
            let (din, dout) = (fx.upload(&values), fx.zeros::<i32>(n.div_ceil(32)));
            fx.launch(
                "syncwarp_sum",
                dim1(blocks_for(n, block)),
                dim1(block),
                0,
                &[(&din).into(), (&dout).into(), (n as i32).into()],
            );
            let want: Vec<i32> = values
                .chunks(32)
                .map(|c| c.iter().fold(0i32, |s, &v| s.wrapping_add(v)))
                .collect();
            assert_same(
                &format!("syncwarp sums block={block} n={n}"),
                &fx.download(&dout),
                &want,
            );
        }
    }
}

#[test]
fn dp4a_signed_and_unsigned() {
    let fx = Fixture::new("misc.ptx", MISC);
    let mut rng = Rng::new(66);
    for &n in &SIZES {
        let a: Vec<i32> = (0..n).map(|_| rng.next_u32() as i32).collect();
        let b: Vec<i32> = (0..n).map(|_| rng.next_u32() as i32).collect();
        let c: Vec<i32> = (0..n).map(|_| rng.next_u32() as i32).collect();
        let (da, db, dc, out, out2) = (
            fx.upload(&a),
            fx.upload(&b),
            fx.upload(&c),
            fx.zeros::<i32>(n),
            fx.zeros::<u32>(n),
        );
        fx.launch(
            "dot4",
            dim1(blocks_for(n, 64)),
            dim1(64),
            0,
            &[
                (&da).into(),
                (&db).into(),
                (&dc).into(),
                (&out).into(),
                (&out2).into(),
                (n as i32).into(),
            ],
        );
        let (mut ws, mut wu) = (vec![], vec![]);
        for i in 0..n {
            let (ab, bb) = (a[i].to_le_bytes(), b[i].to_le_bytes());
            let s = (0..4).fold(c[i], |acc, k| {
                acc.wrapping_add(ab[k] as i8 as i32 * bb[k] as i8 as i32)
            });
            let u = (0..4).fold(c[i] as u32, |acc, k| {
                acc.wrapping_add(ab[k] as u32 * bb[k] as u32)
            });
            ws.push(s);
            wu.push(u);
        }
        assert_same(&format!("dp4a.s32 n={n}"), &fx.download(&out), &ws);
        assert_same(&format!("dp4a.u32 n={n}"), &fx.download(&out2), &wu);
    }
}

#[test]
fn double_add_through_64_bit_cas() {
    let fx = Fixture::new("misc.ptx", MISC);
    // More host threads than cores, so blocks' atomics really interleave.
    fx.dev.set_host_threads(8);
    let mut rng = Rng::new(67);
    for &n in &SIZES {
        // Integers: every partial sum is exact, whatever order the CAS loop serialises.
        let values: Vec<f64> = (0..n).map(|_| rng.range_i64(-1000, 1000) as f64).collect();
        let (dv, sum) = (fx.upload(&values), fx.upload(&[0.5f64]));
        fx.launch(
            "cas64_add",
            dim1(blocks_for(n, 128)),
            dim1(128),
            0,
            &[(&dv).into(), (&sum).into(), (n as i32).into()],
        );
        assert_eq!(
            fx.download(&sum),
            vec![0.5 + values.iter().sum::<f64>()],
            "n={n}"
        );
    }
}

#[test]
fn threadfence_last_block_sum() {
    let fx = Fixture::new("misc.ptx", MISC);
    // More host threads than cores, so blocks' atomics really interleave.
    fx.dev.set_host_threads(8);
    let mut rng = Rng::new(68);
    for &n in &SIZES {
        let values: Vec<i32> = (0..n).map(|_| rng.next_u32() as i32).collect();
        let groups = n.div_ceil(128);
        let (din, partial, ticket, total) = (
            fx.upload(&values),
            fx.zeros::<i32>(groups),
            fx.zeros::<u32>(1),
            fx.zeros::<i32>(1),
        );
        let want = values.iter().fold(0i32, |s, &v| s.wrapping_add(v));
        // Twice: the last block resets the ticket, so the second launch works the same way.
        for round in 0..2 {
            fx.dev.fill(&total, 0).expect("fill");
            fx.launch(
                "threadfence_sum",
                dim1(groups as u32),
                dim1(128),
                0,
                &[
                    (&din).into(),
                    (&partial).into(),
                    (&ticket).into(),
                    (&total).into(),
                    (n as i32).into(),
                ],
            );
            assert_eq!(fx.download(&total), vec![want], "n={n} round {round}");
            assert_eq!(fx.download(&ticket), vec![0], "ticket reset n={n}");
        }
    }
}

#[test]
fn cp_async_double_buffered_tile_sum() {
    let fx = Fixture::new("async_copy.ptx", ASYNC_COPY);
    let mut rng = Rng::new(69);
    for &(groups, tiles) in &[(1usize, 1usize), (1, 2), (3, 5), (8, 16)] {
        let values: Vec<i32> = (0..groups * tiles * 128)
            .map(|_| rng.next_u32() as i32)
            .collect();
        let (din, sums) = (fx.upload(&values), fx.zeros::<i32>(groups));
        fx.launch(
            "async_tile_sum",
            dim1(groups as u32),
            dim1(128),
            0,
            &[(&din).into(), (&sums).into(), (tiles as i32).into()],
        );
        let want: Vec<i32> = values
            .chunks(tiles * 128)
            .map(|c| c.iter().fold(0i32, |s, &v| s.wrapping_add(v)))
            .collect();
        assert_same(
            &format!("cp.async sums groups={groups} tiles={tiles}"),
            &fx.download(&sums),
            &want,
        );
    }
}

// ---------------------------------------------------------------- half.cu

/// An exact value `n * 2^s`.
#[derive(Clone, Copy)]
struct Exact {
    n: i128,
    s: i32,
}

impl Exact {
    fn of_f32(x: f32) -> Exact {
        let bits = x.to_bits();
        let e = ((bits >> 23) & 0xff) as i32;
        let frac = (bits & 0x7f_ffff) as i128;
        let (m, s) = if e == 0 {
            (frac, -149)
        } else {
            (frac | 0x80_0000, e - 150)
        };
        Exact {
            n: if bits >> 31 == 1 { -m } else { m },
            s,
        }
    }

    fn of_f16(h: u16) -> Exact {
        let e = ((h >> 10) & 0x1f) as i32;
        let frac = (h & 0x3ff) as i128;
        let (m, s) = if e == 0 {
            (frac, -24)
        } else {
            (frac | 0x400, e - 25)
        };
        Exact {
            n: if h >> 15 == 1 { -m } else { m },
            s,
        }
    }

    fn add(self, o: Exact) -> Exact {
        let s = self.s.min(o.s);
        Exact {
            n: (self.n << (self.s - s)) + (o.n << (o.s - s)),
            s,
        }
    }

    fn mul(self, o: Exact) -> Exact {
        Exact {
            n: self.n * o.n,
            s: self.s + o.s,
        }
    }

    fn neg(self) -> Exact {
        Exact {
            n: -self.n,
            s: self.s,
        }
    }

    /// Rounds to the nearest f16 (ties to even); exact zero gives +0.
    fn to_f16(self) -> u16 {
        let sign = if self.n < 0 { 0x8000u16 } else { 0 };
        let a = self.n.unsigned_abs();
        if a == 0 {
            return 0;
        }
        let e = (128 - a.leading_zeros()) as i32 - 1 + self.s; // value in [2^e, 2^(e+1))
        let mut ulp = e.max(-14) - 10;
        let mut m = if self.s >= ulp {
            a << (self.s - ulp)
        } else {
            let sh = (ulp - self.s) as u32;
            if sh >= 128 {
                0
            } else {
                let (q, rem, half) = (a >> sh, a & ((1u128 << sh) - 1), 1u128 << (sh - 1));
                if rem > half || (rem == half && q & 1 == 1) {
                    q + 1
                } else {
                    q
                }
            }
        };
        if m == 2048 {
            m = 1024;
            ulp += 1;
        }
        if m < 1024 {
            return sign | m as u16; // subnormal (ulp = 2^-24)
        }
        let field = ulp + 25;
        if field >= 31 {
            return sign | 0x7c00;
        }
        sign | ((field as u16) << 10) | (m as u16 - 1024)
    }
}

#[test]
fn f16_reference_rounds_like_ieee() {
    let h = |x: f32| Exact::of_f32(x).to_f16();
    assert_eq!(h(1.0), 0x3c00);
    assert_eq!(h(-2.0), 0xc000);
    assert_eq!(h(65504.0), 0x7bff);
    assert_eq!(h(65519.0), 0x7bff);
    assert_eq!(h(65520.0), 0x7c00); // the tie above the largest half rounds to infinity
    assert_eq!(h(1.0 + 1.0 / 2048.0), 0x3c00); // tie, to even
    assert_eq!(h(1.0 + 3.0 / 2048.0), 0x3c02); // tie, to even (up)
    assert_eq!(h(2f32.powi(-24)), 0x0001);
    assert_eq!(h(2f32.powi(-25)), 0x0000); // tie between 0 and the smallest subnormal
    assert_eq!(h(0.1), 0x2e66);
    assert_eq!(Exact::of_f16(0x3555).to_f16(), 0x3555);
}

#[test]
fn half_arithmetic() {
    let fx = Fixture::new("half.ptx", HALF);
    let mut rng = Rng::new(70);
    for &n in &SIZES {
        let mut gen_ = || {
            let v = if rng.next_u32().is_multiple_of(4) {
                rng.f32_in(1e3, 6e4)
            } else {
                rng.f32_in(1e-3, 8.0)
            };
            if rng.next_u32().is_multiple_of(2) {
                -v
            } else {
                v
            }
        };
        let (x, y, z): (Vec<f32>, Vec<f32>, Vec<f32>) = {
            let x = (0..n).map(|_| gen_()).collect();
            let y = (0..n).map(|_| gen_()).collect();
            let z = (0..n).map(|_| gen_()).collect();
            (x, y, z)
        };
        let (dx, dy, dz, out) = (
            fx.upload(&x),
            fx.upload(&y),
            fx.upload(&z),
            fx.zeros::<u16>(6 * n),
        );
        fx.launch(
            "half_math",
            dim1(blocks_for(n, 64)),
            dim1(64),
            0,
            &[
                (&dx).into(),
                (&dy).into(),
                (&dz).into(),
                (&out).into(),
                (n as i32).into(),
            ],
        );
        let mut want = Vec::with_capacity(6 * n);
        for i in 0..n {
            let [ha, hb, hc] = [x[i], y[i], z[i]].map(|v| Exact::of_f32(v).to_f16());
            let [ea, eb, ec] = [ha, hb, hc].map(Exact::of_f16);
            want.extend_from_slice(&[
                ha,
                ea.add(eb).to_f16(),
                ea.mul(eb).to_f16(),
                ea.mul(eb).add(ec).to_f16(),
                ea.add(ec.neg()).to_f16(),
                eb.add(ea.neg()).to_f16(),
            ]);
        }
        let got = fx.download(&out);
        for (k, name) in [
            "cvt.rn.f16.f32",
            "add.f16",
            "mul.f16",
            "fma.rn.f16",
            "sub.f16x2 low",
            "sub.f16x2 high",
        ]
        .iter()
        .enumerate()
        {
            let g: Vec<u16> = got.iter().skip(k).step_by(6).copied().collect();
            let w: Vec<u16> = want.iter().skip(k).step_by(6).copied().collect();
            assert_same(&format!("{name} n={n}"), &g, &w);
        }
    }
}

#[test]
fn every_half_bit_pattern_to_float() {
    let fx = Fixture::new("half.ptx", HALF);
    let patterns: Vec<u16> = (0..=u16::MAX).collect();
    let (dh, out) = (fx.upload(&patterns), fx.zeros::<f32>(patterns.len()));
    fx.launch(
        "half_to_float",
        dim1(256),
        dim1(256),
        0,
        &[(&dh).into(), (&out).into(), (patterns.len() as i32).into()],
    );
    let got = fx.download(&out);
    for (&h, &g) in patterns.iter().zip(&got) {
        let (e, frac) = ((h >> 10) & 0x1f, h & 0x3ff);
        if e == 31 {
            let inf = if h >> 15 == 1 {
                f32::NEG_INFINITY
            } else {
                f32::INFINITY
            };
            if frac == 0 {
                assert_eq!(g, inf, "half {h:#06x}");
            } else {
                assert!(g.is_nan(), "half {h:#06x} (NaN) gave {g}");
            }
            continue;
        }
        let exact = Exact::of_f16(h);
        let value = exact.n as f32 * 2f32.powi(exact.s); // |n| < 2^11: exact in f32
        let want = if h == 0x8000 { -0.0f32 } else { value } * 3.0;
        assert_eq!(
            g.to_bits(),
            want.to_bits(),
            "half {h:#06x}: got {g}, want {want}"
        );
    }
}
