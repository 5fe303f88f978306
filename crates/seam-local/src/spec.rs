//! The model-facing contract of the seven local tools: name, version, one
//! line, and a JSON Schema closed at every object (`additionalProperties:
//! false`). The schemas are kept small: the prompt is measured in tokens.

use seam_protocol::ToolSpec;
use serde_json::{Value, json};

/// The seven local tools' names, in the order [`tool_specs`] lists them.
pub const LOCAL_TOOLS: [&str; 7] = [
    "builder",
    "scribe",
    "context",
    "graph",
    "seer",
    "aesthesis",
    "image",
];

/// The version of every local tool's params and output shape.
pub const LOCAL_TOOL_VERSION: &str = "1";

fn object(properties: Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// The seven local tools as the model sees them.
pub fn tool_specs() -> Vec<ToolSpec> {
    let s = |d: &str| json!({"type": "string", "description": d});
    let spec = |name: &str, description: &str, input_schema: Value| ToolSpec {
        name: name.to_owned(),
        version: LOCAL_TOOL_VERSION.to_owned(),
        description: description.to_owned(),
        input_schema,
    };
    vec![
        spec(
            "builder",
            "Change code on this turn's own git branch (never main): append text to a file, replace one exact snippet old with new, write a whole file, patch (unified diff), delete a file, or run the check.",
            object(
                json!({
                    "op": {"enum": ["append", "replace", "write", "patch", "delete", "check"]},
                    "path": s("file path relative to the repository"),
                    "text": s("append: the text (line, lines) to add at the end of the file; makes the file if it is missing"),
                    "old": s("replace: the exact text now in the file (the search, find or old_text), there exactly once"),
                    "new": s("replace: the text to put in its place (the replacement or new_text); empty deletes it"),
                    "content": s("whole new file text (write)"),
                    "diff": s("unified diff (patch)"),
                    "message": s("commit message"),
                }),
                &["op"],
            ),
        ),
        spec(
            "scribe",
            "Write a note to memory; it is kept once the operator approves it.",
            object(
                json!({"text": s("the note"), "title": s("short title")}),
                &["text"],
            ),
        ),
        spec(
            "context",
            "Read this turn's context: the task, the steps so far, or the files the operator attached.",
            object(json!({"what": {"enum": ["task", "history", "files"]}}), &[]),
        ),
        spec(
            "graph",
            "Query the knowledge graph (read-only): a node's neighbors, a path between two nodes, or a search.",
            object(
                json!({
                    "op": {"enum": ["neighbors", "path", "search"]},
                    "node": s("node name"),
                    "to": s("target node (path)"),
                    "query": s("words to search"),
                }),
                &["op"],
            ),
        ),
        spec(
            "seer",
            "Observe the system's own state: the return queue's items, or this turn's governed calls.",
            object(json!({"what": {"enum": ["queue", "ledger"]}}), &["what"]),
        ),
        spec(
            "aesthesis",
            "Critique the staged branch: run the repository's formatters and linters and report.",
            object(
                json!({"branch": s("branch name; default this turn's")}),
                &[],
            ),
        ),
        spec(
            "image",
            "Render a Graphviz DOT diagram to an SVG file staged for the operator.",
            object(
                json!({"dot": s("the DOT source"), "name": s("file name stem")}),
                &["dot"],
            ),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn closed_everywhere(v: &Value) -> bool {
        match v {
            Value::Object(m) => {
                let closed = m.get("type") != Some(&json!("object"))
                    || m.get("additionalProperties") == Some(&json!(false));
                closed && m.values().all(closed_everywhere)
            }
            Value::Array(a) => a.iter().all(closed_everywhere),
            _ => true,
        }
    }

    #[test]
    fn seven_tools_named_in_order_and_closed() {
        let specs = tool_specs();
        let names: Vec<_> = specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, LOCAL_TOOLS);
        for s in &specs {
            assert!(closed_everywhere(&s.input_schema), "{} not closed", s.name);
            assert!(!s.description.contains('\n'));
            assert!(
                jsonschema::validator_for(&s.input_schema).is_ok(),
                "{} schema does not compile",
                s.name
            );
        }
    }
}
