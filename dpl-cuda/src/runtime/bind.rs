//! Binding a run's arguments into its environment (uploading what is on the host), and
//! handing its result out (left on the device, or read back).

use dpl_core::interp::Value;
use dpl_core::ir::{Scalar, Type};
use dpl_core::run::Error;

use super::columns::{HostColumns, check_offsets, type_leaves, upload_columns};
use super::error::{RunError, dev, internal};
use super::exec::{Exec, RECORD_BYTES, Rt, Strides};
use super::io::*;
use crate::driver::Driver;
use crate::layout::size_of;
use crate::plan::Init;

impl<D: Driver> Exec<'_, D> {
    /// Allocates the error record (none for a program without checks, whose kernels never
    /// touch it: they get address 0; kept zeroed between runs, since only a failed check
    /// writes it, and a run with one gives it back as any other buffer) and binds the plan's parameters to the arguments
    /// (uploading host columns, viewing device-resident ones).
    pub(super) fn start(&mut self, args: Vec<Input>) -> Result<(), Error> {
        if !self.program.plan.sites.is_empty() {
            self.err = self.try_alloc(RECORD_BYTES, Init::KeptZero).map_err(dev)?;
        }
        let params = self.program.plan.params.clone();
        for ((v, ty), a) in params.iter().zip(args) {
            let a = match a {
                Input::Host(a) => a,
                Input::Matrix(m) => {
                    let rt = self.upload_matrix(*v, ty, &m)?;
                    self.set(*v, rt);
                    continue;
                }
                Input::Nested(n) => {
                    let rt = self.bind_nested(ty, n).map_err(|e| match e {
                        Error::Device(message) => RunError::Argument { var: *v, message }.into(),
                        other => other,
                    })?;
                    self.set(*v, rt);
                    continue;
                }
                Input::Device(d) => {
                    if Type::seq(d.elem.clone()) != *ty
                        || d.bufs.len() != type_leaves(&d.elem)?.len()
                    {
                        return Err(RunError::DeviceArgument {
                            var: *v,
                            ty: ty.clone(),
                            elem: d.elem,
                        }
                        .into());
                    }
                    self.set(
                        *v,
                        Rt::Seq {
                            bufs: d.bufs,
                            len: d.len,
                            elem: d.elem,
                            offs: None,
                            layout: None,
                        },
                    );
                    continue;
                }
            };
            if !a.conforms(ty) {
                return Err(RunError::ArgumentType {
                    var: *v,
                    ty: ty.clone(),
                }
                .into());
            }
            let rt = self.upload(ty, &a)?;
            self.set(*v, rt);
        }
        Ok(())
    }

    /// Uploads a matrix given as storage and strides for parameter `%v` of type `ty`.
    pub(super) fn upload_matrix(
        &mut self,
        v: u32,
        ty: &Type,
        m: &StridedMatrix,
    ) -> Result<Rt, Error> {
        let Some(Type::Seq(inner)) = ty.elem() else {
            return Err(RunError::MatrixParameter {
                var: v,
                ty: ty.clone(),
            }
            .into());
        };
        let flat_ty = Type::seq((**inner).clone());
        let stored = match &m.storage {
            MatrixStorage::Host(Value::Seq(items)) if m.storage_conforms(&flat_ty) => items.len(),
            MatrixStorage::Device(d)
                if d.elem == **inner && d.bufs.len() == type_leaves(&d.elem)?.len() =>
            {
                d.len
            }
            _ => {
                return Err(RunError::MatrixStorage {
                    var: v,
                    flat: flat_ty,
                }
                .into());
            }
        };
        let st = Strides {
            rs: m.row_stride as u64,
            cs: m.col_stride as u64,
            cols: m.cols as u64,
        };
        let extent = (m.rows as u128)
            .saturating_sub(1)
            .saturating_mul(m.row_stride as u128)
            + (m.cols as u128)
                .saturating_sub(1)
                .saturating_mul(m.col_stride as u128)
            + 1;
        if m.rows > 0 && m.cols > 0 && extent > stored as u128 {
            return Err(RunError::MatrixExtent {
                var: v,
                rows: m.rows,
                cols: m.cols,
                row_stride: m.row_stride,
                col_stride: m.col_stride,
                extent,
                stored,
            }
            .into());
        }
        let bufs = match &m.storage {
            MatrixStorage::Host(v) => match self.upload(&flat_ty, v)? {
                Rt::Seq { bufs, .. } => bufs,
                _ => return Err(internal("a flat upload that is not a sequence")),
            },
            MatrixStorage::Device(d) => d.bufs.clone(),
        };
        Ok(Rt::Seq {
            bufs,
            len: m.rows,
            elem: Type::seq((**inner).clone()),
            offs: None,
            layout: Some(st),
        })
    }

    /// Uploads a host value of type `ty`: sequences (flat or nested) go to the device as
    /// typed columns, scalars stay on the host.
    pub(super) fn upload(&mut self, ty: &Type, a: &Value) -> Result<Rt, Error> {
        Ok(match (ty, a) {
            (Type::Seq(elem), Value::Seq(items)) => match &**elem {
                Type::Seq(inner) => self.bind_nested(ty, NestedColumns::from_value(inner, a)?)?,
                elem => Rt::Seq {
                    bufs: self.upload_host(&HostColumns::from_values(elem, items.iter())?)?,
                    len: items.len(),
                    elem: elem.clone(),
                    offs: None,
                    layout: None,
                },
            },
            (Type::Tuple(ts), Value::Tuple(vs))
                if ts
                    .iter()
                    .any(|t| matches!(t, Type::Seq(_) | Type::Tuple(_))) =>
            {
                Rt::Tup(
                    ts.iter()
                        .zip(vs)
                        .map(|(t, v)| self.upload(t, v))
                        .collect::<Result<_, _>>()?,
                )
            }
            _ => Rt::Val(a.clone()),
        })
    }

    /// Uploads host columns into buffers of this run (freed when it ends).
    pub(super) fn upload_host(&mut self, c: &HostColumns) -> Result<Vec<u64>, Error> {
        let seq = upload_columns(self.driver, c)?;
        self.allocs.extend_from_slice(&seq.bufs);
        Ok(seq.bufs)
    }

    /// A nested sequence of type `ty` (`[[T]]`) from its parts, checked as
    /// [`NestedColumns`] says; host parts are uploaded (host offsets equal to ones already
    /// uploaded by this run are not uploaded again).
    pub(super) fn bind_nested(&mut self, ty: &Type, n: NestedColumns) -> Result<Rt, Error> {
        let Some(row_ty @ Type::Seq(inner)) = ty.elem() else {
            return Err(RunError::NestedParameter(ty.clone()).into());
        };
        let row_ty = row_ty.clone();
        if let Columns::Host(c) = &n.values {
            c.leaves()?;
        }
        if n.values.elem() != &**inner {
            return Err(RunError::NestedValues {
                expected: (**inner).clone(),
                given: n.values.elem().clone(),
            }
            .into());
        }
        if !matches!(n.offsets.elem(), Type::Scalar(Scalar::Usize | Scalar::U64)) {
            return Err(RunError::NestedOffsetType(n.offsets.elem().clone()).into());
        }
        let Some(rows) = n.offsets.len().checked_sub(1) else {
            return Err(RunError::NoOffsets.into());
        };
        let total = n.values.len();
        let (offs, longest) = match n.offsets {
            Columns::Host(c) => {
                let longest = check_offsets(&c.words()?, total)?;
                let addr = match self.host_offsets.iter().find(|(b, _)| *b == c.cols[0]) {
                    Some(&(_, addr)) => addr,
                    None => {
                        let addr = self.upload_host(&c)?[0];
                        self.host_offsets
                            .extend(c.cols.into_iter().map(|b| (b, addr)));
                        addr
                    }
                };
                (addr, Some(longest))
            }
            Columns::Device(d) => {
                let addr = match d.bufs[..] {
                    [a] => a,
                    _ => return Err(internal("offsets with several buffers")),
                };
                let first = self.read_u64s(addr, 1)?[0];
                let last = self.read_u64s(addr + 8 * rows as u64, 1)?[0];
                if first != 0 || last != total as u64 {
                    return Err(RunError::DeviceOffsets { first, last, total }.into());
                }
                (addr, None)
            }
        };
        let bufs = match n.values {
            Columns::Host(c) => self.upload_host(&c)?,
            Columns::Device(d) => {
                if d.bufs.len() != type_leaves(&d.elem)?.len() {
                    return Err(internal(
                        "a device sequence with the wrong number of buffers",
                    ));
                }
                d.bufs
            }
        };
        if let Some(longest) = longest {
            self.shapes.push((offs, total, longest));
        }
        Ok(Rt::Seq {
            bufs,
            len: rows,
            elem: row_ty,
            offs: Some(offs),
            layout: None,
        })
    }

    /// The result with its flat sequences left on the device, in buffers the caller will
    /// own: buffers allocated by this run are handed over (no longer freed at the end),
    /// any other (an argument's, or one already handed over) is copied first.
    pub(super) fn take_output(&mut self, r: &Rt) -> Result<Output, Error> {
        Ok(match r {
            Rt::Tup(xs) => Output::Tuple(
                xs.iter()
                    .map(|x| self.take_output(x))
                    .collect::<Result<_, _>>()?,
            ),
            Rt::Seq {
                bufs,
                len,
                elem,
                offs: None,
                layout: None,
            } => Output::Device(self.own(bufs, *len, elem)?),
            Rt::Seq {
                bufs,
                len,
                elem,
                offs: Some(o),
                layout: None,
            } => {
                let inner = elem.elem().ok_or_else(|| internal("rows of a flat type"))?;
                // The number of values: known for offsets this run uploaded, else the
                // last offset (offsets start at 0 in every nested sequence of a run).
                let total = match self.shapes.iter().find(|s| s.0 == *o) {
                    Some(&(_, total, _)) => total,
                    None => self.read_u64s(o + 8 * *len as u64, 1)?[0] as usize,
                };
                Output::Nested(DeviceNested {
                    offsets: self.own(&[*o], len + 1, &Type::Scalar(Scalar::Usize))?,
                    values: self.own(bufs, total, inner)?,
                })
            }
            other => Output::Host(self.to_value(other)?),
        })
    }

    /// The flat sequence in `bufs` as one the caller will own: a buffer allocated by this
    /// run and not given yet is given as it is, any other (an argument's, a view into a
    /// buffer, or one given already) is copied to a fresh one first.
    pub(super) fn own(
        &mut self,
        bufs: &[u64],
        len: usize,
        elem: &Type,
    ) -> Result<DeviceSeq, Error> {
        let leaves = type_leaves(elem)?;
        let mut owned = Vec::with_capacity(bufs.len());
        for (&b, &l) in bufs.iter().zip(&leaves) {
            if self.allocs.contains(&b) && !self.given.contains(&b) {
                owned.push(b);
            } else {
                let bytes = size_of(l) as usize * len;
                let fresh = self.alloc(bytes)?;
                if bytes > 0 {
                    self.driver.copy(b, fresh, bytes).map_err(dev)?;
                }
                owned.push(fresh);
            }
            self.given.push(owned[owned.len() - 1]);
        }
        Ok(DeviceSeq {
            bufs: owned,
            len,
            elem: elem.clone(),
        })
    }

    /// The result read back to the host as an interpreter value.
    pub(super) fn to_value(&self, r: &Rt) -> Result<Value, Error> {
        Ok(match r {
            Rt::Val(v) => v.clone(),
            Rt::Tup(xs) => Value::Tuple(
                xs.iter()
                    .map(|x| self.to_value(x))
                    .collect::<Result<_, _>>()?,
            ),
            Rt::Seq {
                bufs,
                len,
                elem,
                offs: None,
                layout: None,
            } => Value::seq(self.read_items(bufs, *len, elem)?),
            Rt::Seq {
                bufs,
                len,
                elem,
                layout: Some(st),
                ..
            } => {
                let inner = elem.elem().ok_or_else(|| internal("rows of a flat type"))?;
                let extent = st.extent(*len);
                let flat = self.read_items(bufs, extent, inner)?;
                let rows = (0..*len as u64)
                    .map(|r| {
                        Value::seq(
                            (0..st.cols)
                                .map(|j| flat[(r * st.rs + j * st.cs) as usize].clone())
                                .collect(),
                        )
                    })
                    .collect();
                Value::seq(rows)
            }
            Rt::Seq {
                bufs,
                len,
                elem,
                offs: Some(o),
                ..
            } => {
                let offs = self.read_u64s(*o, len + 1)?;
                let inner = elem.elem().ok_or_else(|| internal("rows of a flat type"))?;
                let total = offs.last().copied().unwrap_or(0) as usize;
                let mut flat = self.read_items(bufs, total, inner)?.into_iter();
                let mut rows = Vec::with_capacity(*len);
                for w in offs.windows(2) {
                    let n = w[1].saturating_sub(w[0]) as usize;
                    rows.push(Value::seq(flat.by_ref().take(n).collect()));
                }
                Value::seq(rows)
            }
        })
    }
}
