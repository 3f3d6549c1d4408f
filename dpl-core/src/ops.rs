//! Operators that backends recognise: a combining function (`reduce`, `scatter_reduce`,
//! ...) that applies one known operation to each scalar leaf of its operands.
//!
//! `|a, b| a + b` on `u32`, `|a, b| (a.0.min(b.0), a.1 ^ b.1)` on `(f32, u64)`: knowing the
//! operation of every leaf lets a backend use what it knows about that operation, such as
//! its identity element ([`LeafOp::identity`]: private accumulators start from it instead
//! of from an empty slot) or a hardware atomic.

use crate::ir::{BinOp, Const, Expr, Lambda, MathFn, Scalar, Type, VarId};
use std::collections::HashMap;

/// The operation a combining function applies to one scalar leaf of its two operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LeafOp {
    /// `a + b` (wrapping for integers)
    Add,
    /// `a * b` (wrapping for integers)
    Mul,
    /// `a.min(b)`
    Min,
    /// `a.max(b)`
    Max,
    /// `a & b`
    And,
    /// `a | b`
    Or,
    /// `a ^ b`
    Xor,
}

impl LeafOp {
    /// The identity element of the operation on scalars of type `s` (`op(e, x) == x` and
    /// `op(x, e) == x` for every `x`, to the bit), if it has one.
    ///
    /// Floating-point `+` has `-0.0` (`-0.0 + 0.0 == 0.0`, where `0.0 + -0.0` would lose
    /// the sign of a `-0.0`); `min` and `max` have the infinities, which also leave a NaN
    /// operand as `f32::min` does (`min(inf, NaN) == inf == min(NaN, inf)`, and `min(x,
    /// NaN) == x`). Bitwise operations on floats and arithmetic on `bool` have none.
    pub fn identity(self, s: Scalar) -> Option<Const> {
        use LeafOp::*;
        let (min, max) = s.int_range();
        Some(match (self, s) {
            (Min | And, Scalar::Bool) => Const::Bool(true),
            (Max | Or | Xor, Scalar::Bool) => Const::Bool(false),
            (Add | Mul, Scalar::Bool) => return None,
            (Add, _) if s.is_float() => Const::Float(-0.0),
            (Mul, _) if s.is_float() => Const::Float(1.0),
            (Min, _) if s.is_float() => Const::Float(f64::INFINITY),
            (Max, _) if s.is_float() => Const::Float(f64::NEG_INFINITY),
            (And | Or | Xor, _) if s.is_float() => return None,
            (Add | Or | Xor, _) => Const::Int(0),
            (Mul, _) => Const::Int(1),
            (Min, _) => Const::Int(max),
            (Max, _) => Const::Int(min),
            // All bits set: -1 for signed types, the maximum for unsigned ones.
            (And, _) if s.is_signed_int() => Const::Int(-1),
            (And, _) => Const::Int(max),
        })
    }
}

/// The scalar leaves of a type made of scalars and tuples, in order (`None` for types
/// with a sequence or an unknown part).
pub fn scalar_leaves(ty: &Type) -> Option<Vec<Scalar>> {
    fn walk(ty: &Type, out: &mut Vec<Scalar>) -> Option<()> {
        match ty {
            Type::Scalar(s) => out.push(*s),
            Type::Tuple(ts) => ts.iter().try_for_each(|t| walk(t, out))?,
            Type::Seq(_) | Type::Infer | Type::Param(..) => return None,
        }
        Some(())
    }
    let mut out = Vec::new();
    walk(ty, &mut out)?;
    Some(out)
}

/// What a variable of a combining function is, for [`leafwise`].
#[derive(Clone)]
enum Node {
    /// Part of operand `p` (0 or 1) of type `ty`, whose first leaf is leaf `at`.
    Part { p: usize, at: usize, ty: Type },
    /// `op(a.leaf, b.leaf)` of the two operands' leaf `at`.
    Leaf { op: LeafOp, at: usize },
    /// A tuple of other nodes.
    Tup(Vec<Node>),
}

/// When `op`, a function of two operands of type `ty`, combines them leaf by leaf, leaf `j`
/// of its result being `op_j(a.j, b.j)` (either operand order) for one of the
/// [`LeafOp`]s, the operation of each leaf, in the order of [`scalar_leaves`].
///
/// `|a, b| a + b`, `|a, b| b.max(a)` and `|a, b| (a.0 + b.0, a.1 & b.1)` qualify;
/// `|a, b| a + 2 * b`, `|a, b| a.0 + a.1` and `|a, b| a || b` (a branch) do not.
pub fn leafwise(op: &Lambda, ty: &Type) -> Option<Vec<LeafOp>> {
    let [a, b] = op.params.as_slice() else {
        return None;
    };
    let mut nodes: HashMap<VarId, Node> = HashMap::new();
    for (p, v) in [*a, *b].into_iter().enumerate() {
        let ty = ty.clone();
        nodes.insert(v, Node::Part { p, at: 0, ty });
    }
    let scalar_part = |n: Option<&Node>| match n {
        Some(Node::Part {
            p,
            at,
            ty: Type::Scalar(_),
        }) => Some((*p, *at)),
        _ => None,
    };
    for st in &op.body.stmts {
        let node = match &st.expr {
            Expr::Var(x) => nodes.get(x)?.clone(),
            Expr::Field(x, n) => match nodes.get(x)? {
                Node::Part {
                    p,
                    at,
                    ty: Type::Tuple(ts),
                } => {
                    let before = ts[..(*n as usize).min(ts.len())]
                        .iter()
                        .map(|t| scalar_leaves(t).map(|l| l.len()))
                        .sum::<Option<usize>>()?;
                    Node::Part {
                        p: *p,
                        at: at + before,
                        ty: ts.get(*n as usize)?.clone(),
                    }
                }
                Node::Tup(xs) => xs.get(*n as usize)?.clone(),
                _ => return None,
            },
            Expr::Tuple(xs) => Node::Tup(
                xs.iter()
                    .map(|x| nodes.get(x).cloned())
                    .collect::<Option<_>>()?,
            ),
            e => {
                let (leaf_op, x, y) = match e {
                    Expr::Binary(bop, x, y) => {
                        let leaf_op = match bop {
                            BinOp::Add => LeafOp::Add,
                            BinOp::Mul => LeafOp::Mul,
                            BinOp::BitAnd => LeafOp::And,
                            BinOp::BitOr => LeafOp::Or,
                            BinOp::BitXor => LeafOp::Xor,
                            _ => return None,
                        };
                        (leaf_op, *x, *y)
                    }
                    Expr::Math(m @ (MathFn::Min | MathFn::Max), xs) if xs.len() == 2 => {
                        let leaf_op = if *m == MathFn::Min {
                            LeafOp::Min
                        } else {
                            LeafOp::Max
                        };
                        (leaf_op, xs[0], xs[1])
                    }
                    _ => return None,
                };
                let (px, lx) = scalar_part(nodes.get(&x))?;
                let (py, ly) = scalar_part(nodes.get(&y))?;
                if px == py || lx != ly {
                    return None;
                }
                Node::Leaf {
                    op: leaf_op,
                    at: lx,
                }
            }
        };
        nodes.insert(st.var, node);
    }
    fn collect(n: &Node, ops: &mut Vec<LeafOp>) -> Option<()> {
        match n {
            Node::Leaf { op, at } if *at == ops.len() => ops.push(*op),
            Node::Tup(xs) => xs.iter().try_for_each(|x| collect(x, ops))?,
            _ => return None,
        }
        Some(())
    }
    let mut ops = Vec::new();
    collect(nodes.get(&op.body.result)?, &mut ops)?;
    (scalar_leaves(ty)?.len() == ops.len()).then_some(ops)
}

/// The identity of a combining function that [`leafwise`] recognises: one constant per
/// scalar leaf of `ty`, in order; `None` if `op` is not leafwise or a leaf's operation
/// has no identity on its type.
pub fn identity(op: &Lambda, ty: &Type) -> Option<Vec<Const>> {
    leafwise(op, ty)?
        .into_iter()
        .zip(scalar_leaves(ty)?)
        .map(|(o, s)| o.identity(s))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Block, Stmt};

    /// A lambda `|v0, v1| { stmts; result }` over variables numbered from 0.
    fn lambda(stmts: Vec<(u32, Expr)>, result: u32) -> Lambda {
        Lambda {
            params: vec![v(0), v(1)],
            captures: vec![],
            body: Block {
                stmts: stmts
                    .into_iter()
                    .map(|(var, expr)| Stmt {
                        var: v(var),
                        expr,
                        span: Default::default(),
                    })
                    .collect(),
                result: v(result),
            },
        }
    }

    fn v(i: u32) -> VarId {
        VarId::new(i as usize)
    }

    #[test]
    fn scalar_operators_and_their_identities() {
        let u32_t = Type::Scalar(Scalar::U32);
        let add = lambda(vec![(2, Expr::Binary(BinOp::Add, v(1), v(0)))], 2);
        assert_eq!(leafwise(&add, &u32_t), Some(vec![LeafOp::Add]));
        assert_eq!(identity(&add, &u32_t), Some(vec![Const::Int(0)]));
        let min = lambda(vec![(2, Expr::Math(MathFn::Min, vec![v(0), v(1)]))], 2);
        let f32_t = Type::Scalar(Scalar::F32);
        assert_eq!(
            identity(&min, &f32_t),
            Some(vec![Const::Float(f64::INFINITY)])
        );
        let i64_t = Type::Scalar(Scalar::I64);
        assert_eq!(
            identity(&min, &i64_t),
            Some(vec![Const::Int(i64::MAX.into())])
        );
        // Not leafwise: an operand combined with itself, a constant, a subtraction.
        let twice = lambda(vec![(2, Expr::Binary(BinOp::Add, v(0), v(0)))], 2);
        assert_eq!(leafwise(&twice, &u32_t), None);
        let sub = lambda(vec![(2, Expr::Binary(BinOp::Sub, v(0), v(1)))], 2);
        assert_eq!(leafwise(&sub, &u32_t), None);
        let first = lambda(vec![], 0);
        assert_eq!(leafwise(&first, &u32_t), None);
    }

    #[test]
    fn tuples_leaf_by_leaf() {
        // |a, b| (a.0 + b.0, b.1 & a.1) on (f64, i32).
        let t = Type::Tuple(vec![Type::Scalar(Scalar::F64), Type::Scalar(Scalar::I32)]);
        // The two leaves combined; `result` orders them in the result tuple.
        let combine = |result: [u32; 2]| {
            lambda(
                vec![
                    (2, Expr::Field(v(0), 0)),
                    (3, Expr::Field(v(1), 0)),
                    (4, Expr::Binary(BinOp::Add, v(2), v(3))),
                    (5, Expr::Field(v(1), 1)),
                    (6, Expr::Field(v(0), 1)),
                    (7, Expr::Binary(BinOp::BitAnd, v(5), v(6))),
                    (8, Expr::Tuple(result.into_iter().map(v).collect())),
                ],
                8,
            )
        };
        let op = combine([4, 7]);
        assert_eq!(leafwise(&op, &t), Some(vec![LeafOp::Add, LeafOp::And]));
        assert_eq!(
            identity(&op, &t),
            Some(vec![Const::Float(-0.0), Const::Int(-1)])
        );
        // Leaves swapped in the result: not leafwise.
        let swapped = combine([7, 4]);
        assert_eq!(leafwise(&swapped, &t), None);
    }

    #[test]
    fn identities_are_identities() {
        use LeafOp::*;
        for s in Scalar::ALL {
            for op in [Add, Mul, Min, Max, And, Or, Xor] {
                let Some(e) = op.identity(s) else {
                    assert!(
                        (s == Scalar::Bool && matches!(op, Add | Mul))
                            || (s.is_float() && matches!(op, And | Or | Xor)),
                        "{op:?} on {s} has an identity"
                    );
                    continue;
                };
                // Check `op(e, x) == x` on a few values, in i128 or f64 arithmetic.
                match e {
                    Const::Bool(e) => {
                        for x in [false, true] {
                            let r = match op {
                                Min | And => e & x,
                                Max | Or => e | x,
                                _ => e ^ x,
                            };
                            assert_eq!(r, x, "{op:?} on bool");
                        }
                    }
                    Const::Int(e) => {
                        let (lo, hi) = s.int_range();
                        for x in [lo, (-1).max(lo), 0, 1, 12345.min(hi), hi] {
                            let r = match op {
                                Add => e + x,
                                Mul => e * x,
                                Min => e.min(x),
                                Max => e.max(x),
                                And => e & x,
                                Or => e | x,
                                Xor => e ^ x,
                            };
                            assert_eq!(r, x, "{op:?} on {s}, x = {x}");
                        }
                    }
                    Const::Float(e) => {
                        for x in [-0.0, 0.0, -1.5, 3.0, f64::INFINITY, f64::NEG_INFINITY] {
                            let r = match op {
                                Add => e + x,
                                Mul => e * x,
                                Min => e.min(x),
                                _ => e.max(x),
                            };
                            assert_eq!(r.to_bits(), x.to_bits(), "{op:?} on {s}, x = {x}");
                        }
                        let nan = match op {
                            Add => e + f64::NAN,
                            Mul => e * f64::NAN,
                            Min | Max => f64::NAN,
                            _ => unreachable!(),
                        };
                        assert!(nan.is_nan());
                    }
                }
            }
        }
    }
}
