//! `seam term visible|line`: stdin through the terminal filter to stdout.

use std::io::Read;

use anyhow::Context as _;

use crate::cli::TermCommand;
use crate::exit::Exit;
use crate::output;

pub fn run(cmd: TermCommand) -> anyhow::Result<Exit> {
    let mut input = Vec::new();
    std::io::stdin()
        .lock()
        .read_to_end(&mut input)
        .context("reading stdin")?;
    let out = match cmd {
        TermCommand::Visible => seam_term::visible(&input),
        TermCommand::Line => seam_term::on_one_line(&input),
    };
    output::filtered(&out);
    Ok(Exit::Ok)
}
