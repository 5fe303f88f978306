//! The gate's memory: three stores in SQLite under `<seam_home>/memory/`.
//!
//! This crate owns
//! - the **codebase index** ([`CodebaseIndex`], `codebase.sqlite`): the files of a repository
//!   the operator asked to index (`seam index PATH`), their languages, sizes and line counts, the
//!   symbols tree-sitter finds in them (functions, methods, types, traits, classes, interfaces,
//!   modules, impls — Rust, Python, JavaScript, TypeScript/TSX and Go) with line numbers, and an
//!   FTS5 full-text index of their text. Queries: [`CodebaseIndex::tree`],
//!   [`CodebaseIndex::outline`], [`CodebaseIndex::find_symbol`], [`CodebaseIndex::search`];
//! - the **build memory** ([`BuildMemory`], `builds.sqlite`): records of builds and critic runs —
//!   command, exit status, duration, summary and a log excerpt, all scrubbed by secret shape
//!   with `seam-scrub` *before* they are stored;
//! - the **operator's notes** ([`OperatorNotes`], `notes.sqlite`).
//!
//! Design. Each store is one SQLite file (WAL, so the gate reads while `seam index` writes),
//! created owner-only (directory `0700`, files `0600`) with a schema version checked on every
//! open. Every query is bounded: a limit with a default and a maximum ([`Limit`]), and every
//! result says whether it was cut (`truncated`) so a caller never mistakes a page for the whole.
//! Indexing is incremental: a file whose size and modification time are unchanged is not read;
//! one whose time changed but whose SHA-256 did not is not parsed again; a file gone from the
//! tree (or newly ignored) is dropped with its symbols and text. Files are walked with the
//! `ignore` crate (`.gitignore`, `.ignore`, git's excludes; hidden files are skipped), links are
//! never followed, and a file is opened with `O_NOFOLLOW | O_NONBLOCK` and must be a regular
//! file when opened. A caller-supplied filter ([`IndexOptions::skip`]) can refuse files — the
//! `seam` binary refuses the policy's protected files with it, so a key never enters the index.
//!
//! What it must never do: write, move or delete any of the owner's files — the only files it
//! touches outside its own directory are the ones of a repository it was asked to index, and
//! those it only reads; follow a link out of that repository; store a build log, command or
//! summary it has not scrubbed; return an unbounded result. It does not print and knows
//! nothing of tools, policy or the terminal.

mod bound;
mod builds;
pub mod codebase;
mod db;
mod fts;
mod notes;
pub mod time;

pub use fts::Matched;

use std::path::{Path, PathBuf};

pub use bound::Limit;
pub use builds::{
    ALL_SUMMARIES_LIMIT, BUILD_SEARCH_LIMIT, BuildHit, BuildHits, BuildMemory, BuildRecord,
    BuildSummaries, BuildSummary, LOG_EXCERPT_BYTES, NewBuildRecord, RunKind,
};
pub use codebase::{
    CodebaseIndex, FIND_SYMBOL_LIMIT, FileKind, FileSkip, IndexOptions, IndexProgress, IndexReport,
    LineHit, OUTLINE_LIMIT, Outline, Repository, SEARCH_LIMIT, SearchHit, SearchResults, Symbol,
    SymbolMatch, SymbolMatches, TREE_LIMIT, TREE_MAX_DEPTH, Tree, TreeEntry,
};
pub use notes::{
    MAX_NOTE_BYTES, NOTES_LIST_LIMIT, NOTES_SEARCH_LIMIT, Note, NoteHit, NoteHits, NoteList,
    OperatorNotes,
};

/// Where the memory stores live: `<seam_home>/memory/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryHome {
    dir: PathBuf,
}

impl MemoryHome {
    /// The memory directory inside seam's home.
    pub fn new(seam_home: &Path) -> MemoryHome {
        MemoryHome {
            dir: seam_home::SeamHome::new(seam_home).memory(),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn codebase_path(&self) -> PathBuf {
        self.dir.join("codebase.sqlite")
    }

    pub fn builds_path(&self) -> PathBuf {
        self.dir.join("builds.sqlite")
    }

    pub fn notes_path(&self) -> PathBuf {
        self.dir.join("notes.sqlite")
    }

    /// The codebase index, created (owner-only) when it does not exist.
    pub fn codebase(&self) -> Result<CodebaseIndex, MemoryError> {
        CodebaseIndex::open(&self.codebase_path())
    }

    /// The codebase index if one was ever made; `None` creates nothing.
    pub fn existing_codebase(&self) -> Result<Option<CodebaseIndex>, MemoryError> {
        let p = self.codebase_path();
        if !p.exists() {
            return Ok(None);
        }
        CodebaseIndex::open(&p).map(Some)
    }

    /// The build memory, created (owner-only) when it does not exist.
    pub fn builds(&self) -> Result<BuildMemory, MemoryError> {
        BuildMemory::open(&self.builds_path())
    }

    /// The build memory if it exists; `None` creates nothing.
    pub fn existing_builds(&self) -> Result<Option<BuildMemory>, MemoryError> {
        let p = self.builds_path();
        if !p.exists() {
            return Ok(None);
        }
        BuildMemory::open(&p).map(Some)
    }

    /// The agent's own build records (the Critic's runs and `builder check`):
    /// `<seam_home>/agent/builds.sqlite`, beside the agent's other data and
    /// outside `memory/` (the gate's stores, which the agent cannot reach).
    /// The same [`BuildMemory`] as [`MemoryHome::builds_path`], another file.
    pub fn agent_builds_path(&self) -> PathBuf {
        let seam_home = self.dir.parent().unwrap_or(&self.dir);
        seam_home::SeamHome::new(seam_home).agent_build_records()
    }

    /// The agent's build records, created (owner-only) when they do not exist.
    pub fn agent_builds(&self) -> Result<BuildMemory, MemoryError> {
        BuildMemory::open(&self.agent_builds_path())
    }

    /// The agent's build records if they exist; `None` creates nothing.
    pub fn existing_agent_builds(&self) -> Result<Option<BuildMemory>, MemoryError> {
        let p = self.agent_builds_path();
        if !p.exists() {
            return Ok(None);
        }
        BuildMemory::open(&p).map(Some)
    }

    /// The operator's notes, created (owner-only) when they do not exist.
    pub fn notes(&self) -> Result<OperatorNotes, MemoryError> {
        OperatorNotes::open(&self.notes_path())
    }

    /// The operator's notes if they exist; `None` creates nothing.
    pub fn existing_notes(&self) -> Result<Option<OperatorNotes>, MemoryError> {
        let p = self.notes_path();
        if !p.exists() {
            return Ok(None);
        }
        OperatorNotes::open(&p).map(Some)
    }
}

/// What went wrong in a memory store, and where. A cause (I/O, SQLite) is part of the message
/// and not a `source()`: the gate's memory tools refuse with the message alone.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("cannot create {}: {cause}", path.display())]
    Create {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("cannot open the memory store {}: {cause}", path.display())]
    Open {
        path: PathBuf,
        cause: rusqlite::Error,
    },
    #[error(
        "{} is a memory store of schema version {found}; this seam reads version {expected} (move the file away to start a new one)",
        path.display()
    )]
    Schema {
        path: PathBuf,
        found: i64,
        expected: i64,
    },
    #[error("{what} in {}: {cause}", path.display())]
    Sql {
        path: PathBuf,
        what: &'static str,
        cause: rusqlite::Error,
    },
    #[error("cannot index {}: {cause}", path.display())]
    Io {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("{} is not a directory: index a repository's root directory", .0.display())]
    NotADirectory(PathBuf),
    #[error("{} is refused: {reason}", path.display())]
    RootRefused { path: PathBuf, reason: String },
    #[error("the query has no word to search for (give letters or digits)")]
    EmptyQuery,
    #[error("the note is empty")]
    EmptyNote,
    #[error("the note is {len} bytes; a note holds at most {max}")]
    NoteTooLong { len: usize, max: usize },
}
