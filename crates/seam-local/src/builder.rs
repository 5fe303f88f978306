//! The builder: one branch `seam/<turn>-<n>` per turn, in a worktree of its
//! own under `<seam_home>/staging/worktrees/`, started from the commit the
//! operator's branch was on. It writes, patches and deletes files there and
//! commits each change; it never touches the operator's working tree, index or
//! branches (approval, in the queue, is the operator's act).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::LocalRefusal;
use crate::git::{self, GitError};
use crate::guard::guarded;
use crate::repo_path::{self, RepoPath};

/// The repository the builder works on.
#[derive(Debug, Clone)]
pub(crate) struct Repo {
    pub root: PathBuf,
    /// seam's own source (see `guard`).
    pub self_source: bool,
}

/// A turn's branch, once the builder made it.
#[derive(Debug, Clone)]
pub(crate) struct TurnBranch {
    pub branch: String,
    pub worktree: PathBuf,
    pub base: String,
    pub target: String,
    pub commits: usize,
}

pub(crate) fn failed(e: GitError) -> LocalRefusal {
    LocalRefusal::new("failed", e.to_string())
}

/// A turn id as it may appear in a branch and a directory name.
pub(crate) fn turn_slug(turn: &str) -> String {
    let mut s: String = turn
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .take(64)
        .collect();
    s = s.trim_matches('-').to_owned();
    if s.is_empty() { "turn".to_owned() } else { s }
}

/// Makes the turn's branch and worktree.
pub(crate) fn open_branch(
    staging: &Path,
    repo: &Repo,
    turn: &str,
) -> Result<TurnBranch, LocalRefusal> {
    let root = &repo.root;
    let target = git::current_branch(root).map_err(failed)?.ok_or_else(|| {
        LocalRefusal::new(
            "unavailable",
            format!(
                "the repository {} is on a detached HEAD: the builder stages against a branch",
                root.display()
            ),
        )
    })?;
    let base = git::rev(root, "HEAD").map_err(|_| {
        LocalRefusal::new(
            "unavailable",
            format!("the repository {} has no commit yet", root.display()),
        )
    })?;
    let dir = staging.join("worktrees");
    make_private_dir(&dir)?;
    let slug = turn_slug(turn);
    for n in 1..=1000 {
        let branch = format!("seam/{slug}-{n}");
        let worktree = dir.join(format!("{slug}-{n}"));
        if worktree.exists() || git::branch_exists(root, &branch).map_err(failed)? {
            continue;
        }
        let wt = worktree.to_string_lossy();
        git::git(
            root,
            &["worktree", "add", "--quiet", "-b", &branch, &wt, &base],
        )
        .map_err(failed)?;
        return Ok(TurnBranch {
            branch,
            worktree,
            base,
            target,
            commits: 0,
        });
    }
    Err(LocalRefusal::new(
        "failed",
        format!("no free branch name seam/{slug}-N"),
    ))
}

pub(crate) fn make_private_dir(dir: &Path) -> Result<(), LocalRefusal> {
    use std::os::unix::fs::DirBuilderExt;
    if dir.is_dir() {
        return Ok(());
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| LocalRefusal::new("failed", format!("cannot create {}: {e}", dir.display())))
}

/// Refuses a path the builder may never change.
pub(crate) fn admit(repo: &Repo, raw: &str) -> Result<RepoPath, LocalRefusal> {
    let path = RepoPath::parse(raw)?;
    if let Some(g) = guarded(&path, repo.self_source) {
        return Err(LocalRefusal::new(g.code(), g.message(path.as_str())));
    }
    Ok(path)
}

/// Commits what is staged in the worktree; `None` when nothing changed.
fn commit(b: &mut TurnBranch, message: &str) -> Result<Option<String>, LocalRefusal> {
    let wt = &b.worktree;
    if git::git_test(wt, &["diff", "--cached", "--quiet"]).map_err(failed)? {
        return Ok(None);
    }
    let message = if message.trim().is_empty() {
        "builder change"
    } else {
        message
    };
    git::git_in(
        wt,
        &["commit", "--quiet", "--no-verify", "-F", "-"],
        Some(message.as_bytes()),
    )
    .map_err(failed)?;
    b.commits += 1;
    Ok(Some(git::rev(wt, "HEAD").map_err(failed)?))
}

fn answer(b: &TurnBranch, commit: Option<String>, extra: Value) -> Value {
    let mut v = json!({
        "branch": b.branch,
        "changed": commit.is_some(),
    });
    if let Some(c) = commit {
        v["commit"] = json!(c[..12.min(c.len())]);
    }
    if let (Value::Object(m), Value::Object(e)) = (&mut v, extra) {
        m.extend(e);
    }
    v
}

pub(crate) fn write(
    repo: &Repo,
    b: &mut TurnBranch,
    raw: &str,
    content: &str,
    message: Option<&str>,
    max_bytes: usize,
) -> Result<Value, LocalRefusal> {
    let path = admit(repo, raw)?;
    if content.len() > max_bytes {
        return Err(LocalRefusal::new(
            "invalid_params",
            format!(
                "content is {} bytes, over the limit of {max_bytes}",
                content.len()
            ),
        ));
    }
    repo_path::write_file(&b.worktree, &path, content.as_bytes())?;
    git::git(&b.worktree, &["add", "--", path.as_str()]).map_err(failed)?;
    let msg = message.map_or_else(|| format!("builder: write {path}"), str::to_owned);
    let c = commit(b, &msg)?;
    Ok(answer(b, c, json!({"path": path.as_str()})))
}

pub(crate) fn delete(
    repo: &Repo,
    b: &mut TurnBranch,
    raw: &str,
    message: Option<&str>,
) -> Result<Value, LocalRefusal> {
    let path = admit(repo, raw)?;
    repo_path::remove_file(&b.worktree, &path)?;
    git::git(&b.worktree, &["add", "-A", "--", path.as_str()]).map_err(failed)?;
    let msg = message.map_or_else(|| format!("builder: delete {path}"), str::to_owned);
    let c = commit(b, &msg)?;
    Ok(answer(b, c, json!({"path": path.as_str()})))
}

pub(crate) fn patch(
    repo: &Repo,
    b: &mut TurnBranch,
    diff: &str,
    message: Option<&str>,
    max_bytes: usize,
) -> Result<Value, LocalRefusal> {
    if diff.len() > max_bytes {
        return Err(LocalRefusal::new(
            "invalid_params",
            format!(
                "diff is {} bytes, over the limit of {max_bytes}",
                diff.len()
            ),
        ));
    }
    if diff.lines().any(|l| {
        (l.starts_with("new file mode") || l.starts_with("new mode")) && l.ends_with("120000")
    }) {
        return Err(LocalRefusal::new(
            "not_allowed",
            "the diff makes a symbolic link: the builder writes only regular files",
        ));
    }
    let mut diff = diff.to_owned();
    if !diff.ends_with('\n') {
        diff.push('\n');
    }
    let wt = b.worktree.clone();
    if let Err(e) = git::git_in(
        &wt,
        &["apply", "--index", "--recount", "--whitespace=nowarn", "-"],
        Some(diff.as_bytes()),
    ) {
        let _ = undo(&wt);
        let why = match e {
            GitError::Failed { stderr, .. } => stderr,
            e => e.to_string(),
        };
        return Err(LocalRefusal::new(
            "failed",
            format!("the diff does not apply: {why}"),
        ));
    }
    // What the diff really changed, asked of git: each path is admitted like a
    // written one, and no link may appear.
    let names = git::git_bytes(
        &wt,
        &["diff", "--cached", "--name-only", "-z", "--no-renames"],
        None,
    )
    .map_err(failed)?;
    let mut files = Vec::new();
    for name in names.split(|c| *c == 0).filter(|n| !n.is_empty()) {
        let name = String::from_utf8_lossy(name).into_owned();
        if let Err(r) = admit(repo, &name) {
            let _ = undo(&wt);
            return Err(r);
        }
        files.push(name);
    }
    let summary =
        git::git(&wt, &["diff", "--cached", "--summary", "--no-renames"]).map_err(failed)?;
    if summary.lines().any(|l| l.contains(" mode 120000 ")) {
        let _ = undo(&wt);
        return Err(LocalRefusal::new(
            "not_allowed",
            "the diff makes a symbolic link: the builder writes only regular files",
        ));
    }
    let msg = message.map_or_else(
        || format!("builder: patch {}", files.join(", ")),
        str::to_owned,
    );
    let c = commit(b, &msg)?;
    Ok(answer(b, c, json!({"files": files})))
}

/// Puts the worktree back to its last commit.
fn undo(wt: &Path) -> Result<(), GitError> {
    git::git(wt, &["reset", "--quiet", "--hard", "HEAD"])?;
    git::git(wt, &["clean", "-fdq"])?;
    Ok(())
}

/// Removes a branch's worktree and the branch (a turn that changed nothing).
pub(crate) fn discard(repo: &Repo, b: &TurnBranch) -> Result<(), GitError> {
    if b.worktree.exists() {
        git::git(
            &repo.root,
            &[
                "worktree",
                "remove",
                "--force",
                "--force",
                &b.worktree.to_string_lossy(),
            ],
        )?;
    }
    git::git(&repo.root, &["worktree", "prune"])?;
    if git::branch_exists(&repo.root, &b.branch)? {
        git::git(&repo.root, &["branch", "-D", "-q", &b.branch])?;
    }
    Ok(())
}
