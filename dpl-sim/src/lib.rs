//! dpl-sim: a simulated NVIDIA GPU that runs PTX text on the CPU.
//!
//! ```
//! use dpl_sim::{Arg, Device};
//! let ptx = r#"
//! .version 7.0
//! .target sm_70
//! .address_size 64
//! .visible .entry scale(.param .u64 x, .param .f32 a, .param .u32 n)
//! {
//!     .reg .pred %p<2>; .reg .b32 %r<6>; .reg .f32 %f<3>; .reg .b64 %rd<5>;
//!     ld.param.u64 %rd1, [x];
//!     ld.param.f32 %f1, [a];
//!     ld.param.u32 %r2, [n];
//!     mov.u32 %r3, %ctaid.x; mov.u32 %r4, %ntid.x; mov.u32 %r5, %tid.x;
//!     mad.lo.s32 %r1, %r3, %r4, %r5;
//!     setp.ge.u32 %p1, %r1, %r2;
//!     @%p1 bra DONE;
//!     cvta.to.global.u64 %rd2, %rd1;
//!     mul.wide.u32 %rd3, %r1, 4;
//!     add.s64 %rd4, %rd2, %rd3;
//!     ld.global.f32 %f2, [%rd4];
//!     mul.rn.f32 %f2, %f2, %f1;
//!     st.global.f32 [%rd4], %f2;
//! DONE:
//!     ret;
//! }
//! "#;
//! let dev = Device::new();
//! let module = dev.load_ptx(ptx)?;
//! let x = dev.upload(&[1.0f32, 2.0, 3.0]);
//! let report = dev.launch(&module, "scale", [1, 1, 1], [32, 1, 1], 0,
//!     &[(&x).into(), 2.0f32.into(), 3u32.into()])?;
//! assert_eq!(dev.download(&x), vec![2.0, 4.0, 6.0]);
//! assert_eq!(report.global_load_requests, 1);
//! # Ok::<(), dpl_sim::Error>(())
//! ```
#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod decode;
mod device;
mod error;
mod exec;
mod fpu;
mod ir;
mod memory;
mod parse;
mod printf;

pub use device::{
    Arg, DEFAULT_INSTRUCTION_LIMIT, DEFAULT_MEMORY_LIMIT, Device, DeviceBuffer, Element, Module,
};
pub use error::{Error, FaultKind, Result};
pub use exec::Report;
