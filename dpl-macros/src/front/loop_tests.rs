//! Unit tests of loops and `let mut` in the front end: the IR they lower to, its results
//! under the interpreter (against plain Rust), and the errors for what is outside.

use dpl_core::interp::{Value, run};
use syn::parse_quote;

use super::*;

fn lower_ok(item: syn::ItemFn) -> Lowered {
    match expand_fn(&Options::default(), item) {
        Ok(l) => {
            if let Err(errs) = dpl_core::verify::verify(&l.func) {
                panic!("verifier: {errs:?}\n{}", dpl_core::text::print(&l.func));
            }
            l
        }
        Err(e) => panic!(
            "unexpected errors: {:#?}",
            e.into_iter().map(|e| e.to_string()).collect::<Vec<_>>()
        ),
    }
}

fn errors(item: syn::ItemFn) -> Vec<String> {
    match expand_fn(&Options::default(), item) {
        Ok(l) => panic!("expected errors, got\n{}", dpl_core::text::print(&l.func)),
        Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
    }
}

/// Lowers, infers types and runs the function on `args` with the interpreter.
fn eval(item: syn::ItemFn, args: Vec<Value>) -> Value {
    let l = lower_ok(item);
    let mut typed = l.func.clone();
    if let Err(e) = dpl_core::typeck::infer(&mut typed) {
        panic!("typeck: {e:?}\n{}", dpl_core::text::print(&l.func));
    }
    if let Err(e) = dpl_core::verify::verify_types(&typed) {
        panic!("verify_types: {e:?}\n{}", dpl_core::text::print(&typed));
    }
    run(&typed, args).unwrap_or_else(|e| panic!("{e:?}\n{}", dpl_core::text::print(&typed)))
}

fn has(errors: &[String], needle: &str) -> bool {
    errors.iter().any(|e| e.contains(needle))
}

fn u64s(v: &[u64]) -> Value {
    v.to_vec().into()
}

/// The `Expr::Loop`s of a function, depth first.
fn loops(f: &dpl_core::ir::Function) -> Vec<dpl_core::ir::Loop> {
    let mut out = Vec::new();
    f.body.walk(&mut |s| {
        if let dpl_core::ir::Expr::Loop(l) = &s.expr {
            out.push((**l).clone());
        }
    });
    out
}

#[test]
fn a_for_loop_is_one_ir_loop_carrying_the_variables_it_assigns() {
    let l = lower_ok(parse_quote! {
        fn f(xs: &[u64]) -> Vec<u64> {
            map(|x| {
                let mut s = 0u64;
                let unchanged = x + 1;
                for i in 0..x {
                    s += i * unchanged;
                }
                s
            }, xs)
        }
    });
    let text = dpl_core::text::print(&l.func);
    let found = loops(&l.func);
    assert_eq!(found.len(), 1, "{text}");
    // `s`, then the loop's own index and end flag; `unchanged` is read, not carried.
    let names: Vec<&str> = found[0]
        .params
        .iter()
        .map(|p| l.func.vars[*p].name.as_str())
        .collect();
    assert_eq!(names, ["s", "i", "fin"], "{text}");
    assert!(
        text.contains("loop(%") && text.contains(") while {"),
        "{text}"
    );
    // The loop is inside the map's lambda, not at the top level.
    assert!(
        !l.func
            .body
            .stmts
            .iter()
            .any(|s| matches!(s.expr, dpl_core::ir::Expr::Loop(_))),
        "{text}"
    );
}

#[test]
fn break_and_continue_are_flags_and_the_rest_of_the_body_is_guarded() {
    let item: syn::ItemFn = parse_quote! {
        fn f(xs: &[u64]) -> Vec<u64> {
            map(|x| {
                let mut s = 0u64;
                for i in 0..x {
                    if i == 7 { break; }
                    if i % 2 == 0 { continue; }
                    s += i;
                }
                s
            }, xs)
        }
    };
    let l = lower_ok(item.clone());
    let text = dpl_core::text::print(&l.func);
    let found = loops(&l.func);
    let names: Vec<&str> = found[0]
        .params
        .iter()
        .map(|p| l.func.vars[*p].name.as_str())
        .collect();
    // `broke` is carried (the condition tests it); `cont` lives in one iteration.
    assert_eq!(names, ["s", "broke", "i", "fin"], "{text}");
    assert!(text.contains("cont: bool = const true"), "{text}");
    let got = eval(item, vec![u64s(&[0, 1, 5, 10, 100])]);
    let want: Vec<u64> = [0u64, 1, 5, 10, 100]
        .iter()
        .map(|&x| {
            let mut s = 0;
            for i in 0..x {
                if i == 7 {
                    break;
                }
                if i % 2 == 0 {
                    continue;
                }
                s += i;
            }
            s
        })
        .collect();
    assert_eq!(got, want.into());
}

#[test]
fn loops_with_break_values_while_and_tuples_run_as_in_rust() {
    let got = eval(
        parse_quote! {
            fn f(xs: &[u64]) -> Vec<(u64, u64, u64)> {
                map(|x| {
                    let (mut a, mut b) = (x, 12u64);
                    while b != 0 {
                        (a, b) = (b, a % b);
                    }
                    let mut i = 0u64;
                    let hit = loop {
                        i += 1;
                        if i * i > x { break i * 10; }
                        if i == 5 { break 1u64; }
                    };
                    let mut t = (0u64, 1u64);
                    for _ in (0..x % 20).rev().step_by(2) {
                        t = (t.1, t.0 + t.1);
                    }
                    (a, hit, t.0)
                }, xs)
            }
        },
        vec![u64s(&[0, 3, 17, 36, 1000])],
    );
    let want: Vec<(u64, u64, u64)> = [0u64, 3, 17, 36, 1000]
        .iter()
        .map(|&x| {
            let (mut a, mut b) = (x, 12u64);
            while b != 0 {
                (a, b) = (b, a % b);
            }
            let mut i = 0u64;
            let hit = loop {
                i += 1;
                if i * i > x {
                    break i * 10;
                }
                if i == 5 {
                    break 1;
                }
            };
            let mut t = (0u64, 1u64);
            for _ in (0..x % 20).rev().step_by(2) {
                t = (t.1, t.0 + t.1);
            }
            (a, hit, t.0)
        })
        .collect();
    let want: Vec<Value> = want
        .into_iter()
        .map(|(a, b, c)| Value::Tuple(vec![Value::U64(a), Value::U64(b), Value::U64(c)]))
        .collect();
    assert_eq!(got, Value::Seq(want.into()));
}

#[test]
fn ranges_stop_at_the_ends_of_their_type() {
    let got = eval(
        parse_quote! {
            fn f(xs: &[u8]) -> Vec<(u32, u32)> {
                map(|x| {
                    let mut up = 0u32;
                    for i in x..=255u8 { up += i as u32; }
                    let mut down = 0u32;
                    for i in (0u8..=x).rev().step_by(100) { down = down * 7 + i as u32; }
                    (up, down)
                }, xs)
            }
        },
        vec![vec![0u8, 1, 200, 255].into()],
    );
    let want: Vec<Value> = [0u8, 1, 200, 255]
        .iter()
        .map(|&x| {
            let up: u32 = (x..=255).map(u32::from).sum();
            let down = (0..=x)
                .rev()
                .step_by(100)
                .fold(0u32, |d, i| d * 7 + u32::from(i));
            Value::Tuple(vec![Value::U32(up), Value::U32(down)])
        })
        .collect();
    assert_eq!(got, Value::Seq(want.into()));
}

#[test]
fn mut_variables_and_if_statements_work_without_loops_at_the_top_level() {
    let item: syn::ItemFn = parse_quote! {
        fn f(x: u64, flag: bool) -> (u64, u64) {
            let mut a = x;
            let mut b = 1u64;
            if flag {
                a *= 3;
            } else if x > 10 {
                b = 2;
            }
            a += b;
            (a, b)
        }
    };
    for (x, flag) in [(5u64, true), (5, false), (20, false)] {
        let got = eval(item.clone(), vec![Value::U64(x), Value::Bool(flag)]);
        let b = if !flag && x > 10 { 2 } else { 1 };
        let a = if flag { x * 3 } else { x } + b;
        assert_eq!(got, Value::Tuple(vec![Value::U64(a), Value::U64(b)]));
    }
}

#[test]
fn module_functions_with_loops_at_their_top_level_are_inlined_at_any_depth() {
    // `halvings` has a loop at its top level; `f` calls it per element (inside a `map`,
    // where its loop runs once per element) and at its own top level.
    let m: syn::ItemMod = parse_quote! {
        mod m {
            pub fn halvings(x: u32) -> u32 { let (mut x, mut k) = (x, 0u32); while x > 1 { x /= 2; k += 1; } k }
            pub fn f(xs: &[u32], y: u32) -> (Vec<u32>, u32) {
                (map(halvings, xs), halvings(y))
            }
        }
    };
    let fns = match expand_mod(&Options::default(), &m) {
        Ok(fns) => fns,
        Err(e) => panic!(
            "{:#?}",
            e.into_iter().map(|e| e.to_string()).collect::<Vec<_>>()
        ),
    };
    let f = fns.iter().find(|l| l.name == "f").expect("f");
    let mut typed = f.func.clone();
    dpl_core::typeck::infer(&mut typed).expect("typeck");
    let xs: Vec<u32> = vec![0, 1, 2, 3, 1000, u32::MAX];
    let got = run(&typed, vec![xs.clone().into(), Value::U32(77)]).expect("run");
    let halvings = |mut x: u32| {
        let mut k = 0u32;
        while x > 1 {
            x /= 2;
            k += 1;
        }
        k
    };
    let want = Value::Tuple(vec![
        xs.iter().map(|&x| halvings(x)).collect::<Vec<u32>>().into(),
        Value::U32(halvings(77)),
    ]);
    assert_eq!(got, want);
}

#[test]
fn a_top_level_loop_carries_sequences_and_runs_whole_parallel_steps() {
    // The SPEC's power iteration, under the interpreter against plain Rust.
    let item: syn::ItemFn = parse_quote! {
        fn power(a: &Nested<f64>, v0: &[f64], iters: usize) -> (Vec<f64>, f64) {
            let mut v = v0.to_vec();
            let mut lambda = 0.0;
            for _ in 0..iters {
                let w = map(|row| sum(map(|aij, vj| aij * vj, row, v)), a);
                lambda = sum(map(|wi| wi * wi, w)).sqrt();
                v = map(|wi| wi / lambda, w);
            }
            (v, lambda)
        }
    };
    let rows = [
        vec![2.0, 1.0, 0.0],
        vec![1.0, 3.0, 1.0],
        vec![0.0, 1.0, 4.0],
    ];
    let got = eval(
        item,
        vec![
            Value::seq(rows.iter().map(|r| r.clone().into()).collect()),
            vec![1.0f64, 1.0, 1.0].into(),
            Value::Usize(30),
        ],
    );
    let (mut v, mut lambda) = (vec![1.0f64; 3], 0.0f64);
    for _ in 0..30 {
        let w: Vec<f64> = rows
            .iter()
            .map(|r| r.iter().zip(&v).map(|(a, b)| a * b).sum())
            .collect();
        lambda = w.iter().map(|x| x * x).sum::<f64>().sqrt();
        v = w.iter().map(|x| x / lambda).collect();
    }
    // The interpreter sums pairwise, plain Rust left to right: equal to rounding.
    let Value::Tuple(parts) = got else {
        panic!("{got:?}")
    };
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs().max(1.0);
    let Value::Seq(gv) = &parts[0] else {
        panic!("{parts:?}")
    };
    for (g, w) in gv.iter().zip(&v) {
        assert!(matches!(g, Value::F64(g) if close(*g, *w)), "{g:?} vs {w}");
    }
    assert!(
        matches!(parts[1], Value::F64(l) if close(l, lambda)),
        "{parts:?}"
    );
}

#[test]
fn what_is_outside_the_language_gets_a_message_saying_what_to_write() {
    let cases: Vec<(syn::ItemFn, &str)> = vec![
        (
            parse_quote! { fn f(x: u64) -> u64 { let y = x; y = 2; y } },
            "cannot assign twice to immutable variable `y`: declare it with `let mut y`",
        ),
        (
            parse_quote! { fn f(xs: &[u64]) -> Vec<u64> { let mut s = 0u64; map(|v| { s += v; v }, xs) } },
            "cannot assign to `s` inside a closure",
        ),
        (
            parse_quote! { fn f(xs: &[u64]) -> Vec<u64> { map(|v| { let mut s = 0u64; for w in xs.iter().step_by(2) { s += w; } s }, xs) } },
            "`.rev()` and `.step_by(k)` apply to integer ranges only",
        ),
        (
            parse_quote! { fn f(xs: &[u64]) -> Vec<u64> { map(|v| { let mut s = v; 'a: loop { s += 1; break 'a; } s }, xs) } },
            "loop labels are not supported",
        ),
        (
            parse_quote! { fn f(xs: &[u64]) -> Vec<u64> { map(|v| { let mut s = v; while s > 3 { s -= 1; break 5; } s }, xs) } },
            "`break` with a value is only allowed in `loop`",
        ),
        (
            parse_quote! { fn f(xs: &[u64]) -> Vec<u64> { map(|v| { let mut s = v; while s > 3 { s -= 1; return s; } s }, xs) } },
            "`return` inside a loop is not supported",
        ),
        (
            parse_quote! { fn f(xs: &[u64]) -> Vec<u64> { map(|v| { let mut s = v; for i in (0..v).step_by(0) { s += i; } s }, xs) } },
            "`step_by(0)` panics",
        ),
        (
            parse_quote! { fn f(xs: &[u64]) -> Vec<u64> { map(|v| { let mut s = v; if s > 2 { break; } s }, xs) } },
            "`break` outside of a loop",
        ),
        (
            parse_quote! { fn f(xs: &[u64]) -> Vec<u64> { map(|v| { let mut s = v; loop { s = if s > 9 { break; } else { s + 1 }; } s }, xs) } },
            "`break` is supported as a statement of a loop body",
        ),
        (
            parse_quote! { fn f(xs: &[u64]) -> Vec<u64> { map(|v| { let mut s = v; let c = v > 2 && { s = 1; true }; s }, xs) } },
            "cannot assign to `s` here",
        ),
        (
            parse_quote! { fn f(xs: &[u64]) -> Vec<u64> { map(|v| { while v > 2 { } v }, xs) } },
            "changes no `let mut` variable",
        ),
        (
            parse_quote! { fn f(xs: &[u64]) -> Vec<u64> { map(|v| { let mut t = (v, v); t.0 = 1; t.1 }, xs) } },
            "assign the whole tuple",
        ),
        (
            parse_quote! { fn f(xs: &[u64]) -> Vec<u64> { map(|v| { let mut i = 0u64; loop { let j = i * 2; i += 1; if i > v { break j; } } }, xs) } },
            "the value of a `break` can only use variables declared outside its `loop`",
        ),
        (
            parse_quote! { fn f(xs: &[u64]) -> Vec<u64> { map(|v| { let r = &mut v; *r }, xs) } },
            "`&mut` references are not supported",
        ),
    ];
    for (item, want) in cases {
        let got = errors(item);
        assert!(has(&got, want), "want {want:?}, got {got:#?}");
    }
}
