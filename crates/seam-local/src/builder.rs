//! The builder: one branch `seam/<turn>-<n>` per turn, in a worktree of its
//! own under `<seam_home>/staging/worktrees/`, started from the commit the
//! operator's branch was on when the tools were opened.
//!
//! The branch lives in a **staging repository** of seam's, a bare
//! `<seam_home>/staging/repos/<slug>.git` whose `objects/info/alternates`
//! lists the operator's object directories: the base commit and all of its
//! history are readable there without a copy, and nothing the builder does
//! writes to the operator's repository. What the builder needs from the
//! operator's repository (its top level, the branch, the base commit, the
//! object directories) is learnt once, read-only, by [`learn`] in the launcher
//! before the agent's walls go up; after that the builder runs git only in the
//! staging repository and its worktrees. Approval, in the queue, is the
//! operator's act (see `apply`).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use seam_home::SeamHome;
use seam_memory::FileKind;
use seam_protocol::RefusalCode;

use crate::LocalRefusal;
use crate::git::{self, GitError};
use crate::guard::guarded;
use crate::repo_path::{self, RepoPath};
use crate::suggest::suggested_replace;

/// The repository the builder works on, as the launcher learnt it.
#[derive(Debug, Clone)]
pub(crate) struct Repo {
    /// The operator's repository's top level.
    pub root: PathBuf,
    /// seam's own source (see `guard`).
    pub self_source: bool,
    /// The operator's branch (HEAD's) that an approved branch fast-forwards.
    pub target: String,
    /// The commit HEAD was on.
    pub base: String,
    /// The operator's object directories (its own, then its alternates):
    /// all the agent may read of the operator's `.git`.
    pub objects: Vec<PathBuf>,
    /// `sha1` or `sha256`.
    pub object_format: String,
    /// The staging repository, `<seam_home>/staging/repos/<slug>.git`.
    pub staging_repo: PathBuf,
}

/// The top level of the repository holding `start`, if there is one, and
/// what the builder needs from it, or why the builder is unavailable. Runs
/// git read-only in the operator's repository: the launcher's call, before
/// the walls.
pub(crate) fn learn(home: &SeamHome, start: &Path) -> (Option<PathBuf>, Result<Repo, String>) {
    let root = match git::toplevel(start) {
        Ok(root) => root,
        Err(e) => {
            return (
                None,
                Err(format!(
                    "no git repository at {} for the builder ({e})",
                    start.display()
                )),
            );
        }
    };
    let learnt = (|| {
        let target = git::current_branch(&root)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| {
                format!(
                    "the repository {} is on a detached HEAD: the builder stages against a branch (switch to one and start seam again)",
                    root.display()
                )
            })?;
        let base = git::rev(&root, "HEAD").map_err(|_| {
            format!(
                "the repository {} has no commit yet: the builder starts from one (commit, then start seam again)",
                root.display()
            )
        })?;
        let own = git::objects_dir(&root).map_err(|e| e.to_string())?;
        let own = std::fs::canonicalize(&own).unwrap_or(own);
        let mut objects = vec![own.clone()];
        objects.extend(git::alternates(&own));
        let object_format = git::object_format(&root).unwrap_or_else(|_| "sha1".to_owned());
        Ok(Repo {
            self_source: crate::guard::is_seam_source(&root),
            staging_repo: home
                .staged_repos()
                .join(format!("{}.git", repo_slug(&root))),
            root: root.clone(),
            target,
            base,
            objects,
            object_format,
        })
    })();
    (Some(root), learnt)
}

/// A directory name for the repository at `root`: its last name and a hash
/// of the whole path (FNV-1a; a name, not a security property).
pub(crate) fn repo_slug(root: &Path) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in root.as_os_str().as_encoded_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    let name = root
        .file_name()
        .map(|n| turn_slug(&n.to_string_lossy()))
        .unwrap_or_else(|| "repo".to_owned());
    let name: String = name.chars().take(40).collect();
    format!("{name}-{h:016x}")
}

/// A turn's branch, once the builder made it.
#[derive(Debug, Clone)]
pub(crate) struct TurnBranch {
    pub branch: String,
    pub worktree: PathBuf,
    pub base: String,
    pub target: String,
    pub staging_repo: PathBuf,
    pub commits: usize,
    /// The operator's task the branch is for: a refusal that must send the
    /// model to the right file names the lines most like it.
    pub task: String,
}

pub(crate) fn failed(e: GitError) -> LocalRefusal {
    LocalRefusal::new(RefusalCode::Failed, e.to_string())
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

/// Makes (on first use) the staging repository: bare, no templates, the
/// operator's object format, and `objects/info/alternates` naming the
/// operator's object directories (written every time, so it follows them).
/// Then forgets what the operator decided: worktrees whose directories the
/// queue removed, and `seam/*` branches no worktree has checked out.
fn staging_repo(repo: &Repo) -> Result<(), LocalRefusal> {
    let sr = &repo.staging_repo;
    let parent = sr.parent().unwrap_or(sr);
    make_private_dir(parent)?;
    if std::fs::symlink_metadata(sr).is_err() {
        let format = format!("--object-format={}", repo.object_format);
        git::git(
            parent,
            &[
                "init",
                "--bare",
                "--quiet",
                "--template=",
                &format,
                &sr.to_string_lossy(),
            ],
        )
        .map_err(failed)?;
    }
    let info = sr.join("objects").join("info");
    make_private_dir(&info)?;
    let mut list = String::new();
    for dir in &repo.objects {
        list.push_str(&dir.to_string_lossy());
        list.push('\n');
    }
    let alternates = info.join("alternates");
    std::fs::write(&alternates, list).map_err(|e| {
        LocalRefusal::new(
            RefusalCode::Failed,
            format!("cannot write {}: {e}", alternates.display()),
        )
    })?;
    if !git::git_test(
        sr,
        &["cat-file", "-e", &format!("{}^{{commit}}", repo.base)],
    )
    .unwrap_or(false)
    {
        return Err(LocalRefusal::new(
            RefusalCode::Unavailable,
            format!(
                "the base commit {:.12} cannot be read through {} (it lists {}): the agent needs read access to the operator's object directories (LocalTools::repository_objects)",
                repo.base,
                alternates.display(),
                repo.objects
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    git::git(sr, &["worktree", "prune"]).map_err(failed)?;
    let live = git::checked_out(sr).map_err(failed)?;
    for b in git::seam_branches(sr).map_err(failed)? {
        if !live.contains(&b) {
            git::git(sr, &["branch", "-D", "-q", &b]).map_err(failed)?;
        }
    }
    Ok(())
}

/// Makes the turn's branch and worktree, in the staging repository.
pub(crate) fn open_branch(
    home: &SeamHome,
    repo: &Repo,
    turn: &str,
    task: &str,
) -> Result<TurnBranch, LocalRefusal> {
    staging_repo(repo)?;
    let sr = &repo.staging_repo;
    let dir = home.worktrees();
    make_private_dir(&dir)?;
    let slug = turn_slug(turn);
    for n in 1..=1000 {
        let branch = format!("seam/{slug}-{n}");
        let worktree = dir.join(format!("{slug}-{n}"));
        if std::fs::symlink_metadata(&worktree).is_ok()
            || git::branch_exists(sr, &branch).map_err(failed)?
        {
            continue;
        }
        let wt = worktree.to_string_lossy();
        git::git(
            sr,
            &["worktree", "add", "--quiet", "-b", &branch, &wt, &repo.base],
        )
        .map_err(failed)?;
        return Ok(TurnBranch {
            branch,
            worktree,
            base: repo.base.clone(),
            target: repo.target.clone(),
            staging_repo: sr.clone(),
            commits: 0,
            task: task.to_owned(),
        });
    }
    Err(LocalRefusal::new(
        RefusalCode::Failed,
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
        .map_err(|e| {
            LocalRefusal::new(
                RefusalCode::Failed,
                format!("cannot create {}: {e}", dir.display()),
            )
        })
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
    notes: Vec<String>,
) -> Result<Value, LocalRefusal> {
    let path = admit(repo, raw)?;
    if content.len() > max_bytes {
        return Err(LocalRefusal::new(
            RefusalCode::InvalidParams,
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
    let mut extra = json!({"path": path.as_str()});
    if !notes.is_empty() {
        extra["note"] = json!(notes.join("; "));
    }
    Ok(answer(b, c, extra))
}

/// What a small model can write instead of a whole file or a diff: an
/// edit of the file that is in the worktree now.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Edit<'a> {
    /// `text` at the end of the file, on lines of its own; the file is made
    /// when it does not exist.
    Append { text: &'a str },
    /// The one place `old` is in the file becomes `new`.
    Replace { old: &'a str, new: &'a str },
}

/// Edits one file (see [`Edit`]) and commits it. Refused, naming the file:
/// a file that is not UTF-8 text, a `replace` whose `old` is not in the file
/// exactly once (nor loosely, see [`replaced`]), and a file that would grow
/// over `max_bytes`. `notes` says what was read differently from how it was
/// written (the file's CRLF line endings, a path read as another file's).
///
/// A path the branch has no file at may be read as the one file it means
/// (see [`files_meant`]): a `replace` takes the one file whose path the
/// given one ends with (at a `/`), or failing that the one file of its name,
/// and is refused naming them when there are several; an `append` takes
/// only the first kind, and only for a file in a directory (a file's name
/// alone, or a file at the top, is no reason not to make the file named).
/// qwen2.5-coder-1.5b, on a Python project whose settings are in
/// `tally/config.py`, sent `src/tally/config.py` twice, was refused twice,
/// and gave up.
pub(crate) fn edit(
    repo: &Repo,
    b: &mut TurnBranch,
    raw: &str,
    edit: Edit<'_>,
    message: Option<&str>,
    max_bytes: usize,
    mut notes: Vec<String>,
) -> Result<Value, LocalRefusal> {
    let mut path = admit(repo, raw)?;
    let given = match edit {
        Edit::Append { text } => text.len(),
        Edit::Replace { old, new } => old.len().max(new.len()),
    };
    if given > max_bytes {
        return Err(LocalRefusal::new(
            RefusalCode::InvalidParams,
            format!("the text is {given} bytes, over the limit of {max_bytes}"),
        ));
    }
    let mut before = read_text(b, &path, max_bytes)?;
    // How the path given was read, when it named no file: said in a refusal too.
    let mut read_as = None;
    let mut meant = Meant::default();
    if before.is_none() {
        meant = files_meant(b, repo, &path);
        let taken = match edit {
            Edit::Replace { .. } => meant.one(),
            Edit::Append { .. } => meant.one().filter(|f| meant.by_path && f.contains('/')),
        };
        if let Some(found) = taken {
            let found = admit(repo, found)?;
            let why = if meant.by_path {
                "the one file of the repository its path ends with"
            } else {
                "the one file of that name"
            };
            read_as = Some(format!("{path} does not exist; read as {found}, {why}"));
            notes.push(format!("{path} does not exist; edited {found}, {why}"));
            before = read_text(b, &found, max_bytes)?;
            path = found;
        }
    }
    let done = edit_read(
        repo, b, &path, before, &meant, edit, message, max_bytes, notes,
    );
    match read_as {
        Some(said) => done.map_err(|mut e| {
            e.message = format!("{said}: {}", e.message);
            e
        }),
        None => done,
    }
}

/// The file at `path` as UTF-8 text, `None` when there is none.
fn read_text(
    b: &TurnBranch,
    path: &RepoPath,
    max_bytes: usize,
) -> Result<Option<String>, LocalRefusal> {
    let Some(bytes) = repo_path::read_file(&b.worktree, path, max_bytes)? else {
        return Ok(None);
    };
    String::from_utf8(bytes).map(Some).map_err(|_| {
        LocalRefusal::new(
            RefusalCode::InvalidParams,
            format!(
                "{path} is not UTF-8 text: append and replace edit text (write replaces a file whole)"
            ),
        )
    })
}

/// [`edit`] of the file at `path`, read as `before`; `meant` are the files a
/// missing `path` may mean (named by the refusal or the note).
#[allow(clippy::too_many_arguments)]
fn edit_read(
    repo: &Repo,
    b: &mut TurnBranch,
    path: &RepoPath,
    before: Option<String>,
    meant: &Meant,
    edit: Edit<'_>,
    message: Option<&str>,
    max_bytes: usize,
    mut notes: Vec<String>,
) -> Result<Value, LocalRefusal> {
    let path = path.clone();
    let mut extra = json!({"path": path.as_str()});
    let (after, verb) = match edit {
        Edit::Append { text } => {
            if text.is_empty() {
                return Err(LocalRefusal::new(
                    RefusalCode::InvalidParams,
                    "params.text is empty: give the text to add",
                ));
            }
            extra["created"] = json!(before.is_none());
            if before.is_none() {
                // Asked to make a page size 25, qwen2.5-coder-1.5b appended a
                // line of Python to a new `shelf.py` in a JavaScript project,
                // and answered that it was done.
                let like = lines_like(b, repo, &b.task);
                if !like.is_empty() {
                    notes.push(format!(
                        "{path} did not exist and was made; if the task is a change to code \
                         that is there, these lines of the repository are most like it:\n{}",
                        like.join("\n")
                    ));
                }
                if !meant.files.is_empty() {
                    let made = if like.is_empty() {
                        format!("{path} did not exist and was made; ")
                    } else {
                        String::new()
                    };
                    notes.push(format!(
                        "{made}the repository's files of that name: {} (to add to one, give it as params.path)",
                        meant.files.join(", ")
                    ));
                }
            }
            (appended(before.as_deref().unwrap_or(""), text), "append to")
        }
        Edit::Replace { old, new } => {
            let Some(content) = before.as_deref() else {
                return Err(no_such_file(b, repo, &path, Some((old, new)), &meant.files));
            };
            let r = match replaced(content, old, new) {
                Ok(r) => r,
                Err(NoReplace::Many(n)) => {
                    return Err(many_places(b, repo, &path, content, old, new, n));
                }
                Err(why @ NoReplace::NotFound { .. }) => {
                    return Err(match suggested_replace(b, repo, old, new, &b.task) {
                        Some(s) => LocalRefusal::new(
                            RefusalCode::NotFound,
                            format!("params.old is not found in {path}. {s}"),
                        ),
                        None => why.refusal(&path),
                    });
                }
                Err(why) => return Err(why.refusal(&path)),
            };
            if r.crlf {
                notes.push(format!(
                    "read params.old and params.new with {path}'s CRLF line endings"
                ));
            }
            if r.indented_new {
                notes.push(format!(
                    "params.new's later lines were indented like line {} of {path}",
                    r.line
                ));
            }
            if let Some(last) = r.reindented {
                notes.push(format!(
                    "params.old is lines {}-{last} of {path} but for their indentation: those lines were replaced, params.new indented like them",
                    r.line
                ));
            }
            if let Some(loose) = &r.loose {
                let place = if loose.last == r.line {
                    format!("line {}", r.line)
                } else {
                    format!("lines {}-{}", r.line, loose.last)
                };
                notes.push(format!(
                    "params.old is not in {path} as written, but is {place} of {path} when ' and \" are one and a run of spaces is one space: that place was replaced"
                ));
                for (model, file) in &loose.quotes {
                    notes.push(format!(
                        "params.new's {model} written as {file}, as {path} has it"
                    ));
                }
            }
            extra["line"] = json!(r.line);
            (r.text, "replace in")
        }
    };
    if after.len() > max_bytes {
        return Err(LocalRefusal::new(
            RefusalCode::InvalidParams,
            format!(
                "{path} would be {} bytes, over the limit of {max_bytes}",
                after.len()
            ),
        ));
    }
    repo_path::write_file(&b.worktree, &path, after.as_bytes())?;
    git::git(&b.worktree, &["add", "--", path.as_str()]).map_err(failed)?;
    let msg = message.map_or_else(|| format!("builder: {verb} {path}"), str::to_owned);
    let c = commit(b, &msg)?;
    if !notes.is_empty() {
        extra["note"] = json!(notes.join("; "));
    }
    Ok(answer(b, c, extra))
}

/// The refusal of a replace whose `old` is in `n` places of `path`: it names
/// the lines each place starts on, and the lines of the repository most like
/// `old` and the task, those places left out. A value used in several places
/// is often set in one: asked for 25 books a page, qwen2.5-coder-1.5b
/// replaced one of the two calls in `src/cli.js` that pass
/// `DEFAULT_PAGE_SIZE`, not the line of `src/config.js` that sets it, and
/// when told to give a longer snippet, gave the same one again.
fn many_places(
    b: &TurnBranch,
    repo: &Repo,
    path: &RepoPath,
    content: &str,
    old: &str,
    new: &str,
    n: usize,
) -> LocalRefusal {
    let lines: Vec<usize> = places(content, old)
        .into_iter()
        .map(|i| content[..i].matches('\n').count() + 1)
        .collect();
    let shown: Vec<String> = lines.iter().map(usize::to_string).collect();
    let at = if shown.is_empty() {
        String::new()
    } else {
        format!(" (at lines {})", shown.join(", "))
    };
    let mut msg = format!("params.old is found {n} times in {path}{at}");
    if let Some(s) = suggested_replace(b, repo, old, new, &b.task) {
        return LocalRefusal::new(RefusalCode::InvalidParams, format!("{msg}. {s}"));
    }
    msg.push_str(": give a longer snippet, one that is there once");
    let like = lines_like_except(b, repo, &format!("{old}\n{}", b.task), Some(path), &lines);
    if !like.is_empty() {
        msg.push_str(&format!(
            "; or, if what they share is set in one place, change it there. The other lines most like them and the task:\n{}",
            like.join("\n")
        ));
    }
    LocalRefusal::new(RefusalCode::InvalidParams, msg)
}

/// The refusal of an edit of `path`, a file the branch does not have: it
/// names the lines of the branch most like the task (see [`lines_like`]) and
/// the files the branch has (the first [`FILES_NAMED`] of them), since a
/// model that guessed a path has no other way to learn the right one here.
/// Asked to make a page size 25 instead of 10, qwen2.5-coder-1.5b edited
/// `shelf/books_per_page`; shown only the list of files, it guessed again.
/// `meant` are the files of the branch the path may mean (see
/// [`files_meant`]), when there are several: they are named first.
fn no_such_file(
    b: &TurnBranch,
    repo: &Repo,
    path: &RepoPath,
    edit: Option<(&str, &str)>,
    meant: &[String],
) -> LocalRefusal {
    let mut msg = format!("{path} does not exist: replace edits a file (write makes one)");
    if !meant.is_empty() {
        msg.push_str(&format!(
            "; the files it could be: {}. Give the one to change as params.path",
            meant.join(", ")
        ));
    }
    if let Some(s) = edit.and_then(|(old, new)| suggested_replace(b, repo, old, new, &b.task)) {
        return LocalRefusal::new(RefusalCode::NotFound, format!("{msg}. {s}"));
    }
    let files = tracked_files(b, repo);
    let like = lines_like(b, repo, &b.task);
    if !like.is_empty() {
        msg.push_str(&format!(
            ". The lines of the repository most like the task:\n{}",
            like.join("\n")
        ));
    }
    if !files.is_empty() {
        let shown: Vec<&str> = files.iter().take(FILES_NAMED).map(String::as_str).collect();
        let lead = if like.is_empty() { ". " } else { "\n" };
        msg.push_str(&format!(
            "{lead}The repository's files: {}",
            shown.join(", ")
        ));
        if files.len() > FILES_NAMED {
            msg.push_str(&format!(" ({} in all)", files.len()));
        }
    }
    LocalRefusal::new(RefusalCode::NotFound, msg)
}

/// The lines of the branch's text files (see [`branch_texts`]) that share the most words
/// with `text`, best first, at most [`LINES_NAMED`] of them, each as
/// `path:N: line`. A word is a run of letters or digits, and an identifier
/// counts as its parts (`DEFAULT_PAGE_SIZE`, `pageSize`: page, size), so the
/// words of a task in prose meet the names in code. Words of fewer than
/// three letters count only when they are numbers (the `10` of "25 instead
/// of 10"), and a number counts twice: it is the value the task says is
/// there now, where a word may name a caller (`printPage(paginate(books,
/// opts.page, DEFAULT_PAGE_SIZE))` shares three words with "show 25 books
/// per page by default instead of 10"; `const DEFAULT_PAGE_SIZE = 10;` two
/// and the 10). A line needs two of the task's words. Lines of code come
/// first, then those of settings, of tests and of prose (see
/// [`FileKind`]). Files over [`LIKE_MAX_FILE`] are not read.
pub(crate) fn lines_like(b: &TurnBranch, repo: &Repo, text: &str) -> Vec<String> {
    lines_like_except(b, repo, text, None, &[])
}

/// [`lines_like`], leaving out the lines `except` of the file `in_path`.
fn lines_like_except(
    b: &TurnBranch,
    repo: &Repo,
    text: &str,
    in_path: Option<&RepoPath>,
    except: &[usize],
) -> Vec<String> {
    let wanted: HashSet<String> = words(text).collect();
    let Ok(texts) = branch_texts(b, repo, LIKE_MAX_FILE) else {
        return Vec::new();
    };
    if wanted.is_empty() {
        return Vec::new();
    }
    // (kind, -score, file order, line number, path, the line)
    let mut found: Vec<(FileKind, usize, usize, usize, String, String)> = Vec::new();
    for (order, (path, content)) in texts.enumerate() {
        let kind = FileKind::of(path.as_str());
        let mine = in_path.is_some_and(|p| p.as_str() == path.as_str());
        for (n, line) in content.lines().enumerate() {
            if mine && except.contains(&(n + 1)) {
                continue;
            }
            let (shared, score) = line_score(&wanted, line);
            if shared >= 2 {
                let line = seam_term::head(line.trim(), LINE_SHOWN).0.to_owned();
                let at = path.as_str().to_owned();
                found.push((kind, usize::MAX - score, order, n + 1, at, line));
            }
        }
    }
    found.sort();
    found
        .into_iter()
        .take(LINES_NAMED)
        .map(|(_, _, _, n, path, line)| {
            NamedLine {
                path: &path,
                n,
                text: &line,
            }
            .to_string()
        })
        .collect()
}

/// How many of the words `wanted` `line` has, and its score for
/// [`lines_like`]: a word counts one, a number two.
pub(crate) fn line_score(wanted: &HashSet<String>, line: &str) -> (usize, usize) {
    let have: HashSet<String> = words(line).collect();
    let shared: Vec<&String> = have.intersection(wanted).collect();
    let score = shared
        .iter()
        .map(|w| {
            if w.bytes().all(|c| c.is_ascii_digit()) {
                2
            } else {
                1
            }
        })
        .sum();
    (shared.len(), score)
}

/// One line of the repository as the builder names it to the model
/// (`path:N: line`, see [`lines_like`]): written and read here, so the
/// builder reads back exactly what it wrote. Shown `src/config.js:7: const
/// DEFAULT_PAGE_SIZE = 10;`, qwen2.5-coder-1.5b gave the list, prefixes and
/// all, as a replace's `old`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NamedLine<'a> {
    pub(crate) path: &'a str,
    pub(crate) n: usize,
    pub(crate) text: &'a str,
}

impl std::fmt::Display for NamedLine<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.path, self.n, self.text)
    }
}

impl<'a> NamedLine<'a> {
    /// `line` read as `path:N: text` (the space after the second colon may
    /// be missing): a path with no whitespace, a line number from 1, and a
    /// text that is not blank. `None` for anything else.
    pub(crate) fn parse(line: &'a str) -> Option<Self> {
        let (path, rest) = line.trim_start().split_once(':')?;
        let (n, text) = rest.split_once(':')?;
        let text = text.strip_prefix(' ').unwrap_or(text);
        let n: usize = n.parse().ok().filter(|&n| n > 0)?;
        let path_ok = !path.is_empty() && !path.contains(char::is_whitespace);
        (path_ok && !text.trim().is_empty()).then_some(Self { path, n, text })
    }

    /// `text` read as lines of the builder's list: `Some` when every line of
    /// it that is not blank is one, and there is at least one.
    pub(crate) fn parse_all(text: &'a str) -> Option<Vec<Self>> {
        let lines: Vec<Self> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(Self::parse)
            .collect::<Option<_>>()?;
        (!lines.is_empty()).then_some(lines)
    }
}

/// The words of `text` for [`lines_like`], lowercased: identifiers split at
/// `_`, `-` and a lower-to-upper change; words of one or two letters and the
/// commonest words of a request left out, numbers kept.
pub(crate) fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .flat_map(|w| {
            let mut parts = Vec::new();
            let mut start = 0;
            let chars: Vec<(usize, char)> = w.char_indices().collect();
            for i in 1..chars.len() {
                if chars[i - 1].1.is_lowercase() && chars[i].1.is_uppercase() {
                    parts.push(&w[start..chars[i].0]);
                    start = chars[i].0;
                }
            }
            parts.push(&w[start..]);
            parts
        })
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| {
            (w.chars().all(|c| c.is_ascii_digit()) || w.chars().count() >= 3)
                && !COMMON.contains(&w.as_str())
        })
}

/// Words of a request that say nothing about where in the code it is.
const COMMON: &[&str] = &[
    "the", "and", "for", "with", "that", "this", "from", "into", "instead", "make", "makes",
    "please", "change", "fix", "find", "should", "would", "want", "need", "not", "but", "are",
    "was", "were", "has", "have", "can", "its", "it's", "all", "any", "out", "comes", "come",
    "branch", "review", "stage", "queue", "don", "touch", "main", "bug", "cause", "then", "when",
    "what", "which", "how", "who", "them", "there", "here", "you", "your",
];

/// At most this many lines are named by [`lines_like`], each cut to this
/// many characters, from files no larger than this.
const LINES_NAMED: usize = 5;
const LINE_SHOWN: usize = 120;
pub(crate) const LIKE_MAX_FILE: usize = 256 << 10;

/// At most this many files are named in a refusal of a missing file.
const FILES_NAMED: usize = 40;

/// `Some(refusal)` when `raw` names no file on the branch (see
/// [`no_such_file`]); `None` when it does, or cannot be read.
pub(crate) fn missing_file(
    repo: &Repo,
    b: &TurnBranch,
    raw: &str,
    max_bytes: usize,
) -> Option<LocalRefusal> {
    let path = admit(repo, raw).ok()?;
    match repo_path::read_file(&b.worktree, &path, max_bytes) {
        Ok(None) => {
            // A path that means one file is read as it once the call has
            // the rest of its params (see [`edit`]).
            let meant = files_meant(b, repo, &path);
            meant
                .one()
                .is_none()
                .then(|| no_such_file(b, repo, &path, None, &meant.files))
        }
        _ => None,
    }
}

/// The files of the branch a path that names none may mean (see
/// [`files_meant`]).
#[derive(Debug, Default)]
struct Meant {
    files: Vec<String>,
    /// True when the given path ends with each of `files` (after a `/`);
    /// false when they only share its file name.
    by_path: bool,
}

impl Meant {
    fn one(&self) -> Option<&str> {
        match self.files.as_slice() {
            [one] => Some(one),
            _ => None,
        }
    }
}

/// The files git tracks on the branch (admitted as a named path would be:
/// a guarded file is never meant) that `given`, a path with no file, may
/// mean: those whose whole path it ends with after a `/`
/// (`src/tally/config.py` ends with `tally/config.py`, and with `config.py`
/// if there is one at the top), or failing those, the files of its file
/// name (`src/config.py`: `tally/config.py`). A small model puts a
/// directory of its own in front of a path far more often than it gets the
/// file's name wrong.
fn files_meant(b: &TurnBranch, repo: &Repo, given: &RepoPath) -> Meant {
    let files = tracked_files(b, repo);
    let g = given.as_str();
    let by_path: Vec<String> = files
        .iter()
        .filter(|f| {
            g.strip_suffix(f.as_str())
                .is_some_and(|front| front.ends_with('/'))
        })
        .cloned()
        .collect();
    if !by_path.is_empty() {
        return Meant {
            files: by_path,
            by_path: true,
        };
    }
    let name = |p: &str| p.rsplit('/').next().map(str::to_owned);
    let wanted = name(g);
    Meant {
        files: files.into_iter().filter(|f| name(f) == wanted).collect(),
        by_path: false,
    }
}

/// The files git tracks on the branch that a named path would be admitted
/// to, in git's order.
fn tracked_files(b: &TurnBranch, repo: &Repo) -> Vec<String> {
    let Ok(listed) = git::git_bytes(&b.worktree, &["ls-files", "-z"], None) else {
        return Vec::new();
    };
    listed
        .split(|&c| c == 0)
        .filter_map(|n| std::str::from_utf8(n).ok())
        .filter(|n| !n.is_empty() && admit(repo, n).is_ok())
        .map(str::to_owned)
        .collect()
}

/// At most this many files are looked through for a replace that names no
/// path, and at most this many bytes of them read.
const HOLDING_MAX_FILES: usize = 5000;
const HOLDING_MAX_BYTES: usize = 64 << 20;

/// The text files git tracks on the branch, as `(path, text)` in git's
/// order: each admitted as a named path would be (seam's own guarded files
/// are never read), read as UTF-8 text no larger than `max_bytes`; at most
/// [`HOLDING_MAX_FILES`] names are looked at and [`HOLDING_MAX_BYTES`] read.
pub(crate) fn branch_texts<'a>(
    b: &'a TurnBranch,
    repo: &'a Repo,
    max_bytes: usize,
) -> Result<impl Iterator<Item = (RepoPath, String)> + 'a, LocalRefusal> {
    let listed = git::git_bytes(&b.worktree, &["ls-files", "-z"], None).map_err(failed)?;
    let names: Vec<String> = listed
        .split(|&c| c == 0)
        .take(HOLDING_MAX_FILES)
        .filter_map(|n| std::str::from_utf8(n).ok())
        .map(str::to_owned)
        .collect();
    let mut read = 0usize;
    Ok(names
        .into_iter()
        .filter_map(move |name| {
            let path = admit(repo, &name).ok()?;
            let bytes = repo_path::read_file(&b.worktree, &path, max_bytes).ok()??;
            read += bytes.len();
            Some((path, bytes, read))
        })
        .take_while(|(_, _, read)| *read <= HOLDING_MAX_BYTES)
        .filter_map(|(path, bytes, _)| Some((path, String::from_utf8(bytes).ok()?))))
}

/// The one file of the turn's worktree that holds `old` in one place, for a
/// `replace` that names no path: the files git tracks there, each admitted as
/// a named path would be (seam's own guarded files are never edited, and so
/// never looked in), read as UTF-8 text no larger than `max_bytes`. A file
/// that holds `old` as written wins over one that holds it only line by line
/// without its indentation, and both over one that holds it only with quotes
/// and spacing not told apart (see [`loose_read`]), which is taken only when
/// no file holds it otherwise. Refused, naming what was found, when no file
/// or more than one does.
pub(crate) fn file_holding(
    repo: &Repo,
    b: &TurnBranch,
    old: &str,
    new: &str,
    max_bytes: usize,
) -> Result<String, LocalRefusal> {
    let (mut exact, mut loose, mut many) = (Vec::new(), Vec::new(), Vec::new());
    // Those that hold it only with quotes and spacing not told apart (see
    // [`loose_read`]): they count only when no file holds it otherwise.
    let (mut quoted, mut quoted_many) = (Vec::new(), Vec::new());
    let pattern = LoosePattern::new(old);
    for (path, content) in branch_texts(b, repo, max_bytes)? {
        let path = path.as_str().to_owned();
        match replaced_with(&content, old, "", &pattern) {
            Ok(r) if r.loose.is_some() => quoted.push(path),
            Ok(r) if r.reindented.is_none() => exact.push(path),
            Ok(_) => loose.push(path),
            Err(NoReplace::Many(_)) => many.push(path),
            Err(NoReplace::LooselyMany { .. }) => quoted_many.push(path),
            Err(_) => {}
        }
    }
    if exact.is_empty() && loose.is_empty() && many.is_empty() {
        match (quoted.as_slice(), quoted_many.is_empty()) {
            ([one], true) => return Ok(one.clone()),
            ([], true) => {}
            _ => {
                quoted.extend(quoted_many);
                many = quoted;
            }
        }
    }
    let list = |v: &[String]| {
        let mut s = v.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
        if v.len() > 5 {
            s.push_str(&format!(" and {} more", v.len() - 5));
        }
        s
    };
    match (exact.as_slice(), loose.as_slice()) {
        ([one], _) | ([], [one]) if many.is_empty() => Ok(one.clone()),
        ([], []) if many.is_empty() => {
            let mut msg = "params.path is not given, and no file of the repository holds params.old: give the path of the file to change, and copy params.old exactly as the file has it".to_owned();
            if let Some(s) = suggested_replace(b, repo, old, new, &b.task) {
                msg.push_str(&format!(". {s}"));
                return Err(LocalRefusal::new(RefusalCode::NotFound, msg));
            }
            let like = lines_like(b, repo, &format!("{old}\n{}", b.task));
            if !like.is_empty() {
                msg.push_str(&format!(
                    ". The lines most like it and the task:\n{}",
                    like.join("\n")
                ));
            }
            Err(LocalRefusal::new(RefusalCode::NotFound, msg))
        }
        _ => {
            let mut all: Vec<String> = exact.into_iter().chain(loose).collect();
            all.extend(many);
            Err(LocalRefusal::new(
                RefusalCode::InvalidParams,
                format!(
                    "params.path is not given, and params.old is in more than one place ({}): give the path of the file to change",
                    list(&all)
                ),
            ))
        }
    }
}

/// The line ending `content` uses: CRLF when its first line ends so.
fn crlf(content: &str) -> bool {
    content
        .find('\n')
        .is_some_and(|i| content[..i].ends_with('\r'))
}

/// `text` with every line ending CRLF.
fn to_crlf(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\n', "\r\n")
}

/// `content` with `text` added on lines of its own: a line ending goes
/// before it when the file does not end with one, and after it when the text
/// does not. The file's own line ending (LF or CRLF) is used throughout.
fn appended(content: &str, text: &str) -> String {
    let (eol, text) = if crlf(content) {
        ("\r\n", to_crlf(text))
    } else {
        ("\n", text.to_owned())
    };
    let mut out = String::with_capacity(content.len() + text.len() + 4);
    out.push_str(content);
    if !content.is_empty() && !content.ends_with('\n') {
        out.push_str(eol);
    }
    out.push_str(&text);
    if !text.ends_with('\n') {
        out.push_str(eol);
    }
    out
}

#[derive(Debug, PartialEq, Eq)]
struct Replaced {
    text: String,
    /// The line `old` started on (from 1).
    line: usize,
    /// True when `old` matched only with the file's CRLF line endings.
    crlf: bool,
    /// `Some(last line)` when `old` matched only line by line with the
    /// indentation left out (see [`loose_places`]); `new` was then indented
    /// like the file.
    reindented: Option<usize>,
    /// True when `new`'s later lines were put under the indentation of the
    /// line `old` starts (they were written from column 0).
    indented_new: bool,
    /// `Some` when `old` matched only with quotes and spacing not told
    /// apart (see [`loose_read`]).
    loose: Option<LooseRead>,
}

/// How a replace read `old` loosely (see [`loose_read`]).
#[derive(Debug, PartialEq, Eq)]
struct LooseRead {
    /// The last line (from 1) of the place replaced.
    last: usize,
    /// The quote characters of `new` written as the file's: (the model's,
    /// the file's).
    quotes: Vec<(char, char)>,
}

/// Why a snippet cannot be replaced.
#[derive(Debug, PartialEq, Eq)]
enum NoReplace {
    Empty,
    /// The line (from 1) and text of a line like `old`'s first, if any.
    NotFound {
        hint: Option<(usize, String)>,
    },
    Many(usize),
    /// Not there as written, and in several places loosely (see
    /// [`loose_read`]): how many, and the lines (from 1) they start on.
    LooselyMany {
        places: usize,
        lines: Vec<usize>,
    },
}

impl NoReplace {
    fn refusal(&self, path: &RepoPath) -> LocalRefusal {
        match self {
            NoReplace::Empty => LocalRefusal::new(
                RefusalCode::InvalidParams,
                format!(
                    "params.old is empty: give the exact text to replace in {path} (append adds text at its end)"
                ),
            ),
            NoReplace::NotFound { hint } => LocalRefusal::new(
                RefusalCode::NotFound,
                match hint {
                    Some((line, text)) => format!(
                        "params.old is not found in {path}; a line like its first is line {line}, which reads: {text}\ncopy the text exactly as the file has it"
                    ),
                    None => format!(
                        "params.old is not found in {path}: copy the text exactly as the file has it"
                    ),
                },
            ),
            NoReplace::Many(n) => LocalRefusal::new(
                RefusalCode::InvalidParams,
                format!(
                    "params.old is found {n} times in {path}: give a longer snippet, one that is there once"
                ),
            ),
            NoReplace::LooselyMany { places, lines } => LocalRefusal::new(
                RefusalCode::InvalidParams,
                format!(
                    "params.old is not in {path} as written, and matches {places} places of {path} (at lines {}) when ' and \" are one and a run of spaces is one space: give a longer snippet, copied exactly as the file has it",
                    lines
                        .iter()
                        .map(usize::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ),
        }
    }
}

/// Every place `needle` starts in `hay`, overlaps included.
fn places(hay: &str, needle: &str) -> Vec<usize> {
    let mut at = Vec::new();
    let mut from = 0;
    while let Some(i) = hay[from..].find(needle) {
        at.push(from + i);
        let step = hay[from + i..].chars().next().map_or(1, char::len_utf8);
        from += i + step;
        if from > hay.len() {
            break;
        }
    }
    at
}

/// `content` with the one place `old` is replaced by `new`. When `old` is not
/// there as written and the file's lines end in CRLF, `old` and `new` are
/// read with CRLF line endings; when it is not there either way, it is looked
/// for line by line without indentation ([`loose_places`]), and then with
/// quotes and spacing not told apart ([`loose_read`]). What is there as
/// written always wins, and is replaced as written.
fn replaced(content: &str, old: &str, new: &str) -> Result<Replaced, NoReplace> {
    replaced_with(content, old, new, &LoosePattern::new(old))
}

/// [`replaced`], with `old`'s loose pattern made once for many files.
fn replaced_with(
    content: &str,
    old: &str,
    new: &str,
    loose: &LoosePattern<'_>,
) -> Result<Replaced, NoReplace> {
    if old.is_empty() {
        return Err(NoReplace::Empty);
    }
    let mut crlf_read = false;
    let mut owned = (old.to_owned(), new.to_owned());
    let mut at = places(content, old);
    if at.is_empty() && crlf(content) && old.contains('\n') {
        let (o, n) = (to_crlf(old), to_crlf(new));
        at = places(content, &o);
        if !at.is_empty() {
            crlf_read = true;
            owned = (o, n);
        }
    }
    match at.as_slice() {
        [] => match loose_places(content, old).as_slice() {
            [] => loose_read(content, old, new, loose).unwrap_or_else(|| {
                Err(NoReplace::NotFound {
                    hint: like_first_line(content, old),
                })
            }),
            [span] => Ok(loosely_replaced(content, span, new)),
            many => Err(NoReplace::Many(many.len())),
        },
        [i] => {
            let (old, new) = owned;
            let mut r = span_replaced(content, *i, i + old.len(), new);
            r.crlf = crlf_read;
            Ok(r)
        }
        many => Err(NoReplace::Many(many.len())),
    }
}

/// `content` with the bytes `start..end` replaced by `new`. When the span
/// starts after a line's indentation and `new`'s later lines are written
/// from column 0 (shallower than it), they go under that indentation.
fn span_replaced(content: &str, start: usize, end: usize, mut new: String) -> Replaced {
    // `old` taken from the start of a line's words, `new` of several lines written
    // from column 0: its later lines go under the line's indentation.
    let line_start = content[..start].rfind('\n').map_or(0, |n| n + 1);
    let ind = &content[line_start..start];
    let later = || new.lines().skip(1).filter(|l| !l.trim().is_empty());
    let indented_new = !ind.is_empty()
        && ind.bytes().all(|b| b == b' ' || b == b'\t')
        && later().next().is_some()
        && later().all(|l| indentation(l).len() < ind.len());
    if indented_new {
        let eol = if new.contains("\r\n") { "\r\n" } else { "\n" };
        let mut out = String::with_capacity(new.len() + 8 * ind.len());
        for (j, line) in new.split(eol).enumerate() {
            if j > 0 {
                out.push_str(eol);
                if !line.trim().is_empty() {
                    out.push_str(ind);
                }
            }
            out.push_str(line);
        }
        new = out;
    }
    let mut text = String::with_capacity(content.len() - (end - start) + new.len());
    text.push_str(&content[..start]);
    text.push_str(&new);
    text.push_str(&content[end..]);
    Replaced {
        text,
        line: content[..start].matches('\n').count() + 1,
        crlf: false,
        reindented: None,
        indented_new,
        loose: None,
    }
}

/// The line (from 1) and text of the first line of `content` like `old`'s
/// first non-blank line: the same once trimmed, or holding it.
fn like_first_line(content: &str, old: &str) -> Option<(usize, String)> {
    let first = old.lines().map(str::trim).find(|l| !l.is_empty())?;
    if first.len() < 3 {
        return None;
    }
    let (i, line) = content
        .lines()
        .enumerate()
        .find(|(_, l)| l.trim() == first || l.contains(first))?;
    let line = line.trim_end();
    Some((i + 1, seam_term::head(line, 200).0.to_owned()))
}

/// A run of whole lines of a file: the lines `first..=last` (from 0), and
/// their bytes `start..end`, the last line's ending left out.
#[derive(Debug, Clone, PartialEq, Eq)]
struct LineSpan {
    first: usize,
    last: usize,
    start: usize,
    end: usize,
}

/// Every run of whole lines of `content` that reads as `old` once each line
/// is trimmed of its indentation and trailing space (blank lines at either
/// end of `old` left out). A small model copies a line's words and gets its
/// indentation wrong far more often than the words; this is the one place
/// the builder meets it there, and it still asks for every word, in order.
fn loose_places(content: &str, old: &str) -> Vec<LineSpan> {
    let want: Vec<&str> = old.lines().map(str::trim).collect();
    let from = want.iter().position(|l| !l.is_empty());
    let to = want.iter().rposition(|l| !l.is_empty());
    let (Some(from), Some(to)) = (from, to) else {
        return Vec::new();
    };
    let want = &want[from..=to];
    let lines = line_bodies(content);
    let text = |i: usize| &content[lines[i].0..lines[i].1];
    let mut spans = Vec::new();
    if want.len() > lines.len() {
        return spans;
    }
    for first in 0..=lines.len() - want.len() {
        if (0..want.len()).all(|j| text(first + j).trim() == want[j]) {
            let last = first + want.len() - 1;
            spans.push(LineSpan {
                first,
                last,
                start: lines[first].0,
                end: lines[last].1,
            });
        }
    }
    spans
}

/// The leading spaces and tabs of `line`.
fn indentation(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// `content` with the lines of `span` replaced by `new`, indented like the
/// file: when `new` has as many lines as the span, each takes the
/// indentation of the line it stands for; otherwise `new` keeps its own
/// indentation relative to its least indented line, under the span's first
/// line's. An empty `new` takes the lines out whole.
fn loosely_replaced(content: &str, span: &LineSpan, new: &str) -> Replaced {
    let file_lines: Vec<&str> = content[span.start..span.end].lines().collect();
    let eol = if crlf(content) { "\r\n" } else { "\n" };
    let new_lines: Vec<&str> = new.lines().collect();
    let mut text = String::with_capacity(content.len() + new.len());
    text.push_str(&content[..span.start]);
    let mut end = span.end;
    if new.trim().is_empty() {
        // The lines go, with their line ending.
        if content[end..].starts_with("\r\n") {
            end += 2;
        } else if content[end..].starts_with('\n') {
            end += 1;
        }
    } else {
        let base = indentation(file_lines[0]);
        let least = new_lines
            .iter()
            .filter(|l| !l.trim().is_empty())
            .map(|l| indentation(l).len())
            .min()
            .unwrap_or(0);
        let same_count = new_lines.len() == file_lines.len();
        for (j, line) in new_lines.iter().enumerate() {
            if j > 0 {
                text.push_str(eol);
            }
            let body = line.trim_end();
            if body.trim().is_empty() {
                continue;
            }
            if same_count {
                text.push_str(indentation(file_lines[j]));
                text.push_str(body.trim_start());
            } else {
                text.push_str(base);
                text.push_str(&body[least.min(indentation(body).len())..]);
            }
        }
    }
    text.push_str(&content[end..]);
    Replaced {
        text,
        line: span.first + 1,
        crlf: false,
        reindented: Some(span.last + 1),
        indented_new: false,
        loose: None,
    }
}

/// Each line's byte range in `content`, its ending (LF or CRLF) left out.
fn line_bodies(content: &str) -> Vec<(usize, usize)> {
    let mut lines = Vec::new();
    let mut at = 0;
    for piece in content.split_inclusive('\n') {
        let body = piece.strip_suffix('\n').unwrap_or(piece);
        let body = body.strip_suffix('\r').unwrap_or(body);
        lines.push((at, at + body.len()));
        at += piece.len();
    }
    lines
}

/// The compiled pattern of `old` has at most this many bytes (see
/// [`LoosePattern`]); an `old` whose pattern is larger is not read loosely.
const LOOSE_PATTERN_MAX: usize = 4 << 20;

/// `old` as a pattern that matches it loosely (see [`loose_read`]), made on
/// first use: a replace that names no path looks for it in every file.
///
/// No crate matches text up to a set of equivalences and gives back the span
/// it matched in the original (the fuzzy matchers score a likeness, which is
/// not this rule, and normalising both texts loses the way back to the
/// file's bytes), so `old` is written here as a pattern for `regex`, which
/// does the matching: each quote a class of both quotes, each run of spaces
/// and tabs `[ \t]+`, every other character itself, escaped.
#[derive(Debug)]
struct LoosePattern<'a> {
    old: &'a str,
    /// The pattern, and whether `old` is several lines; `None` when `old` is
    /// blank or its pattern too large.
    made: std::cell::OnceCell<Option<(regex::Regex, bool)>>,
}

impl<'a> LoosePattern<'a> {
    fn new(old: &'a str) -> Self {
        LoosePattern {
            old,
            made: std::cell::OnceCell::new(),
        }
    }

    fn get(&self) -> Option<&(regex::Regex, bool)> {
        self.made.get_or_init(|| loose_pattern(self.old)).as_ref()
    }
}

/// The pattern of [`LoosePattern`]: `old`'s lines trimmed of spaces and tabs,
/// its blank first and last lines left out. One line may match part of a
/// line; several must match whole lines, any indentation before each, and
/// their line breaks must be line breaks of the file.
fn loose_pattern(old: &str) -> Option<(regex::Regex, bool)> {
    let lines: Vec<&str> = old
        .lines()
        .map(|l| l.trim_matches([' ', '\t', '\r']))
        .collect();
    let from = lines.iter().position(|l| !l.is_empty())?;
    let to = lines.iter().rposition(|l| !l.is_empty())?;
    let lines = &lines[from..=to];
    let several = lines.len() > 1;
    let mut p = String::new();
    if several {
        p.push_str(r"(?m)^[ \t]*");
    }
    for (j, line) in lines.iter().enumerate() {
        if j > 0 {
            p.push_str(r"[ \t]*\r?\n[ \t]*");
        }
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\'' | '"' => p.push_str(r#"['"]"#),
                ' ' | '\t' => {
                    while chars.next_if(|c| matches!(c, ' ' | '\t')).is_some() {}
                    p.push_str(r"[ \t]+");
                }
                c => p.push_str(&regex::escape(c.encode_utf8(&mut [0; 4]))),
            }
        }
    }
    if several {
        p.push_str(r"[ \t]*\r?$");
    }
    let re = regex::RegexBuilder::new(&p)
        .size_limit(LOOSE_PATTERN_MAX)
        .build()
        .ok()?;
    Some((re, several))
}

fn is_quote(c: char) -> bool {
    c == '\'' || c == '"'
}

/// The one place of `content` that `old` matches loosely, replaced by `new`;
/// `None` when there is no such place. Loosely: `'` and `"` are one
/// character, and a run of spaces and tabs is one space (but no space is not
/// a space: `a=1` is not `a = 1`); spaces and tabs at either end of a line
/// do not count. Line breaks are not spaces: an `old` of several lines must
/// be that many whole lines of the file, and is replaced as
/// [`loosely_replaced`] replaces lines (`new` indented like the file: a
/// block's meaning is its indentation, and a snippet joined across lines or
/// split in one may be a different statement). An `old` of one line may be
/// part of a line: that part is replaced, and `new` loses the spaces at
/// either end that `old` has (they are the file's, left in place).
///
/// `new`'s quotes are written the file's way when that is plain and safe
/// (see [`quoted_like_file`]). qwen2.5-coder-1.5b wrote
/// `DEFAULT_CURRENCY = 'EUR'` for the file's `DEFAULT_CURRENCY = "EUR"`.
fn loose_read(
    content: &str,
    old: &str,
    new: &str,
    pattern: &LoosePattern<'_>,
) -> Option<Result<Replaced, NoReplace>> {
    let (re, several) = pattern.get()?;
    // Every place, overlaps included, as `places` counts them.
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(m) = re.find_at(content, at) {
        found.push((m.start(), m.end()));
        at = m.start()
            + content[m.start()..]
                .chars()
                .next()
                .map_or(1, char::len_utf8);
        if at > content.len() {
            break;
        }
    }
    let line_of = |i: usize| content[..i].matches('\n').count();
    let &[(start, end)] = found.as_slice() else {
        if found.is_empty() {
            return None;
        }
        let mut lines: Vec<usize> = found.iter().map(|(s, _)| line_of(*s) + 1).collect();
        lines.dedup();
        return Some(Err(NoReplace::LooselyMany {
            places: found.len(),
            lines,
        }));
    };
    let (new, quotes) = quoted_like_file(old, &content[start..end], new);
    let (first, last) = (line_of(start), line_of(end));
    let bodies = line_bodies(content);
    let blank = |s: &str| s.trim_matches([' ', '\t']).is_empty();
    let whole = *several
        || (blank(&content[bodies[first].0..start])
            && content.get(end..bodies[last].1).is_some_and(blank));
    let mut r = if whole {
        let span = LineSpan {
            first,
            last,
            start: bodies[first].0,
            end: bodies[last].1,
        };
        let mut r = loosely_replaced(content, &span, &new);
        r.reindented = None;
        r
    } else {
        let mut new = new.as_str();
        if old.starts_with(char::is_whitespace) {
            new = new.trim_start();
        }
        if old.ends_with(char::is_whitespace) {
            new = new.trim_end();
        }
        let new = if crlf(content) && new.contains('\n') {
            to_crlf(new)
        } else {
            new.to_owned()
        };
        span_replaced(content, start, end, new)
    };
    r.loose = Some(LooseRead {
        last: last + 1,
        quotes,
    });
    Some(Ok(r))
}

/// `new` with its quotes written as the file writes those of `old` they
/// stand for, and the swaps made (the model's, the file's); `matched` is the
/// text of the file `old` matched, quote for quote. A swap is made only when
/// it is plain and keeps `new` well-formed: each of `new`'s quote characters
/// is one `old` has, which stood for one character of the file every time
/// (`old` and `new` quote the same way); two kinds of quote are not made
/// one; and each kind is in the result an odd number of times exactly when
/// it is in `matched` (so the file's quotes pair up as they did: an
/// apostrophe in a comment would break that). Otherwise `new` is as given.
fn quoted_like_file(old: &str, matched: &str, new: &str) -> (String, Vec<(char, char)>) {
    let quotes = |s: &str| s.chars().filter(|c| is_quote(*c)).collect::<Vec<_>>();
    let pairs = quotes(old).into_iter().zip(quotes(matched));
    // What each of the model's quote characters stood for: one character of
    // the file, or `None` when it stood for both.
    let mut map: Vec<(char, Option<char>)> = Vec::new();
    for (model, file) in pairs {
        match map.iter_mut().find(|(m, _)| *m == model) {
            None => map.push((model, Some(file))),
            Some((_, to)) if *to != Some(file) => *to = None,
            Some(_) => {}
        }
    }
    let to = |q: char| map.iter().find(|(m, _)| *m == q).and_then(|(_, t)| *t);
    let used: Vec<char> = ['\'', '"']
        .into_iter()
        .filter(|q| new.contains(*q))
        .collect();
    let swaps: Vec<(char, char)> = used
        .iter()
        .filter_map(|&q| to(q).filter(|&f| f != q).map(|f| (q, f)))
        .collect();
    let as_given = || (new.to_owned(), Vec::new());
    if swaps.is_empty()
        || used.iter().any(|&q| to(q).is_none())
        || (used.len() == 2 && to(used[0]) == to(used[1]))
    {
        return as_given();
    }
    let out: String = new
        .chars()
        .map(|c| if is_quote(c) { to(c).unwrap_or(c) } else { c })
        .collect();
    let odd = |s: &str, q: char| !s.matches(q).count().is_multiple_of(2);
    if ['\'', '"'].iter().any(|&q| odd(&out, q) != odd(matched, q)) {
        return as_given();
    }
    (out, swaps)
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
            RefusalCode::InvalidParams,
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
            RefusalCode::NotAllowed,
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
            RefusalCode::Failed,
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
            RefusalCode::NotAllowed,
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

/// Removes a branch's worktree and the branch (a turn that changed nothing),
/// in the staging repository.
pub(crate) fn discard(b: &TurnBranch) -> Result<(), GitError> {
    let sr = &b.staging_repo;
    if b.worktree.exists() {
        git::git(
            sr,
            &[
                "worktree",
                "remove",
                "--force",
                "--force",
                &b.worktree.to_string_lossy(),
            ],
        )?;
    }
    git::git(sr, &["worktree", "prune"])?;
    if git::branch_exists(sr, &b.branch)? {
        git::git(sr, &["branch", "-D", "-q", &b.branch])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_line_reads_back_what_it_wrote() {
        let l = NamedLine {
            path: "src/config.js",
            n: 7,
            text: "const DEFAULT_PAGE_SIZE = 10;",
        };
        let shown = l.to_string();
        assert_eq!(shown, "src/config.js:7: const DEFAULT_PAGE_SIZE = 10;");
        assert_eq!(NamedLine::parse(&shown), Some(l));
        // The space after the number may be left out.
        assert_eq!(
            NamedLine::parse("src/config.js:7:const DEFAULT_PAGE_SIZE = 10;"),
            Some(l)
        );
        // A colon in the text stays in it.
        assert_eq!(
            NamedLine::parse("a.py:3: x = {'a': 1}").map(|l| l.text),
            Some("x = {'a': 1}")
        );
        // Code that only looks like it is not read so.
        for not in [
            "const DEFAULT_PAGE_SIZE = 10;",
            "http://example.com:80/x",
            "a b:3: x",
            "a.py:0: x",
            "a.py:3:   ",
            "a.py:x3: y",
            "case 1: return 2;",
        ] {
            assert_eq!(NamedLine::parse(not), None, "{not}");
        }
        let all = NamedLine::parse_all("a.js:1: one\n\nb.js:2: two\n").unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!((all[1].path, all[1].n, all[1].text), ("b.js", 2, "two"));
        assert_eq!(NamedLine::parse_all("a.js:1: one\nplain line"), None);
        assert_eq!(NamedLine::parse_all("  \n"), None);
    }

    #[test]
    fn words_split_identifiers_and_keep_numbers() {
        let w: Vec<String> =
            words("export const DEFAULT_PAGE_SIZE = 10; pageSize x2 of a-b-c").collect();
        assert_eq!(
            w,
            [
                "export", "const", "default", "page", "size", "10", "page", "size"
            ]
        );
        // The words of a request that say nothing about the code are left out.
        let w: Vec<String> = words("Make the page size 25 instead of 10, on a branch").collect();
        assert_eq!(w, ["page", "size", "25", "10"]);
    }

    #[test]
    fn append_puts_the_text_on_lines_of_its_own() {
        assert_eq!(appended("a\n", "b"), "a\nb\n");
        assert_eq!(appended("a", "b\n"), "a\nb\n");
        assert_eq!(appended("", "b"), "b\n");
        assert_eq!(appended("a\n", "b\nc\n"), "a\nb\nc\n");
        // A CRLF file stays CRLF, whatever the model wrote.
        assert_eq!(appended("a\r\nb", "c\nd"), "a\r\nb\r\nc\r\nd\r\n");
        assert_eq!(appended("a\r\n", "c\r\n"), "a\r\nc\r\n");
    }

    #[test]
    fn replace_takes_one_exact_place() {
        let r = replaced("one\ntwo\nthree\n", "two", "2").unwrap();
        assert_eq!(r.text, "one\n2\nthree\n");
        assert_eq!((r.line, r.crlf), (2, false));
        // A snippet across lines.
        let r = replaced("one\ntwo\nthree\n", "e\ntw", "E\nTW").unwrap();
        assert_eq!(r.text, "onE\nTWo\nthree\n");
        assert_eq!(r.line, 1);
        // Deleting a snippet.
        assert_eq!(replaced("a b c", " b", "").unwrap().text, "a c");
        assert_eq!(replaced("x", "", "y"), Err(NoReplace::Empty));
        assert_eq!(replaced("ab ab ab", "ab", "x"), Err(NoReplace::Many(3)));
        // Overlapping places count: "aa" is twice in "aaa".
        assert_eq!(replaced("aaa", "aa", "b"), Err(NoReplace::Many(2)));
        assert_eq!(replaced("é-é", "é", "e"), Err(NoReplace::Many(2)));
        assert_eq!(
            replaced("fn a() {\n    let x = 1;\n}\n", "let x = 2;", "y"),
            Err(NoReplace::NotFound { hint: None })
        );
        assert_eq!(
            replaced("fn a() {\n    let x = 1;\n}\n", "  let x = 1;\n  y", "z"),
            Err(NoReplace::NotFound {
                hint: Some((2, "    let x = 1;".to_owned()))
            })
        );
    }

    #[test]
    fn replace_reads_old_without_its_indentation_and_indents_new_like_the_file() {
        let file = "function f(page) {\n  if (page) {\n    return page * size;\n  }\n}\n";
        // The model's lines, flush left: each new line takes its old line's indentation.
        let r = replaced(
            file,
            "if (page) {\nreturn page * size;\n}",
            "if (page) {\nreturn (page - 1) * size;\n}",
        )
        .unwrap();
        assert_eq!(
            r.text,
            "function f(page) {\n  if (page) {\n    return (page - 1) * size;\n  }\n}\n"
        );
        assert_eq!((r.line, r.reindented), (2, Some(4)));
        // Too deep by two, one line: the file's indentation wins.
        let r = replaced(file, "      return page * size;", "      return 0;").unwrap();
        assert_eq!(r.text, file.replace("page * size", "0"));
        assert_eq!(r.reindented, Some(3));
        // Too shallow is a part of the line, taken exactly as it is.
        let r = replaced(file, "  return page * size;", "  return 0;").unwrap();
        assert_eq!(r.text, file.replace("page * size", "0"));
        assert_eq!(r.reindented, None);
        let r = replaced(file, "   return page * size;  ", "return 0;").unwrap();
        assert_eq!(r.text, file.replace("page * size", "0"));
        assert_eq!(r.reindented, Some(3));
        // More lines than old: new keeps its own shape under the first line's indentation.
        let r = replaced(
            file,
            "return page * size;",
            "const n = page - 1;\nreturn n * size;",
        );
        assert_eq!(
            r.unwrap().text,
            "function f(page) {\n  if (page) {\n    const n = page - 1;\n    return n * size;\n  }\n}\n"
        );
        let r = replaced(
            file,
            "return page * size; ",
            "const n = page - 1;\nreturn n * size;",
        );
        assert_eq!(
            r.unwrap().text,
            "function f(page) {\n  if (page) {\n    const n = page - 1;\n    return n * size;\n  }\n}\n"
        );
        // Later lines written under the line's indentation already are left as they are.
        let r = replaced(file, "return page * size;", "const n = 1;\n    return n;").unwrap();
        assert!(r.text.contains("    const n = 1;\n    return n;\n"));
        assert!(!r.indented_new);
        // An empty new takes the lines out whole.
        let r = replaced(file, "  if (page) {\nreturn page * size;\n  }", "").unwrap();
        assert_eq!(r.text, "function f(page) {\n}\n");
        // Every word is still asked for, in order, and a loose match must be there once.
        assert!(matches!(
            replaced(file, "if (page) {\nreturn page;\n}", "x"),
            Err(NoReplace::NotFound { .. })
        ));
        assert_eq!(
            replaced("a\n  x\nb\n    x\n", " x ", "y"),
            Err(NoReplace::Many(2))
        );
        // A CRLF file keeps its line endings.
        let r = replaced("a {\r\n  b;\r\n  c;\r\n}\r\n", "b;\nc;", "b;\nd;").unwrap();
        assert_eq!(r.text, "a {\r\n  b;\r\n  d;\r\n}\r\n");
        // Blank old is no place at all.
        assert_eq!(loose_places("a\n\nb\n", "\n  \n"), Vec::new());
    }

    #[test]
    fn replace_reads_quotes_and_spacing_loosely_once_nothing_else_matches() {
        let file = "A = \"EUR\"\nB = f(x,  'y')\n";
        // Quotes: the file's way in new too.
        let r = replaced(file, "A = 'EUR'", "A = 'GBP'").unwrap();
        assert_eq!(r.text, "A = \"GBP\"\nB = f(x,  'y')\n");
        let loose = r.loose.unwrap();
        assert_eq!((r.line, loose.last), (1, 1));
        assert_eq!(loose.quotes, [('\'', '"')]);
        // Spacing, part of a line: the part is replaced, the rest kept.
        let r = replaced(file, "f(x, \"y\")", "f(x, \"z\")").unwrap();
        assert_eq!(r.text, "A = \"EUR\"\nB = f(x, 'z')\n");
        assert_eq!(r.line, 2);
        // Spaces at the ends of a part of a line are the file's, left in place.
        let r = replaced(file, " x,\t'y' ", " x, 'z' ").unwrap();
        assert_eq!(r.text, "A = \"EUR\"\nB = f(x, 'z')\n");
        // No space is not a space; a line break is not a space.
        assert!(matches!(
            replaced(file, "A='EUR'", "x"),
            Err(NoReplace::NotFound { .. })
        ));
        assert!(matches!(
            replaced(file, "A = 'EUR' B = f", "x"),
            Err(NoReplace::NotFound { .. })
        ));
        // Several lines are whole lines of the file, new indented like them.
        let file = "def f():\n    if a:\n        return  'x'\n";
        let r = replaced(file, "if a:\n  return \"x\"", "if a:\n  return \"y\"").unwrap();
        assert_eq!(r.text, "def f():\n    if a:\n        return 'y'\n");
        assert_eq!((r.line, r.loose.as_ref().unwrap().last), (2, 3));
        assert_eq!(r.reindented, None);
        assert!(matches!(
            replaced(file, "f():\n  if a", "x"),
            Err(NoReplace::NotFound { .. })
        ));
        // A CRLF file keeps its line endings.
        let r = replaced(
            "a = 'x'\r\nb = 'y'\r\n",
            "a = \"x\"\nb = \"y\"",
            "a = \"x\"\nb = \"z\"",
        )
        .unwrap();
        assert_eq!(r.text, "a = 'x'\r\nb = 'z'\r\n");
        // Two places, overlaps counted, each line named once.
        assert_eq!(
            replaced("x = 'a' 'a' 'a'\n", "\"a\" \"a\"", "b"),
            Err(NoReplace::LooselyMany {
                places: 2,
                lines: vec![1]
            })
        );
        // What is there as written wins, even when more is there loosely.
        let r = replaced("a = 'x'\nb = \"x\"\n", "\"x\"", "\"y\"").unwrap();
        assert_eq!((r.text.as_str(), r.loose), ("a = 'x'\nb = \"y\"\n", None));
        // And so does a place found without its indentation.
        let r = replaced("  a = 'x'\nb = \"x\"\n", "a = 'x'", "a = 'y'").unwrap();
        assert_eq!(r.text, "  a = 'y'\nb = \"x\"\n");
        assert_eq!(r.loose, None);
    }

    #[test]
    fn new_takes_the_files_quotes_only_when_that_is_plain() {
        let q = |old, matched, new| quoted_like_file(old, matched, new);
        assert_eq!(q("'a'", "\"a\"", "'b'").0, "\"b\"");
        // new quotes otherwise than old: as given.
        assert_eq!(q("'a'", "\"a\"", "\"b\""), ("\"b\"".to_owned(), vec![]));
        assert_eq!(q("'a'", "\"a\"", "'b' + \"c\"").1, vec![]);
        // The model's ' stood for both of the file's quotes: as given.
        assert_eq!(q("'a' 'b'", "'a' \"b\"", "'c'").1, vec![]);
        // Two kinds made one: as given.
        assert_eq!(q("'a' \"b\"", "\"a\" \"b\"", "'a' \"b\"").1, vec![]);
        // Both swapped: both written the file's way.
        assert_eq!(q("'a' \"b\"", "\"a\" 'b'", "'c' \"d\"").0, "\"c\" 'd'");
        // An apostrophe would leave a quote unpaired: as given.
        assert_eq!(q("'a'", "\"a\"", "'b'  # it's").1, vec![]);
        // One quote of a string that goes on: its pairing is the file's.
        assert_eq!(q("x\"", "x'", "y\"").0, "y'");
    }

    #[test]
    fn replace_meets_a_crlf_file_halfway() {
        let r = replaced("a\r\nb\r\nc\r\n", "a\nb", "x\ny").unwrap();
        assert_eq!(r.text, "x\r\ny\r\nc\r\n");
        assert!(r.crlf);
        // Exactly as written is tried first.
        let r = replaced("a\r\nb\r\n", "a\r\nb", "z").unwrap();
        assert_eq!(r.text, "z\r\n");
        assert!(!r.crlf);
        // One line needs no reading.
        let r = replaced("a\r\nb\r\n", "b", "c").unwrap();
        assert_eq!((r.text.as_str(), r.crlf), ("a\r\nc\r\n", false));
        // An LF file is not read as CRLF; its lines are the same lines, loosely.
        let r = replaced("alpha\nbeta\n", "alpha\r\nbeta", "z").unwrap();
        assert_eq!(
            (r.text.as_str(), r.crlf, r.reindented),
            ("z\n", false, Some(2))
        );
    }
}
