//! `seam invoke TOOL PARAMS_JSON`: one call through `Toolbox::call`, in-process.

use std::io::Read;
use std::sync::Arc;

use anyhow::Context as _;
use seam_gate::{CallRequest, NoLedger, Toolbox, ToolboxConfig};
use seam_protocol::Answer;

use crate::context::Context;
use crate::exit::{Exit, UsageError};
use crate::output;

pub fn toolbox(ctx: &Context, config: &ToolboxConfig) -> anyhow::Result<Toolbox> {
    let scrubber = Arc::new(seam_scrub::Scrubber::new());
    Toolbox::new(ctx.policy.clone(), scrubber, Arc::new(NoLedger), config)
        .context("building the toolbox")
}

pub fn run(
    ctx: &Context,
    tool: &str,
    params: &str,
    turn: Option<String>,
    read_limit: u64,
) -> anyhow::Result<Exit> {
    let text = if params == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .context("reading params from stdin")?;
        s
    } else {
        params.to_owned()
    };
    let params: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        UsageError(format!(
            "PARAMS_JSON is not valid JSON: {e} (give a JSON object, e.g. '{{\"path\": \"notes.txt\"}}')"
        ))
    })?;
    let config = ToolboxConfig {
        files_read_max_bytes: read_limit,
    };
    let toolbox = toolbox(ctx, &config)?;
    let answer = toolbox.call(CallRequest {
        tool: tool.to_owned(),
        params,
        turn,
    })?;
    output::json(&answer);
    Ok(match &answer {
        Answer::Envelope(_) => Exit::Ok,
        Answer::Refusal(r) if r.refused.code.is_invalid_input() => Exit::Usage,
        Answer::Refusal(_) => Exit::Refused,
    })
}
