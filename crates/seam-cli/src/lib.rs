//! The `seam` command line: wires the crates together and owns all printing.
//!
//! Every byte this binary writes passes through [`output`], the one module that
//! may write to a terminal: text through `seam_term`'s terminal filter, JSON with
//! every character a terminal could act on escaped. Nothing else prints (clippy's
//! `disallowed-macros` and the workspace lints enforce it).
//!
//! Exit codes, for every subcommand: 0 ok, 1 internal error, 2 invalid input or
//! usage, 3 refused by policy (4: a ledger failed verification).
//!
//! What this crate must never do: hold policy logic or tool logic of its own.
//! It parses, calls a library, and prints.

mod cli;
mod commands;
mod context;
mod exit;
pub use seam_agent::gate_client;
pub mod output;

pub use exit::Exit;

/// Runs `seam` with the process's arguments and returns its exit code.
pub fn main() -> std::process::ExitCode {
    let code = match cli::parse() {
        Ok(cli) => match commands::run(cli) {
            Ok(exit) => exit,
            Err(err) => exit::report(&err),
        },
        Err(exit) => exit,
    };
    std::process::ExitCode::from(code as u8)
}
