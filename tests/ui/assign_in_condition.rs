use dpl::prelude::*;

#[parallel]
fn f(x: &[u32]) -> Vec<u32> {
    map(
        |v| {
            let mut n = v;
            let big = n > 10 && {
                n = 10;
                true
            };
            if big { n } else { v }
        },
        x,
    )
}

fn main() {}
