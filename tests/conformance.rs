//! The conformance suite: flat DSL programs covering every primitive and language feature of
//! SPEC.md, each run on every place at sizes 0, 1, 1001 and 2^20 + 7 and compared with plain
//! Rust written independently here.
//!
//! Integer results and maps must match exactly; floating-point reductions and scans may
//! differ by reassociation (see `common::assert_reduced`). Programs whose features the
//! compiler does not support yet live in `conformance_pending.rs`.

mod common;

use common::*;
use dpl::Place;

/// The programs under test, written in the DSL.
mod prog {
    use dpl::prelude::*;

    // ---- map with 1 to 8 inputs, every scalar type as input ----

    #[parallel]
    pub fn square(x: &[f32]) -> Vec<f32> {
        map(|v| v * v, x)
    }

    #[parallel]
    pub fn saxpy(a: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
        map(|xi, yi| a * xi + yi, x, y)
    }

    #[parallel]
    pub fn fma3(x: &[f32], y: &[f32], z: &[f32]) -> Vec<f32> {
        map(|a, b, c| a.mul_add(b, c), x, y, z)
    }

    #[parallel]
    pub fn cross4(a: &[i32], b: &[i32], c: &[i32], d: &[i32]) -> Vec<i32> {
        map(|p, q, r, s| p * q - r * s, a, b, c, d)
    }

    #[parallel]
    pub fn bits5(a: &[u64], b: &[u64], c: &[u64], d: &[u64], e: &[u64]) -> Vec<u64> {
        map(
            |p, q, r, s, t| ((p ^ q) + (r & s)) | (t >> 3),
            a,
            b,
            c,
            d,
            e,
        )
    }

    #[parallel]
    pub fn dot6(a: &[f64], b: &[f64], c: &[f64], d: &[f64], e: &[f64], f: &[f64]) -> Vec<f64> {
        map(|p, q, r, s, t, u| p * q + r * s + t * u, a, b, c, d, e, f)
    }

    #[parallel]
    pub fn mix7(
        a: &[i64],
        b: &[i64],
        c: &[i64],
        d: &[i64],
        e: &[i64],
        f: &[i64],
        g: &[i64],
    ) -> Vec<i64> {
        map(
            |p, q, r, s, t, u, v| p - q * r + (s ^ t) - (u | v),
            a,
            b,
            c,
            d,
            e,
            f,
            g,
        )
    }

    #[parallel]
    pub fn all_types8(
        a: &[f32],
        b: &[f64],
        c: &[i32],
        d: &[u32],
        e: &[i64],
        f: &Vec<u64>,
        g: &[bool],
        h: &[usize],
    ) -> Vec<f64> {
        map(
            |fa, fb, ic, ud, le, uf, bg, zh| {
                let ints =
                    (ic as f64) + (ud as f64) - (le as f64) * 0.5 + (uf as f64) + (zh as f64);
                if bg { fa as f64 + fb + ints } else { fb - ints }
            },
            a,
            b,
            c,
            d,
            e,
            f,
            g,
            h,
        )
    }

    // ---- zip / unzip ----

    #[parallel]
    pub fn zip_dot(a: &[f64], b: &[f64]) -> f64 {
        sum(map(|p| p.0 * p.1, zip(a, b)))
    }

    #[parallel]
    pub fn split_parts(x: &[f32]) -> (Vec<f32>, Vec<f32>) {
        unzip(map(|v| (v.floor(), v - v.floor()), x))
    }

    #[parallel]
    pub fn swap_pairs(a: &[i32], b: &[i32]) -> (Vec<i32>, Vec<i32>) {
        let (p, q) = unzip(map(|t| (t.1, t.0), zip(a, b)));
        (p, q)
    }

    // ---- gather / permute / scatter / scatter_reduce ----

    #[parallel]
    pub fn gather_u32(x: &[f32], idx: &[u32]) -> Vec<f32> {
        gather(x, idx)
    }

    #[parallel]
    pub fn gather_i64(x: &[u64], idx: &[i64]) -> Vec<u64> {
        gather(x, idx)
    }

    #[parallel]
    pub fn reverse(x: &[i32]) -> Vec<i32> {
        let n = len(x);
        gather(x, map(|i| n - 1 - i, indices(x)))
    }

    #[parallel]
    pub fn permute_i32(x: &[i32], idx: &[u32]) -> Vec<i32> {
        permute(x, idx)
    }

    #[parallel]
    pub fn scatter_f64(src: &[f64], idx: &[usize], dst: &[f64]) -> Vec<f64> {
        scatter(src, idx, dst)
    }

    #[parallel]
    pub fn histogram(keys: &[u32], bins: usize) -> Vec<u32> {
        scatter_reduce(
            |a, b| a + b,
            replicate(1u32, len(keys)),
            keys,
            replicate(0u32, bins),
        )
    }

    #[parallel]
    pub fn bucket_max(vals: &[f32], keys: &[i32], bins: usize) -> Vec<f32> {
        scatter_reduce(|a, b| a.max(b), vals, keys, replicate(f32::MIN, bins))
    }

    // ---- reductions ----

    #[parallel]
    pub fn sum_f32(x: &[f32]) -> f32 {
        sum(x)
    }

    #[parallel]
    pub fn sum_i64(x: &[i64]) -> i64 {
        sum(x)
    }

    #[parallel]
    pub fn sum_u32(x: &[u32]) -> u32 {
        sum(x)
    }

    #[parallel]
    pub fn min_max_i32(x: &[i32]) -> (i32, i32) {
        (min(x), max(x))
    }

    #[parallel]
    pub fn min_max_f64(x: &[f64]) -> (f64, f64) {
        (min(x), max(x))
    }

    #[parallel]
    pub fn min_max_u64(x: &[u64]) -> (u64, u64) {
        (min(x), max(x))
    }

    #[parallel]
    pub fn any_all(b: &[bool]) -> (bool, bool) {
        (any(b), all(b))
    }

    #[parallel]
    pub fn any_all_pred(x: &[i32], t: i32) -> (bool, bool) {
        (any(|v| v > t, x), all(|v| v >= -t, x))
    }

    #[parallel]
    pub fn count_true(b: &[bool]) -> usize {
        count(b)
    }

    #[parallel]
    pub fn count_multiples(x: &[u64], k: u64) -> usize {
        count(|v| v % k == 0, x)
    }

    #[parallel]
    pub fn reduce_zip(a: &[i64], b: &[i32]) -> (i64, i32) {
        reduce(
            |p, q| (p.0 + q.0, p.1.max(q.1)),
            zip(a, b),
            (0i64, i32::MIN),
        )
    }

    #[parallel]
    pub fn product_u64(x: &[u64]) -> u64 {
        reduce(|a, b| a * b, x, 1u64)
    }

    #[parallel]
    pub fn reduce_max_f32(x: &[f32]) -> f32 {
        reduce(|a, b| a.max(b), x, f32::NEG_INFINITY)
    }

    // ---- scans ----

    #[parallel]
    pub fn prefix_i32(x: &[i32]) -> Vec<i32> {
        scan(|a, b| a + b, x)
    }

    #[parallel]
    pub fn prefix_f64(x: &[f64]) -> Vec<f64> {
        scan(|a, b| a + b, x)
    }

    #[parallel]
    pub fn running_max_u32(x: &[u32]) -> Vec<u32> {
        scan(|a, b| a.max(b), x)
    }

    #[parallel]
    pub fn running_min_i64(x: &[i64]) -> Vec<i64> {
        scan(|a, b| i64::min(a, b), x)
    }

    #[parallel]
    pub fn offsets(counts: &[u32]) -> Vec<usize> {
        exclusive_scan(|a, b| a + b, map(|c| c as usize, counts), 0usize)
    }

    #[parallel]
    pub fn exclusive_f32(x: &[f32], init: f32) -> Vec<f32> {
        exclusive_scan(|a, b| a + b, x, init)
    }

    // ---- filter ----

    #[parallel]
    pub fn positives(x: &[f32]) -> Vec<f32> {
        filter(|v| v > 0.0, x)
    }

    #[parallel]
    pub fn even_triples(x: &[i64]) -> Vec<i64> {
        filter(|v| v % 2 == 0, map(|v| v * 3, x))
    }

    #[parallel]
    pub fn set_positions(flags: &[bool]) -> Vec<usize> {
        filter(|i| flags[i], indices(flags))
    }

    #[parallel]
    pub fn doubled_odds(x: &[u32]) -> Vec<u32> {
        map(|v| v * 2, filter(|v| (v & 1) == 1, x))
    }

    // ---- replicate / indices / range / len ----

    #[parallel]
    pub fn fill(v: f64, n: usize) -> Vec<f64> {
        replicate(v, n)
    }

    #[parallel]
    pub fn squares(n: usize) -> Vec<u64> {
        map(|i| (i as u64) * (i as u64), range(n))
    }

    #[parallel]
    pub fn lengths(x: &[f32], y: &Vec<i32>) -> (usize, usize, usize) {
        (len(x), y.len(), len(indices(y)))
    }

    #[parallel]
    pub fn usize_ops(n: usize) -> Vec<usize> {
        map(|i| (i * 3 + 7) % (n + 1) / 2, range(n))
    }

    // ---- language: let, tuples, blocks, if, operators, casts ----

    #[parallel]
    pub fn piecewise(x: &[f32], lo: f32, hi: f32) -> Vec<f32> {
        map(
            |v| {
                let (a, b) = (v - lo, hi - v);
                let clamped = if a < 0.0 {
                    lo
                } else if b < 0.0 {
                    hi
                } else {
                    v
                };
                let t: f32 = {
                    let w = clamped * 0.5;
                    w + w
                };
                if a >= 0.0 && b >= 0.0 || v == lo {
                    t
                } else {
                    -t
                }
            },
            x,
        )
    }

    #[parallel]
    pub fn int_ops_i32(a: &[i32], b: &[i32]) -> Vec<i32> {
        map(
            |p, q| {
                let d = if q < 0 { -((q & 15) + 1) } else { (q & 15) + 1 };
                let s = (p + q) ^ (p - q) ^ (p * q);
                let t = (p / d) + (p % d) + (p << q) + (p >> q) + (!p) + (-q) + (p | q) + (p & q);
                let c = (p == q) as i32
                    + (p != q) as i32 * 2
                    + (p < q) as i32 * 4
                    + (p <= q) as i32 * 8
                    + (p > q) as i32 * 16
                    + (p >= q) as i32 * 32;
                s ^ t ^ c
            },
            a,
            b,
        )
    }

    #[parallel]
    pub fn int_ops_u64(a: &[u64], b: &[u64]) -> Vec<u64> {
        map(
            |p, q| {
                let d = (q & 255) + 1;
                let t = (p / d) + (p % d) + (p << q) + (p >> q) + (!p) + (p | q) - (p & q);
                let c = (p < q) as u64 + (p >= q) as u64 * 2 + (p == q) as u64 * 4;
                t ^ (p * q) ^ c
            },
            a,
            b,
        )
    }

    #[parallel]
    pub fn float_logic(a: &[f64], b: &[f64]) -> Vec<bool> {
        map(
            |p, q| (p < q) != (p >= q * 0.5) || !(p == q) && p <= -q || p > 1.0 && p != q,
            a,
            b,
        )
    }

    #[parallel]
    pub fn bool_logic(a: &[bool], b: &[bool]) -> (Vec<bool>, Vec<bool>) {
        (
            map(|p, q| (p & q) | (!p ^ q), a, b),
            map(|p, q| p != q && (p == !q || q), a, b),
        )
    }

    #[parallel]
    pub fn casts_from_f64(
        x: &[f64],
    ) -> (Vec<i32>, Vec<u32>, Vec<i64>, Vec<u64>, Vec<f32>, Vec<usize>) {
        (
            map(|v| v as i32, x),
            map(|v| v as u32, x),
            map(|v| v as i64, x),
            map(|v| v as u64, x),
            map(|v| v as f32, x),
            map(|v| v as usize, x),
        )
    }

    #[parallel]
    pub fn casts_between_ints(
        x: &[i64],
    ) -> (Vec<i32>, Vec<u32>, Vec<u64>, Vec<f32>, Vec<i64>, Vec<u64>) {
        (
            map(|v| v as i32, x),
            map(|v| v as u32, x),
            map(|v| (v as i32) as u64, x),
            map(|v| v as f32, x),
            map(|v| ((v as u32) as i32) as i64 + (v > 0) as i64, x),
            map(|v| (v as usize) as u64 ^ (v != 0) as u64, x),
        )
    }

    #[parallel]
    pub fn wrapping_i32(x: &[i32]) -> Vec<i32> {
        map(|v| -(v * 65537 + i32::MAX) - v.abs(), x)
    }

    #[parallel]
    pub fn wrapping_u32(x: &[u32]) -> Vec<u32> {
        map(|v| v * 3 + u32::MAX - (v << 7), x)
    }

    #[parallel]
    pub fn div_rem_i64(a: &[i64], b: &[i64]) -> (Vec<i64>, Vec<i64>) {
        (map(|p, q| p / q, a, b), map(|p, q| p % q, a, b))
    }

    #[parallel]
    pub fn int_math(a: &[i32], b: &[i32]) -> (Vec<i32>, Vec<i32>, Vec<i32>) {
        (
            map(|p| p.abs(), a),
            map(|p, q| p.min(q), a, b),
            map(|p, q| i32::max(p, q), a, b),
        )
    }

    // ---- scalar math, constants ----

    #[parallel]
    pub fn math_f32_unary(
        x: &[f32],
    ) -> (
        Vec<f32>,
        Vec<f32>,
        Vec<f32>,
        Vec<f32>,
        Vec<f32>,
        Vec<f32>,
        Vec<f32>,
        Vec<f32>,
    ) {
        (
            map(|v| v.abs(), x),
            map(|v| v.sqrt(), x),
            map(|v| v.exp(), x),
            map(|v| v.ln(), x),
            map(|v| v.log2(), x),
            map(|v| v.sin(), x),
            map(|v| v.cos(), x),
            map(|v| v.tanh(), x),
        )
    }

    #[parallel]
    pub fn math_f32_binary(
        x: &[f32],
        y: &[f32],
    ) -> (Vec<f32>, Vec<f32>, Vec<f32>, Vec<f32>, Vec<f32>, Vec<f32>) {
        (
            map(|a, b| a.abs().powf(b), x, y),
            map(|a| a.floor(), x),
            map(|a| a.ceil(), x),
            map(|a, b| a.min(b), x, y),
            map(|a, b| a.max(b), x, y),
            map(|a, b| a.mul_add(b, a), x, y),
        )
    }

    #[parallel]
    pub fn math_f64_assoc_unary(
        x: &[f64],
    ) -> (
        Vec<f64>,
        Vec<f64>,
        Vec<f64>,
        Vec<f64>,
        Vec<f64>,
        Vec<f64>,
        Vec<f64>,
        Vec<f64>,
    ) {
        (
            map(|v| f64::abs(v), x),
            map(|v| f64::sqrt(v), x),
            map(|v| f64::exp(v), x),
            map(|v| f64::ln(v), x),
            map(|v| f64::log2(v), x),
            map(|v| f64::sin(v), x),
            map(|v| f64::cos(v), x),
            map(|v| f64::tanh(v), x),
        )
    }

    #[parallel]
    pub fn math_f64_assoc_binary(
        x: &[f64],
        y: &[f64],
    ) -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>) {
        (
            map(|a, b| f64::powf(f64::abs(a), b), x, y),
            map(|a| f64::floor(a), x),
            map(|a| f64::ceil(a), x),
            map(|a, b| f64::min(a, b), x, y),
            map(|a, b| f64::max(a, b), x, y),
            map(|a, b| f64::mul_add(a, b, b), x, y),
        )
    }

    #[parallel]
    pub fn consts(x: &[f64], b: &[bool]) -> (Vec<f64>, Vec<i32>, Vec<u64>, Vec<f32>) {
        (
            map(
                |v| v * std::f64::consts::PI + f64::EPSILON - std::f64::consts::E,
                x,
            ),
            map(|c| if c { i32::MAX } else { i32::MIN }, b),
            map(|c| if c { u64::MAX } else { u64::MIN }, b),
            map(
                |v| {
                    if v > 0.0 {
                        f32::MAX
                    } else if v < -0.5 {
                        f32::MIN
                    } else {
                        f32::INFINITY
                    }
                },
                x,
            ),
        )
    }

    // ---- closures, nested fns, literals, shadowing, `&x`, indexing ----

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

    // ---- fused pipelines ----

    #[parallel]
    pub fn gathered_energy(x: &[f32], idx: &[u32]) -> f32 {
        sum(map(|v| v * v, gather(x, idx)))
    }

    #[parallel]
    pub fn prefix_of_squares(x: &[i64]) -> Vec<i64> {
        scan(|a, b| a + b, map(|v| v * v, x))
    }

    #[parallel]
    pub fn scan_then_gather(x: &[u32], idx: &[usize]) -> Vec<u32> {
        gather(scan(|a, b| a + b, x), idx)
    }

    #[parallel]
    pub fn count_large(x: &[f64], t: f64) -> usize {
        count(map(|v| v.abs() > t, x))
    }

    #[parallel]
    pub fn partition_by_flag(x: &[i32], flags: &[bool]) -> Vec<i32> {
        let falses = count(|f| !f, flags);
        let ones = map(|f| if f { 1usize } else { 0usize }, flags);
        let trues_before = exclusive_scan(|a, b| a + b, ones, 0usize);
        let dest = map(
            |f, i, t| if f { falses + t } else { i - t },
            flags,
            indices(flags),
            trues_before,
        );
        permute(x, dest)
    }

    #[parallel]
    pub fn mean_var(x: &[f64]) -> (f64, f64) {
        let n = len(x) as f64;
        let m = sum(x) / n;
        let v = sum(map(|v| (v - m) * (v - m), x)) / n;
        (m, v)
    }

    #[parallel]
    pub fn normalize_total(x: &[f32]) -> (Vec<f32>, f32) {
        let t = sum(x);
        (map(|v| v / t, x), t)
    }

    // ---- `-> Result<_, dpl::Error>` ----

    #[parallel]
    pub fn try_gather(x: &[f32], idx: &[u32]) -> Result<Vec<f32>, dpl::Error> {
        gather(x, idx)
    }

    #[parallel]
    pub fn try_min_max(x: &[i64]) -> Result<(i64, i64), Error> {
        (min(x), max(x))
    }

    // ---- more language: SPEC-spelled consts, sequences of tuples, float `%`, round/trunc,
    // ---- scalar-only bodies, lazy branches, nested tuples, segmented scans, ... ----

    #[parallel]
    pub fn spec_consts(x: &[f64]) -> (Vec<f64>, Vec<f32>) {
        (
            map(|v| v * f64::consts::PI, x),
            map(|v| v as f32 * std::f32::consts::E + f32::MIN_POSITIVE, x),
        )
    }

    #[parallel]
    pub fn zip_pairs(a: &[i32], b: &[u32]) -> Vec<(i32, u32)> {
        zip(a, b)
    }

    #[parallel]
    pub fn float_rem(a: &[f32], b: &[f64]) -> (Vec<f32>, Vec<f64>) {
        (map(|p| p % 0.75, a), map(|q| q % -2.5, b))
    }

    #[parallel]
    pub fn round_trunc(x: &[f32]) -> (Vec<f32>, Vec<f32>) {
        (map(|v| v.round(), x), map(|v| f32::trunc(v), x))
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
    pub fn scan_pairs(x: &[i64], flags: &[bool]) -> Vec<i64> {
        let segs = scan(
            |p, q| if q.1 { q } else { (p.0 + q.0, p.1 || q.1) },
            zip(x, flags),
        );
        map(|s| s.0, segs)
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
    pub fn int_assoc(a: &[i64], b: &[u32]) -> (Vec<i64>, Vec<u32>) {
        (
            map(|v| i64::abs(v), a),
            map(|v| u32::max(v, 7) + u32::min(v, 3), b),
        )
    }

    #[parallel]
    pub fn range_of_len(x: &[u32]) -> Vec<u32> {
        gather(x, map(|i| 2 * i, range(len(x) / 2)))
    }

    #[parallel]
    pub fn triple_reduce(x: &[f64]) -> (f64, f64, usize) {
        reduce(
            |p, q| (p.0.min(q.0), p.1.max(q.1), p.2 + q.2),
            map(|v| (v, v, 1usize), x),
            (f64::INFINITY, f64::NEG_INFINITY, 0usize),
        )
    }

    #[parallel]
    pub fn filter_pairs(a: &[f32], b: &[u32]) -> (Vec<f32>, Vec<u32>) {
        unzip(filter(|p| p.1 % 2 == 0, zip(a, b)))
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
    pub fn replicate_pairs(n: usize) -> (Vec<i32>, Vec<bool>) {
        unzip(replicate((7, true), n))
    }

    // ---- what could trip a code generator: names of generated code and of primitives,
    // ---- long chains, dead code, extreme literals, shared producers, repeated inputs ----

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
    pub fn long_chain(x: &[i32], idx: &[u32]) -> Vec<i32> {
        map(
            |v| v - 1,
            map(
                |v| v * 3,
                map(|v| v + 2, gather(scan(|a, b| a + b, x), idx)),
            ),
        )
    }

    #[parallel]
    pub fn dead_code(x: &[f64]) -> Vec<f64> {
        let unused = map(|v| v.sqrt(), x);
        let also_unused = sum(x);
        map(|v| v + 1.0, x)
    }

    #[parallel]
    pub fn big_literals(x: &[u64]) -> (Vec<u64>, Vec<i32>, Vec<u32>) {
        (
            map(|v| v ^ 18446744073709551615u64, x),
            map(|v| if v > 10 { -2147483648i32 } else { 2147483647 }, x),
            map(|v| (v as u32) / 3_000_000_000u32, x),
        )
    }

    #[parallel]
    pub fn neg_cast(x: &[i32]) -> (Vec<u32>, Vec<i64>) {
        (map(|v| -v as u32, x), map(|v| -(v as i64), x))
    }

    #[parallel]
    pub fn len_of_expr(x: &[i32]) -> (usize, usize) {
        (map(|v| v + 1, x).len(), filter(|v| v > 0, x).len())
    }

    #[parallel]
    pub fn shared_producer(x: &[f32]) -> (f32, f32, Vec<f32>) {
        let y = map(|v| v * v - 1.0, x);
        (
            reduce(|a, b| a.max(b), y, f32::NEG_INFINITY),
            reduce(|a, b| a.min(b), y, f32::INFINITY),
            y,
        )
    }

    #[parallel]
    pub fn same_input_twice(x: &[i64]) -> Vec<i64> {
        map(|a, b| a * b - a, x, x)
    }

    #[parallel]
    pub fn parity(b: &[bool]) -> bool {
        reduce(|p, q| p ^ q, b, false)
    }

    #[parallel]
    pub fn captured_init(x: &[u32], start: u32) -> (u32, Vec<u32>) {
        (
            reduce(|a, b| a + b, x, start),
            exclusive_scan(|a, b| a + b, x, start),
        )
    }

    #[parallel]
    pub fn unused_param(x: &[f32], _y: &[f64]) -> Vec<f32> {
        map(|v| -v, x)
    }

    #[parallel]
    pub fn filter_used_twice(x: &[i32]) -> (Vec<i32>, i32) {
        let kept = filter(|v| v % 2 != 0, x);
        (map(|v| v * 2, kept), sum(kept))
    }

    #[parallel]
    pub fn capture_in_operator(x: &[i64], bits: i64) -> i64 {
        let mask = (1i64 << bits) - 1;
        reduce(|a, b| (a + b) & mask, x, 0i64)
    }

    #[parallel]
    pub fn gather_of_filter(x: &[f64]) -> Vec<f64> {
        let big = filter(|i| x[i] > 0.5, indices(x));
        gather(map(|v| v * 2.0, x), big)
    }

    // ---- annotations, sequence-valued `if`, returning inputs and shared results, nested
    // ---- closures, methods on literals, module functions in any order ----

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
    pub fn replicate_u32_count(v: i64, n: u32) -> Vec<i64> {
        replicate(v, n as usize)
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

    #[parallel]
    pub fn literal_methods(x: &[f32]) -> Vec<f32> {
        map(|v| v * 2.0f32.sqrt() + (-1.5f32).abs(), x)
    }

    #[parallel]
    pub fn index_as_float(n: usize) -> Vec<f32> {
        map(|i| i as f32 * 0.5, range(n))
    }

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

    // ---- calls between the functions of a `#[parallel] mod` ----

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

// ===================================================================== checks =====

/// `|a, b| a OP b` applied element-wise to two slices, for the oracles.
fn zip_with<A: Copy, B: Copy, R>(a: &[A], b: &[B], f: impl Fn(A, B) -> R) -> Vec<R> {
    a.iter().zip(b).map(|(&x, &y)| f(x, y)).collect()
}

/// `f` applied to every element, for the oracles.
fn each<A: Copy, R>(a: &[A], mut f: impl FnMut(A) -> R) -> Vec<R> {
    a.iter().map(|&x| f(x)).collect()
}

fn square(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -1e3, 1e3);
        assert_same(&prog::square(&x), &each(&x, |v| v * v), "square");
    });
}

fn saxpy(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (x, y) = (rng.f32s(n, -10.0, 10.0), rng.f32s(n, -10.0, 10.0));
        let a = 2.5f32;
        assert_same(
            &prog::saxpy(a, &x, &y),
            &zip_with(&x, &y, |p, q| a * p + q),
            "saxpy",
        );
    });
}

fn fma3(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (x, y, z) = (
            rng.f32s(n, -10.0, 10.0),
            rng.f32s(n, -10.0, 10.0),
            rng.f32s(n, -10.0, 10.0),
        );
        let want: Vec<f32> = (0..n).map(|i| x[i].mul_add(y[i], z[i])).collect();
        assert_same(&prog::fma3(&x, &y, &z), &want, "fma3");
    });
}

fn cross4(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let [a, b, c, d] = [(); 4].map(|_| rng.i32s(n));
        let want: Vec<i32> = (0..n)
            .map(|i| {
                a[i].wrapping_mul(b[i])
                    .wrapping_sub(c[i].wrapping_mul(d[i]))
            })
            .collect();
        assert_same(&prog::cross4(&a, &b, &c, &d), &want, "cross4");
    });
}

fn bits5(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let [a, b, c, d, e] = [(); 5].map(|_| rng.u64s(n));
        let want: Vec<u64> = (0..n)
            .map(|i| ((a[i] ^ b[i]).wrapping_add(c[i] & d[i])) | (e[i] >> 3))
            .collect();
        assert_same(&prog::bits5(&a, &b, &c, &d, &e), &want, "bits5");
    });
}

fn dot6(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let [a, b, c, d, e, f] = [(); 6].map(|_| rng.f64s(n, -1e6, 1e6));
        let want: Vec<f64> = (0..n)
            .map(|i| a[i] * b[i] + c[i] * d[i] + e[i] * f[i])
            .collect();
        assert_same(&prog::dot6(&a, &b, &c, &d, &e, &f), &want, "dot6");
    });
}

fn mix7(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let [a, b, c, d, e, f, g] = [(); 7].map(|_| rng.i64s(n));
        let want: Vec<i64> = (0..n)
            .map(|i| {
                a[i].wrapping_sub(b[i].wrapping_mul(c[i]))
                    .wrapping_add(d[i] ^ e[i])
                    .wrapping_sub(f[i] | g[i])
            })
            .collect();
        assert_same(&prog::mix7(&a, &b, &c, &d, &e, &f, &g), &want, "mix7");
    });
}

fn all_types8(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let a = rng.f32s(n, -1e4, 1e4);
        let b = rng.f64s(n, -1e9, 1e9);
        let (c, d, e, f) = (rng.i32s(n), rng.u32s(n), rng.i64s(n), rng.u64s(n));
        let g = rng.bools(n);
        let h = rng.vec(n, |r| r.below(usize::MAX));
        let want: Vec<f64> = (0..n)
            .map(|i| {
                let ints = (c[i] as f64) + (d[i] as f64) - (e[i] as f64) * 0.5
                    + (f[i] as f64)
                    + (h[i] as f64);
                if g[i] {
                    a[i] as f64 + b[i] + ints
                } else {
                    b[i] - ints
                }
            })
            .collect();
        assert_same(
            &prog::all_types8(&a, &b, &c, &d, &e, &f, &g, &h),
            &want,
            "all_types8",
        );
    });
}

fn zip_dot(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (a, b) = (rng.f64s(n, -1.0, 1.0), rng.f64s(n, 0.0, 100.0));
        let (want, magnitude) = f64_sum(zip_with(&a, &b, |p, q| p * q));
        assert_reduced(prog::zip_dot(&a, &b), want, magnitude, n, "zip_dot");
    });
}

fn split_parts(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -1e4, 1e4);
        let (whole, frac) = prog::split_parts(&x);
        assert_same(&whole, &each(&x, f32::floor), "split_parts.0");
        assert_same(&frac, &each(&x, |v| v - v.floor()), "split_parts.1");
    });
}

fn swap_pairs(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (a, b) = (rng.i32s(n), rng.i32s(n));
        let (p, q) = prog::swap_pairs(&a, &b);
        assert_same(&p, &b, "swap_pairs.0");
        assert_same(&q, &a, "swap_pairs.1");
    });
}

fn gather_u32(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -1.0, 1.0);
        // Indices into `x`, more of them than elements, or none when `x` is empty.
        let idx = rng.indices(if n == 0 { 0 } else { n + n / 2 }, n);
        let want: Vec<f32> = idx.iter().map(|&i| x[i]).collect();
        assert_same(
            &prog::gather_u32(&x, &cast_indices::<u32>(&idx)),
            &want,
            "gather_u32",
        );
    });
}

fn gather_i64(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.u64s(n);
        let idx = rng.indices(if n == 0 { 0 } else { n / 3 + 1 }, n);
        let want: Vec<u64> = idx.iter().map(|&i| x[i]).collect();
        assert_same(
            &prog::gather_i64(&x, &cast_indices::<i64>(&idx)),
            &want,
            "gather_i64",
        );
    });
}

fn reverse(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i32s(n);
        let want: Vec<i32> = x.iter().rev().copied().collect();
        assert_same(&prog::reverse(&x), &want, "reverse");
    });
}

fn permute_i32(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i32s(n);
        let p = rng.permutation(n);
        let mut want = vec![0; n];
        for (i, &k) in p.iter().enumerate() {
            want[k] = x[i];
        }
        assert_same(
            &prog::permute_i32(&x, &cast_indices::<u32>(&p)),
            &want,
            "permute_i32",
        );
    });
}

fn scatter_f64(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let dst = rng.f64s(n, -1.0, 1.0);
        // Distinct targets (a prefix of a permutation), so the result is determined.
        let idx: Vec<usize> = rng.permutation(n).into_iter().take(n / 2 + n % 2).collect();
        let src = rng.f64s(idx.len(), 10.0, 20.0);
        let mut want = dst.clone();
        for (&k, &v) in idx.iter().zip(&src) {
            want[k] = v;
        }
        assert_same(&prog::scatter_f64(&src, &idx, &dst), &want, "scatter_f64");
    });
}

fn histogram(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let bins = 1 + n / 100;
        let keys = cast_indices::<u32>(&rng.indices(n, bins));
        let mut want = vec![0u32; bins];
        for &k in &keys {
            want[k as usize] += 1;
        }
        assert_same(&prog::histogram(&keys, bins), &want, "histogram");
    });
}

fn bucket_max(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let bins = 7 + n / 50;
        let vals = rng.f32s(n, -1e6, 1e6);
        let keys = cast_indices::<i32>(&rng.indices(n, bins));
        let mut want = vec![f32::MIN; bins];
        for (&k, &v) in keys.iter().zip(&vals) {
            want[k as usize] = want[k as usize].max(v);
        }
        assert_same(&prog::bucket_max(&vals, &keys, bins), &want, "bucket_max");
    });
}

fn sum_f32(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, 0.0, 1.0);
        let (want, magnitude) = f64_sum(x.iter().copied());
        assert_reduced(prog::sum_f32(&x), want, magnitude, n, "sum_f32");
    });
}

fn sum_i64(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i64s(n);
        let want = x.iter().fold(0i64, |a, &b| a.wrapping_add(b));
        assert_exact(prog::sum_i64(&x), want, "sum_i64");
    });
}

fn sum_u32(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.u32s(n);
        let want = x.iter().fold(0u32, |a, &b| a.wrapping_add(b));
        assert_exact(prog::sum_u32(&x), want, "sum_u32");
    });
}

fn min_max_i32(place: Place) {
    each_size(place, &NONEMPTY_SIZES, |n, rng| {
        let x = rng.vec(n, |r| r.int_in(-1_000_000..=1_000_000) as i32);
        let want = (*x.iter().min().unwrap(), *x.iter().max().unwrap());
        assert_exact(prog::min_max_i32(&x), want, "min_max_i32");
    });
}

fn min_max_f64(place: Place) {
    each_size(place, &NONEMPTY_SIZES, |n, rng| {
        let x = rng.f64s(n, -1e300, 1e300);
        let want = x
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                (lo.min(v), hi.max(v))
            });
        assert_exact(prog::min_max_f64(&x), want, "min_max_f64");
    });
}

fn min_max_u64(place: Place) {
    each_size(place, &NONEMPTY_SIZES, |n, rng| {
        let x = rng.u64s(n);
        let want = (*x.iter().min().unwrap(), *x.iter().max().unwrap());
        assert_exact(prog::min_max_u64(&x), want, "min_max_u64");
    });
}

fn any_all(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        // Mostly-true, mostly-false and mixed inputs, so `any` and `all` both vary.
        for density in [0, 1, 2, 1000] {
            let b = rng.vec(n, |r| r.below(1000) < density);
            let want = (b.iter().any(|&v| v), b.iter().all(|&v| v));
            assert_exact(prog::any_all(&b), want, "any_all (mostly false)");
            let nb: Vec<bool> = b.iter().map(|v| !v).collect();
            let want = (nb.iter().any(|&v| v), nb.iter().all(|&v| v));
            assert_exact(prog::any_all(&nb), want, "any_all (mostly true)");
        }
    });
}

fn any_all_pred(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.vec(n, |r| r.int_in(-1000..=1000) as i32);
        for t in [0, 990, 999, 1000, 2000] {
            let want = (x.iter().any(|&v| v > t), x.iter().all(|&v| v >= -t));
            assert_exact(
                prog::any_all_pred(&x, t),
                want,
                &format!("any_all_pred t={t}"),
            );
        }
    });
}

fn count_true(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let b = rng.bools(n);
        assert_exact(
            prog::count_true(&b),
            b.iter().filter(|&&v| v).count(),
            "count_true",
        );
    });
}

fn count_multiples(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.u64s(n);
        for k in [1, 3, 7, u64::MAX] {
            let want = x.iter().filter(|&&v| v % k == 0).count();
            assert_exact(
                prog::count_multiples(&x, k),
                want,
                &format!("count_multiples k={k}"),
            );
        }
    });
}

fn reduce_zip(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (a, b) = (rng.i64s(n), rng.i32s(n));
        let want = (
            a.iter().fold(0i64, |s, &v| s.wrapping_add(v)),
            b.iter().copied().fold(i32::MIN, i32::max),
        );
        assert_exact(prog::reduce_zip(&a, &b), want, "reduce_zip");
    });
}

fn product_u64(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        // Odd factors, so the wrapped product does not collapse to 0.
        let x = rng.vec(n, |r| r.u64() | 1);
        let want = x.iter().fold(1u64, |p, &v| p.wrapping_mul(v));
        assert_exact(prog::product_u64(&x), want, "product_u64");
    });
}

fn reduce_max_f32(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -1e30, 1e30);
        let want = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        assert_exact(prog::reduce_max_f32(&x), want, "reduce_max_f32");
    });
}

fn prefix_i32(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i32s(n);
        let want: Vec<i32> = x
            .iter()
            .scan(0i32, |s, &v| {
                *s = s.wrapping_add(v);
                Some(*s)
            })
            .collect();
        assert_same(&prog::prefix_i32(&x), &want, "prefix_i32");
    });
}

fn prefix_f64(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f64s(n, -1.0, 3.0);
        let (want, magnitude) = f64_prefix_sums(&x);
        assert_scanned(&prog::prefix_f64(&x), &want, &magnitude, "prefix_f64");
    });
}

fn running_max_u32(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.u32s(n);
        let mut m = 0u32;
        let want: Vec<u32> = x
            .iter()
            .map(|&v| {
                m = m.max(v);
                m
            })
            .collect();
        assert_same(&prog::running_max_u32(&x), &want, "running_max_u32");
    });
}

fn running_min_i64(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.vec(n, |r| r.int_in(-1 << 40..=1 << 40));
        let mut m = i64::MAX;
        let want: Vec<i64> = x
            .iter()
            .map(|&v| {
                m = m.min(v);
                m
            })
            .collect();
        assert_same(&prog::running_min_i64(&x), &want, "running_min_i64");
    });
}

fn offsets(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let counts = rng.vec(n, |r| r.below(20) as u32);
        let mut total = 0usize;
        let want: Vec<usize> = counts
            .iter()
            .map(|&c| {
                let before = total;
                total += c as usize;
                before
            })
            .collect();
        assert_same(&prog::offsets(&counts), &want, "offsets");
    });
}

fn exclusive_f32(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -2.0, 2.0);
        let init = 0.75f32;
        // The exclusive scan from `init` is the inclusive scan of [init, x[0], ..., x[n-2]].
        let shifted: Vec<f32> = std::iter::once(init)
            .chain(x.iter().copied())
            .take(n)
            .collect();
        let (want, magnitude) = f64_prefix_sums(&shifted);
        assert_scanned(
            &prog::exclusive_f32(&x, init),
            &want,
            &magnitude,
            "exclusive_f32",
        );
    });
}

fn positives(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -1.0, 1.0);
        let want: Vec<f32> = x.iter().copied().filter(|&v| v > 0.0).collect();
        assert_same(&prog::positives(&x), &want, "positives");
    });
}

fn even_triples(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i64s(n);
        let want: Vec<i64> = x
            .iter()
            .map(|v| v.wrapping_mul(3))
            .filter(|v| v % 2 == 0)
            .collect();
        assert_same(&prog::even_triples(&x), &want, "even_triples");
    });
}

fn set_positions(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let flags = rng.vec(n, |r| r.below(5) == 0);
        let want: Vec<usize> = (0..n).filter(|&i| flags[i]).collect();
        assert_same(&prog::set_positions(&flags), &want, "set_positions");
    });
}

fn doubled_odds(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.u32s(n);
        let want: Vec<u32> = x
            .iter()
            .filter(|&&v| v & 1 == 1)
            .map(|v| v.wrapping_mul(2))
            .collect();
        assert_same(&prog::doubled_odds(&x), &want, "doubled_odds");
    });
}

fn fill(place: Place) {
    each_size(place, &ALL_SIZES, |n, _| {
        assert_same(&prog::fill(-0.5, n), &vec![-0.5; n], "fill");
    });
}

fn squares(place: Place) {
    each_size(place, &ALL_SIZES, |n, _| {
        let want: Vec<u64> = (0..n as u64).map(|i| i * i).collect();
        assert_same(&prog::squares(n), &want, "squares");
    });
}

fn lengths(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, 0.0, 1.0);
        let y = rng.i32s(n / 2 + 3);
        assert_eq!(prog::lengths(&x, &y), (n, n / 2 + 3, n / 2 + 3), "lengths");
    });
}

fn usize_ops(place: Place) {
    each_size(place, &ALL_SIZES, |n, _| {
        let want: Vec<usize> = (0..n).map(|i| (i * 3 + 7) % (n + 1) / 2).collect();
        assert_same(&prog::usize_ops(n), &want, "usize_ops");
    });
}

fn piecewise(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (lo, hi) = (-1.5f32, 2.0f32);
        let mut x = rng.f32s(n, -4.0, 4.0);
        if n > 0 {
            x[0] = lo;
        }
        let want = each(&x, |v| {
            let (a, b) = (v - lo, hi - v);
            let clamped = if a < 0.0 {
                lo
            } else if b < 0.0 {
                hi
            } else {
                v
            };
            let t = clamped * 0.5 + clamped * 0.5;
            if a >= 0.0 && b >= 0.0 || v == lo {
                t
            } else {
                -t
            }
        });
        assert_same(&prog::piecewise(&x, lo, hi), &want, "piecewise");
    });
}

fn int_ops_i32(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (a, b) = (rng.i32s(n), rng.i32s(n));
        let want = zip_with(&a, &b, |p, q| {
            let d = if q < 0 { -((q & 15) + 1) } else { (q & 15) + 1 };
            let s = p.wrapping_add(q) ^ p.wrapping_sub(q) ^ p.wrapping_mul(q);
            let t = [
                p.wrapping_div(d),
                p.wrapping_rem(d),
                p.wrapping_shl(q as u32),
                p.wrapping_shr(q as u32),
                !p,
                q.wrapping_neg(),
                p | q,
                p & q,
            ]
            .into_iter()
            .fold(0i32, i32::wrapping_add);
            let c = [p == q, p != q, p < q, p <= q, p > q, p >= q]
                .iter()
                .enumerate()
                .map(|(k, &bit)| (bit as i32) << k)
                .sum::<i32>();
            s ^ t ^ c
        });
        assert_same(&prog::int_ops_i32(&a, &b), &want, "int_ops_i32");
    });
}

fn int_ops_u64(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (a, b) = (rng.u64s(n), rng.u64s(n));
        let want = zip_with(&a, &b, |p, q| {
            let d = (q & 255) + 1;
            let t = (p / d)
                .wrapping_add(p % d)
                .wrapping_add(p.wrapping_shl(q as u32))
                .wrapping_add(p.wrapping_shr(q as u32))
                .wrapping_add(!p)
                .wrapping_add(p | q)
                .wrapping_sub(p & q);
            let c = (p < q) as u64 + (p >= q) as u64 * 2 + (p == q) as u64 * 4;
            t ^ p.wrapping_mul(q) ^ c
        });
        assert_same(&prog::int_ops_u64(&a, &b), &want, "int_ops_u64");
    });
}

fn float_logic(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let a = rng.vec(n, |r| {
            r.edgy(&[0.0, -0.0, 1.0, 2.0], |r| r.f64_in(-3.0, 3.0))
        });
        let b = rng.vec(n, |r| {
            r.edgy(&[0.0, -0.0, -1.0, 2.0], |r| r.f64_in(-3.0, 3.0))
        });
        let want = zip_with(&a, &b, |p, q| {
            (p < q) != (p >= q * 0.5) || !(p == q) && p <= -q || p > 1.0 && p != q
        });
        assert_same(&prog::float_logic(&a, &b), &want, "float_logic");
    });
}

fn bool_logic(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (a, b) = (rng.bools(n), rng.bools(n));
        let (x, y) = prog::bool_logic(&a, &b);
        assert_same(
            &x,
            &zip_with(&a, &b, |p, q| (p & q) | (!p ^ q)),
            "bool_logic.0",
        );
        assert_same(
            &y,
            // `p != q` implies `p == !q`, so the program's expression is `p != q`.
            &zip_with(&a, &b, |p, q| p != q),
            "bool_logic.1",
        );
    });
}

/// Floats that exercise every rule of `as`: saturation, NaN to 0, infinities, signed zero,
/// rounding toward zero, and values beyond the integer ranges.
fn cast_inputs(n: usize, rng: &mut Rng) -> Vec<f64> {
    let special = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        -0.0,
        0.5,
        -0.5,
        -1.0,
        2147483647.5,
        -2147483649.0,
        4294967296.0,
        1e20,
        -1e20,
        16777217.0,
        f64::MAX,
    ];
    rng.vec(n, |r| r.edgy(&special, |r| r.f64_in(-1e12, 1e12)))
}

fn casts_from_f64(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = cast_inputs(n, rng);
        let (i, u, l, w, f, z) = prog::casts_from_f64(&x);
        assert_same(&i, &each(&x, |v| v as i32), "as i32");
        assert_same(&u, &each(&x, |v| v as u32), "as u32");
        assert_same(&l, &each(&x, |v| v as i64), "as i64");
        assert_same(&w, &each(&x, |v| v as u64), "as u64");
        assert_same(&f, &each(&x, |v| v as f32), "as f32");
        assert_same(&z, &each(&x, |v| v as usize), "as usize");
    });
}

fn casts_between_ints(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i64s(n);
        let (i, u, w, f, l, z) = prog::casts_between_ints(&x);
        assert_same(&i, &each(&x, |v| v as i32), "i64 as i32");
        assert_same(&u, &each(&x, |v| v as u32), "i64 as u32");
        assert_same(&w, &each(&x, |v| (v as i32) as u64), "i32 as u64");
        assert_same(&f, &each(&x, |v| v as f32), "i64 as f32");
        assert_same(
            &l,
            &each(&x, |v| ((v as u32) as i32) as i64 + (v > 0) as i64),
            "u32 as i32",
        );
        assert_same(
            &z,
            &each(&x, |v| (v as usize) as u64 ^ (v != 0) as u64),
            "as usize",
        );
    });
}

fn wrapping_i32(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i32s(n);
        let want = each(&x, |v| {
            v.wrapping_mul(65537)
                .wrapping_add(i32::MAX)
                .wrapping_neg()
                .wrapping_sub(v.wrapping_abs())
        });
        assert_same(&prog::wrapping_i32(&x), &want, "wrapping_i32");
    });
}

fn wrapping_u32(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.u32s(n);
        let want = each(&x, |v| {
            v.wrapping_mul(3)
                .wrapping_add(u32::MAX)
                .wrapping_sub(v << 7)
        });
        assert_same(&prog::wrapping_u32(&x), &want, "wrapping_u32");
    });
}

fn div_rem_i64(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let a = rng.i64s(n);
        // Non-zero divisors, with -1 often enough to meet i64::MIN (which wraps).
        let b = rng.vec(n, |r| {
            r.edgy(&[-1, 1, 7, -7, i64::MAX, i64::MIN], |r| {
                r.int_in(1..=1000) * if r.bool() { 1 } else { -1 }
            })
        });
        let (q, m) = prog::div_rem_i64(&a, &b);
        assert_same(&q, &zip_with(&a, &b, i64::wrapping_div), "div");
        assert_same(&m, &zip_with(&a, &b, i64::wrapping_rem), "rem");
    });
}

fn int_math(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (a, b) = (rng.i32s(n), rng.i32s(n));
        let (abs, lo, hi) = prog::int_math(&a, &b);
        assert_same(&abs, &each(&a, i32::wrapping_abs), "abs");
        assert_same(&lo, &zip_with(&a, &b, i32::min), "min");
        assert_same(&hi, &zip_with(&a, &b, i32::max), "max");
    });
}

fn math_f32_unary(place: Place) {
    let ulps = math_ulps(place);
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -20.0, 20.0);
        let (abs, sqrt, exp, ln, log2, sin, cos, tanh) = prog::math_f32_unary(&x);
        assert_same(&abs, &each(&x, f32::abs), "abs");
        assert_ulps(&sqrt, &each(&x, f32::sqrt), ulps, "sqrt");
        assert_ulps(&exp, &each(&x, f32::exp), ulps, "exp");
        assert_ulps(&ln, &each(&x, f32::ln), ulps, "ln");
        assert_ulps(&log2, &each(&x, f32::log2), ulps, "log2");
        assert_ulps(&sin, &each(&x, f32::sin), ulps, "sin");
        assert_ulps(&cos, &each(&x, f32::cos), ulps, "cos");
        assert_ulps(&tanh, &each(&x, f32::tanh), ulps, "tanh");
    });
}

fn math_f32_binary(place: Place) {
    let ulps = math_ulps(place);
    each_size(place, &ALL_SIZES, |n, rng| {
        let (x, y) = (rng.f32s(n, -50.0, 50.0), rng.f32s(n, -3.0, 3.0));
        let (pow, floor, ceil, lo, hi, fma) = prog::math_f32_binary(&x, &y);
        assert_ulps(
            &pow,
            &zip_with(&x, &y, |a, b| a.abs().powf(b)),
            ulps,
            "powf",
        );
        assert_same(&floor, &each(&x, f32::floor), "floor");
        assert_same(&ceil, &each(&x, f32::ceil), "ceil");
        assert_same(&lo, &zip_with(&x, &y, f32::min), "min");
        assert_same(&hi, &zip_with(&x, &y, f32::max), "max");
        assert_same(&fma, &zip_with(&x, &y, |a, b| a.mul_add(b, a)), "mul_add");
    });
}

fn math_f64_assoc_unary(place: Place) {
    let ulps = math_ulps(place);
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f64s(n, -30.0, 30.0);
        let (abs, sqrt, exp, ln, log2, sin, cos, tanh) = prog::math_f64_assoc_unary(&x);
        assert_same(&abs, &each(&x, f64::abs), "abs");
        assert_ulps(&sqrt, &each(&x, f64::sqrt), ulps, "sqrt");
        assert_ulps(&exp, &each(&x, f64::exp), ulps, "exp");
        assert_ulps(&ln, &each(&x, f64::ln), ulps, "ln");
        assert_ulps(&log2, &each(&x, f64::log2), ulps, "log2");
        assert_ulps(&sin, &each(&x, f64::sin), ulps, "sin");
        assert_ulps(&cos, &each(&x, f64::cos), ulps, "cos");
        assert_ulps(&tanh, &each(&x, f64::tanh), ulps, "tanh");
    });
}

fn math_f64_assoc_binary(place: Place) {
    let ulps = math_ulps(place);
    each_size(place, &ALL_SIZES, |n, rng| {
        let (x, y) = (rng.f64s(n, -50.0, 50.0), rng.f64s(n, -3.0, 3.0));
        let (pow, floor, ceil, lo, hi, fma) = prog::math_f64_assoc_binary(&x, &y);
        assert_ulps(
            &pow,
            &zip_with(&x, &y, |a, b| a.abs().powf(b)),
            ulps,
            "powf",
        );
        assert_same(&floor, &each(&x, f64::floor), "floor");
        assert_same(&ceil, &each(&x, f64::ceil), "ceil");
        assert_same(&lo, &zip_with(&x, &y, f64::min), "min");
        assert_same(&hi, &zip_with(&x, &y, f64::max), "max");
        assert_same(&fma, &zip_with(&x, &y, |a, b| a.mul_add(b, b)), "mul_add");
    });
}

fn consts(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f64s(n, -1.0, 1.0);
        let b = rng.bools(n);
        let (f, i, u, g) = prog::consts(&x, &b);
        let pi_e = each(&x, |v| {
            v * std::f64::consts::PI + f64::EPSILON - std::f64::consts::E
        });
        assert_same(&f, &pi_e, "PI, EPSILON, E");
        assert_same(
            &i,
            &each(&b, |c| if c { i32::MAX } else { i32::MIN }),
            "i32::MAX/MIN",
        );
        assert_same(
            &u,
            &each(&b, |c| if c { u64::MAX } else { 0 }),
            "u64::MAX/MIN",
        );
        let big = each(&x, |v| {
            if v > 0.0 {
                f32::MAX
            } else if v < -0.5 {
                f32::MIN
            } else {
                f32::INFINITY
            }
        });
        assert_same(&g, &big, "f32::MAX/MIN/INFINITY");
    });
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

fn gathered_energy(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -2.0, 2.0);
        let idx = rng.indices(if n == 0 { 0 } else { 2 * n }, n);
        let (want, magnitude) = f64_sum(idx.iter().map(|&i| x[i] * x[i]));
        let got = prog::gathered_energy(&x, &cast_indices::<u32>(&idx));
        assert_reduced(got, want, magnitude, idx.len(), "gathered_energy");
    });
}

fn prefix_of_squares(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i64s(n);
        let mut s = 0i64;
        let want = each(&x, |v| {
            s = s.wrapping_add(v.wrapping_mul(v));
            s
        });
        assert_same(&prog::prefix_of_squares(&x), &want, "prefix_of_squares");
    });
}

fn scan_then_gather(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.u32s(n);
        let idx = rng.indices(if n == 0 { 0 } else { n / 2 + 1 }, n);
        let prefix: Vec<u32> = x
            .iter()
            .scan(0u32, |s, &v| {
                *s = s.wrapping_add(v);
                Some(*s)
            })
            .collect();
        let want: Vec<u32> = idx.iter().map(|&i| prefix[i]).collect();
        assert_same(&prog::scan_then_gather(&x, &idx), &want, "scan_then_gather");
    });
}

fn count_large(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f64s(n, -10.0, 10.0);
        for t in [0.0, 5.0, 9.99, 10.0] {
            let want = x.iter().filter(|v| v.abs() > t).count();
            assert_exact(
                prog::count_large(&x, t),
                want,
                &format!("count_large t={t}"),
            );
        }
    });
}

fn partition_by_flag(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i32s(n);
        let flags = rng.bools(n);
        let (mut want, trues): (Vec<i32>, Vec<i32>) =
            (0..n)
                .map(|i| (x[i], flags[i]))
                .fold((vec![], vec![]), |(mut f, mut t), (v, flag)| {
                    if flag {
                        t.push(v)
                    } else {
                        f.push(v)
                    }
                    (f, t)
                });
        want.extend(trues);
        assert_same(
            &prog::partition_by_flag(&x, &flags),
            &want,
            "partition_by_flag",
        );
    });
}

fn mean_var(place: Place) {
    each_size(place, &NONEMPTY_SIZES, |n, rng| {
        let x = rng.f64s(n, 10.0, 20.0);
        let (m, v) = prog::mean_var(&x);
        let nf = n as f64;
        let (total, magnitude) = f64_sum(x.iter().copied());
        assert_reduced(m, total / nf, magnitude / nf, n, "mean");
        // The variance is checked given the mean the program computed.
        let (sq, sq_magnitude) = f64_sum(x.iter().map(|&e| (e - m) * (e - m)));
        assert_reduced(v, sq / nf, sq_magnitude / nf, n, "variance");
    });
}

fn normalize_total(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, 0.0, 1.0);
        let (shares, t) = prog::normalize_total(&x);
        let (total, magnitude) = f64_sum(x.iter().copied());
        assert_reduced(t, total, magnitude, n, "total");
        assert_same(&shares, &each(&x, |v| v / t), "shares");
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

fn spec_consts(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f64s(n, -10.0, 10.0);
        let (a, b) = prog::spec_consts(&x);
        assert_same(
            &a,
            &each(&x, |v| v * std::f64::consts::PI),
            "f64::consts::PI",
        );
        let want = each(&x, |v| v as f32 * std::f32::consts::E + f32::MIN_POSITIVE);
        assert_same(&b, &want, "std::f32::consts::E");
    });
}

fn zip_pairs(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (a, b) = (rng.i32s(n), rng.u32s(n));
        assert_same(
            &prog::zip_pairs(&a, &b),
            &zip_with(&a, &b, |p, q| (p, q)),
            "zip_pairs",
        );
    });
}

fn float_rem(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (a, b) = (rng.f32s(n, -100.0, 100.0), rng.f64s(n, -1e6, 1e6));
        let (p, q) = prog::float_rem(&a, &b);
        assert_same(&p, &each(&a, |v| v % 0.75), "f32 %");
        assert_same(&q, &each(&b, |v| v % -2.5), "f64 %");
    });
}

fn round_trunc(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.vec(n, |r| {
            r.edgy(&[0.5, -0.5, 1.5, -2.5], |r| r.f32_in(-1e3, 1e3))
        });
        let (r, t) = prog::round_trunc(&x);
        assert_same(&r, &each(&x, f32::round), "round");
        assert_same(&t, &each(&x, f32::trunc), "trunc");
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

fn scan_pairs(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.vec(n, |r| r.int_in(-1000..=1000));
        let flags = rng.vec(n, |r| r.below(50) == 0);
        let mut s = 0;
        let want: Vec<i64> = (0..n)
            .map(|i| {
                s = if i == 0 || flags[i] { x[i] } else { s + x[i] };
                s
            })
            .collect();
        assert_same(&prog::scan_pairs(&x, &flags), &want, "segmented scan");
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

fn int_assoc(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (a, b) = (rng.i64s(n), rng.u32s(n));
        let (p, q) = prog::int_assoc(&a, &b);
        assert_same(&p, &each(&a, i64::wrapping_abs), "i64::abs");
        assert_same(
            &q,
            &each(&b, |v| v.max(7).wrapping_add(v.min(3))),
            "u32::max, u32::min",
        );
    });
}

fn range_of_len(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.u32s(n);
        let want: Vec<u32> = x.iter().step_by(2).take(n / 2).copied().collect();
        assert_same(&prog::range_of_len(&x), &want, "range_of_len");
    });
}

fn triple_reduce(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f64s(n, -1e9, 1e9);
        let lo = x.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(prog::triple_reduce(&x), (lo, hi, n), "triple_reduce");
    });
}

fn filter_pairs(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (a, b) = (rng.f32s(n, -1.0, 1.0), rng.u32s(n));
        let (p, q) = prog::filter_pairs(&a, &b);
        let keep: Vec<usize> = (0..n).filter(|&i| b[i] % 2 == 0).collect();
        assert_same(
            &p,
            &keep.iter().map(|&i| a[i]).collect::<Vec<_>>(),
            "filter_pairs.0",
        );
        assert_same(
            &q,
            &keep.iter().map(|&i| b[i]).collect::<Vec<_>>(),
            "filter_pairs.1",
        );
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

fn replicate_pairs(place: Place) {
    each_size(place, &ALL_SIZES, |n, _| {
        assert_eq!(
            prog::replicate_pairs(n),
            (vec![7; n], vec![true; n]),
            "replicate_pairs"
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

fn long_chain(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i32s(n);
        let idx = rng.indices(if n == 0 { 0 } else { n / 2 + 3 }, n);
        let mut s = 0i32;
        let prefix = each(&x, |v| {
            s = s.wrapping_add(v);
            s
        });
        let want: Vec<i32> = idx
            .iter()
            .map(|&k| prefix[k].wrapping_add(2).wrapping_mul(3).wrapping_sub(1))
            .collect();
        assert_same(
            &prog::long_chain(&x, &cast_indices::<u32>(&idx)),
            &want,
            "long_chain",
        );
    });
}

fn dead_code(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f64s(n, -1.0, 1.0);
        assert_same(&prog::dead_code(&x), &each(&x, |v| v + 1.0), "dead_code");
    });
}

fn big_literals(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.u64s(n);
        let (a, b, c) = prog::big_literals(&x);
        assert_same(&a, &each(&x, |v| !v), "u64::MAX literal");
        assert_same(
            &b,
            &each(&x, |v| if v > 10 { i32::MIN } else { i32::MAX }),
            "i32::MIN literal",
        );
        assert_same(
            &c,
            &each(&x, |v| (v as u32) / 3_000_000_000),
            "3e9u32 literal",
        );
    });
}

fn neg_cast(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i32s(n);
        let (a, b) = prog::neg_cast(&x);
        assert_same(&a, &each(&x, |v| v.wrapping_neg() as u32), "-v as u32");
        assert_same(&b, &each(&x, |v| -(v as i64)), "-(v as i64)");
    });
}

fn len_of_expr(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i32s(n);
        let want = (n, x.iter().filter(|&&v| v > 0).count());
        assert_eq!(prog::len_of_expr(&x), want, "len_of_expr");
    });
}

fn shared_producer(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -3.0, 3.0);
        let y = each(&x, |v| v * v - 1.0);
        let (hi, lo, got) = prog::shared_producer(&x);
        assert_exact(
            hi,
            y.iter().copied().fold(f32::NEG_INFINITY, f32::max),
            "max",
        );
        assert_exact(lo, y.iter().copied().fold(f32::INFINITY, f32::min), "min");
        assert_same(&got, &y, "y");
    });
}

fn same_input_twice(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i64s(n);
        let want = each(&x, |v| v.wrapping_mul(v).wrapping_sub(v));
        assert_same(&prog::same_input_twice(&x), &want, "same_input_twice");
    });
}

fn parity(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let b = rng.bools(n);
        assert_exact(
            prog::parity(&b),
            b.iter().fold(false, |p, &q| p ^ q),
            "parity",
        );
    });
}

fn captured_init(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.u32s(n);
        let start = 123_456_789u32;
        let mut s = start;
        let scanned = each(&x, |v| {
            let before = s;
            s = s.wrapping_add(v);
            before
        });
        let (total, got) = prog::captured_init(&x, start);
        assert_exact(total, s, "reduce from a parameter");
        assert_same(&got, &scanned, "exclusive_scan from a parameter");
    });
}

fn unused_param(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -1.0, 1.0);
        assert_same(
            &prog::unused_param(&x, &[1.0]),
            &each(&x, |v| -v),
            "unused_param",
        );
    });
}

fn filter_used_twice(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i32s(n);
        let kept: Vec<i32> = x.iter().copied().filter(|v| v % 2 != 0).collect();
        let (doubled, total) = prog::filter_used_twice(&x);
        assert_same(&doubled, &each(&kept, |v| v.wrapping_mul(2)), "doubled");
        assert_exact(
            total,
            kept.iter().fold(0i32, |a, &b| a.wrapping_add(b)),
            "sum",
        );
    });
}

fn capture_in_operator(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i64s(n);
        for bits in [1, 13, 62] {
            let mask = (1i64 << bits) - 1;
            let want = x.iter().fold(0i64, |a, &b| a.wrapping_add(b) & mask);
            assert_exact(
                prog::capture_in_operator(&x, bits),
                want,
                &format!("bits = {bits}"),
            );
        }
    });
}

fn gather_of_filter(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f64s(n, 0.0, 1.0);
        let want: Vec<f64> = x.iter().filter(|&&v| v > 0.5).map(|v| v * 2.0).collect();
        assert_same(&prog::gather_of_filter(&x), &want, "gather_of_filter");
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

fn replicate_u32_count(place: Place) {
    each_size(place, &ALL_SIZES, |n, _| {
        assert_same(
            &prog::replicate_u32_count(-9, n as u32),
            &vec![-9; n],
            "replicate",
        );
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

fn literal_methods(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -10.0, 10.0);
        let want = each(&x, |v| v * 2.0f32.sqrt() + 1.5);
        assert_same(&prog::literal_methods(&x), &want, "literal_methods");
    });
}

fn index_as_float(place: Place) {
    each_size(place, &ALL_SIZES, |n, _| {
        let want: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
        assert_same(&prog::index_as_float(n), &want, "index_as_float");
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

on_every_place!(
    square,
    saxpy,
    fma3,
    cross4,
    bits5,
    dot6,
    mix7,
    all_types8,
    zip_dot,
    split_parts,
    swap_pairs,
    gather_u32,
    gather_i64,
    reverse,
    permute_i32,
    scatter_f64,
    histogram,
    bucket_max,
    sum_f32,
    sum_i64,
    sum_u32,
    min_max_i32,
    min_max_f64,
    min_max_u64,
    any_all,
    any_all_pred,
    count_true,
    count_multiples,
    reduce_zip,
    product_u64,
    reduce_max_f32,
    prefix_i32,
    prefix_f64,
    running_max_u32,
    running_min_i64,
    offsets,
    exclusive_f32,
    positives,
    even_triples,
    set_positions,
    doubled_odds,
    fill,
    squares,
    lengths,
    usize_ops,
    piecewise,
    int_ops_i32,
    int_ops_u64,
    float_logic,
    bool_logic,
    casts_from_f64,
    casts_between_ints,
    wrapping_i32,
    wrapping_u32,
    div_rem_i64,
    int_math,
    math_f32_unary,
    math_f32_binary,
    math_f64_assoc_unary,
    math_f64_assoc_binary,
    consts,
    closures,
    nested_fns,
    literals,
    shadowing,
    by_reference,
    index_types,
    ends,
    neighbours,
    gathered_energy,
    prefix_of_squares,
    scan_then_gather,
    count_large,
    partition_by_flag,
    mean_var,
    normalize_total,
    try_gather,
    try_min_max,
    module_calls,
    spec_consts,
    zip_pairs,
    float_rem,
    round_trunc,
    scalar_only,
    branch_on_reduction,
    nested_tuples,
    scan_pairs,
    seq_nested_fn,
    literal_index,
    int_assoc,
    range_of_len,
    triple_reduce,
    filter_pairs,
    closure_returns_tuple,
    replicate_pairs,
    hygiene,
    named_like_prims,
    long_chain,
    dead_code,
    big_literals,
    neg_cast,
    len_of_expr,
    shared_producer,
    same_input_twice,
    parity,
    captured_init,
    unused_param,
    filter_used_twice,
    capture_in_operator,
    gather_of_filter,
    annotated,
    seq_valued_if,
    identity,
    twice,
    replicate_u32_count,
    nested_closure,
    literal_methods,
    index_as_float,
    module_order,
);

/// Calls from many threads at once, and from inside rayon tasks (nested parallelism), on
/// both CPU places: every call returns its own correct result and nothing deadlocks.
#[test]
fn concurrent_and_nested_calls() {
    use rayon::prelude::*;
    let inputs: Vec<(Vec<f32>, Vec<f32>)> = (0..8)
        .map(|k| {
            let mut rng = Rng::new(k);
            let n = if k % 2 == 0 { BIG / 4 } else { 1001 };
            (rng.f32s(n, -1.0, 1.0), rng.f32s(n, -1.0, 1.0))
        })
        .collect();
    let expected: Vec<Vec<f32>> = inputs
        .iter()
        .map(|(x, y)| zip_with(x, y, |p, q| 1.5 * p + q))
        .collect();
    std::thread::scope(|s| {
        for (k, ((x, y), want)) in inputs.iter().zip(&expected).enumerate() {
            let place = if k % 3 == 0 { Place::Seq } else { Place::Cpu };
            s.spawn(move || {
                for _ in 0..3 {
                    let got = dpl::with_place(place, || prog::saxpy(1.5, x, y));
                    assert_same(&got, want, &format!("thread {k} on {place:?}"));
                }
            });
        }
    });
    // Inside rayon tasks the CPU place's own parallel loops nest in the same pool.
    inputs
        .par_iter()
        .zip(&expected)
        .enumerate()
        .for_each(|(k, ((x, y), want))| {
            let got = dpl::with_place(Place::Cpu, || prog::saxpy(1.5, x, y));
            assert_same(&got, want, &format!("rayon task {k}"));
        });
}
