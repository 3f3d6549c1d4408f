//! Randomised differential test of divergence handling: random structured programs
//! (nested if/else, loops with lane-dependent trip counts, early exits), some with their
//! `then` blocks laid out after the end of the kernel as compilers do with cold code, are
//! compiled to PTX here and run on the simulator; every thread's result must equal a
//! plain-Rust evaluation of the same program, and (for programs without cold blocks) the
//! surviving lanes of every warp must be reconverged at the end.

mod common;

use common::{HEADER, Rng};
use dpl_sim::Device;

enum S {
    /// v = v * a + b
    Mad(u32, u32),
    /// if ((v ^ tid) & mask) == k { then } else { else }; `cold` places `then` at the end.
    If {
        mask: u32,
        k: u32,
        then: Vec<S>,
        els: Vec<S>,
        cold: bool,
    },
    /// for _ in 0..(tid + v) % n { body }
    Loop { n: u32, body: Vec<S> },
    /// if (tid * 7 + v) % m == 0 { out = v; return }
    Exit(u32),
}

fn generate(r: &mut Rng, depth: u32, cold_ok: bool) -> Vec<S> {
    let len = 1 + r.next() % 3;
    (0..len)
        .map(|_| match r.next() % if depth >= 3 { 2 } else { 5 } {
            0 => S::Mad(1 + (r.next() % 7) as u32 * 2, (r.next() % 100) as u32),
            1 => S::Exit(5 + (r.next() % 20) as u32),
            2 | 3 => S::If {
                mask: (r.next() % 16) as u32 | 1,
                k: (r.next() % 2) as u32,
                then: generate(r, depth + 1, cold_ok),
                els: generate(r, depth + 1, cold_ok),
                cold: cold_ok && r.next().is_multiple_of(2),
            },
            _ => S::Loop {
                n: 1 + (r.next() % 5) as u32,
                body: generate(r, depth + 1, cold_ok),
            },
        })
        .collect()
}

/// Returns true when the thread exited (its output is then already stored).
fn eval(p: &[S], v: &mut u32, tid: u32) -> bool {
    for s in p {
        match s {
            S::Mad(a, b) => *v = v.wrapping_mul(*a).wrapping_add(*b),
            S::If {
                mask, k, then, els, ..
            } => {
                let taken = ((*v ^ tid) & mask) == *k;
                if eval(if taken { then } else { els }, v, tid) {
                    return true;
                }
            }
            S::Loop { n, body } => {
                let trips = tid.wrapping_add(*v) % n;
                for _ in 0..trips {
                    if eval(body, v, tid) {
                        return true;
                    }
                }
            }
            S::Exit(m) => {
                if tid.wrapping_mul(7).wrapping_add(*v).is_multiple_of(*m) {
                    return true;
                }
            }
        }
    }
    false
}

struct Emit {
    next: u32,
    cold: Vec<String>,
}

impl Emit {
    fn fresh(&mut self) -> u32 {
        self.next += 1;
        self.next
    }

    fn emit(&mut self, p: &[S], out: &mut String) {
        for s in p {
            let n = self.fresh();
            match s {
                S::Mad(a, b) => out.push_str(&format!("\tmad.lo.s32 \t%v, %v, {a}, {b};\n")),
                S::If { mask, k, then, els, cold } => {
                    out.push_str(&format!(
                        "\txor.b32 \t%r{n}, %v, %t;\n\tand.b32 \t%r{n}, %r{n}, {mask};\n\tsetp.eq.s32 \t%p{n}, %r{n}, {k};\n"
                    ));
                    if *cold {
                        out.push_str(&format!("\t@%p{n} bra \t$THEN{n};\n"));
                        self.emit(els, out);
                        out.push_str(&format!("$JOIN{n}:\n"));
                        let mut c = format!("$THEN{n}:\n");
                        self.emit(then, &mut c);
                        c.push_str(&format!("\tbra.uni \t$JOIN{n};\n"));
                        self.cold.push(c);
                    } else {
                        out.push_str(&format!("\t@!%p{n} bra \t$ELSE{n};\n"));
                        self.emit(then, out);
                        out.push_str(&format!("\tbra.uni \t$JOIN{n};\n$ELSE{n}:\n"));
                        self.emit(els, out);
                        out.push_str(&format!("$JOIN{n}:\n"));
                    }
                }
                S::Loop { n: trips, body } => {
                    out.push_str(&format!(
                        "\tadd.s32 \t%r{n}, %t, %v;\n\trem.u32 \t%b{n}, %r{n}, {trips};\n\tmov.u32 \t%c{n}, 0;\n$LOOP{n}:\n\tsetp.ge.u32 \t%p{n}, %c{n}, %b{n};\n\t@%p{n} bra \t$END{n};\n"
                    ));
                    self.emit(body, out);
                    out.push_str(&format!("\tadd.s32 \t%c{n}, %c{n}, 1;\n\tbra.uni \t$LOOP{n};\n$END{n}:\n"));
                }
                S::Exit(m) => out.push_str(&format!(
                    "\tmul.lo.s32 \t%r{n}, %t, 7;\n\tadd.s32 \t%r{n}, %r{n}, %v;\n\trem.u32 \t%r{n}, %r{n}, {m};\n\tsetp.ne.s32 \t%p{n}, %r{n}, 0;\n\t@%p{n} bra \t$SKIP{n};\n\tst.global.u32 \t[%out], %v;\n\tret;\n$SKIP{n}:\n"
                )),
            }
        }
    }
}

fn compile(p: &[S]) -> String {
    let mut e = Emit {
        next: 0,
        cold: Vec::new(),
    };
    let mut body = String::new();
    e.emit(p, &mut body);
    let cold: String = e.cold.concat();
    format!(
        "{HEADER}
.visible .entry k(.param .u64 k_param_0, .param .u64 k_param_1)
{{
	.reg .pred 	%p<1000>;
	.reg .b32 	%r<1000>;
	.reg .b32 	%b<1000>;
	.reg .b32 	%c<1000>;
	.reg .b32 	%v;
	.reg .b32 	%t;
	.reg .b32 	%m;
	.reg .b64 	%out;
	.reg .b64 	%mo;
	.reg .b64 	%rd<4>;
	ld.param.u64 	%rd1, [k_param_0];
	ld.param.u64 	%rd2, [k_param_1];
	mov.u32 	%t, %tid.x;
	mul.wide.u32 	%rd3, %t, 4;
	add.s64 	%out, %rd1, %rd3;
	add.s64 	%mo, %rd2, %rd3;
	mov.u32 	%v, %t;
{body}	st.global.u32 	[%out], %v;
	activemask.b32 	%m;
	st.global.u32 	[%mo], %m;
	ret;
{cold}}}
"
    )
}

#[test]
fn random_control_flow_matches_sequential_semantics() {
    let dev = Device::new();
    let threads = 96u32;
    for seed in 0..60u64 {
        let mut r = Rng::new(seed + 1000);
        let with_cold = seed % 2 == 1;
        let prog = generate(&mut r, 0, with_cold);
        let ptx = compile(&prog);
        let m = dev.load_ptx(&ptx).unwrap_or_else(|e| panic!("{e}\n{ptx}"));
        let out = dev.alloc_zeroed::<u32>(threads as usize);
        let masks = dev.alloc_zeroed::<u32>(threads as usize);
        dev.launch(
            &m,
            "k",
            [1, 1, 1],
            [threads, 1, 1],
            0,
            &[(&out).into(), (&masks).into()],
        )
        .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{ptx}"));
        let got = dev.download(&out);
        let got_masks = dev.download(&masks);
        let mut exited = vec![false; threads as usize];
        for tid in 0..threads {
            let mut v = tid;
            exited[tid as usize] = eval(&prog, &mut v, tid);
            assert_eq!(got[tid as usize], v, "seed {seed}, thread {tid}\n{ptx}");
        }
        if !with_cold {
            for tid in 0..threads as usize {
                if exited[tid] {
                    continue;
                }
                let w = tid / 32 * 32;
                let want = (0..32)
                    .filter(|&l| !exited[w + l])
                    .fold(0u32, |m, l| m | 1 << l);
                assert_eq!(
                    got_masks[tid], want,
                    "seed {seed}: lanes not reconverged at the end\n{ptx}"
                );
            }
        }
    }
}
