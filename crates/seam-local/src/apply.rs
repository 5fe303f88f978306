//! The operator's side of a builder branch: what `approve` and `reject` do,
//! outside every wall, with the operator's rights.
//!
//! The branch lives in the staging repository, whose config, hooks and
//! attributes the agent writes, and the queue row naming it is the agent's
//! too. So nothing here runs git in the staging repository or trusts the row:
//!
//! - the row's paths must lie under `<seam_home>/staging/` (`repos/<x>.git`,
//!   `worktrees/<x>`), its object ids must be full hex, its target a branch
//!   name;
//! - the operator's git runs in the operator's repository only, set up as
//!   `git::command` says (no global or system config, every config-driven
//!   program off), and sees the staging repository's `objects/` only as an
//!   alternate object directory (`GIT_ALTERNATE_OBJECT_DIRECTORIES`), only
//!   while copying: `rev-list --objects <tip> --not <target>` into
//!   `pack-objects --stdout` into `index-pack --stdin --strict`, which stores
//!   every object in the operator's repository verified by its hash (and by
//!   fsck);
//! - without the alternate, it then checks that `<tip>` and everything
//!   between it and the target is present, that the base and the target are
//!   ancestors of the tip, and reads the branch's content from the objects:
//!   a `.gitattributes` that gains a `filter=`, `diff=` or `merge=` attribute
//!   (git would run a program the operator's config names for it), a link, a
//!   submodule, a protected path, or a secret by shape in an added line or a
//!   commit message refuses the approval;
//! - then it fast-forwards: `merge --ff-only` in the worktree that has the
//!   target checked out, else a compare-and-swap `update-ref`;
//! - and removes the turn's worktree directory without following a link.
//!
//! The staging repository's own bookkeeping (its worktree list, the `seam/*`
//! branch) is left to the builder, inside the agent, the next time it opens
//! a branch.

use std::io::Read;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::process::Stdio;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use seam_home::{SeamHome, layout};
use seam_scrub::Scrubber;

use crate::git::{self, GitError};
use crate::guard::{guarded, is_seam_source};
use crate::queue::{QueueError, Staged};
use crate::repo_path::RepoPath;

/// The deepest directory tree `remove_tree` descends.
const MAX_DEPTH: usize = 256;
/// The most of a branch's diff read for its checks.
const MAX_DIFF_READ: usize = 64 * 1024 * 1024;

/// The parts of a branch item approve and reject act on.
struct Item<'a> {
    id: i64,
    repo: &'a Path,
    branch: &'a str,
    worktree: &'a Path,
    base: &'a str,
    target: &'a str,
    staging_repo: &'a Path,
    tip: &'a str,
}

impl<'a> Item<'a> {
    fn of(id: i64, staged: &'a Staged) -> Option<Item<'a>> {
        match staged {
            Staged::Branch {
                repo,
                branch,
                worktree,
                base,
                target,
                staging_repo,
                tip,
                ..
            } => Some(Item {
                id,
                repo,
                branch,
                worktree,
                base,
                target,
                staging_repo,
                tip,
            }),
            _ => None,
        }
    }

    fn apply(&self, message: impl Into<String>) -> QueueError {
        QueueError::Apply {
            id: self.id,
            message: message.into(),
        }
    }

    fn git(&self) -> impl Fn(GitError) -> QueueError + '_ {
        move |cause| QueueError::Git { id: self.id, cause }
    }

    fn refuse(&self, why: String) -> QueueError {
        QueueError::CriticRejected {
            id: self.id,
            why: format!("approval's own check of the commits: {why}"),
        }
    }
}

/// How the operator's git sees objects: its own only, the staging
/// repository's too (while listing and packing what to copy), or a
/// quarantine of the copied objects over its own (while checking them).
#[derive(Clone, Copy)]
enum Sees<'a> {
    Own,
    Staging(&'a Path),
    Quarantine { incoming: &'a Path, own: &'a Path },
}

/// The operator's git in the operator's repository, seeing what `sees` says.
#[derive(Clone, Copy)]
struct OpGit<'a> {
    repo: &'a Path,
    sees: Sees<'a>,
}

impl<'a> OpGit<'a> {
    fn cmd(&self) -> std::process::Command {
        let mut cmd = git::command(self.repo);
        match self.sees {
            Sees::Own => {}
            Sees::Staging(objects) => {
                // No commit-graph or multi-pack index the agent could have
                // written there is believed.
                for c in ["core.commitGraph=false", "core.multiPackIndex=false"] {
                    cmd.arg("-c").arg(c);
                }
                cmd.env("GIT_ALTERNATE_OBJECT_DIRECTORIES", alternate_env(objects));
            }
            Sees::Quarantine { incoming, own } => {
                cmd.env("GIT_OBJECT_DIRECTORY", incoming)
                    .env("GIT_ALTERNATE_OBJECT_DIRECTORIES", alternate_env(own))
                    .env("GIT_QUARANTINE_PATH", incoming);
            }
        }
        cmd
    }

    fn bytes(&self, args: &[&str]) -> Result<Vec<u8>, GitError> {
        git::run_bytes(self.cmd(), self.repo, args, None)
    }

    fn text(&self, args: &[&str]) -> Result<String, GitError> {
        self.bytes(args)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    }

    fn test(&self, args: &[&str]) -> Result<bool, GitError> {
        git::run_test(self.cmd(), self.repo, args)
    }

    /// True when `a` is an ancestor of (or is) `b`.
    fn ancestor(&self, a: &str, b: &str) -> Result<bool, GitError> {
        self.test(&["merge-base", "--is-ancestor", a, b])
    }
}

/// Approves a branch item: see the module doc.
pub(crate) fn approve_branch(id: i64, home: &Path, staged: &Staged) -> Result<String, QueueError> {
    let Some(it) = Item::of(id, staged) else {
        return Err(QueueError::Apply {
            id,
            message: "not a branch item".to_owned(),
        });
    };
    if it.staging_repo.as_os_str().is_empty() || it.tip.is_empty() {
        return Err(it.apply(format!(
            "it was staged by an older seam (its branch {} was made in {} itself, and the item names no staging repository or tip): it cannot be approved; reject it (seam queue reject {id}) and ask again",
            it.branch,
            it.repo.display()
        )));
    }
    for (field, oid) in [("tip", it.tip), ("base", it.base)] {
        if !git::is_full_oid(oid) {
            return Err(it.apply(format!(
                "its {field} {oid:?} is not a full hexadecimal object id: the item was altered; reject it"
            )));
        }
    }
    let staging_objects = staged_path(home, it.staging_repo, SeamHome::staged_repos)
        .filter(|_| it.staging_repo.extension().is_some_and(|e| e == "git"))
        .ok_or_else(|| {
            it.apply(format!(
                "its staging repository {} is not a <name>.git under {}: the item was altered; reject it",
                it.staging_repo.display(),
                SeamHome::new(home).staged_repos().display()
            ))
        })?
        .join("objects");
    let g = it.git();
    let repo = it.repo;
    let own = OpGit {
        repo,
        sees: Sees::Own,
    };
    if !own
        .test(&["check-ref-format", &format!("refs/heads/{}", it.target)])
        .map_err(&g)?
    {
        return Err(it.apply(format!(
            "its target {:?} is not a branch name: the item was altered; reject it",
            it.target
        )));
    }
    let now = git::rev(repo, &format!("refs/heads/{}", it.target)).map_err(|_| {
        it.apply(format!(
            "the target branch {} no longer exists in {}",
            it.target,
            repo.display()
        ))
    })?;
    let tip = it.tip;
    let moved = || QueueError::TargetMoved {
        id,
        target: it.target.to_owned(),
        base: it.base.to_owned(),
        now: now.clone(),
    };
    // Refuse early, seeing the staging objects: the target moved.
    let staging = OpGit {
        repo,
        sees: Sees::Staging(&staging_objects),
    };
    if !staging.ancestor(&now, tip).map_err(|e| {
        it.apply(format!(
            "the branch's tip {tip:.12} cannot be read from {} ({e}): reject this item",
            staging_objects.display()
        ))
    })? {
        return Err(moved());
    }
    if tip != now {
        let objects = git::objects_dir(repo).map_err(&g)?;
        let incoming = Quarantine::make(&objects).map_err(|e| it.apply(e))?;
        let checked = OpGit {
            repo,
            sees: Sees::Quarantine {
                incoming: &incoming.dir,
                own: &objects,
            },
        };
        copy_objects(&staging, &checked, tip, &now).map_err(|e| {
            it.apply(format!(
                "bringing the branch's commits over from {} failed: {e}",
                staging_objects.display()
            ))
        })?;
        check(&it, &checked, &now, &moved)?;
        incoming.migrate(&objects).map_err(|e| it.apply(e))?;
    }
    // The objects are the operator's own now; the same checks, once more, on
    // what the fast-forward will use.
    check(&it, &own, &now, &moved)?;
    match git::worktree_of(repo, it.target).map_err(&g)? {
        // The target is checked out somewhere (the operator's working tree):
        // a fast-forward merge there moves the branch and its files together.
        Some(tree) => {
            git::git(&tree, &["merge", "--ff-only", "--no-edit", "-q", tip]).map_err(|e| {
                it.apply(format!(
                    "the fast-forward of {} in {} failed (uncommitted changes there in the same files?): {e}",
                    it.target,
                    tree.display()
                ))
            })?;
        }
        None => {
            own.text(&[
                "update-ref",
                &format!("refs/heads/{}", it.target),
                tip,
                &now,
            ])
            .map_err(&g)?;
        }
    }
    let mut message = format!("{} fast-forwarded to {tip:.12}", it.target);
    if let Err(why) = remove_worktree(home, it.worktree) {
        message.push_str(&format!("; {why}"));
    }
    Ok(message)
}

/// The checks of the module doc, seeing objects as `git` does.
fn check(
    it: &Item<'_>,
    git: &OpGit<'_>,
    now: &str,
    moved: &dyn Fn() -> QueueError,
) -> Result<(), QueueError> {
    let tip = it.tip;
    let g = it.git();
    git.text(&["rev-list", "--objects", "--quiet", tip, "--not", now])
        .map_err(|e| {
            it.apply(format!(
                "the commits up to {tip:.12} are not all in {} ({e}): nothing was moved; reject this item",
                it.repo.display()
            ))
        })?;
    let kind = git.text(&["cat-file", "-t", tip]).map_err(&g)?;
    if kind.trim() != "commit" {
        return Err(it.apply(format!(
            "its tip {tip:.12} is a {}, not a commit: the item was altered; reject it",
            kind.trim()
        )));
    }
    if !git.ancestor(it.base, tip).map_err(&g)? {
        return Err(it.apply(format!(
            "its base {:.12} is not an ancestor of its tip {tip:.12}: the item was altered; reject it",
            it.base
        )));
    }
    if !git.ancestor(now, tip).map_err(&g)? {
        return Err(moved());
    }
    check_content(git, it.repo, tip, now).map_err(|e| match e {
        Check::Refused(why) => it.refuse(why),
        Check::Git(cause) => QueueError::Git { id: it.id, cause },
    })
}

/// A directory of the operator's objects where the copied pack waits, seen
/// over the repository's own objects, until the checks pass (git's own
/// quarantine for a push works the same way). Removed when dropped.
struct Quarantine {
    dir: PathBuf,
}

impl Quarantine {
    fn make(objects: &Path) -> Result<Quarantine, String> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = objects.join(format!("incoming-seam-{}-{nanos:09}", std::process::id()));
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .and_then(|()| std::fs::create_dir(dir.join("pack")))
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        Ok(Quarantine { dir })
    }

    /// Moves the checked pack into `objects/pack` (the index last: a pack
    /// is seen once its index is there).
    fn migrate(&self, objects: &Path) -> Result<(), String> {
        let from = self.dir.join("pack");
        let to = objects.join("pack");
        let mut names: Vec<std::ffi::OsString> = std::fs::read_dir(&from)
            .map_err(|e| format!("cannot read {}: {e}", from.display()))?
            .filter_map(|e| e.ok().map(|e| e.file_name()))
            .collect();
        names.sort_by_key(|n| {
            (
                Path::new(n).extension().is_some_and(|e| e == "idx"),
                n.clone(),
            )
        });
        if !to.is_dir() {
            std::fs::create_dir_all(&to)
                .map_err(|e| format!("cannot create {}: {e}", to.display()))?;
        }
        for n in names {
            let (a, b) = (from.join(&n), to.join(&n));
            if b.exists() {
                continue; // the same pack, by its name's hash
            }
            std::fs::rename(&a, &b)
                .map_err(|e| format!("cannot move {} to {}: {e}", a.display(), b.display()))?;
        }
        Ok(())
    }
}

impl Drop for Quarantine {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Rejects a branch item: removes its worktree directory (never running git
/// in the staging repository). An item staged by an older seam, whose branch
/// is in the operator's repository, loses that branch too.
pub(crate) fn discard_branch(id: i64, home: &Path, staged: &Staged) -> String {
    let Some(it) = Item::of(id, staged) else {
        return String::new();
    };
    let mut message = match remove_worktree(home, it.worktree) {
        Ok(()) => {
            "worktree deleted (the builder forgets the branch in its staging repository)".to_owned()
        }
        Err(why) => why,
    };
    if it.staging_repo.as_os_str().is_empty() && it.branch.starts_with("seam/") {
        let repo = it.repo;
        let gone = git::git(repo, &["worktree", "prune"])
            .and_then(|_| git::branch_exists(repo, it.branch))
            .and_then(|there| {
                if there {
                    git::git(repo, &["branch", "-D", "-q", it.branch]).map(|_| ())
                } else {
                    Ok(())
                }
            });
        message = match gone {
            Ok(()) => format!(
                "worktree and the older seam's branch {} in {} deleted",
                it.branch,
                repo.display()
            ),
            Err(e) => format!(
                "{message}; the older seam's branch {} stays: {e}",
                it.branch
            ),
        };
    }
    message
}

/// Removes a rendered diagram, which must be `<home>/staging/images/<turn>/<file>`.
pub(crate) fn remove_image(home: &Path, file: &Path) -> Result<(), String> {
    let rel = under(home, file, SeamHome::images).filter(|rel| {
        rel.components().count() == 2 && rel.components().all(|c| matches!(c, Component::Normal(_)))
    });
    let Some(rel) = rel else {
        return Err(format!(
            "the image {} is not under {}, so it was left in place (the item was altered)",
            file.display(),
            SeamHome::new(home).images().display()
        ));
    };
    remove_nofollow(home, &[layout::STAGING, layout::IMAGES], rel)
        .map_err(|e| format!("cannot delete {}: {e}", file.display()))
}

/// Removes the item's worktree, which must be `<home>/staging/worktrees/<x>`.
fn remove_worktree(home: &Path, worktree: &Path) -> Result<(), String> {
    let Some(name) =
        staged_path(home, worktree, SeamHome::worktrees).and_then(|_| worktree.file_name())
    else {
        return Err(format!(
            "the worktree {} is not under {}, so it was left in place (the item was altered)",
            worktree.display(),
            SeamHome::new(home).worktrees().display()
        ));
    };
    remove_nofollow(home, &[layout::STAGING, layout::WORKTREES], Path::new(name)).map_err(|e| {
        format!(
            "the worktree {} could not be removed ({e}): remove it by hand",
            worktree.display()
        )
    })
}

/// `path` relative to the place `dir` names in seam's home at `home`, by its text: `home`
/// as given, else with its links resolved.
fn under<'p>(home: &Path, path: &'p Path, dir: fn(&SeamHome) -> PathBuf) -> Option<&'p Path> {
    path.strip_prefix(dir(&SeamHome::new(home)))
        .ok()
        .or_else(|| {
            let canon = std::fs::canonicalize(home).ok()?;
            path.strip_prefix(dir(&SeamHome::new(canon))).ok()
        })
}

/// `path` when it is one name under the place `dir` names in seam's home
/// (`<home>/staging/<kind>/<one name>`), by its text.
fn staged_path<'p>(home: &Path, path: &'p Path, dir: fn(&SeamHome) -> PathBuf) -> Option<&'p Path> {
    let rel = under(home, path, dir)?;
    let mut parts = rel.components();
    match (parts.next(), parts.next()) {
        (Some(Component::Normal(_)), None) => Some(path),
        _ => None,
    }
}

/// Removes `<home>/<dirs…>/<rel>` (a file, a link or a whole tree), walking
/// every directory below `home` with `O_NOFOLLOW`: a link on the way, which
/// the agent could plant anywhere under staging, is never followed. Nothing
/// there is not an error.
pub(crate) fn remove_nofollow(home: &Path, dirs: &[&str], rel: &Path) -> std::io::Result<()> {
    let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let nofollow = dir_flags | OFlags::NOFOLLOW;
    let mut dir = match rustix::fs::open(home, dir_flags, Mode::empty()) {
        Ok(d) => d,
        Err(Errno::NOENT) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    let mut names: Vec<&std::ffi::OsStr> = dirs.iter().map(std::ffi::OsStr::new).collect();
    for c in rel.components() {
        match c {
            Component::Normal(n) => names.push(n),
            _ => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!("{} is not a plain relative path", rel.display()),
                ));
            }
        }
    }
    let Some(last) = names.pop() else {
        return Ok(());
    };
    for name in names {
        dir = match rustix::fs::openat(&dir, name, nofollow, Mode::empty()) {
            Ok(d) => d,
            Err(Errno::NOENT) => return Ok(()),
            Err(e) => return Err(e.into()),
        };
    }
    remove_tree(&dir, last, 0)
}

fn remove_tree(parent: &OwnedFd, name: &std::ffi::OsStr, depth: usize) -> std::io::Result<()> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = match rustix::fs::openat(parent, name, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(()),
        // A file or a link: the entry itself goes.
        Err(Errno::NOTDIR | Errno::LOOP) => {
            return match rustix::fs::unlinkat(parent, name, AtFlags::empty()) {
                Ok(()) | Err(Errno::NOENT) => Ok(()),
                Err(e) => Err(e.into()),
            };
        }
        Err(e) => return Err(e.into()),
    };
    if depth >= MAX_DEPTH {
        return Err(std::io::Error::other(format!(
            "directories nested deeper than {MAX_DEPTH}"
        )));
    }
    let mut entries: Vec<(std::ffi::OsString, FileType)> = Vec::new();
    let mut listing = rustix::fs::Dir::read_from(&fd)?;
    while let Some(entry) = listing.read() {
        let entry = entry?;
        let n = entry.file_name().to_bytes();
        if n == b"." || n == b".." {
            continue;
        }
        entries.push((std::ffi::OsStr::from_bytes(n).to_owned(), entry.file_type()));
    }
    for (n, kind) in entries {
        match kind {
            FileType::RegularFile | FileType::Symlink | FileType::Fifo | FileType::Socket => {
                match rustix::fs::unlinkat(&fd, n.as_os_str(), AtFlags::empty()) {
                    Ok(()) | Err(Errno::NOENT) => {}
                    Err(Errno::ISDIR) => remove_tree(&fd, &n, depth + 1)?,
                    Err(e) => return Err(e.into()),
                }
            }
            _ => remove_tree(&fd, &n, depth + 1)?,
        }
    }
    match rustix::fs::unlinkat(parent, name, AtFlags::REMOVEDIR) {
        Ok(()) | Err(Errno::NOENT) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// `GIT_ALTERNATE_OBJECT_DIRECTORIES` naming `dir` alone (quoted as git reads
/// it when the path holds its separator).
fn alternate_env(dir: &Path) -> String {
    let s = dir.to_string_lossy();
    if s.contains(':') || s.starts_with('"') {
        format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
    } else {
        s.into_owned()
    }
}

/// Copies every object reachable from `tip` and not from `now`: `rev-list
/// --objects | pack-objects --stdout` as `from` sees them, into `index-pack
/// --stdin --strict` as `into` does (which stores each object verified by its
/// hash, and checks it as fsck would).
fn copy_objects(from: &OpGit<'_>, into: &OpGit<'_>, tip: &str, now: &str) -> Result<(), GitError> {
    let repo = from.repo;
    let list = from.bytes(&["rev-list", "--objects", tip, "--not", now])?;
    let pack_args = ["pack-objects", "--stdout", "-q"];
    let mut pack = from
        .cmd()
        .args(pack_args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(GitError::Spawn)?;
    let feed = pack.stdin.take().map(|mut stdin| {
        std::thread::spawn(move || {
            use std::io::Write;
            let _ = stdin.write_all(&list);
        })
    });
    let pack_out = pack.stdout.take().expect("piped");
    let mut pack_err = pack.stderr.take().expect("piped");
    let errs = std::thread::spawn(move || {
        let mut e = Vec::new();
        let _ = pack_err.read_to_end(&mut e);
        e
    });
    let index_args = ["index-pack", "--stdin", "--strict"];
    let index = into
        .cmd()
        .args(index_args)
        .stdin(Stdio::from(pack_out))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(GitError::Spawn);
    if let Some(f) = feed {
        let _ = f.join();
    }
    let pack_status = pack.wait().map_err(GitError::Spawn)?;
    let pack_err = errs.join().unwrap_or_default();
    if !pack_status.success() {
        return Err(git::failed(repo, &pack_args, &pack_err));
    }
    let index = index?;
    if !index.status.success() {
        return Err(git::failed(repo, &index_args, &index.stderr));
    }
    Ok(())
}

enum Check {
    Refused(String),
    Git(GitError),
}

impl From<GitError> for Check {
    fn from(e: GitError) -> Check {
        Check::Git(e)
    }
}

/// What the branch changes from `now` to its tip, read from the operator's
/// objects: refused when it adds a program-running attribute, a link, a
/// submodule, a protected path, or a secret by shape.
fn check_content(git: &OpGit<'_>, repo: &Path, tip: &str, now: &str) -> Result<(), Check> {
    let raw = git.bytes(&[
        "diff-tree",
        "-r",
        "-z",
        "--raw",
        "--no-renames",
        "--no-ext-diff",
        "--no-textconv",
        now,
        tip,
    ])?;
    let self_source = is_seam_source(repo);
    let mut fields = raw.split(|b| *b == 0).filter(|f| !f.is_empty());
    let mut refusals: Vec<String> = Vec::new();
    while let (Some(meta), Some(path)) = (fields.next(), fields.next()) {
        let meta = String::from_utf8_lossy(meta);
        let path = String::from_utf8_lossy(path).into_owned();
        // `:old new oldsha newsha status`
        let parts: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
        let (Some(old_sha), Some(new_mode), Some(new_sha)) =
            (parts.get(2), parts.get(1), parts.get(3))
        else {
            continue;
        };
        if *new_mode == "000000" {
            continue; // deleted
        }
        match *new_mode {
            "120000" => refusals.push(format!("{path} is a symbolic link")),
            "160000" => refusals.push(format!("{path} is a submodule")),
            _ => {}
        }
        match RepoPath::parse(&path) {
            Ok(p) => {
                if let Some(g) = guarded(&p, self_source) {
                    refusals.push(g.message(&path));
                }
            }
            Err(r) => refusals.push(r.message),
        }
        let last = path.rsplit('/').next().unwrap_or(&path);
        if last.eq_ignore_ascii_case(".gitattributes") {
            let new = git.text(&["cat-file", "blob", new_sha])?;
            let old = if old_sha.bytes().all(|b| b == b'0') {
                String::new()
            } else {
                git.text(&["cat-file", "blob", old_sha])?
            };
            refusals.extend(program_attributes(&path, &old, &new));
        }
    }
    if !refusals.is_empty() {
        return Err(Check::Refused(refusals.join("; ")));
    }
    let scrubber = Scrubber::new();
    let diff = git.bytes(&[
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--no-renames",
        "--text",
        "-U0",
        now,
        tip,
    ])?;
    if diff.len() > MAX_DIFF_READ {
        return Err(Check::Refused(format!(
            "its diff is {} bytes, over the {MAX_DIFF_READ} approval reads",
            diff.len()
        )));
    }
    let diff = String::from_utf8_lossy(&diff);
    let mut file = String::new();
    let mut found: Vec<String> = Vec::new();
    let mut added: Vec<&str> = Vec::new();
    let flush = |file: &str, added: &mut Vec<&str>, found: &mut Vec<String>| {
        if added.is_empty() {
            return;
        }
        let shapes = scrubber.scrub(&added.join("\n")).shapes();
        if !shapes.is_empty() {
            found.push(format!("{} in {file}", shapes.join(", ")));
        }
        added.clear();
    };
    for line in diff.lines() {
        if let Some(name) = line.strip_prefix("+++ ") {
            flush(&file, &mut added, &mut found);
            file = name.strip_prefix("b/").unwrap_or(name).to_owned();
        } else if line.starts_with("diff --git ") {
            flush(&file, &mut added, &mut found);
        } else if let Some(l) = line.strip_prefix('+') {
            added.push(l);
        }
    }
    flush(&file, &mut added, &mut found);
    let messages = git.text(&["log", "--format=%B", tip, "--not", now])?;
    let shapes = scrubber.scrub(&messages).shapes();
    if !shapes.is_empty() {
        found.push(format!("{} in a commit message", shapes.join(", ")));
    }
    if !found.is_empty() {
        return Err(Check::Refused(format!(
            "the commits add what looks like a secret ({})",
            found.join("; ")
        )));
    }
    Ok(())
}

/// The lines of a `.gitattributes` at `path` that the branch adds (`new`'s
/// lines not in `old`) and that give an attribute git runs a program for: a
/// filter, a diff driver or a merge driver, named by value (`filter=lfs`).
/// `-diff`, `binary`, `text`, `eol=…` and the like run nothing.
pub(crate) fn program_attributes(path: &str, old: &str, new: &str) -> Vec<String> {
    let before: std::collections::HashSet<&str> = old.lines().map(str::trim).collect();
    let mut out = Vec::new();
    for (n, line) in new.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') || before.contains(t) {
            continue;
        }
        let runs: Vec<&str> = t
            .split_ascii_whitespace()
            .filter(|tok| {
                ["filter=", "diff=", "merge="]
                    .iter()
                    .any(|k| tok.len() >= k.len() && tok[..k.len()].eq_ignore_ascii_case(k))
            })
            .collect();
        if !runs.is_empty() {
            out.push(format!(
                "{path} line {}: {} would make git run a program the operator's config names ({}); only attributes that run nothing (-diff, binary, text, eol) are approved",
                n + 1,
                quoted_line(t),
                runs.join(", ")
            ));
        }
    }
    out
}

/// A line of the branch's text, cut and with control characters shown, for
/// a message.
fn quoted_line(s: &str) -> String {
    let mut out: String = s
        .chars()
        .take(120)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if s.chars().count() > 120 {
        out.push('…');
    }
    format!("`{out}`")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_that_run_programs_are_found() {
        let new = "*.bin -diff\n* text=auto eol=lf\n*.png binary\n* filter=lfs\n[attr]m diff=x\n*.c merge=ours\n# filter=lfs\n";
        let found = program_attributes("sub/.gitattributes", "", new);
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(
            found[0].starts_with("sub/.gitattributes line 4:"),
            "{found:?}"
        );
        assert!(found[1].contains("diff=x"));
        assert!(found[2].contains("merge=ours"));
        // A line the operator already had is theirs, not the branch's.
        assert!(
            program_attributes(".gitattributes", "* filter=lfs\n", "* filter=lfs\n").is_empty()
        );
    }

    #[test]
    fn staged_paths_are_one_name_under_staging() {
        let home = Path::new("/h");
        let worktrees = SeamHome::worktrees;
        assert!(staged_path(home, Path::new("/h/staging/worktrees/t-1"), worktrees).is_some());
        for bad in [
            "/h/staging/worktrees",
            "/h/staging/worktrees/a/b",
            "/h/staging/worktrees/../x",
            "/home/owner",
            "/h/staging/repos/x.git",
        ] {
            assert!(
                staged_path(home, Path::new(bad), worktrees).is_none(),
                "{bad}"
            );
        }
    }

    #[test]
    fn removal_never_follows_a_link() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().join("home");
        let outside = d.path().join("outside");
        std::fs::create_dir_all(outside.join("deep")).unwrap();
        std::fs::write(outside.join("deep/keep.txt"), "keep").unwrap();
        let wts = SeamHome::new(&home).worktrees();
        let dirs = &[layout::STAGING, layout::WORKTREES];
        std::fs::create_dir_all(wts.join("t-1/sub")).unwrap();
        std::fs::write(wts.join("t-1/sub/f"), "x").unwrap();
        std::os::unix::fs::symlink(&outside, wts.join("t-1/link")).unwrap();
        std::os::unix::fs::symlink(&outside, wts.join("t-2")).unwrap();
        remove_nofollow(&home, dirs, Path::new("t-1")).unwrap();
        remove_nofollow(&home, dirs, Path::new("t-2")).unwrap();
        assert!(!wts.join("t-1").exists());
        assert!(std::fs::symlink_metadata(wts.join("t-2")).is_err());
        assert!(outside.join("deep/keep.txt").exists());
        // `worktrees` itself a link: nothing below it is touched.
        std::fs::remove_dir(&wts).unwrap();
        std::os::unix::fs::symlink(&outside, &wts).unwrap();
        assert!(remove_nofollow(&home, dirs, Path::new("deep")).is_err());
        assert!(outside.join("deep/keep.txt").exists());
    }
}
