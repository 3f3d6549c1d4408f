use dpl::prelude::*;

#[parallel]
fn f(x: &[u32], k: u32) -> u32 {
    let steps = |mut n: u32| {
        let mut s = 0u32;
        while n > 1 {
            n /= 2;
            s += 1;
        }
        s
    };
    steps(k) + sum(map(steps, x))
}

fn main() {}
