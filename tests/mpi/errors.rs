//! placeholder
use crate::harness::Env;
pub const CASES: &[(&str, fn(Env))] = &[];
