//! What a run is asked to do ([`Job`], [`Limits`]) and what it did ([`RunOutput`]).

use std::time::Duration;

use serde::Serialize;

/// Most bytes of code (it is passed as one argument: the kernel caps one at 128 KiB).
pub const MAX_CODE_BYTES: usize = 100 * 1024;
/// Most files a call may put into scratch.
pub const MAX_FILES: usize = 64;
/// Longest file name (a relative path inside scratch).
pub const MAX_FILE_NAME: usize = 200;
/// Most files a run may be shown read-only ([`Job::read_only`]).
pub const MAX_READ_ONLY_FILES: usize = 16;
/// Most bytes of the files a run is shown read-only, in all.
pub const MAX_READ_ONLY_BYTES: u64 = 8 << 20;
/// Longest name of a file shown read-only.
pub const MAX_READ_ONLY_NAME: usize = 1024;

/// The bounds of one run. Every one is enforced by the kernel (rlimits, tmpfs size) or by the
/// gate's wall clock, none by the sandboxed code's good will.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time; at the end the whole process tree is killed.
    pub wall: Duration,
    /// CPU seconds of each process (`RLIMIT_CPU`).
    pub cpu_seconds: u64,
    /// Address space of each process, bytes (`RLIMIT_AS`).
    pub address_space: u64,
    /// Processes (and threads) alive at once in the sandbox (`RLIMIT_NPROC`).
    pub processes: u64,
    /// Largest file a process may write, bytes (`RLIMIT_FSIZE`).
    pub file_size: u64,
    /// Open files per process (`RLIMIT_NOFILE`).
    pub open_files: u64,
    /// Bytes kept of stdout and of stderr, each; the rest is cut (and said).
    pub output_bytes: usize,
    /// Size of the scratch directory (a tmpfs), bytes; `/dev/shm` gets a quarter of it.
    pub scratch_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            wall: Duration::from_secs(10),
            cpu_seconds: 10,
            address_space: 1 << 30,
            processes: 64,
            file_size: 16 << 20,
            open_files: 256,
            output_bytes: 256 * 1024,
            scratch_bytes: 64 << 20,
        }
    }
}

impl Limits {
    /// The defaults with this wall-clock timeout (CPU time follows it, rounded up).
    pub fn with_wall(wall: Duration) -> Limits {
        Limits {
            wall,
            cpu_seconds: wall.as_secs_f64().ceil().max(1.0) as u64,
            ..Limits::default()
        }
    }
}

/// A text file put into scratch before the code runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScratchFile {
    /// Relative to scratch (`data.csv`, `pkg/mod.py`); no `..`, no absolute path.
    pub name: String,
    pub text: String,
}

/// A file the code is shown read-only: bytes the caller already read, at the name the code
/// uses for them.
///
/// The name is taken as the kernel would take it from the working directory (scratch): a
/// relative name lands under scratch, an absolute one at that place of the sandbox's own root
/// (`/tmp` is scratch there too). `.` and `..` are walked as written, and every directory the
/// walk passes through is made, so `open('notes/../data/runs.csv')` finds the file too. A name
/// that would land on the sandbox's own system directories (`/usr`, `/etc`, `/dev`, the Python
/// prefix…) is refused ([`crate::Sandbox::read_only_target`] says so beforehand).
///
/// The bytes are copied into the sandbox's root tmpfs, which turns read-only before anything
/// untrusted runs; one under scratch is a read-only bind mount of that copy. Nothing of the
/// machine's file is bound: the sandbox sees the content the caller read, not the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOnlyFile {
    pub name: String,
    pub content: Vec<u8>,
}

/// One run of Python code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    /// Run as `python3 -c CODE`.
    pub code: String,
    /// Python's stdin.
    pub stdin: Vec<u8>,
    /// Put into scratch (Python's working directory) first.
    pub files: Vec<ScratchFile>,
    /// Shown read-only, each at its name (at most [`MAX_READ_ONLY_FILES`], of
    /// [`MAX_READ_ONLY_BYTES`] in all).
    pub read_only: Vec<ReadOnlyFile>,
    pub limits: Limits,
}

impl Job {
    pub fn new(code: impl Into<String>) -> Job {
        Job {
            code: code.into(),
            stdin: Vec::new(),
            files: Vec::new(),
            read_only: Vec::new(),
            limits: Limits::default(),
        }
    }
}

/// A limit that cut a run short.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitHit {
    /// stdout was longer than the cap: cut there, and the pipe closed.
    Stdout,
    /// stderr was longer than the cap.
    Stderr,
    /// The CPU-time limit (the process got SIGXCPU, or SIGKILL at the hard limit).
    CpuTime,
    /// The wall-clock timeout: the whole process tree was killed.
    WallTime,
}

/// What a run did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunOutput {
    /// Python's exit status, when it exited (not when it was killed).
    pub exit_code: Option<i32>,
    /// The signal that ended Python, when one did.
    pub signal: Option<i32>,
    /// At most [`Limits::output_bytes`], invalid UTF-8 replaced.
    pub stdout: String,
    pub stderr: String,
    pub stdout_cut: bool,
    pub stderr_cut: bool,
    /// The wall-clock timeout ended the run.
    pub timed_out: bool,
    /// Every limit that cut the run short.
    pub limit_hit: Vec<LimitHit>,
    /// Ran behind every wall (false only when the policy allowed an unsandboxed run).
    pub sandboxed: bool,
    /// Wall time of the run in milliseconds.
    pub wall_ms: u64,
}
