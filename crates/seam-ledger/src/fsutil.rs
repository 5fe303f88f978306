//! Owner-only directories and files, directory syncs, atomic replacement and
//! the writer lock.

use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::time::{Duration, Instant};

use rustix::fs::{FlockOperation, flock};

use crate::error::{LedgerError, io_err};

/// fsyncs a directory so that entries created, renamed or removed in it are durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<(), LedgerError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_err("sync directory", dir))
}

/// Creates `dir` (and missing parents) as 0700, and narrows it to 0700 if it
/// exists with wider permissions and belongs to this user.
pub(crate) fn ensure_private_dir(dir: &Path) -> Result<(), LedgerError> {
    DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(io_err("create directory", dir))?;
    narrow_mode(dir, 0o700)
}

/// Removes group and other permission bits from `path` if it has any and this
/// user owns it. Missing files are fine.
pub(crate) fn narrow_mode(path: &Path, mode: u32) -> Result<(), LedgerError> {
    let meta = match fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_err("stat", path)(e)),
    };
    if meta.mode() & 0o077 != 0 && meta.uid() == rustix::process::geteuid().as_raw() {
        fs::set_permissions(path, fs::Permissions::from_mode(mode))
            .map_err(io_err("narrow permissions of", path))?;
    }
    Ok(())
}

/// Creates an empty owner-only file if nothing is at `path`. Returns whether it did.
pub(crate) fn create_private_file(path: &Path) -> Result<bool, LedgerError> {
    match OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(io_err("create", path)(e)),
    }
}

/// Replaces `path` with `bytes` atomically: a temporary file in the same
/// directory is written and fsynced, renamed over `path`, and the directory
/// fsynced. A reader sees the old content or the new, never a mix.
pub(crate) fn replace_atomically(path: &Path, tmp: &Path, bytes: &[u8]) -> Result<(), LedgerError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(tmp)
        .map_err(io_err("create", tmp))?;
    file.write_all(bytes).map_err(io_err("write", tmp))?;
    file.sync_all().map_err(io_err("sync", tmp))?;
    drop(file);
    fs::rename(tmp, path).map_err(io_err("rename into place", path))?;
    sync_dir(dir)
}

/// The writer lock: an exclusive `flock` on `<ledger>/lock`, held as long as
/// this value lives. Only one `Ledger` (in any process) appends at a time.
#[derive(Debug)]
pub(crate) struct WriterLock {
    _file: File,
}

impl WriterLock {
    /// Takes the lock, waiting up to `patience` for a holder that is about to
    /// let go (a `verify` that checks liveness holds it for microseconds).
    pub(crate) fn acquire(path: &Path, patience: Duration) -> Result<WriterLock, LedgerError> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(path)
            .map_err(io_err("open lock file", path))?;
        let deadline = Instant::now() + patience;
        loop {
            match flock(&file, FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => return Ok(WriterLock { _file: file }),
                Err(rustix::io::Errno::WOULDBLOCK) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(rustix::io::Errno::WOULDBLOCK) => {
                    return Err(LedgerError::Busy {
                        path: path.to_owned(),
                    });
                }
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(io_err("lock", path)(e.into())),
            }
        }
    }
}

/// Whether some `Ledger` holds the writer lock at `path` right now. A missing
/// lock file means no writer (e.g. a copied ledger).
pub(crate) fn writer_is_live(path: &Path) -> bool {
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
