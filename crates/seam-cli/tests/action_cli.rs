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

/// What a `seam` command that must succeed prints.
fn stdout_of(o: &Owner, args: &[&str]) -> Vec<u8> {
    let out = o.seam().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The strings of a JSON array (the corrections a parse took, the tools a prompt shows).
fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect()
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
    let c = strings(&v["corrections"]);
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
    // against the default (the registry's tools), `bash` is no tool: kept as written
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

fn parse_with_catalog(
    o: &Owner,
    catalog: &std::path::Path,
    stdin: &str,
) -> (Option<i32>, Value, String) {
    let out = o
        .seam()
        .args(["action", "parse", "--catalog"])
        .arg(catalog)
        .write_stdin(stdin.as_bytes().to_vec())
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let v = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (out.status.code(), v, String::from_utf8(out.stderr).unwrap())
}

#[test]
fn catalog_reads_what_seam_tools_json_prints_and_the_schema_repairs_apply() {
    let o = Owner::new();
    let file = o.write("catalog.json", &stdout_of(&o, &["tools", "--json"]));
    // a key in another case, a number as a string: repaired only with the schema
    let raw =
        r#"{"mode":"action","tool":"files_read","params":{"Path":"notes/todo.md","limit":"5"}}"#;
    let (code, v, err) = parse_with_catalog(&o, &file, raw);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        v["action"],
        json!({"mode": "action", "tool": "files.read", "params": {"path": "notes/todo.md", "limit": 5}})
    );
    let c = strings(&v["corrections"]);
    for want in [
        "tool-name-separators",
        "param-key-case",
        "param-type-coerced",
    ] {
        assert!(c.contains(&want), "{want} not in {c:?}");
    }
    // names only (--tools), the same reply keeps the key and the string
    let (code, v, _) = parse_with(&["--tools", "files.read"], raw);
    assert_eq!(code, Some(0));
    assert_eq!(
        v["action"]["params"],
        json!({"Path": "notes/todo.md", "limit": "5"})
    );
}

#[test]
fn catalog_in_openai_form_names_the_tools_a_reply_was_written_for() {
    let o = Owner::new();
    let file = o.write(
        "tools.json",
        br#"[{"type": "function", "function": {"name": "get_weather", "description": "weather",
              "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]"#,
    );
    let (code, v, err) = parse_with_catalog(&o, &file, "get_weather\nOslo");
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        v["action"],
        json!({"mode": "action", "tool": "get_weather", "params": {"city": "Oslo"}})
    );
}

#[test]
fn a_bad_catalog_file_exits_2_naming_the_file_and_what_was_wrong() {
    let o = Owner::new();
    let raw = r#"{"mode":"respond","text":"hi"}"#;
    let cases: [(&str, &[u8], &str); 4] = [
        (
            "a.json",
            b"{\"tools\": []}",
            "expected a JSON array of tool specs",
        ),
        ("b.json", b"[{\"name\": \"x\"", "not JSON"),
        (
            "c.json",
            b"[{\"name\": \"x\", \"version\": \"1\", \"description\": \"\"}]",
            "tool 0: missing field `input_schema`",
        ),
        ("d.json", b"[]", "the array holds no tools"),
    ];
    for (name, content, want) in cases {
        let file = o.write(name, content);
        let (code, v, err) = parse_with_catalog(&o, &file, raw);
        assert_eq!(code, Some(2), "{name}: {err}");
        assert!(v.is_null());
        assert!(err.contains(&file.display().to_string()), "{name}: {err}");
        assert!(err.contains(want), "{name}: {want:?} not in {err}");
    }
    let missing = o.home.join("no-such.json");
    let (code, _, err) = parse_with_catalog(&o, &missing, raw);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("no-such.json") && err.contains("cannot read it"),
        "{err}"
    );
    // --catalog and --tools together are refused
    let (code, _, err) = parse_with(&["--tools", "a", "--catalog", "x.json"], raw);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("cannot be used with"), "{err}");
}

/// The default catalog is the registry's tools, read from their specs: every tool the prompt
/// shows the model (`seam prompt --json`, the registry `seam ask` builds) is a name the
/// default resolves, so a tool added to the specs is resolved without a list to update.
#[test]
fn the_default_catalog_resolves_every_tool_of_the_registry() {
    let o = Owner::new();
    let prompt: Value = serde_json::from_slice(&stdout_of(&o, &["prompt", "--json"])).unwrap();
    let tools = strings(&prompt["tools"]);
    assert!(!tools.is_empty());
    for name in tools {
        // Written in another case, a name resolves only when the catalog holds it.
        let raw = json!({"mode": "action", "tool": name.to_uppercase(), "params": {}}).to_string();
        let (code, v, err) = parse_with(&[], &raw);
        assert_eq!(code, Some(0), "{name}: {err}");
        assert_eq!(v["action"]["tool"], name, "{name}: {v}");
        let c = strings(&v["corrections"]);
        assert!(c.contains(&"tool-name-case"), "{name}: {c:?}");
    }
}
