use dpl::prelude::*;

#[parallel(types(T = "f32, i64"))]
fn twice<T: Num>(x: &[T]) -> Vec<T> {
    map(|v| v * 2, x)
}

// The bound admits more types than were generated.
fn twice_any<T: Num>(x: &[T]) -> Vec<T> {
    twice(x)
}

fn main() {
    // Generated for f32 and i64 only.
    let _ = twice(&[1u8]);
    let _ = twice_any(&[1.0f32]);
}
