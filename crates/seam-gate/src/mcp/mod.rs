//! MCP both ways, under the gate's governance.
//!
//! - [`server`]: seam as an MCP server (stdio for `seam mcp`, streamable HTTP at `/mcp` on the
//!   gate's listeners). Every `tools/call` goes through `Toolbox::call`; a refusal is a tool
//!   error carrying the scrubbed message.
//! - [`upstream`]: MCP servers the gate starts (stdio) and governs; their tools join the
//!   toolbox as `<server>.<tool>`, each call passing schema, policy, path admission, scrub,
//!   taint and ledger, plus the server's own decision from the config.
//! - [`fingerprint`]: upstream definitions, fingerprinted on first sight and kept in seam's
//!   home; a changed definition is refused until `seam mcp accept SERVER`.
//! - [`classify`]: what each upstream tool is (read, egress, change), as policy: the
//!   config's word, else the server's, made stricter by its annotations.
//! - [`config`]: `[[mcp.upstream]]` in the gate's config file.
//!
//! What this module must never do: answer an MCP call except with what `Toolbox::call`
//! returned; let an upstream see a call seam refused; show anyone an upstream definition that
//! was not accepted.

pub mod classify;
pub mod config;
pub mod fingerprint;
pub mod server;
pub mod upstream;

pub use classify::{ClassSource, Effect, ToolClass, ToolHints, classify};
pub use config::{McpConfig, UpstreamConfig, UpstreamToolConfig};
pub use fingerprint::{AcceptedDefinitions, ToolDefinition};
pub use server::{SeamMcpServer, http_service, serve_stdio};
pub use upstream::{
    ToolReport, ToolState, UpstreamError, UpstreamReport, UpstreamTool, Upstreams, accept_upstream,
    start_upstreams,
};
