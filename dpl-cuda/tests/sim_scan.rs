//! The device-wide scans on the simulator, against plain Rust: the single-pass scan with
//! decoupled look-back (the default) and reduce-then-scan, inclusive and exclusive, for
//! integers, floats, bools and tuples with a non-commutative operator, at sizes around the
//! tile boundaries (0, 1, tile - 1, tile, tile + 1, many tiles, 2^18 + 7), with blocks run
//! by 8 host threads (so blocks wait on each other's status words in every order), at
//! several block sizes; errors inside a scanned element function are the interpreter's.
//! Filters likewise, around their chunks.

mod support;

use std::sync::OnceLock;

use dpl_core::interp::{self, Value};
use dpl_core::ir::Scalar;
use dpl_cuda::sim::SimDriver;
use dpl_cuda::{GpuProgram, Inner, Options, Scan};
use support::programs::source;
use support::*;

fn driver() -> &'static SimDriver {
    static D: OnceLock<SimDriver> = OnceLock::new();
    D.get_or_init(|| {
        let d = SimDriver::default();
        d.device().set_host_threads(8);
        d
    })
}

fn program(src: &str, scan: Scan, block: Option<u32>) -> GpuProgram {
    let c = compiled(src);
    dpl_cuda::compile_with(
        &c.fused,
        &Options {
            inner: Inner::Seq,
            block,
            scan,
        },
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// Sizes around the tiles of `block` threads for elements of leaves `ls` (each thread
/// takes `dpl_cuda::scan_items` consecutive items): around a thread's items, a warp's, a
/// tile, several tiles, and more tiles than a look-back window of 32.
fn sizes(block: u32, ls: &[Scalar]) -> Vec<usize> {
    let items = dpl_cuda::scan_items(block, ls) as usize;
    let t = items * block as usize;
    let many = (60_000 / t).max(40) * t + 1;
    let mut v = vec![
        0,
        1,
        2,
        31,
        32,
        33,
        items - 1,
        items,
        items + 1,
        32 * items + 1,
        t - 1,
        t,
        t + 1,
        2 * t,
        7 * t + 3,
        many,
    ];
    v.sort_unstable();
    v.dedup();
    v
}

const VARIANTS: [(Scan, Option<u32>); 6] = [
    (Scan::LookBack, None),
    (Scan::LookBack, Some(32)),
    (Scan::LookBack, Some(1024)),
    (Scan::ReduceThenScan, None),
    (Scan::ReduceThenScan, Some(32)),
    (Scan::ReduceThenScan, Some(1024)),
];

fn vals(v: &Value) -> Vec<Value> {
    match v {
        Value::Seq(xs) => xs.to_vec(),
        other => panic!("not a sequence: {other:?}"),
    }
}

fn run(p: &GpuProgram, args: Vec<Value>) -> Value {
    dpl_cuda::run(p, driver(), args).unwrap_or_else(|e| panic!("{}: {e}", p.name))
}

#[test]
fn integer_sums_and_exclusive_maxima() {
    for (alg, block) in VARIANTS {
        let scan = program(source("scan_of_map"), alg, block);
        let excl = program(source("exclusive_scan_max"), alg, block);
        for n in sizes(block.unwrap_or(256), &[Scalar::I64]) {
            let mut r = Rng::new(n as u64 + 11);
            let x: Vec<i64> = (0..n).map(|_| r.int_in(-1_000_000..1_000_000)).collect();
            let got = run(&scan, vec![seq(x.clone())]);
            let mut acc = 0i64;
            let want: Vec<i64> = x
                .iter()
                .map(|v| {
                    acc = acc.wrapping_add(2 * v);
                    acc
                })
                .collect();
            assert_eq!(got, seq(want), "{alg:?} {block:?} scan, n = {n}");

            let got = run(&excl, vec![seq(x.clone()), Value::I64(i64::MIN)]);
            let mut acc = i64::MIN;
            let want: Vec<i64> = x
                .iter()
                .map(|v| {
                    let out = acc;
                    acc = acc.max(v - 5);
                    out
                })
                .collect();
            assert_eq!(got, seq(want), "{alg:?} {block:?} exclusive, n = {n}");
        }
    }
}

#[test]
fn tuples_with_a_non_commutative_operator() {
    for (alg, block) in VARIANTS {
        let incl = program(source("affine_scan"), alg, block);
        let excl = program(source("affine_exclusive_scan"), alg, block);
        for n in sizes(block.unwrap_or(256), &[Scalar::I64, Scalar::I64]) {
            let mut r = Rng::new(n as u64 + 5);
            let a: Vec<i64> = (0..n).map(|_| r.int_in(-3..4)).collect();
            let b: Vec<i64> = (0..n).map(|_| r.int_in(-100..100)).collect();
            // (f ; g)(x) = g(f(x)): (fa * ga, fb * ga + gb), wrapping.
            let compose = |f: (i64, i64), g: (i64, i64)| {
                (
                    f.0.wrapping_mul(g.0),
                    f.1.wrapping_mul(g.0).wrapping_add(g.1),
                )
            };
            let pair = |p: (i64, i64)| Value::Tuple(vec![Value::I64(p.0), Value::I64(p.1)]);
            let mut acc: Option<(i64, i64)> = None;
            let want: Vec<Value> = a
                .iter()
                .zip(&b)
                .map(|(&x, &y)| {
                    let next = acc.map_or((x, y), |f| compose(f, (x, y)));
                    acc = Some(next);
                    pair(next)
                })
                .collect();
            let got = run(&incl, vec![seq(a.clone()), seq(b.clone())]);
            assert_eq!(vals(&got), want, "{alg:?} {block:?} affine scan, n = {n}");

            let z = (2, -1);
            let mut acc = z;
            let want: Vec<Value> = a
                .iter()
                .zip(&b)
                .map(|(&x, &y)| {
                    let out = pair(acc);
                    acc = compose(acc, (x, y));
                    out
                })
                .collect();
            let got = run(&excl, vec![seq(a.clone()), seq(b.clone()), pair(z)]);
            assert_eq!(
                vals(&got),
                want,
                "{alg:?} {block:?} affine exclusive, n = {n}"
            );
        }
    }
}

#[test]
fn floats_and_bools() {
    for (alg, block) in VARIANTS {
        let fs = program(source("float_scan"), alg, block);
        let bs = program(source("scan_bool_or"), alg, block);
        let mut ns = sizes(block.unwrap_or(256), &[Scalar::F64]);
        ns.extend(sizes(block.unwrap_or(256), &[Scalar::Bool]));
        ns.sort_unstable();
        ns.dedup();
        for n in ns {
            let mut r = Rng::new(n as u64 + 3);
            let x: Vec<f64> = (0..n).map(|_| r.f64_in(-1000.0, 1000.0)).collect();
            let got = vals(&run(&fs, vec![seq(x.clone())]));
            let mut acc = 0.0f64;
            for (i, (g, v)) in got.iter().zip(&x).enumerate() {
                acc += v.abs().sqrt();
                let Value::F64(g) = g else { panic!("{g:?}") };
                assert!(
                    (g - acc).abs() <= 1e-9 * acc.abs().max(1.0),
                    "{alg:?} {block:?} float scan, n = {n}, at {i}: {g} vs {acc}"
                );
            }
            assert_eq!(got.len(), n);

            // Mostly false, the first true somewhere in the middle.
            let k = r.int_in(0..n as i64 + 1) as usize;
            let x: Vec<i32> = (0..n).map(|i| if i == k { 91 } else { 7 }).collect();
            let got = run(&bs, vec![seq(x)]);
            let want: Vec<bool> = (0..n).map(|i| i >= k).collect();
            assert_eq!(
                got,
                seq(want),
                "{alg:?} {block:?} or-scan, n = {n}, k = {k}"
            );
        }
    }
}

/// A scan of `1000 / x` with zeros somewhere: the error is the interpreter's (the first
/// zero in sequence order), and the kernel launched again in report mode does not hang.
#[test]
fn failures_inside_the_scanned_elements() {
    const SRC: &str = "
fn scan_div($x: [i32]) -> [i32] {
  $m: [i32] = map(|$a: i32| [] { $k: i32 = const 1000; $d: i32 = div $k, $a; $d }, $x)
  $s: [i32] = scan(|$p: i32, $q: i32| [] { $t: i32 = add $p, $q; $t }, $m)
  $s
}";
    let c = compiled(SRC);
    for (alg, block) in VARIANTS {
        let p = program(SRC, alg, block);
        let b = block.unwrap_or(256);
        let t = dpl_cuda::scan_items(b, &[Scalar::I32]) as usize * b as usize;
        for n in [1usize, 3000, 40_000, 2 * t + 5] {
            // The last zeros are in the last (partial) tile.
            let last_tile = n - 1 - (n - 1) % t;
            for zeros in [
                vec![0],
                vec![n - 1],
                vec![n / 2, n / 3, n - 1],
                vec![last_tile, n - 1],
            ] {
                let x: Vec<i32> = (0..n)
                    .map(|i| {
                        if zeros.contains(&i) {
                            0
                        } else {
                            1 + (i % 7) as i32
                        }
                    })
                    .collect();
                let args = vec![seq(x)];
                let case = format!("{alg:?} {block:?}, n = {n}, zeros at {zeros:?}");
                let want = interp::run(&c.fused, args.clone());
                let got = dpl_cuda::run(&p, driver(), args);
                assert!(
                    agree(&want, &got, 0.0, &case),
                    "{case}: a division by zero expected"
                );
            }
        }
    }
}

#[test]
fn a_large_scan_across_many_tiles() {
    let n = (1 << 18) + 7;
    let p = program(source("scan_of_map"), Scan::LookBack, None);
    let mut r = Rng::new(99);
    let x: Vec<i64> = (0..n).map(|_| r.int_in(-50..50)).collect();
    let got = vals(&run(&p, vec![seq(x.clone())]));
    let mut acc = 0i64;
    for (i, (g, v)) in got.iter().zip(&x).enumerate() {
        acc += 2 * v;
        assert_eq!(*g, Value::I64(acc), "at {i}");
    }
    assert_eq!(got.len(), n);
}

/// Filters (a count pass and a scatter pass over chunks of consecutive elements per
/// warp, the chunk offsets scanned in between) against plain Rust at sizes around the
/// chunks (512 elements per warp) and blocks, with none, some and all elements kept, at
/// several block sizes.
#[test]
fn filters_around_chunk_boundaries() {
    let mut ns = vec![0usize, 1, 31, 32, 33, 511, 512, 513, 70_001];
    for warps in [1usize, 8, 32] {
        let b = 512 * warps;
        ns.extend([b - 1, b, b + 1, 3 * b + 7]);
    }
    ns.sort_unstable();
    ns.dedup();
    for block in [None, Some(32), Some(1024)] {
        let p = program(source("filter_of_map"), Scan::LookBack, block);
        let th = program(source("filter_none_or_all"), Scan::LookBack, block);
        let pairs = program(source("filter_pairs"), Scan::LookBack, block);
        for &n in &ns {
            let mut r = Rng::new(n as u64 + 17);
            let x: Vec<i64> = (0..n).map(|_| r.int_in(-1000..1000)).collect();
            let want: Vec<i64> = x.iter().map(|v| 3 * v + 1).filter(|m| m % 2 == 0).collect();
            let got = run(&p, vec![seq(x)]);
            assert_eq!(got, seq(want), "{block:?} filter of map, n = {n}");

            let x: Vec<u32> = (0..n).map(|_| r.int_in(0..100) as u32).collect();
            for t in [0u32, 50, 101] {
                let want: Vec<u32> = x.iter().copied().filter(|&v| v >= t).collect();
                let got = run(&th, vec![seq(x.clone()), Value::U32(t)]);
                assert_eq!(got, seq(want), "{block:?} threshold {t}, n = {n}");
            }

            let a: Vec<i32> = (0..n).map(|_| r.int_in(-5..5) as i32).collect();
            let y: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
            let want: Vec<Value> = a
                .iter()
                .zip(&y)
                .filter(|(a, _)| **a > 0)
                .map(|(&a, &y)| Value::Tuple(vec![Value::I32(a), Value::F32(y)]))
                .collect();
            let got = run(&pairs, vec![seq(a), seq(y)]);
            assert_eq!(vals(&got), want, "{block:?} filter of pairs, n = {n}");
        }
    }
}

/// A filter whose element function (`1000 / a`) and predicate (`100 / (m - 1000)`) can
/// fail: the error is the interpreter's (the element's failure at `i` before the
/// predicate's), also in the last partial chunk, whatever the block size.
#[test]
fn failures_inside_filtered_elements() {
    const SRC: &str = "
fn filter_div($x: [i32]) -> [i32] {
  $m: [i32] = map(|$a: i32| [] { $k: i32 = const 1000; $d: i32 = div $k, $a; $d }, $x)
  $f: [i32] = filter(|$v: i32| [] { $h: i32 = const 100; $t: i32 = const 1000; $w: i32 = sub $v, $t; $q: i32 = div $h, $w; $z: i32 = const 0; $g: bool = gt $q, $z; $g }, $m)
  $f
}";
    let c = compiled(SRC);
    for block in [None, Some(32), Some(1024)] {
        let p = program(SRC, Scan::LookBack, block);
        for n in [1usize, 513, 4097, 40_000] {
            // 0: the element fails; 1: the predicate (1000 / 1 - 1000 = 0).
            for bad in [
                vec![(n - 1, 0)],
                vec![(n - 1, 1)],
                vec![(n / 2, 1), (n - 1, 0)],
                vec![(n / 3, 0), (n / 2, 1)],
            ] {
                let x: Vec<i32> = (0..n)
                    .map(|i| {
                        bad.iter()
                            .find(|b| b.0 == i)
                            .map_or(2 + (i % 5) as i32, |b| b.1)
                    })
                    .collect();
                let args = vec![seq(x)];
                let case = format!("{block:?}, n = {n}, bad {bad:?}");
                let want = interp::run(&c.fused, args.clone());
                let got = dpl_cuda::run(&p, driver(), args);
                assert!(
                    agree(&want, &got, 0.0, &case),
                    "{case}: a division by zero expected"
                );
            }
        }
    }
}
