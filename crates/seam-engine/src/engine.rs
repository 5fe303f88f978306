//! llama.cpp in-process: load a GGUF model, keep one context per session, and
//! generate chat replies, optionally constrained to a JSON schema.
//!
//! Sampling is done here rather than with llama.cpp's `sample()`, because of
//! two traps seen in practice:
//! - `sample()` already advances the grammar; calling `accept()` after it
//!   advances it twice and crashes llama.cpp. Here tokens are picked from the
//!   logits directly and each one is accepted by the grammar exactly once.
//! - Running the grammar over the whole vocabulary at every step halves the
//!   speed. Here the unconstrained choice is checked against the grammar alone
//!   (one candidate), and the full pass runs only when the grammar rejects it.

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;

use crate::{ChatMessage, Finish, Generation};

/// How to run a model.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineOptions {
    /// Threads for decoding. Default: [`default_threads`] (1 on a 2-core machine).
    pub threads: u32,
    /// The context window in tokens (prompt and reply together).
    pub ctx_len: u32,
    /// Most prompt tokens decoded in one batch.
    pub batch: u32,
    /// 0 picks the most likely token (deterministic); above 0 samples with
    /// top-k 40 and top-p 0.95 at this temperature.
    pub temperature: f32,
    /// Seed for sampling when `temperature` is above 0.
    pub seed: u32,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            threads: default_threads(),
            ctx_len: 4096,
            batch: 512,
            temperature: 0.0,
            seed: 0,
        }
    }
}

/// Decoding threads when none are configured: 1 on a machine with 2 cores or
/// fewer (a second thread slowed generation 2–50× whenever anything else ran),
/// else half the cores, at most 8.
pub fn default_threads() -> u32 {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    if cores <= 2 { 1 } else { (cores / 2).min(8) }
}

/// Why the engine failed.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("the llama.cpp backend could not start: {0}")]
    Backend(String),
    #[error("loading the model {path}: {reason}")]
    Load { path: PathBuf, reason: String },
    #[error("the model {path} has no chat template")]
    NoChatTemplate { path: PathBuf },
    #[error("creating a context of {ctx_len} tokens: {reason}")]
    Context { ctx_len: u32, reason: String },
    #[error("a chat message holds a NUL byte (role {role:?})")]
    NulInMessage { role: String },
    #[error("applying the model's chat template: {0}")]
    Template(String),
    #[error(
        "the prompt is {prompt_tokens} tokens and up to {max_tokens} may be generated, \
         more than the context of {ctx_len} tokens"
    )]
    ContextFull {
        prompt_tokens: usize,
        max_tokens: u32,
        ctx_len: u32,
    },
    #[error("the JSON schema cannot be turned into a grammar: {0}")]
    Schema(String),
    #[error("llama.cpp failed to decode: {0}")]
    Decode(String),
    #[error("the grammar refused a token it allowed a moment before: {0}")]
    Grammar(String),
}

/// The process's one llama.cpp backend; its logs go to `tracing` (targets
/// `llama.cpp` and `ggml`), never straight to the terminal.
fn backend() -> Result<&'static LlamaBackend, EngineError> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            llama_cpp_2::send_logs_to_tracing(llama_cpp_2::LogOptions::default());
            LlamaBackend::init().map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| EngineError::Backend(e.clone()))
}

/// A loaded model.
pub struct Engine {
    model: LlamaModel,
    template: LlamaChatTemplate,
    options: EngineOptions,
    path: PathBuf,
    load_ms: u64,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("path", &self.path)
            .field("options", &self.options)
            .field("load_ms", &self.load_ms)
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// Loads the GGUF model at `path` (memory-mapped) with its chat template.
    pub fn load(path: &Path, options: EngineOptions) -> Result<Engine, EngineError> {
        let start = Instant::now();
        let backend = backend()?;
        if !path.is_file() {
            return Err(EngineError::Load {
                path: path.into(),
                reason: "no such file".into(),
            });
        }
        let model = LlamaModel::load_from_file(backend, path, &LlamaModelParams::default())
            .map_err(|e| EngineError::Load {
                path: path.into(),
                reason: e.to_string(),
            })?;
        let template = model
            .chat_template(None)
            .map_err(|_| EngineError::NoChatTemplate { path: path.into() })?;
        Ok(Engine {
            model,
            template,
            options: EngineOptions {
                threads: options.threads.max(1),
                ctx_len: options.ctx_len.max(64),
                batch: options.batch.max(1),
                ..options
            },
            path: path.into(),
            load_ms: start.elapsed().as_millis() as u64,
        })
    }

    /// Milliseconds the load took.
    pub fn load_ms(&self) -> u64 {
        self.load_ms
    }

    /// The options in force.
    pub fn options(&self) -> &EngineOptions {
        &self.options
    }

    /// A new conversation with its own context (KV cache). One `seam ask`
    /// uses one session so each step decodes only what it adds.
    pub fn session(&self) -> Result<Session<'_>, EngineError> {
        let ctx_len = self.options.ctx_len;
        let threads = self.options.threads as i32;
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(ctx_len))
            .with_n_batch(self.options.batch)
            .with_n_ubatch(self.options.batch)
            .with_n_threads(threads)
            .with_n_threads_batch(threads);
        let ctx = self
            .model
            .new_context(backend()?, params)
            .map_err(|e| EngineError::Context {
                ctx_len,
                reason: e.to_string(),
            })?;
        Ok(Session {
            engine: self,
            ctx,
            cached: Vec::new(),
        })
    }

    /// The prompt text the chat template makes of `messages`, ending where the
    /// assistant's reply begins.
    pub fn render(&self, messages: &[ChatMessage]) -> Result<String, EngineError> {
        let chat = messages
            .iter()
            .map(|m| {
                LlamaChatMessage::new(m.role.clone(), m.content.clone()).map_err(|_| {
                    EngineError::NulInMessage {
                        role: m.role.clone(),
                    }
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.model
            .apply_chat_template(&self.template, &chat, true)
            .map_err(|e| EngineError::Template(e.to_string()))
    }

    fn tokenize(&self, prompt: &str) -> Vec<LlamaToken> {
        let vocab = self.model.vocab();
        let mut tokens = vocab.tokenize(prompt.as_bytes(), false, true);
        if vocab.should_add_bos() && tokens.first() != Some(&vocab.bos()) {
            tokens.insert(0, vocab.bos());
        }
        tokens
    }
}

/// One conversation: a context whose KV cache holds the tokens decoded so far.
pub struct Session<'e> {
    engine: &'e Engine,
    ctx: LlamaContext<'e>,
    /// The tokens whose keys and values are in the cache, in order.
    cached: Vec<LlamaToken>,
}

impl std::fmt::Debug for Session<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("cached_tokens", &self.cached.len())
            .finish_non_exhaustive()
    }
}

impl Session<'_> {
    /// Tokens in the KV cache now.
    pub fn cached_tokens(&self) -> usize {
        self.cached.len()
    }

    /// Applies the model's chat template to `messages`, reuses the KV cache for
    /// the prefix this session already decoded (each agent step adds only new
    /// tokens), and generates until end of generation or `max_tokens`,
    /// constrained to `json_schema` when one is given. `on_token` receives the
    /// text as it is generated (whole UTF-8 characters only).
    pub fn generate(
        &mut self,
        messages: &[ChatMessage],
        json_schema: Option<&serde_json::Value>,
        max_tokens: u32,
        on_token: &mut dyn FnMut(&str),
    ) -> Result<Generation, EngineError> {
        let engine = self.engine;
        let prompt = engine.render(messages)?;
        let tokens = engine.tokenize(&prompt);
        let ctx_len = self.ctx.n_ctx();
        if tokens.is_empty() || tokens.len() + max_tokens as usize > ctx_len as usize {
            return Err(EngineError::ContextFull {
                prompt_tokens: tokens.len(),
                max_tokens,
                ctx_len,
            });
        }
        let mut grammar = match json_schema {
            Some(schema) => Some(grammar_sampler(&engine.model, schema)?),
            None => None,
        };

        // Reuse the longest common prefix; at least the last prompt token is
        // decoded again so there are logits to sample from.
        let mut keep = self
            .cached
            .iter()
            .zip(&tokens)
            .take_while(|(a, b)| a == b)
            .count()
            .min(tokens.len() - 1);
        if keep < self.cached.len() {
            let removed = self
                .ctx
                .clear_kv_cache_seq(Some(0), Some(keep as u32), None)
                .unwrap_or(false);
            if !removed {
                self.ctx.clear_kv_cache();
                keep = 0;
            }
            self.cached.truncate(keep);
        }

        let prompt_start = Instant::now();
        let mut logits_at = 0;
        let batch_size = engine.options.batch as usize;
        for chunk in tokens[keep..].chunks(batch_size) {
            let mut batch = LlamaBatch::new(chunk.len(), 1);
            for (i, &t) in chunk.iter().enumerate() {
                let pos = self.cached.len() as i32;
                let last = self.cached.len() + 1 == tokens.len();
                batch
                    .add(t, pos, &[0], last)
                    .map_err(|e| EngineError::Decode(e.to_string()))?;
                self.cached.push(t);
                if last {
                    logits_at = i as i32;
                }
            }
            self.decode(&mut batch)?;
        }
        let prompt_ms = prompt_start.elapsed().as_millis() as u64;

        let gen_start = Instant::now();
        let mut chain = (engine.options.temperature > 0.0).then(|| {
            LlamaSampler::chain_simple([
                LlamaSampler::top_k(40),
                LlamaSampler::top_p(0.95, 1),
                LlamaSampler::temp(engine.options.temperature),
                LlamaSampler::dist(engine.options.seed),
            ])
        });
        let vocab = engine.model.vocab();
        let mut text = String::new();
        let mut pending: Vec<u8> = Vec::new();
        let mut generated = 0u32;
        let mut grammar_full_passes = 0u32;
        let mut finish = Finish::MaxTokens;
        while generated < max_tokens {
            let logits = self.ctx.get_logits_ith(logits_at);
            let mut token = pick(logits, None, chain.as_mut());
            if let Some(g) = grammar.as_mut() {
                if !grammar_allows(g, token, logits) {
                    grammar_full_passes += 1;
                    token = pick(logits, Some(g), chain.as_mut());
                }
                g.try_accept(token)
                    .map_err(|e| EngineError::Grammar(e.to_string()))?;
            }
            if vocab.is_eog(token) {
                finish = Finish::EndOfGeneration;
                break;
            }
            pending.extend_from_slice(&vocab.token_to_piece(token, false, None));
            let valid = match std::str::from_utf8(&pending) {
                Ok(s) => s.len(),
                Err(e) if e.error_len().is_some() => {
                    // Not UTF-8 and never will be: show it as replacement characters.
                    let lossy = String::from_utf8_lossy(&pending).into_owned();
                    pending = lossy.into_bytes();
                    pending.len()
                }
                Err(e) => e.valid_up_to(),
            };
            if valid > 0 {
                let piece = String::from_utf8_lossy(&pending[..valid]).into_owned();
                pending.drain(..valid);
                on_token(&piece);
                text.push_str(&piece);
            }
            generated += 1;
            let mut batch = LlamaBatch::new(1, 1);
            batch
                .add(token, self.cached.len() as i32, &[0], true)
                .map_err(|e| EngineError::Decode(e.to_string()))?;
            self.cached.push(token);
            self.decode(&mut batch)?;
            logits_at = 0;
        }
        if !pending.is_empty() {
            let rest = String::from_utf8_lossy(&pending).into_owned();
            on_token(&rest);
            text.push_str(&rest);
        }
        Ok(Generation {
            text,
            prompt_tokens: tokens.len() as u32,
            reused_tokens: keep as u32,
            generated_tokens: generated,
            prompt_ms,
            gen_ms: gen_start.elapsed().as_millis() as u64,
            finish,
            grammar_full_passes,
        })
    }

    fn decode(&mut self, batch: &mut LlamaBatch) -> Result<(), EngineError> {
        self.ctx.decode(batch).map_err(|e| {
            // A failed decode may leave part of the batch in the cache: start
            // the next generation from scratch rather than trust it.
            self.cached.clear();
            self.ctx.clear_kv_cache();
            EngineError::Decode(e.to_string())
        })
    }
}

fn grammar_sampler(
    model: &LlamaModel,
    schema: &serde_json::Value,
) -> Result<LlamaSampler, EngineError> {
    let gbnf = llama_cpp_2::json_schema_to_grammar(&schema_text(schema))
        .map_err(|e| EngineError::Schema(e.to_string()))?;
    LlamaSampler::grammar(model, &gbnf, "root").map_err(|e| EngineError::Schema(e.to_string()))
}

/// True if the grammar, in its current state, allows `token`.
fn grammar_allows(grammar: &mut LlamaSampler, token: LlamaToken, logits: &[f32]) -> bool {
    let logit = logits.get(token.0 as usize).copied().unwrap_or(0.0);
    let mut one = LlamaTokenDataArray::new(vec![LlamaTokenData::new(token, logit, 0.0)], false);
    one.apply_sampler(grammar);
    one.data[0].logit() != f32::NEG_INFINITY
}

/// The next token from `logits`: the grammar (if given) first removes what it
/// forbids, then either the most likely token or the sampling chain's choice.
fn pick(
    logits: &[f32],
    grammar: Option<&mut LlamaSampler>,
    chain: Option<&mut LlamaSampler>,
) -> LlamaToken {
    if grammar.is_none() && chain.is_none() {
        return argmax(logits.iter().copied().enumerate());
    }
    let mut array = LlamaTokenDataArray::from_iter(
        logits
            .iter()
            .enumerate()
            .map(|(i, &l)| LlamaTokenData::new(LlamaToken(i as i32), l, 0.0)),
        false,
    );
    if let Some(g) = grammar {
        array.apply_sampler(g);
    }
    match chain {
        Some(c) => {
            array.apply_sampler(c);
            array.selected_token().unwrap_or_else(|| {
                argmax(array.data.iter().map(|d| (d.id().0 as usize, d.logit())))
            })
        }
        None => argmax(array.data.iter().map(|d| (d.id().0 as usize, d.logit()))),
    }
}

fn argmax(items: impl Iterator<Item = (usize, f32)>) -> LlamaToken {
    let mut best = (0usize, f32::NEG_INFINITY);
    for (i, l) in items {
        if l > best.1 {
            best = (i, l);
        }
    }
    LlamaToken(best.0 as i32)
}

/// The schema as JSON text for llama.cpp, whose grammar asks for an object's
/// properties in the order the text lists them. serde_json's map is sorted,
/// which would put `params` before `tool`; so where an object schema has
/// `required`, its `properties` are written in the order of `required`, then
/// the others (sorted).
pub(crate) fn schema_text(schema: &serde_json::Value) -> String {
    let mut out = String::new();
    write_schema(schema, None, &mut out);
    out
}

fn write_schema(v: &serde_json::Value, order: Option<&[serde_json::Value]>, out: &mut String) {
    use serde_json::Value;
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            if let Some(order) = order {
                let rank = |k: &str| {
                    order
                        .iter()
                        .position(|r| r.as_str() == Some(k))
                        .unwrap_or(usize::MAX)
                };
                keys.sort_by_key(|k| rank(k));
            }
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String((*k).clone()).to_string());
                out.push(':');
                // Inside an object schema, `properties` is ordered by its sibling `required`.
                let child_order = (order.is_none() && k.as_str() == "properties")
                    .then(|| map.get("required").and_then(Value::as_array))
                    .flatten()
                    .map(Vec::as_slice);
                write_schema(&map[k.as_str()], child_order, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_schema(item, None, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::schema_text;

    #[test]
    fn properties_follow_the_order_of_required() {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {
                "params": {"type": "object", "properties": {"zz": {}, "aa": {}, "mm": {}}, "required": ["zz", "mm"]},
                "mode": {"const": "action"},
                "extra": {"type": "string"},
                "tool": {"enum": ["b", "a"]}
            },
            "required": ["mode", "tool", "params"]
        });
        let text = schema_text(&schema);
        let at = |s: &str| text.find(s).unwrap_or_else(|| panic!("{s} in {text}"));
        assert!(
            at("\"mode\"") < at("\"tool\"") && at("\"tool\"") < at("\"params\""),
            "{text}"
        );
        assert!(at("\"params\"") < at("\"extra\""), "{text}");
        assert!(
            at("\"zz\"") < at("\"mm\"") && at("\"mm\"") < at("\"aa\""),
            "{text}"
        );
        // The enum's order is kept, and the text is the same JSON value.
        assert!(text.contains("[\"b\",\"a\"]"), "{text}");
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, schema);
    }
}
