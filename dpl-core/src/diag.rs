//! Compile-time diagnostics: an error message attached to a source [`Span`].

use crate::ir::Span;
use std::fmt;

/// A compile-time error found by a pass, attached to the source position it is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Where (the macro maps it back to a `proc_macro2::Span`).
    pub span: Span,
    /// What is wrong, lowercase, saying what is allowed instead where that helps.
    pub message: String,
}

impl Diagnostic {
    /// A diagnostic at `span`.
    pub fn new(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            span,
            message: message.into(),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Diagnostic {}
