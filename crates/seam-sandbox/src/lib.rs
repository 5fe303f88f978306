//! Kernel walls for untrusted code: namespaces, Landlock, seccomp, rlimits.
//!
//! This crate owns one thing: running a piece of Python code the model wrote so that it can
//! touch nothing it was not given. [`Sandbox::run`] takes a [`Job`] (code, stdin, files for
//! scratch, files shown read-only, [`Limits`]) and returns a [`RunOutput`] (`exit_code`, `stdout`, `stderr`, cut
//! flags, `timed_out`, `limit_hit`). It is the only crate of seam that holds `unsafe`.
//!
//! # How a run is contained
//! The gate forks (`clone3`, with a pidfd) straight into fresh **user, PID, network, mount,
//! IPC, UTS and cgroup namespaces**. The child is PID 1 of its namespace; it
//! - waits for the gate to write the user namespace's id maps (an ordinary owner's own ids →
//!   the sandbox's uid 1000; a root gate's sandbox user is the overflow id 65534, which owns
//!   nothing);
//! - builds a **new root on a tmpfs**: `/usr` (and the top-level links into it), the Python
//!   prefix (resolved at startup, so a pyenv install under `/root` shows that one directory
//!   and nothing else of `/root`), `/etc/ld.so.cache`, all **read-only**; `/dev/null`,
//!   `/dev/zero`, `/dev/random`, `/dev/urandom`, a small `/dev/shm` tmpfs (for
//!   `multiprocessing`); a synthetic `/etc/passwd`; a **scratch
//!   tmpfs** of bounded size at `/scratch` (also `/tmp`, `HOME`, the working directory) that
//!   holds the call's files; no `/proc`, `/sys`, `/home`, `/root` or seam's home. The files
//!   a call is shown read-only ([`ReadOnlyFile`]: bytes the gate already read, never a bind of
//!   the machine's file) land at the name the code uses: one in the root is a copy in the root
//!   tmpfs (Landlock grants reading that file and nothing beside it), one under scratch a
//!   read-only bind of a copy on a staging tmpfs that is read-only and then detached. It
//!   pivots into it, detaches the machine's root and makes the new root read-only;
//! - drops to the sandbox's user (for a root gate), sets **rlimits** (CPU time, address space,
//!   processes, file size, open files, no core, no locked memory);
//! - restricts itself with **Landlock** (read/execute the system and Python directories,
//!   read/write scratch and the device files, nothing else; no TCP bind/connect from ABI 4;
//!   no signals or abstract unix sockets outside from ABI 6) and a **seccomp** filter (the
//!   reviewed table in [`seccomp::DENIED`]: ptrace, mount, keyctl, bpf, perf_event_open,
//!   kexec, modules, io_uring, namespace changes…; sockets are unix-only);
//! - forks Python (`python3 -E -s -B -u -c CODE`, an environment of PATH, HOME, TMPDIR and
//!   the locale only, fds 0–2 and nothing else) and reaps until Python ends, then exits,
//!   which makes the kernel kill everything left in the namespace.
//!
//! The gate reads stdout and stderr (each capped, the cut said), and at the wall-clock
//! deadline kills PID 1 through its pidfd: the kernel then kills the whole process tree (and
//! if the gate itself dies, PID 1 gets SIGKILL as its parent-death signal). The
//! network namespace has only a loopback device that is down: nothing to connect to.
//!
//! # Why our own namespaces, not bubblewrap
//! One `clone3` with every namespace flag, a dozen mount calls, Landlock and seccomp cost
//! about 2.5 ms of CPU per run on the development machine (bench `print1_cpu_time`, against
//! bare `python3 -c 'print(1)'`); an extra `execve` of a helper binary (bwrap) costs more, is
//! one more package the machine must have, and would still need our own Landlock and seccomp
//! step inside it.
//! Doing it here keeps the whole wall in one reviewed place. The price is that the child of
//! the multi-threaded gate must be async-signal-safe until `execve`: the gate prepares every
//! string and table first (`child::ChildPlan`), and the child makes raw system calls only
//! (see `sys`). Landlock is driven by raw system calls for the same reason (the `landlock`
//! crate allocates), and the seccomp program is built here from the table rather than by
//! `seccompiler`, so the filter is one table plus one fixed program shape anyone can review.
//!
//! # The agent's wall
//! [`agent_wall`] is a second, smaller use of the same kernel feature: Landlock for a whole
//! process that keeps running (`seam ask`'s agent), with the places and TCP ports named by the
//! caller (which places and ports is seam-confine's decision, not this crate's), and the
//! environment changed only while the process has one thread. It shares the
//! raw Landlock calls with the sandbox and nothing else. [`attempts`] is what the attack test
//! tries from inside that wall (a read, a connection, a program, a signal, a keystroke into the
//! terminal…), each with the kernel's answer; seam never makes those attempts itself.
//!
//! # Honest degradation
//! [`Protections::probe`] asks the kernel (by trying) which walls it can raise; `seam doctor`
//! prints it. If a required one is missing, [`Sandbox::run`] refuses with
//! [`SandboxError::Unavailable`] naming it — it never runs unsandboxed on its own.
//! [`Sandbox::run_unsandboxed`] exists for an owner whose policy says so, and its output says
//! `sandboxed: false`.
//!
//! # What this crate must never do
//! Run code without every required wall unless asked for an unsandboxed run by name; let a
//! descriptor of the gate reach Python; show the sandbox a directory of the machine other than
//! those listed above; allocate or take a lock between the fork and `execve`; leave a process
//! or a scratch file behind after [`Sandbox::run`] returns; print.

pub mod agent_wall;
pub mod attempts;
mod child;
mod job;
mod landlock;
mod probe;
mod python;
mod read_only;
mod run;
pub mod seccomp;
mod sys;
mod unsandboxed;

use std::path::Path;
use std::sync::OnceLock;

pub use child::Step;
pub use job::{
    Job, LimitHit, Limits, MAX_CODE_BYTES, MAX_FILE_NAME, MAX_FILES, MAX_READ_ONLY_BYTES,
    MAX_READ_ONLY_FILES, MAX_READ_ONLY_NAME, ReadOnlyFile, RunOutput, ScratchFile,
};
pub use probe::{Protection, Protections};
pub use python::PythonInstall;

/// A run that could not happen, or whose sandbox could not be built. An I/O cause is part of
/// the message and not a `source()`: python.run refuses with the message alone.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// A required wall is missing on this machine: nothing ran.
    #[error(
        "the sandbox is not available on this machine, so nothing ran: {}",
        .missing.iter().map(|p| format!("{} is unavailable ({})", p.name, p.detail)).collect::<Vec<_>>().join("; ")
    )]
    Unavailable { missing: Vec<Protection> },
    /// The job itself is malformed (a file name, a size).
    #[error("{0}")]
    InvalidJob(String),
    /// Building the sandbox failed in its first process; nothing untrusted ran.
    #[error("building the sandbox failed while {}: {errno}", .step.describe())]
    Setup {
        step: Step,
        errno: rustix::io::Errno,
    },
    #[error("{what}: {cause}")]
    Io {
        what: &'static str,
        cause: std::io::Error,
    },
}

/// The sandbox of this machine: its probed protections and its filesystem layout.
#[derive(Debug)]
pub struct Sandbox {
    protections: Protections,
    layout: Option<run::Layout>,
}

impl Sandbox {
    /// Probes the machine, with `python` (a name on the PATH or a path) as the interpreter.
    pub fn detect(python: &Path) -> Sandbox {
        Sandbox::from_protections(Protections::probe(python))
    }

    /// A sandbox from a probe already made. A wall marked missing in it makes every run
    /// refuse (how a test sees the refusal of a machine without that wall).
    pub fn from_protections(protections: Protections) -> Sandbox {
        let layout = protections.python.as_ref().ok().map(run::Layout::new);
        Sandbox {
            protections,
            layout,
        }
    }

    /// The sandbox for `python3` on the PATH, probed once per process.
    pub fn shared() -> &'static Sandbox {
        static SHARED: OnceLock<Sandbox> = OnceLock::new();
        SHARED.get_or_init(|| Sandbox::detect(Path::new("python3")))
    }

    /// What this machine can do.
    pub fn protections(&self) -> &Protections {
        &self.protections
    }

    /// Runs `job` behind every wall, or refuses naming the walls that are missing.
    /// Blocking: call it from a blocking thread.
    pub fn run(&self, job: &Job) -> Result<RunOutput, SandboxError> {
        let missing = self.protections.missing();
        let (Some(layout), Some(abi), true) = (
            &self.layout,
            self.protections.landlock_abi,
            missing.is_empty(),
        ) else {
            return Err(SandboxError::Unavailable {
                missing: missing.into_iter().cloned().collect(),
            });
        };
        run::run_sandboxed(layout, abi, job)
    }

    /// Runs `job` without the walls (only for an owner whose policy says so): empty
    /// environment, scratch directory, rlimits, capped output, timeout — nothing more.
    pub fn run_unsandboxed(&self, job: &Job) -> Result<RunOutput, SandboxError> {
        match &self.protections.python {
            Ok(python) => unsandboxed::run_unsandboxed(python, job),
            Err(_) => Err(SandboxError::Unavailable {
                missing: self
                    .protections
                    .list
                    .iter()
                    .filter(|p| p.name == "python3")
                    .cloned()
                    .collect(),
            }),
        }
    }

    /// Where a [`ReadOnlyFile`] named `name` would land inside the sandbox (an absolute path
    /// of its view), or why it cannot be shown there (it would lie on the sandbox's own
    /// system, Python or scratch directories, or names a directory).
    pub fn read_only_target(&self, name: &str) -> Result<String, String> {
        match &self.layout {
            Some(layout) => layout.read_only_target(name),
            None => Err("python3 is not available on this machine".to_owned()),
        }
    }

    /// Is every required wall up?
    pub fn available(&self) -> bool {
        self.layout.is_some() && self.protections.missing().is_empty()
    }
}
