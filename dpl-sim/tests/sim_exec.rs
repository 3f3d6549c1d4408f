//! Execution model: divergence and reconvergence, barriers and shared memory, warp
//! collectives, atomics, state spaces, calls, counters and every error case.

mod common;

use common::{HEADER, launch};
use dpl_sim::{Arg, Device, DeviceBuffer, Error, FaultKind, Report};

/// Global thread index into `%r1`, `n` into `%r2`, out pointer (global) into `%rd2`;
/// exits threads with `i >= n`. Parameters: `(u64 out, u32 n)`.
const PROLOGUE: &str = "
	ld.param.u64 	%rd1, [k_param_0];
	ld.param.u32 	%r2, [k_param_1];
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mov.u32 	%r5, %tid.x;
	mad.lo.s32 	%r1, %r3, %r4, %r5;
	cvta.to.global.u64 	%rd2, %rd1;
";

fn kernel(body: &str) -> String {
    format!(
        "{HEADER}
.visible .entry k(
	.param .u64 k_param_0,
	.param .u32 k_param_1
)
{{
	.reg .pred 	%p<16>;
	.reg .b32 	%r<40>;
	.reg .b64 	%rd<20>;
	.reg .f32 	%f<10>;
{PROLOGUE}
{body}
}}
"
    )
}

/// Launches `k(out, n)` of `ptx` on `grid` blocks of `block` threads.
fn launch_k(
    dev: &Device,
    ptx: &str,
    grid: u32,
    block: u32,
    out: &DeviceBuffer<u32>,
    n: u32,
) -> dpl_sim::Result<Report> {
    launch(
        dev,
        ptx,
        "k",
        [grid, 1, 1],
        [block, 1, 1],
        0,
        &[out.into(), n.into()],
    )
}

/// Runs `body` with `threads` threads over an output of `n` u32.
fn run_u32(body: &str, n: usize, threads: u32, block: u32) -> (Vec<u32>, Report) {
    let dev = Device::new();
    let out = dev.alloc_zeroed::<u32>(n);
    let grid = threads.div_ceil(block).max(1);
    let r = launch_k(&dev, &kernel(body), grid, block, &out, n as u32)
        .unwrap_or_else(|e| panic!("{e}"));
    (dev.download(&out), r)
}

#[test]
fn nested_branches_loops_and_early_exit_reconverge() {
    // v = i%4==0 ? 1 : (i%2==0 ? 2 : 3); for j in 0..i%7 { v += j*i }; lanes with
    // i%5==3 exit early; the rest store v plus (activemask << 8) in the high bits.
    let body = "
	setp.ge.u32 	%p1, %r1, %r2;
	@%p1 bra 	$L__EXIT;
	and.b32 	%r6, %r1, 1;
	setp.ne.s32 	%p2, %r6, 0;
	@%p2 bra 	$L__ODD;
	and.b32 	%r7, %r1, 3;
	setp.eq.s32 	%p3, %r7, 0;
	selp.u32 	%r8, 1, 2, %p3;
	bra.uni 	$L__JOIN;
$L__ODD:
	mov.u32 	%r8, 3;
$L__JOIN:
	rem.u32 	%r9, %r1, 7;
	mov.u32 	%r10, 0;
	setp.eq.s32 	%p4, %r9, 0;
	@%p4 bra 	$L__AFTER;
$L__LOOP:
	mad.lo.s32 	%r8, %r10, %r1, %r8;
	add.s32 	%r10, %r10, 1;
	setp.lt.u32 	%p5, %r10, %r9;
	@%p5 bra 	$L__LOOP;
$L__AFTER:
	rem.u32 	%r11, %r1, 5;
	setp.eq.s32 	%p6, %r11, 3;
	@%p6 bra 	$L__EXIT;
	activemask.b32 	%r12;
	and.b32 	%r8, %r8, 0xff;
	mul.wide.u32 	%rd3, %r1, 4;
	add.s64 	%rd4, %rd2, %rd3;
	st.global.u32 	[%rd4], %r8;
	add.s64 	%rd5, %rd4, 4096;
	st.global.u32 	[%rd5], %r12;
$L__EXIT:
	ret;
";
    let n = 1000usize;
    let dev = Device::new();
    let out = dev.alloc_zeroed::<u32>(2048);
    let r = launch_k(&dev, &kernel(body), 8, 128, &out, n as u32).unwrap();
    let got = dev.download(&out);
    for i in 0..1024usize {
        let stored = i < n && i % 5 != 3;
        let mut v: u32 = if i % 2 == 1 {
            3
        } else if i % 4 == 0 {
            1
        } else {
            2
        };
        for j in 0..(i % 7) as u32 {
            v = v.wrapping_add(j * i as u32);
        }
        let want = if stored { v & 0xff } else { 0 };
        assert_eq!(got[i], want, "value of thread {i}");
        if stored {
            // Reconverged: every lane of the warp that is still alive is active.
            let warp = i / 32 * 32;
            let mut mask = 0u32;
            for l in 0..32 {
                let t = warp + l;
                if t < n && t % 5 != 3 {
                    mask |= 1 << l;
                }
            }
            assert_eq!(got[1024 + i], mask, "activemask of thread {i}");
        }
    }
    assert!(r.thread_instructions < r.instructions * 32);
}

#[test]
fn barriers_and_shared_memory_reverse_a_block() {
    let ptx = format!(
        "{HEADER}
.shared .align 4 .b8 tile[1024];
.extern .shared .align 4 .b8 dyn[];
.visible .entry k(.param .u64 k_param_0, .param .u32 k_param_1)
{{
	.reg .pred %p<4>; .reg .b32 %r<20>; .reg .b64 %rd<20>;
{PROLOGUE}
	mul.wide.u32 	%rd3, %r1, 4;
	add.s64 	%rd4, %rd2, %rd3;
	ld.global.u32 	%r6, [%rd4];
	shl.b32 	%r7, %r5, 2;
	mov.u32 	%r8, tile;
	add.s32 	%r9, %r8, %r7;
	st.shared.u32 	[%r9], %r6;
	mov.u32 	%r14, dyn;
	add.s32 	%r15, %r14, %r7;
	mul.lo.s32 	%r16, %r6, 3;
	st.shared.u32 	[%r15], %r16;
	bar.sync 	0;
	sub.s32 	%r10, %r4, %r5;
	add.s32 	%r10, %r10, -1;
	shl.b32 	%r11, %r10, 2;
	add.s32 	%r12, %r8, %r11;
	ld.shared.u32 	%r13, [%r12];
	add.s32 	%r17, %r14, %r11;
	ld.shared.u32 	%r18, [%r17];
	barrier.sync 	0;
	add.s32 	%r13, %r13, %r18;
	st.global.u32 	[%rd4], %r13;
	ret;
}}
"
    );
    let dev = Device::new();
    let data: Vec<u32> = (0..1024).map(|i| i * 7 + 1).collect();
    let buf = dev.upload(&data);
    let r = launch(
        &dev,
        &ptx,
        "k",
        [4, 1, 1],
        [256, 1, 1],
        1024,
        &[(&buf).into(), 1024u32.into()],
    )
    .unwrap();
    let got = dev.download(&buf);
    for b in 0..4 {
        for t in 0..256 {
            let src = data[b * 256 + 255 - t];
            assert_eq!(got[b * 256 + t], src + 3 * src);
        }
    }
    assert_eq!(r.barriers, 8, "two barriers in each of four blocks");
    assert_eq!(r.bank_conflicts, 0);
    assert_eq!(r.shared_store_requests, 2 * 32);
}

#[test]
fn warp_shuffles_votes_and_reductions() {
    // lane value v = i*3+1; out[i] = butterfly sum (all lanes), plus ballot of odd v>>1, etc.
    let body = "
	mul.lo.s32 	%r6, %r1, 3;
	add.s32 	%r6, %r6, 1;
	mov.u32 	%r7, %r6;
	shfl.sync.bfly.b32 	%r8, %r7, 16, 31, -1;
	add.s32 	%r7, %r7, %r8;
	shfl.sync.bfly.b32 	%r8, %r7, 8, 31, -1;
	add.s32 	%r7, %r7, %r8;
	shfl.sync.bfly.b32 	%r8, %r7, 4, 31, -1;
	add.s32 	%r7, %r7, %r8;
	shfl.sync.bfly.b32 	%r8, %r7, 2, 31, -1;
	add.s32 	%r7, %r7, %r8;
	shfl.sync.bfly.b32 	%r8, %r7, 1, 31, -1;
	add.s32 	%r7, %r7, %r8;
	shfl.sync.up.b32 	%r9|%p1, %r6, 1, 0, -1;
	selp.u32 	%r9, %r9, 0, %p1;
	shfl.sync.down.b32 	%r10|%p2, %r6, 3, 31, -1;
	selp.u32 	%r10, %r10, 99, %p2;
	shfl.sync.idx.b32 	%r11, %r6, 5, 31, -1;
	and.b32 	%r12, %r6, 2;
	setp.ne.s32 	%p3, %r12, 0;
	vote.sync.ballot.b32 	%r13, %p3, -1;
	vote.sync.any.pred 	%p4, %p3, -1;
	vote.sync.all.pred 	%p5, !%p3, -1;
	vote.sync.uni.pred 	%p6, %p3, -1;
	selp.u32 	%r14, 1, 0, %p4;
	selp.u32 	%r15, 2, 0, %p5;
	selp.u32 	%r16, 4, 0, %p6;
	or.b32 	%r14, %r14, %r15;
	or.b32 	%r14, %r14, %r16;
	redux.sync.max.u32 	%r17, %r6, -1;
	mul.wide.u32 	%rd3, %r1, 32;
	add.s64 	%rd4, %rd2, %rd3;
	st.global.v4.u32 	[%rd4], {%r7, %r9, %r10, %r11};
	st.global.v4.u32 	[%rd4+16], {%r13, %r14, %r17, %r6};
	ret;
";
    let (got, _) = run_u32(body, 64 * 8, 64, 64);
    for i in 0..64usize {
        let w = i / 32 * 32;
        let l = i % 32;
        let v = |t: usize| (t * 3 + 1) as u32;
        let row = &got[i * 8..i * 8 + 8];
        assert_eq!(
            row[0],
            (w..w + 32).map(v).sum::<u32>(),
            "butterfly sum of lane {i}"
        );
        assert_eq!(row[1], if l >= 1 { v(i - 1) } else { 0 }, "shfl.up");
        assert_eq!(row[2], if l + 3 <= 31 { v(i + 3) } else { 99 }, "shfl.down");
        assert_eq!(row[3], v(w + 5), "shfl.idx");
        let ballot: u32 = (0..32)
            .filter(|&k| v(w + k) & 2 != 0)
            .fold(0, |m, k| m | 1 << k);
        assert_eq!(row[4], ballot, "ballot");
        let any = ballot != 0;
        let all_not = ballot == 0;
        let uni = ballot == 0 || ballot == u32::MAX;
        assert_eq!(
            row[5],
            any as u32 | (all_not as u32) << 1 | (uni as u32) << 2
        );
        assert_eq!(row[6], v(w + 31), "redux.max");
    }
}

#[test]
fn atomics_are_atomic_across_blocks() {
    let ptx = format!(
        "{HEADER}
.visible .entry k(.param .u64 k_param_0, .param .u32 k_param_1)
{{
	.reg .pred %p<4>; .reg .b32 %r<20>; .reg .b64 %rd<20>; .reg .f32 %f<4>;
	.shared .align 4 .b8 hist[64];
{PROLOGUE}
	atom.global.add.u32 	%r6, [%rd2], 1;
	mov.f32 	%f1, 0f3F800000;
	atom.global.add.f32 	%f2, [%rd2+4], %f1;
	atom.global.max.s32 	%r7, [%rd2+8], %r1;
	neg.s32 	%r8, %r1;
	atom.global.min.s32 	%r9, [%rd2+12], %r8;
	red.global.add.u64 	[%rd2+16], 3;
	atom.global.inc.u32 	%r10, [%rd2+24], 9;
	atom.global.or.b32 	%r11, [%rd2+28], %r5;
$L__CAS:
	ld.volatile.global.u32 	%r12, [%rd2+32];
	add.s32 	%r13, %r12, 2;
	atom.global.cas.b32 	%r14, [%rd2+32], %r12, %r13;
	setp.ne.s32 	%p1, %r14, %r12;
	@%p1 bra 	$L__CAS;
	and.b32 	%r15, %r5, 15;
	shl.b32 	%r15, %r15, 2;
	mov.u32 	%r16, hist;
	add.s32 	%r16, %r16, %r15;
	setp.lt.u32 	%p2, %r5, 16;
	@%p2 st.shared.u32 	[%r16], 0;
	bar.sync 	0;
	atom.shared.add.u32 	%r17, [%r16], 1;
	bar.sync 	0;
	ld.shared.u32 	%r18, [%r16];
	atom.global.add.u32 	%r19, [%rd2+36], %r18;
	atom.global.exch.b32 	%r19, [%rd2+40], 7;
	ret;
}}
"
    );
    let dev = Device::new();
    let buf = dev.alloc_zeroed::<u32>(12);
    let (blocks, threads) = (64u32, 256u32);
    launch_k(&dev, &ptx, blocks, threads, &buf, 0).unwrap();
    let got = dev.download(&buf);
    let total = blocks * threads;
    assert_eq!(got[0], total);
    assert_eq!(f32::from_bits(got[1]), total as f32);
    assert_eq!(got[2], total - 1);
    assert_eq!(got[3] as i32, -(total as i32 - 1));
    assert_eq!(got[4] as u64 | (got[5] as u64) << 32, 3 * total as u64);
    assert_eq!(got[6], total % 10, "inc wraps at 9");
    assert_eq!(got[7], 255);
    assert_eq!(got[8], 2 * total, "compare-and-swap loop");
    // Each thread reads its bucket's count (threads / 16 per bucket) and adds it.
    assert_eq!(got[9], total * (threads / 16));
    assert_eq!(got[10], 7);
}

#[test]
fn local_memory_calls_globals_and_constants() {
    let ptx = format!(
        "{HEADER}
.global .align 4 .u32 counter = 5;
.global .align 4 .b8 table[8] = {{1, 2, 3, 4, 5, 6, 7, 8}};
.const .align 8 .f64 scale = 0d4000000000000000;

.func  (.param .b32 func_retval0) twice(
	.param .b32 twice_param_0
)
{{
	.reg .b32 	%r<3>;
	ld.param.u32 	%r1, [twice_param_0];
	shl.b32 	%r2, %r1, 1;
	st.param.b32 	[func_retval0+0], %r2;
	ret;
}}

.visible .entry k(.param .u64 k_param_0, .param .u32 k_param_1)
{{
	.local .align 4 .b8 	__local_depot0[32];
	.reg .b64 	%SP;
	.reg .b64 	%SPL;
	.reg .pred %p<4>; .reg .b32 %r<20>; .reg .b64 %rd<20>; .reg .f64 %fd<4>;
	mov.u64 	%SPL, __local_depot0;
	cvta.local.u64 	%SP, %SPL;
{PROLOGUE}
	mov.u32 	%r6, 0;
$L__FILL:
	mul.wide.u32 	%rd3, %r6, 4;
	add.s64 	%rd4, %SP, %rd3;
	add.s32 	%r7, %r6, %r1;
	st.u32 	[%rd4], %r7;
	add.s32 	%r6, %r6, 1;
	setp.lt.u32 	%p1, %r6, 8;
	@%p1 bra 	$L__FILL;
	and.b32 	%r8, %r1, 7;
	mul.wide.u32 	%rd5, %r8, 4;
	add.s64 	%rd6, %SPL, %rd5;
	ld.local.u32 	%r9, [%rd6];
	{{ // callseq 0, 0
	.param .b32 param0;
	st.param.b32 	[param0+0], %r9;
	.param .b32 retval0;
	call.uni (retval0), twice, (param0);
	ld.param.b32 	%r10, [retval0+0];
	}}
	ld.global.u32 	%r11, [counter];
	mov.u64 	%rd7, table;
	cvt.u64.u32 	%rd8, %r8;
	add.s64 	%rd9, %rd7, %rd8;
	ld.global.u8 	%r12, [%rd9];
	ld.const.f64 	%fd1, [scale];
	cvt.rn.f64.u32 	%fd2, %r12;
	mul.f64 	%fd3, %fd1, %fd2;
	cvt.rzi.u32.f64 	%r13, %fd3;
	add.s32 	%r14, %r10, %r11;
	add.s32 	%r14, %r14, %r13;
	mul.wide.u32 	%rd10, %r1, 4;
	add.s64 	%rd11, %rd2, %rd10;
	st.global.u32 	[%rd11], %r14;
	ret;
}}
"
    );
    let dev = Device::new();
    let out = dev.alloc_zeroed::<u32>(100);
    let m = dev.load_ptx(&ptx).unwrap();
    assert!(m.global_address("counter").is_some());
    dev.launch(
        &m,
        "k",
        [1, 1, 1],
        [100, 1, 1],
        0,
        &[(&out).into(), 100u32.into()],
    )
    .unwrap();
    let got = dev.download(&out);
    for (i, g) in got.iter().enumerate() {
        let k = (i % 8) as u32;
        let local = k + i as u32;
        assert_eq!(*g, 2 * local + 5 + 2 * (k + 1), "thread {i}");
    }
}

#[test]
fn three_dimensional_grids() {
    let ptx = format!(
        "{HEADER}
.visible .entry k(.param .u64 k_param_0)
{{
	.reg .b32 %r<30>; .reg .b64 %rd<8>;
	ld.param.u64 	%rd1, [k_param_0];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 %r1, %tid.x; mov.u32 %r2, %tid.y; mov.u32 %r3, %tid.z;
	mov.u32 %r4, %ntid.x; mov.u32 %r5, %ntid.y; mov.u32 %r6, %ntid.z;
	mov.u32 %r7, %ctaid.x; mov.u32 %r8, %ctaid.y; mov.u32 %r9, %ctaid.z;
	mov.u32 %r10, %nctaid.x; mov.u32 %r11, %nctaid.y;
	mad.lo.s32 %r12, %r9, %r11, %r8;
	mad.lo.s32 %r12, %r12, %r10, %r7;
	mul.lo.s32 %r13, %r4, %r5;
	mul.lo.s32 %r13, %r13, %r6;
	mad.lo.s32 %r14, %r3, %r5, %r2;
	mad.lo.s32 %r14, %r14, %r4, %r1;
	mad.lo.s32 %r15, %r12, %r13, %r14;
	shl.b32 %r16, %r7, 24; shl.b32 %r17, %r8, 16; shl.b32 %r18, %r9, 12;
	shl.b32 %r19, %r3, 8; shl.b32 %r20, %r2, 4;
	or.b32 %r21, %r16, %r17; or.b32 %r21, %r21, %r18; or.b32 %r21, %r21, %r19;
	or.b32 %r21, %r21, %r20; or.b32 %r21, %r21, %r1;
	mul.wide.u32 %rd3, %r15, 4;
	add.s64 %rd4, %rd2, %rd3;
	st.global.u32 [%rd4], %r21;
	ret;
}}
"
    );
    let dev = Device::new();
    let (g, b) = ([3u32, 2, 2], [4u32, 3, 2]);
    let n = (g.iter().product::<u32>() * b.iter().product::<u32>()) as usize;
    let out = dev.alloc_zeroed::<u32>(n);
    launch(&dev, &ptx, "k", g, b, 0, &[(&out).into()]).unwrap();
    let got = dev.download(&out);
    let mut k = 0;
    for bz in 0..g[2] {
        for by in 0..g[1] {
            for bx in 0..g[0] {
                for tz in 0..b[2] {
                    for ty in 0..b[1] {
                        for tx in 0..b[0] {
                            assert_eq!(
                                got[k],
                                bx << 24 | by << 16 | bz << 12 | tz << 8 | ty << 4 | tx
                            );
                            k += 1;
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn counters_measure_coalescing_and_bank_conflicts() {
    // Thread i reads in[i * stride] and writes shared[tid * sstride].
    let ptx = |stride: u32, sstride: u32| {
        format!(
            "{HEADER}
.shared .align 4 .b8 s[32768];
.visible .entry k(.param .u64 k_param_0, .param .u32 k_param_1)
{{
	.reg .pred %p<4>; .reg .b32 %r<20>; .reg .b64 %rd<20>;
{PROLOGUE}
	mul.lo.s32 	%r6, %r1, {stride};
	mul.wide.u32 	%rd3, %r6, 4;
	add.s64 	%rd4, %rd2, %rd3;
	ld.global.u32 	%r7, [%rd4];
	mul.lo.s32 	%r8, %r5, {};
	mov.u32 	%r9, s;
	add.s32 	%r9, %r9, %r8;
	st.shared.u32 	[%r9], %r7;
	ret;
}}
",
            sstride * 4
        )
    };
    let dev = Device::new();
    let buf = dev.alloc_zeroed::<u32>(32 * 1024);
    let run =
        |stride: u32, sstride: u32| launch_k(&dev, &ptx(stride, sstride), 4, 256, &buf, 0).unwrap();
    let r = run(1, 1);
    assert_eq!(r.global_load_requests, 32);
    assert_eq!(r.global_load_sectors, 32 * 4);
    assert_eq!(r.global_load_sectors_ideal, 32 * 4);
    assert_eq!(r.bank_conflicts, 0);
    assert_eq!(r.sectors_moved, r.sectors_ideal);
    let r = run(32, 32);
    assert_eq!(r.global_load_sectors, 32 * 32, "one sector per lane");
    assert_eq!(r.global_load_sectors_ideal, 32 * 4);
    assert_eq!(
        r.bank_conflicts,
        32 * 31,
        "all lanes in one bank: 31 extra wavefronts"
    );
    let r = run(2, 2);
    assert_eq!(r.global_load_sectors, 32 * 8);
    assert_eq!(r.bank_conflicts, 32, "stride 2: two-way conflicts");
    assert_eq!(r.instructions, 32 * 16);
    assert_eq!(r.thread_instructions, 1024 * 16);
    assert!((r.coalescing_efficiency() - 0.5).abs() < 1e-9);
}

fn expect_fault(result: dpl_sim::Result<Report>, kind: FaultKind, line: u32) -> String {
    match result {
        Err(e @ Error::Fault { .. }) => {
            let Error::Fault {
                kind: k, line: l, ..
            } = &e
            else {
                unreachable!()
            };
            assert_eq!(*k, kind, "{e}");
            assert_eq!(*l, line, "{e}");
            e.to_string()
        }
        other => panic!("expected a {kind:?} fault, got {other:?}"),
    }
}

/// A body that faults: its grid and block sizes (in threads), the fault, its line counted
/// from the body's first line, and what the message says.
struct Faulty {
    what: &'static str,
    body: &'static str,
    grid: u32,
    block: u32,
    kind: FaultKind,
    line: u32,
    says: &'static [&'static str],
}

const FAULTY: [Faulty; 11] = [
    Faulty {
        what: "a store past the end",
        body: "	mul.wide.u32 	%rd3, %r1, 4;\n	add.s64 	%rd4, %rd2, %rd3;\n	st.global.u32 	[%rd4], %r1;\n	ret;",
        grid: 1,
        block: 32,
        kind: FaultKind::OutOfBounds,
        line: 2,
        says: &["thread (10,0,0)", "st.global.u32"],
    },
    Faulty {
        what: "a misaligned load",
        body: "	add.s64 	%rd4, %rd2, 2;\n	ld.global.u32 	%r6, [%rd4];\n	ret;",
        grid: 1,
        block: 32,
        kind: FaultKind::Misaligned,
        line: 1,
        says: &[],
    },
    Faulty {
        what: "a load of address 0",
        body: "	mov.u64 	%rd4, 0;\n	ld.u32 	%r6, [%rd4];\n	ret;",
        grid: 1,
        block: 32,
        kind: FaultKind::OutOfBounds,
        line: 1,
        says: &[],
    },
    Faulty {
        what: "a trap in one thread",
        body: "	setp.eq.s32 	%p1, %r1, 5;\n	@%p1 trap;\n	ret;",
        grid: 1,
        block: 32,
        kind: FaultKind::Trap,
        line: 1,
        says: &["thread (5,0,0)"],
    },
    Faulty {
        what: "warps 0 and 1 waiting at two different barriers",
        body: "	setp.lt.u32 	%p1, %r5, 32;\n	@%p1 bra 	$L__A;\n	bar.sync 	0;\n	bra.uni 	$L__B;\n$L__A:\n	bar.sync 	0;\n$L__B:\n	ret;",
        grid: 1,
        block: 64,
        kind: FaultKind::BarrierDivergence,
        line: 2,
        says: &[],
    },
    Faulty {
        what: "warp 1 exiting while warp 0 waits",
        body: "	setp.ge.u32 	%p1, %r5, 32;\n	@%p1 bra 	$L__X;\n	bar.sync 	0;\n$L__X:\n	ret;",
        grid: 1,
        block: 64,
        kind: FaultKind::Deadlock,
        line: 2,
        says: &[],
    },
    Faulty {
        what: "a runaway loop",
        body: "$L__S:\n	add.s32 	%r6, %r6, 1;\n	bra.uni 	$L__S;",
        grid: 2,
        block: 64,
        kind: FaultKind::InstructionLimit,
        line: 1,
        says: &["100000"],
    },
    Faulty {
        what: "a runaway loop stopping at a barrier each time",
        body: "$L__S:\n	bar.sync 	0;\n	bra.uni 	$L__S;",
        grid: 1,
        block: 64,
        kind: FaultKind::InstructionLimit,
        line: 2,
        says: &[],
    },
    Faulty {
        what: "two halves of a warp at two different shfl.sync, each naming all lanes",
        body: "	setp.lt.u32 	%p1, %r5, 16;\n	@%p1 bra 	$L__Y;\n	shfl.sync.idx.b32 	%r6, %r5, 0, 31, -1;\n	bra.uni 	$L__Z;\n$L__Y:\n	shfl.sync.idx.b32 	%r7, %r5, 0, 31, -1;\n$L__Z:\n	ret;",
        grid: 1,
        block: 32,
        kind: FaultKind::WarpSync,
        line: 5,
        says: &[],
    },
    Faulty {
        what: "a shuffle naming lanes that have exited",
        body: "	setp.lt.u32 	%p1, %r5, 16;\n	@%p1 bra 	$L__Y;\n	ret;\n$L__Y:\n	shfl.sync.idx.b32 	%r7, %r5, 0, 31, -1;\n	ret;",
        grid: 1,
        block: 32,
        kind: FaultKind::WarpSync,
        line: 4,
        says: &["has exited"],
    },
    Faulty {
        what: "a load from the parameter space past the parameters",
        body: "	mov.u64 	%rd4, 64;\n	ld.param.u32 	%r6, [%rd4];\n	ret;",
        grid: 1,
        block: 32,
        kind: FaultKind::OutOfBounds,
        line: 1,
        says: &["kernel-parameter"],
    },
];

#[test]
fn faults_name_the_thread_and_the_line() {
    let dev = Device::new();
    let out = dev.alloc_zeroed::<u32>(10);
    // Line numbers: the kernel text starts with 3 header lines, a blank line, 4 lines of
    // signature, `{`, 4 `.reg` lines, the 8 lines of PROLOGUE (one blank), then the body.
    let first_body_line = 3 + 1 + 4 + 1 + 4 + 8 + 2;
    // Plenty for every body that ends; the runaway loops stop at it.
    dev.set_instruction_limit(100_000);
    for f in &FAULTY {
        let result = launch_k(&dev, &kernel(f.body), f.grid, f.block, &out, 10);
        let msg = expect_fault(result, f.kind, first_body_line + f.line);
        for s in f.says {
            assert!(msg.contains(s), "{}: {msg}", f.what);
        }
    }
    // Lanes of one warp exiting before a barrier is allowed (warp-granular arrival).
    let partial = "	setp.ge.u32 	%p1, %r5, 20;\n	@%p1 bra 	$L__X;\n	bar.sync 	0;\n$L__X:\n	ret;";
    launch_k(&dev, &kernel(partial), 1, 32, &out, 10).unwrap();
}

#[test]
fn launch_and_load_errors() {
    let dev = Device::new();
    let out = dev.alloc_zeroed::<u32>(10);
    let m = dev.load_ptx(&kernel("	ret;")).unwrap();
    match dev.launch(
        &m,
        "nope",
        [1, 1, 1],
        [1, 1, 1],
        0,
        &[(&out).into(), 1u32.into()],
    ) {
        Err(Error::UnknownKernel { name, available }) => {
            assert_eq!(name, "nope");
            assert_eq!(available, "k");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        dev.launch(&m, "k", [1, 1, 1], [1, 1, 1], 0, &[(&out).into()]),
        Err(Error::Arguments { .. })
    ));
    // Wrong arguments and shapes: (grid, block, arguments, the error, what it says).
    let good = || -> Vec<Arg<'_>> { vec![(&out).into(), 1u32.into()] };
    for (grid, block, args, config, says) in [
        (1, 1, vec![1.5f64.into(), 1u32.into()], false, "argument 0"),
        (1, 1, vec![(&out).into(), 1u64.into()], false, "argument 1"),
        (1, 2048, good(), true, "exceeds 1024 threads"),
        (0, 1, good(), true, "at least 1 in every dimension"),
    ] {
        let e = dev
            .launch(&m, "k", [grid, 1, 1], [block, 1, 1], 0, &args)
            .unwrap_err();
        let kind_ok = if config {
            matches!(e, Error::LaunchConfig { .. })
        } else {
            matches!(e, Error::Arguments { .. })
        };
        assert!(kind_ok && e.to_string().contains(says), "{e}");
    }
    // Launch shapes the kernel declares it cannot take.
    let shaped = format!(
        "{HEADER}.visible .entry a()\n.maxntid 64, 1, 1\n{{\n\tret;\n}}\n.visible .entry b()\n.reqntid 32, 2\n{{\n\tret;\n}}\n"
    );
    let sm = dev.load_ptx(&shaped).unwrap();
    dev.launch(&sm, "a", [1, 1, 1], [64, 1, 1], 0, &[]).unwrap();
    assert!(matches!(
        dev.launch(&sm, "a", [1, 1, 1], [65, 1, 1], 0, &[]),
        Err(Error::LaunchConfig { .. })
    ));
    dev.launch(&sm, "b", [1, 1, 1], [32, 2, 1], 0, &[]).unwrap();
    assert!(matches!(
        dev.launch(&sm, "b", [1, 1, 1], [64, 1, 1], 0, &[]),
        Err(Error::LaunchConfig { .. })
    ));
    // Parse errors and unsupported instructions name the line.
    let bad = format!(
        "{HEADER}.visible .entry k()\n{{\n\t.reg .b32 %r<3>;\n\tsuld.b.1d.b32.trap {{%r1}}, [%r2];\n}}\n"
    );
    match dev.load_ptx(&bad) {
        Err(Error::Parse { line, msg }) => {
            assert_eq!(line, 7, "{msg}");
            assert!(
                msg.contains("unsupported instruction `suld.b.1d.b32.trap`"),
                "{msg}"
            );
        }
        other => panic!("{other:?}"),
    }
    let odd = format!(
        "{HEADER}.visible .entry k()\n{{\n\t.reg .b32 %r<3>;\n\tadd.xyz.s32 %r1, %r2, 1;\n}}\n"
    );
    match dev.load_ptx(&odd) {
        Err(Error::Parse { line, msg }) => {
            assert!(line == 7 && msg.contains(".xyz"), "{line} {msg}")
        }
        other => panic!("{other:?}"),
    }
    let undeclared = format!("{HEADER}.visible .entry k()\n{{\n\tadd.s32 %r1, %r2, 1;\n}}\n");
    match dev.load_ptx(&undeclared) {
        Err(Error::Parse { line, msg }) => {
            assert!(line == 6 && msg.contains("%r1"), "{line} {msg}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn buffers_copy_free_and_share_between_threads() {
    let dev = Device::new();
    let a = dev.upload(&[1i64, 2, 3, 4, 5]);
    let b = dev.alloc_zeroed::<i64>(5);
    dev.copy(&a, 1, &b, 0, 3).unwrap();
    assert_eq!(dev.download(&b), vec![2, 3, 4, 0, 0]);
    assert_eq!(dev.download_range(&a, 3..5).unwrap(), vec![4, 5]);
    assert!(dev.download_range(&a, 3..6).is_err());
    dev.fill(&b, -7).unwrap();
    assert_eq!(dev.download(&b), vec![-7; 5]);
    dev.memset(&b, 0xff).unwrap();
    assert_eq!(dev.download(&b), vec![-1; 5]);
    let used = dev.memory_used();
    dev.free(b).unwrap();
    assert_eq!(dev.memory_used(), used - 40);
    assert!(a.addr() >= 1 << 32);
    // Several host threads launching on one device at once.
    let m = dev.load_ptx(&kernel(
        "	setp.ge.u32 	%p1, %r1, %r2;\n	@%p1 bra 	$L__E;\n	mul.wide.u32 	%rd3, %r1, 4;\n	add.s64 	%rd4, %rd2, %rd3;\n	st.global.u32 	[%rd4], %r1;\n$L__E:\n	ret;",
    ))
    .unwrap();
    std::thread::scope(|s| {
        for t in 0..4u32 {
            let (dev, m) = (&dev, &m);
            s.spawn(move || {
                let n = 1000 + t * 100;
                let out = dev.alloc_zeroed::<u32>(n as usize);
                dev.launch(
                    m,
                    "k",
                    [n.div_ceil(128), 1, 1],
                    [128, 1, 1],
                    0,
                    &[(&out).into(), n.into()],
                )
                .unwrap();
                assert_eq!(dev.download(&out), (0..n).collect::<Vec<_>>());
                dev.free(out).unwrap();
            });
        }
    });
    // Memory limit.
    let small = Device::with_memory_limit(1000);
    assert!(matches!(
        small.try_alloc_zeroed::<u8>(2000),
        Err(Error::OutOfMemory { .. })
    ));
    assert!(matches!(
        small.try_alloc_zeroed::<u64>(usize::MAX / 4),
        Err(Error::OutOfMemory { .. })
    ));
    let fits = small.try_alloc_zeroed::<u8>(600).unwrap();
    assert!(
        small.try_alloc_zeroed::<u8>(600).is_err(),
        "the limit counts live allocations"
    );
    small.free(fits).unwrap();
    small.try_alloc_zeroed::<u8>(600).unwrap();
}

#[test]
fn barrier_reductions_and_match() {
    // out[i] = popc over the block of (i % 3 == 0) | and(i < 1000) << 16 | or(i == 5) << 17,
    // then match.all over the warp of i / 64 (all equal) and match.any of i % 4.
    let body = "
	rem.u32 	%r6, %r1, 3;
	setp.eq.s32 	%p1, %r6, 0;
	bar.red.popc.u32 	%r7, 0, %p1;
	setp.lt.u32 	%p2, %r1, 1000;
	bar.red.and.pred 	%p3, 0, %p2;
	setp.eq.s32 	%p4, %r1, 5;
	bar.red.or.pred 	%p5, 0, %p4;
	selp.u32 	%r8, 0x10000, 0, %p3;
	selp.u32 	%r9, 0x20000, 0, %p5;
	or.b32 	%r7, %r7, %r8;
	or.b32 	%r7, %r7, %r9;
	shr.u32 	%r10, %r1, 6;
	match.all.sync.b32 	%r11|%p6, %r10, -1;
	and.b32 	%r12, %r1, 3;
	match.any.sync.b32 	%r13, %r12, -1;
	selp.u32 	%r14, 1, 0, %p6;
	mul.wide.u32 	%rd3, %r1, 16;
	add.s64 	%rd4, %rd2, %rd3;
	st.global.v4.u32 	[%rd4], {%r7, %r11, %r14, %r13};
	ret;
";
    let (got, r) = run_u32(body, 128 * 4, 128, 128);
    assert_eq!(r.barriers, 3);
    let popc = (0..128).filter(|i| i % 3 == 0).count() as u32;
    for i in 0..128usize {
        let row = &got[i * 4..i * 4 + 4];
        assert_eq!(row[0], popc | 0x10000 | 0x20000, "bar.red of thread {i}");
        assert_eq!(row[1], u32::MAX, "match.all mask");
        assert_eq!(row[2], 1);
        let any: u32 = (0..32)
            .filter(|l| l % 4 == i % 4)
            .fold(0, |m, l| m | 1 << l);
        assert_eq!(row[3], any, "match.any");
    }
}

#[test]
fn warp_sync_waits_for_lanes_in_a_later_block() {
    // The "then" block is placed after the join point (as compilers do with cold code):
    // the lanes at the join wait at shfl.sync for the others instead of running alone.
    let body = "
	and.b32 	%r6, %r5, 3;
	setp.eq.s32 	%p1, %r6, 0;
	mov.u32 	%r7, %r5;
	@%p1 bra 	$L__COLD;
$L__JOIN:
	shfl.sync.bfly.b32 	%r8, %r7, 1, 31, -1;
	activemask.b32 	%r9;
	mul.wide.u32 	%rd3, %r1, 8;
	add.s64 	%rd4, %rd2, %rd3;
	st.global.v2.u32 	[%rd4], {%r8, %r9};
	ret;
$L__COLD:
	mul.lo.s32 	%r7, %r5, 100;
	bra.uni 	$L__JOIN;
";
    let (got, _) = run_u32(body, 64, 32, 32);
    let v = |l: u32| if l.is_multiple_of(4) { l * 100 } else { l };
    for l in 0..32u32 {
        assert_eq!(got[2 * l as usize], v(l ^ 1), "lane {l}");
        assert_eq!(
            got[2 * l as usize + 1],
            u32::MAX,
            "reconverged at the shuffle"
        );
    }
}

#[test]
fn untyped_memory_by_address() {
    let dev = Device::new();
    let a = dev.alloc_bytes(64).unwrap();
    dev.write_bytes(a + 8, &[1, 2, 3, 4]).unwrap();
    dev.copy_bytes(a + 8, a + 10, 4).unwrap();
    let mut out = [0u8; 8];
    dev.read_bytes(a + 8, &mut out).unwrap();
    assert_eq!(out, [1, 2, 1, 2, 3, 4, 0, 0]);
    assert!(dev.write_bytes(a + 62, &[0; 4]).is_err(), "past the end");
    assert!(
        dev.read_bytes(a + 64 + 8, &mut out).is_err(),
        "in the guard gap"
    );
    // A kernel receives the address as a pointer argument.
    let ptx = kernel(
        "	setp.ge.u32 	%p1, %r1, %r2;\n	@%p1 bra 	$L__E;\n	mul.wide.u32 	%rd3, %r1, 4;\n	add.s64 	%rd4, %rd2, %rd3;\n	st.global.u32 	[%rd4], %r1;\n$L__E:\n	ret;",
    );
    launch(
        &dev,
        &ptx,
        "k",
        [1, 1, 1],
        [16, 1, 1],
        0,
        &[Arg::Ptr(a), 16u32.into()],
    )
    .unwrap();
    let mut words = [0u8; 64];
    dev.read_bytes(a, &mut words).unwrap();
    for i in 0..16 {
        assert_eq!(
            u32::from_le_bytes(words[4 * i..4 * i + 4].try_into().unwrap()),
            i as u32
        );
    }
    dev.free_bytes(a).unwrap();
    assert!(dev.free_bytes(a).is_err(), "double free");
}

#[test]
fn producer_consumer_named_barrier() {
    // Warp 1 fills shared memory and arrives at barrier 1; warp 0 waits there, then reads.
    let ptx = format!(
        "{HEADER}
.shared .align 4 .b8 buf[128];
.visible .entry k(.param .u64 k_param_0, .param .u32 k_param_1)
{{
	.reg .pred %p<4>; .reg .b32 %r<20>; .reg .b64 %rd<20>;
{PROLOGUE}
	mov.u32 	%r6, buf;
	and.b32 	%r7, %r5, 31;
	shl.b32 	%r8, %r7, 2;
	add.s32 	%r9, %r6, %r8;
	setp.lt.u32 	%p1, %r5, 32;
	@%p1 bra 	$L__CONSUMER;
	mul.lo.s32 	%r10, %r7, 11;
	st.shared.u32 	[%r9], %r10;
	bar.arrive 	1, 64;
	ret;
$L__CONSUMER:
	bar.sync 	1, 64;
	ld.shared.u32 	%r11, [%r9];
	mul.wide.u32 	%rd3, %r5, 4;
	add.s64 	%rd4, %rd2, %rd3;
	st.global.u32 	[%rd4], %r11;
	ret;
}}
"
    );
    let dev = Device::new();
    let out = dev.alloc_zeroed::<u32>(32);
    let r = launch_k(&dev, &ptx, 1, 64, &out, 0).unwrap();
    assert_eq!(
        dev.download(&out),
        (0..32).map(|i| i * 11).collect::<Vec<u32>>()
    );
    assert_eq!(r.barriers, 1);
}

#[test]
fn counters_do_not_depend_on_host_threads() {
    let ptx = kernel(
        "	setp.ge.u32 	%p1, %r1, %r2;\n	@%p1 bra 	$L__E;\n	mul.lo.s32 	%r6, %r1, 7;\n	rem.u32 	%r6, %r6, 1000;\n	mul.wide.u32 	%rd3, %r6, 4;\n	add.s64 	%rd4, %rd2, %rd3;\n	atom.global.add.u32 	%r7, [%rd4], 1;\n	ld.global.u32 	%r8, [%rd4];\n$L__E:\n	ret;",
    );
    let mut reports = Vec::new();
    for threads in [1, 2, 4] {
        let dev = Device::new();
        dev.set_host_threads(threads);
        let out = dev.alloc_zeroed::<u32>(1000);
        let r = launch_k(&dev, &ptx, 40, 100, &out, 3950).unwrap();
        assert_eq!(dev.download(&out).iter().sum::<u32>(), 3950);
        reports.push(r);
    }
    assert_eq!(reports[0], reports[1]);
    assert_eq!(reports[0], reports[2]);
}

#[test]
fn wild_addresses_fault_cleanly() {
    // Addresses near the top of the 64-bit space, in every state space.
    let dev = Device::new();
    let out = dev.alloc_zeroed::<u32>(4);
    for body in [
        "	mov.u64 	%rd4, -4;\n	ld.global.u32 	%r6, [%rd4];\n	ret;",
        "	mov.u64 	%rd4, -4;\n	st.u32 	[%rd4], %r1;\n	ret;",
        "	mov.u32 	%r6, -4;\n	ld.shared.u32 	%r7, [%r6];\n	ret;",
        "	mov.u64 	%rd4, -8;\n	ld.local.u64 	%rd5, [%rd4];\n	ret;",
        "	mov.u64 	%rd4, -4;\n	ld.param.u32 	%r6, [%rd4];\n	ret;",
        "	mov.u64 	%rd4, -4;\n	atom.global.add.u32 	%r6, [%rd4], 1;\n	ret;",
    ] {
        match launch_k(&dev, &kernel(body), 1, 32, &out, 4) {
            Err(Error::Fault {
                kind: FaultKind::OutOfBounds,
                ..
            }) => {}
            other => panic!("{body}: {other:?}"),
        }
    }
}

#[test]
fn printf_formats_like_c() {
    let fmt = "t=%d v=%.3f h=%#x c=%c w=[%5d|%-4u] e=%e g=%g s=%s%%\n\0";
    let bytes: Vec<String> = fmt.bytes().map(|b| b.to_string()).collect();
    let word = "ok\0";
    let wbytes: Vec<String> = word.bytes().map(|b| b.to_string()).collect();
    let ptx = format!(
        "{HEADER}
.extern .func  (.param .b32 func_retval0) vprintf
(
	.param .b64 vprintf_param_0,
	.param .b64 vprintf_param_1
)
;
.global .align 1 .b8 $str[{}] = {{{}}};
.global .align 1 .b8 $str1[{}] = {{{}}};

.visible .entry k(.param .u64 k_param_0, .param .u32 k_param_1)
{{
	.local .align 8 .b8 	__local_depot0[56];
	.reg .b64 	%SP;
	.reg .b64 	%SPL;
	.reg .pred %p<4>; .reg .b32 %r<20>; .reg .b64 %rd<20>; .reg .f64 %fd<4>;
	mov.u64 	%SPL, __local_depot0;
	cvta.local.u64 	%SP, %SPL;
{PROLOGUE}
	add.u64 	%rd5, %SP, 0;
	add.u64 	%rd6, %SPL, 0;
	st.local.u32 	[%rd6], %r1;
	cvt.rn.f64.u32 	%fd1, %r1;
	mul.f64 	%fd1, %fd1, 0d3FD0000000000000;
	st.local.f64 	[%rd6+8], %fd1;
	mul.lo.s32 	%r6, %r1, 255;
	st.local.u32 	[%rd6+16], %r6;
	add.s32 	%r7, %r1, 65;
	st.local.u32 	[%rd6+20], %r7;
	st.local.u32 	[%rd6+24], %r1;
	st.local.u32 	[%rd6+28], %r1;
	st.local.f64 	[%rd6+32], %fd1;
	st.local.f64 	[%rd6+40], %fd1;
	mov.u64 	%rd7, $str1;
	cvta.global.u64 	%rd8, %rd7;
	st.local.u64 	[%rd6+48], %rd8;
	mov.u64 	%rd9, $str;
	cvta.global.u64 	%rd10, %rd9;
	{{ // callseq 0, 0
	.param .b64 param0;
	st.param.b64 	[param0], %rd10;
	.param .b64 param1;
	st.param.b64 	[param1], %rd5;
	.param .b32 retval0;
	call.uni (retval0), vprintf, (param0, param1);
	ld.param.b32 	%r8, [retval0];
	}}
	mul.wide.u32 	%rd11, %r1, 4;
	add.s64 	%rd12, %rd2, %rd11;
	st.global.u32 	[%rd12], %r8;
	ret;
}}
",
        bytes.len(),
        bytes.join(", "),
        wbytes.len(),
        wbytes.join(", ")
    );
    let dev = Device::new();
    let out = dev.alloc_zeroed::<u32>(3);
    let r = launch_k(&dev, &ptx, 1, 3, &out, 3).unwrap();
    assert_eq!(r.printf.len(), 3);
    for t in 0..3u32 {
        let v = t as f64 * 0.25;
        let text = format!(
            "t={t} v={v:.3} h={} c={} w=[{t:>5}|{t:<4}] e={} g={} s=ok%\n",
            if t == 0 {
                "0".to_string()
            } else {
                format!("{:#x}", t * 255)
            },
            (b'A' + t as u8) as char,
            ["0.000000e+00", "2.500000e-01", "5.000000e-01"][t as usize],
            ["0", "0.25", "0.5"][t as usize],
        );
        assert_eq!(
            r.printf[t as usize],
            format!("[block (0,0,0) thread ({t},0,0)] {text}")
        );
        assert_eq!(
            dev.download(&out)[t as usize] as usize,
            text.len(),
            "vprintf returns the length"
        );
    }
}

#[test]
fn failed_assert_names_message_file_and_line() {
    let cstr = |s: &str| {
        let b: Vec<String> = s.bytes().chain([0]).map(|b| b.to_string()).collect();
        (b.len(), b.join(", "))
    };
    let (ml, mb) = cstr("i < 5");
    let (fl, fb) = cstr("k.cu");
    let (nl, nb) = cstr("void k(int*, int)");
    let ptx = format!(
        "{HEADER}
.extern .func __assertfail
(
	.param .b64 __assertfail_param_0,
	.param .b64 __assertfail_param_1,
	.param .b32 __assertfail_param_2,
	.param .b64 __assertfail_param_3,
	.param .b64 __assertfail_param_4
)
.noreturn;
.global .align 1 .b8 __unnamed_1[{nl}] = {{{nb}}};
.global .align 1 .b8 $str[{ml}] = {{{mb}}};
.global .align 1 .b8 $str$1[{fl}] = {{{fb}}};

.visible .entry k(.param .u64 k_param_0, .param .u32 k_param_1)
{{
	.reg .pred %p<4>; .reg .b32 %r<20>; .reg .b64 %rd<20>;
{PROLOGUE}
	setp.lt.s32 	%p1, %r1, 5;
	@%p1 bra 	$L__OK;
	mov.u64 	%rd3, $str;
	cvta.global.u64 	%rd4, %rd3;
	mov.u64 	%rd5, $str$1;
	cvta.global.u64 	%rd6, %rd5;
	mov.u64 	%rd7, __unnamed_1;
	cvta.global.u64 	%rd8, %rd7;
	mov.u64 	%rd9, 1;
	{{ // callseq 0, 0
	.param .b64 param0;
	st.param.b64 	[param0], %rd4;
	.param .b64 param1;
	st.param.b64 	[param1], %rd6;
	.param .b32 param2;
	st.param.b32 	[param2], 42;
	.param .b64 param3;
	st.param.b64 	[param3], %rd8;
	.param .b64 param4;
	st.param.b64 	[param4], %rd9;
	call.uni __assertfail, (param0, param1, param2, param3, param4);
	}}
$L__OK:
	ret;
}}
"
    );
    let dev = Device::new();
    let out = dev.alloc_zeroed::<u32>(1);
    let e = launch_k(&dev, &ptx, 1, 8, &out, 8).unwrap_err();
    let msg = e.to_string();
    assert_eq!(e.fault_kind(), Some(FaultKind::Trap), "{msg}");
    assert!(
        msg.contains("thread (5,0,0)")
            && msg.contains("assertion `i < 5` failed (k.cu:42, in void k(int*, int))"),
        "{msg}"
    );
}
