use dpl::prelude::*;

#[parallel]
fn f(x: &[f32], k: f32) -> Vec<f32> {
    pub const A: f32 = 1.0;
    const B: f32 = k * 2.0;
    static C: f32 = 3.0;
    map(|v| v * A + B + C, x)
}

fn main() {}
