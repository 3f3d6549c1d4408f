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
//! its projections) is one `map_unzip` call writing one vector per component; a kept map
//! and a later reduction that reads it element by element are one `map_reduce` call
//! (`map_reduce`: a Jacobi sweep and its largest change); the function's
//! result moves the owned locals it is made of, through tuples; and with `Matrix`
//! parameters the body is generated twice, once with matrix rows as plain slices (run when
//! every matrix has contiguous rows) and once with strided row views; with several `Nested`
//! parameters, once reading their rows through one shared offsets array (run when they
//! share it) and once through each one's own.
//!
//! The generator is one `Gen` per body variant, its methods grouped by concern: `value`
//! (the representation of values), `elem` (statements and scalar expressions), `soac` (one
//! helper call per combinator), `unzip` (`unzip(map(f))` as one loop), `bounded` (loop
//! variants from range facts), `ragged` and `blocked` (maps over heavy elements),
//! `map_reduce` (a kept map with its reduction), `in_place` (`&mut` writes). The IR
//! queries they share are the free functions here.

mod blocked;
mod bounded;
mod cost;
mod elem;
mod hook;
mod in_place;
mod map_reduce;
mod ragged;
mod soac;
mod unzip;
mod value;

pub use cost::compute_bound;

use dpl_core::ir::*;
use proc_macro2::{Ident, Span as PmSpan, TokenStream};
use quote::{format_ident, quote};
use std::collections::{HashMap, HashSet};

use value::Rep;

pub use hook::{Hook, HookCx};
pub use in_place::{Write, in_place};

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
    /// A `RowView<E>` (an `ndarray` 1-D view, read in place with its stride): only for a
    /// parameter that the body reads element by element ([`read_by_index_only`]). The body
    /// is generated twice, as for a `Matrix`: with the view as a slice (run when its
    /// elements are adjacent) and with strided reads.
    Strided,
}

/// Whether the body uses `p` (a sequence parameter) only to read its elements (`p[i]`) and
/// its length, at any depth: then a strided view can stand for it without a copy.
pub fn read_by_index_only(f: &Function, p: VarId) -> bool {
    fn block(b: &Block, p: VarId) -> bool {
        b.result != p && b.stmts.iter().all(|s| stmt(s, p))
    }
    fn stmt(s: &Stmt, p: VarId) -> bool {
        let direct = match &s.expr {
            Expr::Index { index, .. } => *index != p,
            Expr::Len(_) => true,
            e => !e.operands().contains(&p),
        };
        let mut inner = true;
        s.expr.for_each_block(&mut |b| inner &= block(b, p));
        direct && inner
    }
    block(&f.body, p)
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
    /// The `&mut` parameters whose new values are written in place, each one for which
    /// [`in_place`] said so (the others go through the function's result). Their parameter
    /// identifiers in `params` must be `&mut` references to what slices to `[E]`.
    pub in_place: Vec<Write>,
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

/// [`body`] with a [`Hook`] for top-level statements.
pub fn body_with(input: &FnInput<'_>, hook: Option<Hook<'_>>) -> TokenStream {
    let matrices: Vec<&Ident> = input
        .params
        .iter()
        .filter(|(_, r)| *r == ParamRepr::Matrix)
        .map(|(i, _)| i)
        .collect();
    let strided: Vec<&Ident> = input
        .params
        .iter()
        .filter(|(_, r)| *r == ParamRepr::Strided)
        .map(|(i, _)| i)
        .collect();
    if matrices.is_empty() && strided.is_empty() {
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
    let tests = matrices
        .iter()
        .map(|m| quote!(#m.rows_are_slices()))
        .chain(strided.iter().map(|x| quote!(#x.as_slice().is_some())));
    // A block, like every body: callers splice it where a block is expected.
    quote! {{
        if #(#tests)&&* #contiguous else #general
    }}
}

/// One variant of the body; `contiguous`: the rows of every `Matrix` parameter are slices,
/// and so is every strided view;
/// `shared`: every `Nested` parameter shares the offsets of the first (tested by the
/// caller), so rows are read from those offsets and the values of each.
fn variant(
    input: &FnInput<'_>,
    hook: Option<Hook<'_>>,
    contiguous: bool,
    shared: bool,
) -> TokenStream {
    let nan = dpl_core::nan::plan(input.func);
    let mut g = Gen {
        f: input.func,
        span: input.span,
        rt: &input.rt,
        inner_rt: &input.inner_rt,
        heavy: input.heavy.as_ref(),
        private: &input.private,
        owned: HashSet::new(),
        parts: HashMap::new(),
        fields: HashMap::new(),
        unzips: HashMap::new(),
        projections: HashSet::new(),
        reps: HashMap::new(),
        depth: 0,
        unchecked: HashSet::new(),
        subst: HashMap::new(),
        shared: HashSet::new(),
        hook,
        nan_observed: nan.observed,
        nan_deferred: HashSet::new(),
        nan_loops: nan.loop_outputs,
        nan_loop_outputs_deferred: HashMap::new(),
        in_place: HashMap::new(),
        map_reduces: HashMap::new(),
        fused_reduces: HashMap::new(),
        hoisted: HashSet::new(),
    };
    for w in &input.in_place {
        if let Some((r, check)) = in_place::in_place_value(input.func, w) {
            let (y, p) = (input.params[w.param].0.clone(), input.func.params[w.param]);
            g.in_place.insert(r, (y, p, check));
        }
    }
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
            ParamRepr::Strided if contiguous => (
                Rep::Slice,
                quote! {
                    let #name: &[_] = match #ident.as_slice() {
                        ::core::option::Option::Some(s) => s,
                        // The caller tested it.
                        ::core::option::Option::None => ::core::unreachable!(),
                    };
                },
            ),
            ParamRepr::Strided => (Rep::RowView, quote! { let #name = #ident; }),
        };
        g.reps.insert(v, rep);
        prologue.extend(binding);
    }
    g.plan_unzips(&input.func.body);
    g.plan_map_reduces(&input.func.body);
    let stmts = g.stmts(&input.func.body);
    let result = g.result_value(input.func.body.result);
    quote! {{ #prologue #stmts #result }}
}

/// The generator of one body variant: the function, the paths of the run time it calls, and
/// what it knows about the variables generated so far.
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
    /// Fields of owned tuples (an `if` or a loop with sequences in its value) that hold
    /// sequences: `v -> (t, k)` for `v = t.k`, so that a result can move the field out of
    /// `t`'s owned local instead of copying it.
    fields: HashMap<VarId, (VarId, u32)>,
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
    /// The float variables whose NaN bits can be seen ([`dpl_core::nan::plan`]): the
    /// only ones whose NaN results are made canonical.
    nan_observed: HashSet<VarId>,
    /// Float results of a reduction's element function and operator whose NaNs are made
    /// canonical once, on the reduction's result (see [`Gen::deferred_reduce`]), and those
    /// of a map's element function (its result, or components of the tuple it makes) that
    /// the run time makes canonical after the loop (see [`Gen::defer_output_nan`]).
    nan_deferred: HashSet<VarId>,
    /// For each loop statement, the positions of the float params whose next values are
    /// not made canonical at each iteration: the loop's value is made canonical there once,
    /// after the loop ([`dpl_core::nan::plan`]).
    nan_loops: HashMap<VarId, Vec<usize>>,
    /// Outputs of those loops read by one projection that is a component of a map's
    /// result whose NaNs the run time makes canonical ([`Gen::defer_output_nans`]): the
    /// projection's variable -> the loop statement and the param's position. Such an
    /// output is not made canonical after the loop while the projection is in
    /// `nan_deferred` (so its value stays in a float register through the loop).
    nan_loop_outputs_deferred: HashMap<VarId, (VarId, usize)>,
    /// The new values of `&mut` parameters written in place: the map's variable -> the
    /// parameter's Rust identifier and variable, and whether the length of the new value
    /// is checked against it first (see [`Gen::update`]).
    in_place: HashMap<VarId, (Ident, VarId, bool)>,
    /// Kept maps generated as one loop with a later reduction that reads them (see
    /// [`map_reduce`]): the map's variable -> the pair, until the map is generated.
    map_reduces: HashMap<VarId, map_reduce::Pair<'a>>,
    /// The reductions of those pairs generated with their map: the reduction's variable
    /// -> whether its result is optional (see [`Gen::fused_reduce`]).
    fused_reduces: HashMap<VarId, bool>,
    /// Statements generated early, before such a pair: nothing to generate where they stand.
    hoisted: HashSet<VarId>,
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

/// The variables the statements of `b` define (not those of blocks inside them).
fn block_vars(b: &Block) -> HashSet<VarId> {
    b.stmts.iter().map(|s| s.var).collect()
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

/// The local holding the values of a `Nested` parameter read through shared offsets
/// (underscored: a variant may not read it).
fn shared_values(name: &Ident) -> Ident {
    format_ident!("__dpl_values_{}", name)
}

/// The Rust identifier of a variable: `v<index>_<name>`.
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

/// `k` as an unsuffixed literal: a tuple field (`t.0`).
fn syn_index(k: usize) -> TokenStream {
    let lit = proc_macro2::Literal::usize_unsuffixed(k);
    quote!(#lit)
}
