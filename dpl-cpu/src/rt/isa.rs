//! The element-wise loops compiled twice: for the target the crate is built for, and, on
//! x86-64 built without AVX2 (the default target), for AVX2, chosen at run time.
//!
//! A user's crate is compiled for the baseline x86-64 (SSE2) unless it asks for more, so
//! the loops that a `map`, an in-place `*y = e` or the blocked row reductions of
//! [`heavy`](crate::heavy) run would use vectors of four `f32` even on a CPU with eight
//! (dpl's reductions are not among them: measured, their lane loops gained nothing). `chunk_loop!` declares such a loop once and compiles its
//! body a second time inside a `#[target_feature(enable = "avx2")]` function, called when
//! [`wide`] says the CPU has AVX2. The body is the same Rust code, and LLVM neither
//! reorders floating-point operations nor fuses a multiply and an add (`fma` is a feature
//! of its own, not enabled here), so both versions compute the same bits: only the width
//! of the vectors differs. This module's unit test compares the two on every such loop.
//!
//! `DPL_CPU_WIDE=0` in the environment keeps the baseline loops (read once per process),
//! e.g. to measure what the wide loops gain.

use std::sync::atomic::{AtomicU8, Ordering};

/// Not yet decided (0), the baseline loops (1), the AVX2 loops (2).
static WIDE: AtomicU8 = AtomicU8::new(0);

/// Whether the element-wise loops run their AVX2 versions: the CPU has AVX2 and
/// `DPL_CPU_WIDE` is not `0`. Always `false` where there is no second version (not
/// x86-64, or a crate built with AVX2 already, whose one version is the wide one).
#[inline]
pub fn wide() -> bool {
    if !cfg!(all(target_arch = "x86_64", not(target_feature = "avx2"))) {
        return false;
    }
    match WIDE.load(Ordering::Relaxed) {
        0 => {
            let on = detect();
            WIDE.store(if on { 2 } else { 1 }, Ordering::Relaxed);
            on
        }
        w => w == 2,
    }
}

/// Whether this CPU has AVX2 and the environment does not turn the wide loops off.
fn detect() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::env::var_os("DPL_CPU_WIDE").is_none_or(|v| v != "0")
            && std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Makes [`wide`] answer `on` where the CPU allows it (`false` always allowed), for the
/// tests that compare the two versions of a loop. Other calls running at the same time
/// are unaffected except in speed: both versions compute the same values.
#[cfg(test)]
pub(crate) fn set_wide(on: bool) {
    WIDE.store(1, Ordering::Relaxed);
    if on && detect() {
        WIDE.store(2, Ordering::Relaxed);
    }
}

/// Declares a loop over one chunk of an element-wise primitive, compiled twice (see the
/// module docs). Written like a function, with its generic parameters and its `where`
/// clause in brackets, every parameter named (`_nans` for one the body does not read):
///
/// ```text
/// chunk_loop! {
///     /// Docs.
///     pub(crate) fn name[T: Copy, F](out: &mut [T], f: &F) where [F: Fn(usize) -> T] {
///         /* the loop */
///     }
/// }
/// ```
///
/// The function is never inlined, on purpose: as a function of its own, its slices are
/// `noalias` parameters, so LLVM knows that the stores cannot change what the element
/// function captured and hoists those loads out of the loop, which is what lets the loop
/// vectorize (inlined into rayon's closures, that knowledge was lost and the loop ran
/// scalar, measured 2-4x slower). The AVX2 version takes the same parameters, so it keeps
/// that knowledge.
macro_rules! chunk_loop {
    (
        $(#[$doc:meta])*
        $vis:vis fn $name:ident[$($g:tt)*]($($a:ident: $t:ty),* $(,)?)
        where [$($w:tt)*]
        $body:block
    ) => {
        $(#[$doc])*
        #[inline(never)]
        $vis fn $name<$($g)*>($($a: $t),*) where $($w)* {
            #[inline(always)]
            fn body<$($g)*>($($a: $t),*) where $($w)* $body

            #[cfg(all(target_arch = "x86_64", not(target_feature = "avx2")))]
            {
                #[target_feature(enable = "avx2")]
                fn wide<$($g)*>($($a: $t),*) where $($w)* {
                    body($($a),*)
                }
                if $crate::rt::isa::wide() {
                    // SAFETY: `wide()` checked that this CPU has AVX2.
                    return unsafe { wide($($a),*) };
                }
            }
            body($($a),*)
        }
    };
}

pub(crate) use chunk_loop;

#[cfg(test)]
mod tests {
    use super::{set_wide, wide};
    use crate::rt::{self, Canon, Keep};
    use dpl_core::float16::{self, f16};
    use std::sync::Mutex;

    /// One test at a time switches the loops (the others only change speed).
    static SWITCH: Mutex<()> = Mutex::new(());

    /// `f32` inputs full of special values: NaNs with payloads and both signs, infinities,
    /// zeros of both signs, subnormals, the extremes, and ordinary numbers.
    fn inputs(n: usize) -> Vec<f32> {
        let special = [
            f32::from_bits(0x7fc0_0001),
            f32::from_bits(0xffc0_0000),
            f32::from_bits(0x7f80_0001),
            f32::INFINITY,
            f32::NEG_INFINITY,
            0.0,
            -0.0,
            f32::from_bits(1),
            -f32::MIN_POSITIVE,
            f32::MAX,
            f32::MIN,
        ];
        (0..n)
            .map(|i| {
                if i % 7 == 3 {
                    special[(i / 7) % special.len()]
                } else {
                    (i as f32 * 0.377).sin() * 1e3 / (1.0 + (i % 13) as f32)
                }
            })
            .collect()
    }

    /// Every element-wise loop of the run time (`map`, `map_canon`, the unzips, the
    /// in-place updates, the column loops of `heavy::map_reduce_blocked`) over element functions that exercise rounding, NaNs, casts,
    /// math functions, 16-bit floats and wrapping integers: the bits of each result.
    fn results(x: &[f32], y: &[f32]) -> Vec<Vec<u64>> {
        let n = x.len();
        let at = &rt::TEST_AT;
        let bits32 = |v: &[f32]| v.iter().map(|v| u64::from(v.to_bits())).collect();
        let bits64 = |v: &[f64]| v.iter().map(|v| v.to_bits()).collect();
        let mut out: Vec<Vec<u64>> = Vec::new();
        let f = |i: usize| x[i] * y[i] + x[i] / (y[i] - 0.5) - (x[i] * 3.0).sqrt();
        out.push(bits32(&rt::map_canon(n, f, "map", at)));
        out.push(bits32(&rt::map(n, f, "map", at)));
        let g = |i: usize| {
            (f64::from(x[i]) * 1e-3)
                .exp()
                .min(f64::from(y[i]))
                .max(-1e300)
                / 3.0
        };
        out.push(bits64(&rt::map_canon(n, g, "map", at)));
        let h = |i: usize| {
            let a: f16 = float16::narrow(x[i]);
            let b: f16 = float16::narrow(y[i]);
            float16::narrow::<f16>(float16::widen(a) * float16::widen(b) + 1.0).to_bits()
        };
        out.push(
            rt::map(n, h, "map", at)
                .into_iter()
                .map(u64::from)
                .collect(),
        );
        let k = |i: usize| {
            let v = x[i] as i32;
            (v.wrapping_mul(0x9e37_79b9u32 as i32) >> 3) as i8 as u16 as i64 + (y[i] as u8) as i64
        };
        out.push(
            rt::map(n, k, "map", at)
                .into_iter()
                .map(|v| v as u64)
                .collect(),
        );
        let u = |i: usize| (x[i] - y[i], (x[i] as i64).wrapping_mul(7) as u32);
        let (a, b) = rt::map_unzip2_canon(n, u, (Canon, Keep), "map", at);
        out.push(bits32(&a));
        out.push(b.into_iter().map(u64::from).collect());
        let mut z = x.to_vec();
        rt::update_canon(&mut z, |i, v| v + 1e-3 * y[i] * v);
        out.push(bits32(&z));
        let (mut p, mut q) = (x.to_vec(), y.to_vec());
        rt::update_unzip2_canon(&mut p, &mut q, |_, a, b| (a * b - a, b / a), (Canon, Canon));
        out.push(bits32(&p));
        out.push(bits32(&q));
        // Rows reduced down the columns of blocks (ELL products: `heavy`'s column loops).
        for inner in [5, 40] {
            let elem = |i: usize, k: usize| x[(i * 7 + k * 13) % n] * y[(i + k) % n];
            let fns = (
                elem,
                |i, k, a: f32| a + elem(i, k),
                |_, a: f32, b: f32| a + b,
            );
            let rows = crate::heavy::map_reduce_blocked(
                n,
                n * inner * 64,
                inner,
                |_| -0.0f32,
                fns,
                |_, a| a,
                |_| unreachable!("no row fails"),
                "map",
                at,
            );
            out.push(bits32(&rows));
        }
        out
    }

    #[test]
    fn the_wide_loops_compute_the_baseline_bits() {
        let _only = SWITCH.lock().unwrap_or_else(|e| e.into_inner());
        for n in [0, 1, 7, 8, 9, 31, 33, 1000, 4099, rt::GRAIN + 67] {
            let x = inputs(n);
            let y: Vec<f32> = inputs(n + 5).into_iter().skip(5).map(|v| v * 0.5).collect();
            set_wide(false);
            assert!(!wide());
            let narrow = results(&x, &y);
            set_wide(true);
            let wide_on = wide();
            let wide_results = results(&x, &y);
            set_wide(true);
            assert_eq!(wide_on, super::detect());
            for (k, (a, b)) in narrow.iter().zip(&wide_results).enumerate() {
                assert_eq!(a.len(), n, "loop {k}, {n} elements");
                assert!(
                    a == b,
                    "loop {k}, {n} elements: the wide loop's bits differ"
                );
            }
        }
    }
}
