use dpl::prelude::*;

#[parallel]
mod m {
    use dpl::prelude::*;

    pub fn axpy(a: f32, x: &[f32], y: &mut [f32]) {
        *y = map(|xi, yi| a * xi + yi, x, y);
    }

    pub fn norm(x: &[f32]) -> f32 {
        sum(map(|v| v * v, x))
    }
}

fn main() {}
