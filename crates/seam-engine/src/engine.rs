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
//!
//! The system prompt is the same at the start of every turn, so its KV state
//! can be kept on disk ([`PromptCache`]): a session's first step then reads
//! the state from a file instead of decoding the prompt again. A file is used
//! only after it was checked, by seam before llama.cpp sees it (its size and
//! SHA-256 against the record written beside it, and the record's model,
//! build of seam and token digest against this prompt's) and by llama.cpp's
//! own reader (its
//! format, and the tokens it holds, which must be this prompt's); anything
//! else is reported in [`Generation::prompt_cache`] and the prompt is decoded
//! (and the file written again) as if there had been none.

use std::io::Read;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Instant, SystemTime};

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
use seam_home::file::{OWNER_ONLY, Staged, is_staged_name};
use sha2::{Digest, Sha256};

use crate::repetition::looping_tail;
use crate::{ChatMessage, Finish, Generation, PromptCacheUse};

/// How to run a model.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineOptions {
    /// Threads for generation (one token at a time). Default: [`default_threads`].
    pub threads: u32,
    /// Threads for reading the prompt (tokens in batches). Default: [`default_threads`].
    pub threads_batch: u32,
    /// The context window in tokens (prompt and reply together).
    pub ctx_len: u32,
    /// Most prompt tokens decoded in one batch.
    pub batch: u32,
    /// 0 picks the most likely token (deterministic); above 0 samples with
    /// top-k 40 and top-p 0.95 at this temperature. A request may ask for
    /// other [`Sampling`] ([`Session::generate_with`]).
    pub temperature: f32,
    /// Seed for sampling when `temperature` is above 0.
    pub seed: u32,
    /// Where the system prompt's KV state is kept between runs; `None` keeps
    /// nothing (every session decodes its whole first prompt).
    pub prompt_cache: Option<PromptCache>,
    /// Most tokens guessed ahead of each generated one and decoded with it in
    /// one batch (see `draft_after`); 0 decodes one token at a time.
    pub draft_tokens: u32,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            threads: default_threads(),
            threads_batch: default_threads(),
            ctx_len: 4096,
            batch: 512,
            temperature: 0.0,
            seed: 0,
            prompt_cache: None,
            draft_tokens: 8,
        }
    }
}

/// How one reply's tokens are picked: the most likely one at temperature 0
/// (deterministic), else sampled with top-k 40 and top-p 0.95 at this
/// temperature from this seed (the same seed, prompt and model give the same
/// reply).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampling {
    pub temperature: f32,
    pub seed: u32,
}

/// The environment variable that sets [`default_threads`].
pub const THREADS_ENV: &str = "SEAM_ENGINE_THREADS";

/// Threads when none are configured: `$SEAM_ENGINE_THREADS` if it is a number
/// above 0; else the cores this process may use
/// (`std::thread::available_parallelism`, at most 8) less those the rest of
/// the machine keeps busy, at least 1. Busy is read from `/proc/loadavg`
/// (where it can be read): the 1-minute load average, or the tasks running
/// right now besides this one if fewer (the average lags, and much of it may
/// be this program's own last run). llama.cpp's threads wait for each other at every
/// step of every token, so one that has to share its core with another
/// program holds all the others up: on a 2-core machine at load 4–5,
/// 2 threads generated 0.3–1.1 tokens/s where 1 thread generated 4.6.
pub fn default_threads() -> u32 {
    if let Some(n) = std::env::var(THREADS_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u32>().ok())
        .filter(|&n| n > 0)
    {
        return n;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let busy = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| busy_cores(&l));
    threads_for(cores, busy)
}

/// From `/proc/loadavg` ("0.98 2.37 3.21 3/102 18087"): the 1-minute load,
/// or the running tasks other than the reader if they are fewer.
fn busy_cores(loadavg: &str) -> Option<f64> {
    let mut fields = loadavg.split_whitespace();
    let load: f64 = fields.next()?.parse().ok()?;
    let running = fields
        .nth(2)
        .and_then(|f| f.split('/').next()?.parse::<u32>().ok())
        .map(|r| f64::from(r.saturating_sub(1)));
    Some(running.map_or(load, |r| r.min(load)))
}

/// The threads for `cores` cores when `busy` of them are kept busy by others.
fn threads_for(cores: u32, busy: Option<f64>) -> u32 {
    let cores = cores.clamp(1, 8);
    let busy = busy.filter(|b| b.is_finite() && *b > 0.0).unwrap_or(0.0);
    let free = (f64::from(cores) - busy).round();
    if free >= f64::from(cores) {
        cores
    } else if free <= 1.0 {
        1
    } else {
        free as u32
    }
}

/// Where the KV state of system prompts is kept on disk, and for which model.
///
/// The engine runs behind the agent's walls, which let it write only seam's
/// `staging/` and `agent/` directories: the caller passes `<seam_home>/agent/kv`.
/// Each entry is two files named by a key (the digest of the model's
/// identity, of the prompt's tokens and of the running build of seam, so a
/// state is only read by the llama.cpp that wrote it): `KEY.state`, llama.cpp's state of
/// sequence 0, and `KEY.json`, what it is for and the SHA-256 of the state
/// file. Entries beyond `max_entries` are removed, the least recently used first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptCache {
    /// The directory (made if missing).
    pub dir: PathBuf,
    /// What identifies the model file: the catalog's SHA-256 pin of it (or
    /// the file's own SHA-256). A state is never used with another model.
    pub model_id: String,
    /// Most entries kept.
    pub max_entries: usize,
}

impl PromptCache {
    /// A cache in `dir` for the model `model_id`, keeping up to 4 prompts.
    pub fn new(dir: impl Into<PathBuf>, model_id: impl Into<String>) -> PromptCache {
        PromptCache {
            dir: dir.into(),
            model_id: model_id.into(),
            max_entries: 4,
        }
    }
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
                threads_batch: options.threads_batch.max(1),
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
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(ctx_len))
            .with_n_batch(self.options.batch)
            .with_n_ubatch(self.options.batch)
            .with_n_threads(self.options.threads as i32)
            .with_n_threads_batch(self.options.threads_batch as i32);
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
        self.render_with(messages, true)
    }

    fn render_with(&self, messages: &[ChatMessage], add_ass: bool) -> Result<String, EngineError> {
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
            .apply_chat_template(&self.template, &chat, add_ass)
            .map_err(|e| EngineError::Template(e.to_string()))
    }

    /// The tokens of the prompt's leading system messages, if they begin
    /// `tokens` (the whole prompt) and something follows them; else why not.
    fn cacheable_prefix(
        &self,
        messages: &[ChatMessage],
        tokens: &[LlamaToken],
    ) -> Result<Vec<LlamaToken>, String> {
        let n = messages.iter().take_while(|m| m.role == "system").count();
        if n == 0 {
            return Err("the prompt does not begin with a system message".into());
        }
        let text = self
            .render_with(&messages[..n], false)
            .map_err(|e| format!("the system prompt alone: {e}"))?;
        let prefix = self.tokenize(&text);
        if prefix.len() < MIN_CACHED_TOKENS {
            return Err(format!(
                "the system prompt is {} tokens, too few to be worth a file",
                prefix.len()
            ));
        }
        if prefix.len() >= tokens.len() || !tokens.starts_with(&prefix) {
            return Err(
                "the chat template does not keep the system prompt apart at the start".into(),
            );
        }
        Ok(prefix)
    }

    /// Whether the grammar the engine decodes `schema` under admits `reply`
    /// whole: each of its tokens in turn, then the end of generation. What a
    /// test, or a replay of a logged reply, asks of the grammar without
    /// sampling anything.
    pub fn grammar_admits(&self, schema: &str, reply: &str) -> Result<bool, EngineError> {
        let mut grammar = grammar_sampler(&self.model, schema)?;
        let vocab = self.model.vocab();
        for token in vocab.tokenize(reply.as_bytes(), false, false) {
            if !grammar_allows(&mut grammar, token, &[]) || grammar.try_accept(token).is_err() {
                return Ok(false);
            }
        }
        Ok(grammar_allows(&mut grammar, vocab.eos(), &[]))
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
    /// constrained to `json_schema` when one is given: a JSON Schema as text,
    /// whose objects' properties llama.cpp's grammar asks for in the order
    /// the text lists them (the caller decides that order). `on_token` receives the
    /// text as it is generated (whole UTF-8 characters only). Tokens are
    /// picked as the engine's options say ([`EngineOptions::temperature`]).
    pub fn generate(
        &mut self,
        messages: &[ChatMessage],
        json_schema: Option<&str>,
        max_tokens: u32,
        on_token: &mut dyn FnMut(&str),
    ) -> Result<Generation, EngineError> {
        let sampling = Sampling {
            temperature: self.engine.options.temperature,
            seed: self.engine.options.seed,
        };
        self.generate_with(messages, json_schema, max_tokens, sampling, on_token)
    }

    /// [`Session::generate`], picking this reply's tokens by `sampling`
    /// instead of the engine's options (a request that asks for another
    /// reply than the most likely one).
    pub fn generate_with(
        &mut self,
        messages: &[ChatMessage],
        json_schema: Option<&str>,
        max_tokens: u32,
        sampling: Sampling,
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
        // A session that does not hold the system prompt yet takes its state
        // from the cache, or decodes it and writes it there.
        let mut prompt_cache = None;
        let mut reused = keep;
        if let Some(cache) = engine.options.prompt_cache.as_ref() {
            match engine.cacheable_prefix(messages, &tokens) {
                Ok(prefix) if keep < prefix.len() => {
                    let used = self.use_prompt_cache(cache, &prefix)?;
                    keep = self.cached.len();
                    reused = match used {
                        PromptCacheUse::Read { .. } => keep,
                        _ => 0,
                    };
                    prompt_cache = Some(used);
                }
                Ok(_) => {}
                Err(reason) if keep == 0 => {
                    prompt_cache = Some(PromptCacheUse::Unsuitable { reason });
                }
                Err(_) => {}
            }
        }
        let mut logits_at = self.feed(&tokens[keep..], true)?;
        let prompt_ms = prompt_start.elapsed().as_millis() as u64;

        let gen_start = Instant::now();
        let mut chain = (sampling.temperature > 0.0).then(|| {
            LlamaSampler::chain_simple([
                LlamaSampler::top_k(40),
                LlamaSampler::top_p(0.95, 1),
                LlamaSampler::temp(sampling.temperature),
                LlamaSampler::dist(sampling.seed),
            ])
        });
        let vocab = engine.model.vocab();
        let max_draft = if engine.model.is_recurrent() || engine.model.is_hybrid() {
            // Their state cannot be cut back to a position: no draft to drop.
            0
        } else {
            engine.options.draft_tokens as usize
        };
        let mut text = String::new();
        let mut pending: Vec<u8> = Vec::new();
        let mut generated = 0u32;
        let mut grammar_full_passes = 0u32;
        let mut drafted = 0u32;
        let mut draft_accepted = 0u32;
        let mut finish = Finish::MaxTokens;
        // Tokens decoded after the last accepted one on a guess (see
        // `draft_after`): in the KV cache after `self.cached`, with the logits
        // that follow `draft[i]` at batch index `logits_at + 1 + i`.
        let mut draft: Vec<LlamaToken> = Vec::new();
        // The reply's tokens, for the loop check.
        let mut reply: Vec<LlamaToken> = Vec::new();
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
            // Is the picked token already decoded, as the draft's next one?
            let decoded = draft.first() == Some(&token);
            if decoded {
                draft.remove(0);
                draft_accepted += 1;
                self.cached.push(token);
                logits_at += 1;
            } else if !draft.is_empty() {
                draft.clear();
                self.drop_from(self.cached.len())?;
            }
            if vocab.is_eog(token) {
                finish = Finish::EndOfGeneration;
                if decoded {
                    // End of generation is never kept in the cache.
                    self.cached.pop();
                    draft.clear();
                    self.drop_from(self.cached.len())?;
                }
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
            reply.push(token);
            if looping_tail(&reply) {
                // qwen2.5-coder-1.5b wrote `\b` into a regular expression
                // for 1000 tokens (five minutes) before its budget ran out.
                // A draft decoded past it is dropped below.
                finish = Finish::Repetition;
                break;
            }
            if decoded {
                // The logits that follow it are there already.
                continue;
            }
            // Decode the picked token and, in the same batch, a draft of what
            // may follow it. The next picks are made one at a time, each from
            // logits that follow exactly the tokens before it, so the reply is
            // the sampler's own (up to the rounding of a batched decode); the
            // draft only saves a decode for each token it guessed right.
            self.cached.push(token);
            draft = draft_after(
                &self.cached,
                max_draft.min((max_tokens - generated) as usize),
            );
            drafted += draft.len() as u32;
            let mut batch = LlamaBatch::new(draft.len() + 1, 1);
            let first = self.cached.len() - 1;
            for (i, &t) in std::iter::once(&token).chain(&draft).enumerate() {
                batch
                    .add(t, (first + i) as i32, &[0], true)
                    .map_err(|e| EngineError::Decode(e.to_string()))?;
            }
            self.decode(&mut batch)?;
            logits_at = 0;
        }
        if !draft.is_empty() {
            self.drop_from(self.cached.len())?;
        }
        if !pending.is_empty() {
            let rest = String::from_utf8_lossy(&pending).into_owned();
            on_token(&rest);
            text.push_str(&rest);
        }
        Ok(Generation {
            text,
            prompt_tokens: tokens.len() as u32,
            reused_tokens: reused as u32,
            generated_tokens: generated,
            prompt_ms,
            gen_ms: gen_start.elapsed().as_millis() as u64,
            finish,
            grammar_full_passes,
            drafted_tokens: drafted,
            draft_accepted_tokens: draft_accepted,
            prompt_cache,
        })
    }

    /// Decodes `new` after what is cached, in batches; with `logits`, asks for
    /// the logits of its last token and returns that token's index in its batch.
    fn feed(&mut self, new: &[LlamaToken], logits: bool) -> Result<i32, EngineError> {
        let mut logits_at = 0;
        let end = self.cached.len() + new.len();
        for chunk in new.chunks(self.engine.options.batch as usize) {
            let mut batch = LlamaBatch::new(chunk.len(), 1);
            for (i, &t) in chunk.iter().enumerate() {
                let pos = self.cached.len() as i32;
                let last = logits && self.cached.len() + 1 == end;
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
        Ok(logits_at)
    }

    /// Fills the cache with `prefix` (the system prompt): its state read from
    /// the cache's file when that file is sound and for exactly these tokens,
    /// else decoded and written to the file.
    fn use_prompt_cache(
        &mut self,
        cache: &PromptCache,
        prefix: &[LlamaToken],
    ) -> Result<PromptCacheUse, EngineError> {
        let start = Instant::now();
        let entry = CacheEntry::new(cache, prefix);
        self.ctx.clear_kv_cache();
        self.cached.clear();
        let tokens = prefix.len() as u32;
        let rejected = match entry.check() {
            Ok(None) => None,
            Ok(Some(seen)) => match self.load_state(&entry, &seen, prefix) {
                Ok(()) => {
                    entry.touch();
                    return Ok(PromptCacheUse::Read {
                        tokens,
                        ms: start.elapsed().as_millis() as u64,
                    });
                }
                Err(reason) => Some(reason),
            },
            Err(reason) => Some(reason),
        };
        if rejected.is_some() {
            tracing::warn!(
                target: "seam_engine::prompt_cache",
                file = %entry.state.display(),
                reason = rejected.as_deref().unwrap_or(""),
                "prompt cache file not used; decoding the system prompt"
            );
        }
        self.feed(prefix, false)?;
        let write_start = Instant::now();
        Ok(match entry.save(&self.ctx, prefix) {
            Ok(()) => {
                entry.evict(cache.max_entries);
                PromptCacheUse::Written {
                    tokens,
                    ms: write_start.elapsed().as_millis() as u64,
                    rejected,
                }
            }
            Err(reason) => PromptCacheUse::NotWritten {
                tokens,
                rejected,
                reason,
            },
        })
    }

    /// Reads the checked file `entry` into sequence 0 and makes sure it held
    /// `prefix` and was not replaced meanwhile; on any failure the KV cache is
    /// emptied again.
    fn load_state(
        &mut self,
        entry: &CacheEntry,
        seen: &FileSeen,
        prefix: &[LlamaToken],
    ) -> Result<(), String> {
        let result = match self.ctx.state_seq_load_file(&entry.state, 0, prefix.len()) {
            Err(e) => Err(format!("llama.cpp could not read it ({e})")),
            Ok((loaded, _)) if loaded.len() != prefix.len() => Err(format!(
                "it holds {} tokens where its record says {}",
                loaded.len(),
                prefix.len()
            )),
            Ok((loaded, _)) if loaded != prefix => {
                Err("it holds other tokens than its record says".into())
            }
            Ok(_) if FileSeen::of(&entry.state).as_ref() != Ok(seen) => {
                Err("it was replaced while it was read".into())
            }
            Ok(_) => Ok(()),
        };
        match result {
            Ok(()) => self.cached = prefix.to_vec(),
            Err(_) => {
                self.ctx.clear_kv_cache();
                self.cached.clear();
            }
        }
        result
    }

    /// Removes the KV entries from position `pos` on (a draft's rejected tokens).
    fn drop_from(&mut self, pos: usize) -> Result<(), EngineError> {
        let removed = self
            .ctx
            .clear_kv_cache_seq(Some(0), Some(pos as u32), None)
            .unwrap_or(false);
        if !removed {
            self.cached.clear();
            self.ctx.clear_kv_cache();
            return Err(EngineError::Decode(format!(
                "llama.cpp could not remove the cache's entries from position {pos}"
            )));
        }
        Ok(())
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

/// A system prompt shorter than this is decoded rather than kept in a file.
const MIN_CACHED_TOKENS: usize = 16;

/// What a cache entry's record (`KEY.json`) says; every field must match
/// before llama.cpp is given the state file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct CacheRecord {
    format: String,
    build: String,
    model_id: String,
    tokens: u64,
    tokens_sha256: String,
    state_bytes: u64,
    state_sha256: String,
}

const CACHE_FORMAT: &str = "seam-kv/1";

/// Which build of this program is running: a digest of its executable's size,
/// inode and time of change. A state file is read only by the build that
/// wrote it, so never by another version of llama.cpp, whose reader trusts
/// the layout (it aborts the process on a state file cut short).
fn build_id() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        use std::os::unix::fs::MetadataExt;
        let mut h = Sha256::new();
        match std::env::current_exe().and_then(std::fs::metadata) {
            Ok(m) => {
                for n in [m.dev(), m.ino(), m.len()] {
                    h.update(n.to_le_bytes());
                }
                h.update(m.mtime().to_le_bytes());
                h.update(m.mtime_nsec().to_le_bytes());
                h.update(m.ctime().to_le_bytes());
                h.update(m.ctime_nsec().to_le_bytes());
            }
            Err(_) => h.update(b"unknown"),
        }
        hex::encode(&h.finalize()[..16])
    })
}
/// A record is a few hundred bytes; anything much larger is not one.
const MAX_RECORD_BYTES: u64 = 64 * 1024;
/// Temporary files of a write that never finished are removed after this long.
const STALE_TEMP: std::time::Duration = std::time::Duration::from_secs(600);

/// One prompt's entry in a [`PromptCache`].
struct CacheEntry {
    dir: PathBuf,
    state: PathBuf,
    record: PathBuf,
    model_id: String,
    tokens: u64,
    tokens_sha256: String,
}

/// Which file was checked: a file replaced (renamed over) afterwards is another inode.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileSeen {
    dev: u64,
    ino: u64,
    len: u64,
    modified: Option<SystemTime>,
}

impl FileSeen {
    fn of(path: &Path) -> Result<FileSeen, String> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).map_err(|e| e.to_string())?;
        Ok(FileSeen {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            modified: m.modified().ok(),
        })
    }
}

fn tokens_digest(tokens: &[LlamaToken]) -> [u8; 32] {
    let mut h = Sha256::new();
    for t in tokens {
        h.update(t.0.to_le_bytes());
    }
    h.finalize().into()
}

impl CacheEntry {
    fn new(cache: &PromptCache, prefix: &[LlamaToken]) -> CacheEntry {
        let digest = tokens_digest(prefix);
        let mut key = Sha256::new();
        key.update(CACHE_FORMAT.as_bytes());
        key.update([0]);
        key.update(build_id().as_bytes());
        key.update([0]);
        key.update(cache.model_id.as_bytes());
        key.update([0]);
        key.update(digest);
        let key = hex::encode(&key.finalize()[..16]);
        CacheEntry {
            dir: cache.dir.clone(),
            state: cache.dir.join(format!("{key}.state")),
            record: cache.dir.join(format!("{key}.json")),
            model_id: cache.model_id.clone(),
            tokens: prefix.len() as u64,
            tokens_sha256: hex::encode(digest),
        }
    }

    /// `None` if there is no entry; the state file as checked if its record
    /// is this prompt's and its size and digest are the record's; else why not.
    fn check(&self) -> Result<Option<FileSeen>, String> {
        let record = match std::fs::File::open(&self.record) {
            Ok(f) => f,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                return if self.state.exists() {
                    Err("its record is missing".into())
                } else {
                    Ok(None)
                };
            }
            Err(e) => return Err(format!("its record cannot be opened ({e})")),
        };
        let mut text = Vec::new();
        record
            .take(MAX_RECORD_BYTES + 1)
            .read_to_end(&mut text)
            .map_err(|e| format!("its record cannot be read ({e})"))?;
        if text.len() as u64 > MAX_RECORD_BYTES {
            return Err("its record is too large to be one".into());
        }
        let r: CacheRecord =
            serde_json::from_slice(&text).map_err(|e| format!("its record is not one ({e})"))?;
        if r.format != CACHE_FORMAT {
            return Err(format!("it is in another format ({:?})", r.format));
        }
        if r.build != build_id() {
            return Err("it was written by another build of seam".into());
        }
        if r.model_id != self.model_id {
            return Err("it is for another model".into());
        }
        if r.tokens != self.tokens || r.tokens_sha256 != self.tokens_sha256 {
            return Err(format!(
                "it is for another prompt ({} tokens, digest {}; this one {} tokens, digest {})",
                r.tokens,
                short(&r.tokens_sha256),
                self.tokens,
                short(&self.tokens_sha256)
            ));
        }
        let mut file = std::fs::File::open(&self.state)
            .map_err(|e| format!("its state file cannot be opened ({e})"))?;
        let before = FileSeen::of(&self.state)?;
        if before.len != r.state_bytes {
            return Err(format!(
                "its state file is {} bytes, its record says {} (truncated or overwritten)",
                before.len, r.state_bytes
            ));
        }
        let digest = sha256_of(&mut file).map_err(|e| format!("reading its state file ({e})"))?;
        if digest != r.state_sha256 {
            return Err(format!(
                "its state file's SHA-256 is {}, its record says {} (corrupt)",
                short(&digest),
                short(&r.state_sha256)
            ));
        }
        Ok(Some(before))
    }

    /// Writes sequence 0's state and then the record, each staged beside its
    /// name (seam-home's [`Staged`], owner-only) and renamed into place only
    /// once complete and synced.
    fn save(&self, ctx: &LlamaContext<'_>, prefix: &[LlamaToken]) -> Result<(), String> {
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| format!("creating {} ({e})", self.dir.display()))?;
        let mut state = Staged::beside(&self.state, OWNER_ONLY).map_err(|e| e.to_string())?;
        ctx.state_seq_save_file(state.path(), 0, prefix)
            .map_err(|e| format!("llama.cpp could not write the state ({e})"))?;
        // llama.cpp wrote through a descriptor of its own; this one is still at the start
        let written = state.file();
        let state_bytes = written
            .metadata()
            .map_err(|e| format!("reading the state back ({e})"))?
            .len();
        let state_sha256 =
            sha256_of(written).map_err(|e| format!("reading the state back ({e})"))?;
        state.persist().map_err(|e| e.to_string())?;
        let record = CacheRecord {
            format: CACHE_FORMAT.into(),
            build: build_id().into(),
            model_id: self.model_id.clone(),
            tokens: self.tokens,
            tokens_sha256: self.tokens_sha256.clone(),
            state_bytes,
            state_sha256,
        };
        let record =
            serde_json::to_vec(&record).map_err(|e| format!("writing the record ({e})"))?;
        seam_home::file::replace(&self.record, &record, OWNER_ONLY).map_err(|e| e.to_string())
    }

    /// Marks the entry as used now (for eviction); best effort.
    fn touch(&self) {
        if let Ok(f) = std::fs::OpenOptions::new().write(true).open(&self.record) {
            let _ = f.set_modified(SystemTime::now());
        }
    }

    /// Keeps the `keep` most recently used entries of the directory, and
    /// removes temporary files left by writes that never finished.
    fn evict(&self, keep: usize) {
        let Ok(dir) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let now = SystemTime::now();
        let mut entries = Vec::new();
        for e in dir.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            let modified = e.metadata().and_then(|m| m.modified()).ok();
            // Writers of one cache take no common lock (two turns may share it), so a
            // temporary file is a leftover only once it is old; `.kv-` is an older seam's.
            if is_staged_name(&name) || name.starts_with(".kv-") {
                let stale = modified
                    .and_then(|m| now.duration_since(m).ok())
                    .is_some_and(|age| age > STALE_TEMP);
                if stale {
                    let _ = std::fs::remove_file(e.path());
                }
            } else if let Some(key) = name.strip_suffix(".json") {
                entries.push((modified, key.to_owned()));
            } else if let Some(key) = name.strip_suffix(".state") {
                // A state without its record is of no use.
                if !self.dir.join(format!("{key}.json")).exists() {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        entries.sort_by_key(|e| std::cmp::Reverse(e.0));
        for (_, key) in entries.into_iter().skip(keep.max(1)) {
            let _ = std::fs::remove_file(self.dir.join(format!("{key}.json")));
            let _ = std::fs::remove_file(self.dir.join(format!("{key}.state")));
        }
    }
}

fn sha256_of(file: &mut std::fs::File) -> std::io::Result<String> {
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex::encode(h.finalize()))
}

fn short(hex: &str) -> &str {
    hex.get(..12).unwrap_or(hex)
}

fn grammar_sampler(model: &LlamaModel, schema: &str) -> Result<LlamaSampler, EngineError> {
    let gbnf = schema_grammar(schema)?;
    LlamaSampler::grammar(model, &gbnf, "root").map_err(|e| EngineError::Schema(e.to_string()))
}

/// The llama.cpp grammar (GBNF, root rule `root`) that a JSON schema's text
/// becomes: what the engine decodes under, made by llama.cpp's own converter,
/// with one rule changed ([`quote_tolerant`]): a free string may hold a bare
/// `"` where what follows shows it is not the string's end, and may not hold
/// JSON's `\b` and `\f` escapes.
/// `seam ask --model-url` sends the same text to a llama.cpp server, whose
/// chat endpoint would otherwise build its own grammar from the schema, one
/// that also lets the reply open with a markdown fence.
pub fn schema_grammar(schema: &str) -> Result<String, EngineError> {
    let gbnf = llama_cpp_2::json_schema_to_grammar(schema)
        .map_err(|e| EngineError::Schema(e.to_string()))?;
    quote_tolerant(&gbnf)
}

/// The string character rule of llama.cpp's JSON grammar
/// (`common/json-schema-to-grammar.cpp`, `PRIMITIVE_RULES["char"]`): any
/// character but `"`, `\` and controls, or an escape.
const JSON_CHAR_RULE: &str =
    r#"char ::= [^"\\\x7F\x00-\x1F] | [\\] (["\\bfnrt] | "u" [0-9a-fA-F]{4})"#;

/// The rule [`quote_tolerant`] adds: a run of bare quotes inside a free
/// string, with what follows it, which must show that the run is not the
/// string's end: a character that cannot follow a string's end in JSON (not
/// a space, `,`, `}` or a quote), or an escape, or up to eight spaces, or a
/// `}` or `,` with at most one space after it, followed by a character that
/// cannot continue JSON there (not `,`, `}`, `]` or a quote). `seam_action`'s
/// reader closes a string where this rule does not let it go on (its test
/// `what_the_grammar_admits_bare_is_read_back_whole` holds the two together),
/// and reads this rule back (its `Reader::admitted_bare`, which must change
/// with it) to keep JSON written bare inside an answer whole.
///
/// The spaces are bounded as JSON's own spacing between tokens is (llama.cpp's
/// `space` rule): unbounded, they were a way for a reply to run on in spaces
/// after a bare quote, which nothing a model means needs. It is not the whole
/// of the run-on it was made for: qwen2.5-coder-1.5b wrote a stray `}` at the
/// end of its code, then `"}` (it meant the call's last two braces, one short),
/// and, with the bound in place, still ran on inside the string until the
/// loop cut (96 tokens, about 12 s a reply), on what the trace does not keep
/// (escapes or dots, which a string must admit). The reply is repaired
/// (`truncated-json`, `code-stray-closer-cut`); the time is the cost.
const BARE_QUOTES_RULE: &str = r#"seam-bare-quotes ::= ["]+ ([^"\\\x7F\x00-\x1F,} ] | seam-escape | " "{1,8} [^"\\\x7F\x00-\x1F ,}\]] | "}" " "? ([^"\\\x7F\x00-\x1F ,}\]] | seam-escape) | "," " "? [^"\\\x7F\x00-\x1F ,}\]])"#;

/// The string character rule seam writes in place of [`JSON_CHAR_RULE`]:
/// the same characters, JSON's escapes but `\b` (backspace) and `\f` (form
/// feed), and a run of bare quotes ([`BARE_QUOTES_RULE`]).
///
/// Why not `\b` and `\f`: a model that writes them means a backslash and a
/// letter, escaped once where JSON wants it twice: a regular expression's
/// word boundary (`r'\bMay\b'`), a Windows path (`C:\files`). Nothing an
/// action holds is a backspace or a form feed. Allowed, the escape decoded to
/// a control character, and it was a trap: writing a regular expression in
/// python.run code, qwen2.5-coder-1.5b wrote `\b` and then `\b` again until
/// the loop cut, at every temperature tried (a rota task, 12 steps, greedy and
/// at 0.7 alike). Barred, the model's `\` goes on as JSON's `\\` (a
/// backslash), or as another escape. `\u0008` still says a backspace.
const SEAM_CHAR_RULE: &str =
    r#"char ::= [^"\\\x7F\x00-\x1F] | [\\] (["\\nrt] | "u" [0-9a-fA-F]{4}) | seam-bare-quotes"#;

/// A JSON escape, as [`SEAM_CHAR_RULE`] writes it: a character after a bare
/// quote may be one.
const ESCAPE_RULE: &str = r#"seam-escape ::= [\\] (["\\nrt] | "u" [0-9a-fA-F]{4})"#;

/// `gbnf` with bare `"` allowed inside a free string (one whose text the
/// schema does not fix: code, a path, an answer) where what follows shows it
/// is not the string's end.
///
/// Why: a model writes the code or the prose it means, and a small one does
/// not always escape the quotes in it. Strict JSON ends the string at the
/// first bare `"`, so the grammar then forced the model on as if it had
/// closed it: qwen2.5-coder-1.5b, writing `{'' if d > 0 else "under"}` in a
/// python.run f-string, had its code cut at `else ` and the call closed by
/// force, three times in a row (dev suite, multi-may-target); `row["km"]`
/// and `print("total", x)` meet the same wall.
///
/// Where the quote is allowed ([`BARE_QUOTES_RULE`]): when the character
/// after it cannot follow a string's end (`"km`, `")`, `"]`, `""`), or is a
/// `}` or `,` not followed by more JSON (`"} the`, `", x`). Not when JSON
/// could go on: `"},{"actor"` or `", "key"` stay a close, so the grammar
/// still forces the structure when a model slips right after a string (a
/// step's `}` left out; a key the schema does not have). A fully tolerant
/// string, tried first, let such a slip run on as text. Keys, `const` and
/// `enum` values are literals in the grammar and stay exact.
///
/// The reply is then not strict JSON, and seam's tolerant reader
/// (`seam_action`, `Correction::UnescapedQuotes`, counted) keeps such a
/// quote as text, since what follows cannot continue the JSON around it.
///
/// The rule is found by its text, so a llama.cpp whose converter writes it
/// otherwise is refused here, naming it, rather than left strict unseen.
pub fn quote_tolerant(gbnf: &str) -> Result<String, EngineError> {
    let mut found = 0;
    let mut out: Vec<String> = gbnf
        .lines()
        .map(|line| {
            if line.trim_end() == JSON_CHAR_RULE {
                found += 1;
                SEAM_CHAR_RULE.to_owned()
            } else {
                line.to_owned()
            }
        })
        .collect();
    // A schema without a free string has no `char` rule, and nothing to change.
    let uses_char = gbnf.lines().any(|l| l.starts_with("char ::="));
    if uses_char && found != 1 {
        return Err(EngineError::Schema(format!(
            "llama.cpp's JSON grammar no longer writes its string rule as `{JSON_CHAR_RULE}`: \
             seam-engine's quote_tolerant must be brought up to date"
        )));
    }
    if found == 1 {
        out.push(BARE_QUOTES_RULE.to_owned());
        out.push(ESCAPE_RULE.to_owned());
    }
    let mut text = out.join("\n");
    if gbnf.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}

/// Tokens that may follow `tokens`, guessed from the conversation itself: what
/// followed the latest earlier place of its longest final run of tokens seen
/// before (a "prompt lookup" draft). Replies copy a great deal of what the
/// prompt holds: `{"mode":"action","tool":"` from the examples, a tool's and
/// its parameters' names from the tool list, a path or a number from the task.
/// The longer the run that matched, the likelier the guess: a run of
/// [`DRAFT_MATCH_MIN`] tokens (`{"`, say) is followed by anything, so it gets
/// a short draft, and a run of [`DRAFT_MATCH_LONG`] or more gets `max`.
/// Written here because the draft must come from the tokens this session
/// holds; llama.cpp's own n-gram drafting lives in its `common` library, which
/// the bindings do not carry.
pub(crate) fn draft_after(tokens: &[LlamaToken], max: usize) -> Vec<LlamaToken> {
    let len = tokens.len();
    for n in (DRAFT_MATCH_MIN..=DRAFT_MATCH_LONG.min(len.saturating_sub(1))).rev() {
        let tail = &tokens[len - n..];
        // The latest earlier place of the tail, not the tail itself.
        let Some(start) = (0..len - n)
            .rev()
            .find(|&start| &tokens[start..start + n] == tail)
        else {
            continue;
        };
        let take = match n {
            n if n >= DRAFT_MATCH_LONG => max,
            n if n > DRAFT_MATCH_MIN => max.min(4),
            _ => max.min(2),
        };
        let from = start + n;
        return tokens[from..(from + take).min(len)].to_vec();
    }
    Vec::new()
}

/// The shortest final run of tokens that must have appeared before for a draft.
const DRAFT_MATCH_MIN: usize = 2;
/// A matched run this long or longer gets the longest draft.
const DRAFT_MATCH_LONG: usize = 4;

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

#[cfg(test)]
mod tests {
    use super::{
        BARE_QUOTES_RULE, ESCAPE_RULE, JSON_CHAR_RULE, SEAM_CHAR_RULE, busy_cores, draft_after,
        quote_tolerant, schema_grammar, threads_for,
    };
    use llama_cpp_2::token::LlamaToken;

    fn toks(ids: &[i32]) -> Vec<LlamaToken> {
        ids.iter().map(|&i| LlamaToken(i)).collect()
    }

    #[test]
    fn a_draft_is_what_followed_the_longest_final_run_seen_before() {
        // "7 8" appeared twice before: the later one is followed by 5 6; a run
        // of two gets two tokens.
        let t = toks(&[7, 8, 1, 2, 7, 8, 5, 6, 9, 7, 8]);
        assert_eq!(draft_after(&t, 8), toks(&[5, 6]));
        assert_eq!(draft_after(&t, 1), toks(&[5]));
        assert_eq!(draft_after(&t, 0), toks(&[]));
        // "2 7 8" is a longer run, seen once, earlier than the latest "7 8":
        // the longer run wins, and a run of three gets up to four tokens.
        let t = toks(&[2, 7, 8, 3, 3, 3, 3, 3, 7, 8, 4, 2, 7, 8]);
        assert_eq!(draft_after(&t, 8), toks(&[3, 3, 3, 3]));
        // A run of four or more gets the whole budget (and no more than there is).
        let t = toks(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4]);
        assert_eq!(draft_after(&t, 8), toks(&[5, 6, 7, 8, 9, 10, 11, 0]));
        assert_eq!(
            draft_after(&t, 20),
            toks(&[5, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4])
        );
        // The last two tokens appear nowhere else: no guess.
        assert_eq!(draft_after(&toks(&[1, 2, 3, 4, 2, 5]), 8), toks(&[]));
        // One token matching is not enough.
        assert_eq!(draft_after(&toks(&[1, 9, 3, 9]), 8), toks(&[]));
        // Too short to hold a match, and the tail never matches itself.
        assert_eq!(draft_after(&toks(&[1, 2]), 8), toks(&[]));
        assert_eq!(draft_after(&toks(&[4, 4, 4]), 8), toks(&[4]));
    }

    #[test]
    fn a_free_string_may_hold_a_bare_quote_and_literals_stay_exact() {
        let schema = r#"{"type":"object","properties":{"mode":{"const":"action"},"code":{"type":"string"}},"required":["mode","code"]}"#;
        let strict = llama_cpp_2::json_schema_to_grammar(schema).unwrap();
        assert!(
            strict.lines().any(|l| l == JSON_CHAR_RULE),
            "llama.cpp's converter writes the rule this crate looks for: {strict}"
        );
        let g = schema_grammar(schema).unwrap();
        let char_rules: Vec<&str> = g.lines().filter(|l| l.starts_with("char ::=")).collect();
        assert_eq!(char_rules, [SEAM_CHAR_RULE]);
        // JSON's escapes but `\b` and `\f`, where a string may hold them.
        let escapes = |rule: &str| {
            rule.split("([\"\\\\")
                .nth(1)
                .map(|e| e[..e.find(']').unwrap()].to_owned())
        };
        assert_eq!(
            escapes(SEAM_CHAR_RULE).as_deref(),
            Some("nrt"),
            "{SEAM_CHAR_RULE}"
        );
        assert_eq!(
            escapes(ESCAPE_RULE).as_deref(),
            Some("nrt"),
            "{ESCAPE_RULE}"
        );
        assert_eq!(
            escapes(JSON_CHAR_RULE).as_deref(),
            Some("bfnrt"),
            "{JSON_CHAR_RULE}"
        );
        assert_eq!(g.lines().filter(|l| *l == BARE_QUOTES_RULE).count(), 1);
        assert_eq!(g.lines().filter(|l| *l == ESCAPE_RULE).count(), 1);
        // Every other line is llama.cpp's, the const among them.
        let others = |t: &str| -> Vec<String> {
            t.lines()
                .filter(|l| {
                    !l.starts_with("char ::=") && *l != BARE_QUOTES_RULE && *l != ESCAPE_RULE
                })
                .map(str::to_owned)
                .collect()
        };
        assert_eq!(others(&g), others(&strict));
        assert!(g.contains(r#""\"action\"""#), "{g}");
    }

    #[test]
    fn a_grammar_without_free_strings_is_left_alone_and_a_changed_rule_is_refused() {
        let schema = r#"{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}"#;
        let strict = llama_cpp_2::json_schema_to_grammar(schema).unwrap();
        assert_eq!(quote_tolerant(&strict).unwrap(), strict);
        let changed = "root ::= string\nstring ::= \"\\\"\" char* \"\\\"\"\nchar ::= [^\"]\n";
        let err = quote_tolerant(changed).unwrap_err().to_string();
        assert!(err.contains("quote_tolerant"), "{err}");
    }

    #[test]
    fn busy_is_the_load_or_the_others_running_now_if_fewer() {
        assert_eq!(busy_cores("1.60 2.10 2.95 1/77 19871"), Some(0.0));
        assert_eq!(busy_cores("4.50 4.10 3.95 4/120 19871"), Some(3.0));
        assert_eq!(busy_cores("0.50 4.10 3.95 4/120 19871"), Some(0.5));
        assert_eq!(busy_cores("0.50"), Some(0.5));
        assert_eq!(busy_cores("nonsense"), None);
    }

    #[test]
    fn threads_are_the_cores_the_rest_of_the_machine_leaves_free() {
        assert_eq!(threads_for(2, Some(0.1)), 2);
        assert_eq!(threads_for(2, None), 2);
        assert_eq!(threads_for(2, Some(0.6)), 1);
        assert_eq!(threads_for(2, Some(4.5)), 1);
        assert_eq!(threads_for(8, Some(2.2)), 6);
        assert_eq!(threads_for(64, Some(1.0)), 7);
        assert_eq!(threads_for(1, Some(f64::NAN)), 1);
        assert_eq!(threads_for(0, Some(-3.0)), 1);
    }
}
