//! exploratory
#[path = "pcg/baselines.rs"]
mod baselines;
#[path = "pcg/kernels.rs"]
mod kernels;
#[path = "pcg/problem.rs"]
mod problem;
#[path = "pcg/solver.rs"]
mod solver;

use baselines::Plain;
use kernels::Dpl;
use problem::Problem;
use solver::{Options, pcg};

fn main() {
    let size: usize = std::env::var("PCG_SIZE").ok().and_then(|s| s.parse().ok()).unwrap_or(512);
    let alpha: f64 = std::env::var("PCG_ALPHA").ok().and_then(|s| s.parse().ok()).unwrap_or(0.01);
    let tol: f64 = std::env::var("PCG_TOL").ok().and_then(|s| s.parse().ok()).unwrap_or(1e-6);
    let p = Problem::optical_flow(size, size, alpha).unwrap();
    let opts = Options::converge(tol, 20000);
    for (name, s) in [
        ("seq", pcg(&Plain::sequential(&p), &p.rhs, opts)),
        ("rayon", pcg(&Plain::rayon(&p), &p.rhs, opts)),
        ("dpl", pcg(&Dpl::new(&p), &p.rhs, opts)),
    ] {
        let s = s.unwrap();
        println!("{name}: it {} res {:.3e} true {:.3e} conv {} {:?}/it", s.iterations, s.residual, p.relative_residual(&s.x), s.converged, s.per_iteration());
    }
}
