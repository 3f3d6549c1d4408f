use dpl::prelude::*;

#[parallel]
fn f(x: &[u32], w: &[u32]) -> Vec<u32> {
    map(
        |v| {
            let mut s = v;
            for c in w {
                s += c;
            }
            s
        },
        x,
    )
}

fn main() {}
