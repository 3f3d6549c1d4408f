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

// ---------------------------------------------------------------------------------------
// Mutations of the programs of the test suite and the examples.

/// Every `#[parallel]` function and module of the repository's tests and examples, as
/// source text: the corpus the mutation fuzzer starts from.
fn corpus() -> Vec<String> {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push(p);
            }
        }
    }
    fn parallel_items(items: &[syn::Item], out: &mut Vec<String>) {
        use quote::ToTokens;
        for item in items {
            match item {
                syn::Item::Fn(f) if f.attrs.iter().any(super::is_parallel_attr) => {
                    out.push(f.to_token_stream().to_string());
                }
                syn::Item::Mod(m) if m.attrs.iter().any(super::is_parallel_attr) => {
                    out.push(m.to_token_stream().to_string());
                }
                syn::Item::Mod(m) => {
                    if let Some((_, inner)) = &m.content {
                        parallel_items(inner, out);
                    }
                }
                _ => {}
            }
        }
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    walk(&root.join("tests"), &mut files);
    walk(&root.join("examples"), &mut files);
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        if let Ok(file) = syn::parse_file(&text) {
            parallel_items(&file.items, &mut out);
        }
    }
    out
}

/// A token of a flattened stream: its text and whether it joins the next one (`-` of `->`).
#[derive(Clone)]
struct Tok {
    text: String,
    joint: bool,
    /// An opening or closing delimiter (never mutated, so the stream stays balanced).
    delim: bool,
}

fn flatten(ts: TokenStream, out: &mut Vec<Tok>) {
    use proc_macro2::{Delimiter, Spacing, TokenTree};
    for t in ts {
        match t {
            TokenTree::Group(g) => {
                let (open, close) = match g.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Brace => ("{", "}"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::None => ("", ""),
                };
                let delim = |s: &str| Tok {
                    text: s.to_string(),
                    joint: false,
                    delim: true,
                };
                out.push(delim(open));
                flatten(g.stream(), out);
                out.push(delim(close));
            }
            TokenTree::Punct(p) => out.push(Tok {
                text: p.as_char().to_string(),
                joint: p.spacing() == Spacing::Joint,
                delim: false,
            }),
            other => out.push(Tok {
                text: other.to_string(),
                joint: false,
                delim: false,
            }),
        }
    }
}

fn unflatten(toks: &[Tok]) -> String {
    let mut s = String::from("\n");
    for t in toks {
        s.push_str(&t.text);
        if !t.joint {
            s.push(' ');
        }
    }
    s
}

/// Literals that stress the front end's constant handling.
const ODD_LITERALS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2.5",
    "1e40",
    "-0.0",
    "255u8",
    "256u8",
    "-129i8",
    "65536u16",
    "18446744073709551615",
    "18446744073709551616",
    "3usize",
    "1f32",
    "0.5f64",
    "true",
    "false",
    "'c'",
    "\"s\"",
    "b'x'",
    "1_000",
];

/// Applies 1 to 3 random mutations to `toks` (never to a delimiter): delete, duplicate,
/// replace with a word of the corpus or an odd literal, swap with the next token, insert a
/// word, or empty a group.
fn mutate(toks: &mut Vec<Tok>, vocab: &[Tok], rng: &mut dpl_testkit::SplitMix64) {
    for _ in 0..rng.int_in(1..=3) {
        let plain: Vec<usize> = (0..toks.len()).filter(|&i| !toks[i].delim).collect();
        if plain.is_empty() {
            return;
        }
        let i = plain[rng.int_in(0..=plain.len() as i64 - 1) as usize];
        let word = vocab[rng.int_in(0..=vocab.len() as i64 - 1) as usize].clone();
        match rng.int_in(0..=6) {
            0 => {
                toks.remove(i);
            }
            1 => {
                let t = toks[i].clone();
                toks.insert(i, t);
            }
            2 => toks[i] = word,
            3 => {
                let lit = ODD_LITERALS[rng.int_in(0..=ODD_LITERALS.len() as i64 - 1) as usize];
                toks[i] = Tok {
                    text: lit.to_string(),
                    joint: false,
                    delim: false,
                };
            }
            4 => {
                if let Some(&j) = plain.iter().find(|&&j| j > i) {
                    toks.swap(i, j);
                }
            }
            5 => toks.insert(i, word),
            _ => {
                // Empty the innermost group around `i`.
                let (mut depth, mut start) = (0i32, None);
                for k in (0..i).rev() {
                    if toks[k].delim && matches!(toks[k].text.as_str(), ")" | "}" | "]") {
                        depth += 1;
                    } else if toks[k].delim && !toks[k].text.is_empty() {
                        if depth == 0 {
                            start = Some(k);
                            break;
                        }
                        depth -= 1;
                    }
                }
                let Some(start) = start else { continue };
                let mut depth = 0i32;
                let end = (start + 1..toks.len()).find(|&k| {
                    if !toks[k].delim || toks[k].text.is_empty() {
                        return false;
                    }
                    if matches!(toks[k].text.as_str(), "(" | "{" | "[") {
                        depth += 1;
                        false
                    } else if depth == 0 {
                        true
                    } else {
                        depth -= 1;
                        false
                    }
                });
                if let Some(end) = end {
                    toks.drain(start + 1..end);
                }
            }
        }
    }
}

/// What is wrong with the front end's answer to `src` (a mutated item), if anything: a
/// panic, an accepted function that fails the IR verifier, an error that does not point
/// into the source (at the call site, or a pipeline diagnostic without a span), or an
/// error that calls itself internal.
///
/// With `whole`, the whole attribute runs as well (code generation for every place this
/// build has), which must not panic or report an internal error either.
fn judge(src: &str, whole: bool) -> Option<String> {
    let Ok(ts) = TokenStream::from_str(src) else {
        return None;
    };
    let run = std::panic::catch_unwind(|| -> Option<String> {
        let user_span = |e: &syn::Error| e.clone().into_iter().all(|e| e.span().start().line >= 2);
        let internal = |m: &str| m.contains("internal");
        let (lowered, module) = match syn::parse2::<syn::Item>(ts.clone()).ok()? {
            syn::Item::Fn(f) => (expand_fn(&Options::default(), f).map(|l| vec![l]), None),
            syn::Item::Mod(m) => (expand_mod(&Options::default(), &m), Some(m)),
            _ => return None,
        };
        let lowered = match lowered {
            Ok(l) => l,
            Err(e) if internal(&e.to_string()) => return Some(format!("internal error: {e}")),
            Err(e) if !user_span(&e) => return Some(format!("error at the call site: {e}")),
            Err(_) => return None,
        };
        for l in &lowered {
            if let Err(e) = dpl_core::verify::verify(&l.func) {
                return Some(format!("accepted but does not verify: {e:?}"));
            }
            if let Err(diags) = dpl_core::pipeline::compile(l.func.clone()) {
                for d in diags {
                    if d.span == dpl_core::ir::Span::NONE || internal(&d.message) {
                        return Some(format!("diagnostic without a user span: {}", d.message));
                    }
                }
            }
        }
        if whole {
            // Code generation for every place this build has, as the attribute runs it.
            let out = match crate::emit::emit(
                &Options::default(),
                lowered,
                module.as_ref(),
                proc_macro2::TokenStream::new(),
            ) {
                Ok(code) => code.to_string(),
                Err(e) => e.to_string(),
            };
            if internal(&out) {
                return Some(format!("the expansion reports an internal error:\n{out}"));
            }
        }
        None
    });
    match run {
        Ok(verdict) => verdict,
        Err(p) => Some(format!(
            "panic: {}",
            p.downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default()
        )),
    }
}

/// The source of mutation case `case`: program `case` (modulo the corpus) mutated with
/// the generator seeded by `case`.
fn case_source(case: u64, parsed: &[Vec<Tok>], vocab: &[Tok]) -> String {
    let mut rng = dpl_testkit::SplitMix64::new(case);
    let mut toks = parsed[case as usize % parsed.len()].clone();
    mutate(&mut toks, vocab, &mut rng);
    unflatten(&toks)
}

/// Cases of [`mutations_of_the_test_programs`]: `DPL_FUZZ_CASES`, or a fixed slice of 3,000
/// for the normal test command (`cargo xtask fuzz` runs 10^6).
fn fuzz_cases() -> u64 {
    std::env::var("DPL_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3_000)
}

/// Mutations of every `#[parallel]` function and module of the tests and examples (case
/// `i` is seeded with `i`, so a failure is reproduced by its number): the front end and the
/// compiler pipeline must answer each with a result that verifies or errors spanned on the
/// source, never a panic or an internal error; one case in 16 runs the whole attribute,
/// code generation included.
#[test]
fn mutations_of_the_test_programs() {
    let corpus = corpus();
    assert!(
        corpus.len() > 200,
        "the corpus of test programs is missing ({} found)",
        corpus.len()
    );
    let parsed: Vec<Vec<Tok>> = corpus
        .iter()
        .map(|s| {
            let mut toks = Vec::new();
            flatten(
                TokenStream::from_str(s).expect("corpus item lexes"),
                &mut toks,
            );
            toks
        })
        .collect();
    let mut vocab: Vec<Tok> = parsed
        .iter()
        .flatten()
        .filter(|t| !t.delim)
        .cloned()
        .collect();
    vocab.sort_by(|a, b| a.text.cmp(&b.text));
    vocab.dedup_by(|a, b| a.text == b.text);
    // `DPL_FUZZ_CASE=N`: case N alone, with every error and its position.
    if let Some(case) = std::env::var("DPL_FUZZ_CASE")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
    {
        let src = case_source(case, &parsed, &vocab);
        eprintln!("case {case}:{src}");
        if let Ok(syn::Item::Fn(f)) = syn::parse_str::<syn::Item>(&src)
            && let Err(e) = expand_fn(&Options::default(), f)
        {
            for e in e {
                eprintln!("{:?}: {e}", e.span().start());
            }
        }
        assert!(judge(&src, true).is_none(), "{:?}", judge(&src, true));
        return;
    }
    let cases = fuzz_cases();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let failures = std::sync::Mutex::new(Vec::new());
    let start = std::time::Instant::now();
    std::thread::scope(|s| {
        for t in 0..threads {
            let (parsed, vocab, failures) = (&parsed, &vocab, &failures);
            s.spawn(move || {
                for case in (t..cases).step_by(threads as usize) {
                    let src = case_source(case, parsed, vocab);
                    if let Some(why) = judge(&src, case % 16 == 0) {
                        let mut f = failures.lock().unwrap_or_else(|e| e.into_inner());
                        if f.len() < 20 {
                            f.push(format!("case {case}: {why}\n{src}"));
                        }
                    }
                }
            });
        }
    });
    eprintln!(
        "fuzz: {cases} mutations of {} programs in {:.1} s",
        corpus.len(),
        start.elapsed().as_secs_f64()
    );
    let failures = failures.into_inner().unwrap_or_else(|e| e.into_inner());
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
