//! The compiler pipeline preserves meaning.
//!
//! About thirty programs written in the IR text form at the Prim level go through
//! [`pipeline::compile`]; the reference interpreter then runs the typed (Prim level), the
//! normalized (Soac level, unfused) and the fused function on the same random inputs
//! (proptest, sequences of 0..200 elements). All three must agree — exactly for integer
//! programs, up to reassociation for float reductions — and, for most programs, agree with
//! a plain Rust computation written independently here. Inputs that break a contract
//! (lengths that differ, an index out of range, `min` of nothing, a division by zero, ...)
//! must be the same error at every level.
//!
//! Every program is written with explicit types; [`all_programs_infer_their_annotations`]
//! also compiles each one with every type in its body erased to `_` and checks that type
//! inference finds exactly the annotated types.
//!
//! Programs are written with named variables `$name` instead of the text form's `%N`
//! handles; [`ir`] numbers them in order of first appearance (so the arena is dense) and
//! fills in the lambdas' capture lists.

use dpl_core::interp::{Error, Value, run};
use dpl_core::ir::Function;
use dpl_core::pipeline::{Compiled, compile};
use dpl_core::text::{parse_named, print};
use dpl_testkit::SplitMix64;
use proptest::prelude::*;

// ---------------------------------------------------------------------------------------
// Helpers

/// Parses a program written with `$name` variables ([`parse_named`]).
fn ir(src: &str) -> Function {
    parse_named(src).unwrap_or_else(|e| panic!("{e}\n{src}")).0
}

/// The same program with the type of every definition in the body (statements and lambda
/// parameters) replaced by `_`; the signature keeps its types.
fn erase_types(src: &str) -> String {
    let body_start = src.find('{').expect("a function body");
    let (head, body) = src.split_at(body_start);
    let chars: Vec<char> = body.chars().collect();
    let mut out = String::from(head);
    let mut i = 0;
    while i < chars.len() {
        out.push(chars[i]);
        if chars[i] == '$' {
            // Copy the name, then erase the type if this is a definition.
            i += 1;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                out.push(chars[i]);
                i += 1;
            }
            if chars.get(i) == Some(&':') {
                out.push_str(": _");
                i += 1;
                while chars.get(i) == Some(&' ') {
                    i += 1;
                }
                // Skip one type: an identifier or a balanced bracketed group.
                let mut depth = 0usize;
                while let Some(&c) = chars.get(i) {
                    match c {
                        '[' | '(' => depth += 1,
                        ']' | ')' if depth > 0 => depth -= 1,
                        c if depth == 0 && !(c.is_ascii_alphanumeric() || c == '_') => break,
                        _ => {}
                    }
                    i += 1;
                    if depth == 0 && matches!(c, ']' | ')') {
                        break;
                    }
                }
            }
            continue;
        }
        i += 1;
    }
    out
}

/// Compiles a program, panicking with the diagnostics if the pipeline rejects it.
fn compiled(src: &str) -> Compiled {
    let f = ir(src);
    compile(f).unwrap_or_else(|errors| {
        let msgs: Vec<String> = errors.iter().map(|d| format!("{d:?}")).collect();
        panic!("pipeline failed:\n{}\n{src}", msgs.join("\n"))
    })
}

/// Runs the typed, normalized and fused functions and checks they give the same result or
/// the same error; returns it.
fn run3(c: &Compiled, args: &[Value]) -> Result<Value, Error> {
    let typed = run(&c.typed, args.to_vec());
    let normalized = run(&c.normalized, args.to_vec());
    let fused = run(&c.fused, args.to_vec());
    assert_eq!(
        typed, normalized,
        "typed vs normalized for {}\n{}",
        c.typed.name, c.normalized
    );
    assert_eq!(
        typed, fused,
        "typed vs fused for {}\n{}",
        c.typed.name, c.fused
    );
    typed
}

/// As [`run3`], for programs whose float reductions may be reassociated by a pass: values
/// are compared with a relative tolerance, errors exactly.
fn run3_approx(c: &Compiled, args: &[Value], rel: f64) -> Result<Value, Error> {
    let typed = run(&c.typed, args.to_vec());
    for (level, other) in [("normalized", &c.normalized), ("fused", &c.fused)] {
        let got = run(other, args.to_vec());
        match (&typed, &got) {
            (Ok(a), Ok(b)) => assert!(a.close_to(b, rel), "typed vs {level}: {a} vs {b}"),
            _ => assert_eq!(typed, got, "typed vs {level}"),
        }
    }
    typed
}

/// The result as a `Vec<T>`.
fn vec_of<T: TryFrom<Value, Error = dpl_core::interp::ConversionError>>(v: Value) -> Vec<T> {
    Vec::<T>::try_from(v).expect("a sequence of the expected type")
}

/// `raw` turned into indices below `len` (empty when `len` is zero).
fn in_range(raw: &[usize], len: usize) -> Vec<usize> {
    if len == 0 {
        Vec::new()
    } else {
        raw.iter().map(|r| r % len).collect()
    }
}

/// A strategy for sequences of 0..200 small integers.
fn ints() -> impl Strategy<Value = Vec<i64>> {
    prop::collection::vec(-1000i64..1000, 0..200)
}

/// A strategy for sequences of 0..200 arbitrary integers (to exercise wrapping).
fn wide_ints() -> impl Strategy<Value = Vec<i64>> {
    prop::collection::vec(any::<i64>(), 0..200)
}

/// A strategy for raw index material (reduced modulo a length by [`in_range`]).
fn raw_indices() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0usize..10_000, 0..200)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 96,
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------------------
// The programs (Prim level, as the front end lowers them)

const MAP_OF_MAP: &str = "
fn map_of_map($x: [i64]) -> [i64] {
  $m1: [i64] = map(|$a: i64| [] { $c3: i64 = const 3; $a3: i64 = mul $a, $c3; $a3 }, $x)
  $m2: [i64] = map(|$b: i64| [] { $c1: i64 = const 1; $b1: i64 = add $b, $c1; $b1 }, $m1)
  $m2
}";

const SUM_MAP_GATHER: &str = "
fn sum_map_gather($x: [i64], $idx: [usize]) -> i64 {
  $g: [i64] = gather($x, $idx)
  $sq: [i64] = map(|$v: i64| [] { $vv: i64 = mul $v, $v; $vv }, $g)
  $s: i64 = sum($sq)
  $s
}";

const FILTER_OF_MAP: &str = "
fn filter_of_map($x: [i64]) -> [i64] {
  $m: [i64] = map(|$a: i64| [] { $c3: i64 = const 3; $t: i64 = mul $a, $c3; $c1: i64 = const 1; $u: i64 = add $t, $c1; $u }, $x)
  $ev: [i64] = filter(|$v: i64| [] { $two: i64 = const 2; $r: i64 = rem $v, $two; $zero: i64 = const 0; $e: bool = eq $r, $zero; $e }, $m)
  $ev
}";

const SCAN_OF_MAP: &str = "
fn scan_of_map($x: [i64]) -> [i64] {
  $m: [i64] = map(|$a: i64| [] { $c2: i64 = const 2; $t: i64 = mul $a, $c2; $t }, $x)
  $s: [i64] = scan(|$p: i64, $q: i64| [] { $r: i64 = add $p, $q; $r }, $m)
  $s
}";

const EXCLUSIVE_SCAN_OF_MAP: &str = "
fn exclusive_scan_of_map($x: [i64], $z: i64) -> [i64] {
  $m: [i64] = map(|$a: i64| [] { $c5: i64 = const 5; $t: i64 = sub $a, $c5; $t }, $x)
  $s: [i64] = exclusive_scan(|$p: i64, $q: i64| [] { $r: i64 = max $p, $q; $r }, $m, $z)
  $s
}";

const ZIP_UNZIP: &str = "
fn zip_unzip($x: [i64], $y: [i64]) -> [i64] {
  $p: [(i64, i64)] = zip($x, $y)
  $u: ([i64], [i64]) = unzip($p)
  $a: [i64] = $u.0
  $b: [i64] = $u.1
  $d: [i64] = map(|$s: i64, $t: i64| [] { $r: i64 = sub $s, $t; $r }, $a, $b)
  $d
}";

const REDUCE_OF_ZIP: &str = "
fn reduce_of_zip($x: [i64], $y: [i64]) -> (i64, i64) {
  $p: [(i64, i64)] = zip($x, $y)
  $z0: i64 = const 0
  $zm: i64 = const -1000000
  $init: (i64, i64) = tuple($z0, $zm)
  $r: (i64, i64) = reduce(|$acc: (i64, i64), $e: (i64, i64)| [] {
    $a0: i64 = $acc.0; $e0: i64 = $e.0; $s: i64 = add $a0, $e0
    $a1: i64 = $acc.1; $e1: i64 = $e.1; $m: i64 = max $a1, $e1
    $t: (i64, i64) = tuple($s, $m)
    $t
  }, $p, $init)
  $r
}";

const SCATTER_OF_MAP: &str = "
fn scatter_of_map($src: [i64], $idx: [usize], $dst: [i64]) -> [i64] {
  $m: [i64] = map(|$a: i64| [] { $c2: i64 = const 2; $t: i64 = mul $a, $c2; $t }, $src)
  $s: [i64] = scatter($m, $idx, $dst)
  $s
}";

const SCATTER_REDUCE_OF_MAP: &str = "
fn histogram($src: [i64], $idx: [usize], $dst: [i64]) -> [i64] {
  $m: [i64] = map(|$a: i64| [] { $c1: i64 = const 1; $t: i64 = add $a, $c1; $t }, $src)
  $s: [i64] = scatter_reduce(|$acc: i64, $v: i64| [] { $r: i64 = add $acc, $v; $r }, $m, $idx, $dst)
  $s
}";

const PERMUTE_OF_MAP: &str = "
fn permute_of_map($x: [i64], $perm: [usize]) -> [i64] {
  $m: [i64] = map(|$a: i64| [] { $t: i64 = mul $a, $a; $t }, $x)
  $p: [i64] = permute($m, $perm)
  $p
}";

const COUNT_ANY_ALL_PRED: &str = "
fn count_any_all($x: [i64]) -> (usize, bool, bool) {
  $m1: [i64] = map(|$a: i64| [] { $c: i64 = const 7; $t: i64 = sub $a, $c; $t }, $x)
  $n: usize = count(|$v: i64| [] { $z: i64 = const 0; $g: bool = gt $v, $z; $g }, $m1)
  $m2: [i64] = map(|$b: i64| [] { $c2: i64 = const 2; $t2: i64 = mul $b, $c2; $t2 }, $x)
  $an: bool = any(|$w: i64| [] { $k: i64 = const 1900; $g2: bool = gt $w, $k; $g2 }, $m2)
  $m3: [i64] = map(|$d: i64| [] { $t3: i64 = abs $d; $t3 }, $x)
  $al: bool = all(|$u: i64| [] { $k2: i64 = const 990; $g3: bool = lt $u, $k2; $g3 }, $m3)
  $r: (usize, bool, bool) = tuple($n, $an, $al)
  $r
}";

const COUNT_ANY_ALL_BOOLS: &str = "
fn count_any_all_bools($x: [i64]) -> (usize, bool, bool) {
  $b1: [bool] = map(|$a: i64| [] { $z: i64 = const 0; $g: bool = ge $a, $z; $g }, $x)
  $n: usize = count($b1)
  $b2: [bool] = map(|$c: i64| [] { $k: i64 = const 995; $g2: bool = gt $c, $k; $g2 }, $x)
  $an: bool = any($b2)
  $b3: [bool] = map(|$d: i64| [] { $k2: i64 = const -995; $g3: bool = gt $d, $k2; $g3 }, $x)
  $al: bool = all($b3)
  $r: (usize, bool, bool) = tuple($n, $an, $al)
  $r
}";

const NESTED_SUM: &str = "
fn nested_sum($x: [i64], $y: [i64]) -> [i64] {
  $r: [i64] = map(|$a: i64| [] {
    $p: [i64] = map(|$b: i64| [] { $t: i64 = mul $a, $b; $t }, $y)
    $s: i64 = sum($p)
    $s
  }, $x)
  $r
}";

const NESTED_COUNT_GATHER: &str = "
fn nested_count_gather($x: [i64], $y: [i64], $idx: [usize]) -> [usize] {
  $r: [usize] = map(|$a: i64| [] {
    $g: [i64] = gather($y, $idx)
    $n: usize = count(|$b: i64| [] { $l: bool = lt $b, $a; $l }, $g)
    $n
  }, $x)
  $r
}";

const IF_IN_LAMBDA: &str = "
fn if_in_lambda($x: [i64], $y: [i64]) -> [i64] {
  $r: [i64] = map(|$a: i64| [] {
    $z: i64 = const 0
    $pos: bool = gt $a, $z
    $v: i64 = if $pos {
      $c2: i64 = const 2; $t: i64 = mul $a, $c2; $t
    } else {
      $s: i64 = sum($y); $u: i64 = sub $s, $a; $u
    }
    $v
  }, $x)
  $r
}";

const REPLICATE_MAP: &str = "
fn replicate_map($x: [i64], $c: i64) -> [i64] {
  $n: usize = len($x)
  $rep: [i64] = replicate($c, $n)
  $r: [i64] = map(|$a: i64, $b: i64| [] { $t: i64 = add $a, $b; $t }, $x, $rep)
  $r
}";

const RANGE_SUM: &str = "
fn range_sum($n: usize) -> usize {
  $r: [usize] = range($n)
  $sq: [usize] = map(|$i: usize| [] { $t: usize = mul $i, $i; $t }, $r)
  $s: usize = sum($sq)
  $s
}";

const INDICES_MAP: &str = "
fn indices_map($x: [i64]) -> [i64] {
  $ix: [usize] = indices($x)
  $r: [i64] = map(|$i: usize, $a: i64| [] { $w: i64 = cast $i as i64; $t: i64 = mul $a, $w; $t }, $ix, $x)
  $r
}";

const GATHER_OF_GATHER: &str = "
fn gather_of_gather($x: [i64], $i1: [usize], $i2: [usize]) -> [i64] {
  $g1: [i64] = gather($x, $i1)
  $g2: [i64] = gather($g1, $i2)
  $g2
}";

const MIN_MAX_OF_MAP: &str = "
fn min_max_of_map($x: [i64]) -> (i64, i64) {
  $m1: [i64] = map(|$a: i64| [] { $c: i64 = const 1; $t: i64 = sub $a, $c; $t }, $x)
  $lo: i64 = min($m1)
  $m2: [i64] = map(|$b: i64| [] { $c2: i64 = const 2; $t2: i64 = mul $b, $c2; $t2 }, $x)
  $hi: i64 = max($m2)
  $r: (i64, i64) = tuple($lo, $hi)
  $r
}";

const SAXPY: &str = "
fn saxpy($alpha: f32, $x: [f32], $y: [f32]) -> [f32] {
  $r: [f32] = map(|$a: f32, $b: f32| [] { $t: f32 = mul $alpha, $a; $u: f32 = add $t, $b; $u }, $x, $y)
  $r
}";

const DOT: &str = "
fn dot($x: [f64], $y: [f64]) -> f64 {
  $p: [f64] = map(|$a: f64, $b: f64| [] { $t: f64 = mul $a, $b; $t }, $x, $y)
  $s: f64 = sum($p)
  $s
}";

const FLOAT_SCAN: &str = "
fn float_scan($x: [f64]) -> [f64] {
  $m: [f64] = map(|$a: f64| [] { $b: f64 = abs $a; $r: f64 = sqrt $b; $r }, $x)
  $s: [f64] = scan(|$p: f64, $q: f64| [] { $t: f64 = add $p, $q; $t }, $m)
  $s
}";

const SUM_FILTER_MAP: &str = "
fn sum_filter_map($x: [i64]) -> i64 {
  $m: [i64] = map(|$a: i64| [] { $c: i64 = const 10; $t: i64 = sub $a, $c; $t }, $x)
  $f: [i64] = filter(|$v: i64| [] { $z: i64 = const 0; $g: bool = gt $v, $z; $g }, $m)
  $s: i64 = sum($f)
  $s
}";

const USER_INDEX: &str = "
fn user_index($x: [i64], $idx: [i64]) -> [i64] {
  $m: [i64] = map(|$a: i64| [] { $c2: i64 = const 2; $t: i64 = mul $a, $c2; $c1: i64 = const 1; $u: i64 = add $t, $c1; $u }, $x)
  $r: [i64] = map(|$j: i64| [] { $v: i64 = index(index) $m[$j]; $v }, $idx)
  $r
}";

const DIVISION: &str = "
fn division($x: [i64]) -> [i64] {
  $r: [i64] = map(|$a: i64| [] { $h: i64 = const 100000; $q: i64 = div $h, $a; $q }, $x)
  $r
}";

const MAP_USED_TWICE: &str = "
fn map_used_twice($x: [i64]) -> (i64, [i64]) {
  $m: [i64] = map(|$a: i64| [] { $c: i64 = const 3; $t: i64 = add $a, $c; $t }, $x)
  $s: i64 = sum($m)
  $d: [i64] = map(|$p: i64, $q: i64| [] { $t2: i64 = mul $p, $q; $t2 }, $m, $m)
  $r: (i64, [i64]) = tuple($s, $d)
  $r
}";

const REDUCE_GATHER_MAP: &str = "
fn reduce_gather_map($x: [i64], $idx: [u32], $init: i64) -> i64 {
  $m: [i64] = map(|$a: i64| [] { $c: i64 = const 3; $t: i64 = mul $a, $c; $t }, $x)
  $g: [i64] = gather($m, $idx)
  $r: i64 = reduce(|$p: i64, $q: i64| [] { $t2: i64 = max $p, $q; $t2 }, $g, $init)
  $r
}";

const LENGTHS: &str = "
fn lengths($x: [i64]) -> (usize, usize) {
  $m: [i64] = map(|$a: i64| [] { $c: i64 = const 2; $t: i64 = rem $a, $c; $t }, $x)
  $f: [i64] = filter(|$v: i64| [] { $z: i64 = const 0; $g: bool = ne $v, $z; $g }, $m)
  $nf: usize = len($f)
  $m2: [i64] = map(|$b: i64| [] { $u: i64 = neg $b; $u }, $x)
  $nm: usize = len $m2
  $r: (usize, usize) = tuple($nf, $nm)
  $r
}";

const THREE_INPUTS: &str = "
fn three_inputs($x: [i64], $y: [i64], $idx: [usize]) -> [i64] {
  $sq: [i64] = map(|$a: i64| [] { $t: i64 = mul $a, $a; $t }, $x)
  $g: [i64] = gather($sq, $idx)
  $r: [i64] = map(|$p: i64, $q: i64, $s: i64| [] { $t1: i64 = sub $p, $q; $t2: i64 = add $t1, $s; $t2 }, $x, $y, $g)
  $r
}";

const NESTED_MAP_OF_OUTER_MAP: &str = "
fn nested_map_of_outer_map($x: [i64], $y: [i64]) -> [i64] {
  $m: [i64] = map(|$a: i64| [] { $c: i64 = const 1; $t: i64 = add $a, $c; $t }, $y)
  $r: [i64] = map(|$b: i64| [] {
    $p: [i64] = map(|$e: i64| [] { $u: i64 = mul $e, $b; $u }, $m)
    $s: i64 = max($p)
    $s
  }, $x)
  $r
}";

const SHIFT_CAST: &str = "
fn shift_cast($x: [u32], $k: [u32]) -> [u64] {
  $r: [u64] = map(|$a: u32, $b: u32| [] {
    $sh: u32 = shl $a, $b
    $w: u64 = cast $sh as u64
    $x3: u32 = xor $a, $b
    $w2: u64 = cast $x3 as u64
    $t: u64 = add $w, $w2
    $t
  }, $x, $k)
  $r
}";

const SPMV: &str = "
fn spmv($vals: [[f64]], $cols: [[u32]], $x: [f64]) -> [f64] {
  $r: [f64] = map(|$ai: [f64], $ci: [u32]| [] {
    $g: [f64] = gather($x, $ci)
    $p: [f64] = map(|$a: f64, $xj: f64| [] { $t: f64 = mul $a, $xj; $t }, $ai, $g)
    $s: f64 = sum($p)
    $s
  }, $vals, $cols)
  $r
}";

const ROWS_OF_REPLICATE: &str = "
fn rows_of_replicate($x: [i64], $k: usize) -> [i64] {
  $rows: [[i64]] = map(|$a: i64| [] { $row: [i64] = replicate($a, $k); $row }, $x)
  $sums: [i64] = map(|$rw: [i64]| [] {
    $ix: [usize] = indices($rw)
    $w: [i64] = map(|$e: i64, $j: usize| [] { $jj: i64 = cast $j as i64; $t: i64 = mul $e, $jj; $t }, $rw, $ix)
    $s: i64 = sum($w)
    $s
  }, $rows)
  $sums
}";

const GATHER_SIGNED: &str = "
fn gather_signed($x: [i64], $idx: [i32]) -> i64 {
  $m: [i64] = map(|$a: i64| [] { $c: i64 = const 7; $t: i64 = sub $a, $c; $t }, $x)
  $g: [i64] = gather($m, $idx)
  $s: i64 = sum($g)
  $s
}";

const COMPUTED_SCATTER: &str = "
fn computed_scatter($keys: [u32], $bins: usize) -> [i64] {
  $n: usize = len($keys)
  $c1: i64 = const 1
  $c0: i64 = const 0
  $ones: [i64] = replicate($c1, $n)
  $slots: [usize] = map(|$k: u32| [] { $w: usize = cast $k as usize; $b: usize = rem $w, $bins; $b }, $keys)
  $zero: [i64] = replicate($c0, $bins)
  $h: [i64] = scatter_reduce(|$p: i64, $q: i64| [] { $t: i64 = add $p, $q; $t }, $ones, $slots, $zero)
  $h
}";

const SORT_OF_MAP: &str = "
fn sort_of_map($x: [i64]) -> [i64] {
  $m: [i64] = map(|$a: i64| [] { $c: i64 = const 7; $t: i64 = rem $a, $c; $t }, $x)
  $s: [i64] = sort($m)
  $d: [i64] = map(|$b: i64| [] { $c1: i64 = const 1; $u: i64 = add $b, $c1; $u }, $s)
  $d
}";

const SORT_BY_KEY_PAIRS: &str = "
fn sort_by_key_pairs($k: [i64], $v: [i64]) -> [(i64, usize)] {
  $ix: [usize] = indices($v)
  $p: [(i64, usize)] = zip($v, $ix)
  $s: [(i64, usize)] = sort_by_key($k, $p)
  $s
}";

/// Every program, for the whole-list checks.
const ALL: [&str; 37] = [
    MAP_OF_MAP,
    SUM_MAP_GATHER,
    FILTER_OF_MAP,
    SCAN_OF_MAP,
    EXCLUSIVE_SCAN_OF_MAP,
    ZIP_UNZIP,
    REDUCE_OF_ZIP,
    SCATTER_OF_MAP,
    SCATTER_REDUCE_OF_MAP,
    PERMUTE_OF_MAP,
    COUNT_ANY_ALL_PRED,
    COUNT_ANY_ALL_BOOLS,
    NESTED_SUM,
    NESTED_COUNT_GATHER,
    IF_IN_LAMBDA,
    REPLICATE_MAP,
    RANGE_SUM,
    INDICES_MAP,
    GATHER_OF_GATHER,
    MIN_MAX_OF_MAP,
    SAXPY,
    DOT,
    FLOAT_SCAN,
    SUM_FILTER_MAP,
    USER_INDEX,
    DIVISION,
    MAP_USED_TWICE,
    REDUCE_GATHER_MAP,
    LENGTHS,
    THREE_INPUTS,
    NESTED_MAP_OF_OUTER_MAP,
    SPMV,
    ROWS_OF_REPLICATE,
    GATHER_SIGNED,
    COMPUTED_SCATTER,
    SORT_OF_MAP,
    SORT_BY_KEY_PAIRS,
];

// ---------------------------------------------------------------------------------------
// Whole-list checks

#[test]
fn all_programs_compile() {
    for src in ALL {
        let c = compiled(src);
        // Fusion never adds loops.
        assert!(c.stats().loops <= c.stats_before().loops, "{}", c.fused);
        assert!(
            c.stats().temporaries <= c.stats_before().temporaries,
            "{}",
            c.fused
        );
    }
}

#[test]
fn all_programs_infer_their_annotations() {
    for src in ALL.iter().copied().chain([SHIFT_CAST]) {
        let explicit = compiled(src);
        // Inference leaves annotated types alone...
        assert_eq!(
            print(&explicit.typed),
            print(&ir(src)),
            "annotations changed"
        );
        // ...and finds them when they are erased.
        let erased = erase_types(src);
        assert!(
            erased.matches(": _").count() >= 2,
            "nothing erased in\n{erased}"
        );
        let inferred = compiled(&erased);
        assert_eq!(
            print(&inferred.typed),
            print(&explicit.typed),
            "inferred from\n{erased}"
        );
        assert_eq!(print(&inferred.fused), print(&explicit.fused));
    }
}

#[test]
fn min_of_empty_is_reported_as_min_at_every_level() {
    let c = compiled(MIN_MAX_OF_MAP);
    for f in [&c.typed, &c.normalized, &c.fused] {
        let got = run(f, vec![Value::from(Vec::<i64>::new())]);
        assert_eq!(got.unwrap_err().to_string(), "min: empty sequence", "{f}");
    }
}

#[test]
fn erase_types_erases_nested_types() {
    let src = "fn f($x: [i64]) -> (i64, [i64]) { $a: (i64, [i64]) = $b; $c: [[f32]] = $d; $e }";
    assert_eq!(
        erase_types(src),
        "fn f($x: [i64]) -> (i64, [i64]) { $a: _ = $b; $c: _ = $d; $e }"
    );
}

#[test]
fn unconstrained_literal_defaults_like_rust() {
    // An integer literal that nothing constrains is `i32`, a float one `f64`.
    let c = compiled(
        "fn lit($x: [i64]) -> usize { $a: _ = const 3; $b: _ = const 2.5; $n: _ = len($x); $n }",
    );
    let text = print(&c.typed);
    assert!(text.contains("a: i32 = const 3"), "{text}");
    assert!(text.contains("b: f64 = const 2.5"), "{text}");
}

// ---------------------------------------------------------------------------------------
// Agreement on random inputs, and with plain Rust

proptest! {
    #![proptest_config(config())]

    #[test]
    fn map_of_map(x in wide_ints()) {
        let got = run3(&compiled(MAP_OF_MAP), &[x.clone().into()]).unwrap();
        let want: Vec<i64> = x.iter().map(|a| a.wrapping_mul(3).wrapping_add(1)).collect();
        prop_assert_eq!(vec_of::<i64>(got), want);
    }

    #[test]
    fn sum_map_gather(x in ints(), raw in raw_indices(), spill in 0usize..4) {
        // `spill` > 0 lets some indices run past the end: every gathered element is
        // consumed by the sum, so every level must report it.
        let idx: Vec<usize> = raw.iter().map(|r| r % (x.len() + spill).max(1)).collect();
        let got = run3(&compiled(SUM_MAP_GATHER), &[x.clone().into(), idx.clone().into()]);
        match idx.iter().find(|&&i| i >= x.len()) {
            Some(&bad) => prop_assert_eq!(
                got.unwrap_err().to_string(),
                format!("gather: index {bad} out of range for length {}", x.len())
            ),
            None => {
                let want: i64 = idx.iter().map(|&i| x[i] * x[i]).sum();
                prop_assert_eq!(got.unwrap(), Value::I64(want));
            }
        }
    }

    #[test]
    fn filter_of_map(x in wide_ints()) {
        let got = run3(&compiled(FILTER_OF_MAP), &[x.clone().into()]).unwrap();
        let want: Vec<i64> = x
            .iter()
            .map(|a| a.wrapping_mul(3).wrapping_add(1))
            .filter(|v| v % 2 == 0)
            .collect();
        prop_assert_eq!(vec_of::<i64>(got), want);
    }

    #[test]
    fn scan_of_map(x in ints()) {
        let got = run3(&compiled(SCAN_OF_MAP), &[x.clone().into()]).unwrap();
        let want: Vec<i64> = x
            .iter()
            .scan(0i64, |acc, a| {
                *acc += 2 * a;
                Some(*acc)
            })
            .collect();
        prop_assert_eq!(vec_of::<i64>(got), want);
    }

    #[test]
    fn exclusive_scan_of_map(x in ints(), z in -2000i64..2000) {
        let got = run3(&compiled(EXCLUSIVE_SCAN_OF_MAP), &[x.clone().into(), z.into()]).unwrap();
        let mut want = Vec::new();
        let mut acc = z;
        for a in &x {
            want.push(acc);
            acc = acc.max(a - 5);
        }
        prop_assert_eq!(vec_of::<i64>(got), want);
    }

    #[test]
    fn sort_of_map(x in wide_ints()) {
        let got = run3(&compiled(SORT_OF_MAP), &[x.clone().into()]).unwrap();
        let mut want: Vec<i64> = x.iter().map(|a| a % 7).collect();
        want.sort();
        let want: Vec<i64> = want.iter().map(|a| a + 1).collect();
        prop_assert_eq!(vec_of::<i64>(got), want);
    }

    #[test]
    fn sort_by_key_is_stable(k in prop::collection::vec(-5i64..5, 0..200), v in ints()) {
        let v: Vec<i64> = if v.len() >= k.len() { v[..k.len()].to_vec() } else { v };
        let got = run3(&compiled(SORT_BY_KEY_PAIRS), &[k.clone().into(), v.clone().into()]);
        if k.len() == v.len() {
            let mut want: Vec<(i64, (i64, usize))> =
                k.iter().copied().zip(v.iter().copied().zip(0..)).collect();
            want.sort_by_key(|p| p.0);
            let want: Vec<Value> = want.into_iter().map(|(_, p)| Value::from(p)).collect();
            prop_assert_eq!(got.unwrap(), Value::seq(want));
        } else {
            prop_assert!(matches!(got, Err(Error::LengthMismatch { origin: "sort_by_key", .. })), "{:?}", got);
        }
    }

    #[test]
    fn zip_unzip(x in ints(), y in ints(), same in any::<bool>()) {
        let y = if same { x.iter().map(|a| a * 7 + 1).collect() } else { y };
        let got = run3(&compiled(ZIP_UNZIP), &[x.clone().into(), y.clone().into()]);
        if x.len() == y.len() {
            let want: Vec<i64> = x.iter().zip(&y).map(|(a, b)| a - b).collect();
            prop_assert_eq!(vec_of::<i64>(got.unwrap()), want);
        } else {
            prop_assert!(matches!(got, Err(Error::LengthMismatch { origin: "zip", .. })), "{:?}", got);
        }
    }

    #[test]
    fn reduce_of_zip(x in ints(), ys in ints()) {
        let y: Vec<i64> = ys.iter().cycle().take(if ys.is_empty() { 0 } else { x.len() }).copied().collect();
        let got = run3(&compiled(REDUCE_OF_ZIP), &[x.clone().into(), y.clone().into()]);
        if x.len() == y.len() {
            let want = (x.iter().sum::<i64>(), y.iter().copied().fold(-1_000_000, i64::max));
            prop_assert_eq!(got.unwrap(), Value::from(want));
        } else {
            prop_assert!(matches!(got, Err(Error::LengthMismatch { origin: "zip", .. })), "{:?}", got);
        }
    }

    #[test]
    fn scatter_of_map(src in ints(), raw in raw_indices(), dst in ints(), spill in 0usize..3) {
        let n = src.len().min(raw.len());
        let src = &src[..n];
        let idx: Vec<usize> = raw[..n].iter().map(|r| r % (dst.len() + spill).max(1)).collect();
        let got = run3(&compiled(SCATTER_OF_MAP), &[src.into(), idx.clone().into(), dst.clone().into()]);
        if let Some(&bad) = idx.iter().find(|&&i| i >= dst.len()) {
            prop_assert_eq!(
                got.unwrap_err().to_string(),
                format!("scatter: index {bad} out of range for length {}", dst.len())
            );
        } else {
            let mut want = dst.clone();
            for (&i, &v) in idx.iter().zip(src) {
                want[i] = 2 * v;
            }
            prop_assert_eq!(vec_of::<i64>(got.unwrap()), want);
        }
    }

    #[test]
    fn scatter_of_map_length_mismatch(src in ints(), raw in raw_indices(), dst in ints()) {
        prop_assume!(src.len() != raw.len());
        let idx = in_range(&raw, dst.len());
        prop_assume!(!idx.is_empty() || raw.is_empty());
        let got = run3(&compiled(SCATTER_OF_MAP), &[src.clone().into(), idx.clone().into(), dst.into()]);
        prop_assert!(matches!(got, Err(Error::LengthMismatch { origin: "scatter", .. })), "{:?}", got);
    }

    #[test]
    fn histogram(src in ints(), raw in raw_indices(), bins in 1usize..20) {
        let n = src.len().min(raw.len());
        let src = &src[..n];
        let idx = in_range(&raw[..n], bins);
        let dst = vec![0i64; bins];
        let got = run3(&compiled(SCATTER_REDUCE_OF_MAP), &[src.into(), idx.clone().into(), dst.into()]).unwrap();
        let mut want = vec![0i64; bins];
        for (&i, &v) in idx.iter().zip(src) {
            want[i] += v + 1;
        }
        prop_assert_eq!(vec_of::<i64>(got), want);
    }

    #[test]
    fn permute_of_map(x in ints(), keys in prop::collection::vec(any::<u32>(), 200), broken in 0u8..3) {
        // A permutation of 0..n from sorting random keys; `broken` 1 repeats an index,
        // 2 gives one index too few.
        let n = x.len();
        let mut perm: Vec<usize> = (0..n).collect();
        perm.sort_by_key(|&i| (keys[i], i));
        if broken == 1 && n >= 2 {
            perm[1] = perm[0];
        }
        if broken == 2 && n >= 1 {
            perm.pop();
        }
        let got = run3(&compiled(PERMUTE_OF_MAP), &[x.clone().into(), perm.clone().into()]);
        match (broken, n) {
            (1, 2..) => prop_assert!(matches!(got, Err(Error::NotAPermutation { .. })), "{:?}", got),
            (2, 1..) => prop_assert!(matches!(got, Err(Error::LengthMismatch { origin: "permute", .. })), "{:?}", got),
            _ => {
                let mut want = vec![0i64; n];
                for (k, &p) in perm.iter().enumerate() {
                    want[p] = x[k] * x[k];
                }
                prop_assert_eq!(vec_of::<i64>(got.unwrap()), want);
            }
        }
    }

    #[test]
    fn count_any_all_with_predicates(x in ints()) {
        let got = run3(&compiled(COUNT_ANY_ALL_PRED), &[x.clone().into()]).unwrap();
        let want = Value::Tuple(vec![
            Value::Usize(x.iter().filter(|&&a| a - 7 > 0).count()),
            Value::Bool(x.iter().any(|&a| 2 * a > 1900)),
            Value::Bool(x.iter().all(|&a| a.abs() < 990)),
        ]);
        prop_assert_eq!(got, want);
    }

    #[test]
    fn count_any_all_of_bools(x in ints()) {
        let got = run3(&compiled(COUNT_ANY_ALL_BOOLS), &[x.clone().into()]).unwrap();
        let want = Value::Tuple(vec![
            Value::Usize(x.iter().filter(|&&a| a >= 0).count()),
            Value::Bool(x.iter().any(|&a| a > 995)),
            Value::Bool(x.iter().all(|&a| a > -995)),
        ]);
        prop_assert_eq!(got, want);
    }

    #[test]
    fn nested_sum(x in prop::collection::vec(-1000i64..1000, 0..60), y in ints()) {
        let got = run3(&compiled(NESTED_SUM), &[x.clone().into(), y.clone().into()]).unwrap();
        let want: Vec<i64> = x.iter().map(|a| y.iter().map(|b| a * b).sum()).collect();
        prop_assert_eq!(vec_of::<i64>(got), want);
    }

    #[test]
    fn nested_count_gather(x in prop::collection::vec(-1000i64..1000, 0..60), y in ints(), raw in raw_indices(), spill in 0usize..2) {
        let idx: Vec<usize> = raw.iter().map(|r| r % (y.len() + spill).max(1)).collect();
        let got = run3(&compiled(NESTED_COUNT_GATHER), &[x.clone().into(), y.clone().into(), idx.clone().into()]);
        match idx.iter().find(|&&i| i >= y.len()) {
            // The gather runs once per element of `x`: with no element, nothing is read.
            Some(&bad) if !x.is_empty() => prop_assert_eq!(
                got.unwrap_err().to_string(),
                format!("gather: index {bad} out of range for length {}", y.len())
            ),
            Some(_) => prop_assert_eq!(got.unwrap(), Value::from(Vec::<usize>::new())),
            None => {
                let want: Vec<usize> =
                    x.iter().map(|&a| idx.iter().filter(|&&i| y[i] < a).count()).collect();
                prop_assert_eq!(vec_of::<usize>(got.unwrap()), want);
            }
        }
    }

    #[test]
    fn if_in_lambda(x in ints(), y in ints()) {
        let got = run3(&compiled(IF_IN_LAMBDA), &[x.clone().into(), y.clone().into()]).unwrap();
        let sy: i64 = y.iter().sum();
        let want: Vec<i64> = x.iter().map(|&a| if a > 0 { 2 * a } else { sy - a }).collect();
        prop_assert_eq!(vec_of::<i64>(got), want);
    }

    #[test]
    fn replicate_map(x in ints(), c in any::<i64>()) {
        let got = run3(&compiled(REPLICATE_MAP), &[x.clone().into(), c.into()]).unwrap();
        let want: Vec<i64> = x.iter().map(|a| a.wrapping_add(c)).collect();
        prop_assert_eq!(vec_of::<i64>(got), want);
    }

    #[test]
    fn range_sum(n in 0usize..200) {
        let got = run3(&compiled(RANGE_SUM), &[n.into()]).unwrap();
        prop_assert_eq!(got, Value::Usize((0..n).map(|i| i * i).sum()));
    }

    #[test]
    fn indices_map(x in ints()) {
        let got = run3(&compiled(INDICES_MAP), &[x.clone().into()]).unwrap();
        let want: Vec<i64> = x.iter().enumerate().map(|(i, a)| a * i as i64).collect();
        prop_assert_eq!(vec_of::<i64>(got), want);
    }

    #[test]
    fn gather_of_gather(x in ints(), r1 in raw_indices(), r2 in raw_indices(), spill in 0usize..3) {
        let i1 = in_range(&r1, x.len());
        let i2: Vec<usize> = r2.iter().map(|r| r % (i1.len() + spill).max(1)).collect();
        let got = run3(&compiled(GATHER_OF_GATHER), &[x.clone().into(), i1.clone().into(), i2.clone().into()]);
        match i2.iter().find(|&&j| j >= i1.len()) {
            Some(&bad) => prop_assert_eq!(
                got.unwrap_err().to_string(),
                format!("gather: index {bad} out of range for length {}", i1.len())
            ),
            None => {
                let want: Vec<i64> = i2.iter().map(|&j| x[i1[j]]).collect();
                prop_assert_eq!(vec_of::<i64>(got.unwrap()), want);
            }
        }
    }

    #[test]
    fn min_max_of_map(x in ints()) {
        let got = run3(&compiled(MIN_MAX_OF_MAP), &[x.clone().into()]);
        match (x.iter().min(), x.iter().max()) {
            (Some(lo), Some(hi)) => prop_assert_eq!(got.unwrap(), Value::from((lo - 1, 2 * hi))),
            _ => prop_assert!(matches!(got, Err(Error::Empty { origin: "min", .. })), "{:?}", got),
        }
    }

    #[test]
    fn saxpy(alpha in -10f32..10.0, x in prop::collection::vec(-1e3f32..1e3, 0..200), ys in prop::collection::vec(-1e3f32..1e3, 0..200), same in any::<bool>()) {
        let y = if same { x.iter().map(|v| v * 0.5).collect() } else { ys };
        let got = run3(&compiled(SAXPY), &[alpha.into(), x.clone().into(), y.clone().into()]);
        if x.len() == y.len() {
            // Element-wise: no reassociation, so the result is exact.
            let want: Vec<f32> = x.iter().zip(&y).map(|(a, b)| alpha * a + b).collect();
            prop_assert_eq!(vec_of::<f32>(got.unwrap()), want);
        } else {
            prop_assert_eq!(
                got.unwrap_err().to_string(),
                format!("map: length mismatch: {} vs {}", x.len(), y.len())
            );
        }
    }

    #[test]
    fn dot(x in prop::collection::vec(-1e3f64..1e3, 0..200), y in prop::collection::vec(-1e3f64..1e3, 0..200)) {
        let n = x.len().min(y.len());
        let (x, y) = (&x[..n], &y[..n]);
        let got = run3_approx(&compiled(DOT), &[x.into(), y.into()], 1e-9).unwrap();
        let want: f64 = x.iter().zip(y).map(|(a, b)| a * b).sum();
        prop_assert!(got.close_to(&Value::F64(want), 1e-9), "{} vs {}", got, want);
    }

    #[test]
    fn float_scan(x in prop::collection::vec(-1e4f64..1e4, 0..200)) {
        let got = run3_approx(&compiled(FLOAT_SCAN), &[x.clone().into()], 1e-9).unwrap();
        let want: Vec<f64> = x
            .iter()
            .scan(0.0f64, |acc, a| {
                *acc += a.abs().sqrt();
                Some(*acc)
            })
            .collect();
        prop_assert!(got.close_to(&Value::from(want.clone()), 1e-9), "{} vs {:?}", got, want);
    }

    #[test]
    fn sum_filter_map(x in ints()) {
        let got = run3(&compiled(SUM_FILTER_MAP), &[x.clone().into()]).unwrap();
        let want: i64 = x.iter().map(|a| a - 10).filter(|&v| v > 0).sum();
        prop_assert_eq!(got, Value::I64(want));
    }

    #[test]
    fn user_index(x in ints(), idx in prop::collection::vec(-3i64..250, 0..200)) {
        let got = run3(&compiled(USER_INDEX), &[x.clone().into(), idx.clone().into()]);
        match idx.iter().find(|&&j| j < 0 || j as usize >= x.len()) {
            Some(&bad) => prop_assert_eq!(
                got.unwrap_err().to_string(),
                format!("index: index {bad} out of range for length {}", x.len())
            ),
            None => {
                let want: Vec<i64> = idx.iter().map(|&j| 2 * x[j as usize] + 1).collect();
                prop_assert_eq!(vec_of::<i64>(got.unwrap()), want);
            }
        }
    }

    #[test]
    fn division(x in prop::collection::vec(-5i64..5, 0..200)) {
        let got = run3(&compiled(DIVISION), &[x.clone().into()]);
        if x.contains(&0) {
            prop_assert!(matches!(got, Err(Error::DivideByZero { .. })), "{:?}", got);
        } else {
            let want: Vec<i64> = x.iter().map(|a| 100_000 / a).collect();
            prop_assert_eq!(vec_of::<i64>(got.unwrap()), want);
        }
    }

    #[test]
    fn map_used_twice(x in ints()) {
        let got = run3(&compiled(MAP_USED_TWICE), &[x.clone().into()]).unwrap();
        let m: Vec<i64> = x.iter().map(|a| a + 3).collect();
        let want = Value::Tuple(vec![
            Value::I64(m.iter().sum()),
            Value::from(m.iter().map(|v| v * v).collect::<Vec<i64>>()),
        ]);
        prop_assert_eq!(got, want);
    }

    #[test]
    fn reduce_gather_map(x in ints(), raw in raw_indices(), init in any::<i64>()) {
        let idx: Vec<u32> = in_range(&raw, x.len()).into_iter().map(|i| i as u32).collect();
        let got = run3(&compiled(REDUCE_GATHER_MAP), &[x.clone().into(), idx.clone().into(), init.into()]).unwrap();
        let want = idx.iter().map(|&i| 3 * x[i as usize]).fold(init, i64::max);
        prop_assert_eq!(got, Value::I64(want));
    }

    #[test]
    fn lengths(x in ints()) {
        let got = run3(&compiled(LENGTHS), &[x.clone().into()]).unwrap();
        let odd = x.iter().filter(|a| *a % 2 != 0).count();
        prop_assert_eq!(got, Value::from((odd, x.len())));
    }

    #[test]
    fn three_inputs(x in ints(), y in ints(), raw in raw_indices()) {
        let n = x.len().min(y.len()).min(raw.len());
        let (x, y) = (&x[..n], &y[..n]);
        let idx = in_range(&raw[..n], n);
        let got = run3(&compiled(THREE_INPUTS), &[x.into(), y.into(), idx.clone().into()]).unwrap();
        let want: Vec<i64> = (0..n).map(|k| x[k] - y[k] + x[idx[k]] * x[idx[k]]).collect();
        prop_assert_eq!(vec_of::<i64>(got), want);
    }

    #[test]
    fn three_inputs_length_mismatch(x in ints(), y in ints(), raw in raw_indices()) {
        prop_assume!(x.len() != y.len());
        // Indices in range, as many as `x` has elements: only `y` has the wrong length.
        let idx: Vec<usize> = (0..x.len()).map(|k| raw.get(k).map_or(k, |r| r % x.len())).collect();
        let got = run3(&compiled(THREE_INPUTS), &[x.clone().into(), y.clone().into(), idx.into()]);
        prop_assert!(matches!(got, Err(Error::LengthMismatch { origin: "map", .. })), "{:?}", got);
    }

    #[test]
    fn nested_map_of_outer_map(x in prop::collection::vec(-1000i64..1000, 0..60), y in ints()) {
        let got = run3(&compiled(NESTED_MAP_OF_OUTER_MAP), &[x.clone().into(), y.clone().into()]);
        if y.is_empty() && !x.is_empty() {
            prop_assert!(matches!(got, Err(Error::Empty { origin: "max", .. })), "{:?}", got);
        } else {
            let want: Vec<i64> = x.iter().map(|b| y.iter().map(|e| (e + 1) * b).max().unwrap()).collect();
            prop_assert_eq!(vec_of::<i64>(got.unwrap()), want);
        }
    }

    #[test]
    fn shift_cast(x in prop::collection::vec(any::<u32>(), 0..200), k in prop::collection::vec(any::<u32>(), 0..200)) {
        let n = x.len().min(k.len());
        let (x, k) = (&x[..n], &k[..n]);
        let got = run3(&compiled(SHIFT_CAST), &[x.into(), k.into()]).unwrap();
        let want: Vec<u64> = x.iter().zip(k).map(|(&a, &b)| u64::from(a.wrapping_shl(b)) + u64::from(a ^ b)).collect();
        prop_assert_eq!(vec_of::<u64>(got), want);
    }
    #[test]
    fn spmv(
        rows in prop::collection::vec(prop::collection::vec((-100f64..100.0, 0u32..10_000), 0..20), 0..40),
        x in prop::collection::vec(-100f64..100.0, 1..60),
        spill in 0u32..2,
    ) {
        // A CSR-like matrix: row i has the (value, column) pairs rows[i]; with `spill` a
        // column may fall just past the end of `x`.
        let vals: Vec<Vec<f64>> = rows.iter().map(|r| r.iter().map(|p| p.0).collect()).collect();
        let cols: Vec<Vec<u32>> = rows
            .iter()
            .map(|r| r.iter().map(|p| p.1 % (x.len() as u32 + spill)).collect())
            .collect();
        let got = run3_approx(&compiled(SPMV), &[vals.clone().into(), cols.clone().into(), x.clone().into()], 1e-9);
        match cols.iter().flatten().find(|&&c| c as usize >= x.len()) {
            Some(&bad) => prop_assert_eq!(
                got.unwrap_err().to_string(),
                format!("gather: index {bad} out of range for length {}", x.len())
            ),
            None => {
                let want: Vec<f64> = vals
                    .iter()
                    .zip(&cols)
                    .map(|(v, c)| v.iter().zip(c).map(|(a, &j)| a * x[j as usize]).sum())
                    .collect();
                let got = got.unwrap();
                prop_assert!(got.close_to(&Value::from(want.clone()), 1e-9), "{} vs {:?}", got, want);
            }
        }
    }

    #[test]
    fn spmv_ragged_row_mismatch(n in 1usize..10, x in prop::collection::vec(-100f64..100.0, 1..20)) {
        // Row 0 has one value more than columns: the inner map's length check fires.
        let vals: Vec<Vec<f64>> = (0..n).map(|i| vec![1.0; i + usize::from(i == 0) + 1]).collect();
        let cols: Vec<Vec<u32>> = (0..n).map(|i| vec![0; i + 1]).collect();
        let got = run3(&compiled(SPMV), &[vals.into(), cols.into(), x.into()]);
        prop_assert_eq!(got.unwrap_err().to_string(), "map: length mismatch: 2 vs 1");
    }

    #[test]
    fn rows_of_replicate(x in ints(), k in 0usize..30) {
        let got = run3(&compiled(ROWS_OF_REPLICATE), &[x.clone().into(), k.into()]).unwrap();
        let tri = (0..k as i64).sum::<i64>();
        let want: Vec<i64> = x.iter().map(|a| a * tri).collect();
        prop_assert_eq!(vec_of::<i64>(got), want);
    }

    #[test]
    fn computed_scatter(keys in prop::collection::vec(any::<u32>(), 0..200), bins in 0usize..20) {
        // Index and source both computed (and fused into the scatter); with no bins, any
        // key is a division by zero.
        let got = run3(&compiled(COMPUTED_SCATTER), &[keys.clone().into(), bins.into()]);
        if bins == 0 && !keys.is_empty() {
            prop_assert!(matches!(got, Err(Error::DivideByZero { .. })), "{:?}", got);
        } else {
            let mut want = vec![0i64; bins];
            for &k in &keys {
                want[k as usize % bins] += 1;
            }
            prop_assert_eq!(vec_of::<i64>(got.unwrap()), want);
        }
    }

    #[test]
    fn gather_signed(x in ints(), idx in prop::collection::vec(-3i32..210, 0..200)) {
        let got = run3(&compiled(GATHER_SIGNED), &[x.clone().into(), idx.clone().into()]);
        match idx.iter().find(|&&j| j < 0 || j as usize >= x.len()) {
            Some(&bad) => prop_assert_eq!(
                got.unwrap_err().to_string(),
                format!("gather: index {bad} out of range for length {}", x.len())
            ),
            None => {
                let want: i64 = idx.iter().map(|&j| x[j as usize] - 7).sum();
                prop_assert_eq!(got.unwrap(), Value::I64(want));
            }
        }
    }
}

#[test]
fn dead_failing_statements_still_fail_after_fusion() {
    let cases = [
        "fn f($x: [i64], $j: usize) -> i64 { $v: i64 = index(index) $x[$j]; $z: i64 = const 0; $z }",
        "fn f($x: [i64], $j: usize) -> i64 { $a: i64 = const 1; $b: i64 = const 0; $q: i64 = div $a, $b; $b }",
        "fn f($x: [i64], $j: usize) -> i64 { $m: i64 = min($x); $z: i64 = const 0; $z }",
        "fn f($x: [i64], $j: usize) -> i64 { $r: [usize] = replicate($j, $j); $g: [i64] = gather($x, $r); $z: i64 = const 0; $z }",
    ];
    let mut lost = Vec::new();
    for src in cases {
        let c = compiled(src);
        // `x` is empty and `j` is 3: every case above fails when its statement runs.
        let args = vec![Value::from(Vec::<i64>::new()), Value::Usize(3)];
        let typed = run(&c.typed, args.clone());
        assert!(typed.is_err(), "{typed:?}");
        assert!(run(&c.normalized, args.clone()).is_err());
        if let Ok(v) = run(&c.fused, args) {
            lost.push(format!("{src}\n  fused gives {v} instead of {:?}", typed));
        }
    }
    assert!(
        lost.is_empty(),
        "errors lost by fusion:\n{}",
        lost.join("\n")
    );
}

#[test]
fn two_violations_are_an_error_at_every_level() {
    // A gather index out of range *and* inputs of different lengths: which one is reported
    // depends on the order of the checks, which fusion changes (the map's length check
    // moves before the gather it absorbed), but every level must fail with one of them.
    let c = compiled(THREE_INPUTS);
    let args = vec![
        Value::from(vec![1i64, 2]),
        Value::from(vec![1i64]),
        Value::from(vec![5usize, 0]),
    ];
    for f in [&c.typed, &c.normalized, &c.fused] {
        let got = run(f, args.clone());
        let msg = got.as_ref().err().map(ToString::to_string);
        assert!(
            matches!(
                msg.as_deref(),
                Some("gather: index 5 out of range for length 2" | "map: length mismatch: 2 vs 1")
            ),
            "{got:?}\n{f}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Random programs

/// A random Prim-level program over `x, y: [i64]` (same length) and `idx: [usize]` (same
/// length, indices in range): a chain of stages, each reading earlier sequences (often
/// more than once, sometimes from inside nested lambdas), ending in
/// `(last sequence, sum of one, count of another)`. It exercises every fusion decision:
/// single and multiple reads, reads one and two loops deep, reads in `if` branches.
fn random_program(seed: u64) -> String {
    let mut rng = SplitMix64::new(seed);
    // Sequences defined so far: (name, length class). Class 0 is the length of x, y, idx.
    let mut seqs: Vec<(String, usize)> = vec![("x".into(), 0), ("y".into(), 0)];
    let mut classes = 1;
    let mut lines = Vec::new();
    let ops = ["add", "sub", "mul", "xor", "max"];
    let stages = 2 + rng.below(7);
    for k in 0..stages {
        let (src, class) = seqs[rng.below(seqs.len())].clone();
        let c = rng.below(7) as i64 - 3;
        let op = ops[rng.below(ops.len())];
        let name = format!("s{k}");
        let (line, new_class) = match rng.below(9) {
            0 => (
                format!("${name}: [i64] = map(|$a{k}: i64| [] {{ $c{k}: i64 = const {c}; $r{k}: i64 = {op} $a{k}, $c{k}; $r{k} }}, ${src})"),
                class,
            ),
            1 => {
                let same: Vec<&(String, usize)> = seqs.iter().filter(|s| s.1 == class).collect();
                let other = same[rng.below(same.len())].0.clone();
                (
                    format!("${name}: [i64] = map(|$a{k}: i64, $b{k}: i64| [] {{ $r{k}: i64 = {op} $a{k}, $b{k}; $r{k} }}, ${src}, ${other})"),
                    class,
                )
            }
            2 if class == 0 => (format!("${name}: [i64] = gather(${src}, $idx)"), 0),
            3 if class == 0 => (
                format!("${name}: [i64] = map(|$j{k}: usize| [] {{ $r{k}: i64 = index(index) ${src}[$j{k}]; $r{k} }}, $idx)"),
                0,
            ),
            4 => {
                classes += 1;
                (
                    format!("${name}: [i64] = filter(|$a{k}: i64| [] {{ $c{k}: i64 = const {c}; $g{k}: bool = gt $a{k}, $c{k}; $g{k} }}, ${src})"),
                    classes - 1,
                )
            }
            5 => (
                format!("${name}: [i64] = scan(|$a{k}: i64, $b{k}: i64| [] {{ $r{k}: i64 = {op} $a{k}, $b{k}; $r{k} }}, ${src})"),
                class,
            ),
            6 => {
                let inner = seqs[rng.below(seqs.len())].0.clone();
                (
                    format!(
                        "${name}: [i64] = map(|$a{k}: i64| [] {{
                           $p{k}: [i64] = map(|$b{k}: i64| [] {{ $t{k}: i64 = {op} $a{k}, $b{k}; $t{k} }}, ${inner})
                           $r{k}: i64 = sum($p{k})
                           $r{k}
                         }}, ${src})"
                    ),
                    class,
                )
            }
            7 => {
                let inner = seqs[rng.below(seqs.len())].0.clone();
                (
                    format!(
                        "${name}: [i64] = map(|$a{k}: i64| [] {{
                           $c{k}: i64 = const {c}
                           $g{k}: bool = gt $a{k}, $c{k}
                           $r{k}: i64 = if $g{k} {{ $t{k}: i64 = {op} $a{k}, $c{k}; $t{k} }} else {{ $u{k}: i64 = sum(${inner}); $u{k} }}
                           $r{k}
                         }}, ${src})"
                    ),
                    class,
                )
            }
            _ => (
                format!(
                    "$n{k}: usize = len(${src})
                     $ix{k}: [usize] = indices(${src})
                     $rv{k}: [usize] = map(|$i{k}: usize| [] {{ $o{k}: usize = const 1; $m{k}: usize = sub $n{k}, $o{k}; $r{k}: usize = sub $m{k}, $i{k}; $r{k} }}, $ix{k})
                     ${name}: [i64] = gather(${src}, $rv{k})"
                ),
                class,
            ),
        };
        lines.push(line);
        seqs.push((name, new_class));
    }
    let last = seqs.last().unwrap().0.clone();
    let summed = seqs[rng.below(seqs.len())].0.clone();
    let counted = seqs[rng.below(seqs.len())].0.clone();
    format!(
        "fn random($x: [i64], $y: [i64], $idx: [usize]) -> ([i64], i64, usize) {{
           {}
           $total: i64 = sum(${summed})
           $cnt: usize = count(|$v: i64| [] {{ $z: i64 = const 0; $gz: bool = lt $v, $z; $gz }}, ${counted})
           $out: ([i64], i64, usize) = tuple(${last}, $total, $cnt)
           $out
         }}",
        lines.join("\n           ")
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn random_programs_agree_at_every_level(
        seed in any::<u64>(),
        x in prop::collection::vec(-50i64..50, 0..40),
        ys in prop::collection::vec(-50i64..50, 40),
        raw in prop::collection::vec(0usize..1000, 40),
    ) {
        let n = x.len();
        let y = &ys[..n];
        let idx = in_range(&raw[..n], n);
        let src = random_program(seed);
        let c = compiled(&src);
        prop_assert!(c.stats().loops <= c.stats_before().loops);
        let got = run3(&c, &[x.clone().into(), y.into(), idx.into()]);
        prop_assert!(got.is_ok(), "{:?}\n{}", got, src);
    }
}
