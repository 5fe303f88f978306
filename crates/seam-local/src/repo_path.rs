//! Paths the model names inside the builder's repository: checked by their
//! text first (relative, no `..`, nothing under `.git`), then walked one
//! component at a time under the worktree with `O_NOFOLLOW`, so a link on the
//! way (one the repository holds, or one a patch made) never leads out.

use std::fs::File;
use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use seam_protocol::RefusalCode;

use crate::LocalRefusal;

/// The longest path the builder takes, in bytes.
const MAX_PATH_BYTES: usize = 1024;
/// The longest component, in bytes.
const MAX_NAME_BYTES: usize = 255;

/// A checked path relative to the repository's root: `/`-separated, no empty,
/// `.` or `..` component, nothing named `.git` (in any case).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RepoPath {
    text: String,
}

impl RepoPath {
    /// Checks `raw` by its text alone. Refusals name the path and what is wrong.
    pub fn parse(raw: &str) -> Result<RepoPath, LocalRefusal> {
        let bad = |why: &str| {
            LocalRefusal::new(
                RefusalCode::InvalidPath,
                format!("path {:?} {why}", seam_term::clip(raw, 120, "…")),
            )
        };
        if raw.is_empty() {
            return Err(bad("is empty"));
        }
        if raw.len() > MAX_PATH_BYTES {
            return Err(bad("is too long"));
        }
        if raw.chars().any(|c| c.is_control()) {
            return Err(bad("holds a control character"));
        }
        if raw.starts_with('/') {
            return Err(bad("is absolute: give it relative to the repository"));
        }
        if raw.contains('\\') {
            return Err(bad("holds a backslash: use / between names"));
        }
        let mut parts = Vec::new();
        for part in raw.split('/') {
            match part {
                "" | "." => continue,
                ".." => return Err(bad("goes up with ..: it must stay inside the repository")),
                p if p.eq_ignore_ascii_case(".git") => {
                    return Err(bad("is inside .git: git's own files are not the builder's"));
                }
                p if p.len() > MAX_NAME_BYTES => return Err(bad("has a name that is too long")),
                p => parts.push(p),
            }
        }
        if parts.is_empty() {
            return Err(bad("names the repository itself, not a file"));
        }
        // `~/x` is somebody's home to a shell: say so rather than make a
        // directory named `~` (checked after `./` is gone, so it is stable).
        if parts[0].starts_with('~') {
            return Err(bad("starts with ~: give it relative to the repository"));
        }
        Ok(RepoPath {
            text: parts.join("/"),
        })
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    pub fn components(&self) -> impl Iterator<Item = &str> {
        self.text.split('/')
    }
}

impl std::fmt::Display for RepoPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

fn walk_refusal(path: &RepoPath, e: Errno, what: &str) -> LocalRefusal {
    match e {
        Errno::LOOP | Errno::NOTDIR => LocalRefusal::new(
            RefusalCode::NotAllowed,
            format!(
                "path {path} leads through a link or a file ({what}): the builder only writes real files inside the repository"
            ),
        ),
        Errno::NOENT => {
            LocalRefusal::new(RefusalCode::NotFound, format!("path {path} does not exist"))
        }
        Errno::ISDIR => LocalRefusal::new(
            RefusalCode::InvalidPath,
            format!("path {path} is a directory"),
        ),
        e => LocalRefusal::new(RefusalCode::Failed, format!("path {path}: {what}: {e}")),
    }
}

/// Opens the directory that holds `path`'s last name, under `root`, creating
/// missing directories when `create`. Never follows a link.
fn open_parent(
    root: &Path,
    path: &RepoPath,
    create: bool,
) -> Result<(OwnedFd, String), LocalRefusal> {
    let dir_flags = OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::RDONLY;
    let mut dir = rustix::fs::open(root, dir_flags, Mode::empty()).map_err(|e| {
        LocalRefusal::new(RefusalCode::Failed, format!("opening the worktree: {e}"))
    })?;
    let names: Vec<&str> = path.components().collect();
    let (last, parents) = names.split_last().expect("a RepoPath has a name");
    for name in parents {
        let next = match rustix::fs::openat(&dir, *name, dir_flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) if create => {
                match rustix::fs::mkdirat(&dir, *name, Mode::from_raw_mode(0o755)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(e) => return Err(walk_refusal(path, e, "making a directory")),
                }
                rustix::fs::openat(&dir, *name, dir_flags, Mode::empty())
                    .map_err(|e| walk_refusal(path, e, "opening a directory"))?
            }
            Err(e) => return Err(walk_refusal(path, e, "opening a directory")),
        };
        dir = next;
    }
    Ok((dir, (*last).to_owned()))
}

/// Writes `content` to `path` under `root`: a regular file, created or
/// truncated (its mode kept), never through a link.
pub(crate) fn write_file(root: &Path, path: &RepoPath, content: &[u8]) -> Result<(), LocalRefusal> {
    use std::io::Write;
    let (dir, name) = open_parent(root, path, true)?;
    let flags =
        OFlags::WRONLY | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(&dir, name.as_str(), flags, Mode::from_raw_mode(0o644)).map_err(
        |e| match e {
            Errno::NXIO => LocalRefusal::new(
                RefusalCode::NotAllowed,
                format!("path {path} is not a regular file"),
            ),
            e => walk_refusal(path, e, "opening the file"),
        },
    )?;
    let st = rustix::fs::fstat(&fd).map_err(|e| walk_refusal(path, e, "reading its status"))?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(LocalRefusal::new(
            RefusalCode::NotAllowed,
            format!("path {path} is not a regular file"),
        ));
    }
    rustix::fs::ftruncate(&fd, 0).map_err(|e| walk_refusal(path, e, "truncating"))?;
    let mut file = File::from(fd);
    file.write_all(content)
        .map_err(|e| LocalRefusal::new(RefusalCode::Failed, format!("writing {path}: {e}")))
}

/// Reads the regular file `path` under `root`, never through a link: `None`
/// when it does not exist. A file larger than `max_bytes` is refused, naming
/// the file and the limit, without reading it.
pub(crate) fn read_file(
    root: &Path,
    path: &RepoPath,
    max_bytes: usize,
) -> Result<Option<Vec<u8>>, LocalRefusal> {
    use std::io::Read;
    let (dir, name) = match open_parent(root, path, false) {
        Ok(d) => d,
        Err(r) if r.code == RefusalCode::NotFound => return Ok(None),
        Err(r) => return Err(r),
    };
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = match rustix::fs::openat(&dir, name.as_str(), flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(None),
        Err(e) => return Err(walk_refusal(path, e, "opening the file")),
    };
    let st = rustix::fs::fstat(&fd).map_err(|e| walk_refusal(path, e, "reading its status"))?;
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => {}
        FileType::Directory => return Err(walk_refusal(path, Errno::ISDIR, "")),
        _ => {
            return Err(LocalRefusal::new(
                RefusalCode::NotAllowed,
                format!("path {path} is not a regular file"),
            ));
        }
    }
    let size = u64::try_from(st.st_size).unwrap_or(0);
    if size > max_bytes as u64 {
        return Err(LocalRefusal::new(
            RefusalCode::InvalidParams,
            format!("{path} is {size} bytes, over the limit of {max_bytes}"),
        ));
    }
    let mut content = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    File::from(fd)
        .take(max_bytes as u64 + 1)
        .read_to_end(&mut content)
        .map_err(|e| LocalRefusal::new(RefusalCode::Failed, format!("reading {path}: {e}")))?;
    if content.len() > max_bytes {
        return Err(LocalRefusal::new(
            RefusalCode::InvalidParams,
            format!("{path} is over the limit of {max_bytes} bytes"),
        ));
    }
    Ok(Some(content))
}

/// Removes the file (or link) `path` under `root`, never following a link on
/// the way. A directory is refused.
pub(crate) fn remove_file(root: &Path, path: &RepoPath) -> Result<(), LocalRefusal> {
    let (dir, name) = open_parent(root, path, false)?;
    let st = rustix::fs::statat(&dir, name.as_str(), AtFlags::SYMLINK_NOFOLLOW)
        .map_err(|e| walk_refusal(path, e, "looking at it"))?;
    if FileType::from_raw_mode(st.st_mode) == FileType::Directory {
        return Err(LocalRefusal::new(
            RefusalCode::InvalidPath,
            format!("path {path} is a directory: delete its files one by one"),
        ));
    }
    rustix::fs::unlinkat(&dir, name.as_str(), AtFlags::empty())
        .map_err(|e| walk_refusal(path, e, "removing it"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_rules() {
        assert_eq!(
            RepoPath::parse("src/./lib.rs").unwrap().as_str(),
            "src/lib.rs"
        );
        assert_eq!(RepoPath::parse("a//b/").unwrap().as_str(), "a/b");
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "a/..",
            ".git/config",
            "sub/.GIT/hooks/x",
            "~/x",
            ".",
            "./",
            "a\\b",
            "a\nb",
            "x\0y",
        ] {
            assert!(RepoPath::parse(bad).is_err(), "{bad:?} accepted");
        }
        let long = "a/".repeat(600);
        assert!(RepoPath::parse(&long).is_err());
    }

    #[test]
    fn never_writes_through_a_link() {
        let outside = tempfile::tempdir().unwrap();
        let root = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("out")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("f"), root.path().join("f")).unwrap();
        let p = RepoPath::parse("out/x").unwrap();
        let r = write_file(root.path(), &p, b"x").unwrap_err();
        assert_eq!(r.code, RefusalCode::NotAllowed);
        let r = write_file(root.path(), &RepoPath::parse("f").unwrap(), b"x").unwrap_err();
        assert_eq!(r.code, RefusalCode::NotAllowed, "{r}");
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
        // Removing a link removes the link, not what it points to.
        std::fs::write(outside.path().join("keep"), b"k").unwrap();
        std::os::unix::fs::symlink(outside.path().join("keep"), root.path().join("k")).unwrap();
        remove_file(root.path(), &RepoPath::parse("k").unwrap()).unwrap();
        assert!(outside.path().join("keep").exists());
        assert!(remove_file(root.path(), &RepoPath::parse("out/keep").unwrap()).is_err());
        assert!(outside.path().join("keep").exists());
    }

    #[test]
    fn writes_and_makes_directories() {
        let root = tempfile::tempdir().unwrap();
        let p = RepoPath::parse("a/b/c.txt").unwrap();
        write_file(root.path(), &p, b"long content").unwrap();
        write_file(root.path(), &p, b"short").unwrap();
        assert_eq!(
            std::fs::read(root.path().join("a/b/c.txt")).unwrap(),
            b"short"
        );
        assert_eq!(
            write_file(root.path(), &RepoPath::parse("a/b").unwrap(), b"x")
                .unwrap_err()
                .code,
            RefusalCode::InvalidPath
        );
    }
}
