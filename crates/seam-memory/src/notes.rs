//! The operator's notes: text the operator wrote for the agent to find.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use crate::bound::{Limit, clip, cut};
use crate::fts::{FtsQuery, Matched};
use crate::{MemoryError, db, time};

const SCHEMA_VERSION: i64 = 1;
const SCHEMA: &str = "
CREATE TABLE notes (
    id INTEGER PRIMARY KEY,
    at INTEGER NOT NULL,
    text TEXT NOT NULL
);
CREATE VIRTUAL TABLE notes_text USING fts5 (text, tokenize = 'unicode61');
";

pub const NOTES_LIST_LIMIT: Limit = Limit::new(50, 1000);
pub const NOTES_SEARCH_LIMIT: Limit = Limit::new(10, 50);
/// The longest note.
pub const MAX_NOTE_BYTES: usize = 64 * 1024;
/// How much of each note a search shows (`get` gives the whole).
const HIT_TEXT_BYTES: usize = 500;

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Note {
    pub id: i64,
    pub at: String,
    pub text: String,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct NoteList {
    /// The newest `limit` notes, oldest of them first.
    pub notes: Vec<Note>,
    pub total: u64,
    pub truncated: bool,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct NoteHit {
    pub id: i64,
    pub at: String,
    /// The note's start; `get` gives the whole when `text_cut`.
    pub text: String,
    pub text_cut: bool,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct NoteHits {
    pub hits: Vec<NoteHit>,
    pub truncated: bool,
    /// Whether the hits hold every word of the query or only some.
    pub matched: Matched,
}

/// The operator's notes in one SQLite file.
#[derive(Debug)]
pub struct OperatorNotes {
    conn: Connection,
    path: PathBuf,
}

impl OperatorNotes {
    pub fn open(path: &Path) -> Result<OperatorNotes, MemoryError> {
        Ok(OperatorNotes {
            conn: db::open(path, SCHEMA, SCHEMA_VERSION)?,
            path: path.to_owned(),
        })
    }

    fn sql(&self, what: &'static str) -> impl FnOnce(rusqlite::Error) -> MemoryError + '_ {
        db::sql_error(&self.path, what)
    }

    /// Adds a note (trailing whitespace trimmed) and returns its id.
    pub fn add(&mut self, text: &str) -> Result<i64, MemoryError> {
        let text = text.trim_end();
        if text.trim().is_empty() {
            return Err(MemoryError::EmptyNote);
        }
        if text.len() > MAX_NOTE_BYTES {
            return Err(MemoryError::NoteTooLong {
                len: text.len(),
                max: MAX_NOTE_BYTES,
            });
        }
        let path = self.path.clone();
        let sql = |cause| MemoryError::Sql {
            path: path.clone(),
            what: "adding a note",
            cause,
        };
        let tx = self.conn.transaction().map_err(sql)?;
        tx.execute(
            "INSERT INTO notes (at, text) VALUES (?1, ?2)",
            params![time::now_ms(), text],
        )
        .map_err(sql)?;
        let id = tx.last_insert_rowid();
        tx.execute(
            "INSERT INTO notes_text (rowid, text) VALUES (?1, ?2)",
            params![id, text],
        )
        .map_err(sql)?;
        tx.commit().map_err(sql)?;
        Ok(id)
    }

    /// The newest `limit` notes, oldest of them first.
    pub fn list(&self, limit: usize) -> Result<NoteList, MemoryError> {
        let total: i64 = self
            .conn
            .query_row("SELECT count(*) FROM notes", [], |r| r.get(0))
            .map_err(self.sql("counting notes"))?;
        let mut st = self
            .conn
            .prepare_cached("SELECT id, at, text FROM notes ORDER BY id DESC LIMIT ?1")
            .map_err(self.sql("listing notes"))?;
        let mut notes: Vec<Note> = st
            .query_map([limit as i64], note_row)
            .and_then(|rows| rows.collect())
            .map_err(self.sql("listing notes"))?;
        notes.reverse();
        Ok(NoteList {
            truncated: (total as usize) > notes.len(),
            total: total as u64,
            notes,
        })
    }

    /// Notes holding every word of `query`, best first; when none does, the notes holding
    /// any of them (`matched` says which).
    pub fn search(&self, query: &str, limit: usize) -> Result<NoteHits, MemoryError> {
        let q = FtsQuery::parse(query)?;
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT notes.id, notes.at, notes.text FROM notes_text
                 JOIN notes ON notes.id = notes_text.rowid
                 WHERE notes_text MATCH ?1 ORDER BY notes_text.rank LIMIT ?2",
            )
            .map_err(self.sql("searching notes"))?;
        let mut hits: Vec<NoteHit> = Vec::new();
        let mut matched = Matched::Every;
        for (expr, how) in q.tries() {
            hits = st
                .query_map(params![expr, limit as i64 + 1], |r| {
                    let note = note_row(r)?;
                    let (text, text_cut) = clip(&note.text, HIT_TEXT_BYTES);
                    Ok(NoteHit {
                        id: note.id,
                        at: note.at,
                        text,
                        text_cut,
                    })
                })
                .and_then(|rows| rows.collect())
                .map_err(self.sql("searching notes"))?;
            if !hits.is_empty() {
                matched = how;
                break;
            }
        }
        let truncated = cut(&mut hits, limit);
        Ok(NoteHits {
            hits,
            truncated,
            matched,
        })
    }

    pub fn get(&self, id: i64) -> Result<Option<Note>, MemoryError> {
        self.conn
            .query_row(
                "SELECT id, at, text FROM notes WHERE id = ?1",
                [id],
                note_row,
            )
            .optional()
            .map_err(self.sql("reading a note"))
    }
}

fn note_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Note> {
    Ok(Note {
        id: r.get(0)?,
        at: time::rfc3339(r.get(1)?),
        text: r.get(2)?,
    })
}
