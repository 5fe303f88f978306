//! `seam action parse`: raw model text on stdin to one canonical action, with
//! the repairs it took (seam-action), printed as JSON.

use std::io::Read;
use std::path::Path;

use anyhow::Context as _;
use seam_action::{MAX_REPLY_BYTES, ToolCatalog, parse};

use crate::cli::ActionCommand;
use crate::exit::{Exit, UsageError};
use crate::output;

/// The registry's 15 tools, the names `seam action parse` resolves against by
/// default: the gate's 8 governed tools and the agent's 7 local ones
/// (DESIGN.md). Names only, so no schema repairs apply here; the agent parses
/// against the real specs.
pub const REGISTRY_TOOLS: [&str; 15] = [
    "web.search",
    "web.fetch",
    "files.read",
    "python.run",
    "memory.codebase",
    "memory.build",
    "memory.operator",
    "facts.get",
    "builder",
    "scribe",
    "context",
    "graph",
    "seer",
    "aesthesis",
    "image",
];

pub fn run(cmd: ActionCommand) -> anyhow::Result<Exit> {
    match cmd {
        ActionCommand::Parse { tools, catalog } => parse_stdin(tools, catalog.as_deref()),
    }
}

/// The catalog a `--catalog` file describes; a bad file is a usage error
/// that names the file and what was wrong with it.
fn catalog_file(path: &Path) -> Result<ToolCatalog, UsageError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| UsageError(format!("--catalog {}: cannot read it: {e}", path.display())))?;
    ToolCatalog::from_json(&text)
        .map_err(|e| UsageError(format!("--catalog {}: {e}", path.display())))
}

fn parse_stdin(tools: Option<Vec<String>>, catalog: Option<&Path>) -> anyhow::Result<Exit> {
    // The catalog first: a bad file is reported before stdin is waited on.
    let from_file = catalog.map(catalog_file).transpose()?;
    let mut raw = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_REPLY_BYTES as u64 + 1)
        .read_to_end(&mut raw)
        .context("reading stdin")?;
    if raw.len() > MAX_REPLY_BYTES {
        return Err(UsageError(format!(
            "stdin holds more than {MAX_REPLY_BYTES} bytes; a model reply that long is not parsed"
        ))
        .into());
    }
    let text = String::from_utf8(raw).map_err(|e| {
        UsageError(format!(
            "stdin is not UTF-8 (at byte {})",
            e.utf8_error().valid_up_to()
        ))
    })?;
    let catalog = match (from_file, tools) {
        (Some(c), _) => c,
        (None, Some(names)) => ToolCatalog::from_names(
            names
                .iter()
                .map(|n| n.trim())
                .filter(|n| !n.is_empty())
                .map(str::to_owned)
                .collect::<Vec<_>>(),
        ),
        (None, None) => ToolCatalog::from_names(REGISTRY_TOOLS),
    };
    match parse(&text, &catalog) {
        Ok(parsed) => {
            output::json(&parsed);
            Ok(Exit::Ok)
        }
        Err(e) => Err(UsageError(format!("no action recovered: {e}")).into()),
    }
}
