//! The agent's seven local tools, the Critic and the return queue.
//!
//! This crate owns the agent's reversible side (DESIGN.md): `builder`,
//! `scribe`, `context`, `graph`, `seer`, `aesthesis` and `image`
//! ([`tool_specs`] is their model-facing contract), the **Critic** that every
//! staged effect passes ([`critic`]), and the **return queue** where the
//! operator approves or rejects what the agent staged ([`ReturnQueue`], used by
//! `seam queue` and `seam watch`).
//!
//! Design. [`LocalTools::call`] validates params against the tool's schema
//! (`additionalProperties: false`), runs the tool synchronously, and scrubs
//! every string of the answer by secret shape before the model sees it. Effects
//! are staged, never applied.
//!
//! What the builder touches, exactly:
//! - **in the launcher, before the walls** ([`LocalTools::open`]): git,
//!   read-only, in the operator's repository, to learn its top level
//!   ([`LocalTools::repository`]), the current branch (the target; a detached
//!   HEAD or no commit leaves the builder unavailable, and
//!   [`LocalTools::builder_unavailable`] says why), HEAD's commit (the base)
//!   and its object directories with their alternates
//!   ([`LocalTools::repository_objects`]: all the agent must be able to read
//!   of the operator's `.git`, and it must write none of it);
//! - **inside the agent**: a bare staging repository
//!   `<seam_home>/staging/repos/<slug>.git` ([`LocalTools::staging_repository`],
//!   made on first use, its `objects/info/alternates` naming the operator's
//!   object directories so the base is there without a copy) and one worktree
//!   per turn under `<seam_home>/staging/worktrees/`, on a branch
//!   `seam/<turn>-<n>` of the staging repository. Nothing else: never the
//!   operator's working tree, index, refs, config or hooks. Opening a branch
//!   also forgets, in the staging repository, the worktrees and `seam/*`
//!   branches the operator decided;
//! - **in the operator's `approve`** (outside every wall; see `apply`): the
//!   operator's git in the operator's repository only, never in the staging
//!   repository (the agent writes its config, hooks and attributes), with no
//!   global or system config and every config-driven program off. The
//!   branch's objects are copied in through a quarantine, checked there
//!   (present and connected, base and target its ancestors, no `.gitattributes`
//!   gaining a filter, diff or merge driver, no link, submodule, protected path
//!   or secret by shape, read from the objects and not from the agent-written
//!   row), and only then kept and the target fast-forwarded; `reject` removes
//!   the worktree directory without following links.
//!
//! `builder append` and `builder replace` are the edits a small model can
//! write where it cannot reproduce a whole file or a diff: they read the file
//! as it is on the branch (walked like a write, never through a link; UTF-8
//! text only; at most `max_file_bytes`, before and after), change it in
//! memory (text added on lines of its own; one exact snippet, found once, for
//! another), keep the file's own line endings, and write and commit it like
//! `write`. A missing file is made by `append` and refused by `replace`.
//! A snippet that is not in the file as written is looked for line by line
//! with each line's indentation left out (a small model gets the words right
//! far more often than the spaces), and the new lines then take the file's
//! indentation; a snippet not found either way is refused with the line most
//! like its first quoted. A `replace` that names no path edits the one file
//! git tracks on the branch that holds the snippet (guarded files are never
//! read for it); none, or more than one, is refused, naming them.
//! When a call is read otherwise than written (`content` as append's text, an
//! LF snippet in a CRLF file, a snippet without its indentation, a path found
//! for a snippet), the answer's `note` says so.
//!
//! The agent's git reads neither the owner's `~/.gitconfig` nor the system's
//! config (the walls deny them, and git would die on the refusal), and takes
//! the builder's identity. Paths are relative to the repository, checked by
//! text (no `..`, no absolute path, nothing in `.git`) and walked with
//! `O_NOFOLLOW` so no link leads out; protected names (keys, credentials, CI)
//! are refused; and on seam's own source (see [`guard`]) the `self.modify`
//! decision governs every path (`deny` refuses the builder outright,
//! `ask`/`allow` stage) and the core partition can never change. Notes and
//! diagrams are held for the turn. [`LocalTools::finish_turn`] puts the
//! turn's branch (one item, recording its tip), notes and diagrams through
//! the Critic and into the queue, and records each verdict in the agent's
//! build records (`<seam_home>/agent/builds.sqlite`, beside the queue; not
//! the gate's `memory/`). The queue decides in one SQLite write transaction.
//!
//! The programs the tools start are listed by [`programs`], built from the
//! places that start them: the agent's walls (`seam-confine`) let it run
//! exactly those, so a tool that starts a program not there fails behind them.
//!
//! What it must never do: depend on `seam-gate`, `seam-sandbox` or
//! `seam-keeper` (it lives in the agent, which holds no credentials); start a
//! program by a name that is not in [`programs`]; write
//! outside seam's staging and its own database (`<seam_home>/agent/`), or move
//! any branch but its own `seam/…` ones in the staging repository (only the
//! operator's `approve` moves a target branch); run git in the operator's
//! repository after [`LocalTools::open`]; follow a link out of a worktree;
//! take a check command from the repository (the operator configures it: a
//! branch is the model's work); apply anything the Critic or approval's own
//! checks failed; print.
//!
//! Weak spots to know: the check command and the linters run the branch's
//! code (a build script, a test) with the agent process's own rights; the
//! agent's confinement is what bounds them. The base is HEAD when the tools
//! were opened: a commit the operator makes later shows at approval as a
//! moved target. The queue row names the operator's repository and target
//! branch, and the agent can rewrite both: approval only fast-forwards (a
//! branch name, checked), but it trusts `repo` to be the repository the
//! operator meant — `seam queue show` prints it.

mod aesthesis;
mod apply;
mod builder;
pub mod critic;
mod git;
pub mod guard;
mod image;
mod process;
pub mod queue;
mod repo_path;
mod spec;
mod suggest;
mod tools;
mod turn;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use seam_policy::Decision;
use seam_protocol::RefusalCode;
use seam_scrub::Scrubber;
use serde_json::{Map, Value};

pub use critic::{CheckRun, CriticConfig, CriticReport};
pub use git::GitError;
pub use process::programs;
pub use queue::{Decided, QueueError, QueueItem, ReturnQueue, Staged, Status, Verdict};
pub use repo_path::RepoPath;
pub use spec::{LOCAL_TOOL_VERSION, LOCAL_TOOLS, tool_specs};
pub use tools::taints_turn;
pub use turn::{Attachment, GateCallRecord, LocalRefusal, StepRecord, TurnInfo};

use builder::{Repo, TurnBranch};

/// The largest file `builder write` takes (and `append` and `replace` leave),
/// and the largest diff `patch` takes.
pub const DEFAULT_MAX_FILE_BYTES: usize = 1024 * 1024;
/// A branch whose diff is larger fails the Critic.
pub const DEFAULT_MAX_DIFF_BYTES: usize = 512 * 1024;
/// How long the check command may run.
pub const DEFAULT_CHECK_TIMEOUT: Duration = Duration::from_secs(600);
/// The longest note.
pub const MAX_NOTE_BYTES: usize = 64 * 1024;

/// How the local tools are set up.
#[derive(Debug, Clone)]
pub struct LocalConfig {
    /// seam's home: staging, the queue, build memory.
    pub seam_home: PathBuf,
    /// The builder's repository (any directory in it); `None`: the git
    /// repository holding the working directory.
    pub repo: Option<PathBuf>,
    /// The policy's decision for `self.modify` (`seam_policy::Policy::decision`);
    /// consulted only when the repository is seam's own source.
    pub self_modify: Decision,
    /// The check command (argv), run in the worktree by `builder check` and
    /// by the Critic; `None`: no check.
    pub check: Option<Vec<String>>,
    pub check_timeout: Duration,
    pub max_diff_bytes: usize,
    pub max_file_bytes: usize,
}

impl LocalConfig {
    /// Defaults: the working directory's repository, `self.modify` as the
    /// built-in policy says, no check command.
    pub fn new(seam_home: impl Into<PathBuf>) -> LocalConfig {
        let self_modify = seam_policy::policy::DEFAULT_DECISIONS
            .iter()
            .find(|(c, _)| *c == seam_policy::Capability::SelfModify)
            .map_or(Decision::Deny, |(_, d)| *d);
        LocalConfig {
            seam_home: seam_home.into(),
            repo: None,
            self_modify,
            check: None,
            check_timeout: DEFAULT_CHECK_TIMEOUT,
            max_diff_bytes: DEFAULT_MAX_DIFF_BYTES,
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
        }
    }

    fn critic(&self) -> CriticConfig {
        CriticConfig {
            check: self.check.clone(),
            check_timeout: self.check_timeout,
            max_diff_bytes: self.max_diff_bytes,
            max_note_bytes: MAX_NOTE_BYTES,
        }
    }
}

/// What went wrong setting up or ending a turn, and where. `seam` prints it with its chain of
/// causes, so a variant leaves its cause to `source()` and does not repeat it.
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    #[error(transparent)]
    Queue(#[from] QueueError),
    #[error(transparent)]
    Git(#[from] GitError),
    #[error("build memory")]
    Memory(#[from] seam_memory::MemoryError),
    #[error("a local tool's schema does not compile ({tool}): {message}")]
    Schema { tool: String, message: String },
    #[error("cannot create {}", path.display())]
    Create {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// What a turn has staged so far.
#[derive(Debug, Default)]
struct TurnState {
    branch: Option<TurnBranch>,
    notes: Vec<(String, String)>,
    images: Vec<(PathBuf, String)>,
}

/// The seven local tools. `Send + Sync`: one per agent, shared by its turns.
#[derive(Debug)]
pub struct LocalTools {
    config: LocalConfig,
    /// The top level of the operator's repository, when there is one.
    root: Option<PathBuf>,
    /// What the builder knows of it, or why the builder is unavailable.
    repo: Result<Repo, String>,
    /// Held while a turn's branch is made (and the staging repository tidied).
    opening: Mutex<()>,
    scrubber: Scrubber,
    validators: HashMap<String, Validator>,
    turns: Mutex<HashMap<String, Arc<Mutex<TurnState>>>>,
}

struct Validator(jsonschema::Validator);

impl std::fmt::Debug for Validator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Validator")
    }
}

fn refusal(code: RefusalCode, message: impl Into<String>) -> LocalRefusal {
    LocalRefusal::new(code, message)
}

fn str_param<'a>(params: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    params.get(key).and_then(Value::as_str)
}

fn required<'a>(
    params: &'a Map<String, Value>,
    key: &str,
    why: &str,
) -> Result<&'a str, LocalRefusal> {
    str_param(params, key).ok_or_else(|| {
        refusal(
            RefusalCode::InvalidParams,
            format!("params.{key} is required {why}"),
        )
    })
}

impl LocalTools {
    /// Sets the tools up: learns what the builder needs of the operator's
    /// repository (read-only: its top level, the current branch, HEAD's
    /// commit and its object directories), compiles the schemas, and opens
    /// (creating) the queue so a broken home shows now, not mid-turn.
    ///
    /// The launcher calls this before the agent's walls go up: it is the only
    /// time seam-local runs git in the operator's repository on the agent's
    /// behalf.
    pub fn open(config: LocalConfig) -> Result<LocalTools, LocalError> {
        let start = match &config.repo {
            Some(r) => r.clone(),
            None => std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
        };
        let (root, repo) = builder::learn(&config.seam_home.join("staging"), &start);
        let mut validators = HashMap::new();
        for spec in tool_specs() {
            let v =
                jsonschema::validator_for(&spec.input_schema).map_err(|e| LocalError::Schema {
                    tool: spec.name.clone(),
                    message: e.to_string(),
                })?;
            validators.insert(spec.name, Validator(v));
        }
        ReturnQueue::open(&config.seam_home)?;
        Ok(LocalTools {
            config,
            root,
            repo,
            opening: Mutex::new(()),
            scrubber: Scrubber::new(),
            validators,
            turns: Mutex::new(HashMap::new()),
        })
    }

    /// The top level of the operator's repository the builder works on, if
    /// there is one (also when the builder is unavailable on it, e.g. on a
    /// detached HEAD: [`LocalTools::builder_unavailable`] says why).
    pub fn repository(&self) -> Option<&Path> {
        self.root.as_deref()
    }

    /// The operator's object directories, absolute: the repository's own
    /// (`git rev-parse --git-path objects`) and those its
    /// `objects/info/alternates` lists. The agent must be able to READ these,
    /// and nothing else of the operator's `.git` (no write anywhere in it):
    /// the staging repository borrows the base commit's objects from them.
    /// Empty when the builder is unavailable.
    pub fn repository_objects(&self) -> Vec<PathBuf> {
        self.repo
            .as_ref()
            .map(|r| r.objects.clone())
            .unwrap_or_default()
    }

    /// The staging repository the builder's branches live in,
    /// `<seam_home>/staging/repos/<slug>.git` (made on the first branch), when
    /// the builder is available. It is under [`LocalTools::staging`], which
    /// the agent writes.
    pub fn staging_repository(&self) -> Option<&Path> {
        self.repo.as_ref().ok().map(|r| r.staging_repo.as_path())
    }

    /// Why the builder is unavailable (no repository, a detached HEAD, no
    /// commit yet), or `None` when it is available.
    pub fn builder_unavailable(&self) -> Option<&str> {
        self.repo.as_ref().err().map(String::as_str)
    }

    /// True when the builder's repository is seam's own source.
    pub fn is_self_modification(&self) -> bool {
        self.repo.as_ref().is_ok_and(|r| r.self_source)
    }

    /// The staging directory (`<seam_home>/staging`).
    pub fn staging(&self) -> PathBuf {
        self.config.seam_home.join("staging")
    }

    /// The branch the builder made for `turn`, if it made one yet.
    pub fn turn_branch(&self, turn: &str) -> Option<(String, PathBuf)> {
        let state = self.turns.lock().ok()?.get(turn).cloned()?;
        let state = state.lock().ok()?;
        state
            .branch
            .as_ref()
            .map(|b| (b.branch.clone(), b.worktree.clone()))
    }

    fn turn_state(&self, turn: &str) -> Arc<Mutex<TurnState>> {
        let mut turns = self.turns.lock().unwrap_or_else(|p| p.into_inner());
        turns.entry(turn.to_owned()).or_default().clone()
    }

    /// Calls one local tool. The answer's strings are scrubbed.
    pub fn call(
        &self,
        turn: &TurnInfo,
        tool: &str,
        params: &Map<String, Value>,
    ) -> Result<Value, LocalRefusal> {
        let validator = self.validators.get(tool).ok_or_else(|| {
            refusal(
                RefusalCode::UnknownTool,
                format!(
                    "{tool:?} is not a local tool (they are {})",
                    LOCAL_TOOLS.join(", ")
                ),
            )
        })?;
        let instance = Value::Object(params.clone());
        if let Some(e) = validator.0.iter_errors(&instance).next() {
            let at = e.instance_path().to_string();
            let field = if at.is_empty() {
                "params".to_owned()
            } else {
                format!("params{}", at.replace('/', "."))
            };
            return Err(refusal(RefusalCode::InvalidParams, format!("{field}: {e}")));
        }
        let out = match tool {
            "builder" => self.builder(turn, params),
            "scribe" => self.scribe(turn, params),
            "context" => Ok(tools::context(turn, str_param(params, "what"))),
            "graph" => self.graph(params),
            "seer" => match str_param(params, "what") {
                Some("ledger") => Ok(tools::seer_ledger(turn)),
                _ => tools::seer_queue(&self.config.seam_home),
            },
            "aesthesis" => self.aesthesis(turn, params),
            "image" => self.image(turn, params),
            _ => Err(refusal(
                RefusalCode::UnknownTool,
                format!("{tool:?} is not a local tool"),
            )),
        }?;
        Ok(turn::scrubbed_answer(&self.scrubber, out))
    }

    fn repo(&self) -> Result<&Repo, LocalRefusal> {
        let repo = self
            .repo
            .as_ref()
            .map_err(|why| refusal(RefusalCode::Unavailable, why.clone()))?;
        if repo.self_source && self.config.self_modify == Decision::Deny {
            return Err(refusal(
                RefusalCode::CapabilityDenied,
                "the repository is seam's own source and the policy denies self.modify: the builder cannot change it",
            ));
        }
        Ok(repo)
    }

    fn builder(&self, turn: &TurnInfo, params: &Map<String, Value>) -> Result<Value, LocalRefusal> {
        let repo = self.repo()?;
        let op = required(params, "op", "")?;
        let message = str_param(params, "message");
        // Check the params before a branch is made for them.
        let mut notes = Vec::new();
        let (path, payload, edit) = match op {
            "write" => {
                let path = required(params, "path", "for write")?;
                // `text` is what append takes: read it as the content.
                let content = match (str_param(params, "content"), str_param(params, "text")) {
                    (Some(c), _) => c,
                    (None, Some(t)) => {
                        notes.push("read params.text as the file's content".to_owned());
                        t
                    }
                    (None, None) => required(params, "content", "for write")?,
                };
                (Some(path), Some(content), None)
            }
            "append" => {
                let path = required(params, "path", "for append")?;
                // `content` is what write takes: read it as the text.
                let text = match (str_param(params, "text"), str_param(params, "content")) {
                    (Some(t), Some(_)) => {
                        notes.push(
                            "params.content is not used by append: it adds params.text".to_owned(),
                        );
                        t
                    }
                    (Some(t), None) => t,
                    (None, Some(c)) => {
                        notes.push("read params.content as the text to append".to_owned());
                        c
                    }
                    (None, None) => required(params, "text", "for append")?,
                };
                if text.is_empty() {
                    return Err(refusal(
                        RefusalCode::InvalidParams,
                        format!("params.text is empty: give the text to add to {path}"),
                    ));
                }
                (Some(path), None, Some(builder::Edit::Append { text }))
            }
            "replace" => {
                // A replace that names no path is of the one file holding `old`,
                // found once the branch is there (below).
                let mut path = str_param(params, "path").filter(|p| !p.trim().is_empty());
                let Some(mut old) = str_param(params, "old") else {
                    // Without old the call cannot run; a path that is no file
                    // of the branch is the first thing to say (a small model
                    // guessed both), so it is looked for on the branch.
                    let e = required(params, "old", "for replace").unwrap_err();
                    let Some(p) = path else {
                        return Err(e);
                    };
                    builder::admit(repo, p)?;
                    let state = self.turn_state(&turn.turn);
                    let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
                    let b = self.branch_of(&mut state, repo, turn)?;
                    return Err(
                        builder::missing_file(repo, b, p, self.config.max_file_bytes).unwrap_or(e),
                    );
                };
                // `old` copied from the builder's own list of lines: one line
                // names its file and text; several cannot be one replace.
                if let Some(named) = builder::NamedLine::parse_all(old) {
                    let [one] = named.as_slice() else {
                        return Err(refusal(RefusalCode::InvalidParams, listed_old(&named)));
                    };
                    if let Some(p) = path.filter(|p| *p != one.path) {
                        notes.push(format!(
                            "params.path {p} was not used: params.old names {}",
                            one.path
                        ));
                    }
                    notes.push(format!(
                        "params.old is the builder's line `{one}`: read as line {} of {} without the `{}:{}: ` before it",
                        one.n, one.path, one.path, one.n
                    ));
                    path = Some(one.path);
                    old = one.text;
                }
                let mut new = required(params, "new", "for replace (\"\" deletes old)")?;
                if let Some([l]) = builder::NamedLine::parse_all(new).as_deref()
                    && Some(l.path) == path
                {
                    notes.push(format!(
                        "params.new was read without the `{}:{}: ` before it",
                        l.path, l.n
                    ));
                    new = l.text;
                }
                if old.is_empty() {
                    return Err(refusal(
                        RefusalCode::InvalidParams,
                        format!(
                            "params.old is empty: give the exact text to replace in {} (append adds text at its end)",
                            path.unwrap_or("the file")
                        ),
                    ));
                }
                if new == old {
                    // qwen2.5-coder-1.5b, shown the line to change, gave it
                    // back as both old and new. The call stands (it changes
                    // nothing, and says so); the note says why.
                    notes.push(
                        "params.new is the same as params.old, so nothing changed: give as params.new the text as the task wants it"
                            .to_owned(),
                    );
                }
                (path, None, Some(builder::Edit::Replace { old, new }))
            }
            "patch" => (None, Some(required(params, "diff", "for patch")?), None),
            "delete" => (Some(required(params, "path", "for delete")?), None, None),
            _ => (None, None, None),
        };
        if let Some(p) = path {
            builder::admit(repo, p)?;
        }
        let state = self.turn_state(&turn.turn);
        let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
        let b = self.branch_of(&mut state, repo, turn)?;
        let max = self.config.max_file_bytes;
        match (op, path, payload, edit) {
            ("write", Some(p), Some(content), _) => {
                builder::write(repo, b, p, content, message, max, notes)
            }
            ("append" | "replace", Some(p), _, Some(edit)) => {
                builder::edit(repo, b, p, edit, message, max, notes)
            }
            ("replace", None, _, Some(edit @ builder::Edit::Replace { old, new })) => {
                let found = builder::file_holding(repo, b, old, new, max)?;
                notes.push(format!(
                    "params.path was not given: {found} is the one file that holds params.old"
                ));
                builder::edit(repo, b, &found, edit, message, max, notes)
            }
            ("patch", _, Some(diff), _) => builder::patch(repo, b, diff, message, max),
            ("delete", Some(p), _, _) => builder::delete(repo, b, p, message),
            ("check", _, _, _) => self.check(b),
            _ => Err(refusal(
                RefusalCode::InvalidParams,
                format!("params.op {op:?} is not an op"),
            )),
        }
    }

    /// The turn's branch, opened on its first use (one at a time: two turns
    /// must not pick the same free name).
    fn branch_of<'s>(
        &self,
        state: &'s mut TurnState,
        repo: &Repo,
        turn: &TurnInfo,
    ) -> Result<&'s mut TurnBranch, LocalRefusal> {
        if state.branch.is_none() {
            let _opening = self.opening.lock().unwrap_or_else(|p| p.into_inner());
            let b = builder::open_branch(&self.staging(), repo, &turn.turn, &turn.task)?;
            state.branch = Some(b);
        }
        Ok(state.branch.as_mut().expect("made above"))
    }

    fn check(&self, b: &TurnBranch) -> Result<Value, LocalRefusal> {
        let Some(argv) = &self.config.check else {
            return Err(refusal(
                RefusalCode::Unavailable,
                "no check command is configured for this repository",
            ));
        };
        let run = critic::run_check(argv, &b.worktree, self.config.check_timeout, &self.scrubber)
            .map_err(|e| {
            refusal(
                RefusalCode::Failed,
                format!("cannot run `{}`: {e}", argv.join(" ")),
            )
        })?;
        if let Ok(mut builds) = seam_memory::MemoryHome::new(&self.config.seam_home).agent_builds()
        {
            let _ = builds.record(
                &self.scrubber,
                &seam_memory::NewBuildRecord {
                    kind: seam_memory::RunKind::Build,
                    command: &run.command,
                    exit_status: run.exit_status,
                    duration: run.duration,
                    summary: &format!(
                        "builder check on {}: {}",
                        b.branch,
                        if run.passed() { "passed" } else { "failed" }
                    ),
                    log: &run.output,
                },
            );
        }
        let output = critic::cut_end(&run.output, 4096);
        Ok(serde_json::json!({
            "branch": b.branch,
            "passed": run.passed(),
            "exit_status": run.exit_status,
            "timed_out": run.timed_out,
            "output": output,
        }))
    }

    fn scribe(&self, turn: &TurnInfo, params: &Map<String, Value>) -> Result<Value, LocalRefusal> {
        let text = required(params, "text", "")?;
        if text.trim().is_empty() {
            return Err(refusal(RefusalCode::InvalidParams, "params.text is empty"));
        }
        if text.len() > MAX_NOTE_BYTES {
            return Err(refusal(
                RefusalCode::InvalidParams,
                format!(
                    "params.text is {} bytes, over the limit of {MAX_NOTE_BYTES}",
                    text.len()
                ),
            ));
        }
        let title = str_param(params, "title").unwrap_or("").trim();
        let title = seam_term::head(title, 200).0.to_owned();
        let state = self.turn_state(&turn.turn);
        let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
        state
            .notes
            .push((title.clone(), text.trim_end().to_owned()));
        Ok(serde_json::json!({
            "staged": true,
            "note": state.notes.len(),
            "title": title,
            "kept": "once the operator approves it",
        }))
    }

    fn graph(&self, params: &Map<String, Value>) -> Result<Value, LocalRefusal> {
        let conn = ReturnQueue::read_only(&self.config.seam_home)
            .map_err(|e| refusal(RefusalCode::Failed, e.to_string()))?;
        match required(params, "op", "")? {
            "neighbors" => {
                tools::graph_neighbors(conn.as_ref(), required(params, "node", "for neighbors")?)
            }
            "path" => tools::graph_path(
                conn.as_ref(),
                required(params, "node", "for path")?,
                required(params, "to", "for path")?,
            ),
            _ => tools::graph_search(conn.as_ref(), required(params, "query", "for search")?),
        }
    }

    fn aesthesis(
        &self,
        turn: &TurnInfo,
        params: &Map<String, Value>,
    ) -> Result<Value, LocalRefusal> {
        let repo = self
            .repo
            .as_ref()
            .map_err(|why| refusal(RefusalCode::Unavailable, why.clone()))?;
        let own = self.turn_branch(&turn.turn);
        let wanted = str_param(params, "branch");
        // This turn's branch, or a pending queue item's.
        if let Some((branch, worktree)) = own.filter(|(b, _)| wanted.is_none_or(|w| w == b)) {
            let state = self.turn_state(&turn.turn);
            let state = state.lock().unwrap_or_else(|p| p.into_inner());
            let base = state
                .branch
                .as_ref()
                .map(|b| b.base.clone())
                .unwrap_or_default();
            return aesthesis::critique(&worktree, &branch, &base, &self.scrubber);
        }
        let Some(wanted) = wanted else {
            return Err(refusal(
                RefusalCode::NotFound,
                "this turn has no staged branch yet (builder makes one)",
            ));
        };
        let queue = ReturnQueue::existing(&self.config.seam_home)
            .map_err(|e| refusal(RefusalCode::Failed, e.to_string()))?;
        let items = match queue {
            Some(q) => q
                .list(500)
                .map_err(|e| refusal(RefusalCode::Failed, e.to_string()))?,
            None => Vec::new(),
        };
        for item in items.into_iter().filter(|i| i.status == Status::Pending) {
            if let Staged::Branch {
                repo: r,
                branch,
                worktree,
                base,
                ..
            } = &item.staged
                && branch == wanted
                && *r == repo.root
            {
                return aesthesis::critique(worktree, branch, base, &self.scrubber);
            }
        }
        Err(refusal(
            RefusalCode::NotFound,
            format!("no staged branch named {wanted:?} (seer what=queue lists them)"),
        ))
    }

    fn image(&self, turn: &TurnInfo, params: &Map<String, Value>) -> Result<Value, LocalRefusal> {
        let dot = required(params, "dot", "")?;
        let path = image::render(&self.staging(), &turn.turn, dot, str_param(params, "name"))?;
        let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        let file = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let state = self.turn_state(&turn.turn);
        let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
        state.images.push((path, dot.to_owned()));
        Ok(
            serde_json::json!({"staged": file, "bytes": bytes, "shown": "to the operator in the queue"}),
        )
    }

    /// Ends a turn: its branch (if it committed anything) goes through the
    /// Critic and into the queue as one item; each note and diagram likewise.
    /// A branch with no commit is removed. Returns the new items.
    pub fn finish_turn(&self, turn: &TurnInfo) -> Result<Vec<QueueItem>, LocalError> {
        let state = {
            let mut turns = self.turns.lock().unwrap_or_else(|p| p.into_inner());
            turns.remove(&turn.turn)
        };
        let Some(state) = state else {
            return Ok(Vec::new());
        };
        let state = std::mem::take(&mut *state.lock().unwrap_or_else(|p| p.into_inner()));
        let mut queue = ReturnQueue::open(&self.config.seam_home)?;
        let critic = self.config.critic();
        let mut items = Vec::new();
        if let (Some(b), Ok(repo)) = (state.branch, &self.repo) {
            if b.commits == 0 {
                builder::discard(&b)?;
            } else {
                let tip = git::rev(&b.worktree, "HEAD")?;
                let report = critic::critique_branch(
                    &critic,
                    &self.scrubber,
                    &b.worktree,
                    &b.base,
                    repo.self_source,
                )?;
                let _ = critic::record(&self.config.seam_home, &self.scrubber, &b.branch, &report);
                let summary = format!(
                    "{}: {} file{} changed ({}) for {}",
                    b.branch,
                    report.files.len(),
                    if report.files.len() == 1 { "" } else { "s" },
                    first_files(&report.files),
                    b.target
                );
                items.push(queue.push(queue::NewItem {
                    turn: turn.turn.clone(),
                    summary,
                    preview: report.preview.clone(),
                    verdict: report.verdict,
                    critic: report.summary(),
                    staged: Staged::Branch {
                        repo: repo.root.clone(),
                        branch: b.branch.clone(),
                        worktree: b.worktree.clone(),
                        base: b.base.clone(),
                        target: b.target.clone(),
                        staging_repo: b.staging_repo.clone(),
                        tip,
                        commits: b.commits,
                        files: report.files.clone(),
                    },
                })?);
            }
        }
        for (title, text) in state.notes {
            let report = critic::critique_note(&critic, &self.scrubber, &text);
            let _ = critic::record(&self.config.seam_home, &self.scrubber, "note", &report);
            let shown = if title.is_empty() {
                seam_term::head(text.lines().next().unwrap_or(""), 80)
                    .0
                    .to_owned()
            } else {
                title.clone()
            };
            items.push(queue.push(queue::NewItem {
                turn: turn.turn.clone(),
                summary: format!("note: {}", self.scrubber.scrub(&shown).text),
                preview: report.preview.clone(),
                verdict: report.verdict,
                critic: report.summary(),
                staged: Staged::Note {
                    title,
                    text: report.preview.clone(),
                },
            })?);
        }
        for (path, dot) in state.images {
            let dot = self.scrubber.scrub(&dot).text;
            items.push(queue.push(queue::NewItem {
                turn: turn.turn.clone(),
                summary: format!("image: {}", path.display()),
                preview: critic::cut(&dot, critic::PREVIEW_BYTES),
                verdict: Verdict::Pass,
                critic: "pass: rendered by dot with no file access".to_owned(),
                staged: Staged::Image { path },
            })?);
        }
        Ok(items)
    }
}

fn first_files(files: &[String]) -> String {
    let mut s = files.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
    if files.len() > 3 {
        s.push_str(&format!(", +{}", files.len() - 3));
    }
    s
}

/// The refusal of a replace whose `old` is several lines of the builder's own
/// list (`path:N: line`): it names them and says how to make one replace of
/// one of them.
fn listed_old(named: &[builder::NamedLine<'_>]) -> String {
    let mut files: Vec<&str> = Vec::new();
    for l in named {
        if !files.contains(&l.path) {
            files.push(l.path);
        }
    }
    let first = named[0];
    format!(
        "params.old is {} lines of the builder's list (`path:N: line` each, from {}): a replace changes one place of one file. \
         Pick the one line the task changes; give its file as params.path, the line without its `path:N: ` as params.old, \
         and the line as the task wants it as params.new. For the first line listed: params.path {:?}, params.old {:?}",
        named.len(),
        files.join(", "),
        first.path,
        first.text
    )
}
