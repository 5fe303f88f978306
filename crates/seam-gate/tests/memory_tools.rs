//! memory.codebase, memory.build and memory.operator through `Toolbox::call`, on stores made
//! in a temp dir: schema refusals, envelopes, scope, admission of `path`, taint, bounds.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use seam_gate::{CallRequest, NoLedger, Toolbox, ToolboxConfig, builtin_toolbox};
use seam_memory::{IndexOptions, MemoryHome, NewBuildRecord, RunKind};
use seam_policy::{Policy, PolicyEnv};
use seam_protocol::{Answer, Envelope, Refusal, RefusalCode};
use seam_scrub::Scrubber;
use serde_json::{Value, json};

const TOKEN: &str = "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";

struct Setup {
    _dir: tempfile::TempDir,
    root: PathBuf,
    workspace: PathBuf,
    memory: MemoryHome,
    toolbox: Toolbox,
}

fn write(p: &Path, content: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, content).unwrap();
}

fn setup(index: bool) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let workspace = root.join("home/project");
    let other = root.join("home/other");
    write(&workspace.join(".gitignore"), "secret.txt\n");
    write(&workspace.join("secret.txt"), "ignoredmarker\n");
    write(
        &workspace.join("src/lib.rs"),
        "pub struct Config;\n\nimpl Config {\n    pub fn parse_config() {}\n}\n",
    );
    write(&workspace.join("src/deep/a/b/c.rs"), "fn deep_fn() {}\n");
    write(
        &workspace.join("app/main.py"),
        &format!("def main():\n    token = \"{TOKEN}\"\n    return 'frobnicate'\n"),
    );
    for i in 0..5 {
        write(
            &workspace.join(format!("many/f{i}.rs")),
            &format!("fn config_{i}() {{}} // frobnicate\n"),
        );
    }
    write(
        &other.join("lib.rs"),
        "pub struct Config;\npub fn only_elsewhere() {}\n",
    );
    let seam_home = root.join("seam");
    let memory = MemoryHome::new(&seam_home);
    if index {
        let mut idx = memory.codebase().unwrap();
        for repo in [&workspace, &other] {
            idx.index(repo, &IndexOptions::default(), &mut |_| {})
                .unwrap();
        }
    }
    let env = PolicyEnv {
        owner_home: root.join("home"),
        seam_home,
        workspace_root: workspace.clone(),
    };
    let toolbox = builtin_toolbox(
        Arc::new(Policy::builtin(env)),
        Arc::new(Scrubber::new()),
        Arc::new(NoLedger),
        &ToolboxConfig::default(),
    )
    .unwrap();
    Setup {
        _dir: dir,
        root,
        workspace,
        memory,
        toolbox,
    }
}

fn call(s: &Setup, tool: &str, params: Value) -> Answer {
    s.toolbox
        .call(CallRequest {
            tool: tool.into(),
            params,
            turn: None,
        })
        .unwrap()
}

fn envelope(s: &Setup, tool: &str, params: Value) -> Envelope {
    match call(s, tool, params.clone()) {
        Answer::Envelope(e) => e,
        Answer::Refusal(r) => panic!("{tool} {params} refused: {r:?}"),
    }
}

fn refusal(s: &Setup, tool: &str, params: Value) -> Refusal {
    match call(s, tool, params.clone()) {
        Answer::Refusal(r) => r,
        Answer::Envelope(e) => panic!("{tool} {params} answered: {e:?}"),
    }
}

#[test]
fn bad_params_are_refused_by_the_schema() {
    let s = setup(true);
    for (tool, params) in [
        ("memory.codebase", json!({"op": "delete"})),
        ("memory.codebase", json!({"op": "outline"})),
        ("memory.codebase", json!({"op": "find_symbol"})),
        (
            "memory.codebase",
            json!({"op": "search", "query": "x", "extra": 1}),
        ),
        ("memory.codebase", json!({"op": "tree", "depth": 0})),
        ("memory.build", json!({"op": "get"})),
        ("memory.build", json!({"op": "drop_table"})),
        ("memory.operator", json!({"op": "search"})),
        ("memory.operator", json!({"op": "add", "text": "x"})),
        ("memory.operator", json!({})),
    ] {
        let r = refusal(&s, tool, params.clone());
        assert_eq!(
            r.refused.code,
            RefusalCode::InvalidParams,
            "{tool} {params}"
        );
    }
    let r = refusal(&s, "memory.codebase", json!({"op": "outline"}));
    assert!(
        r.refused.message.contains("\"path\""),
        "{}",
        r.refused.message
    );
}

#[test]
fn find_symbol_answers_in_workspace_paths_and_taints_the_turn() {
    let s = setup(true);
    let answer = s
        .toolbox
        .call(CallRequest {
            tool: "memory.codebase".into(),
            params: json!({"op": "find_symbol", "name": "Config"}),
            turn: Some("turn-1".into()),
        })
        .unwrap();
    let Answer::Envelope(e) = answer else {
        panic!("{answer:?}")
    };
    assert!(e.tainted);
    assert!(s.toolbox.is_tainted("turn-1"));
    assert_eq!(e.tool, "memory.codebase");
    let matches = e.output["matches"].as_array().unwrap();
    // the struct and the impl in the workspace; not the Config of the other repository;
    // then the names that start with it (config_0…, case ignored)
    let exact: Vec<_> = matches.iter().filter(|m| m["exact"] == true).collect();
    assert_eq!(exact.len(), 2, "{matches:?}");
    assert!(exact.iter().all(|m| m["path"] == "src/lib.rs"));
    assert!(matches[..2].iter().all(|m| m["exact"] == true));
    assert_eq!(matches.len(), 7);
    assert!(
        matches
            .iter()
            .all(|m| !m["path"].as_str().unwrap().contains("other"))
    );
    assert_eq!(matches[0]["line"], 1);
    assert_eq!(e.output["truncated"], false);
    let none = envelope(
        &s,
        "memory.codebase",
        json!({"op": "find_symbol", "name": "only_elsewhere"}),
    );
    assert!(none.output["matches"].as_array().unwrap().is_empty());
    assert!(
        none.output["note"]
            .as_str()
            .unwrap()
            .contains("no definition")
    );
}

#[test]
fn results_are_bounded_and_say_so() {
    let s = setup(true);
    let e = envelope(
        &s,
        "memory.codebase",
        json!({"op": "find_symbol", "name": "config_", "limit": 2}),
    );
    assert_eq!(e.output["matches"].as_array().unwrap().len(), 2);
    assert_eq!(e.output["truncated"], true);
    assert!(
        e.output["note"]
            .as_str()
            .unwrap()
            .contains("only the first 2 matches")
    );
    let e = envelope(
        &s,
        "memory.codebase",
        json!({"op": "search", "query": "frobnicate", "limit": 1}),
    );
    assert_eq!(e.output["hits"].as_array().unwrap().len(), 1);
    assert_eq!(e.output["truncated"], true);
    let e = envelope(
        &s,
        "memory.codebase",
        json!({"op": "tree", "depth": 99, "limit": 100000}),
    );
    let note = e.output["note"].as_str().unwrap();
    assert!(
        note.contains("depth is at most 8") && note.contains("limit is at most 1000"),
        "{note}"
    );
}

#[test]
fn outline_and_tree_take_admitted_paths() {
    let s = setup(true);
    let e = envelope(
        &s,
        "memory.codebase",
        json!({"op": "outline", "path": "src/lib.rs"}),
    );
    let names: Vec<_> = e.output["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap(),
                s["kind"].as_str().unwrap(),
                s["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            ("Config", "struct", 1),
            ("Config", "impl", 3),
            ("parse_config", "method", 4)
        ]
    );
    assert_eq!(e.output["path"], "src/lib.rs");
    assert!(e.tainted);

    // an outline of a directory is answered with its files (see
    // outline_of_a_directory_lists_its_files_and_their_top_symbols); tree lists it
    let e = envelope(
        &s,
        "memory.codebase",
        json!({"op": "outline", "path": "src"}),
    );
    assert_eq!(e.output["kind"], "dir");
    let e = envelope(
        &s,
        "memory.codebase",
        json!({"op": "tree", "path": "src", "depth": 1}),
    );
    let entries: Vec<_> = e.output["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["path"].as_str().unwrap(), e["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(entries, [("src/deep", "dir"), ("src/lib.rs", "file")]);
    let e = envelope(&s, "memory.codebase", json!({"op": "tree"}));
    assert_eq!(e.output["path"], ".");
    assert_eq!(e.output["depth"], 2);

    // outside the workspace: admission refuses, though the index has it
    let r = refusal(
        &s,
        "memory.codebase",
        json!({"op": "outline", "path": s.root.join("home/other/lib.rs").to_str().unwrap()}),
    );
    assert_eq!(r.refused.code, RefusalCode::NotAllowed, "{r:?}");
    let r = refusal(
        &s,
        "memory.codebase",
        json!({"op": "tree", "path": "../other"}),
    );
    assert_eq!(r.refused.code, RefusalCode::NotAllowed, "{r:?}");
    // a file git ignores exists, is admitted, and is not in the index
    let e = envelope(
        &s,
        "memory.codebase",
        json!({"op": "outline", "path": "secret.txt"}),
    );
    assert_eq!(e.output["indexed"], false);
    // a missing file
    let r = refusal(
        &s,
        "memory.codebase",
        json!({"op": "outline", "path": "src/nope.rs"}),
    );
    assert_eq!(r.refused.code, RefusalCode::NotFound);
}

#[test]
fn search_gives_lines_and_the_scrubber_still_runs() {
    let s = setup(true);
    let e = envelope(
        &s,
        "memory.codebase",
        json!({"op": "search", "query": "token"}),
    );
    let hits = e.output["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0]["path"], "app/main.py");
    assert_eq!(hits[0]["lines"][0]["line"], 2);
    let text = serde_json::to_string(&e.output).unwrap();
    assert!(!text.contains(TOKEN), "{text}");
    assert!(!e.scrubbed.is_empty());
    let r = refusal(
        &s,
        "memory.codebase",
        json!({"op": "search", "query": "()"}),
    );
    assert_eq!(r.refused.code, RefusalCode::InvalidParams);
}

#[test]
fn a_tree_with_no_index_names_the_directorys_readable_files_and_nothing_else() {
    let s = setup(false);
    let notes = s.workspace.join("notes");
    write(&notes.join("b.md"), "b\n");
    write(&notes.join("a.md"), "a\n");
    write(&notes.join(".env"), "HIDDEN=1\n");
    write(&notes.join("vault.kdbx"), "protected by name\n");
    write(&notes.join("sub/c.md"), "c\n");
    write(&s.root.join("home/.ssh/id_ed25519"), "key\n");
    std::os::unix::fs::symlink(s.root.join("home/.ssh/id_ed25519"), notes.join("key.md")).unwrap();
    for path in ["notes", "notes/"] {
        let e = envelope(&s, "memory.codebase", json!({"op": "tree", "path": path}));
        assert_eq!(e.output["indexed"], false, "{}", e.output);
        assert_eq!(e.output["path"], "notes", "{}", e.output);
        assert_eq!(
            e.output["files"],
            json!(["notes/a.md", "notes/b.md"]),
            "{}",
            e.output
        );
        let note = e.output["note"].as_str().unwrap();
        assert!(note.contains("files.read"), "{note}");
        let text = serde_json::to_string(&e.output).unwrap();
        for hidden in ["vault", "key.md", ".env", "sub", "id_ed25519"] {
            assert!(!text.contains(hidden), "{hidden}: {text}");
        }
    }
    // The workspace's own files, with no path; a protected directory is refused as ever.
    let e = envelope(&s, "memory.codebase", json!({"op": "tree"}));
    let files = e.output["files"].as_array().unwrap();
    assert!(
        files.iter().all(|f| !f.as_str().unwrap().contains('/')),
        "{files:?}"
    );
    assert!(files.iter().any(|f| f == "secret.txt"), "{files:?}");
    assert!(!files.iter().any(|f| f == ".gitignore"), "{files:?}");
    let r = refusal(
        &s,
        "memory.codebase",
        json!({"op": "tree", "path": "~/.ssh"}),
    );
    assert_ne!(r.refused.code, RefusalCode::InvalidParams, "{r:?}");
    // Other ops with no index say only that.
    let e = envelope(
        &s,
        "memory.codebase",
        json!({"op": "find_symbol", "name": "x"}),
    );
    assert!(e.output.get("files").is_none(), "{}", e.output);
    // An indexed workspace's tree is the index's, as before.
    let s = setup(true);
    let e = envelope(&s, "memory.codebase", json!({"op": "tree", "path": "src"}));
    assert!(e.output.get("files").is_none(), "{}", e.output);
    assert!(
        e.output["entries"]
            .as_array()
            .is_some_and(|v| !v.is_empty()),
        "{}",
        e.output
    );
}

#[test]
fn nothing_indexed_is_said_and_nothing_is_created() {
    let s = setup(false);
    let e = envelope(
        &s,
        "memory.codebase",
        json!({"op": "find_symbol", "name": "Config"}),
    );
    assert_eq!(e.output["indexed"], false);
    let note = e.output["note"].as_str().unwrap();
    assert!(note.contains("seam index"), "{note}");
    // The model is not shown where the workspace is: shown the path, a small
    // model wrote a program over a file under it.
    assert!(
        !note.contains("home/project") && !note.contains('/'),
        "{note}"
    );
    let e = envelope(&s, "memory.operator", json!({"op": "search", "query": "x"}));
    assert!(e.output["notes"].as_array().unwrap().is_empty());
    let e = envelope(&s, "memory.build", json!({"op": "all_summaries"}));
    assert!(e.output["runs"].as_array().unwrap().is_empty());
    let r = refusal(&s, "memory.build", json!({"op": "get", "id": 1}));
    assert_eq!(r.refused.code, RefusalCode::NotFound);
    assert!(
        !s.memory.dir().exists(),
        "a read created the memory directory"
    );
    let _ = &s.workspace;
}

#[test]
fn memory_build_summaries_search_get() {
    let s = setup(false);
    let mut builds = s.memory.agent_builds().unwrap();
    for (i, summary) in ["ok", "E0425 cannot find value", "ok"].iter().enumerate() {
        builds
            .record(
                &Scrubber::new(),
                &NewBuildRecord {
                    kind: RunKind::Build,
                    command: "cargo build",
                    exit_status: Some(if i == 1 { 101 } else { 0 }),
                    duration: Duration::from_millis(10),
                    summary,
                    log: &format!("log of run {i} GITHUB_TOKEN={TOKEN}\n"),
                },
            )
            .unwrap();
    }
    let e = envelope(
        &s,
        "memory.build",
        json!({"op": "all_summaries", "limit": 2}),
    );
    let ids: Vec<_> = e.output["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [3, 2]);
    assert_eq!(e.output["truncated"], true);
    assert_eq!(e.output["total"], 3);
    assert!(e.tainted);
    let e = envelope(
        &s,
        "memory.build",
        json!({"op": "search", "query": "E0425"}),
    );
    assert_eq!(e.output["hits"][0]["id"], 2);
    assert_eq!(e.output["hits"][0]["exit_status"], 101);
    let e = envelope(&s, "memory.build", json!({"op": "get", "id": 2}));
    let log = e.output["run"]["log_excerpt"].as_str().unwrap();
    assert!(
        log.starts_with("log of run 1") && !log.contains(TOKEN),
        "{log}"
    );
    let r = refusal(&s, "memory.build", json!({"op": "get", "id": 9}));
    assert_eq!(r.refused.code, RefusalCode::NotFound);
    assert!(r.refused.message.contains("up to 3"));
}

#[test]
fn memory_operator_search_get_list() {
    let s = setup(false);
    let mut notes = s.memory.notes().unwrap();
    notes.add("Deploys happen on Fridays.").unwrap();
    notes.add("The test database is called scratch.").unwrap();
    let e = envelope(
        &s,
        "memory.operator",
        json!({"op": "search", "query": "database"}),
    );
    assert_eq!(e.output["notes"][0]["id"], 2);
    assert!(e.tainted);
    assert!(e.output.get("note").is_none(), "{}", e.output);
    // No note holds every word: those holding some, and the answer says so.
    let e = envelope(
        &s,
        "memory.operator",
        json!({"op": "search", "query": "when is the database deployed"}),
    );
    assert_eq!(e.output["notes"].as_array().unwrap().len(), 1);
    assert_eq!(e.output["notes"][0]["id"], 2);
    assert!(
        e.output
            .to_string()
            .contains("nothing holds every word of the query"),
        "{}",
        e.output
    );
    // No note holds any word: the newest are shown, and the answer says so.
    let e = envelope(
        &s,
        "memory.operator",
        json!({"op": "search", "query": "mileage"}),
    );
    assert_eq!(e.output["newest"], true, "{}", e.output);
    let shown: Vec<&Value> = e.output["notes"].as_array().unwrap().iter().collect();
    assert_eq!(shown.len(), 2, "{}", e.output);
    assert_eq!(shown[1]["text"], "The test database is called scratch.");
    assert!(
        e.output["note"].as_str().unwrap().contains(
            "no note holds a word of the query, so the newest 2 of the operator's 2 notes are shown"
        ),
        "{}",
        e.output
    );
    assert!(e.tainted);
    let e = envelope(&s, "memory.operator", json!({"op": "get", "id": 1}));
    assert_eq!(e.output["note"]["text"], "Deploys happen on Fridays.");
    let e = envelope(&s, "memory.operator", json!({"op": "list", "limit": 1}));
    assert_eq!(e.output["notes"][0]["id"], 2);
    assert_eq!(e.output["truncated"], true);
    let r = refusal(&s, "memory.operator", json!({"op": "get", "id": 5}));
    assert_eq!(r.refused.code, RefusalCode::NotFound);
    assert!(r.refused.message.contains("2 notes"));
}

#[test]
fn the_memory_capability_denied_refuses_all_three() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("home/project")).unwrap();
    let env = PolicyEnv {
        owner_home: root.join("home"),
        seam_home: root.join("seam"),
        workspace_root: root.join("home/project"),
    };
    let policy = Policy::from_toml_str(
        "[capabilities]\nmemory = \"deny\"\n",
        &root.join("policy.toml"),
        env,
    )
    .unwrap();
    let tb = builtin_toolbox(
        Arc::new(policy),
        Arc::new(Scrubber::new()),
        Arc::new(NoLedger),
        &ToolboxConfig::default(),
    )
    .unwrap();
    for (tool, params) in [
        ("memory.codebase", json!({"op": "tree"})),
        ("memory.build", json!({"op": "all_summaries"})),
        ("memory.operator", json!({"op": "list"})),
    ] {
        let a = tb
            .call(CallRequest {
                tool: tool.into(),
                params,
                turn: None,
            })
            .unwrap();
        assert!(
            matches!(&a, Answer::Refusal(r) if r.refused.code == RefusalCode::CapabilityDenied),
            "{tool}: {a:?}"
        );
    }
}

#[test]
fn outline_of_a_directory_lists_its_files_and_their_top_symbols() {
    let s = setup(true);
    for path in ["src", "src/", "./src"] {
        let e = envelope(
            &s,
            "memory.codebase",
            json!({"op": "outline", "path": path}),
        );
        assert!(e.tainted);
        assert_eq!(e.output["op"], "outline");
        assert_eq!(e.output["path"], "src", "{path}");
        assert_eq!(e.output["kind"], "dir");
        assert_eq!(e.output["indexed"], true);
        let files: Vec<_> = e.output["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["path"].as_str().unwrap())
            .collect();
        // every indexed file below it, at any depth
        assert_eq!(files, ["src/deep/a/b/c.rs", "src/lib.rs"], "{path}");
        // top-level symbols only: the struct and the impl, not the method
        let lib = &e.output["files"][1];
        let symbols: Vec<_> = lib["symbols"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s["name"].as_str().unwrap(), s["kind"].as_str().unwrap()))
            .collect();
        assert_eq!(symbols, [("Config", "struct"), ("Config", "impl")]);
        assert_eq!(e.output["files"][0]["symbols"][0]["name"], "deep_fn");
        // The agent reads the files back as the type they were written from.
        let typed: Vec<seam_protocol::codebase::FileOutline> =
            serde_json::from_value(e.output["files"].clone()).unwrap();
        assert_eq!(typed[1].symbols[0].name, "Config");
        assert_eq!(typed[1].path, "src/lib.rs");
        let note = e.output["note"].as_str().unwrap();
        assert!(note.starts_with("src is a directory"), "{note}");
        assert_eq!(e.output["truncated"], false);
    }
    // the workspace itself
    let e = envelope(&s, "memory.codebase", json!({"op": "outline", "path": "."}));
    assert_eq!(e.output["path"], ".");
    let files = e.output["files"].as_array().unwrap();
    assert_eq!(files.len(), 8, "{files:?}");
    assert!(
        files
            .iter()
            .all(|f| !f["path"].as_str().unwrap().contains("secret"))
    );
    // the limit bounds the symbols in all, and says so
    let e = envelope(
        &s,
        "memory.codebase",
        json!({"op": "outline", "path": "many", "limit": 2}),
    );
    let counts: Vec<_> = e.output["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["symbols"].as_array().unwrap().len())
        .collect();
    assert_eq!(counts, [1, 1, 0, 0, 0]);
    assert_eq!(e.output["truncated"], true);
    assert_eq!(e.output["files"][2]["more_symbols"], 1);
    assert!(e.output["note"].as_str().unwrap().contains("cut"));
    // still admitted like any path: outside the workspace is refused
    let r = refusal(
        &s,
        "memory.codebase",
        json!({"op": "outline", "path": "../other"}),
    );
    assert_eq!(r.refused.code, RefusalCode::NotAllowed, "{r:?}");
}

#[test]
fn an_outline_given_a_query_searches_for_it_below_its_directory() {
    let s = setup(true);
    // "frobnicate" is in app/main.py and in many/*.rs; below many/ only the latter.
    let e = envelope(
        &s,
        "memory.codebase",
        json!({"op": "outline", "path": "many/", "query": "frobnicate"}),
    );
    assert_eq!(e.output["op"], "search", "{}", e.output);
    let paths: Vec<&str> = e.output["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths.len(), 5, "{paths:?}");
    assert!(paths.iter().all(|p| p.starts_with("many/")), "{paths:?}");
    // Each line found names the function it is in.
    assert_eq!(e.output["hits"][0]["lines"][0]["in"], "function config_0");
    // The agent reads the hits back as the type they were written from.
    let typed: Vec<seam_protocol::codebase::SearchHit> =
        serde_json::from_value(e.output["hits"].clone()).unwrap();
    assert_eq!(typed.len(), 5);
    assert_eq!(
        typed[0].lines[0].within.as_deref(),
        Some("function config_0")
    );
    let note = e.output["note"].as_str().unwrap();
    assert!(note.contains("op=outline takes no query"), "{note}");
    // A path outside the workspace is refused before any search, as for every outline.
    let r = refusal(
        &s,
        "memory.codebase",
        json!({"op": "outline", "path": "../other", "query": "Config"}),
    );
    assert_eq!(r.refused.code, RefusalCode::NotAllowed, "{r:?}");
    // Without a query an outline is an outline.
    let e = envelope(
        &s,
        "memory.codebase",
        json!({"op": "outline", "path": "many/", "query": " "}),
    );
    assert_eq!(e.output["op"], "outline");
}

#[test]
fn outline_of_an_empty_directory_says_nothing_is_indexed() {
    let s = setup(true);
    std::fs::create_dir_all(s.workspace.join("empty")).unwrap();
    let e = envelope(
        &s,
        "memory.codebase",
        json!({"op": "outline", "path": "empty"}),
    );
    assert_eq!(e.output["indexed"], false);
    assert!(e.output["files"].as_array().unwrap().is_empty());
    assert!(
        e.output["note"]
            .as_str()
            .unwrap()
            .contains("nothing is indexed at empty")
    );
}

#[test]
fn find_symbol_reads_a_query_as_the_name_and_says_so() {
    let s = setup(true);
    let by_name = envelope(
        &s,
        "memory.codebase",
        json!({"op": "find_symbol", "name": "parse_config"}),
    );
    assert!(by_name.output.get("note").is_none(), "{:?}", by_name.output);
    let e = envelope(
        &s,
        "memory.codebase",
        json!({"op": "find_symbol", "query": "parse_config"}),
    );
    assert_eq!(e.output["note"], "read params.query as the name");
    assert_eq!(e.output["name"], "parse_config");
    assert_eq!(e.output["matches"], by_name.output["matches"]);
    assert_eq!(e.output["matches"][0]["path"], "src/lib.rs");
    // both: the name is used, and the answer says the query was not
    let e = envelope(
        &s,
        "memory.codebase",
        json!({"op": "find_symbol", "name": "parse_config", "query": "Config"}),
    );
    assert_eq!(e.output["name"], "parse_config");
    assert!(
        e.output["note"]
            .as_str()
            .unwrap()
            .contains("params.query is not used")
    );
    // neither: the schema names what is missing
    let r = refusal(&s, "memory.codebase", json!({"op": "find_symbol"}));
    assert_eq!(r.refused.code, RefusalCode::InvalidParams);
    assert!(
        r.refused.message.contains("\"name\""),
        "{}",
        r.refused.message
    );
    // and the other way round: search given a name and no query searches for the name,
    // and says so (`{op: search, name: parse_duration}`, qwen2.5-coder-1.5b)
    let by_query = envelope(
        &s,
        "memory.codebase",
        json!({"op": "search", "query": "parse_config"}),
    );
    let e = envelope(
        &s,
        "memory.codebase",
        json!({"op": "search", "name": "parse_config"}),
    );
    assert_eq!(
        e.output["note"],
        "searched for params.name: op=search takes params.query"
    );
    assert_eq!(e.output["hits"], by_query.output["hits"]);
    assert!(!e.output["hits"].as_array().unwrap().is_empty());
    // neither: search names its query as missing
    let r = refusal(&s, "memory.codebase", json!({"op": "search"}));
    assert_eq!(r.refused.code, RefusalCode::InvalidParams);
    assert!(
        r.refused.message.contains("\"query\""),
        "{}",
        r.refused.message
    );
    let r = refusal(
        &s,
        "memory.codebase",
        json!({"op": "find_symbol", "query": ""}),
    );
    assert_eq!(r.refused.code, RefusalCode::InvalidParams);
}

#[test]
fn a_search_of_the_notes_for_a_file_says_files_read_reads_it() {
    let s = setup(false);
    // no note kept yet
    let e = envelope(
        &s,
        "memory.operator",
        json!({"op": "search", "query": "pager notes/oncall-rota.md"}),
    );
    let note = e.output["note"].as_str().unwrap();
    assert!(note.contains("written no note"), "{note}");
    assert!(
        note.contains(r#"files.read {"path": "notes/oncall-rota.md"}"#),
        "{note}"
    );
    // notes kept, none matching
    s.memory
        .notes()
        .unwrap()
        .add("Deploys happen on Fridays.")
        .unwrap();
    let e = envelope(
        &s,
        "memory.operator",
        json!({"op": "search", "query": "what does plan.txt say?"}),
    );
    let note = e.output["note"].as_str().unwrap();
    assert!(note.contains("plan.txt is a file"), "{note}");
    // words that are no file: no hint
    for query in ["version 1.5", "deploys", "e.g. Friday", "3.85%"] {
        let e = envelope(
            &s,
            "memory.operator",
            json!({"op": "search", "query": query}),
        );
        assert!(
            !e.output.to_string().contains("files.read"),
            "{query}: {}",
            e.output
        );
    }
}

#[test]
fn an_outline_of_a_missing_path_with_a_query_looks_the_query_up() {
    let s = setup(true);
    let e = envelope(
        &s,
        "memory.codebase",
        json!({"op": "outline", "path": "myproject", "query": "parse_config"}),
    );
    assert_eq!(e.output["op"], "find_symbol");
    assert_eq!(e.output["matches"][0]["path"], "src/lib.rs");
    let note = e.output["note"].as_str().unwrap();
    assert!(
        note.contains("myproject does not exist: looked params.query up as a name"),
        "{note}"
    );
    // several words: a search
    let e = envelope(
        &s,
        "memory.codebase",
        json!({"op": "tree", "path": "nowhere", "query": "parse config"}),
    );
    assert_eq!(e.output["op"], "search");
    // no query or name: the refusal stands, naming the path
    let r = refusal(
        &s,
        "memory.codebase",
        json!({"op": "outline", "path": "myproject"}),
    );
    assert_eq!(r.refused.code, RefusalCode::NotFound);
    assert!(r.refused.message.contains("myproject does not exist"));
    // a path that exists is outlined, whatever else is given
    let e = envelope(
        &s,
        "memory.codebase",
        json!({"op": "outline", "path": "src/lib.rs", "query": "parse_config"}),
    );
    assert_eq!(e.output["op"], "outline");
}

#[test]
fn an_outline_with_no_path_looks_its_name_or_query_up() {
    let s = setup(true);
    // qwen2.5-coder-1.5b under llama-server: `{op: outline, name: …}`, no path.
    let e = envelope(
        &s,
        "memory.codebase",
        json!({"op": "outline", "name": "parse_config"}),
    );
    assert_eq!(e.output["op"], "find_symbol");
    assert_eq!(e.output["matches"][0]["path"], "src/lib.rs");
    let note = e.output["note"].as_str().unwrap();
    assert!(
        note.contains(
            "op=outline needs a path, and none was given: looked params.name up as a name"
        ),
        "{note}"
    );
    // several words: a search
    let e = envelope(
        &s,
        "memory.codebase",
        json!({"op": "outline", "query": "parse config"}),
    );
    assert_eq!(e.output["op"], "search");
    // A name that is no symbol's (the project's own, as qwen2.5-coder-1.5b
    // gave for "which file of the shelf project defines slugifyTitle"): the
    // outline asked for is the workspace's, its files and their symbols.
    let e = envelope(
        &s,
        "memory.codebase",
        json!({"op": "outline", "name": "project"}),
    );
    assert_eq!(e.output["op"], "outline", "{}", e.output);
    let files = e.output["files"].as_array().expect("files");
    let lib = files
        .iter()
        .find(|f| f["path"] == "src/lib.rs")
        .unwrap_or_else(|| panic!("src/lib.rs in {files:?}"));
    assert_eq!(lib["symbols"][0]["name"], "Config");
    // Only the workspace's files: the other indexed repository is not in it.
    assert!(
        files
            .iter()
            .all(|f| !f["path"].as_str().unwrap().contains("other")),
        "{files:?}"
    );
    let note = e.output["note"].as_str().unwrap();
    assert!(
        note.contains("outline of the workspace (.) instead"),
        "{note}"
    );
    // The same for words that are nowhere.
    let e = envelope(
        &s,
        "memory.codebase",
        json!({"op": "outline", "query": "zebra quagga"}),
    );
    assert_eq!(e.output["op"], "outline", "{}", e.output);
    // nothing to look up: refused by the schema, which names what is missing
    let r = refusal(&s, "memory.codebase", json!({"op": "outline"}));
    assert_eq!(r.refused.code, RefusalCode::InvalidParams);
}

#[test]
fn a_tree_with_no_index_names_what_files_read_of_the_directory_names_and_says_when_cut() {
    let s = setup(false);
    let notes = s.workspace.join("notes");
    for i in 0..25 {
        write(&notes.join(format!("n{i:02}.md")), "n\n");
    }
    write(&notes.join("vault.kdbx"), "protected by name\n");
    write(&notes.join(".hidden.md"), "hidden\n");
    let e = envelope(
        &s,
        "memory.codebase",
        json!({"op": "tree", "path": "notes"}),
    );
    let files: Vec<&str> = e.output["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert_eq!(files.len(), 20, "{}", e.output);
    assert_eq!(files[0], "notes/n00.md");
    let note = e.output["note"].as_str().unwrap();
    assert!(note.contains("it may hold more"), "{note}");
    // The same names, in the same order, as files.read's refusal of the directory gives:
    // one listing, one admission.
    let r = refusal(&s, "files.read", json!({"path": "notes"}));
    assert_eq!(r.refused.code, RefusalCode::NotAFile);
    assert!(
        r.refused.message.contains(&files.join(", ")),
        "{}\n{files:?}",
        r.refused.message
    );
    // A directory with nothing to read says so; a file's tree is as before.
    write(&s.workspace.join("empty/.only-hidden"), "h\n");
    let e = envelope(
        &s,
        "memory.codebase",
        json!({"op": "tree", "path": "empty"}),
    );
    assert_eq!(e.output["files"], json!([]), "{}", e.output);
    let note = e.output["note"].as_str().unwrap();
    assert!(note.contains("no file directly in empty"), "{note}");
    let e = envelope(
        &s,
        "memory.codebase",
        json!({"op": "tree", "path": "src/lib.rs"}),
    );
    assert!(e.output.get("files").is_none(), "{}", e.output);
    assert_eq!(e.output["indexed"], false);
}
