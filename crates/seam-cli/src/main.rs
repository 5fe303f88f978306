//! The `seam` binary. Thin: parse the command line, run the command, exit with
//! its code. Everything else lives in the library crates and in `seam_cli`.

fn main() -> std::process::ExitCode {
    seam_cli::main()
}
