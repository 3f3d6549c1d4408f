use dpl::prelude::*;

#[parallel]
fn f(x: &[u32]) -> Vec<u32> {
    map(
        |v| {
            let mut s = 0u32;
            for i in (0..v).step_by(0) {
                s += i;
            }
            s
        },
        x,
    )
}

fn main() {}
