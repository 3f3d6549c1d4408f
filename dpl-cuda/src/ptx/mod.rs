//! PTX: the text model of a kernel and a typed instruction layer.
//!
//! [`Kernel`] is one `.entry` under construction: typed virtual registers ([`Reg`]),
//! labels, parameters, `.shared` arrays and the instructions. Every value gets a fresh
//! virtual register (ptxas allocates the physical ones), except loop-carried values,
//! which are updated in place with `mov`. Registers live in five classes declared at the
//! top of each kernel: `%p` (predicates, `bool`), `%r` (32-bit integers), `%rd` (64-bit
//! integers and addresses), `%f` (`f32`) and `%fd` (`f64`).
//!
//! Instructions are values ([`Ins`]) built by one constructor per instruction (in the
//! spirit of naga's `back/spv/instructions.rs`), grouped by family: data movement and
//! conversions ([`ins::data`]), integer and float arithmetic, comparisons and selects
//! ([`ins::alu`]), loads and stores ([`ins::memory`]), branches ([`ins::control`]),
//! warp-level shuffles and votes ([`ins::warp`]), barriers and fences ([`ins::sync`]) and
//! atomics ([`ins::atomic`]). Operands are typed too: registers, immediates ([`Src`]),
//! addresses ([`Addr`]), labels ([`Label`]), named symbols ([`Sym`]) and special
//! registers ([`Sreg`]). The instruction text is spelled here and nowhere else: code
//! generation says which instruction it emits, `k.emit(Ins::add(Ty::S64, &i, &i, &step))`,
//! and [`F64`] builds `f64` arithmetic on fresh registers for the math routines.
//!
//! This module knows nothing of the code generator, which uses it.

/// Declares an enum of PTX words (types, qualifiers, special registers) with the text
/// each variant is spelled as (its `Display`).
macro_rules! spelled {
    ($(#[$m:meta])* $vis:vis enum $name:ident {
        $($(#[$vm:meta])* $v:ident = $text:literal,)*
    }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        $vis enum $name {
            $($(#[$vm])* $v,)*
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(match self {
                    $($name::$v => $text,)*
                })
            }
        }
    };
}

mod f64;
pub(crate) mod ins;
mod kernel;
mod operand;
mod ty;

pub use crate::layout::size_of;
pub(crate) use f64::F64;
pub(crate) use ins::{AtomOp, Cmp, Ins, Rnd, Shfl, Space};
pub(crate) use kernel::Kernel;
pub(crate) use operand::{Addr, Label, Reg, Src, Sreg, Sym};
pub(crate) use ty::{Ty, arith, bits, mem, narrow, width};

/// The module-scope declaration of a constant table of 64-bit words, `.const .align 8
/// .u64 name[n] = {...};`.
pub(crate) fn const_table(name: &Sym, words: &[u64]) -> String {
    let words: Vec<String> = words.iter().map(|w| format!("{w:#018x}")).collect();
    format!(
        ".const .align 8 .u64 {name}[{}] = {{{}}};\n",
        words.len(),
        words.join(", ")
    )
}
