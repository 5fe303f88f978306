//! `[[mcp.upstream]]` in the gate's config file: the MCP servers the gate starts and governs.
//!
//! ```toml
//! [[mcp.upstream]]
//! name = "fs"                               # tools become "fs.<tool>"; [a-z0-9_-], 1..=32
//! command = "mcp-server-filesystem"         # a name on PATH or an absolute path
//! args = ["/home/me/notes"]
//! env = { GITHUB_TOKEN = "keeper:github" }  # values are keeper handles, never values
//! capability = "allow"                      # allow | ask | deny for every tool (default allow)
//! egress = false                            # required: does it reach the network?
//! timeout_s = 30                            # one call, seconds (default 30, at most 300)
//! start_timeout_s = 20                      # its start, seconds (default 20, at most 300)
//! reads_files = true                        # can it read files? (default: see below)
//!
//! [mcp.upstream.tools.read_text_file]       # per tool: optional
//! capability = "allow"                      # overrides the server's
//! effects = ["read"]                        # what it is: read | egress | change (classify)
//! paths = { path = "read" }                 # top-level path params: read | write | source
//!
//! [mcp.upstream.tools.send_email]
//! effects = ["egress", "change"]
//! destinations = ["recipients", "cc", "bcc"] # where its data goes: places in its params;
//!                                           # in a tainted turn each value there must be
//!                                           # endorsed (named by the operator, or allowed)
//! [mcp.upstream.tools.create_event]
//! effects = ["egress", "change"]
//! destinations = ["participants"]
//! none_named = "no-one-new"                 # a call naming none of them reaches nobody new
//!                                           # (default "unknown": refused when tainted)
//! [mcp.upstream.tools.fetch]
//! effects = ["read", "egress"]
//! destinations = [{ host_of = "url" }]      # the host of the URL at that place
//!
//! [mcp.upstream.params]                     # any place in a tool's params, "TOOL/PLACE"
//! "read_note/req/file_name" = "path-read"   # path-read | path-write | path-source
//! "search/query" = "not-a-path"             # a string that is not a path
//! "tag_all/tags/*" = "not-a-path"           # `*`: any array item or object key
//! ```
//!
//! A PLACE is where a value sits in the tool's params, as the segments of a JSON pointer
//! below the root (`~1` for a `/` in a name, `~0` for a `~`), `*` standing for any array item
//! or any key of an object; seam's messages name each place in this form.
//!
//! An upstream tool whose input schema has a path-like string anywhere (by its name, e.g.
//! `path`, `file_name`, `location`, `*_dir`, or its `format`, e.g. `path`; a `uri`/`url` or
//! `format: uri` is one when the upstream reads files) without a declaration is withheld: it
//! never enters the toolbox. In an upstream that reads files, so is a tool with a string
//! seam cannot classify (not path-like, not a fixed value, not a date or an address), until
//! the config says what it is. An upstream reads files when `reads_files = true`, or, with
//! no `reads_files`, when the config declares a path for any of its tools or any of its tools'
//! schemas has a path-like string.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::time::Duration;

use seam_keeper::KeeperHandle;
use seam_policy::strict_toml::{Source, entries_in_order, suggestion, type_name};
use seam_policy::{Access, Decision, FileAccess};
use toml::de::{DeTable, DeValue};

use super::classify::{EFFECT_NAMES, Effect};
use crate::config::{ConfigError, quoted};

/// The default and the largest `timeout_s` of one upstream call.
pub const DEFAULT_UPSTREAM_TIMEOUT: Duration = Duration::from_secs(30);
const MAX_UPSTREAM_TIMEOUT_S: f64 = 300.0;

/// `[mcp]`: the upstream servers, in file order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct McpConfig {
    pub upstreams: Vec<UpstreamConfig>,
}

/// One `[[mcp.upstream]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct UpstreamConfig {
    pub name: String,
    pub command: String,
    pub args: Vec<String>,
    /// Environment of the server: variable → keeper handle (resolved when it starts).
    pub env: BTreeMap<String, KeeperHandle>,
    /// The decision for every tool of this server (a tool's own entry overrides it).
    pub capability: Decision,
    /// The server reaches the network: its tools are closed in a tainted turn.
    pub egress: bool,
    pub timeout: Duration,
    /// How long its start (spawn, handshake, listing its tools) may take.
    pub start_timeout: Duration,
    /// Per-tool settings, by the upstream's own tool name.
    pub tools: BTreeMap<String, UpstreamToolConfig>,
    /// `reads_files`: `None` when the config does not say (seam infers it).
    pub reads_files: Option<bool>,
    /// `[mcp.upstream.params]`: by tool, by place (segments joined by `/`), what it is.
    pub params: BTreeMap<String, BTreeMap<String, ParamUse>>,
}

/// What a place in a tool's params is, as `[mcp.upstream.params]` declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamUse {
    /// A path, with what the tool does with it.
    Path(Access),
    /// Not a path: the value goes to the upstream as it is.
    NotAPath,
}

/// The name of a [`ParamUse`] in the config file.
pub fn param_use_name(u: ParamUse) -> &'static str {
    match u {
        ParamUse::Path(Access::Owner(FileAccess::Read)) => "path-read",
        ParamUse::Path(Access::Owner(FileAccess::Write)) => "path-write",
        ParamUse::Path(Access::Source) => "path-source",
        ParamUse::NotAPath => "not-a-path",
    }
}

/// `[mcp.upstream.tools.NAME]`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UpstreamToolConfig {
    pub capability: Option<Decision>,
    /// `effects`: what the tool is (see [`classify`](super::classify)); `None` when the
    /// config does not say, and the server's class, stricter by its annotations, holds.
    pub effects: Option<BTreeSet<Effect>>,
    /// Path-like parameter → what the tool does with it.
    pub paths: BTreeMap<String, Access>,
    /// `destinations`: the places (segments joined by `/`, `*` for any item or key) whose
    /// values are where the tool's data goes, each with its form.
    pub destinations: Vec<(String, seam_toolbox::DestinationForm)>,
    /// `none_named`: what a call that names none of `destinations` reaches ("unknown", the
    /// default: refused in a tainted turn; "no-one-new": nothing goes anywhere new).
    pub none_named: seam_toolbox::NoneNamed,
}

impl UpstreamConfig {
    /// The decision for one of this server's tools.
    pub fn decision_for(&self, tool: &str) -> Decision {
        self.tools
            .get(tool)
            .and_then(|t| t.capability)
            .unwrap_or(self.capability)
    }
}

const MCP_KEYS: &[&str] = &["upstream"];
const UPSTREAM_KEYS: &[&str] = &[
    "name",
    "command",
    "args",
    "env",
    "capability",
    "egress",
    "timeout_s",
    "start_timeout_s",
    "tools",
    "reads_files",
    "params",
];
const PARAM_USES: &[&str] = &["path-read", "path-write", "path-source", "not-a-path"];
const TOOL_KEYS: &[&str] = &[
    "capability",
    "effects",
    "paths",
    "destinations",
    "none_named",
];
const NONE_NAMED: &[&str] = &["unknown", "no-one-new"];
const DECISIONS: &[&str] = &["allow", "ask", "deny"];
const ACCESSES: &[&str] = &["read", "write", "source"];

/// The name of an access in the config file.
pub fn access_name(access: Access) -> &'static str {
    match access {
        Access::Owner(FileAccess::Read) => "read",
        Access::Owner(FileAccess::Write) => "write",
        Access::Source => "source",
    }
}

pub(crate) fn parse_mcp(
    src: &Source<'_>,
    value: &toml::Spanned<DeValue<'_>>,
) -> Result<McpConfig, ConfigError> {
    let DeValue::Table(table) = value.get_ref() else {
        return Err(src.error(
            value.span(),
            Some("mcp".into()),
            format!(
                "bad value for \"mcp\": expected a table ([[mcp.upstream]]), found {}",
                type_name(value.get_ref())
            ),
        ));
    };
    let mut config = McpConfig::default();
    for (key, value) in entries_in_order(table) {
        let name: &str = key.get_ref();
        if name != "upstream" {
            return Err(src.error(
                key.span(),
                Some(format!("mcp.{name}")),
                format!(
                    "unknown key \"{name}\" in [mcp]{}; the keys are {}",
                    suggestion(name, MCP_KEYS),
                    quoted(MCP_KEYS)
                ),
            ));
        }
        let DeValue::Array(items) = value.get_ref() else {
            return Err(src.error(
                value.span(),
                Some("mcp.upstream".into()),
                format!(
                    "bad value for \"upstream\" in [mcp]: expected an array of tables \
                     ([[mcp.upstream]]), found {}",
                    type_name(value.get_ref())
                ),
            ));
        };
        for item in items.iter() {
            let DeValue::Table(t) = item.get_ref() else {
                return Err(src.error(
                    item.span(),
                    Some("mcp.upstream".into()),
                    format!(
                        "bad value in \"upstream\": expected a table, found {}",
                        type_name(item.get_ref())
                    ),
                ));
            };
            let upstream = parse_upstream(src, item.span(), t)?;
            if config.upstreams.iter().any(|u| u.name == upstream.name) {
                return Err(src.error(
                    item.span(),
                    Some("mcp.upstream.name".into()),
                    format!("two [[mcp.upstream]] are named \"{}\"", upstream.name),
                ));
            }
            config.upstreams.push(upstream);
        }
    }
    Ok(config)
}

/// A server's name: it prefixes its tools' names, so it is short and plain.
pub fn check_upstream_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 32
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
        && name.as_bytes()[0].is_ascii_lowercase();
    if ok {
        Ok(())
    } else {
        Err(format!(
            "\"{name}\" is not a server name: 1 to 32 of a-z, 0-9, '_' and '-', starting with a letter"
        ))
    }
}

fn parse_decision(word: &str) -> Option<Decision> {
    match word {
        "allow" => Some(Decision::Allow),
        "ask" => Some(Decision::Ask),
        "deny" => Some(Decision::Deny),
        _ => None,
    }
}

fn parse_access(word: &str) -> Option<Access> {
    match word {
        "read" => Some(Access::Owner(FileAccess::Read)),
        "write" => Some(Access::Owner(FileAccess::Write)),
        "source" => Some(Access::Source),
        _ => None,
    }
}

fn parse_upstream(
    src: &Source<'_>,
    span: Range<usize>,
    table: &DeTable<'_>,
) -> Result<UpstreamConfig, ConfigError> {
    let mut name = None;
    let mut command = None;
    let mut args = Vec::new();
    let mut env = BTreeMap::new();
    let mut capability = Decision::Allow;
    let mut egress = None;
    let mut timeout = DEFAULT_UPSTREAM_TIMEOUT;
    let mut start_timeout = super::upstream::START_TIMEOUT;
    let mut tools = BTreeMap::new();
    let mut reads_files = None;
    let mut params: BTreeMap<String, BTreeMap<String, ParamUse>> = BTreeMap::new();
    for (key, value) in entries_in_order(table) {
        let k: &str = key.get_ref();
        let dotted = format!("mcp.upstream.{k}");
        let bad = |message: String| src.error(value.span(), Some(dotted.clone()), message);
        let string = |what: &str| {
            value.get_ref().as_str().map(str::to_owned).ok_or_else(|| {
                bad(format!(
                    "bad value for \"{k}\" in [[mcp.upstream]]: expected {what}, found {}",
                    type_name(value.get_ref())
                ))
            })
        };
        match k {
            "name" => {
                let n = string("a name (a string)")?;
                check_upstream_name(&n)
                    .map_err(|why| bad(format!("bad value for \"name\": {why}")))?;
                name = Some(n);
            }
            "command" => {
                let c = string("a command (a string)")?;
                if c.is_empty() || c.contains('\0') {
                    return Err(bad("bad value for \"command\": it is empty".to_owned()));
                }
                command = Some(c);
            }
            "args" => {
                let DeValue::Array(items) = value.get_ref() else {
                    return Err(bad(format!(
                        "bad value for \"args\": expected an array of strings, found {}",
                        type_name(value.get_ref())
                    )));
                };
                for item in items.iter() {
                    let Some(s) = item.get_ref().as_str() else {
                        return Err(bad(format!(
                            "bad value in \"args\": expected a string, found {}",
                            type_name(item.get_ref())
                        )));
                    };
                    args.push(s.to_owned());
                }
            }
            "env" => {
                let DeValue::Table(vars) = value.get_ref() else {
                    return Err(bad(format!(
                        "bad value for \"env\": expected a table of keeper handles, found {}",
                        type_name(value.get_ref())
                    )));
                };
                for (var, handle) in entries_in_order(vars) {
                    let var: &str = var.get_ref();
                    let text = handle.get_ref().as_str().unwrap_or("");
                    let parsed = KeeperHandle::parse(text).map_err(|_| {
                        src.error(
                            handle.span(),
                            Some(format!("mcp.upstream.env.{var}")),
                            format!(
                                "bad value for \"{var}\" in env: it is not a keeper handle. An \
                                 upstream's environment comes from the keeper: store the value \
                                 with `seam secret set NAME` (from stdin) and write {var} = \
                                 \"keeper:NAME\" (the value written here is not shown)"
                            ),
                        )
                    })?;
                    env.insert(var.to_owned(), parsed);
                }
            }
            "capability" => {
                let word = string("one of \"allow\", \"ask\", \"deny\"")?;
                capability = parse_decision(&word).ok_or_else(|| {
                    bad(format!(
                        "bad value for \"capability\": \"{word}\" is not one of {}{}",
                        quoted(DECISIONS),
                        suggestion(&word, DECISIONS)
                    ))
                })?;
            }
            "egress" => {
                let DeValue::Boolean(b) = value.get_ref() else {
                    return Err(bad(format!(
                        "bad value for \"egress\": expected true or false, found {}",
                        type_name(value.get_ref())
                    )));
                };
                egress = Some(*b);
            }
            "timeout_s" | "start_timeout_s" => {
                let secs = match value.get_ref() {
                    DeValue::Integer(i) => i.as_str().parse::<f64>().ok(),
                    DeValue::Float(f) => f.as_str().parse::<f64>().ok(),
                    _ => None,
                }
                .filter(|s| s.is_finite() && *s > 0.0 && *s <= MAX_UPSTREAM_TIMEOUT_S);
                let Some(secs) = secs else {
                    return Err(bad(format!(
                        "bad value for \"{k}\": expected a number of seconds greater \
                         than 0 and at most {MAX_UPSTREAM_TIMEOUT_S}"
                    )));
                };
                if k == "timeout_s" {
                    timeout = Duration::from_secs_f64(secs);
                } else {
                    start_timeout = Duration::from_secs_f64(secs);
                }
            }
            "reads_files" => {
                let DeValue::Boolean(b) = value.get_ref() else {
                    return Err(bad(format!(
                        "bad value for \"reads_files\": expected true or false, found {}",
                        type_name(value.get_ref())
                    )));
                };
                reads_files = Some(*b);
            }
            "params" => {
                let DeValue::Table(entries) = value.get_ref() else {
                    return Err(bad(format!(
                        "bad value for \"params\": expected a table \
                         ([mcp.upstream.params] \"TOOL/PLACE\" = \"path-read\"), found {}",
                        type_name(value.get_ref())
                    )));
                };
                for (k, use_) in entries_in_order(entries) {
                    let k: &str = k.get_ref();
                    let here = |message: String| {
                        src.error(
                            use_.span(),
                            Some(format!("mcp.upstream.params.{k}")),
                            message,
                        )
                    };
                    let Some((tool, place)) = k.split_once('/').filter(|(t, p)| {
                        !t.is_empty() && !p.is_empty() && !p.split('/').any(str::is_empty)
                    }) else {
                        return Err(here(format!(
                            "bad key \"{k}\" in [mcp.upstream.params]: expected \"TOOL/PLACE\", \
                             the tool's name, then where the value is in its params \
                             (\"read_note/req/file_name\", \"tag_all/tags/*\")"
                        )));
                    };
                    let word = use_.get_ref().as_str().unwrap_or("");
                    let parsed = parse_param_use(word).ok_or_else(|| {
                        here(format!(
                            "bad value for \"{k}\" in [mcp.upstream.params]: expected one of {}{}",
                            quoted(PARAM_USES),
                            suggestion(word, PARAM_USES)
                        ))
                    })?;
                    params
                        .entry(tool.to_owned())
                        .or_default()
                        .insert(place.to_owned(), parsed);
                }
            }
            "tools" => {
                let DeValue::Table(per_tool) = value.get_ref() else {
                    return Err(bad(format!(
                        "bad value for \"tools\": expected a table of tables \
                         ([mcp.upstream.tools.NAME]), found {}",
                        type_name(value.get_ref())
                    )));
                };
                for (tool, settings) in entries_in_order(per_tool) {
                    let tool: &str = tool.get_ref();
                    let parsed = parse_tool(src, tool, settings)?;
                    tools.insert(tool.to_owned(), parsed);
                }
            }
            other => {
                return Err(src.error(
                    key.span(),
                    Some(dotted),
                    format!(
                        "unknown key \"{other}\" in [[mcp.upstream]]{}; the keys are {}",
                        suggestion(other, UPSTREAM_KEYS),
                        quoted(UPSTREAM_KEYS)
                    ),
                ));
            }
        }
    }
    let missing = |key: &str, example: &str| {
        src.error(
            span.clone(),
            Some(format!("mcp.upstream.{key}")),
            format!("[[mcp.upstream]] needs {key}, e.g. {example}"),
        )
    };
    let name = name.ok_or_else(|| missing("name", "name = \"fs\""))?;
    let command = command.ok_or_else(|| missing("command", "command = \"mcp-server-time\""))?;
    let egress = egress.ok_or_else(|| {
        missing(
            "egress",
            "egress = false (say whether the server reaches the network: \
             one that does is closed in a tainted turn)",
        )
    })?;
    Ok(UpstreamConfig {
        name,
        command,
        args,
        env,
        capability,
        egress,
        timeout,
        start_timeout,
        tools,
        reads_files,
        params,
    })
}

fn parse_param_use(word: &str) -> Option<ParamUse> {
    match word {
        "path-read" => Some(ParamUse::Path(Access::Owner(FileAccess::Read))),
        "path-write" => Some(ParamUse::Path(Access::Owner(FileAccess::Write))),
        "path-source" => Some(ParamUse::Path(Access::Source)),
        "not-a-path" => Some(ParamUse::NotAPath),
        _ => None,
    }
}

fn parse_tool(
    src: &Source<'_>,
    tool: &str,
    value: &toml::Spanned<DeValue<'_>>,
) -> Result<UpstreamToolConfig, ConfigError> {
    let DeValue::Table(table) = value.get_ref() else {
        return Err(src.error(
            value.span(),
            Some(format!("mcp.upstream.tools.{tool}")),
            format!(
                "bad value for tool \"{tool}\": expected a table, found {}",
                type_name(value.get_ref())
            ),
        ));
    };
    let mut out = UpstreamToolConfig::default();
    for (key, value) in entries_in_order(table) {
        let k: &str = key.get_ref();
        let dotted = format!("mcp.upstream.tools.{tool}.{k}");
        match k {
            "capability" => {
                let word = value.get_ref().as_str().unwrap_or("");
                out.capability = Some(parse_decision(word).ok_or_else(|| {
                    src.error(
                        value.span(),
                        Some(dotted.clone()),
                        format!(
                            "bad value for \"capability\" of tool \"{tool}\": expected one of {}",
                            quoted(DECISIONS)
                        ),
                    )
                })?);
            }
            "effects" => {
                let bad = |at: Range<usize>, found: String| {
                    src.error(
                        at,
                        Some(dotted.clone()),
                        format!(
                            "bad value for \"effects\" of tool \"{tool}\": expected a list of \
                             {} (read: its result taints the turn; egress: it reaches the \
                             world, and is refused in a tainted turn; change: it changes \
                             state, and a call asks), found {found}",
                            quoted(EFFECT_NAMES)
                        ),
                    )
                };
                let DeValue::Array(items) = value.get_ref() else {
                    return Err(bad(value.span(), type_name(value.get_ref()).to_owned()));
                };
                let mut effects = BTreeSet::new();
                for item in items.iter() {
                    let word = item.get_ref().as_str();
                    let Some(effect) = word.and_then(Effect::parse) else {
                        let found = match word {
                            Some(w) => format!("\"{w}\"{}", suggestion(w, EFFECT_NAMES)),
                            None => type_name(item.get_ref()).to_owned(),
                        };
                        return Err(bad(item.span(), found));
                    };
                    if !effects.insert(effect) {
                        return Err(bad(item.span(), format!("\"{}\" twice", effect.as_str())));
                    }
                }
                out.effects = Some(effects);
            }
            "destinations" => {
                let bad = |at: Range<usize>, found: String| {
                    src.error(
                        at,
                        Some(dotted.clone()),
                        format!(
                            "bad value for \"destinations\" of tool \"{tool}\": expected a list of \
                             places in its params whose values are where its data goes \
                             (\"recipient\", \"to/*\"), or {{ host_of = \"url\" }} for the host \
                             of the URL at a place; found {found}"
                        ),
                    )
                };
                let DeValue::Array(items) = value.get_ref() else {
                    return Err(bad(value.span(), type_name(value.get_ref()).to_owned()));
                };
                for item in items.iter() {
                    let (place, form) = match item.get_ref() {
                        DeValue::String(p) => (p.to_string(), seam_toolbox::DestinationForm::Value),
                        DeValue::Table(t) => {
                            let entries = entries_in_order(t);
                            match entries.as_slice() {
                                [(k, v)] if *k.get_ref() == "host_of" => match v.get_ref().as_str()
                                {
                                    Some(p) => {
                                        (p.to_owned(), seam_toolbox::DestinationForm::UrlHost)
                                    }
                                    None => {
                                        return Err(bad(
                                            v.span(),
                                            format!("host_of = {}", type_name(v.get_ref())),
                                        ));
                                    }
                                },
                                _ => {
                                    return Err(bad(
                                        item.span(),
                                        "a table other than { host_of = \"PLACE\" }".to_owned(),
                                    ));
                                }
                            }
                        }
                        other => return Err(bad(item.span(), type_name(other).to_owned())),
                    };
                    if place.is_empty() || place.split('/').any(str::is_empty) {
                        return Err(bad(item.span(), format!("\"{place}\", which is no place")));
                    }
                    if out.destinations.iter().any(|(p, _)| *p == place) {
                        return Err(bad(item.span(), format!("\"{place}\" twice")));
                    }
                    out.destinations.push((place, form));
                }
            }
            "none_named" => {
                let word = value.get_ref().as_str();
                out.none_named = match word {
                    Some("unknown") => seam_toolbox::NoneNamed::Unknown,
                    Some("no-one-new") => seam_toolbox::NoneNamed::NoOneNew,
                    _ => {
                        let found = match word {
                            Some(w) => format!("\"{w}\"{}", suggestion(w, NONE_NAMED)),
                            None => type_name(value.get_ref()).to_owned(),
                        };
                        return Err(src.error(
                            value.span(),
                            Some(dotted.clone()),
                            format!(
                                "bad value for \"none_named\" of tool \"{tool}\": expected one \
                                 of {} (what a call that names none of its destinations \
                                 reaches: \"unknown\" is refused in a tainted turn, \
                                 \"no-one-new\" passes the destination rule), found {found}",
                                quoted(NONE_NAMED)
                            ),
                        ));
                    }
                };
            }
            "paths" => {
                let DeValue::Table(paths) = value.get_ref() else {
                    return Err(src.error(
                        value.span(),
                        Some(dotted),
                        format!(
                            "bad value for \"paths\" of tool \"{tool}\": expected a table \
                             {{ PARAM = \"read\" | \"write\" | \"source\" }}, found {}",
                            type_name(value.get_ref())
                        ),
                    ));
                };
                for (param, access) in entries_in_order(paths) {
                    let param: &str = param.get_ref();
                    let word = access.get_ref().as_str().unwrap_or("");
                    let parsed = parse_access(word).ok_or_else(|| {
                        src.error(
                            access.span(),
                            Some(format!("mcp.upstream.tools.{tool}.paths.{param}")),
                            format!(
                                "bad access for \"{param}\" of tool \"{tool}\": expected one of \
                                 {} (read: an owner's file, opened for reading; write: an \
                                 owner's file, admitted for writing; source: a file or directory \
                                 of the workspace)",
                                quoted(ACCESSES)
                            ),
                        )
                    })?;
                    out.paths.insert(param.to_owned(), parsed);
                }
            }
            other => {
                return Err(src.error(
                    key.span(),
                    Some(dotted),
                    format!(
                        "unknown key \"{other}\" for tool \"{tool}\"{}; the keys are {}",
                        suggestion(other, TOOL_KEYS),
                        quoted(TOOL_KEYS)
                    ),
                ));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GateConfig;
    use std::path::Path;

    fn parse(text: &str) -> Result<GateConfig, ConfigError> {
        GateConfig::from_toml_str(text, Path::new("config.toml"))
    }

    #[test]
    fn an_upstream_parses_with_its_tools() {
        let c = parse(
            "[[mcp.upstream]]\nname = \"fs\"\ncommand = \"mcp-server-filesystem\"\n\
             args = [\"/tmp\"]\nenv = { TOKEN = \"keeper:tok\" }\ncapability = \"ask\"\n\
             egress = false\ntimeout_s = 5\n\
             [mcp.upstream.tools.read_text_file]\ncapability = \"allow\"\n\
             paths = { path = \"read\" }\n\
             [[mcp.upstream]]\nname = \"time\"\ncommand = \"mcp-server-time\"\negress = true\n",
        )
        .unwrap();
        let ups = &c.mcp.upstreams;
        assert_eq!(ups.len(), 2);
        let fs = &ups[0];
        assert_eq!(fs.name, "fs");
        assert_eq!(fs.args, vec!["/tmp".to_owned()]);
        assert_eq!(fs.env["TOKEN"].name(), "tok");
        assert_eq!(fs.capability, Decision::Ask);
        assert_eq!(fs.decision_for("read_text_file"), Decision::Allow);
        assert_eq!(fs.decision_for("write_file"), Decision::Ask);
        assert_eq!(
            fs.tools["read_text_file"].paths["path"],
            Access::Owner(FileAccess::Read)
        );
        assert_eq!(fs.timeout, Duration::from_secs(5));
        assert_eq!(fs.start_timeout, super::super::upstream::START_TIMEOUT);
        let slow = parse(
            "[[mcp.upstream]]\nname = \"s\"\ncommand = \"x\"\negress = false\nstart_timeout_s = 90\n",
        )
        .unwrap();
        assert_eq!(slow.mcp.upstreams[0].start_timeout, Duration::from_secs(90));
        let e = parse(
            "[[mcp.upstream]]\nname = \"s\"\ncommand = \"x\"\negress = false\nstart_timeout_s = 0\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("start_timeout_s"), "{e}");
        assert!(ups[1].egress);
        assert_eq!(ups[1].capability, Decision::Allow);
        assert_eq!(fs.reads_files, None);
    }

    #[test]
    fn params_name_a_tool_and_a_place() {
        let c = parse(
            "[[mcp.upstream]]\nname = \"m\"\ncommand = \"x\"\negress = false\nreads_files = true\n\
             [mcp.upstream.params]\n\"read_model/req/file_name\" = \"path-read\"\n\
             \"tag/tags/*\" = \"not-a-path\"\n",
        )
        .unwrap();
        let m = &c.mcp.upstreams[0];
        assert_eq!(m.reads_files, Some(true));
        assert_eq!(
            m.params["read_model"]["req/file_name"],
            ParamUse::Path(Access::Owner(FileAccess::Read))
        );
        assert_eq!(m.params["tag"]["tags/*"], ParamUse::NotAPath);
        let err = |t: &str| parse(t).unwrap_err().to_string();
        let head = "[[mcp.upstream]]\nname = \"m\"\ncommand = \"x\"\negress = false\n";
        let e = err(&format!(
            "{head}[mcp.upstream.params]\n\"read_model\" = \"path-read\"\n"
        ));
        assert!(e.contains("TOOL/PLACE"), "{e}");
        let e = err(&format!(
            "{head}[mcp.upstream.params]\n\"t/a\" = \"path\"\n"
        ));
        assert!(e.contains("not-a-path"), "{e}");
    }

    #[test]
    fn bad_upstreams_name_the_key() {
        let err = |t: &str| parse(t).unwrap_err().to_string();
        let e = err("[[mcp.upstream]]\nname = \"fs\"\ncommand = \"x\"\n");
        assert!(e.contains("egress"), "{e}");
        let e = err("[[mcp.upstream]]\nname = \"Fs!\"\ncommand = \"x\"\negress = false\n");
        assert!(e.contains("not a server name"), "{e}");
        let e =
            err("[[mcp.upstream]]\nname = \"fs\"\ncommand = \"x\"\negress = false\ncomand = 1\n");
        assert!(e.contains("did you mean \"command\""), "{e}");
        let e = err(
            "[[mcp.upstream]]\nname = \"fs\"\ncommand = \"x\"\negress = false\n\
             env = { K = \"AKIAIOSFODNN7EXAMPLE\" }\n",
        );
        assert!(!e.contains("AKIAIOSFODNN7EXAMPLE"), "{e}");
        assert!(e.contains("keeper"), "{e}");
        let e = err(
            "[[mcp.upstream]]\nname = \"fs\"\ncommand = \"x\"\negress = false\n\
             [mcp.upstream.tools.t]\npaths = { path = \"everything\" }\n",
        );
        assert!(e.contains("read"), "{e}");
        let e = err(
            "[[mcp.upstream]]\nname = \"a\"\ncommand = \"x\"\negress = false\n\
             [[mcp.upstream]]\nname = \"a\"\ncommand = \"y\"\negress = false\n",
        );
        assert!(e.contains("two [[mcp.upstream]]"), "{e}");
        let e = err("[mcp]\nupstreams = 1\n");
        assert!(e.contains("did you mean \"upstream\""), "{e}");
    }

    #[test]
    fn destinations_are_places_or_the_host_of_one() {
        use seam_toolbox::DestinationForm;
        let head = "[[mcp.upstream]]\nname = \"b\"\ncommand = \"x\"\negress = true\n";
        let c = parse(&format!(
            "{head}[mcp.upstream.tools.send]\ndestinations = [\"to\", \"cc/*\", \
             {{ host_of = \"url\" }}]\n"
        ))
        .unwrap();
        assert_eq!(
            c.mcp.upstreams[0].tools["send"].destinations,
            vec![
                ("to".to_owned(), DestinationForm::Value),
                ("cc/*".to_owned(), DestinationForm::Value),
                ("url".to_owned(), DestinationForm::UrlHost),
            ]
        );
        let err = |t: &str| parse(&format!("{head}{t}")).unwrap_err().to_string();
        let e = err("[mcp.upstream.tools.send]\ndestinations = \"to\"\n");
        assert!(e.contains("expected a list of places"), "{e}");
        let e = err("[mcp.upstream.tools.send]\ndestinations = [\"to\", \"to\"]\n");
        assert!(e.contains("twice"), "{e}");
        let e = err("[mcp.upstream.tools.send]\ndestinations = [\"a//b\"]\n");
        assert!(e.contains("no place"), "{e}");
        let e = err("[mcp.upstream.tools.send]\ndestinations = [{ host = \"url\" }]\n");
        assert!(e.contains("host_of"), "{e}");
        let e = err("[mcp.upstream.tools.send]\ndestination = [\"to\"]\n");
        assert!(e.contains("did you mean \"destinations\""), "{e}");
    }

    #[test]
    fn none_named_is_unknown_unless_the_config_says_no_one_new() {
        use seam_toolbox::NoneNamed;
        let head = "[[mcp.upstream]]\nname = \"b\"\ncommand = \"x\"\negress = true\n";
        let c = parse(&format!(
            "{head}[mcp.upstream.tools]\nevent = {{ destinations = [\"to\"], none_named = \
             \"no-one-new\" }}\nsend = {{ destinations = [\"to\"] }}\n"
        ))
        .unwrap();
        let tools = &c.mcp.upstreams[0].tools;
        assert_eq!(tools["event"].none_named, NoneNamed::NoOneNew);
        assert_eq!(tools["send"].none_named, NoneNamed::Unknown);
        let e = parse(&format!(
            "{head}[mcp.upstream.tools.event]\nnone_named = \"no-one-nw\"\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains("did you mean \"no-one-new\""), "{e}");
        assert!(e.contains("none_named"), "{e}");
        let e = parse(&format!(
            "{head}[mcp.upstream.tools.event]\nnone_named = true\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains("expected one of"), "{e}");
    }

    #[test]
    fn effects_are_a_list_of_known_words() {
        let head = "[[mcp.upstream]]\nname = \"b\"\ncommand = \"x\"\negress = true\n";
        let c = parse(&format!(
            "{head}[mcp.upstream.tools]\nsend = {{ effects = [\"change\", \"egress\"] }}\n\
             day = {{ effects = [] }}\n"
        ))
        .unwrap();
        let b = &c.mcp.upstreams[0];
        assert_eq!(
            b.tools["send"].effects,
            Some(BTreeSet::from([Effect::Egress, Effect::Change]))
        );
        assert_eq!(b.tools["day"].effects, Some(BTreeSet::new()));
        assert_eq!(b.tools.get("other").and_then(|t| t.effects.clone()), None);
        let err = |t: &str| parse(&format!("{head}{t}")).unwrap_err().to_string();
        let e = err("[mcp.upstream.tools.send]\neffects = [\"reads\"]\n");
        assert!(e.contains("did you mean \"read\""), "{e}");
        let e = err("[mcp.upstream.tools.send]\neffects = \"egress\"\n");
        assert!(e.contains("expected a list"), "{e}");
        let e = err("[mcp.upstream.tools.send]\neffects = [\"egress\", \"egress\"]\n");
        assert!(e.contains("twice"), "{e}");
        let e = err("[mcp.upstream.tools.send]\neffect = [\"egress\"]\n");
        assert!(e.contains("did you mean \"effects\""), "{e}");
    }
}
