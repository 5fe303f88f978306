//! `seam term visible|line`: stdin through the terminal filter to stdout,
//! streamed in chunks (a UTF-8 sequence cut between chunks comes out as if whole).

use std::io::Read;

use anyhow::Context as _;
use seam_term::{Mode, TerminalFilter};

use crate::cli::TermCommand;
use crate::exit::Exit;
use crate::output;

const CHUNK: usize = 256 * 1024;

pub fn run(cmd: TermCommand) -> anyhow::Result<Exit> {
    let mode = match cmd {
        TermCommand::Visible => Mode::Visible,
        TermCommand::Line => Mode::OneLine,
    };
    let mut filter = TerminalFilter::new(mode);
    let mut stdin = std::io::stdin().lock();
    let mut buf = vec![0u8; CHUNK];
    let mut out = String::with_capacity(CHUNK * 2);
    loop {
        let n = match stdin.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e).context("reading stdin"),
        };
        out.clear();
        filter.push(&buf[..n], &mut out);
        output::filtered(&out);
    }
    out.clear();
    filter.finish(&mut out);
    output::filtered(&out);
    Ok(Exit::Ok)
}
