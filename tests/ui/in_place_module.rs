use dpl::prelude::*;

// A function of a module may change its `&mut` parameters; another function of the module
// cannot call it (calls are inlined into values, and the caller has nothing to change).
#[parallel]
mod m {
    use dpl::prelude::*;

    pub fn axpy(a: f32, x: &[f32], y: &mut [f32]) {
        *y = map(|xi, yi| a * xi + yi, x, y);
    }

    pub fn twice(a: f32, x: &[f32], y: &[f32]) -> f32 {
        let mut z = y.to_vec();
        axpy(a, x, &mut z);
        sum(z)
    }
}

fn main() {}
