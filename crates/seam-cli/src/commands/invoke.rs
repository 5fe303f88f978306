//! `seam invoke TOOL PARAMS_JSON`: one call through `Toolbox::call`, in-process.

use std::io::Read;
use std::sync::Arc;

use anyhow::Context as _;
use seam_gate::{CallRequest, Gate, LedgerHook, Toolbox, ToolboxConfig};
use seam_protocol::Answer;

use crate::context::Context;
use crate::exit::{Exit, UsageError};
use crate::output;

/// The toolbox as the gate runs it, recording into the signed ledger in
/// seam's home (made on first use).
pub fn toolbox(ctx: &Context, files_read_max_bytes: u64) -> anyhow::Result<Toolbox> {
    let ledger: Arc<dyn LedgerHook> = Arc::new(ctx.open_ledger()?);
    toolbox_with(ctx, files_read_max_bytes, ledger)
}

/// The gate of this home opened through its one entry point (`seam_gate::Gate::open`: keeper,
/// scrubber with its values, tools, upstream MCP servers), the operator told on stderr what
/// became of each upstream.
pub fn toolbox_with(
    ctx: &Context,
    files_read_max_bytes: u64,
    ledger: Arc<dyn LedgerHook>,
) -> anyhow::Result<Toolbox> {
    let gate = Gate::open(
        &ctx.seam_home,
        ctx.policy.clone(),
        &ctx.config,
        ledger,
        files_read_max_bytes,
    )
    .map_err(super::secret::gate_open_error)?;
    super::mcp::tell_upstreams(&gate.upstreams);
    Ok(gate.toolbox)
}

pub fn run(
    ctx: &Context,
    tool: &str,
    params: &str,
    turn: Option<String>,
    read_limit: u64,
) -> anyhow::Result<Exit> {
    let params = read_params(params)?;
    let toolbox = toolbox(ctx, read_limit)?;
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

/// The crash test's child: many threads calling one tool until the process is
/// killed. An id is printed only after `Toolbox::call` returned, i.e. after
/// the ledger made its record durable.
pub fn invoke_loop(
    ctx: &Context,
    tool: &str,
    params: &str,
    threads: usize,
) -> anyhow::Result<Exit> {
    let params: serde_json::Value = serde_json::from_str(params)
        .map_err(|e| UsageError(format!("PARAMS_JSON is not valid JSON: {e}")))?;
    let toolbox = Arc::new(toolbox(ctx, ToolboxConfig::default().files_read_max_bytes)?);
    let workers: Vec<_> = (0..threads.max(1))
        .map(|_| {
            let (toolbox, tool, params) = (toolbox.clone(), tool.to_owned(), params.clone());
            std::thread::spawn(move || -> anyhow::Result<()> {
                loop {
                    let answer = toolbox.call(CallRequest {
                        tool: tool.clone(),
                        params: params.clone(),
                        turn: None,
                    })?;
                    output::line(answer.invocation_id());
                }
            })
        })
        .collect();
    for w in workers {
        w.join()
            .map_err(|_| anyhow::anyhow!("an invoke thread panicked"))??;
    }
    Ok(Exit::Ok)
}

/// `seam invoke`'s PARAMS_JSON: the argument itself, or stdin when it is `-`.
pub fn read_params(params: &str) -> anyhow::Result<serde_json::Value> {
    let text = if params == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .context("reading params from stdin")?;
        s
    } else {
        params.to_owned()
    };
    serde_json::from_str(&text).map_err(|e| {
        UsageError(format!(
            "PARAMS_JSON is not valid JSON: {e} (give a JSON object, e.g. '{{\"path\": \"notes.txt\"}}')"
        ))
    })
    .map_err(Into::into)
}
