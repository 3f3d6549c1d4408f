//! Golden tests of the IR text form: hand-built functions print as expected, and the text
//! parses back to the same function.

mod text_support;

use dpl_core::ir::*;
use dpl_core::text::{parse, parse_named, print, without_spans};

fn f32t() -> Type {
    Type::Scalar(Scalar::F32)
}

/// `saxpy` built by hand, as the front end would.
fn saxpy() -> Function {
    let mut f = Function::new("saxpy", Type::seq(f32t()));
    let a = f.new_var("a", f32t(), Span(1));
    let x = f.new_var("x", Type::seq(f32t()), Span(2));
    let y = f.new_var("y", Type::seq(f32t()), Span(3));
    f.params = vec![a, x, y];
    let xi = f.new_var("xi", f32t(), Span::NONE);
    let yi = f.new_var("yi", f32t(), Span::NONE);
    let t = f.new_var("t", Type::seq(f32t()), Span(9));
    let m = f.new_var("", f32t(), Span::NONE);
    let s = f.new_var("", f32t(), Span::NONE);
    let body = Block {
        stmts: vec![
            Stmt {
                var: m,
                expr: Expr::Binary(BinOp::Mul, a, xi),
                span: Span(4),
            },
            Stmt {
                var: s,
                expr: Expr::Binary(BinOp::Add, m, yi),
                span: Span(5),
            },
        ],
        result: s,
    };
    let lambda = Lambda {
        params: vec![xi, yi],
        captures: vec![a],
        body,
    };
    f.body.stmts.push(Stmt {
        var: t,
        expr: Expr::Prim {
            prim: Prim::Map,
            lambdas: vec![lambda],
            args: vec![x, y],
        },
        span: Span(6),
    });
    f.body.result = t;
    f
}

use text_support::SAXPY;

#[test]
fn saxpy_prints_as_expected() {
    assert_eq!(print(&saxpy()), SAXPY);
    assert_eq!(saxpy().to_string(), SAXPY);
}

#[test]
fn saxpy_parses_back() {
    let parsed = parse(SAXPY).unwrap();
    assert_eq!(parsed, without_spans(&saxpy()));
    assert_ne!(parsed, saxpy(), "spans are not printed");
}

/// Every expression form, at both levels, in one function.
const EVERYTHING: &str = r#"fn "every thing"(%1 x: [i64], %2 n: usize, %3 t: (f32, [bool])) -> _ {
  declare %0 unit: (), %40 "not used": [[u32]]
  %4 c: i64 = const -12
  %5 c2: f64 = const 1e-7
  %6 b: bool = const true
  %7: f64 = const -0.0
  %8: f64 = const inf
  %9: f64 = const -inf
  %10: i64 = %4
  %11: i64 = neg %4
  %12: bool = not %6
  %13: i64 = shl %4, %2
  %14: bool = ge %4, %10
  %15: f32 = cast %4 as f32
  %16: (i64, bool) = tuple(%4, %6)
  %17: () = tuple()
  %18: bool = %16.1
  %19: i64 = if %6 {
    %20: i64 = add %4, %10
    %20
  } else {
    %4
  }
  %21: i64 = index(gather) %1[%2]
  %22: i64 = index(unchecked) %1[%4]
  %23: i64 = index(index) %1[%2]
  %24: usize = len %1
  %25: f64 = mul_add %5, %5, %7
  %26: f64 = sqrt %5
  %27: i64 = min %4, %10
  %28: i64 = min(%1)
  %29: usize = len(%1)
  %30: i64 = reduce(|%31 a: i64, %32 b: i64| [] {
    %33: i64 = add %31, %32
    %33
  }, %1, %4)
  %34: usize = count(%1)
  %35: [i64] = soac map(%2, |%36 i: usize| [%1] {
    %37: i64 = index(unchecked) %1[%36]
    %37
  })
  %38: () = assert(zip) eq_len %2, %24
  %39: () = assert(min) non_empty %2
  %41: () = assert(gather) indices_in_range %1, %2
  %42: () = assert(index) in_bounds %4, %2
  %43: i64 = soac reduce(%2, |%44 i: usize| [%4] {
    %4
  }, op: |%45 a: i64, %46 b: i64| [] {
    %47: i64 = max %45, %46
    %47
  })
  %48: i64 = soac reduce(%2, |%49 i: usize| [%4] {
    %4
  }, op: |%50 a: i64, %51 b: i64| [] {
    %50
  }, init: %10)
  %52: [i64] = soac scan(%2, |%53 i: usize| [%4] {
    %4
  }, op: |%54 a: i64, %55 b: i64| [] {
    %55
  })
  %56: [i64] = soac exclusive_scan(%2, |%57 i: usize| [%4] {
    %4
  }, op: |%58 a: i64, %59 b: i64| [] {
    %58
  }, init: %4)
  %60: [i64] = soac filter(%2, |%61 i: usize| [%4] {
    %4
  }, pred: |%62 e: i64| [%6] {
    %6
  })
  %63: [i64] = soac scatter(%2, |%64 i: usize| [%16] {
    %16
  }, dst: %1)
  %65: [i64] = soac scatter_reduce(%2, |%66 i: usize| [%16] {
    %16
  }, op: |%67 a: i64, %68 b: i64| [] {
    %67
  }, dst: %1)
  %69: [i64] = soac permute(%2, |%70 i: usize| [%16] {
    %16
  })
  %71: bool = any(|%72 e: i64| [%6] {
    %6
  }, %1)
  %3
}
"#;

#[test]
fn every_form_round_trips() {
    let f = parse(EVERYTHING).unwrap();
    assert_eq!(print(&f), EVERYTHING);
    assert_eq!(f.name, "every thing");
    assert_eq!(f.vars.len(), 73);
    assert_eq!(f.vars[VarId::new(40)].name, "not used");
    assert_eq!(
        f.vars[VarId::new(40)].ty,
        Type::seq(Type::seq(Type::Scalar(Scalar::U32)))
    );
    assert_eq!(f.ret, Type::Infer);
    let stmt = |v: usize| {
        let mut found = None;
        f.body.walk(&mut |s| {
            if s.var == VarId::new(v) {
                found = Some(s.expr.clone());
            }
        });
        found.unwrap()
    };
    assert_eq!(stmt(4), Expr::Const(Const::Int(-12)));
    assert_eq!(stmt(5), Expr::Const(Const::Float(1e-7)));
    let Expr::Const(Const::Float(z)) = stmt(7) else {
        panic!()
    };
    assert!(z == 0.0 && z.is_sign_negative());
    assert_eq!(stmt(9), Expr::Const(Const::Float(f64::NEG_INFINITY)));
    assert_eq!(stmt(18), Expr::Field(VarId::new(16), 1));
    assert_eq!(
        stmt(22),
        Expr::Index {
            seq: VarId::new(1),
            index: VarId::new(4),
            checked: None
        }
    );
    assert_eq!(
        stmt(21),
        Expr::Index {
            seq: VarId::new(1),
            index: VarId::new(2),
            checked: Some(Origin::Prim(Prim::Gather))
        }
    );
    assert_eq!(
        stmt(27),
        Expr::Math(MathFn::Min, vec![VarId::new(4), VarId::new(10)])
    );
    assert!(matches!(
        stmt(28),
        Expr::Prim {
            prim: Prim::Min,
            ..
        }
    ));
    assert_eq!(stmt(24), Expr::Len(VarId::new(1)));
    assert!(matches!(
        stmt(29),
        Expr::Prim {
            prim: Prim::Len,
            ..
        }
    ));
    let Expr::Soac(s) = stmt(48) else { panic!() };
    assert!(matches!(s.kind, SoacKind::Reduce { init: Some(i), .. } if i == VarId::new(10)));
    assert_eq!(s.elem.captures, vec![VarId::new(4)]);
}

#[test]
fn white_space_and_semicolons_are_free() {
    let compact = "fn saxpy(%1 a: f32, %2 x: [f32], %3 y: [f32]) -> [f32] { declare %0 unit: (); \
        %6 t: [f32] = map(|%4 xi: f32, %5 yi: f32| [%1] { %7: f32 = mul %1, %4; %8: f32 = add %7, %5; %8 }, %2, %3); %6 }";
    assert_eq!(parse(compact).unwrap(), without_spans(&saxpy()));
    let commented = SAXPY.replace("declare", "// a comment\n  declare");
    assert_eq!(parse(&commented).unwrap(), without_spans(&saxpy()));
}

#[test]
fn float_constants_round_trip_exactly() {
    for x in [
        0.1,
        -0.0,
        1e300,
        5e-324,
        f64::MAX,
        f64::MIN_POSITIVE,
        3.0,
        1.0 / 3.0,
        f32::MAX as f64,
    ] {
        let mut f = Function::new("c", Type::Scalar(Scalar::F64));
        let v = f.new_var("v", Type::Scalar(Scalar::F64), Span::NONE);
        f.body.stmts.push(Stmt {
            var: v,
            expr: Expr::Const(Const::Float(x)),
            span: Span::NONE,
        });
        f.body.result = v;
        let g = parse(&print(&f)).unwrap();
        let Expr::Const(Const::Float(y)) = g.body.stmts[0].expr else {
            panic!()
        };
        assert_eq!(x.to_bits(), y.to_bits(), "{x:?}");
    }
}

#[test]
fn int_constants_at_the_limits() {
    for x in [i128::MIN, i128::MAX, 0, -1, u64::MAX as i128] {
        let text = format!("fn c() -> i64 {{ %0: i64 = const {x}; %0 }}");
        let f = parse(&text).unwrap();
        assert_eq!(f.body.stmts[0].expr, Expr::Const(Const::Int(x)));
    }
}

#[test]
fn odd_names_are_quoted() {
    let mut f = Function::new("with \"quote\"\n", Type::unit());
    let v = f.new_var("ü é\t\\", Type::Infer, Span::NONE);
    f.params.push(v);
    let text = print(&f);
    assert!(
        text.starts_with("fn \"with \\\"quote\\\"\\n\"(%1 \"ü é\\t\\\\\": _)"),
        "{text}"
    );
    assert_eq!(parse(&text).unwrap(), f);
}

fn parse_err(text: &str) -> (usize, usize, String) {
    let e = parse(text).unwrap_err();
    (e.line, e.column, e.message)
}

#[test]
fn errors_have_positions_and_say_what_is_wrong() {
    let (l, c, m) = parse_err("fn f() -> i32 {\n  %0: i32 = frob %0\n  %0\n}");
    assert_eq!((l, c), (2, 13));
    assert!(m.contains("`frob` does not start an expression"), "{m}");

    let (l, c, m) = parse_err("fn f() -> i32 {\n  %0: i32 = add %0 %0\n  %0\n}");
    assert_eq!((l, c), (2, 20));
    assert!(m.contains("expected `,`"), "{m}");

    let (_, _, m) = parse_err("fn f() -> i32 { %1: i32 = const 1; %1 }");
    assert!(m.contains("%0 is never declared"), "{m}");

    let (_, _, m) = parse_err("fn f() -> i32 { %0: i32 = add %0, %5; %0 }");
    assert!(m.contains("%5 is used but never declared"), "{m}");

    let (l, c, m) = parse_err("fn f(%0 a: i32) -> i32 { %0 b: i32 = const 1; %0 }");
    assert_eq!((l, c), (1, 26));
    assert!(m.contains("defined again"), "{m}");

    let (_, _, m) = parse_err("fn f() -> i32 { %0: i33 = const 1; %0 }");
    assert!(m.contains("expected a type"), "{m}");

    let (_, _, m) = parse_err(
        "fn f() -> [i32] { %0: [i32] = soac map(%0, |%1 i: usize| [] { %1 }, op: |%2 a: i32, %3 b: i32| [] { %2 }); %0 }",
    );
    assert!(m.contains("`soac map` takes no `op:`"), "{m}");

    let (_, _, m) =
        parse_err("fn f() -> [i32] { %0: [i32] = soac scan(%0, |%1 i: usize| [] { %1 }); %0 }");
    assert!(m.contains("`soac scan` needs `op:`"), "{m}");

    let (_, _, m) = parse_err("fn f() -> i32 { %0: i32 = index(frob) %0[%0]; %0 }");
    assert!(m.contains("`frob` is not an origin"), "{m}");

    let (_, _, m) = parse_err("fn f() -> i32 { %0: i32 = assert(map) eq_len %0; %0 }");
    assert!(m.contains("`eq_len` takes 2 variables, found 1"), "{m}");

    let (_, _, m) = parse_err("fn f() -> i32 { %0: i32 = const 1; %0 } trailing");
    assert!(m.contains("expected end of input"), "{m}");

    let (l, c, m) = parse_err("fn f() -> i32 {\n  %0: i32 = const 1 $\n}");
    assert_eq!((l, c), (2, 21));
    assert!(m.contains("unexpected character `$`"), "{m}");

    let (_, _, m) = parse_err("fn \"f() -> i32 {}");
    assert!(m.contains("string"), "{m}");

    let (_, _, m) = parse_err("fn f() -> i32 { %0: i32 = const 1; }");
    assert!(m.contains("expected a statement"), "{m}");

    let (_, _, m) = parse_err("");
    assert!(m.contains("expected `fn`, found end of input"), "{m}");

    let e = parse("fn f() -> i32 { %0: i32 = nope %0; %0 }").unwrap_err();
    assert_eq!(e.to_string(), "1:27: `nope` does not start an expression");
}

/// `saxpy` with named variables: the handles follow the order of first appearance, the
/// names are kept, the capture list is recomputed.
const SAXPY_NAMED: &str = "
fn saxpy($a: f32, $x: [f32], $y: [f32]) -> [f32] {
  $t: [f32] = map(|$xi: f32, $yi: f32| [] { $m: f32 = mul $a, $xi; $s: f32 = add $m, $yi; $s }, $x, $y)
  $t
}";

#[test]
fn named_variables_are_numbered_in_order_of_first_appearance() {
    let (f, names) = parse_named(SAXPY_NAMED).unwrap();
    assert_eq!(names, ["a", "x", "y", "t", "xi", "yi", "m", "s"]);
    let want = "fn saxpy(%0 a: f32, %1 x: [f32], %2 y: [f32]) -> [f32] {
  %3 t: [f32] = map(|%4 xi: f32, %5 yi: f32| [%0] {
    %6 m: f32 = mul %0, %4
    %7 s: f32 = add %6, %5
    %7
  }, %1, %2)
  %3
}
";
    assert_eq!(print(&f), want);
    assert_eq!(parse(want).unwrap(), f);
    for (v, var) in f.vars.iter() {
        assert_eq!(var.name, names[v.index()]);
    }
}

fn parse_named_err(text: &str) -> (usize, usize, String) {
    let e = parse_named(text).unwrap_err();
    (e.line, e.column, e.message)
}

#[test]
fn named_text_errors_name_the_variable_where_it_is_written() {
    let (l, c, m) = parse_named_err(
        "fn f($a: i32) -> i32 {
  $b: i32 = add $a, $nope
  $b
}",
    );
    assert_eq!((l, c), (2, 21));
    assert_eq!(m, "$nope is used but never defined");

    let (l, c, m) = parse_named_err("fn f($a: i32) -> i32 { $a: i64 = const 1; $a }");
    assert_eq!((l, c), (1, 24));
    assert!(m.starts_with("$a is defined again"), "{m}");

    let (l, c, m) = parse_named_err("fn f($a: i32) -> i32 { $b: i32 = add $a $a; $b }");
    assert_eq!((l, c), (1, 41));
    assert_eq!(m, "expected `,`, found `$a`");

    let (l, c, m) = parse_named_err("fn f($a: i32) -> i32 { $ }");
    assert_eq!((l, c), (1, 24));
    assert_eq!(m, "expected a variable name after `$`");

    let (_, _, m) = parse_named_err("fn f($a: i32) -> i32 { %0 }");
    assert!(m.contains("`%N` handle"), "{m}");
}
