//! One chat-completions request, decoded by the embedded engine the way
//! `seam ask` decodes it, to put beside what a model server answers to the
//! same body (bench/README.md, "Why the two backends pass different tasks",
//! put the two side by side; `bench/answer-probe.py` asks it questions
//! with seam's turn taken out).
//!
//! ```text
//! parity --model NAME REQUEST.json
//! ```
//!
//! REQUEST.json is the body `seam ask --model-url` sent (`messages`,
//! `max_tokens`, `response_format.json_schema.schema`). Prints one JSON line:
//! the prompt the chat template made, its token count and the reply, decoded
//! greedily under the same schema. No prompt cache: the point is the text.

use std::io::Write;
use std::path::PathBuf;

use seam_engine::{ChatMessage, Engine, EngineOptions, catalog, default_cache_dir};
use serde_json::{Value, json};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut model_name = "qwen2.5-coder-1.5b".to_owned();
    let mut request: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--model" => model_name = args.next().ok_or("--model takes a name")?,
            _ if request.is_none() => request = Some(a.into()),
            other => return Err(format!("unexpected argument {other:?}").into()),
        }
    }
    let request = request.ok_or("usage: parity [--model NAME] REQUEST.json")?;
    let body: Value = serde_json::from_slice(&std::fs::read(&request)?)?;
    let messages = body["messages"]
        .as_array()
        .ok_or("the request has no messages array")?
        .iter()
        .map(|m| ChatMessage {
            role: m["role"].as_str().unwrap_or("user").to_owned(),
            content: m["content"].as_str().unwrap_or("").to_owned(),
        })
        .collect::<Vec<_>>();
    let schema = body
        .pointer("/response_format/json_schema/schema")
        .map(|s| s.to_string());
    let max_tokens = body["max_tokens"].as_u64().unwrap_or(512) as u32;

    let model = catalog::find(&model_name).ok_or("no such model in the catalog")?;
    let cache = default_cache_dir().ok_or("no model cache")?;
    let path = cache.join(format!("{}.gguf", model.name));
    let engine = Engine::load(
        &path,
        EngineOptions {
            ctx_len: 16384,
            ..EngineOptions::default()
        },
    )?;
    let prompt = engine.render(&messages)?;
    let mut session = engine.session()?;
    let generation = session.generate(&messages, schema.as_deref(), max_tokens, &mut |_| {})?;
    writeln!(
        std::io::stdout(),
        "{}",
        json!({"prompt": prompt, "prompt_tokens": generation.prompt_tokens,
               "text": generation.text, "finish": format!("{:?}", generation.finish)})
    )?;
    Ok(())
}
