//! [`Seq<T>`]: an owned sequence that knows where its valid copies are.
//!
//! The representation, its invariants and the design are documented on [`Seq`] itself
//! (this module is private; the type is re-exported at the crate root).

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::OnceLock;

#[cfg(any(feature = "cuda", feature = "sim"))]
use crate::gpu::DeviceCopy;
#[cfg(not(any(feature = "cuda", feature = "sim")))]
use crate::no_gpu::DeviceCopy;

/// An owned sequence that knows its place: a host copy and/or a device copy, each valid
/// or stale, moved lazily.
///
/// In a `#[parallel]` body a `&Seq<T>` is a `[T]`, and a function may return `Seq<T>`.
///
/// ```
/// use dpl::Seq;
///
/// let s = Seq::from(vec![1.0f32, 2.0, 3.0]);
/// assert_eq!(s.len(), 3);
/// assert_eq!(s[1], 2.0);                   // Deref<Target = [f32]>
/// assert_eq!(s.iter().sum::<f32>(), 6.0);
/// assert_eq!(s.to_vec(), vec![1.0, 2.0, 3.0]);
/// let back: Vec<f32> = s.into_vec();
/// assert_eq!(back, [1.0, 2.0, 3.0]);
/// ```
///
/// # Host and device copies
///
/// A `Seq<T>` returned by a call on a GPU place ([`Place::Sim`](crate::Place::Sim),
/// [`Place::Gpu`](crate::Place::Gpu)) holds only a device copy. Passed to the next call on
/// the same place it is used where it is — no transfer — which is what keeps an iterative
/// solver's vectors on the device between calls ([`crate::transfers`] counts the bytes
/// moved). A `Seq` made on the host is uploaded by the first GPU call that reads it and
/// keeps that device copy too, so later calls do not upload it again. The host copy of a
/// device-only `Seq` is made the first time the elements are read on the host:
///
/// * the host copy is a [`OnceLock<Vec<T>>`](std::sync::OnceLock): *initialised* means
///   *valid*; reading through `&self` (`Deref`, [`Seq::as_slice`], `PartialEq`, `Debug`)
///   downloads the device copy into it if needed, so a lazy download needs no `&mut` and is
///   safe to share between threads;
/// * writing through `&mut self` (`DerefMut`, [`Seq::as_mut_slice`]) makes sure the host copy
///   is valid and then drops the device copy, which has become stale (its memory is freed);
/// * [`Seq::into_vec`] downloads if needed; a call on a CPU place reads the host copy.
///
/// Every state is thus "host valid", "device valid" or both; "neither" cannot be built. A
/// failed download (a device error) panics with the device's message.
///
/// # Sharing between threads
///
/// A `Seq<T>` is `Send` and `Sync` when `T` is. Any number of threads may pass the same
/// `&Seq<T>` to calls at once, on any places: the first GPU call to need a device copy
/// uploads it and every later call on that place, on any thread, uses that copy (two
/// threads that race to upload make one copy each: one is kept, the other is freed when its
/// call ends); calls on other places read the host copy, which is downloaded at most once. Nothing is ever written through `&Seq<T>` except
/// these caches, so results do not depend on the interleaving. The device copy is freed
/// when the `Seq` is dropped or written through `&mut`. `tests/soak.rs` (and `cargo xtask
/// soak`) runs 16 threads sharing one `Seq` across places and checks that no device or
/// host memory is left behind.
pub struct Seq<T> {
    /// The host copy; initialised exactly when it is valid.
    host: OnceLock<Vec<T>>,
    /// The device copy; initialised exactly when it is valid (set through `&self` when a
    /// call uploads the host copy, so the next call on that place finds it there).
    device: OnceLock<DeviceCopy<T>>,
}

impl<T> Seq<T> {
    /// An empty sequence.
    pub fn new() -> Self {
        Seq::from(Vec::new())
    }

    #[cfg(any(feature = "cuda", feature = "sim"))]
    /// A sequence held only on a device (what GPU calls return).
    pub(crate) fn from_device(device: DeviceCopy<T>) -> Self {
        Seq {
            host: OnceLock::new(),
            device: OnceLock::from(device),
        }
    }

    #[cfg(any(feature = "cuda", feature = "sim"))]
    /// The device copy, if there is a valid one.
    pub(crate) fn device(&self) -> Option<&DeviceCopy<T>> {
        self.device.get()
    }

    #[cfg(any(feature = "cuda", feature = "sim"))]
    /// Records a device copy made from the (valid) host copy; gives it back if another
    /// thread recorded one first.
    pub(crate) fn attach_device(&self, copy: DeviceCopy<T>) -> Result<(), DeviceCopy<T>> {
        self.device.set(copy)
    }

    /// The host copy, downloaded from the device copy first if it is not valid.
    #[inline]
    fn host(&self) -> &Vec<T> {
        self.host.get_or_init(|| {
            self.device
                .get()
                .expect("Seq invariant: a host or a device copy is valid")
                .download()
        })
    }

    /// The host copy for writing: made valid, and the device copy (now stale) dropped.
    #[inline]
    fn host_mut(&mut self) -> &mut Vec<T> {
        self.host();
        // The stale device copy is dropped here (its memory freed).
        self.device.take();
        self.host
            .get_mut()
            .expect("Seq invariant: the host copy was just made valid")
    }

    /// The number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        match (self.host.get(), self.device.get()) {
            (None, Some(d)) => d.len(),
            _ => self.host().len(),
        }
    }

    /// `true` if there are no elements.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements as a slice (the same as dereferencing).
    #[inline]
    pub fn as_slice(&self) -> &[T] {
        self.host()
    }

    /// The elements as a mutable slice (the length cannot change).
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        self.host_mut()
    }

    /// The elements as a `Vec` (downloaded first if only the device has them).
    pub fn into_vec(mut self) -> Vec<T> {
        std::mem::take(self.host_mut())
    }

    /// The elements copied into a `Vec`.
    pub fn to_vec(&self) -> Vec<T>
    where
        T: Clone,
    {
        self.as_slice().to_vec()
    }

    /// Whether the host copy is valid (no download is needed to read the elements).
    pub fn is_on_host(&self) -> bool {
        self.host.get().is_some()
    }

    /// The place holding a valid device copy, if any.
    pub fn device_place(&self) -> Option<crate::Place> {
        self.device.get().map(DeviceCopy::place)
    }
}

impl<T: Clone> Clone for Seq<T> {
    /// Clones the host copy (downloading it first if needed); the clone has no device copy.
    fn clone(&self) -> Self {
        Seq::from(self.host().clone())
    }
}

impl<T> Default for Seq<T> {
    fn default() -> Self {
        Seq::new()
    }
}

impl<T> Deref for Seq<T> {
    type Target = [T];

    #[inline]
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T> DerefMut for Seq<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
}

impl<T> AsRef<[T]> for Seq<T> {
    fn as_ref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T> From<Vec<T>> for Seq<T> {
    fn from(v: Vec<T>) -> Self {
        Seq {
            host: OnceLock::from(v),
            device: OnceLock::new(),
        }
    }
}

impl<T: Clone> From<&[T]> for Seq<T> {
    fn from(s: &[T]) -> Self {
        Seq::from(s.to_vec())
    }
}

impl<T: Clone> From<&Vec<T>> for Seq<T> {
    fn from(v: &Vec<T>) -> Self {
        Seq::from(v.as_slice())
    }
}

impl<T, const N: usize> From<[T; N]> for Seq<T> {
    fn from(a: [T; N]) -> Self {
        Seq::from(Vec::from(a))
    }
}

impl<T> From<Seq<T>> for Vec<T> {
    fn from(s: Seq<T>) -> Self {
        s.into_vec()
    }
}

impl<T> FromIterator<T> for Seq<T> {
    /// ```
    /// let s: dpl::Seq<u32> = (1..=4).collect();
    /// assert_eq!(s, [1, 2, 3, 4][..]);
    /// ```
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        Seq::from(iter.into_iter().collect::<Vec<T>>())
    }
}

impl<T> IntoIterator for Seq<T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;

    fn into_iter(self) -> Self::IntoIter {
        self.into_vec().into_iter()
    }
}

impl<'a, T> IntoIterator for &'a Seq<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

// By contents, whichever copies are valid (written out, not derived, so that adding the
// device copy later cannot change what equality means).
impl<T: PartialEq> PartialEq for Seq<T> {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Eq> Eq for Seq<T> {}

impl<T: PartialEq> PartialEq<[T]> for Seq<T> {
    fn eq(&self, other: &[T]) -> bool {
        self.as_slice() == other
    }
}

impl<T: PartialEq> PartialEq<Vec<T>> for Seq<T> {
    fn eq(&self, other: &Vec<T>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: PartialEq, const N: usize> PartialEq<[T; N]> for Seq<T> {
    fn eq(&self, other: &[T; N]) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: fmt::Debug> fmt::Debug for Seq<T> {
    /// Formats like a slice, e.g. `Seq[1, 2]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Seq")?;
        f.debug_list().entries(self.as_slice()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_round_trip() {
        let v = vec![3, 1, 4, 1, 5];
        let a = Seq::from(v.clone());
        let b = Seq::from(v.as_slice());
        let c = Seq::from(&v);
        let d: Seq<i32> = v.iter().copied().collect();
        let e = Seq::from([3, 1, 4, 1, 5]);
        for s in [&a, &b, &c, &d, &e] {
            assert_eq!(s, &a);
            assert_eq!(*s, v);
            assert_eq!(s.len(), 5);
            assert_eq!(s.to_vec(), v);
        }
        assert_eq!(Vec::from(a.clone()), v);
        assert_eq!(a.clone().into_iter().collect::<Vec<_>>(), v);
        assert_eq!((&a).into_iter().count(), 5);
        assert_eq!(a.into_vec(), v);
        assert_ne!(b, Seq::from(vec![3, 1, 4]));
    }

    #[test]
    fn slice_access_and_mutation() {
        let mut s = Seq::from(vec![1, 2, 3]);
        s[0] = 10;
        s.as_mut_slice()[2] = 30;
        s.sort_unstable_by(|a, b| b.cmp(a));
        assert_eq!(s, [30, 10, 2]);
        assert_eq!(s.iter().max(), Some(&30));
        assert_eq!(s.as_ref(), &[30, 10, 2]);
    }

    #[test]
    fn empty_and_debug() {
        let s: Seq<u8> = Seq::new();
        assert!(s.is_empty());
        assert_eq!(s, Seq::default());
        assert_eq!(format!("{s:?}"), "Seq[]");
        assert_eq!(format!("{:?}", Seq::from(vec![1, 2])), "Seq[1, 2]");
    }

    #[test]
    fn is_send_and_sync() {
        fn check<S: Send + Sync>() {}
        check::<Seq<f32>>();
    }
}
