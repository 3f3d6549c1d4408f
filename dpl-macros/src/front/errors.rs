//! Collecting every error of a function rather than stopping at the first.

use std::fmt::Display;

use quote::ToTokens;

/// A growing list of spanned errors, combined into one `syn::Error` at the end.
#[derive(Default)]
pub(crate) struct Errors {
    err: Option<syn::Error>,
    count: usize,
}

impl Errors {
    /// Records an error.
    pub(crate) fn push(&mut self, e: syn::Error) {
        self.count += 1;
        match &mut self.err {
            Some(all) => all.combine(e),
            None => self.err = Some(e),
        }
    }

    /// Records `msg` spanned on the whole of `node`.
    pub(crate) fn at(&mut self, node: &dyn ToTokens, msg: impl Display) {
        self.push(syn::Error::new_spanned(node, msg));
    }

    /// Number of errors recorded.
    pub(crate) fn count(&self) -> usize {
        self.count
    }

    /// True when nothing was recorded.
    pub(crate) fn is_empty(&self) -> bool {
        self.err.is_none()
    }

    /// Records the error of `r`, if it is one, and gives back its value otherwise.
    pub(crate) fn ok<T>(&mut self, r: Result<T, syn::Error>) -> Option<T> {
        r.map_err(|e| self.push(e)).ok()
    }

    /// Every recorded error combined into one, if any.
    pub(crate) fn into_error(self) -> Option<syn::Error> {
        self.err
    }

    /// `Err` with every recorded error, or `Ok`.
    pub(crate) fn finish(self) -> Result<(), syn::Error> {
        self.into_error().map_or(Ok(()), Err)
    }
}

/// The values of `a` and `b`, or every error of the two.
pub(crate) fn both<A, B>(
    a: Result<A, syn::Error>,
    b: Result<B, syn::Error>,
) -> Result<(A, B), syn::Error> {
    match (a, b) {
        (Ok(a), Ok(b)) => Ok((a, b)),
        (Err(e), Ok(_)) | (Ok(_), Err(e)) => Err(e),
        (Err(mut e), Err(more)) => {
            e.combine(more);
            Err(e)
        }
    }
}
