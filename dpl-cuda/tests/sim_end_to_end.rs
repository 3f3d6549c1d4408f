//! End to end on the simulated GPU: IR programs (text form) go through the pipeline, the
//! fused function is compiled to PTX and a plan, run on dpl-sim with random inputs of
//! several sizes, and compared with the reference interpreter on the same function:
//! integers exactly, floats bit-exactly for element-wise results, with a relative
//! tolerance where a reduction or scan may be reassociated; errors exactly.

mod support;

use std::sync::OnceLock;

use dpl_core::interp::{self, Value};
use dpl_cuda::sim::SimDriver;
use support::*;

const SIZES: [usize; 7] = [0, 1, 31, 32, 33, 1000, 100_000];

fn driver() -> &'static SimDriver {
    static D: OnceLock<SimDriver> = OnceLock::new();
    D.get_or_init(SimDriver::default)
}

/// Runs `src` on inputs from `gen` for every size and compares with the interpreter;
/// returns how many runs ended in an error (the same error on both sides).
fn check_sizes(
    src: &str,
    sizes: &[usize],
    rel: f64,
    seed: u64,
    generate: impl Fn(&mut Rng, usize) -> Vec<Value>,
) -> usize {
    let c = compiled(src);
    let prog = dpl_cuda::compile(&c.fused).unwrap_or_else(|e| panic!("{e}\n{}", c.fused));
    let mut errors = 0;
    for &n in sizes {
        let mut r = Rng::new(seed ^ (n as u64).wrapping_mul(0x1234_5678_9abc));
        let args = generate(&mut r, n);
        let want = interp::run(&c.fused, args.clone());
        let got = dpl_cuda::run(&prog, driver(), args);
        match (&want, &got) {
            (Ok(w), Ok(g)) => assert!(
                close(w, g, rel),
                "{} at n = {n}:\n want {}\n  got {}\n{}",
                c.fused.name,
                short(w),
                short(g),
                c.fused
            ),
            (Err(w), Err(g)) => {
                errors += 1;
                let w = w
                    .to_run_error(dpl_cuda::UNKNOWN_LOCATION)
                    .unwrap_or_else(|| panic!("interpreter failed: {w}"));
                assert_eq!(&w, g, "{} at n = {n}", c.fused.name);
            }
            _ => panic!(
                "{} at n = {n}: want {want:?}, got {:?}\n{}",
                c.fused.name,
                got.map(|v| short(&v)),
                c.fused
            ),
        }
    }
    errors
}

fn check(src: &str, rel: f64, generate: impl Fn(&mut Rng, usize) -> Vec<Value>) -> usize {
    check_sizes(src, &SIZES, rel, 7, generate)
}

const SAXPY: &str = "
fn saxpy($alpha: f32, $x: [f32], $y: [f32]) -> [f32] {
  $r: [f32] = map(|$a: f32, $b: f32| [] { $t: f32 = mul $alpha, $a; $u: f32 = add $t, $b; $u }, $x, $y)
  $r
}";

#[test]
fn saxpy() {
    check(SAXPY, 0.0, |r, n| {
        vec![Value::F32(1.5), f32s(r, n, 100.0), f32s(r, n, 100.0)]
    });
}

const SUM_I64: &str = "
fn sum_i64($x: [i64]) -> i64 {
  $s: i64 = sum($x)
  $s
}";

#[test]
fn sum_i64() {
    check(SUM_I64, 0.0, |r, n| vec![i64s(r, n, i64::MIN, i64::MAX)]);
}
