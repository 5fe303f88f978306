//! `seam tools [--json]`: the governed tools' specs.

use serde_json::Value;

use crate::context::Context;
use crate::exit::Exit;
use crate::output;

pub fn run(ctx: &Context, as_json: bool) -> anyhow::Result<Exit> {
    // Listing tools calls none: no ledger needed.
    let toolbox = super::invoke::toolbox_with(
        ctx,
        seam_gate::ToolboxConfig::default().files_read_max_bytes,
        std::sync::Arc::new(seam_gate::NoLedger),
    )?;
    let specs = toolbox.specs();
    if as_json {
        output::json(&specs);
        return Ok(Exit::Ok);
    }
    // An upstream's names and descriptions are its own text: each is shown on one line.
    let one = |t: &str| seam_term::on_one_line(t.as_bytes());
    let mut text = String::new();
    for spec in &specs {
        text.push_str(&format!(
            "{} (v{})  {}\n",
            one(&spec.name),
            one(&spec.version),
            one(&spec.description)
        ));
        let required: Vec<&str> = spec
            .input_schema
            .get("required")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if let Some(props) = spec
            .input_schema
            .get("properties")
            .and_then(Value::as_object)
        {
            for (name, p) in props {
                let ty = p.get("type").and_then(Value::as_str).unwrap_or("any");
                let opt = if required.contains(&name.as_str()) {
                    ""
                } else {
                    "?"
                };
                let desc = p.get("description").and_then(Value::as_str).unwrap_or("");
                text.push_str(&format!(
                    "    {}{opt}: {}  {}\n",
                    one(name),
                    one(ty),
                    one(desc)
                ));
            }
        }
    }
    output::text(&text);
    Ok(Exit::Ok)
}
