//! Loading: finds the driver library and checks that it has every function the driver
//! calls, before the first call through cudarc (whose loaders panic when the library or
//! one of its functions is missing).

use std::ffi::c_void;
use std::sync::OnceLock;

use super::error::CudaError;

/// Every function of the driver library this driver calls; the probe checks them all, so
/// cudarc never meets a missing symbol (which it reports by panicking).
const SYMBOLS: &[&str] = &[
    "cuGetErrorName",
    "cuInit",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDeviceGetAttribute",
    "cuDeviceGetName",
    "cuDeviceTotalMem_v2",
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease_v2",
    "cuCtxSetCurrent",
    "cuCtxSynchronize",
    "cuMemAlloc_v2",
    "cuMemFree_v2",
    "cuMemsetD8_v2",
    "cuMemcpyHtoD_v2",
    "cuMemcpyDtoH_v2",
    "cuMemcpyDtoD_v2",
    "cuMemAllocHost_v2",
    "cuMemFreeHost",
    "cuMemcpyHtoDAsync_v2",
    "cuMemcpyDtoHAsync_v2",
    "cuEventCreate",
    "cuEventRecord",
    "cuEventQuery",
    "cuEventSynchronize",
    "cuEventDestroy_v2",
    "cuModuleLoadDataEx",
    "cuModuleUnload",
    "cuModuleGetFunction",
    "cuLaunchKernel",
    "cuOccupancyMaxActiveBlocksPerMultiprocessor",
];

/// The file names cudarc tries for the driver library, in its order.
fn library_candidates() -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for n in ["cuda", "nvcuda"]
        .iter()
        .flat_map(|n| cudarc::get_lib_name_candidates(n))
    {
        if !names.contains(&n) {
            names.push(n);
        }
    }
    names
}

/// Checks, once per process, that the driver library loads and has every function in
/// [`SYMBOLS`]. Nothing of cudarc is called before this succeeds.
pub(super) fn probe() -> Result<(), CudaError> {
    static PROBE: OnceLock<Result<(), CudaError>> = OnceLock::new();
    PROBE.get_or_init(probe_library).clone()
}

fn probe_library() -> Result<(), CudaError> {
    let candidates = library_candidates();
    for name in &candidates {
        // SAFETY: opening the NVIDIA driver library runs its initialisers, which have no
        // precondition on the caller; it is the library cudarc opens next (same names,
        // same order), so this loads nothing cudarc would not.
        let Ok(lib) = (unsafe { libloading::Library::new(name) }) else {
            continue;
        };
        let missing: Vec<&'static str> = SYMBOLS
            .iter()
            .copied()
            // SAFETY: the symbol is only looked up, never called or dereferenced, so the
            // pointer type given to `get` does not matter.
            .filter(|s| unsafe { lib.get::<*const c_void>(s.as_bytes()) }.is_err())
            .collect();
        if !missing.is_empty() {
            return Err(CudaError::TooOld {
                library: name.clone(),
                missing,
            });
        }
        return Ok(());
    }
    Err(CudaError::NoLibrary {
        usual: if cfg!(windows) {
            "nvcuda.dll"
        } else {
            "libcuda.so.1"
        },
        others: candidates.len().saturating_sub(1),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_names_cover_linux_and_windows() {
        let c = library_candidates();
        assert!(
            c.iter().any(|n| n == "libcuda.so.1" || n == "nvcuda.dll"),
            "{c:?}"
        );
    }
}
