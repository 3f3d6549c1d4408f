//! `Seq<T>` on the GPU places: a sequence returned by a call on `Place::Sim` stays on the
//! (simulated) device and the next call uses it there, so an iterative solver moves only
//! scalars between host and device per iteration. Proven by counting transfers
//! (`dpl::transfers`) around a conjugate-gradient loop, whose result is checked against
//! the same loop on `Place::Seq` and against plain Rust. A loop at the top level of a body
//! keeps what it carries on the device (the SPEC's power iteration), and a resident
//! `&mut Seq<T>` is replaced there.
#![cfg(feature = "sim")]

use dpl::prelude::*;
use std::sync::Mutex;

/// The transfer counters are per process: the tests of this file run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// `a * x + y`
#[parallel]
fn axpy(a: f32, x: &Seq<f32>, y: &Seq<f32>) -> Seq<f32> {
    map(|xi, yi| a * xi + yi, x, y)
}

/// `x . y` in f64.
#[parallel]
fn dot(x: &Seq<f32>, y: &Seq<f32>) -> f64 {
    sum(map(|a, b| (a as f64) * (b as f64), x, y))
}

/// The 1-D Laplacian with zero boundary: `2 x[i] - x[i-1] - x[i+1]` (symmetric positive
/// definite).
#[parallel]
fn laplace(x: &Seq<f32>) -> Seq<f32> {
    map(
        |i| {
            let l = if i > 0 { x[i - 1] } else { 0.0 };
            let r = if i + 1 < len(x) { x[i + 1] } else { 0.0 };
            2.0 * x[i] - l - r
        },
        indices(x),
    )
}

/// Plain-Rust reference of `laplace`.
fn laplace_ref(x: &[f32]) -> Vec<f32> {
    (0..x.len())
        .map(|i| {
            let l = if i > 0 { x[i - 1] } else { 0.0 };
            let r = if i + 1 < x.len() { x[i + 1] } else { 0.0 };
            2.0 * x[i] - l - r
        })
        .collect()
}

/// Conjugate gradient for `laplace(x) = b` from `x = 0`, `iters` iterations, every vector a
/// `Seq` (so on a GPU place they stay on the device). Returns `x`.
fn cg(b: &Seq<f32>, iters: usize, per_iteration: &mut dyn FnMut()) -> Seq<f32> {
    let n = b.len();
    let mut x = Seq::from(vec![0.0f32; n]);
    let mut r = axpy(0.0, b, b); // a copy of b made where the calls run
    let mut p = axpy(0.0, b, b);
    let mut rr = dot(&r, &r);
    for _ in 0..iters {
        let ap = laplace(&p);
        let alpha = (rr / dot(&p, &ap)) as f32;
        x = axpy(alpha, &p, &x);
        r = axpy(-alpha, &ap, &r);
        let rr_next = dot(&r, &r);
        let beta = (rr_next / rr) as f32;
        rr = rr_next;
        p = axpy(beta, &p, &r);
        per_iteration();
    }
    x
}

fn rhs(n: usize) -> Vec<f32> {
    (0..n).map(|i| ((i * 7919) % 13) as f32 - 6.0).collect()
}

#[test]
fn cg_vectors_stay_on_the_device_between_calls() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let n = 2048;
    let iters = 12;
    let b_host = rhs(n);
    let reference = with_place(Place::Seq, || {
        cg(&Seq::from(b_host.clone()), iters, &mut || {})
    });

    let b = Seq::from(b_host.clone());
    let start = dpl::transfers(Place::Sim);
    let mut readings = Vec::new();
    let x = with_place(Place::Sim, || {
        cg(&b, iters, &mut || readings.push(dpl::transfers(Place::Sim)))
    });
    // After the first iteration, nothing but scalars moves: no host-to-device copies at
    // all (scalars are kernel arguments), and device-to-host only the dot products and
    // error records (a few dozen bytes), never a vector (8 KiB here).
    for w in readings.windows(2) {
        let up = w[1].to_device_bytes - w[0].to_device_bytes;
        let down = w[1].to_host_bytes - w[0].to_host_bytes;
        assert_eq!(up, 0, "an iteration uploaded {up} bytes");
        assert!(
            down < 4 * n as u64 / 8,
            "an iteration downloaded {down} bytes (a vector is {} bytes)",
            4 * n
        );
    }
    // The right-hand side and the zero start vector went up once each, nothing else did.
    let first = readings[0].to_device_bytes - start.to_device_bytes;
    assert_eq!(
        first,
        2 * 4 * n as u64,
        "uploads before the loop's second iteration"
    );
    assert!(x.device_place() == Some(Place::Sim) && !x.is_on_host());
    let before_read = dpl::transfers(Place::Sim);
    let x_host = x.to_vec(); // the lazy download
    let read = dpl::transfers(Place::Sim).to_host_bytes - before_read.to_host_bytes;
    assert_eq!(read, 4 * n as u64);
    assert!(x.is_on_host());

    // Same iterates as the sequential reference (reductions may reassociate).
    for (i, (g, w)) in x_host.iter().zip(reference.iter()).enumerate() {
        assert!(
            (g - w).abs() <= 1e-3 * (1.0 + w.abs()),
            "x[{i}]: sim {g} vs seq {w}"
        );
    }
    // And CG did its job: the residual fell.
    let ax = laplace_ref(&x_host);
    let res: f64 = ax
        .iter()
        .zip(&b_host)
        .map(|(a, b)| ((a - b) as f64).powi(2))
        .sum::<f64>()
        .sqrt();
    let norm_b: f64 = b_host
        .iter()
        .map(|v| (*v as f64).powi(2))
        .sum::<f64>()
        .sqrt();
    assert!(res < norm_b, "residual {res} vs |b| {norm_b}");
}

#[test]
fn writing_on_the_host_drops_the_device_copy() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let x = Seq::from(vec![1.0f32, 2.0, 3.0]);
    let mut y = with_place(Place::Sim, || axpy(2.0, &x, &x));
    assert_eq!(y.device_place(), Some(Place::Sim));
    assert_eq!(y.len(), 3, "the length is known without a download");
    assert!(!y.is_on_host());
    y[0] = 10.0; // downloads, then the device copy is stale and dropped
    assert!(y.is_on_host());
    assert_eq!(y.device_place(), None);
    // The next call uploads the host copy, with the write (x went up with the first call
    // and is still there).
    let before = dpl::transfers(Place::Sim);
    let z = with_place(Place::Sim, || axpy(1.0, &y, &x));
    assert_eq!(
        dpl::transfers(Place::Sim).to_device_bytes - before.to_device_bytes,
        3 * 4
    );
    assert_eq!(x.device_place(), Some(Place::Sim));
    assert!(x.is_on_host(), "uploading keeps the host copy valid");
    assert_eq!(z, [11.0, 8.0, 12.0]);
    // A Seq on the device passed to a CPU call is downloaded for it.
    let w = with_place(Place::Cpu, || axpy(1.0, &z, &z));
    assert_eq!(w, [22.0, 16.0, 24.0]);
    // A clone is a host copy.
    let c = z.clone();
    assert_eq!(c.device_place(), None);
    assert_eq!(c, z);
}

/// The SPEC's power iteration: a loop at the top level of the body.
#[parallel]
fn power_iteration(a: &Matrix<f64>, v0: &[f64], iters: usize) -> (Vec<f64>, f64) {
    let mut v = v0.to_vec();
    let mut lambda = 0.0;
    for _ in 0..iters {
        let w = map(|row| sum(map(|aij, vj| aij * vj, row, v)), a);
        lambda = sum(map(|wi| wi * wi, w)).sqrt();
        v = map(|wi| wi / lambda, w);
    }
    (v, lambda)
}

/// Power iteration on the simulated GPU moves the matrix and the start vector to the
/// device once and the result back once: 10 steps and 50 steps upload the same bytes, and
/// each step downloads only `lambda`'s sum (a scalar from which the host computes the next
/// step's argument) and the kernels' error records, never a vector.
#[test]
fn a_top_level_loop_moves_its_matrix_and_vector_once() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let n = 256;
    let a = dpl_testkit::sparse::tridiagonal(n);
    let m = Matrix::row_major(n, n, a.clone()).expect("a matrix");
    let v0 = vec![1.0; n];
    let moved = |iters: usize| {
        let before = dpl::transfers(Place::Sim);
        let got = with_place(Place::Sim, || power_iteration(&m, &v0, iters));
        let after = dpl::transfers(Place::Sim);
        // The same steps in plain Rust (sums reassociated: equal to rounding).
        let (mut v, mut lambda) = (v0.clone(), 0.0f64);
        for _ in 0..iters {
            let w: Vec<f64> = (0..n)
                .map(|i| (0..n).map(|j| a[i * n + j] * v[j]).sum())
                .collect();
            lambda = w.iter().map(|x| x * x).sum::<f64>().sqrt();
            v = w.iter().map(|x| x / lambda).collect();
        }
        assert!((got.1 - lambda).abs() < 1e-12 * lambda);
        assert!(got.0.iter().zip(&v).all(|(g, w)| (g - w).abs() < 1e-12));
        (
            after.to_device_bytes - before.to_device_bytes,
            after.to_host_bytes - before.to_host_bytes,
        )
    };
    let (up10, down10) = moved(10);
    let (up50, down50) = moved(50);
    assert_eq!(up10, 8 * (n * n + n) as u64, "to the device");
    assert_eq!(up50, up10, "to the device");
    let vector = 8 * n as u64;
    let per_step = (down50 - down10) / 40;
    eprintln!("{per_step} bytes to the host per step (a vector is {vector})");
    assert!(
        per_step < vector / 4,
        "{per_step} bytes to the host per step"
    );
    assert!(down10 >= vector && down10 - vector < 10 * per_step + 64);
}

/// `s *= k`, then its sum: a resident sequence replaced by the result.
#[parallel]
fn scale_seq(s: &mut Seq<f32>, k: f32) -> f32 {
    *s = map(|v| v * k, s);
    sum(s)
}

/// A resident `&mut Seq<T>` is replaced on the device: a call moves nothing to the device
/// and only the scalar result and the kernels' error records back (a few dozen bytes),
/// never the sequence (20,000 bytes).
#[test]
fn a_resident_seq_is_replaced_on_the_device() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    with_place(Place::Sim, || {
        let mut s = Seq::from(vec![1.0f32; 5000]);
        scale_seq(&mut s, 2.0);
        let before = dpl::transfers(Place::Sim);
        let total = scale_seq(&mut s, 0.5);
        let after = dpl::transfers(Place::Sim);
        assert_eq!(total, 5000.0);
        assert_eq!(
            after.to_device_bytes - before.to_device_bytes,
            0,
            "to the device"
        );
        let down = after.to_host_bytes - before.to_host_bytes;
        assert!(down < 200, "{down} bytes to the host");
        assert_eq!(s.to_vec(), vec![1.0f32; 5000]);
    });
}
