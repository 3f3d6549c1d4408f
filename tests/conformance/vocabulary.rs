//! The rest of the everyday vocabulary (the README's language list): `reverse`,
//! `range(a, b)`, `concat`, `x.to_vec()`, `const` items, `match`, `powi`,
//! `argmin`/`argmax`, slices, `zip` of up to 8 sequences, `flatten` and `Matrix`
//! results, each checked against plain Rust on every place.

use super::*;

/// The programs under test, written in the DSL.
mod prog {
    use dpl::prelude::*;

    #[parallel]
    pub fn reverse_f32(x: &[f32]) -> Vec<f32> {
        reverse(x)
    }

    /// A reverse of a computed sequence, read by a reduction: one loop.
    #[parallel]
    pub fn reverse_weighted(x: &[i64]) -> (Vec<i64>, i64) {
        let r = reverse(map(|v| v * 3 - 1, x));
        (r, sum(map(|v, i| v * (i as i64), r, indices(r))))
    }

    #[parallel]
    pub fn reverse_twice(x: &[u32]) -> Vec<u32> {
        reverse(reverse(x))
    }

    #[parallel]
    pub fn range_between(a: usize, b: usize) -> Vec<usize> {
        range(a, b)
    }

    #[parallel]
    pub fn range_window(x: &[u64], from: usize) -> Vec<u64> {
        gather(x, range(from, len(x)))
    }

    #[parallel]
    pub fn concat_u32(a: &[u32], b: &[u32]) -> Vec<u32> {
        concat(a, b)
    }

    /// A concatenation of computed sequences (one of them filtered), summed.
    #[parallel]
    pub fn concat_computed(a: &[i32], b: &[i32]) -> (Vec<i32>, i64) {
        let c = concat(map(|v| v / 2, a), filter(|v| v % 3 == 0, b));
        (c, sum(map(|v| v as i64, c)))
    }

    #[parallel]
    pub fn to_vec_then_map(x: &[f64]) -> Vec<f64> {
        let y = x.to_vec();
        map(|v| v * 0.5, y)
    }

    #[parallel]
    pub fn consts(x: &[f32]) -> Vec<f32> {
        const SCALE: f32 = 2.5;
        const SHIFT: usize = 3;
        const BOTH: (f32, i32) = (SCALE * 2.0, -4);
        fn shift(v: f32) -> f32 {
            v + SHIFT as f32
        }
        map(
            |v| {
                const HALF: f32 = 0.5;
                shift(v * SCALE) * HALF + BOTH.0 + BOTH.1 as f32
            },
            x,
        )
    }

    #[parallel]
    pub fn classify(x: &[i32]) -> Vec<u32> {
        const TOP: i32 = 1000;
        map(
            |v| match v {
                0 => 10,
                1 | 2 => 20,
                3..=9 => 30,
                -5..=-1 => 40,
                100..TOP => 50,
                TOP.. => 60,
                _ => 70,
            },
            x,
        )
    }

    #[parallel]
    pub fn match_bool(x: &[i64]) -> Vec<i64> {
        map(
            |v| match v > 0 {
                true => v,
                false => -v * 2,
            },
            x,
        )
    }

    #[parallel]
    pub fn match_index(n: usize) -> Vec<u64> {
        map(
            |i| match i % 7 {
                ..=2 => 1u64,
                3 | 5 => (i as u64) * 2,
                _ => 0,
            },
            range(n),
        )
    }

    #[parallel]
    pub fn powi_literals(x: &[f32]) -> (Vec<f32>, Vec<f32>, Vec<f32>, Vec<f32>) {
        (
            map(|v| v.powi(3), x),
            map(|v| v.powi(-2), x),
            map(|v| v.powi(0), x),
            map(|v| v.powi(13), x),
        )
    }

    #[parallel]
    pub fn powi_dynamic(x: &[f64], e: &[i32]) -> Vec<f64> {
        map(|v, k| v.powi(k), x, e)
    }

    #[parallel]
    pub fn arg_extremes_f32(x: &[f32]) -> (usize, usize) {
        (argmin(x), argmax(x))
    }

    #[parallel]
    pub fn arg_extremes_i32(x: &[i32]) -> (usize, usize) {
        (argmin(x), argmax(map(|v| v / 16, x)))
    }

    #[parallel]
    pub fn argmin_checked(x: &[u64]) -> Result<usize, Error> {
        argmin(x)
    }

    #[parallel]
    pub fn argmax_checked(x: &[f64]) -> Result<usize, Error> {
        argmax(x)
    }

    #[parallel]
    pub fn slices(x: &[i32], a: usize, b: usize) -> (Vec<i32>, Vec<i32>, Vec<i32>, Vec<i32>) {
        (x[a..b], x[a..], x[..b], x[..])
    }

    #[parallel]
    pub fn slice_checked(x: &[f32], a: usize, b: usize) -> Result<Vec<f32>, Error> {
        x[a..b]
    }

    /// Slices of computed sequences, read by other primitives and inside element functions.
    #[parallel]
    pub fn slice_uses(x: &[i64], k: usize) -> (i64, Vec<i64>, Vec<i64>) {
        let y = map(|v| v * 2, x);
        let tail = y[k..];
        (
            sum(x[..k]),
            map(|a, b| a - b, tail, x[..len(x) - k]),
            map(|i| sum(x[i..=i + 1]), range(len(x) / 2)),
        )
    }

    #[parallel]
    pub fn outer(x: &[f32], y: &[f32]) -> Matrix<f32> {
        map(|a| map(|b| a * b - 1.0, y), x)
    }

    #[parallel]
    pub fn positive_rows(m: &Matrix<i32>) -> Result<Matrix<i32>, Error> {
        map(|r| filter(|v| v > 0, r), m)
    }

    #[parallel]
    pub fn doubled_and_sums(m: &Matrix<i64>) -> (Matrix<i64>, Vec<i64>) {
        (map(|r| map(|v| v * 2, r), m), map(|r| sum(r), m))
    }

    #[parallel]
    pub fn flatten_nested(rows: &Nested<u32>) -> Vec<u32> {
        flatten(rows)
    }

    #[parallel]
    pub fn flatten_matrix(m: &Matrix<f64>) -> Vec<f64> {
        flatten(m)
    }

    /// The neighbours of a frontier (a BFS level): a ragged result computed in the body,
    /// flattened.
    #[parallel]
    pub fn neighbours(adj: &Nested<u32>, frontier: &[u32]) -> Vec<u32> {
        flatten(map(|v| filter(|w| w % 3 != 0, adj[v]), frontier))
    }

    #[parallel]
    pub fn zip3(a: &[u32], b: &[f32], c: &[i64]) -> Vec<(u32, f32, i64)> {
        zip(a, b, c)
    }

    #[parallel]
    pub fn zip8_unzip(
        a: &[u32],
        b: &[u32],
        c: &[u32],
        d: &[u32],
        e: &[u32],
        f: &[u32],
        g: &[u32],
        h: &[u32],
    ) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
        let z = zip(a, b, c, d, e, f, g, h);
        let w = map(|t| (t.0 + t.7, t.1 ^ t.6, t.2.max(t.3) + t.4 - t.5), z);
        unzip(w)
    }
}

fn reverse_f32(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -1.0, 1.0);
        let want: Vec<f32> = x.iter().rev().copied().collect();
        assert_same(&prog::reverse_f32(&x), &want, "reverse");
    });
}

fn reverse_weighted(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x: Vec<i64> = rng.vec(n, |r| r.int_in(-1000..1000));
        let r: Vec<i64> = x.iter().rev().map(|v| v * 3 - 1).collect();
        let s: i64 = r.iter().enumerate().map(|(i, v)| v * i as i64).sum();
        let (got_r, got_s) = prog::reverse_weighted(&x);
        assert_same(&got_r, &r, "reverse_weighted");
        assert_eq!(got_s, s, "reverse_weighted sum");
    });
}

fn reverse_twice(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.u32s(n);
        assert_same(&prog::reverse_twice(&x), &x, "reverse_twice");
    });
}

fn range_between(place: Place) {
    each_size(place, &ALL_SIZES, |n, _| {
        let a = n / 3;
        assert_same(
            &prog::range_between(a, n),
            &(a..n).collect::<Vec<_>>(),
            "range",
        );
        // `b <= a` is empty, as Rust's `a..b`.
        assert_same(&prog::range_between(n + 5, n), &[], "range backwards");
        assert_same(&prog::range_between(n, n), &[], "range empty");
    });
}

fn range_window(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.u64s(n);
        for from in [0, n / 2, n] {
            assert_same(&prog::range_window(&x, from), &x[from..], "range_window");
        }
    });
}

fn concat_u32(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let a = rng.u32s(n);
        let b = rng.u32s(n / 2 + 1);
        let want: Vec<u32> = a.iter().chain(&b).copied().collect();
        assert_same(&prog::concat_u32(&a, &b), &want, "concat");
        assert_same(&prog::concat_u32(&[], &b), &b, "concat empty first");
        assert_same(&prog::concat_u32(&a, &[]), &a, "concat empty second");
    });
}

fn concat_computed(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let a = rng.i32s(n);
        let b = rng.i32s(n + 3);
        let want: Vec<i32> = a
            .iter()
            .map(|v| v / 2)
            .chain(b.iter().copied().filter(|v| v % 3 == 0))
            .collect();
        let s: i64 = want.iter().map(|&v| v as i64).sum();
        let (got, got_s) = prog::concat_computed(&a, &b);
        assert_same(&got, &want, "concat_computed");
        assert_eq!(got_s, s, "concat_computed sum");
    });
}

fn to_vec_then_map(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f64s(n, -4.0, 4.0);
        assert_same(&prog::to_vec_then_map(&x), &each(&x, |v| v * 0.5), "to_vec");
    });
}

fn consts(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -10.0, 10.0);
        let want = each(&x, |v| (v * 2.5 + 3.0) * 0.5 + 5.0 + -4.0);
        assert_same(&prog::consts(&x), &want, "consts");
    });
}

fn classify(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x: Vec<i32> = rng.vec(n, |r| {
            r.edgy(
                &[
                    i32::MIN,
                    -6,
                    -5,
                    -1,
                    0,
                    1,
                    2,
                    3,
                    9,
                    10,
                    99,
                    100,
                    999,
                    1000,
                    i32::MAX,
                ],
                |r| r.int_in(-20..2000) as i32,
            )
        });
        let want = each(&x, |v| match v {
            0 => 10,
            1 | 2 => 20,
            3..=9 => 30,
            -5..=-1 => 40,
            100..1000 => 50,
            1000.. => 60,
            _ => 70,
        });
        assert_same(&prog::classify(&x), &want, "classify");
    });
}

fn match_bool(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x: Vec<i64> = rng.vec(n, |r| r.int_in(-100..100));
        let want = each(&x, |v| if v > 0 { v } else { -v * 2 });
        assert_same(&prog::match_bool(&x), &want, "match_bool");
    });
}

fn match_index(place: Place) {
    each_size(place, &ALL_SIZES, |n, _| {
        let want: Vec<u64> = (0..n)
            .map(|i| match i % 7 {
                ..=2 => 1,
                3 | 5 => i as u64 * 2,
                _ => 0,
            })
            .collect();
        assert_same(&prog::match_index(n), &want, "match_index");
    });
}

fn powi_literals(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x: Vec<f32> = rng.vec(n, |r| {
            r.edgy(
                &[0.0, -0.0, 1.0, -1.0, f32::NAN, f32::INFINITY, 1e-30, 3e20],
                |r| r.f32_in(-3.0, 3.0),
            )
        });
        let (p3, pm2, p0, p13) = prog::powi_literals(&x);
        assert_same(&p3, &each(&x, |v| v.powi(3)), "powi(3)");
        assert_same(&pm2, &each(&x, |v| v.powi(-2)), "powi(-2)");
        assert_same(&p0, &each(&x, |v| v.powi(0)), "powi(0)");
        assert_same(&p13, &each(&x, |v| v.powi(13)), "powi(13)");
    });
}

/// Rust's `powi` with an exponent only known at run time (what the DSL's `powi` computes on
/// every place: binary powering, as compiler-rt's `__powidf2`).
#[inline(never)]
fn powi_runtime(v: f64, k: i32) -> f64 {
    std::hint::black_box(v).powi(std::hint::black_box(k))
}

fn powi_dynamic(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x: Vec<f64> = rng.vec(n, |r| {
            r.edgy(
                &[0.0, -0.0, 1.0, -1.0, 2.0, 0.5, f64::NAN, f64::NEG_INFINITY],
                |r| r.f64_in(-2.0, 2.0),
            )
        });
        let e: Vec<i32> = rng.vec(n, |r| {
            r.edgy(&[0, 1, -1, 31, -31, 1023, -1074, i32::MAX, i32::MIN], |r| {
                r.int_in(-40..40) as i32
            })
        });
        let want = zip_with(&x, &e, powi_runtime);
        assert_same(&prog::powi_dynamic(&x, &e), &want, "powi dynamic");
    });
}

/// The index of the first smallest (`less`) element, NaNs losing to every number.
fn first_best<T: Copy + PartialOrd>(x: &[T], better: impl Fn(T, T) -> bool) -> usize {
    let nan = |v: T| v.partial_cmp(&v).is_none();
    let mut best = 0;
    for (i, &v) in x.iter().enumerate() {
        let b = x[best];
        if (nan(b) && !nan(v)) || (!nan(v) && better(v, b)) {
            best = i;
        }
    }
    best
}

fn arg_extremes_f32(place: Place) {
    each_size(place, &NONEMPTY_SIZES, |n, rng| {
        // Few distinct values, so that ties (and the first index) matter.
        let x: Vec<f32> = rng.vec(n, |r| {
            r.edgy(&[f32::NAN, -0.0, 0.0, f32::INFINITY], |r| {
                r.int_in(-50..50) as f32
            })
        });
        let want = (first_best(&x, |a, b| a < b), first_best(&x, |a, b| a > b));
        assert_eq!(prog::arg_extremes_f32(&x), want, "argmin/argmax f32");
        // All NaN: the first.
        assert_eq!(
            prog::arg_extremes_f32(&vec![f32::NAN; n]),
            (0, 0),
            "all NaN"
        );
    });
}

fn arg_extremes_i32(place: Place) {
    each_size(place, &NONEMPTY_SIZES, |n, rng| {
        let x = rng.i32s(n);
        let scaled = each(&x, |v| v / 16);
        let want = (
            first_best(&x, |a, b| a < b),
            first_best(&scaled, |a, b| a > b),
        );
        assert_eq!(prog::arg_extremes_i32(&x), want, "argmin/argmax i32");
        let same = vec![7; n];
        assert_eq!(prog::arg_extremes_i32(&same), (0, 0), "all equal");
    });
}

fn arg_extremes_empty(place: Place) {
    dpl::with_place(place, || {
        for (got, name) in [
            (prog::argmin_checked(&[]), "argmin"),
            (prog::argmax_checked(&[]), "argmax"),
        ] {
            match got {
                Err(dpl::Error::Empty { prim, at }) => {
                    assert_eq!(prim, name);
                    assert!(at.file.ends_with("vocabulary.rs"), "{at}");
                }
                other => panic!("{name} of nothing on {place:?}: {other:?}"),
            }
        }
        assert_eq!(prog::argmin_checked(&[3, 1, 1]), Ok(1));
        assert_eq!(prog::argmax_checked(&[3.0, 1.0, 3.0]), Ok(0));
    });
}

fn slices(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i32s(n);
        for (a, b) in [(0, n), (n / 3, n - n / 4), (n, n), (0, 0), (n / 2, n / 2)] {
            let (ab, a_, _b, all) = prog::slices(&x, a, b);
            assert_same(&ab, &x[a..b], "x[a..b]");
            assert_same(&a_, &x[a..], "x[a..]");
            assert_same(&_b, &x[..b], "x[..b]");
            assert_same(&all, &x, "x[..]");
        }
    });
}

fn slice_errors(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, 0.0, 1.0);
        assert_eq!(prog::slice_checked(&x, 0, n).map(|v| v.len()), Ok(n));
        // The end past the length: the end is reported against the length; a start past
        // the end: the start against the end.
        let mid = n / 2;
        for (a, b, index, len) in [
            (0, n + 1, n + 1, n),
            (mid, n + 7, n + 7, n),
            (mid + 1, mid, mid + 1, mid),
        ] {
            match prog::slice_checked(&x, a, b) {
                Err(dpl::Error::IndexOutOfRange {
                    prim: "slice",
                    index: i,
                    len: l,
                    at,
                }) => {
                    assert_eq!((i, l), (index as i128, len), "x[{a}..{b}] of {n}");
                    assert!(at.file.ends_with("vocabulary.rs"), "{at}");
                }
                other => panic!("x[{a}..{b}] of {n} on {place:?}: {other:?}"),
            }
        }
    });
}

fn slice_uses(place: Place) {
    each_size(place, &NONEMPTY_SIZES, |n, rng| {
        let x: Vec<i64> = rng.vec(n, |r| r.int_in(-1000..1000));
        let k = n / 3;
        let sum_head: i64 = x[..k].iter().sum();
        let diffs: Vec<i64> = (0..n - k).map(|i| x[k + i] * 2 - x[i]).collect();
        let pairs: Vec<i64> = (0..n / 2).map(|i| x[i] + x[i + 1]).collect();
        let (s, d, p) = prog::slice_uses(&x, k);
        assert_eq!(s, sum_head, "sum of a slice");
        assert_same(&d, &diffs, "map of slices");
        assert_same(&p, &pairs, "slices in an element function");
    });
}

fn outer(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -2.0, 2.0);
        let y = rng.f32s(3, -2.0, 2.0);
        let m = prog::outer(&x, &y);
        let want: Vec<Vec<f32>> = x
            .iter()
            .map(|&a| y.iter().map(|&b| a * b - 1.0).collect())
            .collect();
        // No rows: 0 x 0 (the length of rows that do not exist is not known).
        let cols = if n == 0 { 0 } else { 3 };
        assert_eq!(m.shape(), (n, cols), "outer shape");
        assert!(m.is_row_major());
        assert_same(m.data(), &want.concat(), "outer");
    });
}

fn positive_rows(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        // Rows of 4 with exactly two positive values each: uniform.
        let data: Vec<i32> = (0..n * 4)
            .map(|k| {
                if k % 4 < 2 {
                    1 + (rng.u32() % 100) as i32
                } else {
                    -((rng.u32() % 100) as i32)
                }
            })
            .collect();
        let m = dpl::Matrix::row_major(n, 4, data.clone()).unwrap();
        let got = prog::positive_rows(&m).expect("uniform rows");
        let want: Vec<i32> = data.iter().copied().filter(|&v| v > 0).collect();
        assert_eq!(
            got.shape(),
            (n, if n == 0 { 0 } else { 2 }),
            "positive_rows shape"
        );
        assert_same(got.data(), &want, "positive_rows");
        if n >= 2 {
            // One more positive value in the last row: ragged.
            let mut bad = data;
            bad[n * 4 - 1] = 5;
            let m = dpl::Matrix::row_major(n, 4, bad).unwrap();
            match prog::positive_rows(&m) {
                Err(dpl::Error::LengthMismatch {
                    prim: "Matrix",
                    left: 2,
                    right: 3,
                    at,
                }) => {
                    assert!(at.file.ends_with("vocabulary.rs"), "{at}");
                }
                other => panic!("ragged Matrix result on {place:?}: {other:?}"),
            }
        }
    });
}

fn doubled_and_sums(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let rows = n / 8 + 1;
        let data: Vec<i64> = rng.vec(rows * 5, |r| r.int_in(-1000..1000));
        let m = dpl::Matrix::row_major(rows, 5, data.clone()).unwrap();
        let (d, s) = prog::doubled_and_sums(&m);
        assert_eq!(d.shape(), (rows, 5));
        assert_same(d.data(), &each(&data, |v| v * 2), "doubled");
        let sums: Vec<i64> = data.chunks(5).map(|r| r.iter().sum()).collect();
        assert_same(&s, &sums, "row sums");
    });
}

/// Rows of random lengths (many empty, some long), `n` values in all.
fn ragged_lengths(n: usize, rng: &mut Rng) -> Vec<usize> {
    let mut lens = Vec::new();
    let mut left = n;
    while left > 0 {
        let l = match rng.below(4) {
            0 => 0,
            1 => 1,
            2 => rng.below(8),
            _ => rng.below(200),
        }
        .min(left);
        lens.push(l);
        left -= l;
    }
    lens.push(0);
    lens
}

fn flatten_nested(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let values = rng.u32s(n);
        let rows = dpl::Nested::from_lengths(values.clone(), ragged_lengths(n, rng)).unwrap();
        assert_same(&prog::flatten_nested(&rows), &values, "flatten Nested");
        let empty_rows = dpl::Nested::from_rows(vec![Vec::<u32>::new(); n % 5]);
        assert_same(
            &prog::flatten_nested(&empty_rows),
            &[],
            "flatten empty rows",
        );
    });
}

fn flatten_matrix(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let data = rng.f64s(n * 3, -1.0, 1.0);
        let m = dpl::Matrix::col_major(n, 3, data).unwrap();
        let want: Vec<f64> = (0..n)
            .flat_map(|r| (0..3).map(move |c| (r, c)))
            .map(|(r, c)| *m.get(r, c).unwrap())
            .collect();
        assert_same(&prog::flatten_matrix(&m), &want, "flatten Matrix");
    });
}

fn neighbours(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let vertices = n / 4 + 1;
        let lens = ragged_lengths(n, rng);
        let adj = dpl::Nested::from_rows(lens.iter().take(vertices).map(|&l| {
            (0..l)
                .map(|_| rng.below(vertices) as u32)
                .collect::<Vec<_>>()
        }));
        let adj = if adj.len() < vertices {
            let mut rows = adj.to_vecs();
            rows.resize(vertices, Vec::new());
            dpl::Nested::from_rows(rows)
        } else {
            adj
        };
        let frontier: Vec<u32> = rng.vec(n / 8, |r| r.below(vertices) as u32);
        let want: Vec<u32> = frontier
            .iter()
            .flat_map(|&v| adj.row(v as usize).iter().copied().filter(|w| w % 3 != 0))
            .collect();
        assert_same(&prog::neighbours(&adj, &frontier), &want, "neighbours");
    });
}

fn zip3(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (a, b, c) = (rng.u32s(n), rng.f32s(n, 0.0, 1.0), rng.i64s(n));
        let got = prog::zip3(&a, &b, &c);
        assert_eq!(got.len(), n, "zip3 length");
        for (i, t) in got.iter().enumerate() {
            assert!(
                t.0 == a[i] && t.1.to_bits() == b[i].to_bits() && t.2 == c[i],
                "zip3 at [{i}]: {t:?}"
            );
        }
        let short = rng.i64s(n + 1);
        let msg = panic_message(|| prog::zip3(&a, &b, &short));
        assert!(msg.contains("length mismatch"), "{msg}");
    });
}

fn zip8_unzip(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let s: Vec<Vec<u32>> = (0..8).map(|_| rng.vec(n, |r| r.u32() % 1000)).collect();
        let want0: Vec<u32> = (0..n).map(|i| s[0][i] + s[7][i]).collect();
        let want1: Vec<u32> = (0..n).map(|i| s[1][i] ^ s[6][i]).collect();
        let want2: Vec<u32> = (0..n)
            .map(|i| (s[2][i].max(s[3][i]) + s[4][i]).wrapping_sub(s[5][i]))
            .collect();
        let (g0, g1, g2) = prog::zip8_unzip(&s[0], &s[1], &s[2], &s[3], &s[4], &s[5], &s[6], &s[7]);
        assert_same(&g0, &want0, "zip8 .0");
        assert_same(&g1, &want1, "zip8 .1");
        assert_same(&g2, &want2, "zip8 .2");
    });
}

on_every_place!(
    reverse_f32,
    reverse_weighted,
    reverse_twice,
    range_between,
    range_window,
    concat_u32,
    concat_computed,
    to_vec_then_map,
    consts,
    classify,
    match_bool,
    match_index,
    powi_literals,
    powi_dynamic,
    arg_extremes_f32,
    arg_extremes_i32,
    arg_extremes_empty,
    slices,
    slice_errors,
    slice_uses,
    outer,
    positive_rows,
    doubled_and_sums,
    flatten_nested,
    flatten_matrix,
    neighbours,
    zip3,
    zip8_unzip,
);
