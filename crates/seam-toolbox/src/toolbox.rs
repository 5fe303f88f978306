//! `Toolbox::call`: the single dispatch of the gate.
//!
//! A tool's schema is read by one walk ([`schema_walk`]): it closes and checks every object
//! and finds every place a path can be, behind any combinator or `$ref`. A path parameter is
//! a place in the params (`path`, `req/path`, `files/*`); every string at or below it is
//! admitted, a `file:` URI as the path it names (percent-decoded).
//!
//! A destination parameter ([`DestinationParam`]) is a place the same way; in a tainted turn
//! every string at or below it must be a destination endorsed for the turn (the operator's
//! words for it, or the policy's `[egress] destinations`), decided in one place,
//! `Toolbox::endorsed_destinations`, before path admission and consent.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use seam_policy::{
    Access, AdmittedFile, AdmittedPath, Capability, Decision, FileAccess, PathAdmission,
    PathRefusal, Policy,
};
use seam_protocol::{Answer, Envelope, Refusal, RefusalBody, RefusalCode, ToolSpec};
use seam_scrub::Scrubber;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::consent::ConsentDesk;
use crate::ledger_hook::{CallOutcome, CallRecord, LedgerHook};
use crate::schema_walk::{self, LeafKind, location_text, parse_location};
use crate::taint::TaintBook;

pub use seam_policy::Endorsed;

/// A path parameter of a tool and what the tool does with it.
#[derive(Debug, Clone, Copy)]
pub struct PathParam {
    /// Where the path is in the params: a top-level field (`path`), or a location below one,
    /// its segments joined by `/`, `*` standing for any array item or object key
    /// (`req/path`, `files/*`). Every string at or below that place is admitted.
    pub field: &'static str,
    pub access: Access,
}

/// What a destination parameter's value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DestinationForm {
    /// The value itself is where the data goes: a recipient, an IBAN, a channel, a host.
    Value,
    /// The host of the URL in the value is: `web.fetch {url}` fetches from (and tells) that host.
    UrlHost,
}

/// A parameter of a tool with egress that says where its data goes (or comes from).
#[derive(Debug, Clone, Copy)]
pub struct DestinationParam {
    /// Where it is in the params, as [`PathParam::field`] (`to`, `recipients`, `cc/*`). Every
    /// string at or below that place is a destination.
    pub field: &'static str,
    pub form: DestinationForm,
}

/// What a call of a tool with egress reaches when it names none of its destinations (every
/// destination place absent or empty), as the tool's declaration says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NoneNamed {
    /// Nobody can tell: the tool may have a default destination its declaration does not
    /// show. In a tainted turn such a call is refused like any egress.
    #[default]
    Unknown,
    /// No party the call did not already reach: a calendar event without participants stays
    /// in the owner's calendar, a standing order changed only in its amount keeps its payee.
    /// In a tainted turn such a call passes the destination rule (nothing goes anywhere new);
    /// consent for its change still applies.
    NoOneNew,
}

impl NoneNamed {
    /// Its word in the gate's config (`none_named = "..."`).
    pub fn as_str(self) -> &'static str {
        match self {
            NoneNamed::Unknown => "unknown",
            NoneNamed::NoOneNew => "no-one-new",
        }
    }
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
    /// True when the result carries the owner's data or untrusted content. (A result also
    /// taints when the tool was handed an owner file by [`ToolCall::open_owner_file`].)
    pub taints: bool,
    /// True when the tool reaches the network: in a tainted turn, refused unless every
    /// destination it declares is endorsed for the turn (see [`Toolbox::call`]).
    pub egress: bool,
    /// Where the data of a tool with egress goes: its destination parameters. A tool with
    /// egress and none is refused outright in a tainted turn (`web.search` has none: its
    /// backend is fixed, and what leaves is the query). Only a tool with egress declares any.
    pub destinations: Vec<DestinationParam>,
    /// What a call that names none of `destinations` reaches (only a tool that declares some
    /// says anything but [`NoneNamed::Unknown`]).
    pub none_named: NoneNamed,
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
    /// A tool gets it to look the directory up (in an index), never to list or open it
    /// itself: [`ToolCall::files_in_directory`] names the files in it a read would admit.
    Directory(AdmittedPath),
}

/// A call as the tool receives it: valid params and the admitted paths.
#[derive(Debug)]
pub struct ToolCall {
    params: Value,
    /// In a tainted turn, what the call may still reach besides its own destinations.
    reach: Option<Reach>,
    /// By the place each path was at (`path`, `req/path`, `files/0`).
    admitted: HashMap<String, Admitted>,
    /// The places whose value was a `file:` URI where the schema asks for a URI.
    file_uris: BTreeSet<String>,
    /// The toolbox's own admission, for [`ToolCall::open_owner_file`].
    admission: Arc<PathAdmission>,
    /// Set once [`ToolCall::open_owner_file`] handed out a file: the result then taints.
    read_owner_file: Arc<AtomicBool>,
}

impl ToolCall {
    /// The params, already validated against the tool's schema.
    pub fn params(&self) -> &Value {
        &self.params
    }

    /// For a tool with egress in a tainted turn: the turn's endorsements, which anything the
    /// call reaches beyond its declared destinations (a redirect's host) must pass too. `None`:
    /// no destination rule applies (the turn is untainted, or the policy's `[taint] egress` is
    /// "allow").
    pub fn reach(&self) -> Option<&Reach> {
        self.reach.as_ref()
    }

    /// How a result names `real`, a file the call was handed: relative to the
    /// workspace root when it lies inside it (as the model wrote it), else in
    /// full. A small model shown the full path of a file it had asked for by
    /// a short one pasted the full path into its next call's code.
    pub fn shown_path(&self, real: &std::path::Path) -> String {
        let root = &self.admission.policy().env().workspace_root;
        match real.strip_prefix(root) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
            _ => real.display().to_string(),
        }
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

    /// Takes everything admitted, by the place each path was at (segments joined by `/`,
    /// escaped as in a JSON pointer: `req/path`, `files/0`), in the order of those places.
    pub fn take_all_admitted(&mut self) -> Vec<(String, Admitted)> {
        let mut all: Vec<_> = self.admitted.drain().collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    }

    /// Opens one of the owner's files that the params name inside a text rather than at a
    /// declared path place (`python.run`'s code names the files it opens). It is admitted
    /// exactly as a declared `Access::Owner(Read)` path is, by the toolbox's own
    /// [`PathAdmission`] (the capability, the protected list, the allow-list, links followed,
    /// opened with no window), and the refusal names the real file. A call handed a file this
    /// way taints the turn, whatever its tool declares.
    pub fn open_owner_file(&self, raw: &OsStr) -> Result<AdmittedFile, PathRefusal> {
        let file = self
            .admission
            .open_read(Access::Owner(FileAccess::Read), raw)?;
        self.read_owner_file.store(true, Ordering::SeqCst);
        Ok(file)
    }

    /// The regular files directly in the directory `raw` names that a `files.read` of each
    /// would admit (`Access::Owner(Read)`, by the toolbox's own admission), each as the path
    /// that reads it: the very list `files.read`'s refusal of that directory names, from the
    /// one function that makes it (see [`files_in_directory`]), so never a protected file, a
    /// hidden entry, a link, or anything in a subdirectory. What a tool may name to the model
    /// in place of a listing it cannot otherwise give; nothing is opened for the tool, and the
    /// tool lists nothing itself.
    pub fn files_in_directory(&self, raw: &OsStr) -> DirectoryFiles {
        files_in_directory(&self.admission, Access::Owner(FileAccess::Read), raw)
    }

    /// Was the value at `place` a `file:` URI, in a place the schema says holds a URI? (A tool
    /// handing it on gives a `file:` URI of the admitted path.)
    pub fn was_file_uri(&self, place: &str) -> bool {
        self.file_uris.contains(place)
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

    /// Places in the params (as [`PathParam::field`]) that look like paths and are declared
    /// not to be (an upstream's operator says so in the config; `web.fetch`'s `url`, a URL of
    /// the web that the tool itself refuses unless it is http or https). None for the other
    /// built-in tools.
    fn not_paths(&self) -> &[String] {
        &[]
    }

    /// The gate's config's own decision for this tool (an upstream tool's class, see
    /// seam-gate's `mcp::classify`), applied with the policy's: the stricter wins, and `ask`
    /// waits at the consent desk like the policy's. None for a built-in tool.
    fn config_decision(&self) -> Option<Decision> {
        None
    }

    /// Does a URI that is not a `file:` one, in a place the schema says holds a URI, go to the
    /// tool unchanged? Only for a tool that cannot read files; otherwise it is refused.
    fn takes_non_file_uris(&self) -> bool {
        false
    }

    /// Other params for a call whose path does not exist, when the call's
    /// other params say what was meant, and a note saying what was done.
    /// The toolbox runs those params through every step again (schema,
    /// capability, admission), ledgers them, and puts the note in the output.
    /// None (the refusal stands) for every tool but those that override it.
    fn when_path_missing(&self, _params: &Value) -> Option<(Value, String)> {
        None
    }
}

/// One call as it reaches the gate.
#[derive(Debug, Clone)]
pub struct CallRequest {
    pub tool: String,
    pub params: Value,
    /// The turn this call belongs to, for taint; `None` is a turn of its own.
    pub turn: Option<String>,
}

/// The gate failed to govern a call; no answer may be sent.
#[derive(Debug, thiserror::Error)]
pub enum GateError {
    #[error(transparent)]
    Ledger(#[from] crate::LedgerHookError),
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
    /// The places the schema says hold a URI.
    uris: Vec<Vec<String>>,
}

/// The governed toolbox. Build one per gate; share it behind `Arc`.
#[derive(Debug)]
pub struct Toolbox {
    tools: BTreeMap<&'static str, Registered>,
    admission: Arc<PathAdmission>,
    scrubber: Arc<Scrubber>,
    ledger: Arc<dyn LedgerHook>,
    taint: TaintBook,
    /// When set, every call must name a turn opened by [`Toolbox::open_turn`].
    turns_required: bool,
    /// Where a call on `ask` waits for the operator; none: it is refused.
    consent: Option<Arc<ConsentDesk>>,
    /// `sha256:` of the enforced policy, for consent records.
    policy_digest: String,
    /// What a relative path is relative to (the policy's workspace root).
    workspace_root: PathBuf,
}

impl Toolbox {
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
            check_decl_with(decl, tool.not_paths())?;
            let validator =
                jsonschema::validator_for(&decl.schema).map_err(|e| GateError::BadSchema {
                    tool: decl.name.to_owned(),
                    reason: e.to_string(),
                })?;
            let uris = uri_places(decl)?;
            let name = decl.name;
            let reg = Registered {
                tool,
                validator,
                uris,
            };
            if map.insert(name, reg).is_some() {
                return Err(GateError::DuplicateTool(name.to_owned()));
            }
        }
        Ok(Toolbox {
            tools: map,
            policy_digest: crate::policy_digest(&policy),
            consent: None,
            workspace_root: policy.env().workspace_root.clone(),
            admission: Arc::new(PathAdmission::new(policy)),
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

    /// Calls on `ask` wait at `desk` for the operator's answer (see [`crate::consent`]).
    /// Without a desk they are refused (`consent_required`), saying how to allow them.
    pub fn with_consent(mut self, desk: Arc<ConsentDesk>) -> Self {
        self.consent = Some(desk);
        self
    }

    /// The consent desk, if the toolbox has one.
    pub fn consent_desk(&self) -> Option<&Arc<ConsentDesk>> {
        self.consent.as_ref()
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

    /// Opens a turn, as [`Toolbox::open_turn`], holding `words` as the operator's for it (the
    /// task, the text of files the operator attached). In a tainted turn an egress call may
    /// still reach a destination these words name. Only whoever opens the turn registers them:
    /// the service does it for a client holding the turn opener, never for the agent.
    pub fn open_turn_with(&self, words: &[String]) -> (String, crate::taint::TurnToken) {
        let (turn, token) = self.taint.open();
        for w in words {
            self.taint.add_words(&turn, w);
        }
        (turn, token)
    }

    /// Adds `text` to the operator's words for an open turn (an attached file read after the
    /// turn was opened). The service offers it only to a client holding the turn opener.
    /// Returns false when the turn is not open (nothing is kept).
    pub fn add_operator_words(&self, turn: &str, text: &str) -> bool {
        self.taint.add_words(turn, text)
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
        if let Some(desk) = &self.consent {
            desk.forget_turn(turn);
        }
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
        let mut req = req;
        let mut logged_params = req.params.clone();
        self.scrubber.scrub_json(&mut logged_params);
        let mut dispatched = self.dispatch(&req, client_token, &invocation_id, &logged_params);
        if let Ok(Err((_, RefusalCode::NotFound, missing))) = &dispatched
            && let Some(reg) = self.tools.get(req.tool.as_str())
            && let Some((params, note)) = reg.tool.when_path_missing(&req.params)
        {
            // The params the tool named instead run through every step again
            // and are what the ledger records.
            let missing = missing.clone();
            req.params = params;
            logged_params = req.params.clone();
            self.scrubber.scrub_json(&mut logged_params);
            dispatched = self
                .dispatch(&req, client_token, &invocation_id, &logged_params)
                .map(|r| {
                    r.map(|(v, mut out, t)| {
                        if let Some(map) = out.as_object_mut() {
                            let note = match map.get("note").and_then(Value::as_str) {
                                Some(n) => format!("{missing}: {note}; {n}"),
                                None => format!("{missing}: {note}"),
                            };
                            map.insert("note".into(), note.into());
                        }
                        (v, out, t)
                    })
                });
        }
        if let Some(desk) = &self.consent {
            desk.end(&invocation_id);
        }
        let (version, answer) = match dispatched? {
            Ok((version, output, tainted)) => {
                let mut output = output;
                let out_fired = self.scrubber.scrub_json(&mut output);
                if let (true, Some(turn)) = (tainted, &req.turn) {
                    self.taint.taint(turn);
                }
                let env = Envelope {
                    invocation_id: invocation_id.clone(),
                    tool: req.tool.clone(),
                    version: version.to_owned(),
                    output,
                    tainted,
                    scrubbed: out_fired.into_iter().map(str::to_owned).collect(),
                };
                (version, Answer::Envelope(env))
            }
            Err((version, code, message)) => {
                let message = self.scrubber.scrub(&message).text;
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
                // The canonical form, so an auditor holding the answer can recompute it
                // (seam-ledger's crate doc says how) whatever order its keys were sent in.
                let text = seam_ledger::canonical_json(&env.output);
                let digest: [u8; 32] = Sha256::digest(text.as_bytes()).into();
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

    /// The private pipeline up to the run. The inner Err carries (version, code, message)
    /// of a refusal; the message is scrubbed by the caller. The outer Err is a consent the
    /// ledger could not record: the call neither runs nor is answered.
    #[allow(clippy::type_complexity)]
    fn dispatch(
        &self,
        req: &CallRequest,
        client_token: Option<Option<&str>>,
        invocation_id: &str,
        logged_params: &Value,
    ) -> Result<Result<(&'static str, Value, bool), (&'static str, RefusalCode, String)>, GateError>
    {
        match self.governed(req, client_token, invocation_id, logged_params) {
            Ok(ran) => Ok(Ok(ran)),
            Err(Stop::Refused(version, code, message)) => Ok(Err((version, code, message))),
            Err(Stop::Gate(e)) => Err(e),
        }
    }

    fn governed(
        &self,
        req: &CallRequest,
        client_token: Option<Option<&str>>,
        invocation_id: &str,
        logged_params: &Value,
    ) -> Result<(&'static str, Value, bool), Stop> {
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
                return Err(Stop::Refused(version, RefusalCode::UnknownTurn, message));
            }
        }
        // 0. the tool
        let Some(reg) = self.tools.get(req.tool.as_str()) else {
            let known: Vec<&str> = self.tools.keys().copied().collect();
            return Err(Stop::Refused(
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
        let refuse = |code, message: String| Stop::Refused(decl.version, code, message);

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

        // 2. capability: the one decision, for this tool
        let cap = decl.capability;
        let by_policy = self.policy().decision_for_tool(cap, decl.name);
        // the gate's config may decide more strictly for this tool (an upstream's class);
        // `[consent] always` answers its ask as it answers the policy's
        let by_config = reg.tool.config_decision().map(|d| match d {
            Decision::Ask if self.policy().consent_always(decl.name) => Decision::Allow,
            other => other,
        });
        let decision = by_config.map_or(by_policy, |d| d.max(by_policy));
        let asked_by = if by_config.is_some_and(|d| d >= by_policy && d != Decision::Allow) {
            AskedBy::Config
        } else {
            AskedBy::Policy
        };
        match decision {
            Decision::Allow => {}
            Decision::Deny if asked_by == AskedBy::Config => {
                return Err(refuse(
                    RefusalCode::CapabilityDenied,
                    format!(
                        "the gate's config denies {}: its [[mcp.upstream]] (or the tool's \
                         entry there) says capability = \"deny\"",
                        decl.name
                    ),
                ));
            }
            Decision::Ask if decl.reads && asked_by == AskedBy::Config => {
                return Err(refuse(
                    RefusalCode::ConsentRequired,
                    format!(
                        "the gate's config says \"ask\" for {}, and a read cannot wait for \
                         consent: consent is given for a change, not for a read. An owner can \
                         set its capability = \"allow\" in its [[mcp.upstream]]",
                        decl.name
                    ),
                ));
            }
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
            // waits for the operator below, once every other check has passed
            Decision::Ask => {}
        }

        // taint: a tainted turn's way out reaches only destinations endorsed for the turn
        // (unless the policy says [taint] egress = "allow")
        let mut ask_destinations = Vec::new();
        if let (true, Some(turn)) = (decl.egress, &req.turn)
            && self.policy().taint_egress() == seam_policy::TaintEgress::Deny
            && self.taint.is_tainted(turn)
        {
            match self.endorsed_destinations(decl, &req.params, turn) {
                Ok(_) => {}
                // the operator may consent to these exact values: asked below, once every
                // other check has passed (with nobody to ask, refused here)
                Err(stop)
                    if !stop.ask.is_empty()
                        && self.consent.as_ref().is_some_and(|d| d.has_operator()) =>
                {
                    ask_destinations = stop.ask;
                }
                Err(stop) => return Err(refuse(RefusalCode::Tainted, stop.message)),
            }
        }

        // 3. path admission
        let mut admitted = HashMap::new();
        let mut file_uris = BTreeSet::new();
        for p in &decl.paths {
            let mut found = Vec::new();
            strings_at(
                &req.params,
                &parse_location(p.field),
                &mut Vec::new(),
                &mut found,
            );
            for (place, raw) in found {
                let key = location_text(&place);
                let uri_place = reg.uris.iter().any(|u| place_matches(u, &place));
                let path: PathBuf = match file_uri_path(raw) {
                    Some(Ok(path)) => {
                        if uri_place {
                            file_uris.insert(key.clone());
                        }
                        path
                    }
                    Some(Err(why)) => {
                        return Err(refuse(
                            RefusalCode::InvalidPath,
                            format!("{key} of {} is {why}", decl.name),
                        ));
                    }
                    None if uri_place && uri_scheme(raw).is_some() => {
                        if reg.tool.takes_non_file_uris() {
                            continue;
                        }
                        return Err(refuse(
                            RefusalCode::InvalidPath,
                            format!(
                                "{key} of {} is a {}: URI, and {} can read files: only a \
                                 file: URI (admitted as the path it names) or a path is taken \
                                 there",
                                decl.name,
                                uri_scheme(raw).unwrap_or_default(),
                                decl.name
                            ),
                        ));
                    }
                    None => PathBuf::from(raw),
                };
                let raw = path.as_os_str();
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
                        admitted.insert(key, a);
                    }
                    Err(r)
                        if r.code == RefusalCode::NotFound
                            && p.access != Access::Owner(FileAccess::Write) =>
                    {
                        let found = self.same_name_nearby(p.access, raw);
                        let message =
                            naming_files(r.message, "of that name, this can be read", &found, "");
                        return Err(refuse(r.code, message));
                    }
                    Err(r)
                        if r.code == RefusalCode::NotAFile
                            && p.access == Access::Owner(FileAccess::Read) =>
                    {
                        let held = self.files_in_directory(p.access, raw);
                        let message = naming_files(
                            r.message,
                            "the files in it that can be read",
                            &held,
                            " (read one by its path)",
                        );
                        return Err(refuse(r.code, message));
                    }
                    Err(r) => return Err(refuse(r.code, r.message)),
                }
            }
        }

        // 2b. consent: the operator is asked only about a call that would otherwise run; a yes
        // to its destinations endorses exactly those values for the rest of the turn
        if decision == Decision::Ask || !ask_destinations.is_empty() {
            let shown: Vec<String> = ask_destinations.iter().map(|(s, _)| s.clone()).collect();
            let capability_asks = (decision == Decision::Ask).then_some(asked_by);
            self.consent(
                invocation_id,
                req,
                decl,
                logged_params,
                capability_asks,
                &shown,
            )?;
            if let Some(turn) = &req.turn {
                for (_, d) in ask_destinations {
                    self.taint.add_consented(turn, d);
                }
            }
        }

        // 4. run
        let read_owner_file = Arc::new(AtomicBool::new(false));
        // what the call may reach beyond its own destinations, in a tainted turn (after any
        // consent above added to the turn's endorsements)
        let reach = match &req.turn {
            Some(turn)
                if decl.egress
                    && self.policy().taint_egress() == seam_policy::TaintEgress::Deny
                    && self.taint.is_tainted(turn) =>
            {
                Some(Reach {
                    words: self.taint.words(turn),
                    allow: self.policy().egress_destinations().clone(),
                })
            }
            _ => None,
        };
        let call = ToolCall {
            params: req.params.clone(),
            reach,
            admitted,
            file_uris,
            admission: Arc::clone(&self.admission),
            read_owner_file: Arc::clone(&read_owner_file),
        };
        match reg.tool.run(call) {
            // 6. taint: what the tool declares, or an owner file it was handed while running
            Ok(output) => Ok((
                decl.version,
                output,
                decl.taints || read_owner_file.load(Ordering::SeqCst),
            )),
            Err(f) => Err(refuse(f.code, f.message)),
        }
    }
}

/// What a tainted turn's egress call may reach: the turn's endorsements when the call was
/// admitted (the operator's words, the values they consented to, the policy's allow-list).
/// Handed to the tool in [`ToolCall::reach`], for what the call's params do not show.
#[derive(Debug, Clone)]
pub struct Reach {
    words: seam_policy::OperatorWords,
    allow: seam_policy::DestinationAllowList,
}

impl Reach {
    /// Is `d` endorsed for the turn?
    pub fn endorses(&self, d: seam_policy::Destination) -> bool {
        seam_policy::endorse(d, &self.words, &self.allow).is_ok()
    }
}

/// Why the destination rule stopped a call: the refusal's message, and the destinations the
/// operator may be asked about (empty: refused, nothing to ask; each as shown, and parsed).
struct DestinationStop {
    message: String,
    ask: Vec<(String, seam_policy::Destination)>,
}

/// Bounds of the look for a missing file's name in the workspace.
const NEARBY_DEPTH: usize = 4;
const NEARBY_ENTRIES: usize = 4096;
const NEARBY_SHOWN: usize = 3;

/// The files [`ToolCall::files_in_directory`] names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DirectoryFiles {
    /// Each as the path that reads it (the directory as given, joined with the file's name;
    /// the name alone for `.`), in name order.
    pub files: Vec<String>,
    /// The directory may hold more such files than are named (the list is bounded, and so
    /// is the number of its entries looked at).
    pub cut: bool,
}

/// The regular files directly in the directory `raw` names, each as the path that reads it
/// (`raw` joined with its name; the name alone for `.`), each one `admission` would open for
/// `access` (so never a protected file, nor one behind a link out of the allowed places), in
/// name order, at most [`HELD_SHOWN`] of the first [`HELD_ENTRIES`] entries. A model that
/// reads a directory learns what to read instead, and nothing it could not read. Hidden
/// entries are left out, as the look for a missing file's name leaves them, and so are links
/// and directories (the entry's own type). One listing for files.read's refusal of a
/// directory and a tool's [`ToolCall::files_in_directory`].
fn files_in_directory(admission: &PathAdmission, access: Access, raw: &OsStr) -> DirectoryFiles {
    let Ok(dir) = admission.admitted_path(access, raw) else {
        return DirectoryFiles::default();
    };
    let Ok(entries) = std::fs::read_dir(&dir.real) else {
        return DirectoryFiles::default();
    };
    let mut entries = entries.take(HELD_ENTRIES + 1).collect::<Vec<_>>();
    let mut cut = entries.len() > HELD_ENTRIES;
    entries.truncate(HELD_ENTRIES);
    let mut names: Vec<std::ffi::OsString> = entries
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name())
        .filter(|n| !n.as_encoded_bytes().starts_with(b"."))
        .collect();
    names.sort();
    let base = Path::new(raw);
    let mut files: Vec<String> = names
        .into_iter()
        .map(|n| {
            if base == Path::new(".") {
                PathBuf::from(n)
            } else {
                base.join(n)
            }
        })
        .filter(|path| admission.open_read(access, path.as_os_str()).is_ok())
        .take(HELD_SHOWN + 1)
        .map(|path| path.to_string_lossy().into_owned())
        .collect();
    cut |= files.len() > HELD_SHOWN;
    files.truncate(HELD_SHOWN);
    DirectoryFiles { files, cut }
}

/// A path refusal's `message`, followed, when there are any, by the files the model can read
/// instead, after `lead` and before `tail`.
fn naming_files(message: String, lead: &str, names: &[String], tail: &str) -> String {
    if names.is_empty() {
        return message;
    }
    format!("{message}; {lead}: {}{tail}", names.join(", "))
}

/// Bounds of the list of a directory's files in a refusal to read it.
const HELD_ENTRIES: usize = 1024;
const HELD_SHOWN: usize = 20;

/// Who made a call's decision `ask` (or `deny`): the policy, or the gate's config for the tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AskedBy {
    Policy,
    Config,
}

/// Why the pipeline stopped before the run: a refusal (version, code, message), or a consent
/// the ledger could not record.
enum Stop {
    Refused(&'static str, RefusalCode, String),
    Gate(GateError),
}

impl From<GateError> for Stop {
    fn from(e: GateError) -> Self {
        Stop::Gate(e)
    }
}

impl Toolbox {
    /// The destination rule, for an egress call in a tainted turn: every destination the tool
    /// declares, as the call gives it, must be endorsed for the turn (named in the operator's
    /// words for it, or matched by the policy's `[egress] destinations`). A tool that declares
    /// none, a call that names none (unless the tool says such a call reaches no one new,
    /// [`NoneNamed::NoOneNew`]), and a value that is no destination are refused like any
    /// egress in a tainted turn. Err: the refusal's message, naming each value and why.
    fn endorsed_destinations(
        &self,
        decl: &ToolDecl,
        params: &Value,
        turn: &str,
    ) -> Result<Vec<seam_policy::Endorsed>, DestinationStop> {
        let refused = |message: String| DestinationStop {
            message,
            ask: Vec::new(),
        };
        let closed = format!(
            "turn {turn:?} has read the owner's files or untrusted content; {} reaches the \
             network and is closed for the rest of the turn (the policy's [taint] egress is \
             \"deny\"), so private data, untrusted content and a way out never meet in one turn",
            decl.name
        );
        if decl.destinations.is_empty() {
            return Err(refused(format!(
                "{closed}. {} declares no destination parameter, so where its data goes cannot \
                 be checked against the operator's words. Do this in a new turn",
                decl.name
            )));
        }
        let mut found = Vec::new();
        for d in &decl.destinations {
            let mut here = Vec::new();
            strings_at(params, &parse_location(d.field), &mut Vec::new(), &mut here);
            found.extend(
                here.into_iter()
                    .map(|(at, raw)| (location_text(&at), raw, d.form)),
            );
        }
        if found.is_empty() && decl.none_named == NoneNamed::NoOneNew {
            return Ok(Vec::new());
        }
        if found.is_empty() {
            let places: Vec<String> = decl
                .destinations
                .iter()
                .map(|d| format!("/{}", d.field))
                .collect();
            return Err(refused(format!(
                "{closed}, except to a destination endorsed for the turn; this call names none \
                 (its destinations are at {}). Do this in a new turn",
                places.join(", ")
            )));
        }
        let words = self.taint.words(turn);
        let allow = self.policy().egress_destinations();
        // each destination's decision (Allow: endorsed; Deny: not, or no destination at all);
        // the call's is the strictest
        let mut decision = Decision::Allow;
        let mut endorsed = Vec::new();
        let mut unnamed = Vec::new();
        let mut ask = Vec::new();
        for (place, raw, form) in found {
            let shown = match form {
                DestinationForm::Value => format!("/{place} = {raw:?}"),
                DestinationForm::UrlHost => format!("the host of /{place} = {raw:?}"),
            };
            let parsed = match form {
                DestinationForm::Value => seam_policy::Destination::parse_value(raw),
                DestinationForm::UrlHost => seam_policy::Destination::parse_url_host(raw),
            };
            let dest = match parsed {
                Ok(d) => d,
                Err(why) => {
                    decision = decision.max(Decision::Deny);
                    unnamed.push(format!("{shown}, which is no destination ({why})"));
                    continue;
                }
            };
            let verdict = seam_policy::endorse(dest, &words, allow);
            decision = decision.max(seam_policy::destination_decision(
                &verdict,
                self.policy().egress_unnamed(),
            ));
            match verdict {
                Ok(e) => endorsed.push(e),
                Err(seam_policy::Unendorsed(d)) => {
                    let canonical = d.to_string();
                    let as_read = if canonical == raw.trim() {
                        String::new()
                    } else {
                        format!(" (read as {canonical})")
                    };
                    unnamed.push(format!(
                        "{shown}{as_read}, a destination ({}) that the operator's words for \
                         this turn do not name and no entry of the policy's [egress] \
                         destinations matches",
                        d.kind()
                    ));
                    ask.push((format!("/{place} = {:?}", canonical), d));
                }
            }
        }
        if decision == Decision::Allow {
            return Ok(endorsed);
        }
        Err(DestinationStop {
            message: format!(
                "{closed}, except to a destination endorsed for the turn: one named in the \
                 operator's words for it (the task, attached files), on the policy's [egress] \
                 destinations, or consented to by the operator when asked{}. Not endorsed: {}. A \
                 destination read in a tool result is not the operator's: ask the operator to \
                 name it, or do this in a new turn",
                if self.policy().egress_unnamed() != Decision::Ask {
                    " (the policy's [egress] unnamed is \"deny\": nobody is asked)"
                } else if decision == Decision::Ask {
                    " (nobody is there to ask)"
                } else {
                    ""
                },
                unnamed.join("; ")
            ),
            // per-value consent is offered only when every value is a destination
            ask: if decision == Decision::Ask {
                ask
            } else {
                Vec::new()
            },
        })
    }

    /// A call on `ask` waits at the consent desk; the answer (or its absence) is signed into
    /// the ledger before the call goes on. Ok: the operator said yes (or an earlier `turn`
    /// or `always` answer covers the call).
    fn consent(
        &self,
        invocation_id: &str,
        req: &CallRequest,
        decl: &ToolDecl,
        logged_params: &Value,
        asked_by: Option<AskedBy>,
        destinations: &[String],
    ) -> Result<(), Stop> {
        use seam_ledger::{ConsentAnswer, ConsentBy, ConsentScope};
        let cap = decl.capability.as_str();
        let refuse = |code, message: String| Stop::Refused(decl.version, code, message);
        let mut why = Vec::new();
        let mut how = Vec::new();
        match asked_by {
            Some(AskedBy::Policy) => why.push(format!("the policy says \"ask\" for \"{cap}\"")),
            Some(AskedBy::Config) => why.push(format!(
                "the gate's config says \"ask\" for {} (a tool that changes state, or its \
                 capability in [[mcp.upstream]])",
                decl.name
            )),
            None => {}
        }
        if asked_by.is_some() {
            how.push(format!(
                "to let {tool} run without asking, the owner can add [consent] always = \
                 [\"{tool}\"] (or set [capabilities] \"{cap}\" = \"allow\") in the policy file",
                tool = decl.name
            ));
        }
        if !destinations.is_empty() {
            why.push(format!(
                "in a turn that has read the owner's files or untrusted content, {} would reach \
                 {}, which the operator's words for the turn do not name",
                decl.name,
                destinations.join(", ")
            ));
            how.push(
                "to reach a destination without asking, the operator names it in the task, or \
                 the owner adds it to the policy's [egress] destinations"
                    .to_owned(),
            );
        }
        let asks = why.join("; and ");
        let how_to_allow = how.join("; ");
        let Some(desk) = &self.consent else {
            return Err(refuse(
                RefusalCode::ConsentRequired,
                format!(
                    "{asks}, and no operator is attached to \
                     this call to give consent (seam ask asks on its terminal; a service gate \
                     takes `seam consent approve`); {how_to_allow}"
                ),
            ));
        };
        let digest = hex::encode(Sha256::digest(
            seam_ledger::canonical_json(logged_params).as_bytes(),
        ));
        let now = std::time::Instant::now();
        let waited = desk.wait(crate::consent::PendingCall {
            id: invocation_id.to_owned(),
            turn: req.turn.clone(),
            tool: decl.name.to_owned(),
            capability: cap,
            params: logged_params.clone(),
            params_sha256: digest.clone(),
            destinations: destinations.to_vec(),
            asked: now,
            deadline: now,
        });
        let record = |answer, scope, by| {
            self.ledger
                .record_consent(&crate::ledger_hook::ConsentRecord {
                    invocation_id,
                    turn: req.turn.as_deref(),
                    tool: decl.name,
                    version: decl.version,
                    params: logged_params,
                    answer,
                    scope,
                    by,
                    policy_digest: &self.policy_digest,
                })
                .map_err(|e| Stop::Gate(GateError::Ledger(e)))
        };
        match waited {
            crate::consent::Waited::Granted { scope, by } => {
                record(ConsentAnswer::Granted, scope, by)
            }
            crate::consent::Waited::Covered { .. } => Ok(()),
            crate::consent::Waited::Denied { by } => {
                record(ConsentAnswer::Denied, ConsentScope::Once, by)?;
                Err(refuse(
                    RefusalCode::ConsentDenied,
                    format!(
                        "the operator was asked and said no to this call of {} (params \
                         sha256:{digest}); do not repeat it: answer with what you have, or \
                         say what you would need",
                        decl.name
                    ),
                ))
            }
            crate::consent::Waited::TimedOut { after } => {
                record(
                    ConsentAnswer::TimedOut,
                    ConsentScope::Once,
                    ConsentBy::Nobody,
                )?;
                Err(refuse(
                    RefusalCode::ConsentRequired,
                    format!(
                        "{asks}, and nobody answered within {} s \
                         (the gate's --consent-timeout); {how_to_allow}",
                        after.as_secs()
                    ),
                ))
            }
            crate::consent::Waited::NoOperator => Err(refuse(
                RefusalCode::ConsentRequired,
                format!(
                    "{asks}, and this gate has nobody to ask \
                     (no terminal: run seam ask from one, or answer a service gate with \
                     `seam consent approve`); {how_to_allow}"
                ),
            )),
        }
    }

    /// Files under the workspace root with the missing path's file name
    /// (`oncall-rota.md` for `notes/oncall-rota.md` asked as `oncall-rota.md`),
    /// each as a path relative to the root, and each one admitted for
    /// `access` by the same admission as any call (so a protected file is
    /// never named). Links are not followed and hidden directories not
    /// entered; the walk is bounded in depth and entries.
    fn same_name_nearby(&self, access: Access, raw: &OsStr) -> Vec<String> {
        let Some(name) = Path::new(raw).file_name() else {
            return Vec::new();
        };
        let mut found = Vec::new();
        let mut seen = 0usize;
        let mut queue = std::collections::VecDeque::from([(PathBuf::new(), 0usize)]);
        while let Some((rel, depth)) = queue.pop_front() {
            let Ok(dir) = std::fs::read_dir(self.workspace_root.join(&rel)) else {
                continue;
            };
            for entry in dir.flatten() {
                seen += 1;
                if seen > NEARBY_ENTRIES || found.len() >= NEARBY_SHOWN {
                    return found;
                }
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                let entry_name = entry.file_name();
                let path = rel.join(&entry_name);
                if kind.is_dir() {
                    if depth + 1 < NEARBY_DEPTH && !entry_name.as_encoded_bytes().starts_with(b".")
                    {
                        queue.push_back((path, depth + 1));
                    }
                } else if kind.is_file()
                    && entry_name == name
                    && path.as_os_str() != raw
                    && self.admission.open_read(access, path.as_os_str()).is_ok()
                {
                    found.push(path.to_string_lossy().into_owned());
                }
            }
        }
        found
    }

    /// See [`files_in_directory`].
    fn files_in_directory(&self, access: Access, raw: &OsStr) -> Vec<String> {
        files_in_directory(&self.admission, access, raw).files
    }

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

/// Every string at or below the places `pattern` names in `value`, with the place it is at.
fn strings_at<'v>(
    value: &'v Value,
    pattern: &[String],
    at: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, &'v str)>,
) {
    let Some((first, rest)) = pattern.split_first() else {
        match value {
            Value::String(s) => out.push((at.clone(), s)),
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    at.push(i.to_string());
                    strings_at(v, pattern, at, out);
                    at.pop();
                }
            }
            Value::Object(m) => {
                for (k, v) in m {
                    at.push(k.clone());
                    strings_at(v, pattern, at, out);
                    at.pop();
                }
            }
            _ => {}
        }
        return;
    };
    let mut go = |seg: String, v: &'v Value, at: &mut Vec<String>| {
        at.push(seg);
        strings_at(v, rest, at, out);
        at.pop();
    };
    match value {
        Value::Object(m) if first == schema_walk::ANY => {
            for (k, v) in m {
                go(k.clone(), v, at);
            }
        }
        Value::Array(items) if first == schema_walk::ANY => {
            for (i, v) in items.iter().enumerate() {
                go(i.to_string(), v, at);
            }
        }
        Value::Object(m) => {
            if let Some(v) = m.get(first) {
                go(first.clone(), v, at);
            }
        }
        Value::Array(items) => {
            if let Some(v) = first.parse::<usize>().ok().and_then(|i| items.get(i)) {
                go(first.clone(), v, at);
            }
        }
        _ => {}
    }
}

/// Does the concrete `place` (`files/0`) fall in the schema's `pattern` (`files/*`)?
fn place_matches(pattern: &[String], place: &[String]) -> bool {
    pattern.len() == place.len()
        && pattern
            .iter()
            .zip(place)
            .all(|(p, c)| p == schema_walk::ANY || p == c)
}

/// Does the declared `field` cover the schema's `place` (it is the place or above it)?
fn covers(field: &[String], place: &[String]) -> bool {
    field.len() <= place.len() && field.iter().zip(place).all(|(f, p)| f == p)
}

/// The scheme of a URI (`https`), or `None` for text that does not start with one.
fn uri_scheme(text: &str) -> Option<&str> {
    let (scheme, _) = text.split_once(':')?;
    let mut chars = scheme.chars();
    let ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        // one letter is a drive, not a scheme
        && scheme.len() > 1;
    ok.then_some(scheme)
}

/// The path a `file:` URI names (percent-decoded); `None` for text that is not one.
fn file_uri_path(text: &str) -> Option<Result<PathBuf, String>> {
    if !uri_scheme(text).is_some_and(|s| s.eq_ignore_ascii_case("file")) {
        return None;
    }
    let parsed = match url::Url::parse(text) {
        Ok(u) => u,
        Err(e) => return Some(Err(format!("not a valid file: URI ({e})"))),
    };
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Some(Err(
            "a file: URI with a query or a fragment, which names no one file".to_owned(),
        ));
    }
    match parsed.host_str() {
        None | Some("") | Some("localhost") => {}
        Some(host) => {
            return Some(Err(format!(
                "a file: URI on another host ({host:?}); only this machine's files are admitted"
            )));
        }
    }
    Some(
        parsed
            .to_file_path()
            .map_err(|()| "a file: URI that names no path".to_owned()),
    )
}

/// The places of `decl`'s schema that hold a URI.
fn uri_places(decl: &ToolDecl) -> Result<Vec<Vec<String>>, GateError> {
    let leaves = schema_walk::leaves(&decl.schema).map_err(|e| GateError::BadSchema {
        tool: decl.name.to_owned(),
        reason: e.to_string(),
    })?;
    Ok(leaves
        .into_iter()
        .filter(|l| l.kind == LeafKind::Uri)
        .map(|l| l.location)
        .collect())
}

/// The toolbox's own rules for a declaration.
#[cfg(test)]
pub(crate) fn check_decl(decl: &ToolDecl) -> Result<(), GateError> {
    check_decl_with(decl, &[])
}

/// The toolbox's own rules for a declaration, with the places the tool declares are not
/// paths ([`GovernedTool::not_paths`]): its schema closes every object, every path-like place
/// has a declared access, and every declared path or destination is a place in its params.
/// [`Toolbox::with_tools`] runs it on every tool it is handed.
pub fn check_decl_with(decl: &ToolDecl, not_paths: &[String]) -> Result<(), GateError> {
    let bad = |reason: String| GateError::BadSchema {
        tool: decl.name.to_owned(),
        reason,
    };
    schema_walk::check_closed(&decl.schema).map_err(bad)?;
    let leaves = schema_walk::leaves(&decl.schema).map_err(|e| bad(e.to_string()))?;
    let declared: Vec<Vec<String>> = decl.paths.iter().map(|p| parse_location(p.field)).collect();
    let exempt: Vec<Vec<String>> = not_paths.iter().map(|f| parse_location(f)).collect();
    for leaf in leaves {
        if leaf.kind == LeafKind::Unclassified {
            continue;
        }
        let covered = declared
            .iter()
            .chain(&exempt)
            .any(|d| covers(d, &leaf.location));
        if !covered {
            return Err(GateError::UndeclaredPath {
                tool: decl.name.to_owned(),
                field: location_text(&leaf.location),
            });
        }
    }
    let places = schema_walk::locations(&decl.schema).map_err(|e| bad(e.to_string()))?;
    for (p, at) in decl.paths.iter().zip(&declared) {
        if at.is_empty() || !places.contains(at) {
            return Err(bad(format!(
                "declares an access for {:?}, which is no place in its params schema",
                p.field
            )));
        }
    }
    if !decl.destinations.is_empty() && !decl.egress {
        return Err(bad(
            "declares destination parameters but no egress: only a tool that reaches the world \
             sends data somewhere"
                .to_owned(),
        ));
    }
    if decl.none_named != NoneNamed::Unknown && decl.destinations.is_empty() {
        return Err(bad(format!(
            "says a call naming none of its destinations reaches {:?}, but declares no \
             destination parameter",
            decl.none_named.as_str()
        )));
    }
    for d in &decl.destinations {
        let at = parse_location(d.field);
        if at.is_empty() || !places.contains(&at) {
            return Err(bad(format!(
                "declares a destination at {:?}, which is no place in its params schema",
                d.field
            )));
        }
    }
    Ok(())
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
            destinations: Vec::new(),
            none_named: NoneNamed::Unknown,
        }
    }

    #[test]
    fn destinations_are_places_of_a_tool_with_egress() {
        let schema = json!({"type":"object","additionalProperties":false,
            "properties":{"to":{"type":"array","items":{"type":"string"}},
                          "body":{"type":"string"}}});
        let mut d = decl(schema, vec![]);
        d.egress = true;
        d.destinations = vec![DestinationParam {
            field: "to",
            form: DestinationForm::Value,
        }];
        check_decl(&d).unwrap();
        d.destinations[0].field = "nowhere";
        assert!(matches!(check_decl(&d), Err(GateError::BadSchema { .. })));
        d.destinations[0].field = "to";
        d.none_named = NoneNamed::NoOneNew;
        check_decl(&d).unwrap();
        d.egress = false;
        assert!(matches!(check_decl(&d), Err(GateError::BadSchema { .. })));
        // "no one new" is said of destinations, and a tool without any has none to name
        d.egress = true;
        d.destinations.clear();
        assert!(matches!(check_decl(&d), Err(GateError::BadSchema { .. })));
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

    /// `{"type":"object","additionalProperties":false,"properties":{"p": inner}}` plus `extra`
    /// at the root: a tool's params with `inner` one level down.
    fn params_with(inner: Value, extra: Value) -> Value {
        let mut s = json!({"type":"object","additionalProperties":false,
                           "properties":{"p": inner}});
        if let (Value::Object(root), Value::Object(more)) = (&mut s, extra) {
            root.extend(more);
        }
        s
    }

    /// A path-like property hidden from a walk that looks only at `properties` and `items`:
    /// each must be found, and refused until the tool declares an access for it, exactly as
    /// the same property in plain `properties` is.
    #[test]
    fn a_path_hidden_behind_a_combinator_must_be_declared() {
        let file = || {
            json!({"type":"object","additionalProperties":false,
                             "properties":{"target_file":{"type":"string"}}})
        };
        let cases = [
            (
                "anyOf",
                params_with(json!({"anyOf":[{"type":"null"}, file()]}), json!({})),
                "p/target_file",
            ),
            (
                "oneOf",
                params_with(json!({"oneOf":[file(), {"type":"integer"}]}), json!({})),
                "p/target_file",
            ),
            (
                "allOf",
                params_with(json!({"allOf":[file()]}), json!({})),
                "p/target_file",
            ),
            (
                "$defs nested in a property, reached through anyOf",
                params_with(
                    json!({"$defs":{"F": file()},
                           "anyOf":[{"$ref":"#/properties/p/$defs/F"}]}),
                    json!({}),
                ),
                "p/target_file",
            ),
            (
                "prefixItems",
                params_with(
                    json!({"type":"array","prefixItems":[{"type":"integer"}, file()]}),
                    json!({}),
                ),
                "p/*/target_file",
            ),
            (
                "a path-named tuple item",
                json!({"type":"object","additionalProperties":false,"properties":{
                    "paths":{"type":"array","prefixItems":[{"type":"string"}]}}}),
                "paths/*",
            ),
            (
                "then",
                params_with(json!({"if":{"type":"object"},"then": file()}), json!({})),
                "p/target_file",
            ),
            (
                "dependentSchemas",
                params_with(
                    json!({"type":"object","additionalProperties":false,
                           "properties":{"k":{"type":"integer"}},
                           "dependentSchemas":{"k": file()}}),
                    json!({}),
                ),
                "p/target_file",
            ),
            (
                "patternProperties",
                params_with(
                    json!({"type":"object","additionalProperties":false,
                           "patternProperties":{"^x": file()}}),
                    json!({}),
                ),
                "p/*/target_file",
            ),
        ];
        for (how, schema, at) in cases {
            match check_decl(&decl(schema.clone(), vec![])) {
                Err(GateError::UndeclaredPath { field, .. }) => assert_eq!(field, at, "{how}"),
                other => panic!("{how}: expected UndeclaredPath at {at}, got {other:?}"),
            }
            // declared where it is, the same schema passes
            let ok = decl(
                schema,
                vec![PathParam {
                    field: at,
                    access: Access::Owner(FileAccess::Read),
                }],
            );
            check_decl(&ok).unwrap_or_else(|e| panic!("{how}: {e}"));
        }
    }

    /// An object schema without `additionalProperties: false` under a combinator, a tuple
    /// item or a definition nobody refers to is as open as one in `properties`.
    #[test]
    fn an_open_object_behind_a_combinator_is_rejected() {
        let open = || json!({"type":"object","properties":{"q":{"type":"string"}}});
        let cases = [
            (
                "oneOf",
                params_with(json!({"oneOf":[{"type":"null"}, open()]}), json!({})),
            ),
            ("anyOf", params_with(json!({"anyOf":[open()]}), json!({}))),
            ("allOf", params_with(json!({"allOf":[open()]}), json!({}))),
            (
                "prefixItems",
                params_with(json!({"type":"array","prefixItems":[open()]}), json!({})),
            ),
            (
                "else",
                params_with(json!({"if":{"type":"null"},"else": open()}), json!({})),
            ),
            (
                "$defs with no $ref to it",
                params_with(
                    json!({"type":"integer"}),
                    json!({"$defs":{"Unused": open()}}),
                ),
            ),
            (
                "definitions nested in a property, with no $ref to it",
                params_with(
                    json!({"type":"integer","definitions":{"U": open()}}),
                    json!({}),
                ),
            ),
        ];
        for (how, schema) in cases {
            match check_decl(&decl(schema, vec![])) {
                Err(GateError::BadSchema { reason, .. }) => {
                    assert!(reason.contains("additionalProperties"), "{how}: {reason}")
                }
                other => panic!("{how}: expected BadSchema, got {other:?}"),
            }
        }
    }

    /// One step from a schema to the schema around it, in any of the places a subschema can
    /// sit (a `not` or `if` is a condition, no place for a value, so it is not among them).
    #[derive(Debug, Clone)]
    enum Around {
        Property(&'static str),
        AnyOf,
        OneOf,
        AllOf,
        Items,
        PrefixItems,
        AdditionalProperties,
        PatternProperties,
        Then,
        Else,
        DependentSchemas,
        /// `{"$ref": "#/$defs/Dn"}`, the schema itself in the root's `$defs`.
        Ref,
    }

    fn arb_around() -> impl proptest::strategy::Strategy<Value = Around> {
        use proptest::prelude::*;
        prop_oneof![
            prop::sample::select(vec!["a", "q", "opts", "n"]).prop_map(Around::Property),
            Just(Around::AnyOf),
            Just(Around::OneOf),
            Just(Around::AllOf),
            Just(Around::Items),
            Just(Around::PrefixItems),
            Just(Around::AdditionalProperties),
            Just(Around::PatternProperties),
            Just(Around::Then),
            Just(Around::Else),
            Just(Around::DependentSchemas),
            Just(Around::Ref),
        ]
    }

    /// `inner` wrapped in `steps`, innermost first, every object around it closed, and put
    /// under the property `p` of a closed root (with the `$defs` the `Ref` steps made).
    fn wrapped(inner: Value, steps: &[Around]) -> Value {
        let mut s = inner;
        let mut defs = serde_json::Map::new();
        for step in steps {
            s = match step {
                Around::Property(name) => json!({"type":"object","additionalProperties":false,
                                                 "properties":{*name: s}}),
                Around::AnyOf => json!({"anyOf":[{"type":"null"}, s]}),
                Around::OneOf => json!({"oneOf":[s, {"type":"boolean"}]}),
                Around::AllOf => json!({"allOf":[s]}),
                Around::Items => json!({"type":"array","items": s}),
                Around::PrefixItems => {
                    json!({"type":"array","prefixItems":[{"type":"integer"}, s]})
                }
                // no type: a map, which the toolbox does not count as an object to close
                Around::AdditionalProperties => json!({"additionalProperties": s}),
                Around::PatternProperties => json!({"type":"object","additionalProperties":false,
                                                    "patternProperties":{"^k": s}}),
                Around::Then => json!({"if":{"type":"integer"},"then": s}),
                Around::Else => json!({"if":{"type":"integer"},"else": s}),
                Around::DependentSchemas => json!({"type":"object","additionalProperties":false,
                    "properties":{"k":{"type":"integer"}},"dependentSchemas":{"k": s}}),
                Around::Ref => {
                    let name = format!("D{}", defs.len());
                    defs.insert(name.clone(), s);
                    json!({"$ref": format!("#/$defs/{name}")})
                }
            };
        }
        params_with(s, json!({"$defs": defs}))
    }

    proptest::proptest! {
        /// However deep a path sits among combinators, tuples, maps, conditions' branches
        /// and definitions, the toolbox finds it and refuses a tool that declares no access
        /// for it; an open object there is refused as open.
        #[test]
        fn a_path_or_open_object_anywhere_is_found(
            steps in proptest::collection::vec(arb_around(), 0..6),
        ) {
            let path = wrapped(json!({"type":"string","format":"path"}), &steps);
            proptest::prop_assert!(
                matches!(check_decl(&decl(path.clone(), vec![])), Err(GateError::UndeclaredPath { .. })),
                "{path}"
            );
            let open = wrapped(json!({"type":"object","properties":{}}), &steps);
            proptest::prop_assert!(
                matches!(check_decl(&decl(open.clone(), vec![])), Err(GateError::BadSchema { .. })),
                "{open}"
            );
            // and the same places with a plain integer are a schema the toolbox accepts
            let plain = wrapped(json!({"type":"integer"}), &steps);
            proptest::prop_assert!(check_decl(&decl(plain.clone(), vec![])).is_ok(), "{plain}");
        }
    }

    #[test]
    fn file_uris_name_paths_and_other_uris_do_not() {
        assert_eq!(
            file_uri_path("file:///h/o/%2Essh/config"),
            Some(Ok(PathBuf::from("/h/o/.ssh/config")))
        );
        assert_eq!(
            file_uri_path("FILE://localhost/h/x"),
            Some(Ok(PathBuf::from("/h/x")))
        );
        assert!(matches!(
            file_uri_path("file://elsewhere/h/x"),
            Some(Err(_))
        ));
        assert!(matches!(file_uri_path("file:///h/x?y"), Some(Err(_))));
        assert_eq!(file_uri_path("https://example.org/x"), None);
        assert_eq!(file_uri_path("~/notes/file:x"), None);
        assert_eq!(uri_scheme("https://x"), Some("https"));
        assert_eq!(uri_scheme("c:/x"), None);
        assert_eq!(uri_scheme("/a:b"), None);
    }

    #[test]
    fn every_string_at_a_place_is_found() {
        let params = json!({"req": {"file_name": "a", "n": 1},
                            "files": ["b", "c"], "map": {"x": "d", "y": null}});
        let mut found = Vec::new();
        for p in ["req/file_name", "files", "map/*", "nowhere/x"] {
            strings_at(&params, &parse_location(p), &mut Vec::new(), &mut found);
        }
        let found: Vec<(String, &str)> = found
            .into_iter()
            .map(|(at, s)| (location_text(&at), s))
            .collect();
        assert_eq!(
            found,
            vec![
                ("req/file_name".to_owned(), "a"),
                ("files/0".to_owned(), "b"),
                ("files/1".to_owned(), "c"),
                ("map/x".to_owned(), "d"),
            ]
        );
    }

    #[test]
    fn a_path_behind_a_ref_must_be_declared_where_it_is() {
        let schema = json!({"type":"object","additionalProperties":false,
            "properties":{"req":{"$ref":"#/$defs/R"}},
            "$defs":{"R":{"type":"object","additionalProperties":false,
                "properties":{"file_name":{"type":"string"}}}}});
        let d = decl(schema.clone(), vec![]);
        assert!(
            matches!(check_decl(&d), Err(GateError::UndeclaredPath { field, .. }) if field == "req/file_name")
        );
        let ok = decl(
            schema.clone(),
            vec![PathParam {
                field: "req/file_name",
                access: Access::Owner(FileAccess::Read),
            }],
        );
        check_decl(&ok).unwrap();
        let nowhere = decl(
            schema,
            vec![
                PathParam {
                    field: "req/file_name",
                    access: Access::Owner(FileAccess::Read),
                },
                PathParam {
                    field: "req/other",
                    access: Access::Owner(FileAccess::Read),
                },
            ],
        );
        assert!(matches!(
            check_decl(&nowhere),
            Err(GateError::BadSchema { .. })
        ));
    }
}
