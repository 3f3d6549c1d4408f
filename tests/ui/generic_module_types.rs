use dpl::prelude::*;

// A generic function of a #[parallel] module names the types it is generated for in an
// attribute of its own; a call with another type is a compile error, from #[parallel]
// code and from Rust. The attribute names nothing else, and only on a generic function.
#[parallel]
mod m {
    use dpl::prelude::*;

    #[parallel(types(T = "f32, f64"))]
    pub fn axpy<T: Float>(a: T, x: &[T], y: &[T]) -> Vec<T> {
        map(|u, v| a * u + v, x, y)
    }

    pub fn half_precision(x: &[f16]) -> Vec<f16> {
        axpy(f16::ONE, x, x)
    }

    #[parallel(inner = "block", types(T = "f32"))]
    pub fn scheduled<T: Float>(x: &[T]) -> T {
        sum(x)
    }

    #[parallel(types(T = "f32"))]
    pub fn not_generic(x: &[f32]) -> f32 {
        sum(x)
    }
}

#[parallel]
mod o {
    use dpl::prelude::*;

    #[parallel(types(T = "i32"))]
    pub fn outside<T: Float>(x: &[T]) -> T {
        sum(x)
    }
}

#[parallel]
mod n {
    use dpl::prelude::*;

    #[parallel(types(T = "f32, f64"))]
    pub fn axpy<T: Float>(a: T, x: &[T], y: &[T]) -> Vec<T> {
        map(|u, v| a * u + v, x, y)
    }
}

fn main() {
    let x = vec![dpl::bf16::ONE; 4];
    let _ = n::axpy(dpl::bf16::ONE, &x, &x);
}
