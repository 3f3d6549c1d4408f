//! What the facade needs of the GPU places in a build without them (neither `cuda` nor
//! `sim`): a [`Seq`](crate::Seq) then never holds a device copy, and no GPU crate is
//! compiled.

use std::convert::Infallible;
use std::marker::PhantomData;

use crate::Place;

/// A device copy, which cannot exist without a GPU place: the type has no values.
pub(crate) struct DeviceCopy<T>(Infallible, PhantomData<T>);

impl<T> DeviceCopy<T> {
    /// The number of elements (never called: there is no value).
    pub(crate) fn len(&self) -> usize {
        match self.0 {}
    }

    /// The place holding the copy (never called).
    pub(crate) fn place(&self) -> Place {
        match self.0 {}
    }

    /// The elements read back (never called).
    pub(crate) fn download(&self) -> Vec<T> {
        match self.0 {}
    }
}
