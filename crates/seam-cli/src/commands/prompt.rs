//! `seam prompt [--json]`: the system prompt the model gets, generated from
//! the registry (the local tools and the gate's), and the action schema that
//! constrains its decoding.

use crate::context::Context;
use crate::exit::Exit;
use crate::output;

pub fn run(ctx: &Context, as_json: bool) -> anyhow::Result<Exit> {
    let registry = registry(ctx)?;
    let prompt = seam_agent::prompt::system_prompt(&registry);
    if as_json {
        output::json(&serde_json::json!({
            "prompt": prompt,
            "bytes": prompt.len(),
            "tools": registry.names(),
            "action_schema": registry.action_schema(),
            "openai_tools": seam_agent::prompt::openai_tools_json(&registry),
        }));
    } else {
        output::text_ln(&prompt);
    }
    Ok(Exit::Ok)
}

/// The registry as `seam ask` builds it, with the gate's tools taken from
/// this binary's own toolbox (no gate needs to run to show the prompt).
pub fn registry(ctx: &Context) -> anyhow::Result<seam_agent::registry::Registry> {
    let toolbox = super::invoke::toolbox_with(
        ctx,
        seam_gate::ToolboxConfig::default().files_read_max_bytes,
        std::sync::Arc::new(seam_gate::NoLedger),
    )?;
    Ok(seam_agent::registry::Registry::new(
        seam_local::tool_specs(),
        toolbox.specs(),
    )?)
}
