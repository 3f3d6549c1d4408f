//! Benchmarks of the run-time helpers of `dpl_cpu::rt`.
//!
//! Every case is one criterion group named `<case>/<size>` (`size` is `2^k` or a plain
//! number) whose functions are:
//!
//! * `dpl` — the helper called exactly as generated code calls it: one call with the fused
//!   element function as a closure (`rt::read` for checked-once accesses);
//! * `rayon` — what a user would write by hand with rayon (materialising temporaries where
//!   a user would);
//! * `seq` — plain sequential Rust;
//! * `ceiling` — for streaming cases, a hand-tuned kernel for the same access pattern (a
//!   chunked multi-accumulator read loop, a chunked copy, a triad), measuring what this
//!   machine's memory system allows.
//!
//! Each function's throughput is the *algorithm's* bytes (inputs read once plus outputs
//! written once), so GB/s compare across functions. `cargo xtask bench-report` pairs the
//! functions of a group and writes BENCHMARKS.md. Set `DPL_BENCH_QUICK=1` for a short
//! run (fewer samples), `DPL_BENCH_MAX=2^20`-style to cap the sizes.

#![allow(missing_docs)]
// criterion_group! generates undocumented items.
// Every `unsafe` block in this file is `rt::read(s, i)` with `i < n == s.len()` (or a
// gathered index checked by `rt::check_indices` first), exactly as generated code uses it.
#![allow(clippy::undocumented_unsafe_blocks)]

use criterion::{
    BenchmarkGroup, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
    measurement::WallTime,
};
use dpl_core::run::Location;
use dpl_cpu::rt;
use dpl_testkit::mix;
use rayon::prelude::*;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

const AT: &Location = &Location {
    file: "benches/rt.rs",
    line: 1,
    column: 1,
};

/// The sizes of the streaming cases, as powers of two.
const LOG_SIZES: [u32; 4] = [16, 20, 24, 26];

fn data_f32(n: usize, seed: u64) -> Vec<f32> {
    rt::map(
        n,
        |i| (mix(i as u64 ^ seed) % 2001) as f32 / 1000.0 - 1.0,
        "map",
        AT,
    )
}

fn data_i32(n: usize, seed: u64) -> Vec<i32> {
    rt::map(n, |i| mix(i as u64 ^ seed) as i32, "map", AT)
}

/// A random permutation of `0..n` as u32 (sort by a random key: fast enough for 2^26).
fn permutation(n: usize) -> Vec<u32> {
    let mut keyed: Vec<(u64, u32)> = rt::map(n, |i| (mix(i as u64 + 12345), i as u32), "map", AT);
    keyed.par_sort_unstable();
    keyed.into_iter().map(|(_, i)| i).collect()
}

fn max_log() -> u32 {
    std::env::var("DPL_BENCH_MAX")
        .ok()
        .and_then(|s| s.trim_start_matches("2^").parse().ok())
        .unwrap_or(26)
}

fn quick() -> bool {
    std::env::var_os("DPL_BENCH_QUICK").is_some()
}

/// 1,000 elements (below the parallel threshold: the helpers must run sequentially on the
/// calling thread), then the streaming sizes.
fn sizes() -> impl Iterator<Item = (usize, String)> {
    std::iter::once((1000, "1000".to_string())).chain(
        LOG_SIZES
            .into_iter()
            .filter(|&k| k <= max_log())
            .map(|k| (1usize << k, format!("2^{k}"))),
    )
}

/// A group for `case` at one size, sized so the whole suite takes minutes.
fn group<'a>(
    c: &'a mut Criterion,
    case: &str,
    label: &str,
    n: usize,
    bytes: u64,
) -> BenchmarkGroup<'a, WallTime> {
    let mut g = c.benchmark_group(format!("{case}/{label}"));
    g.throughput(Throughput::Bytes(bytes));
    let big = n >= 1 << 24;
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(if quick() {
        50
    } else if big {
        300
    } else {
        200
    }));
    g.measurement_time(Duration::from_millis(if quick() {
        200
    } else if big {
        1500
    } else {
        700
    }));
    if big {
        g.sampling_mode(SamplingMode::Flat);
    }
    g
}

// ---------------------------------------------------------------------------------------
// Ceiling kernels: hand-tuned loops for one access pattern each, over contiguous chunks,
// one per rayon thread (a few per thread for balance), inside one rayon call.

/// Sum of `f(i)` over `0..n` with 4 streams x 16 lanes per chunk.
fn ceiling_read(n: usize, f: impl Fn(usize) -> f32 + Sync) -> f32 {
    let chunk = n
        .div_ceil(rayon::current_num_threads() * 4)
        .max(4096)
        .next_multiple_of(64);
    (0..n.div_ceil(chunk))
        .into_par_iter()
        .map(|c| {
            let (s, e) = (c * chunk, ((c + 1) * chunk).min(n));
            let q = (e - s) / 64 * 16;
            let mut a = [[0.0f32; 16]; 4];
            let mut k = 0;
            while k < q {
                for (st, acc) in a.iter_mut().enumerate() {
                    for (j, v) in acc.iter_mut().enumerate() {
                        *v += f(s + st * q + k + j);
                    }
                }
                k += 16;
            }
            let mut r = 0.0;
            for acc in &a {
                r += acc.iter().sum::<f32>();
            }
            r + (s + 4 * q..e).map(&f).sum::<f32>()
        })
        .sum()
}

/// `out[i] = f(i)` into a fresh vector, chunk per task.
fn ceiling_write<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let mut out = Vec::with_capacity(n);
    let chunk = n
        .div_ceil(rayon::current_num_threads() * 4)
        .max(4096)
        .next_multiple_of(64);
    out.spare_capacity_mut()
        .par_chunks_mut(chunk)
        .enumerate()
        .for_each(|(c, part)| {
            for (j, slot) in part.iter_mut().enumerate() {
                slot.write(f(c * chunk + j));
            }
        });
    // SAFETY: every slot was written.
    unsafe { out.set_len(n) };
    out
}

/// A parallel copy with `copy_from_slice` per chunk.
fn ceiling_copy<T: Copy + Send + Sync>(x: &[T]) -> Vec<T> {
    let n = x.len();
    let mut out: Vec<T> = Vec::with_capacity(n);
    let chunk = n
        .div_ceil(rayon::current_num_threads() * 4)
        .max(4096)
        .next_multiple_of(64);
    out.spare_capacity_mut()
        .par_chunks_mut(chunk)
        .zip(x.par_chunks(chunk))
        .for_each(|(o, i)| {
            // SAFETY: `MaybeUninit<T>` has the layout of `T`, and writing initialised values
            // into it is always allowed.
            let i = unsafe { &*(i as *const [T] as *const [MaybeUninit<T>]) };
            o.copy_from_slice(i);
        });
    // SAFETY: every slot was written.
    unsafe { out.set_len(n) };
    out
}

// ---------------------------------------------------------------------------------------
// A user's hand-written rayon scan: scan chunks, carry the totals, add them.

fn rayon_scan(x: &[f32]) -> Vec<f32> {
    let mut out = x.to_vec();
    let chunk = x.len().div_ceil(rayon::current_num_threads()).max(1);
    out.par_chunks_mut(chunk).for_each(|c| {
        for i in 1..c.len() {
            c[i] += c[i - 1];
        }
    });
    let mut carry = Vec::new();
    let mut acc = 0.0f32;
    for c in out.chunks(chunk) {
        carry.push(acc);
        acc += c[c.len() - 1];
    }
    out.par_chunks_mut(chunk)
        .zip(carry)
        .skip(1)
        .for_each(|(c, k)| c.iter_mut().for_each(|v| *v += k));
    out
}

fn seq_scan(x: &[f32]) -> Vec<f32> {
    let mut acc = 0.0;
    x.iter()
        .map(|v| {
            acc += v;
            acc
        })
        .collect()
}

// ---------------------------------------------------------------------------------------

/// The group `case` of the sum of `xs`: `rt::reduce` as generated code calls it, rayon's
/// and the iterator's `sum`.
fn sum_group<'a, T>(
    c: &'a mut Criterion,
    case: &str,
    label: &str,
    xs: &[T],
) -> BenchmarkGroup<'a, WallTime>
where
    T: Copy + Default + Send + Sync + std::ops::Add<Output = T> + std::iter::Sum<T>,
    T: for<'x> std::iter::Sum<&'x T>,
{
    let n = xs.len();
    let mut g = group(c, case, label, n, std::mem::size_of_val(xs) as u64);
    g.bench_function("dpl", |b| {
        b.iter(|| {
            let read = |i| unsafe { rt::read(xs, i) };
            rt::reduce(n, Some(T::default()), read, |a, b| a + b, "sum", AT)
        })
    });
    g.bench_function("rayon", |b| b.iter(|| xs.par_iter().sum::<T>()));
    g.bench_function("seq", |b| b.iter(|| xs.iter().sum::<T>()));
    g
}

fn reductions(c: &mut Criterion) {
    for (n, label) in sizes() {
        let x = data_f32(n, 1);
        let y = data_f32(n, 2);
        let xs = &x[..];
        let ys = &y[..];
        // SAFETY (all `rt::read` below): `i < n` and both slices have length `n`.
        let mut g = sum_group(c, "reduce_sum_f32", &label, xs);
        g.bench_function("ceiling", |b| {
            b.iter(|| ceiling_read(n, |i| unsafe { rt::read(xs, i) }))
        });
        g.finish();

        let mut g = group(c, "reduce_dot_f32", &label, n, 8 * n as u64);
        g.bench_function("dpl", |b| {
            b.iter(|| {
                rt::reduce(
                    n,
                    Some(0.0f32),
                    |i| unsafe { rt::read(xs, i) * rt::read(ys, i) },
                    |a, b| a + b,
                    "sum",
                    AT,
                )
            })
        });
        g.bench_function("rayon", |b| {
            b.iter(|| xs.par_iter().zip(ys).map(|(a, b)| a * b).sum::<f32>())
        });
        g.bench_function("seq", |b| {
            b.iter(|| xs.iter().zip(ys).map(|(a, b)| a * b).sum::<f32>())
        });
        g.bench_function("ceiling", |b| {
            b.iter(|| ceiling_read(n, |i| unsafe { rt::read(xs, i) * rt::read(ys, i) }))
        });
        g.finish();

        let max = |a: f32, b: f32| if a > b { a } else { b };
        let mut g = group(c, "reduce_max_f32", &label, n, 4 * n as u64);
        g.bench_function("dpl", |b| {
            b.iter(|| rt::reduce(n, None, |i| unsafe { rt::read(xs, i) }, max, "max", AT))
        });
        g.bench_function("rayon", |b| {
            b.iter(|| xs.par_iter().copied().reduce(|| f32::NEG_INFINITY, max))
        });
        g.bench_function("seq", |b| {
            b.iter(|| xs.iter().copied().fold(f32::NEG_INFINITY, max))
        });
        g.finish();

        let xi = data_i32(n, 3);
        let xis = &xi[..];
        let mut g = group(c, "reduce_min_i32", &label, n, 4 * n as u64);
        g.bench_function("dpl", |b| {
            b.iter(|| {
                rt::reduce(
                    n,
                    None,
                    |i| unsafe { rt::read(xis, i) },
                    |a: i32, b: i32| if a < b { a } else { b },
                    "min",
                    AT,
                )
            })
        });
        g.bench_function("rayon", |b| b.iter(|| xis.par_iter().min()));
        g.bench_function("seq", |b| b.iter(|| xis.iter().min()));
        g.finish();

        let mut g = group(c, "count_f32", &label, n, 4 * n as u64);
        g.bench_function("dpl", |b| {
            b.iter(|| {
                rt::reduce(
                    n,
                    Some(0usize),
                    |i| (unsafe { rt::read(xs, i) } > 0.0) as usize,
                    |a, b| a + b,
                    "count",
                    AT,
                )
            })
        });
        g.bench_function("rayon", |b| {
            b.iter(|| xs.par_iter().filter(|v| **v > 0.0).count())
        });
        g.bench_function("seq", |b| {
            b.iter(|| xs.iter().filter(|v| **v > 0.0).count())
        });
        g.finish();

        if n >= 1 << 20 {
            let xd: Vec<f64> = rt::map(n, |i| xs[i] as f64, "map", AT);
            sum_group(c, "reduce_sum_f64", &label, &xd).finish();
        }
    }
}

fn maps(c: &mut Criterion) {
    for (n, label) in sizes() {
        let x = data_f32(n, 1);
        let y = data_f32(n, 2);
        let (xs, ys) = (&x[..], &y[..]);
        let a = 1.5f32;
        // SAFETY (all `rt::read` below): `i < n` and both slices have length `n`.
        let mut g = group(c, "map_saxpy_f32", &label, n, 12 * n as u64);
        g.bench_function("dpl", |b| {
            b.iter(|| {
                rt::map(
                    n,
                    |i| a * unsafe { rt::read(xs, i) } + unsafe { rt::read(ys, i) },
                    "map",
                    AT,
                )
            })
        });
        g.bench_function("rayon", |b| {
            b.iter(|| {
                xs.par_iter()
                    .zip(ys)
                    .map(|(x, y)| a * x + y)
                    .collect::<Vec<f32>>()
            })
        });
        g.bench_function("seq", |b| {
            b.iter(|| {
                xs.iter()
                    .zip(ys)
                    .map(|(x, y)| a * x + y)
                    .collect::<Vec<f32>>()
            })
        });
        g.bench_function("ceiling", |b| {
            b.iter(|| {
                ceiling_write(n, |i| {
                    a * unsafe { rt::read(xs, i) } + unsafe { rt::read(ys, i) }
                })
            })
        });
        g.finish();

        let mut g = group(c, "map_copy_f32", &label, n, 8 * n as u64);
        g.bench_function("dpl", |b| {
            b.iter(|| rt::map(n, |i| unsafe { rt::read(xs, i) }, "map", AT))
        });
        g.bench_function("rayon", |b| {
            b.iter(|| xs.par_iter().copied().collect::<Vec<f32>>())
        });
        g.bench_function("seq", |b| b.iter(|| xs.to_vec()));
        g.bench_function("ceiling", |b| b.iter(|| ceiling_copy(xs)));
        g.finish();

        let perm = permutation(n);
        let ps = &perm[..];
        // Random gathers at 2^26 take seconds per call; 2^24 shows the same.
        if n <= 1 << 24 {
            let mut g = group(c, "gather_random_f32", &label, n, 12 * n as u64);
            g.bench_function("dpl", |b| {
                b.iter(|| {
                    rt::check_indices(ps, n, "gather", AT);
                    rt::map(
                        n,
                        |i| unsafe { rt::read(xs, rt::read(ps, i) as usize) },
                        "map",
                        AT,
                    )
                })
            });
            g.bench_function("rayon", |b| {
                b.iter(|| ps.par_iter().map(|&k| xs[k as usize]).collect::<Vec<f32>>())
            });
            g.bench_function("seq", |b| {
                b.iter(|| ps.iter().map(|&k| xs[k as usize]).collect::<Vec<f32>>())
            });
            g.finish();
        }

        let mut g = group(c, "check_indices_u32", &label, n, 4 * n as u64);
        g.bench_function("dpl", |b| b.iter(|| rt::check_indices(ps, n, "gather", AT)));
        g.bench_function("rayon", |b| {
            b.iter(|| assert!(ps.par_iter().all(|&k| (k as usize) < n)))
        });
        g.bench_function("seq", |b| {
            b.iter(|| assert!(ps.iter().all(|&k| (k as usize) < n)))
        });
        g.bench_function("ceiling", |b| {
            b.iter(|| ceiling_read(n, |i| unsafe { rt::read(ps, i) } as f32))
        });
        g.finish();
    }
}

fn scans_and_filters(c: &mut Criterion) {
    for (n, label) in sizes() {
        let x = data_f32(n, 1);
        let xs = &x[..];
        // SAFETY (all `rt::read` below): `i < n == xs.len()`.
        let mut g = group(c, "scan_sum_f32", &label, n, 8 * n as u64);
        g.bench_function("dpl", |b| {
            b.iter(|| {
                rt::scan(
                    n,
                    |i| unsafe { rt::read(xs, i) },
                    |a, b| a + b,
                    true,
                    "scan",
                    AT,
                )
            })
        });
        g.bench_function("rayon", |b| b.iter(|| rayon_scan(xs)));
        g.bench_function("seq", |b| b.iter(|| seq_scan(xs)));
        g.bench_function("ceiling", |b| b.iter(|| ceiling_copy(xs)));
        g.finish();

        let xi = data_i32(n, 3);
        let xis = &xi[..];
        let mut g = group(c, "exclusive_scan_i32", &label, n, 8 * n as u64);
        g.bench_function("dpl", |b| {
            b.iter(|| {
                rt::exclusive_scan(
                    n,
                    0i32,
                    |i| unsafe { rt::read(xis, i) } & 0xff,
                    i32::wrapping_add,
                    false,
                    "exclusive_scan",
                    AT,
                )
            })
        });
        g.bench_function("seq", |b| {
            b.iter(|| {
                let mut acc = 0i32;
                xis.iter()
                    .map(|v| {
                        let r = acc;
                        acc = acc.wrapping_add(v & 0xff);
                        r
                    })
                    .collect::<Vec<i32>>()
            })
        });
        g.bench_function("ceiling", |b| b.iter(|| ceiling_copy(xis)));
        g.finish();

        // About half the elements survive: 4 bytes read per element, 4 written per survivor.
        let mut g = group(c, "filter_f32", &label, n, 6 * n as u64);
        g.bench_function("dpl", |b| {
            b.iter(|| {
                rt::filter(
                    n,
                    |i| unsafe { rt::read(xs, i) },
                    |v| *v > 0.0,
                    "filter",
                    AT,
                )
            })
        });
        g.bench_function("rayon", |b| {
            b.iter(|| {
                xs.par_iter()
                    .copied()
                    .filter(|v| *v > 0.0)
                    .collect::<Vec<f32>>()
            })
        });
        g.bench_function("seq", |b| {
            b.iter(|| {
                xs.iter()
                    .copied()
                    .filter(|v| *v > 0.0)
                    .collect::<Vec<f32>>()
            })
        });
        g.throughput(Throughput::Bytes(8 * n as u64));
        g.bench_function("ceiling", |b| b.iter(|| ceiling_copy(xs)));
        g.finish();
    }
}

fn scatters(c: &mut Criterion) {
    // Random writes at 2^26 take seconds per call and add nothing that 2^24 does not show.
    for (n, label) in sizes().filter(|(n, _)| *n <= 1 << 24) {
        let x = data_f32(n, 1);
        let xs = &x[..];
        let perm = permutation(n);
        let ps = &perm[..];
        let dst = vec![0.0f32; n];
        // SAFETY (all `rt::read` below): `i < n` and the slices have length `n`.
        let mut g = group(c, "scatter_f32", &label, n, 16 * n as u64);
        g.bench_function("dpl", |b| {
            b.iter(|| {
                rt::scatter(
                    n,
                    |i| unsafe { (rt::read(ps, i), rt::read(xs, i)) },
                    &dst,
                    "scatter",
                    AT,
                )
            })
        });
        g.bench_function("rayon", |b| {
            b.iter(|| {
                let out: Vec<AtomicU32> = dst
                    .par_iter()
                    .map(|v| AtomicU32::new(v.to_bits()))
                    .collect();
                ps.par_iter()
                    .zip(xs)
                    .for_each(|(&k, v)| out[k as usize].store(v.to_bits(), Ordering::Relaxed));
                out.into_par_iter()
                    .map(|a| f32::from_bits(a.into_inner()))
                    .collect::<Vec<f32>>()
            })
        });
        g.bench_function("seq", |b| {
            b.iter(|| {
                let mut out = dst.clone();
                for (&k, &v) in ps.iter().zip(xs) {
                    out[k as usize] = v;
                }
                out
            })
        });
        g.finish();

        let mut g = group(c, "permute_f32", &label, n, 12 * n as u64);
        g.bench_function("dpl", |b| {
            b.iter(|| {
                rt::permute(
                    n,
                    |i| unsafe { (rt::read(ps, i), rt::read(xs, i)) },
                    "permute",
                    AT,
                )
            })
        });
        g.bench_function("rayon", |b| {
            b.iter(|| {
                let out: Vec<AtomicU32> =
                    (0..n).into_par_iter().map(|_| AtomicU32::new(0)).collect();
                ps.par_iter()
                    .zip(xs)
                    .for_each(|(&k, v)| out[k as usize].store(v.to_bits(), Ordering::Relaxed));
                out.into_par_iter()
                    .map(|a| f32::from_bits(a.into_inner()))
                    .collect::<Vec<f32>>()
            })
        });
        g.bench_function("seq", |b| {
            b.iter(|| {
                let mut out = vec![0.0f32; n];
                for (&k, &v) in ps.iter().zip(xs) {
                    out[k as usize] = v;
                }
                out
            })
        });
        g.finish();

        // A 256-bin histogram of the low byte of a hash.
        let bins: Vec<u32> = rt::map(n, |i| (mix(i as u64) & 255) as u32, "map", AT);
        let bs = &bins[..];
        let zero = vec![0u32; 256];
        let mut g = group(c, "histogram_u32", &label, n, 4 * n as u64);
        g.bench_function("dpl", |b| {
            b.iter(|| {
                rt::scatter_reduce(
                    n,
                    |i| (unsafe { rt::read(bs, i) }, 1u32),
                    &zero,
                    |a, b| a + b,
                    "scatter_reduce",
                    AT,
                )
            })
        });
        g.bench_function("rayon", |b| {
            b.iter(|| {
                bs.par_iter()
                    .fold(
                        || vec![0u32; 256],
                        |mut h, &k| {
                            h[k as usize] += 1;
                            h
                        },
                    )
                    .reduce(
                        || vec![0u32; 256],
                        |mut a, b| {
                            a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                            a
                        },
                    )
            })
        });
        g.bench_function("seq", |b| {
            b.iter(|| {
                let mut h = vec![0u32; 256];
                for &k in bs {
                    h[k as usize] += 1;
                }
                h
            })
        });
        g.finish();

        // Reduce-by-index into a destination as large as the source.
        let mut g = group(c, "scatter_add_f32", &label, n, 16 * n as u64);
        g.bench_function("dpl", |b| {
            b.iter(|| {
                rt::scatter_reduce(
                    n,
                    |i| unsafe { (rt::read(ps, i), rt::read(xs, i)) },
                    &dst,
                    |a, b| a + b,
                    "scatter_reduce",
                    AT,
                )
            })
        });
        g.bench_function("seq", |b| {
            b.iter(|| {
                let mut out = dst.clone();
                for (&k, &v) in ps.iter().zip(xs) {
                    out[k as usize] += v;
                }
                out
            })
        });
        g.finish();
    }
}

/// Fused pipelines: one dpl helper call with the fused element function, against rayon
/// code that materialises the intermediate sequences as a user writing it step by step
/// would (or fuses them where rayon's iterators make that the natural way to write it).
fn pipelines(c: &mut Criterion) {
    for (n, label) in sizes() {
        let x = data_f32(n, 1);
        let y = data_f32(n, 2);
        let perm = permutation(n);
        let (xs, ys, ps) = (&x[..], &y[..], &perm[..]);
        let a = 0.5f32;
        // SAFETY (all `rt::read` below): `i < n`, the slices have length `n`, and the
        // gathered indices were checked by `rt::check_indices` first.

        // sum(map(|v| v * v, gather(x, idx)))
        let mut g = group(c, "pipe_sum_sq_gather_f32", &label, n, 8 * n as u64);
        g.bench_function("dpl", |b| {
            b.iter(|| {
                rt::check_indices(ps, n, "gather", AT);
                rt::reduce(
                    n,
                    Some(0.0f32),
                    |i| {
                        let v = unsafe { rt::read(xs, rt::read(ps, i) as usize) };
                        v * v
                    },
                    |a, b| a + b,
                    "sum",
                    AT,
                )
            })
        });
        g.bench_function("rayon", |b| {
            b.iter(|| {
                let g: Vec<f32> = ps.par_iter().map(|&k| xs[k as usize]).collect();
                g.par_iter().map(|v| v * v).sum::<f32>()
            })
        });
        g.bench_function("seq", |b| {
            b.iter(|| {
                ps.iter()
                    .map(|&k| xs[k as usize] * xs[k as usize])
                    .sum::<f32>()
            })
        });
        g.finish();

        // sqrt(sum(map(|v| v * v, x)))
        let mut g = group(c, "pipe_norm_f32", &label, n, 4 * n as u64);
        g.bench_function("dpl", |b| {
            b.iter(|| {
                rt::reduce(
                    n,
                    Some(0.0f32),
                    |i| {
                        let v = unsafe { rt::read(xs, i) };
                        v * v
                    },
                    |a, b| a + b,
                    "sum",
                    AT,
                )
                .sqrt()
            })
        });
        g.bench_function("rayon", |b| {
            b.iter(|| xs.par_iter().map(|v| v * v).sum::<f32>().sqrt())
        });
        g.bench_function("seq", |b| {
            b.iter(|| xs.iter().map(|v| v * v).sum::<f32>().sqrt())
        });
        g.bench_function("ceiling", |b| {
            b.iter(|| {
                ceiling_read(n, |i| {
                    let v = unsafe { rt::read(xs, i) };
                    v * v
                })
                .sqrt()
            })
        });
        g.finish();

        // sum(map(|x, y| a * x + y, x, y)): saxpy then reduce.
        let mut g = group(c, "pipe_saxpy_sum_f32", &label, n, 8 * n as u64);
        g.bench_function("dpl", |b| {
            b.iter(|| {
                rt::reduce(
                    n,
                    Some(0.0f32),
                    |i| a * unsafe { rt::read(xs, i) } + unsafe { rt::read(ys, i) },
                    |a, b| a + b,
                    "sum",
                    AT,
                )
            })
        });
        g.bench_function("rayon", |b| {
            b.iter(|| {
                let z: Vec<f32> = xs.par_iter().zip(ys).map(|(x, y)| a * x + y).collect();
                z.par_iter().sum::<f32>()
            })
        });
        g.bench_function("seq", |b| {
            b.iter(|| xs.iter().zip(ys).map(|(x, y)| a * x + y).sum::<f32>())
        });
        g.bench_function("ceiling", |b| {
            b.iter(|| {
                ceiling_read(n, |i| {
                    a * unsafe { rt::read(xs, i) } + unsafe { rt::read(ys, i) }
                })
            })
        });
        g.finish();

        // filter(|v| v > 0, map(|v| 2 * v - 0.5, x))
        let mut g = group(c, "pipe_filter_map_f32", &label, n, 6 * n as u64);
        g.bench_function("dpl", |b| {
            b.iter(|| {
                rt::filter(
                    n,
                    |i| 2.0 * unsafe { rt::read(xs, i) } - 0.5,
                    |v| *v > 0.0,
                    "filter",
                    AT,
                )
            })
        });
        g.bench_function("rayon", |b| {
            b.iter(|| {
                let m: Vec<f32> = xs.par_iter().map(|v| 2.0 * v - 0.5).collect();
                m.into_par_iter().filter(|v| *v > 0.0).collect::<Vec<f32>>()
            })
        });
        g.bench_function("seq", |b| {
            b.iter(|| {
                xs.iter()
                    .map(|v| 2.0 * v - 0.5)
                    .filter(|v| *v > 0.0)
                    .collect::<Vec<f32>>()
            })
        });
        g.finish();

        // scan(+, map(|x, y| x * y, x, y))
        let mut g = group(c, "pipe_scan_map_f32", &label, n, 12 * n as u64);
        g.bench_function("dpl", |b| {
            b.iter(|| {
                rt::scan(
                    n,
                    |i| unsafe { rt::read(xs, i) * rt::read(ys, i) },
                    |a, b| a + b,
                    true,
                    "scan",
                    AT,
                )
            })
        });
        g.bench_function("rayon", |b| {
            b.iter(|| {
                let m: Vec<f32> = xs.par_iter().zip(ys).map(|(x, y)| x * y).collect();
                rayon_scan(&m)
            })
        });
        g.bench_function("seq", |b| {
            b.iter(|| {
                let mut acc = 0.0f32;
                xs.iter()
                    .zip(ys)
                    .map(|(x, y)| {
                        acc += x * y;
                        acc
                    })
                    .collect::<Vec<f32>>()
            })
        });
        g.finish();
    }
}

criterion_group! {
    name = benches;
    // No plots (criterion's HTML plots cost more than the measurements on a loaded 2-core
    // machine); fewer bootstrap resamples for the same reason.
    config = Criterion::default().without_plots().nresamples(20_000);
    targets = reductions, maps, scans_and_filters, scatters, pipelines
}
criterion_main!(benches);
