//! The agent's wall: Landlock for a whole process that keeps running (the `seam ask` agent),
//! not for a sandbox child. The caller names the places and ports; this module builds the
//! ruleset with raw system calls and restricts the calling process, and removes environment
//! variables — both only while the process has a single thread, since Landlock binds only
//! the calling thread (and what it starts later), and since changing the environment races
//! with any other thread that reads it.
//!
//! Every Landlock right the kernel's ABI knows is handled, so anything no rule allows is
//! denied: no read, write or execute outside the named places; no TCP bind at all and TCP
//! connect only to the named ports (ABI 4); no abstract unix socket outside the process's
//! domain and no signal to a process outside it (ABI 6: the agent stops the gate it started
//! by closing the gate's stdin, not with a signal). Then a seccomp filter
//! ([`crate::seccomp::agent_program`], the same reviewed table as python.run's) refuses the
//! calls the agent never needs and every socket but unix and TCP ones: no UDP, raw, netlink
//! or packet socket, and no io_uring to go around the filter.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use crate::landlock::{self, RulesetAttr};
use crate::sys::{self, Errno};

/// What a process may do beneath one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlaceAccess {
    /// Read files and list directories.
    Read,
    /// Read, and execute the programs there.
    ReadExec,
    /// Everything but device nodes: create, write, rename, remove.
    ReadWrite,
    /// A device file read and written (`/dev/null`).
    Device,
}

/// One place the wall lets through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub path: PathBuf,
    pub access: PlaceAccess,
}

/// The whole wall: places, TCP ports the process may connect to.
#[derive(Debug, Clone, Default)]
pub struct AgentWall {
    pub places: Vec<Place>,
    pub connect_ports: Vec<u16>,
}

/// What the kernel applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WallApplied {
    pub abi: u32,
    /// Filesystem rules (always, when Landlock is there).
    pub filesystem: bool,
    /// TCP bind denied and connect limited to the ports (ABI 4).
    pub network: bool,
    /// Abstract unix sockets outside the domain denied (ABI 6).
    pub abstract_unix_scoped: bool,
    /// No signal reaches a process outside the agent's domain (ABI 6).
    pub signals_scoped: bool,
    /// The agent's seccomp filter is installed.
    pub seccomp: bool,
    /// Places named that do not exist here (nothing to allow).
    pub absent: Vec<PathBuf>,
}

/// Why the wall could not go up.
#[derive(Debug, thiserror::Error)]
pub enum WallError {
    #[error("Landlock is unavailable: {0}")]
    Unavailable(String),
    #[error(
        "the process has {0} threads; Landlock and the environment must be changed while it has one"
    )]
    Threads(usize),
    #[error("cannot count this process's threads: {0}")]
    ThreadCount(String),
    #[error("{what} {}: {errno}", path.display())]
    Rule {
        what: &'static str,
        path: PathBuf,
        errno: Errno,
    },
    #[error("{what}: {errno}")]
    Kernel { what: &'static str, errno: Errno },
}

const FILE_RIGHTS: u64 = landlock::FS_EXECUTE
    | landlock::FS_WRITE_FILE
    | landlock::FS_READ_FILE
    | landlock::FS_TRUNCATE
    | landlock::FS_IOCTL_DEV;
const RULE_NET_PORT: u32 = 2;

impl PlaceAccess {
    fn rights(self) -> u64 {
        match self {
            PlaceAccess::Read => landlock::READ_ONLY,
            PlaceAccess::ReadExec => landlock::READ_EXEC,
            PlaceAccess::ReadWrite => landlock::SCRATCH & !landlock::FS_EXECUTE,
            PlaceAccess::Device => landlock::DEVICE_RW,
        }
    }
}

/// `struct landlock_net_port_attr` (packed in the kernel's header).
#[repr(C, packed)]
#[derive(Debug, Clone, Copy)]
struct NetPortAttr {
    allowed_access: u64,
    port: u64,
}

fn add_net_rule(ruleset: i32, attr: &NetPortAttr) -> Result<(), Errno> {
    // SAFETY: `attr` points to a valid packed `struct landlock_net_port_attr` that outlives the
    // call; the kernel only reads it. A bad fd is reported as an error.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            RULE_NET_PORT,
            attr as *const NetPortAttr,
            0u32,
        )
    };
    if ret < 0 {
        Err(Errno::from_raw_os_error(
            std::io::Error::last_os_error().raw_os_error().unwrap_or(0),
        ))
    } else {
        Ok(())
    }
}

/// The Landlock ABI of the running kernel, or why there is none.
pub fn landlock_abi() -> Result<u32, String> {
    landlock::abi_version()
}

/// How many threads this process has (from `/proc/self/status`).
pub fn thread_count() -> Result<usize, WallError> {
    let status = std::fs::read_to_string("/proc/self/status")
        .map_err(|e| WallError::ThreadCount(e.to_string()))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
        .ok_or_else(|| WallError::ThreadCount("no Threads: line".into()))
}

fn single_threaded() -> Result<(), WallError> {
    match thread_count()? {
        1 => Ok(()),
        n => Err(WallError::Threads(n)),
    }
}

/// Removes the named variables from this process's environment. Refuses unless the process
/// has one thread (then nothing can read the environment while it changes).
pub fn remove_env_vars(names: &[std::ffi::OsString]) -> Result<(), WallError> {
    single_threaded()?;
    for name in names {
        // SAFETY: the process has a single thread (checked just above, and this function
        // starts none), so no other thread reads or writes the environment concurrently.
        unsafe { std::env::remove_var(name) };
    }
    Ok(())
}

/// Sets one variable (e.g. TMPDIR into the wall). Same single-thread rule.
pub fn set_env_var(name: &str, value: &std::ffi::OsStr) -> Result<(), WallError> {
    single_threaded()?;
    // SAFETY: as in `remove_env_vars`: one thread, nothing else touches the environment.
    unsafe { std::env::set_var(name, value) };
    Ok(())
}

impl AgentWall {
    /// Restricts this process (and everything it starts) to the wall. Sets no_new_privs
    /// first, as Landlock requires. Refuses unless the process has one thread.
    pub fn restrict_self(&self) -> Result<WallApplied, WallError> {
        let abi = landlock::abi_version().map_err(WallError::Unavailable)?;
        single_threaded()?;
        let handled = landlock::handled_fs(abi);
        let handled_net = landlock::handled_net(abi);
        let scoped = if abi >= 6 {
            landlock::SCOPE_ABSTRACT_UNIX_SOCKET | landlock::SCOPE_SIGNAL
        } else {
            0
        };
        let attr = RulesetAttr {
            handled_access_fs: handled,
            handled_access_net: handled_net,
            scoped,
        };
        let size = if abi >= 6 {
            24
        } else if abi >= 4 {
            16
        } else {
            8
        };
        let ruleset =
            sys::landlock_create_ruleset(&attr, size).map_err(|errno| WallError::Kernel {
                what: "creating the Landlock ruleset",
                errno,
            })?;
        let result = self.fill_and_restrict(ruleset, handled, handled_net != 0);
        sys::close(ruleset);
        let absent = result?;
        // no_new_privs is set (Landlock needed it), so an unprivileged filter installs.
        let seccomp = crate::seccomp::SUPPORTED && sys::seccomp_available();
        if seccomp {
            sys::seccomp_install(&crate::seccomp::agent_program()).map_err(|errno| {
                WallError::Kernel {
                    what: "installing the agent's seccomp filter",
                    errno,
                }
            })?;
        }
        Ok(WallApplied {
            abi,
            filesystem: true,
            network: handled_net != 0,
            abstract_unix_scoped: scoped != 0,
            signals_scoped: scoped & landlock::SCOPE_SIGNAL != 0,
            seccomp,
            absent,
        })
    }

    fn fill_and_restrict(
        &self,
        ruleset: i32,
        handled: u64,
        net: bool,
    ) -> Result<Vec<PathBuf>, WallError> {
        let mut absent = Vec::new();
        for place in &self.places {
            let Ok(meta) = std::fs::metadata(&place.path) else {
                absent.push(place.path.clone());
                continue;
            };
            let mut rights = place.access.rights() & handled;
            if !meta.is_dir() {
                rights &= FILE_RIGHTS;
            }
            let path = c_path(&place.path)?;
            let fd = sys::open_path(&path).map_err(|errno| WallError::Rule {
                what: "opening",
                path: place.path.clone(),
                errno,
            })?;
            let attr = landlock::PathBeneathAttr {
                allowed_access: rights,
                parent_fd: fd,
            };
            let added = sys::landlock_add_rule(ruleset, 1, &attr);
            sys::close(fd);
            added.map_err(|errno| WallError::Rule {
                what: "adding a Landlock rule for",
                path: place.path.clone(),
                errno,
            })?;
        }
        if net {
            for port in &self.connect_ports {
                add_net_rule(
                    ruleset,
                    &NetPortAttr {
                        allowed_access: landlock::NET_CONNECT_TCP,
                        port: u64::from(*port),
                    },
                )
                .map_err(|errno| WallError::Kernel {
                    what: "adding a Landlock rule for a TCP port",
                    errno,
                })?;
            }
        }
        rustix::thread::set_no_new_privs(true).map_err(|errno| WallError::Kernel {
            what: "setting no_new_privs",
            errno,
        })?;
        sys::landlock_restrict_self(ruleset).map_err(|errno| WallError::Kernel {
            what: "restricting the process with Landlock",
            errno,
        })?;
        Ok(absent)
    }
}

fn c_path(p: &Path) -> Result<CString, WallError> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| WallError::Rule {
        what: "a NUL byte in",
        path: p.to_path_buf(),
        errno: Errno::INVAL,
    })
}

/// Tries to put `byte` into the input of the terminal `fd` refers to (`TIOCSTI`), as a
/// keystroke would. For the attack test only: the agent's seccomp filter must refuse it.
pub fn type_into_terminal(fd: std::os::fd::BorrowedFd<'_>, byte: u8) -> std::io::Result<()> {
    sys::tiocsti(std::os::fd::AsRawFd::as_raw_fd(&fd), byte).map_err(std::io::Error::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn net_port_attr_has_the_kernel_layout() {
        assert_eq!(std::mem::size_of::<NetPortAttr>(), 16);
    }

    #[test]
    fn read_write_never_executes() {
        assert_eq!(PlaceAccess::ReadWrite.rights() & landlock::FS_EXECUTE, 0);
        assert_eq!(PlaceAccess::Read.rights() & landlock::FS_EXECUTE, 0);
        assert_ne!(PlaceAccess::ReadExec.rights() & landlock::FS_EXECUTE, 0);
    }

    #[test]
    fn the_thread_count_is_read() {
        assert!(thread_count().unwrap() >= 1);
    }
}
