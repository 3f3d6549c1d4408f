//! Helpers of the structure suites (`structure.rs`, `structure_nested.rs`): reading what
//! `dpl::inspect!` reports about a `#[parallel]` function (loop and temporary counts,
//! combinators in its IR, calls in its generated Rust).
#![allow(dead_code)]

/// `(loops before fusion, temporaries before, loops after, temporaries after)`.
pub fn counts(i: &dpl::Inspect) -> (usize, usize, usize, usize) {
    (
        i.loops_before_fusion,
        i.temporaries_before_fusion,
        i.loops,
        i.temporaries,
    )
}

/// Asserts the counts of `i` ([`counts`]), printing its IR before and after fusion when
/// they differ.
#[track_caller]
pub fn shape(i: dpl::Inspect, want: (usize, usize, usize, usize)) {
    assert_eq!(
        counts(&i),
        want,
        "{}: (loops before, temporaries before, loops, temporaries)\nnormalized:\n{}\nfused:\n{}",
        i.name,
        i.normalized_ir,
        i.fused_ir
    );
}

/// Occurrences of `soac <kind>(` in an IR text.
pub fn soacs(ir: &str, kind: &str) -> usize {
    ir.matches(&format!("soac {kind}(")).count()
}

/// The generated Rust with all whitespace runs made single spaces (it is printed with line
/// breaks anywhere between tokens).
pub fn flat(rust: &str) -> String {
    rust.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Occurrences of a call `<module> :: <name>(` into any module of the run-time support
/// (`::dpl::__private::rt`, `::dpl::__private::heavy`, ...) in generated Rust. A helper's
/// `_canon` form (`map_canon`: the same loop, its float results made NaN-canonical
/// afterwards) counts as the helper.
pub fn rt_calls(cpu_rust: &str, name: &str) -> usize {
    let call = format!("{name}(");
    let canon = format!("{name}_canon(");
    flat(cpu_rust)
        .split("__private :: ")
        .skip(1)
        .filter(|rest| match rest.split_once(" :: ") {
            Some((module, after)) => {
                !module.is_empty()
                    && module
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && (after.starts_with(&call) || after.starts_with(&canon))
            }
            None => false,
        })
        .count()
}
