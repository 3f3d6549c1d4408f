//! `printf` in kernels (nvcc's `vprintf(format, args)`): C format strings over the packed
//! argument buffer, where each argument is aligned to its size (4 bytes for `int` and
//! `char`, 8 for `long`, `double` (floats are promoted) and pointers).

use crate::error::FaultKind;
use crate::exec::{FResult, Fault};

fn fault(detail: String) -> Fault {
    Fault {
        kind: FaultKind::OutOfBounds,
        lane: 0,
        pc: 0,
        detail,
    }
}

/// Reads a NUL-terminated string of at most 64 KiB.
pub(crate) fn c_string(
    addr: u64,
    read: &mut impl FnMut(u64, u32) -> FResult<u64>,
) -> FResult<String> {
    let mut bytes = Vec::new();
    for i in 0..65536u64 {
        let b = read(addr + i, 1)? as u8;
        if b == 0 {
            return Ok(String::from_utf8_lossy(&bytes).into_owned());
        }
        bytes.push(b);
    }
    Err(fault(format!(
        "printf string at {addr:#x} is not terminated within 64 KiB"
    )))
}

/// `%e` in C style: mantissa with `prec` digits and a signed two-digit exponent.
fn exp_format(v: f64, prec: usize, upper: bool) -> String {
    let s = format!("{v:.prec$e}");
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    let out = format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
    if upper { out.to_uppercase() } else { out }
}

/// `%g`: the shorter of `%e`/`%f` by C's rule, trailing zeros removed (unless `#`).
fn general_format(v: f64, prec: usize, upper: bool, alt: bool) -> String {
    let p = prec.max(1);
    if v == 0.0 {
        return if alt {
            format!("{:.*}", p - 1, v)
        } else {
            "0".into()
        };
    }
    let x = v.abs().log10().floor() as i32;
    let trim = |s: String| -> String {
        if alt || !s.contains('.') {
            return s;
        }
        let (num, exp) = match s.find(['e', 'E']) {
            Some(i) => (s[..i].to_string(), s[i..].to_string()),
            None => (s.clone(), String::new()),
        };
        let num = num.trim_end_matches('0').trim_end_matches('.').to_string();
        num + &exp
    };
    if x < -4 || x >= p as i32 {
        trim(exp_format(v, p - 1, upper))
    } else {
        trim(format!("{:.*}", (p as i32 - 1 - x).max(0) as usize, v))
    }
}

/// Formats the string at `fmt` with the arguments at `args`.
pub(crate) fn format(
    fmt: u64,
    args: u64,
    read: &mut impl FnMut(u64, u32) -> FResult<u64>,
) -> FResult<String> {
    let f = c_string(fmt, read)?;
    let mut out = String::new();
    let mut at = args;
    let mut next = |size: u32, read: &mut dyn FnMut(u64, u32) -> FResult<u64>| -> FResult<u64> {
        at = at.div_ceil(size as u64) * size as u64;
        let v = read(at, size)?;
        at += size as u64;
        Ok(v)
    };
    let chars: Vec<char> = f.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if c != '%' {
            out.push(c);
            continue;
        }
        let (mut left, mut plus, mut space, mut alt, mut zero) =
            (false, false, false, false, false);
        while i < chars.len() {
            match chars[i] {
                '-' => left = true,
                '+' => plus = true,
                ' ' => space = true,
                '#' => alt = true,
                '0' => zero = true,
                _ => break,
            }
            i += 1;
        }
        let mut width = 0usize;
        if i < chars.len() && chars[i] == '*' {
            width = next(4, read)? as u32 as i32 as usize;
            i += 1;
        }
        while i < chars.len() && chars[i].is_ascii_digit() {
            width = width * 10 + chars[i].to_digit(10).unwrap_or(0) as usize;
            i += 1;
        }
        let mut prec = None;
        if i < chars.len() && chars[i] == '.' {
            i += 1;
            let mut p = 0usize;
            if i < chars.len() && chars[i] == '*' {
                p = next(4, read)? as u32 as usize;
                i += 1;
            }
            while i < chars.len() && chars[i].is_ascii_digit() {
                p = p * 10 + chars[i].to_digit(10).unwrap_or(0) as usize;
                i += 1;
            }
            prec = Some(p);
        }
        let mut long = false;
        while i < chars.len() && matches!(chars[i], 'h' | 'l' | 'L' | 'z' | 'j' | 't' | 'q') {
            if matches!(chars[i], 'l' | 'L' | 'z' | 'j' | 't' | 'q') {
                long = true;
            }
            i += 1;
        }
        let Some(&conv) = chars.get(i) else {
            out.push('%');
            break;
        };
        i += 1;
        let isize = if long { 8 } else { 4 };
        let sign = |neg: bool| {
            if neg {
                "-"
            } else if plus {
                "+"
            } else if space {
                " "
            } else {
                ""
            }
        };
        let (prefix, body): (String, String) = match conv {
            '%' => {
                out.push('%');
                continue;
            }
            'd' | 'i' => {
                let v = next(isize, read)?;
                let v = if long {
                    v as i64
                } else {
                    v as u32 as i32 as i64
                };
                let mut digits = v.unsigned_abs().to_string();
                if let Some(p) = prec {
                    digits = format!("{digits:0>p$}");
                }
                (sign(v < 0).to_string(), digits)
            }
            'u' | 'x' | 'X' | 'o' => {
                let v = next(isize, read)?;
                let v = if long { v } else { v as u32 as u64 };
                let mut digits = match conv {
                    'u' => v.to_string(),
                    'x' => format!("{v:x}"),
                    'X' => format!("{v:X}"),
                    _ => format!("{v:o}"),
                };
                if let Some(p) = prec {
                    digits = format!("{digits:0>p$}");
                }
                let prefix = match (alt && v != 0, conv) {
                    (true, 'x') => "0x",
                    (true, 'X') => "0X",
                    (true, 'o') => "0",
                    _ => "",
                };
                (prefix.to_string(), digits)
            }
            'c' => (String::new(), ((next(4, read)? as u8) as char).to_string()),
            's' => {
                let p = next(8, read)?;
                let mut s = if p == 0 {
                    "(null)".to_string()
                } else {
                    c_string(p, read)?
                };
                if let Some(n) = prec {
                    s = s.chars().take(n).collect();
                }
                (String::new(), s)
            }
            'p' => (String::new(), format!("0x{:x}", next(8, read)?)),
            'f' | 'F' | 'e' | 'E' | 'g' | 'G' | 'a' | 'A' => {
                let v = f64::from_bits(next(8, read)?);
                let p = prec.unwrap_or(6);
                let neg = v.is_sign_negative() && !v.is_nan();
                let a = v.abs();
                let body = if a.is_nan() {
                    "nan".to_string()
                } else if a.is_infinite() {
                    "inf".to_string()
                } else {
                    match conv {
                        'f' | 'F' => format!("{a:.p$}"),
                        'e' | 'E' => exp_format(a, p, conv == 'E'),
                        'g' | 'G' => general_format(a, p, conv == 'G', alt),
                        _ => exp_format(a, p, conv == 'A'),
                    }
                };
                let body = if conv.is_ascii_uppercase() {
                    body.to_uppercase()
                } else {
                    body
                };
                (sign(neg).to_string(), body)
            }
            other => {
                // Unknown conversions are printed as written.
                out.push('%');
                out.push(other);
                continue;
            }
        };
        let len = prefix.chars().count() + body.chars().count();
        let pad = width.saturating_sub(len);
        let numeric = !matches!(conv, 's' | 'c' | 'p');
        if left {
            out.push_str(&prefix);
            out.push_str(&body);
            out.extend(std::iter::repeat_n(' ', pad));
        } else if zero
            && numeric
            && prec.is_none_or(|_| !matches!(conv, 'd' | 'i' | 'u' | 'x' | 'X' | 'o'))
        {
            out.push_str(&prefix);
            out.extend(std::iter::repeat_n('0', pad));
            out.push_str(&body);
        } else {
            out.extend(std::iter::repeat_n(' ', pad));
            out.push_str(&prefix);
            out.push_str(&body);
        }
    }
    Ok(out)
}
