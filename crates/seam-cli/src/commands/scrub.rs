//! `seam scrub` and `seam shapes`.

use std::io::Read;

use anyhow::Context as _;
use serde_json::json;

use crate::exit::{Exit, UsageError};
use crate::output;

pub fn scrub(as_json: bool) -> anyhow::Result<Exit> {
    let mut input = Vec::new();
    std::io::stdin()
        .lock()
        .read_to_end(&mut input)
        .context("reading stdin")?;
    let text = String::from_utf8(input).map_err(|e| {
        UsageError(format!(
            "stdin is not UTF-8 (at byte {})",
            e.utf8_error().valid_up_to()
        ))
    })?;
    let scrubbed = seam_scrub::Scrubber::new().scrub(&text);
    if as_json {
        let hits: Vec<_> = scrubbed
            .hits
            .iter()
            .map(|h| json!({"shape": h.shape, "start": h.start, "end": h.end}))
            .collect();
        output::json_line(&json!({"text": scrubbed.text, "hits": hits}));
    } else {
        output::text(&scrubbed.text);
    }
    Ok(Exit::Ok)
}

pub fn shapes(_as_json: bool) -> anyhow::Result<Exit> {
    Ok(Exit::Ok)
}
