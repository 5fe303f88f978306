//! `seam invoke files.read` end to end: the real binary, real trees in temp dirs.

mod common;

use std::os::unix::fs::symlink;

use common::{Owner, path_str, read, refusal_code, refusal_message};
use serde_json::json;

const PEM: &str = "-----BEGIN RSA PRIVATE KEY-----\n\
MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB\n\
aFDrBz9vFqU4yfT4iHq3ZgHIeEcTUQ/fYSWNHM0xNMpPq2VXH1Q8nXk2t6Dq3ZL6\n\
-----END RSA PRIVATE KEY-----\n";

#[test]
fn reads_a_file_in_the_home_and_taints_the_turn() {
    let o = Owner::new();
    o.write("project/notes.md", b"line one\nline two\n");
    let (code, v) = read(&o, json!({"path": "notes.md"}));
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["tool"], "files.read");
    assert_eq!(v["output"]["text"], "line one\nline two\n");
    // A file in the workspace is named as the model named it; one outside it in full.
    assert_eq!(v["output"]["path"], "notes.md");
    assert_eq!(v["tainted"], true);
    assert_eq!(v["scrubbed"], json!([]));
    assert!(v["invocation_id"].as_str().unwrap().len() >= 32);
}

#[test]
fn a_pem_private_key_in_the_home_comes_back_redacted() {
    let o = Owner::new();
    let content = format!("config for staging\n{PEM}end\n");
    o.write("notes/deploy.txt", content.as_bytes());
    let (code, v) = read(&o, json!({"path": "~/notes/deploy.txt"}));
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        v["output"]["path"],
        path_str(&o.home.join("notes/deploy.txt"))
    );
    let text = v["output"]["text"].as_str().unwrap();
    assert!(
        !text.contains("MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn"),
        "key body leaked: {text}"
    );
    assert!(text.contains("[REDACTED:"), "{text}");
    assert!(
        text.starts_with("config for staging\n"),
        "other bytes unchanged: {text}"
    );
    assert!(text.ends_with("end\n"), "{text}");
    assert!(!v["scrubbed"].as_array().unwrap().is_empty(), "{v}");
}

#[test]
fn a_refusal_that_quotes_a_secret_is_scrubbed() {
    let o = Owner::new();
    let token = "ghp_R8b2Xq4TzK9mLp3Vw7Ys1Nc6Hd5Fj0Ga2Ue4";
    let (code, v) = read(&o, json!({"path": format!("/nonexistent/{token}")}));
    assert_eq!(code, 3, "{v}");
    let msg = refusal_message(&v);
    assert!(!msg.contains(token), "token leaked in refusal: {msg}");
    assert!(!v.to_string().contains(token));
}

#[test]
fn dot_dot_walks_out_of_the_home_are_refused() {
    let o = Owner::new();
    let (code, v) = read(&o, json!({"path": "../../../../../../../../etc/passwd"}));
    assert_eq!(code, 3, "{v}");
    assert_eq!(refusal_code(&v), "not_allowed");
    assert!(refusal_message(&v).contains("/etc/passwd"), "{v}");
}

#[test]
fn an_absolute_path_outside_the_lists_is_refused() {
    let o = Owner::new();
    let (code, v) = read(&o, json!({"path": "/etc/hostname"}));
    assert_eq!(code, 3, "{v}");
    assert_eq!(refusal_code(&v), "not_allowed");
}

#[test]
fn a_symlink_out_of_the_home_is_refused_naming_the_real_file() {
    let o = Owner::new();
    let outside = o.dir.path().canonicalize().unwrap().join("outside.txt");
    std::fs::write(&outside, "outside").unwrap();
    symlink(&outside, o.workspace.join("inside.txt")).unwrap();
    let (code, v) = read(&o, json!({"path": "inside.txt"}));
    assert_eq!(code, 3, "{v}");
    assert_eq!(refusal_code(&v), "not_allowed");
    assert!(refusal_message(&v).contains(path_str(&outside)), "{v}");
}

#[test]
fn a_symlink_loop_is_refused() {
    let o = Owner::new();
    symlink(o.workspace.join("b"), o.workspace.join("a")).unwrap();
    symlink(o.workspace.join("a"), o.workspace.join("b")).unwrap();
    let (code, v) = read(&o, json!({"path": "a"}));
    assert_eq!(code, 3, "{v}");
    assert!(!refusal_message(&v).is_empty());
}

#[test]
fn a_link_chain_to_a_protected_file_is_refused_naming_the_key() {
    let o = Owner::new();
    let key = o.write(".ssh/id_ed25519", PEM.as_bytes());
    symlink(&key, o.workspace.join("one")).unwrap();
    symlink(o.workspace.join("one"), o.workspace.join("two")).unwrap();
    symlink(o.workspace.join("two"), o.workspace.join("three")).unwrap();
    let (code, v) = read(&o, json!({"path": "three"}));
    assert_eq!(code, 3, "{v}");
    assert_eq!(refusal_code(&v), "protected");
    assert!(refusal_message(&v).contains(path_str(&key)), "{v}");
    assert!(!v.to_string().contains("MIIEowIBAAKCAQEA"));
}

#[test]
fn a_hard_link_to_a_protected_file_is_refused() {
    let o = Owner::new();
    let key = o.write(".ssh/id_rsa", b"not shaped like a key, still protected\n");
    std::fs::hard_link(&key, o.workspace.join("copy.txt")).unwrap();
    let (code, v) = read(&o, json!({"path": "copy.txt"}));
    assert_eq!(code, 3, "{v}");
    assert_eq!(refusal_code(&v), "protected");
    assert!(!v.to_string().contains("still protected"));
}

#[test]
fn a_fifo_is_refused_without_blocking() {
    let o = Owner::new();
    let fifo = o.workspace.join("pipe");
    let st = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(st.success());
    // The command's 30 s timeout would fail this test if the read blocked.
    let (code, v) = read(&o, json!({"path": "pipe"}));
    assert_eq!(code, 3, "{v}");
    assert_eq!(refusal_code(&v), "not_a_file");
}

#[test]
fn a_directory_and_a_device_are_refused() {
    let o = Owner::new();
    std::fs::create_dir(o.workspace.join("sub")).unwrap();
    let (code, v) = read(&o, json!({"path": "sub"}));
    assert_eq!(code, 3, "{v}");
    assert_eq!(refusal_code(&v), "not_a_file");
    symlink("/dev/zero", o.workspace.join("zero")).unwrap();
    let (code, v) = read(&o, json!({"path": "zero"}));
    assert_eq!(code, 3, "{v}");
}

#[test]
fn proc_self_root_is_no_way_around() {
    let o = Owner::new();
    let key = o.write(".ssh/id_rsa", b"protected bytes\n");
    let via_proc = format!("/proc/self/root{}", key.display());
    let (code, v) = read(&o, json!({"path": via_proc}));
    assert_eq!(code, 3, "{v}");
    assert!(!v.to_string().contains("protected bytes"));
}

#[test]
fn nul_and_empty_paths_are_refused_clearly() {
    let o = Owner::new();
    let (code, v) = read(&o, json!({"path": "notes\u{0}.md"}));
    assert_eq!(code, 3, "{v}");
    assert_eq!(refusal_code(&v), "invalid_path");
    let (code, v) = read(&o, json!({"path": ""}));
    assert!(code == 2 || code == 3, "{v}");
}

#[test]
fn shell_syntax_is_refused_not_taken_literally() {
    let o = Owner::new();
    for p in ["$HOME/notes.md", "~root/.bashrc", "${HOME}/x"] {
        let (code, v) = read(&o, json!({ "path": p }));
        assert_eq!(code, 3, "{p}: {v}");
        assert_eq!(refusal_code(&v), "invalid_path", "{p}: {v}");
    }
}

#[test]
fn a_binary_file_is_reported_not_dumped() {
    let o = Owner::new();
    o.write("project/blob.bin", b"\x7fELF\x00\x01\x02\x1b[31m");
    let (code, v) = read(&o, json!({"path": "blob.bin"}));
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["output"]["binary"], true);
    assert!(v["output"]["text"].is_null());
}

#[test]
fn truncation_is_said_and_resumable() {
    let o = Owner::new();
    let body: String = (1..=100).map(|i| format!("line {i:03}\n")).collect();
    o.write("project/long.txt", body.as_bytes());
    let out = o
        .seam()
        .args([
            "invoke",
            "--read-limit",
            "100",
            "files.read",
            r#"{"path":"long.txt"}"#,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["output"]["truncated"], true);
    assert_eq!(v["output"]["lines"], 11);
    assert_eq!(v["output"]["next_offset"], 12);
    assert!(v["output"]["note"].as_str().unwrap().contains("offset 12"));
    let (code, v) = read(&o, json!({"path": "long.txt", "offset": 12, "limit": 2}));
    assert_eq!(code, 0);
    assert_eq!(v["output"]["text"], "line 012\nline 013\n");
}

#[test]
fn malformed_calls_exit_2() {
    let o = Owner::new();
    let out = o
        .seam()
        .args(["invoke", "files.read", "{not json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not valid JSON"));

    let (code, v) = read(&o, json!({"path": "x", "extra": true}));
    assert_eq!(code, 2, "{v}");
    assert_eq!(refusal_code(&v), "invalid_params");
    assert!(refusal_message(&v).contains("extra"), "{v}");

    let out = o
        .seam()
        .args(["invoke", "files.wipe", "{}"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(refusal_code(&v), "unknown_tool");
}

#[test]
fn the_capability_decision_comes_first() {
    let o = Owner::new();
    o.write("project/notes.md", b"hello\n");
    let deny = o.policy("[capabilities]\n\"filesystem.read\" = \"deny\"\n");
    let out = o
        .seam()
        .arg("--policy")
        .arg(&deny)
        .args(["invoke", "files.read", r#"{"path":"notes.md"}"#])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(refusal_code(&v), "capability_denied");

    let ask = o.policy("[capabilities]\n\"filesystem.read\" = \"ask\"\n");
    let out = o
        .seam()
        .env("SEAM_POLICY", &ask)
        .args(["invoke", "files.read", r#"{"path":"notes.md"}"#])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(refusal_code(&v), "consent_required");
    assert!(refusal_message(&v).contains("read"), "{v}");
}

#[test]
fn an_unknown_policy_key_is_an_error_naming_key_and_line() {
    let o = Owner::new();
    let bad = o.policy(
        "[capabilities]\n\"filesystem.read\" = \"allow\"\n\"filesystem.raed\" = \"deny\"\n",
    );
    let out = o
        .seam()
        .arg("--policy")
        .arg(&bad)
        .args(["invoke", "files.read", r#"{"path":"x"}"#])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("filesystem.raed"), "{err}");
    assert!(err.contains('3'), "names line 3: {err}");
}
