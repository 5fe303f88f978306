//! `Toolbox::call`: the single dispatch of the gate.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::OsStr;
use std::sync::Arc;

use seam_policy::{
    Access, AdmittedFile, AdmittedPath, Capability, Decision, FileAccess, PathAdmission, Policy,
};
use seam_protocol::{Answer, Envelope, Refusal, RefusalBody, RefusalCode, ToolSpec};
use seam_scrub::Scrubber;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::ledger_hook::{CallOutcome, CallRecord, LedgerHook};
use crate::scrub_json::{scrub_string, scrub_value};
use crate::taint::TaintBook;

/// A path parameter of a tool and what the tool does with it.
#[derive(Debug, Clone, Copy)]
pub struct PathParam {
    /// The top-level params field holding the path.
    pub field: &'static str,
    pub access: Access,
}

/// Everything the toolbox needs to know about a tool to govern it.
#[derive(Debug, Clone)]
pub struct ToolDecl {
    pub name: &'static str,
    pub version: &'static str,
    /// One line, for the model's prompt.
    pub description: &'static str,
    /// JSON Schema of the params; every object has `additionalProperties: false`.
    pub schema: Value,
    /// The capability the policy decides for this tool.
    pub capability: Capability,
    /// True when the tool only observes (a read): `ask` then refuses, since a
    /// read cannot wait for consent.
    pub reads: bool,
    /// Every path parameter, with its declared access.
    pub paths: Vec<PathParam>,
    /// True when the result carries the owner's data or untrusted content.
    pub taints: bool,
    /// True when the tool reaches the network: refused in a tainted turn.
    pub egress: bool,
}

impl ToolDecl {
    pub fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name.to_owned(),
            version: self.version.to_owned(),
            description: self.description.to_owned(),
            input_schema: self.schema.clone(),
        }
    }
}

/// What path admission handed the tool for one path parameter.
#[derive(Debug)]
pub enum Admitted {
    /// An already-open file, admitted for reading.
    ReadFile(AdmittedFile),
    /// A path admitted for writing (the file may not exist yet).
    WritePath(AdmittedPath),
    /// An `Access::Source` path that is a directory: admitted by name, nothing opened.
    /// A tool gets it to look the directory up (in an index), never to list or open it.
    Directory(AdmittedPath),
}

/// A call as the tool receives it: valid params and the admitted paths.
#[derive(Debug)]
pub struct ToolCall {
    params: Value,
    admitted: HashMap<&'static str, Admitted>,
}

impl ToolCall {
    /// The params, already validated against the tool's schema.
    pub fn params(&self) -> &Value {
        &self.params
    }

    /// Takes the open file admitted for `field`. A tool gets files only this way.
    pub fn take_read_file(&mut self, field: &str) -> Option<AdmittedFile> {
        match self.admitted.remove_entry(field)? {
            (_, Admitted::ReadFile(f)) => Some(f),
            (key, other) => {
                self.admitted.insert(key, other);
                None
            }
        }
    }

    /// Takes the path admitted for writing for `field`.
    pub fn take_write_path(&mut self, field: &str) -> Option<AdmittedPath> {
        match self.admitted.remove_entry(field)? {
            (_, Admitted::WritePath(p)) => Some(p),
            (key, other) => {
                self.admitted.insert(key, other);
                None
            }
        }
    }

    /// Takes whatever was admitted for `field` (a source path may be a file or a directory).
    pub fn take_admitted(&mut self, field: &str) -> Option<Admitted> {
        self.admitted.remove(field)
    }
}

/// A tool's own refusal while running (after admission).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolFailure {
    pub code: RefusalCode,
    pub message: String,
}

impl ToolFailure {
    pub fn new(code: RefusalCode, message: impl Into<String>) -> Self {
        ToolFailure {
            code,
            message: message.into(),
        }
    }
}

/// A governed tool. It sees params that passed the schema and paths that passed
/// admission; everything it returns is scrubbed before it leaves.
pub trait GovernedTool: Send + Sync + std::fmt::Debug {
    fn decl(&self) -> &ToolDecl;
    fn run(&self, call: ToolCall) -> Result<Value, ToolFailure>;
}

/// One call as it reaches the gate.
#[derive(Debug, Clone)]
pub struct CallRequest {
    pub tool: String,
    pub params: Value,
    /// The turn this call belongs to, for taint; `None` is a turn of its own.
    pub turn: Option<String>,
}

/// Tunables of the built-in tools.
#[derive(Debug, Clone)]
pub struct ToolboxConfig {
    /// Most bytes of text `files.read` returns in one call.
    pub files_read_max_bytes: u64,
    /// `web.search`'s backend, key resolved (from the gate's config and keeper).
    pub web: crate::config::WebSearchSetup,
}

impl Default for ToolboxConfig {
    fn default() -> Self {
        ToolboxConfig {
            files_read_max_bytes: 1024 * 1024,
            web: crate::config::WebSearchSetup::Unconfigured,
        }
    }
}

/// The gate failed to govern a call; no answer may be sent.
#[derive(Debug, thiserror::Error)]
pub enum GateError {
    #[error(transparent)]
    Ledger(#[from] crate::ledger_hook::LedgerHookError),
    #[error("tool {tool} has an invalid schema: {reason}")]
    BadSchema { tool: String, reason: String },
    #[error("tool {tool} has a path-like parameter {field:?} with no declared access")]
    UndeclaredPath { tool: String, field: String },
    #[error("two tools are named {0}")]
    DuplicateTool(String),
}

#[derive(Debug)]
struct Registered {
    tool: Box<dyn GovernedTool>,
    validator: jsonschema::Validator,
}

/// The governed toolbox. Build one per gate; share it behind `Arc`.
#[derive(Debug)]
pub struct Toolbox {
    tools: BTreeMap<&'static str, Registered>,
    admission: PathAdmission,
    scrubber: Arc<Scrubber>,
    ledger: Arc<dyn LedgerHook>,
    taint: TaintBook,
    /// When set, every call must name a turn opened by [`Toolbox::open_turn`].
    turns_required: bool,
}

impl Toolbox {
    /// The toolbox with the built-in governed tools.
    pub fn new(
        policy: Arc<Policy>,
        scrubber: Arc<Scrubber>,
        ledger: Arc<dyn LedgerHook>,
        config: &ToolboxConfig,
    ) -> Result<Self, GateError> {
        let tools = crate::tools::builtin(config, &policy);
        Self::with_tools(policy, scrubber, ledger, tools)
    }

    /// A toolbox with exactly these tools. Each is checked on the way in: its
    /// schema must compile, close every object, and every path-like parameter
    /// must have a declared access.
    pub fn with_tools(
        policy: Arc<Policy>,
        scrubber: Arc<Scrubber>,
        ledger: Arc<dyn LedgerHook>,
        tools: Vec<Box<dyn GovernedTool>>,
    ) -> Result<Self, GateError> {
        let mut map = BTreeMap::new();
        for tool in tools {
            let decl = tool.decl();
            check_decl(decl)?;
            let validator =
                jsonschema::validator_for(&decl.schema).map_err(|e| GateError::BadSchema {
                    tool: decl.name.to_owned(),
                    reason: e.to_string(),
                })?;
            let name = decl.name;
            if map.insert(name, Registered { tool, validator }).is_some() {
                return Err(GateError::DuplicateTool(name.to_owned()));
            }
        }
        Ok(Toolbox {
            tools: map,
            admission: PathAdmission::new(policy),
            scrubber,
            ledger,
            taint: TaintBook::default(),
            turns_required: false,
        })
    }

    /// The specs of every tool, for `GET /v1/tools` and `seam tools`.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools.values().map(|r| r.tool.decl().spec()).collect()
    }

    /// The declarations of every tool (the gate's own view, with accesses).
    pub fn decls(&self) -> impl Iterator<Item = &ToolDecl> {
        self.tools.values().map(|r| r.tool.decl())
    }

    pub fn policy(&self) -> &Policy {
        self.admission.policy()
    }

    /// Is this turn tainted? The gate's memory, not the caller's.
    pub fn is_tainted(&self, turn: &str) -> bool {
        self.taint.is_tainted(turn)
    }

    /// From now on every call must name a turn opened by [`Toolbox::open_turn`]
    /// and not yet closed; any other call (no turn, or a turn the gate did not
    /// open) is refused as `invalid_params` and recorded. The gate as a service
    /// runs this way, so the agent can neither invent a turn nor leave one.
    /// Without it (the in-process `seam invoke`) a turn is any name the caller
    /// gives, and `None` is a turn of its own.
    pub fn requiring_open_turns(mut self) -> Self {
        self.turns_required = true;
        self
    }

    /// Does every call have to name an open turn? (See [`Toolbox::requiring_open_turns`].)
    pub fn turns_required(&self) -> bool {
        self.turns_required
    }

    /// Opens a turn and returns its id (fresh, never reused) and its token (the secret a
    /// client outside this process must present to call in, taint or close the turn). The
    /// gate records its taint from here on; the caller cannot clear it.
    pub fn open_turn(&self) -> (String, crate::taint::TurnToken) {
        self.taint.open()
    }

    /// Is the turn open, and is `token` its token? (A client outside the gate's process
    /// names a turn by id and proves it holds the turn with the token.)
    pub fn turn_admits(&self, turn: &str, token: Option<&str>) -> bool {
        self.taint.admits(turn, token)
    }

    /// Taints an open turn from outside a call: the agent's local tools that hand the
    /// model the owner's data, or text a model wrote in an earlier turn, say so here.
    /// Returns false when the turn is not open (nothing is recorded then).
    pub fn taint_turn(&self, turn: &str) -> bool {
        if !self.taint.is_open(turn) {
            return false;
        }
        self.taint.taint(turn);
        true
    }

    /// Was this turn opened by [`Toolbox::open_turn`] and not closed since?
    pub fn turn_known(&self, turn: &str) -> bool {
        self.taint.is_open(turn)
    }

    /// Forgets an open turn and its taint; returns false if it was not open.
    /// In a toolbox [requiring open turns](Toolbox::requiring_open_turns),
    /// every later call naming it is refused, so closing cannot un-taint.
    pub fn close_turn(&self, turn: &str) -> bool {
        self.taint.close(turn)
    }

    /// Governs one call: schema → capability → path admission → run → scrub →
    /// taint → ledger. Returns the envelope or the refusal, both scrubbed, only
    /// after the ledger has recorded the call.
    pub fn call(&self, req: CallRequest) -> Result<Answer, GateError> {
        self.call_as(uuid::Uuid::now_v7().to_string(), req)
    }

    /// [`Toolbox::call`] under an invocation id chosen by the caller (the
    /// service picks it first, so an answer it gives up waiting for names the
    /// record the ledger will hold). The id must be fresh: a UUIDv7.
    pub fn call_as(&self, invocation_id: String, req: CallRequest) -> Result<Answer, GateError> {
        self.call_governed(invocation_id, req, None)
    }

    /// [`Toolbox::call_as`] for a client outside the gate's process (the HTTP service's
    /// caller): in a toolbox [requiring open turns](Toolbox::requiring_open_turns) the call
    /// must name an open turn *and* present that turn's token, or it is refused
    /// (`unknown_turn`) and recorded. An id alone, read off the ledger stream, is not enough.
    pub fn call_as_client(
        &self,
        invocation_id: String,
        req: CallRequest,
        token: Option<&str>,
    ) -> Result<Answer, GateError> {
        self.call_governed(invocation_id, req, Some(token))
    }

    fn call_governed(
        &self,
        invocation_id: String,
        req: CallRequest,
        client_token: Option<Option<&str>>,
    ) -> Result<Answer, GateError> {
        let mut fired = BTreeSet::new();
        let mut logged_params = req.params.clone();
        scrub_value(&self.scrubber, &mut logged_params, &mut fired);

        let (version, answer) = match self.dispatch(&req, client_token) {
            Ok((version, output, tainted)) => {
                let mut output = output;
                let mut out_fired = BTreeSet::new();
                scrub_value(&self.scrubber, &mut output, &mut out_fired);
                if let (true, Some(turn)) = (tainted, &req.turn) {
                    self.taint.taint(turn);
                }
                let env = Envelope {
                    invocation_id: invocation_id.clone(),
                    tool: req.tool.clone(),
                    version: version.to_owned(),
                    output,
                    tainted,
                    scrubbed: out_fired.into_iter().collect(),
                };
                (version, Answer::Envelope(env))
            }
            Err((version, code, message)) => {
                let mut message = message;
                let mut msg_fired = BTreeSet::new();
                scrub_string(&self.scrubber, &mut message, &mut msg_fired);
                let refusal = Refusal {
                    invocation_id: invocation_id.clone(),
                    tool: req.tool.clone(),
                    refused: RefusalBody { code, message },
                };
                (version, Answer::Refusal(refusal))
            }
        };

        let (outcome, tainted, scrubbed) = match &answer {
            Answer::Envelope(env) => {
                let bytes = serde_json::to_vec(&env.output).unwrap_or_default();
                let digest: [u8; 32] = Sha256::digest(&bytes).into();
                (
                    CallOutcome::Admitted {
                        output_sha256: digest,
                    },
                    env.tainted,
                    env.scrubbed.clone(),
                )
            }
            Answer::Refusal(r) => (
                CallOutcome::Refused {
                    code: r.refused.code,
                },
                false,
                Vec::new(),
            ),
        };
        self.ledger.record(&CallRecord {
            invocation_id: &invocation_id,
            turn: req.turn.as_deref(),
            tool: &req.tool,
            version,
            params: &logged_params,
            outcome,
            tainted,
            scrubbed: &scrubbed,
        })?;
        Ok(answer)
    }

    /// The private pipeline up to the run. Err carries (version, code, message)
    /// of a refusal; the message is scrubbed by the caller.
    #[allow(clippy::type_complexity)]
    fn dispatch(
        &self,
        req: &CallRequest,
        client_token: Option<Option<&str>>,
    ) -> Result<(&'static str, Value, bool), (&'static str, RefusalCode, String)> {
        // the turn: in a gate that keeps turns, only one it opened (and, for a client
        // outside this process, only with that turn's token)
        if self.turns_required {
            let open = req.turn.as_deref().is_some_and(|t| match client_token {
                None => self.taint.is_open(t),
                Some(token) => self.taint.admits(t, token),
            });
            if !open {
                let version = self
                    .tools
                    .get(req.tool.as_str())
                    .map_or("", |r| r.tool.decl().version);
                let message = match &req.turn {
                    Some(t) => format!(
                        "turn {t:?} is not open in this gate, or the call did not present \
                         its token: a turn is opened (POST /v1/turns, with the turn opener \
                         in seam's home at keys/turn-opener) by whoever launched the agent, \
                         and a call names its id and token"
                    ),
                    None => "this call names no turn: a turn is opened (POST /v1/turns, with \
                             the turn opener in seam's home at keys/turn-opener) by whoever \
                             launched the agent, and a call names its id and token"
                        .to_owned(),
                };
                return Err((version, RefusalCode::UnknownTurn, message));
            }
        }
        // 0. the tool
        let Some(reg) = self.tools.get(req.tool.as_str()) else {
            let known: Vec<&str> = self.tools.keys().copied().collect();
            return Err((
                "",
                RefusalCode::UnknownTool,
                format!(
                    "no governed tool is named {:?}; the tools are: {}",
                    req.tool,
                    known.join(", ")
                ),
            ));
        };
        let decl = reg.tool.decl();
        let refuse = |code, message: String| (decl.version, code, message);

        // 1. schema
        let errors: Vec<String> = reg
            .validator
            .iter_errors(&req.params)
            .map(|e| {
                let at = e.instance_path().to_string();
                let at = if at.is_empty() { "/".to_owned() } else { at };
                format!("at {at}: {e}")
            })
            .collect();
        if !errors.is_empty() {
            return Err(refuse(
                RefusalCode::InvalidParams,
                format!(
                    "params of {} do not match its schema: {}",
                    decl.name,
                    errors.join("; ")
                ),
            ));
        }

        // 2. capability
        let cap = decl.capability;
        match self.policy().decision(cap) {
            Decision::Allow => {}
            Decision::Deny => {
                return Err(refuse(
                    RefusalCode::CapabilityDenied,
                    format!(
                        "the policy denies {:?}, which {} needs; an owner can set \
                         [capabilities] {:?} = \"allow\" in the policy file",
                        cap.as_str(),
                        decl.name,
                        cap.as_str()
                    ),
                ));
            }
            Decision::Ask if decl.reads => {
                return Err(refuse(
                    RefusalCode::ConsentRequired,
                    format!(
                        "the policy says \"ask\" for {:?}, and a read cannot wait for \
                         consent: consent is given for a change, not for a read. An owner \
                         can set [capabilities] {:?} = \"allow\" in the policy file",
                        cap.as_str(),
                        cap.as_str()
                    ),
                ));
            }
            Decision::Ask => {
                return Err(refuse(
                    RefusalCode::ConsentRequired,
                    format!(
                        "the policy says \"ask\" for {:?}, and no operator is attached to \
                         this call to give consent",
                        cap.as_str()
                    ),
                ));
            }
        }

        // taint: a tainted turn has no way out (unless the policy says
        // [taint] egress = "allow")
        if let (true, Some(turn)) = (decl.egress, &req.turn)
            && self.policy().taint_egress() == seam_policy::TaintEgress::Deny
            && self.taint.is_tainted(turn)
        {
            return Err(refuse(
                RefusalCode::Tainted,
                format!(
                    "turn {turn:?} has read the owner's files or untrusted content; \
                     {} reaches the network and is closed for the rest of the turn \
                     (the policy's [taint] egress is \"deny\"), so private data, untrusted \
                     content and a way out never meet in one turn. Do this in a new turn",
                    decl.name
                ),
            ));
        }

        // 3. path admission
        let mut admitted = HashMap::new();
        for p in &decl.paths {
            let Some(raw) = req.params.get(p.field) else {
                continue;
            };
            let Some(raw) = raw.as_str() else {
                return Err(refuse(
                    RefusalCode::InvalidParams,
                    format!("{} of {} must be a string", p.field, decl.name),
                ));
            };
            let raw = OsStr::new(raw);
            let result = match p.access {
                Access::Owner(FileAccess::Read) => self
                    .admission
                    .open_read(p.access, raw)
                    .map(Admitted::ReadFile),
                Access::Source => self.admit_source(raw),
                Access::Owner(FileAccess::Write) => self
                    .admission
                    .admitted_path(p.access, raw)
                    .map(Admitted::WritePath),
            };
            match result {
                Ok(a) => {
                    admitted.insert(p.field, a);
                }
                Err(r) => return Err(refuse(r.code, r.message)),
            }
        }

        // 4. run
        let call = ToolCall {
            params: req.params.clone(),
            admitted,
        };
        match reg.tool.run(call) {
            Ok(output) => Ok((decl.version, output, decl.taints)),
            Err(f) => Err(refuse(f.code, f.message)),
        }
    }
}

impl Toolbox {
    /// An `Access::Source` path: a regular file is opened, as for any read; a directory is
    /// admitted by name (same lists, same checks on where it really is) and nothing is opened.
    fn admit_source(&self, raw: &OsStr) -> Result<Admitted, seam_policy::PathRefusal> {
        match self.admission.open_read(Access::Source, raw) {
            Err(r) if r.code == RefusalCode::NotAFile => {
                let a = self.admission.admitted_path(Access::Source, raw)?;
                if a.real.is_dir() {
                    Ok(Admitted::Directory(a))
                } else {
                    Err(r)
                }
            }
            other => other.map(Admitted::ReadFile),
        }
    }
}

/// Names that mark a parameter as a path: such a parameter must declare its access.
pub(crate) fn is_path_like(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    const EXACT: &[&str] = &[
        "path",
        "paths",
        "file",
        "files",
        "filename",
        "dir",
        "directory",
        "folder",
        "cwd",
        "root",
        "dest",
        "destination",
        "src",
        "source",
        "target",
    ];
    EXACT.contains(&n.as_str())
        || n.ends_with("_path")
        || n.ends_with("_file")
        || n.ends_with("dir")
        || n.ends_with("path")
}

/// The toolbox's own rules for a declaration.
pub(crate) fn check_decl(decl: &ToolDecl) -> Result<(), GateError> {
    let bad = |reason: String| GateError::BadSchema {
        tool: decl.name.to_owned(),
        reason,
    };
    check_closed(&decl.schema, "#").map_err(bad)?;
    let mut fields = Vec::new();
    collect_path_like(&decl.schema, "", &mut fields);
    for field in fields {
        if !decl.paths.iter().any(|p| p.field == field) {
            return Err(GateError::UndeclaredPath {
                tool: decl.name.to_owned(),
                field,
            });
        }
    }
    for p in &decl.paths {
        let declared = decl
            .schema
            .get("properties")
            .and_then(|props| props.get(p.field))
            .is_some();
        if !declared {
            return Err(bad(format!(
                "declares an access for {:?}, which is not a top-level property",
                p.field
            )));
        }
    }
    Ok(())
}

/// Every object schema must say `additionalProperties: false`.
fn check_closed(schema: &Value, at: &str) -> Result<(), String> {
    let Some(obj) = schema.as_object() else {
        return Ok(());
    };
    let is_object =
        obj.get("type").and_then(Value::as_str) == Some("object") || obj.contains_key("properties");
    if is_object && obj.get("additionalProperties") != Some(&Value::Bool(false)) {
        return Err(format!(
            "{at}: an object schema without additionalProperties: false"
        ));
    }
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        for (k, v) in props {
            check_closed(v, &format!("{at}/properties/{k}"))?;
        }
    }
    if let Some(items) = obj.get("items") {
        check_closed(items, &format!("{at}/items"))?;
    }
    Ok(())
}

/// Path-like property names, as JSON pointers below the root (`path`, `a/path`).
fn collect_path_like(schema: &Value, prefix: &str, out: &mut Vec<String>) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (k, v) in props {
        let name = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}/{k}")
        };
        let format_path = v.get("format").and_then(Value::as_str) == Some("path");
        if is_path_like(k) || format_path {
            out.push(name.clone());
        }
        collect_path_like(v, &name, out);
        if let Some(items) = v.get("items") {
            collect_path_like(items, &name, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn decl(schema: Value, paths: Vec<PathParam>) -> ToolDecl {
        ToolDecl {
            name: "t",
            version: "1",
            description: "d",
            schema,
            capability: Capability::FilesystemRead,
            reads: true,
            paths,
            taints: false,
            egress: false,
        }
    }

    #[test]
    fn every_builtin_tool_passes_the_toolbox_rules() {
        let env = seam_policy::PolicyEnv {
            owner_home: "/nonexistent/home".into(),
            seam_home: "/nonexistent/seam".into(),
            workspace_root: "/nonexistent/ws".into(),
        };
        let policy = Policy::builtin(env);
        let tools = crate::tools::builtin(&ToolboxConfig::default(), &policy);
        assert!(!tools.is_empty());
        for t in &tools {
            check_decl(t.decl()).unwrap_or_else(|e| panic!("{}: {e}", t.decl().name));
            jsonschema::validator_for(&t.decl().schema).unwrap();
        }
    }

    #[test]
    fn a_path_parameter_without_access_is_rejected() {
        let d = decl(
            json!({"type":"object","additionalProperties":false,
                   "properties":{"target_file":{"type":"string"}}}),
            vec![],
        );
        match check_decl(&d) {
            Err(GateError::UndeclaredPath { field, .. }) => assert_eq!(field, "target_file"),
            other => panic!("expected UndeclaredPath, got {other:?}"),
        }
    }

    #[test]
    fn a_nested_path_parameter_is_found() {
        let d = decl(
            json!({"type":"object","additionalProperties":false,
                   "properties":{"opts":{"type":"object","additionalProperties":false,
                      "properties":{"where":{"type":"string","format":"path"}}}}}),
            vec![],
        );
        assert!(
            matches!(check_decl(&d), Err(GateError::UndeclaredPath { field, .. }) if field == "opts/where")
        );
    }

    #[test]
    fn an_open_object_schema_is_rejected() {
        let d = decl(
            json!({"type":"object","properties":{"q":{"type":"string"}}}),
            vec![],
        );
        assert!(matches!(check_decl(&d), Err(GateError::BadSchema { .. })));
        let nested = decl(
            json!({"type":"object","additionalProperties":false,
                   "properties":{"o":{"type":"object","properties":{}}}}),
            vec![],
        );
        assert!(matches!(
            check_decl(&nested),
            Err(GateError::BadSchema { .. })
        ));
    }

    #[test]
    fn path_like_names() {
        for n in [
            "path",
            "file",
            "dir",
            "out_path",
            "config_file",
            "workdir",
            "filepath",
        ] {
            assert!(is_path_like(n), "{n}");
        }
        for n in ["query", "offset", "limit", "code", "name"] {
            assert!(!is_path_like(n), "{n}");
        }
    }
}
