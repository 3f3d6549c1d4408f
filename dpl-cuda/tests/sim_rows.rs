//! Maps producing rows (ragged results) with a warp or a block per row
//! (`inner = "warp"` / `"block"` / `"auto"`): elementwise maps over rows, zipped rows and
//! gathers (form 1), scans (form 2), filters (form 3), their compositions and filters of
//! rows give what plain Rust computes, under every schedule, for rows of 0, 1, 31/32/33,
//! block ± 1 and tens of thousands of elements and for no rows; failures inside the
//! element function are the interpreter's (and the thread-per-row schedule's) error. The
//! kernels are really a warp / a block per row (names, block-size reasons, instructions)
//! and the warp's stores and loads are coalesced.
#![cfg(feature = "sim")]

mod support;

use std::sync::OnceLock;

use dpl_core::interp::{self, Value};
use dpl_cuda::plan::Step;
use dpl_cuda::sim::SimDriver;
use dpl_cuda::{GpuProgram, Inner, Options};
use support::programs::{self, source};
use support::*;

use dpl_testkit::order::{ordered, scanned, scanned_exclusive};

fn driver() -> &'static SimDriver {
    static D: OnceLock<SimDriver> = OnceLock::new();
    D.get_or_init(SimDriver::default)
}

/// Schedules and block sizes: the default, a warp, a block (128 threads, 32 and 256),
/// chosen by shape.
const SCHEDULES: [(Inner, Option<u32>); 6] = [
    (Inner::Seq, None),
    (Inner::Warp, None),
    (Inner::Block, None),
    (Inner::Block, Some(32)),
    (Inner::Block, Some(256)),
    (Inner::Auto, None),
];

/// Row lengths: no rows, empty and one-element rows, around a warp, around the default
/// block of a block per row (128) and 256, a mix with many rows, very long rows.
fn shapes() -> Vec<Vec<usize>> {
    let mut r = Rng::new(7);
    let many: Vec<usize> = (0..300).map(|_| r.int_in(0..40) as usize).collect();
    vec![
        vec![],
        vec![0],
        vec![1],
        vec![31, 32, 33],
        vec![127, 128, 129, 0],
        vec![255, 256, 257],
        vec![0, 1, 0, 31, 5, 32, 33, 0, 64, 129, 2, 0, 1000],
        many,
        vec![20_000, 0, 3, 7_777],
    ]
}

/// The shapes without the very long rows (for quadratic work per row).
fn short_shapes() -> Vec<Vec<usize>> {
    shapes()
        .into_iter()
        .filter(|s| s.iter().all(|&l| l <= 1000))
        .collect()
}

fn rows_of<T>(lens: &[usize], r: &mut Rng, mut item: impl FnMut(&mut Rng) -> T) -> Vec<Vec<T>> {
    lens.iter()
        .map(|&l| (0..l).map(|_| item(r)).collect())
        .collect()
}

fn nested<T: Clone>(rows: &[Vec<T>], f: impl Fn(&T) -> Value) -> Value {
    Value::seq(
        rows.iter()
            .map(|row| Value::seq(row.iter().map(&f).collect()))
            .collect(),
    )
}

fn pair(p: &(i64, i64)) -> Value {
    Value::Tuple(vec![Value::I64(p.0), Value::I64(p.1)])
}

/// One input: its label, the arguments, and what plain Rust computes (`None`: the call
/// fails, with the interpreter's error).
struct Case {
    label: String,
    args: Vec<Value>,
    want: Option<Value>,
}

/// Compiles `src` under every schedule and runs every case: results equal plain Rust's
/// (floats within `rel`), failures equal the interpreter's error and the thread-per-row
/// schedule's. Returns the number of failing cases.
fn check(src: &str, rel: f64, cases: &[Case]) -> usize {
    let c = compiled(src);
    let mut failures = 0;
    for case in cases {
        let mut seq_error = None;
        for (inner, block) in SCHEDULES {
            let opts = Options {
                inner,
                block,
                ..Options::default()
            };
            let prog = dpl_cuda::compile_with(&c.fused, &opts)
                .unwrap_or_else(|e| panic!("{inner:?}: {e}\n{}", c.fused));
            let got = dpl_cuda::run(&prog, driver(), case.args.clone());
            let what = format!("{} ({inner:?}, {block:?}) on {}", c.fused.name, case.label);
            match (&case.want, got) {
                (Some(w), Ok(g)) => assert!(
                    w.close_to(&g, rel),
                    "{what}: {}\n want {}\n  got {}",
                    first_diff(w, &g, rel),
                    short(w),
                    short(&g)
                ),
                (Some(_), Err(e)) => panic!("{what}: failed: {e}"),
                (None, got) => {
                    let want = interp::run(&c.fused, case.args.clone());
                    assert!(want.is_err(), "{what}: the interpreter does not fail");
                    agree(&want, &got, rel, &what);
                    let e = got.expect_err("agree checked it");
                    match &seq_error {
                        None => seq_error = Some(e),
                        Some(s) => assert_eq!(s, &e, "{what}: not the thread-per-row error"),
                    }
                }
            }
        }
        failures += usize::from(case.want.is_none());
    }
    failures
}

/// Cases on every shape (`short`: without the very long rows): the rows from `item`,
/// the arguments from the rows, plain Rust's result from the rows.
fn cases<T: Clone>(
    short: bool,
    mut item: impl FnMut(&mut Rng) -> T,
    args: impl Fn(&[Vec<T>]) -> Vec<Value>,
    want: impl Fn(&[Vec<T>]) -> Option<Value>,
) -> Vec<Case> {
    let shapes = if short { short_shapes() } else { shapes() };
    shapes
        .iter()
        .enumerate()
        .map(|(s, lens)| {
            let mut r = Rng::new(100 + s as u64);
            let rows = rows_of(lens, &mut r, &mut item);
            Case {
                label: format!("rows of {:?}", &lens[..lens.len().min(13)]),
                args: args(&rows),
                want: want(&rows),
            }
        })
        .collect()
}

/// `rows` with element `at.1` of row `at.0` replaced by `v` (if there).
fn with<T: Clone>(rows: &[Vec<T>], at: &[(usize, usize)], v: T) -> Vec<Vec<T>> {
    let mut rows = rows.to_vec();
    for &(i, j) in at {
        if let Some(x) = rows.get_mut(i).and_then(|r| r.get_mut(j)) {
            *x = v.clone();
        }
    }
    rows
}

fn map_rows<T, U>(rows: &[Vec<T>], f: impl Fn(&T) -> U) -> Vec<Vec<U>> {
    rows.iter().map(|r| r.iter().map(&f).collect()).collect()
}

fn scan_rows<T: Clone>(rows: &[Vec<T>], f: impl Fn(&T, &T) -> T) -> Vec<Vec<T>> {
    rows.iter()
        .map(|r| {
            let mut out: Vec<T> = Vec::with_capacity(r.len());
            for x in r {
                let next = match out.last() {
                    Some(acc) => f(acc, x),
                    None => x.clone(),
                };
                out.push(next);
            }
            out
        })
        .collect()
}

fn nonzero_i32(r: &mut Rng) -> i32 {
    let v = r.int_in(-60..60) as i32;
    if v == 0 { 7 } else { v }
}

#[test]
fn elementwise_maps_over_rows() {
    let f = |x: &f32| Value::F32(*x);
    let cs = cases(
        false,
        |r| r.f64_in(-10.0, 10.0) as f32,
        |rows| vec![nested(rows, f), Value::F32(-1.5)],
        |rows| Some(nested(&map_rows(rows, |v| v * -1.5), f)),
    );
    check(source("scale_rows"), 0.0, &cs);

    // Two rows zipped; one row of `y` a different length fails the nested `eq_len`.
    let i = |x: &i64| Value::I64(*x);
    let mut cs = cases(
        false,
        |r| r.int_in(-1 << 40..1 << 40),
        |rows| vec![nested(rows, i), nested(&map_rows(rows, |v| v ^ 0x55), i)],
        |rows| {
            let sums = rows
                .iter()
                .map(|r| r.iter().map(|v| v.wrapping_add(v ^ 0x55)).collect())
                .collect::<Vec<Vec<i64>>>();
            Some(nested(&sums, i))
        },
    );
    let rows = vec![vec![1i64; 40], vec![2; 33], vec![3; 5], vec![4; 33]];
    let mut short_y = rows.clone();
    short_y[1].pop();
    short_y[3].pop();
    cs.push(Case {
        label: "rows 1 and 3 of y one shorter".into(),
        args: vec![nested(&rows, i), nested(&short_y, i)],
        want: None,
    });
    assert_eq!(check(source("add_rows"), 0.0, &cs), 1);
}

#[test]
fn gathers_per_row_and_their_failures() {
    let x: Vec<f64> = (0..500).map(|k| k as f64 * 0.25 - 3.0).collect();
    let u = |c: &u32| Value::U32(*c);
    let xv = Value::seq(x.iter().map(|&v| Value::F64(v)).collect());
    let mut cs = cases(
        false,
        |r| r.int_in(0..500) as u32,
        |rows| vec![nested(rows, u), xv.clone()],
        |rows| {
            let g = map_rows(rows, |&c| x[c as usize]);
            Some(nested(&g, |v| Value::F64(*v)))
        },
    );
    // Bad columns in rows 3 and 9 (two in row 9, the later one at a smaller position
    // of a later chunk): the first row's first bad one is reported.
    let mut r = Rng::new(9);
    let rows = rows_of(&[40, 3, 70, 100, 0, 33, 1, 64, 5, 300], &mut r, |r| {
        r.int_in(0..500) as u32
    });
    for bad in [
        vec![(3, 90), (9, 250), (9, 3)],
        vec![(9, 299), (9, 40)],
        vec![(0, 0)],
    ] {
        cs.push(Case {
            label: format!("bad columns at {bad:?}"),
            args: vec![
                nested(&with(&rows, &bad, 500 + bad.len() as u32), u),
                xv.clone(),
            ],
            want: None,
        });
    }
    assert_eq!(check(source("gather_rows"), 0.0, &cs), 3);
}

#[test]
fn divisions_per_element_and_their_failures() {
    let i = |x: &i32| Value::I32(*x);
    let mut cs = cases(
        false,
        nonzero_i32,
        |rows| vec![nested(rows, i)],
        |rows| Some(nested(&map_rows(rows, |v| 1000 / v), i)),
    );
    let mut r = Rng::new(11);
    let rows = rows_of(&[5, 200, 31, 77, 1], &mut r, nonzero_i32);
    for zeros in [vec![(1, 150), (1, 20), (3, 1)], vec![(3, 76), (4, 0)]] {
        cs.push(Case {
            label: format!("zeros at {zeros:?}"),
            args: vec![nested(&with(&rows, &zeros, 0), i)],
            want: None,
        });
    }
    assert_eq!(check(source("div_rows"), 0.0, &cs), 2);
}

#[test]
fn reductions_per_element_of_a_row() {
    let i = |x: &i64| Value::I64(*x);
    let cs = cases(
        true,
        |r| r.int_in(-1000..1000),
        |rows| vec![nested(rows, i)],
        |rows| {
            let out: Vec<Vec<i64>> = rows
                .iter()
                .map(|row| {
                    row.iter()
                        .map(|v| row.iter().fold(0i64, |s, w| s.wrapping_add(v * w)))
                        .collect()
                })
                .collect();
            Some(nested(&out, i))
        },
    );
    check(source("row_product_sums"), 0.0, &cs);
}

#[test]
fn scans_over_rows_keep_their_order() {
    let cs = cases(
        false,
        |r| (r.int_in(-3..4), r.int_in(-1000..1000)),
        |rows| vec![nested(rows, pair)],
        |rows| {
            let s = scan_rows(rows, |f, g| {
                (
                    f.0.wrapping_mul(g.0),
                    f.1.wrapping_mul(g.0).wrapping_add(g.1),
                )
            });
            Some(nested(&s, pair))
        },
    );
    check(source("affine_rows"), 0.0, &cs);

    // Floats: the bits of dpl's scan order (the oracle), on every schedule.
    let cs = cases(
        false,
        mixed,
        |rows| vec![nested(rows, |v| Value::F64(*v))],
        |rows| {
            let s: Vec<Vec<f64>> = rows.iter().map(|r| scanned(r, None, add64)).collect();
            Some(nested(&s, |v| Value::F64(*v)))
        },
    );
    check(source("float_row_scan"), 0.0, &cs);
}

/// Values of mixed magnitude and sign, so that another order of additions gives other
/// bits.
fn mixed(r: &mut Rng) -> f64 {
    let m = 10f64.powi(r.int_in(-3..5) as i32);
    (r.f64() - 0.5) * m
}

fn add64(a: f64, b: f64) -> f64 {
    a + b
}

fn add32(a: f32, b: f32) -> f32 {
    a + b
}

/// Rows longer than a tile (several tiles, so the tiles' carries come from the level
/// above), of lengths around the order's boundaries.
fn long_rows() -> Vec<Case32> {
    let lens = [0, 1, 63, 64, 65, 2047, 2048, 2049, 5000, 2048 * 3 + 1];
    let mut r = Rng::new(77);
    vec![rows_of(&lens, &mut r, |r| mixed(r) as f32)]
}

/// Rows of `f32`s.
type Case32 = Vec<Vec<f32>>;

/// Cases of `f32` rows: the usual shapes and [`long_rows`], with `want` from the rows.
fn cases32(want: impl Fn(&[Vec<f32>]) -> Value) -> Vec<Case> {
    let f = |v: &f32| Value::F32(*v);
    let mut cs = cases(
        false,
        |r| mixed(r) as f32,
        |rows| vec![nested(rows, f)],
        |rows| Some(want(rows)),
    );
    for rows in long_rows() {
        cs.push(Case {
            label: "long rows".into(),
            args: vec![nested(&rows, f)],
            want: Some(want(&rows)),
        });
    }
    cs
}

#[test]
fn float_row_scans_follow_the_scan_order() {
    let f = |v: &f32| Value::F32(*v);
    let cs = cases32(|rows| {
        let s: Vec<Vec<f32>> = rows
            .iter()
            .map(|r| scanned_exclusive(r, 0.5, add32))
            .collect();
        nested(&s, f)
    });
    check(source("float_row_scan_from"), 0.0, &cs);
    // Streamed into a sum (not stored): the sum of the scan, both in the order; an
    // empty row's sum is -0.0.
    let cs = cases32(|rows| {
        let s: Vec<f32> = rows
            .iter()
            .map(|r| ordered(&scanned(r, None, add32), add32).unwrap_or(-0.0))
            .collect();
        Value::from(s)
    });
    check(FLOAT_SCAN_SUMS, 0.0, &cs);
    // The order is visible: a left-to-right scan differs.
    let rows = &long_rows()[0];
    let left = scan_rows(rows, |a, b| a + b);
    let want: Vec<Vec<f32>> = rows.iter().map(|r| scanned(r, None, add32)).collect();
    assert_ne!(left, want);
}

/// A row of more than 64 tiles, by one thread: the level above the values takes more
/// than one lane (its lanes' totals scanned for the carries).
#[test]
fn a_float_row_scan_of_many_tiles() {
    let c = compiled(source("float_row_scan"));
    let opts = Options {
        inner: Inner::Seq,
        ..Options::default()
    };
    let prog = dpl_cuda::compile_with(&c.fused, &opts).expect("compiles");
    let mut r = Rng::new(78);
    let rows = rows_of(&[2048 * 65 + 3, 5], &mut r, mixed);
    let f = |v: &f64| Value::F64(*v);
    let got = dpl_cuda::run(&prog, driver(), vec![nested(&rows, f)]).expect("runs");
    let s: Vec<Vec<f64>> = rows.iter().map(|r| scanned(r, None, add64)).collect();
    let want = nested(&s, f);
    assert!(want.close_to(&got, 0.0), "{}", first_diff(&want, &got, 0.0));
}

/// A scan of `(f32, bool)` pairs (a float beside a narrower leaf, kept in the same
/// `.local` and shared slots): the float summed, the flags or-ed, in the order.
#[test]
fn a_float_and_flag_row_scan_follows_the_order() {
    let op = |a: (f32, bool), b: (f32, bool)| (a.0 + b.0, a.1 | b.1);
    let pair = |p: &(f32, bool)| Value::Tuple(vec![Value::F32(p.0), Value::Bool(p.1)]);
    let item = |r: &mut Rng| (mixed(r) as f32, r.int_in(0..50) == 0);
    let mut cs = cases(
        false,
        item,
        |rows| vec![nested(rows, pair)],
        |rows| {
            let s: Vec<Vec<(f32, bool)>> = rows.iter().map(|r| scanned(r, None, op)).collect();
            Some(nested(&s, pair))
        },
    );
    let mut r = Rng::new(79);
    let rows = rows_of(&[2048 * 3 + 1, 65], &mut r, item);
    let s: Vec<Vec<(f32, bool)>> = rows.iter().map(|r| scanned(r, None, op)).collect();
    cs.push(Case {
        label: "long rows".into(),
        args: vec![nested(&rows, pair)],
        want: Some(nested(&s, pair)),
    });
    check(FLOAT_FLAG_SCAN, 0.0, &cs);
}

/// A scan of `(f32, bool)` pairs per row.
const FLOAT_FLAG_SCAN: &str = "fn float_flag_scan($x: [[(f32, bool)]]) -> [[(f32, bool)]] {
  $r: [[(f32, bool)]] = map(|$row: [(f32, bool)]| [] {
    $s: [(f32, bool)] = scan(|$f: (f32, bool), $g: (f32, bool)| [] {
      $fa: f32 = $f.0; $fb: bool = $f.1; $ga: f32 = $g.0; $gb: bool = $g.1
      $ra: f32 = add $fa, $ga
      $rb: bool = or $fb, $gb
      $res: (f32, bool) = tuple($ra, $rb)
      $res
    }, $row)
    $s
  }, $x)
  $r
}";

/// A float row scan streamed into a row sum (the scan is not stored).
const FLOAT_SCAN_SUMS: &str = "fn float_scan_sums($x: [[f32]]) -> [f32] {
  $r: [f32] = map(|$row: [f32]| [] {
    $s: [f32] = scan(|$p: f32, $q: f32| [] { $t: f32 = add $p, $q; $t }, $row)
    $m: f32 = sum($s)
    $m
  }, $x)
  $r
}";

#[test]
fn exclusive_scans_over_rows_and_their_failures() {
    let i = |x: &i32| Value::I32(*x);
    let starts =
        |rows: &[Vec<i32>]| -> Vec<i32> { (0..rows.len()).map(|k| k as i32 - 20).collect() };
    let mut cs = cases(
        false,
        nonzero_i32,
        |rows| vec![nested(rows, i), Value::from(starts(rows))],
        |rows| {
            let out: Vec<Vec<i32>> = rows
                .iter()
                .zip(starts(rows))
                .map(|(row, s0)| {
                    let mut acc = s0;
                    row.iter()
                        .map(|v| {
                            let before = acc;
                            acc = acc.max(1000 / v);
                            before
                        })
                        .collect()
                })
                .collect();
            Some(nested(&out, i))
        },
    );
    let mut r = Rng::new(13);
    let rows = rows_of(&[64, 65, 3, 400], &mut r, nonzero_i32);
    for zeros in [vec![(3, 399), (3, 33)], vec![(1, 64), (3, 0)]] {
        cs.push(Case {
            label: format!("zeros at {zeros:?}"),
            args: vec![
                nested(&with(&rows, &zeros, 0), i),
                Value::from(starts(&rows)),
            ],
            want: None,
        });
    }
    assert_eq!(check(source("div_exclusive_scan"), 0.0, &cs), 2);
}

#[test]
fn filters_over_rows_keep_their_order() {
    let f = |x: &f32| Value::F32(*x);
    let cs = cases(
        false,
        |r| r.f64_in(-1.0, 1.0) as f32,
        |rows| vec![nested(rows, f)],
        |rows| {
            let kept: Vec<Vec<f32>> = rows
                .iter()
                .map(|r| r.iter().copied().filter(|&v| v > 0.0).collect())
                .collect();
            Some(nested(&kept, f))
        },
    );
    check(source("positives"), 0.0, &cs);

    let p = |x: &(i32, bool)| Value::Tuple(vec![Value::I32(x.0), Value::Bool(x.1)]);
    let item = |r: &mut Rng| (nonzero_i32(r), r.u64().is_multiple_of(7));
    let mut cs = cases(
        false,
        item,
        |rows| vec![nested(rows, p)],
        |rows| {
            let kept: Vec<Vec<(i32, bool)>> = rows
                .iter()
                .map(|r| {
                    r.iter()
                        .copied()
                        .filter(|&(v, b)| 100 / v > 3 || b)
                        .collect()
                })
                .collect();
            Some(nested(&kept, p))
        },
    );
    let mut r = Rng::new(17);
    let rows = rows_of(&[10, 129, 0, 257, 32], &mut r, item);
    for zeros in [vec![(3, 200), (3, 100), (4, 0)], vec![(1, 128)]] {
        cs.push(Case {
            label: format!("zeros at {zeros:?}"),
            args: vec![nested(&with(&rows, &zeros, (0, false)), p)],
            want: None,
        });
    }
    assert_eq!(check(source("div_filter"), 0.0, &cs), 2);
}

#[test]
fn scans_and_filters_composed() {
    let i = |x: &i64| Value::I64(*x);
    let cs = cases(
        false,
        |r| r.int_in(-50..50),
        |rows| vec![nested(rows, i)],
        |rows| {
            let kept: Vec<Vec<i64>> = scan_rows(rows, |a, b| a.wrapping_add(*b))
                .into_iter()
                .map(|r| r.into_iter().filter(|v| v % 3 == 0).collect())
                .collect();
            Some(nested(&kept, i))
        },
    );
    check(source("filter_of_scan"), 0.0, &cs);

    let cs = cases(
        false,
        |r| r.int_in(-50..50),
        |rows| vec![nested(rows, i)],
        |rows| {
            let odd: Vec<Vec<i64>> = rows
                .iter()
                .map(|r| r.iter().copied().filter(|v| v % 2 != 0).collect())
                .collect();
            Some(nested(&scan_rows(&odd, |a, b| a.wrapping_add(*b)), i))
        },
    );
    check(source("scan_of_filter"), 0.0, &cs);
}

#[test]
fn filters_of_rows() {
    let i = |x: &i64| Value::I64(*x);
    let cs = cases(
        false,
        |r| r.int_in(-100..100),
        |rows| vec![nested(rows, i)],
        |rows| {
            let kept: Vec<Vec<i64>> = rows
                .iter()
                .filter(|r| r.iter().sum::<i64>() > 0)
                .cloned()
                .collect();
            Some(nested(&kept, i))
        },
    );
    check(source("keep_rows_by_sum"), 0.0, &cs);

    // Rows shorter than 2 fail (reported at the first such row).
    let i = |x: &i32| Value::I32(*x);
    let cs = cases(
        false,
        |r| r.int_in(-100..100) as i32,
        |rows| vec![nested(rows, i)],
        |rows| {
            rows.iter().all(|r| r.len() >= 2).then(|| {
                let kept: Vec<Vec<i32>> = rows.iter().filter(|r| r[1] > 0).cloned().collect();
                nested(&kept, i)
            })
        },
    );
    let failing = cs.iter().filter(|c| c.want.is_none()).count();
    assert_eq!(check(source("keep_rows_by_second"), 0.0, &cs), failing);
    assert!(failing > 0 && failing < cs.len());
}

/// The kernels of `prog` whose names end with `suffix`, with their block-size reasons.
fn kernels<'p>(prog: &'p GpuProgram, suffix: &str) -> Vec<(&'p str, &'p str)> {
    prog.kernels
        .iter()
        .zip(&prog.blocks)
        .filter(|(k, _)| k.ends_with(suffix))
        .map(|(k, b)| (k.as_str(), b.why.as_str()))
        .collect()
}

/// Launched kernels of a list of steps (not looking into `ByShape`).
fn launched(prog: &GpuProgram, steps: &[Step]) -> Vec<String> {
    steps
        .iter()
        .filter_map(|s| match s {
            Step::Launch(l) => Some(prog.kernels[l.kernel as usize].clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn rows_get_a_warp_or_a_block_each() {
    for p in programs::group("rows") {
        let (name, c) = (p.name.as_str(), compiled(&p.text));
        if name.starts_with("keep_rows") {
            filter_of_rows_kernels(name, &c.fused);
            continue;
        }
        let filters = matches!(
            name,
            "positives" | "div_filter" | "filter_of_scan" | "scan_of_filter"
        );
        let scans = matches!(
            name,
            "affine_rows" | "div_exclusive_scan" | "filter_of_scan" | "scan_of_filter"
        );
        // Float scans follow dpl's order in one thread, the lanes of a tile in `.local`.
        let ordered_scans = name.starts_with("float_row_scan");
        for (inner, what) in [(Inner::Warp, "warp"), (Inner::Block, "block")] {
            let opts = Options {
                inner,
                ..Options::default()
            };
            let prog = dpl_cuda::compile_with(&c.fused, &opts).expect("compiles");
            assert!(
                prog.blocks.iter().all(|b| !b.why.contains("not applied")),
                "{name} {what}: {:?}",
                prog.blocks
            );
            let fill = kernels(&prog, &format!("_row_fill_{what}"));
            assert_eq!(fill.len(), 1, "{name} {what}: {:?}", prog.kernels);
            assert!(kernels(&prog, "_row_fill").is_empty(), "{name} {what}");
            let text = prog
                .kernel_text(prog.kernels.iter().position(|k| k == fill[0].0).unwrap())
                .unwrap();
            if filters {
                // Counted in parallel, compacted in parallel.
                assert_eq!(
                    kernels(&prog, &format!("_row_sizes_{what}")).len(),
                    1,
                    "{name}"
                );
                let needle = if inner == Inner::Warp {
                    "vote.sync.ballot.b32"
                } else {
                    "bar.sync"
                };
                assert!(text.contains(needle), "{name} {what}: no {needle}");
            } else {
                // The sizes are the rows' lengths: a thread per row, said so.
                let sizes = kernels(&prog, "_row_sizes");
                assert_eq!(sizes.len(), 1, "{name} {what}: {:?}", prog.kernels);
                assert!(sizes[0].1.contains("need only the rows' lengths"), "{name}");
            }
            if scans {
                let needle = if inner == Inner::Warp {
                    "shfl.sync.up"
                } else {
                    "bar.sync"
                };
                assert!(text.contains(needle), "{name} {what}: no {needle}");
            }
            if ordered_scans {
                assert!(text.contains(".local"), "{name} {what}: no lanes in .local");
                assert!(!text.contains("shfl.sync.up"), "{name} {what}: a warp scan");
            }
        }
        // `auto`: the warp version and the thread version, chosen by shape; a float scan
        // (one stream in every thread of a group) takes a thread per row, and says so.
        let opts = Options {
            inner: Inner::Auto,
            ..Options::default()
        };
        let prog = dpl_cuda::compile_with(&c.fused, &opts).expect("compiles");
        if ordered_scans {
            assert!(
                !prog
                    .plan
                    .steps
                    .iter()
                    .any(|s| matches!(s, Step::ByShape { .. })),
                "{name}: a group version"
            );
            assert!(
                prog.blocks.iter().any(|b| b.why.contains("float scan")),
                "{name}: {:?}",
                prog.blocks
            );
            continue;
        }
        let by_shape = prog.plan.steps.iter().find_map(|s| match s {
            Step::ByShape { warp, seq, .. } => Some((warp, seq)),
            _ => None,
        });
        let Some((warp, seq)) = by_shape else {
            panic!("{name}: no ByShape step")
        };
        assert!(
            launched(&prog, warp)
                .iter()
                .any(|k| k.ends_with("_row_fill_warp")),
            "{name}"
        );
        assert!(
            launched(&prog, seq)
                .iter()
                .any(|k| k.ends_with("_row_fill")),
            "{name}"
        );
        assert!(prog.blocks.iter().all(|b| !b.why.contains("not applied")));
    }
}

/// A filter of rows: its sizes and fill kernels are a warp / a block per row.
fn filter_of_rows_kernels(name: &str, f: &dpl_core::ir::Function) {
    for (inner, what) in [(Inner::Warp, "warp"), (Inner::Block, "block")] {
        let opts = Options {
            inner,
            ..Options::default()
        };
        let prog = dpl_cuda::compile_with(f, &opts).expect("compiles");
        assert!(prog.blocks.iter().all(|b| !b.why.contains("not applied")));
        for k in ["row_filter_sizes", "row_filter"] {
            let suffix = format!("_{k}_{what}");
            assert_eq!(
                kernels(&prog, &suffix).len(),
                1,
                "{name}: {:?}",
                prog.kernels
            );
        }
    }
}

#[test]
fn rows_a_group_cannot_write_keep_a_thread_and_say_so() {
    // A per-row histogram (a `scatter_reduce` as the row) runs a thread per row: every
    // kernel of the map says so.
    let c = compiled(source("row_histograms"));
    for inner in [Inner::Warp, Inner::Block, Inner::Auto] {
        let opts = Options {
            inner,
            ..Options::default()
        };
        let prog = dpl_cuda::compile_with(&c.fused, &opts).expect("compiles");
        assert!(kernels(&prog, "_row_fill").len() == 1, "{inner:?}");
        assert!(
            prog.blocks
                .iter()
                .all(|b| b.why.contains("is not applied to sequences of rows")),
            "{inner:?}: {:?}",
            prog.blocks
        );
    }
}

/// Sectors moved over the ideal, summed over the launches of kernels ending with
/// `suffix`, for one run of `prog`.
fn sectors(prog: &GpuProgram, args: Vec<Value>, suffix: &str) -> f64 {
    let d = SimDriver::default();
    dpl_cuda::run(prog, &d, args).expect("runs");
    let (mut moved, mut ideal) = (0, 0);
    for (k, r) in d.take_reports() {
        if k.ends_with(suffix) {
            moved += r.sectors_moved;
            ideal += r.sectors_ideal;
        }
    }
    moved as f64 / ideal.max(1) as f64
}

#[test]
fn a_warp_per_row_reads_and_writes_rows_coalesced() {
    // 24 rows of 3000 `f32`s scaled: a thread per row touches a sector per element and
    // access; a warp per row moves about the ideal.
    let mut r = Rng::new(23);
    let rows = rows_of(&[3000; 24], &mut r, |r| r.f64_in(-1.0, 1.0) as f32);
    let args = vec![nested(&rows, |v| Value::F32(*v)), Value::F32(2.0)];
    let c = compiled(source("scale_rows"));
    let compile = |inner| {
        let opts = Options {
            inner,
            ..Options::default()
        };
        dpl_cuda::compile_with(&c.fused, &opts).expect("compiles")
    };
    let thread = sectors(&compile(Inner::Seq), args.clone(), "_row_fill");
    let warp = sectors(&compile(Inner::Warp), args.clone(), "_row_fill_warp");
    let block = sectors(&compile(Inner::Block), args, "_row_fill_block");
    eprintln!("row_fill sectors / ideal: thread {thread:.3}, warp {warp:.3}, block {block:.3}");
    assert!(warp <= 1.15, "warp per row: {warp:.3}x the ideal");
    assert!(block <= 1.15, "block per row: {block:.3}x the ideal");
    assert!(thread >= 3.0, "thread per row: {thread:.3}x the ideal");
}
