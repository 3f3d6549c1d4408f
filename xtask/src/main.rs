//! Developer commands for dpl: `cargo xtask help` lists them.

mod bench;
mod ptx;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rest = args.get(1..).unwrap_or(&[]);
    let result = match args.first().map(String::as_str) {
        Some("ptx-tools") => ptx::install_tools().map(|dir| println!("{}", dir.display())),
        Some("check-fixtures") => ptx::check_fixtures(rest),
        Some("bench-report") => bench::report(rest),
        _ => {
            eprintln!(
                "usage: cargo xtask <command>\n\n\
                 commands:\n  \
                 ptx-tools        install ptxas/cuobjdump (PyPI wheels) under target/, print the folder\n  \
                 check-fixtures   assemble every PTX fixture with ptxas\n  \
                 bench-report     run the benchmarks and write BENCHMARKS.md"
            );
            std::process::exit(2);
        }
    };
    if let Err(e) = result {
        eprintln!("xtask: {e}");
        std::process::exit(1);
    }
}
