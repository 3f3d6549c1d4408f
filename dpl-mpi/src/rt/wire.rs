//! Elements on the wire: [`Wire`], implemented for the scalars of the language, tuples of
//! them and `Option`s of those.
//!
//! MPI moves bytes. A scalar's bytes in memory are its wire form, so slices of scalars are
//! sent in place and received with one copy; tuples (which may have padding) and options
//! are packed field by field.

use std::borrow::Cow;

use dpl_core::float16::{bf16, f16};

/// A value that can be sent to another rank of the same program.
pub trait Wire: Copy + Send + Sync + 'static {
    /// Bytes of one value on the wire.
    const BYTES: usize;
    /// Whether a value's bytes in memory are exactly its wire form (`size_of::<Self>() ==
    /// BYTES`, no padding): slices are then sent without packing.
    const PLAIN: bool;
    /// Writes the value's `BYTES` bytes to the front of `out`.
    fn put(&self, out: &mut [u8]);
    /// Reads a value written by [`Wire::put`].
    fn get(bytes: &[u8]) -> Self;
}

macro_rules! scalar_wire {
    ($($t:ty),*) => {$(
        impl Wire for $t {
            const BYTES: usize = size_of::<$t>();
            const PLAIN: bool = true;
            #[inline(always)]
            fn put(&self, out: &mut [u8]) {
                out[..Self::BYTES].copy_from_slice(&self.to_ne_bytes());
            }
            #[inline(always)]
            fn get(bytes: &[u8]) -> Self {
                let mut b = [0u8; size_of::<$t>()];
                b.copy_from_slice(&bytes[..Self::BYTES]);
                <$t>::from_ne_bytes(b)
            }
        }
    )*};
}
scalar_wire!(
    i8, u8, i16, u16, i32, u32, i64, u64, usize, f16, bf16, f32, f64
);

impl Wire for bool {
    const BYTES: usize = 1;
    const PLAIN: bool = true;
    #[inline(always)]
    fn put(&self, out: &mut [u8]) {
        out[0] = u8::from(*self);
    }
    #[inline(always)]
    fn get(bytes: &[u8]) -> Self {
        bytes[0] != 0
    }
}

impl<T: Wire> Wire for Option<T> {
    const BYTES: usize = 1 + T::BYTES;
    const PLAIN: bool = false;
    #[inline(always)]
    fn put(&self, out: &mut [u8]) {
        match self {
            Some(v) => {
                out[0] = 1;
                v.put(&mut out[1..]);
            }
            None => out[..Self::BYTES].fill(0),
        }
    }
    #[inline(always)]
    fn get(bytes: &[u8]) -> Self {
        (bytes[0] != 0).then(|| T::get(&bytes[1..]))
    }
}

macro_rules! tuple_wire {
    ($($n:tt $t:ident),+) => {
        impl<$($t: Wire),+> Wire for ($($t,)+) {
            const BYTES: usize = 0 $(+ $t::BYTES)+;
            const PLAIN: bool = false;
            #[inline(always)]
            fn put(&self, out: &mut [u8]) {
                let mut at = 0;
                $(
                    self.$n.put(&mut out[at..]);
                    at += $t::BYTES;
                )+
                let _ = at;
            }
            #[inline(always)]
            fn get(bytes: &[u8]) -> Self {
                let mut at = 0;
                let v = ($({
                    let start = at;
                    at += $t::BYTES;
                    $t::get(&bytes[start..])
                },)+);
                let _ = at;
                v
            }
        }
    };
}
tuple_wire!(0 A);
tuple_wire!(0 A, 1 B);
tuple_wire!(0 A, 1 B, 2 C);
tuple_wire!(0 A, 1 B, 2 C, 3 D);
tuple_wire!(0 A, 1 B, 2 C, 3 D, 4 E);
tuple_wire!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F);
tuple_wire!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G);
tuple_wire!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H);

/// The wire bytes of `xs`: borrowed for plain types, packed otherwise.
pub(crate) fn bytes_of<T: Wire>(xs: &[T]) -> Cow<'_, [u8]> {
    if T::PLAIN {
        debug_assert_eq!(size_of::<T>(), T::BYTES);
        // SAFETY: plain types have no padding (every byte of a value is initialised) and
        // `xs` covers `len * size_of::<T>()` bytes.
        Cow::Borrowed(unsafe {
            std::slice::from_raw_parts(xs.as_ptr().cast::<u8>(), std::mem::size_of_val(xs))
        })
    } else {
        let mut out = vec![0u8; xs.len() * T::BYTES];
        for (x, slot) in xs.iter().zip(out.chunks_exact_mut(T::BYTES.max(1))) {
            x.put(slot);
        }
        Cow::Owned(out)
    }
}

/// Appends the wire bytes of `xs` to `out`.
pub(crate) fn extend_bytes<T: Wire>(out: &mut Vec<u8>, xs: &[T]) {
    out.extend_from_slice(&bytes_of(xs));
}

/// The values whose wire bytes `bytes` holds (a multiple of `T::BYTES`, written by
/// [`bytes_of`] or [`Wire::put`] on the same program).
pub(crate) fn values_of<T: Wire>(bytes: &[u8]) -> Vec<T> {
    if T::BYTES == 0 {
        return Vec::new();
    }
    let n = bytes.len() / T::BYTES;
    if T::PLAIN {
        let mut out: Vec<T> = Vec::with_capacity(n);
        // SAFETY: the bytes are those of `n` valid values of the plain type `T` (sent by
        // `bytes_of`), copied into capacity for `n` values.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                out.as_mut_ptr().cast::<u8>(),
                n * T::BYTES,
            );
            out.set_len(n);
        }
        out
    } else {
        bytes.chunks_exact(T::BYTES).map(T::get).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let xs = [(1.5f64, 7u32, true), (-0.0, u32::MAX, false)];
        assert_eq!(values_of::<(f64, u32, bool)>(&bytes_of(&xs)), xs);
        let ys = [Some(3i64), None, Some(-1)];
        assert_eq!(values_of::<Option<i64>>(&bytes_of(&ys)), ys);
        let zs = [f32::NAN.to_bits(), 1];
        assert_eq!(values_of::<u32>(&bytes_of(&zs)), zs);
        let bs = [true, false, true];
        assert_eq!(values_of::<bool>(&bytes_of(&bs)), bs);
        let narrow = [(-3i8, 250u8, i16::MIN, 65535u16), (i8::MAX, 0, 7, 1)];
        assert_eq!(values_of::<(i8, u8, i16, u16)>(&bytes_of(&narrow)), narrow);
        let pixels = [0u8, 255, 17];
        assert_eq!(values_of::<u8>(&bytes_of(&pixels)), pixels);
        // 16-bit floats keep their bits (a NaN's payload and the sign of zero included).
        let halfs = [
            (f16::from_bits(0x7e01), bf16::NEG_ZERO),
            (f16::MAX, bf16::from_bits(1)),
        ];
        let back = values_of::<(f16, bf16)>(&bytes_of(&halfs));
        let bits = |v: &[(f16, bf16)]| {
            v.iter()
                .map(|p| (p.0.to_bits(), p.1.to_bits()))
                .collect::<Vec<_>>()
        };
        assert_eq!(bits(&back), bits(&halfs));
        let h = [f16::from_f32(-1.5), f16::INFINITY];
        assert_eq!(values_of::<f16>(&bytes_of(&h)), h);
    }
}
