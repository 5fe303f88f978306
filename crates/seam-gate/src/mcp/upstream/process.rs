//! The upstream as a process: its runtime, started with an empty environment, its stderr to
//! its log, the MCP handshake and the listing of its tools under a timeout, and one call sent.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::{RoleClient, RunningService, ServiceExt};
use rmcp::transport::TokioChildProcess;
use seam_keeper::Keeper;
use serde_json::Value;

use super::UpstreamError;
use crate::mcp::classify::ToolHints;
use crate::mcp::config::UpstreamConfig;
use crate::mcp::fingerprint::ToolDefinition;

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
    pub(super) name: String,
    timeout: Duration,
    client: RunningService<RoleClient, ()>,
    /// Calls sent to the upstream (not counting refusals seam made first).
    pub(super) sent: Arc<AtomicU64>,
    /// Declared last, dropped last: the client is cancelled while its runtime still runs.
    runtime: Arc<ClientRuntime>,
}

impl UpstreamServer {
    pub(super) fn call(&self, tool: &str, args: JsonObject) -> Result<CallToolResult, String> {
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
    use std::os::unix::fs::OpenOptionsExt;
    let home = seam_home::SeamHome::new(seam_home);
    seam_home::file::create_private_dir(&home.mcp()).map_err(|e| e.source)?;
    std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(home.mcp_log(server))
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
pub(super) fn start_one(
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
