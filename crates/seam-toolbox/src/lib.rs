//! The gate's pipeline: [`Toolbox::call`], the one dispatch every governed tool goes through.
//!
//! This crate owns the pipeline and what it decides with: the [`GovernedTool`] trait and a
//! tool's declaration ([`ToolDecl`]), the toolbox's rules for a declaration and the one walk of
//! a tool's JSON Schema they run on ([`schema_walk`]), the turns and their taint ([`TurnToken`]),
//! the consent desk ([`ConsentDesk`]) and what is handed to the ledger ([`LedgerHook`]). The
//! pipeline is fixed and private, so a tool added later is covered by construction, not by
//! review:
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
//! What this crate must never do: hand a tool a path it has not admitted, return any text
//! (result or refusal) that has not been scrubbed, answer a call the ledger did not record,
//! or let a call on `ask` run without the operator's recorded answer. It does not print.
//!
//! Why it is a crate of its own: the tools and the transports (`seam-gate`: the built-in
//! tools, the HTTP service on axum, MCP both ways on rmcp) need a network stack, an async
//! runtime and clients of the web; the pipeline needs none of them. Apart, a review of
//! `Toolbox::call` reads this crate and its dependencies (the policy, the scrubber, the
//! ledger, the protocol's types, a JSON Schema validator), and a transport cannot reach into
//! the pipeline's private steps: it holds a [`Toolbox`] and calls it like anyone else.

pub mod consent;
mod ledger_hook;
pub mod schema_walk;
mod taint;
mod toolbox;

pub use consent::ConsentDesk;
pub use ledger_hook::{
    CallOutcome, CallRecord, ConsentRecord, LedgerHook, LedgerHookError, NoLedger,
};
pub use taint::TurnToken;
pub use toolbox::{
    Admitted, CallRequest, DestinationForm, DestinationParam, DirectoryFiles, Endorsed, GateError,
    GovernedTool, NoneNamed, PathParam, Reach, ToolCall, ToolDecl, ToolFailure, Toolbox,
    check_decl_with,
};

/// `sha256:` of the policy as enforced (`seam policy show --json`): what `facts.get
/// policy_digest` reports and every consent record carries.
pub fn policy_digest(policy: &seam_policy::Policy) -> String {
    use sha2::{Digest, Sha256};
    let enforced = serde_json::to_vec(&policy.enforced()).unwrap_or_default();
    format!("sha256:{}", hex::encode(Sha256::digest(&enforced)))
}
