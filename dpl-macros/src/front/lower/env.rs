//! Scopes: the persistent environment of names, and what a name stands for.

use std::cell::Cell;
use std::rc::Rc;

use dpl_core::ir::{Prim, Scalar, Type, VarId};

use super::scalar::ScalarFn;

/// A persistent list of name bindings; cloning shares the tail.
#[derive(Clone, Default)]
pub(super) struct Env(Option<Rc<EnvNode>>);

struct EnvNode {
    name: String,
    binding: Binding,
    next: Env,
}

impl Env {
    pub(super) fn with(&self, name: String, binding: Binding) -> Env {
        Env(Some(Rc::new(EnvNode {
            name,
            binding,
            next: self.clone(),
        })))
    }

    /// This environment with every visible `mut` variable replaced by its current value
    /// (`current(slot)`), as [`Binding::Captured`]: what a closure written here sees.
    pub(super) fn frozen(&self, current: impl Fn(usize) -> Option<VarId>) -> Env {
        let mut seen = std::collections::HashSet::new();
        let mut out = self.clone();
        let mut cur = self.0.as_deref();
        while let Some(node) = cur {
            if seen.insert(node.name.as_str())
                && let Binding::Mut(slot) = node.binding
                && let Some(v) = current(slot)
            {
                out = out.with(node.name.clone(), Binding::Captured(v));
            }
            cur = node.next.0.as_deref();
        }
        out
    }

    pub(super) fn lookup(&self, name: &str) -> Option<&Binding> {
        let mut cur = self.0.as_deref();
        while let Some(node) = cur {
            if node.name == name {
                return Some(&node.binding);
            }
            cur = node.next.0.as_deref();
        }
        None
    }
}

/// What a name stands for.
#[derive(Clone)]
pub(super) enum Binding {
    /// A value: parameter, `let` binding, closure parameter.
    Value(VarId),
    /// A `let mut` variable: its slot in `Lowerer::muts`, which holds its current value.
    Mut(usize),
    /// A `mut` variable of an enclosing function seen from a closure: its value where the
    /// closure was written (the closure cannot change it).
    Captured(VarId),
    /// Something that can be called or passed to a primitive.
    Callable(Callable),
}

/// A closure as written, with the scope it was written in.
pub(super) struct ClosureDef {
    pub(super) closure: syn::ExprClosure,
    pub(super) env: Env,
    pub(super) items: Env,
    /// Set once its body has been lowered: the first lowering reports its errors, later
    /// ones are quiet (see [`super::Lowerer::apply`]).
    pub(super) checked: Cell<bool>,
}

/// A nested `fn` or a function of the module, its types read once.
pub(super) struct FnItem {
    pub(super) name: String,
    pub(super) item: Rc<syn::ItemFn>,
    pub(super) params: Vec<(syn::Pat, Type)>,
    pub(super) ret: Type,
    /// The functions visible from its body (no local variables: Rust items capture nothing).
    pub(super) env: Env,
    /// A nested `fn` (not a function of the module).
    pub(super) nested: bool,
}

/// A function-valued expression.
#[derive(Clone)]
pub(super) enum Callable {
    /// A closure (its body is checked at its first use, see [`ClosureDef::checked`]).
    Closure(Rc<ClosureDef>),
    /// A nested `fn` or module function (index into `Lowerer::fns`); always checked.
    Fn(usize),
    /// `f32::max`, `i32::wrapping_add`, ...: a scalar function of the given type.
    Scalar(ScalarFn, Option<Scalar>),
    /// A one-argument primitive used as a function: `map(sum, rows)`.
    Prim(Prim),
}

impl Callable {
    /// Whether uses lower the body quietly (it was checked already).
    pub(super) fn checked(&self) -> bool {
        match self {
            Callable::Closure(def) => def.checked.get(),
            Callable::Fn(_) => true,
            Callable::Scalar(..) | Callable::Prim(_) => false,
        }
    }
}
