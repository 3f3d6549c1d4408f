//! Benchmarks of the `spmv` example's dpl kernels (`examples/spmv/kernels.rs`) against
//! hand-written rayon and sequential Rust (`examples/spmv/plain.rs`).
//!
//! Groups follow the naming scheme of `cargo xtask bench-report` (see `xtask/src/bench.rs`):
//! `spmv_<variant>_f32_<matrix>/<rows>` with functions
//!
//! * `dpl` — the `#[parallel]` kernel on `Place::Cpu` (`<variant>`: `csr` rows in parallel
//!   and each row sequential, `csr_block` inner level parallel too, `csr_auto` chosen per
//!   call, `ell` column-major ELLPACK);
//! * `rayon` — hand-written rayon CSR SpMV: contiguous row chunks balanced by entries,
//!   unchecked inner loop (the strongest form measured on this machine, see `notes.md`);
//! * `seq` — the same unchecked loop, sequential.
//!
//! Matrices: `random` (1M rows, 10 entries each), `laplace2d` (5-point stencil, 1000x1000
//! grid), `powerlaw` (1M rows, skewed), `onelongrow` (one row of 4M entries after 250K
//! short rows) and the real matrices of `../shared/data/matrices` when present. ELL is
//! benchmarked only where its padding stays under 8x the entries (not the skewed ones).
//!
//! Besides, `spmv_schedule_f32_<matrix>/<rows>` puts the three CSR schedules side by side
//! (ids `auto`, `inner_seq`, `inner_block`; not compared by the report tool) on the
//! uniform, the power-law and the one-long-row matrices, for the `inner = "auto"` target
//! (within 5% of the better fixed schedule).
//!
//! Throughput is the algorithm's bytes: values and columns (8 bytes per entry), row offsets
//! (8 bytes per row), `x` read once and `y` written once. Measurement is kept short
//! (10 flat samples, ~1 s per function): the machine is shared. `DPL_BENCH_QUICK=1` shortens
//! it further.

#![allow(missing_docs)] // criterion_group! generates undocumented items.

mod shared;

use shared::configure;

#[path = "../examples/spmv/kernels.rs"]
mod kernels;
#[path = "../examples/spmv/plain.rs"]
mod plain;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use dpl::mm::{Csr, CsrExt};
use plain::CsrF32;

/// One SpMV call, its inputs captured.
type Kernel<'a> = Box<dyn Fn() -> Vec<f32> + 'a>;

/// The algorithm's bytes of one SpMV.
fn bytes(a: &Csr) -> u64 {
    (8 * a.nnz() + 8 * (a.rows() + 1) + 4 * a.cols() + 4 * a.rows()) as u64
}

fn matrices() -> Vec<(String, Csr)> {
    let mut ms = plain::generated(plain::Scale::Full);
    match plain::shared_matrices() {
        Ok(real) => ms.extend(real),
        Err(why) => eprintln!("spmv bench: {why}"),
    }
    ms
}

fn spmv(c: &mut Criterion) {
    for (name, a) in matrices() {
        let csr = CsrF32::new(&a);
        let x = plain::vector(a.cols());
        let (vals, cols) = a.to_nested();
        let ell = plain::ell_fits(&a).then(|| a.to_ell());
        let want = plain::reference(&csr, &x);
        // Never time a wrong kernel.
        let verify = |what: &str, y: Vec<f32>| {
            if let Err(e) = plain::check(&y, &want) {
                panic!("{name}: {what}: {e}");
            }
        };
        verify("rayon", plain::spmv_rayon(&csr, &x));
        verify("seq", plain::spmv_seq(&csr, &x));

        let mut variants: Vec<(&str, Kernel<'_>)> = vec![
            ("csr", Box::new(|| kernels::spmv_csr(&vals, &cols, &x))),
            (
                "csr_block",
                Box::new(|| kernels::spmv_csr_block(&vals, &cols, &x)),
            ),
            (
                "csr_auto",
                Box::new(|| kernels::spmv_csr_auto(&vals, &cols, &x)),
            ),
        ];
        if let Some((ev, ec)) = &ell {
            variants.push(("ell", Box::new(|| kernels::spmv_ell(ev, ec, &x))));
        }
        for (variant, f) in &variants {
            verify(variant, f());
            let mut g = c.benchmark_group(format!("spmv_{variant}_f32_{name}/{}", a.rows()));
            configure(&mut g, bytes(&a));
            g.bench_function("dpl", |b| b.iter(|| black_box(f())));
            g.bench_function("rayon", |b| {
                b.iter(|| black_box(plain::spmv_rayon(&csr, &x)))
            });
            g.bench_function("seq", |b| b.iter(|| black_box(plain::spmv_seq(&csr, &x))));
            g.finish();
        }

        if ["random", "powerlaw", "onelongrow"].contains(&name.as_str()) {
            let mut g = c.benchmark_group(format!("spmv_schedule_f32_{name}/{}", a.rows()));
            configure(&mut g, bytes(&a));
            for (id, f) in [
                ("auto", &variants[2].1),
                ("inner_seq", &variants[0].1),
                ("inner_block", &variants[1].1),
            ] {
                g.bench_function(id, |b| b.iter(|| black_box(f())));
            }
            g.finish();
        }
    }
}

criterion_group!(benches, spmv);
criterion_main!(benches);
