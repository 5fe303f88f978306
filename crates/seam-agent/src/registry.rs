//! The one list of tools the model sees, and which side of the seam each is on.
//!
//! The model gets a single list (sorted by name, so the order tells it nothing
//! about where a tool runs). Only the dispatcher reads [`Side`].

use std::collections::BTreeMap;

use seam_protocol::ToolSpec;
use serde_json::{Value, json};

/// Where a tool runs. The model never learns this.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// In the agent, reversible, staged for review.
    Local,
    /// In the gate, behind `Toolbox::call`, over HTTP.
    Governed,
}

/// One tool of the registry.
#[derive(Debug, Clone, PartialEq)]
pub struct RegisteredTool {
    pub spec: ToolSpec,
    pub side: Side,
}

impl RegisteredTool {
    /// May this tool be a plan step's actor? Local tools may, except the
    /// builder (its writes are dispatched one by one, as direct actions).
    pub fn plan_actor(&self) -> bool {
        self.side == Side::Local && self.spec.name != BUILDER
    }
}

/// The builder's name: the one local tool that is not a plan actor.
pub const BUILDER: &str = "builder";

/// Two tools with one name.
#[derive(Debug, thiserror::Error)]
#[error(
    "two tools are named {name:?} (one {first:?}, one {second:?}); a name must be unique across the local tools and the gate's"
)]
pub struct DuplicateTool {
    pub name: String,
    pub first: Side,
    pub second: Side,
}

/// The tools of one turn: the local ones and those the gate lists.
#[derive(Debug, Clone)]
pub struct Registry {
    tools: BTreeMap<String, RegisteredTool>,
}

impl Registry {
    pub fn new(local: Vec<ToolSpec>, governed: Vec<ToolSpec>) -> Result<Registry, DuplicateTool> {
        let mut tools = BTreeMap::new();
        let all = local
            .into_iter()
            .map(|s| (s, Side::Local))
            .chain(governed.into_iter().map(|s| (s, Side::Governed)));
        for (spec, side) in all {
            if let Some(prev) = tools.get(&spec.name) {
                let prev: &RegisteredTool = prev;
                return Err(DuplicateTool {
                    name: spec.name,
                    first: prev.side,
                    second: side,
                });
            }
            tools.insert(spec.name.clone(), RegisteredTool { spec, side });
        }
        Ok(Registry { tools })
    }

    pub fn get(&self, name: &str) -> Option<&RegisteredTool> {
        self.tools.get(name)
    }

    /// Every tool, sorted by name.
    pub fn tools(&self) -> impl Iterator<Item = &RegisteredTool> {
        self.tools.values()
    }

    /// Every name, sorted.
    pub fn names(&self) -> Vec<&str> {
        self.tools.keys().map(String::as_str).collect()
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The JSON Schema of one action, for constrained decoding: a call names
    /// a real tool and gives params that fit that tool's schema; a plan's
    /// actors are the plan actors; an answer is text. Keys come in the order
    /// the prompt shows (`mode` first), so a grammar built from it reads the
    /// same way.
    pub fn action_schema(&self) -> Value {
        let mut variants: Vec<Value> = self
            .tools()
            .map(|t| {
                json!({
                    "type": "object",
                    "properties": {
                        "mode": {"const": "action"},
                        "tool": {"const": t.spec.name},
                        "params": t.spec.input_schema,
                    },
                    "required": ["mode", "tool", "params"],
                    "additionalProperties": false,
                })
            })
            .collect();
        // Each step names a plan actor and gives params that fit that actor's schema, so
        // constrained decoding cannot write a step the dispatcher would have to repair.
        let steps: Vec<Value> = self
            .tools()
            .filter(|t| t.plan_actor())
            .map(|t| {
                json!({
                    "type": "object",
                    "properties": {
                        "actor": {"const": t.spec.name},
                        "params": t.spec.input_schema,
                    },
                    "required": ["actor", "params"],
                    "additionalProperties": false,
                })
            })
            .collect();
        if !steps.is_empty() {
            variants.push(json!({
                "type": "object",
                "properties": {
                    "mode": {"const": "plan"},
                    "steps": {
                        "type": "array",
                        "minItems": 1,
                        "maxItems": 8,
                        "items": {"oneOf": steps},
                    },
                },
                "required": ["mode", "steps"],
                "additionalProperties": false,
            }));
        }
        variants.push(json!({
            "type": "object",
            "properties": {
                "mode": {"const": "respond"},
                "text": {"type": "string"},
            },
            "required": ["mode", "text"],
            "additionalProperties": false,
        }));
        json!({"oneOf": variants})
    }

    /// The schema of a final answer alone (to force one after a loop).
    pub fn respond_schema() -> Value {
        json!({
            "type": "object",
            "properties": {"mode": {"const": "respond"}, "text": {"type": "string"}},
            "required": ["mode", "text"],
            "additionalProperties": false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn spec(name: &str, schema: Value) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            version: "1".into(),
            description: format!("{name} does one thing."),
            input_schema: schema,
        }
    }

    #[test]
    fn names_are_unique_across_the_seam() {
        let s = json!({"type":"object","properties":{},"additionalProperties":false});
        let err = Registry::new(
            vec![spec("files.read", s.clone())],
            vec![spec("files.read", s)],
        )
        .unwrap_err();
        assert_eq!((err.first, err.second), (Side::Local, Side::Governed));
    }

    #[test]
    fn the_action_schema_admits_only_real_calls() {
        let read = json!({"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false});
        let note = json!({"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false});
        let r = Registry::new(
            vec![spec("scribe", note.clone()), spec(BUILDER, note)],
            vec![spec("files.read", read)],
        )
        .unwrap();
        let schema = r.action_schema();
        let v = jsonschema::validator_for(&schema).unwrap();
        for ok in [
            json!({"mode":"action","tool":"files.read","params":{"path":"a"}}),
            json!({"mode":"plan","steps":[{"actor":"scribe","params":{"text":"x"}}]}),
            json!({"mode":"respond","text":"done"}),
        ] {
            assert!(v.is_valid(&ok), "{ok}");
        }
        for bad in [
            json!({"mode":"action","tool":"files.read","params":{"path":"a","tool":"x"}}),
            json!({"mode":"action","tool":"shell","params":{}}),
            json!({"mode":"plan","steps":[{"actor":"files.read","params":{}}]}),
            json!({"mode":"plan","steps":[{"actor":"builder","params":{}}]}),
            json!({"mode":"plan","steps":[{"actor":"scribe","params":{"text":"x","op":"check"}}]}),
            json!({"mode":"respond"}),
        ] {
            assert!(!v.is_valid(&bad), "{bad}");
        }
    }
}
