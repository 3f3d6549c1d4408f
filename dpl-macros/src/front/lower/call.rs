//! Calls: resolving the callee, and primitive calls with their argument checks.

use dpl_core::ir::{Expr, Lambda, Prim, Type, VarId};
use syn::ext::IdentExt;

use super::env::{Binding, Callable};
use super::scalar::const_path;
use super::vocab::FORMS;
use super::{Lowerer, call_span, cheap_span, peel};
use crate::front::path_text;

/// Whether a primitive takes a function argument (always first).
#[derive(Clone, Copy, PartialEq, Eq)]
enum LambdaArg {
    No,
    Required,
    /// `any(xs)` or `any(pred, xs)`.
    Optional,
}

/// The shape of a primitive's arguments.
struct PrimSpec {
    lambda: LambdaArg,
    min_data: usize,
    max_data: usize,
    form: &'static str,
}

impl PrimSpec {
    fn of(p: Prim) -> PrimSpec {
        let (lambda, min_data, max_data, form) = match p {
            Prim::Map => (
                LambdaArg::Required,
                1,
                8,
                "map(f, xs1, ..., xsn)` with 1 to 8 sequences",
            ),
            Prim::Zip => (LambdaArg::No, 2, 2, "zip(a, b)`"),
            Prim::Unzip => (LambdaArg::No, 1, 1, "unzip(pairs)`"),
            Prim::Gather => (LambdaArg::No, 2, 2, "gather(x, idx)`"),
            Prim::Permute => (LambdaArg::No, 2, 2, "permute(x, idx)`"),
            Prim::Scatter => (LambdaArg::No, 3, 3, "scatter(src, idx, dst)`"),
            Prim::ScatterReduce => (
                LambdaArg::Required,
                3,
                3,
                "scatter_reduce(op, src, idx, dst)`",
            ),
            Prim::Reduce => (LambdaArg::Required, 2, 2, "reduce(op, x, init)`"),
            Prim::Sum => (LambdaArg::No, 1, 1, "sum(x)`"),
            Prim::Min => (LambdaArg::No, 1, 1, "min(x)`"),
            Prim::Max => (LambdaArg::No, 1, 1, "max(x)`"),
            Prim::Any => (LambdaArg::Optional, 1, 1, "any(x)` or `any(pred, x)`"),
            Prim::All => (LambdaArg::Optional, 1, 1, "all(x)` or `all(pred, x)`"),
            Prim::Count => (LambdaArg::Optional, 1, 1, "count(x)` or `count(pred, x)`"),
            Prim::Scan => (LambdaArg::Required, 1, 1, "scan(op, x)`"),
            Prim::ExclusiveScan => (LambdaArg::Required, 2, 2, "exclusive_scan(op, x, init)`"),
            Prim::Filter => (LambdaArg::Required, 1, 1, "filter(pred, x)`"),
            Prim::Replicate => (LambdaArg::No, 2, 2, "replicate(v, n)`"),
            Prim::Indices => (LambdaArg::No, 1, 1, "indices(x)`"),
            Prim::Range => (LambdaArg::No, 1, 1, "range(n)`"),
            Prim::Len => (LambdaArg::No, 1, 1, "len(x)`"),
            Prim::Sort => (LambdaArg::No, 1, 1, "sort(x)`"),
            Prim::SortByKey => (LambdaArg::No, 2, 2, "sort_by_key(keys, vals)`"),
        };
        PrimSpec {
            lambda,
            min_data,
            max_data,
            form,
        }
    }

    /// How many arguments the function argument receives, given the number of data
    /// arguments.
    fn lambda_params(p: Prim, data: usize) -> usize {
        match p {
            Prim::Map => data,
            Prim::Any | Prim::All | Prim::Count | Prim::Filter => 1,
            _ => 2,
        }
    }
}

/// Primitives that take exactly one data argument and no function: usable as functions
/// themselves (`map(sum, rows)`).
pub(super) fn unary_prim(p: Prim) -> bool {
    let spec = PrimSpec::of(p);
    spec.lambda != LambdaArg::Required && spec.min_data == 1 && spec.max_data == 1
}

fn prim_list() -> String {
    Prim::ALL
        .iter()
        .map(|p| p.name())
        .chain(FORMS)
        .collect::<Vec<_>>()
        .join(", ")
}

impl Lowerer<'_> {
    pub(super) fn call(&mut self, c: &syn::ExprCall) -> VarId {
        let func = peel(&c.func);
        if let syn::Expr::Path(p) = func
            && p.qself.is_none()
        {
            if let Some(ident) = p.path.get_ident() {
                let name = ident.unraw().to_string();
                match self.env.lookup(&name).cloned() {
                    Some(Binding::Value(_) | Binding::Mut(_) | Binding::Captured(_)) => {
                        return self.fail(&c.func, format!("`{name}` is a value, not a function"));
                    }
                    Some(Binding::Callable(callable)) => return self.inline_call(&callable, c),
                    None => {}
                }
                if let Some(v) = self.vocab_call(&name, c) {
                    return v;
                }
                if let Some(prim) = Prim::from_name(&name) {
                    return self.prim_call(prim, c);
                }
                if name == "stencil" {
                    return self.stencil(c);
                }
                let scope = if self.in_module {
                    "a dpl primitive or a function of this #[parallel] module"
                } else {
                    "a dpl primitive, a closure or a nested fn (to call another #[parallel] function, put both in a `#[parallel] mod`)"
                };
                return self.fail(
                    &c.func,
                    format!(
                        "`{name}` is not {scope}; allowed primitives: {}",
                        prim_list()
                    ),
                );
            }
            if let Some(v) = self.turbofish_call(p, c) {
                return v;
            }
            if let Some(callable @ Callable::Scalar(f, Some(_))) = self.as_callable(func) {
                if c.args.len() != f.arity() {
                    let n = f.arity();
                    let what = self.describe(&callable);
                    return self.fail(
                        c,
                        format!("{what} takes {n} argument{}", if n == 1 { "" } else { "s" }),
                    );
                }
                return self.inline_call(&callable, c);
            }
            if const_path(&p.path).is_some() {
                return self.fail(
                    &c.func,
                    format!("`{}` is a constant, not a function", path_text(&p.path)),
                );
            }
            let text = path_text(&p.path);
            return self.fail(
                    &c.func,
                    format!("`{text}` is not a dpl primitive or scalar function; allowed: the primitives ({}), closures, nested fns and scalar functions such as `f32::sqrt`", prim_list()),
                );
        }
        match self.as_callable(func) {
            Some(callable) => self.inline_call(&callable, c),
            None => self.fail(
                &c.func,
                "only primitives, closures and nested fns can be called",
            ),
        }
    }

    fn prim_call(&mut self, prim: Prim, c: &syn::ExprCall) -> VarId {
        let spec = PrimSpec::of(prim);
        let args: Vec<&syn::Expr> = c.args.iter().collect();
        let has_lambda = match spec.lambda {
            LambdaArg::No => false,
            LambdaArg::Required => true,
            LambdaArg::Optional => args.len() == spec.max_data + 1,
        };
        let n_data = args.len().saturating_sub(usize::from(has_lambda));
        if (has_lambda && args.is_empty()) || n_data < spec.min_data || n_data > spec.max_data {
            return self.fail(
                c,
                format!(
                    "wrong number of arguments for `{}`: expected `{}",
                    prim.name(),
                    spec.form
                ),
            );
        }
        let mut rest: &[&syn::Expr] = &args;
        let mut lambdas = Vec::new();
        if let (true, Some((first, tail))) = (has_lambda, args.split_first())
            && !self.is_callable(first)
            && tail.iter().any(|a| self.is_callable(a))
        {
            return self.fail(c, format!("the function comes first: `{}", spec.form));
        }
        if has_lambda && let Some((first, tail)) = rest.split_first() {
            rest = tail;
            let expected = PrimSpec::lambda_params(prim, n_data);
            match self.as_callable(first) {
                Some(callable) => {
                    let n = self.arity(&callable);
                    if n != expected {
                        let what = self.describe(&callable);
                        let why = if prim == Prim::Map {
                            format!(
                                "`map` over {n_data} sequence{} calls its function with {expected} argument{}",
                                if n_data == 1 { "" } else { "s" },
                                if expected == 1 { "" } else { "s" }
                            )
                        } else {
                            format!(
                                "`{}` calls its function with {expected} argument{}",
                                prim.name(),
                                if expected == 1 { "" } else { "s" }
                            )
                        };
                        self.error(*first, format!("{why}, but {what} takes {n}"));
                    } else {
                        let quiet = callable.checked();
                        lambdas.push(self.lambda(&callable, *first, cheap_span(first), quiet));
                    }
                }
                None => {
                    let example = match expected {
                        1 => "`|x| ...`",
                        2 => "`|a, b| ...`",
                        _ => "`|x, y, ...| ...`",
                    };
                    self.error(
                            *first,
                            format!("the first argument of `{}` must be a function: a closure such as {example}, the name of one, or a path such as `f32::max`", prim.name()),
                        );
                }
            }
        }
        let mut data = Vec::new();
        for a in rest {
            if self.is_callable(a) {
                let what = if spec.lambda == LambdaArg::No {
                    format!("`{}` takes no function argument", prim.name())
                } else {
                    format!("only the first argument of `{}` is a function", prim.name())
                };
                self.error(*a, format!("{what}: this argument must be a value"));
                data.push(self.poison());
            } else {
                data.push(self.value(a));
            }
        }
        if lambdas.len() != usize::from(has_lambda) {
            return self.poison();
        }
        self.prim_on(prim, lambdas, data, call_span(c))
    }

    /// Binds a primitive applied to lowered arguments (`len` becomes [`Expr::Len`]).
    pub(super) fn prim_on(
        &mut self,
        prim: Prim,
        lambdas: Vec<Lambda>,
        args: Vec<VarId>,
        span: proc_macro2::Span,
    ) -> VarId {
        if prim == Prim::Len {
            let v = args.first().copied().unwrap_or_else(|| self.poison());
            return self.emit("len", Type::usize(), Expr::Len(v), span);
        }
        let ty = match prim {
            Prim::Any | Prim::All => Type::bool(),
            Prim::Count => Type::usize(),
            Prim::Indices | Prim::Range => Type::seq(Type::usize()),
            _ => Type::Infer,
        };
        self.emit(
            prim.name(),
            ty,
            Expr::Prim {
                prim,
                lambdas,
                args,
            },
            span,
        )
    }
}
