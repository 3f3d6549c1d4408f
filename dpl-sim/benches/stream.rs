//! Simulator speed on a streaming kernel (saxpy as nvcc compiles it), on one host thread.
//! Throughput is reported in thread-instructions per second ("elements" in criterion's
//! output are thread-instructions).

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dpl_sim::Device;

const SAXPY: &str = r#"
.version 8.0
.target sm_80
.address_size 64

.visible .entry saxpy(
	.param .u32 saxpy_param_0,
	.param .f32 saxpy_param_1,
	.param .u64 saxpy_param_2,
	.param .u64 saxpy_param_3
)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<6>;
	.reg .f32 	%f<5>;
	.reg .b64 	%rd<8>;

	ld.param.u32 	%r2, [saxpy_param_0];
	ld.param.f32 	%f1, [saxpy_param_1];
	ld.param.u64 	%rd1, [saxpy_param_2];
	ld.param.u64 	%rd2, [saxpy_param_3];
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mov.u32 	%r5, %tid.x;
	mad.lo.s32 	%r1, %r3, %r4, %r5;
	setp.ge.s32 	%p1, %r1, %r2;
	@%p1 bra 	$L__BB0_2;
	cvta.to.global.u64 	%rd3, %rd1;
	mul.wide.s32 	%rd4, %r1, 4;
	add.s64 	%rd5, %rd3, %rd4;
	ld.global.f32 	%f2, [%rd5];
	cvta.to.global.u64 	%rd6, %rd2;
	add.s64 	%rd7, %rd6, %rd4;
	ld.global.f32 	%f3, [%rd7];
	fma.rn.f32 	%f4, %f2, %f1, %f3;
	st.global.f32 	[%rd7], %f4;
$L__BB0_2:
	ret;
}
"#;

fn stream(c: &mut Criterion) {
    let dev = Device::new();
    dev.set_host_threads(1);
    let m = dev.load_ptx(SAXPY).expect("saxpy loads");
    let n = 1usize << 20;
    let x = dev.upload(&vec![1.0f32; n]);
    let y = dev.upload(&vec![2.0f32; n]);
    let run = || {
        dev.launch(
            &m,
            "saxpy",
            [(n as u32).div_ceil(256), 1, 1],
            [256, 1, 1],
            0,
            &[(n as u32).into(), 3.0f32.into(), (&x).into(), (&y).into()],
        )
        .expect("saxpy runs")
    };
    let per_launch = run().thread_instructions;
    let mut g = c.benchmark_group("dpl-sim");
    g.throughput(Throughput::Elements(per_launch));
    g.sample_size(10);
    g.bench_function("saxpy 2^20, 1 host thread (thread-instructions)", |b| {
        b.iter(run)
    });
    g.finish();
}

criterion_group!(benches, stream);
criterion_main!(benches);
