//! What seam's tests share: the fixtures that were written again in each crate's tests.
//!
//! - [`answer`]: a gate's answer read back: its output, or its refusal;
//! - [`git`]: git run in a directory as a throwaway identity, signing off;
//! - [`home`]: a throwaway owner: a home, a seam home and a workspace in one temporary directory;
//! - [`http`]: a loopback HTTP/1.1 server that records each request and answers as scripted,
//!   and a port where nothing listens;
//! - [`mcp`]: the checks that a test's MCP peers are installed, naming the install command;
//! - [`fs`]: what an adversarial file test plants (a FIFO).
//!
//! It is only ever a dev-dependency (`publish = false`): no library or binary links it (the
//! dependency rules' table has no crate depending on it), and it depends on no seam crate but
//! the wire types (`seam-protocol`), so every crate's tests can use it. Its helpers panic on
//! failure, as a test fixture does.

pub mod answer;
pub mod fs;
pub mod git;
pub mod home;
pub mod http;
pub mod mcp;
