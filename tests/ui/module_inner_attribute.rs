use dpl::prelude::*;

#[parallel]
mod kernels {
    use dpl::prelude::*;

    #[parallel(inner = "block")]
    pub fn total(x: &[f32]) -> f32 {
        sum(x)
    }
}

fn main() {}
