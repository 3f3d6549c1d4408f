//! dpl-sim against nvcc-compiled kernels that stress memory: shared-memory tiling
//! (`tiling.cu`), atomics (`atomics.cu`), block and multi-block scans (`scan.cu`), and 3-D
//! launches and grid-stride loops (`grid.cu`). Every result is compared with a plain Rust
//! computation written here; all comparisons are exact (integer results, and float results
//! whose operation order the kernel fixes: fma.rn chains, explicit `__fadd_rn`).

#[path = "../fixtures/support.rs"]
mod support;

use support::{Fixture, Rng, assert_bits_f32, assert_same, blocks_for, dim1};

const TILING: &str = include_str!("../fixtures/tiling.ptx");
const ATOMICS: &str = include_str!("../fixtures/atomics.ptx");
const SCAN: &str = include_str!("../fixtures/scan.ptx");
const GRID: &str = include_str!("../fixtures/grid.ptx");

// ---------------------------------------------------------------- tiling.cu

fn matmul_reference(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
    let mut c = vec![0.0f32; m * n];
    for row in 0..m {
        for col in 0..n {
            let mut acc = 0.0f32;
            for kk in 0..k {
                acc = a[row * k + kk].mul_add(b[kk * n + col], acc);
            }
            c[row * n + col] = acc;
        }
    }
    c
}

#[test]
fn matmul_tiled_matches_fma_chain() {
    let fx = Fixture::new("tiling.ptx", TILING);
    let mut rng = Rng::new(1);
    for &(m, n, k) in &[
        (1, 1, 1),
        (16, 16, 16),
        (17, 33, 5),
        (40, 23, 50),
        (32, 48, 33),
    ] {
        let a: Vec<f32> = (0..m * k).map(|_| rng.f32_in(-1.0, 1.0)).collect();
        let b: Vec<f32> = (0..k * n).map(|_| rng.f32_in(-1.0, 1.0)).collect();
        let (da, db, dc) = (fx.upload(&a), fx.upload(&b), fx.zeros::<f32>(m * n));
        let grid = [blocks_for(n, 16), blocks_for(m, 16), 1];
        fx.launch(
            "matmul_tiled",
            grid,
            [16, 16, 1],
            0,
            &[
                (&da).into(),
                (&db).into(),
                (&dc).into(),
                (m as i32).into(),
                (n as i32).into(),
                (k as i32).into(),
            ],
        );
        assert_bits_f32(
            &format!("matmul {m}x{k} * {k}x{n}"),
            &fx.download(&dc),
            &matmul_reference(&a, &b, m, n, k),
        );
    }
}

fn transpose_reference(input: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut out = vec![0.0f32; rows * cols];
    for r in 0..rows {
        for c in 0..cols {
            out[c * rows + r] = input[r * cols + c];
        }
    }
    out
}

#[test]
fn transposes_are_exact() {
    let fx = Fixture::new("tiling.ptx", TILING);
    let mut rng = Rng::new(2);
    for kernel in ["transpose_tiled", "transpose_unpadded"] {
        for &(rows, cols) in &[(1, 1), (32, 32), (33, 70), (100, 37), (64, 96)] {
            let input: Vec<f32> = (0..rows * cols).map(|_| rng.f32_in(-10.0, 10.0)).collect();
            let (din, dout) = (fx.upload(&input), fx.zeros::<f32>(rows * cols));
            let grid = [blocks_for(cols, 32), blocks_for(rows, 32), 1];
            fx.launch(
                kernel,
                grid,
                [32, 8, 1],
                0,
                &[
                    (&din).into(),
                    (&dout).into(),
                    (rows as i32).into(),
                    (cols as i32).into(),
                ],
            );
            assert_bits_f32(
                &format!("{kernel} {rows}x{cols}"),
                &fx.download(&dout),
                &transpose_reference(&input, rows, cols),
            );
        }
    }
}

// ---------------------------------------------------------------- atomics.cu

fn histogram_reference(values: &[u32], nbins: u32) -> Vec<u32> {
    let mut bins = vec![0u32; nbins as usize];
    for &v in values {
        bins[(v % nbins) as usize] += 1;
    }
    bins
}

#[test]
fn histograms_global_and_shared() {
    let fx = Fixture::new("atomics.ptx", ATOMICS);
    // More host threads than cores, so blocks' atomics really interleave.
    fx.dev.set_host_threads(8);
    let mut rng = Rng::new(3);
    for &n in &[1usize, 100, 1000, 5000] {
        for &nbins in &[1u32, 7, 64, 256] {
            // Skewed values so that many threads of a warp hit the same bin.
            let values: Vec<u32> = (0..n)
                .map(|_| {
                    if rng.next_u32().is_multiple_of(3) {
                        5
                    } else {
                        rng.next_u32()
                    }
                })
                .collect();
            let want = histogram_reference(&values, nbins);
            for (kernel, shared) in [("histogram_global", 0), ("histogram_shared", nbins * 4)] {
                for &(grid, block) in &[(1u32, 64u32), (3, 128), (blocks_for(n, 96), 96)] {
                    let (dv, bins) = (fx.upload(&values), fx.zeros::<u32>(nbins as usize));
                    fx.launch(
                        kernel,
                        dim1(grid),
                        dim1(block),
                        shared,
                        &[
                            (&dv).into(),
                            (&bins).into(),
                            (n as i32).into(),
                            nbins.into(),
                        ],
                    );
                    assert_same(
                        &format!("{kernel} n={n} nbins={nbins} grid={grid} block={block}"),
                        &fx.download(&bins),
                        &want,
                    );
                }
            }
        }
    }
}

#[test]
fn float_max_through_compare_and_swap() {
    let fx = Fixture::new("atomics.ptx", ATOMICS);
    // More host threads than cores, so blocks' atomics really interleave.
    fx.dev.set_host_threads(8);
    let mut rng = Rng::new(4);
    for &n in &[1usize, 31, 32, 33, 1000, 4097] {
        let values: Vec<f32> = (0..n).map(|_| rng.f32_in(-100.0, 100.0)).collect();
        let want = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        for start in [f32::NEG_INFINITY, 50.0, 1000.0] {
            let (dv, result) = (fx.upload(&values), fx.upload(&[start]));
            fx.launch(
                "atomic_max_f32",
                dim1(blocks_for(n, 128)),
                dim1(128),
                0,
                &[(&dv).into(), (&result).into(), (n as i32).into()],
            );
            assert_eq!(
                fx.download(&result)[0].to_bits(),
                want.max(start).to_bits(),
                "n={n} start={start}"
            );
        }
    }
}

#[test]
fn atomic_add_hands_out_distinct_tickets() {
    let fx = Fixture::new("atomics.ptx", ATOMICS);
    // More host threads than cores, so blocks' atomics really interleave.
    fx.dev.set_host_threads(8);
    for &n in &[1usize, 33, 1000, 3000] {
        let (counter, tickets) = (fx.upload(&[5u32]), fx.zeros::<u32>(n));
        fx.launch(
            "atomic_tickets",
            dim1(blocks_for(n, 256)),
            dim1(256),
            0,
            &[(&counter).into(), (&tickets).into(), (n as i32).into()],
        );
        let mut got = fx.download(&tickets);
        got.sort_unstable();
        let want: Vec<u32> = (5..5 + n as u32).collect();
        assert_same(&format!("sorted tickets n={n}"), &got, &want);
        assert_eq!(fx.download(&counter), vec![5 + n as u32]);
    }
}

#[test]
fn atomic_min_max_logic_inc_dec_sub_exch_wide_and_double() {
    let fx = Fixture::new("atomics.ptx", ATOMICS);
    // More host threads than cores, so blocks' atomics really interleave.
    fx.dev.set_host_threads(8);
    let mut rng = Rng::new(5);
    let limit = 17u32;
    for &n in &[1usize, 32, 77, 1000, 2500] {
        let values: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
        let cells_start: [u32; 11] = [
            i32::MAX as u32,
            i32::MIN as u32,
            u32::MAX,
            0,
            u32::MAX,
            0,
            0,
            0,
            0,
            1_000_000,
            12345,
        ];
        let wide_start = [0u64, i64::MIN as u64, u64::MAX];
        let (dv, cells, exch_old, wide, dsum) = (
            fx.upload(&values),
            fx.upload(&cells_start),
            fx.zeros::<u32>(n),
            fx.upload(&wide_start),
            fx.zeros::<f64>(1),
        );
        fx.launch(
            "atomic_misc",
            dim1(blocks_for(n, 64)),
            dim1(64),
            0,
            &[
                (&dv).into(),
                (&cells).into(),
                (&exch_old).into(),
                (&wide).into(),
                (&dsum).into(),
                limit.into(),
                (n as i32).into(),
            ],
        );
        let mut want = cells_start;
        let (mut inc, mut dec) = (0u32, 0u32);
        for &v in &values {
            want[0] = (want[0] as i32).min(v as i32) as u32;
            want[1] = (want[1] as i32).max(v as i32) as u32;
            want[2] = want[2].min(v);
            want[3] = want[3].max(v);
            want[4] &= v | 0x0f0f_0000;
            want[5] |= v & 0x00f0_f0f0;
            want[6] ^= v;
            inc = if inc >= limit { 0 } else { inc + 1 };
            dec = if dec == 0 || dec > limit {
                limit
            } else {
                dec - 1
            };
            want[9] = want[9].wrapping_sub(v & 0xff);
        }
        want[7] = inc;
        want[8] = dec;
        let got = fx.download(&cells);
        assert_same(&format!("cells 0..10 n={n}"), &got[..10], &want[..10]);

        // atomicExch: the old values and the final value are the start value and the
        // exchanged values, each exactly once.
        let mut seen = fx.download(&exch_old);
        seen.push(got[10]);
        seen.sort_unstable();
        let mut expected = values.clone();
        expected.push(12345);
        expected.sort_unstable();
        assert_same(&format!("atomicExch old values n={n}"), &seen, &expected);

        let w: u64 = values
            .iter()
            .fold(0u64, |s, &v| s.wrapping_add(v as u64 * 0x10001));
        // wide[1] starts at i64::MIN, so the maximum is the largest 3 * v.
        let mx = values.iter().map(|&v| v as i32 as i64 * 3).max().unwrap();
        let mn = values
            .iter()
            .map(|&v| (v as u64 * 0x10001) ^ 0xffff_0000_0000_0000)
            .min()
            .unwrap();
        assert_same(
            &format!("64-bit atomics n={n}"),
            &fx.download(&wide),
            &[w, mx as u64, mn],
        );

        // Multiples of 0.25 below 2^40: every partial sum is exact, in any order.
        let d: f64 = values.iter().map(|&v| (v & 0xffff) as f64 * 0.25).sum();
        assert_eq!(fx.download(&dsum), vec![d], "atomicAdd(double) n={n}");
    }
}

// ---------------------------------------------------------------- scan.cu

fn inclusive_scan_u32(values: &[u32]) -> Vec<u32> {
    let mut acc = 0u32;
    values
        .iter()
        .map(|&v| {
            acc = acc.wrapping_add(v);
            acc
        })
        .collect()
}

#[test]
fn hillis_steele_multi_block_scan() {
    let fx = Fixture::new("scan.ptx", SCAN);
    let mut rng = Rng::new(6);
    for &block in &[32u32, 64, 256] {
        for &n in &[1usize, 31, 32, 33, 1000, 4096] {
            let groups = blocks_for(n, block);
            if groups > block {
                continue; // the second level scans the block totals in one block
            }
            let values: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
            let shared = 2 * block * 4;
            let (din, dout) = (fx.upload(&values), fx.zeros::<u32>(n));
            let (sums, scanned) = (
                fx.zeros::<u32>(groups as usize),
                fx.zeros::<u32>(groups as usize),
            );
            fx.launch(
                "scan_hillis_steele",
                dim1(groups),
                dim1(block),
                shared,
                &[
                    (&din).into(),
                    (&dout).into(),
                    (&sums).into(),
                    (n as i32).into(),
                ],
            );
            let block_totals: Vec<u32> = values
                .chunks(block as usize)
                .map(|c| c.iter().fold(0u32, |s, &v| s.wrapping_add(v)))
                .collect();
            assert_same(
                &format!("block totals block={block} n={n}"),
                &fx.download(&sums),
                &block_totals,
            );
            fx.launch(
                "scan_hillis_steele",
                dim1(1),
                dim1(block),
                shared,
                &[
                    (&sums).into(),
                    (&scanned).into(),
                    0u64.into(),
                    (groups as i32).into(),
                ],
            );
            fx.launch(
                "add_offsets_u32",
                dim1(groups),
                dim1(block),
                0,
                &[(&dout).into(), (&scanned).into(), (n as i32).into()],
            );
            assert_same(
                &format!("inclusive scan block={block} n={n}"),
                &fx.download(&dout),
                &inclusive_scan_u32(&values),
            );
        }
    }
}

#[test]
fn blelloch_multi_block_exclusive_scan() {
    let fx = Fixture::new("scan.ptx", SCAN);
    let mut rng = Rng::new(7);
    const PER_BLOCK: usize = 256;
    for &n in &[1usize, 255, 256, 257, 3000, 20000] {
        let values: Vec<i32> = (0..n).map(|_| rng.range_i64(-1000, 1000) as i32).collect();
        let groups = n.div_ceil(PER_BLOCK);
        let (din, dout) = (fx.upload(&values), fx.zeros::<i32>(n));
        let (sums, offsets) = (fx.zeros::<i32>(groups), fx.zeros::<i32>(groups));
        fx.launch(
            "scan_blelloch",
            dim1(groups as u32),
            dim1(128),
            0,
            &[
                (&din).into(),
                (&dout).into(),
                (&sums).into(),
                (n as i32).into(),
            ],
        );
        fx.launch(
            "scan_blelloch",
            dim1(1),
            dim1(128),
            0,
            &[
                (&sums).into(),
                (&offsets).into(),
                0u64.into(),
                (groups as i32).into(),
            ],
        );
        fx.launch(
            "add_offsets_i32",
            dim1(groups as u32),
            dim1(96),
            0,
            &[
                (&dout).into(),
                (&offsets).into(),
                (n as i32).into(),
                (PER_BLOCK as i32).into(),
            ],
        );
        let mut acc = 0i32;
        let want: Vec<i32> = values
            .iter()
            .map(|&v| {
                let before = acc;
                acc = acc.wrapping_add(v);
                before
            })
            .collect();
        assert_same(&format!("exclusive scan n={n}"), &fx.download(&dout), &want);
    }
}

// ---------------------------------------------------------------- grid.cu

#[test]
fn three_d_grid_coordinates() {
    let fx = Fixture::new("grid.ptx", GRID);
    let shapes: [([u32; 3], [u32; 3]); 5] = [
        ([5, 3, 2], [4, 2, 2]),
        ([17, 9, 6], [8, 4, 2]),
        ([33, 1, 1], [32, 1, 1]),
        ([7, 7, 7], [2, 3, 4]),
        ([1, 40, 3], [1, 16, 4]),
    ];
    for (size, block) in shapes {
        let [nx, ny, nz] = size;
        let grid = [
            nx.div_ceil(block[0]),
            ny.div_ceil(block[1]),
            nz.div_ceil(block[2]),
        ];
        let total = (nx * ny * nz) as usize;
        let out = fx.zeros::<u32>(5 * total);
        fx.launch(
            "grid3d_coords",
            grid,
            block,
            0,
            &[
                (&out).into(),
                (nx as i32).into(),
                (ny as i32).into(),
                (nz as i32).into(),
            ],
        );
        let pack = |v: [u32; 3]| v[0] | (v[1] << 10) | (v[2] << 20);
        let mut want = vec![0u32; 5 * total];
        for z in 0..nz {
            for y in 0..ny {
                for x in 0..nx {
                    let idx = ((z * ny + y) * nx + x) as usize;
                    let b = [x / block[0], y / block[1], z / block[2]];
                    let t = [x % block[0], y % block[1], z % block[2]];
                    want[5 * idx..5 * idx + 5].copy_from_slice(&[
                        pack([x, y, z]),
                        pack(b),
                        pack(t),
                        pack(grid),
                        pack(block),
                    ]);
                }
            }
        }
        assert_same(
            &format!("grid3d_coords {size:?} block {block:?}"),
            &fx.download(&out),
            &want,
        );
    }
}

#[test]
fn seven_point_stencil_3d() {
    let fx = Fixture::new("grid.ptx", GRID);
    let mut rng = Rng::new(8);
    let (c0, c1) = (0.5f32, 1.0f32 / 12.0);
    for &[nx, ny, nz] in &[[1usize, 1, 1], [3, 3, 3], [10, 7, 5], [17, 9, 4]] {
        let input: Vec<f32> = (0..nx * ny * nz).map(|_| rng.f32_in(-4.0, 4.0)).collect();
        let (din, dout) = (fx.upload(&input), fx.zeros::<f32>(input.len()));
        let block = [8u32, 4, 2];
        let grid = [blocks_for(nx, 8), blocks_for(ny, 4), blocks_for(nz, 2)];
        fx.launch(
            "stencil7_3d",
            grid,
            block,
            0,
            &[
                (&din).into(),
                (&dout).into(),
                (nx as i32).into(),
                (ny as i32).into(),
                (nz as i32).into(),
                c0.into(),
                c1.into(),
            ],
        );
        let mut want = input.clone();
        for z in 1..nz.saturating_sub(1) {
            for y in 1..ny.saturating_sub(1) {
                for x in 1..nx.saturating_sub(1) {
                    let i = (z * ny + y) * nx + x;
                    let s = input[i - 1]
                        + input[i + 1]
                        + input[i - nx]
                        + input[i + nx]
                        + input[i - nx * ny]
                        + input[i + nx * ny];
                    want[i] = c0.mul_add(input[i], c1 * s);
                }
            }
        }
        assert_bits_f32(
            &format!("stencil {nx}x{ny}x{nz}"),
            &fx.download(&dout),
            &want,
        );
    }
}

#[test]
fn saxpy_with_a_grid_stride_loop() {
    let fx = Fixture::new("grid.ptx", GRID);
    let mut rng = Rng::new(9);
    for &n in &[1usize, 129, 1000, 10000] {
        let x: Vec<f32> = (0..n).map(|_| rng.f32_in(-2.0, 2.0)).collect();
        let y: Vec<f32> = (0..n).map(|_| rng.f32_in(-2.0, 2.0)).collect();
        let a = 1.375f32;
        for &(grid, block) in &[(1u32, 32u32), (4, 128), (blocks_for(n, 256), 256)] {
            let (dx, dy) = (fx.upload(&x), fx.upload(&y));
            fx.launch(
                "saxpy_gridstride",
                dim1(grid),
                dim1(block),
                0,
                &[(n as u64).into(), a.into(), (&dx).into(), (&dy).into()],
            );
            let want: Vec<f32> = x
                .iter()
                .zip(&y)
                .map(|(&xi, &yi)| a.mul_add(xi, yi))
                .collect();
            assert_bits_f32(
                &format!("saxpy n={n} grid={grid} block={block}"),
                &fx.download(&dy),
                &want,
            );
        }
    }
}

// ---------------------------------------------------------------- launch counters

/// The counters of a few launches whose memory behaviour follows from the kernel's
/// structure: warp-level requests, 32-byte sectors of aligned contiguous accesses, bank
/// conflicts of the padded and unpadded transposes, and barrier releases.
#[test]
fn counters_follow_from_the_kernels_structure() {
    let fx = Fixture::new("tiling.ptx", TILING);
    // 64 x 96 floats: 3 x 2 blocks of 8 warps, each warp making 4 shared stores, 4 shared
    // loads, 4 global loads and 4 global stores of 32 consecutive, 128-byte aligned floats.
    let (rows, cols) = (64usize, 96usize);
    let input: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
    let requests = 6 * 8 * 4;
    for (kernel, conflicts) in [
        ("transpose_tiled", 0),
        ("transpose_unpadded", 31 * requests),
    ] {
        let (din, dout) = (fx.upload(&input), fx.zeros::<f32>(rows * cols));
        let r = fx.launch(
            kernel,
            [3, 2, 1],
            [32, 8, 1],
            0,
            &[
                (&din).into(),
                (&dout).into(),
                (rows as i32).into(),
                (cols as i32).into(),
            ],
        );
        assert_eq!(
            (r.blocks, r.threads, r.barriers),
            (6, 6 * 256, 6),
            "{kernel}"
        );
        assert_eq!(
            (r.global_load_requests, r.global_store_requests),
            (requests, requests),
            "{kernel}"
        );
        assert_eq!(
            (r.shared_load_requests, r.shared_store_requests),
            (requests, requests),
            "{kernel}"
        );
        assert_eq!(
            (r.global_load_sectors, r.global_store_sectors),
            (4 * requests, 4 * requests),
            "{kernel}"
        );
        assert_eq!(
            (r.sectors_moved, r.sectors_ideal),
            (8 * requests, 8 * requests),
            "{kernel}"
        );
        // Unpadded, the 32 lanes of a column read all hit one bank: 31 extra wavefronts.
        assert_eq!(r.bank_conflicts, conflicts, "{kernel} bank conflicts");
    }

    // matmul 40x50 * 50x23: 2 x 3 blocks, 4 tiles of k, two barriers per tile.
    let (m, n, k) = (40usize, 23usize, 50usize);
    let (da, db, dc) = (
        fx.zeros::<f32>(m * k),
        fx.zeros::<f32>(k * n),
        fx.zeros::<f32>(m * n),
    );
    let r = fx.launch(
        "matmul_tiled",
        [2, 3, 1],
        [16, 16, 1],
        0,
        &[
            (&da).into(),
            (&db).into(),
            (&dc).into(),
            (m as i32).into(),
            (n as i32).into(),
            (k as i32).into(),
        ],
    );
    assert_eq!((r.blocks, r.barriers), (6, 6 * 4 * 2), "matmul barriers");

    // saxpy over 10000 floats with 16 warps: 313 warp-sized chunks (the last one of 16
    // lanes), each one load of x, one of y and one store, all aligned and contiguous.
    let gx = Fixture::new("grid.ptx", GRID);
    let (dx, dy) = (gx.zeros::<f32>(10000), gx.zeros::<f32>(10000));
    let r = gx.launch(
        "saxpy_gridstride",
        dim1(4),
        dim1(128),
        0,
        &[10000u64.into(), 2.0f32.into(), (&dx).into(), (&dy).into()],
    );
    assert_eq!(
        (r.global_load_requests, r.global_store_requests),
        (2 * 313, 313),
        "saxpy requests"
    );
    assert_eq!(
        r.sectors_moved, r.sectors_ideal,
        "saxpy is perfectly coalesced"
    );
    assert_eq!(
        r.global_load_sectors,
        2 * (312 * 4 + 2),
        "saxpy load sectors"
    );

    // The global histogram: one atomic request per 32-element chunk of the input.
    let hx = Fixture::new("atomics.ptx", ATOMICS);
    let (values, bins) = (hx.zeros::<u32>(1000), hx.zeros::<u32>(8));
    let r = hx.launch(
        "histogram_global",
        dim1(3),
        dim1(128),
        0,
        &[
            (&values).into(),
            (&bins).into(),
            1000i32.into(),
            8u32.into(),
        ],
    );
    assert_eq!(
        (r.global_atomic_requests, r.global_load_requests),
        (32, 32),
        "histogram requests"
    );
    assert_eq!(hx.download(&bins)[0], 1000);
}
