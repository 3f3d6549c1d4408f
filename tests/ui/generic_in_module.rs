use dpl::prelude::*;

#[parallel]
mod m {
    use dpl::prelude::*;

    pub fn f<T: Float>(x: &[T]) -> Vec<T> {
        map(|v| v, x)
    }
}

fn main() {}
