//! The element compiler: blocks, closures and statements, scalar constants, operators and
//! math functions, and the assertions that guard unchecked reads.

use dpl_core::ir::{
    Assertion, BinOp, Block, Const, Expr, Lambda, MathFn, Scalar, Span, Stmt, Type, UnOp, VarId,
};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote, quote_spanned};

use super::value::Rep;
use super::{Gen, HookCx, ident_of, syn_index};

impl Gen<'_> {
    /// `&'static Location` of a statement, pointing at the user's source.
    pub(super) fn loc(&self, span: Span) -> TokenStream {
        let sp = (self.span)(span);
        let private = self.private;
        // A reference to a promoted constant: one pointer on the cold path of a check.
        quote_spanned! {sp=>
            &#private::Location { file: ::core::file!(), line: ::core::line!(), column: ::core::column!() }
        }
    }

    pub(super) fn stmts(&mut self, b: &Block) -> TokenStream {
        let mut out = TokenStream::new();
        for s in &b.stmts {
            out.extend(self.stmt(s));
        }
        out
    }

    /// A block as an expression producing an owned value: the owned locals the block
    /// defines are moved into it, anything else is copied.
    pub(super) fn block_owned(&mut self, b: &Block) -> TokenStream {
        let stmts = self.stmts(b);
        let mut movable = super::block_vars(b);
        movable.retain(|x| self.owned.contains(x));
        let r = self.moved_value(b.result, &movable);
        quote!({ #stmts #r })
    }

    /// A closure for `l`; `param_reps` gives the representation of each parameter
    /// (missing ones are derived from the types).
    pub(super) fn lambda(
        &mut self,
        l: &Lambda,
        by_ref_first: bool,
        param_reps: &[Rep],
    ) -> TokenStream {
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

    pub(super) fn stmt(&mut self, s: &Stmt) -> TokenStream {
        let v = s.var;
        if self.projections.contains(&v) || self.hoisted.contains(&v) {
            return TokenStream::new();
        }
        if let (0, Expr::Soac(soac)) = (self.depth, &s.expr) {
            if self.map_reduces.contains_key(&v)
                && let Some(code) = self.map_reduce(v, soac, s.span)
            {
                return code;
            }
            if let Some(optional) = self.fused_reduces.remove(&v) {
                return self.fused_reduce(v, soac, optional, s.span);
            }
        }
        if let (0, Some(hook)) = (self.depth, self.hook)
            && let Some(code) = hook(&mut HookCx(self), s)
        {
            return code;
        }
        if let (0, Some((y, p, check)), Expr::Soac(soac)) =
            (self.depth, self.in_place.get(&v).cloned(), &s.expr)
        {
            return self.update(v, soac, (y, p, check), s.span);
        }
        if let (Some(parts), Expr::Soac(soac)) = (self.unzips.get(&v).cloned(), &s.expr) {
            return self.map_unzip(v, soac, &parts, s.span);
        }
        let name = self.ident(v);
        let ty = &self.f.vars[v].ty;
        let rty = self.rep_ty(ty);
        let rt = self.rt;
        let f = self.f;
        let id = |x: VarId| ident_of(f, x);
        let annotate = !Self::contains_seq(ty);
        // Operations whose NaN results must be replaced by the canonical NaN where their
        // bits can be seen (an integer cast to a float is never NaN).
        let produces_nan = self.nan_observed.contains(&v)
            && !self.nan_deferred.contains(&v)
            && match &s.expr {
                Expr::Unary(..) | Expr::Binary(..) | Expr::Math(..) => true,
                Expr::Cast(a, _) => self.f.vars[*a].ty.scalar().is_some_and(|t| t.is_float()),
                _ => false,
            };
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
            Expr::Cast(a, to) => self.cast(*a, *to),
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
                if let Rep::Tuple(rs) = self.rep(*t)
                    && let Some(r) = rs.get(*k as usize)
                {
                    self.reps.insert(v, r.clone());
                }
                if self.owned.contains(t) && Self::contains_seq(ty) {
                    self.fields.insert(v, (*t, *k));
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
            Expr::Loop(l) if l.params.iter().any(|p| Self::contains_seq(&f.vars[*p].ty)) => {
                return self.seq_loop(v, l);
            }
            Expr::Loop(l) => {
                // The params as mutable locals; the condition and the body are blocks over
                // them (the body's value is the tuple of their next values).
                let params: Vec<Ident> = l.params.iter().map(|p| self.ident(*p)).collect();
                let inits: Vec<Ident> = l.inits.iter().map(|p| self.ident(*p)).collect();
                let cond = self.block_owned(&l.cond);
                let body = self.block_owned(&l.body);
                // The carried floats whose NaNs were left as they came: canonical once, here.
                let outputs = self.loop_outputs(v, l, |k| {
                    let p = &params[k];
                    quote!(#p)
                });
                quote!({
                    let (#(mut #params,)*) = (#(#inits,)*);
                    loop {
                        let __dpl_go: bool = #cond;
                        if !__dpl_go {
                            break;
                        }
                        (#(#params,)*) = #body;
                    }
                    (#(#outputs,)*)
                })
            }
        };
        let value = if produces_nan {
            self.canonical(value, ty)
        } else {
            value
        };
        if annotate {
            quote!(let #name: #rty = #value;)
        } else {
            quote!(let #name = #value;)
        }
    }

    /// A loop at the top level of the body that carries sequences: its params live in one
    /// owned state tuple (sequences as `Vec`s), viewed as the usual representations at the
    /// start of each iteration; the body's next values move the sequences it computes into
    /// the state (the others, carried unchanged, are copied: [`Gen::block_owned`]). The
    /// loop's value is the final state.
    fn seq_loop(&mut self, v: VarId, l: &dpl_core::ir::Loop) -> TokenStream {
        let state = format_ident!("__dpl_state_{}", v.index());
        // An owned local read by nothing else moves into the state.
        let inits: Vec<TokenStream> = l
            .inits
            .iter()
            .map(|x| {
                if self.owned.contains(x) && super::mentions(&self.f.body, *x) == 1 {
                    self.owned_value(*x)
                } else {
                    let name = self.ident(*x);
                    Self::to_owned_expr(quote!(#name), &self.rep(*x))
                }
            })
            .collect();
        let mut views = TokenStream::new();
        for (k, p) in l.params.iter().enumerate() {
            let ty = &self.f.vars[*p].ty;
            let name = self.ident(*p);
            let k = syn_index(k);
            let view = Self::borrow_expr(quote!(#state.#k), ty);
            self.reps.insert(*p, Self::default_rep(ty));
            views.extend(quote!(let #name = #view;));
        }
        let cond = self.block_owned(&l.cond);
        let next = self.block_owned(&l.body);
        let fin = if self.nan_loops.contains_key(&v) {
            let outputs = self.loop_outputs(v, l, |k| {
                let k = syn_index(k);
                quote!(#state.#k)
            });
            quote!((#(#outputs,)*))
        } else {
            quote!(#state)
        };
        let value = quote!({
            let mut #state = (#(#inits,)*);
            loop {
                #views
                let __dpl_go: bool = #cond;
                if !__dpl_go {
                    break;
                }
                #state = #next;
            }
            #fin
        });
        self.bind_owned(v, value)
    }

    /// The final values of the params of the loop of statement `v`, each `read(k)`; those
    /// whose next values were not made canonical at each iteration
    /// ([`dpl_core::nan::plan`]) made canonical, unless the run time does it where the
    /// map stores them (`nan_loop_outputs_deferred`).
    fn loop_outputs(
        &self,
        v: VarId,
        l: &dpl_core::ir::Loop,
        read: impl Fn(usize) -> TokenStream,
    ) -> Vec<TokenStream> {
        let deferred = self.nan_loops.get(&v);
        l.params
            .iter()
            .enumerate()
            .map(|(k, p)| {
                let value = read(k);
                let at_store = self
                    .nan_loop_outputs_deferred
                    .iter()
                    .any(|(r, &out)| out == (v, k) && self.nan_deferred.contains(r));
                if deferred.is_some_and(|d| d.contains(&k)) && !at_store {
                    self.canonical(value, &self.f.vars[*p].ty)
                } else {
                    value
                }
            })
            .collect()
    }

    /// `value` of type `ty` with a NaN replaced by the canonical NaN ([`dpl_core::nan`]) when
    /// `ty` is a float type; other values unchanged.
    pub(super) fn canonical(&self, value: TokenStream, ty: &Type) -> TokenStream {
        let private = self.private;
        match ty.scalar() {
            Some(Scalar::F32) => quote!(#private::nan::canon_f32(#value)),
            Some(Scalar::F64) => quote!(#private::nan::canon_f64(#value)),
            Some(Scalar::F16) => quote!(#private::nan::canon_f16(#value)),
            Some(Scalar::BF16) => quote!(#private::nan::canon_bf16(#value)),
            _ => value,
        }
    }

    pub(super) fn constant(&self, c: Const, ty: &Type) -> TokenStream {
        let s = ty.scalar().unwrap_or(Scalar::I32);
        if s.is_half() {
            // The bits, rounded here as the interpreter rounds them ([`dpl_core::float16`]).
            use dpl_core::float16::{Half, bf16, f16, from_f64, from_int};
            fn bits<H: Half>(c: Const) -> u16 {
                let h: H = match c {
                    Const::Float(x) => from_f64(x),
                    Const::Int(i) => from_int(i),
                    Const::Bool(b) => from_int(b.into()),
                };
                if h.to_f32().is_nan() {
                    H::NAN_BITS
                } else {
                    h.to_bits()
                }
            }
            let b = if s == Scalar::F16 {
                bits::<f16>(c)
            } else {
                bits::<bf16>(c)
            };
            let t = self.scalar_ty(s);
            return quote!(#t::from_bits(#b));
        }
        match c {
            Const::Bool(b) => quote!(#b),
            Const::Int(i) => {
                use proc_macro2::Literal as L;
                let lit = match s {
                    Scalar::I8 => L::i8_suffixed(i as i8),
                    Scalar::U8 => L::u8_suffixed(i as u8),
                    Scalar::I16 => L::i16_suffixed(i as i16),
                    Scalar::U16 => L::u16_suffixed(i as u16),
                    Scalar::I32 => L::i32_suffixed(i as i32),
                    Scalar::U32 => L::u32_suffixed(i as u32),
                    Scalar::I64 => L::i64_suffixed(i as i64),
                    Scalar::U64 => L::u64_suffixed(i as u64),
                    Scalar::Usize => L::usize_suffixed(i as usize),
                    Scalar::F32 => L::f32_suffixed(i as f32),
                    Scalar::F64 => L::f64_suffixed(i as f64),
                    Scalar::F16 | Scalar::BF16 => {
                        unreachable!("16-bit float constants return above")
                    }
                    Scalar::Bool => return if i != 0 { quote!(true) } else { quote!(false) },
                };
                quote!((#lit))
            }
            Const::Float(x) => {
                let t = self.scalar_ty(s);
                // The value in its type first: a finite `f64` may round to an `f32` infinity.
                let x = if s == Scalar::F32 {
                    f64::from(x as f32)
                } else {
                    x
                };
                if x.is_nan() {
                    let private = self.private;
                    if s == Scalar::F32 {
                        quote!(#t::from_bits(#private::nan::F32_BITS))
                    } else {
                        quote!(#t::from_bits(#private::nan::F64_BITS))
                    }
                } else if x.is_infinite() {
                    if x > 0.0 {
                        quote!(#t::INFINITY)
                    } else {
                        quote!(#t::NEG_INFINITY)
                    }
                } else if x == 0.0 && x.is_sign_negative() {
                    // `-0.0` (the start of a float `sum`): a literal cannot carry the sign.
                    quote!((-0.0 as #t))
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

    /// `a as to`, as Rust's `as`; conversions to `f16`/`bf16` round once
    /// ([`dpl_core::float16`]), those from them go through their exact `f32` value.
    fn cast(&self, a: VarId, to: Scalar) -> TokenStream {
        let from = self.f.vars[a].ty.scalar().unwrap_or(Scalar::I32);
        let a = self.ident(a);
        let private = self.private;
        let (from_ty, to_ty) = (self.scalar_ty(from), self.scalar_ty(to));
        if !to.is_half() {
            return if from.is_half() {
                quote!(#private::float16::widen::<#from_ty>(#a) as #to_ty)
            } else {
                quote!(#a as #to_ty)
            };
        }
        match from {
            s if s.is_half() => quote!(#private::float16::narrow::<#to_ty>(
                #private::float16::widen::<#from_ty>(#a)
            )),
            Scalar::F32 => quote!(#private::float16::narrow::<#to_ty>(#a)),
            Scalar::F64 => quote!(#private::float16::from_f64::<#to_ty>(#a)),
            _ => quote!(#private::float16::from_int::<#to_ty>(#a as i128)),
        }
    }

    fn binary(&self, op: BinOp, a: VarId, b: VarId, span: Span) -> TokenStream {
        let t = self.f.vars[a].ty.scalar().unwrap_or(Scalar::I32);
        let (x, y) = (self.ident(a), self.ident(b));
        if t.is_half() {
            // In `f32`, rounded once (comparisons are exact in `f32`).
            let ty = self.scalar_ty(t);
            let sym: TokenStream = op.symbol().parse().expect("operator token");
            let private = self.private;
            let widen = quote!(#private::float16::widen::<#ty>);
            let wide = quote!(#widen(#x) #sym #widen(#y));
            return match op {
                BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem => {
                    quote!(#private::float16::narrow::<#ty>(#wide))
                }
                _ => quote!((#wide)),
            };
        }
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
                let sym = op.symbol();
                quote! {{
                    if #y == 0 { #rt::raise(#private::Error::DivideByZero { op: #sym, at: *#loc }) }
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
        let ty = self.scalar_ty(t);
        if t.is_half() {
            // In `f32`, rounded once.
            let f = format_ident!("{}", m.name());
            let private = self.private;
            let (widen, narrow) = (
                quote!(#private::float16::widen::<#ty>),
                quote!(#private::float16::narrow::<#ty>),
            );
            return quote!(#narrow(f32::#f(#(#widen(#a)),*)));
        }
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
}
