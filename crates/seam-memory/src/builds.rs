//! The build memory: what builds and critic runs did, scrubbed before it is stored.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};
use seam_scrub::Scrubber;
use serde::Serialize;

use crate::bound::{Limit, clip, cut};
use crate::fts::{FtsQuery, Matched};
use crate::{MemoryError, db, time};

const SCHEMA_VERSION: i64 = 1;
const SCHEMA: &str = "
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    at INTEGER NOT NULL,
    kind TEXT NOT NULL,
    command TEXT NOT NULL,
    exit_status INTEGER,
    duration_ms INTEGER NOT NULL,
    summary TEXT NOT NULL,
    log_excerpt TEXT NOT NULL,
    log_bytes INTEGER NOT NULL,
    log_cut INTEGER NOT NULL,
    scrubbed TEXT NOT NULL
);
CREATE VIRTUAL TABLE runs_text USING fts5 (command, summary, log_excerpt, tokenize = 'unicode61');
";

pub const ALL_SUMMARIES_LIMIT: Limit = Limit::new(20, 200);
pub const BUILD_SEARCH_LIMIT: Limit = Limit::new(10, 50);
/// The most of a log kept: its end, where a build says what went wrong.
pub const LOG_EXCERPT_BYTES: usize = 16 * 1024;
/// The most of a log scrubbed to make the excerpt (its end); the excerpt starts on a whole
/// line inside it, so a secret split by this cut never reaches the excerpt.
const LOG_WINDOW_BYTES: usize = 1024 * 1024;
const MAX_COMMAND_BYTES: usize = 2000;
const MAX_SUMMARY_BYTES: usize = 4000;

/// What was run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunKind {
    Build,
    Critic,
}

impl RunKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RunKind::Build => "build",
            RunKind::Critic => "critic",
        }
    }
}

/// A run to record. Every text field is scrubbed before it is stored.
#[derive(Debug, Clone)]
pub struct NewBuildRecord<'a> {
    pub kind: RunKind,
    pub command: &'a str,
    /// `None` when the run ended without an exit status (a signal, a timeout).
    pub exit_status: Option<i32>,
    pub duration: Duration,
    pub summary: &'a str,
    /// The whole log; only its scrubbed end is kept.
    pub log: &'a str,
}

/// A run without its log.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct BuildSummary {
    pub id: i64,
    pub at: String,
    pub kind: String,
    pub command: String,
    pub exit_status: Option<i32>,
    pub duration_ms: u64,
    pub summary: String,
}

/// A run with its log excerpt.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct BuildRecord {
    #[serde(flatten)]
    pub summary: BuildSummary,
    pub log_excerpt: String,
    /// The length of the whole log.
    pub log_bytes: u64,
    /// True when the excerpt is only the end of the log.
    pub log_cut: bool,
    /// The secret shapes that were redacted before storing.
    pub scrubbed: Vec<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct BuildSummaries {
    /// Newest first.
    pub runs: Vec<BuildSummary>,
    pub total: u64,
    pub truncated: bool,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct BuildHit {
    #[serde(flatten)]
    pub summary: BuildSummary,
    /// Where the words were found (FTS5's snippet, `[` `]` around the words).
    pub snippet: String,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct BuildHits {
    pub hits: Vec<BuildHit>,
    pub truncated: bool,
    /// Whether the hits hold every word of the query or only some.
    pub matched: Matched,
}

/// The build memory in one SQLite file.
#[derive(Debug)]
pub struct BuildMemory {
    conn: Connection,
    path: PathBuf,
}

impl BuildMemory {
    pub fn open(path: &Path) -> Result<BuildMemory, MemoryError> {
        Ok(BuildMemory {
            conn: db::open(path, SCHEMA, SCHEMA_VERSION)?,
            path: path.to_owned(),
        })
    }

    fn sql(&self, what: &'static str) -> impl FnOnce(rusqlite::Error) -> MemoryError + '_ {
        db::sql_error(&self.path, what)
    }

    /// Records a run: command, summary and the end of the log, each scrubbed by `scrubber`
    /// first. Returns the run's id.
    pub fn record(
        &mut self,
        scrubber: &Scrubber,
        run: &NewBuildRecord<'_>,
    ) -> Result<i64, MemoryError> {
        let mut shapes: Vec<&'static str> = Vec::new();
        let mut scrub = |text: &str, max: usize| {
            let s = scrubber.scrub(text);
            shapes.extend(s.hits.iter().map(|h| h.shape));
            clip(&s.text, max).0
        };
        let command = scrub(run.command, MAX_COMMAND_BYTES);
        let summary = scrub(run.summary, MAX_SUMMARY_BYTES);
        let window = tail(run.log, LOG_WINDOW_BYTES, run.log.len() > LOG_WINDOW_BYTES);
        let scrubbed_window = scrubber.scrub(window);
        shapes.extend(scrubbed_window.hits.iter().map(|h| h.shape));
        let excerpt = tail(
            &scrubbed_window.text,
            LOG_EXCERPT_BYTES,
            scrubbed_window.text.len() > LOG_EXCERPT_BYTES,
        )
        .to_owned();
        let log_cut = window.len() < run.log.len() || excerpt.len() < scrubbed_window.text.len();
        shapes.sort_unstable();
        shapes.dedup();
        let tx = self.conn.transaction().map_err(|cause| MemoryError::Sql {
            path: self.path.clone(),
            what: "recording a run",
            cause,
        })?;
        let sql = |cause| MemoryError::Sql {
            path: self.path.clone(),
            what: "recording a run",
            cause,
        };
        tx.execute(
            "INSERT INTO runs (at, kind, command, exit_status, duration_ms, summary, log_excerpt,
                               log_bytes, log_cut, scrubbed)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                time::now_ms(),
                run.kind.as_str(),
                command,
                run.exit_status,
                i64::try_from(run.duration.as_millis()).unwrap_or(i64::MAX),
                summary,
                excerpt,
                run.log.len() as i64,
                log_cut,
                shapes.join(",")
            ],
        )
        .map_err(sql)?;
        let id = tx.last_insert_rowid();
        tx.execute(
            "INSERT INTO runs_text (rowid, command, summary, log_excerpt) VALUES (?1, ?2, ?3, ?4)",
            params![id, command, summary, excerpt],
        )
        .map_err(sql)?;
        tx.commit().map_err(sql)?;
        Ok(id)
    }

    /// The newest runs first, at most `limit` (see [`ALL_SUMMARIES_LIMIT`]).
    pub fn all_summaries(&self, limit: usize) -> Result<BuildSummaries, MemoryError> {
        let total: i64 = self
            .conn
            .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
            .map_err(self.sql("counting runs"))?;
        let mut st = self
            .conn
            .prepare_cached(&format!(
                "SELECT {SUMMARY_COLUMNS} FROM runs ORDER BY id DESC LIMIT ?1"
            ))
            .map_err(self.sql("listing runs"))?;
        let runs: Vec<BuildSummary> = st
            .query_map([limit as i64], summary_row)
            .and_then(|rows| rows.collect())
            .map_err(self.sql("listing runs"))?;
        Ok(BuildSummaries {
            truncated: (total as usize) > runs.len(),
            total: total as u64,
            runs,
        })
    }

    /// Runs whose command, summary or log holds every word of `query`, best first; when none
    /// does, the runs holding any of them (`matched` says which).
    pub fn search(&self, query: &str, limit: usize) -> Result<BuildHits, MemoryError> {
        let q = FtsQuery::parse(query)?;
        let mut st = self
            .conn
            .prepare_cached(&format!(
                "SELECT {SUMMARY_COLUMNS}, snippet(runs_text, -1, '[', ']', '…', 16)
                 FROM runs_text JOIN runs ON runs.id = runs_text.rowid
                 WHERE runs_text MATCH ?1 ORDER BY runs_text.rank LIMIT ?2"
            ))
            .map_err(self.sql("searching runs"))?;
        let mut hits: Vec<BuildHit> = Vec::new();
        let mut matched = Matched::Every;
        for (expr, how) in q.tries() {
            hits = st
                .query_map(params![expr, limit as i64 + 1], |r| {
                    Ok(BuildHit {
                        summary: summary_row(r)?,
                        snippet: r.get(7)?,
                    })
                })
                .and_then(|rows| rows.collect())
                .map_err(self.sql("searching runs"))?;
            if !hits.is_empty() {
                matched = how;
                break;
            }
        }
        let truncated = cut(&mut hits, limit);
        Ok(BuildHits {
            hits,
            truncated,
            matched,
        })
    }

    /// One run with its log excerpt.
    pub fn get(&self, id: i64) -> Result<Option<BuildRecord>, MemoryError> {
        self.conn
            .query_row(
                &format!(
                    "SELECT {SUMMARY_COLUMNS}, log_excerpt, log_bytes, log_cut, scrubbed FROM runs
                     WHERE id = ?1"
                ),
                [id],
                |r| {
                    let log_excerpt: String = r.get(7)?;
                    let log_bytes = r.get::<_, i64>(8)? as u64;
                    let log_cut: bool = r.get(9)?;
                    let scrubbed: String = r.get(10)?;
                    Ok(BuildRecord {
                        summary: summary_row(r)?,
                        log_cut,
                        log_excerpt,
                        log_bytes,
                        scrubbed: scrubbed
                            .split(',')
                            .filter(|s| !s.is_empty())
                            .map(str::to_owned)
                            .collect(),
                    })
                },
            )
            .optional()
            .map_err(self.sql("reading a run"))
    }

    /// The highest id recorded (for saying which ids exist).
    pub fn last_id(&self) -> Result<Option<i64>, MemoryError> {
        self.conn
            .query_row("SELECT max(id) FROM runs", [], |r| r.get(0))
            .map_err(self.sql("reading the last id"))
    }
}

const SUMMARY_COLUMNS: &str =
    "runs.id, runs.at, runs.kind, runs.command, runs.exit_status, runs.duration_ms, runs.summary";

fn summary_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<BuildSummary> {
    Ok(BuildSummary {
        id: r.get(0)?,
        at: time::rfc3339(r.get(1)?),
        kind: r.get(2)?,
        command: r.get(3)?,
        exit_status: r.get(4)?,
        duration_ms: r.get::<_, i64>(5)? as u64,
        summary: r.get(6)?,
    })
}

/// The last `max` bytes of `text` on a character boundary; when `whole_lines`, starting after
/// the first newline inside them (the cut line is dropped).
fn tail(text: &str, max: usize, whole_lines: bool) -> &str {
    let t = seam_term::tail_bytes(text, max);
    if t.len() == text.len() {
        return text;
    }
    let start = text.len() - t.len();
    let at_line_start = text.as_bytes()[start - 1] == b'\n';
    if whole_lines
        && !at_line_start
        && let Some(nl) = t.find('\n')
    {
        return &t[nl + 1..];
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_starts_on_a_whole_line() {
        assert_eq!(tail("abc", 10, true), "abc");
        assert_eq!(tail("aaaa\nbbbb\ncc", 7, true), "bbbb\ncc");
        assert_eq!(tail("aaaa\nbbbb\ncc", 6, true), "cc");
        assert_eq!(tail("aaaa\nbbbb\ncc", 6, false), "bbb\ncc");
        assert_eq!(tail("éé", 3, false), "é");
    }
}
