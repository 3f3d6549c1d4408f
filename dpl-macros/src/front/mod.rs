//! The front end of `#[parallel]`: syn AST -> validation -> Prim-level IR.
//!
//! # Design
//!
//! The front end takes the item the attribute is applied to (one `fn`, or an inline `mod`
//! whose `fn`s form one compilation unit) and produces, for every function, a
//! [`dpl_core::ir::Function`] at the Prim level together with what code generation needs to
//! re-emit the Rust signature ([`Signature`]) and to point errors at the source ([`Spans`]).
//!
//! It works in one pass over the syn tree, validating while lowering:
//!
//! * [`sig`] reads the Rust signature: which parameter and result types are allowed and how
//!   each is represented ([`Repr`]), and the IR type that goes with it.
//! * `lower` turns the body into A-normal form. Names are resolved through a persistent
//!   environment, so a closure bound with `let` remembers the scope it was written in and
//!   can be *inlined at every use* with fresh variables: each use gets its own types.
//!   Closures, nested `fn`s and the other functions of a `#[parallel] mod` are never values;
//!   they only exist as arguments of primitives (where they become [`ir::Lambda`]s) or as
//!   callees (where their body is inlined).
//! * Errors never stop the walk: each is recorded with the span of the offending node and
//!   lowering goes on with a placeholder variable, so the user sees every problem at once.
//!   The body of a closure or nested `fn` is checked once where it is defined; its inlined
//!   copies are lowered quietly so an error is reported once, not once per use.
//!
//! Nothing here panics on user input: there is no `unwrap` on anything derived from the
//! tokens, and every unsupported construct has its own message saying what is allowed.

pub(crate) mod errors;
mod lower;
pub mod sig;

#[cfg(test)]
mod fuzz;
#[cfg(test)]
mod loop_tests;
#[cfg(test)]
mod tests;

use dpl_core::ir;
use dpl_core::typeck::Literals;
use proc_macro2::TokenStream;

pub use sig::{Repr, Signature};

/// The options of the attribute: `#[parallel]` or `#[parallel(inner = "...", block = N,
/// scan = "...")]`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Options {
    /// How nested primitives are scheduled.
    pub inner: Inner,
    /// `block = N`: threads per block of every GPU kernel (a multiple of 32 from 32 to
    /// 1024); `None` lets the GPU backend choose.
    pub block: Option<u32>,
    /// `scan = "reduce_then_scan"`: the three-kernel device-wide scan instead of the single
    /// pass with decoupled look-back (`scan = "lookback"`, the default).
    pub reduce_then_scan: bool,
    /// `replicated(p, q)`: parameters that are whole on every rank on `Place::Mpi` (never
    /// communicated), instead of one block per rank.
    pub replicated: Vec<syn::Ident>,
    /// `types(T = "f32, f64")`: the types a generic function is generated for, per type
    /// parameter (instead of every type its bound admits).
    pub types: Vec<(syn::Ident, syn::LitStr)>,
}

/// What the attribute accepts, for error messages.
const ALLOWED: &str = "inner = \"seq\" | \"block\" | \"warp\" | \"auto\", block = N (GPU threads per block), scan = \"lookback\" | \"reduce_then_scan\", replicated(param, ...) (whole on every MPI rank), types(T = \"f32, f64\") (the types a generic function is generated for)";

/// The schedule of the nested level (`inner = "..."`), shared with the backends.
pub use dpl_core::schedule::Inner;

impl Options {
    /// Parses the tokens between the attribute's parentheses (empty for `#[parallel]`).
    pub fn parse(attr: TokenStream) -> Result<Options, syn::Error> {
        let mut options = Options::default();
        if attr.is_empty() {
            return Ok(options);
        }
        let (mut seen_inner, mut seen_block, mut seen_scan) = (false, false, false);
        let (mut seen_replicated, mut seen_types) = (false, false);
        let twice = |seen: &mut bool, path: &syn::Path| {
            if std::mem::replace(seen, true) {
                let name = path_text(path);
                Err(syn::Error::new_spanned(
                    path,
                    format!("`{name}` is given twice"),
                ))
            } else {
                Ok(())
            }
        };
        let parser = syn::meta::parser(|meta| {
            if meta.path.is_ident("block") {
                twice(&mut seen_block, &meta.path)?;
                let value: syn::Expr = meta.value()?.parse()?;
                let syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Int(lit),
                    ..
                }) = &value
                else {
                    return Err(syn::Error::new_spanned(
                        &value,
                        "expected an integer: block = 32 | 64 | ... | 1024 (threads per block)",
                    ));
                };
                let b: u32 = lit.base10_parse()?;
                if !(32..=1024).contains(&b) || !b.is_multiple_of(32) {
                    return Err(syn::Error::new_spanned(
                        lit,
                        format!(
                            "block size {b}: threads per block must be a multiple of 32 (a \
                             whole number of warps) from 32 to 1024"
                        ),
                    ));
                }
                options.block = Some(b);
                Ok(())
            } else if meta.path.is_ident("scan") {
                twice(&mut seen_scan, &meta.path)?;
                let value: syn::Expr = meta.value()?.parse()?;
                let text = match &value {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(s),
                        ..
                    }) => Some(s.value()),
                    _ => None,
                };
                options.reduce_then_scan = match text.as_deref() {
                    Some("lookback") => false,
                    Some("reduce_then_scan") => true,
                    _ => {
                        return Err(syn::Error::new_spanned(
                            &value,
                            "expected scan = \"lookback\" | \"reduce_then_scan\"",
                        ));
                    }
                };
                Ok(())
            } else if meta.path.is_ident("replicated") {
                twice(&mut seen_replicated, &meta.path)?;
                meta.parse_nested_meta(|p| match p.path.get_ident() {
                    Some(id) if p.input.is_empty() || p.input.peek(syn::Token![,]) => {
                        options.replicated.push(id.clone());
                        Ok(())
                    }
                    _ => Err(p.error("expected parameter names: replicated(x, y)")),
                })
            } else if meta.path.is_ident("types") {
                twice(&mut seen_types, &meta.path)?;
                meta.parse_nested_meta(|p| match p.path.get_ident() {
                    Some(id) => {
                        let list: syn::LitStr = p.value()?.parse().map_err(|e| {
                            syn::Error::new(
                                e.span(),
                                "expected a string of types: types(T = \"f32, f64\")",
                            )
                        })?;
                        if options.types.iter().any(|(t, _)| t == id) {
                            return Err(p.error(format!("`{id}` is given twice in `types`")));
                        }
                        options.types.push((id.clone(), list));
                        Ok(())
                    }
                    None => Err(p.error("expected a type parameter: types(T = \"f32, f64\")")),
                })
            } else if meta.path.is_ident("inner") {
                twice(&mut seen_inner, &meta.path)?;
                let value: syn::LitStr = meta.value()?.parse().map_err(|e| {
                    syn::Error::new(
                        e.span(),
                        "expected a string: inner = \"seq\" | \"block\" | \"warp\" | \"auto\"",
                    )
                })?;
                let text = value.value();
                match Inner::from_name(&text) {
                    Some(inner) => options.inner = inner,
                    None => {
                        return Err(syn::Error::new(
                            value.span(),
                            format!(
                                "unknown schedule \"{text}\"; allowed: \"seq\", \"block\", \"warp\", \"auto\""
                            ),
                        ));
                    }
                }
                Ok(())
            } else {
                let name = path_text(&meta.path);
                Err(syn::Error::new_spanned(
                    &meta.path,
                    format!("unknown option `{name}`; allowed: {ALLOWED}"),
                ))
            }
        });
        syn::parse::Parser::parse2(parser, attr)?;
        Ok(options)
    }
}

/// One lowered function and what code generation needs besides its IR.
#[derive(Clone)]
pub struct Lowered {
    /// The body at the Prim level; variable types are [`ir::Type::Infer`] where the source
    /// does not say.
    pub func: ir::Function,
    /// Maps the IR's [`ir::Span`]s back to source spans.
    pub spans: Spans,
    /// The Rust signature, read.
    pub sig: Signature,
    /// The original item (code generation re-emits its attributes, visibility and signature).
    pub item: syn::ItemFn,
    /// The function's name in messages and `dpl::inspect!` records (`dot::<f32>` for an
    /// instantiation of a generic function).
    pub name: String,
    /// What unsuffixed integer literals may become (floats too in a generic function).
    pub literals: dpl_core::typeck::Literals,
}

impl Lowered {
    /// Checks what only the types show: a loop inside an element function carries scalars
    /// and tuples of them, not sequences (a loop at the top level of the body, which
    /// iterates whole parallel steps, may carry sequences). `typed` is [`Lowered::func`]
    /// after type inference.
    pub fn check_loops(&self, typed: &ir::Function) -> Result<(), syn::Error> {
        let mut all = errors::Errors::default();
        self.check_top_block(typed, &typed.body, &mut all);
        all.finish()
    }

    /// [`Lowered::check_loops`] over a block at the top level (the body, the branches of a
    /// top-level `if`, the blocks of a top-level loop): the element functions inside it.
    fn check_top_block(&self, typed: &ir::Function, b: &ir::Block, all: &mut errors::Errors) {
        for s in &b.stmts {
            match &s.expr {
                ir::Expr::If(..) | ir::Expr::Loop(_) => {
                    s.expr
                        .for_each_block(&mut |b| self.check_top_block(typed, b, all));
                }
                e => e.for_each_block(&mut |b| {
                    b.walk(&mut |s| {
                        if let ir::Expr::Loop(l) = &s.expr {
                            self.check_elem_loop(typed, l, all);
                        }
                    })
                }),
            }
        }
    }

    /// The error for each sequence a loop inside an element function carries.
    fn check_elem_loop(&self, typed: &ir::Function, l: &ir::Loop, all: &mut errors::Errors) {
        for &p in &l.params {
            let var = &typed.vars[p];
            if var.ty.holds_seq() {
                all.push(syn::Error::new(
                    self.spans.get(var.span),
                    format!("the loop changes `{}`, a sequence: a loop inside an element function can only change scalars and tuples of them; build the sequence with primitives instead (such as `map` over `range(n)`), or move the loop to the top level of the body", var.name),
                ));
            }
        }
    }
}

/// The table from [`ir::Span`] numbers to source spans. `ir::Span(0)` is unknown and maps to
/// `Span::call_site()`.
#[derive(Clone)]
pub struct Spans(Vec<proc_macro2::Span>);

impl Spans {
    /// How many spans there are (IR spans `0..len`).
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    pub fn count(&self) -> usize {
        self.0.len()
    }

    /// The source span of an IR span; `call_site` for [`ir::Span::NONE`] or an unknown number.
    pub fn get(&self, span: ir::Span) -> proc_macro2::Span {
        usize::try_from(span.0)
            .ok()
            .and_then(|i| self.0.get(i).copied())
            .unwrap_or_else(proc_macro2::Span::call_site)
    }
}

/// Lowers one `#[parallel] fn`.
pub fn expand_fn(opts: &Options, item: syn::ItemFn) -> Result<Lowered, syn::Error> {
    let mut recursion = lower::Reported::default();
    let module = [item.clone()];
    lower::lower_function(item, &module, 0, &mut recursion, opts, Literals::Rust)
}

/// Checks a `#[parallel(...)]` on a function `f` of a `#[parallel] mod`: only a generic
/// function may carry one, naming the types it is generated for (`types(T = "f32, f64")`,
/// read by `generic::with_own_types`); the other options are the module's.
fn function_attr(f: &syn::ItemFn, attr: &syn::Attribute) -> Result<(), syn::Error> {
    let remove = || {
        syn::Error::new_spanned(
            attr,
            "remove this attribute: `#[parallel]` on the module already compiles every function in it",
        )
    };
    if !crate::generic::is_generic(f) {
        return Err(remove());
    }
    let syn::Meta::List(list) = &attr.meta else {
        return Err(remove());
    };
    let own = Options::parse(list.tokens.clone())?;
    let types_only = Options {
        types: own.types.clone(),
        ..Options::default()
    };
    if own.types.is_empty() || own != types_only {
        return Err(syn::Error::new_spanned(
            attr,
            "inside a #[parallel] module, a function's own attribute only names the types of a generic function, `#[parallel(types(T = \"f32, f64\"))]`; the other options are given on the module",
        ));
    }
    Ok(())
}

/// Lowers every `fn` of a `#[parallel] mod m { ... }`. Calls between the module's functions
/// are inlined; `use` items are left to code generation; other items are errors.
pub fn expand_mod(opts: &Options, item: &syn::ItemMod) -> Result<Vec<Lowered>, syn::Error> {
    let mut errors = errors::Errors::default();
    let Some((_, items)) = &item.content else {
        return Err(syn::Error::new_spanned(
            item,
            "#[parallel] on a module needs an inline module: `mod name { ... }`",
        ));
    };
    for it in items {
        match it {
            syn::Item::Fn(f) => {
                for attr in f.attrs.iter().filter(|a| is_parallel_attr(a)) {
                    if let Err(e) = function_attr(f, attr) {
                        errors.push(e);
                    }
                }
            }
            syn::Item::Use(_) => {}
            other => errors.push(syn::Error::new_spanned(
                other,
                "only `fn` and `use` items are allowed in a #[parallel] module",
            )),
        }
    }
    let fns = module_fns(item);
    if fns.is_empty() && errors.is_empty() {
        errors.push(syn::Error::new_spanned(
            &item.ident,
            "this #[parallel] module has no functions",
        ));
    }
    let mut recursion = lower::Reported::default();
    let mut out = Vec::new();
    for (i, f) in fns.iter().enumerate() {
        // Generic functions are instantiated (`generic::expand_module_fns`).
        if crate::generic::is_generic(f) {
            continue;
        }
        match lower::lower_function(f.clone(), &fns, i, &mut recursion, opts, Literals::Rust) {
            Ok(l) => out.push(l),
            Err(e) => errors.push(e),
        }
    }
    errors.finish()?;
    Ok(out)
}

/// The `fn` items of a `#[parallel] mod` (what [`expand_mod`] lowers and checks).
pub fn module_fns(item: &syn::ItemMod) -> Vec<syn::ItemFn> {
    item.content
        .iter()
        .flat_map(|(_, items)| items)
        .filter_map(|i| match i {
            syn::Item::Fn(f) => Some(f.clone()),
            _ => None,
        })
        .collect()
}

/// Lowers `item`, an instantiation of the generic function `module[index]` of a
/// `#[parallel] mod` (see `generic`): the module's other functions are in scope.
pub fn expand_instance(
    opts: &Options,
    item: syn::ItemFn,
    module: &[syn::ItemFn],
    index: usize,
) -> Result<Lowered, syn::Error> {
    let mut fns = module.to_vec();
    fns[index] = item.clone();
    let mut recursion = lower::Reported::default();
    lower::lower_function(item, &fns, index, &mut recursion, opts, Literals::Generic)
}

/// True for `#[parallel]`, `#[parallel(...)]` and `#[dpl::parallel ...]`.
pub fn is_parallel_attr(attr: &syn::Attribute) -> bool {
    attr.path()
        .segments
        .last()
        .is_some_and(|s| s.ident == "parallel")
}

/// `a::b::c` as written, for messages.
pub(crate) fn path_text(path: &syn::Path) -> String {
    let mut s = String::new();
    if path.leading_colon.is_some() {
        s.push_str("::");
    }
    for (i, seg) in path.segments.iter().enumerate() {
        if i > 0 {
            s.push_str("::");
        }
        s.push_str(&seg.ident.to_string());
    }
    s
}
