//! The device-wide scans on the simulator, against plain Rust: the single-pass scan with
//! decoupled look-back (the default) and reduce-then-scan, inclusive and exclusive, for
//! integers, floats, bools and tuples with a non-commutative operator, at sizes around the
//! tile boundaries (0, 1, tile - 1, tile, tile + 1, many tiles, 2^18 + 7), with blocks run
//! by 8 host threads (so blocks wait on each other's status words in every order), at
//! several block sizes; errors inside a scanned element function are the interpreter's.
//! Float scans (f32, f64, tuples with floats, staged in shared memory or read in place)
//! give the bits of dpl's scan order, checked against an oracle written here from the
//! order's definition, at lengths around the runs, tiles and levels. Filters likewise,
//! around their chunks.

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

/// dpl's scan order, written from its definition (the tiles of 2048, the lanes' runs of
/// 64 consecutive values, the Kogge-Stone scan of the lane totals, the carries from the
/// scan of the tile totals by the same order): the inclusive scan of `xs` with the start
/// value `v`. Independent of dpl's code, for the bit-for-bit checks of the float scans.
mod scan_order {
    const TILE: usize = 2048;
    const LANES: usize = 32;
    const RUN: usize = TILE / LANES;

    fn combine<T: Copy>(a: Option<T>, b: Option<T>, op: &impl Fn(T, T) -> T) -> Option<T> {
        match (a, b) {
            (Some(a), Some(b)) => Some(op(a, b)),
            (a, None) => a,
            (None, b) => b,
        }
    }

    /// The inclusive scan of `xs` with the optional start value `v`.
    pub fn inclusive<T: Copy>(xs: &[T], v: Option<T>, op: &impl Fn(T, T) -> T) -> Vec<T> {
        let tiles: Vec<&[T]> = xs.chunks(TILE).collect();
        // Per tile: the lanes' running folds and the Kogge-Stone scan of their totals.
        let mut folds = Vec::new();
        let mut scans = Vec::new();
        for tile in &tiles {
            let runs: Vec<Vec<T>> = tile
                .chunks(RUN)
                .map(|run| {
                    let mut l = Vec::with_capacity(run.len());
                    for (i, &x) in run.iter().enumerate() {
                        l.push(if i == 0 { x } else { op(l[i - 1], x) });
                    }
                    l
                })
                .collect();
            let c = runs.len();
            let mut s: Vec<T> = runs.iter().map(|l| *l.last().unwrap()).collect();
            let mut d = 1;
            while d < LANES {
                let before = s.clone();
                for j in (d..c).rev() {
                    s[j] = op(before[j - d], before[j]);
                }
                d *= 2;
            }
            folds.push(runs);
            scans.push(s);
        }
        let totals: Vec<T> = scans.iter().map(|s| *s.last().unwrap()).collect();
        let upper = if totals.len() >= 2 {
            inclusive(&totals, v, op)
        } else {
            Vec::new()
        };
        let mut out = Vec::with_capacity(xs.len());
        for (b, (runs, s)) in folds.iter().zip(&scans).enumerate() {
            let carry = if b == 0 { v } else { Some(upper[b - 1]) };
            for (j, run) in runs.iter().enumerate() {
                let k = combine(carry, if j == 0 { None } else { Some(s[j - 1]) }, op);
                for &l in run {
                    out.push(combine(k, Some(l), op).unwrap());
                }
            }
        }
        out
    }

    /// The exclusive scan of `xs` from `v`: `v`, then the inclusive scan with `v` of all
    /// but the last value.
    pub fn exclusive<T: Copy>(xs: &[T], v: T, op: &impl Fn(T, T) -> T) -> Vec<T> {
        if xs.is_empty() {
            return Vec::new();
        }
        let mut out = vec![v];
        out.extend(inclusive(&xs[..xs.len() - 1], Some(v), op));
        out
    }
}

/// Lengths around the lanes' runs, the tiles and the levels of the scan order.
const ORDER_SIZES: [usize; 14] = [
    0,
    1,
    2,
    31,
    32,
    33,
    63,
    64,
    65,
    2047,
    2048,
    2049,
    4096 + 17,
    100 * 2048 + 999,
];

const F64_SCANS: &str = "
fn f64_scan($x: [f64]) -> [f64] {
  $m: [f64] = map(|$a: f64| [] { $h: f64 = const 1.5; $t: f64 = mul $a, $h; $t }, $x)
  $s: [f64] = scan(|$p: f64, $q: f64| [] { $u: f64 = add $p, $q; $u }, $m)
  $s
}
fn f64_exclusive_scan($x: [f64], $z: f64) -> [f64] {
  $m: [f64] = map(|$a: f64| [] { $h: f64 = const 1.5; $t: f64 = mul $a, $h; $t }, $x)
  $s: [f64] = exclusive_scan(|$p: f64, $q: f64| [] { $u: f64 = add $p, $q; $u }, $m, $z)
  $s
}";

const F32_SCANS: &str = "
fn f32_scan($x: [f32]) -> [f32] {
  $m: [f32] = map(|$a: f32| [] { $h: f32 = const 1.5; $t: f32 = mul $a, $h; $t }, $x)
  $s: [f32] = scan(|$p: f32, $q: f32| [] { $u: f32 = add $p, $q; $u }, $m)
  $s
}
fn f32_exclusive_scan($x: [f32], $z: f32) -> [f32] {
  $m: [f32] = map(|$a: f32| [] { $h: f32 = const 1.5; $t: f32 = mul $a, $h; $t }, $x)
  $s: [f32] = exclusive_scan(|$p: f32, $q: f32| [] { $u: f32 = add $p, $q; $u }, $m, $z)
  $s
}";

/// Affine maps `x -> a x + b` composed in order (not commutative), on floats.
const AFFINE_F64: &str = "
fn affine_f64($a: [f64], $b: [f32], $z: (f64, f32)) -> [(f64, f32)] {
  $p: [(f64, f32)] = zip($a, $b)
  $s: [(f64, f32)] = exclusive_scan(|$f: (f64, f32), $g: (f64, f32)| [] {
    $fa: f64 = $f.0; $fb: f32 = $f.1; $ga: f64 = $g.0; $gb: f32 = $g.1
    $ra: f64 = mul $fa, $ga
    $gaf: f32 = cast $ga as f32
    $t: f32 = mul $fb, $gaf
    $rb: f32 = add $t, $gb
    $r: (f64, f32) = tuple($ra, $rb)
    $r
  }, $p, $z)
  $s
}";

/// The program named `name` of the source `src` (several functions).
fn program_named(src: &str, name: &str, scan: Scan) -> GpuProgram {
    let start = src
        .find(&format!("fn {name}("))
        .unwrap_or_else(|| panic!("no {name}"));
    let end = src[start + 1..]
        .find("\nfn ")
        .map_or(src.len(), |e| start + 1 + e);
    program(&src[start..end], scan, None)
}

fn f64_bits(v: &Value) -> Vec<u64> {
    vals(v)
        .iter()
        .map(|x| match x {
            Value::F64(f) => f.to_bits(),
            other => panic!("not an f64: {other:?}"),
        })
        .collect()
}

fn f32_bits(v: &Value) -> Vec<u32> {
    vals(v)
        .iter()
        .map(|x| match x {
            Value::F32(f) => f.to_bits(),
            other => panic!("not an f32: {other:?}"),
        })
        .collect()
}

/// Float scans and exclusive scans give the bits of dpl's scan order (the oracle above),
/// whatever scan algorithm is asked for, at lengths around the runs, tiles and levels.
#[test]
fn float_scans_follow_the_scan_order_bit_for_bit() {
    let add64 = |a: f64, b: f64| a + b;
    let add32 = |a: f32, b: f32| a + b;
    for alg in [Scan::LookBack, Scan::ReduceThenScan] {
        let s64 = program_named(F64_SCANS, "f64_scan", alg);
        let e64 = program_named(F64_SCANS, "f64_exclusive_scan", alg);
        let s32 = program_named(F32_SCANS, "f32_scan", alg);
        let e32 = program_named(F32_SCANS, "f32_exclusive_scan", alg);
        for n in ORDER_SIZES {
            let mut r = Rng::new(n as u64 + 77);
            // Magnitudes spread over many binades, so the order shows in the bits.
            let x: Vec<f64> = (0..n)
                .map(|_| r.f64_in(-1.0, 1.0) * 10f64.powi(r.int_in(-6..7) as i32))
                .collect();
            let m64: Vec<f64> = x.iter().map(|a| a * 1.5).collect();
            let want: Vec<u64> = scan_order::inclusive(&m64, None, &add64)
                .iter()
                .map(|f| f.to_bits())
                .collect();
            let got = f64_bits(&run(&s64, vec![seq(x.clone())]));
            assert!(got == want, "{alg:?} f64 scan, n = {n}");
            let z = 0.1f64;
            let want: Vec<u64> = scan_order::exclusive(&m64, z, &add64)
                .iter()
                .map(|f| f.to_bits())
                .collect();
            let got = f64_bits(&run(&e64, vec![seq(x.clone()), Value::F64(z)]));
            assert!(got == want, "{alg:?} f64 exclusive scan, n = {n}");

            let x32: Vec<f32> = x.iter().map(|&a| a as f32).collect();
            let m32: Vec<f32> = x32.iter().map(|a| a * 1.5).collect();
            let want: Vec<u32> = scan_order::inclusive(&m32, None, &add32)
                .iter()
                .map(|f| f.to_bits())
                .collect();
            let got = f32_bits(&run(&s32, vec![seq(x32.clone())]));
            assert!(got == want, "{alg:?} f32 scan, n = {n}");
            let z = -0.3f32;
            let want: Vec<u32> = scan_order::exclusive(&m32, z, &add32)
                .iter()
                .map(|f| f.to_bits())
                .collect();
            let got = f32_bits(&run(&e32, vec![seq(x32), Value::F32(z)]));
            assert!(got == want, "{alg:?} f32 exclusive scan, n = {n}");
        }
    }
}

/// A tuple of floats with a non-commutative operator (composing affine maps): the bits
/// of the scan order, each operand from lower indices first.
#[test]
fn a_float_tuple_scan_follows_the_scan_order() {
    let p = program(AFFINE_F64, Scan::LookBack, None);
    let compose = |f: (f64, f32), g: (f64, f32)| (f.0 * g.0, f.1 * (g.0 as f32) + g.1);
    for n in ORDER_SIZES {
        let mut r = Rng::new(n as u64 + 5);
        let a: Vec<f64> = (0..n).map(|_| r.f64_in(0.999, 1.001)).collect();
        let b: Vec<f32> = (0..n).map(|_| r.f64_in(-1.0, 1.0) as f32).collect();
        let z = (1.25f64, 0.5f32);
        let xs: Vec<(f64, f32)> = a.iter().copied().zip(b.iter().copied()).collect();
        let want = scan_order::exclusive(&xs, z, &compose);
        let got = vals(&run(
            &p,
            vec![
                seq(a),
                seq(b),
                Value::Tuple(vec![Value::F64(z.0), Value::F32(z.1)]),
            ],
        ));
        assert_eq!(got.len(), want.len(), "n = {n}");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            let Value::Tuple(t) = g else { panic!("{g:?}") };
            let (Value::F64(x), Value::F32(y)) = (&t[0], &t[1]) else {
                panic!("{g:?}")
            };
            assert!(
                x.to_bits() == w.0.to_bits() && y.to_bits() == w.1.to_bits(),
                "n = {n}, at {i}: {g:?} vs {w:?}"
            );
        }
    }
}

/// More than 2048 tiles: the tile totals are scanned by the order over two levels.
#[test]
fn a_float_scan_over_three_levels() {
    let n = 2048 * 2048 + 5;
    let p = program_named(F32_SCANS, "f32_exclusive_scan", Scan::LookBack);
    let mut r = Rng::new(4);
    let x: Vec<f32> = (0..n).map(|_| r.f64_in(-1.0, 1.0) as f32).collect();
    let m: Vec<f32> = x.iter().map(|a| a * 1.5).collect();
    let z = 3.0f32;
    let want: Vec<u32> = scan_order::exclusive(&m, z, &|a: f32, b: f32| a + b)
        .iter()
        .map(|f| f.to_bits())
        .collect();
    let got = f32_bits(&run(&p, vec![seq(x), Value::F32(z)]));
    assert!(got == want, "n = {n}");
}

/// A tuple of three `f64`s, too wide to stage a tile in shared memory: each lane reads
/// its run in place. Inclusive and exclusive, with a non-commutative operator.
const WIDE: &str = "
fn wide_scan($a: [f64]) -> [(f64, f64, f64)] {
  $p: [(f64, f64, f64)] = map(|$i: f64| [] { $one: f64 = const 1.0; $d: f64 = sub $i, $one; $th: f64 = const 1000.0; $j: f64 = mul $d, $th; $h: f64 = const 0.5; $k: f64 = mul $j, $h; $e: (f64, f64, f64) = tuple($i, $j, $k); $e }, $a)
  $s: [(f64, f64, f64)] = scan(|$f: (f64, f64, f64), $g: (f64, f64, f64)| [] {
    $fa: f64 = $f.0; $fb: f64 = $f.1; $fc: f64 = $f.2; $ga: f64 = $g.0; $gb: f64 = $g.1; $gc: f64 = $g.2
    $ra: f64 = mul $fa, $ga
    $t: f64 = mul $fb, $ga
    $rb: f64 = add $t, $gb
    $rc: f64 = add $fc, $gc
    $o: (f64, f64, f64) = tuple($ra, $rb, $rc)
    $o
  }, $p)
  $s
}
fn wide_exclusive_scan($a: [f64], $z: (f64, f64, f64)) -> [(f64, f64, f64)] {
  $p: [(f64, f64, f64)] = map(|$i: f64| [] { $one: f64 = const 1.0; $d: f64 = sub $i, $one; $th: f64 = const 1000.0; $j: f64 = mul $d, $th; $h: f64 = const 0.5; $k: f64 = mul $j, $h; $e: (f64, f64, f64) = tuple($i, $j, $k); $e }, $a)
  $s: [(f64, f64, f64)] = exclusive_scan(|$f: (f64, f64, f64), $g: (f64, f64, f64)| [] {
    $fa: f64 = $f.0; $fb: f64 = $f.1; $fc: f64 = $f.2; $ga: f64 = $g.0; $gb: f64 = $g.1; $gc: f64 = $g.2
    $ra: f64 = mul $fa, $ga
    $t: f64 = mul $fb, $ga
    $rb: f64 = add $t, $gb
    $rc: f64 = add $fc, $gc
    $o: (f64, f64, f64) = tuple($ra, $rb, $rc)
    $o
  }, $p, $z)
  $s
}";

type F3 = (f64, f64, f64);

fn f3_bits(v: &Value) -> Vec<[u64; 3]> {
    vals(v)
        .iter()
        .map(|x| match x {
            Value::Tuple(t) => match &t[..] {
                [Value::F64(a), Value::F64(b), Value::F64(c)] => {
                    [a.to_bits(), b.to_bits(), c.to_bits()]
                }
                _ => panic!("{x:?}"),
            },
            other => panic!("not a tuple: {other:?}"),
        })
        .collect()
}

#[test]
fn a_wide_float_tuple_scan_follows_the_scan_order() {
    let incl = program_named(WIDE, "wide_scan", Scan::ReduceThenScan);
    let excl = program_named(WIDE, "wide_exclusive_scan", Scan::LookBack);
    let op = |f: F3, g: F3| (f.0 * g.0, f.1 * g.0 + g.1, f.2 + g.2);
    let bits = |xs: Vec<F3>| -> Vec<[u64; 3]> {
        xs.iter()
            .map(|t| [t.0.to_bits(), t.1.to_bits(), t.2.to_bits()])
            .collect()
    };
    for n in ORDER_SIZES {
        let mut r = Rng::new(n as u64 + 9);
        let a: Vec<f64> = (0..n).map(|_| r.f64_in(0.999, 1.001)).collect();
        let xs: Vec<F3> = a
            .iter()
            .map(|&i| {
                let j = (i - 1.0) * 1000.0;
                (i, j, j * 0.5)
            })
            .collect();
        let got = f3_bits(&run(&incl, vec![seq(a.clone())]));
        assert!(
            got == bits(scan_order::inclusive(&xs, None, &op)),
            "scan, n = {n}"
        );
        let z = (0.75, -2.0, 1.0e-3);
        let zv = Value::Tuple(vec![Value::F64(z.0), Value::F64(z.1), Value::F64(z.2)]);
        let got = f3_bits(&run(&excl, vec![seq(a), zv]));
        assert!(
            got == bits(scan_order::exclusive(&xs, z, &op)),
            "exclusive scan, n = {n}"
        );
    }
}

/// Float scans of `1000 / x` (a division of integers that fails on zeros, staged and
/// wide tuples read in place, inclusive and exclusive): the error is the interpreter's
/// (the first zero in sequence order, the last element of an exclusive scan included).
#[test]
fn failures_inside_scanned_float_elements() {
    const SRC: &str = "
fn fdiv_scan($x: [i32]) -> [f32] {
  $m: [f32] = map(|$a: i32| [] { $k: i32 = const 1000; $d: i32 = div $k, $a; $f: f32 = cast $d as f32; $f }, $x)
  $s: [f32] = scan(|$p: f32, $q: f32| [] { $u: f32 = add $p, $q; $u }, $m)
  $s
}
fn fdiv_exclusive_scan($x: [i32], $z: f64) -> [f64] {
  $m: [f64] = map(|$a: i32| [] { $k: i32 = const 1000; $d: i32 = div $k, $a; $f: f64 = cast $d as f64; $f }, $x)
  $s: [f64] = exclusive_scan(|$p: f64, $q: f64| [] { $u: f64 = add $p, $q; $u }, $m, $z)
  $s
}
fn fdiv_wide_exclusive_scan($x: [i32], $z: (f64, f64, f64)) -> [(f64, f64, f64)] {
  $m: [(f64, f64, f64)] = map(|$a: i32| [] { $k: i32 = const 1000; $d: i32 = div $k, $a; $f: f64 = cast $d as f64; $r: (f64, f64, f64) = tuple($f, $f, $f); $r }, $x)
  $s: [(f64, f64, f64)] = exclusive_scan(|$p: (f64, f64, f64), $q: (f64, f64, f64)| [] {
    $pa: f64 = $p.0; $pb: f64 = $p.1; $pc: f64 = $p.2; $qa: f64 = $q.0; $qb: f64 = $q.1; $qc: f64 = $q.2
    $ra: f64 = add $pa, $qa
    $rb: f64 = add $pb, $qb
    $rc: f64 = add $pc, $qc
    $o: (f64, f64, f64) = tuple($ra, $rb, $rc)
    $o
  }, $m, $z)
  $s
}";
    for name in [
        "fdiv_scan",
        "fdiv_exclusive_scan",
        "fdiv_wide_exclusive_scan",
    ] {
        let start = SRC.find(&format!("fn {name}(")).unwrap();
        let end = SRC[start + 1..]
            .find("\nfn ")
            .map_or(SRC.len(), |e| start + 1 + e);
        let src = &SRC[start..end];
        let c = compiled(src);
        let p = program(src, Scan::LookBack, None);
        for n in [1usize, 2, 2048, 2049, 5000] {
            for zeros in [
                vec![0],
                vec![n - 1],
                vec![n / 2, n / 3, n - 1],
                vec![n - 1 - (n - 1) % 2048, n - 1],
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
                let mut args = vec![seq(x)];
                match name {
                    "fdiv_scan" => {}
                    "fdiv_exclusive_scan" => args.push(Value::F64(0.5)),
                    _ => args.push(Value::Tuple(vec![Value::F64(0.5); 3])),
                }
                let case = format!("{name}, n = {n}, zeros at {zeros:?}");
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

/// A float with narrow leaves (`bool`, `i8`) beside it: staged in 4-byte slots, stored at
/// their own width; "the latest non-negative `x` and whether any was seen so far".
#[test]
fn a_float_with_narrow_leaves_follows_the_scan_order() {
    const SRC: &str = "
fn narrow_scan($x: [f32]) -> [(f32, bool, i8)] {
  $p: [(f32, bool, i8)] = map(|$a: f32| [] { $z: f32 = const 0.0; $g: bool = ge $a, $z; $one: i8 = const 1; $e: (f32, bool, i8) = tuple($a, $g, $one); $e }, $x)
  $s: [(f32, bool, i8)] = scan(|$f: (f32, bool, i8), $h: (f32, bool, i8)| [] {
    $fa: f32 = $f.0; $fb: bool = $f.1; $fc: i8 = $f.2; $ha: f32 = $h.0; $hb: bool = $h.1; $hc: i8 = $h.2
    $ra: f32 = add $fa, $ha
    $rb: bool = or $fb, $hb
    $rc: i8 = add $fc, $hc
    $o: (f32, bool, i8) = tuple($ra, $rb, $rc)
    $o
  }, $p)
  $s
}";
    let p = program(SRC, Scan::LookBack, None);
    let op =
        |f: (f32, bool, i8), h: (f32, bool, i8)| (f.0 + h.0, f.1 || h.1, f.2.wrapping_add(h.2));
    for n in ORDER_SIZES {
        let mut r = Rng::new(n as u64 + 21);
        let x: Vec<f32> = (0..n).map(|_| r.f64_in(-100.0, 1.0) as f32).collect();
        let xs: Vec<(f32, bool, i8)> = x.iter().map(|&a| (a, a >= 0.0, 1)).collect();
        let want = scan_order::inclusive(&xs, None, &op);
        let got = vals(&run(&p, vec![seq(x)]));
        assert_eq!(got.len(), want.len(), "n = {n}");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            let Value::Tuple(t) = g else { panic!("{g:?}") };
            let (Value::F32(a), Value::Bool(b), Value::I8(c)) = (&t[0], &t[1], &t[2]) else {
                panic!("{g:?}")
            };
            assert!(
                a.to_bits() == w.0.to_bits() && *b == w.1 && *c == w.2,
                "n = {n}, at {i}: {g:?} vs {w:?}"
            );
        }
    }
}
