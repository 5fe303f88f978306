//! `seam action parse`: stdin to one canonical action and its corrections.

mod common;

use common::Owner;
use serde_json::{Value, json};

fn parse_with(args: &[&str], stdin: &str) -> (Option<i32>, Value, String) {
    let o = Owner::new();
    let out = o
        .seam()
        .args(["action", "parse"])
        .args(args)
        .write_stdin(stdin.as_bytes().to_vec())
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let v = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (out.status.code(), v, String::from_utf8(out.stderr).unwrap())
}

#[test]
fn a_damaged_reply_becomes_the_canonical_action_with_its_corrections() {
    let raw = "<think>read it</think>\n```json\n{\"mode\": \"action\", \"tool\": \"Files.Read\", \"params\": {'path': 'notes/todo.md',}}\n```";
    let (code, v, _) = parse_with(&[], raw);
    assert_eq!(code, Some(0));
    assert_eq!(
        v["action"],
        json!({"mode": "action", "tool": "files.read", "params": {"path": "notes/todo.md"}})
    );
    let c: Vec<&str> = v["corrections"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for want in [
        "think-block",
        "markdown-fence",
        "tool-name-case",
        "single-quotes",
        "trailing-comma",
    ] {
        assert!(c.contains(&want), "{want} not in {c:?}");
    }
}

#[test]
fn tools_names_the_catalog_and_unknown_names_are_kept() {
    let raw = "<tool_call>\n<function=bash>\n<parameter=command>\nls\n</parameter>\n</function>\n</tool_call>";
    let (code, v, _) = parse_with(&["--tools", "Bash,files.read"], raw);
    assert_eq!(code, Some(0));
    assert_eq!(
        v["action"],
        json!({"mode": "action", "tool": "Bash", "params": {"command": "ls"}})
    );
    // against the default 14, `bash` is no tool: kept as written
    let (code, v, _) = parse_with(&[], raw);
    assert_eq!(code, Some(0));
    assert_eq!(v["action"]["tool"], "bash");
}

#[test]
fn prose_exits_2_with_the_reason() {
    let (code, v, err) = parse_with(&[], "The file lists three tasks.");
    assert_eq!(code, Some(2));
    assert!(v.is_null());
    assert!(
        err.contains("no JSON object or tool call found in 27 bytes of prose"),
        "{err}"
    );
}
