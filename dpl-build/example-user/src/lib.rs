//! A user crate of `dpl-build`: its build script asks for cubins for sm_80 and sm_90, so
//! when `ptxas` is found at build time each `#[parallel]` function embeds them next to its
//! PTX (`dpl::inspect!(f).cubins`). Without `ptxas` only the PTX is embedded.

use dpl::prelude::*;

/// `a * x + y`
#[parallel]
pub fn saxpy(a: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
    map(|xi, yi| a * xi + yi, x, y)
}

/// The sum of squares.
#[parallel]
pub fn norm2(x: &[f32]) -> f64 {
    sum(map(|v| (v as f64) * (v as f64), x))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the build script found `ptxas` (it then set `DPL_PTXAS` for the compiler).
    fn ptxas_found() -> bool {
        option_env!("DPL_PTXAS").is_some()
    }

    #[test]
    fn cubins_are_embedded_exactly_when_ptxas_was_found() {
        for i in [dpl::inspect!(saxpy), dpl::inspect!(norm2)] {
            assert!(i.ptx.contains(".entry"), "{}: no PTX", i.name);
            if ptxas_found() {
                assert_eq!(i.cubins, [80, 90], "{}", i.name);
            } else {
                assert!(i.cubins.is_empty(), "{}", i.name);
            }
        }
        // The test command installs ptxas, so under it (CI) the cubins must be there.
        if std::env::var_os("CI").is_some() {
            assert!(
                ptxas_found(),
                "the build script did not find ptxas under CI"
            );
        }
    }

    #[test]
    fn the_functions_run_on_every_place() {
        let x: Vec<f32> = (0..1000).map(|i| i as f32 * 0.5).collect();
        let y: Vec<f32> = (0..1000).map(|i| 1000.0 - i as f32).collect();
        let want: Vec<f32> = x.iter().zip(&y).map(|(a, b)| 2.0 * a + b).collect();
        let norm: f64 = x.iter().map(|v| (*v as f64) * (*v as f64)).sum();
        for place in dpl::available_places() {
            let got = with_place(place, || saxpy(2.0, &x, &y));
            assert_eq!(got, want, "{place}");
            let n = with_place(place, || norm2(&x));
            assert!((n - norm).abs() <= 1e-9 * norm, "{place}: {n} vs {norm}");
        }
    }
}
