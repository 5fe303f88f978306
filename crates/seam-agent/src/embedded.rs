//! The embedded model behind the agent's `ChatModel`: `seam-engine` (llama.cpp
//! in-process) on a thread of its own.
//!
//! The engine's session borrows the engine and holds llama.cpp's context,
//! which must stay on one thread; so a dedicated thread owns both for the
//! life of the ask, and each request crosses to it on a channel, with the
//! reply's text streamed back piece by piece. The session's KV cache is kept
//! across the steps of the turn, so each step decodes only what it adds.
//!
//! Built only with the `embedded` feature (llama.cpp). Like the rest of the agent it never
//! prints: what the operator should hear (a prompt cache that did not serve) goes to the
//! caller's [`Notices`].

use std::path::{Path, PathBuf};
use std::sync::mpsc as std_mpsc;
use std::time::Instant;

use tokio::sync::mpsc;

use crate::model::{ChatModel, ChatRequest, Completion, ModelError, ModelFuture};

/// Where the adapter's sentences for the operator go (the binary prints them).
pub type Notices = Box<dyn FnMut(&str) + Send>;

/// A request for the engine thread.
struct Job {
    messages: Vec<seam_engine::ChatMessage>,
    /// The schema's text, as the agent wrote it (see `JsonSchema`).
    schema: Option<String>,
    max_tokens: u32,
    sampling: seam_engine::Sampling,
    pieces: mpsc::UnboundedSender<Piece>,
}

enum Piece {
    Text(String),
    Done(Result<seam_engine::Generation, String>),
}

/// The embedded model, ready to answer.
pub struct EmbeddedModel {
    name: String,
    jobs: std_mpsc::Sender<Job>,
    notices: Notices,
    /// Milliseconds the model took to load.
    pub load_ms: u64,
}

impl std::fmt::Debug for EmbeddedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedModel")
            .field("name", &self.name)
            .field("load_ms", &self.load_ms)
            .finish_non_exhaustive()
    }
}

impl EmbeddedModel {
    /// Loads the model file at `path` on a new thread and waits until it is loaded;
    /// `notices` hears what the operator should be told while it answers.
    pub fn load(
        name: &str,
        path: &Path,
        options: seam_engine::EngineOptions,
        notices: Notices,
    ) -> Result<EmbeddedModel, ModelError> {
        let (jobs, inbox) = std_mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = std_mpsc::channel::<Result<u64, String>>();
        let path: PathBuf = path.to_owned();
        std::thread::Builder::new()
            .name("seam-engine".into())
            .spawn(move || serve(&path, options, inbox, ready_tx))
            .map_err(|e| ModelError::Engine(format!("starting the engine's thread: {e}")))?;
        let load_ms = ready_rx
            .recv()
            .map_err(|_| ModelError::Engine("the engine's thread ended while loading".into()))?
            .map_err(ModelError::Engine)?;
        Ok(EmbeddedModel {
            name: name.to_owned(),
            jobs,
            notices,
            load_ms,
        })
    }
}

fn serve(
    path: &Path,
    options: seam_engine::EngineOptions,
    inbox: std_mpsc::Receiver<Job>,
    ready: std_mpsc::Sender<Result<u64, String>>,
) {
    let engine = match seam_engine::Engine::load(path, options) {
        Ok(e) => e,
        Err(e) => {
            let _ = ready.send(Err(format!("loading {}: {e}", path.display())));
            return;
        }
    };
    let mut session = match engine.session() {
        Ok(s) => s,
        Err(e) => {
            let _ = ready.send(Err(format!("starting a session: {e}")));
            return;
        }
    };
    let _ = ready.send(Ok(engine.load_ms()));
    while let Ok(job) = inbox.recv() {
        let pieces = job.pieces.clone();
        let mut on_token = |t: &str| {
            let _ = pieces.send(Piece::Text(t.to_owned()));
        };
        let result = session
            .generate_with(
                &job.messages,
                job.schema.as_deref(),
                job.max_tokens,
                job.sampling,
                &mut on_token,
            )
            .map_err(|e| e.to_string());
        let _ = job.pieces.send(Piece::Done(result));
    }
}

impl ChatModel for EmbeddedModel {
    fn describe(&self) -> String {
        format!("embedded {}", self.name)
    }

    fn complete<'a>(
        &'a mut self,
        request: &'a ChatRequest,
        on_text: &'a mut (dyn FnMut(&str) + Send),
    ) -> ModelFuture<'a> {
        Box::pin(async move {
            let started = Instant::now();
            let (tx, mut rx) = mpsc::unbounded_channel();
            let job = Job {
                messages: request
                    .messages
                    .iter()
                    .map(|m| seam_engine::ChatMessage::new(&m.role, &m.content))
                    .collect(),
                schema: request.json_schema.as_ref().map(|s| s.text().to_owned()),
                max_tokens: request.max_tokens,
                sampling: seam_engine::Sampling {
                    temperature: request.temperature,
                    seed: request.seed.unwrap_or(0),
                },
                pieces: tx,
            };
            self.jobs
                .send(job)
                .map_err(|_| ModelError::Engine("the engine's thread has ended".into()))?;
            let mut text = String::new();
            while let Some(piece) = rx.recv().await {
                match piece {
                    Piece::Text(t) => {
                        on_text(&t);
                        text.push_str(&t);
                    }
                    Piece::Done(Ok(g)) => {
                        // A prompt cache that did not serve the step is said once, on the
                        // turn's first step (the prompt was decoded instead: slower, never
                        // a failure); the trace's notes say the same.
                        if let Some(used) = &g.prompt_cache
                            && !matches!(used, seam_engine::PromptCacheUse::Read { .. })
                        {
                            (self.notices)(&used.to_string());
                        }
                        return Ok(Completion {
                            text: g.text,
                            reasoning: String::new(),
                            prompt_tokens: Some(g.prompt_tokens),
                            completion_tokens: Some(g.generated_tokens),
                            finish_reason: Some(
                                match g.finish {
                                    seam_engine::Finish::EndOfGeneration => "stop",
                                    // A loop cut short is a reply cut by a budget, as
                                    // far as reading it goes; the notes say which.
                                    seam_engine::Finish::MaxTokens
                                    | seam_engine::Finish::Repetition => "length",
                                }
                                .into(),
                            ),
                            constrained: request.json_schema.is_some(),
                            retries: 0,
                            elapsed: started.elapsed(),
                            notes: std::iter::once(format!(
                                "prompt {} tokens ({} reused from the cache) in {} ms; {} tokens in {} ms ({} of {} drafted ahead taken)",
                                g.prompt_tokens,
                                g.reused_tokens,
                                g.prompt_ms,
                                g.generated_tokens,
                                g.gen_ms,
                                g.draft_accepted_tokens,
                                g.drafted_tokens
                            ))
                            // What the prompt cache did (and why a file was not used).
                            .chain(g.prompt_cache.as_ref().map(ToString::to_string))
                            .chain((g.finish == seam_engine::Finish::Repetition).then(|| seam_engine::repetition::LOOP_CUT_NOTE.to_owned()))
                            .collect(),
                        });
                    }
                    Piece::Done(Err(e)) => return Err(ModelError::Engine(e)),
                }
            }
            Err(ModelError::Engine(format!(
                "the engine's thread ended mid-reply after {} bytes",
                text.len()
            )))
        })
    }
}
