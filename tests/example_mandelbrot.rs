//! The Mandelbrot example (`examples/mandelbrot.rs`): its escape counts and grey levels on
//! every place against plain Rust written here, for empty, one-pixel, odd-sized and larger
//! images, and the PGM it writes.

#[path = "../examples/mandelbrot.rs"]
#[allow(dead_code)]
mod mandelbrot;

use dpl::prelude::*;

/// Plain Rust, written independently of the example: the escape count of `c = (cx, cy)`.
fn escape(cx: f64, cy: f64, max_iter: u32) -> u32 {
    let (mut zr, mut zi) = (0.0f64, 0.0f64);
    for i in 0..max_iter {
        if zr * zr + zi * zi > 4.0 {
            return i;
        }
        let t = zr * zr - zi * zi + cx;
        zi = 2.0 * zr * zi + cy;
        zr = t;
    }
    max_iter
}

#[test]
fn escape_counts_and_shades_match_plain_rust_on_every_place() {
    for place in dpl::available_places() {
        with_place(place, || {
            for (w, h, max_iter) in [(0, 0, 50), (1, 1, 50), (37, 23, 100), (160, 90, 300)] {
                let (x0, y0, step) = mandelbrot::view(w.max(1), h.max(1));
                let counts = mandelbrot::escape_counts(w, h, x0, y0, step, max_iter);
                let want: Vec<u32> = (0..w * h)
                    .map(|p| {
                        let (col, row) = (p % w, p / w);
                        escape(x0 + col as f64 * step, y0 + row as f64 * step, max_iter)
                    })
                    .collect();
                assert_eq!(counts, want, "{place:?}, {w} x {h}");
                let grey = mandelbrot::shades(&counts, max_iter);
                for (&g, &c) in grey.iter().zip(&counts) {
                    let want = if c >= max_iter {
                        0
                    } else {
                        (255.0 * (1.0 - (c as f32 / max_iter as f32).sqrt())) as u8
                    };
                    assert_eq!(g, want, "{place:?}: count {c}");
                }
                if w * h > 1000 {
                    // The view holds points of the set and points that escape at once.
                    assert!(
                        counts.contains(&max_iter) && counts.contains(&1),
                        "{counts:?}"
                    );
                }
            }
        });
    }
}

#[test]
fn the_image_is_a_binary_pgm() {
    let grey: Vec<u8> = (0..6).map(|k| k * 40).collect();
    let image = mandelbrot::pgm(3, 2, &grey);
    let header = b"P5\n3 2\n255\n";
    assert_eq!(&image[..header.len()], header);
    assert_eq!(&image[header.len()..], &grey[..]);
}
