//! End to end on the simulated GPU: IR programs (text form) go through the pipeline, the
//! fused function is compiled to PTX and a plan, run on dpl-sim with random inputs of
//! several sizes, and compared with the reference interpreter on the same function:
//! integers exactly, floats bit-exactly for element-wise results, with a relative
//! tolerance where a reduction or scan may be reassociated; errors exactly.

mod support;

use std::sync::OnceLock;

use dpl_core::interp::{self, Value};
use dpl_cuda::sim::SimDriver;
use support::programs::source;
use support::*;

const SIZES: [usize; 7] = [0, 1, 31, 32, 33, 1000, 100_000];

fn driver() -> &'static SimDriver {
    static D: OnceLock<SimDriver> = OnceLock::new();
    D.get_or_init(SimDriver::default)
}

/// Runs `src` on inputs from `gen` for every size and compares with the interpreter;
/// returns how many runs ended in an error (the same error on both sides).
fn check_sizes(
    src: &str,
    sizes: &[usize],
    rel: f64,
    seed: u64,
    generate: impl Fn(&mut Rng, usize) -> Vec<Value>,
) -> usize {
    let c = compiled(src);
    let prog = dpl_cuda::compile(&c.fused).unwrap_or_else(|e| panic!("{e}\n{}", c.fused));
    let mut errors = 0;
    for &n in sizes {
        let mut r = Rng::new(seed ^ (n as u64).wrapping_mul(0x1234_5678_9abc));
        let args = generate(&mut r, n);
        let want = interp::run(&c.fused, args.clone());
        let got = dpl_cuda::run(&prog, driver(), args);
        match (&want, &got) {
            (Ok(w), Ok(g)) => assert!(
                w.close_to(g, rel),
                "{} at n = {n}: {}\n want {}\n  got {}\n{}",
                c.fused.name,
                first_diff(w, g, rel),
                short(w),
                short(g),
                c.fused
            ),
            (Err(w), Err(g)) => {
                errors += 1;
                let w = w
                    .to_run_error(dpl_cuda::UNKNOWN_LOCATION)
                    .unwrap_or_else(|| panic!("interpreter failed: {w}"));
                assert_eq!(&w, g, "{} at n = {n}", c.fused.name);
            }
            _ => panic!(
                "{} at n = {n}: want {want:?}, got {:?}\n{}",
                c.fused.name,
                got.map(|v| short(&v)),
                c.fused
            ),
        }
    }
    errors
}

fn check(src: &str, rel: f64, generate: impl Fn(&mut Rng, usize) -> Vec<Value>) -> usize {
    check_sizes(src, &SIZES, rel, 7, generate)
}

#[test]
fn saxpy() {
    check(source("saxpy"), 0.0, |r, n| {
        vec![Value::F32(1.5), f32s(r, n, 100.0), f32s(r, n, 100.0)]
    });
}

/// Loops in each thread: a data-dependent trip count (Collatz steps, up to 1000), and a
/// counted loop whose body swaps its variables (Fibonacci), against the interpreter.
#[test]
fn per_element_loops() {
    // Every thread runs up to a thousand iterations: 10,000 elements (40 blocks) instead
    // of the usual 100,000 keep the simulation to seconds.
    const LOOP_SIZES: [usize; 7] = [0, 1, 31, 32, 33, 1000, 10_000];
    check_sizes(source("loop_collatz"), &LOOP_SIZES, 0.0, 7, |r, n| {
        vec![u32s(r, n, 1, 1 << 20)]
    });
    check_sizes(source("loop_fib"), &LOOP_SIZES, 0.0, 7, |r, n| {
        vec![u32s(r, n, 0, 1 << 30)]
    });
}

#[test]
fn sum_i64() {
    check(source("sum_i64"), 0.0, |r, n| {
        vec![i64s(r, n, i64::MIN, i64::MAX)]
    });
}

#[test]
fn dot_f64() {
    check(source("dot"), 1e-12, |r, n| {
        vec![f64s(r, n, 10.0), f64s(r, n, 10.0)]
    });
}

#[test]
fn sum_f32() {
    check(source("sum_f32"), 1e-4, |r, n| vec![f32s(r, n, 1.0)]);
}

#[test]
fn sum_map_gather() {
    check(source("sum_map_gather"), 0.0, |r, n| {
        let m = n / 2 + 1;
        vec![i64s(r, m, -1 << 40, 1 << 40), indices(r, n, m)]
    });
}

#[test]
fn gather_out_of_range_is_the_first_bad_index() {
    let errors = check(source("sum_map_gather"), 0.0, |r, n| {
        let m = n / 2 + 1;
        let mut idx: Vec<usize> = (0..n).map(|_| (r.u64() % m as u64) as usize).collect();
        // Two bad indices: the earlier one must be reported, whatever the schedule.
        if n > 3 {
            idx[n - 2] = m + 5;
            idx[n / 3] = m + 7;
        }
        vec![i64s(r, m, -100, 100), usizes(idx)]
    });
    assert_eq!(errors, 5);
}

#[test]
fn filter_of_map() {
    check(source("filter_of_map"), 0.0, |r, n| {
        vec![i64s(r, n, -1000, 1000)]
    });
}

#[test]
fn filter_keeps_nothing_or_everything() {
    check(source("filter_none_or_all"), 0.0, |r, n| {
        vec![u32s(r, n, 0, 100), Value::U32(100)]
    });
    check(source("filter_none_or_all"), 0.0, |r, n| {
        vec![u32s(r, n, 0, 100), Value::U32(0)]
    });
    check(source("filter_none_or_all"), 0.0, |r, n| {
        vec![u32s(r, n, 0, 100), Value::U32(50)]
    });
}

#[test]
fn scan_of_map() {
    check(source("scan_of_map"), 0.0, |r, n| {
        vec![i64s(r, n, i64::MIN, i64::MAX)]
    });
}

#[test]
fn exclusive_scan_max() {
    check(source("exclusive_scan_max"), 0.0, |r, n| {
        vec![i64s(r, n, -1_000_000, 1_000_000), Value::I64(-5000)]
    });
}

#[test]
fn float_scan() {
    check(source("float_scan"), 1e-10, |r, n| vec![f64s(r, n, 100.0)]);
}

#[test]
fn scan_keeps_the_order_of_a_non_commutative_operator() {
    check(source("affine_scan"), 0.0, |r, n| {
        vec![i64s(r, n, -3, 4), i64s(r, n, -100, 100)]
    });
}

#[test]
fn exclusive_scan_of_pairs() {
    check(source("affine_exclusive_scan"), 0.0, |r, n| {
        vec![
            i64s(r, n, -3, 4),
            i64s(r, n, -100, 100),
            Value::Tuple(vec![Value::I64(1), Value::I64(7)]),
        ]
    });
}

#[test]
fn reduce_of_pairs() {
    check(source("reduce_of_zip"), 0.0, |r, n| {
        vec![i64s(r, n, -1000, 1000), i64s(r, n, -1000, 1000)]
    });
}

#[test]
fn length_mismatch() {
    let errors = check(source("reduce_of_zip"), 0.0, |r, n| {
        vec![i64s(r, n, -10, 10), i64s(r, n + 1, -10, 10)]
    });
    assert_eq!(errors, SIZES.len());
}

#[test]
fn min_max_and_empty() {
    let errors = check(source("min_max_of_map"), 0.0, |r, n| {
        vec![i64s(r, n, i64::MIN / 4, i64::MAX / 4)]
    });
    assert_eq!(errors, 1, "min of nothing is an error");
}

#[test]
fn min_f64() {
    check(source("min_f64"), 0.0, |r, n| vec![f64s(r, n, 1e6)]);
}

#[test]
fn count_any_all() {
    check(source("count_any_all_pred"), 0.0, |r, n| {
        vec![i64s(r, n, -1000, 1000)]
    });
}

#[test]
fn bool_sequences() {
    check(source("bools"), 0.0, |r, n| vec![i32s(r, n, -100, 100)]);
}

#[test]
fn scatter_distinct_indices() {
    check(source("scatter_of_map"), 0.0, |r, n| {
        let d = n + n / 3;
        let mut p = r.permutation(d);
        p.truncate(n);
        vec![i64s(r, n, -100, 100), usizes(p), i64s(r, d, -100, 100)]
    });
}

#[test]
fn scatter_out_of_range() {
    let errors = check(source("scatter_of_map"), 0.0, |r, n| {
        let d = n + 2;
        let mut p = r.permutation(d);
        p.truncate(n);
        if n > 2 {
            p[n - 1] = d + 3;
            p[n / 2] = d;
        }
        vec![i64s(r, n, -100, 100), usizes(p), i64s(r, d, -100, 100)]
    });
    assert_eq!(errors, 5);
}

#[test]
fn histogram_i64_atomics() {
    check(source("histogram"), 0.0, |r, n| {
        vec![
            i64s(r, n, -100, 100),
            indices(r, n, 37),
            i64s(r, 37, -10, 10),
        ]
    });
}

#[test]
fn histogram_index_out_of_range() {
    let errors = check(source("histogram"), 0.0, |r, n| {
        let mut idx: Vec<usize> = (0..n).map(|_| (r.u64() % 10) as usize).collect();
        if n > 0 {
            idx[n / 2] = 10;
        }
        vec![i64s(r, n, -100, 100), usizes(idx), i64s(r, 10, -10, 10)]
    });
    assert_eq!(errors, 6);
}

#[test]
fn histogram_f32_atomics() {
    check(source("histogram_f32"), 1e-4, |r, n| {
        vec![f32s(r, n, 1.0), u32s(r, n, 0, 16), f32s(r, 16, 1.0)]
    });
}

#[test]
fn scatter_min_i32_and_negative_index() {
    check(source("scatter_min_i32"), 0.0, |r, n| {
        vec![
            i32s(r, n, -1000, 1000),
            i64s(r, n, 0, 50),
            i32s(r, 50, -10, 10),
        ]
    });
    let errors = check(source("scatter_min_i32"), 0.0, |r, n| {
        let mut idx: Vec<i64> = (0..n).map(|_| r.int_in(0..50)).collect();
        if n > 0 {
            idx[n - 1] = -3;
        }
        vec![i32s(r, n, -1000, 1000), seq(idx), i32s(r, 50, -10, 10)]
    });
    assert_eq!(errors, 6);
}

#[test]
fn scatter_reduce_with_cas_loops() {
    check(source("scatter_cas"), 0.0, |r, n| {
        let src = seq((0..n).map(|_| r.u64() | 1).collect::<Vec<u64>>());
        vec![
            src,
            indices(r, n, 20),
            seq((0..20).map(|_| r.u64()).collect::<Vec<u64>>()),
            f64s(r, n, 1e3),
            f64s(r, 20, 1e3),
        ]
    });
}

#[test]
fn permute() {
    check(source("permute_of_map"), 0.0, |r, n| {
        vec![i64s(r, n, -1000, 1000), usizes(r.permutation(n))]
    });
}

#[test]
fn permute_duplicates_and_out_of_range() {
    let errors = check(source("permute_of_map"), 0.0, |r, n| {
        let mut p = r.permutation(n);
        if n > 4 {
            // The later of the two equal indices is reported.
            p[n - 1] = p[n / 4];
            p[n - 2] = p[1];
        }
        vec![i64s(r, n, -1000, 1000), usizes(p)]
    });
    assert_eq!(errors, 5);
    let errors = check(source("permute_of_map"), 0.0, |r, n| {
        let mut p = r.permutation(n);
        if n > 4 {
            p[n / 2] = n + 1;
            p[n - 1] = p[0];
        }
        vec![i64s(r, n, -1000, 1000), usizes(p)]
    });
    assert_eq!(errors, 5);
}

#[test]
fn user_index_checked() {
    check(source("user_index"), 0.0, |r, n| {
        vec![i64s(r, 50, -9, 9), i64s(r, n, 0, 50)]
    });
    let errors = check(source("user_index"), 0.0, |r, n| {
        vec![i64s(r, 50, -9, 9), i64s(r, n, -2, 50)]
    });
    assert!(errors >= 4, "{errors}");
}

#[test]
fn nested_sum_sequential_per_thread() {
    check_sizes(source("nested_sum"), &[0, 1, 33, 1000], 0.0, 3, |r, n| {
        vec![i64s(r, n, -100, 100), i64s(r, 40, -100, 100)]
    });
}

#[test]
fn nested_min_and_empty_rows() {
    check_sizes(source("nested_min"), &[0, 1, 33, 1000], 0.0, 5, |r, n| {
        vec![f64s(r, n, 10.0), f64s(r, 17, 10.0)]
    });
    let errors = check_sizes(source("nested_min"), &[1, 33, 1000], 0.0, 5, |r, n| {
        vec![f64s(r, n, 10.0), f64s(r, 0, 10.0)]
    });
    assert_eq!(errors, 3);
}

#[test]
fn nested_count_gather() {
    check_sizes(
        source("nested_count_gather"),
        &[0, 1, 33, 1000],
        0.0,
        9,
        |r, n| {
            vec![
                i64s(r, n, -100, 100),
                i64s(r, 30, -100, 100),
                indices(r, 25, 30),
            ]
        },
    );
    let errors = check_sizes(
        source("nested_count_gather"),
        &[1, 33, 1000],
        0.0,
        9,
        |r, n| {
            vec![
                i64s(r, n, -100, 100),
                i64s(r, 30, -100, 100),
                usizes(vec![1, 2, 30, 4]),
            ]
        },
    );
    assert_eq!(errors, 3);
}

#[test]
fn if_in_lambda() {
    check_sizes(
        source("if_in_lambda"),
        &[0, 1, 33, 1000, 100_000],
        0.0,
        11,
        |r, n| vec![i64s(r, n, -100, 100), i64s(r, 20, -100, 100)],
    );
}

#[test]
fn replicate_map() {
    check(source("replicate_map"), 0.0, |r, n| {
        vec![i64s(r, n, -100, 100), Value::I64(-17)]
    });
}

#[test]
fn range_sum() {
    check(source("range_sum"), 0.0, |_, n| vec![Value::Usize(n)]);
}

#[test]
fn indices_map() {
    check(source("indices_map"), 0.0, |r, n| {
        vec![i64s(r, n, -100, 100)]
    });
}

#[test]
fn gather_of_gather() {
    check(source("gather_of_gather"), 0.0, |r, n| {
        let m = n / 2 + 3;
        vec![i64s(r, m, -100, 100), indices(r, n, m), indices(r, n, n)]
    });
}

#[test]
fn integer_operators_and_divide_by_zero() {
    let gen_ints = |r: &mut Rng, n: usize, zero: bool| {
        let a: Vec<i32> = (0..n)
            .map(|i| if i % 7 == 3 { i32::MIN } else { r.u64() as i32 })
            .collect();
        let b: Vec<i32> = (0..n)
            .map(|i| match i % 5 {
                0 => -1,
                1 if zero && i > n / 2 => 0,
                _ => r.int_in(-40..40) as i32 | 1,
            })
            .collect();
        let c: Vec<u64> = (0..n).map(|_| r.u64()).collect();
        let d: Vec<u64> = (0..n).map(|_| r.u64()).collect();
        vec![seq(a), seq(b), seq(c), seq(d)]
    };
    check(source("int_ops"), 0.0, |r, n| gen_ints(r, n, false));
    let errors = check(source("int_ops"), 0.0, |r, n| gen_ints(r, n, true));
    assert_eq!(errors, 5);
}

fn special_floats(r: &mut Rng, n: usize) -> Vec<f64> {
    let specials = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        3e9,
        -3e9,
        5e19,
        -0.0,
        0.5,
        -0.5,
        2.5,
        -2.5,
        1e300,
        4294967295.7,
    ];
    (0..n)
        .map(|i| {
            if i % 3 == 0 {
                specials[i / 3 % specials.len()]
            } else {
                r.f64_in(-1e10, 1e10)
            }
        })
        .collect()
}

#[test]
fn casts_saturate_like_rust() {
    check(source("casts"), 0.0, |r, n| {
        let fs = special_floats(r, n);
        let x: Vec<f32> = fs.iter().map(|&f| f as f32).collect();
        let y = special_floats(r, n);
        vec![seq(x), seq(y), i64s(r, n, i64::MIN, i64::MAX)]
    });
}

#[test]
fn math_functions_bit_exact() {
    check(source("math"), 0.0, |r, n| {
        let y = special_floats(r, n);
        let x: Vec<f32> = special_floats(r, n)
            .iter()
            .map(|&f| (f / 1e8) as f32)
            .collect();
        vec![seq(x), seq(y)]
    });
}

#[test]
fn map_of_pairs_and_unzip() {
    check(source("tuple_map_unzip"), 0.0, |r, n| {
        vec![u32s(r, n, 0, u32::MAX as i64)]
    });
}

#[test]
fn host_scalar_statements() {
    check(source("mean"), 1e-12, |r, n| vec![f64s(r, n, 10.0)]);
}

#[test]
fn host_index_and_its_error() {
    check(source("host_index"), 0.0, |r, n| {
        vec![i64s(r, n, -100, 100), Value::Usize(n / 2)]
    });
    let errors = check(source("host_index"), 0.0, |r, n| {
        vec![i64s(r, n, -100, 100), Value::Usize(n)]
    });
    assert_eq!(errors, SIZES.len());
}

#[test]
fn host_if_with_kernels_in_branches() {
    check(source("host_if"), 0.0, |r, n| {
        vec![i64s(r, n, -100, 100), Value::Bool(true)]
    });
    check(source("host_if"), 0.0, |r, n| {
        vec![i64s(r, n, -100, 100), Value::Bool(false)]
    });
}

#[test]
fn filter_of_pairs() {
    check(source("filter_pairs"), 0.0, |r, n| {
        vec![i32s(r, n, -100, 100), f32s(r, n, 5.0)]
    });
}

#[test]
fn divide_by_zero_in_a_reduction() {
    check(source("div_in_reduce"), 0.0, |r, n| {
        vec![u32s(r, n, 0, 1 << 30), u32s(r, n, 1, 100)]
    });
    let errors = check(source("div_in_reduce"), 0.0, |r, n| {
        vec![u32s(r, n, 0, 1 << 30), u32s(r, n, 0, 3)]
    });
    assert!(errors >= 5, "{errors}");
}

#[test]
fn sum_of_a_filter() {
    check(source("filter_then_sum"), 0.0, |r, n| {
        vec![i64s(r, n, -100, 100)]
    });
}

#[test]
fn scan_of_bools() {
    check(source("scan_bool_or"), 0.0, |r, n| {
        vec![i32s(r, n, -100, 100)]
    });
}
