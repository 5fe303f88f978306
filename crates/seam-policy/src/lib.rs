//! The policy and path admission: what the gate's tools may touch.
//!
//! This crate owns three things:
//! - the **policy** ([`Policy`]): a TOML file (or the embedded default) that gives every
//!   [`Capability`] a [`Decision`] and holds the path lists — the read and write allow-lists and
//!   the protected deny-list, which adds to a built-in list no file can shrink (its entries are
//!   typed [`ProtectedRule`]s: a file or tree, a path with `*` names such as
//!   `~/.var/app/*/.mozilla`, or a file name anywhere such as `*.kdbx`), and says whether a
//!   tainted turn keeps its way out (`[taint] egress`, [`TaintEgress`]), and which
//!   destinations an egress call in a tainted turn may still reach (`[egress] destinations`,
//!   [`DestinationPattern`]; see [`destination`]). Parsing is strict:
//!   an unknown key or a bad value is an error naming the key and its line. [`EnforcedPolicy`] is
//!   the policy as enforced (`seam policy show`);
//! - **lexical normalisation** ([`lexical`]): a raw path made into a clean absolute path, with
//!   `~`/`~/` expanded and everything else that looks like shell syntax refused;
//! - **path admission** ([`PathAdmission`]): whether a tool may use a path for an [`Access`],
//!   decided about the file that is actually opened. See the `admission` module for the order
//!   of the checks; the short form: normalise, capability, protected list, allow-list, then open
//!   an `O_PATH` handle and ask both lists again about where the kernel says it really is, its
//!   `(device, inode)` and its other names, and only then reopen that same handle to read.
//!
//! What it must never do: read a byte of a file before deciding about it; decide about one file
//! and open another (a check on a name, then an open of the name); follow a `/proc` magic link
//! or admit anything in `/proc`, `/sys` or another kernel file system;
//! block on a FIFO or open a device for reading; take `~user`, `$VAR` or other shell syntax
//! literally; let a policy file remove a built-in protected entry; accept a policy file with a
//! key or a value it does not understand. It holds no `unsafe` (rustix's safe calls only), does
//! no printing, and knows nothing of tools, the terminal or the ledger.

pub mod admission;
pub mod destination;
mod fsops;
pub mod lexical;
mod lists;
pub mod policy;
mod resolve;
pub mod rules;
pub mod strict_toml;
mod write;

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;

pub use admission::{AdmittedFile, AdmittedPath, PathAdmission, PathRefusal};
pub use destination::{
    Destination, DestinationAllowList, DestinationError, DestinationPattern, Endorsed, Endorser,
    OperatorWords, Unendorsed, destination_decision, endorse,
};
pub use policy::{
    EnforcedDecisions, EnforcedDestination, EnforcedEgress, EnforcedFilesystem, EnforcedOrigin,
    EnforcedPath, EnforcedPattern, EnforcedPatternKind, EnforcedPolicy, EnforcedTaint, Policy,
    PolicyError, PolicyOrigin, TaintEgress,
};
pub use rules::{NameGlob, ProtectedRule, RuleError, WildcardPath};
pub use write::{PolicyWriteError, add_consent_always};

/// A policy decision. Ordered so that the strictest of several wins: `max()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Allow,
    Ask,
    Deny,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        }
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a tool's use of the world amounts to; the policy decides each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Capability {
    FilesystemRead,
    FilesystemWrite,
    SelfModify,
    PythonRun,
    WebSearch,
    /// Fetching one page of the web by URL (`web.fetch`): a way out, like a search.
    WebFetch,
    Memory,
    /// Facts about the machine, by enumerated name (`facts.get`): never a path.
    Facts,
}

impl Capability {
    pub const ALL: [Capability; 8] = [
        Capability::FilesystemRead,
        Capability::FilesystemWrite,
        Capability::SelfModify,
        Capability::PythonRun,
        Capability::WebSearch,
        Capability::Memory,
        Capability::Facts,
        Capability::WebFetch,
    ];

    /// The name used in the policy file (`filesystem.read`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Capability::FilesystemRead => "filesystem.read",
            Capability::FilesystemWrite => "filesystem.write",
            Capability::SelfModify => "self.modify",
            Capability::PythonRun => "python.run",
            Capability::WebSearch => "web.search",
            Capability::Memory => "memory",
            Capability::Facts => "facts",
            Capability::WebFetch => "web.fetch",
        }
    }

    /// The capability with this policy-file name (exact, case-sensitive).
    pub fn from_name(name: &str) -> Option<Capability> {
        Capability::ALL.into_iter().find(|c| c.as_str() == name)
    }

    fn index(self) -> usize {
        match self {
            Capability::FilesystemRead => 0,
            Capability::FilesystemWrite => 1,
            Capability::SelfModify => 2,
            Capability::PythonRun => 3,
            Capability::WebSearch => 4,
            Capability::Memory => 5,
            Capability::Facts => 6,
            Capability::WebFetch => 7,
        }
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where the policy's relative names point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyEnv {
    /// The owner's home (`$HOME`): what `~` expands to.
    pub owner_home: PathBuf,
    /// seam's own state (`--home`).
    pub seam_home: PathBuf,
    /// Relative tool paths are relative to this (the gate's working directory at start).
    pub workspace_root: PathBuf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileAccess {
    Read,
    Write,
}

/// What a tool does with a path parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// A path among the owner's files, read or written: the read or write allow-list.
    Owner(FileAccess),
    /// A path inside the gate's workspace root (the source tree a tool indexes): read, under
    /// `filesystem.read`, allow-list = the workspace root.
    Source,
}

impl Access {
    /// The capability whose decision governs this access.
    pub fn capability(self) -> Capability {
        match self {
            Access::Owner(FileAccess::Write) => Capability::FilesystemWrite,
            Access::Owner(FileAccess::Read) | Access::Source => Capability::FilesystemRead,
        }
    }

    /// True for the accesses that only read (consent cannot be waited for).
    pub fn is_read(self) -> bool {
        !matches!(self, Access::Owner(FileAccess::Write))
    }
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Access::Owner(FileAccess::Read) => "read",
            Access::Owner(FileAccess::Write) => "write",
            Access::Source => "source",
        })
    }
}
