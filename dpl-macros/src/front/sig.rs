//! Rust types in a `#[parallel]` signature or body, and what they mean in the IR.
//!
//! A parameter or result type is read into a [`Repr`] (how the value is represented in Rust,
//! which code generation needs to convert it) and an [`Type`] (what it is in the DSL).
//! Types written inside the body (`let x: f32`, `|v: &f32|`, nested `fn` parameters) only
//! need the IR type: [`annotation`].

use dpl_core::ir::{Scalar, Type};

use super::errors::Errors;

/// The Rust signature of a `#[parallel]` function, read.
#[derive(Clone, Debug)]
pub struct Signature {
    /// The parameters, in order.
    pub params: Vec<ParamSig>,
    /// The result: the declared one, followed by the new values of the `&mut` parameters
    /// (see [`Signature::writes`]); alone when there are none.
    pub ret: RetSig,
    /// The `&mut` parameters, in order, each assigned once in the body (`*y = e;`): the
    /// function computes their new values as the last parts of its result and writes them
    /// back after the call.
    pub writes: Vec<WriteSig>,
    /// The function is declared without a result (`()`, or `Result<(), dpl::Error>`): its
    /// IR result is the new values of its `&mut` parameters only.
    pub unit: bool,
}

/// A `&mut` parameter and where it is assigned.
#[derive(Clone, Debug)]
pub struct WriteSig {
    /// The parameter's name.
    pub ident: syn::Ident,
    /// Its type.
    pub kind: Write,
    /// The assignment `*y = e` (for the error of a length mismatch).
    pub at: proc_macro2::Span,
}

/// The types of `&mut` parameters, which say how the new value is written back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Write {
    /// `&mut [T]`: copied into the slice, which keeps its length (another length is a
    /// length-mismatch error).
    Slice,
    /// `&mut Vec<T>`: the vector is replaced (its length may change).
    Vec,
    /// `&mut Seq<T>`: the sequence is replaced (on a GPU place, by the device-resident
    /// result: nothing is copied).
    Seq,
}

impl Write {
    /// How the new value comes out of the generated code.
    pub fn result_repr(self, elem: Type) -> Repr {
        match self {
            Write::Slice | Write::Vec => Repr::Vec(elem),
            Write::Seq => Repr::SeqBuf(elem),
        }
    }
}

/// One parameter of a `#[parallel]` function.
#[derive(Clone, Debug)]
pub struct ParamSig {
    /// Its name.
    pub ident: syn::Ident,
    /// How it is represented in Rust (a `&mut` parameter as the shared reference the
    /// body reads: `&mut [T]` and `&mut Vec<T>` as `&[T]`, `&mut Seq<T>` as `&Seq<T>`).
    pub repr: Repr,
    /// `Some` for a `&mut` parameter.
    pub write: Option<Write>,
}

/// How a value is represented in Rust. Element types (`T` below) are scalars or tuples of
/// scalars.
#[derive(Clone, Debug, PartialEq)]
pub enum Repr {
    /// A scalar passed or returned by value.
    Scalar(Scalar),
    /// `&[T]` or `&Vec<T>` (parameter); the element type `T`.
    Slice(Type),
    /// `Vec<T>` (result, or an owned parameter); the element type `T`.
    Vec(Type),
    /// `&Nested<T>` (parameter) or `Nested<T>` (result); the element type `T` of the rows.
    Nested(Type),
    /// `&Matrix<T>` (parameter) or `Matrix<T>` (result: rows of one length, row-major); the
    /// element type `T`.
    Matrix(Type),
    /// `&Seq<T>` (parameter) or `Seq<T>` (result); the element type `T`.
    SeqBuf(Type),
    /// A tuple of the above.
    Tuple(Vec<Repr>),
}

impl Repr {
    /// The element type of a sequence's representation ([`Type::Infer`] for others).
    pub fn elem(&self) -> Type {
        match self {
            Repr::Slice(t) | Repr::Vec(t) | Repr::SeqBuf(t) => t.clone(),
            _ => Type::Infer,
        }
    }

    /// The DSL type of a value with this representation.
    pub fn ir_type(&self) -> Type {
        match self {
            Repr::Scalar(s) => Type::Scalar(*s),
            Repr::Slice(t) | Repr::Vec(t) | Repr::SeqBuf(t) => Type::seq(t.clone()),
            Repr::Nested(t) | Repr::Matrix(t) => Type::seq(Type::seq(t.clone())),
            Repr::Tuple(rs) => Type::Tuple(rs.iter().map(Repr::ir_type).collect()),
        }
    }
}

/// The result of a `#[parallel]` function.
#[derive(Clone, Debug)]
pub struct RetSig {
    /// How the value is represented (inside `Result` when `result`).
    pub repr: Repr,
    /// Declared as `Result<_, dpl::Error>`: contract violations are returned as `Err`.
    pub result: bool,
}

/// Every scalar type, for messages that list what is allowed.
fn scalars() -> String {
    Scalar::names_where(|_| true)
}

/// Strips parentheses and invisible groups around a type.
fn peel(mut ty: &syn::Type) -> &syn::Type {
    loop {
        match ty {
            syn::Type::Paren(p) => ty = &p.elem,
            syn::Type::Group(g) => ty = &g.elem,
            _ => return ty,
        }
    }
}

/// The scalar named by a type, if it is one (`f32`, ...). Other paths are not scalars.
pub(crate) fn scalar_of(ty: &syn::Type) -> Option<Scalar> {
    match peel(ty) {
        syn::Type::Path(p) if p.qself.is_none() => scalar_of_path(&p.path),
        _ => None,
    }
}

/// The scalar named by a one-segment path without arguments.
fn scalar_of_path(path: &syn::Path) -> Option<Scalar> {
    let ident = path.get_ident()?;
    Scalar::from_name(&ident.to_string())
}

/// The containers the DSL knows, by the last segment of their path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Container {
    Vec,
    Nested,
    Matrix,
    Seq,
    /// `ndarray`'s `Array1` (a `Vec` as a result; read as a slice as a parameter).
    Array1,
    /// `ndarray`'s `Array2` (a `Matrix` as a result, rows of one length; read in place as a
    /// parameter).
    Array2,
    /// `ndarray`'s `ArrayView1`: a parameter read as a slice.
    View1,
    /// `ndarray`'s `ArrayView2` or dpl's `MatrixView`: a parameter read in place as a
    /// `Matrix`.
    View2,
}

/// `Vec<T>`, `dpl::Nested<T>`, ...: the container and its one type argument. `Ok(None)` for
/// other types; `Err` after recording an error (a container with the wrong arguments).
fn container(
    ty: &syn::Type,
    errors: &mut Errors,
) -> Result<Option<(Container, syn::Type)>, Reported> {
    let syn::Type::Path(p) = peel(ty) else {
        return Ok(None);
    };
    let Some(last) = p.path.segments.last() else {
        return Ok(None);
    };
    if p.qself.is_some() {
        return Ok(None);
    }
    let kind = match last.ident.to_string().as_str() {
        "Vec" => Container::Vec,
        "Nested" => Container::Nested,
        "Matrix" => Container::Matrix,
        "Seq" => Container::Seq,
        "Array1" => Container::Array1,
        "Array2" => Container::Array2,
        "ArrayView1" => Container::View1,
        "ArrayView2" | "MatrixView" => Container::View2,
        _ => return Ok(None),
    };
    // Lifetimes (`ArrayView1<'a, T>`) are not the element type.
    let arg = match &last.arguments {
        syn::PathArguments::AngleBracketed(a) => {
            let mut types = a
                .args
                .iter()
                .filter(|g| !matches!(g, syn::GenericArgument::Lifetime(_)));
            match (types.next(), types.next()) {
                (Some(syn::GenericArgument::Type(t)), None) => Some(t.clone()),
                _ => None,
            }
        }
        _ => None,
    };
    match arg {
        Some(t) => Ok(Some((kind, t))),
        None => {
            errors.at(
                last,
                format!(
                    "`{}` takes one element type: `{}<T>`",
                    last.ident, last.ident
                ),
            );
            Err(Reported)
        }
    }
}

/// An error has been recorded already.
struct Reported;

/// The element type of a sequence in a signature: a scalar or a tuple of scalars.
fn elem_type(ty: &syn::Type, errors: &mut Errors) -> Option<Type> {
    if let Some(s) = scalar_of(ty) {
        return Some(Type::Scalar(s));
    }
    if let syn::Type::Tuple(t) = peel(ty)
        && !t.elems.is_empty()
    {
        let mut ok = true;
        let mut elems = Vec::new();
        for e in &t.elems {
            match scalar_of(e) {
                Some(s) => elems.push(Type::Scalar(s)),
                None => {
                    errors.at(
                        e,
                        format!(
                            "tuple elements of a sequence must be scalars ({})",
                            scalars()
                        ),
                    );
                    ok = false;
                }
            }
        }
        return ok.then_some(Type::Tuple(elems));
    }
    errors.at(
        ty,
        format!(
            "unsupported element type; allowed: a scalar ({}) or a tuple of scalars (use Nested<T> for sequences of sequences)", scalars()
        ),
    );
    None
}

/// The representation of a parameter type, or `None` after recording an error.
pub(crate) fn param_repr(ty: &syn::Type, errors: &mut Errors) -> Option<Repr> {
    const ALLOWED: &str = "allowed parameter types: scalars, &[T], &Vec<T>, Vec<T>, &Nested<T>, &Matrix<T>, MatrixView<T>, &Seq<T>, ndarray's ArrayView1<T>, &Array1<T>, ArrayView2<T>, &Array2<T>, and tuples of them";
    if let Some(s) = scalar_of(ty) {
        return Some(Repr::Scalar(s));
    }
    match peel(ty) {
        syn::Type::Tuple(t) if !t.elems.is_empty() => {
            let reprs: Vec<Option<Repr>> = t.elems.iter().map(|e| param_repr(e, errors)).collect();
            reprs
                .into_iter()
                .collect::<Option<Vec<_>>>()
                .map(Repr::Tuple)
        }
        syn::Type::Reference(r) => {
            if r.mutability.is_some() {
                errors.at(ty, "mutable references are not allowed: #[parallel] functions do not modify their inputs; take `&[T]` and return the result");
                return None;
            }
            let inner = peel(&r.elem);
            if let syn::Type::Slice(s) = inner {
                return elem_type(&s.elem, errors).map(Repr::Slice);
            }
            if scalar_of(inner).is_some() {
                errors.at(ty, "take scalars by value (`x: f32`), not by reference");
                return None;
            }
            match container(inner, errors) {
                Err(Reported) => None,
                Ok(Some((kind, arg))) => {
                    let elem = elem_type(&arg, errors)?;
                    Some(match kind {
                        Container::Vec | Container::Array1 | Container::View1 => Repr::Slice(elem),
                        Container::Nested => Repr::Nested(elem),
                        Container::Matrix | Container::Array2 | Container::View2 => {
                            Repr::Matrix(elem)
                        }
                        Container::Seq => Repr::SeqBuf(elem),
                    })
                }
                Ok(None) => {
                    errors.at(ty, format!("unsupported parameter type; {ALLOWED}"));
                    None
                }
            }
        }
        other => match container(other, errors) {
            Err(Reported) => None,
            Ok(Some((Container::Vec, arg))) => elem_type(&arg, errors).map(Repr::Vec),
            Ok(Some((Container::Array1 | Container::View1, arg))) => {
                elem_type(&arg, errors).map(Repr::Slice)
            }
            Ok(Some((Container::Array2 | Container::View2, arg))) => {
                elem_type(&arg, errors).map(Repr::Matrix)
            }
            Ok(Some((kind, _))) => {
                let name = match kind {
                    Container::Nested => "Nested",
                    Container::Matrix => "Matrix",
                    _ => "Seq",
                };
                errors.at(ty, format!("take `{name}<T>` by reference: `&{name}<T>`"));
                None
            }
            Ok(None) => {
                errors.at(ty, format!("unsupported parameter type; {ALLOWED}"));
                None
            }
        },
    }
}

/// For a `&mut` parameter type, how it is written back and how the body reads it:
/// `None` for other types, `Some(None)` after recording an error.
pub(crate) fn mut_param(ty: &syn::Type, errors: &mut Errors) -> Option<Option<(Write, Repr)>> {
    let syn::Type::Reference(r) = peel(ty) else {
        return None;
    };
    r.mutability?;
    let inner = peel(&r.elem);
    if let syn::Type::Slice(s) = inner {
        return Some(elem_type(&s.elem, errors).map(|e| (Write::Slice, Repr::Slice(e))));
    }
    Some(match container(inner, errors) {
        Err(Reported) => None,
        Ok(Some((Container::Vec, arg))) => {
            elem_type(&arg, errors).map(|e| (Write::Vec, Repr::Slice(e)))
        }
        Ok(Some((Container::Seq, arg))) => {
            elem_type(&arg, errors).map(|e| (Write::Seq, Repr::SeqBuf(e)))
        }
        _ => {
            errors.at(
                ty,
                "a #[parallel] function changes only `&mut [T]`, `&mut Vec<T>` and `&mut Seq<T>` parameters (assigned once with `*y = e;`)",
            );
            None
        }
    })
}

/// The representation of a result type (inside any `Result`), or `None` after an error.
fn ret_repr(ty: &syn::Type, errors: &mut Errors) -> Option<Repr> {
    if let Some(s) = scalar_of(ty) {
        return Some(Repr::Scalar(s));
    }
    match peel(ty) {
        syn::Type::Tuple(t) if t.elems.is_empty() => {
            errors.at(ty, "a #[parallel] function must return a value, not `()`");
            None
        }
        syn::Type::Tuple(t) => {
            let reprs: Vec<Option<Repr>> = t.elems.iter().map(|e| ret_repr(e, errors)).collect();
            reprs
                .into_iter()
                .collect::<Option<Vec<_>>>()
                .map(Repr::Tuple)
        }
        syn::Type::Reference(_) => {
            errors.at(
                ty,
                "return owned data: Vec<T>, Nested<T>, Matrix<T>, Seq<T>, a scalar or a tuple of them",
            );
            None
        }
        other => match container(other, errors) {
            Err(Reported) => None,
            Ok(Some((Container::Vec, arg))) => elem_type(&arg, errors).map(Repr::Vec),
            Ok(Some((Container::Nested, arg))) => elem_type(&arg, errors).map(Repr::Nested),
            Ok(Some((Container::Seq, arg))) => elem_type(&arg, errors).map(Repr::SeqBuf),
            Ok(Some((Container::Matrix | Container::Array2, arg))) => {
                elem_type(&arg, errors).map(Repr::Matrix)
            }
            Ok(Some((Container::Array1, arg))) => elem_type(&arg, errors).map(Repr::Vec),
            Ok(Some((Container::View1 | Container::View2, _))) => {
                errors.at(
                    ty,
                    "a view borrows its data: return owned data (Vec<T>, Matrix<T>, or ndarray's Array1<T> or Array2<T>)",
                );
                None
            }
            Ok(None) => {
                errors.at(
                    ty,
                    "unsupported result type; allowed: scalars, Vec<T>, Nested<T>, Matrix<T>, Seq<T>, ndarray's Array1<T> and Array2<T>, tuples of them, and Result<_, dpl::Error> around any of these",
                );
                None
            }
        },
    }
}

/// `Result<X, E>` (any path ending in `Result`): `X` and `E`.
fn result_parts(ty: &syn::Type) -> Option<(&syn::Type, &syn::Type)> {
    let syn::Type::Path(p) = peel(ty) else {
        return None;
    };
    let last = p.path.segments.last()?;
    if p.qself.is_some() || last.ident != "Result" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(a) = &last.arguments else {
        return None;
    };
    let mut types = a.args.iter().filter_map(|g| match g {
        syn::GenericArgument::Type(t) => Some(t),
        _ => None,
    });
    let ok = types.next()?;
    let err = types.next()?;
    Some((ok, err))
}

/// Reads the result type of a `#[parallel]` function; `fn_ident` places the error for a
/// missing one.
pub(crate) fn ret_sig(
    output: &syn::ReturnType,
    fn_ident: &syn::Ident,
    errors: &mut Errors,
) -> Option<RetSig> {
    ret_sig_with(output, fn_ident, errors, false)
}

/// [`ret_sig`]; with `allow_unit` (a function with `&mut` parameters), no result, `()` or
/// `Result<(), dpl::Error>` is [`Repr::Tuple`] of nothing.
pub(crate) fn ret_sig_with(
    output: &syn::ReturnType,
    fn_ident: &syn::Ident,
    errors: &mut Errors,
    allow_unit: bool,
) -> Option<RetSig> {
    let is_unit = |t: &syn::Type| matches!(peel(t), syn::Type::Tuple(t) if t.elems.is_empty());
    let syn::ReturnType::Type(_, ty) = output else {
        if allow_unit {
            return Some(RetSig {
                repr: Repr::Tuple(Vec::new()),
                result: false,
            });
        }
        errors.at(
            fn_ident,
            "a #[parallel] function must return a value: add `-> T` (or change a `&mut [T]` parameter with `*y = e;`)",
        );
        return None;
    };
    if allow_unit && is_unit(ty) {
        return Some(RetSig {
            repr: Repr::Tuple(Vec::new()),
            result: false,
        });
    }
    if let Some((ok, _)) = result_parts(ty)
        && allow_unit
        && is_unit(ok)
    {
        return Some(RetSig {
            repr: Repr::Tuple(Vec::new()),
            result: true,
        });
    }
    if let Some((ok, err)) = result_parts(ty) {
        let is_dpl_error = match peel(err) {
            syn::Type::Path(p) => {
                p.qself.is_none() && p.path.segments.last().is_some_and(|s| s.ident == "Error")
            }
            _ => false,
        };
        if !is_dpl_error {
            errors.at(
                err,
                "the error type of a #[parallel] function must be `dpl::Error`",
            );
            return None;
        }
        return ret_repr(ok, errors).map(|repr| RetSig { repr, result: true });
    }
    ret_repr(ty, errors).map(|repr| RetSig {
        repr,
        result: false,
    })
}

/// The IR type written in a body (`let x: T`, closure and nested `fn` parameters): scalars,
/// tuples, sequences (`&[T]`, `Vec<T>`, `Seq<T>`; `Nested<T>` and `Matrix<T>` are `[[T]]`)
/// and `_`. References mean the value itself. An unsupported type records an error and
/// gives [`Type::Infer`].
pub(crate) fn annotation(ty: &syn::Type, errors: &mut Errors) -> Type {
    if let Some(s) = scalar_of(ty) {
        return Type::Scalar(s);
    }
    match peel(ty) {
        syn::Type::Infer(_) => Type::Infer,
        syn::Type::Reference(r) if r.mutability.is_none() => annotation(&r.elem, errors),
        syn::Type::Slice(s) => Type::seq(annotation(&s.elem, errors)),
        syn::Type::Tuple(t) if !t.elems.is_empty() => {
            Type::Tuple(t.elems.iter().map(|e| annotation(e, errors)).collect())
        }
        other => match container(other, errors) {
            Err(Reported) => Type::Infer,
            Ok(Some((
                Container::Vec | Container::Seq | Container::Array1 | Container::View1,
                arg,
            ))) => Type::seq(annotation(&arg, errors)),
            Ok(Some((
                Container::Nested | Container::Matrix | Container::Array2 | Container::View2,
                arg,
            ))) => Type::seq(Type::seq(annotation(&arg, errors))),
            Ok(None) => {
                errors.at(
                    ty,
                    format!(
                        "unsupported type; allowed: {}, tuples, &[T], Vec<T>, Nested<T>, Matrix<T>, Seq<T> and `_`", scalars()
                    ),
                );
                Type::Infer
            }
        },
    }
}

/// How a parameter whose Rust type is not one the generated code reads is rebound at the
/// start of the call (its name then stands for the rebound value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Adapter {
    /// An `ndarray` 1-D array or view: read in place with its stride on the CPU places when
    /// the body reads it element by element (`emit`'s `strided_params`), else as a slice
    /// (borrowed when its elements are contiguous and in order, else copied once).
    Flat,
    /// An `ndarray` 2-D array or view, or a `MatrixView`: read in place as a `MatrixView`.
    Matrix,
}

/// The rebinding a parameter of type `ty` needs, if any.
pub(crate) fn adapter(ty: &syn::Type) -> Option<Adapter> {
    let inner = match peel(ty) {
        syn::Type::Reference(r) if r.mutability.is_none() => peel(&r.elem),
        other => other,
    };
    match container(inner, &mut Errors::default()) {
        Ok(Some((Container::Array1 | Container::View1, _))) => Some(Adapter::Flat),
        Ok(Some((Container::Array2 | Container::View2, _))) => Some(Adapter::Matrix),
        _ => None,
    }
}

/// Where a declared result holds `ndarray` arrays, which the generated code builds as a
/// `Vec` or a `Matrix` and converts at the end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NdResult {
    /// Returned as computed.
    Same,
    /// An `Array1<T>`, computed as a `Vec<T>`.
    Array1,
    /// An `Array2<T>`, computed as a `Matrix<T>`.
    Array2,
    /// A tuple, part by part.
    Tuple(Vec<NdResult>),
}

/// For a declared result type holding `ndarray` arrays: the type the generated code
/// computes (each `Array1<T>` as `Vec<T>`, each `Array2<T>` as `dpl::Matrix<T>`, inside
/// tuples and `Result`) and where the arrays are. `None` when there is none.
pub(crate) fn nd_result(output: &syn::ReturnType) -> Option<(syn::Type, NdResult)> {
    fn walk(ty: &syn::Type) -> (syn::Type, NdResult) {
        match peel(ty) {
            syn::Type::Tuple(t) if !t.elems.is_empty() => {
                let (types, parts): (Vec<syn::Type>, Vec<NdResult>) =
                    t.elems.iter().map(walk).unzip();
                (syn::parse_quote!((#(#types,)*)), NdResult::Tuple(parts))
            }
            other => match container(other, &mut Errors::default()) {
                Ok(Some((Container::Array1, arg))) => {
                    (syn::parse_quote!(::std::vec::Vec<#arg>), NdResult::Array1)
                }
                Ok(Some((Container::Array2, arg))) => {
                    (syn::parse_quote!(::dpl::Matrix<#arg>), NdResult::Array2)
                }
                _ => (ty.clone(), NdResult::Same),
            },
        }
    }
    let syn::ReturnType::Type(_, ty) = output else {
        return None;
    };
    let (inner, nd) = match result_parts(ty) {
        Some((ok, err)) => {
            let (ok, nd) = walk(ok);
            (syn::parse_quote!(::core::result::Result<#ok, #err>), nd)
        }
        None => walk(ty),
    };
    fn holds(nd: &NdResult) -> bool {
        match nd {
            NdResult::Same => false,
            NdResult::Array1 | NdResult::Array2 => true,
            NdResult::Tuple(ps) => ps.iter().any(holds),
        }
    }
    holds(&nd).then_some((inner, nd))
}
