//! seam's home on disk: where each thing lives in it, and how a file there is written.
//!
//! It owns two things every seam crate that touches seam's home needs:
//!
//! - [`layout`]: the home's layout ([`SeamHome`], a method per place), with what is protected
//!   there and what the agent's walls let it write side by side, as two lists about one tree;
//! - [`file`]: the one implementation of owner-only directories and files, atomic replacement
//!   and locks, used by the ledger, the keeper, the gate's tokens and MCP fingerprints, the
//!   policy file's edits, the memory stores, the return queue and the model downloads (a
//!   file written in pieces, then installed: [`file::Staged`]).
//!
//! What it must never do: depend on another seam crate (every crate that writes a file can
//! use it, the agent's side included), decide anything about a file's content or enforce a
//! wall (the policy and seam-confine do, reading these lists), hold a secret value longer
//! than the write, or print.

pub mod file;
pub mod layout;

pub use file::{FileError, Lock};
pub use layout::SeamHome;
