//! The shape of the compiled code: what fusion fuses, and what it must not.
//!
//! In the spirit of Futhark's structure tests, each program goes through
//! [`pipeline::compile`] and the test asserts how many loops (combinators) and temporaries
//! (materialized intermediate sequences) are left, as [`fuse::stats`] counts them, before
//! and after fusion. The programs are written in the IR text form at the Prim level with
//! named variables (`$name`, see [`ir`]).
//!
//! The last tests compare the printed fused IR of a few programs with the files in
//! `tests/golden/`. After a deliberate change to the passes, rewrite those files with
//!
//! ```text
//! DPL_BLESS=1 cargo test -p dpl-core --test pipeline_structure
//! ```
//!
//! and review the diff (`git diff dpl-core/tests/golden`) before committing it.

use dpl_core::fuse::{Stats, stats};
use dpl_core::interp::{Value, run};
use dpl_core::ir::{Expr, Function};
use dpl_core::pipeline::{Compiled, compile};
use dpl_core::text::{parse, parse_named, print};
use std::path::PathBuf;

// ---------------------------------------------------------------------------------------
// Helpers

/// Parses a program written with `$name` variables ([`parse_named`]).
fn ir(src: &str) -> Function {
    parse_named(src).unwrap_or_else(|e| panic!("{e}\n{src}")).0
}

fn compiled(src: &str) -> Compiled {
    compile(ir(src)).unwrap_or_else(|errors| {
        let msgs: Vec<String> = errors.iter().map(|d| format!("{d:?}")).collect();
        panic!("pipeline failed:\n{}\n{src}", msgs.join("\n"))
    })
}

/// `(loops, temporaries)`.
fn lt(s: Stats) -> (usize, usize) {
    (s.loops, s.temporaries)
}

/// Asserts the loops and temporaries before and after fusion, showing the fused IR on
/// failure.
#[track_caller]
fn shape(src: &str, before: (usize, usize), after: (usize, usize)) -> Compiled {
    let c = compiled(src);
    assert_eq!(
        lt(c.stats_before()),
        before,
        "before fusion (loops, temporaries):\n{}",
        c.normalized
    );
    assert_eq!(
        lt(c.stats()),
        after,
        "after fusion (loops, temporaries):\n{}",
        c.fused
    );
    c
}

/// Number of combinators of each kind in a function, nested ones included, as
/// `"map reduce ..."` in program order.
fn soac_kinds(f: &Function) -> String {
    let mut kinds = Vec::new();
    f.body.walk(&mut |s| {
        if let Expr::Soac(soac) = &s.expr {
            kinds.push(soac.kind.name());
        }
    });
    kinds.join(" ")
}

// ---------------------------------------------------------------------------------------
// Fused: producers disappear into their consumers

#[test]
fn sum_of_map_of_gather_is_one_loop() {
    let c = shape(
        "fn f($x: [f32], $idx: [usize]) -> f32 {
           $g: [f32] = gather($x, $idx)
           $m: [f32] = map(|$v: f32| [] { $s: f32 = sqrt $v; $s }, $g)
           $r: f32 = sum($m)
           $r
         }",
        (3, 2),
        (1, 0),
    );
    assert_eq!(soac_kinds(&c.fused), "reduce");
    // The gather's bounds check survives inside the fused loop.
    assert!(print(&c.fused).contains("index(gather)"), "{}", c.fused);
}

#[test]
fn saxpy_is_one_loop() {
    shape(
        "fn saxpy($a: f32, $x: [f32], $y: [f32]) -> [f32] {
           $r: [f32] = map(|$p: f32, $q: f32| [] { $t: f32 = mul $a, $p; $u: f32 = add $t, $q; $u }, $x, $y)
           $r
         }",
        (1, 0),
        (1, 0),
    );
}

#[test]
fn dot_is_one_reduce() {
    let c = shape(
        "fn dot($x: [f32], $y: [f32]) -> f32 {
           $m: [f32] = map(|$p: f32, $q: f32| [] { $t: f32 = mul $p, $q; $t }, $x, $y)
           $s: f32 = sum($m)
           $s
         }",
        (2, 1),
        (1, 0),
    );
    assert_eq!(soac_kinds(&c.fused), "reduce");
}

#[test]
fn chain_of_three_maps_is_one_loop() {
    shape(
        "fn f($x: [i32]) -> [i32] {
           $a: [i32] = map(|$p: i32| [] { $c: i32 = const 1; $t: i32 = add $p, $c; $t }, $x)
           $b: [i32] = map(|$q: i32| [] { $t2: i32 = mul $q, $q; $t2 }, $a)
           $d: [i32] = map(|$r: i32| [] { $t3: i32 = neg $r; $t3 }, $b)
           $d
         }",
        (3, 2),
        (1, 0),
    );
}

#[test]
fn map_then_filter_is_one_loop() {
    let c = shape(
        "fn f($x: [i32]) -> [i32] {
           $m: [i32] = map(|$p: i32| [] { $c: i32 = const 3; $t: i32 = mul $p, $c; $t }, $x)
           $r: [i32] = filter(|$v: i32| [] { $z: i32 = const 0; $g: bool = gt $v, $z; $g }, $m)
           $r
         }",
        (2, 1),
        (1, 0),
    );
    assert_eq!(soac_kinds(&c.fused), "filter");
}

#[test]
fn scan_of_map_is_one_loop() {
    let c = shape(
        "fn f($x: [i64]) -> [i64] {
           $m: [i64] = map(|$p: i64| [] { $t: i64 = mul $p, $p; $t }, $x)
           $s: [i64] = scan(|$a: i64, $b: i64| [] { $t2: i64 = add $a, $b; $t2 }, $m)
           $s
         }",
        (2, 1),
        (1, 0),
    );
    assert_eq!(soac_kinds(&c.fused), "scan");
}

#[test]
fn exclusive_scan_of_map_is_one_loop() {
    shape(
        "fn f($x: [i64], $z: i64) -> [i64] {
           $m: [i64] = map(|$p: i64| [] { $t: i64 = mul $p, $p; $t }, $x)
           $s: [i64] = exclusive_scan(|$a: i64, $b: i64| [] { $t2: i64 = add $a, $b; $t2 }, $m, $z)
           $s
         }",
        (2, 1),
        (1, 0),
    );
}

#[test]
fn reduce_of_zip_is_one_loop() {
    shape(
        "fn f($x: [i64], $y: [i64]) -> (i64, i64) {
           $p: [(i64, i64)] = zip($x, $y)
           $z: i64 = const 0
           $init: (i64, i64) = tuple($z, $z)
           $r: (i64, i64) = reduce(|$a: (i64, i64), $b: (i64, i64)| [] {
             $a0: i64 = $a.0; $b0: i64 = $b.0; $s0: i64 = add $a0, $b0
             $a1: i64 = $a.1; $b1: i64 = $b.1; $s1: i64 = add $a1, $b1
             $t: (i64, i64) = tuple($s0, $s1)
             $t
           }, $p, $init)
           $r
         }",
        (2, 1),
        (1, 0),
    );
}

#[test]
fn scatter_of_map_is_one_loop() {
    let c = shape(
        "fn f($src: [i64], $idx: [usize], $dst: [i64]) -> [i64] {
           $m: [i64] = map(|$p: i64| [] { $t: i64 = mul $p, $p; $t }, $src)
           $s: [i64] = scatter($m, $idx, $dst)
           $s
         }",
        (2, 1),
        (1, 0),
    );
    assert_eq!(soac_kinds(&c.fused), "scatter");
}

#[test]
fn scatter_reduce_and_permute_of_map_are_one_loop() {
    shape(
        "fn f($src: [i64], $idx: [usize], $dst: [i64]) -> [i64] {
           $m: [i64] = map(|$p: i64| [] { $c: i64 = const 1; $t: i64 = add $p, $c; $t }, $src)
           $s: [i64] = scatter_reduce(|$a: i64, $b: i64| [] { $t2: i64 = add $a, $b; $t2 }, $m, $idx, $dst)
           $s
         }",
        (2, 1),
        (1, 0),
    );
    shape(
        "fn f($src: [i64], $idx: [usize]) -> [i64] {
           $m: [i64] = map(|$p: i64| [] { $c: i64 = const 1; $t: i64 = add $p, $c; $t }, $src)
           $s: [i64] = permute($m, $idx)
           $s
         }",
        (2, 1),
        (1, 0),
    );
}

/// A gather of a gather stays two loops: the inner gather can fail (an index out of
/// range) and the outer one reads only some of its elements, so inlining it would leave
/// the inner indices that the outer one does not select unchecked, and the fused call
/// could succeed where the program as written fails (`fuse::reads_all`).
#[test]
fn gather_of_gather_checks_every_inner_index() {
    let c = shape(
        "fn f($x: [i64], $i1: [usize], $i2: [u32]) -> [i64] {
           $g1: [i64] = gather($x, $i1)
           $g2: [i64] = gather($g1, $i2)
           $g2
         }",
        (2, 1),
        (2, 1),
    );
    let x = Value::seq(vec![Value::I64(10), Value::I64(20)]);
    let i1 = Value::seq(vec![Value::Usize(1), Value::Usize(7)]);
    let i2 = Value::seq(vec![Value::U32(0)]);
    // `i1[1] = 7` is out of range even though `i2` never selects it.
    for f in [&c.typed, &c.fused] {
        assert!(
            run(f, vec![x.clone(), i1.clone(), i2.clone()]).is_err(),
            "{f}"
        );
    }
}

#[test]
fn count_any_all_with_predicates_fuse_their_map() {
    for prim in ["count", "any", "all"] {
        let ret = if prim == "count" { "usize" } else { "bool" };
        shape(
            &format!(
                "fn f($x: [i64]) -> {ret} {{
                   $m: [i64] = map(|$p: i64| [] {{ $c: i64 = const 2; $t: i64 = rem $p, $c; $t }}, $x)
                   $r: {ret} = {prim}(|$v: i64| [] {{ $z: i64 = const 0; $g: bool = eq $v, $z; $g }}, $m)
                   $r
                 }}"
            ),
            (2, 1),
            (1, 0),
        );
    }
}

#[test]
fn replicate_range_and_indices_fuse() {
    shape(
        "fn f($x: [i64], $c: i64) -> [i64] {
           $n: usize = len($x)
           $rep: [i64] = replicate($c, $n)
           $r: [i64] = map(|$a: i64, $b: i64| [] { $t: i64 = add $a, $b; $t }, $x, $rep)
           $r
         }",
        (2, 1),
        (1, 0),
    );
    shape(
        "fn f($n: usize) -> usize {
           $r: [usize] = range($n)
           $sq: [usize] = map(|$i: usize| [] { $t: usize = mul $i, $i; $t }, $r)
           $s: usize = sum($sq)
           $s
         }",
        (3, 2),
        (1, 0),
    );
    shape(
        "fn f($x: [i64]) -> [i64] {
           $ix: [usize] = indices($x)
           $r: [i64] = map(|$i: usize, $a: i64| [] { $w: i64 = cast $i as i64; $t: i64 = mul $a, $w; $t }, $ix, $x)
           $r
         }",
        (2, 1),
        (1, 0),
    );
}

#[test]
fn user_index_of_a_map_fuses_with_a_bounds_check() {
    let c = shape(
        "fn f($x: [i64], $idx: [i64]) -> [i64] {
           $m: [i64] = map(|$a: i64| [] { $t: i64 = mul $a, $a; $t }, $x)
           $r: [i64] = map(|$j: i64| [] { $v: i64 = index(index) $m[$j]; $v }, $idx)
           $r
         }",
        (2, 1),
        (1, 0),
    );
    let text = print(&c.fused);
    assert!(text.contains("assert(index) in_bounds"), "{text}");
    assert!(text.contains("cast"), "an i64 index becomes usize: {text}");
}

#[test]
fn read_inside_an_if_branch_fuses() {
    // `if` does not open a loop: a read in a branch is at the consumer's depth.
    shape(
        "fn f($x: [i64], $idx: [usize]) -> [i64] {
           $m: [i64] = map(|$a: i64| [] { $t: i64 = mul $a, $a; $t }, $x)
           $n: usize = len $m
           $r: [i64] = map(|$j: usize| [] {
             $ok: bool = lt $j, $n
             $v: i64 = if $ok { $e: i64 = index(index) $m[$j]; $e } else { $z: i64 = const 0; $z }
             $v
           }, $idx)
           $r
         }",
        (2, 1),
        (1, 0),
    );
}

#[test]
fn producer_one_level_up_fuses_into_nested_consumer() {
    // `m` is read element-wise by the outer map itself (one level deeper than its
    // definition): fusing it costs no recomputation.
    shape(
        "fn f($x: [i64], $y: [i64]) -> [i64] {
           $m: [i64] = map(|$a: i64| [] { $c: i64 = const 1; $t: i64 = add $a, $c; $t }, $x)
           $r: [i64] = map(|$b: i64| [] {
             $p: [i64] = map(|$e: i64| [] { $u: i64 = mul $e, $b; $u }, $y)
             $s: i64 = sum($p)
             $s
           }, $m)
           $r
         }",
        (4, 2),
        (2, 0),
    );
}

#[test]
fn nested_per_element_reduce_fuses_inside() {
    let c = shape(
        "fn f($x: [i64], $y: [i64]) -> [i64] {
           $r: [i64] = map(|$a: i64| [] {
             $p: [i64] = map(|$b: i64| [] { $t: i64 = mul $a, $b; $t }, $y)
             $s: i64 = sum($p)
             $s
           }, $x)
           $r
         }",
        (3, 1),
        (2, 0),
    );
    assert_eq!(c.stats().top_level_loops, 1);
    assert_eq!(soac_kinds(&c.fused), "map reduce");
}

#[test]
fn dead_map_is_removed() {
    let c = shape(
        "fn f($x: [i64]) -> i64 {
           $unused: [i64] = map(|$a: i64| [] { $t: i64 = mul $a, $a; $t }, $x)
           $s: i64 = sum($x)
           $s
         }",
        (2, 1),
        (1, 0),
    );
    assert_eq!(soac_kinds(&c.fused), "reduce");
}

// ---------------------------------------------------------------------------------------
// Not fused: fusing would recompute, or the producer is needed as a whole

/// A producer whose elements are expensive (each one a reduction over `y`): reading it at
/// two places must not compute it twice.
const COSTLY: &str = "$m: [i64] = map(|$a: i64| [] {
             $p: [i64] = map(|$b: i64| [] { $t: i64 = mul $a, $b; $t }, $y)
             $s: i64 = sum($p)
             $s
           }, $x)";

#[test]
fn costly_map_read_twice_in_one_consumer_is_not_fused() {
    // Before: m, its inner map and sum, the consumer; the inner map fuses into its sum.
    let c = shape(
        &format!(
            "fn f($x: [i64], $y: [i64]) -> [i64] {{
               {COSTLY}
               $r: [i64] = map(|$u: i64, $v: i64| [] {{ $w: i64 = add $u, $v; $w }}, $m, $m)
               $r
             }}"
        ),
        (4, 2),
        (3, 1),
    );
    assert_eq!(soac_kinds(&c.fused), "map reduce map");
}

#[test]
fn costly_map_with_two_consumers_is_not_fused() {
    let c = shape(
        &format!(
            "fn f($x: [i64], $y: [i64]) -> i64 {{
               {COSTLY}
               $total: i64 = sum($m)
               $h: i64 = max($m)
               $r: i64 = add $total, $h
               $r
             }}"
        ),
        (5, 2),
        (4, 1),
    );
    assert_eq!(soac_kinds(&c.fused), "map reduce reduce reduce");
}

#[test]
fn cheap_map_read_twice_is_recomputed() {
    // A producer of a few statements, with no loop and no check, is cheaper to recompute
    // at each read than to materialize.
    let c = shape(
        "fn f($x: [i64]) -> [i64] {
           $m: [i64] = map(|$a: i64| [] { $t: i64 = mul $a, $a; $t }, $x)
           $r: [i64] = map(|$p: i64, $q: i64| [] { $t2: i64 = add $p, $q; $t2 }, $m, $m)
           $r
         }",
        (2, 1),
        (1, 0),
    );
    let x: Vec<i64> = (-20..20).collect();
    let want: Vec<i64> = x.iter().map(|a| 2 * a * a).collect();
    assert_eq!(run(&c.fused, vec![x.into()]), Ok(Value::from(want)));
}

#[test]
fn map_that_is_also_the_result_is_not_fused() {
    // `m` is returned: it must be materialized anyway, and it is not a temporary.
    shape(
        "fn f($x: [i64]) -> ([i64], i64) {
           $m: [i64] = map(|$a: i64| [] { $t: i64 = mul $a, $a; $t }, $x)
           $s: i64 = sum($m)
           $r: ([i64], i64) = tuple($m, $s)
           $r
         }",
        (2, 0),
        (2, 0),
    );
}

#[test]
fn producer_read_inside_a_nested_loop_is_not_fused() {
    // The recomputation guard: `m` is read by the inner loop, two levels below its
    // definition; inlining it would compute each element once per outer element.
    let c = shape(
        "fn f($x: [i64], $y: [i64]) -> [i64] {
           $m: [i64] = map(|$a: i64| [] { $c: i64 = const 1; $t: i64 = add $a, $c; $t }, $y)
           $r: [i64] = map(|$b: i64| [] {
             $p: [i64] = map(|$e: i64| [] { $u: i64 = mul $e, $b; $u }, $m)
             $s: i64 = sum($p)
             $s
           }, $x)
           $r
         }",
        (4, 2),
        (3, 1),
    );
    assert_eq!(c.stats().top_level_loops, 2);
    assert_eq!(soac_kinds(&c.fused), "map map reduce");
}

#[test]
fn filter_then_map_is_two_loops() {
    let c = shape(
        "fn f($x: [i32]) -> [i32] {
           $k: [i32] = filter(|$v: i32| [] { $z: i32 = const 0; $g: bool = gt $v, $z; $g }, $x)
           $m: [i32] = map(|$p: i32| [] { $c: i32 = const 3; $t: i32 = mul $p, $c; $t }, $k)
           $m
         }",
        (2, 1),
        (2, 1),
    );
    assert_eq!(soac_kinds(&c.fused), "filter map");
}

#[test]
fn map_of_scan_is_two_loops() {
    shape(
        "fn f($x: [i64]) -> [i64] {
           $s: [i64] = scan(|$a: i64, $b: i64| [] { $t: i64 = add $a, $b; $t }, $x)
           $m: [i64] = map(|$p: i64| [] { $t2: i64 = mul $p, $p; $t2 }, $s)
           $m
         }",
        (2, 1),
        (2, 1),
    );
}

#[test]
fn sum_of_filter_of_map_is_two_loops() {
    let c = shape(
        "fn f($x: [i64]) -> i64 {
           $m: [i64] = map(|$a: i64| [] { $c: i64 = const 10; $t: i64 = sub $a, $c; $t }, $x)
           $k: [i64] = filter(|$v: i64| [] { $z: i64 = const 0; $g: bool = gt $v, $z; $g }, $m)
           $s: i64 = sum($k)
           $s
         }",
        (3, 2),
        (2, 1),
    );
    assert_eq!(soac_kinds(&c.fused), "filter reduce");
}

#[test]
fn unzip_of_zip_is_fused() {
    shape(
        "fn f($x: [i64], $y: [i64]) -> [i64] {
           $p: [(i64, i64)] = zip($x, $y)
           $u: ([i64], [i64]) = unzip($p)
           $a: [i64] = $u.0
           $b: [i64] = $u.1
           $d: [i64] = map(|$s: i64, $t: i64| [] { $r: i64 = sub $s, $t; $r }, $a, $b)
           $d
         }",
        (4, 3),
        (1, 0),
    );
}

// ---------------------------------------------------------------------------------------
// Counting itself

#[test]
fn stats_count_nested_loops_and_only_intermediate_sequences() {
    let c = compiled(
        "fn f($x: [i64], $y: [i64]) -> ([i64], i64) {
           $k: [i64] = filter(|$v: i64| [] { $z: i64 = const 0; $g: bool = gt $v, $z; $g }, $x)
           $r: [i64] = map(|$a: i64| [] {
             $s: [i64] = scan(|$p: i64, $q: i64| [] { $t: i64 = add $p, $q; $t }, $y)
             $l: i64 = max($s)
             $l
           }, $k)
           $total: i64 = sum($y)
           $out: ([i64], i64) = tuple($r, $total)
           $out
         }",
    );
    // filter (temporary), map (result), scan (nested temporary), max (reduce), sum.
    let st = stats(&c.fused);
    assert_eq!(
        (st.loops, st.temporaries, st.top_level_loops),
        (5, 2, 3),
        "{}",
        c.fused
    );
}

#[test]
fn fused_programs_still_compute_the_same() {
    // A spot check that the shapes above are not bought with wrong answers (the
    // semantics tests cover this at length).
    let c = compiled(
        "fn f($x: [i64], $idx: [usize]) -> i64 {
           $g: [i64] = gather($x, $idx)
           $m: [i64] = map(|$v: i64| [] { $t: i64 = mul $v, $v; $t }, $g)
           $r: i64 = sum($m)
           $r
         }",
    );
    let x: Vec<i64> = (0..50).map(|i| i * 3 - 70).collect();
    let idx: Vec<usize> = (0..80).map(|i| (i * 7) % 50).collect();
    let want: i64 = idx.iter().map(|&i| x[i] * x[i]).sum();
    for f in [&c.typed, &c.normalized, &c.fused] {
        assert_eq!(
            run(f, vec![x.clone().into(), idx.clone().into()]),
            Ok(Value::I64(want))
        );
    }
}

// ---------------------------------------------------------------------------------------
// Golden fused IR

/// Compares the printed fused IR of `src` with `tests/golden/<name>.ir`, or rewrites that
/// file when `DPL_BLESS=1`.
#[track_caller]
fn golden(name: &str, src: &str) {
    let c = compiled(src);
    let text = print(&c.fused);
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "tests",
        "golden",
        &format!("{name}.ir"),
    ]
    .iter()
    .collect();
    if std::env::var_os("DPL_BLESS").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run with DPL_BLESS=1 to create it. The fused IR is:\n{text}",
            path.display()
        )
    });
    assert!(
        want == text,
        "fused IR of `{name}` differs from {} (rerun with DPL_BLESS=1 to accept):\n--- expected\n{want}\n--- got\n{text}",
        path.display()
    );
    // The golden text is a valid function that computes what the compiled one does.
    assert_eq!(
        parse(&want).map(|f| print(&f)).as_deref(),
        Ok(text.as_str())
    );
}

#[test]
fn golden_dot() {
    golden(
        "dot",
        "fn dot($x: [f32], $y: [f32]) -> f32 {
           $m: [f32] = map(|$a: f32, $b: f32| [] { $t: f32 = mul $a, $b; $t }, $x, $y)
           $s: f32 = sum($m)
           $s
         }",
    );
}

#[test]
fn golden_sum_map_gather() {
    golden(
        "sum_map_gather",
        "fn sum_map_gather($x: [f32], $idx: [u32]) -> f32 {
           $g: [f32] = gather($x, $idx)
           $m: [f32] = map(|$v: f32| [] { $t: f32 = mul $v, $v; $t }, $g)
           $s: f32 = sum($m)
           $s
         }",
    );
}

#[test]
fn golden_filter_of_map() {
    golden(
        "filter_of_map",
        "fn filter_of_map($x: [i32]) -> [i32] {
           $m: [i32] = map(|$a: i32| [] { $c: i32 = const 3; $t: i32 = mul $a, $c; $t }, $x)
           $r: [i32] = filter(|$v: i32| [] { $z: i32 = const 0; $g: bool = gt $v, $z; $g }, $m)
           $r
         }",
    );
}

#[test]
fn golden_nested_sum() {
    golden(
        "nested_sum",
        "fn nested_sum($x: [f64], $y: [f64]) -> [f64] {
           $r: [f64] = map(|$a: f64| [] {
             $p: [f64] = map(|$b: f64| [] { $t: f64 = mul $a, $b; $t }, $y)
             $s: f64 = sum($p)
             $s
           }, $x)
           $r
         }",
    );
}

#[test]
fn golden_scan_of_map() {
    golden(
        "scan_of_map",
        "fn scan_of_map($x: [i64]) -> [i64] {
           $m: [i64] = map(|$a: i64| [] { $t: i64 = mul $a, $a; $t }, $x)
           $s: [i64] = scan(|$p: i64, $q: i64| [] { $r: i64 = add $p, $q; $r }, $m)
           $s
         }",
    );
}

#[test]
fn golden_user_index() {
    golden(
        "user_index",
        "fn user_index($x: [i64], $idx: [i64]) -> [i64] {
           $m: [i64] = map(|$a: i64| [] { $c: i64 = const 1; $t: i64 = add $a, $c; $t }, $x)
           $r: [i64] = map(|$j: i64| [] { $v: i64 = index(index) $m[$j]; $v }, $idx)
           $r
         }",
    );
}

#[test]
fn golden_count_with_predicate() {
    golden(
        "count_with_predicate",
        "fn count_positive($x: [i32]) -> usize {
           $m: [i32] = map(|$a: i32| [] { $c: i32 = const 5; $t: i32 = sub $a, $c; $t }, $x)
           $n: usize = count(|$v: i32| [] { $z: i32 = const 0; $g: bool = gt $v, $z; $g }, $m)
           $n
         }",
    );
}
