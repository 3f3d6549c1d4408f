//! Kernel signatures read back from PTX text: the parameter list of every `.entry`.
//!
//! The code generator records each kernel's parameter count in the program
//! ([`crate::GpuProgram::params`], checked against the plan's launches by
//! [`crate::plan::Plan::verify`]); the CUDA driver checks every launch's arguments against
//! the parameter types before handing them to the driver library, which copies each
//! parameter's size from the pointer it is given.

use std::collections::HashMap;

/// A kernel parameter's type, as declared in the PTX.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Param {
    /// `.u32`, `.s32`, `.b32`.
    Int32,
    /// `.u64`, `.s64`, `.b64`.
    Int64,
    /// `.f32`.
    F32,
    /// `.f64`.
    F64,
}

/// Why a PTX text's entry declarations could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EntryError {
    /// `.entry name` with no `(`.
    #[error("a PTX `.entry` without a parameter list")]
    NoList,
    /// `.entry name(` with no `)`.
    #[error("PTX entry `{0}`: unterminated parameter list")]
    Unterminated(String),
    /// A list item that is not a `.param` declaration.
    #[error("PTX entry `{entry}`: unexpected parameter `{param}`")]
    NotAParam {
        /// The kernel.
        entry: String,
        /// The item.
        param: String,
    },
    /// A parameter of a type dpl never declares (`.u8`, `.b16`, a `.ptr` alone, ...).
    #[error("PTX entry `{entry}`: parameter `{param}` has a type the driver cannot pass")]
    Type {
        /// The kernel.
        entry: String,
        /// The declaration.
        param: String,
    },
}

/// The parameter list of every `.entry` of a PTX text, by kernel name.
pub fn params(ptx: &str) -> Result<HashMap<String, Vec<Param>>, EntryError> {
    let mut out = HashMap::new();
    let mut rest = ptx;
    while let Some(at) = rest.find(".entry ") {
        let after = &rest[at + ".entry ".len()..];
        let open = after.find('(').ok_or(EntryError::NoList)?;
        let name = after[..open].trim().to_string();
        let Some(close) = after[open..].find(')') else {
            return Err(EntryError::Unterminated(name));
        };
        let list = &after[open + 1..open + close];
        let mut params = Vec::new();
        for p in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let words: Vec<&str> = p.split_whitespace().collect();
            if words.first() != Some(&".param") {
                return Err(EntryError::NotAParam {
                    entry: name,
                    param: p.to_string(),
                });
            }
            let ty = words
                .iter()
                .skip(1)
                .find(|w| w.starts_with('.') && !matches!(**w, ".align" | ".ptr"))
                .copied()
                .unwrap_or("");
            params.push(match ty {
                ".u32" | ".s32" | ".b32" => Param::Int32,
                ".u64" | ".s64" | ".b64" => Param::Int64,
                ".f32" => Param::F32,
                ".f64" => Param::F64,
                _ => {
                    return Err(EntryError::Type {
                        entry: name,
                        param: p.to_string(),
                    });
                }
            });
        }
        out.insert(name, params);
        rest = &after[open + close..];
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = ".version 7.0\n.target sm_70\n.address_size 64\n\n\
        .visible .entry dpl_f_k0_map(\n\t.param .u64 p0,\n\t.param .u32 p1,\n\
        \t.param .f32 p2,\n\t.param .f64 p3,\n\t.param .s64 p4\n)\n.maxntid 256\n{\n\tret;\n}\n\n\
        .visible .entry dpl_f_k1_none()\n{\n\tret;\n}\n";

    #[test]
    fn parameter_lists_are_read_from_the_ptx() {
        let p = params(PTX).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(
            p["dpl_f_k0_map"],
            [
                Param::Int64,
                Param::Int32,
                Param::F32,
                Param::F64,
                Param::Int64
            ]
        );
        assert!(p["dpl_f_k1_none"].is_empty());
        let e = params(".visible .entry k(\n.param .u8 x\n)\n{}")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`k`") && e.contains(".u8"), "{e}");
        let e = params(".visible .entry k(\n.param .u32 x\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unterminated"), "{e}");
        let e = params(".visible .entry k(\n.reg .u32 x\n)").unwrap_err();
        assert_eq!(
            e.to_string(),
            "PTX entry `k`: unexpected parameter `.reg .u32 x`"
        );
        assert_eq!(params(".entry k"), Err(EntryError::NoList));
    }
}
