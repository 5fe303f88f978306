//! The gate: the one place where a tool call can touch the world.
//!
//! This crate owns the governed tools ([`tools`]), the gate's config, and the ways in:
//! the HTTP service ([`service`], on axum) and MCP both ways ([`mcp`], on rmcp: seam as a
//! server, upstream servers' tools governed as seam's own). Every call through any of them
//! is a [`Toolbox::call`]: the pipeline itself (schema, capability, taint, path admission,
//! consent, scrub, ledger) is `seam-toolbox`'s, re-exported here so callers name it through
//! the gate. A tool here implements [`GovernedTool`] and sees only what the pipeline admitted;
//! a transport holds a [`Toolbox`] and reaches none of its private steps.
//!
//! A gate is opened in one place, [`Gate::open`]: the keeper, the scrubber with every value it
//! holds, the tools, the upstream MCP servers. Every caller opens it there, so no caller can
//! build a toolbox whose scrubber misses a keeper value.
//!
//! What this crate must never do: hand a tool a path it has not admitted, return
//! any text (result or refusal) that has not been scrubbed, or answer a call the
//! ledger did not record; none of it is possible without going around the toolbox, and
//! nothing here does. It does not print: the `seam` binary owns all output.

pub mod config;
pub mod mcp;
mod open;
pub mod service;
pub mod tools;

pub use config::{GateConfig, WebFetchSetup, WebSearchSetup};
pub use open::{Gate, OpenError};
pub use seam_toolbox::consent;
pub use seam_toolbox::{
    Admitted, CallOutcome, CallRecord, CallRequest, ConsentDesk, ConsentRecord, DestinationForm,
    DestinationParam, Endorsed, GateError, GovernedTool, LedgerHook, LedgerHookError, NoLedger,
    NoneNamed, PathParam, ToolCall, ToolDecl, ToolFailure, Toolbox, TurnToken, policy_digest,
};
pub use tools::{ToolboxConfig, builtin_toolbox};
