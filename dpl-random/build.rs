//! Generates the random programs of `dpl_testkit::programs` as Rust, the way `#[parallel]`
//! does: each program through the pipeline, then dpl-cpu's code generator on its fused
//! form (`Place::Cpu`, with the parallel run time) and on its normalized form
//! (`Place::Seq`, with the sequential one). Writes `$OUT_DIR/programs.rs`: a function per
//! program and place, the table `PROGRAMS` of them and the table `REJECTED` of the
//! programs the pipeline or the code generator refused (with why), which the tests report.
//!
//! `DPL_RANDOM_RUST_FIRST` (default 0) and `DPL_RANDOM_RUST_PROGRAMS` (default
//! [`DEFAULT_PROGRAMS`]) choose the seeds: `cargo xtask fuzz` builds batch after batch.

use std::fmt::Write as _;

use dpl_core::pipeline::compile;
use dpl_cpu::codegen::{self, FnInput, ParamRepr};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};

// The generator is dpl-testkit's, compiled into this script from its source files (linked
// into `generator/`, so they travel with the package): a build-dependency on dpl-testkit,
// which is not published, would keep `cargo package --workspace` from packaging this crate
// (a packaged crate's dependencies are resolved as if published). `programs.rs` names its
// random number generator `crate::SplitMix64`.
#[allow(dead_code)]
#[path = "generator/programs.rs"]
mod programs;
#[allow(dead_code)]
#[path = "generator/rng.rs"]
mod rng;
use rng::SplitMix64;

/// Programs compiled when `DPL_RANDOM_RUST_PROGRAMS` is unset: the slice of the normal test
/// command.
const DEFAULT_PROGRAMS: u64 = 40;

fn var(name: &str, default: u64) -> u64 {
    println!("cargo:rerun-if-env-changed={name}");
    match std::env::var(name) {
        Ok(s) => s
            .parse()
            .unwrap_or_else(|_| panic!("{name}=`{s}` is not a number")),
        Err(_) => default,
    }
}

/// The Rust functions of program `seed` on both places, or why there are none.
fn functions(seed: u64) -> Result<TokenStream, String> {
    let src = programs::program(seed);
    let f = dpl_core::text::parse_named(&src)
        .map_err(|e| format!("the generator wrote a program that does not parse: {e}\n{src}"))?
        .0;
    let c = compile(f).map_err(|d| format!("the pipeline rejects it: {d:?}\n{src}"))?;
    let params: Vec<_> = [
        ("a", ParamRepr::Slice),
        ("b", ParamRepr::Slice),
        ("k", ParamRepr::Scalar),
        ("rows", ParamRepr::Nested),
    ]
    .into_iter()
    .map(|(n, r)| (format_ident!("{n}"), r))
    .collect();
    let span = |_| Span::call_site();
    let private = quote!(::dpl::__private);
    let (rt, seq_rt) = (quote!(::dpl::__private::rt), quote!(::dpl::__private::seq));
    // The loops inside elements: sequential for even seeds, parallel for odd ones (the
    // two schedules `#[parallel]` chooses between at run time).
    let inner = if seed.is_multiple_of(2) { &seq_rt } else { &rt };
    let generate = |func, rt: &TokenStream, inner: &TokenStream, heavy| {
        std::panic::catch_unwind(|| {
            codegen::body(&FnInput {
                func,
                params: params.clone(),
                span: &span,
                rt: rt.clone(),
                private: private.clone(),
                inner_rt: inner.clone(),
                heavy,
                in_place: Vec::new(),
            })
        })
        .map_err(|p| {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            format!("the code generator panicked: {msg}\n{src}")
        })
    };
    let cpu = generate(&c.fused, &rt, inner, Some(quote!(::dpl::__private::heavy)))?;
    let seq = generate(&c.normalized, &seq_rt, &seq_rt, None)?;
    let (cpu_name, seq_name) = (format_ident!("cpu_{seed}"), format_ident!("seq_{seed}"));
    let signature = quote!((a: &[i64], b: &[i64], k: i64, rows: &::dpl::Nested<i64>) -> ::core::result::Result<(::std::vec::Vec<i64>, i64), ::dpl::Error>);
    let (cpu_doc, seq_doc) = (
        format!("Program {seed} on `Place::Cpu`."),
        format!("Program {seed} on `Place::Seq`."),
    );
    Ok(quote! {
        #[doc = #cpu_doc]
        pub fn #cpu_name #signature { #private::rt::run(move || #cpu) }
        #[doc = #seq_doc]
        pub fn #seq_name #signature { #private::rt::run(move || #seq) }
    })
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let first = var("DPL_RANDOM_RUST_FIRST", 0);
    let count = var("DPL_RANDOM_RUST_PROGRAMS", DEFAULT_PROGRAMS);
    let mut items = String::new();
    let mut table = String::new();
    let mut rejected = String::new();
    for seed in first..first + count {
        match functions(seed) {
            Ok(tokens) => {
                writeln!(items, "{tokens}").unwrap();
                writeln!(
                    table,
                    "    Program {{ seed: {seed}, cpu: cpu_{seed}, seq: seq_{seed} }},"
                )
                .unwrap();
            }
            Err(why) => writeln!(rejected, "    ({seed}, {why:?}),").unwrap(),
        }
    }
    let text = format!(
        "{items}\n/// The programs compiled, in seed order.\npub static PROGRAMS: &[Program] = &[\n{table}];\n\
         /// The programs that could not be compiled, with why.\npub static REJECTED: &[(u64, &str)] = &[\n{rejected}];\n"
    );
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("programs.rs"), text).expect("writing programs.rs");
}
