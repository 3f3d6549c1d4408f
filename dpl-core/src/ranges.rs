//! Range facts: checked reads whose index is provably below the loop's length.
//!
//! Stencils clamp their neighbour indices into the array instead of branching
//! (`y[i.max(1) - 1]`, `y[(i + 1).min(n - 1)]`, `y[i.max(w) - w]`,
//! `y[(i + w).min(n - 1)]`, Copperhead's optical-flow operator). Each such read is a
//! checked read in the IR, because its index is computed; but every one of those indices
//! is below the length `N` of the `map` that computes it. [`bounded_reads`] finds them with
//! a small forward analysis over the element function of a top-level combinator, which
//! tracks the `usize` values known to be `< N`:
//!
//! * the element's own index `i` (`i < N`);
//! * `N - 1` (inside the loop `N >= 1`, so it does not wrap), where `N` is the loop's length
//!   or a length proven equal to it;
//! * `min(a, b)` when `a` or `b` is `< N`;
//! * `max(a, c) - c` (or `max(c, a) - c`) when `a` is `< N`: it is at most `a` and never
//!   wraps (`c` the same variable or an equal constant);
//! * copies of such values.
//!
//! A read `x[k]` with `k < N` is then in range when `len(x) == N` (a length proven equal to
//! the loop's: the same `len` variable, or joined by `eq_len` assertions made before the
//! loop), or, for any other `x`, whenever `len(x) >= N` holds: the CPU code generator tests
//! that once before the loop and runs a variant of the loop without the checks when it
//! holds (the checked variant otherwise, so errors are reported as before).
//!
//! A second kind of fact comes from the data: [`row_index_reads`] finds the checked reads
//! `x[c]` inside a top-level loop whose index `c` is an element of a row of a nested
//! parameter `P` (`c = P[j][k]`: SpMV's `x[cols[i][k]]`) and whose `x` is defined outside the
//! loop. All of them are in range when every value of `P` is below `len(x)`, which the
//! facade's `Nested` answers from a bound computed once and cached with the data (the test
//! is `O(1)` on every later call with the same matrix); the code generator runs the
//! unchecked variant when it holds, the checked one otherwise.
//!
//! The IR is not changed: the facts are only used by the code generator, and the other
//! backends are unaffected.

use crate::ir::*;
use std::collections::{HashMap, HashSet};

/// A checked read `seq[index]` whose index is provably below the loop's length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoundedRead {
    /// The statement (its variable) that reads.
    pub stmt: VarId,
    /// The sequence read.
    pub seq: VarId,
    /// Whether `len(seq)` is proven equal to the loop's length: the read is then in range
    /// unconditionally; otherwise it is in range when `len(seq) >= len`.
    pub same_len: bool,
}

/// The checked reads, among the statements directly in the element function of the
/// top-level combinator bound to `at` (a statement of the body, or of the blocks of its
/// top-level `if`s and loops: `host_soac`), whose `usize` index is
/// provably below the combinator's length. Empty if `at` is not a top-level combinator.
pub fn bounded_reads(f: &Function, at: VarId) -> Vec<BoundedRead> {
    let Some((before, s)) = host_soac(f, at) else {
        return Vec::new();
    };
    let Some(&i) = s.elem.params.first() else {
        return Vec::new();
    };
    let usize_ty = Type::usize();
    let is_usize = |v: VarId| f.vars[v].ty == usize_ty;
    let same = same_length(&before, s.len);
    // Lengths of the sequences read: `len(x)` variables of the top level.
    let mut len_of: HashMap<VarId, VarId> = HashMap::new();
    for st in &before {
        if let Expr::Len(x) = st.expr {
            len_of.entry(x).or_insert(st.var);
        }
    }
    let body = &s.elem.body;
    let mut consts: HashMap<VarId, i128> = HashMap::new();
    let mut defs: HashMap<VarId, &Expr> = HashMap::new();
    for st in before.iter().copied().chain(&body.stmts) {
        if let Expr::Const(Const::Int(k)) = st.expr {
            consts.insert(st.var, k);
        }
        defs.insert(st.var, &st.expr);
    }
    let equal = |a: VarId, b: VarId| {
        a == b || matches!((consts.get(&a), consts.get(&b)), (Some(x), Some(y)) if x == y)
    };
    let mut below: HashSet<VarId> = HashSet::from([i]);
    let mut reads = Vec::new();
    for st in &body.stmts {
        let v = st.var;
        let fact = is_usize(v)
            && match &st.expr {
                Expr::Var(w) => below.contains(w),
                Expr::Math(MathFn::Min, args) => args.iter().any(|a| below.contains(a)),
                Expr::Binary(BinOp::Sub, a, b) => {
                    let n_minus_one = same.contains(a) && consts.get(b) == Some(&1);
                    let clamped_low = match defs.get(a) {
                        Some(Expr::Math(MathFn::Max, args)) if args.len() == 2 => {
                            (below.contains(&args[0]) && equal(args[1], *b))
                                || (below.contains(&args[1]) && equal(args[0], *b))
                        }
                        _ => false,
                    };
                    n_minus_one || clamped_low
                }
                _ => false,
            };
        if fact {
            below.insert(v);
        }
        if let Expr::Index {
            seq,
            index,
            checked: Some(_),
        } = &st.expr
            && is_usize(*index)
            && below.contains(index)
        {
            let same_len = len_of.get(seq).is_some_and(|l| same.contains(l));
            reads.push(BoundedRead {
                stmt: v,
                seq: *seq,
                same_len,
            });
        }
    }
    reads
}

/// A checked read `x[c]` in a top-level loop whose index `c` is an element of a row of the
/// nested parameter `rows` (see [`row_index_reads`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowIndexRead {
    /// The statement (its variable) that reads.
    pub stmt: VarId,
    /// The sequence read, defined outside the loop.
    pub seq: VarId,
    /// The nested parameter (`[[I]]`, `I` an integer type) whose values are the indices.
    pub rows: VarId,
}

/// The checked reads `x[c]`, anywhere inside the element function of the top-level
/// combinator bound to `at` (nested loops and branches included), whose index `c` is read
/// from a row of a nested integer parameter `P` (`r = P[j]`, `c = r[k]`, any `j` and `k`)
/// and whose sequence `x` is a parameter or a top-level variable defined before the loop.
/// Every such read is in range when all values of `P` are in `0..len(x)`. Empty if `at` is
/// not a top-level combinator.
pub fn row_index_reads(f: &Function, at: VarId) -> Vec<RowIndexRead> {
    let Some((before, s)) = host_soac(f, at) else {
        return Vec::new();
    };
    let nested_int = |v: VarId| match &f.vars[v].ty {
        Type::Seq(e) => matches!(&**e, Type::Seq(i) if i.scalar().is_some_and(|k| k.is_int())),
        _ => false,
    };
    let outside: HashSet<VarId> = f
        .params
        .iter()
        .copied()
        .chain(before.iter().map(|st| st.var))
        .collect();
    // Rows of a nested parameter, then their elements, in definition order.
    let mut row_of: HashMap<VarId, VarId> = HashMap::new();
    let mut elem_of: HashMap<VarId, VarId> = HashMap::new();
    let mut reads = Vec::new();
    let mut visit = |st: &Stmt| {
        let Expr::Index {
            seq,
            index,
            checked,
        } = &st.expr
        else {
            return;
        };
        if f.params.contains(seq) && nested_int(*seq) {
            row_of.insert(st.var, *seq);
        } else if let Some(&p) = row_of.get(seq) {
            elem_of.insert(st.var, p);
        } else if let (Some(_), Some(&p)) = (checked, elem_of.get(index))
            && outside.contains(seq)
        {
            reads.push(RowIndexRead {
                stmt: st.var,
                seq: *seq,
                rows: p,
            });
        }
    };
    for l in std::iter::once(&s.elem).chain(s.kind.lambdas()) {
        l.body.walk(&mut visit);
    }
    reads
}

/// A value of the loop's element function that is known outside the loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outer {
    /// A variable of the function body or a parameter (defined before the loop).
    Var(VarId),
    /// An integer constant.
    Const(i128),
}

/// A clamped index that equals a simpler expression of the element's index `i` inside an
/// index range (the *interior*): where a stencil's neighbour is not cut by the border.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clamp {
    /// `stmt = max(i, c) - c` (or `max(c, i) - c`): equals `i - c` when `i >= c`.
    Low {
        /// The statement.
        stmt: VarId,
        /// `c`.
        c: Outer,
    },
    /// `stmt = min(x, n - 1)` (or `min(n - 1, x)`) with `x = i + c` or `x = i` (`c` =
    /// `None`), `n` the loop's length: equals `x` when `i + c < n`.
    High {
        /// The statement.
        stmt: VarId,
        /// `x`.
        x: VarId,
        /// `c`, if `x = i + c`.
        c: Option<Outer>,
    },
}

/// The clamps of the element's index directly in the element function of the top-level
/// loop bound to `at` (see [`Clamp`]), in statement order. Inside the interior
/// `max(Low c) <= i < n - max(High c)` each equals its simpler form.
pub fn clamps(f: &Function, at: VarId) -> Vec<Clamp> {
    let Some((before, s)) = host_soac(f, at) else {
        return Vec::new();
    };
    let Some(&i) = s.elem.params.first() else {
        return Vec::new();
    };
    let usize_ty = Type::usize();
    let same = same_length(&before, s.len);
    let body = &s.elem.body;
    let mut inner: HashMap<VarId, &Expr> = HashMap::new();
    for st in &body.stmts {
        inner.insert(st.var, &st.expr);
    }
    // `c` as a value known outside the loop: a constant of the body, or anything not
    // defined in the body (a parameter, a variable of the function body).
    let outer = |c: VarId| match inner.get(&c) {
        Some(Expr::Const(Const::Int(k))) => Some(Outer::Const(*k)),
        Some(_) => None,
        None if f.vars[c].ty == usize_ty && !s.elem.params.contains(&c) => Some(Outer::Var(c)),
        None => None,
    };
    let n_minus_one = |b: VarId| match inner.get(&b) {
        Some(Expr::Binary(BinOp::Sub, a, one)) => {
            same.contains(a) && matches!(inner.get(one), Some(Expr::Const(Const::Int(1))))
        }
        _ => false,
    };
    let mut out = Vec::new();
    for st in &body.stmts {
        if f.vars[st.var].ty != usize_ty {
            continue;
        }
        match &st.expr {
            Expr::Binary(BinOp::Sub, m, c) => {
                let Some(Expr::Math(MathFn::Max, args)) = inner.get(m) else {
                    continue;
                };
                let clamped = args.len() == 2
                    && ((args[0] == i && args[1] == *c) || (args[1] == i && args[0] == *c));
                if let (true, Some(c)) = (clamped, outer(*c)) {
                    out.push(Clamp::Low { stmt: st.var, c });
                }
            }
            Expr::Math(MathFn::Min, args) if args.len() == 2 => {
                let (x, b) = if n_minus_one(args[1]) {
                    (args[0], args[1])
                } else {
                    (args[1], args[0])
                };
                if !n_minus_one(b) {
                    continue;
                }
                if x == i {
                    out.push(Clamp::High {
                        stmt: st.var,
                        x,
                        c: None,
                    });
                    continue;
                }
                let Some(Expr::Binary(BinOp::Add, p, q)) = inner.get(&x) else {
                    continue;
                };
                let c = match (*p == i, *q == i) {
                    (true, _) => outer(*q),
                    (_, true) => outer(*p),
                    _ => None,
                };
                if let Some(c) = c {
                    out.push(Clamp::High {
                        stmt: st.var,
                        x,
                        c: Some(c),
                    });
                }
            }
            _ => {}
        }
    }
    out
}

/// The combinator bound to `at` by a statement of the function's top level (the body, the
/// branches of a top-level `if`, the blocks of a top-level loop) and the statements that
/// run before it on every path to it: those before it in its block and before the
/// enclosing statement in each enclosing block. `None` if there is no such combinator.
fn host_soac(f: &Function, at: VarId) -> Option<(Vec<&Stmt>, &Soac)> {
    fn find<'a>(b: &'a Block, at: VarId, before: &mut Vec<&'a Stmt>) -> Option<&'a Soac> {
        for st in &b.stmts {
            if st.var == at {
                return match &st.expr {
                    Expr::Soac(s) => Some(s),
                    _ => None,
                };
            }
            if matches!(st.expr, Expr::If(..) | Expr::Loop(_)) {
                let mut found = None;
                st.expr.for_each_block(&mut |inner| {
                    if found.is_none() {
                        let n = before.len();
                        found = find(inner, at, before);
                        if found.is_none() {
                            before.truncate(n);
                        }
                    }
                });
                if found.is_some() {
                    return found;
                }
            }
            before.push(st);
        }
        None
    }
    let mut before = Vec::new();
    let s = find(&f.body, at, &mut before)?;
    Some((before, s))
}

/// The variables of `stmts` (the statements that run before a loop, [`host_soac`]) proven
/// equal to `n`: copies, and lengths joined by `eq_len` assertions.
fn same_length(stmts: &[&Stmt], n: VarId) -> HashSet<VarId> {
    let mut same: HashSet<VarId> = HashSet::from([n]);
    loop {
        let size = same.len();
        for st in stmts {
            match &st.expr {
                Expr::Var(w) if same.contains(w) || same.contains(&st.var) => {
                    same.insert(*w);
                    same.insert(st.var);
                }
                Expr::Assert(Assertion::EqLen { a, b, .. })
                    if same.contains(a) || same.contains(b) =>
                {
                    same.insert(*a);
                    same.insert(*b);
                }
                _ => {}
            }
        }
        if same.len() == size {
            return same;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `fn(x: [f32], y: [f32], w: usize) { map(len x, |i| body(i)) }` where `body` adds
    /// statements through `add(f, i, n, last)` and returns the reads to look for.
    fn program(
        add: impl FnOnce(&mut Function, VarId, VarId, VarId, VarId, VarId, &mut Vec<Stmt>),
    ) -> (Function, VarId) {
        let f32t = Type::Scalar(Scalar::F32);
        let seq = Type::Seq(Box::new(f32t.clone()));
        let mut f = Function::new("t", seq.clone());
        let x = f.new_var("x", seq.clone(), Span::NONE);
        let y = f.new_var("y", seq.clone(), Span::NONE);
        let w = f.new_var("w", Type::usize(), Span::NONE);
        f.params = vec![x, y, w];
        let n = f.new_var("n", Type::usize(), Span::NONE);
        let i = f.new_var("i", Type::usize(), Span::NONE);
        let one = f.new_var("one", Type::usize(), Span::NONE);
        let last = f.new_var("last", Type::usize(), Span::NONE);
        let mut body = vec![
            stmt(one, Expr::Const(Const::Int(1))),
            stmt(last, Expr::Binary(BinOp::Sub, n, one)),
        ];
        add(&mut f, i, n, last, x, y, &mut body);
        let result = body.last().map(|s| s.var).unwrap_or(one);
        let m = f.new_var("m", seq, Span::NONE);
        f.body = Block {
            stmts: vec![
                stmt(n, Expr::Len(x)),
                stmt(
                    m,
                    Expr::Soac(Box::new(Soac {
                        kind: SoacKind::Map,
                        len: n,
                        elem: Lambda {
                            params: vec![i],
                            captures: vec![],
                            body: Block {
                                stmts: body,
                                result,
                            },
                        },
                    })),
                ),
            ],
            result: m,
        };
        (f, m)
    }

    fn stmt(var: VarId, expr: Expr) -> Stmt {
        Stmt {
            var,
            expr,
            span: Span::NONE,
        }
    }

    fn read(f: &mut Function, seq: VarId, index: VarId, out: &mut Vec<Stmt>) -> VarId {
        let r = f.new_var("r", Type::Scalar(Scalar::F32), Span::NONE);
        out.push(stmt(
            r,
            Expr::Index {
                seq,
                index,
                checked: Some(Origin::Index),
            },
        ));
        r
    }

    #[test]
    fn clamped_neighbours_are_below_the_length() {
        let mut want = Vec::new();
        let (f, m) = program(|f, i, _n, last, x, y, b| {
            let one = f.new_var("one", Type::usize(), Span::NONE);
            let w = f.params[2];
            let mx = f.new_var("mx", Type::usize(), Span::NONE);
            let west = f.new_var("west", Type::usize(), Span::NONE);
            let ip1 = f.new_var("ip1", Type::usize(), Span::NONE);
            let east = f.new_var("east", Type::usize(), Span::NONE);
            let mw = f.new_var("mw", Type::usize(), Span::NONE);
            let north = f.new_var("north", Type::usize(), Span::NONE);
            b.push(stmt(one, Expr::Const(Const::Int(1))));
            b.push(stmt(mx, Expr::Math(MathFn::Max, vec![i, one])));
            b.push(stmt(west, Expr::Binary(BinOp::Sub, mx, one)));
            b.push(stmt(ip1, Expr::Binary(BinOp::Add, i, one)));
            b.push(stmt(east, Expr::Math(MathFn::Min, vec![ip1, last])));
            b.push(stmt(mw, Expr::Math(MathFn::Max, vec![w, i])));
            b.push(stmt(north, Expr::Binary(BinOp::Sub, mw, w)));
            for (k, s) in [(i, x), (west, x), (east, y), (north, y)] {
                let r = read(f, s, k, b);
                want.push((r, s, s == x));
            }
        });
        let got: Vec<_> = bounded_reads(&f, m)
            .into_iter()
            .map(|r| (r.stmt, r.seq, r.same_len))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn clamps_of_the_index_are_found_with_their_offsets() {
        let mut want = Vec::new();
        let (f, m) = program(|f, i, _n, last, _x, _y, b| {
            let one = f.new_var("one", Type::usize(), Span::NONE);
            let w = f.params[2];
            let mx = f.new_var("mx", Type::usize(), Span::NONE);
            let west = f.new_var("west", Type::usize(), Span::NONE);
            let ipw = f.new_var("ipw", Type::usize(), Span::NONE);
            let south = f.new_var("south", Type::usize(), Span::NONE);
            let here = f.new_var("here", Type::usize(), Span::NONE);
            let two = f.new_var("two", Type::usize(), Span::NONE);
            let bad = f.new_var("bad", Type::usize(), Span::NONE);
            b.push(stmt(one, Expr::Const(Const::Int(1))));
            b.push(stmt(two, Expr::Const(Const::Int(2))));
            b.push(stmt(mx, Expr::Math(MathFn::Max, vec![i, one])));
            b.push(stmt(west, Expr::Binary(BinOp::Sub, mx, one)));
            b.push(stmt(ipw, Expr::Binary(BinOp::Add, w, i)));
            b.push(stmt(south, Expr::Math(MathFn::Min, vec![last, ipw])));
            b.push(stmt(here, Expr::Math(MathFn::Min, vec![i, last])));
            // max(i, 1) - 2 is not a clamp of the form max(i, c) - c.
            b.push(stmt(bad, Expr::Binary(BinOp::Sub, mx, two)));
            want = vec![
                Clamp::Low {
                    stmt: west,
                    c: Outer::Const(1),
                },
                Clamp::High {
                    stmt: south,
                    x: ipw,
                    c: Some(Outer::Var(w)),
                },
                Clamp::High {
                    stmt: here,
                    x: i,
                    c: None,
                },
            ];
        });
        assert_eq!(clamps(&f, m), want);
    }

    #[test]
    fn unclamped_indices_are_not_bounded() {
        let (f, m) = program(|f, i, n, _last, x, _y, b| {
            let one = f.new_var("one", Type::usize(), Span::NONE);
            let two = f.new_var("two", Type::usize(), Span::NONE);
            let ip1 = f.new_var("ip1", Type::usize(), Span::NONE);
            let mx = f.new_var("mx", Type::usize(), Span::NONE);
            let off = f.new_var("off", Type::usize(), Span::NONE);
            let nm2 = f.new_var("nm2", Type::usize(), Span::NONE);
            b.push(stmt(one, Expr::Const(Const::Int(1))));
            b.push(stmt(two, Expr::Const(Const::Int(2))));
            // i + 1, max(i, 1) - 2 (may wrap), n - 2 (may wrap below zero... or not, but
            // unproven), max(i, n) (may equal n).
            b.push(stmt(ip1, Expr::Binary(BinOp::Add, i, one)));
            b.push(stmt(mx, Expr::Math(MathFn::Max, vec![i, one])));
            b.push(stmt(off, Expr::Binary(BinOp::Sub, mx, two)));
            b.push(stmt(nm2, Expr::Binary(BinOp::Sub, n, two)));
            for k in [ip1, off, nm2, mx] {
                read(f, x, k, b);
            }
        });
        assert_eq!(bounded_reads(&f, m), vec![]);
    }
}
