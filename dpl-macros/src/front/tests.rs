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

#[test]
fn smoke_print() {
    let l = lower(parse_quote! {
        fn saxpy(a: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
            map(|xi, yi| a * xi + yi, x, y)
        }
    });
    println!("{}", dpl_core::text::print(&l.func));
}
