//! `Serialize` and `Deserialize` for the data types (feature `serde`), in a form that
//! does not depend on how the value is stored:
//!
//! * [`Nested`]: `{ "values": [...], "offsets": [...] }` (the flat values and the row
//!   offsets, as [`Nested::from_parts`] takes them);
//! * [`Matrix`]: `{ "rows": r, "cols": c, "data": [...] }` with `data` in row-major order,
//!   whatever the strides of the matrix (padding is not written);
//! * [`Seq`]: a sequence, like a `Vec` (a device copy is downloaded first; a deserialized
//!   `Seq` is on the host).
//!
//! Deserializing validates like the constructors do: offsets that do not start at 0,
//! decrease or do not end at the number of values, or `data` of the wrong length, are
//! errors of the format (with the constructor's message), never a malformed value.

use super::{Matrix, Nested, Seq};
use serde::de::Error as _;
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

impl<T: Serialize> Serialize for Nested<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Nested", 2)?;
        st.serialize_field("values", self.values())?;
        st.serialize_field("offsets", self.offsets())?;
        st.end()
    }
}

/// The parts of a [`Nested`] as read, before validation.
#[derive(Deserialize)]
#[serde(rename = "Nested", deny_unknown_fields)]
struct NestedParts<T> {
    values: Vec<T>,
    offsets: Vec<usize>,
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Nested<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let p = NestedParts::deserialize(d)?;
        Nested::from_parts(p.values, p.offsets).map_err(D::Error::custom)
    }
}

/// The elements of a matrix in row-major order, serialized as one sequence.
struct RowMajor<'a, T>(&'a Matrix<T>);

impl<T: Serialize> Serialize for RowMajor<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().flat_map(|row| row.iter()))
    }
}

impl<T: Serialize> Serialize for Matrix<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Matrix", 3)?;
        st.serialize_field("rows", &self.rows())?;
        st.serialize_field("cols", &self.cols())?;
        st.serialize_field("data", &RowMajor(self))?;
        st.end()
    }
}

/// The parts of a [`Matrix`] as read, before validation.
#[derive(Deserialize)]
#[serde(rename = "Matrix", deny_unknown_fields)]
struct MatrixParts<T> {
    rows: usize,
    cols: usize,
    data: Vec<T>,
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Matrix<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let p = MatrixParts::deserialize(d)?;
        Matrix::row_major(p.rows, p.cols, p.data).map_err(D::Error::custom)
    }
}

impl<T: Serialize> Serialize for Seq<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.as_slice().serialize(s)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Seq<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::deserialize(d).map(Seq::from)
    }
}
