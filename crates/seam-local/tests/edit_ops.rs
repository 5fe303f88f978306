//! `builder append` and `builder replace`: the edits a small model can write
//! instead of a whole file or a diff, through the same admission, commits,
//! limits and Critic as `write`.

mod common;

use common::{Fixture, builder_ok as ok, builder_refused as refused, git, params, turn};
use seam_local::{LocalRefusal, LocalTools, TurnInfo, Verdict};
use seam_protocol::RefusalCode;
use serde_json::{Value, json};

fn staged_file(tools: &LocalTools, t: &str, path: &str) -> Vec<u8> {
    let (_, wt) = tools.turn_branch(t).unwrap();
    std::fs::read(wt.join(path)).unwrap()
}

/// Turn `turn` with the page-size task the builder's line lists are tried on.
fn page_size_turn(turn: &str) -> TurnInfo {
    TurnInfo {
        turn: turn.into(),
        task: "Make shelf show 25 books per page by default instead of 10.".into(),
        ..TurnInfo::default()
    }
}

/// Commits `files` (path, bytes) to the fixture's main.
fn commit(f: &Fixture, files: &[(&str, &[u8])]) {
    for (path, bytes) in files {
        let p = f.repo().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
    git(&f.repo(), &["add", "-A"]);
    git(&f.repo(), &["commit", "-q", "-m", "fixture files"]);
}

#[test]
fn append_adds_a_line_and_keeps_the_rest() {
    let f = Fixture::new();
    let tools = f.tools();
    let main_before = f.head("main");
    let out = ok(
        &tools,
        "a1",
        json!({"op": "append", "path": "README.md", "text": "- buy milk"}),
    );
    assert_eq!(out["changed"], true);
    assert_eq!(out["created"], false);
    assert_eq!(out["path"], "README.md");
    assert!(out.get("note").is_none(), "{out}");
    assert_eq!(
        staged_file(&tools, "a1", "README.md"),
        b"hello\n- buy milk\n"
    );
    assert_eq!(
        git(&f.staging(), &["log", "-1", "--format=%s", "seam/a1-1"]),
        "builder: append to README.md"
    );
    // Main is untouched; the Critic sees a one-line change.
    assert_eq!(f.head("main"), main_before);
    assert_eq!(
        std::fs::read(f.repo().join("README.md")).unwrap(),
        b"hello\n"
    );
    let items = tools.finish_turn(&turn("a1")).unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0].verdict, Verdict::Pass, "{}", items[0].critic);
    assert!(
        items[0].preview.contains("+- buy milk"),
        "{}",
        items[0].preview
    );
    assert!(!items[0].preview.contains("-hello"), "{}", items[0].preview);
}

#[test]
fn append_makes_a_missing_file_and_ends_an_unended_line() {
    let f = Fixture::new();
    commit(&f, &[("TODO.md", b"- one")]);
    let tools = f.tools();
    let out = ok(
        &tools,
        "a2",
        json!({"op": "append", "path": "notes/new.md", "text": "first\n", "message": "start notes"}),
    );
    assert_eq!(out["created"], true);
    assert_eq!(staged_file(&tools, "a2", "notes/new.md"), b"first\n");
    assert_eq!(
        git(&f.staging(), &["log", "-1", "--format=%s", "seam/a2-1"]),
        "start notes"
    );
    ok(
        &tools,
        "a2",
        json!({"op": "append", "path": "TODO.md", "text": "- two\n- three"}),
    );
    assert_eq!(
        staged_file(&tools, "a2", "TODO.md"),
        b"- one\n- two\n- three\n"
    );
}

#[test]
fn append_reads_content_as_the_text_and_says_so() {
    let f = Fixture::new();
    let tools = f.tools();
    let out = ok(
        &tools,
        "a3",
        json!({"op": "append", "path": "README.md", "content": "more"}),
    );
    assert_eq!(out["note"], "read params.content as the text to append");
    assert_eq!(staged_file(&tools, "a3", "README.md"), b"hello\nmore\n");
    let out = ok(
        &tools,
        "a3",
        json!({"op": "append", "path": "README.md", "text": "last", "content": "ignored"}),
    );
    assert!(
        out["note"]
            .as_str()
            .unwrap()
            .contains("params.content is not used"),
        "{out}"
    );
    assert_eq!(
        staged_file(&tools, "a3", "README.md"),
        b"hello\nmore\nlast\n"
    );
    // Neither: named, and no branch made for it.
    let e = refused(&tools, "a3b", json!({"op": "append", "path": "README.md"}));
    assert_eq!(e.code, RefusalCode::InvalidParams);
    assert!(e.message.contains("params.text"), "{e}");
    let e = refused(
        &tools,
        "a3b",
        json!({"op": "append", "path": "README.md", "text": ""}),
    );
    assert!(e.message.contains("README.md"), "{e}");
    assert!(tools.turn_branch("a3b").is_none());
}

#[test]
fn append_keeps_a_crlf_file_crlf() {
    let f = Fixture::new();
    commit(&f, &[("win.txt", b"one\r\ntwo\r\n")]);
    let tools = f.tools();
    ok(
        &tools,
        "a4",
        json!({"op": "append", "path": "win.txt", "text": "three\nfour"}),
    );
    assert_eq!(
        staged_file(&tools, "a4", "win.txt"),
        b"one\r\ntwo\r\nthree\r\nfour\r\n"
    );
}

#[test]
fn replace_changes_one_exact_snippet() {
    let f = Fixture::new();
    let tools = f.tools();
    let out = ok(
        &tools,
        "r1",
        json!({"op": "replace", "path": "src/lib.rs", "old": "    1\n", "new": "    1 + 1\n"}),
    );
    assert_eq!(out["changed"], true);
    assert_eq!(out["line"], 2);
    assert_eq!(
        staged_file(&tools, "r1", "src/lib.rs"),
        b"pub fn one() -> u32 {\n    1 + 1\n}\n"
    );
    assert_eq!(
        git(&f.staging(), &["log", "-1", "--format=%s", "seam/r1-1"]),
        "builder: replace in src/lib.rs"
    );
    // A snippet that straddles lines.
    ok(
        &tools,
        "r1",
        json!({"op": "replace", "path": "src/lib.rs", "old": "u32 {\n    1 +", "new": "u64 {\n    2 *"}),
    );
    assert_eq!(
        staged_file(&tools, "r1", "src/lib.rs"),
        b"pub fn one() -> u64 {\n    2 * 1\n}\n"
    );
    // The same text again changes nothing and commits nothing.
    let out = ok(
        &tools,
        "r1",
        json!({"op": "replace", "path": "src/lib.rs", "old": "2 * 1", "new": "2 * 1"}),
    );
    assert_eq!(out["changed"], false);
    // An empty new deletes the snippet.
    ok(
        &tools,
        "r1",
        json!({"op": "replace", "path": "README.md", "old": "hello\n", "new": ""}),
    );
    assert_eq!(staged_file(&tools, "r1", "README.md"), b"");
    assert_eq!(
        git(
            &f.staging(),
            &[
                "rev-list",
                "--count",
                &format!("{}..seam/r1-1", f.head("main"))
            ]
        ),
        "3"
    );
    let items = tools.finish_turn(&turn("r1")).unwrap();
    assert_eq!(items[0].verdict, Verdict::Pass, "{}", items[0].critic);
}

#[test]
fn replace_refusals_name_the_file() {
    let f = Fixture::new();
    commit(
        &f,
        &[(
            "src/paginate.js",
            b"const a = page;\nconst b = page;\nconst c = page;\nfunction next() {\n  return page + 1;\n}\n",
        )],
    );
    let tools = f.tools();
    let e = refused(
        &tools,
        "r2",
        json!({"op": "replace", "path": "src/paginate.js", "old": "return page - 1;", "new": "x"}),
    );
    assert_eq!(e.code, RefusalCode::NotFound);
    assert!(e.message.contains("not found in src/paginate.js"), "{e}");
    let e = refused(
        &tools,
        "r2",
        json!({"op": "replace", "path": "src/paginate.js", "old": "= page;", "new": "= p;"}),
    );
    assert_eq!(e.code, RefusalCode::InvalidParams);
    assert!(
        e.message
            .contains("found 3 times in src/paginate.js (at lines 1, 2, 3): give a longer snippet"),
        "{e}"
    );
    // A word the model got wrong: the line it meant is pointed at, and quoted.
    let e = refused(
        &tools,
        "r2",
        json!({"op": "replace", "path": "src/paginate.js", "old": "function next() {\n    return page + 2;", "new": "x"}),
    );
    assert!(
        e.message
            .contains("is line 4, which reads: function next() {"),
        "{e}"
    );
    let e = refused(
        &tools,
        "r2",
        json!({"op": "replace", "path": "src/nope.js", "old": "a", "new": "b"}),
    );
    assert_eq!(e.code, RefusalCode::NotFound);
    assert!(e.message.contains("src/nope.js does not exist"), "{e}");
    // The files there are named, so a guessed path can be put right.
    assert!(
        e.message.contains("The repository's files: ") && e.message.contains("src/paginate.js"),
        "{e}"
    );
    // A guessed path without old is told of the path first.
    let e = refused(
        &tools,
        "r2",
        json!({"op": "replace", "path": "shelf/books_per_page", "text": "25"}),
    );
    assert_eq!(e.code, RefusalCode::NotFound);
    assert!(
        e.message.contains("shelf/books_per_page does not exist")
            && e.message.contains("src/paginate.js"),
        "{e}"
    );
    // A real path without old: old is asked for.
    let e = refused(
        &tools,
        "r2",
        json!({"op": "replace", "path": "src/paginate.js", "new": "x"}),
    );
    assert!(e.message.contains("params.old is required"), "{e}");
    // Nothing changed on the branch, and the worktree is clean.
    let (_, wt) = tools.turn_branch("r2").unwrap();
    assert_eq!(git(&wt, &["status", "--porcelain"]), "");
    assert_eq!(
        git(&wt, &["rev-parse", "HEAD"]),
        f.head("main"),
        "no commit"
    );
}

#[test]
fn an_empty_old_is_refused_before_a_branch_is_made() {
    let f = Fixture::new();
    let tools = f.tools();
    let e = refused(
        &tools,
        "r3",
        json!({"op": "replace", "path": "README.md", "old": "", "new": "x"}),
    );
    assert_eq!(e.code, RefusalCode::InvalidParams);
    assert!(
        e.message.contains("params.old is empty") && e.message.contains("README.md"),
        "{e}"
    );
    let e = refused(
        &tools,
        "r3",
        json!({"op": "replace", "path": "README.md", "old": "hello"}),
    );
    assert!(e.message.contains("params.new"), "{e}");
    assert!(tools.turn_branch("r3").is_none());
}

#[test]
fn replace_reads_lf_snippets_in_a_crlf_file_and_says_so() {
    let f = Fixture::new();
    commit(&f, &[("win.txt", b"alpha\r\nbeta\r\ngamma\r\n")]);
    let tools = f.tools();
    let out = ok(
        &tools,
        "r4",
        json!({"op": "replace", "path": "win.txt", "old": "alpha\nbeta", "new": "ALPHA\nBETA\nextra"}),
    );
    assert!(
        out["note"].as_str().unwrap().contains("CRLF line endings"),
        "{out}"
    );
    assert_eq!(
        staged_file(&tools, "r4", "win.txt"),
        b"ALPHA\r\nBETA\r\nextra\r\ngamma\r\n"
    );
    // Written with CRLF already: no note.
    let out = ok(
        &tools,
        "r4",
        json!({"op": "replace", "path": "win.txt", "old": "extra\r\n", "new": ""}),
    );
    assert!(out.get("note").is_none(), "{out}");
}

#[test]
fn a_file_that_is_not_utf8_is_refused_whole() {
    let f = Fixture::new();
    commit(
        &f,
        &[("latin1.txt", b"caf\xe9\n"), ("blob.bin", b"\x00\xff\xfe")],
    );
    let tools = f.tools();
    for p in [
        json!({"op": "append", "path": "latin1.txt", "text": "more"}),
        json!({"op": "replace", "path": "latin1.txt", "old": "caf", "new": "tea"}),
        json!({"op": "replace", "path": "blob.bin", "old": "x", "new": "y"}),
    ] {
        let e = refused(&tools, "u", p.clone());
        assert_eq!(e.code, RefusalCode::InvalidParams, "{p}");
        assert!(e.message.contains("is not UTF-8 text"), "{e}");
        let path = p["path"].as_str().unwrap();
        assert!(e.message.starts_with(path), "{e}");
    }
    assert_eq!(staged_file(&tools, "u", "latin1.txt"), b"caf\xe9\n");
}

#[test]
fn edits_pass_the_same_path_walls_as_write() {
    let f = Fixture::new();
    let outside = f.links_out();
    let tools = f.tools();
    // Refused by name, before a branch is made.
    for (path, code) in [
        ("../escape.txt", RefusalCode::InvalidPath),
        ("src/../../escape.txt", RefusalCode::InvalidPath),
        ("/abs/escape.txt", RefusalCode::InvalidPath),
        (".git/config", RefusalCode::InvalidPath),
        (".env", RefusalCode::NotAllowed),
        (".github/workflows/ci.yml", RefusalCode::NotAllowed),
        ("keys/server.pem", RefusalCode::NotAllowed),
    ] {
        for p in [
            json!({"op": "append", "path": path, "text": "x"}),
            json!({"op": "replace", "path": path, "old": "a", "new": "b"}),
        ] {
            let e = refused(&tools, "w", p.clone());
            assert_eq!(e.code, code, "{p}: {e}");
        }
    }
    assert!(
        tools.turn_branch("w").is_none(),
        "no branch for refused calls"
    );
    // Refused on the way, never following a link out.
    for p in [
        json!({"op": "append", "path": "out/secret.txt", "text": "x"}),
        json!({"op": "append", "path": "out/new.txt", "text": "x"}),
        json!({"op": "append", "path": "file-link", "text": "x"}),
        json!({"op": "replace", "path": "file-link", "old": "keep", "new": "gone"}),
        json!({"op": "replace", "path": "out/secret.txt", "old": "keep", "new": "gone"}),
    ] {
        let e = refused(&tools, "w", p.clone());
        assert_eq!(e.code, RefusalCode::NotAllowed, "{p}: {e}");
    }
    let e = refused(
        &tools,
        "w",
        json!({"op": "append", "path": "src", "text": "x"}),
    );
    assert_eq!(e.code, RefusalCode::InvalidPath, "{e}");
    assert!(e.message.contains("is a directory"), "{e}");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 1);
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "keep\n"
    );
    assert!(!f.dir.path().join("escape.txt").exists());
}

#[test]
fn edits_keep_the_file_size_limit_and_name_it() {
    let f = Fixture::new();
    commit(&f, &[("big.txt", &[b'a'; 90])]);
    let mut config = f.config();
    config.max_file_bytes = 100;
    let tools = LocalTools::open(config).unwrap();
    let e = refused(
        &tools,
        "z",
        json!({"op": "append", "path": "big.txt", "text": "b".repeat(20)}),
    );
    assert_eq!(e.code, RefusalCode::InvalidParams);
    assert!(
        e.message
            .contains("big.txt would be 112 bytes, over the limit of 100"),
        "{e}"
    );
    let e = refused(
        &tools,
        "z",
        json!({"op": "replace", "path": "big.txt", "old": "a", "new": "c".repeat(101)}),
    );
    assert!(e.message.contains("over the limit of 100"), "{e}");
}

#[test]
fn a_file_over_the_limit_is_not_read() {
    let f = Fixture::new();
    commit(&f, &[("huge.txt", &[b'a'; 200])]);
    let mut config = f.config();
    config.max_file_bytes = 100;
    let tools = LocalTools::open(config).unwrap();
    let e = refused(
        &tools,
        "h",
        json!({"op": "replace", "path": "huge.txt", "old": "a", "new": "b"}),
    );
    assert_eq!(e.code, RefusalCode::InvalidParams);
    assert!(
        e.message
            .contains("huge.txt is 200 bytes, over the limit of 100"),
        "{e}"
    );
}

#[test]
fn the_schema_takes_one_name_for_each_param() {
    let f = Fixture::new();
    let tools = f.tools();
    for (p, field) in [
        (
            json!({"op": "replace", "path": "README.md", "search": "hello", "replace": "bye"}),
            "search",
        ),
        (
            json!({"op": "replace", "path": "README.md", "old_text": "hello", "new_text": "bye"}),
            "old_text",
        ),
    ] {
        let e = refused(&tools, "s", p);
        assert_eq!(e.code, RefusalCode::InvalidParams);
        assert!(e.message.contains(field), "{e}");
    }
    let spec = seam_local::tool_specs().remove(0);
    let props = &spec.input_schema["properties"];
    for name in ["text", "old", "new"] {
        assert!(props.get(name).is_some(), "{name}");
    }
    // The names a model may reach for are in the descriptions.
    let old = props["old"]["description"].as_str().unwrap();
    assert!(old.contains("search") && old.contains("old_text"), "{old}");
    let ops = spec.input_schema["properties"]["op"]["enum"].clone();
    assert_eq!(
        ops,
        json!(["append", "replace", "write", "patch", "delete", "check"])
    );
}

#[test]
fn replace_reads_old_without_its_indentation_and_says_so() {
    let f = Fixture::new();
    commit(
        &f,
        &[(
            "src/paginate.js",
            b"function paginate(items, page, size) {\n  const start = page * size;\n  return items.slice(start, start + size);\n}\n",
        )],
    );
    let tools = f.tools();
    // Written flush left, as a small model copies lines.
    let out = ok(
        &tools,
        "r5",
        json!({"op": "replace", "path": "src/paginate.js",
               "old": "const start = page * size;\nreturn items.slice(start, start + size);",
               "new": "const start = (page - 1) * size;\nreturn items.slice(start, start + size);"}),
    );
    let note = out["note"].as_str().unwrap();
    assert!(
        note.contains("lines 2-3 of src/paginate.js but for their indentation"),
        "{out}"
    );
    assert_eq!(
        staged_file(&tools, "r5", "src/paginate.js"),
        b"function paginate(items, page, size) {\n  const start = (page - 1) * size;\n  return items.slice(start, start + size);\n}\n"
    );
    let items = tools.finish_turn(&turn("r5")).unwrap();
    assert!(
        items[0]
            .preview
            .contains("+  const start = (page - 1) * size;")
    );
}

#[test]
fn replace_without_a_path_edits_the_one_file_that_holds_old() {
    let f = Fixture::new();
    commit(
        &f,
        &[
            (
                "src/config.js",
                b"const DEFAULT_PAGE_SIZE = 10;\nmodule.exports = { DEFAULT_PAGE_SIZE };\n",
            ),
            (
                "src/list.js",
                b"const { DEFAULT_PAGE_SIZE } = require('./config');\n",
            ),
            ("docs/a.md", b"same line\n"),
            ("docs/b.md", b"same line\n"),
        ],
    );
    let tools = f.tools();
    let out = ok(
        &tools,
        "p1",
        json!({"op": "replace", "old": "DEFAULT_PAGE_SIZE = 10", "new": "DEFAULT_PAGE_SIZE = 25"}),
    );
    assert_eq!(out["path"], "src/config.js", "{out}");
    assert!(
        out["note"]
            .as_str()
            .unwrap()
            .contains("params.path was not given: src/config.js is the one file"),
        "{out}"
    );
    assert_eq!(
        staged_file(&tools, "p1", "src/config.js"),
        b"const DEFAULT_PAGE_SIZE = 25;\nmodule.exports = { DEFAULT_PAGE_SIZE };\n"
    );
    // An empty path is no path.
    let out = ok(
        &tools,
        "p1",
        json!({"op": "replace", "path": " ", "old": "module.exports = { DEFAULT_PAGE_SIZE };", "new": "module.exports = { DEFAULT_PAGE_SIZE, x: 1 };"}),
    );
    assert_eq!(out["path"], "src/config.js", "{out}");
    // In two files: neither is guessed, both are named.
    let e = refused(
        &tools,
        "p1",
        json!({"op": "replace", "old": "same line", "new": "x"}),
    );
    assert_eq!(e.code, RefusalCode::InvalidParams);
    assert!(
        e.message.contains("docs/a.md") && e.message.contains("docs/b.md"),
        "{e}"
    );
    // In no file.
    let e = refused(
        &tools,
        "p1",
        json!({"op": "replace", "old": "no such text", "new": "x"}),
    );
    assert_eq!(e.code, RefusalCode::NotFound);
    assert!(e.message.contains("give the path"), "{e}");
    // Neither refusal touched a file.
    assert_eq!(staged_file(&tools, "p1", "docs/a.md"), b"same line\n");
}

#[test]
fn replace_without_a_path_never_looks_in_a_guarded_file() {
    let f = Fixture::new();
    commit(
        &f,
        &[
            ("deploy/id_ed25519", b"the only holder\n"),
            ("notes.txt", b"the only holder is above\n"),
        ],
    );
    let tools = f.tools();
    // The key file holds the line whole, but is never read: the note is what is left.
    let out = ok(
        &tools,
        "p2",
        json!({"op": "replace", "old": "the only holder", "new": "x"}),
    );
    assert_eq!(out["path"], "notes.txt", "{out}");
    let e = refused(
        &tools,
        "p2",
        json!({"op": "replace", "old": "the only holder\n", "new": "x"}),
    );
    assert_eq!(e.code, RefusalCode::NotFound, "{e}");
    assert!(!e.message.contains("id_ed25519"), "{e}");

    // A task written to match the key's lines: the lines most like it, named
    // for a guessed path, never come from a guarded file.
    let bait = TurnInfo {
        turn: "p3".into(),
        task: "Change the only holder line in the deploy key.".into(),
        ..TurnInfo::default()
    };
    let call = json!({"op": "replace", "path": "deploy/key.txt", "old": "only", "new": "x"});
    let e = tools.call(&bait, "builder", &params(call)).unwrap_err();
    assert_eq!(e.code, RefusalCode::NotFound, "{e}");
    assert!(
        e.message.contains("notes.txt:1: the only holder is above"),
        "{e}"
    );
    assert!(!e.message.contains("id_ed25519"), "{e}");
}

#[test]
fn write_reads_text_as_the_content_and_says_so() {
    let f = Fixture::new();
    let tools = f.tools();
    let out = ok(
        &tools,
        "w1",
        json!({"op": "write", "path": "docs/new.md", "text": "# New\n"}),
    );
    assert_eq!(
        out["note"].as_str(),
        Some("read params.text as the file's content"),
        "{out}"
    );
    assert_eq!(staged_file(&tools, "w1", "docs/new.md"), b"# New\n");
    // Given content, text is not read, and there is no note.
    let out = ok(
        &tools,
        "w1",
        json!({"op": "write", "path": "docs/new.md", "content": "# Two\n", "text": "x"}),
    );
    assert!(out.get("note").is_none(), "{out}");
    assert_eq!(staged_file(&tools, "w1", "docs/new.md"), b"# Two\n");
    // Neither: content is asked for.
    let e = refused(&tools, "w1", json!({"op": "write", "path": "docs/new.md"}));
    assert!(
        e.message.contains("params.content is required for write"),
        "{e}"
    );
}

#[test]
fn the_lines_of_tests_come_after_the_code_they_test() {
    let f = Fixture::new();
    commit(
        &f,
        &[
            (
                "src/paginate.js",
                b"function paginate(items, page, pageSize) {\n  if (page < 1) throw new RangeError('page must be 1 or more');\n  const start = page * pageSize;\n}\n",
            ),
            (
                "test/paginate.test.js",
                b"assert.deepEqual(paginate(books, 1, 10).items, books.slice(0, 10));\n",
            ),
            ("README.md", b"`shelf list` shows 10 books a page, from page 1.\n"),
        ],
    );
    let tools = f.tools();
    let task = TurnInfo {
        turn: "t1".into(),
        task: "Bug in shelf: `shelf list` shows books 11 to 20 on page 1 instead of 1 to 10."
            .into(),
        ..TurnInfo::default()
    };
    let call = json!({"op": "replace", "path": "src/main.py", "old": "ls()", "new": "list(all)"});
    let e = tools.call(&task, "builder", &params(call)).unwrap_err();
    let m = &e.message;
    let at = |line: &str| {
        m.find(line)
            .unwrap_or_else(|| panic!("{line} is named: {m}"))
    };
    // The test's line shares more of the task's words (books, 1, 10) than
    // the code's (page, 1), and still comes after it; the README's last.
    let code = at("src/paginate.js:2: if (page < 1)");
    let test = at("test/paginate.test.js:1: assert.deepEqual(paginate(books, 1, 10)");
    let prose = at("README.md:1:");
    assert!(code < test && test < prose, "{m}");
}

#[test]
fn a_guessed_path_is_told_the_lines_most_like_the_task_code_first() {
    let f = Fixture::new();
    commit(
        &f,
        &[
            (
                "src/config.js",
                b"'use strict';\n\nconst DATA_FILE = 'books.json';\nexport const DEFAULT_PAGE_SIZE = 10;\n",
            ),
            (
                "src/paginate.js",
                b"function paginate(items, page, pageSize) {\n  return items.slice(0, pageSize);\n}\n",
            ),
            (
                "src/cli.js",
                b"function cmdList(books, opts) {\n  printPage(paginate(books, opts.page, DEFAULT_PAGE_SIZE));\n}\n",
            ),
            (
                "docs/usage.md",
                b"# Usage\n\n`shelf list` shows 10 books per page.\n",
            ),
        ],
    );
    let tools = f.tools();
    let task = page_size_turn("l1");
    // An edit that is no change of one value (see the suggestion's test
    // below) is told the lines most like the task.
    let call = json!({"op": "replace", "path": "shelf/books_per_page", "old": "show(10)", "new": "show(10, 25)"});
    let e = tools.call(&task, "builder", &params(call)).unwrap_err();
    assert_eq!(e.code, RefusalCode::NotFound);
    let m = &e.message;
    let code = m
        .find("src/config.js:4: export const DEFAULT_PAGE_SIZE = 10;")
        .unwrap_or_else(|| panic!("the config line is named: {m}"));
    let prose = m
        .find("docs/usage.md:3: `shelf list` shows 10 books per page.")
        .unwrap_or_else(|| panic!("the usage line is named: {m}"));
    assert!(code < prose, "code before prose: {m}");
    // The line that holds the task's number comes before a caller that
    // shares as many of its words.
    let caller = m
        .find("src/cli.js:2: printPage(paginate(books, opts.page, DEFAULT_PAGE_SIZE));")
        .unwrap_or_else(|| panic!("the caller is named: {m}"));
    assert!(code < caller, "the number counts: {m}");
    assert!(m.contains("most like the task"), "{m}");
    // A line that shares one word with the task is not named.
    assert!(!m.contains("DATA_FILE"), "{m}");

    // An append that makes a new file says it did, and names the same lines.
    let call = json!({"op": "append", "path": "shelf.py", "text": "PAGE_SIZE = 25"});
    let out = tools.call(&task, "builder", &params(call)).unwrap();
    assert_eq!(out["created"], true);
    let note = out["note"].as_str().unwrap_or_default();
    assert!(
        note.contains("shelf.py did not exist and was made")
            && note.contains("src/config.js:4: export const DEFAULT_PAGE_SIZE = 10;"),
        "{out}"
    );

    // Without a path, an old that no file holds is told the same lines.
    let call = json!({"op": "replace", "old": "PAGE_SIZE = 100", "new": "PAGE_SIZE = 25"});
    let e = tools.call(&task, "builder", &params(call)).unwrap_err();
    assert!(
        e.message
            .contains("src/config.js:4: export const DEFAULT_PAGE_SIZE = 10;"),
        "{e}"
    );
}

#[test]
fn an_old_copied_from_the_builders_list_is_read_as_its_file_and_line() {
    let f = Fixture::new();
    commit(
        &f,
        &[
            (
                "src/config.js",
                b"'use strict';\n\nexport const DEFAULT_PAGE_SIZE = 10;\n",
            ),
            (
                "src/cli.js",
                b"function cmdList(books, opts) {\n  printPage(paginate(books, opts.page, DEFAULT_PAGE_SIZE));\n}\n",
            ),
        ],
    );
    let tools = f.tools();
    let task = page_size_turn("n1");
    // The list the builder gives, as a model copied it into old (the path it
    // gave is the new file it had made; the list's own path wins).
    let listed = "src/config.js:3: export const DEFAULT_PAGE_SIZE = 10;\nsrc/cli.js:2: printPage(paginate(books, opts.page, DEFAULT_PAGE_SIZE));";
    let call = json!({"op": "replace", "path": "shelf.py", "old": listed, "new": ""});
    let e = tools.call(&task, "builder", &params(call)).unwrap_err();
    assert_eq!(e.code, RefusalCode::InvalidParams);
    assert!(
        e.message.contains("2 lines of the builder's list")
            && e.message.contains("src/config.js, src/cli.js")
            && e.message
                .contains(r#"params.old "export const DEFAULT_PAGE_SIZE = 10;""#),
        "{e}"
    );

    // One line of the list, prefix and all, in old and in new.
    let call = json!({
        "op": "replace",
        "path": "shelf.py",
        "old": "src/config.js:3: export const DEFAULT_PAGE_SIZE = 10;",
        "new": "src/config.js:3: export const DEFAULT_PAGE_SIZE = 25;",
    });
    let out = tools.call(&task, "builder", &params(call)).unwrap();
    assert_eq!(out["path"], "src/config.js", "{out}");
    let note = out["note"].as_str().unwrap_or_default();
    assert!(
        note.contains("params.path shelf.py was not used")
            && note.contains("read as line 3 of src/config.js")
            && note.contains("params.new was read without"),
        "{out}"
    );
    assert_eq!(
        staged_file(&tools, "n1", "src/config.js"),
        b"'use strict';\n\nexport const DEFAULT_PAGE_SIZE = 25;\n"
    );
    // Nothing was made under the path the model gave.
    let (_, wt) = tools.turn_branch("n1").unwrap();
    assert!(!wt.join("shelf.py").exists());
}

#[test]
fn a_listed_line_passes_the_same_walls_as_a_named_path() {
    let f = Fixture::new();
    commit(&f, &[("src/a.js", b"const A = 1;\n")]);
    let tools = f.tools();
    // A prefix naming a path out of the repository is admitted, and refused,
    // as params.path would be.
    for (old, named) in [
        (
            "../outside.js:1: const A = 1;",
            "\"../outside.js\" goes up with ..",
        ),
        ("/etc/passwd:1: root:x:0:0", "\"/etc/passwd\""),
    ] {
        let call = json!({"op": "replace", "old": old, "new": "x"});
        let e = refused(&tools, "w1", call);
        assert_eq!(e.code, RefusalCode::InvalidPath, "{e}");
        assert!(e.message.contains(named), "{e}");
    }
    // Code that only looks like a list is an ordinary old.
    let call =
        json!({"op": "replace", "path": "src/a.js", "old": "const A = 1;", "new": "const A = 2;"});
    let out = ok(&tools, "w1", call);
    assert!(out["note"].is_null(), "{out}");
}

#[test]
fn an_old_in_many_places_names_them_and_where_the_value_is_set() {
    let f = Fixture::new();
    commit(
        &f,
        &[
            (
                "src/config.js",
                b"'use strict';\nconst DEFAULT_PAGE_SIZE = 10;\nmodule.exports = { DEFAULT_PAGE_SIZE };\n",
            ),
            (
                "src/cli.js",
                b"function a(books, opts) {\n  printPage(paginate(books, opts.page, DEFAULT_PAGE_SIZE));\n}\nfunction b(books, opts) {\n  printPage(paginate(books, opts.page, DEFAULT_PAGE_SIZE));\n}\n",
            ),
        ],
    );
    let tools = f.tools();
    let task = page_size_turn("m1");
    let call = json!({
        "op": "replace",
        "path": "src/cli.js",
        "old": "printPage(paginate(books, opts.page, DEFAULT_PAGE_SIZE));",
        "new": "printPage(paginate(books, opts.page, 25));",
    });
    let e = tools.call(&task, "builder", &params(call)).unwrap_err();
    assert_eq!(e.code, RefusalCode::InvalidParams);
    let m = &e.message;
    assert!(
        m.contains("found 2 times in src/cli.js (at lines 2, 5)"),
        "{m}"
    );
    assert!(
        m.contains("src/config.js:2: const DEFAULT_PAGE_SIZE = 10;"),
        "the line that sets the value: {m}"
    );
    // The places themselves are not offered again.
    assert!(
        !m.contains("src/cli.js:2:") && !m.contains("src/cli.js:5:"),
        "{m}"
    );
    // Nothing was changed.
    let (_, wt) = tools.turn_branch("m1").unwrap();
    assert!(
        std::fs::read_to_string(wt.join("src/cli.js"))
            .unwrap()
            .matches("DEFAULT_PAGE_SIZE")
            .count()
            == 2
    );
}

#[test]
fn a_replace_that_changes_nothing_says_why() {
    let f = Fixture::new();
    commit(&f, &[("src/a.js", b"const A = 1;\n")]);
    let tools = f.tools();
    let call =
        json!({"op": "replace", "path": "src/a.js", "old": "const A = 1;", "new": "const A = 1;"});
    let out = ok(&tools, "s1", call);
    assert_eq!(out["changed"], false, "{out}");
    let note = out["note"].as_str().unwrap_or_default();
    assert!(
        note.contains("params.new is the same as params.old, so nothing changed"),
        "{out}"
    );
}

#[test]
fn a_value_changed_in_the_wrong_place_is_told_the_replace_that_makes_it() {
    let f = Fixture::new();
    commit(
        &f,
        &[
            (
                "src/config.js",
                b"'use strict';\n\nconst DATA_FILE = 'books.json';\nconst DEFAULT_PAGE_SIZE = 10;\nmodule.exports = { DATA_FILE, DEFAULT_PAGE_SIZE };\n",
            ),
            (
                "src/cli.js",
                b"function a(books, opts) {\n  printPage(paginate(books, opts.page, DEFAULT_PAGE_SIZE));\n}\nfunction b(books, opts) {\n  printPage(paginate(books, opts.page, DEFAULT_PAGE_SIZE));\n}\n",
            ),
            (
                "test/paginate.test.js",
                b"assert.equal(pageCount(23, 10), 3);\nassert.deepEqual(paginate(books, 1, 10).items, books.slice(0, 10));\n",
            ),
            ("README.md", b"Shows 10 books per page by default.\n"),
        ],
    );
    let tools = f.tools();
    let task = page_size_turn("s1");
    let wanted = json!({
        "op": "replace",
        "path": "src/config.js",
        "old": "const DEFAULT_PAGE_SIZE = 10;",
        "new": "const DEFAULT_PAGE_SIZE = 25;",
    });
    let told = |e: &LocalRefusal| -> Value {
        let (_, params) = e
            .message
            .rsplit_once("call builder with these params: ")
            .unwrap_or_else(|| panic!("no suggestion: {e}"));
        serde_json::from_str(params).unwrap_or_else(|err| panic!("{err}: {params}"))
    };
    // The guess qwen2.5-coder-1.5b made: a file and a name that are not
    // there, the value it meant to change.
    let guess = json!({"op": "replace", "path": "src/shelf.py", "old": "DEFAULT_PER_PAGE = 10", "new": "DEFAULT_PER_PAGE = 25"});
    let e = refused(&tools, "s1", guess);
    assert_eq!(e.code, RefusalCode::NotFound);
    assert!(e.message.starts_with("src/shelf.py does not exist"), "{e}");
    assert!(
        e.message
            .contains("(10 to 25) belongs on src/config.js:4: const DEFAULT_PAGE_SIZE = 10;"),
        "{e}"
    );
    assert_eq!(told(&e), wanted);
    // The right file, the wrong name.
    let guess = json!({"op": "replace", "path": "src/config.js", "old": "PAGE_SIZE: 10", "new": "PAGE_SIZE: 25"});
    let e = tools.call(&task, "builder", &params(guess)).unwrap_err();
    assert!(
        e.message
            .starts_with("params.old is not found in src/config.js. "),
        "{e}"
    );
    assert_eq!(told(&e), wanted);
    // No path, and an old no file holds.
    let guess = json!({"op": "replace", "old": "pageSize = 10", "new": "pageSize = 25"});
    let e = tools.call(&task, "builder", &params(guess)).unwrap_err();
    assert_eq!(told(&e), wanted);
    // A caller's name made the value: where the name is set is where it changes.
    let guess = json!({
        "op": "replace",
        "path": "src/cli.js",
        "old": "printPage(paginate(books, opts.page, DEFAULT_PAGE_SIZE));",
        "new": "printPage(paginate(books, opts.page, 25));",
    });
    let e = tools.call(&task, "builder", &params(guess)).unwrap_err();
    assert!(
        e.message
            .contains("found 2 times in src/cli.js (at lines 2, 5)"),
        "{e}"
    );
    assert!(e.message.contains("(DEFAULT_PAGE_SIZE to 25)"), "{e}");
    assert_eq!(told(&e), wanted);
    // Nothing was changed by any of them, and the suggestion, called, is
    // the change.
    assert_eq!(
        staged_file(&tools, "s1", "src/config.js"),
        b"'use strict';\n\nconst DATA_FILE = 'books.json';\nconst DEFAULT_PAGE_SIZE = 10;\nmodule.exports = { DATA_FILE, DEFAULT_PAGE_SIZE };\n"
    );
    let out = tools.call(&task, "builder", &params(wanted)).unwrap();
    assert_eq!(out["path"], "src/config.js", "{out}");
    assert!(
        String::from_utf8(staged_file(&tools, "s1", "src/config.js"))
            .unwrap()
            .contains("const DEFAULT_PAGE_SIZE = 25;")
    );
}

#[test]
fn an_edit_of_code_or_of_two_values_gets_no_suggestion() {
    let f = Fixture::new();
    commit(
        &f,
        &[(
            "src/paginate.js",
            b"function paginate(items, page, pageSize) {\n  const start = page * pageSize;\n  return items.slice(start, start + pageSize);\n}\n",
        )],
    );
    let tools = f.tools();
    for (old, new) in [
        (
            "const start = page * size;",
            "const start = (page - 1) * size;",
        ),
        ("slice(1, 10)", "slice(0, 25)"),
    ] {
        let call = json!({"op": "replace", "path": "src/paginate.js", "old": old, "new": new});
        let e = refused(&tools, "g1", call);
        assert_eq!(e.code, RefusalCode::NotFound, "{e}");
        assert!(!e.message.contains("call builder with"), "{e}");
    }
}

/// The suggested replace is read from the same admitted files as the lines most like the
/// task: a guarded file (a key, seam's own) that holds the value, alone and set, is never
/// shown, though it would be the best line.
#[test]
fn a_suggested_replace_never_comes_from_a_guarded_file() {
    let f = Fixture::new();
    commit(
        &f,
        &[
            ("deploy/id_ed25519", b"PAGE_SIZE = 10 secret-key-material\n"),
            ("src/view.js", b"render(books, 10);\n"),
        ],
    );
    let tools = f.tools();
    let task = page_size_turn("g2");
    let guess = json!({"op": "replace", "path": "src/guess.py", "old": "PAGE_SIZE = 10", "new": "PAGE_SIZE = 25"});
    let e = tools.call(&task, "builder", &params(guess)).unwrap_err();
    assert!(!e.message.contains("id_ed25519"), "{e}");
    assert!(!e.message.contains("secret-key-material"), "{e}");
}
