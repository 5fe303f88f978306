//! What a file of a repository holds, by its name: code, settings, tests or prose.
//!
//! One decision for every place that ranks a repository's files for a task: the code index's
//! search, and the builder's lines like a task and its suggested replace. The change a task
//! asks for is made in the code, and a small model reads the first file it is shown. A README
//! says what the code does in the task's own words, and a test says what it must do with the
//! task's own figures: told the lines of `test/paginate.test.js` first (`paginate(books, 1,
//! 10)` shares the books, the 1 and the 10 of "shows books 11 to 20 on page 1 instead of 1 to
//! 10"), qwen2.5-coder-1.5b never read the `src/paginate.js` they test; told to read one of a
//! repository's files to fix what it shows, it read the first one named, `package.json`.

/// What a file holds, in the order its lines are shown for a task: code first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FileKind {
    /// Anything not below.
    Code,
    /// Settings or data, by the file's ending (see [`CONFIG`]) or a `.env` name.
    Config,
    /// Tests, by the naming conventions of the common test runners (see [`is_test`]).
    Test,
    /// Prose, by the file's ending (see [`PROSE`]), wherever it is.
    Prose,
}

impl FileKind {
    /// The kind of the file `path` names: relative to its repository and `/`-separated, since
    /// a folder above the repository named `test` says nothing of its files.
    pub fn of(path: &str) -> FileKind {
        let name = path.rsplit('/').next().unwrap_or(path);
        let ext = name
            .rsplit_once('.')
            .map(|(_, ext)| ext.to_ascii_lowercase())
            .unwrap_or_default();
        if PROSE.contains(&ext.as_str()) {
            FileKind::Prose
        } else if is_test(path) {
            FileKind::Test
        } else if CONFIG.contains(&ext.as_str()) || name.starts_with(".env") {
            FileKind::Config
        } else {
            FileKind::Code
        }
    }
}

/// Endings of files of prose.
const PROSE: &[&str] = &["md", "markdown", "txt", "text", "rst", "org", "adoc"];

/// Endings of files of settings and data.
const CONFIG: &[&str] = &[
    "json",
    "jsonc",
    "json5",
    "yaml",
    "yml",
    "toml",
    "ini",
    "cfg",
    "conf",
    "xml",
    "lock",
    "csv",
    "tsv",
    "properties",
    "plist",
];

/// Folders whose files are tests.
const TEST_FOLDERS: &[&str] = &["test", "tests", "__tests__", "spec", "specs"];

/// Whether `path` (relative, `/`-separated) names a file of tests: one under a folder of tests
/// ([`TEST_FOLDERS`]) or named as the test runners name theirs: `x.test.js` and `x.spec.ts`
/// (node's, jest, mocha, vitest), `test_x.py`, `x_test.py` and `conftest.py` (pytest),
/// `x_test.go` (go test), `XTest.java` and `XTests.java` (JUnit), `x_spec.rb` (RSpec).
fn is_test(path: &str) -> bool {
    let mut parts: Vec<&str> = path.split('/').collect();
    let Some(name) = parts.pop() else {
        return false;
    };
    if parts
        .iter()
        .any(|p| TEST_FOLDERS.contains(&p.to_ascii_lowercase().as_str()))
    {
        return true;
    }
    let (stem, _) = name.split_once('.').unwrap_or((name, ""));
    let dotted = name.split('.').skip(1).any(|p| p == "test" || p == "spec");
    dotted
        || stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("_spec")
        || stem == "conftest"
        || ((stem.ends_with("Test") || stem.ends_with("Tests")) && stem.len() > 5)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_of_tests_are_known_by_the_test_runners_names() {
        for path in [
            "test/paginate.test.js",
            "src/__tests__/cli.js",
            "tests/store.rs",
            "lib/paginate.spec.ts",
            "pkg/test_store.py",
            "pkg/store_test.py",
            "conftest.py",
            "store_test.go",
            "src/main/java/StoreTest.java",
            "spec/store_spec.rb",
            "test/fixtures/books.json",
        ] {
            assert_eq!(FileKind::of(path), FileKind::Test, "{path}");
        }
        for path in [
            "src/paginate.js",
            "src/latest.js",
            "src/contest.py",
            "src/Test.java",
            "src/attestation.rs",
            "testing.go",
            "Makefile",
        ] {
            assert_eq!(FileKind::of(path), FileKind::Code, "{path}");
        }
        for path in [
            "package.json",
            "Cargo.lock",
            "conf/app.YAML",
            ".env.local",
            "data/runs.csv",
        ] {
            assert_eq!(FileKind::of(path), FileKind::Config, "{path}");
        }
        assert_eq!(FileKind::of("src/config.js"), FileKind::Code);
        // Prose is prose wherever it is.
        assert_eq!(FileKind::of("test/README.md"), FileKind::Prose);
        assert_eq!(FileKind::of("docs/usage.rst"), FileKind::Prose);
        assert!(FileKind::Code < FileKind::Config);
        assert!(FileKind::Config < FileKind::Test && FileKind::Test < FileKind::Prose);
    }
}
