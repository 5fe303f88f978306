//! Scrub a file one-shot and write the result: a small, deterministic binary to profile
//! (`valgrind --tool=callgrind`) and to compare the output of two versions of the scrubber.
//!
//! `cargo run --release -p seam-scrub --example scrub_file -- INPUT [--repeat N] [--corpus]`
//!
//! - default: scrub the whole file (N times, for profiling) and write the scrubbed text, then
//!   one line per hit (`shape start end`) after a `--- hits` line;
//! - `--str`: the input is UTF-8 text, scrubbed as a `&str` (`Scrubber::scrub`);
//! - `--corpus`: the input is a labelled corpus (JSON lines with `text`); scrub each snippet on
//!   its own and write one JSON line per snippet (`text` and `hits`).

use std::io::{self, Write};
use std::process::ExitCode;

use seam_scrub::Scrubber;

fn main() -> ExitCode {
    let mut path = None;
    let mut repeat = 1usize;
    let mut corpus = false;
    let mut as_str = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--corpus" => corpus = true,
            "--str" => as_str = true,
            "--repeat" => {
                repeat = args.next().and_then(|n| n.parse().ok()).unwrap_or(1);
            }
            _ => path = Some(a),
        }
    }
    let Some(path) = path else {
        let _ = writeln!(
            io::stderr(),
            "usage: scrub_file INPUT [--repeat N] [--corpus]"
        );
        return ExitCode::from(2);
    };
    match run(&path, repeat, corpus, as_str) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(io::stderr(), "scrub_file: {path}: {e}");
            ExitCode::FAILURE
        }
    }
}

#[inline(never)]
fn warm_up_pass(scrubber: &Scrubber, input: &[u8]) {
    std::hint::black_box(scrubber.scrub_bytes(std::hint::black_box(input)));
}

#[inline(never)]
fn measured_pass(scrubber: &Scrubber, input: &[u8]) -> (Vec<u8>, Vec<seam_scrub::Hit>) {
    scrubber.scrub_bytes(std::hint::black_box(input))
}

fn run(
    path: &str,
    repeat: usize,
    corpus: bool,
    as_str: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    let input = std::fs::read(path)?;
    let scrubber = Scrubber::new();
    scrubber.warm_up();
    let mut out = io::BufWriter::new(io::stdout().lock());
    if corpus {
        for line in input.split(|&b| b == b'\n') {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let row: serde_json::Value = serde_json::from_slice(line)?;
            let text = row["text"].as_str().ok_or("a corpus line has no text")?;
            let r = scrubber.scrub(text);
            let hits: Vec<serde_json::Value> = r
                .hits
                .iter()
                .map(|h| serde_json::json!([h.shape, h.start, h.end]))
                .collect();
            serde_json::to_writer(&mut out, &serde_json::json!({"text": r.text, "hits": hits}))?;
            writeln!(out)?;
        }
        return Ok(out.flush()?);
    }
    if as_str {
        let text = std::str::from_utf8(&input)?;
        let mut last = None;
        for _ in 0..repeat.max(1) {
            last = Some(scrubber.scrub(std::hint::black_box(text)));
        }
        let r = last.ok_or("nothing scrubbed")?;
        out.write_all(r.text.as_bytes())?;
        writeln!(out, "\n--- hits")?;
        for h in r.hits {
            writeln!(out, "{} {} {}", h.shape, h.start, h.end)?;
        }
        return Ok(out.flush()?);
    }
    // One pass first, so that lazily built state (the regexes' caches) is warm, then the
    // measured passes: profile only `measured_pass` for the steady state.
    warm_up_pass(&scrubber, &input);
    let mut last = None;
    for _ in 0..repeat.max(1) {
        last = Some(measured_pass(&scrubber, &input));
    }
    let (text, hits) = last.ok_or("nothing scrubbed")?;
    out.write_all(&text)?;
    writeln!(out, "\n--- hits")?;
    for h in hits {
        writeln!(out, "{} {} {}", h.shape, h.start, h.end)?;
    }
    Ok(out.flush()?)
}
