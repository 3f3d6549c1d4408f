//! The value model: how each IR value is represented in the generated code ([`Rep`]),
//! its Rust types, reading an element of a sequence, and turning values into owned results
//! (moving owned locals out where possible) and back into borrowed views.

use std::collections::{HashMap, HashSet};

use dpl_core::ir::{Scalar, Type, VarId};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use super::{Gen, ident_of, shared_values, syn_index};

/// How a value is represented in the generated code. Sequences are always borrowed views;
/// sequences the generated code creates are backed by an owned `Vec` local.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Rep {
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

impl Gen<'_> {
    pub(super) fn ident(&self, v: VarId) -> Ident {
        ident_of(self.f, v)
    }

    pub(super) fn own_ident(&self, v: VarId) -> Ident {
        format_ident!("{}__own", self.ident(v))
    }

    /// The Rust type of a scalar: a primitive, or the facade's path to `f16`/`bf16`
    /// (which the user's scope need not import).
    pub(super) fn scalar_ty(&self, s: Scalar) -> TokenStream {
        let id = format_ident!("{}", s.name());
        if s.is_half() {
            let private = self.private;
            quote!(#private::float16::#id)
        } else {
            quote!(#id)
        }
    }

    /// The type of a variable's representation; `_` (left to rustc) for anything with a
    /// sequence in it, whose Rust type depends on its representation.
    pub(super) fn rep_ty(&self, t: &Type) -> TokenStream {
        match t {
            Type::Scalar(s) => self.scalar_ty(*s),
            Type::Seq(_) => quote!(_),
            Type::Tuple(ts) => {
                let ts = ts.iter().map(|t| self.rep_ty(t));
                quote!((#(#ts,)*))
            }
            Type::Infer | Type::Param(..) => quote!(_),
        }
    }

    /// The type of an owned value (sequences as `Vec`).
    pub(super) fn owned_ty(&self, t: &Type) -> TokenStream {
        match t {
            Type::Scalar(s) => self.scalar_ty(*s),
            Type::Seq(e) => {
                let e = self.elem_ty(e);
                quote!(::std::vec::Vec<#e>)
            }
            Type::Tuple(ts) => {
                let ts = ts.iter().map(|t| self.owned_ty(t));
                quote!((#(#ts,)*))
            }
            Type::Infer | Type::Param(..) => quote!(_),
        }
    }

    /// The type of a sequence element as stored.
    pub(super) fn elem_ty(&self, t: &Type) -> TokenStream {
        self.owned_ty(t)
    }

    pub(super) fn rep(&self, v: VarId) -> Rep {
        if let Some(r) = self.reps.get(&v) {
            return r.clone();
        }
        Self::default_rep(&self.f.vars[v].ty)
    }

    pub(super) fn default_rep(t: &Type) -> Rep {
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
    pub(super) fn elem_rep(r: &Rep, elem: &Type) -> Rep {
        match r {
            Rep::Nested | Rep::Rows => Rep::Slice,
            Rep::Matrix(true) => Rep::Slice,
            Rep::Matrix(false) => Rep::RowView,
            _ => Self::default_rep(elem),
        }
    }

    /// Reads element `i` (a `usize` known to be in range) of `x`.
    pub(super) fn read(&self, x: VarId, i: TokenStream) -> TokenStream {
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

    pub(super) fn contains_seq(t: &Type) -> bool {
        match t {
            Type::Seq(_) => true,
            Type::Tuple(ts) => ts.iter().any(Self::contains_seq),
            _ => false,
        }
    }

    /// The function's result: owned locals are moved out, through tuples and copies; an
    /// owned local that appears more than once is copied where it appears first and moved
    /// where it appears last (tuple fields are evaluated left to right); anything else is
    /// copied.
    pub(super) fn result_value(&self, v: VarId) -> TokenStream {
        self.moved_value(v, &self.owned)
    }

    /// [`Gen::result_value`] moving only the owned locals in `movable` (and the fields of
    /// owned tuples in it: [`Gen::fields`]), e.g. those a block defines: the ones defined
    /// outside a loop's body are read again in its next iteration.
    pub(super) fn moved_value(&self, v: VarId, movable: &HashSet<VarId>) -> TokenStream {
        let mut leaves = Vec::new();
        self.result_leaves(v, movable, &mut leaves);
        // A tuple moved whole is not also moved a field at a time.
        let whole: HashSet<VarId> = leaves
            .iter()
            .filter(|(_, k)| k.is_none())
            .map(|(t, _)| *t)
            .collect();
        let mut last: HashMap<(VarId, Option<u32>), usize> = HashMap::new();
        for (k, l) in leaves.iter().enumerate() {
            if l.1.is_none() || !whole.contains(&l.0) {
                last.insert(*l, k);
            }
        }
        let mut next = 0;
        self.result_expr(v, movable, &last, &mut next)
    }

    /// The owned tuple in `movable` and the field that `v` is, if it is one.
    fn movable_field(&self, v: VarId, movable: &HashSet<VarId>) -> Option<(VarId, u32)> {
        self.fields
            .get(&v)
            .copied()
            .filter(|(t, _)| movable.contains(t))
    }

    /// What the result is made of, in evaluation order: owned locals `(v, None)`, fields
    /// of owned tuples `(t, Some(k))`, and other variables `(v, None)`.
    fn result_leaves(
        &self,
        v: VarId,
        movable: &HashSet<VarId>,
        out: &mut Vec<(VarId, Option<u32>)>,
    ) {
        if movable.contains(&v) {
            return out.push((v, None));
        }
        if let Some((t, k)) = self.movable_field(v, movable) {
            return out.push((t, Some(k)));
        }
        match (self.parts.get(&v), &self.f.vars[v].ty) {
            (Some(ps), Type::Tuple(_)) => {
                ps.iter().for_each(|p| self.result_leaves(*p, movable, out))
            }
            (Some(ps), _) if ps.len() == 1 => self.result_leaves(ps[0], movable, out),
            _ => out.push((v, None)),
        }
    }

    fn result_expr(
        &self,
        v: VarId,
        movable: &HashSet<VarId>,
        last: &HashMap<(VarId, Option<u32>), usize>,
        next: &mut usize,
    ) -> TokenStream {
        let leaf = if movable.contains(&v) {
            Some((v, None))
        } else {
            self.movable_field(v, movable).map(|(t, k)| (t, Some(k)))
        };
        if let Some(key) = leaf {
            let k = *next;
            *next += 1;
            if last.get(&key) == Some(&k) {
                let own = self.own_ident(key.0);
                return match key.1 {
                    None => quote!(#own),
                    Some(f) => {
                        let f = syn_index(f as usize);
                        quote!(#own.#f)
                    }
                };
            }
            let name = self.ident(v);
            return Self::to_owned_expr(quote!(#name), &self.rep(v));
        }
        match (self.parts.get(&v), &self.f.vars[v].ty) {
            (Some(ps), Type::Tuple(_)) => {
                let ps: Vec<TokenStream> = ps
                    .iter()
                    .map(|p| self.result_expr(*p, movable, last, next))
                    .collect();
                quote!((#(#ps,)*))
            }
            (Some(ps), _) if ps.len() == 1 => self.result_expr(ps[0], movable, last, next),
            _ => {
                *next += 1;
                self.owned_value(v)
            }
        }
    }

    /// An expression producing an owned copy (or move) of `v`'s value.
    pub(super) fn owned_value(&self, v: VarId) -> TokenStream {
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

    /// An owned copy of `e`, a value of representation `r`.
    pub(super) fn to_owned_expr(e: TokenStream, r: &Rep) -> TokenStream {
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
    pub(super) fn borrow_expr(e: TokenStream, t: &Type) -> TokenStream {
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
    pub(super) fn bind_owned(&mut self, v: VarId, value: TokenStream) -> TokenStream {
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
}
