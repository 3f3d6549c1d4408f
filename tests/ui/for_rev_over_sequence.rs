use dpl::prelude::*;

#[parallel]
fn f(x: &[u32], w: &[u32]) -> Vec<u32> {
    map(
        |v| {
            let mut s = v;
            for c in w.iter().rev() {
                s = s * 3 + c;
            }
            s
        },
        x,
    )
}

fn main() {}
