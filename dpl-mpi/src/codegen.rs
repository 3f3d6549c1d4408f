//! Rust for the program of one rank ([`lower`](crate::lower)): dpl-cpu's code generator,
//! with a hook that turns each communication statement into a call of the run time
//! ([`rt`](crate::rt) in the facade, `::dpl::__private::mpi`). Everything else, the loops
//! included, is generated exactly as for `Place::Cpu`.

use crate::lower::{Comm, Distributed};
use dpl_core::ir::{Expr, Soac, SoacKind, Stmt, Type};
use dpl_cpu::codegen::{self, FnInput, HookCx};
use proc_macro2::{Ident, TokenStream};
use quote::quote;

/// The body of the function for `Place::Mpi`, an expression of its (inner) result that
/// reads the call context `call` (a `&Call`); `input.func` must be `d.func`. `mpi` is the
/// path of the run time.
pub fn body(input: &FnInput<'_>, d: &Distributed, mpi: &TokenStream, call: &Ident) -> TokenStream {
    let hook = |cx: &mut HookCx<'_, '_>, s: &Stmt| -> Option<TokenStream> {
        let c = d.comms.get(&s.var)?;
        Some(comm(cx, d, s, c, mpi, call))
    };
    codegen::body_with(input, Some(&hook))
}

/// The run time's [`Plan`](crate::rt::Plan) of a call of `d`: room in the agreement
/// records for the largest value a reduction or a scan exchanges, and whether the call
/// ends with an agreement.
pub fn plan(d: &Distributed, mpi: &TokenStream) -> TokenStream {
    let mut sizes = Vec::new();
    let mut comms: Vec<_> = d.comms.iter().collect();
    comms.sort_by_key(|(v, _)| v.index());
    for (&v, c) in comms {
        let ty = match c {
            Comm::Reduce { .. } => &d.func.vars[v].ty,
            Comm::Scan => match &d.func.vars[v].ty {
                Type::Seq(e) => e,
                t => t,
            },
            _ => continue,
        };
        let t = wire_ty(ty);
        sizes.push(quote!(<::core::option::Option<#t> as #mpi::Wire>::BYTES));
    }
    let final_agreement = d.final_agreement;
    quote!(#mpi::Plan {
        payload: { let mut m = 0usize; #(m = m.max(#sizes);)* m },
        final_agreement: #final_agreement,
    })
}

/// The Rust type of a scalar or a tuple of scalars.
fn wire_ty(t: &Type) -> TokenStream {
    match t {
        Type::Scalar(s) => {
            let id = quote::format_ident!("{}", s.name());
            quote!(#id)
        }
        Type::Tuple(ts) => {
            let ts = ts.iter().map(wire_ty);
            quote!((#(#ts,)*))
        }
        _ => quote!(()),
    }
}

fn soac_of(s: &Stmt) -> &Soac {
    match &s.expr {
        Expr::Soac(soac) => soac,
        _ => unreachable!("the lowering marks loops only"),
    }
}

fn is_rows(t: &Type) -> bool {
    matches!(t, Type::Seq(e) if matches!(**e, Type::Seq(_)))
}

/// The code of one communication statement.
fn comm(
    cx: &mut HookCx<'_, '_>,
    d: &Distributed,
    s: &Stmt,
    c: &Comm,
    mpi: &TokenStream,
    call: &Ident,
) -> TokenStream {
    let v = s.var;
    let name = cx.ident(v);
    let vars = &d.func.vars;
    let ty = cx.owned_ty(&vars[v].ty);
    let loc = cx.loc(s.span);
    match c {
        Comm::Rank => quote!(let #name: usize = #call.rank();),
        Comm::Size => quote!(let #name: usize = #call.size();),
        Comm::ParamLayouts { params } => {
            let lens = params.iter().map(|p| {
                let p = cx.ident(*p);
                quote!(#p.len())
            });
            cx.bind_owned(v, quote!(#mpi::param_layouts(#call, &[#(#lens),*])))
        }
        Comm::Layout { of } => {
            let x = cx.ident(*of);
            cx.bind_owned(v, quote!(#mpi::layout(#call, #x.len())))
        }
        Comm::Balanced { n } => {
            let n = cx.ident(*n);
            cx.bind_owned(v, quote!(#mpi::balanced(#call, #n)))
        }
        Comm::Reduce { partial } => {
            let soac = soac_of(s);
            let SoacKind::Reduce { op, init } = &soac.kind else {
                unreachable!("marked as a reduction")
            };
            // The rank's partial result: the CPU's reduction of the block, without `init`.
            let local = Soac {
                kind: SoacKind::Reduce {
                    op: op.clone(),
                    init: None,
                },
                len: soac.len,
                elem: soac.elem.clone(),
            };
            let part = cx.stmt(&Stmt {
                var: *partial,
                expr: Expr::Soac(Box::new(local)),
                span: s.span,
            });
            let (p, nl) = (cx.ident(*partial), cx.ident(soac.len));
            let op = cx.lambda(op, false);
            let init = match init {
                Some(i) => {
                    let i = cx.ident(*i);
                    quote!(::core::option::Option::Some(#i))
                }
                None => quote!(::core::option::Option::None),
            };
            let what = soac.kind.origin_name();
            quote! {
                let #name: #ty = #mpi::reduce(
                    #call,
                    if #nl > 0 { ::core::option::Option::Some({ #part #p }) } else { ::core::option::Option::None },
                    #init, #op, #what, #loc);
            }
        }
        Comm::Scan => {
            let soac = soac_of(s);
            let nl = cx.ident(soac.len);
            let elem = cx.lambda(&soac.elem, false);
            let what = soac.kind.origin_name();
            let ordered = vars[v].ty.holds_float();
            let value = match &soac.kind {
                SoacKind::Scan { op } => {
                    let op = cx.lambda(op, false);
                    quote!(#mpi::scan(#call, #nl, #elem, #op, #ordered, #what, #loc))
                }
                SoacKind::ExclusiveScan { op, init } => {
                    let op = cx.lambda(op, false);
                    let init = cx.ident(*init);
                    quote!(#mpi::exclusive_scan(#call, #nl, #init, #elem, #op, #ordered, #what, #loc))
                }
                _ => unreachable!("marked as a scan"),
            };
            cx.bind_owned(v, value)
        }
        Comm::Window {
            x,
            lay_x,
            lay_t,
            lo,
            hi,
        } => {
            let [x_, lx, lt, lo, hi] = [*x, *lay_x, *lay_t, *lo, *hi].map(|w| cx.ident(w));
            if is_rows(&vars[*x].ty) {
                cx.bind_like(
                    v,
                    quote!(#mpi::window_rows(#call, #x_, #lx, #lt, #lo, #hi)),
                    *x,
                )
            } else {
                cx.bind_view(v, quote!(#mpi::window(#call, #x_, #lx, #lt, #lo, #hi)))
            }
        }
        Comm::AllGather { x, lay } => {
            let [x_, lay] = [*x, *lay].map(|w| cx.ident(w));
            if is_rows(&vars[*x].ty) {
                cx.bind_owned(v, quote!(#mpi::all_gather_rows(#call, #x_, #lay)))
            } else {
                cx.bind_view(v, quote!(#mpi::all_gather(#call, #x_, #lay)))
            }
        }
        Comm::Element {
            x,
            lay,
            index,
            origin,
            needed,
        } => {
            let [x, lay, index] = [*x, *lay, *index].map(|w| cx.ident(w));
            let needed = match needed {
                Some(n) => {
                    let n = cx.ident(*n);
                    quote!(#n != 0)
                }
                None => quote!(true),
            };
            let what = origin.name();
            quote!(let #name: #ty = #mpi::element(#call, #x, #lay, #index, #needed, #what, #loc);)
        }
        Comm::Gather {
            x,
            lay,
            req,
            origin,
        } => {
            let [x, lay, req] = [*x, *lay, *req].map(|w| cx.ident(w));
            let what = origin.name();
            cx.bind_owned(v, quote!(#mpi::gather(#call, #x, #lay, #req, #what, #loc)))
        }
        Comm::Scatter { lay_dst, src_len } => {
            let soac = soac_of(s);
            let nl = cx.ident(soac.len);
            let [lay_dst, src_len] = [*lay_dst, *src_len].map(|w| cx.ident(w));
            let elem = cx.lambda(&soac.elem, false);
            let value = match &soac.kind {
                SoacKind::Scatter { dst } => {
                    let dst = cx.ident(*dst);
                    quote!(#mpi::scatter(#call, #nl, #elem, #dst, #lay_dst, "scatter", #loc))
                }
                SoacKind::ScatterReduce { op, dst } => {
                    let identity = match d.func.vars[v].ty.elem().and_then(|e| cx.identity(op, e)) {
                        Some(id) => quote!(::core::option::Option::Some(#id)),
                        None => quote!(::core::option::Option::None),
                    };
                    let dst = cx.ident(*dst);
                    let op = cx.lambda(op, false);
                    quote!(#mpi::scatter_reduce(#call, #nl, #elem, #dst, #lay_dst, #src_len, #op, #identity, "scatter_reduce", #loc))
                }
                _ => unreachable!("marked as a scatter"),
            };
            cx.bind_owned(v, value)
        }
        Comm::Permute { lay } => {
            let soac = soac_of(s);
            let (nl, lay) = (cx.ident(soac.len), cx.ident(*lay));
            let elem = cx.lambda(&soac.elem, false);
            cx.bind_owned(
                v,
                quote!(#mpi::permute(#call, #nl, #elem, #lay, "permute", #loc)),
            )
        }
        Comm::Sort { lay } => {
            let soac = soac_of(s);
            let (nl, lay) = (cx.ident(soac.len), cx.ident(*lay));
            let elem = cx.lambda(&soac.elem, false);
            let what = soac.kind.origin_name();
            let value = if soac.kind == SoacKind::Sort {
                quote!(#mpi::sort(#call, #nl, #elem, #lay, #what, #loc))
            } else {
                quote!(#mpi::sort_by_key(#call, #nl, #elem, #lay, #what, #loc))
            };
            cx.bind_owned(v, value)
        }
        Comm::Indexed { x, lay, rows } => {
            let [x, lay, rows] = [*x, *lay, *rows].map(|w| cx.ident(w));
            cx.bind_view(v, quote!(#mpi::fetch_indexed(#call, #x, #lay, #rows)))
        }
        Comm::BlockOf { x } => {
            let x_ = cx.ident(*x);
            if is_rows(&vars[*x].ty) {
                cx.bind_owned(v, quote!(#mpi::block_of_rows(#call, #x_)))
            } else {
                cx.bind_owned(v, quote!(#mpi::block_of(#call, #x_)))
            }
        }
    }
}
