//! The git CLI, run the same careful way every time: no hooks, no signing, no
//! prompts, no pathspec magic, a fixed identity, and none of the caller's
//! `GIT_*` variables that would point it at another repository.
//!
//! Neither the owner's global config (`~/.gitconfig`) nor the system's is
//! read (`GIT_CONFIG_GLOBAL=/dev/null`, `GIT_CONFIG_NOSYSTEM=1`, and
//! `GIT_ATTR_NOSYSTEM=1` for attributes): inside the agent's walls git could
//! not read them anyway and would die on the refusal, and outside them (the
//! operator's `approve`) they are not what the approval should depend on.
//! Every config key that names a program git would run is switched off on the
//! command line, where a repository's own config cannot undo it: hooks,
//! fsmonitor, pager, editors, askpass, ssh, proxy, credential helpers,
//! external diff, the attributes file, submodule recursion, automatic gc and
//! maintenance, and every transport (`protocol.allow=never`). What remains are
//! the filter, diff and merge drivers a repository's attributes name; the
//! operator's side refuses a branch that adds such an attribute before git
//! ever checks it out (see `apply`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A git command that failed: which one, where, and what git said.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// The cause stays in the message, not in `source()`: the builder shows this error to the
    /// model by its message alone.
    #[error("cannot run git (is it installed?): {0}")]
    Spawn(std::io::Error),
    #[error("git {args} in {}: {stderr}", dir.display())]
    Failed {
        args: String,
        dir: PathBuf,
        stderr: String,
    },
}

/// The name and address on the builder's commits.
pub const BUILDER_NAME: &str = "seam builder";
pub const BUILDER_EMAIL: &str = "builder@seam.invalid";

/// The `-c` settings on every git command: each switches off a program git
/// would otherwise take from a config file.
const SETTINGS: &[&str] = &[
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.pager=cat",
    "core.editor=:",
    "sequence.editor=:",
    "core.askPass=",
    "core.sshCommand=",
    "core.gitProxy=",
    "core.attributesFile=/dev/null",
    "credential.helper=",
    "diff.external=",
    "commit.gpgsign=false",
    "tag.gpgsign=false",
    "merge.verifySignatures=false",
    "submodule.recurse=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "protocol.allow=never",
    "advice.detachedHead=false",
    "init.defaultBranch=main",
];

/// The caller's variables that would point git at another repository, other
/// objects, another config or a program.
const CLEARED: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_CEILING_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_SHALLOW_FILE",
    "GIT_REPLACE_REF_BASE",
    "GIT_CONFIG",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_TEMPLATE_DIR",
    "GIT_EXTERNAL_DIFF",
    "GIT_DIFF_OPTS",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_PAGER",
    "GIT_ASKPASS",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_PROXY_COMMAND",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
];

/// The program git is run as, looked up on PATH.
pub(crate) const GIT: &str = "git";

/// git in `dir`, set up as the module doc says.
pub(crate) fn command(dir: &Path) -> Command {
    let mut cmd = Command::new(GIT);
    cmd.arg("-C").arg(dir);
    for c in SETTINGS {
        cmd.arg("-c").arg(c);
    }
    cmd.arg("-c").arg(format!("user.name={BUILDER_NAME}"));
    cmd.arg("-c").arg(format!("user.email={BUILDER_EMAIL}"));
    for var in CLEARED {
        cmd.env_remove(var);
    }
    cmd.env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_ATTR_NOSYSTEM", "1")
        .env("GIT_NO_REPLACE_OBJECTS", "1")
        .env("GIT_LITERAL_PATHSPECS", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("LC_ALL", "C");
    cmd
}

/// Runs git in `dir` and returns its stdout (lossy UTF-8); `input` goes to stdin.
pub fn git_in(dir: &Path, args: &[&str], input: Option<&[u8]>) -> Result<String, GitError> {
    git_bytes(dir, args, input).map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// Runs git in `dir` and returns its stdout.
pub fn git(dir: &Path, args: &[&str]) -> Result<String, GitError> {
    git_in(dir, args, None)
}

/// Runs git in `dir`; true when it exits 0, false when it exits 1 (the
/// `--is-ancestor` / `--quiet` answers); an error otherwise.
pub fn git_test(dir: &Path, args: &[&str]) -> Result<bool, GitError> {
    run_test(command(dir), dir, args)
}

/// Runs git in `dir` and returns its stdout as bytes.
pub fn git_bytes(dir: &Path, args: &[&str], input: Option<&[u8]>) -> Result<Vec<u8>, GitError> {
    run_bytes(command(dir), dir, args, input)
}

/// [`git_test`] with a command of the caller's (made by [`command`]).
pub(crate) fn run_test(mut cmd: Command, dir: &Path, args: &[&str]) -> Result<bool, GitError> {
    let out = cmd
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(GitError::Spawn)?;
    match out.status.code() {
        Some(0) => Ok(true),
        Some(1) => Ok(false),
        _ => Err(failed(dir, args, &out.stderr)),
    }
}

/// [`git_bytes`] with a command of the caller's (made by [`command`]).
pub(crate) fn run_bytes(
    mut cmd: Command,
    dir: &Path,
    args: &[&str],
    input: Option<&[u8]>,
) -> Result<Vec<u8>, GitError> {
    use std::io::Write;
    cmd.args(args)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(GitError::Spawn)?;
    let feeder = match (input, child.stdin.take()) {
        (Some(bytes), Some(mut stdin)) => {
            let bytes = bytes.to_vec();
            Some(std::thread::spawn(move || {
                let _ = stdin.write_all(&bytes);
            }))
        }
        _ => None,
    };
    let out = child.wait_with_output().map_err(GitError::Spawn)?;
    if let Some(f) = feeder {
        let _ = f.join();
    }
    if !out.status.success() {
        return Err(failed(dir, args, &out.stderr));
    }
    Ok(out.stdout)
}

pub(crate) fn failed(dir: &Path, args: &[&str], stderr: &[u8]) -> GitError {
    let stderr = String::from_utf8_lossy(stderr);
    let stderr = seam_term::clip(stderr.trim(), 2000, "…").into_owned();
    GitError::Failed {
        args: args.join(" "),
        dir: dir.to_owned(),
        stderr,
    }
}

/// The root of the (non-bare) repository holding `dir`.
pub fn toplevel(dir: &Path) -> Result<PathBuf, GitError> {
    Ok(PathBuf::from(
        git(dir, &["rev-parse", "--show-toplevel"])?.trim_end_matches('\n'),
    ))
}

/// The commit a revision names.
pub fn rev(dir: &Path, rev: &str) -> Result<String, GitError> {
    Ok(git(
        dir,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ],
    )?
    .trim()
    .to_owned())
}

/// The branch HEAD is on (`main`), or `None` when HEAD is detached.
pub fn current_branch(dir: &Path) -> Result<Option<String>, GitError> {
    match git(dir, &["symbolic-ref", "--quiet", "--short", "HEAD"]) {
        Ok(s) => Ok(Some(s.trim().to_owned())),
        Err(GitError::Failed { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// True when the branch exists.
pub fn branch_exists(dir: &Path, branch: &str) -> Result<bool, GitError> {
    git_test(
        dir,
        &[
            "show-ref",
            "--verify",
            "--quiet",
            &format!("refs/heads/{branch}"),
        ],
    )
}

/// The worktree that has `branch` checked out, if any (`git worktree list`).
pub fn worktree_of(dir: &Path, branch: &str) -> Result<Option<PathBuf>, GitError> {
    let list = git(dir, &["worktree", "list", "--porcelain", "-z"])?;
    let want = format!("branch refs/heads/{branch}");
    let mut current: Option<PathBuf> = None;
    for field in list.split('\0') {
        if let Some(p) = field.strip_prefix("worktree ") {
            current = Some(PathBuf::from(p));
        } else if field == want {
            return Ok(current);
        }
    }
    Ok(None)
}

/// The repository's object directory, absolute (`git rev-parse --git-path
/// objects`: the common directory's `objects`, also from a linked worktree).
pub fn objects_dir(dir: &Path) -> Result<PathBuf, GitError> {
    let out = git(
        dir,
        &[
            "rev-parse",
            "--path-format=absolute",
            "--git-path",
            "objects",
        ],
    )?;
    let p = PathBuf::from(out.trim_end_matches('\n'));
    Ok(if p.is_absolute() { p } else { dir.join(p) })
}

/// The repository's object format (`sha1`, `sha256`).
pub fn object_format(dir: &Path) -> Result<String, GitError> {
    Ok(git(dir, &["rev-parse", "--show-object-format"])?
        .trim()
        .to_owned())
}

/// The object directories `objects` lists in its `info/alternates`, and
/// theirs, as git follows them (relative entries are relative to the
/// directory that lists them; git stops at depth 5).
pub fn alternates(objects: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let mut todo = vec![(objects.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = todo.pop() {
        if depth >= 5 {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(dir.join("info").join("alternates")) else {
            continue;
        };
        for line in text.lines() {
            let line = line.trim_end_matches('\r');
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let p = dir.join(line);
            let p = std::fs::canonicalize(&p).unwrap_or(p);
            if p != objects && !out.contains(&p) {
                out.push(p.clone());
                todo.push((p, depth + 1));
            }
        }
    }
    out
}

/// True when `s` is a full object id in lowercase hex (40 for SHA-1, 64 for
/// SHA-256).
pub fn is_full_oid(s: &str) -> bool {
    (s.len() == 40 || s.len() == 64)
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The `seam/*` branches of `dir`'s repository.
pub fn seam_branches(dir: &Path) -> Result<Vec<String>, GitError> {
    Ok(git(
        dir,
        &[
            "for-each-ref",
            "--format=%(refname:short)",
            "refs/heads/seam/",
        ],
    )?
    .lines()
    .filter(|l| !l.is_empty())
    .map(str::to_owned)
    .collect())
}

/// The branches checked out in some worktree of `dir`'s repository.
pub fn checked_out(dir: &Path) -> Result<Vec<String>, GitError> {
    let list = git(dir, &["worktree", "list", "--porcelain", "-z"])?;
    Ok(list
        .split('\0')
        .filter_map(|f| f.strip_prefix("branch refs/heads/"))
        .map(str::to_owned)
        .collect())
}
