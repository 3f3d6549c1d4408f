use dpl::prelude::*;

// Calls of a module's generic functions from #[parallel] code take their types from the
// arguments or a turbofish; a type outside the callee's bound is an error at the
// argument or in the turbofish, and a type nothing decides is an error at the call.
#[parallel]
mod m {
    use dpl::prelude::*;

    pub fn scaled<T: Float>(x: &[T], k: T) -> Vec<T> {
        map(|v| v * k, x)
    }

    pub fn count<T: Num>(n: usize) -> usize {
        n + 1
    }

    pub fn ok(x: &[f32]) -> Vec<f32> {
        scaled(x, 2.0)
    }

    pub fn outside_the_bound(x: &[i32]) -> Vec<i32> {
        scaled(x, 2)
    }

    pub fn undecided(n: usize) -> usize {
        count(n)
    }

    pub fn named(n: usize) -> usize {
        count::<u8>(n) + count::<bool>(n) + count::<f32, f64>(n) + twice::<f32>(n)
    }

    fn twice(n: usize) -> usize {
        n * 2
    }
}

fn main() {}
