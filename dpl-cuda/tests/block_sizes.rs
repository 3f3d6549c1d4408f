//! Block sizes other than the default (`Options::block`, what `#[parallel(block = N)]`
//! gives) and grids capped at run time (`Count::Resident`): programs compiled with 32 to
//! 1024 threads per block run on the simulator and agree with plain Rust, at sizes around
//! the tile boundaries of each block size; the kernels marked `any_grid` give the same
//! results on a driver that keeps only a few blocks resident; `.maxntid` matches every
//! launch.

mod support;

use std::sync::{Mutex, OnceLock, PoisonError};

use dpl_core::interp::Value;
use dpl_cuda::plan::{Count, Step};
use dpl_cuda::sim::SimDriver;
use dpl_cuda::{Driver, GpuProgram, Inner, LaunchArg, Options};
use support::programs::{self, source};
use support::*;

const BLOCKS: [u32; 5] = [32, 64, 128, 512, 1024];

fn driver() -> &'static SimDriver {
    static D: OnceLock<SimDriver> = OnceLock::new();
    D.get_or_init(SimDriver::default)
}

fn program(src: &str, inner: Inner, block: Option<u32>) -> GpuProgram {
    let c = compiled(src);
    dpl_cuda::compile_with(
        &c.fused,
        &Options {
            inner,
            block,
            ..Options::default()
        },
    )
    .unwrap_or_else(|e| panic!("{block:?}: {e}"))
}

/// Sizes around the tiles (4 rounds of a block; the look-back scan's are 1024 elements
/// from 256 threads up) and grid-stride turns of `block`.
fn sizes(block: u32) -> Vec<usize> {
    let t = 4 * block as usize;
    let mut v = vec![
        0,
        1,
        33,
        1023,
        1024,
        1025,
        t - 1,
        t,
        t + 1,
        3 * t + 5,
        20_000,
    ];
    v.sort_unstable();
    v.dedup();
    v
}

fn i64_vec(r: &mut Rng, n: usize) -> Vec<i64> {
    (0..n).map(|_| r.int_in(-1000..1000)).collect()
}

fn as_i64s(v: &Value) -> Vec<i64> {
    match v {
        Value::Seq(xs) => xs
            .iter()
            .map(|x| match x {
                Value::I64(y) => *y,
                other => panic!("not an i64: {other:?}"),
            })
            .collect(),
        other => panic!("not a sequence: {other:?}"),
    }
}

fn i64_seq(xs: &[i64]) -> Value {
    Value::Seq(std::sync::Arc::new(
        xs.iter().map(|&x| Value::I64(x)).collect(),
    ))
}

fn nested(rows: impl Iterator<Item = Value>) -> Value {
    Value::Seq(std::sync::Arc::new(rows.collect()))
}

fn run(p: &GpuProgram, d: &impl Driver, args: Vec<Value>) -> Value {
    dpl_cuda::run(p, d, args).unwrap_or_else(|e| panic!("{}: {e}", p.name))
}

#[test]
fn maxntid_matches_every_launch() {
    fn launches(steps: &[Step], out: &mut Vec<(u32, u32)>) {
        for s in steps {
            match s {
                Step::Launch(l) => out.push((l.kernel, l.block)),
                Step::If { then, else_, .. } => {
                    launches(then, out);
                    launches(else_, out);
                }
                Step::ByShape { warp, seq, .. } => {
                    launches(warp, out);
                    launches(seq, out);
                }
                _ => {}
            }
        }
    }
    for prog in programs::group("combinators") {
        let (name, src) = (&prog.name, &prog.text);
        for (inner, block) in [
            (Inner::Seq, None),
            (Inner::Seq, Some(64)),
            (Inner::Block, None),
            (Inner::Auto, Some(1024)),
        ] {
            let p = program(src, inner, block);
            let mut ls = Vec::new();
            launches(&p.plan.steps, &mut ls);
            for (k, b) in ls {
                let text = p.kernel_text(k as usize).expect("the kernel's text");
                assert!(
                    text.contains(&format!(".maxntid {b}, 1, 1")),
                    "{name} {inner:?} {block:?}: kernel {k} launched with {b} threads:\n{text}"
                );
                assert_eq!(p.blocks[k as usize].block, b, "{name}");
                // A kernel whose size the algorithm fixes (a float scan's warp per tile)
                // says so; every other kernel takes the attribute's size.
                let fixed = p.blocks[k as usize]
                    .why
                    .starts_with("fixed by the algorithm");
                if let (Some(want), false) = (block, fixed) {
                    assert_eq!(b, want, "{name}: the attribute's size is used everywhere");
                }
            }
            assert_eq!(p.blocks.len(), p.kernels.len());
        }
    }
    // Defaults: 256 threads, 128 for a block per element.
    let p = program(source("row_sums"), Inner::Block, None);
    assert_eq!(p.blocks[0].block, 128, "{:?}", p.blocks);
    assert!(
        p.ptx
            .contains("128 threads per block (the default for a block per element")
    );
    let p = program(source("saxpy"), Inner::Seq, None);
    assert_eq!(p.blocks[0].block, 256);
}

#[test]
fn invalid_block_sizes_are_rejected() {
    let c = compiled(source("saxpy"));
    for b in [0, 16, 48, 1056, 2048] {
        let e = dpl_cuda::compile_with(
            &c.fused,
            &Options {
                block: Some(b),
                ..Options::default()
            },
        )
        .expect_err("an invalid block size");
        assert!(e.message.contains("multiple of 32 from 32 to 1024"), "{e}");
    }
}

#[test]
fn maps_and_reductions_at_every_block_size() {
    for b in BLOCKS {
        let saxpy = program(source("saxpy"), Inner::Seq, Some(b));
        let sum = program(source("sum_i64"), Inner::Seq, Some(b));
        for n in sizes(b) {
            let mut r = Rng::new(u64::from(b) * 1000 + n as u64);
            let x: Vec<f32> = (0..n).map(|_| r.f64_in(-100.0, 100.0) as f32).collect();
            let y: Vec<f32> = (0..n).map(|_| r.f64_in(-100.0, 100.0) as f32).collect();
            let got = run(
                &saxpy,
                driver(),
                vec![Value::F32(1.5), seq(x.clone()), seq(y.clone())],
            );
            let want: Vec<f32> = x.iter().zip(&y).map(|(a, c)| 1.5 * a + c).collect();
            assert_eq!(got, seq(want), "saxpy, block {b}, n = {n}");

            let v = i64_vec(&mut r, n);
            let got = run(&sum, driver(), vec![i64_seq(&v)]);
            assert_eq!(got, Value::I64(v.iter().sum()), "sum, block {b}, n = {n}");
        }
    }
}

#[test]
fn scans_and_filters_at_every_block_size() {
    for b in BLOCKS {
        let scan = program(source("scan_of_map"), Inner::Seq, Some(b));
        let excl = program(source("exclusive_scan_max"), Inner::Seq, Some(b));
        let filter = program(source("filter_of_map"), Inner::Seq, Some(b));
        for n in sizes(b) {
            let mut r = Rng::new(u64::from(b) * 7919 + n as u64);
            let v = i64_vec(&mut r, n);
            let got = as_i64s(&run(&scan, driver(), vec![i64_seq(&v)]));
            let want: Vec<i64> = v
                .iter()
                .scan(0i64, |acc, x| {
                    *acc += 2 * x;
                    Some(*acc)
                })
                .collect();
            assert_eq!(got, want, "scan, block {b}, n = {n}");

            let got = as_i64s(&run(&excl, driver(), vec![i64_seq(&v), Value::I64(-7)]));
            let mut acc = -7i64;
            let mut want = Vec::new();
            for x in &v {
                want.push(acc);
                acc = acc.max(x - 5);
            }
            assert_eq!(got, want, "exclusive scan, block {b}, n = {n}");

            let got = as_i64s(&run(&filter, driver(), vec![i64_seq(&v)]));
            let want: Vec<i64> = v.iter().map(|x| 3 * x + 1).filter(|y| y % 2 == 0).collect();
            assert_eq!(got, want, "filter, block {b}, n = {n}");
        }
    }
}

#[test]
fn nested_rows_at_every_block_size() {
    for b in BLOCKS {
        for inner in [Inner::Seq, Inner::Warp, Inner::Block] {
            let p = program(source("row_sums"), inner, Some(b));
            let scan = program(source("row_scan"), inner, Some(b));
            for rows in [0usize, 1, 40, 700] {
                let mut r = Rng::new(u64::from(b) + rows as u64);
                let data: Vec<Vec<f32>> = (0..rows)
                    .map(|_| {
                        let len = r.int_in(0..70) as usize;
                        (0..len).map(|_| r.int_in(-50..50) as f32).collect()
                    })
                    .collect();
                let arg = nested(data.iter().map(|row| seq(row.clone())));
                let got = run(&p, driver(), vec![arg]);
                // Small integers: every order of summation is exact.
                let want: Vec<f32> = data.iter().map(|row| row.iter().sum()).collect();
                assert_eq!(
                    got,
                    seq(want),
                    "row sums, {inner:?}, block {b}, {rows} rows"
                );

                let ints: Vec<Vec<i64>> = data
                    .iter()
                    .map(|row| row.iter().map(|&x| x as i64).collect())
                    .collect();
                let arg = nested(ints.iter().map(|row| i64_seq(row)));
                let got = run(&scan, driver(), vec![arg]);
                let want = nested(ints.iter().map(|row| {
                    let s: Vec<i64> = row
                        .iter()
                        .scan(0, |a, x| {
                            *a += x;
                            Some(*a)
                        })
                        .collect();
                    i64_seq(&s)
                }));
                assert_eq!(got, want, "row scans, {inner:?}, block {b}, {rows} rows");
            }
        }
    }
}

/// The simulator, keeping only `resident` blocks resident, and recording the grids of the
/// launches.
struct FewBlocks {
    sim: SimDriver,
    resident: u32,
    grids: Mutex<Vec<(String, u32)>>,
}

impl Driver for FewBlocks {
    type Module = <SimDriver as Driver>::Module;
    fn load(&self, ptx: &str) -> Result<Self::Module, String> {
        self.sim.load(ptx)
    }
    fn alloc_zeroed(&self, bytes: usize) -> Result<u64, String> {
        self.sim.alloc_zeroed(bytes)
    }
    fn alloc(&self, bytes: usize) -> Result<u64, String> {
        self.sim.alloc(bytes)
    }
    fn write(&self, dst: u64, data: &[u8]) -> Result<(), String> {
        self.sim.write(dst, data)
    }
    fn read(&self, src: u64, out: &mut [u8]) -> Result<(), String> {
        self.sim.read(src, out)
    }
    fn copy(&self, src: u64, dst: u64, bytes: usize) -> Result<(), String> {
        self.sim.copy(src, dst, bytes)
    }
    fn launch(
        &self,
        module: &Self::Module,
        kernel: &str,
        grid: u32,
        block: u32,
        args: &[LaunchArg],
    ) -> Result<(), String> {
        self.grids
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((kernel.to_string(), grid));
        self.sim.launch(module, kernel, grid, block, args)
    }
    fn free(&self, addr: u64) -> Result<(), String> {
        self.sim.free(addr)
    }
    fn resident_blocks(&self, _: &Self::Module, _: &str, _: u32) -> Result<u32, String> {
        Ok(self.resident)
    }
}

#[test]
fn grid_stride_kernels_are_correct_with_any_resident_count() {
    for resident in [1, 3] {
        let d = FewBlocks {
            sim: SimDriver::default(),
            resident,
            grids: Mutex::new(Vec::new()),
        };
        // Enough elements for more than 3 blocks of the reduction (64 per thread).
        let n = 20_000;
        let mut r = Rng::new(resident.into());
        let v = i64_vec(&mut r, n);
        let sum = program(source("sum_i64"), Inner::Seq, Some(64));
        assert_eq!(run(&sum, &d, vec![i64_seq(&v)]), Value::I64(v.iter().sum()));
        let scan = program(source("scan_of_map"), Inner::Seq, Some(64));
        let got = as_i64s(&run(&scan, &d, vec![i64_seq(&v)]));
        assert_eq!(got.last().copied(), Some(2 * v.iter().sum::<i64>()));
        let p = program(source("row_sums"), Inner::Block, None);
        let rows: Vec<Vec<f32>> = (0..50).map(|i| vec![i as f32; i % 7]).collect();
        let arg = nested(rows.iter().map(|row| seq(row.clone())));
        let want: Vec<f32> = rows.iter().map(|row| row.iter().sum()).collect();
        assert_eq!(run(&p, &d, vec![arg]), seq(want));
        // The grid-stride kernels (map, reduce, map_block) ran with the resident count;
        // the scan's tile kernels with one block per tile.
        let grids = d.grids.lock().unwrap_or_else(PoisonError::into_inner);
        for (k, g) in grids.iter() {
            if k.ends_with("_map") || k.ends_with("_reduce") || k.ends_with("_map_block") {
                assert_eq!(*g, resident, "{k}");
            }
            if k.ends_with("_scan") || k.ends_with("_scan_lookback") {
                let tile = dpl_cuda::scan_items(64, &[dpl_core::ir::Scalar::I64]) as usize * 64;
                assert_eq!(*g as usize, n.div_ceil(tile), "{k}");
            }
        }
    }
}

#[test]
fn any_grid_launches_are_capped_by_the_resident_count() {
    fn check(steps: &[Step]) {
        for s in steps {
            match s {
                Step::Launch(l) => {
                    let mentions = format!("{:?}", l.grid).contains("Resident");
                    assert_eq!(mentions, l.any_grid, "{l:?}");
                    if l.any_grid {
                        assert!(
                            matches!(&l.grid, Count::Max(a, _) if matches!(&**a, Count::Min(..))),
                            "{l:?}"
                        );
                    }
                }
                Step::If { then, else_, .. } => {
                    check(then);
                    check(else_);
                }
                Step::ByShape { warp, seq, .. } => {
                    check(warp);
                    check(seq);
                }
                _ => {}
            }
        }
    }
    for p in programs::group("combinators") {
        check(&program(&p.text, Inner::Auto, None).plan.steps);
    }
}
