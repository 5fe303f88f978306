//! What the agent tells the local tools about the turn they run in, and what
//! a local answer or a refused local call looks like to the model.

use seam_protocol::RefusalCode;
use seam_scrub::Scrubber;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The turn a local call belongs to, as the agent knows it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TurnInfo {
    /// The turn's id; also used in branch names `seam/<turn>-<n>`.
    pub turn: String,
    /// The operator's task text.
    pub task: String,
    /// Files the operator attached to the task, as the gate read them for the launcher
    /// (path admission, like `files.read`) before the agent's walls went up: the agent
    /// itself holds no handle on them.
    pub attachments: Vec<Attachment>,
    /// The steps so far.
    pub history: Vec<StepRecord>,
    /// The governed calls of this turn (for `seer`).
    pub gate_calls: Vec<GateCallRecord>,
}

/// One attached file, read by the gate.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attachment {
    /// The path as the operator gave it.
    pub path: String,
    /// The text the gate returned (scrubbed there, and again by the local tools).
    pub text: String,
    /// The file's size in bytes.
    pub bytes: u64,
    /// True when `text` is only the start of the file.
    pub cut: bool,
}

/// One step of the turn so far.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepRecord {
    pub tool: String,
    /// The params, shortened to a line.
    pub params: String,
    /// What came of it, in a line.
    pub outcome: String,
}

/// One governed call of the turn, as the gate answered it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateCallRecord {
    pub invocation_id: String,
    pub tool: String,
    /// `ok`, or the refusal code and message.
    pub outcome: String,
}

/// A refused local call: what the model sees, as a short plain sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{code}: {message}")]
pub struct LocalRefusal {
    /// `unknown_tool`, `invalid_params`, `invalid_path`, `not_allowed`,
    /// `core_path`, `capability_denied`, `not_found`, `failed`, `unavailable`:
    /// the protocol's codes, on the wire as their snake_case strings.
    pub code: RefusalCode,
    pub message: String,
}

impl LocalRefusal {
    pub fn new(code: RefusalCode, message: impl Into<String>) -> LocalRefusal {
        LocalRefusal {
            code,
            message: message.into(),
        }
    }
}

/// A local tool's answer as the model gets it: every string scrubbed, object
/// keys included, by seam-scrub's one JSON scrub (the gate's too).
pub(crate) fn scrubbed_answer(scrubber: &Scrubber, answer: Value) -> Value {
    let mut answer = answer;
    scrubber.scrub_json(&mut answer);
    answer
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A key is text a tool read as much as a value is: a secret there is
    /// scrubbed too.
    #[test]
    fn an_answer_is_scrubbed_in_its_keys_as_in_its_values() {
        let key = "AKIAZ4X7QW3RT5YU8IOP";
        let out = scrubbed_answer(
            &Scrubber::new(),
            json!({"files": {key: "found", "b": format!("aws {key}")}, "n": 1}),
        );
        let text = out.to_string();
        assert!(!text.contains(key), "{text}");
        assert_eq!(out["n"], 1);
        assert_eq!(out["files"].as_object().map(|m| m.len()), Some(2));
    }
}
