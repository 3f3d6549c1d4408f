//! Flat sequences crossing between the host and `Place::Sim` as typed bytes: every scalar
//! type and tuples of them go to the device and come back unchanged (checked against plain
//! Rust), the bytes moved are exactly the elements' leaves, and the device copies made for
//! one call are freed when it ends — also when it fails.
#![cfg(feature = "sim")]

use dpl::prelude::*;
use std::sync::Mutex;

/// The transfer counters and the device's memory are per process: one test at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

#[parallel]
fn shift_all(
    a: &[f64],
    b: &[bool],
    c: &[usize],
    d: &[i32],
    e: &Vec<u64>,
) -> (Vec<f64>, Vec<bool>, Vec<usize>, Vec<i32>, Vec<u64>) {
    (
        map(|x| x * -2.0, a),
        map(|x| !x, b),
        map(|x| x + 1, c),
        map(|x| x - 3, d),
        map(|x| x ^ 0xffff_0000_ffff_0000, e),
    )
}

#[parallel]
fn swap(p: &[(u32, f32)]) -> Vec<(f32, u32)> {
    map(|q| (q.1, q.0), p)
}

#[parallel]
fn swap_seq(p: &Seq<(u32, f32)>) -> Seq<(f32, u32)> {
    map(|q| (q.1, q.0), p)
}

#[parallel]
fn pairs(a: &[i64], b: &[f32]) -> Vec<(i64, f32)> {
    zip(a, b)
}

#[parallel]
fn total(x: &[f32]) -> f32 {
    sum(x)
}

#[parallel]
fn pick(x: &[f32], idx: &[usize]) -> Result<Vec<f32>, dpl::Error> {
    gather(x, idx)
}

fn on_sim<R>(f: impl FnOnce() -> R) -> R {
    with_place(Place::Sim, f)
}

#[test]
fn every_scalar_type_round_trips() {
    let _s = serial();
    for n in [0usize, 1, 7, 1000, 4099] {
        let a: Vec<f64> = (0..n).map(|i| i as f64 * 0.37 - 5.5).collect();
        let b: Vec<bool> = (0..n).map(|i| i % 3 == 1).collect();
        let c: Vec<usize> = (0..n).map(|i| i * 1_000_003 + (1 << 40)).collect();
        let d: Vec<i32> = (0..n).map(|i| i as i32 * -7919 + 11).collect();
        let e: Vec<u64> = (0..n)
            .map(|i| (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        let (ra, rb, rc, rd, re) = on_sim(|| shift_all(&a, &b, &c, &d, &e));
        assert_eq!(
            ra,
            a.iter().map(|x| x * -2.0).collect::<Vec<_>>(),
            "n = {n}"
        );
        assert_eq!(rb, b.iter().map(|x| !x).collect::<Vec<_>>(), "n = {n}");
        assert_eq!(rc, c.iter().map(|x| x + 1).collect::<Vec<_>>(), "n = {n}");
        assert_eq!(rd, d.iter().map(|x| x - 3).collect::<Vec<_>>(), "n = {n}");
        let want_e: Vec<u64> = e.iter().map(|x| x ^ 0xffff_0000_ffff_0000).collect();
        assert_eq!(re, want_e, "n = {n}");
    }
}

#[test]
fn tuples_round_trip() {
    let _s = serial();
    let p: Vec<(u32, f32)> = (0..3001).map(|i| (i * 3 + 1, i as f32 / 7.0)).collect();
    let want: Vec<(f32, u32)> = p.iter().map(|&(a, b)| (b, a)).collect();
    assert_eq!(on_sim(|| swap(&p)), want);

    let a: Vec<i64> = (0..513).map(|i| i * i - 4000).collect();
    let b: Vec<f32> = (0..513).map(|i| (i as f32).sqrt()).collect();
    let want: Vec<(i64, f32)> = a.iter().copied().zip(b.iter().copied()).collect();
    assert_eq!(on_sim(|| pairs(&a, &b)), want);
    // A Seq of tuples keeps its device copy, and a Seq result of tuples reads back.
    let s: Seq<(u32, f32)> = Seq::from(p.clone());
    let got = on_sim(|| swap_seq(&s));
    assert_eq!(s.device_place(), Some(Place::Sim));
    assert_eq!(got.device_place(), Some(Place::Sim));
    assert_eq!(
        got.to_vec(),
        p.iter().map(|&(a, b)| (b, a)).collect::<Vec<_>>()
    );
}

#[test]
fn bytes_moved_are_the_leaves() {
    let _s = serial();
    // Small integers: the sum is exact in any order.
    let x: Vec<f32> = (0..10_000).map(|i| (i % 16) as f32).collect();
    let before = dpl::transfers(Place::Sim);
    let s = on_sim(|| total(&x));
    let after = dpl::transfers(Place::Sim);
    assert_eq!(s, x.iter().sum::<f32>());
    // One copy of the input: 4 bytes per element, in one transfer.
    assert_eq!(after.to_device_bytes - before.to_device_bytes, 40_000);
    assert_eq!(after.to_device - before.to_device, 1);

    let p: Vec<(u32, f32)> = (0..1000).map(|i| (i, i as f32)).collect();
    let before = dpl::transfers(Place::Sim);
    let r = on_sim(|| swap(&p));
    let after = dpl::transfers(Place::Sim);
    assert_eq!(r.len(), 1000);
    // Two leaf columns up, two down.
    assert_eq!(after.to_device_bytes - before.to_device_bytes, 8000);
    assert_eq!(after.to_device - before.to_device, 2);
    assert!(after.to_host_bytes - before.to_host_bytes >= 8000);
}

#[test]
fn call_copies_are_freed() {
    let _s = serial();
    let x: Vec<f32> = (0..50_000).map(|i| i as f32 * 0.5).collect();
    let idx: Vec<usize> = (0..50_000).map(|i| (i * 7) % 50_000).collect();
    // Warm up (module load), then the device memory in use must not grow with calls.
    let _ = on_sim(|| pick(&x, &idx));
    let base = dpl::__private::gpu::sim_memory_used();
    for _ in 0..3 {
        let r = on_sim(|| pick(&x, &idx)).expect("indices in range");
        assert_eq!(r, idx.iter().map(|&i| x[i]).collect::<Vec<_>>());
    }
    assert_eq!(dpl::__private::gpu::sim_memory_used(), base);
    // A failing call (an index out of range) frees its copies too.
    let bad: Vec<usize> = (0..50_000)
        .map(|i| if i == 777 { 50_000 } else { i })
        .collect();
    for _ in 0..3 {
        let e = on_sim(|| pick(&x, &bad)).expect_err("index 50000 is out of range");
        assert!(e.to_string().contains("gather"), "{e}");
    }
    assert_eq!(dpl::__private::gpu::sim_memory_used(), base);
}
