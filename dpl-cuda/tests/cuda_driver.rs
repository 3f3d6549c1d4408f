//! The real driver (feature `cuda`).
//!
//! Without a GPU (the development and CI machines) `CudaDriver::new` and `device_count`
//! must return an error that says why, never panic. With one, programs run on it and
//! agree with the reference interpreter, memory misuse is an error, and a program's cubin
//! is preferred over its PTX when one fits the device. Set `DPL_REQUIRE_GPU=1` to make
//! the absence of a usable device a failure instead of a skip.

#![cfg(feature = "cuda")]

mod support;

use dpl_core::interp::{self, Value};
use dpl_cuda::Driver;
use dpl_cuda::cuda::{CudaDriver, device_count};
use support::programs::*;
use support::*;

/// The beginnings of every error `CudaDriver::new(0)` may give on a machine where it
/// cannot open device 0.
const NO_DEVICE: [&str; 6] = [
    "no CUDA driver library could be loaded",
    "the CUDA driver library",
    "cuInit failed: ",
    "cuDeviceGetCount failed: ",
    "CUDA device 0 does not exist",
    "CUDA device 0 has compute capability",
];

/// The driver for device 0, or `None` (with a message) when there is no usable device.
fn gpu() -> Option<CudaDriver> {
    match CudaDriver::new(0) {
        Ok(d) => Some(d),
        Err(e) => {
            assert!(
                std::env::var_os("DPL_REQUIRE_GPU").is_none(),
                "DPL_REQUIRE_GPU is set but CUDA device 0 cannot be opened: {e}"
            );
            eprintln!("skipped: no CUDA device ({e})");
            None
        }
    }
}

#[test]
fn opening_a_device_fails_with_a_reason_or_succeeds_without_panicking() {
    match CudaDriver::new(0) {
        Ok(d) => {
            let (major, minor) = d.compute_capability();
            assert!(major >= 7, "{major}.{minor}");
            assert!(device_count().unwrap() >= 1);
            assert!(!d.name().is_empty());
        }
        Err(e) => {
            assert!(
                NO_DEVICE.iter().any(|p| e.starts_with(p)),
                "unexpected error: {e}"
            );
            // The count says the same: either the same failure, or no device 0.
            match device_count() {
                Ok(n) => assert!(
                    n == 0 || e.contains("compute capability"),
                    "{n} device(s) but: {e}"
                ),
                Err(c) => assert_eq!(c, e),
            }
        }
    }
}

#[test]
fn an_ordinal_past_the_devices_is_an_error() {
    for ordinal in [usize::MAX, 1 << 40, 4096] {
        let e = CudaDriver::new(ordinal)
            .err()
            .expect("no machine has so many GPUs");
        assert!(!e.is_empty());
        if device_count().is_ok() {
            assert!(
                e.contains(&format!("CUDA device {ordinal} does not exist")),
                "{e}"
            );
        }
    }
}

#[test]
fn memory_round_trips_and_misuse_is_an_error() {
    let Some(d) = gpu() else { return };
    let a = d.alloc_zeroed(1000).unwrap();
    let b = d.alloc_zeroed(1000).unwrap();
    let mut out = vec![1u8; 1000];
    d.read(a, &mut out).unwrap();
    assert!(
        out.iter().all(|&x| x == 0),
        "alloc_zeroed gave non-zero bytes"
    );
    let data: Vec<u8> = (0..1000).map(|i| (i * 7 % 251) as u8).collect();
    d.write(a, &data).unwrap();
    d.copy(a + 100, b, 900).unwrap();
    d.read(b, &mut out[..900]).unwrap();
    assert_eq!(&out[..900], &data[100..]);
    assert!(d.write(a + 999, &[1, 2]).unwrap_err().contains("outside"));
    assert!(
        d.read(b + 1000, &mut [0u8; 1])
            .unwrap_err()
            .contains("outside")
    );
    assert!(d.copy(a, b + 500, 600).unwrap_err().contains("outside"));
    assert!(d.write(8, &[1]).unwrap_err().contains("outside"));
    d.free(a).unwrap();
    assert!(d.free(a).unwrap_err().contains("not a live allocation"));
    assert!(d.read(a, &mut [0u8; 4]).unwrap_err().contains("outside"));
    assert_eq!(d.allocated_bytes(), 1000);
    d.free(b).unwrap();
    assert_eq!(d.allocated_bytes(), 0);
}

/// Runs `src` on the GPU for each size and compares with the interpreter.
fn agree(d: &CudaDriver, src: &str, rel: f64, generate: impl Fn(&mut Rng, usize) -> Vec<Value>) {
    let c = compiled(src);
    let prog = dpl_cuda::compile(&c.fused).unwrap_or_else(|e| panic!("{e}"));
    for n in [0, 1, 31, 33, 1000, 100_000] {
        let mut r = Rng::new(11 ^ n as u64);
        let args = generate(&mut r, n);
        let want = interp::run(&c.fused, args.clone());
        let got = dpl_cuda::run(&prog, d, args);
        match (&want, &got) {
            (Ok(w), Ok(g)) => assert!(
                close(w, g, rel),
                "{} at n = {n}: {}",
                c.fused.name,
                first_diff(w, g, rel)
            ),
            (Err(w), Err(g)) => {
                let w = w.to_run_error(dpl_cuda::UNKNOWN_LOCATION).unwrap();
                assert_eq!(&w, g, "{} at n = {n}", c.fused.name);
            }
            _ => panic!("{} at n = {n}: want {want:?}, got {got:?}", c.fused.name),
        }
    }
    assert_eq!(d.allocated_bytes(), 0, "{}: allocations left", c.fused.name);
}

#[test]
fn programs_agree_with_the_interpreter_on_the_gpu() {
    let Some(d) = gpu() else { return };
    agree(&d, SAXPY, 0.0, |r, n| {
        vec![Value::F32(1.5), f32s(r, n, 100.0), f32s(r, n, 100.0)]
    });
    agree(&d, SUM_I64, 0.0, |r, n| {
        vec![i64s(r, n, i64::MIN, i64::MAX)]
    });
    agree(&d, DOT, 1e-12, |r, n| {
        vec![f64s(r, n, 10.0), f64s(r, n, 10.0)]
    });
    agree(&d, FILTER_OF_MAP, 0.0, |r, n| vec![i64s(r, n, -1000, 1000)]);
    agree(&d, SCAN_OF_MAP, 0.0, |r, n| {
        vec![i64s(r, n, i64::MIN, i64::MAX)]
    });
    agree(&d, SUM_MAP_GATHER, 0.0, |r, n| {
        let m = n / 2 + 1;
        vec![i64s(r, m, -1 << 40, 1 << 40), indices(r, n, m)]
    });
    // An index out of range is reported as the interpreter reports it.
    agree(&d, SUM_MAP_GATHER, 0.0, |r, n| {
        let m = n / 2 + 1;
        let mut idx: Vec<usize> = (0..n).map(|i| i % m).collect();
        if let Some(last) = idx.last_mut() {
            *last = m + 3;
        }
        vec![i64s(r, m, -5, 5), usizes(idx)]
    });
}

#[test]
fn modules_are_cached_and_cubins_preferred() {
    let Some(d) = gpu() else { return };
    let c = compiled(SAXPY);
    let mut prog = dpl_cuda::compile(&c.fused).unwrap();
    let m1 = d.load_program(&prog).unwrap();
    let m2 = d.load(&prog.ptx).unwrap();
    assert!(
        std::sync::Arc::ptr_eq(&m1, &m2),
        "the module was loaded twice"
    );
    assert_eq!(
        m1.cubin(),
        None,
        "no cubins: the PTX is compiled by the driver"
    );
    assert_eq!(
        m1.kernels(),
        prog.kernels.iter().map(String::as_str).collect::<Vec<_>>()
    );
    let Some(ptxas) = dpl_cuda::cubin::find_ptxas() else {
        eprintln!("cubin part skipped: DPL_PTXAS / DPL_PTX_TOOLS unset");
        return;
    };
    let (major, minor) = d.compute_capability();
    let cc = 10 * major + minor;
    // A module text the cache has not seen (a comment changes the key, not the code).
    prog.ptx.push_str("\n// cubin variant\n");
    prog.cubins = vec![(
        cc,
        dpl_cuda::cubin::assemble(&ptxas, &prog.ptx, &format!("sm_{cc}")).unwrap(),
    )];
    let m3 = d.load_program(&prog).unwrap();
    assert_eq!(m3.cubin(), Some(cc));
    let mut r = Rng::new(3);
    let args = vec![
        Value::F32(-2.0),
        f32s(&mut r, 5000, 10.0),
        f32s(&mut r, 5000, 10.0),
    ];
    let want = interp::run(&c.fused, args.clone()).unwrap();
    let got = dpl_cuda::run(&prog, &d, args).unwrap();
    assert!(close(&want, &got, 0.0), "{}", first_diff(&want, &got, 0.0));
    // A corrupt cubin falls back to the PTX.
    prog.ptx.push_str("// corrupt cubin variant\n");
    prog.cubins = vec![(cc, b"\x7fELF not really".to_vec())];
    let m4 = d.load_program(&prog).unwrap();
    assert_eq!(m4.cubin(), None);
}

#[test]
fn a_module_of_another_driver_is_refused() {
    let Some(d1) = gpu() else { return };
    let Some(d2) = gpu() else { return };
    let c = compiled(SAXPY);
    let prog = dpl_cuda::compile(&c.fused).unwrap();
    let m = d1.load_program(&prog).unwrap();
    let e = d2.launch(&m, &prog.kernels[0], 1, 32, &[]).unwrap_err();
    assert!(e.contains("another CUDA driver"), "{e}");
    let e = d1.launch(&m, &prog.kernels[0], 1, 32, &[]).unwrap_err();
    assert!(e.contains("parameter"), "{e}");
    let e = d1.launch(&m, "no_such_kernel", 1, 32, &[]).unwrap_err();
    assert!(e.contains("no kernel `no_such_kernel`"), "{e}");
}
