//! The system prompt, generated from the registry.
//!
//! One line per tool: name, flattened params, one-line description. A param
//! list is written the way a signature reads (`path, max_bytes?:int`), which
//! costs a fraction of the tokens of the same schema as OpenAI `tools` JSON.
//! The tools come in the registry's one chosen order
//! ([`crate::registry::TOOL_ORDER`], the action schema's too) and nothing
//! says where one runs. The
//! assistant is given no name: small models given one were seen to call
//! their own name as a tool.

use std::fmt::Write as _;

use serde_json::Value;

use crate::registry::Registry;

/// The system prompt for a registry.
pub fn system_prompt(registry: &Registry) -> String {
    let mut p = String::with_capacity(2048);
    p.push_str(
        "You carry out the operator's task with tools. Reply with exactly one JSON object and \
         nothing else, in one of three forms:\n\
         {\"mode\":\"action\",\"tool\":\"TOOL\",\"params\":{...}} calls one tool; its result comes back to you.\n\
         {\"mode\":\"plan\",\"steps\":[{\"actor\":\"TOOL\",\"params\":{...}},...]} runs several steps in order.\n\
         {\"mode\":\"respond\",\"text\":\"...\"} gives the operator your final answer.\n\
         \n\
         Tools (NAME params: description; ? marks an optional param, a bare param is a string):\n",
    );
    for t in registry.tools() {
        let _ = writeln!(
            p,
            "{} {}: {}",
            t.spec.name,
            flatten_params(&t.spec.input_schema),
            one_line(&t.spec.description)
        );
    }
    p.push_str(
        "\nUse tools to learn what you do not know; never invent a file's content or a tool's \
         result. Call one tool at a time when the next step depends on its result. When you \
         have the answer, respond.",
    );
    p
}

/// `{a, b?:int, op:"x"|"y"}`: a schema's properties, flattened for the prompt.
pub fn flatten_params(schema: &Value) -> String {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return "{}".into();
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let parts: Vec<String> = props
        .iter()
        .map(|(name, s)| {
            let opt = if required.contains(&name.as_str()) {
                ""
            } else {
                "?"
            };
            match type_hint(s) {
                Some(t) => format!("{name}{opt}:{t}"),
                None => format!("{name}{opt}"),
            }
        })
        .collect();
    format!("{{{}}}", parts.join(", "))
}

/// A short type: none for a plain string, `int`, `bool`, `num`, `[str]`,
/// `{…}`, or the enum's values.
fn type_hint(s: &Value) -> Option<String> {
    if let Some(values) = s.get("enum").and_then(Value::as_array) {
        let vs: Vec<String> = values.iter().map(Value::to_string).collect();
        return Some(vs.join("|"));
    }
    if let Some(c) = s.get("const") {
        return Some(c.to_string());
    }
    let ty = match s.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("string"),
        _ => {
            return s
                .get("anyOf")
                .or_else(|| s.get("oneOf"))
                .and_then(Value::as_array)
                .map(|alts| {
                    alts.iter()
                        .map(|a| type_hint(a).unwrap_or_else(|| "str".into()))
                        .collect::<Vec<_>>()
                        .join("|")
                });
        }
    };
    match ty {
        "string" => None,
        "integer" => Some("int".into()),
        "number" => Some("num".into()),
        "boolean" => Some("bool".into()),
        "array" => {
            let item = s
                .get("items")
                .map(|i| type_hint(i).unwrap_or_else(|| "str".into()))
                .unwrap_or_else(|| "any".into());
            Some(format!("[{item}]"))
        }
        "object" => Some(match s.get("properties") {
            Some(_) => flatten_params(s),
            None => "{...}".into(),
        }),
        other => Some(other.to_owned()),
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The same tools as OpenAI's `tools` array (what a chat API would be sent
/// instead of our prompt's tool lines): the yardstick for the prompt's size.
pub fn openai_tools_json(registry: &Registry) -> Value {
    Value::Array(
        registry
            .tools()
            .map(|t| {
                serde_json::json!({
                    "type": "function",
                    "function": {
                        "name": t.spec.name,
                        "description": t.spec.description,
                        "parameters": t.spec.input_schema,
                    }
                })
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use seam_protocol::ToolSpec;
    use serde_json::json;

    #[test]
    fn params_flatten_like_a_signature() {
        let s = json!({"type":"object","properties":{
            "path":{"type":"string"},
            "max_bytes":{"type":"integer"},
            "op":{"enum":["write","patch"]},
            "files":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"}}}},
        },"required":["path","op"]});
        assert_eq!(
            flatten_params(&s),
            r#"{files?:[{name?}], max_bytes?:int, op:"write"|"patch", path}"#
        );
    }

    #[test]
    fn the_prompt_lists_every_tool_and_hides_the_side() {
        let spec = |n: &str| ToolSpec {
            name: n.into(),
            version: "1".into(),
            description: format!("Does {n}\n  things."),
            input_schema: json!({"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}),
        };
        let r = Registry::new(vec![spec("scribe")], vec![spec("web.search")]).unwrap();
        let p = system_prompt(&r);
        assert!(p.contains("scribe {q}: Does scribe things.\n"), "{p}");
        assert!(
            p.contains("web.search {q}: Does web.search things.\n"),
            "{p}"
        );
        for word in ["local", "governed", "gate", "seam"] {
            assert!(!p.to_lowercase().contains(word), "the prompt says {word:?}");
        }
    }
}
