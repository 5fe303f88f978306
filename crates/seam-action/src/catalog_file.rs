//! A catalog read from a JSON file: the tools a reply was written for, so the
//! parser can be measured against them (`seam action parse --catalog FILE`).

use std::collections::BTreeSet;

use seam_protocol::ToolSpec;
use serde::Deserialize;
use serde_json::Value;

use crate::catalog::{CatalogEntry, ToolCatalog};

/// Why a catalog file could not be read. Each names the entry and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CatalogError {
    #[error("not JSON: {message} (line {line}, column {column})")]
    NotJson {
        line: usize,
        column: usize,
        message: String,
    },
    #[error(
        "expected a JSON array of tool specs (as `seam tools --json` prints them), found {found}"
    )]
    NotAnArray { found: &'static str },
    #[error("the array holds no tools")]
    NoTools,
    #[error("tool {index}: {message}")]
    BadEntry { index: usize, message: String },
    #[error("tool {index}: the name is empty")]
    EmptyName { index: usize },
    #[error("tool {index}: {name:?}'s input schema is {found}, not an object or null")]
    BadSchema {
        index: usize,
        name: String,
        found: &'static str,
    },
    #[error("tool {index}: {name:?} is named twice")]
    Duplicate { index: usize, name: String },
}

/// OpenAI's tool format: `{"type": "function", "function": {…}}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OpenAiTool {
    #[serde(rename = "type")]
    _kind: Option<String>,
    function: OpenAiFunction,
}

#[derive(Deserialize)]
struct OpenAiFunction {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    parameters: Value,
}

/// MCP's `tools/list` entry: `{"name", "description", "inputSchema"}`.
#[derive(Deserialize)]
struct McpTool {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(rename = "inputSchema", default)]
    input_schema: Value,
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl ToolCatalog {
    /// A catalog from a JSON array of tools, each in one of the forms tools
    /// are published in: seam's `ToolSpec` (what `seam tools --json` prints),
    /// a catalog entry (`{"spec": …, "plan_actor": …}`), OpenAI's
    /// `{"type": "function", "function": {…}}` or MCP's `{"name", "inputSchema"}`.
    /// Only a catalog entry can make a tool a plan actor.
    pub fn from_json(text: &str) -> Result<ToolCatalog, CatalogError> {
        let v: Value = serde_json::from_str(text).map_err(|e| CatalogError::NotJson {
            line: e.line(),
            column: e.column(),
            message: e
                .to_string()
                .split(" at line ")
                .next()
                .unwrap_or("")
                .to_owned(),
        })?;
        let Value::Array(items) = v else {
            return Err(CatalogError::NotAnArray { found: kind(&v) });
        };
        if items.is_empty() {
            return Err(CatalogError::NoTools);
        }
        let mut entries = Vec::with_capacity(items.len());
        let mut seen = BTreeSet::new();
        for (index, item) in items.into_iter().enumerate() {
            let bad = |e: serde_json::Error| CatalogError::BadEntry {
                index,
                message: e.to_string(),
            };
            let entry = match &item {
                Value::Object(o) if o.contains_key("spec") => {
                    serde_json::from_value::<CatalogEntry>(item).map_err(bad)?
                }
                Value::Object(o) if o.contains_key("function") => {
                    let t = serde_json::from_value::<OpenAiTool>(item).map_err(bad)?;
                    plain(
                        t.function.name,
                        t.function.description,
                        t.function.parameters,
                    )
                }
                Value::Object(o) if o.contains_key("inputSchema") => {
                    let t = serde_json::from_value::<McpTool>(item).map_err(bad)?;
                    plain(t.name, t.description, t.input_schema)
                }
                Value::Object(_) => CatalogEntry {
                    spec: serde_json::from_value::<ToolSpec>(item).map_err(bad)?,
                    plan_actor: false,
                },
                other => {
                    return Err(CatalogError::BadEntry {
                        index,
                        message: format!("{} where a tool's object belongs", kind(other)),
                    });
                }
            };
            let name = entry.spec.name.clone();
            if name.trim().is_empty() {
                return Err(CatalogError::EmptyName { index });
            }
            let schema = &entry.spec.input_schema;
            if !(schema.is_object() || schema.is_null()) {
                return Err(CatalogError::BadSchema {
                    index,
                    name,
                    found: kind(schema),
                });
            }
            if !seen.insert(name.clone()) {
                return Err(CatalogError::Duplicate { index, name });
            }
            entries.push(entry);
        }
        Ok(ToolCatalog::new(entries))
    }
}

fn plain(name: String, description: String, input_schema: Value) -> CatalogEntry {
    CatalogEntry {
        spec: ToolSpec {
            name,
            version: String::new(),
            description,
            input_schema,
        },
        plan_actor: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_published_form_reads() {
        let text = r#"[
            {"name": "files.read", "version": "1", "description": "read a file",
             "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},
            {"spec": {"name": "scribe", "version": "1", "description": "a note",
                      "input_schema": {"type": "object", "properties": {"note": {"type": "string"}}}},
             "plan_actor": true},
            {"type": "function", "function": {"name": "get_weather", "parameters":
                {"type": "object", "properties": {"city": {"type": "string"}}}}},
            {"name": "bash", "description": "run", "inputSchema": {"type": "object", "properties": {"command": {"type": "string"}}}}
        ]"#;
        let c = ToolCatalog::from_json(text).unwrap();
        let names: Vec<&str> = c.names().collect();
        assert_eq!(names, ["files.read", "scribe", "get_weather", "bash"]);
        assert!(c.knows_params());
        assert!(c.get("scribe").unwrap().plan_actor);
        assert!(!c.get("files.read").unwrap().plan_actor);
        assert_eq!(
            c.get("get_weather").unwrap().spec.input_schema["properties"]["city"]["type"],
            "string"
        );
    }

    #[test]
    fn bad_files_say_what_is_wrong_and_where() {
        let err = |t: &str| ToolCatalog::from_json(t).unwrap_err();
        assert!(matches!(err("[{"), CatalogError::NotJson { line: 1, .. }));
        assert_eq!(
            err(r#"{"tools": []}"#),
            CatalogError::NotAnArray { found: "an object" }
        );
        assert_eq!(err("[]"), CatalogError::NoTools);
        let e = err(r#"[{"name": "a", "version": "1", "description": ""}]"#);
        assert!(
            matches!(&e, CatalogError::BadEntry { index: 0, message } if message.contains("input_schema")),
            "{e}"
        );
        let e =
            err(r#"[{"name": "a", "version": "1", "description": "", "input_schema": null}, "b"]"#);
        assert_eq!(
            e.to_string(),
            "tool 1: a string where a tool's object belongs"
        );
        assert_eq!(
            err(r#"[{"name": " ", "version": "1", "description": "", "input_schema": null}]"#),
            CatalogError::EmptyName { index: 0 }
        );
        let e = err(r#"[{"name": "a", "version": "1", "description": "", "input_schema": "x"}]"#);
        assert_eq!(
            e.to_string(),
            "tool 0: \"a\"'s input schema is a string, not an object or null"
        );
        let e = err(
            r#"[{"name": "a", "version": "1", "description": "", "input_schema": null},
                {"type": "function", "function": {"name": "a"}}]"#,
        );
        assert_eq!(
            e,
            CatalogError::Duplicate {
                index: 1,
                name: "a".into()
            }
        );
    }
}
