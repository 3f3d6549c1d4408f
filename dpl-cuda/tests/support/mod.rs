//! Shared helpers of the dpl-cuda tests: programs written in the IR text form with named
//! variables, compiled through the pipeline; the deterministic generator (dpl-testkit's);
//! comparison of results with the reference interpreter; the NVIDIA tools folder.
#![allow(dead_code)]

pub mod programs;

use dpl_core::interp::Value;
use dpl_core::ir::Function;
use dpl_core::pipeline::{Compiled, compile};
use dpl_core::text::parse_named;

/// Parses a program written with `$name` variables ([`parse_named`]).
pub fn ir(src: &str) -> Function {
    parse_named(src).unwrap_or_else(|e| panic!("{e}\n{src}")).0
}

/// Compiles a program, panicking with the diagnostics if the pipeline rejects it.
pub fn compiled(src: &str) -> Compiled {
    compile(ir(src)).unwrap_or_else(|errors| {
        let msgs: Vec<String> = errors.iter().map(|d| format!("{d:?}")).collect();
        panic!("pipeline failed:\n{}\n{src}", msgs.join("\n"))
    })
}

/// The folder of NVIDIA's tools (`ptxas`, `cuobjdump`) named by `DPL_PTX_TOOLS`, or `None`
/// (skip the test, with a message) when it is unset outside CI; on CI it must be set.
pub fn ptx_tools() -> Option<std::path::PathBuf> {
    match std::env::var_os("DPL_PTX_TOOLS") {
        Some(dir) => Some(std::path::PathBuf::from(dir)),
        None => {
            assert!(
                std::env::var_os("CI").is_none(),
                "DPL_PTX_TOOLS is not set on CI: run `cargo xtask ptx-tools` and export the folder it prints"
            );
            eprintln!(
                "skipped: DPL_PTX_TOOLS is not set (`cargo xtask ptx-tools` prints the folder)"
            );
            None
        }
    }
}

/// The deterministic generator of the inputs.
pub use dpl_testkit::SplitMix64 as Rng;

/// `n` rows of lengths in `0..max_len` (about one in five empty), elements from `item`.
pub fn ragged(
    r: &mut Rng,
    n: usize,
    max_len: i64,
    mut item: impl FnMut(&mut Rng) -> Value,
) -> Value {
    let rows = (0..n)
        .map(|_| {
            let len = if r.u64().is_multiple_of(5) {
                0
            } else {
                r.int_in(0..max_len) as usize
            };
            Value::seq((0..len).map(|_| item(r)).collect())
        })
        .collect();
    Value::seq(rows)
}

pub fn seq<T: Into<Value>>(xs: Vec<T>) -> Value {
    Value::seq(xs.into_iter().map(Into::into).collect())
}

pub fn i64s(r: &mut Rng, n: usize, lo: i64, hi: i64) -> Value {
    seq((0..n).map(|_| r.int_in(lo..hi)).collect::<Vec<i64>>())
}

pub fn i32s(r: &mut Rng, n: usize, lo: i64, hi: i64) -> Value {
    seq((0..n)
        .map(|_| r.int_in(lo..hi) as i32)
        .collect::<Vec<i32>>())
}

pub fn u32s(r: &mut Rng, n: usize, lo: i64, hi: i64) -> Value {
    seq((0..n)
        .map(|_| r.int_in(lo..hi) as u32)
        .collect::<Vec<u32>>())
}

pub fn f32s(r: &mut Rng, n: usize, scale: f64) -> Value {
    seq((0..n)
        .map(|_| r.f64_in(-scale, scale) as f32)
        .collect::<Vec<f32>>())
}

/// `n` random `f16` values in `[-scale, scale)` (drawn as `f32`, rounded once).
pub fn f16s(r: &mut Rng, n: usize, scale: f32) -> Value {
    Value::seq(
        (0..n)
            .map(|_| Value::F16(dpl_core::float16::f16::from_f32(r.f32_in(-scale, scale))))
            .collect(),
    )
}

pub fn f64s(r: &mut Rng, n: usize, scale: f64) -> Value {
    seq((0..n)
        .map(|_| r.f64_in(-scale, scale))
        .collect::<Vec<f64>>())
}

pub fn usizes(xs: Vec<usize>) -> Value {
    seq(xs)
}

/// Indices in `0..len` (empty when `len` is 0).
pub fn indices(r: &mut Rng, n: usize, len: usize) -> Value {
    if len == 0 {
        return usizes(Vec::new());
    }
    usizes((0..n).map(|_| (r.u64() % len as u64) as usize).collect())
}

/// A value's text, cut short.
pub fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 400 {
        format!("{}...", &s[..400])
    } else {
        s
    }
}

/// The first element where two sequences differ (for messages).
pub fn first_diff(a: &Value, b: &Value, rel: f64) -> String {
    match (a, b) {
        (Value::Seq(xs), Value::Seq(ys)) => {
            for (i, (x, y)) in xs.iter().zip(ys.iter()).enumerate() {
                if !x.close_to(y, rel) {
                    return format!("first difference at {i}: want {x}, got {y}");
                }
            }
            format!("lengths {} vs {}", xs.len(), ys.len())
        }
        _ => String::new(),
    }
}

/// Checks a simulator run against the interpreter's: equal values (within `rel`) or the
/// same error; panics naming `case` otherwise. Returns whether both failed.
pub fn agree(
    want: &Result<Value, dpl_core::interp::Error>,
    got: &Result<Value, dpl_core::run::Error>,
    rel: f64,
    case: &str,
) -> bool {
    match (want, got) {
        (Ok(w), Ok(g)) => {
            assert!(
                w.close_to(g, rel),
                "{case}: {}\n want {}\n  got {}",
                first_diff(w, g, rel),
                short(w),
                short(g),
            );
            false
        }
        (Err(w), Err(g)) => {
            let w = w
                .to_run_error(dpl_cuda::UNKNOWN_LOCATION)
                .unwrap_or_else(|| panic!("interpreter failed: {w}"));
            assert_eq!(&w, g, "{case}");
            true
        }
        _ => panic!(
            "{case}: want {:?}, got {:?}",
            want.as_ref().map(short),
            got.as_ref().map(short)
        ),
    }
}
