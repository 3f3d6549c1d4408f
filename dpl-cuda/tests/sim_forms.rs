//! Forms the GPU backend compiles beyond the common ones, on the simulated GPU against the
//! reference interpreter: top-level `scatter_reduce` of `bool`s (atomics on the byte's
//! 32-bit word) and of tuples (one atomic per leaf when the operator is component-wise,
//! else a lock per destination slot). Inputs: 0, 1, 31, 32, 33, 1000 and 20 000 elements
//! into destinations of 1 slot (every index equal), a few slots (many collisions), lengths
//! that are not a multiple of 4 (bytes sharing a word) and as many slots as elements; an
//! index out of range gives the interpreter's error.

mod support;

use std::sync::OnceLock;

use dpl_core::interp::{self, Value};
use dpl_cuda::sim::SimDriver;
use support::forms::*;
use support::*;

const SIZES: [usize; 7] = [0, 1, 31, 32, 33, 1000, 20_000];

/// Destination lengths: one slot, a word and a bit, a few, many.
const DESTS: [usize; 5] = [1, 5, 7, 64, 1000];

fn driver() -> &'static SimDriver {
    static D: OnceLock<SimDriver> = OnceLock::new();
    D.get_or_init(|| {
        let d = SimDriver::default();
        d.device().set_host_threads(4);
        d
    })
}

/// Compiles `src`, checks its PTX with `ptx_ok`, then runs it on inputs from `gen(rng,
/// n, dst_len)` for every size and destination length and compares with the interpreter
/// (floats within `rel`); returns how many runs failed (with the interpreter's error).
fn check(
    src: &str,
    rel: f64,
    ptx_ok: impl Fn(&str) -> bool,
    generate: impl Fn(&mut Rng, usize, usize) -> Vec<Value>,
) -> usize {
    let c = compiled(src);
    let prog = dpl_cuda::compile(&c.fused).unwrap_or_else(|e| panic!("{e}\n{}", c.fused));
    assert!(
        ptx_ok(&prog.ptx),
        "unexpected PTX for {}:\n{}",
        c.fused.name,
        prog.ptx
    );
    let mut errors = 0;
    for &n in &SIZES {
        for &d in &DESTS {
            let mut r = Rng::new((n as u64) << 20 ^ d as u64);
            let args = generate(&mut r, n, d);
            let want = interp::run(&c.fused, args.clone());
            let got = dpl_cuda::run(&prog, driver(), args);
            match (&want, &got) {
                (Ok(w), Ok(g)) => assert!(
                    close(w, g, rel),
                    "{} at n = {n}, {d} slots: {}\n want {}\n  got {}",
                    c.fused.name,
                    first_diff(w, g, rel),
                    short(w),
                    short(g),
                ),
                (Err(w), Err(g)) => {
                    errors += 1;
                    let w = w
                        .to_run_error(dpl_cuda::UNKNOWN_LOCATION)
                        .unwrap_or_else(|| panic!("interpreter failed: {w}"));
                    assert_eq!(&w, g, "{} at n = {n}, {d} slots", c.fused.name);
                }
                _ => panic!(
                    "{} at n = {n}, {d} slots: want {want:?}, got {:?}",
                    c.fused.name,
                    got.map(|v| short(&v))
                ),
            }
        }
    }
    errors
}

fn bools(r: &mut Rng, n: usize, one_in: u64) -> Value {
    seq((0..n)
        .map(|_| r.next() % one_in == 0)
        .collect::<Vec<bool>>())
}

/// Indices into `d` slots; with `d == 1` all equal.
fn slots(r: &mut Rng, n: usize, d: usize) -> Value {
    indices(r, n, d)
}

#[test]
fn scatter_reduce_of_bools() {
    // or/and/xor are word atomics on the byte; `==` (xnor) a CAS loop on the word.
    let ptx_ok = |p: &str| {
        p.contains("red.global.or.b32")
            && p.contains("red.global.and.b32")
            && p.contains("red.global.xor.b32")
            && p.contains("atom.global.cas.b32")
    };
    for one_in in [1, 2, 50] {
        check(BOOL_OPS, 0.0, ptx_ok, |r, n, d| {
            vec![bools(r, n, one_in), slots(r, n, d), bools(r, d, 2)]
        });
    }
}

fn triples(r: &mut Rng, n: usize) -> Value {
    seq((0..n)
        .map(|_| {
            let a = r.range(i64::MIN, i64::MAX);
            let b = r.range(0, u32::MAX as i64 + 1) as u32;
            let c = r.next() % 8 != 0;
            Value::Tuple(vec![a.into(), Value::Tuple(vec![b.into(), c.into()])])
        })
        .collect::<Vec<Value>>())
}

#[test]
fn scatter_reduce_of_tuples_component_wise() {
    // One atomic per leaf, no lock.
    let ptx_ok = |p: &str| {
        p.contains("red.global.add.u64")
            && p.contains("red.global.max.u32")
            && p.contains("red.global.and.b32")
            && !p.contains("atom.acquire")
    };
    check(PAIR_LEAFWISE, 0.0, ptx_ok, |r, n, d| {
        vec![triples(r, n), slots(r, n, d), triples(r, d)]
    });
}

fn sums(r: &mut Rng, n: usize) -> Value {
    seq((0..n)
        .map(|_| Value::Tuple(vec![r.float(1e3).into(), (r.next() % 100).into()]))
        .collect::<Vec<Value>>())
}

#[test]
fn scatter_reduce_of_float_sums_and_counts() {
    // Float atomics add in any order, as on the CPU: compared with a tolerance.
    let ptx_ok = |p: &str| p.contains("red.global.add.f64") && !p.contains("atom.acquire");
    let errors = check(SUM_AND_COUNT, 1e-10, ptx_ok, |r, n, d| {
        let mut idx: Vec<i32> = (0..n).map(|_| (r.next() % d as u64) as i32).collect();
        // A negative index at the end of the larger inputs: out of range.
        if n >= 1000 {
            idx[n - 1] = -2;
        }
        vec![sums(r, n), seq(idx), sums(r, d)]
    });
    assert_eq!(errors, 2 * DESTS.len());
}

#[test]
fn scatter_reduce_of_tuples_under_locks() {
    // A general operator on pairs: the slot's lock. The operator (smallest value, then
    // smallest position) is associative and commutative, so the result is exact.
    let ptx_ok = |p: &str| {
        p.contains("atom.acquire.gpu.global.cas.b32") && p.contains("st.release.gpu.global.u32")
    };
    let errors = check(ARGMIN_BY_SLOT, 0.0, ptx_ok, |r, n, d| {
        // Few distinct values, so ties are common.
        let v = (0..n)
            .map(|i| Value::Tuple(vec![((r.next() % 5) as f64).into(), i.into()]))
            .collect::<Vec<_>>();
        let mut idx: Vec<usize> = (0..n).map(|_| (r.next() % d as u64) as usize).collect();
        if n == 33 {
            idx[7] = d + 3;
            idx[20] = d;
        }
        let dst = (0..d)
            .map(|_| Value::Tuple(vec![4.5f64.into(), usize::MAX.into()]))
            .collect::<Vec<_>>();
        vec![seq(v), seq(idx), seq(dst)]
    });
    assert_eq!(errors, DESTS.len());
}

#[test]
fn scatter_reduce_of_tuples_with_bools_under_locks() {
    // `a + b + 1` is not component-wise atomic: a lock, with byte-sized `bool` leaves
    // read and written inside it.
    let ptx_ok = |p: &str| p.contains("atom.acquire.gpu.global.cas.b32");
    check(BOOL_PAIRS, 0.0, ptx_ok, |r, n, d| {
        let pairs = |r: &mut Rng, n: usize| {
            seq((0..n)
                .map(|_| {
                    Value::Tuple(vec![
                        (r.next() % 3 != 0).into(),
                        (r.range(-50, 50) as i32).into(),
                    ])
                })
                .collect::<Vec<_>>())
        };
        vec![pairs(r, n), slots(r, n, d), pairs(r, d)]
    });
}
