//! The `#[parallel]` attribute of dpl (under construction).
use proc_macro::TokenStream;

/// Compiles a data-parallel function (or every function of an inline module).
#[proc_macro_attribute]
pub fn parallel(_attr: TokenStream, item: TokenStream) -> TokenStream {
    item
}
