//! Placement by default (`Place`'s documentation) on the stand-in `libcuda`
//! (`dpl-cuda/tests/fake-libcuda`, a CUDA driver library built on dpl-sim that counts
//! launches): with a usable device that nobody asked for, a streaming call on host data
//! runs on the CPU, a compute-bound one (a sort, costly elements) and one whose data are
//! already on the device run on the GPU, and a GPU asked for runs everything. The test
//! builds the stand-in with cargo, then runs this binary again with it first on
//! `LD_LIBRARY_PATH` (the `#[ignore]`d `inner` test); results are checked against plain
//! Rust wherever the calls ran.
#![cfg(all(feature = "cuda", target_os = "linux"))]

use std::path::Path;
use std::process::Command;

use dpl::prelude::*;

// The iterative examples (`power_iteration`, a loop at the top level of its body, which
// makes a call compute-bound) and their plain-Rust versions.
#[path = "../examples/iterative/baselines.rs"]
mod baselines;
#[allow(dead_code)]
#[path = "../examples/iterative/programs.rs"]
mod programs;

#[parallel]
fn saxpy(a: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
    map(|xi, yi| a * xi + yi, x, y)
}

#[parallel]
fn sorted(keys: &[u32]) -> Vec<u32> {
    sort(keys)
}

/// An element with a loop: costly, so compute-bound.
#[parallel]
fn powers(x: &[f32]) -> Vec<f32> {
    map(
        |v| {
            let mut p = 1.0f32;
            let mut q = 0.0f32;
            let mut k = 0u32;
            while k < 20 {
                p = p * v + 0.5;
                q = q * 0.25 + p;
                k += 1;
            }
            q
        },
        x,
    )
}

#[parallel]
fn scaled(a: f32, x: &Seq<f32>) -> Seq<f32> {
    map(|v| a * v, x)
}

#[test]
fn a_gpu_found_by_default_runs_the_calls_that_pay_for_the_trip() {
    let lib =
        dpl_testkit::fake_cuda::build(&Path::new(env!("CARGO_MANIFEST_DIR")).join("dpl-cuda"));
    let exe = std::env::current_exe().expect("the test binary's path");
    let out = Command::new(exe)
        .args(["--ignored", "--exact", "inner", "--nocapture"])
        .env("LD_LIBRARY_PATH", &lib)
        .env("DPL_FAKE_CUDA", "1")
        .env_remove("DPL_PLACE")
        .output()
        .expect("run the test binary again");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "the placement checks on the stand-in libcuda failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Kernels launched so far on the stand-in device.
fn launches() -> u64 {
    dpl_testkit::fake_cuda::counts()[3]
}

#[test]
#[ignore = "run by a_gpu_found_by_default_runs_the_calls_that_pay_for_the_trip"]
fn inner() {
    assert!(std::env::var_os("DPL_FAKE_CUDA").is_some());
    assert_eq!(dpl::default_place(), Place::Gpu(0), "the stand-in device");
    const {
        assert!(!dpl::inspect!(saxpy).compute_bound);
        assert!(!dpl::inspect!(scaled).compute_bound);
        assert!(dpl::inspect!(sorted).compute_bound);
        assert!(dpl::inspect!(powers).compute_bound);
    }

    let n = 3000;
    let x: Vec<f32> = (0..n).map(|i| (i % 13) as f32 * 0.25 - 1.0).collect();
    let y: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let keys: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761))
        .collect();
    let want_saxpy: Vec<f32> = x.iter().zip(&y).map(|(a, b)| 2.0 * a + b).collect();
    let mut want_sorted = keys.clone();
    want_sorted.sort_unstable();
    let want_powers: Vec<f32> = x
        .iter()
        .map(|&v| {
            let (mut p, mut q) = (1.0f32, 0.0f32);
            for _ in 0..20 {
                p = p * v + 0.5;
                q = q * 0.25 + p;
            }
            q
        })
        .collect();

    // A streaming call on host data: the CPU, nothing launched or moved.
    let (k, t) = (launches(), dpl::transfers(Place::Gpu(0)));
    assert_eq!(saxpy(2.0, &x, &y), want_saxpy);
    assert_eq!(launches(), k, "saxpy on host vectors launched kernels");
    assert_eq!(dpl::transfers(Place::Gpu(0)), t);

    // Compute-bound calls on host data: the GPU.
    let k = launches();
    assert_eq!(sorted(&keys), want_sorted);
    assert!(launches() > k, "the sort ran on the CPU");
    let k = launches();
    assert_eq!(powers(&x), want_powers);
    assert!(launches() > k, "the costly map ran on the CPU");

    // A streaming call on a host-only Seq: the CPU, and no device copy is made.
    let host = Seq::from(x.clone());
    let k = launches();
    let doubled = scaled(2.0, &host);
    assert_eq!(launches(), k, "scaled on a host Seq launched kernels");
    let want: Vec<f32> = x.iter().map(|v| 2.0 * v).collect();
    assert_eq!(doubled.to_vec(), want);

    // Data on the device: the same streaming call goes there, and leaves its result there.
    let resident = with_place(Place::Gpu(0), || scaled(1.0, &host));
    let (k, t) = (launches(), dpl::transfers(Place::Gpu(0)));
    let tripled = scaled(3.0, &resident);
    assert_eq!(
        launches(),
        k + 1,
        "scaled on a resident Seq did not run there"
    );
    assert_eq!(
        dpl::transfers(Place::Gpu(0)),
        t,
        "a resident call moved data"
    );
    let want: Vec<f32> = x.iter().map(|v| 3.0 * v).collect();
    assert_eq!(tripled.to_vec(), want);

    // Asked for, the GPU runs everything.
    let k = launches();
    let got = with_place(Place::Gpu(0), || saxpy(2.0, &x, &y));
    assert_eq!(got, want_saxpy);
    assert!(launches() > k, "saxpy asked on the GPU did not run there");

    top_level_loop_moves_only_its_scalars();
}

/// A top-level loop runs on the device by default (it is compute-bound) with its vectors
/// resident: 10 steps and 50 steps make the same copies to the device (the matrix and
/// the start vector, once), and each further step copies to the host only the one 8-byte
/// scalar the host needs (`lambda`'s sum), in the same round trip as the error record of
/// the step's checked kernel (two copies into one page-locked buffer, the one wait), and
/// waits, zeroes and copies on the device nowhere else: the driver calls of the stand-in
/// library, counted.
fn top_level_loop_moves_only_its_scalars() {
    let n = 200;
    let a = dpl_testkit::sparse::tridiagonal(n);
    let m = Matrix::row_major(n, n, a.clone()).expect("a matrix");
    let v0 = vec![1.0; n];
    let run = |iters: usize| {
        let (k, before) = (launches(), dpl_testkit::fake_cuda::calls());
        let (v, lambda) = programs::power_iteration(&m, &v0, iters);
        let (k, after) = (launches() - k, dpl_testkit::fake_cuda::calls());
        assert!(k > 0, "the top-level loop did not run on the GPU");
        // The example's plain Rust (sums reassociated: equal to rounding).
        let (w_v, w_l) = baselines::power_seq(&a, &v0, iters);
        assert!((lambda - w_l).abs() < 1e-12 * w_l, "{lambda} against {w_l}");
        assert!(v.iter().zip(&w_v).all(|(g, w)| (g - w).abs() < 1e-12));
        let mut c = [0u64; 9];
        for i in 0..9 {
            c[i] = after[i] - before[i];
        }
        c
    };
    run(3);
    let (c10, c50) = (run(10), run(50));
    // Synchronisations, memsets and bytes, copies to the device and bytes, copies to the
    // host and bytes, device copies, allocations: per step of the 40 more.
    let per_step: Vec<u64> = c50.iter().zip(&c10).map(|(b, a)| b - a).collect();
    assert_eq!(
        [
            per_step[0],
            per_step[1],
            per_step[3],
            per_step[4],
            per_step[5],
            per_step[6],
            per_step[7]
        ],
        [40, 0, 0, 0, 2 * 40, 40 * (32 + 8), 0],
        "per 40 steps: synchronisations, memsets, copies to the device and their bytes, \
         copies to the host and their bytes, device copies (10 steps: {c10:?}, 50 steps: \
         {c50:?})"
    );
}
