//! Programs embedded in a binary: what the `#[parallel]` macro writes next to each
//! function it compiled for the GPU — the encoded [`GpuProgram`] and one source
//! [`Location`] per span for error messages — decoded at the first call.

use std::sync::OnceLock;

use dpl_core::run::{Error, Location};

use super::devices::Device;
use super::error::RunError;
use super::{Input, Output, UNKNOWN_LOCATION};
use crate::GpuProgram;

/// A compiled program as embedded by the macro (a `static`).
pub struct Embedded {
    name: &'static str,
    /// The encoded program ([`GpuProgram::encode`]).
    code: &'static [u8],
    locations: &'static [Location],
    decoded: OnceLock<Result<GpuProgram, String>>,
}

impl Embedded {
    /// The program of function `name`: `bytes` from [`GpuProgram::encode`], `locations[s]`
    /// the source location of span `s`.
    pub const fn new(
        name: &'static str,
        bytes: &'static [u8],
        locations: &'static [Location],
    ) -> Embedded {
        Embedded {
            name,
            code: bytes,
            locations,
            decoded: OnceLock::new(),
        }
    }

    /// The decoded program (decoded once, at the first call).
    pub fn program(&self) -> Result<&GpuProgram, Error> {
        self.decoded
            .get_or_init(|| GpuProgram::decode(self.code))
            .as_ref()
            .map_err(|e| {
                RunError::Decode {
                    name: self.name.to_string(),
                    error: e.clone(),
                }
                .into()
            })
    }

    /// The PTX text, if the program decodes.
    pub fn ptx(&self) -> Option<&str> {
        self.program().ok().map(|p| p.ptx.as_str())
    }

    /// The source location of span `span`.
    pub fn locate(&self, span: u32) -> Location {
        self.locations
            .get(span as usize)
            .copied()
            .unwrap_or(UNKNOWN_LOCATION)
    }

    /// Runs the program on `device` ([`Device::run`]), errors at their source locations.
    pub fn run(&self, device: Device, args: Vec<Input>, keep: bool) -> Result<Output, Error> {
        device.run(self.program()?, args, keep, &|s| self.locate(s))
    }
}
