//! `dpl-cuda`: dpl's GPU backend.
//!
//! [`compile`] turns a fused function (the Soac level of [`dpl_core::ir`], what
//! [`dpl_core::pipeline::compile`] returns as `fused`) into a [`GpuProgram`]: the PTX text
//! of one module (ISA 7.0, `sm_70`, 64-bit addresses) and a [`plan::Plan`] saying what the
//! host does — evaluate scalar statements, check assertions, allocate temporaries sized
//! from lengths, launch kernels, read back scalars and lengths. Both are plain data, so the
//! `#[parallel]` macro can generate them at compile time and embed them as static data.
//!
//! `run` executes a program through a `Driver`: the simulator (`sim::SimDriver`, feature
//! `sim`) or an NVIDIA GPU (`cuda::CudaDriver`, feature `cuda`). Contract violations found
//! on the device (indices out of range, division by zero, duplicate `permute` indices,
//! ...) come back as the same [`dpl_core::run::Error`] the CPU backends report.
//!
//! The crate is in layers, the dependencies pointing one way: the code generator
//! (`codegen`, `ptx`, `math`, `occupancy`; feature `codegen`) and the run time (`runtime`
//! and `driver`; feature `runtime`) share only the program's data ([`GpuProgram`],
//! [`plan`]), the data layout ([`layout`]), the kernels' signatures and the GPU
//! architectures and cubins ([`cubin`]). The `#[parallel]` macro links the code
//! generator; a binary using dpl links only the run time and its drivers.
//!
//! See `src/codegen/README.md` for the kernel designs per combinator, and
//! `src/runtime/README.md` and `src/driver/README.md` for the run time and the drivers.
#![deny(missing_docs)]

mod arch;
#[cfg(feature = "codegen")]
mod codegen;
pub mod cubin;
#[cfg(feature = "runtime")]
pub mod driver;
#[cfg(any(feature = "codegen", feature = "cuda"))]
mod entry;
pub mod layout;
#[cfg(feature = "codegen")]
pub mod occupancy;
pub mod plan;
#[cfg(feature = "codegen")]
mod ptx;
#[cfg(feature = "runtime")]
pub mod runtime;

#[cfg(feature = "codegen")]
pub use codegen::scan_items;
#[cfg(feature = "codegen")]
pub use dpl_core::schedule::Inner;
#[cfg(feature = "cuda")]
pub use driver::cuda;
#[cfg(feature = "sim")]
pub use driver::sim;
#[cfg(feature = "runtime")]
pub use driver::{Driver, LaunchArg};
#[cfg(feature = "runtime")]
pub use runtime::{
    Columns, DeviceNested, DeviceSeq, HostColumns, Input, MatrixStorage, NestedColumns, Output,
    StridedMatrix, UNKNOWN_LOCATION, download, read_columns, run, run_at, run_resident, upload,
    upload_columns,
};

#[cfg(feature = "codegen")]
use std::collections::HashMap;

#[cfg(feature = "codegen")]
use dpl_core::ir::Function;

/// A construct the GPU backend does not compile (yet), or a function whose PTX would be
/// larger than [`MAX_PTX_BYTES`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not supported by the GPU backend: {message}")]
pub struct Unsupported {
    /// What is not supported.
    pub message: String,
    /// `Some` when the function is not compiled because its PTX would exceed
    /// [`MAX_PTX_BYTES`]: the span (index into the function's spans; 0 for none) of the
    /// top-level statement being compiled when the limit was passed. Such a function is a
    /// compile error, where one the backend does not support runs on the CPU instead.
    pub too_large: Option<u32>,
}

/// The most PTX text one function may compile to: 8 MiB. Code generation stops with
/// [`Unsupported::too_large`] as soon as a function's kernels pass it (the `#[parallel]`
/// macro reports it as a compile error at the combinator being compiled), so that a
/// function whose code would explode is an error rather than a compiler running out of
/// memory. Sequences read at several places are shared within kernels (they do not
/// multiply the code), so ordinary functions stay far below: a `sum(map(...))` is about
/// 11 KiB, and 200 of them in one function about 2 MiB.
pub const MAX_PTX_BYTES: usize = 8 << 20;

/// A compiled function: one PTX module and the plan that runs it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GpuProgram {
    /// The function's name.
    pub name: String,
    /// The PTX module (every kernel of the function).
    pub ptx: String,
    /// The kernels' entry names; [`plan::Launch::kernel`] indexes this list.
    pub kernels: Vec<String>,
    /// Per kernel (same order): its block size and why it was chosen.
    pub blocks: Vec<KernelBlock>,
    /// Per kernel (same order): its number of parameters, as its PTX declares them
    /// ([`plan::Plan::verify`] checks each launch against it).
    pub params: Vec<u32>,
    /// The host's part.
    pub plan: plan::Plan,
    /// The module assembled ahead of time (see [`cubin`]): `(compute capability as
    /// 10 * major + minor, cubin)` pairs. Empty from [`compile`]; a driver that finds
    /// none for its device compiles [`GpuProgram::ptx`] instead.
    pub cubins: Vec<(u32, Vec<u8>)>,
}

impl GpuProgram {
    /// The program as bytes (a compact binary encoding), for embedding in a binary: the
    /// `#[parallel]` macro writes them as a byte-string literal and [`GpuProgram::decode`]
    /// reads them back at the first call.
    pub fn encode(&self) -> Vec<u8> {
        postcard::to_allocvec(self).expect("a GpuProgram always serializes")
    }

    /// Reads a program written by [`GpuProgram::encode`]. Fails on bytes that are not such
    /// a program (e.g. written by another version of dpl-cuda).
    pub fn decode(bytes: &[u8]) -> Result<GpuProgram, String> {
        postcard::from_bytes(bytes).map_err(|e| format!("corrupt embedded GPU program: {e}"))
    }

    /// Checks the plan against the program's kernels ([`plan::Plan::verify`]).
    pub fn verify(&self) -> Result<(), plan::PlanError> {
        self.plan.verify(&self.kernels, &self.params)
    }

    /// The PTX text of kernel `i` alone (for inspection and golden tests).
    pub fn kernel_text(&self, i: usize) -> Option<&str> {
        let name = self.kernels.get(i)?;
        let start = self.ptx.find(&format!(".visible .entry {name}("))?;
        let rest = &self.ptx[start..];
        let end = rest.find("\n}\n").map(|e| e + 3).unwrap_or(rest.len());
        Some(&rest[..end])
    }
}

/// The block size of one kernel and the reason for it (also written as a comment above the
/// kernel in the PTX text, so `dpl::inspect!` shows it).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KernelBlock {
    /// Threads per block (the kernel's `.maxntid`, what the plan launches it with).
    pub block: u32,
    /// The ordinal of the top-level combinator the kernel belongs to; the kernels of one
    /// combinator share their block size.
    pub group: u32,
    /// Why this size: `block = N` given, the default, or the occupancy computed from
    /// `ptxas -v` register counts (see [`occupancy`]).
    pub why: String,
}

#[cfg(feature = "codegen")]
/// The module header of every generated PTX text.
pub const PTX_HEADER: &str = ".version 7.0\n.target sm_70\n.address_size 64\n";

#[cfg(feature = "codegen")]
/// The device-wide scan algorithm (`scan`, `exclusive_scan`; [`Options::scan`]) of
/// integers, bools and their tuples. Scans of floats (an element with an `f32` or `f64`
/// leaf) follow dpl's one scan order whatever is asked for (a warp per tile of 2048, the
/// tile totals scanned by the same order), so their bits are those of every other place.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scan {
    /// One pass with decoupled look-back: each element is read and written once.
    #[default]
    LookBack,
    /// Three kernels: tile totals, a scan of the totals by one block, each tile again (the
    /// elements are read twice, but no block ever waits for another).
    ReduceThenScan,
}

#[cfg(feature = "codegen")]
/// Compilation options.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// The schedule of inner nesting levels.
    pub inner: Inner,
    /// Threads per block of every kernel (`#[parallel(block = N)]`): a multiple of 32
    /// from 32 to 1024 ([`check_block`]). `None`: chosen per combinator (see
    /// [`occupancy`]).
    pub block: Option<u32>,
    /// The device-wide scan algorithm.
    pub scan: Scan,
}

#[cfg(feature = "codegen")]
/// Checks a block size given by the user: a multiple of 32 (whole warps: the block-level
/// combinations work warp by warp) from 32 to 1024 (the most threads a block can have).
pub fn check_block(block: u32) -> Result<(), String> {
    if !(32..=1024).contains(&block) || !block.is_multiple_of(32) {
        return Err(format!(
            "block size {block}: threads per block must be a multiple of 32 from 32 to 1024"
        ));
    }
    Ok(())
}

#[cfg(feature = "codegen")]
/// Compiles a fused function (Soac level) for the GPU with the given options.
///
/// The inner schedule applies to top-level `map`s whose elements are scalars or tuples:
/// with [`Inner::Warp`] / [`Inner::Block`] each element gets a warp / a thread block and
/// its inner reductions are split across the group's threads; [`Inner::Auto`] compiles
/// both a thread and a warp per element and the plan picks one per call from the shape of
/// the rows read ([`plan::warp_per_row`]). Other combinators keep the default schedule.
///
/// Fails with [`Unsupported`] for what the backend cannot compile (see [`compile`]).
pub fn compile_with(f: &Function, opts: &Options) -> Result<GpuProgram, Unsupported> {
    codegen::generate(f, opts, &HashMap::new(), &HashMap::new())
}

#[cfg(feature = "codegen")]
/// [`compile_with`], then, unless `opts.block` fixes the block size, the block size of
/// each combinator's kernels chosen from their register counts: the module is assembled
/// with `ptxas -v` (at `ptxas`) for each of `archs`, and [`occupancy::choose`] picks, for
/// the most register-hungry kernel of each combinator, the size with the best occupancy
/// on the worst architecture. The module is then generated again with those sizes; the
/// reasons are in [`GpuProgram::blocks`] and in comments of the PTX.
///
/// Fails with the reason when the function is not supported or `ptxas` fails.
pub fn compile_tuned(
    f: &Function,
    opts: &Options,
    ptxas: &std::path::Path,
    archs: &[cubin::Arch],
) -> Result<GpuProgram, String> {
    let first = compile_with(f, opts).map_err(|e| e.to_string())?;
    if opts.block.is_some() || archs.is_empty() {
        return Ok(first);
    }
    // Per combinator: per architecture, the largest register count and shared memory of
    // its kernels.
    let mut needs: HashMap<u32, Vec<(cubin::Arch, u32, u32)>> = HashMap::new();
    for a in archs {
        let report = cubin::resources(ptxas, &first.ptx, &a.to_string())?;
        for (i, name) in first.kernels.iter().enumerate() {
            let Some((_, regs, smem)) = report.iter().find(|(k, _, _)| k == name) else {
                continue;
            };
            let group = first.blocks[i].group;
            let v = needs.entry(group).or_default();
            match v.iter_mut().find(|(x, _, _)| x == a) {
                Some(e) => {
                    e.1 = e.1.max(*regs);
                    e.2 = e.2.max(*smem);
                }
                None => v.push((*a, *regs, *smem)),
            }
        }
    }
    let mut tuned = HashMap::new();
    let mut whys = HashMap::new();
    for (i, kb) in first.blocks.iter().enumerate() {
        if tuned.contains_key(&kb.group) {
            continue;
        }
        let default = first.blocks[i].block;
        let (b, why) = occupancy::choose(needs.get(&kb.group).map_or(&[][..], |v| v), default);
        let why = format!("chosen from ptxas register counts at {default} threads: {why}");
        tuned.insert(kb.group, b);
        whys.insert(kb.group, why);
    }
    codegen::generate(f, opts, &tuned, &whys).map_err(|e| e.to_string())
}

#[cfg(feature = "codegen")]
/// Compiles a fused function (Soac level) for the GPU.
///
/// With the default options (a thread per element, inner levels sequential). Fails with
/// [`Unsupported`] for what the backend cannot compile (see the crate README): more than
/// two levels of nesting in data, a `scatter`/`scatter_reduce`/`permute` inside an
/// element function read again when its length is not known before the launch,
/// combinators over elements that are sequences other than `map` and `filter`, and
/// Prim-level functions (run [`dpl_core::pipeline::compile`] first); and, with
/// [`Unsupported::too_large`] set, a function whose PTX would exceed [`MAX_PTX_BYTES`].
pub fn compile(f: &Function) -> Result<GpuProgram, Unsupported> {
    compile_with(f, &Options::default())
}
