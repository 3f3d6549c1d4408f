//! Bytes moved per rank by each primitive on `Place::Mpi`, against the minimum its
//! definition needs (`cargo xtask mpi-report` runs it on 2 and 4 ranks and puts the
//! tables in BENCHMARKS.md). One call of each program on `n` elements in balanced blocks
//! (default 2^20), counted by `dpl::mpi::traffic()`: collectives (with the error
//! agreements), and the largest number of bytes any rank received, without the agreements
//! (16 bytes per rank and collective) and the layouts of the parameters.
//!
//! ```text
//! cargo build --release --features mpi --example mpi_traffic
//! mpirun -n 4 target/release/examples/mpi_traffic
//! ```

#[path = "mpi/common.rs"]
mod common;

use common::*;
use dpl::prelude::*;
use dpl_testkit::mix;

#[path = "../tests/programs/indexed.rs"]
mod indexed;

mod progs {
    pub use super::indexed::*;
    use dpl::prelude::*;

    #[parallel]
    pub fn saxpy(a: f64, x: &[f64], y: &[f64]) -> Vec<f64> {
        map(|xi, yi| a * xi + yi, x, y)
    }

    #[parallel]
    pub fn dot(x: &[f64], y: &[f64]) -> f64 {
        sum(map(|a, b| a * b, x, y))
    }

    #[parallel]
    pub fn prefix(x: &[f64]) -> Vec<f64> {
        scan(|a, b| a + b, x)
    }

    #[parallel]
    pub fn positives(x: &[f64]) -> Vec<f64> {
        filter(|v| v > 0.0, x)
    }

    #[parallel]
    pub fn gathered(x: &[f64], idx: &[u32]) -> Vec<f64> {
        gather(x, idx)
    }

    #[parallel]
    pub fn blur5(x: &[f64]) -> Vec<f64> {
        stencil(
            |w| w[0] + w[1] + w[2] + w[3] + w[4],
            x,
            [-2, -1, 0, 1, 2],
            0.0,
        )
    }

    #[parallel]
    pub fn scattered(src: &[f64], idx: &[u32], dst: &[f64]) -> Vec<f64> {
        scatter(src, idx, dst)
    }

    #[parallel]
    pub fn permuted(x: &[f64], idx: &[u32]) -> Vec<f64> {
        permute(x, idx)
    }

    #[parallel]
    pub fn spmv(vals: &Nested<f64>, cols: &Nested<u32>, x: &[f64]) -> Vec<f64> {
        map(
            |a, c| sum(map(|aij, xj| aij * xj, a, gather(x, c))),
            vals,
            cols,
        )
    }

    #[parallel]
    pub fn sorted(x: &[u32]) -> Vec<u32> {
        sort(x)
    }
}

/// Keeps a result alive (so the call is not optimised away).
fn run<T>(v: T) {
    std::hint::black_box(v);
}

/// Collectives (all ranks do the same) and the largest number of bytes a rank received,
/// outside the agreements and the parameters' layouts.
fn counted(f: &mut dyn FnMut()) -> (u64, u64) {
    dpl::mpi::reset_traffic();
    f();
    let t = dpl::mpi::traffic();
    let collectives: u64 = t.iter().map(|(_, c)| c.collectives).sum();
    let received: u64 = t
        .iter()
        .filter(|(k, _)| *k != "agree" && *k != "layout")
        .map(|(_, c)| c.received)
        .sum();
    let most = dpl::mpi::gather_to_all(&[received])
        .into_iter()
        .max()
        .unwrap_or(0);
    (collectives, most)
}

fn main() {
    let mpi = dpl::mpi::init();
    let (rank, p) = (mpi.rank(), mpi.size());
    let n = size_arg(1 << 20);
    let mine = dpl::mpi::block(n, rank, p);
    let local = mine.len();
    let x: Vec<f64> = mine
        .clone()
        .map(|i| (mix(i as u64) % 1000) as f64 - 499.5)
        .collect();
    // `y` in other blocks than `x`: the first rank holds a quarter of a block more.
    let shift = n / p / 4;
    let cut = |r: usize| {
        if r == 0 {
            0
        } else {
            (r * n / p + shift).min(n)
        }
    };
    let y_range = cut(rank)..if rank + 1 == p { n } else { cut(rank + 1) };
    let y: Vec<f64> = y_range.clone().map(|i| i as f64).collect();
    let idx: Vec<u32> = mine
        .clone()
        .map(|i| (mix(i as u64 ^ 77) % n as u64) as u32)
        .collect();
    let perm: Vec<u32> = mine
        .clone()
        .map(|i| ((i as u64 * 0x9e37_79b1) % n as u64) as u32)
        .collect();
    let keys: Vec<u32> = mine.clone().map(|i| mix(i as u64) as u32).collect();
    let bins = 256;
    let bin_keys: Vec<u32> = keys.iter().map(|k| k % bins as u32).collect();
    // A sparse matrix with 5 entries per row: two near the diagonal, three anywhere.
    let rows: Vec<Vec<u32>> = mine
        .clone()
        .map(|i| {
            let far = |s: u64| (mix(i as u64 ^ s) % n as u64) as u32;
            vec![i.saturating_sub(1) as u32, i as u32, far(1), far(2), far(3)]
        })
        .collect();
    let distinct_remote = {
        let mut c: Vec<u32> = rows
            .iter()
            .flatten()
            .copied()
            .filter(|&j| !mine.contains(&(j as usize)))
            .collect();
        c.sort_unstable();
        c.dedup();
        c.len() as u64
    };
    let cols = dpl::Nested::from_rows(rows);
    let vals = cols.map_values(|&j| j as f64 * 0.5);
    // Minimum bytes a rank must receive for each definition (the largest over ranks).
    let remote = |targets: &[u32]| {
        let lo = mine.start as u32;
        let hi = mine.end as u32;
        targets.iter().filter(|&&j| j < lo || j >= hi).count() as u64
    };
    let most = |v: u64| dpl::mpi::gather_to_all(&[v]).into_iter().max().unwrap_or(0);
    let others = (p - 1) as u64;
    let f64_b = 8u64;
    let moved_y = {
        // Elements of `y` this rank needs from others: its block of `x`'s layout minus
        // what it holds of `y`.
        let s = mine.start.max(y_range.start);
        let e = mine.end.min(y_range.end);
        (local - e.saturating_sub(s)) as u64
    };
    let rows: Vec<(&str, String, u64, (u64, u64))> = vec![
        (
            "map (aligned)",
            "0".into(),
            0,
            counted(&mut || run(with_place(Place::Mpi, || progs::saxpy(2.0, &x, &x)))),
        ),
        (
            "map (realigned input)",
            "elements of `y` held elsewhere".into(),
            most(moved_y * f64_b),
            counted(&mut || run(with_place(Place::Mpi, || progs::saxpy(2.0, &x, &y)))),
        ),
        (
            "reduce (`f64` dot)",
            "one value".into(),
            f64_b,
            counted(&mut || run(with_place(Place::Mpi, || progs::dot(&x, &x)))),
        ),
        (
            "scan (`f64`)",
            "one carry".into(),
            f64_b,
            counted(&mut || run(with_place(Place::Mpi, || progs::prefix(&x)))),
        ),
        (
            "filter",
            "0 (+ the counts)".into(),
            0,
            counted(&mut || run(with_place(Place::Mpi, || progs::positives(&x)))),
        ),
        (
            "gather (random indices)",
            "remote elements (8 B) + their indices (8 B)".into(),
            most(remote(&idx) * 16),
            counted(&mut || run(with_place(Place::Mpi, || progs::gathered(&x, &idx)))),
        ),
        (
            "stencil (5 points)",
            "a halo of 2 elements per neighbour".into(),
            (p - 1).min(2) as u64 * 2 * f64_b,
            counted(&mut || run(with_place(Place::Mpi, || progs::blur5(&x)))),
        ),
        (
            "scatter (random indices)",
            "remote pairs (index 8 B + value 8 B)".into(),
            most(remote(&idx) * 16),
            counted(&mut || run(with_place(Place::Mpi, || progs::scattered(&x, &idx, &x)))),
        ),
        (
            "permute",
            "remote pairs (index 8 B + value 8 B)".into(),
            most(remote(&perm) * 16),
            counted(&mut || run(with_place(Place::Mpi, || progs::permuted(&x, &perm)))),
        ),
        (
            "scatter_reduce (histogram, 256 bins)",
            "a reduce-scatter of the bins (4 B each)".into(),
            others * (bins as u64 / p as u64) * 4,
            counted(&mut || run(with_place(Place::Mpi, || progs::histogram(&bin_keys, bins)))),
        ),
        (
            "gather in rows (SpMV, 5 per row)",
            "distinct remote columns (8 B) + their indices (8 B)".into(),
            most(distinct_remote * 16),
            counted(&mut || run(with_place(Place::Mpi, || progs::spmv(&vals, &cols, &x)))),
        ),
        (
            "sort (random `u32`)",
            "keys that end on another rank (4 B)".into(),
            (local as u64) * others / p as u64 * 4,
            counted(&mut || run(with_place(Place::Mpi, || progs::sorted(&keys)))),
        ),
    ];
    if rank == 0 {
        println!(
            "Traffic on {p} ranks, n = {n} elements in balanced blocks (bytes received by the busiest rank; collectives include the error agreements):\n"
        );
        println!(
            "| primitive | collectives | received (B) | minimum (B) | what the minimum is | ratio |"
        );
        println!("|---|---|---|---|---|---|");
        for (name, what, min, (coll, got)) in &rows {
            let ratio = if *min == 0 {
                if *got == 0 {
                    "-".to_string()
                } else {
                    "inf".to_string()
                }
            } else {
                format!("{:.2}", *got as f64 / *min as f64)
            };
            println!("| {name} | {coll} | {got} | {min} | {what} | {ratio} |");
        }
        println!();
    }
}
