//! Host statements and assertions of a plan, evaluated with the reference interpreter's
//! semantics.

use dpl_core::interp::{self, Value};
use dpl_core::ir::{Block, Expr, Function, Span, Stmt, Type};
use dpl_core::run::Error;

use super::error::{RunError, internal};
use super::exec::{Exec, Rt};
use crate::driver::Driver;
use crate::plan::*;

/// An integer host value as `u64` (wrapping, as the device reads it).
pub(super) fn as_u64(v: &Value) -> Result<u64, Error> {
    Ok(as_i128(v)? as u64)
}

/// An integer host value as `i128` (exact, for bounds checks of signed indices).
pub(super) fn as_i128(v: &Value) -> Result<i128, Error> {
    v.as_int()
        .ok_or_else(|| internal("an integer index was expected"))
}

impl<D: Driver> Exec<'_, D> {
    /// Checks a host assertion of the plan (equal lengths, bounds, ...), the error at
    /// `span` when it fails.
    pub(super) fn assert(&self, check: &HostAssert, span: u32) -> Result<(), Error> {
        let at = self.at(span);
        match check {
            HostAssert::EqLen { origin, a, b } => {
                let (l, r) = (
                    as_u64(&self.value(*a)?)? as usize,
                    as_u64(&self.value(*b)?)? as usize,
                );
                if l != r {
                    return Err(Error::LengthMismatch {
                        prim: origin.name(),
                        left: l,
                        right: r,
                        at,
                    });
                }
            }
            HostAssert::InBounds { origin, index, len } => {
                let i = as_i128(&self.value(*index)?)?;
                let n = as_u64(&self.value(*len)?)? as usize;
                if i < 0 || i >= n as i128 {
                    return Err(Error::IndexOutOfRange {
                        prim: origin.name(),
                        index: i,
                        len: n,
                        at,
                    });
                }
            }
            HostAssert::NonEmpty { origin, len } => {
                if as_u64(&self.value(*len)?)? == 0 {
                    return Err(Error::Empty {
                        prim: origin.name(),
                        at,
                    });
                }
            }
            HostAssert::AtMost { origin, len, max } => {
                let n = as_u64(&self.value(*len)?)?;
                if n > *max {
                    return Err(RunError::TooLong {
                        origin: *origin,
                        len: n,
                        at,
                        max: *max,
                    }
                    .into());
                }
            }
        }
        Ok(())
    }

    /// Evaluates a host expression of type `ty` (scalar statements, lengths).
    pub(super) fn host(&mut self, ty: &Type, expr: &HostExpr, span: u32) -> Result<Rt, Error> {
        Ok(match expr {
            HostExpr::Var(v) => self.get(*v)?.clone(),
            HostExpr::Tuple(vs) => Rt::tuple(
                vs.iter()
                    .map(|v| self.get(*v).cloned())
                    .collect::<Result<_, _>>()?,
            ),
            HostExpr::Field(v, n) => self.path(*v, &[*n])?,
            HostExpr::Len(v) => match self.get(*v)? {
                Rt::Seq { len, .. } => Rt::Val(Value::Usize(*len)),
                _ => return Err(internal("len of a non-sequence")),
            },
            HostExpr::Index {
                seq,
                index,
                checked,
            } => {
                let Rt::Seq {
                    bufs,
                    len,
                    elem,
                    offs,
                    layout,
                } = self.get(*seq)?.clone()
                else {
                    return Err(internal("indexing a non-sequence"));
                };
                let i = as_i128(&self.value(*index)?)?;
                if i < 0 || i >= len as i128 {
                    return Err(match checked {
                        Some(o) => Error::IndexOutOfRange {
                            prim: o.name(),
                            index: i,
                            len,
                            at: self.at(span),
                        },
                        None => {
                            internal(format!("unchecked index {i} out of range for length {len}"))
                        }
                    });
                }
                if let Some(o) = offs {
                    return self.row(&bufs, o, &elem, i as usize);
                }
                if let Some(st) = layout {
                    // A row of a strided matrix: read and uploaded again contiguous (a
                    // flat sequence has no stride).
                    let inner = elem
                        .elem()
                        .ok_or_else(|| internal("a row of a flat sequence"))?
                        .clone();
                    let flat = self.read_items(&bufs, st.extent(len), &inner)?;
                    let row: Vec<Value> = (0..st.cols)
                        .map(|j| flat[(i as u64 * st.rs + j * st.cs) as usize].clone())
                        .collect();
                    return self.upload(&Type::seq(inner), &Value::seq(row));
                }
                Rt::Val(self.read_element(&bufs, i as u64, &elem)?)
            }
            HostExpr::Const(c) => Rt::Val(self.interp(ty, &[], |_| Expr::Const(*c), span)?),
            HostExpr::Unary(op, x) => {
                Rt::Val(self.interp(ty, &[*x], |p| Expr::Unary(*op, p[0]), span)?)
            }
            HostExpr::Binary(op, a, b) => {
                Rt::Val(self.interp(ty, &[*a, *b], |p| Expr::Binary(*op, p[0], p[1]), span)?)
            }
            HostExpr::Cast(x, to) => {
                Rt::Val(self.interp(ty, &[*x], |p| Expr::Cast(p[0], *to), span)?)
            }
            HostExpr::Math(m, xs) => {
                Rt::Val(self.interp(ty, xs, |p| Expr::Math(*m, p.to_vec()), span)?)
            }
        })
    }

    /// Evaluates one scalar statement with the reference interpreter.
    fn interp(
        &self,
        ty: &Type,
        operands: &[u32],
        build: impl FnOnce(&[dpl_core::ir::VarId]) -> Expr,
        span: u32,
    ) -> Result<Value, Error> {
        let mut f = Function::new("host", ty.clone());
        let mut args = Vec::new();
        let mut params = Vec::new();
        for &o in operands {
            let v = self.value(o)?;
            let t = match v.scalar_type() {
                Some(s) => Type::Scalar(s),
                None => return Err(internal("a host operand is not a scalar")),
            };
            params.push(f.new_var("x", t, Span::NONE));
            args.push(v);
        }
        f.params = params.clone();
        let r = f.new_var("r", ty.clone(), Span(span));
        f.body = Block {
            stmts: vec![Stmt {
                var: r,
                expr: build(&params),
                span: Span(span),
            }],
            result: r,
        };
        interp::run(&f, args).map_err(|e| {
            e.to_run_error(self.at(span))
                .unwrap_or_else(|| internal(e.to_string()))
        })
    }
}
