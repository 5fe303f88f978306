//! The system prompt's size in tokens against the same tools as OpenAI
//! `tools` JSON (the target: at most half). Counted with the
//! o200k_base and cl100k_base encodings (tiktoken-rs carries them; no
//! download). Run with `--nocapture` to see the figures.

mod common;

use std::io::Write as _;

use common::Owner;
use serde_json::Value;

#[test]
fn the_prompt_costs_at_most_half_the_tokens_of_openai_tools_json() {
    let owner = Owner::new();
    let out = owner.seam().args(["prompt", "--json"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let prompt = v["prompt"].as_str().unwrap();
    let tools_json = serde_json::to_string(&v["openai_tools"]).unwrap();
    let names = v["tools"].as_array().unwrap();
    assert!(names.len() >= 13, "{names:?}");
    for n in names {
        assert!(
            prompt.contains(n.as_str().unwrap()),
            "{n} missing from the prompt"
        );
    }
    for (label, bpe) in [
        ("o200k_base", tiktoken_rs::o200k_base().unwrap()),
        ("cl100k_base", tiktoken_rs::cl100k_base().unwrap()),
    ] {
        let ours = bpe.encode_with_special_tokens(prompt).len();
        let theirs = bpe.encode_with_special_tokens(&tools_json).len();
        let ratio = ours as f64 / theirs as f64;
        let _ = writeln!(
            std::io::stdout(),
            "{label}: system prompt {ours} tokens ({} bytes, {} tools); OpenAI tools JSON {theirs} tokens; ratio {ratio:.2}",
            prompt.len(),
            names.len()
        );
        assert!(
            ratio <= 0.5,
            "{label}: {ours} vs {theirs} tokens ({ratio:.2})"
        );
    }
}
