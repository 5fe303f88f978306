//! The git CLI, run the same careful way every time: no hooks, no signing, no
//! prompts, no pathspec magic, a fixed identity, and none of the caller's
//! `GIT_*` variables that would point it at another repository.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A git command that failed: which one, where, and what git said.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("cannot run git (is it installed?): {0}")]
    Spawn(#[source] std::io::Error),
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

fn command(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(dir);
    for c in [
        "core.hooksPath=/dev/null",
        "commit.gpgsign=false",
        "tag.gpgsign=false",
        "core.fsmonitor=false",
        "core.pager=cat",
        "advice.detachedHead=false",
        "init.defaultBranch=main",
    ] {
        cmd.arg("-c").arg(c);
    }
    cmd.arg("-c").arg(format!("user.name={BUILDER_NAME}"));
    cmd.arg("-c").arg(format!("user.email={BUILDER_EMAIL}"));
    for var in [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_COMMON_DIR",
        "GIT_CEILING_DIRECTORIES",
        "GIT_NAMESPACE",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_COUNT",
        "GIT_EXTERNAL_DIFF",
        "GIT_DIFF_OPTS",
        "GIT_EDITOR",
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("GIT_LITERAL_PATHSPECS", "1")
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
    let out = command(dir)
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

/// Runs git in `dir` and returns its stdout as bytes.
pub fn git_bytes(dir: &Path, args: &[&str], input: Option<&[u8]>) -> Result<Vec<u8>, GitError> {
    use std::io::Write;
    let mut cmd = command(dir);
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

fn failed(dir: &Path, args: &[&str], stderr: &[u8]) -> GitError {
    let mut stderr = String::from_utf8_lossy(stderr).trim().to_owned();
    if stderr.len() > 2000 {
        let mut end = 2000;
        while !stderr.is_char_boundary(end) {
            end -= 1;
        }
        stderr.truncate(end);
        stderr.push('…');
    }
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
