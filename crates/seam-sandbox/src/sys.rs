//! The raw system calls the sandbox needs and no safe wrapper offers, each in one small function
//! with the reason it is sound. Everything else goes through rustix's safe calls.
//!
//! Several of these run in a process forked from the (multi-threaded) gate, before `execve`:
//! there only async-signal-safe work is allowed — system calls, no allocation, no locks — and
//! every function here keeps to that.

use std::ffi::{CStr, c_char, c_int, c_long};
use std::os::fd::RawFd;

pub use rustix::io::Errno;

use crate::landlock::{PathBeneathAttr, RulesetAttr};

/// The errno of the last failed call. `last_os_error` only reads errno (no allocation).
fn last_errno() -> Errno {
    Errno::from_raw_os_error(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
}

fn check(ret: c_long) -> Result<c_long, Errno> {
    if ret < 0 { Err(last_errno()) } else { Ok(ret) }
}

fn check_int(ret: c_int) -> Result<c_int, Errno> {
    if ret < 0 { Err(last_errno()) } else { Ok(ret) }
}

/// `landlock_create_ruleset(NULL, 0, flags)`: the ABI version query.
pub fn landlock_create_ruleset_version(flags: u32) -> Result<c_long, Errno> {
    // SAFETY: with a NULL attr and size 0 the kernel reads no memory; the call only returns
    // a number (the ABI version) or an error.
    check(unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<RulesetAttr>(),
            0usize,
            flags,
        )
    })
}

/// `landlock_create_ruleset(attr, size, 0)`: a new ruleset fd (close-on-exec).
pub fn landlock_create_ruleset(attr: &RulesetAttr, size: usize) -> Result<RawFd, Errno> {
    debug_assert!(size <= std::mem::size_of::<RulesetAttr>());
    // SAFETY: `attr` is a valid, initialised `struct landlock_ruleset_attr` for the duration of
    // the call, and `size` is at most its size, so the kernel reads only memory we own.
    check(unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            attr as *const _,
            size,
            0u32,
        )
    })
    .map(|fd| fd as RawFd)
}

/// `landlock_add_rule(ruleset, rule_type, attr, 0)`.
pub fn landlock_add_rule(
    ruleset: RawFd,
    rule_type: u32,
    attr: &PathBeneathAttr,
) -> Result<(), Errno> {
    // SAFETY: `attr` points to a valid packed `struct landlock_path_beneath_attr` that outlives
    // the call; the kernel only reads it. Bad fds are reported as errors, not UB.
    check(unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            rule_type,
            attr as *const _,
            0u32,
        )
    })
    .map(drop)
}

/// `landlock_restrict_self(ruleset, 0)`.
pub fn landlock_restrict_self(ruleset: RawFd) -> Result<(), Errno> {
    // SAFETY: takes two integers and touches no memory of ours.
    check(unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32) }).map(drop)
}

/// `open(path, O_PATH | O_CLOEXEC)`: a handle to name a place, not to read it.
pub fn open_path(path: &CStr) -> Result<RawFd, Errno> {
    // SAFETY: `path` is a valid NUL-terminated string for the duration of the call.
    check_int(unsafe { libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) })
}

/// `open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)`: a new file.
pub fn create_file(path: &CStr, mode: libc::mode_t) -> Result<RawFd, Errno> {
    // SAFETY: `path` is a valid NUL-terminated string; `mode` is passed by value as the
    // variadic third argument `open` expects with O_CREAT.
    check_int(unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            mode as libc::c_uint,
        )
    })
}

/// `close(fd)`, errors ignored (the fd is gone either way on Linux).
pub fn close(fd: RawFd) {
    // SAFETY: closing an integer fd touches no memory; callers pass fds they own and never use
    // again.
    unsafe {
        libc::close(fd);
    }
}

/// Writes all of `bytes` to `fd`.
pub fn write_all(fd: RawFd, mut bytes: &[u8]) -> Result<(), Errno> {
    while !bytes.is_empty() {
        // SAFETY: `bytes` is a valid readable slice of `bytes.len()` bytes.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n < 0 {
            let e = last_errno();
            if e == Errno::INTR {
                continue;
            }
            return Err(e);
        }
        bytes = &bytes[n as usize..];
    }
    Ok(())
}

/// `read(fd, buf)`, retried on EINTR.
pub fn read(fd: RawFd, buf: &mut [u8]) -> Result<usize, Errno> {
    loop {
        // SAFETY: `buf` is a valid writable slice of `buf.len()` bytes.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = last_errno();
        if e != Errno::INTR {
            return Err(e);
        }
    }
}

/// `struct clone_args` (the first version: 64 bytes).
#[repr(C)]
#[derive(Debug, Default)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
}

/// Which side of a fork this is.
#[derive(Debug)]
pub enum Forked {
    Child,
    Parent { pid: libc::pid_t, pidfd: RawFd },
}

/// `clone3` without `CLONE_VM`: a fork into the namespaces in `flags`, with a pidfd.
///
/// # Safety
/// Like `fork` in a multi-threaded process: in the child only the calling thread exists, so
/// the child must keep to async-signal-safe work (system calls, no allocation, no locks) until
/// it calls `execve` or `_exit`, and must never return into code that might do otherwise.
pub unsafe fn clone3_with_pidfd(flags: u64) -> Result<Forked, Errno> {
    let mut pidfd: c_int = -1;
    let args = CloneArgs {
        flags: flags | libc::CLONE_PIDFD as u64,
        pidfd: &mut pidfd as *mut c_int as u64,
        exit_signal: libc::SIGCHLD as u64,
        ..CloneArgs::default()
    };
    // SAFETY: `args` is a valid `struct clone_args` of the size given; `pidfd` outlives the
    // call. Without CLONE_VM and with no stack given the child runs on a copy of this stack, as
    // after `fork`. The caller upholds the async-signal-safety contract above.
    let ret = check(unsafe {
        libc::syscall(
            libc::SYS_clone3,
            &args as *const CloneArgs,
            std::mem::size_of::<CloneArgs>(),
        )
    })?;
    if ret == 0 {
        Ok(Forked::Child)
    } else {
        Ok(Forked::Parent {
            pid: ret as libc::pid_t,
            pidfd,
        })
    }
}

/// The legacy `clone(SIGCHLD)`: a plain fork with no glibc fork handlers (they take locks a
/// forked child of a multi-threaded process may find held forever). Used inside the sandbox,
/// where seccomp answers `clone3` with ENOSYS.
///
/// # Safety
/// As [`clone3_with_pidfd`].
pub unsafe fn fork_raw() -> Result<Option<libc::pid_t>, Errno> {
    // SAFETY: `clone` with only an exit signal and no stack is `fork`: the child gets a copy of
    // the address space and this stack; the other pointer arguments are NULL/unused. The caller
    // upholds the async-signal-safety contract.
    let ret = check(unsafe {
        libc::syscall(
            libc::SYS_clone,
            libc::SIGCHLD as c_long,
            0usize,
            0usize,
            0usize,
            0usize,
        )
    })?;
    Ok(if ret == 0 {
        None
    } else {
        Some(ret as libc::pid_t)
    })
}

/// `ioctl(fd, TIOCSTI, &byte)`: one byte into a terminal's input queue.
pub fn tiocsti(fd: RawFd, byte: u8) -> Result<(), Errno> {
    // SAFETY: TIOCSTI reads one byte through the pointer, which points at a live local.
    check_int(unsafe { libc::ioctl(fd, libc::TIOCSTI, &byte as *const u8) }).map(drop)
}

/// Puts `src` at `dst` without close-on-exec (for stdin/stdout/stderr).
pub fn dup_onto(src: RawFd, dst: RawFd) -> Result<(), Errno> {
    if src == dst {
        // SAFETY: fcntl on an integer fd with an integer argument touches no memory.
        return check_int(unsafe { libc::fcntl(src, libc::F_SETFD, 0) }).map(drop);
    }
    // SAFETY: dup3 takes integers only; `dst` is one of 0..=2, which this process replaces.
    check_int(unsafe { libc::dup3(src, dst, 0) }).map(drop)
}

/// Closes every fd in `first..=last`.
pub fn close_range(first: u32, last: u32) -> Result<(), Errno> {
    if first > last {
        return Ok(());
    }
    // SAFETY: takes integers only; the fds closed are this process's own and are not used
    // afterwards (callers pass ranges that hold nothing they still need).
    check(unsafe { libc::syscall(libc::SYS_close_range, first, last, 0u32) }).map(drop)
}

/// Unblocks every signal and gives SIGPIPE its default action back (the Rust runtime ignores
/// it, and an ignored signal stays ignored across `execve`).
pub fn reset_signals() -> Result<(), Errno> {
    // SAFETY: `set` is a valid sigset_t initialised by sigemptyset before use; sigprocmask and
    // signal are system-call wrappers that are async-signal-safe.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        check_int(libc::sigprocmask(
            libc::SIG_SETMASK,
            &set,
            std::ptr::null_mut(),
        ))?;
        if libc::signal(libc::SIGPIPE, libc::SIG_DFL) == libc::SIG_ERR {
            return Err(last_errno());
        }
    }
    Ok(())
}

/// Installs a seccomp filter (no_new_privs must already be set).
pub fn seccomp_install(program: &[libc::sock_filter]) -> Result<(), Errno> {
    let len = u16::try_from(program.len()).map_err(|_| Errno::INVAL)?;
    let prog = libc::sock_fprog {
        len,
        filter: program.as_ptr().cast_mut(),
    };
    // SAFETY: `prog` points to `len` valid sock_filter instructions that outlive the call; the
    // kernel copies the program and does not keep the pointer.
    check(unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            0u32,
            &prog as *const libc::sock_fprog,
        )
    })
    .map(drop)
}

/// Is seccomp filtering available? (`prctl(PR_GET_SECCOMP)` succeeds when seccomp is built in.)
pub fn seccomp_available() -> bool {
    // SAFETY: PR_GET_SECCOMP takes no pointers and returns the current mode.
    unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 }
}

/// `execve`; returns only on failure.
pub fn execve(path: &CStr, argv: &[*const c_char], envp: &[*const c_char]) -> Errno {
    debug_assert!(argv.last().is_some_and(|p| p.is_null()));
    debug_assert!(envp.last().is_some_and(|p| p.is_null()));
    // SAFETY: `path` is NUL-terminated; `argv` and `envp` are NULL-terminated arrays of
    // pointers to NUL-terminated strings owned by the caller's plan, alive for the call.
    unsafe {
        libc::execve(path.as_ptr(), argv.as_ptr(), envp.as_ptr());
    }
    last_errno()
}

/// `_exit(code)`: no atexit handlers, no flushing — right after a fork.
pub fn exit(code: c_int) -> ! {
    // SAFETY: `_exit` ends the process immediately; it is async-signal-safe.
    unsafe { libc::_exit(code) }
}

/// `waitpid(-1, &status, __WALL)`: any child.
pub fn wait_any() -> Result<(libc::pid_t, c_int), Errno> {
    let mut status: c_int = 0;
    loop {
        // SAFETY: `status` is a valid c_int the kernel writes the status into.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::__WALL) };
        if pid >= 0 {
            return Ok((pid, status));
        }
        let e = last_errno();
        if e != Errno::INTR {
            return Err(e);
        }
    }
}
