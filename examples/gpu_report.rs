//! The GPU performance proxy: runs dpl's flagship kernels on the simulated GPU
//! (`Place::Sim`) and reports, per kernel, what a profiler would show on a real one —
//! instructions per element, 32-byte sectors moved against the ideal (perfect
//! coalescing), shared-memory bank conflicts — and checks the targets of the GPU issue:
//! streaming kernels (map, reduce, scan — the single-pass look-back scan and, for
//! comparison, reduce-then-scan) within 1.1x of the ideal sectors, reduce, scan and
//! filter within their thread instructions per element (reduce 15 in its first pass,
//! look-back scan 60, reduce-then-scan 100, filter 80, all passes), and the
//! vector-CSR (`inner = "warp"`) and ELL SpMV kernels below scalar CSR in sectors per
//! nonzero on the 5-point Laplacian; and a ragged result (the rows of a power-law matrix
//! scaled) with a thread, a warp and a block per row, a sort per row with the same three
//! schedules, and a 2-D `stencil` (the 5-point
//! Laplacian of a grid) with a thread and a warp per row. Every result is checked against
//! plain Rust first.
//!
//! `cargo xtask gpu-report` runs it (release build, with `DPL_DUMP` so it can add the
//! register counts ptxas reports for the same kernels) and writes the section of
//! BENCHMARKS.md. Run alone: `cargo run --release --features sim --example gpu_report --
//! [counters.tsv]` prints the table and writes the raw counters (tab-separated) to the
//! file if given.

use dpl::KernelProfile;
use dpl::prelude::*;
use dpl_testkit::sparse;

#[path = "spmv/kernels.rs"]
#[allow(dead_code)]
mod kernels;

/// Streaming kernels.
mod flat {
    use dpl::prelude::*;

    #[parallel]
    pub fn saxpy(a: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
        map(|xi, yi| a * xi + yi, x, y)
    }

    #[parallel]
    pub fn sum_f32(x: &[f32]) -> f32 {
        sum(x)
    }

    #[parallel]
    pub fn dot_f64(x: &[f32], y: &[f32]) -> f64 {
        sum(map(|a, b| (a as f64) * (b as f64), x, y))
    }

    #[parallel]
    pub fn prefix_sum(x: &[i32]) -> Vec<i32> {
        scan(|a, b| a + b, x)
    }

    /// The same scan as `prefix_sum` with reduce-then-scan (three kernels) instead of
    /// the single pass with decoupled look-back, for comparison.
    #[parallel(scan = "reduce_then_scan")]
    pub fn prefix_sum_rts(x: &[i32]) -> Vec<i32> {
        scan(|a, b| a + b, x)
    }

    #[parallel]
    pub fn positives(x: &[f32]) -> Vec<f32> {
        filter(|v| v > 0.0, x)
    }

    #[parallel]
    pub fn histogram(keys: &[u32], bins: &[u32]) -> Vec<u32> {
        scatter_reduce(|a, b| a + b, replicate(1u32, len(keys)), keys, bins)
    }

    #[parallel]
    pub fn sort_u32(x: &[u32]) -> Vec<u32> {
        sort(x)
    }

    #[parallel]
    pub fn sort_by_key_f32(k: &[f32], v: &[u32]) -> Vec<u32> {
        sort_by_key(k, v)
    }
}

/// Ragged results: each row of a `Nested` scaled, with a thread per row (the default), a
/// warp per row and a block per row.
mod ragged {
    use dpl::prelude::*;

    #[parallel]
    pub fn scale_rows(rows: &Nested<f32>, a: f32) -> Nested<f32> {
        map(|r| map(|v| v * a, r), rows)
    }

    #[parallel(inner = "warp")]
    pub fn scale_rows_warp(rows: &Nested<f32>, a: f32) -> Nested<f32> {
        map(|r| map(|v| v * a, r), rows)
    }

    #[parallel(inner = "block")]
    pub fn scale_rows_block(rows: &Nested<f32>, a: f32) -> Nested<f32> {
        map(|r| map(|v| v * a, r), rows)
    }
}

/// A sort per row of a `Nested`: with a thread per row (a merge sort in the thread), a
/// warp per row and a block per row (each thread merges its share of every round, found
/// by a binary search along the merge path).
mod row_sorts {
    use dpl::prelude::*;

    #[parallel(inner = "seq")]
    pub fn sort_rows(rows: &Nested<f32>) -> Nested<f32> {
        map(|r| sort(r), rows)
    }

    #[parallel(inner = "warp")]
    pub fn sort_rows_warp(rows: &Nested<f32>) -> Nested<f32> {
        map(|r| sort(r), rows)
    }

    #[parallel(inner = "block")]
    pub fn sort_rows_block(rows: &Nested<f32>) -> Nested<f32> {
        map(|r| sort(r), rows)
    }
}

/// The 5-point Laplacian as a 2-D `stencil` over a row-major `Matrix`: a thread per row
/// (the default) and a warp per row.
mod grid {
    use dpl::prelude::*;

    #[parallel]
    pub fn laplacian(u: &Matrix<f32>) -> Nested<f32> {
        stencil(
            |w| 4.0 * w[2] - w[0] - w[1] - w[3] - w[4],
            u,
            [(-1, 0), (0, -1), (0, 0), (0, 1), (1, 0)],
            0.0,
        )
    }

    #[parallel(inner = "warp")]
    pub fn laplacian_warp(u: &Matrix<f32>) -> Nested<f32> {
        stencil(
            |w| 4.0 * w[2] - w[0] - w[1] - w[3] - w[4],
            u,
            [(-1, 0), (0, -1), (0, 0), (0, 1), (1, 0)],
            0.0,
        )
    }
}

/// Vector CSR: a warp per row (`inner = "warp"`).
#[parallel(inner = "warp")]
fn spmv_csr_warp(vals: &Nested<f32>, cols: &Nested<u32>, x: &[f32]) -> Vec<f32> {
    let spvv = |ai, ci| sum(map(|aij, xj| aij * xj, ai, gather(x, ci)));
    map(spvv, vals, cols)
}

/// One function of several measured under different schedules: its inspection, how it
/// is scheduled, and the function.
type Variant<F> = (dpl::Inspect, &'static str, F);
/// The ragged cases' functions.
type RowsFn = fn(&Nested<f32>, f32) -> Nested<f32>;
/// The per-row sort cases' functions.
type SortRowsFn = fn(&Nested<f32>) -> Nested<f32>;
/// The 2-D stencil cases' functions.
type GridFn = fn(&Matrix<f32>) -> Nested<f32>;

/// One measured function: its launches and what they are compared with.
struct Case {
    function: &'static str,
    /// What the function is (a heading for the table).
    what: String,
    /// Elements of the main input (for instructions per element).
    elements: u64,
    /// Nonzeros, for SpMV.
    nnz: Option<u64>,
    /// `Some(launches)`, or why the GPU backend does not compile it.
    launches: Result<Vec<KernelProfile>, String>,
    /// A streaming kernel: its sectors must be within 1.1x of the ideal.
    streaming: bool,
}

impl Case {
    fn sectors(&self) -> Option<(u64, u64)> {
        self.launches.as_ref().ok().map(|ls| {
            ls.iter()
                .fold((0, 0), |(s, i), l| (s + l.sectors, i + l.ideal_sectors))
        })
    }
}

fn close(a: &[f32], b: &[f32], tol: f32) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| (x - y).abs() <= tol * (1.0 + y.abs()))
}

/// Runs `f` on the simulator if the function was compiled for the GPU, checks the result
/// with `check`, and records the launches.
fn measure<R>(
    info: dpl::Inspect,
    what: String,
    elements: u64,
    nnz: Option<u64>,
    streaming: bool,
    f: impl FnOnce() -> R,
    check: impl FnOnce(&R) -> bool,
) -> Case {
    let launches = if info.gpu_not_compiled.is_empty() {
        let (r, launches) = dpl::sim_profile(f);
        assert!(
            check(&r),
            "{}: the simulated GPU's result is wrong",
            info.name
        );
        Ok(launches)
    } else {
        Err(info.gpu_not_compiled.to_string())
    };
    Case {
        function: info.name,
        what,
        elements,
        nnz,
        launches,
        streaming,
    }
}

fn main() {
    let counters_out = std::env::args().nth(1);
    let n: usize = 1 << 20;
    let x: Vec<f32> = (0..n)
        .map(|i| ((i * 37 % 1001) as f32 - 500.0) / 64.0)
        .collect();
    let y: Vec<f32> = (0..n).map(|i| (i % 17) as f32 * 0.25).collect();
    let xi: Vec<i32> = (0..n).map(|i| (i % 13) as i32 - 6).collect();
    let keys: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) % 256)
        .collect();
    let n64 = n as u64;

    let mut cases = Vec::new();
    cases.push(measure(
        dpl::inspect!(flat::saxpy),
        "map: saxpy, 2^20 f32".into(),
        n64,
        None,
        true,
        || flat::saxpy(2.0, &x, &y),
        |r| {
            let want: Vec<f32> = x.iter().zip(&y).map(|(a, b)| 2.0 * a + b).collect();
            r == &want
        },
    ));
    cases.push(measure(
        dpl::inspect!(flat::sum_f32),
        "reduce: sum, 2^20 f32".into(),
        n64,
        None,
        true,
        || flat::sum_f32(&x),
        |r| {
            let want: f64 = x.iter().map(|v| *v as f64).sum();
            (*r as f64 - want).abs() <= 1e-3 * want.abs().max(1.0)
        },
    ));
    cases.push(measure(
        dpl::inspect!(flat::dot_f64),
        "reduce of map: f64 dot product, 2^20 f32".into(),
        n64,
        None,
        true,
        || flat::dot_f64(&x, &y),
        |r| {
            let want: f64 = x.iter().zip(&y).map(|(a, b)| *a as f64 * *b as f64).sum();
            (r - want).abs() <= 1e-9 * want.abs().max(1.0)
        },
    ));
    cases.push(measure(
        dpl::inspect!(flat::prefix_sum),
        "scan: inclusive prefix sum, 2^20 i32".into(),
        n64,
        None,
        true,
        || flat::prefix_sum(&xi),
        |r| {
            let mut acc = 0i32;
            r.iter().zip(&xi).all(|(g, v)| {
                acc = acc.wrapping_add(*v);
                *g == acc
            })
        },
    ));
    cases.push(measure(
        dpl::inspect!(flat::prefix_sum_rts),
        "scan, reduce-then-scan: inclusive prefix sum, 2^20 i32".into(),
        n64,
        None,
        true,
        || flat::prefix_sum_rts(&xi),
        |r| {
            let mut acc = 0i32;
            r.iter().zip(&xi).all(|(g, v)| {
                acc = acc.wrapping_add(*v);
                *g == acc
            })
        },
    ));
    cases.push(measure(
        dpl::inspect!(flat::positives),
        "filter: keep positives, 2^20 f32".into(),
        n64,
        None,
        false,
        || flat::positives(&x),
        |r| r == &x.iter().copied().filter(|v| *v > 0.0).collect::<Vec<_>>(),
    ));
    cases.push(measure(
        dpl::inspect!(flat::histogram),
        "scatter_reduce: 256-bin histogram, 2^20 keys".into(),
        n64,
        None,
        false,
        || flat::histogram(&keys, &[0; 256]),
        |r| {
            let mut want = vec![0u32; 256];
            for k in &keys {
                want[*k as usize] += 1;
            }
            r == &want
        },
    ));
    let random: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761).rotate_left(13) ^ i)
        .collect();
    cases.push(measure(
        dpl::inspect!(flat::sort_u32),
        "sort: radix sort, 2^20 random u32".into(),
        n64,
        None,
        false,
        || flat::sort_u32(&random),
        |r| {
            let mut want = random.clone();
            want.sort_unstable();
            r == &want
        },
    ));
    cases.push(measure(
        dpl::inspect!(flat::sort_by_key_f32),
        "sort_by_key: f32 keys, u32 values, 2^20".into(),
        n64,
        None,
        false,
        || flat::sort_by_key_f32(&x, &random),
        |r| {
            let mut pairs: Vec<(f32, u32)> =
                x.iter().copied().zip(random.iter().copied()).collect();
            pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
            r.iter().zip(&pairs).all(|(g, p)| *g == p.1) && r.len() == pairs.len()
        },
    ));

    // SpMV on the 5-point Laplacian.
    let side = 256;
    let a = sparse::laplacian_2d(side, side);
    let (vals, cols) = a.to_nested();
    let (ell_vals, ell_cols) = a.to_ell();
    let xv: Vec<f32> = (0..a.cols()).map(|i| ((i % 97) as f32) / 97.0).collect();
    let want: Vec<f32> = a
        .spmv(&xv.iter().map(|v| *v as f64).collect::<Vec<_>>())
        .into_iter()
        .map(|v| v as f32)
        .collect();
    let rows = a.rows() as u64;
    let nnz = vals.total_len() as u64;
    let spmv_what = |s: &str| format!("SpMV {s}, 5-point Laplacian {side}x{side} ({nnz} nonzeros)");
    cases.push(measure(
        dpl::inspect!(kernels::spmv_csr),
        spmv_what("scalar CSR (thread per row)"),
        rows,
        Some(nnz),
        false,
        || kernels::spmv_csr(&vals, &cols, &xv),
        |r| close(r, &want, 1e-5),
    ));
    cases.push(measure(
        dpl::inspect!(spmv_csr_warp),
        spmv_what("vector CSR (warp per row)"),
        rows,
        Some(nnz),
        false,
        || spmv_csr_warp(&vals, &cols, &xv),
        |r| close(r, &want, 1e-5),
    ));
    cases.push(measure(
        dpl::inspect!(kernels::spmv_csr_block),
        spmv_what("CSR, block per row"),
        rows,
        Some(nnz),
        false,
        || kernels::spmv_csr_block(&vals, &cols, &xv),
        |r| close(r, &want, 1e-5),
    ));
    cases.push(measure(
        dpl::inspect!(kernels::spmv_ell),
        spmv_what("ELL (column-major)"),
        rows,
        Some(nnz),
        false,
        || kernels::spmv_ell(&ell_vals, &ell_cols, &xv),
        |r| close(r, &want, 1e-5),
    ));

    // Ragged results: the rows of a power-law matrix scaled (a few rows of thousands of
    // elements among many short ones).
    let pl = sparse::power_law(4096, 4096, 2, 1.2, 7);
    let (pv, _) = pl.to_nested();
    let pnnz = pv.total_len() as u64;
    let scaled: Vec<Vec<f32>> = pv
        .to_vecs()
        .iter()
        .map(|r| r.iter().map(|v| v * 1.5).collect())
        .collect();
    let longest = pv.to_vecs().iter().map(Vec::len).max().unwrap_or(0);
    let ragged_what = |s: &str| {
        format!(
            "ragged map: rows scaled, {s}, power-law {}x{} ({pnnz} elements, longest row {longest})",
            pl.rows(),
            pl.cols()
        )
    };
    let scale: [Variant<RowsFn>; 3] = [
        (
            dpl::inspect!(ragged::scale_rows),
            "thread per row",
            ragged::scale_rows,
        ),
        (
            dpl::inspect!(ragged::scale_rows_warp),
            "warp per row",
            ragged::scale_rows_warp,
        ),
        (
            dpl::inspect!(ragged::scale_rows_block),
            "block per row",
            ragged::scale_rows_block,
        ),
    ];
    for (info, how, f) in scale {
        cases.push(measure(
            info,
            ragged_what(how),
            pnnz,
            None,
            false,
            || f(&pv, 1.5),
            |r| r.to_vecs() == scaled,
        ));
    }

    // A sort per row: 128 rows of 2,048 random f32 (a thread per row runs 128 threads;
    // a warp per row 4,096).
    let (nrows, row_len) = (128usize, 2048usize);
    let unsorted: Vec<Vec<f32>> = (0..nrows)
        .map(|r| {
            (0..row_len)
                .map(|c| ((r * row_len + c) as u32).wrapping_mul(2_654_435_761) as f32 / 1e6)
                .collect()
        })
        .collect();
    let sorted: Vec<Vec<f32>> = unsorted
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r.sort_by(f32::total_cmp);
            r
        })
        .collect();
    let unsorted = Nested::from_rows(unsorted);
    let sorts: [Variant<SortRowsFn>; 3] = [
        (
            dpl::inspect!(row_sorts::sort_rows),
            "thread per row",
            row_sorts::sort_rows,
        ),
        (
            dpl::inspect!(row_sorts::sort_rows_warp),
            "warp per row",
            row_sorts::sort_rows_warp,
        ),
        (
            dpl::inspect!(row_sorts::sort_rows_block),
            "block per row",
            row_sorts::sort_rows_block,
        ),
    ];
    for (info, how, f) in sorts {
        cases.push(measure(
            info,
            format!("sort per row: {nrows} rows of {row_len} random f32, {how}"),
            (nrows * row_len) as u64,
            None,
            false,
            || f(&unsorted),
            |r| r.to_vecs() == sorted,
        ));
    }

    // A 2-D stencil: the 5-point Laplacian of a 512x512 grid (zero outside).
    let side = 512;
    let data: Vec<f32> = (0..side * side)
        .map(|k| ((k * 37) % 101) as f32 / 8.0)
        .collect();
    let grid_at = |r: isize, c: isize| {
        if r < 0 || c < 0 || r >= side as isize || c >= side as isize {
            0.0
        } else {
            data[r as usize * side + c as usize]
        }
    };
    let lap: Vec<Vec<f32>> = (0..side as isize)
        .map(|r| {
            (0..side as isize)
                .map(|c| {
                    4.0 * grid_at(r, c)
                        - grid_at(r - 1, c)
                        - grid_at(r, c - 1)
                        - grid_at(r, c + 1)
                        - grid_at(r + 1, c)
                })
                .collect()
        })
        .collect();
    let u = Matrix::row_major(side, side, data.clone()).expect("a square grid");
    let stencils: [Variant<GridFn>; 2] = [
        (
            dpl::inspect!(grid::laplacian),
            "thread per row",
            grid::laplacian,
        ),
        (
            dpl::inspect!(grid::laplacian_warp),
            "warp per row",
            grid::laplacian_warp,
        ),
    ];
    for (info, how, f) in stencils {
        cases.push(measure(
            info,
            format!("2-D stencil: 5-point Laplacian of a {side}x{side} f32 grid, {how}"),
            (side * side) as u64,
            None,
            false,
            || f(&u),
            |r| r.to_vecs() == lap,
        ));
    }

    // The table.
    println!(
        "| function | kernel | launches | thread instr / element (SpMV: / row) | sectors / ideal | sectors / nonzero | bank conflicts |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|");
    let mut tsv = String::from(
        "function\tkernel\tlaunches\tblocks\tthread_instructions\telements\tsectors\tideal_sectors\tbank_conflicts\tnnz\n",
    );
    for c in &cases {
        match &c.launches {
            Err(why) => {
                println!(
                    "| `{}` ({}) | not compiled for the GPU: {why} | | | | | |",
                    c.function, c.what
                );
            }
            Ok(launches) => {
                // One row per kernel (launches of the same kernel summed).
                let mut kernels: Vec<(String, u64, KernelProfile)> = Vec::new();
                for l in launches {
                    match kernels.iter_mut().find(|(k, _, _)| *k == l.kernel) {
                        Some((_, count, sum)) => {
                            *count += 1;
                            sum.blocks += l.blocks;
                            sum.thread_instructions += l.thread_instructions;
                            sum.sectors += l.sectors;
                            sum.ideal_sectors += l.ideal_sectors;
                            sum.bank_conflicts += l.bank_conflicts;
                        }
                        None => kernels.push((l.kernel.clone(), 1, l.clone())),
                    }
                }
                for (i, (k, count, s)) in kernels.iter().enumerate() {
                    let name = if i == 0 {
                        format!("`{}` ({})", c.function, c.what)
                    } else {
                        String::new()
                    };
                    let per_nnz = c.nnz.map_or("-".to_string(), |z| {
                        format!("{:.3}", s.sectors as f64 / z as f64)
                    });
                    println!(
                        "| {name} | `{k}` | {count} | {:.2} | {:.3} | {per_nnz} | {} |",
                        s.thread_instructions as f64 / c.elements as f64,
                        s.sectors as f64 / s.ideal_sectors.max(1) as f64,
                        s.bank_conflicts
                    );
                    tsv.push_str(&format!(
                        "{}\t{k}\t{count}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
                        c.function,
                        s.blocks,
                        s.thread_instructions,
                        c.elements,
                        s.sectors,
                        s.ideal_sectors,
                        s.bank_conflicts,
                        c.nnz.unwrap_or(0)
                    ));
                }
            }
        }
    }

    // The targets.
    println!();
    let mut missed = 0;
    for c in cases.iter().filter(|c| c.streaming) {
        match c.sectors() {
            Some((s, i)) => {
                let r = s as f64 / i.max(1) as f64;
                let ok = r <= 1.1;
                missed += usize::from(!ok);
                println!(
                    "* {} `{}`: sectors {r:.3}x the ideal (target <= 1.1x)",
                    if ok { "met" } else { "MISSED" },
                    c.function
                );
            }
            None => {
                missed += 1;
                println!("* MISSED `{}`: not compiled for the GPU", c.function);
            }
        }
    }
    // Thread instructions per element (PTX level): below what keeps a kernel
    // memory-bound on an H100 (~3e13 lane-instructions/s against ~3.3 TB/s: about 40
    // per 8 bytes moved, so 40 per 4-byte element read and written, 20 for a reduction
    // of 4-byte elements, 40 for one reading two). Every kernel together (a reduction is
    // one kernel: its last block combines the tiles' partials). A reduction's
    // grid keeps every multiprocessor busy (half the resident blocks) before it gives a
    // thread more elements, so on a million elements its threads take about 13 each.
    for (function, target) in [
        ("sum_f32", 20.0),
        ("dot_f64", 40.0),
        ("prefix_sum", 60.0),
        ("prefix_sum_rts", 100.0),
        ("positives", 80.0),
    ] {
        let Some(c) = cases.iter().find(|c| c.function == function) else {
            continue;
        };
        let Ok(launches) = &c.launches else {
            missed += 1;
            println!("* MISSED `{function}`: not compiled for the GPU");
            continue;
        };
        let instr: u64 = launches.iter().map(|l| l.thread_instructions).sum();
        let per = instr as f64 / c.elements as f64;
        let ok = per <= target;
        missed += usize::from(!ok);
        println!(
            "* {} `{function}`: {per:.2} thread instructions per element (target <= {target})",
            if ok { "met" } else { "MISSED" }
        );
    }
    let per_nnz = |name: &str| {
        cases
            .iter()
            .find(|c| c.function == name)
            .and_then(|c| Some(c.sectors()?.0 as f64 / c.nnz? as f64))
    };
    match per_nnz("spmv_csr") {
        Some(scalar) => {
            for other in ["spmv_csr_warp", "spmv_ell"] {
                match per_nnz(other) {
                    Some(v) => {
                        let ok = v < scalar;
                        missed += usize::from(!ok);
                        println!(
                            "* {} `{other}`: {v:.3} sectors per nonzero vs scalar CSR's {scalar:.3} (target: below)",
                            if ok { "met" } else { "MISSED" }
                        );
                    }
                    None => {
                        missed += 1;
                        println!("* MISSED `{other}`: not compiled for the GPU");
                    }
                }
            }
        }
        None => {
            missed += 1;
            println!("* MISSED SpMV: scalar CSR is not compiled for the GPU");
        }
    }
    println!("\n{missed} target(s) missed.");
    if let Some(path) = counters_out {
        std::fs::write(&path, tsv).unwrap_or_else(|e| panic!("cannot write {path}: {e}"));
    }
}
