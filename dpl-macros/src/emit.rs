//! Code generation for lowered functions: runs the dpl-core pipeline on each function and
//! emits the Rust item that dispatches on the current place.
//!
//! ```text
//! #[attrs] vis fn name(params) -> Ret {
//!     match ::dpl::__private::place() {
//!         Place::Cpu => rt::run_or_panic(|| { <fused IR on the parallel run time> }),
//!         Place::Seq => rt::run_or_panic(|| { <unfused IR on the sequential run time> }),
//!         other => panic!("{}", unavailable(other)),
//!     }
//! }
//! ```
//!
//! A function declared `-> Result<T, dpl::Error>` uses `rt::run` and returns the error
//! instead. Next to each function a hidden constant `__dpl_inspect_<name>` holds the IR after
//! each pass, the generated Rust and loop counts (read with `dpl::inspect!(name)`); with
//! `DPL_DUMP=<dir>` set at build time the same texts (and, with the `gpu` feature, the PTX
//! and launch plan) are written to files there.

use crate::front::errors::Errors;
use crate::front::sig;
use crate::front::{Inner, Lowered, Options, Repr};
use dpl_core::ir;
use dpl_core::pipeline::{self, Compiled};
use dpl_cpu::codegen::{self, FnInput, ParamRepr};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};

/// Emits the items for every lowered function (inside the module when `module` is given,
/// followed there by `extra`, the items of its generic functions).
pub fn emit(
    opts: &Options,
    lowered: Vec<Lowered>,
    module: Option<&syn::ItemMod>,
    extra: TokenStream,
) -> Result<TokenStream, syn::Error> {
    let mut items = TokenStream::new();
    let mut errors = Errors::default();
    for l in &lowered {
        items.extend(errors.ok(function(opts, l)));
    }
    errors.finish()?;
    Ok(match module {
        None => items,
        Some(m) => {
            let attrs = m
                .attrs
                .iter()
                .filter(|a| !crate::front::is_parallel_attr(a));
            let (vis, ident) = (&m.vis, &m.ident);
            let uses = m
                .content
                .iter()
                .flat_map(|(_, items)| items)
                .filter(|i| matches!(i, syn::Item::Use(_)));
            quote! {
                #(#attrs)*
                #vis mod #ident {
                    #(#uses)*
                    #items
                    #extra
                }
            }
        }
    })
}

/// The diagnostics of the IR pipeline on `l` as one error, each at its source span.
pub(crate) fn diagnostics_to_error(
    l: &Lowered,
    diags: Vec<dpl_core::diag::Diagnostic>,
) -> syn::Error {
    let mut all = Errors::default();
    for d in diags {
        let span = if d.span == ir::Span::NONE {
            l.item.sig.ident.span()
        } else {
            l.spans.get(d.span)
        };
        all.push(syn::Error::new(span, d.message));
    }
    all.into_error()
        .unwrap_or_else(|| syn::Error::new(l.item.sig.ident.span(), "compilation failed"))
}

fn function(opts: &Options, l: &Lowered) -> Result<TokenStream, syn::Error> {
    let compiled = pipeline::compile_with(l.func.clone(), l.literals)
        .map_err(|d| diagnostics_to_error(l, d))?;
    l.check_loops(&compiled.typed)?;
    let mut params = Vec::new();
    let mut errors = Errors::default();
    let strided = strided_params(l, &compiled);
    for p in &l.sig.params {
        let repr = match &p.repr {
            Repr::Scalar(_) => ParamRepr::Scalar,
            Repr::Slice(_) if strided.contains(&p.ident) => ParamRepr::Strided,
            Repr::Slice(_) | Repr::Vec(_) | Repr::SeqBuf(_) => ParamRepr::Slice,
            Repr::Nested(_) => ParamRepr::Nested,
            Repr::Matrix(_) => ParamRepr::Matrix,
            Repr::Tuple(_) => {
                errors.push(syn::Error::new(
                    p.ident.span(),
                    "tuple parameters are not supported; pass the parts as separate parameters",
                ));
                continue;
            }
        };
        params.push((p.ident.clone(), repr));
    }
    errors.finish()?;
    let span_of = |s: ir::Span| l.spans.get(s);
    let private = quote!(::dpl::__private);
    let rt = quote!(::dpl::__private::rt);
    let seq_rt = quote!(::dpl::__private::seq);
    let writes = InPlace::new(l, &params, &compiled);
    let cpu_body = |inner: &TokenStream| {
        codegen::body(&FnInput {
            func: &compiled.fused,
            params: writes.params(&params, &writes.cpu),
            span: &span_of,
            rt: rt.clone(),
            private: private.clone(),
            inner_rt: inner.clone(),
            heavy: Some(quote!(::dpl::__private::heavy)),
            in_place: writes.accepted(&writes.cpu),
        })
    };
    let cpu = match opts.inner {
        Inner::Seq => cpu_body(&seq_rt),
        Inner::Block | Inner::Warp => cpu_body(&rt),
        Inner::Auto => {
            let (par, seq) = (cpu_body(&rt), cpu_body(&seq_rt));
            let shape = l.sig.params.iter().find_map(|p| {
                let x = &p.ident;
                match p.repr {
                    Repr::Nested(_) => Some(quote!((#x.len(), #x.total_len(), #x.max_row_len()))),
                    Repr::Matrix(_) => Some(quote!((#x.rows(), #x.rows() * #x.cols(), #x.cols()))),
                    _ => None,
                }
            });
            match shape {
                Some(shape) => quote! {{
                    let (__dpl_rows, __dpl_total, __dpl_longest) = #shape;
                    if ::dpl::__private::heavy::parallel_inner(__dpl_rows, __dpl_total, __dpl_longest) #par else #seq
                }},
                None => seq,
            }
        }
    };
    let seq = codegen::body(&FnInput {
        func: &compiled.normalized,
        params: writes.params(&params, &writes.seq),
        span: &span_of,
        rt: seq_rt.clone(),
        private: private.clone(),
        inner_rt: seq_rt.clone(),
        heavy: None,
        in_place: writes.accepted(&writes.seq),
    });
    let cpu = convert_result(cpu, &l.sig.ret.repr, &ret_location(l));
    let seq = convert_result(seq, &l.sig.ret.repr, &ret_location(l));
    let replicated = replicated_positions(opts, l)?;
    let (mpi, mpi_summary) = mpi_arm(opts, l, &compiled, &params, &replicated)?;
    let item = &l.item;
    let attrs = item
        .attrs
        .iter()
        .filter(|a| !crate::front::is_parallel_attr(a));
    let (vis, sig) = (&item.vis, &item.sig);
    let span = item.sig.ident.span();
    let (gpu, gpu_summary) = gpu_arm(opts, l, &compiled)?;
    let bound = codegen::compute_bound(&compiled.fused);
    // A function the GPU backend did not compile runs on the CPU when called on a GPU place.
    // One it compiled runs on a GPU found by default (not asked for) only when the call pays
    // for the trip: a compute-bound function, or data already there (`gpu_dispatch`).
    let place = if !gpu_summary.not_compiled.is_empty() {
        let (name, reason) = (&l.name, &gpu_summary.not_compiled);
        quote!(#private::gpu::cpu_instead(#private::place(), #name, #reason))
    } else if gpu.is_empty() {
        quote!(#private::place())
    } else {
        let on_gpu = l.sig.params.iter().map(|p| {
            let x = &p.ident;
            quote!(#private::gpu::Arg::on_gpu(&#x))
        });
        quote!(#private::gpu_dispatch(#bound, || false #(|| #on_gpu)*))
    };
    // The arm that writes parameters in place says so (see `with_writes`).
    let (cpu_ran, seq_ran) = (
        writes.ran(&writes.cpu, "cpu"),
        writes.ran(&writes.seq, "seq"),
    );
    let dispatch = if l.sig.ret.result {
        quote_spanned! {span=>
            match #place {
                #private::Place::Cpu => { #cpu_ran #private::rt::run(move || #cpu) }
                #private::Place::Seq => { #seq_ran #private::rt::run(move || #seq) }
                #gpu
                #mpi
                #[allow(unreachable_patterns)]
                __dpl_other => ::core::result::Result::Err(#private::unavailable(__dpl_other)),
            }
        }
    } else {
        quote_spanned! {span=>
            match #place {
                #private::Place::Cpu => { #cpu_ran #private::rt::run_or_panic(move || #cpu) }
                #private::Place::Seq => { #seq_ran #private::rt::run_or_panic(move || #seq) }
                #gpu
                #mpi
                #[allow(unreachable_patterns)]
                __dpl_other => ::core::panic!("{}", #private::unavailable(__dpl_other)),
            }
        }
    };
    let inspect = inspect_const(l, &compiled, &cpu, &gpu_summary, &mpi_summary, bound);
    let dispatch = with_nd_arrays(l, with_writes(l, dispatch, &writes), &strided);
    Ok(quote! {
        #(#attrs)*
        #[allow(unused_variables, unused_parens, unused_braces, unused_unsafe, non_snake_case, clippy::all)]
        #vis #sig {
            // Makes cargo rebuild this crate (re-running the macro) when the variables the
            // macro reads change.
            const _: [::core::option::Option<&str>; 3] = [
                ::core::option_env!("DPL_DUMP"),
                ::core::option_env!("DPL_PTXAS"),
                ::core::option_env!("DPL_CUBIN_ARCHS"),
            ];
            #dispatch
        }
        #inspect
    })
}

/// The `ndarray` 1-D parameters read in place with their strides ([`ParamRepr::Strided`]):
/// those that both CPU bodies read element by element only.
fn strided_params(l: &Lowered, compiled: &Compiled) -> Vec<syn::Ident> {
    let mut out = Vec::new();
    for (k, a) in l.item.sig.inputs.iter().enumerate() {
        let syn::FnArg::Typed(pt) = a else {
            continue;
        };
        let syn::Pat::Ident(p) = &*pt.pat else {
            continue;
        };
        let by_index = |f: &ir::Function| {
            f.params
                .get(k)
                .is_some_and(|&v| codegen::read_by_index_only(f, v))
        };
        if sig::adapter(&pt.ty) == Some(sig::Adapter::Flat)
            && by_index(&compiled.fused)
            && by_index(&compiled.normalized)
        {
            out.push(p.ident.clone());
        }
    }
    out
}

/// `dispatch` with the `ndarray` parameters rebound before it (a 1-D array as a slice, or
/// in place as a `RowView` when it is one of `strided`; a 2-D one or a `MatrixView` as a
/// `MatrixView`: [`sig::adapter`]) and its value converted into the declared `ndarray`
/// results after it ([`sig::nd_result`]).
fn with_nd_arrays(l: &Lowered, dispatch: TokenStream, strided: &[syn::Ident]) -> TokenStream {
    let nd = quote!(::dpl::__private::nd);
    let rebind = l.item.sig.inputs.iter().filter_map(|a| {
        let syn::FnArg::Typed(pt) = a else {
            return None;
        };
        let syn::Pat::Ident(p) = &*pt.pat else {
            return None;
        };
        let x = &p.ident;
        let held = format_ident!("__dpl_nd_{}", x);
        Some(match sig::adapter(&pt.ty)? {
            sig::Adapter::Flat if strided.contains(x) => quote! {
                let #x = { use #nd::Strided as _; #x.__dpl_strided() };
            },
            sig::Adapter::Flat => quote! {
                let #held = { use #nd::Flat as _; #x.__dpl_flat() };
                let #x = &*#held;
            },
            sig::Adapter::Matrix => quote! {
                let #held = { use #nd::View2 as _; #x.__dpl_matrix() };
                let #x = &#held;
            },
        })
    });
    let rebind: TokenStream = rebind.collect();
    let Some((inner, out)) = sig::nd_result(&l.item.sig.output) else {
        return quote!({ #rebind #dispatch });
    };
    fn conv(e: TokenStream, out: &sig::NdResult) -> TokenStream {
        let nd = quote!(::dpl::__private::nd);
        match out {
            sig::NdResult::Same => e,
            sig::NdResult::Array1 => quote!(#nd::array1(#e)),
            sig::NdResult::Array2 => quote!(#nd::array2(#e)),
            sig::NdResult::Tuple(parts) => {
                let names: Vec<_> = (0..parts.len())
                    .map(|k| format_ident!("__dpl_nd{}", k))
                    .collect();
                let parts = names.iter().zip(parts).map(|(n, p)| conv(quote!(#n), p));
                quote!({ let (#(#names,)*) = #e; (#(#parts,)*) })
            }
        }
    }
    let value = conv(quote!(__dpl_v), &out);
    let convert = if l.sig.ret.result {
        quote!(::core::result::Result::map(__dpl_out, |__dpl_v| #value))
    } else {
        quote!({ let __dpl_v = __dpl_out; #value })
    };
    quote!({
        #rebind
        let __dpl_out: #inner = #dispatch;
        #convert
    })
}

/// Which `&mut` parameters each CPU place writes in place (`*y = e;` computed straight
/// into `y`: [`codegen::in_place`]), one flag per write of the signature.
struct InPlace {
    /// The writes as the code generator sees them (parameter, part of the result).
    writes: Vec<codegen::Write>,
    /// Written in place on `Place::Cpu` (the fused function).
    cpu: Vec<bool>,
    /// Written in place on `Place::Seq` (the unfused one).
    seq: Vec<bool>,
}

impl InPlace {
    fn new(l: &Lowered, params: &[(syn::Ident, ParamRepr)], compiled: &Compiled) -> InPlace {
        let n = l.sig.writes.len();
        let writes: Vec<codegen::Write> = l
            .sig
            .writes
            .iter()
            .enumerate()
            .filter_map(|(k, w)| {
                let param = params.iter().position(|(p, _)| *p == w.ident)?;
                let part = match (l.sig.unit, n) {
                    (true, 1) => None,
                    (true, _) => Some(k),
                    (false, _) => Some(k + 1),
                };
                let slice = w.kind == crate::front::sig::Write::Slice;
                Some(codegen::Write { param, part, slice })
            })
            .collect();
        // A write whose parameter was not found (not expected) is never in place.
        let (cpu, seq) = if writes.len() == n {
            (
                codegen::in_place(&compiled.fused, &writes),
                codegen::in_place(&compiled.normalized, &writes),
            )
        } else {
            (vec![false; n], vec![false; n])
        };
        InPlace { writes, cpu, seq }
    }

    /// The mutable reborrow of the parameter `y` that an in-place body writes.
    fn mut_ident(y: &syn::Ident) -> syn::Ident {
        format_ident!("__dpl_mut_{}", y)
    }

    /// The parameters as a body that writes `flags` in place sees them.
    fn params(
        &self,
        params: &[(syn::Ident, ParamRepr)],
        flags: &[bool],
    ) -> Vec<(syn::Ident, ParamRepr)> {
        let mut out = params.to_vec();
        for (w, _) in self.writes.iter().zip(flags).filter(|(_, f)| **f) {
            out[w.param].0 = Self::mut_ident(&params[w.param].0);
        }
        out
    }

    /// The writes in place among `flags`.
    fn accepted(&self, flags: &[bool]) -> Vec<codegen::Write> {
        self.writes
            .iter()
            .zip(flags)
            .filter(|(_, f)| **f)
            .map(|(w, _)| *w)
            .collect()
    }

    /// The statement of the dispatch arm of a place whose body writes `flags` in place:
    /// records that it ran (the stores after the call skip those parameters).
    fn ran(&self, flags: &[bool], place: &str) -> TokenStream {
        if flags.iter().any(|&b| b) {
            let flag = format_ident!("__dpl_ran_{}", place);
            quote!(#flag = true;)
        } else {
            TokenStream::new()
        }
    }
}

/// The body of a function with `&mut` parameters around its `dispatch`: the parameters
/// are read through shared references while the result is computed (its last parts are
/// their new values), then written back (a slice keeps its length: another is a length
/// mismatch at the assignment, returned or raised as the function's other errors), and the
/// declared result (if any) is returned. A parameter that a CPU place writes in place
/// ([`InPlace`]) is also reborrowed mutably as `__dpl_mut_<name>`, which that place's body
/// writes; its part of the result is then not stored.
fn with_writes(l: &Lowered, dispatch: TokenStream, in_place: &InPlace) -> TokenStream {
    let writes = &l.sig.writes;
    if writes.is_empty() {
        return dispatch;
    }
    let names: Vec<syn::Ident> = (0..writes.len())
        .map(|k| format_ident!("__dpl_w{}", k))
        .collect();
    let params = writes.iter().enumerate().map(|(k, w)| {
        let y = &w.ident;
        if in_place.cpu[k] || in_place.seq[k] {
            let m = InPlace::mut_ident(y);
            quote!(let #m = &mut *#y; let #y = &*#m;)
        } else {
            quote!(let #y = &*#y;)
        }
    });
    let pattern = match (l.sig.unit, names.len()) {
        (true, 1) => quote!(#(#names)*),
        (true, _) => quote!((#(#names,)*)),
        (false, _) => quote!((__dpl_ret, #(#names,)*)),
    };
    let result = l.sig.ret.result;
    let fail = |e: TokenStream| {
        if result {
            quote!(return ::core::result::Result::Err(#e))
        } else {
            quote!(::core::panic!("{}", #e))
        }
    };
    let unwrap = if result {
        quote!(let __dpl_all = match __dpl_all {
            ::core::result::Result::Ok(v) => v,
            ::core::result::Result::Err(e) => return ::core::result::Result::Err(e),
        };)
    } else {
        TokenStream::new()
    };
    let stores = writes.iter().zip(&names).enumerate().map(|(k, (w, n))| {
        let y = &w.ident;
        let store = match w.kind {
            crate::front::sig::Write::Slice => {
                let at = w.at;
                let fail = fail(quote!(e));
                quote_spanned! {at=>
                    if let ::core::result::Result::Err(e) = ::dpl::__private::rt::write_slice(
                        #y,
                        #n,
                        ::dpl::__private::Location { file: ::core::file!(), line: ::core::line!(), column: ::core::column!() },
                    ) {
                        #fail;
                    }
                }
            }
            crate::front::sig::Write::Vec | crate::front::sig::Write::Seq => quote!(*#y = #n;),
        };
        let mut written = Vec::new();
        if in_place.cpu[k] {
            written.push(quote!(__dpl_ran_cpu));
        }
        if in_place.seq[k] {
            written.push(quote!(__dpl_ran_seq));
        }
        if written.is_empty() {
            store
        } else {
            quote!(if !(#(#written)||*) { #store })
        }
    });
    let flags = [(&in_place.cpu, "cpu"), (&in_place.seq, "seq")]
        .into_iter()
        .filter(|(f, _)| f.iter().any(|&b| b))
        .map(|(_, place)| {
            let flag = format_ident!("__dpl_ran_{}", place);
            quote!(let mut #flag = false;)
        });
    let value = match (l.sig.unit, result) {
        (true, false) => quote!(()),
        (true, true) => quote!(::core::result::Result::Ok(())),
        (false, false) => quote!(__dpl_ret),
        (false, true) => quote!(::core::result::Result::Ok(__dpl_ret)),
    };
    quote! {
        #(#flags)*
        let __dpl_all = {
            #(#params)*
            #dispatch
        };
        #unwrap
        let #pattern = __dpl_all;
        #(#stores)*
        #value
    }
}

/// The match arm for the GPU places (`Sim`, `Gpu(n)`): the function compiled for the GPU
/// and embedded as a static `dpl::__private::gpu::Program`. Empty when the GPU backend
/// cannot compile it (the summary says why, and the dispatch runs GPU places on the CPU)
/// and without the `gpu` feature (the dispatch's last arm reports the place unavailable).
#[cfg(feature = "gpu")]
fn gpu_arm(
    opts: &Options,
    l: &Lowered,
    compiled: &Compiled,
) -> Result<(TokenStream, GpuSummary), syn::Error> {
    let mut summary = GpuSummary::default();
    let private = quote!(::dpl::__private);
    let name = l.name.clone();
    let block = opts.block;
    let gpu_opts = dpl_cuda::Options {
        inner: opts.inner,
        block,
        scan: if opts.reduce_then_scan {
            dpl_cuda::Scan::ReduceThenScan
        } else {
            dpl_cuda::Scan::LookBack
        },
    };
    let program = match dpl_cuda::compile_with(&compiled.fused, &gpu_opts) {
        Ok(mut p) => {
            // With ptxas at hand (the cubin configuration below) and no `block = N`, each
            // combinator's block size is chosen from the kernels' register counts.
            if block.is_none() {
                let tuned = dpl_cuda::cubin::configured().and_then(|c| match c {
                    Some((ptxas, archs)) => {
                        dpl_cuda::compile_tuned(&compiled.fused, &gpu_opts, &ptxas, &archs)
                            .map(Some)
                    }
                    None => Ok(None),
                });
                match tuned {
                    Ok(Some(t)) => p = t,
                    Ok(None) => {}
                    Err(e) => {
                        return Err(syn::Error::new(
                            l.item.sig.ident.span(),
                            format!("choosing the GPU block sizes from register counts: {e}"),
                        ));
                    }
                }
            }
            // With `DPL_CUBIN_ARCHS` (and `DPL_PTXAS`) set while the crate compiles, what
            // `dpl_build::cubins` in its build script arranges, the kernels are assembled
            // now and the cubins embedded next to the PTX.
            if let Err(e) = dpl_cuda::cubin::embed(&mut p) {
                return Err(syn::Error::new(
                    l.item.sig.ident.span(),
                    format!("assembling the GPU kernels ahead of time: {e}"),
                ));
            }
            dump(
                &name,
                &[
                    ("ptx", &p.ptx),
                    ("plan.txt", &format!("{:#?}", p.plan)),
                    ("blocks.txt", &format!("{:#?}", p.blocks)),
                ],
            );
            summary.ptx = p.ptx.clone();
            summary.cubins = p.cubins.iter().map(|(cc, _)| *cc).collect();
            let bytes = proc_macro2::Literal::byte_string(&p.encode());
            let locations = (0..l.spans.count()).map(|s| {
                let sp = l.spans.get(ir::Span(s as u32));
                quote_spanned! {sp=>
                    #private::Location { file: ::core::file!(), line: ::core::line!(), column: ::core::column!() }
                }
            });
            quote!(#private::gpu::Program::new(#name, #bytes, &[#(#locations),*]))
        }
        Err(dpl_cuda::Unsupported {
            message,
            too_large: Some(at),
        }) => {
            // Code that would explode is an error at the combinator that passed the limit.
            let span = if at == 0 {
                l.item.sig.ident.span()
            } else {
                l.spans.get(ir::Span(at))
            };
            return Err(syn::Error::new(span, message));
        }
        Err(e) => {
            // No GPU arm: the dispatch (`cpu_instead`) sends GPU places to the CPU arm instead.
            let reason = e.message;
            dump(&name, &[("not-compiled.txt", &reason)]);
            summary.not_compiled = reason;
            return Ok((TokenStream::new(), summary));
        }
    };
    let args = l.sig.params.iter().map(|p| {
        let x = &p.ident;
        quote!(#private::gpu::Arg::input(&#x, __dpl_place))
    });
    let repr = &l.sig.ret.repr;
    let call = if holds_matrix(repr) {
        // Downloaded as `Nested`s, then checked and converted as on the CPU.
        let downloaded = nested_for_matrix(repr);
        let convert = convert_result(quote!(__dpl_r), repr, &ret_location(l));
        let run = if l.sig.ret.result {
            quote!(run)
        } else {
            quote!(run_or_panic)
        };
        quote! {
            #private::rt::#run(move || {
                let __dpl_r: #downloaded = match #private::gpu::call(&__DPL_GPU, __dpl_place, ::std::vec![#(#args),*]) {
                    ::core::result::Result::Ok(r) => r,
                    ::core::result::Result::Err(e) => #private::rt::raise(e),
                };
                #convert
            })
        }
    } else if l.sig.ret.result {
        quote!(#private::gpu::call(&__DPL_GPU, __dpl_place, ::std::vec![#(#args),*]))
    } else {
        quote!(#private::gpu::call_or_panic(&__DPL_GPU, __dpl_place, ::std::vec![#(#args),*]))
    };
    let arm = quote! {
        __dpl_place @ (#private::Place::Sim | #private::Place::Gpu(_)) => {
            static __DPL_GPU: #private::gpu::Program = #program;
            #call
        }
    };
    Ok((arm, summary))
}

#[cfg(not(feature = "gpu"))]
fn gpu_arm(
    _: &Options,
    _: &Lowered,
    _: &Compiled,
) -> Result<(TokenStream, GpuSummary), syn::Error> {
    Ok((TokenStream::new(), GpuSummary::default()))
}

/// What `dpl::inspect!` shows of the GPU compilation.
#[derive(Default)]
struct GpuSummary {
    /// The PTX module (empty when not compiled for the GPU).
    ptx: String,
    /// Why the GPU backend did not compile the function (empty when it did, or when the
    /// GPU feature is off).
    not_compiled: String,
    /// The compute capabilities of the embedded cubins.
    cubins: Vec<u32>,
}

/// The positions of the parameters named in `replicated(...)`: sequence parameters of the
/// function (checked with or without the `mpi` feature).
fn replicated_positions(opts: &Options, l: &Lowered) -> Result<Vec<usize>, syn::Error> {
    let mut replicated = Vec::new();
    for id in &opts.replicated {
        match l.sig.params.iter().position(|p| p.ident == *id) {
            Some(pos) if !matches!(l.sig.params[pos].repr, Repr::Scalar(_)) => replicated.push(pos),
            Some(_) => {
                return Err(syn::Error::new(
                    id.span(),
                    format!(
                        "`{id}` is a scalar: scalars are the same on every rank already; `replicated` names sequence parameters"
                    ),
                ));
            }
            None => {
                return Err(syn::Error::new(
                    id.span(),
                    format!("`replicated` names `{id}`, which is not a parameter of this function"),
                ));
            }
        }
    }
    Ok(replicated)
}

/// What `dpl::inspect!` shows of the `Place::Mpi` compilation.
#[derive(Default)]
struct MpiSummary {
    /// The program of one rank (dpl-mpi's `describe`).
    ir: String,
    /// Why the function is not distributed.
    not_compiled: String,
    /// The generated Rust.
    rust: String,
}

/// The match arm for `Place::Mpi`: the distributed lowering of the fused function
/// (dpl-mpi), generated like the CPU arm with its communication in between. A function
/// the lowering does not distribute reports `Place::Mpi` unavailable, saying why. Without
/// the `mpi` feature there is no arm (the dispatch's last arm reports the place
/// unavailable).
#[cfg(feature = "mpi")]
fn mpi_arm(
    opts: &Options,
    l: &Lowered,
    compiled: &Compiled,
    params: &[(syn::Ident, ParamRepr)],
    replicated: &[usize],
) -> Result<(TokenStream, MpiSummary), syn::Error> {
    let private = quote!(::dpl::__private);
    let name = l.name.clone();
    let mut summary = MpiSummary::default();
    let body = match dpl_mpi::lower::lower(&compiled.fused, replicated) {
        Ok(d) => {
            summary.ir = dpl_mpi::lower::describe(&d);
            dump(&name, &[("mpi.ir", &summary.ir)]);
            let span_of = |s: ir::Span| l.spans.get(s);
            let inner_rt = match opts.inner {
                Inner::Block | Inner::Warp => quote!(::dpl::__private::rt),
                Inner::Seq | Inner::Auto => quote!(::dpl::__private::seq),
            };
            let call = format_ident!("__dpl_call");
            // A strided view is copied into the rank's block as a slice (`flat` below).
            let as_slices: Vec<(syn::Ident, ParamRepr)> = params
                .iter()
                .map(|(x, r)| match r {
                    ParamRepr::Strided => (x.clone(), ParamRepr::Slice),
                    _ => (x.clone(), r.clone()),
                })
                .collect();
            let body = dpl_mpi::codegen::body(
                &FnInput {
                    func: &d.func,
                    params: as_slices,
                    span: &span_of,
                    rt: quote!(::dpl::__private::rt),
                    private: private.clone(),
                    inner_rt,
                    heavy: Some(quote!(::dpl::__private::heavy)),
                    in_place: Vec::new(),
                },
                &d,
                &quote!(#private::mpi),
                &call,
            );
            let body = convert_result(body, &l.sig.ret.repr, &ret_location(l));
            let plan = dpl_mpi::codegen::plan(&d, &quote!(#private::mpi));
            let run = if l.sig.ret.result {
                quote!(#private::mpi::call(#plan, move |#call: &#private::mpi::Call<'_>| #body))
            } else {
                quote!(#private::mpi::call_or_panic(#plan, move |#call: &#private::mpi::Call<'_>| #body))
            };
            // A `MatrixView` (an ndarray 2-D parameter) is copied into the rank's `Matrix`
            // block: the run time builds realigned windows of the parameter's own type.
            let owned = params
                .iter()
                .filter(|(_, r)| *r == ParamRepr::Matrix)
                .map(|(x, _)| {
                    let held = format_ident!("__dpl_mpi_{}", x);
                    quote! {
                        let #held = { use #private::nd::AsMatrix as _; #x.__dpl_as_matrix() };
                        let #x = &*#held;
                    }
                });
            let flat = params
                .iter()
                .filter(|(_, r)| *r == ParamRepr::Strided)
                .map(|(x, _)| {
                    let held = format_ident!("__dpl_mpi_{}", x);
                    quote! {
                        let #held = { use #private::nd::Flat as _; #x.__dpl_flat() };
                        let #x = &*#held;
                    }
                });
            let run = quote!({ #(#owned)* #(#flat)* #run });
            summary.rust = run.to_string();
            dump(&name, &[("mpi.rs", &summary.rust)]);
            run
        }
        Err(reason) => {
            summary.not_compiled = reason.clone();
            dump(&name, &[("mpi-not-compiled.txt", &reason)]);
            let reason = format!("`{name}` is not distributed: {reason}");
            let e = quote!(#private::Error::PlaceUnavailable { place: #private::Place::Mpi, reason: ::std::string::String::from(#reason) });
            if l.sig.ret.result {
                quote!(::core::result::Result::Err(#e))
            } else {
                quote!(::core::panic!("{}", #e))
            }
        }
    };
    Ok((quote!(#private::Place::Mpi => #body,), summary))
}

#[cfg(not(feature = "mpi"))]
fn mpi_arm(
    _: &Options,
    _: &Lowered,
    _: &Compiled,
    _: &[(syn::Ident, ParamRepr)],
    _: &[usize],
) -> Result<(TokenStream, MpiSummary), syn::Error> {
    Ok((TokenStream::new(), MpiSummary::default()))
}

/// Converts the generated owned value (`Vec`s, tuples) into the declared result type. A
/// `Matrix` is checked to have rows of one length (an error raised at `at`, the declared
/// result type's location, otherwise).
fn convert_result(body: TokenStream, repr: &Repr, at: &TokenStream) -> TokenStream {
    fn conv(e: TokenStream, r: &Repr, at: &TokenStream) -> TokenStream {
        match r {
            Repr::SeqBuf(_) => quote!(::dpl::Seq::from(#e)),
            Repr::Nested(_) => quote!(::dpl::Nested::from(#e)),
            Repr::Matrix(_) => quote! {
                match ::dpl::Matrix::__from_result_rows(::dpl::Nested::from(#e), #at) {
                    ::core::result::Result::Ok(m) => m,
                    ::core::result::Result::Err(e) => ::dpl::__private::rt::raise(e),
                }
            },
            Repr::Tuple(rs) => {
                let names: Vec<_> = (0..rs.len())
                    .map(|k| format_ident!("__dpl_r{}", k))
                    .collect();
                let parts = names.iter().zip(rs).map(|(n, r)| conv(quote!(#n), r, at));
                quote!({ let (#(#names,)*) = #e; (#(#parts,)*) })
            }
            _ => e,
        }
    }
    conv(body, repr, at)
}

/// The source location of the declared result type, for the errors of its conversion.
fn ret_location(l: &Lowered) -> TokenStream {
    let span = match &l.item.sig.output {
        syn::ReturnType::Type(_, ty) => syn::spanned::Spanned::span(&**ty),
        syn::ReturnType::Default => l.item.sig.ident.span(),
    };
    quote_spanned! {span=>
        ::dpl::__private::Location { file: ::core::file!(), line: ::core::line!(), column: ::core::column!() }
    }
}

/// Whether a result holds a `Matrix` (which the GPU places download as a `Nested` and
/// convert).
#[cfg(feature = "gpu")]
fn holds_matrix(r: &Repr) -> bool {
    match r {
        Repr::Matrix(_) => true,
        Repr::Tuple(rs) => rs.iter().any(holds_matrix),
        _ => false,
    }
}

/// The Rust type of a result, with each `Matrix<T>` as a `Nested<T>`.
#[cfg(feature = "gpu")]
fn nested_for_matrix(r: &Repr) -> TokenStream {
    fn elem(t: &ir::Type) -> TokenStream {
        match t {
            ir::Type::Scalar(s) => {
                let s = format_ident!("{}", s.name());
                quote!(#s)
            }
            ir::Type::Tuple(ts) => {
                let ts = ts.iter().map(elem);
                quote!((#(#ts,)*))
            }
            _ => quote!(_),
        }
    }
    match r {
        Repr::Scalar(s) => elem(&ir::Type::Scalar(*s)),
        Repr::Slice(t) | Repr::Vec(t) => {
            let t = elem(t);
            quote!(::std::vec::Vec<#t>)
        }
        Repr::Nested(t) | Repr::Matrix(t) => {
            let t = elem(t);
            quote!(::dpl::Nested<#t>)
        }
        Repr::SeqBuf(t) => {
            let t = elem(t);
            quote!(::dpl::Seq<#t>)
        }
        Repr::Tuple(rs) => {
            let rs = rs.iter().map(nested_for_matrix);
            quote!((#(#rs,)*))
        }
    }
}

fn inspect_const(
    l: &Lowered,
    c: &Compiled,
    cpu: &TokenStream,
    gpu: &GpuSummary,
    mpi: &MpiSummary,
    bound: bool,
) -> TokenStream {
    let name = l.name.clone();
    let typed = dpl_core::text::print(&c.typed);
    let normalized = dpl_core::text::print(&c.normalized);
    let fused = dpl_core::text::print(&c.fused);
    let cpu_rust = cpu.to_string();
    let (before, after) = (c.stats_before(), c.stats());
    dump(
        &name,
        &[
            ("typed.ir", &typed),
            ("normalized.ir", &normalized),
            ("fused.ir", &fused),
            ("cpu.rs", &cpu_rust),
        ],
    );
    let ident = format_ident!("__dpl_inspect_{}", l.item.sig.ident);
    let vis = &l.item.vis;
    let (lb, la, tb, ta) = (
        before.loops,
        after.loops,
        before.temporaries,
        after.temporaries,
    );
    let phases = c.phases().len();
    let (ptx, not_compiled, cubins) = (&gpu.ptx, &gpu.not_compiled, &gpu.cubins);
    let (mpi_ir, mpi_not_compiled, mpi_rust) = (&mpi.ir, &mpi.not_compiled, &mpi.rust);
    quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals, dead_code)]
        #vis const #ident: ::dpl::Inspect = ::dpl::Inspect {
            name: #name,
            typed_ir: #typed,
            normalized_ir: #normalized,
            fused_ir: #fused,
            cpu_rust: #cpu_rust,
            loops_before_fusion: #lb,
            loops: #la,
            temporaries_before_fusion: #tb,
            temporaries: #ta,
            phases: #phases,
            ptx: #ptx,
            gpu_not_compiled: #not_compiled,
            cubins: &[#(#cubins),*],
            compute_bound: #bound,
            mpi_ir: #mpi_ir,
            mpi_not_compiled: #mpi_not_compiled,
            mpi_rust: #mpi_rust,
        };
    }
}

/// With `DPL_DUMP=<dir>` at build time, writes each text to `<dir>/<crate>/<function>.<what>`
/// (`<crate>` is cargo's `CARGO_CRATE_NAME`, so test crates that reuse a function name do
/// not overwrite each other). Failures to write are ignored: dumping is a debugging aid and
/// must not break builds.
fn dump(name: &str, files: &[(&str, &str)]) {
    // `dot::<f32>` (an instantiation of a generic function) as `dot.f32`.
    let name: String = name
        .chars()
        .filter(|c| !matches!(c, '<' | '>' | ' '))
        .collect::<String>()
        .replace("::", ".")
        .replace(',', ".");
    let Some(dir) = std::env::var_os("DPL_DUMP") else {
        return;
    };
    let krate = std::env::var("CARGO_CRATE_NAME").unwrap_or_else(|_| "crate".into());
    let dir = std::path::PathBuf::from(dir).join(krate);
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    for (what, text) in files {
        let _ = std::fs::write(dir.join(format!("{name}.{what}")), text);
    }
}
