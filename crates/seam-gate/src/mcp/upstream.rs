//! Upstream MCP servers, started over stdio and governed as tools named `<server>.<tool>`.
//!
//! [`start_upstreams`] starts every `[[mcp.upstream]]` (in parallel), lists its tools,
//! compares each definition with the accepted one kept in seam's home (first sight of a
//! server accepts what it shows), and turns each tool into an [`UpstreamTool`], a
//! [`GovernedTool`] like any other: the toolbox validates its params against the upstream's
//! schema (closed with `additionalProperties: false` everywhere), decides its capability,
//! admits every declared path, and scrubs, taints and records its result. What this module
//! adds, in `run`, before the upstream sees anything:
//!
//! - a definition that changed since it was accepted (or a tool the server did not have when
//!   it was accepted) is refused, naming what changed, until `seam mcp accept SERVER`; such a
//!   tool shows none of the upstream's new text (description or schema) to anyone;
//! - what the tool is ([`classify`](super::classify): read, egress, change) sets its taint,
//!   its egress and its decision; the toolbox applies that decision with the policy's (the
//!   stricter wins): `deny` refuses, `ask` waits at the consent desk (refused with nobody to ask);
//! - every declared path parameter is replaced by the real path the toolbox admitted, so the
//!   upstream opens the file seam decided about, not the name the model wrote.
//!
//! A tool whose schema has a path-like string anywhere (found by the toolbox's one schema
//! walk: through every combinator and `$ref`) without a declaration is withheld: it fails the
//! toolbox's own check (`check_decl`), never enters the toolbox, and the report says why. In
//! an upstream that reads files (see [`config`](super::config)), so is a tool with a string
//! the walk cannot classify, until `[mcp.upstream.params]` says what it is. A `file:` URI is
//! admitted as the path it names; in a tool that reads files, any other URI is refused.
//!
//! An upstream's tool names are its own text: a name that is not 1 to 64 of `A-Z a-z 0-9 _ . -`
//! (not starting with `.`), or that makes a governed name a built-in tool (or an earlier tool
//! of the same server) has, is refused for that tool only, and the report says why. An upstream
//! tool taints the turn (its result is content from outside) and one of a server declared
//! `egress = true` is closed in a tainted turn, like `web.search`, unless the config's
//! `effects` for the tool say otherwise.
//!
//! The module is in three parts: `process` (the upstream as a process: started, listed, called),
//! `govern` (what seam makes of each definition: its state, its name, its declaration) and
//! `tool` (the governed tool, and what its `run` does before the upstream sees a call).
//!
//! Confinement: an upstream runs with an empty environment (PATH, HOME, the locale, and the
//! variables its config takes from the keeper), `/` as its working directory, its stderr in
//! `<seam home>/mcp/<server>.log`, and is killed when the gate drops it.
//! TODO(sandbox): `seam-sandbox` runs one Python program to completion (code in, output
//! out); it cannot yet hold a long-lived process with open pipes, so upstreams that need no
//! network are not yet behind its walls (namespaces, Landlock, seccomp).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use seam_keeper::Keeper;
use seam_toolbox::GovernedTool;
pub use seam_toolbox::schema_walk::SchemaError;

use super::classify::ToolClass;
use super::config::{McpConfig, UpstreamConfig};
use super::fingerprint::{AcceptedDefinitions, DefinitionStatus, FingerprintError};

mod govern;
mod process;
mod tool;

pub use govern::{MAX_TOOL_NAME, check_tool_name, close_schema};
pub(crate) use process::ClientRuntime;
use process::start_one;
pub use tool::{UpstreamTool, declared_paths};

/// How long starting one upstream (spawn, initialize, list tools) may take, unless its
/// config says `start_timeout_s`.
pub const START_TIMEOUT: Duration = Duration::from_secs(20);

/// Why an upstream could not be used.
#[derive(Debug, thiserror::Error)]
pub enum UpstreamError {
    #[error("upstream {server:?}: {message}")]
    Start { server: String, message: String },
    #[error(transparent)]
    Definitions(#[from] FingerprintError),
    #[error("no [[mcp.upstream]] is named {name:?} in the config; the upstreams are: {known}")]
    UnknownServer { name: String, known: String },
}

/// What became of one upstream tool.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolState {
    /// Governed and callable.
    Governed,
    /// Its definition changed since it was accepted: calls are refused until accepted.
    Changed(Vec<String>),
    /// The server was accepted without this tool: calls are refused until accepted.
    New,
    /// Not in the toolbox: it breaks the toolbox's rules (e.g. an undeclared path).
    Withheld(String),
}

/// One upstream tool in the report.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolReport {
    /// `<server>.<tool>`.
    pub name: String,
    pub state: ToolState,
    /// What a governed tool is (its effects and decision); none for any other state.
    pub class: Option<ToolClass>,
    /// A governed tool's destination places, as the config declares them (`recipients`,
    /// `host of url`), and what a call naming none of them reaches.
    pub destinations: Vec<String>,
    pub none_named: seam_toolbox::NoneNamed,
}

/// One upstream in the report.
#[derive(Debug, Clone, PartialEq)]
pub struct UpstreamReport {
    pub server: String,
    /// `Err(why)` when it could not be started or listed: none of its tools are there.
    pub started: Result<(), String>,
    /// True when seam had never seen this server: every tool was accepted as it is now.
    pub first_sight: bool,
    pub tools: Vec<ToolReport>,
    /// Settings that point nowhere (a tool the config names that the server lacks).
    pub notes: Vec<String>,
}

/// The upstreams as started: their governed tools and what happened to each.
#[derive(Debug)]
pub struct Upstreams {
    /// Governed tools, to add to the toolbox (`Toolbox::with_tools`).
    pub tools: Vec<Box<dyn GovernedTool>>,
    pub reports: Vec<UpstreamReport>,
    /// Per started server, the calls sent to it (seam's own refusals never reach it).
    counters: Vec<(String, Arc<AtomicU64>)>,
}

impl Upstreams {
    /// How many calls `server` has been sent so far; `None` if it is not running.
    /// (Take the tools with `std::mem::take(&mut upstreams.tools)` to keep this.)
    pub fn calls_sent(&self, server: &str) -> Option<u64> {
        self.counters
            .iter()
            .find(|(name, _)| name == server)
            .map(|(_, n)| n.load(Ordering::Relaxed))
    }
}

/// Starts every upstream of `config` and governs its tools. An upstream that cannot start is
/// reported (its tools are missing) and the others go on.
pub fn start_upstreams(config: &McpConfig, seam_home: &Path, keeper: &Keeper) -> Upstreams {
    let mut out = Upstreams {
        tools: Vec::new(),
        reports: Vec::new(),
        counters: Vec::new(),
    };
    if config.upstreams.is_empty() {
        return out;
    }
    let runtime = match ClientRuntime::start() {
        Ok(r) => r,
        Err(e) => {
            for u in &config.upstreams {
                out.reports
                    .push(failed(u, format!("no runtime for MCP clients: {e}")));
            }
            return out;
        }
    };
    // Start them side by side: each start is mostly waiting for a process to come up.
    let started: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = config
            .upstreams
            .iter()
            .map(|u| s.spawn(|| start_one(&runtime, u, seam_home, keeper)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(UpstreamError::Start {
                        server: String::new(),
                        message: "its start panicked".into(),
                    })
                })
            })
            .collect()
    });
    for (cfg, result) in config.upstreams.iter().zip(started) {
        if let Ok((server, _)) = &result {
            out.counters.push((cfg.name.clone(), server.sent.clone()));
        }
        match result.and_then(|(server, defs)| govern::govern(cfg, server, defs, seam_home)) {
            Ok((tools, report)) => {
                out.tools.extend(tools);
                out.reports.push(report);
            }
            Err(e) => out.reports.push(failed(cfg, e.to_string())),
        }
    }
    out
}

fn failed(cfg: &UpstreamConfig, why: String) -> UpstreamReport {
    UpstreamReport {
        server: cfg.name.clone(),
        started: Err(why),
        first_sight: false,
        tools: Vec::new(),
        notes: Vec::new(),
    }
}

/// Accepts every tool definition `server` shows now (`seam mcp accept SERVER`). Returns the
/// report of what was pending before, then accepted.
pub fn accept_upstream(
    config: &McpConfig,
    server: &str,
    seam_home: &Path,
    keeper: &Keeper,
) -> Result<UpstreamReport, UpstreamError> {
    let Some(cfg) = config.upstreams.iter().find(|u| u.name == server) else {
        let known: Vec<&str> = config.upstreams.iter().map(|u| u.name.as_str()).collect();
        return Err(UpstreamError::UnknownServer {
            name: server.to_owned(),
            known: if known.is_empty() {
                "(none configured)".to_owned()
            } else {
                known.join(", ")
            },
        });
    };
    let runtime = ClientRuntime::start().map_err(|e| UpstreamError::Start {
        server: server.to_owned(),
        message: format!("no runtime for MCP clients: {e}"),
    })?;
    let (upstream, defs) = start_one(&runtime, cfg, seam_home, keeper)?;
    let before = AcceptedDefinitions::load(seam_home, server)?;
    let tools = defs
        .iter()
        .map(|d| ToolReport {
            name: format!("{server}.{}", d.name),
            state: match before.as_ref().map(|b| b.status(d)) {
                None | Some(DefinitionStatus::Accepted) => ToolState::Governed,
                Some(DefinitionStatus::Changed { changes, .. }) => ToolState::Changed(changes),
                Some(DefinitionStatus::New) => ToolState::New,
            },
            class: None,
            destinations: Vec::new(),
            none_named: Default::default(),
        })
        .collect();
    AcceptedDefinitions::from_definitions(server, &defs).save(seam_home)?;
    drop(upstream);
    Ok(UpstreamReport {
        server: server.to_owned(),
        started: Ok(()),
        first_sight: before.is_none(),
        tools,
        notes: Vec::new(),
    })
}
