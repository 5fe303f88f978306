//! The codebase index on a real multi-language repository made in a temp dir.

use std::fs::{self, File};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use seam_memory::{CodebaseIndex, IndexOptions, IndexProgress, IndexReport, Matched, MemoryHome};

const LIB_RS: &str = r#"//! A library.
pub struct Config {
    pub name: String,
}

impl Config {
    pub fn parse_config(text: &str) -> Config {
        Config { name: text.to_owned() }
    }

    pub fn parse_args() {}
}

pub mod inner {
    pub fn helper() {}
}
"#;

const MAIN_PY: &str = "class Greeter:\n    def hello(self):\n        return 'hi'\n\n\ndef main():\n    Greeter().hello()\n";
const INDEX_JS: &str =
    "export function startServer(port) {\n  return port;\n}\n\nclass Queue {\n  push(item) {}\n}\n";
const TYPES_TS: &str =
    "export interface Shape {\n  area(): number;\n}\n\nexport type Id = string;\n";
const SERVER_GO: &str = "package main\n\ntype Server struct {\n\taddr string\n}\n\nfunc (s *Server) Start() error {\n\treturn nil\n}\n";

struct Repo {
    _dir: tempfile::TempDir,
    root: PathBuf,
    store: PathBuf,
}

fn write(root: &Path, rel: &str, content: &[u8]) -> PathBuf {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(&p, content).unwrap();
    p
}

/// Sets a file's modification time (in the past: a file written just now is "racy" and is
/// hashed again on the next run, which is not what most tests are about).
fn set_mtime(p: &Path, t: SystemTime) {
    File::options()
        .write(true)
        .open(p)
        .unwrap()
        .set_modified(t)
        .unwrap();
}

fn hour_ago() -> SystemTime {
    SystemTime::now() - Duration::from_secs(3600)
}

fn age_all(root: &Path) {
    for e in walk(root) {
        set_mtime(&e, hour_ago());
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let ft = e.file_type().unwrap();
        if ft.is_dir() {
            if e.file_name() != ".git" {
                out.extend(walk(&e.path()));
            }
        } else if ft.is_file() {
            out.push(e.path());
        }
    }
    out
}

fn repo() -> Repo {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let root = base.join("repo");
    fs::create_dir_all(&root).unwrap();
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&root)
        .status()
        .unwrap();
    assert!(git.success());
    write(&root, ".gitignore", b"target/\nsecret.txt\n*.log\n");
    write(
        &root,
        "secret.txt",
        b"ignoredmarkerword in a file git ignores\n",
    );
    write(
        &root,
        "target/debug/gen.rs",
        b"pub fn ignored_generated() {}\n",
    );
    write(&root, "build.log", b"ignoredmarkerword\n");
    write(&root, "src/lib.rs", LIB_RS.as_bytes());
    write(
        &root,
        "src/util/helpers.rs",
        b"pub fn util_helper() -> u32 { 42 }\n",
    );
    write(&root, "app/main.py", MAIN_PY.as_bytes());
    write(&root, "web/index.js", INDEX_JS.as_bytes());
    write(&root, "web/types.ts", TYPES_TS.as_bytes());
    write(&root, "cmd/server.go", SERVER_GO.as_bytes());
    write(
        &root,
        "README.md",
        b"# Demo\n\nThe frobnicator parses configs.\n",
    );
    write(&root, "data.bin", b"\x00\x01\x02binary");
    std::os::unix::fs::symlink(root.join("src/lib.rs"), root.join("link.rs")).unwrap();
    age_all(&root);
    let store = base.join("seam/memory/codebase.sqlite");
    Repo {
        _dir: dir,
        root,
        store,
    }
}

fn index(idx: &mut CodebaseIndex, root: &Path) -> IndexReport {
    idx.index(root, &IndexOptions::default(), &mut |_| {})
        .unwrap()
}

#[test]
fn indexes_files_languages_and_symbols_and_respects_gitignore() {
    let r = repo();
    let mut idx = CodebaseIndex::open(&r.store).unwrap();
    let mut last_total = 0;
    let mut indexing_calls = 0;
    let report = idx
        .index(&r.root, &IndexOptions::default(), &mut |p| {
            if let IndexProgress::Indexing { total, .. } = p {
                last_total = total;
                indexing_calls += 1;
            }
        })
        .unwrap();
    // lib.rs, helpers.rs, main.py, index.js, types.ts, server.go, README.md, data.bin (hidden
    // files like .gitignore are not indexed)
    assert_eq!(report.files, 8, "{report:?}");
    assert_eq!(last_total, 8);
    assert_eq!(indexing_calls, 8);
    assert_eq!(report.parsed, 8);
    assert_eq!(report.root, r.root.to_str().unwrap());
    assert_eq!(report.skipped.get("link"), Some(&1), "{report:?}");
    assert_eq!(report.without_text.get("binary"), Some(&1));
    for (lang, n) in [
        ("rust", 2),
        ("python", 1),
        ("javascript", 1),
        ("typescript", 1),
        ("go", 1),
        ("markdown", 1),
        ("other", 1),
    ] {
        assert_eq!(report.languages.get(lang), Some(&n), "{lang}: {report:?}");
    }
    assert!(report.symbols >= 18, "{report:?}");

    // nothing git ignores is in the index
    let hits = idx.search(&r.root, "ignoredmarkerword", 10).unwrap();
    assert!(hits.hits.is_empty(), "{hits:?}");
    assert!(
        idx.find_symbol(&r.root, "ignored_generated", 10)
            .unwrap()
            .matches
            .is_empty()
    );
    assert!(
        idx.outline(&r.root.join("secret.txt"), 10)
            .unwrap()
            .is_none()
    );
    let tree = idx.tree(&r.root, 8, 100).unwrap();
    assert!(
        tree.entries.iter().all(|e| !e.path.contains("target")
            && !e.path.ends_with("secret.txt")
            && !e.path.ends_with(".log")
            && !e.path.ends_with("link.rs")),
        "{tree:?}"
    );
}

#[test]
fn the_store_is_owner_only() {
    let r = repo();
    let mut idx = CodebaseIndex::open(&r.store).unwrap();
    index(&mut idx, &r.root);
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(r.store.parent().unwrap()), 0o700);
    assert_eq!(mode(&r.store), 0o600);
    let home = MemoryHome::new(r.store.parent().unwrap().parent().unwrap());
    assert_eq!(home.codebase_path(), r.store);
    assert!(
        home.existing_builds().unwrap().is_none(),
        "a reader creates nothing"
    );
    assert!(!home.builds_path().exists());
}

#[test]
fn find_symbol_exact_prefix_qualified_and_scoped() {
    let r = repo();
    let mut idx = CodebaseIndex::open(&r.store).unwrap();
    index(&mut idx, &r.root);

    let m = idx.find_symbol(&r.root, "Config", 10).unwrap();
    let first = &m.matches[0];
    assert_eq!(
        (first.name.as_str(), first.kind.as_str(), first.line),
        ("Config", "struct", 2)
    );
    assert!(first.exact);
    assert_eq!(first.path, r.root.join("src/lib.rs").to_str().unwrap());
    assert!(m.matches.iter().any(|s| s.kind == "impl" && s.line == 6));

    // prefix: both parse_ methods, not exact, with their parent
    let m = idx.find_symbol(&r.root, "parse_", 10).unwrap();
    let names: Vec<_> = m
        .matches
        .iter()
        .map(|s| (s.name.as_str(), s.line, s.parent.as_deref(), s.exact))
        .collect();
    assert_eq!(
        names,
        [
            ("parse_args", 11, Some("Config"), false),
            ("parse_config", 7, Some("Config"), false)
        ]
    );
    assert!(
        m.matches[1]
            .signature
            .starts_with("pub fn parse_config(text: &str)")
    );

    // case-insensitive, every language
    for (q, kind, file, line) in [
        ("greeter", "class", "app/main.py", 1),
        ("startServer", "function", "web/index.js", 1),
        ("Shape", "interface", "web/types.ts", 1),
        ("Start", "method", "cmd/server.go", 7),
        ("inner", "module", "src/lib.rs", 14),
    ] {
        let m = idx.find_symbol(&r.root, q, 5).unwrap();
        let s = m
            .matches
            .iter()
            .find(|s| s.kind == kind)
            .unwrap_or_else(|| panic!("{q}: {m:?}"));
        assert_eq!(
            (s.path.as_str(), s.line),
            (r.root.join(file).to_str().unwrap(), line),
            "{q}"
        );
    }

    // qualified names
    let m = idx.find_symbol(&r.root, "Server::Start", 5).unwrap();
    assert_eq!(m.matches.len(), 1);
    let m = idx.find_symbol(&r.root, "Greeter.hello", 5).unwrap();
    assert_eq!(m.matches.len(), 1);
    assert!(
        idx.find_symbol(&r.root, "Queue.hello", 5)
            .unwrap()
            .matches
            .is_empty()
    );

    // scope: only files below it
    assert!(
        idx.find_symbol(&r.root.join("web"), "Config", 5)
            .unwrap()
            .matches
            .is_empty()
    );
    assert_eq!(
        idx.find_symbol(&r.root.join("src"), "Config", 5)
            .unwrap()
            .matches
            .len(),
        2
    );
}

#[test]
fn outline_lists_one_files_symbols_in_order() {
    let r = repo();
    let mut idx = CodebaseIndex::open(&r.store).unwrap();
    index(&mut idx, &r.root);
    let o = idx
        .outline(&r.root.join("src/lib.rs"), 100)
        .unwrap()
        .unwrap();
    let got: Vec<_> = o
        .symbols
        .iter()
        .map(|s| (s.name.as_str(), s.kind.as_str(), s.line, s.end_line))
        .collect();
    assert_eq!(
        got,
        [
            ("Config", "struct", 2, 4),
            ("Config", "impl", 6, 12),
            ("parse_config", "method", 7, 9),
            ("parse_args", "method", 11, 11),
            ("inner", "module", 14, 16),
            ("helper", "function", 15, 15),
        ]
    );
    assert_eq!(o.language.as_deref(), Some("rust"));
    assert_eq!(o.lines, Some(16));
    assert!(!o.truncated);
    let cut = idx.outline(&r.root.join("src/lib.rs"), 2).unwrap().unwrap();
    assert_eq!(cut.symbols.len(), 2);
    assert!(cut.truncated);
    assert_eq!(cut.total_symbols, 6);
    let bin = idx.outline(&r.root.join("data.bin"), 10).unwrap().unwrap();
    assert_eq!(bin.content, "binary");
    assert!(bin.symbols.is_empty());
}

#[test]
fn tree_is_depth_limited_and_counts_what_is_below() {
    let r = repo();
    let mut idx = CodebaseIndex::open(&r.store).unwrap();
    index(&mut idx, &r.root);
    let root = r.root.to_str().unwrap();
    let t = idx.tree(&r.root, 1, 100).unwrap();
    let got: Vec<_> = t
        .entries
        .iter()
        .map(|e| (e.path.strip_prefix(root).unwrap(), e.kind, e.files))
        .collect();
    assert_eq!(
        got,
        [
            ("/README.md", "file", None),
            ("/app", "dir", Some(1)),
            ("/cmd", "dir", Some(1)),
            ("/data.bin", "file", None),
            ("/src", "dir", Some(2)),
            ("/web", "dir", Some(2)),
        ]
    );
    assert!(!t.truncated);
    let t = idx.tree(&r.root, 2, 100).unwrap();
    assert!(
        t.entries
            .iter()
            .any(|e| e.path.ends_with("/src/util") && e.kind == "dir")
    );
    assert!(
        t.entries.iter().all(|e| !e.path.ends_with("helpers.rs")),
        "depth 2 stops above src/util/helpers.rs"
    );
    let t = idx.tree(&r.root, 3, 100).unwrap();
    let helpers = t
        .entries
        .iter()
        .find(|e| e.path.ends_with("src/util/helpers.rs"))
        .unwrap();
    assert_eq!(
        (helpers.language.as_deref(), helpers.lines),
        (Some("rust"), Some(1))
    );
    // bounded
    let t = idx.tree(&r.root, 3, 4).unwrap();
    assert_eq!(t.entries.len(), 4);
    assert!(t.truncated);
    assert!(t.total_entries > 4);
    // a subdirectory, and a file alone
    let t = idx.tree(&r.root.join("web"), 1, 100).unwrap();
    assert_eq!(t.entries.len(), 2);
    let t = idx.tree(&r.root.join("web/index.js"), 1, 100).unwrap();
    assert_eq!(t.entries.len(), 1);
    assert_eq!(t.entries[0].kind, "file");
}

#[test]
fn search_finds_lines_with_numbers_and_is_bounded() {
    let r = repo();
    let mut idx = CodebaseIndex::open(&r.store).unwrap();
    index(&mut idx, &r.root);
    let s = idx.search(&r.root, "frobnicator", 10).unwrap();
    assert_eq!(s.hits.len(), 1);
    assert!(s.hits[0].path.ends_with("README.md"));
    assert_eq!(s.hits[0].lines[0].line, 3);
    assert_eq!(s.hits[0].lines[0].text, "The frobnicator parses configs.");
    // an identifier, as a phrase of its tokens
    let s = idx.search(&r.root, "parse_config", 10).unwrap();
    assert_eq!(s.hits.len(), 1);
    assert_eq!(s.hits[0].lines[0].line, 7);
    assert_eq!(s.matched, Matched::Every);
    // no file holds both words: the files holding one, said so
    let s = idx
        .search(&r.root, "frobnicator zzyzxunheardof", 10)
        .unwrap();
    assert_eq!(s.hits.len(), 1);
    assert!(s.hits[0].path.ends_with("README.md"));
    assert_eq!(s.matched, Matched::Some);
    // query syntax is not FTS5 syntax
    assert!(idx.search(&r.root, "\"unbalanced ( NEAR", 10).is_ok());
    assert!(idx.search(&r.root, "()", 10).is_err());
    // bounded: "return" is in several files
    let s = idx.search(&r.root, "return", 1).unwrap();
    assert_eq!(s.hits.len(), 1);
    assert!(s.truncated);
    let all = idx.search(&r.root, "return", 10).unwrap();
    assert!(all.hits.len() >= 3 && !all.truncated, "{all:?}");
}

#[test]
fn a_search_puts_code_before_prose_that_says_the_words_more_often() {
    let r = repo();
    write(
        &r.root,
        "docs/pages.md",
        b"# Pages\n\nThe page size is the page size: a page shows page size books.\n",
    );
    write(
        &r.root,
        "src/page.rs",
        b"pub fn page_count(total: u32, size: u32) -> u32 {\n    // the page size\n    total.div_ceil(size)\n}\n",
    );
    age_all(&r.root);
    let mut idx = CodebaseIndex::open(&r.store).unwrap();
    index(&mut idx, &r.root);
    let s = idx.search(&r.root, "page size", 10).unwrap();
    let paths: Vec<&str> = s.hits.iter().map(|h| h.path.as_str()).collect();
    assert_eq!(paths.len(), 2, "{paths:?}");
    assert!(paths[0].ends_with("src/page.rs"), "{paths:?}");
    assert!(paths[1].ends_with("docs/pages.md"), "{paths:?}");
    // Bounded, the code is what is kept.
    let s = idx.search(&r.root, "page size", 1).unwrap();
    assert!(s.hits[0].path.ends_with("src/page.rs") && s.truncated);
}

#[test]
fn a_search_puts_code_before_its_tests_and_settings() {
    let r = repo();
    write(
        &r.root,
        "test/page.test.js",
        b"test('page size', () => {\n  assert.equal(pageSize(page(10)), 10); // page size\n});\n",
    );
    write(
        &r.root,
        "conf/page.json",
        b"{\"page size\": 10, \"page\": \"size\"}\n",
    );
    write(
        &r.root,
        "src/page.js",
        b"function pageCount(total, size) {\n  // the page size\n  return Math.ceil(total / size);\n}\n",
    );
    age_all(&r.root);
    let mut idx = CodebaseIndex::open(&r.store).unwrap();
    index(&mut idx, &r.root);
    let s = idx.search(&r.root, "page size", 10).unwrap();
    let paths: Vec<&str> = s.hits.iter().map(|h| h.path.as_str()).collect();
    assert_eq!(paths.len(), 3, "{paths:?}");
    assert!(paths[0].ends_with("src/page.js"), "{paths:?}");
    assert!(paths[1].ends_with("conf/page.json"), "{paths:?}");
    assert!(paths[2].ends_with("test/page.test.js"), "{paths:?}");
    // Bounded, the code is what is kept.
    let s = idx.search(&r.root, "page size", 1).unwrap();
    assert!(
        s.hits[0].path.ends_with("src/page.js") && s.truncated,
        "{s:?}"
    );
}

#[test]
fn a_search_hit_names_the_definition_it_is_in() {
    let r = repo();
    let mut idx = CodebaseIndex::open(&r.store).unwrap();
    index(&mut idx, &r.root);
    // `hello` is defined on line 2 of app/main.py and called on line 7, in main().
    let s = idx.search(&r.root, "hello", 10).unwrap();
    let py = s
        .hits
        .iter()
        .find(|h| h.path.ends_with("main.py"))
        .expect("main.py");
    let at = |n: u64| py.lines.iter().find(|l| l.line == n).unwrap();
    let caller = at(7).within.as_deref().unwrap_or_default();
    assert!(caller.ends_with(" main"), "{py:?}");
    let definition = at(2).within.as_deref().unwrap_or_default();
    assert!(definition.ends_with("Greeter.hello"), "{py:?}");
    // The JSON the tool returns calls it `in`.
    let v = serde_json::to_value(at(7)).unwrap();
    assert_eq!(v["in"], caller);
    // A line in no definition (prose) has none.
    let s = idx.search(&r.root, "frobnicator", 10).unwrap();
    assert_eq!(s.hits[0].lines[0].within, None);
    assert!(
        serde_json::to_value(&s.hits[0].lines[0])
            .unwrap()
            .get("in")
            .is_none()
    );
}

#[test]
fn reindexing_is_incremental() {
    let r = repo();
    let mut idx = CodebaseIndex::open(&r.store).unwrap();
    let first = index(&mut idx, &r.root);
    assert_eq!(first.parsed, 8);

    let again = index(&mut idx, &r.root);
    assert_eq!(
        (again.parsed, again.rehashed, again.unchanged, again.removed),
        (0, 0, 8, 0),
        "{again:?}"
    );

    // change one file: only it is parsed, and its new symbol is found
    let py = write(
        &r.root,
        "app/main.py",
        format!("{MAIN_PY}\ndef added_later():\n    pass\n").as_bytes(),
    );
    set_mtime(&py, hour_ago() + Duration::from_secs(60));
    let changed = index(&mut idx, &r.root);
    assert_eq!((changed.parsed, changed.unchanged), (1, 7), "{changed:?}");
    assert_eq!(
        idx.find_symbol(&r.root, "added_later", 5).unwrap().matches[0].line,
        9
    );

    // touch one file (time only): hashed, not parsed
    set_mtime(
        &r.root.join("web/index.js"),
        hour_ago() + Duration::from_secs(120),
    );
    let touched = index(&mut idx, &r.root);
    assert_eq!(
        (touched.parsed, touched.rehashed, touched.unchanged),
        (0, 1, 7),
        "{touched:?}"
    );

    // delete one file: gone, with its symbols and text
    fs::remove_file(r.root.join("cmd/server.go")).unwrap();
    let removed = index(&mut idx, &r.root);
    assert_eq!((removed.removed, removed.files), (1, 7), "{removed:?}");
    assert!(
        idx.find_symbol(&r.root, "Server", 5)
            .unwrap()
            .matches
            .is_empty()
    );
    assert!(idx.search(&r.root, "addr", 5).unwrap().hits.is_empty());
    assert!(
        idx.outline(&r.root.join("cmd/server.go"), 5)
            .unwrap()
            .is_none()
    );

    // a file newly ignored is dropped too
    write(
        &r.root,
        ".gitignore",
        b"target/\nsecret.txt\n*.log\nREADME.md\n",
    );
    let ignored = index(&mut idx, &r.root);
    assert_eq!(ignored.removed, 1);
    assert!(
        idx.search(&r.root, "frobnicator", 5)
            .unwrap()
            .hits
            .is_empty()
    );
}

#[test]
fn an_index_run_that_fails_halfway_leaves_the_index_as_it_was() {
    let r = repo();
    let mut idx = CodebaseIndex::open(&r.store).unwrap();
    let first = index(&mut idx, &r.root);
    let before = idx.repositories().unwrap();

    // one file changed early in the walk's order, one gone
    let py = write(
        &r.root,
        "app/main.py",
        format!("{MAIN_PY}\ndef added_later():\n    pass\n").as_bytes(),
    );
    set_mtime(&py, hour_ago() + Duration::from_secs(60));
    fs::remove_file(r.root.join("cmd/server.go")).unwrap();

    // the run stops after app/main.py is written and before it ends
    let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        idx.index(&r.root, &IndexOptions::default(), &mut |p| {
            if let IndexProgress::Indexing { path, .. } = p
                && path == "web/index.js"
            {
                panic!("stopped halfway");
            }
        })
    }));
    assert!(failed.is_err());

    // nothing of it is in the index, on this connection or another
    let other = CodebaseIndex::open(&r.store).unwrap();
    for idx in [&idx, &other] {
        assert!(
            idx.find_symbol(&r.root, "added_later", 5)
                .unwrap()
                .matches
                .is_empty()
        );
        assert!(
            !idx.find_symbol(&r.root, "Server", 5)
                .unwrap()
                .matches
                .is_empty()
        );
        assert_eq!(idx.repositories().unwrap(), before);
    }

    // and the next run does all of it
    let again = index(&mut idx, &r.root);
    assert_eq!(
        (again.parsed, again.removed, again.files),
        (1, 1, first.files - 1),
        "{again:?}"
    );
}

#[test]
fn a_file_written_in_the_same_tick_is_hashed_again() {
    let r = repo();
    let mut idx = CodebaseIndex::open(&r.store).unwrap();
    // written now: racy
    let p = write(&r.root, "src/fresh.rs", b"fn one() {}\n");
    index(&mut idx, &r.root);
    // same size, same time (set back to what it was): only the hash can tell
    let t = fs::metadata(&p).unwrap().modified().unwrap();
    fs::write(&p, b"fn two() {}\n").unwrap();
    set_mtime(&p, t);
    let report = index(&mut idx, &r.root);
    assert_eq!(report.parsed, 1, "{report:?}");
    assert_eq!(idx.find_symbol(&r.root, "two", 5).unwrap().matches.len(), 1);
}

#[test]
fn a_skip_filter_keeps_files_out_and_drops_them_when_they_were_in() {
    let r = repo();
    let mut idx = CodebaseIndex::open(&r.store).unwrap();
    index(&mut idx, &r.root);
    assert_eq!(
        idx.find_symbol(&r.root, "util_helper", 5)
            .unwrap()
            .matches
            .len(),
        1
    );
    let skip = |p: &Path| p.ends_with("helpers.rs").then(|| "protected".to_owned());
    let options = IndexOptions {
        skip: Some(&skip),
        ..IndexOptions::default()
    };
    let report = idx.index(&r.root, &options, &mut |_| {}).unwrap();
    assert_eq!(report.skipped.get("protected"), Some(&1));
    assert_eq!(report.removed, 1);
    assert!(
        idx.find_symbol(&r.root, "util_helper", 5)
            .unwrap()
            .matches
            .is_empty()
    );
}

#[test]
fn large_files_are_recorded_without_text() {
    let r = repo();
    write(
        &r.root,
        "src/huge.rs",
        "fn in_huge() {}\n".repeat(100).as_bytes(),
    );
    let mut idx = CodebaseIndex::open(&r.store).unwrap();
    let options = IndexOptions {
        max_file_bytes: 1000,
        ..IndexOptions::default()
    };
    let report = idx.index(&r.root, &options, &mut |_| {}).unwrap();
    assert_eq!(report.without_text.get("too_large"), Some(&1));
    assert!(
        idx.find_symbol(&r.root, "in_huge", 5)
            .unwrap()
            .matches
            .is_empty()
    );
    let o = idx
        .outline(&r.root.join("src/huge.rs"), 5)
        .unwrap()
        .unwrap();
    assert_eq!(o.content, "too_large");
}

#[test]
fn a_part_of_a_repository_reindexes_that_part_and_a_parent_takes_over() {
    let r = repo();
    let mut idx = CodebaseIndex::open(&r.store).unwrap();
    index(&mut idx, &r.root.join("src"));
    assert_eq!(idx.repositories().unwrap().len(), 1);
    // the parent takes the src repository over, keeping what it knew
    let whole = index(&mut idx, &r.root);
    assert_eq!(whole.root, r.root.to_str().unwrap());
    assert_eq!(whole.unchanged, 2, "{whole:?}");
    let repos = idx.repositories().unwrap();
    assert_eq!(repos.len(), 1);
    assert_eq!(repos[0].files, 8);
    // a part of it: same repository, the rest untouched
    fs::remove_file(r.root.join("web/types.ts")).unwrap();
    fs::remove_file(r.root.join("app/main.py")).unwrap();
    let part = index(&mut idx, &r.root.join("web"));
    assert_eq!(part.root, r.root.to_str().unwrap());
    assert_eq!(part.walked, r.root.join("web").to_str().unwrap());
    assert_eq!((part.removed, part.unchanged), (1, 1));
    assert_eq!(part.files, 7, "app/main.py was not walked, so it stays");
    // .gitignore of the repository still applies below it
    write(
        &r.root,
        "src/debug.log",
        b"ignored by the root's .gitignore",
    );
    let ignored = index(&mut idx, &r.root.join("src"));
    assert_eq!((ignored.files, ignored.parsed), (7, 0));
}
