use dpl::prelude::*;

// `map(|r| scan(...), x)` gives a row per row: the result is `Nested<i64>`, and the
// per-row minima are scalars, so the tuple is `(Nested<i64>, Vec<i64>)`.
#[parallel]
fn f(x: &Nested<i64>) -> (Vec<i64>, Vec<i64>) {
    (map(|r| scan(|a, b| a + b, r), x), map(|r| if len(r) > 0 { min(r) } else { 0 }, x))
}

fn main() {}
