//! The gate as a child process of `seam ask`, when none is running.
//!
//! Its own process (never a thread of the agent): `seam gate` with the same
//! home, policy and config, its output appended to `gate.log` in seam's home.
//! It is stopped, gracefully (the ledger is closed), by closing its stdin
//! when the ask ends: the agent's walls scope signals (Landlock ABI 6), so the
//! confined agent could not send it SIGTERM, and if `seam ask` dies, the pipe
//! closes and the gate stops too.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use seam_agent::gate_client::{GateClient, GateEndpoint};

/// A gate this process started; stopped when dropped.
#[derive(Debug)]
pub struct GateChild {
    child: Option<Child>,
    /// The write end of the gate's stdin: dropping it stops the gate.
    stdin: Option<std::process::ChildStdin>,
    log: PathBuf,
}

/// What the child gate is started with (the caller's global options).
#[derive(Debug, Clone)]
pub struct GateLaunch<'a> {
    pub seam_home: &'a Path,
    pub policy: Option<&'a Path>,
    pub config: Option<&'a Path>,
    /// How long a call on "ask" waits for the operator on this terminal.
    pub consent_timeout_secs: u64,
}

impl GateChild {
    /// Starts `seam gate` and waits until it answers on its socket.
    pub async fn start(launch: &GateLaunch<'_>, wait: Duration) -> anyhow::Result<GateChild> {
        let exe = std::env::current_exe().context("finding the seam binary to start the gate")?;
        let log = seam_home::SeamHome::new(launch.seam_home).gate_log();
        let out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .with_context(|| format!("opening the gate's log {}", log.display()))?;
        let err = out.try_clone().context("opening the gate's log")?;
        let mut cmd = Command::new(exe);
        cmd.arg("--home").arg(launch.seam_home);
        if let Some(p) = launch.policy {
            cmd.arg("--policy").arg(p);
        }
        if let Some(c) = launch.config {
            cmd.arg("--config").arg(c);
        }
        // The gate asks for consent on the terminal this process was started from: its own
        // /dev/tty, opened before the agent's walls exist (the agent never holds it).
        cmd.args(["gate", "--until-stdin-closes", "--consent-tty"])
            .arg("--consent-timeout")
            .arg(launch.consent_timeout_secs.to_string())
            .stdin(Stdio::piped())
            .stdout(out)
            .stderr(err);
        let mut child = cmd.spawn().context("starting the gate (seam gate)")?;
        let stdin = child.stdin.take();
        let mut me = GateChild {
            child: Some(child),
            stdin,
            log,
        };
        let mut client = GateClient::new(GateEndpoint::unix_in(launch.seam_home));
        let started = Instant::now();
        loop {
            if client.health().await.is_ok() {
                return Ok(me);
            }
            if let Some(status) = me.child.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                me.child = None;
                bail!(
                    "the gate stopped at once ({status}); its last words, from {}:\n{}",
                    me.log.display(),
                    tail(&me.log, 8)
                );
            }
            if started.elapsed() > wait {
                bail!(
                    "the gate did not answer within {wait:?}; see {}",
                    me.log.display()
                );
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// Stops the gate gracefully (its stdin closed), killing it if it takes too long (a
    /// kill the agent's walls may refuse: then the gate ends when this process does).
    pub fn stop(&mut self) -> anyhow::Result<()> {
        drop(self.stdin.take());
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match child.try_wait() {
                Ok(Some(status)) if status.success() => return Ok(()),
                Ok(Some(status)) => bail!(
                    "the gate ended with {status} while stopping; see {}",
                    self.log.display()
                ),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    bail!(
                        "the gate did not stop within 10 s and was killed; see {}",
                        self.log.display()
                    );
                }
            }
        }
    }
}

impl Drop for GateChild {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}
