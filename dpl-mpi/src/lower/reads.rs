//! How a loop's reads of distributed sequences are served (the classification of the
//! module docs of [`lower`](super)): the analysis of each read's index (offsets from the
//! loop index, invariance, the statements that compute it), and the rewriting of the
//! loop's lambdas with what must be fetched before the loop.

use super::{Comm, Kind, Lower, is_rows};
use dpl_core::ir::*;
use std::collections::{HashMap, HashSet};

/// How a read of a distributed sequence inside a loop is served.
#[derive(Clone, Debug)]
enum Access {
    /// `x[k]`.
    Local,
    /// Within `i - lo ..= i + hi`.
    Window(Sym, Sym),
    /// The index does not depend on the loop.
    Invariant,
    /// The index is computed by these statements of the element function's top block
    /// (positions, in order).
    Gather(Vec<usize>),
    /// `x[c]` with `c` a value of a row of the nested parameter (the first field) that the
    /// loop reads at its own index (`x[cols[i][k]]`): read from a copy of `x` that holds
    /// the elements those rows name.
    Indexed(VarId),
    /// Read from the all-gathered copy.
    Full,
}

/// `k + sum(vars)`: a bound on a distance from the loop index; the variables are
/// non-negative `usize` values defined outside the loop.
#[derive(Clone, Debug, PartialEq)]
struct Sym {
    k: i64,
    vars: Vec<VarId>,
}

impl Sym {
    fn int(k: i64) -> Sym {
        Sym {
            k,
            vars: Vec::new(),
        }
    }
    fn var(v: VarId) -> Sym {
        Sym {
            k: 0,
            vars: vec![v],
        }
    }
    fn plus(&self, d: &Sym) -> Sym {
        let mut vars = self.vars.clone();
        vars.extend(&d.vars);
        Sym {
            k: self.k + d.k,
            vars,
        }
    }
    /// `self - d`: `d`'s variables cancel those of `self`; the others are dropped, which
    /// rounds up (a bound that stays valid, since they are non-negative).
    fn minus(&self, d: &Sym) -> Sym {
        let mut vars = self.vars.clone();
        for v in &d.vars {
            if let Some(p) = vars.iter().position(|w| w == v) {
                vars.remove(p);
            }
        }
        Sym {
            k: self.k - d.k,
            vars,
        }
    }
    /// An upper bound of `max(self, other)`.
    fn max(&self, other: &Sym) -> Sym {
        if self.vars.is_empty() && other.vars.is_empty() {
            return Sym::int(self.k.max(other.k));
        }
        if self.vars == other.vars {
            return Sym {
                k: self.k.max(other.k),
                vars: self.vars.clone(),
            };
        }
        let mut vars = self.vars.clone();
        vars.extend(&other.vars);
        Sym {
            k: self.k.max(0) + other.k.max(0),
            vars,
        }
    }
    /// An upper bound of `min(self, other)`.
    fn min(&self, other: &Sym) -> Sym {
        if self.vars.is_empty() && other.vars.is_empty() {
            Sym::int(self.k.min(other.k))
        } else if other.vars.is_empty() {
            other.clone()
        } else {
            self.clone()
        }
    }
}

/// What a loop's lowering needs to know about the loop.
#[derive(Clone, Copy)]
pub(super) struct Loop {
    /// The old index (now `k + off`).
    pub(super) i: VarId,
    /// The new index over the rank's block.
    pub(super) k: VarId,
    /// The loop's layout.
    pub(super) lay: VarId,
    /// The rank's offset in it.
    pub(super) off: VarId,
    /// The loop's global length.
    pub(super) n: VarId,
    /// A variable equal to `i` (a predicate's parameter when the elements are indices).
    pub(super) alias: Option<VarId>,
}

/// One read of a distributed sequence inside a loop.
#[derive(Clone, Debug)]
struct Read {
    /// The statement that reads.
    stmt: VarId,
    x: VarId,
    index: VarId,
    checked: Option<Origin>,
    /// The statement is directly in the element function's block (runs for every element).
    top: bool,
}

impl Lower {
    /// Rewrites the reads of distributed sequences in a lambda body of the loop `lp`
    /// (`elem`: the element function, whose top block runs for every element), adding
    /// what must be fetched before the loop to `out`.
    ///
    /// `params` are the lambda's own parameters (they vary); `alias`, one that equals the
    /// loop index.
    pub(super) fn rewrite(
        &mut self,
        body: Block,
        lp: &Loop,
        params: &[VarId],
        alias: Option<VarId>,
        elem: bool,
        out: &mut Vec<Stmt>,
    ) -> Result<Block, String> {
        // What each statement of the body (at any depth) defines; parameters of lambdas
        // inside it (inner indices), the variables of loops inside it and the loop index
        // vary like statements.
        let mut defs: HashMap<VarId, Expr> = HashMap::new();
        body.walk(&mut |s| {
            defs.insert(s.var, s.expr.clone());
            s.expr.for_each_lambda(&mut |l| {
                for &p in &l.params {
                    defs.insert(p, Expr::Var(p));
                }
            });
            if let Expr::Loop(l) = &s.expr {
                for &p in &l.params {
                    defs.insert(p, Expr::Var(p));
                }
            }
        });
        defs.insert(lp.i, Expr::Var(lp.i));
        for &p in params {
            defs.insert(p, Expr::Var(p));
        }
        let lp = &Loop { alias, ..*lp };
        let top: HashMap<VarId, usize> = body
            .stmts
            .iter()
            .enumerate()
            .map(|(p, s)| (s.var, p))
            .collect();
        let mut reads = Vec::new();
        // Statements that use a distributed sequence whole (the destination of a nested
        // `scatter`, ...): they read the all-gathered copy.
        let mut whole: Vec<(VarId, VarId)> = Vec::new();
        self.collect_reads(&body, true, &mut reads, &mut whole);
        let mut access: HashMap<VarId, Access> = HashMap::new();
        for r in &reads {
            let lay_x = self.dist(r.x).unwrap_or(r.x);
            let a = if elem && r.index == lp.i && lay_x == lp.lay {
                Access::Local
            } else if let Some((lo, hi)) = (elem || alias.is_some())
                .then(|| self.offset(r.index, lp, &defs))
                .flatten()
            {
                Access::Window(lo, hi)
            } else if self.invariant(r.index, &defs)
                && (r.top || r.checked.is_none())
                && !is_rows(&self.f.vars[r.x].ty)
            {
                Access::Invariant
            } else if let Some(slice) = (elem && r.top && !is_rows(&self.f.vars[r.x].ty))
                .then(|| self.slice(r.index, lp, &defs, &top, &body, r.stmt))
                .flatten()
            {
                Access::Gather(slice)
            } else if let Some(&p) = self.row_reads.get(&r.stmt).filter(|&&p| {
                elem && !is_rows(&self.f.vars[r.x].ty)
                    && reads.iter().filter(|q| q.x == p).all(|q| q.index == lp.i)
            }) {
                Access::Indexed(p)
            } else {
                Access::Full
            };
            access.insert(r.stmt, a);
        }
        // Per sequence: all-gathered if any read needs it; one window for all the others.
        let mut replace: HashMap<VarId, Vec<Stmt>> = HashMap::new();
        let mut windows: HashMap<VarId, (VarId, VarId)> = HashMap::new();
        let mut fulls: HashMap<VarId, VarId> = HashMap::new();
        let mut gathered: Vec<VarId> = Vec::new();
        let full_of: HashSet<VarId> = reads
            .iter()
            .filter(|r| matches!(access[&r.stmt], Access::Full))
            .map(|r| r.x)
            .collect();
        // Reads of copies indexed by rows come last: they use the rows' window, if any.
        let mut ordered: Vec<&Read> = reads.iter().collect();
        ordered.sort_by_key(|r| matches!(access[&r.stmt], Access::Indexed(_)));
        let mut indexed: HashMap<VarId, VarId> = HashMap::new();
        for r in ordered {
            let lay_x = self.dist(r.x).unwrap_or(r.x);
            if full_of.contains(&r.x) && !matches!(access[&r.stmt], Access::Local) {
                let full = match fulls.get(&r.x) {
                    Some(&f) => f,
                    None => {
                        let f = self.full(out, r.x, lay_x);
                        fulls.insert(r.x, f);
                        f
                    }
                };
                let why = if elem {
                    "read at positions the loop cannot tell in advance"
                } else {
                    "read inside an operator or predicate"
                };
                self.note(r.x, why);
                replace.insert(
                    r.stmt,
                    vec![Stmt {
                        var: r.stmt,
                        expr: Expr::Index {
                            seq: full,
                            index: r.index,
                            checked: r.checked,
                        },
                        span: Span::NONE,
                    }],
                );
                continue;
            }
            match access[&r.stmt].clone() {
                Access::Local => {
                    replace.insert(
                        r.stmt,
                        vec![Stmt {
                            var: r.stmt,
                            expr: Expr::Index {
                                seq: r.x,
                                index: lp.k,
                                checked: None,
                            },
                            span: Span::NONE,
                        }],
                    );
                }
                Access::Window(..) => {
                    let (w, ws) = match windows.get(&r.x) {
                        Some(&w) => w,
                        None => {
                            let (mut los, mut his): (Vec<Sym>, Vec<Sym>) = (Vec::new(), Vec::new());
                            for q in reads.iter().filter(|q| q.x == r.x) {
                                if let Access::Window(lo, hi) = &access[&q.stmt] {
                                    if !los.contains(lo) {
                                        los.push(lo.clone());
                                    }
                                    if !his.contains(hi) {
                                        his.push(hi.clone());
                                    }
                                }
                            }
                            let w = self.window(out, r.x, lay_x, lp, &los, &his);
                            windows.insert(r.x, w);
                            w
                        }
                    };
                    let mut stmts = Vec::new();
                    if let Some(origin) = r.checked.filter(|_| !self.proven.contains(&r.stmt)) {
                        let n_x = self.glen(out, lay_x);
                        let c = self.new_var("check", Type::unit());
                        stmts.push(Stmt {
                            var: c,
                            expr: Expr::Assert(Assertion::InBounds {
                                origin,
                                index: r.index,
                                len: n_x,
                            }),
                            span: Span::NONE,
                        });
                    }
                    let p = self.new_var("at", Type::usize());
                    stmts.push(Stmt {
                        var: p,
                        expr: Expr::Binary(BinOp::Sub, r.index, ws),
                        span: Span::NONE,
                    });
                    stmts.push(Stmt {
                        var: r.stmt,
                        expr: Expr::Index {
                            seq: w,
                            index: p,
                            checked: None,
                        },
                        span: Span::NONE,
                    });
                    replace.insert(r.stmt, stmts);
                }
                Access::Invariant => {
                    let index = match defs.get(&r.index) {
                        Some(Expr::Const(c)) => {
                            let ty = self.f.vars[r.index].ty.clone();
                            self.push(out, "c", ty, Expr::Const(*c))
                        }
                        _ => r.index,
                    };
                    let ty = self.f.vars[r.stmt].ty.clone();
                    let origin = r.checked.unwrap_or(Origin::Index);
                    let e = self.comm(
                        out,
                        "elem",
                        ty,
                        Comm::Element {
                            x: r.x,
                            lay: lay_x,
                            index,
                            origin,
                            needed: Some(lp.n),
                        },
                        vec![r.x, lay_x, index, lp.n],
                        Span::NONE,
                    );
                    replace.insert(
                        r.stmt,
                        vec![Stmt {
                            var: r.stmt,
                            expr: Expr::Var(e),
                            span: Span::NONE,
                        }],
                    );
                }
                Access::Gather(slice) => {
                    let g = self.gather(out, r, lay_x, lp, &body, &slice)?;
                    gathered.push(g);
                    replace.insert(
                        r.stmt,
                        vec![Stmt {
                            var: r.stmt,
                            expr: Expr::Index {
                                seq: g,
                                index: lp.k,
                                checked: None,
                            },
                            span: Span::NONE,
                        }],
                    );
                }
                Access::Indexed(p) => {
                    let copy = match indexed.get(&r.x) {
                        Some(&c) => c,
                        None => {
                            let rows = windows.get(&p).map_or(p, |w| w.0);
                            let ty = self.f.vars[r.x].ty.clone();
                            let name = format!("{}_needed", self.f.vars[r.x].name);
                            let c = self.comm(
                                out,
                                &name,
                                ty,
                                Comm::Indexed {
                                    x: r.x,
                                    lay: lay_x,
                                    rows,
                                },
                                vec![r.x, lay_x, rows],
                                Span::NONE,
                            );
                            self.kinds.insert(c, Kind::Repl);
                            indexed.insert(r.x, c);
                            c
                        }
                    };
                    replace.insert(
                        r.stmt,
                        vec![Stmt {
                            var: r.stmt,
                            expr: Expr::Index {
                                seq: copy,
                                index: r.index,
                                checked: r.checked,
                            },
                            span: Span::NONE,
                        }],
                    );
                }
                Access::Full => unreachable!("handled above"),
            }
        }
        // `len(x)` of a distributed `x` is its global length.
        let mut lens: HashMap<VarId, VarId> = HashMap::new();
        body.walk(&mut |s| {
            if let Expr::Len(x) = s.expr {
                lens.insert(s.var, x);
            }
        });
        for (v, x) in lens {
            if let Some(lay) = self.dist(x) {
                let n = self.glen(out, lay);
                replace.insert(
                    v,
                    vec![Stmt {
                        var: v,
                        expr: Expr::Var(n),
                        span: Span::NONE,
                    }],
                );
            }
        }
        let mut body = apply(body, &replace);
        self.drop_dead_gathers(&mut body, &gathered, out);
        let mut renames: HashMap<(VarId, VarId), VarId> = HashMap::new();
        for &(stmt, x) in &whole {
            let lay = self.dist(x).unwrap_or(x);
            let full = self.full(out, x, lay);
            self.note(x, "used whole inside an element function");
            renames.insert((stmt, x), full);
        }
        if !renames.is_empty() {
            rename_whole(&mut body, &renames);
        }
        Ok(body)
    }

    /// Removes the gathers of this loop whose elements nothing reads any more: a read whose
    /// only use was as the index of another gathered read (`x[idx[i]]`: `idx[i]` is
    /// computed again by the loop that computes the indices for `x`), with its now unused
    /// read in `body`, its gather and the loop of its indices in `out`.
    fn drop_dead_gathers(&mut self, body: &mut Block, gathered: &[VarId], out: &mut Vec<Stmt>) {
        loop {
            let used = uses(body);
            let before = body.stmts.len();
            body.stmts.retain(|s| {
                used.contains(&s.var)
                    || !matches!(s.expr, Expr::Index { seq, checked: None, .. } if gathered.contains(&seq))
            });
            if body.stmts.len() == before {
                break;
            }
        }
        let used = uses(body);
        let dead: Vec<VarId> = gathered
            .iter()
            .copied()
            .filter(|g| !used.contains(g))
            .collect();
        for g in dead {
            let Some(Comm::Gather { req, .. }) = self.comms.remove(&g) else {
                continue;
            };
            out.retain(|s| s.var != g && s.var != req);
        }
    }

    /// Every read (and other use) of a distributed sequence in `b`.
    fn collect_reads(
        &self,
        b: &Block,
        top: bool,
        out: &mut Vec<Read>,
        whole: &mut Vec<(VarId, VarId)>,
    ) {
        for s in &b.stmts {
            match &s.expr {
                Expr::Index {
                    seq,
                    index,
                    checked,
                } if self.dist(*seq).is_some() => out.push(Read {
                    stmt: s.var,
                    x: *seq,
                    index: *index,
                    checked: *checked,
                    top,
                }),
                Expr::Len(_) => {}
                e => whole.extend(
                    e.operands()
                        .into_iter()
                        .filter(|v| self.dist(*v).is_some())
                        .map(|x| (s.var, x)),
                ),
            }
            s.expr
                .for_each_block(&mut |blk| self.collect_reads(blk, false, out, whole));
        }
    }

    /// Whether `v` does not depend on the loop: defined outside the lambda, or a constant.
    fn invariant(&self, v: VarId, defs: &HashMap<VarId, Expr>) -> bool {
        match defs.get(&v) {
            None => true,
            Some(Expr::Const(_)) => true,
            Some(_) => false,
        }
    }

    /// A non-negative loop-invariant `usize` distance: a constant or a variable of the
    /// top level.
    fn distance(&self, v: VarId, defs: &HashMap<VarId, Expr>) -> Option<Sym> {
        if self.f.vars[v].ty != Type::usize() {
            return None;
        }
        match defs.get(&v) {
            Some(Expr::Const(Const::Int(c))) => i64::try_from(*c).ok().map(Sym::int),
            None => Some(Sym::var(v)),
            _ => None,
        }
    }

    /// Bounds `(lo, hi)` with `i - lo <= v <= i + hi`, where known (see the module docs).
    fn offset(&self, v: VarId, lp: &Loop, defs: &HashMap<VarId, Expr>) -> Option<(Sym, Sym)> {
        let (lo, hi) = self.bounds_of(v, lp, defs, 0);
        Some((lo?.max(&Sym::int(0)), hi?.max(&Sym::int(0))))
    }

    fn bounds_of(
        &self,
        v: VarId,
        lp: &Loop,
        defs: &HashMap<VarId, Expr>,
        depth: usize,
    ) -> (Option<Sym>, Option<Sym>) {
        if v == lp.i || Some(v) == lp.alias {
            return (Some(Sym::int(0)), Some(Sym::int(0)));
        }
        if depth > 32 || self.f.vars[v].ty != Type::usize() {
            return (None, None);
        }
        let rec = |w: VarId| self.bounds_of(w, lp, defs, depth + 1);
        match defs.get(&v) {
            // The loop's length (and one less): at least `i`.
            None if v == lp.n => (Some(Sym::int(0)), None),
            // A non-negative scalar of the top level: at most `i + v`.
            None => (None, self.distance(v, defs)),
            Some(Expr::Const(Const::Int(c))) => (
                None,
                i64::try_from(*c).ok().filter(|c| *c >= 0).map(Sym::int),
            ),
            Some(Expr::Var(w)) | Some(Expr::Cast(w, Scalar::Usize)) => rec(*w),
            Some(Expr::Binary(BinOp::Add, a, b)) => {
                let (x, d) = match (self.distance(*b, defs), self.distance(*a, defs)) {
                    (Some(d), _) => (*a, d),
                    (None, Some(d)) => (*b, d),
                    _ => return (None, None),
                };
                let (lo, hi) = rec(x);
                (lo.map(|l| l.minus(&d)), hi.map(|h| h.plus(&d)))
            }
            Some(Expr::Binary(BinOp::Sub, a, b)) => {
                if *a == lp.n {
                    // `n - d`: below `n`, so at least `i` when `d` is 1 (`n - 1`).
                    return match defs.get(b) {
                        Some(Expr::Const(Const::Int(1))) => (Some(Sym::int(0)), None),
                        _ => (None, None),
                    };
                }
                let Some(d) = self.distance(*b, defs) else {
                    return (None, None);
                };
                let (lo, hi) = rec(*a);
                (lo.map(|l| l.plus(&d)), hi.map(|h| h.minus(&d)))
            }
            Some(Expr::Math(MathFn::Min, args)) if args.len() == 2 => {
                let ((la, ha), (lb, hb)) = (rec(args[0]), rec(args[1]));
                let lo = match (la, lb) {
                    (Some(a), Some(b)) => Some(a.max(&b)),
                    _ => None,
                };
                let hi = match (ha, hb) {
                    (Some(a), Some(b)) => Some(a.min(&b)),
                    (a, b) => a.or(b),
                };
                (lo, hi)
            }
            Some(Expr::Math(MathFn::Max, args)) if args.len() == 2 => {
                let ((la, ha), (lb, hb)) = (rec(args[0]), rec(args[1]));
                let lo = match (la, lb) {
                    (Some(a), Some(b)) => Some(a.min(&b)),
                    (a, b) => a.or(b),
                };
                let hi = match (ha, hb) {
                    (Some(a), Some(b)) => Some(a.max(&b)),
                    _ => None,
                };
                (lo, hi)
            }
            _ => (None, None),
        }
    }

    /// The statements of the element function's top block (positions, in order) that
    /// compute `index` for the read `at`, when they are plain (no loop, no block) and all
    /// come before it: a loop of their own can then compute every element's index.
    fn slice(
        &self,
        index: VarId,
        lp: &Loop,
        defs: &HashMap<VarId, Expr>,
        top: &HashMap<VarId, usize>,
        body: &Block,
        at: VarId,
    ) -> Option<Vec<usize>> {
        let limit = *top.get(&at)?;
        let mut need = vec![index];
        let mut keep = HashSet::new();
        while let Some(v) = need.pop() {
            if v == lp.i || !defs.contains_key(&v) {
                continue;
            }
            let p = *top.get(&v)?;
            if p >= limit || !keep.insert(p) {
                continue;
            }
            let s = &body.stmts[p];
            let mut nested = false;
            s.expr.for_each_block(&mut |_| nested = true);
            if nested || matches!(s.expr, Expr::Soac(_) | Expr::Prim { .. } | Expr::Assert(_)) {
                return None;
            }
            need.extend(s.expr.operands());
        }
        let mut keep: Vec<usize> = keep.into_iter().collect();
        keep.sort_unstable();
        Some(keep)
    }

    /// The window of `x` for the loop `lp` (`lo`/`hi` distances): the window variable and
    /// its global start.
    fn window(
        &mut self,
        out: &mut Vec<Stmt>,
        x: VarId,
        lay_x: VarId,
        lp: &Loop,
        lo: &[Sym],
        hi: &[Sym],
    ) -> (VarId, VarId) {
        let lo_v = self.materialize_max(out, lo);
        let hi_v = self.materialize_max(out, hi);
        let t = self.push(
            out,
            "t",
            Type::usize(),
            Expr::Math(MathFn::Max, vec![lp.off, lo_v]),
        );
        let ws = self.push(out, "ws", Type::usize(), Expr::Binary(BinOp::Sub, t, lo_v));
        let ty = self.f.vars[x].ty.clone();
        let name = format!("{}_win", self.f.vars[x].name);
        let w = self.comm(
            out,
            &name,
            ty,
            Comm::Window {
                x,
                lay_x,
                lay_t: lp.lay,
                lo: lo_v,
                hi: hi_v,
            },
            vec![x, lay_x, lp.lay, lo_v, hi_v],
            Span::NONE,
        );
        (w, ws)
    }

    /// A `usize` variable holding the largest of the values of `syms` (at least 0): the
    /// constants folded, the others compared at run time.
    fn materialize_max(&mut self, out: &mut Vec<Stmt>, syms: &[Sym]) -> VarId {
        let konst = syms
            .iter()
            .filter(|s| s.vars.is_empty())
            .map(|s| s.k)
            .max()
            .unwrap_or(0);
        let mut v = self.materialize(out, &Sym::int(konst));
        for s in syms.iter().filter(|s| !s.vars.is_empty()) {
            let w = self.materialize(out, s);
            v = self.push(out, "d", Type::usize(), Expr::Math(MathFn::Max, vec![v, w]));
        }
        v
    }

    /// A `usize` variable holding the value of `s` (at least 0).
    fn materialize(&mut self, out: &mut Vec<Stmt>, s: &Sym) -> VarId {
        let k = s.k.max(0) as i128;
        let mut v = self.push(out, "d", Type::usize(), Expr::Const(Const::Int(k)));
        for &w in &s.vars {
            v = self.push(out, "d", Type::usize(), Expr::Binary(BinOp::Add, v, w));
        }
        v
    }

    /// A gather for the read `r`: a loop computing the indices (the statements `slice` of
    /// `body`, copied), then the gather itself. Returns the gathered sequence.
    fn gather(
        &mut self,
        out: &mut Vec<Stmt>,
        r: &Read,
        lay_x: VarId,
        lp: &Loop,
        body: &Block,
        slice: &[usize],
    ) -> Result<VarId, String> {
        let mut map = HashMap::new();
        let i2 = self.new_var("i", Type::usize());
        map.insert(lp.i, i2);
        let mut stmts = Vec::new();
        for &p in slice {
            let s = &body.stmts[p];
            let ty = self.f.vars[s.var].ty.clone();
            let name = self.f.vars[s.var].name.clone();
            let v = self.f.new_var(name, ty, s.span);
            let mut e = s.expr.clone();
            for op in dpl_core::captures::operands_mut(&mut e) {
                if let Some(&w) = map.get(op) {
                    *op = w;
                }
            }
            map.insert(s.var, v);
            stmts.push(Stmt {
                var: v,
                expr: e,
                span: s.span,
            });
        }
        let result = map.get(&r.index).copied().unwrap_or(r.index);
        let idx_ty = self.f.vars[r.index].ty.clone();
        let req = self.new_var("req", Type::seq(idx_ty));
        let soac = Soac {
            kind: SoacKind::Map,
            len: lp.n,
            elem: Lambda {
                params: vec![i2],
                captures: Vec::new(),
                body: Block { stmts, result },
            },
        };
        self.soac(req, Span::NONE, soac, out, Some(lp.lay))?;
        self.kinds.remove(&req);
        let ty = Type::seq(self.f.vars[r.stmt].ty.clone());
        let origin = r.checked.unwrap_or(Origin::Prim(Prim::Gather));
        let name = format!("{}_gathered", self.f.vars[r.x].name);
        Ok(self.comm(
            out,
            &name,
            ty,
            Comm::Gather {
                x: r.x,
                lay: lay_x,
                req,
                origin,
            },
            vec![r.x, lay_x, req],
            Span::NONE,
        ))
    }
}

/// Every variable `b` reads (operands and results, nested blocks included).
fn uses(b: &Block) -> HashSet<VarId> {
    let mut out = HashSet::new();
    fn go(b: &Block, out: &mut HashSet<VarId>) {
        out.insert(b.result);
        for s in &b.stmts {
            out.extend(s.expr.operands());
            s.expr.for_each_block(&mut |blk| go(blk, out));
        }
    }
    go(b, &mut out);
    out
}

/// Renames, in the statements `(statement, x)` of `renames` (at any depth), the operand `x`
/// to its replacement.
fn rename_whole(b: &mut Block, renames: &HashMap<(VarId, VarId), VarId>) {
    for s in &mut b.stmts {
        let var = s.var;
        for op in dpl_core::captures::operands_mut(&mut s.expr) {
            if let Some(&to) = renames.get(&(var, *op)) {
                *op = to;
            }
        }
        dpl_core::captures::for_each_block_mut(&mut s.expr, &mut |blk, kind| match kind {
            dpl_core::captures::BlockKind::Branch => rename_whole(blk, renames),
            dpl_core::captures::BlockKind::Lambda(l) => rename_whole(&mut l.body, renames),
        });
    }
}

/// `b` with the statements in `replace` (by variable) replaced, at any depth.
fn apply(b: Block, replace: &HashMap<VarId, Vec<Stmt>>) -> Block {
    let mut stmts = Vec::with_capacity(b.stmts.len());
    for mut s in b.stmts {
        if let Some(r) = replace.get(&s.var) {
            stmts.extend(r.iter().cloned());
            continue;
        }
        dpl_core::captures::for_each_block_mut(&mut s.expr, &mut |blk, kind| {
            let target = match kind {
                dpl_core::captures::BlockKind::Branch => blk,
                dpl_core::captures::BlockKind::Lambda(l) => &mut l.body,
            };
            let inner = std::mem::replace(
                target,
                Block {
                    stmts: Vec::new(),
                    result: target.result,
                },
            );
            *target = apply(inner, replace);
        });
        stmts.push(s);
    }
    Block {
        stmts,
        result: b.result,
    }
}
