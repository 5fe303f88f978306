//! `python.run`: Python code the model wrote, run in seam-sandbox's walls.
//!
//! The code runs as `python3 -c CODE` in fresh namespaces with a read-only view of the system
//! and Python directories, a scratch directory that dies with the call, no network, Landlock,
//! seccomp and rlimits (see the `seam_sandbox` crate). The result is
//! `{exit_code, signal, stdout, stderr, stdout_cut, stderr_cut, timed_out, limit_hit,
//! sandboxed, wall_ms}`; the toolbox scrubs it like every result.
//!
//! **Capability** `python.run`. Its default is `ask` (the policy's built-in table): on a machine
//! whose owner said nothing, code the model wrote does not run without someone saying yes,
//! even in a sandbox — an execution cannot be undone, and a demanding owner expects to be
//! asked before the first one. An owner opts in with `"python.run" = "allow"`.
//!
//! **The owner's files the code names.** Code that opens `'data/runs.csv'`, `"notes/a.md"`,
//! `'~/x.csv'` or an absolute path by a string literal is shown that file, read-only. Every
//! string literal of the code (see `seam_pylex`: quotes, prefixes, escapes; an f-string only
//! when it interpolates nothing) that looks like a file name is admitted by the toolbox's own
//! path admission ([`ToolCall::open_owner_file`], the same as `files.read`'s
//! `Access::Owner(Read)`: relative to the workspace, `~` the owner's home, `..` normalised, the
//! capability, the protected list, the allow-list, links followed and the real file named).
//! The bytes read through the admitted descriptor are copied into the sandbox
//! ([`seam_sandbox::ReadOnlyFile`]) at the name the code uses (a relative name under the
//! working directory, an absolute one at that path): a copy, not a bind of the machine's file,
//! so what the sandbox sees is what admission decided about, with no window and no way back
//! to the file. At most [`MAX_OWNER_FILES`] files of [`MAX_OWNER_BYTES`] in all; past either
//! the call is refused, naming the limit and the file.
//!
//! A `~/x` name has two spellings in Python, and the copy is at both: `x` under the sandbox's
//! home, which is the working directory (where `os.path.expanduser('~/x')` leads), and the
//! relative name `~/x` itself (a directory named `~` in the working directory), which is what
//! `open('~/x')` opens, since `open` does not expand `~`. The second place holds the very
//! bytes admission decided about: nothing new is admitted. It is a second copy the sandbox
//! holds, so it counts against both limits, but it is placed only in the room the owner's
//! files leave (see `place_extras`): it never costs the run a file, and the refusals count
//! only the files the code names.
//!
//! A name that is not admitted does not fail the call (so a string that merely looks like a
//! path costs nothing), and the result's `note` says
//! `"notes/x.md was not made available (protected): <why, naming the real file>"`, so the
//! model learns why. A protected name is shown a one-line stand-in that says it is withheld
//! (see `stand_in`), at each place of the name, so the rest of the code runs, and the note
//! says where it is; any other refused name stays absent. A name that leads nowhere
//! (`not_found`, `invalid_path`) is not mentioned: most literals are not files. A refused
//! file's content never enters the sandbox. The files shown are listed in the result's
//! `owner_files` (`name`, `path` where the file really is, `inside`, `bytes`, and for a `~/x`
//! name `also_inside`, the place of the name as written).
//!
//! **Taint.** A sandboxed run that was shown none of the owner's files does not taint the
//! turn: the sandbox has no network and nothing else of the owner's, so its output is a
//! function of what the turn already held (the code, stdin and files the model wrote) and of
//! public system files. A run shown an owner file taints the turn (the toolbox knows:
//! the file came through [`ToolCall::open_owner_file`]). A turn already tainted stays tainted.
//! It has no egress, so a tainted turn may still run code.
//!
//! **Honest degradation.** Where the machine cannot raise every wall, the call is refused
//! with a message naming what is missing — unless the policy says
//! `"python.run" = "allow-unsandboxed"`. Then the run goes ahead without the walls, its result
//! says `sandboxed: false`, and (decided when the toolbox is built, from the probe) the tool
//! is declared as tainting and as having egress: unsandboxed code can read the owner's files
//! and reach the network, so it is governed like any tool that can.

use std::ffi::OsStr;
use std::io::Read;
use std::time::Duration;

use seam_policy::{Capability, Policy};
use seam_protocol::RefusalCode;
use seam_sandbox::{Job, Limits, MAX_CODE_BYTES, ReadOnlyFile, Sandbox, SandboxError, ScratchFile};
use serde::Deserialize;
use serde_json::{Value, json};

use seam_toolbox::{GovernedTool, ToolCall, ToolDecl, ToolFailure};

/// Default wall-clock seconds of a run.
pub const DEFAULT_TIMEOUT_S: f64 = 10.0;
/// Longest wall-clock timeout a call may ask for (below the gate's own call timeout).
pub const MAX_TIMEOUT_S: f64 = 20.0;
/// Most bytes of stdin.
const MAX_STDIN: u64 = 1 << 20;
/// Most of the owner's files one run is shown.
const MAX_OWNER_FILES: usize = seam_sandbox::MAX_READ_ONLY_FILES;
/// Most bytes of the owner's files one run is shown, in all.
const MAX_OWNER_BYTES: u64 = seam_sandbox::MAX_READ_ONLY_BYTES;
/// Most names of the code that path admission is asked about (each is a lookup).
const MAX_NAMES_ASKED: usize = 256;

#[derive(Debug)]
pub struct PythonRun {
    decl: ToolDecl,
    /// The owner allowed unsandboxed runs and this machine cannot raise every wall.
    run_unsandboxed: bool,
    /// `None`: the process-wide sandbox, probed on first use.
    sandbox: Option<&'static Sandbox>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    code: String,
    stdin: Option<String>,
    timeout_s: Option<f64>,
    scratch_files: Option<Vec<FileParam>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileParam {
    name: String,
    text: String,
}

impl PythonRun {
    /// The tool under `policy`, with the process-wide sandbox.
    pub fn new(policy: &Policy) -> Self {
        Self::build(policy, None)
    }

    /// The tool with a given sandbox (tests, or a gate that picked its own interpreter).
    pub fn with_sandbox(policy: &Policy, sandbox: &'static Sandbox) -> Self {
        Self::build(policy, Some(sandbox))
    }

    fn build(policy: &Policy, sandbox: Option<&'static Sandbox>) -> Self {
        // Probe only when the answer changes the declaration: an owner who allowed
        // unsandboxed runs, on a machine without every wall, gets a tool that taints and
        // has egress.
        let run_unsandboxed =
            policy.python_run_unsandboxed() && !sandbox.unwrap_or_else(Sandbox::shared).available();
        PythonRun {
            decl: ToolDecl {
                name: "python.run",
                version: "1",
                description: "Compute with Python 3: run code in a sandbox (no network, a scratch working directory that is removed afterwards) and return its exit code, stdout and stderr. A file the code opens by its path in a string literal, e.g. open('data/sales.csv'), is there to read (read-only), if files.read would give it. To read a file and answer from it, use files.read.",
                schema: json!({
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["code"],
                    "properties": {
                        "code": {"type": "string", "minLength": 1, "maxLength": MAX_CODE_BYTES, "contentMediaType": "text/x-python", "description": "Python 3 source, run as python3 -c"},
                        "stdin": {"type": "string", "maxLength": MAX_STDIN, "description": "text given to the code on stdin"},
                        "timeout_s": {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_TIMEOUT_S, "description": "wall-clock seconds before the run is killed (default 10)"},
                        "scratch_files": {
                            "type": "array",
                            "maxItems": seam_sandbox::MAX_FILES,
                            "description": "text files put into the working directory first",
                            "items": {
                                "type": "object",
                                "additionalProperties": false,
                                "required": ["name", "text"],
                                "properties": {
                                    "name": {"type": "string", "minLength": 1, "maxLength": seam_sandbox::MAX_FILE_NAME, "description": "relative name inside the working directory, e.g. data.csv or pkg/mod.py"},
                                    "text": {"type": "string"}
                                }
                            }
                        }
                    }
                }),
                capability: Capability::PythonRun,
                reads: false,
                paths: vec![],
                taints: run_unsandboxed,
                egress: run_unsandboxed,
                // unsandboxed code can reach anywhere: no parameter says where
                destinations: Vec::new(),
                none_named: crate::NoneNamed::Unknown,
            },
            run_unsandboxed,
            sandbox,
        }
    }

    fn sandbox(&self) -> &'static Sandbox {
        self.sandbox.unwrap_or_else(Sandbox::shared)
    }
}

impl GovernedTool for PythonRun {
    fn decl(&self) -> &ToolDecl {
        &self.decl
    }

    fn run(&self, call: ToolCall) -> Result<Value, ToolFailure> {
        let params: Params = serde_json::from_value(call.params().clone())
            .map_err(|e| ToolFailure::new(RefusalCode::InvalidParams, e.to_string()))?;
        let timeout = params.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S);
        if !(timeout > 0.0 && timeout <= MAX_TIMEOUT_S) {
            return Err(ToolFailure::new(
                RefusalCode::InvalidParams,
                format!("timeout_s must be in (0, {MAX_TIMEOUT_S}]"),
            ));
        }
        let sandbox = self.sandbox();
        let scratch: Vec<ScratchFile> = params
            .scratch_files
            .unwrap_or_default()
            .into_iter()
            .map(|f| ScratchFile {
                name: f.name,
                text: f.text,
            })
            .collect();
        // Nothing of the owner's is read for a run that will not happen.
        let owner = if sandbox.available() || self.run_unsandboxed {
            owner_files(&call, sandbox, &params.code, &scratch)?
        } else {
            OwnerFiles::default()
        };
        let job = Job {
            code: params.code,
            stdin: params.stdin.unwrap_or_default().into_bytes(),
            files: scratch,
            read_only: owner.files,
            limits: Limits::with_wall(Duration::from_secs_f64(timeout)),
        };
        let result = if sandbox.available() {
            sandbox.run(&job)
        } else if self.run_unsandboxed {
            sandbox.run_unsandboxed(&job)
        } else {
            // refuses, naming every missing wall
            sandbox.run(&job)
        };
        match result {
            Ok(out) => {
                let mut value = serde_json::to_value(&out).map_err(|e| {
                    ToolFailure::new(RefusalCode::ToolFailed, format!("python.run: {e}"))
                })?;
                if !owner.shown.is_empty() {
                    value["owner_files"] = Value::Array(owner.shown);
                }
                if !owner.notes.is_empty() {
                    value["note"] = json!(owner.notes.join("\n"));
                }
                if !out.sandboxed {
                    let missing: Vec<&str> = sandbox
                        .protections()
                        .missing()
                        .iter()
                        .map(|p| p.name)
                        .collect();
                    value["unsandboxed_because"] = json!(format!(
                        "the policy says \"python.run\" = \"allow-unsandboxed\" and this machine \
                         lacks: {}",
                        missing.join(", ")
                    ));
                }
                Ok(value)
            }
            Err(e @ SandboxError::Unavailable { .. }) => Err(ToolFailure::new(
                RefusalCode::ToolFailed,
                format!(
                    "python.run refuses to run: {e}. seam never runs code unsandboxed on its \
                     own; `seam doctor` shows the walls. An owner who accepts the risk can set \
                     [capabilities] \"python.run\" = \"allow-unsandboxed\" in the policy file"
                ),
            )),
            Err(e @ SandboxError::InvalidJob(_)) => Err(ToolFailure::new(
                RefusalCode::InvalidParams,
                format!("python.run: {e}"),
            )),
            Err(e) => Err(ToolFailure::new(
                RefusalCode::ToolFailed,
                format!("python.run: {e}"),
            )),
        }
    }
}

/// The owner's files a run is shown, and what the model is told about the names it used.
#[derive(Debug, Default)]
struct OwnerFiles {
    files: Vec<ReadOnlyFile>,
    /// `{name, path, inside, bytes}` of each file shown (and `also_inside`, see `Extra`).
    shown: Vec<Value>,
    /// Why a name was not made available.
    notes: Vec<String>,
}

/// A copy placed once every name of the code was looked up, in the room the limits leave:
/// a stand-in (see `stand_in`), and the second place of a `~/x` name (see `owner_files`).
#[derive(Debug)]
struct Extra {
    /// Where it lands in the sandbox.
    inside: String,
    file: ReadOnlyFile,
    of: ExtraOf,
}

#[derive(Debug, Clone, Copy)]
enum ExtraOf {
    /// The literal `~/x` place of the file shown at `OwnerFiles::shown[i]`.
    Shown(usize),
    /// A stand-in for the refused name whose note is `OwnerFiles::notes[i]`.
    StandIn(usize),
}

/// Finds the owner's files `code` names, admits each through the toolbox, and reads the
/// admitted ones (at most [`MAX_OWNER_FILES`], [`MAX_OWNER_BYTES`] in all).
fn owner_files(
    call: &ToolCall,
    sandbox: &Sandbox,
    code: &str,
    scratch: &[ScratchFile],
) -> Result<OwnerFiles, ToolFailure> {
    let mut owner = OwnerFiles::default();
    let mut total: u64 = 0;
    let mut targets: Vec<String> = Vec::new();
    let mut extras: Vec<Extra> = Vec::new();
    let mut asked = 0;
    for lit in seam_pylex::file_names(code) {
        if lit.len() > seam_sandbox::MAX_READ_ONLY_NAME {
            continue;
        }
        if asked == MAX_NAMES_ASKED {
            owner.notes.push(format!(
                "only the first {MAX_NAMES_ASKED} file names of the code were looked up; \
                 {lit} and those after it were not made available"
            ));
            break;
        }
        asked += 1;
        // In the sandbox `~` is its home, the working directory: `~/x` lands at `x`, where
        // `os.path.expanduser` leads. Python's `open` does not expand `~`: it opens the
        // relative name `~/x` (a directory named `~`), so the same bytes go there too.
        let home_name = lit.strip_prefix("~/");
        let inside_name = home_name.unwrap_or(&lit);
        let inside = match sandbox.read_only_target(inside_name) {
            Ok(inside) => inside,
            Err(why) => {
                owner
                    .notes
                    .push(format!("{lit} was not made available: {why}"));
                continue;
            }
        };
        // The place of the name as written, for a `~/x` name (`None` where the sandbox
        // cannot hold it: the name leads into its own directories).
        let as_written = home_name.and_then(|_| sandbox.read_only_target(&lit).ok());
        // A scratch file of the call is what the code means by a name that leads there.
        let shadowed = |f: &ScratchFile| inside.strip_prefix("/scratch/") == Some(&f.name);
        if targets.contains(&inside) || scratch.iter().any(shadowed) {
            continue;
        }
        let admitted = match call.open_owner_file(OsStr::new(&lit)) {
            Ok(admitted) => admitted,
            // most literals are not files: a name that leads nowhere is not worth a word
            Err(r) if matches!(r.code, RefusalCode::NotFound | RefusalCode::InvalidPath) => {
                continue;
            }
            Err(r) if r.code == RefusalCode::NotAFile => {
                owner.notes.push(format!(
                    "{lit} was not made available: {}; python.run is shown the files its \
                     code names, not directories",
                    r.message
                ));
                continue;
            }
            // A protected name (the refusal already names it) reads a stand-in, at each
            // place of the name; any other refused name stays absent: a stand-in at
            // `/home`, outside the allow-list, would make the sandbox show a place it hides.
            // The note says whether the stand-in is there once the extras are placed.
            Err(r) if r.code == RefusalCode::Protected => {
                let note = owner.notes.len();
                owner.notes.push(format!(
                    "{lit} was not made available ({}): {}",
                    r.code.as_str(),
                    r.message
                ));
                let content = stand_in(&lit, r.code).into_bytes();
                let places = [(inside, inside_name)]
                    .into_iter()
                    .chain(as_written.map(|w| (w, lit.as_str())));
                for (inside, name) in places {
                    extras.push(Extra {
                        inside,
                        file: ReadOnlyFile {
                            name: name.to_owned(),
                            content: content.clone(),
                        },
                        of: ExtraOf::StandIn(note),
                    });
                }
                continue;
            }
            Err(r) => {
                owner.notes.push(format!(
                    "{lit} was not made available ({}): {}",
                    r.code.as_str(),
                    r.message
                ));
                continue;
            }
        };
        let real = admitted.real.display().to_string();
        if owner.files.len() == MAX_OWNER_FILES {
            return Err(ToolFailure::new(
                RefusalCode::InvalidParams,
                format!(
                    "the code names more than {MAX_OWNER_FILES} of the owner's files \
                     ({real} is one too many); python.run is shown at most \
                     {MAX_OWNER_FILES} in one call: split the work"
                ),
            ));
        }
        let room = MAX_OWNER_BYTES - total;
        let too_big = |size: u64| {
            ToolFailure::new(
                RefusalCode::InvalidParams,
                format!(
                    "{real} is {size} bytes, and the owner's files shown to one python.run \
                     call hold at most {MAX_OWNER_BYTES} bytes ({} MiB) in all ({total} \
                     already): read less of it, or in more calls",
                    MAX_OWNER_BYTES >> 20
                ),
            )
        };
        if admitted.metadata.len() > room {
            return Err(too_big(admitted.metadata.len()));
        }
        let mut content = Vec::new();
        (&admitted.file)
            .take(room + 1)
            .read_to_end(&mut content)
            .map_err(|e| {
                ToolFailure::new(RefusalCode::ToolFailed, format!("reading {real}: {e}"))
            })?;
        if content.len() as u64 > room {
            // it grew while it was read
            return Err(too_big(content.len() as u64));
        }
        total += content.len() as u64;
        if let Some(as_written) = as_written {
            // the very bytes admission decided about, under the name as written
            extras.push(Extra {
                inside: as_written,
                file: ReadOnlyFile {
                    name: lit.clone(),
                    content: content.clone(),
                },
                of: ExtraOf::Shown(owner.shown.len()),
            });
        }
        owner.shown.push(json!({
            "name": lit,
            "path": real,
            "inside": inside,
            "bytes": content.len(),
        }));
        targets.push(inside);
        owner.files.push(ReadOnlyFile {
            name: inside_name.to_owned(),
            content,
        });
    }
    place_extras(&mut owner, total, &targets, scratch, extras);
    Ok(owner)
}

/// Places the extras of a run (stand-ins, and the second place of each `~/x` name), in the
/// order of the names, and makes the notes say what was placed.
///
/// An extra is a copy the sandbox holds (its bytes in the sandbox's memory, one more
/// file), so it counts against [`MAX_OWNER_FILES`] and [`MAX_OWNER_BYTES`] like any file
/// shown: those limits are the sandbox's own ([`seam_sandbox::MAX_READ_ONLY_FILES`],
/// [`seam_sandbox::MAX_READ_ONLY_BYTES`]), which count every copy it is handed. It is
/// placed only in the room the owner's files leave, so it never costs the run a file, and
/// the refusals above count and name only the owner's files the code names. Nothing in it
/// is new: a second place carries the very bytes admission decided about, a stand-in none
/// of the file. An extra goes where nothing else of the run is, above or below it (a file
/// shown, a scratch file, another extra): two places for one name never become two
/// contents at one place.
fn place_extras(
    owner: &mut OwnerFiles,
    mut total: u64,
    targets: &[String],
    scratch: &[ScratchFile],
    extras: Vec<Extra>,
) {
    let scratch_inside: Vec<String> = scratch
        .iter()
        .map(|f| format!("/scratch/{}", f.name))
        .collect();
    let clash = |a: &str, b: &str| {
        a == b || a.starts_with(&format!("{b}/")) || b.starts_with(&format!("{a}/"))
    };
    // Per note of a refused name: each place of its stand-in (the name inside), and why
    // it was not placed.
    type Place = (String, Option<String>);
    let mut stand_ins: Vec<(usize, Vec<Place>)> = Vec::new();
    for (i, extra) in extras.iter().enumerate() {
        let mut others = targets.iter().chain(&scratch_inside).chain(
            extras
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, o)| &o.inside),
        );
        let len = extra.file.content.len() as u64;
        let why_not = if others.any(|o| clash(&extra.inside, o)) {
            Some("another file of the run is there".to_owned())
        } else if owner.files.len() == MAX_OWNER_FILES || total + len > MAX_OWNER_BYTES {
            Some(format!(
                "a run holds at most {MAX_OWNER_FILES} files and {MAX_OWNER_BYTES} bytes"
            ))
        } else {
            None
        };
        if why_not.is_none() {
            total += len;
            owner.files.push(extra.file.clone());
        }
        match extra.of {
            ExtraOf::Shown(k) => match why_not {
                None => owner.shown[k]["also_inside"] = json!(extra.inside),
                Some(why) => owner.notes.push(format!(
                    "{} is at {} (where os.path.expanduser leads), and not also at the name \
                     as written, {}: {why}",
                    extra.file.name,
                    owner.shown[k]["inside"].as_str().unwrap_or_default(),
                    extra.inside
                )),
            },
            ExtraOf::StandIn(note) => {
                let place = (extra.file.name.clone(), why_not);
                match stand_ins.iter_mut().find(|(n, _)| *n == note) {
                    Some((_, places)) => places.push(place),
                    None => stand_ins.push((note, vec![place])),
                }
            }
        }
    }
    for (note, places) in stand_ins {
        let (placed, not): (Vec<_>, Vec<_>) = places.into_iter().partition(|p| p.1.is_none());
        let tail = if not.is_empty() {
            "; the code read a one-line stand-in in its place".to_owned()
        } else {
            let not: Vec<String> = not
                .into_iter()
                .map(|(name, why)| format!("{name} ({})", why.unwrap_or_default()))
                .collect();
            let placed: Vec<String> = placed.into_iter().map(|p| p.0).collect();
            if placed.is_empty() {
                format!("; nothing was put in its place at {}", not.join(", "))
            } else {
                format!(
                    "; the code read a one-line stand-in in its place at {}, and nothing at {}",
                    placed.join(", "),
                    not.join(", ")
                )
            }
        };
        owner.notes[note].push_str(&tail);
    }
}

/// What code reads in place of an owner file it named that admission refused as
/// protected (a key, a token file): one line that says so, naming the file as
/// the code did, and nothing of the file itself. The code runs on, so the rest of what it
/// does is done: asked to print a key and `7**23` in one script, the model saw the script
/// die at the key and never sent it again without it. The note says the same; the turn is
/// not tainted by it, since nothing of the owner's entered the sandbox.
fn stand_in(name: &str, why: RefusalCode) -> String {
    format!(
        "[seam: {name} is withheld ({}); python.run is never shown it]\n",
        why.as_str()
    )
}
