//! Structure of programs with per-element loops, read with `dpl::inspect!`: a loop inside
//! an element function is an ordinary part of that function, so the maps around it still
//! fuse into one pass (on the CPU it is a Rust `loop` inside the fused closure).

mod common_structure;
use common_structure::{flat, rt_calls, shape, soacs};

mod prog {
    use dpl::prelude::*;

    /// Escape counts of scaled points, summed: the scaling map, the map with the loop and
    /// the sum are one reduce.
    #[parallel]
    pub fn total_escape(cx: &[f32], cy: &[f32], max: u32) -> u32 {
        let sx = map(|v| v * 1.5f32 - 0.5f32, cx);
        sum(map(
            |x0, y0| {
                let (mut x, mut y, mut i) = (0.0f32, 0.0f32, 0u32);
                while i < max && x * x + y * y <= 4.0f32 {
                    let t = x * x - y * y + x0;
                    y = 2.0f32 * x * y + y0;
                    x = t;
                    i += 1;
                }
                i
            },
            sx,
            cy,
        ))
    }

    /// A map with a loop feeding another map: one map.
    #[parallel]
    pub fn steps_doubled(x: &[u64]) -> Vec<u64> {
        let steps = map(
            |v| {
                let mut n = v % 1000 + 1;
                let mut s = 0u64;
                while n != 1 {
                    n = if n % 2 == 0 { n / 2 } else { 3 * n + 1 };
                    s += 1;
                }
                s
            },
            x,
        );
        map(|s| s * 2, steps)
    }
}

#[test]
fn a_loop_inside_a_map_does_not_stop_fusion_into_a_reduce() {
    let i = dpl::inspect!(prog::total_escape);
    shape(i, (3, 2, 1, 0));
    assert_eq!(soacs(i.fused_ir, "reduce"), 1, "{}", i.fused_ir);
    assert_eq!(soacs(i.fused_ir, "map"), 0, "{}", i.fused_ir);
    assert_eq!(i.fused_ir.matches("loop(").count(), 1, "{}", i.fused_ir);
    assert_eq!(rt_calls(i.cpu_rust, "reduce"), 1, "{}", i.cpu_rust);
    assert_eq!(rt_calls(i.cpu_rust, "map"), 0, "{}", i.cpu_rust);
    // The loop is a Rust loop in the generated code.
    assert!(flat(i.cpu_rust).contains("loop {"), "{}", i.cpu_rust);
}

#[test]
fn maps_around_a_loop_fuse_into_one_map() {
    let i = dpl::inspect!(prog::steps_doubled);
    shape(i, (2, 1, 1, 0));
    assert_eq!(soacs(i.fused_ir, "map"), 1, "{}", i.fused_ir);
    assert_eq!(rt_calls(i.cpu_rust, "map"), 1, "{}", i.cpu_rust);
}
