//! dpl-sim against nvcc-compiled warp-level kernels: shuffles (`shuffle.cu`) and votes,
//! match, redux and ballot compaction (`votes.cu`).
//!
//! The shuffle references implement the PTX ISA's definition of `shfl.sync` (segment mask
//! and clamp from the `c` operand) with the `c` values CUDA's `__shfl_*_sync(..., width)`
//! produce, independently of the simulator. Float reductions are replayed in the kernel's
//! exact tree order, so they are compared bit for bit; only the cross-block atomicAdd total
//! (whose order depends on scheduling) gets a tolerance.

#[path = "../fixtures/support.rs"]
mod support;

use support::{Fixture, Rng, assert_bits_f32, assert_same, blocks_for, dim1};

const SHUFFLE: &str = include_str!("../fixtures/shuffle.ptx");
const VOTES: &str = include_str!("../fixtures/votes.ptx");

/// Splits `0..n` (padded to whole warps) into warps of 32 global indices; valid only for
/// block sizes that are multiples of 32, which every launch here uses.
fn warps(n: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    (0..n.div_ceil(32)).map(|w| w * 32..w * 32 + 32)
}

#[derive(Clone, Copy, Debug)]
enum Mode {
    Up,
    Down,
    Bfly,
    Idx,
}

/// `shfl.sync.<mode>.b32 d, a, b, c, 0xffffffff` for lane `lane` of a warp whose registers
/// `a` are `vals`, as the PTX ISA defines it.
fn shfl(mode: Mode, vals: &[u32; 32], lane: usize, b: u32, c: u32) -> u32 {
    let lane = lane as i32;
    let bval = (b & 31) as i32;
    let cval = (c & 31) as i32;
    let segmask = ((c >> 8) & 31) as i32;
    let max_lane = (lane & segmask) | (cval & !segmask);
    let min_lane = lane & segmask;
    let (j, ok) = match mode {
        Mode::Up => (lane - bval, lane - bval >= max_lane),
        Mode::Down => (lane + bval, lane + bval <= max_lane),
        Mode::Bfly => (lane ^ bval, (lane ^ bval) <= max_lane),
        Mode::Idx => {
            let j = min_lane | (bval & !segmask);
            (j, j <= max_lane)
        }
    };
    vals[if ok { j } else { lane } as usize]
}

/// The `c` operand of `__shfl_{up,down,xor,}_sync(..., width)`.
fn clamp_operand(mode: Mode, width: u32) -> u32 {
    let seg = (32 - width) << 8;
    match mode {
        Mode::Up => seg,
        _ => seg | 0x1f,
    }
}

/// Lane 0's result of `for o in 16,8,4,2,1: v += shfl_down(v, o)`.
fn tree_sum_f32(vals: [f32; 32]) -> f32 {
    let mut v = vals;
    for offset in [16usize, 8, 4, 2, 1] {
        let old = v;
        for lane in 0..32 {
            let other = if lane + offset < 32 {
                old[lane + offset]
            } else {
                old[lane]
            };
            v[lane] = old[lane] + other;
        }
    }
    v[0]
}

#[test]
fn block_reduce_i32_with_shuffle_down() {
    let fx = Fixture::new("shuffle.ptx", SHUFFLE);
    let mut rng = Rng::new(20);
    for &block in &[32u32, 96, 256, 1024] {
        for &n in &[1usize, 31, 32, 33, 1000, 5000] {
            let values: Vec<i32> = (0..n).map(|_| rng.next_u32() as i32).collect();
            let groups = blocks_for(n, block);
            let (din, sums) = (fx.upload(&values), fx.zeros::<i32>(groups as usize));
            fx.launch(
                "block_reduce_sum_i32",
                dim1(groups),
                dim1(block),
                0,
                &[(&din).into(), (&sums).into(), (n as i32).into()],
            );
            let want: Vec<i32> = values
                .chunks(block as usize)
                .map(|c| c.iter().fold(0i32, |s, &v| s.wrapping_add(v)))
                .collect();
            assert_same(
                &format!("block sums block={block} n={n}"),
                &fx.download(&sums),
                &want,
            );
        }
    }
}

#[test]
fn block_reduce_f32_in_tree_order() {
    let fx = Fixture::new("shuffle.ptx", SHUFFLE);
    let mut rng = Rng::new(21);
    for &block in &[32u32, 128, 256] {
        for &n in &[1usize, 33, 1000, 4000] {
            let values: Vec<f32> = (0..n).map(|_| rng.f32_in(-1.0, 1.0) * 1000.0).collect();
            let groups = blocks_for(n, block) as usize;
            let (din, sums, total) = (
                fx.upload(&values),
                fx.zeros::<f32>(groups),
                fx.zeros::<f32>(1),
            );
            fx.launch(
                "block_reduce_sum_f32",
                dim1(groups as u32),
                dim1(block),
                0,
                &[
                    (&din).into(),
                    (&sums).into(),
                    (&total).into(),
                    (n as i32).into(),
                ],
            );
            let mut want = Vec::new();
            for g in 0..groups {
                let warps_per_block = block as usize / 32;
                let mut warp_sums = [0.0f32; 32];
                for (w, slot) in warp_sums.iter_mut().enumerate().take(warps_per_block) {
                    let mut lanes = [0.0f32; 32];
                    for (lane, v) in lanes.iter_mut().enumerate() {
                        let i = g * block as usize + w * 32 + lane;
                        *v = if i < n { values[i] } else { 0.0 };
                    }
                    *slot = tree_sum_f32(lanes);
                }
                want.push(tree_sum_f32(warp_sums));
            }
            let got = fx.download(&sums);
            assert_bits_f32(&format!("f32 block sums block={block} n={n}"), &got, &want);
            // The total adds the block sums in completion order: allow the rounding of
            // `groups` additions of values bounded by the sum of magnitudes.
            let exact: f64 = want.iter().map(|&v| v as f64).sum();
            let magnitude: f64 = want.iter().map(|&v| (v as f64).abs()).sum();
            let tolerance = magnitude * groups as f64 * f32::EPSILON as f64;
            let t = fx.download(&total)[0] as f64;
            assert!(
                (t - exact).abs() <= tolerance,
                "total {t} vs {exact} (tolerance {tolerance})"
            );
        }
    }
}

#[test]
fn butterfly_all_reduce_with_shuffle_xor() {
    let fx = Fixture::new("shuffle.ptx", SHUFFLE);
    let mut rng = Rng::new(22);
    for &block in &[32u32, 64, 160] {
        for &n in &[1usize, 31, 32, 33, 100, 1000] {
            let values: Vec<i32> = (0..n).map(|_| rng.next_u32() as i32).collect();
            let (din, sums, maxima) = (fx.upload(&values), fx.zeros::<i32>(n), fx.zeros::<i32>(n));
            fx.launch(
                "warp_allreduce_xor",
                dim1(blocks_for(n, block)),
                dim1(block),
                0,
                &[
                    (&din).into(),
                    (&sums).into(),
                    (&maxima).into(),
                    (n as i32).into(),
                ],
            );
            let (mut want_s, mut want_m) = (vec![0i32; n], vec![0i32; n]);
            for w in warps(n) {
                let lanes = &values[w.start..w.end.min(n)];
                let s = lanes.iter().fold(0i32, |a, &v| a.wrapping_add(v));
                let m = lanes.iter().copied().max().unwrap();
                for i in w.start..w.end.min(n) {
                    want_s[i] = s;
                    want_m[i] = m;
                }
            }
            assert_same(
                &format!("xor sums block={block} n={n}"),
                &fx.download(&sums),
                &want_s,
            );
            assert_same(
                &format!("xor maxima block={block} n={n}"),
                &fx.download(&maxima),
                &want_m,
            );
        }
    }
}

#[test]
fn warp_inclusive_scan_with_shuffle_up() {
    let fx = Fixture::new("shuffle.ptx", SHUFFLE);
    let mut rng = Rng::new(23);
    for &block in &[32u32, 128] {
        for &n in &[1usize, 31, 32, 33, 100, 1000] {
            let values: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
            let (din, dout) = (fx.upload(&values), fx.zeros::<u32>(n));
            fx.launch(
                "warp_inclusive_scan",
                dim1(blocks_for(n, block)),
                dim1(block),
                0,
                &[(&din).into(), (&dout).into(), (n as i32).into()],
            );
            let mut want = vec![0u32; n];
            for w in warps(n) {
                let mut acc = 0u32;
                for i in w.start..w.end.min(n) {
                    acc = acc.wrapping_add(values[i]);
                    want[i] = acc;
                }
            }
            assert_same(
                &format!("warp scan block={block} n={n}"),
                &fx.download(&dout),
                &want,
            );
        }
    }
}

#[test]
fn shuffles_with_segment_widths() {
    let fx = Fixture::new("shuffle.ptx", SHUFFLE);
    let mut rng = Rng::new(24);
    for &block in &[32u32, 96] {
        for &n in &[1usize, 20, 32, 45, 300] {
            let values: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
            let (din, dout) = (fx.upload(&values), fx.zeros::<u32>(6 * n));
            fx.launch(
                "shfl_segments",
                dim1(blocks_for(n, block)),
                dim1(block),
                0,
                &[(&din).into(), (&dout).into(), (n as i32).into()],
            );
            let mut want = vec![0u32; 6 * n];
            for w in warps(n) {
                let mut regs = [0u32; 32];
                for (lane, r) in regs.iter_mut().enumerate() {
                    *r = values.get(w.start + lane).copied().unwrap_or(0);
                }
                for lane in 0..32 {
                    let i = w.start + lane;
                    if i >= n {
                        break;
                    }
                    let src = regs[lane] >> 24;
                    let results = [
                        shfl(Mode::Idx, &regs, lane, src, clamp_operand(Mode::Idx, 8)),
                        shfl(Mode::Down, &regs, lane, 3, clamp_operand(Mode::Down, 8)),
                        shfl(Mode::Up, &regs, lane, 2, clamp_operand(Mode::Up, 16)),
                        shfl(Mode::Bfly, &regs, lane, 5, clamp_operand(Mode::Bfly, 16)),
                        shfl(
                            Mode::Idx,
                            &regs,
                            lane,
                            (lane as u32 * 7) % 32,
                            clamp_operand(Mode::Idx, 32),
                        ),
                        shfl(Mode::Bfly, &regs, lane, 20, clamp_operand(Mode::Bfly, 16)),
                    ];
                    want[6 * i..6 * i + 6].copy_from_slice(&results);
                }
            }
            assert_same(
                &format!("segment shuffles block={block} n={n}"),
                &fx.download(&dout),
                &want,
            );
        }
    }
}

#[test]
fn shuffle_reference_follows_cuda_documentation() {
    // The PTX formula above, checked against CUDA's prose for a few lanes so that a
    // mistake in the reference cannot make the simulator agree with a wrong answer.
    let regs: [u32; 32] = std::array::from_fn(|l| 100 + l as u32);
    // (mode, lane, operand, width, the lane read).
    for (mode, lane, b, width, from) in [
        // __shfl_sync(v, 13, 8): lane 20 reads lane 16 + 13 % 8 = 21.
        (Mode::Idx, 20, 13, 8, 21),
        // __shfl_down_sync(v, 3, 8): lane 6 would leave its segment of 8, keeps its own
        // value; lane 4 reads lane 7.
        (Mode::Down, 6, 3, 8, 6),
        (Mode::Down, 4, 3, 8, 7),
        // __shfl_up_sync(v, 2, 16): lane 17 would leave its segment, lane 18 reads 16.
        (Mode::Up, 17, 2, 16, 17),
        (Mode::Up, 18, 2, 16, 16),
        // __shfl_xor_sync(v, 20, 16): lane 0 would read a later segment (own value), lane
        // 16 reads the earlier lane 4.
        (Mode::Bfly, 0, 20, 16, 0),
        (Mode::Bfly, 16, 20, 16, 4),
    ] {
        assert_eq!(
            shfl(mode, &regs, lane, b, clamp_operand(mode, width)),
            regs[from],
            "{mode:?} lane {lane}, operand {b}, width {width}"
        );
    }
}

#[test]
fn ballot_all_any_popc_activemask() {
    let fx = Fixture::new("votes.ptx", VOTES);
    let mut rng = Rng::new(25);
    for &block in &[32u32, 64, 256] {
        for &n in &[1usize, 31, 32, 33, 200, 1000] {
            // Every third warp is all positive so that __all_sync is true somewhere.
            let values: Vec<i32> = (0..n)
                .map(|i| {
                    if (i / 32) % 3 == 0 {
                        rng.range_i64(1, 150) as i32
                    } else {
                        rng.range_i64(-50, 150) as i32
                    }
                })
                .collect();
            let bufs: Vec<_> = (0..5).map(|_| fx.zeros::<u32>(n)).collect();
            let din = fx.upload(&values);
            fx.launch(
                "warp_votes",
                dim1(blocks_for(n, block)),
                dim1(block),
                0,
                &[
                    (&din).into(),
                    (&bufs[0]).into(),
                    (&bufs[1]).into(),
                    (&bufs[2]).into(),
                    (&bufs[3]).into(),
                    (&bufs[4]).into(),
                    (n as i32).into(),
                ],
            );
            let mut want: Vec<Vec<u32>> = vec![vec![0; n]; 5];
            for w in warps(n) {
                let lanes = w.start..w.end.min(n);
                let mask_of = |pred: &dyn Fn(i32) -> bool| {
                    lanes
                        .clone()
                        .filter(|&i| pred(values[i]))
                        .fold(0u32, |m, i| m | 1 << (i - w.start))
                };
                let ballot = mask_of(&|x| x > 0);
                let all = lanes.clone().all(|i| values[i] > 0) as u32;
                let any = lanes.clone().any(|i| values[i] > 100) as u32;
                let odd = mask_of(&|x| x & 1 == 1);
                for i in lanes.clone() {
                    want[0][i] = ballot;
                    want[1][i] = all;
                    want[2][i] = any;
                    want[3][i] = ballot.count_ones();
                    want[4][i] = if values[i] & 1 == 1 { odd } else { 0 };
                }
            }
            for (k, name) in [
                "ballot",
                "all",
                "any",
                "popc(ballot)",
                "activemask in branch",
            ]
            .iter()
            .enumerate()
            {
                assert_same(
                    &format!("{name} block={block} n={n}"),
                    &fx.download(&bufs[k]),
                    &want[k],
                );
            }
        }
    }
}

#[test]
fn match_any_redux_and_lane_masks() {
    let fx = Fixture::new("votes.ptx", VOTES);
    let mut rng = Rng::new(26);
    for &block in &[32u32, 128] {
        for &n in &[1usize, 20, 32, 70, 500] {
            let keys: Vec<u32> = (0..n)
                .map(|_| {
                    let k = rng.next_u32() % 5;
                    if rng.next_u32().is_multiple_of(7) {
                        0x8000_0000 | k
                    } else {
                        k * 0x0100_0001
                    }
                })
                .collect();
            let (dk, dout) = (fx.upload(&keys), fx.zeros::<u32>(6 * n));
            fx.launch(
                "warp_match_redux",
                dim1(blocks_for(n, block)),
                dim1(block),
                0,
                &[(&dk).into(), (&dout).into(), (n as i32).into()],
            );
            let mut want = vec![0u32; 6 * n];
            for w in warps(n) {
                let lane_keys: [u32; 32] =
                    std::array::from_fn(|l| keys.get(w.start + l).copied().unwrap_or(u32::MAX));
                let sum = lane_keys
                    .iter()
                    .fold(0u32, |s, &k| s.wrapping_add(k & 0xff));
                let mn = *lane_keys.iter().min().unwrap();
                let mx = lane_keys.iter().map(|&k| k as i32).max().unwrap() as u32;
                for lane in 0..32 {
                    let i = w.start + lane;
                    if i >= n {
                        break;
                    }
                    let same = (0..32)
                        .filter(|&l| lane_keys[l] == lane_keys[lane])
                        .fold(0u32, |m, l| m | 1 << l);
                    let lt = (1u32 << lane) - 1;
                    want[6 * i..6 * i + 6].copy_from_slice(&[same, sum, mn, mx, lt, !lt]);
                }
            }
            assert_same(
                &format!("match/redux/lanemask block={block} n={n}"),
                &fx.download(&dout),
                &want,
            );
        }
    }
}

#[test]
fn ballot_stream_compaction() {
    let fx = Fixture::new("votes.ptx", VOTES);
    let mut rng = Rng::new(27);
    for &block in &[32u32, 64, 256] {
        for &n in &[1usize, 31, 33, 500, 3000] {
            // Distinct values: 2i (kept) or 2i + 1 (dropped).
            let values: Vec<i32> = (0..n)
                .map(|i| 2 * i as i32 + (rng.next_u32() % 2) as i32)
                .collect();
            let (din, dout, count) = (fx.upload(&values), fx.zeros::<i32>(n), fx.zeros::<u32>(1));
            fx.launch(
                "warp_compact",
                dim1(blocks_for(n, block)),
                dim1(block),
                0,
                &[
                    (&din).into(),
                    (&dout).into(),
                    (&count).into(),
                    (n as i32).into(),
                ],
            );
            let kept: Vec<i32> = values.iter().copied().filter(|v| v % 2 == 0).collect();
            let count = fx.download(&count)[0] as usize;
            assert_eq!(count, kept.len(), "kept count block={block} n={n}");
            let out = fx.download(&dout);
            let mut sorted = out[..count].to_vec();
            sorted.sort_unstable();
            assert_same(
                &format!("compacted set block={block} n={n}"),
                &sorted,
                &kept,
            );
            // Within each warp the kept elements stay contiguous and in order.
            for w in warps(n) {
                let warp_kept: Vec<i32> = values[w.start..w.end.min(n)]
                    .iter()
                    .copied()
                    .filter(|v| v % 2 == 0)
                    .collect();
                if let Some(first) = warp_kept.first() {
                    let pos = out.iter().position(|v| v == first).unwrap();
                    assert_same(
                        &format!("warp {} order block={block} n={n}", w.start / 32),
                        &out[pos..pos + warp_kept.len()],
                        &warp_kept,
                    );
                }
            }
        }
    }
}
