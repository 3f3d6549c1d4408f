//! A kernel being generated ([`Kernel`]: its PTX, its common registers, the variables
//! bound in it) and its setup: parameters for captured variables and temporaries, the
//! allocations, the launches, and the loops every kind of kernel uses (a thread or a
//! group of threads per element, rounds).

use super::*;

/// A kernel's loop over elements `0..n` ([`Gen::elem_loop`]): a thread per element (a
/// grid-stride loop) or a group of threads per element, stepping by the number of threads
/// (groups) of the grid.
#[derive(Clone, Debug)]
pub(super) struct ElemLoop {
    /// The element's index (the same in every thread of a group).
    pub(super) i: Reg,
    /// The step of `i`.
    pub(super) step: Reg,
    /// With a group per element: the group's threads.
    pub(super) group: Option<GroupLoop>,
    /// The loop's labels: its top, the next element, its end.
    pub(super) top: Label,
    pub(super) cont: Label,
    pub(super) end: Label,
}

/// The threads of a group (a warp or a block) working on one element of an [`ElemLoop`].
#[derive(Clone, Debug)]
pub(super) struct GroupLoop {
    /// A block per element (else a warp).
    pub(super) block: bool,
    /// The thread's position in its group.
    pub(super) lane: Reg,
    /// Whether the thread is the group's first.
    pub(super) leader: Reg,
}

impl ElemLoop {
    /// Where the element's failed checks go: its key (its index), then the next element.
    pub(super) fn ctx(&self) -> Ctx {
        Ctx {
            key: self.i.clone(),
            fail: Some(self.cont.clone()),
        }
    }
}

/// A kernel being generated: its PTX text, the registers every kernel has (set up by
/// [`Gen::new_kernel`]), and the values of the variables bound in it (its captures, and
/// those of the element function being compiled).
pub(super) struct Kernel {
    /// The PTX text.
    pub(super) ptx: ptx::Kernel,
    /// The error record (a global address, see [`Gen::record`]).
    pub(super) err: Reg,
    /// The report key: 0, or in report mode the negated key of the failure to describe.
    pub(super) report: Reg,
    /// The thread's index in its block (`u32`, and as a `u64`).
    pub(super) tid: Reg,
    pub(super) tid64: Reg,
    /// The thread's lane in its warp, and its warp in the block (`u32`).
    pub(super) lane: Reg,
    pub(super) warp: Reg,
    /// The block's index in the grid (`u64`).
    pub(super) ctaid64: Reg,
    /// The variables bound in the kernel.
    pub(super) env: Env,
    /// The kernel is safe whatever values its inputs hold
    /// ([`Launch::any_data`](crate::plan::Launch::any_data)): set by
    /// the generator of a kernel that addresses memory only through host counts, cleared
    /// again by a recorded check ([`Gen::record`]) or a loop in an element function.
    pub(super) any_data: bool,
}

impl Kernel {
    /// A fresh register for a scalar of type `ty`.
    pub(super) fn reg(&mut self, ty: Scalar) -> Reg {
        self.ptx.reg(ty)
    }

    /// A fresh label.
    pub(super) fn label(&mut self) -> Label {
        self.ptx.label()
    }

    /// Emits one instruction.
    pub(super) fn emit(&mut self, ins: Ins) {
        self.ptx.emit(ins)
    }

    /// Wraps an 8- or 16-bit integer at its width (see [`crate::ptx::Kernel::wrap`]).
    pub(super) fn wrap(&mut self, r: &Reg) {
        self.ptx.wrap(r)
    }

    /// An `f32` value rounded to a 16-bit float (see [`crate::ptx::Kernel::round_half`]).
    pub(super) fn round_half(&mut self, x: &Reg, to: Scalar) -> Reg {
        self.ptx.round_half(x, to)
    }

    /// A 16-bit float's bits widened (see [`crate::ptx::Kernel::widen_half`]).
    pub(super) fn widen_half(&mut self, b: &Reg, to: Scalar) -> Reg {
        self.ptx.widen_half(b, to)
    }

    /// A 16-bit float's bits (see [`crate::ptx::Kernel::half_bits`]).
    pub(super) fn half_bits(&mut self, r: &Reg) -> Reg {
        self.ptx.half_bits(r)
    }

    /// Replaces a NaN in a float register by the canonical NaN (see
    /// [`crate::ptx::Kernel::canon`]).
    pub(super) fn canon(&mut self, r: &Reg) {
        self.ptx.canon(r)
    }

    /// Places a label here.
    pub(super) fn place(&mut self, label: &Label) {
        self.ptx.place(label)
    }

    /// Declares a `.shared` array of `bytes` bytes.
    pub(super) fn shared(&mut self, bytes: u32) -> Sym {
        self.ptx.shared(bytes)
    }

    /// Declares a per-thread `.local` array of `bytes` bytes.
    pub(super) fn local(&mut self, bytes: u32) -> Sym {
        self.ptx.local(bytes)
    }

    /// A parameter passed as `arg`, loaded into a register of type `ty`.
    pub(super) fn param(&mut self, ty: Scalar, arg: KArg) -> Reg {
        self.ptx.param(ty, arg)
    }

    /// A pointer parameter passed as `arg`, as a global address.
    pub(super) fn pointer(&mut self, arg: KArg) -> Reg {
        self.ptx.pointer(arg)
    }
}

impl<'f> Gen<'f> {
    /// A new kernel named after `what`, launched with the block size of the kernels being
    /// generated: its error record and report key parameters, its thread's indices.
    pub(super) fn new_kernel(&mut self, what: &str) -> Kernel {
        let name = format!("{}_k{}_{what}", self.base, self.kernels.len());
        let mut k = ptx::Kernel::new(name, self.bsize());
        let err = k.pointer(KArg::ErrorRecord);
        let report = k.param(Scalar::U64, KArg::ReportKey);
        let tid = k.reg(Scalar::U32);
        k.emit(Ins::mov(Ty::U32, &tid, Sreg::TidX));
        let tid64 = k.reg(Scalar::U64);
        k.emit(Ins::cvt(Ty::U64, Ty::U32, &tid64, &tid));
        let lane = k.reg(Scalar::U32);
        k.emit(Ins::and(Ty::B32, &lane, &tid, 31));
        let warp = k.reg(Scalar::U32);
        k.emit(Ins::shr(Ty::U32, &warp, &tid, 5));
        let cta = k.reg(Scalar::U32);
        k.emit(Ins::mov(Ty::U32, &cta, Sreg::CtaidX));
        let ctaid64 = k.reg(Scalar::U64);
        k.emit(Ins::cvt(Ty::U64, Ty::U32, &ctaid64, &cta));
        Kernel {
            ptx: k,
            err,
            report,
            tid,
            tid64,
            lane,
            warp,
            ctaid64,
            env: Env::new(),
            any_data: false,
        }
    }

    pub(super) fn push_kernel(&mut self, k: Kernel) -> u32 {
        let name = k.ptx.name.clone();
        self.kinfo.push(KernelInfo {
            block: k.ptx.block,
            ..self.cur
        });
        let text = k.ptx.finish();
        self.done_bytes += text.len();
        self.kernels.push((name, text));
        self.kernels.len() as u32 - 1
    }

    /// Binds a host variable (or a part of it) as kernel parameters.
    fn bind_var(&mut self, k: &mut Kernel, v: u32, path: Vec<u32>, ty: &Type) -> R<KVal> {
        Ok(match ty {
            Type::Scalar(s) => KVal::S(k.param(
                *s,
                KArg::Scalar {
                    var: v,
                    path,
                    ty: *s,
                },
            )),
            Type::Tuple(ts) => KVal::Tup(
                ts.iter()
                    .enumerate()
                    .map(|(i, t)| {
                        let mut p = path.clone();
                        p.push(i as u32);
                        self.bind_var(k, v, p, t)
                    })
                    .collect::<R<_>>()?,
            ),
            Type::Seq(elem) => {
                let (offs, leaf_ty) = match &**elem {
                    Type::Seq(inner) => (
                        Some(k.pointer(KArg::Buf(Buf::Offsets {
                            var: v,
                            path: path.clone(),
                        }))),
                        &**inner,
                    ),
                    e => (None, e),
                };
                let layout = if offs.is_some() {
                    let mut field = |f: u32| {
                        k.ptx.param_name(KArg::RowLayout {
                            var: v,
                            path: path.clone(),
                            field: f,
                        })
                    };
                    let names = [field(0), field(1), field(2), field(3)];
                    Some(Rc::new(RowLayout { names }))
                } else {
                    None
                };
                let ls = match leaves(leaf_ty) {
                    Ok(ls) => ls,
                    Err(_) => return unsupported(format!("the sequence type `{ty}` in a kernel")),
                };
                let ptrs = (0..ls.len())
                    .map(|j| {
                        k.pointer(KArg::Buf(Buf::Seq {
                            var: v,
                            path: path.clone(),
                            leaf: j as u32,
                        }))
                    })
                    .collect();
                let len = k.param(Scalar::U64, KArg::Count(Count::Len { var: v, path }));
                KVal::Seq {
                    ptrs,
                    len: Reg {
                        ty: Scalar::Usize,
                        ..len
                    },
                    elem: (**elem).clone(),
                    offs,
                    layout,
                    step: None,
                }
            }
            Type::Infer | Type::Param(..) => return unsupported("an untyped variable"),
        })
    }

    /// Binds the captures of some lambdas as kernel parameters.
    pub(super) fn bind_captures(&mut self, k: &mut Kernel, lambdas: &[&Lambda]) -> R<Env> {
        let mut env = Env::new();
        for l in lambdas {
            for &c in &l.captures {
                if env.contains_key(&c) {
                    continue;
                }
                if let Some(soac) = self.deferred.get(&c).cloned() {
                    // Its element function's captures, then the map itself, lazily.
                    let inner = self.bind_captures(k, &[&soac.elem])?;
                    for (v, x) in inner {
                        env.entry(v).or_insert(x);
                    }
                    let elem_ty = self.ty(c).elem().cloned().unwrap_or(Type::Infer);
                    env.insert(
                        c,
                        KVal::Lazy(Rc::new(LazySeq {
                            var: c,
                            soac,
                            elem_ty,
                            span: 0,
                        })),
                    );
                    continue;
                }
                let t = self.ty(c).clone();
                let val = self.bind_var(k, var(c), Vec::new(), &t)?;
                env.insert(c, val);
            }
        }
        Ok(env)
    }

    /// Pointers to temporaries, one per leaf, as kernel parameters.
    pub(super) fn temp_ptrs(k: &mut Kernel, temps: &[u32]) -> Vec<Reg> {
        temps
            .iter()
            .map(|t| k.pointer(KArg::Buf(Buf::Temp(*t))))
            .collect()
    }

    /// Zeroed buffers of `count` elements, one per leaf type of `ls`, as temporaries.
    pub(super) fn alloc_leaves(
        &mut self,
        ls: &[Scalar],
        count: &Count,
        steps: &mut Vec<Step>,
    ) -> Vec<u32> {
        self.alloc_buffers(ls, count, Init::Zeroed, steps)
    }

    /// A zeroed `u32` count of blocks done, as a temporary, for [`Gen::last_block`], whose
    /// last block sets it back to zero: so it is kept zeroed between calls
    /// ([`Init::KeptZero`]), not zeroed by each.
    pub(super) fn alloc_blocks_done(&mut self, steps: &mut Vec<Step>) -> u32 {
        self.alloc_buffers(&[Scalar::U32], &Count::Const(1), Init::KeptZero, steps)[0]
    }

    /// [`Gen::alloc_leaves`] for a result that one kernel writes at every index before
    /// anything reads it: not zeroed ([`Init::Written`]). The simulator fills
    /// such buffers with a pattern, so a kernel that leaves an element unwritten gives a
    /// wrong result in the tests instead of a zero that happens to be right.
    pub(super) fn alloc_written(
        &mut self,
        ls: &[Scalar],
        count: &Count,
        steps: &mut Vec<Step>,
    ) -> Vec<u32> {
        self.alloc_buffers(ls, count, Init::Written, steps)
    }

    /// Buffers of `count` elements, one per leaf type of `ls`, as temporaries, starting as
    /// `init` says.
    fn alloc_buffers(
        &mut self,
        ls: &[Scalar],
        count: &Count,
        init: Init,
        steps: &mut Vec<Step>,
    ) -> Vec<u32> {
        ls.iter()
            .map(|&elem| {
                let temp = self.temp();
                steps.push(Step::Alloc {
                    temp,
                    init,
                    elem,
                    count: count.clone(),
                    origin: self.stmt_origin.0,
                    span: self.stmt_origin.1,
                });
                temp
            })
            .collect()
    }

    /// The head of a kernel's loop over elements `0..n` with a thread (`per` is `None`), a
    /// warp (`Some(false)`) or a block (`Some(true)`) per element: element `i`, stepping
    /// by the number of threads (groups) of the grid; emits up to the test of `i`. The
    /// caller emits the body, then [`Gen::elem_loop_end`].
    pub(super) fn elem_loop(k: &mut Kernel, n: &Reg, per: Option<bool>) -> ElemLoop {
        let ntid = k.reg(Scalar::U32);
        k.emit(Ins::mov(Ty::U32, &ntid, Sreg::NtidX));
        let ncta = k.reg(Scalar::U32);
        k.emit(Ins::mov(Ty::U32, &ncta, Sreg::NctaidX));
        let (i, step, group) = match per {
            None => {
                let step = k.reg(Scalar::U64);
                k.emit(Ins::mul_wide(Ty::U32, &step, &ntid, &ncta));
                let i = k.reg(Scalar::Usize);
                let base = k.reg(Scalar::U64);
                let cta = k.reg(Scalar::U32);
                k.emit(Ins::cvt(Ty::U32, Ty::U64, &cta, &k.ctaid64));
                k.emit(Ins::mul_wide(Ty::U32, &base, &ntid, &cta));
                k.emit(Ins::add(Ty::S64, &i, &base, &k.tid64));
                (i, step, None)
            }
            Some(block) => {
                let i = k.reg(Scalar::Usize);
                let step = k.reg(Scalar::U64);
                let lane = if block {
                    k.emit(Ins::mov(Ty::U64, &i, &k.ctaid64));
                    k.emit(Ins::cvt(Ty::U64, Ty::U32, &step, &ncta));
                    k.tid.clone()
                } else {
                    let cta = k.reg(Scalar::U32);
                    k.emit(Ins::cvt(Ty::U32, Ty::U64, &cta, &k.ctaid64));
                    k.emit(Ins::mul_wide(Ty::U32, &i, &ntid, &cta));
                    k.emit(Ins::add(Ty::S64, &i, &i, &k.tid64));
                    k.emit(Ins::shr(Ty::U64, &i, &i, 5));
                    k.emit(Ins::mul_wide(Ty::U32, &step, &ntid, &ncta));
                    k.emit(Ins::shr(Ty::U64, &step, &step, 5));
                    k.lane.clone()
                };
                let leader = k.reg(Scalar::Bool);
                k.emit(Ins::setp(Cmp::Eq, Ty::U32, &leader, &lane, 0));
                let group = GroupLoop {
                    block,
                    lane,
                    leader,
                };
                (i, step, Some(group))
            }
        };
        let (top, cont, end) = (k.label(), k.label(), k.label());
        k.place(&top);
        let p = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &p, &i, n));
        k.emit(Ins::bra(&end).when(&p));
        ElemLoop {
            i,
            step,
            group,
            top,
            cont,
            end,
        }
    }

    /// The end of the loop [`Gen::elem_loop`] began (the next element, the step).
    pub(super) fn elem_loop_end(k: &mut Kernel, el: &ElemLoop) {
        k.place(&el.cont);
        k.emit(Ins::add(Ty::S64, &el.i, &el.i, &el.step));
        k.emit(match el.group {
            Some(_) => Ins::bra(&el.top),
            None => Ins::bra_uni(&el.top),
        });
        k.place(&el.end);
    }

    /// Runs `f` with the inner reductions split across the loop's group, if it has one
    /// (see [`Gen::ordered_reduce`]).
    pub(super) fn split_by<T>(&mut self, el: &ElemLoop, f: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        self.split = el.group.as_ref().map(|g| Split { block: g.block });
        let v = f(self);
        self.split = None;
        v
    }

    /// The element function at the loop's element, evaluated by every thread of a group
    /// (so control flow stays uniform in the group), its inner reductions split across
    /// the group's threads.
    pub(super) fn loop_elem(&mut self, k: &mut Kernel, l: &Lambda, el: &ElemLoop) -> R<KVal> {
        self.split_by(el, |g| g.elem(k, l, &el.i, &el.ctx()))
    }

    /// With a group per element: the threads but the group's first go on with the next
    /// element (what follows is stored once).
    pub(super) fn leader_only(k: &mut Kernel, el: &ElemLoop) {
        if let Some(g) = &el.group {
            k.emit(Ins::bra(&el.cont).unless(&g.leader));
        }
    }

    /// Elements per block and turn of a loop with a thread (`per` is `None`), a warp or a
    /// block per element.
    pub(super) fn per_block(&self, per: Option<bool>) -> u64 {
        match per {
            None => u64::from(self.bsize()),
            Some(false) => u64::from(self.warps()),
            Some(true) => 1,
        }
    }

    /// The name of a kernel `what` with a thread, a warp or a block per element (`what`,
    /// `what_warp`, `what_block`).
    pub(super) fn loop_name(what: &str, per: Option<bool>) -> String {
        match per {
            None => what.to_string(),
            Some(false) => format!("{what}_warp"),
            Some(true) => format!("{what}_block"),
        }
    }

    /// Ends kernel `k` and launches it on `grid` blocks ([`Gen::launch`]).
    pub(super) fn launch_on(&mut self, k: Kernel, grid: Count, steps: &mut Vec<Step>) {
        let (args, any_data) = (k.ptx.args.clone(), k.any_data);
        let id = self.push_kernel(k);
        steps.push(self.launch(id, grid, args, any_data));
    }

    /// Ends kernel `k` and launches it as a grid-stride kernel over `n` items, `per_block`
    /// per block and turn ([`Gen::stride_launch`]).
    pub(super) fn launch_stride(
        &mut self,
        k: Kernel,
        n: &Count,
        per_block: u64,
        steps: &mut Vec<Step>,
    ) {
        let (args, any_data) = (k.ptx.args.clone(), k.any_data);
        let id = self.push_kernel(k);
        steps.push(self.stride_launch(id, n, per_block, args, any_data));
    }

    /// A launch of a kernel whose results depend on its grid size (one block per tile,
    /// one block in all); `any_data`: [`Launch::any_data`].
    pub(super) fn launch(&self, kernel: u32, grid: Count, args: Vec<KArg>, any_data: bool) -> Step {
        Step::Launch(Launch {
            kernel,
            grid,
            block: self.bsize(),
            args,
            any_grid: false,
            any_data,
        })
    }

    /// A launch of a grid-stride kernel (see [`Gen::stride_grid`]) over `n` items,
    /// `per_block` per block and turn; `any_data`: [`Launch::any_data`].
    pub(super) fn stride_launch(
        &self,
        kernel: u32,
        n: &Count,
        per_block: u64,
        args: Vec<KArg>,
        any_data: bool,
    ) -> Step {
        Step::Launch(Launch {
            kernel,
            grid: self.stride_grid(kernel, n, per_block),
            block: self.bsize(),
            args,
            any_grid: true,
            any_data,
        })
    }

    /// Evaluates the element function at index `i`.
    pub(super) fn elem(&mut self, k: &mut Kernel, l: &Lambda, i: &Reg, ctx: &Ctx) -> R<KVal> {
        k.env.insert(
            l.params[0],
            KVal::S(Reg {
                ty: Scalar::Usize,
                ..i.clone()
            }),
        );
        self.block(k, &l.body, ctx)
    }

    /// The start value of a reduction or exclusive scan (`init`), bound as kernel
    /// parameters: its scalar leaves.
    pub(super) fn bind_init(&mut self, k: &mut Kernel, init: Option<VarId>) -> R<Option<Vec<Reg>>> {
        match init {
            Some(v) => {
                let t = self.ty(v).clone();
                Ok(Some(self.bind_var(k, var(v), Vec::new(), &t)?.flatten()?))
            }
            None => Ok(None),
        }
    }

    /// Sets the optional `acc` to the start value `init`, if there is one.
    pub(super) fn set_init(k: &mut Kernel, acc: &Opt, init: Option<&[Reg]>) {
        if let Some(iv) = init {
            for (d, s) in acc.v.iter().zip(iv) {
                Self::mov(k, d, s);
            }
            k.emit(Ins::setp(Cmp::Eq, Ty::U32, &acc.has, 1, 1));
        }
    }

    /// The head of a loop over `rounds` rounds: returns the round counter and the labels
    /// for [`Gen::rounds_tail`].
    pub(super) fn rounds_head(k: &mut Kernel, rounds: u64) -> (Reg, Label, Label) {
        let r = k.reg(Scalar::U32);
        k.emit(Ins::mov(Ty::U32, &r, 0));
        let (top, end) = (k.label(), k.label());
        k.place(&top);
        let p = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ge, Ty::U32, &p, &r, rounds));
        k.emit(Ins::bra_uni(&end).when(&p));
        (r, top, end)
    }

    pub(super) fn rounds_tail(k: &mut Kernel, r: &Reg, top: &Label, end: &Label) {
        k.emit(Ins::add(Ty::S32, r, r, 1));
        k.emit(Ins::bra_uni(top));
        k.place(end);
    }
}
