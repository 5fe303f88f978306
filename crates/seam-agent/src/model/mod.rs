//! The model: what the turn loop asks of it ([`ChatModel`]), and the client
//! for OpenAI-compatible servers ([`OpenAiClient`]: llama.cpp's server,
//! Ollama, vLLM, LM Studio).
//!
//! The trait is small on purpose so the embedded engine (another crate) can
//! stand behind it through an adapter in the binary.

mod openai;
mod schema;
mod sse;

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use openai::{ModelEndpoint, OpenAiClient, OpenAiOptions, SchemaGrammar};
pub use schema::JsonSchema;
pub use sse::{SseEvent, SseParser};

/// One message of the conversation, as chat templates know them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// `system`, `user` or `assistant`.
    pub role: String,
    pub content: String,
}

impl ChatMessage {
    pub fn system(content: impl Into<String>) -> Self {
        Self::with_role("system", content)
    }
    pub fn user(content: impl Into<String>) -> Self {
        Self::with_role("user", content)
    }
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::with_role("assistant", content)
    }
    fn with_role(role: &str, content: impl Into<String>) -> Self {
        ChatMessage {
            role: role.to_owned(),
            content: content.into(),
        }
    }
}

/// What one step asks of the model.
#[derive(Debug, Clone)]
pub struct ChatRequest {
    pub messages: Vec<ChatMessage>,
    /// Most tokens to generate for this reply.
    pub max_tokens: u32,
    /// 0 asks for the most likely reply; above it, a sampled one.
    pub temperature: f32,
    /// The seed of a sampled reply, so that the same request gives it again
    /// (`None`: the backend's own).
    pub seed: Option<u32>,
    /// When set, decoding is constrained to this JSON Schema where the
    /// backend can (the action schema built from the registry), given to
    /// every backend as the same text.
    pub json_schema: Option<JsonSchema>,
}

/// The model's reply to one request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Completion {
    /// The reply's text as the model wrote it (think blocks included when the
    /// server passes them on; a separate reasoning channel is kept apart).
    pub text: String,
    /// Reasoning the server returned in its own field (`reasoning_content`).
    pub reasoning: String,
    pub prompt_tokens: Option<u32>,
    pub completion_tokens: Option<u32>,
    /// `stop`, `length`, … as the server said.
    pub finish_reason: Option<String>,
    /// Whether decoding really was constrained to the schema.
    pub constrained: bool,
    /// Requests that were retried (429, 5xx, a dropped connection before the
    /// first byte) before this one answered.
    pub retries: u32,
    /// Time the request took, including retries.
    pub elapsed: Duration,
    /// Notes about how the backend was used (a refused schema constraint
    /// retried without it, …), for the trace.
    pub notes: Vec<String>,
}

/// Why a model gave no reply.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error(
        "no model server answers at {url}: {reason} (start one, e.g. `llama-server -m MODEL.gguf \
         --port 8080`, or `ollama serve`; or give another --model-url)"
    )]
    Unreachable { url: String, reason: String },
    #[error("the model server at {url} has no model {model:?}{available}")]
    UnknownModel {
        url: String,
        model: String,
        /// ` (it serves: a, b)` when the server listed its models.
        available: String,
    },
    #[error("the model server at {url} answered {status}: {message}")]
    Status {
        url: String,
        status: u16,
        message: String,
    },
    #[error(
        "the model server at {url} stopped in the middle of its reply ({reason}); the {received} bytes received so far are kept in the trace"
    )]
    Interrupted {
        url: String,
        reason: String,
        received: usize,
        partial: String,
    },
    #[error("the model server at {url} sent a reply that is not OpenAI chat JSON: {reason}")]
    Protocol { url: String, reason: String },
    #[error("the model took longer than {limit:?} ({what})")]
    Timeout { limit: Duration, what: &'static str },
    #[error("the model server URL {url:?} is not usable: {reason}")]
    BadUrl { url: String, reason: String },
    #[error("the embedded model failed: {0}")]
    Engine(String),
}

impl ModelError {
    /// The text received before the failure, if any.
    pub fn partial(&self) -> Option<&str> {
        match self {
            ModelError::Interrupted { partial, .. } => Some(partial),
            _ => None,
        }
    }
}

/// A boxed future, so the trait stays object-safe.
pub type ModelFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Completion, ModelError>> + Send + 'a>>;

/// Something that answers chat requests: a model server or the embedded engine.
pub trait ChatModel: Send {
    /// A short description for the trace and the first line of `seam ask`
    /// (`http://127.0.0.1:8080 qwen2.5-coder`, `embedded smollm2-135m`).
    fn describe(&self) -> String;

    /// One reply. `on_text` receives the reply's text as it streams in.
    fn complete<'a>(
        &'a mut self,
        request: &'a ChatRequest,
        on_text: &'a mut (dyn FnMut(&str) + Send),
    ) -> ModelFuture<'a>;
}
