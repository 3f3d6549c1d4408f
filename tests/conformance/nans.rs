//! NaNs and signed zeros, to the bit: every NaN a float operation produces is the canonical
//! NaN (`0x7fff_ffff`, `0x7fff_ffff_ffff_ffff`) on every place, values only moved keep their
//! bits, `sort` puts produced NaNs last everywhere, and `sum` treats `-0.0` as Rust's
//! `Iterator::sum` does (it starts from `-0.0`).

use super::*;
use dpl::Matrix;

/// The programs under test, written in the DSL.
mod prog {
    use dpl::prelude::*;

    #[parallel]
    pub fn arith_f32(
        x: &[f32],
        y: &[f32],
    ) -> (Vec<f32>, Vec<f32>, Vec<f32>, Vec<f32>, Vec<f32>, Vec<f32>) {
        (
            map(|a, b| a + b, x, y),
            map(|a, b| a - b, x, y),
            map(|a, b| a * b, x, y),
            map(|a, b| a / b, x, y),
            map(|a, b| a % b, x, y),
            map(|a| -a, x),
        )
    }

    #[parallel]
    pub fn arith_f64(
        x: &[f64],
        y: &[f64],
    ) -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>) {
        (
            map(|a, b| a + b, x, y),
            map(|a, b| a - b, x, y),
            map(|a, b| a * b, x, y),
            map(|a, b| a / b, x, y),
            map(|a, b| a % b, x, y),
            map(|a| -a, x),
        )
    }

    #[parallel]
    pub fn funcs_f32(
        x: &[f32],
        y: &[f32],
    ) -> (
        Vec<f32>,
        Vec<f32>,
        Vec<f32>,
        Vec<f32>,
        Vec<f32>,
        Vec<f32>,
        Vec<f32>,
    ) {
        (
            map(|a| a.sqrt(), x),
            map(|a| a.abs(), x),
            map(|a, b| a.min(b), x, y),
            map(|a, b| a.max(b), x, y),
            map(|a| a.floor(), x),
            map(|a, b| a.mul_add(b, a), x, y),
            map(|a| (a as f64) as f32, x),
        )
    }

    #[parallel]
    pub fn funcs_f64(
        x: &[f64],
        y: &[f64],
    ) -> (
        Vec<f64>,
        Vec<f64>,
        Vec<f64>,
        Vec<f64>,
        Vec<f64>,
        Vec<f64>,
        Vec<f64>,
    ) {
        (
            map(|a| a.sqrt(), x),
            map(|a| a.abs(), x),
            map(|a, b| a.min(b), x, y),
            map(|a, b| a.max(b), x, y),
            map(|a| a.floor(), x),
            map(|a, b| a.mul_add(b, a), x, y),
            map(|a| (a as f32) as f64, x),
        )
    }

    #[parallel]
    pub fn transcendental_f32(x: &[f32]) -> (Vec<f32>, Vec<f32>, Vec<f32>, Vec<f32>) {
        (
            map(|a| a.ln(), x),
            map(|a| a.log2(), x),
            map(|a| a.sin(), x),
            map(|a| a.exp(), x),
        )
    }

    #[parallel]
    pub fn transcendental_f64(x: &[f64]) -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>) {
        (
            map(|a| a.ln(), x),
            map(|a| a.log2(), x),
            map(|a| a.sin(), x),
            map(|a| a.exp(), x),
        )
    }

    /// Moves only: the values keep their bits.
    #[parallel]
    pub fn moved_f32(x: &[f32], i: &[usize], c: &[bool]) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
        (
            gather(x, i),
            map(|k, b| if b { x[k] } else { 1.0 }, i, c),
            sort(x),
        )
    }

    /// A map of pairs, one loop writing one vector per component (`unzip`): a computed
    /// float (its NaNs made canonical) and a float only moved (its bits kept).
    #[parallel]
    pub fn unzip_f32(x: &[f32], y: &[f32]) -> (Vec<f32>, Vec<f32>) {
        unzip(map(|a, b| (a * b, if a < b { a } else { b }), x, y))
    }

    /// A computed float next to an integer.
    #[parallel]
    pub fn unzip_f64(x: &[f64], y: &[f64], k: &[i32]) -> (Vec<f64>, Vec<i32>) {
        unzip(map(|a, b, c| (a / b, c + 1), x, y, k))
    }

    /// Sibling maps that horizontal fusion merges into one loop of pairs, next to a map
    /// of its own.
    #[parallel]
    pub fn siblings_f32(x: &[f32], y: &[f32]) -> (Vec<f32>, Vec<u32>, Vec<f32>) {
        (
            map(|a, b| a - b, x, y),
            map(|a, b| if a < b { 1 } else { 0 }, x, y),
            map(|a, b| a * b + 1.0, x, y),
        )
    }

    /// A map of triples read only by its projections: one loop writing three vectors.
    #[parallel]
    pub fn triples_f32(x: &[f32], y: &[f32]) -> (Vec<f32>, Vec<u32>, Vec<f32>) {
        let t = map(|a, b| (a * b + 1.0, if a < b { 1 } else { 0 }, b), x, y);
        (map(|p| p.0, t), map(|p| p.1, t), map(|p| p.2, t))
    }

    /// Two `&mut` parameters written in place by one loop: a computed float and a float
    /// moved or computed in a branch.
    #[parallel]
    pub fn pair_in_place(x: &mut [f32], y: &mut [f32]) {
        *x = map(|a, b| a * b, x, y);
        *y = map(|b| if b > 0.0 { b } else { b - 1.0 }, y);
    }

    /// A NaN literal.
    #[parallel]
    pub fn nan_literals(x: &[f32]) -> (Vec<f32>, Vec<f64>) {
        (
            map(|v| if v > 0.0 { f32::NAN } else { v }, x),
            map(|v| if v > 0.0 { f64::NAN } else { v as f64 }, x),
        )
    }

    #[parallel]
    pub fn sorted_differences_f32(x: &[f32]) -> Vec<f32> {
        sort(map(|v| v - v, x))
    }

    #[parallel]
    pub fn sorted_differences_f64(x: &[f64]) -> Vec<f64> {
        sort(map(|v| v - v, x))
    }

    #[parallel]
    pub fn sums_f32(x: &[f32]) -> (f32, f32, Vec<f32>, f32, f32) {
        (
            sum(x),
            reduce(|a, b| a + b, x, -0.0f32),
            scan(|a, b| a + b, x),
            min(x),
            max(x),
        )
    }

    #[parallel]
    pub fn sums_f64(x: &[f64]) -> (f64, f64, Vec<f64>, f64, f64) {
        (
            sum(x),
            reduce(|a, b| a + b, x, -0.0f64),
            scan(|a, b| a + b, x),
            min(x),
            max(x),
        )
    }

    #[parallel]
    pub fn sum_empty_f32(x: &[f32]) -> f32 {
        sum(x)
    }

    #[parallel]
    pub fn sum_empty_f64(x: &[f64]) -> f64 {
        sum(x)
    }

    /// Loops in element functions whose carried floats become NaNs by arithmetic (`inf -
    /// inf`, `0 / 0`), with `n` iterations per element: (a) a carried value read only by
    /// arithmetic, returned; (b) `0 / 0` on the chain of a loop ended by a `break`; (c) a
    /// carried value taken inside the loop at its second iteration (read other than by
    /// arithmetic there); (d) an input moved into a carried value (its bits kept); (e) the
    /// values of (a), sorted.
    #[parallel]
    pub fn loop_nans_f32(
        x: &[f32],
        k: &[u32],
    ) -> (Vec<f32>, Vec<f32>, Vec<f32>, Vec<f32>, Vec<f32>) {
        let looped = map(
            |a, n| {
                let mut v = a * 1.0f32;
                let mut i = 0u32;
                while i < n {
                    v = v * 1.5f32 - v * 0.5f32;
                    i += 1;
                }
                v
            },
            x,
            k,
        );
        let broken = map(
            |a, n| {
                let mut w = a + 0.0f32;
                let mut i = 0u32;
                loop {
                    if i >= n {
                        break;
                    }
                    w = (w - i as f32) / (w - i as f32) + w;
                    i += 1;
                }
                w
            },
            x,
            k,
        );
        let taken = map(
            |a, n| {
                let mut v = a * 1.0f32;
                let mut snap = -1.0f32;
                let mut i = 0u32;
                while i < n {
                    if i == 1 {
                        snap = v;
                    }
                    v = v * 1.5f32 - v * 0.5f32;
                    i += 1;
                }
                snap
            },
            x,
            k,
        );
        let moved = map(
            |a, n| {
                let mut snap = -1.0f32;
                let mut v = a * 2.0f32;
                let mut i = 0u32;
                while i < n {
                    if i == 0 {
                        snap = a;
                    } else {
                        snap = snap + v;
                    }
                    v = v - v;
                    i += 1;
                }
                snap
            },
            x,
            k,
        );
        (looped, broken, taken, moved, sort(looped))
    }

    /// (a), (b) and (c) of [`loop_nans_f32`] in `f64`.
    #[parallel]
    pub fn loop_nans_f64(x: &[f64], k: &[u32]) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        (
            map(
                |a, n| {
                    let mut v = a * 1.0;
                    let mut i = 0u32;
                    while i < n {
                        v = v * 1.5 - v * 0.5;
                        i += 1;
                    }
                    v
                },
                x,
                k,
            ),
            map(
                |a, n| {
                    let mut w = a + 0.0;
                    let mut i = 0u32;
                    loop {
                        if i >= n {
                            break;
                        }
                        w = (w - i as f64) / (w - i as f64) + w;
                        i += 1;
                    }
                    w
                },
                x,
                k,
            ),
            map(
                |a, n| {
                    let mut v = a * 1.0;
                    let mut snap = -1.0;
                    let mut i = 0u32;
                    while i < n {
                        if i == 1 {
                            snap = v;
                        }
                        v = v * 1.5 - v * 0.5;
                        i += 1;
                    }
                    snap
                },
                x,
                k,
            ),
        )
    }

    /// (a) of [`loop_nans_f32`] as a component of a map's pairs (`unzip`: the run time
    /// makes the stored component canonical, not the element after its loop), next to the
    /// iteration count; and in `f64`, the carried value both returned and read after the
    /// loop (`w + 1`).
    #[parallel]
    pub fn loop_nans_unzip(x: &[f32], k: &[u32]) -> (Vec<f32>, Vec<u32>, Vec<f64>, Vec<f64>) {
        let (v, i) = unzip(map(
            |a, n| {
                let mut v = a * 1.0f32;
                let mut i = 0u32;
                while i < n {
                    v = v * 1.5f32 - v * 0.5f32;
                    i += 1;
                }
                (v, i)
            },
            x,
            k,
        ));
        let (w, u) = unzip(map(
            |a, n| {
                let mut w = a as f64 * 1.0;
                let mut i = 0u32;
                while i < n {
                    w = w * 1.5 - w * 0.5;
                    i += 1;
                }
                (w, w + 1.0)
            },
            x,
            k,
        ));
        (v, i, w, u)
    }

    /// A loop at the top level carrying a float and a vector: `s` becomes `inf - inf` at
    /// the first iteration when `x` sums to an infinity.
    #[parallel]
    pub fn top_loop_nans(x: &[f32], n: u32) -> (Vec<f32>, f32) {
        let mut v = map(|a| a * 1.0f32, x);
        let mut s = sum(x) * 1.0f32;
        let mut i = 0u32;
        while i < n {
            s = s * 1.5f32 - s * 0.5f32;
            v = map(|a| a * 1.5f32 - a * 0.5f32, v);
            i += 1;
        }
        (v, s)
    }

    /// Row sums of a matrix and an ELL product, whose rows may be strided (read down the
    /// columns in blocks on the CPU).
    #[parallel]
    pub fn matrix_rows_f32(m: &Matrix<f32>, c: &Matrix<u32>, x: &[f32]) -> (Vec<f32>, Vec<f32>) {
        (
            map(|r| sum(r), m),
            map(|a, k| sum(map(|v, j| v * x[j], a, k)), m, c),
        )
    }

    /// (a) of [`loop_nans_f32`] in `f16`, sorted.
    #[parallel]
    pub fn loop_nans_f16(x: &[f16], k: &[u32]) -> Vec<f16> {
        sort(map(
            |a, n| {
                let mut v = a * 1.0;
                let mut i = 0u32;
                while i < n {
                    v = v * 1.5 - v * 0.5;
                    i += 1;
                }
                v
            },
            x,
            k,
        ))
    }
}

/// An independent oracle for the canonical NaN: the bit pattern NVIDIA GPUs give for every
/// `f32` NaN, and its `f64` counterpart.
trait Canon: Copy {
    fn canon(self) -> Self;
    fn bits(self) -> u64;
}

// The NaN tests are on the bits: in optimized builds LLVM folded `if s.is_nan() {
// canonical } else { s }` for an `f32` square root `s` into `s` (see `dpl::nan`), so the
// expectation itself kept x86's NaN.
impl Canon for f32 {
    fn canon(self) -> f32 {
        let b = self.to_bits();
        f32::from_bits(if b & 0x7fff_ffff > 0x7f80_0000 {
            0x7fff_ffff
        } else {
            b
        })
    }
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
}

impl Canon for f64 {
    fn canon(self) -> f64 {
        let b = self.to_bits();
        f64::from_bits(if b & 0x7fff_ffff_ffff_ffff > 0x7ff0_0000_0000_0000 {
            0x7fff_ffff_ffff_ffff
        } else {
            b
        })
    }
    fn bits(self) -> u64 {
        self.to_bits()
    }
}

/// `got` equals `want` to the bit; on failure names the first differing element and its
/// inputs.
fn assert_bits<T: Canon + std::fmt::Debug>(
    got: &[T],
    want: &[T],
    inputs: &dyn Fn(usize) -> String,
    what: &str,
) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            g.bits() == w.bits(),
            "{what}[{i}] at {}: got {g:?} ({:#x}), want {w:?} ({:#x})",
            inputs(i),
            g.bits(),
            w.bits()
        );
    }
}

/// The special values: both zeros, ones, infinities, NaNs of both signs with and without
/// payloads, a subnormal and the extremes.
fn specials32() -> Vec<f32> {
    vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        2.5,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::from_bits(0x7fff_ffff),
        f32::from_bits(0x7fc0_0000),
        f32::from_bits(0xffc0_0000),
        f32::from_bits(0x7fc0_1234),
        f32::from_bits(0xff80_0001),
        f32::from_bits(1),
        f32::MAX,
        f32::MIN,
    ]
}

fn specials64() -> Vec<f64> {
    vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        2.5,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::from_bits(0x7fff_ffff_ffff_ffff),
        f64::from_bits(0x7ff8_0000_0000_0000),
        f64::from_bits(0xfff8_0000_0000_0000),
        f64::from_bits(0x7ff8_0000_0000_1234),
        f64::from_bits(0xfff0_0000_0000_0001),
        f64::from_bits(1),
        f64::MAX,
        f64::MIN,
    ]
}

/// Every pair of `s`, repeated to at least `n` elements (so that vector loops and several
/// blocks see every pair).
fn pairs<T: Copy>(s: &[T], n: usize) -> (Vec<T>, Vec<T>) {
    let (mut x, mut y) = (Vec::new(), Vec::new());
    while x.len() < n.max(1) {
        for &a in s {
            for &b in s {
                x.push(a);
                y.push(b);
            }
        }
    }
    (x, y)
}

const N: usize = 5003;

fn arithmetic(place: Place) {
    dpl::with_place(place, || {
        let (x, y) = pairs(&specials32(), N);
        let at = |i: usize| format!("x = {:?}, y = {:?}", x[i], y[i]);
        let (add, sub, mul, div, rem, neg) = prog::arith_f32(&x, &y);
        assert_bits(
            &add,
            &zip_with(&x, &y, |a, b| (a + b).canon()),
            &at,
            "f32 a + b",
        );
        assert_bits(
            &sub,
            &zip_with(&x, &y, |a, b| (a - b).canon()),
            &at,
            "f32 a - b",
        );
        assert_bits(
            &mul,
            &zip_with(&x, &y, |a, b| (a * b).canon()),
            &at,
            "f32 a * b",
        );
        assert_bits(
            &div,
            &zip_with(&x, &y, |a, b| (a / b).canon()),
            &at,
            "f32 a / b",
        );
        assert_bits(
            &rem,
            &zip_with(&x, &y, |a, b| (a % b).canon()),
            &at,
            "f32 a % b",
        );
        assert_bits(&neg, &each(&x, |a| (-a).canon()), &at, "f32 -a");

        let (x, y) = pairs(&specials64(), N);
        let at = |i: usize| format!("x = {:?}, y = {:?}", x[i], y[i]);
        let (add, sub, mul, div, rem, neg) = prog::arith_f64(&x, &y);
        assert_bits(
            &add,
            &zip_with(&x, &y, |a, b| (a + b).canon()),
            &at,
            "f64 a + b",
        );
        assert_bits(
            &sub,
            &zip_with(&x, &y, |a, b| (a - b).canon()),
            &at,
            "f64 a - b",
        );
        assert_bits(
            &mul,
            &zip_with(&x, &y, |a, b| (a * b).canon()),
            &at,
            "f64 a * b",
        );
        assert_bits(
            &div,
            &zip_with(&x, &y, |a, b| (a / b).canon()),
            &at,
            "f64 a / b",
        );
        assert_bits(
            &rem,
            &zip_with(&x, &y, |a, b| (a % b).canon()),
            &at,
            "f64 a % b",
        );
        assert_bits(&neg, &each(&x, |a| (-a).canon()), &at, "f64 -a");
    });
}

fn functions(place: Place) {
    dpl::with_place(place, || {
        let (x, y) = pairs(&specials32(), N);
        let at = |i: usize| format!("x = {:?}, y = {:?}", x[i], y[i]);
        let (sqrt, abs, min, max, floor, fma, cast) = prog::funcs_f32(&x, &y);
        assert_bits(&sqrt, &each(&x, |a| a.sqrt().canon()), &at, "f32 sqrt");
        assert_bits(&abs, &each(&x, |a| a.abs().canon()), &at, "f32 abs");
        assert_bits(
            &min,
            &zip_with(&x, &y, |a, b| a.min(b).canon()),
            &at,
            "f32 min",
        );
        assert_bits(
            &max,
            &zip_with(&x, &y, |a, b| a.max(b).canon()),
            &at,
            "f32 max",
        );
        assert_bits(&floor, &each(&x, |a| a.floor().canon()), &at, "f32 floor");
        let want = zip_with(&x, &y, |a, b| a.mul_add(b, a).canon());
        assert_bits(&fma, &want, &at, "f32 mul_add");
        assert_bits(
            &cast,
            &each(&x, |a| (a as f64 as f32).canon()),
            &at,
            "f32 as f64 as f32",
        );

        let (x, y) = pairs(&specials64(), N);
        let at = |i: usize| format!("x = {:?}, y = {:?}", x[i], y[i]);
        let (sqrt, abs, min, max, floor, fma, cast) = prog::funcs_f64(&x, &y);
        assert_bits(&sqrt, &each(&x, |a| a.sqrt().canon()), &at, "f64 sqrt");
        assert_bits(&abs, &each(&x, |a| a.abs().canon()), &at, "f64 abs");
        assert_bits(
            &min,
            &zip_with(&x, &y, |a, b| a.min(b).canon()),
            &at,
            "f64 min",
        );
        assert_bits(
            &max,
            &zip_with(&x, &y, |a, b| a.max(b).canon()),
            &at,
            "f64 max",
        );
        assert_bits(&floor, &each(&x, |a| a.floor().canon()), &at, "f64 floor");
        let want = zip_with(&x, &y, |a, b| a.mul_add(b, a).canon());
        assert_bits(&fma, &want, &at, "f64 mul_add");
        let want = each(&x, |a| f64::from((a as f32).canon()).canon());
        assert_bits(&cast, &want, &at, "f64 as f32 as f64");
    });
}

/// `ln`, `log2`, `sin`, `exp` on the special values: the special results (NaN for a
/// negative argument or an infinite sine, infinities, zeros) to the bit; finite results of
/// the GPU's own routines may be an ulp off `std`, so those are compared to 1e-6.
fn transcendental(place: Place) {
    fn check<T: Canon + std::fmt::Debug + Into<f64>>(got: &[T], want: &[T], x: &[T], what: &str) {
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            let (gf, wf): (f64, f64) = ((*g).into(), (*w).into());
            let special = wf.is_nan() || wf.is_infinite() || wf == 0.0;
            let ok = if special {
                g.bits() == w.bits()
            } else {
                (gf - wf).abs() <= 1e-6 * wf.abs()
            };
            assert!(
                ok,
                "{what}({:?}) = {g:?} ({:#x}), want {w:?} ({:#x})",
                x[i],
                g.bits(),
                w.bits()
            );
        }
    }
    dpl::with_place(place, || {
        let x = pairs(&specials32(), N).0;
        let (ln, log2, sin, exp) = prog::transcendental_f32(&x);
        check(&ln, &each(&x, |a| a.ln().canon()), &x, "f32 ln");
        check(&log2, &each(&x, |a| a.log2().canon()), &x, "f32 log2");
        check(&sin, &each(&x, |a| a.sin().canon()), &x, "f32 sin");
        check(&exp, &each(&x, |a| a.exp().canon()), &x, "f32 exp");
        let x = pairs(&specials64(), N).0;
        let (ln, log2, sin, exp) = prog::transcendental_f64(&x);
        check(&ln, &each(&x, |a| a.ln().canon()), &x, "f64 ln");
        check(&log2, &each(&x, |a| a.log2().canon()), &x, "f64 log2");
        check(&sin, &each(&x, |a| a.sin().canon()), &x, "f64 sin");
        check(&exp, &each(&x, |a| a.exp().canon()), &x, "f64 exp");
    });
}

/// Values only moved (gathered, selected, sorted) keep their bits, payloads included; NaN
/// literals are canonical.
fn moves_and_literals(place: Place) {
    dpl::with_place(place, || {
        let x = pairs(&specials32(), N).0;
        let n = x.len();
        let i: Vec<usize> = (0..n).map(|k| (k * 7919) % n).collect();
        let c: Vec<bool> = (0..n).map(|k| k % 3 != 0).collect();
        let at = |k: usize| format!("k = {k}");
        let (g, s, sorted) = prog::moved_f32(&x, &i, &c);
        assert_bits(&g, &each(&i, |k| x[k]), &at, "gather");
        let want: Vec<f32> = (0..n).map(|k| if c[k] { x[i[k]] } else { 1.0 }).collect();
        assert_bits(&s, &want, &at, "if/else of a read");
        let mut want = x.clone();
        want.sort_by(f32::total_cmp);
        assert_bits(&sorted, &want, &at, "sort");

        let (a, b) = prog::nan_literals(&x);
        let at = |k: usize| format!("x = {:?}", x[k]);
        let want = each(&x, |v| {
            if v > 0.0 {
                f32::from_bits(0x7fff_ffff)
            } else {
                v
            }
        });
        assert_bits(&a, &want, &at, "f32::NAN literal");
        let want = each(&x, |v| {
            if v > 0.0 {
                f64::from_bits(0x7fff_ffff_ffff_ffff)
            } else {
                f64::from(v).canon()
            }
        });
        assert_bits(&b, &want, &at, "f64::NAN literal");
    });
}

/// `sort(map(|v| v - v, x))` with infinities and NaNs in `x`: every NaN produced is the
/// canonical one, so all of them sort last, after the zeros, on every place.
#[allow(clippy::eq_op)] // `v - v` is the point: NaN for infinities and NaNs.
fn sorted_nans(place: Place) {
    dpl::with_place(place, || {
        for n in [1usize, 2, 15, 1001, 70_001] {
            let x: Vec<f32> = (0..n).map(|k| specials32()[k % 15]).collect();
            let got = prog::sorted_differences_f32(&x);
            let mut want = each(&x, |v| (v - v).canon());
            want.sort_by(f32::total_cmp);
            assert_bits(
                &got,
                &want,
                &|k| format!("n = {n}, k = {k}"),
                "sort(v - v) f32",
            );
            assert!(got.iter().skip_while(|v| !v.is_nan()).all(|v| v.is_nan()));

            let x: Vec<f64> = (0..n).map(|k| specials64()[k % 15]).collect();
            let got = prog::sorted_differences_f64(&x);
            let mut want = each(&x, |v| (v - v).canon());
            want.sort_by(f64::total_cmp);
            assert_bits(
                &got,
                &want,
                &|k| format!("n = {n}, k = {k}"),
                "sort(v - v) f64",
            );
        }
    });
}

/// `sum` (and `reduce(+)` from `-0.0`, `scan(+)`) of signed zeros, infinities and NaNs:
/// Rust's `Iterator::sum` (`-0.0` for no elements or only `-0.0`s), NaNs canonical; `min`
/// and `max` of NaNs only give the canonical NaN, except for one element, which is moved.
fn signed_zeros_and_sums(place: Place) {
    fn inclusive<T: Canon + std::ops::Add<Output = T>>(x: &[T]) -> Vec<T> {
        let mut out: Vec<T> = Vec::new();
        for &v in x {
            let next = match out.last() {
                Some(&p) => (p + v).canon(),
                None => v,
            };
            out.push(next);
        }
        out
    }
    /// `min`/`max` by `op`: one element is returned as it is, a NaN made from two canonical.
    fn min_of<T: Canon>(x: &[T], op: fn(T, T) -> T) -> T {
        x[1..].iter().fold(x[0], |a, &b| op(a, b).canon())
    }
    dpl::with_place(place, || {
        assert_eq!(
            prog::sum_empty_f32(&[]).to_bits(),
            (-0.0f32).to_bits(),
            "empty f32 sum"
        );
        assert_eq!(
            prog::sum_empty_f64(&[]).to_bits(),
            (-0.0f64).to_bits(),
            "empty f64 sum"
        );
        let inf = f64::INFINITY;
        let payload = f64::from_bits(0x7ff8_0000_0000_1234);
        let cases: Vec<Vec<f64>> = vec![
            vec![-0.0],
            vec![-0.0, -0.0],
            vec![-0.0; 3000],
            vec![0.0, -0.0],
            vec![-0.0, 0.0, -0.0],
            vec![inf, -inf],
            vec![1.0, inf, 2.0, -inf, 3.0],
            vec![payload],
            vec![payload, payload],
            vec![-0.0, payload, 1.0],
            [vec![-0.0; 2000], vec![inf], vec![-0.0; 2000], vec![-inf]].concat(),
        ];
        for x64 in &cases {
            let x32: Vec<f32> = each(x64, |v| v as f32);
            let what = format!("{:?}", &x64[..x64.len().min(6)]);
            let at = |k: usize| format!("{what}, k = {k}");
            let (s, r, sc, mn, mx) = prog::sums_f32(&x32);
            let want = x32.iter().sum::<f32>().canon();
            assert_eq!(s.to_bits(), want.to_bits(), "f32 sum of {what}: {s:?}");
            assert_eq!(
                r.to_bits(),
                want.to_bits(),
                "f32 reduce(+, -0.0) of {what}: {r:?}"
            );
            let want_scan = inclusive(&x32);
            // A scan's first element is the first input itself.
            assert_bits(&sc[1..], &want_scan[1..], &at, "f32 scan(+)");
            assert_eq!(
                sc[0].to_bits(),
                x32[0].to_bits(),
                "f32 scan(+)[0] of {what}"
            );
            let fold_min = min_of(&x32, f32::min);
            let fold_max = min_of(&x32, f32::max);
            assert_eq!(
                mn.to_bits(),
                fold_min.to_bits(),
                "f32 min of {what}: {mn:?}"
            );
            assert_eq!(
                mx.to_bits(),
                fold_max.to_bits(),
                "f32 max of {what}: {mx:?}"
            );

            let (s, r, sc, mn, mx) = prog::sums_f64(x64);
            let want = x64.iter().sum::<f64>().canon();
            assert_eq!(s.to_bits(), want.to_bits(), "f64 sum of {what}: {s:?}");
            assert_eq!(
                r.to_bits(),
                want.to_bits(),
                "f64 reduce(+, -0.0) of {what}: {r:?}"
            );
            let want_scan = inclusive(x64);
            assert_bits(&sc[1..], &want_scan[1..], &at, "f64 scan(+)");
            assert_eq!(
                sc[0].to_bits(),
                x64[0].to_bits(),
                "f64 scan(+)[0] of {what}"
            );
            let fold_min = min_of(x64, f64::min);
            let fold_max = min_of(x64, f64::max);
            assert_eq!(
                mn.to_bits(),
                fold_min.to_bits(),
                "f64 min of {what}: {mn:?}"
            );
            assert_eq!(
                mx.to_bits(),
                fold_max.to_bits(),
                "f64 max of {what}: {mx:?}"
            );
        }
    });
}

/// NaNs made by arithmetic in loops inside element functions, to the bit: each carried
/// value made canonical once after its loop (see `dpl_core::nan::plan`) gives the bits of
/// making every iteration's value canonical; a carried value read other than by arithmetic
/// inside its loop is canonical there; an input moved into a carried value keeps its bits.
#[allow(clippy::eq_op)] // `d / d` and `v - v` are the point: NaN for zeros and infinities.
fn loop_nans(place: Place) {
    dpl::with_place(place, || {
        // Every special value with 0 to 3 iterations (and `inf - inf` or `0 / 0` on the way).
        let specials = specials32();
        let x: Vec<f32> = (0..4 * specials.len()).map(|k| specials[k / 4]).collect();
        let k: Vec<u32> = (0..x.len()).map(|i| (i % 4) as u32).collect();
        let at = |i: usize| format!("x = {:?} ({:#x}), n = {}", x[i], x[i].to_bits(), k[i]);
        let step32 = |v: f32| (v * 1.5 - v * 0.5).canon();
        let looped = zip_with(&x, &k, |a, n| {
            (0..n).fold((a * 1.0).canon(), |v, _| step32(v))
        });
        let broken = zip_with(&x, &k, |a, n| {
            (0..n).fold((a + 0.0).canon(), |w, i| {
                let d = w - i as f32;
                (d / d + w).canon()
            })
        });
        let taken = zip_with(&x, &k, |a, n| {
            if n > 1 {
                step32((a * 1.0).canon())
            } else {
                -1.0
            }
        });
        let moved = zip_with(&x, &k, |a, n| {
            let v = (a * 2.0 - a * 2.0).canon();
            match n {
                0 => -1.0,
                1 => a,
                _ => (1..n).fold(a, |s, _| (s + v).canon()),
            }
        });
        let (got_looped, got_broken, got_taken, got_moved, got_sorted) =
            prog::loop_nans_f32(&x, &k);
        assert_bits(&got_looped, &looped, &at, "f32 carried, returned");
        assert_bits(&got_broken, &broken, &at, "f32 0 / 0 carried, break");
        assert_bits(&got_taken, &taken, &at, "f32 carried, taken in the loop");
        assert_bits(
            &got_moved,
            &moved,
            &at,
            "f32 input moved into a carried value",
        );
        let mut sorted = looped.clone();
        sorted.sort_by(f32::total_cmp);
        assert_bits(
            &got_sorted,
            &sorted,
            &|i| format!("k = {i}"),
            "f32 carried, sorted",
        );
        assert!(got_looped.iter().any(|v| v.is_nan()) && got_broken.iter().any(|v| v.is_nan()));

        let x: Vec<f64> = specials64().iter().flat_map(|&v| [v; 4]).collect();
        let at = |i: usize| format!("x = {:?} ({:#x}), n = {}", x[i], x[i].to_bits(), k[i]);
        let step64 = |v: f64| (v * 1.5 - v * 0.5).canon();
        let looped = zip_with(&x, &k, |a, n| {
            (0..n).fold((a * 1.0).canon(), |v, _| step64(v))
        });
        let broken = zip_with(&x, &k, |a, n| {
            (0..n).fold((a + 0.0).canon(), |w, i| {
                let d = w - f64::from(i);
                (d / d + w).canon()
            })
        });
        let taken = zip_with(&x, &k, |a, n| {
            if n > 1 {
                step64((a * 1.0).canon())
            } else {
                -1.0
            }
        });
        let (got_looped, got_broken, got_taken) = prog::loop_nans_f64(&x, &k);
        assert_bits(&got_looped, &looped, &at, "f64 carried, returned");
        assert_bits(&got_broken, &broken, &at, "f64 0 / 0 carried, break");
        assert_bits(&got_taken, &taken, &at, "f64 carried, taken in the loop");

        // A carried value as a component of a map's pairs.
        let x: Vec<f32> = (0..4 * specials.len()).map(|k| specials[k / 4]).collect();
        let at = |i: usize| format!("x = {:?} ({:#x}), n = {}", x[i], x[i].to_bits(), k[i]);
        let (got_v, got_i, got_w, got_u) = prog::loop_nans_unzip(&x, &k);
        let looped = zip_with(&x, &k, |a, n| {
            (0..n).fold((a * 1.0).canon(), |v, _| step32(v))
        });
        assert_bits(&got_v, &looped, &at, "f32 carried, a component of pairs");
        assert_eq!(got_i, k, "the iteration counts");
        let wide = zip_with(&x, &k, |a, n| {
            (0..n).fold((a as f64 * 1.0).canon(), |w, _| step64(w))
        });
        let plus = each(&wide, |w| (w + 1.0).canon());
        assert_bits(&got_w, &wide, &at, "f64 carried, a component of pairs");
        assert_bits(&got_u, &plus, &at, "f64 carried, read after the loop");
        assert!(got_v.iter().any(|v| v.is_nan()) && got_w.iter().any(|v| v.is_nan()));

        // At the top level of the body.
        for n in 0..3 {
            let x = [f32::INFINITY, 1.0, f32::from_bits(0xffc0_0001)];
            let step = |v: f32| (v * 1.5 - v * 0.5).canon();
            let (v, s) = prog::top_loop_nans(&x[..2], n);
            let want_s = (0..n).fold(f32::INFINITY, |s, _| step(s));
            assert_eq!(
                s.to_bits(),
                want_s.to_bits(),
                "top-level loop, n = {n}: {s:?}"
            );
            let want_v = each(&x[..2], |a| (0..n).fold(a, |v, _| step(v)));
            assert_bits(
                &v,
                &want_v,
                &|k| format!("n = {n}, k = {k}"),
                "top-level loop",
            );
            let (v, s) = prog::top_loop_nans(&x, n);
            assert_eq!(s.to_bits(), 0x7fff_ffff, "a NaN sum, n = {n}: {s:?}");
            assert_eq!(v[2].to_bits(), 0x7fff_ffff, "n = {n}");
        }

        // `f16`: its operators compute in `f32` and round once; the canonical NaN `0x7fff`.
        use dpl::f16;
        let canon16 = |v: f16| {
            if v.is_nan() {
                f16::from_bits(0x7fff)
            } else {
                v
            }
        };
        let h = |v: f32| f16::from_f32(v);
        let x: Vec<f16> = [0.0, -0.0, 1.0, 2.5, f32::INFINITY, f32::NEG_INFINITY]
            .into_iter()
            .map(h)
            .chain([0x7e00, 0xfe01, 0x7d23].map(f16::from_bits))
            .flat_map(|v| [v; 4])
            .collect();
        let k = &k[..x.len()];
        let mut want: Vec<f16> = zip_with(&x, k, |a, n| {
            (0..n).fold(canon16(a * h(1.0)), |v, _| canon16(v * h(1.5) - v * h(0.5)))
        });
        want.sort_by(|a, b| {
            let key = |v: &f16| {
                let b = v.to_bits() as i16;
                b ^ (((b >> 15) as u16) >> 1) as i16
            };
            key(a).cmp(&key(b))
        });
        let got = prog::loop_nans_f16(&x, k);
        let bits = |v: &[f16]| v.iter().map(|v| v.to_bits()).collect::<Vec<u16>>();
        assert_eq!(bits(&got), bits(&want), "f16 carried, sorted");
        assert!(got.iter().any(|v| v.to_bits() == 0x7fff));
    });
}

/// Maps of tuples written as one loop per tuple (`unzip`, sibling maps, two `&mut`
/// parameters in place), at a size with several parallel chunks: the computed float
/// components' NaNs are canonical, floats only moved keep their bits, integers their values.
fn tuple_maps(place: Place) {
    dpl::with_place(place, || {
        for n in [N, (1 << 17) + 7] {
            let (mut x, mut y) = pairs(&specials32(), n);
            x.truncate(n);
            y.truncate(n);
            let at = |i: usize| format!("n = {n}, x = {:?}, y = {:?}", x[i], y[i]);
            let (p, q) = prog::unzip_f32(&x, &y);
            assert_bits(
                &p,
                &zip_with(&x, &y, |a, b| (a * b).canon()),
                &at,
                "unzip a * b",
            );
            let moved = zip_with(&x, &y, |a, b| if a < b { a } else { b });
            assert_bits(&q, &moved, &at, "unzip, moved");

            let (s, c, m) = prog::siblings_f32(&x, &y);
            assert_bits(&s, &zip_with(&x, &y, |a, b| (a - b).canon()), &at, "a - b");
            assert_eq!(c, zip_with(&x, &y, |a, b| u32::from(a < b)), "a < b");
            let mul_add = zip_with(&x, &y, |a, b| (a * b + 1.0).canon());
            assert_bits(&m, &mul_add, &at, "a * b + 1");

            let (m, c, b) = prog::triples_f32(&x, &y);
            assert_bits(&m, &mul_add, &at, "triples, a * b + 1");
            assert_eq!(
                c,
                zip_with(&x, &y, |a, b| u32::from(a < b)),
                "triples, a < b"
            );
            assert_bits(&b, &y, &at, "triples, moved");

            let (mut u, mut v) = (x.clone(), y.clone());
            prog::pair_in_place(&mut u, &mut v);
            assert_bits(
                &u,
                &zip_with(&x, &y, |a, b| (a * b).canon()),
                &at,
                "*x = a * b",
            );
            let want = each(&y, |b| if b > 0.0 { b } else { (b - 1.0).canon() });
            assert_bits(&v, &want, &at, "*y = if ..");

            let (x, y) = pairs(&specials64(), n);
            let k: Vec<i32> = (0..x.len() as i32).collect();
            let at = |i: usize| format!("n = {n}, x = {:?}, y = {:?}", x[i], y[i]);
            let (p, q) = prog::unzip_f64(&x, &y, &k);
            assert_bits(
                &p,
                &zip_with(&x, &y, |a, b| (a / b).canon()),
                &at,
                "unzip a / b",
            );
            assert_eq!(q, each(&k, |c| c + 1), "unzip, c + 1");
        }
    });
}

/// Row sums and ELL products over matrices of special values, in both layouts: a row
/// whose sum is a NaN gives the canonical NaN, other rows their exact sum (the values are
/// integers, zeros and infinities, so every order gives the same sum), `-0.0` rows `-0.0`.
fn matrix_rows(place: Place) {
    let sp: Vec<f32> = specials32()
        .into_iter()
        .filter(|v| !v.is_finite() || v.fract() == 0.0 && v.abs() <= 2.0)
        .collect();
    dpl::with_place(place, || {
        for (rows, width) in [(300, 5), (7, 1), (300, 40), (3, 0)] {
            let at = |i: usize, k: usize| sp[(i * 5 + k * 3 + i / 7) % sp.len()];
            let cols = |i: usize, k: usize| ((i + 3 * k) % sp.len()) as u32;
            let data: Vec<Vec<f32>> = (0..rows)
                .map(|i| (0..width).map(|k| at(i, k)).collect())
                .collect();
            let x = sp.clone();
            let sum = |r: &mut dyn Iterator<Item = f32>| r.fold(-0.0f32, |a, b| a + b).canon();
            let sums: Vec<f32> = data.iter().map(|r| sum(&mut r.iter().copied())).collect();
            let products: Vec<f32> = (0..rows)
                .map(|i| sum(&mut (0..width).map(|k| at(i, k) * x[cols(i, k) as usize])))
                .collect();
            let row_major = |f: &dyn Fn(usize, usize) -> f32| -> Vec<f32> {
                (0..rows)
                    .flat_map(|i| (0..width).map(move |k| f(i, k)))
                    .collect()
            };
            let col_major = |f: &dyn Fn(usize, usize) -> f32| -> Vec<f32> {
                (0..width)
                    .flat_map(|k| (0..rows).map(move |i| f(i, k)))
                    .collect()
            };
            let c_row: Vec<u32> = (0..rows)
                .flat_map(|i| (0..width).map(move |k| cols(i, k)))
                .collect();
            let c_col: Vec<u32> = (0..width)
                .flat_map(|k| (0..rows).map(move |i| cols(i, k)))
                .collect();
            let layouts = [
                (
                    "row-major",
                    Matrix::row_major(rows, width, row_major(&at)).unwrap(),
                    Matrix::row_major(rows, width, c_row).unwrap(),
                ),
                (
                    "column-major",
                    Matrix::col_major(rows, width, col_major(&at)).unwrap(),
                    Matrix::col_major(rows, width, c_col).unwrap(),
                ),
            ];
            for (layout, m, c) in &layouts {
                let what = format!("{layout} {rows} x {width}");
                let inputs = |i: usize| format!("row {i}: {:?}", data[i]);
                let (s, p) = prog::matrix_rows_f32(m, c, &x);
                assert_bits(&s, &sums, &inputs, &format!("row sums, {what}"));
                assert_bits(&p, &products, &inputs, &format!("ELL product, {what}"));
            }
        }
    });
}

/// On the CPU, those loops leave the computed float components' NaNs to the run time,
/// which makes them canonical after each chunk's loop (the loops' `_canon` forms, `Canon`
/// for those components, `Keep` for the others).
#[test]
fn tuple_maps_make_nans_canonical_after_the_loop() {
    let code = |rust: &str| -> String { rust.split_whitespace().collect() };
    let unzip = code(dpl::inspect!(prog::unzip_f32).cpu_rust);
    assert!(unzip.contains("rt::map_unzip2_canon("), "{unzip}");
    assert!(
        unzip.contains("(::dpl::__private::rt::Canon,::dpl::__private::rt::Keep,)"),
        "{unzip}"
    );
    let unzip = code(dpl::inspect!(prog::unzip_f64).cpu_rust);
    assert!(
        unzip.contains("(::dpl::__private::rt::Canon,::dpl::__private::rt::Keep,)"),
        "{unzip}"
    );
    let canon = "::dpl::__private::rt::Canon";
    let keep = "::dpl::__private::rt::Keep";
    let siblings = code(dpl::inspect!(prog::siblings_f32).cpu_rust);
    assert!(siblings.contains("rt::map_unzip2_canon("), "{siblings}");
    assert!(
        siblings.contains(&format!("({canon},{keep},)")),
        "{siblings}"
    );
    let triples = code(dpl::inspect!(prog::triples_f32).cpu_rust);
    assert!(triples.contains("rt::map_unzip3_canon("), "{triples}");
    assert!(
        triples.contains(&format!("({canon},{keep},{keep},)")),
        "{triples}"
    );
    let in_place = code(dpl::inspect!(prog::pair_in_place).cpu_rust);
    assert!(
        in_place.contains("rt::update_unzip2_canon(&mut"),
        "{in_place}"
    );
    assert!(
        in_place.contains(&format!("({canon},{keep},)")),
        "{in_place}"
    );
}

on_every_place!(
    tuple_maps,
    matrix_rows,
    arithmetic,
    functions,
    transcendental,
    moves_and_literals,
    sorted_nans,
    signed_zeros_and_sums,
    loop_nans,
);
