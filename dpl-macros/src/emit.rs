//! Code generation for lowered functions (being written).
