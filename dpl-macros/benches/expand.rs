//! Expansion time of `#[parallel]` on synthetic bodies (`src/synthetic.rs`): nested
//! closures (depth 10-40), independent primitives (10-200) and recurrences unrolled 5-100
//! steps, top level and per row; a generic function at 4, 13 and 36 instantiations next to
//! the same function written for one type; a chain of 4-16 generic calls. Each case is the whole expansion of one function from
//! its parsed item: the front end, the dpl-core pipeline and the generated Rust (and with
//! `--features gpu`, the PTX). Growth should be linear in the parameter.
//!
//! `cargo bench -p dpl-macros --bench expand [--features gpu]`. A proc-macro crate exports
//! only its macros, so this includes the front end and the code generator as modules.

#![allow(missing_docs)]

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

#[allow(dead_code, unused_imports)]
#[path = "../src/emit.rs"]
mod emit;
#[allow(dead_code, unused_imports)]
#[path = "../src/front/mod.rs"]
mod front;
#[allow(dead_code, unused_imports)]
#[path = "../src/generic.rs"]
mod generic;
#[path = "../src/synthetic.rs"]
mod synthetic;

/// Parses the function, then expands it as the macro does.
fn expand(src: &str) -> usize {
    let item: syn::ItemFn = syn::parse_str(src).expect("a synthetic function parses");
    let opts = front::Options::default();
    let lowered = front::expand_fn(&opts, item).expect("a synthetic function compiles");
    let code = emit::emit(&opts, vec![lowered], None, proc_macro2::TokenStream::new())
        .expect("a synthetic function compiles");
    code.into_iter().count()
}

fn family(c: &mut Criterion, name: &str, make: fn(usize) -> String, sizes: &[usize]) {
    let mut g = c.benchmark_group(name);
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_secs(1));
    for &n in sizes {
        let src = make(n);
        g.bench_with_input(BenchmarkId::from_parameter(n), &src, |b, src| {
            b.iter(|| expand(src))
        });
    }
    g.finish();
}

fn benches(c: &mut Criterion) {
    family(
        c,
        "nested_closures",
        synthetic::nested_closures,
        &[10, 20, 30, 40],
    );
    family(c, "primitives", synthetic::primitives, &[10, 50, 100, 200]);
    family(c, "recurrence", synthetic::recurrence, &[5, 25, 50, 100]);
    family(
        c,
        "row_recurrence",
        synthetic::row_recurrence,
        &[5, 25, 50, 100],
    );
}

/// A generic function (`synthetic::generic`, 8 maps, a scan and a sum) against the same
/// function written for `f32`: the expansion is one compilation per instantiation.
fn generics(c: &mut Criterion) {
    let mut g = c.benchmark_group("generic");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_secs(2));
    let written = synthetic::generic("", "f32", 8);
    g.bench_function("written_f32", |b| b.iter(|| expand(&written)));
    for (name, params) in [
        ("float_4", "<T: Float>"),
        ("num_13", "<T: Num>"),
        ("int_float_36", "<T: Int, U: Float>"),
    ] {
        let src = synthetic::generic(params, "T", 8);
        let item: syn::ItemFn = syn::parse_str(&src).expect("a synthetic function parses");
        let opts = front::Options::default();
        g.bench_function(name, |b| {
            b.iter(|| {
                generic::expand(&opts, &item)
                    .expect("compiles")
                    .into_iter()
                    .count()
            })
        });
    }
    g.finish();
}

/// The function at the end of a chain of generic calls (`synthetic::generic_calls`, depth
/// 4-16): lowered once per level (the calls inlined one level further each round).
fn generic_call_chains(c: &mut Criterion) {
    let mut g = c.benchmark_group("generic_calls");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_secs(1));
    for depth in [4, 8, 16] {
        let src = synthetic::generic_calls(depth);
        let m: syn::ItemMod = syn::parse_str(&src).expect("a synthetic module parses");
        let opts = front::Options::default();
        g.bench_with_input(BenchmarkId::from_parameter(depth), &m, |b, m| {
            b.iter(|| {
                let lowered = front::expand_mod(&opts, m).expect("compiles");
                let f: Vec<_> = lowered.into_iter().filter(|l| l.name == "f").collect();
                emit::emit(&opts, f, None, proc_macro2::TokenStream::new())
                    .expect("compiles")
                    .into_iter()
                    .count()
            })
        });
    }
    g.finish();
}

criterion_group!(expand_benches, benches, generics, generic_call_chains);
criterion_main!(expand_benches);
