//! `Place::Gpu(n)` with the `cuda` feature: on a machine with a usable device the calls
//! run there; without one (no driver library, no such device) they run on the CPU with
//! the same results, the reason is said once, and `available_places` does not list the
//! device. Either way results must equal plain Rust's. Without the `cuda` feature asking
//! for `Place::Gpu` is a clear error (tested in errors_runtime.rs).
#![cfg(feature = "cuda")]

use dpl::prelude::*;

#[parallel]
fn saxpy(a: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
    map(|xi, yi| a * xi + yi, x, y)
}

#[parallel]
fn checked_gather(x: &[f32], idx: &[u32]) -> Result<Vec<f32>, dpl::Error> {
    gather(x, idx)
}

#[test]
fn gpu_place_runs_on_the_device_or_falls_back_to_the_cpu() {
    let usable = dpl::__private::gpu::device_status(0);
    assert_eq!(
        dpl::available_places().contains(&Place::Gpu(0)),
        usable.is_ok(),
        "available_places and the device probe disagree: {usable:?}"
    );
    if let Err(reason) = &usable {
        assert!(!reason.is_empty());
        eprintln!("no usable GPU here: {reason}");
        // The default place is then the CPU (unless DPL_PLACE says otherwise).
        if std::env::var_os("DPL_PLACE").is_none() {
            assert_eq!(dpl::default_place(), Place::Cpu);
        }
    }
    let x: Vec<f32> = (0..5000).map(|i| i as f32).collect();
    let y: Vec<f32> = (0..5000).map(|i| (i % 7) as f32).collect();
    let want: Vec<f32> = x.iter().zip(&y).map(|(a, b)| 3.0 * a + b).collect();
    for n in [0, 7] {
        let got = with_place(Place::Gpu(n), || saxpy(3.0, &x, &y));
        assert_eq!(got, want, "Gpu({n})");
    }
    // Contract violations are reported the same way wherever the call ran.
    let err = with_place(Place::Gpu(0), || checked_gather(&x, &[1, 5000])).unwrap_err();
    assert!(err.to_string().contains("gather"), "{err}");
}
