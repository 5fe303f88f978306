//! The model's three actions, as DESIGN.md writes them, in their strict form.
//!
//! ```text
//! {"mode":"action","tool":T,"params":{…}}
//! {"mode":"plan","steps":[{"actor":A,"params":{…}},…]}
//! {"mode":"respond","text":…}
//! ```
//!
//! Model output is parsed loosely elsewhere (`seam-action` repairs it); what
//! comes out of that repair is this type, which rejects unknown fields, so a
//! value of it is always canonical.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One of the three things a model may say.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// `{"mode":"action","tool":T,"params":{…}}`: call one tool.
    #[serde(rename = "action")]
    Call {
        tool: String,
        #[serde(default)]
        params: Map<String, Value>,
    },
    /// `{"mode":"plan","steps":[…]}`: several steps, in order.
    Plan { steps: Vec<PlanStep> },
    /// `{"mode":"respond","text":…}`: the final answer.
    Respond { text: String },
}

/// One step of a plan: which actor, with which params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanStep {
    pub actor: String,
    #[serde(default)]
    pub params: Map<String, Value>,
}

impl Action {
    /// The action's `mode` string: `action`, `plan` or `respond`.
    pub fn mode(&self) -> &'static str {
        match self {
            Action::Call { .. } => "action",
            Action::Plan { .. } => "plan",
            Action::Respond { .. } => "respond",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_three_shapes_round_trip() {
        for v in [
            json!({"mode":"action","tool":"files.read","params":{"path":"a"}}),
            json!({"mode":"plan","steps":[{"actor":"scribe","params":{"text":"x"}}]}),
            json!({"mode":"respond","text":"done"}),
        ] {
            let a: Action = serde_json::from_value(v.clone()).unwrap();
            assert_eq!(serde_json::to_value(&a).unwrap(), v);
        }
    }

    #[test]
    fn unknown_fields_and_modes_are_refused() {
        for v in [
            json!({"mode":"action","tool":"t","params":{},"why":"x"}),
            json!({"mode":"respond","text":"x","extra":1}),
            json!({"mode":"plan","steps":[{"actor":"a","params":{},"tool":"b"}]}),
            json!({"mode":"shout","text":"x"}),
            json!({"tool":"t","params":{}}),
        ] {
            assert!(serde_json::from_value::<Action>(v.clone()).is_err(), "{v}");
        }
    }
}
