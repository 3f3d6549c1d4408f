//! Closure conversion bookkeeping: recomputing [`Lambda::captures`] after a pass has moved
//! code between lambdas, plus mutable traversal helpers shared by the passes.

use crate::ir::*;
use std::collections::HashSet;

/// Recomputes the capture list of every lambda of `f` (first-use order).
pub fn fix_captures(f: &mut Function) {
    let mut defined: HashSet<VarId> = f.params.iter().copied().collect();
    let mut free = Vec::new();
    walk_block(&mut f.body, &mut defined, &mut free);
}

fn fix_lambda(l: &mut Lambda, outer_defined: &HashSet<VarId>) -> Vec<VarId> {
    let mut defined: HashSet<VarId> = l.params.iter().copied().collect();
    let mut free = Vec::new();
    walk_block(&mut l.body, &mut defined, &mut free);
    let _ = outer_defined;
    l.captures = free.clone();
    free
}

fn walk_block(b: &mut Block, defined: &mut HashSet<VarId>, free: &mut Vec<VarId>) {
    let use_var = |v: VarId, defined: &HashSet<VarId>, free: &mut Vec<VarId>| {
        if !defined.contains(&v) && !free.contains(&v) {
            free.push(v);
        }
    };
    for s in &mut b.stmts {
        for v in s.expr.operands() {
            use_var(v, defined, free);
        }
        let mut inner_free = Vec::new();
        if let Expr::Loop(l) = &s.expr {
            defined.extend(l.params.iter().copied());
        }
        for_each_block_mut(&mut s.expr, &mut |blk, kind| match kind {
            BlockKind::Branch => walk_block(blk, defined, &mut inner_free),
            BlockKind::Lambda(l) => {
                let caps = fix_lambda(l, defined);
                inner_free.extend(caps);
            }
        });
        for v in inner_free {
            use_var(v, defined, free);
        }
        defined.insert(s.var);
    }
    use_var(b.result, defined, free);
}

/// A block found inside an expression: a branch of an `if` or a block of a loop (shares
/// the enclosing scope; a loop's blocks also see its params) or the body of a lambda
/// (handed over whole, so its parameters can be seen).
pub enum BlockKind<'a> {
    /// A branch of [`Expr::If`] or a block of [`Expr::Loop`]; the caller gets the block
    /// itself.
    Branch,
    /// A lambda; the block argument is a dummy and the lambda is given here.
    Lambda(&'a mut Lambda),
}

/// Calls `f` for each block directly inside `e`: `(block, Branch)` for `if` branches and
/// `(dummy, Lambda(l))` for lambdas.
pub fn for_each_block_mut(e: &mut Expr, f: &mut impl FnMut(&mut Block, BlockKind<'_>)) {
    let mut dummy = Block {
        stmts: Vec::new(),
        result: Handle::new(0),
    };
    match e {
        Expr::If(_, a, b) => {
            f(a, BlockKind::Branch);
            f(b, BlockKind::Branch);
        }
        Expr::Loop(l) => {
            f(&mut l.cond, BlockKind::Branch);
            f(&mut l.body, BlockKind::Branch);
        }
        Expr::Prim { lambdas, .. } => {
            for l in lambdas {
                f(&mut dummy, BlockKind::Lambda(l));
            }
        }
        Expr::Soac(s) => {
            f(&mut dummy, BlockKind::Lambda(&mut s.elem));
            for l in lambdas_mut(&mut s.kind) {
                f(&mut dummy, BlockKind::Lambda(l));
            }
        }
        _ => {}
    }
}

/// The operator / predicate lambdas of a [`SoacKind`], mutably.
pub fn lambdas_mut(k: &mut SoacKind) -> Vec<&mut Lambda> {
    match k {
        SoacKind::Reduce { op, .. }
        | SoacKind::Scan { op }
        | SoacKind::ExclusiveScan { op, .. }
        | SoacKind::ScatterReduce { op, .. } => vec![op],
        SoacKind::Filter { pred } => vec![pred],
        SoacKind::Map
        | SoacKind::Scatter { .. }
        | SoacKind::Permute
        | SoacKind::Sort
        | SoacKind::SortByKey => vec![],
    }
}

/// Calls `f` on every block of `b`, `b` included, innermost last (pre-order), mutably:
/// branches of `if` and lambda bodies alike.
pub fn visit_blocks_mut(b: &mut Block, f: &mut impl FnMut(&mut Block)) {
    f(b);
    for s in &mut b.stmts {
        match &mut s.expr {
            Expr::If(_, x, y) => {
                visit_blocks_mut(x, f);
                visit_blocks_mut(y, f);
            }
            Expr::Loop(l) => {
                visit_blocks_mut(&mut l.cond, f);
                visit_blocks_mut(&mut l.body, f);
            }
            Expr::Prim { lambdas, .. } => {
                for l in lambdas {
                    visit_blocks_mut(&mut l.body, f);
                }
            }
            Expr::Soac(soac) => {
                visit_blocks_mut(&mut soac.elem.body, f);
                for l in lambdas_mut(&mut soac.kind) {
                    visit_blocks_mut(&mut l.body, f);
                }
            }
            _ => {}
        }
    }
}

/// The operand slots of an expression (the variables it reads directly), mutably; the same
/// slots, in the same order, as [`Expr::operands`].
pub fn operands_mut(e: &mut Expr) -> Vec<&mut VarId> {
    match e {
        Expr::Const(_) => vec![],
        Expr::Var(v) | Expr::Unary(_, v) | Expr::Cast(v, _) | Expr::Field(v, _) | Expr::Len(v) => {
            vec![v]
        }
        Expr::Binary(_, a, b) => vec![a, b],
        Expr::Tuple(vs) | Expr::Math(_, vs) => vs.iter_mut().collect(),
        Expr::If(c, _, _) => vec![c],
        Expr::Loop(l) => l.inits.iter_mut().collect(),
        Expr::Index { seq, index, .. } => vec![seq, index],
        Expr::Prim { args, .. } => args.iter_mut().collect(),
        Expr::Soac(s) => {
            let Soac { kind, len, .. } = &mut **s;
            let mut v = vec![len];
            match kind {
                SoacKind::Reduce { init: Some(i), .. }
                | SoacKind::ExclusiveScan { init: i, .. } => v.push(i),
                SoacKind::Scatter { dst } | SoacKind::ScatterReduce { dst, .. } => v.push(dst),
                _ => {}
            }
            v
        }
        Expr::Assert(a) => match a {
            Assertion::EqLen { a, b, .. } => vec![a, b],
            Assertion::IndicesInRange { idx, len, .. } => vec![idx, len],
            Assertion::InBounds { index, len, .. } => vec![index, len],
            Assertion::NonEmpty { len, .. } => vec![len],
        },
    }
}

/// Replaces every use of a variable (operands and block results, in every nested block)
/// by its image under `map`. Definitions are left alone.
pub fn rename_uses(b: &mut Block, map: &std::collections::HashMap<VarId, VarId>) {
    let resolve = |v: VarId| {
        let mut v = v;
        // Follow chains (a -> b -> c); `map` is acyclic because images are defined earlier.
        while let Some(&w) = map.get(&v) {
            v = w;
        }
        v
    };
    visit_blocks_mut(b, &mut |blk| {
        for s in &mut blk.stmts {
            for slot in operands_mut(&mut s.expr) {
                *slot = resolve(*slot);
            }
        }
        blk.result = resolve(blk.result);
    });
}
