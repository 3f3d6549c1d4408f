//! Expansion time of `#[parallel]` on synthetic bodies (`src/synthetic.rs`): nested
//! closures (depth 10-40), independent primitives (10-200) and recurrences unrolled 5-100
//! steps, top level and per row. Each case is the whole expansion of one function from
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
#[path = "../src/synthetic.rs"]
mod synthetic;

/// Parses the function, then expands it as the macro does.
fn expand(src: &str) -> usize {
    let item: syn::ItemFn = syn::parse_str(src).expect("a synthetic function parses");
    let opts = front::Options::default();
    let lowered = front::expand_fn(&opts, item).expect("a synthetic function compiles");
    let code = emit::emit(&opts, vec![lowered], None).expect("a synthetic function compiles");
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

criterion_group!(expand_benches, benches);
criterion_main!(expand_benches);
