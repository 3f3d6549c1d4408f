//! Errors found on some ranks only are reported alike on every rank (as `Err`, or as the
//! same panic), in every phase of a call, and later calls still work.

use crate::harness::*;
use dpl::Error;

pub const CASES: &[Case] = &[
    ("errors_agreed", errors_agreed),
    ("errors_in_every_phase", errors_in_every_phase),
    ("panics_agreed", panics_agreed),
    ("out_of_memory_agreed", out_of_memory_agreed),
];

mod progs {
    use dpl::prelude::*;

    #[parallel]
    pub fn gather_checked(x: &[f32], idx: &[i64]) -> Result<Vec<f32>, dpl::Error> {
        gather(x, idx)
    }

    #[parallel]
    pub fn quotients(x: &[i32], d: &[i32]) -> Result<Vec<i32>, dpl::Error> {
        map(|a, b| a / b, x, d)
    }

    #[parallel]
    pub fn quotients_or_panic(x: &[i32], d: &[i32]) -> Vec<i32> {
        map(|a, b| a / b, x, d)
    }

    #[parallel]
    pub fn permute_checked(x: &[i32], idx: &[usize]) -> Result<Vec<i32>, dpl::Error> {
        permute(x, idx)
    }

    #[parallel]
    pub fn scatter_checked(
        src: &[i32],
        idx: &[usize],
        dst: &[i32],
    ) -> Result<Vec<i32>, dpl::Error> {
        scatter(src, idx, dst)
    }

    /// The division fails after one reduction, inside another.
    #[parallel]
    pub fn late(x: &[i32], d: &[i32]) -> Result<i32, dpl::Error> {
        let s = sum(x);
        sum(map(|a, b| a / b + s, x, d))
    }

    /// One result per row: 8 bytes per row of the rank's block.
    #[parallel]
    pub fn row_sums(m: &Matrix<f64>) -> Result<Vec<f64>, dpl::Error> {
        map(|r| sum(r), m)
    }

    /// Row sums scaled by their total: the result of the map is materialised before the
    /// reduction's exchange.
    #[parallel]
    pub fn row_shares(m: &Matrix<f64>) -> Result<Vec<f64>, dpl::Error> {
        let s = map(|r| sum(r), m);
        let t = sum(s);
        map(|v| v / t, s)
    }

    /// The division fails after the last communication.
    #[parallel]
    pub fn tail(x: &[i32], d: &[i32]) -> Result<Vec<i32>, dpl::Error> {
        let m = max(x);
        map(|a, b| (a + m) / b, x, d)
    }
}

/// Asserts that every rank has the same error text.
#[track_caller]
fn same_text(e: &Error) {
    let text = e.to_string();
    let h = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    same_everywhere(&text, h);
}

/// Divisors of 1 with zeros at `zeros` (global positions).
fn divisors(n: usize, zeros: &[usize]) -> Vec<i32> {
    (0..n)
        .map(|i| if zeros.contains(&i) { 0 } else { 1 })
        .collect()
}

fn errors_agreed(env: Env) {
    let n = 1001;
    let x: Vec<f32> = (0..n).map(|v| v as f32).collect();
    let xi: Vec<i32> = (0..n as i32).collect();
    for lens in layouts(n, env.size) {
        // Bad indices near the end and in the middle: the first in global order is reported.
        let mut idx: Vec<i64> = (0..n as i64).rev().collect();
        idx[900] = n as i64 + 5;
        idx[400] = -3;
        let e = progs::gather_checked(&block_of(&x, &lens, env), &block_of(&idx, &lens, env))
            .unwrap_err();
        assert!(
            matches!(
                e,
                Error::IndexOutOfRange {
                    prim: "gather",
                    index: -3,
                    len: 1001,
                    ..
                }
            ),
            "{e}"
        );
        same_text(&e);
        let d = divisors(n, &[950, 700]);
        let e =
            progs::quotients(&block_of(&xi, &lens, env), &block_of(&d, &lens, env)).unwrap_err();
        assert!(matches!(e, Error::DivideByZero { .. }), "{e}");
        same_text(&e);
        // Lengths that differ globally (the blocks may agree locally).
        let short = &xi[..n - 1];
        let ls = layouts(n - 1, env.size);
        let e = progs::quotients(&block_of(&xi, &lens, env), &block_of(short, &ls[0], env))
            .unwrap_err();
        assert!(
            matches!(
                e,
                Error::LengthMismatch {
                    left: 1001,
                    right: 1000,
                    ..
                }
            ),
            "{e}"
        );
        same_text(&e);
        let mut p: Vec<usize> = (0..n).collect();
        p[10] = 990;
        let e = progs::permute_checked(&block_of(&xi, &lens, env), &block_of(&p, &lens, env))
            .unwrap_err();
        assert!(matches!(e, Error::NotAPermutation { .. }), "{e}");
        same_text(&e);
        let mut s: Vec<usize> = (0..n).collect();
        s[600] = 5000;
        let e = progs::scatter_checked(
            &block_of(&xi, &lens, env),
            &block_of(&s, &lens, env),
            &block_of(&xi, &lens, env),
        )
        .unwrap_err();
        assert!(
            matches!(
                e,
                Error::IndexOutOfRange {
                    prim: "scatter",
                    index: 5000,
                    len: 1001,
                    ..
                }
            ),
            "{e}"
        );
        same_text(&e);
        // The ranks are still in step: a good call works.
        let good = progs::quotients(
            &block_of(&xi, &lens, env),
            &block_of(&divisors(n, &[]), &lens, env),
        )
        .unwrap();
        check_block("quotients after errors", &good, &xi, &lens, env);
    }
}

fn errors_in_every_phase(env: Env) {
    let n = 1001;
    let x: Vec<i32> = (0..n as i32).collect();
    for lens in layouts(n, env.size) {
        for zero in [0, 500, n - 1] {
            let d = divisors(n, &[zero]);
            let (xb, db) = (block_of(&x, &lens, env), block_of(&d, &lens, env));
            let e = progs::late(&xb, &db).unwrap_err();
            assert!(matches!(e, Error::DivideByZero { .. }), "{e}");
            same_text(&e);
            let e = progs::tail(&xb, &db).unwrap_err();
            assert!(matches!(e, Error::DivideByZero { .. }), "{e}");
            same_text(&e);
        }
        let ok = progs::late(
            &block_of(&x, &lens, env),
            &block_of(&divisors(n, &[]), &lens, env),
        )
        .unwrap();
        let s: i32 = x.iter().sum();
        assert_eq!(
            ok,
            x.iter().fold(0i32, |a, v| a.wrapping_add(v + s)),
            "late after errors"
        );
    }
}

/// A function without `Result` panics with the agreed message on every rank; the job
/// goes on (it is not aborted).
fn panics_agreed(env: Env) {
    let n = 100;
    let x: Vec<i32> = (0..n as i32).collect();
    let d = divisors(n, &[n - 1]);
    for lens in layouts(n, env.size) {
        let (xb, db) = (block_of(&x, &lens, env), block_of(&d, &lens, env));
        let caught = std::panic::catch_unwind(|| progs::quotients_or_panic(&xb, &db)).unwrap_err();
        let msg = caught.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(
            msg.starts_with("attempt to divide by zero (`/`) at "),
            "{msg}"
        );
        let h = msg
            .bytes()
            .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64));
        same_everywhere("panic message", h);
    }
}

/// A block too large to allocate a result for, on the last rank only: every rank returns
/// the same `OutOfMemory`, and the next call works.
fn out_of_memory_agreed(env: Env) {
    let rows = if env.rank == env.size - 1 { 1 << 40 } else { 3 };
    let m = dpl::Matrix::<f64>::row_major(rows, 0, Vec::new()).expect("a valid shape");
    let e = progs::row_sums(&m).unwrap_err();
    assert!(
        matches!(e, Error::OutOfMemory { prim: "map", bytes, .. } if bytes == 8 << 40),
        "{e}"
    );
    same_text(&e);
    let e = progs::row_shares(&m).unwrap_err();
    assert!(matches!(e, Error::OutOfMemory { prim: "map", .. }), "{e}");
    same_text(&e);
    let m = dpl::Matrix::row_major(2, 2, vec![1.0, 2.0, 3.0, 4.0]).expect("a valid shape");
    assert_eq!(progs::row_sums(&m), Ok(vec![3.0, 7.0]));
}
