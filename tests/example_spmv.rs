//! Correctness of the `spmv` example's dpl kernels (`examples/spmv/kernels.rs`) on every
//! place: small instances of every generated matrix kind, the real matrices of
//! `../shared/data/matrices` (skipped with a message when absent), hand-made corner cases,
//! and bad input. Every result is compared with the plain-Rust `f64` reference of
//! `examples/spmv/plain.rs` within its per-row error bound.

#[path = "../examples/spmv/kernels.rs"]
mod kernels;
#[path = "../examples/spmv/plain.rs"]
mod plain;

use dpl::mm::{CooMatrix, Csr};
use dpl::prelude::*;
use dpl_testkit::sparse;
use plain::CsrF32;

/// Runs all four kernels (ELL when its padding is reasonable) on every place and checks
/// each result; also checks the two hand-written baselines, which the benchmark trusts.
fn check_all(name: &str, a: &Csr) {
    let csr = CsrF32::new(a);
    let x = plain::vector(a.cols());
    let want = plain::reference(&csr, &x);
    let (vals, cols) = a.to_nested();
    let fail = |what: &str, place: Option<Place>, r: Result<(), String>| {
        if let Err(e) = r {
            panic!("{name}: {what} on {place:?}: {e}");
        }
    };
    fail(
        "seq baseline",
        None,
        plain::check(&plain::spmv_seq(&csr, &x), &want),
    );
    fail(
        "rayon baseline",
        None,
        plain::check(&plain::spmv_rayon(&csr, &x), &want),
    );
    let ell = plain::ell_fits(a).then(|| a.to_ell());
    for place in dpl::available_places() {
        with_place(place, || {
            let p = Some(place);
            fail(
                "csr",
                p,
                plain::check(&kernels::spmv_csr(&vals, &cols, &x), &want),
            );
            fail(
                "csr block",
                p,
                plain::check(&kernels::spmv_csr_block(&vals, &cols, &x), &want),
            );
            fail(
                "csr auto",
                p,
                plain::check(&kernels::spmv_csr_auto(&vals, &cols, &x), &want),
            );
            if let Some((ev, ec)) = &ell {
                fail(
                    "ell",
                    p,
                    plain::check(&kernels::spmv_ell(ev, ec, &x), &want),
                );
            }
        });
    }
}

#[test]
fn random_matrix() {
    let (name, a) = &plain::generated(plain::Scale::Small)[0];
    assert_eq!(name, "random");
    assert_eq!(a.nnz(), 10 * a.rows());
    check_all(name, a);
}

#[test]
fn laplacian() {
    let (name, a) = &plain::generated(plain::Scale::Small)[1];
    assert_eq!(name, "laplace2d");
    check_all(name, a);
}

#[test]
fn power_law_is_skewed_and_correct() {
    let (name, a) = &plain::generated(plain::Scale::Small)[2];
    assert_eq!(name, "powerlaw");
    let (rows, nnz, longest) = plain::shape(a);
    assert!(
        longest > 50 * nnz / rows,
        "not skewed: longest {longest}, mean {}",
        nnz / rows
    );
    assert!(
        !plain::ell_fits(a),
        "ELL should be refused for the power law"
    );
    check_all(name, a);
}

#[test]
fn one_long_row_takes_the_parallel_inner_path() {
    let (name, a) = &plain::generated(plain::Scale::Small)[3];
    assert_eq!(name, "onelongrow");
    let (rows, nnz, longest) = plain::shape(a);
    // The case `inner = "auto"` is meant for: one row holds most of the work.
    assert!(
        2 * longest > nnz,
        "{rows} rows, {nnz} entries, longest {longest}"
    );
    check_all(name, a);
}

#[test]
fn real_matrices() {
    match plain::shared_matrices() {
        Ok(ms) => {
            assert!(
                !ms.is_empty(),
                "no .mtx file in {}",
                plain::shared_matrix_dir().display()
            );
            for (name, a) in &ms {
                check_all(name, a);
            }
        }
        Err(why) => eprintln!("skipping: {why}"),
    }
}

#[test]
fn symmetric_matrix_market_is_expanded() {
    // A symmetric file stores the lower triangle; the kernels must see both halves.
    let text = "%%MatrixMarket matrix coordinate real symmetric\n4 4 6\n\
                1 1 2\n2 1 -1\n2 2 2\n3 2 -1\n3 3 2\n4 1 0.5\n";
    let a = dpl::mm::parse(text).unwrap().to_csr();
    assert_eq!(a.nnz(), 9);
    check_all("symmetric", &a);
    // And the exact result for x = [1, 2, 3, 4], computed by hand.
    let (vals, cols) = a.to_nested();
    let x = [1.0f32, 2.0, 3.0, 4.0];
    let want = vec![2.0 - 2.0 + 2.0, -1.0 + 4.0 - 3.0, -2.0 + 6.0, 0.5];
    for place in dpl::available_places() {
        with_place(place, || {
            assert_eq!(kernels::spmv_csr(&vals, &cols, &x), want, "{place}");
            let (ev, ec) = a.to_ell();
            assert_eq!(kernels::spmv_ell(&ev, &ec, &x), want, "{place}");
        });
    }
}

#[test]
fn corner_cases() {
    // No rows; empty rows (first, middle, last); one entry; a rectangular matrix.
    let cases = [
        ("0 rows", CooMatrix::from_triplets(0, 5, vec![]).unwrap()),
        ("all empty", CooMatrix::from_triplets(3, 3, vec![]).unwrap()),
        (
            "empty rows",
            CooMatrix::from_triplets(5, 4, vec![(1, 0, 1.5), (1, 3, -2.0), (3, 2, 4.0)]).unwrap(),
        ),
        (
            "one entry",
            CooMatrix::from_triplets(1, 1, vec![(0, 0, 3.0)]).unwrap(),
        ),
        (
            "wide",
            CooMatrix::from_triplets(2, 1000, (0..1000).map(|c| (c % 2, c, c as f64)).collect())
                .unwrap(),
        ),
    ];
    for (name, coo) in &cases {
        check_all(name, &coo.to_csr());
    }
}

#[test]
fn ell_with_any_layout() {
    // The ELL kernel reads rows as strided views: a row-major copy gives the same result.
    let a = sparse::random(500, 300, 7, 9);
    let csr = CsrF32::new(&a);
    let x = plain::vector(a.cols());
    let want = plain::reference(&csr, &x);
    let (ev, ec) = a.to_ell();
    let (rv, rc) = (ev.to_row_major(), ec.to_row_major());
    assert_eq!(ev.strides(), (1, 500));
    assert_eq!(rv.strides(), (7, 1));
    for place in dpl::available_places() {
        with_place(place, || {
            plain::check(&kernels::spmv_ell(&ev, &ec, &x), &want).unwrap();
            plain::check(&kernels::spmv_ell(&rv, &rc, &x), &want).unwrap();
        });
    }
}

/// The panic message of `f`, which must panic.
fn panic_message(f: impl FnOnce() -> Vec<f32>) -> String {
    let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .expect_err("expected an error, got a result");
    err.downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| format!("{err:?}"))
}

#[test]
fn bad_input_is_a_clear_error() {
    let a = sparse::random(50, 40, 5, 2);
    let (vals, cols) = a.to_nested();
    let (ev, ec) = a.to_ell();
    let short_x = vec![1.0f32; 10]; // columns go up to 39
    let vals_other: Nested<f32> = Nested::from(vec![vec![1.0f32]; 49]); // one row too few
    for place in dpl::available_places() {
        with_place(place, || {
            for msg in [
                panic_message(|| kernels::spmv_csr(&vals, &cols, &short_x)),
                panic_message(|| kernels::spmv_csr_block(&vals, &cols, &short_x)),
                panic_message(|| kernels::spmv_csr_auto(&vals, &cols, &short_x)),
                panic_message(|| kernels::spmv_ell(&ev, &ec, &short_x)),
            ] {
                // CSR names `gather`, ELL (written with `x[c]`) names `index`.
                assert!(msg.contains("out of range for length 10"), "{place}: {msg}");
            }
            let msg = panic_message(|| kernels::spmv_csr(&vals_other, &cols, &short_x));
            assert!(msg.contains("49") && msg.contains("50"), "{place}: {msg}");
        });
    }
}
