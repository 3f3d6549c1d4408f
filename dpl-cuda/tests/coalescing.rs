//! The streaming kernels (map, reduce, scan) move within 1.1x of the ideal number of
//! 32-byte sectors on the simulator (dpl-sim's counters), and report their figures.

mod support;

use dpl_core::interp::Value;
use dpl_cuda::sim::SimDriver;
use support::programs::{DOT, SAXPY, SCAN_OF_MAP, SUM_F32};
use support::*;

/// Runs `src` once on `args` and returns (kernel, sectors moved, ideal, bank conflicts,
/// instructions per element) for each launch.
fn figures(src: &str, args: Vec<Value>, n: usize) -> Vec<(String, u64, u64, u64, f64)> {
    let c = compiled(src);
    let prog = dpl_cuda::compile(&c.fused).expect("compiles");
    let driver = SimDriver::default();
    dpl_cuda::run(&prog, &driver, args).expect("runs");
    driver
        .take_reports()
        .into_iter()
        .map(|(k, r)| {
            let per = r.thread_instructions as f64 / n as f64;
            (k, r.sectors_moved, r.sectors_ideal, r.bank_conflicts, per)
        })
        .collect()
}

fn check(src: &str, args: Vec<Value>, n: usize) {
    for (k, moved, ideal, conflicts, per) in figures(src, args, n) {
        let ratio = moved as f64 / ideal.max(1) as f64;
        eprintln!(
            "{k}: {moved} sectors, ideal {ideal} ({ratio:.3}x), {conflicts} bank conflicts, {per:.1} thread instructions per element"
        );
        // Launches that move almost nothing (finishing passes) have no meaningful ratio.
        if ideal >= 64 {
            assert!(ratio <= 1.1, "{k}: {moved} sectors for an ideal of {ideal}");
        }
    }
}

const N: usize = 1 << 17;

#[test]
fn map_is_coalesced() {
    let mut r = Rng::new(1);
    check(
        SAXPY,
        vec![Value::F32(2.0), f32s(&mut r, N, 1.0), f32s(&mut r, N, 1.0)],
        N,
    );
}

#[test]
fn reduce_is_coalesced() {
    let mut r = Rng::new(2);
    check(SUM_F32, vec![f32s(&mut r, N, 1.0)], N);
    check(DOT, vec![f64s(&mut r, N, 1.0), f64s(&mut r, N, 1.0)], N);
}

#[test]
fn scan_is_coalesced() {
    let mut r = Rng::new(3);
    check(SCAN_OF_MAP, vec![i64s(&mut r, N, -100, 100)], N);
}
