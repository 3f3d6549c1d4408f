//! The stand-in CUDA driver library (`dpl-cuda/tests/fake-libcuda`: NVIDIA's `libcuda`
//! functions implemented on dpl-sim, counting what is asked of it) for tests that run the
//! real CUDA code paths without a GPU: [`build`] compiles it next to the calling test
//! binary, [`counts`] and [`calls`] read its counters from a process that loaded it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Builds the stand-in library from `dpl_cuda_dir` (the dpl-cuda package's folder) into
/// `<target>/fake-libcuda`, `<target>` being the target folder of the running test binary
/// (where dpl-cuda's own driver tests build it too); returns the folder holding its
/// `libcuda.so`. Panics, saying why, when it cannot be built.
pub fn build(dpl_cuda_dir: &Path) -> PathBuf {
    let manifest = dpl_cuda_dir
        .join("tests")
        .join("fake-libcuda")
        .join("Cargo.toml");
    let target = target_dir().join("fake-libcuda");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["build", "--quiet", "--manifest-path"])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target)
        .env_remove("RUSTFLAGS")
        .output()
        .expect("run cargo to build the stand-in libcuda");
    assert!(
        out.status.success(),
        "building the stand-in libcuda ({}) failed:\n{}",
        manifest.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = target.join("debug");
    assert!(
        dir.join("libcuda.so").is_file(),
        "no libcuda.so in {}",
        dir.display()
    );
    dir
}

/// The target folder of the running test binary (`<target>/<profile>/deps/<exe>`).
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.ancestors()
        .nth(3)
        .expect("the test binary lies in <target>/<profile>/deps")
        .to_path_buf()
}

/// Live context references, allocations, modules and launches so far (`fake_cuda_counts`),
/// read in a process that loaded the stand-in library.
pub fn counts() -> [u64; 4] {
    read::<4>(b"fake_cuda_counts")
}

/// Synchronisations, memsets and their bytes, copies to the device and their bytes, copies
/// to the host and their bytes, device-to-device copies and `cuMemAlloc`s so far
/// (`fake_cuda_calls`), read in a process that loaded the stand-in library.
pub fn calls() -> [u64; 9] {
    read::<9>(b"fake_cuda_calls")
}

/// The `N` counters the stand-in's hook `name` writes.
fn read<const N: usize>(name: &[u8]) -> [u64; N] {
    // SAFETY: the stand-in library is already loaded by the driver under test (this only
    // takes one more reference); its hooks `fake_cuda_counts` and `fake_cuda_calls` have
    // exactly this signature and write 4 and 9 `u64`s, the `N` they are read with here.
    unsafe {
        let lib = libloading::Library::new("libcuda.so").expect("the stand-in libcuda");
        let f = lib
            .get::<unsafe extern "C" fn(*mut u64)>(name)
            .expect("the stand-in's counter hook");
        let mut c = [0u64; N];
        f(c.as_mut_ptr());
        c
    }
}
