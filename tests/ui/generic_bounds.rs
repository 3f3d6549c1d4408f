use dpl::prelude::*;

// A parameter without one of dpl's bounds, an unknown bound and a const parameter.
#[parallel]
fn f<T: Copy, U: std::hash::Hash + Num, const N: usize>(x: &[T], y: &[U]) -> Vec<U> {
    map(|v| v, y)
}

// `types` lists a type the bound does not admit and one that is not a scalar.
#[parallel(types(T = "f32, i32, String"))]
fn g<T: Float>(x: &[T]) -> Vec<T> {
    map(|v| v, x)
}

// `types` on a function without type parameters.
#[parallel(types(T = "f32"))]
fn h(x: &[f32]) -> Vec<f32> {
    map(|v| v, x)
}

fn main() {}
