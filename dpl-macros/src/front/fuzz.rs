//! Fuzzing the front end: random token streams and randomly generated bodies, mostly valid
//! and often broken, must never make it panic; whatever it accepts must pass the IR
//! verifier.

use std::str::FromStr;

use proc_macro2::TokenStream;
use proptest::prelude::*;

use super::{Options, expand_fn, expand_mod};

/// Tokens from which random streams are drawn: the language's words, Rust's keywords that
/// it rejects, operators and delimiters (unbalanced ones make the stream fail to lex,
/// which is fine: those cases are skipped).
const WORDS: &[&str] = &[
    "map",
    "reduce",
    "sum",
    "filter",
    "gather",
    "scan",
    "zip",
    "unzip",
    "len",
    "range",
    "x",
    "y",
    "n",
    "k",
    "v",
    "f",
    "let",
    "mut",
    "fn",
    "if",
    "else",
    "for",
    "in",
    "while",
    "loop",
    "match",
    "return",
    "move",
    "unsafe",
    "async",
    "await",
    "self",
    "mod",
    "struct",
    "use",
    "pub",
    "f32",
    "i32",
    "usize",
    "Vec",
    "Nested",
    "Result",
    "Error",
    "as",
    "_",
    "=",
    "==",
    "+",
    "-",
    "*",
    "/",
    "%",
    "&&",
    "||",
    "!",
    "&",
    "|",
    "^",
    "<<",
    ">>",
    "<",
    ">",
    "..",
    ".",
    ",",
    ";",
    ":",
    "::",
    "->",
    "=>",
    "?",
    "#",
    "@",
    "'a",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "()",
    "{}",
    "[]",
    "0",
    "1",
    "2.0",
    "3u32",
    "300u8",
    "-3i16",
    "1e9",
    "-1",
    "\"s\"",
    "'c'",
    "b'x'",
    "true",
    "false",
    "f32::MAX",
    "f32::sqrt",
    "println!",
    "x.len()",
    "x[0]",
    "|v|",
    "|a, b|",
    "(x, y)",
    ".0",
];

fn tokens() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(WORDS), 0..40).prop_map(|w| w.join(" "))
}

/// Random expressions over `x: &[f32]`, `y: &[i32]`, `n: usize`, `k: f32`, mixing the
/// language with constructs it rejects.
fn expr() -> impl Strategy<Value = String> {
    let leaf = prop::sample::select(
        &[
            "x",
            "y",
            "n",
            "k",
            "v",
            "1.0",
            "2",
            "true",
            "3u32",
            "-4i64",
            "7u8",
            "-3i16",
            "f32::MAX",
            "f64::consts::PI",
            "undefined",
            "\"s\"",
            "[1, 2]",
            "0..n",
            "()",
            "x.len()",
            "len(y)",
            "range(n)",
            "sum",
            "f32::sqrt",
        ][..],
    )
    .prop_map(str::to_string);
    leaf.prop_recursive(4, 48, 4, |e| {
        let op = prop::sample::select(
            &[
                "+", "-", "*", "/", "%", "<", "==", ">=", "&", "|", "^", "<<", "&&", "||", "+=",
            ][..],
        );
        let method = prop::sample::select(
            &[
                "sqrt",
                "abs",
                "max",
                "len",
                "foo",
                "iter",
                "clone",
                "mul_add",
                "wrapping_add",
            ][..],
        );
        let prim = prop::sample::select(
            &[
                "sum", "min", "max", "any", "count", "indices", "unzip", "sort", "nope",
            ][..],
        );
        prop_oneof![
            (e.clone(), op, e.clone()).prop_map(|(a, o, b)| format!("({a} {o} {b})")),
            e.clone().prop_map(|a| format!("-{a}")),
            e.clone().prop_map(|a| format!("!{a}")),
            e.clone().prop_map(|a| format!("*&{a}")),
            (e.clone(), e.clone(), e.clone())
                .prop_map(|(c, a, b)| format!("if {c} {{ {a} }} else {{ {b} }}")),
            (e.clone(), e.clone()).prop_map(|(c, a)| format!("if {c} {{ {a} }}")),
            (e.clone(), e.clone()).prop_map(|(b, s)| format!("map(|v| {b}, {s})")),
            (e.clone(), e.clone()).prop_map(|(b, s)| format!("map(|v, w| {b}, {s}, {s})")),
            (e.clone(), e.clone()).prop_map(|(b, s)| format!("map(|v: f32| {b}, {s})")),
            (e.clone(), e.clone(), e.clone())
                .prop_map(|(b, s, i)| format!("reduce(|a, v| {b}, {s}, {i})")),
            (e.clone(), e.clone()).prop_map(|(b, s)| format!("filter(|&v| {b}, {s})")),
            (e.clone(), e.clone()).prop_map(|(b, s)| format!("scan(|a, b| {b}, {s})")),
            (prim, e.clone()).prop_map(|(p, s)| format!("{p}({s})")),
            (e.clone(), e.clone()).prop_map(|(s, i)| format!("gather({s}, {i})")),
            (e.clone(), e.clone()).prop_map(|(s, i)| format!("{s}[{i}]")),
            (e.clone(), method).prop_map(|(a, m)| format!("{a}.{m}()")),
            (e.clone(), e.clone()).prop_map(|(a, b)| format!("{a}.max({b})")),
            (e.clone(), e.clone()).prop_map(|(a, b)| format!("{{ let k = {a}; {b} }}")),
            (e.clone(), e.clone()).prop_map(|(a, b)| format!("{{ let (p, q) = {a}; {b} }}")),
            (e.clone(), e.clone()).prop_map(|(a, b)| format!("{{ let g = |v| {a}; g({b}) }}")),
            (e.clone(), e.clone())
                .prop_map(|(a, b)| format!("{{ let g = move |v| {a}; map(g, {b}) }}")),
            (e.clone(), e.clone()).prop_map(|(a, b)| format!(
                "{{ let g = |v| {a}; let h = |v| g(g(v)); map(h, {b}) }}"
            )),
            (e.clone(), e.clone())
                .prop_map(|(a, b)| format!("{{ fn h(v: f32) -> f32 {{ {a} }} h({b}) }}")),
            (e.clone(), e.clone())
                .prop_map(|(a, b)| format!("{{ fn h(v: f32) -> f32 {{ h({a}) }} {b} }}")),
            (e.clone(), e.clone()).prop_map(|(a, b)| format!("({a}, {b})")),
            e.clone().prop_map(|a| format!("{a}.0")),
            e.clone().prop_map(|a| format!("{a} as f32")),
            e.clone().prop_map(|a| format!("{a} as bool")),
            e.clone().prop_map(|a| format!("{{ {a}; }}")),
            e.clone().prop_map(|a| format!("{{ let mut m = {a}; m }}")),
            e.clone().prop_map(|a| format!("{{ for i in x {{}} {a} }}")),
            e.clone().prop_map(|a| format!("match {a} {{ _ => 1 }}")),
            e.clone().prop_map(|a| format!("{a}?")),
            e.clone().prop_map(|a| format!("(|v| {a})(1.0)")),
            e.clone().prop_map(|a| format!("unsafe {{ {a} }}")),
            e.prop_map(|a| format!("|v| {a}")),
        ]
    })
}

/// Lowers `body` as the body of a fixed signature; whatever is accepted must verify.
fn check_body(body: &str) {
    let src = format!("fn f(x: &[f32], y: &[i32], n: usize, k: f32) -> f32 {{ {body} }}");
    let Ok(item) = syn::parse_str::<syn::ItemFn>(&src) else {
        return;
    };
    if let Ok(l) = expand_fn(&Options::default(), item)
        && let Err(e) = dpl_core::verify::verify(&l.func)
    {
        panic!(
            "accepted but does not verify: {e:?}\n{src}\n{}",
            dpl_core::text::print(&l.func)
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_tokens_never_panic(t in tokens()) {
        let Ok(ts) = TokenStream::from_str(&t) else { return Ok(()) };
        let _ = Options::parse(ts.clone());
        check_body(&t);
        if let Ok(item) = syn::parse2::<syn::ItemFn>(ts.clone()) {
            let _ = expand_fn(&Options::default(), item);
        }
        let src = format!("mod m {{ fn a(x: &[f32]) -> f32 {{ {t} }} fn b(x: &[f32]) -> f32 {{ a(x) }} }}");
        if let Ok(m) = syn::parse_str::<syn::ItemMod>(&src) {
            let _ = expand_mod(&Options::default(), &m);
        }
    }

    #[test]
    fn random_bodies_never_panic_and_accepted_ones_verify(e in expr(), lets in prop::collection::vec(expr(), 0..3)) {
        let mut body = String::new();
        for (i, l) in lets.iter().enumerate() {
            body.push_str(&format!("let t{i} = {l}; "));
        }
        body.push_str(&e);
        check_body(&body);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    /// The whole attribute (front end and code generation) on generated bodies.
    #[test]
    fn the_macro_never_panics(e in expr()) {
        let item = format!("fn f(x: &[f32], y: &[i32], n: usize, k: f32) -> f32 {{ {e} }}");
        let Ok(ts) = TokenStream::from_str(&item) else { return Ok(()) };
        let _ = crate::expand(TokenStream::new(), ts);
    }
}

/// The inputs proptest found worth keeping: each once, by name.
#[test]
fn regressions() {
    for body in [
        "",
        ";",
        "{ }",
        "x",
        "|v| v",
        "map(sum, sum)",
        "map(|v| v)",
        "map(|v| v, |w| w)",
        "reduce(f32::max, x)",
        "f32::sqrt",
        "f32::sqrt(1.0, 2.0)",
        "f32::NOPE",
        "i32::sqrt(1)",
        "bool::max(true, false)",
        "{ let g = |v| v; let g2 = g; map(g2, x)[0] }",
        "{ let (a, ..) = (1.0, 2.0); a }",
        "{ fn a() -> f32 { b() } fn b() -> f32 { a() } a() }",
        "{ let g = |v| { let h = |w| w + v; h(v) }; g(1.0) + g(2.0) }",
        "(|a, b| a + b)(1.0, 2.0, 3.0)",
        "-9223372036854775809i64 as f32",
        "340282366920938463463374607431768211456",
    ] {
        check_body(body);
    }
}
