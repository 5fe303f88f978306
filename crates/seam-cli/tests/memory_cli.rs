//! `seam index`, `seam note` and the memory tools through `seam invoke`: the real binary.

mod common;

use std::process::Command as Std;

use common::Owner;
use serde_json::{Value, json};

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn invoke(o: &Owner, tool: &str, params: Value) -> (i32, Value) {
    let out = o
        .seam()
        .args(["invoke", tool, &params.to_string()])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code().unwrap(), v)
}

/// A small git repository in the workspace, one file ignored, one protected by the policy.
fn project(o: &Owner) {
    let git = Std::new("git")
        .args(["init", "-q"])
        .current_dir(&o.workspace)
        .status()
        .unwrap();
    assert!(git.success());
    o.write("project/.gitignore", b"generated/\n");
    o.write("project/generated/out.rs", b"pub fn generated_fn() {}\n");
    o.write(
        "project/src/lib.rs",
        b"pub struct Engine;\n\nimpl Engine {\n    pub fn start(&self) {}\n}\n",
    );
    o.write("project/tools/build.py", b"def build_all():\n    pass\n");
    o.write(
        "project/web/app.ts",
        b"export interface Route {\n  path: string;\n}\n",
    );
    o.write("project/deploy/credentials.txt", b"deploy_marker_word\n");
}

#[test]
fn index_then_memory_codebase_through_invoke() {
    let o = Owner::new();
    project(&o);
    let policy = o.policy("[filesystem]\nprotected = [\"~/project/deploy\"]\n");
    let out = o
        .seam()
        .arg("--policy")
        .arg(&policy)
        .args(["index", "."])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout(&out);
    assert!(
        line.starts_with(&format!("indexed {}: 3 files", o.workspace.display())),
        "{line}"
    );
    assert!(line.contains("left out: protected 1"), "{line}");
    assert!(line.contains("this run: 3 parsed"), "{line}");
    // not a terminal: no progress bar, nothing on stderr
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // again, without the policy file: the deploy file is not protected now, and it is the
    // only file parsed (the others are only hashed again: written too recently to trust
    // their times)
    let out = o.seam().args(["index", ".", "--json"]).output().unwrap();
    assert!(out.status.success());
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["parsed"], 1, "{report}");
    assert_eq!(report["files"], 4);

    let (code, v) = invoke(
        &o,
        "memory.codebase",
        json!({"op": "find_symbol", "name": "start"}),
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["tainted"], true);
    assert_eq!(v["output"]["matches"][0]["path"], "src/lib.rs");
    assert_eq!(v["output"]["matches"][0]["line"], 4);
    assert_eq!(v["output"]["matches"][0]["parent"], "Engine");

    let (code, v) = invoke(
        &o,
        "memory.codebase",
        json!({"op": "outline", "path": "web/app.ts"}),
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["output"]["symbols"][0]["name"], "Route");
    assert_eq!(v["output"]["symbols"][0]["kind"], "interface");

    let (code, v) = invoke(
        &o,
        "memory.codebase",
        json!({"op": "search", "query": "generated_fn"}),
    );
    assert_eq!(code, 0, "{v}");
    assert!(
        v["output"]["hits"].as_array().unwrap().is_empty(),
        "ignored files are not indexed: {v}"
    );

    let (code, v) = invoke(&o, "memory.codebase", json!({"op": "rename"}));
    assert_eq!(code, 2, "{v}");
    assert_eq!(v["refused"]["code"], "invalid_params");

    // the store is owner-only
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(o.layout().memory().join("codebase.sqlite"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn index_refuses_a_protected_root_and_a_missing_one() {
    let o = Owner::new();
    o.write(".ssh/id_ed25519", b"key\n");
    let out = o
        .seam()
        .arg("index")
        .arg(o.home.join(".ssh"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("protected"));
    assert!(!o.layout().memory().join("codebase.sqlite").exists());
    let out = o.seam().args(["index", "nope"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn notes_add_list_search_get() {
    let o = Owner::new();
    let out = o.seam().args(["note", "list"]).output().unwrap();
    assert!(out.status.success());
    assert!(out.stdout.is_empty());

    let out = o
        .seam()
        .args(["note", "add", "deploys", "happen", "on", "Fridays"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(stdout(&out), "note 1 added\n");
    let out = o
        .seam()
        .args(["note", "add", "-"])
        .write_stdin("the staging database\nis called scratch\n")
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "note 2 added\n");
    let out = o.seam().args(["note", "add", "  "]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));

    let out = o.seam().args(["note", "list"]).output().unwrap();
    let text = stdout(&out);
    assert!(text.starts_with("#1  "), "{text}");
    assert!(text.contains("deploys happen on Fridays\n#2  "), "{text}");
    assert!(
        text.ends_with("the staging database\nis called scratch\n"),
        "{text}"
    );

    let out = o
        .seam()
        .args(["note", "list", "--json", "--limit", "1"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["notes"][0]["id"], 2);
    assert_eq!(v["truncated"], true);

    let out = o
        .seam()
        .args(["note", "search", "scratch", "--json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["hits"].as_array().unwrap().len(), 1);
    assert_eq!(v["hits"][0]["id"], 2);

    let out = o.seam().args(["note", "get", "1"]).output().unwrap();
    assert!(stdout(&out).ends_with("\ndeploys happen on Fridays\n"));
    let out = o.seam().args(["note", "get", "7"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3));

    // an escape sequence in a note is shown, not obeyed
    o.seam()
        .args(["note", "add", "bell \x1b[31mred"])
        .assert()
        .success();
    let out = o.seam().args(["note", "get", "3"]).output().unwrap();
    let text = stdout(&out);
    assert!(
        !text.contains('\x1b') && text.contains("\\x1b[31mred"),
        "{text}"
    );

    // the model reads them through memory.operator
    let (code, v) = invoke(
        &o,
        "memory.operator",
        json!({"op": "search", "query": "fridays"}),
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["output"]["notes"][0]["id"], 1);
    assert_eq!(v["tainted"], true);
}

#[test]
fn index_leaves_out_a_hard_link_to_a_key_outside_the_read_list() {
    let o = Owner::new();
    let key = o.write(".ssh/id_ed25519", b"fn leaked_key_material() {}\n");
    // A tree outside the owner's home (so outside the read allow-list), on the same
    // file system, holding a hard link to the key under an innocent name.
    let outside = o.dir.path().canonicalize().unwrap().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("ok.rs"), "fn fine() {}\n").unwrap();
    std::fs::hard_link(&key, outside.join("notes.rs")).unwrap();
    let out = o
        .seam()
        .arg("index")
        .arg(&outside)
        .arg("--json")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["files"], 1, "only ok.rs is indexed: {report}");
    assert_eq!(report["skipped"]["protected"], 1, "{report}");
    let db = std::fs::read(o.layout().memory().join("codebase.sqlite")).unwrap();
    let wal = std::fs::read(o.layout().memory().join("codebase.sqlite-wal")).unwrap_or_default();
    for bytes in [db, wal] {
        assert!(
            !bytes.windows(19).any(|w| w == b"leaked_key_material"),
            "the key's text reached the index"
        );
    }
}
