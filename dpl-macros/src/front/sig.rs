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
    /// The result.
    pub ret: RetSig,
}

/// One parameter of a `#[parallel]` function.
#[derive(Clone, Debug)]
pub struct ParamSig {
    /// Its name.
    pub ident: syn::Ident,
    /// How it is represented in Rust.
    pub repr: Repr,
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
        _ => return Ok(None),
    };
    let arg = match &last.arguments {
        syn::PathArguments::AngleBracketed(a) if a.args.len() == 1 => match a.args.first() {
            Some(syn::GenericArgument::Type(t)) => Some(t.clone()),
            _ => None,
        },
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
    const ALLOWED: &str = "allowed parameter types: scalars, &[T], &Vec<T>, Vec<T>, &Nested<T>, &Matrix<T>, &Seq<T> and tuples of them";
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
                        Container::Vec => Repr::Slice(elem),
                        Container::Nested => Repr::Nested(elem),
                        Container::Matrix => Repr::Matrix(elem),
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
            Ok(Some((Container::Matrix, arg))) => elem_type(&arg, errors).map(Repr::Matrix),
            Ok(None) => {
                errors.at(
                    ty,
                    "unsupported result type; allowed: scalars, Vec<T>, Nested<T>, Matrix<T>, Seq<T>, tuples of them, and Result<_, dpl::Error> around any of these",
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
    let syn::ReturnType::Type(_, ty) = output else {
        errors.at(
            fn_ident,
            "a #[parallel] function must return a value: add `-> T`",
        );
        return None;
    };
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
            Ok(Some((Container::Vec | Container::Seq, arg))) => Type::seq(annotation(&arg, errors)),
            Ok(Some((Container::Nested | Container::Matrix, arg))) => {
                Type::seq(Type::seq(annotation(&arg, errors)))
            }
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
