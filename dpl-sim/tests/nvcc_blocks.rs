//! dpl-sim against nvcc-compiled block-level algorithms: a bitonic sort and a radix-sort
//! pass in shared memory (`sort.cu`), and cooperative-groups tiles (`cg.cu`). All
//! comparisons are exact.

#[path = "../fixtures/support.rs"]
mod support;

use support::{Fixture, Rng, assert_same, blocks_for, dim1};

const SORT: &str = include_str!("../fixtures/sort.ptx");
const CG: &str = include_str!("../fixtures/cg.ptx");

#[test]
fn bitonic_sort_of_each_block() {
    let fx = Fixture::new("sort.ptx", SORT);
    let mut rng = Rng::new(80);
    for &threads in &[1u32, 32, 128, 512] {
        let size = 2 * threads as usize;
        for &n in &[1usize, 2, 63, 64, 1000, 3000] {
            // Few distinct values in half the cases, so equal keys are compared too.
            let keys: Vec<u32> = (0..n)
                .map(|i| {
                    if i % 2 == 0 {
                        rng.next_u32() % 8
                    } else {
                        rng.next_u32()
                    }
                })
                .collect();
            let dk = fx.upload(&keys);
            fx.launch(
                "bitonic_sort_block",
                dim1(n.div_ceil(size) as u32),
                dim1(threads),
                2 * threads * 4,
                &[(&dk).into(), (n as i32).into()],
            );
            let mut want = keys.clone();
            for chunk in want.chunks_mut(size) {
                chunk.sort_unstable();
            }
            assert_same(
                &format!("bitonic threads={threads} n={n}"),
                &fx.download(&dk),
                &want,
            );
        }
    }
}

#[test]
fn stable_radix_pass_of_each_block() {
    let fx = Fixture::new("sort.ptx", SORT);
    let mut rng = Rng::new(81);
    for &n in &[1usize, 100, 256, 257, 2000] {
        let keys: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
        for shift in [0u32, 4, 13, 28] {
            let (din, dout) = (fx.upload(&keys), fx.zeros::<u32>(n));
            fx.launch(
                "radix_pass_block",
                dim1(blocks_for(n, 256)),
                dim1(256),
                0,
                &[
                    (&din).into(),
                    (&dout).into(),
                    (n as i32).into(),
                    (shift as i32).into(),
                ],
            );
            let mut want = keys.clone();
            for chunk in want.chunks_mut(256) {
                chunk.sort_by_key(|&k| (k >> shift) & 15); // stable
            }
            assert_same(
                &format!("radix pass n={n} shift={shift}"),
                &fx.download(&dout),
                &want,
            );
        }
    }
}

#[test]
fn cooperative_groups_tiles() {
    let fx = Fixture::new("cg.ptx", CG);
    let mut rng = Rng::new(82);
    for &block in &[32u32, 64, 256] {
        for &n in &[1usize, 15, 16, 17, 33, 100, 1000] {
            let values: Vec<i32> = (0..n).map(|_| rng.range_i64(-1000, 1000) as i32).collect();
            let (din, dout) = (fx.upload(&values), fx.zeros::<i32>(4 * n));
            fx.launch(
                "tile_ops",
                dim1(blocks_for(n, block)),
                dim1(block),
                0,
                &[(&din).into(), (&dout).into(), (n as i32).into()],
            );
            let v = |i: usize| values.get(i).copied().unwrap_or(0);
            let mut want = Vec::with_capacity(4 * n);
            for i in 0..n {
                let t16 = i / 16 * 16;
                let t4 = i / 4 * 4;
                let w = i / 32 * 32;
                let rank = if v(i) & 1 == 1 {
                    (w..i).filter(|&j| v(j) & 1 == 1).count() as i32
                } else {
                    -1
                };
                want.extend_from_slice(&[
                    (t16..t16 + 16).map(v).sum(),
                    (t4..t4 + 4).map(v).max().unwrap(),
                    v(t16),
                    rank,
                ]);
            }
            assert_same(
                &format!("tile ops block={block} n={n}"),
                &fx.download(&dout),
                &want,
            );
        }
    }
}

// ---------------------------------------------------------------- debug_g.cu, lineinfo.cu

const DEBUG_G: &str = include_str!("../fixtures/debug_g.ptx");
const LINEINFO: &str = include_str!("../fixtures/lineinfo.ptx");

/// The same kernels built with `nvcc -G` (no optimisation, DWARF sections, `.target sm_80,
/// debug`) and with `-lineinfo` (`.file`/`.loc` directives) give the same results.
#[test]
fn debug_builds_run_like_optimised_ones() {
    let mut rng = Rng::new(83);
    for (name, ptx) in [("debug_g.ptx", DEBUG_G), ("lineinfo.ptx", LINEINFO)] {
        let fx = Fixture::new(name, ptx);
        for &block in &[32u32, 128] {
            for &n in &[1usize, 33, 500] {
                let values: Vec<i32> = (0..n).map(|_| rng.next_u32() as i32).collect();
                let (din, total) = (fx.upload(&values), fx.zeros::<i32>(1));
                fx.launch(
                    "dbg_block_sum",
                    dim1(blocks_for(n, block)),
                    dim1(block),
                    0,
                    &[(&din).into(), (&total).into(), (n as i32).into()],
                );
                let want = values.iter().fold(0i32, |s, &v| s.wrapping_add(v));
                assert_eq!(
                    fx.download(&total),
                    vec![want],
                    "{name} block sum block={block} n={n}"
                );

                let windows: Vec<i32> = (0..5 * n).map(|_| rng.range_i64(-9, 9) as i32).collect();
                let (dw, medians) = (fx.upload(&windows), fx.zeros::<i32>(n));
                fx.launch(
                    "dbg_median5",
                    dim1(blocks_for(n, block)),
                    dim1(block),
                    0,
                    &[(&dw).into(), (&medians).into(), (n as i32).into()],
                );
                let want: Vec<i32> = windows
                    .chunks(5)
                    .map(|w| {
                        let mut w = w.to_vec();
                        w.sort_unstable();
                        w[2]
                    })
                    .collect();
                assert_same(
                    &format!("{name} medians block={block} n={n}"),
                    &fx.download(&medians),
                    &want,
                );
            }
        }
    }
}
