use dpl::parallel;

#[parallel]
mod kernels {
    use dpl::prelude::*;

    const K: f32 = 2.0;

    pub fn scale(x: &[f32]) -> Vec<f32> {
        map(|v| v * 2.0, x)
    }
}

fn main() {}
