//! Loops and `let mut` inside element functions: `for` over ranges (`..`, `..=`, `.rev()`,
//! `.step_by(k)`, empty ones and ones that end at the edge of their type) and over the
//! elements of a sequence, `while`, `loop`
//! with `break` / `break value` / `continue` in nested `if`s, compound assignments, tuple
//! variables, loops in `reduce` operators and in nested (row) maps, over `u8 i16 u32 u64
//! f32 f64`: Mandelbrot escape counts, Collatz steps, Newton's square root, integer powers
//! by squaring, gcd. Each against the same computation written in plain Rust.

use super::*;

/// The programs under test, written in the DSL.
mod prog {
    use dpl::prelude::*;

    #[parallel]
    pub fn mandelbrot(cx: &[f32], cy: &[f32], max: u32) -> Vec<u32> {
        map(
            |x0, y0| {
                let (mut x, mut y, mut i) = (0.0f32, 0.0f32, 0u32);
                while i < max && x * x + y * y <= 4.0f32 {
                    let t = x * x - y * y + x0;
                    y = 2.0f32 * x * y + y0;
                    x = t;
                    i += 1;
                }
                i
            },
            cx,
            cy,
        )
    }

    #[parallel]
    pub fn collatz(x: &[u64]) -> Vec<u32> {
        map(
            |n| {
                let mut n = n;
                let mut steps = 0u32;
                while n != 1 {
                    if n % 2 == 0 {
                        n /= 2;
                    } else {
                        n = 3 * n + 1;
                    }
                    steps += 1;
                }
                steps
            },
            x,
        )
    }

    #[parallel]
    pub fn newton_sqrt(x: &[f64]) -> Vec<(f64, u32)> {
        map(
            |v| {
                let mut g = if v > 1.0 { v } else { 1.0 };
                let mut k = 0u32;
                while (g * g - v).abs() > 1e-12 * v && k < 100 {
                    g = 0.5 * (g + v / g);
                    k += 1;
                }
                (g, k)
            },
            x,
        )
    }

    #[parallel]
    pub fn powers(b: &[u64], e: &[u32]) -> Vec<u64> {
        map(
            |mut base, mut e| {
                let mut r = 1u64;
                while e > 0 {
                    if e & 1 == 1 {
                        r *= base;
                    }
                    base *= base;
                    e >>= 1;
                }
                r
            },
            b,
            e,
        )
    }

    #[parallel]
    pub fn gcds(a: &[u32], b: &[u32]) -> (Vec<u32>, u32) {
        let pairwise = map(
            |a, b| {
                let (mut a, mut b) = (a, b);
                while b != 0 {
                    (a, b) = (b, a % b);
                }
                a
            },
            a,
            b,
        );
        // gcd is associative and commutative, and 0 is its identity.
        let all = reduce(
            |x, y| {
                let mut p = (x, y);
                while p.1 != 0 {
                    p = (p.1, p.0 % p.1);
                }
                p.0
            },
            a,
            0u32,
        );
        (pairwise, all)
    }

    #[parallel]
    pub fn first_hits(x: &[u32]) -> Vec<(u32, u32, u32)> {
        map(
            |x| {
                // The first i whose hash has its top 4 bits clear.
                let mut i = 0u32;
                let first = loop {
                    if (x ^ i).wrapping_mul(2654435761u32) >> 28 == 0 {
                        break i;
                    }
                    i += 1;
                };
                // Several `break`s with values, one in a nested `if`, and a tuple value.
                let mut j = 0u32;
                let mut s = 0u32;
                let (code, total) = loop {
                    j += 1;
                    if j > 40 {
                        break (3u32, s);
                    }
                    if (x >> (j % 32)) & 1 == 1 {
                        s += j;
                        if s > 100 {
                            break (1u32, s);
                        }
                    } else if j * x % 7 == 3 {
                        break (2u32, s + 1000);
                    }
                };
                (first, code, total)
            },
            x,
        )
    }

    #[parallel]
    pub fn skips(x: &[u32]) -> Vec<(u32, u32)> {
        map(
            |x| {
                let mut s = 0u32;
                let mut count = 0u32;
                for i in 0..x % 50 {
                    if i % 3 == 0 {
                        continue;
                    }
                    s += i;
                    if i > 40 {
                        if x % 2 == 0 {
                            break;
                        }
                        continue;
                    }
                    count += 1;
                }
                let mut k = 0u32;
                let mut t = 0u32;
                while k < x % 20 {
                    k += 1;
                    if k % 4 == 1 {
                        continue;
                    }
                    t = t * 3 + k;
                }
                (s + t, count)
            },
            x,
        )
    }

    #[parallel]
    pub fn nested(x: &[u32]) -> Vec<u64> {
        map(
            |x| {
                let n = x % 30;
                let mut s = 0u64;
                for i in 0..n {
                    for j in 0..i {
                        if (i + j) % 5 == 4 {
                            break;
                        }
                        s += (i * j) as u64;
                    }
                    let mut k = i;
                    while k > 0 {
                        s ^= k as u64;
                        k /= 3;
                    }
                }
                s
            },
            x,
        )
    }

    /// `for` over the elements of a captured sequence (`w`, read whole by every element).
    #[parallel]
    pub fn horner(x: &[u32], w: &[u32]) -> Vec<u32> {
        map(
            |v| {
                let mut s = v;
                for c in w {
                    s = s * 3 + c;
                }
                for c in w.iter() {
                    if c % 2 == 0 {
                        continue;
                    }
                    s ^= c;
                }
                s
            },
            x,
        )
    }

    /// Every kind of range, weighted by position so that the order shows.
    #[parallel]
    pub fn ranges(a: &[i16], b: &[i16]) -> Vec<(i32, i32, i32, i32, i32, i32)> {
        map(
            |a, b| {
                let mut up = 0i32;
                for i in a..b {
                    up = up * 3 + i as i32;
                }
                let mut incl = 0i32;
                for i in a..=b {
                    incl = incl * 3 + i as i32;
                }
                let mut down = 0i32;
                for i in (a..b).rev() {
                    down = down * 3 + i as i32;
                }
                let mut down_incl = 0i32;
                for i in (a..=b).rev() {
                    down_incl = down_incl * 3 + i as i32;
                }
                let mut stepped = 0i32;
                for i in (a..b).step_by(3) {
                    stepped = stepped * 3 + i as i32;
                }
                let mut both = 0i32;
                for i in (a..=b).rev().step_by(2) {
                    both = both * 3 + i as i32;
                }
                (up, incl, down, down_incl, stepped, both)
            },
            a,
            b,
        )
    }

    /// `u8` ranges up to the top of the type.
    #[parallel]
    pub fn byte_ranges(x: &[u8]) -> Vec<(u32, u8, u32)> {
        map(
            |x| {
                let mut count = 0u32;
                for _ in x..=255u8 {
                    count += 1;
                }
                let mut last = 0u8;
                for i in (x..=u8::MAX).step_by(7) {
                    last = i;
                }
                let mut sum = 0u32;
                for i in (0..x).rev() {
                    sum += i as u32;
                }
                (count, last, sum)
            },
            x,
        )
    }

    /// Tuples as `let mut` variables, every compound assignment, `if` without `else`.
    #[parallel]
    pub fn tuples_and_ops(x: &[u64]) -> Vec<(u64, u64)> {
        map(
            |x| {
                let mut fib = (0u64, 1u64);
                for _ in 0..x % 90 {
                    fib = (fib.1, fib.0 + fib.1);
                }
                let mut v = x;
                v += 7;
                v -= 3;
                v *= 5;
                v /= 2;
                v %= 1000003;
                v &= 0xffff_ff;
                v |= 1;
                v ^= 0x5a5a;
                v <<= 3;
                v >>= 1;
                if v > 1000 {
                    v -= 1000;
                }
                (fib.0, v)
            },
            x,
        )
    }

    /// Loops in `f32` and over the rows of a nested map (by index and by element).
    #[parallel]
    pub fn row_loops(rows: &Nested<f32>) -> Vec<(f32, u32)> {
        map(
            |r| {
                let mut s = 0.0f32;
                let mut i = 0usize;
                while i < r.len() {
                    s += r[i] * (i as f32);
                    i += 1;
                }
                let mut above = 0u32;
                for v in r {
                    if v > s {
                        above += 1;
                    }
                }
                (s, above)
            },
            rows,
        )
    }

    /// A loop in the inner map of a nested map.
    #[parallel]
    pub fn inner_loops(rows: &Nested<u32>) -> Nested<u32> {
        map(
            |r| {
                map(
                    |v| {
                        let mut n = v % 1000 + 1;
                        let mut steps = 0u32;
                        while n != 1 {
                            n = if n % 2 == 0 { n / 2 } else { 3 * n + 1 };
                            steps += 1;
                        }
                        steps
                    },
                    r,
                )
            },
            rows,
        )
    }

    /// Follows `table` from each element `steps` times: indices the loop computes, out of
    /// range for some elements (a map of costly elements: on the CPU it is balanced by
    /// its estimated work, and its first error must still be the first in index order).
    #[parallel]
    pub fn walks(x: &[u32], table: &[u32], steps: u32) -> Result<Vec<u32>, Error> {
        map(
            |v| {
                let mut at = v;
                for _ in 0..steps {
                    at = table[at as usize];
                }
                at
            },
            x,
        )
    }

    /// `let mut` and `if` statements at the top level (no loop there).
    #[parallel]
    pub fn top_level_mut(x: &[f64], scale: bool) -> (f64, Vec<f64>) {
        let mut total = sum(x);
        let mut ys = map(|v| v + 1.0, x);
        if scale {
            total *= 2.0;
            ys = map(|v| v * 2.0, ys);
        }
        (total, ys)
    }
}

/// Sizes for the loop programs: each element runs a loop, so the big size is modest.
const SIZES: [usize; 4] = [0, 1, 1001, 4099];

/// The walks of `x` through `table`, or the first out-of-range read in index order.
fn walks_ref(x: &[u32], table: &[u32], steps: u32) -> Result<Vec<u32>, (i128, usize)> {
    x.iter()
        .map(|&v| {
            let mut at = v;
            for _ in 0..steps {
                at = *table.get(at as usize).ok_or((at as i128, table.len()))?;
            }
            Ok(at)
        })
        .collect()
}

fn walks(place: Place) {
    // 2^16 elements: past the size where the CPU runs such a map in parallel.
    each_size(place, &[1, 1001, 1 << 16], |n, rng| {
        let table: Vec<u32> = rng.vec(n, |r| r.below(n) as u32);
        let mut x: Vec<u32> = rng.vec(n, |r| r.below(n) as u32);
        assert_eq!(
            prog::walks(&x, &table, 3).ok(),
            walks_ref(&x, &table, 3).ok()
        );
        // Two elements read out of range, the later one in a later chunk: the earlier
        // one is reported, whichever finished first.
        let (p1, p2) = (n / 4, 3 * n / 4);
        x[p2] = n as u32 + 5;
        x[p1] = n as u32 + 11;
        let want = walks_ref(&x, &table, 3).expect_err("two reads out of range");
        match prog::walks(&x, &table, 3) {
            Err(dpl::Error::IndexOutOfRange { index, len, .. }) => {
                assert_eq!((index, len), want, "n = {n}")
            }
            other => panic!("n = {n}: {other:?}"),
        }
    });
}

fn mandelbrot(place: Place) {
    each_size(place, &SIZES, |n, rng| {
        let cx = rng.f32s(n, -2.2, 0.8);
        let cy = rng.f32s(n, -1.2, 1.2);
        let max = 200u32;
        let want = zip_with(&cx, &cy, |x0, y0| {
            let (mut x, mut y, mut i) = (0.0f32, 0.0f32, 0u32);
            while i < max && x * x + y * y <= 4.0 {
                let t = x * x - y * y + x0;
                y = 2.0 * x * y + y0;
                x = t;
                i += 1;
            }
            i
        });
        assert_same(&prog::mandelbrot(&cx, &cy, max), &want, "mandelbrot");
    });
}

fn collatz(place: Place) {
    each_size(place, &SIZES, |n, rng| {
        let x: Vec<u64> = rng.vec(n, |r| 1 + r.below(100_000) as u64);
        let want = each(&x, |mut v| {
            let mut steps = 0u32;
            while v != 1 {
                v = if v % 2 == 0 { v / 2 } else { 3 * v + 1 };
                steps += 1;
            }
            steps
        });
        assert_same(&prog::collatz(&x), &want, "collatz");
    });
}

fn newton(place: Place) {
    each_size(place, &SIZES, |n, rng| {
        let x = rng.f64s(n, 0.0, 1e6);
        let got = prog::newton_sqrt(&x);
        let want = each(&x, |v| {
            let mut g = if v > 1.0 { v } else { 1.0 };
            let mut k = 0u32;
            while (g * g - v).abs() > 1e-12 * v && k < 100 {
                g = 0.5 * (g + v / g);
                k += 1;
            }
            (g, k)
        });
        assert_same(&got, &want, "newton_sqrt");
        for (&(g, _), &v) in got.iter().zip(&x) {
            assert!(
                (g - v.sqrt()).abs() <= 1e-9 * v.sqrt().max(1.0),
                "sqrt({v}) = {g}"
            );
        }
    });
}

fn powers(place: Place) {
    each_size(place, &SIZES, |n, rng| {
        let b = rng.u64s(n);
        let e: Vec<u32> = rng.vec(n, |r| r.below(70) as u32);
        let want = zip_with(&b, &e, |b, e| b.wrapping_pow(e));
        assert_same(&prog::powers(&b, &e), &want, "powers");
    });
}

fn gcds(place: Place) {
    fn gcd(a: u32, b: u32) -> u32 {
        if b == 0 { a } else { gcd(b, a % b) }
    }
    each_size(place, &SIZES, |n, rng| {
        let a: Vec<u32> = rng.vec(n, |r| 6 * r.below(5000) as u32);
        let b: Vec<u32> = rng.vec(n, |r| 4 * r.below(5000) as u32);
        let (pairwise, all) = prog::gcds(&a, &b);
        assert_same(&pairwise, &zip_with(&a, &b, gcd), "pairwise gcd");
        assert_exact(all, a.iter().fold(0, |g, &v| gcd(g, v)), "gcd of all");
    });
}

fn breaks(place: Place) {
    each_size(place, &SIZES, |n, rng| {
        let x = rng.u32s(n);
        let want = each(&x, |x| {
            let mut i = 0u32;
            let first = loop {
                if (x ^ i).wrapping_mul(2654435761) >> 28 == 0 {
                    break i;
                }
                i += 1;
            };
            let (mut j, mut s) = (0u32, 0u32);
            let (code, total) = loop {
                j += 1;
                if j > 40 {
                    break (3, s);
                }
                if (x >> (j % 32)) & 1 == 1 {
                    s += j;
                    if s > 100 {
                        break (1, s);
                    }
                } else if j.wrapping_mul(x) % 7 == 3 {
                    break (2, s + 1000);
                }
            };
            (first, code, total)
        });
        assert_eq!(prog::first_hits(&x), want, "first_hits");
    });
}

fn continues(place: Place) {
    each_size(place, &SIZES, |n, rng| {
        let x = rng.u32s(n);
        let want = each(&x, |x| {
            let (mut s, mut count) = (0u32, 0u32);
            for i in 0..x % 50 {
                if i % 3 == 0 {
                    continue;
                }
                s += i;
                if i > 40 {
                    if x % 2 == 0 {
                        break;
                    }
                    continue;
                }
                count += 1;
            }
            let (mut k, mut t) = (0u32, 0u32);
            while k < x % 20 {
                k += 1;
                if k % 4 == 1 {
                    continue;
                }
                t = t.wrapping_mul(3).wrapping_add(k);
            }
            (s.wrapping_add(t), count)
        });
        assert_same(&prog::skips(&x), &want, "skips");
    });
}

fn over_sequences(place: Place) {
    each_size(place, &SIZES, |n, rng| {
        let x = rng.u32s(n);
        let w = rng.u32s(n % 13);
        let want = each(&x, |v| {
            let mut s = v;
            for &c in &w {
                s = s.wrapping_mul(3).wrapping_add(c);
            }
            for &c in w.iter().filter(|&&c| c % 2 == 1) {
                s ^= c;
            }
            s
        });
        assert_same(&prog::horner(&x, &w), &want, "horner");
    });
}

fn nested_loops(place: Place) {
    each_size(place, &SIZES, |n, rng| {
        let x = rng.u32s(n);
        let want = each(&x, |x| {
            let mut s = 0u64;
            for i in 0..x % 30 {
                for j in 0..i {
                    if (i + j) % 5 == 4 {
                        break;
                    }
                    s += (i * j) as u64;
                }
                let mut k = i;
                while k > 0 {
                    s ^= k as u64;
                    k /= 3;
                }
            }
            s
        });
        assert_same(&prog::nested(&x), &want, "nested");
    });
}

fn ranges(place: Place) {
    // Plain Rust's ranges, weighted by position as the program does.
    fn fold(it: impl Iterator<Item = i16>) -> i32 {
        it.fold(0i32, |acc, i| acc.wrapping_mul(3).wrapping_add(i as i32))
    }
    each_size(place, &SIZES, |n, rng| {
        let a: Vec<i16> = rng.vec(n, |r| {
            r.edgy(&[i16::MIN, i16::MAX, i16::MAX - 1, 0, -1], |r| {
                r.int_in(-100..100) as i16
            })
        });
        let b: Vec<i16> = a
            .iter()
            .map(|&v| v.saturating_add(rng.int_in(-3..40) as i16))
            .collect();
        let want = zip_with(&a, &b, |a, b| {
            (
                fold(a..b),
                fold(a..=b),
                fold((a..b).rev()),
                fold((a..=b).rev()),
                fold((a..b).step_by(3)),
                fold((a..=b).rev().step_by(2)),
            )
        });
        assert_eq!(prog::ranges(&a, &b), want, "ranges");
    });
    each_size(place, &SIZES, |n, rng| {
        let x: Vec<u8> = rng.vec(n, |r| r.edgy(&[0, 1, 254, 255], |r| r.u64() as u8));
        let want = each(&x, |x| {
            (
                (x..=255).count() as u32,
                (x..=u8::MAX).step_by(7).next_back().unwrap_or(0),
                (0..x).rev().map(u32::from).sum::<u32>(),
            )
        });
        assert_eq!(prog::byte_ranges(&x), want, "byte_ranges");
    });
}

fn tuples_and_ops(place: Place) {
    each_size(place, &SIZES, |n, rng| {
        let x = rng.u64s(n);
        let want = each(&x, |x| {
            let mut fib = (0u64, 1u64);
            for _ in 0..x % 90 {
                fib = (fib.1, fib.0.wrapping_add(fib.1));
            }
            let mut v = x.wrapping_add(7).wrapping_sub(3).wrapping_mul(5) / 2 % 1000003;
            v = ((v & 0xff_ffff) | 1) ^ 0x5a5a;
            v = (v << 3) >> 1;
            if v > 1000 {
                v -= 1000;
            }
            (fib.0, v)
        });
        assert_same(&prog::tuples_and_ops(&x), &want, "tuples_and_ops");
    });
}

fn row_loops(place: Place) {
    each_size(place, &SIZES, |n, rng| {
        let rows: Vec<Vec<f32>> = (0..n / 7)
            .map(|_| {
                let len = rng.below(20);
                rng.f32s(len, -1.0, 1.0)
            })
            .collect();
        let nested = dpl::Nested::from_rows(rows.clone());
        let want: Vec<(f32, u32)> = rows
            .iter()
            .map(|r| {
                let mut s = 0.0f32;
                for (i, &v) in r.iter().enumerate() {
                    s += v * i as f32;
                }
                (s, r.iter().filter(|&&v| v > s).count() as u32)
            })
            .collect();
        assert_same(&prog::row_loops(&nested), &want, "row_loops");
        let urows: Vec<Vec<u32>> = (0..n / 7)
            .map(|_| {
                let len = rng.below(12);
                rng.u32s(len)
            })
            .collect();
        let got = prog::inner_loops(&dpl::Nested::from_rows(urows.clone()));
        for (k, r) in urows.iter().enumerate() {
            let want = each(r, |v| {
                let (mut n, mut steps) = (v % 1000 + 1, 0u32);
                while n != 1 {
                    n = if n % 2 == 0 { n / 2 } else { 3 * n + 1 };
                    steps += 1;
                }
                steps
            });
            assert_same(got.row(k), &want, "inner_loops");
        }
    });
}

fn top_level_mut(place: Place) {
    each_size(place, &SIZES, |n, rng| {
        let x = rng.f64s(n, -1.0, 1.0);
        for scale in [false, true] {
            let (total, ys) = prog::top_level_mut(&x, scale);
            let f = if scale { 2.0 } else { 1.0 };
            let (want, magnitude) = f64_sum(x.iter().copied());
            assert_reduced(total, want * f, magnitude * f, n, "total");
            assert_same(&ys, &each(&x, |v| (v + 1.0) * f), "ys");
        }
    });
}

/// On the GPU places every program runs as generated GPU code, not on the CPU fallback.
#[cfg(feature = "sim")]
#[test]
fn every_loop_program_compiles_for_the_gpu() {
    let reasons = [
        dpl::inspect!(prog::mandelbrot).gpu_not_compiled,
        dpl::inspect!(prog::collatz).gpu_not_compiled,
        dpl::inspect!(prog::newton_sqrt).gpu_not_compiled,
        dpl::inspect!(prog::powers).gpu_not_compiled,
        dpl::inspect!(prog::gcds).gpu_not_compiled,
        dpl::inspect!(prog::first_hits).gpu_not_compiled,
        dpl::inspect!(prog::skips).gpu_not_compiled,
        dpl::inspect!(prog::nested).gpu_not_compiled,
        dpl::inspect!(prog::horner).gpu_not_compiled,
        dpl::inspect!(prog::ranges).gpu_not_compiled,
        dpl::inspect!(prog::byte_ranges).gpu_not_compiled,
        dpl::inspect!(prog::tuples_and_ops).gpu_not_compiled,
        dpl::inspect!(prog::row_loops).gpu_not_compiled,
        dpl::inspect!(prog::inner_loops).gpu_not_compiled,
        dpl::inspect!(prog::top_level_mut).gpu_not_compiled,
    ];
    for (k, why) in reasons.iter().enumerate() {
        assert!(
            why.is_empty(),
            "program {k} is not compiled for the GPU: {why}"
        );
    }
}

on_every_place!(
    mandelbrot,
    walks,
    collatz,
    newton,
    powers,
    gcds,
    breaks,
    continues,
    nested_loops,
    over_sequences,
    ranges,
    tuples_and_ops,
    row_loops,
    top_level_mut,
);
