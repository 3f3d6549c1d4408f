//! The streaming kernels (map, reduce, scan) move within 1.1x of the ideal number of
//! 32-byte sectors on the simulator (dpl-sim's counters), and report their figures.

mod support;

use dpl_core::interp::Value;
use dpl_cuda::sim::SimDriver;
use dpl_cuda::{Inner, Options};
use support::programs::source;
use support::*;

/// Runs `src` once on `args` and returns (kernel, sectors moved, ideal, bank conflicts,
/// instructions per element) for each launch.
fn figures(src: &str, args: Vec<Value>, n: usize) -> Vec<(String, u64, u64, u64, f64)> {
    figures_with(src, &Options::default(), args, n)
}

/// [`figures`] with compilation options.
fn figures_with(
    src: &str,
    opts: &Options,
    args: Vec<Value>,
    n: usize,
) -> Vec<(String, u64, u64, u64, f64)> {
    let c = compiled(src);
    let prog = dpl_cuda::compile_with(&c.fused, opts).expect("compiles");
    let driver = SimDriver::default();
    dpl_cuda::run(&prog, &driver, args).expect("runs");
    driver
        .take_reports()
        .into_iter()
        .map(|(k, r)| {
            let per = r.thread_instructions as f64 / n as f64;
            (k, r.sectors_moved, r.sectors_ideal, r.bank_conflicts, per)
        })
        .collect()
}

fn check(src: &str, args: Vec<Value>, n: usize) {
    for (k, moved, ideal, conflicts, per) in figures(src, args, n) {
        let ratio = moved as f64 / ideal.max(1) as f64;
        eprintln!(
            "{k}: {moved} sectors, ideal {ideal} ({ratio:.3}x), {conflicts} bank conflicts, {per:.1} thread instructions per element"
        );
        // Launches that move almost nothing (finishing passes) have no meaningful ratio.
        if ideal >= 64 {
            assert!(ratio <= 1.1, "{k}: {moved} sectors for an ideal of {ideal}");
        }
    }
}

const N: usize = 1 << 17;

#[test]
fn map_is_coalesced() {
    let mut r = Rng::new(1);
    check(
        source("saxpy"),
        vec![Value::F32(2.0), f32s(&mut r, N, 1.0), f32s(&mut r, N, 1.0)],
        N,
    );
}

#[test]
fn reduce_is_coalesced() {
    let mut r = Rng::new(2);
    check(source("sum_f32"), vec![f32s(&mut r, N, 1.0)], N);
    check(
        source("dot"),
        vec![f64s(&mut r, N, 1.0), f64s(&mut r, N, 1.0)],
        N,
    );
}

#[test]
fn scan_is_coalesced() {
    let mut r = Rng::new(3);
    check(source("scan_of_map"), vec![i64s(&mut r, N, -100, 100)], N);
}

/// A float scan in dpl's scan order (a warp per tile, each lane's run of 64 consecutive
/// elements read from shared memory) stages its tiles in coalesced rounds, and the padding
/// of the staged tile keeps both the rounds and the lanes' runs free of bank conflicts.
#[test]
fn ordered_float_scan_is_coalesced_without_bank_conflicts() {
    let mut r = Rng::new(6);
    let x = f64s(&mut r, N, 1000.0);
    check(source("float_scan"), vec![x.clone()], N);
    let fs = figures(source("float_scan"), vec![x], N);
    let per: f64 = fs.iter().map(|f| f.4).sum();
    eprintln!("float_scan: {per:.1} thread instructions per element in all");
    for (k, _, _, conflicts, _) in fs {
        assert!(k.contains("scan_ordered"), "{k}");
        assert_eq!(conflicts, 0, "{k}: bank conflicts");
    }
}

/// The single-pass scan with decoupled look-back (the default) reads each element once:
/// it moves about 2/3 of the sectors of reduce-then-scan (which reads the input twice),
/// for `i64` elements and for pairs, and runs fewer instructions per element.
#[test]
fn lookback_scan_moves_fewer_sectors_than_reduce_then_scan() {
    use dpl_cuda::Scan;
    let mut r = Rng::new(4);
    let x = i64s(&mut r, N, -100, 100);
    let (a, b) = (i64s(&mut r, N, -3, 4), i64s(&mut r, N, -100, 100));
    for (name, src, args) in [
        ("scan_of_map i64", source("scan_of_map"), vec![x]),
        ("affine_scan (i64, i64)", source("affine_scan"), vec![a, b]),
    ] {
        let total = |scan: Scan| {
            let opts = Options {
                scan,
                ..Options::default()
            };
            let fs = figures_with(src, &opts, args.clone(), N);
            let sectors: u64 = fs.iter().map(|f| f.1).sum();
            let ideal: u64 = fs.iter().map(|f| f.2).sum();
            let per: f64 = fs.iter().map(|f| f.4).sum();
            eprintln!(
                "{name}, {scan:?}: {} kernels, {sectors} sectors (ideal {ideal}), {per:.1} thread instructions per element",
                fs.len()
            );
            (sectors, per)
        };
        let (lb, lb_per) = total(Scan::LookBack);
        let (rts, rts_per) = total(Scan::ReduceThenScan);
        assert!(
            (lb as f64) < 0.75 * rts as f64,
            "{name}: look-back {lb} sectors vs reduce-then-scan {rts}"
        );
        assert!(
            lb_per < rts_per,
            "{name}: {lb_per} vs {rts_per} instructions"
        );
    }
}

/// The offsets of a ragged result (an exclusive scan of the row sizes) with the look-back
/// scan read the sizes once: fewer sectors than with reduce-then-scan's two passes.
#[test]
fn lookback_offsets_move_fewer_sectors() {
    use dpl_cuda::Scan;
    let counts = Value::seq((0..N as u32).map(|i| Value::U32(i % 3)).collect());
    let offsets = |scan: Scan| -> u64 {
        let opts = Options {
            scan,
            ..Options::default()
        };
        let fs = figures_with(source("rows_from_counts"), &opts, vec![counts.clone()], N);
        let sectors: u64 = fs
            .iter()
            .filter(|f| f.0.contains("offsets") || f.0.contains("scan_totals"))
            .map(|f| f.1)
            .sum();
        let all: u64 = fs.iter().map(|f| f.1).sum();
        eprintln!("rows_from_counts, {scan:?}: offsets {sectors} sectors, all kernels {all}");
        sectors
    };
    let (lb, rts) = (offsets(Scan::LookBack), offsets(Scan::ReduceThenScan));
    assert!(
        (lb as f64) < 0.8 * rts as f64,
        "offsets: look-back {lb} sectors vs reduce-then-scan {rts}"
    );
}

/// The 5-point Laplacian of a `g x g` grid in CSR form: (values, columns) per row.
fn laplacian(g: usize) -> (Value, Value, usize) {
    let (mut vals, mut cols, mut nnz) = (Vec::new(), Vec::new(), 0);
    for y in 0..g {
        for x in 0..g {
            let i = y * g + x;
            let mut v = Vec::new();
            let mut c = Vec::new();
            let mut put = |j: usize, a: f32| {
                c.push(Value::U32(j as u32));
                v.push(Value::F32(a));
            };
            if y > 0 {
                put(i - g, -1.0);
            }
            if x > 0 {
                put(i - 1, -1.0);
            }
            put(i, 4.0);
            if x + 1 < g {
                put(i + 1, -1.0);
            }
            if y + 1 < g {
                put(i + g, -1.0);
            }
            nnz += v.len();
            vals.push(Value::seq(v));
            cols.push(Value::seq(c));
        }
    }
    (Value::seq(vals), Value::seq(cols), nnz)
}

/// Sectors moved by the SpMV kernel (the `map`), and the result.
fn spmv_sectors(inner: Inner, args: Vec<Value>) -> (u64, Value) {
    let c = compiled(source("spmv_csr"));
    let prog = dpl_cuda::compile_with(
        &c.fused,
        &Options {
            inner,
            ..Options::default()
        },
    )
    .expect("compiles");
    let driver = SimDriver::default();
    let y = dpl_cuda::run(&prog, &driver, args).expect("runs");
    let moved = driver
        .take_reports()
        .into_iter()
        .filter(|(k, _)| k.contains("_map"))
        .map(|(_, r)| r.sectors_moved)
        .sum();
    (moved, y)
}

#[test]
fn vector_csr_moves_fewer_sectors_than_scalar_csr() {
    let g = 48;
    let (vals, cols, nnz) = laplacian(g);
    let mut r = Rng::new(4);
    let x = f32s(&mut r, g * g, 1.0);
    let args = vec![vals, cols, x];
    let (scalar, ys) = spmv_sectors(Inner::Seq, args.clone());
    let (vector, yv) = spmv_sectors(Inner::Warp, args.clone());
    let (block, yb) = spmv_sectors(Inner::Block, args);
    let per = |s: u64| s as f64 / nnz as f64;
    eprintln!(
        "5-point Laplacian {g}x{g} ({nnz} nonzeros): scalar CSR {:.3} sectors per nonzero, \
         vector CSR (warp per row) {:.3}, block per row {:.3}",
        per(scalar),
        per(vector),
        per(block)
    );
    assert!(ys.close_to(&yv, 1e-5) && ys.close_to(&yb, 1e-5));
    assert!(
        vector < scalar,
        "vector CSR moved {vector} sectors, scalar CSR {scalar}"
    );
}

#[test]
fn auto_rule_mirrors_the_cpu_rule() {
    use dpl_cuda::plan::{RESIDENT_THREADS, warp_per_row};
    // Few rows: a warp each.
    assert!(warp_per_row(1000, 5000, 5));
    // Many short rows: a thread each.
    let rows = 4 * RESIDENT_THREADS;
    assert!(!warp_per_row(rows, 5 * rows, 5));
    // Many rows but one holds more than a thread's share: a warp each.
    assert!(warp_per_row(
        rows,
        5 * rows,
        5 * rows / RESIDENT_THREADS + 1
    ));
}

/// A map over a per-row scan streams the scan (one pass per row), not a scan per element:
/// the thread instructions per element stay bounded for a long row.
#[test]
fn streamed_row_scan_is_one_pass() {
    let n = 4096;
    let mut r = Rng::new(5);
    let row = i64s(&mut r, n, -100, 100);
    let args = vec![Value::seq(vec![row]), i64s(&mut r, 1, 0, 10)];
    for (k, _, _, _, per) in figures(source("running_balances"), args, n) {
        eprintln!("{k}: {per:.1} thread instructions per element");
        assert!(per < 400.0, "{k}: {per:.1} thread instructions per element");
    }
}

/// 8- and 16-bit sequences are read and written at their own width (`ld.global.u8`, ...),
/// not widened in memory: a map over `u8` (and a sum of `i16`) is as coalesced as one over
/// `u32`, and a `u8` map moves about a quarter of the `u32` map's sectors.
#[test]
fn narrow_integers_are_coalesced_at_their_width() {
    let map_src = |t: &str| {
        format!(
            "fn f($x: [{t}], $y: [{t}]) -> [{t}] {{\n  $r: [{t}] = map(|$a: {t}, $b: {t}| [] {{ $s: {t} = add $a, $b; $s }}, $x, $y)\n  $r\n}}"
        )
    };
    let mut r = Rng::new(5);
    let mut bytes = || Value::seq((0..N).map(|_| Value::U8(r.u64() as u8)).collect());
    let (x8, y8) = (bytes(), bytes());
    let mut r = Rng::new(6);
    let words = u32s(&mut r, N, 0, i64::from(u32::MAX));
    check(&map_src("u8"), vec![x8.clone(), y8.clone()], N);
    let moved =
        |src: &str, args: Vec<Value>| -> u64 { figures(src, args, N).iter().map(|f| f.1).sum() };
    let (narrow, wide) = (
        moved(&map_src("u8"), vec![x8, y8]),
        moved(&map_src("u32"), vec![words.clone(), words]),
    );
    eprintln!("map: u8 {narrow} sectors, u32 {wide}");
    assert!(
        (narrow as f64) < 0.3 * wide as f64,
        "a u8 map moves {narrow} sectors, a u32 one {wide}"
    );
    let sum_src = "fn f($x: [i16]) -> i16 {\n  $s: i16 = sum($x)\n  $s\n}";
    let mut r = Rng::new(7);
    let halves = Value::seq((0..N).map(|_| Value::I16(r.u64() as i16)).collect());
    check(sum_src, vec![halves], N);
}

/// A float row scan in dpl's order ([`dpl_cuda`]'s `elem/scan_order.rs`): one thread per
/// row runs the order's machine (a tile's lanes in `.local`); a warp or a block per row
/// evaluates and stores each chunk in parallel and every thread runs the machine on the
/// chunk's values. The thread instructions per element stay bounded (and are reported).
/// `f16` and `bf16` sequences are read and written as their 16 bits (`ld.global.u16`),
/// not widened in memory: a map over `f16` is as coalesced as one over `f32` and moves
/// about half of its sectors; an ordered `bf16` sum is coalesced too.
#[test]
fn half_floats_are_coalesced_at_their_width() {
    use dpl_core::float16::bf16;
    let map_src = |t: &str| {
        format!(
            "fn f($x: [{t}], $y: [{t}]) -> [{t}] {{\n  $r: [{t}] = map(|$a: {t}, $b: {t}| [] {{ $p: {t} = mul $a, $b; $s: {t} = add $p, $a; $s }}, $x, $y)\n  $r\n}}"
        )
    };
    let mut r = Rng::new(11);
    let (x16, y16) = (f16s(&mut r, N, 4.0), f16s(&mut r, N, 4.0));
    let mut r = Rng::new(12);
    let (x32, y32) = (f32s(&mut r, N, 4.0), f32s(&mut r, N, 4.0));
    check(&map_src("f16"), vec![x16.clone(), y16.clone()], N);
    let moved =
        |src: &str, args: Vec<Value>| -> u64 { figures(src, args, N).iter().map(|f| f.1).sum() };
    let (narrow, wide) = (
        moved(&map_src("f16"), vec![x16, y16]),
        moved(&map_src("f32"), vec![x32, y32]),
    );
    eprintln!("map: f16 {narrow} sectors, f32 {wide}");
    assert!(
        (narrow as f64) < 0.55 * wide as f64,
        "an f16 map moves {narrow} sectors, an f32 one {wide}"
    );
    let sum_src = "fn f($x: [bf16]) -> bf16 {\n  $s: bf16 = sum($x)\n  $s\n}";
    let mut r = Rng::new(13);
    let b = Value::seq(
        (0..N)
            .map(|_| Value::BF16(bf16::from_f32(r.f32_in(-4.0, 4.0))))
            .collect(),
    );
    check(sum_src, vec![b], N);
}

#[test]
fn float_row_scan_in_order_figures() {
    let (rows, len) = (64, 2100);
    let n = rows * len;
    let mut r = Rng::new(9);
    let row = |r: &mut Rng| f64s(r, len, 100.0);
    let args = vec![Value::seq((0..rows).map(|_| row(&mut r)).collect())];
    for (inner, bound) in [
        (Inner::Seq, 80.0),
        (Inner::Warp, 2000.0),
        (Inner::Block, 8000.0),
    ] {
        let opts = Options {
            inner,
            ..Options::default()
        };
        let figs = figures_with(source("float_row_scan"), &opts, args.clone(), n);
        for (k, _, _, _, per) in figs {
            eprintln!("{inner:?} {k}: {per:.1} thread instructions per element");
            assert!(
                per < bound,
                "{inner:?} {k}: {per:.1} thread instructions per element"
            );
        }
    }
}

/// The thread instructions per element of a saxpy over `f16` (`alpha * x + y`, each
/// operation rounded once to `f16`), reported next to the same saxpy over `f32`: the cost
/// of holding the 16-bit floats as `f32` values, rounding after each operation and
/// widening and narrowing them in memory. The bound keeps the measured figure.
#[test]
fn f16_saxpy_instructions_per_element() {
    use dpl_core::float16::f16;
    let src = |t: &str| {
        format!(
            "fn saxpy($alpha: {t}, $x: [{t}], $y: [{t}]) -> [{t}] {{\n  $r: [{t}] = map(|$a: {t}, $b: {t}| [] {{ $t: {t} = mul $alpha, $a; $u: {t} = add $t, $b; $u }}, $x, $y)\n  $r\n}}"
        )
    };
    let mut r = Rng::new(14);
    let (x16, y16) = (f16s(&mut r, N, 4.0), f16s(&mut r, N, 4.0));
    let mut r = Rng::new(15);
    let (x32, y32) = (f32s(&mut r, N, 4.0), f32s(&mut r, N, 4.0));
    let per =
        |src: &str, args: Vec<Value>| -> f64 { figures(src, args, N).iter().map(|f| f.4).sum() };
    let half = per(&src("f16"), vec![Value::F16(f16::from_f32(1.5)), x16, y16]);
    let single = per(&src("f32"), vec![Value::F32(1.5), x32, y32]);
    eprintln!("saxpy: f16 {half:.1} thread instructions per element, f32 {single:.1}");
    assert!(
        half < BOUND_F16_SAXPY,
        "an f16 saxpy runs {half:.1} thread instructions per element"
    );
}

/// The most thread instructions per element an `f16` saxpy may run (see
/// [`f16_saxpy_instructions_per_element`]).
const BOUND_F16_SAXPY: f64 = 62.0;
