//! `Place::Mpi` (feature `mpi`): the same `#[parallel]` functions SPMD over the ranks of an
//! MPI job.
//!
//! ```no_run
//! use dpl::prelude::*;
//!
//! #[parallel]
//! pub fn dot(x: &[f64], y: &[f64]) -> f64 { sum(map(|a, b| a * b, x, y)) }
//!
//! let mpi = dpl::mpi::init();                        // MPI_Init once; finalised when dropped
//! let (rank, size) = (mpi.rank(), mpi.size());
//! let r = dpl::mpi::block(1_000_000, rank, size);    // this rank's balanced block
//! let x: Vec<f64> = r.map(|i| i as f64).collect();
//! let d = dpl::with_place(Place::Mpi, || dot(&x, &x)); // the global dot, on every rank
//! ```
//!
//! Every rank calls the function with the same scalar arguments; a sequence argument is the
//! rank's block of a global sequence (the blocks of all ranks in rank order), and
//! `#[parallel(replicated(p))]` parameters are whole on every rank. Scalar results are the
//! global value on every rank, sequence results the rank's block. See the README ("Beyond
//! one machine") and the `dpl-mpi` crate's README for what each primitive communicates.
//!
//! Run a program on several ranks with `mpirun -n 4 target/release/program`; started
//! without `mpirun` it is one rank, and `Place::Mpi` gives `Place::Cpu`'s results.

use crate::{Matrix, Nested};
pub use dpl_mpi::rt::{
    Mpi, Traffic, Wire, block, gather_to_all, gather_to_root, init, rank, reset_traffic,
    scatter_from_root, size, traffic,
};

impl<T: Copy> dpl_mpi::rt::Rows<T> for Nested<T> {
    fn count(&self) -> usize {
        self.len()
    }
    fn row_len(&self, r: usize) -> usize {
        self.row_len(r)
    }
    fn extend_row(&self, r: usize, out: &mut Vec<T>) {
        out.extend_from_slice(self.row(r));
    }
}

impl<T> dpl_mpi::rt::FromRows<T> for Nested<T> {
    fn from_rows(rows: Vec<Vec<T>>) -> Self {
        Nested::from_rows(rows)
    }
}

impl<T: Copy> dpl_mpi::rt::FromRows<T> for Matrix<T> {
    fn from_rows(rows: Vec<Vec<T>>) -> Self {
        let cols = rows.first().map_or(0, Vec::len);
        Matrix::row_major(rows.len(), cols, rows.concat())
            .expect("the rows of a window of a matrix all have its number of columns")
    }
}

impl<T: Copy> dpl_mpi::rt::Rows<T> for Matrix<T> {
    fn count(&self) -> usize {
        self.rows()
    }
    fn row_len(&self, _: usize) -> usize {
        self.cols()
    }
    fn extend_row(&self, r: usize, out: &mut Vec<T>) {
        out.extend(self.row(r).iter().copied());
    }
}
