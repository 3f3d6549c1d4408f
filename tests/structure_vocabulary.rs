//! Structure of the everyday vocabulary that the front end lowers to index arithmetic
//! (slices, `reverse`, `concat`, `range(a, b)`, `argmin`): read with `dpl::inspect!`, each
//! fuses with its reader, so no temporary sequence is left. (Before fusion each is a `map`
//! over a `range` of positions: two loops that fusion removes.)

mod common_structure;
use common_structure::{rt_calls, shape, soacs};

mod prog {
    use dpl::prelude::*;

    #[parallel]
    pub fn sum_of_slice(x: &[f32], a: usize, b: usize) -> f32 {
        sum(x[a..b])
    }

    #[parallel]
    pub fn map_of_slices(x: &[i64], k: usize) -> Vec<i64> {
        map(|p, q| p - q, x[k..], x[..len(x) - k])
    }

    #[parallel]
    pub fn sum_of_reverse(x: &[i32]) -> i32 {
        sum(map(|v| v * 2, reverse(x)))
    }

    #[parallel]
    pub fn concat_squared(a: &[u32], b: &[u32]) -> Vec<u32> {
        map(|v| v * v, concat(a, b))
    }

    #[parallel]
    pub fn window_total(a: usize, b: usize) -> usize {
        sum(range(a, b))
    }

    #[parallel]
    pub fn argmin_of_map(x: &[f64]) -> usize {
        argmin(map(|v| (v - 1.0).abs(), x))
    }

    #[parallel]
    pub fn neighbours(adj: &Nested<u32>, frontier: &[u32]) -> Vec<u32> {
        flatten(map(|v| filter(|w| w % 3 != 0, adj[v]), frontier))
    }

    #[parallel]
    pub fn outer(x: &[f32], y: &[f32]) -> (Matrix<f32>, usize) {
        (map(|a| map(|b| a * b, y), x), argmax(y))
    }

    #[parallel]
    pub fn classify(x: &[i32], e: &[i32]) -> Vec<f32> {
        const ONE: f32 = 1.0;
        map(
            |v, k| match v {
                0 => ONE,
                1..=9 => (v as f32).powi(k),
                _ => (v as f32).powi(-3),
            },
            x,
            e,
        )
    }
}

#[test]
fn a_slice_read_by_a_reduction_is_one_loop() {
    let i = dpl::inspect!(prog::sum_of_slice);
    shape(i, (3, 2, 1, 0));
    assert_eq!(soacs(i.fused_ir, "map"), 0, "{}", i.fused_ir);
    assert_eq!(rt_calls(i.cpu_rust, "reduce"), 1, "{}", i.cpu_rust);
    // The bounds are checked once, before the loop.
    assert!(i.fused_ir.contains("assert(slice)"), "{}", i.fused_ir);
}

#[test]
fn slices_read_by_a_map_are_one_loop() {
    let i = dpl::inspect!(prog::map_of_slices);
    shape(i, (5, 4, 1, 0));
    assert_eq!(rt_calls(i.cpu_rust, "map"), 1, "{}", i.cpu_rust);
}

#[test]
fn reverse_fuses_with_its_producer_and_reader() {
    let i = dpl::inspect!(prog::sum_of_reverse);
    shape(i, (4, 3, 1, 0));
    assert_eq!(soacs(i.fused_ir, "reduce"), 1, "{}", i.fused_ir);
}

#[test]
fn concat_fuses_with_its_reader() {
    let i = dpl::inspect!(prog::concat_squared);
    shape(i, (3, 2, 1, 0));
}

#[test]
fn range_between_is_not_stored() {
    let i = dpl::inspect!(prog::window_total);
    shape(i, (3, 2, 1, 0));
}

#[test]
fn argmin_is_one_reduction_over_its_input() {
    let i = dpl::inspect!(prog::argmin_of_map);
    assert_eq!(soacs(i.fused_ir, "reduce"), 1, "{}", i.fused_ir);
    assert_eq!(soacs(i.fused_ir, "map"), 0, "{}", i.fused_ir);
    assert!(i.fused_ir.contains("non_empty"), "{}", i.fused_ir);
}

/// Every form compiles for the GPU places (none is sent to the CPU instead).
#[cfg(feature = "sim")]
#[test]
fn every_form_compiles_for_the_gpu() {
    for i in [
        dpl::inspect!(prog::sum_of_slice),
        dpl::inspect!(prog::map_of_slices),
        dpl::inspect!(prog::sum_of_reverse),
        dpl::inspect!(prog::concat_squared),
        dpl::inspect!(prog::window_total),
        dpl::inspect!(prog::argmin_of_map),
        dpl::inspect!(prog::neighbours),
        dpl::inspect!(prog::outer),
        dpl::inspect!(prog::classify),
    ] {
        assert!(
            i.gpu_not_compiled.is_empty(),
            "{}: {}",
            i.name,
            i.gpu_not_compiled
        );
        assert!(!i.ptx.is_empty(), "{}", i.name);
    }
}
