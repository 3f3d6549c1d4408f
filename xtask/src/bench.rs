//! Benchmark reports: BENCHMARKS.md from criterion's results (being written).

/// Runs the benchmarks and writes BENCHMARKS.md.
pub fn report(_args: &[String]) -> Result<(), String> {
    Err("not written yet".into())
}
