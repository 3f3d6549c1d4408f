//! Compile-fail tests of `#[parallel]`: one program per rejected construct in `tests/ui/`,
//! each with the compiler output it must produce beside it (`.stderr`). After changing a
//! message, regenerate with `TRYBUILD=overwrite cargo test --test ui` and review the diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
