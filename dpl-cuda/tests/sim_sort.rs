//! `sort` and `sort_by_key` on the simulator (the radix sort of `codegen/sort.rs`), against
//! the standard library's stable sort in IEEE `totalOrder` (bit-for-bit) and the reference
//! interpreter: every scalar key type with extremes, `-0.0`, `+0.0`, NaNs and infinities;
//! sizes around a round (256 elements) and a tile (4096); stability through distinct
//! values; tuple keys (lexicographic, one radix sort per leaf from the last); tuple values;
//! sorts of computed elements and the errors of their element functions; keys that agree
//! on some or all digits (onesweep passes skipped on the device); 40 tiles and more (the
//! passes' look-back); sorts launched again in report mode after a later failed check;
//! blocks run by 8 host threads; sorts inside element functions (`codegen/row_sort.rs`) by
//! a thread and by a warp or a block per element.
#![cfg(feature = "sim")]

mod support;

use std::cmp::Ordering;
use std::sync::OnceLock;

use dpl_core::interp::{self, Value};
use dpl_cuda::GpuProgram;
use dpl_cuda::sim::SimDriver;
use support::*;

fn driver() -> &'static SimDriver {
    static D: OnceLock<SimDriver> = OnceLock::new();
    D.get_or_init(|| {
        let d = SimDriver::default();
        d.device().set_host_threads(8);
        d
    })
}

fn program(src: &str) -> (dpl_core::pipeline::Compiled, GpuProgram) {
    let c = compiled(src);
    let p = dpl_cuda::compile(&c.fused).unwrap_or_else(|e| panic!("{e}\n{src}"));
    (c, p)
}

fn run(p: &GpuProgram, args: Vec<Value>) -> Result<Value, dpl_core::run::Error> {
    dpl_cuda::run(p, driver(), args)
}

/// Sizes around a sub-round (32 elements per warp), a round (1024) and the tiles: 8192
/// elements for `u32` keys alone, 4096 for `u64` keys alone or `u32` keys with indices,
/// 2048 for `u64` keys with indices.
const SIZES: [usize; 17] = [
    0,
    1,
    2,
    31,
    257,
    1023,
    1024,
    1025,
    2047,
    2049,
    4095,
    4096,
    4097,
    8191,
    8192,
    8193,
    2 * 8192 + 4096 + 5,
];

/// A value's bits, so that NaNs and signed zeros compare exactly.
fn bits(v: &Value) -> Vec<u64> {
    match v {
        Value::Seq(xs) => xs.iter().flat_map(bits).collect(),
        Value::Tuple(xs) => xs.iter().flat_map(bits).collect(),
        Value::F32(x) => vec![u64::from(x.to_bits())],
        Value::F64(x) => vec![x.to_bits()],
        Value::F16(x) => vec![u64::from(x.to_bits())],
        Value::BF16(x) => vec![u64::from(x.to_bits())],
        Value::Bool(b) => vec![u64::from(*b)],
        Value::I8(x) => vec![*x as u64],
        Value::U8(x) => vec![u64::from(*x)],
        Value::I16(x) => vec![*x as u64],
        Value::U16(x) => vec![u64::from(*x)],
        Value::I32(x) => vec![*x as u64],
        Value::U32(x) => vec![u64::from(*x)],
        Value::I64(x) => vec![*x as u64],
        Value::U64(x) => vec![*x],
        Value::Usize(x) => vec![*x as u64],
    }
}

/// Checks `got` against `want` bit for bit.
fn same(got: &Value, want: &Value, case: &str) {
    assert_eq!(
        bits(got),
        bits(want),
        "{case}: {} vs {}",
        short(got),
        short(want)
    );
}

fn sort_src(ty: &str) -> String {
    format!("fn sorted($x: [{ty}]) -> [{ty}] {{\n  $s: [{ty}] = sort($x)\n  $s\n}}")
}

/// Random values of every scalar type: extremes, zeros and (for floats) NaNs, infinities
/// and both zeros among random ones; `dups` makes many repeat.
fn values(ty: &str, n: usize, seed: u64, dups: bool) -> Vec<Value> {
    let mut r = Rng::new(seed);
    // A signed integer: the extremes, zero, else a random (or, with `dups`, small) value.
    macro_rules! signed {
        ($v:ident, $t:ident, $pick:ident, $raw:ident) => {
            Value::$v(match $pick {
                0 => $t::MIN,
                1 => $t::MAX,
                2 => 0,
                _ if dups => $raw as $t - 3,
                _ => $raw as $t,
            })
        };
    }
    (0..n)
        .map(|_| {
            let raw = if dups { r.u64() % 7 } else { r.u64() };
            let pick = r.u64() % 16;
            match ty {
                "bool" => Value::Bool(raw & 1 == 1),
                "i32" => signed!(I32, i32, pick, raw),
                "u32" => Value::U32(if pick == 0 { u32::MAX } else { raw as u32 }),
                "i8" => signed!(I8, i8, pick, raw),
                "u8" => Value::U8(if pick == 0 { u8::MAX } else { raw as u8 }),
                "i16" => signed!(I16, i16, pick, raw),
                "u16" => Value::U16(if pick == 0 { u16::MAX } else { raw as u16 }),
                "i64" => signed!(I64, i64, pick, raw),
                "u64" => Value::U64(if pick == 0 { u64::MAX } else { raw }),
                "usize" => Value::Usize(if pick == 0 { usize::MAX } else { raw as usize }),
                "f32" => Value::F32(match pick {
                    0 => f32::NAN,
                    1 => -f32::NAN,
                    2 => f32::INFINITY,
                    3 => f32::NEG_INFINITY,
                    4 => 0.0,
                    5 => -0.0,
                    _ if dups => raw as f32 - 3.0,
                    _ => f32::from_bits(raw as u32),
                }),
                "f64" => Value::F64(match pick {
                    0 => f64::NAN,
                    1 => -f64::NAN,
                    2 => f64::INFINITY,
                    3 => f64::NEG_INFINITY,
                    4 => 0.0,
                    5 => -0.0,
                    _ if dups => raw as f64 - 3.0,
                    _ => f64::from_bits(raw),
                }),
                other => panic!("no values of {other}"),
            }
        })
        .collect()
}

/// `totalOrder` on scalar values (and lexicographic on tuples), written independently of
/// the interpreter.
fn order(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::F32(x), Value::F32(y)) => x.total_cmp(y),
        (Value::F64(x), Value::F64(y)) => x.total_cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Tuple(x), Value::Tuple(y)) => x
            .iter()
            .zip(y)
            .map(|(a, b)| order(a, b))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal),
        // Integers of one type, as numbers.
        _ if std::mem::discriminant(a) == std::mem::discriminant(b) => {
            match (a.as_int(), b.as_int()) {
                (Some(x), Some(y)) => x.cmp(&y),
                _ => panic!("cannot compare {a:?} and {b:?}"),
            }
        }
        _ => panic!("cannot compare {a:?} and {b:?}"),
    }
}

#[test]
fn every_scalar_type() {
    for ty in [
        "bool", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "usize", "f32", "f64",
    ] {
        let (_, p) = program(&sort_src(ty));
        for n in SIZES {
            for dups in [false, true] {
                let x = values(ty, n, n as u64 * 31 + 7, dups);
                let mut want = x.clone();
                want.sort_by(order);
                let got = run(&p, vec![Value::Seq(x.into())]).unwrap();
                same(
                    &got,
                    &Value::Seq(want.into()),
                    &format!("sort [{ty}], n = {n}, dups {dups}"),
                );
            }
        }
    }
}

/// Digits on which every key agrees are skipped (the pass copies its tiles): keys that
/// differ only in their lowest byte, only in a middle one, not at all (every pass
/// skipped, the last one writing the values), and all but one equal (no pass skipped);
/// with and without indices (`sort_by_key`, distinct values showing the order of equal
/// keys), over several tiles.
#[test]
fn digits_all_keys_share() {
    let (_, sorted) = program(&sort_src("u32"));
    let (_, floats) = program(&sort_src("f32"));
    let (_, by_key) = program(
        "fn by_key($k: [u32], $v: [u32]) -> [u32] {\n  $s: [u32] = sort_by_key($k, $v)\n  $s\n}",
    );
    let mut r = Rng::new(11);
    for n in [1, 300, 3 * 8192 + 17] {
        let cases: [(&str, Vec<u32>); 4] = [
            (
                "low byte",
                (0..n)
                    .map(|_| 0x5a00_0000 | (r.u64() as u32 & 0xff))
                    .collect(),
            ),
            (
                "middle byte",
                (0..n)
                    .map(|_| 0x0100_0007 | (r.u64() as u32 & 0xff00))
                    .collect(),
            ),
            ("all equal", vec![0xdead_beef; n]),
            (
                "one differs",
                (0..n)
                    .map(|i| if i == n / 2 { 7 } else { 0x8000_0000 })
                    .collect(),
            ),
        ];
        for (what, keys) in cases {
            let case = format!("{what}, n = {n}");
            let x: Vec<Value> = keys.iter().map(|&v| Value::U32(v)).collect();
            let mut want = keys.clone();
            want.sort();
            let got = run(&sorted, vec![seq_of(x.clone())]).unwrap();
            same(
                &got,
                &seq_of(want.iter().map(|&v| Value::U32(v)).collect()),
                &case,
            );
            let f: Vec<Value> = keys
                .iter()
                .map(|&v| Value::F32(f32::from_bits(v)))
                .collect();
            let mut want: Vec<f32> = keys.iter().map(|&v| f32::from_bits(v)).collect();
            want.sort_by(f32::total_cmp);
            let got = run(&floats, vec![seq_of(f)]).unwrap();
            same(
                &got,
                &seq_of(want.into_iter().map(Value::F32).collect()),
                &case,
            );
            let v: Vec<Value> = (0..n as u32).map(Value::U32).collect();
            let mut order: Vec<u32> = (0..n as u32).collect();
            order.sort_by_key(|&i| keys[i as usize]);
            let got = run(&by_key, vec![seq_of(x), seq_of(v)]).unwrap();
            same(
                &got,
                &seq_of(order.into_iter().map(Value::U32).collect()),
                &case,
            );
        }
    }
}

/// Many tiles (the look-back of a pass crosses dozens of them, run by 8 host threads in
/// any order): 64-bit keys alone and `u32` keys with indices.
#[test]
fn many_tiles() {
    for ty in ["u64", "i32"] {
        let src = format!(
            "fn by_key($k: [{ty}], $v: [u32]) -> [u32] {{\n  $s: [u32] = sort_by_key($k, $v)\n  $s\n}}"
        );
        let (_, p) = program(&src);
        let (_, q) = program(&sort_src(ty));
        let n = 40 * 4096 + 123;
        let k = values(ty, n, 5, false);
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_by(|&a, &b| crate::order(&k[a as usize], &k[b as usize]));
        let v: Vec<Value> = (0..n as u32).map(Value::U32).collect();
        let got = run(&p, vec![seq_of(k.clone()), seq_of(v)]).unwrap();
        let want = seq_of(order.iter().map(|&i| Value::U32(i)).collect());
        same(&got, &want, &format!("sort_by_key [{ty}], n = {n}"));
        let got = run(&q, vec![seq_of(k.clone())]).unwrap();
        let want = seq_of(order.iter().map(|&i| k[i as usize].clone()).collect());
        same(&got, &want, &format!("sort [{ty}], n = {n}"));
    }
}

/// A check that fails after a sort, in the same group of launches: the run time launches
/// them all again in report mode, so every kernel of the sort must give the same results
/// the second time (the digits' counts are not added twice, the passes find their
/// tiles' statuses as the first run left them, or wait for their own where a later pass
/// wrote over them: with 80 tiles, a pass that took another pass's status for its own
/// fails here); the error is the interpreter's, and without the failure the results are
/// right.
#[test]
fn sorts_run_again_in_report_mode() {
    let src = "
fn f($x: [i64], $d: i64) -> ([i64], i64) {
  $s: [i64] = sort($x)
  $k: [i64] = sort_by_key($x, $x)
  $q: [i64] = map(|$v: i64| [] { $r: i64 = div $v, $d; $r }, $s)
  $t: i64 = sum($q)
  $u: i64 = sum($k)
  $w: i64 = add $t, $u
  $o: ([i64], i64) = tuple($s, $w)
  $o
}";
    let (c, p) = program(src);
    for n in [5, 3 * 4096 + 9, 40 * 4096 + 123] {
        for d in [0, 3] {
            let x = values("i64", n, n as u64, false);
            check(
                &c,
                &p,
                vec![seq_of(x), Value::I64(d)],
                &format!("n = {n}, d = {d}"),
            );
        }
    }
}

fn seq_of(xs: Vec<Value>) -> Value {
    Value::Seq(xs.into())
}

/// Distinct values (the indices, shifted) with `sort_by_key` under keys with many
/// duplicates: the values of equal keys come out in index order.
#[test]
fn stable_by_key() {
    for ty in [
        "bool", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "usize", "f32", "f64",
    ] {
        let src = format!(
            "fn by_key($k: [{ty}], $v: [u64]) -> [u64] {{\n  $s: [u64] = sort_by_key($k, $v)\n  $s\n}}"
        );
        let (_, p) = program(&src);
        for n in [0, 1, 257, 2049, 4097, 9_000] {
            let k = values(ty, n, n as u64 + 3, true);
            let v: Vec<Value> = (0..n as u64).map(|i| Value::U64(i * 3 + 1)).collect();
            let mut pairs: Vec<(Value, Value)> = k.iter().cloned().zip(v.iter().cloned()).collect();
            pairs.sort_by(|a, b| order(&a.0, &b.0));
            let want = seq_of(pairs.into_iter().map(|p| p.1).collect());
            let got = run(&p, vec![seq_of(k), seq_of(v)]).unwrap();
            same(
                &got,
                &want,
                &format!("sort_by_key [{ty}] -> [u64], n = {n}"),
            );
        }
    }
}

/// Tuple keys are lexicographic (a radix sort per leaf, from the last); tuple values are
/// carried whole.
#[test]
fn tuple_keys_and_values() {
    let (_, pairs) = program(
        "fn sorted($x: [(bool, i32)]) -> [(bool, i32)] {
          $s: [(bool, i32)] = sort($x)
          $s
        }",
    );
    let (_, by_key) = program(
        "fn by_key($k: [(f64, u32, i64)], $v: [(f32, bool)]) -> [(f32, bool)] {
          $s: [(f32, bool)] = sort_by_key($k, $v)
          $s
        }",
    );
    for n in [0, 1, 300, 2048, 2049, 4097, 12_345] {
        let (b, i) = (values("bool", n, 1, false), values("i32", n, 2, true));
        let x: Vec<Value> = b
            .iter()
            .zip(&i)
            .map(|(b, i)| Value::Tuple(vec![b.clone(), i.clone()]))
            .collect();
        let mut want = x.clone();
        want.sort_by(order);
        let got = run(&pairs, vec![seq_of(x)]).unwrap();
        same(&got, &seq_of(want), &format!("sort [(bool, i32)], n = {n}"));

        let (f, u, l) = (
            values("f64", n, 3, true),
            values("u32", n, 4, true),
            values("i64", n, 5, true),
        );
        let k: Vec<Value> = (0..n)
            .map(|j| {
                let u = match &u[j] {
                    Value::U32(u) => Value::U32(u % 3),
                    other => other.clone(),
                };
                Value::Tuple(vec![f[j].clone(), u, l[j].clone()])
            })
            .collect();
        let v: Vec<Value> = (0..n)
            .map(|j| Value::Tuple(vec![Value::F32(j as f32), Value::Bool(j % 3 == 0)]))
            .collect();
        let mut kv: Vec<(Value, Value)> = k.iter().cloned().zip(v.iter().cloned()).collect();
        kv.sort_by(|a, b| order(&a.0, &b.0));
        let want = seq_of(kv.into_iter().map(|p| p.1).collect());
        let got = run(&by_key, vec![seq_of(k), seq_of(v)]).unwrap();
        same(
            &got,
            &want,
            &format!("sort_by_key [(f64, u32, i64)], n = {n}"),
        );
    }
}

/// Sorts of computed elements (fused into the sort's element function), their errors
/// (the interpreter's), and sorts feeding other combinators.
#[test]
fn computed_elements_and_errors() {
    let src = "
fn gathered($x: [f32], $idx: [usize]) -> (f32, [f32]) {
  $g: [f32] = gather($x, $idx)
  $s: [f32] = sort($g)
  $m: f32 = sum($s)
  $r: (f32, [f32]) = tuple($m, $s)
  $r
}";
    let (c, p) = program(src);
    for n in [0usize, 5, 8193, 10_000] {
        let mut r = Rng::new(n as u64);
        // Small integers: their sum is exact in any order.
        let x: Vec<f32> = (0..n + 10).map(|_| r.int_in(-100..100) as f32).collect();
        for bad in [None, Some(n / 2), Some(n.saturating_sub(1))] {
            let idx: Vec<usize> = (0..n)
                .map(|i| {
                    if Some(i) == bad {
                        n + 10
                    } else {
                        (i * 7) % (n + 10)
                    }
                })
                .collect();
            let args = vec![seq(x.clone()), usizes(idx)];
            let want = interp::run(&c.fused, args.clone());
            let got = run(&p, args);
            let case = format!("sort of a gather, n = {n}, bad index at {bad:?}");
            match (&want, &got) {
                (Ok(w), Ok(g)) => {
                    let (Value::Tuple(w), Value::Tuple(g)) = (w, g) else {
                        panic!("{case}")
                    };
                    same(&g[1], &w[1], &case);
                    same(&g[0], &w[0], &case);
                }
                _ => {
                    agree(&want, &got, 0.0, &case);
                }
            }
            assert_eq!(bad.is_some() && n > 0, got.is_err(), "{case}");
        }
    }
}

/// The kernels: a sort of scalars sorts the values as keys (no indices, no gather), the
/// element function evaluated where the keys are made; other sorts compute the elements
/// first, sort indices along with the keys of each leaf and gather the values. Every
/// kernel runs 256 threads per block, whatever the attribute says.
#[test]
fn kernels_and_block_size() {
    let count = |p: &GpuProgram, what: &str| p.kernels.iter().filter(|k| k.ends_with(what)).count();
    let (_, p) = program(&sort_src("f64"));
    assert_eq!(count(&p, "_sort_elems"), 0);
    assert_eq!(count(&p, "_sort_keys"), 1);
    assert_eq!(count(&p, "_sort_pass"), 8, "a kernel per byte of an f64");
    assert_eq!(count(&p, "_sort_gather"), 0);
    assert_eq!(p.kernels.len(), 9, "{:?}", p.kernels);
    let c = compiled(&sort_src("u32"));
    let opts = dpl_cuda::Options {
        block: Some(64),
        ..Default::default()
    };
    let p64 = dpl_cuda::compile_with(&c.fused, &opts).unwrap();
    for p in [&p, &p64] {
        for (k, b) in p.kernels.iter().zip(&p.blocks) {
            assert_eq!(b.block, 256, "{k}");
            assert!(b.why.contains("a thread per digit value"), "{k}: {}", b.why);
        }
    }
    let (_, p) =
        program("fn s($x: [(bool, u32)]) -> [(bool, u32)] { $s: [(bool, u32)] = sort($x) $s }");
    assert_eq!(count(&p, "_sort_elems"), 1);
    assert_eq!(count(&p, "_sort_keys"), 2);
    assert_eq!(
        count(&p, "_sort_pass"),
        5,
        "a pass for the bool, 4 for the u32"
    );
    assert_eq!(count(&p, "_sort_gather"), 1);
}

/// The interpreter's result (bit for bit) or error.
fn check(c: &dpl_core::pipeline::Compiled, p: &GpuProgram, args: Vec<Value>, case: &str) {
    let want = interp::run(&c.fused, args.clone());
    let got = run(p, args);
    match (&want, &got) {
        (Ok(w), Ok(g)) => same(g, w, case),
        _ => {
            agree(&want, &got, 0.0, case);
        }
    }
}

const SORT_ROWS: &str = "
fn sort_rows($x: [[f32]]) -> [[f32]] {
  $r: [[f32]] = map(|$row: [f32]| [] { $s: [f32] = sort($row); $s }, $x)
  $r
}";

const SMALLEST: &str = "
fn smallest($x: [[i64]]) -> [i64] {
  $r: [i64] = map(|$row: [i64]| [] {
    $s: [i64] = sort($row)
    $z: usize = const 0
    $v: i64 = index(index) $s[$z]
    $v
  }, $x)
  $r
}";

const ARGSORT_ROWS: &str = "
fn argsort_rows($x: [[u32]]) -> [[usize]] {
  $r: [[usize]] = map(|$row: [u32]| [] {
    $ix: [usize] = indices($row)
    $s: [usize] = sort_by_key($row, $ix)
    $s
  }, $x)
  $r
}";

const SORTED_PAIRS_SUM: &str = "
fn sorted_pairs_sum($x: [[f64]]) -> [i64] {
  $r: [i64] = map(|$row: [f64]| [] {
    $ix: [usize] = indices($row)
    $p: [(bool, f64)] = map(|$i: usize, $v: f64| [] { $two: usize = const 2; $m: usize = rem $i, $two; $z: usize = const 0; $b: bool = eq $m, $z; $t: (bool, f64) = tuple($b, $v); $t }, $ix, $row)
    $s: [(bool, f64)] = sort($p)
    $w: [i64] = map(|$q: (bool, f64), $j: usize| [] { $v2: f64 = $q.1; $vi: i64 = cast $v2 as i64; $ji: i64 = cast $j as i64; $t2: i64 = mul $vi, $ji; $t2 }, $s, $ix)
    $total: i64 = sum($w)
    $total
  }, $x)
  $r
}";

const SORT_LOOKED_UP: &str = "
fn looked_up($x: [[i32]]) -> [[i32]] {
  $r: [[i32]] = map(|$row: [i32]| [] {
    $q: [i32] = map(|$v: i32| [$row] { $i: usize = cast $v as usize; $t: i32 = index(index) $row[$i]; $t }, $row)
    $s: [i32] = sort($q)
    $s
  }, $x)
  $r
}";

const SORT_ODD: &str = "
fn odd($x: [[i32]]) -> [[i32]] {
  $r: [[i32]] = map(|$row: [i32]| [] {
    $f: [i32] = filter(|$v: i32| [] { $two: i32 = const 2; $m: i32 = rem $v, $two; $z: i32 = const 0; $o: bool = ne $m, $z; $o }, $row)
    $s: [i32] = sort($f)
    $s
  }, $x)
  $r
}";

/// Per-row sorts of computed elements by every schedule: elements that index the row
/// (out of range at some: the error of the first failing row and element, as the
/// interpreter reports it, its index telling which element failed; a group evaluates the
/// elements again one by one in report mode) and the survivors of a `filter` (a group
/// places them by a group count).
#[test]
fn sorts_per_row_of_computed_elements() {
    use dpl_cuda::{Inner, Options};
    let mut failed = 0;
    for src in [SORT_LOOKED_UP, SORT_ODD] {
        let c = compiled(src);
        for inner in [Inner::Seq, Inner::Warp, Inner::Block] {
            let opts = Options {
                inner,
                ..Default::default()
            };
            let p = dpl_cuda::compile_with(&c.fused, &opts)
                .unwrap_or_else(|e| panic!("{inner:?}: {e}\n{src}"));
            for (rows, longest, bad) in [
                (0, 1, 0),
                (1, 300, 0),
                (200, 9, 0),
                (200, 9, 100),
                (37, 70, 0),
                (37, 70, 300),
                (3, 1500, 0),
                (3, 1500, 2000),
            ] {
                // Indices into the row, one in `bad` out of range (negative).
                let mut r = Rng::new(rows as u64 * 11 + longest as u64 + bad);
                let x = Value::seq(
                    (0..rows)
                        .map(|_| {
                            let len = r.int_in(0..longest) as usize;
                            Value::seq(
                                (0..len)
                                    .map(|_| {
                                        let out = bad > 0 && r.u64().is_multiple_of(bad);
                                        Value::from(if out {
                                            -(r.int_in(1..1_000_000) as i32)
                                        } else {
                                            r.int_in(0..len as i64) as i32
                                        })
                                    })
                                    .collect(),
                            )
                        })
                        .collect(),
                );
                let case = format!(
                    "{} {inner:?}, {rows} rows up to {longest}, bad 1/{bad}",
                    p.name
                );
                failed += usize::from(interp::run(&c.fused, vec![x.clone()]).is_err());
                check(&c, &p, vec![x], &case);
            }
        }
    }
    assert!(failed >= 6, "cases that fail: {failed}");
}

/// Sorts inside element functions, by a thread (a merge sort in a per-thread temporary)
/// and by a warp or a block per element (each thread merges its share of a round from a
/// binary search along the merge path, a barrier per round): rows written out, read at an index (empty rows fail as in the
/// interpreter), `sort_by_key` with the row's indices, tuple keys feeding an (integer, so
/// exact in any order) reduction; short and long rows, floats with NaNs and signed zeros.
#[test]
fn sorts_per_row() {
    use dpl_cuda::{Inner, Options};
    for src in [SORT_ROWS, SMALLEST, ARGSORT_ROWS, SORTED_PAIRS_SUM] {
        let c = compiled(src);
        for inner in [Inner::Seq, Inner::Warp, Inner::Block, Inner::Auto] {
            let opts = Options {
                inner,
                ..Default::default()
            };
            let p = dpl_cuda::compile_with(&c.fused, &opts)
                .unwrap_or_else(|e| panic!("{inner:?}: {e}\n{src}"));
            // The schedule asked for is applied: a group sorts its element's row.
            let grouped = |what: &str| p.kernels.iter().any(|k| k.ends_with(what));
            match inner {
                Inner::Seq => assert!(!grouped("_warp") && !grouped("_block"), "{:?}", p.kernels),
                Inner::Warp | Inner::Auto => assert!(grouped("_warp"), "{:?}", p.kernels),
                Inner::Block => assert!(grouped("_block"), "{:?}", p.kernels),
            }
            for (rows, longest) in [(0, 1), (1, 300), (200, 9), (37, 70), (3, 1500)] {
                let mut r = Rng::new(rows as u64 * 7 + longest as u64);
                let ty = &p.plan.params[0].1;
                let leaf = format!("{ty}").replace(['[', ']'], "");
                let x = ragged(&mut r, rows, longest, |r| {
                    let dup = r.u64() % 3 == 0;
                    values(&leaf, 1, r.u64(), dup).remove(0)
                });
                let case = format!("{} {inner:?}, {rows} rows up to {longest}", p.name);
                check(&c, &p, vec![x.clone()], &case);
                // Without empty rows (reading the smallest element then succeeds).
                let Value::Seq(rs) = &x else { unreachable!() };
                let full: Vec<Value> = rs
                    .iter()
                    .filter(|r| !matches!(r, Value::Seq(v) if v.is_empty()))
                    .cloned()
                    .collect();
                check(
                    &c,
                    &p,
                    vec![Value::seq(full)],
                    &format!("{case}, no empty rows"),
                );
            }
        }
    }
}
