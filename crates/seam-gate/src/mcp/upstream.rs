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
//! Confinement: an upstream runs with an empty environment (PATH, HOME, the locale, and the
//! variables its config takes from the keeper), `/` as its working directory, its stderr in
//! `<seam home>/mcp/<server>.log`, and is killed when the gate drops it.
//! TODO(sandbox): `seam-sandbox` runs one Python program to completion (code in, output
//! out); it cannot yet hold a long-lived process with open pipes, so upstreams that need no
//! network are not yet behind its walls (namespaces, Landlock, seccomp).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::{RoleClient, RunningService, ServiceExt};
use rmcp::transport::TokioChildProcess;
use seam_keeper::Keeper;
use seam_policy::{Capability, Decision, FileAccess};
use seam_protocol::RefusalCode;
use serde_json::Value;

use super::classify::{ToolClass, ToolHints, classify};
use super::config::{McpConfig, ParamUse, UpstreamConfig};
use super::fingerprint::{AcceptedDefinitions, DefinitionStatus, FingerprintError, ToolDefinition};
pub use seam_toolbox::schema_walk::SchemaError;
use seam_toolbox::schema_walk::{self, LeafKind, location_text, parse_location};
use seam_toolbox::{
    Admitted, DestinationParam, GateError, GovernedTool, PathParam, ToolCall, ToolDecl,
    ToolFailure, check_decl_with,
};

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

/// A tokio runtime on a thread of its own, for the upstream clients. The gate's calls are
/// synchronous (`GovernedTool::run`), so a call hands its future to this runtime and waits.
/// Dropping the last holder stops the runtime on its own thread (never inside another runtime).
#[derive(Debug)]
pub(crate) struct ClientRuntime {
    handle: tokio::runtime::Handle,
    stop: std::sync::Mutex<Option<tokio::sync::oneshot::Sender<()>>>,
}

impl ClientRuntime {
    pub(crate) fn start() -> std::io::Result<Arc<ClientRuntime>> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("seam-mcp-upstream")
            .enable_all()
            .build()?;
        let handle = rt.handle().clone();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        std::thread::Builder::new()
            .name("seam-mcp-runtime".into())
            .spawn(move || {
                rt.block_on(async {
                    let _ = rx.await;
                });
                rt.shutdown_timeout(Duration::from_secs(2));
            })?;
        Ok(Arc::new(ClientRuntime {
            handle,
            stop: std::sync::Mutex::new(Some(tx)),
        }))
    }

    /// Runs `fut` on the runtime and waits for it from this (non-async) thread.
    pub(crate) fn wait<T: Send + 'static>(
        &self,
        fut: impl std::future::Future<Output = T> + Send + 'static,
    ) -> Option<T> {
        let (tx, rx) = std::sync::mpsc::channel();
        self.handle.spawn(async move {
            let _ = tx.send(fut.await);
        });
        rx.recv().ok()
    }
}

impl Drop for ClientRuntime {
    fn drop(&mut self) {
        if let Some(tx) = self.stop.lock().ok().and_then(|mut s| s.take()) {
            let _ = tx.send(());
        }
    }
}

/// One running upstream server.
#[derive(Debug)]
pub(crate) struct UpstreamServer {
    name: String,
    timeout: Duration,
    client: RunningService<RoleClient, ()>,
    /// Calls sent to the upstream (not counting refusals seam made first).
    sent: Arc<AtomicU64>,
    /// Declared last, dropped last: the client is cancelled while its runtime still runs.
    runtime: Arc<ClientRuntime>,
}

impl UpstreamServer {
    fn call(&self, tool: &str, args: JsonObject) -> Result<CallToolResult, String> {
        let peer = self.client.peer().clone();
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(args);
        let timeout = self.timeout;
        self.sent.fetch_add(1, Ordering::Relaxed);
        let answer = self
            .runtime
            .wait(async move { tokio::time::timeout(timeout, peer.call_tool(params)).await })
            .ok_or_else(|| "the upstream's runtime stopped".to_owned())?;
        match answer {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(e)) => Err(format!("the upstream server {:?} failed: {e}", self.name)),
            Err(_) => Err(format!(
                "the upstream server {:?} did not answer within {} s",
                self.name,
                timeout.as_secs_f64()
            )),
        }
    }
}

/// The environment an upstream starts with: nothing of the gate's but these.
const PASSED_ENV: &[&str] = &["PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ"];

fn resolve_env(
    cfg: &UpstreamConfig,
    keeper: &Keeper,
) -> Result<Vec<(String, String)>, UpstreamError> {
    let mut env: Vec<(String, String)> = PASSED_ENV
        .iter()
        .filter_map(|k| std::env::var(k).ok().map(|v| ((*k).to_owned(), v)))
        .collect();
    for (var, handle) in &cfg.env {
        let value = keeper.resolve(handle).map_err(|e| UpstreamError::Start {
            server: cfg.name.clone(),
            message: format!("its env {var} is {handle}, and {e}"),
        })?;
        env.push((var.clone(), value.expose().to_owned()));
    }
    Ok(env)
}

fn stderr_log(seam_home: &Path, server: &str) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let dir = seam_home.join("mcp");
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)?;
    std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(dir.join(format!("{server}.log")))
}

/// Starts one upstream and lists its tools.
async fn connect(
    cfg: UpstreamConfig,
    env: Vec<(String, String)>,
    log: std::fs::File,
) -> Result<(RunningService<RoleClient, ()>, Vec<ToolDefinition>), String> {
    let start_timeout = cfg.start_timeout;
    let mut cmd = tokio::process::Command::new(&cfg.command);
    cmd.args(&cfg.args)
        .env_clear()
        .envs(env)
        .current_dir("/")
        .kill_on_drop(true);
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(log)
        .spawn()
        .map_err(|e| format!("cannot start {:?}: {e}", cfg.command))?;
    let work = async move {
        let client = ().serve(transport).await.map_err(|e| {
            format!(
                "{:?} did not complete the MCP handshake: {e} (its stderr is in seam's \
                 home, mcp/{}.log)",
                cfg.command, cfg.name
            )
        })?;
        let tools = client
            .list_all_tools()
            .await
            .map_err(|e| format!("listing its tools failed: {e}"))?;
        let defs = tools
            .into_iter()
            .map(|t| ToolDefinition {
                name: t.name.to_string(),
                description: t.description.map(|d| d.to_string()),
                input_schema: Value::Object((*t.input_schema).clone()),
                hints: t.annotations.and_then(|a| {
                    ToolHints {
                        read_only: a.read_only_hint,
                        destructive: a.destructive_hint,
                        open_world: a.open_world_hint,
                    }
                    .nonempty()
                }),
            })
            .collect();
        Ok((client, defs))
    };
    tokio::time::timeout(start_timeout, work)
        .await
        .map_err(|_| {
            format!(
                "no answer within {} s (its start_timeout_s)",
                start_timeout.as_secs_f64()
            )
        })?
}

/// Starts `cfg`'s server and returns its client and current definitions.
fn start_one(
    runtime: &Arc<ClientRuntime>,
    cfg: &UpstreamConfig,
    seam_home: &Path,
    keeper: &Keeper,
) -> Result<(Arc<UpstreamServer>, Vec<ToolDefinition>), UpstreamError> {
    let start_error = |message: String| UpstreamError::Start {
        server: cfg.name.clone(),
        message,
    };
    let env = resolve_env(cfg, keeper)?;
    let log = stderr_log(seam_home, &cfg.name)
        .map_err(|e| start_error(format!("cannot open its log in seam's home: {e}")))?;
    let (client, defs) = runtime
        .wait(connect(cfg.clone(), env, log))
        .ok_or_else(|| start_error("the upstream runtime stopped".into()))?
        .map_err(start_error)?;
    let server = Arc::new(UpstreamServer {
        name: cfg.name.clone(),
        timeout: cfg.timeout,
        client,
        sent: Arc::new(AtomicU64::new(0)),
        runtime: runtime.clone(),
    });
    Ok((server, defs))
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
        match result.and_then(|(server, defs)| govern(cfg, server, defs, seam_home)) {
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

fn leak(s: String) -> &'static str {
    // Upstream tools are declared once, when the toolbox is built; a declaration names
    // itself with `&'static str` like every built-in tool.
    Box::leak(s.into_boxed_str())
}

/// The upstream's first line of description, for the model's prompt (at most 240 chars).
fn one_line(description: Option<&str>) -> String {
    let first = description
        .unwrap_or("")
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let clean: String = first
        .chars()
        .filter(|c| !c.is_control())
        .take(240)
        .collect();
    if clean.is_empty() {
        "(the upstream gave no description)".to_owned()
    } else {
        clean
    }
}

/// `schema` with `additionalProperties: false` on every object schema, as the toolbox
/// requires: a parameter the upstream would take but did not declare is refused by seam.
/// (The toolbox's one schema walk: every combinator, `$defs` and `$ref`.)
pub fn close_schema(schema: &mut Value) -> Result<(), SchemaError> {
    schema_walk::close_schema(schema)
}

/// The most bytes an upstream's tool name may have.
pub const MAX_TOOL_NAME: usize = 64;

/// An upstream's tool name: 1 to 64 of `A-Z a-z 0-9 _ . -`, not starting with a dot.
pub fn check_tool_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("the name is empty".to_owned());
    }
    if name.len() > MAX_TOOL_NAME {
        return Err(format!(
            "the name is {} bytes long, more than the {MAX_TOOL_NAME} a tool name may have",
            name.len()
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
    {
        return Err(format!(
            "the name has the character {:?}; a tool name is made of A-Z, a-z, 0-9, '_', '.' \
             and '-'",
            c
        ));
    }
    if name.starts_with('.') {
        return Err("the name starts with '.'".to_owned());
    }
    Ok(())
}

/// Does this upstream read files? Its config says, or: a path declared for any of its tools,
/// or a path-like string in any of its tools' schemas.
fn reads_files(cfg: &UpstreamConfig, defs: &[ToolDefinition]) -> bool {
    if let Some(said) = cfg.reads_files {
        return said;
    }
    let declared = cfg.tools.values().any(|t| !t.paths.is_empty())
        || cfg
            .params
            .values()
            .flat_map(|m| m.values())
            .any(|u| matches!(u, ParamUse::Path(_)));
    declared
        || defs.iter().any(|d| {
            schema_walk::leaves(&d.input_schema)
                .map(|ls| ls.iter().any(|l| l.kind == LeafKind::Path))
                // a schema seam cannot walk: count it as one that may name files
                .unwrap_or(true)
        })
}

/// Compares `defs` with the accepted ones and makes the governed tools.
fn govern(
    cfg: &UpstreamConfig,
    server: Arc<UpstreamServer>,
    defs: Vec<ToolDefinition>,
    seam_home: &Path,
) -> Result<(Vec<Box<dyn GovernedTool>>, UpstreamReport), UpstreamError> {
    let accepted = AcceptedDefinitions::load(seam_home, &cfg.name)?;
    let first_sight = accepted.is_none();
    let accepted = match accepted {
        Some(a) => a,
        None => {
            let a = AcceptedDefinitions::from_definitions(&cfg.name, &defs);
            a.save(seam_home)?;
            a
        }
    };
    let mut tools: Vec<Box<dyn GovernedTool>> = Vec::new();
    let mut report = UpstreamReport {
        server: cfg.name.clone(),
        started: Ok(()),
        first_sight,
        tools: Vec::new(),
        notes: Vec::new(),
    };
    for name in cfg.tools.keys() {
        if !defs.iter().any(|d| &d.name == name) {
            // names are compared exactly: an entry for another spelling classifies nothing
            let near = defs
                .iter()
                .find(|d| d.name.trim().eq_ignore_ascii_case(name.trim()))
                .map(|d| {
                    format!(
                        " (it has {:?}: names are compared exactly, so that tool gets the \
                         server's class)",
                        d.name
                    )
                })
                .unwrap_or_default();
            report.notes.push(format!(
                "the config has [mcp.upstream.tools.{name}], and {:?} has no tool of that \
                 name{near}",
                cfg.name
            ));
        }
    }
    let files = reads_files(cfg, &defs);
    let mut taken: Vec<String> = Vec::new();
    for def in defs {
        let governed = format!("{}.{}", cfg.name, def.name);
        let refused_name = check_tool_name(&def.name)
            .err()
            .or_else(|| {
                crate::tools::BUILTIN_TOOL_NAMES
                    .contains(&governed.as_str())
                    .then(|| {
                        format!(
                            "its governed name {governed} is the name of a built-in tool; the \
                         built-in keeps it"
                        )
                    })
            })
            .or_else(|| {
                taken.contains(&governed).then(|| {
                    format!(
                        "{:?} lists two tools named {governed}; the first keeps the name",
                        cfg.name
                    )
                })
            });
        if let Some(why) = refused_name {
            report.tools.push(ToolReport {
                name: governed,
                state: ToolState::Withheld(format!("its name is refused: {why}")),
                class: None,
                destinations: Vec::new(),
                none_named: Default::default(),
            });
            continue;
        }
        taken.push(governed.clone());
        let status = accepted.status(&def);
        let (tool, state) = match status {
            DefinitionStatus::Accepted => match governed_tool(cfg, &server, &def, files) {
                Ok(t) => (Some(t), ToolState::Governed),
                Err(why) => (None, ToolState::Withheld(why)),
            },
            DefinitionStatus::Changed { changes, .. } => (
                Some(pending_tool(
                    cfg,
                    &server,
                    &def,
                    Pending::Changed(changes.clone()),
                )),
                ToolState::Changed(changes),
            ),
            DefinitionStatus::New => (
                Some(pending_tool(cfg, &server, &def, Pending::New)),
                ToolState::New,
            ),
        };
        let class =
            (state == ToolState::Governed).then(|| classify(cfg, &def.name, def.hints.as_ref()));
        if let Some(t) = tool {
            tools.push(Box::new(t));
        }
        let declared = cfg.tools.get(&def.name).filter(|_| class.is_some());
        report.tools.push(ToolReport {
            name: governed,
            state,
            class,
            destinations: declared
                .map(|t| {
                    t.destinations
                        .iter()
                        .map(|(place, form)| match form {
                            seam_toolbox::DestinationForm::Value => place.clone(),
                            seam_toolbox::DestinationForm::UrlHost => format!("host of {place}"),
                        })
                        .collect()
                })
                .unwrap_or_default(),
            none_named: declared.map(|t| t.none_named).unwrap_or_default(),
        });
    }
    Ok((tools, report))
}

#[derive(Debug, Clone)]
enum Pending {
    Changed(Vec<String>),
    New,
}

fn governed_tool(
    cfg: &UpstreamConfig,
    server: &Arc<UpstreamServer>,
    def: &ToolDefinition,
    reads_files: bool,
) -> Result<UpstreamTool, String> {
    let mut schema = def.input_schema.clone();
    close_schema(&mut schema).map_err(|e| format!("its input schema cannot be governed: {e}"))?;
    // What the config says of each place: `tools.X.paths` (top-level) and `params` ("X/PLACE").
    let mut declared: BTreeMap<Vec<String>, ParamUse> = BTreeMap::new();
    if let Some(t) = cfg.tools.get(&def.name) {
        for (field, access) in &t.paths {
            declared.insert(vec![field.clone()], ParamUse::Path(*access));
        }
    }
    if let Some(places) = cfg.params.get(&def.name) {
        for (place, u) in places {
            declared.insert(parse_location(place), *u);
        }
    }
    let mut leaves = schema_walk::leaves(&schema)
        .map_err(|e| format!("its input schema cannot be governed: {e}"))?;
    // A path-like place is named first: it is the one most worth the operator's word.
    leaves.sort_by_key(|l| l.kind);
    let mut implicit_uris = Vec::new();
    for leaf in &leaves {
        let covered = declared.keys().any(|d| {
            d.len() <= leaf.location.len() && d.iter().zip(&leaf.location).all(|(a, b)| a == b)
        });
        if covered {
            continue;
        }
        let place = location_text(&leaf.location);
        let key = format!("\"{}/{place}\"", def.name);
        let (what, suggested) = match (leaf.kind, reads_files) {
            (LeafKind::Path, _) => ("looks like a path", "\"path-read\""),
            (LeafKind::Uri, true) => (
                "is a URI (a file: one names a path) and the upstream reads files",
                "\"path-read\"",
            ),
            (LeafKind::Uri, false) => {
                // An upstream that reads no files: a file: URI here is still admitted (read)
                // first, and any other URI goes through as it is.
                implicit_uris.push(place);
                continue;
            }
            (LeafKind::Unclassified, true) => (
                "is a string seam cannot classify (it may name a file) and the upstream reads \
                 files",
                "\"not-a-path\"",
            ),
            (LeafKind::Unclassified, false) => continue,
        };
        return Err(format!(
            "its parameter at /{place} {what}, and the config says nothing of it: add \
             [mcp.upstream.params] {key} = {suggested} (one of \"path-read\", \"path-write\", \
             \"path-source\", \"not-a-path\") to [[mcp.upstream]] {:?}",
            cfg.name
        ));
    }
    let mut paths: Vec<PathParam> = declared
        .iter()
        .filter_map(|(place, u)| match u {
            ParamUse::Path(access) => Some(PathParam {
                field: leak(location_text(place)),
                access: *access,
            }),
            ParamUse::NotAPath => None,
        })
        .collect();
    paths.extend(implicit_uris.into_iter().map(|place| PathParam {
        field: leak(place),
        access: seam_policy::Access::Owner(FileAccess::Read),
    }));
    let not_paths: Vec<String> = declared
        .iter()
        .filter(|(_, u)| **u == ParamUse::NotAPath)
        .map(|(place, _)| location_text(place))
        .collect();
    let writes = paths
        .iter()
        .any(|p| p.access == seam_policy::Access::Owner(FileAccess::Write));
    // What the tool is: policy (classify), from the config, else the server and its hints.
    let class = classify(cfg, &def.name, def.hints.as_ref());
    let decl = ToolDecl {
        name: leak(format!("{}.{}", cfg.name, def.name)),
        version: leak(format!("mcp-{}", &def.fingerprint()[..12])),
        description: leak(one_line(def.description.as_deref())),
        schema,
        capability: base_capability(class.egress(), writes),
        reads: !(writes || class.changes()),
        paths,
        taints: class.reads(),
        egress: class.egress(),
        // where its data goes, as the config says (the toolbox checks each is a place of the
        // schema, and that the tool has egress)
        destinations: cfg
            .tools
            .get(&def.name)
            .map(|t| {
                t.destinations
                    .iter()
                    .map(|(place, form)| DestinationParam {
                        field: leak(place.clone()),
                        form: *form,
                    })
                    .collect()
            })
            .unwrap_or_default(),
        // what a call naming none of them reaches, as the config says (else nobody knows)
        none_named: cfg
            .tools
            .get(&def.name)
            .map(|t| t.none_named)
            .unwrap_or_default(),
    };
    match check_decl_with(&decl, &not_paths) {
        Ok(()) => {}
        Err(GateError::UndeclaredPath { field, .. }) => {
            return Err(format!(
                "its parameter at /{field} looks like a path and the config declares no access \
                 for it: add [mcp.upstream.params] \"{}/{field}\" = \"path-read\" (or \
                 \"path-write\", \"path-source\", \"not-a-path\")",
                def.name
            ));
        }
        Err(e) => return Err(e.to_string()),
    }
    if let Err(e) = jsonschema::validator_for(&decl.schema) {
        return Err(format!("its input schema does not compile: {e}"));
    }
    Ok(UpstreamTool {
        decl,
        upstream_name: def.name.clone(),
        decision: class.decision,
        pending: None,
        server: server.clone(),
        not_paths,
        reads_files,
    })
}

/// A tool whose definition is not accepted: it shows none of the upstream's text, takes any
/// params, and refuses every call with what changed.
fn pending_tool(
    cfg: &UpstreamConfig,
    server: &Arc<UpstreamServer>,
    def: &ToolDefinition,
    pending: Pending,
) -> UpstreamTool {
    let what = match &pending {
        Pending::Changed(_) => "changed since it was accepted",
        Pending::New => "new since the server was accepted",
    };
    let decl = ToolDecl {
        name: leak(format!("{}.{}", cfg.name, def.name)),
        version: leak(format!("mcp-{}", &def.fingerprint()[..12])),
        description: leak(format!(
            "(refused: this upstream tool's definition is {what}; the operator can review \
             and accept it with `seam mcp accept {}`)",
            cfg.name
        )),
        schema: serde_json::json!({}),
        capability: base_capability(cfg.egress, false),
        reads: true,
        paths: Vec::new(),
        taints: true,
        egress: cfg.egress,
        destinations: Vec::new(),
        none_named: crate::NoneNamed::Unknown,
    };
    UpstreamTool {
        decl,
        upstream_name: def.name.clone(),
        decision: Decision::Deny,
        pending: Some(pending),
        server: server.clone(),
        not_paths: Vec::new(),
        reads_files: true,
    }
}

/// The policy capability an upstream tool is also held to (the policy's capabilities are a
/// fixed list; the server's own decision comes from the config on top of it): a server that
/// reaches the network answers to `web.search`, a tool that writes to `filesystem.write`,
/// anything else to `filesystem.read` (an upstream's result is outside content read in).
fn base_capability(egress: bool, writes: bool) -> Capability {
    if egress {
        Capability::WebSearch
    } else if writes {
        Capability::FilesystemWrite
    } else {
        Capability::FilesystemRead
    }
}

/// One upstream MCP tool, governed.
#[derive(Debug)]
pub struct UpstreamTool {
    decl: ToolDecl,
    upstream_name: String,
    decision: Decision,
    pending: Option<Pending>,
    server: Arc<UpstreamServer>,
    /// Places the config declares are not paths.
    not_paths: Vec<String>,
    /// The upstream reads files: no `file:` URI reaches it except one seam admitted.
    reads_files: bool,
}

impl UpstreamTool {
    /// Calls this tool's server has been sent so far (seam's own refusals not counted).
    pub fn calls_sent(&self) -> u64 {
        self.server.sent.load(Ordering::Relaxed)
    }
}

impl GovernedTool for UpstreamTool {
    fn decl(&self) -> &ToolDecl {
        &self.decl
    }

    fn not_paths(&self) -> &[String] {
        &self.not_paths
    }

    fn config_decision(&self) -> Option<Decision> {
        // a tool whose definition is not accepted refuses in `run`, saying why
        self.pending.is_none().then_some(self.decision)
    }

    fn takes_non_file_uris(&self) -> bool {
        !self.reads_files
    }

    fn run(&self, mut call: ToolCall) -> Result<Value, ToolFailure> {
        let server = &self.server.name;
        match &self.pending {
            Some(Pending::Changed(changes)) => {
                return Err(ToolFailure::new(
                    RefusalCode::CapabilityDenied,
                    format!(
                        "the definition of {} changed since it was accepted ({}); its calls \
                         are refused until the operator reviews and accepts it with `seam mcp \
                         accept {server}`",
                        self.decl.name,
                        changes.join(", ")
                    ),
                ));
            }
            Some(Pending::New) => {
                return Err(ToolFailure::new(
                    RefusalCode::CapabilityDenied,
                    format!(
                        "{} is a tool {server:?} did not have when it was accepted; its calls \
                         are refused until the operator accepts it with `seam mcp accept {server}`",
                        self.decl.name
                    ),
                ));
            }
            None => {}
        }
        let mut args = call.params().clone();
        let admitted = call.take_all_admitted();
        // No file: URI reaches an upstream that reads files unless seam admitted it.
        if self.reads_files
            && let Some(place) = file_uri_outside(&args, &admitted)
        {
            return Err(ToolFailure::new(
                RefusalCode::InvalidPath,
                format!(
                    "{} holds a file: URI at /{place}, a place declared not to be a path; \
                     {server:?} reads files, so it gets no file: URI seam did not admit",
                    self.decl.name
                ),
            ));
        }
        // The upstream gets the real path seam admitted, never the name the caller wrote.
        for (place, a) in admitted {
            let real: PathBuf = match a {
                Admitted::ReadFile(f) => f.real,
                Admitted::WritePath(a) | Admitted::Directory(a) => a.real,
            };
            let text = if call.was_file_uri(&place) {
                url::Url::from_file_path(&real).ok().map(String::from)
            } else {
                real.to_str().map(str::to_owned)
            };
            let Some(text) = text else {
                return Err(ToolFailure::new(
                    RefusalCode::InvalidPath,
                    format!("/{place} of {} is not UTF-8", self.decl.name),
                ));
            };
            set_at(&mut args, &parse_location(&place), Value::String(text));
        }
        let args = match args {
            Value::Object(m) => m,
            _ => JsonObject::new(),
        };
        let result = self
            .server
            .call(&self.upstream_name, args)
            .map_err(|m| ToolFailure::new(RefusalCode::ToolFailed, m))?;
        let content = serde_json::to_value(&result.content).unwrap_or(Value::Null);
        if result.is_error == Some(true) {
            let text: Vec<&str> = result
                .content
                .iter()
                .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
                .collect();
            return Err(ToolFailure::new(
                RefusalCode::ToolFailed,
                format!(
                    "the upstream tool {} reported an error: {}",
                    self.decl.name,
                    text.join(" ")
                ),
            ));
        }
        let mut out = serde_json::Map::new();
        out.insert("content".into(), content);
        if let Some(s) = result.structured_content {
            out.insert("structured_content".into(), s);
        }
        Ok(Value::Object(out))
    }
}

/// The first place in `args` (not one of `admitted`) holding a `file:` URI.
fn file_uri_outside(args: &Value, admitted: &[(String, Admitted)]) -> Option<String> {
    fn go(v: &Value, at: &mut Vec<String>, admitted: &[(String, Admitted)]) -> Option<String> {
        match v {
            Value::String(s) => {
                let scheme = s.split_once(':').map(|(a, _)| a);
                let place = location_text(at);
                (scheme.is_some_and(|a| a.eq_ignore_ascii_case("file"))
                    && !admitted.iter().any(|(p, _)| *p == place))
                .then_some(place)
            }
            Value::Array(items) => items.iter().enumerate().find_map(|(i, v)| {
                at.push(i.to_string());
                let r = go(v, at, admitted);
                at.pop();
                r
            }),
            Value::Object(m) => m.iter().find_map(|(k, v)| {
                at.push(k.clone());
                let r = go(v, at, admitted);
                at.pop();
                r
            }),
            _ => None,
        }
    }
    go(args, &mut Vec::new(), admitted)
}

/// Puts `new` at `place` in `value` (a place the toolbox found a string at).
fn set_at(value: &mut Value, place: &[String], new: Value) {
    let Some((first, rest)) = place.split_first() else {
        *value = new;
        return;
    };
    let next = match value {
        Value::Object(m) => m.get_mut(first),
        Value::Array(items) => first.parse::<usize>().ok().and_then(|i| items.get_mut(i)),
        _ => None,
    };
    if let Some(v) = next {
        set_at(v, rest, new);
    }
}

/// The tools of `upstreams` by governed name, with their access declarations (for reports).
pub fn declared_paths(tools: &[Box<dyn GovernedTool>]) -> BTreeMap<String, Vec<String>> {
    tools
        .iter()
        .map(|t| {
            let d = t.decl();
            (
                d.name.to_owned(),
                d.paths
                    .iter()
                    .map(|p| format!("{}={}", p.field, super::config::access_name(p.access)))
                    .collect(),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn schemas_are_closed_everywhere() {
        let mut s = json!({"type":"object","properties":{
            "a":{"type":"object","properties":{"b":{"type":"string"}}},
            "c":{"type":"array","items":{"type":"object","properties":{}}},
            "d":{"anyOf":[{"type":"object"},{"type":"null"}]}},
            "$defs":{"x":{"type":"object"}}});
        close_schema(&mut s).unwrap();
        assert_eq!(s["additionalProperties"], json!(false));
        assert_eq!(s["properties"]["a"]["additionalProperties"], json!(false));
        assert_eq!(
            s["properties"]["c"]["items"]["additionalProperties"],
            json!(false)
        );
        assert_eq!(
            s["properties"]["d"]["anyOf"][0]["additionalProperties"],
            json!(false)
        );
        assert!(
            s["properties"]["d"]["anyOf"][1]
                .get("additionalProperties")
                .is_none()
        );
        assert_eq!(s["$defs"]["x"]["additionalProperties"], json!(false));
    }

    #[test]
    fn descriptions_become_one_clean_line() {
        assert_eq!(
            one_line(Some("\n  Reads a file.\x1b[2J\nMore text")),
            "Reads a file.[2J"
        );
        assert_eq!(one_line(None), "(the upstream gave no description)");
    }
}
