//! Wire types that both sides of the seam share.
//!
//! This crate owns the JSON shapes that cross between the agent and the gate:
//! [`ToolSpec`] (what `GET /v1/tools` lists), [`Envelope`] (an admitted call's
//! answer), [`Refusal`] (a refused call's answer) and the [`RefusalCode`]s a
//! refusal can carry, the model's [`Action`]s, and what the code index answers
//! that the agent reads back ([`codebase`]). The shapes are exactly those of
//! DESIGN.md:
//!
//! ```text
//! envelope: {"invocation_id","tool","version","output":{…},"tainted":bool,"scrubbed":[shape ids]}
//! refusal:  {"invocation_id","tool","refused":{"code","message"}}
//! ```
//!
//! It must never hold logic: no policy, no I/O, no tool. Anything here is data
//! that both processes agree on, and nothing that lets one side reach the other's
//! means (no path admission, no credentials).

use serde::{Deserialize, Serialize};

pub mod action;
pub mod codebase;
pub mod wire;
pub use action::{Action, PlanStep};

/// A governed tool as the gate publishes it: what the model may see of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolSpec {
    /// The tool's name, e.g. `files.read`.
    pub name: String,
    /// The tool's version; a change of params or output shape bumps it.
    pub version: String,
    /// One line for the model's prompt.
    pub description: String,
    /// JSON Schema of the params (`additionalProperties: false` at every object).
    pub input_schema: serde_json::Value,
}

/// The answer to an admitted call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Envelope {
    pub invocation_id: String,
    pub tool: String,
    pub version: String,
    /// The tool's result, already scrubbed.
    pub output: serde_json::Value,
    /// True when the result carries the owner's data or untrusted content: the
    /// turn it belongs to is tainted from here on.
    pub tainted: bool,
    /// Ids of the secret shapes that were redacted from `output` (sorted, unique).
    pub scrubbed: Vec<String>,
}

/// The answer to a refused call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Refusal {
    pub invocation_id: String,
    pub tool: String,
    pub refused: RefusalBody,
}

/// Why a call was refused. The message is scrubbed before it leaves the gate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefusalBody {
    pub code: RefusalCode,
    pub message: String,
}

/// Either answer of `Toolbox::call`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Answer {
    Envelope(Envelope),
    Refusal(Refusal),
}

impl Answer {
    pub fn invocation_id(&self) -> &str {
        match self {
            Answer::Envelope(e) => &e.invocation_id,
            Answer::Refusal(r) => &r.invocation_id,
        }
    }

    pub fn refusal(&self) -> Option<&RefusalBody> {
        match self {
            Answer::Envelope(_) => None,
            Answer::Refusal(r) => Some(&r.refused),
        }
    }
}

/// The reasons a call can be refused. Stable snake_case strings on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefusalCode {
    /// No tool by that name.
    UnknownTool,
    /// The params do not match the tool's schema.
    InvalidParams,
    /// The policy denies the tool's capability.
    CapabilityDenied,
    /// The policy says `ask`, and this call could not get consent: it is a read (which cannot
    /// wait for consent), nobody was there to ask, or nobody answered in time.
    ConsentRequired,
    /// The operator was asked, and said no.
    ConsentDenied,
    /// The path is, or leads to, a protected file.
    Protected,
    /// The path is, or leads to, a place outside the allow-list for this access.
    NotAllowed,
    /// The path itself is malformed: empty, NUL, not UTF-8, too long, shell syntax.
    InvalidPath,
    /// The path does not exist (or a link on it dangles, or loops).
    NotFound,
    /// The path is not something this tool reads: a directory, device, socket or FIFO.
    NotAFile,
    /// The turn is tainted and the tool reaches the network.
    Tainted,
    /// The call names no turn, or a turn the gate did not open (or has closed).
    UnknownTurn,
    /// The gate stopped waiting for the call (it may still run and have its effect).
    TimedOut,
    /// The tool ran and failed.
    ToolFailed,
    /// The path is in seam's core partition, which the agent's builder never changes,
    /// whatever the policy says of `self.modify` (an agent-side, local refusal).
    CorePath,
    /// What the call needs is not there on this machine or in this repository: a
    /// program that is not installed, a check command that is not configured (an
    /// agent-side, local refusal).
    Unavailable,
    /// An agent-side local tool ran and failed. It says `failed`, not `tool_failed`:
    /// that is the string the model and the agent's trace have always been shown for
    /// a local failure, and the gate's [`RefusalCode::ToolFailed`] keeps its own on
    /// the gate's wire, so neither side's answers change.
    Failed,
}

impl RefusalCode {
    pub fn as_str(self) -> &'static str {
        match self {
            RefusalCode::UnknownTool => "unknown_tool",
            RefusalCode::InvalidParams => "invalid_params",
            RefusalCode::CapabilityDenied => "capability_denied",
            RefusalCode::ConsentRequired => "consent_required",
            RefusalCode::ConsentDenied => "consent_denied",
            RefusalCode::Protected => "protected",
            RefusalCode::NotAllowed => "not_allowed",
            RefusalCode::InvalidPath => "invalid_path",
            RefusalCode::NotFound => "not_found",
            RefusalCode::NotAFile => "not_a_file",
            RefusalCode::Tainted => "tainted",
            RefusalCode::UnknownTurn => "unknown_turn",
            RefusalCode::TimedOut => "timed_out",
            RefusalCode::ToolFailed => "tool_failed",
            RefusalCode::CorePath => "core_path",
            RefusalCode::Unavailable => "unavailable",
            RefusalCode::Failed => "failed",
        }
    }

    /// True when the call itself was malformed (the caller's mistake, exit 2),
    /// false when it was well-formed and refused (exit 3).
    pub fn is_invalid_input(self) -> bool {
        matches!(
            self,
            RefusalCode::UnknownTool | RefusalCode::InvalidParams | RefusalCode::UnknownTurn
        )
    }
}

impl std::fmt::Display for RefusalCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn envelope_has_exactly_the_design_keys() {
        let e = Envelope {
            invocation_id: "i".into(),
            tool: "files.read".into(),
            version: "1".into(),
            output: json!({"text": "x"}),
            tainted: true,
            scrubbed: vec!["pem-private-key".into()],
        };
        let v = serde_json::to_value(&e).unwrap();
        let mut keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        assert_eq!(
            keys,
            [
                "invocation_id",
                "output",
                "scrubbed",
                "tainted",
                "tool",
                "version"
            ]
        );
    }

    #[test]
    fn refusal_has_exactly_the_design_keys() {
        let r = Refusal {
            invocation_id: "i".into(),
            tool: "files.read".into(),
            refused: RefusalBody {
                code: RefusalCode::Protected,
                message: "m".into(),
            },
        };
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(
            v,
            json!({"invocation_id":"i","tool":"files.read","refused":{"code":"protected","message":"m"}})
        );
        let back: Answer = serde_json::from_value(v).unwrap();
        assert_eq!(back.refusal().unwrap().code, RefusalCode::Protected);
    }

    #[test]
    fn code_strings_match_serde() {
        for c in [
            RefusalCode::UnknownTool,
            RefusalCode::InvalidParams,
            RefusalCode::CapabilityDenied,
            RefusalCode::ConsentRequired,
            RefusalCode::ConsentDenied,
            RefusalCode::Protected,
            RefusalCode::NotAllowed,
            RefusalCode::InvalidPath,
            RefusalCode::NotFound,
            RefusalCode::NotAFile,
            RefusalCode::Tainted,
            RefusalCode::UnknownTurn,
            RefusalCode::TimedOut,
            RefusalCode::ToolFailed,
            RefusalCode::CorePath,
            RefusalCode::Unavailable,
            RefusalCode::Failed,
        ] {
            assert_eq!(serde_json::to_value(c).unwrap(), json!(c.as_str()));
        }
    }

    #[test]
    fn unknown_fields_are_rejected() {
        let r: Result<Envelope, _> = serde_json::from_value(json!({
            "invocation_id":"i","tool":"t","version":"1","output":{},"tainted":false,"scrubbed":[],"extra":1
        }));
        assert!(r.is_err());
    }
}
