//! Mutable variables, assignments, statements and loops.
//!
//! # `let mut` and assignment
//!
//! A `let mut` variable is a *slot* ([`Slot`]) that holds the IR variable which is its
//! current value; its name is bound to the slot ([`Binding::Mut`]). An assignment lowers
//! its right-hand side and makes that the slot's current value, so the IR stays in SSA
//! form and a read sees the last assignment before it. A closure sees the values of the
//! `mut` variables where it is written ([`Binding::Captured`]) and cannot change them.
//!
//! # Branches
//!
//! Both branches of an `if` (a statement, with or without `else`, or an expression) are
//! lowered from the same slot values; every slot that either branch changed then becomes
//! one more result of the `Expr::If` (its value is a tuple of the `if`'s own value, if any,
//! and the changed slots) and takes the field as its current value ([`Lowerer::merge_if`]).
//! Other constructs with blocks (`&&`, `||`, `match` arms, a loop's condition) cannot
//! change a `mut` variable: an assignment inside one is an error.
//!
//! # Loops
//!
//! A loop lowers to one `Expr::Loop` whose params are the slots its body assigns (found by
//! scanning its syntax first, [`Scan`]) followed by its own state; after the loop the slots
//! take the loop's outputs.
//!
//! * `for i in a..b` carries the index `i` and a flag `fin` (initially `!(a < b)`; `<=` for
//!   `a..=b`); the condition is `!fin`. At the end of each iteration `n = i + k` (`i - k`
//!   for `.rev()`, `k` the `step_by` step, 1 without) becomes the index and
//!   `fin = !(n > i && n < b)` (`<=` for `a..=b`; `n < i && n >= a` going down), which
//!   never steps past the bound even at the ends of the type (arithmetic wraps). `.rev()`
//!   starts at `b - 1` (`b` for `a..=b`). `for v in xs` over a sequence is the loop over
//!   `0..xs.len()` with `v` bound to `xs[i]` (unchecked: the condition keeps `i` in range).
//!   A literal `step_by(0)` is an error; a step of 0 computed at run time ends the loop
//!   after one iteration (Rust panics).
//! * `while c` evaluates `c` in the condition; `loop` has none.
//! * `break` sets a carried flag `broke`, which the condition tests before anything else;
//!   `continue` sets a flag `cont`, reset at the start of each iteration (not carried).
//!   After a statement that may break or continue, the rest of its block is lowered under
//!   `if !(broke || cont)`, so a `break` or `continue` may sit in `if`s at any depth (only
//!   as a statement: never inside an expression that gives a value).
//! * `break v` in a `loop`: `v` is lowered *after* the loop, in the scope of the `break`,
//!   with the slots at their final values, which are their values at the `break`. With
//!   several `break v`s a carried number `which` says which one left the loop. So `v` may
//!   read only variables declared outside the loop (its `mut` variables included). A
//!   carried break value would need an initial value, of a type only inference knows.
//!
//! Inside element functions (closures and functions given to primitives) a loop runs
//! sequentially for each element and carries scalars and tuples of them; at the top level
//! of a body it iterates whole parallel steps and may carry sequences too (checked after
//! type inference, [`crate::front::Lowered::check_loops`]). The IR is the same `Expr::Loop`
//! in both places; the backends tell them apart by where the loop is.

use dpl_core::ir::{BinOp, Block, Const, Expr, Loop, Scalar, Stmt, Type, UnOp, VarId};
use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::visit::{self, Visit};

use super::env::{Binding, Env};
use super::expr::op_name;
use super::{Lowerer, cheap_span, peel};

const NOT_A_STATEMENT: &str = "this expression has no effect: the body of a loop or of an `if` used as a statement is made of `let` bindings, assignments, `if`s and loops";

/// A `let mut` variable.
pub(super) struct Slot {
    name: String,
    /// Its current value.
    current: VarId,
    /// Its declared type (`Type::Infer` when left to inference): every value assigned gets it.
    ty: Type,
    /// Where it was last assigned (for errors).
    assigned: Option<Span>,
}

/// A loop being lowered.
pub(super) struct LoopCtx {
    /// `for`, `while` or `loop` (for errors).
    kind: &'static str,
    /// The carried `broke` flag, when the loop has a `break`.
    broke: Option<usize>,
    /// The per-iteration `cont` flag, when it has a `continue`.
    cont: Option<usize>,
    /// The carried number of the `break v` that left, when there are several.
    which: Option<usize>,
    /// The `break v`s, in order.
    breaks: Vec<BreakSite>,
    /// A `break` without a value (an error in a `loop` that also breaks with one).
    plain_break: Option<Span>,
    /// The first slot declared inside the loop.
    slot_floor: usize,
}

/// A `break v`: the value and the scope it is written in.
struct BreakSite {
    expr: syn::Expr,
    env: Env,
    items: Env,
}

/// While a `break` value is lowered after its loop: the slots and variables made inside
/// the loop, which it may not read.
pub(super) struct BreakScope {
    slots: usize,
    vars: std::ops::Range<usize>,
}

/// What a loop body does, read from its syntax before lowering it.
#[derive(Default)]
struct Scan {
    /// Names assigned (maybe shadowed: an extra carried variable is harmless).
    assigned: Vec<String>,
    breaks: bool,
    continues: bool,
    break_values: usize,
    /// Depth of loops nested inside the scanned code.
    depth: u32,
}

impl Scan {
    fn of_block(b: &syn::Block) -> Scan {
        let mut s = Scan::default();
        s.visit_block(b);
        s
    }

    /// Whether a statement of a loop body may leave the iteration (`break`, `continue`).
    fn exits(e: &syn::Expr) -> bool {
        let mut s = Scan::default();
        s.visit_expr(e);
        s.breaks || s.continues
    }

    fn target(&mut self, e: &syn::Expr) {
        match peel(e) {
            syn::Expr::Path(p) => {
                if let Some(i) = p.path.get_ident() {
                    self.assigned.push(i.unraw().to_string());
                }
            }
            syn::Expr::Tuple(t) => t.elems.iter().for_each(|e| self.target(e)),
            _ => {}
        }
    }

    fn nested(&mut self, f: impl FnOnce(&mut Self)) {
        self.depth += 1;
        f(self);
        self.depth -= 1;
    }
}

impl<'a> Visit<'a> for Scan {
    fn visit_expr_assign(&mut self, a: &'a syn::ExprAssign) {
        self.target(&a.left);
        visit::visit_expr_assign(self, a);
    }
    fn visit_expr_binary(&mut self, b: &'a syn::ExprBinary) {
        if compound_op(&b.op).is_some() {
            self.target(&b.left);
        }
        visit::visit_expr_binary(self, b);
    }
    fn visit_expr_break(&mut self, b: &'a syn::ExprBreak) {
        if self.depth == 0 && b.label.is_none() {
            self.breaks = true;
            self.break_values += usize::from(b.expr.is_some());
        }
        visit::visit_expr_break(self, b);
    }
    fn visit_expr_continue(&mut self, c: &'a syn::ExprContinue) {
        if self.depth == 0 && c.label.is_none() {
            self.continues = true;
        }
    }
    fn visit_expr_for_loop(&mut self, f: &'a syn::ExprForLoop) {
        self.visit_expr(&f.expr);
        self.nested(|s| s.visit_block(&f.body));
    }
    fn visit_expr_while(&mut self, w: &'a syn::ExprWhile) {
        self.nested(|s| visit::visit_expr_while(s, w));
    }
    fn visit_expr_loop(&mut self, l: &'a syn::ExprLoop) {
        self.nested(|s| visit::visit_expr_loop(s, l));
    }
    // A closure cannot assign, break or continue for the code around it.
    fn visit_expr_closure(&mut self, _: &'a syn::ExprClosure) {}
    fn visit_item(&mut self, _: &'a syn::Item) {}
}

/// The operator of a compound assignment (`+=` gives `+`).
pub(super) fn compound_op(op: &syn::BinOp) -> Option<BinOp> {
    use syn::BinOp as B;
    Some(match op {
        B::AddAssign(_) => BinOp::Add,
        B::SubAssign(_) => BinOp::Sub,
        B::MulAssign(_) => BinOp::Mul,
        B::DivAssign(_) => BinOp::Div,
        B::RemAssign(_) => BinOp::Rem,
        B::BitAndAssign(_) => BinOp::BitAnd,
        B::BitOrAssign(_) => BinOp::BitOr,
        B::BitXorAssign(_) => BinOp::BitXor,
        B::ShlAssign(_) => BinOp::Shl,
        B::ShrAssign(_) => BinOp::Shr,
        _ => return None,
    })
}

/// Whether an expression in statement position is lowered as a statement
/// ([`Lowerer::effect`]) rather than as a value.
pub(super) fn is_statement(e: &syn::Expr) -> bool {
    match peel(e) {
        syn::Expr::Assign(_)
        | syn::Expr::ForLoop(_)
        | syn::Expr::While(_)
        | syn::Expr::Loop(_)
        | syn::Expr::If(_)
        | syn::Expr::Break(_)
        | syn::Expr::Continue(_) => true,
        syn::Expr::Binary(b) => compound_op(&b.op).is_some(),
        _ => false,
    }
}

/// A range a `for` loop runs over.
struct Range<'e> {
    start: &'e syn::Expr,
    end: &'e syn::Expr,
    inclusive: bool,
    rev: bool,
    step: Option<&'e syn::Expr>,
}

/// Reads `a..b`, `a..=b`, `(..).rev()`, `(..).step_by(k)` and `(..).rev().step_by(k)`;
/// `None` for anything else (a sequence, whose elements the loop visits).
fn range_of(e: &syn::Expr) -> Result<Option<Range<'_>>, (Span, &'static str)> {
    const ONLY: &str = "`.rev()` and `.step_by(k)` apply to integer ranges only: `(a..b).rev()`, `(a..b).step_by(k)`; over a sequence write `for i in (0..xs.len()).rev()` and read `xs[i]`";
    let (mut e, mut step, mut rev) = (peel(e), None, false);
    if let syn::Expr::MethodCall(m) = e
        && m.method == "step_by"
        && m.args.len() == 1
    {
        step = m.args.first();
        e = peel(&m.receiver);
    }
    if let syn::Expr::MethodCall(m) = e
        && m.method == "rev"
        && m.args.is_empty()
    {
        rev = true;
        e = peel(&m.receiver);
    }
    match e {
        syn::Expr::Range(r) => match (&r.start, &r.end) {
            (Some(start), Some(end)) => Ok(Some(Range {
                start,
                end,
                inclusive: matches!(r.limits, syn::RangeLimits::Closed(_)),
                rev,
                step,
            })),
            _ => Err((
                cheap_span(e),
                "a `for` range needs both ends: `a..b` or `a..=b`",
            )),
        },
        syn::Expr::MethodCall(m) if m.method == "rev" || m.method == "step_by" => Err((
            m.method.span(),
            "`.step_by(k).rev()` is not supported: count down from the last element you want, as in `(a..=last).rev().step_by(k)`",
        )),
        _ if rev || step.is_some() => Err((cheap_span(e), ONLY)),
        _ => Ok(None),
    }
}

/// The sequence a `for` loop visits: `xs`, `&xs` or `xs.iter()`.
fn sequence_of(e: &syn::Expr) -> &syn::Expr {
    match peel(e) {
        syn::Expr::MethodCall(m) if m.method == "iter" && m.args.is_empty() => &m.receiver,
        other => other,
    }
}

impl Lowerer<'_> {
    // ----- slots -----

    /// The current value of a `mut` variable.
    pub(super) fn mut_value(&self, slot: usize) -> Option<VarId> {
        self.muts.get(slot).map(|s| s.current)
    }

    /// The current values of every slot.
    pub(super) fn mut_values(&self) -> Vec<VarId> {
        self.muts.iter().map(|s| s.current).collect()
    }

    /// Reports (and undoes) every change of the slots since `before`: the construct just
    /// lowered cannot carry one out.
    pub(super) fn keep_muts(&mut self, before: &[VarId]) {
        for (k, &v) in before.iter().enumerate() {
            let Some(s) = self.muts.get_mut(k) else { break };
            if s.current != v {
                s.current = v;
                let msg = format!(
                    "cannot assign to `{}` here: assignments are allowed as statements of a block, of an `if` and of a loop body, not inside `&&`/`||`, a `match` arm or a loop's condition",
                    s.name
                );
                let span = s.assigned.unwrap_or_else(Span::call_site);
                self.error_at(span, msg);
            }
        }
    }

    /// A new `mut` variable with initial value `v`; returns its binding.
    pub(super) fn declare_mut(&mut self, name: &str, v: VarId) -> Binding {
        let ty = self
            .vars
            .get(v.index())
            .map_or(Type::Infer, |var| var.ty.clone());
        self.muts.push(Slot {
            name: name.to_string(),
            current: v,
            ty,
            assigned: None,
        });
        Binding::Mut(self.muts.len() - 1)
    }

    /// Makes `v` (or a copy with the variable's declared type) the slot's value.
    fn set_slot(&mut self, slot: usize, v: VarId, fresh_from: usize, span: Span) {
        let Some(s) = self.muts.get(slot) else { return };
        let (name, ty) = (s.name.clone(), s.ty.clone());
        let v = self.annotate(v, ty, span);
        if v.index() >= fresh_from {
            self.rename(v, &name);
        }
        if let Some(s) = self.muts.get_mut(slot) {
            s.current = v;
            s.assigned = Some(span);
        }
    }

    /// A hidden slot (a loop's flag) with initial value `v`.
    fn hidden_slot(&mut self, name: &str, v: VarId) -> usize {
        self.declare_mut(name, v);
        self.muts.len() - 1
    }

    /// Reading `v` (the value of a name; `slot` for a `mut` variable) while a `break` value
    /// is lowered after its loop: an error for what was declared inside the loop.
    pub(super) fn check_break_read(
        &mut self,
        v: VarId,
        slot: Option<usize>,
        node: &syn::ExprPath,
    ) -> VarId {
        let inside = match (&self.break_scope, slot) {
            (None, _) => false,
            (Some(s), Some(slot)) => slot >= s.slots,
            (Some(s), None) => s.vars.contains(&v.index()),
        };
        if inside {
            return self.fail(node, "the value of a `break` can only use variables declared outside its `loop`: assign the value to a `let mut` variable declared before the loop and break with that");
        }
        v
    }

    // ----- assignments -----

    /// `*y = e;`, the new value of the `&mut` parameter `y`: once, as a statement of the
    /// function's own body. Later reads of `y` see the new value.
    fn write_param(&mut self, stmt: &syn::Expr, a: &syn::ExprAssign) {
        let Some(target) = deref_target(&a.left) else {
            return;
        };
        let name = target.unraw().to_string();
        let v = self.value(&a.right);
        let Some(k) = self.writes.iter().position(|w| w.name == name) else {
            self.error(
                &a.left,
                format!("`*{name} = ...` needs `{name}` to be a `&mut [T]`, `&mut Vec<T>` or `&mut Seq<T>` parameter of the function; for a local value, use a `let mut` variable"),
            );
            return;
        };
        let top = self.top_stmts.iter().any(|&p| std::ptr::eq(p, stmt))
            && self.fn_depth == 0
            && self.elem_depth == 0;
        if !top {
            self.writes[k].misplaced = true;
            self.error(
                &a.left,
                format!("assign `*{name}` as a statement of the function's body itself, not inside a loop, an `if` or a closure: compute the new value first (an `if` expression can choose it) and assign it once"),
            );
        } else if self.writes[k].value.is_some() {
            self.error(
                &a.left,
                format!("`*{name}` is assigned twice: compute its final value and assign it once"),
            );
        } else {
            self.writes[k].value = Some((v, a.eq_token.span));
            self.env = self.env.with(name, Binding::Value(v));
        }
    }

    /// `lhs = v`, where the variables from `fresh_from` on were made for `v`.
    fn assign_to(&mut self, lhs: &syn::Expr, v: VarId, fresh_from: usize, span: Span) {
        use syn::Expr as E;
        match peel(lhs) {
            E::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => {
                let name = p
                    .path
                    .get_ident()
                    .map(|i| i.unraw().to_string())
                    .unwrap_or_default();
                match self.env.lookup(&name).cloned() {
                    Some(Binding::Mut(slot)) => self.set_slot(slot, v, fresh_from, span),
                    Some(Binding::Value(_)) => self.error(
                        lhs,
                        format!("cannot assign twice to immutable variable `{name}`: declare it with `let mut {name}` to change it"),
                    ),
                    Some(Binding::Captured(_)) => self.error(
                        lhs,
                        format!("cannot assign to `{name}` inside a closure: a closure cannot change the variables of the code around it; return the new value from the closure instead"),
                    ),
                    Some(Binding::Callable(_)) => {
                        self.error(lhs, format!("cannot assign to `{name}`: it is a function"));
                    }
                    None => self.error(lhs, format!("cannot find `{name}` in this scope")),
                }
            }
            E::Tuple(t) => {
                for (i, e) in t.elems.iter().enumerate() {
                    if matches!(peel(e), E::Infer(_)) {
                        continue;
                    }
                    let index = u32::try_from(i).unwrap_or(u32::MAX);
                    let from = self.vars.len();
                    let f = self.emit("field", Type::Infer, Expr::Field(v, index), span);
                    self.assign_to(e, f, from, span);
                }
            }
            E::Infer(_) => {}
            E::Field(_) => self.error(
                lhs,
                "assigning to a tuple field is not supported: assign the whole tuple, as in `t = (x, t.1)`",
            ),
            E::Index(_) => self.error(
                lhs,
                "a sequence cannot be changed in place: build a new one with `map` (or `scatter` for some positions)",
            ),
            E::Unary(syn::ExprUnary {
                op: syn::UnOp::Deref(_),
                ..
            }) => self.error(
                lhs,
                "`*r = ...` assigns only a `&mut` parameter of the function, by its name (`*y = e;`); for a local value use a `let mut` variable",
            ),
            _ => self.error(
                lhs,
                "invalid left-hand side of assignment: assign to a `let mut` variable",
            ),
        }
    }

    // ----- statements -----

    /// Lowers an expression used as a statement. `can_exit`: inside a loop body, where a
    /// `break` or `continue` may appear.
    pub(super) fn effect(&mut self, e: &syn::Expr, can_exit: bool) {
        use syn::Expr as E;
        match peel(e) {
            E::Assign(a) if deref_target(&a.left).is_some() => self.write_param(e, a),
            E::Assign(a) => {
                let from = self.vars.len();
                let v = self.value(&a.right);
                self.assign_to(&a.left, v, from, a.eq_token.span);
            }
            E::Binary(b) if compound_op(&b.op).is_some() => {
                let op = compound_op(&b.op).unwrap_or(BinOp::Add);
                let cur = self.value(&b.left);
                let r = self.value(&b.right);
                let from = self.vars.len();
                let n = self.emit(
                    op_name(op),
                    Type::Infer,
                    Expr::Binary(op, cur, r),
                    b.op.span(),
                );
                self.assign_to(&b.left, n, from, b.op.span());
            }
            E::If(i) => self.effect_if(i, can_exit),
            E::ForLoop(f) => self.for_loop(f),
            E::While(w) => self.while_loop(w),
            E::Loop(l) => {
                self.loop_loop(l);
            }
            E::Break(b) => self.break_(b, can_exit),
            E::Continue(c) => self.continue_(c, can_exit),
            E::Block(b) if b.label.is_none() => self.unit_block(&b.block, can_exit),
            _ => {
                let before = self.error_count();
                self.value(e);
                if self.error_count() == before {
                    self.error(e, NOT_A_STATEMENT);
                }
            }
        }
    }

    /// A block of statements without a value (a loop body, a branch of an `if` statement).
    pub(super) fn unit_block(&mut self, b: &syn::Block, can_exit: bool) {
        let (env, items) = (self.env.clone(), self.items.clone());
        self.register_consts(&b.stmts);
        self.register_items(&b.stmts);
        self.unit_stmts(&b.stmts, can_exit);
        self.env = env;
        self.items = items;
    }

    fn unit_stmts(&mut self, stmts: &[syn::Stmt], can_exit: bool) {
        for (i, stmt) in stmts.iter().enumerate() {
            match stmt {
                // An empty statement (`;;`): nothing, as in Rust.
                syn::Stmt::Expr(syn::Expr::Verbatim(v), Some(_)) if v.is_empty() => {}
                syn::Stmt::Local(l) => self.local(l),
                syn::Stmt::Item(syn::Item::Fn(_) | syn::Item::Const(_)) => {}
                syn::Stmt::Item(item) => self.error(
                    item,
                    "only nested `fn` and `const` items are allowed inside a #[parallel] body",
                ),
                syn::Stmt::Expr(e, _) => {
                    self.effect(e, can_exit);
                    let rest = &stmts[i + 1..];
                    if can_exit && !rest.is_empty() && Scan::exits(e) {
                        // The rest of the block runs only if this statement did not leave.
                        let go = self.go_on(cheap_span(e));
                        self.merge_if(
                            go,
                            |s| {
                                s.unit_stmts(rest, can_exit);
                                None
                            },
                            |_| None,
                            "if",
                            cheap_span(e),
                        );
                        return;
                    }
                }
                syn::Stmt::Macro(m) => {
                    self.error(m, "macros are not supported in #[parallel] code");
                }
            }
        }
    }

    /// `if` as a statement: branches without values, `else` optional.
    fn effect_if(&mut self, i: &syn::ExprIf, can_exit: bool) {
        let c = self.value(&i.cond);
        self.merge_if(
            c,
            |s| {
                s.unit_block(&i.then_branch, can_exit);
                None
            },
            |s| {
                if let Some((_, e)) = &i.else_branch {
                    s.effect(e, can_exit);
                }
                None
            },
            "if",
            i.if_token.span,
        );
    }

    /// `if c { then } else { other }`, where each branch gives a value (`Some`) or not, and
    /// may change `mut` variables: the result carries the value and the changed variables
    /// (see the module documentation). `None` when there is no value.
    pub(super) fn merge_if(
        &mut self,
        c: VarId,
        then: impl FnOnce(&mut Self) -> Option<VarId>,
        other: impl FnOnce(&mut Self) -> Option<VarId>,
        name: &str,
        span: Span,
    ) -> Option<VarId> {
        let before = self.mut_values();
        let (t_stmts, t_val, t_muts) = self.arm(then, &before);
        let (e_stmts, e_val, e_muts) = self.arm(other, &before);
        let changed: Vec<usize> = (0..before.len())
            .filter(|&k| t_muts[k] != before[k] || e_muts[k] != before[k])
            .collect();
        let outs = |val: Option<VarId>, muts: &[VarId]| -> Vec<VarId> {
            val.into_iter()
                .chain(changed.iter().map(|&k| muts[k]))
                .collect()
        };
        let (t_outs, e_outs) = (outs(t_val, &t_muts), outs(e_val, &e_muts));
        if t_outs.is_empty() || t_outs.len() != e_outs.len() {
            return t_val;
        }
        let then_b = self.seal(t_stmts, &t_outs, span);
        let else_b = self.seal(e_stmts, &e_outs, span);
        let r = self.emit(name, Type::Infer, Expr::If(c, then_b, else_b), span);
        let single = t_outs.len() == 1;
        let mut field = 0u32;
        let mut take = |s: &mut Self, name: &str| {
            if single {
                s.rename(r, name);
                return r;
            }
            field += 1;
            s.emit(name, Type::Infer, Expr::Field(r, field - 1), span)
        };
        let value = t_val.map(|_| take(self, name));
        for k in changed {
            let slot_name = self.muts[k].name.clone();
            self.muts[k].current = take(self, &slot_name);
        }
        value
    }

    /// Lowers one branch into its own statements from the slot values `before` (restored
    /// after): its statements, value and slot values.
    fn arm(
        &mut self,
        f: impl FnOnce(&mut Self) -> Option<VarId>,
        before: &[VarId],
    ) -> (Vec<Stmt>, Option<VarId>, Vec<VarId>) {
        let saved = std::mem::take(&mut self.stmts);
        let (env, items) = (self.env.clone(), self.items.clone());
        let v = f(self);
        self.env = env;
        self.items = items;
        let after = self.mut_values();
        for (s, &b) in self.muts.iter_mut().zip(before) {
            s.current = b;
        }
        let stmts = std::mem::replace(&mut self.stmts, saved);
        (stmts, v, after)
    }

    /// A block of `stmts` whose result is `outs` (a tuple unless there is one).
    fn seal(&mut self, mut stmts: Vec<Stmt>, outs: &[VarId], span: Span) -> Block {
        if let [one] = outs {
            return Block {
                stmts,
                result: *one,
            };
        }
        let var = self.new_var("merge", Type::Infer, span);
        let span = self.vars[var.index()].span;
        stmts.push(Stmt {
            var,
            expr: Expr::Tuple(outs.to_vec()),
            span,
        });
        Block { stmts, result: var }
    }

    fn lit(&mut self, c: Const, ty: Type, span: Span) -> VarId {
        self.emit("lit", ty, Expr::Const(c), span)
    }

    /// `!(broke || cont)` of the innermost loop: whether the iteration goes on.
    fn go_on(&mut self, span: Span) -> VarId {
        let flags: Vec<usize> = self
            .loops
            .last()
            .map(|l| l.broke.into_iter().chain(l.cont).collect())
            .unwrap_or_default();
        let mut left = None;
        for f in flags {
            let Some(v) = self.mut_value(f) else { continue };
            left = Some(match left {
                None => v,
                Some(l) => self.emit("or", Type::bool(), Expr::Binary(BinOp::BitOr, l, v), span),
            });
        }
        match left {
            Some(l) => self.emit("go", Type::bool(), Expr::Unary(UnOp::Not, l), span),
            None => self.lit(Const::Bool(true), Type::bool(), span),
        }
    }

    fn break_(&mut self, b: &syn::ExprBreak, can_exit: bool) {
        if let Some(l) = &b.label {
            return self.error(l, "labelled `break` is not supported: set a `let mut` flag and test it in the outer loop's condition");
        }
        if !self.exit_allowed(b, "break", can_exit) {
            return;
        }
        let span = b.break_token.span;
        let Some(ctx) = self.loops.last() else { return };
        let (kind, broke, which, sites) = (ctx.kind, ctx.broke, ctx.which, ctx.breaks.len());
        match &b.expr {
            Some(e) if kind != "loop" => self.error(
                e,
                format!("`break` with a value is only allowed in `loop`, not in a `{kind}` loop: assign the value to a `let mut` variable declared before the loop"),
            ),
            Some(e) => {
                let site = BreakSite {
                    expr: (**e).clone(),
                    env: self.env.clone(),
                    items: self.items.clone(),
                };
                if let Some(which) = which {
                    let k = self.lit(Const::Int(sites as i128), Type::Scalar(Scalar::U32), span);
                    self.set_slot(which, k, k.index(), span);
                }
                if let Some(ctx) = self.loops.last_mut() {
                    ctx.breaks.push(site);
                }
            }
            None => {
                if let Some(ctx) = self.loops.last_mut() {
                    ctx.plain_break.get_or_insert(span);
                }
            }
        }
        if let Some(broke) = broke {
            let t = self.lit(Const::Bool(true), Type::bool(), span);
            self.set_slot(broke, t, t.index(), span);
        }
    }

    fn continue_(&mut self, c: &syn::ExprContinue, can_exit: bool) {
        if let Some(l) = &c.label {
            return self.error(l, "labelled `continue` is not supported: set a `let mut` flag and test it in the outer loop");
        }
        if !self.exit_allowed(c, "continue", can_exit) {
            return;
        }
        let span = c.continue_token.span;
        if let Some(cont) = self.loops.last().and_then(|l| l.cont) {
            let t = self.lit(Const::Bool(true), Type::bool(), span);
            self.set_slot(cont, t, t.index(), span);
        }
    }

    /// Whether a `break`/`continue` may appear here (reports why not).
    fn exit_allowed(&mut self, node: &impl quote::ToTokens, what: &str, can_exit: bool) -> bool {
        if self.loops.is_empty() {
            self.error(node, format!("`{what}` outside of a loop"));
            false
        } else if !can_exit {
            self.error(node, format!("`{what}` is supported as a statement of a loop body (or of an `if` inside it), not inside a closure or an expression that gives a value"));
            false
        } else {
            true
        }
    }

    /// `break` and `continue` in value position.
    pub(super) fn exit_in_value(&mut self, e: &syn::Expr, what: &str) -> VarId {
        self.exit_allowed(e, what, false);
        self.poison()
    }

    // ----- loops -----

    /// Rejects a loop label.
    fn no_label(&mut self, label: Option<&syn::Label>) {
        if let Some(l) = label {
            self.error(l, "loop labels are not supported: set a `let mut` flag and test it in the outer loop's condition");
        }
    }

    fn for_loop(&mut self, f: &syn::ExprForLoop) {
        let span = f.for_token.span;
        self.no_label(f.label.as_ref());
        let r = match range_of(&f.expr) {
            Ok(r) => r,
            Err((at, msg)) => return self.error_at(at, msg),
        };
        // A sequence `xs` is visited as the range `0..xs.len()`, reading `xs[i]`.
        let (a, b, k, inclusive, rev, items) = match r {
            Some(r) => {
                if let Some(step) = r.step
                    && let syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Int(i),
                        ..
                    }) = peel(step)
                    && i.base10_digits() == "0"
                {
                    return self.error(
                        step,
                        "`step_by(0)` panics in Rust: the step must be positive",
                    );
                }
                let a = self.value(r.start);
                let b = self.value(r.end);
                let k = match r.step {
                    Some(s) => self.value(s),
                    None => self.lit(Const::Int(1), Type::Infer, span),
                };
                (a, b, k, r.inclusive, r.rev, None)
            }
            None => {
                let xs = self.value(sequence_of(&f.expr));
                let n = self.emit("len", Type::usize(), Expr::Len(xs), span);
                let zero = self.lit(Const::Int(0), Type::usize(), span);
                let one = self.lit(Const::Int(1), Type::usize(), span);
                (zero, n, one, false, false, Some(xs))
            }
        };
        let within = if inclusive { BinOp::Le } else { BinOp::Lt };
        let nonempty = self.emit("cmp", Type::bool(), Expr::Binary(within, a, b), span);
        let fin = self.emit("fin", Type::bool(), Expr::Unary(UnOp::Not, nonempty), span);
        let first = match (rev, inclusive) {
            (false, _) => a,
            (true, true) => b,
            (true, false) => {
                let one = self.lit(Const::Int(1), Type::Infer, span);
                self.emit("sub", Type::Infer, Expr::Binary(BinOp::Sub, b, one), span)
            }
        };
        let index_name = match (&*f.pat, items) {
            (syn::Pat::Ident(pi), None) => pi.ident.unraw().to_string(),
            _ => "i".to_string(),
        };
        let scan = Scan::of_block(&f.body);
        self.lower_loop(
            span,
            "for",
            &scan,
            &[(&index_name, first), ("fin", fin)],
            |s, own| Some(s.emit("more", Type::bool(), Expr::Unary(UnOp::Not, own[1]), span)),
            |s, own| {
                let i = own[0];
                let item = match items {
                    // In range by the loop's condition: no check.
                    Some(seq) => s.read(seq, i, span),
                    None => i,
                };
                s.bind_pat(&f.pat, item, item.index());
                s.unit_block(&f.body, true);
                // The next index, if it is still in the range (never past its bound).
                let (step, away, bound) = if rev {
                    (BinOp::Sub, BinOp::Lt, (BinOp::Ge, a))
                } else {
                    (BinOp::Add, BinOp::Gt, (within, b))
                };
                let n = s.emit("next", Type::Infer, Expr::Binary(step, i, k), span);
                let moved = s.emit("cmp", Type::bool(), Expr::Binary(away, n, i), span);
                let inside = s.emit("cmp", Type::bool(), Expr::Binary(bound.0, n, bound.1), span);
                let more = s.emit(
                    "and",
                    Type::bool(),
                    Expr::Binary(BinOp::BitAnd, moved, inside),
                    span,
                );
                let fin = s.emit("fin", Type::bool(), Expr::Unary(UnOp::Not, more), span);
                vec![n, fin]
            },
        );
    }

    fn while_loop(&mut self, w: &syn::ExprWhile) {
        let span = w.while_token.span;
        self.no_label(w.label.as_ref());
        let scan = Scan::of_block(&w.body);
        self.lower_loop(
            span,
            "while",
            &scan,
            &[],
            |s, _| Some(s.value(&w.cond)),
            |s, _| {
                s.unit_block(&w.body, true);
                Vec::new()
            },
        );
    }

    /// `loop { .. }`: its value when it breaks with one.
    pub(super) fn loop_loop(&mut self, l: &syn::ExprLoop) -> Option<VarId> {
        let span = l.loop_token.span;
        self.no_label(l.label.as_ref());
        let scan = Scan::of_block(&l.body);
        self.lower_loop(
            span,
            "loop",
            &scan,
            &[],
            |_, _| None,
            |s, _| {
                s.unit_block(&l.body, true);
                Vec::new()
            },
        )
    }

    /// Lowers a loop (see the module documentation). `own` are the loop's own carried
    /// values (name, init); `cond` gives its condition (`None`: always) and `body` lowers
    /// the user's body and gives the next values of `own`. Returns the `break` value.
    fn lower_loop(
        &mut self,
        span: Span,
        kind: &'static str,
        scan: &Scan,
        own: &[(&str, VarId)],
        cond: impl FnOnce(&mut Self, &[VarId]) -> Option<VarId>,
        body: impl FnOnce(&mut Self, &[VarId]) -> Vec<VarId>,
    ) -> Option<VarId> {
        // The slots the body assigns, each once, in order.
        let mut carried: Vec<usize> = Vec::new();
        for name in &scan.assigned {
            if let Some(Binding::Mut(slot)) = self.env.lookup(name)
                && !carried.contains(slot)
            {
                carried.push(*slot);
            }
        }
        let mut ctx = LoopCtx {
            kind,
            broke: None,
            cont: None,
            which: None,
            breaks: Vec::new(),
            plain_break: None,
            slot_floor: 0,
        };
        if scan.breaks {
            let f = self.lit(Const::Bool(false), Type::bool(), span);
            let slot = self.hidden_slot("broke", f);
            ctx.broke = Some(slot);
            carried.push(slot);
        }
        if scan.break_values > 1 {
            let z = self.lit(Const::Int(0), Type::Scalar(Scalar::U32), span);
            let slot = self.hidden_slot("which", z);
            ctx.which = Some(slot);
            carried.push(slot);
        }
        if carried.is_empty() && own.is_empty() {
            let what = if kind == "loop" {
                "`loop`".to_string()
            } else {
                format!("`{kind}` loop")
            };
            self.error_at(span, format!("this {what} changes no `let mut` variable and has no `break`: it would never end, or do nothing"));
            return None;
        }
        ctx.slot_floor = self.muts.len();
        let var_floor = self.vars.len();
        let mut inits: Vec<VarId> = carried.iter().filter_map(|&k| self.mut_value(k)).collect();
        inits.extend(own.iter().map(|(_, v)| *v));
        let mut params = Vec::with_capacity(inits.len());
        for &k in &carried {
            let name = self.muts[k].name.clone();
            let p = self.new_var(&name, Type::Infer, span);
            self.muts[k].current = p;
            params.push(p);
        }
        let own_params: Vec<VarId> = own
            .iter()
            .map(|(name, _)| self.new_var(name, Type::Infer, span))
            .collect();
        params.extend(&own_params);
        let broke = ctx.broke;
        self.loops.push(ctx);
        let cond_b = self.sub_block(|s| {
            let user = |s: &mut Self| cond(s, &own_params);
            match broke.and_then(|b| s.mut_value(b)) {
                None => user(s).unwrap_or_else(|| s.lit(Const::Bool(true), Type::bool(), span)),
                Some(b) => {
                    // `!broke && cond`, without evaluating `cond` once broken.
                    let not_b = s.emit("go", Type::bool(), Expr::Unary(UnOp::Not, b), span);
                    if kind == "loop" {
                        return not_b;
                    }
                    s.merge_if(
                        b,
                        |_| Some(not_b),
                        |s| Some(user(s).unwrap_or(not_b)),
                        "more",
                        span,
                    )
                    .unwrap_or(not_b)
                }
            }
        });
        let before_body = self.mut_values();
        let saved = std::mem::take(&mut self.stmts);
        let (env, items) = (self.env.clone(), self.items.clone());
        if scan.continues {
            let f = self.lit(Const::Bool(false), Type::bool(), span);
            let slot = self.hidden_slot("cont", f);
            if let Some(ctx) = self.loops.last_mut() {
                ctx.cont = Some(slot);
            }
        }
        let next_own = body(self, &own_params);
        self.env = env;
        self.items = items;
        let mut next: Vec<VarId> = carried.iter().filter_map(|&k| self.mut_value(k)).collect();
        next.extend(next_own);
        let mut stmts = std::mem::replace(&mut self.stmts, saved);
        let var = self.new_var("next", Type::Infer, span);
        let vspan = self.vars[var.index()].span;
        stmts.push(Stmt {
            var,
            expr: Expr::Tuple(next),
            span: vspan,
        });
        let body_b = Block { stmts, result: var };
        // The scan finds every assignment the body makes; should one escape it, it is an
        // error rather than a silently lost assignment.
        for (k, &v) in before_body.iter().enumerate() {
            if !carried.contains(&k) && self.muts[k].current != v {
                self.muts[k].current = v;
                self.error_at(span, "this loop assigns a variable in a way the #[parallel] front end cannot follow: please report it");
            }
        }
        let ctx = self.loops.pop();
        let l = self.emit(
            kind,
            Type::Infer,
            Expr::Loop(Box::new(Loop {
                params,
                inits,
                cond: cond_b,
                body: body_b,
            })),
            span,
        );
        for (j, &k) in carried.iter().enumerate() {
            let name = self.muts[k].name.clone();
            let index = u32::try_from(j).unwrap_or(u32::MAX);
            self.muts[k].current = self.emit(&name, Type::Infer, Expr::Field(l, index), span);
        }
        let ctx = ctx?;
        if ctx.breaks.is_empty() {
            return None;
        }
        if let Some(at) = ctx.plain_break {
            self.error_at(
                at,
                "this `break` needs a value: the other `break`s of this `loop` give one",
            );
        }
        let scope = BreakScope {
            slots: ctx.slot_floor,
            vars: var_floor..self.vars.len(),
        };
        let saved_scope = self.break_scope.replace(scope);
        let (env, items) = (self.env.clone(), self.items.clone());
        let which = ctx.which.and_then(|w| self.mut_value(w));
        let v = self.break_values(&ctx.breaks, 0, which, span);
        self.env = env;
        self.items = items;
        self.break_scope = saved_scope;
        Some(v)
    }

    /// The value of the `break` (from `sites`, numbered from `first`) that left the loop.
    fn break_values(
        &mut self,
        sites: &[BreakSite],
        first: usize,
        which: Option<VarId>,
        span: Span,
    ) -> VarId {
        let site_value = |s: &mut Self, site: &BreakSite| {
            s.env = site.env.clone();
            s.items = site.items.clone();
            s.value(&site.expr)
        };
        match (sites, which) {
            ([site, rest @ ..], Some(w)) if !rest.is_empty() => {
                let k = self.lit(Const::Int(first as i128), Type::Scalar(Scalar::U32), span);
                let c = self.emit("cmp", Type::bool(), Expr::Binary(BinOp::Eq, w, k), span);
                let t = self.sub_block(|s| site_value(s, site));
                let e = self.sub_block(|s| s.break_values(rest, first + 1, which, span));
                self.emit("break", Type::Infer, Expr::If(c, t, e), span)
            }
            ([site, ..], _) => site_value(self, site),
            ([], _) => self.poison(),
        }
    }
}

/// A `&mut` parameter of the function and its new value once assigned (`*y = e;`).
pub(crate) struct Pending {
    /// The parameter's name.
    pub(crate) name: String,
    /// The new value and the span of the assignment's `=`.
    pub(crate) value: Option<(VarId, Span)>,
    /// An assignment in the wrong place was reported (so "never assigned" is not).
    pub(crate) misplaced: bool,
}

/// `y` of `*y`.
fn deref_target(lhs: &syn::Expr) -> Option<&syn::Ident> {
    match peel(lhs) {
        syn::Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Deref(_),
            expr,
            ..
        }) => match peel(expr) {
            syn::Expr::Path(p) if p.qself.is_none() => p.path.get_ident(),
            _ => None,
        },
        _ => None,
    }
}
