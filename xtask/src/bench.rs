//! Benchmark reports: `cargo xtask bench-report` runs the criterion benchmarks (or reads
//! the results of an earlier run) and writes `BENCHMARKS.md` at the repository root, with
//! a plot, `benches/ratios.svg`.
//!
//! # Naming scheme (every benchmark that wants to be in the report follows it)
//!
//! * One criterion **group per case and size**: `group_id = "<case>/<size>"`, e.g.
//!   `reduce_sum_f32/2^20`, `pipe_norm_f32/2^26`, `map_saxpy_f32/1000`. `<case>` is
//!   `snake_case` and names the operation and element type; `<size>` is `2^k`, a plain
//!   element count or `AxB`. Cases of real `#[parallel]` functions (root `benches/`) use
//!   the same scheme, e.g. `spmv_csr_f32_random/1000000`.
//! * **Function ids** inside a group: `dpl` (the dpl code: a runtime helper called as
//!   generated code calls it, or a `#[parallel]` function), `rayon` (what a user would write
//!   by hand with rayon), `seq` (plain sequential Rust), and for streaming cases
//!   `ceiling` (a hand-tuned kernel of the same memory access pattern: what the machine
//!   allows). Any other id is listed in the "other" column but not compared.
//! * **Throughput** is set per function as `Throughput::Bytes(algorithm bytes)`: inputs
//!   read once plus outputs written once. GB/s then compare across functions, also when a
//!   `ceiling` kernel moves different bytes than the case (it may set its own).
//!
//! # The report
//!
//! One section per primitive (map, reduce, scan, filter, gather, scatter, permute,
//! scatter_reduce, sort, stencil, fused pipelines, ...), in the order of [`SECTIONS`]. A
//! case goes to its section by [`CASES`], which also gives it a plain-English title; a
//! case missing there goes by the first matching prefix of [`PREFIXES`] (titled with its
//! own name), else to "Other cases". **Add every new case to [`CASES`].**
//!
//! Each section has one table (a row per case and size: the medians, dpl's GB/s and the
//! ratios `rayon / dpl` and `seq / dpl` of times, above 1 when dpl is faster, and dpl's GB/s
//! over the ceiling's) and under it one paragraph per case that misses a target, saying
//! which sizes miss which target, followed by the case's explanation. Targets: dpl at
//! least as fast as rayon; streaming cases at [`CEILING_SIZE`] within 10% of the ceiling;
//! 1,000-element cases no slower than `seq` by more than one call's cost
//! ([`CALL_COST_NS`]).
//!
//! Explanations are kept by hand in `benches/notes.md` as lines ``- `key` text`` where
//! `key` is a case (`permute_f32`), a case and size (`permute_f32/1000`; printed as "At
//! 1000: text") or, for a family of cases over inputs (`spmv_csr_f32_*`), the family's
//! name (`spmv_csr_f32`) or one member (`spmv_csr_f32_ani4`). All of a case's notes are
//! merged into its one paragraph; notes of cases that meet every target are not printed.
//!
//! The hand-written sections of BENCHMARKS.md between `<!-- interleaved:start -->` and
//! `<!-- interleaved:end -->`, `<!-- real-gpu:start -->` and `<!-- real-gpu:end -->`, and
//! the sections of `cargo xtask gpu-report` and `mpi-report` are kept as they are, after
//! the generated part: everything from the first of them to the end of the file is kept,
//! so hand-written sections between them (without markers) are kept too.
//!
//! Options: `--no-run` (only read results), `--quick` (sets `DPL_BENCH_QUICK=1`: fewer
//! samples), `--max 2^20` (sets `DPL_BENCH_MAX`: cap the sizes), `--filter REGEX` (passed
//! to criterion), `--package P` (repeatable; default: `dpl-cpu` and `dpl`), `--dir DIR`
//! (criterion's output folder; default `$CARGO_TARGET_DIR/criterion` or
//! `target/criterion`), `--out FILE` (default `BENCHMARKS.md`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What "one call's cost" is for the 1,000-element target: a function call that does
/// nothing but set up a loop, in nanoseconds.
const CALL_COST_NS: f64 = 100.0;

/// Streaming cases at this size must reach this fraction of their ceiling.
const CEILING_SIZE: &str = "2^26";
const CEILING_FRACTION: f64 = 0.9;

/// The packages whose benchmarks are run.
const PACKAGES: [&str; 2] = ["dpl-cpu", "dpl"];

/// Opens a hand-written section of BENCHMARKS.md that the report keeps as it is (the
/// nested examples timed in interleaved rounds: `cargo run --release --example spmv`,
/// `svm`, ...).
const KEPT_START: &str = "<!-- interleaved:start -->";
/// Closes it.
const KEPT_END: &str = "<!-- interleaved:end -->";
/// Opens the hand-written section of measurements on a real GPU (the demo and the test
/// suite run on a device machine), which the report keeps as it is too.
pub const GPU_START: &str = "<!-- real-gpu:start -->";
/// Closes it.
pub const GPU_END: &str = "<!-- real-gpu:end -->";

/// Runs the benchmarks (unless `--no-run`) and writes BENCHMARKS.md and the plot.
pub fn report(args: &[String]) -> Result<(), String> {
    let opts = Options::parse(args)?;
    let root = repo_root()?;
    if opts.run {
        run_benches(&root, &opts)?;
    }
    let dir = opts.dir.clone().unwrap_or_else(|| criterion_dir(&root));
    let results = collect(&dir)?;
    if results.is_empty() {
        return Err(format!("no criterion results under {}", dir.display()));
    }
    let notes = read_notes(&root.join("benches/notes.md"));
    let groups = group_results(results);
    let svg = plot(&groups);
    std::fs::create_dir_all(root.join("benches")).map_err(|e| e.to_string())?;
    std::fs::write(root.join("benches/ratios.svg"), svg)
        .map_err(|e| format!("writing the plot: {e}"))?;
    let out = root.join(&opts.out);
    let old = std::fs::read_to_string(&out).unwrap_or_default();
    let md = keep_sections(markdown(&groups, &notes), &old);
    std::fs::write(&out, md).map_err(|e| format!("writing {}: {e}", out.display()))?;
    println!(
        "wrote {} and benches/ratios.svg from {} groups",
        out.display(),
        groups.len()
    );
    Ok(())
}

/// Command-line options of `bench-report`.
struct Options {
    run: bool,
    quick: bool,
    max: Option<String>,
    filter: Option<String>,
    packages: Vec<String>,
    dir: Option<PathBuf>,
    out: PathBuf,
}

impl Options {
    fn parse(args: &[String]) -> Result<Options, String> {
        let mut o = Options {
            run: true,
            quick: false,
            max: None,
            filter: None,
            packages: Vec::new(),
            dir: None,
            out: "BENCHMARKS.md".into(),
        };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut value = |name: &str| {
                it.next()
                    .cloned()
                    .ok_or_else(|| format!("{name} needs a value"))
            };
            match a.as_str() {
                "--no-run" => o.run = false,
                "--quick" => o.quick = true,
                "--max" => o.max = Some(value("--max")?),
                "--filter" => o.filter = Some(value("--filter")?),
                "--package" | "-p" => o.packages.push(value("--package")?),
                "--dir" => o.dir = Some(value("--dir")?.into()),
                "--out" => o.out = value("--out")?.into(),
                other => {
                    return Err(format!(
                        "unknown option `{other}` (bench-report [--no-run] [--quick] [--max 2^K] [--filter REGEX] [--package P]... [--dir DIR] [--out FILE])"
                    ));
                }
            }
        }
        Ok(o)
    }
}

/// The workspace root: the parent of this crate's folder.
fn repo_root() -> Result<PathBuf, String> {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest
        .parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| "cannot find the repository root".into())
}

/// Where criterion writes: as criterion itself decides (`CARGO_TARGET_DIR`, else the
/// workspace's `target`).
fn criterion_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(t) => root.join(PathBuf::from(t)).join("criterion"),
        None => root.join("target/criterion"),
    }
}

fn run_benches(root: &Path, opts: &Options) -> Result<(), String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root).arg("bench");
    if opts.packages.is_empty() {
        for p in PACKAGES {
            cmd.args(["-p", p]);
        }
    } else {
        for p in &opts.packages {
            cmd.args(["-p", p]);
        }
    }
    cmd.arg("--benches").arg("--");
    if let Some(f) = &opts.filter {
        cmd.arg(f);
    }
    if opts.quick {
        cmd.env("DPL_BENCH_QUICK", "1");
    }
    if let Some(m) = &opts.max {
        cmd.env("DPL_BENCH_MAX", m);
    }
    eprintln!("xtask: running {cmd:?}");
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run cargo bench: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("cargo bench failed: {status}"))
    }
}

/// One benchmark's result.
#[derive(Clone, Debug)]
struct Measurement {
    group: String,
    function: String,
    /// Median time per iteration, ns.
    median_ns: f64,
    /// 95% confidence interval of the median, ns.
    low_ns: f64,
    high_ns: f64,
    /// Algorithm bytes per iteration, when declared.
    bytes: Option<f64>,
}

impl Measurement {
    fn gbps(&self) -> Option<f64> {
        self.bytes.map(|b| b / self.median_ns)
    }
}

/// Every `new/benchmark.json` (with its `estimates.json`) under `dir`.
fn collect(dir: &Path) -> Result<Vec<Measurement>, String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n == "new") {
                    if let Some(m) = read_measurement(&p)? {
                        out.push(m);
                    }
                } else if p.file_name().is_none_or(|n| n != "base" && n != "report") {
                    stack.push(p);
                }
            }
        }
    }
    out.sort_by(|a, b| (&a.group, &a.function).cmp(&(&b.group, &b.function)));
    Ok(out)
}

fn read_measurement(new: &Path) -> Result<Option<Measurement>, String> {
    let read = |name: &str| -> Result<Option<serde_json::Value>, String> {
        let p = new.join(name);
        match std::fs::read_to_string(&p) {
            Ok(text) => serde_json::from_str(&text)
                .map(Some)
                .map_err(|e| format!("{}: {e}", p.display())),
            Err(_) => Ok(None),
        }
    };
    let (Some(bench), Some(est)) = (read("benchmark.json")?, read("estimates.json")?) else {
        return Ok(None);
    };
    let (Some(group), Some(function)) = (bench["group_id"].as_str(), bench["function_id"].as_str())
    else {
        return Ok(None);
    };
    let median = &est["median"];
    let (Some(median_ns), Some(low_ns), Some(high_ns)) = (
        median["point_estimate"].as_f64(),
        median["confidence_interval"]["lower_bound"].as_f64(),
        median["confidence_interval"]["upper_bound"].as_f64(),
    ) else {
        return Err(format!(
            "{}: estimates.json without a median",
            new.display()
        ));
    };
    Ok(Some(Measurement {
        group: group.to_string(),
        function: function.to_string(),
        median_ns,
        low_ns,
        high_ns,
        bytes: bench["throughput"]["Bytes"].as_f64(),
    }))
}

/// The functions of one group, and its case and size.
struct Group {
    case: String,
    size: String,
    fns: BTreeMap<String, Measurement>,
}

impl Group {
    fn time(&self, f: &str) -> Option<f64> {
        self.fns.get(f).map(|m| m.median_ns)
    }
    /// `t(other) / t(dpl)`: above 1, dpl is faster.
    fn speedup(&self, other: &str) -> Option<f64> {
        Some(self.time(other)? / self.time("dpl")?)
    }
    /// GB/s of dpl over GB/s of the ceiling.
    fn of_ceiling(&self) -> Option<f64> {
        Some(self.fns.get("dpl")?.gbps()? / self.fns.get("ceiling")?.gbps()?)
    }
    fn name(&self) -> String {
        format!("{}/{}", self.case, self.size)
    }
}

/// A size label's element count (`2^20`, `1000`, `1024x1024`), for ordering.
fn size_value(s: &str) -> f64 {
    if let Some((a, b)) = s.split_once('x') {
        return size_value(a) * size_value(b);
    }
    match s.strip_prefix("2^") {
        Some(k) => k.parse::<f64>().map(|k| k.exp2()).unwrap_or(f64::MAX),
        None => s.parse().unwrap_or(f64::MAX),
    }
}

fn group_results(ms: Vec<Measurement>) -> Vec<Group> {
    let mut by: BTreeMap<String, Group> = BTreeMap::new();
    for m in ms {
        // Groups outside the naming scheme (no `/<size>`: e.g. dpl-macros' expansion-time
        // benchmark, whose results share criterion's folder) are not in the report.
        let Some((case, size)) = m.group.rsplit_once('/') else {
            continue;
        };
        let (case, size) = (case.to_string(), size.to_string());
        by.entry(m.group.clone())
            .or_insert_with(|| Group {
                case,
                size,
                fns: BTreeMap::new(),
            })
            .fns
            .insert(m.function.clone(), m);
    }
    let mut groups: Vec<Group> = by.into_values().collect();
    groups.sort_by(|a, b| {
        a.case
            .cmp(&b.case)
            .then(size_value(&a.size).total_cmp(&size_value(&b.size)))
    });
    groups
}

/// Keeps the hand-written part of the previous BENCHMARKS.md as it is: everything from the
/// first of its kept sections (start and end marker present) on (the interleaved measurements of the nested examples,
/// those on a real GPU, the GPU proxy of `cargo xtask gpu-report`, the MPI section of
/// `cargo xtask mpi-report`), hand-written sections between them included, after the
/// generated part.
fn keep_sections(md: String, old: &str) -> String {
    let first = [
        (KEPT_START, KEPT_END),
        (GPU_START, GPU_END),
        (crate::gpu::START, crate::gpu::END),
        (crate::mpi::START, crate::mpi::END),
    ]
    .into_iter()
    .filter(|&(start, end)| crate::gpu::section_between(old, start, end).is_some())
    .filter_map(|(start, _)| old.find(start))
    .min();
    match first {
        Some(at) => format!("{}\n\n{}\n", md.trim_end(), old[at..].trim_end()),
        None => md,
    }
}

/// A section of the report: key, heading, what the primitive does.
type Section = (&'static str, &'static str, &'static str);

/// The sections of the report, in order. A section without results is left out.
const SECTIONS: [Section; 17] = [
    (
        "map",
        "map",
        "One output element per input element, e.g. `map(|a, b| 2.0 * a + b, x, y)`.",
    ),
    (
        "reduce",
        "reduce and count",
        "One value from many: sums, dot products, minima, maxima, counts.",
    ),
    (
        "scan",
        "scan",
        "Running totals: element `i` of the result combines the input's elements up to `i` \
         (inclusive) or before `i` (exclusive).",
    ),
    (
        "filter",
        "filter",
        "The elements that pass a test, in their order.",
    ),
    (
        "gather",
        "gather",
        "Reads at computed positions: `out[i] = x[idx[i]]`. dpl checks every index once, \
         before the loop, and reports an out-of-range index as an error.",
    ),
    (
        "scatter",
        "scatter",
        "Writes to computed positions: `out[idx[i]] = x[i]`, the same result whatever the \
         number of threads.",
    ),
    (
        "permute",
        "permute",
        "A scatter whose indices must be a permutation of `0..n`; dpl checks that they are.",
    ),
    (
        "scatter_reduce",
        "scatter_reduce",
        "Elements sent to the same position are combined: `out[idx[i]] += x[i]`, e.g. a \
         histogram.",
    ),
    ("sort", "sort", "Sorting numbers, and pairs by their key."),
    (
        "stencil",
        "stencil",
        "Each output element reads its input's neighbours (blurs, Laplacians).",
    ),
    (
        "pipeline",
        "Fused pipelines",
        "Several primitives in one `#[parallel]` function, e.g. `sum(map(...))`: dpl runs \
         them as one pass where it can, while the rayon version is written step by step as \
         a user would, with a vector between steps.",
    ),
    (
        "generic",
        "Generic functions",
        "A generic `#[parallel]` function called at one type, next to the same function \
         written for that type.",
    ),
    (
        "loops",
        "Loops",
        "Loops inside the function applied to each element, and loops around whole \
         parallel steps.",
    ),
    (
        "sparse",
        "Sparse matrix-vector products (nested data)",
        "`y = A x` for a sparse matrix `A` whose rows have different lengths. The rayon and \
         sequential versions are the same hand-written CSR loop in every row of the table. \
         The size column names the matrix and its number of rows.",
    ),
    (
        "ragged",
        "Ragged rows (nested data)",
        "Per-row operations on 2^20 transactions grouped by 50,000 users (rows of very \
         different lengths, some empty).",
    ),
    (
        "programs",
        "Whole programs and their kernels",
        "The preconditioned conjugate gradient solver of `examples/pcg.rs` (a 512x512 \
         optical-flow problem, 2^18 pixels) and the support vector machine of \
         `examples/svm.rs`.",
    ),
    (
        "other",
        "Other cases",
        "Cases not yet listed in `CASES` in `xtask/src/bench.rs`.",
    ),
];

/// Every case of the benchmarks: its name (or `family_*`: every case named
/// `family_<input>`, the input being, e.g., a matrix), the key of its section in
/// [`SECTIONS`] and a title in plain words. Rows appear in the report in this order.
const CASES: &[(&str, &str, &str)] = &[
    ("map_saxpy_f32", "map", "a * x + y (f32)"),
    ("map_copy_f32", "map", "copy (f32)"),
    ("reduce_sum_f32", "reduce", "sum (f32)"),
    ("reduce_sum_f64", "reduce", "sum (f64)"),
    ("reduce_dot_f32", "reduce", "dot product (f32)"),
    ("reduce_max_f32", "reduce", "maximum (f32)"),
    ("reduce_min_i32", "reduce", "minimum (i32)"),
    ("count_f32", "reduce", "count of positive values (f32)"),
    ("scan_sum_f32", "scan", "running sum, inclusive (f32)"),
    ("exclusive_scan_i32", "scan", "running sum, exclusive (i32)"),
    ("filter_f32", "filter", "keep the positive values (f32)"),
    (
        "gather_random_f32",
        "gather",
        "gather at random positions (f32)",
    ),
    (
        "check_indices_u32",
        "gather",
        "the index check alone (u32 indices)",
    ),
    (
        "scatter_f32",
        "scatter",
        "scatter to random positions (f32)",
    ),
    ("permute_f32", "permute", "random permutation (f32)"),
    ("histogram_u32", "scatter_reduce", "256-bin histogram"),
    (
        "scatter_add_f32",
        "scatter_reduce",
        "add into random positions (f32)",
    ),
    ("sort_u32", "sort", "sort (u32)"),
    ("sort_f32", "sort", "sort (f32, total order)"),
    (
        "sort_by_key_u32",
        "sort",
        "sort pairs by key (u32 keys, f32 values)",
    ),
    ("stencil_blur3_f32", "stencil", "3-point blur, 1-D (f32)"),
    (
        "stencil_laplacian_f64",
        "stencil",
        "5-point Laplacian, 2-D grid (f64)",
    ),
    ("pipe_saxpy_sum_f32", "pipeline", "sum(a * x + y) (f32)"),
    ("pipe_norm_f32", "pipeline", "sqrt(sum(x * x)) (f32)"),
    (
        "pipe_sum_sq_gather_f32",
        "pipeline",
        "sum of squares of a gather (f32)",
    ),
    (
        "pipe_filter_map_f32",
        "pipeline",
        "filter(> 0) of map(2x - 0.5) (f32)",
    ),
    (
        "pipe_scan_map_f32",
        "pipeline",
        "running sum of x * y (f32)",
    ),
    ("generic_dot_f32", "generic", "generic dot product at f32"),
    ("generic_saxpy_f16", "generic", "generic a * x + y at f16"),
    ("generic_clamp_u8", "generic", "generic clamp at u8"),
    (
        "iter_binomial_f64",
        "loops",
        "binomial option pricing, a loop per option",
    ),
    (
        "iter_newton_f64",
        "loops",
        "Newton's method, a loop per element",
    ),
    (
        "iter_power_f64",
        "loops",
        "power iteration, 20 matrix-vector steps",
    ),
    (
        "iter_jacobi_f64",
        "loops",
        "50 Jacobi sweeps on a 256x256 grid",
    ),
    ("spmv_csr_f32_*", "sparse", "CSR, rows in parallel"),
    (
        "spmv_csr_auto_f32_*",
        "sparse",
        "CSR, schedule chosen per call",
    ),
    (
        "spmv_csr_block_f32_*",
        "sparse",
        "CSR, each row's sum in parallel too",
    ),
    (
        "spmv_ell_f32_*",
        "sparse",
        "ELLPACK (rows padded to one length)",
    ),
    (
        "spmv_schedule_f32_*",
        "sparse",
        "the three CSR schedules side by side",
    ),
    ("ragged_prefix_sum_i64", "ragged", "running sum per row"),
    ("ragged_filter_i64", "ragged", "positive values per row"),
    ("ragged_sum_max_i64", "ragged", "sum and maximum per row"),
    ("ragged_balances_i64", "ragged", "running balance per user"),
    (
        "ragged_account_summary_i64",
        "ragged",
        "balance summary per user",
    ),
    (
        "pcg_optical_flow_f32",
        "programs",
        "PCG, 20 iterations (a Rust loop of dpl calls)",
    ),
    (
        "pcg_solve_one_call_f32",
        "programs",
        "PCG, 20 iterations in one dpl call",
    ),
    ("pcg_apply_f32", "programs", "PCG step: matrix times vector"),
    (
        "pcg_precondition_f32",
        "programs",
        "PCG step: preconditioner",
    ),
    ("pcg_dot_f32", "programs", "PCG step: dot product"),
    ("pcg_axpy_f32", "programs", "PCG step: x + s * y"),
    (
        "svm_kernel_row_d32_f32",
        "programs",
        "SVM: one kernel row (10,000 points)",
    ),
    ("svm_smo_100it_f32", "programs", "SVM: 100 training steps"),
];

/// Sections of cases missing from [`CASES`], by the first matching prefix of the name.
const PREFIXES: &[(&str, &str)] = &[
    ("map_", "map"),
    ("reduce_", "reduce"),
    ("count_", "reduce"),
    ("scan_", "scan"),
    ("exclusive_scan_", "scan"),
    ("filter_", "filter"),
    ("gather_", "gather"),
    ("histogram_", "scatter_reduce"),
    ("scatter_add_", "scatter_reduce"),
    ("scatter_reduce_", "scatter_reduce"),
    ("scatter_", "scatter"),
    ("permute_", "permute"),
    ("sort_", "sort"),
    ("stencil_", "stencil"),
    ("pipe_", "pipeline"),
    ("generic_", "generic"),
    ("iter_", "loops"),
    ("spmv_", "sparse"),
    ("ragged_", "ragged"),
    ("pcg_", "programs"),
    ("svm_", "programs"),
];

/// Where the report files a case.
#[derive(Clone, Debug, PartialEq)]
struct Class {
    /// Key in [`SECTIONS`].
    section: &'static str,
    /// The case as the report names it: the case, or the family of `family_*`.
    case: String,
    title: String,
    /// The input of a family's member (`spmv_csr_f32_ani4`: `ani4`).
    input: Option<String>,
    /// Position in [`CASES`], for ordering.
    rank: usize,
}

fn classify(case: &str) -> Class {
    for (rank, &(pattern, section, title)) in CASES.iter().enumerate() {
        let class = |case: &str, input: Option<&str>| Class {
            section,
            case: case.to_string(),
            title: title.to_string(),
            input: input.map(str::to_string),
            rank,
        };
        if let Some(family) = pattern.strip_suffix("_*") {
            if let Some(input) = case
                .strip_prefix(family)
                .and_then(|rest| rest.strip_prefix('_'))
                .filter(|input| !input.is_empty())
            {
                return class(family, Some(input));
            }
        } else if pattern == case {
            return class(case, None);
        }
    }
    let section = PREFIXES
        .iter()
        .find(|(prefix, _)| case.starts_with(prefix))
        .map_or("other", |&(_, section)| section);
    Class {
        section,
        case: case.to_string(),
        title: case.to_string(),
        input: None,
        rank: CASES.len(),
    }
}

/// A group with its class, as the report shows it.
struct Row<'a> {
    g: &'a Group,
    class: Class,
}

impl Row<'_> {
    /// The size column: the size, with a family member's input in front.
    fn size(&self) -> String {
        match &self.class.input {
            Some(input) => format!("{input} ({})", self.g.size),
            None => self.g.size.clone(),
        }
    }
}

/// The rows of each section that has any, in the order of [`SECTIONS`]; within one, in
/// the order of [`CASES`], then by input and size.
fn sections(groups: &[Group]) -> Vec<(&'static Section, Vec<Row<'_>>)> {
    let mut rows: Vec<Row<'_>> = groups
        .iter()
        .map(|g| Row {
            g,
            class: classify(&g.case),
        })
        .collect();
    rows.sort_by(|a, b| {
        (a.class.rank, &a.class.case, &a.class.input)
            .cmp(&(b.class.rank, &b.class.case, &b.class.input))
            .then(size_value(&a.g.size).total_cmp(&size_value(&b.g.size)))
    });
    let mut out = Vec::new();
    for section in &SECTIONS {
        let (mine, rest): (Vec<Row<'_>>, Vec<Row<'_>>) =
            rows.into_iter().partition(|r| r.class.section == section.0);
        rows = rest;
        if !mine.is_empty() {
            out.push((section, mine));
        }
    }
    out
}

/// `benches/notes.md`: lines ``- `key` text``, key a case, a family or `case/size`. A key
/// given twice keeps its last line.
fn read_notes(path: &Path) -> BTreeMap<String, String> {
    let mut notes = BTreeMap::new();
    let Ok(text) = std::fs::read_to_string(path) else {
        return notes;
    };
    for line in text.lines() {
        let Some(rest) = line.trim_start().strip_prefix("- `") else {
            continue;
        };
        if let Some((key, note)) = rest.split_once('`') {
            notes.insert(
                key.to_string(),
                note.trim_start_matches([':', ' ']).trim().to_string(),
            );
        }
    }
    notes
}

fn fmt_time(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.1} us", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

fn fmt_ratio(r: Option<f64>) -> String {
    r.map_or_else(|| "-".into(), |r| format!("{r:.2}x"))
}

/// dpl slower than rayon: `rayon / dpl` below 1.
fn below_rayon(g: &Group) -> Option<f64> {
    g.speedup("rayon").filter(|&r| r < 1.0)
}

/// A streaming case at [`CEILING_SIZE`] short of [`CEILING_FRACTION`] of its ceiling.
fn below_ceiling(g: &Group) -> Option<f64> {
    g.of_ceiling()
        .filter(|&c| g.size == CEILING_SIZE && c < CEILING_FRACTION)
}

/// A small case slower than sequential code by more than a call: (dpl, seq) times.
fn above_seq(g: &Group) -> Option<(f64, f64)> {
    let (d, s) = (g.time("dpl")?, g.time("seq")?);
    (size_value(&g.size) <= 1000.0 && d > s + CALL_COST_NS).then_some((d, s))
}

/// Whether the confidence intervals of dpl and `other` overlap.
fn overlaps(g: &Group, other: &str) -> bool {
    match (g.fns.get("dpl"), g.fns.get(other)) {
        (Some(d), Some(o)) => d.low_ns <= o.high_ns && o.low_ns <= d.high_ns,
        _ => false,
    }
}

/// Where in a case some rows are: "at every size", "at 2^16-2^24" (consecutive sizes),
/// "at 1000 and 2^24", or for a family's inputs "on ani4 (3081) and 2dcyl1 (1784)".
fn which(picked: &[usize], all: usize, labels: &[String], family: bool) -> String {
    let names: Vec<&str> = picked.iter().map(|&i| labels[i].as_str()).collect();
    let word = if family { "on" } else { "at" };
    if all > 1 && picked.len() == all {
        return if family {
            "on every matrix".into()
        } else {
            "at every size".into()
        };
    }
    let consecutive = picked.windows(2).all(|w| w[1] == w[0] + 1);
    match names.as_slice() {
        [one] => format!("{word} {one}"),
        [first, .., last] if consecutive && !family && picked.len() > 2 => {
            format!("{word} {first}-{last}")
        }
        [init @ .., last] => format!("{word} {} and {last}", init.join(", ")),
        [] => String::new(),
    }
}

/// `lo-hi` of ratios, or one.
fn ratio_range(rs: &[f64]) -> String {
    let lo = rs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = rs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if (hi - lo).abs() < 0.005 {
        format!("{lo:.2}x")
    } else {
        format!("{lo:.2}-{hi:.2}x")
    }
}

/// The one paragraph of a case (all its rows: consecutive, one class case) that misses a
/// target: which sizes miss which target, then its explanations. `None` when it meets
/// every target.
fn case_paragraph<'a>(rows: &[&Row<'_>], notes: &'a BTreeMap<String, String>) -> Option<String> {
    let first = rows.first()?;
    let family = first.class.input.is_some();
    let labels: Vec<String> = rows.iter().map(|r| r.size()).collect();
    let mut misses = Vec::new();
    // Below rayon.
    let slow: Vec<usize> = (0..rows.len())
        .filter(|&i| below_rayon(rows[i].g).is_some())
        .collect();
    if !slow.is_empty() {
        let ratios: Vec<f64> = slow
            .iter()
            .filter_map(|&i| below_rayon(rows[i].g))
            .collect();
        let noisy: Vec<usize> = slow
            .iter()
            .copied()
            .filter(|&i| overlaps(rows[i].g, "rayon"))
            .collect();
        let noise = if noisy.is_empty() {
            String::new()
        } else if noisy.len() == slow.len() {
            "; within the measurement noise".into()
        } else {
            format!(
                "; within the measurement noise {}",
                which(&noisy, usize::MAX, &labels, family)
            )
        };
        misses.push(format!(
            "slower than rayon {} ({}{noise})",
            which(&slow, rows.len(), &labels, family),
            ratio_range(&ratios)
        ));
    }
    // Short of the ceiling.
    for (r, label) in rows.iter().zip(&labels) {
        if let Some(c) = below_ceiling(r.g) {
            misses.push(format!(
                "{:.0}% of the hand-tuned loop's speed at {label} (target: {:.0}%)",
                100.0 * c,
                100.0 * CEILING_FRACTION
            ));
        }
    }
    // Small sizes: slower than the sequential loop.
    for (r, label) in rows.iter().zip(&labels) {
        if let Some((d, s)) = above_seq(r.g) {
            misses.push(format!(
                "{} slower than the sequential loop at {label} ({} against {}; target: at \
                 most {CALL_COST_NS:.0} ns more)",
                fmt_time(d - s),
                fmt_time(d),
                fmt_time(s)
            ));
        }
    }
    if misses.is_empty() {
        return None;
    }
    // Explanations: the case's (or family's), each missing member's, each missing size's.
    let (mut why, mut seen): (Vec<String>, Vec<&str>) = (Vec::new(), Vec::new());
    let mut add = |lead: String, text: &'a str| {
        if !seen.contains(&text) {
            seen.push(text);
            why.push(format!("{lead}{text}"));
        }
    };
    if let Some(n) = notes.get(&first.class.case) {
        add(String::new(), n);
    }
    for r in rows {
        let missed =
            below_rayon(r.g).is_some() || below_ceiling(r.g).is_some() || above_seq(r.g).is_some();
        if !missed {
            continue;
        }
        if let Some(input) = &r.class.input
            && let Some(n) = notes.get(&r.g.case)
        {
            add(format!("On {input}: "), n);
        }
        if let Some(n) = notes.get(&r.g.name()) {
            add(format!("At {}: ", r.size()), n);
        }
    }
    let why = if why.is_empty() {
        "No explanation recorded yet (`benches/notes.md`).".to_string()
    } else {
        why.join(" ")
    };
    Some(format!(
        "* **{}** (`{}`): {}. {why}",
        first.class.title,
        first.class.case,
        misses.join("; ")
    ))
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let threads = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{cpu}, {threads} hardware threads")
}

/// The geometric mean, if any.
fn geomean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp())
}

/// A column of a results table: heading, right-aligned, the cell of a row.
type Column = (&'static str, bool, fn(&Row<'_>) -> Option<String>);

/// The columns of the results tables; one that would be empty in a section is left out.
const COLUMNS: [Column; 9] = [
    ("dpl", true, |r| r.g.time("dpl").map(fmt_time)),
    ("rayon", true, |r| r.g.time("rayon").map(fmt_time)),
    ("sequential", true, |r| r.g.time("seq").map(fmt_time)),
    ("hand-tuned", true, |r| r.g.time("ceiling").map(fmt_time)),
    ("dpl GB/s", true, |r| {
        r.g.fns
            .get("dpl")
            .and_then(Measurement::gbps)
            .map(|v| format!("{v:.1}"))
    }),
    ("vs rayon", true, |r| {
        r.g.speedup("rayon").map(|v| {
            let s = fmt_ratio(Some(v));
            if v < 1.0 { format!("**{s}**") } else { s }
        })
    }),
    ("vs sequential", true, |r| {
        r.g.speedup("seq").map(|v| fmt_ratio(Some(v)))
    }),
    ("of hand-tuned", true, |r| {
        r.g.of_ceiling().map(|c| format!("{:.0}%", 100.0 * c))
    }),
    ("other", false, |r| {
        let other: Vec<String> =
            r.g.fns
                .values()
                .filter(|m| !COMPARED.contains(&m.function.as_str()))
                .map(|m| format!("{} {}", m.function, fmt_time(m.median_ns)))
                .collect();
        (!other.is_empty()).then(|| other.join(", "))
    }),
];

/// The function ids the report compares.
const COMPARED: [&str; 4] = ["dpl", "rayon", "seq", "ceiling"];

fn markdown(groups: &[Group], notes: &BTreeMap<String, String>) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# Benchmarks\n");
    let _ = writeln!(
        md,
        "How fast dpl's data-parallel primitives and programs run on the CPU (`Place::Cpu`), next \
         to the same work written by hand with rayon and as a plain sequential loop. This file is \
         generated by `cargo xtask bench-report`, which runs every criterion benchmark and then \
         rewrites it and the plot `benches/ratios.svg` (run it on an otherwise idle machine; \
         `benches/README.md` says more). Machine: {}. Times are medians of many calls. On a busy \
         machine the same figure moves by 15-20% between runs, so compare the ratios, which come \
         from one run, rather than absolute times.\n",
        machine()
    );
    let _ = writeln!(md, "How to read the tables:\n");
    let _ = writeln!(
        md,
        "* **dpl**, **rayon**, **sequential**: the time of one call of dpl's version, of the \
         same computation written with rayon as a Rust user would write it, and of a plain \
         single-threaded loop.\n\
         * **hand-tuned**: for cases that stream through memory, a loop tuned by hand for the \
         same memory traffic (a copy, a sum with several accumulators, `a * x + y`): about the \
         fastest this machine moves those bytes.\n\
         * **vs rayon**, **vs sequential**: rayon's (the sequential loop's) time divided by \
         dpl's. 2.00x means dpl takes half the time; below 1.00x (in bold for rayon) dpl is \
         slower.\n\
         * **of hand-tuned**: dpl's speed as a percentage of the hand-tuned loop's.\n\
         * **dpl GB/s**: the bytes the computation has to move (each input read once, each \
         output written once) divided by dpl's time, in gigabytes per second.\n\
         * **other**: other variants timed in the same benchmark, not compared.\n\
         * Sizes count elements: 2^20 is 1,048,576.\n"
    );
    let _ = writeln!(
        md,
        "Targets: dpl at least as fast as rayon at every size; at {CEILING_SIZE} elements, cases \
         that stream through memory within {:.0}% of the hand-tuned loop; at 1,000 elements (too \
         few to be worth splitting across threads) no slower than the sequential loop by more \
         than the cost of a function call ({CALL_COST_NS:.0} ns). Under each table, every case \
         that misses a target has one paragraph: which sizes miss which target, and why (the \
         explanations are kept by hand in `benches/notes.md`). A shortfall within the \
         measurement noise is one where the two medians' 95% confidence intervals overlap.\n",
        100.0 * (1.0 - CEILING_FRACTION)
    );
    let sections = sections(groups);
    // Summary: overall, then per section.
    let vs_rayon: Vec<f64> = groups.iter().filter_map(|g| g.speedup("rayon")).collect();
    let faster = vs_rayon.iter().filter(|&&r| r >= 1.0).count();
    let at_big: Vec<f64> = groups
        .iter()
        .filter(|g| g.size == CEILING_SIZE)
        .filter_map(|g| g.speedup("rayon"))
        .collect();
    let ceil: Vec<f64> = groups
        .iter()
        .filter(|g| g.size == CEILING_SIZE)
        .filter_map(Group::of_ceiling)
        .collect();
    let near = ceil.iter().filter(|&&c| c >= CEILING_FRACTION).count();
    let _ = writeln!(md, "## Summary\n");
    let _ = writeln!(
        md,
        "* {} measurements (a case at one size); {} have a rayon version, and dpl is at least \
         as fast as rayon in {faster} of them.",
        groups.len(),
        vs_rayon.len()
    );
    let _ = writeln!(
        md,
        "* dpl against rayon, geometric mean of `vs rayon`: {} over all sizes, {} at \
         {CEILING_SIZE} elements.",
        fmt_ratio(geomean(&vs_rayon)),
        fmt_ratio(geomean(&at_big))
    );
    let _ = writeln!(
        md,
        "* Cases that stream through memory, at {CEILING_SIZE} elements, within {:.0}% of the \
         hand-tuned loop: {near} of {}.\n",
        100.0 * (1.0 - CEILING_FRACTION),
        ceil.len()
    );
    let _ = writeln!(
        md,
        "| primitive | measurements | with rayon | dpl at least as fast | vs rayon (geometric mean) |"
    );
    let _ = writeln!(md, "|---|---:|---:|---:|---:|");
    for ((_, heading, _), rows) in &sections {
        let rs: Vec<f64> = rows.iter().filter_map(|r| r.g.speedup("rayon")).collect();
        let _ = writeln!(
            md,
            "| [{heading}](#{}) | {} | {} | {} | {} |",
            anchor(heading),
            rows.len(),
            rs.len(),
            rs.iter().filter(|&&r| r >= 1.0).count(),
            fmt_ratio(geomean(&rs))
        );
    }
    let _ = writeln!(
        md,
        "\n![Speed of dpl against rayon, the sequential loop and the hand-tuned loop, per \
         primitive](benches/ratios.svg)\n"
    );
    // One section per primitive.
    for ((_, heading, about), rows) in &sections {
        let _ = writeln!(md, "## {heading}\n\n{about}\n");
        let cols: Vec<&Column> = COLUMNS
            .iter()
            .filter(|(_, _, cell)| rows.iter().any(|r| cell(r).is_some()))
            .collect();
        let _ = write!(md, "| case | size |");
        for (name, _, _) in &cols {
            let _ = write!(md, " {name} |");
        }
        let _ = write!(md, "\n|---|---|");
        for (_, right, _) in &cols {
            let _ = write!(md, "{}", if *right { "---:|" } else { "---|" });
        }
        md.push('\n');
        let mut previous: Option<&str> = None;
        for r in rows {
            let case = if previous == Some(r.class.case.as_str()) {
                String::new()
            } else {
                format!("{} (`{}`)", r.class.title, r.class.case)
            };
            previous = Some(&r.class.case);
            let _ = write!(md, "| {case} | {} |", r.size());
            for (_, _, cell) in &cols {
                let _ = write!(md, " {} |", cell(r).unwrap_or_else(|| "-".into()));
            }
            md.push('\n');
        }
        md.push('\n');
        let mut any = false;
        for case in rows.chunk_by(|a, b| a.class.case == b.class.case) {
            let case: Vec<&Row<'_>> = case.iter().collect();
            if let Some(p) = case_paragraph(&case, notes) {
                let _ = writeln!(md, "{p}");
                any = true;
            }
        }
        if any {
            md.push('\n');
        } else {
            let _ = writeln!(md, "Every case here meets its targets.\n");
        }
    }
    md
}

/// GitHub's anchor of a heading.
fn anchor(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// `text` with XML's special characters escaped.
fn xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A plotted ratio: legend, colour, value of a group.
type Series = (&'static str, &'static str, fn(&Group) -> Option<f64>);

/// Title of the plot.
const PLOT_TITLE: &str = "How fast dpl is, per primitive (right of the line: dpl is faster)";
/// The label of the horizontal axis.
const X_LABEL: &str = "baseline's time / dpl's time (log scale)";
/// The label of the vertical axis.
const Y_LABEL: &str = "case and size, grouped by primitive";

/// A horizontal bar chart, log scale, one row per case and size with dpl's time, grouped by
/// primitive under a heading per group: dpl's speedup over rayon and over the sequential
/// loop, and its speed as a fraction of the hand-tuned loop's, each as a bar from 1.0.
fn plot(groups: &[Group]) -> String {
    let series: [Series; 3] = [
        ("vs rayon", "#1f77b4", |g| g.speedup("rayon")),
        ("vs the sequential loop", "#ff7f0e", |g| g.speedup("seq")),
        ("of the hand-tuned loop", "#2ca02c", Group::of_ceiling),
    ];
    let sections: Vec<_> = sections(groups)
        .into_iter()
        .map(|(s, rows)| {
            let rows: Vec<Row<'_>> = rows
                .into_iter()
                .filter(|r| r.g.time("dpl").is_some())
                .collect();
            (s, rows)
        })
        .filter(|(_, rows)| !rows.is_empty())
        .collect();
    let (label_w, plot_w, bar_h, row_h, head_h) = (330.0, 540.0, 4.0, 15.0, 22.0);
    let (top, bottom) = (112.0, 58.0);
    let (lo, hi) = (-3i32, 6i32); // log2 range: 1/8x .. 64x
    let x = |r: f64| {
        label_w + (r.log2().clamp(lo as f64, hi as f64) - lo as f64) / (hi - lo) as f64 * plot_w
    };
    let n_rows: usize = sections.iter().map(|(_, rows)| rows.len()).sum();
    let body = head_h * sections.len() as f64 + row_h * n_rows as f64;
    let height = top + body + bottom;
    let width = label_w + plot_w + 30.0;
    let (y0, y1) = (top - 4.0, top + body);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="10">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="24" text-anchor="middle" font-size="16" font-weight="bold">{}</text>"#,
        width / 2.0,
        xml(PLOT_TITLE)
    );
    // Legend.
    let _ = writeln!(
        s,
        r#"<text x="{}" y="48" text-anchor="end" font-weight="bold">Bars from 1.0x: dpl's speed</text>"#,
        label_w - 6.0
    );
    for (k, (name, color, _)) in series.iter().enumerate() {
        let lx = label_w + 170.0 * k as f64;
        let _ = writeln!(
            s,
            r#"<rect x="{lx}" y="39" width="12" height="10" fill="{color}"/><text x="{}" y="48">{}</text>"#,
            lx + 16.0,
            xml(name)
        );
    }
    // Grid, tick labels above and below, the 1.0 line.
    for e in lo..=hi {
        let px = x((e as f64).exp2());
        let label = if e >= 0 {
            format!("{}x", 1u64 << e)
        } else {
            format!("1/{}x", 1u64 << -e)
        };
        if e != 0 {
            let _ = writeln!(
                s,
                r##"<line x1="{px}" y1="{y0}" x2="{px}" y2="{y1}" stroke="#ddd"/>"##
            );
        }
        for ty in [top - 10.0, y1 + 14.0] {
            if e == 0 && ty < top {
                continue; // room for the 1.0 line and its label
            }
            let _ = writeln!(
                s,
                r#"<text x="{px}" y="{ty}" text-anchor="middle">{label}</text>"#
            );
        }
    }
    let one = x(1.0);
    let _ = writeln!(
        s,
        r##"<text x="{one}" y="{}" text-anchor="middle" font-weight="bold">1.0x: as fast as rayon</text>"##,
        top - 28.0
    );
    let _ = writeln!(
        s,
        r##"<text x="{}" y="{}" text-anchor="end" fill="#555">&#8592; dpl slower</text><text x="{}" y="{}" fill="#555">dpl faster &#8594;</text>"##,
        one - 8.0,
        top - 44.0,
        one + 8.0,
        top - 44.0
    );
    // Axis labels.
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle" font-size="12">{}</text>"#,
        label_w + plot_w / 2.0,
        y1 + 36.0,
        xml(X_LABEL)
    );
    let _ = writeln!(
        s,
        r#"<text transform="translate(14 {}) rotate(-90)" text-anchor="middle" font-size="12">{}</text>"#,
        top + body / 2.0,
        xml(Y_LABEL)
    );
    let _ = writeln!(
        s,
        r##"<line x1="{label_w}" y1="{y1}" x2="{}" y2="{y1}" stroke="#000"/>"##,
        label_w + plot_w
    );
    // Groups and their rows.
    let mut y = top;
    for ((_, heading, _), rows) in &sections {
        let _ = writeln!(
            s,
            r##"<rect x="24" y="{y}" width="{}" height="{}" fill="#eef"/><text x="28" y="{}" font-size="12" font-weight="bold">{}</text>"##,
            label_w + plot_w - 24.0,
            head_h - 4.0,
            y + head_h - 8.0,
            xml(heading)
        );
        y += head_h;
        for r in rows {
            let name = format!("{}, {}", r.class.title, r.size());
            let _ = writeln!(
                s,
                r#"<text x="{}" y="{}" text-anchor="end">{}</text>"#,
                label_w - 6.0,
                y + 10.0,
                xml(&name)
            );
            for (k, (legend, color, value)) in series.iter().enumerate() {
                if let Some(v) = value(r.g) {
                    let (a, b) = (x(1.0), x(v));
                    let _ = writeln!(
                        s,
                        r#"<rect x="{:.1}" y="{}" width="{:.1}" height="{bar_h}" fill="{color}"><title>{}: {legend} {v:.2}x</title></rect>"#,
                        a.min(b),
                        y + 1.5 + bar_h * k as f64,
                        (b - a).abs().max(0.5),
                        xml(&name)
                    );
                }
            }
            y += row_h;
        }
    }
    // The 1.0 line last, over the bars.
    let _ = writeln!(
        s,
        r##"<line x1="{one}" y1="{}" x2="{one}" y2="{y1}" stroke="#000" stroke-width="2"/>"##,
        top - 24.0
    );
    let _ = writeln!(s, "</svg>");
    s
}

#[cfg(test)]
#[path = "bench_tests.rs"]
mod tests;
