use dpl::prelude::*;

// Scattering rows into rows would change row lengths in place; rows are reordered with
// `gather` or `permute`.
#[parallel]
fn f(rows: &Nested<i32>, idx: &[usize], dst: &Nested<i32>) -> Nested<i32> {
    scatter(rows, idx, dst)
}

fn main() {}
