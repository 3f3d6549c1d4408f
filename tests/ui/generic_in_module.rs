use dpl::prelude::*;

// A generic function of a module is instantiated like a lone one and may call the
// module's other functions; another function of the module cannot call it (yet).
#[parallel]
mod m {
    use dpl::prelude::*;

    fn twice(x: &[f64]) -> Vec<f64> {
        map(|v| v * 2.0, x)
    }

    pub fn scaled<T: Float>(x: &[T], k: T) -> Vec<T> {
        map(|v| v * k, x)
    }

    pub fn uses_twice<T: Float>(x: &[f64], y: &[T]) -> (Vec<f64>, T) {
        (twice(x), sum(y))
    }

    pub fn caller(x: &[f32]) -> Vec<f32> {
        scaled(x, 2.0)
    }
}

fn main() {}
