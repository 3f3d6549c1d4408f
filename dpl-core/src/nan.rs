//! The canonical NaN: the one bit pattern of every NaN that a dpl float operation
//! produces, on every place.
//!
//! It is the NaN that NVIDIA GPUs give for every single-precision operation (sign clear,
//! every significand bit set: `0x7fff_ffff`), and its `f64` counterpart
//! `0x7fff_ffff_ffff_ffff`. x86 CPUs produce the negative "default NaN" instead
//! (`0xffc0_0000` for `0.0 / 0.0`) and pass the payload of a NaN operand through, and GPUs
//! keep payloads in `f64` arithmetic; so the CPU code, the interpreter and the generated
//! `f64` GPU code replace every NaN an operation produces by this one (see the README's
//! contract on floats for which operations those are). Sorting by IEEE `totalOrder` then
//! puts every produced NaN last, on every place.

/// The bits of the canonical `f32` NaN.
pub const F32_BITS: u32 = 0x7fff_ffff;

/// The bits of the canonical `f64` NaN.
pub const F64_BITS: u64 = 0x7fff_ffff_ffff_ffff;

/// `x`, or the canonical NaN if `x` is a NaN.
#[inline(always)]
pub fn canon_f32(x: f32) -> f32 {
    if x.is_nan() { f32::from_bits(F32_BITS) } else { x }
}

/// `x`, or the canonical NaN if `x` is a NaN.
#[inline(always)]
pub fn canon_f64(x: f64) -> f64 {
    if x.is_nan() { f64::from_bits(F64_BITS) } else { x }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_nans_are_quiet_positive_nans_and_other_values_pass() {
        let n32 = canon_f32(f32::from_bits(0xffc0_0001));
        assert!(n32.is_nan() && n32.is_sign_positive());
        assert_eq!(n32.to_bits(), 0x7fff_ffff);
        let n64 = canon_f64(f64::from_bits(0xfff8_0000_0000_0001));
        assert!(n64.is_nan() && n64.is_sign_positive());
        assert_eq!(n64.to_bits(), 0x7fff_ffff_ffff_ffff);
        // Quiet: the top significand bit is set.
        assert_ne!(F32_BITS & (1 << 22), 0);
        assert_ne!(F64_BITS & (1 << 51), 0);
        for x in [0.0f32, -0.0, 1.5, f32::INFINITY, f32::NEG_INFINITY, f32::MIN_POSITIVE] {
            assert_eq!(canon_f32(x).to_bits(), x.to_bits());
            assert_eq!(canon_f64(f64::from(x)).to_bits(), f64::from(x).to_bits());
        }
    }
}
