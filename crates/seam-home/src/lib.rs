//! seam's home on disk: how a file there is written.
//!
//! It owns the one implementation of owner-only directories and files, atomic replacement
//! and locks ([`file`]) that every seam crate writing a private or crash-safe file uses: the
//! ledger, the keeper, the gate's tokens and MCP fingerprints, the policy file's edits, the
//! memory stores.
//!
//! What it must never do: depend on another seam crate (every crate that writes a file can
//! use it, the agent's side included), decide anything about a file's content, hold a
//! secret value longer than the write, or print.

pub mod file;

pub use file::{FileError, Lock};
