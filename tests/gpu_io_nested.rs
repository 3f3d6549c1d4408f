//! Nested sequences crossing between the host and `Place::Sim` as typed bytes: a
//! `Nested<T>` argument goes to the device as its offsets plus one byte column per scalar
//! leaf of `T`, and a ragged result (`-> Nested<T>`) comes back the same way. Checked for
//! scalars and tuples, empty rows, no rows and one huge row, against plain Rust and
//! `Place::Seq`; the bytes moved are exactly the offsets and the leaves (shared offsets
//! once); the device copies made for one call are freed when it ends, also when it fails.
#![cfg(feature = "sim")]

use dpl::prelude::*;
use std::sync::Mutex;

/// The transfer counters and the device's memory are per process: one test at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

#[parallel]
fn id_i32(x: &Nested<i32>) -> Nested<i32> {
    x
}

#[parallel]
fn sums_i32(x: &Nested<i32>) -> Vec<i32> {
    map(|r| sum(r), x)
}

#[parallel]
fn affine_f64(x: &Nested<f64>, a: f64, b: f64) -> Nested<f64> {
    map(|r| map(|v| v * a + b, r), x)
}

#[parallel]
fn swap_pairs(x: &Nested<(u32, f32)>) -> Nested<(f32, u32)> {
    map(|r| map(|p| (p.1, p.0), r), x)
}

#[parallel]
fn pair_sums(x: &Nested<(u32, f32)>) -> (Vec<u32>, Vec<f32>) {
    (
        map(|r| sum(map(|p| p.0, r)), x),
        map(|r| sum(map(|p| p.1, r)), x),
    )
}

#[parallel]
fn not_rows(x: &Nested<bool>) -> (Nested<bool>, Vec<usize>) {
    (map(|r| map(|b| !b, r), x), map(|r| count(|b| b, r), x))
}

#[parallel]
fn positives(x: &Nested<i32>) -> Nested<i32> {
    map(|r| filter(|v| v > 0, r), x)
}

#[parallel]
fn row_dots(a: &Nested<f32>, b: &Nested<f32>) -> Vec<f32> {
    map(|x, y| sum(map(|p, q| p * q, x, y)), a, b)
}

#[parallel]
fn gather_rows(idx: &Nested<u32>, x: &[f32]) -> Result<Nested<f32>, dpl::Error> {
    map(|r| gather(x, r), idx)
}

#[parallel]
fn row_count(x: &Nested<f32>) -> usize {
    len(x)
}

#[parallel]
fn id_f32(x: &Nested<f32>) -> Nested<f32> {
    x
}

/// Runs `f` on `Place::Sim` and on `Place::Seq`; both must agree, and the result is
/// returned.
fn sim_and_seq<R: PartialEq + std::fmt::Debug>(f: impl Fn() -> R) -> R {
    let sim = with_place(Place::Sim, &f);
    let seq = with_place(Place::Seq, &f);
    assert_eq!(sim, seq, "Place::Sim and Place::Seq disagree");
    sim
}

/// Row lengths of the shapes tested: no rows, empty rows only, a mix with empty rows
/// (first, middle and last), many short rows, and one huge row.
fn shapes() -> Vec<Vec<usize>> {
    vec![
        vec![],
        vec![0, 0, 0],
        vec![0, 3, 0, 0, 1, 7, 0],
        (0..3000).map(|i| (i * 7) % 11).collect(),
        vec![70_000],
    ]
}

fn nested<T>(lens: &[usize], mut f: impl FnMut(usize, usize) -> T) -> Nested<T> {
    Nested::from_rows(lens.iter().enumerate().map(|(r, &n)| {
        let row: Vec<T> = (0..n).map(|j| f(r, j)).collect();
        row
    }))
}

/// The rows of `x` mapped element-wise by `f` (plain Rust).
fn map_rows<T, U>(x: &Nested<T>, f: impl Fn(&T) -> U) -> Vec<Vec<U>> {
    x.rows().map(|r| r.iter().map(&f).collect()).collect()
}

#[test]
fn scalar_rows_round_trip() {
    let _s = serial();
    for lens in shapes() {
        let x = nested(&lens, |r, j| (r as i32 * 31 - j as i32 * 7) % 1000 - 400);
        let got = sim_and_seq(|| id_i32(&x));
        assert_eq!(got, x, "{} rows", lens.len());
        let sums = sim_and_seq(|| sums_i32(&x));
        let want: Vec<i32> = x.rows().map(|r| r.iter().sum()).collect();
        assert_eq!(sums, want, "{} rows", lens.len());
        let pos = sim_and_seq(|| positives(&x));
        let want: Vec<Vec<i32>> = x
            .rows()
            .map(|r| r.iter().copied().filter(|&v| v > 0).collect())
            .collect();
        assert_eq!(pos.to_vecs(), want, "{} rows", lens.len());

        // Exactly representable values: the affine map is exact in f64.
        let y = nested(&lens, |r, j| (r * 3 + j) as f64 * 0.25 - 8.0);
        let got = sim_and_seq(|| affine_f64(&y, -2.0, 0.5));
        assert_eq!(got.to_vecs(), map_rows(&y, |v| v * -2.0 + 0.5));
        assert_eq!(got.offsets(), y.offsets());
    }
}

#[test]
fn tuple_and_bool_rows_round_trip() {
    let _s = serial();
    for lens in shapes() {
        let p = nested(&lens, |r, j| {
            ((r * 5 + j) as u32, (j % 9) as f32 * 0.5 - 1.0)
        });
        let got = sim_and_seq(|| swap_pairs(&p));
        assert_eq!(got.to_vecs(), map_rows(&p, |&(a, b)| (b, a)));
        let (s0, s1) = sim_and_seq(|| pair_sums(&p));
        let want0: Vec<u32> = p.rows().map(|r| r.iter().map(|q| q.0).sum()).collect();
        assert_eq!(s0, want0);
        // Halves of small integers: exact in any order.
        let want1: Vec<f32> = p.rows().map(|r| r.iter().map(|q| q.1).sum()).collect();
        assert_eq!(s1, want1);

        let b = nested(&lens, |r, j| (r + j) % 3 == 0);
        let (nb, counts) = sim_and_seq(|| not_rows(&b));
        assert_eq!(nb.to_vecs(), map_rows(&b, |v| !v));
        let want: Vec<usize> = b.rows().map(|r| r.iter().filter(|&&v| v).count()).collect();
        assert_eq!(counts, want);
    }
}

#[test]
fn bytes_moved_are_offsets_and_leaves() {
    let _s = serial();
    let x = nested(&[3, 0, 5, 2], |r, j| (r * 10 + j) as i32);
    let (rows, total) = (x.len() as u64, x.total_len() as u64);
    let before = dpl::transfers(Place::Sim);
    let s = with_place(Place::Sim, || sums_i32(&x));
    let after = dpl::transfers(Place::Sim);
    assert_eq!(s, vec![3, 0, 110, 61]);
    // The offsets (8 bytes each) and one column of 4-byte values, one copy each.
    assert_eq!(
        after.to_device_bytes - before.to_device_bytes,
        8 * (rows + 1) + 4 * total
    );
    assert_eq!(after.to_device - before.to_device, 2);

    let p = nested(&[2, 4], |r, j| ((r + j) as u32, j as f32));
    let before = dpl::transfers(Place::Sim);
    let got = with_place(Place::Sim, || swap_pairs(&p));
    let after = dpl::transfers(Place::Sim);
    assert_eq!(got.to_vecs(), map_rows(&p, |&(a, b)| (b, a)));
    // Up: offsets and two leaf columns. Down: the same, plus small reads (the total).
    assert_eq!(
        after.to_device_bytes - before.to_device_bytes,
        8 * 3 + 8 * 6
    );
    assert_eq!(after.to_device - before.to_device, 3);
    assert!(after.to_host_bytes - before.to_host_bytes >= 8 * 3 + 8 * 6);
}

#[test]
fn shared_offsets_are_uploaded_once() {
    let _s = serial();
    let a = nested(&[4, 0, 9, 1, 6], |r, j| (r + j) as f32);
    let b = a.map_values(|v| v * 0.5 - 1.0);
    assert!(a.same_offsets(&b));
    let (rows, total) = (a.len() as u64, a.total_len() as u64);
    for (what, second) in [("shared", &b), ("the same Nested", &a)] {
        // Small integers and halves: exact in any order.
        let want: Vec<f32> = a
            .rows()
            .zip(second.rows())
            .map(|(x, y)| x.iter().zip(y).map(|(p, q)| p * q).sum())
            .collect();
        let before = dpl::transfers(Place::Sim);
        let got = with_place(Place::Sim, || row_dots(&a, second));
        let after = dpl::transfers(Place::Sim);
        assert_eq!(got, want, "{what}");
        // One copy of the offsets, two of 4-byte values.
        assert_eq!(
            after.to_device_bytes - before.to_device_bytes,
            8 * (rows + 1) + 2 * 4 * total,
            "{what}"
        );
        assert_eq!(after.to_device - before.to_device, 3, "{what}");
    }
    // Offsets that differ are each uploaded (and the rows' lengths then compared).
    let c = nested(&[4, 0, 9, 1, 5], |_, _| 1.0f32);
    let before = dpl::transfers(Place::Sim);
    let r = std::panic::catch_unwind(|| with_place(Place::Sim, || row_dots(&a, &c)));
    let after = dpl::transfers(Place::Sim);
    assert!(r.is_err(), "rows of different lengths must be rejected");
    assert!(after.to_device_bytes - before.to_device_bytes >= 2 * 8 * (rows + 1));
}

#[test]
fn call_copies_are_freed() {
    let _s = serial();
    let x: Vec<f32> = (0..5000).map(|i| i as f32 * 0.5).collect();
    let lens: Vec<usize> = (0..600).map(|i| (i * 13) % 17).collect();
    let idx = nested(&lens, |r, j| ((r * 131 + j * 7) % 5000) as u32);
    let want: Vec<Vec<f32>> = map_rows(&idx, |&i| x[i as usize]);
    // Warm up (module loads), then the device memory in use must not grow with calls.
    let _ = with_place(Place::Sim, || gather_rows(&idx, &x));
    let y = nested(&[5, 0, 2], |r, j| (r + j) as i32);
    let _ = with_place(Place::Sim, || (id_i32(&y), sums_i32(&y)));
    let base = dpl::__private::gpu::sim_memory_used();
    for _ in 0..3 {
        let got = with_place(Place::Sim, || gather_rows(&idx, &x)).expect("indices in range");
        assert_eq!(got.to_vecs(), want);
        assert_eq!(with_place(Place::Sim, || id_i32(&y)), y);
        let want_sums: Vec<i32> = y.rows().map(|r| r.iter().sum()).collect();
        assert_eq!(with_place(Place::Sim, || sums_i32(&y)), want_sums);
    }
    assert_eq!(dpl::__private::gpu::sim_memory_used(), base);
    // A failing call (an index out of range inside a row) frees its copies too, and
    // reports the same error as the sequential reference.
    let mut bad = idx.clone();
    let at = bad.offsets()[300] + 3;
    bad.values_mut()[at] = 5000;
    for _ in 0..3 {
        let e = with_place(Place::Sim, || gather_rows(&bad, &x)).expect_err("5000 is out of range");
        let reference = with_place(Place::Seq, || gather_rows(&bad, &x)).expect_err("same");
        assert_eq!(e.to_string(), reference.to_string());
        assert!(e.to_string().contains("gather"), "{e}");
    }
    assert_eq!(dpl::__private::gpu::sim_memory_used(), base);
}

/// Not a test: the times of moving a `Nested<f32>` of 2^20 values in 2^16 rows to the
/// device and of reading a ragged result of that size back (minimum of 7 calls each),
/// printed for dpl-cuda/README.md. Run with
/// `cargo test --release --features dpl/sim --test gpu_io_nested -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement, not a check"]
fn transfer_times() {
    let _s = serial();
    // 2^16 rows of 8 to 24 values, 16 on average: about 2^20 values.
    let rows = 1usize << 16;
    let lens: Vec<usize> = (0..rows).map(|i| 8 + (i * 37) % 17).collect();
    let x = nested(&lens, |r, j| (r ^ j) as f32);
    let min_of = |f: &dyn Fn()| {
        (0..7)
            .map(|_| {
                let t = std::time::Instant::now();
                f();
                t.elapsed()
            })
            .min()
            .unwrap_or_default()
    };
    with_place(Place::Sim, || {
        assert_eq!(row_count(&x), rows);
        assert_eq!(id_f32(&x), x);
        let up = min_of(&|| assert_eq!(row_count(&x), rows));
        let both = min_of(&|| assert_eq!(id_f32(&x).total_len(), x.total_len()));
        println!(
            "Nested<f32>: {} values in {} rows: upload (call of len(x)) {:.2} ms, \
             upload + read back (call of x -> Nested) {:.2} ms, read back {:.2} ms",
            x.total_len(),
            x.len(),
            up.as_secs_f64() * 1e3,
            both.as_secs_f64() * 1e3,
            both.saturating_sub(up).as_secs_f64() * 1e3
        );
    });
}
