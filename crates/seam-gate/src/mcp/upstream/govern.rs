//! What seam makes of an upstream's tools: each definition compared with the accepted one,
//! its name checked, its schema closed and walked, each place the config declares (a path, a
//! destination, not a path) and what the tool is (classify) written into a [`ToolDecl`] the
//! toolbox checks like any other.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use seam_policy::{Capability, Decision, FileAccess};
use seam_toolbox::schema_walk::{self, LeafKind, SchemaError, location_text, parse_location};
use seam_toolbox::{
    DestinationParam, GateError, GovernedTool, PathParam, ToolDecl, check_decl_with,
};
use serde_json::Value;

use super::process::UpstreamServer;
use super::tool::{Pending, UpstreamTool};
use super::{ToolReport, ToolState, UpstreamError, UpstreamReport};
use crate::mcp::classify::classify;
use crate::mcp::config::{ParamUse, UpstreamConfig};
use crate::mcp::fingerprint::{AcceptedDefinitions, DefinitionStatus, ToolDefinition};

fn leak(s: String) -> &'static str {
    // Upstream tools are declared once, when the toolbox is built; a declaration names
    // itself with `&'static str` like every built-in tool.
    Box::leak(s.into_boxed_str())
}

/// The upstream's first line of description, for the model's prompt (at most 240 chars).
fn one_line(description: Option<&str>) -> String {
    let first = description
        .unwrap_or("")
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let clean: String = first
        .chars()
        .filter(|c| !c.is_control())
        .take(240)
        .collect();
    if clean.is_empty() {
        "(the upstream gave no description)".to_owned()
    } else {
        clean
    }
}

/// `schema` with `additionalProperties: false` on every object schema, as the toolbox
/// requires: a parameter the upstream would take but did not declare is refused by seam.
/// (The toolbox's one schema walk: every combinator, `$defs` and `$ref`.)
pub fn close_schema(schema: &mut Value) -> Result<(), SchemaError> {
    schema_walk::close_schema(schema)
}

/// The most bytes an upstream's tool name may have.
pub const MAX_TOOL_NAME: usize = 64;

/// An upstream's tool name: 1 to 64 of `A-Z a-z 0-9 _ . -`, not starting with a dot.
pub fn check_tool_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("the name is empty".to_owned());
    }
    if name.len() > MAX_TOOL_NAME {
        return Err(format!(
            "the name is {} bytes long, more than the {MAX_TOOL_NAME} a tool name may have",
            name.len()
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
    {
        return Err(format!(
            "the name has the character {:?}; a tool name is made of A-Z, a-z, 0-9, '_', '.' \
             and '-'",
            c
        ));
    }
    if name.starts_with('.') {
        return Err("the name starts with '.'".to_owned());
    }
    Ok(())
}

/// Does this upstream read files? Its config says, or: a path declared for any of its tools,
/// or a path-like string in any of its tools' schemas.
fn reads_files(cfg: &UpstreamConfig, defs: &[ToolDefinition]) -> bool {
    if let Some(said) = cfg.reads_files {
        return said;
    }
    let declared = cfg.tools.values().any(|t| !t.paths.is_empty())
        || cfg
            .params
            .values()
            .flat_map(|m| m.values())
            .any(|u| matches!(u, ParamUse::Path(_)));
    declared
        || defs.iter().any(|d| {
            schema_walk::leaves(&d.input_schema)
                .map(|ls| ls.iter().any(|l| l.kind == LeafKind::Path))
                // a schema seam cannot walk: count it as one that may name files
                .unwrap_or(true)
        })
}

/// Compares `defs` with the accepted ones and makes the governed tools.
pub(super) fn govern(
    cfg: &UpstreamConfig,
    server: Arc<UpstreamServer>,
    defs: Vec<ToolDefinition>,
    seam_home: &Path,
) -> Result<(Vec<Box<dyn GovernedTool>>, UpstreamReport), UpstreamError> {
    let accepted = AcceptedDefinitions::load(seam_home, &cfg.name)?;
    let first_sight = accepted.is_none();
    let accepted = match accepted {
        Some(a) => a,
        None => {
            let a = AcceptedDefinitions::from_definitions(&cfg.name, &defs);
            a.save(seam_home)?;
            a
        }
    };
    let mut tools: Vec<Box<dyn GovernedTool>> = Vec::new();
    let mut report = UpstreamReport {
        server: cfg.name.clone(),
        started: Ok(()),
        first_sight,
        tools: Vec::new(),
        notes: Vec::new(),
    };
    for name in cfg.tools.keys() {
        if !defs.iter().any(|d| &d.name == name) {
            // names are compared exactly: an entry for another spelling classifies nothing
            let near = defs
                .iter()
                .find(|d| d.name.trim().eq_ignore_ascii_case(name.trim()))
                .map(|d| {
                    format!(
                        " (it has {:?}: names are compared exactly, so that tool gets the \
                         server's class)",
                        d.name
                    )
                })
                .unwrap_or_default();
            report.notes.push(format!(
                "the config has [mcp.upstream.tools.{name}], and {:?} has no tool of that \
                 name{near}",
                cfg.name
            ));
        }
    }
    let files = reads_files(cfg, &defs);
    let mut taken: Vec<String> = Vec::new();
    for def in defs {
        let governed = format!("{}.{}", cfg.name, def.name);
        let refused_name = check_tool_name(&def.name)
            .err()
            .or_else(|| {
                crate::tools::BUILTIN_TOOL_NAMES
                    .contains(&governed.as_str())
                    .then(|| {
                        format!(
                            "its governed name {governed} is the name of a built-in tool; the \
                         built-in keeps it"
                        )
                    })
            })
            .or_else(|| {
                taken.contains(&governed).then(|| {
                    format!(
                        "{:?} lists two tools named {governed}; the first keeps the name",
                        cfg.name
                    )
                })
            });
        if let Some(why) = refused_name {
            report.tools.push(ToolReport {
                name: governed,
                state: ToolState::Withheld(format!("its name is refused: {why}")),
                class: None,
                destinations: Vec::new(),
                none_named: Default::default(),
            });
            continue;
        }
        taken.push(governed.clone());
        let status = accepted.status(&def);
        let (tool, state) = match status {
            DefinitionStatus::Accepted => match governed_tool(cfg, &server, &def, files) {
                Ok(t) => (Some(t), ToolState::Governed),
                Err(why) => (None, ToolState::Withheld(why)),
            },
            DefinitionStatus::Changed { changes, .. } => (
                Some(pending_tool(
                    cfg,
                    &server,
                    &def,
                    Pending::Changed(changes.clone()),
                )),
                ToolState::Changed(changes),
            ),
            DefinitionStatus::New => (
                Some(pending_tool(cfg, &server, &def, Pending::New)),
                ToolState::New,
            ),
        };
        let class =
            (state == ToolState::Governed).then(|| classify(cfg, &def.name, def.hints.as_ref()));
        if let Some(t) = tool {
            tools.push(Box::new(t));
        }
        let declared = cfg.tools.get(&def.name).filter(|_| class.is_some());
        report.tools.push(ToolReport {
            name: governed,
            state,
            class,
            destinations: declared
                .map(|t| {
                    t.destinations
                        .iter()
                        .map(|(place, form)| match form {
                            seam_toolbox::DestinationForm::Value => place.clone(),
                            seam_toolbox::DestinationForm::UrlHost => format!("host of {place}"),
                        })
                        .collect()
                })
                .unwrap_or_default(),
            none_named: declared.map(|t| t.none_named).unwrap_or_default(),
        });
    }
    Ok((tools, report))
}

fn governed_tool(
    cfg: &UpstreamConfig,
    server: &Arc<UpstreamServer>,
    def: &ToolDefinition,
    reads_files: bool,
) -> Result<UpstreamTool, String> {
    let mut schema = def.input_schema.clone();
    close_schema(&mut schema).map_err(|e| format!("its input schema cannot be governed: {e}"))?;
    // What the config says of each place: `tools.X.paths` (top-level) and `params` ("X/PLACE").
    let mut declared: BTreeMap<Vec<String>, ParamUse> = BTreeMap::new();
    if let Some(t) = cfg.tools.get(&def.name) {
        for (field, access) in &t.paths {
            declared.insert(vec![field.clone()], ParamUse::Path(*access));
        }
    }
    if let Some(places) = cfg.params.get(&def.name) {
        for (place, u) in places {
            declared.insert(parse_location(place), *u);
        }
    }
    let mut leaves = schema_walk::leaves(&schema)
        .map_err(|e| format!("its input schema cannot be governed: {e}"))?;
    // A path-like place is named first: it is the one most worth the operator's word.
    leaves.sort_by_key(|l| l.kind);
    let mut implicit_uris = Vec::new();
    for leaf in &leaves {
        let covered = declared.keys().any(|d| {
            d.len() <= leaf.location.len() && d.iter().zip(&leaf.location).all(|(a, b)| a == b)
        });
        if covered {
            continue;
        }
        let place = location_text(&leaf.location);
        let key = format!("\"{}/{place}\"", def.name);
        let (what, suggested) = match (leaf.kind, reads_files) {
            (LeafKind::Path, _) => ("looks like a path", "\"path-read\""),
            (LeafKind::Uri, true) => (
                "is a URI (a file: one names a path) and the upstream reads files",
                "\"path-read\"",
            ),
            (LeafKind::Uri, false) => {
                // An upstream that reads no files: a file: URI here is still admitted (read)
                // first, and any other URI goes through as it is.
                implicit_uris.push(place);
                continue;
            }
            (LeafKind::Unclassified, true) => (
                "is a string seam cannot classify (it may name a file) and the upstream reads \
                 files",
                "\"not-a-path\"",
            ),
            (LeafKind::Unclassified, false) => continue,
        };
        return Err(format!(
            "its parameter at /{place} {what}, and the config says nothing of it: add \
             [mcp.upstream.params] {key} = {suggested} (one of \"path-read\", \"path-write\", \
             \"path-source\", \"not-a-path\") to [[mcp.upstream]] {:?}",
            cfg.name
        ));
    }
    let mut paths: Vec<PathParam> = declared
        .iter()
        .filter_map(|(place, u)| match u {
            ParamUse::Path(access) => Some(PathParam {
                field: leak(location_text(place)),
                access: *access,
            }),
            ParamUse::NotAPath => None,
        })
        .collect();
    paths.extend(implicit_uris.into_iter().map(|place| PathParam {
        field: leak(place),
        access: seam_policy::Access::Owner(FileAccess::Read),
    }));
    let not_paths: Vec<String> = declared
        .iter()
        .filter(|(_, u)| **u == ParamUse::NotAPath)
        .map(|(place, _)| location_text(place))
        .collect();
    let writes = paths
        .iter()
        .any(|p| p.access == seam_policy::Access::Owner(FileAccess::Write));
    // What the tool is: policy (classify), from the config, else the server and its hints.
    let class = classify(cfg, &def.name, def.hints.as_ref());
    let decl = ToolDecl {
        name: leak(format!("{}.{}", cfg.name, def.name)),
        version: leak(format!("mcp-{}", &def.fingerprint()[..12])),
        description: leak(one_line(def.description.as_deref())),
        schema,
        capability: base_capability(class.egress(), writes),
        reads: !(writes || class.changes()),
        paths,
        taints: class.reads(),
        egress: class.egress(),
        // where its data goes, as the config says (the toolbox checks each is a place of the
        // schema, and that the tool has egress)
        destinations: cfg
            .tools
            .get(&def.name)
            .map(|t| {
                t.destinations
                    .iter()
                    .map(|(place, form)| DestinationParam {
                        field: leak(place.clone()),
                        form: *form,
                    })
                    .collect()
            })
            .unwrap_or_default(),
        // what a call naming none of them reaches, as the config says (else nobody knows)
        none_named: cfg
            .tools
            .get(&def.name)
            .map(|t| t.none_named)
            .unwrap_or_default(),
    };
    match check_decl_with(&decl, &not_paths) {
        Ok(()) => {}
        Err(GateError::UndeclaredPath { field, .. }) => {
            return Err(format!(
                "its parameter at /{field} looks like a path and the config declares no access \
                 for it: add [mcp.upstream.params] \"{}/{field}\" = \"path-read\" (or \
                 \"path-write\", \"path-source\", \"not-a-path\")",
                def.name
            ));
        }
        Err(e) => return Err(e.to_string()),
    }
    if let Err(e) = jsonschema::validator_for(&decl.schema) {
        return Err(format!("its input schema does not compile: {e}"));
    }
    Ok(UpstreamTool {
        decl,
        upstream_name: def.name.clone(),
        decision: class.decision,
        pending: None,
        server: server.clone(),
        not_paths,
        reads_files,
    })
}

/// A tool whose definition is not accepted: it shows none of the upstream's text, takes any
/// params, and refuses every call with what changed.
fn pending_tool(
    cfg: &UpstreamConfig,
    server: &Arc<UpstreamServer>,
    def: &ToolDefinition,
    pending: Pending,
) -> UpstreamTool {
    let what = match &pending {
        Pending::Changed(_) => "changed since it was accepted",
        Pending::New => "new since the server was accepted",
    };
    let decl = ToolDecl {
        name: leak(format!("{}.{}", cfg.name, def.name)),
        version: leak(format!("mcp-{}", &def.fingerprint()[..12])),
        description: leak(format!(
            "(refused: this upstream tool's definition is {what}; the operator can review \
             and accept it with `seam mcp accept {}`)",
            cfg.name
        )),
        schema: serde_json::json!({}),
        capability: base_capability(cfg.egress, false),
        reads: true,
        paths: Vec::new(),
        taints: true,
        egress: cfg.egress,
        destinations: Vec::new(),
        none_named: crate::NoneNamed::Unknown,
    };
    UpstreamTool {
        decl,
        upstream_name: def.name.clone(),
        decision: Decision::Deny,
        pending: Some(pending),
        server: server.clone(),
        not_paths: Vec::new(),
        reads_files: true,
    }
}

/// The policy capability an upstream tool is also held to (the policy's capabilities are a
/// fixed list; the server's own decision comes from the config on top of it): a server that
/// reaches the network answers to `web.search`, a tool that writes to `filesystem.write`,
/// anything else to `filesystem.read` (an upstream's result is outside content read in).
fn base_capability(egress: bool, writes: bool) -> Capability {
    if egress {
        Capability::WebSearch
    } else if writes {
        Capability::FilesystemWrite
    } else {
        Capability::FilesystemRead
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_become_one_clean_line() {
        assert_eq!(
            one_line(Some("\n  Reads a file.\x1b[2J\nMore text")),
            "Reads a file.[2J"
        );
        assert_eq!(one_line(None), "(the upstream gave no description)");
    }
}
