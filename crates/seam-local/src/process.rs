//! Running a program with a timeout and bounded output: the check command,
//! the formatters and linters, Graphviz.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// Every program the local tools run, by its name on PATH: git (the builder, aesthesis),
/// Graphviz's `dot` (image), and aesthesis's formatters and linters, each taken from the place
/// that runs it. The agent's walls let it execute these and no other (`seam-confine`), so a
/// program a tool starts is one added here by construction. Not the Critic's check command:
/// the operator configures it, and it runs with what the walls allow.
pub fn programs() -> Vec<&'static str> {
    [crate::git::GIT, crate::image::DOT]
        .into_iter()
        .chain(crate::aesthesis::programs())
        .collect()
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RunOutput {
    /// `None` when killed (timeout) or ended by a signal.
    pub status: Option<i32>,
    pub timed_out: bool,
    pub duration: Duration,
    /// stdout then stderr, each cut to its last `max_output` bytes.
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Total bytes written to stdout and stderr.
    pub output_bytes: u64,
}

impl RunOutput {
    pub fn success(&self) -> bool {
        self.status == Some(0)
    }

    /// stdout and stderr as one lossy text.
    pub fn text(&self) -> String {
        let mut s = String::from_utf8_lossy(&self.stdout).into_owned();
        if !self.stderr.is_empty() {
            if !s.is_empty() && !s.ends_with('\n') {
                s.push('\n');
            }
            s.push_str(&String::from_utf8_lossy(&self.stderr));
        }
        s
    }
}

/// Runs `argv` in `dir` (its own process group, stdin from `input` or
/// nothing), kills the group at `timeout`, keeps the last `max_output` bytes
/// of each stream.
pub(crate) fn run(
    argv: &[String],
    dir: &Path,
    input: Option<&[u8]>,
    env: &[(&str, &str)],
    timeout: Duration,
    max_output: usize,
) -> std::io::Result<RunOutput> {
    use std::os::unix::process::CommandExt;
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "empty command"))?;
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(dir)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    let pid = child.id();
    let feeder = match (input, child.stdin.take()) {
        (Some(bytes), Some(mut stdin)) => {
            let bytes = bytes.to_vec();
            Some(thread::spawn(move || {
                let _ = stdin.write_all(&bytes);
            }))
        }
        _ => None,
    };
    let out = child.stdout.take().map(|r| reader(r, max_output));
    let err = child.stderr.take().map(|r| reader(r, max_output));
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if start.elapsed() >= timeout {
            timed_out = true;
            if let Some(pid) = rustix::process::Pid::from_raw(pid as i32) {
                let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
            }
            break child.wait()?;
        }
        thread::sleep(Duration::from_millis(5));
    };
    let duration = start.elapsed();
    // Whatever the command left running in its group would hold the pipes open.
    if let Some(pid) = rustix::process::Pid::from_raw(pid as i32) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    if let Some(f) = feeder {
        let _ = f.join();
    }
    let (stdout, n_out) = out.and_then(|h| h.join().ok()).unwrap_or((Vec::new(), 0));
    let (stderr, n_err) = err.and_then(|h| h.join().ok()).unwrap_or((Vec::new(), 0));
    Ok(RunOutput {
        status: if timed_out { None } else { status.code() },
        timed_out,
        duration,
        stdout,
        stderr,
        output_bytes: n_out + n_err,
    })
}

/// Reads a stream to its end, keeping its last `max` bytes.
fn reader<R: Read + Send + 'static>(mut r: R, max: usize) -> thread::JoinHandle<(Vec<u8>, u64)> {
    thread::spawn(move || {
        let mut kept: Vec<u8> = Vec::new();
        let mut total = 0u64;
        let mut buf = [0u8; 8192];
        loop {
            match r.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    total += n as u64;
                    kept.extend_from_slice(&buf[..n]);
                    if kept.len() > 2 * max.max(1) {
                        let cut = kept.len() - max;
                        kept.drain(..cut);
                    }
                }
            }
        }
        if kept.len() > max {
            let cut = kept.len() - max;
            kept.drain(..cut);
        }
        (kept, total)
    })
}

/// True when `program` is an executable on `PATH` (or a path to one).
pub(crate) fn on_path(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let is_exec = |p: &Path| {
        p.metadata()
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    };
    if program.contains('/') {
        return is_exec(Path::new(program));
    }
    std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|d| is_exec(&d.join(program))))
        .unwrap_or(false)
}

#[cfg(test)]
mod programs_tests {
    /// Each program once, and every one the agent's walls let it run before the list was
    /// derived (git, dot, rustfmt, ruff) is still among them.
    #[test]
    fn every_program_is_listed_once() {
        let p = super::programs();
        for (i, name) in p.iter().enumerate() {
            assert!(!p[..i].contains(name), "{name} twice in {p:?}");
        }
        for name in ["git", "dot", "rustfmt", "ruff"] {
            assert!(p.contains(&name), "{name} not in {p:?}");
        }
    }
}
