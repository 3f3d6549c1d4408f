//! `dpl-sim`: run one PTX kernel on the simulated GPU from the command line.
//!
//! ```text
//! cargo run -p dpl-sim --release -- kernel.ptx --entry saxpy --grid 4,1,1 --block 256,1,1 \
//!     --arg u32=1000 --arg f32=2.5 --arg 'f32[]=1,2,3' --arg zeros:f32:1000 --print
//! ```

use std::process::ExitCode;
use std::time::Instant;

use dpl_sim::{Arg, Device, DeviceBuffer};

const USAGE: &str =
    "usage: dpl-sim KERNEL.ptx --entry NAME [--grid X,Y,Z] [--block X,Y,Z] [--shared BYTES]
               [--arg SPEC]... [--print] [--print-all] [--threads N] [--repeat N] [--limit N]

argument SPECs, in the kernel's parameter order:
  T=VALUE          a scalar (T: i8 u8 i16 u16 i32 u32 i64 u64 f32 f64), e.g. i32=5
  T[]=V1,V2,...    a buffer with these elements, e.g. f32[]=1,2,3
  zeros:T:N        a zero-filled buffer of N elements, e.g. zeros:f32:1024
  T[]@FILE         a buffer with the whitespace/comma separated values of FILE

--print shows the first 32 elements of every buffer after the launch (--print-all: all);
--repeat runs the launch N times (timing the last); --limit bounds warp instructions.";

macro_rules! buffers {
    ($($v:ident $t:ty, $name:literal;)*) => {
        enum Buf {
            $($v(DeviceBuffer<$t>),)*
        }

        impl Buf {
            fn arg(&self) -> Arg<'_> {
                match self {
                    $(Buf::$v(b) => b.into(),)*
                }
            }
            fn show(&self, dev: &Device, all: bool) -> String {
                match self {
                    $(Buf::$v(b) => {
                        let v = dev.download(b);
                        let n = if all { v.len() } else { v.len().min(32) };
                        let items: Vec<String> = v[..n].iter().map(|x| x.to_string()).collect();
                        format!("{}[{}] = [{}{}]", $name, v.len(), items.join(", "), if n < v.len() { ", ..." } else { "" })
                    })*
                }
            }
        }

        fn make_buffer(dev: &Device, ty: &str, values: &[&str], zeros: Option<usize>) -> Result<Buf, String> {
            match ty {
                $($name => {
                    if let Some(n) = zeros {
                        return dev.try_alloc_zeroed::<$t>(n).map(Buf::$v).map_err(|e| e.to_string());
                    }
                    let v = values
                        .iter()
                        .map(|s| s.parse::<$t>().map_err(|e| format!("bad {} `{s}`: {e}", $name)))
                        .collect::<Result<Vec<$t>, String>>()?;
                    dev.try_upload(&v).map(Buf::$v).map_err(|e| e.to_string())
                })*
                other => Err(format!("unknown element type `{other}`")),
            }
        }

        fn make_scalar(ty: &str, value: &str) -> Result<Arg<'static>, String> {
            match ty {
                $($name => value.parse::<$t>().map(Arg::from).map_err(|e| format!("bad {} `{value}`: {e}", $name)),)*
                other => Err(format!("unknown scalar type `{other}`")),
            }
        }
    };
}

buffers! {
    I8 i8, "i8";
    U8 u8, "u8";
    I16 i16, "i16";
    U16 u16, "u16";
    I32 i32, "i32";
    U32 u32, "u32";
    I64 i64, "i64";
    U64 u64, "u64";
    F32 f32, "f32";
    F64 f64, "f64";
}

fn dims(s: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("bad dimensions `{s}` (expected X[,Y[,Z]])"));
    }
    let mut d = [1u32; 3];
    for (i, p) in parts.iter().enumerate() {
        d[i] = p
            .trim()
            .parse()
            .map_err(|_| format!("bad dimension `{p}`"))?;
    }
    Ok(d)
}

enum Spec {
    Scalar(Arg<'static>),
    Buffer(Buf),
}

fn parse_arg(dev: &Device, spec: &str) -> Result<Spec, String> {
    if let Some(rest) = spec.strip_prefix("zeros:") {
        let (ty, n) = rest
            .split_once(':')
            .ok_or_else(|| format!("bad `{spec}` (expected zeros:T:N)"))?;
        let n: usize = n.parse().map_err(|_| format!("bad length in `{spec}`"))?;
        return make_buffer(dev, ty, &[], Some(n)).map(Spec::Buffer);
    }
    if let Some((ty, file)) = spec.split_once("[]@") {
        let text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
        let values: Vec<&str> = text
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|s| !s.is_empty())
            .collect();
        return make_buffer(dev, ty, &values, None).map(Spec::Buffer);
    }
    let (lhs, value) = spec
        .split_once('=')
        .ok_or_else(|| format!("bad argument `{spec}`"))?;
    if let Some(ty) = lhs.strip_suffix("[]") {
        let values: Vec<&str> = value
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        return make_buffer(dev, ty, &values, None).map(Spec::Buffer);
    }
    make_scalar(lhs, value).map(Spec::Scalar)
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() || args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return Ok(());
    }
    let mut file = None;
    let mut entry = None;
    let (mut grid, mut block, mut shared) = ([1u32, 1, 1], [1u32, 1, 1], 0u32);
    let mut specs = Vec::new();
    let (mut print, mut all, mut repeat) = (false, false, 1usize);
    let dev = Device::new();
    let mut i = 0;
    let value = |i: &mut usize| -> Result<String, String> {
        *i += 1;
        args.get(*i)
            .cloned()
            .ok_or_else(|| format!("{} needs a value", args[*i - 1]))
    };
    while i < args.len() {
        match args[i].as_str() {
            "--entry" => entry = Some(value(&mut i)?),
            "--grid" => grid = dims(&value(&mut i)?)?,
            "--block" => block = dims(&value(&mut i)?)?,
            "--shared" => shared = value(&mut i)?.parse().map_err(|_| "bad --shared")?,
            "--arg" => specs.push(value(&mut i)?),
            "--print" => print = true,
            "--print-all" => {
                print = true;
                all = true;
            }
            "--threads" => {
                dev.set_host_threads(value(&mut i)?.parse().map_err(|_| "bad --threads")?)
            }
            "--repeat" => repeat = value(&mut i)?.parse().map_err(|_| "bad --repeat")?,
            "--limit" => {
                dev.set_instruction_limit(value(&mut i)?.parse().map_err(|_| "bad --limit")?)
            }
            a if a.starts_with("--") => return Err(format!("unknown option `{a}`\n\n{USAGE}")),
            a => {
                if file.replace(a.to_string()).is_some() {
                    return Err(format!("more than one PTX file given\n\n{USAGE}"));
                }
            }
        }
        i += 1;
    }
    let file = file.ok_or_else(|| format!("no PTX file given\n\n{USAGE}"))?;
    let text = std::fs::read_to_string(&file).map_err(|e| format!("{file}: {e}"))?;
    let module = dev.load_ptx(&text).map_err(|e| format!("{file}: {e}"))?;
    let entry = match entry {
        Some(e) => e,
        None if module.kernel_names().len() == 1 => module.kernel_names()[0].clone(),
        None => {
            return Err(format!(
                "--entry needed; kernels: {}",
                module.kernel_names().join(", ")
            ));
        }
    };
    let specs = specs
        .iter()
        .map(|s| parse_arg(&dev, s))
        .collect::<Result<Vec<_>, _>>()?;
    let launch_args: Vec<Arg<'_>> = specs
        .iter()
        .map(|s| match s {
            Spec::Scalar(a) => a.clone(),
            Spec::Buffer(b) => b.arg(),
        })
        .collect();
    let mut report = None;
    let mut elapsed = 0.0;
    for _ in 0..repeat.max(1) {
        let t = Instant::now();
        report = Some(
            dev.launch(&module, &entry, grid, block, shared, &launch_args)
                .map_err(|e| e.to_string())?,
        );
        elapsed = t.elapsed().as_secs_f64();
    }
    let r = report.expect("at least one launch");
    for line in &r.printf {
        print!("{line}");
        if !line.ends_with('\n') {
            println!();
        }
    }
    println!(
        "kernel {entry}: grid {grid:?} block {block:?}, {} blocks, {} threads",
        r.blocks, r.threads
    );
    println!("  warp instructions      {}", r.instructions);
    println!("  thread instructions    {}", r.thread_instructions);
    println!(
        "  global load requests   {}  sectors {} (ideal {})",
        r.global_load_requests, r.global_load_sectors, r.global_load_sectors_ideal
    );
    println!(
        "  global store requests  {}  sectors {} (ideal {})",
        r.global_store_requests, r.global_store_sectors, r.global_store_sectors_ideal
    );
    println!("  global atomics         {}", r.global_atomic_requests);
    println!("  coalescing efficiency  {:.3}", r.coalescing_efficiency());
    println!(
        "  shared loads / stores  {} / {}  bank conflicts {}",
        r.shared_load_requests, r.shared_store_requests, r.bank_conflicts
    );
    println!("  barriers               {}", r.barriers);
    println!(
        "  simulated in {:.3} s ({:.1} M thread-instructions/s)",
        elapsed,
        r.thread_instructions as f64 / elapsed.max(1e-9) / 1e6
    );
    if print {
        for (k, s) in specs.iter().enumerate() {
            if let Spec::Buffer(b) = s {
                println!("arg {k}: {}", b.show(&dev, all));
            }
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dpl-sim: {e}");
            ExitCode::FAILURE
        }
    }
}
