//! The real driver (feature `cuda`).
//!
//! Without a GPU (the development and CI machines) `CudaDriver::new` and `device_count`
//! must return an error that says why, never panic. With one, programs run on it and
//! agree with the reference interpreter, memory misuse is an error, and a program's cubin
//! is preferred over its PTX when one fits the device. Set `DPL_REQUIRE_GPU=1` to make
//! the absence of a usable device a failure instead of a skip.
//!
//! On Linux the same checks also run without a GPU against `tests/fake-libcuda`, a
//! stand-in for NVIDIA's `libcuda` built on dpl-sim: the test builds it with cargo, then
//! runs this test binary again (the `#[ignore]`d `fake_inner_*` tests) with the fake first
//! on `LD_LIBRARY_PATH`, so every CUDA call of the driver is exercised.

#![cfg(feature = "cuda")]

mod support;

use dpl_core::interp::{self, Value};
use dpl_cuda::cuda::{CudaDriver, device_count};
use dpl_cuda::{Driver, Input, Output};
use support::programs::source;
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
        let e = CudaDriver::new(ordinal).expect_err("no machine has so many GPUs");
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
    memory_checks(&d);
}

fn memory_checks(d: &CudaDriver) {
    let before = d.allocated_bytes();
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
    assert_eq!(d.allocated_bytes(), before + 1000);
    // A freed allocation is kept and reused for the next one of its size, zeroed again.
    let c = d.alloc_zeroed(1000).unwrap();
    assert_eq!(c, a, "the freed allocation is reused");
    d.read(c, &mut out).unwrap();
    assert!(out.iter().all(|&x| x == 0), "a reused allocation is zeroed");
    d.free(c).unwrap();
    d.free(b).unwrap();
    assert_eq!(d.allocated_bytes(), before);
}

/// Runs `src` on the GPU for each size and compares with the interpreter.
fn agree(
    d: &CudaDriver,
    sizes: &[usize],
    src: &str,
    rel: f64,
    generate: impl Fn(&mut Rng, usize) -> Vec<Value>,
) {
    let c = compiled(src);
    let prog = dpl_cuda::compile(&c.fused).unwrap_or_else(|e| panic!("{e}"));
    for &n in sizes {
        let mut r = Rng::new(11 ^ n as u64);
        let args = generate(&mut r, n);
        let want = interp::run(&c.fused, args.clone());
        let got = dpl_cuda::run(&prog, d, args);
        match (&want, &got) {
            (Ok(w), Ok(g)) => assert!(
                w.close_to(g, rel),
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
    programs_agree(&d, &[0, 1, 31, 33, 1000, 100_000]);
}

fn programs_agree(d: &CudaDriver, sizes: &[usize]) {
    agree(d, sizes, source("saxpy"), 0.0, |r, n| {
        vec![Value::F32(1.5), f32s(r, n, 100.0), f32s(r, n, 100.0)]
    });
    agree(d, sizes, source("sum_i64"), 0.0, |r, n| {
        vec![i64s(r, n, i64::MIN, i64::MAX)]
    });
    agree(d, sizes, source("dot"), 1e-12, |r, n| {
        vec![f64s(r, n, 10.0), f64s(r, n, 10.0)]
    });
    agree(d, sizes, source("filter_of_map"), 0.0, |r, n| {
        vec![i64s(r, n, -1000, 1000)]
    });
    // A 32-bit scalar parameter (the threshold).
    agree(d, sizes, source("filter_none_or_all"), 0.0, |r, n| {
        vec![u32s(r, n, 0, 100), Value::U32(37)]
    });
    agree(d, sizes, source("exclusive_scan_max"), 0.0, |r, n| {
        vec![i64s(r, n, -1000, 1000), Value::I64(-7)]
    });
    agree(d, sizes, source("scan_of_map"), 0.0, |r, n| {
        vec![i64s(r, n, i64::MIN, i64::MAX)]
    });
    agree(d, sizes, source("sum_map_gather"), 0.0, |r, n| {
        let m = n / 2 + 1;
        vec![i64s(r, m, -1 << 40, 1 << 40), indices(r, n, m)]
    });
    // An index out of range is reported as the interpreter reports it.
    agree(d, sizes, source("sum_map_gather"), 0.0, |r, n| {
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
    let c = compiled(source("saxpy"));
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
    assert!(want.close_to(&got, 0.0), "{}", first_diff(&want, &got, 0.0));
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
    let c = compiled(source("saxpy"));
    let prog = dpl_cuda::compile(&c.fused).unwrap();
    let m = d1.load_program(&prog).unwrap();
    let e = d2.launch(&m, &prog.kernels[0], 1, 32, &[]).unwrap_err();
    assert!(e.contains("another CUDA driver"), "{e}");
    let e = d1.launch(&m, &prog.kernels[0], 1, 32, &[]).unwrap_err();
    assert!(e.contains("parameter"), "{e}");
    let e = d1.launch(&m, "no_such_kernel", 1, 32, &[]).unwrap_err();
    assert!(e.contains("no kernel `no_such_kernel`"), "{e}");
}

/// The fake driver library (Linux): building it, and running `fake_inner_*` tests in a
/// child process that loads it.
#[cfg(target_os = "linux")]
mod fake {
    use std::path::{Path, PathBuf};
    use std::process::Command;
    use std::sync::OnceLock;

    use super::*;
    use dpl_core::ir::{Scalar, Type};
    use dpl_testkit::fake_cuda::{calls, counts, target_dir};

    /// Builds `tests/fake-libcuda` (once per process); returns the folder of `libcuda.so`.
    fn fake_library() -> &'static Path {
        static DIR: OnceLock<PathBuf> = OnceLock::new();
        DIR.get_or_init(|| dpl_testkit::fake_cuda::build(Path::new(env!("CARGO_MANIFEST_DIR"))))
    }

    /// Compiles `tests/fake-libcuda/old.rs` (a library lacking most functions); returns
    /// the folder of its `libcuda.so`.
    fn old_library() -> PathBuf {
        let dir = target_dir().join("fake-libcuda").join("old");
        std::fs::create_dir_all(&dir).expect("create the folder of the old library");
        let src = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests")
            .join("fake-libcuda")
            .join("old.rs");
        let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
        let out = Command::new(rustc)
            .args([
                "--edition",
                "2024",
                "--crate-type",
                "cdylib",
                "--crate-name",
                "cuda",
                "-o",
            ])
            .arg(dir.join("libcuda.so"))
            .arg(&src)
            .output()
            .expect("run rustc to build tests/fake-libcuda/old.rs");
        assert!(
            out.status.success(),
            "building old.rs failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        dir
    }

    /// Runs the ignored test `name` of this binary in a child process with the library in
    /// `lib` first on the search path, and checks that it ran and passed.
    fn child(name: &str, lib: &Path, env: &[(&str, &str)]) {
        let exe = std::env::current_exe().expect("the test binary's path");
        let path = match std::env::var_os("LD_LIBRARY_PATH") {
            Some(p) => {
                let mut v = vec![lib.to_path_buf()];
                v.extend(std::env::split_paths(&p));
                std::env::join_paths(v).expect("a valid LD_LIBRARY_PATH")
            }
            None => lib.as_os_str().to_owned(),
        };
        let out = Command::new(exe)
            .args([
                "--ignored",
                "--exact",
                name,
                "--nocapture",
                "--test-threads=1",
            ])
            .env("LD_LIBRARY_PATH", path)
            .env("DPL_FAKE_CUDA", "1")
            .envs(env.iter().copied())
            .output()
            .expect("run the test binary again");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "{name} with the fake libcuda failed:\n{stdout}\n{stderr}"
        );
    }

    #[test]
    fn the_driver_runs_on_the_fake_library() {
        child("fake::fake_inner_end_to_end", fake_library(), &[]);
    }

    #[test]
    fn a_resident_call_queues_its_kernels_without_waiting() {
        child("fake::fake_inner_stream_order", fake_library(), &[]);
    }

    #[test]
    fn transfers_go_through_page_locked_memory() {
        child("fake::fake_inner_staging", fake_library(), &[]);
    }

    #[test]
    fn no_device_and_old_gpus_are_refused_on_the_fake_library() {
        child(
            "fake::fake_inner_no_device",
            fake_library(),
            &[("FAKE_CUDA_DEVICES", "0")],
        );
        child(
            "fake::fake_inner_old_gpu",
            fake_library(),
            &[("FAKE_CUDA_CC", "61")],
        );
    }

    #[test]
    fn a_driver_library_without_the_needed_functions_is_refused() {
        child("fake::fake_inner_old_driver", &old_library(), &[]);
    }

    /// Whether this process is a child started by [`child`].
    fn in_child() -> bool {
        std::env::var_os("DPL_FAKE_CUDA").is_some()
    }

    /// The driver calls one call of `prog` on `args` makes (after a first call that loads
    /// the module and leaves the freed buffers in the pool), its launches first; the result
    /// it leaves on the device, read back.
    fn one_call(d: &CudaDriver, prog: &dpl_cuda::GpuProgram, args: &[Input]) -> ([u64; 10], Value) {
        let run = || {
            dpl_cuda::run_resident(prog, d, args.to_vec(), true, &|_| {
                dpl_cuda::UNKNOWN_LOCATION
            })
            .unwrap()
        };
        let take = |out: Output| match out {
            Output::Device(seq) => {
                let v = dpl_cuda::download(d, &seq).unwrap();
                seq.bufs.iter().for_each(|&b| d.free(b).unwrap());
                v
            }
            Output::Host(v) => v,
            other => panic!("a flat or host result: {other:?}"),
        };
        take(run());
        let (launches, before) = (counts()[3], calls());
        let out = run();
        let (launches, after) = (counts()[3] - launches, calls());
        let mut c = [launches; 10];
        for i in 0..9 {
            c[i + 1] = after[i] - before[i];
        }
        (c, take(out))
    }

    #[test]
    #[ignore = "run by a_resident_call_queues_its_kernels_without_waiting in a child process"]
    fn fake_inner_stream_order() {
        assert!(in_child());
        let d = CudaDriver::new(0).unwrap();
        let n = 5000;
        let mut r = Rng::new(17);
        let on_device = |v: &Value| {
            let Value::Seq(items) = v else {
                panic!("a sequence")
            };
            let elem = match items.first() {
                Some(Value::I64(_)) => Type::Scalar(Scalar::I64),
                Some(Value::Usize(_)) => Type::Scalar(Scalar::Usize),
                Some(Value::F64(_)) => Type::Scalar(Scalar::F64),
                _ => Type::Scalar(Scalar::F32),
            };
            Input::Device(dpl_cuda::upload(&d, &elem, items).unwrap())
        };
        // saxpy on resident vectors: one launch, nothing else: no synchronisation, no
        // zeroing (the result is written whole), no copy, no allocation (the pool).
        let (x, y) = (f32s(&mut r, n, 9.0), f32s(&mut r, n, 9.0));
        let saxpy = dpl_cuda::compile(&compiled(source("saxpy")).fused).unwrap();
        let args = [Input::Host(Value::F32(1.5)), on_device(&x), on_device(&y)];
        let (c, got) = one_call(&d, &saxpy, &args);
        assert_eq!(c, [1, 0, 0, 0, 0, 0, 0, 0, 0, 0], "saxpy's calls");
        let want = interp::run(
            &compiled(source("saxpy")).fused,
            vec![Value::F32(1.5), x, y],
        )
        .unwrap();
        assert!(want.close_to(&got, 0.0), "{}", first_diff(&want, &got, 0.0));

        // A sum of resident integers: one kernel (its last block combines the tiles'
        // partials), then the read-back of its 8-byte result (queued behind the kernel into
        // page-locked memory, and one wait for it: a synchronisation); nothing zeroed: the
        // partials and the result are written whole, and the 4-byte count of blocks done,
        // which the last block sets back to zero, is one the driver kept zeroed from the
        // call before.
        let v = i64s(&mut r, n, i64::MIN, i64::MAX);
        let sum = dpl_cuda::compile(&compiled(source("sum_i64")).fused).unwrap();
        let (c, got) = one_call(&d, &sum, &[on_device(&v)]);
        let want = interp::run(&compiled(source("sum_i64")).fused, vec![v]).unwrap();
        assert_eq!(want, got);
        assert_eq!(
            c,
            [1, 1, 0, 0, 0, 0, 1, 8, 0, 0],
            "sum's launches, synchronisations, memsets and their bytes, copies to the device \
             and their bytes, copies to the host and their bytes, device copies, allocations"
        );
        // An `f32` sum (in dpl's one order): one 4-byte read-back, one wait.
        let v = f32s(&mut r, n, 100.0);
        let sum = dpl_cuda::compile(&compiled(source("sum_f32")).fused).unwrap();
        let (c, got) = one_call(&d, &sum, &[on_device(&v)]);
        let want = interp::run(&compiled(source("sum_f32")).fused, vec![v]).unwrap();
        assert_eq!(want, got);
        assert_eq!(
            c,
            [1, 1, 0, 0, 0, 0, 1, 4, 0, 0],
            "sum_f32's launches, synchronisations, memsets and their bytes, copies to the \
             device and their bytes, copies to the host and their bytes, device copies, \
             allocations"
        );

        // A sum with checks (a gather's bounds): the check of its first kernel is read
        // with the result, in one round trip: the 32-byte error record and the 8-byte
        // result are queued into one page-locked buffer, and waited for once. Nothing is
        // zeroed: the record, which no check wrote, is one the driver kept zeroed.
        let m = 100;
        let idx: Vec<usize> = (0..n).map(|i| (i * 7) % m).collect();
        let args = [on_device(&i64s(&mut r, m, -5, 5)), on_device(&usizes(idx))];
        let checked = dpl_cuda::compile(&compiled(source("sum_map_gather")).fused).unwrap();
        let (c, got) = one_call(&d, &checked, &args);
        let host_args = args
            .iter()
            .map(|a| match a {
                Input::Device(seq) => dpl_cuda::download(&d, seq).unwrap(),
                _ => unreachable!(),
            })
            .collect();
        let want = interp::run(&compiled(source("sum_map_gather")).fused, host_args).unwrap();
        assert_eq!(want, got);
        assert_eq!(
            (c[1], c[2], c[4], c[6], c[7], c[8]),
            (1, 0, 0, 2, 40, 0),
            "a checked sum's synchronisations, memsets, copies to the device, copies to the \
             host and their bytes, device copies ({} launches)",
            c[0]
        );

        // A minimum (no start value: whether there is one, then the value): both queued
        // into one page-locked buffer and waited for once (one round trip).
        let v = seq((0..n)
            .map(|i| (i * 37 % 101) as f64 - 50.5)
            .collect::<Vec<_>>());
        let min = dpl_cuda::compile(&compiled(source("min_f64")).fused).unwrap();
        let (c, got) = one_call(&d, &min, &[on_device(&v)]);
        assert_eq!(got, Value::F64(-50.5));
        assert_eq!(
            (c[1], c[4], c[6], c[7], c[8], c[9]),
            (1, 0, 2, 1 + 8, 0, 0),
            "min_f64's synchronisations, copies to the device, copies to the host and their \
             bytes, device copies, allocations ({} launches)",
            c[0]
        );

        // A scan of resident data, its result left on the device: one kernel (the look-back
        // scan), no wait, no copy; zeroed are only the tile counter and the tiles' flags
        // (4 bytes each, one buffer: one memset), not the tiles' aggregates and prefixes
        // nor the result.
        let v = i64s(&mut r, n, -1000, 1000);
        let scan = dpl_cuda::compile(&compiled(source("scan_of_map")).fused).unwrap();
        let (c, got) = one_call(&d, &scan, &[on_device(&v)]);
        let want = interp::run(&compiled(source("scan_of_map")).fused, vec![v]).unwrap();
        assert_eq!(want, got);
        let Value::Seq(items) = &got else {
            panic!("a sequence")
        };
        let tile = 256 * dpl_cuda::scan_items(256, &[Scalar::I64]) as usize;
        let tiles = items.len().div_ceil(tile) as u64;
        assert_eq!(
            c,
            [1, 0, 1, 4 + 4 * tiles, 0, 0, 0, 0, 0, 0],
            "scan_of_map's launches, synchronisations, memsets and their bytes, copies to \
             the device and their bytes, copies to the host and their bytes, device copies, \
             allocations"
        );

        // A filter of resident data: two kernels (the chunks' counts, scanned by the last
        // block of the same launch; the survivors written). Its remainder records checks:
        // the 32-byte error record and the 8-byte total come back together (two copies
        // into one page-locked buffer, one wait), and the end of the call reads the record
        // of the second kernel (one more wait). Zeroed: only the chunks' counts (the error
        // record and the count of blocks done are kept zeroed between calls).
        let v = i64s(&mut r, n, -1000, 1000);
        let filter = dpl_cuda::compile(&compiled(source("filter_of_map")).fused).unwrap();
        let (c, got) = one_call(&d, &filter, &[on_device(&v)]);
        let want = interp::run(&compiled(source("filter_of_map")).fused, vec![v]).unwrap();
        assert_eq!(want, got);
        let chunks = n.div_ceil(512) as u64;
        assert_eq!(
            c,
            [2, 2, 1, 8 * chunks, 0, 0, 3, 32 + 8 + 32, 0, 0],
            "filter_of_map's launches, synchronisations, memsets and their bytes, copies to \
             the device and their bytes, copies to the host and their bytes, device copies, \
             allocations"
        );

        // A sort of resident data (onesweep): the keys made with the digits' counts, then
        // one kernel per byte of the f32 keys; no wait, no copy; zeroed only the sort's
        // state (per pass twice 256 counts and a tile counter, the count of blocks done,
        // per tile 256 look-back statuses shared by the passes: 8 bytes each), not the
        // keys' buffers nor the result.
        let v = f32s(&mut r, n, 100.0);
        let sort = dpl_cuda::compile(&compiled(source("sort_of_map")).fused).unwrap();
        let (c, got) = one_call(&d, &sort, &[on_device(&v)]);
        let want = interp::run(&compiled(source("sort_of_map")).fused, vec![v]).unwrap();
        assert_eq!(want, got);
        let tiles = n.div_ceil(8192) as u64;
        assert_eq!(
            c,
            [5, 0, 1, 8 * (4 * 513 + 1 + 256 * tiles), 0, 0, 0, 0, 0, 0],
            "sort_of_map's launches, synchronisations, memsets and their bytes, copies to \
             the device and their bytes, copies to the host and their bytes, device copies, \
             allocations"
        );

        // A failed check in a queued kernel: the error record's read-back waits for it,
        // and the failure is the interpreter's.
        let gather = dpl_cuda::compile(&compiled(source("sum_map_gather")).fused).unwrap();
        let m = 100;
        let idx: Vec<usize> = (0..n).map(|i| (i * 7) % (m + 1)).collect();
        let args = vec![i64s(&mut r, m, -5, 5), usizes(idx)];
        let want = interp::run(&compiled(source("sum_map_gather")).fused, args.clone());
        let got = dpl_cuda::run(&gather, &d, args);
        let want = want
            .unwrap_err()
            .to_run_error(dpl_cuda::UNKNOWN_LOCATION)
            .unwrap();
        assert_eq!(
            got.unwrap_err(),
            want,
            "an index out of range, reported as before"
        );
    }

    /// The driver calls `f` makes: synchronisations, memsets and their bytes, copies to the
    /// device and their bytes, copies to the host and their bytes, device copies,
    /// allocations.
    fn calls_of(f: impl FnOnce()) -> [u64; 9] {
        let before = calls();
        f();
        let after = calls();
        std::array::from_fn(|i| after[i] - before[i])
    }

    #[test]
    #[ignore = "run by transfers_go_through_page_locked_memory in a child process"]
    fn fake_inner_staging() {
        assert!(in_child());
        let d = CudaDriver::new(0).unwrap();
        assert!(d.staging(), "staging is on by default");
        // The stand-in runs a queued copy only when something waits for it or a later
        // operation of the stream runs, so a host access to page-locked memory before its
        // copy has run, or a chunk written over one not yet copied, gives wrong bytes here.
        let bytes = |n: usize, seed: u64| -> Vec<u8> {
            let mut r = Rng::new(seed);
            (0..n).map(|_| r.u32() as u8).collect()
        };
        // A small write returns without waiting (its copy is queued); the read waits once.
        let small = bytes(1000, 1);
        let a = d.alloc(small.len()).unwrap();
        let c = calls_of(|| d.write(a, &small).unwrap());
        assert_eq!(c, [0, 0, 0, 1, 1000, 0, 0, 0, 0], "a small write's calls");
        let mut back = vec![0u8; small.len()];
        let c = calls_of(|| d.read(a, &mut back).unwrap());
        assert_eq!(c, [1, 0, 0, 0, 0, 1, 1000, 0, 0], "a small read's calls");
        assert_eq!(back, small);
        // Small writes in a row, more than there are small buffers, each to its own place:
        // the host waits only where a buffer's turn comes again and its copy has not run
        // (here never before something waits for it; a GPU has mostly copied by then, and
        // the driver asks before it waits).
        let slots = 8;
        let many: Vec<Vec<u8>> = (0..2 * slots + 3)
            .map(|i| bytes(100 + i, 10 + i as u64))
            .collect();
        let dst: Vec<u64> = many.iter().map(|m| d.alloc(m.len()).unwrap()).collect();
        let c = calls_of(|| {
            for (m, &at) in many.iter().zip(&dst) {
                d.write(at, m).unwrap();
            }
        });
        assert_eq!(
            (c[3], c[5]),
            (many.len() as u64, 0),
            "one copy per write, no read"
        );
        assert_eq!(
            c[0],
            (many.len() - slots) as u64,
            "waits for {} writes",
            many.len()
        );
        for (m, &at) in many.iter().zip(&dst) {
            let mut got = vec![0u8; m.len()];
            d.read(at, &mut got).unwrap();
            assert_eq!(&got, m);
        }

        // A large transfer: chunks of 8 MiB through two buffers in turn. Three chunks:
        // the third waits for the first's copy, nothing else waits.
        let chunk = 8 << 20;
        let big = bytes(2 * chunk + 12_345, 2);
        let b = d.alloc(big.len()).unwrap();
        let c = calls_of(|| d.write(b, &big).unwrap());
        assert_eq!(
            c,
            [1, 0, 0, 3, big.len() as u64, 0, 0, 0, 0],
            "a large write's calls"
        );
        let mut back = vec![0u8; big.len()];
        let c = calls_of(|| d.read(b, &mut back).unwrap());
        assert_eq!(
            c,
            [3, 0, 0, 0, 0, 3, big.len() as u64, 0, 0],
            "a large read's calls: each chunk waited for once"
        );
        assert!(back == big, "a large transfer's bytes");
        // A large transfer reaching past its allocation is refused whole, nothing written.
        let e = d.write(b + 1, &big).unwrap_err();
        assert!(e.contains("outside"), "{e}");
        let e = d.read(b + 1, &mut back).unwrap_err();
        assert!(e.contains("outside"), "{e}");
        d.read(b, &mut back).unwrap();
        assert!(back == big, "nothing written by the refused write");
        // Parts across the chunks' bounds, at odd places.
        for (at, len) in [
            (1, chunk + 3),
            (chunk - 5, chunk + 10),
            (7, 2 * chunk + 100),
        ] {
            let mut part = vec![0u8; len];
            d.read(b + at as u64, &mut part).unwrap();
            assert!(part == big[at..at + len], "bytes {at}..{}", at + len);
        }
        // A write after a kernel and a read before the next: stream order keeps them.
        let n = 3_000_000;
        let mut r = Rng::new(5);
        let (x, y) = (f32s(&mut r, n, 9.0), f32s(&mut r, n, 9.0));
        let saxpy = dpl_cuda::compile(&compiled(source("saxpy")).fused).unwrap();
        let want = interp::run(
            &compiled(source("saxpy")).fused,
            vec![Value::F32(0.5), x.clone(), y.clone()],
        )
        .unwrap();
        let got = dpl_cuda::run(&saxpy, &d, vec![Value::F32(0.5), x.clone(), y.clone()]).unwrap();
        assert!(want.close_to(&got, 0.0), "{}", first_diff(&want, &got, 0.0));

        // Switched off: the driver's synchronous copies, one per transfer.
        d.set_staging(false);
        assert!(!d.staging());
        let c = calls_of(|| d.write(b, &big).unwrap());
        assert_eq!(c, [0, 0, 0, 1, big.len() as u64, 0, 0, 0, 0]);
        let c = calls_of(|| d.read(b, &mut back).unwrap());
        assert_eq!(c, [0, 0, 0, 0, 0, 1, big.len() as u64, 0, 0]);
        assert!(back == big);
        let got = dpl_cuda::run(&saxpy, &d, vec![Value::F32(0.5), x, y]).unwrap();
        assert!(want.close_to(&got, 0.0), "{}", first_diff(&want, &got, 0.0));
        d.set_staging(true);
        for at in [a, b].into_iter().chain(dst) {
            d.free(at).unwrap();
        }
    }

    /// A program's PTX wrapped as a cubin of the fake driver.
    fn fake_cubin(ptx: &str) -> Vec<u8> {
        let mut v = b"\x7fELFdplfake:".to_vec();
        v.extend_from_slice(ptx.as_bytes());
        v.push(0);
        v
    }

    #[test]
    #[ignore = "run by the_driver_runs_on_the_fake_library in a child process"]
    fn fake_inner_end_to_end() {
        assert!(in_child());
        assert_eq!(device_count(), Ok(1));
        let d = CudaDriver::new(0).unwrap();
        assert_eq!(d.compute_capability(), (8, 0));
        assert_eq!(d.name(), "dpl fake GPU 0 (sm_80)");
        assert_eq!(counts()[0], 1, "one context reference");

        memory_checks(&d);
        programs_agree(&d, &[0, 1, 31, 33, 1000, 5000]);
        // Freed allocations are kept for reuse until the pool is released.
        assert!(counts()[1] > 0, "the pool keeps freed allocations");
        d.release_pool();
        assert_eq!(counts()[1], 0, "every allocation was freed");
        assert!(counts()[3] > 0);

        // Modules are cached by PTX text.
        let c = compiled(source("saxpy"));
        let mut prog = dpl_cuda::compile(&c.fused).unwrap();
        let m1 = d.load_program(&prog).unwrap();
        let modules = counts()[2];
        let m2 = d.load(&prog.ptx).unwrap();
        assert!(std::sync::Arc::ptr_eq(&m1, &m2));
        assert_eq!(counts()[2], modules);
        assert_eq!(m1.cubin(), None);

        // Resident blocks: the occupancy API (the fake: 2048 threads and 32 blocks per
        // multiprocessor) times the multiprocessors (the fake has 4).
        assert_eq!(d.multiprocessors(), 4);
        let k0 = &prog.kernels[0];
        assert_eq!(d.resident_blocks(&m1, k0, 256), Ok(4 * 8));
        assert_eq!(d.resident_blocks(&m1, k0, 32), Ok(4 * 32));
        assert_eq!(d.resident_blocks(&m1, k0, 1024), Ok(4 * 2));
        let e = d.resident_blocks(&m1, "nope", 256).unwrap_err();
        assert!(e.contains("nope"), "{e}");

        // Arguments that do not match the kernel never reach the driver.
        let launches = counts()[3];
        let k = &prog.kernels[0];
        let e = d.launch(&m1, k, 1, 32, &[]).unwrap_err();
        assert!(e.contains("parameter(s), 0 given"), "{e}");
        let e = d.launch(&m1, "nope", 1, 32, &[]).unwrap_err();
        assert!(e.contains("no kernel `nope`"), "{e}");
        assert_eq!(counts()[3], launches);

        // The cubin for the device is preferred; others are not binary compatible.
        let mut r = Rng::new(5);
        let args = vec![
            Value::F32(0.5),
            f32s(&mut r, 3000, 9.0),
            f32s(&mut r, 3000, 9.0),
        ];
        let want = interp::run(&c.fused, args.clone()).unwrap();
        for (cubins, from) in [
            (
                vec![(75, b"\x7fELF".to_vec()), (80, fake_cubin(&prog.ptx))],
                Some(80),
            ),
            (vec![(70, fake_cubin(&prog.ptx))], None),
            (vec![(86, fake_cubin(&prog.ptx))], None),
            (vec![(80, b"\x7fELF garbage\0".to_vec())], None),
            (vec![(80, b"not an ELF".to_vec())], None),
        ] {
            prog.ptx.push_str("\n// another module\n");
            prog.cubins = cubins;
            let m = d.load_program(&prog).unwrap();
            assert_eq!(m.cubin(), from);
            let got = dpl_cuda::run(&prog, &d, args.clone()).unwrap();
            assert!(want.close_to(&got, 0.0), "{}", first_diff(&want, &got, 0.0));
        }

        // The JIT log comes with a load failure; a bad cubin's failure too.
        let e = d
            .load(".version 7.0\n.target sm_70\nnonsense\n")
            .unwrap_err();
        assert!(
            e.starts_with("cuModuleLoadDataEx (PTX) failed: CUDA_ERROR_INVALID_PTX\nfake ptxas:"),
            "{e}"
        );
        prog.ptx = ".version 7.0\n.target sm_70\nstill nonsense\n".into();
        prog.cubins = vec![(80, b"\x7fELF garbage\0".to_vec())];
        let e = d.load_program(&prog).unwrap_err();
        assert!(
            e.starts_with("cuModuleLoadDataEx (cubin for sm_80) failed: CUDA_ERROR_INVALID_IMAGE")
                && e.contains("and then cuModuleLoadDataEx (PTX) failed"),
            "{e}"
        );

        // Another thread uses the same driver (it makes the context current there).
        std::thread::scope(|s| {
            s.spawn(|| memory_checks(&d)).join().unwrap();
        });

        // Dropping the driver frees what is left, unloads its modules and releases the
        // context.
        let leak = d.alloc_zeroed(64).unwrap();
        assert_ne!(leak, 0);
        assert!(counts()[2] > 0);
        drop(d);
        assert_eq!(counts()[..3], [0, 0, 0]);
    }

    #[test]
    #[ignore = "run by no_device_and_old_gpus_are_refused_on_the_fake_library"]
    fn fake_inner_no_device() {
        assert!(in_child());
        assert_eq!(device_count(), Ok(0));
        let e = CudaDriver::new(0).unwrap_err();
        assert_eq!(
            e,
            "CUDA device 0 does not exist: the driver reports 0 device(s)"
        );
    }

    #[test]
    #[ignore = "run by no_device_and_old_gpus_are_refused_on_the_fake_library"]
    fn fake_inner_old_gpu() {
        assert!(in_child());
        let e = CudaDriver::new(0).unwrap_err();
        assert!(
            e.contains("compute capability 6.1") && e.contains("7.0"),
            "{e}"
        );
        assert_eq!(counts()[0], 0, "no context was retained");
    }

    #[test]
    #[ignore = "run by a_driver_library_without_the_needed_functions_is_refused"]
    fn fake_inner_old_driver() {
        assert!(in_child());
        let e = CudaDriver::new(0).unwrap_err();
        assert!(
            e.starts_with("the CUDA driver library `libcuda.so` lacks cuDeviceGetCount, ")
                && e.contains("cuLaunchKernel")
                && !e.contains("cuInit,"),
            "{e}"
        );
        assert_eq!(device_count(), Err(e));
    }
}
