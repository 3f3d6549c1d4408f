//! Property test: random well-scoped functions print and parse back to themselves (up to
//! spans), and printing is a fixed point.

mod text_support;

use dpl_core::text::{parse, print, without_spans};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn print_parse_round_trips(seed in any::<u64>()) {
        let f = text_support::random_function(seed);
        let text = print(&f);
        let g = parse(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(&g, &without_spans(&f), "{}", text);
        prop_assert_eq!(print(&g), text);
    }
}

#[test]
fn generator_makes_large_functions_too() {
    // The round trip is only meaningful if the generator produces non-trivial functions.
    let sizes: Vec<usize> = (0..200)
        .map(|s| text_support::random_function(s).vars.len())
        .collect();
    assert!(sizes.iter().any(|&n| n > 40), "{sizes:?}");
    let texts: Vec<String> = (0..200)
        .map(|s| print(&text_support::random_function(s)))
        .collect();
    assert!(texts.iter().any(|t| t.contains("soac scatter_reduce(")));
    assert!(texts.iter().any(|t| t.contains(" if %")));
    assert!(texts.iter().any(|t| t.contains("declare")));
}
