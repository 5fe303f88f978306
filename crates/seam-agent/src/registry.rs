//! The one list of tools the model sees, and which side of the seam each is on.
//!
//! The model gets a single list, in the order of [`TOOL_ORDER`] (the prompt's
//! lines, the action schema's variants and the names a refusal lists all
//! follow it); nothing in it says where a tool runs. Only the dispatcher
//! reads [`Side`].

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
    /// Does a plan step naming this tool run as a plan step? Local tools do,
    /// except the builder (its writes are dispatched one by one, as direct
    /// actions). The router's allowlist (`seam_action::route`), not the
    /// grammar's: a plan step may name any tool.
    pub fn plan_actor(&self) -> bool {
        self.side == Side::Local && self.spec.name != BUILDER
    }
}

/// The builder's name: the one local tool that is not a plan actor.
pub const BUILDER: &str = "builder";

/// The order the model is shown the tools in: the prompt's tool lines and the
/// action schema's variants (for calls and for plan steps). A small model
/// leans on the first names it reads (constrained to a list, the 1.5B model
/// "read" a markdown file with `aesthesis`, first when sorted by name), so
/// the order is a choice, made here once.
///
/// Chosen by what the dev suite's 16 tasks need: for each tool, the tasks
/// whose check requires it (`ledger_contains_tool`, or implied: a branch in
/// the queue needs the builder, a question about an indexed project needs
/// the code index), most first. files.read 8, python.run 5, memory.codebase
/// 4 (1 named by a check, 3 more on the indexed project), memory.operator 2,
/// builder 2 (a tie: the read before the write), facts.get 1; no task needs
/// the rest, which follow, the governed ones first (web.search, web.fetch,
/// memory.build), then the local tools, the analysis ones last. Measured on the
/// dev suite by the lead (web.fetch came later and was put beside web.search,
/// not measured); change it by measurement. A tool not listed comes after
/// these, by name.
pub const TOOL_ORDER: [&str; 15] = [
    "files.read",
    "python.run",
    "memory.codebase",
    "memory.operator",
    "builder",
    "facts.get",
    "web.search",
    "web.fetch",
    "memory.build",
    "context",
    "scribe",
    "seer",
    "graph",
    "aesthesis",
    "image",
];

/// Where a name comes in [`TOOL_ORDER`] (a name not listed: after them all).
fn rank(name: &str) -> usize {
    TOOL_ORDER
        .iter()
        .position(|n| *n == name)
        .unwrap_or(TOOL_ORDER.len())
}

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
    /// In the order of [`TOOL_ORDER`].
    tools: Vec<RegisteredTool>,
    by_name: BTreeMap<String, usize>,
}

impl Registry {
    pub fn new(local: Vec<ToolSpec>, governed: Vec<ToolSpec>) -> Result<Registry, DuplicateTool> {
        let mut tools: Vec<RegisteredTool> = Vec::new();
        let all = local
            .into_iter()
            .map(|s| (s, Side::Local))
            .chain(governed.into_iter().map(|s| (s, Side::Governed)));
        for (spec, side) in all {
            if let Some(prev) = tools.iter().find(|t| t.spec.name == spec.name) {
                return Err(DuplicateTool {
                    name: spec.name,
                    first: prev.side,
                    second: side,
                });
            }
            tools.push(RegisteredTool { spec, side });
        }
        tools.sort_by(|a, b| {
            (rank(&a.spec.name), &a.spec.name).cmp(&(rank(&b.spec.name), &b.spec.name))
        });
        let by_name = tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.spec.name.clone(), i))
            .collect();
        Ok(Registry { tools, by_name })
    }

    pub fn get(&self, name: &str) -> Option<&RegisteredTool> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    /// Every tool, in the order of [`TOOL_ORDER`].
    pub fn tools(&self) -> impl Iterator<Item = &RegisteredTool> {
        self.tools.iter()
    }

    /// Every name, in the order of [`TOOL_ORDER`].
    pub fn names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.spec.name.as_str()).collect()
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The JSON Schema of one action, for constrained decoding. It says what
    /// the model may *write*, not which path the call takes: a call names a
    /// real tool and gives params that fit that tool's schema; a plan step
    /// names any tool (all of them, the builder and the governed ones too)
    /// with params that fit that tool's schema; an answer is text. Which
    /// steps run as a plan is the router's choice (`seam_action::route`
    /// dispatches a step that is no plan actor as a direct action, counted):
    /// a grammar that allowed only plan actors in a plan made the model name
    /// the wrong tool, which no correction can undo. The params schemas are
    /// the tools' own, less the bounds the parser clamps
    /// ([`seam_action::schema_for_grammar`]). Tools come in the order of
    /// [`TOOL_ORDER`], keys in the order the prompt shows (`mode` first), so a
    /// grammar built from it reads the same way.
    pub fn action_schema(&self) -> Value {
        self.schema(true)
    }

    /// [`Self::action_schema`] less the answer form: a reply that calls a
    /// tool, any tool (the turn asks for one after an answer was given again
    /// with the mistake it was sent back for). A registry with no tools has
    /// no call to write, and gets the whole action schema.
    pub fn call_schema(&self) -> Value {
        self.schema(self.tools.is_empty())
    }

    fn schema(&self, answer: bool) -> Value {
        /// A plan longer than this is closed by the grammar. Small models
        /// fall into writing one step again and again (qwen2.5-coder-1.5b
        /// wrote the same python.run step seven times, 1024 tokens and six
        /// minutes, in the dev suite); the parser drops the repeats, but
        /// only the grammar stops the tokens being spent.
        const MAX_PLAN_STEPS: usize = 4;
        let mut variants: Vec<Value> = self
            .tools()
            .map(|t| {
                json!({
                    "type": "object",
                    "properties": {
                        "mode": {"const": "action"},
                        "tool": {"const": t.spec.name},
                        "params": seam_action::schema_for_grammar(&t.spec.input_schema),
                    },
                    "required": ["mode", "tool", "params"],
                    "additionalProperties": false,
                })
            })
            .collect();
        // Each step names a tool and gives params that fit that tool's schema.
        let steps: Vec<Value> = self
            .tools()
            .map(|t| {
                json!({
                    "type": "object",
                    "properties": {
                        "actor": {"const": t.spec.name},
                        "params": seam_action::schema_for_grammar(&t.spec.input_schema),
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
                        "maxItems": MAX_PLAN_STEPS,
                        "items": {"oneOf": steps},
                    },
                },
                "required": ["mode", "steps"],
                "additionalProperties": false,
            }));
        }
        if answer {
            variants.push(Self::respond_schema());
        }
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
    use crate::reading::{Reader, Step};

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

    fn object(props: Value, required: &[&str]) -> Value {
        json!({"type":"object","properties":props,"required":required,"additionalProperties":false})
    }

    /// Three local tools (two plan actors, the builder) and two governed ones.
    fn five() -> Registry {
        let note = object(json!({"text":{"type":"string"}}), &["text"]);
        Registry::new(
            vec![
                spec("scribe", note.clone()),
                spec(
                    "context",
                    object(json!({"what":{"enum":["task","files"]}}), &[]),
                ),
                spec(
                    BUILDER,
                    object(
                        json!({"op":{"enum":["write","check"]},"path":{"type":"string"}}),
                        &["op"],
                    ),
                ),
            ],
            vec![
                spec(
                    "files.read",
                    object(
                        json!({"path":{"type":"string"},"offset":{"type":"integer","minimum":1}}),
                        &["path"],
                    ),
                ),
                spec(
                    "python.run",
                    object(
                        json!({"code":{"type":"string","maxLength":100},
                               "timeout_s":{"type":"number","exclusiveMinimum":0,"maximum":20}}),
                        &["code"],
                    ),
                ),
            ],
        )
        .unwrap()
    }

    #[test]
    fn the_action_schema_admits_only_real_calls() {
        let r = five();
        let schema = r.action_schema();
        let v = jsonschema::validator_for(&schema).unwrap();
        for ok in [
            json!({"mode":"action","tool":"files.read","params":{"path":"a"}}),
            json!({"mode":"plan","steps":[{"actor":"scribe","params":{"text":"x"}}]}),
            // any tool may be a plan step's actor: the router decides the path
            json!({"mode":"plan","steps":[{"actor":"files.read","params":{"path":"notes.md"}}]}),
            json!({"mode":"plan","steps":[{"actor":"builder","params":{"op":"check"}}]}),
            json!({"mode":"plan","steps":[
                {"actor":"python.run","params":{"code":"print(1)"}},
                {"actor":"scribe","params":{"text":"x"}}]}),
            json!({"mode":"respond","text":"done"}),
        ] {
            assert!(v.is_valid(&ok), "{ok}");
        }
        for bad in [
            json!({"mode":"action","tool":"files.read","params":{"path":"a","tool":"x"}}),
            json!({"mode":"action","tool":"shell","params":{}}),
            // a step's params fit its actor's own schema
            json!({"mode":"plan","steps":[{"actor":"files.read","params":{}}]}),
            json!({"mode":"plan","steps":[{"actor":"files.read","params":{"text":"x"}}]}),
            json!({"mode":"plan","steps":[{"actor":"builder","params":{}}]}),
            json!({"mode":"plan","steps":[{"actor":"scribe","params":{"text":"x","op":"check"}}]}),
            json!({"mode":"plan","steps":[{"actor":"shell","params":{}}]}),
            json!({"mode":"plan","steps":[]}),
            json!({"mode":"respond"}),
        ] {
            assert!(!v.is_valid(&bad), "{bad}");
        }
    }

    #[test]
    fn the_call_schema_admits_every_call_and_no_answer() {
        let r = five();
        let v = jsonschema::validator_for(&r.call_schema()).unwrap();
        assert!(v.is_valid(&json!({"mode":"action","tool":"files.read","params":{"path":"a"}})));
        assert!(v.is_valid(&json!({"mode":"action","tool":"scribe","params":{"text":"x"}})));
        assert!(v.is_valid(
            &json!({"mode":"plan","steps":[{"actor":"files.read","params":{"path":"a"}}]})
        ));
        assert!(!v.is_valid(&json!({"mode":"respond","text":"done"})));
        // No tools, no call to write: the answer stays.
        let none = Registry::new(vec![], vec![]).unwrap();
        assert_eq!(none.call_schema(), none.action_schema());
    }

    #[test]
    fn the_schema_closes_a_plan_after_four_steps() {
        let r = five();
        let v = jsonschema::validator_for(&r.action_schema()).unwrap();
        let step = json!({"actor": "files.read", "params": {"path": "notes.md"}});
        let plan = |n: usize| json!({"mode": "plan", "steps": vec![step.clone(); n]});
        assert!(v.is_valid(&plan(4)));
        assert!(!v.is_valid(&plan(5)), "a fifth step must not be writable");
    }

    #[test]
    fn a_plan_step_of_a_governed_tool_or_the_builder_is_accepted_then_routed_as_a_direct_call() {
        let r = five();
        let v = jsonschema::validator_for(&r.action_schema()).unwrap();
        let reader = Reader::new(&r);
        for (reply, tool) in [
            (
                r#"{"mode":"plan","steps":[{"actor":"files.read","params":{"path":"notes.md"}}]}"#,
                "files.read",
            ),
            (
                r#"{"mode":"plan","steps":[{"actor":"python.run","params":{"code":"print(7**23)"}}]}"#,
                "python.run",
            ),
            (
                r#"{"mode":"plan","steps":[{"actor":"builder","params":{"op":"check"}}]}"#,
                "builder",
            ),
        ] {
            let value: Value = serde_json::from_str(reply).unwrap();
            assert!(v.is_valid(&value), "the schema refuses {reply}");
            let read = reader.read(reply).unwrap();
            let params = value["steps"][0]["params"].as_object().unwrap().clone();
            assert_eq!(
                read.steps,
                vec![Step::Call {
                    tool: tool.into(),
                    params,
                    via_plan: false,
                }],
                "{reply}"
            );
            assert!(read.repairs.is_empty(), "{reply}: {:?}", read.repairs);
            assert_eq!(
                read.corrections,
                ["one-step-plan-as-call", "plan-step-as-call"],
                "{reply}"
            );
        }
        // In a plan of several steps: the local plan actor stays a plan step,
        // the governed tool and the builder leave it.
        let read = reader
            .read(
                r#"{"mode":"plan","steps":[{"actor":"context","params":{"what":"task"}},
                    {"actor":"files.read","params":{"path":"notes.md"}},
                    {"actor":"builder","params":{"op":"check"}}]}"#,
            )
            .unwrap();
        let paths: Vec<(&str, bool)> = read
            .steps
            .iter()
            .map(|s| match s {
                Step::Call { tool, via_plan, .. } => (tool.as_str(), *via_plan),
                Step::Respond(_) => ("", false),
            })
            .collect();
        assert_eq!(
            paths,
            [("context", true), ("files.read", false), ("builder", false)]
        );
        assert_eq!(read.corrections, ["plan-step-as-call"]);
    }

    #[test]
    fn tools_come_in_the_one_chosen_order() {
        let s = object(json!({}), &[]);
        // Given in another order, and with a tool the order does not list.
        let mut local: Vec<ToolSpec> = TOOL_ORDER
            .iter()
            .filter(|n| !n.contains('.'))
            .map(|n| spec(n, s.clone()))
            .collect();
        local.reverse();
        local.push(spec("abacus", s.clone()));
        let governed: Vec<ToolSpec> = TOOL_ORDER
            .iter()
            .rev()
            .filter(|n| n.contains('.'))
            .map(|n| spec(n, s.clone()))
            .collect();
        let r = Registry::new(local, governed).unwrap();
        let mut want: Vec<&str> = TOOL_ORDER.to_vec();
        want.push("abacus");
        assert_eq!(r.names(), want);
        assert_eq!(r.get("abacus").unwrap().side, Side::Local);
        assert_eq!(r.get("files.read").unwrap().side, Side::Governed);
        // The prompt and both lists of the schema follow it.
        let prompt = crate::prompt::system_prompt(&r);
        let at: Vec<usize> = want
            .iter()
            .map(|n| prompt.find(&format!("\n{n} ")).unwrap())
            .collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{prompt}");
        let schema = r.action_schema();
        let variants = schema["oneOf"].as_array().unwrap();
        let tools: Vec<&str> = variants
            .iter()
            .filter_map(|v| v["properties"]["tool"]["const"].as_str())
            .collect();
        assert_eq!(tools, want);
        let plan = variants
            .iter()
            .find(|v| v["properties"]["mode"]["const"] == "plan")
            .unwrap();
        let actors: Vec<&str> = plan["properties"]["steps"]["items"]["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["properties"]["actor"]["const"].as_str().unwrap())
            .collect();
        assert_eq!(actors, want);
    }

    #[test]
    fn the_grammar_lets_the_model_write_an_out_of_range_knob_and_the_reader_clamps_it() {
        let r = five();
        let v = jsonschema::validator_for(&r.action_schema()).unwrap();
        let reply =
            r#"{"mode":"action","tool":"python.run","params":{"code":"print(1)","timeout_s":60}}"#;
        assert!(v.is_valid(&serde_json::from_str(reply).unwrap()));
        let read = Reader::new(&r).read(reply).unwrap();
        let Step::Call { tool, params, .. } = &read.steps[0] else {
            panic!("{read:?}")
        };
        assert_eq!(tool, "python.run");
        assert_eq!(
            Value::Object(params.clone()),
            json!({"code":"print(1)","timeout_s":20})
        );
        assert_eq!(read.repairs, ["param-clamped"]);
        // The same in a plan step, and for an integer's minimum.
        let read = Reader::new(&r)
            .read(r#"{"mode":"plan","steps":[{"actor":"files.read","params":{"path":"a","offset":0}}]}"#)
            .unwrap();
        let Step::Call { params, .. } = &read.steps[0] else {
            panic!("{read:?}")
        };
        assert_eq!(params["offset"], json!(1));
        assert_eq!(read.repairs, ["param-clamped"]);
        // What the clamp does not enforce stays in the grammar.
        assert!(!v.is_valid(&json!({"mode":"action","tool":"python.run",
            "params":{"code":"x".repeat(101)}})));
    }
}
