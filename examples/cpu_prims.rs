//! The CPU's formerly slow primitives next to what a user would write by hand: a 256-bin
//! histogram (`scatter_reduce`, of `u32` keys and of `u8` pixels), `permute`, `scatter` and `count`, each on `Place::Cpu`
//! against hand-written rayon and a sequential loop, timed in interleaved rounds (the
//! minimum of each, the least disturbed run) and checked against the sequential result.
//!
//! `cargo run --release --example cpu_prims [rounds] [log2 sizes, e.g. 10,16,20]`

use dpl::prelude::*;
use dpl_testkit::SplitMix64;
use rayon::prelude::*;

#[path = "shared/timing.rs"]
mod timing;

mod prog {
    use dpl::prelude::*;

    /// Counts of each key below `bins`.
    #[parallel]
    pub fn key_counts(keys: &[u32], bins: usize) -> Vec<u32> {
        let ones = map(|_| 1u32, keys);
        scatter_reduce(|a, b| a + b, ones, keys, replicate(0u32, bins))
    }

    /// The histogram of an 8-bit image (the SPEC's example): a quarter of the key bytes.
    #[parallel]
    pub fn pixel_counts(pixels: &[u8]) -> Vec<u32> {
        scatter_reduce(
            |a, b| a + b,
            map(|_p| 1u32, pixels),
            map(|p| p as usize, pixels),
            replicate(0u32, 256),
        )
    }

    #[parallel]
    pub fn permuted(x: &[f32], idx: &[usize]) -> Vec<f32> {
        permute(x, idx)
    }

    #[parallel]
    pub fn scattered(src: &[f32], idx: &[usize], dst: &[f32]) -> Vec<f32> {
        scatter(src, idx, dst)
    }

    #[parallel]
    pub fn above_half(x: &[f32]) -> usize {
        count(|v| v > 0.5, x)
    }
}

/// A pointer that rayon tasks may share, for writes to distinct slots.
#[derive(Clone, Copy)]
struct Slots(*mut f32);
// SAFETY: the tasks that share it write distinct slots (the indices are a permutation or
// distinct), and the vector outlives them.
unsafe impl Send for Slots {}
// SAFETY: as above.
unsafe impl Sync for Slots {}

impl Slots {
    /// The address of slot `k` (a method, so that closures capture the whole `Slots`).
    fn at(self, k: usize) -> *mut f32 {
        self.0.wrapping_add(k)
    }
}

/// Writes `out[idx[i]] = src[i]` in parallel; `idx` must hold distinct indices below
/// `out.len()` (checked as the hand-written code would, with an assertion per element).
fn rayon_scatter_into(out: &mut [f32], src: &[f32], idx: &[usize]) {
    let (n, slots) = (out.len(), Slots(out.as_mut_ptr()));
    src.par_iter().zip(idx).for_each(|(&v, &k)| {
        assert!(k < n);
        // SAFETY: `k < n` and the indices are distinct, so no two tasks write one slot.
        unsafe { *slots.at(k) = v };
    });
}

fn rayon_histogram<K: Copy + Into<u64> + Sync>(keys: &[K], bins: usize) -> Vec<u32> {
    keys.par_chunks(1 << 14)
        .fold(
            || vec![0u32; bins],
            |mut h, chunk| {
                chunk.iter().for_each(|&k| h[k.into() as usize] += 1);
                h
            },
        )
        .reduce(
            || vec![0u32; bins],
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                a
            },
        )
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|r| r.parse().ok())
        .unwrap_or(15);
    println!(
        "| primitive | n | dpl (Cpu) | rayon | sequential | dpl vs rayon | dpl vs sequential |"
    );
    println!("|---|---|---|---|---|---|---|");
    let logs: Vec<u32> = std::env::args()
        .nth(2)
        .map(|a| a.split(',').filter_map(|l| l.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![16, 20, 24]);
    with_place(Place::Cpu, || {
        logs.iter().for_each(|&log| measure(log, rounds))
    });
}

/// One row per primitive at `2^log` elements.
fn measure(log: u32, rounds: usize) {
    let bins = 256;
    {
        let n = 1usize << log;
        let mut rng = SplitMix64::new(u64::from(log));
        let keys: Vec<u32> = (0..n).map(|_| rng.u32() % bins as u32).collect();
        let x: Vec<f32> = (0..n).map(|_| rng.f64() as f32).collect();
        let idx = rng.permutation(n);
        let dst = vec![0.0f32; n];

        let want = {
            let mut h = vec![0u32; bins];
            keys.iter().for_each(|&k| h[k as usize] += 1);
            h
        };
        assert_eq!(prog::key_counts(&keys, bins), want);
        assert_eq!(rayon_histogram(&keys, bins), want);
        report(
            "histogram (256 bins)",
            log,
            rounds,
            &[
                &|| drop(std::hint::black_box(prog::key_counts(&keys, bins))),
                &|| drop(std::hint::black_box(rayon_histogram(&keys, bins))),
                &|| {
                    let mut h = vec![0u32; bins];
                    keys.iter().for_each(|&k| h[k as usize] += 1);
                    std::hint::black_box(h);
                },
            ],
        );

        let pixels: Vec<u8> = keys.iter().map(|&k| k as u8).collect();
        assert_eq!(prog::pixel_counts(&pixels), want);
        assert_eq!(rayon_histogram(&pixels, bins), want);
        report(
            "histogram (u8 pixels)",
            log,
            rounds,
            &[
                &|| drop(std::hint::black_box(prog::pixel_counts(&pixels))),
                &|| drop(std::hint::black_box(rayon_histogram(&pixels, bins))),
                &|| {
                    let mut h = vec![0u32; bins];
                    pixels.iter().for_each(|&k| h[k as usize] += 1);
                    std::hint::black_box(h);
                },
            ],
        );

        let mut want = vec![0.0f32; n];
        x.iter().zip(&idx).for_each(|(&v, &k)| want[k] = v);
        assert_eq!(prog::permuted(&x, &idx), want);
        report(
            "permute (f32)",
            log,
            rounds,
            &[
                &|| drop(std::hint::black_box(prog::permuted(&x, &idx))),
                &|| {
                    let mut out = vec![0.0f32; n];
                    rayon_scatter_into(&mut out, &x, &idx);
                    std::hint::black_box(out);
                },
                &|| {
                    let mut out = vec![0.0f32; n];
                    x.iter().zip(&idx).for_each(|(&v, &k)| out[k] = v);
                    std::hint::black_box(out);
                },
            ],
        );
        assert_eq!(prog::scattered(&x, &idx, &dst), want);
        report(
            "scatter (f32)",
            log,
            rounds,
            &[
                &|| drop(std::hint::black_box(prog::scattered(&x, &idx, &dst))),
                &|| {
                    let mut out = dst.clone();
                    rayon_scatter_into(&mut out, &x, &idx);
                    std::hint::black_box(out);
                },
                &|| {
                    let mut out = dst.clone();
                    x.iter().zip(&idx).for_each(|(&v, &k)| out[k] = v);
                    std::hint::black_box(out);
                },
            ],
        );

        let want = x.iter().filter(|&&v| v > 0.5).count();
        assert_eq!(prog::above_half(&x), want);
        report(
            "count (f32 > 0.5)",
            log,
            rounds,
            &[
                &|| {
                    std::hint::black_box(prog::above_half(&x));
                },
                &|| {
                    std::hint::black_box(x.par_iter().filter(|&&v| v > 0.5).count());
                },
                &|| {
                    std::hint::black_box(x.iter().filter(|&&v| v > 0.5).count());
                },
            ],
        );
    }
}

/// Times `fs` (dpl, rayon, sequential) and prints a table row with the ratios (above 1:
/// dpl is faster).
fn report(what: &str, log: u32, rounds: usize, fs: &[&dyn Fn()]) {
    let t = timing::interleaved(fs, rounds);
    let (d, r, s) = (t[0].0, t[1].0, t[2].0);
    println!(
        "| {what} | 2^{log} | {d:.2?} | {r:.2?} | {s:.2?} | {:.2}x | {:.2}x |",
        r.as_secs_f64() / d.as_secs_f64(),
        s.as_secs_f64() / d.as_secs_f64()
    );
}
