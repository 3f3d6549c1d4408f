use dpl::prelude::*;

#[parallel]
mod kernels {
    use dpl::prelude::*;

    pub fn ping(x: &[f32]) -> f32 {
        pong(x) + 1.0
    }

    pub fn pong(x: &[f32]) -> f32 {
        ping(x) * 2.0
    }
}

fn main() {}
