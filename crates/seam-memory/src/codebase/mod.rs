//! The codebase index: files, languages, symbols and full text of indexed repositories.
//!
//! Every path in the index and in every answer is absolute and canonical (links in the
//! repository root resolved when it was indexed). A query is limited to a *scope*, a directory:
//! only files below it are answered about (the gate passes its workspace root).
//!
//! Repositories nest sensibly: indexing a directory inside an indexed repository re-indexes
//! that part of it (the repository's `.gitignore` files still apply); indexing a directory
//! that holds indexed repositories takes them over, keeping what they know.

mod files;
mod gone;
mod kind;
mod known;
mod lang;
mod query;
mod symbols;
mod totals;
mod walk;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rusqlite::{Connection, Transaction, TransactionBehavior, params};
use serde::Serialize;

pub use kind::FileKind;

use crate::bound::Limit;
use crate::fts::Matched;
use crate::{MemoryError, db, time};

const SCHEMA_VERSION: i64 = 1;
const SCHEMA: &str = "
CREATE TABLE repos (
    id INTEGER PRIMARY KEY,
    root TEXT NOT NULL UNIQUE,
    indexed_at INTEGER NOT NULL
);
CREATE TABLE files (
    id INTEGER PRIMARY KEY,
    repo_id INTEGER NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
    rel TEXT NOT NULL,
    abs TEXT NOT NULL UNIQUE,
    language TEXT,
    size INTEGER NOT NULL,
    lines INTEGER,
    mtime_ns INTEGER NOT NULL,
    sha256 BLOB,
    racy INTEGER NOT NULL DEFAULT 0,
    content TEXT NOT NULL,
    UNIQUE (repo_id, rel)
);
CREATE TABLE symbols (
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    parent TEXT,
    signature TEXT NOT NULL
);
CREATE INDEX symbols_by_file ON symbols (file_id, line);
CREATE INDEX symbols_by_name ON symbols (name COLLATE NOCASE);
CREATE VIRTUAL TABLE file_text USING fts5 (body, tokenize = 'unicode61');
CREATE TRIGGER files_drop_text AFTER DELETE ON files BEGIN
    DELETE FROM file_text WHERE rowid = old.id;
END;
";

/// Bounds of the queries.
pub const TREE_LIMIT: Limit = Limit::new(200, 1000);
pub const TREE_MAX_DEPTH: usize = 8;
pub const OUTLINE_LIMIT: Limit = Limit::new(300, 2000);
pub const FIND_SYMBOL_LIMIT: Limit = Limit::new(20, 200);
pub const SEARCH_LIMIT: Limit = Limit::new(10, 50);
/// The best files (BM25) of a search among which code is put before settings, tests and prose
/// (see [`CodebaseIndex::search`]); more than [`SEARCH_LIMIT`]'s most.
pub(crate) const SEARCH_POOL: usize = 200;

/// How an index run goes; given to the progress callback.
#[derive(Debug, Clone, Copy)]
pub enum IndexProgress<'a> {
    /// Walking the tree: this many files found so far.
    Walking { found: u64 },
    /// Looking at file `done` of `total` (relative path).
    Indexing {
        done: u64,
        total: u64,
        path: &'a str,
    },
    /// Dropping files that are gone, counting.
    Finishing,
}

/// A caller's filter: `Some(reason)` keeps a file out of the index.
pub type FileSkip<'a> = dyn Fn(&Path) -> Option<String> + 'a;

/// How to index.
pub struct IndexOptions<'a> {
    /// Files larger than this are recorded (name, size, language) without their text or symbols.
    pub max_file_bytes: u64,
    /// Called for every file before it is opened; `Some(reason)` leaves it out (counted in
    /// [`IndexReport::skipped`] under `reason`), and drops it if it was indexed before.
    pub skip: Option<&'a FileSkip<'a>>,
}

impl Default for IndexOptions<'_> {
    fn default() -> Self {
        IndexOptions {
            max_file_bytes: 1024 * 1024,
            skip: None,
        }
    }
}

impl std::fmt::Debug for IndexOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexOptions")
            .field("max_file_bytes", &self.max_file_bytes)
            .field("skip", &self.skip.is_some())
            .finish()
    }
}

/// What an index run did, and what the repository's index holds afterwards.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct IndexReport {
    /// The repository's root.
    pub root: String,
    /// The directory walked: the root, or a part of it.
    pub walked: String,
    /// Files in the repository's index after the run.
    pub files: u64,
    /// Files read and parsed this run (new or changed).
    pub parsed: u64,
    /// Files whose time changed but whose content did not (hashed, not parsed).
    pub rehashed: u64,
    /// Files skipped by size and time, not read at all.
    pub unchanged: u64,
    /// Files dropped: gone from the tree, now ignored, or now skipped.
    pub removed: u64,
    /// Symbols in the repository's index after the run.
    pub symbols: u64,
    /// Lines of text in the repository's index after the run.
    pub lines: u64,
    /// Files per language (files of no known language are under `other`).
    pub languages: BTreeMap<String, u64>,
    /// Files recorded without text: `binary` and `too_large`.
    pub without_text: BTreeMap<String, u64>,
    /// Files left out, by reason (`link`, `special`, `unreadable`, `name_not_utf8`, the
    /// caller's reasons).
    pub skipped: BTreeMap<String, u64>,
    pub elapsed_ms: u64,
}

/// An indexed repository.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Repository {
    pub root: String,
    pub indexed_at: String,
    pub files: u64,
}

/// A depth-limited listing of the indexed files below a directory.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Tree {
    /// The directory listed (absolute).
    pub root: String,
    pub depth: usize,
    pub entries: Vec<TreeEntry>,
    /// Entries there were in all at this depth.
    pub total_entries: usize,
    pub truncated: bool,
}

/// A file or a directory in a [`Tree`]; a directory counts the files below it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct TreeEntry {
    /// Absolute; a directory's ends without `/`.
    pub path: String,
    /// `file` or `dir`.
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<u64>,
    /// For a directory: the indexed files below it, at any depth.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<u64>,
}

/// One definition in a file.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    pub kind: String,
    pub line: u32,
    pub end_line: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    pub signature: String,
}

/// The symbols of one file, in order.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Outline {
    pub path: String,
    pub language: Option<String>,
    pub lines: Option<u64>,
    pub symbols: Vec<Symbol>,
    pub total_symbols: usize,
    pub truncated: bool,
    /// `text`, `binary` or `too_large`: why a file may have no symbols.
    pub content: String,
}

/// A definition found by name.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct SymbolMatch {
    pub name: String,
    pub kind: String,
    pub path: String,
    pub line: u32,
    pub end_line: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    pub signature: String,
    /// The name is the one asked for (ignoring case); else it starts with it.
    pub exact: bool,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct SymbolMatches {
    pub matches: Vec<SymbolMatch>,
    pub truncated: bool,
}

/// A matching line of a file.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct LineHit {
    pub line: u64,
    pub text: String,
    /// The innermost definition whose lines hold this one (`function
    /// cmdList`, `method Store.add`), when the file's symbols say: who calls
    /// a function is then in the search's answer, not one read further away.
    #[serde(rename = "in", skip_serializing_if = "Option::is_none")]
    pub within: Option<String>,
}

/// A file that matches a full-text search.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct SearchHit {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// The best matching lines (those with the most of the query's words), in line order.
    pub lines: Vec<LineHit>,
    /// More lines of this file that match, not shown.
    pub more_lines: usize,
    /// FTS5's snippet, when no line holds a query word as written (the index splits words
    /// at punctuation and case).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct SearchResults {
    pub hits: Vec<SearchHit>,
    pub truncated: bool,
    /// Whether the hits hold every word of the query or only some.
    pub matched: Matched,
}

/// The codebase index in one SQLite file.
#[derive(Debug)]
pub struct CodebaseIndex {
    conn: Connection,
    path: PathBuf,
}

impl CodebaseIndex {
    /// Opens the index at `path`, creating it (owner-only) when missing.
    pub fn open(path: &Path) -> Result<CodebaseIndex, MemoryError> {
        let conn = db::open(path, SCHEMA, SCHEMA_VERSION)?;
        Ok(CodebaseIndex {
            conn,
            path: path.to_owned(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn sql(&self, what: &'static str) -> impl FnOnce(rusqlite::Error) -> MemoryError + '_ {
        db::sql_error(&self.path, what)
    }

    /// Starts a write transaction; dropped without a commit, it rolls back.
    fn begin(&self) -> Result<Transaction<'_>, MemoryError> {
        Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)
            .map_err(self.sql("starting a transaction"))
    }

    fn commit(&self, tx: Transaction<'_>) -> Result<(), MemoryError> {
        tx.commit().map_err(self.sql("committing"))
    }

    /// Indexes (or re-indexes) the repository at `dir`, or the part of an indexed repository
    /// that `dir` is. Only changed files are read and parsed again.
    pub fn index(
        &mut self,
        dir: &Path,
        options: &IndexOptions<'_>,
        progress: &mut dyn FnMut(IndexProgress<'_>),
    ) -> Result<IndexReport, MemoryError> {
        let started = Instant::now();
        let io = |path: &Path| {
            let path = path.to_owned();
            move |cause| MemoryError::Io { path, cause }
        };
        let walk_root = std::fs::canonicalize(dir).map_err(io(dir))?;
        if !walk_root.is_dir() {
            return Err(MemoryError::NotADirectory(walk_root));
        }
        let Some(walk_root_str) = walk_root.to_str().map(str::to_owned) else {
            return Err(MemoryError::RootRefused {
                path: walk_root,
                reason: "its name is not UTF-8".into(),
            });
        };
        // The store's own directory is never indexed (it may sit inside the tree).
        let own_dir = self
            .path
            .parent()
            .and_then(|p| std::fs::canonicalize(p).ok());
        if let Some(own) = &own_dir
            && walk_root.starts_with(own)
        {
            return Err(MemoryError::RootRefused {
                path: walk_root,
                reason: "it is seam's memory directory".into(),
            });
        }

        let (repo_id, repo_root) = self.repository_for(&walk_root_str)?;
        let repo_root_path = PathBuf::from(&repo_root);

        // 1. walk
        let mut report = IndexReport {
            root: repo_root.clone(),
            walked: walk_root_str.clone(),
            files: 0,
            parsed: 0,
            rehashed: 0,
            unchanged: 0,
            removed: 0,
            symbols: 0,
            lines: 0,
            languages: BTreeMap::new(),
            without_text: BTreeMap::new(),
            skipped: BTreeMap::new(),
            elapsed_ms: 0,
        };
        let candidates = walk::walk(
            &walk_root,
            &repo_root_path,
            own_dir.as_deref(),
            &mut report.skipped,
            progress,
        );

        // 2. what the index knows about this part of the repository
        let known = self.known(repo_id, &walk_root_str)?;

        // 3. every file: unchanged, rehashed, or read and parsed (a failure drops the open
        //    transaction, which rolls it back)
        let tx = self.begin()?;
        let (tx, seen) = self.index_files(
            tx,
            repo_id,
            &repo_root,
            &candidates,
            &known,
            options,
            &mut report,
            progress,
        )?;

        // 4. files gone from this part of the tree
        progress(IndexProgress::Finishing);
        report.removed = self.drop_gone(&known, &seen)?;
        self.conn
            .prepare_cached("UPDATE repos SET indexed_at = ?2 WHERE id = ?1")
            .and_then(|mut st| st.execute(params![repo_id, time::now_ms()]))
            .map_err(self.sql("recording the index time"))?;
        self.commit(tx)?;

        // 5. what the repository's index holds now
        self.fill_totals(repo_id, &mut report)?;
        report.elapsed_ms = started.elapsed().as_millis() as u64;
        Ok(report)
    }

    /// The repository `dir` belongs to (an indexed one containing it), or a new one rooted at
    /// `dir` that takes over the indexed repositories inside it.
    fn repository_for(&mut self, dir: &str) -> Result<(i64, String), MemoryError> {
        let repos: Vec<(i64, String)> = {
            let mut st = self
                .conn
                .prepare("SELECT id, root FROM repos")
                .map_err(self.sql("reading the repositories"))?;
            st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .and_then(|rows| rows.collect::<Result<_, _>>())
                .map_err(self.sql("reading the repositories"))?
        };
        if let Some(found) = repos
            .iter()
            .filter(|(_, root)| Path::new(dir).starts_with(root))
            .max_by_key(|(_, root)| root.len())
        {
            return Ok(found.clone());
        }
        let tx = self.conn.transaction().map_err(|cause| MemoryError::Sql {
            path: self.path.clone(),
            what: "adding a repository",
            cause,
        })?;
        let sql = |what| {
            let path = self.path.clone();
            move |cause| MemoryError::Sql { path, what, cause }
        };
        tx.execute(
            "INSERT INTO repos (root, indexed_at) VALUES (?1, ?2)",
            params![dir, time::now_ms()],
        )
        .map_err(sql("adding a repository"))?;
        let id = tx.last_insert_rowid();
        for (old, root) in &repos {
            if Path::new(root).starts_with(dir) {
                tx.execute(
                    "UPDATE files SET repo_id = ?1, rel = substr(abs, ?2) WHERE repo_id = ?3",
                    params![id, dir.chars().count() as i64 + 2, old],
                )
                .map_err(sql("taking over a repository inside"))?;
                tx.execute("DELETE FROM repos WHERE id = ?1", [old])
                    .map_err(sql("taking over a repository inside"))?;
            }
        }
        tx.commit().map_err(sql("adding a repository"))?;
        Ok((id, dir.to_owned()))
    }
}

/// The `(lo, hi)` bounds of the paths strictly below directory `dir`: `lo` is `dir/` and
/// `hi` is `dir0` (`0` follows `/`), so `abs > lo AND abs < hi` uses the index on `abs`.
fn below(dir: &str) -> (String, String) {
    let base = dir.trim_end_matches('/');
    (format!("{base}/"), format!("{base}0"))
}

fn path_str(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

fn count_lines(text: &str) -> usize {
    let n = text.bytes().filter(|&b| b == b'\n').count();
    if text.is_empty() || text.ends_with('\n') {
        n
    } else {
        n + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_bounds() {
        assert_eq!(below("/a/b"), ("/a/b/".into(), "/a/b0".into()));
        assert_eq!(below("/"), ("/".into(), "0".into()));
        // a sibling with a longer name is outside
        let (lo, hi) = below("/a/b");
        let inside = |p: &str| p > lo.as_str() && p < hi.as_str();
        assert!(inside("/a/b/c"));
        assert!(!inside("/a/bc/d"));
        assert!(!inside("/a/b-x"));
        assert!(!inside("/a/b"));
    }

    #[test]
    fn line_counts() {
        assert_eq!(count_lines(""), 0);
        assert_eq!(count_lines("a"), 1);
        assert_eq!(count_lines("a\n"), 1);
        assert_eq!(count_lines("a\nb"), 2);
    }
}
