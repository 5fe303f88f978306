//! A run without the walls, for an owner whose policy says `python.run = "allow-unsandboxed"`
//! on a machine that cannot raise them. It keeps what needs no kernel feature: an empty
//! environment, a fresh scratch directory removed afterwards, rlimits (set on the child once
//! started), capped output, and the wall-clock timeout, which kills the process group. It
//! does not hide the owner's files, the network or other processes: that is what the policy
//! value says the owner accepted.

use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Instant;

use rustix::process::{Pid, Resource, Rlimit, Signal};

use crate::SandboxError;
use crate::job::{Job, RunOutput};
use crate::python::PythonInstall;
use crate::run::{collect, decode_status, finish, python_env, stdin_file, validate};

pub(crate) fn run_unsandboxed(
    python: &PythonInstall,
    job: &Job,
) -> Result<RunOutput, SandboxError> {
    let started = Instant::now();
    let dirs = validate(job)?;
    // Only the copies under scratch: a name elsewhere reaches the machine's own file here.
    let placed = crate::read_only::place(None, job, &dirs)?;
    let limits = &job.limits;
    let io = |what: &'static str| move |cause: std::io::Error| SandboxError::Io { what, cause };
    let scratch = tempfile::Builder::new()
        .prefix("seam-python-")
        .tempdir()
        .map_err(io("making the scratch directory"))?;
    for d in &dirs {
        std::fs::create_dir(scratch.path().join(d)).map_err(io("writing the call's files"))?;
    }
    for f in &job.files {
        std::fs::write(scratch.path().join(&f.name), &f.text)
            .map_err(io("writing the call's files"))?;
    }
    let in_scratch = |p: &str| scratch.path().join(p.strip_prefix("scratch/").unwrap_or(p));
    for d in &placed.scratch_dirs {
        match std::fs::create_dir(in_scratch(d)) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                return Err(io("writing the call's read-only files")(e));
            }
            _ => {}
        }
    }
    for (p, i) in &placed.scratch_files {
        use std::os::unix::fs::PermissionsExt;
        let path = in_scratch(p);
        std::fs::write(&path, &job.read_only[*i].content)
            .and_then(|()| std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)))
            .map_err(io("writing the call's read-only files"))?;
    }
    let home = scratch.path().display().to_string();
    let mut path_env = String::new();
    if python.prefix_needs_bind() {
        path_env.push_str(&format!("{}/bin:", python.prefix.display()));
    }
    path_env.push_str("/usr/local/bin:/usr/bin:/bin");
    let env = python_env(&path_env, &home);

    let mut cmd = Command::new(&python.executable);
    cmd.args(["-E", "-s", "-B", "-u", "-c", &job.code])
        .env_clear()
        .envs(env.iter().filter_map(|kv| kv.split_once('=')))
        .current_dir(scratch.path())
        .stdin(Stdio::from(stdin_file(&job.stdin)?))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = cmd.spawn().map_err(io("starting python3"))?;
    let raw_pid = child.id() as i32;
    let pid = Pid::from_raw(raw_pid).ok_or_else(|| SandboxError::Io {
        what: "starting python3",
        cause: std::io::Error::other("no pid"),
    })?;
    for (resource, soft, hard) in [
        (Resource::Cpu, limits.cpu_seconds, limits.cpu_seconds + 1),
        (Resource::As, limits.address_space, limits.address_space),
        (Resource::Fsize, limits.file_size, limits.file_size),
        (Resource::Nofile, limits.open_files, limits.open_files),
        (Resource::Core, 0, 0),
    ] {
        let _ = rustix::process::prlimit(
            Some(pid),
            resource,
            Rlimit {
                current: Some(soft),
                maximum: Some(hard),
            },
        );
    }
    let kill = || {
        let _ = rustix::process::kill_process_group(pid, Signal::KILL);
    };
    let pidfd = match rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()) {
        Ok(fd) => fd,
        Err(e) => {
            kill();
            let _ = child.wait();
            return Err(SandboxError::Io {
                what: "watching python3 (pidfd_open)",
                cause: e.into(),
            });
        }
    };
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        kill();
        let _ = child.wait();
        return Err(SandboxError::Io {
            what: "starting python3",
            cause: std::io::Error::other("no pipes"),
        });
    };
    let collected = collect(
        OwnedFd::from(stdout),
        OwnedFd::from(stderr),
        &pidfd,
        started + limits.wall,
        limits.output_bytes,
        true,
        kill,
    );
    kill();
    let status = child.wait().map_err(io("waiting for python3"))?;
    let (exit_code, signal) = {
        use std::os::unix::process::ExitStatusExt;
        decode_status(status.into_raw())
    };
    drop(scratch);
    Ok(finish(collected, exit_code, signal, false, started))
}
