//! Owner-only directories and files, atomic replacement and locks: the one way seam writes a
//! file that others must not read, and a file that must never be seen half-written.
//!
//! - A directory is made 0700 ([`ensure_private_dir`]); one that is already there, ours and
//!   wider is narrowed.
//! - A file is created with `O_CREAT | O_EXCL` (so a link, a FIFO or anything else already
//!   at the name is never opened through), owner-only whatever the umask.
//! - A replacement ([`replace`]) writes a fresh temporary file beside the target, fsyncs it,
//!   renames it over the target and fsyncs the directory: a reader, or the next process
//!   after a crash, finds the old content whole or the new, never a mix; and whatever was at
//!   the target (a link, a FIFO, a file others could read) is replaced, never written through.
//! - A file too large to hold in memory (a model download) is written in pieces into a
//!   [`Staged`] file beside its target, then persisted the same way: fsync, rename, directory
//!   fsync; dropped before that, it is removed.
//! - A new file that must appear whole or not at all ([`install_new`]) is written the same
//!   way and hard-linked into place, which fails if anything is at the name already.
//! - A [`Lock`] is an exclusive `flock` on a lock file opened without following a link.

use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rustix::fs::{FlockOperation, OFlags, flock};

/// What failed, on which path, and the system's reason (its `source`).
#[derive(Debug, thiserror::Error)]
#[error("cannot {action} {}", path.display())]
pub struct FileError {
    /// What was being done: "create", "sync", "rename into place"…
    pub action: &'static str,
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

impl FileError {
    fn at<'p>(
        action: &'static str,
        path: &'p Path,
    ) -> impl FnOnce(std::io::Error) -> FileError + 'p {
        move |source| FileError {
            action,
            path: path.to_owned(),
            source,
        }
    }
}

/// An owner-only file's mode.
pub const OWNER_ONLY: u32 = 0o600;
/// An owner-only directory's mode.
pub const OWNER_ONLY_DIR: u32 = 0o700;

fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// The directory a file at `path` lives in (`.` for a bare name).
fn parent_of(path: &Path) -> &Path {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// fsyncs a directory, so that entries created, renamed or removed in it are durable.
pub fn sync_dir(dir: &Path) -> Result<(), FileError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(FileError::at("sync directory", dir))
}

/// Creates `dir` (and missing parents) as 0700; one already there is left as it is (for a
/// caller that refuses a wide directory rather than narrowing it).
pub fn create_private_dir(dir: &Path) -> Result<(), FileError> {
    DirBuilder::new()
        .recursive(true)
        .mode(OWNER_ONLY_DIR)
        .create(dir)
        .map_err(FileError::at("create directory", dir))
}

/// Creates `dir` (and missing parents) as 0700, and narrows it to 0700 if it exists with
/// wider permissions and belongs to this user.
pub fn ensure_private_dir(dir: &Path) -> Result<(), FileError> {
    create_private_dir(dir)?;
    narrow_mode(dir, OWNER_ONLY_DIR)
}

/// Removes group and other permission bits from `path` (sets `mode`) if it has any and this
/// user owns it. A missing file is fine. A link is never followed.
pub fn narrow_mode(path: &Path, mode: u32) -> Result<(), FileError> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(FileError::at("stat", path)(e)),
    };
    if meta.file_type().is_symlink() {
        return Ok(());
    }
    if meta.mode() & 0o077 != 0 && meta.uid() == euid() {
        fs::set_permissions(path, fs::Permissions::from_mode(mode))
            .map_err(FileError::at("narrow permissions of", path))?;
    }
    Ok(())
}

/// Creates an empty owner-only file if nothing is at `path` (`O_EXCL`: a link or a FIFO
/// there counts as something). Returns whether it did.
pub fn create_private_file(path: &Path) -> Result<bool, FileError> {
    match OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(OWNER_ONLY)
        .custom_flags((OFlags::NOFOLLOW | OFlags::CLOEXEC).bits() as i32)
        .open(path)
    {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(FileError::at("create", path)(e)),
    }
}

/// The name of a temporary file [`Staged::beside`] makes for `path`'s file name `name`:
/// `.{name}.` and a random part, then `.tmp`. One rule, for the writer and the sweep.
fn staged_name(name: &str) -> (String, &'static str) {
    (format!("{STAGED_LEAD}{name}."), STAGED_TAIL)
}

/// What begins and ends every name [`staged_name`] gives.
const STAGED_LEAD: &str = ".";
const STAGED_TAIL: &str = ".tmp";
/// How many random characters (ASCII letters and digits) come between them and the name.
const STAGED_RANDOM: usize = 6;

/// The target's file name if `file_name` is the name [`staged_name`] gives with a random
/// part as [`Staged::beside`] makes it (`.{name}.{random}.tmp`), else `None`. The one
/// matcher: [`is_staged_name`] asks whether there is a target, [`sweep_staged`] whether it
/// is its own.
fn staged_target(file_name: &str) -> Option<&str> {
    let rest = file_name
        .strip_prefix(STAGED_LEAD)?
        .strip_suffix(STAGED_TAIL)?;
    // what is left is `{name}.{random}`
    let (name, random) = rest.rsplit_once('.')?;
    let made = !name.is_empty()
        && random.len() == STAGED_RANDOM
        && random.bytes().all(|b| b.is_ascii_alphanumeric());
    made.then_some(name)
}

/// Whether `file_name` is the name of a temporary file [`Staged::beside`] made, for any
/// target: for a directory whose writers take no common lock, which removes such leftovers
/// by their age instead of with [`sweep_staged`].
pub fn is_staged_name(file_name: &str) -> bool {
    staged_target(file_name).is_some()
}

/// Removes the temporary files a crash left beside `path` (see [`replace`]): regular files
/// of this user named as [`Staged::beside`] names them, never through a link. Only for a
/// caller that holds the lock every writer of `path` takes, so that none of them is a write
/// under way. Returns how many it removed. A temporary file of a secrets file holds every
/// secret: left there, nothing else would ever remove it.
pub fn sweep_staged(path: &Path) -> Result<usize, FileError> {
    let dir = parent_of(path);
    let Some(name) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return Ok(0);
    };
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(FileError::at("list", dir)(e)),
    };
    let me = rustix::process::geteuid().as_raw();
    let mut removed = 0;
    for entry in entries {
        let entry = entry.map_err(FileError::at("list", dir))?;
        let file = entry.file_name();
        let file = file.to_string_lossy();
        if staged_target(&file) != Some(name.as_str()) {
            continue;
        }
        let at = entry.path();
        let meta = fs::symlink_metadata(&at).map_err(FileError::at("inspect", &at))?;
        if meta.file_type().is_file() && meta.uid() == me {
            fs::remove_file(&at).map_err(FileError::at("remove", &at))?;
            removed += 1;
        }
    }
    if removed > 0 {
        sync_dir(dir)?;
    }
    Ok(removed)
}

/// A fresh temporary file beside the file it will become (`O_CREAT | O_EXCL`, a random name
/// the sweep knows, exactly the mode asked for), for a content too large to hold in memory:
/// the caller writes it in pieces ([`Staged::file`]), then [`Staged::persist`] fsyncs it,
/// renames it over the target and fsyncs the directory. Dropped without that, it is removed;
/// a crash leaves it for [`sweep_staged`].
#[derive(Debug)]
pub struct Staged {
    temp: tempfile::NamedTempFile,
    target: PathBuf,
}

impl Staged {
    /// An empty temporary file beside `path`, with exactly `mode` (0600 for a private one).
    pub fn beside(path: &Path, mode: u32) -> Result<Staged, FileError> {
        let dir = parent_of(path);
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (prefix, suffix) = staged_name(&name);
        let temp = tempfile::Builder::new()
            .prefix(&prefix)
            .suffix(suffix)
            .rand_bytes(STAGED_RANDOM)
            .permissions(fs::Permissions::from_mode(mode))
            .tempfile_in(dir)
            .map_err(FileError::at("create a temporary file in", dir))?;
        // The umask may have narrowed `mode` (never widened it); set it exactly.
        temp.as_file()
            .set_permissions(fs::Permissions::from_mode(mode))
            .map_err(FileError::at("set permissions of", temp.path()))?;
        Ok(Staged {
            temp,
            target: path.to_owned(),
        })
    }

    /// The temporary file's path (for an error that names it).
    pub fn path(&self) -> &Path {
        self.temp.path()
    }

    /// The temporary file, to write, read back or seek.
    pub fn file(&mut self) -> &mut File {
        self.temp.as_file_mut()
    }

    /// Makes what was written durable (fsync) and nothing more: for a caller that links it
    /// into place itself.
    fn sync(&self) -> Result<(), FileError> {
        self.temp
            .as_file()
            .sync_all()
            .map_err(FileError::at("sync", self.temp.path()))
    }

    /// fsyncs the file, renames it over the target (whatever was there is replaced, not
    /// written through) and fsyncs the directory.
    pub fn persist(self) -> Result<(), FileError> {
        self.sync()?;
        let target = self.target;
        self.temp
            .persist(&target)
            .map_err(|e| FileError::at("rename into place", &target)(e.error))?;
        sync_dir(parent_of(&target))
    }
}

/// A [`Staged`] file beside `path` holding `bytes`, with exactly `mode` (not yet fsynced).
fn staged_beside(path: &Path, bytes: &[u8], mode: u32) -> Result<Staged, FileError> {
    let mut staged = Staged::beside(path, mode)?;
    let tmp = staged.path().to_owned();
    staged
        .file()
        .write_all(bytes)
        .map_err(FileError::at("write", &tmp))?;
    Ok(staged)
}

/// Replaces `path` with `bytes` atomically, the new file with `mode` (0600 for a private
/// one): a temporary file in the same directory is written and fsynced, renamed over `path`,
/// and the directory fsynced. A reader sees the old content or the new, never a mix; a crash
/// leaves the old file whole (and at most a temporary file beside it). Whatever was at
/// `path` is replaced, not written through.
pub fn replace(path: &Path, bytes: &[u8], mode: u32) -> Result<(), FileError> {
    staged_beside(path, bytes, mode)?.persist()
}

/// Puts an owner-only file holding `bytes` at `path` if nothing is there: written and
/// fsynced beside it, then hard-linked into place (which fails if anything is at the name:
/// a file, a link, a FIFO), the directory fsynced. Returns whether it did; a reader never
/// sees it half-written.
pub fn install_new(path: &Path, bytes: &[u8]) -> Result<bool, FileError> {
    let staged = staged_beside(path, bytes, OWNER_ONLY)?;
    staged.sync()?;
    let linked = fs::hard_link(staged.path(), path);
    drop(staged);
    match linked {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(false),
        Err(e) => return Err(FileError::at("install", path)(e)),
    }
    sync_dir(parent_of(path))?;
    Ok(true)
}

/// An exclusive `flock` on a lock file, held as long as this value lives (the file is
/// closed on drop). The lock file is made owner-only and never opened through a link.
#[derive(Debug)]
pub struct Lock {
    _file: File,
}

fn open_lock_file(path: &Path) -> Result<File, FileError> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(OWNER_ONLY)
        .custom_flags((OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC).bits() as i32)
        .open(path)
        .map_err(FileError::at("open the lock file", path))
}

impl Lock {
    /// Takes the lock at `path`, waiting as long as another holder keeps it.
    pub fn exclusive(path: &Path) -> Result<Lock, FileError> {
        let file = open_lock_file(path)?;
        loop {
            match flock(&file, FlockOperation::LockExclusive) {
                Ok(()) => return Ok(Lock { _file: file }),
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(FileError::at("lock", path)(e.into())),
            }
        }
    }

    /// Takes the lock at `path`, waiting up to `patience` for a holder that is about to let
    /// go; `None` if it is still held then.
    pub fn exclusive_within(path: &Path, patience: Duration) -> Result<Option<Lock>, FileError> {
        let file = open_lock_file(path)?;
        let deadline = Instant::now() + patience;
        loop {
            match flock(&file, FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => return Ok(Some(Lock { _file: file })),
                Err(rustix::io::Errno::WOULDBLOCK) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(rustix::io::Errno::WOULDBLOCK) => return Ok(None),
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(FileError::at("lock", path)(e.into())),
            }
        }
    }

    /// Whether somebody holds the lock at `path` right now. A missing lock file means nobody.
    pub fn is_held(path: &Path) -> bool {
        let Ok(file) = File::open(path) else {
            return false;
        };
        match flock(&file, FlockOperation::NonBlockingLockShared) {
            Ok(()) => {
                let _ = flock(&file, FlockOperation::Unlock);
                false
            }
            Err(_) => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A name as the writer makes it for `target`: [`staged_name`]'s prefix and suffix around
    /// `random`.
    fn made(target: &str, random: &str) -> String {
        let (prefix, suffix) = staged_name(target);
        format!("{prefix}{random}{suffix}")
    }

    /// The one matcher gives back the target of every name the writer makes (targets with
    /// dots, or named like a leftover themselves, included), so the sweep of one target and
    /// the age-based sweep of any agree on what a leftover is.
    #[test]
    fn the_matcher_knows_each_name_the_writer_makes_and_its_target() {
        for target in [
            "secrets.toml",
            "model.gguf",
            "kv",
            "a.b.c",
            ".hidden",
            "x.tmp",
        ] {
            for random in ["Xy12Ab", "000000", "zzzzzz"] {
                let name = made(target, random);
                assert_eq!(staged_target(&name), Some(target), "{name}");
                assert!(is_staged_name(&name), "{name}");
            }
        }
        // The other target's leftover is a leftover, but not this target's.
        assert_eq!(staged_target(".state.json.Xy12Ab.tmp"), Some("state.json"));
        assert_ne!(
            staged_target(".state.json.Xy12Ab.tmp"),
            Some("secrets.toml")
        );
    }

    /// Names like the writer's that it never makes are no leftover, for any target: no
    /// random part, one of another length or with other characters, no target name, the
    /// lead or the tail missing.
    #[test]
    fn the_matcher_refuses_names_the_writer_never_makes() {
        for other in [
            "secrets.toml",
            ".secrets.toml",
            ".secrets.toml.tmp",
            ".secrets.toml..tmp",
            ".secrets.toml.Xy12A.tmp",
            ".secrets.toml.Xy12Abc.tmp",
            ".secrets.toml.Xy-2Ab.tmp",
            ".secrets.toml.Xy12Ab",
            "secrets.toml.Xy12Ab.tmp",
            "..Xy12Ab.tmp",
            ".Xy12Ab.tmp",
            ".tmp",
            "..x.tmp",
            "x.a.tmp",
            "",
        ] {
            assert_eq!(staged_target(other), None, "{other:?}");
            assert!(!is_staged_name(other), "{other:?}");
        }
    }

    /// The sweep of one target goes by the same matcher: it removes that target's leftovers
    /// and keeps another target's, and names the writer never makes.
    #[test]
    fn the_sweep_removes_by_the_matcher() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("secrets.toml");
        let ours = [
            made("secrets.toml", "Xy12Ab"),
            made("secrets.toml", "q9Q9q9"),
        ];
        let kept = [
            made("state.json", "Xy12Ab"),
            made("secrets.tom", "Xy12Ab"),
            ".secrets.toml.Xy12A.tmp".to_owned(),
            ".secrets.toml.Xy-2Ab.tmp".to_owned(),
            ".secrets.toml..tmp".to_owned(),
        ];
        for name in ours.iter().chain(&kept) {
            fs::write(dir.path().join(name), "x").unwrap();
        }
        assert_eq!(sweep_staged(&target).unwrap(), ours.len());
        for name in &ours {
            assert!(!dir.path().join(name).exists(), "{name}");
        }
        for name in &kept {
            assert!(dir.path().join(name).exists(), "{name}");
        }
    }
}
