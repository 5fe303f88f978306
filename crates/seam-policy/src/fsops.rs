//! The few system calls admission stands on: open a handle that reads nothing, ask the kernel
//! where that handle really is, and reopen exactly that file for reading.

use std::fs::{File, Metadata};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rustix::fs::{CWD, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;
use rustix::process::Pid;

/// A handle on what `path` names, following ordinary links but never a `/proc` magic link,
/// opened with `O_PATH`: nothing is read, no device driver is asked, a FIFO cannot block.
/// Falls back to plain `openat` where `openat2` is unavailable (the caller verifies the handle
/// afterwards either way).
pub(crate) fn open_path_handle(path: &Path) -> Result<File, Errno> {
    let flags = OFlags::PATH | OFlags::CLOEXEC;
    let fd: OwnedFd =
        match rustix::fs::openat2(CWD, path, flags, Mode::empty(), ResolveFlags::NO_MAGICLINKS) {
            Err(Errno::NOSYS | Errno::PERM) => rustix::fs::openat(CWD, path, flags, Mode::empty())?,
            other => other?,
        };
    Ok(File::from(fd))
}

/// `/proc/self/fd` of this process, opened once (`O_PATH`), with the pid it belongs to: after a
/// `fork` the child must not look at its parent's descriptor table, so the pid is checked.
static PROC_SELF_FD: Mutex<Option<(Pid, Arc<OwnedFd>)>> = Mutex::new(None);

fn proc_self_fd() -> io::Result<Arc<OwnedFd>> {
    let pid = rustix::process::getpid();
    let mut cached = PROC_SELF_FD.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((owner, dir)) = cached.as_ref()
        && *owner == pid
    {
        return Ok(Arc::clone(dir));
    }
    let dir = Arc::new(rustix::fs::open(
        "/proc/self/fd",
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?);
    *cached = Some((pid, Arc::clone(&dir)));
    Ok(dir)
}

/// The name of `fd` in `/proc/self/fd`.
fn fd_name(fd: BorrowedFd<'_>) -> String {
    fd.as_raw_fd().to_string()
}

/// Where the kernel says an open handle is (`/proc/self/fd/N`): links resolved, `..` applied.
/// Fails when `/proc` is missing or the answer is not a path.
pub(crate) fn handle_real_path(handle: &File) -> io::Result<PathBuf> {
    let target = rustix::fs::readlinkat(&*proc_self_fd()?, fd_name(handle.as_fd()), Vec::new())?;
    let bytes = target.into_bytes();
    if bytes.first() != Some(&b'/') {
        return Err(io::Error::other(format!(
            "the kernel names it \"{}\", which is not a path",
            String::from_utf8_lossy(&bytes)
        )));
    }
    Ok(PathBuf::from(std::ffi::OsString::from_vec(bytes)))
}

/// Opens the very file `handle` refers to for reading (through its `/proc/self/fd` entry), and
/// checks that it is still that file. `O_NONBLOCK` and `O_NOCTTY` are set for the open and
/// cleared after it; the caller has made sure it is a regular file.
pub(crate) fn reopen_for_reading(
    handle: &File,
    expected: &Metadata,
) -> io::Result<(File, Metadata)> {
    let fd = rustix::fs::openat(
        &*proc_self_fd()?,
        fd_name(handle.as_fd()),
        OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK,
        Mode::empty(),
    )?;
    let file = File::from(fd);
    let meta = file.metadata()?;
    if (meta.dev(), meta.ino()) != (expected.dev(), expected.ino()) || !meta.file_type().is_file() {
        return Err(io::Error::other(
            "the file changed while it was being opened",
        ));
    }
    let flags = rustix::fs::fcntl_getfl(&file)?;
    rustix::fs::fcntl_setfl(&file, flags - OFlags::NONBLOCK)?;
    Ok((file, meta))
}

/// Opens `path` for reading only if it is a regular file, without blocking on a FIFO or
/// opening a device (for the policy file, which the owner names).
pub(crate) fn open_regular_for_reading(path: &Path) -> io::Result<(File, Metadata)> {
    let handle = open_path_handle(path)?;
    let meta = handle.metadata()?;
    if !meta.file_type().is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a regular file (it is {})", kind_of(&meta)),
        ));
    }
    reopen_for_reading(&handle, &meta)
}

/// "a directory", "a FIFO", … for messages.
pub(crate) fn kind_of(meta: &Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_file() {
        "a regular file"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symbolic link"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else {
        "not a regular file"
    }
}

/// The name of the kernel pseudo file system `handle` lies in (procfs, sysfs, …), if it does.
/// A failed `fstatfs` counts as one: the caller refuses what it cannot classify.
pub(crate) fn kernel_file_system(handle: &File) -> Option<&'static str> {
    let Ok(stat) = rustix::fs::fstatfs(handle) else {
        return Some("a file system seam could not identify");
    };
    // `f_type` is a `long` on most targets; the magic numbers are 32-bit.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let magic = stat.f_type as u32;
    Some(match magic {
        0x9fa0 => "procfs (/proc)",
        0x6265_6572 => "sysfs (/sys)",
        0x6462_6720 => "debugfs",
        0x7472_6163 => "tracefs",
        0x7363_6673 => "securityfs",
        0xde5e_81e4 => "efivarfs",
        0xcafe_4a11 => "bpffs",
        0x6265_6570 => "configfs",
        _ => return None,
    })
}
