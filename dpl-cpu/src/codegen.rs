//! Rust code generation from Soac-level IR.
//!
//! One generator serves both CPU places: it is given the path of a run-time module with the
//! helper API of [`rt`](crate::rt) — the parallel one for `Place::Cpu` (fed the fused
//! function) or the sequential reference for `Place::Seq` (fed the unfused one).
//!
//! Representation of values in the generated code: scalars as themselves; a sequence as a
//! borrowed slice `&[E]` named after its variable, backed, when the generated code created
//! it, by an owned `Vec<E>` local (`<name>__own`); tuples as Rust tuples of those. Results
//! leaving a block (the function's result, `if` branches) are converted to owned values,
//! moving the owned local when there is one and copying a borrowed slice otherwise.
//!
//! Every combinator becomes one helper call whose element function is a `move` closure
//! over slices and scalars, so LLVM sees the whole loop. Reads that the IR marks unchecked
//! compile to unchecked loads (rows of a `Nested` or `Matrix` included); the assertions
//! that make them safe precede them. Checked reads pass their source location as a
//! `&'static Location`, so the check costs a compare and a cold branch.
//!
//! Beyond one call per combinator: `unzip(map(f))` (a map of 2 or 3 scalars read only by
//! its projections) is one `map_unzip` call writing one vector per component; the function's
//! result moves the owned locals it is made of, through tuples; and with `Matrix`
//! parameters the body is generated twice, once with matrix rows as plain slices (run when
//! every matrix has contiguous rows) and once with strided row views; with several `Nested`
//! parameters, once reading their rows through one shared offsets array (run when they
//! share it) and once through each one's own.

use dpl_core::ir::*;
use proc_macro2::{Ident, Span as PmSpan, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use std::collections::{HashMap, HashSet};

/// How a parameter arrives in Rust.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamRepr {
    /// A scalar passed by value.
    Scalar,
    /// Anything that slices to `[E]` with `&x[..]`: `&[E]`, `&Vec<E>`, `Vec<E>`, `&Seq<E>`.
    Slice,
    /// `&Nested<E>`: rows are slices (`row(i)`).
    Nested,
    /// `&Matrix<E>`: rows are strided views (`row(i)`, a `RowView`).
    Matrix,
}

/// How a value is represented in the generated code. Sequences are always borrowed views;
/// sequences the generated code creates are backed by an owned `Vec` local.
#[derive(Clone, Debug, PartialEq)]
enum Rep {
    /// A scalar, or a tuple of scalars.
    Value,
    /// `&[E]`.
    Slice,
    /// `&Nested<E>`.
    Nested,
    /// `&Matrix<E>`; `true` when its rows are contiguous (checked at run time before the
    /// variant of the body that relies on it), so a row is a plain slice.
    Matrix(bool),
    /// `RowView<'_, E>`: a row of a matrix.
    RowView,
    /// `&[Vec<E>]`: a sequence of sequences the generated code built.
    Rows,
    /// A tuple with sequences in it.
    Tuple(Vec<Rep>),
}

/// Everything the generator needs to know about one function.
pub struct FnInput<'a> {
    /// The function (Soac level, typed).
    pub func: &'a Function,
    /// The Rust identifier and representation of each parameter, in order.
    pub params: Vec<(Ident, ParamRepr)>,
    /// Maps IR spans back to source spans (for error locations).
    pub span: &'a dyn Fn(Span) -> PmSpan,
    /// Path of the run-time module, e.g. `::dpl::__private::rt`.
    pub rt: TokenStream,
    /// Path of the facade's private module, e.g. `::dpl::__private`.
    pub private: TokenStream,
    /// Path of the run-time module used for loops nested inside other loops.
    pub inner_rt: TokenStream,
    /// Whether outer loops over elements that contain loops themselves use the
    /// load-balancing `heavy` helpers (one task per element where work allows).
    pub heavy: Option<TokenStream>,
}

/// The body of the function as an expression producing its (inner) result.
///
/// With `Matrix` parameters the body is generated twice: a variant in which every matrix
/// row is a plain slice, run when all of them have contiguous rows (row-major: the common
/// case, where reads are plain loads that LLVM can vectorize), and the general variant over
/// strided row views. With two or more `Nested` parameters (and no `Matrix`), the parallel
/// place's body is also generated twice: a variant run when every `Nested` shares the
/// offsets array of the first (`Nested::same_offsets`, one pointer comparison per call),
/// which reads each row from that one array (both rows of a zip from the same two loads,
/// so the per-row length check of the zip compares a value with itself and folds away),
/// and the general variant reading each `Nested` through its own offsets.
pub fn body(input: &FnInput<'_>) -> TokenStream {
    body_with(input, None)
}

/// Generates top-level statements chosen by another backend: called for each statement of
/// the function's body (and of the branches of its top-level `if`s) before the usual
/// generation; `Some(code)` replaces it. dpl-mpi generates its communication this way,
/// around loops that stay this generator's.
pub type Hook<'h> = &'h dyn Fn(&mut HookCx<'_, '_>, &Stmt) -> Option<TokenStream>;

/// [`body`] with a [`Hook`] for top-level statements.
pub fn body_with(input: &FnInput<'_>, hook: Option<Hook<'_>>) -> TokenStream {
    let matrices: Vec<&Ident> = input
        .params
        .iter()
        .filter(|(_, r)| *r == ParamRepr::Matrix)
        .map(|(i, _)| i)
        .collect();
    if matrices.is_empty() {
        let nested: Vec<&Ident> = input
            .params
            .iter()
            .filter(|(_, r)| *r == ParamRepr::Nested)
            .map(|(i, _)| i)
            .collect();
        // Parallel place only: the sequential reference stays one straightforward variant.
        if nested.len() >= 2 && input.heavy.is_some() {
            let first = nested[0];
            let tests = nested[1..]
                .iter()
                .map(|other| quote!(#first.same_offsets(#other)));
            let shared = variant(input, hook, false, true);
            let general = variant(input, hook, false, false);
            return quote! {{
                if #(#tests)&&* #shared else #general
            }};
        }
        return variant(input, hook, false, false);
    }
    let contiguous = variant(input, hook, true, false);
    let general = variant(input, hook, false, false);
    // A block, like every body: callers splice it where a block is expected.
    quote! {{
        if #(#matrices.rows_are_slices())&&* #contiguous else #general
    }}
}

/// One variant of the body; `contiguous`: the rows of every `Matrix` parameter are slices;
/// `shared`: every `Nested` parameter shares the offsets of the first (tested by the
/// caller), so rows are read from those offsets and the values of each.
fn variant(
    input: &FnInput<'_>,
    hook: Option<Hook<'_>>,
    contiguous: bool,
    shared: bool,
) -> TokenStream {
    let mut g = Gen {
        f: input.func,
        span: input.span,
        rt: &input.rt,
        inner_rt: &input.inner_rt,
        heavy: input.heavy.as_ref(),
        private: &input.private,
        owned: HashSet::new(),
        parts: HashMap::new(),
        unzips: HashMap::new(),
        projections: HashSet::new(),
        reps: HashMap::new(),
        depth: 0,
        unchecked: HashSet::new(),
        subst: HashMap::new(),
        shared: HashSet::new(),
        hook,
    };
    let mut prologue = TokenStream::new();
    for ((ident, repr), &v) in input.params.iter().zip(&input.func.params) {
        let name = g.ident(v);
        let (rep, binding) = match repr {
            ParamRepr::Scalar => {
                let ty = g.rep_ty(&input.func.vars[v].ty);
                (Rep::Value, quote! { let #name: #ty = #ident; })
            }
            ParamRepr::Slice => (Rep::Slice, quote! { let #name = &#ident[..]; }),
            ParamRepr::Nested if shared => {
                let values = shared_values(&name);
                let first = g.shared.is_empty().then(|| {
                    quote! { let __dpl_offsets: &[usize] = #ident.offsets(); }
                });
                g.shared.insert(v);
                let binding = quote! {
                    let #name = &*#ident;
                    #first
                    let #values = #ident.values();
                };
                (Rep::Nested, binding)
            }
            ParamRepr::Nested => (Rep::Nested, quote! { let #name = &*#ident; }),
            ParamRepr::Matrix => (Rep::Matrix(contiguous), quote! { let #name = &*#ident; }),
        };
        g.reps.insert(v, rep);
        prologue.extend(binding);
    }
    g.plan_unzips(&input.func.body);
    let stmts = g.stmts(&input.func.body);
    let result = g.result_value(input.func.body.result);
    quote! {{ #prologue #stmts #result }}
}

struct Gen<'a> {
    f: &'a Function,
    span: &'a dyn Fn(Span) -> PmSpan,
    rt: &'a TokenStream,
    inner_rt: &'a TokenStream,
    heavy: Option<&'a TokenStream>,
    private: &'a TokenStream,
    /// Variables backed by an owned local `<name>__own`.
    owned: HashSet<VarId>,
    /// The components of tuples with sequences in them, and the targets of copies
    /// (one component), so that the function's result can move owned locals out.
    parts: HashMap<VarId, Vec<VarId>>,
    /// `unzip(map(f))` written as one loop: the map's variable -> the variable of each
    /// component's projection (`None`: component unused).
    unzips: HashMap<VarId, Vec<Option<VarId>>>,
    /// The projections of those maps: bound by the map's statement, nothing to generate.
    projections: HashSet<VarId>,
    /// The representation of each variable generated so far.
    reps: HashMap<VarId, Rep>,
    /// Lambda nesting depth of the code being generated (0: the function body).
    depth: usize,
    /// Checked reads generated without their check: proven in range
    /// ([`dpl_core::ranges`]) in the loop variant being generated.
    unchecked: HashSet<VarId>,
    /// Statements generated as another expression: clamped indices as their simpler form
    /// (the interior variant of a loop, see [`dpl_core::ranges::clamps`]), reads of a row
    /// streamed in place (see [`Gen::ragged_map`]).
    subst: HashMap<VarId, TokenStream>,
    /// `Nested` parameters read through one shared offsets array (`__dpl_offsets`) and
    /// their values (see [`shared_values`]): the body variant run when they share offsets.
    shared: HashSet<VarId>,
    /// Generates the top-level statements another backend handles (see [`Hook`]).
    hook: Option<Hook<'a>>,
}

/// The loop variants that range facts allow (see [`Gen::bounded_variant`]).
struct Variants {
    /// The condition for the unchecked variants (`None`: always).
    cond: Option<TokenStream>,
    /// The element function with the bounded reads unchecked.
    fast: TokenStream,
    /// `(lo, hi, interior)`: the element function for `lo..hi` with the clamps removed.
    interior: Option<(TokenStream, TokenStream, TokenStream)>,
}

impl Gen<'_> {
    fn ident(&self, v: VarId) -> Ident {
        ident_of(self.f, v)
    }

    fn own_ident(&self, v: VarId) -> Ident {
        format_ident!("{}__own", self.ident(v))
    }

    fn scalar_ty(s: Scalar) -> TokenStream {
        let id = format_ident!("{}", s.name());
        quote!(#id)
    }

    /// The type of a variable's representation; `_` (left to rustc) for anything with a
    /// sequence in it, whose Rust type depends on its representation.
    fn rep_ty(&self, t: &Type) -> TokenStream {
        match t {
            Type::Scalar(s) => Self::scalar_ty(*s),
            Type::Seq(_) => quote!(_),
            Type::Tuple(ts) => {
                let ts = ts.iter().map(|t| self.rep_ty(t));
                quote!((#(#ts,)*))
            }
            Type::Infer => quote!(_),
        }
    }

    /// The type of an owned value (sequences as `Vec`).
    fn owned_ty(&self, t: &Type) -> TokenStream {
        match t {
            Type::Scalar(s) => Self::scalar_ty(*s),
            Type::Seq(e) => {
                let e = self.elem_ty(e);
                quote!(::std::vec::Vec<#e>)
            }
            Type::Tuple(ts) => {
                let ts = ts.iter().map(|t| self.owned_ty(t));
                quote!((#(#ts,)*))
            }
            Type::Infer => quote!(_),
        }
    }

    /// The type of a sequence element as stored.
    fn elem_ty(&self, t: &Type) -> TokenStream {
        self.owned_ty(t)
    }

    fn rep(&self, v: VarId) -> Rep {
        if let Some(r) = self.reps.get(&v) {
            return r.clone();
        }
        Self::default_rep(&self.f.vars[v].ty)
    }

    fn default_rep(t: &Type) -> Rep {
        match t {
            Type::Seq(e) if matches!(**e, Type::Seq(_)) => Rep::Rows,
            Type::Seq(_) => Rep::Slice,
            Type::Tuple(ts) if ts.iter().any(Self::contains_seq) => {
                Rep::Tuple(ts.iter().map(Self::default_rep).collect())
            }
            _ => Rep::Value,
        }
    }

    /// The representation of an element read from a sequence of representation `r`.
    fn elem_rep(r: &Rep, elem: &Type) -> Rep {
        match r {
            Rep::Nested | Rep::Rows => Rep::Slice,
            Rep::Matrix(true) => Rep::Slice,
            Rep::Matrix(false) => Rep::RowView,
            _ => Self::default_rep(elem),
        }
    }

    /// Reads element `i` (a `usize` known to be in range) of `x`.
    fn read(&self, x: VarId, i: TokenStream) -> TokenStream {
        let rt = self.rt;
        let name = self.ident(x);
        // SAFETY (of the generated blocks): the caller guarantees `i < len`; a `Nested` and a
        // `Matrix` keep their rows inside their buffers by construction.
        match self.rep(x) {
            Rep::Nested if self.shared.contains(&x) => {
                let values = shared_values(&name);
                quote!(unsafe { #rt::shared_row(#values, __dpl_offsets, #i) })
            }
            Rep::Nested => quote!(unsafe { #name.row_unchecked(#i) }),
            Rep::Matrix(true) => quote!(unsafe { #name.row_slice_unchecked(#i) }),
            Rep::Matrix(false) => quote!(unsafe { #name.row_unchecked(#i) }),
            Rep::RowView => quote!(unsafe { *#name.get_unchecked(#i) }),
            Rep::Rows => quote!(unsafe { &#name.get_unchecked(#i)[..] }),
            Rep::Slice if self.elem_has_seq(x) => {
                // Elements with sequences in them (`(Vec<E>, S)` built by a map) are not
                // `Copy`: borrow the element and view its sequences as slices.
                let elem = match &self.f.vars[x].ty {
                    Type::Seq(e) => (**e).clone(),
                    t => t.clone(),
                };
                let borrow = Self::borrow_expr(quote!((*__dpl_e)), &elem);
                quote!({ let __dpl_e = unsafe { #name.get_unchecked(#i) }; #borrow })
            }
            _ => quote!(unsafe { #rt::read(#name, #i) }),
        }
    }

    /// Whether the elements of sequence `x` have sequences in them.
    fn elem_has_seq(&self, x: VarId) -> bool {
        matches!(&self.f.vars[x].ty, Type::Seq(e) if Self::contains_seq(e))
    }

    fn contains_seq(t: &Type) -> bool {
        match t {
            Type::Seq(_) => true,
            Type::Tuple(ts) => ts.iter().any(Self::contains_seq),
            _ => false,
        }
    }

    /// `&'static Location` of a statement, pointing at the user's source.
    fn loc(&self, span: Span) -> TokenStream {
        let sp = (self.span)(span);
        let private = self.private;
        // A reference to a promoted constant: one pointer on the cold path of a check.
        quote_spanned! {sp=>
            &#private::Location { file: ::core::file!(), line: ::core::line!(), column: ::core::column!() }
        }
    }

    fn stmts(&mut self, b: &Block) -> TokenStream {
        let mut out = TokenStream::new();
        for s in &b.stmts {
            out.extend(self.stmt(s));
        }
        out
    }

    /// A block as an expression producing an owned value.
    fn block_owned(&mut self, b: &Block) -> TokenStream {
        let stmts = self.stmts(b);
        let r = self.owned_value(b.result);
        quote!({ #stmts #r })
    }

    /// The function's result: owned locals are moved out, through tuples and copies; an
    /// owned local that appears more than once is copied where it appears first and moved
    /// where it appears last (tuple fields are evaluated left to right); anything else is
    /// copied.
    fn result_value(&self, v: VarId) -> TokenStream {
        let mut leaves = Vec::new();
        self.result_leaves(v, &mut leaves);
        let mut last: HashMap<VarId, usize> = HashMap::new();
        for (k, l) in leaves.iter().enumerate() {
            last.insert(*l, k);
        }
        let mut next = 0;
        self.result_expr(v, &last, &mut next)
    }

    /// The variables that the result is made of, in evaluation order.
    fn result_leaves(&self, v: VarId, out: &mut Vec<VarId>) {
        if self.owned.contains(&v) {
            return out.push(v);
        }
        match (self.parts.get(&v), &self.f.vars[v].ty) {
            (Some(ps), Type::Tuple(_)) => ps.iter().for_each(|p| self.result_leaves(*p, out)),
            (Some(ps), _) if ps.len() == 1 => self.result_leaves(ps[0], out),
            _ => out.push(v),
        }
    }

    fn result_expr(&self, v: VarId, last: &HashMap<VarId, usize>, next: &mut usize) -> TokenStream {
        if self.owned.contains(&v) {
            let k = *next;
            *next += 1;
            if last.get(&v) == Some(&k) {
                let own = self.own_ident(v);
                return quote!(#own);
            }
            let name = self.ident(v);
            return Self::to_owned_expr(quote!(#name), &self.rep(v));
        }
        match (self.parts.get(&v), &self.f.vars[v].ty) {
            (Some(ps), Type::Tuple(_)) => {
                let ps: Vec<TokenStream> = ps
                    .iter()
                    .map(|p| self.result_expr(*p, last, next))
                    .collect();
                quote!((#(#ps,)*))
            }
            (Some(ps), _) if ps.len() == 1 => self.result_expr(ps[0], last, next),
            _ => {
                *next += 1;
                self.owned_value(v)
            }
        }
    }

    /// An expression producing an owned copy (or move) of `v`'s value.
    fn owned_value(&self, v: VarId) -> TokenStream {
        let t = &self.f.vars[v].ty;
        let name = self.ident(v);
        if !Self::contains_seq(t) {
            return quote!(#name);
        }
        if self.owned.contains(&v) {
            let own = self.own_ident(v);
            if self.rep(v) == Rep::Nested {
                // A ragged result built in place (`ragged_map`) where a block's owned value
                // is expected (an `if` branch): the type every ragged block value has.
                return quote!(::std::vec::Vec::<::std::vec::Vec<_>>::from(#own));
            }
            return quote!(#own);
        }
        Self::to_owned_expr(quote!(#name), &self.rep(v))
    }

    fn to_owned_expr(e: TokenStream, r: &Rep) -> TokenStream {
        match r {
            Rep::Value => e,
            Rep::Slice | Rep::Rows => quote!(<[_]>::to_vec(#e)),
            Rep::Nested => quote!((#e).to_vecs()),
            Rep::Matrix(_) => quote!((#e).to_row_vecs()),
            Rep::RowView => quote!((#e).to_vec()),
            Rep::Tuple(rs) => {
                let parts = rs.iter().enumerate().map(|(k, r)| {
                    let k = syn_index(k);
                    Self::to_owned_expr(quote!((#e).#k), r)
                });
                quote!((#(#parts,)*))
            }
        }
    }

    /// Borrows an owned expression into the variable representation.
    fn borrow_expr(e: TokenStream, t: &Type) -> TokenStream {
        match t {
            Type::Seq(_) => quote!(&(#e)[..]),
            Type::Tuple(ts) if ts.iter().any(Self::contains_seq) => {
                let parts = ts.iter().enumerate().map(|(k, t)| {
                    let k = syn_index(k);
                    Self::borrow_expr(quote!((#e).#k), t)
                });
                quote!((#(#parts,)*))
            }
            _ => e,
        }
    }

    /// Binds `v` to an owned value produced by `value` (sequences as `Vec`s).
    fn bind_owned(&mut self, v: VarId, value: TokenStream) -> TokenStream {
        let t = &self.f.vars[v].ty;
        let name = self.ident(v);
        let own = self.own_ident(v);
        let borrow = Self::borrow_expr(quote!(#own), t);
        self.owned.insert(v);
        self.reps.insert(v, Self::default_rep(t));
        quote! {
            let #own = #value;
            let #name = #borrow;
        }
    }

    /// A closure for `l`; `param_reps` gives the representation of each parameter
    /// (missing ones are derived from the types).
    fn lambda(&mut self, l: &Lambda, by_ref_first: bool, param_reps: &[Rep]) -> TokenStream {
        for (k, p) in l.params.iter().enumerate() {
            let r = param_reps
                .get(k)
                .cloned()
                .unwrap_or_else(|| Self::default_rep(&self.f.vars[*p].ty));
            self.reps.insert(*p, r);
        }
        let mut params = Vec::new();
        let mut unpack = TokenStream::new();
        for (k, p) in l.params.iter().enumerate() {
            let name = self.ident(*p);
            let t = self.rep_ty(&self.f.vars[*p].ty);
            if by_ref_first && k == 0 {
                let tmp = format_ident!("{}_ref", name);
                params.push(quote!(#tmp: &#t));
                if Self::contains_seq(&self.f.vars[*p].ty) {
                    // A predicate over elements with sequences in them (rows kept by a
                    // `filter`): view them in place instead of moving out of the reference.
                    let borrow = Self::borrow_expr(quote!((*#tmp)), &self.f.vars[*p].ty);
                    unpack.extend(quote!(let #name = #borrow;));
                } else {
                    unpack.extend(quote!(let #name: #t = *#tmp;));
                }
            } else {
                params.push(quote!(#name: #t));
            }
        }
        let rty = self.owned_ty(&self.f.vars[l.body.result].ty);
        self.depth += 1;
        let body = self.block_owned(&l.body);
        self.depth -= 1;
        quote!(move |#(#params),*| -> #rty { #unpack #body })
    }

    fn stmt(&mut self, s: &Stmt) -> TokenStream {
        let v = s.var;
        if self.projections.contains(&v) {
            return TokenStream::new();
        }
        if let (0, Some(hook)) = (self.depth, self.hook) {
            if let Some(code) = hook(&mut HookCx(self), s) {
                return code;
            }
        }
        if let (Some(parts), Expr::Soac(soac)) = (self.unzips.get(&v).cloned(), &s.expr) {
            return self.map_unzip(v, soac, &parts);
        }
        let name = self.ident(v);
        let ty = &self.f.vars[v].ty;
        let rty = self.rep_ty(ty);
        let rt = self.rt;
        let f = self.f;
        let id = |x: VarId| ident_of(f, x);
        let annotate = !Self::contains_seq(ty);
        if let Some(e) = self.subst.get(&v) {
            return quote!(let #name = #e;);
        }
        let value = match &s.expr {
            Expr::Const(c) => self.constant(*c, ty),
            Expr::Var(w) => {
                let r = self.rep(*w);
                self.reps.insert(v, r);
                if self.depth == 0 && Self::contains_seq(ty) {
                    self.parts.insert(v, vec![*w]);
                }
                let w = id(*w);
                quote!(#w)
            }
            Expr::Unary(op, a) => {
                let t = self.f.vars[*a].ty.scalar();
                let a = id(*a);
                match (op, t) {
                    (UnOp::Neg, Some(t)) if t.is_int() => quote!(#a.wrapping_neg()),
                    (UnOp::Neg, _) => quote!(-#a),
                    (UnOp::Not, _) => quote!(!#a),
                }
            }
            Expr::Binary(op, a, b) => self.binary(*op, *a, *b, s.span),
            Expr::Cast(a, to) => {
                let a = id(*a);
                let to = Self::scalar_ty(*to);
                quote!(#a as #to)
            }
            Expr::Tuple(vs) => {
                if Self::contains_seq(ty) {
                    let r = Rep::Tuple(vs.iter().map(|x| self.rep(*x)).collect());
                    self.reps.insert(v, r);
                    if self.depth == 0 {
                        self.parts.insert(v, vs.clone());
                    }
                }
                let vs = vs.iter().map(|v| id(*v));
                quote!((#(#vs,)*))
            }
            Expr::Field(t, k) => {
                if let Rep::Tuple(rs) = self.rep(*t) {
                    if let Some(r) = rs.get(*k as usize) {
                        self.reps.insert(v, r.clone());
                    }
                }
                let t = id(*t);
                let k = syn_index(*k as usize);
                quote!(#t.#k)
            }
            Expr::If(c, a, b) => {
                let c = id(*c);
                let a = self.block_owned(a);
                let b = self.block_owned(b);
                let value = quote!(if #c #a else #b);
                if Self::contains_seq(ty) {
                    return self.bind_owned(v, value);
                }
                value
            }
            Expr::Index {
                seq,
                index,
                checked,
            } => {
                let r = Self::elem_rep(&self.rep(*seq), ty);
                self.reps.insert(v, r);
                let x = id(*seq);
                let i = id(*index);
                let in_range = if self.f.vars[*index].ty == Type::usize() {
                    quote!(#i)
                } else {
                    // Unchecked reads with another integer type have indices validated up
                    // front (values of a `Nested` proven in `0..len`), so the cast is exact.
                    quote!((#i as usize))
                };
                match (checked, self.rep(*seq)) {
                    (None, _) => self.read(*seq, in_range),
                    (Some(_), _) if self.unchecked.contains(&v) => self.read(*seq, in_range),
                    (Some(origin), Rep::Slice) => {
                        let name = origin.name();
                        let loc = self.loc(s.span);
                        quote!(#rt::index(#x, #i, #name, #loc))
                    }
                    (Some(origin), _) => {
                        let name = origin.name();
                        let loc = self.loc(s.span);
                        let read = self.read(*seq, quote!(__dpl_j));
                        quote! {{
                            let __dpl_j = match #rt::Idx::checked(#i, #x.len()) {
                                ::core::option::Option::Some(j) => j,
                                ::core::option::Option::None => {
                                    #rt::index_error(#name, #rt::Idx::value(#i), #x.len(), #loc)
                                }
                            };
                            #read
                        }}
                    }
                }
            }
            Expr::Len(x) => {
                let x = id(*x);
                quote!(#x.len())
            }
            Expr::Math(m, args) => self.math(*m, args),
            Expr::Prim { prim, .. } => {
                let msg = format!(
                    "dpl internal error: primitive `{}` reached code generation",
                    prim.name()
                );
                quote!(::core::panic!(#msg))
            }
            Expr::Soac(soac) => return self.soac(v, soac, s.span),
            Expr::Assert(a) => return self.assertion(a, s.span),
        };
        if annotate {
            quote!(let #name: #rty = #value;)
        } else {
            quote!(let #name = #value;)
        }
    }

    fn constant(&self, c: Const, ty: &Type) -> TokenStream {
        let s = ty.scalar().unwrap_or(Scalar::I32);
        match c {
            Const::Bool(b) => quote!(#b),
            Const::Int(i) => {
                use proc_macro2::Literal as L;
                let lit = match s {
                    Scalar::I32 => L::i32_suffixed(i as i32),
                    Scalar::U32 => L::u32_suffixed(i as u32),
                    Scalar::I64 => L::i64_suffixed(i as i64),
                    Scalar::U64 => L::u64_suffixed(i as u64),
                    Scalar::Usize => L::usize_suffixed(i as usize),
                    Scalar::F32 => L::f32_suffixed(i as f32),
                    Scalar::F64 => L::f64_suffixed(i as f64),
                    Scalar::Bool => return if i != 0 { quote!(true) } else { quote!(false) },
                };
                quote!((#lit))
            }
            Const::Float(x) => {
                let t = Self::scalar_ty(s);
                if x.is_nan() {
                    quote!(#t::NAN)
                } else if x.is_infinite() {
                    if x > 0.0 {
                        quote!(#t::INFINITY)
                    } else {
                        quote!(#t::NEG_INFINITY)
                    }
                } else if s == Scalar::F32 {
                    let lit = proc_macro2::Literal::f32_suffixed(x as f32);
                    quote!((#lit))
                } else {
                    let lit = proc_macro2::Literal::f64_suffixed(x);
                    quote!((#lit))
                }
            }
        }
    }

    fn binary(&self, op: BinOp, a: VarId, b: VarId, span: Span) -> TokenStream {
        let t = self.f.vars[a].ty.scalar().unwrap_or(Scalar::I32);
        let (x, y) = (self.ident(a), self.ident(b));
        let int = t.is_int();
        let private = self.private;
        let rt = self.rt;
        match op {
            BinOp::Add if int => quote!(#x.wrapping_add(#y)),
            BinOp::Sub if int => quote!(#x.wrapping_sub(#y)),
            BinOp::Mul if int => quote!(#x.wrapping_mul(#y)),
            BinOp::Div | BinOp::Rem if int => {
                let loc = self.loc(span);
                let f = if op == BinOp::Div {
                    quote!(wrapping_div)
                } else {
                    quote!(wrapping_rem)
                };
                quote! {{
                    if #y == 0 { #rt::raise(#private::Error::DivideByZero { at: *#loc }) }
                    #x.#f(#y)
                }}
            }
            BinOp::Shl => quote!(#x.wrapping_shl(#y as u32)),
            BinOp::Shr => quote!(#x.wrapping_shr(#y as u32)),
            _ => {
                let sym: TokenStream = op.symbol().parse().expect("operator token");
                quote!(#x #sym #y)
            }
        }
    }

    fn math(&self, m: MathFn, args: &[VarId]) -> TokenStream {
        let t = args
            .first()
            .and_then(|a| self.f.vars[*a].ty.scalar())
            .unwrap_or(Scalar::F32);
        let a: Vec<Ident> = args.iter().map(|v| self.ident(*v)).collect();
        let ty = Self::scalar_ty(t);
        if t.is_int() {
            return match m {
                MathFn::Abs => {
                    let x = &a[0];
                    quote!(#x.wrapping_abs())
                }
                MathFn::Min => quote!(::core::cmp::Ord::min(#(#a),*)),
                MathFn::Max => quote!(::core::cmp::Ord::max(#(#a),*)),
                _ => quote!(::core::panic!(
                    "dpl internal error: float function on an integer"
                )),
            };
        }
        let f = format_ident!("{}", m.name());
        quote!(#ty::#f(#(#a),*))
    }

    fn assertion(&self, a: &Assertion, span: Span) -> TokenStream {
        let rt = self.rt;
        let loc = self.loc(span);
        match a {
            Assertion::EqLen { origin, a, b } => {
                let (name, a, b) = (origin.name(), self.ident(*a), self.ident(*b));
                quote!(#rt::check_eq_len(#name, #a, #b, #loc);)
            }
            Assertion::IndicesInRange { origin, idx, len } => {
                let (name, len) = (origin.name(), self.ident(*len));
                let x = self.ident(*idx);
                match self.rep(*idx) {
                    Rep::Nested => quote!(#rt::check_indices(#x.values(), #len, #name, #loc);),
                    Rep::Matrix(_) | Rep::Rows => {
                        let row = if matches!(self.rep(*idx), Rep::Matrix(_)) {
                            quote!(#x.row(__dpl_r))
                        } else {
                            quote!(#x[__dpl_r])
                        };
                        quote! {
                            for __dpl_r in 0..#x.len() {
                                for &__dpl_v in #row.iter() {
                                    if #rt::Idx::checked(__dpl_v, #len).is_none() {
                                        #rt::index_error(#name, #rt::Idx::value(__dpl_v), #len, #loc)
                                    }
                                }
                            }
                        }
                    }
                    _ => quote!(#rt::check_indices(#x, #len, #name, #loc);),
                }
            }
            Assertion::InBounds { origin, index, len } => {
                let (name, i, n) = (origin.name(), self.ident(*index), self.ident(*len));
                quote! {
                    if #rt::Idx::checked(#i, #n).is_none() {
                        #rt::index_error(#name, #rt::Idx::value(#i), #n, #loc)
                    }
                }
            }
            Assertion::NonEmpty { origin, len } => {
                let (name, n) = (origin.name(), self.ident(*len));
                quote!(#rt::check_non_empty(#name, #n, #loc);)
            }
        }
    }

    fn soac(&mut self, v: VarId, s: &Soac, span: Span) -> TokenStream {
        // Loops inside loops use the inner schedule's run time; an outer loop whose elements
        // contain loops balances load per element (the `heavy` helpers).
        let nested = s.elem.body.stmts.iter().any(|st| contains_soac(&st.expr));
        let heavy = self.depth == 0
            && self.heavy.is_some()
            && nested
            && matches!(s.kind, SoacKind::Map | SoacKind::Reduce { .. });
        let rt = match (self.depth, self.heavy) {
            (0, Some(h)) if heavy => h,
            (0, _) => self.rt,
            _ => self.inner_rt,
        };
        // The `heavy` helpers take the number of inner elements of all elements together.
        let work = if heavy {
            let w = self.work(s);
            quote!(#w,)
        } else {
            TokenStream::new()
        };
        if heavy && s.kind == SoacKind::Map {
            if let Some(code) = self.ragged_map(v, s) {
                return code;
            }
            if let Some(code) = self.blocked_map(v, s) {
                return code;
            }
        }
        let n = self.ident(s.len);
        if s.kind == SoacKind::Map && self.depth == 0 {
            if let Some(vs) = self.bounded_variant(v, s) {
                let edge = vs.fast;
                // Loops over heavy elements keep one element function (`heavy::map`).
                let fast = match vs.interior.filter(|_| !heavy) {
                    Some((lo, hi, int)) => quote!(#rt::map_split(#n, #lo, #hi, #edge, #int)),
                    None => quote!(#rt::map(#n, #work #edge)),
                };
                let value = match vs.cond {
                    None => fast,
                    Some(cond) => {
                        let slow = self.lambda(&s.elem, false, &[Rep::Value]);
                        quote!(if #cond { #fast } else { #rt::map(#n, #work #slow) })
                    }
                };
                return self.bind_owned(v, value);
            }
        }
        if let (
            SoacKind::Reduce {
                op,
                init: Some(init),
            },
            false,
        ) = (&s.kind, heavy)
        {
            if let Some(pred) = self.count_predicate(s, op) {
                // `count`: the flags are counted in 32-bit lanes (`rt::count`).
                let (name, init) = (self.ident(v), self.ident(*init));
                let ty = &self.f.vars[v].ty;
                let rty = self.rep_ty(ty);
                self.reps.insert(v, Self::default_rep(ty));
                let pred = self.lambda(&pred, false, &[Rep::Value]);
                return quote!(let #name: #rty = #init.wrapping_add(#rt::count(#n, #pred) as #rty););
            }
        }
        let elem = self.lambda(&s.elem, false, &[Rep::Value]);
        let loc = self.loc(span);
        let name = self.ident(v);
        let ty = &self.f.vars[v].ty;
        let rty = self.rep_ty(ty);
        let value = match &s.kind {
            SoacKind::Map => quote!(#rt::map(#n, #work #elem)),
            SoacKind::Reduce { op, init } => {
                let what = s.kind.origin_name();
                let op = self.lambda(op, false, &[]);
                let init = match init {
                    Some(i) => {
                        let i = self.ident(*i);
                        quote!(::core::option::Option::Some(#i))
                    }
                    None => quote!(::core::option::Option::None),
                };
                self.reps.insert(v, Self::default_rep(ty));
                return quote!(let #name: #rty = #rt::reduce(#n, #work #init, #elem, #op, #what, #loc););
            }
            SoacKind::Scan { op } => {
                let op = self.lambda(op, false, &[]);
                quote!(#rt::scan(#n, #elem, #op))
            }
            SoacKind::ExclusiveScan { op, init } => {
                let op = self.lambda(op, false, &[]);
                let init = self.ident(*init);
                quote!(#rt::exclusive_scan(#n, #init, #elem, #op))
            }
            SoacKind::Filter { pred } => {
                let pred = self.lambda(pred, true, &[]);
                quote!(#rt::filter(#n, #elem, #pred))
            }
            SoacKind::Scatter { dst } => {
                let dst = self.ident(*dst);
                quote!(#rt::scatter(#n, #elem, #dst, "scatter", #loc))
            }
            SoacKind::ScatterReduce { op, dst } => {
                let identity = ty.elem().and_then(|e| self.operator_identity(op, e));
                let op = self.lambda(op, false, &[]);
                let dst = self.ident(*dst);
                match identity {
                    Some(id) => quote!(#rt::scatter_reduce_identity(
                        #n, #elem, #dst, #op, #id, "scatter_reduce", #loc
                    )),
                    None => {
                        quote!(#rt::scatter_reduce(#n, #elem, #dst, #op, "scatter_reduce", #loc))
                    }
                }
            }
            SoacKind::Permute => quote!(#rt::permute(#n, #elem, "permute", #loc)),
            SoacKind::Sort => quote!(#rt::sort(#n, #elem)),
            SoacKind::SortByKey => quote!(#rt::sort_by_key(#n, #elem)),
        };
        self.bind_owned(v, value)
    }
}

/// What a [`Hook`] can use of the generator: names, closures for lambdas, bindings, and
/// the usual generation of a statement.
pub struct HookCx<'g, 'a>(&'g mut Gen<'a>);

impl HookCx<'_, '_> {
    /// The Rust identifier of a variable.
    pub fn ident(&self, v: VarId) -> Ident {
        self.0.ident(v)
    }

    /// A `move` closure for `l` (parameters typed from the IR; `by_ref_first`: the first
    /// parameter is taken by reference, as predicates are).
    pub fn lambda(&mut self, l: &Lambda, by_ref_first: bool) -> TokenStream {
        self.0.lambda(l, by_ref_first, &[])
    }

    /// The identity of the operator `op` on values of type `ty` (`op(identity, x) == x`),
    /// as a Rust value, when `dpl_core::ops` knows it.
    pub fn identity(&self, op: &Lambda, ty: &Type) -> Option<TokenStream> {
        self.0.operator_identity(op, ty)
    }

    /// `&'static Location` of a source span.
    pub fn loc(&self, span: Span) -> TokenStream {
        self.0.loc(span)
    }

    /// The owned Rust type of a value of type `t` (sequences as `Vec`s).
    pub fn owned_ty(&self, t: &Type) -> TokenStream {
        self.0.owned_ty(t)
    }

    /// Binds `v` to the owned value `value` (a `Vec` for a sequence, `Vec<Vec<_>>` for
    /// rows); the function's result may move it out.
    pub fn bind_owned(&mut self, v: VarId, value: TokenStream) -> TokenStream {
        self.0.bind_owned(v, value)
    }

    /// Binds the sequence `v` to `value`, anything that slices to `[E]` (a `Cow`): read
    /// through a borrowed slice, copied when it is the function's result.
    pub fn bind_view(&mut self, v: VarId, value: TokenStream) -> TokenStream {
        let (name, own) = (self.0.ident(v), self.0.own_ident(v));
        self.0.reps.insert(v, Rep::Slice);
        quote! {
            let #own = #value;
            let #name = &#own[..];
        }
    }

    /// Binds `v` to `value`, something that dereferences to a value of `like`'s Rust type (a
    /// `Cow` of it): `v` is then read as `like` is (rows of a `Nested` or `Matrix`
    /// included).
    pub fn bind_like(&mut self, v: VarId, value: TokenStream, like: VarId) -> TokenStream {
        let (name, own) = (self.0.ident(v), self.0.own_ident(v));
        let rep = match self.0.rep(like) {
            Rep::Matrix(_) => Rep::Matrix(false),
            r => r,
        };
        self.0.reps.insert(v, rep);
        quote! {
            let #own = #value;
            let #name = &*#own;
        }
    }

    /// The code the generator makes of `s` without the hook.
    pub fn stmt(&mut self, s: &Stmt) -> TokenStream {
        let hook = self.0.hook.take();
        let code = self.0.stmt(s);
        self.0.hook = hook;
        code
    }
}

impl Gen<'_> {
    /// If `s` is a `reduce` with `+` over an integer type of an element function whose
    /// result is a `bool` cast to that type (what `count` becomes), the element function
    /// returning the `bool` instead.
    fn count_predicate(&self, s: &Soac, op: &Lambda) -> Option<Lambda> {
        let t = &self.f.vars[s.elem.body.result].ty;
        if !t.scalar()?.is_int() || dpl_core::ops::leafwise(op, t)? != [dpl_core::ops::LeafOp::Add]
        {
            return None;
        }
        let last = s.elem.body.stmts.last()?;
        match last.expr {
            // The cast is the last statement: nothing else reads its value.
            Expr::Cast(flag, _)
                if last.var == s.elem.body.result && self.f.vars[flag].ty == Type::bool() =>
            {
                let mut pred = s.elem.clone();
                pred.body.stmts.pop();
                pred.body.result = flag;
                Some(pred)
            }
            _ => None,
        }
    }

    /// The identity of the operator `op` on values of type `ty`, as a Rust value, when
    /// `dpl_core::ops` knows it.
    fn operator_identity(&self, op: &Lambda, ty: &Type) -> Option<TokenStream> {
        let consts = dpl_core::ops::identity(op, ty)?;
        Some(self.identity_value(ty, &mut consts.into_iter()))
    }

    /// The value of type `ty` (scalars and tuples) whose scalar leaves are `consts`, in
    /// order: the identity of a `scatter_reduce` operator.
    fn identity_value(&self, ty: &Type, consts: &mut impl Iterator<Item = Const>) -> TokenStream {
        match ty {
            Type::Tuple(ts) => {
                let parts: Vec<TokenStream> =
                    ts.iter().map(|t| self.identity_value(t, consts)).collect();
                quote!((#(#parts,)*))
            }
            _ => match consts.next() {
                // `-0.0`, the identity of `+` on floats (a literal cannot carry the sign).
                Some(Const::Float(x)) if x == 0.0 && x.is_sign_negative() => {
                    let t = self.rep_ty(ty);
                    quote!((-0.0 as #t))
                }
                Some(c) => self.constant(c, ty),
                None => quote!(::core::panic!(
                    "dpl internal error: identity without a value"
                )),
            },
        }
    }

    /// Finds `unzip(map(f))` in `b`: a `map` producing tuples of 2 or 3 scalars, with no
    /// loop inside its element function, read only by projection maps `map(|i| m[i].k)`
    /// over the same length (what `unzip` becomes). Such a map and its projections are
    /// generated as one loop writing one vector per component (`map_unzip2`/`3`).
    fn plan_unzips(&mut self, b: &Block) {
        for (mi, st) in b.stmts.iter().enumerate() {
            let Expr::Soac(s) = &st.expr else { continue };
            let k = match &self.f.vars[st.var].ty {
                Type::Seq(e) => match &**e {
                    Type::Tuple(ts) if (2..=3).contains(&ts.len()) && !Self::contains_seq(e) => {
                        ts.len()
                    }
                    _ => continue,
                },
                _ => continue,
            };
            let nested = s.elem.body.stmts.iter().any(|x| contains_soac(&x.expr));
            if s.kind != SoacKind::Map || nested {
                continue;
            }
            let m = st.var;
            let mut parts: Vec<Option<VarId>> = vec![None; k];
            let mut found = 0;
            for p in &b.stmts[mi + 1..] {
                if let Some(c) = projection(p, m, s.len) {
                    if parts[c].is_some() {
                        found = usize::MAX;
                        break;
                    }
                    parts[c] = Some(p.var);
                    found += 1;
                }
            }
            if found == 0 || found == usize::MAX || mentions(&self.f.body, m) != found {
                continue;
            }
            self.projections.extend(parts.iter().flatten());
            self.unzips.insert(m, parts);
        }
    }

    /// One loop for a planned `unzip(map(f))`: binds the projections' variables.
    fn map_unzip(&mut self, m: VarId, s: &Soac, parts: &[Option<VarId>]) -> TokenStream {
        let rt = if self.depth == 0 {
            self.rt
        } else {
            self.inner_rt
        };
        let n = self.ident(s.len);
        let helper = format_ident!("map_unzip{}", parts.len());
        let split = format_ident!("map_unzip{}_split", parts.len());
        let vs = if self.depth == 0 {
            self.bounded_variant(m, s)
        } else {
            None
        };
        let call = match vs {
            Some(vs) => {
                let edge = vs.fast;
                let fast = match vs.interior {
                    Some((lo, hi, int)) => quote!(#rt::#split(#n, #lo, #hi, #edge, #int)),
                    None => quote!(#rt::#helper(#n, #edge)),
                };
                match vs.cond {
                    None => fast,
                    Some(cond) => {
                        let slow = self.lambda(&s.elem, false, &[Rep::Value]);
                        quote!(if #cond { #fast } else { #rt::#helper(#n, #slow) })
                    }
                }
            }
            None => {
                let elem = self.lambda(&s.elem, false, &[Rep::Value]);
                quote!(#rt::#helper(#n, #elem))
            }
        };
        let mut names = Vec::new();
        let mut borrows = TokenStream::new();
        for p in parts {
            match p {
                Some(p) => {
                    let (name, own) = (self.ident(*p), self.own_ident(*p));
                    names.push(quote!(#own));
                    borrows.extend(quote!(let #name = &#own[..];));
                    self.owned.insert(*p);
                    self.reps.insert(*p, Rep::Slice);
                }
                None => names.push(quote!(_)),
            }
        }
        quote! {
            let (#(#names,)*) = #call;
            #borrows
        }
    }

    /// For the top-level loop `v` (over `s`): when some of its checked reads have indices
    /// provably below its length ([`dpl_core::ranges::bounded_reads`], e.g. a stencil's
    /// clamped neighbours), the element function with those reads unchecked, and the
    /// condition under which that is safe (`len(x) >= n` for every such `x` whose length
    /// is not already proven equal to `n`; `None` if there is none). The caller runs the
    /// checked element function when the condition fails, so errors are unchanged.
    ///
    /// On `Place::Cpu`, when the element's index is also clamped (`max(i, c) - c`,
    /// `min(i + c, n - 1)`: [`dpl_core::ranges::clamps`]), a third variant for the interior
    /// `lo..hi` where every clamp is the identity computes the neighbours as `i - c` and
    /// `i + c`: contiguous reads, so the loop vectorizes (`map_split`).
    ///
    /// Reads `x[c]` whose index is a value of a `Nested` or `Matrix` parameter `P`
    /// ([`Gen::row_index_variant`]: SpMV's `x[cols[i][k]]`) join the unchecked reads under
    /// the condition `P.__indices_below(x.len())`, answered from a bound that `P` computes
    /// on first use and keeps until its values change.
    fn bounded_variant(&mut self, v: VarId, s: &Soac) -> Option<Variants> {
        let reads: Vec<_> = dpl_core::ranges::bounded_reads(self.f, v)
            .into_iter()
            .filter(|r| self.rep(r.seq) == Rep::Slice)
            .collect();
        let rows = self.row_index_variant(v);
        if reads.is_empty() && rows.is_none() {
            return None;
        }
        let n = self.ident(s.len);
        let mut conds = Vec::new();
        let mut seen = HashSet::new();
        for r in &reads {
            if !r.same_len && seen.insert(r.seq) {
                let x = self.ident(r.seq);
                conds.push(quote!(#x.len() >= #n));
            }
        }
        self.unchecked = reads.iter().map(|r| r.stmt).collect();
        if let Some((stmts, cond)) = rows {
            conds.push(cond);
            self.unchecked.extend(stmts);
        }
        let cond = (!conds.is_empty()).then(|| quote!(#(#conds)&&*));
        let fast = self.lambda(&s.elem, false, &[Rep::Value]);
        let interior = self.interior_variant(v, s);
        self.unchecked.clear();
        Some(Variants {
            cond,
            fast,
            interior,
        })
    }

    /// Whether parameter `p` answers `__indices_below` (a `Nested` or a `Matrix`).
    fn has_index_bound(&self, p: VarId) -> bool {
        matches!(self.rep(p), Rep::Nested | Rep::Matrix(_))
    }

    /// The reads of the top-level loop `v` whose indices are values of a `Nested` or
    /// `Matrix` parameter ([`dpl_core::ranges::row_index_reads`]) and the condition under
    /// which all of them are in range (`P.__indices_below(x.len())` for each pair); `None`
    /// if there is none.
    fn row_index_variant(&self, v: VarId) -> Option<(HashSet<VarId>, TokenStream)> {
        let reads: Vec<_> = dpl_core::ranges::row_index_reads(self.f, v)
            .into_iter()
            .filter(|r| self.rep(r.seq) == Rep::Slice && self.has_index_bound(r.rows))
            .collect();
        if reads.is_empty() {
            return None;
        }
        let mut seen = HashSet::new();
        let conds = reads
            .iter()
            .filter(|r| seen.insert((r.rows, r.seq)))
            .map(|r| {
                let (p, x) = (self.ident(r.rows), self.ident(r.seq));
                quote!(#p.__indices_below(#x.len()))
            });
        let cond = quote!(#(#conds)&&*);
        Some((reads.iter().map(|r| r.stmt).collect(), cond))
    }

    /// The interior variant of [`Gen::bounded_variant`]: `(lo, hi, element function)`, or
    /// `None` without clamps (or off `Place::Cpu`, whose run time has `map_split`).
    fn interior_variant(
        &mut self,
        v: VarId,
        s: &Soac,
    ) -> Option<(TokenStream, TokenStream, TokenStream)> {
        use dpl_core::ranges::{Clamp, Outer};
        self.heavy?;
        let clamps = dpl_core::ranges::clamps(self.f, v);
        if clamps.is_empty() {
            return None;
        }
        let outer = |o: Outer| -> Option<TokenStream> {
            match o {
                Outer::Var(x) => {
                    let x = self.ident(x);
                    Some(quote!(#x))
                }
                Outer::Const(k) => {
                    let k = usize::try_from(k).ok()?;
                    let lit = proc_macro2::Literal::usize_suffixed(k);
                    Some(quote!(#lit))
                }
            }
        };
        let i = self.ident(s.elem.params[0]);
        let n = self.ident(s.len);
        let (mut lows, mut highs) = (Vec::new(), Vec::new());
        let mut forms = HashMap::new();
        for c in &clamps {
            match *c {
                Clamp::Low { stmt, c } => {
                    let c = outer(c)?;
                    forms.insert(stmt, quote!(#i.wrapping_sub(#c)));
                    lows.push(c);
                }
                Clamp::High { stmt, x, c } => {
                    let x = self.ident(x);
                    forms.insert(stmt, quote!(#x));
                    highs.push(match c {
                        Some(c) => outer(c)?,
                        None => quote!(0usize),
                    });
                }
            }
        }
        // SAFETY of the forms: inside `lo..hi`, `i >= c` for every low clamp and
        // `i + c < n` for every high clamp, so each clamp equals its simpler form.
        let lo = quote!(0usize #(.max(#lows))*);
        let hi = quote!(#n.saturating_sub(0usize #(.max(#highs))*));
        self.subst = forms;
        let int = self.lambda(&s.elem, false, &[Rep::Value]);
        self.subst.clear();
        Some((lo, hi, int))
    }

    /// A top-level `map` whose element function returns a row of scalars computed by a
    /// `map`, `scan` or `exclusive_scan` (length known before the row is computed) or a
    /// `filter` (known after), written as one flat ragged result without a `Vec` per row:
    /// `heavy::ragged` (sizes first: the statements the row's length depends on run in a
    /// first pass, then each row is written in place by the `*_into` helpers) or
    /// `heavy::ragged_push` (rows appended to per-chunk buffers by `filter_push`). The
    /// variable becomes a `dpl::Nested`. `None` when the map has another shape, or when
    /// the row's length depends on a statement that is not a plain, non-failing scalar
    /// computation (a loop, a checked read, an integer division).
    fn ragged_map(&mut self, v: VarId, s: &Soac) -> Option<TokenStream> {
        let Type::Seq(row_ty) = &self.f.vars[v].ty else {
            return None;
        };
        let Type::Seq(elem_ty) = &**row_ty else {
            return None;
        };
        let heavy = self.heavy?.clone();
        let body = &s.elem.body;
        let (last, prefix) = body.stmts.split_last()?;
        let Expr::Soac(inner) = &last.expr else {
            return None;
        };
        if Self::contains_seq(elem_ty) || last.var != body.result || s.elem.params.len() != 1 {
            return None;
        }
        let sized = match inner.kind {
            SoacKind::Map | SoacKind::Scan { .. } | SoacKind::ExclusiveScan { .. } => {
                Some(self.size_slice(prefix, inner.len, s.elem.params[0])?)
            }
            SoacKind::Filter { .. } => None,
            _ => return None,
        };
        let work = self.work(s);
        let n = self.ident(s.len);
        let e = self.elem_ty(elem_ty);
        let i = s.elem.params[0];
        self.reps.insert(i, Rep::Value);
        let ip = self.ident(i);
        let name = self.ident(v);
        let own = self.own_ident(v);
        let streamed = self.streamed_producer(prefix, inner, row_ty);
        self.depth += 1;
        let rt = self.inner_rt.clone();
        let len = self.ident(inner.len);
        let pre = self.stmts(&Block {
            stmts: prefix
                .iter()
                .filter(|st| Some(st.var) != streamed.map(|(t, _)| t.var))
                .cloned()
                .collect(),
            result: body.result,
        });
        if let Some((t, producer)) = streamed {
            // The row is `map(g, p)` over a producer `p` of the same length read only at
            // the map's index: `p` is written into the row's slot, then `g` applied in place.
            let into = self.write_row_call(&rt, producer, &len);
            let j = inner.elem.params[0];
            self.reps.insert(j, Rep::Value);
            let jp = self.ident(j);
            for st in &inner.elem.body.stmts {
                if matches!(&st.expr, Expr::Index { seq, .. } if *seq == t.var) {
                    self.subst.insert(st.var, quote!(__dpl_old));
                }
            }
            self.depth += 1;
            let g = self.block_owned(&inner.elem.body);
            self.depth -= 1;
            self.subst.clear();
            self.depth -= 1;
            let keep = self.size_slice(prefix, inner.len, i)?;
            let sizes = self.stmts(&Block {
                stmts: keep.iter().map(|&k| prefix[k].clone()).collect(),
                result: inner.len,
            });
            self.owned.insert(v);
            self.reps.insert(v, Rep::Nested);
            // SAFETY (of the generated block): `*_into` writes every slot of the row (its
            // length checked), so `map_in_place` reads initialised values.
            return Some(quote! {
                let #own: ::dpl::Nested<#e> = ::dpl::Nested::from(unsafe {
                    #heavy::ragged(#n, #work,
                        move |#ip: usize| -> usize { #sizes #len },
                        move |#ip: usize, __dpl_out: &mut [::core::mem::MaybeUninit<#e>]| {
                            #pre
                            #into;
                            #rt::map_in_place(__dpl_out, move |#jp: usize, __dpl_old: #e| -> #e #g)
                        })
                });
                let #name = &#own;
            });
        }
        let elem = self.lambda(&inner.elem, false, &[Rep::Value]);
        let value = match (&inner.kind, sized) {
            (SoacKind::Filter { pred }, None) => {
                let pred = self.lambda(pred, true, &[]);
                quote! {
                    ::dpl::Nested::from(#heavy::ragged_push(#n, #work,
                        move |#ip: usize, __dpl_out: &mut ::std::vec::Vec<#e>| {
                            #pre
                            #rt::filter_push(__dpl_out, #len, #elem, #pred)
                        }))
                }
            }
            (kind, Some(keep)) => {
                let into = match kind {
                    SoacKind::Scan { op } => {
                        let op = self.lambda(op, false, &[]);
                        quote!(#rt::scan_into(__dpl_out, #len, #elem, #op))
                    }
                    SoacKind::ExclusiveScan { op, init } => {
                        let op = self.lambda(op, false, &[]);
                        let init = self.ident(*init);
                        quote!(#rt::exclusive_scan_into(__dpl_out, #len, #init, #elem, #op))
                    }
                    _ => quote!(#rt::map_into(__dpl_out, #len, #elem)),
                };
                let sizes = self.stmts(&Block {
                    stmts: keep.iter().map(|&k| prefix[k].clone()).collect(),
                    result: inner.len,
                });
                // SAFETY (of the generated block): the `*_into` helpers check that the row's
                // slot has the length they write and write every slot of it.
                quote! {
                    ::dpl::Nested::from(unsafe {
                        #heavy::ragged(#n, #work,
                            move |#ip: usize| -> usize { #sizes #len },
                            move |#ip: usize, __dpl_out: &mut [::core::mem::MaybeUninit<#e>]| {
                                #pre
                                #into
                            })
                    })
                }
            }
            _ => unreachable!("filters are pushed, the other kinds sized"),
        };
        self.depth -= 1;
        self.owned.insert(v);
        self.reps.insert(v, Rep::Nested);
        Some(quote! {
            let #own: ::dpl::Nested<#e> = #value;
            let #name = &#own;
        })
    }

    /// For a row computed as `map(g, p)` (`inner`): the statement of `p` and its combinator
    /// when `p` is a `map`, `scan` or `exclusive_scan` of the row's element type and length,
    /// computed in `prefix` and read nowhere but by `g`, at `g`'s own index. The row can
    /// then be written as `p` and mapped in place, without a temporary.
    fn streamed_producer<'s>(
        &self,
        prefix: &'s [Stmt],
        inner: &Soac,
        row_ty: &Type,
    ) -> Option<(&'s Stmt, &'s Soac)> {
        if inner.kind != SoacKind::Map || inner.elem.params.len() != 1 {
            return None;
        }
        let j = inner.elem.params[0];
        prefix.iter().find_map(|t| {
            let Expr::Soac(p) = &t.expr else {
                return None;
            };
            let kind_ok = matches!(
                p.kind,
                SoacKind::Map | SoacKind::Scan { .. } | SoacKind::ExclusiveScan { .. }
            );
            if !kind_ok || p.len != inner.len || self.f.vars[t.var].ty != *row_ty {
                return None;
            }
            let reads = inner
                .elem
                .body
                .stmts
                .iter()
                .filter(|st| {
                    matches!(&st.expr, Expr::Index { seq, index, checked: None }
                        if *seq == t.var && *index == j)
                })
                .count();
            (reads > 0 && mentions(&self.f.body, t.var) == reads).then_some((t, &**p))
        })
    }

    /// `p` (a `map`, `scan` or `exclusive_scan` of length `len`) written into `__dpl_out`
    /// with `rt`'s `*_into` helpers.
    fn write_row_call(&mut self, rt: &TokenStream, p: &Soac, len: &Ident) -> TokenStream {
        let elem = self.lambda(&p.elem, false, &[Rep::Value]);
        match &p.kind {
            SoacKind::Scan { op } => {
                let op = self.lambda(op, false, &[]);
                quote!(#rt::scan_into(__dpl_out, #len, #elem, #op))
            }
            SoacKind::ExclusiveScan { op, init } => {
                let op = self.lambda(op, false, &[]);
                let init = self.ident(*init);
                quote!(#rt::exclusive_scan_into(__dpl_out, #len, #init, #elem, #op))
            }
            _ => quote!(#rt::map_into(__dpl_out, #len, #elem)),
        }
    }

    /// A top-level `map` over the rows of a `Matrix` with strided rows (the general body
    /// variant: e.g. column-major) whose element is a reduction over the row, with an
    /// initial value, between plain scalar statements: ELL SpMV,
    /// `map(|a, c| sum(map(|v, j| v * x[j], a, c)), vals, cols)`. Written as
    /// `heavy::map_reduce_blocked`: rows in blocks, the inner loop down one column of the
    /// block (contiguous for column-major rows). `None` for any other shape.
    fn blocked_map(&mut self, v: VarId, s: &Soac) -> Option<TokenStream> {
        let heavy = self.heavy?.clone();
        let body = &s.elem.body;
        if s.elem.params.len() != 1 || Self::contains_seq(&self.f.vars[body.result].ty) {
            return None;
        }
        let i = s.elem.params[0];
        let at = body
            .stmts
            .iter()
            .position(|st| matches!(st.expr, Expr::Soac(_)))?;
        let (prefix, rest) = body.stmts.split_at(at);
        let (red_stmt, suffix) = rest.split_first()?;
        let Expr::Soac(red) = &red_stmt.expr else {
            return None;
        };
        let SoacKind::Reduce {
            op,
            init: Some(init),
        } = &red.kind
        else {
            return None;
        };
        if suffix.iter().any(|st| contains_soac(&st.expr))
            || prefix.iter().any(|st| contains_soac(&st.expr))
        {
            return None;
        }
        // The reduction runs over a row of a strided matrix, read at this element's index.
        let row_of = |x: VarId| {
            prefix.iter().find_map(|st| match &st.expr {
                Expr::Index {
                    seq,
                    index,
                    checked: None,
                } if st.var == x && *index == i && self.rep(*seq) == Rep::Matrix(false) => {
                    Some(*seq)
                }
                _ => None,
            })
        };
        let matrix = prefix.iter().find_map(|st| match &st.expr {
            Expr::Len(a) if st.var == red.len => row_of(*a),
            _ => None,
        })?;
        // What one step needs: the statements the element function and the operator read.
        let mut used = HashSet::new();
        uses(&red.elem.body, &mut used);
        uses(&op.body, &mut used);
        let keep = self.slice_of(prefix, used, i)?;
        let acc_ty = self.rep_ty(&self.f.vars[red_stmt.var].ty);
        let out_ty = self.owned_ty(&self.f.vars[body.result].ty);
        let work = self.work(s);
        let n = self.ident(s.len);
        let m = self.ident(matrix);
        // The loop, generated once with the reads in `self.unchecked` unchecked.
        let generate = |g: &mut Self| {
            g.reps.insert(i, Rep::Value);
            let ip = g.ident(i);
            let red_name = g.ident(red_stmt.var);
            let init = g.ident(*init);
            let result = g.ident(body.result);
            let row = g.lambda(&s.elem, false, &[Rep::Value]);
            g.depth += 1;
            let pre = g.stmts(&Block {
                stmts: prefix.to_vec(),
                result: body.result,
            });
            let step_pre = g.stmts(&Block {
                stmts: keep.iter().map(|&k| prefix[k].clone()).collect(),
                result: body.result,
            });
            let elem = g.lambda(&red.elem, false, &[Rep::Value]);
            let op = g.lambda(op, false, &[]);
            let post = g.stmts(&Block {
                stmts: suffix.to_vec(),
                result: body.result,
            });
            g.depth -= 1;
            quote! {
                #heavy::map_reduce_blocked(#n, #work, #m.cols(),
                    move |#ip: usize| -> #acc_ty { #pre #init },
                    move |#ip: usize, __dpl_k: usize, __dpl_acc: #acc_ty| -> #acc_ty {
                        #step_pre
                        (#op)(__dpl_acc, (#elem)(__dpl_k))
                    },
                    move |#ip: usize, __dpl_acc: #acc_ty| -> #out_ty {
                        #pre
                        let #red_name: #acc_ty = __dpl_acc;
                        #post
                        #result
                    },
                    #row)
            }
        };
        // Reads indexed by a parameter's values (ELL's `x[cols[i][k]]`): unchecked in a
        // variant run when the parameter's cached bound allows (see `bounded_variant`).
        let value = match self.row_index_variant(v) {
            Some((stmts, cond)) => {
                let outer = std::mem::replace(&mut self.unchecked, stmts);
                let fast = generate(self);
                self.unchecked = outer;
                let slow = generate(self);
                quote!(if #cond { #fast } else { #slow })
            }
            None => generate(self),
        };
        Some(self.bind_owned(v, value))
    }

    /// The statements of `prefix` (by position) that the variables `need` depend on, if
    /// all of them are plain scalar computations (see [`Gen::size_slice`]).
    fn slice_of(&self, prefix: &[Stmt], need: HashSet<VarId>, i: VarId) -> Option<Vec<usize>> {
        let asserts = prefix.iter().any(|st| matches!(st.expr, Expr::Assert(_)));
        let mut need = need;
        let mut keep = Vec::new();
        for (k, st) in prefix.iter().enumerate().rev() {
            if !need.contains(&st.var) {
                continue;
            }
            if !self.plain(prefix, &st.expr, i, asserts) {
                return None;
            }
            need.extend(st.expr.operands());
            keep.push(k);
        }
        keep.reverse();
        Some(keep)
    }

    /// The statements of `prefix` (by position) that the length `len` depends on, if all
    /// of them are plain scalar computations that cannot fail and contain no loop, so a
    /// first pass can run them to size each row. Unchecked reads are allowed at the
    /// element's own index `i` (in range by construction of the outer loop) or anywhere
    /// when the element function asserts nothing itself (their safety was then established
    /// before the loop).
    fn size_slice(&self, prefix: &[Stmt], len: VarId, i: VarId) -> Option<Vec<usize>> {
        self.slice_of(prefix, HashSet::from([len]), i)
    }

    /// Whether `e` (a statement of `prefix`) is a plain scalar computation that cannot fail
    /// and contains no loop (see [`Gen::size_slice`]); `asserts`: `prefix` asserts
    /// something.
    fn plain(&self, prefix: &[Stmt], e: &Expr, i: VarId, asserts: bool) -> bool {
        match e {
            Expr::Const(_)
            | Expr::Var(_)
            | Expr::Unary(..)
            | Expr::Cast(..)
            | Expr::Tuple(_)
            | Expr::Field(..)
            | Expr::Len(_)
            | Expr::Math(..) => true,
            Expr::Binary(op, a, b) => {
                // An integer division fails only by a zero divisor: allowed when the
                // divisor is a small positive constant (non-zero in every type).
                let int = self.f.vars[*a].ty.scalar().is_none_or(|t| t.is_int());
                let nonzero = prefix.iter().any(|d| {
                    d.var == *b
                        && matches!(d.expr, Expr::Const(Const::Int(k)) if (1..=127).contains(&k))
                });
                !(int && matches!(op, BinOp::Div | BinOp::Rem)) || nonzero
            }
            Expr::Index {
                index,
                checked: None,
                ..
            } => *index == i || !asserts,
            _ => false,
        }
    }

    /// The number of inner elements a loop over heavy elements walks, as an expression: the
    /// total length of the first `Nested` or `Matrix` whose rows the element function reads
    /// at its own index, or `usize::MAX` (unknown) when there is none.
    fn work(&self, s: &Soac) -> TokenStream {
        let i = s.elem.params.first().copied();
        for st in &s.elem.body.stmts {
            if let Expr::Index { seq, index, .. } = &st.expr {
                if Some(*index) != i {
                    continue;
                }
                let x = self.ident(*seq);
                match self.rep(*seq) {
                    Rep::Nested => return quote!(#x.total_len()),
                    Rep::Matrix(_) => return quote!(#x.rows().saturating_mul(#x.cols())),
                    _ => {}
                }
            }
        }
        quote!(usize::MAX)
    }
}

/// If `p` is `map(n, |i| m[i].k)` (a projection of `unzip`), the component `k`.
fn projection(p: &Stmt, m: VarId, n: VarId) -> Option<usize> {
    let Expr::Soac(s) = &p.expr else { return None };
    match s.projection() {
        Some((seq, k)) if seq == m && s.len == n => Some(k as usize),
        _ => None,
    }
}

/// How many times `v` is read in `b` (operands and block results, nested blocks included).
fn mentions(b: &Block, v: VarId) -> usize {
    let mut n = usize::from(b.result == v);
    for s in &b.stmts {
        n += s.expr.operands().iter().filter(|&&x| x == v).count();
        s.expr.for_each_block(&mut |blk| n += mentions(blk, v));
    }
    n
}

/// Adds every variable that `b` reads (operands and results, nested blocks included).
fn uses(b: &Block, out: &mut HashSet<VarId>) {
    out.insert(b.result);
    for s in &b.stmts {
        out.extend(s.expr.operands());
        s.expr.for_each_block(&mut |blk| uses(blk, out));
    }
}

/// True when `e` is or contains a combinator (a loop).
fn contains_soac(e: &Expr) -> bool {
    if matches!(e, Expr::Soac(_) | Expr::Prim { .. }) {
        return true;
    }
    let mut found = false;
    e.for_each_block(&mut |b| found |= b.stmts.iter().any(|s| contains_soac(&s.expr)));
    found
}

/// The Rust identifier of a variable: `v<index>_<name>`.
/// The local holding the values of a `Nested` parameter read through shared offsets
/// (underscored: a variant may not read it).
fn shared_values(name: &Ident) -> Ident {
    format_ident!("__dpl_values_{}", name)
}

fn ident_of(f: &Function, v: VarId) -> Ident {
    let name: String = f.vars[v]
        .name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format_ident!("v{}_{}", v.index(), name)
}

fn syn_index(k: usize) -> TokenStream {
    let lit = proc_macro2::Literal::usize_unsuffixed(k);
    quote!(#lit)
}
