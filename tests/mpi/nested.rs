//! Rows of `Nested` and `Matrix` distributed in blocks of rows: per-row primitives (inner
//! levels local), ragged results, rows realigned between inputs, 2-D stencils (halos of
//! rows), and sparse matrix-vector products with the vector distributed or replicated.

use crate::harness::*;
use dpl::{Matrix, Nested};

pub const CASES: &[Case] = &[
    ("row_primitives", row_primitives),
    ("rows_of_two_inputs", rows_of_two_inputs),
    ("stencils_2d", stencils_2d),
    ("spmv", spmv),
];

mod progs {
    pub use crate::shared_stencil::*;
    use dpl::prelude::*;

    #[parallel]
    pub fn row_sums(rows: &Nested<i64>) -> Vec<i64> {
        map(|r| sum(r), rows)
    }

    #[parallel]
    pub fn total(rows: &Nested<i64>) -> i64 {
        sum(map(|r| sum(r), rows))
    }

    #[parallel]
    pub fn row_prefix(rows: &Nested<i64>) -> Nested<i64> {
        map(|r| scan(|a, b| a + b, r), rows)
    }

    #[parallel]
    pub fn row_evens(rows: &Nested<i64>) -> Nested<i64> {
        map(|r| filter(|v| v % 2 == 0, r), rows)
    }

    #[parallel]
    pub fn numbered(rows: &Nested<i64>) -> Nested<i64> {
        map(|i, r| map(|v| v + (i as i64) * 100, r), indices(rows), rows)
    }

    #[parallel]
    pub fn both(a: &Nested<i64>, b: &Nested<i64>) -> Vec<i64> {
        map(|x, y| sum(x) - max(y), a, b)
    }

    #[parallel]
    pub fn matrix_rows(m: &Matrix<f64>, w: &[f64]) -> Vec<f64> {
        map(|row, s| sum(row) * s, m, w)
    }

    /// As `matrix_rows`, through a borrowed view (what ndarray parameters become).
    #[parallel]
    pub fn view_rows(m: dpl::MatrixView<'_, f64>, w: &[f64]) -> Vec<f64> {
        map(|r, s| sum(r) * s, m, w)
    }

    #[parallel]
    pub fn csr(vals: &Nested<f64>, cols: &Nested<u32>, x: &[f64]) -> Vec<f64> {
        map(
            |a, c| sum(map(|aij, xj| aij * xj, a, gather(x, c))),
            vals,
            cols,
        )
    }

    #[parallel(replicated(x))]
    pub fn csr_replicated(vals: &Nested<f64>, cols: &Nested<u32>, x: &[f64]) -> Vec<f64> {
        map(
            |a, c| sum(map(|aij, xj| aij * xj, a, gather(x, c))),
            vals,
            cols,
        )
    }
}

/// `rows` ragged rows (some empty) of values from `rng`.
fn ragged(rows: usize, rng: &mut SplitMix64) -> Vec<Vec<i64>> {
    (0..rows)
        .map(|_| {
            let len = if rng.below(5) == 0 { 0 } else { rng.below(9) };
            rng.vec(len, |r| r.below(100) as i64 - 50)
        })
        .collect()
}

fn nested_block(rows: &[Vec<i64>], lens: &[usize], env: Env) -> Nested<i64> {
    Nested::from_rows(block_of(rows, lens, env))
}

const ROWS: [usize; 5] = [0, 1, 3, 257, 3001];

fn row_primitives(env: Env) {
    for n in ROWS {
        let mut rng = SplitMix64::new(n as u64 + 30);
        let rows = ragged(n, &mut rng);
        for lens in layouts(n, env.size) {
            let b = nested_block(&rows, &lens, env);
            let want: Vec<i64> = rows.iter().map(|r| r.iter().sum()).collect();
            check_block("row_sums", &progs::row_sums(&b), &want, &lens, env);
            assert_eq!(progs::total(&b), want.iter().sum::<i64>(), "total");
            let want: Vec<Vec<i64>> = rows
                .iter()
                .map(|r| {
                    r.iter()
                        .scan(0, |a, v| {
                            *a += v;
                            Some(*a)
                        })
                        .collect()
                })
                .collect();
            check_block(
                "row_prefix",
                &progs::row_prefix(&b).to_vecs(),
                &want,
                &lens,
                env,
            );
            let want: Vec<Vec<i64>> = rows
                .iter()
                .map(|r| r.iter().copied().filter(|v| v % 2 == 0).collect())
                .collect();
            check_block(
                "row_evens",
                &progs::row_evens(&b).to_vecs(),
                &want,
                &lens,
                env,
            );
            let want: Vec<Vec<i64>> = rows
                .iter()
                .enumerate()
                .map(|(i, r)| r.iter().map(|v| v + i as i64 * 100).collect())
                .collect();
            check_block(
                "numbered",
                &progs::numbered(&b).to_vecs(),
                &want,
                &lens,
                env,
            );
        }
    }
}

fn rows_of_two_inputs(env: Env) {
    for n in ROWS {
        let mut rng = SplitMix64::new(n as u64 + 31);
        let a = ragged(n, &mut rng);
        let b: Vec<Vec<i64>> = (0..n)
            .map(|_| rng.vec(1 + rng.clone().below(5), |r| r.below(100) as i64))
            .collect();
        let ls = layouts(n, env.size);
        for k in 0..ls.len() {
            let (la, lb) = (&ls[k], &ls[(k + 1) % ls.len()]);
            let got = progs::both(&nested_block(&a, la, env), &nested_block(&b, lb, env));
            let want: Vec<i64> = a
                .iter()
                .zip(&b)
                .map(|(x, y)| x.iter().sum::<i64>() - y.iter().max().unwrap())
                .collect();
            check_block("both (realigned rows)", &got, &want, la, env);
            let cols = 6;
            let data: Vec<f64> = rng.vec(n * cols, |r| r.f64_in(-1.0, 1.0));
            let w: Vec<f64> = rng.vec(n, |r| r.f64_in(-1.0, 1.0));
            let rows: Vec<Vec<f64>> = data.chunks(cols).map(|c| c.to_vec()).collect();
            let mine = block_of(&rows, la, env).concat();
            let m = Matrix::row_major(la[env.rank], cols, mine).unwrap();
            let got = progs::matrix_rows(&m, &block_of(&w, lb, env));
            let want: Vec<f64> = rows
                .iter()
                .zip(&w)
                // A row's sum in dpl's order (dpl_testkit::order), as every place adds.
                .map(|(r, s)| {
                    (-0.0 + dpl_testkit::order::ordered(r, |a, b| a + b).unwrap_or(-0.0)) * s
                })
                .collect();
            check_block("matrix_rows", &got, &want, la, env);
            // The same block stored column by column, read through a view.
            let by_cols: Vec<f64> = (0..cols).flat_map(|c| m.col(c).to_vec()).collect();
            let cm = Matrix::col_major(la[env.rank], cols, by_cols).unwrap();
            let got = progs::view_rows(cm.view(), &block_of(&w, lb, env));
            check_block("view_rows", &got, &want, la, env);
        }
    }
}

fn stencils_2d(env: Env) {
    for n in [0usize, 1, 2, 5, 64] {
        let cols = 7;
        let mut rng = SplitMix64::new(n as u64 + 32);
        let grid: Vec<Vec<f64>> = (0..n)
            .map(|_| rng.vec(cols, |r| r.f64_in(-1.0, 1.0)))
            .collect();
        let at = |i: isize, j: isize| {
            if i < 0 || j < 0 || i >= n as isize || j >= cols as isize {
                0.0
            } else {
                grid[i as usize][j as usize]
            }
        };
        let want: Vec<Vec<f64>> = (0..n as isize)
            .map(|i| {
                (0..cols as isize)
                    .map(|j| {
                        4.0 * at(i, j) - at(i - 1, j) - at(i, j - 1) - at(i, j + 1) - at(i + 1, j)
                    })
                    .collect()
            })
            .collect();
        let ragged_rows = ragged(n, &mut rng);
        let iat = |i: isize, j: isize| {
            if i < 0 || i >= n as isize || j < 0 {
                return -1;
            }
            ragged_rows[i as usize]
                .get(j as usize)
                .map_or(-1, |v| *v as i32)
        };
        let want_box: Vec<Vec<i32>> = (0..n as isize)
            .map(|i| {
                (0..ragged_rows[i as usize].len() as isize)
                    .map(|j| {
                        (-1..=1)
                            .flat_map(|di| (-1..=1).map(move |dj| (di, dj)))
                            .map(|(di, dj)| iat(i + di, j + dj))
                            .sum()
                    })
                    .collect()
            })
            .collect();
        for lens in layouts(n, env.size) {
            let mine = block_of(&grid, &lens, env).concat();
            let m = Matrix::row_major(lens[env.rank], cols, mine).unwrap();
            check_block(
                "laplacian",
                &progs::laplacian(&m).to_vecs(),
                &want,
                &lens,
                env,
            );
            let rows32: Vec<Vec<i32>> = block_of(&ragged_rows, &lens, env)
                .iter()
                .map(|r| r.iter().map(|&v| v as i32).collect())
                .collect();
            let got = progs::box3(&Nested::from_rows(rows32), -1);
            check_block("box3", &got.to_vecs(), &want_box, &lens, env);
        }
    }
}

fn spmv(env: Env) {
    for n in [0usize, 1, 5, 300, 2000] {
        let mut rng = SplitMix64::new(n as u64 + 33);
        let cols: Vec<Vec<u32>> = (0..n)
            .map(|_| rng.vec(rng.clone().below(6), |r| r.below(n) as u32))
            .collect();
        let vals: Vec<Vec<f64>> = cols
            .iter()
            .map(|c| rng.vec(c.len(), |r| r.f64_in(-1.0, 1.0)))
            .collect();
        let x: Vec<f64> = rng.vec(n, |r| r.f64_in(-1.0, 1.0));
        let want: Vec<f64> = vals
            .iter()
            .zip(&cols)
            .map(|(v, c)| v.iter().zip(c).map(|(a, &j)| a * x[j as usize]).sum())
            .collect();
        let ls = layouts(n, env.size);
        for k in 0..ls.len() {
            let (lr, lx) = (&ls[k], &ls[(k + 2) % ls.len()]);
            let v = Nested::from_rows(block_of(&vals, lr, env));
            let c = Nested::from_rows(block_of(&cols, lr, env));
            let got = progs::csr(&v, &c, &block_of(&x, lx, env));
            for (g, w) in got.iter().zip(&want[range_of(lr, env.rank)]) {
                close("csr", *g, *w, 1e-12);
            }
            let got = progs::csr_replicated(&v, &c, &x);
            for (g, w) in got.iter().zip(&want[range_of(lr, env.rank)]) {
                close("csr_replicated", *g, *w, 1e-12);
            }
            assert_eq!(got.len(), lr[env.rank]);
        }
    }
}
