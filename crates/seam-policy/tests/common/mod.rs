//! A fake owner's home, seam home and workspace in a temp dir, shared by the integration tests.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use seam_home::SeamHome;
use seam_policy::{PathAdmission, PathRefusal, Policy, PolicyEnv};
use tempfile::TempDir;

/// What a protected key holds; no test may ever read these bytes through admission.
pub const KEY: &[u8] = b"-----BEGIN OPENSSH PRIVATE KEY-----\nprotected key bytes\n-----END OPENSSH PRIVATE KEY-----\n";
pub const HELLO: &[u8] = b"hello\n";

#[derive(Debug)]
pub struct Fixture {
    pub dir: TempDir,
    /// The temp dir itself, canonical.
    pub root: PathBuf,
    pub home: PathBuf,
    pub seam: PathBuf,
    pub ws: PathBuf,
}

impl Fixture {
    pub fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let home = root.join("home");
        let seam = root.join("seam-home");
        let layout = SeamHome::new(&seam);
        let ws = root.join("ws");
        for d in [
            home.join(".ssh"),
            home.join("notes"),
            layout.keys(),
            layout.ledger(),
            layout.staging(),
            ws.join("src"),
        ] {
            fs::create_dir_all(d).unwrap();
        }
        fs::write(home.join(".ssh/id_rsa"), KEY).unwrap();
        fs::write(home.join("notes/hello.txt"), HELLO).unwrap();
        fs::write(layout.keys().join("signing.key"), KEY).unwrap();
        fs::write(layout.ledger().join("head"), b"head").unwrap();
        fs::write(ws.join("src/main.rs"), b"fn main() {}\n").unwrap();
        Fixture {
            dir,
            root,
            home,
            seam,
            ws,
        }
    }

    pub fn env(&self) -> PolicyEnv {
        PolicyEnv {
            owner_home: self.home.clone(),
            seam_home: self.seam.clone(),
            workspace_root: self.ws.clone(),
        }
    }

    /// Admission under the built-in default policy.
    pub fn admission(&self) -> PathAdmission {
        PathAdmission::new(Arc::new(Policy::builtin(self.env())))
    }

    /// Admission under a policy file's text.
    pub fn admission_with(&self, toml: &str) -> PathAdmission {
        let policy = Policy::from_toml_str(toml, Path::new("test-policy.toml"), self.env())
            .unwrap_or_else(|e| panic!("policy: {e}"));
        PathAdmission::new(Arc::new(policy))
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }
}

pub fn os(s: &str) -> &OsStr {
    OsStr::new(s)
}

pub fn os_bytes(b: &[u8]) -> &OsStr {
    OsStr::from_bytes(b)
}

pub fn p(path: &Path) -> &OsStr {
    path.as_os_str()
}

/// The refusal, or a panic naming what was admitted instead.
#[track_caller]
pub fn refused<T: std::fmt::Debug>(r: Result<T, PathRefusal>) -> PathRefusal {
    match r {
        Ok(v) => panic!("expected a refusal, got {v:?}"),
        Err(refusal) => refusal,
    }
}
