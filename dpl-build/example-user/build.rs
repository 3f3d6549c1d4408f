//! Asks for ahead-of-time cubins for two architectures (see the `dpl-build` crate).

fn main() {
    dpl_build::cubins(&["sm_80", "sm_90"]);
}
