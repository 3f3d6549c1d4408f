//! Soak: 16 threads make mixed calls on `Seq`, `Cpu` and `Sim` for a while, every result
//! checked against plain Rust, and the memory the process holds must not grow.
//!
//! The calls run in rounds: each of the 16 threads makes a batch of calls (random programs,
//! sizes and places, shared inputs, device-resident `Seq`s passed between calls and shared
//! between threads, contract violations returned as `Err`), then the round ends and the
//! memory is sampled with nothing in flight. After a warm-up round:
//!
//! * the simulated device holds exactly what it held before (`dpl::gpu::sim_memory_used`):
//!   every buffer a call allocated was freed or handed over in a `Seq` that was dropped;
//! * the host memory (resident set size, `/proc/self/statm`) stays within a margin of what
//!   the first rounds reached: a leak of even a few bytes per call adds up over the tens of
//!   thousands of calls of a long soak.
//!
//! `cargo xtask soak [SECONDS]` runs it for minutes (release build, 180 s by default); the
//! normal test command runs a short slice (`DPL_SOAK_SECONDS`, 3 s by default).

use dpl::prelude::*;
use dpl_testkit::SplitMix64 as Rng;
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

mod prog {
    use dpl::prelude::*;

    #[parallel]
    pub fn saxpy(a: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
        map(|u, v| a * u + v, x, y)
    }

    /// A device-resident result on GPU places: the next call reads it where it is.
    #[parallel]
    pub fn scaled(a: f64, x: &[f64]) -> Seq<f64> {
        map(|v| a * v, x)
    }

    #[parallel]
    pub fn total(x: &Seq<f64>) -> f64 {
        sum(x)
    }

    #[parallel]
    pub fn positives_sorted(x: &[i32]) -> Vec<i32> {
        sort(filter(|v| v > 0, x))
    }

    #[parallel]
    pub fn running(x: &[u32]) -> Vec<u32> {
        scan(|a, b| a + b, x)
    }

    #[parallel]
    pub fn histogram(keys: &[u32], bins: usize) -> Vec<u32> {
        let zeros = map(|_| 0u32, range(bins));
        scatter_reduce(
            |a, b| a + b,
            map(|_| 1u32, keys),
            map(|k| k % bins as u32, keys),
            zeros,
        )
    }

    #[parallel]
    pub fn row_sums(m: &Nested<i64>) -> Vec<i64> {
        map(|r| sum(r), m)
    }

    #[parallel]
    pub fn lookup(x: &[f32], idx: &[u32]) -> Result<Vec<f32>, dpl::Error> {
        gather(x, idx)
    }
}

/// Seconds the soak runs: `DPL_SOAK_SECONDS`, 3 by default.
fn seconds() -> u64 {
    std::env::var("DPL_SOAK_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3)
}

/// The resident set size of this process, in bytes.
fn rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .expect("the resident pages");
    pages * 4096
}

/// Inputs every thread reads (a shared host `Seq` is uploaded once per GPU place and its
/// device copy shared by the threads).
struct Shared {
    x: Vec<f64>,
    seq: Seq<f64>,
    total: f64,
}

/// One call of a random program on `place`, checked.
fn one_call(place: Place, rng: &mut Rng, shared: &Shared) {
    // The simulator runs every instruction on the CPU: smaller inputs there.
    let n = if place == Place::Sim {
        rng.int_in(0..=600) as usize
    } else {
        rng.int_in(0..=20_000) as usize
    };
    dpl::with_place(place, || match rng.int_in(0..=7) {
        0 => {
            let (x, y) = (rng.f32s(n, -1.0, 1.0), rng.f32s(n, -1.0, 1.0));
            let want: Vec<f32> = x.iter().zip(&y).map(|(u, v)| 2.5 * u + v).collect();
            assert_eq!(prog::saxpy(2.5, &x, &y), want);
        }
        1 => {
            // Resident between two calls, then read on the host.
            let s = prog::scaled(2.0, &shared.x);
            let t = prog::total(&s);
            assert!((t - 2.0 * shared.total).abs() <= 1e-9 * shared.total.abs().max(1.0));
            assert_eq!(s.len(), shared.x.len());
            assert_eq!(s[0], 2.0 * shared.x[0]);
        }
        2 => {
            let t = prog::total(&shared.seq);
            assert!((t - shared.total).abs() <= 1e-9 * shared.total.abs().max(1.0));
        }
        3 => {
            let x = rng.i32s(n);
            let mut want: Vec<i32> = x.iter().copied().filter(|&v| v > 0).collect();
            want.sort_unstable();
            assert_eq!(prog::positives_sorted(&x), want);
        }
        4 => {
            let x: Vec<u32> = (0..n).map(|_| rng.int_in(0..=1000) as u32).collect();
            let want: Vec<u32> = x
                .iter()
                .scan(0u32, |acc, &v| {
                    *acc = acc.wrapping_add(v);
                    Some(*acc)
                })
                .collect();
            assert_eq!(prog::running(&x), want);
        }
        5 => {
            let bins = rng.int_in(1..=300) as usize;
            let keys = rng.u32s(n);
            let mut want = vec![0u32; bins];
            for k in &keys {
                want[(k % bins as u32) as usize] += 1;
            }
            assert_eq!(prog::histogram(&keys, bins), want);
        }
        6 => {
            let rows: Vec<Vec<i64>> = (0..n / 50)
                .map(|_| {
                    let len = rng.int_in(0..=100) as usize;
                    rng.i64s(len).into_iter().map(|v| v >> 8).collect()
                })
                .collect();
            let want: Vec<i64> = rows.iter().map(|r| r.iter().sum()).collect();
            let m = Nested::from_rows(rows.iter().map(|r| r.iter().copied()));
            assert_eq!(prog::row_sums(&m), want);
        }
        _ => {
            // A contract violation on the error path, half the time.
            let x = rng.f32s(n + 1, 0.0, 1.0);
            let mut idx: Vec<u32> = (0..n).map(|_| rng.int_in(0..=n as i64) as u32).collect();
            let bad = n > 0 && rng.int_in(0..=1) == 1;
            if bad {
                idx[n / 2] = n as u32 + 7;
            }
            match prog::lookup(&x, &idx) {
                Ok(got) => {
                    assert!(!bad);
                    let want: Vec<f32> = idx.iter().map(|&i| x[i as usize]).collect();
                    assert_eq!(got, want);
                }
                Err(e) => assert!(
                    bad && matches!(e, dpl::Error::IndexOutOfRange { .. }),
                    "{e}"
                ),
            }
        }
    });
}

#[test]
fn memory_stays_flat_under_mixed_concurrent_calls() {
    const THREADS: usize = 16;
    let places: Vec<Place> = [Place::Seq, Place::Cpu, Place::Sim]
        .into_iter()
        .filter(|p| dpl::available_places().contains(p))
        .collect();
    let mut rng = Rng::new(0x50a4);
    let x = rng.f64s(4096, -1.0, 1.0);
    let total = x.iter().sum();
    let shared = Shared {
        seq: Seq::from(x.clone()),
        x,
        total,
    };
    let budget = Duration::from_secs(seconds());
    let start = Instant::now();
    let per_thread = 8;
    // The same 16 threads for the whole soak (new threads would bring new allocator
    // arenas): each round they make their calls, then wait at `done` while the memory is
    // sampled, then at `go` for the next round (or to stop).
    let (done, go) = (Barrier::new(THREADS + 1), Barrier::new(THREADS + 1));
    let stop = AtomicBool::new(false);
    let mut samples: Vec<u64> = Vec::new();
    let mut device_after_warmup = None;
    let mut rounds = 0u64;
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let (shared, places, done, go, stop) = (&shared, &places, &done, &go, &stop);
            s.spawn(move || {
                let mut rng = Rng::new(0x5eed + t as u64);
                loop {
                    for _ in 0..per_thread {
                        let place = places[rng.int_in(0..=places.len() as i64 - 1) as usize];
                        one_call(place, &mut rng, shared);
                    }
                    done.wait();
                    go.wait();
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                }
            });
        }
        loop {
            done.wait();
            rounds += 1;
            let device = dpl::gpu::sim_memory_used();
            let held = *device_after_warmup.get_or_insert(device);
            samples.push(rss());
            let finished = (rounds >= 4 && start.elapsed() >= budget) || device != held;
            stop.store(finished, Ordering::Relaxed);
            go.wait();
            assert_eq!(
                device, held,
                "round {rounds}: the simulated device holds {device} bytes, {held} after the first round"
            );
            if finished {
                break;
            }
        }
    });
    let calls = rounds * (THREADS * per_thread) as u64;
    // The host: after a warm-up (the first quarter of the rounds, where allocator caches
    // and rayon's threads settle), the peak of the last quarter may exceed that of the
    // second by a fixed margin plus 256 bytes per call made in between, no more: a leak of
    // a few hundred bytes per call fails a soak of minutes.
    let q = (samples.len() / 4).max(1);
    let early = samples[q.min(samples.len() - 1)..(2 * q).min(samples.len())]
        .iter()
        .copied()
        .max()
        .unwrap_or(0);
    let late = samples[(3 * q).min(samples.len() - 1)..]
        .iter()
        .copied()
        .max()
        .unwrap_or(0);
    let between = (samples.len() - 2 * q) as u64 * (THREADS * per_thread) as u64;
    let margin = (8 << 20) + 256 * between;
    eprintln!(
        "soak: {calls} calls in {rounds} rounds over {:.1} s on {places:?}; resident {} MiB \
         early, {} MiB late; simulated device {} bytes held throughout",
        start.elapsed().as_secs_f64(),
        early >> 20,
        late >> 20,
        device_after_warmup.unwrap_or(0),
    );
    assert!(
        late <= early + margin,
        "host memory grew: {} MiB in the first rounds, {} MiB in the last",
        early >> 20,
        late >> 20
    );
}
