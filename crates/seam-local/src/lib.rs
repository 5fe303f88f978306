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
//! `write`. A missing file is made by `append` and refused by `replace`,
//! unless the path names no file but means one: a `replace` of a path whose
//! end (after a `/`) is the whole path of one file git tracks on the branch
//! (`src/tally/config.py` for `tally/config.py`), or failing that whose file
//! name is one file's (`src/config.py`), edits that file; several such files
//! are named in the refusal. `append` takes only the first kind, of a file in
//! a directory (a name alone is no reason not to make the file named);
//! `write` and `patch` keep their paths, and `delete` deletes only the file
//! named. A snippet that is not in the file as written is looked for line by
//! line with each line's indentation left out (a small model gets the words
//! right far more often than the spaces), and the new lines then take the
//! file's indentation; then with `'` and `"` one character and a run of
//! spaces and tabs one space (line breaks still line breaks; a snippet of
//! several lines must be whole lines), and `new`'s quotes written the file's
//! way when `old` and `new` quote alike and `new` stays paired. Only a
//! snippet found in exactly one place is replaced, and what is there as
//! written always wins; a snippet not found is refused with the line most
//! like its first quoted, and one in several loose places with their lines.
//! A `replace` that names no path edits the one file git tracks on the
//! branch that holds the snippet (guarded files are never read for it);
//! none, or more than one, is refused, naming them.
//! When a call is read otherwise than written (`content` as append's text, an
//! LF snippet in a CRLF file, a snippet without its indentation or with other
//! quotes or spacing, a path read as another file's, a path found for a
//! snippet), the answer's `note` says so.
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
mod builder_call;
pub mod critic;
mod finish;
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

use seam_home::SeamHome;
use seam_policy::Decision;
use seam_protocol::RefusalCode;
use seam_scrub::Scrubber;
use serde_json::{Map, Value};

pub use critic::{CheckRun, CriticConfig, CriticReport};
pub use git::GitError;
pub use process::programs;
pub use queue::{Decided, QueueError, QueueItem, ReturnQueue, Staged, Status, Verdict};
pub use repo_path::RepoPath;
pub use seam_memory::FileKind;
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
        let (root, repo) = builder::learn(&SeamHome::new(&config.seam_home), &start);
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
        self.home().staging()
    }

    /// seam's home, laid out.
    pub(crate) fn home(&self) -> SeamHome {
        SeamHome::new(&self.config.seam_home)
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
}
