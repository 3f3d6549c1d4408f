//! Set-up shared by the benchmarks of this folder: the quick mode and the two criterion
//! group configurations they use.
#![allow(dead_code)] // Each benchmark uses some of these.

use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, SamplingMode, Throughput};

/// `DPL_BENCH_QUICK=1` shortens the runs.
pub fn quick() -> bool {
    std::env::var_os("DPL_BENCH_QUICK").is_some()
}

/// A group of steady cases: 30 samples over 3 s (10 over 0.5 s in quick mode), its
/// throughput `bytes` per call.
pub fn group<'a>(c: &'a mut Criterion, name: String, bytes: usize) -> BenchmarkGroup<'a, WallTime> {
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Bytes(bytes as u64));
    g.sample_size(if quick() { 10 } else { 30 });
    g.warm_up_time(Duration::from_millis(if quick() { 100 } else { 500 }));
    g.measurement_time(Duration::from_millis(if quick() { 500 } else { 3000 }));
    g
}

/// Configures a group of long calls: 10 flat samples over 1 s (0.3 s in quick mode), its
/// throughput `bytes` per call.
pub fn configure(g: &mut BenchmarkGroup<'_, WallTime>, bytes: u64) {
    g.sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(if quick() { 100 } else { 300 }))
        .measurement_time(Duration::from_millis(if quick() { 300 } else { 1000 }))
        .throughput(Throughput::Bytes(bytes));
}
