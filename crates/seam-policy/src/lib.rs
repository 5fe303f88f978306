//! The policy and path admission (stub: the API the gate builds against; being written).

use std::ffi::OsStr;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use seam_protocol::RefusalCode;
use serde::Serialize;

/// A policy decision. Ordered so that the strictest of several wins: `max()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Allow,
    Ask,
    Deny,
}

/// What a tool's use of the world amounts to; the policy decides each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Capability {
    FilesystemRead,
    FilesystemWrite,
    SelfModify,
    PythonRun,
    WebSearch,
    Memory,
}

impl Capability {
    pub const ALL: [Capability; 6] = [
        Capability::FilesystemRead,
        Capability::FilesystemWrite,
        Capability::SelfModify,
        Capability::PythonRun,
        Capability::WebSearch,
        Capability::Memory,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Capability::FilesystemRead => "filesystem.read",
            Capability::FilesystemWrite => "filesystem.write",
            Capability::SelfModify => "self.modify",
            Capability::PythonRun => "python.run",
            Capability::WebSearch => "web.search",
            Capability::Memory => "memory",
        }
    }
}

/// Where the policy's relative names point.
#[derive(Debug, Clone)]
pub struct PolicyEnv {
    /// The owner's home (`$HOME`): what `~` expands to.
    pub owner_home: PathBuf,
    /// seam's own state (`--home`).
    pub seam_home: PathBuf,
    /// Relative tool paths are relative to this (the gate's working directory at start).
    pub workspace_root: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("{0}")]
    Invalid(String),
}

#[derive(Debug)]
pub struct Policy {
    env: PolicyEnv,
}

impl Policy {
    pub fn builtin(env: PolicyEnv) -> Policy {
        Policy { env }
    }

    pub fn load(_file: Option<&Path>, env: PolicyEnv) -> Result<Policy, PolicyError> {
        Ok(Policy { env })
    }

    pub fn decision(&self, _cap: Capability) -> Decision {
        Decision::Allow
    }

    pub fn env(&self) -> &PolicyEnv {
        &self.env
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileAccess {
    Read,
    Write,
}

/// What a tool does with a path parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Owner(FileAccess),
    Source,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathRefusal {
    pub code: RefusalCode,
    pub message: String,
}

#[derive(Debug, Clone)]
pub struct AdmittedPath {
    pub real: PathBuf,
}

#[derive(Debug)]
pub struct AdmittedFile {
    pub file: File,
    pub real: PathBuf,
}

#[derive(Debug)]
pub struct PathAdmission {
    policy: Arc<Policy>,
}

impl PathAdmission {
    pub fn new(policy: Arc<Policy>) -> Self {
        PathAdmission { policy }
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    pub fn admitted_path(&self, _access: Access, raw: &OsStr) -> Result<AdmittedPath, PathRefusal> {
        Ok(AdmittedPath { real: PathBuf::from(raw) })
    }

    pub fn open_read(&self, _access: Access, raw: &OsStr) -> Result<AdmittedFile, PathRefusal> {
        let real = PathBuf::from(raw);
        let file = File::open(&real).map_err(|e| PathRefusal {
            code: RefusalCode::NotFound,
            message: e.to_string(),
        })?;
        Ok(AdmittedFile { file, real })
    }
}
