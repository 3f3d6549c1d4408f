//! The linear system of the `pcg` example: one linearized step of variational optical flow
//! (Horn–Schunck with an image-driven smoothness weight), generated from a synthetic image
//! pair, and an `f64` reference for its operator and residual.
//!
//! # The system
//!
//! For a `width x height` field with two unknowns per pixel, the flow `(u_i, v_i)`, the
//! energy
//!
//! ```text
//! E(u, v) = sum_i (Ix_i u_i + Iy_i v_i + It_i)^2
//!         + sum_{edges i~j} w_ij ((u_i - u_j)^2 + (v_i - v_j)^2)
//! ```
//!
//! (a data term per pixel, a smoothness term per pair of 4-neighbours) is minimized by
//! solving `A x = b` with, per pixel `i`,
//!
//! ```text
//! [ a_i  b_i ] [u_i]   sum_{j~i} w_ij [u_j]   [ -Ix_i It_i ]
//! [ b_i  c_i ] [v_i] -                [v_j] = [ -Iy_i It_i ]
//!
//! a_i = Ix_i^2 + sum_{j~i} w_ij,   b_i = Ix_i Iy_i,   c_i = Iy_i^2 + sum_{j~i} w_ij
//! ```
//!
//! a coupled 5-point stencil: a symmetric 2x2 block on the diagonal, the same weight for `u`
//! and `v` towards each neighbour. `A` is symmetric positive definite (the smoothness part is
//! a weighted graph Laplacian per component, the data part positive semidefinite per pixel,
//! and no constant flow is orthogonal to every gradient of the image).
//!
//! # Storage (Copperhead's "custom matrix format" for this stencil)
//!
//! Per pixel `i = row * width + col`: the block `a, b, c`, and the weights of the edges to
//! the right (`right[i] = w_{i,i+1}`, 0 in the last column) and down (`down[i] =
//! w_{i,i+width}`, 0 in the last row). The weights towards the left and up are those of the
//! neighbour: `right[i - 1]`, `down[i - width]`. A vector of unknowns is a [`Field`]: one
//! array per component, `u` and `v`, as in Copperhead's `precondition(u, v, ...)`.
//!
//! # The synthetic problem
//!
//! Frame 1 is a smooth textured image `I(x, y)` (a sum of sinusoids, values in [0, 1]),
//! frame 2 the same image moved by a smooth known flow of about one pixel. `Ix`, `Iy` are
//! central differences of frame 1, `It` the difference of the frames. The smoothness weight
//! of an edge is `alpha * (g_i + g_j) / 2` with the diffusivity `g = 1 / (1 + |grad I|^2 /
//! lambda^2)`, smaller across the image's edges.
// Each includer uses a different subset of these items.
#![allow(dead_code)]

use std::f64::consts::PI;

/// One linearized optical-flow system (see the module documentation for the layout).
#[derive(Clone, Debug)]
pub struct Problem {
    /// Pixels per row.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// Upper-left entry of each pixel's diagonal block (`u`-`u` coupling).
    pub a: Vec<f32>,
    /// Off-diagonal entry of each pixel's diagonal block (`u`-`v` coupling).
    pub b: Vec<f32>,
    /// Lower-right entry of each pixel's diagonal block (`v`-`v` coupling).
    pub c: Vec<f32>,
    /// Weight of the edge from pixel `i` to `i + 1` (0 in the last column).
    pub right: Vec<f32>,
    /// Weight of the edge from pixel `i` to `i + width` (0 in the last row).
    pub down: Vec<f32>,
    /// The right-hand side: `-Ix It` for `u`, `-Iy It` for `v`.
    pub rhs: Field,
}

/// A vector of the system: one value of each component per pixel.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Field {
    /// The horizontal component, one value per pixel.
    pub u: Vec<f32>,
    /// The vertical component, one value per pixel.
    pub v: Vec<f32>,
}

impl Field {
    /// The zero field of `pixels` pixels.
    pub fn zeros(pixels: usize) -> Field {
        Field {
            u: vec![0.0; pixels],
            v: vec![0.0; pixels],
        }
    }

    /// Number of pixels.
    pub fn pixels(&self) -> usize {
        self.u.len()
    }

    /// Both components as one sequence of `f64` (`u` then `v`).
    pub fn to_f64(&self) -> Vec<f64> {
        self.u.iter().chain(&self.v).map(|&x| x as f64).collect()
    }
}

/// Frame 1 of the synthetic image pair at a (real-valued) position: a few sinusoids at
/// scales of 5 to 70 pixels, values in [0, 1].
fn image(x: f64, y: f64) -> f64 {
    0.5 + 0.18 * (0.21 * x + 0.13 * y).sin() * (0.17 * y - 0.05 * x).cos()
        + 0.12 * (0.09 * x).cos() * (0.11 * y + 1.0).sin()
        + 0.08 * (0.31 * (x - y)).sin()
        + 0.07 * (0.57 * x + 0.23 * y + 0.4).cos()
}

/// The true (generating) flow at a pixel: a smooth rotation-like field of about one pixel.
fn true_flow(x: f64, y: f64, width: usize, height: usize) -> (f64, f64) {
    let (sx, sy) = (x / width as f64, y / height as f64);
    (
        1.2 * (2.0 * PI * sy).sin() * (PI * sx).cos(),
        -0.9 * (2.0 * PI * sx).sin() * (PI * sy).cos(),
    )
}

/// The diffusivity parameter `lambda`: gradients well above it weaken the smoothness weight.
const LAMBDA: f64 = 0.05;

impl Problem {
    /// The optical-flow system of a `width x height` synthetic image pair with smoothness
    /// weight `alpha` (see the module documentation).
    ///
    /// Errors when a side is 0, `alpha` is not a positive finite number, or the field is too
    /// large to index (`2 * width * height` unknowns must fit in `usize` and `u32`).
    pub fn optical_flow(width: usize, height: usize, alpha: f64) -> Result<Problem, String> {
        if width == 0 || height == 0 {
            return Err(format!(
                "the field must not be empty (got {width} x {height})"
            ));
        }
        if !(alpha.is_finite() && alpha > 0.0) {
            return Err(format!(
                "the smoothness weight must be positive and finite (got {alpha})"
            ));
        }
        let n = width
            .checked_mul(height)
            .filter(|n| n.checked_mul(2).is_some_and(|u| u <= u32::MAX as usize))
            .ok_or_else(|| format!("a {width} x {height} field is too large"))?;
        let mut ix = vec![0.0f64; n];
        let mut iy = vec![0.0f64; n];
        let mut it = vec![0.0f64; n];
        let mut g = vec![0.0f64; n];
        for row in 0..height {
            for col in 0..width {
                let i = row * width + col;
                let (x, y) = (col as f64, row as f64);
                ix[i] = (image(x + 1.0, y) - image(x - 1.0, y)) / 2.0;
                iy[i] = (image(x, y + 1.0) - image(x, y - 1.0)) / 2.0;
                let (fu, fv) = true_flow(x, y, width, height);
                // Frame 2 at (x, y) is frame 1 at (x - u, y - v): the image moved by the flow.
                it[i] = image(x - fu, y - fv) - image(x, y);
                g[i] = 1.0 / (1.0 + (ix[i] * ix[i] + iy[i] * iy[i]) / (LAMBDA * LAMBDA));
            }
        }
        let mut right = vec![0.0f64; n];
        let mut down = vec![0.0f64; n];
        let mut degree = vec![0.0f64; n];
        for row in 0..height {
            for col in 0..width {
                let i = row * width + col;
                if col + 1 < width {
                    right[i] = alpha * (g[i] + g[i + 1]) / 2.0;
                    degree[i] += right[i];
                    degree[i + 1] += right[i];
                }
                if row + 1 < height {
                    down[i] = alpha * (g[i] + g[i + width]) / 2.0;
                    degree[i] += down[i];
                    degree[i + width] += down[i];
                }
            }
        }
        let f = |v: &[f64]| v.iter().map(|&x| x as f32).collect::<Vec<f32>>();
        let a: Vec<f64> = (0..n).map(|i| ix[i] * ix[i] + degree[i]).collect();
        let b: Vec<f64> = (0..n).map(|i| ix[i] * iy[i]).collect();
        let c: Vec<f64> = (0..n).map(|i| iy[i] * iy[i] + degree[i]).collect();
        let rhs_u: Vec<f64> = (0..n).map(|i| -ix[i] * it[i]).collect();
        let rhs_v: Vec<f64> = (0..n).map(|i| -iy[i] * it[i]).collect();
        Ok(Problem {
            width,
            height,
            a: f(&a),
            b: f(&b),
            c: f(&c),
            right: f(&right),
            down: f(&down),
            rhs: Field {
                u: f(&rhs_u),
                v: f(&rhs_v),
            },
        })
    }

    /// Number of pixels.
    pub fn pixels(&self) -> usize {
        self.width * self.height
    }

    /// Number of unknowns (two per pixel).
    pub fn unknowns(&self) -> usize {
        2 * self.pixels()
    }

    /// `A x` computed in `f64` from the `f32` data, written directly from the stencil (by
    /// rows and columns, neighbours by position), independently of the solvers' kernels:
    /// `u` then `v`.
    pub fn apply_f64(&self, x: &Field) -> Vec<f64> {
        let n = self.pixels();
        assert!(
            x.u.len() == n && x.v.len() == n,
            "x must have one value per pixel and component"
        );
        let (w, h) = (self.width, self.height);
        let mut out = vec![0.0f64; 2 * n];
        for row in 0..h {
            for col in 0..w {
                let i = row * w + col;
                let (u, v) = (x.u[i] as f64, x.v[i] as f64);
                let (a, b, c) = (self.a[i] as f64, self.b[i] as f64, self.c[i] as f64);
                let mut qu = a * u + b * v;
                let mut qv = b * u + c * v;
                let mut neighbour = |j: usize, weight: f32| {
                    qu -= weight as f64 * x.u[j] as f64;
                    qv -= weight as f64 * x.v[j] as f64;
                };
                if col > 0 {
                    neighbour(i - 1, self.right[i - 1]);
                }
                if col + 1 < w {
                    neighbour(i + 1, self.right[i]);
                }
                if row > 0 {
                    neighbour(i - w, self.down[i - w]);
                }
                if row + 1 < h {
                    neighbour(i + w, self.down[i]);
                }
                out[i] = qu;
                out[n + i] = qv;
            }
        }
        out
    }

    /// The true relative residual `|b - A x| / |b|` of a solution, in `f64`.
    pub fn relative_residual(&self, x: &Field) -> f64 {
        let ax = self.apply_f64(x);
        let b = self.rhs.to_f64();
        let num: f64 = ax.iter().zip(&b).map(|(q, b)| (b - q).powi(2)).sum();
        let den: f64 = b.iter().map(|b| b.powi(2)).sum();
        if den == 0.0 {
            num.sqrt()
        } else {
            (num / den).sqrt()
        }
    }
}

/// The relative distance `|x - y| / |y|` of two fields, in `f64`.
pub fn relative_distance(x: &Field, y: &Field) -> f64 {
    let (x, y) = (x.to_f64(), y.to_f64());
    assert_eq!(x.len(), y.len(), "fields of different sizes");
    let num: f64 = x.iter().zip(&y).map(|(a, b)| (a - b).powi(2)).sum();
    let den: f64 = y.iter().map(|b| b.powi(2)).sum();
    if den == 0.0 {
        num.sqrt()
    } else {
        (num / den).sqrt()
    }
}
