//! Transfers: sequences between host and device as typed byte columns, one per scalar
//! leaf of the element type (the device's structure-of-arrays layout).

use dpl_core::interp::Value;
use dpl_core::ir::{Scalar, Type};
use dpl_core::run::Error;

use super::error::{Malformed, RunError, dev, internal};
use super::io::DeviceSeq;
use crate::driver::Driver;
use crate::layout::{self, Elem, Leaf, size_of};

/// The scalar leaves of `len` elements of type `elem` (a scalar or a tuple of scalars) on
/// the host: one column per leaf, in order, each holding the leaf of every element as
/// little-endian bytes at its device width ([`size_of`]: `bool` one byte, `usize` eight).
/// This is the device's structure-of-arrays layout ([`crate::layout`]), so a column is
/// copied as it is.
#[derive(Clone, Debug, PartialEq)]
pub struct HostColumns {
    /// The element type.
    pub elem: Type,
    /// The number of elements.
    pub len: usize,
    /// One column per scalar leaf of `elem`, `len * size_of(leaf)` bytes each.
    pub cols: Vec<Vec<u8>>,
}

impl HostColumns {
    /// The columns of host values of type `elem`.
    pub fn from_values<'a>(
        elem: &Type,
        items: impl Iterator<Item = &'a Value>,
    ) -> Result<HostColumns, Error> {
        let leaves = type_leaves(elem)?;
        let hint = items.size_hint().0;
        let mut cols: Vec<Vec<u8>> = leaves
            .iter()
            .map(|&l| Vec::with_capacity(hint * size_of(l) as usize))
            .collect();
        let mut tmp = Vec::new();
        let mut len = 0;
        for it in items {
            len += 1;
            tmp.clear();
            layout::value_leaves(it, &mut tmp);
            if tmp.len() != leaves.len() {
                return Err(internal(format!("an element of type {elem} was expected")));
            }
            for (b, x) in cols.iter_mut().zip(&tmp) {
                if !layout::put_value(x, b) {
                    return Err(internal("a scalar was expected"));
                }
            }
        }
        Ok(HostColumns {
            elem: elem.clone(),
            len,
            cols,
        })
    }

    /// The columns of Rust values ([`Elem::put_all`]: no interpreter value per element).
    pub fn from_elems<T: Elem>(items: &[T]) -> HostColumns {
        let elem = T::ty();
        let mut cols: Vec<Vec<u8>> = layout::leaves(&elem)
            .unwrap_or_default()
            .iter()
            .map(|&l| Vec::with_capacity(size_of(l) as usize * items.len()))
            .collect();
        T::put_all(items, &mut cols);
        HostColumns {
            elem,
            len: items.len(),
            cols,
        }
    }

    /// `usize` offsets as a column (what [`NestedColumns::offsets`](super::NestedColumns::offsets) takes).
    pub fn offsets(offsets: &[usize]) -> HostColumns {
        HostColumns::from_elems(offsets)
    }

    /// The elements as host values.
    pub fn to_values(&self) -> Result<Vec<Value>, Error> {
        let leaves = self.leaves()?;
        (0..self.len)
            .map(|i| {
                let mut it = leaves.iter().zip(&self.cols).map(|(&l, c)| {
                    let w = size_of(l) as usize;
                    layout::get_value(l, &c[i * w..(i + 1) * w])
                });
                assemble(&self.elem, &mut it)
            })
            .collect()
    }

    /// The leaves of `elem`, after checking there is one column of the right size per
    /// leaf.
    pub(super) fn leaves(&self) -> Result<Vec<Scalar>, Error> {
        let leaves = type_leaves(&self.elem)?;
        let sized = |(c, &l): (&Vec<u8>, &Scalar)| {
            (self.len as u128) * u128::from(size_of(l)) == c.len() as u128
        };
        if self.cols.len() != leaves.len() || !self.cols.iter().zip(&leaves).all(sized) {
            return Err(RunError::Columns {
                cols: self.cols.len(),
                bytes: self.cols.iter().map(Vec::len).sum(),
                len: self.len,
                elem: self.elem.clone(),
            }
            .into());
        }
        Ok(leaves)
    }

    /// The columns as `u64`s (one leaf of 8 bytes: `usize` or `u64` offsets).
    pub(super) fn words(&self) -> Result<Vec<u64>, Error> {
        match self.leaves()?.as_slice() {
            [Scalar::Usize | Scalar::U64] => Ok(words(&self.cols[0])),
            _ => Err(RunError::OffsetColumns(self.elem.clone()).into()),
        }
    }
}

/// Copies a flat host sequence (`items`, elements of type `elem`) to the device; the
/// caller owns the buffers of the result.
pub fn upload<D: Driver>(driver: &D, elem: &Type, items: &[Value]) -> Result<DeviceSeq, Error> {
    upload_columns(driver, &HostColumns::from_values(elem, items.iter())?)
}

/// Reads a device sequence back to the host.
pub fn download<D: Driver>(driver: &D, seq: &DeviceSeq) -> Result<Value, Error> {
    download_values(driver, seq).map(Value::seq)
}

/// The elements of a device sequence as host values.
pub(super) fn download_values<D: Driver>(driver: &D, seq: &DeviceSeq) -> Result<Vec<Value>, Error> {
    let cols = HostColumns {
        elem: seq.elem.clone(),
        len: seq.len,
        cols: read_columns(driver, seq)?,
    };
    cols.to_values()
}

/// Copies host leaf columns to fresh device buffers (one per column) owned by the caller;
/// on failure, whatever was allocated is freed.
pub fn upload_columns<D: Driver>(driver: &D, c: &HostColumns) -> Result<DeviceSeq, Error> {
    c.leaves()?;
    let mut bufs: Vec<u64> = Vec::with_capacity(c.cols.len());
    for col in &c.cols {
        let written = driver.alloc_zeroed(col.len().max(1)).and_then(|b| {
            bufs.push(b);
            if col.is_empty() {
                Ok(())
            } else {
                driver.write(b, col)
            }
        });
        if let Err(e) = written {
            for &b in &bufs {
                let _ = driver.free(b);
            }
            return Err(dev(e));
        }
    }
    Ok(DeviceSeq {
        bufs,
        len: c.len,
        elem: c.elem.clone(),
    })
}

/// Reads the leaf columns of a device sequence (the inverse of [`upload_columns`]).
pub fn read_columns<D: Driver>(driver: &D, seq: &DeviceSeq) -> Result<Vec<Vec<u8>>, Error> {
    let leaves = type_leaves(&seq.elem)?;
    if leaves.len() != seq.bufs.len() {
        return Err(internal(format!(
            "a device sequence of {} with {} buffer(s)",
            seq.elem,
            seq.bufs.len()
        )));
    }
    seq.bufs
        .iter()
        .zip(&leaves)
        .map(|(&b, &l)| {
            let mut bytes = vec![0u8; size_of(l) as usize * seq.len];
            if !bytes.is_empty() {
                driver.read(b, &mut bytes).map_err(dev)?;
            }
            Ok(bytes)
        })
        .collect()
}

/// Checks host row offsets against `total` values (`offsets[0] == 0`, non-decreasing,
/// the last one is `total`); the length of the longest row.
pub(super) fn check_offsets(offsets: &[u64], total: usize) -> Result<usize, Error> {
    let bad = |why: Malformed| Err(RunError::Malformed(why).into());
    match (offsets.first(), offsets.last()) {
        (Some(0), Some(&last)) if last == total as u64 => {}
        (Some(0), Some(&last)) => return bad(Malformed::Last { last, total }),
        (first, _) => return bad(Malformed::First(first.copied())),
    }
    let mut longest = 0;
    for (row, w) in offsets.windows(2).enumerate() {
        let Some(n) = w[1].checked_sub(w[0]) else {
            return bad(Malformed::Decrease {
                row,
                from: w[0],
                to: w[1],
            });
        };
        longest = longest.max(n);
    }
    Ok(longest as usize)
}

/// The `u64`s of a byte column.
pub(super) fn words(b: &[u8]) -> Vec<u64> {
    b.chunks_exact(8).map(u64::get_leaf).collect()
}

/// The leaves of `t` (internal: every type reaching the executor has them).
pub(super) fn type_leaves(t: &Type) -> Result<Vec<Scalar>, Error> {
    layout::leaves(t).map_err(|e| internal(e.message))
}

/// Rebuilds a value of type `ty` from scalar leaves.
pub(super) fn assemble(ty: &Type, it: &mut impl Iterator<Item = Value>) -> Result<Value, Error> {
    layout::assemble(ty, it).ok_or_else(|| internal("too few leaves"))
}
