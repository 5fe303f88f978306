//! The codebase index: files, languages, symbols and full text of indexed repositories.
//!
//! Every path in the index and in every answer is absolute and canonical (links in the
//! repository root resolved when it was indexed). A query is limited to a *scope*, a directory:
//! only files below it are answered about (the gate passes its workspace root).
//!
//! Repositories nest sensibly: indexing a directory inside an indexed repository re-indexes
//! that part of it (the repository's `.gitignore` files still apply); indexing a directory
//! that holds indexed repositories takes them over, keeping what they know.

mod lang;
mod symbols;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::bound::{Limit, clip, cut};
use crate::fts::{FtsQuery, Matched};
use crate::{MemoryError, db, time};

use symbols::SymbolParser;

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

/// A file changed this recently (or later) is re-hashed next time even if its time and size
/// look the same: a write in the same clock tick as the index would otherwise go unseen.
const RACY_WINDOW_NS: i64 = 2_000_000_000;
/// The head of a file looked at for NUL bytes to call it binary.
const SNIFF_BYTES: usize = 8192;
/// Changed files written per transaction (a reader sees progress; the WAL stays small).
const BATCH_FILES: usize = 500;

/// Bounds of the queries.
pub const TREE_LIMIT: Limit = Limit::new(200, 1000);
pub const TREE_MAX_DEPTH: usize = 8;
pub const OUTLINE_LIMIT: Limit = Limit::new(300, 2000);
pub const FIND_SYMBOL_LIMIT: Limit = Limit::new(20, 200);
pub const SEARCH_LIMIT: Limit = Limit::new(10, 50);
/// Matching lines shown per file in a search, and the longest line shown.
const SEARCH_LINES_PER_FILE: usize = 3;
const SEARCH_LINE_BYTES: usize = 200;

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

#[derive(Debug, Clone)]
struct Known {
    id: i64,
    size: i64,
    mtime_ns: i64,
    sha256: Option<Vec<u8>>,
    racy: bool,
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
        let mut skip = |reason: &str| *report.skipped.entry(reason.to_owned()).or_default() += 1;
        let mut candidates: Vec<(PathBuf, String, std::fs::Metadata)> = Vec::new();
        let mut since_progress = 0u32;
        let walker = ignore::WalkBuilder::new(&walk_root)
            .hidden(true)
            .parents(true)
            .ignore(true)
            .git_ignore(true)
            .git_global(true)
            .git_exclude(true)
            .require_git(false)
            .follow_links(false)
            .build();
        for entry in walker {
            let Ok(entry) = entry else {
                skip("unreadable");
                continue;
            };
            let Some(ft) = entry.file_type() else {
                continue;
            };
            if ft.is_dir() {
                continue;
            }
            let path = entry.into_path();
            if own_dir.as_ref().is_some_and(|own| path.starts_with(own)) {
                continue;
            }
            if ft.is_symlink() {
                skip("link");
                continue;
            }
            if !ft.is_file() {
                skip("special");
                continue;
            }
            let Some(rel) = path
                .strip_prefix(&repo_root_path)
                .ok()
                .and_then(Path::to_str)
                .map(str::to_owned)
            else {
                skip("name_not_utf8");
                continue;
            };
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                skip("unreadable");
                continue;
            };
            candidates.push((path, rel, meta));
            since_progress += 1;
            if since_progress == 256 {
                since_progress = 0;
                progress(IndexProgress::Walking {
                    found: candidates.len() as u64,
                });
            }
        }
        candidates.sort_by(|a, b| a.1.cmp(&b.1));
        let total = candidates.len() as u64;
        progress(IndexProgress::Walking { found: total });

        // 2. what the index knows about this part of the repository
        let (lo, hi) = below(&walk_root_str);
        let mut known: HashMap<String, Known> = HashMap::new();
        {
            let mut st = self
                .conn
                .prepare(
                    "SELECT rel, id, size, mtime_ns, sha256, racy FROM files
                     WHERE repo_id = ?1 AND abs > ?2 AND abs < ?3",
                )
                .map_err(self.sql("reading the index"))?;
            let rows = st
                .query_map(params![repo_id, lo, hi], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        Known {
                            id: r.get(1)?,
                            size: r.get(2)?,
                            mtime_ns: r.get(3)?,
                            sha256: r.get(4)?,
                            racy: r.get::<_, i64>(5)? != 0,
                        },
                    ))
                })
                .map_err(self.sql("reading the index"))?;
            for row in rows {
                let (rel, k) = row.map_err(self.sql("reading the index"))?;
                known.insert(rel, k);
            }
        }

        // 3. every file: unchanged, rehashed, or read and parsed
        let now_ns = unix_ns(SystemTime::now());
        let mut parser = SymbolParser::new();
        let mut seen: HashSet<String> = HashSet::with_capacity(candidates.len());
        let mut in_batch = 0usize;
        self.begin()?;
        let result = (|| -> Result<(), MemoryError> {
            for (i, (path, rel, meta)) in candidates.iter().enumerate() {
                progress(IndexProgress::Indexing {
                    done: i as u64 + 1,
                    total,
                    path: rel,
                });
                if let Some(reason) = options.skip.and_then(|f| f(path)) {
                    *report.skipped.entry(reason).or_default() += 1;
                    continue;
                }
                let size = meta.size() as i64;
                let mtime_ns = mtime_of(meta);
                let old = known.get(rel.as_str());
                if let Some(k) = old
                    && k.size == size
                    && k.mtime_ns == mtime_ns
                    && !k.racy
                {
                    seen.insert(rel.clone());
                    report.unchanged += 1;
                    continue;
                }
                let Some(read) = read_file(path, options.max_file_bytes) else {
                    *report.skipped.entry("unreadable".into()).or_default() += 1;
                    continue;
                };
                seen.insert(rel.clone());
                // What was opened is what is recorded (it may have changed since the walk).
                let size = read.size as i64;
                let mtime_ns = read.mtime_ns;
                let racy = mtime_ns > now_ns - RACY_WINDOW_NS;
                if let (Some(k), Some(bytes)) = (old, &read.bytes) {
                    let digest = Sha256::digest(bytes).to_vec();
                    if k.sha256.as_deref() == Some(&digest) {
                        self.conn
                            .prepare_cached(
                                "UPDATE files SET size = ?2, mtime_ns = ?3, racy = ?4 WHERE id = ?1",
                            )
                            .and_then(|mut st| st.execute(params![k.id, size, mtime_ns, racy]))
                            .map_err(self.sql("updating a file's time"))?;
                        report.rehashed += 1;
                        continue;
                    }
                }
                self.store_file(
                    repo_id,
                    &repo_root,
                    rel,
                    path,
                    size,
                    mtime_ns,
                    racy,
                    read.bytes.as_deref(),
                    &mut parser,
                )?;
                report.parsed += 1;
                in_batch += 1;
                if in_batch >= BATCH_FILES {
                    self.commit()?;
                    self.begin()?;
                    in_batch = 0;
                }
            }

            // 4. files gone from this part of the tree
            progress(IndexProgress::Finishing);
            let gone: Vec<i64> = known
                .iter()
                .filter(|(rel, _)| !seen.contains(rel.as_str()))
                .map(|(_, k)| k.id)
                .collect();
            for id in &gone {
                self.conn
                    .prepare_cached("DELETE FROM files WHERE id = ?1")
                    .and_then(|mut st| st.execute([id]))
                    .map_err(self.sql("dropping a removed file"))?;
            }
            report.removed = gone.len() as u64;
            self.conn
                .prepare_cached("UPDATE repos SET indexed_at = ?2 WHERE id = ?1")
                .and_then(|mut st| st.execute(params![repo_id, time::now_ms()]))
                .map_err(self.sql("recording the index time"))?;
            Ok(())
        })();
        match result {
            Ok(()) => self.commit()?,
            Err(e) => {
                let _ = self.conn.execute_batch("ROLLBACK");
                return Err(e);
            }
        }

        // 5. what the repository's index holds now
        self.fill_totals(repo_id, &mut report)?;
        report.elapsed_ms = started.elapsed().as_millis() as u64;
        Ok(report)
    }

    fn begin(&self) -> Result<(), MemoryError> {
        self.conn
            .execute_batch("BEGIN IMMEDIATE")
            .map_err(self.sql("starting a transaction"))
    }

    fn commit(&self) -> Result<(), MemoryError> {
        self.conn
            .execute_batch("COMMIT")
            .map_err(self.sql("committing"))
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

    #[allow(clippy::too_many_arguments)]
    fn store_file(
        &self,
        repo_id: i64,
        repo_root: &str,
        rel: &str,
        path: &Path,
        size: i64,
        mtime_ns: i64,
        racy: bool,
        bytes: Option<&[u8]>,
        parser: &mut SymbolParser,
    ) -> Result<(), MemoryError> {
        let language = lang::detect(path);
        let abs = format!("{}/{rel}", repo_root.trim_end_matches('/'));
        let (content, text, digest) = match bytes {
            None => ("too_large", None, None),
            Some(b) if b[..b.len().min(SNIFF_BYTES)].contains(&0) => {
                ("binary", None, Some(Sha256::digest(b).to_vec()))
            }
            Some(b) => (
                "text",
                Some(String::from_utf8_lossy(b)),
                Some(Sha256::digest(b).to_vec()),
            ),
        };
        let lines = text.as_deref().map(count_lines);
        let id: i64 = self
            .conn
            .prepare_cached(
                "INSERT INTO files (repo_id, rel, abs, language, size, lines, mtime_ns, sha256, racy, content)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
                 ON CONFLICT (abs) DO UPDATE SET repo_id = excluded.repo_id, rel = excluded.rel,
                    language = excluded.language, size = excluded.size, lines = excluded.lines,
                    mtime_ns = excluded.mtime_ns, sha256 = excluded.sha256, racy = excluded.racy,
                    content = excluded.content
                 RETURNING id",
            )
            .and_then(|mut st| {
                st.query_row(
                    params![
                        repo_id,
                        rel,
                        abs,
                        language.map(|l| l.name),
                        size,
                        lines.map(|l| l as i64),
                        mtime_ns,
                        digest,
                        racy,
                        content
                    ],
                    |r| r.get(0),
                )
            })
            .map_err(self.sql("recording a file"))?;
        self.conn
            .prepare_cached("DELETE FROM symbols WHERE file_id = ?1")
            .and_then(|mut st| st.execute([id]))
            .map_err(self.sql("dropping old symbols"))?;
        self.conn
            .prepare_cached("DELETE FROM file_text WHERE rowid = ?1")
            .and_then(|mut st| st.execute([id]))
            .map_err(self.sql("dropping old text"))?;
        let Some(text) = text else {
            return Ok(());
        };
        self.conn
            .prepare_cached("INSERT INTO file_text (rowid, body) VALUES (?1, ?2)")
            .and_then(|mut st| st.execute(params![id, text.as_ref()]))
            .map_err(self.sql("indexing a file's text"))?;
        if let Some(parsed) = language.and_then(|l| l.parsed) {
            let found = parser.symbols(parsed, &text);
            let mut st = self
                .conn
                .prepare_cached(
                    "INSERT INTO symbols (file_id, name, kind, line, end_line, parent, signature)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                )
                .map_err(self.sql("recording symbols"))?;
            for s in found {
                st.execute(params![
                    id,
                    s.name,
                    s.kind,
                    s.line,
                    s.end_line,
                    s.parent,
                    s.signature
                ])
                .map_err(self.sql("recording symbols"))?;
            }
        }
        Ok(())
    }

    fn fill_totals(&self, repo_id: i64, report: &mut IndexReport) -> Result<(), MemoryError> {
        let (files, lines): (i64, i64) = self
            .conn
            .query_row(
                "SELECT count(*), coalesce(sum(lines), 0) FROM files WHERE repo_id = ?1",
                [repo_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(self.sql("counting files"))?;
        report.files = files as u64;
        report.lines = lines as u64;
        report.symbols = self
            .conn
            .query_row(
                "SELECT count(*) FROM symbols JOIN files ON files.id = symbols.file_id
                 WHERE files.repo_id = ?1",
                [repo_id],
                |r| r.get::<_, i64>(0),
            )
            .map_err(self.sql("counting symbols"))? as u64;
        let mut st = self
            .conn
            .prepare(
                "SELECT coalesce(language, 'other'), count(*) FROM files WHERE repo_id = ?1
                 GROUP BY 1",
            )
            .map_err(self.sql("counting languages"))?;
        report.languages = st
            .query_map([repo_id], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))
            .and_then(|rows| rows.collect::<Result<_, _>>())
            .map_err(self.sql("counting languages"))?;
        let mut st = self
            .conn
            .prepare(
                "SELECT content, count(*) FROM files WHERE repo_id = ?1 AND content != 'text'
                 GROUP BY 1",
            )
            .map_err(self.sql("counting files without text"))?;
        report.without_text = st
            .query_map([repo_id], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))
            .and_then(|rows| rows.collect::<Result<_, _>>())
            .map_err(self.sql("counting files without text"))?;
        Ok(())
    }

    /// The indexed repositories.
    pub fn repositories(&self) -> Result<Vec<Repository>, MemoryError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT root, indexed_at, (SELECT count(*) FROM files WHERE repo_id = repos.id)
                 FROM repos ORDER BY root",
            )
            .map_err(self.sql("listing repositories"))?;
        st.query_map([], |r| {
            Ok(Repository {
                root: r.get(0)?,
                indexed_at: time::rfc3339(r.get(1)?),
                files: r.get::<_, i64>(2)? as u64,
            })
        })
        .and_then(|rows| rows.collect())
        .map_err(self.sql("listing repositories"))
    }

    /// True when some indexed file lies below `scope` (or is it).
    pub fn covers(&self, scope: &Path) -> Result<bool, MemoryError> {
        let s = path_str(scope);
        let (lo, hi) = below(&s);
        self.conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM files WHERE (abs > ?1 AND abs < ?2) OR abs = ?3)",
                params![lo, hi, s],
                |r| r.get(0),
            )
            .map_err(self.sql("looking for indexed files"))
    }

    /// The indexed files and directories below `dir`, `depth` levels deep (1: its direct
    /// entries), at most `limit` entries (see [`TREE_LIMIT`]). A file given as `dir` is listed
    /// alone.
    pub fn tree(&self, dir: &Path, depth: usize, limit: usize) -> Result<Tree, MemoryError> {
        let depth = depth.clamp(1, TREE_MAX_DEPTH);
        let root = path_str(dir);
        let (lo, hi) = below(&root);
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT abs, language, size, lines FROM files
                 WHERE (abs > ?1 AND abs < ?2) OR abs = ?3 ORDER BY abs",
            )
            .map_err(self.sql("listing files"))?;
        let rows = st
            .query_map(params![lo, hi, root], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, Option<String>>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, Option<i64>>(3)?,
                ))
            })
            .map_err(self.sql("listing files"))?;
        // Keyed by path components, so a directory sorts right before its contents.
        let mut entries: BTreeMap<Vec<String>, TreeEntry> = BTreeMap::new();
        for row in rows {
            let (abs, language, size, lines) = row.map_err(self.sql("listing files"))?;
            if abs == root {
                entries.insert(
                    Vec::new(),
                    TreeEntry {
                        path: abs,
                        kind: "file",
                        language,
                        size: Some(size as u64),
                        lines: lines.map(|l| l as u64),
                        files: None,
                    },
                );
                continue;
            }
            let rel = abs[lo.len()..].to_owned();
            let parts: Vec<&str> = rel.split('/').collect();
            // every directory on the way, up to the depth, counts this file
            for d in 1..parts.len().min(depth + 1) {
                let key: Vec<String> = parts[..d].iter().map(|s| (*s).to_owned()).collect();
                let e = entries.entry(key).or_insert_with(|| TreeEntry {
                    path: format!("{lo}{}", parts[..d].join("/")),
                    kind: "dir",
                    language: None,
                    size: None,
                    lines: None,
                    files: Some(0),
                });
                e.files = e.files.map(|n| n + 1);
                e.lines = Some(e.lines.unwrap_or(0) + lines.unwrap_or(0) as u64);
            }
            if parts.len() <= depth {
                entries.insert(
                    parts.iter().map(|s| (*s).to_owned()).collect(),
                    TreeEntry {
                        path: abs,
                        kind: "file",
                        language,
                        size: Some(size as u64),
                        lines: lines.map(|l| l as u64),
                        files: None,
                    },
                );
            }
        }
        let total_entries = entries.len();
        let mut list: Vec<TreeEntry> = entries.into_values().collect();
        let truncated = cut(&mut list, limit);
        Ok(Tree {
            root,
            depth,
            entries: list,
            total_entries,
            truncated,
        })
    }

    /// The symbols of one indexed file, in line order, at most `limit`; `None` when the file
    /// is not in the index.
    pub fn outline(&self, file: &Path, limit: usize) -> Result<Option<Outline>, MemoryError> {
        let abs = path_str(file);
        let row = self
            .conn
            .query_row(
                "SELECT id, language, lines, content FROM files WHERE abs = ?1",
                [&abs],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, Option<String>>(1)?,
                        r.get::<_, Option<i64>>(2)?,
                        r.get::<_, String>(3)?,
                    ))
                },
            )
            .optional()
            .map_err(self.sql("looking up a file"))?;
        let Some((id, language, lines, content)) = row else {
            return Ok(None);
        };
        let total: i64 = self
            .conn
            .query_row(
                "SELECT count(*) FROM symbols WHERE file_id = ?1",
                [id],
                |r| r.get(0),
            )
            .map_err(self.sql("counting symbols"))?;
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT name, kind, line, end_line, parent, signature FROM symbols
                 WHERE file_id = ?1 ORDER BY line, id LIMIT ?2",
            )
            .map_err(self.sql("reading symbols"))?;
        let symbols: Vec<Symbol> = st
            .query_map(params![id, limit as i64], |r| {
                Ok(Symbol {
                    name: r.get(0)?,
                    kind: r.get(1)?,
                    line: r.get(2)?,
                    end_line: r.get(3)?,
                    parent: r.get(4)?,
                    signature: r.get(5)?,
                })
            })
            .and_then(|rows| rows.collect())
            .map_err(self.sql("reading symbols"))?;
        Ok(Some(Outline {
            path: abs,
            language,
            lines: lines.map(|l| l as u64),
            truncated: (total as usize) > symbols.len(),
            total_symbols: total as usize,
            symbols,
            content,
        }))
    }

    /// Definitions named `name` (exactly, ignoring case, first) or whose name starts with it,
    /// in files below `scope`. `Parent::name` or `Parent.name` asks for members of `Parent`.
    /// Among equal names, free items (no parent) come before members.
    pub fn find_symbol(
        &self,
        scope: &Path,
        name: &str,
        limit: usize,
    ) -> Result<SymbolMatches, MemoryError> {
        let name = name.trim();
        let (parent, name) = match name.rsplit_once("::").or_else(|| name.rsplit_once('.')) {
            Some((p, n)) if !p.is_empty() => {
                let p = p.rsplit(['.', ':']).next().unwrap_or(p);
                (Some(p.to_owned()), n)
            }
            _ => (None, name),
        };
        if name.is_empty() {
            return Err(MemoryError::EmptyQuery);
        }
        let upper = format!("{name}\u{10FFFF}");
        let scope_s = path_str(scope);
        let (lo, hi) = below(&scope_s);
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT s.name, s.kind, f.abs, s.line, s.end_line, s.parent, s.signature,
                        CASE WHEN s.name = ?1 THEN 0
                             WHEN s.name = ?1 COLLATE NOCASE THEN 1 ELSE 2 END AS rank
                 FROM symbols s JOIN files f ON f.id = s.file_id
                 WHERE s.name >= ?1 COLLATE NOCASE AND s.name < ?2 COLLATE NOCASE
                   AND f.abs > ?3 AND f.abs < ?4
                   AND (?5 IS NULL OR s.parent = ?5 COLLATE NOCASE)
                 ORDER BY rank, length(s.name), s.name, s.parent IS NOT NULL, f.abs, s.line
                 LIMIT ?6",
            )
            .map_err(self.sql("finding symbols"))?;
        let mut matches: Vec<SymbolMatch> = st
            .query_map(
                params![name, upper, lo, hi, parent, limit as i64 + 1],
                |r| {
                    Ok(SymbolMatch {
                        name: r.get(0)?,
                        kind: r.get(1)?,
                        path: r.get(2)?,
                        line: r.get(3)?,
                        end_line: r.get(4)?,
                        parent: r.get(5)?,
                        signature: r.get(6)?,
                        exact: r.get::<_, i64>(7)? < 2,
                    })
                },
            )
            .and_then(|rows| rows.collect())
            .map_err(self.sql("finding symbols"))?;
        let truncated = cut(&mut matches, limit);
        Ok(SymbolMatches { matches, truncated })
    }

    /// Files below `scope` whose text holds every word of `query`, best first (BM25), at most
    /// `limit`, each with its best matching lines; when none does, the files holding any of
    /// them (`matched` says which). Prose (markdown, reStructuredText, plain text) comes after
    /// code and configuration: this is the index of the code, and a README that says the
    /// words of a bug report more often than the code that has the bug led a small model to
    /// read the README and answer from it.
    pub fn search(
        &self,
        scope: &Path,
        query: &str,
        limit: usize,
    ) -> Result<SearchResults, MemoryError> {
        let q = FtsQuery::parse(query)?;
        let scope_s = path_str(scope);
        let (lo, hi) = below(&scope_s);
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT f.abs, f.language, t.body, snippet(file_text, 0, '', '', '…', 12)
                 FROM file_text t JOIN files f ON f.id = t.rowid
                 WHERE file_text MATCH ?1 AND ((f.abs > ?2 AND f.abs < ?3) OR f.abs = ?4)
                 ORDER BY f.language IS NOT NULL AND f.language IN ('markdown', 'rst', 'text'),
                          t.rank
                 LIMIT ?5",
            )
            .map_err(self.sql("searching"))?;
        let mut found = Vec::new();
        let mut matched = Matched::Every;
        for (expr, how) in q.tries() {
            let rows = st
                .query_map(params![expr, lo, hi, scope_s, limit as i64 + 1], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, Option<String>>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, String>(3)?,
                    ))
                })
                .map_err(self.sql("searching"))?;
            for row in rows {
                found.push(row.map_err(self.sql("searching"))?);
            }
            if !found.is_empty() {
                matched = how;
                break;
            }
        }
        let mut hits = Vec::new();
        for (path, language, body, snippet) in found {
            let (mut lines, more_lines) = best_lines(&q, &body);
            if !lines.is_empty() {
                let symbols = self.symbol_spans(&path)?;
                for hit in &mut lines {
                    hit.within = innermost(&symbols, hit.line);
                }
            }
            hits.push(SearchHit {
                path,
                language,
                snippet: lines.is_empty().then_some(snippet),
                lines,
                more_lines,
            });
        }
        let truncated = cut(&mut hits, limit);
        Ok(SearchResults {
            hits,
            truncated,
            matched,
        })
    }
}

/// The definitions of the file at `abs`: (first line, last line, `kind name`
/// with its parent as `Parent.name`).
fn symbol_spans_query() -> &'static str {
    "SELECT s.line, s.end_line, s.kind, s.name, s.parent FROM symbols s
     JOIN files f ON f.id = s.file_id WHERE f.abs = ?1"
}

impl CodebaseIndex {
    fn symbol_spans(&self, abs: &str) -> Result<Vec<(u64, u64, String)>, MemoryError> {
        let mut st = self
            .conn
            .prepare_cached(symbol_spans_query())
            .map_err(self.sql("reading symbols"))?;
        st.query_map([abs], |r| {
            let kind: String = r.get(2)?;
            let name: String = r.get(3)?;
            let parent: Option<String> = r.get(4)?;
            let shown = match parent {
                Some(p) => format!("{kind} {p}.{name}"),
                None => format!("{kind} {name}"),
            };
            Ok((
                r.get::<_, u32>(0)? as u64,
                r.get::<_, u32>(1)? as u64,
                shown,
            ))
        })
        .and_then(|rows| rows.collect())
        .map_err(self.sql("reading symbols"))
    }
}

/// The narrowest span of `symbols` that holds `line` (the latest to start,
/// among equals).
fn innermost(symbols: &[(u64, u64, String)], line: u64) -> Option<String> {
    symbols
        .iter()
        .filter(|(first, last, _)| *first <= line && line <= *last)
        .min_by_key(|(first, last, _)| (last - first, u64::MAX - first))
        .map(|(_, _, shown)| shown.clone())
}

/// The lines of `body` holding the most query words, in line order, and how many more match.
fn best_lines(q: &FtsQuery, body: &str) -> (Vec<LineHit>, usize) {
    let mut scored: Vec<(usize, u64, &str)> = body
        .lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let n = q.words_in(line);
            (n > 0).then_some((n, i as u64 + 1, line))
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let more = scored.len().saturating_sub(SEARCH_LINES_PER_FILE);
    scored.truncate(SEARCH_LINES_PER_FILE);
    scored.sort_by_key(|s| s.1);
    let lines = scored
        .into_iter()
        .map(|(_, line, text)| LineHit {
            line,
            text: around_match(q, text.trim_end()),
            within: None,
        })
        .collect();
    (lines, more)
}

/// A long line cut to a window around its first match.
fn around_match(q: &FtsQuery, line: &str) -> String {
    if line.len() <= SEARCH_LINE_BYTES {
        return line.to_owned();
    }
    let lower = line.to_lowercase();
    // Lower-casing can change byte lengths; fall back to the line's start then.
    let at = if lower.len() == line.len() {
        q.terms
            .iter()
            .filter_map(|t| lower.find(t.as_str()))
            .min()
            .unwrap_or(0)
    } else {
        0
    };
    let mut start = at.saturating_sub(SEARCH_LINE_BYTES / 4);
    while !line.is_char_boundary(start) {
        start -= 1;
    }
    let (body, cut_end) = clip(&line[start..], SEARCH_LINE_BYTES);
    let _ = cut_end;
    if start > 0 {
        format!("…{body}")
    } else {
        body
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

fn unix_ns(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_nanos()).unwrap_or(i64::MAX),
    }
}

fn mtime_of(meta: &std::fs::Metadata) -> i64 {
    meta.mtime()
        .saturating_mul(1_000_000_000)
        .saturating_add(meta.mtime_nsec())
}

#[derive(Debug)]
struct ReadFile {
    size: u64,
    mtime_ns: i64,
    /// `None` when the file is larger than the limit (not read).
    bytes: Option<Vec<u8>>,
}

/// Opens a file without following a link at its end and without blocking (a FIFO put in its
/// place), and reads it if it is a regular file no larger than `max`.
fn read_file(path: &Path, max: u64) -> Option<ReadFile> {
    use rustix::fs::{Mode, OFlags};
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let mut file = File::from(fd);
    let meta = file.metadata().ok()?;
    if !meta.is_file() {
        return None;
    }
    let size = meta.len();
    let mtime_ns = mtime_of(&meta);
    if size > max {
        return Some(ReadFile {
            size,
            mtime_ns,
            bytes: None,
        });
    }
    let mut bytes = Vec::with_capacity(size as usize);
    (&mut file).take(max + 1).read_to_end(&mut bytes).ok()?;
    if bytes.len() as u64 > max {
        return Some(ReadFile {
            size: bytes.len() as u64,
            mtime_ns,
            bytes: None,
        });
    }
    Some(ReadFile {
        size: bytes.len() as u64,
        mtime_ns,
        bytes: Some(bytes),
    })
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
