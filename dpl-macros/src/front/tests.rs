//! Unit tests of the front end: IR shapes for small bodies, and the errors for bad ones.

use dpl_core::ir::{self, Expr, Prim, Scalar, Type};
use syn::parse_quote;

use super::*;

fn messages(e: &syn::Error) -> Vec<String> {
    e.clone().into_iter().map(|e| e.to_string()).collect()
}

fn lower(item: syn::ItemFn) -> Lowered {
    match expand_fn(&Options::default(), item) {
        Ok(l) => {
            if let Err(errs) = dpl_core::verify::verify(&l.func) {
                panic!("verifier: {errs:?}\n{}", dpl_core::text::print(&l.func));
            }
            l
        }
        Err(e) => panic!("unexpected errors: {:#?}", messages(&e)),
    }
}

fn errors(item: syn::ItemFn) -> Vec<String> {
    match expand_fn(&Options::default(), item) {
        Ok(l) => panic!("expected errors, got\n{}", dpl_core::text::print(&l.func)),
        Err(e) => messages(&e),
    }
}

fn text(l: &Lowered) -> String {
    dpl_core::text::print(&l.func)
}

/// The primitives of the top-level block, in order.
fn top_prims(f: &ir::Function) -> Vec<Prim> {
    f.body
        .stmts
        .iter()
        .filter_map(|s| match &s.expr {
            Expr::Prim { prim, .. } => Some(*prim),
            _ => None,
        })
        .collect()
}

/// Every lambda of the function, depth first.
fn lambdas(f: &ir::Function) -> Vec<ir::Lambda> {
    let mut out = Vec::new();
    f.body
        .walk(&mut |s| s.expr.for_each_lambda(&mut |l| out.push(l.clone())));
    out
}

fn ty(f: &ir::Function, name: &str) -> Type {
    let found: Vec<&ir::Var> = f
        .vars
        .iter()
        .map(|(_, v)| v)
        .filter(|v| v.name == name)
        .collect();
    assert_eq!(found.len(), 1, "variables named {name}: {found:?}");
    found[0].ty.clone()
}

fn has(errors: &[String], needle: &str) -> bool {
    errors.iter().any(|e| e.contains(needle))
}

fn typecheck(l: &Lowered) -> ir::Function {
    let mut typed = l.func.clone();
    if let Err(e) = dpl_core::typeck::infer(&mut typed) {
        panic!("typeck: {e:?}\n{}", text(l));
    }
    if let Err(e) = dpl_core::verify::verify_types(&typed) {
        panic!("verify_types: {e:?}\n{}", text(l));
    }
    typed
}

#[test]
fn saxpy_is_one_map_with_a_capture() {
    let l = lower(parse_quote! {
        fn saxpy(a: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
            map(|xi, yi| a * xi + yi, x, y)
        }
    });
    let f = &l.func;
    assert_eq!(f.name, "saxpy");
    assert_eq!(f.params.len(), 3);
    assert_eq!(f.ret, Type::seq(Type::Scalar(Scalar::F32)));
    assert_eq!(f.ty(f.params[0]), &Type::Scalar(Scalar::F32));
    assert_eq!(f.ty(f.params[1]), &Type::seq(Type::Scalar(Scalar::F32)));
    assert_eq!(top_prims(f), vec![Prim::Map]);
    assert_eq!(f.body.stmts.len(), 1);
    let Expr::Prim { lambdas, args, .. } = &f.body.stmts[0].expr else {
        panic!()
    };
    assert_eq!(args, &vec![f.params[1], f.params[2]]);
    assert_eq!(lambdas.len(), 1);
    assert_eq!(lambdas[0].params.len(), 2);
    assert_eq!(lambdas[0].captures, vec![f.params[0]]);
    assert_eq!(lambdas[0].body.stmts.len(), 2);
    assert_eq!(f.body.result, f.body.stmts[0].var);
    // Signature.
    assert_eq!(l.sig.params.len(), 3);
    assert_eq!(l.sig.params[0].repr, Repr::Scalar(Scalar::F32));
    assert_eq!(l.sig.params[1].repr, Repr::Slice(Type::Scalar(Scalar::F32)));
    assert_eq!(l.sig.params[2].repr, Repr::Slice(Type::Scalar(Scalar::F32)));
    assert_eq!(l.sig.ret.repr, Repr::Vec(Type::Scalar(Scalar::F32)));
    assert!(!l.sig.ret.result);
    // Every span number maps back to an entry of the table.
    f.body
        .walk(&mut |s| assert!((s.span.0 as usize) < l.spans.0.len()));
    typecheck(&l);
}

#[test]
fn spmv_inlines_the_let_bound_closure_with_nested_captures() {
    let l = lower(parse_quote! {
        fn spmv_csr(vals: &Nested<f32>, cols: &Nested<u32>, x: &[f32]) -> Vec<f32> {
            let spvv = |ai, ci| sum(map(|aij, xj| aij * xj, ai, gather(x, ci)));
            map(spvv, vals, cols)
        }
    });
    let f = &l.func;
    assert_eq!(
        f.ty(f.params[0]),
        &Type::seq(Type::seq(Type::Scalar(Scalar::F32)))
    );
    assert_eq!(
        l.sig.params[1].repr,
        Repr::Nested(Type::Scalar(Scalar::U32))
    );
    assert_eq!(top_prims(f), vec![Prim::Map]);
    let ls = lambdas(f);
    assert_eq!(ls.len(), 2);
    // The outer lambda captures `x` (used by the gather inside it).
    assert_eq!(ls[0].captures, vec![f.params[2]]);
    assert_eq!(ls[0].params.len(), 2);
    let inner: Vec<Prim> = ls[0]
        .body
        .stmts
        .iter()
        .filter_map(|s| match &s.expr {
            Expr::Prim { prim, .. } => Some(*prim),
            _ => None,
        })
        .collect();
    assert_eq!(inner, vec![Prim::Gather, Prim::Map, Prim::Sum]);
    // The innermost lambda captures nothing.
    assert!(ls[1].captures.is_empty());
    assert!(text(&l).contains("gather("));
    typecheck(&l);
}

#[test]
fn let_bound_closures_are_fresh_at_each_use() {
    let l = lower(parse_quote! {
        fn f(x: &[f32], y: &[f64]) -> (Vec<f32>, Vec<f64>, f32) {
            let k = 2.0;
            let double = |v| v + v;
            let a = map(double, x);
            let b = map(double, y);
            let c = double(x[0]);
            (a, b, c)
        }
    });
    let f = &l.func;
    let ls = lambdas(f);
    assert_eq!(ls.len(), 2);
    assert_ne!(
        ls[0].params, ls[1].params,
        "each use gets its own parameters"
    );
    let defs0: Vec<_> = ls[0].body.stmts.iter().map(|s| s.var).collect();
    let defs1: Vec<_> = ls[1].body.stmts.iter().map(|s| s.var).collect();
    assert!(defs0.iter().all(|v| !defs1.contains(v)));
    // The direct call is inlined: a copy of the argument, then the addition.
    let adds = f
        .body
        .stmts
        .iter()
        .filter(|s| matches!(s.expr, Expr::Binary(ir::BinOp::Add, ..)))
        .count();
    assert_eq!(adds, 1);
    let copies = f
        .body
        .stmts
        .iter()
        .filter(|s| matches!(s.expr, Expr::Var(_)))
        .count();
    assert_eq!(copies, 1);
    // The program type-checks: each instance got its own element type.
    let typed = typecheck(&l);
    assert_eq!(typed.ty(ls[0].params[0]), &Type::Scalar(Scalar::F32));
    assert_eq!(typed.ty(ls[1].params[0]), &Type::Scalar(Scalar::F64));
}

#[test]
fn captures_are_listed_in_first_use_order() {
    let l = lower(parse_quote! {
        fn f(x: &[f32], a: f32, b: f32, c: f32) -> Vec<f32> {
            let k = c;
            map(|v| { let w = v * b; if w > a { w + k } else { sum(map(|u| u * a + b, x)) } }, x)
        }
    });
    let f = &l.func;
    let ls = lambdas(f);
    assert_eq!(
        ls[0].captures,
        vec![f.params[2], f.params[1], f.params[3], f.params[0]]
    );
    assert_eq!(ls[1].captures, vec![f.params[1], f.params[2]]);
    typecheck(&l);
}

#[test]
fn closures_see_the_scope_of_their_definition() {
    let l = lower(parse_quote! {
        fn f(x: &[i32], a: i32, b: i32) -> Vec<i32> {
            let k = a;
            let add_k = |v| v + k;
            let k = b;
            map(add_k, map(|v| v * k, x))
        }
    });
    let f = &l.func;
    let ls = lambdas(f);
    // `add_k` captures the first `k` (= a), the literal closure the second (= b).
    assert_eq!(ls.len(), 2);
    let caps: Vec<Vec<ir::VarId>> = ls.iter().map(|l| l.captures.clone()).collect();
    assert!(caps.contains(&vec![f.params[1]]), "{caps:?}");
    assert!(caps.contains(&vec![f.params[2]]), "{caps:?}");
}

#[test]
fn annotations_and_suffixes_set_types() {
    let l = lower(parse_quote! {
        fn f(x: &[f32]) -> f32 {
            let one: f32 = 1.0;
            let two = 2.0f64;
            let three = 3;
            let four = 4u32;
            let five = 5f32;
            let big = -9223372036854775808i64;
            let byte = 255u8;
            let small = -128i8;
            let half = -32768i16;
            let word: u16 = 65535;
            let s = sum(map(|v: &f32| *v + one, x));
            let t: (f32, usize) = (s, len(x));
            let _ = (two, three, four, five, big, byte, small, half, word);
            t.0
        }
    });
    let f = &l.func;
    assert_eq!(ty(f, "one"), Type::Scalar(Scalar::F32));
    assert_eq!(ty(f, "two"), Type::Scalar(Scalar::F64));
    assert_eq!(ty(f, "three"), Type::Infer);
    assert_eq!(ty(f, "four"), Type::Scalar(Scalar::U32));
    assert_eq!(ty(f, "five"), Type::Scalar(Scalar::F32));
    assert_eq!(ty(f, "big"), Type::Scalar(Scalar::I64));
    assert_eq!(ty(f, "byte"), Type::Scalar(Scalar::U8));
    assert_eq!(ty(f, "small"), Type::Scalar(Scalar::I8));
    assert_eq!(ty(f, "half"), Type::Scalar(Scalar::I16));
    assert_eq!(ty(f, "word"), Type::Scalar(Scalar::U16));
    assert_eq!(
        ty(f, "v"),
        Type::Scalar(Scalar::F32),
        "`&f32` on a closure parameter means f32"
    );
    assert_eq!(
        ty(f, "t"),
        Type::Tuple(vec![Type::Scalar(Scalar::F32), Type::usize()])
    );
    let consts: Vec<ir::Const> = f
        .body
        .stmts
        .iter()
        .filter_map(|s| match s.expr {
            Expr::Const(c) => Some(c),
            _ => None,
        })
        .collect();
    assert!(consts.contains(&ir::Const::Int(i64::MIN as i128)));
    assert!(consts.contains(&ir::Const::Float(5.0)));
    assert!(consts.contains(&ir::Const::Int(3)));
    typecheck(&l);
}

#[test]
fn tuple_patterns_become_fields() {
    let l = lower(parse_quote! {
        fn f(p: &[(f32, i32)]) -> (Vec<f32>, i32) {
            let (a, (b, _c)) = (unzip(p), (7, 8));
            let (xs, ys) = a;
            (xs, sum(ys) + b)
        }
    });
    let f = &l.func;
    assert_eq!(
        l.sig.params[0].repr,
        Repr::Slice(Type::Tuple(vec![
            Type::Scalar(Scalar::F32),
            Type::Scalar(Scalar::I32)
        ]))
    );
    let fields: Vec<u32> = f
        .body
        .stmts
        .iter()
        .filter_map(|s| match s.expr {
            Expr::Field(_, i) => Some(i),
            _ => None,
        })
        .collect();
    assert_eq!(fields, vec![0, 1, 0, 1, 0, 1]);
    for name in ["a", "b", "_c", "xs", "ys"] {
        assert!(f.vars.iter().any(|(_, v)| v.name == name), "{name}");
    }
    typecheck(&l);
}

#[test]
fn short_circuit_operators_become_ifs() {
    let l = lower(parse_quote! {
        fn f(x: &[i32], lo: i32, hi: i32) -> usize {
            count(|v| v >= lo && v < hi || v == 0, x)
        }
    });
    let ls = lambdas(&l.func);
    assert_eq!(ls.len(), 1);
    let body = &ls[0].body;
    // `a && b || c` = `if (if a { b } else { false }) { true } else { c }`.
    let Some(last) = body.stmts.last() else {
        panic!()
    };
    let Expr::If(c, then_b, else_b) = &last.expr else {
        panic!("{}", text(&l))
    };
    assert!(matches!(then_b.stmts.as_slice(), [s] if s.expr == Expr::Const(ir::Const::Bool(true))));
    assert!(matches!(
        else_b.stmts.last().map(|s| &s.expr),
        Some(Expr::Binary(ir::BinOp::Eq, ..))
    ));
    let inner = body
        .stmts
        .iter()
        .find(|s| s.var == *c)
        .expect("the condition is defined before");
    let Expr::If(_, t2, e2) = &inner.expr else {
        panic!()
    };
    assert!(matches!(
        t2.stmts.last().map(|s| &s.expr),
        Some(Expr::Binary(ir::BinOp::Lt, ..))
    ));
    assert!(matches!(e2.stmts.as_slice(), [s] if s.expr == Expr::Const(ir::Const::Bool(false))));
    assert_eq!(l.func.ty(last.var), &Type::bool());
    typecheck(&l);
}

#[test]
fn scalar_paths_as_functions_and_constants() {
    let l = lower(parse_quote! {
        fn f(x: &[f32], y: &[i32]) -> (f32, Vec<i32>, Vec<f32>, f64) {
            (
                reduce(f32::max, x, f32::MIN),
                scan(i32::min, y),
                map(f32::sqrt, x),
                std::f64::consts::PI * f64::sqrt(2.0) + core::f64::consts::E + f64::consts::TAU,
            )
        }
    });
    let f = &l.func;
    let ls = lambdas(f);
    assert_eq!(ls.len(), 3);
    for p in &ls[0].params {
        assert_eq!(f.ty(*p), &Type::Scalar(Scalar::F32));
    }
    assert!(
        matches!(ls[0].body.stmts.as_slice(), [s] if matches!(s.expr, Expr::Math(ir::MathFn::Max, _)))
    );
    assert_eq!(f.ty(ls[1].params[0]), &Type::Scalar(Scalar::I32));
    assert_eq!(ls[2].params.len(), 1);
    let consts: Vec<(ir::Const, Type)> = f
        .body
        .stmts
        .iter()
        .filter_map(|s| match s.expr {
            Expr::Const(c) => Some((c, f.ty(s.var).clone())),
            _ => None,
        })
        .collect();
    let f64t = Type::Scalar(Scalar::F64);
    assert!(consts.contains(&(ir::Const::Float(f32::MIN as f64), Type::Scalar(Scalar::F32))));
    assert!(consts.contains(&(ir::Const::Float(std::f64::consts::PI), f64t.clone())));
    assert!(consts.contains(&(ir::Const::Float(std::f64::consts::E), f64t.clone())));
    assert!(consts.contains(&(ir::Const::Float(std::f64::consts::TAU), f64t.clone())));
    // `f64::sqrt(2.0)` types its argument.
    assert!(consts.contains(&(ir::Const::Float(2.0), f64t)));
    typecheck(&l);
}

#[test]
fn methods_len_index_casts_and_math() {
    let l = lower(parse_quote! {
        fn f(x: &[f32], i: usize) -> f32 {
            let n = x.len() as f32;
            let v = x[i].abs().powf(2.0).mul_add(n, 1.0).max(0.5);
            let w = (i as i32).wrapping_mul(3) as f32;
            -v + w
        }
    });
    let f = &l.func;
    let exprs: Vec<&Expr> = f.body.stmts.iter().map(|s| &s.expr).collect();
    assert!(exprs.iter().any(|e| matches!(e, Expr::Len(_))));
    assert!(exprs.iter().any(|e| matches!(
        e,
        Expr::Index {
            checked: Some(ir::Origin::Index),
            ..
        }
    )));
    assert!(
        exprs
            .iter()
            .any(|e| matches!(e, Expr::Math(ir::MathFn::MulAdd, a) if a.len() == 3))
    );
    assert!(
        exprs
            .iter()
            .any(|e| matches!(e, Expr::Binary(ir::BinOp::Mul, ..)))
    );
    assert!(
        exprs
            .iter()
            .any(|e| matches!(e, Expr::Unary(ir::UnOp::Neg, _)))
    );
    assert_eq!(
        exprs.iter().filter(|e| matches!(e, Expr::Cast(..))).count(),
        3
    );
    typecheck(&l);
}

#[test]
fn nested_fns_and_if_chains() {
    let l = lower(parse_quote! {
        fn f(x: &[f64]) -> Vec<f64> {
            fn clamp(v: f64, lo: f64, hi: f64) -> f64 {
                if v < lo { lo } else if v > hi { hi } else { v }
            }
            map(|v| clamp(v, 0.0, { let one = 1.0; one }), x)
        }
    });
    let f = &l.func;
    let ls = lambdas(f);
    assert_eq!(ls.len(), 1);
    // Parameters of the nested fn are copies with the declared types.
    assert_eq!(ty(f, "lo"), Type::Scalar(Scalar::F64));
    let ifs = ls[0]
        .body
        .stmts
        .iter()
        .filter(|s| matches!(s.expr, Expr::If(..)))
        .count();
    assert_eq!(ifs, 1);
    typecheck(&l);
}

#[test]
fn primitives_as_functions() {
    let l = lower(parse_quote! {
        fn f(rows: &Nested<f32>) -> (Vec<f32>, Vec<usize>) {
            (map(sum, rows), map(len, rows))
        }
    });
    let ls = lambdas(&l.func);
    assert_eq!(ls.len(), 2);
    assert!(
        matches!(ls[0].body.stmts.as_slice(), [s] if matches!(s.expr, Expr::Prim { prim: Prim::Sum, .. }))
    );
    assert!(matches!(ls[1].body.stmts.as_slice(), [s] if matches!(s.expr, Expr::Len(_))));
    typecheck(&l);
}

#[test]
fn every_primitive_lowers_with_its_arguments() {
    let l = lower(parse_quote! {
        fn f(x: &[f32], idx: &[u32], b: &[bool], n: usize) -> f32 {
            let z = zip(x, x);
            let (p, q) = unzip(z);
            let g = gather(x, idx);
            let pe = permute(x, idx);
            let s = scatter(x, idx, g);
            let sr = scatter_reduce(|a, c| a + c, x, idx, pe);
            let r = reduce(|a, c| a + c, x, 0.0);
            let m = min(x) + max(x) + sum(s);
            let an = any(b) && all(b) && any(|v| v > 0.0, x) && all(|v| v > 0.0, x);
            let c = count(b) + count(|v| v > 1.0, x);
            let sc = scan(|a, c| a + c, x);
            let es = exclusive_scan(|a, c| a + c, x, 0.0);
            let fl = filter(|v| v > 0.0, x);
            let rp = replicate(1.0, n);
            let ix = indices(x);
            let rg = range(n);
            let mp = map(|v, w| v * w, x, g);
            let so = sort(x);
            let sk = sort_by_key(idx, x);
            let ln = len(mp) + len(rp) + ix.len() + rg.len() + c + len(fl) + len(sc) + len(es) + len(sr) + len(p) + len(q) + len(so) + len(sk);
            if an { r + m + ln as f32 } else { 0.0 }
        }
    });
    let f = &l.func;
    let mut prims = Vec::new();
    f.body.walk(&mut |s| {
        if let Expr::Prim { prim, .. } = &s.expr {
            prims.push(*prim);
        }
    });
    prims.sort_by_key(|p| Prim::ALL.iter().position(|q| q == p));
    prims.dedup();
    let expected: Vec<Prim> = Prim::ALL
        .iter()
        .copied()
        .filter(|p| *p != Prim::Len)
        .collect();
    assert_eq!(prims, expected);
    typecheck(&l);
}

#[test]
fn module_functions_are_inlined() {
    let m: syn::ItemMod = parse_quote! {
        mod kernels {
            use super::*;
            pub fn dot(a: &[f32], b: &[f32]) -> f32 {
                sum(map(|x, y| x * y, a, b))
            }
            pub fn norm(a: &[f32]) -> f32 {
                dot(a, a).sqrt()
            }
        }
    };
    let ls = expand_mod(&Options::default(), &m).unwrap_or_else(|e| panic!("{:?}", messages(&e)));
    assert_eq!(ls.len(), 2);
    assert_eq!(ls[1].func.name, "norm");
    assert_eq!(top_prims(&ls[1].func), vec![Prim::Map, Prim::Sum]);
    for l in &ls {
        dpl_core::verify::verify(&l.func).expect("verify");
        typecheck(l);
    }
}

#[test]
fn result_return_types() {
    let l = lower(parse_quote! {
        fn f(x: &Seq<f32>, m: &Matrix<f64>) -> Result<(Seq<f32>, Nested<f64>), dpl::Error> {
            (map(|v| v, x), map(|r| map(|v| v, r), m))
        }
    });
    assert!(l.sig.ret.result);
    assert_eq!(
        l.sig.ret.repr,
        Repr::Tuple(vec![
            Repr::SeqBuf(Type::Scalar(Scalar::F32)),
            Repr::Nested(Type::Scalar(Scalar::F64))
        ])
    );
    assert_eq!(
        l.sig.params[1].repr,
        Repr::Matrix(Type::Scalar(Scalar::F64))
    );
    typecheck(&l);
    let l = lower(parse_quote! { fn g(x: Vec<i32>) -> Result<i32, Error> { sum(x) } });
    assert!(l.sig.ret.result);
    assert_eq!(l.sig.params[0].repr, Repr::Vec(Type::Scalar(Scalar::I32)));
    assert_eq!(l.func.ret, Type::Scalar(Scalar::I32));
}

#[test]
fn options_parse() {
    use quote::quote;
    assert_eq!(Options::parse(quote!()).unwrap().inner, Inner::Seq);
    assert_eq!(
        Options::parse(quote!(inner = "warp")).unwrap().inner,
        Inner::Warp
    );
    assert_eq!(
        Options::parse(quote!(inner = "auto")).unwrap().inner,
        Inner::Auto
    );
    assert_eq!(
        Options::parse(quote!(inner = "block")).unwrap().inner,
        Inner::Block
    );
    let e = Options::parse(quote!(inner = "grid"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown schedule \"grid\""), "{e}");
    let e = Options::parse(quote!(outer = "seq"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown option `outer`"), "{e}");
    let e = Options::parse(quote!(inner = 3)).unwrap_err().to_string();
    assert!(e.contains("expected a string"), "{e}");
    assert!(Options::parse(quote!(inner = "seq", inner = "block")).is_err());
}

// ----- errors -----

#[test]
fn all_errors_are_collected() {
    let e = errors(parse_quote! {
        fn f(mut x: &mut [f32], y: [f32; 3]) -> Vec<f32> {
            let mut a = 1;
            for i in 0..3 {}
            let b = match a { n => 1 };
            println!("hi");
            map(|v| v.foo(), x)
        }
    });
    for needle in [
        "`mut` parameters are not allowed",
        "`x` is `&mut` but never assigned",
        "unsupported parameter type",
        "`n` in a pattern is not supported",
        "macros are not supported",
        "unknown method `foo`",
    ] {
        assert!(has(&e, needle), "missing {needle:?} in {e:#?}");
    }
}

#[test]
fn closure_errors_are_reported_once() {
    let e = errors(parse_quote! {
        fn f(x: &[f32]) -> Vec<f32> {
            let g = |v| v.bogus();
            let h = |v| g(g(v));
            map(h, map(g, x))
        }
    });
    assert_eq!(
        e.iter().filter(|m| m.contains("bogus")).count(),
        1,
        "{e:#?}"
    );
    assert_eq!(e.len(), 1, "{e:#?}");
    // An unused closure or nested fn is still checked.
    let e = errors(parse_quote! {
        fn f(x: &[f32]) -> Vec<f32> {
            let unused = |v| v as String;
            fn never(v: f32) -> f32 { loop {} }
            map(|v| v, x)
        }
    });
    assert!(has(&e, "`as` converts between scalar types only"), "{e:#?}");
    assert!(has(&e, "changes no `let mut` variable"), "{e:#?}");
    assert_eq!(e.len(), 2, "{e:#?}");
}

#[test]
fn recursion_is_rejected() {
    let e = errors(parse_quote! {
        fn f(x: &[f32]) -> Vec<f32> {
            fn even(n: i32) -> bool { if n == 0 { true } else { odd(n - 1) } }
            fn odd(n: i32) -> bool { if n == 0 { false } else { even(n - 1) } }
            map(|v| if even(3) { v } else { -v }, x)
        }
    });
    assert!(has(&e, "recursive call of"), "{e:#?}");
    let e = errors(parse_quote! { fn f(n: i32) -> i32 { f(n) } });
    assert!(has(&e, "recursive call of `f`"), "{e:#?}");
    let m: syn::ItemMod = parse_quote! {
        mod m {
            pub fn a(n: i32) -> i32 { b(n) + 1 }
            pub fn b(n: i32) -> i32 { a(n) * 2 }
            pub fn c(n: i32) -> i32 { n }
        }
    };
    let e = messages(&expand_mod(&Options::default(), &m).err().expect("errors"));
    assert!(
        e.iter().filter(|m| m.contains("recursive call")).count() >= 1,
        "{e:#?}"
    );
    assert!(e.len() <= 3, "{e:#?}");
}

#[test]
fn signature_errors() {
    let e = errors(parse_quote! { async unsafe fn f<T>(self, x: T) where T: Copy { x } });
    for needle in [
        "cannot be `async`",
        "cannot be `unsafe`",
        "cannot be generic",
        "`where` clause",
        "`self` parameters",
        "must return a value",
    ] {
        assert!(has(&e, needle), "missing {needle:?} in {e:#?}");
    }
    // A type naming a generic parameter is not reported again.
    assert!(!has(&e, "unsupported"), "{e:#?}");
    let e = errors(parse_quote! { fn f(x: Nested<f32>, y: &Vec<Vec<f32>>) -> &[f32] { x } });
    assert!(has(&e, "take `Nested<T>` by reference"), "{e:#?}");
    assert!(has(&e, "unsupported element type"), "{e:#?}");
    assert!(has(&e, "return owned data"), "{e:#?}");
    let e = errors(parse_quote! { fn f(x: &[f32]) -> Result<Vec<f32>, String> { x } });
    assert!(has(&e, "must be `dpl::Error`"), "{e:#?}");
    let e = errors(parse_quote! { fn f(x: &Matrix<f32>) -> &Matrix<f32> { x } });
    assert!(has(&e, "return owned data"), "{e:#?}");
    // Lifetimes are fine.
    lower(parse_quote! { fn f<'a>(x: &'a [f32]) -> f32 { sum(x) } });
}

#[test]
fn primitive_arity_errors() {
    let e = errors(parse_quote! {
        fn f(x: &[f32]) -> f32 {
            let a = map(x);
            let b = reduce(|a| a, x, 0.0);
            let c = sum(x, x);
            let d = map(|a, b| a + b, x);
            let e = filter(x, |v| v > 0.0);
            let g = frobnicate(x);
            let h = sort(x, x);
            let i = filter(x, x);
            a + b + c + d + e + g + h + i
        }
    });
    for needle in [
        "wrong number of arguments for `map`: expected `map(f, xs1, ..., xsn)` with 1 to 8 sequences",
        "`reduce` calls its function with 2 arguments, but this closure takes 1",
        "wrong number of arguments for `sum`: expected `sum(x)`",
        "`map` over 1 sequence calls its function with 1 argument, but this closure takes 2",
        "the function comes first: `filter(pred, x)`",
        "the first argument of `filter` must be a function",
        "`frobnicate` is not a dpl primitive",
        "wrong number of arguments for `sort`: expected `sort(x)`",
    ] {
        assert!(has(&e, needle), "missing {needle:?} in {e:#?}");
    }
}

#[test]
fn closures_are_not_values() {
    let e = errors(parse_quote! {
        fn f(x: &[f32]) -> f32 {
            let g = |v| v;
            let t = (g, 1.0);
            g
        }
    });
    assert_eq!(
        e.iter()
            .filter(|m| m.contains("a function is not a value here"))
            .count(),
        2,
        "{e:#?}"
    );
}

#[test]
fn body_shape_errors() {
    let e = errors(parse_quote! {
        fn f(x: &[f32]) -> f32 {
            let y;
            sum(x);
            let z = if true { 1.0 };
            return sum(x);
        }
    });
    for needle in [
        "`let` needs a value",
        "this statement has no effect",
        "`if` without `else`",
        "`return` is not allowed",
    ] {
        assert!(has(&e, needle), "missing {needle:?} in {e:#?}");
    }
    let e = errors(parse_quote! { fn f(x: &[f32]) -> f32 { sum(x); } });
    assert!(has(&e, "remove this `;`"), "{e:#?}");
    let e = errors(parse_quote! { fn f(x: &[f32]) -> f32 { } });
    assert!(has(&e, "this block has no value"), "{e:#?}");
    let e = errors(parse_quote! { fn f(x: &[f32]) -> f32 { let s = sum(x); } });
    assert!(has(&e, "cannot end with `let`"), "{e:#?}");
}

#[test]
fn nested_fns_cannot_use_locals() {
    let e = errors(parse_quote! {
        fn f(x: &[f32], k: f32) -> Vec<f32> {
            fn scale(v: f32) -> f32 { v * k }
            map(scale, x)
        }
    });
    assert!(
        has(
            &e,
            "cannot find `k` in this scope (a nested `fn` cannot use the local variables"
        ),
        "{e:#?}"
    );
    assert_eq!(e.len(), 1, "{e:#?}");
}

#[test]
fn literal_errors() {
    let e = errors(parse_quote! {
        fn f(x: &[f32]) -> f32 {
            let a = 300000000000i32;
            let b = -1u32;
            let c = 1u128;
            let c2 = 256u8;
            let c3 = -129i8;
            let c4 = 65536u16;
            let d = "s";
            let e = 'c';
            let g = 1e39f32;
            let h = [1.0, 2.0];
            let i = 0..3;
            1.0
        }
    });
    for needle in [
        "literal out of range for `i32`",
        "literal out of range for `u32`",
        "unsupported literal suffix `u128`",
        "literal out of range for `u8`",
        "literal out of range for `i8`",
        "literal out of range for `u16`",
        "string, character and byte literals are not supported",
        "floating-point literal out of range",
        "array expressions are not supported",
        "ranges are not supported: use `range(n)`",
    ] {
        assert!(has(&e, needle), "missing {needle:?} in {e:#?}");
    }
}

#[test]
fn module_errors() {
    let m: syn::ItemMod = parse_quote! {
        mod m {
            struct S;
            #[parallel]
            pub fn a(x: &[f32]) -> f32 { sum(x) }
            pub fn b(x: &[f32]) -> f32 { a(x) + c(x) }
        }
    };
    let e = messages(&expand_mod(&Options::default(), &m).err().expect("errors"));
    assert!(has(&e, "only `fn` and `use` items are allowed"), "{e:#?}");
    assert!(has(&e, "remove this attribute"), "{e:#?}");
    assert!(
        has(
            &e,
            "`c` is not a dpl primitive or a function of this #[parallel] module"
        ),
        "{e:#?}"
    );
    let m: syn::ItemMod = parse_quote! { mod m; };
    assert!(expand_mod(&Options::default(), &m).is_err());
}

/// Every `#[parallel]` item of a Rust source file, recursively through modules.
fn parallel_items(file: &syn::File) -> Vec<syn::Item> {
    fn walk(items: &[syn::Item], out: &mut Vec<syn::Item>) {
        for item in items {
            match item {
                syn::Item::Fn(f) if f.attrs.iter().any(is_parallel_attr) => out.push(item.clone()),
                syn::Item::Mod(m) if m.attrs.iter().any(is_parallel_attr) => out.push(item.clone()),
                syn::Item::Mod(m) => {
                    if let Some((_, items)) = &m.content {
                        walk(items, out);
                    }
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(&file.items, &mut out);
    out
}

/// The programs of the conformance suite (`tests/conformance/*.rs` of the repository, one
/// file per primitive family), read at run time: a packaged dpl-macros holds no file
/// outside its folder, and there this test has no programs to read (it says so).
fn conformance_sources() -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/conformance");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("no {}: not in the dpl repository", dir.display());
        return Vec::new();
    };
    let mut files: Vec<(String, String)> = entries
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("a readable conformance file");
            (p.file_stem().unwrap().to_string_lossy().into_owned(), text)
        })
        .collect();
    files.sort();
    files
}

#[test]
fn conformance_programs_lower_verify_and_typecheck() {
    let sources = conformance_sources();
    if sources.is_empty() {
        return;
    }
    let items: Vec<syn::Item> = sources
        .iter()
        .flat_map(|(name, src)| {
            let file: syn::File =
                syn::parse_str(src).unwrap_or_else(|e| panic!("conformance/{name}.rs: {e}"));
            parallel_items(&file)
        })
        .collect();
    assert!(items.len() > 100, "found only {} programs", items.len());
    let mut failures = Vec::new();
    for item in items {
        let lowered = match item {
            // Every instantiation of a generic function goes through the whole expansion.
            syn::Item::Fn(f) if crate::generic::is_generic(&f) => {
                if let Err(e) = crate::generic::expand(&Options::default(), &f) {
                    failures.push(format!("{}: {:?}", f.sig.ident, messages(&e)));
                }
                continue;
            }
            syn::Item::Fn(f) => expand_fn(&Options::default(), f).map(|l| vec![l]),
            syn::Item::Mod(m) => expand_mod(&Options::default(), &m),
            _ => unreachable!(),
        };
        match lowered {
            Err(e) => failures.push(format!("lowering: {:?}", messages(&e))),
            Ok(ls) => {
                for l in ls {
                    let name = l.func.name.clone();
                    if let Err(e) = dpl_core::verify::verify(&l.func) {
                        failures.push(format!("{name}: verify: {e:?}"));
                        continue;
                    }
                    let mut f = l.func.clone();
                    if let Err(e) = dpl_core::typeck::infer(&mut f) {
                        let msgs: Vec<String> = e.iter().map(|d| d.to_string()).collect();
                        failures.push(format!(
                            "{name}: typeck: {msgs:?}\n{}",
                            dpl_core::text::print(&l.func)
                        ));
                        continue;
                    }
                    if let Err(e) = dpl_core::verify::verify_types(&f) {
                        failures.push(format!("{name}: verify_types: {e:?}"));
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn exponential_inlining_is_cut_off() {
    let mut body = String::from("let f0 = |v| v + 1.0; ");
    for i in 1..=24 {
        body.push_str(&format!("let f{i} = |v| f{}(f{}(v)); ", i - 1, i - 1));
    }
    body.push_str("map(f24, x)");
    let item: syn::ItemFn =
        syn::parse_str(&format!("fn f(x: &[f32]) -> Vec<f32> {{ {body} }}")).unwrap();
    let start = std::time::Instant::now();
    let e = errors(item);
    assert!(has(&e, "too large after inlining"), "{e:#?}");
    assert_eq!(e.len(), 1, "{e:#?}");
    assert!(start.elapsed().as_secs() < 20);
}

#[test]
fn stencil_is_a_map_over_guarded_reads() {
    let l = lower(parse_quote! {
        fn f(x: &[f32]) -> Vec<f32> {
            stencil(|w| w[0] + w[1] + w[2], x, [-1, 0, 1], 0.0)
        }
    });
    let typed = typecheck(&l);
    assert_eq!(top_prims(&typed), vec![Prim::Range, Prim::Map]);
    let t = text(&l);
    // Three reads, none checked: two behind a condition, one at the position itself.
    assert_eq!(t.matches("index(unchecked)").count(), 3, "{t}");
    assert_eq!(t.matches("if ").count(), 2, "{t}");
    let two = lower(parse_quote! {
        fn g(u: &Matrix<f64>) -> Nested<f64> {
            stencil(|w| w[0] - w[1], u, &[(0, 0), (-1, 2)], 1.0)
        }
    });
    let typed = typecheck(&two);
    assert_eq!(
        ty(&typed, "stencil"),
        Type::seq(Type::seq(Type::Scalar(Scalar::F64)))
    );
}

#[test]
fn stencil_errors() {
    let e = errors(parse_quote! {
        fn f(x: &[f32], o: i32, k: usize) -> f32 {
            let a = stencil(|w| w[0], x, o, 0.0);
            let b = stencil(|w| w[0], x, [1, (0, 1)], 0.0);
            let c = stencil(|w| w[k], x, [1], 0.0);
            let d = stencil(|w| w[2], x, [-1, 1], 0.0);
            let e = stencil(|w, v| w[0], x, [1], 0.0);
            let g = stencil(|w| w[0], x, [], 0.0);
            let h = stencil(|w| w[0], x, [1]);
            let i = stencil(|w| w[0], x, [1.5], 0.0);
            a + b + c + d + e + g + h + i
        }
    });
    for needle in [
        "the offsets of `stencil` are an array of constants written in the call",
        "the offsets of `stencil` mix one and two dimensions",
        "the window of `stencil` is indexed by constants",
        "the window of this `stencil` has 2 values (one per offset): `w[0]`..`w[1]`, not `w[2]`",
        "`stencil` calls its function with one argument, the window of neighbours, but this closure takes 2",
        "`stencil` needs at least one offset",
        "wrong number of arguments for `stencil`",
        "each offset of `stencil` is an integer constant",
    ] {
        assert!(has(&e, needle), "missing {needle:?} in {e:#?}");
    }
}

/// An unsuffixed literal takes the 8- or 16-bit type its context asks for, and one that
/// does not fit that type is an error at the literal after inference.
#[test]
fn unsuffixed_literals_take_narrow_types() {
    let l = lower(parse_quote! {
        fn f(x: &[u8], y: &[i16]) -> (Vec<u8>, Vec<i16>) {
            (map(|v| v * 3 + 250, x), map(|w| w - 32767, y))
        }
    });
    let typed = typecheck(&l);
    let consts: Vec<Type> = typed
        .vars
        .iter()
        .filter(|(v, _)| {
            let mut is_const = false;
            typed.body.walk(&mut |s| {
                is_const |= s.var == *v && matches!(s.expr, Expr::Const(_));
            });
            is_const
        })
        .map(|(_, var)| var.ty.clone())
        .collect();
    assert_eq!(
        consts,
        vec![
            Type::Scalar(Scalar::U8),
            Type::Scalar(Scalar::U8),
            Type::Scalar(Scalar::I16)
        ]
    );
    let l = lower(parse_quote! {
        fn g(x: &[u8]) -> Vec<u8> {
            map(|v| v + 256, x)
        }
    });
    let mut typed = l.func.clone();
    let e = dpl_core::typeck::infer(&mut typed)
        .err()
        .map(|e| format!("{e:?}"))
        .unwrap_or_default();
    assert!(e.contains("`256` is above `u8::MAX`"), "{e}");
}

/// Found by the mutation fuzzer: an empty statement (`;;`) is nothing, as in Rust, and a
/// block that ends with one is the usual error on that `;` (it was "this expression is not
/// supported" at the call site).
#[test]
fn empty_statements() {
    let l = lower(parse_quote! {
        fn f(x: &[f32]) -> f32 { let s = sum(x);; ; s }
    });
    assert_eq!(top_prims(&l.func), vec![Prim::Sum]);
    // Inside a loop body too.
    lower(parse_quote! {
        fn g(x: &[u32]) -> Vec<u32> { map(|v| { let mut n = v; while n > 1 { n /= 2;; } n }, x) }
    });
    let src = "fn f(x: &[f32]) -> f32 {\n    sum(x);\n    ;\n}";
    let item: syn::ItemFn = syn::parse_str(src).expect("parses");
    let Err(e) = expand_fn(&Options::default(), item) else {
        panic!("a block ending with `;` is an error")
    };
    assert!(
        e.clone()
            .into_iter()
            .any(|e| e.to_string().starts_with("remove this `;`") && e.span().start().line == 3),
        "{:?}",
        messages(&e)
    );
    assert!(e.into_iter().all(|e| e.span().start().line >= 2));
}

/// Found by the mutation fuzzer: an unsuffixed float literal that `f32` rounds to an
/// infinity made the CPU code generator panic; it is rustc's "literal out of range" error,
/// on the literal.
#[test]
fn float_literals_out_of_range_for_f32() {
    let l = lower(parse_quote! {
        fn f(x: &[f32]) -> Vec<f32> { map(|v| v * 1e40, x) }
    });
    let Err(diags) = dpl_core::pipeline::compile(l.func.clone()) else {
        panic!("1e40 is out of range for f32")
    };
    assert!(
        diags.iter().any(
            |d| d.message == "the literal `1e40` is out of range for `f32`"
                && d.span != ir::Span::NONE
        ),
        "{diags:?}"
    );
    // In range for `f64`, and for `f32` up to its largest finite value.
    let l = lower(parse_quote! {
        fn g(x: &[f64], y: &[f32]) -> (Vec<f64>, Vec<f32>) {
            (map(|v| v * 1e40, x), map(|v| v * 3.4028235e38, y))
        }
    });
    assert!(dpl_core::pipeline::compile(l.func.clone()).is_ok());
}
