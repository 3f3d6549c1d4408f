//! dpl-sim: a PTX simulator (under construction).
