//! The run-time vocabulary shared by the facade and every backend: where a call runs
//! ([`Place`]), what a violated contract reports ([`Error`]) and what moved between host
//! and device ([`Transfers`]).

use std::fmt;

/// Where a `#[parallel]` call runs.
///
/// Every variant always exists; choosing one whose backend is not compiled in is reported
/// as [`Error::PlaceUnavailable`] (or a panic saying so).
///
/// # Placement by default
///
/// A call runs on the place asked for: a `dpl::with_place` scope, else the `DPL_PLACE`
/// environment variable. When neither asks, the default is `Gpu(0)` if the `cuda` feature
/// is on and a device is usable, else `Cpu`; but a GPU found this way runs only the calls
/// that pay for moving their data over PCIe: those whose data are already on the device
/// (a `dpl::Seq` left there by an earlier call), and those of *compute-bound* functions,
/// which do much work per element (an element costing a loop or software arithmetic, a
/// sort, a loop at the top level of the body). The other calls — a `saxpy` on host
/// vectors, which took 100-400 ms on an H100 against 1-75 ms on its 16 CPU cores — run
/// on `Cpu`. `dpl::inspect!(f).compute_bound` tells which kind a function is. Asking for
/// `Gpu(n)` always runs there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Place {
    /// All CPU cores, through rayon.
    Cpu,
    /// The sequential reference implementation: one thread, deterministic order.
    Seq,
    /// CUDA device `n` (feature `cuda`).
    Gpu(usize),
    /// The bundled PTX simulator (feature `sim`).
    Sim,
    /// All ranks of an MPI job, SPMD: each rank holds one block of every sequence (feature
    /// `mpi`).
    Mpi,
}

impl Place {
    /// Parses the syntax of `DPL_PLACE`: `cpu`, `seq`, `gpu`, `gpu:N`, `sim`, `mpi`
    /// (case-insensitive, surrounding white space ignored).
    pub fn parse(text: &str) -> Result<Place, Error> {
        let t = text.trim().to_ascii_lowercase();
        match t.as_str() {
            "cpu" => Ok(Place::Cpu),
            "seq" => Ok(Place::Seq),
            "sim" => Ok(Place::Sim),
            "mpi" => Ok(Place::Mpi),
            "gpu" => Ok(Place::Gpu(0)),
            _ => t
                .strip_prefix("gpu:")
                .and_then(|n| n.parse().ok())
                .map(Place::Gpu)
                .ok_or_else(|| Error::BadPlace {
                    text: text.to_string(),
                }),
        }
    }
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Cpu => f.write_str("cpu"),
            Place::Seq => f.write_str("seq"),
            Place::Gpu(n) => write!(f, "gpu:{n}"),
            Place::Sim => f.write_str("sim"),
            Place::Mpi => f.write_str("mpi"),
        }
    }
}

/// A source position of a `#[parallel]` body, recorded at compile time for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Location {
    /// The source file, as `file!()` gives it.
    pub file: &'static str,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
}

impl std::str::FromStr for Place {
    type Err = Error;

    /// [`Place::parse`]: `"cpu".parse::<Place>()`.
    fn from_str(text: &str) -> Result<Place, Error> {
        Place::parse(text)
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// A violated contract or an unavailable resource, reported by a `#[parallel]` call.
///
/// Functions declared `-> Result<T, dpl::Error>` return it; others panic with its
/// `Display` text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Inputs that must have the same length do not.
    #[error("{prim}: length mismatch: {left} vs {right} at {at}")]
    LengthMismatch {
        /// The primitive that needs equal lengths.
        prim: &'static str,
        /// One length.
        left: usize,
        /// The other.
        right: usize,
        /// Where in the source.
        at: Location,
    },
    /// An index (given as data or computed) is outside its sequence.
    #[error("{prim}: index {index} out of range for length {len} at {at}")]
    IndexOutOfRange {
        /// `index` for `x[i]`, else the primitive.
        prim: &'static str,
        /// The offending index (negative indices are reported as their value).
        index: i128,
        /// The length of the sequence.
        len: usize,
        /// Where in the source.
        at: Location,
    },
    /// `min`/`max`/`reduce` without a start value over an empty sequence.
    #[error("{prim}: empty sequence at {at}")]
    Empty {
        /// The primitive.
        prim: &'static str,
        /// Where in the source.
        at: Location,
    },
    /// `permute` indices that are not a permutation of `0..len`.
    #[error("{prim}: indices are not a permutation ({detail}) at {at}")]
    NotAPermutation {
        /// The primitive.
        prim: &'static str,
        /// What is wrong (e.g. "index 3 appears twice").
        detail: String,
        /// Where in the source.
        at: Location,
    },
    /// Integer division (`/`) or remainder (`%`) by zero; the message is Rust's for the
    /// operator, with the operator and the location.
    #[error("attempt to {} (`{op}`) at {at}", divide_by_zero(op))]
    DivideByZero {
        /// The operator: `"/"` or `"%"`.
        op: &'static str,
        /// Where in the source.
        at: Location,
    },
    /// A result or temporary that cannot be allocated: its size overflows the address
    /// space or the allocator refused it. Raised instead of aborting the process.
    #[error("{prim}: out of memory: cannot allocate {bytes} bytes at {at}")]
    OutOfMemory {
        /// The primitive whose result or temporary it is.
        prim: &'static str,
        /// The size asked for (it may exceed `usize::MAX`, hence `u128`).
        bytes: u128,
        /// Where in the source.
        at: Location,
    },
    /// A `Nested`, `Matrix` or `Seq` whose parts are inconsistent.
    #[error("malformed {what}: {detail}")]
    Malformed {
        /// `Nested`, `Matrix`, ...
        what: &'static str,
        /// What is wrong.
        detail: String,
    },
    /// A place whose backend is not compiled in or has no device.
    #[error("place {place} is not available: {reason}")]
    PlaceUnavailable {
        /// The place asked for.
        place: Place,
        /// Why not.
        reason: String,
    },
    /// `DPL_PLACE` (or `Place::parse`) text that names no place.
    #[error("`{text}` is not a place (expected cpu, seq, gpu, gpu:N, sim or mpi)")]
    BadPlace {
        /// The text given.
        text: String,
    },
    /// A device failure: out of memory, launch failure, ...
    #[error("device error: {0}")]
    Device(String),
}

/// What a division by zero attempted, in Rust's words: `"divide by zero"` for `/`,
/// `"calculate the remainder with a divisor of zero"` for `%`.
fn divide_by_zero(op: &str) -> &'static str {
    if op == "%" {
        "calculate the remainder with a divisor of zero"
    } else {
        "divide by zero"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_places() {
        assert_eq!(Place::parse("cpu"), Ok(Place::Cpu));
        assert_eq!(Place::parse(" SEQ "), Ok(Place::Seq));
        assert_eq!(Place::parse("gpu"), Ok(Place::Gpu(0)));
        assert_eq!(Place::parse("gpu:3"), Ok(Place::Gpu(3)));
        assert_eq!(Place::parse("sim"), Ok(Place::Sim));
        assert_eq!(Place::parse("MPI"), Ok(Place::Mpi));
        assert!(Place::parse("gpu:x").is_err());
        assert!(Place::parse("tpu").is_err());
        for p in [
            Place::Cpu,
            Place::Seq,
            Place::Gpu(2),
            Place::Sim,
            Place::Mpi,
        ] {
            assert_eq!(Place::parse(&p.to_string()), Ok(p));
        }
    }

    #[test]
    fn places_parse_from_their_display() {
        assert_eq!("cpu".parse::<Place>(), Ok(Place::Cpu));
        assert_eq!("gpu:1".parse::<Place>(), Ok(Place::Gpu(1)));
        assert!("gpu:".parse::<Place>().is_err());
        for p in [
            Place::Cpu,
            Place::Seq,
            Place::Gpu(7),
            Place::Sim,
            Place::Mpi,
        ] {
            assert_eq!(p.to_string().parse::<Place>(), Ok(p));
        }
    }
}

/// Bytes and copies moved between the host and a GPU place since the process started
/// (what `dpl::transfers` reports; zero for the CPU places).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Transfers {
    /// Host-to-device copies.
    pub to_device: u64,
    /// Bytes copied host-to-device.
    pub to_device_bytes: u64,
    /// Device-to-host copies (results, and the small read-backs of counts, reduction
    /// results and the error record).
    pub to_host: u64,
    /// Bytes copied device-to-host.
    pub to_host_bytes: u64,
}
