//! The language around the primitives: closures, nested `fn`s, literals, shadowing, `&x`,
//! indexing, tuples, `-> Result<_, dpl::Error>`, scalar-only bodies, annotations,
//! sequence-valued `if`, returning inputs, and names that could clash with generated code.

use super::*;

/// The programs under test, written in the DSL.
mod prog {
    use dpl::prelude::*;

    #[parallel]
    pub fn closures(x: &[f32], a: f32, b: f32) -> (Vec<f32>, Vec<f32>) {
        let scale = a * 2.0;
        let f = |v| v * scale + b;
        let g = |v: f32| f(v) - 1.0;
        let positive = |v: f32| v > 0.0;
        (map(|v| g(f(v)), x), filter(positive, map(g, x)))
    }

    #[parallel]
    pub fn nested_fns(x: &[f64]) -> Vec<f64> {
        fn sq(v: f64) -> f64 {
            v * v
        }
        fn hyp(p: f64, q: f64) -> f64 {
            (sq(p) + sq(q)).sqrt()
        }
        map(|v| hyp(v, v + 1.0), x)
    }

    #[parallel]
    pub fn literals(x: &[i64]) -> (Vec<i64>, Vec<u32>, Vec<f64>, Vec<f32>) {
        (
            map(|v| v + 1_000i64 - 0x10 + 0b1010 - 0o17, x),
            map(|v| (v as u32) ^ 0xdead_beefu32, x),
            map(|v| v as f64 * 1e3f64 + 2.5e-1, x),
            map(|v| v as f32 * 2.5f32 - 1f32, x),
        )
    }

    #[parallel]
    pub fn shadowing(x: &[i32]) -> Vec<i32> {
        let y = map(|v| v + 1, x);
        let y = map(|v| v * 2, y);
        map(
            |x| {
                let x = x - 1;
                x
            },
            y,
        )
    }

    #[parallel]
    pub fn by_reference(x: &[f32]) -> Vec<f32> {
        let y = map(|v| v + 1.0, &x);
        map(|v, w| v * w, &y, x)
    }

    #[parallel]
    pub fn index_types(
        x: &[f32],
        iu: &[u32],
        ii: &[i32],
        il: &[i64],
        iw: &[u64],
        iz: &[usize],
    ) -> Vec<f32> {
        map(
            |a, b, c, d, e| x[a] + x[b] + x[c] + x[d] + x[e],
            iu,
            ii,
            il,
            iw,
            iz,
        )
    }

    #[parallel]
    pub fn ends(x: &[i32]) -> (i32, i32, i32) {
        (x[0], x[len(x) - 1], x[x.len() / 2])
    }

    #[parallel]
    pub fn neighbours(x: &[f32]) -> Vec<f32> {
        let n = len(x);
        map(|i| x[i] + x[(i + 1) % n] + x[(i + n - 1) % n], indices(x))
    }

    #[parallel]
    pub fn try_gather(x: &[f32], idx: &[u32]) -> Result<Vec<f32>, dpl::Error> {
        gather(x, idx)
    }

    #[parallel]
    pub fn try_min_max(x: &[i64]) -> Result<(i64, i64), Error> {
        (min(x), max(x))
    }

    #[parallel]
    pub fn scalar_only(a: f64, b: f64) -> f64 {
        (a * a + b * b).sqrt()
    }

    #[parallel]
    pub fn branch_on_reduction(x: &[i32]) -> i32 {
        if sum(x) > 0 { max(x) } else { 0 }
    }

    #[parallel]
    pub fn nested_tuples(x: &[f32]) -> Vec<f32> {
        map(
            |v| {
                let t = ((v, v * 2.0), (v + 1.0, 3u32));
                let ((a, b), (c, d)) = t;
                t.0.1 + a + b * c + d as f32
            },
            x,
        )
    }

    #[parallel]
    pub fn seq_nested_fn(x: &[f32]) -> Vec<f32> {
        fn total(v: &[f32]) -> f32 {
            sum(v)
        }
        let t = total(x);
        map(|v| v - t, x)
    }

    #[parallel]
    pub fn literal_index(x: &[u64]) -> (u64, u64) {
        (x[0u32], x[1i64])
    }

    #[parallel]
    pub fn closure_returns_tuple(x: &[f32]) -> Vec<f32> {
        let split = |v: f32| (v.floor(), v - v.floor());
        map(
            |v| {
                let (w, f) = split(v);
                w * 10.0 + f
            },
            x,
        )
    }

    #[parallel]
    pub fn hygiene(i: &[u32], n: usize, f: u32, out: &[u32], rt: u32) -> Vec<u32> {
        map(|idx, o| i[idx] + o * f + rt + n as u32, range(n), out)
    }

    #[parallel]
    pub fn named_like_prims(x: &[f32]) -> (usize, f32) {
        let len = len(x);
        let total = sum(x);
        (len, total)
    }

    #[parallel]
    pub fn dead_code(x: &[f64]) -> Vec<f64> {
        let unused = map(|v| v.sqrt(), x);
        let also_unused = sum(x);
        map(|v| v + 1.0, x)
    }

    #[parallel]
    pub fn annotated(x: &[f32]) -> (Vec<f32>, usize) {
        let y: Vec<f32> = map(|v| v * 2.0, x);
        let n: usize = len(y);
        let f = |v: f32| -> f32 { v + 1.0 };
        (map(f, y), n)
    }

    #[parallel]
    pub fn seq_valued_if(x: &[i32], up: bool) -> Vec<i32> {
        if up {
            map(|v| v + 1, x)
        } else {
            map(|v| v - 1, x)
        }
    }

    #[parallel]
    pub fn identity(x: &[f32]) -> Vec<f32> {
        x
    }

    #[parallel]
    pub fn twice(x: &[u32]) -> (Vec<u32>, Vec<u32>) {
        let y = map(|v| v ^ 1, x);
        (y, y)
    }

    #[parallel]
    pub fn nested_closure(x: &[f32]) -> Vec<f32> {
        map(
            |v| {
                let g = |w: f32| w * v;
                g(2.0) + g(v)
            },
            x,
        )
    }
}

fn closures(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -5.0, 5.0);
        let (a, b) = (0.75f32, -0.25f32);
        let scale = a * 2.0;
        let f = |v: f32| v * scale + b;
        let g = |v: f32| f(v) - 1.0;
        let (twice, kept) = prog::closures(&x, a, b);
        assert_same(&twice, &each(&x, |v| g(f(v))), "closures.0");
        let want: Vec<f32> = x.iter().map(|&v| g(v)).filter(|&v| v > 0.0).collect();
        assert_same(&kept, &want, "closures.1");
    });
}

fn nested_fns(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f64s(n, -1e3, 1e3);
        let want = each(&x, |v| (v * v + (v + 1.0) * (v + 1.0)).sqrt());
        assert_same(&prog::nested_fns(&x), &want, "nested_fns");
    });
}

fn literals(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.vec(n, |r| r.int_in(-1 << 40..=1 << 40));
        let (a, b, c, d) = prog::literals(&x);
        assert_same(
            &a,
            &each(&x, |v| v + 1000 - 16 + 10 - 15),
            "integer literals",
        );
        assert_same(
            &b,
            &each(&x, |v| (v as u32) ^ 0xdead_beef),
            "hex u32 literal",
        );
        assert_same(&c, &each(&x, |v| v as f64 * 1000.0 + 0.25), "f64 literals");
        assert_same(&d, &each(&x, |v| v as f32 * 2.5 - 1.0), "f32 literals");
    });
}

fn shadowing(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i32s(n);
        let want = each(&x, |v| v.wrapping_add(1).wrapping_mul(2).wrapping_sub(1));
        assert_same(&prog::shadowing(&x), &want, "shadowing");
    });
}

fn by_reference(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -3.0, 3.0);
        assert_same(
            &prog::by_reference(&x),
            &each(&x, |v| (v + 1.0) * v),
            "by_reference",
        );
    });
}

fn index_types(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n + 3, -1.0, 1.0);
        let idx: [Vec<usize>; 5] = [(); 5].map(|_| rng.indices(n, n + 3));
        let want: Vec<f32> = (0..n)
            .map(|i| x[idx[0][i]] + x[idx[1][i]] + x[idx[2][i]] + x[idx[3][i]] + x[idx[4][i]])
            .collect();
        let got = prog::index_types(
            &x,
            &cast_indices::<u32>(&idx[0]),
            &cast_indices::<i32>(&idx[1]),
            &cast_indices::<i64>(&idx[2]),
            &cast_indices::<u64>(&idx[3]),
            &idx[4],
        );
        assert_same(&got, &want, "index_types");
    });
}

fn ends(place: Place) {
    each_size(place, &NONEMPTY_SIZES, |n, rng| {
        let x = rng.i32s(n);
        assert_eq!(prog::ends(&x), (x[0], x[n - 1], x[n / 2]), "ends");
    });
}

fn neighbours(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -1.0, 1.0);
        let want: Vec<f32> = (0..n)
            .map(|i| x[i] + x[(i + 1) % n] + x[(i + n - 1) % n])
            .collect();
        assert_same(&prog::neighbours(&x), &want, "neighbours");
    });
}

fn try_gather(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -1.0, 1.0);
        let idx = rng.indices(if n == 0 { 0 } else { n + 1 }, n);
        let want: Vec<f32> = idx.iter().map(|&i| x[i]).collect();
        let got = prog::try_gather(&x, &cast_indices::<u32>(&idx)).expect("indices in range");
        assert_same(&got, &want, "try_gather");
    });
}

fn try_min_max(place: Place) {
    each_size(place, &NONEMPTY_SIZES, |n, rng| {
        let x = rng.i64s(n);
        let want = (*x.iter().min().unwrap(), *x.iter().max().unwrap());
        assert_eq!(prog::try_min_max(&x), Ok(want), "try_min_max");
    });
}

fn scalar_only(place: Place) {
    each_size(place, &[0], |_, rng| {
        for _ in 0..100 {
            let (a, b) = (rng.f64_in(-1e3, 1e3), rng.f64_in(-1e3, 1e3));
            assert_exact(
                prog::scalar_only(a, b),
                (a * a + b * b).sqrt(),
                "scalar_only",
            );
        }
    });
}

fn branch_on_reduction(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.vec(n, |r| r.int_in(-100..=101) as i32);
        // Only the taken branch runs: `max` of an empty input is never evaluated.
        let want = if x.iter().sum::<i32>() > 0 {
            *x.iter().max().unwrap()
        } else {
            0
        };
        assert_exact(prog::branch_on_reduction(&x), want, "branch_on_reduction");
    });
}

fn nested_tuples(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -10.0, 10.0);
        let want = each(&x, |v| v * 2.0 + v + (v * 2.0) * (v + 1.0) + 3.0);
        assert_same(&prog::nested_tuples(&x), &want, "nested_tuples");
    });
}

fn seq_nested_fn(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, 0.0, 1.0);
        let (total, magnitude) = f64_sum(x.iter().copied());
        let got = prog::seq_nested_fn(&x);
        assert_eq!(got.len(), n);
        for (k, (&g, &v)) in got.iter().zip(&x).enumerate() {
            assert_reduced(g, v as f64 - total, magnitude + 1.0, n, &format!("[{k}]"));
        }
    });
}

fn literal_index(place: Place) {
    each_size(place, &[2, 1001], |n, rng| {
        let x = rng.u64s(n);
        assert_exact(prog::literal_index(&x), (x[0], x[1]), "literal_index");
    });
}

fn closure_returns_tuple(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -100.0, 100.0);
        let want = each(&x, |v| v.floor() * 10.0 + (v - v.floor()));
        assert_same(
            &prog::closure_returns_tuple(&x),
            &want,
            "closure_returns_tuple",
        );
    });
}

fn hygiene(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (i, out) = (rng.u32s(n + 5), rng.u32s(n));
        let (f, rt) = (3u32, u32::MAX - 4);
        let want: Vec<u32> = (0..n)
            .map(|k| {
                i[k].wrapping_add(out[k].wrapping_mul(f))
                    .wrapping_add(rt)
                    .wrapping_add(n as u32)
            })
            .collect();
        assert_same(&prog::hygiene(&i, n, f, &out, rt), &want, "hygiene");
    });
}

fn named_like_prims(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -1.0, 1.0);
        let (len, total) = prog::named_like_prims(&x);
        assert_eq!(len, n, "len");
        let (want, magnitude) = f64_sum(x.iter().copied());
        assert_reduced(total, want, magnitude, n, "total");
    });
}

fn dead_code(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f64s(n, -1.0, 1.0);
        assert_same(&prog::dead_code(&x), &each(&x, |v| v + 1.0), "dead_code");
    });
}

fn annotated(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -10.0, 10.0);
        let (y, len) = prog::annotated(&x);
        assert_same(&y, &each(&x, |v| v * 2.0 + 1.0), "annotated");
        assert_eq!(len, n);
    });
}

fn seq_valued_if(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i32s(n);
        assert_same(
            &prog::seq_valued_if(&x, true),
            &each(&x, |v| v.wrapping_add(1)),
            "then",
        );
        assert_same(
            &prog::seq_valued_if(&x, false),
            &each(&x, |v| v.wrapping_sub(1)),
            "else",
        );
    });
}

fn identity(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -1.0, 1.0);
        assert_same(&prog::identity(&x), &x, "identity");
    });
}

fn twice(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.u32s(n);
        let (a, b) = prog::twice(&x);
        let want = each(&x, |v| v ^ 1);
        assert_same(&a, &want, "twice.0");
        assert_same(&b, &want, "twice.1");
    });
}

fn nested_closure(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -10.0, 10.0);
        assert_same(
            &prog::nested_closure(&x),
            &each(&x, |v| 2.0 * v + v * v),
            "nested_closure",
        );
    });
}

on_every_place!(
    closures,
    nested_fns,
    literals,
    shadowing,
    by_reference,
    index_types,
    ends,
    neighbours,
    try_gather,
    try_min_max,
    scalar_only,
    branch_on_reduction,
    nested_tuples,
    seq_nested_fn,
    literal_index,
    closure_returns_tuple,
    hygiene,
    named_like_prims,
    dead_code,
    annotated,
    seq_valued_if,
    identity,
    twice,
    nested_closure,
);
