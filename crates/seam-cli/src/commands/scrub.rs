//! `seam scrub` and `seam shapes`.

use std::io::Read;

use anyhow::Context as _;
use serde_json::json;

use crate::exit::{Exit, UsageError};
use crate::output;

const CHUNK: usize = 1024 * 1024;

pub fn scrub(as_json: bool) -> anyhow::Result<Exit> {
    let scrubber = seam_scrub::Scrubber::new();
    let mut stdin = std::io::stdin().lock();
    if as_json {
        let mut input = Vec::new();
        stdin.read_to_end(&mut input).context("reading stdin")?;
        let text = String::from_utf8(input).map_err(|e| {
            UsageError(format!(
                "stdin is not UTF-8 (at byte {}); --json needs text",
                e.utf8_error().valid_up_to()
            ))
        })?;
        let scrubbed = scrubber.scrub(&text);
        let hits: Vec<_> = scrubbed
            .hits
            .iter()
            .map(|h| json!({"shape": h.shape, "start": h.start, "end": h.end}))
            .collect();
        output::json_line(&json!({"text": scrubbed.text, "hits": hits}));
        return Ok(Exit::Ok);
    }
    // Streamed: the scrubber holds back just enough tail that a secret cut
    // between two chunks is still caught.
    let mut stream = scrubber.stream();
    let mut data = output::Data::new();
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = match stdin.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e).context("reading stdin"),
        };
        data.write(&stream.push_bytes(&buf[..n]));
    }
    data.write(&stream.finish_bytes());
    data.finish();
    Ok(Exit::Ok)
}

pub fn shapes(as_json: bool) -> anyhow::Result<Exit> {
    let shapes = seam_scrub::shapes();
    if as_json {
        let list: Vec<_> = shapes
            .iter()
            .map(|s| json!({"id": s.id, "category": s.category.as_str(), "description": s.description}))
            .collect();
        output::json(&list);
        return Ok(Exit::Ok);
    }
    let width = shapes.iter().map(|s| s.id.len()).max().unwrap_or(0);
    let mut text = format!(
        "{} shapes; a match is replaced by [REDACTED:<id>]\n",
        shapes.len()
    );
    for s in shapes {
        text.push_str(&format!(
            "{:width$}  {:12}  {}\n",
            s.id,
            s.category.as_str(),
            s.description
        ));
    }
    output::text(&text);
    Ok(Exit::Ok)
}
