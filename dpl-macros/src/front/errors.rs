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

    /// `Err` with every recorded error, or `Ok`.
    pub(crate) fn finish(self) -> Result<(), syn::Error> {
        match self.err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}
