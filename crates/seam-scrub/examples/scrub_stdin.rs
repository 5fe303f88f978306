//! Filter stdin to stdout through the scrubber (streaming), or with `--json` print
//! `{"text":…,"hits":[{"shape":…,"start":…,"end":…}]}` for the whole input. A stand-in for
//! `seam scrub` until the CLI is wired; `bench/scrub-peers.sh` uses whichever exists.

use std::io::{self, Read, Write};
use std::process::ExitCode;

use seam_scrub::Scrubber;

fn main() -> ExitCode {
    let json = std::env::args().skip(1).any(|a| a == "--json");
    match run(json) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(io::stderr(), "scrub_stdin: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(json: bool) -> io::Result<()> {
    let scrubber = Scrubber::new();
    let mut stdin = io::stdin().lock();
    let stdout = io::stdout().lock();
    if json {
        let mut text = String::new();
        stdin.read_to_string(&mut text)?;
        let r = scrubber.scrub(&text);
        let hits: Vec<serde_json::Value> = r
            .hits
            .iter()
            .map(|h| serde_json::json!({"shape": h.shape, "start": h.start, "end": h.end}))
            .collect();
        let mut out = stdout;
        serde_json::to_writer(&mut out, &serde_json::json!({"text": r.text, "hits": hits}))?;
        return writeln!(out);
    }
    let mut w = scrubber.writer(io::BufWriter::with_capacity(1 << 16, stdout));
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = stdin.read(&mut buf)?;
        if n == 0 {
            break;
        }
        w.write_all(&buf[..n])?;
    }
    w.finish()?.flush()
}
