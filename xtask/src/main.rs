//! Developer commands for dpl. Run `cargo xtask help`.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        _ => {
            eprintln!("usage: cargo xtask <command>\n\ncommands: (none yet)");
            std::process::exit(2);
        }
    }
}
