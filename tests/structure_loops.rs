//! Structure of programs with loops, read with `dpl::inspect!`: a loop inside an element
//! function is an ordinary part of that function, so the maps around it still fuse into one
//! pass (on the CPU it is a Rust `loop` inside the fused closure); a loop at the top level
//! of a body fuses the steps inside its body as a body's are fused, merges sibling maps
//! there, does not pull a producer defined before it into its iterations (that would
//! recompute it at each one), and carries its vectors without copying them. A map whose
//! element holds a loop is balanced by its estimated work.

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

    /// The same arithmetic on `f16` (software on the CPU) and on `f32` (one instruction).
    #[parallel]
    pub fn poly_f16(x: &[f16]) -> Vec<f16> {
        map(|v| v * v + v, x)
    }

    #[parallel]
    pub fn poly_f32(x: &[f32]) -> Vec<f32> {
        map(|v| v * v + v, x)
    }
}

/// Top-level loops.
mod top {
    use dpl::prelude::*;

    /// The SPEC's power iteration.
    #[parallel]
    pub fn power_iteration(a: &Matrix<f64>, v0: &[f64], iters: usize) -> (Vec<f64>, f64) {
        let mut v = v0.to_vec();
        let mut lambda = 0.0;
        for _ in 0..iters {
            let w = map(|row| sum(map(|aij, vj| aij * vj, row, v)), a);
            lambda = sum(map(|wi| wi * wi, w)).sqrt();
            v = map(|wi| wi / lambda, w);
        }
        (v, lambda)
    }

    /// A scaling computed once before the loop, chains of maps and two sibling maps in it.
    #[parallel]
    pub fn relax(a: &[f32], b: &[f32], v0: &[f32], n: u32) -> (Vec<f32>, Vec<f32>) {
        let s = map(|x| x.sqrt() + 1.0f32, a);
        let mut u = v0.to_vec();
        let mut w = v0.to_vec();
        for _ in 0..n {
            let t = map(|ui, si| ui * si, map(|ui| ui + 1.0f32, u), s);
            u = map(|ti, bi| ti - bi, t, b);
            w = map(|ti, wi| ti + wi, t, w);
        }
        (u, w)
    }
}

#[test]
fn a_top_level_loop_fuses_its_body_and_moves_what_it_carries() {
    let i = dpl::inspect!(top::power_iteration);
    // Per iteration: the row products (a map of sums), the sum of squares and the
    // normalization: three loops, the map inside the sum fused into it.
    assert_eq!(i.fused_ir.matches("loop(").count(), 1, "{}", i.fused_ir);
    assert_eq!(soacs(i.fused_ir, "reduce"), 2, "{}", i.fused_ir);
    assert_eq!(soacs(i.fused_ir, "map"), 2, "{}", i.fused_ir);
    // `v0.to_vec()` is the only copy (in each variant of the body: contiguous and strided
    // matrix rows): the loop's vectors move from one iteration to the next and into the
    // result.
    let rust = flat(i.cpu_rust);
    let copies = rust.matches("to_vec").count();
    assert_eq!(copies, 2, "{}", i.cpu_rust);
    assert_eq!(
        rust.matches("to_vec(v1_v0)").count(),
        copies,
        "{}",
        i.cpu_rust
    );
}

#[test]
fn a_producer_before_a_top_level_loop_is_computed_once_and_siblings_merge() {
    let i = dpl::inspect!(top::relax);
    let ir = i.fused_ir;
    let (before, inside) = ir.split_at(ir.find("loop(").expect("a loop"));
    // `s` stays a loop of its own before the loop, not recomputed in each iteration.
    assert_eq!(soacs(before, "map"), 1, "{ir}");
    // Inside: `t` (two maps fused into one) is read by the next two maps, which run over
    // the same length in the same phase: they merge into one loop of pairs and its two
    // projections (on the CPU one loop writing two vectors).
    assert_eq!(soacs(inside, "map"), 4, "{ir}");
    assert!(inside.contains("both: [(f32, f32)] = soac map"), "{ir}");
    assert_eq!(rt_calls(i.cpu_rust, "map_unzip2"), 1, "{}", i.cpu_rust);
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

/// A map whose element holds a loop, or arithmetic done in software, is costly: it goes
/// parallel by its estimated work and balances it in small chunks (`heavy::map`), where a
/// streaming map goes parallel only from `rt::GRAIN` elements (`rt::map`).
#[test]
fn costly_elements_are_balanced_by_their_estimated_work() {
    for (name, i, costly) in [
        ("a loop", dpl::inspect!(prog::steps_doubled), true),
        ("f16 arithmetic", dpl::inspect!(prog::poly_f16), true),
        ("f32 arithmetic", dpl::inspect!(prog::poly_f32), false),
    ] {
        let s = flat(i.cpu_rust);
        let heavy = s.matches("heavy :: map(").count();
        assert_eq!(heavy, usize::from(costly), "{name}: {s}");
        assert_eq!(s.contains("saturating_mul("), costly, "{name}: {s}");
        assert_eq!(rt_calls(i.cpu_rust, "map"), 1, "{name}: {s}");
    }
}

#[test]
fn floats_a_loop_carries_are_made_canonical_after_it_not_at_every_iteration() {
    let i = dpl::inspect!(prog::total_escape);
    let rust = flat(i.cpu_rust);
    // `x` and `y` are read only by arithmetic and comparisons in the loop, and their next
    // values are arithmetic results: no operation in the loop makes its NaN canonical,
    // the two carried values are made canonical once, after it (the reduce's element
    // function returns only the count).
    let canon: Vec<&str> = rust
        .split("canon_f32(")
        .skip(1)
        .map(|s| s.split(')').next().unwrap_or(""))
        .collect();
    assert_eq!(canon.len(), 2, "{}", i.cpu_rust);
    assert!(
        canon.iter().all(|a| a.starts_with('v') && !a.contains(' ')),
        "{canon:?} in {}",
        i.cpu_rust
    );
    let after = rust.rfind("canon_f32(").unwrap_or(0);
    assert!(
        rust.find("loop {").is_some_and(|l| l < after),
        "{}",
        i.cpu_rust
    );
}
