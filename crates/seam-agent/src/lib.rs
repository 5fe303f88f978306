//! The agent: it drives a local model and routes the model's actions.
//!
//! It owns the model client (and, with the `embedded` feature, the adapter of the
//! in-process model, [`embedded`]), its config file ([`config`]), the system prompt,
//! dispatch with the design's corrections and the turn loop. It holds no credentials and no egress: it
//! reaches the governed tools only through the gate's HTTP `/v1`
//! ([`gate_client`]), with the wire types of `seam-protocol`.
//!
//! It must never depend on `seam-gate`, `seam-sandbox` or the keeper, and it
//! never prints: the binary's output module does.

pub mod config;
pub mod days;
pub mod dispatch;
#[cfg(feature = "embedded")]
pub mod embedded;
pub mod gate_client;
pub mod model;
pub mod observe;
pub mod prompt;
pub mod reading;
pub mod registry;
pub mod trace;
pub mod turn;
