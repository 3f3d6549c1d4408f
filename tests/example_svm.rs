//! The SVM example (`examples/svm.rs`) on small data (1,000 points x 8 features): its
//! `#[parallel]` kernel row, selection and decision functions against plain Rust written
//! here, on every place, and SMO training with the dpl engine on every place against the
//! plain-Rust SMO, whose result is itself checked against the KKT conditions.

#[path = "../examples/svm.rs"]
#[allow(dead_code)]
mod svm;

use dpl::prelude::*;
use svm::{Dpl, Engine, Model, Params, Rayon, Sequential, Stop};

const N: usize = 1_000;
const D: usize = 8;

fn data() -> (Matrix<f32>, Vec<f32>) {
    svm::blobs(N, D, 2.5, 11)
}

fn params() -> Params {
    svm::default_params(D)
}

/// Whether `place` computes `exp` with the host's libm, as the plain-Rust code does. The GPU
/// places use dpl's own correctly rounded `exp` (dpl-cuda's README), which differs from
/// glibc's `expf` by one ulp on about 0.06% of inputs; there results agree within a few
/// ulp instead of bit for bit, and SMO may take slightly different steps.
fn host_libm(place: Place) -> bool {
    matches!(place, Place::Seq | Place::Cpu)
}

/// The distance in units in the last place between two finite `f32`s of the same sign.
fn ulps(a: f32, b: f32) -> u32 {
    a.to_bits().abs_diff(b.to_bits())
}

fn each_place(mut f: impl FnMut(Place)) {
    let places = dpl::available_places();
    assert!(places.contains(&Place::Seq) && places.contains(&Place::Cpu));
    for p in places {
        with_place(p, || f(p));
    }
}

/// `exp(ngamma * |a - b|^2)` in f64.
fn rbf64(ngamma: f32, a: &[f32], b: &[f32]) -> f64 {
    let d2: f64 = a
        .iter()
        .zip(b)
        .map(|(&p, &q)| (p as f64 - q as f64).powi(2))
        .sum();
    (ngamma as f64 * d2).exp()
}

#[test]
fn kernel_rows_match_plain_rust_on_every_place() {
    let (points, _) = data();
    let p = params();
    let outside: Vec<f32> = (0..D).map(|j| j as f32 * 0.3 - 1.0).collect();
    let xs: Vec<Vec<f32>> = [0, 17, N - 1]
        .iter()
        .map(|&i| points.row(i).to_vec())
        .chain([outside])
        .collect();
    for x in &xs {
        let want: Vec<f64> = (0..N)
            .map(|i| rbf64(p.ngamma, &points.row(i).to_vec(), x))
            .collect();
        let plain = Sequential.kernel_row(p.ngamma, &points, x);
        let rayon = Rayon.kernel_row(p.ngamma, &points, x);
        // dpl adds in its one order (dpl_testkit::order), not left to right.
        let ordered: Vec<f32> = (0..N)
            .map(|i| {
                let d2: Vec<f32> = points
                    .row(i)
                    .iter()
                    .zip(x)
                    .map(|(a, b)| (a - b) * (a - b))
                    .collect();
                (p.ngamma * (-0.0 + dpl_testkit::order::ordered(&d2, |a, b| a + b).unwrap())).exp()
            })
            .collect();
        assert_eq!(plain, rayon, "the two baselines compute the same floats");
        each_place(|place| {
            let got = svm::kernel_row(p.ngamma, &points, x);
            assert_eq!(got.len(), N, "{place}");
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!(
                    (*g as f64 - w).abs() <= 1e-5,
                    "{place}: K[{i}] = {g}, want {w}"
                );
            }
            // The same sum in the same order, then the same exp: the ordered plain-Rust row
            // exactly (within 2 ulp where `exp` is not the host's).
            if host_libm(place) {
                assert_eq!(
                    got, ordered,
                    "{place}: bit-equal to the plain-Rust kernel row summed in dpl's order"
                );
            } else {
                for (i, (g, q)) in got.iter().zip(&ordered).enumerate() {
                    assert!(ulps(*g, *q) <= 2, "{place}: K[{i}] = {g} vs plain {q}");
                }
            }
        });
    }
    // A point's kernel value with itself is exactly 1.
    let k = svm::kernel_row(p.ngamma, &points, &xs[1]);
    assert_eq!(k[17], 1.0);
}

#[test]
fn kernel_row_edge_cases() {
    let p = params();
    let empty = Matrix::row_major(0, D, Vec::<f32>::new()).unwrap();
    let x = vec![0.0f32; D];
    let one = Matrix::row_major(1, D, vec![1.0f32; D]).unwrap();
    each_place(|place| {
        assert!(svm::kernel_row(p.ngamma, &empty, &x).is_empty(), "{place}");
        let k = svm::kernel_row(p.ngamma, &one, &x);
        assert_eq!(k.len(), 1, "{place}");
        assert!(
            (k[0] as f64 - (p.ngamma as f64 * D as f64).exp()).abs() < 1e-6,
            "{place}"
        );
    });
}

#[test]
fn kernel_row_rejects_a_point_of_another_dimension() {
    let (points, _) = data();
    for place in [Place::Seq, Place::Cpu] {
        let r = std::panic::catch_unwind(|| {
            with_place(place, || svm::kernel_row(-0.1, &points, &[0.0; D + 1]))
        });
        let msg = r.expect_err("a length mismatch must panic");
        let text = msg.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(
            text.contains("map"),
            "{place}: the message names the primitive: {text:?}"
        );
    }
}

/// The selection written here the obvious way: scan everything, keep the first extreme.
fn select_plain(f: &[f32], alpha: &[f32], y: &[f32], c: f32) -> svm::Selection {
    let n = f.len();
    let up = |i: usize| (y[i] > 0.0 && alpha[i] < c) || (y[i] < 0.0 && alpha[i] > 0.0);
    let low = |i: usize| (y[i] > 0.0 && alpha[i] > 0.0) || (y[i] < 0.0 && alpha[i] < c);
    let mut high = (f32::INFINITY, n);
    let mut lo = (f32::NEG_INFINITY, n);
    for (i, &fi) in f.iter().enumerate() {
        if up(i) && (high.1 == n || fi < high.0) {
            high = (fi, i);
        }
        if low(i) && (lo.1 == n || fi > lo.0) {
            lo = (fi, i);
        }
    }
    (high, lo)
}

#[test]
fn selection_matches_plain_rust_with_ties_and_bounds() {
    let mut rng = dpl_testkit::SplitMix64::new(5);
    for n in [0usize, 1, 2, 7, 1001, 20_000] {
        // Few distinct values so ties are common; alphas on both bounds and inside.
        let f: Vec<f32> = (0..n).map(|_| (rng.u64() % 9) as f32 - 4.0).collect();
        let y: Vec<f32> = (0..n)
            .map(|_| {
                if rng.u64().is_multiple_of(2) {
                    1.0
                } else {
                    -1.0
                }
            })
            .collect();
        let alpha: Vec<f32> = (0..n)
            .map(|_| [0.0, 0.5, 1.0][(rng.u64() % 3) as usize])
            .collect();
        let want = select_plain(&f, &alpha, &y, 1.0);
        assert_eq!(Sequential.select(&f, &alpha, &y, 1.0), want, "n = {n}");
        assert_eq!(Rayon.select(&f, &alpha, &y, 1.0), want, "n = {n}");
        each_place(|place| assert_eq!(svm::select(&f, &alpha, &y, 1.0), want, "{place}, n = {n}"));
    }
    // Every alpha on the bound that takes it out of I_up: that set is empty.
    let (f, y, alpha) = (vec![0.5f32, -0.5], vec![1.0f32, -1.0], vec![1.0f32, 0.0]);
    each_place(|place| {
        let ((b_high, high), (b_low, low)) = svm::select(&f, &alpha, &y, 1.0);
        assert_eq!((b_high, high), (f32::INFINITY, 2), "{place}");
        assert_eq!((b_low, low), (0.5, 0), "{place}");
    });
}

#[test]
fn update_f_matches_plain_rust() {
    let f: Vec<f32> = (0..1003).map(|i| (i % 17) as f32 * 0.25 - 2.0).collect();
    let kh: Vec<f32> = (0..1003).map(|i| 1.0 / (1.0 + i as f32)).collect();
    let kl: Vec<f32> = (0..1003).map(|i| ((i * 7) % 13) as f32 / 13.0).collect();
    let want: Vec<f32> = (0..1003)
        .map(|i| f[i] + 0.75 * kh[i] + -0.5 * kl[i])
        .collect();
    each_place(|place| assert_eq!(svm::update_f(&f, &kh, &kl, 0.75, -0.5), want, "{place}"));
}

/// Checks that `m` solves the dual problem to the tolerance, recomputing `f` from the alphas
/// in f64 (independent of the incremental updates training did).
fn assert_kkt(m: &Model, points: &Matrix<f32>, y: &[f32], p: Params) {
    assert_eq!(m.stop, Stop::Converged);
    let n = y.len();
    assert!(
        m.alpha.iter().all(|&a| (0.0..=p.c).contains(&a)),
        "box constraints"
    );
    let balance: f64 = m
        .alpha
        .iter()
        .zip(y)
        .map(|(&a, &yi)| a as f64 * yi as f64)
        .sum();
    assert!(balance.abs() < 1e-3, "sum alpha_i y_i = {balance}");
    let rows: Vec<Vec<f32>> = points.to_row_vecs();
    let sv: Vec<usize> = (0..n).filter(|&j| m.alpha[j] > 0.0).collect();
    let f: Vec<f64> = (0..n)
        .map(|i| {
            sv.iter()
                .map(|&j| m.alpha[j] as f64 * y[j] as f64 * rbf64(p.ngamma, &rows[i], &rows[j]))
                .sum::<f64>()
                - y[i] as f64
        })
        .collect();
    let drift = f
        .iter()
        .zip(&m.f)
        .map(|(a, &b)| (a - b as f64).abs())
        .fold(0.0, f64::max);
    assert!(
        drift < 1e-3,
        "incremental f drifted {drift} from the recomputed f"
    );
    let c = p.c;
    let b_high = (0..n)
        .filter(|&i| (y[i] > 0.0 && m.alpha[i] < c) || (y[i] < 0.0 && m.alpha[i] > 0.0))
        .map(|i| f[i])
        .fold(f64::INFINITY, f64::min);
    let b_low = (0..n)
        .filter(|&i| (y[i] > 0.0 && m.alpha[i] > 0.0) || (y[i] < 0.0 && m.alpha[i] < c))
        .map(|i| f[i])
        .fold(f64::NEG_INFINITY, f64::max);
    assert!(
        b_low - b_high <= 2.0 * p.tol as f64 + 2e-3,
        "KKT gap {} with recomputed f",
        b_low - b_high
    );
}

#[test]
fn plain_smo_solves_the_dual_problem() {
    let (points, y) = data();
    let p = params();
    let m = svm::train(&Sequential, &points, &y, p);
    assert_kkt(&m, &points, &y, p);
    assert!(
        m.iterations > 100,
        "a real optimization: {} iterations",
        m.iterations
    );
    let acc = m.training_accuracy(&y);
    assert!(acc > 0.85, "training accuracy {acc}");
    // Held-out data from the same distribution (Bayes accuracy about 89%).
    let (test, y_test) = svm::blobs(500, D, 2.5, 12);
    let (svs, coef) = m.support(&points, &y);
    let acc_test = svm::accuracy(&svm::decision(p.ngamma, &test, &svs, &coef, m.b), &y_test);
    assert!(acc_test > 0.8, "held-out accuracy {acc_test}");
}

#[test]
fn dpl_smo_agrees_with_plain_rust_on_every_place() {
    let (points, y) = data();
    let p = params();
    let reference = svm::train(&Sequential, &points, &y, p);
    let check = |m: &Model, who: &str| {
        // Tolerances: iterations within 1% (+2), support vectors within 1% (+2), training
        // accuracy within 1 percentage point. In practice the engines agree exactly (same
        // floats in the same order), which the last assertion records.
        let it_tol = reference.iterations / 100 + 2;
        assert!(
            m.iterations.abs_diff(reference.iterations) <= it_tol,
            "{who}: {} vs {} iterations",
            m.iterations,
            reference.iterations
        );
        let sv_tol = reference.support_vectors() / 100 + 2;
        assert!(
            m.support_vectors().abs_diff(reference.support_vectors()) <= sv_tol,
            "{who}: support vectors"
        );
        assert!(
            (m.training_accuracy(&y) - reference.training_accuracy(&y)).abs() <= 0.01,
            "{who}: accuracy"
        );
        assert_eq!(m.stop, Stop::Converged, "{who}");
    };
    let rayon = svm::train(&Rayon, &points, &y, p);
    check(&rayon, "rayon");
    assert_eq!(
        rayon, reference,
        "rayon: bit-identical to the plain-Rust SMO"
    );
    each_place(|place| {
        let m = svm::train(&Dpl, &points, &y, p);
        let who = format!("dpl on {place}");
        // Not bit-identical to the plain-Rust SMO: dpl's kernel rows add in its one order.
        check(&m, &who);
    });
}

#[test]
fn fixed_iteration_training_stops_at_max_iter() {
    let (points, y) = data();
    let p = Params {
        max_iter: 25,
        tol: 0.0,
        ..params()
    };
    let want = svm::train(&Sequential, &points, &y, p);
    assert_eq!((want.iterations, want.stop), (25, Stop::MaxIter));
    each_place(|place| {
        let m = svm::train(&Dpl, &points, &y, p);
        assert_eq!(
            (m.iterations, m.stop),
            (want.iterations, want.stop),
            "{place}"
        );
        assert!(
            (m.training_accuracy(&y) - want.training_accuracy(&y)).abs() <= 0.01,
            "{place}: accuracy"
        );
    });
}

#[test]
fn decision_matches_plain_rust_on_every_place() {
    let (points, y) = data();
    let p = params();
    let m = svm::train(&Sequential, &points, &y, Params { max_iter: 200, ..p });
    let (svs, coef) = m.support(&points, &y);
    let (test, _) = svm::blobs(101, D, 2.5, 13);
    let sv_rows = svs.to_row_vecs();
    let want: Vec<f64> = test
        .to_row_vecs()
        .iter()
        .map(|x| {
            sv_rows
                .iter()
                .zip(&coef)
                .map(|(s, &c)| c as f64 * rbf64(p.ngamma, x, s))
                .sum::<f64>()
                - m.b as f64
        })
        .collect();
    each_place(|place| {
        let got = svm::decision(p.ngamma, &test, &svs, &coef, m.b);
        assert_eq!(got.len(), want.len(), "{place}");
        for (g, w) in got.iter().zip(&want) {
            assert!(
                (*g as f64 - w).abs() <= 1e-4 * w.abs().max(1.0),
                "{place}: {g} vs {w}"
            );
        }
    });
}

#[test]
fn training_on_one_class_stops_at_once() {
    let (points, _) = data();
    let y = vec![1.0f32; N];
    each_place(|place| {
        let m = svm::train(&Dpl, &points, &y, params());
        assert_eq!(
            (m.iterations, m.stop, m.support_vectors()),
            (0, Stop::Converged, 0),
            "{place}"
        );
    });
}

#[test]
#[should_panic(expected = "labels must be +1.0 or -1.0")]
fn training_rejects_other_labels() {
    let (points, mut y) = data();
    y[3] = 0.0;
    svm::train(&Sequential, &points, &y, params());
}
