//! The gate: the one place where a tool call can touch the world.
//!
//! This crate owns [`Toolbox::call`], the single dispatch every governed tool
//! goes through, and the governed tools themselves. The pipeline is fixed and
//! private, so a tool added later is covered by construction, not by review:
//!
//! 1. **schema** — params validated against the tool's JSON Schema
//!    (`additionalProperties: false` at every object);
//! 2. **capability** — the policy's decision for the tool's capability
//!    (`allow` / `ask` / `deny`; `ask` refuses a read: a read cannot wait for consent; any
//!    other call on `ask` waits, after the checks below and before it runs, for the
//!    operator's answer at the [`ConsentDesk`], which is signed into the ledger);
//! 3. **path admission** — every path parameter is declared with its
//!    [`Access`](seam_policy::Access); the toolbox admits it and hands the tool an
//!    already-open file, never a name it could open itself;
//! 4. **run**;
//! 5. **scrub** — every string in the result (object keys included:
//!    `Scrubber::scrub_json`, seam-scrub's one JSON scrub), and the text of every refusal,
//!    is filtered by secret shape;
//! 6. **taint** — a result carrying the owner's data or untrusted content taints
//!    the turn; in a tainted turn a tool with egress runs only when every destination
//!    parameter it declares ([`DestinationParam`]) holds a destination endorsed for the
//!    turn: named in the operator's words for it (registered by whoever opened the turn,
//!    [`Toolbox::open_turn_with`]), on the policy's `[egress] destinations`, or, with
//!    `[egress] unnamed = "ask"`, consented to by the operator when the consent desk asked
//!    about that exact value. A tool with egress that declares no destination is refused
//!    outright, and so is a call naming none of its destinations unless the tool says such a
//!    call reaches no one new ([`NoneNamed`]);
//! 7. **ledger** — the invocation, its decision and a digest of its output (of its
//!    canonical JSON, `seam_ledger::canonical_json`, which an auditor can recompute) are
//!    handed to the [`LedgerHook`] before the answer is returned. If the ledger
//!    cannot record, the answer is not returned.
//!
//! A gate is opened in one place, [`Gate::open`]: the keeper, the scrubber with every value it
//! holds, the tools, the upstream MCP servers. Every caller opens it there, so no caller can
//! build a toolbox whose scrubber misses a keeper value.
//!
//! What this crate must never do: hand a tool a path it has not admitted, return
//! any text (result or refusal) that has not been scrubbed, or answer a call the
//! ledger did not record. It does not print: the `seam` binary owns all output.

pub mod config;
pub mod consent;
mod ledger_hook;
pub mod mcp;
mod open;
pub mod service;
mod taint;
pub use taint::TurnToken;
mod toolbox;
pub mod tools;

pub use config::{GateConfig, WebFetchSetup, WebSearchSetup};
pub use consent::ConsentDesk;
pub use ledger_hook::{
    CallOutcome, CallRecord, ConsentRecord, LedgerHook, LedgerHookError, NoLedger,
};
pub use open::{Gate, OpenError};
pub use toolbox::{
    Admitted, CallRequest, DestinationForm, DestinationParam, Endorsed, GateError, GovernedTool,
    NoneNamed, PathParam, ToolCall, ToolDecl, ToolFailure, Toolbox, ToolboxConfig,
};

/// `sha256:` of the policy as enforced (`seam policy show --json`): what `facts.get
/// policy_digest` reports and every consent record carries.
pub fn policy_digest(policy: &seam_policy::Policy) -> String {
    use sha2::{Digest, Sha256};
    let enforced = serde_json::to_vec(&policy.enforced()).unwrap_or_default();
    format!("sha256:{}", hex::encode(Sha256::digest(&enforced)))
}
