use dpl::prelude::*;

#[parallel]
fn saxpy(a: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
    map(|xi, yi| a * xi + yi, x, y)
}

#[parallel]
fn dot(x: &[f32], y: &[f32]) -> f32 {
    sum(map(|a, b| a * b, x, y))
}

fn main() {
    let y = saxpy(2.0, &[1.0, 2.0], &[10.0, 20.0]);
    println!("{y:?}");
    println!("{}", dot(&[1.0, 2.0], &[3.0, 4.0]));
    println!("{}", dpl::inspect!(dot).fused_ir);
    println!("{}", dpl::inspect!(dot).cpu_rust);
}
