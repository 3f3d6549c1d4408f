//! `Expr::Loop` in the IR: the text form prints and parses back, the verifiers check its
//! scoping, arity and types, type inference gives its params their inits' types, the
//! interpreter runs it (per element inside a `map` and at the top level), and the pipeline
//! keeps its results through normalization and fusion; all against plain Rust.

use dpl_core::interp::{Value, run};
use dpl_core::ir::*;
use dpl_core::pipeline::compile;
use dpl_core::text::{parse, parse_named, print};
use dpl_core::verify::{VerifyError, verify, verify_types};

fn named(text: &str) -> Function {
    parse_named(text)
        .unwrap_or_else(|e| panic!("{e}\n{text}"))
        .0
}

/// `sum of 0..n` by a loop at the top level of the body.
const TRIANGLE: &str = "
fn triangle($n: u64) -> u64 {
  $zero: u64 = const 0
  $l: (u64, u64) = loop($i: u64 = $zero, $s: u64 = $zero) while {
    $more: bool = lt $i, $n
    $more
  } do {
    $s1: u64 = add $s, $i
    $one: u64 = const 1
    $i1: u64 = add $i, $one
    $next: (u64, u64) = tuple($i1, $s1)
    $next
  }
  $r: u64 = $l.1
  $r
}";

/// Newton's square root of each element: a loop per element with a float condition.
const NEWTON: &str = "
fn newton($x: [f64]) -> [f64] {
  $r: [f64] = map(|$v: f64| [] {
    $g0: f64 = const 1.0
    $k0: u32 = const 0
    $l: (f64, u32) = loop($g: f64 = $g0, $k: u32 = $k0) while {
      $cap: u32 = const 60
      $more: bool = lt $k, $cap
      $more
    } do {
      $q: f64 = div $v, $g
      $sum: f64 = add $g, $q
      $half: f64 = const 0.5
      $g1: f64 = mul $sum, $half
      $one: u32 = const 1
      $k1: u32 = add $k, $one
      $t: (f64, u32) = tuple($g1, $k1)
      $t
    }
    $root: f64 = $l.0
    $root
  }, $x)
  $r
}";

#[test]
fn the_text_form_round_trips() {
    for src in [TRIANGLE, NEWTON] {
        let f = named(src);
        verify(&f).unwrap_or_else(|e| panic!("{e:?}\n{}", print(&f)));
        let text = print(&f);
        assert!(
            text.contains(") while {") && text.contains("} do {"),
            "{text}"
        );
        let back = parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(print(&back), text);
    }
}

#[test]
fn the_interpreter_runs_loops() {
    let f = named(TRIANGLE);
    for n in [0u64, 1, 2, 10, 1000] {
        let got = run(&f, vec![Value::U64(n)]).unwrap();
        assert_eq!(got, Value::U64((0..n).sum()), "n = {n}");
    }
    let f = named(NEWTON);
    let xs = vec![0.25f64, 1.0, 2.0, 1e6, 123.456];
    let Value::Seq(got) = run(&f, vec![xs.clone().into()]).unwrap() else {
        panic!("a sequence")
    };
    for (g, x) in got.iter().zip(&xs) {
        // Plain Rust, the same 60 steps.
        let mut want = 1.0f64;
        for _ in 0..60 {
            want = (want + x / want) * 0.5;
        }
        assert_eq!(*g, Value::F64(want), "sqrt({x})");
    }
}

#[test]
fn the_pipeline_keeps_loops_through_normalization_and_fusion() {
    for (src, args) in [
        (TRIANGLE, vec![Value::U64(77)]),
        (NEWTON, vec![vec![4.0f64, 9.0, 0.5].into()]),
    ] {
        let f = named(src);
        let want = run(&f, args.clone()).unwrap();
        let c = compile(f).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(run(&c.fused, args).unwrap(), want, "{}", c.fused);
        assert!(c.fused.to_string().contains("loop("), "{}", c.fused);
    }
}

#[test]
fn type_inference_gives_params_their_inits_types() {
    // Every type of the loop left to inference: the params take their inits' types.
    let src = TRIANGLE
        .replace("$i: u64 = $zero", "$i: _ = $zero")
        .replace("$l: (u64, u64)", "$l: _");
    let c = compile(named(&src)).unwrap_or_else(|e| panic!("{e:?}"));
    let text = c.typed.to_string();
    assert!(text.contains("i: u64 = %"), "{text}");
    assert_eq!(run(&c.fused, vec![Value::U64(5)]).unwrap(), Value::U64(10));
}

#[test]
fn type_errors_of_loops_are_reported() {
    // A condition that is not a bool.
    let bad_cond = TRIANGLE.replace(
        "$more: bool = lt $i, $n\n    $more",
        "$more: bool = lt $i, $n\n    $i",
    );
    assert!(compile(named(&bad_cond)).is_err());
    // A body giving the params' next values in the wrong order of types.
    let swapped = NEWTON.replace(
        "$t: (f64, u32) = tuple($g1, $k1)",
        "$t: (u32, f64) = tuple($k1, $g1)",
    );
    assert!(compile(named(&swapped)).is_err());
}

#[test]
fn the_verifiers_check_scope_arity_and_types() {
    // A param read after the loop: not in scope.
    let leak = TRIANGLE.replace("$r: u64 = $l.1\n  $r", "$r: u64 = $l.1\n  $i");
    let errors = verify(&named(&leak)).unwrap_err();
    assert!(
        errors
            .iter()
            .any(|e| matches!(e, VerifyError::NotInScope { .. })),
        "{errors:?}"
    );
    // A body whose tuple does not match the params.
    let short = TRIANGLE.replace(
        "$next: (u64, u64) = tuple($i1, $s1)",
        "$next: (u64,) = tuple($i1)",
    );
    let errors = verify_types(&named(&short)).unwrap_err();
    assert!(
        errors
            .iter()
            .any(|e| matches!(e, VerifyError::Type { message, .. }
            if message.contains("not the tuple of its variables"))),
        "{errors:?}"
    );
    // More params than initial values.
    let mut f = named(TRIANGLE);
    let Expr::Loop(l) = &mut f.body.stmts[1].expr else {
        panic!("the loop is the second statement")
    };
    l.inits.pop();
    let errors = verify(&f).unwrap_err();
    assert!(
        errors
            .iter()
            .any(|e| matches!(e, VerifyError::Arity { .. })),
        "{errors:?}"
    );
}
