//! `#[parallel] mod`: calls between the functions of a module, in any order.

use super::*;

/// The programs under test, written in the DSL.
mod prog {
    use dpl::prelude::*;

    #[parallel]
    pub mod ordered {
        pub fn first(x: &[f64]) -> Result<f64, dpl::Error> {
            second(x) + 1.0
        }

        pub fn second(x: &[f64]) -> f64 {
            max(third(x))
        }

        pub fn third(x: &[f64]) -> Vec<f64> {
            map(|v| v * v, x)
        }
    }

    #[parallel]
    pub mod linalg {
        pub fn dot(a: &[f32], b: &[f32]) -> f32 {
            sum(map(|x, y| x * y, a, b))
        }

        pub fn norm(a: &[f32]) -> f32 {
            dot(a, a).sqrt()
        }

        pub fn normalize(a: &[f32]) -> Vec<f32> {
            let n = norm(a);
            map(|v| v / n, a)
        }

        pub fn scale(a: &[f32], s: f32) -> Vec<f32> {
            map(|v| v * s, a)
        }

        pub fn scaled_sum(a: &[f32], s: f32) -> f32 {
            sum(scale(a, s))
        }
    }
}

fn module_calls(place: Place) {
    use prog::linalg;
    each_size(place, &ALL_SIZES, |n, rng| {
        let (a, b) = (rng.f32s(n, -1.0, 1.0), rng.f32s(n, -1.0, 1.0));
        let (dot, dot_magnitude) = f64_sum(zip_with(&a, &b, |p, q| p * q));
        assert_reduced(linalg::dot(&a, &b), dot, dot_magnitude, n, "dot");
        let (sq, sq_magnitude) = f64_sum(each(&a, |p| p * p));
        let norm = linalg::norm(&a);
        assert_reduced(norm * norm, sq, sq_magnitude, n, "norm");
        if n > 0 {
            let unit = linalg::normalize(&a);
            let want = each(&a, |v| v as f64 / sq.sqrt());
            for (k, (&g, &w)) in unit.iter().zip(&want).enumerate() {
                assert_reduced(g, w, w.abs(), n, &format!("normalize[{k}]"));
            }
        }
        assert_same(&linalg::scale(&a, 3.0), &each(&a, |v| v * 3.0), "scale");
        let (sum3, sum3_magnitude) = f64_sum(each(&a, |v| v * 3.0));
        assert_reduced(
            linalg::scaled_sum(&a, 3.0),
            sum3,
            sum3_magnitude,
            n,
            "scaled_sum",
        );
    });
}

fn module_order(place: Place) {
    use prog::ordered;
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f64s(n, -3.0, 3.0);
        let squares = each(&x, |v| v * v);
        assert_same(&ordered::third(&x), &squares, "third");
        match squares.iter().copied().reduce(f64::max) {
            Some(m) => {
                assert_exact(ordered::second(&x), m, "second");
                assert_eq!(ordered::first(&x), Ok(m + 1.0), "first");
            }
            None => assert!(matches!(
                ordered::first(&x),
                Err(dpl::Error::Empty { prim: "max", .. })
            )),
        }
    });
}

on_every_place!(module_calls, module_order,);
