//! [`Seq<T>`]: an owned sequence that knows where its valid copies are.
//!
//! The representation, its invariants and the design are documented on [`Seq`] itself
//! (this module is private; the type is re-exported at the crate root).

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::OnceLock;

/// An owned sequence that knows its place (for now always the host; see *The plan for
/// device copies* below).
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
/// # Today: host only
///
/// A `Seq<T>` currently holds exactly one copy of its elements, in host memory, and behaves
/// like a `Vec<T>` that cannot change length: it dereferences to `[T]`, converts from and
/// to `Vec<T>` and slices, and compares by contents.
///
/// # The plan for device copies
///
/// SPEC.md promises that a `Seq` returned by one GPU call and passed to the next stays on the
/// device in between. The internals are laid out so the GPU backend can add that without
/// changing this API:
///
/// * the host copy is a [`OnceLock<Vec<T>>`](std::sync::OnceLock): *initialised* means
///   *valid*. Today it is always initialised.
/// * the GPU backend will add a field `device: Option<Box<dyn DeviceCopy<T>>>` (a private
///   trait implemented by the CUDA and simulator buffers, with `len`, `download` and
///   `place`), valid whenever present.
/// * reading through `&self` (`Deref`, [`Seq::as_slice`], `PartialEq`, `Debug`) fills an
///   uninitialised host copy from the device copy (`OnceLock::get_or_init`), so a lazy
///   download needs no `&mut` and stays safe to share between threads;
/// * writing through `&mut self` (`DerefMut`, [`Seq::as_mut_slice`]) makes sure the host copy
///   is valid and then drops the device copy, which has become stale;
/// * [`Seq::into_vec`] downloads if needed; a `#[parallel]` call running on a GPU takes the
///   device copy if there is one (no transfer) and uploads the host copy otherwise, and
///   returns a `Seq` holding only a device copy.
///
/// Every state is thus "host valid", "device valid" or both; "neither" cannot be built.
#[derive(Clone)]
pub struct Seq<T> {
    /// The host copy; initialised exactly when it is valid. With no device copy (today:
    /// always) it is always initialised, which every constructor ensures.
    host: OnceLock<Vec<T>>,
}

impl<T> Seq<T> {
    /// An empty sequence.
    pub fn new() -> Self {
        Seq::from(Vec::new())
    }

    /// The host copy, valid by the invariant (a lazy download will go here).
    #[inline]
    fn host(&self) -> &Vec<T> {
        self.host
            .get()
            .expect("Seq invariant: the host copy is valid when there is no device copy")
    }

    /// The host copy for writing (the device copy, once there is one, is dropped here).
    #[inline]
    fn host_mut(&mut self) -> &mut Vec<T> {
        self.host
            .get_mut()
            .expect("Seq invariant: the host copy is valid when there is no device copy")
    }

    /// The number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        self.host().len()
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

    /// The elements as a `Vec`, without copying them.
    pub fn into_vec(self) -> Vec<T> {
        let mut host = self.host;
        host.take()
            .expect("Seq invariant: the host copy is valid when there is no device copy")
    }

    /// The elements copied into a `Vec`.
    pub fn to_vec(&self) -> Vec<T>
    where
        T: Clone,
    {
        self.as_slice().to_vec()
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
