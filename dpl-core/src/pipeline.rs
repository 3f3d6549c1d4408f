//! The compiler pipeline, as a list of passes.
//!
//! ```text
//! lowered (Prim level, from the front end)
//!   -> typeck::infer       every variable gets a type; operator checks
//!   -> normalize           primitives become combinators over index spaces; shape checks
//!   -> fuse                producers inlined into consumers; dead code removed
//!   -> phases::horizontal  reductions of one phase over one index space merged into one loop
//! ```
//!
//! The sequential reference backend compiles the normalized (unfused) function, the
//! parallel backends the fused one, so every test that compares places also checks fusion.
//! In debug builds (and so in tests) the verifier runs after every pass; a failure there is
//! a compiler bug and is reported as an internal error.

use crate::diag::Diagnostic;
use crate::fuse::{self, Stats};
use crate::ir::{Function, Span};
use crate::{normalize, phases, typeck, verify};

/// A function after each pass.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// After type inference (Prim level).
    pub typed: Function,
    /// After normalization (Soac level, unfused).
    pub normalized: Function,
    /// After fusion.
    pub fused: Function,
}

impl Compiled {
    /// Loops and temporaries before fusion.
    pub fn stats_before(&self) -> Stats {
        fuse::stats(&self.normalized)
    }

    /// Loops and temporaries after fusion.
    pub fn stats(&self) -> Stats {
        fuse::stats(&self.fused)
    }

    /// The phases of the fused function (global synchronization points + 1).
    pub fn phases(&self) -> Vec<phases::Phase> {
        phases::phases(&self.fused)
    }
}

/// Runs every pass on a lowered function.
pub fn compile(f: Function) -> Result<Compiled, Vec<Diagnostic>> {
    compile_with(f, typeck::Literals::Rust)
}

/// [`compile`], with the rule for unsuffixed integer literals given (a generic function's
/// instantiations use [`typeck::Literals::Generic`]).
pub fn compile_with(
    mut f: Function,
    literals: typeck::Literals,
) -> Result<Compiled, Vec<Diagnostic>> {
    check("lowering", &f, false)?;
    typeck::infer_with(&mut f, literals)?;
    check("type inference", &f, true)?;
    let normalized = normalize::normalize(&f);
    check("normalization", &normalized, true)?;
    let fused = fuse::fuse(&normalized);
    check("fusion", &fused, true)?;
    let fused = phases::horizontal(&fused);
    check("horizontal fusion", &fused, true)?;
    Ok(Compiled {
        typed: f,
        normalized,
        fused,
    })
}

/// Runs the verifier when debug assertions are on (always in tests).
fn check(pass: &str, f: &Function, typed: bool) -> Result<(), Vec<Diagnostic>> {
    if !cfg!(debug_assertions) {
        return Ok(());
    }
    let mut result = verify::verify(f);
    if typed && result.is_ok() {
        result = verify::verify_types(f);
    }
    result.map_err(|errors| {
        errors
            .into_iter()
            .map(|e| {
                Diagnostic::new(
                    Span::NONE,
                    format!("internal compiler error after {pass} in `{}`: {e}", f.name),
                )
            })
            .collect()
    })
}
