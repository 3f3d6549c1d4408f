//! The 8- and 16-bit integers `i8 u8 i16 u16`: wrapping arithmetic at their own width,
//! `as` casts to and from every other scalar type, reductions, scans, sorts (negative keys
//! included), filters, a `u8` image histogram, `scatter_reduce` into 8- and 16-bit slots,
//! gathers with `u8` indices, tuples mixing widths, scalar parameters and `Nested` rows.

use super::*;

/// The programs under test, written in the DSL.
mod prog {
    pub use crate::indexed::*;
    use dpl::prelude::*;

    #[parallel]
    pub fn wrap_u8(x: &[u8], y: &[u8], k: u8) -> Vec<u8> {
        map(|a, b| (a * 3u8 + b - k) ^ (a << 3) ^ (b >> 9u32), x, y)
    }

    #[parallel]
    pub fn wrap_i8(x: &[i8], y: &[i8]) -> Vec<i8> {
        map(
            |a, b| (a * b - 100i8) / (b | 1i8) + (a >> 2) + !b - a.abs() + (-a) % 7i8,
            x,
            y,
        )
    }

    #[parallel]
    pub fn wrap_i16(x: &[i16], y: &[i16], k: i16) -> Vec<i16> {
        map(
            |a, b| (a * a + b * k) % 1000i16 - (a << 11) + b.max(a),
            x,
            y,
        )
    }

    #[parallel]
    pub fn wrap_u16(x: &[u16], y: &[u16]) -> Vec<u16> {
        map(
            |a, b| (a.wrapping_mul(b) >> 3) | a.min(b) + (a - b) / 3u16,
            x,
            y,
        )
    }

    #[parallel]
    pub fn casts_down(
        x: &[i64],
        f: &[f32],
        d: &[f64],
    ) -> Vec<(i8, u8, i16, u16, i8, u16, u8, i16)> {
        map(
            |a, b, c| {
                (
                    a as i8, a as u8, a as i16, a as u16, b as i8, b as u16, c as u8, c as i16,
                )
            },
            x,
            f,
            d,
        )
    }

    #[parallel]
    pub fn casts_up(
        a: &[i8],
        b: &[u8],
        c: &[i16],
        d: &[u16],
    ) -> Vec<(i32, u64, usize, f32, f64, u32, i64, usize)> {
        map(
            |a, b, c, d| {
                (
                    a as i32, a as u64, b as usize, c as f32, d as f64, c as u32, d as i64,
                    a as usize,
                )
            },
            a,
            b,
            c,
            d,
        )
    }

    #[parallel]
    pub fn casts_across(
        a: &[i8],
        b: &[u8],
        c: &[i16],
        d: &[u16],
    ) -> Vec<(u8, i16, u16, i8, u16, i8, u8, i16)> {
        map(
            |a, b, c, d| {
                (
                    a as u8,
                    a as i16,
                    a as u16,
                    b as i8,
                    (b > 100u8) as u16,
                    c as i8,
                    c as u8,
                    d as i16,
                )
            },
            a,
            b,
            c,
            d,
        )
    }

    #[parallel]
    pub fn reductions(a: &[u8], b: &[i8], c: &[i16]) -> (u8, i8, i8, i32, u16) {
        (
            sum(a),
            reduce(|x, y| x.min(y), b, i8::MAX),
            reduce(|x, y| x.max(y), b, i8::MIN),
            sum(map(|v| v as i32, c)),
            reduce(|x, y| x ^ y, map(|v| v as u16, c), 0u16),
        )
    }

    #[parallel]
    pub fn scans(a: &[u16], b: &[i8]) -> (Vec<u16>, Vec<i8>) {
        (
            scan(|x, y| x + y, a),
            exclusive_scan(|x, y| x.max(y), b, -128i8),
        )
    }

    #[parallel]
    pub fn sort_i8(x: &[i8]) -> Vec<i8> {
        sort(x)
    }

    #[parallel]
    pub fn sort_u8(x: &[u8]) -> Vec<u8> {
        sort(x)
    }

    #[parallel]
    pub fn sort_i16(x: &[i16]) -> Vec<i16> {
        sort(x)
    }

    #[parallel]
    pub fn sort_by_i16_key(k: &[i16], v: &[u16]) -> Vec<u16> {
        sort_by_key(k, v)
    }

    #[parallel]
    pub fn sort_pairs(k: &[i8], v: &[u8]) -> Vec<(i8, u8)> {
        sort(zip(k, v))
    }

    #[parallel]
    pub fn filters(a: &[i8], b: &[u16]) -> (Vec<i8>, Vec<u16>) {
        (filter(|v| v < 0i8, a), filter(|v| v % 3u16 == 0u16, b))
    }

    #[parallel]
    pub fn narrow_slots(keys: &[u8], v8: &[u8], v16: &[i16], bins: usize) -> (Vec<u8>, Vec<i16>) {
        (
            scatter_reduce(|a, b| a + b, v8, keys, replicate(0u8, bins)),
            scatter_reduce(|a, b| a.max(b), v16, keys, replicate(i16::MIN, bins)),
        )
    }

    #[parallel]
    pub fn narrow_pair_slots(keys: &[u8], a: &[i8], b: &[u16], bins: usize) -> Vec<(i8, u16)> {
        scatter_reduce(
            |x, y| (x.0 + y.0, x.1 * y.1),
            zip(a, b),
            keys,
            replicate((0i8, 1u16), bins),
        )
    }

    #[parallel]
    pub fn gathers(x: &[i16], idx: &[u8], y: &[u8], idy: &[usize]) -> (Vec<i16>, Vec<u8>) {
        (gather(x, idx), gather(y, idy))
    }

    #[parallel]
    pub fn pick(x: &[i16], k: u8, j: i16) -> (i16, i16, Vec<i16>) {
        (x[k], x[j], map(|v| v + x[k], x))
    }

    #[parallel]
    pub fn mixed_tuples(a: &[u8], b: &[i16], c: &[u16]) -> (Vec<(i16, u16, u8)>, (u8, i16)) {
        let t = map(|x, y, z| (x as i16 + y, z, x ^ 1u8), a, b, c);
        let s = reduce(|p, q| (p.0 + q.0, p.1 + q.1), zip(a, b), (0u8, 0i16));
        (t, s)
    }

    #[parallel]
    pub fn row_sums(rows: &Nested<u8>) -> Vec<u32> {
        map(|r| sum(map(|v| v as u32, r)), rows)
    }

    #[parallel]
    pub fn negate_rows(rows: &Nested<i8>, k: i8) -> Nested<i8> {
        map(|r| map(|v| k - v, r), rows)
    }

    #[parallel]
    pub fn brighten(x: &Seq<u8>, k: u8) -> Seq<u8> {
        map(|v| if v > 255u8 - k { 255u8 } else { v + k }, x)
    }

    #[parallel]
    pub fn row_max(m: &Matrix<i16>) -> Vec<i16> {
        map(|r| reduce(|a, b| a.max(b), r, i16::MIN), m)
    }
}

/// `n` values spread over every bit pattern, with the edges (0, MIN, MAX, -1) often.
fn i8s(rng: &mut Rng, n: usize) -> Vec<i8> {
    rng.vec(n, |r| {
        r.edgy(&[0, 1, -1, i8::MIN, i8::MAX], |r| r.u64() as i8)
    })
}

fn u8s(rng: &mut Rng, n: usize) -> Vec<u8> {
    rng.vec(n, |r| r.edgy(&[0, 1, 128, u8::MAX], |r| r.u64() as u8))
}

fn i16s(rng: &mut Rng, n: usize) -> Vec<i16> {
    rng.vec(n, |r| {
        r.edgy(&[0, 1, -1, i16::MIN, i16::MAX], |r| r.u64() as i16)
    })
}

fn u16s(rng: &mut Rng, n: usize) -> Vec<u16> {
    rng.vec(n, |r| r.edgy(&[0, 1, 0x8000, u16::MAX], |r| r.u64() as u16))
}

/// Sizes without the big one, for the programs whose big cases add nothing to the flat
/// ones at [`ALL_SIZES`].
const SMALL_SIZES: [usize; 3] = [0, 1, 1001];

fn wrapping(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (x, y) = (u8s(rng, n), u8s(rng, n));
        let k = 200u8;
        let want = zip_with(&x, &y, |a, b| {
            (a.wrapping_mul(3).wrapping_add(b).wrapping_sub(k)) ^ (a << 3) ^ (b >> 1)
        });
        assert_same(&prog::wrap_u8(&x, &y, k), &want, "wrap_u8");
    });
    each_size(place, &SMALL_SIZES, |n, rng| {
        let (x, y) = (i8s(rng, n), i8s(rng, n));
        let want = zip_with(&x, &y, |a, b| {
            (a.wrapping_mul(b).wrapping_sub(100))
                .wrapping_div(b | 1)
                .wrapping_add(a >> 2)
                .wrapping_add(!b)
                .wrapping_sub(a.wrapping_abs())
                .wrapping_add(a.wrapping_neg().wrapping_rem(7))
        });
        assert_same(&prog::wrap_i8(&x, &y), &want, "wrap_i8");
        let (x, y) = (i16s(rng, n), i16s(rng, n));
        let k = -3i16;
        let want = zip_with(&x, &y, |a, b| {
            (a.wrapping_mul(a).wrapping_add(b.wrapping_mul(k)))
                .wrapping_rem(1000)
                .wrapping_sub(a << 11)
                .wrapping_add(b.max(a))
        });
        assert_same(&prog::wrap_i16(&x, &y, k), &want, "wrap_i16");
        let (x, y) = (u16s(rng, n), u16s(rng, n));
        let want = zip_with(&x, &y, |a, b| {
            (a.wrapping_mul(b) >> 3) | a.min(b).wrapping_add(a.wrapping_sub(b) / 3)
        });
        assert_same(&prog::wrap_u16(&x, &y), &want, "wrap_u16");
    });
}

fn casts(place: Place) {
    each_size(place, &SMALL_SIZES, |n, rng| {
        let x: Vec<i64> = rng.vec(n, |r| {
            r.edgy(&[0, -1, 127, 128, -129, 65535, 65536, i64::MIN], |r| {
                r.u64() as i64 >> r.below(60)
            })
        });
        let specials = [
            f32::NAN,
            f32::INFINITY,
            -f32::INFINITY,
            -0.5,
            255.9,
            256.0,
            -129.0,
        ];
        let f: Vec<f32> = rng.vec(n, |r| r.edgy(&specials, |r| r.f32_in(-70000.0, 70000.0)));
        let dspecials = [f64::NAN, -1.0, 255.5, 1e300, -32768.7, 32767.99];
        let d: Vec<f64> = rng.vec(n, |r| r.edgy(&dspecials, |r| r.f64_in(-1e5, 1e5)));
        let want: Vec<_> = (0..n)
            .map(|i| {
                let (a, b, c) = (x[i], f[i], d[i]);
                (
                    a as i8, a as u8, a as i16, a as u16, b as i8, b as u16, c as u8, c as i16,
                )
            })
            .collect();
        assert_eq!(prog::casts_down(&x, &f, &d), want, "casts_down");
        let (a, b, c, d) = (i8s(rng, n), u8s(rng, n), i16s(rng, n), u16s(rng, n));
        let want: Vec<_> = (0..n)
            .map(|i| {
                let (a, b, c, d) = (a[i], b[i], c[i], d[i]);
                (
                    a as i32, a as u64, b as usize, c as f32, d as f64, c as u32, d as i64,
                    a as usize,
                )
            })
            .collect();
        assert_eq!(prog::casts_up(&a, &b, &c, &d), want, "casts_up");
        let want: Vec<_> = (0..n)
            .map(|i| {
                let (a, b, c, d) = (a[i], b[i], c[i], d[i]);
                (
                    a as u8,
                    a as i16,
                    a as u16,
                    b as i8,
                    u16::from(b > 100),
                    c as i8,
                    c as u8,
                    d as i16,
                )
            })
            .collect();
        assert_eq!(prog::casts_across(&a, &b, &c, &d), want, "casts_across");
    });
}

fn reductions_and_scans(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (a, b, c) = (u8s(rng, n), i8s(rng, n), i16s(rng, n));
        let want = (
            a.iter().fold(0u8, |s, &v| s.wrapping_add(v)),
            b.iter().copied().fold(i8::MAX, i8::min),
            b.iter().copied().fold(i8::MIN, i8::max),
            c.iter().fold(0i32, |s, &v| s.wrapping_add(v.into())),
            c.iter().fold(0u16, |s, &v| s ^ v as u16),
        );
        assert_eq!(prog::reductions(&a, &b, &c), want, "reductions");
    });
    each_size(place, &SMALL_SIZES, |n, rng| {
        let (a, b) = (u16s(rng, n), i8s(rng, n));
        let inclusive: Vec<u16> = a
            .iter()
            .scan(0u16, |s, &v| {
                *s = s.wrapping_add(v);
                Some(*s)
            })
            .collect();
        let exclusive: Vec<i8> = b
            .iter()
            .scan(i8::MIN, |s, &v| {
                let before = *s;
                *s = (*s).max(v);
                Some(before)
            })
            .collect();
        assert_eq!(prog::scans(&a, &b), (inclusive, exclusive), "scans");
    });
}

fn sorts(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = i8s(rng, n);
        let mut want = x.clone();
        want.sort();
        assert_same(&prog::sort_i8(&x), &want, "sort_i8");
    });
    each_size(place, &SMALL_SIZES, |n, rng| {
        let x = u8s(rng, n);
        let mut want = x.clone();
        want.sort();
        assert_same(&prog::sort_u8(&x), &want, "sort_u8");
        let x = i16s(rng, n);
        let mut want = x.clone();
        want.sort();
        assert_same(&prog::sort_i16(&x), &want, "sort_i16");
        // Few distinct keys, so that stability shows.
        let k: Vec<i16> = rng.vec(n, |r| r.int_in(-3..=3) as i16 * 1000);
        let v = u16s(rng, n);
        let mut pairs: Vec<(i16, u16)> = k.iter().copied().zip(v.iter().copied()).collect();
        pairs.sort_by_key(|p| p.0);
        let want: Vec<u16> = pairs.iter().map(|p| p.1).collect();
        assert_same(&prog::sort_by_i16_key(&k, &v), &want, "sort_by_i16_key");
        let k: Vec<i8> = rng.vec(n, |r| r.int_in(-2..=2) as i8);
        let v = u8s(rng, n);
        let mut want: Vec<(i8, u8)> = k.iter().copied().zip(v.iter().copied()).collect();
        want.sort();
        assert_eq!(prog::sort_pairs(&k, &v), want, "sort_pairs");
    });
}

fn filters(place: Place) {
    each_size(place, &SMALL_SIZES, |n, rng| {
        let (a, b) = (i8s(rng, n), u16s(rng, n));
        let want = (
            a.iter().copied().filter(|&v| v < 0).collect::<Vec<_>>(),
            b.iter()
                .copied()
                .filter(|&v| v % 3 == 0)
                .collect::<Vec<_>>(),
        );
        assert_eq!(prog::filters(&a, &b), want, "filters");
    });
}

fn histogram(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        // An image with a skewed histogram: most pixels dark, some saturated.
        let pixels: Vec<u8> = rng.vec(n, |r| r.edgy(&[255, 0], |r| (r.u64() % 64) as u8));
        let mut want = vec![0u32; 256];
        for &p in &pixels {
            want[usize::from(p)] += 1;
        }
        assert_same(&prog::histogram_u8(&pixels), &want, "histogram");
    });
}

fn narrow_slots(place: Place) {
    each_size(place, &SMALL_SIZES, |n, rng| {
        let bins = 7;
        let keys: Vec<u8> = rng.vec(n, |r| r.below(bins) as u8);
        let (v8, v16) = (u8s(rng, n), i16s(rng, n));
        let mut sums = vec![0u8; bins];
        let mut maxes = vec![i16::MIN; bins];
        for i in 0..n {
            let k = usize::from(keys[i]);
            sums[k] = sums[k].wrapping_add(v8[i]);
            maxes[k] = maxes[k].max(v16[i]);
        }
        assert_eq!(
            prog::narrow_slots(&keys, &v8, &v16, bins),
            (sums, maxes),
            "narrow_slots"
        );
        let (a, b) = (i8s(rng, n), u16s(rng, n));
        let mut want = vec![(0i8, 1u16); bins];
        for i in 0..n {
            let w = &mut want[usize::from(keys[i])];
            *w = (w.0.wrapping_add(a[i]), w.1.wrapping_mul(b[i]));
        }
        assert_eq!(
            prog::narrow_pair_slots(&keys, &a, &b, bins),
            want,
            "narrow_pair_slots"
        );
    });
}

fn gathers(place: Place) {
    each_size(place, &SMALL_SIZES, |n, rng| {
        let x = i16s(rng, 256);
        let idx = u8s(rng, n);
        let y = u8s(rng, n);
        let idy = rng.indices(if n == 0 { 0 } else { 2 * n + 1 }, n);
        let want = (
            idx.iter().map(|&i| x[usize::from(i)]).collect::<Vec<_>>(),
            idy.iter().map(|&i| y[i]).collect::<Vec<_>>(),
        );
        assert_eq!(prog::gathers(&x, &idx, &y, &idy), want, "gathers");
        // Indices of 8- and 16-bit types read on the host (a scalar result, a capture).
        if n > 0 {
            let x = i16s(rng, n);
            let (k, j) = ((n - 1).min(200) as u8, (n / 2) as i16);
            let (a, b) = (x[usize::from(k)], x[j as usize]);
            let want = (
                a,
                b,
                x.iter().map(|v| v.wrapping_add(a)).collect::<Vec<_>>(),
            );
            assert_eq!(prog::pick(&x, k, j), want, "pick");
        }
    });
}

fn mixed_tuples(place: Place) {
    each_size(place, &SMALL_SIZES, |n, rng| {
        let (a, b, c) = (u8s(rng, n), i16s(rng, n), u16s(rng, n));
        let t: Vec<(i16, u16, u8)> = (0..n)
            .map(|i| (i16::from(a[i]).wrapping_add(b[i]), c[i], a[i] ^ 1))
            .collect();
        let s = (0..n).fold((0u8, 0i16), |s, i| {
            (s.0.wrapping_add(a[i]), s.1.wrapping_add(b[i]))
        });
        assert_eq!(prog::mixed_tuples(&a, &b, &c), (t, s), "mixed_tuples");
    });
}

fn nested_rows(place: Place) {
    each_size(place, &SMALL_SIZES, |n, rng| {
        let lens: Vec<usize> = rng.vec(n, |r| r.below(9));
        let rows8: Vec<Vec<u8>> = lens.iter().map(|&l| u8s(rng, l)).collect();
        let want: Vec<u32> = rows8
            .iter()
            .map(|r| r.iter().map(|&v| u32::from(v)).sum())
            .collect();
        let rows = dpl::Nested::from_rows(rows8.clone());
        assert_same(&prog::row_sums(&rows), &want, "row_sums");
        let rowsi: Vec<Vec<i8>> = lens.iter().map(|&l| i8s(rng, l)).collect();
        let k = -100i8;
        let want: Vec<Vec<i8>> = rowsi
            .iter()
            .map(|r| r.iter().map(|&v| k.wrapping_sub(v)).collect())
            .collect();
        let got = prog::negate_rows(&dpl::Nested::from_rows(rowsi), k);
        let got: Vec<Vec<i8>> = got.rows().map(<[i8]>::to_vec).collect();
        assert_eq!(got, want, "negate_rows");
    });
}

/// `Seq<u8>` results passed on to the next call (on the GPU places they stay on the
/// device in between) and the rows of a `Matrix<i16>`, in both layouts.
fn seq_and_matrix(place: Place) {
    each_size(place, &SMALL_SIZES, |n, rng| {
        let x = u8s(rng, n);
        let once = prog::brighten(&dpl::Seq::from(x.clone()), 30);
        let twice = prog::brighten(&once, 100);
        let want: Vec<u8> = x
            .iter()
            .map(|&v| v.saturating_add(30).saturating_add(100))
            .collect();
        assert_same(&twice.to_vec(), &want, "brighten twice");
        let cols = 5;
        let data = i16s(rng, n * cols);
        let want: Vec<i16> = data
            .chunks(cols)
            .map(|r| r.iter().copied().fold(i16::MIN, i16::max))
            .collect();
        let m = dpl::Matrix::row_major(n, cols, data.clone()).unwrap();
        assert_same(&prog::row_max(&m), &want, "row_max row-major");
        let mut cm = vec![0i16; n * cols];
        for i in 0..n {
            for j in 0..cols {
                cm[j * n + i] = data[i * cols + j];
            }
        }
        let m = dpl::Matrix::row_major(cols, n, cm).unwrap().transpose();
        assert_same(&prog::row_max(&m), &want, "row_max column-major");
    });
}

on_every_place!(
    seq_and_matrix,
    wrapping,
    casts,
    reductions_and_scans,
    sorts,
    filters,
    histogram,
    narrow_slots,
    gathers,
    mixed_tuples,
    nested_rows,
);

/// Every program above runs on the GPU places as PTX (none falls back to the CPU), and
/// 8- and 16-bit sequences are read and written at their own width (`ld.global.u8`, ...),
/// not widened in memory, so a warp's loads of consecutive elements stay coalesced.
#[cfg(feature = "sim")]
#[test]
fn every_program_compiles_to_ptx_with_narrow_accesses() {
    let all = [
        ("wrap_u8", dpl::inspect!(prog::wrap_u8)),
        ("wrap_i8", dpl::inspect!(prog::wrap_i8)),
        ("wrap_i16", dpl::inspect!(prog::wrap_i16)),
        ("wrap_u16", dpl::inspect!(prog::wrap_u16)),
        ("casts_down", dpl::inspect!(prog::casts_down)),
        ("casts_up", dpl::inspect!(prog::casts_up)),
        ("casts_across", dpl::inspect!(prog::casts_across)),
        ("reductions", dpl::inspect!(prog::reductions)),
        ("scans", dpl::inspect!(prog::scans)),
        ("sort_i8", dpl::inspect!(prog::sort_i8)),
        ("sort_u8", dpl::inspect!(prog::sort_u8)),
        ("sort_i16", dpl::inspect!(prog::sort_i16)),
        ("sort_by_i16_key", dpl::inspect!(prog::sort_by_i16_key)),
        ("sort_pairs", dpl::inspect!(prog::sort_pairs)),
        ("filters", dpl::inspect!(prog::filters)),
        ("histogram", dpl::inspect!(prog::histogram_u8)),
        ("narrow_slots", dpl::inspect!(prog::narrow_slots)),
        ("narrow_pair_slots", dpl::inspect!(prog::narrow_pair_slots)),
        ("gathers", dpl::inspect!(prog::gathers)),
        ("pick", dpl::inspect!(prog::pick)),
        ("mixed_tuples", dpl::inspect!(prog::mixed_tuples)),
        ("row_sums", dpl::inspect!(prog::row_sums)),
        ("negate_rows", dpl::inspect!(prog::negate_rows)),
        ("brighten", dpl::inspect!(prog::brighten)),
        ("row_max", dpl::inspect!(prog::row_max)),
    ];
    for (name, i) in &all {
        assert_eq!(i.gpu_not_compiled, "", "{name} does not compile to PTX");
        assert!(!i.ptx.is_empty(), "{name}: no PTX");
    }
    let ptx = |name: &str| all.iter().find(|(n, _)| *n == name).unwrap().1.ptx;
    assert!(ptx("histogram").contains("ld.global.u8"));
    assert!(ptx("wrap_i8").contains("ld.global.s8"));
    assert!(ptx("wrap_i8").contains("st.global.s8"));
    assert!(ptx("wrap_i16").contains("ld.global.s16"));
    assert!(ptx("wrap_u16").contains("st.global.u16"));
    // Wrapping at the type's width after an addition.
    assert!(ptx("wrap_u8").contains("cvt.u32.u8"));
}
