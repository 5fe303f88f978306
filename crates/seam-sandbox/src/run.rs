//! The gate's side of a run: the plan, the fork into fresh namespaces, the id maps, and the
//! collection of output under the wall clock.

use std::ffi::CString;
use std::io::{Seek, Write};
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags};
use rustix::process::{Resource, Signal, WaitId, WaitIdOptions};

use crate::child::{self, Bind, ChildPlan, Step};
use crate::job::{Job, LimitHit, MAX_CODE_BYTES, MAX_FILE_NAME, MAX_FILES, RunOutput};
use crate::landlock::{self, LandlockPlan, Rule};
use crate::python::PythonInstall;
use crate::read_only;
use crate::sys::{self, Errno, Forked};
use crate::{SandboxError, probe, seccomp};

/// The uid and gid the code runs as inside its user namespace.
pub const SANDBOX_ID: u32 = 1000;
/// The machine's uid/gid the sandbox's user is when the gate runs as root (the overflow id:
/// it owns nothing).
const NOBODY: u32 = 65534;
/// How long output is still read after the sandbox ended (its processes are gone by then; the
/// bound only keeps a bug from becoming a hang).
const DRAIN_GRACE: Duration = Duration::from_secs(1);

/// The sandbox's filesystem view, worked out once from the machine and the Python install.
#[derive(Debug, Clone)]
pub struct Layout {
    dirs: Vec<String>,
    /// (machine path, path relative to the new root, file, device)
    binds: Vec<(PathBuf, String, bool, bool)>,
    symlinks: Vec<(PathBuf, String)>,
    /// (absolute path inside, rights, file)
    rules: Vec<(String, u64, bool)>,
    path_env: String,
    executable: PathBuf,
}

const PASSWD: &[u8] = b"sandbox:x:1000:1000:sandbox:/scratch:/bin/sh\n";
const GROUP: &[u8] = b"sandbox:x:1000:\n";

impl Layout {
    pub fn new(python: &PythonInstall) -> Layout {
        let mut dirs: Vec<String> = vec!["usr".into(), "etc".into(), "dev".into()];
        let mut binds = vec![(PathBuf::from("/usr"), "usr".to_owned(), false, false)];
        let mut symlinks = Vec::new();
        let mut rules = vec![
            // listing the sandbox's own root shows only what is listed here
            ("/".to_owned(), landlock::FS_READ_DIR, false),
            ("/usr".to_owned(), landlock::READ_EXEC, false),
            ("/etc".to_owned(), landlock::READ_ONLY, false),
            ("/scratch".to_owned(), landlock::SCRATCH, false),
            ("/dev/shm".to_owned(), landlock::SCRATCH, false),
        ];
        // The top-level links of a merged /usr (bin -> usr/bin …) are made again; a real
        // directory there (an older layout) is bound read-only.
        let mut bound_tops = vec![PathBuf::from("/usr")];
        for name in ["bin", "sbin", "lib", "lib32", "lib64", "libx32"] {
            let host = Path::new("/").join(name);
            let Ok(meta) = std::fs::symlink_metadata(&host) else {
                continue;
            };
            if meta.file_type().is_symlink() {
                if let Ok(target) = std::fs::read_link(&host) {
                    let inside_usr = if target.is_absolute() {
                        target.starts_with("/usr")
                    } else {
                        target.starts_with("usr")
                    };
                    if inside_usr {
                        symlinks.push((target, name.to_owned()));
                    }
                }
            } else if meta.is_dir() {
                dirs.push(name.to_owned());
                binds.push((host.clone(), name.to_owned(), false, false));
                rules.push((host.display().to_string(), landlock::READ_EXEC, false));
                bound_tops.push(host);
            }
        }
        if python.prefix_needs_bind() && !bound_tops.iter().any(|t| python.prefix.starts_with(t)) {
            let rel = python.prefix.strip_prefix("/").unwrap_or(&python.prefix);
            let mut acc = PathBuf::new();
            for c in rel.components() {
                acc.push(c);
                let s = acc.display().to_string();
                if !dirs.contains(&s) {
                    dirs.push(s);
                }
            }
            binds.push((
                python.prefix.clone(),
                rel.display().to_string(),
                false,
                false,
            ));
            rules.push((
                python.prefix.display().to_string(),
                landlock::READ_EXEC,
                false,
            ));
        }
        if Path::new("/etc/ld.so.cache").is_file() {
            binds.push((
                "/etc/ld.so.cache".into(),
                "etc/ld.so.cache".into(),
                true,
                false,
            ));
        }
        for (dev, rights) in [
            ("null", landlock::DEVICE_RW),
            ("zero", landlock::DEVICE_RW),
            ("random", landlock::DEVICE_R),
            ("urandom", landlock::DEVICE_R),
        ] {
            let host = Path::new("/dev").join(dev);
            if host.exists() {
                binds.push((host.clone(), format!("dev/{dev}"), true, true));
                rules.push((host.display().to_string(), rights, true));
            }
        }
        symlinks.push(("/scratch".into(), "tmp".into()));
        let mut path_env = String::new();
        if python.prefix_needs_bind() {
            path_env.push_str(&format!("{}/bin:", python.prefix.display()));
        }
        path_env.push_str("/usr/local/bin:/usr/bin:/bin");
        Layout {
            dirs,
            binds,
            symlinks,
            rules,
            path_env,
            executable: python.executable.clone(),
        }
    }
}

impl Layout {
    /// Is `dir` (relative to the new root) one of the directories the sandbox makes itself?
    pub(crate) fn has_dir(&self, dir: &str) -> bool {
        self.dirs.iter().any(|d| d == dir)
    }

    /// May a file shown read-only (or, with `dir`, a directory made for one) be at `path`
    /// (components from the new root)? Not on or under the sandbox's own places: `/usr`, `/etc`,
    /// `/dev`, a bound or linked system directory, the Python prefix, scratch itself.
    pub(crate) fn may_hold(&self, path: &[String], dir: bool) -> Result<(), String> {
        if path.first().is_some_and(|c| c == "scratch") && path.len() >= 2 {
            return Ok(());
        }
        let own = |p: &str| {
            ["usr", "etc", "dev", "scratch", crate::read_only::STAGE_DIR].contains(&p)
                || self.binds.iter().any(|(_, target, _, _)| target == p)
                || self.symlinks.iter().any(|(_, link)| link == p)
        };
        for k in 1..=path.len() {
            let p = path[..k].join("/");
            if own(&p) {
                return Err(format!(
                    "/{p} is the sandbox's own (its system, Python or scratch directories)"
                ));
            }
        }
        let p = path.join("/");
        if !dir && self.has_dir(&p) {
            return Err(format!("/{p} is a directory of the sandbox"));
        }
        Ok(())
    }

    /// Where `name` (a [`crate::ReadOnlyFile`]'s) lands inside the sandbox, or why it cannot.
    pub(crate) fn read_only_target(&self, name: &str) -> Result<String, String> {
        let w = crate::read_only::walk(name)?;
        for d in &w.dirs {
            self.may_hold(d, true)?;
        }
        self.may_hold(&w.file, false)?;
        Ok(format!("/{}", w.file.join("/")))
    }
}

fn cstring(s: impl AsRef<[u8]>, what: &str) -> Result<CString, SandboxError> {
    CString::new(s.as_ref())
        .map_err(|_| SandboxError::InvalidJob(format!("{what} holds a NUL byte")))
}

fn path_cstring(p: &Path) -> Result<CString, SandboxError> {
    cstring(p.as_os_str().as_bytes(), "a path")
}

/// Checks the job's code and file names; returns the scratch directories to make, parents first.
pub(crate) fn validate(job: &Job) -> Result<Vec<String>, SandboxError> {
    let bad = |m: String| Err(SandboxError::InvalidJob(m));
    if job.code.len() > MAX_CODE_BYTES {
        return bad(format!(
            "the code is {} bytes; at most {MAX_CODE_BYTES} (put more in a file)",
            job.code.len()
        ));
    }
    if job.code.contains('\0') {
        return bad("the code holds a NUL byte".into());
    }
    if job.files.len() > MAX_FILES {
        return bad(format!("{} files; at most {MAX_FILES}", job.files.len()));
    }
    let total: u64 = job.files.iter().map(|f| f.text.len() as u64).sum();
    if total > job.limits.scratch_bytes / 2 {
        return bad(format!(
            "the files hold {total} bytes; at most {} (half of scratch)",
            job.limits.scratch_bytes / 2
        ));
    }
    let mut dirs = Vec::new();
    let mut names = std::collections::BTreeSet::new();
    for f in &job.files {
        let name = &f.name;
        let ok = !name.is_empty()
            && name.len() <= MAX_FILE_NAME
            && !name.starts_with('/')
            && !name.ends_with('/')
            && !name.contains('\0')
            && name
                .split('/')
                .all(|c| !c.is_empty() && c != "." && c != "..");
        if !ok {
            return bad(format!(
                "file name {name:?} is not a relative path inside scratch (no `..`, no leading \
                 `/`, at most {MAX_FILE_NAME} bytes)"
            ));
        }
        if !names.insert(name.as_str()) {
            return bad(format!("file {name:?} is given twice"));
        }
        let parts: Vec<&str> = name.split('/').collect();
        for i in 1..parts.len() {
            let d = parts[..i].join("/");
            if !dirs.contains(&d) {
                dirs.push(d);
            }
        }
    }
    for d in &dirs {
        if names.contains(d.as_str()) {
            return bad(format!("{d:?} is both a file and a directory"));
        }
    }
    Ok(dirs)
}

fn pipe() -> Result<(OwnedFd, OwnedFd), SandboxError> {
    rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).map_err(|e| SandboxError::Io {
        what: "making a pipe",
        cause: e.into(),
    })
}

pub(crate) fn stdin_file(data: &[u8]) -> Result<std::fs::File, SandboxError> {
    let io = |cause: std::io::Error| SandboxError::Io {
        what: "preparing stdin",
        cause,
    };
    let fd = rustix::fs::memfd_create(c"seam-python-stdin", rustix::fs::MemfdFlags::CLOEXEC)
        .map_err(|e| io(e.into()))?;
    let mut f = std::fs::File::from(fd);
    f.write_all(data).map_err(io)?;
    f.rewind().map_err(io)?;
    Ok(f)
}

/// The directory the new root's tmpfs is mounted on (in the run's own mount namespace only).
fn root_mountpoint() -> Result<PathBuf, SandboxError> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let dir = std::env::temp_dir().join(".seam-sandbox-root");
    let io = |cause| SandboxError::Io {
        what: "making the sandbox's mount point",
        cause,
    };
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io(e)),
    }
    // Someone else's directory or link there could only make runs fail (the mount happens in
    // the run's own namespace), but refuse it with a reason rather than fail obscurely.
    let meta = std::fs::symlink_metadata(&dir).map_err(io)?;
    if !meta.is_dir() || meta.uid() != rustix::process::geteuid().as_raw() {
        return Err(io(std::io::Error::other(format!(
            "{} is not a directory of this user (remove it)",
            dir.display()
        ))));
    }
    Ok(dir)
}

fn python_argv(exe: &Path, code: &str) -> Vec<Vec<u8>> {
    vec![
        exe.as_os_str().as_bytes().to_vec(),
        b"-E".to_vec(),
        b"-s".to_vec(),
        b"-B".to_vec(),
        b"-u".to_vec(),
        b"-c".to_vec(),
        code.as_bytes().to_vec(),
    ]
}

pub(crate) fn python_env(path_env: &str, home: &str) -> Vec<String> {
    vec![
        format!("PATH={path_env}"),
        format!("HOME={home}"),
        format!("TMPDIR={home}"),
        "LANG=C.UTF-8".into(),
        "LC_ALL=C.UTF-8".into(),
    ]
}

/// One sandboxed run.
pub(crate) fn run_sandboxed(
    layout: &Layout,
    landlock_abi: u32,
    job: &Job,
) -> Result<RunOutput, SandboxError> {
    let started = Instant::now();
    let scratch_dirs = validate(job)?;
    let placed = read_only::place(Some(layout), job, &scratch_dirs)?;
    let limits = &job.limits;

    let (stdout_r, stdout_w) = pipe()?;
    let (stderr_r, stderr_w) = pipe()?;
    let (report_r, report_w) = pipe()?;
    let (sync_r, sync_w) = pipe()?;
    let stdin = stdin_file(&job.stdin)?;
    let mountpoint = root_mountpoint()?;

    let euid = rustix::process::geteuid().as_raw();
    let egid = rustix::process::getegid().as_raw();
    let as_root = euid == 0;

    let mut keep_fds = vec![
        sync_r.as_raw_fd(),
        report_w.as_raw_fd(),
        stdin.as_raw_fd(),
        stdout_w.as_raw_fd(),
        stderr_w.as_raw_fd(),
    ];
    keep_fds.sort_unstable();

    let mut binds = Vec::new();
    for (src, target, file, device) in &layout.binds {
        binds.push(Bind {
            source: path_cstring(src)?,
            target: cstring(target, "a path")?,
            file: *file,
            device: *device,
        });
    }
    let mut rules = Vec::new();
    for (path, access, file) in &layout.rules {
        rules.push(Rule {
            path: cstring(path, "a path")?,
            access: *access,
            file: *file,
        });
    }
    // A read-only file in the root is readable, and nothing beside it; one under scratch is
    // covered by scratch's rule, and its read-only bind refuses every write.
    for (path, _) in &placed.root_files {
        rules.push(Rule {
            path: cstring(format!("/{path}"), "a path")?,
            access: landlock::FS_READ_FILE,
            file: true,
        });
    }
    let content = |i: usize| job.read_only[i].content.clone();
    // The root tmpfs holds the copies placed in it; those bound under scratch have a tmpfs
    // of their own (a page of slack for each file).
    let root_size = (1u64 << 20) + placed.root_bytes + 4096 * placed.root_inodes();
    let root_inodes = 512 + placed.root_inodes();
    let stage_files = placed.scratch_files.len() as u64;
    let stage_size = placed.scratch_bytes + 4096 * (stage_files + 1);
    let rlimits = vec![
        (Resource::Cpu, limits.cpu_seconds, limits.cpu_seconds + 1),
        (Resource::As, limits.address_space, limits.address_space),
        (Resource::Nproc, limits.processes, limits.processes),
        (Resource::Fsize, limits.file_size, limits.file_size),
        (Resource::Nofile, limits.open_files, limits.open_files),
        (Resource::Core, 0, 0),
        (Resource::Memlock, 0, 0),
    ];
    let mut plan = ChildPlan {
        keep_fds,
        sync_read: sync_r.as_raw_fd(),
        report_write: report_w.as_raw_fd(),
        stdin: stdin.as_raw_fd(),
        stdout: stdout_w.as_raw_fd(),
        stderr: stderr_w.as_raw_fd(),
        root_mountpoint: path_cstring(&mountpoint)?,
        root_tmpfs_options: cstring(
            format!("size={root_size},nr_inodes={root_inodes},mode=0755"),
            "tmpfs options",
        )?,
        dirs: layout
            .dirs
            .iter()
            .chain(&placed.root_dirs)
            .map(|d| cstring(d, "a path"))
            .collect::<Result<_, _>>()?,
        binds,
        symlinks: layout
            .symlinks
            .iter()
            .map(|(t, l)| Ok((path_cstring(t)?, cstring(l, "a path")?)))
            .collect::<Result<_, SandboxError>>()?,
        root_files: vec![
            (c"etc/passwd".into(), PASSWD.to_vec()),
            (c"etc/group".into(), GROUP.to_vec()),
        ],
        ro_root_files: placed
            .root_files
            .iter()
            .map(|(p, i)| Ok((cstring(p, "a file name")?, content(*i))))
            .collect::<Result<_, SandboxError>>()?,
        ro_stage_dir: cstring(read_only::STAGE_DIR, "a path")?,
        ro_stage_tmpfs_options: cstring(
            format!("size={stage_size},nr_inodes={},mode=0755", stage_files + 8),
            "tmpfs options",
        )?,
        ro_scratch_dirs: placed
            .scratch_dirs
            .iter()
            .map(|d| cstring(d, "a file name"))
            .collect::<Result<_, _>>()?,
        ro_binds: placed
            .scratch_files
            .iter()
            .enumerate()
            .map(|(k, (target, i))| {
                Ok((
                    cstring(format!("{}/{k}", read_only::STAGE_DIR), "a path")?,
                    cstring(target, "a file name")?,
                    content(*i),
                ))
            })
            .collect::<Result<_, SandboxError>>()?,
        scratch_dir: c"scratch".into(),
        scratch_tmpfs_options: cstring(
            format!(
                "size={},nr_inodes=4096,mode=0755,uid={SANDBOX_ID},gid={SANDBOX_ID}",
                limits.scratch_bytes
            ),
            "tmpfs options",
        )?,
        shm_dir: c"dev/shm".into(),
        shm_tmpfs_options: cstring(
            format!(
                "size={},nr_inodes=1024,mode=1777,uid={SANDBOX_ID},gid={SANDBOX_ID}",
                limits.scratch_bytes / 4
            ),
            "tmpfs options",
        )?,
        scratch_abs: c"/scratch".into(),
        scratch_dirs: scratch_dirs
            .iter()
            .map(|d| cstring(d, "a file name"))
            .collect::<Result<_, _>>()?,
        scratch_files: job
            .files
            .iter()
            .map(|f| Ok((cstring(&f.name, "a file name")?, f.text.as_bytes().to_vec())))
            .collect::<Result<_, SandboxError>>()?,
        hostname: b"sandbox",
        drop_to: as_root.then_some((SANDBOX_ID, SANDBOX_ID)),
        rlimits,
        landlock: LandlockPlan::new(landlock_abi, rules),
        seccomp: seccomp::program(),
        exe: path_cstring(&layout.executable)?,
        argv: python_argv(&layout.executable, &job.code)
            .into_iter()
            .map(|a| cstring(a, "an argument"))
            .collect::<Result<_, _>>()?,
        envp: python_env(&layout.path_env, "/scratch")
            .into_iter()
            .map(|e| cstring(e, "the environment"))
            .collect::<Result<_, _>>()?,
        argv_ptrs: Vec::new(),
        envp_ptrs: Vec::new(),
    };
    plan.seal();

    // SAFETY: the child runs only `child::init_main`, which keeps to async-signal-safe system
    // calls over the plan prepared above and ends in `execve` or `_exit`.
    let forked = unsafe { sys::clone3_with_pidfd(probe::namespace_flags()) }.map_err(|e| {
        SandboxError::Io {
            what: "creating the sandbox's namespaces (clone3)",
            cause: e.into(),
        }
    })?;
    let (pid, pidfd) = match forked {
        Forked::Child => child::init_main(&plan),
        // SAFETY: the kernel just returned this pidfd to us; nothing else owns it.
        Forked::Parent { pid, pidfd } => (pid, unsafe { OwnedFd::from_raw_fd(pidfd) }),
    };
    // The child has its copies; the gate keeps only its ends.
    drop((stdout_w, stderr_w, report_w, sync_r, stdin));
    drop(plan);

    let maps = write_id_maps(pid, euid, egid);
    if maps.is_ok() {
        // A failed write leaves the pipe closed: the child reports it and exits.
        let _ = sys::write_all(sync_w.as_raw_fd(), b"G");
    }
    drop(sync_w);
    if let Err(cause) = maps {
        let _ = rustix::process::pidfd_send_signal(&pidfd, Signal::KILL);
        let _ = reap(&pidfd);
        return Err(SandboxError::Io {
            what: "writing the user namespace's id maps",
            cause,
        });
    }

    let collected = collect(
        stdout_r,
        stderr_r,
        &pidfd,
        started + limits.wall,
        limits.output_bytes,
        false,
        || {
            let _ = rustix::process::pidfd_send_signal(&pidfd, Signal::KILL);
        },
    );
    let _ = reap(&pidfd);
    let report = read_report(report_r);

    let (exit_code, signal) = match report.outcome {
        Some(Ok(status)) => decode_status(status),
        Some(Err((step, errno))) => return Err(SandboxError::Setup { step, errno }),
        None => (None, None),
    };
    Ok(finish(collected, exit_code, signal, true, started))
}

/// The maps of the run's user namespace. An ordinary owner maps their own ids to the
/// sandbox's user. A root gate maps root too (so the sandbox's first process can walk to
/// the Python prefix under a private directory before the pivot), and the sandbox's user
/// to the overflow id, which owns nothing on the machine; the first process drops to it
/// before anything untrusted runs.
fn write_id_maps(pid: libc::pid_t, euid: u32, egid: u32) -> std::io::Result<()> {
    let proc = PathBuf::from(format!("/proc/{pid}"));
    if euid == 0 {
        std::fs::write(
            proc.join("uid_map"),
            format!("0 0 1\n{SANDBOX_ID} {NOBODY} 1\n"),
        )?;
        std::fs::write(
            proc.join("gid_map"),
            format!("0 0 1\n{SANDBOX_ID} {NOBODY} 1\n"),
        )?;
    } else {
        std::fs::write(proc.join("uid_map"), format!("{SANDBOX_ID} {euid} 1\n"))?;
        std::fs::write(proc.join("setgroups"), "deny")?;
        std::fs::write(proc.join("gid_map"), format!("{SANDBOX_ID} {egid} 1\n"))?;
    }
    Ok(())
}

fn reap(pidfd: &OwnedFd) -> rustix::io::Result<()> {
    rustix::process::waitid(WaitId::PidFd(pidfd.as_fd()), WaitIdOptions::EXITED).map(drop)
}

/// What the sandbox's first process reported.
#[derive(Debug, Default)]
struct Report {
    /// Python's wait status, or the step that failed.
    outcome: Option<Result<i32, (Step, Errno)>>,
}

fn read_report(fd: OwnedFd) -> Report {
    let _ = rustix::fs::fcntl_setfl(&fd, rustix::fs::OFlags::NONBLOCK);
    let mut buf = [0u8; 64];
    let mut got = Vec::new();
    while let Ok(n) = sys::read(fd.as_raw_fd(), &mut buf) {
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
        if got.len() > 1024 {
            break;
        }
    }
    let mut report = Report::default();
    let mut rest = &got[..];
    while let Some((&tag, tail)) = rest.split_first() {
        match tag {
            b'E' if tail.len() >= 5 => {
                let errno = i32::from_ne_bytes([tail[1], tail[2], tail[3], tail[4]]);
                let step = Step::from_byte(tail[0]).unwrap_or(Step::ExecPython);
                report.outcome = Some(Err((step, Errno::from_raw_os_error(errno))));
                rest = &tail[5..];
            }
            b'X' if tail.len() >= 4 => {
                if report.outcome.is_none() {
                    let status = i32::from_ne_bytes([tail[0], tail[1], tail[2], tail[3]]);
                    report.outcome = Some(Ok(status));
                }
                rest = &tail[4..];
            }
            _ => break,
        }
    }
    report
}

/// (exit code, signal) from a wait status.
pub(crate) fn decode_status(status: i32) -> (Option<i32>, Option<i32>) {
    if libc::WIFEXITED(status) {
        (Some(libc::WEXITSTATUS(status)), None)
    } else if libc::WIFSIGNALED(status) {
        (None, Some(libc::WTERMSIG(status)))
    } else {
        (None, None)
    }
}

/// Output read so far from one pipe, at most `cap` bytes.
#[derive(Debug)]
struct Capture {
    fd: Option<OwnedFd>,
    bytes: Vec<u8>,
    cap: usize,
    cut: bool,
}

impl Capture {
    fn new(fd: OwnedFd, cap: usize) -> Capture {
        Capture {
            fd: Some(fd),
            bytes: Vec::new(),
            cap,
            cut: false,
        }
    }

    /// Reads once; at EOF or past the cap the pipe is closed (the writer then gets EPIPE).
    fn read_once(&mut self) {
        let Some(fd) = &self.fd else { return };
        let mut buf = [0u8; 64 * 1024];
        match sys::read(fd.as_raw_fd(), &mut buf) {
            Ok(0) => self.fd = None,
            Ok(n) => {
                let room = self.cap - self.bytes.len();
                if n > room {
                    self.bytes.extend_from_slice(&buf[..room]);
                    self.cut = true;
                    self.fd = None;
                } else {
                    self.bytes.extend_from_slice(&buf[..n]);
                }
            }
            Err(e) if e == Errno::AGAIN => {}
            Err(_) => self.fd = None,
        }
    }

    fn text(&self) -> String {
        let bytes = &self.bytes[..];
        // A cut may split a character: drop the incomplete end rather than show U+FFFD.
        let end = match std::str::from_utf8(bytes) {
            Ok(_) => bytes.len(),
            Err(e) if e.error_len().is_none() && self.cut => e.valid_up_to(),
            Err(_) => bytes.len(),
        };
        String::from_utf8_lossy(&bytes[..end]).into_owned()
    }
}

/// What [`collect`] gathered.
#[derive(Debug)]
pub(crate) struct Collected {
    stdout: Capture,
    stderr: Capture,
    timed_out: bool,
}

/// Reads stdout and stderr until the process behind `exit_fd` (a pidfd) has ended and both
/// pipes are closed, or until `deadline`, when `kill` is called and the run is timed out.
pub(crate) fn collect(
    stdout: OwnedFd,
    stderr: OwnedFd,
    exit_fd: &OwnedFd,
    deadline: Instant,
    cap: usize,
    kill_on_exit: bool,
    kill: impl Fn(),
) -> Collected {
    let mut out = Capture::new(stdout, cap);
    let mut err = Capture::new(stderr, cap);
    let mut exited = false;
    let mut timed_out = false;
    let mut stop_at: Option<Instant> = None;
    loop {
        if exited && out.fd.is_none() && err.fd.is_none() {
            break;
        }
        let now = Instant::now();
        if !exited && !timed_out && now >= deadline {
            kill();
            timed_out = true;
            stop_at = Some(now + DRAIN_GRACE);
        }
        if stop_at.is_some_and(|s| now >= s) {
            break;
        }
        let until = stop_at.unwrap_or(deadline).max(now);
        let wait = until - now;
        let mut fds: Vec<PollFd<'_>> = Vec::with_capacity(3);
        let mut who: Vec<u8> = Vec::with_capacity(3);
        if let Some(fd) = &out.fd {
            fds.push(PollFd::new(fd, PollFlags::IN));
            who.push(b'o');
        }
        if let Some(fd) = &err.fd {
            fds.push(PollFd::new(fd, PollFlags::IN));
            who.push(b'e');
        }
        if !exited {
            fds.push(PollFd::new(exit_fd, PollFlags::IN));
            who.push(b'x');
        }
        let timeout = rustix::event::Timespec {
            tv_sec: wait.as_secs() as i64,
            tv_nsec: wait.subsec_nanos() as i64,
        };
        match rustix::event::poll(&mut fds, Some(&timeout)) {
            Ok(_) => {}
            Err(e) if e == Errno::INTR => continue,
            Err(_) => {
                kill();
                break;
            }
        }
        let ready: Vec<(u8, bool)> = fds
            .iter()
            .zip(&who)
            .map(|(f, w)| (*w, !f.revents().is_empty()))
            .collect();
        drop(fds);
        for (w, r) in ready {
            if !r {
                continue;
            }
            match w {
                b'o' => out.read_once(),
                b'e' => err.read_once(),
                _ => {
                    exited = true;
                    if kill_on_exit {
                        kill();
                    }
                    if stop_at.is_none() {
                        stop_at = Some(Instant::now() + DRAIN_GRACE);
                    }
                }
            }
        }
    }
    Collected {
        stdout: out,
        stderr: err,
        timed_out,
    }
}

pub(crate) fn finish(
    c: Collected,
    exit_code: Option<i32>,
    signal: Option<i32>,
    sandboxed: bool,
    started: Instant,
) -> RunOutput {
    let mut limit_hit = Vec::new();
    if c.stdout.cut {
        limit_hit.push(LimitHit::Stdout);
    }
    if c.stderr.cut {
        limit_hit.push(LimitHit::Stderr);
    }
    if signal == Some(libc::SIGXCPU) {
        limit_hit.push(LimitHit::CpuTime);
    }
    if c.timed_out {
        limit_hit.push(LimitHit::WallTime);
    }
    RunOutput {
        exit_code: if c.timed_out { None } else { exit_code },
        signal: if c.timed_out { None } else { signal },
        stdout: c.stdout.text(),
        stderr: c.stderr.text(),
        stdout_cut: c.stdout.cut,
        stderr_cut: c.stderr.cut,
        timed_out: c.timed_out,
        limit_hit,
        sandboxed,
        wall_ms: started.elapsed().as_millis() as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::ScratchFile;
    use proptest::prelude::*;

    fn job_with(names: &[&str]) -> Job {
        Job {
            files: names
                .iter()
                .map(|n| ScratchFile {
                    name: (*n).to_owned(),
                    text: String::new(),
                })
                .collect(),
            ..Job::new("pass")
        }
    }

    #[test]
    fn file_names_stay_inside_scratch() {
        for bad in [
            "",
            "/etc/x",
            "../x",
            "a/../../x",
            "a//b",
            "a/",
            ".",
            "a/./b",
            "x\0y",
        ] {
            assert!(validate(&job_with(&[bad])).is_err(), "{bad:?} was accepted");
        }
        assert_eq!(
            validate(&job_with(&[
                "pkg/sub/mod.py",
                "pkg/__init__.py",
                "data.csv"
            ]))
            .unwrap(),
            ["pkg", "pkg/sub"]
        );
        assert!(validate(&job_with(&["a", "a"])).is_err());
        assert!(validate(&job_with(&["a", "a/b"])).is_err());
    }

    proptest! {
        /// Whatever name is accepted is a relative path of plain components, and the
        /// directories to make are exactly its proper prefixes.
        #[test]
        fn accepted_names_are_plain_relative_paths(name in "[a-z./]{1,12}") {
            if let Ok(dirs) = validate(&job_with(&[&name])) {
                let p = Path::new(&name);
                prop_assert!(p.is_relative());
                prop_assert!(p.components().all(|c| matches!(c, std::path::Component::Normal(_))));
                prop_assert_eq!(dirs.len(), p.components().count() - 1);
            }
        }
    }
}
