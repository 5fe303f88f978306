//! The JSON bodies of `/v1` besides the envelope and the refusal. They live in
//! `seam-protocol` so a client (the agent) has them without this crate.

pub use seam_protocol::wire::*;
