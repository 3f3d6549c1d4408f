//! Matrices given as their storage and strides (`Input::Matrix`), e.g. column-major, read
//! by the kernels in place (element `j` of row `r` at `r * row_stride + j * col_stride`):
//! every program over `[[T]]` parameters gives the same result (or the same error) as
//! with the rows uploaded as a nested sequence, under every inner schedule, for
//! column-major, row-major and padded row-major layouts; a column-major ELL SpMV with a
//! thread per row moves fewer sectors than the same matrix uploaded row by row.

mod support;

use std::sync::OnceLock;

use dpl_core::interp::Value;
use dpl_cuda::sim::SimDriver;
use dpl_cuda::{GpuProgram, Inner, Input, Options, Output, StridedMatrix};
use support::programs::source;
use support::*;

fn driver() -> &'static SimDriver {
    static D: OnceLock<SimDriver> = OnceLock::new();
    D.get_or_init(SimDriver::default)
}

const SCHEDULES: [Inner; 4] = [Inner::Seq, Inner::Warp, Inner::Block, Inner::Auto];

/// The three layouts tested: (row stride, column stride) for `rows x cols`, and the
/// storage length.
fn layouts(rows: usize, cols: usize) -> Vec<(&'static str, usize, usize, usize)> {
    vec![
        ("column-major", 1, rows.max(1), rows.max(1) * cols),
        ("row-major", cols.max(1), 1, rows * cols),
        ("padded row-major", cols + 3, 1, rows * (cols + 3)),
    ]
}

/// `m` (rows of equal length) laid out with strides `(rs, cs)` in `len` elements (the
/// gaps hold `fill`).
fn storage(m: &[Vec<Value>], rs: usize, cs: usize, len: usize, fill: &Value) -> Value {
    let mut s = vec![fill.clone(); len];
    for (r, row) in m.iter().enumerate() {
        for (j, x) in row.iter().enumerate() {
            s[r * rs + j * cs] = x.clone();
        }
    }
    Value::seq(s)
}

/// A placeholder for an argument given as a matrix.
fn hole() -> Value {
    Value::Tuple(Vec::new())
}

fn nested(m: &[Vec<Value>]) -> Value {
    Value::seq(m.iter().map(|r| Value::seq(r.clone())).collect())
}

fn run(p: &GpuProgram, args: Vec<Input>) -> Result<Value, dpl_core::run::Error> {
    match dpl_cuda::run_resident(p, driver(), args, false, &|_| dpl_cuda::UNKNOWN_LOCATION)? {
        Output::Host(v) => Ok(v),
        other => panic!("a host result was expected: {other:?}"),
    }
}

/// Runs `src` with the matrices of `mats` (argument position, rows) given once as nested
/// rows and once as strided storage in each layout, the other arguments as they are;
/// the results must agree exactly. `fill` fills the gaps of an empty matrix's storage.
fn agree(src: &str, args: Vec<Value>, mats: &[(usize, Vec<Vec<Value>>)], fill: &Value) {
    let c = compiled(src);
    for inner in SCHEDULES {
        let p = dpl_cuda::compile_with(
            &c.fused,
            &Options {
                inner,
                ..Options::default()
            },
        )
        .unwrap_or_else(|e| panic!("{inner:?}: {e}"));
        let mut plain: Vec<Input> = args.iter().cloned().map(Input::Host).collect();
        for (at, m) in mats {
            plain[*at] = Input::Host(nested(m));
        }
        let want = run(&p, plain);
        let (rows, cols) = (mats[0].1.len(), mats[0].1.first().map_or(0, Vec::len));
        for (name, rs, cs, len) in layouts(rows, cols) {
            let mut strided: Vec<Input> = args.iter().cloned().map(Input::Host).collect();
            for (at, m) in mats {
                // Gaps hold a value of the matrix's own type (never read).
                let gap = m.iter().flatten().next().unwrap_or(fill);
                strided[*at] = Input::Matrix(StridedMatrix {
                    storage: storage(m, rs, cs, len, gap).into(),
                    rows,
                    cols,
                    row_stride: rs,
                    col_stride: cs,
                });
            }
            let got = run(&p, strided);
            assert_eq!(
                got, want,
                "{} ({inner:?}), {name} {rows} x {cols}",
                c.fused.name
            );
        }
    }
}

fn f32_matrix(r: &mut Rng, rows: usize, cols: usize) -> Vec<Vec<Value>> {
    (0..rows)
        .map(|_| {
            (0..cols)
                .map(|_| Value::F32(r.int_in(-20..20) as f32))
                .collect()
        })
        .collect()
}

#[test]
fn row_reductions_and_scans() {
    for (rows, cols) in [(0, 3), (1, 1), (37, 5), (300, 33), (5, 0)] {
        let mut r = Rng::new((rows * 100 + cols) as u64);
        let m = f32_matrix(&mut r, rows, cols);
        agree(
            source("row_sums"),
            vec![hole()],
            &[(0, m.clone())],
            &Value::F32(1e9),
        );
        agree(
            source("row_argmax"),
            vec![hole()],
            &[(0, m)],
            &Value::F32(1e9),
        );
        let mi: Vec<Vec<Value>> = (0..rows)
            .map(|_| (0..cols).map(|_| Value::I64(r.int_in(-9..9))).collect())
            .collect();
        agree(
            source("row_scan"),
            vec![hole()],
            &[(0, mi)],
            &Value::I64(77),
        );
    }
}

/// Filters, maps of filters, neighbours, histograms, per-row scans read at `k`, a row
/// and a column read on the host: one matrix argument (plus a number).
#[test]
fn more_programs_over_one_matrix() {
    let int = |r: &mut Rng, rows: usize, cols: usize, wrap: fn(i64) -> Value| {
        (0..rows)
            .map(|_| (0..cols).map(|_| wrap(r.int_in(-9..9))).collect())
            .collect::<Vec<Vec<Value>>>()
    };
    let i32v = |x: i64| Value::I32(x as i32);
    let u32v = |x: i64| Value::U32(x.unsigned_abs() as u32 % 4);
    for (rows, cols) in [(0, 3), (1, 1), (45, 6), (200, 17)] {
        let mut r = Rng::new((rows + cols) as u64);
        let m32 = int(&mut r, rows, cols, i32v);
        let m64 = int(&mut r, rows, cols, Value::I64);
        let mu = int(&mut r, rows, cols, u32v);
        let mf: Vec<Vec<Value>> = (0..rows)
            .map(|_| (0..cols).map(|_| Value::F64(r.f64_in(-5.0, 5.0))).collect())
            .collect();
        let one = |m: &Vec<Vec<Value>>| vec![(0, m.clone())];
        let k = Value::Usize(cols / 2);
        for (src, args, m) in [
            (source("row_min_max"), vec![hole()], one(&m64)),
            (source("row_filter_of_map"), vec![hole()], one(&m64)),
            (source("row_sum_of_filter"), vec![hole()], one(&m32)),
            (source("row_neighbour_diffs"), vec![hole()], one(&m32)),
            (
                source("rows_longer_than"),
                vec![hole(), Value::Usize(0)],
                one(&m32),
            ),
            (source("row_positives_and_sums"), vec![hole()], one(&m32)),
            (source("sums_of_kept_rows"), vec![hole()], one(&m64)),
            (source("pair_sums_per_row"), vec![hole()], one(&m64)),
            (
                source("last_of_row_scan"),
                vec![hole(), k.clone()],
                one(&m64),
            ),
            (source("offsets_of"), vec![hole()], one(&m32)),
            (source("row_histograms"), vec![hole()], one(&mu)),
            (source("centered_rows"), vec![hole()], one(&mf)),
            (
                source("mat_row_and_col0"),
                vec![hole(), Value::Usize(rows / 2)],
                one(&mf),
            ),
        ] {
            agree(src, args, &m, &Value::I32(0));
        }
    }
}

#[test]
fn two_matrices_and_a_vector() {
    for (rows, cols) in [(1, 4), (64, 5), (257, 7)] {
        let mut r = Rng::new(rows as u64);
        // ELL SpMV: values and column indices (some out of range: the same error).
        let vals = f32_matrix(&mut r, rows, cols);
        for bad in [false, true] {
            let colm: Vec<Vec<Value>> = (0..rows)
                .map(|i| {
                    (0..cols)
                        .map(|j| {
                            let c = (i + j * 3) % rows;
                            let c = if bad && i == rows / 2 && j == cols - 1 {
                                rows + 5
                            } else {
                                c
                            };
                            Value::U32(c as u32)
                        })
                        .collect()
                })
                .collect();
            let x = f32s(&mut r, rows, 4.0);
            agree(
                source("spmv_csr"),
                vec![hole(), hole(), x],
                &[(0, vals.clone()), (1, colm)],
                &Value::U32(0),
            );
        }
        let a: Vec<Vec<Value>> = (0..rows)
            .map(|_| (0..cols).map(|_| Value::F64(r.f64_in(-3.0, 3.0))).collect())
            .collect();
        let b: Vec<Vec<Value>> = (0..rows)
            .map(|_| (0..cols).map(|_| Value::F64(r.f64_in(-3.0, 3.0))).collect())
            .collect();
        agree(
            source("row_dots"),
            vec![hole(), hole()],
            &[(0, a), (1, b)],
            &Value::F64(0.0),
        );
    }
}

#[test]
fn rows_read_whole_gathered_returned_and_indexed() {
    for (rows, cols) in [(0, 2), (3, 4), (100, 6)] {
        let mut r = Rng::new(3 + rows as u64);
        let m: Vec<Vec<Value>> = (0..rows)
            .map(|_| {
                (0..cols)
                    .map(|_| Value::I32(r.int_in(-50..50) as i32))
                    .collect()
            })
            .collect();
        let idx: Vec<u32> = (0..rows * 2)
            .map(|i| ((i * 7) % rows.max(1)) as u32)
            .collect();
        agree(
            source("pick_rows"),
            vec![hole(), seq(idx)],
            &[(0, m.clone())],
            &Value::I32(0),
        );
        for k in [0usize, cols - 1, cols] {
            agree(
                source("row_index"),
                vec![hole(), Value::Usize(k)],
                &[(0, m.clone())],
                &Value::I32(0),
            );
        }
        let t: Vec<Vec<Value>> = (0..rows)
            .map(|i| {
                (0..cols)
                    .map(|j| {
                        Value::Tuple(vec![Value::I32((i * j) as i32), Value::Bool(j % 2 == 0)])
                    })
                    .collect()
            })
            .collect();
        let fill = Value::Tuple(vec![Value::I32(0), Value::Bool(false)]);
        agree(source("identity_nested"), vec![hole()], &[(0, t)], &fill);
    }
}

#[test]
fn bad_matrices_are_errors() {
    let c = compiled(source("row_sums"));
    let p = dpl_cuda::compile(&c.fused).expect("compiles");
    let m = |storage: Value, rows, cols, rs, cs| {
        vec![Input::Matrix(StridedMatrix {
            storage: storage.into(),
            rows,
            cols,
            row_stride: rs,
            col_stride: cs,
        })]
    };
    let four = seq(vec![1.0f32, 2.0, 3.0, 4.0]);
    // 2 x 3 column-major needs 6 elements.
    let e = run(&p, m(four.clone(), 2, 3, 1, 2)).expect_err("too short");
    assert!(e.to_string().contains("spans 6 elements"), "{e}");
    // The wrong element type.
    let e = run(&p, m(seq(vec![1i32, 2, 3, 4]), 2, 2, 1, 2)).expect_err("i32 storage");
    assert!(e.to_string().contains("storage must be"), "{e}");
    // A 2 x 2 column-major matrix: rows (1, 3) and (2, 4).
    assert_eq!(run(&p, m(four, 2, 2, 1, 2)), Ok(seq(vec![4.0f32, 6.0])));
}

/// A column-major ELL matrix read in place with a thread per row: consecutive threads
/// read consecutive elements, so fewer sectors per nonzero than the same matrix uploaded
/// as rows (each thread reading its own row).
#[test]
fn column_major_ell_is_coalesced() {
    let (rows, cols) = (4096, 5);
    let mut r = Rng::new(9);
    let vals = f32_matrix(&mut r, rows, cols);
    let colm: Vec<Vec<Value>> = (0..rows)
        .map(|i| {
            (0..cols)
                .map(|j| Value::U32(((i + j * 61) % rows) as u32))
                .collect()
        })
        .collect();
    let x = f32s(&mut r, rows, 1.0);
    let c = compiled(source("spmv_csr"));
    let p = dpl_cuda::compile(&c.fused).expect("compiles");
    let sectors = |args: Vec<Input>| -> (Value, f64) {
        let d = SimDriver::default();
        let out = dpl_cuda::run_resident(&p, &d, args, false, &|_| dpl_cuda::UNKNOWN_LOCATION)
            .expect("runs");
        let Output::Host(v) = out else {
            panic!("a host result")
        };
        let s: u64 = d
            .take_reports()
            .iter()
            .filter(|(k, _)| k.contains("map"))
            .map(|(_, rep)| rep.sectors_moved)
            .sum();
        (v, s as f64 / (rows * cols) as f64)
    };
    let (want, by_rows) = sectors(vec![
        Input::Host(nested(&vals)),
        Input::Host(nested(&colm)),
        Input::Host(x.clone()),
    ]);
    let cm = |m: &[Vec<Value>], fill: Value| {
        Input::Matrix(StridedMatrix {
            storage: storage(m, 1, rows, rows * cols, &fill).into(),
            rows,
            cols,
            row_stride: 1,
            col_stride: rows,
        })
    };
    let (got, in_place) = sectors(vec![
        cm(&vals, Value::F32(0.0)),
        cm(&colm, Value::U32(0)),
        Input::Host(x),
    ]);
    assert_eq!(got, want);
    eprintln!(
        "ELL SpMV, {rows} x {cols}: {by_rows:.3} sectors per nonzero as rows, {in_place:.3} column-major in place"
    );
    assert!(in_place < by_rows, "{in_place} vs {by_rows}");
}
