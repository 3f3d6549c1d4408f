//! The dpl demonstration: a few data-parallel programs, run on every place this build has,
//! checked against plain Rust, and timed against the hand-written rayon code a user would
//! otherwise write. With the `sim` feature (as `cargo xtask demo` builds it) the same
//! programs then run on the simulated GPU, at a smaller size, reporting what the generated
//! kernels do there: memory sectors moved against the ideal, instructions per element.
//!
//! Run it with `cargo xtask demo` (a release build). Timings are medians of several runs on
//! a shared machine: read the ratios, not the absolute numbers. `DEMO_N` and `DEMO_SIM_N`
//! set the sizes.

use dpl::prelude::*;
use dpl_testkit::SplitMix64;
use rayon::prelude::*;
use std::time::Duration;

#[path = "shared/timing.rs"]
mod timing;

/// `a * x + y`, element-wise; generic (f32 and f16 below).
#[parallel]
fn saxpy<T: Float>(a: T, x: &[T], y: &[T]) -> Vec<T> {
    map(|xi, yi| a * xi + yi, x, y)
}

/// The dot product: one fused loop, no temporary; generic, compiled for each float type.
#[parallel]
fn dot<T: Float>(x: &[T], y: &[T]) -> T {
    sum(map(|a, b| a * b, x, y))
}

/// `sum(x[idx[i]]^2)`, accumulated in f64: a gather fused into a map fused into a reduction.
#[parallel]
fn gathered_energy(x: &[f32], idx: &[u32]) -> f64 {
    sum(map(|v| (v * v) as f64, gather(x, idx)))
}

/// The positive elements, in order.
#[parallel]
fn positives(x: &[f32]) -> Vec<f32> {
    filter(|v| v > 0.0, x)
}

/// Running totals of squares (an inclusive scan of a map).
#[parallel]
fn running_energy(x: &[i64]) -> Vec<i64> {
    scan(|a, b| a + b, map(|v| v * v, x))
}

/// A histogram of `buckets` bins: reduce-by-index.
#[parallel]
fn histogram(keys: &[u32], buckets: usize) -> Vec<u32> {
    let ones = replicate(1u32, len(keys));
    scatter_reduce(|a, b| a + b, ones, keys, replicate(0u32, buckets))
}

/// The histogram of an 8-bit image (the SPEC's example): a quarter of the bytes of `u32`
/// keys.
#[parallel]
fn histogram_u8(pixels: &[u8]) -> Vec<u32> {
    scatter_reduce(
        |a, b| a + b,
        map(|_p| 1u32, pixels),
        map(|p| p as usize, pixels),
        replicate(0u32, 256),
    )
}

/// The number of elements above the mean, and the mean.
#[parallel]
fn above_mean(x: &[f64]) -> (usize, f64) {
    let mean = sum(x) / (len(x) as f64);
    (count(|v| v > mean, x), mean)
}

/// The elements in ascending order (floats by IEEE `totalOrder`): a radix sort on the CPU
/// and on the GPU.
#[parallel]
fn sorted(x: &[f32]) -> Vec<f32> {
    sort(x)
}

/// `saxpy` with its data on the device between calls (`Seq` in and out).
#[parallel]
fn saxpy_resident(a: f32, x: &Seq<f32>, y: &Seq<f32>) -> Seq<f32> {
    map(|xi, yi| a * xi + yi, x, y)
}

/// A sum of data kept on the device.
#[parallel]
fn sum_resident(x: &Seq<f32>) -> f32 {
    sum(x)
}

/// A sort of data kept on the device, the result left there.
#[parallel]
fn sorted_resident(x: &Seq<f32>) -> Seq<f32> {
    sort(x)
}

fn size(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let n = size("DEMO_N", 1 << 24);
    println!(
        "dpl demonstration: n = {n} elements, {} rayon threads\n",
        rayon::current_num_threads()
    );
    let mut report = Report::default();
    cases(n, &mut report);
    if let Some(&gpu) = dpl::available_places()
        .iter()
        .find(|p| matches!(p, Place::Gpu(_)))
    {
        resident(n, gpu, &mut report);
    }
    if dpl::available_places().contains(&Place::Sim) {
        let n = size("DEMO_SIM_N", 1 << 18);
        println!(
            "\nThe same programs on the simulated GPU (Place::Sim, n = {n}): each result checked, \
             with what the kernels did (32-byte sectors moved over the ideal of perfectly \
             coalesced accesses, thread instructions per element):\n"
        );
        report.sim = true;
        cases(n, &mut report);
    }
    report.finish();
}

/// Runs every program on inputs of `n` elements.
fn cases(n: usize, report: &mut Report) {
    report.n = n;
    let x = random_f32(n, 1);
    let y = random_f32(n, 2);
    let idx: Vec<u32> = random_u32(n, 3).into_iter().map(|v| v % n as u32).collect();
    let xi: Vec<i64> = random_u32(n, 4)
        .into_iter()
        .map(|v| (v % 2001) as i64 - 1000)
        .collect();
    let keys: Vec<u32> = random_u32(n, 5).into_iter().map(|v| v % 256).collect();
    let xd: Vec<f64> = x.iter().map(|&v| v as f64).collect();

    report.case(
        "saxpy::<f32>",
        || saxpy(2.5, &x, &y),
        || {
            x.par_iter()
                .zip(&y)
                .map(|(a, b)| 2.5 * a + b)
                .collect::<Vec<f32>>()
        },
        |got| {
            *got == x
                .iter()
                .zip(&y)
                .map(|(a, b)| 2.5 * a + b)
                .collect::<Vec<f32>>()
        },
    );
    let want_dot: f64 = x.iter().zip(&y).map(|(a, b)| (a * b) as f64).sum();
    report.case(
        "dot::<f32>",
        || dot(&x, &y),
        || x.par_iter().zip(&y).map(|(a, b)| a * b).sum::<f32>(),
        |got| close(*got as f64, want_dot, n),
    );
    let want_energy: f64 = idx
        .iter()
        .map(|&i| (x[i as usize] * x[i as usize]) as f64)
        .sum();
    report.case(
        "sum(map(gather))",
        || gathered_energy(&x, &idx),
        || {
            let g: Vec<f32> = idx.par_iter().map(|&i| x[i as usize]).collect();
            g.par_iter().map(|v| (v * v) as f64).sum::<f64>()
        },
        |got| close(*got, want_energy, n),
    );
    report.case(
        "filter",
        || positives(&x),
        || {
            x.par_iter()
                .copied()
                .filter(|v| *v > 0.0)
                .collect::<Vec<f32>>()
        },
        |got| *got == x.iter().copied().filter(|v| *v > 0.0).collect::<Vec<f32>>(),
    );
    report.case(
        "scan(map)",
        || running_energy(&xi),
        || {
            let sq: Vec<i64> = xi.par_iter().map(|v| v * v).collect();
            let mut out = Vec::with_capacity(sq.len());
            let mut acc = 0i64;
            for v in sq {
                acc += v;
                out.push(acc);
            }
            out
        },
        |got| {
            let mut acc = 0i64;
            got.len() == xi.len()
                && xi.iter().zip(got).all(|(v, g)| {
                    acc += v * v;
                    acc == *g
                })
        },
    );
    report.case(
        "histogram",
        || histogram(&keys, 256),
        || rayon_histogram(&keys),
        |got| *got == seq_histogram(&keys),
    );
    let pixels: Vec<u8> = keys.iter().map(|&k| k as u8).collect();
    report.case(
        "histogram u8",
        || histogram_u8(&pixels),
        || rayon_histogram(&pixels),
        |got| *got == seq_histogram(&pixels),
    );
    let want_dot: f64 = xd.iter().zip(&y).map(|(a, b)| a * *b as f64).sum();
    let yd: Vec<f64> = y.iter().map(|&v| v as f64).collect();
    report.case(
        "dot::<f64>",
        || dot(&xd, &yd),
        || xd.par_iter().zip(&yd).map(|(a, b)| a * b).sum::<f64>(),
        |got| close(*got, want_dot, n),
    );
    // Half precision: each operation computed in f32 and rounded once (the `half` crate's
    // operators do the same), half the bytes of f32.
    let (xh, yh): (Vec<f16>, Vec<f16>) = (
        x.iter().map(|&v| f16::from_f32(v)).collect(),
        y.iter().map(|&v| f16::from_f32(v)).collect(),
    );
    let ah = f16::from_f32(2.5);
    report.case(
        "saxpy::<f16>",
        || saxpy(ah, &xh, &yh),
        || {
            xh.par_iter()
                .zip(&yh)
                .map(|(&a, &b)| ah * a + b)
                .collect::<Vec<f16>>()
        },
        |got| {
            got.iter()
                .zip(xh.iter().zip(&yh))
                .all(|(g, (&a, &b))| g.to_bits() == (ah * a + b).to_bits())
        },
    );
    let products: Vec<f16> = xh.iter().zip(&yh).map(|(&a, &b)| a * b).collect();
    let want_h = dpl_testkit::order::ordered_from(&products, f16::from_f32(-0.0), |a, b| a + b);
    report.case(
        "dot::<f16>",
        || dot(&xh, &yh),
        || {
            xh.par_iter()
                .zip(&yh)
                .map(|(&a, &b)| a * b)
                .reduce(|| f16::from_f32(0.0), |a, b| a + b)
        },
        |got| got.to_bits() == want_h.to_bits(),
    );
    report.case(
        "sort",
        || sorted(&x),
        || {
            let mut s = x.clone();
            s.par_sort_unstable_by(f32::total_cmp);
            s
        },
        |got| {
            let mut want = x.clone();
            want.sort_by(f32::total_cmp);
            got.iter()
                .map(|v| v.to_bits())
                .eq(want.iter().map(|v| v.to_bits()))
        },
    );
    let mean = xd.iter().sum::<f64>() / n as f64;
    report.case(
        "count above mean",
        || above_mean(&xd),
        || {
            let m = xd.par_iter().sum::<f64>() / n as f64;
            (xd.par_iter().filter(|v| **v > m).count(), m)
        },
        |(c, m)| close(*m, mean, n) && *c == xd.iter().filter(|v| **v > *m).count(),
    );
}

/// On a real GPU: programs whose data stays on the device (`Seq`), so the times are the
/// kernels' (and the small read-backs), not the transfers over PCIe that dominate the
/// calls on host vectors above; each result checked once.
fn resident(n: usize, gpu: Place, report: &mut Report) {
    println!(
        "\nOn {gpu} with the data kept on the device (Seq in and out: no transfers; median of 7):"
    );
    let (xv, yv) = (random_f32(n, 1), random_f32(n, 2));
    with_place(gpu, || {
        let (x, y) = (Seq::from(xv.clone()), Seq::from(yv.clone()));
        let bytes = |k: usize, t: Duration| (k * n * 4) as f64 / t.as_secs_f64() / 1e9;

        let ok = saxpy_resident(2.5, &x, &y).to_vec()
            == xv
                .iter()
                .zip(&yv)
                .map(|(a, b)| 2.5 * a + b)
                .collect::<Vec<f32>>();
        // A call whose result stays on the device returns before its kernels have run:
        // each timed call waits for them.
        let wait = || dpl::synchronize(gpu).expect("the device's queued work");
        let t = timing::median(7, || {
            drop(std::hint::black_box(saxpy_resident(2.5, &x, &y)));
            wait();
        });
        report.resident("saxpy", ok, t, format!("{:.0} GB/s", bytes(3, t)));

        let want: f64 = xv.iter().map(|&v| v as f64).sum();
        let ok = close(sum_resident(&x) as f64, want, n);
        let t = timing::median(7, || {
            std::hint::black_box(sum_resident(&x));
        });
        report.resident("sum", ok, t, format!("{:.0} GB/s", bytes(1, t)));

        let mut want = xv.clone();
        want.sort_by(f32::total_cmp);
        let got = sorted_resident(&x).to_vec();
        let ok = got
            .iter()
            .map(|v| v.to_bits())
            .eq(want.iter().map(|v| v.to_bits()));
        let t = timing::median(7, || {
            drop(std::hint::black_box(sorted_resident(&x)));
            wait();
        });
        let rate = n as f64 / t.as_secs_f64() / 1e9;
        report.resident("sort", ok, t, format!("{rate:.2} G keys/s"));
    });
}

#[derive(Default)]
struct Report {
    failures: usize,
    /// Run on the simulated GPU (once, profiled) instead of on the CPU places (timed).
    sim: bool,
    /// The input size of the current cases.
    n: usize,
}

impl Report {
    /// Runs `dpl_fn` on every place (checking each result) and times it against `rayon_fn`.
    fn case<T>(
        &mut self,
        name: &str,
        dpl_fn: impl Fn() -> T,
        rayon_fn: impl Fn() -> T,
        check: impl Fn(&T) -> bool,
    ) {
        let mut line = format!("{name:<18}");
        if self.sim {
            self.sim_case(line, dpl_fn, check);
            return;
        }
        let mut cpu_time = None;
        let places = dpl::available_places();
        for place in places.into_iter().filter(|p| *p != Place::Sim) {
            let (ok, t) = with_place(place, || {
                let out = dpl_fn();
                let ok = check(&out);
                let t = timing::median(7, || {
                    std::hint::black_box(dpl_fn());
                });
                (ok, t)
            });
            if !ok {
                self.failures += 1;
            }
            let mark = if ok { "ok" } else { "WRONG" };
            line += &format!(" {place:>4}: {mark:<5} {:>9}", timing::fmt(t));
            if place == Place::Cpu {
                cpu_time = Some(t);
            }
        }
        let r = timing::median(7, || {
            std::hint::black_box(rayon_fn());
        });
        line += &format!("   rayon {:>9}", timing::fmt(r));
        if let Some(c) = cpu_time {
            line += &format!(
                "   dpl/rayon speed {:.2}x",
                r.as_secs_f64() / c.as_secs_f64()
            );
        }
        println!("{line}");
    }

    /// One profiled run on the simulated GPU.
    #[cfg(feature = "sim")]
    fn sim_case<T>(
        &mut self,
        mut line: String,
        dpl_fn: impl Fn() -> T,
        check: impl Fn(&T) -> bool,
    ) {
        let (out, launches) = dpl::sim_profile(dpl_fn);
        let ok = check(&out);
        if !ok {
            self.failures += 1;
        }
        let sectors: u64 = launches.iter().map(|l| l.sectors).sum();
        let ideal: u64 = launches.iter().map(|l| l.ideal_sectors).sum();
        let instr: u64 = launches.iter().map(|l| l.thread_instructions).sum();
        line += &format!(
            "  sim: {:<5}  {} kernel launch(es), sectors {:.2}x ideal, {:.1} thread instr / element",
            if ok { "ok" } else { "WRONG" },
            launches.len(),
            sectors as f64 / ideal.max(1) as f64,
            instr as f64 / self.n.max(1) as f64
        );
        println!("{line}");
    }

    #[cfg(not(feature = "sim"))]
    fn sim_case<T>(&mut self, _: String, _: impl Fn() -> T, _: impl Fn(&T) -> bool) {}

    /// One line of [`resident`].
    fn resident(&mut self, name: &str, ok: bool, t: Duration, rate: String) {
        if !ok {
            self.failures += 1;
        }
        let mark = if ok { "ok" } else { "WRONG" };
        println!("{name:<18} {mark:<5} {:>9}   {rate}", timing::fmt(t));
    }

    fn finish(self) {
        println!();
        if self.failures == 0 {
            println!("all results checked against plain Rust: ok");
        } else {
            println!("{} result(s) WRONG", self.failures);
            std::process::exit(1);
        }
    }
}

/// Closeness for f32 reductions against an f64 reference: reassociation is allowed, and the
/// sequential reference accumulates in f32 from left to right, whose relative error grows
/// with the length (about 1e-3 at 2^24 elements).
/// The 256-bin histogram of `keys` as a rayon user writes it: a histogram per chunk,
/// then the chunks' histograms added up.
fn rayon_histogram<K: Copy + Into<u64> + Sync>(keys: &[K]) -> Vec<u32> {
    keys.par_chunks(1 << 16).map(seq_histogram).reduce(
        || vec![0u32; 256],
        |mut a, b| {
            a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
            a
        },
    )
}

/// The 256-bin histogram of `keys`, sequentially (keys below 256).
fn seq_histogram<K: Copy + Into<u64>>(keys: &[K]) -> Vec<u32> {
    let mut h = vec![0u32; 256];
    for &k in keys {
        h[k.into() as usize] += 1;
    }
    h
}

fn close(got: f64, want: f64, n: usize) -> bool {
    let _ = n;
    (got - want).abs() <= 5e-3 * want.abs().max(1.0)
}

fn random_u32(n: usize, seed: u64) -> Vec<u32> {
    SplitMix64::new(seed).vec(n, SplitMix64::u32)
}

fn random_f32(n: usize, seed: u64) -> Vec<f32> {
    random_u32(n, seed)
        .into_iter()
        .map(|v| (v as f32 / u32::MAX as f32) * 2.0 - 1.0)
        .collect()
}
