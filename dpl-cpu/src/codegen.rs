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
//! compile to unchecked loads; the assertions that make them safe precede them.

use dpl_core::ir::*;
use proc_macro2::{Ident, Span as PmSpan, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use std::collections::HashSet;

/// How a parameter arrives in Rust.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamRepr {
    /// A scalar passed by value.
    Scalar,
    /// Anything that slices to `[E]` with `&x[..]`: `&[E]`, `&Vec<E>`, `Vec<E>`.
    Slice,
}

/// What the generated function body must produce.
#[derive(Clone, Debug, PartialEq)]
pub enum RetRepr {
    /// A scalar.
    Scalar,
    /// A `Vec<E>`.
    Vec,
    /// A tuple of the given parts.
    Tuple(Vec<RetRepr>),
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
}

/// The body of the function as an expression producing its (inner) result.
pub fn body(input: &FnInput<'_>) -> TokenStream {
    let mut g = Gen { f: input.func, span: input.span, rt: &input.rt, private: &input.private, owned: HashSet::new() };
    let mut prologue = TokenStream::new();
    for ((ident, repr), &v) in input.params.iter().zip(&input.func.params) {
        let name = g.ident(v);
        let ty = g.rep_ty(&input.func.vars[v].ty);
        prologue.extend(match repr {
            ParamRepr::Scalar => quote! { let #name: #ty = #ident; },
            ParamRepr::Slice => quote! { let #name: #ty = &#ident[..]; },
        });
    }
    let stmts = g.stmts(&input.func.body);
    let result = g.owned_value(input.func.body.result);
    quote! {{ #prologue #stmts #result }}
}

struct Gen<'a> {
    f: &'a Function,
    span: &'a dyn Fn(Span) -> PmSpan,
    rt: &'a TokenStream,
    private: &'a TokenStream,
    /// Variables backed by an owned local `<name>__own`.
    owned: HashSet<VarId>,
}

impl Gen<'_> {
    fn ident(&self, v: VarId) -> Ident {
        let name: String = self.f.vars[v]
            .name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' })
            .collect();
        format_ident!("v{}_{}", v.index(), name)
    }

    fn own_ident(&self, v: VarId) -> Ident {
        format_ident!("{}__own", self.ident(v))
    }

    fn scalar_ty(s: Scalar) -> TokenStream {
        let id = format_ident!("{}", s.name());
        quote!(#id)
    }

    /// The type of a variable's representation (sequences borrowed).
    fn rep_ty(&self, t: &Type) -> TokenStream {
        match t {
            Type::Scalar(s) => Self::scalar_ty(*s),
            Type::Seq(e) => {
                let e = self.elem_ty(e);
                quote!(&[#e])
            }
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

    fn contains_seq(t: &Type) -> bool {
        match t {
            Type::Seq(_) => true,
            Type::Tuple(ts) => ts.iter().any(Self::contains_seq),
            _ => false,
        }
    }

    /// `Location` of a statement, pointing at the user's source.
    fn loc(&self, span: Span) -> TokenStream {
        let sp = (self.span)(span);
        let private = self.private;
        quote_spanned! {sp=>
            #private::Location { file: ::core::file!(), line: ::core::line!(), column: ::core::column!() }
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

    /// An expression producing an owned copy (or move) of `v`'s value.
    fn owned_value(&self, v: VarId) -> TokenStream {
        let t = &self.f.vars[v].ty;
        let name = self.ident(v);
        if !Self::contains_seq(t) {
            return quote!(#name);
        }
        if self.owned.contains(&v) {
            let own = self.own_ident(v);
            return quote!(#own);
        }
        Self::to_owned_expr(quote!(#name), t)
    }

    fn to_owned_expr(e: TokenStream, t: &Type) -> TokenStream {
        match t {
            Type::Seq(_) => quote!(<[_]>::to_vec(#e)),
            Type::Tuple(ts) if ts.iter().any(Self::contains_seq) => {
                let parts = ts.iter().enumerate().map(|(k, t)| {
                    let k = syn_index(k);
                    Self::to_owned_expr(quote!((#e).#k), t)
                });
                quote!((#(#parts,)*))
            }
            _ => e,
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

    /// Binds `v` to an owned value produced by `value`.
    fn bind_owned(&mut self, v: VarId, value: TokenStream) -> TokenStream {
        let t = &self.f.vars[v].ty;
        let name = self.ident(v);
        let own = self.own_ident(v);
        let oty = self.owned_ty(t);
        let rty = self.rep_ty(t);
        let borrow = Self::borrow_expr(quote!(#own), t);
        self.owned.insert(v);
        quote! {
            let #own: #oty = #value;
            let #name: #rty = #borrow;
        }
    }

    fn lambda(&mut self, l: &Lambda, by_ref_first: bool) -> TokenStream {
        let mut params = Vec::new();
        let mut unpack = TokenStream::new();
        for (k, p) in l.params.iter().enumerate() {
            let name = self.ident(*p);
            let t = self.rep_ty(&self.f.vars[*p].ty);
            if by_ref_first && k == 0 {
                let tmp = format_ident!("{}_ref", name);
                params.push(quote!(#tmp: &#t));
                unpack.extend(quote!(let #name: #t = *#tmp;));
            } else {
                params.push(quote!(#name: #t));
            }
        }
        let rty = self.owned_ty(&self.f.vars[l.body.result].ty);
        let body = self.block_owned(&l.body);
        quote!(move |#(#params),*| -> #rty { #unpack #body })
    }

    fn stmt(&mut self, s: &Stmt) -> TokenStream {
        let v = s.var;
        let name = self.ident(v);
        let ty = &self.f.vars[v].ty;
        let rty = self.rep_ty(ty);
        let rt = self.rt;
        let id = |x: VarId| self.ident(x);
        let value = match &s.expr {
            Expr::Const(c) => self.constant(*c, ty),
            Expr::Var(w) => {
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
                let vs = vs.iter().map(|v| id(*v));
                quote!((#(#vs,)*))
            }
            Expr::Field(t, k) => {
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
            Expr::Index { seq, index, checked } => {
                let x = id(*seq);
                let i = id(*index);
                match checked {
                    None => quote!(unsafe { #rt::read(#x, #i) }),
                    Some(origin) => {
                        let name = origin.name();
                        let loc = self.loc(s.span);
                        quote!(#rt::index(#x, #i, #name, #loc))
                    }
                }
            }
            Expr::Len(x) => {
                let x = id(*x);
                quote!(#x.len())
            }
            Expr::Math(m, args) => self.math(*m, args),
            Expr::Prim { prim, .. } => {
                let msg = format!("dpl internal error: primitive `{}` reached code generation", prim.name());
                quote!(::core::panic!(#msg))
            }
            Expr::Soac(soac) => return self.soac(v, soac, s.span),
            Expr::Assert(a) => return self.assertion(a, s.span),
        };
        quote!(let #name: #rty = #value;)
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
                    if x > 0.0 { quote!(#t::INFINITY) } else { quote!(#t::NEG_INFINITY) }
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
                let f = if op == BinOp::Div { quote!(wrapping_div) } else { quote!(wrapping_rem) };
                quote! {{
                    if #y == 0 { #rt::raise(#private::Error::DivideByZero { at: #loc }) }
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
        let t = args.first().and_then(|a| self.f.vars[*a].ty.scalar()).unwrap_or(Scalar::F32);
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
                _ => quote!(::core::panic!("dpl internal error: float function on an integer")),
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
                let (name, idx, len) = (origin.name(), self.ident(*idx), self.ident(*len));
                quote!(#rt::check_indices(#idx, #len, #name, #loc);)
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
        let rt = self.rt;
        let n = self.ident(s.len);
        let elem = self.lambda(&s.elem, false);
        let loc = self.loc(span);
        let name = self.ident(v);
        let ty = &self.f.vars[v].ty;
        let rty = self.rep_ty(ty);
        let value = match &s.kind {
            SoacKind::Map => quote!(#rt::map(#n, #elem)),
            SoacKind::Reduce { op, init } => {
                let what = s.kind.origin_name();
                let op = self.lambda(op, false);
                let init = match init {
                    Some(i) => {
                        let i = self.ident(*i);
                        quote!(::core::option::Option::Some(#i))
                    }
                    None => quote!(::core::option::Option::None),
                };
                return quote!(let #name: #rty = #rt::reduce(#n, #init, #elem, #op, #what, #loc););
            }
            SoacKind::Scan { op } => {
                let op = self.lambda(op, false);
                quote!(#rt::scan(#n, #elem, #op))
            }
            SoacKind::ExclusiveScan { op, init } => {
                let op = self.lambda(op, false);
                let init = self.ident(*init);
                quote!(#rt::exclusive_scan(#n, #init, #elem, #op))
            }
            SoacKind::Filter { pred } => {
                let pred = self.lambda(pred, true);
                quote!(#rt::filter(#n, #elem, #pred))
            }
            SoacKind::Scatter { dst } => {
                let dst = self.ident(*dst);
                quote!(#rt::scatter(#n, #elem, #dst, "scatter", #loc))
            }
            SoacKind::ScatterReduce { op, dst } => {
                let op = self.lambda(op, false);
                let dst = self.ident(*dst);
                quote!(#rt::scatter_reduce(#n, #elem, #dst, #op, "scatter_reduce", #loc))
            }
            SoacKind::Permute => quote!(#rt::permute(#n, #elem, "permute", #loc)),
        };
        self.bind_owned(v, value)
    }
}

fn syn_index(k: usize) -> TokenStream {
    let lit = proc_macro2::Literal::usize_unsuffixed(k);
    quote!(#lit)
}
