//! dpl next to NVIDIA's CUB on a real GPU: device-wide sum, inclusive scan and radix sort,
//! and a triad, on the same device buffers, in one process, timed in interleaved rounds.
//!
//! For each size (2^10, the latency of one resident call, then 2^20 to 2^28 elements: `f32`
//! for reduce, scan and triad, `u32` keys for the sort) the inputs are uploaded once as
//! [`Seq`]s on `Place::Gpu(0)`; dpl's `#[parallel]` functions read them there and leave their
//! results there, and CUB (`cub::DeviceReduce::Sum`, `cub::DeviceScan::InclusiveSum`,
//! `cub::DeviceRadixSort::SortKeys`) and a hand-written triad kernel run on the very same
//! device buffers (dpl's addresses, from `dpl::gpu::device_buffers`: dpl's driver and the
//! CUDA runtime share the device's primary context), writing into buffers of their own
//! allocated once per size. Every call is timed on the host from the call until the device
//! has finished it (`cudaDeviceSynchronize`; a sum's read-back of its result waits by
//! itself), in interleaved rounds (`examples/shared/timing.rs`); the table gives medians.
//! Before timing, every result is checked: the triads against plain Rust to the bit, the
//! sorts against each other and as a sorted permutation of the keys, the sums and scans
//! against plain Rust in `f64`, and dpl's sum and scan against dpl's own CPU result to the
//! bit (every place gives the same bits).
//!
//! CUB lives in a shared library built from `benches/gpu/cub_bench.cu` with NVIDIA's `nvcc`
//! from PyPI, loaded at run time. `cargo xtask gpu-bench` builds both and runs the
//! program; `cargo xtask gpu-pack` packs it for a GPU machine.
//!
//! ```text
//! gpu_bench [--out FILE] [--lib FILE] [--sizes 10,20,...] [--budget SECONDS] [--dry-run]
//! ```
//!
//! * `--out FILE`: where the Markdown report goes (default `gpu-bench.md`);
//! * `--lib FILE`: the CUB library (default: `libdpl_cub_bench.so` next to this program,
//!   else `target/gpu-bench/libdpl_cub_bench.so`; `DPL_CUB_LIB` also names it);
//! * `--sizes`: the sizes as powers of two (default `10,20,22,24,26,28`);
//! * `--budget`: seconds of timed rounds per size (default 3; at least 9 rounds, at most 301);
//! * `--dry-run`: everything on the simulated GPU (`Place::Sim`, needs the `sim` feature) at
//!   2^10 to 2^14, with plain Rust on the host in CUB's place: no GPU needed, and the times
//!   mean nothing; it exercises the checks, the rounds and the report.
//!
//! Exit status: 0 when every check passed, 1 when one failed or a size could not run (a dpl
//! or CUDA error: the other sizes still run; the report marks it), 2 when the benchmark
//! cannot run here (no GPU, no CUB library). The report is rewritten after every size, so
//! a run stopped midway keeps what it measured.

use std::cell::RefCell;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use dpl::prelude::*;
use rayon::prelude::*;

#[path = "shared/timing.rs"]
mod timing;

/// The sum of the elements (an `f32` accumulation in dpl's fixed order).
#[parallel]
fn sum_f32(x: &Seq<f32>) -> f32 {
    sum(x)
}

/// The inclusive prefix sums, left on the device.
#[parallel]
fn scan_f32(x: &Seq<f32>) -> Seq<f32> {
    scan(|a, b| a + b, x)
}

/// The keys in ascending order, left on the device.
#[parallel]
fn sort_u32(keys: &Seq<u32>) -> Seq<u32> {
    sort(keys)
}

/// STREAM's triad, `x + a * y`, left on the device.
#[parallel]
fn triad(a: f32, x: &Seq<f32>, y: &Seq<f32>) -> Seq<f32> {
    map(|xi, yi| xi + a * yi, x, y)
}

/// The triad on host vectors: both moved to the device and the result back, every call.
#[parallel]
fn triad_host(a: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
    map(|xi, yi| xi + a * yi, x, y)
}

/// The triad's scalar.
const A: f32 = 3.0;

const USAGE: &str = "usage: gpu_bench [--out FILE] [--lib FILE] [--sizes 10,20,...] \
                     [--budget SECONDS] [--dry-run]";

fn main() {
    let opts = match Options::parse(std::env::args().skip(1)) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("gpu_bench: {e}\n{USAGE}");
            std::process::exit(2);
        }
    };
    let (place, baseline) = match setup(&opts) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("gpu_bench: {e}");
            std::process::exit(2);
        }
    };
    for (name, f) in [
        ("sum_f32", dpl::inspect!(sum_f32)),
        ("scan_f32", dpl::inspect!(scan_f32)),
        ("sort_u32", dpl::inspect!(sort_u32)),
        ("triad", dpl::inspect!(triad)),
        ("triad_host", dpl::inspect!(triad_host)),
    ] {
        if f.ptx.is_empty() {
            eprintln!(
                "gpu_bench: `{name}` was not compiled for the GPU: {}",
                f.gpu_not_compiled
            );
            std::process::exit(2);
        }
    }
    println!("{}", baseline.describe());
    let copy = baseline.copy_bandwidth(1 << opts.sizes.iter().max().copied().unwrap_or(20));
    let mut rows = Vec::new();
    let mut aborted = Vec::new();
    for &log2 in &opts.sizes {
        let started = Instant::now();
        // A size that fails (a dpl or CUDA error panics) is reported, and the others run.
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            with_place(place, || bench_size(log2, &opts, baseline.as_ref()))
        }));
        match outcome {
            Ok(size_rows) => {
                for r in &size_rows {
                    println!("{}", r.line(baseline.name()));
                }
                rows.extend(size_rows);
            }
            Err(panic) => {
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "a panic".into());
                println!("  2^{log2} ABORTED: {message}");
                aborted.push((log2, message));
            }
        }
        println!("  (2^{log2} took {:.1} s)", started.elapsed().as_secs_f64());
        // Written after every size, so that a run stopped midway keeps what it measured.
        let text = report(&opts, baseline.as_ref(), copy, &rows, &aborted);
        if let Err(e) = std::fs::write(&opts.out, &text) {
            eprintln!("gpu_bench: cannot write {}: {e}", opts.out.display());
            std::process::exit(2);
        }
    }
    println!(
        "\n{}",
        report(&opts, baseline.as_ref(), copy, &rows, &aborted)
    );
    println!("gpu_bench: wrote {}", opts.out.display());
    let failed = rows.iter().filter(|r| r.check.is_err()).count();
    if failed > 0 || !aborted.is_empty() {
        eprintln!(
            "gpu_bench: {failed} check(s) FAILED, {} size(s) aborted",
            aborted.len()
        );
        std::process::exit(1);
    }
}

/// The command line.
struct Options {
    out: PathBuf,
    lib: Option<PathBuf>,
    sizes: Vec<u32>,
    budget: Duration,
    dry_run: bool,
}

impl Options {
    fn parse(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
        let mut opts = Options {
            out: PathBuf::from("gpu-bench.md"),
            lib: std::env::var_os("DPL_CUB_LIB").map(PathBuf::from),
            sizes: Vec::new(),
            budget: Duration::from_secs(3),
            dry_run: false,
        };
        while let Some(arg) = args.next() {
            let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
            match arg.as_str() {
                "--out" => opts.out = value("--out")?.into(),
                "--lib" => opts.lib = Some(value("--lib")?.into()),
                "--sizes" => {
                    opts.sizes = value("--sizes")?
                        .split(',')
                        .map(|s| match s.trim().parse::<u32>() {
                            Ok(k) if (1..=30).contains(&k) => Ok(k),
                            _ => Err(format!("--sizes: `{s}` is not a power of two in 1..=30")),
                        })
                        .collect::<Result<_, _>>()?;
                }
                "--budget" => {
                    let v = value("--budget")?;
                    let secs: f64 = v
                        .parse()
                        .ok()
                        .filter(|s: &f64| s.is_finite() && *s > 0.0)
                        .ok_or(format!(
                            "--budget: `{v}` is not a positive number of seconds"
                        ))?;
                    opts.budget = Duration::from_secs_f64(secs);
                }
                "--dry-run" => opts.dry_run = true,
                "--help" | "-h" => {
                    println!("{USAGE}");
                    std::process::exit(0);
                }
                other => return Err(format!("unknown argument `{other}`")),
            }
        }
        if opts.sizes.is_empty() {
            opts.sizes = if opts.dry_run {
                vec![10, 12, 14]
            } else {
                vec![10, 20, 22, 24, 26, 28]
            };
        }
        Ok(opts)
    }
}

/// The place dpl runs on and the baseline next to it.
fn setup(opts: &Options) -> Result<(Place, Box<dyn Baseline>), String> {
    if opts.dry_run {
        if !dpl::available_places().contains(&Place::Sim) {
            return Err("--dry-run runs on the simulated GPU: build with `--features sim`".into());
        }
        return Ok((Place::Sim, Box::new(PlainRust::default())));
    }
    // dpl's driver first: it retains the primary context that the CUDA runtime then uses.
    dpl::gpu::device_status(0).map_err(|reason| {
        format!(
            "no usable CUDA device here ({reason}).\n\
             This program measures dpl next to CUB on an NVIDIA GPU. Without one, \
             `cargo xtask gpu-bench --dry-run` runs the same pipeline on the simulated GPU, \
             and `cargo xtask gpu-pack` prepares a run for a GPU machine."
        )
    })?;
    let path = library_path(opts.lib.as_deref())?;
    let cub = Cub::load(&path)?;
    Ok((GPU, Box::new(cub)))
}

/// Where the CUB library is: `--lib`/`DPL_CUB_LIB`, else next to this program, else where
/// `cargo xtask gpu-bench` builds it.
fn library_path(given: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(p) = given {
        return Ok(p.to_path_buf());
    }
    let beside = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(|d| d.join(LIBRARY)));
    let built = Path::new("target").join("gpu-bench").join(LIBRARY);
    beside
        .into_iter()
        .chain([built])
        .find(|p| p.exists())
        .ok_or(format!(
            "the CUB library {LIBRARY} is neither next to this program nor in \
             target/gpu-bench: build it with `cargo xtask gpu-bench` (or name it with --lib)"
        ))
}

/// The file name of the CUB library.
const LIBRARY: &str = "libdpl_cub_bench.so";

/// The operations compared.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Reduce,
    Scan,
    Sort,
    Triad,
    /// The triad on host vectors, dpl's transfers through its page-locked staging.
    HostTriad,
    /// The same through the CUDA driver's copies from pageable memory (staging off).
    HostTriadPageable,
}

impl Op {
    const ALL: [Op; 6] = [
        Op::Reduce,
        Op::Scan,
        Op::Sort,
        Op::Triad,
        Op::HostTriad,
        Op::HostTriadPageable,
    ];

    fn name(self) -> &'static str {
        match self {
            Op::Reduce => "reduce (sum, f32)",
            Op::Scan => "inclusive scan (+, f32)",
            Op::Sort => "sort (u32 keys)",
            Op::Triad => "triad (x + a y, f32)",
            Op::HostTriad => "triad on host vectors (staged)",
            Op::HostTriadPageable => "triad on host vectors (pageable)",
        }
    }

    /// Whether the data stay on the device (else every call moves them over the bus).
    fn resident(self) -> bool {
        !matches!(self, Op::HostTriad | Op::HostTriadPageable)
    }

    /// The fewest bytes the operation moves through device memory per element (each input
    /// read once, each output written once); `None` for the sort, rated in keys per second.
    fn bytes_per_element(self) -> Option<f64> {
        match self {
            Op::Reduce => Some(4.0),
            Op::Scan => Some(8.0),
            Op::Sort => None,
            Op::Triad | Op::HostTriad | Op::HostTriadPageable => Some(12.0),
        }
    }

    /// The issue's target for dpl's time over the baseline's, at 2^24 elements and more
    /// (none for the transfers: their rates are reported).
    fn target_ratio(self) -> Option<f64> {
        match self {
            Op::Sort => Some(1.5),
            Op::HostTriad | Op::HostTriadPageable => None,
            _ => Some(1.1),
        }
    }
}

/// One operation at one size.
struct Row {
    op: Op,
    log2: u32,
    dpl: Duration,
    base: Duration,
    rounds: usize,
    check: Result<(), String>,
}

impl Row {
    fn n(&self) -> usize {
        1 << self.log2
    }

    fn ratio(&self) -> f64 {
        self.dpl.as_secs_f64() / self.base.as_secs_f64()
    }

    /// GB/s of the fewest bytes moved, or G keys/s for the sort.
    fn rate(&self, t: Duration) -> String {
        let per_s = self.n() as f64 / t.as_secs_f64();
        match self.op.bytes_per_element() {
            Some(b) => format!("{:.0} GB/s", b * per_s / 1e9),
            None => format!("{:.2} G keys/s", per_s / 1e9),
        }
    }

    /// The share of `peak` (bytes per second) that the fewest bytes moved in `t` are (the
    /// device memory's peak: none for data moved over the bus).
    fn share(&self, t: Duration, peak: Option<f64>) -> String {
        match (self.op.bytes_per_element(), peak) {
            (Some(b), Some(peak)) if self.op.resident() => {
                format!(
                    "{:.0}%",
                    100.0 * b * self.n() as f64 / t.as_secs_f64() / peak
                )
            }
            _ => "-".into(),
        }
    }

    /// A progress line.
    fn line(&self, base: &str) -> String {
        format!(
            "  {:<32} 2^{:<2}  dpl {:>10}  {base} {:>10}  dpl/{base} {:>5.2}  {}",
            self.op.name(),
            self.log2,
            time(self.dpl),
            time(self.base),
            self.ratio(),
            match &self.check {
                Ok(()) => "checked".to_string(),
                Err(e) => format!("CHECK FAILED: {e}"),
            }
        )
    }
}

/// Checks and times every operation at 2^`log2` elements.
fn bench_size(log2: u32, opts: &Options, base: &dyn Baseline) -> Vec<Row> {
    let n = 1usize << log2;
    let seed = u64::from(log2) << 32;
    // Dyadic values in (0, 2]: positive, so that a sum's relative error is meaningful.
    let x: Seq<f32> = Seq::from(random(n, seed, |r| ((r % 128) + 1) as f32 / 64.0));
    let y: Seq<f32> = Seq::from(random(n, seed + 1, |r| {
        (r >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
    }));
    let keys: Seq<u32> = Seq::from(random(n, seed + 2, |r| (r >> 32) as u32));
    // The same values as host vectors, for the triad whose data cross the bus every call.
    let (xv, yv) = (x.to_vec(), y.to_vec());

    // The checks, which also upload the inputs (dpl's first calls) and warm everything up.
    let checks = [
        check_sum(&x, base),
        check_scan(&x, base),
        check_sort(&keys, base),
        check_triad(&x, &y, base),
        check_host_triad(&xv, &yv, true, base),
        check_host_triad(&xv, &yv, false, base),
    ];
    // Both sides read the inputs where dpl's first calls put them (panics if not there).
    let place = dpl::current_place();
    device_address(&x, place);
    device_address(&y, place);
    device_address(&keys, place);

    let fs: [&dyn Fn(); 12] = [
        &|| {
            std::hint::black_box(sum_f32(&x));
        },
        &|| {
            std::hint::black_box(base.sum(&x));
        },
        &|| {
            let r = scan_f32(&x);
            base.sync();
            drop(r);
        },
        &|| {
            base.scan(&x);
            base.sync();
        },
        &|| {
            let r = sort_u32(&keys);
            base.sync();
            drop(r);
        },
        &|| {
            base.sort(&keys);
            base.sync();
        },
        &|| {
            let r = triad(A, &x, &y);
            base.sync();
            drop(r);
        },
        &|| {
            base.triad(A, &x, &y);
            base.sync();
        },
        &|| {
            staging(true);
            std::hint::black_box(triad_host(A, &xv, &yv));
        },
        &|| base.host_triad(A, &xv, &yv),
        &|| {
            staging(false);
            std::hint::black_box(triad_host(A, &xv, &yv));
            staging(true);
        },
        &|| base.host_triad(A, &xv, &yv),
    ];
    // One probe round sizes the rounds to the budget.
    let probe: Duration = timing::interleaved(&fs, 1).iter().map(|t| t.1).sum();
    let rounds = (opts.budget.as_secs_f64() / probe.as_secs_f64().max(1e-9)) as usize;
    let rounds = rounds.clamp(9, 301);
    let times = timing::interleaved(&fs, rounds);
    Op::ALL
        .iter()
        .zip(checks)
        .enumerate()
        .map(|(k, (&op, check))| Row {
            op,
            log2,
            dpl: times[2 * k].1,
            base: times[2 * k + 1].1,
            rounds,
            check,
        })
        .collect()
}

/// `n` values `f(r)` of pseudo-random 64-bit words `r` (SplitMix64 of the index, so the
/// values are made in parallel and do not depend on the number of threads).
fn random<T: Send>(n: usize, seed: u64, f: impl Fn(u64) -> T + Sync) -> Vec<T> {
    (0..n as u64)
        .into_par_iter()
        .map(|i| {
            let mut z = seed
                .wrapping_mul(0xD6E8_FEB8_6659_FD93)
                .wrapping_add(i.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            f(z ^ (z >> 31))
        })
        .collect()
}

/// The largest relative error of a sum or scan result against `f64` sums of positive
/// values, tolerated: a reordered `f32` accumulation of `n` terms stays far below it, a
/// wrong one (a lost or doubled tile, garbage) does not.
const TOLERANCE: f64 = 1e-3;

/// Both sums within [`TOLERANCE`] of the `f64` sum, and dpl's equal to its CPU result.
fn check_sum(x: &Seq<f32>, base: &dyn Baseline) -> Result<(), String> {
    let got = sum_f32(x);
    let on_cpu = with_place(Place::Cpu, || sum_f32(x));
    let want: f64 = x.par_iter().map(|&v| f64::from(v)).sum();
    let theirs = base.sum(x);
    let off = |v: f32| (f64::from(v) - want).abs() / want;
    if got.to_bits() != on_cpu.to_bits() {
        return Err(format!("dpl's sum {got} differs from its CPU sum {on_cpu}"));
    }
    if off(got) > TOLERANCE || off(theirs) > TOLERANCE {
        return Err(format!(
            "sums {got} (dpl), {theirs} ({}), want {want}",
            base.name()
        ));
    }
    Ok(())
}

/// Both scans within [`TOLERANCE`] of `f64` prefix sums at every element, and dpl's equal
/// to its CPU scan.
fn check_scan(x: &Seq<f32>, base: &dyn Baseline) -> Result<(), String> {
    let got = scan_f32(x).into_vec();
    let on_cpu = with_place(Place::Cpu, || scan_f32(x)).into_vec();
    base.scan(x);
    base.sync();
    let theirs = base.out_f32(x.len());
    let mut acc = 0f64;
    let want: Vec<f64> = x
        .iter()
        .map(|&v| {
            acc += f64::from(v);
            acc
        })
        .collect();
    compare("dpl's scan", "its CPU scan", &got, &on_cpu, |g, c| {
        g.to_bits() == c.to_bits()
    })?;
    let close = |g: &f32, w: &f64| (f64::from(*g) - w).abs() <= TOLERANCE * w;
    compare("dpl's scan", "f64 sums", &got, &want, close)?;
    compare(
        &format!("{}'s scan", base.name()),
        "f64 sums",
        &theirs,
        &want,
        close,
    )
}

/// `Ok` when `got` and `want` have the same length and `same` holds at every element, else
/// where they first differ.
fn compare<T: Sync + std::fmt::Debug, U: Sync + std::fmt::Debug>(
    who: &str,
    what: &str,
    got: &[T],
    want: &[U],
    same: impl Fn(&T, &U) -> bool + Sync,
) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!(
            "{who} has {} elements, {what} {}",
            got.len(),
            want.len()
        ));
    }
    match got
        .par_iter()
        .zip(want)
        .position_first(|(g, w)| !same(g, w))
    {
        Some(i) => Err(format!(
            "{who} differs from {what} at {i}: {:?} vs {:?}",
            got[i], want[i]
        )),
        None => Ok(()),
    }
}

/// Both sorts equal, sorted, and a permutation of the keys (the same multiset hash).
fn check_sort(keys: &Seq<u32>, base: &dyn Baseline) -> Result<(), String> {
    let got = sort_u32(keys).into_vec();
    base.sort(keys);
    base.sync();
    let theirs = base.out_u32(keys.len());
    compare(
        "dpl's sort",
        &format!("{}'s", base.name()),
        &got,
        &theirs,
        |a, b| a == b,
    )?;
    if let Some(i) = got.par_windows(2).position_first(|w| w[0] > w[1]) {
        return Err(format!("not sorted at {i}: {} > {}", got[i], got[i + 1]));
    }
    if multiset_hash(&got) != multiset_hash(keys) {
        return Err("the sorted keys are not a permutation of the keys".into());
    }
    Ok(())
}

/// A hash of the multiset of `keys` (a sum of mixed keys: independent of their order).
fn multiset_hash(keys: &[u32]) -> (u64, u64) {
    keys.par_iter()
        .map(|&k| {
            let z = (u64::from(k) ^ 0x9E37_79B9_7F4A_7C15).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            (z ^ (z >> 31), u64::from(k))
        })
        .reduce(
            || (0, 0),
            |a, b| (a.0.wrapping_add(b.0), a.1.wrapping_add(b.1)),
        )
}

/// Both triads equal to plain Rust to the bit.
/// Switches the staging of dpl's transfers to and from the current place's CUDA device on
/// or off (`CudaDriver::set_staging`); nothing on the simulated GPU of a dry run.
fn staging(on: bool) {
    if let Ok(dpl_cuda::runtime::Device::Cuda(d)) = dpl_cuda::runtime::device(dpl::current_place())
    {
        d.inner().set_staging(on);
    }
}

/// The triad on host vectors, with dpl's transfers staged or not, against plain Rust to
/// the bit (and the baseline's).
fn check_host_triad(x: &[f32], y: &[f32], staged: bool, base: &dyn Baseline) -> Result<(), String> {
    staging(staged);
    let got = triad_host(A, x, y);
    staging(true);
    base.host_triad(A, x, y);
    let theirs = base.out_f32(x.len());
    let want: Vec<f32> = x.par_iter().zip(y).map(|(a, b)| a + A * b).collect();
    let bits = |g: &f32, w: &f32| g.to_bits() == w.to_bits();
    let what = if staged { "staged" } else { "pageable" };
    compare(
        &format!("dpl's triad on host vectors ({what})"),
        "plain Rust",
        &got,
        &want,
        bits,
    )?;
    compare(
        &format!("{}'s triad on host vectors", base.name()),
        "plain Rust",
        &theirs,
        &want,
        bits,
    )
}

fn check_triad(x: &Seq<f32>, y: &Seq<f32>, base: &dyn Baseline) -> Result<(), String> {
    let got = triad(A, x, y).into_vec();
    base.triad(A, x, y);
    base.sync();
    let theirs = base.out_f32(x.len());
    let want: Vec<f32> = x
        .par_iter()
        .zip(y.par_iter())
        .map(|(a, b)| a + A * b)
        .collect();
    let bits = |g: &f32, w: &f32| g.to_bits() == w.to_bits();
    compare("dpl's triad", "plain Rust", &got, &want, bits)?;
    compare(
        &format!("{}'s triad", base.name()),
        "plain Rust",
        &theirs,
        &want,
        bits,
    )
}

/// What dpl is compared with: CUB on the GPU, or plain Rust on the host in a dry run. The
/// scan, sort and triad leave their result in the baseline's own output, read back by
/// [`Baseline::out_f32`] / [`Baseline::out_u32`].
trait Baseline {
    /// The column's name.
    fn name(&self) -> &'static str;
    /// The device's name.
    fn device(&self) -> String;
    /// The device and versions, for the report.
    fn describe(&self) -> String;
    /// Peak device-memory bandwidth in bytes per second, if known.
    fn peak(&self) -> Option<f64>;
    /// Measured device-to-device copy bandwidth over `elements` `f32`s (bytes read plus
    /// written per second), if there is a device.
    fn copy_bandwidth(&self, elements: usize) -> Option<f64>;
    /// Waits until the device has finished all the work queued (dpl's too).
    fn sync(&self);
    fn sum(&self, x: &Seq<f32>) -> f32;
    fn scan(&self, x: &Seq<f32>);
    fn sort(&self, keys: &Seq<u32>);
    fn triad(&self, a: f32, x: &Seq<f32>, y: &Seq<f32>);
    /// The triad of host vectors, with the moves to and from the device, waited for; the
    /// result also in the output ([`Baseline::out_f32`]).
    fn host_triad(&self, a: f32, x: &[f32], y: &[f32]);
    fn out_f32(&self, n: usize) -> Vec<f32>;
    fn out_u32(&self, n: usize) -> Vec<u32>;
}

/// Plain sequential Rust on the host: the dry run's stand-in for CUB.
#[derive(Default)]
struct PlainRust {
    out_f32: RefCell<Vec<f32>>,
    out_u32: RefCell<Vec<u32>>,
}

impl Baseline for PlainRust {
    fn name(&self) -> &'static str {
        "plain Rust"
    }

    fn device(&self) -> String {
        "the simulated GPU (dry run)".into()
    }

    fn describe(&self) -> String {
        "DRY RUN: dpl on the simulated GPU (Place::Sim) next to plain sequential Rust on the \
         host in CUB's place; the times mean nothing"
            .into()
    }

    fn peak(&self) -> Option<f64> {
        None
    }

    fn copy_bandwidth(&self, _: usize) -> Option<f64> {
        None
    }

    fn sync(&self) {}

    fn sum(&self, x: &Seq<f32>) -> f32 {
        x.iter().sum()
    }

    fn scan(&self, x: &Seq<f32>) {
        let mut out = self.out_f32.borrow_mut();
        out.clear();
        let mut acc = 0f32;
        out.extend(x.iter().map(|v| {
            acc += v;
            acc
        }));
    }

    fn sort(&self, keys: &Seq<u32>) {
        let mut out = self.out_u32.borrow_mut();
        out.clear();
        out.extend_from_slice(keys);
        out.sort_unstable();
    }

    fn triad(&self, a: f32, x: &Seq<f32>, y: &Seq<f32>) {
        let mut out = self.out_f32.borrow_mut();
        out.clear();
        out.extend(x.iter().zip(y.iter()).map(|(u, v)| u + a * v));
    }

    fn host_triad(&self, a: f32, x: &[f32], y: &[f32]) {
        let mut out = self.out_f32.borrow_mut();
        out.clear();
        out.extend(x.iter().zip(y).map(|(u, v)| u + a * v));
    }

    fn out_f32(&self, n: usize) -> Vec<f32> {
        self.out_f32.borrow()[..n].to_vec()
    }

    fn out_u32(&self, n: usize) -> Vec<u32> {
        self.out_u32.borrow()[..n].to_vec()
    }
}

/// What `dcb_init` reports about the device (`DcbDeviceInfo` in `cub_bench.cu`).
#[repr(C)]
struct DeviceInfo {
    name: [c_char; 256],
    multiprocessors: c_int,
    cc_major: c_int,
    cc_minor: c_int,
    memory_clock_khz: c_int,
    memory_bus_bits: c_int,
    l2_bytes: c_int,
    driver_version: c_int,
    runtime_version: c_int,
    cub_version: c_int,
    total_memory: u64,
}

/// The entry points of the CUB library (`cub_bench.cu` documents each).
struct CubLib {
    error_string: unsafe extern "C" fn(c_int) -> *const c_char,
    init: unsafe extern "C" fn(c_int, *mut DeviceInfo) -> c_int,
    sync: unsafe extern "C" fn() -> c_int,
    alloc: unsafe extern "C" fn(usize, *mut *mut c_void) -> c_int,
    free: unsafe extern "C" fn(*mut c_void) -> c_int,
    read: unsafe extern "C" fn(*const c_void, *mut c_void, usize) -> c_int,
    copy: unsafe extern "C" fn(*mut c_void, *const c_void, usize) -> c_int,
    sum: unsafe extern "C" fn(*const f32, usize, *mut f32) -> c_int,
    scan: unsafe extern "C" fn(*const f32, *mut f32, usize) -> c_int,
    sort: unsafe extern "C" fn(*const u32, *mut u32, usize) -> c_int,
    triad: unsafe extern "C" fn(*const f32, *const f32, *mut f32, f32, usize) -> c_int,
    host_triad: unsafe extern "C" fn(*const f32, *const f32, *mut f32, f32, usize) -> c_int,
    /// Keeps the code behind the pointers above loaded.
    _lib: libloading::Library,
}

/// The place CUB runs next to dpl.
const GPU: Place = Place::Gpu(0);

/// CUB on the GPU.
struct Cub {
    lib: CubLib,
    info: DeviceInfo,
    /// The output of the scan, sort and triad: (address, bytes), grown as needed.
    out: RefCell<(usize, usize)>,
}

impl Cub {
    fn load(path: &Path) -> Result<Cub, String> {
        // SAFETY: the library is ours (built from cub_bench.cu); loading it runs only the
        // static initialisers of the CUDA runtime linked into it.
        let lib = unsafe { libloading::Library::new(path) }
            .map_err(|e| format!("cannot load the CUB library {}: {e}", path.display()))?;
        fn get<T: Copy>(lib: &libloading::Library, name: &str) -> Result<T, String> {
            // SAFETY: every `T` asked for below is the C signature of `name` in
            // cub_bench.cu; the pointer is used only while the library stays loaded (it is
            // kept in `CubLib` with them).
            unsafe { lib.get::<T>(name.as_bytes()) }
                .map(|s| *s)
                .map_err(|e| format!("the CUB library lacks {name}: {e}"))
        }
        let lib = CubLib {
            error_string: get(&lib, "dcb_error_string")?,
            init: get(&lib, "dcb_init")?,
            sync: get(&lib, "dcb_sync")?,
            alloc: get(&lib, "dcb_alloc")?,
            free: get(&lib, "dcb_free")?,
            read: get(&lib, "dcb_read")?,
            copy: get(&lib, "dcb_copy")?,
            sum: get(&lib, "dcb_sum_f32")?,
            scan: get(&lib, "dcb_scan_f32")?,
            sort: get(&lib, "dcb_sort_u32")?,
            triad: get(&lib, "dcb_triad_f32")?,
            host_triad: get(&lib, "dcb_host_triad_f32")?,
            _lib: lib,
        };
        // SAFETY: all-zero bytes are a valid `DeviceInfo` (integers and a char array).
        let mut info: DeviceInfo = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a valid, writable `DcbDeviceInfo`.
        let code = unsafe { (lib.init)(0, &mut info) };
        let cub = Cub {
            lib,
            info,
            out: RefCell::new((0, 0)),
        };
        cub.ok("dcb_init", code).map_err(|e| {
            format!("the CUDA runtime cannot use device 0 next to dpl's driver: {e}")
        })?;
        Ok(cub)
    }

    /// `Ok` for a zero status, else the runtime's name for it.
    fn ok(&self, what: &str, code: c_int) -> Result<(), String> {
        if code == 0 {
            return Ok(());
        }
        // SAFETY: cudaGetErrorString returns a static NUL-terminated string for any code.
        let text = unsafe { CStr::from_ptr((self.lib.error_string)(code)) };
        Err(format!(
            "{what} failed: {} ({code})",
            text.to_string_lossy()
        ))
    }

    /// Panics (the benchmark cannot go on) on a non-zero status.
    fn must(&self, what: &str, code: c_int) {
        if let Err(e) = self.ok(what, code) {
            panic!("CUB baseline: {e}");
        }
    }

    /// The output buffer, at least `bytes` long.
    fn out(&self, bytes: usize) -> usize {
        let mut out = self.out.borrow_mut();
        if out.1 < bytes {
            if out.0 != 0 {
                // SAFETY: `out.0` came from dcb_alloc and is freed once.
                self.must("dcb_free", unsafe { (self.lib.free)(out.0 as *mut c_void) });
                *out = (0, 0);
            }
            let mut p: *mut c_void = std::ptr::null_mut();
            // SAFETY: `p` is a valid out-pointer.
            self.must("dcb_alloc", unsafe { (self.lib.alloc)(bytes, &mut p) });
            *out = (p as usize, bytes);
        }
        out.0
    }

    fn read<T: Copy + Default>(&self, n: usize) -> Vec<T> {
        let bytes = n * std::mem::size_of::<T>();
        let src = self.out(bytes);
        let mut host = vec![T::default(); n];
        // SAFETY: `src` holds at least `bytes` bytes on the device and `host` as many on
        // the host.
        let code =
            unsafe { (self.lib.read)(src as *const c_void, host.as_mut_ptr().cast(), bytes) };
        self.must("dcb_read", code);
        host
    }
}

/// The address of `seq`'s device copy on device 0: where dpl keeps it.
/// The address of `seq`'s device copy on `place`: where dpl keeps it (one buffer: a
/// sequence of scalars).
fn device_address<T>(seq: &Seq<T>, place: Place) -> usize {
    match dpl::gpu::device_buffers(seq) {
        Some((p, [address])) if p == place => *address as usize,
        other => {
            panic!("expected one buffer on {place} (uploaded by dpl's first call), found {other:?}")
        }
    }
}

impl Drop for Cub {
    fn drop(&mut self) {
        let (p, _) = *self.out.get_mut();
        if p != 0 {
            // SAFETY: `p` came from dcb_alloc and is freed once.
            let _ = unsafe { (self.lib.free)(p as *mut c_void) };
        }
    }
}

impl Baseline for Cub {
    fn name(&self) -> &'static str {
        "CUB"
    }

    fn device(&self) -> String {
        let name: Vec<u8> = self
            .info
            .name
            .iter()
            .map(|&c| c as u8)
            .take_while(|&c| c != 0)
            .collect();
        String::from_utf8_lossy(&name).into_owned()
    }

    fn describe(&self) -> String {
        let i = &self.info;
        let version = |v: c_int| format!("{}.{}", v / 1000, v % 1000 / 10);
        let peak = match self.peak() {
            Some(p) => format!(
                "peak memory bandwidth {:.0} GB/s ({} MHz x {} bits x 2)",
                p / 1e9,
                i.memory_clock_khz / 1000,
                i.memory_bus_bits
            ),
            None => "peak memory bandwidth not reported".into(),
        };
        format!(
            "{}: compute capability {}.{}, {} multiprocessors, {:.0} GiB, {} MiB of L2, {peak}; \
             CUDA driver {}, runtime {}, CUB {}.{}.{}",
            self.device(),
            i.cc_major,
            i.cc_minor,
            i.multiprocessors,
            i.total_memory as f64 / f64::from(1 << 30),
            i.l2_bytes >> 20,
            version(i.driver_version),
            version(i.runtime_version),
            i.cub_version / 100_000,
            i.cub_version / 100 % 1000,
            i.cub_version % 100,
        )
    }

    fn peak(&self) -> Option<f64> {
        let i = &self.info;
        let peak = 2.0 * f64::from(i.memory_clock_khz) * 1e3 * f64::from(i.memory_bus_bits) / 8.0;
        (peak > 0.0).then_some(peak)
    }

    fn copy_bandwidth(&self, elements: usize) -> Option<f64> {
        let bytes = elements * 4;
        let src = self.out(2 * bytes);
        let dst = src + bytes;
        let copy = || {
            // SAFETY: both halves of the output buffer hold `bytes` bytes.
            let code = unsafe { (self.lib.copy)(dst as *mut c_void, src as *const c_void, bytes) };
            self.must("dcb_copy", code);
            self.sync();
        };
        let t = timing::interleaved(&[&copy], 9)[0].1;
        Some(2.0 * bytes as f64 / t.as_secs_f64())
    }

    fn sync(&self) {
        // SAFETY: no arguments.
        self.must("dcb_sync", unsafe { (self.lib.sync)() });
    }

    fn sum(&self, x: &Seq<f32>) -> f32 {
        let mut s = 0f32;
        // SAFETY: dpl's buffer holds `x.len()` f32s on the device; `s` is a valid out-pointer.
        let code = unsafe { (self.lib.sum)(device_address(x, GPU) as *const f32, x.len(), &mut s) };
        self.must("dcb_sum_f32", code);
        s
    }

    fn scan(&self, x: &Seq<f32>) {
        let out = self.out(x.len() * 4);
        // SAFETY: dpl's buffer and the output hold `x.len()` f32s on the device.
        let code = unsafe {
            (self.lib.scan)(
                device_address(x, GPU) as *const f32,
                out as *mut f32,
                x.len(),
            )
        };
        self.must("dcb_scan_f32", code);
    }

    fn sort(&self, keys: &Seq<u32>) {
        let out = self.out(keys.len() * 4);
        // SAFETY: dpl's buffer and the output hold `keys.len()` u32s on the device.
        let code = unsafe {
            (self.lib.sort)(
                device_address(keys, GPU) as *const u32,
                out as *mut u32,
                keys.len(),
            )
        };
        self.must("dcb_sort_u32", code);
    }

    fn triad(&self, a: f32, x: &Seq<f32>, y: &Seq<f32>) {
        assert_eq!(x.len(), y.len());
        let out = self.out(x.len() * 4);
        // SAFETY: dpl's two buffers and the output hold `x.len()` f32s on the device.
        let code = unsafe {
            (self.lib.triad)(
                device_address(x, GPU) as *const f32,
                device_address(y, GPU) as *const f32,
                out as *mut f32,
                a,
                x.len(),
            )
        };
        self.must("dcb_triad_f32", code);
    }

    fn host_triad(&self, a: f32, x: &[f32], y: &[f32]) {
        assert_eq!(x.len(), y.len());
        let out = self.out(x.len() * 4);
        // SAFETY: `x` and `y` hold `x.len()` f32s on the host, the output as many on the
        // device.
        let code =
            unsafe { (self.lib.host_triad)(x.as_ptr(), y.as_ptr(), out as *mut f32, a, x.len()) };
        self.must("dcb_host_triad_f32", code);
    }

    fn out_f32(&self, n: usize) -> Vec<f32> {
        self.read(n)
    }

    fn out_u32(&self, n: usize) -> Vec<u32> {
        self.read(n)
    }
}

/// `t` in us or ms.
fn time(t: Duration) -> String {
    let us = t.as_secs_f64() * 1e6;
    if us < 1000.0 {
        format!("{us:.1} us")
    } else {
        format!("{:.2} ms", us / 1000.0)
    }
}

/// The Markdown report: what ran where, the table, and the issue's targets.
fn report(
    opts: &Options,
    base: &dyn Baseline,
    copy: Option<f64>,
    rows: &[Row],
    aborted: &[(u32, String)],
) -> String {
    let b = base.name();
    let peak = base.peak();
    let mut out = format!(
        "<!-- gpu-bench {date} {commit} {} -->\n**dpl next to {b}** ({date}; \
         `examples/gpu_bench.rs`, commit {commit}). {}.\n\n",
        base.device(),
        base.describe(),
        date = today(),
        commit = option_env!("DPL_BENCH_COMMIT").unwrap_or("unknown"),
    );
    if let Some(c) = copy {
        out.push_str(&format!(
            "A device-to-device copy moves {:.0} GB/s (bytes read plus written){}.\n\n",
            c / 1e9,
            peak.map(|p| format!(", {:.0}% of the peak", 100.0 * c / p))
                .unwrap_or_default()
        ));
    }
    out.push_str(&format!(
        "Data resident on the device (uploaded once; dpl's results left there); each call \
         timed on the host until the device has finished it; medians of interleaved rounds \
         (rounds in the n column). Rates count the fewest bytes each operation must move \
         (sum 4, scan 8, triad 12 bytes per element); at 2^20-2^22 the data fits in L2. \
         The triads on host vectors move theirs over the bus every call (x and y to the \
         device, the result back: their rate is the bus's): dpl from and into `Vec`s, its \
         transfers through its page-locked staging buffers (staged) or the CUDA driver's \
         copies from pageable memory (pageable); {b} with the CUDA runtime's copies from and \
         into page-locked buffers that already hold the data (no copy on the host: the bus's \
         ceiling).\n\n\
         | operation | n (rounds) | dpl | {b} | dpl/{b} | dpl rate | {b} rate | dpl % of peak | \
         {b} % of peak | checked |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n"
    ));
    for r in rows {
        out.push_str(&format!(
            "| {} | 2^{} ({}) | {} | {} | {:.2} | {} | {} | {} | {} | {} |\n",
            r.op.name(),
            r.log2,
            r.rounds,
            time(r.dpl),
            time(r.base),
            r.ratio(),
            r.rate(r.dpl),
            r.rate(r.base),
            r.share(r.dpl, peak),
            r.share(r.base, peak),
            match &r.check {
                Ok(()) => "ok".to_string(),
                Err(e) => format!("**FAILED**: {e}"),
            }
        ));
    }
    out.push('\n');
    for op in Op::ALL {
        let Some(target) = op.target_ratio() else {
            continue;
        };
        let big: Vec<&Row> = rows.iter().filter(|r| r.op == op && r.log2 >= 24).collect();
        if let Some(worst) = big.iter().max_by(|a, b| a.ratio().total_cmp(&b.ratio())) {
            let met = big.iter().all(|r| r.ratio() <= target);
            out.push_str(&format!(
                "* {} {}: dpl/{b} <= {} at 2^24 and more (worst {:.2} at 2^{})\n",
                if met { "met" } else { "MISSED" },
                op.name(),
                target,
                worst.ratio(),
                worst.log2
            ));
        }
    }
    let small: Vec<&Row> = rows
        .iter()
        .filter(|r| r.log2 == 10 && r.op.resident())
        .collect();
    if !small.is_empty() {
        let met = small.iter().all(|r| r.dpl <= Duration::from_micros(10));
        let each: Vec<String> = small
            .iter()
            .map(|r| format!("{} {}", r.op.name(), time(r.dpl)))
            .collect();
        out.push_str(&format!(
            "* {} a resident call of 2^10 elements <= 10 us end to end ({})\n",
            if met { "met" } else { "MISSED" },
            each.join(", ")
        ));
    }
    let failed = rows.iter().filter(|r| r.check.is_err()).count();
    if failed > 0 {
        out.push_str(&format!("* **{failed} result check(s) FAILED**\n"));
    }
    for (log2, message) in aborted {
        out.push_str(&format!("* **2^{log2} ABORTED**: {message}\n"));
    }
    if opts.dry_run {
        out.push_str("\n(dry run: not a measurement)\n");
    }
    out
}

/// Today's date (UTC) as YYYY-MM-DD.
fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    // Days since 1970-01-01 to a civil date (Howard Hinnant's `civil_from_days`).
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}
