//! A throwaway owner: a home, a seam home and a workspace inside one temp dir,
//! and a `seam` command that runs as that owner.
#![allow(dead_code, clippy::new_without_default)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;

#[derive(Debug)]
pub struct Owner {
    pub dir: tempfile::TempDir,
    pub home: PathBuf,
    pub seam_home: PathBuf,
    pub workspace: PathBuf,
}

impl Owner {
    pub fn new() -> Owner {
        // Canonical from the start, so expected real paths compare equal.
        let seam_test_support::home::OwnerTree {
            dir,
            home,
            seam_home,
            workspace,
            ..
        } = seam_test_support::home::OwnerTree::new();
        Owner {
            dir,
            home,
            seam_home,
            workspace,
        }
    }

    /// The places in this owner's seam home, as seam lays them out.
    pub fn layout(&self) -> seam_home::SeamHome {
        seam_home::SeamHome::new(&self.seam_home)
    }

    pub fn write(&self, rel: &str, content: &[u8]) -> PathBuf {
        let p = self.home.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, content).unwrap();
        p
    }

    /// `seam` as this owner, in the workspace, with no policy file unless given.
    pub fn seam(&self) -> Command {
        let mut cmd = Command::cargo_bin("seam").unwrap();
        cmd.env_clear()
            .env("HOME", &self.home)
            .env("SEAM_HOME", &self.seam_home)
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .current_dir(&self.workspace)
            .timeout(std::time::Duration::from_secs(30));
        cmd
    }

    /// `seam` as this owner, in the workspace, as a process to spawn (one that serves, or
    /// one waited on while another answers it).
    pub fn seam_process(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("seam"));
        cmd.env_clear()
            .env("HOME", &self.home)
            .env("SEAM_HOME", &self.seam_home)
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .current_dir(&self.workspace);
        cmd
    }

    /// git in the workspace, as this owner (an identity given on the command line), asserting
    /// it succeeded; its stdout, trimmed.
    pub fn git(&self, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .args([
                "-c",
                "user.name=Owner",
                "-c",
                "user.email=owner@example.invalid",
            ])
            .args(args)
            .current_dir(&self.workspace)
            .env("HOME", &self.home)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    pub fn policy(&self, toml: &str) -> PathBuf {
        let p = self.dir.path().join("policy.toml");
        std::fs::write(&p, toml).unwrap();
        p
    }
}

/// A `seam gate` serving the owner's home, started once its socket and turn opener are in
/// place, stopped (SIGTERM) on drop.
pub struct ServiceGate(std::process::Child);

impl ServiceGate {
    pub fn start(owner: &Owner) -> ServiceGate {
        let child = owner
            .seam_process()
            .arg("gate")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !(owner.layout().gate_socket().exists() && owner.layout().turn_opener().exists()) {
            assert!(
                std::time::Instant::now() < deadline,
                "the gate did not start"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        ServiceGate(child)
    }
}

impl Drop for ServiceGate {
    fn drop(&mut self) {
        if let Some(pid) = rustix::process::Pid::from_raw(self.0.id() as i32) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        }
        let _ = self.0.wait();
    }
}

/// Runs `seam invoke files.read` and returns (exit code, answer JSON).
pub fn read(owner: &Owner, params: serde_json::Value) -> (i32, serde_json::Value) {
    let out = owner
        .seam()
        .args(["invoke", "files.read", &params.to_string()])
        .output()
        .unwrap();
    let code = out.status.code().unwrap_or(-1);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (code, v)
}

pub fn refusal_code(v: &serde_json::Value) -> &str {
    v["refused"]["code"]
        .as_str()
        .unwrap_or_else(|| panic!("not a refusal: {v}"))
}

pub fn refusal_message(v: &serde_json::Value) -> &str {
    v["refused"]["message"].as_str().unwrap()
}

pub fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}
pub mod replay;
