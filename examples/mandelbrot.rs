//! The Mandelbrot set as a PGM image: a per-element `while` loop inside a `map`.
//!
//! Every pixel is a point `c` of the complex plane; its escape count is the number of steps
//! of `z = z² + c` from `z = 0` before `|z| > 2`, at most `max_iter`. The count is a loop
//! whose length depends on the pixel, written in the `#[parallel]` function as plain Rust
//! (`let mut`, `while`, compound assignment). On the CPU each pixel's loop is an ordinary
//! Rust loop inside the parallel map; on the GPU each thread runs its pixel's loop.
//!
//! Run it with `cargo run --release --example mandelbrot [out.pgm] [width] [height]`
//! (default `mandelbrot.pgm`, 1200 x 800). It checks the counts against plain sequential
//! Rust, times both, and writes the image as a binary PGM (`P5`): points of the set black,
//! the others lighter the sooner they escape.

use dpl::prelude::*;
#[path = "shared/timing.rs"]
mod timing;

/// The escape count of every pixel of a `width` x `height` image, row by row; pixel `(col,
/// row)` is the point `(x0 + col * step, y0 + row * step)`.
#[parallel]
pub fn escape_counts(
    width: usize,
    height: usize,
    x0: f64,
    y0: f64,
    step: f64,
    max_iter: u32,
) -> Vec<u32> {
    map(
        |p| {
            let cx = x0 + (p % width) as f64 * step;
            let cy = y0 + (p / width) as f64 * step;
            let (mut x, mut y, mut i) = (0.0, 0.0, 0u32);
            while i < max_iter && x * x + y * y <= 4.0 {
                let t = x * x - y * y + cx;
                y = 2.0 * x * y + cy;
                x = t;
                i += 1;
            }
            i
        },
        range(width * height),
    )
}

/// The grey level of every count: black in the set (`max_iter`), lighter the sooner a point
/// escapes (on a square-root scale, so that the many points escaping early still differ).
#[parallel]
pub fn shades(counts: &[u32], max_iter: u32) -> Vec<u8> {
    map(
        |i| {
            if i >= max_iter {
                0u8
            } else {
                (255.0f32 * (1.0f32 - (i as f32 / max_iter as f32).sqrt())) as u8
            }
        },
        counts,
    )
}

/// The same escape counts in plain sequential Rust (the reference).
pub fn escape_counts_plain(
    width: usize,
    height: usize,
    x0: f64,
    y0: f64,
    step: f64,
    max_iter: u32,
) -> Vec<u32> {
    (0..width * height)
        .map(|p| {
            let cx = x0 + (p % width) as f64 * step;
            let cy = y0 + (p / width) as f64 * step;
            let (mut x, mut y, mut i) = (0.0f64, 0.0f64, 0u32);
            while i < max_iter && x * x + y * y <= 4.0 {
                let t = x * x - y * y + cx;
                y = 2.0 * x * y + cy;
                x = t;
                i += 1;
            }
            i
        })
        .collect()
}

/// A binary PGM (`P5`) image of 8-bit grey levels, row by row.
pub fn pgm(width: usize, height: usize, grey: &[u8]) -> Vec<u8> {
    assert_eq!(grey.len(), width * height, "one grey level per pixel");
    let mut out = format!("P5\n{width} {height}\n255\n").into_bytes();
    out.extend_from_slice(grey);
    out
}

/// The view of the whole set: `(x0, y0, step)` for a `width` x `height` image.
pub fn view(width: usize, height: usize) -> (f64, f64, f64) {
    let step = (3.0 / width as f64).max(2.4 / height as f64);
    let x0 = -0.75 - step * width as f64 / 2.0;
    let y0 = -step * height as f64 / 2.0;
    (x0, y0, step)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args.first().map_or("mandelbrot.pgm", String::as_str);
    let size = |k: usize, default: usize| {
        args.get(k).map_or(default, |s| {
            s.parse().expect("width and height are numbers")
        })
    };
    let (width, height) = (size(1, 1200), size(2, 800));
    let max_iter = 500;
    let (x0, y0, step) = view(width, height);

    let counts = escape_counts(width, height, x0, y0, step, max_iter);
    let want = escape_counts_plain(width, height, x0, y0, step, max_iter);
    assert_eq!(counts, want, "dpl and plain Rust disagree");
    let inside = counts.iter().filter(|&&c| c == max_iter).count();
    println!(
        "{width} x {height} pixels, at most {max_iter} steps: {inside} in the set, {} steps in all",
        counts.iter().map(|&c| u64::from(c)).sum::<u64>()
    );

    let times = timing::interleaved(
        &[
            &|| drop(escape_counts(width, height, x0, y0, step, max_iter)),
            &|| drop(escape_counts_plain(width, height, x0, y0, step, max_iter)),
        ],
        5,
    );
    println!(
        "escape counts: dpl ({:?}) {}, plain sequential Rust {} ({:.1}x)",
        dpl::current_place(),
        timing::fmt(times[0].0),
        timing::fmt(times[1].0),
        times[1].0.as_secs_f64() / times[0].0.as_secs_f64()
    );

    let image = pgm(width, height, &shades(&counts, max_iter));
    std::fs::write(path, image).unwrap_or_else(|e| panic!("cannot write {path}: {e}"));
    println!("wrote {path}");
}
