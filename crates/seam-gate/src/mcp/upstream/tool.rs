//! One upstream tool as a [`GovernedTool`]: what `run` does before the upstream sees a call
//! (a pending definition refused, no unadmitted `file:` URI, each admitted path replaced by
//! the real path seam decided about) and the upstream's answer made into the tool's output.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use rmcp::model::JsonObject;
use seam_policy::Decision;
use seam_protocol::RefusalCode;
use seam_toolbox::schema_walk::{location_text, parse_location};
use seam_toolbox::{Admitted, GovernedTool, ToolCall, ToolDecl, ToolFailure};
use serde_json::Value;

use super::process::UpstreamServer;

#[derive(Debug, Clone)]
pub(super) enum Pending {
    Changed(Vec<String>),
    New,
}

/// One upstream MCP tool, governed.
#[derive(Debug)]
pub struct UpstreamTool {
    pub(super) decl: ToolDecl,
    pub(super) upstream_name: String,
    pub(super) decision: Decision,
    pub(super) pending: Option<Pending>,
    pub(super) server: Arc<UpstreamServer>,
    /// Places the config declares are not paths.
    pub(super) not_paths: Vec<String>,
    /// The upstream reads files: no `file:` URI reaches it except one seam admitted.
    pub(super) reads_files: bool,
}

impl UpstreamTool {
    /// Calls this tool's server has been sent so far (seam's own refusals not counted).
    pub fn calls_sent(&self) -> u64 {
        self.server.sent.load(Ordering::Relaxed)
    }
}

impl GovernedTool for UpstreamTool {
    fn decl(&self) -> &ToolDecl {
        &self.decl
    }

    fn not_paths(&self) -> &[String] {
        &self.not_paths
    }

    fn config_decision(&self) -> Option<Decision> {
        // a tool whose definition is not accepted refuses in `run`, saying why
        self.pending.is_none().then_some(self.decision)
    }

    fn takes_non_file_uris(&self) -> bool {
        !self.reads_files
    }

    fn run(&self, mut call: ToolCall) -> Result<Value, ToolFailure> {
        let server = &self.server.name;
        match &self.pending {
            Some(Pending::Changed(changes)) => {
                return Err(ToolFailure::new(
                    RefusalCode::CapabilityDenied,
                    format!(
                        "the definition of {} changed since it was accepted ({}); its calls \
                         are refused until the operator reviews and accepts it with `seam mcp \
                         accept {server}`",
                        self.decl.name,
                        changes.join(", ")
                    ),
                ));
            }
            Some(Pending::New) => {
                return Err(ToolFailure::new(
                    RefusalCode::CapabilityDenied,
                    format!(
                        "{} is a tool {server:?} did not have when it was accepted; its calls \
                         are refused until the operator accepts it with `seam mcp accept {server}`",
                        self.decl.name
                    ),
                ));
            }
            None => {}
        }
        let mut args = call.params().clone();
        let admitted = call.take_all_admitted();
        // No file: URI reaches an upstream that reads files unless seam admitted it.
        if self.reads_files
            && let Some(place) = file_uri_outside(&args, &admitted)
        {
            return Err(ToolFailure::new(
                RefusalCode::InvalidPath,
                format!(
                    "{} holds a file: URI at /{place}, a place declared not to be a path; \
                     {server:?} reads files, so it gets no file: URI seam did not admit",
                    self.decl.name
                ),
            ));
        }
        // The upstream gets the real path seam admitted, never the name the caller wrote.
        for (place, a) in admitted {
            let real: PathBuf = match a {
                Admitted::ReadFile(f) => f.real,
                Admitted::WritePath(a) | Admitted::Directory(a) => a.real,
            };
            let text = if call.was_file_uri(&place) {
                url::Url::from_file_path(&real).ok().map(String::from)
            } else {
                real.to_str().map(str::to_owned)
            };
            let Some(text) = text else {
                return Err(ToolFailure::new(
                    RefusalCode::InvalidPath,
                    format!("/{place} of {} is not UTF-8", self.decl.name),
                ));
            };
            set_at(&mut args, &parse_location(&place), Value::String(text));
        }
        let args = match args {
            Value::Object(m) => m,
            _ => JsonObject::new(),
        };
        let result = self
            .server
            .call(&self.upstream_name, args)
            .map_err(|m| ToolFailure::new(RefusalCode::ToolFailed, m))?;
        let content = serde_json::to_value(&result.content).unwrap_or(Value::Null);
        if result.is_error == Some(true) {
            let text: Vec<&str> = result
                .content
                .iter()
                .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
                .collect();
            return Err(ToolFailure::new(
                RefusalCode::ToolFailed,
                format!(
                    "the upstream tool {} reported an error: {}",
                    self.decl.name,
                    text.join(" ")
                ),
            ));
        }
        let mut out = serde_json::Map::new();
        out.insert("content".into(), content);
        if let Some(s) = result.structured_content {
            out.insert("structured_content".into(), s);
        }
        Ok(Value::Object(out))
    }
}

/// The first place in `args` (not one of `admitted`) holding a `file:` URI.
fn file_uri_outside(args: &Value, admitted: &[(String, Admitted)]) -> Option<String> {
    fn go(v: &Value, at: &mut Vec<String>, admitted: &[(String, Admitted)]) -> Option<String> {
        match v {
            Value::String(s) => {
                let scheme = s.split_once(':').map(|(a, _)| a);
                let place = location_text(at);
                (scheme.is_some_and(|a| a.eq_ignore_ascii_case("file"))
                    && !admitted.iter().any(|(p, _)| *p == place))
                .then_some(place)
            }
            Value::Array(items) => items.iter().enumerate().find_map(|(i, v)| {
                at.push(i.to_string());
                let r = go(v, at, admitted);
                at.pop();
                r
            }),
            Value::Object(m) => m.iter().find_map(|(k, v)| {
                at.push(k.clone());
                let r = go(v, at, admitted);
                at.pop();
                r
            }),
            _ => None,
        }
    }
    go(args, &mut Vec::new(), admitted)
}

/// Puts `new` at `place` in `value` (a place the toolbox found a string at).
fn set_at(value: &mut Value, place: &[String], new: Value) {
    let Some((first, rest)) = place.split_first() else {
        *value = new;
        return;
    };
    let next = match value {
        Value::Object(m) => m.get_mut(first),
        Value::Array(items) => first.parse::<usize>().ok().and_then(|i| items.get_mut(i)),
        _ => None,
    };
    if let Some(v) = next {
        set_at(v, rest, new);
    }
}

/// The tools of `upstreams` by governed name, with their access declarations (for reports).
pub fn declared_paths(tools: &[Box<dyn GovernedTool>]) -> BTreeMap<String, Vec<String>> {
    tools
        .iter()
        .map(|t| {
            let d = t.decl();
            (
                d.name.to_owned(),
                d.paths
                    .iter()
                    .map(|p| format!("{}={}", p.field, crate::mcp::config::access_name(p.access)))
                    .collect(),
            )
        })
        .collect()
}
