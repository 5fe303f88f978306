//! Properties: no text a caller gives reaches FTS5's query syntax or SQLite as syntax, and the
//! symbol parsers never panic and never report a line outside the file.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use proptest::prelude::*;
use seam_memory::{CodebaseIndex, IndexOptions, MemoryError, MemoryHome};

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    store: PathBuf,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap().join("repo");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(
            root.join("src/lib.rs"),
            "pub fn alpha() {}\n/* \"quoted\" (paren) NEAR AND OR NOT * ^ : - */\n",
        )
        .unwrap();
        std::fs::write(root.join("notes.md"), "alpha beta gamma\n").unwrap();
        let store = MemoryHome::new(dir.path()).codebase_path();
        CodebaseIndex::open(&store)
            .unwrap()
            .index(&root, &IndexOptions::default(), &mut |_| {})
            .unwrap();
        Fixture {
            _dir: dir,
            root,
            store,
        }
    })
}

fn query_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        proptest::collection::vec(
            prop_oneof![
                Just("\"".to_owned()),
                Just("(".to_owned()),
                Just(")".to_owned()),
                Just("*".to_owned()),
                Just("NEAR".to_owned()),
                Just("AND".to_owned()),
                Just("OR".to_owned()),
                Just("NOT".to_owned()),
                Just("^".to_owned()),
                Just(":".to_owned()),
                Just("-".to_owned()),
                Just("'".to_owned()),
                Just("%".to_owned()),
                Just("alpha".to_owned()),
                Just(" ".to_owned()),
                "[a-z]{1,4}",
            ],
            0..12
        )
        .prop_map(|v| v.concat()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_query_is_words_or_refused_as_empty(q in query_text()) {
        let f = fixture();
        let idx = CodebaseIndex::open(&f.store).unwrap();
        match idx.search(&f.root, &q, 5) {
            Ok(_) | Err(MemoryError::EmptyQuery) => {}
            Err(e) => prop_assert!(false, "search {q:?}: {e}"),
        }
        match idx.find_symbol(&f.root, &q, 5) {
            Ok(_) | Err(MemoryError::EmptyQuery) => {}
            Err(e) => prop_assert!(false, "find_symbol {q:?}: {e}"),
        }
    }

}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn parsers_never_panic_and_lines_stay_in_the_file(
        src in "(fn |struct |class |def |func |type |impl |mod |cfg_x! \\{|interface |[{}();:\n ]|[a-z]{1,6}){0,60}",
        ext in prop::sample::select(vec!["rs", "py", "js", "ts", "tsx", "go"]),
    ) {
        let f = fixture();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let file = root.join(format!("x.{ext}"));
        std::fs::write(&file, &src).unwrap();
        let mut idx = CodebaseIndex::open(&dir.path().join("m/c.sqlite")).unwrap();
        idx.index(&root, &IndexOptions::default(), &mut |_| {}).unwrap();
        let lines = src.lines().count().max(1) as u32 + 1;
        let outline = idx.outline(Path::new(&file), 2000).unwrap().unwrap();
        for s in outline.symbols {
            prop_assert!(s.line >= 1 && s.line <= s.end_line && s.end_line <= lines, "{s:?} in {src:?}");
        }
        let _ = f;
    }
}
