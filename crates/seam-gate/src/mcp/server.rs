//! seam as an MCP server: the toolbox's tools, every call through `Toolbox::call`.
//!
//! [`SeamMcpServer`] is an rmcp `ServerHandler` over one shared [`Toolbox`]. `tools/list`
//! answers with the registry's names, descriptions and input schemas; `tools/call` becomes a
//! [`CallRequest`] and goes through `Toolbox::call` like `POST /v1/invoke` — schema, policy,
//! path admission, scrubbing, taint, ledger. An envelope is a tool result (its `output` as
//! JSON text, the whole envelope as structured content); a refusal is a tool error
//! (`isError: true`) whose text is the refusal's scrubbed message. Only a call the gate could
//! not govern (the ledger failed) is a protocol error, and it is not answered.
//!
//! One MCP session is one turn: the handler opens a turn when the session starts and closes
//! it when the session ends, so taint holds across the session's calls (a client that read a
//! file cannot then reach a tool with egress in the same session). Sessions are kept by
//! offering protocol versions up to 2025-11-25 (the 2026-07-28 version has no sessions).

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig,
    Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use seam_protocol::Answer;
use serde_json::Value;

use seam_toolbox::{CallRequest, Toolbox};

/// The newest protocol version seam's MCP server offers (see the module doc).
pub const NEWEST_PROTOCOL: ProtocolVersion = ProtocolVersion::V_2025_11_25;

/// The gate's tools as an MCP server, for one session (one turn).
#[derive(Debug)]
pub struct SeamMcpServer {
    toolbox: Arc<Toolbox>,
    turn: String,
}

impl SeamMcpServer {
    /// A session over `toolbox`, in a turn of its own (opened now, closed on drop).
    pub fn new(toolbox: Arc<Toolbox>) -> Self {
        Self::with_operator_words(toolbox, &[])
    }

    /// A session whose turn holds `words` as the operator's (`seam mcp --operator-words`,
    /// given by whoever starts the server: nothing the session sends adds to them).
    pub fn with_operator_words(toolbox: Arc<Toolbox>, words: &[String]) -> Self {
        let (turn, _token) = toolbox.open_turn_with(words);
        SeamMcpServer { toolbox, turn }
    }

    /// The turn this session's calls run in.
    pub fn turn(&self) -> &str {
        &self.turn
    }
}

impl Drop for SeamMcpServer {
    fn drop(&mut self) {
        self.toolbox.close_turn(&self.turn);
    }
}

/// The tools as MCP lists them.
pub fn mcp_tools(toolbox: &Toolbox) -> Vec<Tool> {
    toolbox
        .specs()
        .into_iter()
        .map(|spec| {
            let schema = match spec.input_schema {
                Value::Object(m) => m,
                _ => serde_json::Map::new(),
            };
            Tool::new(spec.name, spec.description, Arc::new(schema))
        })
        .collect()
}

/// An answer of `Toolbox::call` as an MCP tool result.
pub fn tool_result(answer: &Answer) -> CallToolResult {
    match answer {
        Answer::Envelope(env) => {
            let mut r = CallToolResult::success(vec![ContentBlock::text(env.output.to_string())]);
            r.structured_content = serde_json::to_value(env).ok();
            r
        }
        Answer::Refusal(refusal) => {
            let mut r = CallToolResult::error(vec![ContentBlock::text(format!(
                "refused ({}): {}",
                refusal.refused.code, refusal.refused.message
            ))]);
            r.structured_content = serde_json::to_value(refusal).ok();
            r
        }
    }
}

impl ServerHandler for SeamMcpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("seam", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "seam's governed tools. Every call passes the gate's policy: a refusal is a \
                 tool error that says why.",
            )
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&NEWEST_PROTOCOL))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult {
            tools: mcp_tools(&self.toolbox),
            ..Default::default()
        })
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let call = CallRequest {
            tool: request.name.to_string(),
            params: Value::Object(request.arguments.unwrap_or_default()),
            turn: Some(self.turn.clone()),
        };
        let toolbox = self.toolbox.clone();
        let answer = tokio::task::spawn_blocking(move || toolbox.call(call))
            .await
            .map_err(|e| ErrorData::internal_error(format!("the call's worker failed: {e}"), None))?
            .map_err(|e| {
                ErrorData::internal_error(
                    format!("the gate could not govern the call, so it is not answered: {e}"),
                    None,
                )
            })?;
        Ok(tool_result(&answer).into())
    }
}

/// Serves `toolbox` over MCP on stdin/stdout until the client closes it. Needs a tokio runtime.
pub async fn serve_stdio(
    toolbox: Arc<Toolbox>,
    operator_words: &[String],
) -> Result<(), std::io::Error> {
    use rmcp::ServiceExt;
    let server = SeamMcpServer::with_operator_words(toolbox, operator_words);
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| std::io::Error::other(format!("the MCP handshake failed: {e}")))?;
    running
        .waiting()
        .await
        .map_err(|e| std::io::Error::other(format!("the MCP session failed: {e}")))?;
    Ok(())
}

/// The streamable HTTP MCP service over `toolbox`, to mount on the gate's listeners
/// (`/mcp`). One session per client, each its own turn; the sessions end with `shutdown`.
pub fn http_service(
    toolbox: Arc<Toolbox>,
    shutdown: tokio_util::sync::CancellationToken,
) -> rmcp::transport::streamable_http_server::StreamableHttpService<
    SeamMcpServer,
    rmcp::transport::streamable_http_server::session::local::LocalSessionManager,
> {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    };
    let config = StreamableHttpServerConfig::default()
        .with_sse_keep_alive(None)
        .with_cancellation_token(shutdown.child_token());
    StreamableHttpService::new(
        move || Ok(SeamMcpServer::new(toolbox.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}
