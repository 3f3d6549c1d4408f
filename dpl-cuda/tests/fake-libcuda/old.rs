//! A driver library too old for dpl: it has `cuInit` and `cuGetErrorName` but none of the
//! other functions `CudaDriver` calls. `tests/cuda_driver.rs` compiles it with rustc.
#![allow(non_snake_case)]

#[unsafe(no_mangle)]
pub extern "C" fn cuInit(_flags: u32) -> u32 {
    0
}

#[unsafe(no_mangle)]
pub extern "C" fn cuGetErrorName(_error: u32, _p: *mut *const u8) -> u32 {
    1
}
