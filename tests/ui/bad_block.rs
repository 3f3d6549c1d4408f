use dpl::prelude::*;

#[parallel(block = 100)]
fn f(x: &[f32]) -> f32 {
    sum(x)
}

#[parallel(inner = "warp", block = 2048)]
fn g(x: &[f32]) -> f32 {
    sum(x)
}

#[parallel(block = "big")]
fn h(x: &[f32]) -> f32 {
    sum(x)
}

#[parallel(block = 64, block = 128)]
fn k(x: &[f32]) -> f32 {
    sum(x)
}

#[parallel(scan = "fast")]
fn s(x: &[f32]) -> f32 {
    sum(x)
}

fn main() {}
