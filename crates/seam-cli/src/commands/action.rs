//! `seam action parse`: raw model text on stdin to one canonical action, with
//! the repairs it took (seam-action), printed as JSON.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use seam_action::{MAX_REPLY_BYTES, ToolCatalog, parse};
use seam_agent::registry::Registry;
use seam_gate::ToolboxConfig;
use seam_policy::{Policy, PolicyEnv};

use crate::cli::ActionCommand;
use crate::exit::{Exit, UsageError};
use crate::output;

/// The names `seam action parse` resolves against by default: the tools of the
/// registry `seam ask` builds, the gate's built-in governed tools and the
/// agent's local ones (DESIGN.md), read from their specs so a new tool is here
/// the day it is declared. Names only, so no schema repairs apply here; the
/// agent parses against the real specs. No upstream MCP tool: those come with a
/// gate's config, and this command reads none.
fn registry_tools() -> anyhow::Result<Vec<String>> {
    // The gate's tools are built only to read their declarations. A tool's name does not
    // depend on where seam's home or the workspace is, so no policy file is read for them
    // (this command needs no home) and the places are left empty.
    let policy = Policy::builtin(PolicyEnv {
        owner_home: PathBuf::new(),
        seam_home: PathBuf::new(),
        workspace_root: PathBuf::new(),
    });
    let governed = seam_gate::tools::builtin(&ToolboxConfig::default(), &policy)
        .iter()
        .map(|t| t.decl().spec())
        .collect();
    let registry = Registry::new(seam_local::tool_specs(), governed)?;
    Ok(registry.names().into_iter().map(str::to_owned).collect())
}

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
        (None, None) => ToolCatalog::from_names(registry_tools()?),
    };
    match parse(&text, &catalog) {
        Ok(parsed) => {
            output::json(&parsed);
            Ok(Exit::Ok)
        }
        Err(e) => Err(UsageError(format!("no action recovered: {e}")).into()),
    }
}
