//! A run's inputs and outputs: host values, flat and nested sequences as host columns or
//! already on the device, matrices as storage and strides, and the sequences a run leaves
//! on the device for its caller.

use dpl_core::interp::Value;
use dpl_core::ir::Type;

use super::columns::HostColumns;
use super::error::internal;
use dpl_core::run::Error;

/// A flat sequence in device memory: one buffer per scalar leaf of `elem` (structure of
/// arrays), `len` elements each. Whoever holds it owns the buffers and frees them with
/// [`Driver::free`](crate::Driver::free).
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceSeq {
    /// One buffer per scalar leaf of `elem`.
    pub bufs: Vec<u64>,
    /// The number of elements.
    pub len: usize,
    /// The element type (a scalar or a tuple of scalars).
    pub elem: Type,
}

/// An argument of [`run_resident`](super::run_resident).
#[derive(Clone, Debug)]
pub enum Input {
    /// A host value, uploaded for the call.
    Host(Value),
    /// A flat sequence already on the device (read, never freed nor written by the call).
    Device(DeviceSeq),
    /// A matrix (a `[[T]]` parameter) given as its storage and strides, uploaded as is:
    /// the kernels address element `j` of row `r` at `r * row_stride + j * col_stride`,
    /// so a column-major matrix is read without transposing it.
    Matrix(StridedMatrix),
    /// A nested sequence (a `[[T]]` parameter) given as its row offsets and its values'
    /// leaf columns, each on the host (uploaded for the call, freed when it ends) or
    /// already on the device (read, never freed nor written). See [`NestedColumns`] for
    /// what is checked.
    Nested(NestedColumns),
}

/// A flat sequence given as part of an argument: on the host, or already on the device.
#[derive(Clone, Debug)]
pub enum Columns {
    /// Host columns, uploaded for the call (and freed when it ends).
    Host(HostColumns),
    /// A device sequence (read, never freed nor written by the call).
    Device(DeviceSeq),
}

impl Columns {
    pub(super) fn elem(&self) -> &Type {
        match self {
            Columns::Host(c) => &c.elem,
            Columns::Device(d) => &d.elem,
        }
    }

    pub(super) fn len(&self) -> usize {
        match self {
            Columns::Host(c) => c.len,
            Columns::Device(d) => d.len,
        }
    }
}

/// A nested sequence `[[T]]` as its parts ([`Input::Nested`]): row `r` is
/// `values[offsets[r] .. offsets[r + 1]]`.
///
/// The executor checks the parts against the parameter's type: `values` holds `T`s,
/// `offsets` holds `usize`s (`rows + 1` of them, at least one), `offsets[0] == 0` and the
/// last offset is the number of values. Host offsets are also checked to be
/// non-decreasing (one pass, which also gives the longest row for `inner = "auto"`);
/// device offsets are only read at both ends (two 8-byte reads): that they do not
/// decrease is trusted. Host offsets equal to those of an earlier argument of the same
/// call are uploaded once (the case of two `dpl::Nested` sharing their offsets).
#[derive(Clone, Debug)]
pub struct NestedColumns {
    /// The `rows + 1` row offsets into `values`, `usize` elements.
    pub offsets: Columns,
    /// Every element of every row, row 0 first.
    pub values: Columns,
}

impl NestedColumns {
    /// The parts of a host [`Value`]: a sequence of sequences of `inner`s.
    pub fn from_value(inner: &Type, v: &Value) -> Result<NestedColumns, Error> {
        let Value::Seq(rows) = v else {
            return Err(internal("a sequence of rows was expected"));
        };
        let mut offsets = Vec::with_capacity(rows.len() + 1);
        offsets.push(0);
        for r in rows.iter() {
            let Value::Seq(row) = r else {
                return Err(internal("a row was expected"));
            };
            offsets.push(offsets[offsets.len() - 1] + row.len());
        }
        let flat = rows.iter().flat_map(|r| match r {
            Value::Seq(row) => row.iter(),
            _ => [].iter(),
        });
        Ok(NestedColumns {
            offsets: Columns::Host(HostColumns::offsets(&offsets)),
            values: Columns::Host(HostColumns::from_values(inner, flat)?),
        })
    }
}

/// A nested sequence left on the device by [`run_resident`](super::run_resident) ([`Output::Nested`]); the
/// caller owns the buffers of both parts. Row `r` is `values[offsets[r] ..
/// offsets[r + 1]]`, `offsets[0]` is 0 and `offsets.len` is the number of rows plus one.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceNested {
    /// The row offsets (`usize`).
    pub offsets: DeviceSeq,
    /// The values, as many as the last offset says.
    pub values: DeviceSeq,
}

/// A matrix as its storage and strides ([`Input::Matrix`]): element `(r, j)` is
/// `storage[r * row_stride + j * col_stride]`. Row-major: `row_stride = cols`,
/// `col_stride = 1`; column-major: `row_stride = 1`, `col_stride = rows`.
#[derive(Clone, Debug)]
pub struct StridedMatrix {
    /// The elements, as laid out in memory: on the host, or already on the device.
    pub storage: MatrixStorage,
    /// Number of rows.
    pub rows: usize,
    /// Number of columns (the length of every row).
    pub cols: usize,
    /// Elements between the starts of consecutive rows.
    pub row_stride: usize,
    /// Elements between consecutive elements of a row.
    pub col_stride: usize,
}

impl StridedMatrix {
    /// Whether host storage is a sequence of `flat_ty`.
    pub(super) fn storage_conforms(&self, flat_ty: &Type) -> bool {
        matches!(&self.storage, MatrixStorage::Host(v) if v.conforms(flat_ty))
    }
}

/// Where the elements of a [`StridedMatrix`] are.
#[derive(Clone, Debug)]
pub enum MatrixStorage {
    /// A [`Value::Seq`] of values of the row element type `T`, uploaded for the call.
    Host(Value),
    /// A flat device sequence of `T`s (read, never freed nor written by the call).
    Device(DeviceSeq),
}

impl From<Value> for MatrixStorage {
    fn from(v: Value) -> Self {
        MatrixStorage::Host(v)
    }
}

/// A result of [`run_resident`](super::run_resident).
#[derive(Clone, Debug)]
pub enum Output {
    /// A host value (the whole result when sequences are not kept on the device).
    Host(Value),
    /// A flat sequence left on the device; the caller owns its buffers.
    Device(DeviceSeq),
    /// A nested sequence left on the device; the caller owns its buffers.
    Nested(DeviceNested),
    /// A tuple with at least one device sequence inside.
    Tuple(Vec<Output>),
}
