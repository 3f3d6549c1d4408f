//! Helpers of the hand-written PTX tests: a PTX template for elementwise kernels in the
//! style nvcc emits, a deterministic random generator, and launch shortcuts.
#![allow(dead_code)]

use dpl_sim::{Arg, Device, DeviceBuffer, Element, Report};

/// The module header nvcc writes.
pub const HEADER: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

/// An elementwise kernel `k(a, b, c, out, n)`: thread `i < n` loads `a[i] b[i] c[i]` (type
/// `in_ty`, into `%x1 %x2 %x3`), runs `body`, and stores `%y1` (type `out_ty`) to `out[i]`.
/// Registers available to `body`: `%x<8>` (in_ty), `%y<8>` (out_ty), `%p<8>` (pred),
/// `%r<8>` (b32), `%rd<8>` (b64), `%f<8>` (f32), `%fd<8>` (f64), `%h<8>` (b16).
pub fn elementwise(in_ty: &str, in_size: u32, out_ty: &str, out_size: u32, body: &str) -> String {
    let reg = |t: &str| {
        if t == "b8" || t == "u8" || t == "s8" {
            "b16".to_string()
        } else {
            t.to_string()
        }
    };
    elementwise_in(
        &reg(in_ty),
        in_ty,
        in_size,
        &reg(out_ty),
        out_ty,
        out_size,
        body,
    )
}

/// [`elementwise`] with the registers `%x` and `%y` declared as `xin` and `xout` (for
/// instance `.b32` registers loaded and stored as `s8`: PTX lets `ld`, `st` and `cvt` use
/// registers wider than their type).
pub fn elementwise_in(
    xin: &str,
    in_ty: &str,
    in_size: u32,
    xout: &str,
    out_ty: &str,
    out_size: u32,
    body: &str,
) -> String {
    format!(
        r#"{HEADER}
.visible .entry k(
	.param .u64 k_param_0,
	.param .u64 k_param_1,
	.param .u64 k_param_2,
	.param .u64 k_param_3,
	.param .u32 k_param_4
)
{{
	.reg .pred 	%p<8>;
	.reg .pred 	%pg<2>;
	.reg .b32 	%r<8>;
	.reg .b32 	%ri<6>;
	.reg .b64 	%rd<8>;
	.reg .b64 	%ad<16>;
	.reg .f32 	%f<8>;
	.reg .f64 	%fd<8>;
	.reg .b16 	%h<8>;
	.reg .{xin} 	%x<8>;
	.reg .{xout} 	%y<8>;

	ld.param.u64 	%ad1, [k_param_0];
	ld.param.u64 	%ad2, [k_param_1];
	ld.param.u64 	%ad3, [k_param_2];
	ld.param.u64 	%ad4, [k_param_3];
	ld.param.u32 	%ri1, [k_param_4];
	mov.u32 	%ri2, %ctaid.x;
	mov.u32 	%ri3, %ntid.x;
	mov.u32 	%ri4, %tid.x;
	mad.lo.s32 	%ri5, %ri2, %ri3, %ri4;
	setp.ge.s32 	%pg1, %ri5, %ri1;
	@%pg1 bra 	$L__BB0_2;
	cvta.to.global.u64 	%ad5, %ad1;
	cvta.to.global.u64 	%ad6, %ad2;
	cvta.to.global.u64 	%ad7, %ad3;
	cvta.to.global.u64 	%ad8, %ad4;
	mul.wide.s32 	%ad9, %ri5, {in_size};
	add.s64 	%ad10, %ad5, %ad9;
	ld.global.{in_ty} 	%x1, [%ad10];
	add.s64 	%ad11, %ad6, %ad9;
	ld.global.{in_ty} 	%x2, [%ad11];
	add.s64 	%ad12, %ad7, %ad9;
	ld.global.{in_ty} 	%x3, [%ad12];
{body}
	mul.wide.s32 	%ad13, %ri5, {out_size};
	add.s64 	%ad14, %ad8, %ad13;
	st.global.{out_ty} 	[%ad14], %y1;
$L__BB0_2:
	ret;
}}
"#,
    )
}

/// Runs an [`elementwise`] kernel over three inputs.
pub fn run3<I: Element, O: Element>(ptx: &str, a: &[I], b: &[I], c: &[I]) -> Vec<O> {
    let dev = Device::new();
    let m = dev.load_ptx(ptx).unwrap_or_else(|e| panic!("{e}\n{ptx}"));
    let n = a.len();
    let (da, db, dc) = (dev.upload(a), dev.upload(b), dev.upload(c));
    let out = dev.alloc_zeroed::<O>(n);
    let block = 128u32;
    dev.launch(
        &m,
        "k",
        [(n as u32).div_ceil(block).max(1), 1, 1],
        [block, 1, 1],
        0,
        &[
            (&da).into(),
            (&db).into(),
            (&dc).into(),
            (&out).into(),
            (n as i32).into(),
        ],
    )
    .unwrap_or_else(|e| panic!("{e}\n{ptx}"));
    dev.download(&out)
}

/// xorshift64*: deterministic inputs.
pub struct Rng(pub u64);

impl Rng {
    /// Seeded generator.
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    /// 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Random bits biased towards edge values (0, 1, all ones, sign bit, small numbers).
    pub fn edgy(&mut self, bits: u32) -> u64 {
        let mask = if bits == 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let v = match self.next() % 8 {
            0 => 0,
            1 => 1,
            2 => mask,
            3 => 1 << (bits - 1),
            4 => (1 << (bits - 1)) - 1,
            5 => self.next() % 40,
            _ => self.next(),
        };
        v & mask
    }
}

/// Loads `ptx` and launches kernel `name`, returning the launch result.
pub fn launch(
    dev: &Device,
    ptx: &str,
    name: &str,
    grid: [u32; 3],
    block: [u32; 3],
    shared: u32,
    args: &[Arg<'_>],
) -> dpl_sim::Result<Report> {
    let m = dev.load_ptx(ptx).unwrap_or_else(|e| panic!("{e}\n{ptx}"));
    dev.launch(&m, name, grid, block, shared, args)
}

/// Uploads and returns a buffer (shortcut).
pub fn up<T: Element>(dev: &Device, v: &[T]) -> DeviceBuffer<T> {
    dev.upload(v)
}
