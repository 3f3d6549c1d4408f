//! Timing for the examples: functions compared with each other are called in interleaved
//! rounds, so that load on a shared machine hits all of them alike; a median of repeated
//! calls for one function; durations printed in `us` or `ms`.
#![allow(dead_code)]

use std::time::{Duration, Instant};

/// Times every function of `fs` in `rounds` interleaved rounds (each round calls each
/// function once, after one warm-up call of each) and returns each function's minimum and
/// median. The minimum is the least disturbed run, the figure to compare. Round `r` starts
/// at function `r % fs.len()`, so that no function always runs right after the same one
/// (which would leave it the caches another function's data filled).
pub fn interleaved(fs: &[&dyn Fn()], rounds: usize) -> Vec<(Duration, Duration)> {
    fs.iter().for_each(|f| f());
    let mut times = vec![Vec::with_capacity(rounds); fs.len()];
    for r in 0..rounds.max(1) {
        for k in 0..fs.len() {
            let j = (r + k) % fs.len();
            let start = Instant::now();
            fs[j]();
            times[j].push(start.elapsed());
        }
    }
    times
        .into_iter()
        .map(|mut t| {
            t.sort();
            (t[0], t[t.len() / 2])
        })
        .collect()
}

/// The median time of `runs` calls of `f`, after one warm-up call.
pub fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    f();
    let mut times: Vec<Duration> = (0..runs.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

/// `d` in microseconds below a millisecond, in milliseconds above.
pub fn fmt(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us < 1000.0 {
        format!("{us:.1} us")
    } else {
        format!("{:.2} ms", us / 1000.0)
    }
}
